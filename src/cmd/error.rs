//! Where an error becomes an exit status and a hint: the command line's own [`Failure`], the list of every core
//! error type, and the hints that name flags and environment variables (the core's errors never do).
//!
//! An `anyhow::Error` erases the type of what it carries, so finding the [`Classify`] implementation of a cause
//! needs its concrete type: [`classified_errors!`] lists them once. A test (`every_error_type_is_classified`)
//! reads the source for error types and fails for one missing here, so a new error type cannot silently exit 1.

use crate::exit::{Classify, ExitStatus};
use std::borrow::Cow;
use std::fmt;

/// A classified error raised by the command-line layer (usage problems, refused outputs).
#[derive(Debug)]
pub struct Failure {
    status: ExitStatus,
    message: String,
    hint: Option<String>,
}

impl Failure {
    /// A new error with the given status and one-line message.
    pub fn new(status: ExitStatus, message: impl Into<String>) -> Self {
        Self { status, message: message.into(), hint: None }
    }

    /// Adds a hint.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Failure {}

impl Classify for Failure {
    fn status(&self) -> ExitStatus {
        self.status
    }
    fn hint(&self) -> Option<Cow<'_, str>> {
        self.hint.as_deref().map(Cow::Borrowed)
    }
}

/// Declares the error types [`classify`] recognises, and [`CLASSIFIED_ERRORS`] naming them for the test that
/// compares the list with the source.
macro_rules! classified_errors {
    ($($error:ty),+ $(,)?) => {
        /// Every error type [`classify`] recognises, as written in this module.
        pub const CLASSIFIED_ERRORS: &[&str] = &[$(stringify!($error)),+];

        fn as_classified<'a>(cause: &'a (dyn std::error::Error + 'static)) -> Option<&'a dyn Classify> {
            $(
                if let Some(error) = cause.downcast_ref::<$error>() {
                    return Some(error);
                }
            )+
            None
        }
    };
}

classified_errors!(
    Failure,
    crate::crypto::KeyError,
    crate::crypto::argon2::Argon2Error,
    crate::crypto::xts::XtsKeyError,
    crate::oci::Error,
    crate::ocicrypt::Error,
    crate::luks::Error,
    crate::qcow2::Error,
    crate::disk::Error,
    crate::volume::Error,
    crate::machineadm::Error,
    crate::render::RenderError,
    crate::render::kubernetes::Error,
    crate::ocicrypt::keyfiles::KeyFileError,
    crate::kms::Error,
    crate::kms::kmip::ttlv::DecodeError,
    crate::kms::clevis::Error,
    crate::deadline::Passed,
    crate::kms::tpm2::Error,
    crate::process::Untrusted,
    crate::machineadm::remote::HopRefused,
    crate::machineadm::remote::LocalOnly,
    crate::proxy::BadProxy,
);

/// Maps an error to its exit status and hint: the first classified error in the chain decides.
///
/// Plain I/O errors are classified by kind (a missing file is [`ExitStatus::NotFound`]); anything else is
/// [`ExitStatus::Failure`].
pub fn classify(error: &anyhow::Error) -> (ExitStatus, Option<String>) {
    for cause in error.chain() {
        if let Some(found) = as_classified(cause) {
            let hint = flag_hint(cause).map(Cow::Borrowed).or_else(|| found.hint());
            // An I/O error under a classified one (a missing file) still gets the I/O hint.
            let hint = hint.map(Cow::into_owned).or_else(|| io_cause_hint(error));
            return (found.status(), hint);
        }
    }
    for cause in error.chain() {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            return (crate::exit::io_status(io.kind()), io_hint(io.kind()).map(str::to_owned));
        }
    }
    (ExitStatus::Failure, None)
}

/// The error as the one line an operator reads: each cause after its context, `: `-separated, but a cause the
/// line already ends with is not repeated (an error that prints its source, and the source itself, would
/// otherwise read "… No such file or directory: No such file or directory").
pub fn one_line(error: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if text.is_empty() || line.ends_with(text.as_str()) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

fn io_cause_hint(error: &anyhow::Error) -> Option<String> {
    let io = error.chain().find_map(|cause| cause.downcast_ref::<std::io::Error>())?;
    io_hint(io.kind()).map(str::to_owned)
}

fn io_hint(kind: std::io::ErrorKind) -> Option<&'static str> {
    use std::io::ErrorKind;
    match kind {
        ErrorKind::NotFound => Some("check the path"),
        ErrorKind::IsADirectory => Some("give a file, not a directory"),
        ErrorKind::PermissionDenied => {
            Some("check the owner and mode of the file and of its directory, or run as a user allowed to use them")
        }
        ErrorKind::BrokenPipe => Some("the program reading cryptadm's output stopped early; the output is incomplete"),
        _ => None,
    }
}

/// The hint for a core error where the command line knows which flag or variable to name; `None` leaves the
/// core's own hint.
fn flag_hint(cause: &(dyn std::error::Error + 'static)) -> Option<&'static str> {
    use crate::render::kubernetes::Error as K8s;
    use crate::volume::Error as Volume;
    if let Some(error) = cause.downcast_ref::<Volume>() {
        return match error {
            Volume::MissingField { .. } => Some("the request needs `volume_id` (or --volume-id)"),
            Volume::NoDevice { .. } => Some(
                "give --volume-path, or --volume-path-template; or check that the volume is staged here (its \
                 dm-crypt mapping named <volume id> or *-<volume id> under --sysfs-root)",
            ),
            Volume::AmbiguousDevice { .. } => Some("give --volume-path (or a --volume-path-template that exists)"),
            Volume::VolumeNotFound { .. } => Some("check --volume-path (an image file or a block device)"),
            Volume::NoStoredKey { .. } => {
                // Where each store keeps it, from the backend table.
                static HINT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
                Some(HINT.get_or_init(|| {
                    format!(
                        "check --volume-id and --key-store: the store holds no current passphrase for this volume ({})",
                        crate::kms::backends::store_locations()
                    )
                }))
            }
            _ => None,
        };
    }
    if let Some(error) = cause.downcast_ref::<crate::ocicrypt::Error>() {
        return match error {
            crate::ocicrypt::Error::RegistryDenied(_) => Some(REGISTRY_CREDENTIALS_HINT),
            // A Transit key that Vault refused: the key is right, the credentials or policy are not. (Other key
            // managers' refusals carry their own hint.)
            crate::ocicrypt::Error::KeyManagerRefused { message, .. }
                if message.contains(": permission denied by ") =>
            {
                Some(KEY_MANAGER_DENIED_HINT)
            }
            crate::ocicrypt::Error::Unauthenticated(_) => {
                Some("give a private key (--key) that belongs to one of the layer's recipients")
            }
            crate::ocicrypt::Error::CertificateMissing(_) => {
                Some("give the recipient's X.509 certificate with --cert FILE (its private key with --key)")
            }
            crate::ocicrypt::Error::NothingSelected { platform: true, .. } => {
                Some("give --platform as OS/ARCH[/VARIANT], one the image has (`cryptadm image inspect` lists them)")
            }
            crate::ocicrypt::Error::NothingSelected { platform: false, .. } => Some(
                "check --layer and --platform; if a result without encrypted layers is what you want, add \
                 --allow-plaintext",
            ),
            _ => None,
        };
    }
    if let Some(crate::oci::Error::RegistryDenied(_)) = cause.downcast_ref::<crate::oci::Error>() {
        return Some(REGISTRY_CREDENTIALS_HINT);
    }
    if let Some(error) = cause.downcast_ref::<crate::machineadm::Error>() {
        return machineadm_hint(error);
    }
    if let Some(crate::ocicrypt::keyfiles::KeyFileError::Unusable { remedy, .. }) = cause.downcast_ref() {
        use crate::ocicrypt::keyfiles::Remedy;
        return match remedy {
            Remedy::RemovePassword => Some(
                "keys in a node's keys directory cannot have a password (containerd and CRI-O cannot ask for one): \
                 remove it with `openssl pkey -in KEY -out plain.pem` (gpg: `gpg --passwd`), or use --format kep",
            ),
            Remedy::GivePassword => Some(
                "give the key's password with --passphrase-file FILE (`-` for standard input), or set \
                 CRYPTADM_PASSPHRASE_FILE or CRYPTADM_PASSPHRASE",
            ),
            _ => None,
        };
    }
    if let Some(error) = cause.downcast_ref::<K8s>() {
        return match error {
            K8s::InvalidName { what: "namespace", .. } => Some(
                "a namespace is a DNS-1123 label: at most 63 characters, lowercase letters, digits and `-`, starting \
                 and ending with a letter or digit",
            ),
            K8s::InvalidDataKey { .. } => Some(
                "name the entry with --key NAME=FILE, using letters, digits, `-`, `_` and `.` (e.g. `--key \
                 node.pem=FILE`)",
            ),
            K8s::DuplicateDataKey(_) => Some("give one of them another name with --key NAME=FILE"),
            _ => None,
        };
    }
    None
}

/// The hint when Vault/OpenBao refused to unwrap a layer key with a Transit key.
pub const KEY_MANAGER_DENIED_HINT: &str =
    "Vault refused: check the token or login role, and that its policy allows `update` on MOUNT/decrypt/KEY";

const REGISTRY_CREDENTIALS_HINT: &str = "check the registry credentials: --src-creds/--dest-creds/--creds USER, \
                                         --*authfile, or log in with podman login / docker login";

fn machineadm_hint(error: &crate::machineadm::Error) -> Option<&'static str> {
    use crate::machineadm::Error;
    match error {
        Error::ProviderNotFound { .. } => Some(
            "install the plugin, or give the passphrase with --passphrase-file, CRYPTADM_PASSPHRASE_FILE or \
             CRYPTADM_PASSPHRASE",
        ),
        Error::ProviderFailed { .. } => {
            Some("run the plugin by hand to see its error; --retries and --plugin-timeout tune the retry policy")
        }
        Error::RemoteRefused { .. } => Some("drop --strict to fetch it, or use --skip-remote to skip it"),
        Error::Remote { source, .. } => machineadm_hint(source),
        Error::RemoteProviderNotFound { .. } => {
            Some("install the plugin (PATH, /usr/libexec/machineadm), or use the built-in `file` or `https` provider")
        }
        Error::RemoteFailed { .. } => Some("--retries and --plugin-timeout tune the retry policy and the deadline"),
        Error::RemoteUntrusted { .. } => Some("trust the server's CA with --cert-dir DIR (DIR/*.crt, PEM)"),
        Error::PlainHttpRefused { .. } => Some("use an https:// URI, or allow plain http with --allow-http"),
        Error::BadCryptadmPath { .. } => {
            Some("give --cryptadm-path an absolute path of letters, digits and `/._-+`, e.g. /usr/local/bin/cryptadm")
        }
        Error::CertDir { .. } => Some("--cert-dir takes a directory of PEM CA certificates named *.crt"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classify_finds_failure_under_context() {
        let err = anyhow::Error::new(Failure::new(ExitStatus::Usage, "no source").with_hint("give one"))
            .context("reading the passphrase");
        assert_eq!(classify(&err), (ExitStatus::Usage, Some("give one".into())));
    }

    #[test]
    fn classify_maps_missing_files_to_not_found() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
        let err = anyhow::Error::new(io).context("reading `x`");
        assert_eq!(classify(&err).0, ExitStatus::NotFound);
    }

    #[test]
    fn one_line_says_each_cause_once() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file or directory (os error 2)");
        let luks = crate::luks::Error::Io { context: "opening `missing.img`".into(), source: io };
        let err = anyhow::Error::new(luks).context("inspecting `missing.img`");
        assert_eq!(
            one_line(&err),
            "inspecting `missing.img`: opening `missing.img`: No such file or directory (os error 2)"
        );
        let err = anyhow::Error::new(crate::luks::Error::NoFreeKeyslot).context("no free keyslot");
        assert_eq!(one_line(&err), "no free keyslot");
        assert_eq!(one_line(&anyhow::anyhow!("b").context("a")), "a: b");
    }

    #[test]
    fn unclassified_errors_are_failures() {
        assert_eq!(classify(&anyhow::anyhow!("boom")).0, ExitStatus::Failure);
    }

    #[test]
    fn core_errors_get_flag_hints_here() {
        let err = anyhow::Error::new(crate::volume::Error::MissingField { field: "volume_id" });
        let (status, hint) = classify(&err);
        assert_eq!(status, ExitStatus::InvalidInput);
        assert!(hint.unwrap().contains("--volume-id"));
    }
}
