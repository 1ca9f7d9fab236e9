//! Clevis bindings of LUKS2 volumes, as `clevis luks bind` makes them: a keyslot whose passphrase is a fresh
//! random secret, and a LUKS2 token `{"type":"clevis","keyslots":["N"],"jwe":{…}}` holding that secret encrypted
//! to the pin (the JWE in JOSE's flattened JSON form, as `jose jwe fmt` writes it). `clevis luks unlock|pass`
//! open what [`bind`] writes, and [`recover_passphrase`] opens what `clevis luks bind` wrote.
//!
//! Binding is two steps so that nothing is written when a Tang server is unreachable: [`prepare`] (the network
//! step: a passphrase and its JWE), then [`bind`] (local: the keyslot and the token in one header write), or, for
//! a volume being formatted, [`Prepared::token_slot`] (the keyslot and token written with the new header).

use super::Error;
use crate::crypto::Passphrase;
use crate::kms::clevis::{self, Pin, Settings};
use crate::luks::{Kdf, Volume, VolumeKey};
use serde_json::{Map, Value};

/// The LUKS2 token type clevis uses.
pub const TOKEN_TYPE: &str = "clevis";

/// A binding made but not yet written: the new keyslot's passphrase and its JWE.
pub struct Prepared {
    passphrase: Passphrase,
    jwe: String,
}

/// The network step: a random passphrase (256 bits, printable: `clevis luks bind` draws as many with `pwmake`)
/// encrypted to `pin`.
pub fn prepare(pin: &Pin, settings: &Settings) -> Result<Prepared, Error> {
    let bytes = zeroize::Zeroizing::new(crate::crypto::random::bytes::<32>());
    let passphrase = Passphrase::new(clevis::b64_encode(&bytes[..]).into_bytes());
    let jwe = clevis::encrypt(pin, passphrase.expose(), settings)?;
    Ok(Prepared { passphrase, jwe })
}

impl Prepared {
    /// The binding as a keyslot and token a new volume is formatted with ([`crate::luks::format::TokenSlot`]): the
    /// volume and its binding appear in one header write, never one without the other.
    pub fn token_slot(&self) -> Result<crate::luks::format::TokenSlot<'_>, Error> {
        let mut fields = Map::new();
        fields.insert("jwe".into(), flattened(&self.jwe)?);
        Ok(crate::luks::format::TokenSlot { passphrase: self.passphrase.expose(), kind: TOKEN_TYPE, fields })
    }
}

/// The local step: a keyslot for the prepared passphrase (with `kdf`) and its `clevis` token, in one header
/// write. Returns (keyslot id, token id).
pub fn bind(volume: &mut Volume, key: &VolumeKey, kdf: &Kdf, prepared: &Prepared) -> Result<(u32, u32), Error> {
    let token = prepared.token_slot()?;
    Ok(volume.add_keyslot_with_token(key, token.passphrase, kdf, token.kind, token.fields)?)
}

/// [`bind`] given one of the volume's passphrases: the new keyslot gets the key-derivation settings of the keyslot
/// that passphrase opens. Returns (keyslot id, token id).
pub fn bind_with_passphrase(volume: &mut Volume, passphrase: &[u8], prepared: &Prepared) -> Result<(u32, u32), Error> {
    let (slot, key) = volume.unlock(passphrase)?;
    let kdf = volume
        .keyslots()
        .into_iter()
        .find(|k| k.id == slot)
        .map(|k| k.kdf)
        .ok_or(crate::luks::Error::KeyslotNotActive(slot))?;
    bind(volume, &key, &kdf, prepared)
}

/// A compact JWE in JOSE's flattened JSON form (`protected`, `encrypted_key`, `iv`, `ciphertext`, `tag`).
fn flattened(compact: &str) -> Result<Value, Error> {
    let parts: Vec<&str> = compact.split('.').collect();
    let [protected, encrypted_key, iv, ciphertext, tag] = parts[..] else {
        return Err(clevis::Error::Malformed("not a compact JWE".into()).into());
    };
    Ok(serde_json::json!({
        "ciphertext": ciphertext, "encrypted_key": encrypted_key, "iv": iv, "protected": protected, "tag": tag,
    }))
}

/// The compact form of a token's `jwe` (flattened JSON, or already compact text).
fn compact(jwe: &Value) -> Option<String> {
    if let Some(text) = jwe.as_str() {
        return Some(text.trim().to_owned());
    }
    let part = |name: &str| jwe.get(name).and_then(Value::as_str);
    Some(format!(
        "{}.{}.{}.{}.{}",
        part("protected")?,
        part("encrypted_key").unwrap_or(""),
        part("iv")?,
        part("ciphertext")?,
        part("tag")?
    ))
}

/// One clevis binding of a volume.
#[derive(Debug, Clone)]
pub struct Binding {
    /// The token id.
    pub token: u32,
    /// The keyslots it names.
    pub keyslots: Vec<u32>,
    /// Its JWE, compact.
    pub jwe: Option<String>,
    /// `tang URL` or `sss T of [...]`; why not, when the JWE cannot be read.
    pub description: String,
}

/// The volume's clevis bindings (its LUKS2 tokens of type `clevis`), without contacting any server.
pub fn bindings(volume: &Volume) -> Vec<Binding> {
    volume
        .tokens()
        .into_iter()
        .filter(|(_, token)| token.kind == TOKEN_TYPE)
        .map(|(id, token)| {
            let jwe = token.extra.get("jwe").and_then(compact);
            let description = match jwe.as_deref().map(clevis::describe) {
                Some(Ok(description)) => description,
                Some(Err(e)) => format!("unreadable: {e}"),
                None => "unreadable: no `jwe`".into(),
            };
            Binding { token: id, keyslots: token.keyslots.iter().map(|k| k.0).collect(), jwe, description }
        })
        .collect()
}

/// The passphrase of a clevis-bound keyslot, recovered from its pin's servers, checked against the keyslot:
/// `clevis luks pass`. Tries each binding in token order; the first that opens its keyslot wins. Returns the
/// keyslot id and the passphrase.
pub fn recover_passphrase(volume: &Volume, path: &str, settings: &Settings) -> Result<(u32, Passphrase), Error> {
    let bindings = bindings(volume);
    let mut last = None;
    for binding in &bindings {
        let Some(jwe) = &binding.jwe else { continue };
        let passphrase = match clevis::decrypt(jwe, settings) {
            Ok(plaintext) => Passphrase::new(plaintext.to_vec()),
            Err(e) => {
                last = Some(e.into());
                continue;
            }
        };
        for &slot in &binding.keyslots {
            match volume.unlock_keyslot(slot, passphrase.expose()) {
                Ok(_) => return Ok((slot, passphrase)),
                Err(e) => last = Some(Error::Luks(e)),
            }
        }
    }
    Err(last.unwrap_or_else(|| Error::NoClevisBinding(path.to_owned())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_jwe_forms_round_trip() {
        let jwe = "eyJhIjoxfQ..aXY.Y3Q.dGFn";
        assert_eq!(compact(&flattened(jwe).unwrap()).as_deref(), Some(jwe));
        assert_eq!(compact(&Value::String(format!(" {jwe}\n"))).as_deref(), Some(jwe));
        assert!(compact(&serde_json::json!({"protected": "x"})).is_none());
        assert!(flattened("a.b").is_err());
    }
}
