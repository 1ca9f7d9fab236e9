//! KMIP's binary encoding, TTLV (tag, type, length, value; KMIP 1.x §9.1), with hard bounds on what it decodes.
//!
//! Every item is a 3-byte tag, a 1-byte type and a 4-byte big-endian length, then the value padded to a multiple
//! of 8 bytes. A structure's value is a sequence of items. The decoder reads from a byte slice that the caller has
//! already bounded ([`MAX_MESSAGE`]), refuses nesting deeper than [`MAX_DEPTH`] and more than [`MAX_ITEMS`] items
//! in one message, and checks every length against what is left before it allocates, so a hostile server's
//! answer costs at most the bytes it actually sent.
//!
//! Byte strings (key material, secret data, ciphertext) are wiped when the item is dropped.

use zeroize::Zeroizing;

/// The largest message read or written: 1 MiB (a KMIP answer for this client holds a few keys or ids).
pub const MAX_MESSAGE: usize = 1 << 20;
/// The deepest nesting of structures accepted (KMIP messages nest about 6 deep).
pub const MAX_DEPTH: usize = 16;
/// The most items one message may hold.
pub const MAX_ITEMS: usize = 16_384;

/// A TTLV type byte.
mod kind {
    pub const STRUCTURE: u8 = 0x01;
    pub const INTEGER: u8 = 0x02;
    pub const LONG_INTEGER: u8 = 0x03;
    pub const BIG_INTEGER: u8 = 0x04;
    pub const ENUMERATION: u8 = 0x05;
    pub const BOOLEAN: u8 = 0x06;
    pub const TEXT_STRING: u8 = 0x07;
    pub const BYTE_STRING: u8 = 0x08;
    pub const DATE_TIME: u8 = 0x09;
    pub const INTERVAL: u8 = 0x0A;
}

/// One decoded or to-be-encoded item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// The 3-byte tag (e.g. `0x42007B`, Response Message).
    pub tag: u32,
    /// The typed value.
    pub value: Value,
}

/// A TTLV value.
#[derive(Clone, PartialEq, Eq)]
pub enum Value {
    /// A sequence of items.
    Structure(Vec<Item>),
    /// A signed 32-bit integer (also bit masks).
    Integer(i32),
    /// A signed 64-bit integer.
    LongInteger(i64),
    /// A big-endian two's-complement integer, as sent.
    BigInteger(Vec<u8>),
    /// An enumeration value.
    Enumeration(u32),
    /// A boolean.
    Boolean(bool),
    /// UTF-8 text.
    TextString(String),
    /// Bytes; wiped on drop (key material, secret data).
    ByteString(Zeroizing<Vec<u8>>),
    /// Seconds since the epoch.
    DateTime(i64),
    /// Seconds.
    Interval(u32),
}

impl std::fmt::Debug for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Structure(items) => f.debug_list().entries(items).finish(),
            Self::Integer(v) => write!(f, "Integer({v})"),
            Self::LongInteger(v) => write!(f, "LongInteger({v})"),
            Self::BigInteger(v) => write!(f, "BigInteger({} bytes)", v.len()),
            Self::Enumeration(v) => write!(f, "Enumeration({v:#x})"),
            Self::Boolean(v) => write!(f, "Boolean({v})"),
            Self::TextString(v) => write!(f, "TextString({} bytes)", v.len()),
            Self::ByteString(v) => write!(f, "ByteString({} bytes)", v.len()),
            Self::DateTime(v) => write!(f, "DateTime({v})"),
            Self::Interval(v) => write!(f, "Interval({v})"),
        }
    }
}

/// Why bytes are not a TTLV message this decoder accepts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The bytes end inside an item.
    #[error("truncated TTLV: an item at offset {offset} runs past the end")]
    Truncated {
        /// Where the item starts.
        offset: usize,
    },
    /// A length that does not fit its type or its enclosing structure.
    #[error("TTLV item at offset {offset}: length {length} is invalid for type {kind:#04x}")]
    BadLength {
        /// Where the item starts.
        offset: usize,
        /// The type byte.
        kind: u8,
        /// The length field.
        length: u32,
    },
    /// A type byte KMIP does not define.
    #[error("TTLV item at offset {offset}: unknown type {kind:#04x}")]
    UnknownType {
        /// Where the item starts.
        offset: usize,
        /// The type byte.
        kind: u8,
    },
    /// A tag outside KMIP's `0x42xxxx` and extension `0x54xxxx` ranges.
    #[error("TTLV item at offset {offset}: tag {tag:#08x} is not a KMIP tag")]
    BadTag {
        /// Where the item starts.
        offset: usize,
        /// The tag.
        tag: u32,
    },
    /// Nested deeper than [`MAX_DEPTH`].
    #[error("TTLV nested deeper than {MAX_DEPTH} structures")]
    TooDeep,
    /// More than [`MAX_ITEMS`] items.
    #[error("TTLV message holds more than {MAX_ITEMS} items")]
    TooManyItems,
    /// A message longer than [`MAX_MESSAGE`].
    #[error("TTLV message of {length} bytes is over the {MAX_MESSAGE}-byte bound")]
    TooLong {
        /// The announced length.
        length: usize,
    },
    /// A text string that is not UTF-8, a boolean that is neither 0 nor 1, non-zero padding.
    #[error("TTLV item at offset {offset}: {problem}")]
    BadValue {
        /// Where the item starts.
        offset: usize,
        /// What is wrong.
        problem: &'static str,
    },
    /// Bytes after the one top-level item.
    #[error("{extra} bytes after the TTLV message")]
    Trailing {
        /// How many.
        extra: usize,
    },
}

/// A malformed answer is the server's failure, not the caller's input.
impl crate::exit::Classify for DecodeError {
    fn status(&self) -> crate::exit::ExitStatus {
        crate::exit::ExitStatus::Failure
    }
}

/// The size of an item's header.
pub const HEADER: usize = 8;

/// The total length (header + padded value) of the message whose first 8 bytes are `header`, checked against
/// [`MAX_MESSAGE`] before anything else is read. Only a structure may be a message.
pub fn message_length(header: &[u8; HEADER]) -> Result<usize, DecodeError> {
    let tag = u32::from_be_bytes([0, header[0], header[1], header[2]]);
    if !valid_tag(tag) {
        return Err(DecodeError::BadTag { offset: 0, tag });
    }
    if header[3] != kind::STRUCTURE {
        return Err(DecodeError::BadValue { offset: 0, problem: "a KMIP message is a structure" });
    }
    let length = u32::from_be_bytes([header[4], header[5], header[6], header[7]]) as usize;
    let total = HEADER.saturating_add(padded(length));
    if total > MAX_MESSAGE {
        return Err(DecodeError::TooLong { length: total });
    }
    Ok(total)
}

/// Decodes exactly one item filling `bytes`.
pub fn decode(bytes: &[u8]) -> Result<Item, DecodeError> {
    if bytes.len() > MAX_MESSAGE {
        return Err(DecodeError::TooLong { length: bytes.len() });
    }
    let mut decoder = Decoder { bytes, items: 0 };
    let (item, end) = decoder.item(0, 0)?;
    if end != bytes.len() {
        return Err(DecodeError::Trailing { extra: bytes.len() - end });
    }
    Ok(item)
}

fn valid_tag(tag: u32) -> bool {
    matches!(tag >> 16, 0x42 | 0x54)
}

fn padded(length: usize) -> usize {
    length.div_ceil(8).saturating_mul(8)
}

struct Decoder<'a> {
    bytes: &'a [u8],
    items: usize,
}

impl Decoder<'_> {
    /// The item at `offset`, and the offset after it (padding included).
    fn item(&mut self, offset: usize, depth: usize) -> Result<(Item, usize), DecodeError> {
        self.items += 1;
        if self.items > MAX_ITEMS {
            return Err(DecodeError::TooManyItems);
        }
        let header = self.bytes.get(offset..offset + HEADER).ok_or(DecodeError::Truncated { offset })?;
        let tag = u32::from_be_bytes([0, header[0], header[1], header[2]]);
        if !valid_tag(tag) {
            return Err(DecodeError::BadTag { offset, tag });
        }
        let kind = header[3];
        let length_field = u32::from_be_bytes([header[4], header[5], header[6], header[7]]);
        let length = length_field as usize;
        let start = offset + HEADER;
        let bad_length = || DecodeError::BadLength { offset, kind, length: length_field };
        let end = start.checked_add(padded(length)).ok_or_else(bad_length)?;
        if end > self.bytes.len() {
            return Err(DecodeError::Truncated { offset });
        }
        let body = &self.bytes[start..start + length];
        if self.bytes[start + length..end].iter().any(|&b| b != 0) {
            return Err(DecodeError::BadValue { offset, problem: "padding is not zero" });
        }
        let fixed = |want: usize| if length == want { Ok(()) } else { Err(bad_length()) };
        let value = match kind {
            kind::STRUCTURE => {
                if depth + 1 >= MAX_DEPTH {
                    return Err(DecodeError::TooDeep);
                }
                let mut items = Vec::new();
                let mut at = start;
                let stop = start + length;
                while at < stop {
                    let (child, next) = self.item(at, depth + 1)?;
                    if next > stop {
                        return Err(bad_length());
                    }
                    items.push(child);
                    at = next;
                }
                Value::Structure(items)
            }
            kind::INTEGER => {
                fixed(4)?;
                Value::Integer(i32::from_be_bytes(body.try_into().map_err(|_| bad_length())?))
            }
            kind::ENUMERATION => {
                fixed(4)?;
                Value::Enumeration(u32::from_be_bytes(body.try_into().map_err(|_| bad_length())?))
            }
            kind::INTERVAL => {
                fixed(4)?;
                Value::Interval(u32::from_be_bytes(body.try_into().map_err(|_| bad_length())?))
            }
            kind::LONG_INTEGER | kind::DATE_TIME | kind::BOOLEAN => {
                fixed(8)?;
                let v = i64::from_be_bytes(body.try_into().map_err(|_| bad_length())?);
                match kind {
                    kind::LONG_INTEGER => Value::LongInteger(v),
                    kind::DATE_TIME => Value::DateTime(v),
                    _ => match v {
                        0 => Value::Boolean(false),
                        1 => Value::Boolean(true),
                        _ => return Err(DecodeError::BadValue { offset, problem: "a boolean is 0 or 1" }),
                    },
                }
            }
            kind::BIG_INTEGER => {
                if !length.is_multiple_of(8) {
                    return Err(bad_length());
                }
                Value::BigInteger(body.to_vec())
            }
            kind::TEXT_STRING => Value::TextString(
                std::str::from_utf8(body)
                    .map_err(|_| DecodeError::BadValue { offset, problem: "a text string is not UTF-8" })?
                    .to_owned(),
            ),
            kind::BYTE_STRING => Value::ByteString(Zeroizing::new(body.to_vec())),
            other => return Err(DecodeError::UnknownType { offset, kind: other }),
        };
        Ok((Item { tag, value }, end))
    }
}

/// Appends `item`'s encoding to `out` (into a buffer the caller wipes when it held secrets).
pub fn encode(item: &Item, out: &mut Vec<u8>) {
    let tag = item.tag.to_be_bytes();
    out.extend_from_slice(&tag[1..]);
    let (kind, body): (u8, std::borrow::Cow<'_, [u8]>) = match &item.value {
        Value::Structure(items) => {
            let header_at = out.len();
            out.extend_from_slice(&[kind::STRUCTURE, 0, 0, 0, 0]);
            let start = out.len();
            for child in items {
                encode(child, out);
            }
            let length = u32::try_from(out.len() - start).unwrap_or(u32::MAX);
            out[header_at + 1..header_at + 5].copy_from_slice(&length.to_be_bytes());
            return;
        }
        Value::Integer(v) => (kind::INTEGER, v.to_be_bytes().to_vec().into()),
        Value::LongInteger(v) => (kind::LONG_INTEGER, v.to_be_bytes().to_vec().into()),
        Value::BigInteger(v) => (kind::BIG_INTEGER, v.as_slice().into()),
        Value::Enumeration(v) => (kind::ENUMERATION, v.to_be_bytes().to_vec().into()),
        Value::Boolean(v) => (kind::BOOLEAN, u64::from(*v).to_be_bytes().to_vec().into()),
        Value::TextString(v) => (kind::TEXT_STRING, v.as_bytes().into()),
        Value::ByteString(v) => (kind::BYTE_STRING, v.as_slice().into()),
        Value::DateTime(v) => (kind::DATE_TIME, v.to_be_bytes().to_vec().into()),
        Value::Interval(v) => (kind::INTERVAL, v.to_be_bytes().to_vec().into()),
    };
    out.push(kind);
    out.extend_from_slice(&u32::try_from(body.len()).unwrap_or(u32::MAX).to_be_bytes());
    out.extend_from_slice(&body);
    out.resize(out.len() + (padded(body.len()) - body.len()), 0);
}

impl Item {
    /// A structure.
    pub fn structure(tag: u32, items: Vec<Item>) -> Self {
        Self { tag, value: Value::Structure(items) }
    }
    /// An enumeration.
    pub fn enumeration(tag: u32, value: u32) -> Self {
        Self { tag, value: Value::Enumeration(value) }
    }
    /// An integer.
    pub fn integer(tag: u32, value: i32) -> Self {
        Self { tag, value: Value::Integer(value) }
    }
    /// A text string.
    pub fn text(tag: u32, value: &str) -> Self {
        Self { tag, value: Value::TextString(value.to_owned()) }
    }
    /// A byte string.
    pub fn bytes(tag: u32, value: &[u8]) -> Self {
        Self { tag, value: Value::ByteString(Zeroizing::new(value.to_vec())) }
    }

    /// The children of a structure (none for other types).
    pub fn children(&self) -> &[Item] {
        match &self.value {
            Value::Structure(items) => items,
            _ => &[],
        }
    }
    /// The first child with `tag`.
    pub fn child(&self, tag: u32) -> Option<&Item> {
        self.children().iter().find(|i| i.tag == tag)
    }
    /// Every child with `tag`.
    pub fn all(&self, tag: u32) -> impl Iterator<Item = &Item> {
        self.children().iter().filter(move |i| i.tag == tag)
    }
    /// The enumeration value, if it is one.
    pub fn as_enum(&self) -> Option<u32> {
        match self.value {
            Value::Enumeration(v) => Some(v),
            _ => None,
        }
    }
    /// The integer value, if it is one.
    pub fn as_int(&self) -> Option<i32> {
        match self.value {
            Value::Integer(v) => Some(v),
            _ => None,
        }
    }
    /// The text, if it is a text string.
    pub fn as_text(&self) -> Option<&str> {
        match &self.value {
            Value::TextString(v) => Some(v),
            _ => None,
        }
    }
    /// The bytes, if it is a byte string.
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match &self.value {
            Value::ByteString(v) => Some(v),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(tag: u32, kind: u8, length: u32) -> Vec<u8> {
        let mut out = tag.to_be_bytes()[1..].to_vec();
        out.push(kind);
        out.extend_from_slice(&length.to_be_bytes());
        out
    }

    #[test]
    fn round_trips_every_type() {
        let message = Item::structure(
            0x42007B,
            vec![
                Item::integer(0x42006A, 1),
                Item { tag: 0x420001, value: Value::LongInteger(-5) },
                Item { tag: 0x420002, value: Value::BigInteger(vec![0; 8]) },
                Item::enumeration(0x42005C, 10),
                Item { tag: 0x420003, value: Value::Boolean(true) },
                Item::text(0x420055, "volumes/pvc-1/current"),
                Item::bytes(0x420043, b"abc"),
                Item { tag: 0x420092, value: Value::DateTime(1_700_000_000) },
                Item { tag: 0x420004, value: Value::Interval(7) },
                Item::structure(0x420077, vec![]),
            ],
        );
        let mut bytes = Vec::new();
        encode(&message, &mut bytes);
        assert_eq!(bytes.len() % 8, 0);
        assert_eq!(message_length(bytes[..8].try_into().unwrap()).unwrap(), bytes.len());
        assert_eq!(decode(&bytes).unwrap(), message);
    }

    #[test]
    fn matches_the_kmip_specs_encoding_examples() {
        // KMIP 1.x §9.1.2: an Integer 8 tagged 0x420020 and a Text String "Hello World".
        let mut out = Vec::new();
        encode(&Item::integer(0x420020, 8), &mut out);
        assert_eq!(hex::encode(&out), "42002002000000040000000800000000");
        out.clear();
        encode(&Item::text(0x420020, "Hello World"), &mut out);
        assert_eq!(hex::encode(&out), "420020070000000b48656c6c6f20576f726c640000000000");
    }

    #[test]
    fn a_huge_announced_length_is_refused_from_the_header_alone() {
        let head: [u8; 8] = header(0x42007B, 1, 100 << 20).try_into().unwrap();
        assert!(matches!(message_length(&head), Err(DecodeError::TooLong { .. })));
        let head: [u8; 8] = header(0x42007B, 1, u32::MAX).try_into().unwrap();
        assert!(matches!(message_length(&head), Err(DecodeError::TooLong { .. })));
        let head: [u8; 8] = header(0x42007B, 2, 8).try_into().unwrap();
        assert!(message_length(&head).is_err());
    }

    #[test]
    fn deep_nesting_is_refused() {
        let mut item = Item::integer(0x420020, 1);
        for _ in 0..MAX_DEPTH + 2 {
            item = Item::structure(0x420020, vec![item]);
        }
        let mut bytes = Vec::new();
        encode(&item, &mut bytes);
        assert_eq!(decode(&bytes), Err(DecodeError::TooDeep));
    }

    #[test]
    fn truncation_lengths_and_junk_are_refused() {
        let mut bytes = Vec::new();
        encode(&Item::structure(0x42007B, vec![Item::text(0x420055, "name")]), &mut bytes);
        for cut in 0..bytes.len() {
            assert!(decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        // a child longer than its structure
        let mut lying = header(0x42007B, 1, 16);
        lying.extend(header(0x420055, 7, 64));
        lying.extend([0u8; 64]);
        assert!(decode(&lying).is_err());
        // bad boolean, unknown type, bad tag, non-zero padding, wrong integer length
        let mut boolean = header(0x420001, 6, 8);
        boolean.extend(2u64.to_be_bytes());
        assert!(decode(&boolean).is_err());
        let mut unknown = header(0x420001, 0x0B, 0);
        unknown.clear();
        unknown.extend(header(0x420001, 0x0C, 0));
        assert!(decode(&unknown).is_err());
        assert!(decode(&header(0x110001, 1, 0)).is_err());
        let mut padding = header(0x420001, 8, 1);
        padding.extend([1, 0, 0, 0, 0, 0, 0, 9]);
        assert!(decode(&padding).is_err());
        let mut short = header(0x420001, 2, 2);
        short.extend([0u8; 8]);
        assert!(decode(&short).is_err());
    }

    #[test]
    fn item_count_is_bounded() {
        let items = vec![Item::integer(0x420020, 0); MAX_ITEMS + 1];
        let mut bytes = Vec::new();
        encode(&Item::structure(0x42007B, items), &mut bytes);
        assert!(bytes.len() <= MAX_MESSAGE);
        assert_eq!(decode(&bytes), Err(DecodeError::TooManyItems));
    }
}
