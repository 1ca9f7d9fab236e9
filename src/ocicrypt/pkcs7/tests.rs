//! Unit tests of the PKCS#7 key wrapper, with the test-only keys in tests/fixtures/pkcs7/.

use super::*;
use aes::cipher::{BlockEncrypt, KeyInit, generic_array::GenericArray};
use aes_gcm::aead::AeadInPlace;
use rsa::pkcs8::DecodePrivateKey;

macro_rules! fixture {
    ($name:literal) => {
        include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/pkcs7/", $name))
    };
}

/// What ocicrypt wraps: private options JSON, 193 bytes for a sha256 digest (docs/formats.md).
const PRIVATE_OPTIONS: &[u8] = br#"{"symkey":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=","digest":"sha256:a27bf37cd685bd9528417aa3b952ed9203c81c26a8c8f21970e41dcb7c56a7ac","cipheroptions":{"nonce":"8PHy8/T19vf4+fr7/P3+/w=="}}"#;

struct Party {
    key: RsaPrivateKey,
    certificate: Certificate,
}

impl Party {
    fn pair(&self) -> (RsaPrivateKey, Certificate) {
        (self.key.clone(), self.certificate.clone())
    }

    fn certificate_key(&self) -> RsaPublicKey {
        rsa_public_key(&self.certificate).unwrap()
    }
}

fn party(certificate: &[u8], key: &[u8]) -> Party {
    Party {
        key: RsaPrivateKey::from_pkcs8_pem(std::str::from_utf8(key).unwrap()).unwrap(),
        certificate: parse_certificate(certificate, "fixture").unwrap(),
    }
}

fn alice() -> Party {
    party(fixture!("alice.pem"), fixture!("alice.key"))
}

fn bob() -> Party {
    party(fixture!("bob.pem"), fixture!("bob.key"))
}

fn carol() -> Party {
    party(fixture!("carol.pem"), fixture!("carol.key"))
}

fn unwrapped(party: &Party, der: &[u8]) -> Option<Vec<u8>> {
    unwrap(&[party.pair()], der).unwrap().map(|plaintext| plaintext.to_vec())
}

/// The children of the EnvelopedData SEQUENCE inside a ContentInfo: version, RecipientInfos, EncryptedContentInfo.
fn enveloped_data(der: &[u8]) -> Vec<Tlv<'_>> {
    let mut input = der;
    let mut content_info = tlv::read_tagged(&mut input, SEQUENCE, "test").unwrap().content;
    assert!(input.is_empty());
    tlv::read_tagged(&mut content_info, OID, "test").unwrap();
    let mut explicit = tlv::read_tagged(&mut content_info, 0xa0, "test").unwrap().content;
    children(tlv::read_tagged(&mut explicit, SEQUENCE, "test").unwrap().content)
}

fn children(mut content: &[u8]) -> Vec<Tlv<'_>> {
    let mut out = Vec::new();
    while !content.is_empty() {
        out.push(tlv::read(&mut content).unwrap());
    }
    out
}

/// The issuer and serial number each RecipientInfo names, in encoded order.
fn recipient_order(der: &[u8]) -> Vec<IssuerAndSerialNumber> {
    let parts = enveloped_data(der);
    children(parts[1].content)
        .iter()
        .map(|element| match KeyTransRecipientInfo::from_der(element.encoded).unwrap().rid {
            RecipientIdentifier::IssuerAndSerialNumber(id) => id,
            other => panic!("unexpected recipient identifier {other:?}"),
        })
        .collect()
}

/// Assembles a ContentInfo from parts, for inputs that `wrap` never writes.
fn envelope(recipient_infos: Vec<Vec<u8>>, algorithm: &[u8], encrypted_content: &[u8]) -> Vec<u8> {
    let content_info = tlv::write_all(SEQUENCE, &[&DATA.to_der().unwrap(), algorithm, encrypted_content]);
    let enveloped = tlv::write_all(SEQUENCE, &[&[INTEGER, 1, 0], &set_of(recipient_infos), &content_info]);
    tlv::write_all(SEQUENCE, &[&ENVELOPED_DATA.to_der().unwrap(), &tlv::write(0xa0, &enveloped)])
}

fn algorithm(oid: &str, parameters: &[u8]) -> Vec<u8> {
    tlv::write_all(SEQUENCE, &[&ObjectIdentifier::new_unwrap(oid).to_der().unwrap(), parameters])
}

fn gcm_seal(key: &[u8], nonce: &[u8; 12], plaintext: &[u8]) -> Vec<u8> {
    let mut buffer = plaintext.to_vec();
    match key.len() {
        16 => aes_gcm::Aes128Gcm::new_from_slice(key).unwrap().encrypt_in_place(
            GenericArray::from_slice(nonce),
            b"",
            &mut buffer,
        ),
        32 => aes_gcm::Aes256Gcm::new_from_slice(key).unwrap().encrypt_in_place(
            GenericArray::from_slice(nonce),
            b"",
            &mut buffer,
        ),
        _ => unreachable!(),
    }
    .unwrap();
    buffer
}

fn cbc_seal(key: &[u8; 32], iv: &[u8; 16], plaintext: &[u8]) -> Vec<u8> {
    let cipher = aes::Aes256::new(GenericArray::from_slice(key));
    let pad = 16 - plaintext.len() % 16;
    let mut buffer = plaintext.to_vec();
    buffer.resize(plaintext.len() + pad, pad as u8);
    let mut chain = *iv;
    for block in buffer.chunks_exact_mut(16) {
        block.iter_mut().zip(chain).for_each(|(byte, previous)| *byte ^= previous);
        cipher.encrypt_block(GenericArray::from_mut_slice(block));
        chain.copy_from_slice(block);
    }
    buffer
}

#[test]
fn round_trip_one_recipient() {
    let alice = alice();
    let der = wrap(std::slice::from_ref(&alice.certificate), PRIVATE_OPTIONS).unwrap();
    assert_eq!(unwrapped(&alice, &der).as_deref(), Some(PRIVATE_OPTIONS));
}

#[test]
fn round_trip_three_recipients() {
    let parties = [alice(), bob(), carol()];
    let certificates: Vec<_> = parties.iter().map(|party| party.certificate.clone()).collect();
    let der = wrap(&certificates, PRIVATE_OPTIONS).unwrap();
    assert_eq!(recipient_order(&der).len(), 3);
    for party in &parties {
        assert_eq!(unwrapped(party, &der).as_deref(), Some(PRIVATE_OPTIONS));
    }
    // Several pairs: the one that fits is found whatever its position.
    let pairs = [bob().pair(), carol().pair()];
    assert_eq!(unwrap(&pairs, &der).unwrap().as_deref().map(|p| p.to_vec()), Some(PRIVATE_OPTIONS.to_vec()));
}

#[test]
fn recipients_are_in_der_set_order_whatever_the_argument_order() {
    let [a, b, c] = [alice().certificate, bob().certificate, carol().certificate];
    let orders = [[&a, &b, &c], [&c, &b, &a], [&b, &c, &a]];
    let wrapped: Vec<_> = orders
        .iter()
        .map(|order| wrap(&order.iter().map(|&cert| cert.clone()).collect::<Vec<_>>(), b"x").unwrap())
        .collect();
    for der in &wrapped {
        let parts = enveloped_data(der);
        let encodings: Vec<&[u8]> = children(parts[1].content).iter().map(|element| element.encoded).collect();
        assert!(encodings.is_sorted(), "RecipientInfos are not in DER SET OF order");
        assert_eq!(recipient_order(der), recipient_order(&wrapped[0]));
    }
}

#[test]
fn structure_is_what_go_writes() {
    let der = wrap(&[alice().certificate], PRIVATE_OPTIONS).unwrap();
    let parts = enveloped_data(&der);
    assert_eq!(parts.len(), 3);
    assert_eq!(parts[0].encoded, [0x02, 0x01, 0x00], "EnvelopedData version 0");

    let recipient = children(children(parts[1].content)[0].content);
    assert_eq!(recipient[0].encoded, [0x02, 0x01, 0x00], "RecipientInfo version 0");
    let id = IssuerAndSerialNumber::from_der(recipient[1].encoded).unwrap();
    assert_eq!(id, issuer_and_serial_number(&alice().certificate));
    // rsaEncryption without the NULL that OpenSSL would add.
    assert_eq!(recipient[2].encoded, [0x30, 0x0b, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01]);
    assert_eq!((recipient[3].tag, recipient[3].content.len()), (OCTET_STRING, 256));

    let content_info = children(parts[2].content);
    assert_eq!(content_info[0].encoded, DATA.to_der().unwrap());
    let algorithm = children(content_info[1].content);
    assert_eq!(algorithm[0].encoded, content::AES128_GCM.to_der().unwrap());
    let parameters = algorithm[1].encoded;
    assert_eq!(parameters.len(), 21);
    assert_eq!(parameters[..6], [0x10, 0x13, 0x30, 0x11, 0x84, 0x0c]);
    assert_eq!(parameters[18..], [0x02, 0x01, 0x10]);
    assert_eq!((content_info[2].tag, content_info[2].content.len()), (0x80, PRIVATE_OPTIONS.len() + 16));
}

#[test]
fn every_wrap_uses_fresh_keys() {
    let certificate = [alice().certificate];
    assert_ne!(wrap(&certificate, b"same").unwrap(), wrap(&certificate, b"same").unwrap());
}

#[test]
fn a_key_that_is_not_a_recipient_does_not_fit() {
    let der = wrap(&[alice().certificate, carol().certificate], PRIVATE_OPTIONS).unwrap();
    assert_eq!(unwrapped(&bob(), &der), None);
    assert!(unwrap(&[], &der).unwrap().is_none());
    // Alice's certificate with Bob's key: a pair that does not belong together is skipped.
    assert!(unwrap(&[(bob().key, alice().certificate)], &der).unwrap().is_none());
}

#[test]
fn bob_and_alice_differ_only_by_serial_and_carol_shares_alice_serial() {
    let der = wrap(&[bob().certificate], b"for bob").unwrap();
    assert_eq!(unwrapped(&alice(), &der), None);
    let der = wrap(&[carol().certificate], b"for carol").unwrap();
    assert_eq!(unwrapped(&alice(), &der), None);
    assert_eq!(unwrapped(&carol(), &der).as_deref(), Some(&b"for carol"[..]));
}

#[test]
fn tampering_means_no_fit_not_a_distinct_error() {
    let alice = alice();
    let der = wrap(std::slice::from_ref(&alice.certificate), PRIVATE_OPTIONS).unwrap();
    // The last byte is the GCM tag's; a byte inside encryptedKey is an RSA (padding) failure.
    let encrypted_key_offset = der.windows(4).position(|w| w == [0x04, 0x82, 0x01, 0x00]).unwrap() + 10;
    for offset in [der.len() - 1, der.len() - 40, encrypted_key_offset] {
        let mut bad = der.clone();
        bad[offset] ^= 0x01;
        assert!(matches!(unwrap(&[alice.pair()], &bad), Ok(None)), "offset {offset}");
    }
}

#[test]
fn garbage_is_malformed() {
    let der = wrap(&[alice().certificate], PRIVATE_OPTIONS).unwrap();
    let mut trailing = der.clone();
    trailing.push(0);
    let signed_data = tlv::write_all(
        SEQUENCE,
        &[&ObjectIdentifier::new_unwrap("1.2.840.113549.1.7.2").to_der().unwrap(), &tlv::write(0xa0, &[0x30, 0])],
    );
    let inputs: Vec<(&str, Vec<u8>)> = vec![
        ("empty", vec![]),
        ("text", b"not pkcs7 at all".to_vec()),
        ("truncated", der[..der.len() - 1].to_vec()),
        ("half", der[..der.len() / 2].to_vec()),
        ("trailing", trailing),
        ("certificate", fixture!("alice.der").to_vec()),
        ("signedData", signed_data),
        ("too large", vec![0x30; MAX_WRAPPED_LEN + 1]),
    ];
    for (name, input) in inputs {
        let result = unwrap(&[alice().pair()], &input);
        assert!(matches!(result, Err(Error::MalformedWrappedKey { .. })), "{name}: {result:?}");
    }
}

#[test]
fn reads_rfc5084_parameters_and_segmented_content() {
    let alice = alice();
    let key = [0x42u8; 16];
    let nonce = [9u8; 12];
    let ciphertext = gcm_seal(&key, &nonce, PRIVATE_OPTIONS);
    let recipients = || vec![recipient_info(&alice.certificate, &alice.certificate_key(), &key).unwrap()];
    let rfc = algorithm("2.16.840.1.101.3.4.1.6", &content::rfc5084_gcm_parameters(&nonce));
    let primitive = tlv::write(0x80, &ciphertext);
    let (first, second) = ciphertext.split_at(50);
    // go.mozilla.org/pkcs7 writes one segment; BER allows several, and Go's reader joins them.
    let segmented = tlv::write_all(0xa0, &[&tlv::write(OCTET_STRING, first), &tlv::write(OCTET_STRING, second)]);
    let go = algorithm("2.16.840.1.101.3.4.1.6", &content::go_gcm_parameters(&nonce));
    for (algorithm, content) in [(&rfc, &primitive), (&go, &segmented), (&rfc, &segmented)] {
        let der = envelope(recipients(), algorithm, content);
        assert_eq!(unwrapped(&alice, &der).as_deref(), Some(PRIVATE_OPTIONS));
    }
}

#[test]
fn reads_aes256_gcm_and_cbc_and_oaep() {
    let alice = alice();
    let key = [0x17u8; 32];
    let nonce = [3u8; 12];
    let iv = [5u8; 16];
    let oaep = KeyTransRecipientInfo {
        version: CmsVersion::V0,
        rid: RecipientIdentifier::IssuerAndSerialNumber(issuer_and_serial_number(&alice.certificate)),
        key_enc_alg: AlgorithmIdentifierOwned {
            oid: ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.7"),
            parameters: Some(
                Any::from_der(&rsa::pkcs1::RsaOaepParams::new::<sha2::Sha256>().to_der().unwrap()).unwrap(),
            ),
        },
        enc_key: OctetString::new(
            alice.certificate_key().encrypt(&mut OsRng, rsa::Oaep::new::<sha2::Sha256>(), &key).unwrap(),
        )
        .unwrap(),
    }
    .to_der()
    .unwrap();
    let pkcs1 = recipient_info(&alice.certificate, &alice.certificate_key(), &key).unwrap();
    let gcm = (
        algorithm("2.16.840.1.101.3.4.1.46", &content::go_gcm_parameters(&nonce)),
        gcm_seal(&key, &nonce, PRIVATE_OPTIONS),
    );
    let cbc =
        (algorithm("2.16.840.1.101.3.4.1.42", &tlv::write(OCTET_STRING, &iv)), cbc_seal(&key, &iv, PRIVATE_OPTIONS));
    for recipient in [&oaep, &pkcs1] {
        for (algorithm, ciphertext) in [&gcm, &cbc] {
            let der = envelope(vec![recipient.clone()], algorithm, &tlv::write(0x80, ciphertext));
            assert_eq!(unwrapped(&alice, &der).as_deref(), Some(PRIVATE_OPTIONS));
        }
    }
    // A content key of the wrong length for the cipher is a failed decryption, not an error.
    let short = recipient_info(&alice.certificate, &alice.certificate_key(), &key[..16]).unwrap();
    let der = envelope(vec![short], &gcm.0, &tlv::write(0x80, &gcm.1));
    assert_eq!(unwrapped(&alice, &der), None);
}

#[test]
fn unsupported_content_cipher_is_an_error() {
    let alice = alice();
    let des3 = algorithm("1.2.840.113549.3.7", &tlv::write(OCTET_STRING, &[0; 8]));
    let recipient = recipient_info(&alice.certificate, &alice.certificate_key(), &[0; 24]).unwrap();
    let der = envelope(vec![recipient], &des3, &tlv::write(0x80, &[0; 16]));
    let error = unwrap(&[alice.pair()], &der).unwrap_err().to_string();
    assert!(error.contains("unsupported content encryption algorithm 1.2.840.113549.3.7"), "{error}");
}

#[test]
fn certificates_in_pem_and_der() {
    let from_pem = parse_certificate(fixture!("alice.pem"), "alice.pem").unwrap();
    let from_der = parse_certificate(fixture!("alice.der"), "alice.der").unwrap();
    assert_eq!(from_pem, from_der);
    let mut with_text = b"subject=CN = alice\n".to_vec();
    with_text.extend_from_slice(fixture!("alice.pem"));
    with_text.extend_from_slice(fixture!("alice.key"));
    assert_eq!(parse_certificate(&with_text, "bundle").unwrap(), from_pem);
    let error = parse_certificate(fixture!("alice.key"), "alice.key").unwrap_err();
    assert!(matches!(&error, Error::InvalidKey { what, .. } if what == "alice.key"), "{error:?}");
    assert!(parse_certificate(b"", "empty").is_err());
}

#[test]
fn non_rsa_certificates_parse_but_cannot_be_recipients() {
    let ec = parse_certificate(fixture!("ec.pem"), "ec.pem").unwrap();
    let error = wrap(&[alice().certificate, ec], b"x").unwrap_err();
    assert!(matches!(error, Error::InvalidKey { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        "certificate `CN=ec`: its public key is an EC key, but PKCS#7 recipients need an RSA certificate"
    );
}

#[test]
fn no_recipients_is_an_error() {
    assert!(matches!(wrap(&[], b"x"), Err(Error::Wrap { .. })));
}
