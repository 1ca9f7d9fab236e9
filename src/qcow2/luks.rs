//! The LUKS1 header inside a qcow2 image: unlocked and created with the existing LUKS library in
//! [`crate::luks`], through an in-memory file (`memfd`), so the header region never touches the disk outside the
//! image and the LUKS code needs no second I/O path.
//!
//! QEMU's layout (`crypto/block-luks.c` `qcrypto_block_luks_create`): LUKS1, aes-xts-plain64, sha256, 4000
//! stripes, slot *i* at sector 8 + 504·*i* (for a 64-byte key), and the payload offset right after the last slot
//! rounded up to 8 sectors: 4040 sectors, which is also the length QEMU records in the encryption header pointer.
//! cryptsetup's layout differs only in that payload offset (4096), so cryptadm writes its own LUKS1 header and
//! moves the payload offset to QEMU's value.

use super::{Error, Result};
use crate::crypto::xts::XtsPlain64;
use crate::luks::format::{self, FormatOptions};
use crate::luks::{Hash, Kdf, Version, Volume, VolumeKey, luks1};
use std::fs::File;
use std::os::unix::fs::FileExt;

/// An in-memory file holding `bytes` (a LUKS header region).
fn memfile(bytes: &[u8]) -> Result<File> {
    let fd = rustix::fs::memfd_create("cryptadm-luks-header", rustix::fs::MemfdFlags::CLOEXEC)
        .map_err(|e| Error::io("creating an in-memory file")(e.into()))?;
    let file = File::from(fd);
    file.write_all_at(bytes, 0).map_err(Error::io("copying the LUKS header into memory"))?;
    Ok(file)
}

/// A LUKS header region opened from bytes (embedded in a qcow2, or copied from a raw LUKS image's start).
#[derive(Debug)]
pub struct LuksRegion {
    volume: Volume,
}

impl LuksRegion {
    /// Parses the header in `bytes`.
    pub fn parse(bytes: &[u8]) -> Result<LuksRegion> {
        Ok(LuksRegion { volume: Volume::from_file(memfile(bytes)?)? })
    }

    /// The LUKS1 header, or an error for LUKS2 (QEMU embeds only LUKS1).
    pub fn luks1(&self) -> Result<&luks1::Header> {
        self.volume.luks1_header().ok_or_else(|| {
            Error::unsupported(
                "a LUKS2 header inside a qcow2 image (QEMU writes and reads only LUKS1)",
                "convert it with `qemu-img convert -O qcow2 -o encrypt.format=luks`",
            )
        })
    }

    /// The opened volume (for inspection).
    pub fn volume(&self) -> &Volume {
        &self.volume
    }

    /// Tries the passphrase on every active keyslot; returns the volume key.
    pub fn unlock(&self, passphrase: &[u8]) -> Result<VolumeKey> {
        Ok(self.volume.unlock(passphrase)?.1)
    }
}

/// The payload cipher for a dm-crypt spec `aes-xts-plain64`, also with an IV-generator hash
/// (`xts-plain64:sha256`, which QEMU writes when given `ivgen-hash-alg` as Nova always does; plain64 ignores it).
pub fn data_cipher(spec: &str, key: &VolumeKey) -> Result<XtsPlain64> {
    let base = spec
        .split_once(':')
        .map_or(spec, |(base, hash)| if hash.bytes().all(|b| b.is_ascii_alphanumeric()) { base } else { spec });
    if !base.eq_ignore_ascii_case("aes-xts-plain64") {
        return Err(Error::unsupported(
            format!("the data cipher `{spec}` (only aes-xts-plain64 is implemented)"),
            "convert it with `qemu-img convert -O qcow2 -o encrypt.format=luks,encrypt.cipher-alg=aes-256`",
        ));
    }
    XtsPlain64::new(key.as_bytes()).map_err(|e| Error::InvalidParameter(e.to_string()))
}

/// QEMU looks secrets up as UTF-8 strings (`qcrypto_secret_lookup_as_utf8`) measured with strlen.
pub fn check_qemu_passphrase(passphrase: &[u8]) -> Result<()> {
    match std::str::from_utf8(passphrase) {
        Ok(text) if !text.contains('\0') => Ok(()),
        _ => Err(Error::InvalidParameter("QEMU needs a passphrase that is valid UTF-8 without NUL bytes".into())),
    }
}

/// Key-stretching settings of a new header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KdfCost {
    /// PBKDF2-SHA256 iterations of the keyslot.
    pub keyslot_iterations: u32,
    /// Iterations of the volume-key digest.
    pub digest_iterations: u32,
}

/// Where a new LUKS1 header's payload starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PayloadPlacement {
    /// Right after the keyslots, rounded to 8 sectors (4040 for a 64-byte key): what QEMU writes, in qcow2 or raw.
    Qemu,
    /// cryptsetup's 2 MiB (4096 sectors).
    Cryptsetup,
}

/// A new LUKS1 header (aes-xts-plain64, sha256, one keyslot for `passphrase`) for `key`: the bytes up to the
/// payload offset. The payload offset is returned in bytes too.
pub fn new_luks1_header(
    key: &VolumeKey,
    passphrase: &[u8],
    cost: KdfCost,
    placement: PayloadPlacement,
) -> Result<(Vec<u8>, u64)> {
    let options = FormatOptions {
        version: Version::Luks1,
        cipher: "aes-xts-plain64".into(),
        key_bytes: key.len(),
        hash: Hash::Sha256,
        kdf: Kdf::Pbkdf2 { hash: "sha256".into(), iterations: cost.keyslot_iterations },
        digest_iterations: cost.digest_iterations,
        sector_size: 512,
        label: String::new(),
        uuid: format::random_uuid(),
    };
    let file = memfile(&[])?;
    let cryptsetup_len = u64::from(format::LUKS1_PAYLOAD_SECTORS) * 512;
    file.set_len(cryptsetup_len).map_err(Error::io("sizing the in-memory header"))?;
    format::write_header(&file, &options, key, passphrase)?;
    let mut bytes = vec![0u8; cryptsetup_len as usize];
    file.read_exact_at(&mut bytes, 0).map_err(Error::io("reading the new LUKS header"))?;
    if placement == PayloadPlacement::Cryptsetup {
        return Ok((bytes, cryptsetup_len));
    }
    let mut header = luks1::Header::parse(&bytes)?;
    let (_, end) = luks1::cryptsetup_layout(key.len() as u32, header.keyslots[0].stripes);
    header.payload_offset = end.div_ceil(8) * 8;
    header.check_layout()?;
    let len = u64::from(header.payload_offset) * 512;
    bytes.truncate(len as usize);
    bytes[..luks1::HEADER_SIZE].copy_from_slice(&header.to_bytes());
    Ok((bytes, len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_headers_unlock_and_use_qemus_payload_offset() {
        let key = VolumeKey::generate(64);
        let cost = KdfCost { keyslot_iterations: 1000, digest_iterations: 1000 };
        let (bytes, len) = new_luks1_header(&key, b"abc", cost, PayloadPlacement::Qemu).unwrap();
        assert_eq!((bytes.len() as u64, len), (2_068_480, 2_068_480));
        let region = LuksRegion::parse(&bytes).unwrap();
        assert_eq!(region.luks1().unwrap().payload_offset, 4040);
        assert_eq!(region.unlock(b"abc").unwrap().as_bytes(), key.as_bytes());
        assert!(region.unlock(b"abd").is_err());
        let (_, len) = new_luks1_header(&VolumeKey::generate(32), b"abc", cost, PayloadPlacement::Qemu).unwrap();
        assert_eq!(len, 2056 * 512);
    }

    #[test]
    fn cipher_specs_with_an_ivgen_hash_are_plain64() {
        let key = VolumeKey::generate(64);
        assert!(data_cipher("aes-xts-plain64:sha256", &key).is_ok());
        assert!(data_cipher("aes-xts-plain64", &key).is_ok());
        assert!(data_cipher("aes-cbc-essiv:sha256", &key).is_err());
        assert!(check_qemu_passphrase(b"\xff\xfe").is_err());
    }
}
