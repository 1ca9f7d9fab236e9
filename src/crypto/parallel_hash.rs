//! SHA-256 on a second thread. Encrypting or decrypting a layer hashes every byte three times (the source
//! digest, the HMAC, the output digest); with SHA-NI each pass costs about as much as everything else together,
//! so running two of them beside the cipher uses the second core instead of idling it.

use sha2::{Digest, Sha256};
use std::sync::mpsc::{SyncSender, sync_channel};
use std::thread::JoinHandle;
use zeroize::Zeroizing;

/// How much is handed to the hashing thread at once: large enough that the channel costs nothing.
const CHUNK: usize = 1 << 20;
/// Chunks in flight: bounds memory (4 MiB) while letting the threads run apart a little.
const IN_FLIGHT: usize = 4;

/// A SHA-256 whose work happens on its own thread.
pub struct ParallelSha256 {
    pending: Zeroizing<Vec<u8>>,
    sender: Option<SyncSender<Zeroizing<Vec<u8>>>>,
    worker: Option<JoinHandle<[u8; 32]>>,
}

impl Default for ParallelSha256 {
    fn default() -> Self {
        Self::new()
    }
}

impl ParallelSha256 {
    /// Starts the hashing thread.
    pub fn new() -> Self {
        // Chunks may be plaintext: they are wiped when the worker is done with them.
        let (sender, receiver) = sync_channel::<Zeroizing<Vec<u8>>>(IN_FLIGHT);
        let worker = std::thread::spawn(move || {
            let mut hash = Sha256::new();
            for chunk in receiver {
                hash.update(&chunk[..]);
            }
            hash.finalize().into()
        });
        Self { pending: Zeroizing::new(Vec::new()), sender: Some(sender), worker: Some(worker) }
    }

    /// Adds bytes.
    pub fn update(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            if self.pending.capacity() == 0 {
                self.pending.reserve_exact(CHUNK);
            }
            let take = (CHUNK - self.pending.len()).min(data.len());
            self.pending.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.pending.len() == CHUNK {
                self.send();
            }
        }
    }

    fn send(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let chunk = std::mem::replace(&mut self.pending, Zeroizing::new(Vec::new()));
        if let Some(sender) = &self.sender {
            // The worker only stops when the sender is dropped, so a send cannot fail while both live.
            let _ = sender.send(chunk);
        }
    }

    /// The digest of everything added.
    pub fn finalize(mut self) -> [u8; 32] {
        self.send();
        drop(self.sender.take());
        self.worker.take().expect("finalized once").join().expect("the hashing thread does not panic")
    }
}

impl Drop for ParallelSha256 {
    fn drop(&mut self) {
        // Dropped without finalize (an error on the way): let the worker end instead of leaking it.
        drop(self.sender.take());
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

/// SHA-256 inline for small inputs (a thread costs more than hashing a manifest), on a thread for large ones.
pub enum Sha256ForSize {
    /// Hashed as it comes.
    Inline(Sha256),
    /// Hashed on a second thread.
    Threaded(ParallelSha256),
}

impl Sha256ForSize {
    /// Picks by the expected input size.
    pub fn new(expected_size: u64) -> Self {
        if expected_size < 4 * CHUNK as u64 {
            Self::Inline(Sha256::new())
        } else {
            Self::Threaded(ParallelSha256::new())
        }
    }

    /// Adds bytes.
    pub fn update(&mut self, data: &[u8]) {
        match self {
            Self::Inline(hash) => hash.update(data),
            Self::Threaded(hash) => hash.update(data),
        }
    }

    /// The digest of everything added.
    pub fn finalize(self) -> [u8; 32] {
        match self {
            Self::Inline(hash) => hash.finalize().into(),
            Self::Threaded(hash) => hash.finalize(),
        }
    }
}

/// Copies with buffers of up to 1 MiB (`std::io::copy` uses 8 KiB, which costs a few percent in calls and copies
/// on layers); `size_hint` keeps the buffer small for small blobs.
pub fn copy_large(
    reader: &mut dyn std::io::Read,
    writer: &mut dyn std::io::Write,
    size_hint: u64,
) -> std::io::Result<u64> {
    let length = size_hint.clamp(4096, CHUNK as u64) as usize;
    let mut buffer = Zeroizing::new(vec![0u8; length]);
    let mut total = 0;
    loop {
        let n = match reader.read(&mut buffer[..]) {
            Ok(0) => return Ok(total),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        writer.write_all(&buffer[..n])?;
        total += n as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_sha256_across_chunk_boundaries() {
        let data: Vec<u8> = (0..(3 * CHUNK + 12345)).map(|i| (i * 7 % 251) as u8).collect();
        let mut parallel = ParallelSha256::new();
        for piece in data.chunks(100_003) {
            parallel.update(piece);
        }
        assert_eq!(parallel.finalize(), <[u8; 32]>::from(Sha256::digest(&data)));
        assert_eq!(ParallelSha256::new().finalize(), <[u8; 32]>::from(Sha256::digest(b"")));
        drop(ParallelSha256::new()); // dropping unfinished must not hang
    }
}
