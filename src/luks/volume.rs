//! [`Volume`]: an opened LUKS1 or LUKS2 header plus the device handle, with unlock and keyslot changes.
//!
//! Every mutation follows cryptsetup's order so a crash never leaves a volume that no key opens: adding writes
//! and flushes the keyslot material before the header that references it; removing destroys the material (its
//! first sector zeroed: a mark a rerun recognises), wipes and flushes it before the header that drops it; LUKS2
//! writes the primary copy, flushes, then the secondary.

use super::hash::Hash;
use super::keyslot::{self, Material};
use super::luks2::json::{self, Id, KdfJson};
use super::luks2::{self, CopyState};
use super::{Error, Kdf, KeyslotSummary, Result, Version, VolumeKey, af, digest, luks1};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Bytes at the start of a keyslot's material that [`Volume::wipe_keyslot`] zeroes: one sector.
const WIPE_MARK: u64 = 512;

/// The parsed header of either version.
#[derive(Clone, Debug)]
enum Header {
    V1(luks1::Header),
    V2(luks2::Header),
}

/// An opened LUKS1 or LUKS2 header on an image file or block device, with the device handle.
#[derive(Debug)]
pub struct Volume {
    file: File,
    device_len: u64,
    header: Header,
    copies: CopyState,
    observer: WriteObserver,
}

/// The steps of adding a keyslot (with its token), in order, that [`Volume::observe_writes`] is told of: what is
/// on the device when each is reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteStep {
    /// Nothing written yet (the new keyslot's passphrase is ready).
    BeforeKeyslotMaterial,
    /// The new keyslot's material is written and flushed in a free area that no header names yet.
    BeforeHeaderWrite,
    /// LUKS2: the primary header copy (the new keyslot and its token, a higher seqid) is written and flushed, the
    /// secondary copy is still the old one.
    BetweenHeaderCopies,
    /// Every header copy is written and flushed.
    AfterHeaderWrite,
}

impl WriteStep {
    /// The step's name (for `CRYPTADM_FAULT_POINT` and log lines).
    pub fn name(self) -> &'static str {
        match self {
            WriteStep::BeforeKeyslotMaterial => "before-keyslot-material",
            WriteStep::BeforeHeaderWrite => "before-header-write",
            WriteStep::BetweenHeaderCopies => "between-header-copies",
            WriteStep::AfterHeaderWrite => "after-header-write",
        }
    }
}

/// What [`Volume::observe_writes`] installed.
#[derive(Default)]
struct WriteObserver(Option<Box<dyn FnMut(WriteStep) + Send>>);

impl std::fmt::Debug for WriteObserver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "WriteObserver(set)" } else { "WriteObserver(none)" })
    }
}

impl WriteObserver {
    fn tell(&mut self, step: WriteStep) {
        if let Some(observer) = &mut self.0 {
            observer(step);
        }
    }
}

/// Where the encrypted data lives and how it is encrypted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PayloadInfo {
    /// Byte offset of the first data unit.
    pub offset: u64,
    /// Bytes of payload (the rest of the device for a `dynamic` segment).
    pub len: u64,
    /// dm-crypt cipher spec.
    pub cipher: String,
    /// Encryption unit in bytes.
    pub sector_size: u32,
    /// IV of the first unit, in 512-byte sectors.
    pub iv_tweak: u64,
}

impl Volume {
    /// Opens read-only (for inspect/unlock) or read-write.
    pub fn open(path: &Path, writable: bool) -> Result<Volume> {
        let file = OpenOptions::new()
            .read(true)
            .write(writable)
            .open(path)
            .map_err(Error::io(format!("opening `{}`", path.display())))?;
        Volume::from_file(file)
    }

    /// Reads the header of an already opened file or device.
    pub fn from_file(file: File) -> Result<Volume> {
        let device_len = luks2::device_len(&file)?;
        let (header, copies) = read_header(&file, device_len)?;
        let volume = Volume { file, device_len, header, copies, observer: WriteObserver::default() };
        volume.check_length()?;
        Ok(volume)
    }

    /// The header format version.
    pub fn version(&self) -> Version {
        match self.header {
            Header::V1(_) => Version::Luks1,
            Header::V2(_) => Version::Luks2,
        }
    }

    /// The volume UUID as written in the header.
    pub fn uuid(&self) -> &str {
        match &self.header {
            Header::V1(h) => &h.uuid,
            Header::V2(h) => &h.uuid,
        }
    }

    /// The LUKS2 sequence id of the copy in use; 0 for LUKS1.
    pub fn seqid(&self) -> u64 {
        match &self.header {
            Header::V1(_) => 0,
            Header::V2(h) => h.seqid,
        }
    }

    /// Whether the primary LUKS2 copy was unusable and the secondary one was used.
    pub fn repaired_from_secondary(&self) -> bool {
        self.copies.primary_problem.is_some()
    }

    /// What reading found wrong with the individual header copies (for warnings).
    pub fn copy_state(&self) -> &CopyState {
        &self.copies
    }

    /// The LUKS1 header, for inspection.
    pub fn luks1_header(&self) -> Option<&luks1::Header> {
        match &self.header {
            Header::V1(h) => Some(h),
            Header::V2(_) => None,
        }
    }

    /// The LUKS2 header, for inspection.
    pub fn luks2_header(&self) -> Option<&luks2::Header> {
        match &self.header {
            Header::V1(_) => None,
            Header::V2(h) => Some(h),
        }
    }

    /// The underlying file, so a caller can `flock()` it for the whole operation.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Bytes of the device.
    pub fn device_len(&self) -> u64 {
        self.device_len
    }

    /// Active keyslots, ascending id.
    pub fn keyslots(&self) -> Vec<KeyslotSummary> {
        match &self.header {
            Header::V1(h) => h
                .keyslots
                .iter()
                .enumerate()
                .filter(|(_, k)| k.active)
                .map(|(i, k)| KeyslotSummary {
                    id: i as u32,
                    kdf: Kdf::Pbkdf2 { hash: h.hash_spec.clone(), iterations: k.iterations },
                })
                .collect(),
            Header::V2(h) => h
                .meta
                .keyslots
                .iter()
                .filter_map(|(id, slot)| Some(KeyslotSummary { id: id.0, kdf: kdf_of(slot.kdf.as_ref()?) }))
                .collect(),
        }
    }

    /// Tries every active keyslot (like `cryptsetup open --test-passphrase`): preferred (priority 2) slots
    /// first, slots with priority 0 never. Returns the first that opens.
    pub fn unlock(&self, passphrase: &[u8]) -> Result<(u32, VolumeKey)> {
        for id in self.unlock_order() {
            match self.unlock_keyslot(id, passphrase) {
                Ok(key) => return Ok((id, key)),
                Err(Error::WrongPassphrase(_)) => continue,
                Err(e) => return Err(e),
            }
        }
        Err(Error::NoKeyslotOpens)
    }

    fn unlock_order(&self) -> Vec<u32> {
        match &self.header {
            Header::V1(_) => self.keyslots().iter().map(|k| k.id).collect(),
            Header::V2(h) => {
                let with_priority = |p: i64| {
                    h.meta
                        .keyslots
                        .iter()
                        .filter(move |(_, s)| s.kind == "luks2" && s.priority.unwrap_or(1) == p)
                        .map(|(id, _)| id.0)
                };
                with_priority(2).chain(with_priority(1)).collect()
            }
        }
    }

    /// Tries one keyslot; reads its material from the device (so it also verifies what was written).
    pub fn unlock_keyslot(&self, id: u32, passphrase: &[u8]) -> Result<VolumeKey> {
        match &self.header {
            Header::V1(h) => unlock_luks1(&self.file, h, id, passphrase),
            Header::V2(h) => unlock_luks2(&self.file, h, id, passphrase),
        }
    }

    /// Whether `key` is this volume's key (it matches the digest of the data segment).
    pub fn key_matches(&self, key: &VolumeKey) -> Result<bool> {
        match &self.header {
            Header::V1(h) => Ok(key.len() == h.key_bytes as usize
                && digest::matches(
                    Hash::from_name(&h.hash_spec)?,
                    h.mk_digest_iterations,
                    &h.mk_digest_salt,
                    &h.mk_digest,
                    key.as_bytes(),
                )?),
            Header::V2(h) => {
                let (_, d) = h.meta.segment_digest().ok_or_else(|| Error::corrupt("no digest for the data segment"))?;
                digest::matches(Hash::from_name(&d.hash)?, d.iterations, &d.salt.0, &d.digest.0, key.as_bytes())
            }
        }
    }

    /// Calls `observer` at each [`WriteStep`] of the keyslot additions and header writes that follow (the
    /// fault-injection tests of `disk tpm2-enroll` and `disk clevis-bind` abort the process there, as a crash would).
    pub fn observe_writes(&mut self, observer: impl FnMut(WriteStep) + Send + 'static) {
        self.observer = WriteObserver(Some(Box::new(observer)));
    }

    /// Adds a keyslot for `passphrase` in the lowest free id, with `kdf` (fresh salt), for this volume key.
    pub fn add_keyslot(&mut self, key: &VolumeKey, passphrase: &[u8], kdf: &Kdf) -> Result<u32> {
        kdf.check_limits()?;
        if !self.key_matches(key)? {
            return Err(Error::VolumeKeyMismatch);
        }
        self.check_unchanged_on_disk()?;
        let mut header = self.header.clone();
        self.observer.tell(WriteStep::BeforeKeyslotMaterial);
        let id = match &mut header {
            Header::V1(h) => add_luks1(&self.file, h, key, passphrase, kdf)?,
            Header::V2(h) => add_luks2(&self.file, h, key, passphrase, kdf)?,
        };
        self.write_header(header)?;
        Ok(id)
    }

    /// Adds a keyslot for `passphrase` (as [`Volume::add_keyslot`]) and, in the same header write, a LUKS2 token
    /// `{"type": kind, "keyslots": ["N"], …fields}` naming it (as `clevis luks bind` does with `cryptsetup token
    /// import`), so a crash leaves either neither or both. LUKS2 only. Returns (keyslot id, token id).
    pub fn add_keyslot_with_token(
        &mut self,
        key: &VolumeKey,
        passphrase: &[u8],
        kdf: &Kdf,
        kind: &str,
        fields: serde_json::Map<String, serde_json::Value>,
    ) -> Result<(u32, u32)> {
        kdf.check_limits()?;
        if !self.key_matches(key)? {
            return Err(Error::VolumeKeyMismatch);
        }
        self.check_unchanged_on_disk()?;
        let mut header = self.header.clone();
        let Header::V2(h) = &mut header else {
            return Err(Error::unsupported("tokens on a LUKS1 volume (LUKS1 has no tokens)"));
        };
        let token_id = (0..json::MAX_TOKENS)
            .find(|i| !h.meta.tokens.contains_key(&Id(*i)))
            .ok_or_else(|| Error::unsupported("a new token: all 32 token ids are in use"))?;
        self.observer.tell(WriteStep::BeforeKeyslotMaterial);
        let slot = add_luks2(&self.file, h, key, passphrase, kdf)?;
        h.meta.tokens.insert(Id(token_id), json::Token { kind: kind.into(), keyslots: vec![Id(slot)], extra: fields });
        self.write_header(header)?;
        Ok((slot, token_id))
    }

    /// The LUKS2 tokens, by id (none on LUKS1).
    pub fn tokens(&self) -> Vec<(u32, &json::Token)> {
        match &self.header {
            Header::V1(_) => Vec::new(),
            Header::V2(h) => h.meta.tokens.iter().map(|(id, token)| (id.0, token)).collect(),
        }
    }

    /// Where keyslot `id`'s material is: (offset, length) in bytes.
    fn material_area(&self, id: u32) -> Result<(u64, u64)> {
        match &self.header {
            Header::V1(h) => {
                let slot = h.keyslots.get(id as usize).filter(|k| k.active).ok_or(Error::KeyslotNotActive(id))?;
                Ok((u64::from(slot.key_material_offset) * 512, slot.material_sectors(h.key_bytes) * 512))
            }
            Header::V2(h) => {
                let slot = h.meta.keyslots.get(&Id(id)).ok_or(Error::KeyslotNotActive(id))?;
                Ok((slot.area.offset.0, slot.area.size.0))
            }
        }
    }

    /// The first stage of [`Volume::remove_keyslot`]: destroys keyslot `id`'s material by zeroing its first
    /// sector, flushed. The anti-forensic split needs every stripe, so no passphrase opens the slot afterwards,
    /// and the zero sector marks it as one whose removal was interrupted ([`Volume::keyslot_wiped`]) until the
    /// header drops it: encrypted material is never 512 zero bytes. Refuses the only active keyslot.
    pub fn wipe_keyslot(&mut self, id: u32) -> Result<()> {
        let active = self.keyslots();
        if !active.iter().any(|k| k.id == id) {
            return Err(Error::KeyslotNotActive(id));
        }
        if active.len() == 1 {
            return Err(Error::LastKeyslot(id));
        }
        self.check_unchanged_on_disk()?;
        let (offset, len) = self.material_area(id)?;
        keyslot::zero(&self.file, offset, WIPE_MARK.min(len))
    }

    /// Whether keyslot `id` is still in the header but its material was destroyed by [`Volume::wipe_keyslot`]
    /// (a removal a crash interrupted): its first sector is all zeros. Such a slot opens with no passphrase.
    pub fn keyslot_wiped(&self, id: u32) -> Result<bool> {
        let (offset, len) = self.material_area(id)?;
        let mut first = vec![0u8; WIPE_MARK.min(len) as usize];
        self.file.read_exact_at(&mut first, offset).map_err(Error::io("reading keyslot material"))?;
        Ok(!first.is_empty() && first.iter().all(|b| *b == 0))
    }

    /// Removes a keyslot in cryptsetup's order, made recognisable at every instant: destroy the material first
    /// ([`Volume::wipe_keyslot`]: the first sector zeroed and flushed, which marks the slot as wiped), overwrite
    /// the rest of the area with random data and flush, then drop the slot from keyslots, digests and tokens and
    /// write the header(s). A crash before the header write leaves a slot that [`Volume::keyslot_wiped`]
    /// recognises, so a rerun can finish removing it; the material is never left intact once the header no
    /// longer names it. Refuses to remove the only active keyslot.
    pub fn remove_keyslot(&mut self, id: u32) -> Result<()> {
        self.wipe_keyslot(id)?;
        let (offset, len) = self.material_area(id)?;
        let mark = WIPE_MARK.min(len);
        keyslot::wipe(&self.file, offset + mark, len - mark)?;
        let mut header = self.header.clone();
        match &mut header {
            Header::V1(h) => {
                let slot = &mut h.keyslots[id as usize];
                slot.active = false;
                slot.iterations = 0;
                slot.salt = [0; 32];
            }
            Header::V2(h) => {
                h.meta.keyslots.remove(&Id(id));
                for d in h.meta.digests.values_mut() {
                    d.keyslots.retain(|k| k.0 != id);
                }
                for t in h.meta.tokens.values_mut() {
                    t.keyslots.retain(|k| k.0 != id);
                }
            }
        }
        self.write_header(header)
    }

    /// Re-reads the header(s) from the device.
    pub fn reload(&mut self) -> Result<()> {
        self.device_len = luks2::device_len(&self.file)?;
        let (header, copies) = read_header(&self.file, self.device_len)?;
        self.header = header;
        self.copies = copies;
        self.check_length()
    }

    /// Refuses to touch keyslot areas when another writer changed the header since we read it: its new keyslot
    /// could live in the area we are about to use. (A caller that holds a `flock` for the whole operation never
    /// sees this; it guards against writers that do not lock.)
    fn check_unchanged_on_disk(&self) -> Result<()> {
        match &self.header {
            Header::V1(h) => {
                let mut on_disk = [0u8; luks1::HEADER_SIZE];
                self.file.read_exact_at(&mut on_disk, 0).map_err(Error::io("re-reading the LUKS1 header"))?;
                if luks1::Header::parse(&on_disk).ok().as_ref() != Some(h) {
                    return Err(Error::ConcurrentUpdate { expected: 0, found: 0 });
                }
                Ok(())
            }
            Header::V2(h) => h.check_unchanged_on_disk(&self.file),
        }
    }

    /// Writes `header` durably and makes it the current one.
    fn write_header(&mut self, header: Header) -> Result<()> {
        let mut header = header;
        self.observer.tell(WriteStep::BeforeHeaderWrite);
        match &mut header {
            Header::V1(h) => {
                h.check_layout()?;
                self.file.write_all_at(&h.to_bytes(), 0).map_err(Error::io("writing the LUKS1 header"))?;
                self.file.sync_data().map_err(Error::io("flushing the LUKS1 header"))?;
            }
            Header::V2(h) => {
                let observer = &mut self.observer;
                h.write_observed(&self.file, false, &mut || observer.tell(WriteStep::BetweenHeaderCopies))?;
            }
        }
        self.header = header;
        self.copies = CopyState::default();
        self.observer.tell(WriteStep::AfterHeaderWrite);
        Ok(())
    }

    /// Whether this is a detached header (`cryptsetup luksFormat --header HDR DATA`): its data segment starts
    /// inside the header area, because the data is on another device.
    pub fn is_detached_header(&self) -> bool {
        match &self.header {
            Header::V1(h) => h.payload_offset == 0,
            Header::V2(h) => h.meta.segments.values().any(|s| s.offset.0 < 2 * h.hdr_size),
        }
    }

    /// Where the payload lives. A detached header is refused: its payload is not in this file, and reading
    /// "the data" from offset 0 would decrypt the header itself into garbage.
    pub fn payload(&self) -> Result<PayloadInfo> {
        if self.is_detached_header() {
            return Err(Error::DetachedHeader);
        }
        match &self.header {
            Header::V1(h) => {
                let offset = u64::from(h.payload_offset) * 512;
                Ok(PayloadInfo {
                    offset,
                    len: self.device_len.saturating_sub(offset),
                    cipher: h.cipher_spec(),
                    sector_size: 512,
                    iv_tweak: 0,
                })
            }
            Header::V2(h) => {
                if !h.meta.config.mandatory_requirements().is_empty() {
                    return Err(Error::unsupported(format!(
                        "header requirements {:?} (a reencryption in progress?)",
                        h.meta.config.mandatory_requirements()
                    )));
                }
                if h.meta.segments.len() != 1 {
                    return Err(Error::unsupported("more than one data segment"));
                }
                let seg = h.meta.segments.values().next().expect("one segment");
                if seg.kind != "crypt" || seg.integrity.is_some() {
                    return Err(Error::unsupported(format!("segment type `{}` or integrity protection", seg.kind)));
                }
                let offset = seg.offset.0;
                let len = match seg.size {
                    json::SegmentSize::Dynamic => self.device_len.saturating_sub(offset),
                    json::SegmentSize::Bytes(n) => n,
                };
                Ok(PayloadInfo {
                    offset,
                    len,
                    cipher: seg.encryption.clone().unwrap_or_default(),
                    sector_size: seg.sector_size.unwrap_or(512),
                    iv_tweak: seg.iv_tweak.map_or(0, |t| t.0),
                })
            }
        }
    }

    /// An image shorter than its header says is truncated: refuse it rather than read past the end.
    fn check_length(&self) -> Result<()> {
        let needed = match &self.header {
            Header::V1(h) => u64::from(h.payload_offset) * 512,
            Header::V2(h) => {
                let segments = h.meta.segments.values().map(|s| match s.size {
                    json::SegmentSize::Dynamic => s.offset.0,
                    json::SegmentSize::Bytes(n) => s.offset.0.saturating_add(n),
                });
                let areas = h.meta.keyslots.values().map(|k| k.area.offset.0.saturating_add(k.area.size.0));
                segments.chain(areas).max().unwrap_or(0)
            }
        };
        if self.device_len < needed {
            return Err(Error::Truncated(format!("{} bytes, but the header describes {needed}", self.device_len)));
        }
        Ok(())
    }
}

/// Reads a LUKS1 header or both LUKS2 copies.
fn read_header(file: &File, device_len: u64) -> Result<(Header, CopyState)> {
    let mut first = vec![0u8; luks1::HEADER_SIZE.min(device_len as usize)];
    file.read_exact_at(&mut first, 0).map_err(Error::io("reading the LUKS header"))?;
    let has_magic = first.len() >= 6 && first[..6] == luks1::MAGIC;
    let version = if first.len() >= 8 { u16::from_be_bytes([first[6], first[7]]) } else { 0 };
    if has_magic && version == 1 {
        if first.len() < luks1::HEADER_SIZE {
            return Err(Error::Truncated("the LUKS1 header is cut off".into()));
        }
        return Ok((Header::V1(luks1::Header::parse(&first)?), CopyState::default()));
    }
    if (has_magic && version == 2) || luks2::probe_secondary(file, device_len).is_some() {
        let (header, state) = luks2::read(file, device_len)?;
        return Ok((Header::V2(header), state));
    }
    if has_magic {
        return Err(Error::unsupported(format!("LUKS version {version}")));
    }
    if first.len() < 6 && device_len > 0 && b"LUKS\xba\xbe".starts_with(&first) {
        return Err(Error::Truncated("the LUKS header is cut off".into()));
    }
    Err(Error::NotLuks("no LUKS header at the start of the device".into()))
}

fn kdf_of(json: &KdfJson) -> Kdf {
    match json {
        KdfJson::Pbkdf2 { hash, iterations, .. } => Kdf::Pbkdf2 { hash: hash.clone(), iterations: *iterations },
        KdfJson::Argon2i { time, memory, cpus, .. } => {
            Kdf::Argon2i { time: *time, memory_kib: *memory, parallel: *cpus }
        }
        KdfJson::Argon2id { time, memory, cpus, .. } => {
            Kdf::Argon2id { time: *time, memory_kib: *memory, parallel: *cpus }
        }
    }
}

fn kdf_json(kdf: &Kdf, salt: [u8; 32]) -> KdfJson {
    let salt = json::B64(salt.to_vec());
    match kdf.clone() {
        Kdf::Pbkdf2 { hash, iterations } => KdfJson::Pbkdf2 { hash, iterations, salt },
        Kdf::Argon2i { time, memory_kib, parallel } => {
            KdfJson::Argon2i { time, memory: memory_kib, cpus: parallel, salt }
        }
        Kdf::Argon2id { time, memory_kib, parallel } => {
            KdfJson::Argon2id { time, memory: memory_kib, cpus: parallel, salt }
        }
    }
}

fn unlock_luks1(file: &File, h: &luks1::Header, id: u32, passphrase: &[u8]) -> Result<VolumeKey> {
    let slot = h.keyslots.get(id as usize).filter(|k| k.active).ok_or(Error::KeyslotNotActive(id))?;
    let hash = Hash::from_name(&h.hash_spec)?;
    let cipher = h.cipher_spec();
    let material = Material {
        cipher: &cipher,
        cipher_key_len: h.key_bytes as usize,
        key_len: h.key_bytes as usize,
        stripes: slot.stripes,
        af_hash: hash,
        offset: u64::from(slot.key_material_offset) * 512,
    };
    let kdf = Kdf::Pbkdf2 { hash: h.hash_spec.clone(), iterations: slot.iterations };
    let candidate = material.recover(file, &kdf, &slot.salt, passphrase)?;
    if digest::matches(hash, h.mk_digest_iterations, &h.mk_digest_salt, &h.mk_digest, &candidate)? {
        Ok(VolumeKey(candidate))
    } else {
        Err(Error::WrongPassphrase(id))
    }
}

/// A LUKS2 keyslot's material. Its stripes are 4000 whatever `af.stripes` says, as cryptsetup 2.6 reads and
/// writes them (`lib/luks2/luks2_keyslot_luks2.c` splits and merges with its constant `LUKS_STRIPES` and only
/// checks that the field is an integer): a header whose field says otherwise opens with cryptsetup, and so it
/// does here. (LUKS1 differs: cryptsetup refuses a LUKS1 keyslot whose stripes are not 4000, and so do we.)
fn luks2_material(slot: &json::Keyslot) -> Result<Material<'_>> {
    let af = slot.af.as_ref().ok_or_else(|| Error::corrupt("keyslot without af"))?;
    Ok(Material {
        cipher: slot.area.encryption.as_deref().unwrap_or_default(),
        cipher_key_len: slot.area.key_size.unwrap_or_default() as usize,
        key_len: slot.key_size as usize,
        stripes: af::STRIPES,
        af_hash: Hash::from_name(&af.hash)?,
        offset: slot.area.offset.0,
    })
}

fn unlock_luks2(file: &File, h: &luks2::Header, id: u32, passphrase: &[u8]) -> Result<VolumeKey> {
    let slot = h.meta.keyslots.get(&Id(id)).ok_or(Error::KeyslotNotActive(id))?;
    if slot.kind != "luks2" {
        return Err(Error::unsupported(format!("keyslot {id} of type `{}`", slot.kind)));
    }
    let kdf_json = slot.kdf.as_ref().ok_or_else(|| Error::corrupt(format!("keyslot {id} has no kdf")))?;
    let material = luks2_material(slot)?;
    let candidate = material.recover(file, &kdf_of(kdf_json), kdf_json.salt(), passphrase)?;
    // A keyslot listed in no digest is "unbound": it cannot open the data segment.
    let Some((_, d)) = h.meta.digest_of_keyslot(Id(id)) else { return Err(Error::WrongPassphrase(id)) };
    if digest::matches(Hash::from_name(&d.hash)?, d.iterations, &d.salt.0, &d.digest.0, &candidate)? {
        Ok(VolumeKey(candidate))
    } else {
        Err(Error::WrongPassphrase(id))
    }
}

pub(super) fn add_luks1(
    file: &File,
    h: &mut luks1::Header,
    key: &VolumeKey,
    passphrase: &[u8],
    kdf: &Kdf,
) -> Result<u32> {
    let iterations = match kdf {
        Kdf::Pbkdf2 { hash, iterations } if hash.eq_ignore_ascii_case(&h.hash_spec) => *iterations,
        _ => {
            return Err(Error::unsupported(format!(
                "a LUKS1 keyslot with {} (LUKS1 keyslots use pbkdf2 with the header hash {})",
                kdf.name(),
                h.hash_spec
            )));
        }
    };
    let id = h.keyslots.iter().position(|k| !k.active).ok_or(Error::NoFreeKeyslot)?;
    let salt = crate::crypto::random::bytes::<32>();
    let cipher = h.cipher_spec();
    let slot = &mut h.keyslots[id];
    let material = Material {
        cipher: &cipher,
        cipher_key_len: h.key_bytes as usize,
        key_len: h.key_bytes as usize,
        stripes: slot.stripes,
        af_hash: Hash::from_name(&h.hash_spec)?,
        offset: u64::from(slot.key_material_offset) * 512,
    };
    material.store(file, kdf, &salt, passphrase, key.as_bytes())?;
    slot.active = true;
    slot.iterations = iterations;
    slot.salt = salt;
    Ok(id as u32)
}

/// Bytes a LUKS2 keyslot area takes for a `key_len` key: the split key rounded up to 4 KiB.
pub(crate) fn luks2_area_size(key_len: usize) -> u64 {
    ((key_len * af::STRIPES as usize).div_ceil(4096) * 4096) as u64
}

/// The first 4 KiB-aligned gap of `size` bytes in the keyslots area (cryptsetup's `LUKS2_find_area_gap`).
fn find_area_gap(h: &luks2::Header, size: u64) -> Option<u64> {
    let start = h.keyslots_start();
    let end = start + h.meta.config.keyslots_size.0;
    let mut used: Vec<(u64, u64)> =
        h.meta.keyslots.values().map(|k| (k.area.offset.0, k.area.offset.0 + k.area.size.0)).collect();
    used.sort();
    let mut candidate = start;
    for (s, e) in used {
        if candidate + size <= s {
            break;
        }
        candidate = candidate.max(e.div_ceil(4096) * 4096);
    }
    (candidate + size <= end).then_some(candidate)
}

pub(super) fn add_luks2(
    file: &File,
    h: &mut luks2::Header,
    key: &VolumeKey,
    passphrase: &[u8],
    kdf: &Kdf,
) -> Result<u32> {
    let id = (0..json::MAX_KEYSLOTS).find(|i| !h.meta.keyslots.contains_key(&Id(*i))).ok_or(Error::NoFreeKeyslot)?;
    let area_size = luks2_area_size(key.len());
    let offset = find_area_gap(h, area_size).ok_or(Error::NoFreeKeyslot)?;
    let (digest_id, digest_hash) = {
        let (digest_id, d) = h.meta.segment_digest().ok_or_else(|| Error::corrupt("no digest for the data segment"))?;
        (digest_id, d.hash.clone())
    };
    // cryptsetup encrypts keyslot material with the segment cipher when it can, else aes-xts-plain64/512.
    let segment_cipher = h.meta.segments.values().next().and_then(|s| s.encryption.clone());
    let (area_cipher, area_key_len) = match segment_cipher {
        Some(c) if super::cipher::check_spec(&c, key.len()).is_ok() => (c, key.len()),
        _ => ("aes-xts-plain64".to_owned(), 64),
    };
    // The AF hash follows the PBKDF hash setting; for argon2 that is the default hash, as the digest uses.
    let af_hash = match kdf {
        Kdf::Pbkdf2 { hash, .. } => hash.clone(),
        _ => digest_hash,
    };
    let salt = crate::crypto::random::bytes::<32>();
    let material = Material {
        cipher: &area_cipher,
        cipher_key_len: area_key_len,
        key_len: key.len(),
        stripes: af::STRIPES,
        af_hash: Hash::from_name(&af_hash)?,
        offset,
    };
    material.store(file, kdf, &salt, passphrase, key.as_bytes())?;
    let slot = json::Keyslot {
        kind: "luks2".into(),
        key_size: key.len() as u32,
        af: Some(json::Af { kind: "luks1".into(), stripes: af::STRIPES, hash: af_hash, extra: Default::default() }),
        area: json::Area {
            kind: "raw".into(),
            offset: json::U64Str(offset),
            size: json::U64Str(area_size),
            encryption: Some(area_cipher),
            key_size: Some(area_key_len as u32),
            extra: Default::default(),
        },
        kdf: Some(kdf_json(kdf, salt)),
        priority: None,
        extra: Default::default(),
    };
    h.meta.keyslots.insert(Id(id), slot);
    let d = h.meta.digests.get_mut(&digest_id).expect("digest found above");
    d.keyslots.push(Id(id));
    d.keyslots.sort();
    Ok(id)
}
