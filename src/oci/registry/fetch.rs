//! Manifests and tokens read with bounds (oci-client, used before, read every response whole before any limit
//! applied, and went on anonymously when its token request failed). Here a `Content-Length` over the limit fails
//! at once, a body is read only up to the limit, and a failed token request is the error. The token exchange
//! ([`answer_challenge`]) and the reading of error answers ([`error_answer`]) serve pushes too.

use super::protocol::{OciDistributionError, OciEnvelope};
use crate::redact;
use bytes::{Bytes, BytesMut};
use reqwest::{StatusCode, Url};
use zeroize::Zeroizing;

/// Most bytes of a token service's answer (tokens are a few kilobytes).
pub const MAX_TOKEN_BYTES: u64 = 64 * 1024;
/// Most bytes of an error answer read (to find the registry's error code and message).
pub const MAX_ERROR_BYTES: u64 = 64 * 1024;
/// How long a token service may take to answer, body included.
pub const TOKEN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);
/// How long an error answer's body may take to arrive (a registry that drips it is not waited for).
pub const ERROR_BODY_TIME: std::time::Duration = std::time::Duration::from_secs(5);

/// A body that was too large, or a read that failed.
#[derive(Debug)]
pub enum Bounded {
    /// Over the limit (by `Content-Length`, or by what arrived).
    TooLarge,
    /// The transfer failed.
    Failed(reqwest::Error),
}

/// Reads a response's body, refusing more than `limit` bytes without reading them.
pub async fn read_bounded(mut response: reqwest::Response, limit: u64) -> Result<Bytes, Bounded> {
    if response.content_length().is_some_and(|length| length > limit) {
        return Err(Bounded::TooLarge);
    }
    let mut body = BytesMut::new();
    while let Some(chunk) = response.chunk().await.map_err(Bounded::Failed)? {
        if (body.len() + chunk.len()) as u64 > limit {
            return Err(Bounded::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}

/// A refusal or failure answer as the protocol's error, with the URL redacted and the server's text bounded,
/// escaped and truncated ([`redact::server_message`]), so that it can be classified.
pub async fn error_answer(response: reqwest::Response) -> OciDistributionError {
    let code = response.status().as_u16();
    let url = redact::url(response.url().as_str());
    // Storage behind a presigned URL quotes the request in its refusal (S3's SignatureDoesNotMatch carries the
    // query string and the signature it received): the query values of the URL answered are scrubbed first.
    let mut secrets = redact::Secrets::new();
    secrets.add_url(response.url().as_str());
    let text = match tokio::time::timeout(ERROR_BODY_TIME, read_bounded(response, MAX_ERROR_BYTES)).await {
        Ok(Ok(body)) => Bytes::from(secrets.scrub_bytes(&body)),
        Ok(Err(_)) => Bytes::from_static(b"(an error answer over 64 KiB, not read)"),
        Err(_) => Bytes::from_static(b"(an error answer that did not arrive within 5 s, not read)"),
    };
    match serde_json::from_slice::<OciEnvelope>(&text) {
        Ok(mut envelope) if !envelope.errors.is_empty() => {
            envelope.errors.truncate(4);
            for error in &mut envelope.errors {
                error.message = redact::server_message(error.message.as_bytes());
                error.detail = serde_json::Value::Null;
            }
            OciDistributionError::RegistryError { envelope, url, status: code }
        }
        _ => OciDistributionError::ServerError { code, url, message: redact::server_message(&text) },
    }
}

/// Reads manifests and blobs of one repository, with bounds on everything read whole.
pub struct RegistryReader {
    http: reqwest::Client,
    /// `scheme://host[:port]/` of the registry; credentials go to this origin only.
    origin: Url,
    repository: String,
    credentials: Option<(String, Zeroizing<String>)>,
    /// The `Authorization` value that worked last (a bearer token or basic credentials).
    authorization: tokio::sync::Mutex<Option<Zeroizing<String>>>,
}

impl RegistryReader {
    pub fn new(
        http: reqwest::Client,
        origin: Url,
        repository: String,
        credentials: Option<(String, Zeroizing<String>)>,
    ) -> Self {
        hold_credentials(credentials.as_ref());
        Self { http, origin, repository, credentials, authorization: tokio::sync::Mutex::new(None) }
    }

    /// The manifest or index `reference` (a tag or a digest) names. `Ok(None)`: larger than `limit`. The outer
    /// error is the protocol's, for the caller's retries and classification.
    pub async fn manifest(
        &self,
        reference: &str,
        accept: &[&str],
        limit: u64,
    ) -> Result<Option<Bytes>, OciDistributionError> {
        let accept = accept.join(", ");
        let response =
            self.get(&format!("manifests/{reference}"), &[(reqwest::header::ACCEPT, accept.as_str())]).await?;
        match read_bounded(response, limit).await {
            Ok(body) => Ok(Some(body)),
            Err(Bounded::TooLarge) => Ok(None),
            Err(Bounded::Failed(e)) => Err(without_url(e)),
        }
    }

    /// A blob from byte `offset` on: the response, `partial` when the registry honoured the range.
    pub async fn blob(&self, digest: &str, offset: u64) -> Result<(reqwest::Response, bool), OciDistributionError> {
        let range = format!("bytes={offset}-");
        let response = self.get(&format!("blobs/{digest}"), &[(reqwest::header::RANGE, range.as_str())]).await?;
        let partial = response.status() == StatusCode::PARTIAL_CONTENT;
        Ok((response, partial))
    }

    /// Bytes `start..=end` of a blob: the response as the registry (or the storage it redirects to) gave it,
    /// `206 Partial Content` when the range was honoured, `200` with the whole blob when it was not.
    pub async fn blob_range(
        &self,
        digest: &str,
        start: u64,
        end: u64,
    ) -> Result<reqwest::Response, OciDistributionError> {
        let range = format!("bytes={start}-{end}");
        self.get(&format!("blobs/{digest}"), &[(reqwest::header::RANGE, range.as_str())]).await
    }

    /// A GET of `v2/REPOSITORY/PATH`, answering one authentication challenge; a successful response, or the
    /// error answer read with bounds. Redirects are followed, without the credentials when they leave the
    /// registry's origin (reqwest drops `Authorization` then).
    async fn get(
        &self,
        path: &str,
        headers: &[(reqwest::header::HeaderName, &str)],
    ) -> Result<reqwest::Response, OciDistributionError> {
        let url = self
            .origin
            .join(&format!("v2/{}/{path}", self.repository))
            .map_err(|e| OciDistributionError::GenericError(Some(format!("registry address: {e}"))))?;
        let mut authorization = self.authorization.lock().await.clone();
        let mut authenticated = false;
        loop {
            let mut request = self.http.get(url.clone());
            for (name, value) in headers {
                request = request.header(name, *value);
            }
            if let Some(value) = &authorization {
                request = request.header(reqwest::header::AUTHORIZATION, value.as_str());
            }
            let response = request.send().await.map_err(without_url)?;
            let status = response.status();
            if status == StatusCode::UNAUTHORIZED && !authenticated && response.url().origin() == url.origin() {
                let challenge = response
                    .headers()
                    .get(reqwest::header::WWW_AUTHENTICATE)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                authenticated = true;
                if let Some(value) = self.answer(challenge.as_deref()).await? {
                    *self.authorization.lock().await = Some(value.clone());
                    authorization = Some(value);
                    continue;
                }
            }
            if !status.is_success() {
                return Err(error_answer(response).await);
            }
            return Ok(response);
        }
    }

    /// The `Authorization` value that answers a challenge for pulling from this repository.
    async fn answer(&self, challenge: Option<&str>) -> Result<Option<Zeroizing<String>>, OciDistributionError> {
        let scopes = [format!("repository:{}:pull", self.repository)];
        answer_challenge(&self.http, challenge, self.credentials.as_ref(), &scopes).await
    }
}

/// The `Authorization` value that answers a registry's `WWW-Authenticate` challenge: a bearer token from the
/// token service it names, for `scopes` (`repository:NAME:ACTIONS`, all in one token), or the basic
/// credentials; `None` when there is nothing to answer with. The one token exchange of pulls, pushes and mounts:
/// the answer is bounded ([`MAX_TOKEN_BYTES`]) and wiped, must arrive within [`TOKEN_TIMEOUT`], and a refusal is
/// the error (never the request going on anonymously) without the service's text, which may echo credentials.
pub async fn answer_challenge(
    http: &reqwest::Client,
    challenge: Option<&str>,
    credentials: Option<&(String, Zeroizing<String>)>,
    scopes: &[String],
) -> Result<Option<Zeroizing<String>>, OciDistributionError> {
    use base64::Engine;
    let Some(challenge) = challenge else { return Ok(None) };
    let (scheme, parameters) = challenge.split_once(' ').unwrap_or((challenge, ""));
    if scheme.eq_ignore_ascii_case("basic") {
        return Ok(credentials.map(|(user, password)| {
            let pair = Zeroizing::new(format!("{user}:{}", password.as_str()));
            Zeroizing::new(format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair.as_bytes())))
        }));
    }
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Ok(None);
    }
    let parameters = challenge_parameters(parameters);
    let realm = parameters.iter().find(|(k, _)| k.eq_ignore_ascii_case("realm")).map(|(_, v)| v.as_str());
    let Some(realm) = realm else {
        return Err(OciDistributionError::AuthenticationFailure(
            "the registry asked for a bearer token without naming a token service (no realm)".into(),
        ));
    };
    let mut url = Url::parse(realm).map_err(|e| {
        OciDistributionError::AuthenticationFailure(format!(
            "the registry named a token service that is not a URL (`{}`): {e}",
            redact::server_message(realm.as_bytes())
        ))
    })?;
    {
        let mut query = url.query_pairs_mut();
        for scope in scopes {
            query.append_pair("scope", scope);
        }
        if let Some((_, service)) = parameters.iter().find(|(k, _)| k.eq_ignore_ascii_case("service")) {
            query.append_pair("service", service);
        }
    }
    let shown = redact::url(url.as_str());
    let mut request = http.get(url);
    if let Some((user, password)) = credentials {
        request = request.basic_auth(user, Some(password.as_str()));
    }
    let exchange = async {
        let response = request.send().await.map_err(without_url)?;
        if !response.status().is_success() {
            // Not the body: a token service's refusal may echo the credentials it was sent.
            return Err(OciDistributionError::AuthenticationFailure(format!(
                "the token service `{shown}` refused the request: HTTP {}",
                response.status()
            )));
        }
        match read_bounded(response, MAX_TOKEN_BYTES).await {
            Ok(body) => Ok(Zeroizing::new(body.to_vec())),
            Err(Bounded::TooLarge) => Err(OciDistributionError::AuthenticationFailure(format!(
                "the token service `{shown}` answered with more than {MAX_TOKEN_BYTES} bytes"
            ))),
            Err(Bounded::Failed(e)) => Err(without_url(e)),
        }
    };
    // Not retried: a token service that drips its answer would hold every attempt as long.
    let body = tokio::time::timeout(TOKEN_TIMEOUT, exchange).await.map_err(|_| {
        OciDistributionError::GenericError(Some(format!(
            "the token service `{shown}` did not answer within {} s",
            TOKEN_TIMEOUT.as_secs()
        )))
    })??;
    #[derive(serde::Deserialize)]
    struct Token {
        token: Option<String>,
        access_token: Option<String>,
    }
    let parsed: Token = serde_json::from_slice(&body).map_err(|_| {
        OciDistributionError::AuthenticationFailure(format!(
            "the token service `{shown}` answered with something that is not a token (JSON with `token`)"
        ))
    })?;
    let token = Zeroizing::new(parsed.token.or(parsed.access_token).unwrap_or_default());
    match Some(token).filter(|t| !t.is_empty()) {
        Some(token) => {
            // A registry or a proxy that quotes the `Authorization` header in an error shows none of it.
            redact::hold(token.as_bytes());
            Ok(Some(Zeroizing::new(format!("Bearer {}", token.as_str()))))
        }
        None => Err(OciDistributionError::AuthenticationFailure(format!(
            "the token service `{shown}` answered without a token"
        ))),
    }
}

/// Registers the registry password with the command's secrets ([`redact::hold`]): an error envelope, a proxy
/// page or a token service quoting the `Authorization` header (`Basic base64(user:password)`) shows none of it.
pub fn hold_credentials(credentials: Option<&(String, Zeroizing<String>)>) {
    if let Some((user, password)) = credentials {
        redact::hold(password.as_bytes());
        redact::hold(Zeroizing::new(format!("{user}:{}", password.as_str())).as_bytes());
    }
}

/// A transfer error without its URL (a presigned or token URL carries secrets in its query).
fn without_url(error: reqwest::Error) -> OciDistributionError {
    OciDistributionError::RequestError(error.without_url())
}

/// The `key="value"` pairs of a `WWW-Authenticate` challenge (quoted values may hold commas).
fn challenge_parameters(text: &str) -> Vec<(String, String)> {
    let mut pairs = Vec::new();
    let mut rest = text.trim();
    while let Some((key, after)) = rest.split_once('=') {
        let key = key.trim().trim_start_matches(',').trim().to_owned();
        let after = after.trim_start();
        let (value, remainder) = match after.strip_prefix('"') {
            Some(quoted) => match quoted.find('"') {
                Some(end) => (quoted[..end].to_owned(), &quoted[end + 1..]),
                None => (quoted.to_owned(), ""),
            },
            None => {
                let end = after.find(',').unwrap_or(after.len());
                (after[..end].trim().to_owned(), &after[end..])
            }
        };
        pairs.push((key, value));
        rest = remainder.trim_start_matches(|c: char| c == ',' || c.is_whitespace());
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_are_parsed_with_quoted_commas() {
        let pairs =
            challenge_parameters(r#"realm="https://auth/token",service="registry,x",scope="repository:a:pull""#);
        assert_eq!(pairs[0], ("realm".into(), "https://auth/token".into()));
        assert_eq!(pairs[1], ("service".into(), "registry,x".into()));
        assert_eq!(pairs.len(), 3);
    }
}
