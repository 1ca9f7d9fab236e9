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

/// The lock on the file that holds a volume's bytes, whatever path or volume id reaches it, held until dropped:
/// two loop devices over one image, or a loop device and its image, are one volume. Taken on
/// `DIR/backing-<device>-<inode>.lock`, so that the image itself (which cryptsetup may lock) is left alone.
#[derive(Debug)]
pub struct BackingLock {
    _file: File,
}

/// Locks the backing file of `volume` (opened from `path`): an image file is its own backing file; for a loop
/// device, `<sysfs>/dev/block/MAJ:MIN/loop/backing_file` names it. Other block devices have none (`Ok(None)`),
/// nor has a loop device whose backing file is gone or not visible here.
pub fn lock_backing_file(dir: &Path, volume: &File, path: &Path, sysfs: &Path) -> Result<Option<BackingLock>, Error> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    const LOOP_MAJOR: u32 = 7;
    let meta = volume.metadata().map_err(Error::io(format!("reading `{}`", path.display())))?;
    let (device, inode, backing) = if meta.file_type().is_file() {
        (meta.dev(), meta.ino(), path.to_owned())
    } else if meta.file_type().is_block_device() && rustix::fs::major(meta.rdev()) == LOOP_MAJOR {
        let (major, minor) = (rustix::fs::major(meta.rdev()), rustix::fs::minor(meta.rdev()));
        let link = sysfs.join(format!("dev/block/{major}:{minor}/loop/backing_file"));
        let Ok(text) = std::fs::read_to_string(&link) else { return Ok(None) };
        let backing = PathBuf::from(text.trim_end_matches('\n'));
        let Ok(found) = std::fs::metadata(&backing) else { return Ok(None) };
        (found.dev(), found.ino(), backing)
    } else {
        return Ok(None);
    };
    let lock_path = dir.join(format!("backing-{device}-{inode}.lock"));
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(Error::io(format!("opening the lock file `{}`", lock_path.display())))?;
    exclusive(&file, || {
        format!(
            "`{}`: its backing file `{}` is in use under another path or volume id",
            path.display(),
            backing.display()
        )
    })?;
    Ok(Some(BackingLock { _file: file }))
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

        // The same image through a second path (a hard link): one backing file.
        let locks = dir.path().join("locks");
        let link = dir.path().join("link");
        std::fs::hard_link(&image, &link).unwrap();
        let held = lock_backing_file(&locks, &a, &image, Path::new("/sys")).unwrap();
        assert!(held.is_some());
        let other = lock_backing_file(&locks, &File::open(&link).unwrap(), &link, Path::new("/sys"));
        assert!(matches!(other, Err(Error::Busy { .. })), "{other:?}");
        drop(held);
        assert!(lock_backing_file(&locks, &b, &link, Path::new("/sys")).unwrap().is_some());
    }
}
