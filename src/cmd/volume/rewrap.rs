//! `cryptadm volume rewrap`: rotate the Transit key that wraps a `vault-kv://` store's passphrases and rewrap
//! every stored passphrase with its newest version, inside Vault; or re-encrypt every passphrase of a `vault-kv://`
//! or `file://` store wrapped by an AWS KMS key with ReEncrypt, inside KMS.

use crate::cmd::printer::Printer;
use crate::exit::ExitStatus;
use crate::interact::Interaction;
use crate::kms::KeyRef;
use crate::volume::keystore::vault_kv::{Rewrapper, rewrap_all};
use anyhow::Context;
use clap::Args;

/// Examples for `cryptadm volume rewrap`.
pub const EXAMPLES: &str = "Examples:
  # Rotate Transit key transit/volumes and rewrap the passphrases of every volume in kv/cryptadm
  cryptadm volume rewrap --key-store vault-kv://kv/cryptadm \\
      --key-wrap vault-transit://transit/volumes

  # Only rewrap (after rotating the key some other way, e.g. with auto_rotate_period)
  cryptadm volume rewrap --key-store vault-kv://kv/cryptadm \\
      --key-wrap vault-transit://transit/volumes --no-rotate

  # Re-encrypt under an AWS KMS key's current material (after its automatic rotation)
  cryptadm volume rewrap --key-store vault-kv://kv/cryptadm --key-wrap aws-kms://alias/volumes";

/// Rotate the Transit key of a vault-kv:// key store and rewrap every stored passphrase
///
/// First checks that every value stored under the KV prefix is a Transit ciphertext: a store holding any other
/// value is refused whole (exit 3), before the key is rotated or anything is written. Then makes a new version
/// of the Transit key (`MOUNT/keys/KEY/rotate`), then, for every volume secret under the KV prefix, rewraps each
/// stored value (`current`, `pending`, `previous`) with `MOUNT/rewrap/KEY`. Each value is decrypted first to read
/// the volume it is bound to: one moved from another volume's entry stops the run (exit 15) before anything
/// changes, and one written before values were bound is encrypted anew, bound to its volume (so the token also
/// needs `MOUNT/decrypt/KEY` and `MOUNT/encrypt/KEY`). Each secret is written with check-and-set; a secret another
/// writer changed meanwhile is read and rewrapped again once, then reported (exit 10) and left as that writer left it,
/// still openable. Volumes' LUKS headers do not change: the passphrases stay the same.
///
/// A file:///DIR store is rewrapped the same way, each volume's entry under its lock, all or nothing: every value
/// is checked before the key is rotated or any file replaced.
///
/// With --key-wrap aws-kms://ARN (a vault-kv:// or file:// store) every stored value is re-encrypted with KMS
/// ReEncrypt under the key's current material, the plaintext never leaving KMS; KMS rotates a key's material on
/// its own schedule, so --no-rotate is implied.
///
/// Rewrapping also binds each value to its store and volume (docs/key-managers.md, "What a wrapped key is bound
/// to"): with aws-kms every value is re-encrypted to the KMS encryption context {"cryptadm:store": STORE,
/// "cryptadm:volume": ID}, STORE being --key-store as given, and the context is recorded beside the ciphertext;
/// with vault-transit the binding is inside the Transit plaintext, the record `cryptadm volume key v2` 0x00 STORE
/// 0x00 ID 0x00 PASSPHRASE. Values written without a binding are bound by it, and the values of a store moved to a
/// new URI are bound anew to that URI (until then they are refused, exit 15); a value bound to another volume is
/// refused (exit 15).
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES, after_long_help = crate::cmd::long_help_footer(EXAMPLES))]
pub struct RewrapArgs {
    /// The key store: vault-kv://MOUNT/PREFIX or file:///DIR (wrapped by Transit or AWS KMS)
    #[arg(long, value_name = "URI")]
    pub key_store: String,
    /// Rewrap only; do not rotate the Transit key first
    #[arg(long)]
    pub no_rotate: bool,
    #[allow(missing_docs)]
    #[command(flatten)]
    pub vault: RewrapStoreArgs,
}

/// The settings of the stores and wraps `rewrap` works on: no KMIP (a KMIP server cannot rewrap in place).
#[derive(Args, Debug, Clone)]
pub struct RewrapStoreArgs {
    /// The key that wraps the store's values: vault-transit://MOUNT/KEY or aws-kms://ARN, also written as the bare
    /// ARN arn:aws:kms:REGION:ACCOUNT:key/ID, …:alias/NAME (vault-kv:// and file:// stores)
    #[arg(long, value_name = "URI", help_heading = super::KEY_STORE_HEADING)]
    pub key_wrap: Option<String>,
    #[allow(missing_docs)]
    #[command(flatten)]
    pub vault: crate::cmd::vault_args::VaultArgs,
    #[allow(missing_docs)]
    #[command(flatten)]
    pub aws: crate::cmd::aws_args::AwsArgs,
}

impl RewrapStoreArgs {
    fn resolve(&self, key_store: &str) -> anyhow::Result<Option<super::VaultStore>> {
        super::VaultStoreArgs {
            key_wrap: self.key_wrap.clone(),
            vault: self.vault.clone(),
            kmip: Default::default(),
            aws: self.aws.clone(),
        }
        .resolve(key_store)
    }
}

/// The `-v` lines of `volume rewrap`: the store, the wrapping key and their key managers (never a secret).
fn describe_clients(
    key_store: &str,
    key_wrap: Option<&KeyRef>,
    vault: Option<&crate::kms::vault::Vault>,
    aws: Option<&crate::kms::aws::Aws>,
) -> Vec<String> {
    crate::cmd::key_refs::describe_clients(key_store, key_wrap, vault, aws, None)
}

/// Runs `cryptadm volume rewrap`.
pub fn run(args: RewrapArgs, printer: &Printer) -> anyhow::Result<ExitStatus> {
    let usage =
        |message: String, hint: &str| crate::cmd::error::Failure::new(ExitStatus::Usage, message).with_hint(hint);
    if let Some(dir) = args.key_store.strip_prefix("file://") {
        return rewrap_file_store(&args, dir, printer);
    }
    let Ok(KeyRef::VaultKv { mount, prefix }) = KeyRef::parse(&args.key_store) else {
        return Err(usage(
            format!(
                "volume rewrap rewraps vault-kv:// and file:// key stores in place; `{}` is neither",
                crate::redact::url(&args.key_store)
            ),
            "give --key-store vault-kv://MOUNT/PREFIX or file:///DIR (wrapped by vault-transit:// or aws-kms://)",
        )
        .into());
    };
    let Some(store) = args.vault.resolve(&args.key_store)? else { unreachable!("a vault-kv:// store") };
    // Declared here: the rewrapper borrows it.
    let aws;
    let (rewrapper, done_with) = match (store.key_wrap.as_ref(), store.key_wrap.as_ref().and_then(KeyRef::transit)) {
        (Some(KeyRef::AwsKms { key }), _) => {
            aws = args.vault.aws.client(std::time::Duration::from_secs(30), 3);
            if printer.is_verbose() {
                let lines = describe_clients(&args.key_store, store.key_wrap.as_ref(), Some(&store.client), Some(&aws));
                lines.iter().for_each(|line| printer.debug(line));
            }
            (Rewrapper::aws_kms(&aws, key, &args.key_store), "the current key material of")
        }
        (_, Some(transit)) => {
            if printer.is_verbose() {
                let lines = describe_clients(&args.key_store, store.key_wrap.as_ref(), Some(&store.client), None);
                lines.iter().for_each(|line| printer.debug(line));
            }
            (Rewrapper::transit(&store.client, transit, !args.no_rotate, &args.key_store)?, "the newest version of")
        }
        _ => {
            return Err(usage(
                "volume rewrap needs the key that wraps the store".into(),
                "give --key-wrap vault-transit://MOUNT/KEY or --key-wrap aws-kms://ARN",
            )
            .into());
        }
    };
    let done = rewrap_all(&store.client, &mount, &prefix, &rewrapper)
        .with_context(|| format!("rewrapping the passphrases in `{}`", args.key_store))?;
    printer.info(&format!(
        "{}rewrapped {} value(s) in {} volume secret(s) of `{}` with {done_with} `{}`",
        if rewrapper.rotates() { "rotated the Transit key; " } else { "" },
        done.values,
        done.secrets,
        args.key_store,
        store.key_wrap.as_ref().expect("checked above"),
    ));
    if !done.not_wrapped.is_empty() {
        return Err(crate::cmd::error::Failure::new(
            ExitStatus::InvalidInput,
            format!(
                "value(s) stored by another writer while rewrapping are not wrapped by the key and were left as \
                 they are: {}",
                done.not_wrapped.join(", ")
            ),
        )
        .with_hint("store those values wrapped (volume rotate --key-wrap), then run volume rewrap --no-rotate")
        .into());
    }
    if !done.conflicts.is_empty() {
        return Err(crate::cmd::error::Failure::new(
            ExitStatus::Aborted,
            format!("volume secret(s) changed by another writer while rewrapping: {}", done.conflicts.join(", ")),
        )
        .with_hint("run volume rewrap --no-rotate again when the rotations have finished")
        .into());
    }
    Ok(ExitStatus::Success)
}

/// `volume rewrap` of a `file://DIR` store wrapped by an AWS KMS key (`--key-wrap aws-kms://…`): ReEncrypt of every
/// stored value, under each volume's lock. KMS keys rotate on their own schedule (or `aws kms rotate-key-on-demand`),
/// so `--no-rotate` is implied. Wrapped by a Transit key (`--key-wrap vault-transit://…`): the key rotated (unless
/// `--no-rotate`) once every value is checked, then every value rewrapped, each bound to its volume.
fn rewrap_file_store(args: &RewrapArgs, dir: &str, printer: &Printer) -> anyhow::Result<ExitStatus> {
    let usage =
        |message: String, hint: &str| crate::cmd::error::Failure::new(ExitStatus::Usage, message).with_hint(hint);
    let wrap = match args.vault.key_wrap.as_deref().map(KeyRef::parse) {
        Some(Ok(wrap @ (KeyRef::AwsKms { .. } | KeyRef::VaultTransit { wrapped: None, .. }))) => wrap,
        _ => {
            return Err(usage(
                "volume rewrap of a file:// store needs the AWS KMS or Transit key that wraps it".into(),
                "give --key-wrap aws-kms://ARN or --key-wrap vault-transit://MOUNT/KEY",
            )
            .into());
        }
    };
    if !dir.starts_with('/') {
        return Err(usage(
            format!("key store `file://{dir}`: file:// needs an absolute directory"),
            "give file:///DIR",
        )
        .into());
    }
    // Declared here: the key borrows them.
    let (aws, vault);
    let (key, done_with) = match (&wrap, wrap.transit()) {
        (KeyRef::AwsKms { key }, _) => {
            aws = args.vault.aws.client(std::time::Duration::from_secs(30), 3);
            if printer.is_verbose() {
                describe_clients(&args.key_store, Some(&wrap), None, Some(&aws)).iter().for_each(|l| printer.debug(l));
            }
            (crate::volume::keystore::aws_kms_wrap::file_rewrap_key(&aws, key), "the current key material of")
        }
        (_, Some(transit)) => {
            vault = args.vault.vault.require(std::time::Duration::from_secs(30), 3, &format!("--key-wrap `{wrap}`"))?;
            if printer.is_verbose() {
                describe_clients(&args.key_store, Some(&wrap), Some(&vault), None)
                    .iter()
                    .for_each(|l| printer.debug(l));
            }
            let key = crate::volume::keystore::transit_wrap::file_rewrap_key(&vault, transit, !args.no_rotate);
            (key, "the newest version of")
        }
        _ => unreachable!("matched above"),
    };
    let run_dir = crate::cmd::env_vars::var_os(crate::cmd::env_vars::CRYPTADM_RUN_DIR)
        .map_or_else(|| std::path::PathBuf::from(super::DEFAULT_RUN_DIR), std::path::PathBuf::from);
    #[cfg(feature = "fault-injection")]
    let crash_at =
        crate::cmd::env_vars::var_os(crate::cmd::env_vars::CRYPTADM_FAULT_POINT).and_then(|v| v.into_string().ok());
    // Step `rewrap-checked` (every value checked, nothing written), then `rewrap-wrote-N` after the Nth value.
    let mut written = |n: usize| {
        let step = if n == 0 { "rewrap-checked".to_owned() } else { format!("rewrap-wrote-{n}") };
        printer.debug(&format!("step done: {step}"));
        // Builds with the `fault-injection` feature abort at the step CRYPTADM_FAULT_POINT names, as a crash would.
        #[cfg(feature = "fault-injection")]
        if crash_at.as_deref() == Some(step.as_str()) {
            std::process::abort();
        }
    };
    let done = crate::volume::keystore::aws_kms_wrap::rewrap_file_store(
        &key,
        &args.key_store,
        std::path::Path::new(dir),
        &run_dir.join("volume-locks"),
        &mut written,
    )
    .with_context(|| format!("rewrapping the passphrases in `{}`", args.key_store))?;
    printer.info(&format!(
        "{}rewrapped {} value(s) of {} volume(s) in `{}` with {done_with} `{}`",
        if key.rotate { "rotated the Transit key; " } else { "" },
        done.values,
        done.volumes,
        args.key_store,
        key.uri
    ));
    Ok(ExitStatus::Success)
}
