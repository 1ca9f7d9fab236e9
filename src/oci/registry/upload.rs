//! Blob uploads: one streaming PATCH per blob, as docker and containers/image send them, and, when that PATCH is
//! refused or breaks, the rest in `Content-Range` chunks from the offset the registry reports.
//!
//! Every push-side request is made here (uploads, blob HEADs, manifest PUTs, the access probe, push and mount
//! tokens through [`super::fetch::answer_challenge`]), and every answer's body is either left unread or read with
//! a bound. (oci-client's chunked push, used before, sent one PATCH per 4 MiB, retried none, and read whole
//! answers.)
//!
//! Resuming needs the bytes again, and they come from a cipher that cannot rewind: so the last [`WINDOW`] bytes
//! sent are kept (reference-counted pieces, no copies), shared by the uploads streaming at once (each keeps
//! `WINDOW / n` of them, at least [`MIN_WINDOW`]: memory does not grow with the layers in flight). After a
//! failure, the upload's status (GET) says how much the registry stored; if the window still holds what follows,
//! the upload goes on from there in chunks, each acknowledged before the next. Docker's registry (distribution
//! 2.x) cannot resume an upload that stored part of a broken request (it cancels it); a blob that fits the
//! upload's share of the window then starts over in a new upload, and a larger one fails with a message saying
//! so. Nothing is tagged either way: the manifest is pushed only after its blobs.

use super::protocol::{OciDistributionError, OciErrorCode};
use super::{ATTEMPTS, FIRST_BACKOFF, is_transient};
use crate::oci::{Error, RegistryLocation};
use bytes::{Bytes, BytesMut};
use reqwest::header::{AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, LOCATION, RANGE, WWW_AUTHENTICATE};
use reqwest::{Method, StatusCode, Url};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;
use zeroize::Zeroizing;

/// How the body of a streaming PATCH ended.
enum Fed {
    /// Every byte went to the request.
    Ended,
    /// The request stopped taking bytes: it failed, or was answered.
    RequestGone,
    /// The network took nothing for [`STALL`].
    Stalled,
}

/// How long the network may take no bytes of an upload, or a registry keep its answer, before the request is
/// given up on (and the upload resumed). Per step, not per request: a large layer on a slow link takes longer.
const STALL: std::time::Duration = std::time::Duration::from_secs(300);
/// Bytes kept after they were sent, to send again after a broken request, by the uploads streaming at once
/// together (`Uploader::window_share`). It bounds the memory uploads hold, and a lone upload's share is the
/// largest blob that can start over on a registry that cannot resume.
pub const WINDOW: usize = 16 << 20;
/// The least an upload keeps to send again, however many stream at once.
const MIN_WINDOW: usize = 1 << 20;
/// Size of one `Content-Range` chunk once the streaming PATCH has failed.
const FALLBACK_CHUNK: usize = 4 << 20;
const OCTET_STREAM: &str = "application/octet-stream";
/// The digest of the empty blob, which the access probe asks for.
const EMPTY_DIGEST: &str = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// Why an upload request failed.
#[derive(Debug)]
pub enum Failure {
    /// The registry answered with an error (`status`), or the request did not complete (no status).
    Request { status: Option<StatusCode>, error: OciDistributionError },
    /// The registry's answer made no sense, or the upload cannot go on.
    Stopped(String),
}

impl Failure {
    fn status(&self) -> Option<StatusCode> {
        match self {
            Failure::Request { status, .. } => *status,
            Failure::Stopped(_) => None,
        }
    }

    fn is_transient(&self) -> bool {
        matches!(self, Failure::Request { error, .. } if is_transient(error))
    }

    fn is_envelope(&self, code: &OciErrorCode) -> bool {
        matches!(self, Failure::Request { error: OciDistributionError::RegistryError { envelope, .. }, .. }
            if envelope.errors.iter().any(|e| e.code == *code))
    }

    /// What went wrong, on one line.
    pub fn describe(&self) -> String {
        match self {
            Failure::Request { error, .. } => super::chain(error),
            Failure::Stopped(message) => message.clone(),
        }
    }

    /// The error to report for `what` at `location`.
    pub fn into_error(self, location: &RegistryLocation, what: &str) -> Error {
        match self {
            Failure::Request { error, .. } => super::registry_error(location, what, error),
            Failure::Stopped(message) => {
                Error::Io(format!("{}/{}: {what}: {message}", location.registry, location.repository))
            }
        }
    }
}

impl From<reqwest::Error> for Failure {
    fn from(error: reqwest::Error) -> Self {
        // Without the URL: an upload's carries a long state token that says nothing to the reader.
        Failure::Request { status: error.status(), error: OciDistributionError::RequestError(error.without_url()) }
    }
}

impl From<OciDistributionError> for Failure {
    fn from(error: OciDistributionError) -> Self {
        Failure::Request { status: None, error }
    }
}

/// An upload session being opened ([`Uploader::start`]) before the blob's first piece is ready.
pub type Opening = tokio::task::JoinHandle<Result<Session, Failure>>;

/// How requests to the registry authenticate: an `Authorization` value (a bearer token or basic credentials),
/// or none.
#[derive(Clone)]
struct Authorization(Option<Zeroizing<String>>);

/// One upload session: where its next request goes, and with which credentials.
#[derive(Clone)]
pub struct Session {
    location: Url,
    authorization: Authorization,
}

/// An upload whose bytes the registry has all acknowledged; the closing PUT names its digest.
pub struct Uploaded {
    session: Session,
    /// What happened on the way (a refused streamed PATCH, a resumed upload), for the log.
    pub notes: Vec<String>,
}

impl Uploaded {
    /// The session, to cancel an upload that will not be closed.
    pub fn into_session(self) -> Session {
        self.session
    }
}

/// Where an upload in progress stands, so that an abandoned upload can be cancelled.
pub type Tracker = Arc<Mutex<Option<Session>>>;

/// Uploads blobs and manifests to one repository. Every request is made here, and every answer's body that is
/// read at all is read with a bound ([`super::fetch`]).
pub struct Uploader {
    http: reqwest::Client,
    /// The user name and password, for basic authentication or the token service.
    credentials: Option<(String, Zeroizing<String>)>,
    /// `scheme://host[:port]` of the registry; credentials go to this origin only.
    origin: Url,
    repository: String,
    /// Set once the registry refused a streamed PATCH: later blobs go in chunks from the start.
    chunks_only: AtomicBool,
    /// Uploads streaming now: they share [`WINDOW`].
    streaming: Arc<AtomicUsize>,
    /// Credentials for mounting blobs from another repository, fetched at the first mount.
    mount_authorization: tokio::sync::Mutex<Option<Authorization>>,
    /// The last credentials fetched for pushing, for the next upload (asking a token service costs round trips
    /// per layer otherwise); a 401 fetches new ones.
    push_authorization: tokio::sync::Mutex<Option<Authorization>>,
}

impl Uploader {
    pub fn new(
        http: reqwest::Client,
        origin: Url,
        repository: String,
        credentials: Option<(String, Zeroizing<String>)>,
    ) -> Self {
        super::fetch::hold_credentials(credentials.as_ref());
        Self {
            http,
            credentials,
            origin,
            repository,
            chunks_only: AtomicBool::new(false),
            streaming: Arc::default(),
            mount_authorization: tokio::sync::Mutex::new(None),
            push_authorization: tokio::sync::Mutex::new(None),
        }
    }

    /// Checks that the registry is there and takes the credentials for pushing: fetches them (a token service
    /// that refuses is the error) and asks for a blob that no image holds (HEAD of the empty blob's digest).
    pub async fn probe(&self) -> Result<(), Failure> {
        self.blob_exists(EMPTY_DIGEST).await.map(|_| ())
    }

    /// Whether the repository has blob `digest` (HEAD: the answer has no body to read).
    pub async fn blob_exists(&self, digest: &str) -> Result<bool, Failure> {
        let url = self.url(&format!("blobs/{digest}"))?;
        let mut authorization = self.push_authorization().await?;
        match self.retried(Method::HEAD, &url, &mut authorization, StatusCode::OK, None).await {
            Ok(_) => Ok(true),
            Err(failure) if failure.status() == Some(StatusCode::NOT_FOUND) => Ok(false),
            Err(failure) => Err(failure),
        }
    }

    /// Pushes a manifest under `name` (its digest or a tag); the registry's answer is not read beyond its status.
    pub async fn put_manifest(
        &self,
        name: &str,
        body: Bytes,
        media_type: reqwest::header::HeaderValue,
    ) -> Result<(), Failure> {
        let url = self.url(&format!("manifests/{name}"))?;
        let mut authorization = self.push_authorization().await?;
        self.retried(Method::PUT, &url, &mut authorization, StatusCode::CREATED, Some((media_type, body))).await?;
        Ok(())
    }

    /// Pushes a small blob whole: an upload opened (POST) and closed with its bytes (PUT `?digest=`), each
    /// request retried as [`Self::retried`] does; an upload that fails is cancelled.
    pub async fn push_whole(&self, bytes: Bytes, digest: &str) -> Result<(), Failure> {
        let uploaded = Uploaded { session: self.start().await?, notes: Vec::new() };
        let outcome = self.close(&uploaded, digest, Some(bytes)).await;
        if outcome.is_err() {
            self.cancel(&uploaded.session).await;
        }
        outcome
    }

    /// The bytes one upload keeps to send again: its share of [`WINDOW`] among the uploads streaming now.
    fn window_share(&self) -> usize {
        (WINDOW / self.streaming.load(Ordering::Relaxed).max(1)).max(MIN_WINDOW)
    }

    /// `v2/REPOSITORY/PATH` at the registry.
    fn url(&self, path: &str) -> Result<Url, Failure> {
        self.origin
            .join(&format!("v2/{}/{path}", self.repository))
            .map_err(|e| Failure::Stopped(format!("registry address: {e}")))
    }

    /// The credentials fetched last for pushing, or new ones.
    async fn push_authorization(&self) -> Result<Authorization, Failure> {
        let cached = self.push_authorization.lock().await.clone();
        match cached {
            Some(authorization) => Ok(authorization),
            None => self.authorization().await,
        }
    }

    /// Sends every piece that arrives on `pieces` until the channel closes; returns once the registry has them all.
    /// An upload that fails is cancelled on the registry. `opening`: the session [`Uploader::start`] is opening
    /// for it already (else it is opened here).
    pub async fn send(
        &self,
        pieces: mpsc::Receiver<Bytes>,
        tracker: Tracker,
        opening: Option<Opening>,
    ) -> Result<Uploaded, Failure> {
        let _counted = Streaming::count(&self.streaming);
        let outcome = self.send_all(pieces, &tracker, opening).await;
        if outcome.is_err() {
            let session = tracker.lock().ok().and_then(|mut s| s.take());
            if let Some(session) = session {
                self.cancel(&session).await;
            }
        }
        outcome
    }

    async fn send_all(
        &self,
        mut pieces: mpsc::Receiver<Bytes>,
        tracker: &Tracker,
        opening: Option<Opening>,
    ) -> Result<Uploaded, Failure> {
        let mut session = match opening {
            Some(opening) => opening.await.map_err(|e| Failure::Stopped(format!("opening the upload: {e}")))??,
            None => self.start().await?,
        };
        let mut window = Window::default();
        let mut from = 0;
        let mut streaming = !self.chunks_only.load(Ordering::Relaxed);
        let mut notes = Vec::new();
        let mut failures = 0;
        // Where the window started at the last failure: in chunks it moves only when the registry acknowledges.
        let mut stored_before_failure = 0;
        loop {
            *tracker.lock().expect("tracker") = Some(session.clone());
            let attempt = if streaming {
                self.stream(&mut session, &mut window, &mut pieces).await
            } else {
                self.chunks(&mut session, from, &mut window, &mut pieces).await
            };
            let failure = match attempt {
                Ok(()) => {
                    *tracker.lock().expect("tracker") = Some(session.clone());
                    return Ok(Uploaded { session, notes });
                }
                Err(failure) => failure,
            };
            // Failures count against the limit only while no byte gets through between them.
            failures = if window.start > stored_before_failure { 1 } else { failures + 1 };
            stored_before_failure = window.start;
            if failures >= ATTEMPTS || failure.status() == Some(StatusCode::FORBIDDEN) {
                return Err(failure);
            }
            if streaming && refuses_streaming(&failure) {
                self.chunks_only.store(true, Ordering::Relaxed);
            }
            streaming = false;
            tokio::time::sleep(FIRST_BACKOFF * 2u32.pow(failures - 1)).await;
            if failure.status() == Some(StatusCode::UNAUTHORIZED) {
                session.authorization = self.authorization().await?;
            }
            let sent = window.end;
            from = self.resume(&mut session, &window, &failure).await?;
            notes.push(format!(
                "the upload failed after {sent} bytes ({}); going on in {} MiB chunks from byte {from}",
                failure.describe(),
                FALLBACK_CHUNK >> 20
            ));
        }
    }

    /// Closes the upload under `digest` (the registry checks the bytes against it).
    pub async fn finish(&self, uploaded: &Uploaded, digest: &str) -> Result<(), Failure> {
        self.close(uploaded, digest, None).await
    }

    /// Closes the upload under `digest` with its last bytes, if any.
    async fn close(&self, uploaded: &Uploaded, digest: &str, last: Option<Bytes>) -> Result<(), Failure> {
        let session = &uploaded.session;
        let mut url = session.location.clone();
        url.query_pairs_mut().append_pair("digest", digest);
        let mut authorization = session.authorization.clone();
        let body = last.map(|bytes| (reqwest::header::HeaderValue::from_static(OCTET_STREAM), bytes));
        match self.retried(Method::PUT, &url, &mut authorization, StatusCode::CREATED, body).await {
            Ok(response) => check_digest(&response, digest),
            // The upload is gone: an earlier attempt's PUT went through and its answer was lost, or the blob
            // was there already. Either way what counts is that the repository has the blob.
            Err(failure) if failure.status() == Some(StatusCode::NOT_FOUND) => match self.blob_exists(digest).await {
                Ok(true) => Ok(()),
                _ => Err(failure),
            },
            Err(failure) => Err(failure),
        }
    }

    /// Mounts blob `digest` from repository `from` of the same registry (`POST ?mount=&from=`): true when the
    /// registry created the blob without its bytes. False when it would not (it then opens an upload, cancelled
    /// here): the caller uploads the blob as usual.
    pub async fn mount(&self, digest: &str, from: &str) -> Result<bool, Failure> {
        let mut url = self
            .origin
            .join(&format!("v2/{}/blobs/uploads/", self.repository))
            .map_err(|e| Failure::Stopped(format!("upload address: {e}")))?;
        url.query_pairs_mut().append_pair("mount", digest).append_pair("from", from);
        let mut refreshed = false;
        loop {
            let authorization = {
                let mut cached = self.mount_authorization.lock().await;
                match &*cached {
                    Some(authorization) => authorization.clone(),
                    None => cached.insert(self.mount_authorization(from).await?).clone(),
                }
            };
            let response = self
                .request(Method::POST, &url, &authorization)
                .header(CONTENT_LENGTH, 0)
                .timeout(STALL)
                .send()
                .await?;
            match response.status() {
                StatusCode::CREATED => return Ok(true),
                StatusCode::ACCEPTED => {
                    if let Ok(location) = self.location(&response) {
                        self.cancel(&Session { location, authorization }).await;
                    }
                    return Ok(false);
                }
                // A token that expired since the last mount: once more with a new one.
                StatusCode::UNAUTHORIZED if !refreshed => {
                    refreshed = true;
                    *self.mount_authorization.lock().await = None;
                }
                _ => return Ok(false),
            }
        }
    }

    /// Credentials for mounting from `from`: from a token service, one token for both repositories, asking
    /// `repository:DST:pull,push` together with `repository:FROM:pull` as docker and containers/image do (a token
    /// for the destination alone makes the registry refuse the mount for insufficient scope); without a token
    /// service, the basic credentials or none.
    async fn mount_authorization(&self, from: &str) -> Result<Authorization, Failure> {
        let scopes = [format!("repository:{}:pull,push", self.repository), format!("repository:{from}:pull")];
        self.fresh_authorization(&scopes).await
    }

    /// New credentials for `scopes`: the registry's challenge (a GET of `/v2/`, its body never read) says whether
    /// a token service issues them ([`super::fetch::answer_challenge`], the exchange pulls use too); else the
    /// basic credentials, else none.
    async fn fresh_authorization(&self, scopes: &[String]) -> Result<Authorization, Failure> {
        let ping = self.origin.join("v2/").map_err(|e| Failure::Stopped(format!("registry address: {e}")))?;
        let mut failures = 0;
        let response = loop {
            match self.http.get(ping.clone()).timeout(super::fetch::TOKEN_TIMEOUT).send().await {
                Ok(response) => break response,
                Err(error) => {
                    let failure = Failure::from(error);
                    if failures + 1 >= ATTEMPTS || !failure.is_transient() {
                        return Err(failure);
                    }
                    failures += 1;
                    tokio::time::sleep(FIRST_BACKOFF * 2u32.pow(failures - 1)).await;
                }
            }
        };
        let challenge = match response.status() {
            StatusCode::UNAUTHORIZED => {
                response.headers().get(WWW_AUTHENTICATE).and_then(|v| v.to_str().ok()).map(str::to_owned)
            }
            _ => None,
        };
        drop(response);
        let answer = match challenge {
            Some(challenge) => {
                super::fetch::answer_challenge(&self.http, Some(&challenge), self.credentials.as_ref(), scopes).await?
            }
            None => None,
        };
        Ok(Authorization(answer.or_else(|| self.basic())))
    }

    /// The basic credentials as an `Authorization` value.
    fn basic(&self) -> Option<Zeroizing<String>> {
        use base64::Engine;
        self.credentials.as_ref().map(|(user, password)| {
            let pair = Zeroizing::new(format!("{user}:{}", password.as_str()));
            Zeroizing::new(format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair.as_bytes())))
        })
    }

    /// Cancels an upload that will not be finished (best effort: registries also expire them).
    pub async fn cancel(&self, session: &Session) {
        let request = self.request(Method::DELETE, &session.location, &session.authorization);
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), request.send()).await;
    }

    /// Opens an upload session (POST).
    pub async fn start(&self) -> Result<Session, Failure> {
        let mut authorization = self.push_authorization().await?;
        let url = self.url("blobs/uploads/")?;
        let response = self.retried(Method::POST, &url, &mut authorization, StatusCode::ACCEPTED, None).await?;
        let location = self.location(&response)?;
        Ok(Session { location, authorization })
    }

    /// A request without a body or with a small one (`body`: its type and bytes), sent again after a pause when
    /// it failed transiently, and once with fresh credentials when the registry no longer takes them (a token
    /// expires during a long upload). A successful answer's body is left unread; an error's is read bounded.
    async fn retried(
        &self,
        method: Method,
        url: &Url,
        authorization: &mut Authorization,
        expected: StatusCode,
        body: Option<(reqwest::header::HeaderValue, Bytes)>,
    ) -> Result<reqwest::Response, Failure> {
        let mut failures = 0;
        let mut refreshed = false;
        loop {
            let request = self.request(method.clone(), url, authorization).timeout(STALL);
            let request = match &body {
                Some((media_type, bytes)) => request
                    .header(CONTENT_TYPE, media_type.clone())
                    .header(CONTENT_LENGTH, bytes.len())
                    .body(bytes.clone()),
                None => request.header(CONTENT_LENGTH, 0),
            };
            let sent = request.send().await;
            let outcome = match sent {
                Ok(response) => expect(response, expected).await,
                Err(e) => Err(e.into()),
            };
            match outcome {
                Err(failure) if failure.status() == Some(StatusCode::UNAUTHORIZED) && !refreshed => {
                    refreshed = true;
                    *authorization = self.authorization().await?;
                }
                Err(failure) if failures + 1 < ATTEMPTS && failure.is_transient() => {
                    failures += 1;
                    tokio::time::sleep(FIRST_BACKOFF * 2u32.pow(failures - 1)).await;
                }
                outcome => return outcome,
            }
        }
    }

    /// Sends every piece to come in one PATCH: an upload's first attempt, so the window starts empty (after a
    /// failure the upload goes on in chunks).
    async fn stream(
        &self,
        session: &mut Session,
        window: &mut Window,
        pieces: &mut mpsc::Receiver<Bytes>,
    ) -> Result<(), Failure> {
        let (body, body_pieces) = mpsc::channel::<Result<Bytes, std::io::Error>>(2);
        let request = self
            .request(Method::PATCH, &session.location, &session.authorization)
            .header(CONTENT_TYPE, OCTET_STREAM)
            .body(reqwest::Body::wrap_stream(tokio_stream::wrappers::ReceiverStream::new(body_pieces)))
            .send();
        let response = {
            let feed = async {
                while let Some(piece) = pieces.recv().await {
                    window.push(piece.clone());
                    window.keep_last(self.window_share());
                    // Each send waits for the network to take the piece before: a registry that takes nothing for
                    // STALL is given up on (a whole-request timeout would cap the size of a layer instead). The
                    // piece is in the window: if it does not go now, it goes again after the failure.
                    match tokio::time::timeout(STALL, body.send(Ok(piece))).await {
                        Ok(Ok(())) => {}
                        Ok(Err(_)) => return Fed::RequestGone,
                        Err(_) => return Fed::Stalled,
                    }
                }
                drop(body); // the end of the blob: the request body ends here
                Fed::Ended
            };
            tokio::pin!(request, feed);
            tokio::select! {
                // An answer before the last byte: a refusal, or a registry that stopped reading. Feeding stops
                // here, so that the bytes not sent yet stay in the window for what follows.
                answer = &mut request => before_the_end(answer)?,
                fed = &mut feed => match fed {
                    Fed::Ended => tokio::time::timeout(STALL, &mut request).await.map_err(|_| {
                        Failure::Stopped(format!("no answer {} s after the last byte", STALL.as_secs()))
                    })?,
                    // The request stopped taking bytes (it failed, or was answered early): its outcome says how.
                    Fed::RequestGone => before_the_end(request.await)?,
                    Fed::Stalled => {
                        return Err(Failure::Stopped(format!("the registry took no data for {} s", STALL.as_secs())));
                    }
                },
            }
        };
        let response = expect(response?, StatusCode::ACCEPTED).await?;
        self.acknowledged(session, &response, window.end)?;
        window.forget_below(window.end);
        Ok(())
    }

    /// Sends the window's bytes from `from`, then the pieces still to come, in `Content-Range` chunks.
    async fn chunks(
        &self,
        session: &mut Session,
        from: u64,
        window: &mut Window,
        pieces: &mut mpsc::Receiver<Bytes>,
    ) -> Result<(), Failure> {
        let mut offset = from;
        loop {
            while window.end - offset < FALLBACK_CHUNK as u64 {
                match pieces.recv().await {
                    Some(piece) => window.push(piece),
                    None => break,
                }
            }
            let length = (window.end - offset).min(FALLBACK_CHUNK as u64);
            if length == 0 {
                return Ok(());
            }
            let chunk = window.copy(offset, length as usize);
            let response = self
                .request(Method::PATCH, &session.location, &session.authorization)
                .header(CONTENT_TYPE, OCTET_STREAM)
                .header("Content-Range", format!("{offset}-{}", offset + length - 1))
                .header(CONTENT_LENGTH, length)
                .body(chunk)
                .timeout(STALL)
                .send()
                .await?;
            let response = expect(response, StatusCode::ACCEPTED).await?;
            offset += length;
            self.acknowledged(session, &response, offset)?;
            window.forget_below(offset);
        }
    }

    /// Finds where to go on after `failure`: at the offset the registry reports, or at 0 in a new upload.
    async fn resume(&self, session: &mut Session, window: &Window, failure: &Failure) -> Result<u64, Failure> {
        let status = self.status(session).await;
        match status {
            Ok(offset) if window.holds(offset) => return Ok(offset),
            // The registry cancelled the upload (docker's registry does once a broken request stored part of
            // its bytes), lost it, or stored more than was sent: start over if every byte is still here.
            _ if window.start == 0 => {
                self.cancel(session).await;
                *session = self.start().await?;
                return Ok(0);
            }
            Ok(_) | Err(_) => {}
        }
        let stored = match status {
            Ok(0) => "the registry has none of them".to_owned(),
            Ok(offset) => format!("the registry has the first {offset}"),
            Err(e) => format!("the registry cannot resume the upload ({})", e.describe()),
        };
        Err(Failure::Stopped(format!(
            "the upload broke after {} bytes ({}); {stored}, and only the last {} MiB are kept to send again: run the \
             command again",
            window.end,
            failure.describe(),
            window.limit.max(MIN_WINDOW) >> 20
        )))
    }

    /// The number of bytes the registry has stored for the upload (GET on its location).
    async fn status(&self, session: &mut Session) -> Result<u64, Failure> {
        let location = session.location.clone();
        let response =
            self.retried(Method::GET, &location, &mut session.authorization, StatusCode::NO_CONTENT, None).await?;
        let offset = stored_bytes(&response)?;
        if let Some(location) = response.headers().get(LOCATION) {
            session.location = self.resolve(location)?;
        }
        Ok(offset)
    }

    /// Takes the next location from an acknowledged PATCH, and checks that the registry stored `end` bytes.
    fn acknowledged(&self, session: &mut Session, response: &reqwest::Response, end: u64) -> Result<(), Failure> {
        session.location = self.location(response)?;
        // A registry that omits the range is taken at its word (202); one that states it must agree.
        if response.headers().contains_key(RANGE) {
            let stored = stored_bytes(response)?;
            if stored != end {
                return Err(Failure::Stopped(format!("the registry stored {stored} bytes of the {end} sent")));
            }
        }
        Ok(())
    }

    fn location(&self, response: &reqwest::Response) -> Result<Url, Failure> {
        let value = response.headers().get(LOCATION).ok_or_else(|| {
            Failure::Stopped(format!("the registry's answer ({}) has no Location", response.status()))
        })?;
        self.resolve(value)
    }

    /// A Location header, absolute or relative to the registry.
    fn resolve(&self, value: &reqwest::header::HeaderValue) -> Result<Url, Failure> {
        let text =
            value.to_str().map_err(|_| Failure::Stopped("the registry sent a Location that is not text".into()))?;
        self.origin.join(text).map_err(|e| Failure::Stopped(format!("the registry sent Location `{text}`: {e}")))
    }

    /// A request, with the credentials only when it goes to the registry itself (a Location may point
    /// elsewhere, and a token must not follow it: CVE-2020-15157).
    fn request(&self, method: Method, url: &Url, authorization: &Authorization) -> reqwest::RequestBuilder {
        let request = self.http.request(method, url.clone());
        let same_origin = url.scheme() == self.origin.scheme()
            && url.host_str() == self.origin.host_str()
            && url.port_or_known_default() == self.origin.port_or_known_default();
        match &authorization.0 {
            Some(value) if same_origin => request.header(AUTHORIZATION, value.as_str()),
            _ => request,
        }
    }

    /// Fresh credentials for pushing (`repository:DST:pull,push`), kept for the uploads that follow.
    async fn authorization(&self) -> Result<Authorization, Failure> {
        let authorization = self.fresh_authorization(&[format!("repository:{}:pull,push", self.repository)]).await?;
        *self.push_authorization.lock().await = Some(authorization.clone());
        Ok(authorization)
    }
}

/// A streamed PATCH that the registry answered with a refusal (not a failure of the moment): the registry wants
/// `Content-Range` chunks.
fn refuses_streaming(failure: &Failure) -> bool {
    // 501: the server does not take chunked request bodies. 408 and 429 are failures of the moment.
    failure.status().is_some_and(|s| {
        s == StatusCode::NOT_IMPLEMENTED
            || (s.is_client_error()
                && !matches!(
                    s,
                    StatusCode::UNAUTHORIZED
                        | StatusCode::FORBIDDEN
                        | StatusCode::NOT_FOUND
                        | StatusCode::REQUEST_TIMEOUT
                        | StatusCode::TOO_MANY_REQUESTS
                ))
    }) && !failure.is_envelope(&OciErrorCode::BlobUploadInvalid)
}

/// An answer to a streaming PATCH that came before its last byte went: a success then is a registry that took a
/// truncated blob, which is a failure; anything else is as it came.
fn before_the_end(
    answer: Result<reqwest::Response, reqwest::Error>,
) -> Result<Result<reqwest::Response, reqwest::Error>, Failure> {
    match answer {
        Ok(response) if response.status().is_success() => {
            Err(Failure::Stopped("the registry answered before the last byte was sent".into()))
        }
        answer => Ok(answer),
    }
}

/// The response when it has the `expected` status, else the registry's error (its JSON envelope when it sent one),
/// read bounded in size and time, redacted and escaped ([`super::fetch::error_answer`]).
async fn expect(response: reqwest::Response, expected: StatusCode) -> Result<reqwest::Response, Failure> {
    let status = response.status();
    if status == expected {
        return Ok(response);
    }
    Err(Failure::Request { status: Some(status), error: super::fetch::error_answer(response).await })
}

/// The bytes an upload holds, from its `Range: 0-LAST`. Docker's registry says `0-0` for an empty upload as
/// for a one-byte one; the empty upload is by far the likelier (a request that stored nothing), and a wrong
/// guess costs a digest mismatch at the closing PUT, not a wrong blob.
fn stored_bytes(response: &reqwest::Response) -> Result<u64, Failure> {
    let Some(value) = response.headers().get(RANGE) else { return Ok(0) };
    let text = value.to_str().unwrap_or_default();
    let last = text
        .trim_start_matches("bytes=")
        .split_once('-')
        .filter(|(first, _)| *first == "0")
        .and_then(|(_, last)| last.trim().parse::<u64>().ok())
        .ok_or_else(|| Failure::Stopped(format!("the registry sent `Range: {text}`")))?;
    Ok(if last == 0 { 0 } else { last + 1 })
}

/// The registry's digest for the blob it created, when it says one, must be the one asked for.
fn check_digest(response: &reqwest::Response, digest: &str) -> Result<(), Failure> {
    match response.headers().get("Docker-Content-Digest").and_then(|v| v.to_str().ok()) {
        Some(stored) if stored != digest => Err(Failure::Request {
            status: Some(response.status()),
            error: OciDistributionError::DigestMismatch { expected: digest.to_owned(), actual: stored.to_owned() },
        }),
        _ => Ok(()),
    }
}

/// Counts an upload among those streaming, for as long as it lives.
struct Streaming(Arc<AtomicUsize>);

impl Streaming {
    fn count(counter: &Arc<AtomicUsize>) -> Self {
        counter.fetch_add(1, Ordering::Relaxed);
        Self(Arc::clone(counter))
    }
}

impl Drop for Streaming {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Bytes sent and not yet known to be stored: `pieces` hold offsets `start..end` of the blob.
#[derive(Default)]
struct Window {
    pieces: VecDeque<Bytes>,
    start: u64,
    end: u64,
    /// The bytes [`Window::keep_last`] was asked to keep last.
    limit: usize,
}

impl Window {
    fn push(&mut self, piece: Bytes) {
        self.end += piece.len() as u64;
        self.pieces.push_back(piece);
    }

    /// Drops the oldest whole pieces while the rest still holds `limit` bytes or more.
    fn keep_last(&mut self, limit: usize) {
        self.limit = limit;
        while let Some(front) = self.pieces.front() {
            if self.end - self.start - (front.len() as u64) < limit as u64 {
                break;
            }
            self.start += front.len() as u64;
            self.pieces.pop_front();
        }
    }

    /// Drops the bytes before `offset` (the registry has them).
    fn forget_below(&mut self, offset: u64) {
        while let Some(front) = self.pieces.front_mut() {
            let front_end = self.start + front.len() as u64;
            if front_end <= offset {
                self.start = front_end;
                self.pieces.pop_front();
            } else {
                if offset > self.start {
                    let _ = front.split_to((offset - self.start) as usize);
                    self.start = offset;
                }
                break;
            }
        }
        self.start = self.start.max(offset.min(self.end));
    }

    fn holds(&self, offset: u64) -> bool {
        (self.start..=self.end).contains(&offset)
    }

    /// The bytes from `offset` to the end, as pieces (shared, not copied).
    fn from(&self, offset: u64) -> Vec<Bytes> {
        let mut at = self.start;
        let mut pieces = Vec::new();
        for piece in &self.pieces {
            let piece_end = at + piece.len() as u64;
            if piece_end > offset {
                let skip = offset.saturating_sub(at) as usize;
                pieces.push(piece.slice(skip..));
            }
            at = piece_end;
        }
        pieces
    }

    /// `length` bytes from `offset`, in one buffer (a chunk request needs its length up front).
    fn copy(&self, offset: u64, length: usize) -> Bytes {
        let mut chunk = BytesMut::with_capacity(length);
        for piece in self.from(offset) {
            let wanted = length - chunk.len();
            if wanted == 0 {
                break;
            }
            chunk.extend_from_slice(&piece[..piece.len().min(wanted)]);
        }
        chunk.freeze()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(sizes: &[usize]) -> Window {
        let mut window = Window::default();
        let mut next = 0u8;
        for &size in sizes {
            let piece: Vec<u8> = (0..size)
                .map(|_| {
                    next = next.wrapping_add(1);
                    next
                })
                .collect();
            window.push(Bytes::from(piece));
        }
        window
    }

    fn bytes(pieces: Vec<Bytes>) -> Vec<u8> {
        pieces.concat()
    }

    #[test]
    fn the_window_keeps_the_newest_bytes_in_whole_pieces() {
        let mut w = window(&[4, 4, 4, 4]);
        w.keep_last(9);
        // 12 bytes remain: dropping another piece would leave 8 < 9.
        assert_eq!((w.start, w.end), (4, 16));
        assert!(w.holds(4) && w.holds(16) && !w.holds(3));
        assert_eq!(bytes(w.from(10)), (11..=16).collect::<Vec<u8>>());
        assert_eq!(w.copy(6, 5).to_vec(), (7..=11).collect::<Vec<u8>>());
        w.forget_below(10);
        assert_eq!(w.start, 10);
        assert_eq!(bytes(w.from(10)), (11..=16).collect::<Vec<u8>>());
        w.forget_below(16);
        assert_eq!((w.start, w.end, w.pieces.len()), (16, 16, 0));
        assert!(w.from(16).is_empty());
    }

    /// Uploads streaming at once share the window: each keeps `WINDOW / n`, at least `MIN_WINDOW`, so the bytes
    /// kept to send again stay near `WINDOW` however many layers are in flight.
    #[test]
    fn uploads_at_once_share_the_window() {
        crate::oci::registry::tls::install_crypto_provider();
        let uploader =
            Uploader::new(reqwest::Client::new(), Url::parse("http://127.0.0.1:5000/").unwrap(), "app".into(), None);
        assert_eq!(uploader.window_share(), WINDOW);
        let counted: Vec<Streaming> = (0..4).map(|_| Streaming::count(&uploader.streaming)).collect();
        assert_eq!(uploader.window_share(), WINDOW / 4);
        let many: Vec<Streaming> = (0..60).map(|_| Streaming::count(&uploader.streaming)).collect();
        assert_eq!(uploader.window_share(), MIN_WINDOW);
        drop((counted, many));
        assert_eq!(uploader.window_share(), WINDOW);
        let mut w = window(&[1 << 18; 40]);
        w.keep_last(WINDOW / 4);
        assert_eq!(w.end - w.start, (WINDOW / 4) as u64);
    }

    #[test]
    fn a_copy_is_cut_at_the_length_asked() {
        let w = window(&[3, 3, 3]);
        assert_eq!(w.copy(0, 9).len(), 9);
        assert_eq!(w.copy(2, 4).to_vec(), vec![3, 4, 5, 6]);
    }

    fn answer(range: Option<&str>) -> reqwest::Response {
        let mut response = http::Response::builder().status(202);
        if let Some(range) = range {
            response = response.header(RANGE, range);
        }
        reqwest::Response::from(response.body(Vec::<u8>::new()).unwrap())
    }

    #[test]
    fn the_stored_size_is_read_from_the_range() {
        let stored = |range| stored_bytes(&answer(range)).ok();
        assert_eq!(stored(Some("0-4194303")), Some(4 << 20));
        assert_eq!(stored(Some("bytes=0-99")), Some(100));
        // Docker's registry: `0-0` for an empty upload.
        assert_eq!(stored(Some("0-0")), Some(0));
        assert_eq!(stored(None), Some(0));
        for bad in ["5-9", "0-", "junk", "0-x"] {
            assert_eq!(stored(Some(bad)), None, "{bad}");
        }
    }

    #[test]
    fn only_plain_refusals_of_a_streamed_patch_switch_to_chunks() {
        let with = |code: u16| Failure::Request {
            status: Some(StatusCode::from_u16(code).unwrap()),
            error: OciDistributionError::ServerError { code, url: String::new(), message: String::new() },
        };
        for code in [400, 411, 413, 415, 416, 501] {
            assert!(refuses_streaming(&with(code)), "{code}");
        }
        for code in [401, 403, 404, 408, 429, 500, 502] {
            assert!(!refuses_streaming(&with(code)), "{code}");
        }
        assert!(!refuses_streaming(&Failure::Stopped("reset".into())));
    }
}
