//! Block devices and what a path really stores: the size of a device (which `metadata().len()` reports as 0), and
//! whether two paths reach the same bytes: one file under two names, a loop device over a file, a partition and
//! its disk, or a file inside a file system that lives on a device.

use std::fs::{self, File};
use std::io::{self, Seek, SeekFrom};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Bytes a regular file or block device holds. A block device's size is what `BLKGETSIZE64` answers; seeking to
/// its end gives the same number without an ioctl (the crate has no unsafe code).
pub fn len(file: &File) -> io::Result<u64> {
    let meta = file.metadata()?;
    if !meta.file_type().is_block_device() {
        return Ok(meta.len());
    }
    let mut handle = file;
    let end = handle.seek(SeekFrom::End(0))?;
    handle.seek(SeekFrom::Start(0))?;
    Ok(end)
}

/// Whether `path` is a block device (false if it does not exist).
pub fn is_block_device(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device())
}

/// One thing whose bytes a path reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Piece {
    /// A regular file (device, inode).
    File(u64, u64),
    /// A part of a regular file (a partition of a loop device over it): meets the file, not other parts.
    PartOfFile(u64, u64),
    /// A character device.
    Char(u64),
    /// A block device: its whole disk, and which partition (None: the whole disk).
    Block { disk: u64, part: Option<u64> },
    /// The block device a regular file's file system lives on (writing that device destroys the file).
    Within { disk: u64, part: Option<u64> },
}

/// How two paths meet, if they do: `Some("")` for one file or one device, else a few words on how.
pub fn shared_storage(a: &Path, b: &Path) -> io::Result<Option<&'static str>> {
    let (pa, pb) = (pieces(a)?, pieces(b)?);
    for x in &pa {
        for y in &pb {
            if let Some(how) = meet(x, y).or_else(|| meet(y, x)) {
                // One file reached from a device: a loop device over it.
                let via_loop =
                    matches!(x, Piece::File(..) | Piece::PartOfFile(..)) && is_block_device(a) != is_block_device(b);
                return Ok(Some(if via_loop { " (a loop device over that file)" } else { how }));
            }
        }
    }
    Ok(None)
}

fn meet(x: &Piece, y: &Piece) -> Option<&'static str> {
    let same_disk =
        |d1: u64, p1: Option<u64>, d2: u64, p2: Option<u64>| d1 == d2 && (p1.is_none() || p2.is_none() || p1 == p2);
    match (*x, *y) {
        (Piece::File(d1, i1), Piece::File(d2, i2) | Piece::PartOfFile(d2, i2)) if (d1, i1) == (d2, i2) => Some(""),
        (Piece::Char(r1), Piece::Char(r2)) if r1 == r2 => Some(""),
        (Piece::Block { disk: d1, part: p1 }, Piece::Block { disk: d2, part: p2 }) if same_disk(d1, p1, d2, p2) => {
            Some(if p1 == p2 { "" } else { " (a partition and its disk)" })
        }
        (Piece::Within { disk: d1, part: p1 }, Piece::Block { disk: d2, part: p2 }) if same_disk(d1, p1, d2, p2) => {
            Some(" (the device holds the file system of the file)")
        }
        _ => None,
    }
}

/// Every piece `path` reaches; none if it does not exist.
fn pieces(path: &Path) -> io::Result<Vec<Piece>> {
    let mut out = Vec::new();
    add_pieces(path, &mut out, 0)?;
    Ok(out)
}

fn add_pieces(path: &Path, out: &mut Vec<Piece>, depth: u32) -> io::Result<()> {
    let meta = match fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    let kind = meta.file_type();
    if kind.is_char_device() {
        out.push(Piece::Char(meta.rdev()));
    } else if kind.is_block_device() {
        let (disk, part) = whole_disk(meta.rdev());
        out.push(Piece::Block { disk, part });
        // A loop device reaches its backing file (and, a loop over a loop, that one's too).
        if depth < 8
            && let Some(backing) = loop_backing_file(disk)
        {
            let mut behind = Vec::new();
            add_pieces(&backing, &mut behind, depth + 1)?;
            // A partition holds only a part of what is behind its disk.
            out.extend(behind.into_iter().map(|piece| match (piece, part) {
                (Piece::File(dev, ino), Some(_)) => Piece::PartOfFile(dev, ino),
                (other, _) => other,
            }));
        }
    } else {
        out.push(Piece::File(meta.dev(), meta.ino()));
        if sysfs_dir(meta.dev()).is_some() {
            let (disk, part) = whole_disk(meta.dev());
            out.push(Piece::Within { disk, part });
        }
    }
    Ok(())
}

/// `/sys/dev/block/MAJ:MIN`, resolved, if the kernel knows the block device.
fn sysfs_dir(rdev: u64) -> Option<PathBuf> {
    let (major, minor) = (rustix::fs::major(rdev), rustix::fs::minor(rdev));
    fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()
}

/// The whole disk of a block device and, for a partition, the partition's own number.
fn whole_disk(rdev: u64) -> (u64, Option<u64>) {
    let Some(dir) = sysfs_dir(rdev) else { return (rdev, None) };
    if !dir.join("partition").exists() {
        return (rdev, None);
    }
    let parent = dir.parent().and_then(|p| fs::read_to_string(p.join("dev")).ok()).and_then(|t| parse_dev(&t));
    match parent {
        Some(disk) => (disk, Some(rdev)),
        None => (rdev, None),
    }
}

fn parse_dev(text: &str) -> Option<u64> {
    let (major, minor) = text.trim().split_once(':')?;
    Some(rustix::fs::makedev(major.parse().ok()?, minor.parse().ok()?))
}

/// The file a loop device reads, if it is a bound loop device whose file still has a name.
fn loop_backing_file(disk: u64) -> Option<PathBuf> {
    let text = fs::read_to_string(sysfs_dir(disk)?.join("loop/backing_file")).ok()?;
    let name = text.trim_end_matches('\n');
    (!name.is_empty() && !name.ends_with(" (deleted)")).then(|| PathBuf::from(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_meet_through_links_only() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        fs::write(&a, b"x").unwrap();
        let b = dir.path().join("b");
        fs::write(&b, b"x").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&a, &link).unwrap();
        assert_eq!(shared_storage(&a, &link).unwrap(), Some(""));
        assert_eq!(shared_storage(&a, &b).unwrap(), None);
        assert_eq!(shared_storage(&a, &dir.path().join("absent")).unwrap(), None);
        assert_eq!(shared_storage(Path::new("/dev/null"), Path::new("/dev/null")).unwrap(), Some(""));
        assert_eq!(len(&File::open(&a).unwrap()).unwrap(), 1);
    }

    #[test]
    fn devices_parse() {
        assert_eq!(parse_dev("7:0\n"), Some(rustix::fs::makedev(7, 0)));
        assert_eq!(parse_dev("x"), None);
    }
}
