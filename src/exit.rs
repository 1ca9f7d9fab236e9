//! Exit statuses and the one place where an error becomes an exit code and a hint.
//!
//! The numbers follow the gRPC status codes that the CSI-Addons EncryptionKeyRotation spec uses, so that shell
//! scripts and the `volume serve` gRPC mode agree on what a failure means.

use std::borrow::Cow;
use std::fmt;

/// How a cryptadm process ends. The discriminant is the process exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
#[non_exhaustive]
pub enum ExitStatus {
    /// Success, including "the requested state already holds".
    Success = 0,
    /// A failure not classified below: I/O, a failing plugin, an internal error.
    Failure = 1,
    /// The command line is wrong (unknown flag, missing secret source with no terminal to ask on).
    Usage = 2,
    /// Invalid argument or input: malformed YAML or header, unsupported algorithm, bad key spec.
    InvalidInput = 3,
    /// Something named does not exist: an input file, a key file, a plugin.
    NotFound = 5,
    /// Another operation holds the lock.
    Aborted = 10,
    /// An integrity check failed: digest mismatch, truncated ciphertext.
    DataLoss = 15,
    /// Wrong passphrase or key; authentication tag mismatch; access denied.
    Unauthenticated = 16,
}

impl ExitStatus {
    /// The process exit code.
    pub fn code(self) -> u8 {
        self as u8
    }
}

/// The exit-code table as published in `--help`, the man pages and the README: (code, meaning, examples).
pub const TABLE: &[(ExitStatus, &str, &str)] = &[
    (
        ExitStatus::Success,
        "success (also: the requested state already holds)",
        "re-running `bootstrap open` with the same result",
    ),
    (
        ExitStatus::Failure,
        "failure not classified below (I/O, plugin, internal)",
        "disk full, a passphrase plugin that fails or times out",
    ),
    (ExitStatus::Usage, "usage error", "unknown flag, no passphrase source and no terminal to prompt on"),
    (
        ExitStatus::InvalidInput,
        "invalid argument or input",
        "malformed YAML, unknown kind or apiVersion, unsupported algorithm",
    ),
    (ExitStatus::NotFound, "not found", "input file, passphrase file or provider plugin missing"),
    (ExitStatus::Aborted, "aborted: another operation holds the lock", "concurrent operations on the same target"),
    (ExitStatus::DataLoss, "data loss: an integrity check failed", "digest mismatch, truncated ciphertext"),
    (
        ExitStatus::Unauthenticated,
        "unauthenticated",
        "wrong passphrase, or a ciphertext whose authentication tag fails",
    ),
];

/// Renders [`TABLE`] as plain text for `--help`.
pub fn table_text() -> String {
    let mut out = String::from("Exit status:\n");
    for (status, meaning, _) in TABLE {
        out.push_str(&format!("  {:>2}  {meaning}\n", status.code()));
    }
    out
}

/// An error that knows its exit status and, where one helps, a hint for the operator.
///
/// Core error enums implement this; [`classify`] finds the first implementor in an error chain.
pub trait Classified {
    /// The exit status this error ends the process with.
    fn status(&self) -> ExitStatus;
    /// What the operator can try next, if anything useful can be said.
    fn hint(&self) -> Option<Cow<'_, str>> {
        None
    }
}

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

impl Classified for Failure {
    fn status(&self) -> ExitStatus {
        self.status
    }
    fn hint(&self) -> Option<Cow<'_, str>> {
        self.hint.as_deref().map(Cow::Borrowed)
    }
}

/// Maps an error to its exit status and hint: the first classified error in the chain decides.
///
/// Plain I/O errors are classified by kind (a missing file is [`ExitStatus::NotFound`]); anything else is
/// [`ExitStatus::Failure`].
pub fn classify(error: &anyhow::Error) -> (ExitStatus, Option<String>) {
    for cause in error.chain() {
        if let Some(found) = as_classified(cause) {
            return (found.status(), found.hint().map(Cow::into_owned));
        }
    }
    for cause in error.chain() {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            return classify_io(io);
        }
    }
    (ExitStatus::Failure, None)
}

fn as_classified<'a>(cause: &'a (dyn std::error::Error + 'static)) -> Option<&'a dyn Classified> {
    if let Some(e) = cause.downcast_ref::<Failure>() {
        return Some(e);
    }
    if let Some(e) = cause.downcast_ref::<crate::machineadm::Error>() {
        return Some(e);
    }
    if let Some(e) = cause.downcast_ref::<crate::ocicrypt::Error>() {
        return Some(e);
    }
    if let Some(e) = cause.downcast_ref::<crate::render::kubernetes::Error>() {
        return Some(e);
    }
    if let Some(e) = cause.downcast_ref::<crate::luks::Error>() {
        return Some(e);
    }
    if let Some(e) = cause.downcast_ref::<crate::volume::Error>() {
        return Some(e);
    }
    None
}

fn classify_io(io: &std::io::Error) -> (ExitStatus, Option<String>) {
    use std::io::ErrorKind;
    match io.kind() {
        ErrorKind::NotFound => (ExitStatus::NotFound, Some("check the path".into())),
        ErrorKind::PermissionDenied => {
            (ExitStatus::Failure, Some("check the file's owner and mode, or run as a user that may read it".into()))
        }
        ErrorKind::BrokenPipe => (
            ExitStatus::Failure,
            Some("the program reading cryptadm's output stopped early; the output is incomplete".into()),
        ),
        ErrorKind::InvalidData => (ExitStatus::InvalidInput, None),
        _ => (ExitStatus::Failure, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_codes_are_unique_and_match_design() {
        let codes: Vec<u8> = TABLE.iter().map(|(s, _, _)| s.code()).collect();
        assert_eq!(codes, vec![0, 1, 2, 3, 5, 10, 15, 16]);
    }

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
    fn unclassified_errors_are_failures() {
        assert_eq!(classify(&anyhow::anyhow!("boom")).0, ExitStatus::Failure);
    }
}
