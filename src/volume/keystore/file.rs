//! The built-in `file://DIR` store: `DIR/<volume-id>/current`, `pending` and `previous`, each the passphrase byte
//! for byte, mode 0600, written atomically (temporary file, fsync, rename, fsync of the directory); the volume id
//! is made a safe file name by [`crate::volume::file_name_for_id`]. Commit writes `previous` and then renames
//! `pending` over `current`. With `--key-wrap` each file holds the value wrapped instead (for `aws-kms://`, the
//! KMS CiphertextBlob in standard base64, as the AWS CLI prints it), and a value in plain is refused. The
//! rotation claim is `DIR/<volume-id>/claim` (JSON, never wrapped): a new one is linked into place atomically
//! (`link` fails when a claim exists, even on NFS); replacing a claim that may be replaced is a rename, atomic on
//! one node (where the volume-id lock already serialises runs) though not a check-and-set between nodes sharing
//! the directory.

use super::store::{Claim, KeyStore, StoredKeys, same};
use super::wrap::KeyWrap;
use crate::atomic;
use crate::crypto::Passphrase;
use crate::exit::ExitStatus;
use crate::volume::{Error, file_name_for_id};
use std::io;
use std::path::{Path, PathBuf};

/// The built-in `file://DIR` store.
pub struct FileStore {
    dir: PathBuf,
    volume_id: String,
    wrap: Option<std::sync::Arc<dyn KeyWrap>>,
}

impl std::fmt::Debug for FileStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileStore").field("dir", &self.dir).field("volume_id", &self.volume_id).finish()
    }
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
        Self { dir: root.join(file_name_for_id(volume_id)), volume_id: volume_id.to_owned(), wrap: None }
    }

    /// The same store keeping every value wrapped by `wrap` (`--key-wrap`), when given.
    pub fn wrapped_by(mut self, wrap: Option<std::sync::Arc<dyn KeyWrap>>) -> Self {
        self.wrap = wrap;
        self
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
            Ok(bytes) => match &self.wrap {
                None => Ok(Some(Passphrase::new(bytes))),
                Some(wrap) => {
                    let stored = Passphrase::new(bytes);
                    let text = std::str::from_utf8(stored.expose()).ok().filter(|_| wrap.is_wrapped(stored.expose()));
                    let text = text.ok_or_else(|| Error::Store {
                        status: ExitStatus::InvalidInput,
                        message: format!("`{}` is not a {} (--key-wrap): refused", path.display(), wrap.form()),
                    })?;
                    wrap.unwrap(text).map(Some)
                }
            },
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
        let wrapped = self.wrap.as_ref().map(|wrap| wrap.wrap(key)).transpose()?;
        let bytes = wrapped.as_ref().map_or(key.expose(), |text| text.as_bytes());
        atomic::write(&path, bytes, atomic::MODE_PRIVATE).map_err(|e| store_io(&path, "writing", e))
    }

    fn read_claim(&self) -> Result<Option<Vec<u8>>, Error> {
        let path = self.path("claim");
        match std::fs::read(&path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(store_io(&path, "reading", e)),
        }
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

    fn claim(&self, claim: &Claim, force: bool) -> Result<Option<Claim>, Error> {
        // Only whether there is a key: nothing to unwrap.
        if !self.path("current").exists() {
            return Err(Error::NoStoredKey { volume_id: self.volume_id.clone() });
        }
        let claimed = |holder: &Claim| Error::Claimed { volume_id: self.volume_id.clone(), holder: holder.describe() };
        let held = self.read_claim()?;
        let replaced = held.as_deref().and_then(Claim::parse);
        if let Some(other) = replaced.as_ref().filter(|other| !claim.may_replace(other, force)) {
            return Err(claimed(other));
        }
        let path = self.path("claim");
        if held.is_some() {
            atomic::write(&path, claim.to_json().as_bytes(), atomic::MODE_PRIVATE)
                .map_err(|e| store_io(&path, "writing", e))?;
            return Ok(replaced.filter(|held| held.run != claim.run));
        }
        // No claim yet: write it aside, then link it into place, which fails if another run came first.
        let aside = self.path(&format!("claim.{}", claim.run));
        atomic::write(&aside, claim.to_json().as_bytes(), atomic::MODE_PRIVATE)
            .map_err(|e| store_io(&aside, "writing", e))?;
        let linked = std::fs::hard_link(&aside, &path);
        let _ = std::fs::remove_file(&aside);
        match linked {
            Ok(()) => self.sync_dir().map(|()| None),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                let winner = self.read_claim()?.as_deref().and_then(Claim::parse);
                Err(Error::Claimed {
                    volume_id: self.volume_id.clone(),
                    holder: winner.map_or_else(|| "a run that claimed it just now".into(), |w| w.describe()),
                })
            }
            Err(e) => Err(store_io(&path, "linking", e)),
        }
    }

    fn release(&self, claim: &Claim) -> Result<(), Error> {
        let held = self.read_claim()?;
        if held.as_deref().and_then(Claim::parse).as_ref() != Some(claim) {
            return Ok(());
        }
        let path = self.path("claim");
        match std::fs::remove_file(&path) {
            Ok(()) => self.sync_dir(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(store_io(&path, "removing", e)),
        }
    }

    /// One atomic write of `current` (after the round trip of a wrapped value is checked); an entry's other
    /// files are never touched: an entry with a rotation under way is refused.
    fn import(&self, key: &Passphrase, replace: bool) -> Result<(), Error> {
        if self.path("current").exists() {
            if !replace {
                return Err(Error::AlreadyStored { volume_id: self.volume_id.clone() });
            }
            let names = ["pending", "previous"];
            let under_way = names.iter().any(|name| self.path(name).exists());
            let claim = self.read_claim()?.as_deref().and_then(Claim::parse);
            super::store::import_blocked(&self.volume_id, under_way, claim.as_ref())?;
        }
        let sealed = super::store::seal_checked(self.wrap.as_deref(), key)?;
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
            .map_err(|e| store_io(&self.dir, "creating", e))?;
        let path = self.path("current");
        atomic::write(&path, &sealed, atomic::MODE_PRIVATE).map_err(|e| store_io(&path, "writing", e))
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

    #[test]
    fn file_store_claims_one_run_at_a_time() {
        let root = tempfile::tempdir().unwrap();
        let store = FileStore::new(root.path(), "pvc-1");
        let mine = Claim::new(super::super::claim::CLAIM_LIFETIME);
        assert!(matches!(store.claim(&mine, false), Err(Error::NoStoredKey { .. })));
        std::fs::create_dir(root.path().join("pvc-1")).unwrap();
        std::fs::write(root.path().join("pvc-1/current"), "old").unwrap();
        assert_eq!(store.claim(&mine, false).unwrap(), None);
        assert_eq!(store.claim(&mine, false).unwrap(), None, "its own claim again");
        let rival = Claim { run: "rival".into(), boot: "elsewhere".into(), ..mine.clone() };
        assert!(matches!(store.claim(&rival, false), Err(Error::Claimed { .. })));
        store.release(&rival).unwrap();
        assert!(root.path().join("pvc-1/claim").exists(), "a rival's release removes nothing");
        assert_eq!(store.claim(&rival, true).unwrap(), Some(mine.clone()));
        let expired = Claim { run: "expired".into(), expires: 1, ..rival.clone() };
        std::fs::write(root.path().join("pvc-1/claim"), expired.to_json()).unwrap();
        assert_eq!(store.claim(&rival, false).unwrap(), Some(expired), "an expired claim is taken over");
        store.release(&rival).unwrap();
        assert!(!root.path().join("pvc-1/claim").exists());
        let names: Vec<_> =
            std::fs::read_dir(root.path().join("pvc-1")).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["current"]);
    }
}
