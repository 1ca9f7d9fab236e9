//! `cryptadm volume import`: an existing volume's passphrase into a key store.

use super::{DEFAULT_KEY_STORE, settings};
use crate::cmd::error::Failure;
use crate::cmd::printer::Printer;
use crate::cmd::secrets::is_stdin;
use crate::exit::ExitStatus;
use crate::interact::Interaction;
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;

/// Examples for `cryptadm volume import`.
pub const EXAMPLES: &str = "Examples:
  # Hand an existing volume to the file store (the passphrase that opens it is in old.key)
  cryptadm volume import --volume-id pvc-1 --volume-path /dev/vdb \\
      --passphrase-file old.key --key-store file:///etc/cryptadm/keys

  # Into OpenBao/Vault KV, wrapped by a Transit key, the passphrase on standard input
  cryptadm volume import --volume-id pvc-1 --volume-path /dev/vdb --passphrase-file - \\
      --key-store vault-kv://kv/cryptadm --key-wrap vault-transit://transit/volumes < old.key

  # Into a KMIP store, wrapped by a KMIP AES key (AES-GCM on the server)
  cryptadm volume import --volume-id pvc-1 --volume-path /dev/vdb --passphrase-file old.key \\
      --key-store kmip://volumes --key-wrap kmip://UID --kmip-server kmip.example:5696 \\
      --kmip-client-cert client.pem --kmip-client-key client.key --kmip-ca ca.pem";

/// Store an existing volume's passphrase in a key store, so that `volume rotate` takes the volume over
///
/// Reads the passphrase that opens the LUKS1 or LUKS2 volume (from a file, or standard input with `-`; never from
/// the command line), checks that it opens a keyslot of the volume (exit 16 otherwise), and only then writes it
/// as the volume's current key into the key store (file://DIR, vault-kv://MOUNT/PREFIX or kmip://PREFIX), wrapped
/// by --key-wrap when given (vault-transit://, aws-kms:// or kmip://, each with any of these stores; the wrapped
/// value is unwrapped again before it is written). All or nothing: one atomic write (file), one check-and-set
/// write (vault-kv), one registered object (kmip). A volume the store holds a key for already is refused (exit 3)
/// unless --force; one with a rotation under way in the store is refused even then (exit 10). The volume itself
/// is not changed: `volume rotate` then replaces the passphrase.
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES, after_long_help = crate::cmd::long_help_footer(EXAMPLES))]
pub struct ImportArgs {
    /// The volume's id: its entry in the key store
    #[arg(long, value_name = "ID")]
    pub volume_id: String,
    /// The LUKS1 or LUKS2 volume the passphrase opens: an image file or a block device
    #[arg(long, value_name = "PATH")]
    pub volume_path: PathBuf,
    /// The passphrase that opens the volume now, byte for byte (`-`: standard input)
    #[arg(long, value_name = "FILE")]
    pub passphrase_file: PathBuf,
    /// Where to store it (help: from the backend table)
    #[arg(long, value_name = "URI", default_value = DEFAULT_KEY_STORE,
          help = crate::kms::backends::help_for(crate::kms::backends::Use::Store))]
    pub key_store: String,
    /// Replace the key the store holds for the volume (the new one must open the volume)
    #[arg(long)]
    pub force: bool,
    #[allow(missing_docs)]
    #[command(flatten)]
    pub vault: super::VaultStoreArgs,
}

/// Runs `cryptadm volume import`.
pub fn run(args: ImportArgs, printer: &Printer) -> anyhow::Result<ExitStatus> {
    let path = &args.passphrase_file;
    let bytes = if is_stdin(path) {
        crate::crypto::secret::read_secret(std::io::stdin().lock(), crate::crypto::secret::MAX_PASSPHRASE_LEN)
    } else {
        crate::crypto::secret::read_passphrase_file(path)
    }
    .with_context(|| format!("reading the passphrase from `{}`", path.display()))?;
    if bytes.is_empty() {
        return Err(
            Failure::new(ExitStatus::InvalidInput, format!("the passphrase in `{}` is empty", path.display())).into()
        );
    }
    let passphrase = crate::crypto::Passphrase::new(bytes);
    let resolver =
        crate::volume::resolve::Resolver { template: None, sysfs: PathBuf::from("/sys"), dev: PathBuf::from("/dev") };
    let settings = settings(&args.key_store, resolver, &args.vault)?;
    if printer.is_verbose() {
        for line in crate::cmd::key_refs::describe(&args.key_store, &settings.backends) {
            printer.debug(&line);
        }
    }
    let imported =
        crate::volume::import::import_volume(&args.volume_id, &args.volume_path, &passphrase, args.force, &settings)
            .with_context(|| format!("importing volume `{}` into `{}`", args.volume_id, args.key_store))?;
    printer.info(&format!(
        "volume `{}`: stored its passphrase (it opens keyslot {}) in `{}`{}",
        args.volume_id,
        imported.keyslot,
        crate::redact::url(&args.key_store),
        args.vault.key_wrap.as_deref().map(|w| format!(", wrapped by `{w}`")).unwrap_or_default()
    ));
    Ok(ExitStatus::Success)
}
