//! Reading and writing machineadm documents.
//!
//! Reading is tolerant where the proposal is loose (integer or string `iterations`, algorithm names in any case,
//! missing base64 padding, kubebuilder defaults for omitted algorithm fields, a `v1 List` wrapper) and strict
//! where guessing would be wrong (unknown kinds and versions, unsupported algorithms, nonce lengths). Every
//! document is validated before any passphrase is fetched.

use super::Error;
use crate::crypto::aead::GCM_NONCE_LEN;
use crate::crypto::encoding::{b64_decode_lenient, b64_encode};
use serde::Serialize;
use serde_json::{Map, Value};

/// The apiVersion cryptadm writes.
pub const API_VERSION: &str = "machineadm.cluster.x-k8s.io/v1alpha1";
/// API groups accepted on read (the second is where a served CAPI type would live).
const ACCEPTED_GROUPS: &[&str] = &["machineadm.cluster.x-k8s.io", "bootstrap.cluster.x-k8s.io"];
const ACCEPTED_VERSIONS: &str = "machineadm.cluster.x-k8s.io/v1alpha1, bootstrap.cluster.x-k8s.io/v1alpha1";
/// The proposal's iteration count; fewer draws a warning.
pub const RECOMMENDED_ITERATIONS: u32 = 50_000;
/// More iterations than this is refused: a hostile document must not pin a CPU for hours.
pub const MAX_ITERATIONS: u32 = 10_000_000;
/// Larger inputs are refused before parsing (userdata limits are kilobytes).
pub const MAX_STREAM_BYTES: u64 = 16 * 1024 * 1024;
/// Room in a sealed stream for everything but the ciphertext's base64 (fields, RemoteConfig documents).
const SEAL_OVERHEAD: u64 = 64 * 1024;
/// Largest configuration `bootstrap seal` accepts, derived from [`MAX_STREAM_BYTES`]: sealing adds a 16-byte tag
/// and base64 grows it by 4/3, so anything larger would seal into a stream `bootstrap open` refuses.
pub const MAX_SEAL_INPUT_BYTES: u64 = (MAX_STREAM_BYTES - SEAL_OVERHEAD) / 4 * 3 - 16;
const MIN_SALT_LEN: usize = 8;

const CIPHER: &str = "aes-256-gcm";
const DIGEST: &str = "sha-512";
const KDF: &str = "pbkdf2";

/// One document of a machineadm configuration stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Document {
    /// In-band encrypted configuration.
    Encrypted(EncryptedConfig),
    /// A pointer to out-of-band configuration that a remote-configuration plugin fetches.
    Remote(RemoteConfig),
}

/// An `EncryptedConfig` with its fields decoded and validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncryptedConfig {
    /// Name of the plugin that fetches the passphrase (`file` is built in).
    pub provider: String,
    /// Provider-specific location of the passphrase.
    pub passphrase_uri: String,
    /// AES-256-GCM ciphertext with the 16-byte tag appended.
    pub ciphertext: Vec<u8>,
    /// PBKDF2 salt.
    pub salt: Vec<u8>,
    /// GCM nonce.
    pub iv: [u8; GCM_NONCE_LEN],
    /// PBKDF2 iteration count.
    pub iterations: u32,
}

/// A `RemoteConfig`: a pointer to configuration that a remote-configuration provider fetches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteConfig {
    /// `metadata.name`.
    pub name: String,
    /// Remote-configuration plugin name.
    pub provider: String,
    /// Where the configuration lives.
    pub uri: String,
}

/// Parses a multi-document YAML (or JSON) stream and validates every document.
pub fn parse_stream(input: &[u8]) -> Result<Vec<Document>, Error> {
    if input.len() as u64 > MAX_STREAM_BYTES {
        return Err(Error::TooLarge { limit: MAX_STREAM_BYTES });
    }
    let text = std::str::from_utf8(input).map_err(|e| Error::Yaml(format!("not UTF-8 text ({e})")))?;
    let mut options = serde_saphyr::options::Options::default();
    // One-line errors: a snippet of the input would spread over several lines of a cloud-init log.
    options.with_snippet = false;
    let raw: Vec<Value> =
        serde_saphyr::from_multiple_with_options(text, options).map_err(|e| Error::Yaml(e.to_string()))?;
    let mut documents = Vec::new();
    for value in raw.into_iter().flat_map(flatten_list) {
        if value.is_null() {
            continue;
        }
        documents.push(parse_document(documents.len() + 1, value)?);
    }
    Ok(documents)
}

/// What a remote-configuration provider returned: a machineadm stream (`Some`, every document validated) or plain
/// configuration (`None`): bytes that are not a YAML stream, or a YAML stream none of whose documents has a
/// machineadm apiVersion. A stream that mixes both is refused: which parts to decrypt would be a guess.
pub(super) fn parse_fetched(input: &[u8]) -> Result<Option<Vec<Document>>, Error> {
    let Ok(text) = std::str::from_utf8(input) else { return Ok(None) };
    let mut options = serde_saphyr::options::Options::default();
    options.with_snippet = false;
    let Ok(raw) = serde_saphyr::from_multiple_with_options::<Value>(text, options) else { return Ok(None) };
    let values: Vec<Value> = raw.into_iter().flat_map(flatten_list).filter(|v| !v.is_null()).collect();
    let ours = values
        .iter()
        .filter(|v| {
            v.get("apiVersion")
                .and_then(Value::as_str)
                .and_then(|a| a.split_once('/'))
                .is_some_and(|(group, _)| ACCEPTED_GROUPS.contains(&group))
        })
        .count();
    match ours {
        0 => Ok(None),
        n if n < values.len() => Err(Error::BadRemoteContent("mixes machineadm documents and plain configuration")),
        _ => parse_stream(input).map(Some),
    }
}

/// kubectl prints several objects as a `v1 List`; read its items as documents.
fn flatten_list(value: Value) -> Vec<Value> {
    let is_list = value.get("kind").and_then(Value::as_str) == Some("List")
        && value.get("apiVersion").and_then(Value::as_str) == Some("v1");
    match (is_list, value) {
        (true, Value::Object(mut map)) => match map.remove("items") {
            Some(Value::Array(items)) => items,
            _ => Vec::new(),
        },
        (_, value) => vec![value],
    }
}

fn parse_document(index: usize, value: Value) -> Result<Document, Error> {
    let invalid = |problem: String| Error::Invalid { index, problem };
    let Value::Object(map) = value else {
        return Err(invalid("not a mapping".into()));
    };
    let kind = map.get("kind").and_then(Value::as_str).ok_or_else(|| invalid("`kind` is missing".into()))?;
    let api_version =
        map.get("apiVersion").and_then(Value::as_str).ok_or_else(|| invalid("`apiVersion` is missing".into()))?;
    check_api_version(index, api_version)?;
    let spec = match map.get("spec") {
        Some(Value::Object(spec)) => spec,
        Some(_) => return Err(invalid("`spec` is not a mapping".into())),
        None => return Err(invalid("`spec` is missing".into())),
    };
    match kind {
        // `EncryptedData` is the kind of the proposal's first draft, with the same spec.
        "EncryptedConfig" | "EncryptedData" => parse_encrypted(index, spec).map(Document::Encrypted),
        "RemoteConfig" => parse_remote(index, &map, spec).map(Document::Remote),
        other => Err(Error::Unsupported {
            index,
            what: "kind",
            found: other.into(),
            supported: "EncryptedConfig, RemoteConfig",
        }),
    }
}

fn check_api_version(index: usize, api_version: &str) -> Result<(), Error> {
    let accepted = api_version
        .split_once('/')
        .is_some_and(|(group, version)| ACCEPTED_GROUPS.contains(&group) && version == "v1alpha1");
    if accepted {
        Ok(())
    } else {
        Err(Error::Unsupported { index, what: "apiVersion", found: api_version.into(), supported: ACCEPTED_VERSIONS })
    }
}

fn parse_encrypted(index: usize, spec: &Map<String, Value>) -> Result<EncryptedConfig, Error> {
    let invalid = |problem: String| Error::Invalid { index, problem };
    let text = |name: &str| -> Result<Option<&str>, Error> {
        match spec.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(_) => Err(invalid(format!("spec.{name} is not a string"))),
        }
    };
    let required = |name: &str| text(name)?.ok_or_else(|| invalid(format!("spec.{name} is missing")));
    let base64 = |name: &str| {
        b64_decode_lenient(required(name)?).map_err(|e| invalid(format!("spec.{name} is not valid base64 ({e})")))
    };

    check_algorithm(index, "cipherAlgorithm", text("cipherAlgorithm")?, &[CIPHER], CIPHER)?;
    check_algorithm(index, "digestAlgorithm", text("digestAlgorithm")?, &[DIGEST, "sha512"], DIGEST)?;
    check_algorithm(index, "keyDerivationAlgorithm", text("keyDerivationAlgorithm")?, &[KDF], KDF)?;
    let iterations = parse_iterations(index, spec.get("iterations"))?;

    let provider = required("provider")?.to_owned();
    super::validate_provider_name(&provider)
        .map_err(|_| invalid(format!("spec.provider `{provider}` is not a valid plugin name")))?;
    let passphrase_uri = required("passphraseURI")?.to_owned();
    let salt = base64("salt")?;
    if salt.len() < MIN_SALT_LEN {
        return Err(invalid(format!("spec.salt is {} bytes; at least {MIN_SALT_LEN} are required", salt.len())));
    }
    let iv = base64("iv")?;
    let iv: [u8; GCM_NONCE_LEN] = iv.as_slice().try_into().map_err(|_| {
        invalid(format!("spec.iv is {} bytes; AES-256-GCM needs a {GCM_NONCE_LEN}-byte nonce", iv.len()))
    })?;
    let ciphertext = base64("ciphertext")?;
    if ciphertext.len() < crate::crypto::aead::GCM_TAG_LEN {
        return Err(invalid(format!(
            "spec.ciphertext is {} bytes, shorter than the 16-byte authentication tag (truncated?)",
            ciphertext.len()
        )));
    }
    Ok(EncryptedConfig { provider, passphrase_uri, ciphertext, salt, iv, iterations })
}

fn check_algorithm(
    index: usize,
    what: &'static str,
    found: Option<&str>,
    accepted: &[&str],
    supported: &'static str,
) -> Result<(), Error> {
    // An omitted field takes the proposal's kubebuilder default, which is the one algorithm implemented.
    match found {
        None => Ok(()),
        Some(name) if accepted.iter().any(|a| a.eq_ignore_ascii_case(name.trim())) => Ok(()),
        Some(name) => Err(Error::Unsupported { index, what, found: name.into(), supported }),
    }
}

fn parse_iterations(index: usize, value: Option<&Value>) -> Result<u32, Error> {
    let invalid = |problem: String| Error::Invalid { index, problem };
    let number = match value {
        None | Some(Value::Null) => return Ok(RECOMMENDED_ITERATIONS),
        Some(Value::String(s)) => {
            s.trim().parse::<u64>().map_err(|_| invalid(format!("spec.iterations `{s}` is not a whole number")))?
        }
        Some(Value::Number(n)) => {
            n.as_u64().ok_or_else(|| invalid(format!("spec.iterations `{n}` is not a whole number")))?
        }
        Some(_) => return Err(invalid("spec.iterations is not a number".into())),
    };
    if number == 0 || number > u64::from(MAX_ITERATIONS) {
        return Err(invalid(format!("spec.iterations {number} is outside 1..={MAX_ITERATIONS}")));
    }
    Ok(number as u32)
}

fn parse_remote(index: usize, map: &Map<String, Value>, spec: &Map<String, Value>) -> Result<RemoteConfig, Error> {
    let invalid = |problem: String| Error::Invalid { index, problem };
    let field = |name: &str| {
        spec.get(name)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| invalid(format!("spec.{name} is missing")))
    };
    let name =
        map.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str).unwrap_or("(unnamed)").to_owned();
    Ok(RemoteConfig { name, provider: field("provider")?, uri: field("uri")? })
}

/// The wire shape of a document, in the proposal's key order (what a Go serializer would emit).
#[derive(Serialize)]
#[serde(untagged)]
pub(crate) enum WireDocument<'a> {
    Encrypted {
        #[serde(rename = "apiVersion")]
        api_version: &'static str,
        kind: &'static str,
        spec: WireEncryptedSpec<'a>,
    },
    Remote {
        #[serde(rename = "apiVersion")]
        api_version: &'static str,
        kind: &'static str,
        metadata: WireMetadata<'a>,
        spec: WireRemoteSpec<'a>,
    },
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireEncryptedSpec<'a> {
    provider: &'a str,
    #[serde(rename = "passphraseURI")]
    passphrase_uri: &'a str,
    ciphertext: String,
    salt: String,
    iv: String,
    cipher_algorithm: &'static str,
    digest_algorithm: &'static str,
    iterations: String,
    key_derivation_algorithm: &'static str,
}

#[derive(Serialize)]
pub(crate) struct WireMetadata<'a> {
    name: &'a str,
}

#[derive(Serialize)]
pub(crate) struct WireRemoteSpec<'a> {
    provider: &'a str,
    uri: &'a str,
}

impl Document {
    /// The serializable wire form.
    pub(crate) fn wire(&self) -> WireDocument<'_> {
        match self {
            Document::Encrypted(doc) => WireDocument::Encrypted {
                api_version: API_VERSION,
                kind: "EncryptedConfig",
                spec: WireEncryptedSpec {
                    provider: &doc.provider,
                    passphrase_uri: &doc.passphrase_uri,
                    ciphertext: b64_encode(&doc.ciphertext),
                    salt: b64_encode(&doc.salt),
                    iv: b64_encode(&doc.iv),
                    cipher_algorithm: CIPHER,
                    digest_algorithm: DIGEST,
                    iterations: doc.iterations.to_string(),
                    key_derivation_algorithm: KDF,
                },
            },
            Document::Remote(doc) => WireDocument::Remote {
                api_version: API_VERSION,
                kind: "RemoteConfig",
                metadata: WireMetadata { name: &doc.name },
                spec: WireRemoteSpec { provider: &doc.provider, uri: &doc.uri },
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VECTOR: &str = "apiVersion: machineadm.cluster.x-k8s.io/v1alpha1
kind: EncryptedConfig
spec:
  provider: file
  passphraseURI: file:///etc/machineadm/passphrase
  ciphertext: P25Mwy3yorzjCaQwrR1xg0dYOcynBv53r8TYe0n36xUzCGEv4xpSfUSqbIk/yTw=
  salt: AAECAwQFBgcICQoLDA0ODw==
  iv: oKGio6Slpqeoqaqr
  cipherAlgorithm: aes-256-gcm
  digestAlgorithm: sha-512
  iterations: \"50000\"
  keyDerivationAlgorithm: pbkdf2
";

    fn one(input: &str) -> Result<Document, Error> {
        let mut docs = parse_stream(input.as_bytes())?;
        assert_eq!(docs.len(), 1);
        Ok(docs.remove(0))
    }

    #[test]
    fn parses_the_spec_vector() {
        let Document::Encrypted(doc) = one(VECTOR).unwrap() else { panic!() };
        assert_eq!(doc.iterations, 50_000);
        assert_eq!(doc.salt, (0u8..16).collect::<Vec<_>>());
        assert_eq!(doc.ciphertext.len(), 47);
    }

    #[test]
    fn tolerant_reading() {
        let loose = VECTOR
            .replace("iterations: \"50000\"", "iterations: 50000")
            .replace("sha-512", "SHA512")
            .replace("AAECAwQFBgcICQoLDA0ODw==", "AAECAwQFBgcICQoLDA0ODw")
            .replace("  cipherAlgorithm: aes-256-gcm\n", "");
        assert_eq!(one(&loose).unwrap(), one(VECTOR).unwrap());
    }

    #[test]
    fn strict_where_guessing_is_wrong() {
        let cases = [
            (VECTOR.replace("v1alpha1", "v1beta1"), "unsupported apiVersion"),
            (VECTOR.replace("EncryptedConfig", "Secret"), "unsupported kind"),
            (VECTOR.replace("aes-256-gcm", "aes-256-cbc"), "unsupported cipherAlgorithm"),
            (VECTOR.replace("\"50000\"", "\"0\""), "outside 1..="),
            (VECTOR.replace("\"50000\"", "\"99999999999\""), "outside 1..="),
            (VECTOR.replace("oKGio6Slpqeoqaqr", "oKGio6Slpqeo"), "12-byte nonce"),
            (VECTOR.replace("AAECAwQFBgcICQoLDA0ODw==", "AAEC"), "at least 8"),
            (VECTOR.replace("  provider: file\n", ""), "spec.provider is missing"),
            (VECTOR.replace("provider: file", "provider: ../../bin/sh"), "not a valid plugin name"),
            (VECTOR.replace("P25Mwy3yorzjCaQwrR1xg0dYOcynBv53r8TYe0n36xUzCGEv4xpSfUSqbIk/yTw=", "P25M"), "truncated"),
            (VECTOR.replace("P25Mwy3y", "P25M%%3y"), "not valid base64"),
            ("just a string\n".to_owned(), "not a mapping"),
            ("a: [1\n".to_owned(), "not a valid YAML stream"),
        ];
        for (input, expected) in cases {
            let err = parse_stream(input.as_bytes()).unwrap_err().to_string();
            assert!(err.contains(expected), "{expected:?} not in {err:?}");
        }
    }

    #[test]
    fn stream_with_comments_lists_and_empty_documents() {
        let input = format!(
            "# sealed\n---\n{VECTOR}---\napiVersion: machineadm.cluster.x-k8s.io/v1alpha1\nkind: RemoteConfig\nmetadata:\n  name: r\nspec:\n  provider: s3\n  uri: s3://b/k\n---\n"
        );
        let docs = parse_stream(input.as_bytes()).unwrap();
        assert!(matches!(docs[1], Document::Remote(ref r) if r.name == "r" && r.provider == "s3"));
        let list = format!(
            "{{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[{}]}}",
            serde_json::to_string(&one(VECTOR).unwrap().wire()).unwrap()
        );
        assert_eq!(parse_stream(list.as_bytes()).unwrap(), vec![one(VECTOR).unwrap()]);
    }

    #[test]
    fn writes_the_spec_vector_byte_for_byte() {
        let yaml = serde_saphyr::to_string(&one(VECTOR).unwrap().wire()).unwrap();
        assert_eq!(yaml, VECTOR);
    }
}
