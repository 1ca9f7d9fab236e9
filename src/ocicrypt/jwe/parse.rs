//! Reading a JWE in any of its three serializations (RFC 7516 §7): general JSON (`recipients`), flattened JSON
//! (one recipient at top level) and compact (five dot-separated parts).
//!
//! Everything that depends only on the JWE is checked here, before any key is tried, so that whether a JWE is
//! "malformed" never depends on the keys given: a malformed JWE is an error, a well-formed one is either opened
//! or fits no key.

use super::MAX_JWE_LEN;
use super::content::ContentAlgorithm;
use super::key_mgmt::KeyAlgorithm;
use crate::crypto::keys::{Curve, PublicKey};
use base64::Engine;
use base64::engine::DecodePaddingMode;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use serde::Deserialize;
use serde_json::{Map, Value};

/// base64url; `=` padding is tolerated (go-jose strips it before decoding some members).
const BASE64URL: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::URL_SAFE,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// A JWE checked for structure, with its binary members decoded.
pub(super) struct Jwe {
    pub enc: ContentAlgorithm,
    /// The plaintext was DEFLATE-compressed before encryption (`"zip":"DEF"`).
    pub deflated: bool,
    /// The additional authenticated data: the protected header's base64url text, then `.` and `aad` if any.
    pub aad: Vec<u8>,
    pub iv: Vec<u8>,
    pub ciphertext: Vec<u8>,
    pub tag: Vec<u8>,
    /// The recipients whose `alg` is supported, in order.
    pub recipients: Vec<Recipient>,
}

/// One recipient with a supported key-management algorithm.
pub(super) struct Recipient {
    pub alg: KeyAlgorithm,
    pub encrypted_key: Vec<u8>,
    pub epk: Option<PublicKey>,
    pub apu: Vec<u8>,
    pub apv: Vec<u8>,
}

/// The JSON serializations' members. Unknown members are ignored; a duplicated known member is an error.
#[derive(Deserialize)]
struct JsonJwe {
    protected: Option<String>,
    unprotected: Option<Map<String, Value>>,
    header: Option<Map<String, Value>>,
    recipients: Option<Vec<JsonRecipient>>,
    aad: Option<String>,
    encrypted_key: Option<String>,
    iv: Option<String>,
    ciphertext: Option<String>,
    tag: Option<String>,
}

#[derive(Deserialize)]
struct JsonRecipient {
    header: Option<Map<String, Value>>,
    encrypted_key: Option<String>,
}

/// The parts shared by all serializations before the headers are interpreted.
struct Parts {
    protected: Map<String, Value>,
    unprotected: Map<String, Value>,
    /// Each recipient's own header and encrypted key.
    recipients: Vec<(Map<String, Value>, Vec<u8>)>,
    aad: Vec<u8>,
    iv: Vec<u8>,
    ciphertext: Vec<u8>,
    tag: Vec<u8>,
}

/// Parses and checks a JWE. Errors are messages for `Error::MalformedWrappedKey`.
pub(super) fn parse(bytes: &[u8]) -> Result<Jwe, String> {
    if bytes.len() > MAX_JWE_LEN {
        return Err(format!("larger than {} MiB", MAX_JWE_LEN >> 20));
    }
    let text = std::str::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_owned())?.trim();
    let parts = if text.starts_with('{') { json_parts(text)? } else { compact_parts(text)? };
    interpret(parts)
}

fn json_parts(text: &str) -> Result<Parts, String> {
    let jwe: JsonJwe = serde_json::from_str(text).map_err(|e| format!("not a JWE JSON serialization: {e}"))?;
    let protected_b64 = jwe.protected.unwrap_or_default();
    let mut aad = protected_b64.clone().into_bytes();
    if let Some(extra) = &jwe.aad {
        // RFC 7516 §5.1 step 14: ASCII(protected) ‖ '.' ‖ ASCII(aad), aad as it appears (base64url).
        decode("aad", extra)?;
        aad.push(b'.');
        aad.extend_from_slice(extra.as_bytes());
    }
    let recipients = match jwe.recipients {
        // go-jose's general form also carries the first recipient's key at top level; readers ignore it.
        Some(list) if list.is_empty() => return Err("`recipients` is empty".into()),
        Some(list) => list
            .into_iter()
            .enumerate()
            .map(|(i, r)| {
                Ok((
                    r.header.unwrap_or_default(),
                    required(&format!("recipients[{i}].encrypted_key"), r.encrypted_key)?,
                ))
            })
            .collect::<Result<_, String>>()?,
        None => vec![(jwe.header.unwrap_or_default(), required("encrypted_key", jwe.encrypted_key)?)],
    };
    Ok(Parts {
        protected: protected_header(&protected_b64)?,
        unprotected: jwe.unprotected.unwrap_or_default(),
        recipients,
        aad,
        iv: required("iv", jwe.iv)?,
        ciphertext: required("ciphertext", jwe.ciphertext)?,
        tag: required("tag", jwe.tag)?,
    })
}

fn compact_parts(text: &str) -> Result<Parts, String> {
    let fields: Vec<&str> = text.split('.').collect();
    let [protected, encrypted_key, iv, ciphertext, tag] = fields[..] else {
        return Err("neither JSON nor a compact serialization (five base64url parts separated by dots)".into());
    };
    Ok(Parts {
        protected: protected_header(protected)?,
        unprotected: Map::new(),
        recipients: vec![(Map::new(), decode("encrypted_key", encrypted_key)?)],
        aad: protected.as_bytes().to_vec(),
        iv: decode("iv", iv)?,
        ciphertext: decode("ciphertext", ciphertext)?,
        tag: decode("tag", tag)?,
    })
}

fn required(name: &str, value: Option<String>) -> Result<Vec<u8>, String> {
    decode(name, value.as_deref().ok_or_else(|| format!("no `{name}` member"))?)
}

fn decode(name: &str, text: &str) -> Result<Vec<u8>, String> {
    BASE64URL.decode(text).map_err(|e| format!("`{name}` is not base64url: {e}"))
}

fn protected_header(b64: &str) -> Result<Map<String, Value>, String> {
    if b64.is_empty() {
        return Ok(Map::new());
    }
    let json = decode("protected", b64)?;
    serde_json::from_slice(&json).map_err(|e| format!("the protected header is not a JSON object: {e}"))
}

/// Interprets the headers of every recipient and checks the shared members against the content algorithm.
fn interpret(parts: Parts) -> Result<Jwe, String> {
    let mut enc = None;
    let mut deflated = None;
    let mut recipients = Vec::new();
    let mut unsupported = Vec::new();
    for (index, (own, encrypted_key)) in parts.recipients.into_iter().enumerate() {
        let header =
            merged(&parts.protected, &parts.unprotected, &own).map_err(|e| format!("recipient {index}: {e}"))?;
        let this = Header::read(&header).map_err(|e| format!("recipient {index}: {e}"))?;
        // `enc` and `zip` apply to the one ciphertext, so every recipient must agree on them.
        if *enc.get_or_insert(this.enc) != this.enc || *deflated.get_or_insert(this.deflated) != this.deflated {
            return Err("the recipients disagree on `enc` or `zip`".into());
        }
        match KeyAlgorithm::from_name(&this.alg) {
            Some(alg) => {
                recipients.push(this.recipient(alg, encrypted_key).map_err(|e| format!("recipient {index}: {e}"))?)
            }
            None => unsupported.push(this.alg),
        }
    }
    let enc = enc.ok_or("no recipients")?;
    if recipients.is_empty() {
        return Err(format!("no recipient uses a supported key algorithm (found: {})", unsupported.join(", ")));
    }
    if parts.iv.len() != enc.iv_len()
        || parts.tag.len() != enc.tag_len()
        || !enc.ciphertext_len_ok(parts.ciphertext.len())
    {
        return Err(format!("the `iv`, `ciphertext` or `tag` length does not fit {}", enc.name()));
    }
    Ok(Jwe {
        enc,
        deflated: deflated.unwrap_or(false),
        aad: parts.aad,
        iv: parts.iv,
        ciphertext: parts.ciphertext,
        tag: parts.tag,
        recipients,
    })
}

/// The JOSE header of one recipient: the union of the protected, shared unprotected and per-recipient headers,
/// which RFC 7516 §7.2.1 requires to be disjoint.
fn merged(
    protected: &Map<String, Value>,
    unprotected: &Map<String, Value>,
    own: &Map<String, Value>,
) -> Result<Map<String, Value>, String> {
    let mut header = Map::new();
    for (name, value) in protected.iter().chain(unprotected).chain(own) {
        if header.insert(name.clone(), value.clone()).is_some() {
            return Err(format!("header parameter `{name}` appears in more than one header"));
        }
    }
    Ok(header)
}

/// The header parameters that matter for decryption.
struct Header {
    alg: String,
    enc: ContentAlgorithm,
    deflated: bool,
    epk: Option<Value>,
    apu: Vec<u8>,
    apv: Vec<u8>,
}

impl Header {
    fn read(header: &Map<String, Value>) -> Result<Self, String> {
        if header.contains_key("crit") {
            // No extension is understood, and RFC 7515 §4.1.11 forbids ignoring critical ones.
            return Err("critical header extensions (`crit`) are not supported".into());
        }
        let alg = string(header, "alg")?.ok_or("no `alg` header parameter")?.to_owned();
        let enc_name = string(header, "enc")?.ok_or("no `enc` header parameter")?;
        let enc = ContentAlgorithm::from_name(enc_name)
            .ok_or_else(|| format!("unsupported content encryption `{enc_name}`"))?;
        let deflated = match string(header, "zip")? {
            None => false,
            Some("DEF") => true,
            Some(other) => return Err(format!("unsupported compression `{other}`")),
        };
        let bytes = |name| string(header, name)?.map_or(Ok(Vec::new()), |text| decode(name, text));
        Ok(Self { alg, enc, deflated, epk: header.get("epk").cloned(), apu: bytes("apu")?, apv: bytes("apv")? })
    }

    fn recipient(self, alg: KeyAlgorithm, encrypted_key: Vec<u8>) -> Result<Recipient, String> {
        if encrypted_key.is_empty() {
            return Err("empty `encrypted_key`".into());
        }
        let epk = if alg.is_ecdh() {
            Some(ephemeral_key(self.epk.as_ref().ok_or("no `epk` header parameter")?)?)
        } else {
            None
        };
        Ok(Recipient { alg, encrypted_key, epk, apu: self.apu, apv: self.apv })
    }
}

fn string<'a>(header: &'a Map<String, Value>, name: &str) -> Result<Option<&'a str>, String> {
    match header.get(name) {
        None => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(_) => Err(format!("header parameter `{name}` is not a string")),
    }
}

/// The `epk` JWK: an EC public key on a supported curve, checked to be a point on it (an off-curve point would
/// leak bits of the private key through ECDH: the invalid-curve attack).
fn ephemeral_key(epk: &Value) -> Result<PublicKey, String> {
    let member =
        |name: &str| epk.get(name).and_then(Value::as_str).ok_or_else(|| format!("`epk` has no string `{name}`"));
    if member("kty")? != "EC" {
        return Err("`epk` is not an EC key".into());
    }
    let crv = member("crv")?;
    let curve = Curve::from_jwk_name(crv).ok_or_else(|| format!("`epk` is on the unsupported curve {crv}"))?;
    let x = decode("epk.x", member("x")?)?;
    let y = decode("epk.y", member("y")?)?;
    PublicKey::from_coordinates(curve, &x, &y).ok_or_else(|| format!("`epk` is not a point on {curve}"))
}
