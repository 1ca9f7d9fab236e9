//! `--key-wrap vault-transit://MOUNT/KEY`: values are Transit ciphertexts (`vault:vN:…`) of an OpenBao/Vault
//! Transit key; the plaintext goes to Vault to be wrapped and comes back unwrapped.

use super::store::store_error;
use super::wrap::KeyWrap;
use crate::crypto::Passphrase;
use crate::kms::Wrapping;
use crate::kms::vault::{Vault, transit_name};
use crate::volume::Error;
use std::sync::Arc;

/// Whether a stored value is a Transit ciphertext.
pub fn is_transit_ciphertext(stored: &[u8]) -> bool {
    std::str::from_utf8(stored).is_ok_and(|t| t.starts_with("vault:v"))
}

/// A Transit key wrapping a store's values.
pub struct TransitWrap {
    client: Arc<Vault>,
    /// `MOUNT/KEY` as [`Wrapping`] names it.
    name: String,
}

impl TransitWrap {
    /// The key `key` of the Transit engine at `mount`.
    pub fn new(client: Arc<Vault>, mount: &str, key: &str) -> Self {
        Self { client, name: transit_name(mount, key) }
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
        self.client.wrap(&self.name, key.expose()).map_err(store_error)
    }

    fn unwrap(&self, stored: &str) -> Result<Passphrase, Error> {
        let plain = self.client.unwrap(&self.name, stored).map_err(store_error)?;
        Ok(Passphrase::new(plain.to_vec()))
    }
}
