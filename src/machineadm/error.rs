//! Errors of the machineadm module, each with its exit status and, where it helps, a hint.

use crate::exit::{Classify, ExitStatus};
use std::borrow::Cow;
use std::path::PathBuf;

/// Everything that can go wrong sealing or opening machineadm documents. No variant carries a passphrase,
/// a key or plaintext.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input is not a YAML stream cryptadm can read.
    #[error("not a valid YAML stream: {0}")]
    Yaml(String),
    /// The input is larger than any machine configuration should be.
    #[error("input is larger than the {limit}-byte limit")]
    TooLarge {
        /// The limit.
        limit: u64,
    },
    /// Sealing would make a stream larger than `bootstrap open` reads.
    #[error("the sealed stream would be {size} bytes, over the {limit}-byte limit of `bootstrap open`")]
    SealedTooLarge {
        /// Bytes of the sealed stream.
        size: u64,
        /// The limit of `bootstrap open`.
        limit: u64,
    },
    /// A document is malformed: missing field, bad base64, wrong length.
    #[error("document {index}: {problem}")]
    Invalid {
        /// 1-based position of the document in the stream.
        index: usize,
        /// What is wrong.
        problem: String,
    },
    /// A document names a kind, version or algorithm cryptadm does not implement.
    #[error("document {index}: unsupported {what} `{found}` (supported: {supported})")]
    Unsupported {
        /// 1-based position of the document in the stream.
        index: usize,
        /// Which field.
        what: &'static str,
        /// What the document says.
        found: String,
        /// What would be accepted.
        supported: &'static str,
    },
    /// The authentication tag did not verify.
    #[error(
        "document {index} (EncryptedConfig, provider `{provider}`): decryption failed: wrong passphrase, or the document was altered"
    )]
    Unauthenticated {
        /// 1-based position of the document in the stream.
        index: usize,
        /// The document's provider.
        provider: String,
    },
    /// Strict mode accepts in-band configuration only: a RemoteConfig document is refused, never fetched.
    #[error("document {index}: RemoteConfig `{name}` refused in strict mode (in-band configuration only)")]
    RemoteRefused {
        /// 1-based position of the document in the stream.
        index: usize,
        /// `metadata.name` of the document.
        name: String,
    },
    /// Something went wrong with what a RemoteConfig document points at; `source` says what.
    #[error("document {index} (RemoteConfig `{name}`, provider `{provider}`)")]
    Remote {
        /// 1-based position of the RemoteConfig document in its stream.
        index: usize,
        /// `metadata.name` of the document.
        name: String,
        /// Its provider.
        provider: String,
        /// What failed: the fetch, or a document of the fetched stream.
        #[source]
        source: Box<Error>,
    },
    /// No remote-configuration plugin for a provider.
    #[error("remote-configuration provider `{provider}`: plugin `{program}` not found on PATH or in {system_dirs}")]
    RemoteProviderNotFound {
        /// The provider.
        provider: String,
        /// The executable name looked for.
        program: String,
        /// The system plugin directories searched besides PATH.
        system_dirs: String,
    },
    /// The configuration a RemoteConfig points at does not exist (missing file, HTTP 404 or 410, plugin exit 5).
    #[error("`{}` not found: {problem}", crate::redact::url(uri))]
    RemoteNotFound {
        /// The URI.
        uri: String,
        /// What the provider said.
        problem: String,
    },
    /// Fetching failed: plugin failure or timeout, network error, HTTP error status (after the retries).
    #[error("fetching `{}` failed: {problem}", crate::redact::url(uri))]
    RemoteFailed {
        /// The URI.
        uri: String,
        /// What happened.
        problem: String,
    },
    /// What a source returned is not in the form its provider writes (CAPA's chunks that are not gzip data): bad
    /// input, which no retry changes.
    #[error("`{}` is not what its provider writes: {problem}", crate::redact::url(uri))]
    RemoteMalformed {
        /// The URI.
        uri: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The HTTPS server's certificate did not verify against the trusted roots.
    #[error("fetching `{}`: the server's TLS certificate is not trusted: {problem}", crate::redact::url(uri))]
    RemoteUntrusted {
        /// The URI.
        uri: String,
        /// The verifier's reason.
        problem: String,
    },
    /// The fetched configuration is larger than the limit.
    #[error("`{}` is larger than the {limit}-byte limit", crate::redact::url(uri))]
    RemoteTooLarge {
        /// The URI.
        uri: String,
        /// The limit.
        limit: u64,
    },
    /// A URI the provider cannot use (wrong scheme, plain http without the opt-in, a host in a file URI).
    #[error("uri `{}` is not usable by the `{provider}` provider: {problem}", crate::redact::url(uri))]
    BadRemoteUri {
        /// The provider.
        provider: String,
        /// The URI.
        uri: String,
        /// What is wrong.
        problem: String,
    },
    /// A RemoteConfig document that was itself fetched names the built-in `file` provider.
    #[error(
        "a fetched RemoteConfig may not read local files (uri `{}`): only the userdata itself chooses local files",
        crate::redact::url(uri)
    )]
    FetchedFileRefused {
        /// The URI.
        uri: String,
    },
    /// A fetch a fetched RemoteConfig asked for would reach a loopback or link-local address.
    #[error(
        "fetching `{}`: {address} is a loopback or link-local address, which a fetched RemoteConfig may not reach",
        crate::redact::url(uri)
    )]
    LocalTargetRefused {
        /// The URI.
        uri: String,
        /// The address (or the name and what it resolved to).
        address: String,
    },
    /// A redirect the fetch policy refuses (to plain http, to a local address, too many).
    #[error("fetching `{}`: refused {problem}", crate::redact::url(uri))]
    RedirectRefused {
        /// The URI.
        uri: String,
        /// Where the redirect pointed.
        to: String,
        /// Why it is refused.
        problem: String,
    },
    /// A plugin others could change, or found through a relative PATH entry.
    #[error("{0}")]
    UntrustedPlugin(crate::process::Untrusted),
    /// Plain `http://` was not allowed.
    #[error(
        "uri `{}`: plain http is refused (the configuration would travel unauthenticated)",
        crate::redact::url(uri)
    )]
    PlainHttpRefused {
        /// The URI.
        uri: String,
    },
    /// A RemoteConfig points, directly or through others, at itself.
    #[error("RemoteConfig loop: {chain}")]
    RemoteLoop {
        /// The fetches that lead back to the first, as `provider uri → …`.
        chain: String,
    },
    /// RemoteConfig documents nested deeper than the limit.
    #[error("RemoteConfig documents nested more than {limit} deep")]
    RemoteTooDeep {
        /// The limit.
        limit: usize,
    },
    /// More fetches than the limit for one stream.
    #[error("more than {limit} RemoteConfig fetches for one stream")]
    TooManyFetches {
        /// The limit.
        limit: usize,
    },
    /// A fetched configuration is neither a machineadm stream nor plain configuration.
    #[error("the fetched configuration {0}")]
    BadRemoteContent(&'static str),
    /// A cryptadm path that systemd, YAML or the shell would change.
    #[error("cryptadm path `{path}` {problem}")]
    BadCryptadmPath {
        /// The path.
        path: String,
        /// What is wrong.
        problem: &'static str,
    },
    /// A certificate directory could not be read.
    #[error("certificate directory `{path}`: {problem}")]
    CertDir {
        /// The directory or file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
        /// The directory is missing.
        not_found: bool,
    },
    /// The stream has nothing to decrypt.
    #[error("the stream holds no EncryptedConfig document and no fetched configuration")]
    NothingToOpen,
    /// A provider name that cannot name a plugin.
    #[error("invalid provider name `{0}`: use lowercase letters, digits and dashes")]
    BadProviderName(String),
    /// A passphraseURI the built-in `file` provider cannot use.
    #[error("passphraseURI `{}` is not usable by the `file` provider: {problem}", crate::redact::url(uri))]
    BadPassphraseUri {
        /// The URI.
        uri: String,
        /// What is wrong.
        problem: &'static str,
    },
    /// A passphraseURI the built-in `vault-transit` provider cannot use.
    #[error("passphraseURI `{uri}` is not usable by the `vault-transit` provider: {problem}")]
    BadTransitUri {
        /// The URI (redacted).
        uri: String,
        /// What is wrong.
        problem: &'static str,
    },
    /// A passphraseURI the built-in `aws-kms` provider cannot use.
    #[error("passphraseURI `{uri}` is not usable by the `aws-kms` provider: {problem}")]
    BadKmsUri {
        /// The URI (redacted).
        uri: String,
        /// What is wrong.
        problem: &'static str,
    },
    /// The `aws-kms` provider is used where no AWS client was set up.
    #[error("passphrase provider `aws-kms`: no AWS client is configured")]
    NoAwsClient,
    /// AWS KMS failed for the built-in `aws-kms` provider (denied, not found, unreachable, no credentials).
    #[error("passphrase provider `aws-kms`: {0}")]
    AwsKms(#[source] crate::kms::Error),
    /// An AWS RemoteConfig source (`s3`, `aws-secrets-manager`, `aws-ssm`) failed (denied, unreachable, no
    /// credentials).
    #[error("fetching `{}`: {source}", crate::redact::url(uri))]
    AwsRemote {
        /// The URI.
        uri: String,
        /// What AWS said.
        #[source]
        source: crate::kms::Error,
    },
    /// A built-in key-manager provider is used, but no server is configured.
    #[error("passphrase provider `{provider}`: no OpenBao/Vault server is configured")]
    NoKeyManager {
        /// The provider.
        provider: &'static str,
    },
    /// The key manager of a built-in provider failed (denied, not found, sealed, unreachable).
    #[error("passphrase provider `vault-transit`: {0}")]
    KeyManager(#[source] crate::kms::Error),
    /// A passphraseURI the built-in `kmip` provider cannot use.
    #[error("passphraseURI `{uri}` is not usable by the `kmip` provider: {problem}")]
    BadKmipUri {
        /// The URI (redacted).
        uri: String,
        /// What is wrong.
        problem: &'static str,
    },
    /// The `kmip` provider is used, but no KMIP server is configured.
    #[error("passphrase provider `kmip`: no KMIP server is configured")]
    NoKmipServer,
    /// The KMIP server of the `kmip` provider failed (denied, not found, refused, unreachable).
    #[error("passphrase provider `kmip`: {0}")]
    Kmip(#[source] crate::kms::Error),
    /// The built-in `clevis` provider failed (a Tang server unreachable, a threshold not reached, a bad JWE).
    #[error("passphrase provider `clevis`: {0}")]
    Clevis(#[source] Box<crate::kms::clevis::Error>),
    /// The plugin for a provider is not installed.
    #[error("passphrase provider `{provider}`: plugin `{program}` not found on PATH or in {system_dirs}")]
    ProviderNotFound {
        /// The provider.
        provider: String,
        /// The executable name looked for.
        program: String,
        /// The system plugin directories searched besides PATH.
        system_dirs: String,
    },
    /// The plugin ran and failed, timed out, or misbehaved.
    #[error("passphrase provider `{provider}`: {problem}")]
    ProviderFailed {
        /// The provider.
        provider: String,
        /// What happened (exit status, last line of its stderr, timeout).
        problem: String,
    },
    /// The plugin does not implement a verb.
    #[error("passphrase provider `{provider}` does not support `{verb}`")]
    ProviderUnsupported {
        /// The provider.
        provider: String,
        /// The verb.
        verb: &'static str,
    },
    /// The `file` provider could not read its file.
    #[error("passphrase file `{path}`")]
    PassphraseFile {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A passphrase source produced nothing usable.
    #[error("{0}")]
    BadPassphrase(String),
    /// The cloud-init template could not be rendered.
    #[error("template: {0}")]
    Template(String),
    /// Asking the operator failed.
    #[error("passphrase prompt failed")]
    Prompt(#[source] std::io::Error),
}

impl Classify for Error {
    fn status(&self) -> ExitStatus {
        match self {
            Error::Remote { source, .. } => source.status(),
            Error::Kmip(source) => source.status(),
            Error::NoKmipServer => ExitStatus::Usage,
            Error::KeyManager(source) | Error::AwsKms(source) | Error::AwsRemote { source, .. } => source.status(),
            Error::Clevis(source) => source.status(),
            Error::NoAwsClient => ExitStatus::Failure,
            Error::NoKeyManager { .. } => ExitStatus::Usage,
            Error::Unauthenticated { .. } | Error::RemoteUntrusted { .. } => ExitStatus::Unauthenticated,
            Error::ProviderNotFound { .. } | Error::RemoteProviderNotFound { .. } | Error::RemoteNotFound { .. } => {
                ExitStatus::NotFound
            }
            Error::CertDir { not_found: true, .. } => ExitStatus::NotFound,
            Error::RemoteFailed { .. } => ExitStatus::Failure,
            Error::PassphraseFile { source, .. } => crate::exit::io_status(source.kind()),
            Error::ProviderFailed { .. } | Error::ProviderUnsupported { .. } => ExitStatus::Failure,
            // The operator typed two different passphrases.
            Error::Prompt(e) if e.kind() == std::io::ErrorKind::InvalidInput => ExitStatus::InvalidInput,
            Error::Prompt(_) => ExitStatus::Failure,
            Error::Yaml(_)
            | Error::TooLarge { .. }
            | Error::SealedTooLarge { .. }
            | Error::Invalid { .. }
            | Error::Unsupported { .. }
            | Error::RemoteRefused { .. }
            | Error::NothingToOpen
            | Error::BadProviderName(_)
            | Error::BadPassphraseUri { .. }
            | Error::BadTransitUri { .. }
            | Error::BadKmipUri { .. }
            | Error::BadKmsUri { .. }
            | Error::BadPassphrase(_)
            | Error::Template(_)
            | Error::RemoteTooLarge { .. }
            | Error::BadRemoteUri { .. }
            | Error::PlainHttpRefused { .. }
            | Error::FetchedFileRefused { .. }
            | Error::UntrustedPlugin(_)
            | Error::LocalTargetRefused { .. }
            | Error::RedirectRefused { .. }
            | Error::RemoteLoop { .. }
            | Error::RemoteTooDeep { .. }
            | Error::TooManyFetches { .. }
            | Error::BadRemoteContent(_)
            | Error::RemoteMalformed { .. }
            | Error::BadCryptadmPath { .. }
            | Error::CertDir { .. } => ExitStatus::InvalidInput,
        }
    }

    fn hint(&self) -> Option<Cow<'_, str>> {
        let hint = match self {
            Error::Remote { source, .. } => return source.hint(),
            Error::Kmip(source) => return source.hint(),
            Error::NoKmipServer => {
                "give --kmip-server HOST:PORT, --kmip-cacert, --kmip-client-cert and --kmip-client-key (or the \
                 CRYPTADM_KMIP_* variables)"
            }
            Error::KeyManager(source) | Error::AwsKms(source) | Error::AwsRemote { source, .. } => {
                return source.hint();
            }
            Error::Clevis(source) => return source.hint(),
            Error::NoKeyManager { .. } => "set VAULT_ADDR (or BAO_ADDR), or give --vault-addr",
            Error::RemoteProviderNotFound { .. } => "install the remote-configuration plugin, or use `file` or `https`",
            Error::RemoteUntrusted { .. } => "trust the server's CA (a directory of *.crt files)",
            Error::UntrustedPlugin(_) => {
                "make the plugin and its directories owned by root (or you) and writable only by the owner, and use \
                 absolute PATH entries"
            }
            Error::FetchedFileRefused { .. } => {
                "put a `file` RemoteConfig in the userdata itself, not in a fetched stream"
            }
            Error::LocalTargetRefused { .. } => {
                "fetch local addresses from a RemoteConfig in the userdata itself, or pass --allow-local-targets"
            }
            Error::RedirectRefused { .. } => "point the RemoteConfig at the final https:// URL",
            Error::RemoteLoop { .. } => "a fetched stream must not point back at a configuration that includes it",
            Error::Unauthenticated { .. } => {
                "check that the passphrase source gives the exact bytes used when sealing (no newline is stripped)"
            }
            Error::ProviderNotFound { .. } => "install the plugin, or give the passphrase another way",
            Error::ProviderFailed { .. } => "run the plugin by hand to see its error",
            Error::Unsupported { what: "apiVersion", .. } | Error::Unsupported { what: "kind", .. } => {
                "this cryptadm reads machineadm.cluster.x-k8s.io/v1alpha1 EncryptedConfig and RemoteConfig documents"
            }
            Error::RemoteRefused { .. } => "open it without strict mode to fetch the RemoteConfig",
            Error::RemoteMalformed { .. } => {
                "the source holds something else than its provider's layout (CAPA's gzip'd userdata chunks): write \
                 it again; retrying reads the same"
            }
            Error::NothingToOpen => "seal a configuration with `cryptadm bootstrap seal` first",
            Error::Template(_) => "templates may use `machine_config` and the filters `base64` and `gzipBase64`",
            _ => return None,
        };
        Some(Cow::Borrowed(hint))
    }
}
