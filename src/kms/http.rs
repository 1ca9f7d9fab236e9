//! The HTTP(S) client every key-manager backend shares: TLS trust and client certificates from settings,
//! bounded response bodies, retries with backoff on transient failures, and errors that name the service
//! without a credential or a server's unbounded text in them.
//!
//! **Secrets a server echoes.** Every request knows the secrets it carries ([`redact::Secrets`]): the values of
//! its headers (tokens) but a few plainly public ones, every string of its JSON body (a plaintext, a login's
//! secret id or JWT), the query values of its URL (a presigned signature), and whatever the backend adds with
//! [`Request::secret`]. The body of every answer that is not a success, every transport error and the text of
//! [`Response::json`]'s errors are scrubbed of them before a backend sees them, so no backend can print one.
//!
//! **Deadline.** The earlier of [`HttpSettings::deadline`] and the command's deadline
//! ([`crate::deadline::effective`]: a backend that builds its settings from `Default` still obeys it) bounds
//! every request whole (connect, TLS, headers and every byte of the body: a total, not an idle time), every
//! retry and every pause between attempts; an attempt it cuts ends in [`Error::Unavailable`] saying "the overall
//! deadline of N s passed" and naming the server, with [`crate::deadline::HINT`] (exit status 4).
//!
//! Backends are synchronous ([`Http::send`]); a current-thread tokio runtime lives inside, as in
//! `machineadm/remote.rs`. Call it from a plain thread or `spawn_blocking`, never from an async task.

use super::Error;
use crate::deadline::Deadline;
use crate::redact;
use std::path::PathBuf;
use std::time::Duration;
use zeroize::Zeroizing;

/// Most bytes of a response body that are read; a longer body is an error, and reading stops at this bound + 1.
pub const MAX_BODY: usize = 1 << 20;
/// Longest wait between two attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// How to reach a key manager over HTTPS. Resolved by the command line from flags and environment variables.
#[derive(Debug, Clone)]
pub struct HttpSettings {
    /// PEM files of CA certificates trusted besides the system roots (`VAULT_CACERT`, `OS_CACERT`).
    pub ca_files: Vec<PathBuf>,
    /// Directories whose files are all PEM CA certificates (`VAULT_CAPATH`).
    pub ca_dirs: Vec<PathBuf>,
    /// A client certificate and its key, both PEM (`VAULT_CLIENT_CERT`, `VAULT_CLIENT_KEY`).
    pub client_identity: Option<(PathBuf, PathBuf)>,
    /// Accept any server certificate. Only set from an explicit flag.
    pub insecure_skip_verify: bool,
    /// Bound of one request (connect, send, answer).
    pub timeout: Duration,
    /// How many times a transient failure (connection error, 5xx, 429) is tried again.
    pub retries: u32,
    /// Wait before the first retry; doubled for each further one.
    pub first_backoff: Duration,
    /// The command's overall deadline: no request or pause outlives it.
    pub deadline: Option<Deadline>,
    /// The proxies requests go through (none: directly).
    pub proxies: crate::proxy::Proxies,
}

impl Default for HttpSettings {
    fn default() -> Self {
        Self {
            ca_files: Vec::new(),
            ca_dirs: Vec::new(),
            client_identity: None,
            insecure_skip_verify: false,
            timeout: Duration::from_secs(30),
            retries: 3,
            first_backoff: Duration::from_millis(500),
            deadline: None,
            proxies: crate::proxy::Proxies::default(),
        }
    }
}

/// One request. Header values may be secrets (tokens): they are never shown, and its `Debug` shows neither them
/// nor the body (which may carry a plaintext or a login secret).
#[derive(Clone)]
pub struct Request {
    /// The method.
    pub method: reqwest::Method,
    /// The full URL.
    pub url: reqwest::Url,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
    /// The body, sent as is; wiped on drop (it may be a KV plaintext or a login secret).
    pub body: Option<Zeroizing<Vec<u8>>>,
    /// What the request does, for errors ("reading KV secret `kv/cryptadm/pvc-1`").
    pub what: String,
    /// Whether a transient failure may be answered by sending it again: false for a request whose effect is not
    /// idempotent (creating a secret or an image, rotating a key, a check-and-set write), where the first try may
    /// have taken effect although its answer was lost.
    pub retry: bool,
    /// The largest successful answer accepted ([`MAX_BODY`] unless raised for a request whose answer is content,
    /// such as an S3 object read as a RemoteConfig); a larger one is [`super::Error::TooLarge`].
    pub max_body: usize,
    /// What the request carries that no answer may show (see the module documentation).
    secrets: redact::Secrets,
}

/// Headers whose values are no secret and common enough words ("true", "application/json") that redacting
/// them would garble messages. Every other header value is taken for a credential.
const PUBLIC_HEADERS: &[&str] = &[
    "accept",
    "content-type",
    "content-length",
    "user-agent",
    "x-vault-request",
    "x-vault-namespace",
    "openstack-api-version",
    "x-openstack-request-id",
    "x-amz-target",
    "x-amz-date",
    "x-amz-content-sha256",
    "host",
    "content-range",
    "range",
    "x-aws-ec2-metadata-token-ttl-seconds",
];

impl std::fmt::Debug for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let headers: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("Request")
            .field("method", &self.method)
            .field("url", &redact::url(self.url.as_str()))
            .field("headers", &headers)
            .field("body", &self.body.as_ref().map(|b| format!("[REDACTED; {} bytes]", b.len())))
            .field("what", &self.what)
            .finish()
    }
}

impl Request {
    /// A request without headers or body.
    pub fn new(method: reqwest::Method, url: reqwest::Url, what: impl Into<String>) -> Self {
        let mut secrets = redact::Secrets::new();
        secrets.add_url(url.as_str());
        Self {
            method,
            url,
            headers: Vec::new(),
            body: None,
            what: what.into(),
            retry: true,
            max_body: MAX_BODY,
            secrets,
        }
    }

    /// Registers a secret the request carries in a form the client cannot see (a passphrase inside a body built
    /// by hand): no answer shown to anyone will contain it, raw, base64 or URL-encoded.
    pub fn secret(mut self, value: &[u8]) -> Self {
        self.secrets.add(value);
        self
    }

    /// The secrets this request carries, to scrub other text with (a backend's own error quoting the server).
    pub fn secrets(&self) -> &redact::Secrets {
        &self.secrets
    }

    /// Sent once, never again after a transient failure (see [`Request::retry`]).
    pub fn once(mut self) -> Self {
        self.retry = false;
        self
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: impl Into<String>) -> Self {
        let value = value.into();
        self.secrets.extend(&header_secrets(name, &value));
        self.headers.push((name.to_owned(), value));
        self
    }

    /// Sets a JSON body (and its content type).
    pub fn json(mut self, body: &serde_json::Value) -> Self {
        // Written straight into a buffer that is wiped: no intermediate String keeps a copy.
        let mut bytes = Zeroizing::new(Vec::with_capacity(256));
        serde_json::to_writer(&mut *bytes, body).expect("a JSON value always serializes into memory");
        self.secrets.add_json(body);
        self.body = Some(bytes);
        self.header("Content-Type", "application/json")
    }
}

/// An answer: status, headers and a body of at most [`MAX_BODY`] bytes. Its `Debug` shows neither header values
/// nor the body: they may be a token (`X-Subject-Token`, a login's `client_token`) or a secret's payload.
pub struct Response {
    /// The status code.
    pub status: reqwest::StatusCode,
    /// The headers.
    pub headers: reqwest::header::HeaderMap,
    /// The body; scrubbed of the request's secrets unless the status is a success.
    pub body: Vec<u8>,
    /// The request's secrets, for the text of [`Response::json`]'s error.
    secrets: redact::Secrets,
}

impl std::fmt::Debug for Response {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let headers: Vec<&str> = self.headers.keys().map(|name| name.as_str()).collect();
        f.debug_struct("Response")
            .field("status", &self.status)
            .field("headers", &headers)
            .field("body", &format!("[REDACTED; {} bytes]", self.body.len()))
            .finish()
    }
}

impl Response {
    /// The body as JSON.
    pub fn json(&self, what: &str, service: &str) -> Result<serde_json::Value, Error> {
        serde_json::from_slice(&self.body).map_err(|e| Error::Protocol {
            what: what.into(),
            service: service.into(),
            problem: format!("not JSON ({e}): {}", redact::server_message(&self.secrets.scrub_bytes(&self.body))),
        })
    }
}

/// A client for one key-manager service.
pub struct Http {
    client: reqwest::Client,
    /// Always `Some` until dropped (see the `Drop` impl).
    runtime: Option<tokio::runtime::Runtime>,
    settings: HttpSettings,
    /// How errors name the service, e.g. "OpenBao at https://127.0.0.1:8200" (already redacted).
    pub service: String,
}

impl Http {
    /// A client for `service` (a name for errors: "Vault", "Barbican").
    pub fn new(service: &str, base: &str, mut settings: HttpSettings) -> Result<Self, Error> {
        crate::oci::registry::tls::install_crypto_provider();
        settings.deadline = crate::deadline::effective(settings.deadline);
        let service = format!("{service} at {}", redact::url(base));
        let client = match client(&settings, true) {
            // A machine without a CA bundle (a minimal or distroless root): the platform's verifier refuses to
            // start ("No CA certificates were loaded from the system"), which a plain-HTTP service never needs.
            Err(_) if base.starts_with("http://") => client(&settings, false)?,
            built => built?,
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::Config(format!("cannot start the I/O runtime: {e}")))?;
        Ok(Self { client, runtime: Some(runtime), settings, service })
    }

    /// Sends `request`, retrying connection failures, 5xx and 429 answers with backoff. The answer is returned
    /// whatever its status (the backend maps 4xx), except a 5xx or 429 left after the retries, which is
    /// [`Error::Unavailable`]. A request that is not to be retried ([`Request::once`]) gets one attempt.
    pub fn send(&self, request: &Request) -> Result<Response, Error> {
        let attempts = if request.retry { self.settings.retries.saturating_add(1) } else { 1 };
        let deadline = self.settings.deadline;
        let mut backoff = self.settings.first_backoff;
        let mut last_problem = String::new();
        let secrets = secrets_of(request, &self.settings.proxies);
        for attempt in 1..=attempts {
            if let Some(deadline) = deadline.filter(Deadline::passed) {
                return Err(self.past_deadline(request, &deadline, &last_problem));
            }
            let runtime = self.runtime.as_ref().expect("the runtime lives until drop");
            match runtime.block_on(self.by_deadline(self.once(request, &secrets))) {
                Ok(response)
                    if response.status.is_server_error()
                        || response.status == reqwest::StatusCode::TOO_MANY_REQUESTS =>
                {
                    last_problem = format!("HTTP {}: {}", response.status, redact::server_message(&response.body));
                    if attempt == attempts {
                        return Err(self.unavailable(request, last_problem, attempts));
                    }
                }
                Ok(response) => return Ok(response),
                Err(Attempt::Final(error)) => return Err(error),
                Err(Attempt::Retryable(problem)) => last_problem = problem,
            }
            if let Some(deadline) = deadline.filter(|d| d.passed() || (attempt < attempts && d.remaining() <= backoff))
            {
                return Err(self.past_deadline(request, &deadline, &last_problem));
            }
            if attempt < attempts {
                std::thread::sleep(backoff);
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
        Err(self.unavailable(request, last_problem, attempts))
    }

    /// Sends `request` once with a body streamed from `body` (a streamed body cannot be replayed, so nothing is
    /// retried), bounded by `timeout` instead of the client's bound of one request. The reader runs on its own
    /// thread; its read error fails the request and is what the error says ([`Error::Input`], classed by its
    /// kind). An answer over [`MAX_BODY`] bytes is an error, as for [`Http::send`].
    pub fn send_reader(
        &self,
        request: &Request,
        mut body: Box<dyn std::io::Read + Send>,
        timeout: Duration,
    ) -> Result<Response, Error> {
        let (sender, receiver) = tokio::sync::mpsc::channel::<Result<bytes::Bytes, std::io::Error>>(4);
        let reader = std::thread::spawn(move || -> Result<(), std::io::Error> {
            let mut buffer = vec![0u8; 1 << 20];
            loop {
                match body.read(&mut buffer) {
                    Ok(0) => return Ok(()),
                    Ok(n) => {
                        if sender.blocking_send(Ok(bytes::Bytes::copy_from_slice(&buffer[..n]))).is_err() {
                            return Ok(());
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        // The request stream fails with a copy; the original, with its kind, is what is reported.
                        let _ = sender.blocking_send(Err(std::io::Error::new(e.kind(), e.to_string())));
                        return Err(e);
                    }
                }
            }
        });
        let stream = reqwest::Body::wrap_stream(tokio_stream::wrappers::ReceiverStream::new(receiver));
        let runtime = self.runtime.as_ref().expect("the runtime lives until drop");
        let secrets = secrets_of(request, &self.settings.proxies);
        let timeout = crate::deadline::bound(self.settings.deadline.as_ref(), timeout);
        let result = runtime.block_on(self.by_deadline(async {
            let mut builder =
                self.client.request(request.method.clone(), request.url.clone()).timeout(timeout).body(stream);
            for (name, value) in &request.headers {
                builder = builder.header(name, value);
            }
            let response = builder.send().await.map_err(|e| self.failure(&e, &secrets))?;
            self.bounded(request, response, &secrets).await
        }));
        // An answer that came before the body was all taken (Glance's 413 over its size cap, sent mid-body with
        // the connection left open) stands: the feeding thread may be blocked on a channel nothing drains any more,
        // so it is not waited for (it ends when the connection is dropped).
        let early = matches!(&result, Ok(response) if !response.status.is_success()) && !reader.is_finished();
        let read = if early {
            Ok(())
        } else {
            reader.join().unwrap_or_else(|_| Err(std::io::Error::other("the reading thread panicked")))
        };
        match (result, read) {
            (_, Err(source)) => Err(Error::Input { what: request.what.clone(), source }),
            (Ok(response), Ok(())) if response.status.is_server_error() => Err(self.unavailable(
                request,
                format!("HTTP {}: {}", response.status, redact::server_message(&response.body)),
                1,
            )),
            (Ok(response), Ok(())) => Ok(response),
            (Err(Attempt::Final(error)), Ok(())) => Err(error),
            (Err(Attempt::Retryable(problem)), Ok(())) => match self.settings.deadline.filter(Deadline::passed) {
                Some(deadline) => Err(self.past_deadline(request, &deadline, &problem)),
                None => Err(self.unavailable(request, problem, 1)),
            },
        }
    }

    /// `attempt`, ended when the deadline passes first (whatever the client's own timeouts would let it do).
    async fn by_deadline(
        &self,
        attempt: impl std::future::Future<Output = Result<Response, Attempt>>,
    ) -> Result<Response, Attempt> {
        match self.settings.deadline {
            None => attempt.await,
            Some(deadline) => tokio::time::timeout_at(deadline.at().into(), attempt)
                .await
                .unwrap_or_else(|_| Err(Attempt::Retryable(String::new()))),
        }
    }

    fn past_deadline(&self, request: &Request, deadline: &Deadline, last_problem: &str) -> Error {
        let problem = if last_problem.is_empty() {
            format!("{deadline} passed while waiting for its answer")
        } else {
            format!("{deadline} passed (last: {last_problem})")
        };
        Error::Unavailable {
            what: request.what.clone(),
            service: self.service.clone(),
            problem,
            hint: Some(crate::deadline::HINT.into()),
        }
    }

    fn unavailable(&self, request: &Request, problem: String, attempts: u32) -> Error {
        let problem = if attempts > 1 { format!("{problem} (after {attempts} attempts)") } else { problem };
        Error::Unavailable { what: request.what.clone(), service: self.service.clone(), problem, hint: None }
    }

    async fn once(&self, request: &Request, secrets: &redact::Secrets) -> Result<Response, Attempt> {
        let timeout = crate::deadline::bound(self.settings.deadline.as_ref(), self.settings.timeout);
        let mut builder = self.client.request(request.method.clone(), request.url.clone()).timeout(timeout);
        for (name, value) in &request.headers {
            builder = builder.header(name, value);
        }
        if let Some(body) = &request.body {
            // The copy handed to the client is wiped when the client lets go of it.
            builder = builder.body(bytes::Bytes::from_owner(Wiped(body.clone())));
        }
        let response = builder.send().await.map_err(|e| self.failure(&e, secrets))?;
        self.bounded(request, response, secrets).await
    }

    /// Reads `response` whole, refusing (finally) a body over [`MAX_BODY`] bytes: by its Content-Length before
    /// any of it is read, else as soon as the bound is passed.
    /// The body of an answer that is not a success is scrubbed of `secrets` here, whole, before anything bounds
    /// or shows it (a bound first could keep a secret's head).
    async fn bounded(
        &self,
        request: &Request,
        mut response: reqwest::Response,
        secrets: &redact::Secrets,
    ) -> Result<Response, Attempt> {
        let status = response.status();
        let headers = response.headers().clone();
        // An answer that is not a success is classed by its status whatever its length: its body is only ever
        // quoted, so one over the bound is cut, not refused (a 403 with a huge error page is still a refusal).
        let cut = !status.is_success();
        let limit = if cut { MAX_BODY } else { request.max_body };
        if !cut && response.content_length().is_some_and(|n| n > limit as u64) {
            return Err(Attempt::Final(self.too_large(request)));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| self.failure(&e, secrets))? {
            if body.len() + chunk.len() > limit {
                if cut {
                    body.extend_from_slice(&chunk[..limit - body.len()]);
                    break;
                }
                return Err(Attempt::Final(self.too_large(request)));
            }
            body.extend_from_slice(&chunk);
        }
        if !status.is_success() {
            body = secrets.scrub_bytes(&body);
        }
        Ok(Response { status, headers, body, secrets: secrets.clone() })
    }

    fn too_large(&self, request: &Request) -> Error {
        Error::TooLarge { what: request.what.clone(), service: self.service.clone(), limit: request.max_body }
    }

    fn failure(&self, error: &reqwest::Error, secrets: &redact::Secrets) -> Attempt {
        let chain = secrets.scrub(&redact::error_chain(error));
        if let Some(tls) = tls_problem(error) {
            return Attempt::Final(Error::Tls { service: self.service.clone(), problem: secrets.scrub(&tls) });
        }
        Attempt::Retryable(chain)
    }
}

/// The reqwest client for `settings`: trusting the platform's roots plus the settings' CAs, or when not
/// `platform_roots`, the settings' CAs only (none: no TLS at all).
fn client(settings: &HttpSettings, platform_roots: bool) -> Result<reqwest::Client, Error> {
    let builder = reqwest::Client::builder()
        .connect_timeout(settings.timeout)
        .timeout(settings.timeout)
        .redirect(reqwest::redirect::Policy::none());
    // The proxies come from the settings (the command line reads the environment), never from reqwest itself.
    let mut builder = settings.proxies.apply(builder).map_err(|e| Error::Config(e.to_string()))?;
    for path in &settings.ca_files {
        builder = builder.tls_certs_merge(read_pem_certs(path)?);
    }
    for dir in &settings.ca_dirs {
        let entries = std::fs::read_dir(dir).map_err(|e| file_error("CA directory", dir, e))?;
        let mut paths: Vec<PathBuf> =
            entries.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.is_file()).collect();
        paths.sort();
        for path in paths {
            builder = builder.tls_certs_merge(read_pem_certs(&path)?);
        }
    }
    if let Some((cert, key)) = &settings.client_identity {
        let mut pem = read_file(cert, "client certificate")?;
        pem.extend_from_slice(b"\n");
        pem.extend_from_slice(&read_file(key, "client key")?);
        let identity = reqwest::Identity::from_pem(&pem)
            .map_err(|e| Error::Config(format!("client certificate `{}`: {e}", cert.display())))?;
        builder = builder.identity(identity);
    }
    if settings.insecure_skip_verify {
        builder = builder.tls_danger_accept_invalid_certs(true);
    }
    if !platform_roots {
        builder = builder.tls_certs_only([]);
    }
    builder.build().map_err(|e| Error::Config(format!("setting up the HTTPS client: {}", redact::error_chain(&e))))
}

impl Drop for Http {
    /// A client shared with async code (`volume serve` keeps one in its settings) may be dropped on a runtime
    /// thread, where dropping a runtime panics; shutting it down in the background is allowed anywhere.
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// The secrets a header carries: none for a [`PUBLIC_HEADERS`] one; for any other, its credential, which also
/// stays a secret of the command beyond this request ([`redact::hold_all`]): no server text the command shows
/// may quote it.
fn header_secrets(name: &str, value: &str) -> redact::Secrets {
    let mut credentials = redact::Secrets::new();
    if PUBLIC_HEADERS.iter().any(|public| name.eq_ignore_ascii_case(public)) {
        return credentials;
    }
    // What only this request carries: names removed where quoted whole, and its signature.
    let mut names = redact::Secrets::new();
    match value.split_once(' ') {
        // A signature's `Credential=…, SignedHeaders=…, Signature=…`: S3 and KMS quote each value on its own;
        // the signature is the secret, the rest names (an access key id, a date, header names).
        Some((_, parameters)) if parameters.contains("Signature=") => {
            names.add_name(value.as_bytes());
            for part in parameters.split([',', ' ']) {
                if let Some((name, value)) = part.split_once('=') {
                    match name {
                        // Not held beyond the request: each request has its own, and a long-running `volume
                        // serve` would gather them for ever.
                        "Signature" => names.add(value.as_bytes()),
                        _ => names.add_name(value.as_bytes()),
                    }
                }
            }
        }
        // `Bearer TOKEN`, `Basic BASE64(user:password)`: the credential alone is what a server quotes (and, for
        // basic credentials, what the base64 decodes to).
        Some((_, credential)) => {
            credentials.add_text(credential);
            names.add_name(value.as_bytes());
        }
        // `X-Vault-Token`, `X-Auth-Token`, `X-Amz-Security-Token`, IMDS's session token.
        None => credentials.add_text(value),
    }
    redact::hold_all(&credentials);
    credentials.extend(&names);
    credentials
}

/// The request's secrets as it is sent: every header's ([`header_secrets`]), and its body's: the strings of a
/// JSON body ([`redact::Secrets::add_json`]), the values of a form ([`redact::Secrets::add_form`]), any other
/// body of at most [`MAX_RAW_SECRET_BODY`] bytes whole. Registering twice changes nothing.
fn secrets_of(request: &Request, proxies: &crate::proxy::Proxies) -> redact::Secrets {
    let mut secrets = request.secrets.clone();
    for secret in proxies.secrets() {
        secrets.add_text(&secret);
    }
    // Headers pushed onto the request without [`Request::header`] (a signer's `Authorization` and
    // `X-Amz-Security-Token`) are secrets as much as the others.
    for (name, value) in &request.headers {
        secrets.extend(&header_secrets(name, value));
    }
    let Some(body) = &request.body else { return secrets };
    let form = request.headers.iter().any(|(name, value)| {
        name.eq_ignore_ascii_case("content-type") && value.starts_with("application/x-www-form-urlencoded")
    });
    if let Ok(mut value) = serde_json::from_slice::<serde_json::Value>(body) {
        secrets.add_json(&value);
        wipe_strings(&mut value);
    } else if form && let Ok(text) = std::str::from_utf8(body) {
        // STS's `Action=AssumeRoleWithWebIdentity&…&WebIdentityToken=…`, which its errors quote.
        secrets.add_form(text);
    } else if body.len() <= MAX_RAW_SECRET_BODY {
        // A body of its own kind (an object stored, a ciphertext): a server quoting it shows none of it.
        secrets.add(body);
    }
    secrets
}

/// Longest body that is neither JSON nor a form registered as a secret whole (a stored object, a ciphertext).
const MAX_RAW_SECRET_BODY: usize = 64 << 10;

/// Overwrites the strings of a parsed copy of a body before it is dropped (best effort).
fn wipe_strings(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::String(text) => zeroize::Zeroize::zeroize(text),
        serde_json::Value::Array(items) => items.iter_mut().for_each(wipe_strings),
        serde_json::Value::Object(map) => map.values_mut().for_each(wipe_strings),
        _ => {}
    }
}

/// A request body that is wiped when the last reference to it is dropped.
struct Wiped(Zeroizing<Vec<u8>>);

impl AsRef<[u8]> for Wiped {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

enum Attempt {
    Retryable(String),
    Final(Error),
}

/// A local file the client needs could not be read: classed by why (a missing one is "not found", 5).
pub fn file_error(what: &str, path: &std::path::Path, source: std::io::Error) -> Error {
    Error::File { what: what.to_owned(), path: path.display().to_string(), source, hint: None }
}

fn read_file(path: &std::path::Path, what: &str) -> Result<crate::crypto::SecretBytes, Error> {
    match crate::bounded::read_regular(path, MAX_BODY as u64) {
        Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
            Err(Error::Config(format!("{what} `{}`: not a regular file of at most 1 MiB", path.display())))
        }
        read => read.map_err(|e| file_error(what, path, e)),
    }
}

fn read_pem_certs(path: &std::path::Path) -> Result<Vec<reqwest::Certificate>, Error> {
    let pem = read_file(path, "CA certificate")?;
    let certs = reqwest::Certificate::from_pem_bundle(&pem)
        .map_err(|e| Error::Config(format!("CA certificate `{}`: not PEM ({e})", path.display())))?;
    if certs.is_empty() {
        return Err(Error::Config(format!("CA certificate `{}`: holds no PEM certificate", path.display())));
    }
    Ok(certs)
}

fn tls_problem(error: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(current) = cause {
        if let Some(tls) = current.downcast_ref::<rustls::Error>() {
            return Some(tls.to_string());
        }
        if let Some(io) = current.downcast_ref::<std::io::Error>()
            && let Some(tls) = io.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>())
        {
            return Some(tls.to_string());
        }
        cause = current.source();
    }
    // reqwest may carry rustls's error boxed in a type of its own (hyper-util's connect error), where the
    // downcasts above do not reach it; rustls's words are stable enough to recognise.
    let chain = redact::error_chain(error);
    let at = chain.find("invalid peer certificate")?;
    Some(chain[at..].to_owned())
}

#[cfg(test)]
mod tests {
    use super::{Error, Http, HttpSettings, MAX_BODY, Request};
    use crate::exit::{Classify, ExitStatus};
    use std::io::{Read, Write};
    use std::time::Duration;

    /// A one-connection HTTP/1.1 server on loopback: it reads the request until `complete` says it has all of it
    /// (or the client gives up), then writes what `respond` makes of it and closes. Returns its base URL.
    fn serve_once(
        complete: fn(&[u8]) -> bool,
        respond: impl FnOnce(Vec<u8>) -> Vec<u8> + Send + 'static,
    ) -> (String, std::thread::JoinHandle<()>) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let server = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let mut seen = Vec::new();
            let mut buffer = [0u8; 1 << 16];
            while !complete(&seen) {
                match stream.read(&mut buffer) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => seen.extend_from_slice(&buffer[..n]),
                }
            }
            let _ = stream.write_all(&respond(seen));
        });
        (base, server)
    }

    /// [`serve_once`] for a request with a chunked body, answered with `answer`.
    fn answer_once(answer: Vec<u8>) -> (String, std::thread::JoinHandle<()>) {
        serve_once(|seen| seen.ends_with(b"0\r\n\r\n"), move |_| answer)
    }

    /// Whether `seen` holds a request's head and the whole body its Content-Length announces.
    fn has_whole_body(seen: &[u8]) -> bool {
        let Some(end) = seen.windows(4).position(|w| w == b"\r\n\r\n") else { return false };
        let head = String::from_utf8_lossy(&seen[..end]).to_ascii_lowercase();
        let length =
            head.lines().find_map(|l| l.strip_prefix("content-length:")).map_or(0, |n| n.trim().parse().unwrap());
        seen.len() >= end + 4 + length
    }

    /// [`serve_once`] answering `status` with the whole request it received (headers and body) as its body, as an
    /// echo service or a gateway quoting the request does.
    fn echo_once(status: u16) -> (String, std::thread::JoinHandle<()>) {
        serve_once(has_whole_body, move |seen| {
            let head = format!("HTTP/1.1 {status} Echo\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", seen.len());
            [head.as_bytes(), &seen].concat()
        })
    }

    fn upload(base: &str, data: Box<dyn Read + Send>) -> Result<super::Response, Error> {
        let settings = HttpSettings { retries: 0, ..HttpSettings::default() };
        let http = Http::new("Test", base, settings).unwrap();
        let request = Request::new(reqwest::Method::PUT, format!("{base}/upload").parse().unwrap(), "uploading x");
        http.send_reader(&request, data, Duration::from_secs(20))
    }

    /// An answer to a streamed upload over the bound is an error (it used to be cut at 1 MiB and returned as if
    /// whole), whether its length is announced or not; one within the bound arrives whole.
    #[test]
    fn a_streamed_upload_refuses_an_answer_over_the_bound() {
        let big = vec![b'x'; 2 * MAX_BODY];
        let announced = [format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", big.len()).as_bytes(), &big].concat();
        let unannounced = [b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n".as_slice(), &big].concat();
        for answer in [announced, unannounced] {
            let (base, server) = answer_once(answer);
            let error = upload(&base, Box::new(std::io::Cursor::new(vec![1u8; 1000]))).unwrap_err();
            assert!(matches!(error, Error::TooLarge { .. }), "{error:?}");
            assert!(error.to_string().contains(&format!("over the {MAX_BODY}-byte limit")), "{error}");
            // Over-size is bad input, as the exit table classes it (it was 1, "unexpected answer").
            assert_eq!(error.status(), ExitStatus::InvalidInput);
            server.join().unwrap();
        }
        let fits = vec![b'y'; MAX_BODY];
        let answer = [format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", fits.len()).as_bytes(), &fits].concat();
        let (base, server) = answer_once(answer);
        let response = upload(&base, Box::new(std::io::Cursor::new(vec![1u8; 1000]))).unwrap();
        assert!(response.body == fits);
        server.join().unwrap();
    }

    /// A local read error of what is uploaded is said as such and classed by its kind (it was a configuration
    /// error, exit 3).
    #[test]
    fn a_streamed_uploads_read_error_is_a_local_input_error() {
        struct Failing(usize);
        impl Read for Failing {
            fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
                if self.0 == 0 {
                    return Err(std::io::Error::other("the disk went away"));
                }
                self.0 -= 1;
                buffer[..512].fill(7);
                Ok(512)
            }
        }
        for (kind, status) in [(None, ExitStatus::Failure), (Some(std::io::ErrorKind::NotFound), ExitStatus::NotFound)]
        {
            let (base, server) = answer_once(b"HTTP/1.1 204 No Content\r\n\r\n".to_vec());
            let data: Box<dyn Read + Send> = match kind {
                None => Box::new(Failing(3)),
                Some(kind) => Box::new(std::io::Cursor::new(vec![0u8; 10]).chain(KindError(kind))),
            };
            let error = upload(&base, data).unwrap_err();
            assert!(matches!(error, Error::Input { .. }), "{error:?}");
            assert!(error.to_string().starts_with("uploading x: reading what is sent: "), "{error}");
            assert_eq!(error.status(), status);
            server.join().unwrap();
        }
    }

    struct KindError(std::io::ErrorKind);
    impl Read for KindError {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(self.0.into())
        }
    }

    /// A server quoting the request (token header, JSON plaintext, a presigned URL's signature) in a refusal,
    /// a 5xx and a 2xx that is not JSON: none of the secrets' forms reaches the answer's body or an error.
    #[test]
    fn secrets_a_server_echoes_never_reach_an_answer_or_an_error() {
        use base64::Engine as _;
        let passphrase = "correct horse battery";
        let encoded = base64::engine::general_purpose::STANDARD.encode(passphrase);
        let forbidden = [passphrase, encoded.as_str(), "hvs.EchoedToken42", "Sig0123456789abcdef", "correct%20horse"];
        for status in [403u16, 500, 200] {
            let (base, server) = echo_once(status);
            let settings = HttpSettings { retries: 0, ..HttpSettings::default() };
            let http = Http::new("Test", &base, settings).unwrap();
            let url = format!("{base}/v1/transit/encrypt/k?X-Amz-Signature=Sig0123456789abcdef&p=correct%20horse");
            let request = Request::new(reqwest::Method::POST, url.parse().unwrap(), "encrypting")
                .header("X-Vault-Token", "hvs.EchoedToken42")
                .json(&serde_json::json!({"plaintext": encoded}));
            let shown = match http.send(&request) {
                Ok(response) if status == 200 => response.json("encrypting", "Test").unwrap_err().to_string(),
                Ok(response) => String::from_utf8_lossy(&response.body).into_owned(),
                Err(error) => error.to_string(),
            };
            assert!(shown.contains("REDACTED"), "{shown}");
            for secret in forbidden {
                assert!(!shown.contains(secret), "{status}: {secret} in {shown}");
            }
            server.join().unwrap();
        }
    }

    /// Headers a signer pushes onto a request after it is built (SigV4's `Authorization` and
    /// `X-Amz-Security-Token`) and a form body (STS's `WebIdentityToken`) are secrets as much as the others: a
    /// server quoting the request with JSON escapes (`\/`, `\uXXXX`) or percent-encoding shows none of them.
    #[test]
    fn headers_a_signer_adds_and_form_bodies_are_scrubbed_in_every_spelling() {
        let session = "IQoJb3JpZ2luX2VjE/Session+Token=42";
        let signature = "3f1c9e0b7a5d2e4f6a8b0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f";
        let jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJwb2QifQ.c2lnbmF0dXJl/+";
        for spelling in ["slash", "unicode", "percent"] {
            let (base, server) = serve_once(has_whole_body, move |seen| {
                let text = String::from_utf8_lossy(&seen).into_owned();
                let quoted = match spelling {
                    "slash" => serde_json::Value::String(text).to_string().replace('/', "\\/"),
                    "unicode" => {
                        let units: String = text.encode_utf16().map(|u| format!("\\u{u:04x}")).collect();
                        format!("\"{units}\"")
                    }
                    _ => format!("\"{}\"", text.bytes().map(|b| format!("%{b:02X}")).collect::<String>()),
                };
                let body = format!("{{\"message\":{quoted}}}");
                let head = format!("HTTP/1.1 400 Echo\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len());
                [head.into_bytes(), body.into_bytes()].concat()
            });
            let http = Http::new("Test", &base, HttpSettings { retries: 0, ..HttpSettings::default() }).unwrap();
            let mut request = Request::new(reqwest::Method::POST, format!("{base}/").parse().unwrap(), "x")
                .header("Content-Type", "application/x-www-form-urlencoded");
            let form = format!(
                "Action=AssumeRoleWithWebIdentity&WebIdentityToken={}",
                jwt.replace('/', "%2F").replace('+', "%2B")
            );
            request.body = Some(zeroize::Zeroizing::new(form.into_bytes()));
            request.headers.push(("X-Amz-Security-Token".into(), session.into()));
            request.headers.push((
                "Authorization".into(),
                format!("AWS4-HMAC-SHA256 Credential=AKIA/20261129/us-east-1/sts/aws4_request, SignedHeaders=host, Signature={signature}"),
            ));
            let response = http.send(&request).unwrap();
            let shown = String::from_utf8_lossy(&response.body).into_owned();
            assert!(shown.contains("REDACTED"), "{spelling}: {shown}");
            for secret in [session, signature, jwt] {
                let mut probe = crate::redact::Secrets::new();
                probe.add(secret.as_bytes());
                assert!(!probe.found_in(shown.as_bytes()), "{spelling}: {secret} in {shown}");
            }
            serde_json::from_slice::<serde_json::Value>(&response.body).expect("the scrubbed body is still JSON");
            server.join().unwrap();
        }
    }

    /// A server dripping its answer is cut at the deadline, not after retries × the per-request timeout, and the
    /// error says the deadline passed.
    #[test]
    fn a_dripping_server_is_cut_at_the_deadline() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stopping = stop.clone();
        let server = std::thread::spawn(move || {
            listener.set_nonblocking(true).unwrap();
            let mut clients = Vec::new();
            while !stopping.load(std::sync::atomic::Ordering::Relaxed) {
                if let Ok((stream, _)) = listener.accept() {
                    clients.push(stream);
                }
                for client in &mut clients {
                    let _ = client.write_all(b"H");
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        });
        let settings = HttpSettings {
            timeout: Duration::from_secs(60),
            retries: 3,
            first_backoff: Duration::from_millis(100),
            deadline: Some(crate::deadline::Deadline::after(Duration::from_secs(2))),
            ..HttpSettings::default()
        };
        let http = Http::new("Test", &base, settings).unwrap();
        let started = std::time::Instant::now();
        let error =
            http.send(&Request::new(reqwest::Method::GET, format!("{base}/x").parse().unwrap(), "x")).unwrap_err();
        let took = started.elapsed();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        server.join().unwrap();
        assert!(took < Duration::from_secs(3), "{took:?}");
        assert!(error.to_string().contains("the overall deadline of 2 s passed"), "{error}");
        assert!(error.to_string().contains(&base), "names the server: {error}");
        assert_eq!(error.status(), ExitStatus::DeadlineExceeded);
        assert!(error.hint().unwrap().contains("--timeout"), "{:?}", error.hint());
    }

    /// A JSON body is held in a wiped buffer, byte for byte what the value serializes to.
    #[test]
    fn a_json_body_is_the_values_serialization() {
        let value = serde_json::json!({"plaintext": "c2VjcmV0", "n": 1});
        let request = Request::new(reqwest::Method::POST, "https://vault:8200/v1/x".parse().unwrap(), "x").json(&value);
        let body: &zeroize::Zeroizing<Vec<u8>> = request.body.as_ref().unwrap();
        assert_eq!(body.as_slice(), value.to_string().as_bytes());
    }

    /// Each part of a signed `Authorization` header is a secret of its own: storage quotes the signature alone.
    #[test]
    fn each_value_of_a_signature_header_is_registered() {
        let request = Request::new(reqwest::Method::POST, "https://kms:4566/".parse().unwrap(), "x").header(
            "Authorization",
            "AWS4-HMAC-SHA256 Credential=AKIAEXAMPLE42/20261127/us-east-1/kms/aws4_request, \
             SignedHeaders=host;x-amz-date, Signature=0123456789abcdef0123",
        );
        let shown = request.secrets().scrub(
            "<SignatureProvided>0123456789abcdef0123</SignatureProvided> \
                                             AKIAEXAMPLE42/20261127/us-east-1/kms/aws4_request",
        );
        assert_eq!(shown, "<SignatureProvided>REDACTED</SignatureProvided> REDACTED");
    }

    #[test]
    fn a_request_never_shows_its_headers_or_body() {
        let request = super::Request::new(reqwest::Method::POST, "https://vault:8200/v1/x".parse().unwrap(), "x")
            .header("X-Vault-Token", "hvs.secret-token")
            .json(&serde_json::json!({"secret_id": "secret-id-value"}));
        let shown = format!("{request:?}");
        assert!(!shown.contains("secret-token") && !shown.contains("secret-id-value"), "{shown}");
        assert!(shown.contains("X-Vault-Token"), "{shown}");
    }
}
