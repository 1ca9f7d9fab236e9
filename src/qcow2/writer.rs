//! Writing a qcow2 version 3 image in one pass, in guest order, with flat memory.
//!
//! Host layout (cluster indices): 0 the header; then the refcount table, sized for the largest file this virtual
//! size can produce; the L1 table; the LUKS header clusters (QEMU's order: header, refcounts, L1, LUKS); then L2
//! tables and data clusters in allocation order, each L2 table just before the first data cluster it maps (as
//! QEMU's `convert` places them); the refcount blocks last, once the file's length is known.
//!
//! Nothing is ever freed or shared, so every cluster below the end of the file has refcount exactly one: the
//! refcount blocks are written at the end from the cluster count alone, without a table held in memory. Clusters
//! that are all zeros in the source are left unallocated (sparse), never encrypted. Only the L1 table (at most
//! 32 MiB, 64 bytes for a 4 GiB disk with 64 KiB clusters), the current L2 table (one cluster) and one batch of
//! outgoing clusters are held.

use super::header::{self, COPIED, FdeRegion, Header};
use super::{Error, Result};
use crate::crypto::xts::XtsPlain64;
use std::fs::File;
use std::os::unix::fs::FileExt;

/// Refcount width QEMU writes by default: 16 bits (`refcount_order` 4).
const REFCOUNT_ORDER: u32 = 4;

/// Where things go, computed from the virtual size before anything is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// log2 of the cluster size.
    pub cluster_bits: u32,
    /// Virtual size.
    pub size: u64,
    /// L1 entries.
    pub l1_size: u64,
    /// Refcount table clusters (enough for the largest possible file).
    pub refcount_table_clusters: u64,
    /// L1 table offset.
    pub l1_offset: u64,
    /// The LUKS header, if any.
    pub fde: Option<FdeRegion>,
    /// First cluster for L2 tables and data.
    pub data_start: u64,
}

impl Layout {
    /// Plans an image of `size` bytes with `1 << cluster_bits` clusters and, when encrypted, a LUKS header of
    /// `luks_len` bytes.
    pub fn new(size: u64, cluster_bits: u32, luks_len: Option<u64>) -> Result<Layout> {
        if !(header::MIN_CLUSTER_BITS..=header::MAX_CLUSTER_BITS).contains(&cluster_bits) {
            return Err(Error::InvalidParameter(format!(
                "a cluster size of {} bytes (512 B to 2 MiB)",
                1u64 << cluster_bits
            )));
        }
        if luks_len.is_some() && !size.is_multiple_of(512) {
            return Err(Error::InvalidParameter(format!(
                "an encrypted image of {size} bytes (a multiple of 512 is needed)"
            )));
        }
        let cs = 1u64 << cluster_bits;
        let clusters = |bytes: u64| bytes.div_ceil(cs);
        let l1_size = Header::l1_entries_for(size, cluster_bits);
        if l1_size * 8 > header::MAX_L1_BYTES {
            return Err(Error::InvalidParameter(format!(
                "{size} bytes: the L1 table would exceed 32 MiB; use larger clusters"
            )));
        }
        let l1_clusters = clusters(l1_size * 8).max(1);
        let luks_clusters = luks_len.map_or(0, clusters);
        // Largest file: every data cluster and every L2 table allocated, plus the refcount structures themselves.
        let fixed = 1 + l1_clusters + luks_clusters + l1_size + clusters(size);
        let per_block = cs * 8 / (1 << REFCOUNT_ORDER);
        let mut rt = 1u64;
        loop {
            let total = fixed + rt;
            let blocks = (total + total.div_ceil(per_block)).div_ceil(per_block) + 1;
            let needed = clusters(blocks * 8).max(1);
            if needed <= rt {
                break;
            }
            rt = needed;
        }
        if rt * cs > header::MAX_REFCOUNT_TABLE_BYTES {
            return Err(Error::InvalidParameter(format!(
                "{size} bytes: the refcount table would exceed 8 MiB; use larger clusters"
            )));
        }
        let l1_offset = (1 + rt) * cs;
        let luks_offset = l1_offset + l1_clusters * cs;
        let fde = luks_len.map(|length| FdeRegion { offset: luks_offset, length });
        Ok(Layout {
            cluster_bits,
            size,
            l1_size,
            refcount_table_clusters: rt,
            l1_offset,
            fde,
            data_start: luks_offset + luks_clusters * cs,
        })
    }

    fn cs(&self) -> u64 {
        1 << self.cluster_bits
    }
}

/// Clusters gathered before they are encrypted and written with one call.
const BATCH: usize = 8 << 20;

/// A qcow2 image being written front to back.
pub struct Qcow2Writer<'a> {
    file: &'a File,
    layout: Layout,
    l1: Vec<u64>,
    /// The L2 table being filled: (L1 index, host offset, entries).
    l2: Option<(usize, u64, Vec<u64>)>,
    /// The next free host offset.
    next: u64,
    /// Outgoing host bytes starting at `batch_start`; `runs` are the data ranges in it (encrypted before writing).
    batch: cryptadm_bulk::SecretBuf,
    batch_start: u64,
    runs: Vec<(usize, usize)>,
    cipher: Option<XtsPlain64>,
    threads: usize,
    data_clusters: u64,
}

/// What was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Written {
    /// Data clusters allocated.
    pub data_clusters: u64,
    /// File length.
    pub file_len: u64,
}

impl<'a> Qcow2Writer<'a> {
    /// Starts an image on the empty `file`; `luks_header` (the bytes of a LUKS1 header, written at
    /// [`Layout::fde`]) and `cipher` go together.
    pub fn new(
        file: &'a File,
        layout: Layout,
        luks_header: Option<&[u8]>,
        cipher: Option<XtsPlain64>,
        threads: usize,
    ) -> Result<Self> {
        if let (Some(fde), Some(bytes)) = (layout.fde, luks_header) {
            // The whole region is zeroed first (QEMU does the same), then the header written.
            let cs = layout.cs();
            let padded = fde.length.div_ceil(cs) * cs;
            file.set_len(fde.offset + padded).map_err(Error::io("sizing the image"))?;
            file.write_all_at(bytes, fde.offset).map_err(Error::io("writing the LUKS header"))?;
        }
        Ok(Qcow2Writer {
            file,
            l1: vec![0; layout.l1_size as usize],
            l2: None,
            next: layout.data_start,
            batch: cryptadm_bulk::SecretBuf::with_capacity(BATCH + layout.cs() as usize * 2),
            batch_start: layout.data_start,
            runs: Vec::new(),
            cipher,
            threads: threads.max(1),
            data_clusters: 0,
            layout,
        })
    }

    /// The cluster size.
    pub fn cluster_size(&self) -> u64 {
        self.layout.cs()
    }

    /// Stores guest cluster `index` (its plaintext; the last cluster of the disk may be shorter). Clusters must
    /// come in increasing order; all-zero clusters are skipped by the caller or here.
    pub fn write_cluster(&mut self, index: u64, data: &[u8]) -> Result<()> {
        if data.iter().all(|&b| b == 0) {
            return Ok(());
        }
        let cs = self.layout.cs();
        let per_l2 = cs / 8;
        let l1_index = (index / per_l2) as usize;
        if self.l2.as_ref().is_none_or(|(i, _, _)| *i != l1_index) {
            self.finish_l2()?;
            let at = self.allocate(None);
            self.l1[l1_index] = at | COPIED;
            self.l2 = Some((l1_index, at, vec![0; per_l2 as usize]));
        }
        let host = self.allocate(Some(data));
        let (_, _, table) = self.l2.as_mut().expect("set above");
        table[(index % per_l2) as usize] = host | COPIED;
        self.data_clusters += 1;
        if self.batch.len() >= BATCH {
            self.flush_batch()?;
        }
        Ok(())
    }

    /// Appends one cluster to the batch: `data` (zero-padded) or a zeroed placeholder for an L2 table.
    fn allocate(&mut self, data: Option<&[u8]>) -> u64 {
        let cs = self.layout.cs() as usize;
        let at = self.next;
        let start = self.batch.len();
        match data {
            Some(d) => {
                self.batch.extend_from_slice(d);
                self.batch.resize(start + cs, 0);
                match self.runs.last_mut() {
                    Some((s, l)) if *s + *l == start => *l += cs,
                    _ => self.runs.push((start, cs)),
                }
            }
            None => self.batch.resize(start + cs, 0),
        }
        self.next += cs as u64;
        at
    }

    fn flush_batch(&mut self) -> Result<()> {
        if let Some(cipher) = &self.cipher {
            for &(start, len) in &self.runs {
                let host = self.batch_start + start as u64;
                cipher.encrypt_units_parallel(&mut self.batch[start..start + len], 512, host / 512, self.threads);
            }
        }
        self.file.write_all_at(&self.batch, self.batch_start).map_err(Error::io("writing data clusters"))?;
        self.batch_start += self.batch.len() as u64;
        self.batch.clear();
        self.runs.clear();
        Ok(())
    }

    fn finish_l2(&mut self) -> Result<()> {
        let Some((_, at, table)) = self.l2.take() else { return Ok(()) };
        let bytes: Vec<u8> = table.iter().flat_map(|e| e.to_be_bytes()).collect();
        if at >= self.batch_start {
            let start = (at - self.batch_start) as usize;
            self.batch[start..start + bytes.len()].copy_from_slice(&bytes);
        } else {
            self.file.write_all_at(&bytes, at).map_err(Error::io("writing an L2 table"))?;
        }
        Ok(())
    }

    /// Writes the last L2 table, the L1 table, the refcount blocks and table, then the header; flushes nothing
    /// (the caller syncs the file before renaming it into place).
    pub fn finish(mut self) -> Result<Written> {
        self.finish_l2()?;
        self.flush_batch()?;
        let cs = self.layout.cs();
        let l1: Vec<u8> = self.l1.iter().flat_map(|e| e.to_be_bytes()).collect();
        self.file.write_all_at(&l1, self.layout.l1_offset).map_err(Error::io("writing the L1 table"))?;
        // Every cluster below `used` has refcount 1; `blocks` refcount blocks follow and count themselves too.
        let used = self.next / cs;
        let per_block = cs * 8 / (1 << REFCOUNT_ORDER);
        let mut blocks = used.div_ceil(per_block);
        while (used + blocks).div_ceil(per_block) > blocks {
            blocks += 1;
        }
        let total = used + blocks;
        let table_entries = self.layout.refcount_table_clusters * cs / 8;
        if blocks > table_entries {
            return Err(Error::InvalidParameter("the refcount table is too small (a bug in the layout)".into()));
        }
        let mut table = vec![0u8; (self.layout.refcount_table_clusters * cs) as usize];
        let mut block = vec![0u8; cs as usize];
        for j in 0..blocks {
            let first = j * per_block;
            for (k, entry) in block.chunks_exact_mut(2).enumerate() {
                let one = first + (k as u64) < total;
                entry.copy_from_slice(&u16::from(one).to_be_bytes());
            }
            let at = self.next + j * cs;
            self.file.write_all_at(&block, at).map_err(Error::io("writing a refcount block"))?;
            table[j as usize * 8..j as usize * 8 + 8].copy_from_slice(&at.to_be_bytes());
        }
        self.file.write_all_at(&table, cs).map_err(Error::io("writing the refcount table"))?;
        let header = Header {
            version: 3,
            cluster_bits: self.layout.cluster_bits,
            size: self.layout.size,
            crypt_method: if self.layout.fde.is_some() { header::CRYPT_LUKS } else { 0 },
            l1_size: self.layout.l1_size as u32,
            l1_table_offset: self.layout.l1_offset,
            refcount_table_offset: cs,
            refcount_table_clusters: self.layout.refcount_table_clusters as u32,
            nb_snapshots: 0,
            incompatible_features: 0,
            refcount_order: REFCOUNT_ORDER,
            fde: self.layout.fde,
        };
        self.file.write_all_at(&header.to_cluster(), 0).map_err(Error::io("writing the qcow2 header"))?;
        let file_len = total * cs;
        self.file.set_len(file_len).map_err(Error::io("sizing the image"))?;
        Ok(Written { data_clusters: self.data_clusters, file_len })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qcow2::reader::{Mapping, Qcow2Reader};
    use crate::qcow2::stream::Source;

    #[test]
    fn layouts_follow_qemus_order() {
        let l = Layout::new(64 << 20, 16, Some(2_068_480)).unwrap();
        assert_eq!((l.refcount_table_clusters, l.l1_offset, l.l1_size), (1, 0x20000, 1));
        assert_eq!(l.fde, Some(FdeRegion { offset: 0x30000, length: 2_068_480 }));
        assert_eq!(l.data_start, 0x30000 + 32 * 0x10000);
        let big = Layout::new(4 << 30, 12, None).unwrap();
        assert_eq!(big.l1_size, 2048);
        assert!(Layout::new(1 << 20, 8, None).is_err());
        assert!(Layout::new(1000, 16, Some(4096)).is_err());
    }

    /// A sparse image round-trips through the reader, zero clusters stay unallocated, and the refcount blocks
    /// (several of them with 512-byte clusters) count every cluster of the file once.
    #[test]
    fn writes_what_the_reader_reads() {
        for (bits, encrypted) in [(9u32, false), (12, true), (16, true)] {
            let cs = 1usize << bits;
            let size = 3 << 20;
            let mut plain = vec![0u8; size];
            for (i, b) in plain.iter_mut().enumerate() {
                if (i / cs).is_multiple_of(3) {
                    *b = (i % 251) as u8 + 1;
                }
            }
            let file = tempfile::tempfile().unwrap();
            let key = [7u8; 32].iter().chain([9u8; 32].iter()).copied().collect::<Vec<u8>>();
            let luks = encrypted.then(|| vec![0xAAu8; 5000]);
            let layout = Layout::new(size as u64, bits, luks.as_ref().map(|l| l.len() as u64)).unwrap();
            let cipher = encrypted.then(|| XtsPlain64::new(&key).unwrap());
            let mut w = Qcow2Writer::new(&file, layout, luks.as_deref(), cipher, 2).unwrap();
            for (i, c) in plain.chunks(cs).enumerate() {
                w.write_cluster(i as u64, c).unwrap();
            }
            let written = w.finish().unwrap();
            assert_eq!(written.data_clusters, (size / cs).div_ceil(3) as u64);
            assert_eq!(file.metadata().unwrap().len(), written.file_len);
            let mut r = Qcow2Reader::open(file.try_clone().unwrap()).unwrap();
            if encrypted {
                r.set_cipher(XtsPlain64::new(&key).unwrap(), 2);
                assert_eq!(r.luks_region().unwrap().unwrap(), vec![0xAA; 5000]);
            }
            assert_eq!(r.mapping(1).unwrap(), Mapping::Zero);
            let mut back = vec![1u8; size];
            r.read_at(0, &mut back).unwrap();
            assert!(back == plain, "cluster bits {bits}");
            assert_eq!(r.next_data(cs as u64).unwrap(), 3 * cs as u64);
            // Refcounts: every cluster of the file exactly once.
            let h = r.header().clone();
            let mut table = vec![0u8; h.refcount_table_clusters as usize * cs];
            file.read_exact_at(&mut table, h.refcount_table_offset).unwrap();
            let clusters = written.file_len / cs as u64;
            let mut counted = 0u64;
            for entry in table.chunks_exact(8).map(|c| u64::from_be_bytes(c.try_into().unwrap())).filter(|&e| e != 0) {
                let mut block = vec![0u8; cs];
                file.read_exact_at(&mut block, entry).unwrap();
                counted += block.chunks_exact(2).filter(|c| c == &[0, 1]).count() as u64;
            }
            assert_eq!(counted, clusters, "cluster bits {bits}");
        }
    }
}
