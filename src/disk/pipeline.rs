//! The disk pipeline: a source container (raw, raw LUKS1/LUKS2, qcow2, qcow2+LUKS, on a file or a block device,
//! or an empty disk) → an optional re-key → a sink container (raw, raw LUKS, qcow2, qcow2+LUKS) on a checked
//! [`Output`]. `disk convert` is the pipeline; `disk luks-format` is the pipeline from an empty or raw disk;
//! `disk decrypt` is the pipeline into a plain raw output.
//!
//! Seams for other key managers and destinations: the output's secret goes through a [`SecretSink`] (staged
//! before the image is written, committed before the image is renamed into place, discarded on failure), and the
//! pipeline returns the facts ([`Converted`]) from which [`crate::render::openstack`] renders the Glance
//! properties.

use super::output::{self, Output};
use super::{Error, device};
use crate::interact::{Interaction, Progress};
use crate::luks::format::{DIGEST_ITER_TIME_MS, FormatOptions, Pbkdf2Rate};
use crate::luks::{self, Hash, Volume, VolumeKey};
use crate::qcow2::luks::KdfCost;
use crate::qcow2::{self, Container, Input, OutputLuks, OutputSpec};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

pub use crate::qcow2::Converted;

/// Threads for the payload cipher: every core the process may use.
pub fn cipher_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// An opened source image (read-only): its container told by content, its LUKS header parsed.
pub struct Source {
    input: Input,
    path: PathBuf,
}

impl Source {
    /// Opens `path` (a file or a block device) read-only.
    pub fn open(path: &Path) -> Result<Source, Error> {
        let input = Input::open(path).map_err(|e| reading(path, e))?;
        Ok(Source { input, path: path.to_path_buf() })
    }

    /// The path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// raw or qcow2.
    pub fn container(&self) -> Container {
        self.input.container()
    }

    /// Whether a passphrase is needed.
    pub fn encrypted(&self) -> bool {
        self.input.encrypted()
    }

    /// Warnings about the source's LUKS header copies (a damaged primary LUKS2 header opened from the secondary).
    pub fn warnings(&self) -> Vec<String> {
        self.input.luks_volume().map(copy_warnings).unwrap_or_default()
    }

    /// Unlocks the source (`passphrase` only for an encrypted one).
    pub fn unlock(self, passphrase: Option<&[u8]>) -> Result<Unlocked, Error> {
        let path = self.path;
        let unlocked = self
            .input
            .unlock(passphrase, cipher_threads())
            .map_err(|e| Error::Unlocking { path: path.display().to_string(), source: e })?;
        Ok(Unlocked { inner: unlocked, path })
    }
}

/// Warnings about header copies that were unusable or stale (the volume still opened from the other copy).
pub fn copy_warnings(volume: &Volume) -> Vec<String> {
    let state = volume.copy_state();
    let mut out = Vec::new();
    if let Some(problem) = &state.primary_problem {
        out.push(format!(
            "the primary LUKS2 header is unusable ({problem}); opened from the secondary copy (cryptsetup would \
             rewrite the primary on its next access)"
        ));
    }
    if let Some(problem) = &state.secondary_problem {
        out.push(format!("the secondary LUKS2 header is unusable ({problem})"));
    }
    if let Some(copy) = state.stale {
        out.push(format!("the {copy} LUKS2 header copy is older than the other one"));
    }
    out
}

/// An unlocked source: its guest bytes, and its key and header when it was encrypted.
pub struct Unlocked {
    inner: qcow2::Unlocked,
    path: PathBuf,
}

impl Unlocked {
    /// A plain disk of `len` bytes of zeros (luks-format without `--from`).
    pub fn empty(len: u64) -> Unlocked {
        let inner = qcow2::Unlocked { source: Box::new(qcow2::stream::Zeros(len)), key: None, header: None };
        Unlocked { inner, path: PathBuf::from("(empty disk)") }
    }

    /// Guest size in bytes.
    pub fn len(&self) -> u64 {
        self.inner.source.len()
    }

    /// Whether the disk has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the source was encrypted.
    pub fn was_encrypted(&self) -> bool {
        self.inner.key.is_some()
    }

    /// The same disk seen as `len` bytes (at least its own size): zeros after its end.
    pub fn resize(mut self, len: u64) -> Unlocked {
        if len != self.len() {
            let inner = std::mem::replace(&mut self.inner.source, Box::new(qcow2::stream::Zeros(0)));
            self.inner.source = Box::new(qcow2::stream::Resized { inner, len });
        }
        self
    }
}

/// How the keyslot's PBKDF2 cost is chosen for new LUKS1 headers.
#[derive(Clone, Copy, Debug)]
pub enum KdfChoice {
    /// These iterations (the digest takes cryptsetup's minimum).
    Forced(u32),
    /// Benchmarked, like cryptsetup, for this many milliseconds.
    Benchmark(u64),
}

impl KdfChoice {
    /// The cost (a benchmark shows a spinner through `ui`).
    pub fn cost(self, ui: &dyn Interaction) -> KdfCost {
        match self {
            KdfChoice::Forced(n) => KdfCost { keyslot_iterations: n, digest_iterations: luks::PBKDF2_MIN_ITERATIONS },
            KdfChoice::Benchmark(ms) => {
                let _busy = ui.busy("benchmarking PBKDF2");
                let rate = Pbkdf2Rate::measure(Hash::Sha256);
                KdfCost {
                    keyslot_iterations: rate.iterations(ms, 64),
                    digest_iterations: rate.iterations(DIGEST_ITER_TIME_MS, Hash::Sha256.output_len()),
                }
            }
        }
    }
}

/// Which key encrypts the output.
pub enum Key<'a> {
    /// The source's volume key and passphrase (Nova's `same`); the source's passphrase is given again here.
    Same(&'a [u8]),
    /// A new volume key under this passphrase (`new`, `existing`, luks-format).
    Fresh(&'a [u8]),
    /// A plain output.
    None,
}

/// What the sink is.
pub struct Plan<'a> {
    /// raw or qcow2.
    pub container: Container,
    /// qcow2 cluster size (log2).
    pub cluster_bits: u32,
    /// The key.
    pub key: Key<'a>,
    /// The cost of a new keyslot.
    pub kdf: KdfChoice,
}

/// Where a new secret for the output goes: staged before the image is written (so a failure to store it costs
/// no image), committed once the image is complete but before it is renamed into place (so no image is ever in
/// place without its secret: a run that fails or is killed between the two leaves a secret without an image,
/// never the reverse), discarded when dropped uncommitted.
pub trait SecretSink {
    /// Keeps `secret` where [`SecretSink::commit`] can make it final.
    fn stage(&mut self, secret: &[u8]) -> Result<(), Error>;
    /// Makes the staged secret final (after the image was written, before it is renamed into place).
    fn commit(&mut self) -> Result<(), Error>;
    /// Takes a committed secret back: the image it belongs to did not reach its place. Best effort.
    fn withdraw(&mut self);
}

/// A new secret file: written 0600 under a partial name (`.NAME.XXXXXX.cryptadm-partial`, removed on SIGTERM,
/// SIGINT and by the next run after a SIGKILL) and given its name last, never over an existing file.
pub struct KeyFile {
    path: PathBuf,
    staged: Option<tempfile::NamedTempFile>,
    /// The committed file's device and inode (what [`SecretSink::withdraw`] may remove).
    committed: Option<(u64, u64)>,
}

impl KeyFile {
    /// A key file to create at `path`, which must not exist.
    pub fn new(path: &Path) -> Result<KeyFile, Error> {
        if std::fs::symlink_metadata(path).is_ok() {
            return Err(Error::KeyFileExists(path.display().to_string()));
        }
        Ok(KeyFile { path: path.to_path_buf(), staged: None, committed: None })
    }

    /// The directory the key file goes into.
    fn dir(&self) -> PathBuf {
        match self.path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        }
    }
}

impl SecretSink for KeyFile {
    fn stage(&mut self, secret: &[u8]) -> Result<(), Error> {
        let dir = self.dir();
        let name = self.path.file_name().and_then(|n| n.to_str()).unwrap_or("key");
        let context = format!("writing `{}`", self.path.display());
        // A run killed with SIGKILL left its partial key file: no lock holds it any more.
        crate::atomic::remove_stale_partials(&dir).map_err(Error::io(context.clone()))?;
        let mut temp =
            crate::atomic::partial_file(&dir, name, crate::atomic::MODE_PRIVATE).map_err(Error::io(context.clone()))?;
        temp.write_all(secret).and_then(|()| temp.as_file().sync_all()).map_err(Error::io(context))?;
        self.staged = Some(temp);
        Ok(())
    }

    fn commit(&mut self) -> Result<(), Error> {
        use std::os::unix::fs::MetadataExt;
        let Some(temp) = self.staged.take() else { return Ok(()) };
        let file = temp.persist_noclobber(&self.path).map_err(|e| {
            if e.error.kind() == std::io::ErrorKind::AlreadyExists {
                Error::KeyFileExists(self.path.display().to_string())
            } else {
                Error::io(format!("writing `{}`", self.path.display()))(e.error)
            }
        })?;
        if let Ok(meta) = file.metadata() {
            self.committed = Some((meta.dev(), meta.ino()));
        }
        crate::atomic::sync_dir(&self.dir()).map_err(Error::io(format!("writing `{}`", self.path.display())))
    }

    fn withdraw(&mut self) {
        use std::os::unix::fs::MetadataExt;
        let Some(identity) = self.committed.take() else { return };
        // Only the file this run created: whatever has taken its name since stays.
        let ours = std::fs::symlink_metadata(&self.path).is_ok_and(|m| m.is_file() && (m.dev(), m.ino()) == identity);
        if ours && std::fs::remove_file(&self.path).is_ok() {
            let _ = crate::atomic::sync_dir(&self.dir());
        }
    }
}

/// Held from a new secret's commit until its image is in place (or the secret withdrawn again): a signal's handler
/// takes it before removing partial files ([`hold_commits`]), so a SIGTERM during the final flush leaves both files
/// or neither, never the key alone.
static COMMITTING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Waits for a commit under way to finish and keeps new ones from starting, for as long as the guard lives (the
/// signal handler holds it until the process is gone).
pub fn hold_commits() -> std::sync::MutexGuard<'static, ()> {
    COMMITTING.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A source that remembers whether one of its reads failed (so the error is blamed on the input, not the output).
struct Watched<'a> {
    inner: &'a mut dyn qcow2::Source,
    failed: &'a AtomicBool,
}

impl qcow2::Source for Watched<'_> {
    fn len(&self) -> u64 {
        self.inner.len()
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> qcow2::Result<()> {
        let result = self.inner.read_at(offset, buf);
        if result.is_err() {
            self.failed.store(true, Ordering::Relaxed);
        }
        result
    }

    fn next_data(&mut self, offset: u64) -> qcow2::Result<u64> {
        let result = self.inner.next_data(offset);
        if result.is_err() {
            self.failed.store(true, Ordering::Relaxed);
        }
        result
    }
}

/// A step of the caller's that must succeed before the output takes its place (an upload of the complete image):
/// given what was written and the complete, flushed output (read it from a duplicate of the descriptor, from
/// offset 0). Its failure leaves whatever was at the output's path as it was; the caller keeps its own error and
/// returns [`Error::Withheld`].
pub type BeforeRename<'a, T> = Box<dyn FnOnce(&T, &File) -> Result<(), Error> + 'a>;

/// Streams `source` into `output` as `plan` says; a new secret, if any, goes through `secret` (staged first,
/// committed once the image is complete, before it is renamed into place). `before_rename` runs once the image is
/// complete, before the secret's commit and the rename. The output must be an image file.
pub fn convert(
    source: Unlocked,
    plan: &Plan<'_>,
    output: &Output,
    secret: Option<(&mut dyn SecretSink, &[u8])>,
    before_rename: Option<BeforeRename<'_, Converted>>,
    ui: &dyn Interaction,
) -> Result<Converted, Error> {
    let dst = output.require_file("qcow2 and converted images are files")?;
    let encryption = match plan.key {
        Key::None => None,
        Key::Same(passphrase) => {
            let needs_new_header = plan.container == Container::Qcow2
                && source.inner.header.as_ref().is_some_and(|h| h.version != luks::Version::Luks1);
            let cost = if needs_new_header {
                plan.kdf.cost(ui)
            } else {
                KdfCost { keyslot_iterations: 0, digest_iterations: 0 }
            };
            Some(
                OutputLuks::same(&source.inner, plan.container, passphrase, cost)
                    .map_err(|e| reading(&source.path, e))?,
            )
        }
        Key::Fresh(passphrase) => Some(OutputLuks::fresh(passphrase, plan.kdf.cost(ui))?),
    };
    let spec = OutputSpec { container: plan.container, cluster_bits: plan.cluster_bits, encryption };
    let mut sink = match secret {
        Some((sink, bytes)) => {
            sink.stage(bytes)?;
            Some(sink)
        }
        None => None,
    };
    let Unlocked { inner, path } = source;
    let mut from = inner.source;
    let progress = ui.transfer("converting", from.len());
    let failed = AtomicBool::new(false);
    let committed = AtomicBool::new(false);
    let mut commit_guard = None;
    let written = crate::atomic::write_with(dst, crate::atomic::MODE_PRIVATE, |file| {
        let mut watched = Watched { inner: from.as_mut(), failed: &failed };
        let converted = qcow2::convert(&mut watched, file, &spec, cipher_threads(), progress.as_ref())
            .map_err(|e| if failed.load(Ordering::Relaxed) { reading(&path, e) } else { writing(dst, e) })
            .map_err(|e| blame_output(e, dst))?;
        if let Some(step) = before_rename {
            file.sync_all()?;
            step(&converted, file)?;
        }
        // The secret is final before the image takes its place: an image in place without its secret opens for
        // nobody (and with --force it replaced the one that did), a secret without its image costs nothing. The
        // image is flushed first, so the step a signal waits for (key commit to image rename) is short.
        if let Some(sink) = sink.as_deref_mut() {
            file.sync_all()?;
            commit_guard = Some(hold_commits());
            sink.commit()?;
            committed.store(true, Ordering::Relaxed);
        }
        Ok::<_, Stop>(converted)
    });
    match written {
        Ok(converted) => Ok(converted),
        Err(e) => {
            if committed.load(Ordering::Relaxed)
                && let Some(sink) = sink
            {
                sink.withdraw();
            }
            drop(commit_guard);
            Err(match e {
                Stop::Said(e) => e,
                Stop::Io(e) => blame_output(e.into(), dst),
            })
        }
    }
}

/// What stops the image's atomic write: an error already said (the conversion's, the secret's commit), or an I/O
/// error of the partial file or the rename (said of the output).
enum Stop {
    Said(Error),
    Io(std::io::Error),
}

impl From<Error> for Stop {
    fn from(e: Error) -> Self {
        Stop::Said(e)
    }
}

impl From<std::io::Error> for Stop {
    fn from(e: std::io::Error) -> Self {
        Stop::Io(e)
    }
}

/// What `disk decrypt` wrote.
pub struct Decrypted {
    /// Bytes of plaintext.
    pub bytes: u64,
}

/// Where `disk decrypt` writes.
pub enum RawSink<'a> {
    /// A checked output (an image file, or a block device written in place).
    Output(&'a Output),
    /// A stream (standard output).
    Stream(&'a mut dyn Write),
}

/// Decrypts (or, for a plain qcow2, reads) `source` into a plain raw image.
pub fn decrypt(
    source: Source,
    passphrase: Option<&[u8]>,
    sink: RawSink<'_>,
    ui: &dyn Interaction,
) -> Result<Decrypted, Error> {
    let threads = cipher_threads();
    // A raw LUKS source is decrypted by the LUKS library (LUKS2 sector sizes, every payload cipher it reads).
    if let Input::RawLuks(volume) = &source.input {
        let payload = volume.payload().map_err(|e| reading(&source.path, e.into()))?;
        let passphrase = passphrase.ok_or_else(|| {
            Error::Qcow2(qcow2::Error::InvalidParameter("the image is encrypted: a passphrase is needed".into()))
        })?;
        let (_, key) = volume
            .unlock(passphrase)
            .map_err(|e| Error::Unlocking { path: source.path.display().to_string(), source: e.into() })?;
        let progress = ui.transfer("decrypting", payload.len);
        return match sink {
            RawSink::Stream(out) => {
                let n = decrypt_luks(volume, &payload, &key, out, threads, progress.as_ref(), &source.path)?;
                out.flush().map_err(Error::io("writing to standard output"))?;
                Ok(Decrypted { bytes: n })
            }
            RawSink::Output(output) => {
                output.require_room(payload.len)?;
                let bytes = output::write(output, |file, _| {
                    let mut file = file;
                    decrypt_luks(volume, &payload, &key, &mut file, threads, progress.as_ref(), &source.path)
                })
                .map_err(|e| blame_output(e, output.path()))?;
                Ok(Decrypted { bytes })
            }
        };
    }
    let unlocked = source.unlock(passphrase)?;
    let Unlocked { inner, path } = unlocked;
    let mut from = inner.source;
    let progress = ui.transfer("decrypting", from.len());
    let failed = AtomicBool::new(false);
    let bytes = match sink {
        RawSink::Stream(out) => {
            let mut watched = Watched { inner: from.as_mut(), failed: &failed };
            let n = qcow2::stream::copy_to(&mut watched, out, progress.as_ref())
                .map_err(|e| if failed.load(Ordering::Relaxed) { reading(&path, e) } else { Error::Qcow2(e) })?;
            out.flush().map_err(Error::io("writing to standard output"))?;
            n
        }
        RawSink::Output(output) => {
            output.require_room(from.len())?;
            let spec = OutputSpec { container: Container::Raw, cluster_bits: 0, encryption: None };
            output::write(output, |file, is_device| {
                let mut watched = Watched { inner: from.as_mut(), failed: &failed };
                let result = if is_device {
                    // A device is not sparse: its old bytes stay where zeros are skipped, so every byte is written.
                    let mut file = file;
                    qcow2::stream::copy_to(&mut watched, &mut file, progress.as_ref())
                } else {
                    qcow2::convert(&mut watched, file, &spec, threads, progress.as_ref()).map(|c| c.virtual_size)
                };
                result.map_err(|e| {
                    if failed.load(Ordering::Relaxed) { reading(&path, e) } else { writing(output.path(), e) }
                })
            })
            .map_err(|e| blame_output(e, output.path()))?
        }
    };
    Ok(Decrypted { bytes })
}

fn decrypt_luks(
    volume: &Volume,
    payload: &luks::PayloadInfo,
    key: &VolumeKey,
    out: &mut dyn Write,
    threads: usize,
    progress: &dyn Progress,
    path: &Path,
) -> Result<u64, Error> {
    let mut out = out;
    luks::payload::decrypt_to(volume.file(), payload, key, &mut out, threads, progress).map_err(|e| match e {
        luks::Error::Io { .. } => Error::Luks(e),
        other => reading(path, other.into()),
    })
}

/// An I/O error of the partial file, the rename or the device: said of the output.
fn blame_output(error: Error, output: &Path) -> Error {
    match error {
        Error::Io { source, .. } => Error::io(format!("writing `{}`", output.display()))(source),
        Error::Luks(luks::Error::Io { source, .. }) => Error::io(format!("writing `{}`", output.display()))(source),
        other => other,
    }
}

/// What the raw LUKS sink of `disk luks-format` wrote.
pub struct Formatted {
    /// Payload bytes (the encrypted disk's size).
    pub payload_len: u64,
    /// Bytes encrypted from the source.
    pub written: u64,
    /// The second keyslot and its token, when one was asked for: (keyslot id, token id).
    pub bound: Option<(u32, u32)>,
}

/// A raw source for `disk luks-format --from`: a file or a block device, and its size.
pub struct RawSource {
    file: File,
    len: u64,
}

impl RawSource {
    /// Opens `path` read-only; a block device's size is its real size.
    pub fn open(path: &Path) -> Result<RawSource, Error> {
        let file = File::open(path).map_err(Error::io(format!("opening the raw image `{}`", path.display())))?;
        let len = device::len(&file).map_err(Error::io(format!("reading `{}`", path.display())))?;
        Ok(RawSource { file, len })
    }

    /// Its size in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether it has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The payload size of a new LUKS volume on `output`: a device's room (never resized), or `size`, or the raw
/// source's size, rounded up to a sector; the existing file's payload when neither is given.
pub fn payload_len(
    output: &Output,
    size: Option<u64>,
    from_len: Option<u64>,
    payload_offset: u64,
    sector: u32,
) -> Result<u64, Error> {
    let sector = u64::from(sector);
    let round = |n: u64| n.div_ceil(sector) * sector;
    match output {
        Output::Device { path, len } => {
            if size.is_some() {
                return Err(Error::Usage("--size applies to image files; a block device is never resized".into()));
            }
            let available = len.saturating_sub(payload_offset) / sector * sector;
            let needed = payload_offset + from_len.map_or(sector, round);
            if available == 0 || needed > *len {
                return Err(Error::TooSmall { path: path.display().to_string(), needed, len: *len });
            }
            Ok(available)
        }
        Output::File(path) => {
            let existing = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
            match (size, from_len) {
                (Some(size), Some(f)) if size < f => {
                    Err(Error::Invalid(format!("--size {size} is smaller than the raw image ({f} bytes)")))
                }
                (Some(size), _) => Ok(round(size)),
                (None, Some(f)) => Ok(round(f)),
                (None, None) if existing > payload_offset => Ok(round(existing - payload_offset)),
                (None, None) => Err(Error::Usage("a new image needs --size SIZE or --from RAW_IMAGE".into())),
            }
        }
    }
}

/// `disk luks-format` into a raw LUKS volume: a new header for `options` and `passphrase`, and the payload
/// encrypted from `from` (or left as it is), and with `token` a second keyslot and its token (a clevis binding) in
/// the same header write. An image file is built beside itself and renamed (`before_rename` runs just before); a
/// device is written in place, payload first and header last: either way the volume never appears without its
/// token.
#[allow(clippy::too_many_arguments)] // each is a separate decision of the caller's
pub fn format_luks(
    from: Option<RawSource>,
    options: &FormatOptions,
    passphrase: &[u8],
    payload_len: u64,
    output: &Output,
    token: Option<&luks::format::TokenSlot<'_>>,
    before_rename: Option<BeforeRename<'_, Formatted>>,
    ui: &dyn Interaction,
) -> Result<Formatted, Error> {
    let key = VolumeKey::generate(options.key_bytes);
    let progress = ui.transfer("encrypting", from.as_ref().map_or(0, |f| f.len));
    let mut from = from;
    output::write(output, |file, is_device| {
        if !is_device {
            file.set_len(options.payload_offset() + payload_len).map_err(Error::io("sizing the image"))?;
        }
        let source = from.as_mut().map(|f| &mut f.file);
        let written = luks::format::format_with_payload(
            file,
            options,
            &key,
            passphrase,
            source,
            payload_len,
            cipher_threads(),
            progress.as_ref(),
            token,
        )
        .map_err(Error::Luks)?;
        let formatted = Formatted { payload_len, written: written.0, bound: written.1 };
        if let Some(step) = before_rename {
            file.sync_all()?;
            step(&formatted, file)?;
        }
        Ok(formatted)
    })
    .map_err(|e| blame_output(e, output.path()))
}

fn reading(path: &Path, error: qcow2::Error) -> Error {
    Error::Reading { path: path.display().to_string(), source: error }
}

fn writing(path: &Path, error: qcow2::Error) -> Error {
    Error::Writing { path: path.display().to_string(), source: error }
}
