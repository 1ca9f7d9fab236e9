//! `volume import`: an existing volume's passphrase into a key store, so that `volume rotate` can take it over.
//!
//! The passphrase is checked against the volume first (it must open a keyslot of its LUKS header), under the
//! same locks a rotation takes (the volume id and the volume itself), then written by the store in one step
//! ([`super::KeyStore::import`]): a wrapped value is unwrapped again before it is written, an entry that holds a
//! key already is refused unless replacing was asked, and one with a rotation under way is refused even then.

use super::Error;
use super::keystore::{self, PluginContext};
use super::lock::{IdLock, lock_volume};
use super::operation::Settings;
use super::rotate::Keyslots;
use crate::crypto::Passphrase;
use crate::exit::Classify;
use crate::luks;
use std::path::Path;

/// What [`import_volume`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Imported {
    /// The keyslot the imported passphrase opens.
    pub keyslot: u32,
}

/// Records `passphrase` as the key of volume `volume_id` (the LUKS volume at `path`) in the store of `settings`;
/// `replace` allows replacing a key the store holds already.
pub fn import_volume(
    volume_id: &str,
    path: &Path,
    passphrase: &Passphrase,
    replace: bool,
    settings: &Settings,
) -> Result<Imported, Error> {
    if passphrase.expose().is_empty() {
        return Err(Error::BadRequest("the passphrase to import is empty".into()));
    }
    match std::fs::metadata(path) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::VolumeNotFound { path: path.to_owned() });
        }
        Err(e) => return Err(Error::Io { context: format!("reading `{}`", path.display()), source: e }),
    }
    let _id_lock = IdLock::acquire(&settings.lock_dir, volume_id)?;
    let volume = luks::Volume::open(path, false)
        .map_err(|e| Error::Header { status: e.status(), source: format!("`{}`: {e}", path.display()).into() })?;
    lock_volume(volume.file(), path)?;
    let (keyslot, _) = Keyslots::unlock(&volume, passphrase.expose())?
        .ok_or_else(|| Error::WrongPassphrase { path: path.to_owned() })?;
    let store = keystore::open(&settings.key_store, volume_id, PluginContext::default(), &settings.backends)?;
    store.import(passphrase, replace)?;
    Ok(Imported { keyslot })
}
