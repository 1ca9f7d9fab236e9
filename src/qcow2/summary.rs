//! What `disk inspect` prints for a qcow2 image: the container (like `qemu-img info`) and the embedded LUKS1
//! header (like `cryptsetup luksDump`), without salts, digests or keys.

use super::stream::Input;
use super::{Error, Result};
use serde::Serialize;
use std::path::Path;

/// The document.
#[derive(Debug, Serialize)]
pub struct Qcow2Summary {
    /// The image path.
    pub path: String,
    /// `qcow2`.
    pub format: &'static str,
    /// qcow2 version (2 or 3).
    pub version: u32,
    /// Guest disk size in bytes.
    pub virtual_size: u64,
    /// Cluster size in bytes.
    pub cluster_size: u64,
    /// Image file length.
    pub file_size: u64,
    /// Refcount width.
    pub refcount_bits: u32,
    /// Guest clusters with data (neither unallocated nor zero-flagged).
    pub allocated_clusters: u64,
    /// The LUKS encryption, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encryption: Option<Encryption>,
}

/// The embedded LUKS header.
#[derive(Debug, Serialize)]
pub struct Encryption {
    /// `luks`, as `qemu-img info` says.
    pub format: &'static str,
    /// Byte offset of the LUKS header in the file.
    pub header_offset: u64,
    /// Its length (the encryption header pointer's).
    pub header_length: u64,
    /// LUKS version (1).
    pub luks_version: u8,
    /// LUKS UUID.
    pub uuid: String,
    /// dm-crypt cipher spec.
    pub cipher: String,
    /// Volume key bits.
    pub key_bits: u32,
    /// Hash of the PBKDF2 keyslots and the digest.
    pub hash: String,
    /// LUKS payload offset in 512-byte sectors (unused inside qcow2: the L2 tables map the data).
    pub payload_offset_sectors: u32,
    /// Iterations of the volume-key digest.
    pub digest_iterations: u32,
    /// Active keyslots.
    pub keyslots: Vec<Keyslot>,
}

/// An active keyslot.
#[derive(Debug, Serialize)]
pub struct Keyslot {
    /// Slot number.
    pub id: u32,
    /// PBKDF2 iterations.
    pub iterations: u32,
    /// Key material offset in 512-byte sectors from the LUKS header's start.
    pub key_material_sector: u32,
    /// AF stripes.
    pub stripes: u32,
}

/// Describes the qcow2 image at `path`; an error if it is not qcow2.
pub fn describe(path: &Path) -> Result<Qcow2Summary> {
    let Input::Qcow2(mut reader, luks) = Input::open(path)? else {
        return Err(Error::NotQcow2(format!("`{}` has no qcow2 magic", path.display())));
    };
    let header = reader.header().clone();
    let encryption = match (&luks, header.fde) {
        (Some(region), Some(fde)) => {
            let h = region.luks1()?;
            Some(Encryption {
                format: "luks",
                header_offset: fde.offset,
                header_length: fde.length,
                luks_version: 1,
                uuid: h.uuid.clone(),
                cipher: h.cipher_spec(),
                key_bits: h.key_bytes * 8,
                hash: h.hash_spec.clone(),
                payload_offset_sectors: h.payload_offset,
                digest_iterations: h.mk_digest_iterations,
                keyslots: h
                    .keyslots
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.active)
                    .map(|(i, s)| Keyslot {
                        id: i as u32,
                        iterations: s.iterations,
                        key_material_sector: s.key_material_offset,
                        stripes: s.stripes,
                    })
                    .collect(),
            })
        }
        _ => None,
    };
    Ok(Qcow2Summary {
        path: path.display().to_string(),
        format: "qcow2",
        version: header.version,
        virtual_size: header.size,
        cluster_size: header.cluster_size(),
        file_size: reader.file_len(),
        refcount_bits: 1 << header.refcount_order,
        allocated_clusters: reader.count_allocated()?,
        encryption,
    })
}
