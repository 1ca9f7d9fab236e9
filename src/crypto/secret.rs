//! Types that hold secrets: their `Debug` is redacted and their memory is wiped on drop.

use secrecy::{ExposeSecret, SecretSlice};
use std::fmt;

/// Secret bytes of any kind (a key, a plaintext machine configuration, a plugin's answer): wiped on drop, and a
/// `Debug` that prints only the length. A type of our own rather than `zeroize::Zeroizing`, whose `Debug` prints
/// the contents.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct SecretBytes(zeroize::Zeroizing<Vec<u8>>);

impl SecretBytes {
    /// Takes ownership of the bytes (moved, not copied).
    pub fn new(bytes: Vec<u8>) -> Self {
        Self(zeroize::Zeroizing::new(bytes))
    }
}

impl std::ops::Deref for SecretBytes {
    type Target = Vec<u8>;
    fn deref(&self) -> &Vec<u8> {
        &self.0
    }
}

impl std::ops::DerefMut for SecretBytes {
    fn deref_mut(&mut self) -> &mut Vec<u8> {
        &mut self.0
    }
}

impl From<Vec<u8>> for SecretBytes {
    fn from(bytes: Vec<u8>) -> Self {
        Self::new(bytes)
    }
}

impl fmt::Debug for SecretBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SecretBytes([REDACTED; {} bytes])", self.0.len())
    }
}

/// A passphrase: the exact bytes a provider, a file, a variable or a prompt produced.
///
/// No newline is stripped and no encoding is assumed, so the same file read on the sealing host and by the
/// `file` provider on the machine gives the same key.
pub struct Passphrase(SecretSlice<u8>);

impl Passphrase {
    /// Wraps bytes as a passphrase. The vector is moved, not copied.
    pub fn new(bytes: Vec<u8>) -> Self {
        Self(SecretSlice::from(bytes))
    }

    /// The passphrase bytes. Call only where they are fed to a KDF.
    pub fn expose(&self) -> &[u8] {
        self.0.expose_secret()
    }

    /// Whether the passphrase is empty (an empty file or variable is a mistake, never a key).
    pub fn is_empty(&self) -> bool {
        self.expose().is_empty()
    }

    /// Length in bytes (safe to log).
    pub fn len(&self) -> usize {
        self.expose().len()
    }
}

impl Clone for Passphrase {
    fn clone(&self) -> Self {
        Self::new(self.expose().to_vec())
    }
}

impl fmt::Debug for Passphrase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Passphrase([REDACTED; {} bytes])", self.len())
    }
}

/// The largest passphrase read from a file or standard input (the same bound as a plugin's output).
pub const MAX_PASSPHRASE_LEN: usize = 4096;

/// Reads `reader` to its end, at most `limit` bytes: no more than `limit + 1` are read (a reader that never ends
/// is not drained), and `Ok(None)` when there was more than `limit`. The buffer is wiped when dropped (the bytes
/// are often secrets: passwords in auth files, keys, private options); buffers outgrown while reading are not, so
/// the first one has room for a small secret whole.
pub fn read_at_most(reader: impl std::io::Read, limit: u64) -> std::io::Result<Option<SecretBytes>> {
    use std::io::Read as _;
    let mut bytes = SecretBytes::new(Vec::with_capacity(limit.saturating_add(1).min(SMALL_SECRET) as usize));
    reader.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= limit).then_some(bytes))
}

/// The room the first buffer of [`read_at_most`] has: a passphrase, a key, a layer's private options.
const SMALL_SECRET: u64 = 8192;

/// Reads a passphrase file in full ([`read_secret`] with [`MAX_PASSPHRASE_LEN`]).
pub fn read_passphrase_file(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    read_secret(std::fs::File::open(path)?, MAX_PASSPHRASE_LEN)
}

/// Reads a small secret (a passphrase, a key file) in full, refusing more than `limit` bytes: a larger input is
/// surely the wrong file, and reading it whole would be unbounded. Growth of the buffer is not wiped; the final
/// bytes are moved to the caller, which wraps them in a wiping type.
pub fn read_secret(reader: impl std::io::Read, limit: usize) -> std::io::Result<Vec<u8>> {
    match read_at_most(reader, limit as u64)? {
        Some(mut bytes) => Ok(std::mem::take(&mut *bytes)),
        None => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than {limit} bytes; not a passphrase"),
        )),
    }
}

/// Compares two passphrases in constant time (for prompt confirmation).
pub fn passphrases_match(a: &Passphrase, b: &Passphrase) -> bool {
    use subtle::ConstantTimeEq;
    a.expose().ct_eq(b.expose()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_bytes_debug_is_redacted() {
        let secret = SecretBytes::new(b"hunter2".to_vec());
        let shown = format!("{secret:?} {:?}", Some(&secret));
        assert!(!shown.contains("hunter2") && !shown.contains("104"), "{shown}");
        assert!(shown.contains("7 bytes"), "{shown}");
    }

    #[test]
    fn debug_is_redacted() {
        let p = Passphrase::new(b"hunter2".to_vec());
        assert_eq!(format!("{p:?}"), "Passphrase([REDACTED; 7 bytes])");
    }

    #[test]
    fn match_is_exact() {
        let a = Passphrase::new(b"abc".to_vec());
        assert!(passphrases_match(&a, &Passphrase::new(b"abc".to_vec())));
        assert!(!passphrases_match(&a, &Passphrase::new(b"abc\n".to_vec())));
    }
}
