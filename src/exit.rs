//! Exit statuses: the one table of codes, and the trait by which each module's errors say which code they mean.
//!
//! This module imports nothing but std, so that every other module may depend on it without a cycle.
//!
//! The numbers follow the gRPC status codes that the CSI-Addons EncryptionKeyRotation spec uses, so that shell
//! scripts and the `volume serve` gRPC mode agree on what a failure means.

use std::borrow::Cow;

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
    /// The command's overall deadline (`--timeout`, `CRYPTADM_TIMEOUT`) passed before its network work was done.
    DeadlineExceeded = 4,
    /// Something named does not exist: an input file, a key file, a plugin.
    NotFound = 5,
    /// Another operation holds the lock.
    Aborted = 10,
    /// An integrity check failed: a truncated or altered image layer, a blob whose digest does not match.
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
    (
        ExitStatus::DeadlineExceeded,
        "deadline exceeded: --timeout (CRYPTADM_TIMEOUT) passed",
        "a key manager, Tang server or registry that does not answer, or answers too slowly",
    ),
    (ExitStatus::NotFound, "not found", "input file, passphrase file or provider plugin missing"),
    (ExitStatus::Aborted, "aborted: another operation holds the lock", "concurrent operations on the same target"),
    (
        ExitStatus::DataLoss,
        "data loss: an integrity check failed",
        "an image layer truncated or altered (HMAC), a blob whose digest does not match",
    ),
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
/// Every error type of the crate implements this, each in its own module; `cmd::error` walks an error chain and
/// asks the first implementor it recognises (and a test there fails for an error type it would not recognise).
/// Hints are in the core's words: the command line adds the flag names where it knows them.
pub trait Classify {
    /// The exit status this error ends the process with.
    fn status(&self) -> ExitStatus;
    /// What the operator can try next, if anything useful can be said.
    fn hint(&self) -> Option<Cow<'_, str>> {
        None
    }
}

/// The exit status of a failed I/O operation that no module classified: a missing file is
/// [`ExitStatus::NotFound`]; unreadable data, and a directory where a file is expected (or a file where a
/// directory is), [`ExitStatus::InvalidInput`]; anything else a failure.
pub fn io_status(kind: std::io::ErrorKind) -> ExitStatus {
    use std::io::ErrorKind;
    match kind {
        ErrorKind::NotFound => ExitStatus::NotFound,
        ErrorKind::InvalidData | ErrorKind::IsADirectory | ErrorKind::NotADirectory => ExitStatus::InvalidInput,
        _ => ExitStatus::Failure,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_codes_are_unique_and_match_design() {
        let codes: Vec<u8> = TABLE.iter().map(|(s, _, _)| s.code()).collect();
        assert_eq!(codes, vec![0, 1, 2, 3, 4, 5, 10, 15, 16]);
    }

    #[test]
    fn io_errors_map_by_kind() {
        assert_eq!(io_status(std::io::ErrorKind::NotFound), ExitStatus::NotFound);
        assert_eq!(io_status(std::io::ErrorKind::InvalidData), ExitStatus::InvalidInput);
        assert_eq!(io_status(std::io::ErrorKind::IsADirectory), ExitStatus::InvalidInput);
        assert_eq!(io_status(std::io::ErrorKind::StorageFull), ExitStatus::Failure);
    }
}
