//! [`Keyslots`] for the LUKS library's [`luks::Volume`]: "does not open" becomes `None`, every other error keeps
//! the library's exit status.

use super::{Error, Keyslots};
use crate::exit::Classify;
use crate::luks;

fn header(error: luks::Error) -> Error {
    Error::Header { status: error.status(), source: Box::new(error) }
}

impl Keyslots for luks::Volume {
    type VolumeKey = luks::VolumeKey;
    type Kdf = luks::Kdf;

    fn reload(&mut self) -> Result<(), Error> {
        luks::Volume::reload(self).map_err(header)
    }

    fn keyslots(&self) -> Vec<(u32, luks::Kdf)> {
        luks::Volume::keyslots(self).into_iter().map(|slot| (slot.id, slot.kdf)).collect()
    }

    fn unlock(&self, passphrase: &[u8]) -> Result<Option<(u32, luks::VolumeKey)>, Error> {
        match luks::Volume::unlock(self, passphrase) {
            Ok(opened) => Ok(Some(opened)),
            Err(luks::Error::NoKeyslotOpens) => Ok(None),
            Err(e) => Err(header(e)),
        }
    }

    fn unlock_keyslot(&self, id: u32, passphrase: &[u8]) -> Result<Option<luks::VolumeKey>, Error> {
        match luks::Volume::unlock_keyslot(self, id, passphrase) {
            Ok(key) => Ok(Some(key)),
            Err(luks::Error::WrongPassphrase(_) | luks::Error::KeyslotNotActive(_)) => Ok(None),
            Err(e) => Err(header(e)),
        }
    }

    fn add_keyslot(&mut self, key: &luks::VolumeKey, passphrase: &[u8], kdf: &luks::Kdf) -> Result<u32, Error> {
        luks::Volume::add_keyslot(self, key, passphrase, kdf).map_err(header)
    }

    fn wipe_keyslot(&mut self, id: u32) -> Result<(), Error> {
        luks::Volume::wipe_keyslot(self, id).map_err(header)
    }

    fn keyslot_wiped(&self, id: u32) -> Result<bool, Error> {
        luks::Volume::keyslot_wiped(self, id).map_err(header)
    }

    fn remove_keyslot(&mut self, id: u32) -> Result<(), Error> {
        luks::Volume::remove_keyslot(self, id).map_err(header)
    }
}
