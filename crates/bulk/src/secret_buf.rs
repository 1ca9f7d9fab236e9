//! A growable byte buffer that is wiped when dropped, for the chunk buffers that carry plaintext or key material
//! through the bulk loops.

use std::ops::{Deref, DerefMut};
use zeroize::Zeroize;

/// A `Vec<u8>` whose bytes, spare capacity included, are overwritten with zeros when it is dropped.
///
/// The same as `zeroize::Zeroizing<Vec<u8>>`, but its wipe is compiled here, optimised: a buffer of megabytes
/// wiped by code instantiated in an unoptimised crate costs milliseconds per drop.
#[derive(Default)]
pub struct SecretBuf(Vec<u8>);

impl SecretBuf {
    /// `len` zero bytes.
    pub fn zeroed(len: usize) -> Self {
        Self(vec![0u8; len])
    }

    /// An empty buffer with room for `capacity` bytes.
    pub fn with_capacity(capacity: usize) -> Self {
        Self(Vec::with_capacity(capacity))
    }
}

impl Deref for SecretBuf {
    type Target = Vec<u8>;

    fn deref(&self) -> &Vec<u8> {
        &self.0
    }
}

impl DerefMut for SecretBuf {
    fn deref_mut(&mut self) -> &mut Vec<u8> {
        &mut self.0
    }
}

impl Drop for SecretBuf {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

impl std::fmt::Debug for SecretBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SecretBuf({} bytes)", self.0.len())
    }
}
