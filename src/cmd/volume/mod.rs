//! `cryptadm volume`: CSI-Addons EncryptionKeyRotation on LUKS volumes.

pub mod import;
pub mod rewrap;
pub mod rotate;
pub mod serve;

use super::env_vars;
use super::printer::Printer;
use crate::exit::ExitStatus;
use crate::interact::Interaction;
use crate::volume::Step;
use crate::volume::operation::Settings;
use clap::{Args, Subcommand};
use std::ops::ControlFlow;
use std::path::PathBuf;

/// Examples for the group.
pub const EXAMPLES: &str = "Examples:
  # Rotate the passphrase of a LUKS volume; the current one is in
  # /var/lib/cryptadm/volume-keys/pvc-1/current
  cryptadm volume rotate --volume-id pvc-1 --volume-path /dev/vdb

  # Serve the CSI-Addons EncryptionKeyRotation RPC on a unix socket (the csi-addons sidecar connects
  # to it)
  cryptadm volume serve --endpoint unix:///run/csi-addons/cryptadm.sock";

/// The key store used when --key-store is not given.
pub const DEFAULT_KEY_STORE: &str = "file:///var/lib/cryptadm/volume-keys";
/// Where the per-volume-id lock files go unless CRYPTADM_RUN_DIR says otherwise (`<dir>/volume-locks`).
pub const DEFAULT_RUN_DIR: &str = "/run/cryptadm";

/// Rotate the passphrases of LUKS volumes (CSI-Addons EncryptionKeyRotation)
///
/// `rotate` replaces the passphrase (the key-encryption key) of a LUKS1 or LUKS2 volume with a new one from a key
/// store, in an order where a crash at any point leaves a volume the stored key opens and a rerun finishes the
/// job; `serve` offers the same as the CSI-Addons gRPC service for a CSI driver's node plugin.
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES, after_long_help = crate::cmd::long_help_footer(EXAMPLES))]
pub struct VolumeNamespace {
    #[command(subcommand)]
    command: VolumeCommand,
}

/// The volume verbs.
#[derive(Subcommand, Debug)]
pub enum VolumeCommand {
    #[allow(missing_docs)]
    Rotate(rotate::RotateArgs),
    #[allow(missing_docs)]
    Serve(serve::ServeArgs),
    #[allow(missing_docs)]
    Rewrap(rewrap::RewrapArgs),
    #[allow(missing_docs)]
    Import(import::ImportArgs),
}

/// Runs a volume verb.
pub fn run(namespace: VolumeNamespace, printer: &Printer) -> anyhow::Result<ExitStatus> {
    match namespace.command {
        VolumeCommand::Rotate(args) => rotate::run(args, printer),
        VolumeCommand::Serve(args) => serve::run(args, printer),
        VolumeCommand::Rewrap(args) => rewrap::run(args, printer),
        VolumeCommand::Import(args) => import::run(args, printer),
    }
}

/// How `rotate` and `serve` find a volume's device when no path is given.
#[derive(Args, Debug, Clone)]
pub struct ResolveArgs {
    /// Find a volume without a path here: an absolute path with {volume_id}, which is replaced by the volume id
    /// with bytes outside [A-Za-z0-9._-] (and a leading .) written as %XX. Used when that path exists; otherwise
    /// the volume's dm-crypt mapping is looked up in sysfs
    #[arg(long, value_name = "TEMPLATE")]
    pub volume_path_template: Option<String>,
    /// Where sysfs is mounted, for finding a volume's active dm-crypt mapping (a LUKS1/LUKS2 mapping named
    /// <volume id> or *-<volume id>, e.g. ceph-csi's luks-rbd-<volume id>; its one backing device holds the header)
    #[arg(long, value_name = "DIR", default_value = "/sys")]
    pub sysfs_root: PathBuf,
    /// Where the backing devices of dm-crypt mappings are (<dev-root>/<kernel name>)
    #[arg(long, value_name = "DIR", default_value = "/dev")]
    pub dev_root: PathBuf,
}

impl ResolveArgs {
    fn resolver(&self) -> anyhow::Result<crate::volume::resolve::Resolver> {
        if let Some(template) = &self.volume_path_template {
            crate::volume::resolve::check_template(template).map_err(|message| {
                crate::cmd::error::Failure::new(ExitStatus::Usage, message)
                    .with_hint("--volume-path-template takes an absolute path containing {volume_id}")
            })?;
        }
        Ok(crate::volume::resolve::Resolver {
            template: self.volume_path_template.clone(),
            sysfs: self.sysfs_root.clone(),
            dev: self.dev_root.clone(),
        })
    }
}

/// The OpenBao/Vault settings of `vault-kv://` key stores.
#[derive(Args, Debug, Clone)]
pub struct VaultStoreArgs {
    /// Store every passphrase wrapped, never in plain: by a Transit key (vault-transit://MOUNT/KEY), an AWS KMS key
    /// (aws-kms://ARN) or a KMIP symmetric key (kmip://UID, AES-GCM on the KMIP server), each with a file://,
    /// vault-kv:// or kmip:// store
    #[arg(long, value_name = "URI", help_heading = "OpenBao/Vault (vault-transit://, vault-kv://)")]
    pub key_wrap: Option<String>,
    #[allow(missing_docs)]
    #[command(flatten)]
    pub vault: crate::cmd::vault_args::VaultArgs,
    #[allow(missing_docs)]
    #[command(flatten)]
    pub kmip: crate::cmd::kmip_args::KmipArgs,
    #[allow(missing_docs)]
    #[command(flatten)]
    pub aws: crate::cmd::aws_args::AwsArgs,
}

/// The OpenBao/Vault client of a `vault-kv://` key store and the `--key-wrap` key.
#[derive(Debug, Clone)]
pub struct VaultStore {
    /// The client.
    pub client: std::sync::Arc<crate::kms::vault::Vault>,
    /// The Transit key wrapping every stored value (`--key-wrap`).
    pub key_wrap: Option<crate::kms::KeyRef>,
}

impl VaultStoreArgs {
    /// The store settings, when the key store is `vault-kv://` (a usage error without a server address).
    pub fn resolve(&self, key_store: &str) -> anyhow::Result<Option<VaultStore>> {
        let is_vault = key_store.starts_with("vault-kv:");
        if key_store.starts_with("kmip:") {
            return Ok(None);
        }
        if !is_vault {
            if self.aws_key_wrap()?.is_some() && key_store.starts_with("file://") {
                return Ok(None);
            }
            if self.key_wrap.is_some() {
                return Err(crate::cmd::error::Failure::new(
                    ExitStatus::Usage,
                    "--key-wrap applies only to a vault-kv:// key store",
                )
                .with_hint("use --key-store vault-kv://MOUNT/PREFIX, or drop --key-wrap")
                .into());
            }
            return Ok(None);
        }
        let key_wrap = match self.aws_key_wrap()? {
            Some(reference) => Some(reference),
            None => self.key_wrap.as_deref().map(parse_transit).transpose()?,
        };
        let client = self.vault.require(std::time::Duration::from_secs(30), 3, &format!("key store `{key_store}`"))?;
        Ok(Some(VaultStore { client, key_wrap }))
    }
}

impl VaultStoreArgs {
    /// `--key-wrap aws-kms://…`, parsed; `None` for any other (or no) wrap.
    fn aws_key_wrap(&self) -> anyhow::Result<Option<crate::kms::KeyRef>> {
        match self.key_wrap.as_deref() {
            Some(text) if text.starts_with("aws-kms:") => Ok(Some(crate::kms::KeyRef::parse(text).map_err(|e| {
                crate::cmd::error::Failure::new(ExitStatus::Usage, e.to_string())
                    .with_hint("give aws-kms://arn:aws:kms:REGION:ACCOUNT:key/ID (or aws-kms://alias/NAME)")
            })?)),
            _ => Ok(None),
        }
    }
}

/// `vault-transit://MOUNT/KEY` (without a wrapped key); a usage error otherwise.
pub(crate) fn parse_transit(text: &str) -> anyhow::Result<crate::kms::KeyRef> {
    match crate::kms::KeyRef::parse(text) {
        Ok(reference @ crate::kms::KeyRef::VaultTransit { wrapped: None, .. }) => Ok(reference),
        _ => Err(crate::cmd::error::Failure::new(
            ExitStatus::Usage,
            format!("`{}` is not a Transit key", crate::redact::url(text)),
        )
        .with_hint("give vault-transit://MOUNT/KEY, e.g. vault-transit://transit/volumes")
        .into()),
    }
}

/// `--key-wrap`, parsed: a Transit key, an AWS KMS key or a KMIP key (`kmip://UID`); a usage error otherwise.
fn parse_key_wrap(text: &str) -> anyhow::Result<crate::kms::KeyRef> {
    if text.starts_with("aws-kms:") {
        return Ok(crate::kms::KeyRef::parse(text).map_err(|e| {
            crate::cmd::error::Failure::new(ExitStatus::Usage, e.to_string())
                .with_hint("give aws-kms://arn:aws:kms:REGION:ACCOUNT:key/ID (or aws-kms://alias/NAME)")
        })?);
    }
    if text.starts_with("kmip://") {
        return Ok(crate::kms::KeyRef::Plugin { name: "kmip".into(), uri: text.into() });
    }
    match crate::kms::KeyRef::parse(text) {
        Ok(reference @ crate::kms::KeyRef::VaultTransit { wrapped: None, .. }) => Ok(reference),
        _ => Err(crate::cmd::error::Failure::new(
            ExitStatus::Usage,
            format!("`{}` is not a key that can wrap stored passphrases", crate::redact::url(text)),
        )
        .with_hint("give --key-wrap vault-transit://MOUNT/KEY, aws-kms://ARN or kmip://UID")
        .into()),
    }
}

/// The clients a key store and its `--key-wrap` key need: OpenBao/Vault for `vault-kv://` stores and Transit
/// wraps, KMIP for `kmip://` stores and KMIP wraps, AWS for KMS wraps. Any wrap goes with any built-in store
/// (`file://`, `vault-kv://`, `kmip://`); a plugin store keeps its own values, so `--key-wrap` is refused there.
fn backends(key_store: &str, args: &VaultStoreArgs) -> anyhow::Result<crate::volume::keystore::Backends> {
    use crate::kms::KeyRef;
    let key_wrap = args.key_wrap.as_deref().map(parse_key_wrap).transpose()?;
    let built_in = ["file://", "vault-kv:", "kmip:"].iter().any(|scheme| key_store.starts_with(scheme));
    if key_wrap.is_some() && !built_in {
        return Err(crate::cmd::error::Failure::new(
            ExitStatus::Usage,
            "--key-wrap applies to the built-in key stores: file://DIR, vault-kv://MOUNT/PREFIX and kmip://PREFIX",
        )
        .with_hint("a key-store plugin keeps its own values: drop --key-wrap, or use a built-in store")
        .into());
    }
    let what = format!("key store `{}`", crate::redact::url(key_store));
    let needs_vault = key_store.starts_with("vault-kv:") || matches!(key_wrap, Some(KeyRef::VaultTransit { .. }));
    let needs_kmip =
        key_store.starts_with("kmip:") || matches!(&key_wrap, Some(KeyRef::Plugin { name, .. }) if name == "kmip");
    let vault =
        if needs_vault { Some(args.vault.require(std::time::Duration::from_secs(30), 3, &what)?) } else { None };
    let kmip = if needs_kmip { Some(args.kmip.require(std::time::Duration::from_secs(30), &what)?) } else { None };
    let aws =
        matches!(key_wrap, Some(KeyRef::AwsKms { .. })).then(|| args.aws.client(std::time::Duration::from_secs(30), 3));
    Ok(crate::volume::keystore::Backends {
        plugins: crate::volume::keystore::PluginSettings { search_dirs: crate::cmd::env_vars::path_dirs() },
        key_wrap,
        vault,
        kmip,
        aws,
    })
}

/// The directory of the per-volume-id locks.
fn lock_dir() -> PathBuf {
    crate::cmd::env_vars::var_os(env_vars::CRYPTADM_RUN_DIR)
        .map_or_else(|| PathBuf::from(DEFAULT_RUN_DIR), PathBuf::from)
        .join("volume-locks")
}

/// Resolves where the key store, the locks and the plugins are.
fn settings(
    key_store: &str,
    resolver: crate::volume::resolve::Resolver,
    vault: &VaultStoreArgs,
) -> anyhow::Result<Settings> {
    Ok(Settings {
        key_store: key_store.to_owned(),
        lock_dir: lock_dir(),
        backends: backends(key_store, vault)?,
        resolver,
        take_over_claim: false,
    })
}

/// Logs each durable step (with -v) and, in builds with the `fault-injection` feature, aborts the process at the
/// step CRYPTADM_FAULT_POINT names, as a crash there would.
fn step_observer(printer: &Printer) -> impl FnMut(Step) -> ControlFlow<()> + '_ {
    #[cfg(feature = "fault-injection")]
    let crash_at = env_vars::var_os(env_vars::CRYPTADM_FAULT_POINT).and_then(|v| v.into_string().ok());
    #[cfg(feature = "fault-injection")]
    let wait_for = env_vars::var_os(env_vars::CRYPTADM_FAULT_WAIT).map(PathBuf::from);
    move |step| {
        printer.debug(&format!("step done: {step}"));
        #[cfg(feature = "fault-injection")]
        if crash_at.as_deref() == Some(step.name()) {
            // CRYPTADM_FAULT_WAIT: pause there (a run that is slow, not dead) until the file exists.
            match &wait_for {
                Some(file) => {
                    while !file.exists() {
                        std::thread::sleep(std::time::Duration::from_millis(20));
                    }
                }
                None => std::process::abort(),
            }
        }
        ControlFlow::Continue(())
    }
}
