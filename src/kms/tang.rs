//! Tang network-bound keys: the server's advertisement, clevis's `tang` pin and the McCallum-Relyea exchange.
//!
//! A Tang server holds P-521 keys and no state: `GET /adv` returns a JWS, signed by its signing keys (ES512),
//! whose payload is the JWK set of its public keys; `POST /rec/KID` multiplies a point the client sends by the
//! private exchange key `KID` (an `ECMR` key). Encrypting needs no server round trip beyond the advertisement:
//! an ECDH-ES JWE to the exchange key, in the exact layout `clevis encrypt tang` writes (see
//! [`encrypt`]). Decrypting blinds the JWE's ephemeral key with a fresh one before sending it, so the server
//! never sees anything that would let it (or an eavesdropper) compute the secret:
//!
//! `X = C + E` is sent (C the JWE's `epk`, E = e·G fresh), the server answers `Y = s·X`, and
//! `s·C = Y - e·S` (S the server's public exchange key) is the ECDH point whose x coordinate, through the
//! Concat KDF, is the content key.
//!
//! Thumbprints are RFC 7638 (`crv`, `kty`, `x`, `y`), base64url, with SHA-256 (`S256`, clevis's default) or
//! SHA-1 (`S1`, what older clevis wrote); both are accepted wherever clevis accepts them.

use super::clevis::{Error, b64_decode, b64_encode, canonical_json};
use super::http::{Http, HttpSettings, Request};
use crate::crypto::SecretBytes;
use p521::elliptic_curve::rand_core::OsRng;
use p521::elliptic_curve::sec1::{FromEncodedPoint, ToEncodedPoint};
use serde_json::{Value, json};
use sha2::Digest;

/// The JWE content algorithm clevis uses (and the Concat KDF's AlgorithmID with `"alg":"ECDH-ES"`).
pub const ENC: &str = "A256GCM";
/// The curve of every Tang key.
pub const CRV: &str = "P-521";
/// Bytes of a P-521 field element (coordinates and the ECDH secret are padded to it).
const FIELD_LEN: usize = 66;

/// A JWK thumbprint hash clevis accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThumbprintHash {
    /// SHA-256: clevis's default, and how tangd names its key files.
    S256,
    /// SHA-1: what clevis before version 15 wrote.
    S1,
}

/// One public key from an advertisement.
#[derive(Clone, Debug)]
pub struct Jwk {
    /// The key as the server published it (kept whole: clevis records the set as is).
    pub json: Value,
    point: p521::PublicKey,
}

impl Jwk {
    /// Reads an EC P-521 public key; other keys are `None` (a Tang advertisement has nothing else).
    fn parse(json: &Value) -> Option<Self> {
        if json.get("kty")?.as_str()? != "EC" || json.get("crv")?.as_str()? != CRV {
            return None;
        }
        let point = point_from_jwk(json)?;
        Some(Self { json: json.clone(), point })
    }

    /// Whether the key may be used for `op` (`verify`, `deriveKey`): named in `key_ops`, or, without `key_ops`,
    /// implied by `use` (`sig`, `enc`), as `jose jwk use -r` decides.
    fn allows(&self, op: &str) -> bool {
        if let Some(ops) = self.json.get("key_ops").and_then(Value::as_array) {
            return ops.iter().any(|o| o.as_str() == Some(op));
        }
        let implied = if op == "verify" { "sig" } else { "enc" };
        self.json.get("use").and_then(Value::as_str) == Some(implied)
    }

    /// The RFC 7638 thumbprint.
    pub fn thumbprint(&self, hash: ThumbprintHash) -> String {
        let (x, y) = coordinates(&self.point);
        let members = format!(r#"{{"crv":"{CRV}","kty":"EC","x":"{}","y":"{}"}}"#, b64_encode(&x), b64_encode(&y));
        match hash {
            ThumbprintHash::S256 => b64_encode(&sha2::Sha256::digest(members.as_bytes())),
            ThumbprintHash::S1 => b64_encode(&sha1::Sha1::digest(members.as_bytes())),
        }
    }

    /// Whether `thp` is this key's thumbprint by either hash clevis accepts.
    pub fn has_thumbprint(&self, thp: &str) -> bool {
        [ThumbprintHash::S256, ThumbprintHash::S1].into_iter().any(|hash| self.thumbprint(hash) == thp)
    }
}

fn point_from_jwk(json: &Value) -> Option<p521::PublicKey> {
    let x = b64_decode(json.get("x")?.as_str()?)?;
    let y = b64_decode(json.get("y")?.as_str()?)?;
    if x.len() != FIELD_LEN || y.len() != FIELD_LEN {
        return None;
    }
    let encoded = p521::EncodedPoint::from_affine_coordinates(x[..].into(), y[..].into(), false);
    Option::from(p521::PublicKey::from_encoded_point(&encoded))
}

fn coordinates(point: &p521::PublicKey) -> (Vec<u8>, Vec<u8>) {
    let encoded = point.to_encoded_point(false);
    let x = encoded.x().map(|x| x.to_vec()).unwrap_or_default();
    let y = encoded.y().map(|y| y.to_vec()).unwrap_or_default();
    (x, y)
}

fn point_jwk(point: &p521::PublicKey, extra: &[(&str, Value)]) -> Value {
    let (x, y) = coordinates(point);
    let mut jwk = json!({"crv": CRV, "kty": "EC", "x": b64_encode(&x), "y": b64_encode(&y)});
    for (name, value) in extra {
        jwk[*name] = value.clone();
    }
    jwk
}

/// A parsed advertisement: the JWK set (what clevis records in the JWE) and its keys by use.
#[derive(Clone, Debug)]
pub struct Advertisement {
    /// The payload, `{"keys":[…]}`, as the server sent it.
    pub jwks: Value,
    /// Keys that may verify (the signing keys).
    pub signing: Vec<Jwk>,
    /// Keys that may derive (the ECMR exchange keys).
    pub exchange: Vec<Jwk>,
}

impl Advertisement {
    /// Parses a JWS (general or flattened JSON serialization) and checks that every signing key in its payload
    /// signed it (`jose jws ver -a`, as clevis checks). Untrusted input: any failure is an error, never a panic.
    pub fn from_jws(url: &str, jws: &[u8]) -> Result<Self, Error> {
        let malformed =
            |problem: &str| Error::BadAdvertisement { url: crate::redact::url(url), problem: problem.into() };
        let jws: Value = serde_json::from_slice(jws).map_err(|_| malformed("not JSON"))?;
        let payload_b64 = jws.get("payload").and_then(Value::as_str).ok_or_else(|| malformed("no `payload`"))?;
        let payload = b64_decode(payload_b64).ok_or_else(|| malformed("`payload` is not base64url"))?;
        let jwks: Value = serde_json::from_slice(&payload).map_err(|_| malformed("the payload is not JSON"))?;
        let advertisement = Self::from_jwks(url, jwks)?;
        let signatures: Vec<&Value> = match jws.get("signatures") {
            Some(Value::Array(list)) => list.iter().collect(),
            Some(_) => return Err(malformed("`signatures` is not a list")),
            None => vec![&jws],
        };
        if advertisement.signing.is_empty() {
            return Err(Error::BadSignature {
                url: crate::redact::url(url),
                problem: "it names no signing key".into(),
            });
        }
        for key in &advertisement.signing {
            if !signatures.iter().any(|signature| verifies(key, payload_b64, signature)) {
                return Err(Error::BadSignature {
                    url: crate::redact::url(url),
                    problem: format!("signing key {} did not sign it", key.thumbprint(ThumbprintHash::S256)),
                });
            }
        }
        Ok(advertisement)
    }

    /// A JWK set given as trusted (clevis's `adv` in the config, or the one recorded in a JWE).
    pub fn from_jwks(url: &str, jwks: Value) -> Result<Self, Error> {
        let malformed =
            |problem: &str| Error::BadAdvertisement { url: crate::redact::url(url), problem: problem.into() };
        let keys = jwks.get("keys").and_then(Value::as_array).ok_or_else(|| malformed("no `keys` list"))?;
        let parsed: Vec<Jwk> = keys.iter().filter_map(Jwk::parse).collect();
        let signing = parsed.iter().filter(|k| k.allows("verify")).cloned().collect();
        let exchange = parsed.iter().filter(|k| k.allows("deriveKey")).cloned().collect();
        Ok(Self { jwks, signing, exchange })
    }

    /// The S256 thumbprints of the signing keys (what an operator compares with `jose jwk thp` on the server).
    pub fn signing_thumbprints(&self) -> Vec<String> {
        self.signing.iter().map(|k| k.thumbprint(ThumbprintHash::S256)).collect()
    }
}

/// Whether `signature` (one entry of `signatures`, or the flattened JWS) is a valid ES512 signature by `key`.
fn verifies(key: &Jwk, payload_b64: &str, signature: &Value) -> bool {
    use p521::ecdsa::signature::Verifier as _;
    let Some(protected) = signature.get("protected").and_then(Value::as_str) else { return false };
    let header: Option<Value> = b64_decode(protected).and_then(|h| serde_json::from_slice(&h).ok());
    if header.as_ref().and_then(|h| h.get("alg")).and_then(Value::as_str) != Some("ES512") {
        return false;
    }
    let Some(bytes) = signature.get("signature").and_then(Value::as_str).and_then(b64_decode) else { return false };
    let Ok(signature) = p521::ecdsa::Signature::from_slice(&bytes) else { return false };
    let Ok(verifying) = p521::ecdsa::VerifyingKey::from_affine(*key.point.as_affine()) else { return false };
    verifying.verify(format!("{protected}.{payload_b64}").as_bytes(), &signature).is_ok()
}

/// What `clevis encrypt tang` takes: `{"url":…, "thp":…, "adv":…}`.
#[derive(Clone, Debug)]
pub struct TangConfig {
    /// The server's base URL.
    pub url: String,
    /// A trusted signing key's thumbprint (S256 or S1).
    pub thp: Option<String>,
    /// A trusted advertisement given inline (the JWS, or its JWK set), instead of fetching one.
    pub adv: Option<Value>,
}

impl TangConfig {
    /// Parses the pin's configuration object. An `adv` naming a file is read by the caller (the command line),
    /// which replaces it with the file's JSON; here it must already be an object.
    pub fn from_json(config: &Value) -> Result<Self, Error> {
        let bad = |problem: &str| Error::Config(format!("tang: {problem}"));
        let object = config.as_object().ok_or_else(|| bad("the configuration is not a JSON object"))?;
        let url = object.get("url").and_then(Value::as_str).ok_or_else(|| bad("missing the required `url`"))?;
        let parsed = reqwest::Url::parse(&with_scheme(url)).map_err(|e| bad(&format!("`url` is not a URL: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(bad("`url` must be http:// or https://"));
        }
        let thp = match object.get("thp") {
            None => None,
            Some(Value::String(thp)) if !thp.is_empty() && thp.bytes().all(is_b64url) => Some(thp.clone()),
            Some(_) => return Err(bad("`thp` must be a thumbprint (base64url)")),
        };
        let adv = match object.get("adv") {
            None => None,
            Some(adv @ Value::Object(_)) => Some(adv.clone()),
            Some(_) => return Err(bad("`adv` must be the advertisement (a JSON object)")),
        };
        Ok(Self { url: url.to_owned(), thp, adv })
    }
}

/// `url` with `http://` in front when it has no scheme (`127.0.0.1:7500`, `tang.example`): clevis hands the URL to
/// curl, which opens such a URL over http, and writes it into the JWE as given; so is it opened here.
pub fn with_scheme(url: &str) -> std::borrow::Cow<'_, str> {
    if url.contains("://") { url.into() } else { format!("http://{url}").into() }
}

fn is_b64url(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_'
}

/// A client for one Tang server.
pub struct Tang {
    http: Http,
    url: String,
}

impl Tang {
    /// A client for the server at `url` (as the configuration or the JWE gives it).
    pub fn new(url: &str, settings: &HttpSettings) -> Result<Self, Error> {
        let url: &str = &with_scheme(url);
        let http = Http::new("Tang server", url, settings.clone()).map_err(|e| Error::tang(url, e))?;
        Ok(Self { http, url: url.to_owned() })
    }

    fn endpoint(&self, path: &str) -> Result<reqwest::Url, Error> {
        reqwest::Url::parse(&format!("{}/{path}", self.url.trim_end_matches('/')))
            .map_err(|e| Error::Config(format!("tang: `url` is not a URL: {e}")))
    }

    /// `GET /adv/THP` (`/adv/` without a thumbprint), verified as [`Advertisement::from_jws`] does.
    pub fn advertisement(&self, thp: Option<&str>) -> Result<Advertisement, Error> {
        let request = Request::new(
            reqwest::Method::GET,
            self.endpoint(&format!("adv/{}", thp.unwrap_or_default()))?,
            "fetching the advertisement",
        );
        let response = self.http.send(&request).map_err(|e| Error::tang(&self.url, e))?;
        if let (reqwest::StatusCode::NOT_FOUND, Some(thp)) = (response.status, thp) {
            // tangd answers 404 to /adv/THP when no signing key (current or rotated) has that thumbprint.
            return Err(Error::ThumbprintMismatch { url: crate::redact::url(&self.url), thp: thp.into() });
        }
        if !response.status.is_success() {
            return Err(Error::tang(&self.url, self.unexpected(&request.what, &response)));
        }
        Advertisement::from_jws(&self.url, &response.body)
    }

    /// `POST /rec/KID`: the server's exchange key `kid` times `point`.
    fn recover(&self, kid: &str, point: &p521::PublicKey) -> Result<p521::PublicKey, Error> {
        let what = format!("recovering with key {kid}");
        let body = point_jwk(point, &[("alg", json!("ECMR")), ("key_ops", json!(["deriveKey"]))]);
        let mut request = Request::new(reqwest::Method::POST, self.endpoint(&format!("rec/{kid}"))?, &what);
        request.body = Some(zeroize::Zeroizing::new(canonical_json(&body).into_bytes()));
        let request = request.header("Content-Type", "application/jwk+json");
        let response = self.http.send(&request).map_err(|e| Error::tang(&self.url, e))?;
        if response.status == reqwest::StatusCode::NOT_FOUND {
            return Err(Error::UnknownKey { url: crate::redact::url(&self.url), kid: kid.into() });
        }
        if !response.status.is_success() {
            return Err(Error::tang(&self.url, self.unexpected(&what, &response)));
        }
        let answer: Option<Value> = serde_json::from_slice(&response.body).ok();
        answer
            .as_ref()
            .filter(|jwk| jwk.get("kty").and_then(Value::as_str) == Some("EC"))
            .filter(|jwk| jwk.get("crv").and_then(Value::as_str) == Some(CRV))
            .and_then(point_from_jwk)
            .ok_or_else(|| {
                Error::tang(
                    &self.url,
                    super::Error::Protocol {
                        what,
                        service: self.http.service.clone(),
                        problem: "the answer is not a P-521 point".into(),
                    },
                )
            })
    }

    fn unexpected(&self, what: &str, response: &super::http::Response) -> super::Error {
        super::Error::Protocol {
            what: what.into(),
            service: self.http.service.clone(),
            problem: format!("HTTP {}: {}", response.status, crate::redact::server_message(&response.body)),
        }
    }
}

/// How to treat an advertisement that no `thp` pins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trust {
    /// Refuse it (clevis asks on a terminal; cryptadm never asks).
    PinnedOnly,
    /// Accept it (`clevis encrypt tang … -y`; `--clevis-trust-adv`).
    Any,
}

/// The advertisement to encrypt to: the inline one, or the fetched and verified one, checked against `thp`.
fn trusted_advertisement(config: &TangConfig, trust: Trust, http: &HttpSettings) -> Result<Advertisement, Error> {
    let advertisement = match &config.adv {
        // An inline `adv` is trusted as given (clevis: thp defaults to "any"), but a JWS still has to verify.
        Some(adv) if adv.get("payload").is_some() => Advertisement::from_jws(&config.url, adv.to_string().as_bytes())?,
        Some(jwks) => Advertisement::from_jwks(&config.url, jwks.clone())?,
        None => Tang::new(&config.url, http)?.advertisement(config.thp.as_deref())?,
    };
    match &config.thp {
        Some(thp) if !advertisement.signing.iter().any(|key| key.has_thumbprint(thp)) => {
            Err(Error::ThumbprintMismatch { url: crate::redact::url(&config.url), thp: thp.clone() })
        }
        None if config.adv.is_none() && trust == Trust::PinnedOnly => Err(Error::Untrusted {
            url: crate::redact::url(&config.url),
            thumbprints: advertisement.signing_thumbprints(),
        }),
        _ => Ok(advertisement),
    }
}

/// Encrypts `plaintext` as `clevis encrypt tang CONFIG` does and returns the compact JWE. The protected header
/// is, with keys sorted and no spaces (as jose writes it):
/// `{"alg":"ECDH-ES","clevis":{"pin":"tang","tang":{"adv":JWKS,"url":URL}},"enc":"A256GCM","epk":EPK,"kid":KID}`,
/// JWKS the advertisement's payload, EPK the ephemeral P-521 key, KID the exchange key's S256 thumbprint.
pub fn encrypt(config: &TangConfig, trust: Trust, http: &HttpSettings, plaintext: &[u8]) -> Result<String, Error> {
    let advertisement = trusted_advertisement(config, trust, http)?;
    let exchange = advertisement.exchange.first().ok_or_else(|| Error::BadAdvertisement {
        url: crate::redact::url(&config.url),
        problem: "it has no exchange (deriveKey) key".into(),
    })?;
    let ephemeral = p521::SecretKey::random(&mut OsRng);
    let shared = p521::ecdh::diffie_hellman(ephemeral.to_nonzero_scalar(), exchange.point.as_affine());
    let cek = content_key(shared.raw_secret_bytes());
    let header = json!({
        "alg": "ECDH-ES",
        "clevis": {"pin": "tang", "tang": {"adv": advertisement.jwks, "url": config.url}},
        "enc": ENC,
        "epk": point_jwk(&ephemeral.public_key(), &[]),
        "kid": exchange.thumbprint(ThumbprintHash::S256),
    });
    Ok(super::clevis::compact_encrypt(&header, &cek, plaintext))
}

/// The Concat KDF of direct ECDH-ES with A256GCM, on the x coordinate of the shared point.
fn content_key(z: &[u8]) -> SecretBytes {
    crate::crypto::jose::concat_kdf_sha256(z, ENC.as_bytes(), 32, &[], &[])
}

/// What a tang pin's protected header says.
#[derive(Debug)]
pub struct TangHeader {
    /// `clevis.tang.url`.
    pub url: String,
    /// `kid`: the exchange key's thumbprint.
    pub kid: String,
    epk: p521::PublicKey,
    server: p521::PublicKey,
}

impl TangHeader {
    /// Reads the members `clevis decrypt tang` needs, and finds the exchange key `kid` names in the recorded
    /// advertisement (by S256 or S1 thumbprint).
    pub fn parse(header: &Value) -> Result<Self, Error> {
        let bad = |problem: &str| Error::Malformed(format!("tang pin: {problem}"));
        let tang = header.pointer("/clevis/tang").ok_or_else(|| bad("no `clevis.tang`"))?;
        let url = tang.get("url").and_then(Value::as_str).ok_or_else(|| bad("no `clevis.tang.url`"))?;
        let kid = header.get("kid").and_then(Value::as_str).ok_or_else(|| bad("no `kid`"))?;
        let epk = header.get("epk").ok_or_else(|| bad("no `epk`"))?;
        if epk.get("crv").and_then(Value::as_str) != Some(CRV) {
            return Err(bad("`epk` is not a P-521 key"));
        }
        let epk = point_from_jwk(epk).ok_or_else(|| bad("`epk` is not a P-521 point"))?;
        if header.get("alg").and_then(Value::as_str) != Some("ECDH-ES")
            || header.get("enc").and_then(Value::as_str) != Some(ENC)
        {
            return Err(bad("expected `\"alg\":\"ECDH-ES\"` and `\"enc\":\"A256GCM\"`"));
        }
        let adv = tang.get("adv").ok_or_else(|| bad("no `clevis.tang.adv`"))?;
        let advertisement = Advertisement::from_jwks(url, adv.clone())?;
        let server = advertisement
            .exchange
            .iter()
            .chain(&advertisement.signing)
            .find(|key| key.has_thumbprint(kid))
            .ok_or_else(|| bad("`kid` names no key of `clevis.tang.adv`"))?;
        Ok(Self { url: url.to_owned(), kid: kid.to_owned(), epk, server: server.point })
    }
}

/// Recovers the content key of a tang pin's JWE through the blinded exchange with its server.
pub fn recover_key(header: &TangHeader, http: &HttpSettings) -> Result<SecretBytes, Error> {
    let blinding = p521::SecretKey::random(&mut OsRng);
    let blinded = p521::ProjectivePoint::from(*header.epk.as_affine()) + blinding.public_key().to_projective();
    let blinded = p521::PublicKey::from_affine(blinded.to_affine())
        .map_err(|_| Error::Malformed("tang pin: the blinded point is the identity".into()))?;
    let answer = Tang::new(&header.url, http)?.recover(&header.kid, &blinded)?;
    let unblinding = header.server.to_projective() * *blinding.to_nonzero_scalar();
    let shared = (answer.to_projective() - unblinding).to_affine();
    let encoded = shared.to_encoded_point(false);
    let x = encoded.x().ok_or(Error::Integrity)?;
    Ok(content_key(x))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exchange done locally with a known server key: the blinded recovery gives the key encryption derived.
    #[test]
    fn blinded_exchange_recovers_the_ecdh_key() {
        let server = p521::SecretKey::random(&mut OsRng);
        let client = p521::SecretKey::random(&mut OsRng);
        let direct = p521::ecdh::diffie_hellman(client.to_nonzero_scalar(), server.public_key().as_affine());
        let blinding = p521::SecretKey::random(&mut OsRng);
        let sent = client.public_key().to_projective() + blinding.public_key().to_projective();
        let answer = sent * *server.to_nonzero_scalar();
        let shared = (answer - server.public_key().to_projective() * *blinding.to_nonzero_scalar()).to_affine();
        assert_eq!(shared.to_encoded_point(false).x().unwrap().as_slice(), direct.raw_secret_bytes().as_slice());
    }

    /// RFC 7638 §3.1's layout for an EC key: the S256 thumbprint of a tangd key is its file name.
    #[test]
    fn thumbprint_matches_jose() {
        // Generated by tangd-keygen; `jose jwk thp -a S256` and `-a S1` printed these.
        let jwk = json!({"alg":"ES512","crv":"P-521","key_ops":["verify"],"kty":"EC",
            "x":"ASawad0DCJv15JDCastSw4TaVRBAo2MSsc5E2Ze8_bwQclY7vezQ7A45QWvtz36G7HntbvxGtJ34wDpDu_dcTlpv",
            "y":"AH4s9gaZwF8FfTXZHbsHHEF_TlvfgMMOj5rjwrzhVmrL2L_4fK5dVxI3f_eCXVvoOnH0w3JL7ADZFt_hJDT9b9QP"});
        let key = Jwk::parse(&jwk).unwrap();
        assert_eq!(key.thumbprint(ThumbprintHash::S256), "j0e2Lp5YtyUgEMO6woKzPugGhDsi_42kcuirs3jGnf4");
        assert_eq!(key.thumbprint(ThumbprintHash::S1), "R7AuAHR1G5tGgYVwhC4r1jtJ7rk");
        assert!(
            key.has_thumbprint("R7AuAHR1G5tGgYVwhC4r1jtJ7rk") && !key.has_thumbprint("R7AuAHR1G5tGgYVwhC4r1jtJ7rl")
        );
        assert!(key.allows("verify") && !key.allows("deriveKey"));
    }

    #[test]
    fn config_is_checked() {
        assert!(TangConfig::from_json(&json!({"url": "http://127.0.0.1:1"})).is_ok());
        for bad in [json!({}), json!({"url": "ftp://x"}), json!({"url": "http://x", "thp": 3}), json!([1])] {
            assert!(matches!(TangConfig::from_json(&bad), Err(Error::Config(_))), "{bad}");
        }
    }
}
