//! Key material shared by every command: recipients' public keys and operators' private keys, read from DER, PEM
//! or JWK files.
//!
//! Accepted are the encodings containers/ocicrypt accepts (`docs/formats.md#key-files`) and a few it refuses
//! for no good reason: PEM `RSA PUBLIC KEY` (PKCS#1), PEM `EC PRIVATE KEY` (SEC1) and PKCS#8 `ENCRYPTED PRIVATE
//! KEY`. Algorithms are RSA and ECDH on P-256, P-384 and P-521: what the JWE and PKCS#7 key wrappers can use.
//!
//! Errors name the key (`what`, usually the file name) and say what is wrong in terms an operator can act on. A
//! key of the wrong kind (a private key given as a recipient, a public key given to decrypt) is recognised and
//! reported as such, because that is the mistake operators make most.

mod der;
mod jwk;
mod pem;

use crate::exit::{Classify, ExitStatus};
use p256::elliptic_curve::sec1::ToEncodedPoint;
use pkcs8::ObjectIdentifier;
use pkcs8::der::oid::AssociatedOid;
use std::fmt;

/// Largest key file accepted: far above any real key, small enough that parsing it stays cheap.
pub const MAX_KEY_FILE_LEN: usize = 1 << 20;
/// Smallest RSA modulus a layer key is wrapped for. Smaller keys are factorable; decrypting with one (an old
/// image) is still allowed.
pub const MIN_RSA_WRAP_BITS: usize = 2048;
/// Largest RSA modulus accepted: the `rsa` crate's default of 4096 would refuse real 8192-bit keys, and anything
/// beyond 16384 bits only makes every operation slow.
pub const MAX_RSA_BITS: usize = 16384;

const PRIVATE_GIVEN: &str = "this is a private key, but a public key is needed here; give the recipient's public \
                             key (`openssl pkey -in KEY -pubout` prints it)";
const PUBLIC_GIVEN: &str = "this is a public key, but decryption needs the matching private key";
const CERTIFICATE_GIVEN_FOR_PUBLIC: &str = "this is an X.509 certificate, but a JWE recipient is a public key; \
                                            extract it with `openssl x509 -in CERT -pubkey -noout`";
const CERTIFICATE_GIVEN_FOR_PRIVATE: &str =
    "this is an X.509 certificate, but decryption needs the matching private key";

/// The elliptic curves keys may be on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Curve {
    /// NIST P-256 (secp256r1, prime256v1).
    P256,
    /// NIST P-384 (secp384r1).
    P384,
    /// NIST P-521 (secp521r1).
    P521,
}

impl Curve {
    /// The curve's name in JWK `crv` members: `P-256`, `P-384`, `P-521`.
    pub fn jwk_name(self) -> &'static str {
        match self {
            Curve::P256 => "P-256",
            Curve::P384 => "P-384",
            Curve::P521 => "P-521",
        }
    }

    /// The curve named by a JWK `crv` member.
    pub fn from_jwk_name(name: &str) -> Option<Self> {
        [Curve::P256, Curve::P384, Curve::P521].into_iter().find(|c| c.jwk_name() == name)
    }

    /// Length in bytes of a field element: of each coordinate, of a private scalar, of an ECDH shared secret.
    pub fn field_len(self) -> usize {
        match self {
            Curve::P256 => 32,
            Curve::P384 => 48,
            Curve::P521 => 66,
        }
    }

    fn from_oid(oid: ObjectIdentifier) -> Option<Self> {
        match oid {
            p256::NistP256::OID => Some(Curve::P256),
            p384::NistP384::OID => Some(Curve::P384),
            p521::NistP521::OID => Some(Curve::P521),
            _ => None,
        }
    }
}

impl fmt::Display for Curve {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.jwk_name())
    }
}

/// A public key a layer key can be wrapped for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PublicKey {
    /// RSA (any size up to [`MAX_RSA_BITS`]).
    Rsa(rsa::RsaPublicKey),
    /// EC on P-256.
    P256(p256::PublicKey),
    /// EC on P-384.
    P384(p384::PublicKey),
    /// EC on P-521.
    P521(p521::PublicKey),
}

impl PublicKey {
    /// The curve of an EC key; `None` for RSA.
    pub fn curve(&self) -> Option<Curve> {
        match self {
            PublicKey::Rsa(_) => None,
            PublicKey::P256(_) => Some(Curve::P256),
            PublicKey::P384(_) => Some(Curve::P384),
            PublicKey::P521(_) => Some(Curve::P521),
        }
    }

    /// A short description for messages: `RSA-2048`, `EC P-256`.
    pub fn description(&self) -> String {
        match self {
            PublicKey::Rsa(key) => {
                use rsa::traits::PublicKeyParts;
                format!("RSA-{}", key.n().bits())
            }
            _ => format!("EC {}", self.curve().map_or("", Curve::jwk_name)),
        }
    }

    /// The affine coordinates of an EC key, each [`Curve::field_len`] bytes (as JWK `x` and `y` carry them).
    pub fn coordinates(&self) -> Option<(Curve, Vec<u8>, Vec<u8>)> {
        // The uncompressed SEC1 encoding is 0x04 ‖ x ‖ y; a public key is never the identity, which has no x/y.
        let point = match self {
            PublicKey::Rsa(_) => return None,
            PublicKey::P256(key) => key.to_encoded_point(false).as_bytes().to_vec(),
            PublicKey::P384(key) => key.to_encoded_point(false).as_bytes().to_vec(),
            PublicKey::P521(key) => key.to_encoded_point(false).as_bytes().to_vec(),
        };
        let curve = self.curve()?;
        let (x, y) = point.get(1..)?.split_at(curve.field_len());
        Some((curve, x.to_vec(), y.to_vec()))
    }

    /// The EC key with the given affine coordinates (each exactly [`Curve::field_len`] bytes); `None` unless the
    /// point is on the curve.
    pub fn from_coordinates(curve: Curve, x: &[u8], y: &[u8]) -> Option<Self> {
        if x.len() != curve.field_len() || y.len() != curve.field_len() {
            return None;
        }
        let point = [&[0x04], x, y].concat();
        Self::from_sec1_point(curve, &point)
    }

    /// The EC key with the given SEC1-encoded point (checked to be on the curve).
    fn from_sec1_point(curve: Curve, point: &[u8]) -> Option<Self> {
        match curve {
            Curve::P256 => p256::PublicKey::from_sec1_bytes(point).ok().map(PublicKey::P256),
            Curve::P384 => p384::PublicKey::from_sec1_bytes(point).ok().map(PublicKey::P384),
            Curve::P521 => p521::PublicKey::from_sec1_bytes(point).ok().map(PublicKey::P521),
        }
    }
}

/// A recipient of a wrapped layer key: the public key and, when it came from a JWK, its `alg` and `kid`, which
/// choose the key-management algorithm and label the recipient in a JWE (docs/formats.md).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecipientKey {
    /// The public key.
    pub key: PublicKey,
    /// The JWK's `alg`, already checked to suit the key type; `None` picks the default (`RSA-OAEP` for RSA,
    /// `ECDH-ES+A256KW` for EC), as ocicrypt does.
    pub jwk_alg: Option<String>,
    /// The JWK's `kid`; PEM and DER keys never have one.
    pub kid: Option<String>,
}

impl From<PublicKey> for RecipientKey {
    fn from(key: PublicKey) -> Self {
        Self { key, jwk_alg: None, kid: None }
    }
}

/// A private key that unwraps layer keys. Each variant wipes its key material on drop; `Debug` shows only the
/// key type and size.
#[derive(Clone)]
#[allow(clippy::large_enum_variant, reason = "a handful of keys per process; boxing buys nothing")]
pub enum PrivateKey {
    /// RSA.
    Rsa(rsa::RsaPrivateKey),
    /// EC on P-256.
    P256(p256::SecretKey),
    /// EC on P-384.
    P384(p384::SecretKey),
    /// EC on P-521.
    P521(p521::SecretKey),
}

impl PrivateKey {
    /// The matching public key.
    pub fn public_key(&self) -> PublicKey {
        match self {
            PrivateKey::Rsa(key) => PublicKey::Rsa(key.to_public_key()),
            PrivateKey::P256(key) => PublicKey::P256(key.public_key()),
            PrivateKey::P384(key) => PublicKey::P384(key.public_key()),
            PrivateKey::P521(key) => PublicKey::P521(key.public_key()),
        }
    }

    /// The curve of an EC key; `None` for RSA.
    pub fn curve(&self) -> Option<Curve> {
        match self {
            PrivateKey::Rsa(_) => None,
            PrivateKey::P256(_) => Some(Curve::P256),
            PrivateKey::P384(_) => Some(Curve::P384),
            PrivateKey::P521(_) => Some(Curve::P521),
        }
    }
}

impl fmt::Debug for PrivateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The rsa crate's derived Debug would print the private exponent and primes.
        write!(f, "PrivateKey({}, [REDACTED])", self.public_key().description())
    }
}

/// How a key file is encoded, told from its first bytes.
enum Encoding<'a> {
    Jwk(&'a str),
    Pem(&'a str),
    Der(&'a [u8]),
}

fn encoding(bytes: &[u8]) -> Result<Encoding<'_>, String> {
    if bytes.len() > MAX_KEY_FILE_LEN {
        return Err(format!("larger than {} MiB; not a key", MAX_KEY_FILE_LEN >> 20));
    }
    if bytes.trim_ascii().is_empty() {
        return Err("empty; not a key".into());
    }
    let text = || std::str::from_utf8(bytes).map_err(|_| "not a key: text that is not UTF-8".to_owned());
    if bytes.trim_ascii_start().starts_with(b"{") {
        Ok(Encoding::Jwk(text()?))
    } else if pem::looks_like_pem(bytes) {
        Ok(Encoding::Pem(text()?))
    } else {
        Ok(Encoding::Der(bytes))
    }
}

/// What a private key file's structure says, before any password: whether to ask for one, and whether Go's
/// ocicrypt (which nodes run) can read the file. Callers decide on this, never on the wording of a parse error.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct KeyFileShape {
    /// Encrypted PKCS#8 (PEM `ENCRYPTED PRIVATE KEY`, or DER): a password opens it.
    pub password_protected: bool,
    /// OpenSSL's legacy `Proc-Type: 4,ENCRYPTED` PEM encryption, which cryptadm does not read.
    pub legacy_pem_encryption: bool,
    /// PEM `EC PRIVATE KEY` (SEC1): cryptadm reads it, ocicrypt reads SEC1 only as DER.
    pub sec1_pem: bool,
}

/// Tells the [`KeyFileShape`] of a key file; anything that is no PEM or DER private key has the default shape.
pub fn key_file_shape(bytes: &[u8]) -> KeyFileShape {
    let mut shape = KeyFileShape::default();
    match encoding(bytes) {
        Ok(Encoding::Pem(text)) => {
            for block in pem::blocks(text).unwrap_or_default() {
                shape.legacy_pem_encryption |= block.legacy_encrypted;
                shape.password_protected |= block.label == "ENCRYPTED PRIVATE KEY";
                shape.sec1_pem |= block.label == "EC PRIVATE KEY" && !block.legacy_encrypted;
            }
        }
        Ok(Encoding::Der(der)) => shape.password_protected = der::kind(der) == der::Kind::EncryptedPkcs8,
        Ok(Encoding::Jwk(_)) | Err(_) => {}
    }
    shape
}

/// A key file that cannot be used: unparseable, the wrong kind (a public key where a private one is needed), an
/// unsupported algorithm or curve. Never carries key material.
#[derive(Debug, thiserror::Error)]
#[error("{what}: {problem}")]
pub struct KeyError {
    /// Which key (a file name or recipient spec).
    pub what: String,
    /// Why it cannot be used.
    pub problem: String,
    /// The key is encrypted and the password given does not open it (an authentication failure, not a bad file).
    pub wrong_password: bool,
}

impl Classify for KeyError {
    fn status(&self) -> ExitStatus {
        if self.wrong_password { ExitStatus::Unauthenticated } else { ExitStatus::InvalidInput }
    }
}

/// The `alg` values a JWK key file may carry (RFC 7518 key-management algorithms for RSA and EC keys).
#[cfg(test)]
pub(crate) fn jwk_key_algorithms() -> impl Iterator<Item = &'static str> {
    jwk::allowed_algorithms()
}

fn invalid(what: &str, problem: String) -> KeyError {
    KeyError { what: what.to_owned(), wrong_password: problem == der::WRONG_PASSWORD, problem }
}

/// Reads a recipient's public key: DER SubjectPublicKeyInfo or PKCS#1 `RSAPublicKey`, PEM `PUBLIC KEY` or `RSA
/// PUBLIC KEY`, or a public JWK (whose `alg` and `kid` are kept). `what` names the key in errors.
///
/// # Errors
/// [`KeyError`] for anything else, saying why: a private key or certificate instead of a public key, an
/// unsupported key type or curve, an RSA key under [`MIN_RSA_WRAP_BITS`], a JWK `alg` unsuited to the key, or
/// bytes that are no key at all.
pub fn parse_public_key(bytes: &[u8], what: &str) -> Result<RecipientKey, KeyError> {
    let recipient = match encoding(bytes).map_err(|p| invalid(what, p))? {
        Encoding::Jwk(text) => jwk::public(text),
        Encoding::Pem(text) => public_from_pem(text).map(RecipientKey::from),
        Encoding::Der(der) => public_from_der(der).map(RecipientKey::from),
    }
    .map_err(|p| invalid(what, p))?;
    check_wrapping_strength(&recipient.key).map_err(|p| invalid(what, p))?;
    Ok(recipient)
}

/// Reads a private key: DER or PEM PKCS#8 (`PRIVATE KEY`), encrypted PKCS#8 (`ENCRYPTED PRIVATE KEY`, which needs
/// `password`), PKCS#1 (`RSA PRIVATE KEY`), SEC1 (`EC PRIVATE KEY`), or a private JWK. `password` is ignored for
/// keys that are not encrypted. `what` names the key in errors.
///
/// # Errors
/// [`KeyError`] for anything else, saying why: a public key or certificate instead of a private key, a
/// missing or wrong password, OpenSSL's legacy PEM encryption, an unsupported key type or curve, or bytes that are
/// no key at all.
pub fn parse_private_key(bytes: &[u8], password: Option<&[u8]>, what: &str) -> Result<PrivateKey, KeyError> {
    match encoding(bytes).map_err(|p| invalid(what, p))? {
        Encoding::Jwk(text) => jwk::private(text),
        Encoding::Pem(text) => private_from_pem(text, password),
        Encoding::Der(der) => private_from_der(der, password),
    }
    .map_err(|p| invalid(what, p))
}

fn public_from_pem(text: &str) -> Result<PublicKey, String> {
    for block in pem::blocks(text)? {
        match block.label.as_str() {
            "PUBLIC KEY" => return der::public_from_spki(&block.der),
            "RSA PUBLIC KEY" => return der::public_from_pkcs1(&block.der),
            "PRIVATE KEY" | "ENCRYPTED PRIVATE KEY" | "RSA PRIVATE KEY" | "EC PRIVATE KEY" | "OPENSSH PRIVATE KEY" => {
                return Err(PRIVATE_GIVEN.into());
            }
            "CERTIFICATE" | "TRUSTED CERTIFICATE" => return Err(CERTIFICATE_GIVEN_FOR_PUBLIC.into()),
            "EC PARAMETERS" => continue,
            other => return Err(unsupported_pem(other)),
        }
    }
    Err("the PEM file holds no key".into())
}

fn private_from_pem(text: &str, password: Option<&[u8]>) -> Result<PrivateKey, String> {
    for block in pem::blocks(text)? {
        if block.legacy_encrypted {
            return Err(legacy_encrypted(&block.label));
        }
        match block.label.as_str() {
            "PRIVATE KEY" => return der::private_from_pkcs8(&block.der),
            "ENCRYPTED PRIVATE KEY" => return der::private_from_encrypted_pkcs8(&block.der, password),
            "RSA PRIVATE KEY" => return der::private_from_pkcs1(&block.der),
            "EC PRIVATE KEY" => return der::private_from_sec1(&block.der),
            "PUBLIC KEY" | "RSA PUBLIC KEY" => return Err(PUBLIC_GIVEN.into()),
            "CERTIFICATE" | "TRUSTED CERTIFICATE" => return Err(CERTIFICATE_GIVEN_FOR_PRIVATE.into()),
            "EC PARAMETERS" => continue,
            other => return Err(unsupported_pem(other)),
        }
    }
    Err("the PEM file holds no key".into())
}

fn public_from_der(bytes: &[u8]) -> Result<PublicKey, String> {
    match der::kind(bytes) {
        der::Kind::Spki => der::public_from_spki(bytes),
        der::Kind::Pkcs1Public => der::public_from_pkcs1(bytes),
        der::Kind::Certificate => Err(CERTIFICATE_GIVEN_FOR_PUBLIC.into()),
        kind if kind.is_private() => Err(PRIVATE_GIVEN.into()),
        _ => Err(NOT_A_KEY.into()),
    }
}

fn private_from_der(bytes: &[u8], password: Option<&[u8]>) -> Result<PrivateKey, String> {
    match der::kind(bytes) {
        der::Kind::Pkcs8 => der::private_from_pkcs8(bytes),
        der::Kind::EncryptedPkcs8 => der::private_from_encrypted_pkcs8(bytes, password),
        der::Kind::Pkcs1Private => der::private_from_pkcs1(bytes),
        der::Kind::Sec1 => der::private_from_sec1(bytes),
        der::Kind::Certificate => Err(CERTIFICATE_GIVEN_FOR_PRIVATE.into()),
        kind if kind.is_public() => Err(PUBLIC_GIVEN.into()),
        _ => Err(NOT_A_KEY.into()),
    }
}

const NOT_A_KEY: &str = "not a key: expected PEM, DER (PKCS#8, PKCS#1, SEC1 or SubjectPublicKeyInfo) or a JWK";

fn unsupported_pem(label: &str) -> String {
    format!("unsupported PEM block `{label}`; expected a PEM public or private key")
}

fn legacy_encrypted(label: &str) -> String {
    format!(
        "the `{label}` uses OpenSSL's legacy PEM encryption, which is not supported; convert it with \
         `openssl pkcs8 -topk8 -v2 aes-256-cbc -in KEY -out KEY.p8` (keeps it encrypted, in PKCS#8)"
    )
}

fn check_wrapping_strength(key: &PublicKey) -> Result<(), String> {
    if let PublicKey::Rsa(rsa) = key {
        use rsa::traits::PublicKeyParts;
        let bits = rsa.n().bits();
        if bits < MIN_RSA_WRAP_BITS {
            return Err(format!(
                "the RSA key has {bits} bits, too few to protect a layer key; use at least {MIN_RSA_WRAP_BITS}"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
