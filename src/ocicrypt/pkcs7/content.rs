//! The content encryption of an EnvelopedData: AES-GCM as Go writes and reads it, and what the Go reader also
//! accepts from other producers (AES-CBC from OpenSSL, AES-GCM with RFC 5084 parameters).

use super::tlv::{self, INTEGER, OCTET_STRING, SEQUENCE, Tlv};
use super::{malformed, unsupported};
use crate::crypto::SecretBytes;
use crate::crypto::aead::{GCM_NONCE_LEN, GCM_TAG_LEN};
use crate::ocicrypt::Error;
use aes::cipher::{BlockDecrypt, KeyInit, generic_array::GenericArray};
use aes_gcm::aead::AeadInPlace;
use der::Decode;
use der::asn1::ObjectIdentifier;
use zeroize::Zeroizing;

/// aes128-GCM (RFC 5084), the content cipher ocicrypt writes.
pub(super) const AES128_GCM: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.1.6");
/// aes256-GCM (RFC 5084).
const AES256_GCM: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.1.46");
/// aes128-CBC (RFC 3565), what `openssl cms -encrypt -aes128` writes.
const AES128_CBC: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.1.2");
/// aes192-CBC (RFC 3565).
const AES192_CBC: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.1.22");
/// aes256-CBC (RFC 3565), what `openssl cms -encrypt -aes256` writes.
const AES256_CBC: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.1.42");

/// Length of the content key ocicrypt uses (AES-128).
pub(super) const AES128_KEY_LEN: usize = 16;
/// The AES block size, also the CBC IV length.
const AES_BLOCK_LEN: usize = 16;

/// The block cipher and mode of the content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Aes128Gcm,
    Aes256Gcm,
    Aes128Cbc,
    Aes192Cbc,
    Aes256Cbc,
}

/// A content-encryption algorithm with its parameters, as read from an EncryptedContentInfo.
#[derive(Clone, Debug)]
pub(super) struct ContentEncryption {
    mode: Mode,
    /// The GCM nonce or the CBC IV.
    iv: Vec<u8>,
}

impl ContentEncryption {
    /// Interprets the contentEncryptionAlgorithm; `parameters` is its raw parameters element, if any.
    pub(super) fn parse(oid: ObjectIdentifier, parameters: Option<Tlv<'_>>) -> Result<Self, Error> {
        let mode = match oid {
            AES128_GCM => Mode::Aes128Gcm,
            AES256_GCM => Mode::Aes256Gcm,
            AES128_CBC => Mode::Aes128Cbc,
            AES192_CBC => Mode::Aes192Cbc,
            AES256_CBC => Mode::Aes256Cbc,
            other => {
                return Err(unsupported(format!(
                    "content encryption algorithm {other} (supported: AES-128/256-GCM, AES-128/192/256-CBC)"
                )));
            }
        };
        let parameters = parameters.ok_or_else(|| malformed("the content encryption algorithm has no parameters"))?;
        let iv = match mode {
            Mode::Aes128Gcm | Mode::Aes256Gcm => gcm_nonce(parameters)?,
            Mode::Aes128Cbc | Mode::Aes192Cbc | Mode::Aes256Cbc => cbc_iv(parameters)?,
        };
        Ok(Self { mode, iv })
    }

    /// The length of the content key this algorithm takes, which a correctly decrypted key must have.
    pub(super) fn key_len(&self) -> usize {
        match self.mode {
            Mode::Aes128Gcm | Mode::Aes128Cbc => 16,
            Mode::Aes192Cbc => 24,
            Mode::Aes256Gcm | Mode::Aes256Cbc => 32,
        }
    }

    /// Decrypts the content; `None` when the key does not fit (GCM tag or CBC padding wrong).
    pub(super) fn decrypt(&self, key: &[u8], ciphertext: &[u8]) -> Option<SecretBytes> {
        match self.mode {
            Mode::Aes128Gcm => gcm_open::<aes_gcm::Aes128Gcm>(key, &self.iv, ciphertext),
            Mode::Aes256Gcm => gcm_open::<aes_gcm::Aes256Gcm>(key, &self.iv, ciphertext),
            Mode::Aes128Cbc => cbc_open::<aes::Aes128>(key, &self.iv, ciphertext),
            Mode::Aes192Cbc => cbc_open::<aes::Aes192>(key, &self.iv, ciphertext),
            Mode::Aes256Cbc => cbc_open::<aes::Aes256>(key, &self.iv, ciphertext),
        }
    }
}

/// The GCM nonce from either parameter form:
///
/// * Go (go.mozilla.org/pkcs7 and smallstep/pkcs7) marshals `{[4] IMPLICIT nonce, INTEGER icvLen}` and stores the
///   resulting SEQUENCE as the *content* of a primitive universal-16 element (`10 13 30 11 84 0c …`);
/// * RFC 5084 makes the parameters that SEQUENCE itself, with a universal OCTET STRING nonce (`30 11 04 0c …`),
///   and lets `icvLen` default to 12.
fn gcm_nonce(parameters: Tlv<'_>) -> Result<Vec<u8>, Error> {
    const GO_WRAPPER: u8 = 0x10;
    const GO_NONCE: u8 = 0x84;
    let mut fields = match parameters.tag {
        GO_WRAPPER => {
            let mut wrapped = parameters.content;
            let sequence = tlv::read_tagged(&mut wrapped, SEQUENCE, "AES-GCM parameters")?;
            tlv::expect_end(wrapped, "AES-GCM parameters")?;
            sequence.content
        }
        SEQUENCE => parameters.content,
        other => return Err(malformed(format!("AES-GCM parameters: unexpected tag 0x{other:02x}"))),
    };
    let nonce = tlv::read(&mut fields)?;
    if nonce.tag != OCTET_STRING && nonce.tag != GO_NONCE {
        return Err(malformed(format!("AES-GCM nonce: unexpected tag 0x{:02x}", nonce.tag)));
    }
    let tag_len = if fields.is_empty() {
        12
    } else {
        let integer = tlv::read_tagged(&mut fields, INTEGER, "AES-GCM tag length")?;
        u8::from_der(integer.encoded).map_err(|_| malformed("AES-GCM tag length is not a small integer"))?
    };
    tlv::expect_end(fields, "AES-GCM parameters")?;
    // Go's reader insists on exactly these sizes too (cipher.NewGCM: 12-byte nonce, 16-byte tag).
    if nonce.content.len() != GCM_NONCE_LEN || usize::from(tag_len) != GCM_TAG_LEN {
        return Err(unsupported(format!(
            "AES-GCM with a {}-byte nonce and a {tag_len}-byte tag (only 12 and 16 are supported)",
            nonce.content.len()
        )));
    }
    Ok(nonce.content.to_vec())
}

/// The CBC IV: an OCTET STRING of one block (RFC 3565).
fn cbc_iv(parameters: Tlv<'_>) -> Result<Vec<u8>, Error> {
    if parameters.tag != OCTET_STRING || parameters.content.len() != AES_BLOCK_LEN {
        return Err(malformed("AES-CBC parameters are not a 16-byte IV"));
    }
    Ok(parameters.content.to_vec())
}

fn gcm_open<A: AeadInPlace + KeyInit>(key: &[u8], nonce: &[u8], sealed: &[u8]) -> Option<SecretBytes> {
    if sealed.len() < GCM_TAG_LEN {
        return None;
    }
    let cipher = A::new_from_slice(key).ok()?;
    let mut buffer = SecretBytes::new(sealed.to_vec());
    cipher.decrypt_in_place(GenericArray::from_slice(nonce), b"", &mut *buffer).ok()?;
    Some(buffer)
}

fn cbc_open<C: BlockDecrypt + KeyInit>(key: &[u8], iv: &[u8], ciphertext: &[u8]) -> Option<SecretBytes> {
    if ciphertext.is_empty() || !ciphertext.len().is_multiple_of(AES_BLOCK_LEN) {
        return None;
    }
    let cipher = C::new_from_slice(key).ok()?;
    let mut buffer = SecretBytes::new(ciphertext.to_vec());
    let mut previous: &[u8] = iv;
    for (block, input) in buffer.chunks_exact_mut(AES_BLOCK_LEN).zip(ciphertext.chunks_exact(AES_BLOCK_LEN)) {
        cipher.decrypt_block(GenericArray::from_mut_slice(block));
        block.iter_mut().zip(previous).for_each(|(byte, chain)| *byte ^= chain);
        previous = input;
    }
    strip_padding(buffer)
}

/// Removes PKCS#7 padding (RFC 5652 §6.3); `None` when it is not well formed.
fn strip_padding(mut buffer: SecretBytes) -> Option<SecretBytes> {
    let pad = usize::from(*buffer.last()?);
    if pad == 0 || pad > AES_BLOCK_LEN || pad > buffer.len() {
        return None;
    }
    let body = buffer.len() - pad;
    if buffer[body..].iter().any(|&byte| usize::from(byte) != pad) {
        return None;
    }
    // Truncating keeps the plaintext in the same wiping allocation.
    buffer.truncate(body);
    Some(buffer)
}

/// The output of [`seal_aes128gcm`]: what goes into the EncryptedContentInfo, and the key to hand to recipients.
pub(super) struct Sealed {
    /// The fresh content key.
    pub key: Zeroizing<[u8; AES128_KEY_LEN]>,
    /// The parameters element, in Go's form.
    pub parameters: Vec<u8>,
    /// `ciphertext ‖ tag`.
    pub ciphertext: Vec<u8>,
}

/// Encrypts `plaintext` with a fresh AES-128 key and nonce, as ocicrypt does (no associated data).
pub(super) fn seal_aes128gcm(plaintext: &[u8]) -> Sealed {
    let key = Zeroizing::new(crate::crypto::random::bytes::<AES128_KEY_LEN>());
    let nonce = crate::crypto::random::bytes::<GCM_NONCE_LEN>();
    let cipher = aes_gcm::Aes128Gcm::new(GenericArray::from_slice(key.as_ref()));
    let mut ciphertext = Vec::with_capacity(plaintext.len() + GCM_TAG_LEN);
    ciphertext.extend_from_slice(plaintext);
    cipher
        .encrypt_in_place(GenericArray::from_slice(&nonce), b"", &mut ciphertext)
        .expect("AES-GCM encryption cannot fail below 64 GiB");
    Sealed { key, parameters: go_gcm_parameters(&nonce), ciphertext }
}

/// Go's GCM parameters: `10 13 30 11 84 0c <nonce> 02 01 10`. Go's reader takes the *content* of whatever element
/// is there and unmarshals it as `{[4] nonce, INTEGER}`, so the standard form (`30 11 04 0c …`) fails there
/// (skopeo rejects it, docs/formats.md); this exact shape is what every ocicrypt version reads.
pub(super) fn go_gcm_parameters(nonce: &[u8; GCM_NONCE_LEN]) -> Vec<u8> {
    let fields = tlv::write_all(SEQUENCE, &[&tlv::write(0x84, nonce), &tlv::write(INTEGER, &[GCM_TAG_LEN as u8])]);
    tlv::write(0x10, &fields)
}

/// The RFC 5084 parameters, which cryptadm never writes: for tests of the reader.
#[cfg(test)]
pub(super) fn rfc5084_gcm_parameters(nonce: &[u8; GCM_NONCE_LEN]) -> Vec<u8> {
    tlv::write_all(SEQUENCE, &[&tlv::write(OCTET_STRING, nonce), &tlv::write(INTEGER, &[GCM_TAG_LEN as u8])])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(oid: ObjectIdentifier, parameters: &[u8]) -> Result<ContentEncryption, Error> {
        let mut input = parameters;
        ContentEncryption::parse(oid, Some(tlv::read(&mut input).unwrap()))
    }

    #[test]
    fn go_parameters_are_byte_exact() {
        let nonce = [0xa5; 12];
        let mut expected = vec![0x10, 0x13, 0x30, 0x11, 0x84, 0x0c];
        expected.extend_from_slice(&nonce);
        expected.extend_from_slice(&[0x02, 0x01, 0x10]);
        assert_eq!(go_gcm_parameters(&nonce), expected);
    }

    #[test]
    fn both_gcm_parameter_forms_give_the_nonce() {
        let nonce = [7u8; 12];
        for parameters in [go_gcm_parameters(&nonce), rfc5084_gcm_parameters(&nonce)] {
            let parsed = parse(AES128_GCM, &parameters).unwrap();
            assert_eq!((parsed.mode, parsed.iv.as_slice()), (Mode::Aes128Gcm, &nonce[..]));
        }
    }

    #[test]
    fn odd_gcm_parameters_are_refused() {
        let nonce = [7u8; 12];
        // An RFC 5084 SEQUENCE without icvLen means a 12-byte tag, which Go refuses as well.
        let short_tag = tlv::write(SEQUENCE, &tlv::write(OCTET_STRING, &nonce));
        let long_nonce = tlv::write_all(SEQUENCE, &[&tlv::write(OCTET_STRING, &[0; 16]), &[0x02, 0x01, 0x10]]);
        let wrong_tag = tlv::write(0x31, &rfc5084_gcm_parameters(&nonce)[2..]);
        for bad in [short_tag, long_nonce, wrong_tag] {
            assert!(matches!(parse(AES128_GCM, &bad), Err(Error::MalformedWrappedKey { .. })), "{bad:02x?}");
        }
        assert!(ContentEncryption::parse(AES128_GCM, None).is_err());
    }

    #[test]
    fn seal_then_open() {
        let sealed = seal_aes128gcm(b"private options");
        let encryption = parse(AES128_GCM, &sealed.parameters).unwrap();
        assert_eq!(encryption.key_len(), AES128_KEY_LEN);
        assert_eq!(&encryption.decrypt(sealed.key.as_ref(), &sealed.ciphertext).unwrap()[..], b"private options");
        assert!(encryption.decrypt(&[0; 16], &sealed.ciphertext).is_none());
        assert!(encryption.decrypt(&[0; 32], &sealed.ciphertext).is_none(), "a key of the wrong length is refused");
    }

    #[test]
    fn padding_rules() {
        let strip = |bytes: &[u8]| strip_padding(SecretBytes::new(bytes.to_vec())).map(|b| b.to_vec());
        assert_eq!(strip(&[1, 2, 3, 1]), Some(vec![1, 2, 3]));
        assert_eq!(strip(&[16; 16]), Some(vec![]));
        assert_eq!(strip(&[1, 2, 3, 0]), None);
        assert_eq!(strip(&[1, 2, 1, 2]), None);
        assert_eq!(strip(&[17; 17]), None);
        assert_eq!(strip(&[]), None);
    }
}
