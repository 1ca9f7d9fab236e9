//! The built-in `kmip` passphrase provider: the passphrase is wrapped by a KMIP symmetric key (an HSM's, say) with
//! the server's own AES-256-GCM Encrypt, so the same key manager that guards volume keys guards machine configs.
//!
//! `seal --passphrase-uri kmip://UID` makes a random 32-byte passphrase (or takes the one given), has the server
//! encrypt it with key `UID` and records `kmip://UID#kmip:v1:<base64url(nonce ‖ tag ‖ ciphertext)>` (the
//! `--key-wrap kmip://UID` form, [`Sealed::to_text`]) as the document's passphraseURI; `open` needs only that
//! URI and the `--kmip-*` settings, and asks the server to Decrypt. The additional authenticated data is fixed and
//! differs from the volume key wrap's, so a wrapped volume key is not accepted as a bootstrap passphrase.

use super::Error;
use super::provider::ProviderSettings;
use crate::crypto::{Passphrase, random};
use crate::interact::Interaction;
use crate::kms::kmip::Sealed;

/// The provider's name.
pub const BUILTIN_KMIP_PROVIDER: &str = "kmip";
/// Bytes of the random passphrase `seal` makes.
pub const KMIP_PASSPHRASE_BYTES: usize = 32;
const SCHEME: &str = "kmip://";
const AAD: &[u8] = b"cryptadm bootstrap passphrase v1";

/// A `kmip://UID[#kmip:v1:…]` passphraseURI: the key's unique identifier and the wrapped passphrase, if recorded.
fn parse_uri(uri: &str) -> Result<(&str, Option<&str>), Error> {
    let bad = |problem| Error::BadKmipUri { uri: crate::redact::url(uri), problem };
    let rest =
        uri.trim().strip_prefix(SCHEME).ok_or_else(|| bad("expected kmip://UID (the key's unique identifier)"))?;
    let (uid, wrapped) = match rest.split_once('#') {
        Some((uid, wrapped)) => (uid, Some(wrapped)),
        None => (rest, None),
    };
    let valid = !uid.is_empty() && uid.len() <= 256 && uid.bytes().all(|b| b.is_ascii_graphic() && b != b'/');
    if !valid {
        return Err(bad("the unique identifier must be 1 to 256 printable characters without `/` or `#`"));
    }
    Ok((uid, wrapped))
}

impl ProviderSettings {
    fn kmip(&self) -> Result<&crate::kms::kmip::Kmip, Error> {
        self.kmip.as_deref().ok_or(Error::NoKmipServer)
    }

    /// `seal` with `kmip`: a new random passphrase (or, given `explicit`, that one) wrapped by key `UID`, and the
    /// passphraseURI carrying it.
    pub fn kmip_new(
        &self,
        uri: &str,
        explicit: Option<Passphrase>,
        ui: &dyn Interaction,
    ) -> Result<(Passphrase, String), Error> {
        let (uid, wrapped) = parse_uri(uri)?;
        if wrapped.is_some() {
            return Err(Error::BadKmipUri {
                uri: crate::redact::url(uri),
                problem: "seal takes kmip://UID (the wrapped passphrase is added to it)",
            });
        }
        let kmip = self.kmip()?;
        let passphrase = explicit.unwrap_or_else(|| Passphrase::new(random::bytes::<KMIP_PASSPHRASE_BYTES>().to_vec()));
        let _busy = ui.busy(&format!("wrapping the passphrase with {}", kmip.service()));
        let sealed = kmip.encrypt(uid, passphrase.expose(), AAD).map_err(Error::Kmip)?;
        Ok((passphrase, format!("{SCHEME}{uid}#{}", sealed.to_text())))
    }

    /// `open` with `kmip`: the passphrase unwrapped by the server's Decrypt.
    pub(super) fn kmip_open(&self, uri: &str, ui: &dyn Interaction) -> Result<Passphrase, Error> {
        let (uid, wrapped) = parse_uri(uri)?;
        let sealed = wrapped.and_then(Sealed::from_text).ok_or_else(|| Error::BadKmipUri {
            uri: crate::redact::url(uri),
            problem: "no wrapped passphrase: expected kmip://UID#kmip:v1:… as `seal` records it",
        })?;
        let kmip = self.kmip()?;
        let _busy = ui.busy(&format!("unwrapping the passphrase with {}", kmip.service()));
        let plaintext = kmip.decrypt(uid, &sealed, AAD).map_err(Error::Kmip)?;
        if plaintext.is_empty() {
            return Err(Error::BadPassphrase("the KMIP server returned an empty passphrase".into()));
        }
        Ok(Passphrase::new(plaintext.to_vec()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris() {
        assert_eq!(parse_uri("kmip://42").unwrap(), ("42", None));
        assert_eq!(parse_uri("kmip://a-b#kmip:v1:AAAA").unwrap(), ("a-b", Some("kmip:v1:AAAA")));
        for bad in ["kmip://", "kmip:///x", "vault-transit://t/k", "kmip://a b", "kmip://#kmip:v1:AA"] {
            assert!(parse_uri(bad).is_err(), "{bad}");
        }
    }
}
