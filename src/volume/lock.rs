//! One operation per volume: an exclusive, non-blocking `flock` on a lock file per volume id, on the volume
//! itself (the image file or block device, as cryptsetup's own header locking does) and on a lock file for the
//! file or disk that holds its bytes (a byte-range lock for a partition: [`BackingLock`]), held for the whole
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
/// loop device and that loop device, are one volume. Taken on `DIR/backing-<device>-<inode>.lock` (a disk with no
/// backing file: `DIR/disk-<major>-<minor>.lock`), so that the image or disk itself (which cryptsetup and udev
/// lock) is left alone.
///
/// A whole file or disk is locked exclusively (`flock`). A partition only shares that lock and locks its own bytes
/// with an open-file-description byte-range lock (`F_OFD_SETLK`): two partitions of one disk run side by side,
/// while the same partition reached twice, overlapping partitions, or the whole disk and a partition refuse each
/// other. Like `flock`, OFD locks belong to the open file (two threads of `volume serve` exclude each other) and
/// die with the process.
#[derive(Debug)]
pub struct BackingLock {
    _files: Vec<File>,
}

/// How deep device-mapper stacks are followed (dm on dm on … on a loop device).
const MAX_STACK: u32 = 8;

/// sysfs counts a partition's `start` and `size` in 512-byte sectors, whatever the device's block size.
const SYSFS_SECTOR: u64 = 512;

/// The bytes of a backing file or disk that a volume covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Span {
    Whole,
    /// `[start, start + len)`.
    Bytes {
        start: u64,
        len: u64,
    },
}

/// What holds a volume's bytes: a file (a loop device's backing file, or the image itself) or a disk, by number.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Holder {
    File(PathBuf),
    Disk { major: u32, minor: u32 },
}

/// A span of one holder.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Extent {
    holder: Holder,
    span: Span,
}

/// Locks the backing file(s) of `volume` (opened from `path`): an image file is its own backing file; a block
/// device's are found in sysfs (`<sysfs>/dev/block/MAJ:MIN`): a loop device's `loop/backing_file`; a partition's,
/// its bytes of its disk's (at the loop device's `loop/offset`); a device-mapper device's, those of the devices in
/// its `slaves/`, followed down. A disk or partition with no backing file is locked by the disk's number; a device
/// with none of these (a loop device whose backing file is gone or not visible here, a mapping over disks) is
/// `Ok(None)`.
pub fn lock_backing_file(dir: &Path, volume: &File, path: &Path, sysfs: &Path) -> Result<Option<BackingLock>, Error> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let meta = volume.metadata().map_err(Error::io(format!("reading `{}`", path.display())))?;
    let backing = if meta.file_type().is_file() {
        vec![Extent { holder: Holder::File(path.to_owned()), span: Span::Whole }]
    } else if meta.file_type().is_block_device() {
        let (major, minor) = (rustix::fs::major(meta.rdev()), rustix::fs::minor(meta.rdev()));
        backing_extents(sysfs, major, minor)
    } else {
        return Ok(None);
    };
    lock_extents(dir, path, &backing)
}

/// The bytes holding block device `major:minor`, as `sysfs` shows them (see [`lock_backing_file`]).
fn backing_extents(sysfs: &Path, major: u32, minor: u32) -> Vec<Extent> {
    let mut found = Vec::new();
    let walk = Walk { depth: MAX_STACK, span: Span::Whole, disks: true };
    collect_backing(&sysfs.join(format!("dev/block/{major}:{minor}")), walk, &mut found);
    found
}

/// Where [`collect_backing`] is in its walk down a device stack.
#[derive(Clone, Copy)]
struct Walk {
    /// How many more levels may be followed.
    depth: u32,
    /// The bytes of the current device that the volume covers.
    span: Span,
    /// Whether a disk with no backing file is locked by its number: not below a device-mapper device, whose
    /// slaves it may use only in part (two LVM volumes on one disk must not refuse each other).
    disks: bool,
}

fn collect_backing(device: &Path, walk: Walk, found: &mut Vec<Extent>) {
    if let Ok(text) = std::fs::read_to_string(device.join("loop/backing_file")) {
        // A loop device shows its backing file from `loop/offset` on (`losetup -o`).
        let offset = read_number(&device.join("loop/offset")).unwrap_or(0);
        let span = match walk.span {
            Span::Whole => Span::Whole,
            Span::Bytes { start, len } => {
                start.checked_add(offset).map_or(Span::Whole, |start| Span::Bytes { start, len })
            }
        };
        found.push(Extent { holder: Holder::File(PathBuf::from(text.trim_end_matches('\n'))), span });
        return;
    }
    if walk.depth == 0 {
        return;
    }
    let below = Walk { depth: walk.depth - 1, ..walk };
    // A partition's directory is inside its disk's (sysfs resolves `..` on the real path, not the link).
    if device.join("partition").is_file() {
        collect_backing(&device.join(".."), Walk { span: partition_span(device), ..below }, found);
        return;
    }
    if device.join("dm").is_dir() {
        let Ok(entries) = std::fs::read_dir(device.join("slaves")) else { return };
        let mut slaves: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
        slaves.sort();
        for slave in slaves {
            collect_backing(&slave, Walk { span: Span::Whole, disks: false, ..below }, found);
        }
        return;
    }
    if walk.disks
        && let Some((major, minor)) = std::fs::read_to_string(device.join("dev")).ok().and_then(|dev| parse_dev(&dev))
    {
        found.push(Extent { holder: Holder::Disk { major, minor }, span: walk.span });
    }
}

/// A partition's bytes of its disk, from sysfs's `start` and `size`; all of the disk if they cannot be read (a
/// lock that covers too much refuses a run, one that covers too little lets two write one header).
fn partition_span(partition: &Path) -> Span {
    let sectors = |name: &str| read_number(&partition.join(name)).and_then(|n| n.checked_mul(SYSFS_SECTOR));
    match (sectors("start"), sectors("size")) {
        (Some(start), Some(len)) if len > 0 => Span::Bytes { start, len },
        _ => Span::Whole,
    }
}

fn read_number(file: &Path) -> Option<u64> {
    std::fs::read_to_string(file).ok()?.trim().parse().ok()
}

/// `MAJ:MIN` as sysfs's `dev` files write it.
fn parse_dev(text: &str) -> Option<(u32, u32)> {
    let (major, minor) = text.trim().split_once(':')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// One lock file and the spans of it a volume covers.
struct LockTarget {
    name: String,
    what: String,
    spans: Vec<Span>,
}

/// Locks every holder of `backing` that exists (in lock file order, each once, with all its spans), for the
/// volume at `path`.
fn lock_extents(dir: &Path, path: &Path, backing: &[Extent]) -> Result<Option<BackingLock>, Error> {
    let mut targets: Vec<LockTarget> = Vec::new();
    for extent in backing {
        let Some((name, what)) = lock_file_name(&extent.holder) else { continue };
        match targets.iter_mut().find(|target| target.name == name) {
            Some(target) => target.spans.push(extent.span),
            None => targets.push(LockTarget { name, what, spans: vec![extent.span] }),
        }
    }
    if targets.is_empty() {
        return Ok(None);
    }
    // One order for every caller, so that two runs never each hold a lock the other waits for (none waits, but
    // a fixed order keeps the refusal about the first lock both want).
    targets.sort_by(|a, b| a.name.cmp(&b.name));
    let mut files = Vec::new();
    for target in targets {
        let lock_path = dir.join(&target.name);
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(Error::io(format!("opening the lock file `{}`", lock_path.display())))?;
        lock_spans(&lock, path, &target.what, &target.spans)?;
        files.push(lock);
    }
    Ok(Some(BackingLock { _files: files }))
}

/// The lock file's name for `holder` and how messages name the holder; `None` for a file that does not exist.
fn lock_file_name(holder: &Holder) -> Option<(String, String)> {
    use std::os::unix::fs::MetadataExt;
    match holder {
        Holder::File(file) => {
            let found = std::fs::metadata(file).ok()?;
            Some((
                format!("backing-{}-{}.lock", found.dev(), found.ino()),
                format!("its backing file `{}`", file.display()),
            ))
        }
        Holder::Disk { major, minor } => {
            Some((format!("disk-{major}-{minor}.lock"), format!("its disk (device {major}:{minor})")))
        }
    }
}

/// Takes `spans` of the holder whose lock file is `lock`: all of it exclusively, or a share of it and the
/// spans' bytes exclusively.
fn lock_spans(lock: &File, path: &Path, what: &str, spans: &[Span]) -> Result<(), Error> {
    let in_use = || format!("`{}`: {what} is in use under another path or volume id", path.display());
    if spans.contains(&Span::Whole) {
        return exclusive(lock, in_use);
    }
    match rustix::fs::flock(lock, FlockOperation::NonBlockingLockShared) {
        Ok(()) => {}
        Err(rustix::io::Errno::WOULDBLOCK) => return Err(Error::Busy { what: in_use() }),
        Err(e) => return Err(Error::Io { context: format!("locking {}", in_use()), source: e.into() }),
    }
    for span in spans {
        let Span::Bytes { start, len } = *span else { continue };
        let overlaps = || {
            format!(
                "`{}`: bytes {start}..{} of {what} overlap a partition in use under another path or volume id",
                path.display(),
                start.saturating_add(len)
            )
        };
        lock_byte_range(lock, start, len).map_err(|e| match e {
            nix::errno::Errno::EAGAIN | nix::errno::Errno::EACCES => Error::Busy { what: overlaps() },
            e => Error::Io { context: format!("locking {}", overlaps()), source: e.into() },
        })?;
    }
    Ok(())
}

/// An open-file-description write lock on `[start, start + len)` of `file`, not waiting. Offsets past what
/// `off_t` holds lock from `start` (or 0) to the end, which covers more, never less.
fn lock_byte_range(file: &File, start: u64, len: u64) -> Result<(), nix::errno::Errno> {
    use nix::libc;
    let (l_start, l_len) = match (libc::off_t::try_from(start), libc::off_t::try_from(len)) {
        (Ok(start), Ok(len)) if start.checked_add(len).is_some() => (start, len),
        (Ok(start), _) => (start, 0),
        _ => (0, 0),
    };
    let range = libc::flock {
        l_type: libc::F_WRLCK as libc::c_short,
        l_whence: libc::SEEK_SET as libc::c_short,
        l_start,
        l_len,
        // The kernel requires 0 for OFD locks.
        l_pid: 0,
    };
    nix::fcntl::fcntl(file, nix::fcntl::FcntlArg::F_OFD_SETLK(&range)).map(drop)
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

    /// A fake sysfs like the kernel's: `dev/block/MAJ:MIN` links to the device directories, a partition's
    /// directory is inside its disk's.
    struct FakeSysfs {
        root: tempfile::TempDir,
    }

    impl FakeSysfs {
        fn new() -> Self {
            let fake = Self { root: tempfile::tempdir().unwrap() };
            std::fs::create_dir_all(fake.sysfs().join("dev/block")).unwrap();
            std::fs::create_dir_all(fake.root.path().join("locks")).unwrap();
            fake
        }

        fn sysfs(&self) -> PathBuf {
            self.root.path().join("sys")
        }

        fn locks(&self) -> PathBuf {
            self.root.path().join("locks")
        }

        fn file(&self, name: &str) -> PathBuf {
            let path = self.root.path().join(name);
            std::fs::write(&path, name).unwrap();
            path
        }

        fn device(&self, parent: Option<&Path>, name: &str, dev: &str) -> PathBuf {
            let dir = parent.map_or_else(|| self.sysfs().join("devices/virtual/block"), Path::to_owned).join(name);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("dev"), format!("{dev}\n")).unwrap();
            std::os::unix::fs::symlink(&dir, self.sysfs().join("dev/block").join(dev)).unwrap();
            dir
        }

        fn looped(&self, name: &str, dev: &str, file: &Path, offset: u64) -> PathBuf {
            let dir = self.device(None, name, dev);
            std::fs::create_dir_all(dir.join("loop")).unwrap();
            std::fs::write(dir.join("loop/backing_file"), format!("{}\n", file.display())).unwrap();
            std::fs::write(dir.join("loop/offset"), format!("{offset}\n")).unwrap();
            dir
        }

        fn partition(&self, disk: &Path, name: &str, dev: &str, start: u64, size: u64) -> PathBuf {
            let dir = self.device(Some(disk), name, dev);
            std::fs::write(dir.join("partition"), "1\n").unwrap();
            std::fs::write(dir.join("start"), format!("{start}\n")).unwrap();
            std::fs::write(dir.join("size"), format!("{size}\n")).unwrap();
            dir
        }

        fn mapped(&self, name: &str, dev: &str, slaves: &[&Path]) {
            let dir = self.device(None, name, dev);
            std::fs::create_dir_all(dir.join("dm")).unwrap();
            std::fs::create_dir_all(dir.join("slaves")).unwrap();
            for slave in slaves {
                std::os::unix::fs::symlink(slave, dir.join("slaves").join(slave.file_name().unwrap())).unwrap();
            }
        }

        fn lock(&self, path: &str, major: u32, minor: u32) -> Result<Option<BackingLock>, Error> {
            lock_extents(&self.locks(), Path::new(path), &backing_extents(&self.sysfs(), major, minor))
        }
    }

    fn whole(file: &Path) -> Extent {
        Extent { holder: Holder::File(file.to_owned()), span: Span::Whole }
    }

    /// `dm-1` stacked on `dm-0` stacked on `loop3`, `dm-2` on two loop devices, `loop5p1` a partition of `loop5`.
    #[test]
    fn device_mapper_stacks_and_partitions_resolve_to_their_loop_backing_files() {
        let fake = FakeSysfs::new();
        let (image, other) = (fake.file("image"), fake.file("other"));
        let loop3 = fake.looped("loop3", "7:3", &image, 0);
        let loop4 = fake.looped("loop4", "7:4", &other, 0);
        fake.mapped("dm-0", "253:0", &[&loop3]);
        fake.mapped("dm-1", "253:1", &[&fake.sysfs().join("devices/virtual/block/dm-0")]);
        fake.mapped("dm-2", "253:2", &[&loop3, &loop4]);
        let loop5 = fake.looped("loop5", "7:5", &other, 0);
        fake.partition(&loop5, "loop5p1", "259:0", 2048, 4096);
        let sda = fake.device(None, "sda", "8:0");
        fake.mapped("dm-3", "253:3", &[&sda]);

        let sysfs = fake.sysfs();
        assert_eq!(backing_extents(&sysfs, 7, 3), vec![whole(&image)]);
        assert_eq!(backing_extents(&sysfs, 253, 0), vec![whole(&image)]);
        assert_eq!(backing_extents(&sysfs, 253, 1), vec![whole(&image)]);
        assert_eq!(backing_extents(&sysfs, 253, 2), vec![whole(&image), whole(&other)]);
        let bytes = Span::Bytes { start: 2048 * 512, len: 4096 * 512 };
        assert_eq!(backing_extents(&sysfs, 259, 0), vec![Extent { holder: Holder::File(other.clone()), span: bytes }]);
        // A disk with no backing file is locked by its number, but not through a mapping (which may use a part
        // of it: two LVM volumes on one disk).
        assert_eq!(
            backing_extents(&sysfs, 8, 0),
            vec![Extent { holder: Holder::Disk { major: 8, minor: 0 }, span: Span::Whole }]
        );
        assert!(backing_extents(&sysfs, 253, 3).is_empty());
        assert!(backing_extents(&sysfs, 9, 9).is_empty());

        // The mapping on the loop device and the loop device itself are one volume; so is a mapping over two
        // loop devices and either of them.
        let held = fake.lock("/dev/dm-1", 253, 1).unwrap().unwrap();
        let refused = fake.lock("/dev/loop3", 7, 3);
        let Err(Error::Busy { what }) = refused else { panic!("{refused:?}") };
        assert!(what.contains("`/dev/loop3`: its backing file") && what.contains("under another path"), "{what}");
        assert!(matches!(fake.lock("/dev/dm-2", 253, 2), Err(Error::Busy { .. })));
        assert!(fake.lock("/dev/loop4", 7, 4).unwrap().is_some());
        drop(held);
        assert!(fake.lock("/dev/dm-2", 253, 2).unwrap().is_some());
    }

    /// Two partitions of one disk lock side by side; the same bytes through another loop device (at an offset),
    /// an overlapping partition, or the whole disk refuse; a partition table whose sizes cannot be read locks the
    /// whole disk.
    #[test]
    fn partitions_lock_their_byte_ranges_of_the_disk() {
        let fake = FakeSysfs::new();
        let image = fake.file("image");
        let loop0 = fake.looped("loop0", "7:0", &image, 0);
        fake.partition(&loop0, "loop0p1", "259:1", 2048, 2048);
        fake.partition(&loop0, "loop0p2", "259:2", 4096, 2048);
        // A second loop device over the image from p2's first byte on, with a partition over p2's second half.
        let loop1 = fake.looped("loop1", "7:1", &image, 4096 * 512);
        fake.partition(&loop1, "loop1p1", "259:3", 1024, 1024);
        // A loop device over the image from p2's second half on, partitioned from its start: disjoint from p1.
        let loop2 = fake.looped("loop2", "7:2", &image, 5120 * 512);
        let broken = fake.partition(&loop2, "loop2p1", "259:4", 0, 1);
        let sda = fake.device(None, "sda", "8:0");
        fake.partition(&sda, "sda1", "8:1", 2048, 2048);
        fake.partition(&sda, "sda2", "8:2", 4096, 2048);

        let p1 = fake.lock("/dev/loop0p1", 259, 1).unwrap().unwrap();
        let p2 = fake.lock("/dev/loop0p2", 259, 2).unwrap().unwrap();
        let Err(Error::Busy { what }) = fake.lock("/dev/loop1p1", 259, 3) else { panic!("loop1p1 is p2's bytes") };
        let range = format!("bytes {}..{} of its backing file `{}`", 5120 * 512, 6144 * 512, image.display());
        assert!(what.starts_with("`/dev/loop1p1`: ") && what.contains(&range), "{what}");
        let Err(Error::Busy { what }) = fake.lock("/dev/loop0", 7, 0) else { panic!("the whole disk") };
        assert!(what.contains("its backing file") && !what.contains("bytes"), "{what}");
        drop(p2);
        assert!(fake.lock("/dev/loop1p1", 259, 3).unwrap().is_some());
        assert!(fake.lock("/dev/loop2p1", 259, 4).unwrap().is_some(), "disjoint from p1, p2 is free");
        std::fs::remove_file(broken.join("size")).unwrap();
        assert!(matches!(fake.lock("/dev/loop2p1", 259, 4), Err(Error::Busy { .. })), "unreadable: the whole disk");
        drop(p1);
        let disk = fake.lock("/dev/loop0", 7, 0).unwrap().unwrap();
        assert!(matches!(fake.lock("/dev/loop0p1", 259, 1), Err(Error::Busy { .. })));
        drop(disk);

        // A disk with no backing file: the same, on `disk-8-0.lock`.
        let sda1 = fake.lock("/dev/sda1", 8, 1).unwrap().unwrap();
        assert!(fake.lock("/dev/sda2", 8, 2).unwrap().is_some());
        let Err(Error::Busy { what }) = fake.lock("/dev/sda", 8, 0) else { panic!("the whole disk") };
        assert!(what.contains("its disk (device 8:0)"), "{what}");
        drop(sda1);
        assert!(fake.lock("/dev/sda", 8, 0).unwrap().is_some());
        assert!(fake.locks().join("disk-8-0.lock").is_file());
    }

    /// Byte ranges are open-file-description locks: a second open of the lock file in this process conflicts
    /// (as two threads of `volume serve` must), the same open file does not conflict with itself, and closing
    /// the file releases them.
    #[test]
    fn byte_range_locks_belong_to_the_open_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("backing.lock");
        let open = || std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&path).unwrap();
        let (first, second) = (open(), open());
        lock_byte_range(&first, 0, 100).unwrap();
        lock_byte_range(&first, 50, 100).unwrap();
        assert_eq!(lock_byte_range(&second, 149, 1), Err(nix::errno::Errno::EAGAIN));
        lock_byte_range(&second, 150, 10).unwrap();
        // Offsets past `off_t` lock to the end, covering more rather than less.
        assert!(lock_byte_range(&second, u64::MAX - 1, 10).is_err(), "from 0 to the end: overlaps 0..150");
        drop(first);
        lock_byte_range(&second, u64::MAX - 1, 10).unwrap();
    }
}
