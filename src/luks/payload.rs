//! Payload streaming: a raw image in, LUKS data units out (and back), a bounded chunk at a time, encrypted with
//! the sector-parallel XTS on all given threads. Memory stays flat whatever the image size.

use super::cipher::SectorCipher;
use super::{Error, PayloadInfo, Result, VolumeKey};
use crate::interact::Progress;
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::FileExt;
use std::sync::mpsc;
use zeroize::Zeroizing;

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

/// Encrypts everything `src` yields into the payload of `dst` described by `info`, zero-padding the last unit.
/// Returns the plaintext bytes written (a multiple of the sector size).
///
/// A reader thread fills the next chunk while this one is encrypted and written, so reading overlaps the cipher;
/// two chunk buffers circulate between them, which keeps memory flat.
pub fn encrypt_into(
    src: &mut (impl Read + Send),
    dst: &File,
    info: &PayloadInfo,
    key: &VolumeKey,
    threads: usize,
    progress: &dyn Progress,
) -> Result<u64> {
    let cipher = SectorCipher::new(&info.cipher, key.as_bytes())?;
    let unit = info.sector_size as usize;
    std::thread::scope(|scope| {
        let (filled_tx, filled_rx) = mpsc::sync_channel::<std::io::Result<(Zeroizing<Vec<u8>>, usize)>>(1);
        let (empty_tx, empty_rx) = mpsc::sync_channel::<Zeroizing<Vec<u8>>>(2);
        for _ in 0..2 {
            empty_tx.send(Zeroizing::new(vec![0u8; CHUNK])).expect("the channel has room");
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
        let mut done: u64 = 0;
        for message in filled_rx {
            let (mut buf, n) = message.map_err(Error::io("reading the raw image"))?;
            if n == 0 {
                break;
            }
            let padded = n.div_ceil(unit) * unit;
            buf[n..padded].fill(0);
            let chunk = &mut buf[..padded];
            cipher.encrypt_parallel(chunk, unit, info.iv_tweak + done / 512, threads);
            dst.write_all_at(chunk, info.offset + done).map_err(Error::io("writing the encrypted payload"))?;
            done += padded as u64;
            progress.advance(n as u64);
            // The reader may have stopped after the last chunk: a closed channel is not an error.
            let _ = empty_tx.send(buf);
        }
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
    let cipher = SectorCipher::new(&info.cipher, key.as_bytes())?;
    let unit = info.sector_size as u64;
    if !info.len.is_multiple_of(unit) {
        return Err(Error::Truncated(format!(
            "the payload ({} bytes) is not a whole number of {unit}-byte sectors",
            info.len
        )));
    }
    let mut buf = Zeroizing::new(vec![0u8; CHUNK]);
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
