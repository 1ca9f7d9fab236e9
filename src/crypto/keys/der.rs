//! DER key structures: SubjectPublicKeyInfo, PKCS#1 (RSA public and private), PKCS#8 (plain and encrypted) and
//! SEC1 `ECPrivateKey`, plus enough of X.509 to recognise a certificate given where a key was expected.
//!
//! Each `*_from_*` function expects its structure and says what is wrong inside it; [`kind`] tells which
//! structure some DER is, so that a wrong-kind key is reported as such rather than as garbage.

use super::{Curve, MAX_RSA_BITS, PrivateKey, PublicKey};
use pkcs8::ObjectIdentifier;
use pkcs8::der::Decode;
use pkcs8::der::asn1::AnyRef;
use pkcs8::{pkcs5, spki};
use rsa::{BigUint, RsaPrivateKey, RsaPublicKey};

/// rsaEncryption (PKCS#1): the only RSA algorithm identifier usable for encryption.
const RSA_ENCRYPTION: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.1");
/// id-ecPublicKey (RFC 5480): an EC key whose curve is named in the parameters.
const EC_PUBLIC_KEY: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.2.1");

/// Which DER structure a byte string holds (structure only; the key inside may still be invalid).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// SubjectPublicKeyInfo (`PUBLIC KEY`).
    Spki,
    /// PKCS#1 `RSAPublicKey`.
    Pkcs1Public,
    /// PKCS#8 `PrivateKeyInfo` (`PRIVATE KEY`).
    Pkcs8,
    /// PKCS#8 `EncryptedPrivateKeyInfo` (`ENCRYPTED PRIVATE KEY`).
    EncryptedPkcs8,
    /// PKCS#1 `RSAPrivateKey`.
    Pkcs1Private,
    /// SEC1 `ECPrivateKey`.
    Sec1,
    /// An X.509 certificate.
    Certificate,
    /// None of the above.
    Unknown,
}

impl Kind {
    /// Whether this structure holds a private key.
    pub(super) fn is_private(self) -> bool {
        matches!(self, Kind::Pkcs8 | Kind::EncryptedPkcs8 | Kind::Pkcs1Private | Kind::Sec1)
    }

    /// Whether this structure holds only public material.
    pub(super) fn is_public(self) -> bool {
        matches!(self, Kind::Spki | Kind::Pkcs1Public | Kind::Certificate)
    }
}

/// Tells which structure `der` holds by decoding it structurally with each candidate (they are disjoint).
pub(super) fn kind(der: &[u8]) -> Kind {
    if spki::SubjectPublicKeyInfoRef::from_der(der).is_ok() {
        Kind::Spki
    } else if pkcs8::PrivateKeyInfo::from_der(der).is_ok() {
        Kind::Pkcs8
    } else if pkcs8::EncryptedPrivateKeyInfo::from_der(der).is_ok() {
        Kind::EncryptedPkcs8
    } else if rsa::pkcs1::RsaPrivateKey::from_der(der).is_ok() {
        Kind::Pkcs1Private
    } else if rsa::pkcs1::RsaPublicKey::from_der(der).is_ok() {
        Kind::Pkcs1Public
    } else if sec1::EcPrivateKey::from_der(der).is_ok() {
        Kind::Sec1
    } else if x509_cert::Certificate::from_der(der).is_ok() {
        Kind::Certificate
    } else {
        Kind::Unknown
    }
}

/// A SubjectPublicKeyInfo holding an RSA key or an EC key on a supported curve.
pub(super) fn public_from_spki(der: &[u8]) -> Result<PublicKey, String> {
    let spki = spki::SubjectPublicKeyInfoRef::from_der(der).map_err(|e| format!("malformed public key: {e}"))?;
    let bits = spki.subject_public_key.as_bytes().ok_or("malformed public key: the key bits are not whole bytes")?;
    match spki.algorithm.oid {
        RSA_ENCRYPTION => public_from_pkcs1(bits),
        EC_PUBLIC_KEY => {
            let curve = curve_of(spki.algorithm.parameters)?;
            PublicKey::from_sec1_point(curve, bits)
                .ok_or_else(|| format!("the {curve} public key is not a valid point"))
        }
        other => Err(unsupported_algorithm(other)),
    }
}

/// A PKCS#1 `RSAPublicKey`. Moduli up to [`MAX_RSA_BITS`] are accepted (the `rsa` crate's default stops at 4096).
pub(super) fn public_from_pkcs1(der: &[u8]) -> Result<PublicKey, String> {
    let key = rsa::pkcs1::RsaPublicKey::from_der(der).map_err(|e| format!("malformed RSA public key: {e}"))?;
    let n = BigUint::from_bytes_be(key.modulus.as_bytes());
    let e = BigUint::from_bytes_be(key.public_exponent.as_bytes());
    RsaPublicKey::new_with_max_size(n, e, MAX_RSA_BITS)
        .map(PublicKey::Rsa)
        .map_err(|e| format!("unusable RSA public key: {e}"))
}

/// A PKCS#8 `PrivateKeyInfo` holding an RSA key or an EC key on a supported curve.
pub(super) fn private_from_pkcs8(der: &[u8]) -> Result<PrivateKey, String> {
    let info = pkcs8::PrivateKeyInfo::from_der(der).map_err(|e| format!("malformed PKCS#8 private key: {e}"))?;
    match info.algorithm.oid {
        RSA_ENCRYPTION => {
            let key = RsaPrivateKey::try_from(info).map_err(|e| format!("unusable RSA private key: {e}"))?;
            checked_rsa(key)
        }
        EC_PUBLIC_KEY => {
            let curve = curve_of(info.algorithm.parameters)?;
            let invalid = |e: pkcs8::Error| format!("unusable {curve} private key: {e}");
            Ok(match curve {
                Curve::P256 => PrivateKey::P256(p256::SecretKey::try_from(info).map_err(invalid)?),
                Curve::P384 => PrivateKey::P384(p384::SecretKey::try_from(info).map_err(invalid)?),
                Curve::P521 => PrivateKey::P521(p521::SecretKey::try_from(info).map_err(invalid)?),
            })
        }
        other => Err(unsupported_algorithm(other)),
    }
}

/// What a failed decryption of an encrypted PKCS#8 key says: a wrong password almost always fails the CBC padding,
/// rarely the DER parse, and a damaged file looks the same. `keys::parse_private_key` recognises this exact value
/// to report an authentication failure rather than an unusable file.
pub(super) const WRONG_PASSWORD: &str = "wrong password for the encrypted private key (or the key file is damaged)";

/// A PKCS#8 `EncryptedPrivateKeyInfo` (PBES2), decrypted with `password`.
pub(super) fn private_from_encrypted_pkcs8(der: &[u8], password: Option<&[u8]>) -> Result<PrivateKey, String> {
    let info = pkcs8::EncryptedPrivateKeyInfo::from_der(der)
        .map_err(|e| format!("malformed encrypted PKCS#8 private key: {e}"))?;
    let password = password.ok_or("this private key is encrypted; give its password")?;
    check_kdf_cost(&info.encryption_algorithm)?;
    // The decrypted document wipes itself on drop.
    let plain = info.decrypt(password).map_err(|e| match e {
        pkcs8::Error::EncryptedPrivateKey(
            pkcs5::Error::UnsupportedAlgorithm { .. } | pkcs5::Error::NoPbes1CryptSupport,
        ) => "the private key is encrypted with an unsupported scheme; re-encrypt it with \
              `openssl pkcs8 -topk8 -v2 aes-256-cbc`"
            .to_owned(),
        _ => WRONG_PASSWORD.to_owned(),
    })?;
    private_from_pkcs8(plain.as_bytes()).map_err(|_| WRONG_PASSWORD.to_owned())
}

/// Most PBKDF2 iterations accepted: real files use 2,048 (OpenSSL) to a few hundred thousand; the `pkcs5` crate's
/// own limit of 100 million would let a hostile key file stall decryption for a minute.
const MAX_PBKDF2_ITERATIONS: u32 = 10_000_000;
/// Most memory scrypt may use (128 · r · N bytes): 1 GiB, far above OpenSSL's default of 32 MiB.
const MAX_SCRYPT_MEMORY: u128 = 1 << 30;

/// Refuses key-derivation parameters that would take minutes or gigabytes before the password is even checked.
fn check_kdf_cost(scheme: &pkcs5::EncryptionScheme<'_>) -> Result<(), String> {
    use pkcs5::pbes2::Kdf;
    let pkcs5::EncryptionScheme::Pbes2(parameters) = scheme else {
        return Ok(()); // PBES1 is refused as unsupported when decrypting.
    };
    let affordable = match &parameters.kdf {
        Kdf::Pbkdf2(pbkdf2) => pbkdf2.iteration_count <= MAX_PBKDF2_ITERATIONS,
        Kdf::Scrypt(scrypt) => {
            let memory = 128 * u128::from(scrypt.block_size) * u128::from(scrypt.cost_parameter);
            memory <= MAX_SCRYPT_MEMORY && scrypt.parallelization <= 16
        }
        // A KDF added to `pkcs5` later: decryption refuses what it cannot compute.
        _ => true,
    };
    if affordable {
        Ok(())
    } else {
        Err("the private key's password derivation is set to cost more than any real key file's; refusing it".into())
    }
}

/// A PKCS#1 `RSAPrivateKey` (two primes).
pub(super) fn private_from_pkcs1(der: &[u8]) -> Result<PrivateKey, String> {
    use rsa::pkcs1::DecodeRsaPrivateKey;
    let key = RsaPrivateKey::from_pkcs1_der(der).map_err(|e| format!("unusable PKCS#1 RSA private key: {e}"))?;
    checked_rsa(key)
}

/// A SEC1 `ECPrivateKey`; it must name its curve (OpenSSL always does).
pub(super) fn private_from_sec1(der: &[u8]) -> Result<PrivateKey, String> {
    let key = sec1::EcPrivateKey::from_der(der).map_err(|e| format!("malformed SEC1 EC private key: {e}"))?;
    let oid = key
        .parameters
        .and_then(|p| p.named_curve())
        .ok_or("the SEC1 EC private key does not name its curve; convert it with `openssl pkcs8 -topk8 -nocrypt`")?;
    let curve = Curve::from_oid(oid).ok_or_else(|| unsupported_curve(oid))?;
    let invalid = |e: pkcs8::der::Error| format!("unusable {curve} private key: {e}");
    Ok(match curve {
        Curve::P256 => PrivateKey::P256(p256::SecretKey::try_from(key).map_err(invalid)?),
        Curve::P384 => PrivateKey::P384(p384::SecretKey::try_from(key).map_err(invalid)?),
        Curve::P521 => PrivateKey::P521(p521::SecretKey::try_from(key).map_err(invalid)?),
    })
}

/// Refuses RSA private keys larger than any public key we accept: only a mistake (or an attempt to make
/// decryption slow) produces one.
fn checked_rsa(key: RsaPrivateKey) -> Result<PrivateKey, String> {
    use rsa::traits::PublicKeyParts;
    let bits = key.n().bits();
    if bits > MAX_RSA_BITS {
        return Err(format!("the RSA key has {bits} bits; at most {MAX_RSA_BITS} are supported"));
    }
    Ok(PrivateKey::Rsa(key))
}

/// The named curve in an id-ecPublicKey algorithm identifier's parameters.
fn curve_of(parameters: Option<AnyRef<'_>>) -> Result<Curve, String> {
    let oid = parameters
        .and_then(|p| p.decode_as::<ObjectIdentifier>().ok())
        .ok_or("the EC key does not name its curve (explicit curve parameters are not supported)")?;
    Curve::from_oid(oid).ok_or_else(|| unsupported_curve(oid))
}

fn unsupported_curve(oid: ObjectIdentifier) -> String {
    let name = match oid.to_string().as_str() {
        "1.3.132.0.10" => "secp256k1".to_owned(),
        "1.2.840.10045.3.1.1" => "P-192".to_owned(),
        "1.3.132.0.33" => "P-224".to_owned(),
        "1.3.36.3.3.2.8.1.1.7" => "brainpoolP256r1".to_owned(),
        "1.3.36.3.3.2.8.1.1.11" => "brainpoolP384r1".to_owned(),
        "1.3.36.3.3.2.8.1.1.13" => "brainpoolP512r1".to_owned(),
        _ => format!("with OID {oid}"),
    };
    format!("unsupported curve {name}; use an EC key on P-256, P-384 or P-521")
}

fn unsupported_algorithm(oid: ObjectIdentifier) -> String {
    let name = match oid.to_string().as_str() {
        "1.3.101.110" => "X25519".to_owned(),
        "1.3.101.111" => "X448".to_owned(),
        "1.3.101.112" => "Ed25519".to_owned(),
        "1.3.101.113" => "Ed448".to_owned(),
        "1.2.840.113549.1.1.10" => "RSASSA-PSS (a signing-only RSA key)".to_owned(),
        "1.2.840.10040.4.1" => "DSA".to_owned(),
        _ => format!("with OID {oid}"),
    };
    format!("unsupported key type {name}; use an RSA key or an EC key on P-256, P-384 or P-521")
}
