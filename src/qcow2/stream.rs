//! One stream from any disk image to any other: raw, raw LUKS (LUKS1 or LUKS2), qcow2 and qcow2 with LUKS in;
//! raw, raw LUKS1, qcow2 and qcow2+LUKS out. Plaintext exists only in memory, in bounded chunk buffers that are
//! wiped when dropped; the output file receives ciphertext only, unless the caller asked for a plain output.
//!
//! Sources report where data may start ([`Source::next_data`]: `SEEK_DATA` on raw files, the L1/L2 map on qcow2),
//! so a 4 GiB raw file holding 64 MiB of data costs 64 MiB of reading, as in `qemu-img convert`.

use super::header;
use super::luks::{self as embedded, KdfCost, LuksRegion, PayloadPlacement};
use super::reader::Qcow2Reader;
use super::writer::{Layout, Qcow2Writer};
use super::{Error, Result};
use crate::crypto::xts::XtsPlain64;
use crate::interact::Progress;
use crate::luks::{PayloadInfo, Version, Volume, VolumeKey};
use cryptadm_bulk::SecretBuf;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use zeroize::Zeroizing;

/// Guest bytes handled per step (a multiple of every cluster size).
pub const CHUNK: usize = 8 << 20;
/// Alignment of every step: the largest cluster size.
const ALIGN: u64 = 1 << header::MAX_CLUSTER_BITS;

/// A disk's guest view, read front to back.
pub trait Source: Send {
    /// Virtual size in bytes.
    fn len(&self) -> u64;
    /// Whether the disk is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Fills `buf` with the guest bytes at `offset` (a multiple of 512); past the end reads zeros.
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<()>;
    /// The first offset at or after `offset` that may hold non-zero data ([`Self::len`] if none).
    fn next_data(&mut self, offset: u64) -> Result<u64>;
}

/// The container format of an image file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Container {
    /// A raw disk image (or a raw LUKS image).
    Raw,
    /// qcow2.
    Qcow2,
}

impl Container {
    /// `raw` or `qcow2`, as Glance's `disk_format` spells them.
    pub fn name(self) -> &'static str {
        match self {
            Container::Raw => "raw",
            Container::Qcow2 => "qcow2",
        }
    }
}

/// What an input file turned out to be.
#[derive(Debug)]
pub enum Input {
    /// A plain raw image.
    Raw(File),
    /// A raw LUKS1 or LUKS2 image.
    RawLuks(Volume),
    /// A qcow2 image, with its LUKS header if encrypted.
    Qcow2(Box<Qcow2Reader>, Option<LuksRegion>),
}

impl Input {
    /// Opens `path` read-only and tells raw, raw LUKS and qcow2 apart by their magic.
    pub fn open(path: &Path) -> Result<Input> {
        let file = File::open(path).map_err(Error::io(format!("opening `{}`", path.display())))?;
        let mut magic = [0u8; 6];
        let n = file.read_at(&mut magic, 0).map_err(Error::io(format!("reading `{}`", path.display())))?;
        if n >= 4 && magic[..4] == header::MAGIC {
            let reader = Qcow2Reader::open(file)?;
            let luks = match reader.luks_region()? {
                Some(bytes) => Some(LuksRegion::parse(&bytes).map_err(embedded)?),
                None => None,
            };
            if let Some(region) = &luks {
                region.luks1().map_err(embedded)?;
            }
            return Ok(Input::Qcow2(Box::new(reader), luks));
        }
        if n == 6 && magic == crate::luks::luks1::MAGIC {
            return Ok(Input::RawLuks(Volume::from_file(file)?));
        }
        // A LUKS2 volume whose primary header is damaged still opens from its secondary copy (as cryptsetup
        // does): read as plain data, its ciphertext would be copied as if it were the disk.
        if let Ok(volume) = Volume::from_file(file.try_clone().map_err(Error::io("reading the image"))?) {
            return Ok(Input::RawLuks(volume));
        }
        Ok(Input::Raw(file))
    }

    /// The container.
    pub fn container(&self) -> Container {
        match self {
            Input::Raw(_) | Input::RawLuks(_) => Container::Raw,
            Input::Qcow2(..) => Container::Qcow2,
        }
    }

    /// Whether a passphrase is needed.
    pub fn encrypted(&self) -> bool {
        match self {
            Input::Raw(_) => false,
            Input::RawLuks(_) => true,
            Input::Qcow2(_, luks) => luks.is_some(),
        }
    }

    /// The LUKS volume (raw LUKS) or embedded header (qcow2), for inspection.
    pub fn luks_volume(&self) -> Option<&Volume> {
        match self {
            Input::Raw(_) => None,
            Input::RawLuks(v) => Some(v),
            Input::Qcow2(_, luks) => luks.as_ref().map(LuksRegion::volume),
        }
    }

    /// Unlocks (when encrypted) and turns the input into a guest-order [`Source`]. `passphrase` is needed only
    /// for encrypted inputs.
    pub fn unlock(self, passphrase: Option<&[u8]>, threads: usize) -> Result<Unlocked> {
        match self {
            Input::Raw(file) => {
                // A block device's size is not in its metadata.
                let len = crate::atomic::file_len(&file).map_err(Error::io("reading the image size"))?;
                Ok(Unlocked { source: Box::new(RawSource { file, len }), key: None, header: None })
            }
            Input::RawLuks(volume) => {
                let (_, key) = volume.unlock(need(passphrase)?)?;
                let payload = volume.payload()?;
                let cipher = embedded::data_cipher(&payload.cipher, &key)?;
                let mut bytes = vec![0u8; payload.offset as usize];
                volume.file().read_exact_at(&mut bytes, 0).map_err(Error::io("reading the LUKS header"))?;
                let header = SourceHeader { bytes, payload: payload.clone(), version: volume.version() };
                let source = RawLuksSource { volume, payload, cipher, threads };
                Ok(Unlocked { source: Box::new(source), key: Some(key), header: Some(header) })
            }
            Input::Qcow2(mut reader, None) => {
                reader.set_threads(threads);
                Ok(Unlocked { source: reader, key: None, header: None })
            }
            Input::Qcow2(mut reader, Some(region)) => {
                let key = region.unlock(need(passphrase)?).map_err(embedded)?;
                let h = region.luks1().map_err(embedded)?;
                let cipher = embedded::data_cipher(&h.cipher_spec(), &key)?;
                reader.set_cipher(cipher, threads);
                let offset = u64::from(h.payload_offset) * 512;
                let mut bytes = reader.luks_region()?.expect("encrypted");
                bytes.truncate(offset as usize);
                let payload = PayloadInfo { offset, len: 0, cipher: h.cipher_spec(), sector_size: 512, iv_tweak: 0 };
                let header = SourceHeader { bytes, payload, version: Version::Luks1 };
                Ok(Unlocked { source: reader, key: Some(key), header: Some(header) })
            }
        }
    }
}

/// What cryptadm cannot read in a qcow2 image's LUKS header, qemu-img can (cryptsetup does not open qcow2).
fn embedded(error: Error) -> Error {
    match error {
        Error::Luks(crate::luks::Error::Unsupported { what }) => Error::unsupported(
            format!("{what} in the qcow2 image's LUKS header"),
            "re-encrypt it with `qemu-img convert -O qcow2 -o encrypt.format=luks,encrypt.cipher-alg=aes-256,\
             encrypt.cipher-mode=xts,encrypt.ivgen-alg=plain64` (cryptsetup does not open qcow2 images)",
        ),
        other => other,
    }
}

fn need(passphrase: Option<&[u8]>) -> Result<&[u8]> {
    passphrase.ok_or_else(|| Error::InvalidParameter("the image is encrypted: a passphrase is needed".into()))
}

/// A source's LUKS header, kept so `same` can reuse it verbatim.
#[derive(Clone, Debug)]
pub struct SourceHeader {
    /// The header region: every byte before the payload.
    pub bytes: Vec<u8>,
    /// Where the payload is and how it is encrypted.
    pub payload: PayloadInfo,
    /// LUKS1 or LUKS2.
    pub version: Version,
}

/// An unlocked input.
pub struct Unlocked {
    /// The guest bytes.
    pub source: Box<dyn Source>,
    /// The volume key, if the input was encrypted.
    pub key: Option<VolumeKey>,
    /// The LUKS header, if the input was encrypted.
    pub header: Option<SourceHeader>,
}

/// A plain raw file; holes are found with `SEEK_DATA`.
struct RawSource {
    file: File,
    len: u64,
}

impl Source for RawSource {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let available = self.len.saturating_sub(offset).min(buf.len() as u64) as usize;
        self.file.read_exact_at(&mut buf[..available], offset).map_err(Error::io("reading the raw image"))?;
        buf[available..].fill(0);
        Ok(())
    }

    fn next_data(&mut self, offset: u64) -> Result<u64> {
        if offset >= self.len {
            return Ok(self.len);
        }
        match rustix::fs::seek(&self.file, rustix::fs::SeekFrom::Data(offset)) {
            Ok(at) => Ok(at.min(self.len)),
            Err(rustix::io::Errno::NXIO) => Ok(self.len),
            Err(_) => Ok(offset), // no SEEK_DATA here: read everything
        }
    }
}

/// A raw LUKS image's payload, decrypted.
struct RawLuksSource {
    volume: Volume,
    payload: PayloadInfo,
    cipher: XtsPlain64,
    threads: usize,
}

impl Source for RawLuksSource {
    fn len(&self) -> u64 {
        self.payload.len
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let unit = u64::from(self.payload.sector_size);
        let available = self.payload.len.saturating_sub(offset).min(buf.len() as u64) as usize;
        if !offset.is_multiple_of(unit) || !(available as u64).is_multiple_of(unit) {
            return Err(Error::Truncated(format!("the LUKS payload is not a whole number of {unit}-byte sectors")));
        }
        let data = &mut buf[..available];
        self.volume.file().read_exact_at(data, self.payload.offset + offset).map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => Error::Truncated("the LUKS payload ends early".into()),
            _ => Error::Io { context: "reading the LUKS payload".into(), source: e },
        })?;
        let iv = self.payload.iv_tweak + offset / 512;
        self.cipher.decrypt_units_parallel(data, unit as usize, iv, self.threads);
        buf[available..].fill(0);
        Ok(())
    }

    fn next_data(&mut self, offset: u64) -> Result<u64> {
        Ok(offset)
    }
}

/// How the output's LUKS header is made.
pub enum NewHeader {
    /// Reuse a source header verbatim (same volume key, same keyslots and passphrases).
    Copy(SourceHeader),
    /// A new LUKS1 header with one keyslot for this passphrase.
    Fresh {
        /// The passphrase (UTF-8, QEMU's requirement).
        passphrase: Zeroizing<Vec<u8>>,
        /// Key-stretching cost.
        cost: KdfCost,
    },
}

/// The output's encryption.
pub struct OutputLuks {
    /// The volume key (the source's for `same`, a new one otherwise).
    pub key: VolumeKey,
    /// The header.
    pub header: NewHeader,
}

impl OutputLuks {
    /// Keeps the source's volume key and passphrase: its header is copied when the output can hold it (raw
    /// output, or a LUKS1 header for qcow2), else a LUKS1 header is made for the same key and `passphrase`.
    pub fn same(unlocked: &Unlocked, container: Container, passphrase: &[u8], cost: KdfCost) -> Result<OutputLuks> {
        let (Some(key), Some(header)) = (&unlocked.key, &unlocked.header) else {
            return Err(Error::InvalidParameter("the source is not encrypted: it has no key to keep".into()));
        };
        let copyable = match container {
            Container::Raw => true,
            Container::Qcow2 => header.version == Version::Luks1 && header.payload.sector_size == 512,
        };
        let header = if copyable {
            NewHeader::Copy(header.clone())
        } else {
            embedded::check_qemu_passphrase(passphrase)?;
            NewHeader::Fresh { passphrase: Zeroizing::new(passphrase.to_vec()), cost }
        };
        Ok(OutputLuks { key: key.clone(), header })
    }

    /// A new volume key with a new header for `passphrase`.
    pub fn fresh(passphrase: &[u8], cost: KdfCost) -> Result<OutputLuks> {
        embedded::check_qemu_passphrase(passphrase)?;
        Ok(OutputLuks {
            key: VolumeKey::generate(64),
            header: NewHeader::Fresh { passphrase: Zeroizing::new(passphrase.to_vec()), cost },
        })
    }
}

/// What the output looks like.
pub struct OutputSpec {
    /// raw or qcow2.
    pub container: Container,
    /// qcow2 cluster size (log2); ignored for raw.
    pub cluster_bits: u32,
    /// LUKS encryption, or a plain image.
    pub encryption: Option<OutputLuks>,
}

/// What was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Converted {
    /// Virtual (decrypted) size.
    pub virtual_size: u64,
    /// Output file length.
    pub file_len: u64,
    /// qcow2 data clusters allocated (None for raw).
    pub data_clusters: Option<u64>,
    /// LUKS payload offset of a raw LUKS output, or the LUKS header length in a qcow2.
    pub luks_header_len: Option<u64>,
}

/// The output side.
enum Sink<'a> {
    Raw { file: &'a File },
    RawLuks { file: &'a File, payload: PayloadInfo, cipher: Box<XtsPlain64>, threads: usize, next: u64 },
    Qcow2(Box<Qcow2Writer<'a>>),
}

impl Sink<'_> {
    fn skips_holes(&self) -> bool {
        !matches!(self, Sink::RawLuks { .. })
    }

    fn write(&mut self, offset: u64, buf: &mut [u8]) -> Result<()> {
        match self {
            Sink::Raw { file } => {
                // Sparse: blocks of zeros are not written.
                for (i, block) in buf.chunks(4096).enumerate() {
                    if block.iter().any(|&b| b != 0) {
                        file.write_all_at(block, offset + i as u64 * 4096).map_err(Error::io("writing the image"))?;
                    }
                }
                Ok(())
            }
            Sink::RawLuks { file, payload, cipher, threads, next } => {
                debug_assert_eq!(*next, offset, "raw LUKS output is written without gaps");
                let unit = payload.sector_size as usize;
                let len = buf.len().div_ceil(unit) * unit;
                let mut padded;
                let data: &mut [u8] = if len == buf.len() {
                    buf
                } else {
                    padded = SecretBuf::zeroed(len);
                    padded[..buf.len()].copy_from_slice(buf);
                    &mut padded[..]
                };
                cipher.encrypt_units_parallel(data, unit, payload.iv_tweak + offset / 512, *threads);
                file.write_all_at(data, payload.offset + offset).map_err(Error::io("writing the encrypted payload"))?;
                *next = offset + len as u64;
                Ok(())
            }
            Sink::Qcow2(writer) => {
                let cs = writer.cluster_size();
                for (i, cluster) in buf.chunks(cs as usize).enumerate() {
                    writer.write_cluster(offset / cs + i as u64, cluster)?;
                }
                Ok(())
            }
        }
    }
}

/// Streams `source` into the empty file `dst` as `spec` says. `progress` advances by guest bytes.
pub fn convert(
    source: &mut dyn Source,
    dst: &File,
    spec: &OutputSpec,
    threads: usize,
    progress: &dyn Progress,
) -> Result<Converted> {
    let encrypted = spec.encryption.is_some();
    let virtual_size = if encrypted { source.len().div_ceil(512) * 512 } else { source.len() };
    let mut luks_header_len = None;
    let mut sink = match (spec.container, &spec.encryption) {
        (Container::Raw, None) => Sink::Raw { file: dst },
        (Container::Raw, Some(luks)) => {
            let (bytes, payload) = match &luks.header {
                NewHeader::Copy(h) => (h.bytes.clone(), h.payload.clone()),
                NewHeader::Fresh { passphrase, cost } => {
                    let (bytes, offset) =
                        embedded::new_luks1_header(&luks.key, passphrase, *cost, PayloadPlacement::Cryptsetup)?;
                    let payload =
                        PayloadInfo { offset, len: 0, cipher: "aes-xts-plain64".into(), sector_size: 512, iv_tweak: 0 };
                    (bytes, payload)
                }
            };
            let unit = u64::from(payload.sector_size);
            let payload_len = virtual_size.div_ceil(unit) * unit;
            dst.set_len(payload.offset + payload_len).map_err(Error::io("sizing the image"))?;
            dst.write_all_at(&bytes, 0).map_err(Error::io("writing the LUKS header"))?;
            luks_header_len = Some(payload.offset);
            let cipher = embedded::data_cipher(&payload.cipher, &luks.key)?;
            Sink::RawLuks { file: dst, payload, cipher: Box::new(cipher), threads, next: 0 }
        }
        (Container::Qcow2, encryption) => {
            let (header, cipher) = match encryption {
                None => (None, None),
                Some(luks) => {
                    let bytes = match &luks.header {
                        NewHeader::Copy(h) => h.bytes.clone(),
                        NewHeader::Fresh { passphrase, cost } => {
                            embedded::new_luks1_header(&luks.key, passphrase, *cost, PayloadPlacement::Qemu)?.0
                        }
                    };
                    (Some(bytes), Some(embedded::data_cipher("aes-xts-plain64", &luks.key)?))
                }
            };
            luks_header_len = header.as_ref().map(|h| h.len() as u64);
            let layout = Layout::new(virtual_size, spec.cluster_bits, luks_header_len)?;
            Sink::Qcow2(Box::new(Qcow2Writer::new(dst, layout, header.as_deref(), cipher, threads)?))
        }
    };
    let mut buf = SecretBuf::zeroed(CHUNK);
    let mut pos = 0u64;
    while pos < virtual_size {
        if sink.skips_holes() {
            let data = source.next_data(pos)?;
            let next = (data / ALIGN * ALIGN).max(pos);
            progress.advance(next - pos);
            pos = next;
            if pos >= virtual_size {
                break;
            }
        }
        let n = (CHUNK as u64).min(virtual_size - pos) as usize;
        source.read_at(pos, &mut buf[..n])?;
        sink.write(pos, &mut buf[..n])?;
        pos += n as u64;
        progress.advance(n as u64);
    }
    let (file_len, data_clusters) = match sink {
        Sink::Raw { file } => {
            file.set_len(virtual_size).map_err(Error::io("sizing the image"))?;
            (virtual_size, None)
        }
        Sink::RawLuks { file, .. } => (file.metadata().map_err(Error::io("reading the image size"))?.len(), None),
        Sink::Qcow2(writer) => {
            let written = writer.finish()?;
            (written.file_len, Some(written.data_clusters))
        }
    };
    Ok(Converted { virtual_size, file_len, data_clusters, luks_header_len })
}

/// Whether the file at `path` starts with the qcow2 magic.
pub fn is_qcow2(path: &Path) -> Result<bool> {
    let file = File::open(path).map_err(Error::io(format!("opening `{}`", path.display())))?;
    let mut magic = [0u8; 4];
    let n = file.read_at(&mut magic, 0).map_err(Error::io(format!("reading `{}`", path.display())))?;
    Ok(n == 4 && magic == header::MAGIC)
}

/// `inner` seen as a disk of `len` bytes: zeros past its end (an image grown with `--size`).
pub struct Resized {
    /// The disk.
    pub inner: Box<dyn Source>,
    /// The new size (at least the inner one).
    pub len: u64,
}

impl Source for Resized {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.inner.read_at(offset, buf)
    }

    fn next_data(&mut self, offset: u64) -> Result<u64> {
        let at = self.inner.next_data(offset)?;
        Ok(if at >= self.inner.len() { self.len } else { at })
    }
}

/// An empty disk of `len` bytes.
pub struct Zeros(pub u64);

impl Source for Zeros {
    fn len(&self) -> u64 {
        self.0
    }

    fn read_at(&mut self, _offset: u64, buf: &mut [u8]) -> Result<()> {
        buf.fill(0);
        Ok(())
    }

    fn next_data(&mut self, _offset: u64) -> Result<u64> {
        Ok(self.0)
    }
}

/// Writes every guest byte of `source` to `out` in order (a raw image on a pipe).
pub fn copy_to(source: &mut dyn Source, out: &mut dyn std::io::Write, progress: &dyn Progress) -> Result<u64> {
    let len = source.len();
    let mut buf = SecretBuf::zeroed(CHUNK);
    let mut pos = 0u64;
    while pos < len {
        let n = (CHUNK as u64).min(len - pos) as usize;
        source.read_at(pos, &mut buf[..n])?;
        out.write_all(&buf[..n]).map_err(Error::io("writing the raw image"))?;
        pos += n as u64;
        progress.advance(n as u64);
    }
    Ok(len)
}
