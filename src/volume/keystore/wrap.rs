//! `--key-wrap`: a key manager's key that wraps every value a store keeps, so the store never holds a passphrase
//! in plain. Wraps import this file and nothing else of the key-store module; the chooser
//! (`keystore::open_key_wrap`) imports the wraps.

use crate::crypto::Passphrase;
use crate::volume::Error;

/// A key that wraps stored passphrases. A wrapped value is text (KV stores keep text).
pub trait KeyWrap: Send + Sync {
    /// What a wrapped value is called in messages, e.g. "Transit ciphertext".
    fn form(&self) -> &'static str;
    /// Whether a stored value has this wrap's form: a value in any other form is refused, never used as a key.
    fn is_wrapped(&self, stored: &[u8]) -> bool;
    /// `key` wrapped, as the text a store keeps.
    fn wrap(&self, key: &Passphrase) -> Result<String, Error>;
    /// A stored value that [`KeyWrap::is_wrapped`] accepted, unwrapped.
    fn unwrap(&self, stored: &str) -> Result<Passphrase, Error>;
}
