//! Repairs what Go's `x/crypto/openpgp` (skopeo and podman built with ocicrypt < 1.3.2) writes non-canonically.
//!
//! Go encodes the RSA ciphertext in a PKESK as a multiprecision integer whose bit count is always 8 × its byte
//! length, even when the leading byte is below 0x80 (and keeps a leading zero byte). RFC 4880 §3.2 requires the
//! exact bit count; gpg tolerates the difference, sequoia-openpgp rejects the message ("Malformed MPI"). The PKESK
//! packets precede the encrypted data and are not covered by any integrity check, so rewriting their MPIs into
//! canonical form changes nothing that is authenticated. No crate does this; it is a few lines of packet framing.

use std::borrow::Cow;

const TAG_PKESK: u8 = 1;
const RSA_ALGORITHMS: [u8; 2] = [1, 2]; // RSA (Encrypt or Sign), RSA Encrypt-Only

/// Returns `message` with the RSA MPIs of its leading PKESK packets in canonical form (borrowed when nothing
/// needed repair, or when the framing is not what this repair understands: sequoia then reports the problem).
pub(super) fn canonical_pkesk_mpis(message: &[u8]) -> Cow<'_, [u8]> {
    let mut out = Vec::with_capacity(message.len());
    let mut rest = message;
    let mut changed = false;
    while let Some((tag, header_len, body_len)) = packet_header(rest) {
        if tag != TAG_PKESK || rest.len() < header_len + body_len {
            break;
        }
        let body = &rest[header_len..header_len + body_len];
        match canonical_pkesk_body(body) {
            Some(fixed) if fixed != body => {
                write_new_format_packet(&mut out, TAG_PKESK, &fixed);
                changed = true;
            }
            _ => out.extend_from_slice(&rest[..header_len + body_len]),
        }
        rest = &rest[header_len + body_len..];
    }
    if !changed {
        return Cow::Borrowed(message);
    }
    out.extend_from_slice(rest);
    Cow::Owned(out)
}

/// (tag, header length, body length) of a packet with a definite length (RFC 4880 §4.2).
fn packet_header(bytes: &[u8]) -> Option<(u8, usize, usize)> {
    let ctb = *bytes.first()?;
    if ctb & 0x80 == 0 {
        return None;
    }
    if ctb & 0x40 != 0 {
        let tag = ctb & 0x3f;
        let first = *bytes.get(1)? as usize;
        return match first {
            0..=191 => Some((tag, 2, first)),
            192..=223 => Some((tag, 3, ((first - 192) << 8) + *bytes.get(2)? as usize + 192)),
            255 => Some((tag, 6, u32::from_be_bytes(bytes.get(2..6)?.try_into().ok()?) as usize)),
            _ => None, // partial body lengths: never used for PKESK
        };
    }
    let tag = (ctb >> 2) & 0x0f;
    match ctb & 0x03 {
        0 => Some((tag, 2, *bytes.get(1)? as usize)),
        1 => Some((tag, 3, u16::from_be_bytes(bytes.get(1..3)?.try_into().ok()?) as usize)),
        2 => Some((tag, 5, u32::from_be_bytes(bytes.get(1..5)?.try_into().ok()?) as usize)),
        _ => None,
    }
}

/// A version-3 PKESK body for RSA with its MPI re-encoded canonically; `None` for anything else.
fn canonical_pkesk_body(body: &[u8]) -> Option<Vec<u8>> {
    // version (1) = 3, key ID (8), algorithm (1), then the MPI: bit count (2) and ceil(bits / 8) bytes.
    if body.len() < 12 || body[0] != 3 || !RSA_ALGORITHMS.contains(&body[9]) {
        return None;
    }
    let declared_bits = u16::from_be_bytes([body[10], body[11]]) as usize;
    let value = body.get(12..)?;
    if value.len() != declared_bits.div_ceil(8) {
        return None;
    }
    let value = &value[value.iter().position(|&b| b != 0).unwrap_or(value.len())..];
    let bits = match value.first() {
        Some(&lead) => (value.len() - 1) * 8 + (8 - lead.leading_zeros() as usize),
        None => 0,
    };
    let mut fixed = body[..10].to_vec();
    fixed.extend_from_slice(&u16::try_from(bits).ok()?.to_be_bytes());
    fixed.extend_from_slice(value);
    Some(fixed)
}

fn write_new_format_packet(out: &mut Vec<u8>, tag: u8, body: &[u8]) {
    out.push(0xc0 | tag);
    match body.len() {
        len @ 0..=191 => out.push(len as u8),
        len @ 192..=8383 => {
            let len = len - 192;
            out.extend_from_slice(&[((len >> 8) as u8) + 192, len as u8]);
        }
        len => {
            out.push(255);
            out.extend_from_slice(&(len as u32).to_be_bytes());
        }
    }
    out.extend_from_slice(body);
}

/// The packets of a message in Go's shape: PKESKs, then one SEIPD v1 body (its chunks joined). Partial body
/// chunks of any size are accepted here; sequoia insists on RFC 4880's 512-byte minimum for the first chunk, and
/// Go's writer starts with 128 bytes.
pub(super) struct GoMessage {
    /// Each PKESK packet, header included, ready for sequoia to parse.
    pub pkesks: Vec<Vec<u8>>,
    /// The SEIPD packet's body.
    pub seipd: Vec<u8>,
}

const TAG_SEIPD: u8 = 18;
const TAG_LITERAL: u8 = 11;
const TAG_MDC: u8 = 19;

/// Splits a message into PKESKs and a SEIPD body; `None` when it has another shape.
pub(super) fn split_go_message(message: &[u8]) -> Option<GoMessage> {
    let mut rest = message;
    let mut pkesks = Vec::new();
    loop {
        let (tag, body, consumed) = lenient_packet(rest)?;
        match tag {
            TAG_PKESK => pkesks.push(rest[..consumed].to_vec()),
            TAG_SEIPD if consumed == rest.len() && !pkesks.is_empty() => {
                return Some(GoMessage { pkesks, seipd: body });
            }
            _ => return None,
        }
        rest = &rest[consumed..];
    }
}

/// (tag, body, bytes consumed) of one new- or old-format packet, joining partial body chunks.
fn lenient_packet(bytes: &[u8]) -> Option<(u8, Vec<u8>, usize)> {
    let ctb = *bytes.first()?;
    if ctb & 0xc0 == 0x80 {
        let (tag, header_len, body_len) = packet_header(bytes)?;
        let body = bytes.get(header_len..header_len.checked_add(body_len)?)?;
        return Some((tag, body.to_vec(), header_len + body_len));
    }
    if ctb & 0xc0 != 0xc0 {
        return None;
    }
    let tag = ctb & 0x3f;
    let mut at = 1;
    let mut body = Vec::new();
    loop {
        let first = *bytes.get(at)? as usize;
        let (len_bytes, chunk, last) = match first {
            0..=191 => (1, first, true),
            192..=223 => (2, ((first - 192) << 8) + *bytes.get(at + 1)? as usize + 192, true),
            224..=254 => (1, 1usize << (first & 0x1f), false),
            _ => (5, u32::from_be_bytes(bytes.get(at + 1..at + 5)?.try_into().ok()?) as usize, true),
        };
        at += len_bytes;
        body.extend_from_slice(bytes.get(at..at.checked_add(chunk)?)?);
        at += chunk;
        if last {
            return Some((tag, body, at));
        }
    }
}

/// Decrypts a SEIPD v1 body (RFC 4880 §5.13: OpenPGP CFB with a zero IV over random prefix ‖ packets ‖ MDC),
/// checks the MDC and returns the literal data; `None` when the session key does not open it.
///
/// "Wrong key" and "modified contents" are one answer, and the prefix's quick check decides nothing: a caller
/// that could tell them apart would be the decryption oracle of RFC 4880 §14 (an attacker who can submit altered
/// wrapped keys, e.g. to an admission check running `image authorize`, learns plaintext bits from which answer
/// comes back). The MDC is compared in constant time for the same reason. Hand-written because sequoia, which does
/// this for messages it accepts, refuses Go's framing before decryption; only the framing is lenient here.
pub(super) fn decrypt_seipd_v1(
    algorithm: Option<sequoia_openpgp::types::SymmetricAlgorithm>,
    session_key: &[u8],
    body: &[u8],
) -> Option<crate::crypto::SecretBytes> {
    use aes::cipher::{AsyncStreamCipher, KeyIvInit};
    use sequoia_openpgp::types::SymmetricAlgorithm as Algo;
    use sha1::{Digest, Sha1};
    use subtle::ConstantTimeEq;
    const BLOCK: usize = 16;
    const MDC_LEN: usize = 22;
    let (&1, ciphertext) = body.split_first()? else { return None };
    if ciphertext.len() < BLOCK + 2 + MDC_LEN {
        return None;
    }
    let mut plain = crate::crypto::SecretBytes::new(ciphertext.to_vec());
    let iv = [0u8; BLOCK];
    match (algorithm, session_key.len()) {
        (Some(Algo::AES128), 16) => {
            cfb_mode::Decryptor::<aes::Aes128>::new(session_key.into(), &iv.into()).decrypt(&mut plain)
        }
        (Some(Algo::AES192), 24) => {
            cfb_mode::Decryptor::<aes::Aes192>::new(session_key.into(), &iv.into()).decrypt(&mut plain)
        }
        (Some(Algo::AES256), 32) => {
            cfb_mode::Decryptor::<aes::Aes256>::new(session_key.into(), &iv.into()).decrypt(&mut plain)
        }
        _ => return None,
    }
    let (covered, mdc_hash) = plain.split_at(plain.len() - 20);
    let mdc_header_ok = covered[covered.len() - 2..].ct_eq(&[0xc0 | TAG_MDC, 0x14]);
    let mdc_ok = Sha1::digest(covered).as_slice().ct_eq(mdc_hash);
    if !bool::from(mdc_header_ok & mdc_ok) {
        return None;
    }
    // Authenticated from here on: what follows checks the producer's packet structure, not secrets.
    let packets = &covered[BLOCK + 2..covered.len() - 2];
    let (tag, literal, consumed) = lenient_packet(packets)?;
    let literal = crate::crypto::SecretBytes::new(literal);
    if tag != TAG_LITERAL || consumed != packets.len() {
        return None;
    }
    // Literal data: format (1), file name length (1), file name, date (4), data.
    let name_len = *literal.get(1)? as usize;
    let data = literal.get(2 + name_len + 4..)?;
    Some(crate::crypto::SecretBytes::new(data.to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkesk(bits: u16, value: &[u8]) -> Vec<u8> {
        let mut body = vec![3, 1, 2, 3, 4, 5, 6, 7, 8, 1];
        body.extend_from_slice(&bits.to_be_bytes());
        body.extend_from_slice(value);
        let mut packet = Vec::new();
        write_new_format_packet(&mut packet, TAG_PKESK, &body);
        packet
    }

    #[test]
    fn go_style_bit_counts_are_made_exact() {
        let trailing = [0xd2, 0x01, 0xaa]; // whatever follows is kept as it is
        let go = [pkesk(16, &[0x43, 0x99]), trailing.to_vec()].concat();
        assert_eq!(canonical_pkesk_mpis(&go).as_ref(), [pkesk(15, &[0x43, 0x99]), trailing.to_vec()].concat());
        let leading_zero = pkesk(24, &[0x00, 0x80, 0x01]);
        assert_eq!(canonical_pkesk_mpis(&leading_zero).as_ref(), pkesk(16, &[0x80, 0x01]));
    }

    #[test]
    fn go_framing_with_short_partial_chunks_is_joined() {
        let mut seipd = vec![0xc0 | TAG_SEIPD, 0xe0 | 7];
        seipd.extend([1u8; 128]);
        seipd.push(5);
        seipd.extend([2u8; 5]);
        let (tag, body, consumed) = lenient_packet(&seipd).unwrap();
        assert_eq!((tag, body.len(), consumed), (TAG_SEIPD, 133, seipd.len()));
        let message = [pkesk(15, &[0x43, 0x99]), seipd.clone()].concat();
        let split = split_go_message(&message).unwrap();
        assert_eq!((split.pkesks.len(), split.seipd.len()), (1, 133));
        assert!(split_go_message(&seipd).is_none(), "a SEIPD without PKESK is not ocicrypt's shape");
        assert!(split_go_message(&seipd[..100]).is_none(), "truncated");
    }

    #[test]
    fn canonical_and_foreign_input_is_untouched() {
        let canonical = pkesk(16, &[0x80, 0x01]);
        assert!(matches!(canonical_pkesk_mpis(&canonical), Cow::Borrowed(_)));
        for junk in [&b""[..], b"\x00\x01", b"\xc1\xff", b"\xc1\x05\x03"] {
            assert!(matches!(canonical_pkesk_mpis(junk), Cow::Borrowed(_)));
        }
    }
}
