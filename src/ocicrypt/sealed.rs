//! Private key files sealed to the machine: a clevis JWE of the key file (`clevis encrypt tpm2|tang|sss <
//! key.pem > key.pem.jwe`, or `cryptadm image seal-key`). Wherever a key file is read (`image decrypt --key`, a
//! node's keys directory under `image stream-decrypt`, `secret generate-k8s`), such a file is recognised by its
//! form and checked at once (a truncated or foreign JWE is refused as a key file), but opened through its TPM,
//! Tang servers or threshold only when a layer wrapped for a private-key scheme first needs it, once per run. The
//! opened key lives in memory only (zeroized when dropped); it is never written anywhere.

use super::Error;
use super::keywrap::KeyUnwrapper;
use super::recipients::DecryptionKeys;
use crate::crypto::SecretBytes;
use crate::kms::clevis;
use std::cell::OnceCell;
use std::rc::Rc;

/// Whether `bytes` has the form of a compact JWE (`eyJ…`: base64url of a JSON header, base64url parts separated
/// by dots), as `clevis encrypt` prints it, or of its truncated start: such a file is read as a sealed key and
/// nothing else.
pub fn looks_sealed(bytes: &[u8]) -> bool {
    let text = bytes.trim_ascii();
    text.starts_with(b"eyJ") && text.iter().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'='))
}

/// Reads a sealed key file's binding without contacting anything (e.g. `tpm2 sha256:7`, `sss 2 of [tang …,
/// tpm2]`): the check that it is a whole clevis JWE.
pub fn describe(bytes: &[u8], what: &str) -> Result<String, Error> {
    let invalid = |problem: String| Error::InvalidKey {
        what: what.to_owned(),
        problem: format!("a sealed key (clevis JWE) that cannot be read: {problem}"),
    };
    let text = std::str::from_utf8(bytes).map_err(|_| invalid("not UTF-8".into()))?;
    clevis::describe(text).map_err(|e| invalid(e.to_string()))
}

/// The schemes a sealed private key may open (an RSA or EC key: JWE, with its certificate PKCS#7; an OpenPGP
/// secret key).
#[cfg(feature = "pgp")]
pub(super) const SCHEMES: [&str; 3] = ["jwe", "pkcs7", "pgp"];
/// The schemes a sealed private key may open (an RSA or EC key: JWE, with its certificate PKCS#7).
#[cfg(not(feature = "pgp"))]
pub(super) const SCHEMES: [&str; 2] = ["jwe", "pkcs7"];

/// A sealed key file, checked, not yet opened.
pub(super) struct SealedFile {
    /// Where it came from, for messages.
    pub(super) what: String,
    /// The compact JWE.
    pub(super) jwe: String,
}

/// What opening the sealed files gave: unwrappers of the keys inside, and each file that did not open.
struct Opened {
    unwrappers: Vec<Box<dyn KeyUnwrapper>>,
    failures: Vec<(String, Error)>,
}

/// The sealed key files of a set of decryption keys, opened together when a layer first needs them.
pub(super) struct SealedKeys {
    files: Vec<SealedFile>,
    settings: clevis::Settings,
    /// Certificates given beside the keys (PKCS#7 pairs a sealed RSA key with its certificate).
    certificates: Vec<x509_cert::Certificate>,
    opened: OnceCell<Opened>,
}

impl SealedKeys {
    pub(super) fn new(
        files: Vec<SealedFile>,
        settings: clevis::Settings,
        certificates: Vec<x509_cert::Certificate>,
    ) -> Self {
        Self { files, settings, certificates, opened: OnceCell::new() }
    }

    fn opened(&self) -> &Opened {
        self.opened.get_or_init(|| {
            let mut keys = DecryptionKeys::empty(None);
            for cert in &self.certificates {
                keys.add_certificate(cert.clone());
            }
            let mut failures = Vec::new();
            for file in &self.files {
                let opened = clevis::decrypt(&file.jwe, &self.settings)
                    .map_err(|e| sealed_error(&file.what, &e))
                    .and_then(|plain: SecretBytes| keys.add_opened_key(&plain, &file.what));
                if let Err(e) = opened {
                    failures.push((file.what.clone(), e));
                }
            }
            Opened { unwrappers: keys.unwrappers(), failures }
        })
    }
}

/// A TPM that refused (another machine, a changed PCR) or Tang servers that denied are a key that does not open
/// (exit 16 with the others' "none of the given keys"); a TPM or server that cannot be reached is a failure to fix
/// there (exit 1), as a key provider that cannot run.
fn sealed_error(what: &str, error: &clevis::Error) -> Error {
    use crate::exit::{Classify, ExitStatus};
    let message = format!("sealed key {what}: {error}");
    match error.status() {
        ExitStatus::Unauthenticated | ExitStatus::DataLoss | ExitStatus::NotFound | ExitStatus::InvalidInput => {
            Error::Unauthenticated(message)
        }
        _ => Error::Unwrap { scheme: "sealed key".into(), problem: format!("{what}: {error}") },
    }
}

/// The unwrapper of one scheme (`jwe`, `pkcs7`, `pgp`) over the sealed keys.
pub(super) struct SealedUnwrapper {
    pub(super) scheme: &'static str,
    pub(super) keys: Rc<SealedKeys>,
}

impl KeyUnwrapper for SealedUnwrapper {
    fn scheme(&self) -> String {
        self.scheme.into()
    }

    fn unwrap(&self, wrapped: &[u8]) -> Result<Option<SecretBytes>, Error> {
        let opened = self.keys.opened();
        for unwrapper in opened.unwrappers.iter().filter(|u| u.scheme() == self.scheme) {
            if let Some(private) = unwrapper.unwrap(wrapped)? {
                return Ok(Some(private));
            }
        }
        match opened.failures.first() {
            // Why a sealed key that may have been the one did not open.
            Some((_, Error::Unauthenticated(message))) => Err(Error::Unauthenticated(message.clone())),
            Some((_, Error::Unwrap { scheme, problem })) => {
                Err(Error::Unwrap { scheme: scheme.clone(), problem: problem.clone() })
            }
            Some((what, other)) => Err(Error::Unauthenticated(format!("sealed key {what}: {other}"))),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_files_are_recognised_by_form() {
        assert!(looks_sealed(b"eyJhbGciOiJkaXIifQ..AAAA.BBBB.CCCC\n"));
        for not in [&b"-----BEGIN PRIVATE KEY-----"[..], b"{\"kty\":\"EC\"}", b"eyJ abc.def", b"\x30\x82"] {
            assert!(!looks_sealed(not), "{not:?}");
        }
        // A truncated JWE has the form, and is refused as a key when read.
        let error = describe(b"eyJhbGciOiJkaXIifQ..AAAA", "k.jwe").unwrap_err();
        assert!(error.to_string().starts_with("k.jwe: a sealed key (clevis JWE) that cannot be read"), "{error}");
    }
}
