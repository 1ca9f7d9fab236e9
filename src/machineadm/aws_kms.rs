//! The built-in `aws-kms` passphrase provider, the design's worked example: `seal` asks KMS GenerateDataKey for
//! 32 bytes under the key given as `--passphrase-uri` (a key or alias ARN, or `alias/NAME`), seals with those raw
//! bytes as the passphrase (not their base64: docs/formats.md) and records `kms://<standard base64 of the
//! CiphertextBlob>@<the key as given>`; with a given passphrase it records that passphrase wrapped by KMS Encrypt
//! instead. `open` hands the blob to KMS Decrypt with the key id, so a blob made under another key is refused.
//!
//! The URI is split by hand at its last `@` (standard base64 holds `/`, `+` and `=`, which URL parsers refuse in
//! a user part; docs/formats.md); the blob is read as standard or URL-safe base64, padding optional.

use super::Error;
use super::provider::ProviderSettings;
use crate::crypto::Passphrase;
use crate::interact::Interaction;

/// The provider's name.
pub const BUILTIN_AWS_KMS_PROVIDER: &str = "aws-kms";
/// Bytes of the data key (and so of the passphrase) asked of KMS.
pub const AWS_DATA_KEY_BYTES: usize = 32;
/// The scheme of the recorded passphraseURI.
const KMS_URI_PREFIX: &str = "kms://";

/// A `kms://BLOB@KEY` passphraseURI: the CiphertextBlob's bytes and the key.
pub fn parse_kms_uri(uri: &str) -> Result<(Vec<u8>, String), Error> {
    let bad = |problem: &'static str| Error::BadKmsUri { uri: crate::redact::url(uri), problem };
    let rest = uri.trim().strip_prefix(KMS_URI_PREFIX).ok_or_else(|| bad("expected kms://BLOB@arn:aws:kms:…"))?;
    let (blob, key) = rest.rsplit_once('@').ok_or_else(|| bad("no `@`: expected kms://BLOB@arn:aws:kms:…"))?;
    crate::kms::aws::check_kms_key(key).map_err(|_| bad("the part after `@` is not a KMS key ARN or alias/NAME"))?;
    let url_safe = blob.replace('-', "+").replace('_', "/");
    let bytes = crate::crypto::encoding::b64_decode_lenient(&url_safe)
        .ok()
        .filter(|b| !b.is_empty())
        .ok_or_else(|| bad("the part before `@` is not a KMS CiphertextBlob in base64"))?;
    Ok((bytes, key.to_owned()))
}

impl ProviderSettings {
    fn aws(&self) -> Result<&crate::kms::aws::Aws, Error> {
        self.aws.as_deref().ok_or(Error::NoAwsClient)
    }

    /// `seal` with `aws-kms`: a new data key (or, given `explicit`, that passphrase wrapped by KMS) and the
    /// passphraseURI carrying the CiphertextBlob.
    pub fn aws_kms_new(
        &self,
        key: &str,
        explicit: Option<Passphrase>,
        ui: &dyn Interaction,
    ) -> Result<(Passphrase, String), Error> {
        use base64::Engine as _;
        // The key as every command takes it (aws-kms://ARN, the bare ARN, alias/NAME); the bare key is recorded.
        let key = match crate::kms::KeyRef::parse(key.trim()) {
            Ok(crate::kms::KeyRef::AwsKms { key }) => key,
            _ => {
                return Err(Error::BadKmsUri {
                    uri: crate::redact::url(key),
                    problem: "seal takes the KMS key: aws-kms://ARN, arn:aws:kms:REGION:ACCOUNT:key/ID, \
                              …:alias/NAME or alias/NAME (the wrapped key is added to it)",
                });
            }
        };
        let key = key.as_str();
        let aws = self.aws()?;
        let _busy = ui.busy("asking AWS KMS for a data key");
        let (passphrase, blob) = match explicit {
            Some(passphrase) => {
                let blob = aws.kms_encrypt(key, passphrase.expose()).map_err(Error::AwsKms)?;
                (passphrase, blob)
            }
            None => {
                let (plaintext, blob) = aws.kms_generate_data_key(key, AWS_DATA_KEY_BYTES).map_err(Error::AwsKms)?;
                (Passphrase::new(plaintext.to_vec()), blob)
            }
        };
        let uri = format!("{KMS_URI_PREFIX}{}@{key}", base64::engine::general_purpose::STANDARD.encode(blob));
        Ok((passphrase, uri))
    }

    /// `open` with `aws-kms`: KMS Decrypt of the blob in the URI, with its key.
    pub fn aws_kms_open(&self, uri: &str, ui: &dyn Interaction) -> Result<Passphrase, Error> {
        let (blob, key) = parse_kms_uri(uri)?;
        let aws = self.aws()?;
        let _busy = ui.busy("unwrapping the data key with AWS KMS");
        let plaintext = aws.kms_decrypt(Some(&key), &blob).map_err(Error::AwsKms)?;
        if plaintext.is_empty() {
            return Err(Error::BadPassphrase("AWS KMS returned an empty data key".into()));
        }
        Ok(Passphrase::new(plaintext.to_vec()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kms_uris_split_at_the_last_at_sign() {
        let (blob, key) = parse_kms_uri("kms://ZW5j/+8/dGVk@arn:aws:kms:us-west-2:111122223333:key/1234abcd").unwrap();
        assert_eq!(key, "arn:aws:kms:us-west-2:111122223333:key/1234abcd");
        assert_eq!(blob.len(), 9);
        let (url_safe, _) = parse_kms_uri("kms://ZW5j_-8_dGVk@alias/capi").unwrap();
        assert_eq!(url_safe, blob);
        assert_eq!(parse_kms_uri("kms://ZW5jcnlwdGVk@alias/capi").unwrap().0, b"encrypted");
        for bad in ["kms://@alias/x", "kms://ZW5j", "https://x@alias/x", "kms://ZW5j@key/x", "kms://!!@alias/x"] {
            assert!(matches!(parse_kms_uri(bad), Err(Error::BadKmsUri { .. })), "{bad}");
        }
    }
}
