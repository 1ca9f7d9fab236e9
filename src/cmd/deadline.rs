//! The overall deadline of a command's network work, resolved once from `--timeout` or `CRYPTADM_TIMEOUT` (the
//! flag wins), with a default for `bootstrap open`, and read by every place that builds a network client
//! (Vault, OpenStack, registries, RemoteConfig fetches). Long-running servers have none.

use super::env_vars::{self as env, var_os};
use super::error::Failure;
use crate::deadline::Deadline;
use crate::exit::ExitStatus;
use std::time::Duration;

/// `bootstrap open`'s deadline when none is given: a first boot whose key manager drips must fail while an
/// operator still watches, not after retries × per-request timeouts.
pub const OPEN_DEFAULT_SECONDS: u64 = 120;
/// Longest deadline accepted (a day).
pub const MAX_SECONDS: u64 = 86_400;

/// How a command is bounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Bounded only when asked to.
    Command,
    /// `bootstrap open`: bounded by [`OPEN_DEFAULT_SECONDS`] unless asked otherwise.
    FirstBoot,
    /// A long-running server: never bounded.
    Server,
}

/// Starts the deadline from `flag` (`--timeout`), else `CRYPTADM_TIMEOUT`, else the default of `kind`. A value
/// that is not a whole number of seconds from 1 to a day is a usage error.
pub fn install(flag: Option<u64>, kind: Kind) -> anyhow::Result<()> {
    let seconds = match flag {
        Some(seconds) => Some(seconds),
        None => from_env()?,
    };
    let seconds = match kind {
        Kind::Server => None,
        Kind::FirstBoot => Some(seconds.unwrap_or(OPEN_DEFAULT_SECONDS)),
        Kind::Command => seconds,
    };
    // Installed in the core, where every network layer (HTTP, raw sockets, registries) takes it from.
    if let Some(seconds) = seconds {
        crate::deadline::set_command(Deadline::after(Duration::from_secs(seconds)));
    }
    Ok(())
}

fn from_env() -> anyhow::Result<Option<u64>> {
    let Some(value) = var_os(env::CRYPTADM_TIMEOUT) else { return Ok(None) };
    let text = value.to_string_lossy();
    match text.trim().parse::<u64>() {
        Ok(seconds) if (1..=MAX_SECONDS).contains(&seconds) => Ok(Some(seconds)),
        _ => Err(Failure::new(
            ExitStatus::Usage,
            format!("CRYPTADM_TIMEOUT `{}` is not a number of seconds", crate::redact::server_message(text.as_bytes())),
        )
        .with_hint(format!("give a whole number of seconds from 1 to {MAX_SECONDS}, or unset it"))
        .into()),
    }
}

/// The command's deadline, when it has one.
pub fn current() -> Option<Deadline> {
    crate::deadline::command()
}
