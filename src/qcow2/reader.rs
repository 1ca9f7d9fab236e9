//! Reading the active layer of a qcow2 image: L1 held in memory (at most 32 MiB by the format's own limit), one
//! L2 table cached at a time, every host offset checked against the file before it is read, and LUKS-encrypted
//! clusters decrypted with the tweak QEMU uses: the *host* sector, `host_offset / 512` (qcow2.txt "Data
//! encryption"; QEMU `block/qcow2.c` sets `crypt_physical_offset` for LUKS).

use super::header::{self, COMPRESSED, Header, OFFSET_MASK, ZERO};
use super::{Error, Result};
use crate::crypto::xts::XtsPlain64;
use std::fs::File;
use std::os::unix::fs::FileExt;

/// Where one guest cluster's data lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mapping {
    /// Unallocated, or allocated with the zero flag: reads as zeros (no backing file is ever accepted).
    Zero,
    /// At this host offset.
    Data(u64),
}

/// An opened qcow2 image.
pub struct Qcow2Reader {
    file: File,
    file_len: u64,
    header: Header,
    l1: Vec<u64>,
    l2: Option<(usize, Vec<u64>)>,
    cipher: Option<XtsPlain64>,
    threads: usize,
}

impl std::fmt::Debug for Qcow2Reader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Qcow2Reader").field("header", &self.header).finish_non_exhaustive()
    }
}

impl Qcow2Reader {
    /// Parses the header and the L1 table, checking every L2 offset against the file.
    pub fn open(file: File) -> Result<Qcow2Reader> {
        // A qcow2 image may live on a block device, whose size is not in its metadata.
        let file_len = crate::atomic::file_len(&file).map_err(Error::io("reading the image size"))?;
        let mut first = vec![0u8; (1usize << header::MAX_CLUSTER_BITS).min(file_len as usize)];
        file.read_exact_at(&mut first, 0).map_err(Error::io("reading the qcow2 header"))?;
        let header = Header::parse(&first, file_len)?;
        let cs = header.cluster_size();
        let mut raw = vec![0u8; header.l1_size as usize * 8];
        file.read_exact_at(&mut raw, header.l1_table_offset).map_err(Error::io("reading the L1 table"))?;
        let l1: Vec<u64> = raw.chunks_exact(8).map(|c| u64::from_be_bytes(c.try_into().expect("8"))).collect();
        for (i, entry) in l1.iter().enumerate() {
            let offset = entry & OFFSET_MASK;
            if offset != 0 {
                header::within(offset, cs, cs, file_len, &format!("the L2 table of L1 entry {i}"))?;
            }
        }
        // The refcount blocks are not needed to read, but a pointer outside the file means a cut-short or
        // damaged image: refuse it rather than read data whose metadata is already known to be wrong.
        let mut table = vec![0u8; header.refcount_table_clusters as usize * cs as usize];
        file.read_exact_at(&mut table, header.refcount_table_offset)
            .map_err(Error::io("reading the refcount table"))?;
        for (i, entry) in table.chunks_exact(8).enumerate() {
            let offset = u64::from_be_bytes(entry.try_into().expect("8")) & !511;
            if offset != 0 {
                header::within(offset, cs, cs, file_len, &format!("refcount block {i}"))?;
            }
        }
        Ok(Qcow2Reader { file, file_len, header, l1, l2: None, cipher: None, threads: 1 })
    }

    /// The parsed header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The image file's length.
    pub fn file_len(&self) -> u64 {
        self.file_len
    }

    /// The embedded LUKS header's bytes (the whole region the encryption header pointer names), if encrypted.
    pub fn luks_region(&self) -> Result<Option<Vec<u8>>> {
        let Some(fde) = self.header.fde else { return Ok(None) };
        let mut bytes = vec![0u8; fde.length as usize];
        self.file.read_exact_at(&mut bytes, fde.offset).map_err(Error::io("reading the embedded LUKS header"))?;
        Ok(Some(bytes))
    }

    /// Keys the data cipher (after the LUKS header was unlocked); `threads` for the sector-parallel XTS.
    pub fn set_cipher(&mut self, cipher: XtsPlain64, threads: usize) {
        self.cipher = Some(cipher);
        self.threads = threads.max(1);
    }

    /// Guest clusters that hold data, every pointer checked on the way. Each distinct L2 table is read once (an
    /// L1 table whose entries share one L2 table costs one table, not one per entry), so the work is bounded by
    /// the file's size, not by a crafted virtual size.
    pub fn count_allocated(&mut self) -> Result<u64> {
        let cs = self.header.cluster_size();
        let per_l2 = self.l2_entries() as u64;
        let clusters = self.header.size.div_ceil(cs);
        let mut seen: std::collections::HashMap<(u64, u64), u64> = std::collections::HashMap::new();
        let mut total = 0u64;
        for l1_index in 0..self.l1.len() as u64 {
            let first = l1_index * per_l2;
            if first >= clusters {
                break;
            }
            let offset = self.l1[l1_index as usize] & OFFSET_MASK;
            if offset == 0 {
                continue;
            }
            let count = per_l2.min(clusters - first);
            if let Some(n) = seen.get(&(offset, count)) {
                total += n;
                continue;
            }
            let mut n = 0;
            for index in first..first + count {
                if let Mapping::Data(_) = self.mapping(index)? {
                    n += 1;
                }
            }
            seen.insert((offset, count), n);
            total += n;
        }
        Ok(total)
    }

    /// Threads for the sector-parallel XTS.
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
    }

    fn l2_entries(&self) -> usize {
        (self.header.cluster_size() / 8) as usize
    }

    /// The mapping of guest cluster `index`.
    pub fn mapping(&mut self, index: u64) -> Result<Mapping> {
        let per_l2 = self.l2_entries() as u64;
        let l1_index = (index / per_l2) as usize;
        let Some(&l1_entry) = self.l1.get(l1_index) else {
            return Err(Error::corrupt(format!("guest cluster {index} is beyond the L1 table")));
        };
        let l2_offset = l1_entry & OFFSET_MASK;
        if l2_offset == 0 {
            return Ok(Mapping::Zero);
        }
        if self.l2.as_ref().is_none_or(|(i, _)| *i != l1_index) {
            let mut raw = vec![0u8; self.header.cluster_size() as usize];
            self.file.read_exact_at(&mut raw, l2_offset).map_err(|e| match e.kind() {
                std::io::ErrorKind::UnexpectedEof => {
                    Error::Truncated(format!("the L2 table at {l2_offset:#x} is cut short"))
                }
                _ => Error::Io { context: "reading an L2 table".into(), source: e },
            })?;
            let table = raw.chunks_exact(8).map(|c| u64::from_be_bytes(c.try_into().expect("8"))).collect();
            self.l2 = Some((l1_index, table));
        }
        let (_, table) = self.l2.as_ref().expect("loaded");
        let entry = table[(index % per_l2) as usize];
        if entry & COMPRESSED != 0 {
            return Err(Error::unsupported(
                format!("a compressed cluster (guest offset {:#x})", index * self.header.cluster_size()),
                "decompress it first: `qemu-img convert -O qcow2` without -c",
            ));
        }
        if entry & ZERO != 0 && self.header.version >= 3 {
            return Ok(Mapping::Zero);
        }
        let host = entry & OFFSET_MASK;
        if host == 0 {
            return Ok(Mapping::Zero);
        }
        let cs = self.header.cluster_size();
        let guest_left = self.header.size - index * cs;
        let needed = guest_left.min(cs).div_ceil(512) * 512;
        header::within(host, needed, cs, self.file_len, &format!("the data of guest cluster {index}"))?;
        Ok(Mapping::Data(host))
    }
}

impl super::stream::Source for Qcow2Reader {
    fn len(&self) -> u64 {
        self.header.size
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let cs = self.header.cluster_size();
        debug_assert!(offset.is_multiple_of(512));
        let end = offset + buf.len() as u64;
        // Runs of guest clusters stored back to back on the host are read and decrypted in one go.
        let mut run: Option<(usize, u64, usize)> = None; // (start in buf, host offset, length)
        let mut pos = offset;
        while pos < end {
            let index = pos / cs;
            let within = pos % cs;
            let n = (cs - within).min(end - pos) as usize;
            let at = (pos - offset) as usize;
            match self.mapping(index)? {
                Mapping::Zero => {
                    self.flush_run(run.take(), buf)?;
                    buf[at..at + n].fill(0);
                }
                Mapping::Data(host) => {
                    let host = host + within;
                    run = match run {
                        Some((s, h, l)) if h + l as u64 == host => Some((s, h, l + n)),
                        other => {
                            self.flush_run(other, buf)?;
                            Some((at, host, n))
                        }
                    };
                }
            }
            pos += n as u64;
        }
        self.flush_run(run, buf)
    }

    fn next_data(&mut self, offset: u64) -> Result<u64> {
        let cs = self.header.cluster_size();
        let per_l2 = self.l2_entries() as u64;
        let clusters = self.header.size.div_ceil(cs);
        let mut index = offset / cs;
        while index < clusters {
            let l1_index = (index / per_l2) as usize;
            if self.l1.get(l1_index).is_none_or(|e| e & OFFSET_MASK == 0) {
                index = (l1_index as u64 + 1) * per_l2;
                continue;
            }
            if let Mapping::Data(_) = self.mapping(index)? {
                return Ok((index * cs).max(offset));
            }
            index += 1;
        }
        Ok(self.header.size)
    }
}

impl Qcow2Reader {
    fn flush_run(&self, run: Option<(usize, u64, usize)>, buf: &mut [u8]) -> Result<()> {
        let Some((start, host, len)) = run else { return Ok(()) };
        match &self.cipher {
            None if self.header.fde.is_some() => {
                Err(Error::InvalidParameter("the image is encrypted and was not unlocked".into()))
            }
            None => {
                read_exact(&self.file, &mut buf[start..start + len], host)?;
                Ok(())
            }
            Some(cipher) => {
                // Whole 512-byte sectors: the last guest sector may be partial only in `buf`, never on the host.
                let padded = len.div_ceil(512) * 512;
                if padded == len {
                    let slice = &mut buf[start..start + len];
                    read_exact(&self.file, slice, host)?;
                    cipher.decrypt_units_parallel(slice, 512, host / 512, self.threads);
                } else {
                    let mut tmp = cryptadm_bulk::SecretBuf::zeroed(padded);
                    read_exact(&self.file, &mut tmp, host)?;
                    cipher.decrypt_units_parallel(&mut tmp, 512, host / 512, self.threads);
                    buf[start..start + len].copy_from_slice(&tmp[..len]);
                }
                Ok(())
            }
        }
    }
}

fn read_exact(file: &File, buf: &mut [u8], at: u64) -> Result<()> {
    file.read_exact_at(buf, at).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => Error::Truncated(format!("data at {at:#x} is cut short")),
        _ => Error::Io { context: "reading a data cluster".into(), source: e },
    })
}
