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
        Self::take(dir, &file_name_for_id(volume_id), || format!("volume id `{volume_id}`"))
    }

    /// Takes the lock of the volume whose store entry (and lock file) is named `name`, the volume id as
    /// [`file_name_for_id`] wrote it: for a walk over a store's entries, which knows names, not ids.
    pub fn acquire_name(dir: &Path, name: &str) -> Result<Self, Error> {
        Self::take(dir, name, || format!("volume `{name}`"))
    }

    fn take(dir: &Path, name: &str, what: impl Fn() -> String) -> Result<Self, Error> {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(Error::io(format!("creating the lock directory `{}`", dir.display())))?;
        let path = dir.join(format!("{name}.lock"));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(Error::io(format!("opening the lock file `{}`", path.display())))?;
        exclusive(&file, what)?;
        Ok(Self { _file: file, path })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The lock on the file(s) that hold a volume's bytes, whatever path or volume id reaches them, held until
/// dropped: two loop devices over one image, a loop device and its image, or a device-mapper device stacked on a
/// loop device and that loop device, are one volume. Taken on `DIR/backing-<device>-<inode>.lock`, so that the
/// image itself (which cryptsetup may lock) is left alone.
#[derive(Debug)]
pub struct BackingLock {
    _files: Vec<File>,
}

/// How deep device-mapper stacks are followed (dm on dm on … on a loop device).
const MAX_STACK: u32 = 8;

/// Locks the backing file(s) of `volume` (opened from `path`): an image file is its own backing file; a block
/// device's are found in sysfs (`<sysfs>/dev/block/MAJ:MIN`): a loop device's `loop/backing_file`; a partition's,
/// those of its disk; a device-mapper device's, those of the devices in its `slaves/`, followed down. A device
/// with none (a disk, a loop device whose backing file is gone or not visible here) is `Ok(None)`.
pub fn lock_backing_file(dir: &Path, volume: &File, path: &Path, sysfs: &Path) -> Result<Option<BackingLock>, Error> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let meta = volume.metadata().map_err(Error::io(format!("reading `{}`", path.display())))?;
    let backing = if meta.file_type().is_file() {
        vec![path.to_owned()]
    } else if meta.file_type().is_block_device() {
        let (major, minor) = (rustix::fs::major(meta.rdev()), rustix::fs::minor(meta.rdev()));
        backing_paths(sysfs, major, minor)
    } else {
        return Ok(None);
    };
    lock_paths(dir, path, &backing)
}

/// The files holding the bytes of block device `major:minor`, as `sysfs` shows them (see [`lock_backing_file`]).
fn backing_paths(sysfs: &Path, major: u32, minor: u32) -> Vec<PathBuf> {
    let mut found = Vec::new();
    collect_backing(&sysfs.join(format!("dev/block/{major}:{minor}")), MAX_STACK, &mut found);
    found
}

fn collect_backing(device: &Path, depth: u32, found: &mut Vec<PathBuf>) {
    if let Ok(text) = std::fs::read_to_string(device.join("loop/backing_file")) {
        found.push(PathBuf::from(text.trim_end_matches('\n')));
        return;
    }
    if depth == 0 {
        return;
    }
    // A partition's directory is inside its disk's (sysfs resolves `..` on the real path, not the link).
    if device.join("partition").is_file() {
        collect_backing(&device.join(".."), depth - 1, found);
        return;
    }
    if !device.join("dm").is_dir() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(device.join("slaves")) else { return };
    let mut below: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    below.sort();
    for slave in below {
        collect_backing(&slave, depth - 1, found);
    }
}

/// Locks every file of `backing` that exists (in device and inode order, each once), for the volume at `path`.
fn lock_paths(dir: &Path, path: &Path, backing: &[PathBuf]) -> Result<Option<BackingLock>, Error> {
    use std::os::unix::fs::MetadataExt;
    let mut inodes: Vec<(u64, u64, &PathBuf)> = backing
        .iter()
        .filter_map(|file| std::fs::metadata(file).ok().map(|found| (found.dev(), found.ino(), file)))
        .collect();
    inodes.sort();
    inodes.dedup_by_key(|(device, inode, _)| (*device, *inode));
    if inodes.is_empty() {
        return Ok(None);
    }
    let mut files = Vec::new();
    for (device, inode, file) in inodes {
        let lock_path = dir.join(format!("backing-{device}-{inode}.lock"));
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(Error::io(format!("opening the lock file `{}`", lock_path.display())))?;
        exclusive(&lock, || {
            format!(
                "`{}`: its backing file `{}` is in use under another path or volume id",
                path.display(),
                file.display()
            )
        })?;
        files.push(lock);
    }
    Ok(Some(BackingLock { _files: files }))
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

    /// A fake sysfs: `dm-1` stacked on `dm-0` stacked on `loop3`, `dm-2` on two loop devices, `loop5p1` a
    /// partition of `loop5`; `dev/block/MAJ:MIN` links to the devices as in the kernel's.
    #[test]
    fn device_mapper_stacks_and_partitions_resolve_to_their_loop_backing_files() {
        use std::os::unix::fs::symlink;
        let root = tempfile::tempdir().unwrap();
        let sysfs = root.path().join("sys");
        let blocks = sysfs.join("devices/virtual/block");
        let image = root.path().join("image");
        let other = root.path().join("other");
        std::fs::write(&image, b"x").unwrap();
        std::fs::write(&other, b"y").unwrap();
        let device = |name: &str, dev: &str| {
            let dir = blocks.join(name);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::create_dir_all(sysfs.join("dev/block")).unwrap();
            symlink(&dir, sysfs.join("dev/block").join(dev)).unwrap();
            dir
        };
        let looped = |name: &str, dev: &str, file: &Path| {
            let dir = device(name, dev);
            std::fs::create_dir_all(dir.join("loop")).unwrap();
            std::fs::write(dir.join("loop/backing_file"), format!("{}\n", file.display())).unwrap();
            dir
        };
        let mapped = |name: &str, dev: &str, slaves: &[&Path]| {
            let dir = device(name, dev);
            std::fs::create_dir_all(dir.join("dm")).unwrap();
            std::fs::create_dir_all(dir.join("slaves")).unwrap();
            for slave in slaves {
                symlink(slave, dir.join("slaves").join(slave.file_name().unwrap())).unwrap();
            }
        };
        let loop3 = looped("loop3", "7:3", &image);
        let loop4 = looped("loop4", "7:4", &other);
        mapped("dm-0", "253:0", &[&loop3]);
        mapped("dm-1", "253:1", &[&blocks.join("dm-0")]);
        mapped("dm-2", "253:2", &[&loop3, &loop4]);
        let loop5 = looped("loop5", "7:5", &other);
        let part = loop5.join("loop5p1");
        std::fs::create_dir_all(&part).unwrap();
        std::fs::write(part.join("partition"), "1\n").unwrap();
        symlink(&part, sysfs.join("dev/block/259:0")).unwrap();
        device("sda", "8:0");

        assert_eq!(backing_paths(&sysfs, 7, 3), vec![image.clone()]);
        assert_eq!(backing_paths(&sysfs, 253, 0), vec![image.clone()]);
        assert_eq!(backing_paths(&sysfs, 253, 1), vec![image.clone()]);
        assert_eq!(backing_paths(&sysfs, 253, 2), vec![image.clone(), other.clone()]);
        assert_eq!(backing_paths(&sysfs, 259, 0), vec![other.clone()]);
        assert!(backing_paths(&sysfs, 8, 0).is_empty());
        assert!(backing_paths(&sysfs, 9, 9).is_empty());

        // The mapping on the loop device and the loop device itself are one volume; so is a mapping over two
        // loop devices and either of them.
        let locks = root.path().join("locks");
        std::fs::create_dir_all(&locks).unwrap();
        let dm = Path::new("/dev/dm-1");
        let held = lock_paths(&locks, dm, &backing_paths(&sysfs, 253, 1)).unwrap().unwrap();
        let refused = lock_paths(&locks, Path::new("/dev/loop3"), &backing_paths(&sysfs, 7, 3));
        let Err(Error::Busy { what }) = refused else { panic!("{refused:?}") };
        assert!(what.contains("`/dev/loop3`: its backing file") && what.contains("under another path"), "{what}");
        assert!(matches!(lock_paths(&locks, dm, &backing_paths(&sysfs, 253, 2)), Err(Error::Busy { .. })));
        assert!(lock_paths(&locks, Path::new("/dev/loop4"), &backing_paths(&sysfs, 7, 4)).unwrap().is_some());
        drop(held);
        assert!(lock_paths(&locks, dm, &backing_paths(&sysfs, 253, 2)).unwrap().is_some());
    }
}
