//! Descriptors kept as JSON objects, with typed accessors for the fields cryptadm reads and writes.

use crate::oci::Error;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// An OCI content descriptor. Unknown fields survive every rewrite.
#[derive(Clone, Debug, PartialEq)]
pub struct Descriptor(Map<String, Value>);

/// What a media type names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MediaKind {
    /// An OCI image index or a Docker manifest list.
    Index,
    /// An OCI image manifest or a Docker schema 2 manifest.
    Manifest,
    /// A layer cryptadm can encrypt (OCI tar, tar+gzip, tar+zstd, non-distributable; Docker tar+gzip).
    Layer,
    /// An encrypted OCI layer (`…+encrypted`).
    EncryptedLayer,
    /// Anything else (configs, foreign layers, attestations): copied as it is.
    Other,
}

/// `os/architecture[/variant]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Platform {
    /// e.g. `linux`.
    pub os: String,
    /// e.g. `amd64`.
    pub architecture: String,
    /// e.g. `v8`.
    pub variant: Option<String>,
}

impl Platform {
    /// Parses `os/arch[/variant]`.
    pub fn parse(text: &str) -> Option<Self> {
        let mut parts = text.split('/');
        let os = parts.next().filter(|s| !s.is_empty())?.to_owned();
        let architecture = parts.next().filter(|s| !s.is_empty())?.to_owned();
        let variant = parts.next().map(str::to_owned);
        parts.next().is_none().then_some(Self { os, architecture, variant })
    }

    /// Whether `self` (what the operator asked for) selects `other` (what an image declares); a request without a
    /// variant selects every variant.
    pub fn selects(&self, other: &Platform) -> bool {
        self.os == other.os
            && self.architecture == other.architecture
            && (self.variant.is_none() || self.variant == other.variant)
    }

    fn from_value(value: &Value) -> Option<Self> {
        Some(Self {
            os: value.get("os")?.as_str()?.to_owned(),
            architecture: value.get("architecture")?.as_str()?.to_owned(),
            variant: value.get("variant").and_then(Value::as_str).map(str::to_owned),
        })
    }

    /// Reads the platform an image config declares.
    pub fn from_config(config: &[u8]) -> Option<Self> {
        Self::from_value(&serde_json::from_slice(config).ok()?)
    }
}

impl std::fmt::Display for Platform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.os, self.architecture)?;
        match &self.variant {
            Some(variant) => write!(f, "/{variant}"),
            None => Ok(()),
        }
    }
}

/// Media types of OCI layers that ocicrypt encrypts by appending `+encrypted`.
const OCI_LAYER_PREFIXES: &[&str] =
    &["application/vnd.oci.image.layer.v1.tar", "application/vnd.oci.image.layer.nondistributable.v1.tar"];
const DOCKER_LAYER_GZIP: &str = "application/vnd.docker.image.rootfs.diff.tar.gzip";
const DOCKER_LAYER_TAR: &str = "application/vnd.docker.image.rootfs.diff.tar";
/// OCI image manifest media type.
pub const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
/// OCI image index media type.
pub const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";

/// Classifies a media type.
pub fn kind_of(media_type: &str) -> MediaKind {
    match media_type {
        OCI_INDEX | "application/vnd.docker.distribution.manifest.list.v2+json" => MediaKind::Index,
        OCI_MANIFEST | "application/vnd.docker.distribution.manifest.v2+json" => MediaKind::Manifest,
        DOCKER_LAYER_GZIP | DOCKER_LAYER_TAR => MediaKind::Layer,
        t if t.ends_with("+encrypted") && OCI_LAYER_PREFIXES.iter().any(|p| t.starts_with(p)) => {
            MediaKind::EncryptedLayer
        }
        t if OCI_LAYER_PREFIXES.iter().any(|p| t == *p || t == format!("{p}+gzip") || t == format!("{p}+zstd")) => {
            MediaKind::Layer
        }
        _ => MediaKind::Other,
    }
}

/// The media type of a layer once encrypted: Docker types become their OCI equivalents (an encrypted image is
/// always an OCI image), then `+encrypted` is appended.
pub fn encrypted_media_type(media_type: &str) -> String {
    let oci = match media_type {
        DOCKER_LAYER_GZIP => "application/vnd.oci.image.layer.v1.tar+gzip",
        DOCKER_LAYER_TAR => "application/vnd.oci.image.layer.v1.tar",
        other => other,
    };
    format!("{oci}+encrypted")
}

/// The media type of a layer once decrypted: `+encrypted` removed (containers/image's rule).
pub fn decrypted_media_type(media_type: &str) -> String {
    media_type.strip_suffix("+encrypted").unwrap_or(media_type).to_owned()
}

/// `sha256:<hex>` of `bytes`.
pub fn sha256_digest(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// The hex part of a `sha256:` digest, checked so that it is safe as a file name.
pub fn digest_hex(digest: &str) -> Result<&str, Error> {
    let hex = digest
        .strip_prefix("sha256:")
        .ok_or_else(|| Error::Malformed(format!("unsupported digest `{digest}` (only sha256 is supported)")))?;
    if hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        Ok(hex)
    } else {
        Err(Error::Malformed(format!("malformed digest `{digest}`")))
    }
}

impl Descriptor {
    /// Reads a descriptor from JSON, checking the fields every descriptor must have.
    pub fn from_value(value: Value) -> Result<Self, Error> {
        let Value::Object(map) = value else {
            return Err(Error::Malformed("a descriptor is not a JSON object".into()));
        };
        let descriptor = Self(map);
        descriptor.media_type()?;
        digest_hex(descriptor.digest()?)?;
        descriptor.size()?;
        Ok(descriptor)
    }

    /// A new descriptor.
    pub fn new(media_type: &str, digest: &str, size: u64) -> Self {
        let mut map = Map::new();
        map.insert("mediaType".into(), media_type.into());
        map.insert("digest".into(), digest.into());
        map.insert("size".into(), size.into());
        Self(map)
    }

    fn field(&self, name: &str) -> Result<&Value, Error> {
        self.0.get(name).ok_or_else(|| Error::Malformed(format!("a descriptor has no `{name}`")))
    }

    /// `mediaType`.
    pub fn media_type(&self) -> Result<&str, Error> {
        self.field("mediaType")?
            .as_str()
            .ok_or_else(|| Error::Malformed("a descriptor's mediaType is not a string".into()))
    }

    /// `digest`.
    pub fn digest(&self) -> Result<&str, Error> {
        self.field("digest")?.as_str().ok_or_else(|| Error::Malformed("a descriptor's digest is not a string".into()))
    }

    /// `size`.
    pub fn size(&self) -> Result<u64, Error> {
        self.field("size")?.as_u64().ok_or_else(|| Error::Malformed("a descriptor's size is not a whole number".into()))
    }

    /// What the media type names.
    pub fn kind(&self) -> MediaKind {
        self.media_type().map(kind_of).unwrap_or(MediaKind::Other)
    }

    /// The annotations, sorted by key.
    pub fn annotations(&self) -> BTreeMap<String, String> {
        self.0
            .get("annotations")
            .and_then(Value::as_object)
            .map(|m| m.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned()))).collect())
            .unwrap_or_default()
    }

    /// One annotation.
    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.0.get("annotations")?.get(key)?.as_str()
    }

    /// Replaces the annotations (sorted by key, as Go writes maps); none removes the member.
    pub fn set_annotations(&mut self, annotations: BTreeMap<String, String>) {
        if annotations.is_empty() {
            self.0.remove("annotations");
        } else {
            let map: Map<String, Value> = annotations.into_iter().map(|(k, v)| (k, Value::String(v))).collect();
            self.0.insert("annotations".into(), Value::Object(map));
        }
    }

    /// Points the descriptor at different content, keeping every other field.
    pub fn set_content(&mut self, media_type: &str, digest: &str, size: u64) {
        self.0.insert("mediaType".into(), media_type.into());
        self.0.insert("digest".into(), digest.into());
        self.0.insert("size".into(), size.into());
    }

    /// Whether the blob lives elsewhere (a non-distributable layer with `urls`): like containers/image, such a layer
    /// is neither fetched, copied nor encrypted, and its descriptor is kept as it is.
    pub fn is_foreign(&self) -> bool {
        self.0.get("urls").and_then(Value::as_array).is_some_and(|urls| !urls.is_empty())
    }

    /// `platform`, in index entries.
    pub fn platform(&self) -> Option<Platform> {
        Platform::from_value(self.0.get("platform")?)
    }

    /// The JSON object.
    pub fn to_value(&self) -> Value {
        Value::Object(self.0.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_kinds() {
        assert_eq!(kind_of("application/vnd.oci.image.layer.v1.tar+gzip"), MediaKind::Layer);
        assert_eq!(kind_of("application/vnd.oci.image.layer.nondistributable.v1.tar+zstd"), MediaKind::Layer);
        assert_eq!(kind_of("application/vnd.oci.image.layer.v1.tar+gzip+encrypted"), MediaKind::EncryptedLayer);
        assert_eq!(kind_of("application/vnd.docker.image.rootfs.foreign.diff.tar.gzip"), MediaKind::Other);
        assert_eq!(kind_of("application/vnd.oci.image.config.v1+json"), MediaKind::Other);
        assert_eq!(encrypted_media_type(DOCKER_LAYER_GZIP), "application/vnd.oci.image.layer.v1.tar+gzip+encrypted");
        assert_eq!(
            decrypted_media_type("application/vnd.oci.image.layer.v1.tar+zstd+encrypted"),
            "application/vnd.oci.image.layer.v1.tar+zstd"
        );
    }

    #[test]
    fn digests_are_checked() {
        assert!(digest_hex(&sha256_digest(b"")).is_ok());
        assert!(digest_hex("sha256:../../etc/passwd").is_err());
        assert!(digest_hex("sha512:00").is_err());
    }

    #[test]
    fn platforms() {
        let arm = Platform::parse("linux/arm64/v8").unwrap();
        assert!(Platform::parse("linux/arm64").unwrap().selects(&arm));
        assert!(!Platform::parse("linux/amd64").unwrap().selects(&arm));
        assert!(Platform::parse("linux").is_none());
        assert_eq!(arm.to_string(), "linux/arm64/v8");
    }

    #[test]
    fn unknown_fields_survive() {
        let value = serde_json::json!({"mediaType": "x", "digest": sha256_digest(b"a"), "size": 1, "urls": ["u"], "annotations": {"b": "2", "a": "1"}});
        let mut d = Descriptor::from_value(value).unwrap();
        d.set_content("y", &sha256_digest(b"b"), 1);
        assert_eq!(d.to_value()["urls"][0], "u");
        assert_eq!(d.annotations().keys().cloned().collect::<Vec<_>>(), ["a", "b"]);
    }
}
