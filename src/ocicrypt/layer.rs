//! The layer cipher `AES_256_CTR_HMAC_SHA256` and its options (docs/formats.md#oci-image-layer-encryption-containersocicrypt).
//!
//! AES-256 in CTR mode with the 16-byte nonce as the initial counter block, incremented as one 128-bit
//! big-endian integer (Go's `cipher.NewCTR`), then HMAC-SHA-256 over the whole ciphertext keyed with the same
//! 32-byte key (encrypt-then-MAC). The ciphertext is as long as the plaintext: no header, no padding.
//!
//! Both directions stream. Decryption writes plaintext only into a sink the caller keeps private (a temporary
//! blob) and reports success only once the HMAC matched, so no unauthenticated byte is ever released; Go's
//! implementation hands out all but the last 10 KiB before it knows.

use super::Error;
use crate::crypto::encoding::{b64_decode_lenient, b64_encode};
use crate::crypto::parallel_hash::ParallelSha256;
use crate::crypto::random;
use hmac::{Hmac, Mac};
use serde_json::{Map, Value};
use sha2::Sha256;
use std::io::{self, Write};
use zeroize::Zeroizing;

/// The only cipher ocicrypt defines.
pub const CIPHER: &str = "AES_256_CTR_HMAC_SHA256";

/// The keystream, from `cryptadm-bulk`, where its loop is compiled optimised in every profile.
pub(super) use cryptadm_bulk::ctr::Aes256Ctr;
pub(super) type HmacSha256 = Hmac<Sha256>;

/// Checks a layer's HMAC, in constant time: the one check that authenticates every byte of a layer.
pub(super) fn verify_hmac(mac: HmacSha256, expected: &[u8]) -> Result<(), Error> {
    mac.verify_slice(expected).map_err(|_| {
        Error::Integrity("the layer's HMAC does not match its ciphertext (corrupted, truncated or tampered)".into())
    })
}

/// A layer's key and nonce: the secret half of the private options.
#[derive(Clone)]
pub struct LayerKey {
    symkey: Zeroizing<[u8; 32]>,
    nonce: [u8; 16],
}

impl std::fmt::Debug for LayerKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LayerKey([REDACTED])")
    }
}

impl LayerKey {
    /// A fresh random key and nonce.
    pub fn generate() -> Self {
        Self { symkey: Zeroizing::new(random::bytes::<32>()), nonce: random::bytes::<16>() }
    }

    /// A key from known bytes (test vectors, unwrapped private options).
    pub fn from_parts(symkey: [u8; 32], nonce: [u8; 16]) -> Self {
        Self { symkey: Zeroizing::new(symkey), nonce }
    }

    pub(super) fn cipher(&self) -> Aes256Ctr {
        Aes256Ctr::new(&self.symkey, &self.nonce)
    }

    pub(super) fn mac(&self) -> HmacSha256 {
        <HmacSha256 as Mac>::new_from_slice(&self.symkey[..]).expect("HMAC takes any key length")
    }
}

/// The private options: what key wrappers protect (docs/formats.md).
#[derive(Debug, Clone)]
pub struct PrivateOptions {
    /// Key and nonce.
    pub key: LayerKey,
    /// Digest of the plaintext layer (`sha256:…`). Written, never trusted on read.
    pub digest: String,
}

impl PrivateOptions {
    /// Serializes as Go's `json.Marshal` does: compact, fields in declaration order, bytes as standard base64.
    pub fn to_json(&self) -> Zeroizing<Vec<u8>> {
        let json = format!(
            r#"{{"symkey":"{}","digest":"{}","cipheroptions":{{"nonce":"{}"}}}}"#,
            Zeroizing::new(b64_encode(&self.key.symkey[..])).as_str(),
            json_escape(&self.digest),
            b64_encode(&self.key.nonce)
        );
        Zeroizing::new(json.into_bytes())
    }

    /// Parses private options with Go's leniency: field names in any case, unknown fields ignored. The nonce is
    /// taken from the public options first, then the private ones (Go's order).
    pub fn from_json(bytes: &[u8], public: &PublicOptions) -> Result<Self, Error> {
        let malformed = |what: &str| Error::Malformed(format!("layer private options: {what}"));
        let parsed: Value = serde_json::from_slice(bytes).map_err(|_| malformed("not a JSON object"))?;
        let object = parsed.as_object().ok_or_else(|| malformed("not a JSON object"))?;
        let symkey_text = get_ci(object, "symkey").and_then(Value::as_str).ok_or_else(|| malformed("no symkey"))?;
        let symkey = Zeroizing::new(b64_decode_lenient(symkey_text).map_err(|_| malformed("symkey is not base64"))?);
        let symkey: [u8; 32] = symkey.as_slice().try_into().map_err(|_| malformed("symkey is not 32 bytes"))?;
        let digest = get_ci(object, "digest").and_then(Value::as_str).unwrap_or_default().to_owned();
        let private_nonce = get_ci(object, "cipheroptions").and_then(Value::as_object).and_then(|o| o.get("nonce"));
        let nonce_text = public
            .nonce
            .as_deref()
            .or_else(|| private_nonce.and_then(Value::as_str))
            .ok_or_else(|| malformed("no nonce"))?;
        let nonce = b64_decode_lenient(nonce_text).map_err(|_| malformed("nonce is not base64"))?;
        let nonce: [u8; 16] = nonce.as_slice().try_into().map_err(|_| malformed("nonce is not 16 bytes"))?;
        Ok(Self { key: LayerKey::from_parts(symkey, nonce), digest })
    }
}

/// The public options, stored in clear in the `…enc.pubopts` annotation (docs/formats.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicOptions {
    /// The layer cipher; only [`CIPHER`] exists.
    pub cipher: String,
    /// HMAC-SHA-256 of the ciphertext.
    pub hmac: Vec<u8>,
    /// A nonce in the public cipher options, which Go prefers over the private one (never written by producers).
    pub nonce: Option<String>,
}

impl PublicOptions {
    /// The annotation value: base64 of the compact JSON.
    pub fn to_annotation(&self) -> String {
        b64_encode(
            format!(
                r#"{{"cipher":"{}","hmac":"{}","cipheroptions":{{}}}}"#,
                json_escape(&self.cipher),
                b64_encode(&self.hmac)
            )
            .as_bytes(),
        )
    }

    /// Parses the annotation value; the cipher must be [`CIPHER`] and the HMAC present.
    pub fn from_annotation(annotation: &str) -> Result<Self, Error> {
        let malformed = |what: &str| Error::Malformed(format!("layer public options: {what}"));
        let bytes = b64_decode_lenient(annotation).map_err(|_| malformed("not base64"))?;
        let parsed: Value = serde_json::from_slice(&bytes).map_err(|_| malformed("not a JSON object"))?;
        let object = parsed.as_object().ok_or_else(|| malformed("not a JSON object"))?;
        let cipher = get_ci(object, "cipher").and_then(Value::as_str).unwrap_or_default().to_owned();
        if cipher != CIPHER {
            return Err(malformed(&format!("unsupported cipher `{cipher}` (supported: {CIPHER})")));
        }
        let hmac_text = get_ci(object, "hmac").and_then(Value::as_str).ok_or_else(|| malformed("no HMAC"))?;
        let hmac = b64_decode_lenient(hmac_text).map_err(|_| malformed("HMAC is not base64"))?;
        if hmac.len() != 32 {
            return Err(malformed("HMAC is not 32 bytes"));
        }
        let nonce = get_ci(object, "cipheroptions")
            .and_then(Value::as_object)
            .and_then(|o| o.get("nonce"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        Ok(Self { cipher, hmac, nonce })
    }
}

/// Go's `encoding/json` matches field names case-insensitively; exact matches win.
fn get_ci<'a>(object: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    object.get(name).or_else(|| object.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v))
}

fn json_escape(text: &str) -> String {
    let quoted = serde_json::to_string(text).expect("strings serialize");
    quoted[1..quoted.len() - 1].to_owned()
}

/// What encrypting a layer produced. The plaintext digest is not computed here: the source blob's verified
/// digest is the plaintext digest, and hashing the same bytes twice would cost a third of the throughput.
#[derive(Debug, Clone)]
pub struct EncryptedLayer {
    /// HMAC-SHA-256 of the ciphertext (goes into the public options).
    pub hmac: [u8; 32],
    /// `sha256:…` of the ciphertext (the new blob's digest).
    pub ciphertext_digest: String,
    /// Bytes (the same for plaintext and ciphertext).
    pub size: u64,
}

/// Encrypts a stream of plaintext written into it, writing ciphertext to `sink`.
pub struct LayerEncryptor<W: Write> {
    sink: W,
    cipher: Aes256Ctr,
    mac: HmacSha256,
    ciphertext_hash: ParallelSha256,
    size: u64,
    buffer: Vec<u8>,
}

impl<W: Write> LayerEncryptor<W> {
    /// Starts encrypting with `key` into `sink`.
    pub fn new(key: &LayerKey, sink: W) -> Self {
        Self {
            sink,
            cipher: key.cipher(),
            mac: key.mac(),
            ciphertext_hash: ParallelSha256::new(),
            size: 0,
            buffer: Vec::new(),
        }
    }

    /// Ends the stream and returns the sink and what is needed for the descriptor and options.
    pub fn finish(mut self) -> io::Result<(W, EncryptedLayer)> {
        self.sink.flush()?;
        let layer = EncryptedLayer {
            hmac: self.mac.finalize().into_bytes().into(),
            ciphertext_digest: format!("sha256:{}", hex::encode(self.ciphertext_hash.finalize())),
            size: self.size,
        };
        Ok((self.sink, layer))
    }
}

impl<W: Write> Write for LayerEncryptor<W> {
    fn write(&mut self, plaintext: &[u8]) -> io::Result<usize> {
        self.buffer.clear();
        self.buffer.extend_from_slice(plaintext);
        self.cipher.apply_keystream(&mut self.buffer);
        self.mac.update(&self.buffer);
        self.ciphertext_hash.update(&self.buffer);
        self.sink.write_all(&self.buffer)?;
        self.size += plaintext.len() as u64;
        Ok(plaintext.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.sink.flush()
    }
}

/// What decrypting a layer produced, once the HMAC matched.
#[derive(Debug, Clone)]
pub struct DecryptedLayer {
    /// `sha256:…` of the plaintext (the new blob's digest); empty from [`LayerDecryptor::without_digest`].
    pub plaintext_digest: String,
    /// Bytes.
    pub size: u64,
}

/// Decrypts a stream of ciphertext written into it, writing plaintext to `sink`, which the caller must keep
/// private until [`LayerDecryptor::finish`] succeeds.
pub struct LayerDecryptor<W: Write> {
    sink: W,
    cipher: Aes256Ctr,
    mac: HmacSha256,
    /// None when the caller needs no plaintext digest (containerd's stream processor: the diff ID is checked by
    /// containerd, and a SHA-256 pass would cost a third of the throughput).
    plaintext_hash: Option<ParallelSha256>,
    size: u64,
    buffer: Zeroizing<Vec<u8>>,
}

impl<W: Write> LayerDecryptor<W> {
    /// Starts decrypting with `key` into `sink`.
    pub fn new(key: &LayerKey, sink: W) -> Self {
        Self {
            sink,
            cipher: key.cipher(),
            mac: key.mac(),
            plaintext_hash: Some(ParallelSha256::new()),
            size: 0,
            buffer: Zeroizing::new(Vec::new()),
        }
    }

    /// Like [`LayerDecryptor::new`], without hashing the plaintext: [`DecryptedLayer::plaintext_digest`] is empty.
    pub fn without_digest(key: &LayerKey, sink: W) -> Self {
        Self { plaintext_hash: None, ..Self::new(key, sink) }
    }

    /// Checks the HMAC (in constant time). Only on success may the plaintext written to the sink be released.
    pub fn finish(mut self, expected_hmac: &[u8]) -> Result<(W, DecryptedLayer), Error> {
        self.sink.flush().map_err(|e| Error::Malformed(format!("writing the decrypted layer: {e}")))?;
        verify_hmac(self.mac, expected_hmac)?;
        let layer = DecryptedLayer {
            plaintext_digest: self
                .plaintext_hash
                .map(|hash| format!("sha256:{}", hex::encode(hash.finalize())))
                .unwrap_or_default(),
            size: self.size,
        };
        Ok((self.sink, layer))
    }
}

impl<W: Write> Write for LayerDecryptor<W> {
    fn write(&mut self, ciphertext: &[u8]) -> io::Result<usize> {
        self.mac.update(ciphertext);
        self.buffer.clear();
        self.buffer.extend_from_slice(ciphertext);
        self.cipher.apply_keystream(&mut self.buffer);
        if let Some(hash) = &mut self.plaintext_hash {
            hash.update(&self.buffer);
        }
        self.sink.write_all(&self.buffer)?;
        self.size += ciphertext.len() as u64;
        Ok(ciphertext.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.sink.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vector_key() -> LayerKey {
        let symkey: [u8; 32] = std::array::from_fn(|i| i as u8);
        let nonce: [u8; 16] = std::array::from_fn(|i| 0xf0 + i as u8);
        LayerKey::from_parts(symkey, nonce)
    }

    const PLAIN: &str = "ocicrypt test vector\nocicrypt test vector\nocicrypt test vector\n";
    const CIPHER_HEX: &str = "fd63a4ee51eff0bf7a1d832734121571a92b1432fb4557a80dd52c513e57f2ebea18012d717b81f70a8f4f73fc3780f6391ce359b3839302657ebf80931152";

    /// The known-answer vector of docs/formats.md (OCI image layer encryption).
    #[test]
    fn known_answer_vector() {
        let mut encryptor = LayerEncryptor::new(&vector_key(), Vec::new());
        // Odd chunk sizes: the keystream must continue across writes.
        for chunk in PLAIN.as_bytes().chunks(7) {
            encryptor.write_all(chunk).unwrap();
        }
        let (ciphertext, layer) = encryptor.finish().unwrap();
        assert_eq!(hex::encode(&ciphertext), CIPHER_HEX);
        assert_eq!(hex::encode(layer.hmac), "750ac58621dbc4dbeec0ccb5d76afe1defb05d199ab3924fc300133fc7df08c7");
        let plaintext_digest = crate::oci::sha256_digest(PLAIN.as_bytes());
        assert_eq!(plaintext_digest, "sha256:a27bf37cd685bd9528417aa3b952ed9203c81c26a8c8f21970e41dcb7c56a7ac");
        let private = PrivateOptions { key: vector_key(), digest: plaintext_digest };
        assert_eq!(
            std::str::from_utf8(&private.to_json()).unwrap(),
            r#"{"symkey":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=","digest":"sha256:a27bf37cd685bd9528417aa3b952ed9203c81c26a8c8f21970e41dcb7c56a7ac","cipheroptions":{"nonce":"8PHy8/T19vf4+fr7/P3+/w=="}}"#
        );
        assert_eq!(private.to_json().len(), 193);
        let public = PublicOptions { cipher: CIPHER.into(), hmac: layer.hmac.to_vec(), nonce: None };
        assert_eq!(
            public.to_annotation(),
            "eyJjaXBoZXIiOiJBRVNfMjU2X0NUUl9ITUFDX1NIQTI1NiIsImhtYWMiOiJkUXJGaGlIYnhOdnV3TXkxMTJyK0hlK3dYUm1hczVKUHd3QVRQOGZmQ01jPSIsImNpcGhlcm9wdGlvbnMiOnt9fQ=="
        );
    }

    #[test]
    fn decrypts_and_verifies() {
        let ciphertext = hex::decode(CIPHER_HEX).unwrap();
        let public = PublicOptions::from_annotation("eyJjaXBoZXIiOiJBRVNfMjU2X0NUUl9ITUFDX1NIQTI1NiIsImhtYWMiOiJkUXJGaGlIYnhOdnV3TXkxMTJyK0hlK3dYUm1hczVKUHd3QVRQOGZmQ01jPSIsImNpcGhlcm9wdGlvbnMiOnt9fQ==").unwrap();
        let private =
            PrivateOptions::from_json(&PrivateOptions { key: vector_key(), digest: String::new() }.to_json(), &public)
                .unwrap();
        let mut decryptor = LayerDecryptor::new(&private.key, Vec::new());
        decryptor.write_all(&ciphertext).unwrap();
        let (plain, layer) = decryptor.finish(&public.hmac).unwrap();
        assert_eq!(plain, PLAIN.as_bytes());
        assert_eq!(layer.size, 63);
        for (i, truncate) in [(0usize, false), (31, false), (62, false), (0, true)] {
            let mut bad = ciphertext.clone();
            if truncate {
                bad.pop();
            } else {
                bad[i] ^= 0x80;
            }
            let mut decryptor = LayerDecryptor::new(&private.key, Vec::new());
            decryptor.write_all(&bad).unwrap();
            assert!(matches!(decryptor.finish(&public.hmac), Err(Error::Integrity(_))));
        }
    }

    /// The counter is one 128-bit big-endian integer: a carry out of the low 64 bits must propagate.
    #[test]
    fn counter_carries_across_64_bits() {
        let nonce: [u8; 16] = hex::decode("0000000000000000fffffffffffffff0").unwrap().try_into().unwrap();
        let key = LayerKey::from_parts([9u8; 32], nonce);
        let mut encryptor = LayerEncryptor::new(&key, Vec::new());
        encryptor.write_all(&[0u8; 512]).unwrap();
        let (keystream, _) = encryptor.finish().unwrap();
        // Block 16 (after the carry) must equal AES(key, 0000000000000001 0000000000000000).
        use aes::cipher::{BlockEncrypt, KeyInit};
        let aes = aes::Aes256::new((&[9u8; 32]).into());
        let mut block =
            aes::Block::from(<[u8; 16]>::try_from(hex::decode("00000000000000010000000000000000").unwrap()).unwrap());
        aes.encrypt_block(&mut block);
        assert_eq!(&keystream[256..272], block.as_slice());
    }

    #[test]
    fn lenient_option_parsing() {
        let public = PublicOptions::from_annotation(&b64_encode(br#"{"Cipher":"AES_256_CTR_HMAC_SHA256","HMAC":"dQrFhiHbxNvuwMy112r+He+wXRmas5JPwwATP8ffCMc=","cipheroptions":null,"extra":1}"#)).unwrap();
        assert_eq!(public.hmac.len(), 32);
        assert!(PublicOptions::from_annotation(&b64_encode(br#"{"cipher":"AES_GCM","hmac":"AA=="}"#)).is_err());
        assert!(PublicOptions::from_annotation(&b64_encode(br#"{"cipher":"AES_256_CTR_HMAC_SHA256"}"#)).is_err());
    }
}
