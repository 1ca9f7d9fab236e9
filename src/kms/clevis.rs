//! Clevis: secrets encrypted to "pins" (here `tang`, `tpm2` and `sss`) as compact JWEs that Debian's, Fedora's and
//! RHEL's `clevis decrypt` open, and that cryptadm opens when `clevis encrypt` made them.
//!
//! `clevis encrypt PIN CONFIG` ↔ [`encrypt`], `clevis decrypt` ↔ [`decrypt`]. The configurations are the JSON
//! clevis takes: `tang` `{"url":…,"thp":…,"adv":…}`, `tpm2` `{"pcr_ids":"7",…}` ([`tpm2`]), `sss` `{"t":N,"pins":{"tang":[{…},…],"sss":{…}}}`.
//! Inside `sss`, cryptadm's extension pins `aws-kms`, `vault-transit` and `kmip` (`{"key":REFERENCE}`, [`wrap`])
//! count beside clevis's own: a threshold across every key manager that wraps.
//! Every JWE is compact, its protected header written as jose writes JSON (keys sorted, no spaces), so that the
//! bytes are what clevis itself would print for the same random values.

pub mod sss;
pub mod tpm2;
pub mod wrap;

use super::http::HttpSettings;
use super::tang::{self, TangConfig, Trust};
use crate::crypto::SecretBytes;
use crate::exit::{Classify, ExitStatus};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;
use std::borrow::Cow;

/// The key-reference scheme: `clevis:<compact JWE>` (bootstrap's `passphraseURI`).
pub const SCHEME: &str = "clevis";
/// Largest compact JWE read: an `sss` of many nested pins is a few tens of KiB; more is hostile.
pub const MAX_JWE_LEN: usize = 1 << 20;
/// How deep `sss` pins may nest (clevis has no bound; a bound keeps hostile input from exhausting the stack).
const MAX_DEPTH: usize = 8;

/// How clevis operations reach Tang servers.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// Timeouts, retries and TLS trust of the HTTP client.
    pub http: HttpSettings,
    /// Whether an advertisement no `thp` pins is accepted (`--clevis-trust-adv`, clevis's `-y`).
    pub trust_unpinned: bool,
    /// The TPM of `tpm2` pins (`--tpm2-device`; `/dev/tpmrm0` by default).
    pub tpm2: crate::kms::tpm2::Device,
    /// The key managers of the extension pins (`aws-kms`, `vault-transit`, `kmip`), those the command configured.
    pub key_managers: KeyManagers,
}

/// The clients of the extension pins ([`wrap`]); a pin whose client is absent fails naming the settings it needs.
#[derive(Debug, Clone, Default)]
pub struct KeyManagers {
    /// OpenBao/Vault, for `vault-transit` pins.
    pub vault: Option<std::sync::Arc<crate::kms::vault::Vault>>,
    /// AWS, for `aws-kms` pins.
    pub aws: Option<std::sync::Arc<crate::kms::aws::Aws>>,
    /// A KMIP server, for `kmip` pins.
    pub kmip: Option<std::sync::Arc<crate::kms::kmip::Kmip>>,
}

/// What failed in a clevis operation. Messages hold no secret; URLs are redacted.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The pin configuration is wrong (`--clevis-config`).
    #[error("clevis configuration: {0}")]
    Config(String),
    /// The JWE cannot be read.
    #[error("clevis JWE: {0}")]
    Malformed(String),
    /// Talking to a Tang server failed (unreachable, an unexpected answer).
    #[error("{source}")]
    Tang {
        /// The server's URL (redacted).
        url: String,
        /// What the HTTP layer said.
        #[source]
        source: super::Error,
    },
    /// The advertisement is not a JWS over a JWK set.
    #[error("Tang server {url}: malformed advertisement: {problem}")]
    BadAdvertisement {
        /// The server's URL (redacted).
        url: String,
        /// What is wrong.
        problem: String,
    },
    /// The advertisement's signatures do not verify.
    #[error("Tang server {url}: the advertisement's signature does not verify: {problem}")]
    BadSignature {
        /// The server's URL (redacted).
        url: String,
        /// Which key failed.
        problem: String,
    },
    /// No signing key has the pinned thumbprint.
    #[error("Tang server {url}: no signing key of its advertisement has the trusted thumbprint `{thp}`")]
    ThumbprintMismatch {
        /// The server's URL (redacted).
        url: String,
        /// The thumbprint from the configuration.
        thp: String,
    },
    /// No `thp` pins the advertisement and it was not trusted explicitly.
    #[error("Tang server {url}: the advertisement is not pinned by a `thp` (its signing keys: {})", thumbprints.join(", "))]
    Untrusted {
        /// The server's URL (redacted).
        url: String,
        /// The S256 thumbprints of its signing keys.
        thumbprints: Vec<String>,
    },
    /// The server has no exchange key of that thumbprint (it was deleted, not just rotated).
    #[error("Tang server {url}: has no key `{kid}` any more")]
    UnknownKey {
        /// The server's URL (redacted).
        url: String,
        /// The key's thumbprint.
        kid: String,
    },
    /// Fewer `sss` pins than the threshold recovered their share.
    #[error("sss: {recovered} of the {threshold} pins needed recovered their share; {}", failures.join("; "))]
    Threshold {
        /// `t`.
        threshold: usize,
        /// How many shares were recovered.
        recovered: usize,
        /// Each failed pin and why.
        failures: Vec<String>,
        /// Whether the overall deadline passed while pins were still being asked.
        cut_by_deadline: bool,
    },
    /// The content does not authenticate with the recovered key: altered data or a wrong server answer.
    #[error("the clevis JWE does not decrypt: its data or the key server's answer was altered")]
    Integrity,
    /// A `tpm2` pin's TPM failed or refused.
    #[error("tpm2 pin: {0}")]
    Tpm2(#[from] crate::kms::tpm2::Error),
    /// An extension pin's key manager failed or refused (its message names the key and the server).
    #[error("{source}")]
    KeyManager {
        /// The pin (`aws-kms`, `vault-transit`, `kmip`).
        pin: &'static str,
        /// What the key manager's client said.
        #[source]
        source: super::Error,
    },
    /// An extension pin's key manager is not configured in this command.
    #[error("{pin} pin: no {pin} key manager is configured")]
    NoKeyManager {
        /// The pin.
        pin: &'static str,
        /// Which settings it needs.
        hint: &'static str,
    },
}

impl Error {
    pub(crate) fn tang(url: &str, source: super::Error) -> Self {
        Self::Tang { url: crate::redact::url(url), source }
    }
}

impl Classify for Error {
    fn status(&self) -> ExitStatus {
        match self {
            Self::Config(_) | Self::Malformed(_) | Self::BadAdvertisement { .. } => ExitStatus::InvalidInput,
            Self::Tang { source, .. } => source.status(),
            Self::BadSignature { .. } | Self::Integrity => ExitStatus::DataLoss,
            Self::ThumbprintMismatch { .. } | Self::Untrusted { .. } => ExitStatus::Unauthenticated,
            Self::UnknownKey { .. } => ExitStatus::NotFound,
            Self::Threshold { cut_by_deadline: true, .. } => ExitStatus::DeadlineExceeded,
            Self::Threshold { .. } => ExitStatus::Failure,
            Self::Tpm2(source) => source.status(),
            Self::KeyManager { source, .. } => source.status(),
            Self::NoKeyManager { .. } => ExitStatus::InvalidInput,
        }
    }

    fn hint(&self) -> Option<Cow<'_, str>> {
        match self {
            Self::Tang { source, .. } => match source {
                // (One with a hint of its own is the deadline's.)
                super::Error::Unavailable { hint: None, .. } => {
                    Some("check that the Tang server is up and reachable from here (its URL, a firewall)".into())
                }
                other => other.hint(),
            },
            Self::Untrusted { .. } => Some(
                "compare a thumbprint with `jose jwk thp -i KEY.jwk` in the server's key directory and add \
                 \"thp\":\"…\" to --clevis-config, or trust the advertisement as fetched with --clevis-trust-adv"
                    .into(),
            ),
            Self::ThumbprintMismatch { .. } => Some(
                "the server is not the one you pinned, or its keys were rotated: check the URL, and the thumbprint \
                 with `jose jwk thp` in the server's key directory"
                    .into(),
            ),
            Self::BadSignature { .. } => Some(
                "something between you and the server altered the advertisement, or it is not a Tang server".into(),
            ),
            Self::UnknownKey { .. } => {
                Some("the server's key was deleted: restore it (tangd keeps rotated keys as `.NAME.jwk`)".into())
            }
            Self::Threshold { cut_by_deadline: true, .. } => Some(crate::deadline::HINT.into()),
            Self::Threshold { .. } => Some("bring enough of the named servers back, then retry".into()),
            Self::Tpm2(source) => source.hint(),
            Self::KeyManager { source, .. } => source.hint(),
            Self::NoKeyManager { hint, .. } => Some((*hint).into()),
            _ => None,
        }
    }
}

/// Unpadded base64url, as JOSE writes it.
pub fn b64_encode(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// Base64url, with or without padding; `None` for anything else.
pub fn b64_decode(text: &str) -> Option<Vec<u8>> {
    URL_SAFE_NO_PAD.decode(text.trim_end_matches('=')).ok()
}

/// JSON as jansson writes it with `JSON_SORT_KEYS | JSON_COMPACT` (how jose and clevis write every header):
/// object keys sorted bytewise, no whitespace.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            members.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            out.push('{');
            for (i, (name, member)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(name.clone()).to_string());
                out.push(':');
                write_canonical(member, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// A compact JWE with an empty encrypted key (`dir` and direct `ECDH-ES`): `HEADER..IV.CIPHERTEXT.TAG`.
pub(crate) fn compact_encrypt(header: &Value, cek: &[u8], plaintext: &[u8]) -> String {
    let protected = b64_encode(canonical_json(header).as_bytes());
    let cek: &[u8; 32] = cek.try_into().expect("A256GCM keys are 32 bytes");
    let iv = crate::crypto::random::bytes::<12>();
    let (ciphertext, tag) = crate::crypto::jose::a256gcm_encrypt(cek, &iv, protected.as_bytes(), plaintext);
    format!("{protected}..{}.{}.{}", b64_encode(&iv), b64_encode(&ciphertext), b64_encode(&tag))
}

/// A parsed compact JWE.
#[derive(Debug)]
pub struct Jwe {
    /// The protected header's base64url text (the AAD).
    protected: String,
    /// The protected header.
    pub header: Value,
    iv: Vec<u8>,
    ciphertext: Vec<u8>,
    tag: Vec<u8>,
}

impl Jwe {
    /// Parses a compact JWE (surrounding whitespace ignored). Untrusted input: bounded, never panics.
    pub fn parse(text: &str) -> Result<Self, Error> {
        let bad = |problem: &str| Error::Malformed(problem.into());
        let text = text.trim();
        if text.len() > MAX_JWE_LEN {
            return Err(bad("longer than 1 MiB"));
        }
        let parts: Vec<&str> = text.split('.').collect();
        let [protected, encrypted_key, iv, ciphertext, tag] = parts[..] else {
            return Err(bad("not a compact JWE (five base64url parts separated by `.`)"));
        };
        if !encrypted_key.is_empty() {
            return Err(bad("clevis pins use no encrypted key (`dir`, direct ECDH-ES)"));
        }
        let decode = |part: &str, name: &str| b64_decode(part).ok_or_else(|| bad(&format!("{name} is not base64url")));
        let header: Value = serde_json::from_slice(&decode(protected, "the protected header")?)
            .map_err(|_| bad("the protected header is not JSON"))?;
        if !header.is_object() {
            return Err(bad("the protected header is not a JSON object"));
        }
        let (iv, ciphertext, tag) =
            (decode(iv, "the IV")?, decode(ciphertext, "the ciphertext")?, decode(tag, "the tag")?);
        if iv.len() != 12 || tag.len() != 16 {
            return Err(bad("the IV or tag length is not A256GCM's"));
        }
        if header.get("enc").and_then(Value::as_str) != Some(tang::ENC) {
            return Err(bad("expected `\"enc\":\"A256GCM\"`"));
        }
        Ok(Self { protected: protected.to_owned(), header, iv, ciphertext, tag })
    }

    /// `clevis.pin`.
    pub fn pin(&self) -> Option<&str> {
        self.header.pointer("/clevis/pin").and_then(Value::as_str)
    }

    fn open(&self, cek: &[u8]) -> Result<SecretBytes, Error> {
        crate::crypto::jose::a256gcm_decrypt(cek, &self.iv, self.protected.as_bytes(), &self.ciphertext, &self.tag)
            .ok_or(Error::Integrity)
    }
}

/// A pin and its configuration, as `clevis encrypt PIN CONFIG` takes them.
#[derive(Clone, Debug)]
pub enum Pin {
    /// One Tang server.
    Tang(TangConfig),
    /// This machine's TPM.
    Tpm2(tpm2::Tpm2Config),
    /// A key manager's key (an extension pin: only inside `sss`).
    Wrapped(wrap::WrapConfig),
    /// Shamir's secret sharing: `threshold` of `pins`.
    Sss {
        /// `t`.
        threshold: usize,
        /// The pins in the order clevis encrypts them (per pin name, the configs in order).
        pins: Vec<Pin>,
    },
}

impl Pin {
    /// Parses `--clevis-pin NAME --clevis-config JSON`.
    pub fn parse(name: &str, config: &str) -> Result<Self, Error> {
        let config: Value = serde_json::from_str(config).map_err(|e| Error::Config(format!("not JSON: {e}")))?;
        Self::from_json(name, &config, 0)
    }

    fn from_json(name: &str, config: &Value, depth: usize) -> Result<Self, Error> {
        if depth > MAX_DEPTH {
            return Err(Error::Config(format!("sss pins nested more than {MAX_DEPTH} deep")));
        }
        match name {
            "tang" => Ok(Self::Tang(TangConfig::from_json(config)?)),
            "tpm2" => Ok(Self::Tpm2(tpm2::Tpm2Config::from_json(config)?)),
            "sss" => sss::config_from_json(config, depth),
            other => match wrap::Manager::from_name(other) {
                Some(manager) if depth > 0 => Ok(Self::Wrapped(wrap::WrapConfig::from_json(manager, config)?)),
                Some(_) => Err(Error::Config(format!(
                    "pin `{other}` is one of cryptadm's extension pins, which count only inside `sss` (alone, use \
                     `bootstrap seal --provider {other}`)"
                ))),
                None => Err(Error::Config(format!(
                    "pin `{other}` is not supported (cryptadm implements `tang`, `tpm2` and `sss`, and inside `sss` \
                     `aws-kms`, `vault-transit` and `kmip`)"
                ))),
            },
        }
    }

    /// A one-line description, e.g. `tang http://tang.example` or `sss 2 of [tang …, tang …]`.
    pub fn describe(&self) -> String {
        match self {
            Self::Tang(config) => format!("tang {}", crate::redact::url(&config.url)),
            Self::Tpm2(config) => config.describe(),
            Self::Wrapped(config) => config.describe(),
            Self::Sss { threshold, pins } => {
                let pins: Vec<String> = pins.iter().map(Self::describe).collect();
                format!("sss {threshold} of [{}]", pins.join(", "))
            }
        }
    }
}

/// Encrypts `plaintext` to `pin` and returns the compact JWE `clevis encrypt` would print.
pub fn encrypt(pin: &Pin, plaintext: &[u8], settings: &Settings) -> Result<String, Error> {
    match pin {
        Pin::Tang(config) => {
            let trust = if settings.trust_unpinned { Trust::Any } else { Trust::PinnedOnly };
            tang::encrypt(config, trust, &settings.http, plaintext)
        }
        Pin::Tpm2(config) => tpm2::encrypt(config, &settings.tpm2, plaintext),
        Pin::Wrapped(config) => wrap::encrypt(config, settings, plaintext),
        Pin::Sss { threshold, pins } => sss::encrypt(*threshold, pins, plaintext, settings),
    }
}

/// Decrypts a compact JWE that `clevis encrypt tang|tpm2|sss` (or [`encrypt`]) wrote, asking its Tang servers
/// and the TPM.
pub fn decrypt(jwe: &str, settings: &Settings) -> Result<SecretBytes, Error> {
    decrypt_at(&Jwe::parse(jwe)?, settings, 0)
}

fn decrypt_at(jwe: &Jwe, settings: &Settings, depth: usize) -> Result<SecretBytes, Error> {
    match jwe.pin() {
        Some("tang") => {
            let header = tang::TangHeader::parse(&jwe.header)?;
            let cek = tang::recover_key(&header, &settings.http)?;
            jwe.open(&cek)
        }
        Some("tpm2") => tpm2::decrypt(jwe, &settings.tpm2),
        Some("sss") if depth < MAX_DEPTH => {
            let cek = sss::recover_key(&jwe.header, settings, depth)?;
            jwe.open(&cek)
        }
        Some("sss") => Err(Error::Malformed(format!("sss pins nested more than {MAX_DEPTH} deep"))),
        Some(other) => match wrap::Manager::from_name(other) {
            Some(manager) => wrap::decrypt(manager, jwe, settings),
            None => Err(Error::Malformed(format!(
                "pin `{}` is not supported (cryptadm opens `tang`, `tpm2`, `sss`, `aws-kms`, `vault-transit` and \
                 `kmip`)",
                crate::redact::server_text(other.as_bytes(), 32)
            ))),
        },
        None => Err(Error::Malformed("the protected header has no `clevis.pin`".into())),
    }
}

/// Describes a JWE's binding without contacting any server (for `inspect`): `tang URL` or `sss T of [...]`.
pub fn describe(jwe: &str) -> Result<String, Error> {
    describe_at(&Jwe::parse(jwe)?, 0)
}

fn describe_at(jwe: &Jwe, depth: usize) -> Result<String, Error> {
    match jwe.pin() {
        Some("tang") => {
            let url = jwe.header.pointer("/clevis/tang/url").and_then(Value::as_str).unwrap_or("?");
            Ok(format!("tang {}", crate::redact::url(url)))
        }
        Some("tpm2") => Ok(tpm2::Tpm2Header::parse(&jwe.header)?.describe()),
        Some("sss") if depth < MAX_DEPTH => {
            let (threshold, children) = sss::header_parts(&jwe.header)?;
            let children: Result<Vec<String>, Error> =
                children.iter().map(|child| describe_at(&Jwe::parse(child)?, depth + 1)).collect();
            Ok(format!("sss {threshold} of [{}]", children?.join(", ")))
        }
        Some(other) if wrap::Manager::from_name(other).is_some() => {
            let manager = wrap::Manager::from_name(other).expect("checked");
            Ok(wrap::WrapHeader::parse(manager, &jwe.header)?.config.describe())
        }
        other => Err(Error::Malformed(format!(
            "unsupported pin {:?}",
            other.map(|name| crate::redact::server_text(name.as_bytes(), 32))
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_json_sorts_and_compacts() {
        let value = json!({"b": [1, {"z": "/", "a": null}], "a": "é\"", "A": true});
        assert_eq!(canonical_json(&value), r#"{"A":true,"a":"é\"","b":[1,{"a":null,"z":"/"}]}"#);
    }

    #[test]
    fn compact_round_trip_and_tamper() {
        let header = json!({"alg": "dir", "enc": "A256GCM", "clevis": {"pin": "x"}});
        let cek = [9u8; 32];
        let jwe = compact_encrypt(&header, &cek, b"secret");
        assert!(jwe.starts_with("eyJhbGciOiJkaXIiLCJjbGV2aXMiOnsicGluIjoieCJ9LCJlbmMiOiJBMjU2R0NNIn0.."), "{jwe}");
        let parsed = Jwe::parse(&format!("{jwe}\n")).unwrap();
        assert_eq!(&parsed.open(&cek).unwrap()[..], b"secret");
        assert!(matches!(parsed.open(&[8u8; 32]), Err(Error::Integrity)));
        for bad in ["", "a.b.c", "....", &jwe.replacen("..", ".AA.", 1), &format!("{jwe}.x")] {
            assert!(matches!(Jwe::parse(bad), Err(Error::Malformed(_))), "{bad}");
        }
    }

    #[test]
    fn pins_parse_like_clevis() {
        let pin = Pin::parse("sss", r#"{"t":2,"pins":{"tang":[{"url":"http://a"},{"url":"http://b"}],"sss":{"pins":{"tang":{"url":"http://c"}}}}}"#).unwrap();
        // In the configuration's order, as clevis (jansson keeps it) encrypts them.
        assert_eq!(pin.describe(), "sss 2 of [tang http://a, tang http://b, sss 1 of [tang http://c]]");
        for (name, config) in [
            ("sss", r#"{"t":3,"pins":{"tang":[{"url":"http://a"},{"url":"http://b"}]}}"#),
            ("sss", r#"{"t":0,"pins":{"tang":{"url":"http://a"}}}"#),
            ("sss", r#"{"t":1}"#),
            ("tpm2", r#"{"pcr_ids":"x"}"#),
            ("tang", "not json"),
        ] {
            assert!(matches!(Pin::parse(name, config), Err(Error::Config(_))), "{config}");
        }
    }
}
