//! Output files that are complete or absent: written to a temporary file in the target's directory, flushed to
//! disk, then renamed over the target, and the directory entry flushed too.
//!
//! A crash, a full disk or an error half-way leaves the previous file (or none) in place, never a truncated one,
//! and readers never see a partially written file.
//!
//! Partial outputs have names a later run recognises (`.NAME.XXXXXX.cryptadm-partial`, mode 0600) and hold an
//! exclusive `flock` while their writer lives. A run that was killed (kill -9) leaves one behind; the next run
//! into the same directory removes every partial whose lock it can take ([`remove_stale_partials`]) and leaves
//! a live writer's alone. On SIGTERM and SIGINT the command line removes the partials of its own process
//! ([`remove_live_partials`]) before dying.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::{FileExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// File mode for files that hold secrets or ciphertexts of them.
pub const MODE_PRIVATE: u32 = 0o600;

/// The suffix of every partial output cryptadm writes.
pub const PARTIAL_SUFFIX: &str = ".cryptadm-partial";

/// The partial outputs this process has created (some may be gone: committed or removed).
static LIVE_PARTIALS: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

fn remember_partial(path: &Path) {
    LIVE_PARTIALS.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(path.to_path_buf());
}

/// Removes the partial outputs of this process that still exist: for an interrupted run (SIGTERM, SIGINT),
/// whose destructors will not run.
pub fn remove_live_partials() {
    let live = LIVE_PARTIALS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    for path in live.iter() {
        if path.is_dir() {
            let _ = fs::remove_dir_all(path);
        } else {
            let _ = fs::remove_file(path);
        }
    }
}

/// A new partial file `.{stem}.XXXXXX.cryptadm-partial` in `dir`, created with `mode` (0600 until committed is
/// what every caller wants: not-yet-verified plaintext must not be readable by others), locked for as long as it
/// is open.
pub fn partial_file(dir: &Path, stem: &str, mode: u32) -> io::Result<tempfile::NamedTempFile> {
    let temp = tempfile::Builder::new()
        .prefix(&format!(".{stem}."))
        .suffix(PARTIAL_SUFFIX)
        .permissions(fs::Permissions::from_mode(mode))
        .tempfile_in(dir)
        .map_err(without_temporary_name)?;
    rustix::fs::flock(temp.as_file(), rustix::fs::FlockOperation::NonBlockingLockExclusive)?;
    remember_partial(temp.path());
    Ok(temp)
}

/// A new partial directory `.{stem}.XXXXXX.cryptadm-partial` in `dir` (mode 0700), locked while the returned
/// handle lives; removed with its contents on drop.
pub fn partial_dir(dir: &Path, stem: &str) -> io::Result<PartialDir> {
    let temp = tempfile::Builder::new()
        .prefix(&format!(".{stem}."))
        .suffix(PARTIAL_SUFFIX)
        .permissions(fs::Permissions::from_mode(0o700))
        .tempdir_in(dir)
        .map_err(without_temporary_name)?;
    let lock = fs::File::open(temp.path())?;
    rustix::fs::flock(&lock, rustix::fs::FlockOperation::NonBlockingLockExclusive)?;
    remember_partial(temp.path());
    Ok(PartialDir { dir: temp, _lock: lock })
}

/// tempfile names the temporary path in its errors (`… at path "/dir/.x.AbC123.cryptadm-partial"`): the operator
/// knows the target, not our scratch name, so callers' context says where and this keeps only the cause.
fn without_temporary_name(error: io::Error) -> io::Error {
    // tempfile's PathError keeps the OS error private and prints it as `{error} at path {path:?}`.
    let cause = error
        .get_ref()
        .map(ToString::to_string)
        .and_then(|text| text.find(" at path \"").map(|at| text[..at].to_owned()));
    match cause {
        Some(cause) => io::Error::new(error.kind(), cause),
        None => error,
    }
}

/// A locked partial directory (see [`partial_dir`]).
pub struct PartialDir {
    dir: tempfile::TempDir,
    _lock: fs::File,
}

impl PartialDir {
    /// Its path.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// Removes the partial outputs in `dir` that no live process holds (a killed run's), and returns them. A partial
/// whose lock is held belongs to a run still going, and stays.
pub fn remove_stale_partials(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(removed),
        Err(e) => return Err(e),
    };
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !(name.starts_with('.') && name.ends_with(PARTIAL_SUFFIX)) {
            continue;
        }
        let path = entry.path();
        // Only what a writer leaves (a file, or a directory): opening a FIFO of that name would block forever.
        let file_type = entry.file_type()?;
        if !file_type.is_file() && !file_type.is_dir() {
            continue;
        }
        let Ok(handle) = fs::File::open(&path) else { continue };
        if rustix::fs::flock(&handle, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_err() {
            continue; // a live writer's
        }
        let gone = if file_type.is_dir() { fs::remove_dir_all(&path) } else { fs::remove_file(&path) };
        match gone {
            Ok(()) => removed.push(path),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(removed)
}

/// Writes `bytes` to `path` atomically, creating the file with `mode` from the start (no window in which a
/// secret is readable by others).
pub fn write(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    write_with(path, mode, |mut file| file.write_all(bytes))
}

/// Writes `path` atomically through `fill`, which streams into the temporary file (created with `mode`); the
/// file is flushed and renamed over `path` only when `fill` succeeds, else it is removed. For outputs too large
/// to hold in memory (disk images).
pub fn write_with<T, E: From<io::Error>>(
    path: &Path,
    mode: u32,
    fill: impl FnOnce(&fs::File) -> Result<T, E>,
) -> Result<T, E> {
    let dir = parent_dir(path);
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("output");
    replaceable(path)?;
    remove_stale_partials(&dir)?;
    let temp = partial_file(&dir, name, mode)?;
    let value = fill(temp.as_file())?;
    temp.as_file().sync_all()?;
    // Again: a device node, a directory or a FIFO may have appeared while the file was written.
    replaceable(path)?;
    temp.persist(path).map_err(|e| e.error)?;
    sync_dir(&dir)?;
    Ok(value)
}

/// Refuses (`InvalidData`, exit 3) to replace anything at `path` that is not a regular file, following symbolic
/// links: a rename over a device node, a directory, a FIFO or a socket would destroy it (a block device node
/// replaced by a file leaves the device unwritten and its node gone). A path that does not exist is fine.
pub fn replaceable(path: &Path) -> io::Result<()> {
    let meta = match fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    if meta.is_file() {
        return Ok(());
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidData,
        format!("`{}` is not a regular file; refusing to replace it", path.display()),
    ))
}

/// Whether `path` is a regular file holding exactly `bytes` (used to make re-runs no-ops).
pub fn holds(path: &Path, bytes: &[u8]) -> io::Result<bool> {
    let meta = match fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    };
    if !meta.is_file() || meta.len() != bytes.len() as u64 {
        return Ok(false);
    }
    let existing = zeroize::Zeroizing::new(fs::read(path)?);
    Ok(existing.as_slice() == bytes)
}

/// Whether `a` and `b` are the same file: the same device and inode once symbolic links are followed, so a hard
/// link, a symbolic link or another spelling of the path counts. A path that does not exist is no file's twin.
pub fn same_file(a: &Path, b: &Path) -> io::Result<bool> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    // Two device nodes (`/dev/sdb` and a node made elsewhere with mknod) are separate inodes for one device: for
    // them the device number decides.
    let identity = |path: &Path| match fs::metadata(path) {
        Ok(meta) if meta.file_type().is_block_device() || meta.file_type().is_char_device() => {
            Ok(Some((true, meta.rdev(), 0)))
        }
        Ok(meta) => Ok(Some((false, meta.dev(), meta.ino()))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    };
    Ok(match (identity(a)?, identity(b)?) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    })
}

/// Makes an existing file `mode` (an output left by an earlier run may have been created, or changed, with a
/// wider mode than a secret allows).
pub fn restrict(path: &Path, mode: u32) -> io::Result<()> {
    let current = fs::metadata(path)?.permissions().mode() & 0o7777;
    if current != mode {
        fs::set_permissions(path, fs::Permissions::from_mode(mode))?;
    }
    Ok(())
}

/// Bytes per direct write: large enough for the device to stream, small enough that a few in flight cost little.
const DIRECT_BLOCK: usize = 1 << 20;
/// Blocks in existence per writer (one being filled, the others queued or being written).
const DIRECT_BLOCKS: usize = 4;
/// Alignment of direct writes' memory, offsets and lengths: the largest logical block size of common devices.
const DIRECT_ALIGN: usize = 4096;

/// A writer for large outputs that must be durable: whole blocks go to the file from a thread of its own with
/// `O_DIRECT`, so the device writes while the caller computes, and [`DirectWriter::finish`] leaves only a short
/// tail (and the metadata) for the final `fsync`.
///
/// Why (issue 17): a buffered write copies every byte into the page cache, whose fresh pages cost a host page
/// fault each on a VM that gives memory back, and the `fsync` before the rename then waits for the whole file to
/// reach the device. Direct writes skip both. Where the file system refuses `O_DIRECT` (tmpfs), the thread
/// writes through the page cache instead. Blocks are wiped when dropped: they may hold plaintext.
pub struct DirectWriter {
    file: fs::File,
    current: AlignedBlock,
    worker: Option<DirectWorker>,
    made: usize,
}

struct DirectWorker {
    blocks: std::sync::mpsc::SyncSender<AlignedBlock>,
    returned: std::sync::mpsc::Receiver<AlignedBlock>,
    /// Ends with the offset after the last block written.
    handle: std::thread::JoinHandle<io::Result<u64>>,
}

/// A [`DIRECT_BLOCK`] of memory aligned to [`DIRECT_ALIGN`] (a larger vector, used from an aligned offset).
struct AlignedBlock {
    storage: zeroize::Zeroizing<Vec<u8>>,
    start: usize,
    len: usize,
}

impl AlignedBlock {
    fn new() -> Self {
        let storage = zeroize::Zeroizing::new(vec![0u8; DIRECT_BLOCK + DIRECT_ALIGN]);
        let start = (DIRECT_ALIGN - storage.as_ptr() as usize % DIRECT_ALIGN) % DIRECT_ALIGN;
        Self { storage, start, len: 0 }
    }

    fn filled(&self) -> &[u8] {
        &self.storage[self.start..self.start + self.len]
    }
}

impl DirectWriter {
    /// Writes into `file` (a duplicate of the caller's descriptor: the caller keeps its own to sync and rename)
    /// from offset 0, with positional writes.
    pub fn new(file: &fs::File) -> io::Result<Self> {
        Ok(Self { file: file.try_clone()?, current: AlignedBlock::new(), worker: None, made: 1 })
    }

    /// Writes what is still buffered and waits for the writing thread. The caller then syncs the file.
    pub fn finish(mut self) -> io::Result<()> {
        let end = self.stop_worker()?;
        // The worker turned O_DIRECT off again: a tail shorter than a block may not be written directly.
        self.file.write_all_at(self.current.filled(), end)
    }

    /// Stops the writing thread; returns where the blocks it wrote end (0 if it never ran).
    fn stop_worker(&mut self) -> io::Result<u64> {
        let Some(worker) = self.worker.take() else { return Ok(0) };
        drop(worker.blocks);
        worker.handle.join().map_err(|_| io::Error::other("the writing thread panicked"))?
    }

    fn ship(&mut self) -> io::Result<()> {
        if self.worker.is_none() {
            self.worker = Some(self.start_worker()?);
        }
        let worker = self.worker.as_mut().expect("started above");
        let next = match worker.returned.try_recv() {
            Ok(block) => Some(block),
            Err(_) if self.made < DIRECT_BLOCKS => {
                self.made += 1;
                Some(AlignedBlock::new())
            }
            Err(_) => worker.returned.recv().ok(),
        };
        let sent = next.map(|mut next| {
            next.len = 0;
            worker.blocks.send(std::mem::replace(&mut self.current, next))
        });
        match sent {
            Some(Ok(())) => Ok(()),
            // The thread stopped: it failed, and says why.
            _ => Err(self.stop_worker().err().unwrap_or_else(|| io::Error::other("the writing thread stopped"))),
        }
    }

    fn start_worker(&self) -> io::Result<DirectWorker> {
        let file = self.file.try_clone()?;
        let (blocks, incoming) = std::sync::mpsc::sync_channel::<AlignedBlock>(DIRECT_BLOCKS);
        let (give_back, returned) = std::sync::mpsc::channel();
        let handle = std::thread::spawn(move || {
            let flags = rustix::fs::fcntl_getfl(&file)?;
            // Refused where the file system cannot (tmpfs): then the page cache it is.
            let mut direct = rustix::fs::fcntl_setfl(&file, flags | rustix::fs::OFlags::DIRECT).is_ok();
            // Positional writes: a block retried after a partial direct write lands where it belongs.
            let mut offset = 0u64;
            for block in incoming {
                match file.write_all_at(block.filled(), offset) {
                    Err(e) if direct && e.raw_os_error() == Some(rustix::io::Errno::INVAL.raw_os_error()) => {
                        // Alignment the device does not accept: write this block again, and the rest, buffered.
                        rustix::fs::fcntl_setfl(&file, flags)?;
                        direct = false;
                        file.write_all_at(block.filled(), offset)?;
                    }
                    other => other?,
                }
                offset += block.len as u64;
                let _ = give_back.send(block);
            }
            if direct {
                rustix::fs::fcntl_setfl(&file, flags)?;
            }
            Ok(offset)
        });
        Ok(DirectWorker { blocks, returned, handle })
    }
}

impl Write for DirectWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let block = &mut self.current;
        let n = buf.len().min(DIRECT_BLOCK - block.len);
        let at = block.start + block.len;
        block.storage[at..at + n].copy_from_slice(&buf[..n]);
        block.len += n;
        if block.len == DIRECT_BLOCK {
            self.ship()?;
        }
        Ok(n)
    }

    /// Nothing to do: only whole blocks can go out before [`DirectWriter::finish`].
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for DirectWriter {
    fn drop(&mut self) {
        // Not finished (an error on the way): let the thread end instead of leaking it.
        let _ = self.stop_worker();
    }
}

fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Flushes a directory, making the renames into it durable.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    // Flushing the directory makes the rename itself durable; without it a power cut can lose the new entry.
    fs::File::open(dir)?.sync_all()
}

/// Bytes a regular file or block device holds. A block device's size is what `BLKGETSIZE64` answers; seeking to
/// its end gives the same number without an ioctl (the crate has no unsafe code).
pub fn file_len(file: &fs::File) -> io::Result<u64> {
    use std::io::{Seek, SeekFrom};
    use std::os::unix::fs::FileTypeExt;
    let meta = file.metadata()?;
    if !meta.file_type().is_block_device() {
        return Ok(meta.len());
    }
    let mut handle = file;
    let end = handle.seek(SeekFrom::End(0))?;
    handle.seek(SeekFrom::Start(0))?;
    Ok(end)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_fifo_named_like_a_partial_is_left_alone_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join(format!(".x{}", super::PARTIAL_SUFFIX));
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let stale = dir.path().join(format!(".y{}", super::PARTIAL_SUFFIX));
        std::fs::write(&stale, b"left by a killed run").unwrap();
        assert_eq!(super::remove_stale_partials(dir.path()).unwrap(), vec![stale]);
        assert!(fifo.exists());
    }

    use super::*;

    #[test]
    fn errors_do_not_name_the_temporary_file() {
        let missing = Path::new("/nonexistent-cryptadm-dir");
        let error = partial_file(missing, "out.img", MODE_PRIVATE).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::NotFound);
        assert!(!error.to_string().contains(PARTIAL_SUFFIX), "{error}");
        let error = partial_dir(missing, "layout").err().unwrap();
        assert!(!error.to_string().contains(PARTIAL_SUFFIX), "{error}");
    }

    #[test]
    fn writes_with_mode_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.yaml");
        write(&target, b"one", MODE_PRIVATE).unwrap();
        write(&target, b"two", MODE_PRIVATE).unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"two");
        assert_eq!(fs::metadata(&target).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
        assert!(holds(&target, b"two").unwrap());
        assert!(!holds(&target, b"one").unwrap());
        assert!(!holds(&dir.path().join("absent"), b"").unwrap());
    }

    #[test]
    fn direct_writer_writes_everything_in_order() {
        let dir = tempfile::tempdir().unwrap();
        for len in [0, 1, 4095, DIRECT_BLOCK, DIRECT_BLOCK + 1, (DIRECT_BLOCKS + 2) * DIRECT_BLOCK + 12345] {
            let data: Vec<u8> = (0..len).map(|i| (i * 13 % 251) as u8).collect();
            let temp = partial_file(dir.path(), "direct", MODE_PRIVATE).unwrap();
            let mut writer = DirectWriter::new(temp.as_file()).unwrap();
            for piece in data.chunks(100_003) {
                writer.write_all(piece).unwrap();
            }
            writer.finish().unwrap();
            temp.as_file().sync_all().unwrap();
            assert_eq!(fs::read(temp.path()).unwrap(), data, "{len}");
            // O_DIRECT is off again for whoever uses the file next.
            let flags = rustix::fs::fcntl_getfl(temp.as_file()).unwrap();
            assert!(!flags.contains(rustix::fs::OFlags::DIRECT));
        }
        // Dropped unfinished: the thread ends.
        let temp = partial_file(dir.path(), "direct", MODE_PRIVATE).unwrap();
        let mut writer = DirectWriter::new(temp.as_file()).unwrap();
        writer.write_all(&vec![1u8; 3 * DIRECT_BLOCK]).unwrap();
        drop(writer);
    }

    #[test]
    fn never_replaces_what_is_not_a_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        let node = dir.path().join("null-twin");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &node,
            rustix::fs::FileType::CharacterDevice,
            rustix::fs::Mode::from_raw_mode(0o600),
            rustix::fs::makedev(1, 3),
        )
        .expect("mknod (the tests run as root, as CI does)");
        let error = write(&node, b"x", MODE_PRIVATE).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidData, "{error}");
        assert!(std::os::unix::fs::FileTypeExt::is_char_device(&fs::metadata(&node).unwrap().file_type()));
        let sub = dir.path().join("sub");
        fs::create_dir(&sub).unwrap();
        assert!(write(&sub, b"x", MODE_PRIVATE).is_err());
        assert!(sub.is_dir());
        // Nothing left behind.
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn missing_directory_fails_and_creates_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("no/such/dir/out");
        assert_eq!(write(&target, b"x", MODE_PRIVATE).unwrap_err().kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn stale_partials_are_removed_and_live_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        // A killed run's leftovers: a partial file and a partial directory that nobody holds.
        let dead_file = dir.path().join(format!(".disk.img.abc123{PARTIAL_SUFFIX}"));
        fs::write(&dead_file, b"half a disk").unwrap();
        let dead_dir = dir.path().join(format!(".image.def456{PARTIAL_SUFFIX}"));
        fs::create_dir_all(dead_dir.join("blobs")).unwrap();
        // Not ours: kept whatever its name looks like.
        fs::write(dir.path().join(".disk.img.tmp"), b"someone else's").unwrap();
        // A live writer's partials.
        let live = partial_file(dir.path(), "out", MODE_PRIVATE).unwrap();
        let live_dir = partial_dir(dir.path(), "staging").unwrap();
        assert_eq!(fs::metadata(live.path()).unwrap().permissions().mode() & 0o777, 0o600);

        let mut removed = remove_stale_partials(dir.path()).unwrap();
        removed.sort();
        let mut expected = vec![dead_file, dead_dir];
        expected.sort();
        assert_eq!(removed, expected);
        assert!(live.path().exists() && live_dir.path().exists());
        assert!(dir.path().join(".disk.img.tmp").exists());
        drop(live);
        drop(live_dir);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn same_file_sees_links_and_device_twins() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("disk.img");
        fs::write(&file, b"x").unwrap();
        let hard = dir.path().join("hard");
        fs::hard_link(&file, &hard).unwrap();
        let soft = dir.path().join("soft");
        std::os::unix::fs::symlink(&file, &soft).unwrap();
        let other = dir.path().join("other");
        fs::write(&other, b"x").unwrap();
        assert!(same_file(&file, &hard).unwrap() && same_file(&file, &soft).unwrap());
        assert!(!same_file(&file, &other).unwrap());
        assert!(!same_file(&file, &dir.path().join("absent")).unwrap());
        // A second node for /dev/null's device (1:3) is another inode for the same device.
        let twin = dir.path().join("null-twin");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &twin,
            rustix::fs::FileType::CharacterDevice,
            rustix::fs::Mode::from_raw_mode(0o600),
            rustix::fs::makedev(1, 3),
        )
        .expect("mknod (the tests run as root, as CI does)");
        assert!(same_file(Path::new("/dev/null"), &twin).unwrap());
        assert!(!same_file(Path::new("/dev/zero"), &twin).unwrap());
    }
}
