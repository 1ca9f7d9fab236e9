//! Cryptographic primitives shared by every command: randomness, key derivation, authenticated encryption,
//! key loading (PEM, DER, JWK), tolerant base64, and secret-holding types that wipe themselves.
//!
//! Everything here is a thin, typed layer over RustCrypto crates of one generation (cipher 0.4 / digest 0.10,
//! the generation `rsa`, `cms` and `sequoia-openpgp` use), so key-handling code never mixes the two.

pub mod aead;
pub mod argon2;
pub mod cbc_essiv;
pub mod encoding;
pub mod jose;
pub mod kdf;
pub mod keys;
pub mod parallel_hash;
pub mod random;
pub mod secret;
pub mod xts;

pub use keys::KeyError;
pub use secret::{Passphrase, SecretBytes};
