//! The KMIP settings of every command that takes `kmip://` references: one clap struct, flattened, resolved here
//! from flags and `CRYPTADM_KMIP_*` variables into [`crate::kms::kmip::KmipSettings`].
//!
//! Precedence: a flag, then its variable. The CA, client certificate and key are PEM files (never argv values).
//! An optional Username and Password credential, for servers that want one on top of the client certificate:
//! the password comes from `--kmip-password-file` / `CRYPTADM_KMIP_PASSWORD_FILE` or `CRYPTADM_KMIP_PASSWORD`,
//! never from the command line.

use super::env_vars::{self as env, var_os};
use super::error::Failure;
use crate::crypto::SecretBytes;
use crate::exit::ExitStatus;
use crate::kms::kmip::{Kmip, KmipSettings};
use clap::Args;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Flags of the KMIP client.
#[derive(Args, Debug, Clone, Default)]
pub struct KmipArgs {
    /// KMIP server, HOST:PORT (5696 is KMIP's port) [env: CRYPTADM_KMIP_SERVER]
    #[arg(help_heading = crate::kms::backends::KMIP_HEADING, long, value_name = "HOST:PORT")]
    pub kmip_server: Option<String>,
    /// PEM file of the CA that signed the KMIP server's certificate [env: CRYPTADM_KMIP_CACERT]
    #[arg(help_heading = crate::kms::backends::KMIP_HEADING, long, value_name = "FILE")]
    pub kmip_cacert: Option<PathBuf>,
    /// PEM client certificate for TLS client authentication [env: CRYPTADM_KMIP_CLIENT_CERT]
    #[arg(help_heading = crate::kms::backends::KMIP_HEADING, long, value_name = "FILE")]
    pub kmip_client_cert: Option<PathBuf>,
    /// PEM key of --kmip-client-cert [env: CRYPTADM_KMIP_CLIENT_KEY]
    #[arg(help_heading = crate::kms::backends::KMIP_HEADING, long, value_name = "FILE")]
    pub kmip_client_key: Option<PathBuf>,
    /// Username of a KMIP Username and Password credential [env: CRYPTADM_KMIP_USERNAME]
    #[arg(help_heading = crate::kms::backends::KMIP_HEADING, long, value_name = "NAME")]
    pub kmip_username: Option<String>,
    /// File holding the credential's password [env: CRYPTADM_KMIP_PASSWORD_FILE, CRYPTADM_KMIP_PASSWORD]
    #[arg(help_heading = crate::kms::backends::KMIP_HEADING, long, value_name = "FILE")]
    pub kmip_password_file: Option<PathBuf>,
}

fn text(name: &str) -> Option<String> {
    var_os(name).and_then(|v| v.into_string().ok()).filter(|v| !v.is_empty())
}

fn path(name: &str) -> Option<PathBuf> {
    var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from)
}

fn usage(message: impl Into<String>, hint: &str) -> anyhow::Error {
    Failure::new(ExitStatus::Usage, message).with_hint(hint).into()
}

impl KmipArgs {
    /// The settings, or `None` when no server is given anywhere (a run that needs no KMIP).
    pub fn settings(&self, timeout: Duration) -> anyhow::Result<Option<KmipSettings>> {
        let Some(server) = self.kmip_server.clone().or_else(|| text(env::CRYPTADM_KMIP_SERVER)) else {
            return Ok(None);
        };
        let ca = self.kmip_cacert.clone().or_else(|| path(env::CRYPTADM_KMIP_CACERT)).ok_or_else(|| {
            usage(
                "the KMIP client needs the CA of the server's certificate",
                "give --kmip-cacert FILE (or CRYPTADM_KMIP_CACERT)",
            )
        })?;
        let cert = self.kmip_client_cert.clone().or_else(|| path(env::CRYPTADM_KMIP_CLIENT_CERT));
        let key = self.kmip_client_key.clone().or_else(|| path(env::CRYPTADM_KMIP_CLIENT_KEY));
        let client_identity = match (cert, key) {
            (Some(cert), Some(key)) => Some((cert, key)),
            (None, None) => None,
            _ => {
                return Err(usage(
                    "a KMIP client certificate needs its key, and a key its certificate",
                    "give both --kmip-client-cert and --kmip-client-key (or CRYPTADM_KMIP_CLIENT_CERT and _KEY)",
                ));
            }
        };
        Ok(Some(KmipSettings { server, ca, client_identity, credential: self.credential()?, timeout }))
    }

    fn credential(&self) -> anyhow::Result<Option<(String, SecretBytes)>> {
        let Some(username) = self.kmip_username.clone().or_else(|| text(env::CRYPTADM_KMIP_USERNAME)) else {
            return Ok(None);
        };
        let file = self.kmip_password_file.clone().or_else(|| path(env::CRYPTADM_KMIP_PASSWORD_FILE));
        let password = match file {
            Some(file) => SecretBytes::new(crate::crypto::secret::read_passphrase_file(&file).map_err(|e| {
                Failure::new(crate::exit::io_status(e.kind()), format!("KMIP password file `{}`: {e}", file.display()))
            })?),
            None => match var_os(env::CRYPTADM_KMIP_PASSWORD) {
                Some(value) if !value.is_empty() => {
                    use std::os::unix::ffi::OsStringExt as _;
                    SecretBytes::new(value.into_vec())
                }
                _ => {
                    return Err(usage(
                        "the KMIP username has no password",
                        "give --kmip-password-file FILE (or CRYPTADM_KMIP_PASSWORD_FILE / CRYPTADM_KMIP_PASSWORD)",
                    ));
                }
            },
        };
        let trimmed = password.strip_suffix(b"\n").unwrap_or(&password).to_vec();
        crate::redact::hold(&trimmed);
        Ok(Some((username, SecretBytes::new(trimmed))))
    }

    /// A client, or `None` when no server is given.
    pub fn client(&self, timeout: Duration) -> anyhow::Result<Option<Arc<Kmip>>> {
        match self.settings(timeout)? {
            None => Ok(None),
            Some(settings) => Ok(Some(Arc::new(Kmip::new(settings)?))),
        }
    }

    /// A client; a usage error naming `what` when no server is given.
    pub fn require(&self, timeout: Duration, what: &str) -> anyhow::Result<Arc<Kmip>> {
        self.client(timeout)?.ok_or_else(|| {
            usage(format!("{what} needs a KMIP server"), "give --kmip-server HOST:PORT (or CRYPTADM_KMIP_SERVER)")
        })
    }
}
