//! `--key-wrap kmip://UID`: values are AES-256-GCM ciphertexts made by the KMIP server itself (Encrypt/Decrypt
//! with the symmetric key `UID`, which never leaves the key manager, as in ceph-csi's KMIP backend), stored as
//! `kmip:v1:` + unpadded base64url of nonce (12 bytes) ‖ tag (16) ‖ ciphertext. The additional data is fixed
//! (`cryptadm volume key v1`), so a value wrapped for something else by the same key is refused.
//!
//! Why not Get + local AES-GCM for servers without Encrypt: the point of an HSM is that the key stays in it, and
//! appliances mark such keys non-extractable; a server below KMIP 1.4 (no authenticated-encryption fields) is
//! refused with a hint instead.

use super::store::store_error;
use super::wrap::KeyWrap;
use crate::crypto::Passphrase;
use crate::exit::ExitStatus;
use crate::kms::kmip::{Kmip, Sealed};
use crate::volume::Error;
use std::sync::Arc;

/// The prefix of a wrapped value.
pub const FORM: &str = Sealed::FORM;
const AAD: &[u8] = b"cryptadm volume key v1";

/// A KMIP symmetric key wrapping a store's values.
pub struct KmipWrap {
    client: Arc<Kmip>,
    uid: String,
}

impl KmipWrap {
    /// The key `kmip://UID`.
    pub fn from_uri(uri: &str, client: Arc<Kmip>) -> Result<Self, Error> {
        let uid = uri
            .strip_prefix("kmip://")
            .filter(|u| !u.is_empty() && u.len() <= 256 && u.bytes().all(|b| b.is_ascii_graphic() && b != b'/'))
            .ok_or_else(|| {
                Error::BadRequest(format!("--key-wrap `{uri}`: expected kmip://UID (the key's unique identifier)"))
            })?;
        Ok(Self { client, uid: uid.to_owned() })
    }
}

impl KeyWrap for KmipWrap {
    fn form(&self) -> &'static str {
        "KMIP-wrapped value (kmip:v1:…)"
    }

    fn is_wrapped(&self, stored: &[u8]) -> bool {
        stored.starts_with(FORM.as_bytes())
    }

    fn wrap(&self, key: &Passphrase) -> Result<String, Error> {
        Ok(self.client.encrypt(&self.uid, key.expose(), AAD).map_err(store_error)?.to_text())
    }

    fn unwrap(&self, stored: &str) -> Result<Passphrase, Error> {
        let sealed = Sealed::from_text(stored).ok_or_else(|| Error::Store {
            status: ExitStatus::InvalidInput,
            message: "a stored value is not a well-formed kmip:v1: value".into(),
        })?;
        let plain = self.client.decrypt(&self.uid, &sealed, AAD).map_err(store_error)?;
        Ok(Passphrase::new(plain.to_vec()))
    }
}
