//! The CSI-Addons `EncryptionKeyRotateRequest` as cryptadm takes it: from the gRPC message in `volume serve`, or
//! as JSON with the proto's field names (`volume rotate --request FILE|-`).
//!
//! What the fields mean here:
//! - `volume_id` (required): the key store's entry for the volume and the name of its lock.
//! - `volume_path` (optional, as in the spec; the csi-addons sidecar never sends it): the LUKS image file or block
//!   device. Without it the device is found from the volume id ([`super::resolve`]).
//! - `encryption_key` (optional, secret): the new passphrase to set; empty means "generate one". A request whose
//!   key is already current succeeds without a change.
//! - `parameters`: opaque; handed to a key-store plugin as they are.
//! - `secrets` (secret): credentials for the key store; handed to a key-store plugin, never logged. The
//!   built-in file store ignores both.
//! - `volume_capability`: accepted and ignored (LUKS is the same for block and mount access).

use super::Error;
use crate::crypto::Passphrase;
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

/// The request's `secrets`: redacted in `Debug`, wiped on drop.
#[derive(Clone, Default, serde::Deserialize)]
#[serde(transparent)]
pub struct Secrets(BTreeMap<String, String>);

impl Secrets {
    /// Wraps a map of secrets.
    pub fn new(map: BTreeMap<String, String>) -> Self {
        Self(map)
    }
    /// The secrets, for passing to a plugin only.
    pub fn expose(&self) -> &BTreeMap<String, String> {
        &self.0
    }
}

impl fmt::Debug for Secrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secrets({:?} = [REDACTED])", self.0.keys().collect::<Vec<_>>())
    }
}

impl Drop for Secrets {
    fn drop(&mut self) {
        use zeroize::Zeroize;
        for value in self.0.values_mut() {
            value.zeroize();
        }
    }
}

/// A validated rotation request.
#[derive(Debug)]
pub struct RotateRequest {
    /// The volume id (non-empty).
    pub volume_id: String,
    /// The LUKS image or block device; `None` means "find it from the volume id".
    pub volume_path: Option<PathBuf>,
    /// The new passphrase the caller chose, if any.
    pub new_key: Option<Passphrase>,
    /// Opaque plugin parameters.
    pub parameters: BTreeMap<String, String>,
    /// Key-store credentials.
    pub secrets: Secrets,
}

/// The JSON shape (field names of the proto).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Wire {
    #[serde(default)]
    volume_id: String,
    #[serde(default)]
    volume_path: String,
    #[serde(default)]
    encryption_key: String,
    #[serde(default)]
    parameters: BTreeMap<String, String>,
    #[serde(default)]
    secrets: Secrets,
    #[serde(default)]
    #[allow(dead_code)]
    volume_capability: Option<serde::de::IgnoredAny>,
}

/// Largest request accepted (a request is a few hundred bytes; this bounds a wrong file).
pub const MAX_REQUEST_BYTES: usize = 1 << 20;

impl RotateRequest {
    /// Validates the fields of a request (from JSON or gRPC).
    pub fn new(
        volume_id: String,
        volume_path: String,
        encryption_key: &str,
        parameters: BTreeMap<String, String>,
        secrets: Secrets,
    ) -> Result<Self, Error> {
        if volume_id.is_empty() {
            return Err(Error::MissingField { field: "volume_id" });
        }
        let new_key = (!encryption_key.is_empty()).then(|| Passphrase::new(encryption_key.as_bytes().to_vec()));
        let volume_path = (!volume_path.is_empty()).then(|| PathBuf::from(volume_path));
        Ok(Self { volume_id, volume_path, new_key, parameters, secrets })
    }

    /// Parses the JSON form. serde's messages can quote the input, which may hold secrets: errors say only
    /// where and what kind of problem it is.
    pub fn from_json(bytes: &[u8]) -> Result<Self, Error> {
        if bytes.len() > MAX_REQUEST_BYTES {
            return Err(Error::BadRequest(format!("larger than {MAX_REQUEST_BYTES} bytes")));
        }
        let mut wire: Wire = serde_json::from_slice(bytes).map_err(|e| {
            let what = match e.classify() {
                serde_json::error::Category::Syntax | serde_json::error::Category::Eof => "not valid JSON",
                _ => "not a request object (unknown field or wrong type)",
            };
            Error::BadRequest(format!("{what} at line {} column {}", e.line(), e.column()))
        })?;
        let encryption_key = zeroize::Zeroizing::new(std::mem::take(&mut wire.encryption_key));
        Self::new(wire.volume_id, wire.volume_path, &encryption_key, wire.parameters, wire.secrets)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_proto_field_names() {
        let request = RotateRequest::from_json(
            br#"{"volume_id":"pvc-1","volume_path":"/dev/x","encryption_key":"k","parameters":{"a":"b"},
                "secrets":{"token":"s3cr3t"},"volume_capability":{"block":{}}}"#,
        )
        .unwrap();
        assert_eq!(request.volume_id, "pvc-1");
        assert_eq!(request.new_key.as_ref().unwrap().expose(), b"k");
        assert_eq!(request.parameters["a"], "b");
        assert!(!format!("{request:?}").contains("s3cr3t"));
    }

    #[test]
    fn missing_fields_and_garbage_are_invalid_without_echoing_secrets() {
        assert!(matches!(
            RotateRequest::from_json(br#"{"volume_path":"/x"}"#),
            Err(Error::MissingField { field: "volume_id" })
        ));
        assert!(RotateRequest::from_json(br#"{"volume_id":"v"}"#).unwrap().volume_path.is_none());
        let err = RotateRequest::from_json(br#"{"volume_id":"v","encryption_key":42424242}"#).unwrap_err();
        assert!(!err.to_string().contains("42424242"), "{err}");
        let err = RotateRequest::from_json(br#"{"secrets":{"t":7777777}}"#).unwrap_err();
        assert!(!err.to_string().contains("7777777"), "{err}");
        assert!(matches!(RotateRequest::from_json(b"{"), Err(Error::BadRequest(_))));
    }
}
