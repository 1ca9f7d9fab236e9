//! The LUKS2 JSON metadata (docs/formats.md) as serde types.
//!
//! Every object keeps the fields we do not model in a flattened `extra` map, and tokens are kept whole, so a
//! volume made by cryptsetup (or with third-party tokens) survives our rewrites. 64-bit quantities are decimal
//! strings on disk ([`U64Str`]); object ids are canonical decimal strings ([`Id`]). [`Metadata::validate`]
//! enforces the checklist of docs/formats.md on what we read and on what we write.

use super::super::{Error, Result};
use base64::Engine;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Limits from cryptsetup's luks2.h.
pub const MAX_KEYSLOTS: u32 = 32;
/// Limit on tokens.
pub const MAX_TOKENS: u32 = 32;
/// Limit on segments.
pub const MAX_SEGMENTS: u32 = 32;
/// Limit on digests.
pub const MAX_DIGESTS: u32 = 8;
/// Largest keyslots area cryptsetup accepts.
pub const MAX_KEYSLOTS_SIZE: u64 = 128 << 20;

/// An object id: a decimal string (`"0"`, `"12"`) on disk, ordered numerically here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Id(pub u32);

impl Serialize for Id {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.0.to_string())
    }
}

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        // cryptsetup's `numbered` check: digits only; we also refuse leading zeros so ids compare as text.
        let canonical =
            !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) && (text == "0" || !text.starts_with('0'));
        match text.parse::<u32>() {
            Ok(n) if canonical => Ok(Id(n)),
            _ => Err(serde::de::Error::custom(format!("id `{text}` is not a decimal number"))),
        }
    }
}

/// A 64-bit quantity written as a decimal string (cryptsetup rejects a JSON number here).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct U64Str(pub u64);

impl Serialize for U64Str {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.0.to_string())
    }
}

impl<'de> Deserialize<'de> for U64Str {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(serde::de::Error::custom(format!("`{text}` is not a decimal uint64")));
        }
        text.parse().map(U64Str).map_err(|_| serde::de::Error::custom(format!("`{text}` overflows uint64")))
    }
}

/// Binary data as standard base64 with padding.
#[derive(Clone, PartialEq, Eq)]
pub struct B64(pub Vec<u8>);

impl std::fmt::Debug for B64 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "B64({} bytes)", self.0.len())
    }
}

impl Serialize for B64 {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(&self.0))
    }
}

impl<'de> Deserialize<'de> for B64 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        base64::engine::general_purpose::STANDARD
            .decode(text.as_bytes())
            .map(B64)
            .map_err(|e| serde::de::Error::custom(format!("bad base64: {e}")))
    }
}

/// Segment size: `"dynamic"` (up to the end of the device) or a byte count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SegmentSize {
    /// To the end of the device.
    Dynamic,
    /// This many bytes.
    Bytes(u64),
}

impl Serialize for SegmentSize {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            SegmentSize::Dynamic => s.serialize_str("dynamic"),
            SegmentSize::Bytes(n) => U64Str(*n).serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for SegmentSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        if text == "dynamic" {
            return Ok(SegmentSize::Dynamic);
        }
        let n = U64Str::deserialize(serde::de::value::StrDeserializer::<D::Error>::new(&text))?;
        Ok(SegmentSize::Bytes(n.0))
    }
}

/// The whole JSON area.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Metadata {
    /// Keyslots by id.
    pub keyslots: BTreeMap<Id, Keyslot>,
    /// Tokens by id, kept as JSON (their content belongs to whoever wrote them).
    pub tokens: BTreeMap<Id, Token>,
    /// Segments by id.
    pub segments: BTreeMap<Id, Segment>,
    /// Digests by id.
    pub digests: BTreeMap<Id, Digest>,
    /// Area sizes and flags.
    pub config: Config,
    /// Fields a later format version may add.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A keyslot object.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Keyslot {
    /// `luks2` (or `reencrypt` during reencryption).
    #[serde(rename = "type")]
    pub kind: String,
    /// Bytes of the stored (volume) key.
    pub key_size: u32,
    /// The anti-forensic splitter (absent for `reencrypt` slots).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub af: Option<Af>,
    /// Where the material lives.
    pub area: Area,
    /// The KDF (absent for `reencrypt` slots).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kdf: Option<KdfJson>,
    /// 0 ignore, 1 normal, 2 prefer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<i64>,
    /// Fields we do not model.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A keyslot's AF settings.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Af {
    /// `luks1` (the only AF type).
    #[serde(rename = "type")]
    pub kind: String,
    /// 4000.
    pub stripes: u32,
    /// The diffuse hash.
    pub hash: String,
    /// Fields we do not model.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A keyslot's area.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Area {
    /// `raw` for normal keyslots.
    #[serde(rename = "type")]
    pub kind: String,
    /// Absolute byte offset.
    pub offset: U64Str,
    /// Allocated bytes.
    pub size: U64Str,
    /// Cipher of the material (raw areas).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encryption: Option<String>,
    /// Bytes of the material cipher key (raw areas).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_size: Option<u32>,
    /// Fields we do not model (reencryption resilience parameters).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A keyslot's KDF. Extra keys are dropped on rewrite, as cryptsetup's repair pass does.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum KdfJson {
    /// PBKDF2.
    #[serde(rename = "pbkdf2")]
    Pbkdf2 {
        /// PRF hash.
        hash: String,
        /// Iterations.
        iterations: u32,
        /// 32-byte salt.
        salt: B64,
    },
    /// Argon2i.
    #[serde(rename = "argon2i")]
    Argon2i {
        /// t_cost.
        time: u32,
        /// m_cost in KiB.
        memory: u32,
        /// Lanes.
        cpus: u32,
        /// 32-byte salt.
        salt: B64,
    },
    /// Argon2id.
    #[serde(rename = "argon2id")]
    Argon2id {
        /// t_cost.
        time: u32,
        /// m_cost in KiB.
        memory: u32,
        /// Lanes.
        cpus: u32,
        /// 32-byte salt.
        salt: B64,
    },
}

impl KdfJson {
    /// The salt.
    pub fn salt(&self) -> &[u8] {
        match self {
            KdfJson::Pbkdf2 { salt, .. } | KdfJson::Argon2i { salt, .. } | KdfJson::Argon2id { salt, .. } => &salt.0,
        }
    }
}

/// A token: `type`, the keyslots it refers to, and anything else verbatim.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Token {
    /// Token type (`luks2-keyring`, vendor types).
    #[serde(rename = "type")]
    pub kind: String,
    /// Keyslots it unlocks.
    pub keyslots: Vec<Id>,
    /// Everything else.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A data segment.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Segment {
    /// `crypt` (or `linear` during reencryption).
    #[serde(rename = "type")]
    pub kind: String,
    /// Byte offset of the data.
    pub offset: U64Str,
    /// Length.
    pub size: SegmentSize,
    /// IV of the first sector, in 512-byte units.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iv_tweak: Option<U64Str>,
    /// dm-crypt cipher spec.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encryption: Option<String>,
    /// Encryption sector size.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sector_size: Option<u32>,
    /// dm-integrity settings (we refuse to decrypt such segments, but keep them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub integrity: Option<Value>,
    /// Segment flags.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flags: Option<Vec<String>>,
    /// Fields we do not model.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A volume-key digest.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Digest {
    /// `pbkdf2`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Keyslots whose key this digest checks.
    pub keyslots: Vec<Id>,
    /// Segments this key decrypts.
    pub segments: Vec<Id>,
    /// PBKDF2 hash.
    pub hash: String,
    /// PBKDF2 iterations.
    pub iterations: u32,
    /// Salt.
    pub salt: B64,
    /// The digest (32 bytes for sha256; 20 on headers converted from LUKS1).
    pub digest: B64,
    /// Fields we do not model.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The `config` object.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Config {
    /// Must equal hdr_size − 4096.
    pub json_size: U64Str,
    /// Bytes of the keyslots area.
    pub keyslots_size: U64Str,
    /// Activation flags.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flags: Option<Vec<String>>,
    /// `requirements.mandatory`: features a reader must know.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requirements: Option<Value>,
    /// Fields we do not model.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Config {
    /// The mandatory requirements (empty when none).
    pub fn mandatory_requirements(&self) -> Vec<String> {
        self.requirements
            .as_ref()
            .and_then(|r| r.get("mandatory"))
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
            .unwrap_or_default()
    }
}

impl Metadata {
    /// Parses the JSON text of a JSON area (without the NUL padding).
    pub fn parse(text: &[u8]) -> Result<Metadata> {
        serde_json::from_slice(text).map_err(|e| Error::corrupt(format!("JSON metadata: {e}")))
    }

    /// Compact JSON, as cryptsetup writes it.
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("metadata serializes")
    }

    /// Checks the rules cryptsetup enforces (docs/formats.md). `hdr_size` is the binary header's, `device_size` the
    /// device's length when known (areas must lie inside it only when we write).
    pub fn validate(&self, hdr_size: u64) -> Result<()> {
        let fail = |what: String| Err(Error::corrupt(what));
        if self.config.json_size.0 != hdr_size - 4096 {
            return fail(format!("config.json_size {} does not match hdr_size {hdr_size}", self.config.json_size.0));
        }
        let keyslots_size = self.config.keyslots_size.0;
        if !keyslots_size.is_multiple_of(4096) || keyslots_size > MAX_KEYSLOTS_SIZE {
            return fail(format!("config.keyslots_size {keyslots_size} is not 4096-aligned or exceeds 128 MiB"));
        }
        let requirements = self.config.mandatory_requirements();
        if requirements.iter().filter(|r| r.starts_with("online-reencrypt")).count() > 1 {
            return fail("more than one online-reencrypt requirement".into());
        }
        self.validate_counts()?;
        self.validate_keyslot_areas(hdr_size, keyslots_size)?;
        self.validate_segments()?;
        self.validate_references()
    }

    fn validate_counts(&self) -> Result<()> {
        let over = |n: usize, max: u32, what: &str| -> Result<()> {
            if n > max as usize { Err(Error::corrupt(format!("more than {max} {what}"))) } else { Ok(()) }
        };
        over(self.keyslots.len(), MAX_KEYSLOTS, "keyslots")?;
        over(self.tokens.len(), MAX_TOKENS, "tokens")?;
        over(self.segments.len(), MAX_SEGMENTS, "segments")?;
        over(self.digests.len(), MAX_DIGESTS, "digests")?;
        if let Some(id) = self.keyslots.keys().find(|id| id.0 >= MAX_KEYSLOTS) {
            return Err(Error::corrupt(format!("keyslot id {} out of range", id.0)));
        }
        Ok(())
    }

    fn validate_keyslot_areas(&self, hdr_size: u64, keyslots_size: u64) -> Result<()> {
        let start = 2 * hdr_size;
        let end = start + keyslots_size;
        let mut areas: Vec<(u64, u64, u32)> = Vec::new();
        for (id, slot) in &self.keyslots {
            let (offset, size) = (slot.area.offset.0, slot.area.size.0);
            if size == 0 || offset < start || offset.checked_add(size).is_none_or(|e| e > end) {
                return Err(Error::corrupt(format!(
                    "keyslot {} area [{offset}, +{size}) is outside the keyslots area",
                    id.0
                )));
            }
            if let Some((_, _, other)) = areas.iter().find(|(o, s, _)| offset < o + s && *o < offset + size) {
                return Err(Error::corrupt(format!("keyslot {} area overlaps keyslot {other}", id.0)));
            }
            areas.push((offset, size, id.0));
            if slot.kind == "luks2" {
                validate_luks2_keyslot(id.0, slot)?;
            }
        }
        Ok(())
    }

    fn validate_segments(&self) -> Result<()> {
        if self.segments.is_empty() {
            return Err(Error::corrupt("no segments"));
        }
        for (id, seg) in &self.segments {
            if !seg.offset.0.is_multiple_of(512) {
                return Err(Error::corrupt(format!("segment {} offset is not 512-aligned", id.0)));
            }
            let sector = seg.sector_size.unwrap_or(512);
            if seg.kind == "crypt"
                && (sector == 0 || !sector.is_multiple_of(512) || sector > 4096 || !sector.is_power_of_two())
            {
                return Err(Error::corrupt(format!("segment {} sector_size {sector} is invalid", id.0)));
            }
            if let SegmentSize::Bytes(n) = seg.size
                && (!n.is_multiple_of(512) || !n.is_multiple_of(u64::from(sector)))
            {
                return Err(Error::corrupt(format!("segment {} size is not a multiple of its sector size", id.0)));
            }
            if seg.kind == "crypt" && !self.digests.values().any(|d| d.segments.contains(id)) {
                return Err(Error::corrupt(format!("crypt segment {} has no digest", id.0)));
            }
        }
        Ok(())
    }

    fn validate_references(&self) -> Result<()> {
        for (id, digest) in &self.digests {
            if let Some(k) = digest.keyslots.iter().find(|k| !self.keyslots.contains_key(k)) {
                return Err(Error::corrupt(format!("digest {} names missing keyslot {}", id.0, k.0)));
            }
            if let Some(s) = digest.segments.iter().find(|s| !self.segments.contains_key(s)) {
                return Err(Error::corrupt(format!("digest {} names missing segment {}", id.0, s.0)));
            }
        }
        for (id, token) in &self.tokens {
            if let Some(k) = token.keyslots.iter().find(|k| !self.keyslots.contains_key(k)) {
                return Err(Error::corrupt(format!("token {} names missing keyslot {}", id.0, k.0)));
            }
        }
        Ok(())
    }

    /// The digest that lists keyslot `id`.
    pub fn digest_of_keyslot(&self, id: Id) -> Option<(Id, &Digest)> {
        self.digests.iter().find(|(_, d)| d.keyslots.contains(&id)).map(|(i, d)| (*i, d))
    }

    /// The digest of the data segment(s): the one that lists segment 0, else the first.
    pub fn segment_digest(&self) -> Option<(Id, &Digest)> {
        let first_segment = self.segments.keys().next().copied()?;
        self.digests.iter().find(|(_, d)| d.segments.contains(&first_segment)).map(|(i, d)| (*i, d))
    }
}

fn validate_luks2_keyslot(id: u32, slot: &Keyslot) -> Result<()> {
    let fail = |what: &str| Err(Error::corrupt(format!("keyslot {id}: {what}")));
    let Some(af) = &slot.af else { return fail("no af object") };
    // `af.stripes` must be a number, and is otherwise not used: see `volume::luks2_material`.
    if af.kind != "luks1" {
        return fail("af must be type luks1");
    }
    if slot.kdf.is_none() {
        return fail("no kdf object");
    }
    if slot.area.kind != "raw" || slot.area.encryption.is_none() || slot.area.key_size.is_none() {
        return fail("area must be raw with encryption and key_size");
    }
    if slot.key_size == 0 {
        return fail("key_size is 0");
    }
    let material = u64::from(slot.key_size) * u64::from(crate::luks::af::STRIPES);
    if material.div_ceil(512) * 512 > slot.area.size.0 {
        return fail("area is smaller than the key material");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// cryptsetup 2.6.1 output with one argon2id keyslot and a third-party token (docs/formats.md).
    pub(crate) const SAMPLE: &str = r#"{"keyslots":{"0":{"type":"luks2","key_size":64,"af":{"type":"luks1","stripes":4000,"hash":"sha256"},"area":{"type":"raw","offset":"32768","size":"258048","encryption":"aes-xts-plain64","key_size":64},"kdf":{"type":"argon2id","time":4,"memory":32768,"cpus":2,"salt":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}}},"tokens":{"0":{"type":"cryptadm-kms","keyslots":["0"],"kms_key_id":"abc","nested":{"a":[1,2]}}},"segments":{"0":{"type":"crypt","offset":"16777216","size":"dynamic","iv_tweak":"0","encryption":"aes-xts-plain64","sector_size":4096}},"digests":{"0":{"type":"pbkdf2","keyslots":["0"],"segments":["0"],"hash":"sha256","iterations":1000,"salt":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=","digest":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}},"config":{"json_size":"12288","keyslots_size":"16744448"}}"#;

    #[test]
    fn cryptsetup_json_round_trips_byte_for_byte() {
        let meta = Metadata::parse(SAMPLE.as_bytes()).unwrap();
        meta.validate(16384).unwrap();
        assert_eq!(String::from_utf8(meta.to_json()).unwrap(), SAMPLE);
    }

    #[test]
    fn numbers_where_strings_belong_are_refused() {
        let bad = SAMPLE.replace(r#""offset":"32768""#, r#""offset":32768"#);
        assert!(Metadata::parse(bad.as_bytes()).is_err());
        let bad = SAMPLE.replace(r#""key_size":64,"af""#, r#""key_size":"64","af""#);
        assert!(Metadata::parse(bad.as_bytes()).is_err());
        let bad = SAMPLE.replace(r#"{"0":{"type":"luks2""#, r#"{"x":{"type":"luks2""#);
        assert!(Metadata::parse(bad.as_bytes()).is_err());
    }

    #[test]
    fn validation_catches_the_checklist() {
        let check = |from: &str, to: &str| {
            let meta = Metadata::parse(SAMPLE.replace(from, to).as_bytes()).unwrap();
            meta.validate(16384).unwrap_err()
        };
        check(r#""offset":"32768""#, r#""offset":"4096""#);
        check(r#""json_size":"12288""#, r#""json_size":"4096""#);
        check(r#""keyslots_size":"16744448""#, r#""keyslots_size":"1000""#);
        check(r#""offset":"16777216""#, r#""offset":"16777217""#);
        check(r#""sector_size":4096"#, r#""sector_size":0"#);
        check(r#""keyslots":["0"],"segments":["0"]"#, r#""keyslots":["0"],"segments":["1"]"#);
        check(r#""type":"cryptadm-kms","keyslots":["0"]"#, r#""type":"cryptadm-kms","keyslots":["3"]"#);
    }
}
