//! Errors of the LUKS library, each with its exit status. No variant carries key material or a passphrase.

use crate::exit::{Classify, ExitStatus};
use std::borrow::Cow;

/// What can go wrong reading, unlocking or changing a LUKS header.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No LUKS magic at the start of the device (and, for LUKS2, no secondary header either).
    #[error("not a LUKS device: {0}")]
    NotLuks(String),
    /// A header that has the magic but breaks the format rules (checksum, JSON, layout).
    #[error("corrupt LUKS header: {what}")]
    Corrupt {
        /// What is wrong, naming the copy (`primary`, `secondary`) where it matters.
        what: String,
    },
    /// Something valid in LUKS that this library does not implement (a cipher, a hash, a reencryption state).
    #[error("unsupported LUKS feature: {what}")]
    Unsupported {
        /// The feature, e.g. `cipher serpent-cbc-plain`.
        what: String,
    },
    /// A detached header (`cryptsetup luksFormat --header HDR DATA`): the data segment is on another device.
    #[error("a detached LUKS header: its data segment starts inside the header, the encrypted data is elsewhere")]
    DetachedHeader,
    /// The image or device is shorter than its header says (truncated copy).
    #[error("truncated LUKS device: {0}")]
    Truncated(String),
    /// No active keyslot opens with the given passphrase.
    #[error("no keyslot opens with this passphrase")]
    NoKeyslotOpens,
    /// The named keyslot does not open with the given passphrase.
    #[error("keyslot {0} does not open with this passphrase")]
    WrongPassphrase(u32),
    /// The named keyslot is not active.
    #[error("keyslot {0} is not active")]
    KeyslotNotActive(u32),
    /// Every keyslot id (or, for LUKS2, the keyslots area) is in use.
    #[error("no free keyslot")]
    NoFreeKeyslot,
    /// Removing this keyslot would leave a volume no passphrase opens.
    #[error("keyslot {0} is the last active keyslot")]
    LastKeyslot(u32),
    /// The volume key given to `add_keyslot` is not this volume's key (it fails the header digest).
    #[error("the volume key does not match this volume's digest")]
    VolumeKeyMismatch,
    /// A parameter the caller chose is out of the range cryptsetup accepts.
    #[error("invalid parameter: {0}")]
    InvalidParameter(String),
    /// Another writer changed the header between our read and our write (the on-disk seqid moved).
    #[error("the LUKS header changed on disk while it was being updated (seqid {expected} expected, {found} found)")]
    ConcurrentUpdate {
        /// The seqid we read.
        expected: u64,
        /// The seqid on disk now.
        found: u64,
    },
    /// Reading or writing the device failed.
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
    /// A `Corrupt` error.
    pub(crate) fn corrupt(what: impl Into<String>) -> Self {
        Error::Corrupt { what: what.into() }
    }

    /// An `Unsupported` error.
    pub(crate) fn unsupported(what: impl Into<String>) -> Self {
        Error::Unsupported { what: what.into() }
    }

    /// Wraps an I/O error with what was being done.
    pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        let context = context.into();
        move |source| Error::Io { context, source }
    }
}

impl Classify for Error {
    fn status(&self) -> ExitStatus {
        match self {
            Error::NoKeyslotOpens | Error::WrongPassphrase(_) => ExitStatus::Unauthenticated,
            Error::NotLuks(_)
            | Error::Corrupt { .. }
            | Error::Unsupported { .. }
            | Error::Truncated(_)
            | Error::DetachedHeader
            | Error::NoFreeKeyslot
            | Error::LastKeyslot(_)
            | Error::VolumeKeyMismatch
            | Error::InvalidParameter(_) => ExitStatus::InvalidInput,
            Error::KeyslotNotActive(_) => ExitStatus::NotFound,
            Error::ConcurrentUpdate { .. } => ExitStatus::Aborted,
            Error::Io { source, .. } => crate::exit::io_status(source.kind()),
        }
    }

    fn hint(&self) -> Option<Cow<'_, str>> {
        let hint = match self {
            Error::DetachedHeader => {
                "cryptadm works on images whose header precedes their data; with the data device, cryptsetup opens \
                 it (`cryptsetup open --header HEADER DATA NAME`)"
            }
            Error::NoKeyslotOpens | Error::WrongPassphrase(_) => {
                "check the passphrase source (a key file is used byte for byte, trailing newline included)"
            }
            Error::NotLuks(_) => "check the path: it must be a LUKS1 or LUKS2 image file or block device",
            Error::Corrupt { .. } => "restore the header from a backup (`cryptsetup luksHeaderRestore`)",
            Error::Truncated(_) => "the image was cut short; copy it again from its source",
            Error::Unsupported { .. } => "use cryptsetup for this volume",
            Error::LastKeyslot(_) => "add another keyslot first, so some passphrase still opens the volume",
            Error::NoFreeKeyslot => "remove an unused keyslot first",
            Error::ConcurrentUpdate { .. } => "another program is changing this volume; retry when it has finished",
            _ => return None,
        };
        Some(Cow::Borrowed(hint))
    }
}
