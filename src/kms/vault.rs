//! OpenBao / HashiCorp Vault: Transit ([`Wrapping`]) and KV version 2 ([`VersionedStore`]) over the HTTP API
//! (`/v1/…`), which both servers share.
//!
//! **Names.** A Transit key is named to [`Wrapping`] as `MOUNT/KEY` and a KV secret to [`VersionedStore`] as
//! `MOUNT/PATH`; the first segment is the mount, and a mount that itself contains `/` is written with `%2F`, as in
//! key references (`team%2Ftransit/capi`). [`transit_name`] and [`kv_name`] build them from a parsed
//! [`crate::kms::KeyRef`].
//!
//! **Authentication** ([`Auth`]) happens lazily on the first request: a token as given, a token file (refused when
//! group or world may read it), or a login (AppRole, JWT, Kubernetes) whose secret-id or JWT file is read again at
//! every login, so a projected service-account token that the kubelet rotates keeps working. A login token is
//! renewed (`auth/token/renew-self`) once two thirds of its lease have passed, and when renewal fails or the
//! lease cannot be extended far enough the client logs in again. A request refused with 403 under a login token
//! that is not brand new is tried once more after a fresh login (the token may have expired between checks).
//!
//! **Errors.** 403 and failed logins are [`Error::Denied`]; 404 (and Transit's "key not found") are
//! [`Error::NotFound`]; a KV check-and-set mismatch is [`Error::Conflict`]; a sealed server (503 after the retries
//! of [`Http`]) or an unreachable one is [`Error::Unavailable`] with a hint. Transit's 400 refusals are classed
//! by what they mean ([`refusal`]): a ciphertext whose authentication tag fails or whose key version does not
//! exist, or one older than the key's `min_decryption_version`, is [`Error::Refused`] (exit 16) with what to do.
//! Tokens, secret ids, JWTs and plaintexts never appear in an error: [`Http`] scrubs every form of them from the
//! server's text, which is also bounded and escaped.

use super::http::{Http, HttpSettings, Request};
use super::{DataKey, Error, Versioned, VersionedStore, Wrapping};
use crate::crypto::SecretBytes;
use crate::redact;
use base64::Engine as _;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The three ways to give a token, said whenever there is none (the Vault CLI's flags and variables, which
/// `cmd/` reads).
pub const NO_TOKEN_HINT: &str = "give a token one of three ways: set VAULT_TOKEN (or BAO_TOKEN), give \
                                 --vault-token-file FILE (mode 0600), or log in with --vault-auth \
                                 approle|jwt|kubernetes";

/// Largest token, secret id or JWT file read.
const MAX_CREDENTIAL: usize = 64 * 1024;

/// How the client gets its token.
#[derive(Clone)]
pub enum Auth {
    /// A token as given (`VAULT_TOKEN`).
    Token(SecretBytes),
    /// A token read from a file (`~/.vault-token`, `--vault-token-file`) that must not be group- or
    /// world-readable.
    TokenFile(PathBuf),
    /// AppRole login at `auth/MOUNT/login` with a role id and a secret id read from a file.
    AppRole {
        /// The auth method's mount (`approle`).
        mount: String,
        /// The role id (not a secret by itself).
        role_id: String,
        /// The file holding the secret id.
        secret_id_file: PathBuf,
    },
    /// JWT login at `auth/MOUNT/login` (`jwt`), e.g. with a projected Kubernetes service-account token.
    Jwt {
        /// The auth method's mount (`jwt`).
        mount: String,
        /// The role to log in as.
        role: String,
        /// The file holding the JWT; read again at every login.
        jwt_file: PathBuf,
    },
    /// Kubernetes login at `auth/MOUNT/login` (`kubernetes`) with a service-account token.
    Kubernetes {
        /// The auth method's mount (`kubernetes`).
        mount: String,
        /// The role to log in as.
        role: String,
        /// The file holding the service-account token; read again at every login.
        jwt_file: PathBuf,
    },
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Token(_) => f.write_str("Token([REDACTED])"),
            Self::TokenFile(path) => write!(f, "TokenFile({})", path.display()),
            Self::AppRole { mount, secret_id_file, .. } => {
                write!(f, "AppRole {{ mount: {mount}, secret_id_file: {} }}", secret_id_file.display())
            }
            Self::Jwt { mount, role, jwt_file } => {
                write!(f, "Jwt {{ mount: {mount}, role: {role}, jwt_file: {} }}", jwt_file.display())
            }
            Self::Kubernetes { mount, role, jwt_file } => {
                write!(f, "Kubernetes {{ mount: {mount}, role: {role}, jwt_file: {} }}", jwt_file.display())
            }
        }
    }
}

impl Auth {
    fn is_login(&self) -> bool {
        !matches!(self, Self::Token(_) | Self::TokenFile(_))
    }
}

/// Everything needed to talk to one Vault/OpenBao server, resolved by `cmd/`.
#[derive(Debug, Clone)]
pub struct VaultSettings {
    /// The server's address (`VAULT_ADDR`/`BAO_ADDR`), e.g. `https://127.0.0.1:8200`.
    pub address: String,
    /// The namespace (`VAULT_NAMESPACE`), sent as `X-Vault-Namespace`.
    pub namespace: Option<String>,
    /// TLS trust, client certificate, timeouts and retries.
    pub http: HttpSettings,
    /// How to get a token.
    pub auth: Auth,
}

struct Session {
    token: SecretBytes,
    /// When the token was obtained or last renewed.
    since: Instant,
    /// Its lease at that moment; `None` for a token whose lease is not known (a given token).
    lease: Option<Duration>,
    renewable: bool,
}

/// A client of one Vault/OpenBao server. Safe to share between threads (the session is behind a mutex).
pub struct Vault {
    http: Http,
    base: reqwest::Url,
    namespace: Option<String>,
    auth: Auth,
    session: Mutex<Option<Session>>,
}

impl std::fmt::Debug for Vault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vault").field("service", &self.http.service).field("auth", &self.auth).finish()
    }
}

/// The [`Wrapping`] name of Transit key `key` on `mount`.
pub fn transit_name(mount: &str, key: &str) -> String {
    format!("{}/{key}", mount.replace('/', "%2F"))
}

/// The [`VersionedStore`] name of KV secret `path` on `mount`.
pub fn kv_name(mount: &str, path: &str) -> String {
    format!("{}/{}", mount.replace('/', "%2F"), path.trim_matches('/'))
}

/// The API path that writes KV secret `name` ([`kv_name`]), for [`Vault::capabilities_self`].
pub fn kv_write_path(name: &str) -> Result<String, Error> {
    let (mount, secret) = split_name(name)?;
    Ok(format!("{mount}/data/{secret}"))
}

/// The API paths that rotate Transit key `name` ([`transit_name`]) and rewrap with it, for
/// [`Vault::capabilities_self`].
pub fn transit_rotate_and_rewrap_paths(name: &str) -> Result<(String, String), Error> {
    let (mount, key) = split_name(name)?;
    Ok((format!("{mount}/keys/{key}/rotate"), format!("{mount}/rewrap/{key}")))
}

/// Splits a `MOUNT/REST` name into the mount (with `%2F` decoded) and the rest.
fn split_name(name: &str) -> Result<(String, &str), Error> {
    let bad = |problem: &str| Error::BadReference { reference: name.to_owned(), problem: problem.to_owned() };
    let (mount, rest) = name.split_once('/').ok_or_else(|| bad("expected MOUNT/NAME"))?;
    let mount = mount.replace("%2F", "/").replace("%2f", "/");
    let fine = |segment: &str| {
        !segment.is_empty()
            && segment != "."
            && segment != ".."
            && segment.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
    };
    if !mount.split('/').all(fine) || !rest.split('/').all(fine) {
        return Err(bad("each path segment is letters, digits and -_."));
    }
    Ok((mount, rest))
}

/// What a request needs beyond the URL.
enum Body<'a> {
    None,
    Json(&'a Value),
}

impl Vault {
    /// A client for the server in `settings`. Connects nothing yet.
    pub fn new(settings: VaultSettings) -> Result<Self, Error> {
        let address = settings.address.trim_end_matches('/');
        let mut base = reqwest::Url::parse(address).map_err(|e| {
            Error::Config(format!("Vault address `{}`: {e} (expected e.g. https://vault:8200)", redact::url(address)))
        })?;
        let has_path = !matches!(base.path(), "" | "/") || base.query().is_some() || base.fragment().is_some();
        if address.chars().any(char::is_control)
            || !matches!(base.scheme(), "https" | "http")
            || base.host_str().is_none()
            || has_path
        {
            return Err(Error::Config(format!(
                "Vault address `{}`: expected http(s)://HOST[:PORT]",
                redact::url(address)
            )));
        }
        if !base.username().is_empty() || base.password().is_some() {
            return Err(Error::Config(format!(
                "Vault address `{}`: credentials do not belong in the address",
                redact::url(address)
            )));
        }
        let path = format!("{}/v1/", base.path().trim_end_matches('/'));
        base.set_path(&path);
        let http = Http::new("OpenBao/Vault", address, settings.http)?;
        let namespace = settings.namespace.filter(|n| !n.trim_matches('/').is_empty());
        if let Some(namespace) = &namespace
            && !namespace.bytes().all(|b| b.is_ascii_graphic())
        {
            return Err(Error::Config(format!(
                "Vault namespace `{}`: control characters, spaces or non-ASCII cannot be sent in a header",
                redact::server_message(namespace.as_bytes())
            )));
        }
        Ok(Self { http, base, namespace, auth: settings.auth, session: Mutex::new(None) })
    }

    /// How errors name the server, e.g. "OpenBao/Vault at https://127.0.0.1:8200".
    pub fn service(&self) -> &str {
        &self.http.service
    }

    /// The server, its namespace and where the credentials come from (never the token or a secret id), for `-v`.
    pub fn describe(&self) -> String {
        let namespace = self.namespace.as_deref().map(|n| format!(", namespace `{n}`")).unwrap_or_default();
        let credentials = match &self.auth {
            Auth::Token(_) => "the VAULT_TOKEN (or BAO_TOKEN) variable".to_owned(),
            Auth::TokenFile(path) => format!("the token file `{}`", path.display()),
            Auth::AppRole { mount, secret_id_file, .. } => {
                format!("an AppRole login at auth/{mount} (secret id in `{}`)", secret_id_file.display())
            }
            Auth::Jwt { mount, role, jwt_file } => {
                format!("a JWT login at auth/{mount} as role `{role}` (JWT in `{}`)", jwt_file.display())
            }
            Auth::Kubernetes { mount, role, jwt_file } => {
                format!("a Kubernetes login at auth/{mount} as role `{role}` (token in `{}`)", jwt_file.display())
            }
        };
        format!("{}{namespace}, credentials from {credentials}", self.service())
    }

    fn url(&self, path: &str) -> Result<reqwest::Url, Error> {
        self.base.join(path).map_err(|e| Error::Config(format!("Vault path `{path}`: {e}")))
    }

    fn request(
        &self,
        method: Method,
        path: &str,
        body: &Body<'_>,
        what: &str,
        token: Option<&[u8]>,
    ) -> Result<Request, Error> {
        let mut request = Request::new(method, self.url(path)?, what);
        if let Some(namespace) = &self.namespace {
            request = request.header("X-Vault-Namespace", namespace.trim_matches('/'));
        }
        if let Some(token) = token {
            let token = std::str::from_utf8(token)
                .ok()
                .filter(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_graphic()))
                .ok_or_else(|| Error::Config("the Vault token is empty or not printable ASCII".into()))?;
            request = request.header("X-Vault-Token", token);
        }
        request = request.header("X-Vault-Request", "true");
        if let Body::Json(value) = body {
            request = request.json(value);
        }
        Ok(request)
    }

    /// Sends one authenticated request; maps every non-2xx status to an error. `None` for 204.
    fn call(&self, method: Method, path: &str, body: Option<&Value>, what: &str) -> Result<Option<Value>, Error> {
        self.call_retrying(method, path, body, what, true)
    }

    /// [`Vault::call`] for a request that must not be sent twice after a transient failure (a key rotation, a
    /// check-and-set write: the first may have taken effect although its answer was lost).
    fn call_once(&self, method: Method, path: &str, body: Option<&Value>, what: &str) -> Result<Option<Value>, Error> {
        self.call_retrying(method, path, body, what, false)
    }

    fn call_retrying(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        what: &str,
        retry: bool,
    ) -> Result<Option<Value>, Error> {
        let body = body.map_or(Body::None, Body::Json);
        let (token, fresh) = self.token()?;
        let mut request = self.request(method.clone(), path, &body, what, Some(&token))?;
        request.retry = retry;
        let response = self.send(&request)?;
        if response.status == StatusCode::FORBIDDEN && self.auth.is_login() && !fresh {
            // The token may have expired since it was last checked: log in once more and try again.
            self.forget_session();
            let (token, _) = self.token()?;
            let mut request = self.request(method, path, &body, what, Some(&token))?;
            request.retry = retry;
            let response = self.send(&request)?;
            return self.answer(response, what);
        }
        self.answer(response, what)
    }

    fn send(&self, request: &Request) -> Result<super::http::Response, Error> {
        self.http.send(request).map_err(|error| match error {
            Error::Unavailable { what, service, problem, hint: None } => {
                let hint = if problem.contains("sealed") {
                    "unseal the server (`bao operator unseal` / `vault operator unseal`), then retry"
                } else {
                    "check the Vault address (VAULT_ADDR or --vault-addr) and that the server is up; then retry"
                };
                Error::Unavailable { what, service, problem, hint: Some(hint.into()) }
            }
            other => other,
        })
    }

    fn answer(&self, response: super::http::Response, what: &str) -> Result<Option<Value>, Error> {
        let service = self.service();
        let status = response.status;
        if status == StatusCode::NO_CONTENT {
            return Ok(None);
        }
        if status.is_success() {
            return response.json(what, service).map(Some);
        }
        let message = server_errors(&response.body);
        let lower = message.to_ascii_lowercase();
        let refused = refusal(&lower);
        Err(match status {
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
                Error::Denied { what: what.into(), service: service.into(), message }
            }
            StatusCode::NOT_FOUND => Error::NotFound { what: what.into(), service: service.into() },
            StatusCode::BAD_REQUEST if lower.contains("check-and-set") => {
                Error::Conflict { what: what.into(), expected: 0 }
            }
            StatusCode::BAD_REQUEST if lower.contains("not found") || lower.contains("no existing key") => {
                Error::NotFound { what: what.into(), service: service.into() }
            }
            StatusCode::BAD_REQUEST if refused.is_some() => Error::Refused(Box::new(super::Refusal {
                what: what.into(),
                service: service.into(),
                code: format!("HTTP {status}"),
                message,
                status: crate::exit::ExitStatus::Unauthenticated,
                hint: refused.map(str::to_owned),
            })),
            _ => Error::Protocol {
                what: what.into(),
                service: service.into(),
                problem: format!("HTTP {status}: {message}"),
            },
        })
    }

    fn forget_session(&self) {
        *self.session.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = None;
    }

    /// The token to use now (logging in or renewing as needed), and whether it was obtained by this call.
    fn token(&self) -> Result<(SecretBytes, bool), Error> {
        let mut session = self.session.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(current) = session.as_mut() {
            match current.lease {
                Some(lease) if self.auth.is_login() && current.since.elapsed() >= lease * 2 / 3 => {
                    let renewed = if current.renewable { self.renew(&current.token).ok() } else { None };
                    // Renewed far enough (at least a third of the original lease)? Otherwise log in again.
                    match renewed {
                        Some(new_lease) if new_lease >= lease / 3 => {
                            current.since = Instant::now();
                            current.lease = Some(new_lease);
                        }
                        _ => *session = None,
                    }
                }
                _ => {}
            }
        }
        if let Some(current) = session.as_ref() {
            return Ok((current.token.clone(), false));
        }
        let new = self.login()?;
        let token = new.token.clone();
        *session = Some(new);
        Ok((token, true))
    }

    fn renew(&self, token: &[u8]) -> Result<Duration, Error> {
        let what = "renewing the Vault token";
        let request =
            self.request(Method::POST, "auth/token/renew-self", &Body::Json(&json!({})), what, Some(token))?;
        let answer = self.answer(self.send(&request)?, what)?.unwrap_or_default();
        let seconds = answer.pointer("/auth/lease_duration").and_then(Value::as_u64).unwrap_or(0);
        Ok(Duration::from_secs(seconds))
    }

    fn login(&self) -> Result<Session, Error> {
        let (mount, body, what) = match &self.auth {
            Auth::Token(token) => {
                return Ok(Session { token: token.clone(), since: Instant::now(), lease: None, renewable: false });
            }
            Auth::TokenFile(path) => {
                let mut token = read_credential(path, "Vault token file").map_err(|error| match error {
                    Error::File { what, path, source, hint: None } if source.kind() == std::io::ErrorKind::NotFound => {
                        Error::File { what, path, source, hint: Some(NO_TOKEN_HINT) }
                    }
                    other => other,
                })?;
                let trimmed = token.trim_ascii().to_vec();
                token.fill(0);
                return Ok(Session {
                    token: SecretBytes::new(trimmed),
                    since: Instant::now(),
                    lease: None,
                    renewable: false,
                });
            }
            Auth::AppRole { mount, role_id, secret_id_file } => {
                let secret_id = read_credential(secret_id_file, "AppRole secret-id file")?;
                let secret_id = credential_text(&secret_id, secret_id_file, "AppRole secret-id file")?;
                (
                    mount,
                    json!({"role_id": role_id, "secret_id": secret_id}),
                    format!("AppRole login as role id `{}`", redact::server_message(role_id.as_bytes())),
                )
            }
            Auth::Jwt { mount, role, jwt_file } | Auth::Kubernetes { mount, role, jwt_file } => {
                let jwt = read_credential(jwt_file, "JWT file")?;
                let jwt = credential_text(&jwt, jwt_file, "JWT file")?;
                let kind = if matches!(self.auth, Auth::Jwt { .. }) { "JWT" } else { "Kubernetes" };
                (mount, json!({"role": role, "jwt": jwt}), format!("{kind} login as role `{role}` at auth/{mount}"))
            }
        };
        let path = format!("auth/{}/login", mount.trim_matches('/'));
        let request = self.request(Method::POST, &path, &Body::Json(&body), &what, None)?;
        let response = self.send(&request)?;
        let answer = match self.answer(response, &what) {
            Ok(answer) => answer.unwrap_or_default(),
            // A login that is refused for any reason the client can fix is a denial (Vault says 400 for a bad
            // JWT or secret id).
            Err(Error::Protocol { what, service, problem }) if problem.starts_with("HTTP 400") => {
                return Err(Error::Denied { what, service, message: problem });
            }
            Err(Error::NotFound { what, service }) => {
                return Err(Error::Denied {
                    what,
                    service,
                    message: format!("no auth method is mounted at auth/{mount}"),
                });
            }
            Err(other) => return Err(other),
        };
        let token = answer.pointer("/auth/client_token").and_then(Value::as_str).ok_or_else(|| Error::Protocol {
            what: what.clone(),
            service: self.service().into(),
            problem: "the login answer has no auth.client_token".into(),
        })?;
        let lease = answer.pointer("/auth/lease_duration").and_then(Value::as_u64).unwrap_or(0);
        let renewable = answer.pointer("/auth/renewable").and_then(Value::as_bool).unwrap_or(false);
        Ok(Session {
            token: SecretBytes::new(token.as_bytes().to_vec()),
            since: Instant::now(),
            lease: (lease > 0).then(|| Duration::from_secs(lease)),
            renewable,
        })
    }

    fn transit(&self, name: &str, operation: &str, body: &Value, verb: &str) -> Result<(Value, String), Error> {
        let (mount, key) = split_name(name)?;
        let what = format!("{verb} with Transit key `{mount}/{key}`");
        let answer = self.call(Method::POST, &format!("{mount}/{operation}/{key}"), Some(body), &what)?;
        Ok((answer.unwrap_or_default(), what))
    }

    fn field<'a>(&self, answer: &'a Value, pointer: &str, what: &str) -> Result<&'a str, Error> {
        answer.pointer(pointer).and_then(Value::as_str).ok_or_else(|| Error::Protocol {
            what: what.into(),
            service: self.service().into(),
            problem: format!("the answer has no {}", pointer.trim_start_matches('/').replace('/', ".")),
        })
    }

    fn decode(&self, text: &str, what: &str) -> Result<SecretBytes, Error> {
        base64::engine::general_purpose::STANDARD.decode(text).map(SecretBytes::new).map_err(|_| Error::Protocol {
            what: what.into(),
            service: self.service().into(),
            problem: "the plaintext is not base64".into(),
        })
    }

    /// The names under `prefix` of KV v2 mount `mount` (`LIST MOUNT/metadata/PREFIX`); sub-folders end with `/`.
    /// Nothing there is an empty list.
    pub fn kv_list(&self, mount: &str, prefix: &str) -> Result<Vec<String>, Error> {
        let (mount, _) = split_name(&kv_name(mount, "x"))?;
        let prefix = prefix.trim_matches('/');
        let what = format!("listing KV secrets under `{mount}/{prefix}`");
        let list = Method::from_bytes(b"LIST").map_err(|e| Error::Config(e.to_string()))?;
        match self.call(list, &format!("{mount}/metadata/{prefix}"), None, &what) {
            Ok(answer) => Ok(answer
                .unwrap_or_default()
                .pointer("/data/keys")
                .and_then(Value::as_array)
                .map(|keys| keys.iter().filter_map(Value::as_str).map(str::to_owned).collect())
                .unwrap_or_default()),
            Err(Error::NotFound { .. }) => Ok(Vec::new()),
            Err(other) => Err(other),
        }
    }

    /// The calling token's capabilities on each API path (`sys/capabilities-self`), e.g. `["read", "update"]`;
    /// lets a run check every permission it needs before it changes anything.
    pub fn capabilities_self(&self, paths: &[String]) -> Result<BTreeMap<String, Vec<String>>, Error> {
        let what = "checking the token's capabilities";
        let answer = self
            .call(Method::POST, "sys/capabilities-self", Some(&json!({ "paths": paths })), what)?
            .unwrap_or_default();
        let listed = answer.get("data").filter(|d| d.is_object()).unwrap_or(&answer);
        Ok(paths
            .iter()
            .map(|path| {
                let capabilities = listed
                    .get(path)
                    .and_then(Value::as_array)
                    .map(|list| list.iter().filter_map(Value::as_str).map(str::to_owned).collect())
                    .unwrap_or_default();
                (path.clone(), capabilities)
            })
            .collect())
    }

    /// Whether the server is sealed (`sys/seal-status`, which needs no token).
    pub fn sealed(&self) -> Result<bool, Error> {
        let what = "reading the seal status";
        let request = self.request(Method::GET, "sys/seal-status", &Body::None, what, None)?;
        let answer = self.answer(self.send(&request)?, what)?.unwrap_or_default();
        Ok(answer.get("sealed").and_then(Value::as_bool).unwrap_or(false))
    }
}

impl Wrapping for Vault {
    fn generate_data_key(&self, key: &str, bytes: usize) -> Result<DataKey, Error> {
        let bits = match bytes {
            32 => 256,
            64 => 512,
            16 => 128,
            _ => return Err(Error::Config(format!("Transit makes data keys of 16, 32 or 64 bytes, not {bytes}"))),
        };
        let (mut answer, what) = self.transit(key, "datakey/plaintext", &json!({"bits": bits}), "making a data key")?;
        let plaintext = self.field(&answer, "/data/plaintext", &what).and_then(|text| self.decode(text, &what));
        let wrapped = self.field(&answer, "/data/ciphertext", &what).map(str::to_owned);
        wipe_json(&mut answer);
        Ok(DataKey { plaintext: plaintext?, wrapped: wrapped? })
    }

    fn wrap(&self, key: &str, plaintext: &[u8]) -> Result<String, Error> {
        let encoded = zeroize::Zeroizing::new(base64::engine::general_purpose::STANDARD.encode(plaintext));
        let (answer, what) = self.transit(key, "encrypt", &json!({"plaintext": encoded.as_str()}), "encrypting")?;
        Ok(self.field(&answer, "/data/ciphertext", &what)?.to_owned())
    }

    fn unwrap(&self, key: &str, wrapped: &str) -> Result<SecretBytes, Error> {
        let (mut answer, what) = self.transit(key, "decrypt", &json!({"ciphertext": wrapped}), "decrypting")?;
        let plaintext = self.field(&answer, "/data/plaintext", &what).and_then(|text| self.decode(text, &what));
        wipe_json(&mut answer);
        plaintext
    }

    fn rewrap(&self, key: &str, wrapped: &str) -> Result<String, Error> {
        let (answer, what) = self.transit(key, "rewrap", &json!({"ciphertext": wrapped}), "rewrapping")?;
        Ok(self.field(&answer, "/data/ciphertext", &what)?.to_owned())
    }

    /// Transit's `associated_data` (AES-GCM and ChaCha20-Poly1305 keys): base64 of the context's compact JSON.
    fn wrap_bound(&self, key: &str, plaintext: &[u8], context: &super::Context) -> Result<String, Error> {
        if context.is_empty() {
            return self.wrap(key, plaintext);
        }
        let encoded = zeroize::Zeroizing::new(base64::engine::general_purpose::STANDARD.encode(plaintext));
        let body = json!({"plaintext": encoded.as_str(), "associated_data": associated_data(context)});
        let (answer, what) = self.transit(key, "encrypt", &body, "encrypting")?;
        Ok(self.field(&answer, "/data/ciphertext", &what)?.to_owned())
    }

    fn unwrap_bound(&self, key: &str, wrapped: &str, context: &super::Context) -> Result<SecretBytes, Error> {
        if context.is_empty() {
            return self.unwrap(key, wrapped);
        }
        let body = json!({"ciphertext": wrapped, "associated_data": associated_data(context)});
        let (mut answer, what) = self.transit(key, "decrypt", &body, "decrypting")?;
        let plaintext = self.field(&answer, "/data/plaintext", &what).and_then(|text| self.decode(text, &what));
        wipe_json(&mut answer);
        plaintext
    }

    fn rotate_key(&self, key: &str) -> Result<(), Error> {
        let (mount, name) = split_name(key)?;
        let what = format!("rotating Transit key `{mount}/{name}`");
        self.call_once(Method::POST, &format!("{mount}/keys/{name}/rotate"), Some(&json!({})), &what)?;
        Ok(())
    }
}

/// Transit's `associated_data` for `context`: standard base64 of its compact JSON (names sorted), e.g. of
/// `{"cryptadm:layer":"sha256:…"}`.
pub fn associated_data(context: &super::Context) -> String {
    base64::engine::general_purpose::STANDARD.encode(serde_json::to_vec(context).expect("strings serialise"))
}

impl VersionedStore for Vault {
    /// A secret whose newest version was deleted reads as no fields at that version, so that a writer's
    /// check-and-set still names the right version.
    fn read(&self, path: &str) -> Result<Option<Versioned>, Error> {
        let (mount, secret) = split_name(path)?;
        let what = format!("reading KV secret `{mount}/{secret}`");
        let (token, _) = self.token()?;
        let request = self.request(Method::GET, &format!("{mount}/data/{secret}"), &Body::None, &what, Some(&token))?;
        let response = self.send(&request)?;
        if response.status == StatusCode::NOT_FOUND {
            // KV v2 answers 404 both for "never written" and "newest version deleted"; the latter carries metadata.
            let version = serde_json::from_slice::<Value>(&response.body)
                .ok()
                .and_then(|v| v.pointer("/data/metadata/version").and_then(Value::as_u64));
            return Ok(version.map(|version| Versioned { fields: BTreeMap::new(), version }));
        }
        if response.status == StatusCode::FORBIDDEN && self.auth.is_login() {
            // Same once-more-after-login rule as every other call.
            let answer = self.call(Method::GET, &format!("{mount}/data/{secret}"), None, &what);
            return match answer {
                Err(Error::NotFound { .. }) => Ok(None),
                other => self.versioned(other?.unwrap_or_default(), &what).map(Some),
            };
        }
        let answer = self.answer(response, &what)?.unwrap_or_default();
        self.versioned(answer, &what).map(Some)
    }

    fn write(&self, path: &str, fields: &BTreeMap<String, SecretBytes>, expected_version: u64) -> Result<u64, Error> {
        let (mount, secret) = split_name(path)?;
        let what = format!("writing KV secret `{mount}/{secret}`");
        let mut data = serde_json::Map::new();
        for (name, value) in fields {
            let text = std::str::from_utf8(value)
                .map_err(|_| Error::Config(format!("{what}: field `{name}` is not UTF-8 text")))?;
            data.insert(name.clone(), Value::String(text.to_owned()));
        }
        let mut body = json!({"options": {"cas": expected_version}, "data": Value::Object(data)});
        let answer = self.call_once(Method::POST, &format!("{mount}/data/{secret}"), Some(&body), &what);
        wipe_json(&mut body);
        let answer = match answer {
            Err(Error::Conflict { what, .. }) => return Err(Error::Conflict { what, expected: expected_version }),
            other => other?.unwrap_or_default(),
        };
        answer.pointer("/data/version").and_then(Value::as_u64).ok_or_else(|| Error::Protocol {
            what,
            service: self.service().into(),
            problem: "the answer has no data.version".into(),
        })
    }
}

impl Vault {
    fn versioned(&self, mut answer: Value, what: &str) -> Result<Versioned, Error> {
        let version =
            answer.pointer("/data/metadata/version").and_then(Value::as_u64).ok_or_else(|| Error::Protocol {
                what: what.into(),
                service: self.service().into(),
                problem: "not a KV version 2 secret (no data.metadata.version; is the mount KV v1?)".into(),
            })?;
        let deleted =
            answer.pointer("/data/metadata/deletion_time").and_then(Value::as_str).is_some_and(|t| !t.is_empty());
        let mut fields = BTreeMap::new();
        if !deleted && let Some(Value::Object(data)) = answer.pointer("/data/data") {
            for (name, value) in data {
                let bytes = match value {
                    Value::String(text) => text.as_bytes().to_vec(),
                    Value::Null => continue,
                    other => other.to_string().into_bytes(),
                };
                fields.insert(name.clone(), SecretBytes::new(bytes));
            }
        }
        wipe_json(&mut answer);
        Ok(Versioned { fields, version })
    }
}

/// Overwrites the strings of a JSON value that held secrets before it is dropped (best effort: serde_json's
/// intermediate buffers are not reached).
fn wipe_json(value: &mut Value) {
    match value {
        Value::String(text) => {
            let mut bytes = std::mem::take(text).into_bytes();
            zeroize::Zeroize::zeroize(&mut bytes);
        }
        Value::Array(items) => items.iter_mut().for_each(wipe_json),
        Value::Object(map) => map.values_mut().for_each(wipe_json),
        _ => {}
    }
}

/// What to do about a Transit 400 that refuses the ciphertext itself (its words, lower-cased), or `None` when
/// the answer is no such refusal. OpenBao and Vault say "cipher: message authentication failed" for a tag that
/// does not verify, "ciphertext or signature version is too new" for a version the key does not have, and
/// "… is disallowed by policy (too old)" below the key's `min_decryption_version`.
fn refusal(message: &str) -> Option<&'static str> {
    if message.contains("too old") || message.contains("disallowed by policy") {
        Some(
            "the ciphertext was made by a key version the key no longer decrypts (min_decryption_version was \
             raised): rewrap stored values before raising it (`cryptadm volume rewrap`), or seal the configuration \
             again (`cryptadm bootstrap seal`)",
        )
    } else if message.contains("message authentication failed") || message.contains("version is too new") {
        Some(
            "the ciphertext was not made by this Transit key (or was altered): check the key name and the \
             server, and that the stored value is the one written",
        )
    } else {
        None
    }
}

/// The server's `errors` array, joined and redacted; the raw body (redacted) when it has none.
fn server_errors(body: &[u8]) -> String {
    let errors = serde_json::from_slice::<Value>(body).ok().and_then(|v| {
        v.get("errors")
            .and_then(Value::as_array)
            .map(|errors| errors.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("; "))
    });
    match errors {
        Some(text) if !text.is_empty() => redact::server_message(text.as_bytes()),
        Some(_) => "no message".into(),
        None => redact::server_message(body),
    }
}

/// Reads a credential file, refusing one that group or others may read (as the Vault CLI's users expect of
/// `~/.vault-token`) or that is not a regular file. A token the kubelet projected into a pod is the exception
/// for reading (see [`kubelet_projected`]).
pub fn read_credential(path: &Path, what: &str) -> Result<Vec<u8>, Error> {
    use std::os::unix::fs::MetadataExt as _;
    let metadata = std::fs::metadata(path).map_err(|e| super::http::file_error(what, path, e))?;
    if !metadata.is_file() {
        return Err(Error::Config(format!("{what} `{}`: not a regular file", path.display())));
    }
    let tolerated = if kubelet_projected(path) { 0o044 } else { 0 };
    if metadata.mode() & 0o077 & !tolerated != 0 {
        return Err(Error::Config(format!(
            "{what} `{}`: group or others may access it (mode {:o}); chmod 600 it",
            path.display(),
            metadata.mode() & 0o777
        )));
    }
    let file = std::fs::File::open(path).map_err(|e| super::http::file_error(what, path, e))?;
    crate::crypto::secret::read_secret(file, MAX_CREDENTIAL)
        .map_err(|e| Error::Config(format!("{what} `{}`: {e}", path.display())))
}

/// Whether `path` is a file the kubelet wrote into a pod's volume (a service-account token, a projected
/// secret): its atomic-writer layout makes the name a symbolic link into the `..data/` generation directory. Such
/// files are 0644 unless the pod spec says otherwise (the automounted service-account token always is), nobody
/// in the pod can chmod them (the volume is read-only), and outside the pod only root reaches them (the
/// kubelet's pod directories are 0750 root). Refusing them would make `--vault-auth kubernetes` and web identity
/// fail in every stock pod, so read access for group and others is accepted there; write access never is.
fn kubelet_projected(path: &Path) -> bool {
    std::fs::read_link(path).is_ok_and(|target| target.starts_with("..data"))
}

fn credential_text<'a>(bytes: &'a [u8], path: &Path, what: &str) -> Result<&'a str, Error> {
    std::str::from_utf8(bytes.trim_ascii())
        .ok()
        .filter(|t| !t.is_empty())
        .ok_or_else(|| Error::Config(format!("{what} `{}`: empty or not text", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_into_mount_and_rest() {
        assert_eq!(split_name("transit/capi").unwrap(), ("transit".to_owned(), "capi"));
        assert_eq!(split_name("team%2Ftransit/capi").unwrap(), ("team/transit".to_owned(), "capi"));
        assert_eq!(split_name("kv/cryptadm/pvc-1").unwrap(), ("kv".to_owned(), "cryptadm/pvc-1"));
        assert_eq!(transit_name("team/transit", "k"), "team%2Ftransit/k");
        assert_eq!(kv_name("kv", "/cryptadm/v1/"), "kv/cryptadm/v1");
        for bad in ["transit", "transit/../x", "/k", "transit/a b", "transit/"] {
            assert!(split_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn addresses_are_checked_and_never_echo_credentials() {
        let settings = |address: &str| VaultSettings {
            address: address.into(),
            namespace: None,
            http: HttpSettings::default(),
            auth: Auth::Token(SecretBytes::new(b"s.x".to_vec())),
        };
        let vault = Vault::new(settings("https://127.0.0.1:8200/")).unwrap();
        assert_eq!(vault.url("transit/encrypt/k").unwrap().as_str(), "https://127.0.0.1:8200/v1/transit/encrypt/k");
        assert!(vault.service().contains("https://127.0.0.1:8200"));
        let error = Vault::new(settings("https://user:hunter2@vault:8200")).unwrap_err().to_string();
        assert!(!error.contains("hunter2"), "{error}");
        assert!(Vault::new(settings("vault:8200")).is_err());
        assert!(Vault::new(settings("ftp://vault")).is_err());
    }

    #[test]
    fn server_errors_are_joined_and_bounded() {
        assert_eq!(server_errors(br#"{"errors":["permission denied"]}"#), "permission denied");
        assert_eq!(server_errors(br#"{"errors":["a","b"]}"#), "a; b");
        assert_eq!(server_errors(br#"{"errors":[]}"#), "no message");
        assert!(server_errors(&vec![b'x'; 10_000]).len() < 1000);
    }

    #[test]
    fn debug_never_shows_a_token() {
        let auth = Auth::Token(SecretBytes::new(b"hvs.secret-token".to_vec()));
        assert!(!format!("{auth:?}").contains("secret-token"));
    }

    #[test]
    fn credential_files_must_be_private() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "hvs.abc\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let error = read_credential(&path, "Vault token file").unwrap_err().to_string();
        assert!(error.contains("chmod 600"), "{error}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(read_credential(&path, "Vault token file").unwrap(), b"hvs.abc\n");
    }

    /// The kubelet's atomic-writer layout: `token -> ..data/token`, `..data -> ..2026_11_27_…`, the file 0644.
    #[test]
    fn a_token_the_kubelet_projected_may_be_world_readable_but_not_writable() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let generation = dir.path().join("..2026_11_27_07_30_00.123456789");
        std::fs::create_dir(&generation).unwrap();
        std::fs::write(generation.join("token"), "eyJhbGciOiJSUzI1NiJ9.e30.c2ln\n").unwrap();
        std::os::unix::fs::symlink("..2026_11_27_07_30_00.123456789", dir.path().join("..data")).unwrap();
        let token = dir.path().join("token");
        std::os::unix::fs::symlink("..data/token", &token).unwrap();
        for (mode, accepted) in [(0o644, true), (0o640, true), (0o400, true), (0o646, false), (0o664, false)] {
            std::fs::set_permissions(generation.join("token"), std::fs::Permissions::from_mode(mode)).unwrap();
            assert_eq!(read_credential(&token, "JWT file").is_ok(), accepted, "mode {mode:o}");
        }
        // The same file reached by another link, or directly, is an operator's file: 0600 or refused.
        std::fs::set_permissions(generation.join("token"), std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(read_credential(&generation.join("token"), "JWT file").is_err());
        let elsewhere = dir.path().join("copy");
        std::os::unix::fs::symlink(generation.join("token"), &elsewhere).unwrap();
        assert!(read_credential(&elsewhere, "JWT file").is_err());
    }
}
