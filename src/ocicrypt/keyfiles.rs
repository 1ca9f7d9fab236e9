//! Which key files can decrypt images where they are going: a node's keys directory (containerd's imgcrypt and
//! CRI-O read every file there, with no way to ask for a password) or the KEP's list of keys with a password.
//!
//! The files are recognised the way ocicrypt sorts a keys directory, with cryptadm's own parsers. cryptadm reads
//! more than Go's ocicrypt on a node does, so keys bound for nodes are also held to ocicrypt's forms (no PEM SEC1,
//! no ASCII-armoured OpenPGP): one file a node cannot read fails every decryption there.

use crate::crypto::{Passphrase, keys};
use crate::exit::{Classify, ExitStatus};
use crate::ocicrypt::{pgp, pkcs7};
use std::borrow::Cow;

/// What a usable key file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyKind {
    /// An unencrypted private key or OpenPGP secret key.
    Plain,
    /// A private key that needs the password (only where a password can be given).
    Encrypted,
    /// An X.509 certificate (ocicrypt's PKCS#7 needs it next to the private key).
    Certificate,
    /// A private key sealed to machines (a clevis JWE of the key file): only cryptadm's stream processor on a
    /// node opens it, through the node's TPM or Tang servers.
    Sealed,
}

/// Where the keys are going.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Destination {
    /// Files in a node's keys directory: no password, only the forms ocicrypt on a node reads.
    NodeKeysDirectory,
    /// Entries of a list that carries the keys' password beside them (the KEP's Secret).
    WithPassword,
}

/// What the operator can do about an unusable key file. The command line may word it with its flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Remedy {
    /// Remove the key's password, or send it where a password can go.
    RemovePassword,
    /// Give the password that unlocks the key.
    GivePassword,
    /// The password given is wrong.
    GiveRightPassword,
    /// Convert a PEM SEC1 key to PKCS#8.
    ConvertSec1,
    /// Convert a legacy `Proc-Type: 4,ENCRYPTED` PEM key to encrypted PKCS#8.
    ConvertLegacyPem,
    /// An OpenPGP public key was given: export the secret key.
    ExportOpenPgpSecretKey,
    /// An armoured OpenPGP key: give its binary form.
    Dearmor,
    /// A public key was given where the private key is needed.
    GivePrivateKey,
    /// Nothing recognisable.
    GiveAnyKey,
    /// An OpenPGP key, in a build without OpenPGP support.
    NoOpenPgpInThisBuild,
    /// A truncated or foreign JWE where a sealed key was expected.
    SealAgain,
    /// A sealed key sent where no cryptadm opens it.
    SealedKeysToNodes,
}

impl Remedy {
    /// The remedy in the core's words.
    pub fn text(self) -> &'static str {
        match self {
            Remedy::RemovePassword => {
                "keys in a node's keys directory cannot have a password (containerd and CRI-O cannot ask for one): \
                 remove it with `openssl pkey -in KEY -out plain.pem` (gpg: `gpg --passwd`)"
            }
            Remedy::GivePassword => "give the key's password",
            Remedy::GiveRightPassword => "give the password that unlocks the key",
            Remedy::ConvertSec1 => "convert it to PKCS#8: `openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY.p8`",
            Remedy::ConvertLegacyPem => {
                "convert it to encrypted PKCS#8: `openssl pkcs8 -topk8 -v2 aes-256-cbc -in KEY -out KEY.p8`"
            }
            Remedy::ExportOpenPgpSecretKey => "export the secret key with `gpg --export-secret-keys KEYID > key.gpg`",
            Remedy::Dearmor => "give the binary form: `gpg --dearmor < KEY.asc > KEY.gpg`",
            Remedy::GivePrivateKey => {
                "give the private key: the Secret must hold what decrypts the image; the public key is only for \
                 `cryptadm image encrypt --recipient jwe:PUB.pem`"
            }
            Remedy::NoOpenPgpInThisBuild => "give a private key (PEM, DER or JWK; RSA or EC) or a certificate",
            Remedy::SealAgain => {
                "seal the key file again, whole: `clevis encrypt tpm2 '{\"pcr_ids\":\"7\"}' < KEY > KEY.jwe` or \
                 `cryptadm image seal-key`"
            }
            Remedy::SealedKeysToNodes => {
                "a sealed key is opened by `cryptadm image stream-decrypt` on the node (containerd with \
                 `cryptadm image node-config`): give it in the node format, or give the plain key"
            }
            Remedy::GiveAnyKey => {
                "give a private key (PEM, DER or JWK; RSA or EC), an OpenPGP secret key, or the X.509 certificate of \
                 a PKCS#7 recipient next to its private key"
            }
        }
    }
}

/// Why a set of key files cannot decrypt images where it is going.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyFileError {
    /// A key file that is not usable there.
    #[error("{file}: {problem}")]
    Unusable {
        /// The file.
        file: String,
        /// Why it cannot be used.
        problem: String,
        /// What to do.
        remedy: Remedy,
    },
    /// Nothing in the set can decrypt anything.
    #[error("no private key among the key files: {0}")]
    NoPrivateKey(String),
}

impl Classify for KeyFileError {
    fn status(&self) -> ExitStatus {
        ExitStatus::InvalidInput
    }

    fn hint(&self) -> Option<Cow<'_, str>> {
        Some(Cow::Borrowed(match self {
            KeyFileError::Unusable { remedy, .. } => remedy.text(),
            KeyFileError::NoPrivateKey(_) => {
                "add the private key (PEM, DER or JWK) or OpenPGP secret key (`gpg --export-secret-keys`) that \
                 decrypts the images"
            }
        }))
    }
}

/// One key file.
pub struct KeyFileRef<'a> {
    /// Where it came from, for messages.
    pub source: &'a str,
    /// Its bytes.
    pub bytes: &'a [u8],
}

/// Recognises every file, and checks that the set holds at least one key that decrypts.
pub fn check_all(
    files: &[KeyFileRef<'_>],
    destination: Destination,
    password: Option<&Passphrase>,
) -> Result<Vec<KeyKind>, KeyFileError> {
    let kinds = files.iter().map(|f| kind_of(f, destination, password)).collect::<Result<Vec<_>, _>>()?;
    if kinds.iter().all(|kind| *kind == KeyKind::Certificate) {
        return Err(KeyFileError::NoPrivateKey("only certificates were given".into()));
    }
    Ok(kinds)
}

/// Recognises one key file and says whether it can be used at `destination`.
pub fn kind_of(
    file: &KeyFileRef<'_>,
    destination: Destination,
    password: Option<&Passphrase>,
) -> Result<KeyKind, KeyFileError> {
    let on_nodes = destination == Destination::NodeKeysDirectory;
    let unusable = |problem: String, remedy| KeyFileError::Unusable { file: file.source.to_owned(), problem, remedy };
    if super::sealed::looks_sealed(file.bytes) {
        super::sealed::describe(file.bytes, file.source).map_err(|e| match e {
            super::Error::InvalidKey { problem, .. } => unusable(problem, Remedy::SealAgain),
            other => unusable(other.to_string(), Remedy::SealAgain),
        })?;
        if !on_nodes {
            return Err(unusable(
                "a key sealed to machines (a clevis JWE), which only cryptadm's stream processor opens".into(),
                Remedy::SealedKeysToNodes,
            ));
        }
        return Ok(KeyKind::Sealed);
    }
    let shape = keys::key_file_shape(file.bytes);
    let problem = match keys::parse_private_key(file.bytes, None, file.source) {
        Ok(_) if on_nodes && shape.sec1_pem => {
            return Err(unusable(
                "a PEM `EC PRIVATE KEY` (SEC1), which ocicrypt on the nodes does not read".into(),
                Remedy::ConvertSec1,
            ));
        }
        Ok(_) => return Ok(KeyKind::Plain),
        Err(e) => e.problem,
    };
    if shape.password_protected || shape.legacy_pem_encryption {
        return encrypted_key(file, on_nodes, password, problem, shape.legacy_pem_encryption);
    }
    if pkcs7::parse_certificate(file.bytes, file.source).is_ok() {
        return Ok(KeyKind::Certificate);
    }
    #[cfg(not(feature = "pgp"))]
    if pgp::looks_like_openpgp(file.bytes) {
        return Err(unusable(pgp::NO_OPENPGP.into(), Remedy::NoOpenPgpInThisBuild));
    }
    #[cfg(feature = "pgp")]
    if let Ok(certs) = pgp::parse_keyring(file.bytes, file.source) {
        if !certs.iter().any(|c| c.is_tsk()) {
            return Err(unusable(
                "an OpenPGP public key; the node needs the secret key".into(),
                Remedy::ExportOpenPgpSecretKey,
            ));
        }
        // Go's openpgp.ReadKeyRing, which ocicrypt uses to recognise a secret keyring, reads binary packets only.
        if on_nodes && file.bytes.trim_ascii_start().starts_with(b"-----BEGIN PGP") {
            return Err(unusable(
                "an ASCII-armoured OpenPGP key, which ocicrypt on the nodes does not read".into(),
                Remedy::Dearmor,
            ));
        }
        return openpgp_secret_key(file, &certs, on_nodes, password);
    }
    let remedy = if keys::parse_public_key(file.bytes, file.source).is_ok() {
        Remedy::GivePrivateKey
    } else {
        Remedy::GiveAnyKey
    };
    Err(unusable(problem, remedy))
}

/// An OpenPGP secret key: usable on nodes only without a passphrase; in a list with the one given.
#[cfg(feature = "pgp")]
fn openpgp_secret_key(
    file: &KeyFileRef<'_>,
    certs: &[sequoia_openpgp::Cert],
    on_nodes: bool,
    password: Option<&Passphrase>,
) -> Result<KeyKind, KeyFileError> {
    let unusable = |problem: &str, remedy| KeyFileError::Unusable {
        file: file.source.to_owned(),
        problem: problem.into(),
        remedy,
    };
    let locked: Vec<_> = certs
        .iter()
        .flat_map(|c| c.keys().secret())
        .filter(|k| k.key().secret().is_encrypted())
        .map(|k| k.key().clone())
        .collect();
    if locked.is_empty() {
        return Ok(KeyKind::Plain);
    }
    if on_nodes {
        return Err(unusable("the OpenPGP secret key is protected by a passphrase", Remedy::RemovePassword));
    }
    let Some(password) = password else {
        return Err(unusable("the OpenPGP secret key is protected by a passphrase", Remedy::GivePassword));
    };
    let password = sequoia_openpgp::crypto::Password::from(password.expose());
    if locked.into_iter().any(|k| k.decrypt_secret(&password).is_err()) {
        return Err(unusable("the passphrase does not unlock the OpenPGP secret key", Remedy::GiveRightPassword));
    }
    Ok(KeyKind::Encrypted)
}

fn encrypted_key(
    file: &KeyFileRef<'_>,
    on_nodes: bool,
    password: Option<&Passphrase>,
    problem: String,
    legacy_pem: bool,
) -> Result<KeyKind, KeyFileError> {
    let unusable = |problem: String, remedy| KeyFileError::Unusable { file: file.source.to_owned(), problem, remedy };
    if on_nodes {
        return Err(unusable("the private key is protected by a password".into(), Remedy::RemovePassword));
    }
    if legacy_pem {
        // No password helps here: cryptadm (and so `image decrypt`) cannot read the form at all.
        return Err(unusable(problem, Remedy::ConvertLegacyPem));
    }
    let Some(password) = password else {
        return Err(unusable(problem, Remedy::GivePassword));
    };
    keys::parse_private_key(file.bytes, Some(password.expose()), file.source)
        .map(|_| KeyKind::Encrypted)
        .map_err(|e| unusable(e.problem, Remedy::GiveRightPassword))
}
