//! clevis's `tpm2` pin: the JWE's content key, as the JWK text `jose jwk gen` prints, sealed to a TPM (under the
//! owner hierarchy's primary key that `tpm2_createprimary -g HASH -G KEY` makes, with a PolicyPCR policy when PCRs
//! are named). The protected header carries `clevis.tpm2`: `hash`, `key`, `pcr_bank` and `pcr_ids` (with PCRs),
//! and `jwk_pub` / `jwk_priv`, base64url of the sealed object's TPM2B_PUBLIC and TPM2B_PRIVATE.

use super::{Error, Jwe, b64_decode, b64_encode};
use crate::crypto::SecretBytes;
use crate::kms::tpm2::{self, Device, Hash, KeyAlg, PcrSelection, SealSpec, Sealed, Tpm};
use serde_json::{Value, json};

/// `clevis encrypt tpm2 CONFIG`'s configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tpm2Config {
    /// `hash` (default sha256): the objects' name algorithm and the policy's hash.
    pub hash: Hash,
    /// `key` (default ecc): the primary key's algorithm.
    pub key: KeyAlg,
    /// `pcr_bank` (default sha1, as clevis 19; sha256 when the TPM has no sha1 bank).
    pub pcr_bank: Option<Hash>,
    /// `pcr_ids`: the PCRs the policy asserts, none for no policy.
    pub pcr_ids: Vec<u8>,
    /// `pcr_digest`: the PCRs' expected values, concatenated (clevis's base64 of `tpm2_pcrread -o`'s file); their
    /// current values when absent.
    pub pcr_values: Option<Vec<u8>>,
}

fn config_error(problem: impl std::fmt::Display) -> Error {
    Error::Config(format!("tpm2: {problem}"))
}

impl Tpm2Config {
    /// Parses the JSON clevis takes: `{"hash":"sha256","key":"ecc","pcr_bank":"sha256","pcr_ids":"0,7"}`
    /// (`pcr_ids` also as an array), `pcr_digest` base64.
    pub fn from_json(config: &Value) -> Result<Self, Error> {
        let Some(map) = config.as_object() else { return Err(config_error("the configuration is not a JSON object")) };
        for name in map.keys() {
            if !["hash", "key", "pcr_bank", "pcr_ids", "pcr_digest"].contains(&name.as_str()) {
                return Err(config_error(format!(
                    "unknown key `{}` (clevis's tpm2 pin takes hash, key, pcr_bank, pcr_ids, pcr_digest)",
                    crate::redact::server_text(name.as_bytes(), 32)
                )));
            }
        }
        let text = |name: &str| -> Result<Option<&str>, Error> {
            match map.get(name) {
                None => Ok(None),
                Some(Value::String(s)) => Ok(Some(s)),
                Some(_) => Err(config_error(format!("`{name}` is not a string"))),
            }
        };
        let hash = text("hash")?.map(Hash::from_name).transpose().map_err(config_error)?;
        let key = text("key")?.map(KeyAlg::from_name).transpose().map_err(config_error)?;
        let pcr_bank = text("pcr_bank")?.map(Hash::from_name).transpose().map_err(config_error)?;
        let list = match map.get("pcr_ids") {
            None => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| match item {
                    Value::String(s) => Ok(s.clone()),
                    Value::Number(n) => Ok(n.to_string()),
                    _ => Err(config_error("`pcr_ids` holds something other than PCR numbers")),
                })
                .collect::<Result<Vec<_>, _>>()?
                .join(","),
            Some(_) => return Err(config_error("`pcr_ids` is neither a string nor an array")),
        };
        let pcr_ids = if list.trim().is_empty() {
            Vec::new()
        } else {
            PcrSelection::parse(Hash::Sha256, &list).map_err(config_error)?.pcrs
        };
        let pcr_values = match text("pcr_digest")? {
            None => None,
            Some(_) if pcr_ids.is_empty() => return Err(config_error("`pcr_digest` without `pcr_ids`")),
            Some(b64) => Some(decode_any_base64(b64).ok_or_else(|| config_error("`pcr_digest` is not base64"))?),
        };
        Ok(Self { hash: hash.unwrap_or(Hash::Sha256), key: key.unwrap_or(KeyAlg::Ecc), pcr_bank, pcr_ids, pcr_values })
    }

    /// `tpm2 sha256:7` or `tpm2` (no PCR policy).
    pub fn describe(&self) -> String {
        if self.pcr_ids.is_empty() {
            return "tpm2".into();
        }
        let bank = self.pcr_bank.map_or("sha1", Hash::name);
        let selection = PcrSelection { bank: Hash::Sha1, pcrs: self.pcr_ids.clone() };
        format!("tpm2 {bank}:{}", selection.list())
    }
}

/// Base64 as `jose b64 dec` reads it: base64url, or standard base64, padded or not.
fn decode_any_base64(text: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    let text: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    b64_decode(&text)
        .or_else(|| base64::engine::general_purpose::STANDARD_NO_PAD.decode(text.trim_end_matches('=')).ok())
}

/// The JWK text `jose jwk gen -i '{"alg":"A256GCM"}'` prints for `cek`, with the newline clevis's here-string adds.
fn jwk_text(cek: &[u8]) -> zeroize::Zeroizing<String> {
    zeroize::Zeroizing::new(format!(
        "{{\"alg\":\"A256GCM\",\"k\":\"{}\",\"key_ops\":[\"encrypt\",\"decrypt\"],\"kty\":\"oct\"}}\n",
        b64_encode(cek)
    ))
}

/// Encrypts `plaintext` to the TPM at `device` as `clevis encrypt tpm2 CONFIG` does.
pub fn encrypt(config: &Tpm2Config, device: &Device, plaintext: &[u8]) -> Result<String, Error> {
    let mut tpm = Tpm::open(device)?;
    let pcrs = if config.pcr_ids.is_empty() {
        None
    } else {
        let bank = match config.pcr_bank {
            Some(bank) => bank,
            None if tpm.pcr_banks()?.contains(&Hash::Sha1) => Hash::Sha1,
            None => Hash::Sha256,
        };
        Some(PcrSelection { bank, pcrs: config.pcr_ids.clone() })
    };
    let spec = SealSpec { hash: config.hash, key: config.key, pcrs };
    let cek = zeroize::Zeroizing::new(crate::crypto::random::bytes::<32>());
    let sealed = tpm2::seal(&mut tpm, &spec, config.pcr_values.as_deref(), jwk_text(&cek[..]).as_bytes())?;
    let mut tpm2 = json!({
        "hash": spec.hash.name(),
        "key": match spec.key { KeyAlg::Ecc => "ecc", KeyAlg::Rsa => "rsa" },
        "jwk_pub": b64_encode(&sealed.public),
        "jwk_priv": b64_encode(&sealed.private),
    });
    if let Some(selection) = &spec.pcrs {
        tpm2["pcr_bank"] = selection.bank.name().into();
        tpm2["pcr_ids"] = selection.list().into();
    }
    let header = json!({"alg": "dir", "enc": super::tang::ENC, "clevis": {"pin": "tpm2", "tpm2": tpm2}});
    Ok(super::compact_encrypt(&header, &cek[..], plaintext))
}

/// What a tpm2 pin's header says: how to recreate the primary key, the policy, and the sealed object.
#[derive(Debug)]
pub struct Tpm2Header {
    spec: SealSpec,
    sealed: Sealed,
}

impl Tpm2Header {
    /// Reads `clevis.tpm2` of a protected header. Untrusted input: never panics.
    pub fn parse(header: &Value) -> Result<Self, Error> {
        let bad = |problem: &str| Error::Malformed(format!("tpm2 pin: {problem}"));
        let field = |name: &str| header.pointer(&format!("/clevis/tpm2/{name}")).and_then(Value::as_str);
        let required = |name: &str| field(name).ok_or_else(|| bad(&format!("no `{name}` string")));
        let hash = Hash::from_name(required("hash")?).map_err(|e| bad(&e.to_string()))?;
        let key = KeyAlg::from_name(required("key")?).map_err(|e| bad(&e.to_string()))?;
        let pcrs = match field("pcr_ids").filter(|ids| !ids.is_empty()) {
            None => None,
            Some(ids) => {
                let bank = Hash::from_name(required("pcr_bank")?).map_err(|e| bad(&e.to_string()))?;
                Some(PcrSelection::parse(bank, ids).map_err(|e| bad(&e.to_string()))?)
            }
        };
        let blob = |name: &str| b64_decode(required(name)?).ok_or_else(|| bad(&format!("`{name}` is not base64url")));
        let sealed = Sealed { public: blob("jwk_pub")?, private: blob("jwk_priv")? };
        Ok(Self { spec: SealSpec { hash, key, pcrs }, sealed })
    }

    /// `tpm2 sha256:7`, or `tpm2`.
    pub fn describe(&self) -> String {
        match &self.spec.pcrs {
            None => "tpm2".into(),
            Some(selection) => format!("tpm2 {}:{}", selection.bank.name(), selection.list()),
        }
    }
}

/// Recovers the content key of a tpm2 pin's JWE from the TPM at `device`.
pub fn recover_key(header: &Tpm2Header, device: &Device) -> Result<SecretBytes, Error> {
    let mut tpm = Tpm::open(device)?;
    let jwk = tpm2::unseal(&mut tpm, &header.spec, &header.sealed)?;
    /// The part of the JWK that matters; wiped on drop.
    #[derive(serde::Deserialize)]
    struct Jwk {
        k: String,
    }
    impl Drop for Jwk {
        fn drop(&mut self) {
            zeroize::Zeroize::zeroize(&mut self.k);
        }
    }
    let bad = || Error::Malformed("tpm2 pin: the unsealed key is not an A256GCM JWK".into());
    let jwk: Jwk = serde_json::from_slice(jwk.trim_ascii()).map_err(|_| bad())?;
    let key = b64_decode(&jwk.k).filter(|k| k.len() == 32).ok_or_else(bad)?;
    Ok(SecretBytes::new(key))
}

/// Decrypts a tpm2 pin's JWE.
pub(super) fn decrypt(jwe: &Jwe, device: &Device) -> Result<SecretBytes, Error> {
    let header = Tpm2Header::parse(&jwe.header)?;
    let cek = recover_key(&header, device)?;
    jwe.open(&cek)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configs_parse_like_clevis() {
        let c = Tpm2Config::from_json(&json!({"pcr_ids": "7"})).unwrap();
        assert_eq!((c.hash, c.key, c.pcr_bank, c.pcr_ids.clone()), (Hash::Sha256, KeyAlg::Ecc, None, vec![7]));
        assert_eq!(c.describe(), "tpm2 sha1:7");
        let c =
            Tpm2Config::from_json(&json!({"pcr_ids": [7, "0"], "pcr_bank": "sha256", "key": "rsa", "hash": "sha1"}))
                .unwrap();
        assert_eq!(
            (c.hash, c.key, c.pcr_bank, c.pcr_ids.clone()),
            (Hash::Sha1, KeyAlg::Rsa, Some(Hash::Sha256), vec![0, 7])
        );
        assert_eq!(Tpm2Config::from_json(&json!({})).unwrap().describe(), "tpm2");
        let c = Tpm2Config::from_json(&json!({"pcr_ids": "7", "pcr_digest": "AAAA"})).unwrap();
        assert_eq!(c.pcr_values, Some(vec![0, 0, 0]));
        for bad in [
            json!([]),
            json!({"hash": "md5"}),
            json!({"key": "dsa"}),
            json!({"pcr_ids": "25"}),
            json!({"pcr_ids": {}}),
            json!({"pcr_digest": "AAAA"}),
            json!({"pcr_ids": "7", "pcr_digest": "!!"}),
            json!({"url": "http://tang"}),
        ] {
            assert!(matches!(Tpm2Config::from_json(&bad), Err(Error::Config(_))), "{bad}");
        }
    }

    #[test]
    fn jwk_text_is_joses() {
        let text = jwk_text(&[0u8; 32]);
        assert_eq!(
            text.as_str(),
            "{\"alg\":\"A256GCM\",\"k\":\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\",\"key_ops\":[\"encrypt\",\"decrypt\"],\"kty\":\"oct\"}\n"
        );
        assert!(text.len() <= tpm2::MAX_SEALED);
    }

    #[test]
    fn headers_parse_bounded() {
        let ok = json!({"clevis": {"pin": "tpm2", "tpm2": {"hash": "sha256", "key": "ecc", "pcr_bank": "sha256",
            "pcr_ids": "0,7", "jwk_pub": "AAE", "jwk_priv": "AAE"}}});
        assert_eq!(Tpm2Header::parse(&ok).unwrap().describe(), "tpm2 sha256:0,7");
        for (pointer, value) in [
            ("/clevis/tpm2/hash", json!(1)),
            ("/clevis/tpm2/key", json!("dsa")),
            ("/clevis/tpm2/pcr_bank", json!(null)),
            ("/clevis/tpm2/pcr_ids", json!("99")),
            ("/clevis/tpm2/jwk_pub", json!("!")),
        ] {
            let mut bad = ok.clone();
            *bad.pointer_mut(pointer).unwrap() = value;
            assert!(matches!(Tpm2Header::parse(&bad), Err(Error::Malformed(_))), "{pointer}");
        }
    }
}
