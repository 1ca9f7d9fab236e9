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
