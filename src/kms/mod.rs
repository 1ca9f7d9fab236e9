//! Key managers: one reference syntax and one small set of operations for every command that holds a key.
//!
//! `machineadm/` (bootstrap envelopes), `volume/` (key stores), `ocicrypt/` (layer-key wrapping) and the disk
//! pipeline ask this layer for keys; they never speak a key manager's protocol themselves. A backend is one module
//! (`vault`, `barbican`, later KMIP or PKCS#11) implementing the traits below that fit it:
//!
//! | trait | operations | Vault/OpenBao | Barbican |
//! | --- | --- | --- | --- |
//! | [`Wrapping`] | data key, wrap, unwrap, rewrap, rotate the key-encryption key | Transit | — |
//! | [`VersionedStore`] | read and write a secret's fields with check-and-set | KV v2 | — |
//! | [`SecretStore`] | create, fetch, delete a secret; register and remove consumers | — | secrets, consumers |
//!
//! KMIP ([`kmip`]) is its own client (Create, Register, Get, Locate, Activate, Revoke, Destroy, Encrypt/Decrypt
//! with AES-GCM): KMIP has no check-and-set, so the `kmip://` key store builds its state machine on it directly.
//!
//! AWS ([`aws`]) implements [`Wrapping`] with KMS (GenerateDataKey, Encrypt, Decrypt, ReEncrypt) and reads
//! Secrets Manager, SSM parameters and S3 objects; its credentials come as a provider object that refreshes itself.
//!
//! Tang (`tang`, with clevis's pins in `clevis`) fits none of them: it holds no secret and wraps nothing on
//! request. A small secret is encrypted locally to the server's advertised key and recovered through a blinded
//! exchange with the server; [`clevis::encrypt`] and [`clevis::decrypt`] are its two operations.
//!
//! Credentials, server addresses and TLS settings are resolved by `cmd/` (environment variables, token files,
//! `clouds.yaml`) and handed down as values: this layer reads no environment and prints nothing. Every URL it
//! puts in an error goes through [`crate::redact::url`] and every server message through
//! [`crate::redact::server_message`].

pub mod aws;
pub mod backends;
pub mod barbican;
pub mod clevis;
pub mod http;
pub mod keystone;
pub mod kmip;
pub mod reference;
pub mod tang;
pub mod tpm2;
pub mod vault;

pub use reference::KeyRef;

use crate::crypto::SecretBytes;
use crate::exit::{Classify, ExitStatus};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// A data key from a key manager: the plaintext to use now, and the same key wrapped by the key-encryption key,
/// to store beside what it protects.
#[derive(Debug)]
pub struct DataKey {
    /// The key itself; wiped on drop.
    pub plaintext: SecretBytes,
    /// The wrapped key, in the key manager's own text form (Transit: `vault:vN:…`).
    pub wrapped: String,
}

/// A key-encryption key held by the key manager, which never lets it out (Vault Transit, a KMS key).
pub trait Wrapping {
    /// A new random data key of `bytes` bytes, in plaintext and wrapped by `key`.
    fn generate_data_key(&self, key: &str, bytes: usize) -> Result<DataKey, Error>;
    /// Wraps a small secret with `key`.
    fn wrap(&self, key: &str, plaintext: &[u8]) -> Result<String, Error>;
    /// Unwraps what [`Wrapping::wrap`] or [`Wrapping::generate_data_key`] returned, by any version of `key`.
    fn unwrap(&self, key: &str, wrapped: &str) -> Result<SecretBytes, Error>;
    /// Wraps again with the newest version of `key`, the plaintext never leaving the key manager.
    fn rewrap(&self, key: &str, wrapped: &str) -> Result<String, Error>;
    /// Makes a new version of `key` the one that wraps; older versions still unwrap.
    fn rotate_key(&self, key: &str) -> Result<(), Error>;
    /// Wraps a small secret with `key`, bound to `context` (AWS KMS: the encryption context; Transit: associated
    /// data): only [`Wrapping::unwrap_bound`] with the same context unwraps it. An empty context is [`Wrapping::wrap`].
    fn wrap_bound(&self, key: &str, plaintext: &[u8], context: &Context) -> Result<String, Error> {
        if context.is_empty() { self.wrap(key, plaintext) } else { Err(unbound(key)) }
    }
    /// Unwraps what [`Wrapping::wrap_bound`] returned for the same `context`.
    fn unwrap_bound(&self, key: &str, wrapped: &str, context: &Context) -> Result<SecretBytes, Error> {
        if context.is_empty() { self.unwrap(key, wrapped) } else { Err(unbound(key)) }
    }
    /// Rewraps a value bound to `from` with the newest version of `key`, bound to `to`.
    fn rewrap_bound(&self, key: &str, wrapped: &str, from: &Context, to: &Context) -> Result<String, Error> {
        if from.is_empty() && to.is_empty() { self.rewrap(key, wrapped) } else { Err(unbound(key)) }
    }
}

/// What a wrapped value is bound to: the AWS KMS encryption context, or what Transit authenticates as associated
/// data. Names and values are text; the order is the names' (KMS ignores order; Transit gets it serialised).
pub type Context = BTreeMap<String, String>;

fn unbound(key: &str) -> Error {
    Error::Config(format!("key `{key}`: this key manager cannot bind a wrapped value to a context"))
}

/// One version of a secret in a [`VersionedStore`]: its fields and the version number check-and-set compares.
#[derive(Debug, Default)]
pub struct Versioned {
    /// Field name → value. Values are secrets and are wiped on drop.
    pub fields: BTreeMap<String, SecretBytes>,
    /// The version these fields are; 0 for "no such secret yet".
    pub version: u64,
}

/// A store of small secrets with versions and check-and-set (Vault KV v2).
pub trait VersionedStore {
    /// The newest version of the secret at `path`; `None` when it does not exist (or its newest version was
    /// deleted).
    fn read(&self, path: &str) -> Result<Option<Versioned>, Error>;
    /// Writes a new version of `path` when its newest version is still `expected_version` (0: the secret must
    /// not exist yet); [`Error::Conflict`] when another writer came first. Returns the new version.
    fn write(&self, path: &str, fields: &BTreeMap<String, SecretBytes>, expected_version: u64) -> Result<u64, Error>;
}

/// What a new secret in a [`SecretStore`] is.
#[derive(Debug)]
pub struct NewSecret<'a> {
    /// A human name for the secret (Barbican's `name`).
    pub name: &'a str,
    /// The key manager's secret type (Barbican: `passphrase`, `symmetric`).
    pub secret_type: &'a str,
    /// The algorithm, bit length and mode of a symmetric key, when the type has them.
    pub algorithm: Option<(&'a str, u32, &'a str)>,
    /// The secret's bytes.
    pub payload: &'a [u8],
}

/// Who uses a secret (Barbican's consumer API: service, resource type, resource id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Consumer {
    /// The consuming service, e.g. `glance`.
    pub service: String,
    /// The kind of resource, e.g. `image`.
    pub resource_type: String,
    /// The resource's id, e.g. the image id.
    pub resource_id: String,
}

/// A store of whole secrets addressed by id (Barbican).
pub trait SecretStore {
    /// Stores a secret; returns its id (the UUID) .
    fn create(&self, secret: &NewSecret<'_>) -> Result<String, Error>;
    /// The payload of secret `id` (a UUID or the secret's href).
    fn payload(&self, id: &str) -> Result<SecretBytes, Error>;
    /// The secret type of secret `id`.
    fn secret_type(&self, id: &str) -> Result<String, Error>;
    /// Deletes secret `id`; a secret that is already gone is success.
    fn delete(&self, id: &str) -> Result<(), Error>;
    /// Registers `consumer` on secret `id` (idempotent).
    fn add_consumer(&self, id: &str, consumer: &Consumer) -> Result<(), Error>;
    /// Removes `consumer` from secret `id` (one that is not registered is success).
    fn remove_consumer(&self, id: &str, consumer: &Consumer) -> Result<(), Error>;
}

/// A refusal with the key manager's own error code (see [`Error::Refused`]): the fields of that variant, boxed to
/// keep [`Error`] small.
#[derive(Debug)]
pub struct Refusal {
    /// What was asked.
    pub what: String,
    /// The key manager.
    pub service: String,
    /// The key manager's error code, e.g. `KMSInvalidStateException`.
    pub code: String,
    /// The server's words, bounded and escaped.
    pub message: String,
    /// The exit status the code means.
    pub status: ExitStatus,
    /// What to do about it.
    pub hint: Option<String>,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {} refused it: {}: {}", self.what, self.service, self.code, self.message)
    }
}

/// What went wrong talking to a key manager, in the key manager's terms. Messages never hold a secret, a token
/// or a URL's credentials.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A reference (`vault-transit://…`, a secret href) that cannot be parsed.
    #[error("key reference `{reference}`: {problem}")]
    BadReference {
        /// The reference as given (redacted).
        reference: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The key manager refused the credentials or the operation (HTTP 401/403, a failed login).
    #[error("{what}: permission denied by {service}: {message}")]
    Denied {
        /// What was asked, e.g. "decrypting with Transit key `transit/capi`".
        what: String,
        /// The key manager, e.g. "OpenBao at https://127.0.0.1:8200".
        service: String,
        /// The server's words, bounded and escaped.
        message: String,
    },
    /// The key, secret or path does not exist.
    #[error("{what}: not found on {service}")]
    NotFound {
        /// What was looked for.
        what: String,
        /// The key manager.
        service: String,
    },
    /// Another writer changed the secret first (check-and-set failed).
    #[error("{what}: changed by another writer (expected version {expected})")]
    Conflict {
        /// What was written.
        what: String,
        /// The version this writer had read.
        expected: u64,
    },
    /// The key manager cannot be reached, is sealed, or answered 5xx after the retries.
    #[error("{what}: {service} is unavailable: {problem}")]
    Unavailable {
        /// What was asked.
        what: String,
        /// The key manager.
        service: String,
        /// Why (connection refused, sealed, HTTP 503 after N attempts).
        problem: String,
        /// What to do about it.
        hint: Option<String>,
    },
    /// The server's TLS certificate does not verify.
    #[error("{service}: the server's certificate does not verify: {problem}")]
    Tls {
        /// The key manager.
        service: String,
        /// What rustls said.
        problem: String,
    },
    /// A key manager refused with an error code of its own, classed by the backend (AWS:
    /// `AccessDeniedException` → 16, `KMSInvalidStateException` → 16, …).
    #[error("{0}")]
    Refused(Box<Refusal>),
    /// No credentials were found, or those found cannot be used (an expired session, a token file that cannot be
    /// read); the problem names every place searched.
    #[error("{problem}")]
    Credentials {
        /// What is missing or wrong, with the places searched.
        problem: String,
        /// What to do about it.
        hint: String,
    },
    /// A local setting is wrong: an unreadable token file, a CA file that is not PEM, a missing address.
    #[error("{0}")]
    Config(String),
    /// What was being sent could not be read locally (a streamed upload's source failed).
    #[error("{what}: reading what is sent: {source}")]
    Input {
        /// What was asked.
        what: String,
        /// The local read error.
        #[source]
        source: std::io::Error,
    },
    /// Something the key manager said is not what the protocol promises (a malformed answer, an unexpected
    /// status).
    #[error("{what}: unexpected answer from {service}: {problem}")]
    Protocol {
        /// What was asked.
        what: String,
        /// The key manager.
        service: String,
        /// What came back (bounded and escaped).
        problem: String,
    },
    /// An answer larger than the bound of what was asked (bad input, as every over-size input: a retry gets the
    /// same).
    #[error("{what}: the answer from {service} is over the {limit}-byte limit")]
    TooLarge {
        /// What was asked.
        what: String,
        /// The key manager.
        service: String,
        /// The bound, in bytes.
        limit: usize,
    },
    /// A local file the client needs (a CA certificate, a token, a JWT) cannot be read.
    #[error("{what} `{path}`: {source}")]
    File {
        /// What the file is, e.g. "Vault token file".
        what: String,
        /// Its path as given.
        path: String,
        /// Why it cannot be read.
        #[source]
        source: std::io::Error,
        /// What to do about it, when more can be said than "check the path".
        hint: Option<&'static str>,
    },
}

impl Classify for Error {
    fn status(&self) -> ExitStatus {
        match self {
            Self::BadReference { .. } | Self::Config(_) | Self::TooLarge { .. } => ExitStatus::InvalidInput,
            Self::Denied { .. } | Self::Tls { .. } => ExitStatus::Unauthenticated,
            Self::File { source, .. } if source.kind() == std::io::ErrorKind::NotFound => ExitStatus::NotFound,
            Self::File { .. } => ExitStatus::InvalidInput,
            Self::NotFound { .. } => ExitStatus::NotFound,
            Self::Conflict { .. } => ExitStatus::Aborted,
            Self::Unavailable { hint: Some(hint), .. } if hint == crate::deadline::HINT => ExitStatus::DeadlineExceeded,
            Self::Unavailable { .. } | Self::Protocol { .. } => ExitStatus::Failure,
            Self::Input { source, .. } => crate::exit::io_status(source.kind()),
            Self::Refused(refusal) => refusal.status,
            Self::Credentials { .. } => ExitStatus::Unauthenticated,
        }
    }

    fn hint(&self) -> Option<Cow<'_, str>> {
        match self {
            Self::Denied { .. } => {
                Some("check the token or login role and that its policy allows this operation on this key".into())
            }
            Self::Unavailable { hint: Some(hint), .. } => Some(hint.as_str().into()),
            Self::Unavailable { .. } => Some("check the server address and that the server is up; then retry".into()),
            Self::Conflict { .. } => Some("another operation on the same secret is under way; retry later".into()),
            Self::Tls { .. } => Some("give the CA that signed the server's certificate".into()),
            Self::Refused(refusal) => refusal.hint.as_deref().map(Into::into),
            Self::Credentials { hint, .. } => Some(hint.as_str().into()),
            Self::File { hint: Some(hint), .. } => Some((*hint).into()),
            _ => None,
        }
    }
}
