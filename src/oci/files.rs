//! Local files that image commands read whole (a layout's `index.json`, registry auth files) and blobs they
//! stream: only regular files, opened without waiting, and read no further than a bound.

use std::fs;
use std::io::{self, Read};
use std::path::Path;
use zeroize::Zeroizing;

/// Opens `path` for reading only when it is a regular file. A FIFO would block the open (or the first read)
/// forever, a device (`/dev/zero`) would stream without end: the open does not wait (`O_NONBLOCK`, which regular
/// files ignore) and `fstat` on the opened file decides, so nothing can be swapped in between the check and the
/// read. Anything else is `InvalidData` ("not a regular file").
pub fn open_regular(path: &Path) -> io::Result<fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let nonblocking = rustix::fs::OFlags::NONBLOCK.bits() as i32;
    let file = fs::OpenOptions::new().read(true).custom_flags(nonblocking).open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "not a regular file"));
    }
    Ok(file)
}

/// Reads the regular file `path` whole, at most `limit` bytes: no more than `limit + 1` are read, and a larger
/// file is `InvalidData` ("larger than LIMIT bytes"). The buffer is wiped when dropped (auth files hold
/// passwords).
pub fn read_regular(path: &Path, limit: u64) -> io::Result<Zeroizing<Vec<u8>>> {
    let mut bytes = Zeroizing::new(Vec::new());
    open_regular(path)?.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("larger than {limit} bytes")));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_small_regular_files_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, b"12345").unwrap();
        assert_eq!(read_regular(&file, 5).unwrap().as_slice(), b"12345");
        let too_large = read_regular(&file, 4).unwrap_err();
        assert_eq!(
            (too_large.kind(), too_large.to_string()),
            (io::ErrorKind::InvalidData, "larger than 4 bytes".into())
        );
        let fifo = dir.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
            0,
        )
        .unwrap();
        for path in [fifo.as_path(), Path::new("/dev/zero"), dir.path()] {
            let error = read_regular(path, 1 << 20).unwrap_err();
            assert_eq!(error.kind(), io::ErrorKind::InvalidData, "{}", path.display());
        }
        assert_eq!(read_regular(&dir.path().join("missing"), 1).unwrap_err().kind(), io::ErrorKind::NotFound);
    }
}
