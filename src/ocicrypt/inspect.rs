//! What an image's layers are and who can open them, with no key (`cryptadm image inspect`, like imgcrypt's
//! `ctr images layerinfo`): per platform and layer the media type, size, digest, diff ID, whether it is encrypted,
//! the cipher, the wrapping schemes and what names each recipient: a JWE `kid` (go-jose's RSA-OAEP and ECDH-ES
//! recipients carry none, and their ciphertext names no key), a PKCS#7 issuer and serial number, OpenPGP key IDs.
//! Reads indexes, manifests and configs, never a layer blob.

use super::{Error, KEYS_ANNOTATION_PREFIX, PUBOPTS_ANNOTATION, pgp, pkcs7};
use crate::crypto::encoding::b64_decode_lenient;
use crate::oci::{Descriptor, ImageSource, MediaKind, Platform};
use base64::Engine;
use serde::Serialize;
use serde_json::{Map, Value};

/// One layer as `image inspect` reports it.
#[derive(Debug, Clone, Serialize)]
pub struct LayerInfo {
    /// The platform of its manifest, if known.
    pub platform: Option<String>,
    /// Position in its manifest (0 = bottom).
    pub index: usize,
    /// Media type.
    #[serde(rename = "mediaType")]
    pub media_type: String,
    /// Size in bytes.
    pub size: u64,
    /// Blob digest.
    pub digest: String,
    /// The config's diff ID for this layer (the plaintext tar's digest), if the config has it.
    #[serde(rename = "diffID")]
    pub diff_id: Option<String>,
    /// Whether the layer is encrypted.
    pub encrypted: bool,
    /// The layer cipher of the public options.
    pub cipher: Option<String>,
    /// Wrapping schemes with their recipients.
    pub schemes: Vec<SchemeInfo>,
    /// Annotations left on an encrypted layer that describe its plaintext (a zstd:chunked or eStargz table of
    /// contents).
    #[serde(rename = "plaintextAnnotations", skip_serializing_if = "Vec::is_empty")]
    pub plaintext_annotations: Vec<String>,
}

/// One wrapping scheme of a layer.
#[derive(Debug, Clone, Serialize)]
pub struct SchemeInfo {
    /// `jwe`, `pkcs7`, `pgp`, `provider.NAME`.
    pub scheme: String,
    /// Wrapped keys (comma-separated entries of the annotation).
    #[serde(rename = "wrappedKeys")]
    pub wrapped_keys: usize,
    /// What names each recipient, where the format says.
    pub recipients: Vec<String>,
}

/// Inspects every platform of `source`.
pub fn inspect_image(source: &dyn ImageSource) -> Result<Vec<LayerInfo>, Error> {
    let mut layers = Vec::new();
    walk(source, source.root(), None, &mut layers)?;
    Ok(layers)
}

fn parse_json(bytes: &[u8], what: &str) -> Result<Value, Error> {
    serde_json::from_slice(bytes).map_err(|e| Error::Malformed(format!("{what} is not valid JSON: {e}")))
}

fn walk(
    source: &dyn ImageSource,
    descriptor: &Descriptor,
    platform: Option<Platform>,
    out: &mut Vec<LayerInfo>,
) -> Result<(), Error> {
    match descriptor.kind() {
        MediaKind::Index => {
            let index = parse_json(&source.read_blob(descriptor)?, "image index")?;
            for entry in index.get("manifests").and_then(Value::as_array).cloned().unwrap_or_default() {
                let child = Descriptor::from_value(entry)?;
                let platform = child.platform();
                walk(source, &child, platform, out)?;
            }
            Ok(())
        }
        MediaKind::Manifest => {
            let manifest = parse_json(&source.read_blob(descriptor)?, "image manifest")?;
            let config = match manifest.get("config").cloned().map(Descriptor::from_value).transpose()? {
                Some(config) => source.read_blob(&config).ok(),
                None => None,
            };
            let platform = platform.or_else(|| config.as_deref().and_then(Platform::from_config));
            let diff_ids: Vec<String> = config
                .as_deref()
                .and_then(|c| serde_json::from_slice::<Value>(c).ok())
                .and_then(|c| c.pointer("/rootfs/diff_ids").and_then(Value::as_array).cloned())
                .unwrap_or_default()
                .into_iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect();
            let layers = manifest.get("layers").and_then(Value::as_array).cloned().unwrap_or_default();
            for (index, entry) in layers.into_iter().enumerate() {
                let layer = Descriptor::from_value(entry)?;
                out.push(layer_info(&layer, index, platform.as_ref(), diff_ids.get(index).cloned())?);
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn layer_info(
    layer: &Descriptor,
    index: usize,
    platform: Option<&Platform>,
    diff_id: Option<String>,
) -> Result<LayerInfo, Error> {
    let encrypted = layer.kind() == MediaKind::EncryptedLayer;
    let annotations = layer.annotations();
    let cipher = layer
        .annotation(PUBOPTS_ANNOTATION)
        .and_then(|a| super::layer::PublicOptions::from_annotation(a).ok())
        .map(|p| p.cipher);
    let mut schemes = Vec::new();
    for (key, value) in &annotations {
        let Some(scheme) = key.strip_prefix(KEYS_ANNOTATION_PREFIX) else { continue };
        let entries: Vec<&str> = value.split(',').filter(|e| !e.is_empty()).collect();
        let mut recipients = Vec::new();
        for entry in &entries {
            let described = b64_decode_lenient(entry)
                .map_err(|_| "an entry is not base64".to_owned())
                .and_then(|blob| describe(scheme, &blob));
            match described {
                Ok(names) => recipients.extend(names),
                Err(problem) => recipients.push(format!("unreadable: {problem}")),
            }
        }
        schemes.push(SchemeInfo { scheme: scheme.to_owned(), wrapped_keys: entries.len(), recipients });
    }
    let plaintext_annotations = if encrypted {
        annotations
            .keys()
            .filter(|k| super::image::PLAINTEXT_TOC_PREFIXES.iter().any(|p| k.starts_with(p)))
            .cloned()
            .collect()
    } else {
        Vec::new()
    };
    Ok(LayerInfo {
        platform: platform.map(Platform::to_string),
        index,
        media_type: layer.media_type()?.to_owned(),
        size: layer.size()?,
        digest: layer.digest()?.to_owned(),
        diff_id,
        encrypted,
        cipher,
        schemes,
        plaintext_annotations,
    })
}

/// The recipients of one wrapped key.
fn describe(scheme: &str, blob: &[u8]) -> Result<Vec<String>, String> {
    match scheme {
        "jwe" => jwe_recipients(blob),
        "pkcs7" => pkcs7::recipient_ids(blob).map_err(|e| e.to_string()),
        "pgp" => pgp::recipient_key_ids(blob)
            .map(|ids| ids.into_iter().map(|id| format!("key {id}")).collect())
            .map_err(|e| e.to_string()),
        // cryptadm's own provider blob names its key-manager keys.
        super::key_manager::SCHEME => super::key_manager::recipients(blob)
            .map(|keys| keys.iter().map(super::key_manager::ManagedKey::reference).collect())
            .map_err(|e| e.to_string()),
        // Another provider's blob is its own business.
        _ => Ok(Vec::new()),
    }
}

/// Each JWE recipient's `kid`, or its `alg` when it has none. Flattened, general and compact serializations.
fn jwe_recipients(blob: &[u8]) -> Result<Vec<String>, String> {
    let text = std::str::from_utf8(blob).map_err(|_| "the JWE is not UTF-8".to_owned())?.trim();
    let b64url = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(s.trim_end_matches('='));
    let header_of = |encoded: &str| -> Map<String, Value> {
        b64url(encoded)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
            .and_then(|v| v.as_object().cloned())
            .unwrap_or_default()
    };
    let name = |headers: &[&Map<String, Value>]| {
        let get = |k: &str| headers.iter().find_map(|h| h.get(k).and_then(Value::as_str));
        match (get("kid"), get("alg")) {
            (Some(kid), _) => format!("kid {kid}"),
            (None, Some(alg)) => format!("{alg} (no key id)"),
            (None, None) => "no alg".to_owned(),
        }
    };
    if !text.starts_with('{') {
        let protected = text.split('.').next().unwrap_or_default();
        return Ok(vec![name(&[&header_of(protected)])]);
    }
    let json: Value = serde_json::from_str(text).map_err(|_| "the JWE is not JSON".to_owned())?;
    let protected = json.get("protected").and_then(Value::as_str).map(header_of).unwrap_or_default();
    let shared = json.get("unprotected").and_then(Value::as_object).cloned().unwrap_or_default();
    let empty = Map::new();
    match json.get("recipients").and_then(Value::as_array) {
        Some(recipients) => Ok(recipients
            .iter()
            .map(|r| {
                let own = r.get("header").and_then(Value::as_object).unwrap_or(&empty);
                name(&[own, &protected, &shared])
            })
            .collect()),
        None => {
            let own = json.get("header").and_then(Value::as_object).unwrap_or(&empty);
            Ok(vec![name(&[own, &protected, &shared])])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jwe_recipient_names() {
        let protected =
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(br#"{"alg":"RSA-OAEP","enc":"A256GCM"}"#);
        let flattened =
            format!(r#"{{"protected":"{protected}","encrypted_key":"x","iv":"x","ciphertext":"x","tag":"x"}}"#);
        assert_eq!(jwe_recipients(flattened.as_bytes()).unwrap(), ["RSA-OAEP (no key id)"]);
        let general = format!(
            r#"{{"protected":"{protected}","recipients":[{{"header":{{"kid":"node-1"}}}},{{"header":{{"alg":"ECDH-ES+A256KW"}}}}]}}"#
        );
        assert_eq!(jwe_recipients(general.as_bytes()).unwrap(), ["kid node-1", "ECDH-ES+A256KW (no key id)"]);
        assert_eq!(jwe_recipients(format!("{protected}.a.b.c.d").as_bytes()).unwrap(), ["RSA-OAEP (no key id)"]);
        assert!(jwe_recipients(b"{").is_err());
    }
}
