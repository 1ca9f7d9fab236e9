//! Layer keys wrapped by a key manager's key, stored the way ocicrypt stores a key provider's answer, so that
//! `cryptadm image keyprovider` (a `cmd` key provider named `cryptadm`) opens them for skopeo, podman, buildah, CRI-O
//! and containerd, and cryptadm opens them natively. Two key managers hold such keys: Vault/OpenBao Transit
//! (`vault-transit://MOUNT/KEY`) and AWS KMS (`aws-kms://ARN`, a key or alias ARN).
//!
//! The annotation is `org.opencontainers.image.enc.keys.provider.cryptadm`; its value is, as for every key provider,
//! base64 of the bytes the provider returned. Those bytes are this JSON document (compact, fields in this order):
//!
//! ```text
//! {"scheme":"vault-transit","recipients":[{"key":"vault-transit://transit/images","ciphertext":"vault:v1:…"}]}
//! {"scheme":"aws-kms","recipients":[{"key":"aws-kms://arn:aws:kms:…:key/ID","ciphertext":"AQICAHh…"}]}
//! ```
//!
//! An entry made since issue 42 also records the context its ciphertext is bound to (AWS KMS: the encryption
//! context; Transit: `associated_data`, base64 of the context's compact JSON), the layer's plaintext digest (as its
//! private options carry it), so that any opener rebuilds it from the annotation:
//! `{"key":"aws-kms://…","ciphertext":"AQICAHh…","context":{"cryptadm:layer":"sha256:…"}}`. An entry without it
//! (older images) opens without a context; an unwrapped key whose private options name another layer is refused.
//!
//! One entry per key the layer was encrypted for; `ciphertext` is the key manager's wrapping of the layer's private
//! options JSON: Transit's `encrypt` answer, or the standard base64 of KMS Encrypt's CiphertextBlob (what
//! `aws kms encrypt --query CiphertextBlob --output text` prints). The key reference travels with the ciphertext so
//! that an unwrapper (the key provider started by skopeo, a node's stream processor) needs nothing but the key
//! managers' settings of its environment. `scheme` is the entries' one reference scheme, or `key-managers` when they
//! mix both (a blob of Transit keys only keeps the form older cryptadm reads). Readers ignore unknown fields; any
//! other `scheme` is refused as not ours.

use super::Error;
use super::keywrap::{KeyUnwrapper, KeyWrapper};
use crate::crypto::SecretBytes;
use crate::exit::{Classify, ExitStatus};
use crate::kms::{self, KeyRef, reference};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The key-provider name cryptadm answers to (`provider:cryptadm`, `OCICRYPT_KEYPROVIDER_CONFIG`).
pub const PROVIDER: &str = "cryptadm";
/// The annotation suffix: `…enc.keys.provider.cryptadm`.
pub const SCHEME: &str = "provider.cryptadm";
/// The `scheme` of a blob whose entries use keys of both key managers.
pub const MIXED_BLOB_SCHEME: &str = "key-managers";
/// Most bytes of a wrapped blob this reader parses (a few ciphertexts of a 193-byte payload).
pub const MAX_BLOB: usize = 64 * 1024;
/// What a key given as a recipient or option looks like, for messages.
pub const KEY_FORMS: &str = "vault-transit://MOUNT/KEY or aws-kms://arn:aws:kms:REGION:ACCOUNT:key/ID";

/// The key managers whose keys wrap layer keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Manager {
    /// Vault or OpenBao, with their Transit engine.
    Vault,
    /// AWS KMS.
    Aws,
}

/// Gives the client of a key manager (a [`kms::Wrapping`]; Vault names keys `MOUNT/KEY`, AWS by ARN). The command
/// line builds it from the settings (Vault's address, CA and credentials; AWS's credential chain); it is called only
/// when a layer needs that manager, so a run that opens no such layer never reads credentials nor logs in.
pub type Opener = Arc<dyn Fn(Manager) -> Result<Arc<dyn kms::Wrapping + Send + Sync>, kms::Error> + Send + Sync>;

/// An opener for when no key manager was configured: every use fails, saying so.
pub fn unconfigured() -> Opener {
    Arc::new(|manager| Err(not_configured(manager)))
}

/// The error of a key manager that is not configured.
pub fn not_configured(manager: Manager) -> kms::Error {
    kms::Error::Config(match manager {
        Manager::Vault => "Transit keys need a Vault or OpenBao server, and none is configured".into(),
        Manager::Aws => "AWS KMS keys need the AWS settings, and none were given".into(),
    })
}

/// A key that wraps layer keys: a Transit key, or an AWS KMS key named by its ARN.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum ManagedKey {
    /// `vault-transit://MOUNT/KEY`.
    Transit {
        /// The mount path, without slashes at either end.
        mount: String,
        /// The key's name.
        key: String,
    },
    /// `aws-kms://ARN`: a KMS key ARN or alias ARN. An image may be opened in any region and account, so the key is
    /// always named by ARN (which carries its region), never by `alias/NAME` or a bare key id.
    AwsKms {
        /// The ARN.
        arn: String,
    },
}

impl ManagedKey {
    /// Parses `vault-transit://MOUNT/KEY` (without a wrapped data key) or `aws-kms://ARN`.
    pub fn parse(text: &str) -> Result<Self, kms::Error> {
        let bad =
            |problem: &str| kms::Error::BadReference { reference: crate::redact::url(text), problem: problem.into() };
        let (reference, _) = kms::backends::parse_for(text, kms::backends::Use::Recipient, "an image key")?;
        match reference {
            KeyRef::VaultTransit { mount, key, wrapped: None } => Ok(Self::Transit { mount, key }),
            KeyRef::AwsKms { key } if key.starts_with("arn:") => Ok(Self::AwsKms { arn: key }),
            KeyRef::AwsKms { .. } => Err(bad(
                "an image names its KMS key by key or alias ARN (aws-kms://arn:aws:kms:REGION:ACCOUNT:key/ID or \
                 …:alias/NAME), so that any node finds it in its region",
            )),
            _ => Err(bad(&format!("expected {KEY_FORMS}"))),
        }
    }

    /// Whether `text` is written in one of the schemes of these keys.
    pub fn is_reference(text: &str) -> bool {
        kms::backends::is_key_manager_reference(text, kms::backends::Use::Recipient)
    }

    /// The key manager that holds the key.
    pub fn manager(&self) -> Manager {
        match self {
            Self::Transit { .. } => Manager::Vault,
            Self::AwsKms { .. } => Manager::Aws,
        }
    }

    /// The key's name for [`kms::Wrapping`]: `MOUNT/KEY` (a `/` inside the mount written `%2F`), or the ARN.
    pub fn wrapping_name(&self) -> String {
        match self {
            Self::Transit { mount, key } => format!("{}/{key}", mount.replace('/', "%2F")),
            Self::AwsKms { arn } => arn.clone(),
        }
    }

    /// The reference, `vault-transit://MOUNT/KEY` or `aws-kms://ARN`.
    pub fn reference(&self) -> String {
        self.key_ref().to_string()
    }

    /// The reference's scheme, which is also the `scheme` of a blob of such keys only.
    fn scheme(&self) -> &'static str {
        match self {
            Self::Transit { .. } => reference::VAULT_TRANSIT,
            Self::AwsKms { .. } => reference::AWS_KMS,
        }
    }

    fn key_ref(&self) -> KeyRef {
        match self {
            Self::Transit { mount, key } => {
                KeyRef::VaultTransit { mount: mount.clone(), key: key.clone(), wrapped: None }
            }
            Self::AwsKms { arn } => KeyRef::AwsKms { key: arn.clone() },
        }
    }
}

impl std::fmt::Display for ManagedKey {
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
    /// The context the ciphertext is bound to (AWS KMS: its encryption context), recorded so that any opener can
    /// rebuild it: `{"cryptadm:layer": DIGEST}`. Absent in blobs made before (they open without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    context: Option<kms::Context>,
}

/// The context name of the layer a layer key is bound to: the plaintext layer's digest (`sha256:…`), which the
/// layer's private options also carry.
pub const CONTEXT_LAYER: &str = "cryptadm:layer";

/// The context a layer key is bound to: the layer's digest from the private options (AWS KMS: the
/// encryption context; Transit: `associated_data`, see [`kms::vault::associated_data`]). `None` when the options
/// name no digest.
fn layer_context(private_options: &[u8]) -> Option<kms::Context> {
    let options: serde_json::Value = serde_json::from_slice(private_options).ok()?;
    let digest = options.get("digest").and_then(serde_json::Value::as_str).filter(|d| !d.is_empty())?;
    Some([(CONTEXT_LAYER.to_owned(), digest.to_owned())].into_iter().collect())
}

/// Checks what a bound entry unwrapped to: its private options name the layer its context names (a layer key
/// bound to one layer and copied into another layer's annotation is refused, exit 15).
fn check_layer(context: &kms::Context, private_options: &[u8]) -> Result<(), Error> {
    let bound = context.get(CONTEXT_LAYER).map(String::as_str).unwrap_or_default();
    let options: serde_json::Value = serde_json::from_slice(private_options).unwrap_or_default();
    match options.get("digest").and_then(serde_json::Value::as_str) {
        Some(digest) if !digest.is_empty() && digest != bound => Err(Error::Integrity(format!(
            "{SCHEME}: the layer key is bound to layer `{}` but is the key of layer `{}`",
            crate::redact::server_message(bound.as_bytes()),
            crate::redact::server_message(digest.as_bytes())
        ))),
        _ => Ok(()),
    }
}

/// A key manager's error while wrapping or unwrapping for `key`, in ocicrypt's terms. Unreachable, sealed or
/// misconfigured servers become [`Error::Unwrap`]-like failures; refusals keep their own exit status.
fn kms_error(error: kms::Error) -> Error {
    Error::KeyManager { scheme: SCHEME.into(), error }
}

/// Wraps layer keys with one or more key-manager keys.
pub struct ManagedWrapper {
    opener: Opener,
    keys: Vec<ManagedKey>,
}

impl ManagedWrapper {
    /// A wrapper for `keys` (at least one), reaching their key managers through `opener`.
    pub fn new(opener: Opener, keys: Vec<ManagedKey>) -> Self {
        Self { opener, keys }
    }
}

/// The `scheme` of a blob holding entries for `keys`.
fn blob_scheme(keys: &[ManagedKey]) -> &'static str {
    match keys.first().map(ManagedKey::scheme) {
        Some(first) if keys.iter().all(|k| k.scheme() == first) => first,
        _ => MIXED_BLOB_SCHEME,
    }
}

impl KeyWrapper for ManagedWrapper {
    fn scheme(&self) -> String {
        SCHEME.into()
    }

    fn wrap(&self, private_options: &[u8]) -> Result<Vec<u8>, Error> {
        if self.keys.is_empty() {
            return Err(Error::Wrap { scheme: SCHEME.into(), problem: "no key-manager key given".into() });
        }
        let mut recipients = Vec::with_capacity(self.keys.len());
        for key in &self.keys {
            let manager = (self.opener)(key.manager()).map_err(kms_error)?;
            let context = layer_context(private_options);
            let ciphertext = match &context {
                Some(context) => manager.wrap_bound(&key.wrapping_name(), private_options, context),
                None => manager.wrap(&key.wrapping_name(), private_options),
            }
            .map_err(kms_error)?;
            recipients.push(Entry { key: key.reference(), ciphertext, context });
        }
        let blob = Blob { scheme: blob_scheme(&self.keys).into(), recipients };
        serde_json::to_vec(&blob).map_err(|e| Error::Wrap { scheme: SCHEME.into(), problem: e.to_string() })
    }
}

/// Which key-manager keys an unwrapper may use.
#[derive(Debug, Clone)]
pub enum Allowed {
    /// Only these (the operator's `--key vault-transit://…`, `--key aws-kms://…`).
    Keys(Vec<ManagedKey>),
    /// Whichever key the blob names (the key provider, a node's stream processor: the key manager's policy for the
    /// node's identity decides).
    Named,
}

/// Unwraps layer keys with their key managers.
pub struct ManagedUnwrapper {
    opener: Opener,
    allowed: Allowed,
}

impl ManagedUnwrapper {
    /// An unwrapper that uses the keys `allowed`, reaching their key managers through `opener`.
    pub fn new(opener: Opener, allowed: Allowed) -> Self {
        Self { opener, allowed }
    }
}

/// Parses a blob: the keys, ciphertexts and recorded contexts it holds.
fn parse_blob(wrapped: &[u8]) -> Result<Vec<(ManagedKey, String, Option<kms::Context>)>, Error> {
    let malformed = |problem: String| Error::MalformedWrappedKey { scheme: SCHEME.into(), problem };
    if wrapped.len() > MAX_BLOB {
        return Err(malformed(format!("larger than {MAX_BLOB} bytes")));
    }
    let blob: Blob =
        serde_json::from_slice(wrapped).map_err(|e| malformed(format!("not a cryptadm key-manager blob ({e})")))?;
    if ![reference::VAULT_TRANSIT, reference::AWS_KMS, MIXED_BLOB_SCHEME].contains(&blob.scheme.as_str()) {
        return Err(malformed(format!(
            "scheme `{}` is none of {}, {} and {MIXED_BLOB_SCHEME}",
            crate::redact::server_message(blob.scheme.as_bytes()),
            reference::VAULT_TRANSIT,
            reference::AWS_KMS,
        )));
    }
    blob.recipients
        .into_iter()
        .map(|entry| {
            let key = ManagedKey::parse(&entry.key).map_err(|e| malformed(e.to_string()))?;
            match &entry.context {
                Some(context) if context.len() != 1 || !context.contains_key(CONTEXT_LAYER) => {
                    return Err(malformed(format!("an entry's context is not {{\"{CONTEXT_LAYER}\": DIGEST}}")));
                }
                _ => {}
            }
            Ok((key, entry.ciphertext, entry.context))
        })
        .collect()
}

/// The keys a wrapped blob names (for `image inspect`).
pub fn recipients(wrapped: &[u8]) -> Result<Vec<ManagedKey>, Error> {
    Ok(parse_blob(wrapped)?.into_iter().map(|(key, ..)| key).collect())
}

/// How much an entry's failure says: the most telling one is reported when no entry opens the layer. A server
/// that cannot be asked comes first (the failure to fix there), then a refusal, a missing key, and last a key
/// manager this run has no settings for (a node may hold credentials for one manager of a mixed blob only).
fn weight(error: &kms::Error) -> u8 {
    match error.status() {
        ExitStatus::Failure | ExitStatus::DeadlineExceeded => 4,
        ExitStatus::Unauthenticated => 3,
        ExitStatus::NotFound => 2,
        _ if matches!(error, kms::Error::Config(_)) => 0,
        _ => 1,
    }
}

impl KeyUnwrapper for ManagedUnwrapper {
    fn scheme(&self) -> String {
        SCHEME.into()
    }

    fn unwrap(&self, wrapped: &[u8]) -> Result<Option<SecretBytes>, Error> {
        let entries = parse_blob(wrapped)?;
        let mut failed: Option<kms::Error> = None;
        let mut tried = false;
        for (key, ciphertext, context) in &entries {
            if let Allowed::Keys(keys) = &self.allowed
                && !keys.contains(key)
            {
                continue;
            }
            tried = true;
            let opened = (self.opener)(key.manager()).and_then(|manager| match context {
                Some(context) => manager.unwrap_bound(&key.wrapping_name(), ciphertext, context),
                None => manager.unwrap(&key.wrapping_name(), ciphertext),
            });
            match opened {
                Ok(private) => {
                    if let Some(context) = context {
                        check_layer(context, &private)?;
                    }
                    return Ok(Some(private));
                }
                // Refused, unreachable or not configured here: another entry (another manager) may still open it.
                Err(e) if failed.as_ref().is_none_or(|f| weight(&e) > weight(f)) => failed = Some(e),
                Err(_) => {}
            }
        }
        match failed {
            // A server that cannot be asked is a failure to fix there.
            Some(e) if e.status() == ExitStatus::Failure => {
                Err(Error::Unwrap { scheme: SCHEME.into(), problem: e.to_string() })
            }
            Some(e) => Err(kms_error(e)),
            // Keys were named and the layer is wrapped for others: say which, nothing was asked of a key manager.
            None if !tried && !entries.is_empty() => Err(Error::Unauthenticated(format!(
                "{SCHEME}: the layer key is wrapped for {}, and none of these keys was given",
                entries.iter().map(|(key, ..)| key.reference()).collect::<Vec<_>>().join(", ")
            ))),
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
    /// Wrap `optsdata` for the keys named in `provider:cryptadm:KEY` recipients.
    Wrap {
        /// The key-manager keys.
        keys: Vec<ManagedKey>,
        /// The layer's private options.
        optsdata: SecretBytes,
    },
    /// Unwrap a blob; `keys` are the keys named with `--decryption-key provider:cryptadm:KEY` (none: any key the
    /// blob names).
    Unwrap {
        /// The key-manager keys the caller named, if any.
        keys: Vec<ManagedKey>,
        /// The blob (the annotation's bytes).
        blob: Vec<u8>,
    },
}

/// The options given to provider `cryptadm` (`provider:cryptadm:OPTS` → `Parameters["cryptadm"]`, base64), parsed
/// as key-manager keys; `Enabled` (no options) is skipped.
fn named_keys(params: Option<&ConfigParams>) -> Result<Vec<ManagedKey>, Error> {
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
        keys.push(ManagedKey::parse(&text).map_err(|e| invalid(e.to_string()))?);
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
                        "no key named: give the recipient as provider:{PROVIDER}:vault-transit://MOUNT/KEY or \
                         provider:{PROVIDER}:aws-kms://ARN"
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
            let blob = ManagedWrapper::new(opener.clone(), keys).wrap(&optsdata)?;
            let answer = serde_json::json!({ "keywrapresults": { "annotation": encode(&blob) } });
            Ok(SecretBytes::new(answer.to_string().into_bytes()))
        }
        ProviderRequest::Unwrap { keys, blob } => {
            let allowed = if keys.is_empty() { Allowed::Named } else { Allowed::Keys(keys) };
            let unwrapper = ManagedUnwrapper::new(opener.clone(), allowed);
            // A blob that names keys opens or says why not; one that names none opens nothing.
            let Some(private) = unwrapper.unwrap(&blob)? else {
                return Err(Error::Unauthenticated(format!(
                    "{SCHEME}: the wrapped key names no key to unwrap it with"
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

    /// The seeds of fuzz target `key_manager_blob` are what they say (so the fuzzer starts from the accepted forms
    /// and its round-trip assertion runs): three blobs and both request kinds, all accepted.
    #[test]
    fn the_fuzz_seeds_are_accepted_blobs_and_requests() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/key_manager_blob");
        let seed = |name: &str| std::fs::read(dir.join(name)).unwrap();
        for (name, keys) in [("transit.json", 1), ("aws-kms.json", 1), ("mixed.json", 2)] {
            assert_eq!(recipients(&seed(name)).unwrap().len(), keys, "{name}");
        }
        assert!(matches!(parse_request(&seed("unwrap-request.json")).unwrap(), ProviderRequest::Unwrap { .. }));
        assert!(matches!(parse_request(&seed("wrap-request.json")).unwrap(), ProviderRequest::Wrap { .. }));
    }
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
        // As KMS does: the context is sealed with the ciphertext, and only the same context unwraps it.
        fn wrap_bound(&self, key: &str, plaintext: &[u8], context: &kms::Context) -> Result<String, kms::Error> {
            let sealed = self.wrap(key, plaintext)?;
            Ok(format!("{sealed}:{}", hex::encode(serde_json::to_vec(context).unwrap())))
        }
        fn unwrap_bound(&self, key: &str, wrapped: &str, context: &kms::Context) -> Result<SecretBytes, kms::Error> {
            let (sealed, bound) = wrapped.rsplit_once(':').unwrap();
            if hex::encode(serde_json::to_vec(context).unwrap()) != bound {
                return Err(kms::Error::Config("InvalidCiphertextException".into()));
            }
            self.unwrap(key, sealed)
        }
    }

    /// Issue 42: an AWS KMS entry is bound to its layer's digest and records it; the opener passes the recorded
    /// context; an edited record is refused by the key manager; a key bound to one layer but holding another
    /// layer's options is refused (exit 15); Transit entries are bound alike.
    #[test]
    fn aws_kms_entries_are_bound_to_their_layer() {
        let arn = "aws-kms://arn:aws:kms:eu-west-1:111122223333:key/k";
        let options = br#"{"symkey":"AA==","digest":"sha256:aa","cipheroptions":{"nonce":"AA=="}}"#;
        let blob = ManagedWrapper::new(opener(), vec![key(arn)]).wrap(options).unwrap();
        let parsed: serde_json::Value = serde_json::from_slice(&blob).unwrap();
        assert_eq!(parsed["recipients"][0]["context"], serde_json::json!({"cryptadm:layer": "sha256:aa"}));
        let named = ManagedUnwrapper::new(opener(), Allowed::Named);
        assert_eq!(&named.unwrap(&blob).unwrap().unwrap()[..], options);
        let edited = String::from_utf8(blob.clone()).unwrap().replace("\"sha256:aa\"}", "\"sha256:bb\"}");
        assert!(named.unwrap(edited.as_bytes()).is_err(), "an edited context unwrapped");
        let other_layer = br#"{"symkey":"AA==","digest":"sha256:bb","cipheroptions":{"nonce":"AA=="}}"#;
        let context: kms::Context = [(CONTEXT_LAYER.to_owned(), "sha256:aa".to_owned())].into_iter().collect();
        let sealed = kms::Wrapping::wrap_bound(&Reverse(Mutex::default()), "k", other_layer, &context).unwrap();
        let moved = serde_json::json!({"scheme": "aws-kms", "recipients": [{"key": arn, "ciphertext": sealed, "context": context}]});
        let refused = named.unwrap(moved.to_string().as_bytes()).unwrap_err();
        assert_eq!(refused.status(), ExitStatus::DataLoss, "{refused}");
        let transit = ManagedWrapper::new(opener(), vec![key("vault-transit://transit/images")]).wrap(options).unwrap();
        assert!(String::from_utf8(transit).unwrap().contains(r#""context":{"cryptadm:layer":"sha256:aa"}"#));
        let unbound = ManagedWrapper::new(opener(), vec![key(arn)]).wrap(b"{}").unwrap();
        assert!(!String::from_utf8(unbound).unwrap().contains("context"), "options without a digest");
    }

    fn opener() -> Opener {
        let reverse: Arc<dyn kms::Wrapping + Send + Sync> = Arc::new(Reverse(Mutex::default()));
        Arc::new(move |_| Ok(reverse.clone()))
    }

    fn key(text: &str) -> ManagedKey {
        ManagedKey::parse(text).unwrap()
    }

    #[test]
    fn blob_format() {
        let wrapper = ManagedWrapper::new(opener(), vec![key("vault-transit://transit/images")]);
        let blob = wrapper.wrap(b"ab").unwrap();
        assert_eq!(
            std::str::from_utf8(&blob).unwrap(),
            r#"{"scheme":"vault-transit","recipients":[{"key":"vault-transit://transit/images","ciphertext":"vault:v1:6261"}]}"#
        );
        assert_eq!(recipients(&blob).unwrap(), [key("vault-transit://transit/images")]);
    }

    #[test]
    fn unwrap_only_with_allowed_keys() {
        let blob = ManagedWrapper::new(opener(), vec![key("vault-transit://transit/a"), key("vault-transit://t2/b")])
            .wrap(b"opts")
            .unwrap();
        let named = ManagedUnwrapper::new(opener(), Allowed::Named);
        assert_eq!(&named.unwrap(&blob).unwrap().unwrap()[..], b"opts");
        let other = ManagedUnwrapper::new(opener(), Allowed::Keys(vec![key("vault-transit://transit/c")]));
        let not_given = other.unwrap(&blob).unwrap_err().to_string();
        assert!(not_given.contains("vault-transit://transit/a, vault-transit://t2/b"), "{not_given}");
        let second = ManagedUnwrapper::new(opener(), Allowed::Keys(vec![key("vault-transit://t2/b")]));
        assert_eq!(&second.unwrap(&blob).unwrap().unwrap()[..], b"opts");
        let denied = ManagedWrapper::new(opener(), vec![key("vault-transit://transit/denied")]).wrap(b"x").unwrap();
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

    #[test]
    fn aws_keys_by_arn_and_mixed_blobs() {
        let arn = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab";
        let aws = key(&format!("aws-kms://{arn}"));
        assert_eq!((aws.manager(), aws.wrapping_name()), (Manager::Aws, arn.to_owned()));
        assert!(ManagedKey::parse("aws-kms://arn:aws:kms:eu-west-1:123456789012:alias/images").is_ok());
        for bad in ["aws-kms://alias/images", "aws-kms://1234abcd", "aws-kms://arn:aws:s3:::bucket", "aws-kms:x"] {
            assert!(ManagedKey::parse(bad).is_err(), "{bad}");
        }
        assert!(ManagedKey::is_reference("aws-kms://x") && !ManagedKey::is_reference("aws-kmsx:"));
        let only_aws = ManagedWrapper::new(opener(), vec![aws.clone()]).wrap(b"o").unwrap();
        assert!(only_aws.starts_with(br#"{"scheme":"aws-kms","recipients":[{"key":"aws-kms://arn:aws:kms:"#));
        let mixed = ManagedWrapper::new(opener(), vec![key("vault-transit://transit/denied"), aws.clone()])
            .wrap(b"opts")
            .unwrap();
        assert!(mixed.starts_with(br#"{"scheme":"key-managers","#), "{}", String::from_utf8_lossy(&mixed));
        // The Transit entry is refused, the AWS one opens: each recipient unwraps on its own.
        let named = ManagedUnwrapper::new(opener(), Allowed::Named);
        assert_eq!(&named.unwrap(&mixed).unwrap().unwrap()[..], b"opts");
        // A node configured for AWS only: Vault's "not configured" never hides the answer of AWS.
        let aws_only: Opener = {
            let inner = opener();
            Arc::new(move |manager| if manager == Manager::Aws { inner(manager) } else { Err(not_configured(manager)) })
        };
        let first_vault =
            ManagedWrapper::new(opener(), vec![key("vault-transit://transit/a"), aws]).wrap(b"opts").unwrap();
        assert_eq!(
            &ManagedUnwrapper::new(aws_only, Allowed::Named).unwrap(&first_vault).unwrap().unwrap()[..],
            b"opts"
        );
        // Nothing opens: the refusal is reported, not the missing settings.
        let refused = ManagedUnwrapper::new(
            Arc::new(|manager| if manager == Manager::Aws { Err(not_configured(manager)) } else { opener()(manager) }),
            Allowed::Named,
        );
        let denied = ManagedWrapper::new(
            opener(),
            vec![key("vault-transit://transit/denied"), key(&format!("aws-kms://{arn}"))],
        )
        .wrap(b"x")
        .unwrap();
        assert_eq!(refused.unwrap(&denied).unwrap_err().status(), ExitStatus::Unauthenticated);
    }
}
