//! `cryptadm bootstrap`: the machineadm encrypted configuration.

pub mod open;
pub mod seal;

use super::printer::Printer;
use crate::exit::ExitStatus;
use clap::{Args, Subcommand};

/// Examples for the group.
pub const EXAMPLES: &str = "Examples:
  # On the management side: seal a machine configuration for the built-in file provider
  cryptadm bootstrap seal --in machine-config.yaml --provider file \\
      --passphrase-uri file:///etc/machineadm/passphrase --passphrase-file passphrase > sealed.yaml

  # On the machine (cloud-init runcmd): decrypt it, the passphrase read from
  # /etc/machineadm/passphrase
  cryptadm bootstrap open --in sealed.yaml --out /run/machineadm/machine_config.yaml";

/// Seal and open Cluster API machineadm bootstrap configurations (EncryptedConfig)
///
/// `seal` encrypts a machine configuration into a versioned EncryptedConfig document (PBKDF2-HMAC-SHA-512 with
/// 50,000 rounds, AES-256-GCM), into cloud-init userdata or into an Ignition config; `open` decrypts it on the
/// machine, with the passphrase from the document's provider, and fetches the RemoteConfig documents it meets.
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES, after_long_help = crate::cmd::long_help_footer(EXAMPLES))]
pub struct BootstrapNamespace {
    #[command(subcommand)]
    command: BootstrapCommand,
}

/// The bootstrap verbs.
#[derive(Subcommand, Debug)]
pub enum BootstrapCommand {
    // The help text of each verb is the doc comment of its Args struct.
    #[allow(missing_docs)]
    Seal(seal::SealArgs),
    #[allow(missing_docs)]
    Open(open::OpenArgs),
}

/// Runs a bootstrap verb.
pub fn run(namespace: BootstrapNamespace, printer: &Printer) -> anyhow::Result<ExitStatus> {
    match namespace.command {
        BootstrapCommand::Seal(args) => seal::run(args, printer),
        BootstrapCommand::Open(args) => open::run(args, printer),
    }
}

/// Options for running passphrase provider plugins.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Provider plugins")]
pub struct PluginArgs {
    /// Seconds one run of a provider plugin may take before it is killed, and one request to a built-in key
    /// manager (Vault/OpenBao, AWS KMS, KMIP, a Tang server); each also ends by --timeout
    #[arg(long, value_name = "SECONDS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub plugin_timeout: u64,
    /// How many times a failing provider plugin run, or a key-manager request that failed for a transient reason,
    /// is tried again (backoff doubling, at most 30 s); every retry and pause also ends by --timeout
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u32).range(0..=20))]
    pub retries: u32,
    #[allow(missing_docs)]
    #[command(flatten)]
    pub vault: crate::cmd::vault_args::VaultArgs,
    #[allow(missing_docs)]
    #[command(flatten)]
    pub aws: crate::cmd::aws_args::AwsArgs,
    #[allow(missing_docs)]
    #[command(flatten)]
    pub kmip: crate::cmd::kmip_args::KmipArgs,
}

impl PluginArgs {
    /// Resolves plugin settings; the search path comes from PATH. The `vault-transit` provider's client, when a
    /// server is configured, uses --plugin-timeout per request and --retries.
    pub fn settings(&self) -> anyhow::Result<crate::machineadm::ProviderSettings> {
        let path = crate::cmd::env_vars::var_os(super::env_vars::PATH);
        let vault = self.vault.client(std::time::Duration::from_secs(self.plugin_timeout), self.retries)?;
        Ok(crate::machineadm::ProviderSettings {
            search_dirs: crate::machineadm::ProviderSettings::search_dirs_from(path.as_deref()),
            // A plugin run ends by the overall deadline too.
            timeout: crate::deadline::bound(
                crate::cmd::deadline::current().as_ref(),
                std::time::Duration::from_secs(self.plugin_timeout),
            ),
            retries: self.retries,
            first_backoff: std::time::Duration::from_secs(1),
            vault,
            aws: Some(self.aws.client(std::time::Duration::from_secs(self.plugin_timeout), self.retries)),
            kmip: self.kmip.client(std::time::Duration::from_secs(self.plugin_timeout))?,
            proxies: crate::cmd::proxy::from_env(),
            // CRYPTADM_TPM2_DEVICE, else TPM2TOOLS_TCTI (`bootstrap open --tpm2-device` replaces it).
            tpm2: crate::cmd::clevis_args::tpm2_device(None)?,
        })
    }
}

/// How `open` treats RemoteConfig documents.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Remote configuration")]
pub struct RemoteArgs {
    /// Skip RemoteConfig documents instead of fetching them
    #[arg(long, conflicts_with = "strict")]
    pub skip_remote: bool,
    /// Also trust the CA certificates in DIR (`*.crt`, PEM) for the `https` provider, besides the system roots
    /// (repeatable)
    #[arg(long, value_name = "DIR")]
    pub cert_dir: Vec<std::path::PathBuf>,
    /// Let the `https` provider fetch plain http:// URIs (and follow redirects to them): unauthenticated
    #[arg(long)]
    pub allow_http: bool,
    /// Let RemoteConfig documents that were themselves fetched reach loopback and link-local addresses
    /// (169.254.169.254, 127.0.0.1, fe80::/10) over https; those in the input stream always may
    #[arg(long)]
    pub allow_local_targets: bool,
}

impl RemoteArgs {
    /// Resolves the fetch settings: the proxies (HTTPS_PROXY, HTTP_PROXY, NO_PROXY), and the environment
    /// remote-configuration plugins get (an allow-list; see [`super::env_vars::REMOTE_PLUGIN_ENV`]).
    pub fn settings(&self) -> crate::machineadm::RemoteSettings {
        use super::env_vars::{self as env, var_os};
        let mut plugin_env: Vec<(std::ffi::OsString, std::ffi::OsString)> = env::REMOTE_PLUGIN_ENV
            .iter()
            .filter_map(|name| var_os(name).map(|value| ((*name).into(), value)))
            .collect();
        plugin_env.extend(env::vars_with_prefix(env::MACHINEADM_PREFIX));
        crate::machineadm::RemoteSettings {
            cert_dirs: self.cert_dir.clone(),
            allow_http: self.allow_http,
            allow_local_targets: self.allow_local_targets,
            proxies: crate::cmd::proxy::from_env(),
            plugin_env: Some(plugin_env),
            deadline: crate::cmd::deadline::current(),
        }
    }
}

/// Reads a whole input (`-`: standard input) up to `limit` bytes.
pub(crate) fn read_input(path: &std::path::Path, what: &str, limit: u64) -> anyhow::Result<crate::crypto::SecretBytes> {
    use anyhow::Context;
    use std::io::Read;
    let (reader, name): (Box<dyn Read>, String) = if super::secrets::is_stdin(path) {
        (Box::new(std::io::stdin().lock()), "standard input".into())
    } else {
        let file = std::fs::File::open(path).with_context(|| format!("cannot open {what} `{}`", path.display()))?;
        (Box::new(file), format!("`{}`", path.display()))
    };
    crate::bounded::read_at_most(reader, limit).with_context(|| format!("reading {what} {name}"))?.ok_or_else(|| {
        anyhow::Error::new(crate::machineadm::Error::TooLarge { limit }).context(format!("reading {what} {name}"))
    })
}
