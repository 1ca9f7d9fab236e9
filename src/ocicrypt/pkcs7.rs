//! The PKCS#7 key wrapper (annotation `org.opencontainers.image.enc.keys.pkcs7`): a CMS EnvelopedData that
//! carries a layer's private options to the holders of X.509 certificates (docs/formats.md).
//!
//! Writing reproduces ocicrypt's structure byte for byte (only the random values differ): one RecipientInfo per
//! certificate (RSA PKCS#1 v1.5 of a fresh AES-128 key, `rsaEncryption` without parameters), sorted as a DER SET
//! OF, and AES-128-GCM content with Go's peculiar parameter encoding, which every Go reader needs and the RFC 5084
//! form breaks. Of the two `encryptedContent` forms Go has written, we write the primitive one (see [`wrap`]).
//!
//! Reading accepts what the Go reader accepts from real producers: Go's own output (both `encryptedContent`
//! forms), OpenSSL `cms -encrypt -outform DER` (AES-CBC, PKCS#1 v1.5 or OAEP), and AES-GCM with RFC 5084
//! parameters. DES and 3DES, which Go still decrypts, are refused as broken.

mod content;
mod key_transport;
mod tlv;

use crate::crypto::SecretBytes;
use crate::ocicrypt::Error;
use cms::cert::IssuerAndSerialNumber;
use cms::content_info::{CmsVersion, ContentInfo};
use cms::enveloped_data::{KeyTransRecipientInfo, RecipientIdentifier, RecipientInfo};
use content::ContentEncryption;
use der::asn1::{ObjectIdentifier, OctetString};
use der::{Any, Decode, Encode, Tag, Tagged};
use key_transport::KeyTransport;
use rsa::pkcs8::DecodePublicKey;
use rsa::rand_core::OsRng;
use rsa::{Pkcs1v15Encrypt, RsaPrivateKey, RsaPublicKey};
use tlv::{INTEGER, OCTET_STRING, OID, SEQUENCE, SET, Tlv};
use x509_cert::Certificate;
use x509_cert::der::DecodePem;
use x509_cert::spki::AlgorithmIdentifierOwned;

/// The key wrapper's name, as in `pkcs7:CERT` and the annotation suffix.
pub const SCHEME: &str = "pkcs7";
/// Largest wrapped key [`unwrap`] reads. A real one is about 650 bytes for one RSA-2048 recipient plus 300 per
/// further recipient; anything near this bound is not a key wrapper of a layer.
pub const MAX_WRAPPED_LEN: usize = 1 << 20;
/// Largest certificate file [`parse_certificate`] reads; real ones are a few kilobytes.
pub const MAX_CERTIFICATE_LEN: usize = 1 << 20;

/// id-envelopedData (RFC 5652).
const ENVELOPED_DATA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.7.3");
/// id-data (RFC 5652): the type of the encrypted content.
const DATA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.7.1");
/// `[0] IMPLICIT OCTET STRING`, primitive: the encryptedContent form we write.
const ENCRYPTED_CONTENT: u8 = 0x80;
/// `[0]` constructed, holding OCTET STRING segments: the BER form go.mozilla.org/pkcs7 writes.
const ENCRYPTED_CONTENT_SEGMENTED: u8 = 0xa0;
/// `[0] IMPLICIT OriginatorInfo` before the recipients.
const ORIGINATOR_INFO: u8 = 0xa0;
/// `[1] IMPLICIT UnprotectedAttributes` after the encrypted content.
const UNPROTECTED_ATTRIBUTES: u8 = 0xa1;

/// An error about a wrapped key that cannot be read.
fn malformed(problem: impl Into<String>) -> Error {
    Error::MalformedWrappedKey { scheme: SCHEME.to_owned(), problem: problem.into() }
}

/// An error about a wrapped key that is well formed but uses an algorithm we do not implement.
fn unsupported(what: impl std::fmt::Display) -> Error {
    malformed(format!("unsupported {what}"))
}

/// Reads an X.509 certificate in PEM (the first `CERTIFICATE` block; text around it is ignored, as Go does) or
/// DER. `what` names it in errors (a file name). Any key type is accepted here; [`wrap`] refuses non-RSA keys.
pub fn parse_certificate(bytes: &[u8], what: &str) -> Result<Certificate, Error> {
    let invalid = |problem: String| Error::InvalidKey { what: what.to_owned(), problem };
    if bytes.len() > MAX_CERTIFICATE_LEN {
        return Err(invalid(format!("larger than {MAX_CERTIFICATE_LEN} bytes; not a certificate")));
    }
    match pem_certificate(bytes) {
        Some(pem) => Certificate::from_pem(pem),
        None => Certificate::from_der(bytes),
    }
    .map_err(|e| invalid(format!("not an X.509 certificate in PEM or DER: {e}")))
}

/// The first PEM `CERTIFICATE` block in `bytes`, if there is one.
fn pem_certificate(bytes: &[u8]) -> Option<&[u8]> {
    const BEGIN: &[u8] = b"-----BEGIN CERTIFICATE-----";
    const END: &[u8] = b"-----END CERTIFICATE-----";
    let start = bytes.windows(BEGIN.len()).position(|window| window == BEGIN)?;
    let length = bytes[start..].windows(END.len()).position(|window| window == END)? + END.len();
    Some(&bytes[start..start + length])
}

/// Wraps `plaintext` (a layer's private options) for every certificate in `recipients`: the DER ContentInfo of
/// an EnvelopedData, exactly as containers/ocicrypt writes it (docs/formats.md).
///
/// Every certificate must hold an RSA key ([`Error::InvalidKey`] otherwise); at least one is needed.
pub fn wrap(recipients: &[Certificate], plaintext: &[u8]) -> Result<Vec<u8>, Error> {
    if recipients.is_empty() {
        return Err(Error::Wrap { scheme: SCHEME.to_owned(), problem: "no recipient certificates".to_owned() });
    }
    let keys = recipients.iter().map(rsa_public_key).collect::<Result<Vec<_>, _>>()?;
    let sealed = content::seal_aes128gcm(plaintext);
    let recipient_infos = recipients
        .iter()
        .zip(&keys)
        .map(|(certificate, key)| recipient_info(certificate, key, sealed.key.as_ref()))
        .collect::<Result<Vec<_>, _>>()?;
    let encrypted_content_info = tlv::write_all(
        SEQUENCE,
        &[
            &DATA.to_der().map_err(encoding_failed)?,
            &tlv::write_all(SEQUENCE, &[&content::AES128_GCM.to_der().map_err(encoding_failed)?, &sealed.parameters]),
            // Primitive [0] IMPLICIT, as RFC 5652 §6.1 and DER want and current smallstep/pkcs7 writes. Older Go
            // writers (go.mozilla.org/pkcs7 in ocicrypt ≤ 1.2.0, so Debian's skopeo) wrap it in a constructed
            // [0], a BER form, but their reader takes this one too: skopeo 1.9.3 decrypts it
            // (tests/cli/interop_pkcs7.rs).
            &tlv::write(ENCRYPTED_CONTENT, &sealed.ciphertext),
        ],
    );
    let version = [INTEGER, 1, 0];
    let enveloped_data = [&version[..], &set_of(recipient_infos), &encrypted_content_info].concat();
    let content = Any::new(Tag::Sequence, enveloped_data).map_err(encoding_failed)?;
    ContentInfo { content_type: ENVELOPED_DATA, content }.to_der().map_err(encoding_failed)
}

fn encoding_failed(error: der::Error) -> Error {
    Error::Wrap { scheme: SCHEME.to_owned(), problem: format!("DER encoding failed: {error}") }
}

/// The certificate's RSA public key, or why it cannot be a PKCS#7 recipient.
fn rsa_public_key(certificate: &Certificate) -> Result<RsaPublicKey, Error> {
    let info = &certificate.tbs_certificate.subject_public_key_info;
    let invalid = |problem: String| Error::InvalidKey {
        what: format!("certificate `{}`", certificate.tbs_certificate.subject),
        problem,
    };
    if info.algorithm.oid != key_transport::RSA_ENCRYPTION {
        return Err(invalid(format!(
            "its public key is {}, but PKCS#7 recipients need an RSA certificate",
            key_algorithm_name(info.algorithm.oid)
        )));
    }
    let der = info.to_der().map_err(|e| invalid(format!("cannot re-encode its public key: {e}")))?;
    RsaPublicKey::from_public_key_der(&der).map_err(|e| invalid(format!("unusable RSA public key: {e}")))
}

fn key_algorithm_name(oid: ObjectIdentifier) -> String {
    const EC: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.2.1");
    const ED25519: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.101.112");
    const ED448: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.101.113");
    const DSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10040.4.1");
    match oid {
        EC => "an EC key".to_owned(),
        ED25519 => "an Ed25519 key".to_owned(),
        ED448 => "an Ed448 key".to_owned(),
        DSA => "a DSA key".to_owned(),
        other => format!("of algorithm {other}"),
    }
}

/// One DER-encoded RecipientInfo: the content key under the certificate's RSA key, PKCS#1 v1.5.
fn recipient_info(certificate: &Certificate, key: &RsaPublicKey, content_key: &[u8]) -> Result<Vec<u8>, Error> {
    let encrypted_key = key
        .encrypt(&mut OsRng, Pkcs1v15Encrypt, content_key)
        .map_err(|e| Error::Wrap { scheme: SCHEME.to_owned(), problem: format!("RSA encryption failed: {e}") })?;
    let info = KeyTransRecipientInfo {
        version: CmsVersion::V0,
        rid: RecipientIdentifier::IssuerAndSerialNumber(issuer_and_serial_number(certificate)),
        // Go's pkix.AlgorithmIdentifier without parameters: no NULL, unlike OpenSSL.
        key_enc_alg: AlgorithmIdentifierOwned { oid: key_transport::RSA_ENCRYPTION, parameters: None },
        enc_key: OctetString::new(encrypted_key).map_err(encoding_failed)?,
    };
    info.to_der().map_err(encoding_failed)
}

fn issuer_and_serial_number(certificate: &Certificate) -> IssuerAndSerialNumber {
    IssuerAndSerialNumber {
        issuer: certificate.tbs_certificate.issuer.clone(),
        serial_number: certificate.tbs_certificate.serial_number.clone(),
    }
}

/// A DER SET OF: the elements sorted by their encodings (X.690 §11.6), as Go's `encoding/asn1` does, so the
/// output does not depend on the order the recipients were given in. Complete TLVs are never prefixes of one
/// another, so a plain byte-wise sort is the DER order.
fn set_of(mut elements: Vec<Vec<u8>>) -> Vec<u8> {
    elements.sort();
    tlv::write(SET, &elements.concat())
}

/// Unwraps a PKCS#7 wrapped key with the first of `keys` — private keys, each with its certificate — that is
/// one of its recipients.
///
/// A recipient is found by the certificate's issuer and serial number (the first RecipientInfo naming them), as
/// Go does; a pair whose private key does not belong to its certificate is skipped. `Ok(None)`: the input is well formed but none of the keys fits (also
/// when a matching recipient's key or content does not decrypt: a failure of RSA decryption is deliberately not
/// told apart from a wrong content key). `Err(MalformedWrappedKey)`: the input cannot be parsed, is larger than
/// [`MAX_WRAPPED_LEN`], or uses algorithms not implemented here.
pub fn unwrap(keys: &[(RsaPrivateKey, Certificate)], der: &[u8]) -> Result<Option<SecretBytes>, Error> {
    if der.len() > MAX_WRAPPED_LEN {
        return Err(malformed(format!("larger than {MAX_WRAPPED_LEN} bytes")));
    }
    let envelope = Envelope::parse(der)?;
    for (key, certificate) in keys {
        if !key_belongs_to(key, certificate) {
            continue;
        }
        let wanted = issuer_and_serial_number(certificate);
        // Only the first RecipientInfo naming the certificate is tried, as Go does: it keeps the number of RSA
        // decryptions to one per key, however many copies of a recipient a crafted input repeats.
        let Some(recipient) = envelope.recipients.iter().find(|recipient| is_for(recipient, &wanted)) else {
            continue;
        };
        if let Some(plaintext) = envelope.open(key, recipient)? {
            return Ok(Some(plaintext));
        }
    }
    Ok(None)
}

fn key_belongs_to(key: &RsaPrivateKey, certificate: &Certificate) -> bool {
    rsa_public_key(certificate).is_ok_and(|public| public == key.to_public_key())
}

fn is_for(recipient: &KeyTransRecipientInfo, wanted: &IssuerAndSerialNumber) -> bool {
    matches!(&recipient.rid, RecipientIdentifier::IssuerAndSerialNumber(id) if id == wanted)
}

/// The parts of an EnvelopedData that decryption needs.
struct Envelope {
    /// The key-transport recipients; other kinds (key agreement, KEK, password) cannot name a certificate's RSA
    /// key and are left out.
    recipients: Vec<KeyTransRecipientInfo>,
    encryption: ContentEncryption,
    ciphertext: Vec<u8>,
}

impl Envelope {
    /// Parses a DER ContentInfo holding an EnvelopedData.
    ///
    /// The ContentInfo and each RecipientInfo go through `cms`; the EnvelopedData around them is walked by hand,
    /// because `cms::enveloped_data::EnvelopedData` cannot decode what ocicrypt writes: its AES-GCM parameters
    /// carry a tag `der` does not know (see `tlv`), and go.mozilla.org/pkcs7 writes encryptedContent in a BER form.
    fn parse(der: &[u8]) -> Result<Self, Error> {
        let info = ContentInfo::from_der(der).map_err(|e| malformed(format!("not a DER PKCS#7 ContentInfo: {e}")))?;
        if info.content_type != ENVELOPED_DATA {
            return Err(malformed(format!("content type {} is not envelopedData", info.content_type)));
        }
        if info.content.tag() != Tag::Sequence {
            return Err(malformed("the EnvelopedData is not a SEQUENCE"));
        }
        Self::parse_enveloped_data(info.content.value())
    }

    fn parse_enveloped_data(mut body: &[u8]) -> Result<Self, Error> {
        // The version is 0 from Go and 0 or 2 from OpenSSL; nothing here depends on it.
        tlv::read_tagged(&mut body, INTEGER, "EnvelopedData version")?;
        if tlv::peek(body) == Some(ORIGINATOR_INFO) {
            tlv::read(&mut body)?;
        }
        let recipients = recipient_infos(tlv::read_tagged(&mut body, SET, "RecipientInfos")?.content)?;
        let content_info = tlv::read_tagged(&mut body, SEQUENCE, "EncryptedContentInfo")?;
        if tlv::peek(body) == Some(UNPROTECTED_ATTRIBUTES) {
            tlv::read(&mut body)?;
        }
        tlv::expect_end(body, "EnvelopedData")?;
        let (encryption, ciphertext) = encrypted_content_info(content_info.content)?;
        Ok(Self { recipients, encryption, ciphertext })
    }

    /// Tries one recipient with one key. The RSA outcome and the content outcome are combined before anything
    /// branches on them (see [`KeyTransport::decrypt`]).
    fn open(&self, key: &RsaPrivateKey, recipient: &KeyTransRecipientInfo) -> Result<Option<SecretBytes>, Error> {
        let transport = KeyTransport::parse(&recipient.key_enc_alg)?;
        let (content_key, key_ok) = transport.decrypt(key, recipient.enc_key.as_bytes(), self.encryption.key_len());
        let plaintext = self.encryption.decrypt(&content_key, &self.ciphertext);
        let fits = key_ok & subtle::Choice::from(u8::from(plaintext.is_some()));
        Ok(if bool::from(fits) { plaintext } else { None })
    }
}

fn recipient_infos(mut set: &[u8]) -> Result<Vec<KeyTransRecipientInfo>, Error> {
    let mut recipients = Vec::new();
    while !set.is_empty() {
        // Decoded one by one rather than as a `SetOfVec`, which would insist on DER order: OpenSSL does not sort.
        let element = tlv::read(&mut set)?;
        match RecipientInfo::from_der(element.encoded) {
            Ok(RecipientInfo::Ktri(info)) => recipients.push(info),
            Ok(_) => {}
            Err(e) => return Err(malformed(format!("RecipientInfo: {e}"))),
        }
    }
    Ok(recipients)
}

/// The content encryption and the ciphertext of an EncryptedContentInfo.
fn encrypted_content_info(mut body: &[u8]) -> Result<(ContentEncryption, Vec<u8>), Error> {
    // The content type (id-data from every producer) says what the plaintext is, which is our caller's business.
    tlv::read_tagged(&mut body, OID, "EncryptedContentInfo content type")?;
    let mut algorithm = tlv::read_tagged(&mut body, SEQUENCE, "contentEncryptionAlgorithm")?.content;
    let oid = tlv::read_tagged(&mut algorithm, OID, "contentEncryptionAlgorithm")?;
    let oid =
        ObjectIdentifier::from_bytes(oid.content).map_err(|e| malformed(format!("content encryption OID: {e}")))?;
    let parameters = if algorithm.is_empty() { None } else { Some(tlv::read(&mut algorithm)?) };
    tlv::expect_end(algorithm, "contentEncryptionAlgorithm")?;
    let encryption = ContentEncryption::parse(oid, parameters)?;
    if body.is_empty() {
        return Err(malformed("no encrypted content (detached content is not supported)"));
    }
    let ciphertext = encrypted_content(tlv::read(&mut body)?)?;
    tlv::expect_end(body, "EncryptedContentInfo")?;
    Ok((encryption, ciphertext))
}

/// The encryptedContent octets from either form Go writes.
fn encrypted_content(element: Tlv<'_>) -> Result<Vec<u8>, Error> {
    match element.tag {
        ENCRYPTED_CONTENT => Ok(element.content.to_vec()),
        ENCRYPTED_CONTENT_SEGMENTED => {
            let mut segments = element.content;
            let mut ciphertext = Vec::with_capacity(segments.len());
            while !segments.is_empty() {
                ciphertext
                    .extend_from_slice(tlv::read_tagged(&mut segments, OCTET_STRING, "encryptedContent")?.content);
            }
            Ok(ciphertext)
        }
        other => Err(malformed(format!("encryptedContent: unexpected tag 0x{other:02x}"))),
    }
}

#[cfg(test)]
mod tests;

/// Who a wrapped key is for, without any key: each key-transport recipient's certificate issuer and serial number
/// (`image inspect`).
pub fn recipient_ids(der: &[u8]) -> Result<Vec<String>, Error> {
    if der.len() > MAX_WRAPPED_LEN {
        return Err(malformed(format!("larger than {MAX_WRAPPED_LEN} bytes")));
    }
    let envelope = Envelope::parse(der)?;
    Ok(envelope
        .recipients
        .iter()
        .map(|recipient| match &recipient.rid {
            RecipientIdentifier::IssuerAndSerialNumber(id) => issuer_and_serial_text(id),
            RecipientIdentifier::SubjectKeyIdentifier(ski) => {
                format!("subject key identifier {}", hex::encode(ski.0.as_bytes()))
            }
        })
        .collect())
}

/// How [`recipient_ids`] names the recipient `certificate` is (`image encrypt --remove-recipient` looks for it).
pub fn recipient_id(certificate: &Certificate) -> String {
    issuer_and_serial_text(&issuer_and_serial_number(certificate))
}

fn issuer_and_serial_text(id: &IssuerAndSerialNumber) -> String {
    format!("issuer \"{}\" serial {}", id.issuer, hex::encode(id.serial_number.as_bytes()))
}
