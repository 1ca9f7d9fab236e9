//! Accepting any HTTP/2 `:authority` on a unix socket.
//!
//! h2 (under hyper and tonic) parses `:authority` with `http::uri::Authority` while it decodes a request and
//! resets the stream with PROTOCOL_ERROR when that fails, before hyper, tonic or any tower layer sees the request;
//! neither h2's nor hyper's builder has a setting for it (hyperium/h2 PR #487 is still open). Python grpcio sends
//! the socket path, percent-encoded and without its leading `/` (`tmp%2Fx.sock`), as the authority on unix
//! sockets, which `Authority` rejects; grpc-go sends `localhost`. On a unix socket the authority means nothing, so
//! a server must accept any.
//!
//! No maintained crate rewrites request headers below h2, so this module is a byte-level shim between the
//! accepted stream and hyper, for the client-to-server direction only (server-to-client bytes pass unchanged):
//! - the connection preface and every frame other than HEADERS/CONTINUATION pass unchanged;
//! - a header block (HEADERS plus its CONTINUATIONs) is HPACK-decoded with `loona-hpack`, with one decoder per
//!   connection so that the client's dynamic-table entries are followed; an `:authority` that `Authority` would
//!   reject becomes `localhost` (what grpc-go sends on unix sockets);
//! - the block is re-encoded with "literal without indexing" fields only, so the server's decoder never holds a
//!   dynamic-table entry and cannot get out of step with the client's encoder; PADDED and PRIORITY are dropped
//!   (padding carries nothing; priority is advisory) and the block is split into CONTINUATION frames of at most
//!   16,384 bytes, the smallest maximum frame size a peer may advertise.
//!
//! The client's encoder may use a dynamic table up to the size the server advertises (h2's default, 4,096
//! bytes, which tonic keeps); the shim's decoder refuses more, as h2 would. A malformed block closes the
//! connection, which h2 would also do (COMPRESSION_ERROR).

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const FRAME_HEADERS: u8 = 0x1;
const FRAME_CONTINUATION: u8 = 0x9;
const FLAG_END_STREAM: u8 = 0x1;
const FLAG_END_HEADERS: u8 = 0x4;
const FLAG_PADDED: u8 = 0x8;
const FLAG_PRIORITY: u8 = 0x20;
/// The largest frame a peer must accept (SETTINGS_MAX_FRAME_SIZE's initial value).
const MAX_FRAME: usize = 16_384;
/// h2's SETTINGS_HEADER_TABLE_SIZE (the default; tonic does not change it).
const HEADER_TABLE_SIZE: usize = 4_096;
/// Largest header block accepted (h2's default max header list size is 16 MiB; gRPC requests carry a few hundred
/// bytes).
const MAX_BLOCK: usize = 1 << 20;
/// What an unusable authority becomes.
pub const REPLACEMENT_AUTHORITY: &str = "localhost";

/// Copies one connection's client-to-server bytes from `client` to `server`, rewriting header blocks as the
/// module documentation says, until `client` ends or fails; then shuts `server`'s write side in every case, so
/// that the server sees the end of the connection (a client that closes with unread data gets a reset, not an
/// orderly end, and a server waiting for connections to finish on shutdown would otherwise wait forever).
pub async fn forward_requests<R, W>(client: R, mut server: W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let copied = copy_rewriting(client, &mut server).await;
    let shut = server.shutdown().await;
    copied.and(shut)
}

async fn copy_rewriting<R, W>(mut client: R, server: &mut W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut preface = [0u8; 24];
    client.read_exact(&mut preface).await?;
    server.write_all(&preface).await?;
    if &preface != PREFACE {
        // Not HTTP/2 prior knowledge: pass the rest unchanged and let hyper answer.
        tokio::io::copy(&mut client, server).await?;
        return Ok(());
    }
    let mut rewriter = Rewriter::default();
    loop {
        let mut head = [0u8; 9];
        match client.read_exact(&mut head).await {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(e),
        }
        let length = usize::from(head[0]) << 16 | usize::from(head[1]) << 8 | usize::from(head[2]);
        // SETTINGS_MAX_FRAME_SIZE can be at most 2^24-1; hyper refuses what exceeds its own setting.
        let mut payload = vec![0u8; length];
        client.read_exact(&mut payload).await?;
        match rewriter.frame(&head, payload)? {
            Some(bytes) => server.write_all(&bytes).await?,
            None => continue,
        }
        server.flush().await?;
    }
}

fn invalid(message: impl Into<String>) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, message.into())
}

/// The per-connection state: the HPACK decoder and a header block being collected.
struct Rewriter {
    decoder: loona_hpack::Decoder<'static>,
    /// (stream id, flags of the HEADERS frame, block so far) while CONTINUATIONs are expected.
    pending: Option<(u32, u8, Vec<u8>)>,
}

impl Default for Rewriter {
    fn default() -> Self {
        let mut decoder = loona_hpack::Decoder::new();
        decoder.set_max_allowed_table_size(HEADER_TABLE_SIZE);
        Self { decoder, pending: None }
    }
}

impl Rewriter {
    /// The bytes to send for one frame: the frame itself, nothing (a block still collecting), or a rewritten
    /// header block.
    fn frame(&mut self, head: &[u8; 9], mut payload: Vec<u8>) -> std::io::Result<Option<Vec<u8>>> {
        let (kind, flags) = (head[3], head[4]);
        let stream = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
        if let Some((pending_stream, first_flags, mut block)) = self.pending.take() {
            if kind != FRAME_CONTINUATION || stream != pending_stream {
                return Err(invalid("a header block was interrupted by another frame"));
            }
            block.extend_from_slice(&payload);
            if block.len() > MAX_BLOCK {
                return Err(invalid("header block too large"));
            }
            if flags & FLAG_END_HEADERS == 0 {
                self.pending = Some((pending_stream, first_flags, block));
                return Ok(None);
            }
            return self.rewrite(stream, first_flags, &block).map(Some);
        }
        match kind {
            FRAME_HEADERS => {
                let mut start = 0;
                let mut end = payload.len();
                if flags & FLAG_PADDED != 0 {
                    let pad = usize::from(*payload.first().ok_or_else(|| invalid("empty padded HEADERS"))?);
                    start = 1;
                    end = end.checked_sub(pad).filter(|e| *e >= start).ok_or_else(|| invalid("bad padding"))?;
                }
                if flags & FLAG_PRIORITY != 0 {
                    start += 5;
                }
                if start > end {
                    return Err(invalid("HEADERS frame too short"));
                }
                payload.truncate(end);
                let block = payload.split_off(start);
                if flags & FLAG_END_HEADERS == 0 {
                    self.pending = Some((stream, flags, block));
                    return Ok(None);
                }
                self.rewrite(stream, flags, &block).map(Some)
            }
            FRAME_CONTINUATION => Err(invalid("CONTINUATION without HEADERS")),
            _ => {
                let mut bytes = head.to_vec();
                bytes.extend_from_slice(&payload);
                Ok(Some(bytes))
            }
        }
    }

    /// Decodes `block`, fixes `:authority`, and frames the re-encoded block.
    fn rewrite(&mut self, stream: u32, flags: u8, block: &[u8]) -> std::io::Result<Vec<u8>> {
        let mut encoded = Vec::with_capacity(block.len() + 16);
        let mut failure = None;
        self.decoder
            .decode_with_cb(block, |name, value| {
                let value: &[u8] = if &name[..] == b":authority" && !valid_authority(&value) {
                    REPLACEMENT_AUTHORITY.as_bytes()
                } else {
                    &value
                };
                if let Err(e) = literal_without_indexing(&name, value, &mut encoded) {
                    failure = Some(e);
                }
            })
            .map_err(|e| invalid(format!("HPACK: {e:?}")))?;
        if let Some(e) = failure {
            return Err(e);
        }
        let mut out = Vec::with_capacity(encoded.len() + 9 * (1 + encoded.len() / MAX_FRAME));
        let mut chunks = encoded.chunks(MAX_FRAME).peekable();
        let mut first = true;
        if encoded.is_empty() {
            push_frame(&mut out, FRAME_HEADERS, (flags & FLAG_END_STREAM) | FLAG_END_HEADERS, stream, &[]);
        }
        while let Some(chunk) = chunks.next() {
            let last = chunks.peek().is_none();
            let end_headers = if last { FLAG_END_HEADERS } else { 0 };
            if first {
                push_frame(&mut out, FRAME_HEADERS, (flags & FLAG_END_STREAM) | end_headers, stream, chunk);
                first = false;
            } else {
                push_frame(&mut out, FRAME_CONTINUATION, end_headers, stream, chunk);
            }
        }
        Ok(out)
    }
}

/// Whether h2 would accept `value` as `:authority`.
pub fn valid_authority(value: &[u8]) -> bool {
    http::uri::Authority::try_from(value).is_ok()
}

fn push_frame(out: &mut Vec<u8>, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
    let length = payload.len() as u32;
    out.extend_from_slice(&length.to_be_bytes()[1..]);
    out.push(kind);
    out.push(flags);
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(payload);
}

/// RFC 7541 §6.2.2 with a literal name (first byte 0x00), both strings without Huffman coding.
fn literal_without_indexing(name: &[u8], value: &[u8], out: &mut Vec<u8>) -> std::io::Result<()> {
    out.push(0);
    for string in [name, value] {
        let start = out.len();
        loona_hpack::encoder::encode_integer_into(string.len(), 7, 0, out)?;
        out[start] &= 0x7f; // H = 0
        out.extend_from_slice(string);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers_frame(stream: u32, flags: u8, block: &[u8]) -> ([u8; 9], Vec<u8>) {
        let mut out = Vec::new();
        push_frame(&mut out, FRAME_HEADERS, flags, stream, block);
        (out[..9].try_into().unwrap(), out[9..].to_vec())
    }

    fn decode_frames(mut bytes: &[u8]) -> Vec<(u8, u8, Vec<u8>)> {
        let mut frames = Vec::new();
        while !bytes.is_empty() {
            let length = usize::from(bytes[0]) << 16 | usize::from(bytes[1]) << 8 | usize::from(bytes[2]);
            frames.push((bytes[3], bytes[4], bytes[9..9 + length].to_vec()));
            bytes = &bytes[9 + length..];
        }
        frames
    }

    #[test]
    fn authorities_h2_rejects_are_replaced_and_the_dynamic_table_is_followed() {
        assert!(!valid_authority(b"tmp%2Fx.sock"));
        assert!(valid_authority(b"localhost"));
        let mut encoder = loona_hpack::Encoder::new();
        let mut server = loona_hpack::Decoder::new();
        let mut rewriter = Rewriter::default();
        // The client's encoder indexes the headers: the second block refers to the first one's entries.
        for (stream, path) in [(1u32, &b"/a.B/C"[..]), (3, b"/a.B/D")] {
            let headers: Vec<(&[u8], &[u8])> = vec![
                (b":method", b"POST"),
                (b":scheme", b"http"),
                (b":path", path),
                (b":authority", b"tmp%2Fx.sock"),
                (b"te", b"trailers"),
            ];
            let block = encoder.encode(headers.iter().map(|(n, v)| (*n, *v)));
            let (head, payload) = headers_frame(stream, FLAG_END_HEADERS | FLAG_END_STREAM, &block);
            let out = rewriter.frame(&head, payload).unwrap().unwrap();
            let frames = decode_frames(&out);
            assert_eq!(frames.len(), 1);
            assert_eq!(frames[0].1, FLAG_END_HEADERS | FLAG_END_STREAM);
            let decoded = server.decode(&frames[0].2).unwrap();
            assert_eq!(decoded[2], (b":path".to_vec(), path.to_vec()));
            assert_eq!(decoded[3], (b":authority".to_vec(), b"localhost".to_vec()));
        }
    }

    #[test]
    fn padding_priority_and_continuations_are_handled() {
        let mut encoder = loona_hpack::Encoder::new();
        let big = vec![b'x'; 40_000];
        let block = encoder.encode([(&b":authority"[..], &b"good.example"[..]), (b"x-big", &big[..])]);
        // PADDED + PRIORITY, split into HEADERS + CONTINUATION.
        let mut first = vec![3u8, 0, 0, 0, 0, 16];
        first.extend_from_slice(&block[..100]);
        first.extend_from_slice(&[0, 0, 0]);
        let mut rewriter = Rewriter::default();
        let (head, _) = headers_frame(5, FLAG_PADDED | FLAG_PRIORITY, &first);
        assert!(rewriter.frame(&head, first).unwrap().is_none());
        let mut cont = Vec::new();
        push_frame(&mut cont, FRAME_CONTINUATION, FLAG_END_HEADERS, 5, &block[100..]);
        let out = rewriter.frame(&cont[..9].try_into().unwrap(), cont[9..].to_vec()).unwrap().unwrap();
        let frames = decode_frames(&out);
        assert_eq!(frames.len(), 3);
        assert!(frames.iter().all(|f| f.2.len() <= MAX_FRAME));
        assert_eq!(frames[0].0, FRAME_HEADERS);
        assert_eq!(frames[2], (FRAME_CONTINUATION, FLAG_END_HEADERS, frames[2].2.clone()));
        let joined: Vec<u8> = frames.iter().flat_map(|f| f.2.clone()).collect();
        let decoded = loona_hpack::Decoder::new().decode(&joined).unwrap();
        assert_eq!(decoded[0].1, b"good.example");
        assert_eq!(decoded[1].1, big);
        // Another frame in the middle of a block is refused.
        let (head, payload) = headers_frame(7, 0, &block[..10]);
        assert!(rewriter.frame(&head, payload).unwrap().is_none());
        assert!(rewriter.frame(&[0, 0, 0, 0x8, 0, 0, 0, 0, 0], vec![]).is_err());
    }
}
