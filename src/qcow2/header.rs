//! The qcow2 header and its extensions (QEMU `docs/interop/qcow2.txt`, "Header" and "Header extensions"): parsed
//! with every check a reader needs before it trusts an offset, and written the way QEMU 10 writes a version 3
//! header (112 bytes: the 104-byte header, the compression type, padding).

use super::{Error, Result};

/// `QFI\xfb`.
pub const MAGIC: [u8; 4] = *b"QFI\xfb";
/// Bytes QEMU writes for a version 3 header (104 + compression type + padding to 8).
pub const V3_HEADER_LENGTH: u32 = 112;
/// Smallest cluster QEMU accepts: 512 bytes.
pub const MIN_CLUSTER_BITS: u32 = 9;
/// Largest cluster QEMU opens: 2 MiB.
pub const MAX_CLUSTER_BITS: u32 = 21;
/// `crypt_method` of QEMU's legacy AES-CBC encryption.
pub const CRYPT_AES: u32 = 1;
/// `crypt_method` of LUKS encryption.
pub const CRYPT_LUKS: u32 = 2;
/// Largest L1 table QEMU accepts (qcow2.txt: 32 MiB).
pub const MAX_L1_BYTES: u64 = 32 << 20;
/// Largest refcount table QEMU accepts (8 MiB).
pub const MAX_REFCOUNT_TABLE_BYTES: u64 = 8 << 20;
/// Host offsets in L1/L2 entries: bits 9–55.
pub const OFFSET_MASK: u64 = 0x00ff_ffff_ffff_fe00;
/// L1/L2 bit 63: the cluster's refcount is exactly one.
pub const COPIED: u64 = 1 << 63;
/// L2 bit 62: compressed cluster.
pub const COMPRESSED: u64 = 1 << 62;
/// L2 bit 0 (version 3): the cluster reads as zeros.
pub const ZERO: u64 = 1;

/// Extension types (qcow2.txt "Header extensions").
const EXT_END: u32 = 0;
const EXT_BACKING_FORMAT: u32 = 0xe279_2aca;
const EXT_FEATURE_TABLE: u32 = 0x6803_f857;
const EXT_FDE: u32 = 0x0537_be77;
const EXT_DATA_FILE: u32 = 0x4441_5441;

/// Incompatible feature bits.
const INCOMPAT_DIRTY: u64 = 1;
const INCOMPAT_CORRUPT: u64 = 1 << 1;
const INCOMPAT_DATA_FILE: u64 = 1 << 2;
const INCOMPAT_COMPRESSION: u64 = 1 << 3;
const INCOMPAT_EXTL2: u64 = 1 << 4;

/// Where the LUKS header lives inside the image (the "full disk encryption header pointer" extension).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FdeRegion {
    /// Byte offset of the LUKS header (cluster aligned).
    pub offset: u64,
    /// Its length in bytes.
    pub length: u64,
}

/// A parsed (or to-be-written) qcow2 header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// 2 or 3.
    pub version: u32,
    /// log2 of the cluster size.
    pub cluster_bits: u32,
    /// Virtual disk size in bytes.
    pub size: u64,
    /// 0 none, 1 AES (refused), 2 LUKS.
    pub crypt_method: u32,
    /// L1 entries.
    pub l1_size: u32,
    /// L1 table offset.
    pub l1_table_offset: u64,
    /// Refcount table offset.
    pub refcount_table_offset: u64,
    /// Refcount table length in clusters.
    pub refcount_table_clusters: u32,
    /// Internal snapshots (their clusters are not read: only the active layer is).
    pub nb_snapshots: u32,
    /// Incompatible feature bits.
    pub incompatible_features: u64,
    /// log2 of the refcount width in bits.
    pub refcount_order: u32,
    /// The LUKS header, if encrypted with LUKS.
    pub fde: Option<FdeRegion>,
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn be64(b: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

const FLATTEN: &str =
    "flatten it first: `qemu-img convert -O qcow2` without a backing file (`-B`) copies the whole chain";

impl Header {
    /// Cluster size in bytes.
    pub fn cluster_size(&self) -> u64 {
        1 << self.cluster_bits
    }

    /// L1 entries needed for `size` bytes with `cluster_bits` (each L2 table maps cluster_size/8 clusters).
    pub fn l1_entries_for(size: u64, cluster_bits: u32) -> u64 {
        let per_l2 = 1u64 << (2 * cluster_bits - 3);
        size.div_ceil(per_l2)
    }

    /// Parses the first cluster of an image (`first` holds at least the header cluster, or the whole file if
    /// shorter) and checks every field against the file length `file_len`.
    pub fn parse(first: &[u8], file_len: u64) -> Result<Header> {
        if first.len() < 4 || first[..4] != MAGIC {
            return Err(Error::NotQcow2("no QFI\\xfb magic".into()));
        }
        if first.len() < 72 {
            return Err(Error::Truncated(format!("{} bytes, shorter than a qcow2 header", first.len())));
        }
        let version = be32(first, 4);
        if version != 2 && version != 3 {
            return Err(Error::unsupported(
                format!("qcow2 version {version}"),
                "convert it with `qemu-img convert -O qcow2`",
            ));
        }
        let backing_file_offset = be64(first, 8);
        if backing_file_offset != 0 {
            return Err(Error::unsupported("a backing file (the image is an overlay)", FLATTEN));
        }
        let cluster_bits = be32(first, 20);
        if !(MIN_CLUSTER_BITS..=MAX_CLUSTER_BITS).contains(&cluster_bits) {
            return Err(Error::corrupt(format!("cluster_bits {cluster_bits} (9 to 21)")));
        }
        let cs = 1u64 << cluster_bits;
        let crypt_method = be32(first, 32);
        match crypt_method {
            0 | CRYPT_LUKS => {}
            CRYPT_AES => {
                return Err(Error::unsupported(
                    "legacy QEMU AES-CBC encryption (crypt_method 1), which QEMU itself no longer opens",
                    "re-encrypt it with an older qemu-img: `qemu-img convert -O qcow2 -o encrypt.format=luks ...`",
                ));
            }
            n => return Err(Error::corrupt(format!("crypt_method {n}"))),
        }
        let mut header = Header {
            version,
            cluster_bits,
            size: be64(first, 24),
            crypt_method,
            l1_size: be32(first, 36),
            l1_table_offset: be64(first, 40),
            refcount_table_offset: be64(first, 48),
            refcount_table_clusters: be32(first, 56),
            nb_snapshots: be32(first, 60),
            incompatible_features: 0,
            refcount_order: 4,
            fde: None,
        };
        let header_length = if version == 3 {
            if first.len() < 104 {
                return Err(Error::Truncated("the version 3 header is cut short".into()));
            }
            header.incompatible_features = be64(first, 72);
            header.refcount_order = be32(first, 96);
            let len = be32(first, 100);
            if len < 104 || u64::from(len) > cs.min(first.len() as u64) || !len.is_multiple_of(8) {
                return Err(Error::corrupt(format!("header_length {len}")));
            }
            len as usize
        } else {
            72
        };
        // The compression type (byte 104) matters only for compressed clusters, which the reader refuses with
        // its own hint: an image flagged zstd without any compressed cluster reads like any other.
        let compression_type = if header_length > 104 { first[104] } else { 0 };
        header.check_features(compression_type)?;
        if header.refcount_order > 6 {
            return Err(Error::corrupt(format!(
                "refcount_order {} (at most 6: 64-bit refcounts)",
                header.refcount_order
            )));
        }
        header.parse_extensions(first, header_length, cs, file_len)?;
        header.check_tables(file_len)?;
        Ok(header)
    }

    fn check_features(&self, compression_type: u8) -> Result<()> {
        let f = self.incompatible_features;
        if f & INCOMPAT_CORRUPT != 0 {
            return Err(Error::corrupt("QEMU marked the image corrupt (incompatible bit 1)"));
        }
        if f & INCOMPAT_DATA_FILE != 0 {
            return Err(Error::unsupported(
                "an external data file (incompatible bit 2)",
                "copy it into a self-contained image: `qemu-img convert -O qcow2`",
            ));
        }
        // As QEMU's validate_compression_type: the type is zlib (0) or zstd (1), and bit 3 is set exactly when it
        // is not zlib (whatever the image's clusters hold; QEMU refuses to open it either way).
        if compression_type > 1 {
            return Err(Error::corrupt(format!(
                "compression type {compression_type} (QEMU knows 0, zlib, and 1, zstd)"
            )));
        }
        match (f & INCOMPAT_COMPRESSION != 0, compression_type) {
            (true, 0) => {
                return Err(Error::corrupt(
                    "incompatible bit 3 (compression type) is set but the compression type is zlib (0); QEMU refuses it",
                ));
            }
            (false, 1) => {
                return Err(Error::corrupt(
                    "the compression type is zstd (1) but incompatible bit 3 is not set; QEMU refuses it",
                ));
            }
            _ => {}
        }
        if f & INCOMPAT_EXTL2 != 0 {
            return Err(Error::unsupported(
                "extended L2 entries (incompatible bit 4), which OpenStack's format inspector refuses too",
                "convert it with `qemu-img convert -O qcow2 -o extended_l2=off`",
            ));
        }
        let unknown =
            f & !(INCOMPAT_DIRTY | INCOMPAT_CORRUPT | INCOMPAT_DATA_FILE | INCOMPAT_COMPRESSION | INCOMPAT_EXTL2);
        if unknown != 0 {
            return Err(Error::unsupported(
                format!("unknown incompatible feature bits {unknown:#x}"),
                "convert it with `qemu-img convert -O qcow2 -o compat=1.1`",
            ));
        }
        Ok(())
    }

    fn parse_extensions(&mut self, first: &[u8], start: usize, cs: u64, file_len: u64) -> Result<()> {
        let end = (cs as usize).min(first.len());
        let mut at = start;
        loop {
            if at + 8 > end {
                // Version 2 images may have no end marker when no extension follows; QEMU stops at the cluster end.
                break;
            }
            let kind = be32(first, at);
            let len = be32(first, at + 4) as usize;
            let data = at + 8;
            if kind == EXT_END {
                break;
            }
            if data + len > end {
                return Err(Error::corrupt(format!("header extension {kind:#x} runs past the header cluster")));
            }
            match kind {
                EXT_FDE => {
                    if len != 16 {
                        return Err(Error::corrupt(format!("encryption header pointer of {len} bytes (16 expected)")));
                    }
                    self.fde = Some(FdeRegion { offset: be64(first, data), length: be64(first, data + 8) });
                }
                EXT_DATA_FILE => {
                    return Err(Error::unsupported(
                        "an external data file",
                        "copy it into a self-contained image: `qemu-img convert -O qcow2`",
                    ));
                }
                EXT_BACKING_FORMAT | EXT_FEATURE_TABLE => {}
                _ => {} // bitmaps and unknown extensions do not change how the active layer reads
            }
            at = data + len.div_ceil(8) * 8;
        }
        match (self.crypt_method, self.fde) {
            (CRYPT_LUKS, None) => return Err(Error::corrupt("LUKS encryption without the encryption header pointer")),
            (0, Some(_)) => return Err(Error::corrupt("an encryption header pointer on an unencrypted image")),
            _ => {}
        }
        if let Some(fde) = self.fde {
            let end = fde.offset.checked_add(fde.length);
            if fde.offset == 0 || !fde.offset.is_multiple_of(cs) || fde.length < 592 || end.is_none_or(|e| e > file_len)
            {
                return Err(Error::corrupt(format!(
                    "the LUKS header ({} bytes at {:#x}) is misplaced or outside the file ({file_len} bytes)",
                    fde.length, fde.offset
                )));
            }
            if fde.length > 64 << 20 {
                return Err(Error::corrupt(format!("a LUKS header of {} bytes", fde.length)));
            }
        }
        Ok(())
    }

    fn check_tables(&self, file_len: u64) -> Result<()> {
        let cs = self.cluster_size();
        let needed = Header::l1_entries_for(self.size, self.cluster_bits);
        if u64::from(self.l1_size) < needed {
            return Err(Error::corrupt(format!(
                "the L1 table has {} entries, {needed} are needed for {} bytes",
                self.l1_size, self.size
            )));
        }
        let l1_bytes = u64::from(self.l1_size) * 8;
        if l1_bytes > MAX_L1_BYTES {
            return Err(Error::corrupt(format!("an L1 table of {l1_bytes} bytes (at most 32 MiB)")));
        }
        within(self.l1_table_offset, l1_bytes, cs, file_len, "the L1 table")?;
        let rt_bytes = u64::from(self.refcount_table_clusters).checked_mul(cs);
        match rt_bytes {
            Some(n) if n <= MAX_REFCOUNT_TABLE_BYTES && n > 0 => {
                within(self.refcount_table_offset, n, cs, file_len, "the refcount table")
            }
            _ => Err(Error::corrupt(format!(
                "a refcount table of {} clusters (overflows the 8 MiB limit)",
                self.refcount_table_clusters
            ))),
        }
    }

    /// The bytes of a version 3 header for this description, with its extensions, zero-padded to a cluster.
    pub fn to_cluster(&self) -> Vec<u8> {
        let cs = self.cluster_size() as usize;
        let mut b = vec![0u8; cs];
        b[..4].copy_from_slice(&MAGIC);
        b[4..8].copy_from_slice(&3u32.to_be_bytes());
        b[20..24].copy_from_slice(&self.cluster_bits.to_be_bytes());
        b[24..32].copy_from_slice(&self.size.to_be_bytes());
        b[32..36].copy_from_slice(&self.crypt_method.to_be_bytes());
        b[36..40].copy_from_slice(&self.l1_size.to_be_bytes());
        b[40..48].copy_from_slice(&self.l1_table_offset.to_be_bytes());
        b[48..56].copy_from_slice(&self.refcount_table_offset.to_be_bytes());
        b[56..60].copy_from_slice(&self.refcount_table_clusters.to_be_bytes());
        b[96..100].copy_from_slice(&self.refcount_order.to_be_bytes());
        b[100..104].copy_from_slice(&V3_HEADER_LENGTH.to_be_bytes());
        // 104: compression type 0 (zlib), then padding.
        let mut at = V3_HEADER_LENGTH as usize;
        if let Some(fde) = self.fde {
            b[at..at + 4].copy_from_slice(&EXT_FDE.to_be_bytes());
            b[at + 4..at + 8].copy_from_slice(&16u32.to_be_bytes());
            b[at + 8..at + 16].copy_from_slice(&fde.offset.to_be_bytes());
            b[at + 16..at + 24].copy_from_slice(&fde.length.to_be_bytes());
            at += 24;
        }
        // The end marker (type 0, length 0) is already zero.
        debug_assert!(at + 8 <= cs);
        b
    }
}

/// Checks that `len` bytes at the cluster-aligned `offset` lie inside a file of `file_len` bytes.
pub(crate) fn within(offset: u64, len: u64, cs: u64, file_len: u64, what: &str) -> Result<()> {
    if offset == 0 || !offset.is_multiple_of(cs) {
        return Err(Error::corrupt(format!("{what} is at {offset:#x}, not at a cluster boundary after the header")));
    }
    match offset.checked_add(len) {
        Some(end) if end <= file_len => Ok(()),
        _ => {
            Err(Error::corrupt(format!("{what} ({len} bytes at {offset:#x}) lies outside the file ({file_len} bytes)")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Header {
        Header {
            version: 3,
            cluster_bits: 16,
            size: 64 << 20,
            crypt_method: CRYPT_LUKS,
            l1_size: 1,
            l1_table_offset: 0x20000,
            refcount_table_offset: 0x10000,
            refcount_table_clusters: 1,
            nb_snapshots: 0,
            incompatible_features: 0,
            refcount_order: 4,
            fde: Some(FdeRegion { offset: 0x30000, length: 2_068_480 }),
        }
    }

    #[test]
    fn round_trips_and_checks_bounds() {
        let h = sample();
        let bytes = h.to_cluster();
        assert_eq!(Header::parse(&bytes, 4 << 20).unwrap(), h);
        // The LUKS header past the end of the file.
        assert!(matches!(Header::parse(&bytes, 0x40000), Err(Error::Corrupt(_))));
        let mut aes = bytes.clone();
        aes[35] = 1;
        assert!(matches!(Header::parse(&aes, 4 << 20), Err(Error::Unsupported { .. })));
        let mut backing = bytes.clone();
        backing[15] = 0x80;
        assert!(matches!(Header::parse(&backing, 4 << 20), Err(Error::Unsupported { .. })));
        let mut ext_l2 = bytes.clone();
        ext_l2[79] = 1 << 4;
        assert!(matches!(Header::parse(&ext_l2, 4 << 20), Err(Error::Unsupported { .. })));
        let mut unknown = bytes.clone();
        unknown[78] = 1;
        assert!(matches!(Header::parse(&unknown, 4 << 20), Err(Error::Unsupported { .. })));
        let mut rt = bytes.clone();
        rt[56..60].copy_from_slice(&u32::MAX.to_be_bytes());
        assert!(matches!(Header::parse(&rt, 4 << 20), Err(Error::Corrupt(_))));
        let mut order = bytes;
        order[99] = 7;
        assert!(matches!(Header::parse(&order, 4 << 20), Err(Error::Corrupt(_))));
    }

    #[test]
    fn l1_sizes_match_qemu() {
        assert_eq!(Header::l1_entries_for(4 << 30, 16), 8);
        assert_eq!(Header::l1_entries_for(4 << 30, 12), 2048);
        assert_eq!(Header::l1_entries_for(64 << 20, 21), 1);
    }
}
