//! AES-256 in CTR mode with the whole 16-byte IV as a big-endian 128-bit counter (Go's `cipher.NewCTR`): the layer
//! cipher of containers/ocicrypt (`AES_256_CTR_HMAC_SHA256`).

use aes::cipher::{KeyIvInit, StreamCipher};

pub use aes::cipher::StreamCipherError;

/// An AES-256-CTR keystream, positioned at its start.
pub struct Aes256Ctr(ctr::Ctr128BE<aes::Aes256>);

impl Aes256Ctr {
    /// The keystream of `key` from the counter block `iv`.
    pub fn new(key: &[u8; 32], iv: &[u8; 16]) -> Self {
        Self(ctr::Ctr128BE::new(key.into(), iv.into()))
    }

    /// XORs the next `data.len()` bytes of keystream into `data`.
    pub fn apply_keystream(&mut self, data: &mut [u8]) {
        self.0.apply_keystream(data);
    }

    /// `output = input ⊕` the next `input.len()` bytes of keystream; an error (and nothing consumed) when the two
    /// lengths differ.
    pub fn apply_keystream_b2b(&mut self, input: &[u8], output: &mut [u8]) -> Result<(), StreamCipherError> {
        self.0.apply_keystream_b2b(input, output)
    }
}
