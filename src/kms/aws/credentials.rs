//! AWS credential providers: the objects `cmd/` hands the client after reading the environment and the profile
//! files. Static keys are used as they are; web identity (STS AssumeRoleWithWebIdentity, the token file read
//! again at each refresh) and the EC2 instance metadata service (IMDSv2, with a session token) give temporary
//! credentials that [`Refreshing`] renews before they expire, keeping the old ones while they are still valid if
//! a refresh fails.
//!
//! The instance metadata service is the chain's last place, tried only when a request needs credentials: its
//! provider carries the list of places `cmd/` searched before, so that "no credentials" names every one of them.

use super::super::Error;
use super::super::http::{Http, HttpSettings, Request};
use crate::crypto::SecretBytes;
use reqwest::Method;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// Temporary credentials are renewed this long before they expire (at most; see [`Refreshing`]).
pub const REFRESH_AHEAD: Duration = Duration::from_secs(300);
/// The IMDSv2 session token's lifetime asked for, in seconds.
const IMDS_TOKEN_TTL: &str = "21600";
/// The instance metadata service's address (`AWS_EC2_METADATA_SERVICE_ENDPOINT` overrides it).
pub const DEFAULT_IMDS_ENDPOINT: &str = "http://169.254.169.254";

/// One set of AWS credentials. Its `Debug` shows only the access key id.
#[derive(Clone)]
pub struct Credentials {
    access_key_id: String,
    secret_access_key: SecretBytes,
    session_token: Option<SecretBytes>,
    expires: Option<SystemTime>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"[REDACTED]")
            .field("session_token", &self.session_token.as_ref().map(|_| "[REDACTED]"))
            .field("expires", &self.expires)
            .finish()
    }
}

impl Credentials {
    /// Credentials from their parts.
    pub fn new(
        access_key_id: String,
        secret_access_key: SecretBytes,
        session_token: Option<SecretBytes>,
        expires: Option<SystemTime>,
    ) -> Self {
        // The command holds them: no server text it shows may quote them (the signer sends the token, never the key).
        crate::redact::hold(&secret_access_key);
        if let Some(token) = &session_token {
            crate::redact::hold(token);
        }
        Self { access_key_id, secret_access_key, session_token, expires }
    }

    /// The access key id (not a secret by itself).
    pub fn access_key_id(&self) -> &str {
        &self.access_key_id
    }

    /// When they expire; `None` for long-term keys.
    pub fn expires(&self) -> Option<SystemTime> {
        self.expires
    }

    /// The signer's identity. The signer keeps its copies in memory it wipes on drop.
    pub(super) fn identity(&self) -> aws_smithy_runtime_api::client::identity::Identity {
        let text = |bytes: &SecretBytes| String::from_utf8_lossy(bytes).into_owned();
        aws_credential_types::Credentials::new(
            self.access_key_id.clone(),
            text(&self.secret_access_key),
            self.session_token.as_ref().map(text),
            self.expires,
            "cryptadm",
        )
        .into()
    }
}

/// Where a client gets its credentials (and, failing a configured one, its region).
pub trait CredentialProvider: Send + Sync {
    /// Credentials valid now, fetched or renewed as needed.
    fn credentials(&self, http: &HttpSettings) -> Result<Credentials, Error>;
    /// The region this source knows (the instance's), if any.
    fn region(&self, _http: &HttpSettings) -> Result<Option<String>, Error> {
        Ok(None)
    }
    /// What the source is, for logs ("environment", "profile `ci`", "web identity role `…`").
    fn describe(&self) -> String;
}

/// Long-term or session keys given as they are (environment variables, a profile's keys).
pub struct Static {
    credentials: Credentials,
    origin: String,
}

impl Static {
    /// Keys from an unnamed place.
    pub fn new(credentials: Credentials) -> Self {
        Self { credentials, origin: "static keys".into() }
    }

    /// Keys from `origin` (e.g. "the environment").
    pub fn from(credentials: Credentials, origin: impl Into<String>) -> Self {
        Self { credentials, origin: origin.into() }
    }
}

impl CredentialProvider for Static {
    fn credentials(&self, _http: &HttpSettings) -> Result<Credentials, Error> {
        if let Some(expires) = self.credentials.expires
            && expires <= SystemTime::now()
        {
            return Err(Error::Credentials {
                problem: format!("the AWS credentials from {} have expired", self.origin),
                hint: "get new temporary credentials (a new AWS_SESSION_TOKEN, aws sso login)".into(),
            });
        }
        Ok(self.credentials.clone())
    }

    fn describe(&self) -> String {
        self.origin.clone()
    }
}

/// No source that can be used: every access fails with the same error (no credentials anywhere, or a profile
/// that cannot be read). Commands that never reach AWS are not disturbed by it.
pub struct Unusable {
    /// What is wrong, with the places searched.
    pub problem: String,
    /// What to do about it.
    pub hint: String,
}

impl CredentialProvider for Unusable {
    fn credentials(&self, _http: &HttpSettings) -> Result<Credentials, Error> {
        Err(Error::Credentials { problem: self.problem.clone(), hint: self.hint.clone() })
    }

    fn describe(&self) -> String {
        "no credentials".into()
    }
}

/// A line for `-v` (what the command line's printer shows at `--verbose`).
pub type Log = std::sync::Arc<dyn Fn(&str) + Send + Sync>;

/// Temporary credentials kept until shortly before they expire.
#[derive(Default)]
pub struct Refreshing {
    slot: Mutex<Option<(Credentials, SystemTime)>>,
    /// Where a renewal that failed while the kept credentials were still valid is told.
    log: Option<Log>,
}

impl Refreshing {
    /// A cache that tells `log` when it keeps credentials after a failed renewal.
    pub fn logged(log: Option<Log>) -> Self {
        Self { slot: Mutex::new(None), log }
    }

    /// The kept credentials while fresh, else `fetch`'s. Renewed once `min(REFRESH_AHEAD, half their lifetime)`
    /// is left; a failed renewal keeps the old ones until they expire (as the SDKs do), and says so to the log.
    pub fn get(&self, fetch: impl FnOnce() -> Result<Credentials, Error>) -> Result<Credentials, Error> {
        let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        let now = SystemTime::now();
        if let Some((credentials, fetched)) = slot.as_ref()
            && fresh(credentials, *fetched, now)
        {
            return Ok(credentials.clone());
        }
        match fetch() {
            Ok(credentials) => {
                *slot = Some((credentials.clone(), now));
                Ok(credentials)
            }
            Err(error) => match slot.as_ref() {
                Some((old, _)) if old.expires.is_some_and(|e| e > SystemTime::now()) => {
                    if let Some(log) = &self.log {
                        let left =
                            old.expires.and_then(|e| e.duration_since(SystemTime::now()).ok()).unwrap_or_default();
                        log(&format!(
                            "AWS credentials could not be renewed ({}); the current ones ({}) are still valid for {} s \
                             and are used until they expire",
                            crate::redact::server_message(error.to_string().as_bytes()),
                            old.access_key_id,
                            left.as_secs()
                        ));
                    }
                    Ok(old.clone())
                }
                _ => Err(error),
            },
        }
    }
}

fn fresh(credentials: &Credentials, fetched: SystemTime, now: SystemTime) -> bool {
    let Some(expires) = credentials.expires else { return true };
    let lifetime = expires.duration_since(fetched).unwrap_or_default();
    let ahead = REFRESH_AHEAD.min(lifetime / 2);
    now + ahead < expires
}

/// Web identity: STS AssumeRoleWithWebIdentity with the token in `token_file` (EKS IRSA's projected
/// service-account token), read again at every refresh because the kubelet rotates it.
pub struct WebIdentity {
    /// The role to assume.
    pub role_arn: String,
    /// The token file (0600, like every credential file).
    pub token_file: PathBuf,
    /// The session name (`AWS_ROLE_SESSION_NAME`, the profile's `role_session_name`).
    pub session_name: String,
    /// STS's URL (an override, or the regional endpoint).
    pub sts_endpoint: String,
    /// Where the settings came from, for errors ("AWS_ROLE_ARN", "profile `ci`").
    pub origin: String,
    /// The credentials kept.
    pub cache: Refreshing,
}

impl CredentialProvider for WebIdentity {
    fn credentials(&self, http: &HttpSettings) -> Result<Credentials, Error> {
        self.cache.get(|| {
            let token =
                crate::kms::vault::read_credential(&self.token_file, "web identity token file").map_err(|error| {
                    Error::Credentials {
                        problem: format!("AWS web identity ({}): {error}", self.origin),
                        hint: "check AWS_WEB_IDENTITY_TOKEN_FILE (the projected service-account token, 0600)".into(),
                    }
                })?;
            let token = SecretBytes::new(token);
            super::assume_role_with_web_identity(&self.sts_endpoint, http, &self.role_arn, &self.session_name, &token)
        })
    }

    fn describe(&self) -> String {
        format!("web identity role `{}` ({})", self.role_arn, self.origin)
    }
}

/// The EC2 instance metadata service with IMDSv2 session tokens: the instance profile's role credentials, and
/// the instance's region.
pub struct InstanceMetadata {
    /// The service's base URL (`AWS_EC2_METADATA_SERVICE_ENDPOINT`, else [`DEFAULT_IMDS_ENDPOINT`]).
    pub endpoint: String,
    /// The places searched before, for "no credentials" ("AWS_ACCESS_KEY_ID…, profile `default` in …").
    pub searched: Vec<String>,
    /// The credentials kept.
    pub cache: Refreshing,
}

impl InstanceMetadata {
    fn http(&self, settings: &HttpSettings) -> Result<Http, Error> {
        // The service answers within milliseconds on an instance; elsewhere nothing answers at all.
        let settings = HttpSettings {
            timeout: settings.timeout.min(Duration::from_secs(2)),
            retries: settings.retries.min(1),
            first_backoff: Duration::from_millis(200),
            ..settings.clone()
        };
        Http::new("EC2 instance metadata service", &self.endpoint, settings)
    }

    fn url(&self, path: &str) -> Result<reqwest::Url, Error> {
        let text = format!("{}{path}", self.endpoint.trim_end_matches('/'));
        reqwest::Url::parse(&text)
            .map_err(|e| Error::Config(format!("instance metadata endpoint `{}`: {e}", crate::redact::url(&text))))
    }

    fn no_credentials(&self, why: String) -> Error {
        let mut places = self.searched.clone();
        places.push(format!("the EC2 instance metadata service at {} ({why})", crate::redact::url(&self.endpoint)));
        Error::Credentials {
            problem: format!("no AWS credentials found; searched: {}", places.join("; ")),
            hint: "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or AWS_ROLE_ARN with \
                   AWS_WEB_IDENTITY_TOKEN_FILE; or run on an instance with an instance profile"
                .into(),
        }
    }

    /// `GET path` with a fresh IMDSv2 session token; `Ok(None)` for 404.
    fn get(&self, http: &Http, path: &str, what: &str) -> Result<Option<String>, Error> {
        let put = Request::new(Method::PUT, self.url("/latest/api/token")?, "asking for an IMDSv2 session token")
            .header("X-aws-ec2-metadata-token-ttl-seconds", IMDS_TOKEN_TTL);
        let answer = http.send(&put)?;
        if !answer.status.is_success() {
            return Err(
                self.no_credentials(format!("the session token PUT was answered HTTP {}", answer.status.as_u16()))
            );
        }
        let token =
            String::from_utf8(answer.body).map_err(|_| self.no_credentials("a session token not text".into()))?;
        let token = zeroize::Zeroizing::new(token);
        let request = Request::new(Method::GET, self.url(path)?, what).header("X-aws-ec2-metadata-token", token.trim());
        let response = http.send(&request)?;
        match response.status.as_u16() {
            200 => {
                String::from_utf8(response.body).map(Some).map_err(|_| self.no_credentials(format!("{path}: not text")))
            }
            404 => Ok(None),
            status => Err(self.no_credentials(format!("{path}: HTTP {status}"))),
        }
    }

    fn fetch(&self, settings: &HttpSettings) -> Result<Credentials, Error> {
        let http = self.http(settings)?;
        let base = "/latest/meta-data/iam/security-credentials/";
        let unreachable = |error: Error| match error {
            Error::Unavailable { problem, .. } => self.no_credentials(format!("did not answer: {problem}")),
            other => other,
        };
        let roles = self.get(&http, base, "listing the instance profile's role").map_err(unreachable)?;
        let Some(role) = roles.as_deref().and_then(|r| r.lines().map(str::trim).find(|l| !l.is_empty())) else {
            return Err(self.no_credentials("the instance has no instance profile".into()));
        };
        let role = role.to_owned();
        let document = self
            .get(&http, &format!("{base}{role}"), "reading the instance profile's credentials")
            .map_err(unreachable)?
            .ok_or_else(|| self.no_credentials(format!("role `{role}` has no credentials")))?;
        let document = zeroize::Zeroizing::new(document);
        let mut value: serde_json::Value = serde_json::from_str(&document)
            .map_err(|_| self.no_credentials(format!("role `{role}`: the credentials are not JSON")))?;
        let field = |name: &str| value.get(name).and_then(serde_json::Value::as_str).map(str::to_owned);
        if field("Code").is_some_and(|code| code != "Success") {
            return Err(self.no_credentials(format!(
                "role `{role}`: the service answered Code {}",
                field("Code").unwrap_or_default()
            )));
        }
        let credentials = match (field("AccessKeyId"), field("SecretAccessKey"), field("Token")) {
            (Some(id), Some(secret), token) => Ok(Credentials::new(
                id,
                SecretBytes::new(secret.into_bytes()),
                token.map(|t| SecretBytes::new(t.into_bytes())),
                field("Expiration").and_then(|e| super::parse_time(&e)),
            )),
            _ => Err(self.no_credentials(format!("role `{role}`: no AccessKeyId and SecretAccessKey"))),
        };
        super::wipe_json(&mut value);
        credentials
    }
}

impl CredentialProvider for InstanceMetadata {
    fn credentials(&self, http: &HttpSettings) -> Result<Credentials, Error> {
        self.cache.get(|| self.fetch(http))
    }

    fn region(&self, settings: &HttpSettings) -> Result<Option<String>, Error> {
        let http = self.http(settings)?;
        match self.get(&http, "/latest/meta-data/placement/region", "reading the instance's region") {
            Ok(region) => Ok(region.map(|r| r.trim().to_owned()).filter(|r| !r.is_empty())),
            Err(_) => Ok(None),
        }
    }

    fn describe(&self) -> String {
        format!("the EC2 instance metadata service at {}", crate::redact::url(&self.endpoint))
    }
}

/// The container credential provider (ECS task roles, EKS Pod Identity): `GET` of a local endpoint with an
/// `Authorization` token, answering `{"AccessKeyId", "SecretAccessKey", "Token", "Expiration"}`.
pub struct Container {
    /// The endpoint's full URL (`AWS_CONTAINER_CREDENTIALS_FULL_URI`, or 169.254.170.2 with the relative URI).
    pub url: String,
    /// The authorization token: a file read again at each refresh (Pod Identity rotates it), else a value.
    pub token: ContainerToken,
    /// Where the settings came from, for errors.
    pub origin: String,
    /// The credentials kept.
    pub cache: Refreshing,
}

/// The container endpoint's authorization token.
pub enum ContainerToken {
    /// None (ECS with a relative URI).
    None,
    /// `AWS_CONTAINER_AUTHORIZATION_TOKEN` (a secret).
    Value(SecretBytes),
    /// `AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE`.
    File(PathBuf),
}

/// ECS's container credential address, of `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI`.
pub const ECS_CONTAINER_ENDPOINT: &str = "http://169.254.170.2";

/// Whether a container credential URL may be used, as the SDKs decide: HTTPS anywhere; plain HTTP only to a
/// loopback address, ECS's 169.254.170.2 or EKS Pod Identity's 169.254.170.23 and fd00:ec2::23.
pub fn container_url_allowed(url: &reqwest::Url) -> bool {
    let Some(host) = url.host_str() else { return false };
    if url.scheme() == "https" {
        return true;
    }
    if url.scheme() != "http" {
        return false;
    }
    match host.trim_start_matches('[').trim_end_matches(']').parse::<std::net::IpAddr>() {
        Ok(ip) => {
            ip.is_loopback()
                || ip == std::net::IpAddr::from([169, 254, 170, 2])
                || ip == std::net::IpAddr::from([169, 254, 170, 23])
                || ip == std::net::IpAddr::from([0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x23u16])
        }
        Err(_) => host.eq_ignore_ascii_case("localhost"),
    }
}

impl Container {
    fn problem(&self, problem: impl std::fmt::Display) -> Error {
        Error::Credentials {
            problem: format!(
                "AWS container credentials ({}) at {}: {problem}",
                self.origin,
                crate::redact::url(&self.url)
            ),
            hint: "check the task role (ECS) or the pod identity association (EKS), and the container credential \
                   variables"
                .into(),
        }
    }

    fn fetch(&self, settings: &HttpSettings) -> Result<Credentials, Error> {
        let url = reqwest::Url::parse(&self.url).map_err(|e| self.problem(format!("not a URL ({e})")))?;
        if !container_url_allowed(&url) {
            return Err(self.problem(
                "plain HTTP is only allowed to a loopback address, 169.254.170.2, 169.254.170.23 or fd00:ec2::23",
            ));
        }
        let token = match &self.token {
            ContainerToken::None => None,
            ContainerToken::Value(value) => Some(value.clone()),
            ContainerToken::File(path) => Some(SecretBytes::new(
                crate::kms::vault::read_credential(path, "container authorization token file")
                    .map_err(|e| self.problem(e))?,
            )),
        };
        let token = token
            .map(|t| {
                std::str::from_utf8(t.trim_ascii())
                    .ok()
                    .filter(|t| !t.is_empty() && !t.contains(['\r', '\n']))
                    .map(|t| zeroize::Zeroizing::new(t.to_owned()))
                    .ok_or_else(|| self.problem("the authorization token is empty, not text or has a line break"))
            })
            .transpose()?;
        let settings = HttpSettings {
            timeout: settings.timeout.min(Duration::from_secs(5)),
            retries: settings.retries.min(2),
            ..settings.clone()
        };
        let http = Http::new("AWS container credential endpoint", &self.url, settings)?;
        let mut request = Request::new(Method::GET, url, "reading the container's AWS credentials")
            .header("Accept", "application/json");
        if let Some(token) = &token {
            request = request.header("Authorization", token.as_str());
        }
        let response = http.send(&request).map_err(|e| match e {
            Error::Unavailable { problem, .. } => self.problem(format!("did not answer: {problem}")),
            other => other,
        })?;
        if !response.status.is_success() {
            return Err(self.problem(format!(
                "HTTP {}: {}",
                response.status.as_u16(),
                crate::redact::server_message(&response.body)
            )));
        }
        let mut value: serde_json::Value =
            serde_json::from_slice(&response.body).map_err(|_| self.problem("the answer is not JSON"))?;
        let credentials = json_credentials(&value, "Token")
            .ok_or_else(|| self.problem("no AccessKeyId and SecretAccessKey in the answer"));
        super::wipe_json(&mut value);
        credentials
    }
}

/// Credentials of a JSON document (`AccessKeyId`, `SecretAccessKey`, the session token under `token_field`,
/// `Expiration`).
fn json_credentials(value: &serde_json::Value, token_field: &str) -> Option<Credentials> {
    let field = |name: &str| value.get(name).and_then(serde_json::Value::as_str).filter(|v| !v.is_empty());
    Some(Credentials::new(
        field("AccessKeyId")?.to_owned(),
        SecretBytes::new(field("SecretAccessKey")?.as_bytes().to_vec()),
        field(token_field).map(|t| SecretBytes::new(t.as_bytes().to_vec())),
        field("Expiration").and_then(super::parse_time),
    ))
}

impl CredentialProvider for Container {
    fn credentials(&self, http: &HttpSettings) -> Result<Credentials, Error> {
        self.cache.get(|| self.fetch(http))
    }

    fn describe(&self) -> String {
        format!("the container credential endpoint at {} ({})", crate::redact::url(&self.url), self.origin)
    }
}

/// A role assumed with STS AssumeRole, signed with the credentials of a source (a profile's `source_profile` or
/// `credential_source`, which may itself be an assumed role: chains).
pub struct AssumeRole {
    /// The role.
    pub role_arn: String,
    /// `role_session_name`.
    pub session_name: String,
    /// `external_id`.
    pub external_id: Option<String>,
    /// `duration_seconds`.
    pub duration_seconds: Option<u32>,
    /// The credentials AssumeRole is signed with.
    pub source: std::sync::Arc<dyn CredentialProvider>,
    /// STS's URL.
    pub sts_endpoint: String,
    /// The signing region of STS (`us-east-1` for the global endpoint).
    pub sts_region: String,
    /// Where the settings came from, for errors ("profile `ci` in …").
    pub origin: String,
    /// The credentials kept.
    pub cache: Refreshing,
}

impl CredentialProvider for AssumeRole {
    fn credentials(&self, http: &HttpSettings) -> Result<Credentials, Error> {
        self.cache.get(|| {
            let source = self.source.credentials(http)?;
            super::assume_role(&self.sts_endpoint, &self.sts_region, http, &source, self)
        })
    }

    fn describe(&self) -> String {
        format!("role `{}` assumed with {} ({})", self.role_arn, self.source.describe(), self.origin)
    }
}

/// A profile's `credential_process`: a command run with `sh -c` whose standard output is the JSON document of
/// the AWS CLI's specification (`Version` 1, `AccessKeyId`, `SecretAccessKey`, `SessionToken`, `Expiration`),
/// run again when its credentials are about to expire.
pub struct Process {
    /// The command line.
    pub command: String,
    /// Where it came from, for errors.
    pub origin: String,
    /// The credentials kept.
    pub cache: Refreshing,
}

impl Process {
    fn problem(&self, problem: impl std::fmt::Display) -> Error {
        Error::Credentials {
            problem: format!("AWS credential_process of {}: {problem}", self.origin),
            hint: "run the command by hand: it must print the AWS CLI's credential JSON (Version 1) and exit 0".into(),
        }
    }

    fn run(&self, settings: &HttpSettings) -> Result<Credentials, Error> {
        let timeout = crate::deadline::bound(settings.deadline.as_ref(), settings.timeout.max(Duration::from_secs(60)));
        let limits = crate::process::Limits { timeout, max_stdout: 1 << 20, max_stderr: 4096 };
        let finished = crate::process::run("sh", ["-c", self.command.as_str()], None, limits).map_err(|e| match e {
            crate::process::RunError::Spawn(e) => self.problem(format!("cannot start it: {e}")),
            crate::process::RunError::TimedOut => {
                self.problem(format!("did not finish within {} s", timeout.as_secs()))
            }
            crate::process::RunError::StdoutHeld => self.problem("something it started kept its output open"),
        })?;
        if !finished.status.success() || finished.stdout_truncated {
            return Err(self.problem(format!(
                "it failed ({}): {}",
                crate::process::describe_status(finished.status),
                crate::redact::server_message(&finished.stderr)
            )));
        }
        let out = finished.stdout;
        let mut value: serde_json::Value =
            serde_json::from_slice(&out).map_err(|_| self.problem("its output is not JSON"))?;
        let version = value.get("Version").and_then(serde_json::Value::as_u64);
        let credentials = if version == Some(1) {
            json_credentials(&value, "SessionToken")
                .ok_or_else(|| self.problem("no AccessKeyId and SecretAccessKey in its output"))
        } else {
            Err(self.problem("its output's Version is not 1"))
        };
        super::wipe_json(&mut value);
        credentials
    }
}

impl CredentialProvider for Process {
    fn credentials(&self, http: &HttpSettings) -> Result<Credentials, Error> {
        self.cache.get(|| self.run(http))
    }

    fn describe(&self) -> String {
        format!("credential_process ({})", self.origin)
    }
}

/// The instance's region (`placement/region` of the instance metadata service at `endpoint`), whatever the
/// credentials come from; `Err` says why there is none.
pub fn instance_region(endpoint: &str, settings: &HttpSettings) -> Result<String, String> {
    let imds = InstanceMetadata { endpoint: endpoint.to_owned(), searched: Vec::new(), cache: Refreshing::default() };
    let http = imds.http(settings).map_err(|e| e.to_string())?;
    match imds.get(&http, "/latest/meta-data/placement/region", "reading the instance's region") {
        Ok(Some(region)) if !region.trim().is_empty() => Ok(region.trim().to_owned()),
        Ok(_) => Err(format!("the instance metadata service at {} has no region", crate::redact::url(endpoint))),
        Err(Error::Unavailable { problem, .. }) => {
            Err(format!("the instance metadata service at {} did not answer ({problem})", crate::redact::url(endpoint)))
        }
        Err(error) => Err(error.to_string()),
    }
}

/// Keys (static or temporary) whose source is unknown to the instance metadata service's error, used where a
/// provider must exist but AWS is never reached (tests of commands that take AWS settings).
pub fn unusable(problem: impl Into<String>, hint: impl Into<String>) -> std::sync::Arc<dyn CredentialProvider> {
    std::sync::Arc::new(Unusable { problem: problem.into(), hint: hint.into() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Write};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    fn keys(id: &str, expires: Option<SystemTime>) -> Credentials {
        Credentials::new(id.into(), SecretBytes::new(b"secret".to_vec()), None, expires)
    }

    #[test]
    fn kept_credentials_are_renewed_before_they_expire() {
        let cache = Refreshing::default();
        let now = SystemTime::now();
        let first = cache.get(|| Ok(keys("A", Some(now + Duration::from_secs(3600))))).unwrap();
        assert_eq!(first.access_key_id(), "A");
        let again = cache.get(|| Ok(keys("B", None))).unwrap();
        assert_eq!(again.access_key_id(), "A", "an hour left: kept");
        // Two seconds of life: renewed once less than one second is left.
        let cache = Refreshing::default();
        cache.get(|| Ok(keys("A", Some(SystemTime::now() + Duration::from_secs(2))))).unwrap();
        assert_eq!(cache.get(|| Ok(keys("B", None))).unwrap().access_key_id(), "A");
        std::thread::sleep(Duration::from_millis(1100));
        assert_eq!(cache.get(|| Ok(keys("B", None))).unwrap().access_key_id(), "B");
        // A failed renewal keeps credentials that are still valid, and fails once they are not.
        let cache = Refreshing::default();
        cache.get(|| Ok(keys("A", Some(SystemTime::now() + Duration::from_secs(40))))).unwrap();
        *cache.slot.lock().unwrap() =
            Some((keys("A", Some(SystemTime::now() + Duration::from_secs(40))), now - Duration::from_secs(3600)));
        let kept = cache.get(|| Err(Error::Config("down".into()))).unwrap();
        assert_eq!(kept.access_key_id(), "A");
        *cache.slot.lock().unwrap() = Some((keys("A", Some(SystemTime::now())), now - Duration::from_secs(3600)));
        assert!(cache.get(|| Err(Error::Config("down".into()))).is_err());
    }

    /// A loopback IMDSv2 stand-in: refuses a GET without the session token from its PUT; serves role `r` with
    /// credentials `K<n>` that expire `life` after each fetch. Counts credential fetches.
    fn imds(life: Duration) -> (String, Arc<AtomicUsize>) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let fetches = Arc::new(AtomicUsize::new(0));
        let counter = fetches.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let mut token = None;
                loop {
                    let mut header = String::new();
                    reader.read_line(&mut header).unwrap();
                    if header.trim().is_empty() {
                        break;
                    }
                    if let Some(v) = header.to_ascii_lowercase().strip_prefix("x-aws-ec2-metadata-token:") {
                        token = Some(v.trim().to_owned());
                    }
                }
                let (status, body) = if line.starts_with("PUT /latest/api/token") {
                    ("200 OK", "tok-1".to_owned())
                } else if token.as_deref() != Some("tok-1") {
                    ("401 Unauthorized", String::new())
                } else if line.starts_with("GET /latest/meta-data/iam/security-credentials/r ") {
                    let n = counter.fetch_add(1, Ordering::SeqCst);
                    let expires = aws_smithy_types::DateTime::from(SystemTime::now() + life)
                        .fmt(aws_smithy_types::date_time::Format::DateTime)
                        .unwrap();
                    let doc = serde_json::json!({"Code": "Success", "AccessKeyId": format!("K{n}"),
                        "SecretAccessKey": "s", "Token": "t", "Expiration": expires});
                    ("200 OK", doc.to_string())
                } else if line.starts_with("GET /latest/meta-data/iam/security-credentials/ ") {
                    ("200 OK", "r\n".to_owned())
                } else if line.starts_with("GET /latest/meta-data/placement/region ") {
                    ("200 OK", "eu-central-1".to_owned())
                } else {
                    ("404 Not Found", String::new())
                };
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        (base, fetches)
    }

    #[test]
    fn instance_metadata_credentials_and_region_with_a_session_token() {
        let (endpoint, fetches) = imds(Duration::from_secs(2));
        let provider = InstanceMetadata { endpoint, searched: vec![], cache: Refreshing::default() };
        let settings = HttpSettings { retries: 0, ..HttpSettings::default() };
        assert_eq!(provider.credentials(&settings).unwrap().access_key_id(), "K0");
        assert_eq!(provider.credentials(&settings).unwrap().access_key_id(), "K0");
        std::thread::sleep(Duration::from_millis(1200));
        assert_eq!(provider.credentials(&settings).unwrap().access_key_id(), "K1", "renewed before expiry");
        assert_eq!(fetches.load(Ordering::SeqCst), 2);
        assert_eq!(provider.region(&settings).unwrap().as_deref(), Some("eu-central-1"));
    }

    /// Web identity with STS gone after the first call: the credentials (4 s of life) are renewed after 2 s, the
    /// renewal fails, the kept ones are used and the log says so; once they have expired, the failure is the error.
    #[test]
    fn a_failed_web_identity_renewal_keeps_valid_credentials_until_they_expire() {
        use std::os::unix::fs::PermissionsExt as _;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let server = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut buffer = [0u8; 4096];
            let _ = std::io::Read::read(&mut stream, &mut buffer);
            let expires = aws_smithy_types::DateTime::from(SystemTime::now() + Duration::from_secs(4))
                .fmt(aws_smithy_types::date_time::Format::DateTime)
                .unwrap();
            let body = format!(
                "<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials>\
                 <AccessKeyId>ASIAKEPT</AccessKeyId><SecretAccessKey>s</SecretAccessKey>\
                 <SessionToken>t</SessionToken><Expiration>{expires}</Expiration></Credentials>\
                 </AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>"
            );
            let _ =
                write!(stream, "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
            // The listener is dropped here: STS is gone.
        });
        let dir = tempfile::tempdir().unwrap();
        let token_file = dir.path().join("token");
        std::fs::write(&token_file, "eyJ.token.sig").unwrap();
        std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let said = Arc::new(Mutex::new(Vec::<String>::new()));
        let sink = said.clone();
        let provider = WebIdentity {
            role_arn: "arn:aws:iam::1:role/r".into(),
            token_file,
            session_name: "s".into(),
            sts_endpoint: base,
            origin: "test".into(),
            cache: Refreshing::logged(Some(Arc::new(move |line: &str| sink.lock().unwrap().push(line.to_owned())))),
        };
        let settings = HttpSettings { retries: 0, ..HttpSettings::default() };
        assert_eq!(provider.credentials(&settings).unwrap().access_key_id(), "ASIAKEPT");
        server.join().unwrap();
        std::thread::sleep(Duration::from_millis(2300));
        assert_eq!(provider.credentials(&settings).unwrap().access_key_id(), "ASIAKEPT", "kept while valid");
        let lines = said.lock().unwrap().clone();
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].starts_with("AWS credentials could not be renewed ("), "{lines:?}");
        assert!(lines[0].contains("(ASIAKEPT) are still valid for "), "{lines:?}");
        std::thread::sleep(Duration::from_millis(2000));
        assert!(provider.credentials(&settings).is_err(), "expired: the renewal's failure is the error");
    }

    /// Container credential URLs as the SDKs allow them: HTTPS anywhere, plain HTTP only to loopback and the ECS
    /// and EKS Pod Identity agents' addresses.
    #[test]
    fn container_urls_are_checked_as_the_sdks_check_them() {
        for allowed in [
            "http://127.0.0.1:8080/creds",
            "http://localhost/creds",
            "http://[::1]:1/x",
            "http://169.254.170.2/v2/credentials/x",
            "http://169.254.170.23/v1/credentials",
            "http://[fd00:ec2::23]/v1/credentials",
            "https://creds.example.com/x",
        ] {
            assert!(container_url_allowed(&reqwest::Url::parse(allowed).unwrap()), "{allowed}");
        }
        for refused in ["http://192.0.2.1/x", "http://169.254.169.254/x", "http://example.com/x", "ftp://127.0.0.1/x"] {
            assert!(!container_url_allowed(&reqwest::Url::parse(refused).unwrap()), "{refused}");
        }
    }

    #[test]
    fn no_instance_metadata_service_names_every_place_searched() {
        use crate::exit::Classify as _;
        // A port nothing listens on.
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let provider = InstanceMetadata {
            endpoint: format!("http://127.0.0.1:{port}"),
            searched: vec!["AWS_ACCESS_KEY_ID (not set)".into(), "profile `default` (no such profile)".into()],
            cache: Refreshing::default(),
        };
        let settings = HttpSettings { retries: 0, ..HttpSettings::default() };
        let error = provider.credentials(&settings).unwrap_err();
        let text = error.to_string();
        assert!(text.starts_with("no AWS credentials found; searched: AWS_ACCESS_KEY_ID (not set); profile"), "{text}");
        assert!(text.contains("the EC2 instance metadata service at http://127.0.0.1:"), "{text}");
        assert_eq!(error.status(), crate::exit::ExitStatus::Unauthenticated);
    }
}
