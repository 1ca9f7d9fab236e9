//! Errors of the image stores, each with its exit status.

use crate::exit::{Classify, ExitStatus};
use std::borrow::Cow;

/// What can go wrong reading or writing an image store (layout, archive, registry). No variant carries
/// credentials.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Malformed image metadata (manifest, index, reference, descriptor) or store configuration.
    #[error("{0}")]
    Malformed(String),
    /// A blob's digest or size does not match what names it.
    #[error("{0}")]
    Integrity(String),
    /// A blob, manifest, tag or repository does not exist.
    #[error("{0}")]
    NotFound(String),
    /// Reading or writing failed (disk full, permissions, an unreachable registry).
    #[error("{0}")]
    Io(String),
    /// A registry refused the credentials (HTTP 401/403).
    #[error("{0}")]
    RegistryDenied(String),
    /// The registry could not be reached or did not answer in time, for a reason the operator can fix.
    #[error("{message}")]
    Unreachable {
        /// What happened.
        message: String,
        /// What to do about it.
        hint: &'static str,
    },
}

impl Error {
    /// The same error, its message prefixed with the blob it happened in.
    pub fn in_blob(self, digest: &str) -> Self {
        let prefix = |m: String| format!("blob {digest}: {m}");
        match self {
            Error::Malformed(m) => Error::Malformed(prefix(m)),
            Error::Integrity(m) => Error::Integrity(prefix(m)),
            Error::NotFound(m) => Error::NotFound(prefix(m)),
            Error::Io(m) => Error::Io(prefix(m)),
            Error::RegistryDenied(m) => Error::RegistryDenied(prefix(m)),
            Error::Unreachable { message, hint } => Error::Unreachable { message: prefix(message), hint },
        }
    }
}

impl Classify for Error {
    fn status(&self) -> ExitStatus {
        match self {
            Error::Malformed(_) => ExitStatus::InvalidInput,
            Error::Integrity(_) => ExitStatus::DataLoss,
            Error::NotFound(_) => ExitStatus::NotFound,
            Error::Unreachable { hint, .. } if *hint == crate::deadline::HINT => ExitStatus::DeadlineExceeded,
            Error::Io(_) | Error::Unreachable { .. } => ExitStatus::Failure,
            Error::RegistryDenied(_) => ExitStatus::Unauthenticated,
        }
    }

    fn hint(&self) -> Option<Cow<'_, str>> {
        match self {
            Error::RegistryDenied(_) => Some(Cow::Borrowed("check the registry credentials")),
            Error::Unreachable { hint, .. } => Some(Cow::Borrowed(hint)),
            Error::Integrity(_) => {
                Some(Cow::Borrowed("the image is corrupted or was tampered with; fetch it again from its source"))
            }
            _ => None,
        }
    }
}
