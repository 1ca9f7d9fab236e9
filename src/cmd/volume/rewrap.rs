//! `cryptadm volume rewrap`: rotate the Transit key that wraps a `vault-kv://` store's passphrases and rewrap
//! every stored passphrase with its newest version, inside Vault.

use crate::cmd::printer::Printer;
use crate::exit::ExitStatus;
use crate::interact::Interaction;
use anyhow::Context;
use clap::Args;

/// Examples for `cryptadm volume rewrap`.
pub const EXAMPLES: &str = "Examples:
  # Rotate Transit key transit/volumes and rewrap the passphrases of every volume in kv/cryptadm
  cryptadm volume rewrap --key-store vault-kv://kv/cryptadm \\
      --key-wrap vault-transit://transit/volumes

  # Only rewrap (after rotating the key some other way, e.g. with auto_rotate_period)
  cryptadm volume rewrap --key-store vault-kv://kv/cryptadm \\
      --key-wrap vault-transit://transit/volumes --no-rotate";

/// Rotate the Transit key of a vault-kv:// key store and rewrap every stored passphrase
///
/// First checks that every value stored under the KV prefix is a Transit ciphertext: a store holding any other
/// value is refused whole (exit 3), before the key is rotated or anything is written. Then makes a new version
/// of the Transit key (`MOUNT/keys/KEY/rotate`), then, for every volume secret under the KV prefix, rewraps each stored value (`current`, `pending`, `previous`) with `MOUNT/rewrap/KEY`: the
/// plaintext passphrases never leave Vault. Each secret is written with check-and-set; a secret another writer
/// changed meanwhile is read and rewrapped again once, then reported (exit 10) and left as that writer left it,
/// still openable. Volumes' LUKS headers do not change: the passphrases stay the same.
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES, after_long_help = crate::cmd::long_help_footer(EXAMPLES))]
pub struct RewrapArgs {
    /// The key store: vault-kv://MOUNT/PREFIX
    #[arg(long, value_name = "URI")]
    pub key_store: String,
    /// Rewrap only; do not rotate the Transit key first
    #[arg(long)]
    pub no_rotate: bool,
    #[allow(missing_docs)]
    #[command(flatten)]
    pub vault: super::VaultStoreArgs,
}

/// Runs `cryptadm volume rewrap`.
pub fn run(args: RewrapArgs, printer: &Printer) -> anyhow::Result<ExitStatus> {
    let usage =
        |message: String, hint: &str| crate::cmd::error::Failure::new(ExitStatus::Usage, message).with_hint(hint);
    let Ok(crate::kms::KeyRef::VaultKv { mount, prefix }) = crate::kms::KeyRef::parse(&args.key_store) else {
        return Err(usage(
            format!("`{}` is not a vault-kv:// key store", crate::redact::url(&args.key_store)),
            "give --key-store vault-kv://MOUNT/PREFIX",
        )
        .into());
    };
    let Some(store) = args.vault.resolve(&args.key_store)? else { unreachable!("a vault-kv:// store") };
    let Some((transit_mount, transit_key)) = store.key_wrap.as_ref().and_then(crate::kms::KeyRef::transit) else {
        return Err(usage(
            "volume rewrap needs the Transit key that wraps the store".into(),
            "give --key-wrap vault-transit://MOUNT/KEY",
        )
        .into());
    };
    let done = crate::volume::keystore::vault_kv::rewrap_all(
        &store.client,
        &mount,
        &prefix,
        (transit_mount, transit_key),
        !args.no_rotate,
    )
    .with_context(|| format!("rewrapping the passphrases in `{}`", args.key_store))?;
    printer.info(&format!(
        "{}rewrapped {} value(s) in {} volume secret(s) of `{}` with the newest version of `{}`",
        if args.no_rotate { "" } else { "rotated the Transit key; " },
        done.values,
        done.secrets,
        args.key_store,
        store.key_wrap.as_ref().expect("checked above"),
    ));
    if !done.not_wrapped.is_empty() {
        return Err(crate::cmd::error::Failure::new(
            ExitStatus::InvalidInput,
            format!(
                "value(s) stored by another writer while rewrapping are not Transit ciphertexts and were left as \
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
