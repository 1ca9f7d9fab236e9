//! Layer keys wrapped by a key manager's Transit key (`vault-transit://MOUNT/KEY`, Vault or OpenBao), stored the
//! way ocicrypt stores a key provider's answer, so that `cryptadm image keyprovider` (a `cmd` key provider named
//! `cryptadm`) opens them for skopeo, podman, buildah, CRI-O and containerd, and cryptadm opens them natively.
//!
//! The annotation is `org.opencontainers.image.enc.keys.provider.cryptadm`; its value is, as for every key provider,
//! base64 of the bytes the provider returned. Those bytes are this JSON document (compact, fields in this order):
//!
//! ```text
//! {"scheme":"vault-transit","recipients":[{"key":"vault-transit://transit/images","ciphertext":"vault:v1:…"}]}
//! ```
//!
//! One entry per Transit key the layer was encrypted for; `ciphertext` is Transit's `encrypt` answer for the
//! layer's private options JSON. The key reference travels with the ciphertext so that an unwrapper (the key
//! provider started by skopeo, a node's stream processor) needs nothing but the Vault settings of its environment.
//! Readers ignore unknown fields; a `scheme` other than `vault-transit` is refused as not ours.

use super::Error;
use super::keywrap::{KeyUnwrapper, KeyWrapper};
use crate::crypto::SecretBytes;
use crate::exit::{Classify, ExitStatus};
use crate::kms::{self, KeyRef};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The key-provider name cryptadm answers to (`provider:cryptadm`, `OCICRYPT_KEYPROVIDER_CONFIG`).
pub const PROVIDER: &str = "cryptadm";
/// The annotation suffix: `…enc.keys.provider.cryptadm`.
pub const SCHEME: &str = "provider.cryptadm";
/// The `scheme` field of a Transit-wrapped blob.
pub const BLOB_SCHEME: &str = "vault-transit";
/// Most bytes of a wrapped blob this reader parses (a few Transit ciphertexts of a 193-byte payload).
pub const MAX_BLOB: usize = 64 * 1024;

/// Gives the key manager that holds the Transit keys (Vault/OpenBao: a [`kms::Wrapping`] that names keys
/// `MOUNT/KEY`). The command line builds it from the Vault settings (address, CA, credentials); it is called only
/// when a layer needs it, so a run that opens no Transit-wrapped layer never reads credentials nor logs in.
pub type Opener = Arc<dyn Fn() -> Result<Arc<dyn kms::Wrapping + Send + Sync>, kms::Error> + Send + Sync>;

/// An opener for when no key manager was configured: every use fails, saying so.
pub fn unconfigured() -> Opener {
    Arc::new(|| Err(kms::Error::Config("Transit keys need a Vault or OpenBao server, and none is configured".into())))
}

/// A Transit key: its engine's mount path and its name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct TransitKey {
    /// The mount path, without slashes at either end.
    pub mount: String,
    /// The key's name.
    pub key: String,
}

impl TransitKey {
    /// Parses `vault-transit://MOUNT/KEY` (without a wrapped data key).
    pub fn parse(text: &str) -> Result<Self, kms::Error> {
        match KeyRef::parse(text)? {
            KeyRef::VaultTransit { mount, key, wrapped: None } => Ok(Self { mount, key }),
            _ => Err(kms::Error::BadReference {
                reference: crate::redact::url(text),
                problem: "expected a Transit key, vault-transit://MOUNT/KEY".into(),
            }),
        }
    }

    /// The key's name for [`kms::Wrapping`]: `MOUNT/KEY`, a `/` inside the mount written `%2F`.
    pub fn wrapping_name(&self) -> String {
        format!("{}/{}", self.mount.replace('/', "%2F"), self.key)
    }

    /// The reference, `vault-transit://MOUNT/KEY`.
    pub fn reference(&self) -> String {
        KeyRef::VaultTransit { mount: self.mount.clone(), key: self.key.clone(), wrapped: None }.to_string()
    }
}

impl std::fmt::Display for TransitKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reference())
    }
}

#[derive(Serialize, Deserialize)]
struct Blob {
    scheme: String,
    recipients: Vec<Entry>,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    key: String,
    ciphertext: String,
}

/// A key manager's error while wrapping or unwrapping for `key`, in ocicrypt's terms. Unreachable, sealed or
/// misconfigured servers become [`Error::Unwrap`]-like failures; refusals keep their own exit status.
fn kms_error(error: kms::Error) -> Error {
    Error::KeyManager { scheme: SCHEME.into(), error }
}

/// Wraps layer keys with one or more Transit keys.
pub struct TransitWrapper {
    opener: Opener,
    keys: Vec<TransitKey>,
}

impl TransitWrapper {
    /// A wrapper for `keys` (at least one), reaching Transit through `opener`.
    pub fn new(opener: Opener, keys: Vec<TransitKey>) -> Self {
        Self { opener, keys }
    }
}

impl KeyWrapper for TransitWrapper {
    fn scheme(&self) -> String {
        SCHEME.into()
    }

    fn wrap(&self, private_options: &[u8]) -> Result<Vec<u8>, Error> {
        if self.keys.is_empty() {
            return Err(Error::Wrap { scheme: SCHEME.into(), problem: "no Transit key given".into() });
        }
        let mut recipients = Vec::with_capacity(self.keys.len());
        for key in &self.keys {
            let transit = (self.opener)().map_err(kms_error)?;
            let ciphertext = transit.wrap(&key.wrapping_name(), private_options).map_err(kms_error)?;
            recipients.push(Entry { key: key.reference(), ciphertext });
        }
        let blob = Blob { scheme: BLOB_SCHEME.into(), recipients };
        serde_json::to_vec(&blob).map_err(|e| Error::Wrap { scheme: SCHEME.into(), problem: e.to_string() })
    }
}

/// Which Transit keys an unwrapper may use.
#[derive(Debug, Clone)]
pub enum Allowed {
    /// Only these (the operator's `--key vault-transit://…`).
    Keys(Vec<TransitKey>),
    /// Whichever key the blob names (the key provider, a node's stream processor: the Vault policy decides).
    Named,
}

/// Unwraps layer keys with Transit.
pub struct TransitUnwrapper {
    opener: Opener,
    allowed: Allowed,
}

impl TransitUnwrapper {
    /// An unwrapper that uses the keys `allowed`, reaching Transit through `opener`.
    pub fn new(opener: Opener, allowed: Allowed) -> Self {
        Self { opener, allowed }
    }
}

/// Parses a blob: the Transit keys and ciphertexts it holds.
fn parse_blob(wrapped: &[u8]) -> Result<Vec<(TransitKey, String)>, Error> {
    let malformed = |problem: String| Error::MalformedWrappedKey { scheme: SCHEME.into(), problem };
    if wrapped.len() > MAX_BLOB {
        return Err(malformed(format!("larger than {MAX_BLOB} bytes")));
    }
    let blob: Blob =
        serde_json::from_slice(wrapped).map_err(|e| malformed(format!("not a cryptadm Transit blob ({e})")))?;
    if blob.scheme != BLOB_SCHEME {
        return Err(malformed(format!(
            "scheme `{}` is not `{BLOB_SCHEME}`",
            crate::redact::server_message(blob.scheme.as_bytes())
        )));
    }
    blob.recipients
        .into_iter()
        .map(|entry| {
            let key = TransitKey::parse(&entry.key).map_err(|e| malformed(e.to_string()))?;
            Ok((key, entry.ciphertext))
        })
        .collect()
}

/// The Transit keys a wrapped blob names (for `image inspect`).
pub fn recipients(wrapped: &[u8]) -> Result<Vec<TransitKey>, Error> {
    Ok(parse_blob(wrapped)?.into_iter().map(|(key, _)| key).collect())
}

impl KeyUnwrapper for TransitUnwrapper {
    fn scheme(&self) -> String {
        SCHEME.into()
    }

    fn unwrap(&self, wrapped: &[u8]) -> Result<Option<SecretBytes>, Error> {
        let entries = parse_blob(wrapped)?;
        let mut refused = None;
        for (key, ciphertext) in entries {
            if let Allowed::Keys(keys) = &self.allowed
                && !keys.contains(&key)
            {
                continue;
            }
            let opened = (self.opener)().and_then(|transit| transit.unwrap(&key.wrapping_name(), &ciphertext));
            match opened {
                Ok(private) => return Ok(Some(private)),
                // A server that cannot be asked is a failure to fix there: said at once.
                Err(e) if e.status() == ExitStatus::Failure => {
                    return Err(Error::Unwrap { scheme: SCHEME.into(), problem: e.to_string() });
                }
                // Refused or no such key: another entry may still open it.
                Err(e) => refused = Some(e),
            }
        }
        match refused {
            Some(e) => Err(kms_error(e)),
            None => Ok(None),
        }
    }
}

// ---- cryptadm as an ocicrypt key provider (the `cmd` protocol, docs/formats.md#key-providers) ----

#[derive(Deserialize)]
struct Request {
    op: String,
    #[serde(default)]
    keywrapparams: Option<WrapParams>,
    #[serde(default)]
    keyunwrapparams: Option<UnwrapParams>,
}

#[derive(Deserialize)]
struct WrapParams {
    #[serde(default)]
    ec: Option<ConfigParams>,
    #[serde(default)]
    optsdata: Option<String>,
}

#[derive(Deserialize)]
struct UnwrapParams {
    #[serde(default)]
    dc: Option<ConfigParams>,
    #[serde(default)]
    annotation: Option<String>,
}

#[derive(Deserialize)]
struct ConfigParams {
    #[serde(rename = "Parameters", default)]
    parameters: Option<std::collections::BTreeMap<String, Option<Vec<String>>>>,
}

/// What a key-provider request asks.
pub enum ProviderRequest {
    /// Wrap `optsdata` for the Transit keys named in `provider:cryptadm:KEY` recipients.
    Wrap {
        /// The Transit keys.
        keys: Vec<TransitKey>,
        /// The layer's private options.
        optsdata: SecretBytes,
    },
    /// Unwrap a blob; `keys` are the keys named with `--decryption-key provider:cryptadm:KEY` (none: any key the
    /// blob names).
    Unwrap {
        /// The Transit keys the caller named, if any.
        keys: Vec<TransitKey>,
        /// The blob (the annotation's bytes).
        blob: Vec<u8>,
    },
}

/// The options given to provider `cryptadm` (`provider:cryptadm:OPTS` → `Parameters["cryptadm"]`, base64), parsed
/// as Transit keys; `Enabled` (no options) is skipped.
fn named_keys(params: Option<&ConfigParams>) -> Result<Vec<TransitKey>, Error> {
    let invalid = |problem: String| Error::InvalidKey { what: format!("provider:{PROVIDER}"), problem };
    let values =
        params.and_then(|p| p.parameters.as_ref()).and_then(|p| p.get(PROVIDER).cloned().flatten()).unwrap_or_default();
    let mut keys = Vec::new();
    for value in values {
        let bytes = crate::crypto::encoding::b64_decode_lenient(&value)
            .map_err(|_| invalid("a parameter is not standard base64".into()))?;
        if bytes == super::keyprovider::ENABLED {
            continue;
        }
        let text = String::from_utf8(bytes).map_err(|_| invalid("a parameter is not UTF-8".into()))?;
        keys.push(TransitKey::parse(&text).map_err(|e| invalid(e.to_string()))?);
    }
    Ok(keys)
}

/// Parses one request as ocicrypt's keyprovider.go sends it (Go `encoding/json`: `[]byte` as base64; field names
/// matched as Go writes them).
pub fn parse_request(bytes: &[u8]) -> Result<ProviderRequest, Error> {
    let malformed = |problem: String| Error::Malformed(format!("key-provider request: {problem}"));
    // serde_json's errors name a position, never the content: the private options stay out of messages.
    let request: Request =
        serde_json::from_slice(bytes).map_err(|e| malformed(format!("not ocicrypt's JSON request ({e})")))?;
    let decode = |field: &str, text: Option<String>| {
        let text = zeroize::Zeroizing::new(text.unwrap_or_default());
        let bytes = crate::crypto::encoding::b64_decode_lenient(&text)
            .map_err(|_| malformed(format!("`{field}` is not standard base64")))?;
        if bytes.is_empty() {
            return Err(malformed(format!("`{field}` is missing or empty")));
        }
        Ok(bytes)
    };
    match request.op.as_str() {
        "keywrap" => {
            let params = request.keywrapparams.unwrap_or(WrapParams { ec: None, optsdata: None });
            let keys = named_keys(params.ec.as_ref())?;
            if keys.is_empty() {
                return Err(Error::InvalidKey {
                    what: format!("provider:{PROVIDER}"),
                    problem: format!(
                        "no Transit key named: give the recipient as provider:{PROVIDER}:vault-transit://MOUNT/KEY"
                    ),
                });
            }
            let optsdata = SecretBytes::new(decode("keywrapparams.optsdata", params.optsdata)?);
            Ok(ProviderRequest::Wrap { keys, optsdata })
        }
        "keyunwrap" => {
            let params = request.keyunwrapparams.unwrap_or(UnwrapParams { dc: None, annotation: None });
            let keys = named_keys(params.dc.as_ref())?;
            let blob = decode("keyunwrapparams.annotation", params.annotation)?;
            Ok(ProviderRequest::Unwrap { keys, blob })
        }
        other => Err(malformed(format!(
            "unknown op `{}` (expected keywrap or keyunwrap)",
            crate::redact::server_message(other.as_bytes())
        ))),
    }
}

/// Answers one key-provider request: the JSON document ocicrypt expects on stdout.
pub fn answer(request: ProviderRequest, opener: &Opener) -> Result<SecretBytes, Error> {
    let encode = crate::crypto::encoding::b64_encode;
    match request {
        ProviderRequest::Wrap { keys, optsdata } => {
            let blob = TransitWrapper::new(opener.clone(), keys).wrap(&optsdata)?;
            let answer = serde_json::json!({ "keywrapresults": { "annotation": encode(&blob) } });
            Ok(SecretBytes::new(answer.to_string().into_bytes()))
        }
        ProviderRequest::Unwrap { keys, blob } => {
            let allowed = if keys.is_empty() { Allowed::Named } else { Allowed::Keys(keys) };
            let unwrapper = TransitUnwrapper::new(opener.clone(), allowed);
            let Some(private) = unwrapper.unwrap(&blob)? else {
                return Err(Error::Unauthenticated(format!(
                    "{SCHEME}: none of the Transit keys named with provider:{PROVIDER}:KEY is one the layer was \
                     wrapped with ({})",
                    recipients(&blob)?.iter().map(TransitKey::reference).collect::<Vec<_>>().join(", ")
                )));
            };
            let encoded = zeroize::Zeroizing::new(encode(&private));
            let answer = format!(r#"{{"keyunwrapresults":{{"optsdata":"{}"}}}}"#, encoded.as_str());
            Ok(SecretBytes::new(answer.into_bytes()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Stands in for Transit in unit tests of the blob format only (the CLI tests use a real OpenBao): "wraps"
    /// by reversing bytes, refuses key `denied`.
    struct Reverse(Mutex<Vec<String>>);
    impl kms::Wrapping for Reverse {
        fn generate_data_key(&self, _: &str, _: usize) -> Result<kms::DataKey, kms::Error> {
            unimplemented!()
        }
        fn wrap(&self, key: &str, plaintext: &[u8]) -> Result<String, kms::Error> {
            self.0.lock().unwrap().push(format!("wrap {key}"));
            Ok(format!("vault:v1:{}", hex::encode(plaintext.iter().rev().copied().collect::<Vec<_>>())))
        }
        fn unwrap(&self, key: &str, wrapped: &str) -> Result<SecretBytes, kms::Error> {
            self.0.lock().unwrap().push(format!("unwrap {key}"));
            if key == "transit/denied" {
                return Err(kms::Error::Denied {
                    what: "decrypt".into(),
                    service: "test".into(),
                    message: "no".into(),
                });
            }
            let mut bytes = hex::decode(wrapped.trim_start_matches("vault:v1:")).unwrap();
            bytes.reverse();
            Ok(SecretBytes::new(bytes))
        }
        fn rewrap(&self, _: &str, _: &str) -> Result<String, kms::Error> {
            unimplemented!()
        }
        fn rotate_key(&self, _: &str) -> Result<(), kms::Error> {
            unimplemented!()
        }
    }

    fn opener() -> Opener {
        let reverse: Arc<dyn kms::Wrapping + Send + Sync> = Arc::new(Reverse(Mutex::default()));
        Arc::new(move || Ok(reverse.clone()))
    }

    fn key(text: &str) -> TransitKey {
        TransitKey::parse(text).unwrap()
    }

    #[test]
    fn blob_format() {
        let wrapper = TransitWrapper::new(opener(), vec![key("vault-transit://transit/images")]);
        let blob = wrapper.wrap(b"ab").unwrap();
        assert_eq!(
            std::str::from_utf8(&blob).unwrap(),
            r#"{"scheme":"vault-transit","recipients":[{"key":"vault-transit://transit/images","ciphertext":"vault:v1:6261"}]}"#
        );
        assert_eq!(recipients(&blob).unwrap(), [key("vault-transit://transit/images")]);
    }

    #[test]
    fn unwrap_only_with_allowed_keys() {
        let blob = TransitWrapper::new(opener(), vec![key("vault-transit://transit/a"), key("vault-transit://t2/b")])
            .wrap(b"opts")
            .unwrap();
        let named = TransitUnwrapper::new(opener(), Allowed::Named);
        assert_eq!(&named.unwrap(&blob).unwrap().unwrap()[..], b"opts");
        let other = TransitUnwrapper::new(opener(), Allowed::Keys(vec![key("vault-transit://transit/c")]));
        assert!(other.unwrap(&blob).unwrap().is_none());
        let second = TransitUnwrapper::new(opener(), Allowed::Keys(vec![key("vault-transit://t2/b")]));
        assert_eq!(&second.unwrap(&blob).unwrap().unwrap()[..], b"opts");
        let denied = TransitWrapper::new(opener(), vec![key("vault-transit://transit/denied")]).wrap(b"x").unwrap();
        let err = named.unwrap(&denied).unwrap_err();
        assert_eq!(err.status(), ExitStatus::Unauthenticated, "{err}");
        for bad in [
            &b"{}"[..],
            br#"{"scheme":"other","recipients":[]}"#,
            br#"{"scheme":"vault-transit","recipients":[{"key":"file:///x","ciphertext":""}]}"#,
        ] {
            assert!(matches!(named.unwrap(bad), Err(Error::MalformedWrappedKey { .. })));
        }
    }

    #[test]
    fn provider_protocol() {
        // What ocicrypt sends for `--encryption-key provider:cryptadm:vault-transit://transit/images`.
        let wrap = br#"{"op":"keywrap","keywrapparams":{"ec":{"Parameters":{"cryptadm":["dmF1bHQtdHJhbnNpdDovL3RyYW5zaXQvaW1hZ2Vz"]},"DecryptConfig":{"Parameters":null}},"optsdata":"b3B0cw=="},"keyunwrapparams":{"dc":null,"annotation":null}}"#;
        let answered = answer(parse_request(wrap).unwrap(), &opener()).unwrap();
        let value: serde_json::Value = serde_json::from_slice(&answered).unwrap();
        let annotation = value["keywrapresults"]["annotation"].as_str().unwrap();
        let unwrap = format!(
            r#"{{"op":"keyunwrap","keywrapparams":{{"ec":null,"optsdata":null}},"keyunwrapparams":{{"dc":{{"Parameters":{{"cryptadm":["RW5hYmxlZA=="],"privkeys":[]}}}},"annotation":"{annotation}"}}}}"#
        );
        let answered = answer(parse_request(unwrap.as_bytes()).unwrap(), &opener()).unwrap();
        assert_eq!(std::str::from_utf8(&answered).unwrap(), r#"{"keyunwrapresults":{"optsdata":"b3B0cw=="}}"#);
        // `provider:cryptadm` without a key cannot wrap.
        let enabled = br#"{"op":"keywrap","keywrapparams":{"ec":{"Parameters":{"cryptadm":["RW5hYmxlZA=="]},"DecryptConfig":{"Parameters":null}},"optsdata":"b3B0cw=="},"keyunwrapparams":{"dc":null,"annotation":null}}"#;
        assert!(matches!(parse_request(enabled), Err(Error::InvalidKey { .. })));
        assert!(matches!(parse_request(br#"{"op":"nope"}"#), Err(Error::Malformed(_))));
        assert!(matches!(parse_request(b"[]"), Err(Error::Malformed(_))));
    }
}
