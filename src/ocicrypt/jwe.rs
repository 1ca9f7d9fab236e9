//! The JWE key wrapper (`org.opencontainers.image.enc.keys.jwe`, docs/formats.md): a layer's private options encrypted
//! once with a fresh content key, that key wrapped for each recipient.
//!
//! Output is byte-for-byte the shape go-jose's `FullSerialize` gives ocicrypt: A256GCM content, RSA-OAEP or
//! ECDH-ES+A256KW per recipient (or the JWK's `alg`), flattened JSON for one recipient and general JSON for
//! several, member order as Go emits it, header objects with sorted keys, base64url without padding. Input is
//! accepted in all three serializations with the algorithms go-jose reads.

mod content;
mod key_mgmt;
mod parse;

use crate::crypto::SecretBytes;
use crate::crypto::keys::{PrivateKey, PublicKey, RecipientKey};
use crate::ocicrypt::Error;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use content::ContentAlgorithm;
use key_mgmt::KeyAlgorithm;
use zeroize::Zeroizing;

/// Largest JWE accepted by [`unwrap`]: ocicrypt's are a few hundred bytes per recipient, so anything this large
/// is hostile or a mistake, and refusing it bounds the parsing work.
pub const MAX_JWE_LEN: usize = 1 << 20;

/// Largest plaintext a compressed (`"zip":"DEF"`) JWE may inflate to: the same bound as the JWE itself.
const MAX_INFLATED_LEN: u64 = MAX_JWE_LEN as u64;

/// The wrapper's name in errors and annotations.
const SCHEME: &str = "jwe";

/// Whether `name` is a JWE key-management algorithm (`alg`) that [`wrap`] and [`unwrap`] handle: `RSA-OAEP`,
/// `RSA-OAEP-256`, `ECDH-ES+A128KW`, `ECDH-ES+A192KW`, `ECDH-ES+A256KW`.
pub fn is_supported_key_algorithm(name: &str) -> bool {
    KeyAlgorithm::from_name(name).is_some()
}

/// Encrypts `plaintext` (a layer's private options) for every recipient and returns the JWE JSON bytes.
///
/// # Errors
/// [`Error::InvalidKey`] when a recipient's JWK `alg` is unknown or does not suit its key; [`Error::Wrap`] when
/// there is no recipient or wrapping fails.
pub fn wrap(recipients: &[RecipientKey], plaintext: &[u8]) -> Result<Vec<u8>, Error> {
    if recipients.is_empty() {
        return Err(wrap_error("no recipients".into()));
    }
    let algorithms = recipients.iter().enumerate().map(|(i, r)| key_algorithm(i, r)).collect::<Result<Vec<_>, _>>()?;
    let cek = Zeroizing::new(crate::crypto::random::bytes::<32>());
    let iv = crate::crypto::random::bytes::<12>();
    let mut headers = Vec::with_capacity(recipients.len());
    let mut encrypted_keys = Vec::with_capacity(recipients.len());
    for (recipient, alg) in recipients.iter().zip(algorithms) {
        let wrapped = key_mgmt::wrap(alg, &recipient.key, &cek[..]).map_err(wrap_error)?;
        headers.push(recipient_header(alg, wrapped.epk.as_ref(), recipient.kid.as_deref()));
        encrypted_keys.push(wrapped.encrypted_key);
    }
    // go-jose moves a single recipient's header into the protected header; with several, only `enc` is protected.
    let enc = ("enc", json_string(ContentAlgorithm::A256Gcm.name()));
    let protected = if let [only] = &mut headers[..] {
        only.push(enc);
        json_object(std::mem::take(only))
    } else {
        json_object(vec![enc])
    };
    let protected = URL_SAFE_NO_PAD.encode(protected);
    let (ciphertext, tag) = content::encrypt_a256gcm(&cek, &iv, protected.as_bytes(), plaintext);
    Ok(serialize(&protected, &headers, &encrypted_keys, &iv, &ciphertext, &tag).into_bytes())
}

/// Decrypts a JWE with the first of `keys` that fits any of its recipients, trying every key on every recipient
/// (`kid` is not used, as in ocicrypt). Flattened, general and compact serializations are read.
///
/// Returns `Ok(None)` when the JWE is well-formed but no key opens it; why a key did not fit (wrong key, altered
/// data) is not told, so the answer is no oracle for an attacker.
///
/// # Errors
/// [`Error::MalformedWrappedKey`] when the JWE cannot be parsed, is larger than [`MAX_JWE_LEN`], or uses only
/// unsupported algorithms.
pub fn unwrap(keys: &[PrivateKey], jwe: &[u8]) -> Result<Option<SecretBytes>, Error> {
    let jwe = parse::parse(jwe).map_err(malformed)?;
    for recipient in &jwe.recipients {
        for key in keys.iter().filter(|key| key_mgmt::applies(recipient.alg, key, recipient.epk.as_ref())) {
            if let Some(plaintext) = open_with(&jwe, recipient, key) {
                return inflate(plaintext, jwe.deflated).map(Some);
            }
        }
    }
    Ok(None)
}

/// One attempt: unwrap the content key, then authenticate and decrypt. A key that fails to unwrap is replaced by
/// a random one so that both ways of failing take the same steps.
fn open_with(jwe: &parse::Jwe, recipient: &parse::Recipient, key: &PrivateKey) -> Option<SecretBytes> {
    let unwrapped = key_mgmt::unwrap(
        recipient.alg,
        key,
        &recipient.encrypted_key,
        recipient.epk.as_ref(),
        &recipient.apu,
        &recipient.apv,
    );
    let cek =
        unwrapped.filter(|cek| cek.len() == jwe.enc.key_len()).unwrap_or_else(|| content::decoy_key(jwe.enc.key_len()));
    content::decrypt(jwe.enc, &cek, &jwe.iv, &jwe.aad, &jwe.ciphertext, &jwe.tag)
}

/// Undoes `"zip":"DEF"` (raw DEFLATE, RFC 1951), bounded so that a small JWE cannot inflate without limit.
fn inflate(plaintext: SecretBytes, deflated: bool) -> Result<SecretBytes, Error> {
    if !deflated {
        return Ok(plaintext);
    }
    // As everywhere `bounded::read_at_most` reads, buffers outgrown while reading are not wiped; the final one is.
    crate::bounded::read_at_most(flate2::read::DeflateDecoder::new(&plaintext[..]), MAX_INFLATED_LEN)
        .map_err(|e| malformed(format!("the compressed plaintext does not inflate: {e}")))?
        .ok_or_else(|| malformed(format!("the compressed plaintext inflates to more than {} MiB", MAX_JWE_LEN >> 20)))
}

/// The algorithm for one recipient: its JWK `alg`, or ocicrypt's default for the key type.
/// The `alg` a recipient's wrapped key gets (what `image inspect` shows for a recipient without a `kid`).
pub fn recipient_alg(recipient: &RecipientKey) -> Result<&'static str, Error> {
    key_algorithm(0, recipient).map(KeyAlgorithm::name)
}

fn key_algorithm(index: usize, recipient: &RecipientKey) -> Result<KeyAlgorithm, Error> {
    let Some(name) = &recipient.jwk_alg else {
        return Ok(KeyAlgorithm::default_for(&recipient.key));
    };
    let invalid = |problem: String| Error::InvalidKey { what: recipient_name(index, recipient), problem };
    let alg = KeyAlgorithm::from_name(name).ok_or_else(|| invalid(format!("unsupported JWK `alg` `{name}`")))?;
    if !alg.suits(&recipient.key) {
        return Err(invalid(format!(
            "the JWK `alg` `{name}` cannot be used with a {} key",
            recipient.key.description()
        )));
    }
    Ok(alg)
}

fn recipient_name(index: usize, recipient: &RecipientKey) -> String {
    match &recipient.kid {
        Some(kid) => format!("JWE recipient {} (kid `{kid}`)", index + 1),
        None => format!("JWE recipient {} ({})", index + 1, recipient.key.description()),
    }
}

/// A recipient's header members (unsorted; [`json_object`] sorts them).
fn recipient_header(alg: KeyAlgorithm, epk: Option<&PublicKey>, kid: Option<&str>) -> Vec<(&'static str, String)> {
    let mut members = vec![("alg", json_string(alg.name()))];
    if let Some(epk) = epk {
        members.push(("epk", epk_json(epk)));
    }
    if let Some(kid) = kid {
        members.push(("kid", json_string(kid)));
    }
    members
}

/// An EC public key as go-jose marshals a JWK: `kty`, `crv`, `x`, `y` in that (struct field) order, coordinates
/// padded to the field size.
fn epk_json(key: &PublicKey) -> String {
    let (curve, x, y) = key.coordinates().expect("ECDH-ES ephemeral keys are EC keys");
    format!(
        r#"{{"kty":"EC","crv":"{}","x":"{}","y":"{}"}}"#,
        curve.jwk_name(),
        URL_SAFE_NO_PAD.encode(x),
        URL_SAFE_NO_PAD.encode(y)
    )
}

/// The whole JWE in go-jose's member order: `protected`, then `recipients` (general form) or nothing (flattened:
/// the single recipient's header went into `protected`), `encrypted_key` (in the general form a copy of the first
/// recipient's, as go-jose writes it), `iv`, `ciphertext`, `tag`.
fn serialize(
    protected: &str,
    headers: &[Vec<(&'static str, String)>],
    encrypted_keys: &[Vec<u8>],
    iv: &[u8],
    ciphertext: &[u8],
    tag: &[u8],
) -> String {
    let mut out = format!(r#"{{"protected":"{protected}""#);
    if encrypted_keys.len() > 1 {
        let recipients: Vec<String> = headers
            .iter()
            .zip(encrypted_keys)
            .map(|(header, key)| {
                format!(
                    r#"{{"header":{},"encrypted_key":"{}"}}"#,
                    json_object(header.clone()),
                    URL_SAFE_NO_PAD.encode(key)
                )
            })
            .collect();
        out.push_str(&format!(r#","recipients":[{}]"#, recipients.join(",")));
    }
    for (name, value) in
        [("encrypted_key", &encrypted_keys[0][..]), ("iv", iv), ("ciphertext", ciphertext), ("tag", tag)]
    {
        out.push_str(&format!(r#","{name}":"{}""#, URL_SAFE_NO_PAD.encode(value)));
    }
    out.push('}');
    out
}

/// A JSON object from members whose values are already JSON, keys sorted as Go sorts a map's keys.
fn json_object(mut members: Vec<(&'static str, String)>) -> String {
    members.sort_by_key(|(name, _)| *name);
    let members: Vec<String> =
        members.into_iter().map(|(name, value)| format!("{}:{value}", json_string(name))).collect();
    format!("{{{}}}", members.join(","))
}

/// A JSON string as Go's encoding/json writes it: like serde_json, plus `<`, `>`, `&`, U+2028 and U+2029 escaped
/// (Go's HTML-safe default), so that a `kid` encodes to the same protected-header bytes.
fn json_string(text: &str) -> String {
    serde_json::to_string(text)
        .expect("a string always serializes")
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

fn wrap_error(problem: String) -> Error {
    Error::Wrap { scheme: SCHEME.into(), problem }
}

fn malformed(problem: String) -> Error {
    Error::MalformedWrappedKey { scheme: SCHEME.into(), problem }
}

#[cfg(test)]
mod tests;
