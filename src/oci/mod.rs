//! OCI image stores: where images are read from and written to, behind one pair of traits so that the image
//! commands do not care whether an image is a layout directory, an archive or a registry.
//!
//! Manifests, indexes and descriptors are kept as JSON objects rather than typed structs: a tool that rewrites
//! a manifest must carry every field and annotation it does not know through unchanged.

pub mod bounds;
mod descriptor;
mod error;
mod layout;
mod reference;
pub mod registry;

pub use descriptor::{
    Descriptor, MediaKind, OCI_INDEX, OCI_MANIFEST, Platform, decrypted_media_type, digest_hex, encrypted_media_type,
    kind_of, sha256_digest,
};
pub use layout::{ArchiveDestination, LayoutDestination, LayoutSource, open_archive_source};
pub use reference::{ImageReference, RegistryLocation};

pub use error::Error;
use std::io::{Read, Write};

/// Largest manifest or index read into memory (registries cap manifests at 4 MiB too).
pub const MAX_MANIFEST_BYTES: u64 = 4 * 1024 * 1024;

/// Where an image is read from. Shared by the threads that move layers in parallel.
pub trait ImageSource: Sync {
    /// The descriptor the reference names (a manifest or an index).
    fn root(&self) -> &Descriptor;
    /// Streams a blob; the reader fails with an integrity error at the end if the bytes do not match the digest.
    fn open_blob(&self, descriptor: &Descriptor) -> Result<Box<dyn Read + '_>, Error>;
    /// Streams a blob without checking its size or digest, for a caller that hashes every byte anyway and checks
    /// both before it uses anything made from it (the layer pipeline: one SHA-256 pass less per byte). Stores that
    /// cannot skip the check return the verifying reader.
    fn open_blob_unverified(&self, descriptor: &Descriptor) -> Result<Box<dyn Read + '_>, Error> {
        self.open_blob(descriptor)
    }
    /// Reads a small blob (a manifest, an index, a config) whole, verified against its digest.
    fn read_blob(&self, descriptor: &Descriptor) -> Result<Vec<u8>, Error> {
        if descriptor.size()? > MAX_MANIFEST_BYTES {
            return Err(Error::Malformed(format!(
                "{} is larger than {MAX_MANIFEST_BYTES} bytes",
                descriptor.digest()?
            )));
        }
        let mut bytes = Vec::new();
        self.open_blob(descriptor)?.read_to_end(&mut bytes).map_err(|e| io_error(descriptor, e))?;
        Ok(bytes)
    }
}

/// A blob being written to a destination; it becomes visible only when committed. It may be finished on another
/// thread than the one that wrote it.
pub trait BlobWriter: Write + Send {
    /// Hands every written byte to the store and waits until it holds them all, without making the blob visible,
    /// so that a caller can still decide not to [`commit`](BlobWriter::commit) (another layer failed meanwhile).
    /// A store that writes locally has nothing to wait for; calling it again, or not at all, is fine.
    fn flush_data(&mut self, _digest: &str) -> Result<(), Error> {
        Ok(())
    }
    /// Stores the written bytes under `digest` (which the caller computed while writing).
    fn commit(self: Box<Self>, digest: &str) -> Result<(), Error>;
}

/// Where an image is written to. Nothing is visible under the destination's name until [`commit`] succeeds.
/// Blobs may be written by several threads at once (layers move in parallel); manifests and the commit come from
/// one thread, after every blob they name.
///
/// [`commit`]: ImageDestination::commit
pub trait ImageDestination: Sync {
    /// Whether the destination already holds a blob.
    fn has_blob(&self, digest: &str) -> bool;
    /// Starts writing a blob whose digest is known only at the end.
    fn blob_writer(&self) -> Result<Box<dyn BlobWriter + '_>, Error>;
    /// [`ImageDestination::blob_writer`] for a blob expected to be about `expected` bytes long: a store may get
    /// ready for it while its first bytes are being made (a registry opens the upload session).
    fn blob_writer_sized(&self, expected: u64) -> Result<Box<dyn BlobWriter + '_>, Error> {
        let _ = expected;
        self.blob_writer()
    }
    /// Stores a small blob (a manifest, an index) and returns its digest.
    fn put_blob_bytes(&mut self, bytes: &[u8]) -> Result<String, Error> {
        let digest = sha256_digest(bytes);
        if !self.has_blob(&digest) {
            let mut writer = self.blob_writer()?;
            writer.write_all(bytes).map_err(|e| Error::Malformed(format!("writing a blob: {e}")))?;
            writer.commit(&digest)?;
        }
        Ok(digest)
    }
    /// Stores a manifest or an index and returns its digest. Registries keep manifests apart from blobs; a
    /// layout stores them as blobs.
    fn put_manifest(&mut self, bytes: &[u8], _media_type: &str) -> Result<String, Error> {
        self.put_blob_bytes(bytes)
    }
    /// Makes the image visible under the destination reference, pointing at `root`.
    fn commit(self: Box<Self>, root: &Descriptor) -> Result<(), Error>;
}

/// Copies a blob unchanged, verifying it on the way, unless the destination has it already.
pub fn copy_blob(
    source: &dyn ImageSource,
    destination: &mut dyn ImageDestination,
    descriptor: &Descriptor,
) -> Result<(), Error> {
    copy_blob_reporting(source, destination, descriptor, &crate::interact::NonInteractive)
}

/// [`copy_blob`], showing the transfer's progress (a layer copied from or to a registry takes a while).
pub fn copy_blob_reporting(
    source: &dyn ImageSource,
    destination: &mut dyn ImageDestination,
    descriptor: &Descriptor,
    ui: &dyn crate::interact::Interaction,
) -> Result<(), Error> {
    if matches!(descriptor.kind(), MediaKind::Manifest | MediaKind::Index) {
        destination.put_manifest(&source.read_blob(descriptor)?, descriptor.media_type()?)?;
        return Ok(());
    }
    copy_layer_blob(source, destination, descriptor, ui, &|| false)
}

/// Copies a blob that is not a manifest (a layer, a config), as [`copy_blob_reporting`] does, from any thread;
/// `cancelled` is asked before every read, and a transfer it stops fails (its blob is not committed).
pub fn copy_layer_blob(
    source: &dyn ImageSource,
    destination: &dyn ImageDestination,
    descriptor: &Descriptor,
    ui: &dyn crate::interact::Interaction,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Result<(), Error> {
    let digest = descriptor.digest()?.to_owned();
    // A foreign layer's blob stays at its URLs: a destination needs no copy, and a source need not hold it.
    if descriptor.is_foreign() || destination.has_blob(&digest) {
        return Ok(());
    }
    let progress = ui.transfer(&format!("copying {}", short_digest(&digest)), descriptor.size()?);
    let reader = crate::interact::ProgressReader::new(source.open_blob(descriptor)?, progress);
    let mut reader = Cancellable { inner: reader, cancelled };
    let mut writer = destination.blob_writer_sized(descriptor.size()?)?;
    crate::crypto::parallel_hash::copy_large(&mut reader, &mut writer, descriptor.size()?)
        .map_err(|e| io_error(descriptor, e))?;
    writer.flush_data(&digest)?;
    // Another layer may have failed while this one finished: then it is not stored (its upload is cancelled).
    if cancelled() {
        return Err(Error::Io(CANCELLED.into()));
    }
    writer.commit(&digest)
}

/// A reader that fails once `cancelled` says so: how a transfer stops when another layer's failed.
pub struct Cancellable<'a, R> {
    /// The reader.
    pub inner: R,
    /// Asked before every read.
    pub cancelled: &'a (dyn Fn() -> bool + Sync),
}

impl<R: Read> Read for Cancellable<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if (self.cancelled)() {
            return Err(std::io::Error::other(CANCELLED));
        }
        self.inner.read(buf)
    }
}

/// What a transfer stopped because another one failed says.
pub const CANCELLED: &str = "cancelled: another layer failed";

/// `sha256:0123456789ab`: enough of a digest to tell blobs apart on a progress bar.
fn short_digest(digest: &str) -> &str {
    digest.get(..19).unwrap_or(digest)
}

/// Maps an I/O error while reading a blob: a digest mismatch (reported by the verifying reader as
/// `InvalidData`) is an integrity failure, anything else a plain I/O failure.
pub fn io_error(descriptor: &Descriptor, error: std::io::Error) -> Error {
    let digest = descriptor.digest().unwrap_or("(no digest)");
    // A store's own error carried through `Read`/`Write` (a registry refusing the credentials) keeps its class.
    if error.get_ref().is_some_and(|inner| inner.is::<Error>()) {
        let inner = error.into_inner().expect("checked above").downcast::<Error>().expect("checked above");
        return inner.in_blob(digest);
    }
    match error.kind() {
        std::io::ErrorKind::InvalidData => Error::Integrity(format!("blob {digest}: {error}")),
        std::io::ErrorKind::NotFound => Error::NotFound(format!("blob {digest} is missing")),
        _ => Error::Io(format!("blob {digest}: {error}")),
    }
}
