//! Errors of the qcow2 container code, each with its exit status. No variant carries key material or a
//! passphrase; hints speak of the image and of qemu-img, never of cryptadm's flags (the command line adds those).

use crate::exit::{Classify, ExitStatus};
use std::borrow::Cow;

/// What can go wrong reading, writing or converting a qcow2 (or raw) disk image.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No qcow2 magic where one was expected.
    #[error("not a qcow2 image: {0}")]
    NotQcow2(String),
    /// A header, table or pointer that breaks the qcow2 rules (an L2 table outside the file, a misaligned offset).
    #[error("corrupt qcow2 image: {0}")]
    Corrupt(String),
    /// The file is shorter than its metadata says.
    #[error("truncated qcow2 image: {0}")]
    Truncated(String),
    /// Valid qcow2 that this implementation refuses (backing files, compressed clusters, legacy AES, …).
    #[error("unsupported qcow2 feature: {what}")]
    Unsupported {
        /// The feature.
        what: String,
        /// What the operator can do about it.
        hint: &'static str,
    },
    /// A parameter out of range (cluster size, virtual size, passphrase QEMU cannot use).
    #[error("invalid parameter: {0}")]
    InvalidParameter(String),
    /// The embedded or raw LUKS header failed (wrong passphrase, corrupt header, unsupported cipher).
    #[error(transparent)]
    Luks(#[from] crate::luks::Error),
    /// Reading or writing failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// Wraps an I/O error with what was being done.
    pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        let context = context.into();
        move |source| Error::Io { context, source }
    }

    /// A `Corrupt` error.
    pub(crate) fn corrupt(what: impl Into<String>) -> Self {
        Error::Corrupt(what.into())
    }

    /// An `Unsupported` error with its hint.
    pub(crate) fn unsupported(what: impl Into<String>, hint: &'static str) -> Self {
        Error::Unsupported { what: what.into(), hint }
    }
}

impl Classify for Error {
    fn status(&self) -> ExitStatus {
        match self {
            Error::NotQcow2(_)
            | Error::Corrupt(_)
            | Error::Truncated(_)
            | Error::Unsupported { .. }
            | Error::InvalidParameter(_) => ExitStatus::InvalidInput,
            Error::Luks(inner) => inner.status(),
            Error::Io { source, .. } => crate::exit::io_status(source.kind()),
        }
    }

    fn hint(&self) -> Option<Cow<'_, str>> {
        match self {
            Error::Unsupported { hint, .. } => Some(Cow::Borrowed(hint)),
            Error::Corrupt(_) => {
                Some(Cow::Borrowed("check the image with `qemu-img check`, or copy it again from its source"))
            }
            Error::Truncated(_) => Some(Cow::Borrowed("the image was cut short; copy it again from its source")),
            Error::Luks(inner) => inner.hint(),
            _ => None,
        }
    }
}
