//! `--key-wrap kmip://UID`: values are AES-256-GCM ciphertexts made by the KMIP server itself (Encrypt/Decrypt
//! with the symmetric key `UID`, which never leaves the key manager, as in ceph-csi's KMIP backend), stored as
//! `kmip:v1:` + unpadded base64url of nonce (12 bytes) ‖ tag (16) ‖ ciphertext. The additional data is fixed
//! (`cryptadm volume key v1`), so a value wrapped for something else by the same key is refused.
//!
//! **Bound to the volume** (issue 42): values written since are `kmip:v2:` + unpadded base64url of the context JSON
//! (`{"cryptadm:store":STORE,"cryptadm:volume":ID}`, as the AWS KMS wrap records it) + `.` + unpadded base64url of
//! nonce ‖ tag ‖ ciphertext, with additional data `cryptadm volume key v2` ‖ 0x00 ‖ STORE ‖ 0x00 ‖ ID. A value
//! recording another volume is refused before the server is asked (exit 15, naming both); one whose record was
//! edited fails the server's tag check. `kmip:v1:` values still open.
//!
//! Why not Get + local AES-GCM for servers without Encrypt: the point of an HSM is that the key stays in it, and
//! appliances mark such keys non-extractable; a server below KMIP 1.4 (no authenticated-encryption fields) is
//! refused with a hint instead.

use super::store::store_error;
use super::wrap::{Binding, KeyWrap};
use crate::crypto::Passphrase;
use crate::exit::ExitStatus;
use crate::kms::kmip::{Kmip, Sealed};
use crate::volume::Error;
use std::sync::Arc;

/// The prefix of a wrapped value.
pub const FORM: &str = Sealed::FORM;
/// The prefix of a value bound to its volume.
pub const FORM_BOUND: &str = "kmip:v2:";
const AAD: &[u8] = b"cryptadm volume key v1";

/// The additional data of a value bound to `binding`.
fn bound_aad(binding: &Binding) -> Vec<u8> {
    binding.record()
}

/// A `kmip:v2:` value: its recorded context and the sealed key.
fn parse_bound(stored: &str) -> Option<(crate::kms::Context, Sealed)> {
    use base64::Engine as _;
    let (context, sealed) = stored.strip_prefix(FORM_BOUND)?.split_once('.')?;
    let context = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(context).ok()?;
    let context: crate::kms::Context = serde_json::from_slice(&context).ok()?;
    Some((context, Sealed::from_text(&format!("{FORM}{sealed}"))?))
}

/// A KMIP symmetric key wrapping a store's values.
pub struct KmipWrap {
    client: Arc<Kmip>,
    uid: String,
    binding: Option<Binding>,
}

impl KmipWrap {
    /// The key `kmip://UID`, binding values to `binding` when given.
    pub fn from_uri(uri: &str, client: Arc<Kmip>, binding: Option<Binding>) -> Result<Self, Error> {
        let uid = uri
            .strip_prefix("kmip://")
            .filter(|u| !u.is_empty() && u.len() <= 256 && u.bytes().all(|b| b.is_ascii_graphic() && b != b'/'))
            .ok_or_else(|| {
                Error::BadRequest(format!("--key-wrap `{uri}`: expected kmip://UID (the key's unique identifier)"))
            })?;
        Ok(Self { client, uid: uid.to_owned(), binding })
    }
}

impl KeyWrap for KmipWrap {
    fn form(&self) -> &'static str {
        "KMIP-wrapped value (kmip:v1:… or kmip:v2:…)"
    }

    fn is_wrapped(&self, stored: &[u8]) -> bool {
        stored.starts_with(FORM.as_bytes()) || stored.starts_with(FORM_BOUND.as_bytes())
    }

    fn wrap(&self, key: &Passphrase) -> Result<String, Error> {
        let Some(binding) = &self.binding else {
            return Ok(self.client.encrypt(&self.uid, key.expose(), AAD).map_err(store_error)?.to_text());
        };
        use base64::Engine as _;
        let sealed = self.client.encrypt(&self.uid, key.expose(), &bound_aad(binding)).map_err(store_error)?;
        let context = serde_json::to_vec(&binding.context()).expect("strings serialise");
        let text = sealed.to_text();
        Ok(format!(
            "{FORM_BOUND}{}.{}",
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(context),
            text.strip_prefix(FORM).unwrap_or(&text)
        ))
    }

    fn unwrap(&self, stored: &str) -> Result<Passphrase, Error> {
        let malformed = |form: &str| Error::Store {
            status: ExitStatus::InvalidInput,
            message: format!("a stored value is not a well-formed {form} value"),
        };
        let plain = if stored.starts_with(FORM_BOUND) {
            let (context, sealed) = parse_bound(stored).ok_or_else(|| malformed(FORM_BOUND))?;
            let expected = match &self.binding {
                Some(binding) => {
                    binding.check(&context, false)?;
                    binding.clone()
                }
                None => Binding {
                    store: context.get(super::wrap::CONTEXT_STORE).cloned().unwrap_or_default(),
                    volume: context.get(super::wrap::CONTEXT_VOLUME).cloned().unwrap_or_default(),
                },
            };
            self.client.decrypt(&self.uid, &sealed, &bound_aad(&expected)).map_err(|e| match &e {
                // The server's tag check failed (the additional data is not the value's): anything else (no
                // server, no permission) keeps its own status.
                crate::kms::Error::Refused(refusal)
                    if refusal.code.starts_with("Cryptographic Failure") || refusal.code.starts_with("General Failure") =>
                {
                    Error::Store {
                status: ExitStatus::DataLoss,
                message: format!(
                    "the KMIP server refused the value stored for volume `{}` with its additional data (store `{}`): \
                     it was not made for this volume, or its record was edited ({e})",
                    crate::redact::server_message(expected.volume.as_bytes()),
                    crate::redact::server_message(expected.store.as_bytes()),
                ),
                    }
                }
                _ => store_error(e),
            })?
        } else {
            let sealed = Sealed::from_text(stored).ok_or_else(|| malformed(FORM))?;
            self.client.decrypt(&self.uid, &sealed, AAD).map_err(store_error)?
        };
        Ok(Passphrase::new(plain.to_vec()))
    }
}
