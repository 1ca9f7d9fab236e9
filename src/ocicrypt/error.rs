//! Errors of image encryption, each with its exit status.

use crate::exit::{Classify, ExitStatus};
use std::borrow::Cow;

/// What can go wrong encrypting, decrypting or authorizing image layers. No variant carries key material.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Key material that cannot be used: unparseable, wrong kind (a public key where a private one is needed),
    /// unsupported algorithm or curve.
    #[error("{what}: {problem}")]
    InvalidKey {
        /// Which key (a file name or recipient spec).
        what: String,
        /// Why it cannot be used.
        problem: String,
    },
    /// An encrypted private key file whose password does not open it.
    #[error("{what}: {problem}")]
    WrongKeyPassword {
        /// Which key (a file name).
        what: String,
        /// What failed, without the password.
        problem: String,
    },
    /// A wrapped key (JWE, PKCS#7, OpenPGP message, provider blob) that cannot be parsed.
    #[error("{scheme} wrapped key: {problem}")]
    MalformedWrappedKey {
        /// `jwe`, `pkcs7`, `pgp`, `provider.NAME`.
        scheme: String,
        /// What is wrong with it.
        problem: String,
    },
    /// Wrapping a layer key for a recipient failed.
    #[error("{scheme}: cannot wrap the layer key: {problem}")]
    Wrap {
        /// `jwe`, `pkcs7`, `pgp`, `provider.NAME`.
        scheme: String,
        /// Why.
        problem: String,
    },
    /// Unwrapping failed for a reason other than "not my key": an external key provider that cannot be run,
    /// times out, fails or answers nonsense.
    #[error("{scheme}: cannot unwrap the layer key: {problem}")]
    Unwrap {
        /// `pgp` (gpg failed), `provider.NAME`.
        scheme: String,
        /// Why.
        problem: String,
    },
    /// A key manager (Vault/OpenBao Transit) refused, or has no such key, or cannot be reached, while wrapping or
    /// unwrapping a layer key; the exit status and hint are the key manager's.
    #[error("{scheme}: {error}")]
    KeyManager {
        /// `provider.cryptadm`.
        scheme: String,
        /// What the key manager said.
        error: crate::kms::Error,
    },
    /// A secret key that fits a wrapped key is protected by a passphrase that none of the given ones unlocks.
    #[error("{what} is protected by a passphrase, and no passphrase given unlocks it")]
    KeyLocked {
        /// Which key (an OpenPGP key ID and user ID).
        what: String,
    },
    /// Malformed image metadata (manifest, index, annotation, options JSON) or configuration (key providers).
    #[error("{0}")]
    Malformed(String),
    /// None of the given keys unwraps a layer key.
    #[error("{0}")]
    Unauthenticated(String),
    /// None of the given keys unwraps a layer key, and a key manager refused to unwrap it with a key the layer
    /// names (denied, a disabled key, a wrong one): what to fix is the key manager's to say.
    #[error("{message}")]
    KeyManagerRefused {
        /// What was tried and what each key manager said.
        message: String,
        /// The first refusal's hint.
        hint: String,
    },
    /// A layer wrapped with PKCS#7 and private keys given, but no certificate matching one: PKCS#7 needs both.
    #[error("{0}")]
    CertificateMissing(String),
    /// A layer's HMAC or digest does not match: corrupted or tampered ciphertext.
    #[error("{0}")]
    Integrity(String),
    /// A blob, manifest or tag does not exist.
    #[error("{0}")]
    NotFound(String),
    /// Reading or writing an image failed (disk full, permissions, an unreachable registry).
    #[error("{0}")]
    Io(String),
    /// A registry refused the credentials (HTTP 401/403).
    #[error("{0}")]
    RegistryDenied(String),
    /// A registry could not be reached or did not answer in time, for a reason the operator can fix.
    #[error("{message}")]
    Unreachable {
        /// What happened.
        message: String,
        /// What to do about it.
        hint: &'static str,
    },
    /// The selection leaves nothing to do: a platform no manifest has, or no layer that is (or would be)
    /// encrypted. Nothing was written.
    #[error("{problem}")]
    NothingSelected {
        /// What was selected and what the image has.
        problem: String,
        /// The platform selection matched no manifest (rather than no encrypted layer).
        platform: bool,
    },
}

impl From<crate::crypto::KeyError> for Error {
    fn from(error: crate::crypto::KeyError) -> Self {
        if error.wrong_password {
            return Error::WrongKeyPassword { what: error.what, problem: error.problem };
        }
        Error::InvalidKey { what: error.what, problem: error.problem }
    }
}

impl From<crate::oci::Error> for Error {
    fn from(error: crate::oci::Error) -> Self {
        use crate::oci::Error as Oci;
        match error {
            Oci::Malformed(m) => Error::Malformed(m),
            Oci::Integrity(m) => Error::Integrity(m),
            Oci::NotFound(m) => Error::NotFound(m),
            Oci::Io(m) => Error::Io(m),
            Oci::RegistryDenied(m) => Error::RegistryDenied(m),
            Oci::Unreachable { message, hint } => Error::Unreachable { message, hint },
            // `oci::Error` is non-exhaustive only outside its crate.
        }
    }
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
            other => other,
        }
    }
}

impl Classify for Error {
    fn status(&self) -> ExitStatus {
        match self {
            Error::InvalidKey { .. }
            | Error::MalformedWrappedKey { .. }
            | Error::Malformed(_)
            | Error::NothingSelected { .. } => ExitStatus::InvalidInput,
            Error::Wrap { .. } | Error::Unwrap { .. } | Error::Io(_) | Error::Unreachable { .. } => ExitStatus::Failure,
            Error::KeyLocked { .. } | Error::WrongKeyPassword { .. } => ExitStatus::Unauthenticated,
            Error::Unauthenticated(_)
            | Error::KeyManagerRefused { .. }
            | Error::RegistryDenied(_)
            | Error::CertificateMissing(_) => ExitStatus::Unauthenticated,
            Error::Integrity(_) => ExitStatus::DataLoss,
            Error::NotFound(_) => ExitStatus::NotFound,
            Error::KeyManager { error, .. } => error.status(),
        }
    }

    fn hint(&self) -> Option<Cow<'_, str>> {
        match self {
            Error::Unauthenticated(_) => Some(Cow::Borrowed("give a key that opens one of the layer's recipients")),
            Error::CertificateMissing(_) => {
                Some(Cow::Borrowed("give the recipient's certificate along with its private key"))
            }
            Error::KeyLocked { .. } => Some(Cow::Borrowed("give the secret key's passphrase along with the key file")),
            Error::WrongKeyPassword { .. } => Some(Cow::Borrowed("give the password that unlocks the key")),
            Error::RegistryDenied(_) => Some(Cow::Borrowed("check the registry credentials")),
            Error::Unreachable { hint, .. } => Some(Cow::Borrowed(hint)),
            Error::KeyManagerRefused { hint, .. } => Some(Cow::Borrowed(hint)),
            Error::KeyManager { error, .. } => error.hint(),
            Error::Integrity(_) => {
                Some(Cow::Borrowed("the image is corrupted or was tampered with; fetch it again from its source"))
            }
            _ => None,
        }
    }
}
