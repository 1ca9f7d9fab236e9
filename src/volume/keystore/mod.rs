//! Where the passphrase that opens a volume lives, as a plug board: [`store`] is the contract every key store
//! keeps ([`KeyStore`], with the rotation [`Claim`] every store records), and [`wrap`] the contract of every `--key-wrap` key ([`KeyWrap`]); each store and each
//! wrap is one file beside them that imports only its contract, and this file (the chooser) sits above them all:
//! [`open`] parses `--key-store` and builds the store, [`open_key_wrap`] parses `--key-wrap`. Adding a store is a
//! new file and one arm in [`open`]; adding a wrap, a new file and one arm in [`open_key_wrap`].
//!
//! | `--key-store` | store |
//! | --- | --- |
//! | `file://DIR` | [`file::FileStore`] |
//! | `vault-kv://MOUNT/PREFIX` | [`vault_kv::VaultKvStore`] (OpenBao/Vault KV v2, check-and-set) |
//! | `kmip://PREFIX` | [`kmip::KmipStore`] (KMIP Secret Data objects named `PREFIX/ID/current`, …) |
//! | `NAME:...` (any other scheme) | [`plugin::PluginStore`] (`cryptadm-plugin-kms-NAME`) |
//!
//! | `--key-wrap` | wrap |
//! | --- | --- |
//! | `vault-transit://MOUNT/KEY` | [`transit_wrap::TransitWrap`] (values bound to the volume inside the plaintext) |
//! | `kmip://UID` | [`kmip_wrap::KmipWrap`] (server-side AES-GCM) |
//! | `aws-kms://ARN` | [`aws_kms_wrap::AwsKmsWrap`] (file and vault-kv stores; values bound to the volume) |

pub mod aws_kms_wrap;
pub mod claim;
pub mod file;
pub mod kmip;
pub mod kmip_wrap;
#[cfg(test)]
pub(crate) mod memory;
pub mod plugin;
pub mod store;
pub mod transit_wrap;
pub mod vault_kv;
pub mod wrap;

pub use claim::Claim;
pub use file::FileStore;
#[cfg(test)]
pub(crate) use memory::MemoryStore;
pub use plugin::{PluginContext, PluginSettings, PluginStore};
pub use store::{KeyStore, StoredKeys};
pub use vault_kv::VaultKvStore;
pub use wrap::KeyWrap;

use crate::exit::ExitStatus;
use crate::kms::KeyRef;
use crate::kms::vault::Vault;
use crate::volume::Error;
use std::sync::Arc;

/// The services stores and wraps reach, as configured: one field per kind of server (each `None` when not
/// configured), and the `--key-wrap` key.
#[derive(Debug, Clone, Default)]
pub struct Backends {
    /// How key-store plugins are found.
    pub plugins: PluginSettings,
    /// The OpenBao/Vault client (shared by every rotation of a `volume serve`).
    pub vault: Option<Arc<Vault>>,
    /// The key that wraps every stored value (`--key-wrap`), if any.
    pub key_wrap: Option<KeyRef>,
    /// The KMIP client, when a KMIP server is configured.
    pub kmip: Option<Arc<crate::kms::kmip::Kmip>>,
    /// The AWS client (`--key-wrap aws-kms://…`).
    pub aws: Option<Arc<crate::kms::aws::Aws>>,
}

impl Backends {
    /// The OpenBao/Vault client, or a usage error naming what needs it.
    fn vault(&self, what: &str) -> Result<Arc<Vault>, Error> {
        self.vault.clone().ok_or_else(|| Error::Store {
            status: ExitStatus::Usage,
            message: format!("{what}: no OpenBao/Vault server is configured (VAULT_ADDR, --vault-addr)"),
        })
    }

    /// The KMIP client, or a usage error naming what needs it.
    fn kmip(&self, what: &str) -> Result<Arc<crate::kms::kmip::Kmip>, Error> {
        self.kmip.clone().ok_or_else(|| Error::Store {
            status: ExitStatus::Usage,
            message: format!("{what}: no KMIP server is configured (--kmip-server, CRYPTADM_KMIP_SERVER)"),
        })
    }

    /// The `--key-wrap` key, built to bind values to volume `volume_id` of store `uri`; `None` without one.
    fn wrap(&self, uri: &str, volume_id: &str) -> Result<Option<Arc<dyn KeyWrap>>, Error> {
        let binding = wrap::Binding::new(uri, volume_id);
        self.key_wrap.as_ref().map(|reference| open_key_wrap(reference, self, Some(binding))).transpose()
    }
}

/// Opens the store `uri` for `volume_id`.
pub fn open(
    uri: &str,
    volume_id: &str,
    context: PluginContext,
    backends: &Backends,
) -> Result<Box<dyn KeyStore + Send>, Error> {
    let scheme = uri.split_once(':').map_or("", |(scheme, _)| scheme);
    match scheme {
        "vault-kv" => {
            let client = backends.vault(&format!("key store `{uri}`"))?;
            Ok(Box::new(VaultKvStore::from_uri(uri, volume_id, client, backends.wrap(uri, volume_id)?)?))
        }
        "kmip" => {
            let client = backends.kmip(&format!("key store `{uri}`"))?;
            Ok(Box::new(kmip::KmipStore::from_uri(uri, volume_id, client, backends.wrap(uri, volume_id)?)?))
        }
        // `file:x` without `//` stays a plugin's, as it always was.
        "file" if uri.starts_with("file://") => {
            Ok(Box::new(FileStore::from_uri(uri, volume_id)?.wrapped_by(backends.wrap(uri, volume_id)?)))
        }
        _ => Ok(Box::new(PluginStore::find(uri, volume_id, context, &backends.plugins)?)),
    }
}

/// Builds the `--key-wrap` key `reference`, binding the values it wraps to `binding` where its key manager can (see
/// [`wrap::Binding`]).
pub fn open_key_wrap(
    reference: &KeyRef,
    backends: &Backends,
    binding: Option<wrap::Binding>,
) -> Result<Arc<dyn KeyWrap>, Error> {
    match reference {
        KeyRef::VaultTransit { mount, key, wrapped: None } => {
            let client = backends.vault(&format!("--key-wrap `{reference}`"))?;
            Ok(Arc::new(transit_wrap::TransitWrap::new(client, mount, key, binding)))
        }
        KeyRef::Plugin { name, uri } if name == "kmip" => {
            let client = backends.kmip(&format!("--key-wrap `{uri}`"))?;
            Ok(Arc::new(kmip_wrap::KmipWrap::from_uri(uri, client, binding)?))
        }
        KeyRef::AwsKms { key } => {
            let client = backends.aws.clone().ok_or_else(|| Error::Store {
                status: ExitStatus::Usage,
                message: format!("--key-wrap `{reference}`: no AWS client is configured"),
            })?;
            Ok(Arc::new(aws_kms_wrap::AwsKmsWrap::new(client, key, binding)))
        }
        other => Err(Error::BadRequest(format!("--key-wrap `{other}` is not a key that can wrap stored passphrases"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_uris() {
        let backends = Backends::default();
        assert!(open("file:///tmp/x", "v", PluginContext::default(), &backends).is_ok());
        for bad in ["file://relative", "/abs", "vault:x", "vault-kv://kv/p"] {
            assert!(open(bad, "v", PluginContext::default(), &backends).is_err(), "{bad}");
        }
    }
}
