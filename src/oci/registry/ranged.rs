//! Large blobs downloaded as several HTTP ranges at once, as containerd 2.1's parallel layer fetch does: one
//! connection to a registry far away moves one window per round trip, so one layer on one connection is as
//! slow as the latency makes it whatever the bandwidth. A blob of [`RANGED_MIN`] bytes or more is asked for in
//! chunks of [`chunk_size`] bytes, up to `ranges` of them in flight on as many connections, and handed on in
//! order: at most `ranges` chunks are in memory per blob (plus the one the reader holds), whatever its size.
//!
//! The first chunk's answer decides: `206` with the `Content-Range` asked for, and the rest is fetched in ranges;
//! `200` (a registry or storage that ignores `Range`) is the whole blob, read as one stream like a small one. The
//! digest is checked by the reader over the whole stream as before, so a chunk with the wrong bytes fails the
//! layer like any corruption. A chunk whose transfer breaks is asked for again (it is at most a few MiB), up to
//! the same number of attempts as any request. Redirects to storage are followed per request, without the
//! registry's credentials when they leave its origin, as for a whole blob.

use super::fetch::{self, Bounded, RegistryReader};
use super::{ATTEMPTS, FIRST_BACKOFF, chain, retry};
use bytes::Bytes;
use reqwest::StatusCode;
use std::collections::VecDeque;
use std::io;
use std::sync::Arc;
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

/// Aborts the chunk fetches still running when the download ends early (the reader went away, or one failed).
struct Fetches(VecDeque<JoinHandle<io::Result<Bytes>>>);

impl Drop for Fetches {
    fn drop(&mut self) {
        for fetch in &self.0 {
            fetch.abort();
        }
    }
}

/// Streams a blob of `size` bytes into `sender` in chunks of `chunk` bytes, `ranges` of them fetched at once.
/// `first` is the registry's `206` answer for the first chunk (already checked by [`is_range`]).
pub async fn download(
    reader: Arc<RegistryReader>,
    digest: String,
    size: u64,
    chunk: u64,
    ranges: usize,
    first: reqwest::Response,
    sender: mpsc::Sender<io::Result<Bytes>>,
) {
    let mut fetches = Fetches(VecDeque::new());
    let first_end = chunk.min(size) - 1;
    let reader_for_first = Arc::clone(&reader);
    let digest_for_first = digest.clone();
    fetches.0.push_back(tokio::spawn(async move {
        fetch_chunk(&reader_for_first, &digest_for_first, 0, first_end, size, Some(first)).await
    }));
    let mut next = first_end + 1;
    loop {
        while fetches.0.len() < ranges.max(1) && next < size {
            let (start, end) = (next, (next + chunk).min(size) - 1);
            let (reader, digest) = (Arc::clone(&reader), digest.clone());
            fetches
                .0
                .push_back(tokio::spawn(async move { fetch_chunk(&reader, &digest, start, end, size, None).await }));
            next = end + 1;
        }
        let Some(fetch) = fetches.0.pop_front() else { return };
        let bytes = match fetch.await {
            Ok(result) => result,
            Err(e) => Err(io::Error::other(format!("downloading: {e}"))),
        };
        let failed = bytes.is_err();
        if sender.send(bytes).await.is_err() || failed {
            return; // the reader went away, or has the error; `fetches` aborts the rest
        }
    }
}

/// Bytes `start..=end` of the blob, asked for again when the transfer breaks.
async fn fetch_chunk(
    reader: &RegistryReader,
    digest: &str,
    start: u64,
    end: u64,
    size: u64,
    mut first: Option<reqwest::Response>,
) -> io::Result<Bytes> {
    let wanted = end - start + 1;
    let mut failures = 0;
    loop {
        let outcome = async {
            let response = match first.take() {
                Some(response) => response,
                None => {
                    let response = retry(|| reader.blob_range(digest, start, end))
                        .await
                        .map_err(|e| io::Error::other(format!("downloading bytes {start}-{end}: {}", chain(&e))))?;
                    if !is_range(&response, start, end, size)? {
                        // It honoured the first range and not this one: the whole blob again is not what was
                        // asked for, and reading it would cost the whole blob per chunk.
                        return Err(io::Error::new(
                            io::ErrorKind::InvalidData,
                            format!("asked for bytes {start}-{end}, the registry answered with the whole blob"),
                        ));
                    }
                    response
                }
            };
            match fetch::read_bounded(response, wanted).await {
                Ok(bytes) if bytes.len() as u64 == wanted => Ok(bytes),
                Ok(bytes) => Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("bytes {start}-{end}: the answer ended after {} bytes", bytes.len()),
                )),
                Err(Bounded::TooLarge) => Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("bytes {start}-{end}: the answer is longer than the {wanted} bytes asked for"),
                )),
                Err(Bounded::Failed(e)) => {
                    Err(io::Error::other(format!("downloading bytes {start}-{end}: {}", chain(&e.without_url()))))
                }
            }
        }
        .await;
        match outcome {
            Err(error) if error.kind() != io::ErrorKind::InvalidData && failures + 1 < ATTEMPTS => {
                failures += 1;
                tokio::time::sleep(FIRST_BACKOFF * 2u32.pow(failures)).await;
            }
            outcome => return outcome,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
