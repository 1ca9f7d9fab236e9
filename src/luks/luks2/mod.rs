//! LUKS2: both header copies read, checked and chosen (docs/formats.md), and written back in cryptsetup's order.

pub mod binary;
pub mod json;

use super::{Error, Result};
use binary::{BINARY_SIZE, BinaryHeader, HDR_SIZES, MAGIC_SECONDARY};
use json::Metadata;
use std::fs::File;
use std::os::unix::fs::FileExt;

/// A LUKS2 header as held in memory: the fields both copies share, each copy's salt, and the JSON.
#[derive(Clone, Debug)]
pub struct Header {
    /// Binary header + JSON area, per copy.
    pub hdr_size: u64,
    /// The seqid of the copy we use.
    pub seqid: u64,
    /// Label.
    pub label: String,
    /// Subsystem.
    pub subsystem: String,
    /// Text UUID.
    pub uuid: String,
    /// Checksum hash of both copies.
    pub checksum_alg: String,
    /// Salt of the primary copy.
    pub primary_salt: [u8; 64],
    /// Salt of the secondary copy.
    pub secondary_salt: [u8; 64],
    /// The JSON metadata.
    pub meta: Metadata,
}

/// What reading found about each copy.
#[derive(Clone, Debug, Default)]
pub struct CopyState {
    /// Why the primary copy is unusable, if it is.
    pub primary_problem: Option<String>,
    /// Why the secondary copy is unusable, if it is.
    pub secondary_problem: Option<String>,
    /// A valid copy with a lower seqid than the other (cryptsetup would rewrite it).
    pub stale: Option<&'static str>,
}

struct Copy {
    binary: BinaryHeader,
    meta: Metadata,
}

/// Reads the copy at `offset`; errors say what is wrong with it.
fn read_copy(file: &File, device_len: u64, offset: u64) -> Result<Copy> {
    if device_len < offset + BINARY_SIZE as u64 {
        return Err(Error::Truncated(format!("the header copy at {offset} is cut off")));
    }
    let mut raw = vec![0u8; BINARY_SIZE];
    file.read_exact_at(&mut raw, offset).map_err(Error::io("reading a LUKS2 header"))?;
    let binary = BinaryHeader::parse(&raw, offset)?;
    let json_len = binary.hdr_size - BINARY_SIZE as u64;
    if device_len < offset + binary.hdr_size {
        return Err(Error::Truncated(format!("the JSON area at {} is cut off", offset + BINARY_SIZE as u64)));
    }
    let mut area = vec![0u8; json_len as usize];
    file.read_exact_at(&mut area, offset + BINARY_SIZE as u64).map_err(Error::io("reading LUKS2 JSON metadata"))?;
    if !binary::raw_checksum_matches(&raw, &area, &binary.checksum_alg)? {
        return Err(Error::corrupt("checksum mismatch"));
    }
    let text_len = area.iter().position(|&b| b == 0).ok_or_else(|| Error::corrupt("JSON area not NUL-terminated"))?;
    if area[text_len..].iter().any(|&b| b != 0) {
        return Err(Error::corrupt("bytes after the JSON text"));
    }
    let meta = Metadata::parse(&area[..text_len])?;
    meta.validate(binary.hdr_size)?;
    Ok(Copy { binary, meta })
}

/// Whether the device starts like a LUKS2 header: the primary's magic with version 2, or (primary destroyed) a
/// secondary magic at one of the allowed offsets.
pub fn probe_secondary(file: &File, device_len: u64) -> Option<u64> {
    HDR_SIZES.iter().copied().find(|&offset| {
        let mut magic = [0u8; 6];
        offset + BINARY_SIZE as u64 <= device_len
            && file.read_exact_at(&mut magic, offset).is_ok()
            && magic == MAGIC_SECONDARY
    })
}

/// Reads both copies and picks the valid one with the higher seqid.
pub fn read(file: &File, device_len: u64) -> Result<(Header, CopyState)> {
    let mut state = CopyState::default();
    let primary = read_copy(file, device_len, 0).map_err(|e| state.primary_problem = Some(e.to_string())).ok();
    let secondary_offset = match &primary {
        Some(p) => Some(p.binary.hdr_size),
        None => probe_secondary(file, device_len),
    };
    let secondary = match secondary_offset {
        Some(offset) => read_copy(file, device_len, offset).map_err(|e| e.to_string()),
        None => Err("no secondary header found".to_owned()),
    };
    let secondary = secondary.map_err(|e| state.secondary_problem = Some(e)).ok();
    let chosen = match (primary, secondary) {
        (Some(p), Some(s)) => {
            if p.binary.seqid != s.binary.seqid {
                state.stale = Some(if p.binary.seqid > s.binary.seqid { "secondary" } else { "primary" });
            }
            let salts = (p.binary.salt, s.binary.salt);
            let mut newer = if p.binary.seqid >= s.binary.seqid { p } else { s };
            newer.binary.salt = salts.0;
            (newer, salts.1)
        }
        (Some(p), None) => (p, crate::crypto::random::bytes::<64>()),
        (None, Some(s)) => {
            let salt = s.binary.salt;
            let mut s = s;
            s.binary.salt = crate::crypto::random::bytes::<64>();
            (s, salt)
        }
        (None, None) => {
            let both = format!(
                "both header copies are invalid (primary: {}; secondary: {})",
                state.primary_problem.as_deref().unwrap_or("?"),
                state.secondary_problem.as_deref().unwrap_or("?")
            );
            let truncated = device_len < 2 * HDR_SIZES[0];
            return Err(if truncated { Error::Truncated(both) } else { Error::corrupt(both) });
        }
    };
    let (copy, secondary_salt) = chosen;
    let header = Header {
        hdr_size: copy.binary.hdr_size,
        seqid: copy.binary.seqid,
        label: copy.binary.label,
        subsystem: copy.binary.subsystem,
        uuid: copy.binary.uuid,
        checksum_alg: copy.binary.checksum_alg,
        primary_salt: copy.binary.salt,
        secondary_salt,
        meta: copy.meta,
    };
    Ok((header, state))
}

impl Header {
    /// The serialized JSON area (text then NULs), after checking the metadata is valid and fits.
    pub fn json_area(&self) -> Result<Vec<u8>> {
        self.meta.validate(self.hdr_size)?;
        let mut area = self.meta.to_json();
        let size = (self.hdr_size as usize) - BINARY_SIZE;
        if area.len() >= size {
            return Err(Error::InvalidParameter(format!(
                "the JSON metadata ({} bytes) does not fit its {size}-byte area",
                area.len()
            )));
        }
        area.resize(size, 0);
        Ok(area)
    }

    /// Both on-disk copies (primary, secondary) for the current seqid.
    pub fn copies(&self) -> Result<[Vec<u8>; 2]> {
        let area = self.json_area()?;
        let copy = |secondary: bool| {
            let mut binary = BinaryHeader {
                secondary,
                hdr_size: self.hdr_size,
                seqid: self.seqid,
                label: self.label.clone(),
                checksum_alg: self.checksum_alg.clone(),
                salt: if secondary { self.secondary_salt } else { self.primary_salt },
                uuid: self.uuid.clone(),
                subsystem: self.subsystem.clone(),
                hdr_offset: if secondary { self.hdr_size } else { 0 },
                csum: [0u8; 64],
            };
            binary.seal(&area)
        };
        Ok([copy(false)?, copy(true)?])
    }

    /// Writes both copies with seqid + 1: primary, fsync, secondary, fsync — so one valid copy exists at every
    /// instant. Unless `fresh` (formatting), first checks that the on-disk seqid is still the one we read.
    pub fn write(&mut self, file: &File, fresh: bool) -> Result<()> {
        self.write_observed(file, fresh, &mut || {})
    }

    /// [`Header::write`], calling `between_copies` once the primary copy is written and flushed and before the
    /// secondary is written.
    pub fn write_observed(&mut self, file: &File, fresh: bool, between_copies: &mut dyn FnMut()) -> Result<()> {
        if !fresh {
            self.check_unchanged_on_disk(file)?;
        }
        let previous = self.seqid;
        self.seqid += 1;
        let copies = match self.copies() {
            Ok(copies) => copies,
            Err(e) => {
                self.seqid = previous;
                return Err(e);
            }
        };
        for (n, (copy, offset)) in copies.iter().zip([0, self.hdr_size]).enumerate() {
            if n == 1 {
                between_copies();
            }
            file.write_all_at(copy, offset).map_err(Error::io("writing a LUKS2 header copy"))?;
            file.sync_data().map_err(Error::io("flushing a LUKS2 header copy"))?;
        }
        Ok(())
    }

    /// cryptsetup's guard against concurrent updates: the newest valid copy on disk must have our seqid.
    pub fn check_unchanged_on_disk(&self, file: &File) -> Result<()> {
        let len = device_len(file)?;
        let found = [0, self.hdr_size]
            .iter()
            .filter_map(|&offset| read_copy(file, len, offset).ok())
            .map(|c| c.binary.seqid)
            .max();
        match found {
            Some(found) if found != self.seqid => Err(Error::ConcurrentUpdate { expected: self.seqid, found }),
            _ => Ok(()),
        }
    }

    /// Offset where the keyslots area starts.
    pub fn keyslots_start(&self) -> u64 {
        2 * self.hdr_size
    }
}

/// Length of a file or block device (seeking to the end works for both).
pub fn device_len(file: &File) -> Result<u64> {
    use std::io::Seek;
    let mut handle = file;
    handle.seek(std::io::SeekFrom::End(0)).map_err(Error::io("finding the device size"))
}
