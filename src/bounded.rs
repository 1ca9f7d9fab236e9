//! Reads with a size bound, in one place: files and streams that commands read whole (a key file, a request, a
//! configuration, an auth file, an inflated JWE payload) are read no further than a bound, so that a wrong file,
//! a device that never ends (`/dev/zero`) or a file that grows while it is read cannot exhaust memory, and
//! "larger than the bound" is told apart from "exactly the bound". Callers keep their own messages for the
//! too-large case.

use crate::crypto::SecretBytes;
use std::fs;
use std::io;
use std::path::Path;

/// Reads `reader` to its end, at most `limit` bytes (`Ok(None)` past it). It lives in `crypto::secret`, beside
/// the wiping buffer it fills, because `crypto` reads passphrases with it and may use nothing above itself.
pub use crate::crypto::secret::read_at_most;

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

/// Reads the regular file `path` whole ([`open_regular`], [`read_at_most`]): a larger file is `InvalidData`
/// ("larger than LIMIT bytes").
pub fn read_regular(path: &Path, limit: u64) -> io::Result<SecretBytes> {
    read_at_most(open_regular(path)?, limit)?.ok_or_else(|| too_large(limit))
}

/// The error of [`read_regular`] for a file over `limit` bytes.
fn too_large(limit: u64) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("larger than {limit} bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn fifo(dir: &Path) -> std::path::PathBuf {
        let fifo = dir.join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
            0,
        )
        .unwrap();
        fifo
    }

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
        let fifo = fifo(dir.path());
        for path in [fifo.as_path(), Path::new("/dev/zero"), dir.path()] {
            let error = read_regular(path, 1 << 20).unwrap_err();
            assert_eq!(error.kind(), io::ErrorKind::InvalidData, "{}", path.display());
        }
        assert_eq!(read_regular(&dir.path().join("missing"), 1).unwrap_err().kind(), io::ErrorKind::NotFound);
    }

    /// Exactly the limit is read; one byte more is refused; the empty input and a zero limit are edges too.
    #[test]
    fn the_limit_is_inclusive() {
        assert_eq!(read_at_most(&b"abc"[..], 3).unwrap().unwrap().as_slice(), b"abc");
        assert!(read_at_most(&b"abcd"[..], 3).unwrap().is_none());
        assert_eq!(read_at_most(&b""[..], 0).unwrap().unwrap().as_slice(), b"");
        assert!(read_at_most(&b"a"[..], 0).unwrap().is_none());
        assert_eq!(read_at_most(&b"abc"[..], u64::MAX).unwrap().unwrap().as_slice(), b"abc");
    }

    /// A device that never ends, and a FIFO whose writer keeps writing, are read only to the bound (a caller
    /// that must refuse them opens with [`open_regular`]).
    #[test]
    fn endless_streams_are_read_to_the_bound_only() {
        let zero = fs::File::open("/dev/zero").unwrap();
        assert!(read_at_most(zero, 1 << 16).unwrap().is_none());

        let dir = tempfile::tempdir().unwrap();
        let fifo = fifo(dir.path());
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                let mut pipe = fs::OpenOptions::new().write(true).open(fifo).unwrap();
                // Stops when the reader closes its end (EPIPE).
                while pipe.write_all(&[7u8; 4096]).is_ok() {}
            })
        };
        let read = read_at_most(fs::File::open(&fifo).unwrap(), 10_000).unwrap();
        assert!(read.is_none());
        writer.join().unwrap();
    }

    /// A file that grows while it is read (past what `metadata().len()` said at the open) is refused, not cut
    /// at the bound; one that grows but stays within it is read whole.
    #[test]
    fn a_file_that_grows_while_read_is_refused() {
        struct Growing {
            file: fs::File,
            appender: fs::File,
            grown: bool,
        }
        impl std::io::Read for Growing {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = self.file.read(buf)?;
                if n == 0 && !self.grown {
                    // At the end of what was there at the open, more arrives.
                    self.grown = true;
                    self.appender.write_all(b"6789")?;
                    return self.file.read(buf);
                }
                Ok(n)
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("growing");
        let growing = |limit| {
            std::fs::write(&path, b"12345").unwrap();
            let file = fs::File::open(&path).unwrap();
            assert_eq!(file.metadata().unwrap().len(), 5);
            let appender = fs::OpenOptions::new().append(true).open(&path).unwrap();
            read_at_most(Growing { file, appender, grown: false }, limit).unwrap()
        };
        assert!(growing(5).is_none(), "5 bytes at the open, 9 by the end: over a limit of 5");
        assert_eq!(growing(9).unwrap().as_slice(), b"123456789");
    }
}
