//! Where passphrases come from, for every command: never argv.

use super::env_vars;
use crate::cmd::error::Failure;
use crate::crypto::Passphrase;
use crate::crypto::secret::MAX_PASSPHRASE_LEN;
use crate::exit::ExitStatus;
use anyhow::Context;
use clap::Args;
use std::path::{Path, PathBuf};

/// The non-interactive passphrase sources.
#[derive(Args, Debug, Clone, Default)]
pub struct PassphraseArgs {
    /// Read the passphrase from FILE (`-`: standard input), byte for byte: no newline is stripped
    ///
    /// Sources, first found wins: this flag, then CRYPTADM_PASSPHRASE_FILE, then CRYPTADM_PASSPHRASE (the value
    /// itself), then the command's own fallback (the provider; a prompt on a terminal). A passphrase is never
    /// taken from the command line, where other users could read it.
    #[arg(long, value_name = "FILE", env = env_vars::CRYPTADM_PASSPHRASE_FILE, help_heading = "Passphrase")]
    pub passphrase_file: Option<PathBuf>,
}

/// The hint given when no passphrase source exists and no terminal can be asked.
pub const NO_SOURCE_HINT: &str =
    "give --passphrase-file FILE (`-` for standard input), or set CRYPTADM_PASSPHRASE_FILE or CRYPTADM_PASSPHRASE";

impl PassphraseArgs {
    /// Reads the passphrase from the flag or the environment, if either gives one.
    pub fn read(&self, stdin: &mut StdinClaim) -> anyhow::Result<Option<Passphrase>> {
        if let Some(path) = &self.passphrase_file {
            let source = if is_stdin(path) { "standard input".to_owned() } else { format!("`{}`", path.display()) };
            let bytes = if is_stdin(path) {
                stdin.claim("--passphrase-file")?;
                // On a terminal `-` means "ask me": no echo, and no newline taken as part of the passphrase.
                if let Some(typed) = super::printer::prompt_on_terminal("Passphrase", false)
                    .context("reading the passphrase from the terminal")?
                {
                    return Ok(Some(typed));
                }
                crate::crypto::secret::read_secret(std::io::stdin().lock(), MAX_PASSPHRASE_LEN)
            } else {
                crate::crypto::secret::read_passphrase_file(path)
            }
            .with_context(|| format!("reading the passphrase from {source}"))?;
            return non_empty(Passphrase::new(bytes), &source).map(Some);
        }
        match crate::cmd::env_vars::var_os(env_vars::CRYPTADM_PASSPHRASE) {
            Some(value) => {
                use std::os::unix::ffi::OsStringExt;
                non_empty(Passphrase::new(value.into_vec()), env_vars::CRYPTADM_PASSPHRASE).map(Some)
            }
            None => Ok(None),
        }
    }
}

fn non_empty(passphrase: Passphrase, source: &str) -> anyhow::Result<Passphrase> {
    if passphrase.is_empty() {
        return Err(Failure::new(ExitStatus::InvalidInput, format!("the passphrase from {source} is empty")).into());
    }
    // The command holds it: no server or plugin text it shows may quote it, in any spelling.
    crate::redact::hold(passphrase.expose());
    Ok(passphrase)
}

/// `-` names standard input.
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Standard input can feed one thing per run: a second claim is a usage error, not a silent empty read.
///
/// The claim is the process's, not the handle's: every secret source of a run (passphrase, registry passwords,
/// key files, requests) shares it, whichever handle it was given.
#[derive(Default)]
pub struct StdinClaim {
    // A handle on the process's one claim; kept a struct with a field so call sites read `StdinClaim::default()`.
    _handle: (),
}

/// Who claimed standard input in this process, if anyone.
static STDIN_CLAIMED_BY: std::sync::Mutex<Option<&'static str>> = std::sync::Mutex::new(None);

impl StdinClaim {
    /// Claims standard input for `what` (a flag name).
    pub fn claim(&mut self, what: &'static str) -> anyhow::Result<()> {
        let mut claimed = STDIN_CLAIMED_BY.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match claimed.replace(what) {
            Some(first) => Err(Failure::new(ExitStatus::Usage, format!("{first} and {what} both read standard input"))
                .with_hint("give one of them a file")
                .into()),
            None => Ok(()),
        }
    }
}
