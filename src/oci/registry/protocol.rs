//! The failures of the OCI distribution protocol as the registry code classifies them (retry, exit code): a
//! transfer that failed, a refusal with or without the registry's JSON error envelope, a token service that
//! would not issue a token, a digest the registry computed otherwise. Server text in them is already bounded,
//! escaped and redacted where it is read ([`super::fetch::error_answer`]).

/// A failed registry request. URLs are shown in backquotes, which end them for [`crate::redact::urls_in`].
#[derive(thiserror::Error, Debug)]
pub enum OciDistributionError {
    /// The credentials were refused, or no token could be had for them.
    #[error("Authentication failure: {0}")]
    AuthenticationFailure(String),
    /// The registry stored a blob under another digest than the one it was closed with.
    #[error("the registry computed digest {actual} for the blob pushed as {expected}")]
    DigestMismatch { expected: String, actual: String },
    /// Anything else, said in words.
    #[error("{}", .0.as_deref().unwrap_or("failed"))]
    GenericError(Option<String>),
    /// An answer with the registry's error envelope, and its status (a 5xx carrying an envelope, which
    /// distribution sends for a storage backend error, is as transient as one without).
    #[error("the registry answered `{url}` with HTTP {status} and an error envelope: {envelope}")]
    RegistryError { envelope: OciEnvelope, url: String, status: u16 },
    /// The request did not complete, or its answer could not be read.
    #[error(transparent)]
    RequestError(#[from] reqwest::Error),
    /// An error answer without an envelope.
    #[error("the registry answered `{url}` with HTTP {code}: {message}")]
    ServerError { code: u16, url: String, message: String },
}

/// One error of an envelope.
#[derive(serde::Deserialize, Debug)]
pub struct OciError {
    pub code: OciErrorCode,
    #[serde(default)]
    pub message: String,
    #[serde(default)]
    pub detail: serde_json::Value,
}

impl std::fmt::Display for OciError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OCI API error: {}", self.message)
    }
}

/// The registry's error answer, `{"errors":[{"code":…,"message":…,"detail":…}]}`.
#[derive(serde::Deserialize, Debug)]
pub struct OciEnvelope {
    pub errors: Vec<OciError>,
}

impl std::fmt::Display for OciEnvelope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let errors: Vec<String> = self.errors.iter().map(ToString::to_string).collect();
        write!(f, "OCI API errors: [{}]", errors.join("; "))
    }
}

/// The error codes of the distribution specification (and Docker Hub's rate limit); any other is kept as sent.
#[derive(serde::Deserialize, Debug, PartialEq, Eq)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum OciErrorCode {
    BlobUnknown,
    BlobUploadInvalid,
    BlobUploadUnknown,
    DigestInvalid,
    ManifestBlobUnknown,
    ManifestInvalid,
    ManifestUnknown,
    ManifestUnverified,
    NameInvalid,
    NameUnknown,
    NotFound,
    SizeInvalid,
    TagInvalid,
    Unauthorized,
    Denied,
    Unsupported,
    Toomanyrequests,
    #[serde(untagged)]
    Other(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelopes_parse_with_known_unknown_and_missing_fields() {
        let envelope: OciEnvelope = serde_json::from_str(
            r#"{"errors":[{"code":"UNAUTHORIZED","detail":[{"Type":"repository"}]},
                {"code":"TOOMANYREQUESTS","message":"slow down"},{"code":"ARTIFACT_LOCKED","message":"locked"}]}"#,
        )
        .unwrap();
        assert_eq!(envelope.errors[0].code, OciErrorCode::Unauthorized);
        assert_eq!(envelope.errors[0].message, "");
        assert_eq!(envelope.errors[1].code, OciErrorCode::Toomanyrequests);
        assert_eq!(envelope.errors[1].detail, serde_json::Value::Null);
        assert_eq!(envelope.errors[2].code, OciErrorCode::Other("ARTIFACT_LOCKED".into()));
        assert_eq!(
            envelope.to_string(),
            "OCI API errors: [OCI API error: ; OCI API error: slow down; OCI API error: locked]"
        );
    }
}
