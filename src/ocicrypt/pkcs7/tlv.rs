//! The little DER that PKCS#7 needs below the `der` crate: reading and writing one tag-length-value with any
//! one-byte tag.
//!
//! `der` cannot represent Go's AES-GCM parameters at all — a *primitive* element with universal tag 16 (byte
//! `0x10`), which `der::Tag` refuses as an unknown tag — and it cannot read the constructed `[0]` encryptedContent
//! that go.mozilla.org/pkcs7 writes (a BER form). So EnvelopedData is walked with these functions, while the parts
//! that are plain DER (ContentInfo, RecipientInfo, OIDs, integers) still go through `cms` and `der`.

use super::malformed;
use crate::ocicrypt::Error;

/// Universal INTEGER.
pub(super) const INTEGER: u8 = 0x02;
/// Universal OCTET STRING.
pub(super) const OCTET_STRING: u8 = 0x04;
/// Universal OBJECT IDENTIFIER.
pub(super) const OID: u8 = 0x06;
/// Universal SEQUENCE in its proper, constructed form.
pub(super) const SEQUENCE: u8 = 0x30;
/// Universal SET (OF), constructed.
pub(super) const SET: u8 = 0x31;

/// One element: its tag byte, its content octets and its complete encoding.
#[derive(Clone, Copy, Debug)]
pub(super) struct Tlv<'a> {
    /// The identifier octet (class, constructed bit and tag number).
    pub tag: u8,
    /// The content octets.
    pub content: &'a [u8],
    /// Identifier, length and content octets together.
    pub encoded: &'a [u8],
}

/// Reads the next element off the front of `input`.
///
/// Only definite lengths are accepted: the producers we read (Go's `encoding/asn1`, OpenSSL with `-outform DER`,
/// ourselves) all write them, and refusing indefinite lengths keeps every element's end known up front.
pub(super) fn read<'a>(input: &mut &'a [u8]) -> Result<Tlv<'a>, Error> {
    let all = *input;
    let (&tag, rest) = all.split_first().ok_or_else(|| malformed("truncated: an element is missing"))?;
    if tag & 0x1f == 0x1f {
        return Err(malformed("multi-byte ASN.1 tags do not occur in PKCS#7 EnvelopedData"));
    }
    let (length, rest) = read_length(rest)?;
    if rest.len() < length {
        return Err(malformed("truncated: an element is longer than the data"));
    }
    let header = all.len() - rest.len();
    *input = &rest[length..];
    Ok(Tlv { tag, content: &rest[..length], encoded: &all[..header + length] })
}

/// Reads the next element and insists on its tag; `what` names it in the error.
pub(super) fn read_tagged<'a>(input: &mut &'a [u8], tag: u8, what: &str) -> Result<Tlv<'a>, Error> {
    let tlv = read(input)?;
    if tlv.tag != tag {
        return Err(malformed(format!("{what}: expected tag 0x{tag:02x}, found 0x{:02x}", tlv.tag)));
    }
    Ok(tlv)
}

/// The tag of the next element, if there is one.
pub(super) fn peek(input: &[u8]) -> Option<u8> {
    input.first().copied()
}

/// Fails unless `input` is used up; `what` names the element that should have ended.
pub(super) fn expect_end(input: &[u8], what: &str) -> Result<(), Error> {
    if input.is_empty() { Ok(()) } else { Err(malformed(format!("{what}: unexpected trailing data"))) }
}

fn read_length(input: &[u8]) -> Result<(usize, &[u8]), Error> {
    let (&first, rest) = input.split_first().ok_or_else(|| malformed("truncated: a length is missing"))?;
    match first {
        0..=0x7f => Ok((usize::from(first), rest)),
        0x80 => Err(malformed("indefinite length (BER) is not supported; give DER")),
        _ => {
            let count = usize::from(first & 0x7f);
            // Four length octets already allow 4 GiB, far beyond any input size we accept.
            if count > 4 || rest.len() < count {
                return Err(malformed("invalid length"));
            }
            let length = rest[..count].iter().fold(0usize, |acc, &byte| (acc << 8) | usize::from(byte));
            Ok((length, &rest[count..]))
        }
    }
}

/// Encodes one element with a definite, minimal length.
pub(super) fn write(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(content.len() + 6);
    out.push(tag);
    push_length(&mut out, content.len());
    out.extend_from_slice(content);
    out
}

/// Encodes one constructed element whose content is the concatenation of `parts`.
pub(super) fn write_all(tag: u8, parts: &[&[u8]]) -> Vec<u8> {
    write(tag, &parts.concat())
}

fn push_length(out: &mut Vec<u8>, length: usize) {
    if length < 0x80 {
        out.push(length as u8);
        return;
    }
    let bytes = length.to_be_bytes();
    let skip = bytes.iter().take_while(|&&byte| byte == 0).count();
    out.push(0x80 | (bytes.len() - skip) as u8);
    out.extend_from_slice(&bytes[skip..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_round_trip_at_the_form_boundaries() {
        for length in [0usize, 1, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000] {
            let content = vec![0xab; length];
            let encoded = write(OCTET_STRING, &content);
            let mut input = encoded.as_slice();
            let tlv = read(&mut input).unwrap();
            assert_eq!((tlv.tag, tlv.content.len(), tlv.encoded.len()), (OCTET_STRING, length, encoded.len()));
            assert!(input.is_empty());
        }
        assert_eq!(write(OCTET_STRING, &[0; 0x80])[..3], [0x04, 0x81, 0x80]);
        assert_eq!(write(OCTET_STRING, &[0; 0x100])[..4], [0x04, 0x82, 0x01, 0x00]);
    }

    #[test]
    fn refuses_what_it_cannot_bound() {
        for bad in
            [&[][..], &[0x04], &[0x04, 0x80, 0x00, 0x00], &[0x04, 0x02, 0x00], &[0x1f, 0x01, 0x00], &[0x04, 0x85]]
        {
            assert!(read(&mut &bad[..]).is_err(), "{bad:02x?}");
        }
    }
}
