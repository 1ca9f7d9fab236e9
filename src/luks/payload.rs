//! Payload streaming: a raw image in, LUKS data units out (and back), a bounded chunk at a time, encrypted with
//! the sector-parallel XTS on all given threads. Memory stays flat whatever the image size.

use super::cipher::PayloadCipher;
use super::{Error, PayloadInfo, Result, VolumeKey};
use crate::interact::Progress;
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::FileExt;
use std::sync::mpsc;

/// Bytes handled per step: large enough to keep both cores busy, small enough to keep memory flat.
pub const CHUNK: usize = 8 << 20;

/// Reads up to `buf.len()` bytes, fewer only at end of input.
fn read_full(src: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match src.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Buffers circulating between the reader, the cipher and the writer.
const BUFFERS: usize = 3;

/// A chunk buffer (wiped on drop: it holds plaintext until it is encrypted).
type Buffer = cryptadm_bulk::SecretBuf;

/// Encrypts everything `src` yields into the payload of `dst` described by `info`, zero-padding the last unit.
/// Returns the plaintext bytes written (a multiple of the sector size).
///
/// Three stages overlap: a reader thread fills the next chunk, this thread encrypts the current one on all
/// `threads`, a writer thread stores the previous one. A fixed set of [`BUFFERS`] chunk buffers circulates
/// between them, which keeps memory flat whatever the image size.
pub fn encrypt_into(
    src: &mut (impl Read + Send),
    dst: &File,
    info: &PayloadInfo,
    key: &VolumeKey,
    threads: usize,
    progress: &dyn Progress,
) -> Result<u64> {
    let cipher = PayloadCipher::new(&info.cipher, key.as_bytes())?;
    let unit = info.sector_size as usize;
    std::thread::scope(|scope| {
        let (filled_tx, filled_rx) = mpsc::sync_channel::<std::io::Result<(Buffer, usize)>>(1);
        let (sealed_tx, sealed_rx) = mpsc::sync_channel::<(Buffer, usize, u64)>(1);
        let (empty_tx, empty_rx) = mpsc::sync_channel::<Buffer>(BUFFERS);
        for _ in 0..BUFFERS {
            empty_tx.send(Buffer::zeroed(CHUNK)).expect("the channel has room");
        }
        scope.spawn(move || {
            for mut buf in empty_rx {
                let read = read_full(src, &mut buf);
                let last = !matches!(read, Ok(n) if n == CHUNK);
                if filled_tx.send(read.map(|n| (buf, n))).is_err() || last {
                    return;
                }
            }
        });
        let writer = scope.spawn(move || -> Result<()> {
            for (buf, len, at) in sealed_rx {
                dst.write_all_at(&buf[..len], at).map_err(Error::io("writing the encrypted payload"))?;
                // The reader may have finished: a closed channel is not an error.
                let _ = empty_tx.send(buf);
            }
            Ok(())
        });
        let mut done: u64 = 0;
        let encrypted = (|| -> Result<()> {
            for message in filled_rx {
                let (mut buf, n) = message.map_err(Error::io("reading the raw image"))?;
                if n == 0 {
                    break;
                }
                let padded = n.div_ceil(unit) * unit;
                buf[n..padded].fill(0);
                cipher.encrypt_parallel(&mut buf[..padded], unit, info.iv_tweak + done / 512, threads);
                if sealed_tx.send((buf, padded, info.offset + done)).is_err() {
                    break; // the writer failed; its error is reported below
                }
                done += padded as u64;
                progress.advance(n as u64);
            }
            Ok(())
        })();
        drop(sealed_tx);
        let written = writer.join().expect("the writer thread does not panic");
        encrypted?;
        written?;
        Ok(done)
    })
}

/// Decrypts the payload of `src` described by `info` into `dst`. Returns the bytes written.
pub fn decrypt_to(
    src: &File,
    info: &PayloadInfo,
    key: &VolumeKey,
    dst: &mut impl Write,
    threads: usize,
    progress: &dyn Progress,
) -> Result<u64> {
    let cipher = PayloadCipher::new(&info.cipher, key.as_bytes())?;
    let unit = info.sector_size as u64;
    if !info.len.is_multiple_of(unit) {
        return Err(Error::Truncated(format!(
            "the payload ({} bytes) is not a whole number of {unit}-byte sectors",
            info.len
        )));
    }
    let mut buf = Buffer::zeroed(CHUNK);
    let mut done: u64 = 0;
    while done < info.len {
        let n = (CHUNK as u64).min(info.len - done) as usize;
        let chunk = &mut buf[..n];
        src.read_exact_at(chunk, info.offset + done).map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => Error::Truncated("the payload ends early".into()),
            _ => Error::Io { context: "reading the encrypted payload".into(), source: e },
        })?;
        cipher.decrypt_parallel(chunk, unit as usize, info.iv_tweak + done / 512, threads);
        dst.write_all(chunk).map_err(Error::io("writing the decrypted image"))?;
        done += n as u64;
        progress.advance(n as u64);
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::xts::XtsPlain64;
    use crate::interact::NoProgress;

    /// A payload larger than one chunk, not a whole number of sectors: every unit is encrypted with the IV of its
    /// own position (checked unit by unit against the bare cipher), the tail is zero-padded, and it decrypts back.
    #[test]
    fn streams_across_chunks_with_continuous_ivs() {
        for sector in [512u32, 4096] {
            let plain: Vec<u8> = (0..CHUNK + 4096 + 100).map(|i| (i % 251) as u8).collect();
            let key = VolumeKey::generate(64);
            let info = PayloadInfo {
                offset: 8192,
                len: 0,
                cipher: "aes-xts-plain64".into(),
                sector_size: sector,
                iv_tweak: 5,
            };
            let file = tempfile::tempfile().unwrap();
            let written = encrypt_into(&mut &plain[..], &file, &info, &key, 2, &NoProgress).unwrap();
            let padded = plain.len().div_ceil(sector as usize) * sector as usize;
            assert_eq!(written, padded as u64);
            let mut stored = vec![0u8; padded];
            file.read_exact_at(&mut stored, info.offset).unwrap();
            let xts = XtsPlain64::new(key.as_bytes()).unwrap();
            let unit = sector as usize;
            for (k, chunk) in stored.chunks(unit).enumerate().filter(|(k, _)| k % 97 == 0 || (k + 1) * unit >= padded) {
                let mut one = chunk.to_vec();
                xts.decrypt_units(&mut one, unit, info.iv_tweak + (k * unit / 512) as u64);
                let expected: Vec<u8> =
                    (k * unit..(k + 1) * unit).map(|i| plain.get(i).copied().unwrap_or(0)).collect();
                assert_eq!(one, expected, "unit {k} of {sector}-byte sectors");
            }
            let mut back = Vec::new();
            let info = PayloadInfo { len: padded as u64, ..info };
            decrypt_to(&file, &info, &key, &mut back, 2, &NoProgress).unwrap();
            assert_eq!(&back[..plain.len()], &plain[..]);
            assert!(back[plain.len()..].iter().all(|&b| b == 0));
        }
    }
}
