//! Buffers for the pieces of a blob that cross threads on their way to or from the network, each in an anonymous
//! memory mapping of its own rather than on the heap.
//!
//! Why not the heap: glibc serves a thread from an arena of its own and gives memory back to the system only from
//! the top of an arena, and once it has freed one large block it serves blocks of that size from the arenas too
//! (its mmap threshold rises). A piece is made on a cipher thread and dropped on a network thread, a few dozen at
//! a time per blob, so every arena kept its own high-water mark of pieces: about 10 MiB more resident than alive
//! in an 8-layer copy between registries (issue 44; docs/image.md has the figures).
//!
//! A mapping is not tied to a thread. Mapping and unmapping one per piece cost 0.3-0.5 s of system time per 256 MiB
//! copied (page faults, zeroing, and the TLB flushes of an unmap in a threaded process), so mappings of [`POOLED`]
//! bytes that no piece holds any more are kept for the next pieces, up to [`SPARE`] of them: pieces and spares
//! together never exceed the most pieces that were alive at once earlier in the run.

use bytes::Bytes;
use std::io;
use std::sync::Mutex;

/// The size of every piece buffer: the registry's pieces, upload and download alike.
pub const POOLED: usize = 256 << 10;
/// Spare mappings kept at most (8 MiB). A 256 MiB copy between registries made about 2,000 mappings for its
/// pieces with none kept, 120 with 32 and 100 with 64 (strace's count of mmap calls, less the 64 it makes anyway).
const SPARE: usize = 32;

/// Mappings of [`POOLED`] bytes that no piece holds now.
static SPARES: Spares = Spares::new(SPARE);

/// Mappings kept for reuse, up to a number.
struct Spares {
    maps: Mutex<Vec<memmap2::MmapMut>>,
    most: usize,
}

impl Spares {
    const fn new(most: usize) -> Self {
        Self { maps: Mutex::new(Vec::new()), most }
    }

    fn maps(&self) -> std::sync::MutexGuard<'_, Vec<memmap2::MmapMut>> {
        self.maps.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn take(&self) -> Option<memmap2::MmapMut> {
        self.maps().pop()
    }

    /// Keeps `map` for reuse, or unmaps it (outside the lock) when enough are kept.
    fn keep(&self, map: memmap2::MmapMut) {
        let unneeded = {
            let mut maps = self.maps();
            if maps.len() < self.most {
                maps.push(map);
                None
            } else {
                Some(map)
            }
        };
        drop(unneeded);
    }
}

/// A piece being filled: up to [`POOLED`] bytes, then frozen into [`Bytes`] that share the mapping.
pub struct PieceBuffer {
    /// Always set; taken only by `drop`.
    map: Option<memmap2::MmapMut>,
    len: usize,
}

impl PieceBuffer {
    /// An empty buffer of [`POOLED`] bytes: a spare mapping, or a new one.
    pub fn new() -> io::Result<Self> {
        let map = match SPARES.take() {
            Some(map) => map,
            None => memmap2::MmapMut::map_anon(POOLED)?,
        };
        Ok(Self { map: Some(map), len: 0 })
    }

    fn map(&self) -> &memmap2::MmapMut {
        self.map.as_ref().expect("taken only when dropped")
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes it still has room for.
    pub fn remaining(&self) -> usize {
        self.map().len() - self.len
    }

    /// Copies as much of `data` as fits; returns how much did.
    pub fn fill_from(&mut self, data: &[u8]) -> usize {
        let n = data.len().min(self.remaining());
        let map = self.map.as_mut().expect("taken only when dropped");
        map[self.len..self.len + n].copy_from_slice(&data[..n]);
        self.len += n;
        n
    }

    /// The bytes written, sharing the mapping (no copy); it is reused or unmapped when the last of them is
    /// dropped.
    pub fn freeze(self) -> Bytes {
        Bytes::from_owner(Frozen(self))
    }
}

impl Drop for PieceBuffer {
    fn drop(&mut self) {
        if let Some(map) = self.map.take() {
            SPARES.keep(map);
        }
    }
}

/// A filled buffer as `Bytes` see it: only what was written.
struct Frozen(PieceBuffer);

impl AsRef<[u8]> for Frozen {
    fn as_ref(&self) -> &[u8] {
        &self.0.map()[..self.0.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_piece_takes_what_fits_and_freezes_to_what_was_written() {
        let mut piece = PieceBuffer::new().unwrap();
        assert!(piece.is_empty());
        let bytes: Vec<u8> = (0..POOLED + 5).map(|i| (i % 251) as u8).collect();
        assert_eq!(piece.fill_from(&bytes[..3]), 3);
        assert_eq!(piece.fill_from(&bytes[3..]), POOLED - 3);
        assert_eq!((piece.len(), piece.remaining()), (POOLED, 0));
        assert_eq!(piece.fill_from(b"l"), 0);
        let frozen = piece.freeze();
        assert_eq!(&frozen[..], &bytes[..POOLED]);
        // Clones and slices share the mapping, and outlive the handle they came from.
        let tail = frozen.slice(POOLED - 3..);
        drop(frozen);
        assert_eq!(&tail[..], &bytes[POOLED - 3..POOLED]);
    }

    #[test]
    fn a_partly_written_piece_freezes_to_its_bytes_only() {
        let mut piece = PieceBuffer::new().unwrap();
        piece.fill_from(&[7; 1000]);
        assert_eq!(piece.freeze().len(), 1000);
        assert!(PieceBuffer::new().unwrap().freeze().is_empty());
    }

    #[test]
    fn spares_are_reused_and_kept_up_to_their_number() {
        let spares = Spares::new(2);
        let maps: Vec<_> = (0..3).map(|_| memmap2::MmapMut::map_anon(4096).unwrap()).collect();
        let addresses: Vec<_> = maps.iter().map(|map| map.as_ptr()).collect();
        for map in maps {
            spares.keep(map);
        }
        // The third was unmapped; the two kept come back, newest first.
        assert_eq!(spares.take().map(|map| map.as_ptr()), Some(addresses[1]));
        assert_eq!(spares.take().map(|map| map.as_ptr()), Some(addresses[0]));
        assert!(spares.take().is_none());
    }
}
