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

/// The key `volume rewrap` rewraps a `file://` store's values with (see `aws_kms_wrap::rewrap_file_store`): its
/// key manager, what its values look like, and how one value is rewrapped bound to its volume.
pub struct FileRewrapKey<'a> {
    /// The key manager (AWS KMS, or OpenBao/Vault's Transit).
    pub client: &'a dyn crate::kms::Wrapping,
    /// The key's name for `client`.
    pub key: String,
    /// The key as `--key-wrap` names it, for messages.
    pub uri: String,
    /// What one value is called, e.g. "a KMS CiphertextBlob in standard base64".
    pub form: &'static str,
    /// Whether a stored value has that form.
    pub is_wrapped: fn(&[u8]) -> bool,
    /// Checks one value before the key is rotated (`Some` for keys that rotate first: Transit).
    pub check: Option<CheckValue>,
    /// Whether the key gets a new version once every value is checked, before any is rewrapped.
    pub rotate: bool,
    /// One value (`client`, `key`, the value, its binding) rewrapped bound to its volume.
    pub rewrap: fn(&dyn crate::kms::Wrapping, &str, &str, &Binding) -> Result<String, Error>,
}

/// A check of one value (`client`, `key`, the value, its binding) before a rotation.
pub type CheckValue = fn(&dyn crate::kms::Wrapping, &str, &str, &Binding) -> Result<bool, Error>;

/// The context name of the store (the `--key-store` URI, without a trailing `/`).
pub const CONTEXT_STORE: &str = "cryptadm:store";
/// The context name of the volume id.
pub const CONTEXT_VOLUME: &str = "cryptadm:volume";

/// What a stored value protects, which a wrap binds it to (AWS KMS: the encryption context
/// `{"cryptadm:store": STORE, "cryptadm:volume": ID}`; KMIP: AES-GCM additional data; Transit: a record inside the
/// plaintext), so that a value moved to another volume's entry (or another store) is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    /// The store's URI as `--key-store` gives it, without a trailing `/`.
    pub store: String,
    /// The volume id.
    pub volume: String,
}

impl Binding {
    /// Volume `volume` of store `store` (a trailing `/` of the URI is dropped, so both spellings bind alike).
    pub fn new(store: &str, volume: &str) -> Self {
        let trimmed = store.trim_end_matches('/');
        // `file:///` is the root directory: keep its one `/`.
        let store = if trimmed.ends_with(':') || trimmed.ends_with("//") { store } else { trimmed };
        Self { store: store.to_owned(), volume: volume.to_owned() }
    }

    /// The binding as bytes, `cryptadm volume key v2` ‖ 0x00 ‖ STORE ‖ 0x00 ‖ ID: KMIP's additional data, and the
    /// head of a bound Transit plaintext (which goes on with 0x00 ‖ PASSPHRASE).
    pub fn record(&self) -> Vec<u8> {
        let mut record = b"cryptadm volume key v2".to_vec();
        for part in [&self.store, &self.volume] {
            record.push(0);
            record.extend_from_slice(part.as_bytes());
        }
        record
    }

    /// The context a key manager binds the value to.
    pub fn context(&self) -> crate::kms::Context {
        [(CONTEXT_STORE, &self.store), (CONTEXT_VOLUME, &self.volume)]
            .into_iter()
            .map(|(name, value)| (name.to_owned(), value.clone()))
            .collect()
    }

    /// Checks a recorded context against this binding: a value recorded for another volume (or store) is refused
    /// with exit 15, naming both. `any_store`: a value of another store is accepted (`volume rewrap` binds a
    /// moved store anew).
    pub fn check(&self, recorded: &crate::kms::Context, any_store: bool) -> Result<(), Error> {
        let field = |name: &str| recorded.get(name).map(String::as_str).unwrap_or("");
        let quote = |text: &str| crate::redact::server_message(text.as_bytes());
        if field(CONTEXT_VOLUME) != self.volume {
            return Err(Error::Store {
                status: crate::exit::ExitStatus::DataLoss,
                message: format!(
                    "the value stored for volume `{}` is bound to volume `{}`: refused (a value moved from another \
                     volume's entry never opens this one)",
                    quote(&self.volume),
                    quote(field(CONTEXT_VOLUME))
                ),
            });
        }
        if !any_store && field(CONTEXT_STORE) != self.store {
            return Err(Error::Store {
                status: crate::exit::ExitStatus::DataLoss,
                message: format!(
                    "the value stored for volume `{}` in `{}` is bound to store `{}`: refused (hint: a store moved to \
                     a new place is bound anew by `cryptadm volume rewrap --key-store {}`)",
                    quote(&self.volume),
                    quote(&self.store),
                    quote(field(CONTEXT_STORE)),
                    quote(&self.store)
                ),
            });
        }
        let known = [CONTEXT_STORE, CONTEXT_VOLUME];
        if let Some(other) = recorded.keys().find(|name| !known.contains(&name.as_str())) {
            return Err(Error::Store {
                status: crate::exit::ExitStatus::DataLoss,
                message: format!(
                    "the value stored for volume `{}` records an unknown context field `{}`: refused",
                    quote(&self.volume),
                    quote(other)
                ),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bindings_drop_a_trailing_slash_and_refuse_other_volumes_and_stores() {
        assert_eq!(Binding::new("file:///keys/", "v").store, "file:///keys");
        assert_eq!(Binding::new("file:///", "v").store, "file:///");
        assert_eq!(Binding::new("vault-kv://kv/p", "v").store, "vault-kv://kv/p");
        let binding = Binding::new("kmip://p", "pvc-1");
        assert!(binding.check(&binding.context(), false).is_ok());
        let moved = Binding::new("kmip://p", "pvc-2").context();
        let refused = binding.check(&moved, true).unwrap_err();
        assert_eq!(crate::exit::Classify::status(&refused), crate::exit::ExitStatus::DataLoss);
        assert!(refused.to_string().contains("`pvc-1` is bound to volume `pvc-2`"), "{refused}");
        let other_store = Binding::new("kmip://q", "pvc-1").context();
        assert!(binding.check(&other_store, false).is_err());
        assert!(binding.check(&other_store, true).is_ok(), "rewrap binds a moved store anew");
        let mut extra = binding.context();
        extra.insert("x".into(), "y".into());
        assert!(binding.check(&extra, false).is_err());
    }
}
