//! The HTTP(S) client every key-manager backend shares: TLS trust and client certificates from settings,
//! bounded response bodies, retries with backoff on transient failures, and errors that name the service
//! without a credential or a server's unbounded text in them.
//!
//! Backends are synchronous ([`Http::send`]); a current-thread tokio runtime lives inside, as in
//! `machineadm/remote.rs`. Call it from a plain thread or `spawn_blocking`, never from an async task.

use super::Error;
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
}

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
        Self { method, url, headers: Vec::new(), body: None, what: what.into(), retry: true }
    }

    /// Sent once, never again after a transient failure (see [`Request::retry`]).
    pub fn once(mut self) -> Self {
        self.retry = false;
        self
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: impl Into<String>) -> Self {
        self.headers.push((name.to_owned(), value.into()));
        self
    }

    /// Sets a JSON body (and its content type).
    pub fn json(mut self, body: &serde_json::Value) -> Self {
        // Written straight into a buffer that is wiped: no intermediate String keeps a copy.
        let mut bytes = Zeroizing::new(Vec::with_capacity(256));
        serde_json::to_writer(&mut *bytes, body).expect("a JSON value always serializes into memory");
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
    /// The body.
    pub body: Vec<u8>,
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
            problem: format!("not JSON ({e}): {}", redact::server_message(&self.body)),
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
    pub fn new(service: &str, base: &str, settings: HttpSettings) -> Result<Self, Error> {
        crate::oci::registry::tls::install_crypto_provider();
        let service = format!("{service} at {}", redact::url(base));
        let mut builder = reqwest::Client::builder()
            .connect_timeout(settings.timeout)
            .timeout(settings.timeout)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy();
        for path in &settings.ca_files {
            builder = builder.tls_certs_merge(read_pem_certs(path)?);
        }
        for dir in &settings.ca_dirs {
            let entries =
                std::fs::read_dir(dir).map_err(|e| Error::Config(format!("CA directory `{}`: {e}", dir.display())))?;
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
        let client = builder.build().map_err(|e| Error::Config(format!("setting up the HTTPS client: {e}")))?;
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
        let mut backoff = self.settings.first_backoff;
        let mut last_problem = String::new();
        for attempt in 1..=attempts {
            let runtime = self.runtime.as_ref().expect("the runtime lives until drop");
            match runtime.block_on(self.once(request)) {
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
        let result = runtime.block_on(async {
            let mut builder =
                self.client.request(request.method.clone(), request.url.clone()).timeout(timeout).body(stream);
            for (name, value) in &request.headers {
                builder = builder.header(name, value);
            }
            let response = builder.send().await.map_err(|e| self.failure(&e))?;
            self.bounded(request, response).await
        });
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
            (Err(Attempt::Retryable(problem)), Ok(())) => Err(self.unavailable(request, problem, 1)),
        }
    }

    fn unavailable(&self, request: &Request, problem: String, attempts: u32) -> Error {
        let problem = if attempts > 1 { format!("{problem} (after {attempts} attempts)") } else { problem };
        Error::Unavailable { what: request.what.clone(), service: self.service.clone(), problem, hint: None }
    }

    async fn once(&self, request: &Request) -> Result<Response, Attempt> {
        let mut builder = self.client.request(request.method.clone(), request.url.clone());
        for (name, value) in &request.headers {
            builder = builder.header(name, value);
        }
        if let Some(body) = &request.body {
            // The copy handed to the client is wiped when the client lets go of it.
            builder = builder.body(bytes::Bytes::from_owner(Wiped(body.clone())));
        }
        let response = builder.send().await.map_err(|e| self.failure(&e))?;
        self.bounded(request, response).await
    }

    /// Reads `response` whole, refusing (finally) a body over [`MAX_BODY`] bytes: by its Content-Length before
    /// any of it is read, else as soon as the bound is passed.
    async fn bounded(&self, request: &Request, mut response: reqwest::Response) -> Result<Response, Attempt> {
        let status = response.status();
        let headers = response.headers().clone();
        if response.content_length().is_some_and(|n| n > MAX_BODY as u64) {
            return Err(Attempt::Final(self.too_large(request)));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| self.failure(&e))? {
            if body.len() + chunk.len() > MAX_BODY {
                return Err(Attempt::Final(self.too_large(request)));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Response { status, headers, body })
    }

    fn too_large(&self, request: &Request) -> Error {
        Error::Protocol {
            what: request.what.clone(),
            service: self.service.clone(),
            problem: format!("the answer is over {MAX_BODY} bytes"),
        }
    }

    fn failure(&self, error: &reqwest::Error) -> Attempt {
        let chain = redact::error_chain(error);
        if let Some(tls) = tls_problem(error) {
            return Attempt::Final(Error::Tls { service: self.service.clone(), problem: tls });
        }
        Attempt::Retryable(chain)
    }
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

fn read_file(path: &std::path::Path, what: &str) -> Result<Vec<u8>, Error> {
    let metadata = std::fs::metadata(path).map_err(|e| Error::Config(format!("{what} `{}`: {e}", path.display())))?;
    if !metadata.is_file() || metadata.len() > MAX_BODY as u64 {
        return Err(Error::Config(format!("{what} `{}`: not a regular file of at most 1 MiB", path.display())));
    }
    std::fs::read(path).map_err(|e| Error::Config(format!("{what} `{}`: {e}", path.display())))
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

    /// A one-connection HTTP/1.1 server on loopback: it reads the request (up to its chunked body's last chunk, or
    /// until the client gives up), then writes `answer` and closes. Returns its base URL.
    fn answer_once(answer: Vec<u8>) -> (String, std::thread::JoinHandle<()>) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let server = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let mut seen = Vec::new();
            let mut buffer = [0u8; 1 << 16];
            while !seen.ends_with(b"0\r\n\r\n") {
                match stream.read(&mut buffer) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => seen.extend_from_slice(&buffer[..n]),
                }
            }
            let _ = stream.write_all(&answer);
        });
        (base, server)
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
            assert!(matches!(error, Error::Protocol { .. }), "{error:?}");
            assert!(error.to_string().contains(&format!("the answer is over {MAX_BODY} bytes")), "{error}");
            assert_eq!(error.status(), ExitStatus::Failure);
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

    /// A JSON body is held in a wiped buffer, byte for byte what the value serializes to.
    #[test]
    fn a_json_body_is_the_values_serialization() {
        let value = serde_json::json!({"plaintext": "c2VjcmV0", "n": 1});
        let request = Request::new(reqwest::Method::POST, "https://vault:8200/v1/x".parse().unwrap(), "x").json(&value);
        let body: &zeroize::Zeroizing<Vec<u8>> = request.body.as_ref().unwrap();
        assert_eq!(body.as_slice(), value.to_string().as_bytes());
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
