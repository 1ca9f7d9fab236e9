//! One operation per volume: an exclusive, non-blocking `flock` on a lock file per volume id and on the volume
//! itself (the image file or block device, as cryptsetup's own header locking does), held for the whole
//! operation. A second caller, in this process or another, fails at once with [`Error::Busy`].
//!
//! `flock` locks belong to the open file, so two threads of `volume serve` that open the same volume exclude each
//! other too, and the kernel drops the locks when a process dies (a crash leaves no stale lock behind).

use super::{Error, file_name_for_id};
use rustix::fs::FlockOperation;
use std::fs::File;
use std::path::{Path, PathBuf};

/// The lock on one volume id, held until dropped.
#[derive(Debug)]
pub struct IdLock {
    _file: File,
    path: PathBuf,
}

impl IdLock {
    /// Takes the lock file `DIR/<volume-id>.lock` (created, with `DIR`, if missing).
    pub fn acquire(dir: &Path, volume_id: &str) -> Result<Self, Error> {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(Error::io(format!("creating the lock directory `{}`", dir.display())))?;
        let path = dir.join(format!("{}.lock", file_name_for_id(volume_id)));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(Error::io(format!("opening the lock file `{}`", path.display())))?;
        exclusive(&file, || format!("volume id `{volume_id}`"))?;
        Ok(Self { _file: file, path })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Takes an exclusive lock on an open volume (image or device) for as long as the file stays open.
pub fn lock_volume(file: &File, path: &Path) -> Result<(), Error> {
    exclusive(file, || format!("`{}`", path.display()))
}

fn exclusive(file: &File, what: impl Fn() -> String) -> Result<(), Error> {
    match rustix::fs::flock(file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(()),
        Err(rustix::io::Errno::WOULDBLOCK) => Err(Error::Busy { what: what() }),
        Err(e) => Err(Error::Io { context: format!("locking {}", what()), source: e.into() }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_the_same_id_or_volume_is_busy() {
        let dir = tempfile::tempdir().unwrap();
        let first = IdLock::acquire(&dir.path().join("locks"), "pvc-1").unwrap();
        assert!(matches!(IdLock::acquire(&dir.path().join("locks"), "pvc-1"), Err(Error::Busy { .. })));
        assert!(IdLock::acquire(&dir.path().join("locks"), "pvc-2").is_ok());
        drop(first);
        assert!(IdLock::acquire(&dir.path().join("locks"), "pvc-1").is_ok());

        let image = dir.path().join("image");
        std::fs::write(&image, b"x").unwrap();
        let a = File::open(&image).unwrap();
        let b = File::open(&image).unwrap();
        lock_volume(&a, &image).unwrap();
        assert!(matches!(lock_volume(&b, &image), Err(Error::Busy { .. })));
    }
}
