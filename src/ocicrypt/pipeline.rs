//! One pass over a layer blob for `image encrypt` and `image decrypt`: the source is read once into pooled
//! chunks, and the cipher and the three SHA-256 passes the format requires (the source digest check, the HMAC over
//! the ciphertext, the output digest) all work on those same chunks, each hash on a thread of its own.
//!
//! Why this shape (profiled in issue 17): SHA-256 is most of the work, and its three passes are independent, so
//! on a small machine the wall time is the CPU time spread over the cores. Running each pass on its own thread
//! lets the kernel spread them; sharing reference-counted chunks instead of copying each into every consumer, and
//! reusing a small pool of chunks (fresh pages cost a page fault each, expensive on a VM) keeps the CPU time
//! close to the hashing itself. Chunks are small enough to stay in the caches between their consumers.
//!
//! Nothing here decides what is released: the caller commits the output only after the source digest (checked
//! here) and, when decrypting, the HMAC (checked by the caller on the returned state) have matched.

use super::layer::LayerKey;
use cryptadm_bulk::SecretBuf;
use hmac::Mac;
use sha2::{Digest, Sha256};
use std::io::{self, Read, Write};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

/// Bytes per chunk: a few chunks in flight fit in the second-level cache, and a chunk is large enough that
/// handing it between threads costs nothing measurable.
pub const CHUNK: usize = 256 << 10;
/// Chunks in existence at most (inputs and outputs together, of every layer in flight): bounds memory at
/// `POOL × CHUNK` (6 MiB) whatever the layer size and the number of layers moving at once, while letting the
/// hashing threads run a few chunks apart. (One pool per layer, as before, held 6 MiB per job: 36 MiB at
/// `--jobs 6`, most of the peak RSS of an image of small layers; issue 44.)
const POOL: usize = 24;
/// Chunks a pass holds while it waits for another (the input, and the first cipher's output when re-encrypting):
/// the shared pool has more than this per job, so that some pass can always go on.
const HELD_WHILE_WAITING: usize = 2;

/// Which way the layer goes through the cipher, with which keys.
#[derive(Clone, Copy, Debug)]
pub enum Direction<'k> {
    /// Plaintext in, ciphertext out: the HMAC covers the output.
    Encrypt(&'k LayerKey),
    /// Ciphertext in, plaintext out: the HMAC covers the input.
    Decrypt(&'k LayerKey),
    /// Ciphertext under `old` in, ciphertext under `new` out (`--remove-recipient`): the old HMAC covers the
    /// input, the new one the output, and the plaintext in between is hashed for the private options. The
    /// plaintext never leaves the pipeline.
    Reencrypt {
        /// The layer's key.
        old: &'k LayerKey,
        /// The fresh key.
        new: &'k LayerKey,
    },
}

/// What one pass produced. The source was verified against its descriptor; the HMAC is left to the caller,
/// who either publishes it (encrypt) or verifies it (decrypt) before committing anything.
pub struct Pass {
    /// HMAC-SHA-256 of the ciphertext (the output's, when re-encrypting), not finalized.
    pub mac: super::layer::HmacSha256,
    /// `sha256:…` of the output.
    pub output_digest: String,
    /// Bytes read and written.
    pub size: u64,
    /// What a re-encryption also produced.
    pub reencrypted: Option<Reencrypted>,
}

/// The extra results of a re-encryption pass.
pub struct Reencrypted {
    /// HMAC-SHA-256 of the input under the old key, not finalized: to verify before the output is committed.
    pub old_mac: super::layer::HmacSha256,
    /// `sha256:…` of the plaintext.
    pub plaintext_digest: String,
}

/// The blob being read: what its descriptor promises.
pub struct Expected<'a> {
    /// `sha256:…`.
    pub digest: &'a str,
    /// Bytes.
    pub size: u64,
}

/// Runs `input` through the layer cipher into `output`, hashing on the way. `input` must be the unverified blob:
/// its size and digest are checked here (an `InvalidData` error, as the verifying readers report it).
pub fn run(
    chunks: &Arc<Chunks>,
    direction: Direction<'_>,
    expected: &Expected<'_>,
    input: &mut dyn Read,
    output: &mut dyn Write,
) -> io::Result<Pass> {
    let (source_tx, source_rx) = sync_channel::<Arc<Chunk>>(POOL);
    let (mac_tx, mac_rx) = sync_channel::<Arc<Chunk>>(POOL);
    let (output_tx, output_rx) = sync_channel::<Arc<Chunk>>(POOL);
    let (key, second) = match direction {
        Direction::Encrypt(key) | Direction::Decrypt(key) => (key, None),
        Direction::Reencrypt { old, new } => (old, Some(new)),
    };
    let mut ciphers = Ciphers { first: key.cipher(), second: second.map(LayerKey::cipher) };
    // The output's HMAC is under the key that made it; a re-encryption also checks the input's, under the old.
    let output_key = second.unwrap_or(key);
    std::thread::scope(|scope| {
        let source_hash = scope.spawn(move || hash_chunks(Sha256::new(), source_rx, |h, b| h.update(b)));
        let mac = scope.spawn(move || hash_chunks(output_key.mac(), mac_rx, |h, b| h.update(b)));
        let output_hash = scope.spawn(move || hash_chunks(Sha256::new(), output_rx, |h, b| h.update(b)));
        let (extra, extra_threads) = if second.is_some() {
            let (old_mac_tx, old_mac_rx) = sync_channel::<Arc<Chunk>>(POOL);
            let (plain_tx, plain_rx) = sync_channel::<Arc<Chunk>>(POOL);
            let old_mac = scope.spawn(move || hash_chunks(key.mac(), old_mac_rx, |h, b| h.update(b)));
            let plain = scope.spawn(move || hash_chunks(Sha256::new(), plain_rx, |h, b| h.update(b)));
            (Some((old_mac_tx, plain_tx)), Some((old_mac, plain)))
        } else {
            (None, None)
        };
        let senders = Senders { source: source_tx, mac: mac_tx, output: output_tx, extra };
        // The senders are dropped when the loop ends (or fails), which ends the hashing threads.
        let size = pump(direction, &mut ciphers, chunks, expected, input, output, senders);
        let source_hash = source_hash.join().expect("hashing does not panic");
        let mac = mac.join().expect("hashing does not panic");
        let output_hash = output_hash.join().expect("hashing does not panic");
        let reencrypted = extra_threads.map(|(old_mac, plain)| Reencrypted {
            old_mac: old_mac.join().expect("hashing does not panic"),
            plaintext_digest: format!(
                "sha256:{}",
                hex::encode(plain.join().expect("hashing does not panic").finalize())
            ),
        });
        let size = size?;
        let actual = format!("sha256:{}", hex::encode(source_hash.finalize()));
        if actual != expected.digest {
            return Err(io::Error::new(io::ErrorKind::InvalidData, format!("content has digest {actual}")));
        }
        Ok(Pass { mac, output_digest: format!("sha256:{}", hex::encode(output_hash.finalize())), size, reencrypted })
    })
}

/// The layer cipher, and for a re-encryption the new one applied after it.
struct Ciphers {
    first: super::layer::Aes256Ctr,
    second: Option<super::layer::Aes256Ctr>,
}

/// Where chunks go to one hashing thread.
type Feed = SyncSender<Arc<Chunk>>;

struct Senders {
    source: SyncSender<Arc<Chunk>>,
    mac: SyncSender<Arc<Chunk>>,
    output: SyncSender<Arc<Chunk>>,
    /// Re-encryption: the old HMAC over the input, and the plaintext's digest.
    extra: Option<(Feed, Feed)>,
}

/// The reading, ciphering and writing loop; returns the bytes done once the input ended at its declared size.
fn pump(
    direction: Direction<'_>,
    ciphers: &mut Ciphers,
    pool: &Arc<Chunks>,
    expected: &Expected<'_>,
    input: &mut dyn Read,
    output: &mut dyn Write,
    senders: Senders,
) -> io::Result<u64> {
    let mut size = 0u64;
    loop {
        let mut plain_or_cipher = pool.chunk();
        let n = read_full(input, plain_or_cipher.buffer())?;
        if n == 0 {
            break;
        }
        size += n as u64;
        if size > expected.size {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("longer than its declared {} bytes", expected.size),
            ));
        }
        plain_or_cipher.len = n;
        let source = Arc::new(plain_or_cipher);
        send(&senders.source, &source)?;
        match (direction, &senders.extra) {
            (Direction::Decrypt(_), _) => send(&senders.mac, &source)?,
            (Direction::Reencrypt { .. }, Some((old_mac, _))) => send(old_mac, &source)?,
            _ => {}
        }
        let mut result = pool.chunk();
        result.len = n;
        ciphers
            .first
            .apply_keystream_b2b(source.bytes(), &mut result.buffer()[..n])
            .expect("the output chunk is as long as the input");
        let mut result = Arc::new(result);
        if let (Some(second), Some((_, plain))) = (ciphers.second.as_mut(), &senders.extra) {
            send(plain, &result)?;
            let mut again = pool.chunk();
            again.len = n;
            second.apply_keystream_b2b(result.bytes(), &mut again.buffer()[..n]).expect("as long as the input");
            result = Arc::new(again);
        }
        if !matches!(direction, Direction::Decrypt(_)) {
            send(&senders.mac, &result)?;
        }
        send(&senders.output, &result)?;
        output.write_all(result.bytes())?;
    }
    if size != expected.size {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{size} bytes, declared {} (truncated)", expected.size),
        ));
    }
    output.flush()?;
    Ok(size)
}

fn send(sender: &SyncSender<Arc<Chunk>>, chunk: &Arc<Chunk>) -> io::Result<()> {
    // A hashing thread only stops when its sender is dropped, so a send cannot fail while the loop runs.
    sender.send(Arc::clone(chunk)).map_err(|_| io::Error::other("a hashing thread stopped"))
}

/// Fills `buffer` unless the input ends first; returns how much it read.
fn read_full(input: &mut dyn Read, buffer: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match input.read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

fn hash_chunks<H>(mut state: H, chunks: Receiver<Arc<Chunk>>, update: impl Fn(&mut H, &[u8])) -> H {
    for chunk in chunks {
        update(&mut state, chunk.bytes());
    }
    state
}

/// A chunk of the pool; it goes back to the pool when its last holder drops it.
struct Chunk {
    data: Option<SecretBuf>,
    len: usize,
    home: Arc<Chunks>,
}

impl Chunk {
    fn bytes(&self) -> &[u8] {
        &self.data.as_ref().expect("present until dropped")[..self.len]
    }

    fn buffer(&mut self) -> &mut [u8] {
        &mut self.data.as_mut().expect("present until dropped")[..]
    }
}

impl Drop for Chunk {
    fn drop(&mut self) {
        if let Some(data) = self.data.take() {
            self.home.give_back(data);
        }
    }
}

/// The chunks of every pass of one image, shared by the layers moving at once: at most [`POOL`] of them (more
/// with many jobs, [`HELD_WHILE_WAITING`] + 1 per job), made when first needed and reused; taking one waits until
/// a consumer released one. Dropped (and wiped: they may hold plaintext) with the last pass.
pub struct Chunks {
    state: std::sync::Mutex<Free>,
    released: std::sync::Condvar,
    limit: usize,
}

struct Free {
    buffers: Vec<SecretBuf>,
    made: usize,
}

impl Chunks {
    /// A pool for up to `jobs` passes at once.
    pub fn new(jobs: usize) -> Arc<Self> {
        Arc::new(Self {
            state: std::sync::Mutex::new(Free { buffers: Vec::new(), made: 0 }),
            released: std::sync::Condvar::new(),
            limit: POOL.max(jobs.max(1) * (HELD_WHILE_WAITING + 1)),
        })
    }

    fn free(&self) -> std::sync::MutexGuard<'_, Free> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn take(&self) -> SecretBuf {
        let mut free = self.free();
        loop {
            if let Some(data) = free.buffers.pop() {
                return data;
            }
            if free.made < self.limit {
                free.made += 1;
                drop(free);
                return SecretBuf::zeroed(CHUNK);
            }
            free = self.released.wait(free).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }

    /// A chunk from the pool, which goes back to it when dropped.
    fn chunk(self: &Arc<Self>) -> Chunk {
        Chunk { data: Some(self.take()), len: 0, home: Arc::clone(self) }
    }

    fn give_back(&self, data: SecretBuf) {
        self.free().buffers.push(data);
        self.released.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ocicrypt::layer::{LayerDecryptor, LayerEncryptor};

    fn data(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 % 251) as u8).collect()
    }

    /// The pipeline agrees with the streaming encryptor and decryptor at sizes around the chunk boundaries.
    #[test]
    fn matches_the_streaming_cipher_at_chunk_boundaries() {
        let key = LayerKey::generate();
        for len in [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 17, POOL * CHUNK + 5] {
            let plain = data(len);
            let digest = crate::oci::sha256_digest(&plain);
            let mut ciphertext = Vec::new();
            let expected = Expected { digest: &digest, size: len as u64 };
            let pass =
                run(&Chunks::new(1), Direction::Encrypt(&key), &expected, &mut &plain[..], &mut ciphertext).unwrap();
            let mut reference = LayerEncryptor::new(&key, Vec::new());
            reference.write_all(&plain).unwrap();
            let (reference_ciphertext, layer) = reference.finish().unwrap();
            assert_eq!(ciphertext, reference_ciphertext, "{len}");
            assert_eq!(pass.output_digest, layer.ciphertext_digest);
            assert_eq!(pass.size, len as u64);
            assert_eq!(&pass.mac.finalize().into_bytes()[..], &layer.hmac[..]);

            let mut decrypted = Vec::new();
            let expected = Expected { digest: &layer.ciphertext_digest, size: len as u64 };
            let pass = run(&Chunks::new(1), Direction::Decrypt(&key), &expected, &mut &ciphertext[..], &mut decrypted)
                .unwrap();
            assert_eq!(decrypted, plain);
            assert_eq!(pass.output_digest, digest);
            pass.mac.verify_slice(&layer.hmac).unwrap();
            let mut reference = LayerDecryptor::new(&key, Vec::new());
            reference.write_all(&ciphertext).unwrap();
            assert_eq!(reference.finish(&layer.hmac).unwrap().1.plaintext_digest, digest);
        }
    }

    /// A re-encryption pass equals decrypting with the old key and encrypting with the new one.
    #[test]
    fn reencryption_is_decryption_then_encryption_in_one_pass() {
        let (old, new) = (LayerKey::generate(), LayerKey::generate());
        for len in [0, 1, CHUNK + 1, POOL * CHUNK + 5] {
            let plain = data(len);
            let plain_digest = crate::oci::sha256_digest(&plain);
            let mut old_ciphertext = Vec::new();
            let expected = Expected { digest: &plain_digest, size: len as u64 };
            let first = run(&Chunks::new(1), Direction::Encrypt(&old), &expected, &mut &plain[..], &mut old_ciphertext)
                .unwrap();
            let old_hmac = first.mac.finalize().into_bytes();
            let mut ciphertext = Vec::new();
            let expected = Expected { digest: &first.output_digest, size: len as u64 };
            let direction = Direction::Reencrypt { old: &old, new: &new };
            let pass = run(&Chunks::new(1), direction, &expected, &mut &old_ciphertext[..], &mut ciphertext).unwrap();
            let reencrypted = pass.reencrypted.unwrap();
            reencrypted.old_mac.verify_slice(&old_hmac).unwrap();
            assert_eq!(reencrypted.plaintext_digest, plain_digest);
            let mut reference = LayerEncryptor::new(&new, Vec::new());
            reference.write_all(&plain).unwrap();
            let (reference_ciphertext, layer) = reference.finish().unwrap();
            assert_eq!(ciphertext, reference_ciphertext, "{len}");
            assert_eq!(pass.output_digest, layer.ciphertext_digest);
            assert_eq!(&pass.mac.finalize().into_bytes()[..], &layer.hmac[..]);
        }
    }

    /// Layers moving at once share one pool: however many passes run, no more chunks are made than its limit
    /// (not one pool per pass), and every pass still finishes with the right bytes.
    #[test]
    fn passes_at_once_share_one_bounded_pool() {
        for jobs in [1, 8] {
            let chunks = Chunks::new(jobs);
            assert_eq!(chunks.limit, POOL.max(jobs * (HELD_WHILE_WAITING + 1)));
            let key = LayerKey::generate();
            let plain = data(3 * CHUNK + 11);
            let digest = crate::oci::sha256_digest(&plain);
            std::thread::scope(|scope| {
                for _ in 0..jobs {
                    scope.spawn(|| {
                        let (old, new) = (LayerKey::generate(), LayerKey::generate());
                        let expected = Expected { digest: &digest, size: plain.len() as u64 };
                        let mut out = Vec::new();
                        let pass = run(&chunks, Direction::Encrypt(&key), &expected, &mut &plain[..], &mut out);
                        assert_eq!(pass.unwrap().size, plain.len() as u64);
                        // A re-encryption holds the most chunks while it waits for another.
                        let expected = Expected { digest: &crate::oci::sha256_digest(&out), size: out.len() as u64 };
                        let direction = Direction::Reencrypt { old: &old, new: &new };
                        let outcome = run(&chunks, direction, &expected, &mut &out[..], &mut io::sink());
                        // Under the wrong key the HMAC would not verify, but the pass itself runs to the end.
                        assert!(outcome.is_ok());
                    });
                }
            });
            let (made, free) = {
                let state = chunks.free();
                (state.made, state.buffers.len())
            };
            assert!(made <= chunks.limit, "{jobs} jobs: {made} chunks");
            assert_eq!(free, made, "every chunk came back");
        }
    }

    #[test]
    fn a_source_that_does_not_match_its_descriptor_fails() {
        let key = LayerKey::generate();
        let plain = data(2 * CHUNK + 3);
        let digest = crate::oci::sha256_digest(&plain);
        let check = |bytes: &[u8], size: u64, want: &str| {
            let expected = Expected { digest: &digest, size };
            let err = run(&Chunks::new(1), Direction::Encrypt(&key), &expected, &mut &bytes[..], &mut io::sink())
                .err()
                .unwrap();
            assert_eq!(err.kind(), io::ErrorKind::InvalidData);
            assert!(err.to_string().contains(want), "{err}");
        };
        let mut flipped = plain.clone();
        flipped[CHUNK] ^= 1;
        check(&flipped, plain.len() as u64, "content has digest");
        check(&plain[..plain.len() - 1], plain.len() as u64, "truncated");
        check(&plain, plain.len() as u64 - 1, "longer than its declared");
    }
}
