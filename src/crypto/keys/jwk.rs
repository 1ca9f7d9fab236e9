//! JSON Web Keys (RFC 7517/7518): RSA and EC keys, public or private, one key per document.
//!
//! Checks follow go-jose, which ocicrypt uses: EC coordinates and private scalars have exactly the curve's field
//! size, and a private key's `x`/`y` must be the public key of its `d`.

use super::{Curve, MAX_RSA_BITS, PrivateKey, PublicKey, RecipientKey};
use base64::Engine;
use base64::engine::DecodePaddingMode;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use rsa::{BigUint, RsaPrivateKey, RsaPublicKey};
use serde::{Deserialize, Deserializer};
use zeroize::Zeroizing;

/// base64url; padding tolerated although RFC 7515 forbids it (some tools write it).
const BASE64URL: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::URL_SAFE,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// JWE key-management algorithms a public JWK may name in `alg` (docs/formats.md), by key type.
const RSA_KEY_ALGORITHMS: [&str; 2] = ["RSA-OAEP", "RSA-OAEP-256"];
const EC_KEY_ALGORITHMS: [&str; 3] = ["ECDH-ES+A128KW", "ECDH-ES+A192KW", "ECDH-ES+A256KW"];

/// A JWK member holding private material: wiped on drop, never printed.
struct SecretMember(Zeroizing<String>);

impl<'de> Deserialize<'de> for SecretMember {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(|s| SecretMember(Zeroizing::new(s)))
    }
}

/// The members cryptadm reads; others (`use`, `key_ops`, `x5c`, …) are ignored, as go-jose ignores them.
#[derive(Deserialize)]
struct Jwk {
    kty: Option<String>,
    crv: Option<String>,
    x: Option<String>,
    y: Option<String>,
    n: Option<String>,
    e: Option<String>,
    d: Option<SecretMember>,
    p: Option<SecretMember>,
    q: Option<SecretMember>,
    /// Multi-prime RSA (RFC 7518 §6.3.2.7): not supported.
    oth: Option<serde::de::IgnoredAny>,
    alg: Option<String>,
    kid: Option<String>,
    /// Present in a JWK Set, which holds several keys.
    keys: Option<serde::de::IgnoredAny>,
}

impl Jwk {
    fn parse(text: &str) -> Result<Self, String> {
        let jwk: Jwk = serde_json::from_str(text).map_err(|e| format!("malformed JWK: {e}"))?;
        if jwk.keys.is_some() {
            return Err("this is a JWK Set; give a single key (one member of `keys`)".into());
        }
        Ok(jwk)
    }

    fn kty(&self) -> Result<&str, String> {
        let kty = self.kty.as_deref().ok_or("malformed JWK: no `kty` member")?;
        match kty {
            "RSA" | "EC" => Ok(kty),
            "oct" => Err("this is a symmetric (`oct`) JWK; give an RSA or EC key".into()),
            "OKP" => Err("unsupported key type OKP (Ed25519/X25519); use an RSA key or an EC key on P-256, P-384 \
                           or P-521"
                .into()),
            other => Err(format!("unsupported JWK key type `{other}`")),
        }
    }

    fn member<'a>(&self, value: &'a Option<String>, name: &str) -> Result<&'a str, String> {
        value
            .as_deref()
            .ok_or_else(|| format!("malformed {} JWK: no `{name}` member", self.kty.as_deref().unwrap_or("")))
    }

    fn curve(&self) -> Result<Curve, String> {
        let name = self.member(&self.crv, "crv")?;
        Curve::from_jwk_name(name)
            .ok_or_else(|| format!("unsupported curve {name}; use an EC key on P-256, P-384 or P-521"))
    }

    fn rsa_public(&self) -> Result<RsaPublicKey, String> {
        let n = BigUint::from_bytes_be(&decode("n", self.member(&self.n, "n")?)?);
        let e = BigUint::from_bytes_be(&decode("e", self.member(&self.e, "e")?)?);
        RsaPublicKey::new_with_max_size(n, e, MAX_RSA_BITS).map_err(|e| format!("unusable RSA public key: {e}"))
    }

    fn ec_public(&self, curve: Curve) -> Result<PublicKey, String> {
        let x = decode("x", self.member(&self.x, "x")?)?;
        let y = decode("y", self.member(&self.y, "y")?)?;
        if x.len() != curve.field_len() || y.len() != curve.field_len() {
            return Err(format!("the {curve} JWK's `x` and `y` must have {} bytes each", curve.field_len()));
        }
        PublicKey::from_coordinates(curve, &x, &y).ok_or_else(|| format!("the {curve} JWK's `x`/`y` is not a point"))
    }

    fn is_private(&self) -> bool {
        self.d.is_some()
    }
}

/// A public JWK, with its `alg` (checked against the key type) and `kid`.
pub(super) fn public(text: &str) -> Result<RecipientKey, String> {
    let jwk = Jwk::parse(text)?;
    let kty = jwk.kty()?;
    if jwk.is_private() {
        return Err(super::PRIVATE_GIVEN.into());
    }
    let key = match kty {
        "RSA" => PublicKey::Rsa(jwk.rsa_public()?),
        _ => jwk.ec_public(jwk.curve()?)?,
    };
    if let Some(alg) = &jwk.alg {
        check_alg(kty, alg)?;
    }
    Ok(RecipientKey { key, jwk_alg: jwk.alg, kid: jwk.kid })
}

/// A private JWK (`alg` and `kid` do not matter for decryption: every key is tried on every recipient).
pub(super) fn private(text: &str) -> Result<PrivateKey, String> {
    let jwk = Jwk::parse(text)?;
    let kty = jwk.kty()?;
    let d = jwk.d.as_ref().ok_or(super::PUBLIC_GIVEN)?;
    let d = decode_secret("d", d)?;
    match kty {
        "RSA" => rsa_private(&jwk, &d),
        _ => ec_private(&jwk, &d),
    }
}

fn rsa_private(jwk: &Jwk, d: &[u8]) -> Result<PrivateKey, String> {
    if jwk.oth.is_some() {
        return Err("multi-prime RSA keys (`oth`) are not supported".into());
    }
    let public = jwk.rsa_public()?;
    let primes = match (&jwk.p, &jwk.q) {
        (Some(p), Some(q)) => {
            vec![BigUint::from_bytes_be(&decode_secret("p", p)?), BigUint::from_bytes_be(&decode_secret("q", q)?)]
        }
        // Without the primes, the rsa crate recovers them from n, e and d.
        (None, None) => Vec::new(),
        _ => return Err("malformed RSA JWK: `p` and `q` must both be present or both absent".into()),
    };
    use rsa::traits::PublicKeyParts;
    let key = RsaPrivateKey::from_components(public.n().clone(), public.e().clone(), BigUint::from_bytes_be(d), primes)
        .map_err(|e| format!("unusable RSA private key: {e}"))?;
    Ok(PrivateKey::Rsa(key))
}

fn ec_private(jwk: &Jwk, d: &[u8]) -> Result<PrivateKey, String> {
    let curve = jwk.curve()?;
    if d.len() != curve.field_len() {
        return Err(format!("the {curve} JWK's `d` must have {} bytes", curve.field_len()));
    }
    let invalid = |_| format!("the {curve} JWK's `d` is not a valid private key");
    let key = match curve {
        Curve::P256 => PrivateKey::P256(p256::SecretKey::from_slice(d).map_err(invalid)?),
        Curve::P384 => PrivateKey::P384(p384::SecretKey::from_slice(d).map_err(invalid)?),
        Curve::P521 => PrivateKey::P521(p521::SecretKey::from_slice(d).map_err(invalid)?),
    };
    if key.public_key() != jwk.ec_public(curve)? {
        return Err(format!("the {curve} JWK's `x`/`y` are not the public key of its `d`"));
    }
    Ok(key)
}

fn check_alg(kty: &str, alg: &str) -> Result<(), String> {
    let allowed: &[&str] = if kty == "RSA" { &RSA_KEY_ALGORITHMS } else { &EC_KEY_ALGORITHMS };
    if allowed.contains(&alg) {
        return Ok(());
    }
    Err(format!(
        "the JWK's `alg` is `{alg}`, which cannot wrap a key for a {kty} key; use one of {}",
        allowed.join(", ")
    ))
}

fn decode(name: &str, text: &str) -> Result<Vec<u8>, String> {
    BASE64URL.decode(text).map_err(|e| format!("the JWK's `{name}` is not base64url: {e}"))
}

fn decode_secret(name: &str, member: &SecretMember) -> Result<Zeroizing<Vec<u8>>, String> {
    // The error names the member, never its value.
    BASE64URL
        .decode(member.0.as_bytes())
        .map(Zeroizing::new)
        .map_err(|_| format!("the JWK's `{name}` is not base64url"))
}

/// The key-management algorithms a JWK `alg` may name, for the JWE module's consistency test.
#[cfg(test)]
pub(crate) fn allowed_algorithms() -> impl Iterator<Item = &'static str> {
    RSA_KEY_ALGORITHMS.into_iter().chain(EC_KEY_ALGORITHMS)
}
