//! An in-memory store for the engine's unit tests.

use super::store::{KeyStore, StoredKeys};
use crate::crypto::Passphrase;
use crate::volume::Error;

/// (current, pending, previous) of the in-memory store.
pub(crate) type Snapshot = (Option<Vec<u8>>, Option<Vec<u8>>, Option<Vec<u8>>);

/// An in-memory store for the engine's unit tests.
#[derive(Default)]
pub(crate) struct MemoryStore {
    keys: std::cell::RefCell<Snapshot>,
}

impl MemoryStore {
    pub fn with_current(key: &[u8]) -> Self {
        let store = Self::default();
        store.keys.borrow_mut().0 = Some(key.to_vec());
        store
    }
    pub fn set_previous(&self, key: &[u8]) {
        self.keys.borrow_mut().2 = Some(key.to_vec());
    }
    /// (current, pending, previous)
    pub fn snapshot(&self) -> Snapshot {
        self.keys.borrow().clone()
    }
}

impl KeyStore for MemoryStore {
    fn get(&self) -> Result<StoredKeys, Error> {
        let keys = self.keys.borrow();
        let wrap = |k: &Option<Vec<u8>>| k.clone().map(Passphrase::new);
        let current = wrap(&keys.0).ok_or(Error::NoStoredKey { volume_id: "test".into() })?;
        Ok(StoredKeys { current, pending: wrap(&keys.1), previous: wrap(&keys.2) })
    }
    fn put_pending(&self, new: &Passphrase) -> Result<(), Error> {
        self.keys.borrow_mut().1 = Some(new.expose().to_vec());
        Ok(())
    }
    fn commit(&self, new: &Passphrase) -> Result<(), Error> {
        let mut keys = self.keys.borrow_mut();
        if keys.1.as_deref() == Some(new.expose()) {
            keys.2 = keys.0.take();
            keys.0 = keys.1.take();
        }
        Ok(())
    }
    fn forget_previous(&self) -> Result<(), Error> {
        self.keys.borrow_mut().2 = None;
        Ok(())
    }
}
