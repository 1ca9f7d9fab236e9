//! OCI image layout directories (`oci:`) and archives of them (`oci-archive:`).
//!
//! A destination writes blobs first (content-addressed, so harmless to others), then replaces `index.json`
//! atomically: the tag names the old image or the complete new one, never a partial one. Blobs written by a run
//! that fails are removed again. An archive is assembled in a temporary directory and renamed into place.

use super::descriptor::{Descriptor, digest_hex};
use super::{BlobWriter, ImageDestination, ImageSource, MAX_MANIFEST_BYTES};
use crate::atomic;
use crate::bounded::{open_regular, read_regular};
use crate::crypto::parallel_hash::Sha256ForSize;
use crate::oci::Error;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::fs;
use std::io::{self, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

const REF_NAME: &str = "org.opencontainers.image.ref.name";
const MODE_PUBLIC: u32 = 0o644;

fn io_err(what: impl std::fmt::Display, error: io::Error) -> Error {
    match error.kind() {
        io::ErrorKind::NotFound => Error::NotFound(format!("{what}: {error}")),
        io::ErrorKind::InvalidData | io::ErrorKind::IsADirectory | io::ErrorKind::NotADirectory => {
            Error::Malformed(format!("{what}: {error}"))
        }
        _ => Error::Io(format!("{what}: {error}")),
    }
}

/// Whether the file at `path` holds exactly the blob `digest` names: a blob already in a destination is reused
/// only once its bytes are checked (a run killed by something else, or a disk error, may have left it short).
/// The check is the one every source blob passes, [`VerifyingReader`], over the file's own length.
fn holds_blob(path: &Path, digest: &str) -> io::Result<bool> {
    let file = match open_regular(path) {
        Ok(file) => file,
        Err(e) if matches!(e.kind(), io::ErrorKind::NotFound | io::ErrorKind::InvalidData) => return Ok(false),
        Err(e) => return Err(e),
    };
    let found = Descriptor::new("", digest, file.metadata()?.len());
    let mut reader = VerifyingReader::new(io::BufReader::with_capacity(1 << 20, file), &found)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
    match io::copy(&mut reader, &mut io::sink()) {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::InvalidData => Ok(false),
        Err(e) => Err(e),
    }
}

/// An image in a layout directory.
pub struct LayoutSource {
    dir: PathBuf,
    root: Descriptor,
    // Keeps an extracted archive alive as long as the source.
    _extracted: Option<atomic::PartialDir>,
    bounds: super::bounds::ManifestBounds,
}

impl LayoutSource {
    /// Opens the image tagged `tag` (or the only image) in the layout at `dir`.
    pub fn open(dir: &Path, tag: Option<&str>) -> Result<Self, Error> {
        let index_path = dir.join("index.json");
        let index = read_regular(&index_path, MAX_MANIFEST_BYTES)
            .map_err(|e| io_err(format!("`{}`", index_path.display()), e))?;
        let index: Value = serde_json::from_slice(&index)
            .map_err(|e| Error::Malformed(format!("`{}` is not valid JSON: {e}", index_path.display())))?;
        let entries = index
            .get("manifests")
            .and_then(Value::as_array)
            .ok_or_else(|| Error::Malformed(format!("`{}` has no manifests list", index_path.display())))?;
        let root = select_entry(entries, tag, dir)?;
        Ok(Self { dir: dir.to_path_buf(), root, _extracted: None, bounds: Default::default() })
    }

    fn blob_path(&self, digest: &str) -> Result<PathBuf, Error> {
        Ok(self.dir.join("blobs/sha256").join(digest_hex(digest)?))
    }
}

fn select_entry(entries: &[Value], tag: Option<&str>, dir: &Path) -> Result<Descriptor, Error> {
    let tags: Vec<&str> = entries.iter().filter_map(|e| e.get("annotations")?.get(REF_NAME)?.as_str()).collect();
    let chosen = match tag {
        Some(tag) => entries
            .iter()
            .rfind(|e| e.get("annotations").and_then(|a| a.get(REF_NAME)).and_then(Value::as_str) == Some(tag)),
        None if entries.len() == 1 => entries.first(),
        None => {
            return Err(Error::Malformed(format!(
                "`{}` holds {} images; name one with :TAG (tags: {})",
                dir.display(),
                entries.len(),
                tags.join(", ")
            )));
        }
    };
    let chosen = chosen.ok_or_else(|| {
        Error::NotFound(format!(
            "no image tagged `{}` in `{}` (tags: {})",
            tag.unwrap_or_default(),
            dir.display(),
            if tags.is_empty() { "none".into() } else { tags.join(", ") }
        ))
    })?;
    Descriptor::from_value(chosen.clone())
}

impl ImageSource for LayoutSource {
    fn root(&self) -> &Descriptor {
        &self.root
    }

    fn open_blob(&self, descriptor: &Descriptor) -> Result<Box<dyn Read + '_>, Error> {
        use super::MediaKind;
        if matches!(descriptor.kind(), MediaKind::Manifest | MediaKind::Index) {
            // Read whole (bounded by the size check of `read_blob`), counted and placed in the tree.
            let digest = descriptor.digest()?;
            self.bounds.admit(digest)?;
            if descriptor.size()? > super::MAX_MANIFEST_BYTES {
                return Err(Error::Malformed(format!("{digest} is larger than {} bytes", super::MAX_MANIFEST_BYTES)));
            }
            let file = self.open_blob_unverified(descriptor)?;
            let mut bytes = Vec::new();
            VerifyingReader::new(file, descriptor)?
                .read_to_end(&mut bytes)
                .map_err(|e| super::io_error(descriptor, e))?;
            if descriptor.kind() == MediaKind::Index {
                self.bounds.index_read(digest, &bytes);
            }
            return Ok(Box::new(io::Cursor::new(bytes)));
        }
        let file = self.open_blob_unverified(descriptor)?;
        Ok(Box::new(VerifyingReader::new(io::BufReader::with_capacity(1 << 20, file), descriptor)?))
    }

    fn open_blob_unverified(&self, descriptor: &Descriptor) -> Result<Box<dyn Read + '_>, Error> {
        let path = self.blob_path(descriptor.digest()?)?;
        let file = open_regular(&path).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => Error::NotFound(format!(
                "blob {} is missing from `{}`",
                descriptor.digest().unwrap_or_default(),
                self.dir.display()
            )),
            io::ErrorKind::InvalidData => Error::Malformed(format!(
                "blob {} in `{}` is not a regular file",
                descriptor.digest().unwrap_or_default(),
                self.dir.display()
            )),
            _ => io_err(format!("`{}`", path.display()), e),
        })?;
        Ok(Box::new(file))
    }
}

/// Opens an `oci-archive:` source by extracting it into a private temporary directory (streaming; the tar
/// crate refuses entries that would escape the directory).
pub fn open_archive_source(archive: &Path, tag: Option<&str>) -> Result<LayoutSource, Error> {
    let file = fs::File::open(archive).map_err(|e| io_err(format!("`{}`", archive.display()), e))?;
    let scratch = std::env::temp_dir();
    let _ = atomic::remove_stale_partials(&scratch); // a killed run's extraction, best effort
    let extracted = atomic::partial_dir(&scratch, "oci-archive")
        .map_err(|e| io_err(format!("creating a directory in `{}`", scratch.display()), e))?;
    tar::Archive::new(io::BufReader::new(file))
        .unpack(extracted.path())
        .map_err(|e| Error::Malformed(format!("`{}` is not a readable tar archive: {e}", archive.display())))?;
    let mut source = LayoutSource::open(extracted.path(), tag).map_err(|e| match e {
        Error::NotFound(m) | Error::Malformed(m) => Error::Malformed(format!("`{}`: {m}", archive.display())),
        other => other,
    })?;
    source._extracted = Some(extracted);
    Ok(source)
}

/// Checks a blob's size and sha256 digest while it streams; a mismatch is an `InvalidData` error at the end.
pub(super) struct VerifyingReader<R: Read> {
    inner: R,
    hash: Option<Sha256ForSize>,
    expected_digest: String,
    expected_size: u64,
    seen: u64,
}

impl<R: Read> VerifyingReader<R> {
    pub(super) fn new(inner: R, descriptor: &Descriptor) -> Result<Self, Error> {
        Ok(Self {
            inner,
            hash: Some(Sha256ForSize::new(descriptor.size()?)),
            expected_digest: descriptor.digest()?.to_owned(),
            expected_size: descriptor.size()?,
            seen: 0,
        })
    }
}

impl<R: Read> Read for VerifyingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.seen += n as u64;
        if self.seen > self.expected_size {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("longer than its declared {} bytes", self.expected_size),
            ));
        }
        if n == 0 && !buf.is_empty() {
            let Some(hash) = self.hash.take() else { return Ok(0) }; // the end was already checked
            let actual = format!("sha256:{}", hex::encode(hash.finalize()));
            if self.seen != self.expected_size {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{} bytes, declared {} (truncated)", self.seen, self.expected_size),
                ));
            }
            if actual != self.expected_digest {
                return Err(io::Error::new(io::ErrorKind::InvalidData, format!("content has digest {actual}")));
            }
        }
        if let Some(hash) = &mut self.hash {
            hash.update(&buf[..n]);
        }
        Ok(n)
    }
}

/// Writes an image into a layout directory, creating it if needed.
pub struct LayoutDestination {
    dir: PathBuf,
    tag: Option<String>,
    created: Mutex<Vec<PathBuf>>,
    /// The directory did not exist before: a failed run removes it whole.
    created_dir: bool,
    committed: bool,
    /// The mode of committed blobs: 0644, or 0600 for plaintext ([`LayoutDestination::private`]).
    blob_mode: u32,
    /// Blobs found in place whose bytes were checked against their digest (each is read once per run).
    verified: Mutex<HashSet<String>>,
}

impl LayoutDestination {
    /// Keeps what is written from other users: blobs 0600, and a layout directory this run creates 0700. For
    /// decrypted images, whose layers are plaintext.
    pub fn private(mut self) -> Result<Self, Error> {
        self.blob_mode = atomic::MODE_PRIVATE;
        if self.created_dir {
            fs::set_permissions(&self.dir, fs::Permissions::from_mode(0o700))
                .map_err(|e| io_err(format!("restricting `{}`", self.dir.display()), e))?;
        }
        Ok(self)
    }

    /// Prepares `dir` (creating the layout if it does not exist) to receive an image tagged `tag`.
    pub fn create(dir: &Path, tag: Option<&str>) -> Result<Self, Error> {
        let created_dir = !dir.exists();
        let blobs = dir.join("blobs/sha256");
        fs::create_dir_all(&blobs).map_err(|e| io_err(format!("creating `{}`", blobs.display()), e))?;
        // Blobs a killed run was writing (its lock is gone with it); a run still writing keeps its own.
        atomic::remove_stale_partials(&blobs)
            .map_err(|e| io_err(format!("removing stale partial blobs in `{}`", blobs.display()), e))?;
        let marker = dir.join("oci-layout");
        if !marker.exists() {
            atomic::write(&marker, br#"{"imageLayoutVersion":"1.0.0"}"#, MODE_PUBLIC)
                .map_err(|e| io_err(format!("writing `{}`", marker.display()), e))?;
        }
        Ok(Self {
            dir: dir.to_path_buf(),
            tag: tag.map(str::to_owned),
            created: Mutex::new(Vec::new()),
            created_dir,
            committed: false,
            blob_mode: MODE_PUBLIC,
            verified: Mutex::new(HashSet::new()),
        })
    }

    fn blob_path(&self, digest: &str) -> Result<PathBuf, Error> {
        Ok(self.dir.join("blobs/sha256").join(digest_hex(digest)?))
    }

    fn updated_index(&self, root: &Descriptor) -> Result<Value, Error> {
        let path = self.dir.join("index.json");
        let mut index = match read_regular(&path, MAX_MANIFEST_BYTES) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map_err(|e| Error::Malformed(format!("`{}` is not valid JSON: {e}", path.display())))?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => json!({"schemaVersion": 2, "manifests": []}),
            Err(e) => return Err(io_err(format!("`{}`", path.display()), e)),
        };
        let mut entry = root.clone();
        let mut annotations = entry.annotations();
        annotations.remove(REF_NAME);
        if let Some(tag) = &self.tag {
            annotations.insert(REF_NAME.into(), tag.clone());
        }
        entry.set_annotations(annotations);
        let manifests = index
            .get_mut("manifests")
            .and_then(Value::as_array_mut)
            .ok_or_else(|| Error::Malformed(format!("`{}` has no manifests list", path.display())))?;
        // Like skopeo: the tag moves to the new image; an untagged image replaces an identical untagged entry.
        manifests.retain(|e| {
            let entry_tag = e.get("annotations").and_then(|a| a.get(REF_NAME)).and_then(Value::as_str);
            match &self.tag {
                Some(tag) => entry_tag != Some(tag.as_str()),
                None => !(entry_tag.is_none() && e.get("digest") == entry.to_value().get("digest")),
            }
        });
        manifests.push(entry.to_value());
        Ok(index)
    }
}

impl ImageDestination for LayoutDestination {
    /// A blob counts as present only when its bytes match its digest; one that does not is written again (and
    /// replaces the bad copy on commit).
    fn has_blob(&self, digest: &str) -> bool {
        let mut verified = self.verified.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if verified.contains(digest) {
            return true;
        }
        let Ok(path) = self.blob_path(digest) else { return false };
        // An unreadable blob is written again; a real I/O problem then shows when that write fails.
        let intact = holds_blob(&path, digest).unwrap_or(false);
        if intact {
            verified.insert(digest.to_owned());
        }
        intact
    }

    fn blob_writer(&self) -> Result<Box<dyn BlobWriter + '_>, Error> {
        let dir = self.dir.join("blobs/sha256");
        // 0600 until verified and committed: a partial blob may be plaintext whose HMAC has not been checked yet.
        let temp = atomic::partial_file(&dir, "blob", atomic::MODE_PRIVATE)
            .map_err(|e| io_err(format!("creating a blob in `{}`", dir.display()), e))?;
        let file = atomic::DirectWriter::new(temp.as_file())
            .map_err(|e| io_err(format!("creating a blob in `{}`", dir.display()), e))?;
        Ok(Box::new(LayoutBlobWriter { file, temp, destination: self }))
    }

    fn commit(mut self: Box<Self>, root: &Descriptor) -> Result<(), Error> {
        // The blobs' renames are durable before the index names them: a crash in between must not leave an index
        // pointing at blobs whose directory entries never reached the disk.
        let blobs = self.dir.join("blobs/sha256");
        atomic::sync_dir(&blobs).map_err(|e| io_err(format!("flushing `{}`", blobs.display()), e))?;
        let index = self.updated_index(root)?;
        let mut bytes = serde_json::to_vec(&index).expect("JSON values serialize");
        bytes.push(b'\n');
        let path = self.dir.join("index.json");
        atomic::write(&path, &bytes, MODE_PUBLIC).map_err(|e| io_err(format!("writing `{}`", path.display()), e))?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for LayoutDestination {
    fn drop(&mut self) {
        if self.committed {
            return;
        }
        // Nothing names these blobs: a failed run leaves the destination as it found it.
        if self.created_dir {
            let _ = fs::remove_dir_all(&self.dir);
            return;
        }
        let created = std::mem::take(self.created.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner));
        for path in &created {
            let _ = fs::remove_file(path);
        }
    }
}

struct LayoutBlobWriter<'a> {
    file: atomic::DirectWriter,
    temp: tempfile::NamedTempFile,
    destination: &'a LayoutDestination,
}

impl Write for LayoutBlobWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl BlobWriter for LayoutBlobWriter<'_> {
    fn commit(self: Box<Self>, digest: &str) -> Result<(), Error> {
        let target = self.destination.blob_path(digest)?;
        let Self { file, temp, destination } = *self;
        file.finish().map_err(|e| io_err("writing a blob", e))?;
        temp.as_file().sync_all().map_err(|e| io_err("writing a blob", e))?;
        // Whatever is at the blob's name now is replaced, not trusted: these bytes were just hashed, a file found
        // there may be a truncated copy (content-addressed names say what a file should hold, not what it holds).
        let existed = fs::symlink_metadata(&target).is_ok();
        if destination.blob_mode != atomic::MODE_PRIVATE {
            temp.as_file()
                .set_permissions(fs::Permissions::from_mode(destination.blob_mode))
                .map_err(|e| io_err("writing a blob", e))?;
        }
        temp.persist(&target).map_err(|e| io_err(format!("storing blob {digest}"), e.error))?;
        destination.verified.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(digest.to_owned());
        if !existed {
            destination.created.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(target);
        }
        Ok(())
    }
}

/// Writes an `oci-archive:`: a layout assembled in a temporary directory, archived next to the target and renamed
/// over it on commit.
pub struct ArchiveDestination {
    layout: LayoutDestination,
    staging: atomic::PartialDir,
    target: PathBuf,
}

impl ArchiveDestination {
    /// Prepares to write an archive at `target` holding one image tagged `tag`.
    pub fn create(target: &Path, tag: Option<&str>) -> Result<Self, Error> {
        // Staged beside the target (same filesystem, and where the next run looks for a killed run's leftovers).
        let parent = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        atomic::remove_stale_partials(&parent)
            .map_err(|e| io_err(format!("removing stale partial files in `{}`", parent.display()), e))?;
        let name = target.file_name().and_then(|n| n.to_str()).unwrap_or("archive");
        let staging = atomic::partial_dir(&parent, name)
            .map_err(|e| io_err(format!("creating a directory in `{}`", parent.display()), e))?;
        let layout = LayoutDestination::create(staging.path(), tag)?;
        Ok(Self { layout, staging, target: target.to_path_buf() })
    }
}

impl ImageDestination for ArchiveDestination {
    fn has_blob(&self, digest: &str) -> bool {
        self.layout.has_blob(digest)
    }

    fn blob_writer(&self) -> Result<Box<dyn BlobWriter + '_>, Error> {
        self.layout.blob_writer()
    }

    fn commit(self: Box<Self>, root: &Descriptor) -> Result<(), Error> {
        let Self { layout, staging, target } = *self;
        Box::new(layout).commit(root)?;
        write_archive(staging.path(), &target)
    }
}

/// Archives the layout in `staging` into a temporary file beside `target`, then renames it over `target`.
fn write_archive(staging: &Path, target: &Path) -> Result<(), Error> {
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = target.file_name().and_then(|n| n.to_str()).unwrap_or("archive");
    // 0600, as before: a decrypted image's archive holds plaintext.
    let temp = atomic::partial_file(&parent, name, atomic::MODE_PRIVATE)
        .map_err(|e| io_err(format!("writing in `{}`", parent.display()), e))?;
    let mut builder = tar::Builder::new(io::BufWriter::new(temp));
    builder.mode(tar::HeaderMode::Deterministic);
    for name in ["oci-layout", "index.json"] {
        builder.append_path_with_name(staging.join(name), name).map_err(|e| io_err("archiving", e))?;
    }
    builder.append_dir_all("blobs", staging.join("blobs")).map_err(|e| io_err("archiving", e))?;
    let writer = builder.into_inner().map_err(|e| io_err("archiving", e))?;
    let temp = writer.into_inner().map_err(|e| io_err("archiving", e.into_error()))?;
    temp.as_file().sync_all().map_err(|e| io_err("archiving", e))?;
    atomic::replaceable(target).map_err(|e| io_err(format!("writing `{}`", target.display()), e))?;
    temp.persist(target).map_err(|e| io_err(format!("writing `{}`", target.display()), e.error))?;
    Ok(())
}
