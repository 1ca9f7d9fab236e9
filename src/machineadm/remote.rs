//! Fetching what a `RemoteConfig` document points at: the built-in `file` and `https` providers, and
//! remote-configuration plugins run as executables.
//!
//! The proposal names the plugin `machineadm-remote-configuration-provider-<provider>` (no `plugin-` infix) and
//! meant go-plugin; cryptadm keeps the name and the search path of the passphrase plugins and speaks a plain exec
//! contract:
//!
//! - `machineadm-remote-configuration-provider-<provider> fetch <uri>` (the document's `spec.uri`, verbatim):
//!   the bytes of the configuration on stdout, nothing added or stripped; diagnostics on stderr.
//! - Exit 0: success. Exit 3: verb not supported. Exit 5: the configuration does not exist. Both are final;
//!   any other status, a timeout or a spawn failure is retried with backoff, as for the passphrase plugins.
//! - No stdin; at most [`MAX_REMOTE_BYTES`] of stdout (more is a final failure); the process group is killed
//!   at the deadline; the environment is the one the command line passes ([`RemoteSettings::plugin_env`]).
//!
//! What comes back is either a machineadm stream, processed in place of the RemoteConfig document, or plain
//! configuration, used as it is (the stream code decides; see `stream.rs`).

use super::Error;
use super::document::{MAX_STREAM_BYTES, RemoteConfig};
use super::provider::{PluginRun, ProviderSettings, SYSTEM_PLUGIN_DIRS, parse_file_uri, validate_provider_name};
use crate::crypto::SecretBytes;
use crate::interact::Interaction;
use crate::process::humanize;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

/// Executable name prefix of remote-configuration plugins.
pub const REMOTE_PLUGIN_PREFIX: &str = "machineadm-remote-configuration-provider-";
/// The provider that reads a local file (`file:///absolute/path`).
pub const BUILTIN_REMOTE_FILE: &str = "file";
/// The provider that fetches over HTTPS.
pub const BUILTIN_REMOTE_HTTPS: &str = "https";
/// Most bytes one fetch may return (the same bound as an input stream).
pub const MAX_REMOTE_BYTES: u64 = MAX_STREAM_BYTES;
/// How deep RemoteConfig documents may nest (a RemoteConfig in the input stream is at depth 1).
pub const MAX_REMOTE_DEPTH: usize = 4;
/// Most fetches while opening one stream.
pub const MAX_REMOTE_FETCHES: usize = 32;
/// Most redirects an HTTPS fetch follows.
const MAX_REDIRECTS: usize = 5;
/// Exit status by which a remote-configuration plugin says the configuration does not exist.
const EXIT_NOT_FOUND: i32 = 5;

/// How RemoteConfig documents are fetched.
#[derive(Debug, Clone, Default)]
pub struct RemoteSettings {
    /// Directories of extra CA certificates (`*.crt`, PEM) trusted besides the system roots.
    pub cert_dirs: Vec<PathBuf>,
    /// Allow `http://` URIs for the `https` provider (and redirects to them).
    pub allow_http: bool,
    /// Let a RemoteConfig that was itself fetched reach loopback and link-local addresses (the instance metadata
    /// service, local daemons); a RemoteConfig in the input stream always may.
    pub allow_local_targets: bool,
    /// The proxies of the `https` provider's fetches (`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`); empty: directly.
    pub proxies: crate::proxy::Proxies,
    /// The whole environment of remote-configuration plugins; `None` passes cryptadm's own.
    pub plugin_env: Option<Vec<(OsString, OsString)>>,
    /// The command's overall deadline: no fetch or pause between attempts outlives it.
    pub deadline: Option<crate::deadline::Deadline>,
}

impl RemoteSettings {
    /// Fetches the configuration `remote` points at. `fetched` says that the RemoteConfig document was itself
    /// fetched (it is not in the input stream): such a document is the fetched server's word, so it may not read
    /// a local file (a server would choose what of the machine goes into its configuration) and its HTTPS
    /// fetches may not reach loopback or link-local addresses unless [`RemoteSettings::allow_local_targets`].
    pub(super) fn fetch(
        &self,
        remote: &RemoteConfig,
        fetched: bool,
        providers: &ProviderSettings,
        ui: &dyn Interaction,
    ) -> Result<SecretBytes, Error> {
        validate_provider_name(&remote.provider)?;
        match remote.provider.as_str() {
            BUILTIN_REMOTE_FILE if fetched => Err(Error::FetchedFileRefused { uri: remote.uri.clone() }),
            BUILTIN_REMOTE_FILE => read_file(&remote.uri),
            BUILTIN_REMOTE_HTTPS => {
                let allow_local = !fetched || self.allow_local_targets;
                self.fetch_https(&remote.uri, allow_local, providers, ui)
            }
            provider if super::aws_remote::is_aws_source(provider) => {
                super::aws_remote::fetch(provider, &remote.uri, fetched, providers, ui)
            }
            provider => self.fetch_with_plugin(provider, &remote.uri, providers, ui),
        }
    }

    fn fetch_with_plugin(
        &self,
        provider: &str,
        uri: &str,
        providers: &ProviderSettings,
        ui: &dyn Interaction,
    ) -> Result<SecretBytes, Error> {
        let program = format!("{REMOTE_PLUGIN_PREFIX}{provider}");
        let path = providers.find_executable(&program)?.ok_or_else(|| Error::RemoteProviderNotFound {
            provider: provider.into(),
            program,
            system_dirs: SYSTEM_PLUGIN_DIRS.join(", "),
        })?;
        let run = PluginRun {
            family: "remote-configuration provider",
            max_stdout: MAX_REMOTE_BYTES as usize,
            not_found_status: Some(EXIT_NOT_FOUND),
            env: self.plugin_env.as_deref(),
        };
        providers.run_plugin_with_retries(&run, provider, &path, &["fetch", uri], ui).map_err(|failure| {
            if failure.too_large {
                Error::RemoteTooLarge { uri: uri.into(), limit: MAX_REMOTE_BYTES }
            } else if failure.not_found {
                Error::RemoteNotFound { uri: uri.into(), problem: failure.problem }
            } else {
                Error::RemoteFailed { uri: uri.into(), problem: failure.problem }
            }
        })
    }

    fn fetch_https(
        &self,
        uri: &str,
        allow_local: bool,
        providers: &ProviderSettings,
        ui: &dyn Interaction,
    ) -> Result<SecretBytes, Error> {
        let bad = |problem: &str| Error::BadRemoteUri {
            provider: BUILTIN_REMOTE_HTTPS.into(),
            uri: uri.into(),
            problem: problem.into(),
        };
        let lower = uri.to_ascii_lowercase();
        if lower.starts_with("http://") {
            if !self.allow_http {
                return Err(Error::PlainHttpRefused { uri: uri.into() });
            }
        } else if !lower.starts_with("https://") {
            return Err(bad("expected an https:// URL"));
        }
        let url = reqwest::Url::parse(uri).map_err(|e| bad(&e.to_string()))?;
        if !allow_local && let Some(ip) = literal_ip(&url).filter(|ip| is_local(*ip)) {
            return Err(Error::LocalTargetRefused { uri: uri.into(), address: ip.to_string() });
        }
        let client =
            self.client(uri, allow_local, crate::deadline::bound(self.deadline.as_ref(), providers.timeout))?;
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| {
            Error::RemoteFailed { uri: uri.into(), problem: format!("cannot start the I/O runtime: {e}") }
        })?;

        let attempts = providers.retries.saturating_add(1);
        let mut backoff = providers.first_backoff;
        let shown = crate::redact::url(uri);
        for attempt in 1..=attempts {
            ui.debug(&format!("fetching `{shown}` (attempt {attempt} of {attempts})"));
            let _busy = ui.busy(&format!("fetching `{shown}`"));
            let fetched = runtime.block_on(async {
                match self.deadline {
                    None => get(&client, url.clone(), uri).await,
                    Some(deadline) => tokio::time::timeout_at(deadline.at().into(), get(&client, url.clone(), uri))
                        .await
                        .unwrap_or_else(|_| Err(Attempt::Retryable(format!("{deadline} passed")))),
                }
            });
            let out_of_time = self.deadline.filter(|d| d.passed() || d.remaining() <= backoff);
            match fetched {
                Ok(body) => return Ok(body),
                Err(Attempt::Final(error)) => return Err(error),
                Err(Attempt::Retryable(problem)) if out_of_time.is_some() => {
                    let deadline = out_of_time.expect("checked by the guard");
                    let problem = if problem.contains("overall deadline") {
                        problem
                    } else {
                        format!("{problem}; {deadline} passed")
                    };
                    return Err(Error::RemoteFailed { uri: uri.into(), problem });
                }
                Err(Attempt::Retryable(problem)) if attempt < attempts => {
                    ui.warn(&format!(
                        "fetching `{shown}`: attempt {attempt} of {attempts} failed: {problem}; retrying in {}",
                        humanize(backoff)
                    ));
                    std::thread::sleep(backoff);
                    backoff = (backoff * 2).min(Duration::from_secs(30));
                }
                Err(Attempt::Retryable(problem)) => {
                    let problem = if attempts > 1 { format!("{problem} (after {attempts} attempts)") } else { problem };
                    return Err(Error::RemoteFailed { uri: uri.into(), problem });
                }
            }
        }
        unreachable!("the loop returns on its last attempt")
    }

    fn client(&self, uri: &str, allow_local: bool, timeout: Duration) -> Result<reqwest::Client, Error> {
        // reqwest is built without a default crypto provider, so that no C library (aws-lc) is linked.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let allow_http = self.allow_http;
        // Every hop is checked: the scheme and, for an address written in the URL, the address; a name is
        // checked where it resolves (below).
        let redirects = reqwest::redirect::Policy::custom(move |attempt| {
            let refused = |problem: String| HopRefused { url: attempt.url().to_string(), problem };
            let problem = if attempt.previous().len() > MAX_REDIRECTS {
                Some(refused(format!("more than {MAX_REDIRECTS} redirects")))
            } else if attempt.url().scheme() != "https" && !(allow_http && attempt.url().scheme() == "http") {
                Some(refused(
                    "a redirect from https to plain http (the configuration would travel \
                    unauthenticated)"
                        .into(),
                ))
            } else {
                literal_ip(attempt.url())
                    .filter(|ip| !allow_local && is_local(*ip))
                    .map(|ip| refused(format!("a redirect to the loopback or link-local address {ip}")))
            };
            match problem {
                Some(problem) => attempt.error(problem),
                None => attempt.follow(),
            }
        });
        let mut builder = reqwest::Client::builder()
            .https_only(!self.allow_http)
            .tls_certs_merge(read_cert_dirs(&self.cert_dirs)?)
            .redirect(redirects)
            .connect_timeout(timeout)
            .timeout(timeout);
        // Proxies come from the settings (the command line reads the environment), never from reqwest itself.
        builder = self.proxies.apply(builder).map_err(|e| Error::BadRemoteUri {
            provider: BUILTIN_REMOTE_HTTPS.into(),
            uri: e.url.clone(),
            problem: format!("not a usable proxy URL ({}: {})", e.variable, e.problem),
        })?;
        // Through a proxy, names are resolved by the proxy (and the resolver would see the proxy's own name, which
        // the operator chose and may well be local); addresses written in URLs are still checked.
        if !allow_local && self.proxies.is_empty() {
            builder = builder.dns_resolver(std::sync::Arc::new(NoLocalAddresses));
        }
        builder.build().map_err(|e| Error::RemoteFailed {
            uri: uri.into(),
            problem: format!("cannot set up the HTTPS client: {}", crate::redact::error_chain(&e)),
        })
    }
}

enum Attempt {
    Retryable(String),
    Final(Error),
}

/// One GET: the body, bounded by counting what arrives (a Content-Length over the bound fails at once).
async fn get(client: &reqwest::Client, url: reqwest::Url, uri: &str) -> Result<SecretBytes, Attempt> {
    let too_large = || Attempt::Final(Error::RemoteTooLarge { uri: uri.into(), limit: MAX_REMOTE_BYTES });
    let mut response = client.get(url).send().await.map_err(|e| request_failure(&e, uri))?;
    let status = response.status();
    if status == reqwest::StatusCode::NOT_FOUND || status == reqwest::StatusCode::GONE {
        return Err(Attempt::Final(Error::RemoteNotFound { uri: uri.into(), problem: format!("HTTP {status}") }));
    }
    if status.is_server_error() || status == reqwest::StatusCode::TOO_MANY_REQUESTS {
        return Err(Attempt::Retryable(format!("HTTP {status}")));
    }
    if !status.is_success() {
        return Err(Attempt::Final(Error::RemoteFailed { uri: uri.into(), problem: format!("HTTP {status}") }));
    }
    if response.content_length().is_some_and(|length| length > MAX_REMOTE_BYTES) {
        return Err(too_large());
    }
    let mut body = SecretBytes::new(Vec::new());
    while let Some(chunk) = response.chunk().await.map_err(|e| request_failure(&e, uri))? {
        if (body.len() + chunk.len()) as u64 > MAX_REMOTE_BYTES {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// A certificate the verifier rejected is final (exit 16); a hop the trust policy refuses is final (exit 3);
/// anything else on the way is worth another try.
fn request_failure(error: &reqwest::Error, uri: &str) -> Attempt {
    if let Some(hop) = find_cause::<HopRefused>(error) {
        return Attempt::Final(Error::RedirectRefused {
            uri: uri.into(),
            to: hop.url.clone(),
            problem: hop.problem.clone(),
        });
    }
    if let Some(local) = find_cause::<LocalOnly>(error) {
        return Attempt::Final(Error::LocalTargetRefused { uri: uri.into(), address: local.0.clone() });
    }
    if let Some(tls) = rustls_error(error).filter(|e| {
        matches!(
            e,
            rustls::Error::InvalidCertificate(_)
                | rustls::Error::NoCertificatesPresented
                | rustls::Error::UnsupportedNameType
        )
    }) {
        return Attempt::Final(Error::RemoteUntrusted { uri: uri.into(), problem: tls.to_string() });
    }
    if error.is_redirect() || error.is_builder() {
        return Attempt::Final(Error::RemoteFailed { uri: uri.into(), problem: crate::redact::error_chain(error) });
    }
    Attempt::Retryable(crate::redact::error_chain(error))
}

/// An error of type `T` somewhere in the chain, looking inside `io::Error`s too.
fn find_cause<'a, T: std::error::Error + 'static>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a T> {
    let mut next: Option<&'a (dyn std::error::Error + 'static)> = Some(error);
    while let Some(cause) = next {
        if let Some(found) = cause.downcast_ref::<T>() {
            return Some(found);
        }
        if let Some(inner) = cause.downcast_ref::<std::io::Error>().and_then(|io| io.get_ref()) {
            next = Some(inner);
            continue;
        }
        next = cause.source();
    }
    None
}

/// A redirect the policy refuses (converted to [`Error::RedirectRefused`] before it reaches a command).
#[derive(Debug)]
pub(crate) struct HopRefused {
    url: String,
    problem: String,
}

impl std::fmt::Display for HopRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} to `{}`", self.problem, crate::redact::url(&self.url))
    }
}

impl std::error::Error for HopRefused {}

/// A name that resolves only to loopback or link-local addresses (the name and what it resolved to).
/// (Converted to [`Error::LocalTargetRefused`] before it reaches a command.)
#[derive(Debug)]
pub(crate) struct LocalOnly(String);

impl std::fmt::Display for LocalOnly {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} resolves only to loopback or link-local addresses", self.0)
    }
}

impl std::error::Error for LocalOnly {}

impl crate::exit::Classify for HopRefused {
    fn status(&self) -> crate::exit::ExitStatus {
        crate::exit::ExitStatus::InvalidInput
    }
}

impl crate::exit::Classify for LocalOnly {
    fn status(&self) -> crate::exit::ExitStatus {
        crate::exit::ExitStatus::InvalidInput
    }
}

/// A resolver that drops loopback and link-local addresses, so that no hop of a fetch a fetched document asked
/// for reaches the instance metadata service or a local daemon, whatever name or redirect leads there.
struct NoLocalAddresses;

impl reqwest::dns::Resolve for NoLocalAddresses {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let found: Vec<std::net::SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let kept: Vec<std::net::SocketAddr> = found.iter().copied().filter(|a| !is_local(a.ip())).collect();
            if kept.is_empty() && !found.is_empty() {
                let addresses: Vec<String> = found.iter().map(|a| a.ip().to_string()).collect();
                return Err(Box::new(LocalOnly(format!("{host} ({})", addresses.join(", ")))) as _);
            }
            Ok(Box::new(kept.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// The address written in a URL's host, if it is one.
fn literal_ip(url: &reqwest::Url) -> Option<std::net::IpAddr> {
    let host = url.host_str()?;
    host.trim_start_matches('[').trim_end_matches(']').parse().ok()
}

/// Loopback, link-local, unspecified, or the IPv6 instance metadata address (also IPv4-mapped).
pub fn is_local(ip: std::net::IpAddr) -> bool {
    use std::net::IpAddr;
    match ip {
        IpAddr::V4(v4) => v4.is_loopback() || v4.is_link_local() || v4.is_unspecified(),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_local(v4.into()),
            None => {
                v6.is_loopback()
                    || v6.is_unspecified()
                    || (v6.segments()[0] & 0xffc0) == 0xfe80
                    || v6 == std::net::Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254)
            }
        },
    }
}

/// The rustls error somewhere in the chain (hyper-rustls hands it up inside an `io::Error`, whose `source` skips
/// it).
fn rustls_error<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a rustls::Error> {
    let mut next: Option<&'a (dyn std::error::Error + 'static)> = Some(error);
    while let Some(cause) = next {
        if let Some(tls) = cause.downcast_ref::<rustls::Error>() {
            return Some(tls);
        }
        if let Some(inner) = cause.downcast_ref::<std::io::Error>().and_then(|io| io.get_ref()) {
            if let Some(tls) = inner.downcast_ref::<rustls::Error>() {
                return Some(tls);
            }
            next = Some(inner);
            continue;
        }
        next = cause.source();
    }
    None
}

impl ProviderSettings {
    /// The RemoteConfig plugin of `provider` when one is on the search path (the one `open` would run), so that
    /// `seal` refuses a name nothing on the machine could fetch.
    pub fn find_remote_plugin(&self, provider: &str) -> Result<Option<PathBuf>, Error> {
        validate_provider_name(provider)?;
        self.find_executable(&format!("{REMOTE_PLUGIN_PREFIX}{provider}"))
    }
}

/// The built-in `file` provider: `file:///absolute/path`, at most [`MAX_REMOTE_BYTES`].
fn read_file(uri: &str) -> Result<SecretBytes, Error> {
    let path = parse_file_uri(uri).map_err(|problem| Error::BadRemoteUri {
        provider: BUILTIN_REMOTE_FILE.into(),
        uri: uri.into(),
        problem: problem.into(),
    })?;
    let file = std::fs::File::open(&path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::RemoteNotFound { uri: uri.into(), problem: e.to_string() },
        _ => Error::RemoteFailed { uri: uri.into(), problem: e.to_string() },
    })?;
    crate::bounded::read_at_most(file, MAX_REMOTE_BYTES)
        .map_err(|e| Error::RemoteFailed { uri: uri.into(), problem: e.to_string() })?
        .ok_or_else(|| Error::RemoteTooLarge { uri: uri.into(), limit: MAX_REMOTE_BYTES })
}

/// Every `*.crt` (PEM, one or more certificates) in `dirs`, sorted by name. A missing directory is an error.
fn read_cert_dirs(dirs: &[PathBuf]) -> Result<Vec<reqwest::Certificate>, Error> {
    let mut certificates = Vec::new();
    for dir in dirs {
        let failed = |path: &std::path::Path, problem: String, not_found: bool| Error::CertDir {
            path: path.to_owned(),
            problem,
            not_found,
        };
        let entries =
            std::fs::read_dir(dir).map_err(|e| failed(dir, e.to_string(), e.kind() == std::io::ErrorKind::NotFound))?;
        let mut paths: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|p| p.extension().is_some_and(|ext| ext == "crt"))
            .collect();
        paths.sort();
        for path in paths {
            let pem = std::fs::read(&path).map_err(|e| failed(&path, e.to_string(), false))?;
            let found = reqwest::Certificate::from_pem_bundle(&pem)
                .map_err(|e| failed(&path, format!("not a PEM certificate ({e})"), false))?;
            if found.is_empty() {
                return Err(failed(&path, "holds no PEM certificate".into(), false));
            }
            certificates.extend(found);
        }
    }
    Ok(certificates)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_provider_reads_bounded_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.yaml");
        std::fs::write(&path, b"a: 1\n").unwrap();
        assert_eq!(read_file(&format!("file://{}", path.display())).unwrap().as_slice(), b"a: 1\n");
        let missing = read_file(&format!("file://{}/nope", dir.path().display()));
        assert!(matches!(missing, Err(Error::RemoteNotFound { .. })));
        assert!(matches!(read_file("file://host/x"), Err(Error::BadRemoteUri { .. })));
    }

    #[test]
    fn https_provider_refuses_plain_http_and_other_schemes() {
        let providers = ProviderSettings {
            search_dirs: vec![],
            timeout: Duration::from_secs(1),
            retries: 0,
            first_backoff: Duration::ZERO,
            vault: None,
            kmip: None,
            aws: None,
            proxies: crate::proxy::Proxies::default(),
            tpm2: Default::default(),
        };
        let ui = crate::interact::NonInteractive;
        let settings = RemoteSettings::default();
        let err = settings.fetch_https("http://127.0.0.1:1/x", true, &providers, &ui).unwrap_err();
        assert!(matches!(err, Error::PlainHttpRefused { .. }), "{err}");
        let err = settings.fetch_https("ftp://x/y", true, &providers, &ui).unwrap_err();
        assert!(matches!(err, Error::BadRemoteUri { .. }), "{err}");
        // Allowed, but nothing listens on port 1: a network failure, not a refusal.
        let allowed = RemoteSettings { allow_http: true, ..RemoteSettings::default() };
        let err = allowed.fetch_https("http://127.0.0.1:1/x", true, &providers, &ui).unwrap_err();
        assert!(matches!(err, Error::RemoteFailed { .. }), "{err}");
    }

    #[test]
    fn local_targets_are_refused_by_address_and_by_name() {
        let providers = ProviderSettings {
            search_dirs: vec![],
            timeout: Duration::from_secs(5),
            retries: 0,
            first_backoff: Duration::ZERO,
            vault: None,
            kmip: None,
            aws: None,
            proxies: crate::proxy::Proxies::default(),
            tpm2: Default::default(),
        };
        let ui = crate::interact::NonInteractive;
        let settings = RemoteSettings::default();
        for uri in ["https://169.254.169.254/latest/user-data", "https://[::1]:1/x", "https://[::ffff:127.0.0.1]:1/x"] {
            let err = settings.fetch_https(uri, false, &providers, &ui).unwrap_err();
            assert!(matches!(err, Error::LocalTargetRefused { .. }), "{uri}: {err}");
        }
        // A name is checked where it resolves.
        let err = settings.fetch_https("https://localhost:1/x", false, &providers, &ui).unwrap_err();
        assert!(matches!(err, Error::LocalTargetRefused { .. }), "{err}");
        // Allowed: nothing listens, a network failure.
        let err = settings.fetch_https("https://localhost:1/x", true, &providers, &ui).unwrap_err();
        assert!(matches!(err, Error::RemoteFailed { .. }), "{err}");
        assert!(is_local("169.254.10.1".parse().unwrap()) && is_local("fe80::1".parse().unwrap()));
        assert!(!is_local("10.0.0.1".parse().unwrap()) && !is_local("2001:db8::1".parse().unwrap()));
    }

    #[test]
    fn a_missing_certificate_directory_is_not_found() {
        let err = read_cert_dirs(&[PathBuf::from("/nonexistent/certs.d")]).unwrap_err();
        assert!(matches!(err, Error::CertDir { not_found: true, .. }));
    }
}
