//! The LUKS1 header (docs/formats.md): 592 bytes at offset 0, eight fixed keyslots, big-endian integers.

use super::{Error, Result};

/// Magic shared with the LUKS2 primary header.
pub const MAGIC: [u8; 6] = *b"LUKS\xba\xbe";
/// Bytes of the header that carry fields.
pub const HEADER_SIZE: usize = 592;
/// Number of keyslots.
pub const KEYSLOTS: usize = 8;
/// `active` value of an enabled keyslot.
pub const SLOT_ACTIVE: u32 = 0x00AC_71F3;
/// `active` value of a disabled keyslot.
pub const SLOT_DISABLED: u32 = 0x0000_DEAD;
/// Length of the volume-key digest.
pub const DIGEST_LEN: usize = 20;

/// One of the eight keyslots.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Keyslot {
    /// Enabled?
    pub active: bool,
    /// PBKDF2 iterations (0 when disabled).
    pub iterations: u32,
    /// 32-byte PBKDF2 salt.
    pub salt: [u8; 32],
    /// Start of the material, in 512-byte sectors.
    pub key_material_offset: u32,
    /// AF stripes (4000).
    pub stripes: u32,
}

/// A LUKS1 header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// `aes`.
    pub cipher_name: String,
    /// `xts-plain64`.
    pub cipher_mode: String,
    /// `sha256`: PBKDF2, AF and digest hash.
    pub hash_spec: String,
    /// Start of the payload in 512-byte sectors.
    pub payload_offset: u32,
    /// Volume key length.
    pub key_bytes: u32,
    /// PBKDF2 of the volume key.
    pub mk_digest: [u8; DIGEST_LEN],
    /// Its salt.
    pub mk_digest_salt: [u8; 32],
    /// Its iterations.
    pub mk_digest_iterations: u32,
    /// Text UUID.
    pub uuid: String,
    /// The keyslots.
    pub keyslots: [Keyslot; KEYSLOTS],
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// A NUL-padded text field; a field filled to the end without NUL is accepted (cryptsetup copies it bounded).
fn text(b: &[u8], at: usize, len: usize, name: &str) -> Result<String> {
    let field = &b[at..at + len];
    let end = field.iter().position(|&c| c == 0).unwrap_or(len);
    String::from_utf8(field[..end].to_vec()).map_err(|_| Error::corrupt(format!("LUKS1 {name} is not text")))
}

fn put_text(b: &mut [u8], at: usize, len: usize, value: &str) {
    let n = value.len().min(len - 1);
    b[at..at + n].copy_from_slice(&value.as_bytes()[..n]);
}

impl Keyslot {
    /// Sectors the material of a `key_bytes` key with this slot's stripes occupies.
    pub fn material_sectors(&self, key_bytes: u32) -> u64 {
        (u64::from(key_bytes) * u64::from(self.stripes)).div_ceil(512)
    }
}

impl Header {
    /// Parses and sanity-checks a header (the checks QEMU and cryptsetup make).
    pub fn parse(b: &[u8]) -> Result<Header> {
        if b.len() < HEADER_SIZE || b[..6] != MAGIC {
            return Err(Error::NotLuks("no LUKS magic".into()));
        }
        let version = u16::from_be_bytes([b[6], b[7]]);
        if version != 1 {
            return Err(Error::corrupt(format!("version {version} where 1 was expected")));
        }
        let keyslots = std::array::from_fn(|i| {
            let at = 208 + 48 * i;
            let mut salt = [0u8; 32];
            salt.copy_from_slice(&b[at + 8..at + 40]);
            (
                be32(b, at),
                Keyslot {
                    active: be32(b, at) == SLOT_ACTIVE,
                    iterations: be32(b, at + 4),
                    salt,
                    key_material_offset: be32(b, at + 40),
                    stripes: be32(b, at + 44),
                },
            )
        });
        if let Some(i) = keyslots.iter().position(|(raw, _)| *raw != SLOT_ACTIVE && *raw != SLOT_DISABLED) {
            return Err(Error::corrupt(format!("LUKS1 keyslot {i} has an invalid state")));
        }
        let mut mk_digest = [0u8; DIGEST_LEN];
        mk_digest.copy_from_slice(&b[112..132]);
        let mut mk_digest_salt = [0u8; 32];
        mk_digest_salt.copy_from_slice(&b[132..164]);
        let header = Header {
            cipher_name: text(b, 8, 32, "cipherName")?,
            cipher_mode: text(b, 40, 32, "cipherMode")?,
            hash_spec: text(b, 72, 32, "hashSpec")?,
            payload_offset: be32(b, 104),
            key_bytes: be32(b, 108),
            mk_digest,
            mk_digest_salt,
            mk_digest_iterations: be32(b, 164),
            uuid: text(b, 168, 40, "uuid")?,
            keyslots: keyslots.map(|(_, k)| k),
        };
        header.check_layout()?;
        Ok(header)
    }

    /// Key sizes, stripes and areas: every area lies between the header and the payload, none overlaps.
    pub fn check_layout(&self) -> Result<()> {
        if self.key_bytes == 0 || self.key_bytes > 256 {
            return Err(Error::corrupt(format!("LUKS1 key size {} bytes", self.key_bytes)));
        }
        if self.mk_digest_iterations == 0 {
            return Err(Error::corrupt("LUKS1 digest iterations are 0"));
        }
        let mut areas: Vec<(u64, u64)> = Vec::new();
        for (i, slot) in self.keyslots.iter().enumerate() {
            // cryptsetup ("LUKS keyslot N is invalid") and QEMU ("Keyslot N is corrupted (stripes …)") accept
            // 4000 only; any other count is damage, not a wrong passphrase.
            if slot.stripes != super::af::STRIPES {
                return Err(Error::corrupt(format!(
                    "LUKS1 keyslot {i} has {} stripes (LUKS1 keyslots have {})",
                    slot.stripes,
                    super::af::STRIPES
                )));
            }
            let start = u64::from(slot.key_material_offset);
            let end = start + slot.material_sectors(self.key_bytes);
            if start < (HEADER_SIZE as u64).div_ceil(512) || end > u64::from(self.payload_offset) {
                return Err(Error::corrupt(format!("LUKS1 keyslot {i} material lies outside the keyslot area")));
            }
            if areas.iter().any(|&(s, e)| start < e && s < end) {
                return Err(Error::corrupt(format!("LUKS1 keyslot {i} overlaps another keyslot")));
            }
            areas.push((start, end));
        }
        Ok(())
    }

    /// The 592 header bytes.
    pub fn to_bytes(&self) -> [u8; HEADER_SIZE] {
        let mut b = [0u8; HEADER_SIZE];
        b[..6].copy_from_slice(&MAGIC);
        b[6..8].copy_from_slice(&1u16.to_be_bytes());
        put_text(&mut b, 8, 32, &self.cipher_name);
        put_text(&mut b, 40, 32, &self.cipher_mode);
        put_text(&mut b, 72, 32, &self.hash_spec);
        b[104..108].copy_from_slice(&self.payload_offset.to_be_bytes());
        b[108..112].copy_from_slice(&self.key_bytes.to_be_bytes());
        b[112..132].copy_from_slice(&self.mk_digest);
        b[132..164].copy_from_slice(&self.mk_digest_salt);
        b[164..168].copy_from_slice(&self.mk_digest_iterations.to_be_bytes());
        put_text(&mut b, 168, 40, &self.uuid);
        for (i, slot) in self.keyslots.iter().enumerate() {
            let at = 208 + 48 * i;
            let state = if slot.active { SLOT_ACTIVE } else { SLOT_DISABLED };
            b[at..at + 4].copy_from_slice(&state.to_be_bytes());
            b[at + 4..at + 8].copy_from_slice(&slot.iterations.to_be_bytes());
            b[at + 8..at + 40].copy_from_slice(&slot.salt);
            b[at + 40..at + 44].copy_from_slice(&slot.key_material_offset.to_be_bytes());
            b[at + 44..at + 48].copy_from_slice(&slot.stripes.to_be_bytes());
        }
        b
    }

    /// The dm-crypt cipher spec (`aes-xts-plain64`).
    pub fn cipher_spec(&self) -> String {
        format!("{}-{}", self.cipher_name, self.cipher_mode)
    }
}

/// Keyslot offsets in sectors for a `key_bytes` key, cryptsetup's layout (keymanage.c `LUKS_generate_phdr`):
/// slot 0 at sector 8, each next one after the previous material rounded up to 8 sectors (4 KiB). Returns the
/// offsets and the first sector after the last slot.
pub fn cryptsetup_layout(key_bytes: u32, stripes: u32) -> ([u32; KEYSLOTS], u32) {
    let sectors = (u64::from(key_bytes) * u64::from(stripes)).div_ceil(512) as u32;
    let mut offsets = [0u32; KEYSLOTS];
    let mut next = 8u32;
    for offset in &mut offsets {
        *offset = next;
        next = (next + sectors).div_ceil(8) * 8;
    }
    (offsets, offsets[KEYSLOTS - 1] + sectors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_cryptsetup() {
        let (offsets, end) = cryptsetup_layout(64, 4000);
        assert_eq!(offsets, [8, 512, 1016, 1520, 2024, 2528, 3032, 3536]);
        assert_eq!(end, 4036);
        let (offsets, _) = cryptsetup_layout(32, 4000);
        assert_eq!(offsets[1], 264);
    }

    #[test]
    fn round_trip_and_layout_checks() {
        let (offsets, _) = cryptsetup_layout(64, 4000);
        let header = Header {
            cipher_name: "aes".into(),
            cipher_mode: "xts-plain64".into(),
            hash_spec: "sha256".into(),
            payload_offset: 4096,
            key_bytes: 64,
            mk_digest: [1; 20],
            mk_digest_salt: [2; 32],
            mk_digest_iterations: 1000,
            uuid: "0c9a5b8e-9d0a-4b8e-8f00-123456789abc".into(),
            keyslots: offsets.map(|o| Keyslot {
                active: false,
                iterations: 0,
                salt: [0; 32],
                key_material_offset: o,
                stripes: 4000,
            }),
        };
        let bytes = header.to_bytes();
        assert_eq!(Header::parse(&bytes).unwrap(), header);
        let mut bad = header.clone();
        bad.payload_offset = 3000;
        assert!(Header::parse(&bad.to_bytes()).is_err());
        let mut bad = bytes;
        bad[208] = 7;
        assert!(Header::parse(&bad).is_err());
    }
}
