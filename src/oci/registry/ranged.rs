//! Large blobs downloaded as several HTTP ranges at once, as containerd 2.1's parallel layer fetch does: one
//! connection to a registry far away moves one window per round trip, so one layer on one connection is as
//! slow as the latency makes it whatever the bandwidth. A blob of [`RANGED_MIN`] bytes or more is asked for in
//! chunks of [`chunk_size`] bytes, up to `ranges` of them in flight on as many connections, and handed on in
//! order (the first in order as it arrives): at most `ranges` chunks are in memory per blob, whatever its size.
//!
//! The first chunk's answer decides: `206` with the `Content-Range` asked for, and the rest is fetched in ranges;
//! `200` (a registry or storage that ignores `Range`) is the whole blob, read as one stream like a small one. The
//! digest is checked by the reader over the whole stream as before, so a chunk with the wrong bytes fails the
//! layer like any corruption. A chunk whose transfer breaks is asked for again from where it stopped, up to the
//! same number of attempts as any request. Redirects to storage are followed per request, without the
//! registry's credentials when they leave its origin, as for a whole blob.

use super::fetch::RegistryReader;
use super::piece::PieceBuffer;
use super::{ATTEMPTS, FIRST_BACKOFF, chain, retry};
use bytes::Bytes;
use reqwest::StatusCode;
use std::collections::VecDeque;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Ranges of one blob in flight at once (connections per blob) unless one connection is asked for.
pub const RANGES_PER_BLOB: usize = 4;
/// Blobs smaller than this are one request: splitting them gains less than the requests cost.
pub const RANGED_MIN: u64 = 4 << 20;
/// The smallest and largest chunk asked for: a small blob is split into `ranges` chunks of at least
/// `MIN_CHUNK`, a large one into chunks of `MAX_CHUNK` (the memory a blob holds is `ranges` × the chunk).
const MIN_CHUNK: u64 = 1 << 20;
const MAX_CHUNK: u64 = 2 << 20;

/// The size of the chunks a blob of `size` bytes is fetched in, `ranges` at a time.
pub fn chunk_size(size: u64, ranges: usize) -> u64 {
    size.div_ceil(ranges.max(1) as u64).clamp(MIN_CHUNK, MAX_CHUNK)
}

/// Whether `response` is the range `start..=end` of a blob of `size` bytes: `Ok(true)` a `206` with that
/// `Content-Range`, `Ok(false)` a `200` (the range was ignored), an error for anything else.
pub fn is_range(response: &reqwest::Response, start: u64, end: u64, size: u64) -> io::Result<bool> {
    match response.status() {
        StatusCode::OK => Ok(false),
        StatusCode::PARTIAL_CONTENT => {
            let header = response.headers().get(reqwest::header::CONTENT_RANGE).and_then(|v| v.to_str().ok());
            match header.and_then(parse_content_range) {
                Some((first, last, total)) if first == start && last == end && total.is_none_or(|t| t == size) => {
                    Ok(true)
                }
                _ => Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "asked for bytes {start}-{end} of {size}, the registry answered with range `{}`",
                        crate::redact::server_message(header.unwrap_or("(none)").as_bytes())
                    ),
                )),
            }
        }
        status => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("asked for bytes {start}-{end}, the registry answered HTTP {status}"),
        )),
    }
}

/// `bytes FIRST-LAST/TOTAL` (TOTAL may be `*`).
fn parse_content_range(text: &str) -> Option<(u64, u64, Option<u64>)> {
    let rest = text.trim().strip_prefix("bytes")?.trim_start();
    let (range, total) = rest.split_once('/')?;
    let (first, last) = range.split_once('-')?;
    let total = match total.trim() {
        "*" => None,
        t => Some(t.parse().ok()?),
    };
    Some((first.trim().parse().ok()?, last.trim().parse().ok()?, total))
}

/// One range being fetched: its bytes arrive on `pieces` (at most the range's length: the memory it holds is
/// bounded by the chunk size), in order, ending with the range or an error.
struct Fetch {
    /// The first byte of the range.
    start: u64,
    pieces: mpsc::UnboundedReceiver<io::Result<Bytes>>,
    task: JoinHandle<()>,
}

/// Aborts the range fetches still running when the download ends early (the reader went away, or one failed).
struct Fetches(VecDeque<Fetch>);

impl Drop for Fetches {
    fn drop(&mut self) {
        for fetch in &self.0 {
            fetch.task.abort();
        }
    }
}

/// Streams a blob of `size` bytes into `sender` in ranges of `chunk` bytes, `ranges` of them fetched at once.
/// The first range in order is passed on as its bytes arrive (the cipher and the upload start at once); the
/// others are held until it is their turn, copied into pieces of [`HELD_PIECE`] bytes (see [`Held`]). `first` is the registry's `206` answer for the first range (already
/// checked by [`is_range`]).
pub async fn download(
    reader: Arc<RegistryReader>,
    digest: String,
    size: u64,
    chunk: u64,
    ranges: usize,
    first: reqwest::Response,
    sender: mpsc::Sender<io::Result<Bytes>>,
) {
    // Where the range being passed on starts: the others hold their bytes.
    let front = Arc::new(AtomicU64::new(0));
    let spawn = |start: u64, end: u64, first: Option<reqwest::Response>| {
        let (pieces_in, pieces) = mpsc::unbounded_channel();
        let (reader, digest) = (Arc::clone(&reader), digest.clone());
        let held = Held { front: Arc::clone(&front), start, buffer: None, pieces: pieces_in };
        let task = tokio::spawn(async move {
            let mut held = held;
            if let Err(error) = fetch_range(&reader, &digest, start, end, size, first, &mut held).await {
                let pieces_in = held.pieces;
                let _ = pieces_in.send(Err(error));
            }
        });
        Fetch { start, pieces, task }
    };
    let mut fetches = Fetches(VecDeque::new());
    let first_end = chunk.min(size) - 1;
    fetches.0.push_back(spawn(0, first_end, Some(first)));
    let mut next = first_end + 1;
    loop {
        while fetches.0.len() < ranges.max(1) && next < size {
            let end = (next + chunk).min(size) - 1;
            fetches.0.push_back(spawn(next, end, None));
            next = end + 1;
        }
        let Some(fetch) = fetches.0.front_mut() else { return };
        match fetch.pieces.recv().await {
            Some(piece) => {
                let failed = piece.is_err();
                if sender.send(piece).await.is_err() || failed {
                    return; // the reader went away, or has the error; `fetches` aborts the rest
                }
            }
            // This range is complete (`fetch_range` sends an error otherwise): on to the next.
            None => {
                drop(fetches.0.pop_front());
                if let Some(next) = fetches.0.front() {
                    front.store(next.start, Ordering::Relaxed);
                }
            }
        }
    }
}

/// Sends bytes `start..=end` of the blob to `pieces` as they arrive; a transfer that breaks goes on from where
/// it stopped (a range request for the rest), up to [`ATTEMPTS`] times in a row without progress.
async fn fetch_range(
    reader: &RegistryReader,
    digest: &str,
    start: u64,
    end: u64,
    size: u64,
    mut first: Option<reqwest::Response>,
    pieces: &mut Held,
) -> io::Result<()> {
    let mut got = 0u64;
    let wanted = end - start + 1;
    let mut failures = 0;
    loop {
        let from = start + got;
        let before = got;
        let outcome = async {
            let mut response = match first.take() {
                Some(response) => response,
                None => {
                    let response = retry(|| reader.blob_range(digest, from, end))
                        .await
                        .map_err(|e| io::Error::other(format!("downloading bytes {from}-{end}: {}", chain(&e))))?;
                    if !is_range(&response, from, end, size)? {
                        // It honoured the first range and not this one: the whole blob is not what was asked for,
                        // and reading it would cost the whole blob per range.
                        return Err(io::Error::new(
                            io::ErrorKind::InvalidData,
                            format!("asked for bytes {from}-{end}, the registry answered with the whole blob"),
                        ));
                    }
                    response
                }
            };
            if response.content_length().is_some_and(|length| length != end - from + 1) {
                return Err(longer(from, end));
            }
            loop {
                let piece = response.chunk().await.map_err(|e| {
                    io::Error::other(format!("downloading bytes {from}-{end}: {}", chain(&e.without_url())))
                })?;
                let Some(piece) = piece else { break };
                if got + piece.len() as u64 > wanted {
                    return Err(longer(from, end));
                }
                got += piece.len() as u64;
                if pieces.push(piece).is_err() {
                    return Ok(()); // the download ended
                }
            }
            if got == wanted && pieces.flush().is_err() {
                return Ok(());
            }
            if got < wanted {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("bytes {start}-{end}: the answer ended after {} bytes", got - (from - start)),
                ));
            }
            Ok(())
        }
        .await;
        match outcome {
            Err(error) if error.kind() != io::ErrorKind::InvalidData && failures + 1 < ATTEMPTS => {
                failures = if got > before { 1 } else { failures + 1 };
                tokio::time::sleep(FIRST_BACKOFF * 2u32.pow(failures)).await;
            }
            outcome => return outcome,
        }
    }
}

/// Bytes held in a range's pieces until it is the range being passed on are copied into pieces of this size:
/// the pieces of an HTTP answer share the client's read buffers (up to about 400 KiB each, partly used), and
/// holding them kept about twice the bytes in memory (issue 44). The range passed on hands its pieces on as they
/// come, without a copy.
const HELD_PIECE: usize = 256 << 10;
// A held piece is one piece buffer (`piece`), full.
const _: () = assert!(HELD_PIECE == super::piece::POOLED);

/// Where a range's bytes go: passed on as they come when it is the range being passed on, else copied into
/// pieces of [`HELD_PIECE`] bytes (mapped buffers: see [`super::piece`]).
struct Held {
    front: Arc<AtomicU64>,
    /// The first byte of the range.
    start: u64,
    /// The piece being filled.
    buffer: Option<PieceBuffer>,
    pieces: mpsc::UnboundedSender<io::Result<Bytes>>,
}

impl Held {
    /// Passes `piece` on, or holds it; `Err` when the download ended (the reader went away, or a buffer could not
    /// be made, which the reader is told).
    fn push(&mut self, piece: Bytes) -> Result<(), ()> {
        if self.front.load(Ordering::Relaxed) == self.start {
            self.flush()?;
            return self.pieces.send(Ok(piece)).map_err(|_| ());
        }
        let mut rest = &piece[..];
        while !rest.is_empty() {
            let buffer = match &mut self.buffer {
                Some(buffer) => buffer,
                empty => match PieceBuffer::new() {
                    Ok(buffer) => empty.insert(buffer),
                    Err(error) => {
                        let _ = self.pieces.send(Err(error));
                        return Err(());
                    }
                },
            };
            rest = &rest[buffer.fill_from(rest)..];
            if buffer.remaining() == 0 {
                self.flush()?;
            }
        }
        Ok(())
    }

    /// Passes on the bytes copied so far.
    fn flush(&mut self) -> Result<(), ()> {
        match self.buffer.take() {
            Some(buffer) if !buffer.is_empty() => self.pieces.send(Ok(buffer.freeze())).map_err(|_| ()),
            _ => Ok(()),
        }
    }
}

fn longer(from: u64, end: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("bytes {from}-{end}: the answer is longer than the {} bytes asked for", end - from + 1),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A range that is not the one being passed on holds its bytes copied into whole pieces (not the HTTP
    /// client's partly used read buffers); once it is, its pieces go on as they come; the order never changes.
    #[test]
    fn held_ranges_are_copied_into_whole_pieces_in_order() {
        let front = Arc::new(AtomicU64::new(0));
        let (pieces, mut received) = mpsc::unbounded_channel();
        let mut held = Held { front: Arc::clone(&front), start: 100, buffer: None, pieces };
        let bytes: Vec<u8> = (0..(HELD_PIECE * 2 + 5000)).map(|i| (i % 251) as u8).collect();
        for part in bytes[..HELD_PIECE * 2].chunks(10_000) {
            held.push(Bytes::copy_from_slice(part)).unwrap();
        }
        // Only whole pieces went (the rest waits to fill one).
        let mut got = Vec::new();
        while let Ok(piece) = received.try_recv() {
            got.push(piece.unwrap());
        }
        assert!(!got.is_empty() && got.iter().all(|p| p.len() == HELD_PIECE), "{:?}", got.iter().map(Bytes::len));
        // Now the front: what is held goes first, then the new piece as it came.
        front.store(100, Ordering::Relaxed);
        held.push(Bytes::copy_from_slice(&bytes[HELD_PIECE * 2..])).unwrap();
        while let Ok(piece) = received.try_recv() {
            got.push(piece.unwrap());
        }
        assert_eq!(got.concat(), bytes);
        held.flush().unwrap();
        assert!(received.try_recv().is_err(), "nothing was left behind");
    }

    #[test]
    fn chunks_are_between_one_and_two_mib() {
        assert_eq!(chunk_size(4 << 20, 4), 1 << 20);
        assert_eq!(chunk_size(6 << 20, 4), 3 << 19);
        assert_eq!(chunk_size(1 << 30, 4), 2 << 20);
        assert_eq!(chunk_size(5 << 20, 1), 2 << 20);
        assert_eq!(chunk_size(1 << 20, 0), 1 << 20);
    }

    #[test]
    fn content_ranges_are_parsed() {
        assert_eq!(parse_content_range("bytes 0-1023/4096"), Some((0, 1023, Some(4096))));
        assert_eq!(parse_content_range("bytes 5-9/*"), Some((5, 9, None)));
        assert_eq!(parse_content_range("bytes */4096"), None);
        assert_eq!(parse_content_range("items 0-1/2"), None);
        assert_eq!(parse_content_range("bytes 0-x/2"), None);
    }
}
