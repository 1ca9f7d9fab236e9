//! systemd-cryptenroll's `systemd-tpm2` LUKS2 token (systemd 252): a keyslot whose passphrase is the base64 text
//! of a secret sealed to the TPM, and a token
//! `{"type":"systemd-tpm2","keyslots":["1"],"tpm2-blob":…,"tpm2-pcrs":[7],"tpm2-pcr-bank":"sha256",
//! "tpm2-primary-alg":"ecc","tpm2-policy-hash":…,"tpm2-pin":false}`. `tpm2-blob` is base64 of the sealed
//! object's TPM2B_PRIVATE then its TPM2B_PUBLIC; the primary key is the owner hierarchy's storage key of the
//! template tpm2-tools use too; the policy is PolicyPCR over `tpm2-pcrs` of `tpm2-pcr-bank`.

use super::wire::Reader;
use super::{Error, Hash, KeyAlg, PcrSelection, SealSpec, Sealed, Tpm};
use crate::crypto::SecretBytes;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value, json};

/// The token type.
pub const TOKEN_TYPE: &str = "systemd-tpm2";
/// Bytes of the sealed secret systemd-cryptenroll draws (a SHA-256 digest's worth).
const SECRET_LEN: usize = 32;

/// What a `systemd-tpm2` token says.
#[derive(Clone, Debug)]
pub struct Token {
    /// Primary key, name and policy hash algorithms, and the PCRs.
    pub spec: SealSpec,
    /// The sealed secret.
    pub sealed: Sealed,
    /// `tpm2-policy-hash`: the policy the object was sealed with.
    pub policy_hash: Option<Vec<u8>>,
    /// `tpm2-pin`: the object also needs a PIN (PolicyAuthValue).
    pub pin: bool,
}

fn bad(problem: impl std::fmt::Display) -> Error {
    Error::Config(format!("systemd-tpm2 token: {problem}"))
}

impl Token {
    /// Reads a token's fields besides `type` and `keyslots`. Untrusted input: never panics.
    pub fn from_fields(fields: &Map<String, Value>) -> Result<Self, Error> {
        let text = |name: &str| fields.get(name).and_then(Value::as_str);
        let blob = text("tpm2-blob").ok_or_else(|| bad("no `tpm2-blob`"))?;
        let blob = STANDARD.decode(blob.trim()).map_err(|_| bad("`tpm2-blob` is not base64"))?;
        let mut r = Reader::new(&blob);
        let (private, public) = match (r.tpm2b_whole(), r.tpm2b_whole()) {
            (Ok(private), Ok(public)) if r.is_empty() => (private.to_vec(), public.to_vec()),
            _ => return Err(bad("`tpm2-blob` is not a TPM2B_PRIVATE and a TPM2B_PUBLIC")),
        };
        let bank = Hash::from_name(text("tpm2-pcr-bank").unwrap_or("sha256")).map_err(bad)?;
        let pcrs: Vec<String> = match fields.get("tpm2-pcrs") {
            None => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| item.as_u64().map(|n| n.to_string()).ok_or_else(|| bad("`tpm2-pcrs` holds a non-number")))
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(bad("`tpm2-pcrs` is not a list")),
        };
        let pcrs = if pcrs.is_empty() { None } else { Some(PcrSelection::parse(bank, &pcrs.join(",")).map_err(bad)?) };
        let key = KeyAlg::from_name(text("tpm2-primary-alg").unwrap_or("ecc")).map_err(bad)?;
        let policy_hash = match text("tpm2-policy-hash") {
            None => None,
            Some(hex_text) => Some(hex::decode(hex_text).map_err(|_| bad("`tpm2-policy-hash` is not hex"))?),
        };
        let pin = fields.get("tpm2-pin").and_then(Value::as_bool).unwrap_or(false);
        if fields.contains_key("tpm2_salt") {
            return Err(bad("a salted PIN (`tpm2_salt`, systemd 254 and later) is not supported"));
        }
        Ok(Self {
            spec: SealSpec { hash: Hash::Sha256, key, pcrs },
            sealed: Sealed { public, private },
            policy_hash,
            pin,
        })
    }

    /// The token's fields besides `type` and `keyslots`, as systemd-cryptenroll writes them.
    pub fn to_fields(&self) -> Map<String, Value> {
        let mut blob = self.sealed.private.clone();
        blob.extend_from_slice(&self.sealed.public);
        let (pcrs, bank) = match &self.spec.pcrs {
            Some(selection) => (selection.pcrs.clone(), selection.bank),
            None => (Vec::new(), Hash::Sha256),
        };
        let fields = json!({
            "tpm2-blob": STANDARD.encode(blob),
            "tpm2-pcrs": pcrs,
            "tpm2-pcr-bank": bank.name(),
            "tpm2-primary-alg": match self.spec.key { KeyAlg::Ecc => "ecc", KeyAlg::Rsa => "rsa" },
            "tpm2-policy-hash": hex::encode(self.policy_hash.as_deref().unwrap_or_default()),
            "tpm2-pin": self.pin,
        });
        match fields {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    /// `systemd-tpm2 sha256:7 (ecc)`, `+ PIN` when it takes one.
    pub fn describe(&self) -> String {
        let pcrs = match &self.spec.pcrs {
            Some(selection) => format!("{}:{}", selection.bank.name(), selection.list()),
            None => "no PCRs".into(),
        };
        let key = match self.spec.key {
            KeyAlg::Ecc => "ecc",
            KeyAlg::Rsa => "rsa",
        };
        format!("systemd-tpm2 {pcrs} ({key}){}", if self.pin { " + PIN" } else { "" })
    }
}

/// The keyslot passphrase of a token: its secret unsealed, as base64 text (systemd's `base64mem`). A token with
/// `tpm2-pin` needs `pin`: its auth value is SHA-256 of the PIN's bytes (systemd 252's `hash_pin`).
pub fn passphrase(tpm: &mut Tpm, token: &Token, pin: Option<&[u8]>) -> Result<SecretBytes, Error> {
    let secret = if token.pin {
        let Some(pin) = pin else {
            return Err(Error::Config("systemd-tpm2 token: this token also needs its PIN (tpm2-pin)".into()));
        };
        let auth = zeroize::Zeroizing::new(super::Hash::Sha256.digest(&[pin]));
        super::unseal_with_auth(tpm, &token.spec, &token.sealed, Some(&auth[..]))?
    } else {
        super::unseal(tpm, &token.spec, &token.sealed)?
    };
    Ok(SecretBytes::new(STANDARD.encode(&secret[..]).into_bytes()))
}

/// Seals a fresh secret to `pcrs` (their current values) as systemd-cryptenroll does, and with `pin` to that PIN
/// too (`--tpm2-with-pin`: the object's auth value SHA-256 of the PIN): the token and the keyslot passphrase to
/// enrol.
pub fn enroll(
    tpm: &mut Tpm,
    key: KeyAlg,
    pcrs: Option<PcrSelection>,
    pin: Option<&[u8]>,
) -> Result<(Token, SecretBytes), Error> {
    let secret = zeroize::Zeroizing::new(tpm.get_random(SECRET_LEN)?);
    let spec = SealSpec { hash: Hash::Sha256, key, pcrs };
    let values = match &spec.pcrs {
        Some(selection) => Some(tpm.pcr_read(selection)?.concat()),
        None => None,
    };
    let policy_hash = match (&spec.pcrs, &values) {
        (Some(selection), Some(values)) => super::policy_pcr_digest(Hash::Sha256, selection, values),
        _ => vec![0u8; Hash::Sha256.size()],
    };
    let auth = pin.map(|pin| zeroize::Zeroizing::new(Hash::Sha256.digest(&[pin])));
    let (sealed, policy) =
        super::seal_with_auth(tpm, &spec, values.as_deref(), &secret, auth.as_deref().map(|a| &a[..]))?;
    let policy_hash = if pin.is_some() { policy } else { policy_hash };
    let passphrase = SecretBytes::new(STANDARD.encode(&secret[..]).into_bytes());
    Ok((Token { spec, sealed, policy_hash: Some(policy_hash), pin: pin.is_some() }, passphrase))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What systemd-cryptenroll 252 wrote with `--tpm2-pcrs=7` on swtpm.
    const ENROLLED: &str = r#"{"tpm2-blob":"AJ4AID3kq9pD5P0AqQzb2WMZpXt7ey+MCPKFej+A2KV30LXyABD20kEmOBrXKrv7ZtWZEJ96Bl8pX6ZMcW98KaxlPn6bo2Ln9j6RPh49zN15LdQNZqUImqKmqkqzVs7vzrAxfb4wzO9krkYSI8Ph16H2ovl/XaOWfe1+z7J1rIY+CJEFaH59tEFx8lXspfwEbCGhXXjBlJkE4CWXtb/LpABOAAgACwAAABIAIItWgtgbKUNdCNeSeBUGEdx+WSOy/vzOaEoJV3tAEwqLABAAIHldBwBiqBZIhJiR/QXx4JF1HoNWYejOHHaR7DDmKfPA","tpm2-pcrs":[7],"tpm2-pcr-bank":"sha256","tpm2-primary-alg":"ecc","tpm2-policy-hash":"8b5682d81b29435d08d79278150611dc7e5923b2fefcce684a09577b40130a8b","tpm2-pin":false}"#;

    #[test]
    fn tokens_read_and_write_as_systemd_does() {
        let fields: Map<String, Value> = serde_json::from_str(ENROLLED).unwrap();
        let token = Token::from_fields(&fields).unwrap();
        assert_eq!(token.describe(), "systemd-tpm2 sha256:7 (ecc)");
        assert_eq!(token.sealed.private.len(), 2 + 0x9e);
        assert_eq!(token.sealed.public.len(), 2 + 0x4e);
        // The policy is PolicyPCR over PCR 7 at its reset value.
        let selection = token.spec.pcrs.clone().unwrap();
        assert_eq!(
            token.policy_hash.as_deref(),
            Some(&super::super::policy_pcr_digest(Hash::Sha256, &selection, &[0u8; 32])[..])
        );
        assert_eq!(Value::Object(token.to_fields()), serde_json::from_str::<Value>(ENROLLED).unwrap());
        for (name, value) in [
            ("tpm2-blob", json!("AJ4A")),
            ("tpm2-blob", json!("!!")),
            ("tpm2-pcrs", json!([7, "x"])),
            ("tpm2-pcrs", json!([99])),
            ("tpm2-pcr-bank", json!("md5")),
            ("tpm2-primary-alg", json!("dsa")),
            ("tpm2-policy-hash", json!("xyz")),
        ] {
            let mut bad = fields.clone();
            bad.insert(name.into(), value);
            assert!(matches!(Token::from_fields(&bad), Err(Error::Config(_))), "{name}");
        }
    }
}
