//! The built-in `file://DIR` store: `DIR/<volume-id>/current`, `pending` and `previous`, each the passphrase byte
//! for byte, mode 0600, written atomically (temporary file, fsync, rename, fsync of the directory); the volume id
//! is made a safe file name by [`crate::volume::file_name_for_id`]. Commit writes `previous` and then renames
//! `pending` over `current`.

use super::store::{KeyStore, StoredKeys, same};
use crate::atomic;
use crate::crypto::Passphrase;
use crate::exit::ExitStatus;
use crate::volume::{Error, file_name_for_id};
use std::io;
use std::path::{Path, PathBuf};

/// The built-in `file://DIR` store.
#[derive(Debug)]
pub struct FileStore {
    dir: PathBuf,
    volume_id: String,
}

impl FileStore {
    /// The entry of `volume_id` in the store `uri` (`file://DIR`, DIR absolute).
    pub fn from_uri(uri: &str, volume_id: &str) -> Result<Self, Error> {
        match uri.strip_prefix("file://") {
            Some(dir) if dir.starts_with('/') => Ok(Self::new(Path::new(dir), volume_id)),
            _ => Err(Error::BadRequest(format!("key store `{uri}`: file:// needs an absolute directory"))),
        }
    }

    /// The entry of `volume_id` under `root`.
    pub fn new(root: &Path, volume_id: &str) -> Self {
        Self { dir: root.join(file_name_for_id(volume_id)), volume_id: volume_id.to_owned() }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    fn read(&self, name: &str) -> Result<Option<Passphrase>, Error> {
        let path = self.path(name);
        match std::fs::read(&path) {
            Ok(bytes) if bytes.is_empty() => Err(Error::Store {
                status: ExitStatus::InvalidInput,
                message: format!("`{}` is empty", path.display()),
            }),
            Ok(bytes) => Ok(Some(Passphrase::new(bytes))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(store_io(&path, "reading", e)),
        }
    }

    fn write(&self, name: &str, key: &Passphrase) -> Result<(), Error> {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
            .map_err(|e| store_io(&self.dir, "creating", e))?;
        let path = self.path(name);
        atomic::write(&path, key.expose(), atomic::MODE_PRIVATE).map_err(|e| store_io(&path, "writing", e))
    }

    fn sync_dir(&self) -> Result<(), Error> {
        std::fs::File::open(&self.dir).and_then(|d| d.sync_all()).map_err(|e| store_io(&self.dir, "syncing", e))
    }
}

fn store_io(path: &Path, doing: &str, e: io::Error) -> Error {
    let status = if e.kind() == io::ErrorKind::NotFound { ExitStatus::NotFound } else { ExitStatus::Failure };
    Error::Store { status, message: format!("{doing} `{}`: {e}", path.display()) }
}

impl KeyStore for FileStore {
    fn get(&self) -> Result<StoredKeys, Error> {
        let current = self.read("current")?.ok_or_else(|| Error::NoStoredKey { volume_id: self.volume_id.clone() })?;
        Ok(StoredKeys { current, pending: self.read("pending")?, previous: self.read("previous")? })
    }

    fn put_pending(&self, new: &Passphrase) -> Result<(), Error> {
        self.write("pending", new)
    }

    fn commit(&self, new: &Passphrase) -> Result<(), Error> {
        let keys = self.get()?;
        let pending_is_new = keys.pending.as_ref().is_some_and(|p| same(p, new));
        if !pending_is_new {
            if same(&keys.current, new) {
                return Ok(());
            }
            return Err(Error::Store {
                status: ExitStatus::Failure,
                message: format!("`{}` does not hold the key being committed", self.path("pending").display()),
            });
        }
        // The replaced key first, so a crash between the two leaves pending (a rerun commits again).
        self.write("previous", &keys.current)?;
        let (from, to) = (self.path("pending"), self.path("current"));
        std::fs::rename(&from, &to).map_err(|e| store_io(&from, "renaming", e))?;
        self.sync_dir()
    }

    fn forget_previous(&self) -> Result<(), Error> {
        let path = self.path("previous");
        match std::fs::remove_file(&path) {
            Ok(()) => self.sync_dir(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(store_io(&path, "removing", e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(text: &str) -> Passphrase {
        Passphrase::new(text.as_bytes().to_vec())
    }

    #[test]
    fn file_store_walks_pending_commit_forget_with_private_files() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let store = FileStore::new(root.path(), "pvc/1");
        assert!(matches!(store.get(), Err(Error::NoStoredKey { .. })));
        std::fs::create_dir(root.path().join("pvc%2F1")).unwrap();
        std::fs::write(root.path().join("pvc%2F1/current"), "old").unwrap();
        store.put_pending(&key("new")).unwrap();
        let mode = std::fs::metadata(root.path().join("pvc%2F1/pending")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        store.commit(&key("new")).unwrap();
        store.commit(&key("new")).unwrap();
        let keys = store.get().unwrap();
        assert_eq!(keys.current.expose(), b"new");
        assert!(keys.pending.is_none());
        assert_eq!(keys.previous.unwrap().expose(), b"old");
        store.forget_previous().unwrap();
        store.forget_previous().unwrap();
        assert!(store.get().unwrap().previous.is_none());
        assert!(matches!(store.commit(&key("other")), Err(Error::Store { .. })));
    }
}
