//! Images in OCI distribution registries (`docker://HOST[:PORT]/REPO[:TAG|@DIGEST]`), every request made here on
//! reqwest so that every answer is read with a bound: reads in `fetch`, pushes in `upload`.
//!
//! The rest of cryptadm is synchronous, so each registry connection owns a small tokio runtime. Blob bytes cross
//! between the synchronous cipher and the network through bounded channels: downloading, encrypting and uploading
//! overlap, and memory stays at a few chunks per blob whatever the layer size.
//!
//! A blob written to a registry is streamed in one upload whose digest is given only at the end (POST, one
//! streaming PATCH, PUT `?digest=`), which is what an encrypted layer needs; `upload` has the details and the
//! fallback to chunks. Blobs smaller than the first piece (256 KiB) are sent whole, so they can be retried. Manifests are pushed by
//! digest as they are written, and the root (written last) once, under the tag, on commit.

pub mod credentials;
mod fetch;
mod piece;
mod protocol;
mod ranged;
pub mod tls;
mod upload;

pub use credentials::Credentials;
pub use ranged::{RANGED_MIN, RANGES_PER_BLOB};

use super::descriptor::{Descriptor, MediaKind, kind_of, sha256_digest};
use super::layout::VerifyingReader;
use super::{BlobWriter, ImageDestination, ImageSource, MAX_MANIFEST_BYTES, OCI_INDEX, OCI_MANIFEST, RegistryLocation};
use crate::oci::Error;
use crate::redact;
use bytes::Bytes;
use futures_util::StreamExt;
use protocol::{OciDistributionError, OciErrorCode};
use std::collections::{HashMap, HashSet};
use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use upload::{Failure, Tracker, Uploaded, Uploader};

/// Size of the pieces handed from the cipher to an upload: the cipher's own chunk (`pipeline::CHUNK`). Larger
/// pieces only held more memory per upload in flight (its window keeps whole pieces).
const PIECE: usize = 256 * 1024;
/// Size of a blob's first piece: a blob smaller than it is sent whole; a larger one starts its upload (POST, then
/// the streaming PATCH) as soon as this much of it is written, not a whole piece later (on a registry far away
/// the upload, one connection per blob, is what an image copy waits for).
const FIRST_PIECE: usize = 256 * 1024;
// A piece is one piece buffer (`piece`), full.
const _: () = assert!(PIECE == piece::POOLED && FIRST_PIECE == piece::POOLED);
/// Pieces in flight per blob download, on their way to the cipher.
const IN_FLIGHT: usize = 4;
/// Pieces of [`PIECE`] bytes made and not yet taken by their upload, per blob (an upload also keeps up to
/// `upload::WINDOW` bytes it has sent): 1 MiB keeps the upload fed; more only holds memory.
const UPLOAD_IN_FLIGHT: usize = 4;
/// Attempts for a request that failed transiently (connection reset, 5xx, 429).
const ATTEMPTS: u32 = 4;
/// The first pause between attempts; it doubles each time.
const FIRST_BACKOFF: Duration = Duration::from_millis(300);
/// How long reaching the registry may take, for both HTTP clients.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// How long an abandoned upload may take to end its PATCH before it is cut off.
const ABANDON_WAIT: Duration = Duration::from_secs(10);

const MANIFEST_TYPES: &[&str] = &[
    OCI_MANIFEST,
    OCI_INDEX,
    "application/vnd.docker.distribution.manifest.v2+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
];

/// How to reach one registry.
#[derive(Debug, Default)]
pub struct RegistryOptions {
    /// Verify TLS; when false, plain HTTP or unverified TLS is allowed (as skopeo's `--tls-verify=false`).
    pub tls_verify: bool,
    /// Directories of extra CA certificates (`*.crt`), trusted besides the system roots.
    pub cert_dirs: Vec<PathBuf>,
    /// Credentials; none: anonymous.
    pub credentials: Option<Credentials>,
    /// The command's overall deadline: no request, pause or wait for a blob's bytes outlives it.
    pub deadline: Option<crate::deadline::Deadline>,
    /// The proxies requests go through (the command line reads them from the environment; reqwest never does).
    pub proxies: crate::proxy::Proxies,
}

/// Reports what a registry store does (one line per blob); the command line turns it into log lines.
pub type Log = Box<dyn Fn(&str) + Send + Sync>;

/// A client for one repository, with the runtime that drives it.
struct Connection {
    runtime: tokio::runtime::Runtime,
    location: RegistryLocation,
    /// `https` or `http` (when TLS is not required and the registry does not speak it).
    scheme: &'static str,
    /// The CA certificates of the cert dirs, read once for both HTTP clients.
    roots: Vec<reqwest::Certificate>,
    /// Reads manifests and blobs with bounds.
    reader: Arc<fetch::RegistryReader>,
    deadline: Option<crate::deadline::Deadline>,
}

impl Connection {
    fn open(location: &RegistryLocation, options: &RegistryOptions) -> Result<Self, Error> {
        tls::install_crypto_provider();
        // Two workers: one streams the download, one the upload, while the calling thread runs the cipher.
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("cryptadm-registry")
            .enable_all()
            .build()
            .map_err(|e| Error::Io(format!("starting the registry client: {e}")))?;
        let roots = tls::ca_certificates(&options.cert_dirs)?;
        let mut scheme = "https";
        if !options.tls_verify {
            scheme = probed_scheme(&location.registry, || {
                // As skopeo: try TLS (unverified) first, and fall back to plain HTTP when the registry does not
                // speak it. The answer's body is never read.
                let http = http_client(location, options, &roots, Some(PROBE_TIMEOUT))?;
                let ping = format!("https://{}/v2/", registry_host(&location.registry));
                let deadline = crate::deadline::effective(options.deadline);
                let probe = crate::deadline::bound(deadline.as_ref(), PROBE_TIMEOUT);
                let https_works = runtime.block_on(async { http.get(ping).timeout(probe).send().await.is_ok() });
                if let Some(deadline) = deadline.filter(crate::deadline::Deadline::passed) {
                    return Err(Error::Unreachable {
                        message: format!(
                            "{}: no answer to the first request: {}",
                            location.registry,
                            deadline_passed(&deadline)
                        ),
                        hint: crate::deadline::HINT,
                    });
                }
                Ok(if https_works { "https" } else { "http" })
            })?;
        }
        let reader = Arc::new(registry_reader(location, options, &roots, scheme)?);
        Ok(Self {
            runtime,
            location: location.clone(),
            scheme,
            roots,
            reader,
            deadline: crate::deadline::effective(options.deadline),
        })
    }

    /// An uploader for this repository, on an HTTP client with the same TLS settings as the reader's.
    fn uploader(&self, options: &RegistryOptions) -> Result<Uploader, Error> {
        // No read timeout: reqwest arms it once per request, which would cap a streaming PATCH at its length.
        // The uploader bounds each step instead (no progress, no answer).
        let http = http_client(&self.location, options, &self.roots, None)?;
        let origin = origin(&self.location, self.scheme)?;
        let credentials = options.credentials.as_ref().map(|c| (c.username.clone(), c.password.clone()));
        Ok(Uploader::new(http, origin, self.location.repository.clone(), credentials))
    }

    /// Fetches a manifest or index by tag or digest, bounded in size: a `Content-Length` over the bound fails at
    /// once, and no more than the bound is read.
    fn manifest(&self, name: &str) -> Result<Vec<u8>, Error> {
        let what = format!("manifest {name}");
        let bytes = self
            .runtime
            .block_on(self.bounded(retry(|| self.reader.manifest(name, MANIFEST_TYPES, MAX_MANIFEST_BYTES))))
            .map_err(|e| registry_error(&self.location, &what, e))?;
        let Some(bytes) = bytes else {
            return Err(Error::Malformed(format!("{what} is larger than {MAX_MANIFEST_BYTES} bytes")));
        };
        Ok(bytes.to_vec())
    }
}

/// How long the probe for TLS may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// The scheme `probe` finds for `registry`, asked once per registry and run: the source and the destination of a
/// copy between repositories of one registry share the answer (a round trip or two each otherwise, before any
/// byte moves).
fn probed_scheme(registry: &str, probe: impl FnOnce() -> Result<&'static str, Error>) -> Result<&'static str, Error> {
    static PROBED: Mutex<Vec<(String, &'static str)>> = Mutex::new(Vec::new());
    let known = |probed: &Vec<(String, &'static str)>| {
        probed.iter().find(|(name, _)| name == registry).map(|(_, scheme)| *scheme)
    };
    if let Some(scheme) = known(&PROBED.lock().unwrap_or_else(std::sync::PoisonError::into_inner)) {
        return Ok(scheme);
    }
    let scheme = probe()?;
    PROBED.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push((registry.to_owned(), scheme));
    Ok(scheme)
}

impl Connection {
    /// `work`, ended with [`deadline_passed`] when the deadline passes first.
    async fn bounded<T>(
        &self,
        work: impl std::future::Future<Output = Result<T, OciDistributionError>>,
    ) -> Result<T, OciDistributionError> {
        match self.deadline {
            None => work.await,
            Some(deadline) => tokio::time::timeout_at(deadline.at().into(), work)
                .await
                .unwrap_or_else(|_| Err(OciDistributionError::GenericError(Some(deadline_passed(&deadline))))),
        }
    }

    /// The synchronous end of a download's channel, bounded by the deadline.
    fn channel_reader(&self, receiver: mpsc::Receiver<io::Result<Bytes>>) -> ChannelReader {
        ChannelReader {
            receiver,
            current: Bytes::new(),
            deadline: self.deadline.map(|d| (d, self.runtime.handle().clone())),
        }
    }
}

/// What to do about a registry that speaks plain HTTP.
const PLAIN_HTTP_HINT: &str = "if plain HTTP is intended (a local or test registry), allow it with --tls-verify=false \
                               (--src-tls-verify=false or --dest-tls-verify=false for image encrypt and decrypt); \
                               otherwise check the registry's address and port";

/// What a request cut by the overall deadline says.
fn deadline_passed(deadline: &crate::deadline::Deadline) -> String {
    format!("gave up: {deadline} passed")
}

/// The host that serves a registry's API: Docker Hub's name is not its API's.
fn registry_host(registry: &str) -> &str {
    if registry == "docker.io" { "index.docker.io" } else { registry }
}

/// `scheme://host[:port]/` of the registry; credentials go to this origin only.
fn origin(location: &RegistryLocation, scheme: &str) -> Result<reqwest::Url, Error> {
    reqwest::Url::parse(&format!("{scheme}://{}/", registry_host(&location.registry)))
        .map_err(|e| Error::Io(format!("{}: cannot set up the client: registry address: {e}", location.registry)))
}

/// An HTTP client with the registry's TLS settings (the CA certificates of the cert dirs; unverified TLS when
/// `--tls-verify=false`), and a timeout per read when given.
fn http_client(
    location: &RegistryLocation,
    options: &RegistryOptions,
    roots: &[reqwest::Certificate],
    read_timeout: Option<Duration>,
) -> Result<reqwest::Client, Error> {
    let mut builder = reqwest::Client::builder()
        .danger_accept_invalid_certs(!options.tls_verify)
        .tls_certs_merge(roots.to_vec())
        .connect_timeout(CONNECT_TIMEOUT);
    if let Some(timeout) = read_timeout {
        builder = builder.read_timeout(timeout);
    }
    if let Some(deadline) = &crate::deadline::effective(options.deadline) {
        // Every request, whole (headers and body: a registry that drips either), ends by the deadline.
        builder = builder.timeout(deadline.remaining()).connect_timeout(deadline.bound(CONNECT_TIMEOUT));
    }
    let builder = options
        .proxies
        .apply(builder)
        .map_err(|e| Error::Io(format!("{}: cannot set up the client: {e}", location.registry)))?;
    builder.build().map_err(|e| Error::Io(format!("{}: cannot set up the client: {}", location.registry, chain(&e))))
}

/// The bounded reader of a connection.
fn registry_reader(
    location: &RegistryLocation,
    options: &RegistryOptions,
    roots: &[reqwest::Certificate],
    scheme: &str,
) -> Result<fetch::RegistryReader, Error> {
    // Per read, not per request: a layer download may take longer than any fixed bound.
    let http = http_client(location, options, roots, Some(Duration::from_secs(300)))?;
    let credentials = options.credentials.as_ref().map(|c| (c.username.clone(), c.password.clone()));
    Ok(fetch::RegistryReader::new(http, origin(location, scheme)?, location.repository.clone(), credentials))
}

/// An image read from a registry.
pub struct RegistrySource {
    connection: Connection,
    root: Descriptor,
    /// The root's bytes, fetched by tag when opened: reading the root again needs no request.
    root_bytes: Vec<u8>,
    bounds: crate::oci::bounds::ManifestBounds,
    /// Ranges of one large blob fetched at once (1: every blob in one request).
    ranges: usize,
}

impl RegistrySource {
    /// Connects and fetches the manifest or index that `location` names (tag `latest` when it names neither).
    pub fn open(location: &RegistryLocation, options: &RegistryOptions) -> Result<Self, Error> {
        let connection = Connection::open(location, options)?;
        let name = match (&location.digest, &location.tag) {
            (Some(digest), _) => digest.as_str(),
            (None, tag) => tag.as_deref().unwrap_or("latest"),
        };
        let bytes = connection.manifest(name)?;
        let digest = sha256_digest(&bytes);
        if let Some(expected) = &location.digest
            && *expected != digest
        {
            return Err(Error::Integrity(format!("{location}: the registry sent a manifest with digest {digest}")));
        }
        let root = Descriptor::new(&manifest_media_type(&bytes)?, &digest, bytes.len() as u64);
        let bounds = crate::oci::bounds::ManifestBounds::default();
        bounds.admit(&digest)?;
        if root.kind() == MediaKind::Index {
            bounds.index_read(&digest, &bytes);
        }
        Ok(Self { connection, root, root_bytes: bytes, bounds, ranges: RANGES_PER_BLOB })
    }

    /// Fetches blobs of [`RANGED_MIN`] bytes or more as up to `ranges` HTTP ranges at once (1: one request).
    pub fn with_ranges(mut self, ranges: usize) -> Self {
        self.ranges = ranges.max(1);
        self
    }

    /// The blob as the registry sends it, not yet checked against `descriptor`.
    fn blob_reader(&self, descriptor: &Descriptor) -> Result<ChannelReader, Error> {
        let digest = descriptor.digest()?.to_owned();
        let reader = Arc::clone(&self.connection.reader);
        let size = descriptor.size()?;
        if self.ranges > 1 && size >= RANGED_MIN {
            return self.ranged_reader(reader, digest, size);
        }
        // The first response is awaited here, so that a missing blob or refused access is reported as such.
        let first = self
            .connection
            .runtime
            .block_on(self.connection.bounded(open_from(&reader, &digest, 0)))
            .map_err(|e| registry_error(&self.connection.location, &format!("blob {digest}"), e))?;
        let (sender, receiver) = mpsc::channel(IN_FLIGHT);
        self.connection.runtime.spawn(download(reader, digest, first, sender));
        Ok(self.connection.channel_reader(receiver))
    }
}

impl RegistrySource {
    /// A large blob in ranges when the registry honours them ([`ranged`]), else as one stream.
    fn ranged_reader(
        &self,
        reader: Arc<fetch::RegistryReader>,
        digest: String,
        size: u64,
    ) -> Result<ChannelReader, Error> {
        let chunk = ranged::chunk_size(size, self.ranges);
        let end = chunk.min(size) - 1;
        let runtime = &self.connection.runtime;
        // The first answer is awaited here, as for one stream: a missing blob or refused access is reported as such.
        let first = runtime
            .block_on(self.connection.bounded(retry(|| reader.blob_range(&digest, 0, end))))
            .map_err(|e| registry_error(&self.connection.location, &format!("blob {digest}"), e))?;
        let in_ranges = ranged::is_range(&first, 0, end, size)
            .map_err(|e| Error::Io(format!("{}: blob {digest}: {e}", self.connection.location)))?;
        if in_ranges {
            // The memory a blob holds: the ranges in flight, and a few pieces of the first on their way.
            let (sender, receiver) = mpsc::channel(IN_FLIGHT);
            runtime.spawn(ranged::download(reader, digest, size, chunk, self.ranges, first, sender));
            return Ok(self.connection.channel_reader(receiver));
        }
        // `200`: the whole blob, read as one stream (resumed, if it breaks, as one).
        let stream = first.bytes_stream().map(|chunk| chunk.map_err(|e| io::Error::other(e.without_url()))).boxed();
        let (sender, receiver) = mpsc::channel(IN_FLIGHT);
        runtime.spawn(download(reader, digest, stream, sender));
        Ok(self.connection.channel_reader(receiver))
    }
}

impl ImageSource for RegistrySource {
    fn root(&self) -> &Descriptor {
        &self.root
    }

    fn open_blob(&self, descriptor: &Descriptor) -> Result<Box<dyn Read + '_>, Error> {
        match descriptor.kind() {
            // Registries serve manifests and indexes under /manifests/, not /blobs/.
            MediaKind::Manifest | MediaKind::Index => {
                let digest = descriptor.digest()?;
                self.bounds.admit(digest)?;
                let bytes = if digest == self.root.digest()? {
                    self.root_bytes.clone()
                } else {
                    self.connection.manifest(digest)?
                };
                if descriptor.kind() == MediaKind::Index {
                    self.bounds.index_read(digest, &bytes);
                }
                Ok(Box::new(VerifyingReader::new(io::Cursor::new(bytes), descriptor)?))
            }
            _ => Ok(Box::new(VerifyingReader::new(self.blob_reader(descriptor)?, descriptor)?)),
        }
    }

    fn open_blob_unverified(&self, descriptor: &Descriptor) -> Result<Box<dyn Read + '_>, Error> {
        match descriptor.kind() {
            MediaKind::Manifest | MediaKind::Index => self.open_blob(descriptor),
            _ => Ok(Box::new(self.blob_reader(descriptor)?)),
        }
    }
}

/// Opens a blob download at `offset` (a resumed download asks for the rest with a range request).
async fn open_from(
    reader: &fetch::RegistryReader,
    digest: &str,
    offset: u64,
) -> Result<futures_util::stream::BoxStream<'static, io::Result<Bytes>>, OciDistributionError> {
    // Always a range request: the reader checks the digest anyway.
    retry(|| async {
        match reader.blob(digest, offset).await? {
            (response, partial) if partial || offset == 0 => {
                Ok(response.bytes_stream().map(|chunk| chunk.map_err(|e| io::Error::other(e.without_url()))).boxed())
            }
            // The registry ignored the range: resuming is not possible, and starting over would repeat bytes.
            _ => Err(OciDistributionError::GenericError(Some(
                "the registry does not support resuming a download".into(),
            ))),
        }
    })
    .await
}

/// Streams a blob into `sender`, resuming after transient network failures where it stopped.
async fn download(
    reader: Arc<fetch::RegistryReader>,
    digest: String,
    mut stream: futures_util::stream::BoxStream<'static, io::Result<Bytes>>,
    sender: mpsc::Sender<io::Result<Bytes>>,
) {
    let mut offset = 0u64;
    let mut failures = 0;
    loop {
        match stream.next().await {
            Some(Ok(bytes)) => {
                offset += bytes.len() as u64;
                if sender.send(Ok(bytes)).await.is_err() {
                    return; // the reader went away
                }
            }
            None => return,
            Some(Err(error)) if error.kind() != io::ErrorKind::InvalidData && failures + 1 < ATTEMPTS => {
                failures += 1;
                tokio::time::sleep(FIRST_BACKOFF * 2u32.pow(failures)).await;
                match open_from(&reader, &digest, offset).await {
                    Ok(resumed) => stream = resumed,
                    Err(e) => {
                        let _ =
                            sender.send(Err(io::Error::other(format!("resuming the download: {}", chain(&e))))).await;
                        return;
                    }
                }
            }
            Some(Err(error)) => {
                let _ = sender.send(Err(io::Error::new(error.kind(), format!("downloading: {}", chain(&error))))).await;
                return;
            }
        }
    }
}

/// The synchronous end of a download.
struct ChannelReader {
    receiver: mpsc::Receiver<io::Result<Bytes>>,
    current: Bytes,
    /// The overall deadline, and the runtime whose timer waits for it.
    deadline: Option<(crate::deadline::Deadline, tokio::runtime::Handle)>,
}

impl Read for ChannelReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.current.is_empty() {
            let next = match &self.deadline {
                None => self.receiver.blocking_recv(),
                // The timer is made inside the runtime: made outside, it panics ("there is no reactor running").
                Some((deadline, runtime)) => runtime
                    .block_on(async { tokio::time::timeout_at(deadline.at().into(), self.receiver.recv()).await })
                    .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, deadline_passed(deadline)))?,
            };
            match next {
                Some(Ok(bytes)) => self.current = bytes,
                Some(Err(e)) => return Err(e),
                None => return Ok(0),
            }
        }
        let n = buf.len().min(self.current.len());
        buf[..n].copy_from_slice(&self.current.split_to(n));
        Ok(n)
    }
}

/// An image written to a registry. Blobs are pushed as they are written, manifests by digest, and the tag last.
pub struct RegistryDestination {
    connection: Connection,
    /// The source repository on the same registry, from which blobs are mounted rather than uploaded.
    mount_from: Option<String>,
    /// Blobs known to exist at the destination.
    present: Mutex<HashSet<String>>,
    /// Manifests written in this run (by digest).
    manifests: HashMap<String, (Vec<u8>, String)>,
    /// The manifest written last, not pushed yet: the root is the last, and is pushed once, under the tag, on
    /// commit (a manifest written after it is pushed by digest first).
    unpushed: Option<String>,
    uploader: Arc<Uploader>,
    log: Log,
}

impl RegistryDestination {
    /// Connects to `location`; its tag (or `default_tag`, else `latest`) will name the image once committed.
    /// `mount_from` is the source's location: blobs it has are mounted when it is on the same registry.
    pub fn open(
        location: &RegistryLocation,
        default_tag: Option<&str>,
        options: &RegistryOptions,
        mount_from: Option<&RegistryLocation>,
        log: Log,
    ) -> Result<Self, Error> {
        let mut location = location.clone();
        if location.tag.is_none() && location.digest.is_none() {
            location.tag = Some(default_tag.unwrap_or("latest").to_owned());
        }
        let connection = Connection::open(&location, options)?;
        let uploader = Arc::new(connection.uploader(options)?);
        // One request up front, so that a wrong password or an unreachable registry is reported as such before
        // any layer is read (later failures surface through the blob writers as I/O errors).
        connection
            .runtime
            .block_on(uploader.probe())
            .map_err(|failure| failure.into_error(&location, "checking access"))?;
        let mount_from = mount_from
            .filter(|source| source.registry == location.registry && source.repository != location.repository)
            .map(|source| source.repository.clone());
        Ok(Self {
            connection,
            mount_from,
            present: Mutex::default(),
            manifests: HashMap::new(),
            unpushed: None,
            uploader,
            log,
        })
    }

    fn present(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.present.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn exists(&self, digest: &str) -> Result<bool, Failure> {
        self.connection.runtime.block_on(self.uploader.blob_exists(digest))
    }

    fn try_mount(&self, digest: &str) -> bool {
        let Some(source) = &self.mount_from else { return false };
        // Any failure: the blob is uploaded instead (and that upload's failure, if any, is reported).
        self.connection.runtime.block_on(self.uploader.mount(digest, source)).unwrap_or(false)
    }
}

impl ImageDestination for RegistryDestination {
    fn has_blob(&self, digest: &str) -> bool {
        if self.present().contains(digest) {
            return true;
        }
        let found = match self.exists(digest) {
            Ok(true) => {
                (self.log)(&format!("blob {digest} is already at the destination"));
                true
            }
            Ok(false) if self.try_mount(digest) => {
                (self.log)(&format!("blob {digest} mounted from the source repository"));
                true
            }
            // Not there, or the registry would not say: upload it (an upload failure is reported there).
            _ => false,
        };
        if found {
            self.present().insert(digest.to_owned());
        }
        found
    }

    fn blob_writer(&self) -> Result<Box<dyn BlobWriter + '_>, Error> {
        Ok(Box::new(RegistryBlobWriter {
            destination: self,
            buffer: None,
            opening: None,
            upload: None,
            uploaded: None,
            written: 0,
        }))
    }

    /// A blob expected to be streamed (at least the first piece) gets its upload session opened now, while its
    /// first bytes are being downloaded and enciphered, as containers/image does: the upload, which is what a
    /// copy between registries far away waits for, starts a round trip or two sooner.
    fn blob_writer_sized(&self, expected: u64) -> Result<Box<dyn BlobWriter + '_>, Error> {
        let uploader = Arc::clone(&self.uploader);
        let opening = (expected >= FIRST_PIECE as u64)
            .then(|| self.connection.runtime.spawn(async move { uploader.start().await }));
        Ok(Box::new(RegistryBlobWriter {
            destination: self,
            buffer: None,
            opening,
            upload: None,
            uploaded: None,
            written: 0,
        }))
    }

    fn put_manifest(&mut self, bytes: &[u8], media_type: &str) -> Result<String, Error> {
        let digest = sha256_digest(bytes);
        if !self.manifests.contains_key(&digest) {
            // The one before is not the root: it goes now, by digest, before anything that names it.
            self.push_unpushed()?;
            self.manifests.insert(digest.clone(), (bytes.to_vec(), media_type.to_owned()));
            self.unpushed = Some(digest.clone());
        }
        Ok(digest)
    }

    fn commit(mut self: Box<Self>, root: &Descriptor) -> Result<(), Error> {
        let digest = root.digest()?;
        let location = self.connection.location.clone();
        if let Some(named) = &location.digest
            && named != digest
        {
            return Err(Error::Malformed(format!(
                "{location} names digest {named}, but the written image has digest {digest}"
            )));
        }
        let Some(tag) = &location.tag else { return self.push_unpushed() };
        if !self.manifests.contains_key(digest) {
            return Err(Error::Malformed(format!("the root manifest {digest} was never written")));
        }
        if self.unpushed.as_deref() != Some(digest) {
            self.push_unpushed()?;
        }
        // Pushed under the tag, the root is stored under its digest too: one request for both.
        let (bytes, media_type) = &self.manifests[digest];
        self.push_manifest(tag, bytes, media_type)?;
        (self.log)(&format!("pushed manifest {digest}"));
        (self.log)(&format!("tagged {digest} as {location}"));
        Ok(())
    }
}

impl RegistryDestination {
    /// Pushes the manifest written last, if it is not pushed yet, by digest.
    fn push_unpushed(&mut self) -> Result<(), Error> {
        let Some(digest) = self.unpushed.take() else { return Ok(()) };
        let (bytes, media_type) = &self.manifests[&digest];
        self.push_manifest(&digest, bytes, media_type)?;
        (self.log)(&format!("pushed manifest {digest}"));
        Ok(())
    }

    /// Pushes a manifest under `name` (its digest, or the tag).
    fn push_manifest(&self, name: &str, bytes: &[u8], media_type: &str) -> Result<(), Error> {
        let content_type: reqwest::header::HeaderValue = media_type
            .parse()
            .map_err(|_| Error::Malformed(format!("media type `{media_type}` is not a valid header value")))?;
        let body = Bytes::copy_from_slice(bytes);
        self.connection
            .runtime
            .block_on(self.uploader.put_manifest(name, body, content_type))
            .map_err(|failure| failure.into_error(&self.connection.location, &format!("pushing manifest {name}")))
    }
}

/// One upload in progress: the pieces go through `sender` to the uploader's task.
struct Upload {
    sender: mpsc::Sender<Bytes>,
    task: tokio::task::JoinHandle<Result<Uploaded, Failure>>,
    tracker: Tracker,
}

struct RegistryBlobWriter<'a> {
    destination: &'a RegistryDestination,
    /// The piece being filled (none before the first byte, and after a piece went).
    buffer: Option<piece::PieceBuffer>,
    /// The upload session opened ahead of the first piece, until the upload takes it.
    opening: Option<upload::Opening>,
    upload: Option<Upload>,
    /// A streamed upload whose bytes the registry holds, not yet closed (see [`BlobWriter::flush_data`]).
    uploaded: Option<upload::Uploaded>,
    written: u64,
}

impl RegistryBlobWriter<'_> {
    /// The bytes written since the last piece went.
    fn buffered(&self) -> usize {
        self.buffer.as_ref().map_or(0, piece::PieceBuffer::len)
    }

    /// The bytes written since the last piece went, as the next piece.
    fn take_piece(&mut self) -> Bytes {
        self.buffer.take().map_or_else(Bytes::new, piece::PieceBuffer::freeze)
    }

    fn send_piece(&mut self) -> io::Result<()> {
        let piece = self.take_piece();
        let destination = self.destination;
        let opening = self.opening.take();
        let upload = self.upload.get_or_insert_with(|| {
            let (sender, receiver) = mpsc::channel(UPLOAD_IN_FLIGHT);
            let tracker = Tracker::default();
            let uploader = Arc::clone(&destination.uploader);
            let progress = Arc::clone(&tracker);
            let task =
                destination.connection.runtime.spawn(async move { uploader.send(receiver, progress, opening).await });
            Upload { sender, task, tracker }
        });
        if upload.sender.blocking_send(piece).is_ok() {
            return Ok(());
        }
        // The upload ended early: it failed, and its task says why.
        let upload = self.upload.take().expect("set above");
        Err(io::Error::other(self.finish_error(upload)))
    }

    fn finish_error(&self, upload: Upload) -> Error {
        let connection = &self.destination.connection;
        match connection.runtime.block_on(upload.task) {
            Ok(Err(failure)) => failure.into_error(&connection.location, "uploading"),
            Ok(Ok(_)) => Error::Io("uploading: the upload ended early".into()),
            Err(e) => Error::Io(format!("uploading: {e}")),
        }
    }
}

impl Write for RegistryBlobWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let buffer = match &mut self.buffer {
            Some(buffer) => buffer,
            empty => empty.insert(piece::PieceBuffer::new()?),
        };
        let n = buffer.fill_from(buf);
        self.written += n as u64;
        if buffer.remaining() == 0 {
            self.send_piece()?;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl BlobWriter for RegistryBlobWriter<'_> {
    /// Ends a streamed upload's PATCH and waits for the registry to have every byte; the closing PUT is left to
    /// `commit`. (A blob smaller than the first piece is still only in memory: it goes whole, at commit.)
    fn flush_data(&mut self, digest: &str) -> Result<(), Error> {
        // Shorter than its first piece, but its session is open: it goes up through it.
        if self.upload.is_none() && self.opening.is_some() && self.buffered() > 0 {
            self.send_piece().map_err(|e| match e.into_inner().map(|inner| inner.downcast::<Error>()) {
                Some(Ok(error)) => error.in_blob(digest),
                Some(Err(other)) => Error::Io(format!("pushing blob {digest}: {other}")),
                None => Error::Io(format!("pushing blob {digest}: the upload failed")),
            })?;
        }
        let Some(upload) = self.upload.take() else { return Ok(()) };
        let connection = &self.destination.connection;
        let what = format!("pushing blob {digest}");
        if self.buffered() > 0 {
            let piece = self.take_piece();
            if upload.sender.blocking_send(piece).is_err() {
                return Err(self.finish_error(upload).in_blob(digest));
            }
        }
        drop(upload.sender); // the end of the blob: the task sends what is left and returns
        let uploaded = connection
            .runtime
            .block_on(upload.task)
            .map_err(|e| Error::Io(format!("{what}: {e}")))?
            .map_err(|failure| failure.into_error(&connection.location, &what))?;
        self.uploaded = Some(uploaded);
        Ok(())
    }

    fn commit(mut self: Box<Self>, digest: &str) -> Result<(), Error> {
        self.flush_data(digest)?;
        let destination = self.destination;
        let connection = &destination.connection;
        let what = format!("pushing blob {digest}");
        match self.uploaded.take() {
            // Smaller than the first piece: sent whole, so that it can be retried.
            None => {
                let bytes = self.take_piece();
                connection
                    .runtime
                    .block_on(destination.uploader.push_whole(bytes, digest))
                    .map_err(|failure| failure.into_error(&connection.location, &what))?;
            }
            Some(uploaded) => {
                for note in &uploaded.notes {
                    (destination.log)(&format!("blob {digest}: {note}"));
                }
                connection
                    .runtime
                    .block_on(destination.uploader.finish(&uploaded, digest))
                    .map_err(|failure| failure.into_error(&connection.location, &what))?;
            }
        }
        (destination.log)(&format!("pushed blob {digest} ({} bytes)", self.written));
        destination.present().insert(digest.to_owned());
        Ok(())
    }
}

impl Drop for RegistryBlobWriter<'_> {
    fn drop(&mut self) {
        // A session opened for a blob that never sent a piece (it failed first, or was empty): cancelled.
        if let Some(opening) = self.opening.take() {
            let destination = self.destination;
            let runtime = &destination.connection.runtime;
            if let Ok(Ok(session)) = runtime.block_on(opening) {
                runtime.block_on(destination.uploader.cancel(&session));
            }
        }
        // Not committed (the cipher failed, or the HMAC did not verify): the upload is never closed with a PUT, so
        // the registry never stores a blob of it, and it is cancelled (DELETE) so that its bytes go too. The PATCH
        // is ended cleanly rather than cut: docker's registry will not cancel an upload whose last request broke.
        if let Some(upload) = self.upload.take() {
            drop(upload.sender);
            let destination = self.destination;
            let runtime = &destination.connection.runtime;
            let mut task = upload.task;
            let ended = runtime.block_on(async { tokio::time::timeout(ABANDON_WAIT, &mut task).await });
            let session = match ended {
                Ok(Ok(Ok(uploaded))) => Some(uploaded.into_session()),
                Ok(_) => None, // it failed, and cancelled itself
                Err(_) => {
                    task.abort();
                    upload.tracker.lock().ok().and_then(|mut s| s.take())
                }
            };
            if let Some(session) = session {
                runtime.block_on(destination.uploader.cancel(&session));
            }
        }
        // Every byte sent, but not committed (another layer failed meanwhile): cancelled the same way.
        if let Some(uploaded) = self.uploaded.take() {
            let destination = self.destination;
            destination.connection.runtime.block_on(destination.uploader.cancel(&uploaded.into_session()));
        }
    }
}

/// The media type a manifest or index declares (or implies: an index has `manifests`).
fn manifest_media_type(bytes: &[u8]) -> Result<String, Error> {
    let value: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| Error::Malformed(format!("the manifest is not valid JSON: {e}")))?;
    let declared = value.get("mediaType").and_then(serde_json::Value::as_str);
    let media_type = match declared {
        Some(t) => t.to_owned(),
        None if value.get("manifests").is_some() => OCI_INDEX.to_owned(),
        None => OCI_MANIFEST.to_owned(),
    };
    if !matches!(kind_of(&media_type), MediaKind::Manifest | MediaKind::Index) {
        return Err(Error::Malformed(format!(
            "unsupported manifest type `{media_type}` (OCI or Docker schema 2 only)"
        )));
    }
    Ok(media_type)
}

/// Runs a request, again after a pause when it failed transiently.
async fn retry<T, F, Fut>(mut request: F) -> Result<T, OciDistributionError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, OciDistributionError>>,
{
    let mut pause = FIRST_BACKOFF;
    let mut attempt = 1;
    loop {
        match request().await {
            Err(e) if attempt < ATTEMPTS && is_transient(&e) => {
                tokio::time::sleep(pause).await;
                pause *= 2;
                attempt += 1;
            }
            result => return result,
        }
    }
}

fn is_transient(error: &OciDistributionError) -> bool {
    match error {
        OciDistributionError::RequestError(e) => {
            e.status().is_some_and(|s| s.is_server_error() || s.as_u16() == 429)
                || (e.status().is_none() && (e.is_connect() || e.is_timeout() || e.is_request() || e.is_body()))
        }
        OciDistributionError::ServerError { code, .. } => *code >= 500 || *code == 429,
        OciDistributionError::RegistryError { envelope, status, .. } => {
            *status >= 500
                || *status == 429
                || envelope.errors.iter().any(|e| matches!(e.code, OciErrorCode::Toomanyrequests))
        }
        _ => false,
    }
}

/// Classifies a registry failure: refused credentials → 16, unknown repository/tag/digest → 5, unreachable
/// and anything else → 1.
fn registry_error(location: &RegistryLocation, what: &str, error: OciDistributionError) -> Error {
    use OciDistributionError as E;
    let host = &location.registry;
    let message = format!("{host}/{}: {what}: {}", location.repository, chain(&error));
    let status = match &error {
        E::RequestError(e) => e.status().map(|s| s.as_u16()),
        E::ServerError { code, .. } | E::RegistryError { status: code, .. } => Some(*code),
        _ => None,
    };
    // Where the refusal came from: a registry redirects blob downloads to storage (S3, GCS, a CDN) with a
    // presigned URL, and a 401/403 from there says nothing about the registry credentials.
    let answered_by = match &error {
        E::ServerError { url, .. } | E::RegistryError { url, .. } => reqwest::Url::parse(url).ok(),
        E::RequestError(e) => e.url().cloned(),
        _ => None,
    };
    // Compared by origin (scheme, host and port), not by host name: storage on the registry's host name but
    // another port (MinIO beside a self-hosted registry) is storage.
    let elsewhere = answered_by.as_ref().is_some_and(|answering| !same_origin(location, answering));
    if elsewhere && matches!(status, Some(401 | 403)) {
        let storage = answered_by.map(|u| redact::url(u.as_str())).unwrap_or_default();
        return Error::Io(format!(
            "{host}/{}: {what}: the storage the registry redirected to (`{storage}`) refused the download \
             (HTTP {}): its presigned URL was refused, not the registry credentials",
            location.repository,
            status.unwrap_or_default()
        ));
    }
    match &error {
        E::AuthenticationFailure(_) => Error::RegistryDenied(message),
        _ if matches!(status, Some(401 | 403)) => Error::RegistryDenied(message),
        _ if status == Some(404) => Error::NotFound(message),
        E::RegistryError { envelope, .. } => {
            let codes: Vec<&OciErrorCode> = envelope.errors.iter().map(|e| &e.code).collect();
            if codes.iter().any(|c| matches!(c, OciErrorCode::Unauthorized | OciErrorCode::Denied)) {
                Error::RegistryDenied(message)
            } else if codes.iter().any(|c| matches!(c, OciErrorCode::DigestInvalid)) {
                // The registry hashed the uploaded bytes to another digest than the one they were pushed under.
                Error::Integrity(message)
            } else if codes.iter().any(|c| {
                matches!(
                    c,
                    OciErrorCode::BlobUnknown
                        | OciErrorCode::ManifestUnknown
                        | OciErrorCode::NameUnknown
                        | OciErrorCode::NotFound
                        | OciErrorCode::ManifestBlobUnknown
                )
            }) {
                Error::NotFound(message)
            } else {
                Error::Io(message)
            }
        }
        E::DigestMismatch { .. } => Error::Integrity(message),
        E::GenericError(Some(text)) if text.starts_with("gave up: the overall deadline") => {
            Error::Unreachable { message, hint: crate::deadline::HINT }
        }
        E::RequestError(_) if chain(&error).contains("InvalidContentType") => Error::Unreachable {
            message: format!(
                "{host}: {what}: the registry answered plain HTTP to a TLS connection (server gave HTTP response to \
                 HTTPS client)"
            ),
            hint: PLAIN_HTTP_HINT,
        },
        E::RequestError(e) if e.is_connect() || e.is_timeout() => {
            Error::Io(format!("{host}: the registry is unreachable ({what}): {}", chain(&error)))
        }
        _ => Error::Io(message),
    }
}

/// Whether `url` is on the registry's origin: same scheme, host (Docker Hub's API hosts for `docker.io`) and port
/// (the scheme's default when none is written). The registry is reached over https, or over plain http when
/// `--tls-verify=false` found no TLS there: either is its origin.
fn same_origin(location: &RegistryLocation, url: &reqwest::Url) -> bool {
    let Some(answering) = url.host_str() else { return false };
    ["https", "http"].iter().any(|scheme| {
        let Ok(registry) = reqwest::Url::parse(&format!("{scheme}://{}/", registry_host(&location.registry))) else {
            return false;
        };
        let same_host = registry.host_str().is_some_and(|host| answering.eq_ignore_ascii_case(host))
            || (location.registry == "docker.io" && answering.eq_ignore_ascii_case("registry-1.docker.io"));
        same_host
            && registry.scheme() == url.scheme()
            && registry.port_or_known_default() == url.port_or_known_default()
    })
}

/// Most characters of an error's text shown (a registry's error message may be megabytes).
const MAX_ERROR_TEXT: usize = 600;

/// An error and its causes on one line (reqwest's top-level message alone rarely says what went wrong), with
/// every URL in it redacted and control and bidi characters escaped (registries write some of it), truncated.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        let next = inner.to_string();
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        cause = inner.source();
    }
    redact::server_text(redact::urls_in(&text).as_bytes(), MAX_ERROR_TEXT)
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::{OciEnvelope, OciError};

    fn location() -> RegistryLocation {
        RegistryLocation { registry: "localhost:5000".into(), repository: "app".into(), tag: None, digest: None }
    }

    fn server(code: u16) -> OciDistributionError {
        OciDistributionError::ServerError { code, url: "http://localhost:5000/v2/".into(), message: String::new() }
    }

    fn envelope(code: OciErrorCode) -> OciDistributionError {
        OciDistributionError::RegistryError {
            envelope: OciEnvelope {
                errors: vec![OciError { code, message: "m".into(), detail: serde_json::Value::Null }],
            },
            url: "http://localhost:5000/v2/app/manifests/v1".into(),
            status: 400,
        }
    }

    /// A 5xx or 429 is transient whatever its body, an OCI error envelope included, and its message says the
    /// status.
    #[test]
    fn a_5xx_with_an_envelope_is_transient_and_says_its_status() {
        for (status, transient) in [(500, true), (503, true), (429, true), (400, false), (404, false)] {
            let error = OciDistributionError::RegistryError {
                envelope: OciEnvelope {
                    errors: vec![OciError {
                        code: OciErrorCode::Other("UNKNOWN".into()),
                        message: "backend".into(),
                        detail: serde_json::Value::Null,
                    }],
                },
                url: "http://localhost:5000/v2/app/blobs/x".into(),
                status,
            };
            assert_eq!(is_transient(&error), transient, "{status}");
            assert!(error.to_string().contains(&format!("HTTP {status}")), "{error}");
        }
    }

    /// Storage on the registry's host name but another port is another origin; the registry's own port (or its
    /// scheme's default) is the registry.
    #[test]
    fn origins_compare_scheme_host_and_port() {
        let at = |registry: &str| RegistryLocation {
            registry: registry.into(),
            repository: "app".into(),
            tag: None,
            digest: None,
        };
        let url = |u: &str| reqwest::Url::parse(u).unwrap();
        assert!(same_origin(&at("localhost:5000"), &url("http://localhost:5000/v2/")));
        assert!(same_origin(&at("localhost:5000"), &url("https://LOCALHOST:5000/v2/")));
        assert!(!same_origin(&at("localhost:5000"), &url("http://localhost:9000/bucket/blob?X-Amz-Signature=x")));
        assert!(same_origin(&at("registry.example"), &url("https://registry.example:443/v2/")));
        assert!(!same_origin(&at("registry.example"), &url("https://registry.example:9000/b")));
        assert!(same_origin(&at("docker.io"), &url("https://registry-1.docker.io/v2/")));
        assert!(!same_origin(&at("docker.io"), &url("https://production.cloudflare.docker.com/x")));
    }

    #[test]
    fn failures_are_classified_by_what_the_registry_said() {
        let classify = |e| registry_error(&location(), "manifest v1", e);
        assert!(matches!(classify(server(401)), Error::RegistryDenied(_)));
        assert!(matches!(classify(server(403)), Error::RegistryDenied(_)));
        assert!(matches!(classify(envelope(OciErrorCode::Denied)), Error::RegistryDenied(_)));
        assert!(matches!(classify(envelope(OciErrorCode::Unauthorized)), Error::RegistryDenied(_)));
        assert!(matches!(
            classify(OciDistributionError::AuthenticationFailure("refused".into())),
            Error::RegistryDenied(_)
        ));
        assert!(matches!(classify(server(404)), Error::NotFound(_)));
        assert!(matches!(classify(envelope(OciErrorCode::ManifestUnknown)), Error::NotFound(_)));
        assert!(matches!(classify(envelope(OciErrorCode::NameUnknown)), Error::NotFound(_)));
        assert!(matches!(classify(envelope(OciErrorCode::BlobUnknown)), Error::NotFound(_)));
        assert!(matches!(classify(server(500)), Error::Io(_)));
        // The registry hashed an upload to another digest than the one it was closed under.
        assert!(matches!(classify(envelope(OciErrorCode::DigestInvalid)), Error::Integrity(_)));
        let message = classify(server(503)).to_string();
        assert!(message.starts_with("localhost:5000/app: manifest v1:"), "{message}");
    }

    #[test]
    fn only_transient_failures_are_retried() {
        assert!(is_transient(&server(500)));
        assert!(is_transient(&server(503)));
        assert!(is_transient(&server(429)));
        assert!(is_transient(&envelope(OciErrorCode::Toomanyrequests)));
        assert!(!is_transient(&server(401)));
        assert!(!is_transient(&server(404)));
        assert!(!is_transient(&envelope(OciErrorCode::ManifestUnknown)));

        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let attempts = std::cell::Cell::new(0);
        let result: Result<(), _> = runtime.block_on(retry(|| {
            attempts.set(attempts.get() + 1);
            async { Err(server(503)) }
        }));
        assert!(result.is_err());
        assert_eq!(attempts.get(), ATTEMPTS);
        attempts.set(0);
        let result = runtime.block_on(retry(|| {
            attempts.set(attempts.get() + 1);
            let n = attempts.get();
            async move { if n < 2 { Err(server(502)) } else { Ok(n) } }
        }));
        assert_eq!(result.unwrap(), 2);
        attempts.set(0);
        let _ = runtime.block_on(retry(|| {
            attempts.set(attempts.get() + 1);
            async { Err::<(), _>(server(404)) }
        }));
        assert_eq!(attempts.get(), 1);
    }

    #[test]
    fn manifest_media_types_are_declared_or_implied() {
        assert_eq!(manifest_media_type(br#"{"schemaVersion":2,"manifests":[]}"#).unwrap(), OCI_INDEX);
        assert_eq!(manifest_media_type(br#"{"schemaVersion":2,"layers":[]}"#).unwrap(), OCI_MANIFEST);
        let docker = br#"{"mediaType":"application/vnd.docker.distribution.manifest.v2+json"}"#;
        assert_eq!(manifest_media_type(docker).unwrap(), "application/vnd.docker.distribution.manifest.v2+json");
        assert!(
            manifest_media_type(br#"{"mediaType":"application/vnd.docker.distribution.manifest.v1+json"}"#).is_err()
        );
        assert!(manifest_media_type(b"not json").is_err());
    }
}
