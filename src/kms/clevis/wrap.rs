//! cryptadm's extension pins: `aws-kms`, `vault-transit` and `kmip`, pins of an `sss` threshold beside clevis's
//! own `tang` and `tpm2` (docs/threshold.md gives their JSON precisely enough for another implementation).
//!
//! Each is a compact JWE like clevis's tpm2 pin: a fresh random 256-bit content key encrypts the pin's share
//! (A256GCM, the protected header as the additional data), and the key manager wraps that content key, which the
//! header carries: `{"alg":"dir","enc":"A256GCM","clevis":{"pin":NAME,NAME:{"key":KEY,"wrapped":WRAPPED}}}`.
//! `KEY` is the key reference (AWS: the key id KMS takes; `vault-transit://MOUNT/KEY`; `kmip://UID`) and
//! `WRAPPED` the key manager's own text of the wrapped content key (the KMS CiphertextBlob in standard base64;
//! Transit's `vault:vN:…`; `kmip:v1:` + unpadded base64url of nonce ‖ tag ‖ ciphertext, AES-GCM on the server
//! with the additional data [`KMIP_AAD`]). The server, region and credentials are the command's settings, as for
//! every reference: nothing in the JWE says where the key manager is.
//!
//! clevis itself has no such pins: its `sss` counts them as failed and opens the JWE when its own pins reach the
//! threshold.

use super::{Error, Jwe, Settings};
use crate::crypto::SecretBytes;
use crate::kms::KeyRef;
use crate::kms::backends::{self, Use};
use serde_json::{Value, json};

/// The extension pins' names (each the name of its row in [`backends::BACKENDS`]).
pub const NAMES: [&str; 3] = ["aws-kms", "vault-transit", "kmip"];
/// The additional authenticated data of the KMIP pin's server-side AES-GCM (fixed: it differs from the volume key
/// wrap's and the bootstrap provider's, so neither's wrapped bytes are accepted here).
pub const KMIP_AAD: &[u8] = b"cryptadm clevis kmip pin v1";

/// Which key manager wraps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Manager {
    /// AWS KMS (Encrypt, Decrypt).
    AwsKms,
    /// OpenBao/Vault Transit (encrypt, decrypt).
    VaultTransit,
    /// A KMIP server's AES-GCM Encrypt and Decrypt.
    Kmip,
}

impl Manager {
    /// The pin's name.
    pub fn name(self) -> &'static str {
        match self {
            Self::AwsKms => NAMES[0],
            Self::VaultTransit => NAMES[1],
            Self::Kmip => NAMES[2],
        }
    }

    /// The manager of pin `name`, if it is an extension pin.
    pub fn from_name(name: &str) -> Option<Self> {
        [Self::AwsKms, Self::VaultTransit, Self::Kmip].into_iter().find(|m| m.name() == name)
    }

    /// What the command must be given for this manager, for the error when it was not.
    fn hint(self) -> &'static str {
        match self {
            Self::AwsKms => "give the AWS settings (AWS_REGION or --aws-region, credentials as the AWS CLI finds them)",
            Self::VaultTransit => {
                "give the OpenBao/Vault server: VAULT_ADDR (or BAO_ADDR) and a token, or --vault-addr"
            }
            Self::Kmip => {
                "give the KMIP server: --kmip-server HOST:PORT (or CRYPTADM_KMIP_SERVER) and its client certificate"
            }
        }
    }
}

/// An extension pin's configuration (`{"key":KEY}`), its key checked by the backend table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WrapConfig {
    /// The key manager.
    pub manager: Manager,
    /// The key, in the form the header records (see the module's note).
    pub key: String,
}

impl WrapConfig {
    /// Parses `{"key":KEY}` of pin `manager`: `KEY` must be a reference of that backend that fits a threshold pin.
    pub fn from_json(manager: Manager, config: &Value) -> Result<Self, Error> {
        let bad = |problem: String| Error::Config(format!("{}: {problem}", manager.name()));
        let Some(map) = config.as_object() else { return Err(bad("the configuration is not a JSON object".into())) };
        if let Some(name) = map.keys().find(|name| name.as_str() != "key") {
            return Err(bad(format!(
                "unknown key `{}` (the pin takes only `key`)",
                crate::redact::server_text(name.as_bytes(), 32)
            )));
        }
        let Some(text) = map.get("key").and_then(Value::as_str) else {
            return Err(bad("no `key` string (a key reference, e.g. {\"key\":\"arn:aws:kms:…\"})".into()));
        };
        let key = Self::checked_key(manager, text).map_err(|e| bad(e.to_string()))?;
        Ok(Self { manager, key })
    }

    /// The key of `text` in the recorded form, when it is a reference of `manager`'s backend.
    fn checked_key(manager: Manager, text: &str) -> Result<String, crate::kms::Error> {
        let flag = format!("the {} pin's `key`", manager.name());
        let (reference, backend) = backends::parse_for(text, Use::ThresholdPin, &flag)?;
        let mismatch = || crate::kms::Error::BadReference {
            reference: crate::redact::url(text),
            problem: format!("this is {}, not a key of the {} pin", backend.title, manager.name()),
        };
        match (manager, &reference) {
            (Manager::AwsKms, KeyRef::AwsKms { key }) => Ok(key.clone()),
            (Manager::VaultTransit, KeyRef::VaultTransit { mount, key, wrapped: None }) => {
                Ok(KeyRef::VaultTransit { mount: mount.clone(), key: key.clone(), wrapped: None }.to_string())
            }
            (Manager::Kmip, KeyRef::Plugin { name, uri }) if name == backends::KMIP => {
                let uid = uri.strip_prefix("kmip://").unwrap_or_default();
                if uid.contains(['/', '#']) {
                    return Err(crate::kms::Error::BadReference {
                        reference: crate::redact::url(text),
                        problem: "the kmip pin takes kmip://UID (a key's unique identifier, no `/` or `#`)".into(),
                    });
                }
                Ok(uri.clone())
            }
            _ => Err(mismatch()),
        }
    }

    /// `aws-kms arn:…`, `vault-transit vault-transit://transit/capi`, `kmip kmip://UID`.
    pub fn describe(&self) -> String {
        format!("{} {}", self.manager.name(), crate::redact::url(&self.key))
    }
}

/// Encrypts `plaintext` to the pin: a random content key, wrapped by the key manager.
pub fn encrypt(config: &WrapConfig, settings: &Settings, plaintext: &[u8]) -> Result<String, Error> {
    let cek = zeroize::Zeroizing::new(crate::crypto::random::bytes::<32>());
    let wrapped = wrap(config, settings, &cek[..])?;
    let name = config.manager.name();
    let header = json!({
        "alg": "dir",
        "enc": super::tang::ENC,
        "clevis": {"pin": name, name: {"key": config.key, "wrapped": wrapped}},
    });
    Ok(super::compact_encrypt(&header, &cek[..], plaintext))
}

fn missing(manager: Manager) -> Error {
    Error::NoKeyManager { pin: manager.name(), hint: manager.hint() }
}

fn failed(manager: Manager) -> impl FnOnce(crate::kms::Error) -> Error {
    move |source| Error::KeyManager { pin: manager.name(), source }
}

fn wrap(config: &WrapConfig, settings: &Settings, cek: &[u8]) -> Result<String, Error> {
    use crate::kms::Wrapping as _;
    let managers = &settings.key_managers;
    match config.manager {
        Manager::AwsKms => {
            let aws = managers.aws.as_deref().ok_or_else(|| missing(Manager::AwsKms))?;
            aws.wrap(&config.key, cek).map_err(failed(Manager::AwsKms))
        }
        Manager::VaultTransit => {
            let vault = managers.vault.as_deref().ok_or_else(|| missing(Manager::VaultTransit))?;
            vault.wrap(&transit_name(&config.key)?, cek).map_err(failed(Manager::VaultTransit))
        }
        Manager::Kmip => {
            let kmip = managers.kmip.as_deref().ok_or_else(|| missing(Manager::Kmip))?;
            let sealed = kmip.encrypt(kmip_uid(&config.key), cek, KMIP_AAD).map_err(failed(Manager::Kmip))?;
            Ok(sealed.to_text())
        }
    }
}

/// Transit's `MOUNT/KEY` name of a recorded `vault-transit://MOUNT/KEY`.
fn transit_name(key: &str) -> Result<String, Error> {
    match KeyRef::parse(key) {
        Ok(KeyRef::VaultTransit { mount, key, .. }) => Ok(crate::kms::vault::transit_name(&mount, &key)),
        _ => Err(Error::Malformed("vault-transit pin: `key` is not vault-transit://MOUNT/KEY".into())),
    }
}

fn kmip_uid(key: &str) -> &str {
    key.strip_prefix("kmip://").unwrap_or(key)
}

/// What an extension pin's header says.
#[derive(Debug)]
pub struct WrapHeader {
    /// The key manager and its key.
    pub config: WrapConfig,
    /// The wrapped content key, in the key manager's text.
    pub wrapped: String,
}

impl WrapHeader {
    /// Reads `clevis.NAME` of a protected header whose `clevis.pin` is `manager`'s. Untrusted input: bounded,
    /// never panics; the key is checked as a configuration's is, so nothing a configuration could not name is
    /// asked of a key manager.
    pub fn parse(manager: Manager, header: &Value) -> Result<Self, Error> {
        let name = manager.name();
        let bad = |problem: String| Error::Malformed(format!("{name} pin: {problem}"));
        if header.get("alg").and_then(Value::as_str) != Some("dir") {
            return Err(bad("expected `\"alg\":\"dir\"`".into()));
        }
        let pin = header.pointer(&format!("/clevis/{name}")).ok_or_else(|| bad(format!("no `clevis.{name}`")))?;
        let field =
            |field: &str| pin.get(field).and_then(Value::as_str).ok_or_else(|| bad(format!("no `{field}` string")));
        let (key, wrapped) = (field("key")?, field("wrapped")?);
        if wrapped.is_empty() || wrapped.len() > 8192 {
            return Err(bad("`wrapped` is empty or over 8 KiB".into()));
        }
        let key = WrapConfig::checked_key(manager, key).map_err(|e| bad(e.to_string()))?;
        let wrapped_ok = match manager {
            Manager::AwsKms => crate::crypto::encoding::b64_decode_lenient(wrapped).is_ok(),
            Manager::VaultTransit => wrapped.starts_with("vault:v"),
            Manager::Kmip => crate::kms::kmip::Sealed::from_text(wrapped).is_some(),
        };
        if !wrapped_ok {
            return Err(bad(format!(
                "`wrapped` is not {}",
                match manager {
                    Manager::AwsKms => "base64 of a CiphertextBlob",
                    Manager::VaultTransit => "a Transit ciphertext (vault:vN:…)",
                    Manager::Kmip => "kmip:v1:<base64url>",
                }
            )));
        }
        Ok(Self { config: WrapConfig { manager, key }, wrapped: wrapped.to_owned() })
    }
}

/// Decrypts an extension pin's JWE: the key manager unwraps the content key.
pub(super) fn decrypt(manager: Manager, jwe: &Jwe, settings: &Settings) -> Result<SecretBytes, Error> {
    use crate::kms::Wrapping as _;
    let header = WrapHeader::parse(manager, &jwe.header)?;
    let managers = &settings.key_managers;
    let key = &header.config.key;
    let cek = match manager {
        Manager::AwsKms => {
            let aws = managers.aws.as_deref().ok_or_else(|| missing(manager))?;
            aws.unwrap(key, &header.wrapped).map_err(failed(manager))?
        }
        Manager::VaultTransit => {
            let vault = managers.vault.as_deref().ok_or_else(|| missing(manager))?;
            vault.unwrap(&transit_name(key)?, &header.wrapped).map_err(failed(manager))?
        }
        Manager::Kmip => {
            let kmip = managers.kmip.as_deref().ok_or_else(|| missing(manager))?;
            let sealed = crate::kms::kmip::Sealed::from_text(&header.wrapped)
                .ok_or_else(|| Error::Malformed("kmip pin: `wrapped` is not kmip:v1:<base64url>".into()))?;
            kmip.decrypt(kmip_uid(key), &sealed, KMIP_AAD).map_err(failed(manager))?
        }
    };
    if cek.len() != 32 {
        return Err(Error::Integrity);
    }
    jwe.open(&cek)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configurations_take_only_their_backends_keys() {
        let arn = "arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab";
        for text in [arn.to_owned(), format!("aws-kms://{arn}")] {
            let config = WrapConfig::from_json(Manager::AwsKms, &json!({"key": text})).unwrap();
            assert_eq!(config.key, arn);
            assert_eq!(config.describe(), format!("aws-kms {arn}"));
        }
        let transit = WrapConfig::from_json(Manager::VaultTransit, &json!({"key": "vault-transit://transit/capi"}));
        assert_eq!(transit.unwrap().key, "vault-transit://transit/capi");
        assert_eq!(WrapConfig::from_json(Manager::Kmip, &json!({"key": "kmip://42"})).unwrap().key, "kmip://42");
        for (manager, config) in [
            (Manager::AwsKms, json!({"key": "vault-transit://transit/capi"})),
            (Manager::VaultTransit, json!({"key": arn})),
            (Manager::VaultTransit, json!({"key": "vault-kv://kv/x"})),
            (Manager::Kmip, json!({"key": "kmip://a/b"})),
            (Manager::Kmip, json!({"key": 7})),
            (Manager::AwsKms, json!({"key": arn, "region": "x"})),
            (Manager::AwsKms, json!([arn])),
        ] {
            assert!(matches!(WrapConfig::from_json(manager, &config), Err(Error::Config(_))), "{config}");
        }
    }

    #[test]
    fn headers_are_checked_before_any_request() {
        let good = json!({"alg": "dir", "clevis": {"pin": "kmip", "kmip": {"key": "kmip://1", "wrapped":
            "kmip:v1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}}});
        assert_eq!(WrapHeader::parse(Manager::Kmip, &good).unwrap().config.key, "kmip://1");
        for bad in [
            json!({"alg": "dir", "clevis": {"pin": "kmip", "kmip": {"key": "kmip://1", "wrapped": "vault:v1:x"}}}),
            json!({"alg": "dir", "clevis": {"pin": "kmip", "kmip": {"key": "vault-transit://t/k", "wrapped": "x"}}}),
            json!({"alg": "ECDH-ES", "clevis": {"pin": "kmip", "kmip": {"key": "kmip://1", "wrapped": "x"}}}),
            json!({"alg": "dir", "clevis": {"pin": "kmip"}}),
        ] {
            assert!(matches!(WrapHeader::parse(Manager::Kmip, &bad), Err(Error::Malformed(_))), "{bad}");
        }
    }

    /// Without the key manager's client, the pin fails naming what to give, and asks nothing.
    #[test]
    fn a_pin_without_its_client_names_the_settings() {
        let config = WrapConfig::from_json(Manager::VaultTransit, &json!({"key": "vault-transit://t/k"})).unwrap();
        let error = encrypt(&config, &Settings::default(), b"x").unwrap_err();
        assert!(matches!(error, Error::NoKeyManager { pin: "vault-transit", .. }), "{error}");
        use crate::exit::Classify as _;
        assert!(error.hint().unwrap().contains("VAULT_ADDR"));
    }
}
