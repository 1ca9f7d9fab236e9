//! Errors of the disk pipeline: refused outputs, sizes that do not fit, and the container and LUKS errors below.

use crate::exit::{Classify, ExitStatus};
use std::borrow::Cow;

/// What can go wrong choosing, checking or writing a disk output.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The output reaches the bytes of an input (the same file, a loop device over it, the disk of a partition).
    #[error("{output_flag} `{output}` is the input {input_flag} `{input}`{how}; writing it would destroy the input")]
    SameStorage {
        /// The output path.
        output: String,
        /// Its flag or argument name.
        output_flag: String,
        /// The input path.
        input: String,
        /// Its flag or argument name.
        input_flag: String,
        /// How they meet (empty for one file), e.g. " (a loop device over it)".
        how: String,
    },
    /// The output exists and holds something a write would destroy.
    #[error("`{path}` {what}; refusing to overwrite it")]
    Occupied {
        /// The output path.
        path: String,
        /// What is there.
        what: &'static str,
    },
    /// The output is neither a regular file nor a block device (or a block device where a file is needed).
    #[error("`{path}` is {what}")]
    Unwritable {
        /// The output path.
        path: String,
        /// What it is and why it cannot be written.
        what: String,
        /// What to do instead.
        hint: &'static str,
    },
    /// The block device is mounted or claimed by someone else: the kernel refused to open it exclusively.
    #[error(
        "`{path}` is in use (mounted, or claimed by device-mapper, md, swap or another program): the kernel \
             refused to open it exclusively"
    )]
    InUse {
        /// The device.
        path: String,
    },
    /// The data does not fit the block device.
    #[error("`{path}` is too small: {needed} bytes needed, the device has {len}")]
    TooSmall {
        /// The device.
        path: String,
        /// Bytes to write.
        needed: u64,
        /// Bytes the device has.
        len: u64,
    },
    /// The source could not be unlocked (wrong passphrase, corrupt keyslot).
    #[error("unlocking `{path}`: {source}")]
    Unlocking {
        /// The source.
        path: String,
        /// Why.
        #[source]
        source: crate::qcow2::Error,
    },
    /// The source could not be read (corrupt, unsupported, truncated, an I/O error).
    #[error("reading `{path}`: {source}")]
    Reading {
        /// The source.
        path: String,
        /// Why.
        #[source]
        source: crate::qcow2::Error,
    },
    /// The output could not be written.
    #[error("writing `{path}`: {source}")]
    Writing {
        /// The output.
        path: String,
        /// Why.
        #[source]
        source: crate::qcow2::Error,
    },
    /// A generated secret's file exists already.
    #[error("`{0}` exists; a generated secret never overwrites a file")]
    KeyFileExists(String),
    /// Parameters that do not fit together (exit 2).
    #[error("{0}")]
    Usage(String),
    /// Parameters that do not fit the data (exit 3).
    #[error("{0}")]
    Invalid(String),
    /// A qcow2 or raw image could not be read or written.
    #[error(transparent)]
    Qcow2(#[from] crate::qcow2::Error),
    /// A LUKS header could not be read, unlocked or written.
    #[error(transparent)]
    Luks(#[from] crate::luks::Error),
    /// A clevis binding could not be made or used (a Tang server unreachable, a threshold not reached).
    #[error(transparent)]
    Clevis(Box<crate::kms::clevis::Error>),
    /// The volume has no clevis token (`disk decrypt --clevis`).
    #[error("`{0}` has no clevis binding (no LUKS2 token of type `clevis`)")]
    NoClevisBinding(String),
    /// The caller's step before the output's rename (an upload) failed: the output was not put in place, and the
    /// caller holds the error that says why.
    #[error("the output was not put in place: the step before its rename failed")]
    Withheld,
    /// A TPM2 enrolment could not be made or used.
    #[error(transparent)]
    Tpm2(#[from] crate::kms::tpm2::Error),
    /// The volume has no `systemd-tpm2` token (`disk decrypt --tpm2`).
    #[error("`{0}` has no TPM2 enrolment (no LUKS2 token of type `systemd-tpm2`)")]
    NoTpm2Enrollment(String),
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
}

impl Classify for Error {
    fn status(&self) -> ExitStatus {
        match self {
            Error::SameStorage { .. } | Error::Usage(_) => ExitStatus::Usage,
            Error::InUse { .. } => ExitStatus::Aborted,
            Error::Occupied { .. }
            | Error::Unwritable { .. }
            | Error::TooSmall { .. }
            | Error::KeyFileExists(_)
            | Error::Invalid(_) => ExitStatus::InvalidInput,
            Error::Unlocking { source, .. } | Error::Reading { source, .. } | Error::Writing { source, .. } => {
                source.status()
            }
            Error::Qcow2(inner) => inner.status(),
            Error::Luks(inner) => inner.status(),
            Error::Clevis(inner) => inner.status(),
            Error::NoClevisBinding(_) | Error::NoTpm2Enrollment(_) => ExitStatus::NotFound,
            Error::Withheld => ExitStatus::Failure,
            Error::Tpm2(inner) => inner.status(),
            Error::Io { source, .. } => crate::exit::io_status(source.kind()),
        }
    }

    fn hint(&self) -> Option<Cow<'_, str>> {
        match self {
            Error::SameStorage { output_flag, .. } => Some(Cow::Owned(format!("give {output_flag} a new file"))),
            Error::Occupied { .. } => Some(Cow::Borrowed("check the destination; give --force to replace it")),
            Error::Unwritable { hint, .. } => Some(Cow::Borrowed(hint)),
            Error::TooSmall { .. } => Some(Cow::Borrowed("use a larger device, or write an image file instead")),
            Error::InUse { .. } => Some(Cow::Borrowed(
                "unmount it or release it (umount, dmsetup remove, swapoff, ...) first; --force does not override this",
            )),
            Error::KeyFileExists(_) => Some(Cow::Borrowed("give --new-key-file a path that does not exist yet")),
            Error::Unlocking { source, .. } | Error::Reading { source, .. } | Error::Writing { source, .. } => {
                source.hint()
            }
            Error::Qcow2(inner) => inner.hint(),
            Error::Luks(inner) => inner.hint(),
            Error::Clevis(inner) => inner.hint(),
            Error::NoClevisBinding(_) => Some(Cow::Borrowed(
                "bind it with `cryptadm disk clevis-bind` (or `clevis luks bind`), or give a passphrase",
            )),
            Error::NoTpm2Enrollment(_) => Some(Cow::Borrowed(
                "enrol it with `cryptadm disk tpm2-enroll` (or `systemd-cryptenroll --tpm2-device`), or give a passphrase",
            )),
            Error::Tpm2(inner) => inner.hint(),
            Error::Usage(_) | Error::Invalid(_) | Error::Withheld => None,
            Error::Io { source, context } if source.kind() == std::io::ErrorKind::PermissionDenied => {
                context.starts_with("writing").then_some(Cow::Borrowed(
                    "check the owner and mode of the destination and of its directory, or run as a user that may \
                     write there",
                ))
            }
            Error::Io { .. } => None,
        }
    }
}

impl From<crate::kms::clevis::Error> for Error {
    fn from(error: crate::kms::clevis::Error) -> Self {
        Error::Clevis(Box::new(error))
    }
}

/// An I/O error of the output's partial file, rename or device (the pipeline then names the output).
impl From<std::io::Error> for Error {
    fn from(source: std::io::Error) -> Self {
        Error::Io { context: "writing the output".into(), source }
    }
}
