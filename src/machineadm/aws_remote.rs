//! Built-in RemoteConfig sources on AWS, read with the machine's AWS credentials (the same client as the
//! `aws-kms` provider):
//!
//! | provider | `spec.uri` | call |
//! | --- | --- | --- |
//! | `s3` | `s3://BUCKET/KEY` | S3 GetObject (virtual-host style on AWS, path style on an S3-compatible endpoint) |
//! | `aws-secrets-manager` | a secret's ARN (`arn:aws:secretsmanager:…`) or its name | GetSecretValue: SecretString or SecretBinary |
//! | `aws-ssm` | `ssm://NAME` (`ssm:///path/name` for a name with a leading `/`) | GetParameter with decryption (SecureString) |
//! | `capa-secrets-manager` | `PREFIX?chunks=N` | Cluster API Provider AWS's `secureSecretsBackend: secrets-manager` layout |
//! | `capa-ssm-parameter-store` | `PREFIX?chunks=N` | CAPA's `secureSecretsBackend: ssm-parameter-store` layout |
//!
//! The last two read what CAPA writes today, so a machine image with cryptadm can take over from CAPA's boothooks
//! (`pkg/cloud/services/{secretsmanager,ssm}` in CAPA's source). CAPA gzips the userdata and splits it into
//! chunks; `N`, the number of chunks, is what CAPA writes into its boothook (`CHUNKS`) and the AWSMachine's
//! `spec.cloudInit.secretCount`, `PREFIX` its `secretPrefix`:
//! - Secrets Manager: the gzip'd bytes split over the secrets `PREFIX-0` … `PREFIX-(N-1)` (SecretBinary each;
//!   CAPA's prefix is `aws.cluster.x-k8s.io/namespaces/NS/clusters/CLUSTER/instances/MACHINE-RANDOM`).
//! - SSM Parameter Store: the gzip'd bytes in standard base64, that text split every 4,000 bytes (the standard
//!   tier's limit) over the SecureString parameters `PREFIX/0` … `PREFIX/(N-1)` (CAPA's prefix is
//!   `/cluster.x-k8s.io/UUID`: it strips a leading `aws.` or `ssm.`, which SSM reserves, and adds the `/`).
//!
//! The chunks are read in order and joined, then, as the boothooks do, every chunk is deleted at once (a secret
//! without the recovery window), then the userdata is gunzipped (at most [`super::MAX_REMOTE_BYTES`]): it does not
//! outlive the first boot. When a chunk cannot be read, every chunk is deleted too, so a failed boot leaves no part
//! of the userdata behind either. Joined chunks that are not gzip data (or, for Parameter Store, not base64) are bad
//! input (exit 3), which no retry changes.
//!
//! What comes back is handled as what the `https` provider fetches (a machineadm stream, or plain configuration).
//! An S3 object, like every RemoteConfig source, is bounded by [`super::MAX_REMOTE_BYTES`] (what `bootstrap seal`
//! can make fits); Secrets Manager and Parameter Store answers by the key-manager client's 1 MiB, above their own
//! value limits (64 KiB, 8 KiB). Anything over its bound is exit 3. A RemoteConfig that was
//! itself fetched may not use these sources: it is the fetched server's word, and these read with the machine's
//! own credentials (the same rule as for `file`).

use super::Error;
use super::provider::ProviderSettings;
use crate::crypto::SecretBytes;
use crate::interact::Interaction;

/// S3 objects.
pub const BUILTIN_REMOTE_S3: &str = "s3";
/// Secrets Manager secrets.
pub const BUILTIN_REMOTE_SECRETS_MANAGER: &str = "aws-secrets-manager";
/// SSM Parameter Store parameters.
pub const BUILTIN_REMOTE_SSM: &str = "aws-ssm";
/// Cluster API Provider AWS's chunked, gzip'd userdata in Secrets Manager.
pub const BUILTIN_REMOTE_CAPA_SECRETS_MANAGER: &str = "capa-secrets-manager";
/// Cluster API Provider AWS's chunked, gzip'd userdata in SSM Parameter Store.
pub const BUILTIN_REMOTE_CAPA_SSM: &str = "capa-ssm-parameter-store";
/// Most chunks of a CAPA layout read.
const MAX_CAPA_CHUNKS: usize = 64;

/// Whether `provider` is one of the AWS sources.
pub fn is_aws_source(provider: &str) -> bool {
    matches!(
        provider,
        BUILTIN_REMOTE_S3
            | BUILTIN_REMOTE_SECRETS_MANAGER
            | BUILTIN_REMOTE_SSM
            | BUILTIN_REMOTE_CAPA_SECRETS_MANAGER
            | BUILTIN_REMOTE_CAPA_SSM
    )
}

/// What an AWS source's URI names.
#[derive(Debug, PartialEq, Eq)]
enum Source<'a> {
    Object { bucket: &'a str, key: &'a str },
    Secret(&'a str),
    Parameter(&'a str),
    CapaChunks { layout: CapaLayout, prefix: &'a str, chunks: usize },
}

/// Where Cluster API Provider AWS keeps the chunks of a machine's userdata (`secureSecretsBackend`).
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
enum CapaLayout {
    SecretsManager,
    ParameterStore,
}

impl CapaLayout {
    /// Chunk `index`'s secret or parameter.
    fn chunk_name(self, prefix: &str, index: usize) -> String {
        match self {
            Self::SecretsManager => format!("{prefix}-{index}"),
            Self::ParameterStore => format!("{prefix}/{index}"),
        }
    }

    fn read(self, aws: &crate::kms::aws::Aws, name: &str) -> Result<SecretBytes, crate::kms::Error> {
        match self {
            Self::SecretsManager => aws.secret_value(name).map(|value| SecretBytes::new(value.bytes().to_vec())),
            Self::ParameterStore => aws.parameter(name),
        }
    }

    fn delete(self, aws: &crate::kms::aws::Aws, name: &str) -> Result<(), crate::kms::Error> {
        match self {
            Self::SecretsManager => aws.delete_secret(name),
            Self::ParameterStore => aws.delete_parameter(name),
        }
    }

    /// The chunks deleted when a chunk cannot be read: every one, in both layouts, as CAPA's boothooks do
    /// on failure, so that a failed boot leaves no part of the userdata behind.
    fn deleted_after_failure(self, chunks: usize) -> std::ops::Range<usize> {
        let _ = self;
        0..chunks
    }

    /// The gzip data the joined chunks carry (Parameter Store's are base64 text; the boothook's `echo` adds a
    /// newline after each, which `base64 -d` skips).
    fn gzipped(self, joined: SecretBytes) -> Result<SecretBytes, String> {
        use base64::Engine as _;
        match self {
            Self::SecretsManager => Ok(joined),
            Self::ParameterStore => {
                let text: zeroize::Zeroizing<Vec<u8>> =
                    zeroize::Zeroizing::new(joined.iter().copied().filter(|b| !b.is_ascii_whitespace()).collect());
                base64::engine::general_purpose::STANDARD
                    .decode(text.as_slice())
                    .map(SecretBytes::new)
                    .map_err(|e| format!("the joined parameters are not base64 ({e})"))
            }
        }
    }
}

fn parse<'a>(provider: &str, uri: &'a str) -> Result<Source<'a>, &'static str> {
    match provider {
        BUILTIN_REMOTE_S3 => {
            let rest = uri.strip_prefix("s3://").ok_or("expected s3://BUCKET/KEY")?;
            let (bucket, key) = rest.split_once('/').ok_or("expected s3://BUCKET/KEY")?;
            let bucket_ok = (3..=63).contains(&bucket.len())
                && bucket.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-.".contains(&b));
            if !bucket_ok {
                return Err("the bucket name is 3 to 63 lower-case letters, digits, `-` and `.`");
            }
            if key.is_empty() || key.len() > 1024 {
                return Err("expected s3://BUCKET/KEY with a key of 1 to 1024 bytes");
            }
            Ok(Source::Object { bucket, key })
        }
        BUILTIN_REMOTE_SECRETS_MANAGER => {
            let fine = !uri.is_empty()
                && uri.len() <= 2048
                && uri.bytes().all(|b| b.is_ascii_alphanumeric() || b"/_+=.@-:".contains(&b));
            if !fine || (uri.contains(':') && !uri.starts_with("arn:aws")) {
                return Err("expected a secret's ARN (arn:aws:secretsmanager:…) or its name");
            }
            Ok(Source::Secret(uri))
        }
        BUILTIN_REMOTE_SSM => {
            let name = uri.strip_prefix("ssm://").ok_or("expected ssm://NAME")?;
            if !is_parameter_name(name) {
                return Err("expected ssm://NAME (letters, digits and /_.-)");
            }
            Ok(Source::Parameter(name))
        }
        BUILTIN_REMOTE_CAPA_SECRETS_MANAGER | BUILTIN_REMOTE_CAPA_SSM => {
            let (prefix, chunks) = uri.split_once("?chunks=").ok_or("expected PREFIX?chunks=N")?;
            let chunks: usize = chunks.parse().map_err(|_| "expected PREFIX?chunks=N, N a number")?;
            if !(1..=MAX_CAPA_CHUNKS).contains(&chunks) {
                return Err("expected PREFIX?chunks=N with N from 1 to 64");
            }
            let (layout, prefix) = if provider == BUILTIN_REMOTE_CAPA_SSM {
                let prefix = prefix.trim_end_matches('/');
                if !prefix.starts_with('/') || !is_parameter_name(prefix) {
                    return Err("expected PREFIX?chunks=N, PREFIX a parameter path such as /cluster.x-k8s.io/UUID");
                }
                (CapaLayout::ParameterStore, prefix)
            } else {
                let Source::Secret(prefix) = parse(BUILTIN_REMOTE_SECRETS_MANAGER, prefix)? else {
                    unreachable!("a name is a secret")
                };
                (CapaLayout::SecretsManager, prefix)
            };
            Ok(Source::CapaChunks { layout, prefix, chunks })
        }
        _ => Err("not an AWS source"),
    }
}

/// Whether `name` can be an SSM parameter's name (letters, digits and /_.-).
fn is_parameter_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= 2048 && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"/_.-".contains(&b))
}

/// Fetches what an AWS source names.
pub(super) fn fetch(
    provider: &str,
    uri: &str,
    fetched: bool,
    providers: &ProviderSettings,
    ui: &dyn Interaction,
) -> Result<SecretBytes, Error> {
    let bad = |problem: &'static str| Error::BadRemoteUri {
        provider: provider.into(),
        uri: uri.into(),
        problem: problem.into(),
    };
    if fetched {
        return Err(bad(
            "a RemoteConfig that was itself fetched may not read AWS resources with the machine's credentials",
        ));
    }
    let source = parse(provider, uri).map_err(bad)?;
    let aws = providers.aws.as_deref().ok_or(Error::NoAwsClient)?;
    let _busy = ui.busy(&format!("fetching {}", crate::redact::url(uri)));
    let result = match source {
        Source::Object { bucket, key } => {
            let limit = usize::try_from(super::MAX_REMOTE_BYTES).unwrap_or(usize::MAX);
            aws.s3_object(bucket, key, limit).map(SecretBytes::new)
        }
        Source::Secret(id) => aws.secret_value(id).map(|value| SecretBytes::new(value.bytes().to_vec())),
        Source::Parameter(name) => aws.parameter(name),
        Source::CapaChunks { layout, prefix, chunks } => return capa_chunks(aws, layout, prefix, chunks, uri),
    };
    result.map_err(|source| match source {
        crate::kms::Error::NotFound { .. } => Error::RemoteNotFound { uri: uri.into(), problem: source.to_string() },
        // One bound for every RemoteConfig source, said the same way (exit 3).
        crate::kms::Error::TooLarge { .. } => Error::RemoteTooLarge { uri: uri.into(), limit: super::MAX_REMOTE_BYTES },
        source => Error::AwsRemote { uri: uri.into(), source },
    })
}

/// Reads, joins and deletes the chunks of a CAPA layout, then gunzips what they carry (see the module's note).
fn capa_chunks(
    aws: &crate::kms::aws::Aws,
    layout: CapaLayout,
    prefix: &str,
    chunks: usize,
    uri: &str,
) -> Result<SecretBytes, Error> {
    let failed = |source: crate::kms::Error| match source {
        crate::kms::Error::NotFound { .. } => Error::RemoteNotFound { uri: uri.into(), problem: source.to_string() },
        crate::kms::Error::TooLarge { .. } => Error::RemoteTooLarge { uri: uri.into(), limit: super::MAX_REMOTE_BYTES },
        source => Error::AwsRemote { uri: uri.into(), source },
    };
    let mut joined = SecretBytes::new(Vec::new());
    for chunk in 0..chunks {
        match layout.read(aws, &layout.chunk_name(prefix, chunk)) {
            Ok(value) => joined.extend_from_slice(&value),
            Err(error) => {
                // As the boothook: the read's error is the one reported, whatever the cleanup meets.
                for gone in layout.deleted_after_failure(chunks) {
                    let _ = layout.delete(aws, &layout.chunk_name(prefix, gone));
                }
                return Err(failed(error));
            }
        }
    }
    for chunk in 0..chunks {
        layout.delete(aws, &layout.chunk_name(prefix, chunk)).map_err(failed)?;
    }
    let not_gzip = |problem: String| Error::RemoteMalformed { uri: uri.into(), problem };
    let gzipped = layout.gzipped(joined).map_err(not_gzip)?;
    crate::bounded::read_at_most(flate2::read::GzDecoder::new(gzipped.as_slice()), super::MAX_REMOTE_BYTES)
        .map_err(|e| not_gzip(format!("the joined chunks are not gzip data ({e})")))?
        .ok_or_else(|| Error::RemoteTooLarge { uri: uri.into(), limit: super::MAX_REMOTE_BYTES })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_of_the_aws_sources() {
        assert_eq!(
            parse("s3", "s3://capi-boot/machines/m-0.yaml").unwrap(),
            Source::Object { bucket: "capi-boot", key: "machines/m-0.yaml" }
        );
        for bad in ["s3://capi-boot", "s3://Bucket/k", "s3://ab/k", "s3://capi-boot/", "https://capi-boot/k"] {
            assert!(parse("s3", bad).is_err(), "{bad}");
        }
        assert_eq!(parse("aws-secrets-manager", "capi/m-0").unwrap(), Source::Secret("capi/m-0"));
        let arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:capi-AbCdEf";
        assert_eq!(parse("aws-secrets-manager", arn).unwrap(), Source::Secret(arn));
        assert!(parse("aws-secrets-manager", "x:y").is_err());
        assert_eq!(parse("aws-ssm", "ssm:///capi/m-0").unwrap(), Source::Parameter("/capi/m-0"));
        assert_eq!(parse("aws-ssm", "ssm://capi-m0").unwrap(), Source::Parameter("capi-m0"));
        assert!(parse("aws-ssm", "ssm://").is_err() && parse("aws-ssm", "capi").is_err());
        let capa = "aws.cluster.x-k8s.io/namespaces/default/clusters/c1/instances/m-0-abc";
        assert_eq!(
            parse("capa-secrets-manager", &format!("{capa}?chunks=3")).unwrap(),
            Source::CapaChunks { layout: CapaLayout::SecretsManager, prefix: capa, chunks: 3 }
        );
        for bad in ["p", "p?chunks=0", "p?chunks=65", "p?chunks=x", "?chunks=1"] {
            assert!(parse("capa-secrets-manager", bad).is_err(), "{bad}");
        }
        let capa = "/cluster.x-k8s.io/6f1c2a3e-1b2c-4d5e-8f90-0123456789ab";
        assert_eq!(
            parse("capa-ssm-parameter-store", &format!("{capa}/?chunks=2")).unwrap(),
            Source::CapaChunks { layout: CapaLayout::ParameterStore, prefix: capa, chunks: 2 }
        );
        for bad in ["/p", "p?chunks=1", "/?chunks=1", "/p q?chunks=1", "/p?chunks=65"] {
            assert!(parse("capa-ssm-parameter-store", bad).is_err(), "{bad}");
        }
        assert_eq!(CapaLayout::ParameterStore.chunk_name(capa, 1), format!("{capa}/1"));
        assert_eq!(CapaLayout::SecretsManager.deleted_after_failure(4), 0..4);
        assert_eq!(CapaLayout::ParameterStore.deleted_after_failure(4), 0..4);
    }
}
