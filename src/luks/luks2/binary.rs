//! The 4096-byte LUKS2 binary header (docs/formats.md): parse, checksum, serialize. Big-endian integers.

use super::super::{Error, Result};
use sha2::Digest as _;

/// Magic of the primary header.
pub const MAGIC_PRIMARY: [u8; 6] = *b"LUKS\xba\xbe";
/// Magic of the secondary header.
pub const MAGIC_SECONDARY: [u8; 6] = *b"SKUL\xba\xbe";
/// Size of the binary part.
pub const BINARY_SIZE: usize = 4096;
/// The allowed `hdr_size` values, which are also where a secondary header may start.
pub const HDR_SIZES: [u64; 9] = [0x4000, 0x8000, 0x10000, 0x20000, 0x40000, 0x80000, 0x100000, 0x200000, 0x400000];

const CSUM_OFFSET: usize = 448;
const CSUM_LEN: usize = 64;

/// The fields of a binary header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BinaryHeader {
    /// Whether this is the secondary copy (magic `SKUL`).
    pub secondary: bool,
    /// Binary header + JSON area.
    pub hdr_size: u64,
    /// Increases on every metadata write.
    pub seqid: u64,
    /// Label (≤ 47 bytes).
    pub label: String,
    /// Checksum hash name (`sha256`).
    pub checksum_alg: String,
    /// 64-byte salt of this copy.
    pub salt: [u8; 64],
    /// Text UUID.
    pub uuid: String,
    /// Subsystem (≤ 47 bytes).
    pub subsystem: String,
    /// Offset of this copy on the device.
    pub hdr_offset: u64,
    /// Checksum as stored (first 32 bytes used for sha256).
    pub csum: [u8; 64],
}

fn be64(b: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// A NUL-terminated string field; refuses a field with no NUL (cryptsetup requires termination).
fn c_string(b: &[u8], at: usize, len: usize, name: &str) -> Result<String> {
    let field = &b[at..at + len];
    let end =
        field.iter().position(|&c| c == 0).ok_or_else(|| Error::corrupt(format!("{name} is not NUL-terminated")))?;
    String::from_utf8(field[..end].to_vec()).map_err(|_| Error::corrupt(format!("{name} is not UTF-8")))
}

fn put_c_string(b: &mut [u8], at: usize, len: usize, value: &str) {
    let bytes = value.as_bytes();
    let n = bytes.len().min(len - 1);
    b[at..at + n].copy_from_slice(&bytes[..n]);
}

impl BinaryHeader {
    /// Parses a binary header; `expected_offset` is where it was read (the `hdr_offset` field must agree).
    pub fn parse(b: &[u8], expected_offset: u64) -> Result<BinaryHeader> {
        let secondary = match b[..6].try_into().expect("6 bytes") {
            MAGIC_PRIMARY => false,
            MAGIC_SECONDARY => true,
            _ => return Err(Error::corrupt("bad magic")),
        };
        let version = u16::from_be_bytes([b[6], b[7]]);
        if version != 2 {
            return Err(Error::corrupt(format!("version {version}, expected 2")));
        }
        let hdr_size = be64(b, 8);
        if !HDR_SIZES.contains(&hdr_size) {
            return Err(Error::corrupt(format!("hdr_size {hdr_size} is not an allowed size")));
        }
        let hdr_offset = be64(b, 256);
        if hdr_offset != expected_offset {
            return Err(Error::corrupt(format!("hdr_offset {hdr_offset} but read at {expected_offset}")));
        }
        if secondary && hdr_offset != hdr_size {
            return Err(Error::corrupt("secondary header offset differs from hdr_size"));
        }
        let mut salt = [0u8; 64];
        salt.copy_from_slice(&b[104..168]);
        let mut csum = [0u8; 64];
        csum.copy_from_slice(&b[CSUM_OFFSET..CSUM_OFFSET + CSUM_LEN]);
        Ok(BinaryHeader {
            secondary,
            hdr_size,
            seqid: be64(b, 16),
            label: c_string(b, 24, 48, "label")?,
            checksum_alg: c_string(b, 72, 32, "checksum_alg")?,
            salt,
            uuid: c_string(b, 168, 40, "uuid")?,
            subsystem: c_string(b, 208, 48, "subsystem")?,
            hdr_offset,
            csum,
        })
    }

    /// Serializes with the checksum field zeroed.
    pub fn to_bytes_without_csum(&self) -> [u8; BINARY_SIZE] {
        let mut b = [0u8; BINARY_SIZE];
        b[..6].copy_from_slice(if self.secondary { &MAGIC_SECONDARY } else { &MAGIC_PRIMARY });
        b[6..8].copy_from_slice(&2u16.to_be_bytes());
        b[8..16].copy_from_slice(&self.hdr_size.to_be_bytes());
        b[16..24].copy_from_slice(&self.seqid.to_be_bytes());
        put_c_string(&mut b, 24, 48, &self.label);
        put_c_string(&mut b, 72, 32, &self.checksum_alg);
        b[104..168].copy_from_slice(&self.salt);
        put_c_string(&mut b, 168, 40, &self.uuid);
        put_c_string(&mut b, 208, 48, &self.subsystem);
        b[256..264].copy_from_slice(&self.hdr_offset.to_be_bytes());
        b
    }

    /// Builds the whole on-disk copy (binary header with checksum, then the JSON area) for `json_area`.
    pub fn seal(&mut self, json_area: &[u8]) -> Result<Vec<u8>> {
        let mut bytes = self.to_bytes_without_csum().to_vec();
        bytes.extend_from_slice(json_area);
        let sum = checksum(&self.checksum_alg, &bytes)?;
        self.csum = [0u8; 64];
        self.csum[..sum.len()].copy_from_slice(&sum);
        bytes[CSUM_OFFSET..CSUM_OFFSET + CSUM_LEN].copy_from_slice(&self.csum);
        Ok(bytes)
    }

    /// Whether the stored checksum matches the header (with the csum field zeroed) followed by `json_area`.
    pub fn checksum_matches(&self, json_area: &[u8]) -> Result<bool> {
        let mut bytes = self.to_bytes_without_csum().to_vec();
        // The stored header may carry bytes we do not model (padding); checksum exactly what was stored.
        bytes.extend_from_slice(json_area);
        let sum = checksum(&self.checksum_alg, &bytes)?;
        Ok(self.csum[..sum.len()] == sum[..] && self.csum[sum.len()..].iter().all(|&b| b == 0))
    }
}

/// Checksum of a raw stored header (csum field zeroed here) and its JSON area, computed over the bytes as read.
pub fn raw_checksum_matches(binary: &[u8], json_area: &[u8], alg: &str) -> Result<bool> {
    let mut bytes = binary[..BINARY_SIZE].to_vec();
    let stored = bytes[CSUM_OFFSET..CSUM_OFFSET + CSUM_LEN].to_vec();
    bytes[CSUM_OFFSET..CSUM_OFFSET + CSUM_LEN].fill(0);
    bytes.extend_from_slice(json_area);
    let sum = checksum(alg, &bytes)?;
    Ok(stored[..sum.len()] == sum[..])
}

fn checksum(alg: &str, bytes: &[u8]) -> Result<Vec<u8>> {
    match alg {
        "sha256" => Ok(sha2::Sha256::digest(bytes).to_vec()),
        "sha512" => Ok(sha2::Sha512::digest(bytes).to_vec()),
        "sha1" => Ok(sha1::Sha1::digest(bytes).to_vec()),
        other => Err(Error::unsupported(format!("header checksum algorithm `{other}`"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> BinaryHeader {
        BinaryHeader {
            secondary: false,
            hdr_size: 16384,
            seqid: 3,
            label: "data".into(),
            checksum_alg: "sha256".into(),
            salt: [9u8; 64],
            uuid: "0c9a5b8e-9d0a-4b8e-8f00-123456789abc".into(),
            subsystem: String::new(),
            hdr_offset: 0,
            csum: [0u8; 64],
        }
    }

    #[test]
    fn seal_then_parse_round_trips_and_checks() {
        let mut h = sample();
        let json = vec![0u8; 12288];
        let bytes = h.seal(&json).unwrap();
        let parsed = BinaryHeader::parse(&bytes, 0).unwrap();
        assert_eq!(parsed, h);
        assert!(parsed.checksum_matches(&json).unwrap());
        assert!(raw_checksum_matches(&bytes, &json, "sha256").unwrap());
        let mut other = json.clone();
        other[5] = 1;
        assert!(!parsed.checksum_matches(&other).unwrap());
    }

    #[test]
    fn wrong_offset_or_size_is_refused() {
        let mut h = sample();
        let bytes = h.seal(&[0u8; 12288]).unwrap();
        assert!(BinaryHeader::parse(&bytes, 16384).is_err());
        let mut bad = bytes.clone();
        bad[8..16].copy_from_slice(&5000u64.to_be_bytes());
        assert!(BinaryHeader::parse(&bad, 0).is_err());
    }
}
