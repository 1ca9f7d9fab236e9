//! `--key-wrap aws-kms://ARN`: values are AWS KMS CiphertextBlobs in standard base64, the form the AWS CLI prints
//! (`aws kms encrypt --key-id ARN --plaintext fileb://pass --query CiphertextBlob --output text`), so an operator
//! seeds a volume with the CLI. The plaintext goes to KMS Encrypt and comes back from Decrypt (with the key id, so
//! a blob of another key is refused).

use super::store::store_error;
use super::wrap::KeyWrap;
use crate::crypto::Passphrase;
use crate::kms::Wrapping;
use crate::kms::aws::Aws;
use crate::volume::Error;
use base64::Engine as _;
use std::sync::Arc;

/// Whether a stored value is standard base64 (surrounding white space, such as the CLI's newline, ignored) of
/// something.
pub fn is_kms_blob(stored: &[u8]) -> bool {
    std::str::from_utf8(stored).is_ok_and(|text| {
        let text = text.trim();
        !text.is_empty() && base64::engine::general_purpose::STANDARD.decode(text).is_ok()
    })
}

/// A KMS key wrapping a store's values.
pub struct AwsKmsWrap {
    client: Arc<Aws>,
    key: String,
}

impl AwsKmsWrap {
    /// KMS key `key` (a key or alias ARN, `alias/NAME`, a key id).
    pub fn new(client: Arc<Aws>, key: &str) -> Self {
        Self { client, key: key.to_owned() }
    }
}

impl KeyWrap for AwsKmsWrap {
    fn form(&self) -> &'static str {
        "KMS CiphertextBlob in standard base64"
    }

    fn is_wrapped(&self, stored: &[u8]) -> bool {
        is_kms_blob(stored)
    }

    fn wrap(&self, key: &Passphrase) -> Result<String, Error> {
        self.client.wrap(&self.key, key.expose()).map_err(store_error)
    }

    fn unwrap(&self, stored: &str) -> Result<Passphrase, Error> {
        let plain = self.client.unwrap(&self.key, stored.trim()).map_err(store_error)?;
        Ok(Passphrase::new(plain.to_vec()))
    }
}

/// What [`rewrap_file_store`] did.
#[derive(Debug, Default)]
pub struct Rewrapped {
    /// Values re-encrypted.
    pub values: usize,
    /// Volumes (store entries) visited.
    pub volumes: usize,
}

/// `volume rewrap` of a `file://DIR` store wrapped by KMS key `key`: every stored value (`current`, `pending`,
/// `previous` of every entry) re-encrypted with ReEncrypt, the plaintext never leaving KMS, each entry under its
/// volume's lock (`lock_dir`) so no rotation runs meanwhile, each file replaced atomically. Every value is checked
/// to be a KMS blob before anything is written: a store holding any other value is refused whole.
pub fn rewrap_file_store(
    client: &Aws,
    key: &str,
    dir: &std::path::Path,
    lock_dir: &std::path::Path,
) -> Result<Rewrapped, Error> {
    let io = |what: &std::path::Path| {
        let what = what.display().to_string();
        move |e: std::io::Error| Error::Store {
            status: if e.kind() == std::io::ErrorKind::NotFound {
                crate::exit::ExitStatus::NotFound
            } else {
                crate::exit::ExitStatus::Failure
            },
            message: format!("`{what}`: {e}"),
        }
    };
    let mut entries: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .map_err(io(dir))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    entries.sort();
    let values = |entry: &std::path::Path| -> Vec<std::path::PathBuf> {
        ["current", "pending", "previous"].iter().map(|n| entry.join(n)).filter(|p| p.is_file()).collect()
    };
    for entry in &entries {
        for path in values(entry) {
            if !is_kms_blob(&std::fs::read(&path).map_err(io(&path))?) {
                return Err(Error::Store {
                    status: crate::exit::ExitStatus::InvalidInput,
                    message: format!(
                        "`{}` is not a KMS CiphertextBlob in standard base64: nothing rewrapped",
                        path.display()
                    ),
                });
            }
        }
    }
    let mut done = Rewrapped::default();
    for entry in &entries {
        let name = entry.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let _lock = crate::volume::lock::IdLock::acquire_name(lock_dir, &name)?;
        for path in values(entry) {
            let stored = std::fs::read_to_string(&path).map_err(io(&path))?;
            let rewrapped = client.rewrap(key, stored.trim()).map_err(store_error)?;
            crate::atomic::write(&path, rewrapped.as_bytes(), crate::atomic::MODE_PRIVATE).map_err(io(&path))?;
            done.values += 1;
        }
        done.volumes += 1;
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    #[test]
    fn blobs_are_standard_base64_with_the_clis_newline() {
        assert!(super::is_kms_blob(b"AQIDBA==\n"));
        assert!(!super::is_kms_blob(b"my passphrase"));
        assert!(!super::is_kms_blob(b"AQ-_"));
        assert!(!super::is_kms_blob(b"  \n"));
    }
}
