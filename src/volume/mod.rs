//! Key-encryption-key rotation of LUKS1/LUKS2 volumes: the core of `cryptadm volume rotate` and `volume serve`.
//!
//! The passphrase that opens a volume lives in a key store ([`keystore`]: the built-in `file://DIR` and
//! `vault-kv://` stores or a `cryptadm-plugin-kms-NAME` plugin). [`rotate`] replaces it with a new one in the
//! crash-safe order of `docs/key-rotation.md`: the new key is recorded as *pending* before the header changes, added to a free
//! keyslot with the old slot's KDF, verified by unlocking from disk, committed as *current*, and only then is
//! the old keyslot wiped and removed. At every instant the store's current key opens a keyslot, and a rerun after
//! a crash finishes the interrupted rotation instead of starting another. [`lock`] makes sure one
//! operation per volume runs at a time; [`request`] is the CSI-Addons `EncryptionKeyRotateRequest` as JSON.
//!
//! Like every core module this one never prints, prompts, exits or reads the environment.

pub mod authority;
pub mod import;
pub mod keystore;
pub mod lock;
mod luks_slots;
pub mod operation;
pub mod proto;
pub mod request;
pub mod resolve;
pub mod rotate;
pub mod server;

pub use keystore::{KeyStore, StoredKeys};
pub use request::RotateRequest;
pub use rotate::{Keyslots, Outcome, Step};

use crate::exit::{Classify, ExitStatus};
use std::borrow::Cow;
use std::path::PathBuf;

/// Why a rotation failed. Messages never carry key material.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A required request field is missing or empty.
    #[error("the request has no `{field}`")]
    MissingField {
        /// The field's name in the request.
        field: &'static str,
    },
    /// The request is not what the CSI-Addons RPC carries.
    #[error("malformed request: {0}")]
    BadRequest(String),
    /// The volume path does not exist.
    #[error("volume `{path}` does not exist")]
    VolumeNotFound {
        /// The path that was given.
        path: PathBuf,
    },
    /// The request has no volume path and none of the configured ways found the volume's device.
    #[error("no device found for volume `{volume_id}`; tried {tried}")]
    NoDevice {
        /// The volume id asked for.
        volume_id: String,
        /// What was tried, in order.
        tried: String,
    },
    /// More than one active dm-crypt mapping matches the volume id: cryptadm does not guess.
    #[error("more than one device matches volume `{volume_id}`: {}", candidates.join(", "))]
    AmbiguousDevice {
        /// The volume id asked for.
        volume_id: String,
        /// The matching mappings and their devices.
        candidates: Vec<String>,
    },
    /// The key store knows no key for the volume id.
    #[error("the key store has no key for volume `{volume_id}`")]
    NoStoredKey {
        /// The volume id asked for.
        volume_id: String,
    },
    /// The passphrase `volume import` was given opens no keyslot of the volume.
    #[error("the passphrase given opens no keyslot of `{}`; nothing was written", path.display())]
    WrongPassphrase {
        /// The volume.
        path: PathBuf,
    },
    /// `volume import` found a key stored for the volume already.
    #[error("the key store holds a key for volume `{volume_id}` already; nothing was written")]
    AlreadyStored {
        /// The volume id.
        volume_id: String,
    },
    /// Another operation holds the volume's lock.
    #[error("another operation is in progress on {what}")]
    Busy {
        /// The volume path or volume id that is locked.
        what: String,
    },
    /// Another run (maybe on another node) holds the volume's rotation claim in the key store.
    #[error(
        "another rotation of volume `{volume_id}` holds its claim in the key store ({holder}); nothing was written"
    )]
    Claimed {
        /// The volume id.
        volume_id: String,
        /// Who holds the claim ([`keystore::Claim::describe`]).
        holder: String,
    },
    /// Neither the stored current key nor the pending one opens any keyslot.
    #[error("no keyslot of the volume opens with the key from the key store")]
    NoKeyslotOpens,
    /// The LUKS header could not be read or changed (the status comes from the LUKS library's classification).
    #[error("{source}")]
    Header {
        /// Exit status of the underlying error.
        status: ExitStatus,
        /// What failed.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The key store failed (I/O, a plugin that failed, rejected its secrets or printed nonsense).
    #[error("key store: {message}")]
    Store {
        /// Exit status: [`ExitStatus::Unauthenticated`] when the store rejected the request's secrets.
        status: ExitStatus,
        /// What failed (never a secret).
        message: String,
    },
    /// The key manager behind a `vault-kv://` store failed: its exit status and its hint are its own (the hint
    /// printed on its own `hint:` line, as every command prints it).
    #[error("key store: {0}")]
    KeyManager(Box<crate::kms::Error>),
    /// The step observer stopped the rotation (tests of the crash-safe order).
    #[error("rotation stopped after step `{0}`")]
    Interrupted(Step),
    /// An I/O error outside the header (locks, the volume path).
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The cause.
        source: std::io::Error,
    },
}

impl Error {
    pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> Error {
        let context = context.into();
        move |source| Error::Io { context, source }
    }
}

impl Classify for Error {
    fn status(&self) -> ExitStatus {
        match self {
            Error::MissingField { .. } | Error::BadRequest(_) => ExitStatus::InvalidInput,
            Error::VolumeNotFound { .. } | Error::NoStoredKey { .. } | Error::NoDevice { .. } => ExitStatus::NotFound,
            Error::AmbiguousDevice { .. } | Error::AlreadyStored { .. } => ExitStatus::InvalidInput,
            Error::Busy { .. } | Error::Claimed { .. } => ExitStatus::Aborted,
            Error::NoKeyslotOpens | Error::WrongPassphrase { .. } => ExitStatus::Unauthenticated,
            Error::Header { status, .. } | Error::Store { status, .. } => *status,
            Error::KeyManager(error) => error.status(),
            Error::Interrupted(_) => ExitStatus::Failure,
            Error::Io { source, .. } => crate::exit::io_status(source.kind()),
        }
    }

    fn hint(&self) -> Option<Cow<'_, str>> {
        let hint = match self {
            Error::KeyManager(error) => return error.hint(),
            Error::MissingField { .. } => "the request needs `volume_id`",
            Error::NoDevice { .. } => {
                "is the volume staged on this node? Its dm-crypt mapping must be named `<volume id>` or `*-<volume id>`"
            }
            Error::AmbiguousDevice { .. } => "give the volume path explicitly; cryptadm does not guess",
            Error::BadRequest(_) => {
                "the request is a JSON object with volume_id, volume_path, encryption_key, parameters, secrets"
            }
            Error::VolumeNotFound { .. } => "check the volume path (an image file or a block device)",
            Error::NoStoredKey { .. } => {
                return Some(Cow::Owned(format!(
                    "check the volume id and the key store: it holds no current passphrase for this volume ({})",
                    crate::kms::backends::store_locations()
                )));
            }
            Error::WrongPassphrase { .. } => "give the passphrase that opens the volume now (it is checked first)",
            Error::AlreadyStored { .. } => {
                "to replace it with the given passphrase, give --force (the passphrase must open the volume)"
            }
            Error::Busy { .. } => "another rotation of this volume is running; retry when it has finished",
            Error::Claimed { .. } => {
                "retry when that rotation has finished; if its run is dead, the claim can be taken over when it \
                 expires, or at once with `volume rotate --take-over-claim` (docs/volume-rotation.md)"
            }
            Error::NoKeyslotOpens => "the key store's key does not open the volume; nothing was changed",
            _ => return None,
        };
        Some(Cow::Borrowed(hint))
    }
}

/// Longest escaped id used as a file name as it is; longer ones are shortened (see [`file_name_for_id`]). NAME_MAX
/// is 255 bytes and the lock file adds `.lock` (the file store's entries live inside the id's directory): every id
/// that worked before shortening existed keeps its name.
const MAX_PLAIN_NAME: usize = 255 - ".lock".len();
/// Bytes of the escaped id kept before the hash in a shortened name.
const SHORTENED_PREFIX: usize = 120;

/// A volume id as one safe file name: bytes outside `[A-Za-z0-9._-]`, and a leading `.`, become `%XX`, so ids
/// with `/` or `..` cannot escape a directory and distinct ids never share a name. An escaped id longer than 200
/// bytes (a CSI id may be 128 bytes, and escaping triples it) becomes its first 120 bytes (never cutting a `%XX`),
/// `~`, and the SHA-256 of the whole id in hex: readable, within NAME_MAX, and never equal to the name of another
/// id (`~` is not in the alphabet of escaped names). Shorter ids keep the name they always had.
pub fn file_name_for_id(volume_id: &str) -> String {
    let mut name = String::with_capacity(volume_id.len());
    for (index, byte) in volume_id.bytes().enumerate() {
        let plain = byte.is_ascii_alphanumeric() || b"_-".contains(&byte) || (byte == b'.' && index > 0);
        if plain {
            name.push(byte as char);
        } else {
            name.push_str(&format!("%{byte:02X}"));
        }
    }
    if name.len() <= MAX_PLAIN_NAME {
        return name;
    }
    use sha2::Digest;
    let mut cut = SHORTENED_PREFIX;
    // Never in the middle of a `%XX` escape.
    if let Some(percent) = name[cut.saturating_sub(2)..cut].find('%') {
        cut = cut - 2 + percent;
    }
    format!("{}~{}", &name[..cut], hex::encode(sha2::Sha256::digest(volume_id.as_bytes())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_become_safe_distinct_file_names() {
        assert_eq!(file_name_for_id("pvc-1234_a.b"), "pvc-1234_a.b");
        assert_eq!(file_name_for_id("../etc"), "%2E.%2Fetc");
        assert_eq!(file_name_for_id("a/b"), "a%2Fb");
        assert_ne!(file_name_for_id("a%2Fb"), file_name_for_id("a/b"));
        assert_eq!(file_name_for_id(".."), "%2E.");
    }

    #[test]
    fn long_ids_are_shortened_with_a_hash_and_short_ones_keep_their_names() {
        let short = "a".repeat(MAX_PLAIN_NAME);
        assert_eq!(file_name_for_id(&short), short);
        // 128 bytes that all need escaping: 384 bytes escaped.
        let long = "/".repeat(128);
        let name = file_name_for_id(&long);
        assert!(name.len() <= 200 && name.starts_with("%2F%2F") && name.contains('~'), "{name}");
        let prefix = name.split('~').next().unwrap();
        assert!(prefix.len().is_multiple_of(3) && prefix.len() <= SHORTENED_PREFIX, "a cut escape: {prefix}");
        let mut other = long.clone();
        other.push('x');
        assert_ne!(file_name_for_id(&other), name);
        let mixed = format!("pvc-{}", "x/".repeat(80));
        let name = file_name_for_id(&mixed);
        assert!(name.starts_with("pvc-x%2Fx") && !name.split('~').next().unwrap().ends_with('%'), "{name}");
    }

    #[test]
    fn statuses_follow_the_exit_table() {
        assert_eq!(Error::MissingField { field: "volume_id" }.status(), ExitStatus::InvalidInput);
        assert_eq!(Error::VolumeNotFound { path: "/x".into() }.status(), ExitStatus::NotFound);
        assert_eq!(Error::Busy { what: "x".into() }.status(), ExitStatus::Aborted);
        assert_eq!(Error::NoKeyslotOpens.status(), ExitStatus::Unauthenticated);
    }
}
