//! Output files that are complete or absent: written to a temporary file in the target's directory, flushed to
//! disk, then renamed over the target, and the directory entry flushed too.
//!
//! A crash, a full disk or an error half-way leaves the previous file (or none) in place, never a truncated one,
//! and readers never see a partially written file.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// File mode for files that hold secrets or ciphertexts of them.
pub const MODE_PRIVATE: u32 = 0o600;

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
    let temp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .permissions(fs::Permissions::from_mode(mode))
        .tempfile_in(&dir)?;
    let value = fill(temp.as_file())?;
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|e| e.error)?;
    sync_dir(&dir)?;
    Ok(value)
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
    use std::os::unix::fs::MetadataExt;
    let identity = |path: &Path| match fs::metadata(path) {
        Ok(meta) => Ok(Some((meta.dev(), meta.ino()))),
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

fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn sync_dir(dir: &Path) -> io::Result<()> {
    // Flushing the directory makes the rename itself durable; without it a power cut can lose the new entry.
    fs::File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn missing_directory_fails_and_creates_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("no/such/dir/out");
        assert_eq!(write(&target, b"x", MODE_PRIVATE).unwrap_err().kind(), io::ErrorKind::NotFound);
    }
}
