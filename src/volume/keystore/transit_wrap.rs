//! `--key-wrap vault-transit://MOUNT/KEY`: values are Transit ciphertexts (`vault:vN:…`) of an OpenBao/Vault
//! Transit key; the plaintext goes to Vault to be wrapped and comes back unwrapped.
//!
//! **Bound to the volume** (issue 42). OpenBao's `transit/rewrap` takes no `associated_data`, so the binding is
//! inside the plaintext, where Transit's authenticated encryption protects it: every value cryptadm writes is the
//! Transit ciphertext of the record
//!
//! `cryptadm volume key v2` ‖ 0x00 ‖ STORE ‖ 0x00 ‖ ID ‖ 0x00 ‖ PASSPHRASE
//!
//! (STORE the `--key-store` URI without a trailing `/`, ID the volume id; the bytes before the passphrase are the
//! additional data a `kmip:v2:` value is authenticated with). The stored value is still a plain `vault:vN:…`
//! ciphertext, so `transit/rewrap` rewraps it unchanged. On unwrap a record naming another volume or store is
//! refused (exit 15, naming both, as the AWS KMS wrap refuses one); editing a ciphertext fails Transit's tag check.
//! A plaintext without the header (a value written before, or seeded with `bao write transit/encrypt/KEY`) is the
//! passphrase itself and still opens; `volume rewrap` and the next rotation write the bound form.

use super::store::store_error;
use super::wrap::{Binding, FileRewrapKey, KeyWrap};
use crate::crypto::Passphrase;
use crate::exit::ExitStatus;
use crate::kms::Wrapping;
use crate::kms::vault::{Vault, transit_name};
use crate::volume::Error;
use std::sync::Arc;
use zeroize::Zeroizing;

/// The first bytes of a bound value's plaintext: the record's name and version, then 0x00.
pub const RECORD_HEADER: &[u8] = b"cryptadm volume key v2\0";

/// Whether a stored value is a Transit ciphertext.
pub fn is_transit_ciphertext(stored: &[u8]) -> bool {
    std::str::from_utf8(stored).is_ok_and(|t| t.starts_with("vault:v"))
}

/// The Transit plaintext of `passphrase` bound to `binding`: the record of the module's documentation.
pub fn bound_plaintext(binding: &Binding, passphrase: &[u8]) -> Zeroizing<Vec<u8>> {
    let mut record = Zeroizing::new(binding.record());
    record.reserve_exact(1 + passphrase.len());
    record.push(0);
    record.extend_from_slice(passphrase);
    record
}

/// The binding a Transit plaintext records and its passphrase: `Ok(None)` for a plaintext without the record's
/// header (an unbound value: the whole plaintext is the passphrase), an error (exit 3) for a malformed record.
fn parse_record(plain: &[u8]) -> Result<Option<(Binding, &[u8])>, Error> {
    let Some(rest) = plain.strip_prefix(RECORD_HEADER) else { return Ok(None) };
    let mut parts = rest.splitn(3, |&b| b == 0);
    let (Some(store), Some(volume), Some(passphrase)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(malformed());
    };
    let (Ok(store), Ok(volume)) = (std::str::from_utf8(store), std::str::from_utf8(volume)) else {
        return Err(malformed());
    };
    Ok(Some((Binding { store: store.to_owned(), volume: volume.to_owned() }, passphrase)))
}

fn malformed() -> Error {
    Error::Store {
        status: ExitStatus::InvalidInput,
        message: "a stored Transit plaintext starts with the bound record's header but is not a well-formed record \
                  (`cryptadm volume key v2`, STORE, ID and the passphrase, each followed by 0x00 but the last)"
            .into(),
    }
}

/// The passphrase of Transit plaintext `plain` read where `binding` says (a record naming another volume, or
/// unless `any_store` another store, is refused with exit 15), and the binding it records (`None`: unbound).
fn open_plaintext(
    plain: &[u8],
    binding: Option<&Binding>,
    any_store: bool,
) -> Result<(Option<Binding>, Passphrase), Error> {
    match parse_record(plain)? {
        Some((recorded, passphrase)) => {
            if let Some(binding) = binding {
                binding.check(&recorded.context(), any_store)?;
            }
            Ok((Some(recorded), Passphrase::new(passphrase.to_vec())))
        }
        None => Ok((None, Passphrase::new(plain.to_vec()))),
    }
}

/// Checks, for `volume rewrap`, that stored value `stored` may be bound to `binding`: refused (exit 15) when it
/// records another volume. Returns whether it is bound to `binding` already.
pub fn check_value(client: &dyn Wrapping, key: &str, stored: &str, binding: &Binding) -> Result<bool, Error> {
    let plain = client.unwrap(key, stored).map_err(store_error)?;
    let (recorded, _) = open_plaintext(&plain, Some(binding), true)?;
    Ok(recorded.as_ref() == Some(binding))
}

/// `volume rewrap` of one value with the newest version of Transit key `key`, bound to `binding`: a value bound to
/// it already is rewrapped inside Transit (`transit/rewrap`); an unbound one, or one bound to this volume in a store
/// that has moved, is encrypted anew as a bound record; one bound to another volume is refused (exit 15).
pub fn rewrap_value(client: &dyn Wrapping, key: &str, stored: &str, binding: &Binding) -> Result<String, Error> {
    let plain = client.unwrap(key, stored).map_err(store_error)?;
    let (recorded, passphrase) = open_plaintext(&plain, Some(binding), true)?;
    if recorded.as_ref() == Some(binding) {
        return client.rewrap(key, stored).map_err(store_error);
    }
    client.wrap(key, &bound_plaintext(binding, passphrase.expose())).map_err(store_error)
}

/// `volume rewrap` of a `file://` store with Transit key `key` (`MOUNT/KEY`), rotated first when `rotate`: each
/// value decrypted to read its binding, then [`rewrap_value`] (see `aws_kms_wrap::rewrap_file_store`).
pub fn file_rewrap_key<'a>(client: &'a Vault, (mount, key): (&str, &str), rotate: bool) -> FileRewrapKey<'a> {
    FileRewrapKey {
        client,
        key: transit_name(mount, key),
        uri: format!("vault-transit://{mount}/{key}"),
        form: "a Transit ciphertext",
        is_wrapped: is_transit_ciphertext,
        check: Some(check_value),
        rotate,
        rewrap: rewrap_value,
    }
}

/// A Transit key wrapping a store's values.
pub struct TransitWrap {
    client: Arc<Vault>,
    /// `MOUNT/KEY` as [`Wrapping`] names it.
    name: String,
    binding: Option<Binding>,
}

impl TransitWrap {
    /// The key `key` of the Transit engine at `mount`, binding values to `binding` when given.
    pub fn new(client: Arc<Vault>, mount: &str, key: &str, binding: Option<Binding>) -> Self {
        Self { client, name: transit_name(mount, key), binding }
    }
}

impl KeyWrap for TransitWrap {
    fn form(&self) -> &'static str {
        "Transit ciphertext"
    }

    fn is_wrapped(&self, stored: &[u8]) -> bool {
        is_transit_ciphertext(stored)
    }

    fn wrap(&self, key: &Passphrase) -> Result<String, Error> {
        match &self.binding {
            Some(binding) => self.client.wrap(&self.name, &bound_plaintext(binding, key.expose())),
            None => self.client.wrap(&self.name, key.expose()),
        }
        .map_err(store_error)
    }

    fn unwrap(&self, stored: &str) -> Result<Passphrase, Error> {
        let plain = self.client.unwrap(&self.name, stored).map_err(store_error)?;
        Ok(open_plaintext(&plain, self.binding.as_ref(), false)?.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_bind_the_passphrase_and_unbound_plaintexts_are_the_passphrase() {
        let binding = Binding::new("vault-kv://kv/cryptadm/", "pvc-1");
        let record = bound_plaintext(&binding, b"pass\0phrase");
        assert_eq!(record.as_slice(), b"cryptadm volume key v2\0vault-kv://kv/cryptadm\0pvc-1\0pass\0phrase");
        let (recorded, passphrase) = open_plaintext(&record, Some(&binding), false).unwrap();
        assert_eq!((recorded.as_ref(), passphrase.expose()), (Some(&binding), b"pass\0phrase".as_slice()));
        // Another volume's entry: refused with 15, naming both.
        let other = Binding::new("vault-kv://kv/cryptadm", "pvc-2");
        let refused = open_plaintext(&record, Some(&other), true).unwrap_err();
        assert_eq!(crate::exit::Classify::status(&refused), ExitStatus::DataLoss);
        assert!(refused.to_string().contains("volume `pvc-2` is bound to volume `pvc-1`"), "{refused}");
        // Another store: refused, unless rewrap binds it anew.
        let moved = Binding::new("vault-kv://kv/elsewhere", "pvc-1");
        assert!(open_plaintext(&record, Some(&moved), false).is_err());
        assert!(open_plaintext(&record, Some(&moved), true).is_ok());
        // An unbound value is its plaintext; a record cut short is malformed (3).
        let (recorded, passphrase) = open_plaintext(b"old passphrase", Some(&binding), false).unwrap();
        assert_eq!((recorded, passphrase.expose()), (None, b"old passphrase".as_slice()));
        let cut = open_plaintext(b"cryptadm volume key v2\0vault-kv://kv/cryptadm", Some(&binding), false);
        assert_eq!(crate::exit::Classify::status(&cut.unwrap_err()), ExitStatus::InvalidInput);
    }
}
