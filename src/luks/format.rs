//! Creating new LUKS2 and LUKS1 headers (docs/formats.md) and cryptsetup's KDF benchmark.
//!
//! Formatting writes the header region of an already opened file or device: zeroed header areas, a keyslots
//! area filled with random bytes, the first keyslot's material, then the header(s) that reference it.

use super::hash::Hash;
use super::luks2::json::{self, Id, Metadata, SegmentSize, U64Str};
use super::{Error, Kdf, Result, Version, VolumeKey, digest, luks1, luks2, volume};
use crate::crypto::argon2::Argon2Variant;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::time::{Duration, Instant};

/// LUKS2 binary header + JSON area per copy (cryptsetup's default).
pub const LUKS2_HDR_SIZE: u64 = 0x4000;
/// Default LUKS2 data offset: 16 MiB.
pub const LUKS2_DATA_OFFSET: u64 = 16 << 20;
/// LUKS1 payload offset of cryptsetup's layout: 4096 sectors (2 MiB), convertible to LUKS2.
pub const LUKS1_PAYLOAD_SECTORS: u32 = 4096;
/// cryptsetup's digest benchmark target (`LUKS_MKD_ITERATIONS_MS`).
pub const DIGEST_ITER_TIME_MS: u64 = 125;

/// Everything a new header needs, resolved (no benchmarking left to do).
#[derive(Clone, Debug)]
pub struct FormatOptions {
    /// LUKS1 or LUKS2.
    pub version: Version,
    /// Payload (and keyslot) cipher; only `aes-xts-plain64` is implemented.
    pub cipher: String,
    /// Volume key bytes: 32 or 64 (aes-xts 256 or 512 bits).
    pub key_bytes: usize,
    /// Hash for the digest, the AF splitter and PBKDF2 keyslots.
    pub hash: Hash,
    /// KDF of the first keyslot (LUKS1: pbkdf2 with `hash`).
    pub kdf: Kdf,
    /// Iterations of the volume-key digest.
    pub digest_iterations: u32,
    /// Encryption sector size (LUKS2 512…4096; LUKS1 always 512).
    pub sector_size: u32,
    /// LUKS2 label.
    pub label: String,
    /// Volume UUID (text).
    pub uuid: String,
}

impl FormatOptions {
    /// Byte offset of the payload.
    pub fn payload_offset(&self) -> u64 {
        match self.version {
            Version::Luks1 => u64::from(LUKS1_PAYLOAD_SECTORS) * 512,
            Version::Luks2 => LUKS2_DATA_OFFSET,
        }
    }

    /// Refuses combinations cryptsetup (or QEMU, for LUKS1) would not accept.
    pub fn check(&self) -> Result<()> {
        // CBC-ESSIV is read and rotated (old volumes), never chosen for a new one.
        if super::cipher::parse(&self.cipher, self.key_bytes)? == super::cipher::Spec::CbcEssivSha256 {
            return Err(Error::unsupported(format!("cipher `{}` for a new volume (use aes-xts-plain64)", self.cipher)));
        }
        self.kdf.check_limits()?;
        if self.digest_iterations < super::PBKDF2_MIN_ITERATIONS {
            return Err(Error::InvalidParameter("digest iterations below 1000".into()));
        }
        if !matches!(self.sector_size, 512 | 1024 | 2048 | 4096) {
            return Err(Error::InvalidParameter(format!("sector size {} (512, 1024, 2048 or 4096)", self.sector_size)));
        }
        if self.label.len() > 47 {
            return Err(Error::InvalidParameter("the label is longer than 47 bytes".into()));
        }
        if !is_uuid(&self.uuid) {
            return Err(Error::InvalidParameter(format!("`{}` is not a UUID", self.uuid)));
        }
        if self.version == Version::Luks1 {
            if self.sector_size != 512 {
                return Err(Error::InvalidParameter("LUKS1 has 512-byte sectors only".into()));
            }
            if !self.label.is_empty() {
                return Err(Error::InvalidParameter("LUKS1 has no label".into()));
            }
            match &self.kdf {
                Kdf::Pbkdf2 { hash, .. } if Hash::from_name(hash)? == self.hash => {}
                _ => return Err(Error::InvalidParameter("LUKS1 keyslots use pbkdf2 with the header hash".into())),
            }
        }
        Ok(())
    }
}

/// Whether `text` is a canonical 8-4-4-4-12 hex UUID.
pub fn is_uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.len() == 5
        && groups.iter().zip([8, 4, 4, 4, 12]).all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// A random (version 4) UUID in lower case.
pub fn random_uuid() -> String {
    let mut b = crate::crypto::random::bytes::<16>();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = hex::encode(b);
    format!("{}-{}-{}-{}-{}", &h[..8], &h[8..12], &h[12..16], &h[16..20], &h[20..])
}

/// A second keyslot made with the first, and the LUKS2 token that names it (a clevis binding, or any other
/// token a pin writes): written in the same header write as the volume itself, so the volume never exists
/// without it, whatever stops the format.
pub struct TokenSlot<'a> {
    /// The keyslot's passphrase (it gets the first keyslot's key-derivation settings).
    pub passphrase: &'a [u8],
    /// The token's `type`.
    pub kind: &'a str,
    /// The token's other fields (besides `type` and `keyslots`).
    pub fields: serde_json::Map<String, serde_json::Value>,
}

/// Writes a new header with one keyslot for `passphrase` onto `file`, which must be at least
/// [`FormatOptions::payload_offset`] bytes long. Returns the keyslot id (0).
pub fn write_header(file: &File, options: &FormatOptions, key: &VolumeKey, passphrase: &[u8]) -> Result<u32> {
    write_header_with(file, options, key, passphrase, None).map(|(slot, _)| slot)
}

/// [`write_header`], and with `token` a second keyslot and its token in the same header write (LUKS2 only).
/// Returns the first keyslot's id (0) and, with `token`, (keyslot id, token id) of the second.
pub fn write_header_with(
    file: &File,
    options: &FormatOptions,
    key: &VolumeKey,
    passphrase: &[u8],
    token: Option<&TokenSlot<'_>>,
) -> Result<(u32, Option<(u32, u32)>)> {
    options.check()?;
    if key.len() != options.key_bytes {
        return Err(Error::InvalidParameter("the volume key length differs from the key size".into()));
    }
    match options.version {
        Version::Luks2 => write_luks2(file, options, key, passphrase, token),
        Version::Luks1 if token.is_some() => Err(Error::unsupported("tokens on a LUKS1 volume (LUKS1 has no tokens)")),
        Version::Luks1 => write_luks1(file, options, key, passphrase).map(|slot| (slot, None)),
    }
}

fn fill(file: &File, offset: u64, len: u64, random: bool) -> Result<()> {
    const CHUNK: u64 = 1 << 20;
    let mut buf = vec![0u8; CHUNK.min(len) as usize];
    let mut done = 0;
    while done < len {
        let n = CHUNK.min(len - done) as usize;
        if random {
            crate::crypto::random::fill(&mut buf[..n]);
        }
        file.write_all_at(&buf[..n], offset + done).map_err(Error::io("preparing the header area"))?;
        done += n as u64;
    }
    Ok(())
}

fn write_luks2(
    file: &File,
    o: &FormatOptions,
    key: &VolumeKey,
    passphrase: &[u8],
    token: Option<&TokenSlot<'_>>,
) -> Result<(u32, Option<(u32, u32)>)> {
    let keyslots_start = 2 * LUKS2_HDR_SIZE;
    let keyslots_size = LUKS2_DATA_OFFSET - keyslots_start;
    fill(file, 0, keyslots_start, false)?;
    fill(file, keyslots_start, keyslots_size, true)?;
    let (salt, value) = digest::create(o.hash, o.digest_iterations, key.as_bytes(), o.hash.output_len())?;
    let segment = json::Segment {
        kind: "crypt".into(),
        offset: U64Str(LUKS2_DATA_OFFSET),
        size: SegmentSize::Dynamic,
        iv_tweak: Some(U64Str(0)),
        encryption: Some(o.cipher.clone()),
        sector_size: Some(o.sector_size),
        integrity: None,
        flags: None,
        extra: Default::default(),
    };
    let digest = json::Digest {
        kind: "pbkdf2".into(),
        keyslots: vec![],
        segments: vec![Id(0)],
        hash: o.hash.name().into(),
        iterations: o.digest_iterations,
        salt: json::B64(salt.to_vec()),
        digest: json::B64(value),
        extra: Default::default(),
    };
    let meta = Metadata {
        keyslots: Default::default(),
        tokens: Default::default(),
        segments: [(Id(0), segment)].into(),
        digests: [(Id(0), digest)].into(),
        config: json::Config {
            json_size: U64Str(LUKS2_HDR_SIZE - 4096),
            keyslots_size: U64Str(keyslots_size),
            flags: None,
            requirements: None,
            extra: Default::default(),
        },
        extra: Default::default(),
    };
    let mut header = luks2::Header {
        hdr_size: LUKS2_HDR_SIZE,
        seqid: 0,
        label: o.label.clone(),
        subsystem: String::new(),
        uuid: o.uuid.clone(),
        checksum_alg: "sha256".into(),
        primary_salt: crate::crypto::random::bytes::<64>(),
        secondary_salt: crate::crypto::random::bytes::<64>(),
        meta,
    };
    let id = volume::add_luks2(file, &mut header, key, passphrase, &o.kdf)?;
    let bound = match token {
        Some(token) => {
            let slot = volume::add_luks2(file, &mut header, key, token.passphrase, &o.kdf)?;
            let token_id = 0;
            header.meta.tokens.insert(
                Id(token_id),
                json::Token { kind: token.kind.into(), keyslots: vec![Id(slot)], extra: token.fields.clone() },
            );
            Some((slot, token_id))
        }
        None => None,
    };
    header.write(file, true)?;
    Ok((id, bound))
}

fn write_luks1(file: &File, o: &FormatOptions, key: &VolumeKey, passphrase: &[u8]) -> Result<u32> {
    let (offsets, _) = luks1::cryptsetup_layout(o.key_bytes as u32, super::af::STRIPES);
    let payload = u64::from(LUKS1_PAYLOAD_SECTORS) * 512;
    fill(file, 0, 4096, false)?;
    fill(file, 4096, payload - 4096, true)?;
    let (salt, value) = digest::create(o.hash, o.digest_iterations, key.as_bytes(), luks1::DIGEST_LEN)?;
    let (cipher_name, cipher_mode) = o.cipher.split_once('-').expect("checked: aes-xts-plain64");
    let mut header = luks1::Header {
        cipher_name: cipher_name.into(),
        cipher_mode: cipher_mode.into(),
        hash_spec: o.hash.name().into(),
        payload_offset: LUKS1_PAYLOAD_SECTORS,
        key_bytes: o.key_bytes as u32,
        mk_digest: value.try_into().expect("20 bytes"),
        mk_digest_salt: salt,
        mk_digest_iterations: o.digest_iterations,
        uuid: o.uuid.clone(),
        keyslots: offsets.map(|offset| luks1::Keyslot {
            active: false,
            iterations: 0,
            salt: [0; 32],
            key_material_offset: offset,
            stripes: super::af::STRIPES,
        }),
    };
    let id = volume::add_luks1(file, &mut header, key, passphrase, &o.kdf)?;
    header.check_layout()?;
    file.write_all_at(&header.to_bytes(), 0).map_err(Error::io("writing the LUKS1 header"))?;
    file.sync_data().map_err(Error::io("flushing the LUKS1 header"))?;
    Ok(id)
}

/// PBKDF2 speed on this machine, measured like cryptsetup: a one-block output (the hash size), starting at 2^15
/// iterations and doubling until one run takes over 500 ms. Measured once per format and shared by the keyslot
/// and the digest, as cryptsetup does.
#[derive(Clone, Copy, Debug)]
pub struct Pbkdf2Rate {
    hash: Hash,
    /// One-block iterations per millisecond.
    per_ms: f64,
}

impl Pbkdf2Rate {
    /// Runs the measurement (about one second).
    pub fn measure(hash: Hash) -> Pbkdf2Rate {
        let mut iterations: u32 = 1 << 15;
        let mut out = vec![0u8; hash.output_len()];
        loop {
            let start = Instant::now();
            hash.pbkdf2(b"foobarfo", &[0u8; 32], iterations, &mut out);
            let elapsed = start.elapsed();
            if elapsed > Duration::from_millis(500) || iterations >= 1 << 30 {
                let per_ms = f64::from(iterations) / elapsed.as_secs_f64().max(1e-6) / 1000.0;
                return Pbkdf2Rate { hash, per_ms };
            }
            iterations = iterations.saturating_mul(2);
        }
    }

    /// Iterations that take `iter_time_ms` for a `key_len`-byte output: PBKDF2 computes one chain per
    /// hash-sized block, so a 64-byte key from SHA-256 costs two chains per iteration. At least 1000.
    pub fn iterations(&self, iter_time_ms: u64, key_len: usize) -> u32 {
        let blocks = key_len.div_ceil(self.hash.output_len()).max(1) as f64;
        let scaled = self.per_ms * iter_time_ms as f64 / blocks;
        scaled.clamp(f64::from(super::PBKDF2_MIN_ITERATIONS), f64::from(u32::MAX)) as u32
    }
}

/// What an existing target already holds, for the refusal to format over it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Occupant {
    /// A LUKS header (valid, or at least its magic).
    LuksHeader,
    /// Other data: a non-empty image file, or a device whose first MiB is not all zeros (where blkid finds
    /// filesystem and partition signatures).
    Data,
}

/// What `file` (`len` bytes; a block device when `is_device`) holds that formatting would destroy, if anything.
pub fn occupant(file: &File, is_device: bool, len: u64) -> std::io::Result<Option<Occupant>> {
    let mut magic = [0u8; 6];
    let has_magic = file.read_exact_at(&mut magic, 0).is_ok() && magic == luks1::MAGIC;
    if has_magic || super::Volume::from_file(file.try_clone()?).is_ok() {
        return Ok(Some(Occupant::LuksHeader));
    }
    let occupied = if is_device {
        let mut first_mib = vec![0u8; 1 << 20];
        let n = file.read_at(&mut first_mib, 0)?;
        first_mib[..n].iter().any(|&b| b != 0)
    } else {
        len > 0
    };
    Ok(occupied.then_some(Occupant::Data))
}

/// cryptsetup's default Argon2 memory cap: 1 GiB, and at most half the physical memory.
pub fn default_argon2_memory_kib() -> u32 {
    const DEFAULT_KIB: u32 = 1024 * 1024;
    let half_ram = physical_memory_kib().map_or(DEFAULT_KIB, |kib| (kib / 2).min(u64::from(u32::MAX)) as u32);
    DEFAULT_KIB.min(half_ram).max(super::ARGON2_MIN_MEMORY_KIB)
}

/// MemTotal from /proc/meminfo (Linux); None elsewhere.
fn physical_memory_kib() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Formats `file`: the payload first (encrypted from `source`, if any, with `threads` threads), then the header.
/// Writing the header last means a failure part-way leaves no header that looks valid over a half-written
/// payload. `payload_len` is the payload's size; the file must already be `payload_offset + payload_len` long.
/// With `token`, a second keyslot and its token go into the same header write. Returns the bytes encrypted from the
/// source and, with `token`, its (keyslot id, token id).
#[allow(clippy::too_many_arguments)] // each is a separate decision of the caller's; a struct would only rename them
pub fn format_with_payload<R: std::io::Read + Send>(
    file: &File,
    options: &FormatOptions,
    key: &VolumeKey,
    passphrase: &[u8],
    source: Option<&mut R>,
    payload_len: u64,
    threads: usize,
    progress: &dyn crate::interact::Progress,
    token: Option<&TokenSlot<'_>>,
) -> Result<(u64, Option<(u32, u32)>)> {
    let mut written = 0;
    if let Some(source) = source {
        let info = super::PayloadInfo {
            offset: options.payload_offset(),
            len: payload_len,
            cipher: options.cipher.clone(),
            sector_size: options.sector_size,
            iv_tweak: 0,
        };
        written = super::payload::encrypt_into(source, file, &info, key, threads, progress)?;
    }
    let (_, bound) = write_header_with(file, options, key, passphrase, token)?;
    Ok((written, bound))
}

/// Argon2 costs (time, memory KiB) that take about `iter_time_ms` with `parallel` lanes and at most
/// `max_memory_kib`, found like cryptsetup: start at t = 4 and 64 MiB (or the cap), raise memory first, then
/// time; lower time first, then memory; stop within 95–110 % of the target.
pub fn benchmark_argon2(
    variant: Argon2Variant,
    iter_time_ms: u64,
    max_memory_kib: u32,
    parallel: u32,
) -> Result<(u32, u32)> {
    let min_memory = super::ARGON2_MIN_MEMORY_KIB.max(8 * parallel);
    let target = iter_time_ms as f64;
    let mut time = super::ARGON2_MIN_TIME;
    let mut memory = (64 * 1024).min(max_memory_kib).max(min_memory);
    let mut out = [0u8; 64];
    for _ in 0..12 {
        let start = Instant::now();
        crate::crypto::argon2::derive(variant, b"foobarfo", &[0u8; 32], time, memory, parallel, &mut out)
            .map_err(|e| Error::InvalidParameter(e.to_string()))?;
        let ms = start.elapsed().as_secs_f64() * 1000.0;
        if (0.95 * target..=1.10 * target).contains(&ms) {
            break;
        }
        // Too short a run to extrapolate from: grow memory (or time) fourfold first.
        let ratio = if ms < 250.0 && ms < target { 4.0f64.min(target / ms.max(1.0)) } else { target / ms.max(1.0) };
        (time, memory) = rescale(time, memory, ratio, min_memory, max_memory_kib);
        if ratio > 1.0 && memory == max_memory_kib && time == u32::MAX {
            break;
        }
    }
    Ok((time, memory))
}

/// Applies a cost ratio: up = memory first then time, down = time first then memory (cryptsetup's order).
fn rescale(time: u32, memory: u32, ratio: f64, min_memory: u32, max_memory: u32) -> (u32, u32) {
    let min_time = super::ARGON2_MIN_TIME;
    if ratio >= 1.0 {
        let new_memory = (f64::from(memory) * ratio).min(f64::from(max_memory)) as u32;
        let left = ratio * f64::from(memory) / f64::from(new_memory.max(1));
        let new_time = (f64::from(time) * left).round().max(f64::from(min_time)).min(f64::from(u32::MAX)) as u32;
        (new_time, new_memory.max(min_memory))
    } else {
        let new_time = (f64::from(time) * ratio).round().max(f64::from(min_time)) as u32;
        let left = ratio * f64::from(time) / f64::from(new_time);
        let new_memory = (f64::from(memory) * left).max(f64::from(min_memory)) as u32;
        (new_time, new_memory.min(max_memory))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pbkdf2_iterations_account_for_the_output_blocks() {
        let rate = Pbkdf2Rate { hash: Hash::Sha256, per_ms: 1000.0 };
        assert_eq!(rate.iterations(2000, 32), 2_000_000);
        assert_eq!(rate.iterations(2000, 64), 1_000_000);
        assert_eq!(rate.iterations(0, 64), 1000);
    }

    #[test]
    fn uuids_are_v4_and_checked() {
        let u = random_uuid();
        assert!(is_uuid(&u), "{u}");
        assert_eq!(&u[14..15], "4");
        assert!(!is_uuid("not-a-uuid"));
    }

    /// A second keyslot and its token go into the one header write that makes the volume: both keyslots open,
    /// the token names the second; LUKS1 (no tokens) is refused before anything is written.
    #[test]
    fn a_token_keyslot_is_written_with_the_new_header() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.img");
        let file = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path).unwrap();
        let mut options = FormatOptions {
            version: Version::Luks2,
            cipher: "aes-xts-plain64".into(),
            key_bytes: 64,
            hash: Hash::Sha256,
            kdf: Kdf::Pbkdf2 { hash: "sha256".into(), iterations: 1000 },
            digest_iterations: 1000,
            sector_size: 512,
            label: String::new(),
            uuid: random_uuid(),
        };
        file.set_len(options.payload_offset() + 4096).unwrap();
        let key = VolumeKey::generate(64);
        let mut fields = serde_json::Map::new();
        fields.insert("jwe".into(), serde_json::json!({"ciphertext": "x"}));
        let token = TokenSlot { passphrase: b"bound", kind: "clevis", fields };
        let (first, bound) = write_header_with(&file, &options, &key, b"first", Some(&token)).unwrap();
        assert_eq!((first, bound), (0, Some((1, 0))));
        let volume = super::super::Volume::open(&path, false).unwrap();
        assert_eq!(volume.unlock(b"first").unwrap().0, 0);
        assert_eq!(volume.unlock(b"bound").unwrap().0, 1);
        let tokens = volume.tokens();
        assert_eq!(tokens.len(), 1);
        assert_eq!((tokens[0].0, tokens[0].1.kind.as_str()), (0, "clevis"));
        assert_eq!(tokens[0].1.keyslots, vec![Id(1)]);
        assert_eq!(tokens[0].1.extra["jwe"]["ciphertext"], "x");
        options.version = Version::Luks1;
        let other = dir.path().join("v1.img");
        let file = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&other).unwrap();
        file.set_len(options.payload_offset() + 4096).unwrap();
        assert!(write_header_with(&file, &options, &key, b"first", Some(&token)).is_err());
        assert!(std::fs::read(&other).unwrap().iter().all(|&b| b == 0), "nothing written");
    }

    #[test]
    fn rescale_raises_memory_first_and_lowers_time_first() {
        assert_eq!(rescale(4, 65536, 2.0, 32, 1 << 20), (4, 131072));
        assert_eq!(rescale(4, 65536, 4.0, 32, 100_000), (10, 100_000));
        assert_eq!(rescale(8, 65536, 0.5, 32, 1 << 20), (4, 65536));
        assert_eq!(rescale(4, 65536, 0.5, 32, 1 << 20), (4, 32768));
    }
}
