//! LUKS1 and LUKS2 in pure Rust: read both header copies, unlock keyslots, add and remove keyslots with durable
//! writes, format new volumes, and stream payloads through AES-XTS.
//!
//! No crate reads or writes LUKS, so the formats are implemented here from the on-disk specifications and
//! checked against cryptsetup and QEMU (see `docs/formats.md#luks-and-qcow2`; tests in `tests/cli/disk.rs`). The
//! public surface used by `volume rotate` is fixed by `LUKS-CONTRACT.md`: [`Volume`] with `open`, `unlock`,
//! `add_keyslot`, `remove_keyslot`, `reload`. The module never prints, prompts or reads the environment.

mod af;
mod cipher;
mod digest;
mod error;
pub mod format;
mod hash;
mod kdf;
mod keyslot;
pub mod luks1;
pub mod luks2;
pub mod payload;
pub mod summary;
mod volume;

pub use error::Error;
pub use hash::Hash;
pub use kdf::{
    ARGON2_MAX_MEMORY_KIB, ARGON2_MAX_PARALLEL, ARGON2_MIN_MEMORY_KIB, ARGON2_MIN_TIME, PBKDF2_MIN_ITERATIONS,
};
pub use volume::{PayloadInfo, Volume, WriteStep};

/// Results of this module.
pub type Result<T> = std::result::Result<T, Error>;

/// The LUKS format version of a header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    /// LUKS1 (what QEMU reads).
    Luks1,
    /// LUKS2 (cryptsetup's default).
    Luks2,
}

/// A keyslot's key-derivation settings (what `volume rotate` copies from the old slot to the new one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kdf {
    /// PBKDF2-HMAC.
    Pbkdf2 {
        /// `sha256`, `sha512`, `sha1`.
        hash: String,
        /// Iterations.
        iterations: u32,
    },
    /// Argon2i.
    Argon2i {
        /// Time cost.
        time: u32,
        /// Memory cost in KiB.
        memory_kib: u32,
        /// Lanes.
        parallel: u32,
    },
    /// Argon2id.
    Argon2id {
        /// Time cost.
        time: u32,
        /// Memory cost in KiB.
        memory_kib: u32,
        /// Lanes.
        parallel: u32,
    },
}

/// An active keyslot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyslotSummary {
    /// Keyslot id (0–7 for LUKS1, 0–31 for LUKS2).
    pub id: u32,
    /// Its KDF settings.
    pub kdf: Kdf,
}

/// The volume (master) key. Zeroized on drop; `Debug` prints only its length.
#[derive(Clone)]
pub struct VolumeKey(zeroize::Zeroizing<Vec<u8>>);

impl VolumeKey {
    /// Wraps key bytes.
    pub fn from_bytes(bytes: Vec<u8>) -> VolumeKey {
        VolumeKey(zeroize::Zeroizing::new(bytes))
    }

    /// A fresh random key of `len` bytes whose two halves differ (XTS implementations refuse equal halves).
    pub fn generate(len: usize) -> VolumeKey {
        loop {
            let mut bytes = vec![0u8; len];
            crate::crypto::random::fill(&mut bytes);
            let key = VolumeKey::from_bytes(bytes);
            let (a, b) = key.0.split_at(len / 2);
            if a != b {
                return key;
            }
        }
    }

    /// The key bytes: only for the payload cipher and keyslot material.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the key is empty (never for a real volume).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::fmt::Debug for VolumeKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "VolumeKey([REDACTED; {} bytes])", self.0.len())
    }
}
