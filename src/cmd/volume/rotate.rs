//! `cryptadm volume rotate`: rotate the passphrase of one LUKS volume.

use super::{DEFAULT_KEY_STORE, ResolveArgs, settings, step_observer};
use crate::cmd::error::Failure;
use crate::cmd::printer::Printer;
use crate::cmd::secrets::{StdinClaim, is_stdin};
use crate::exit::ExitStatus;
use crate::interact::Interaction;
use crate::volume::request::{MAX_REQUEST_BYTES, Secrets};
use crate::volume::{Outcome, RotateRequest, operation};
use anyhow::Context;
use clap::Args;
use std::path::{Path, PathBuf};

/// Examples for `cryptadm volume rotate`.
pub const EXAMPLES: &str = "Examples:
  # Rotate with the built-in file store: DIR/pvc-1/current holds the passphrase that opens the
  # volume
  cryptadm volume rotate --volume-id pvc-1 --volume-path /dev/vdb \\
      --key-store file:///etc/cryptadm/keys

  # Without --volume-path: the backing device of the active dm-crypt mapping luks-rbd-pvc-1 (or
  # luks-pvc-1, pvc-1)
  cryptadm volume rotate --volume-id pvc-1 --key-store file:///etc/cryptadm/keys

  # Set a chosen passphrase (a rerun with the same file changes nothing and exits 0)
  cryptadm volume rotate --volume-id pvc-1 --volume-path disk.img \\
      --key-store file:///etc/cryptadm/keys \\
      --new-key-file new-passphrase

  # With OpenBao/Vault: the passphrase in KV v2 secret kv/cryptadm/pvc-1 (field `current`),
  # stored wrapped by Transit key transit/volumes
  cryptadm volume rotate --volume-id pvc-1 --volume-path /dev/vdb \\
      --key-store vault-kv://kv/cryptadm --key-wrap vault-transit://transit/volumes

  # As a CSI driver would call it, with the RPC's request as JSON on standard input
  echo '{\"volume_id\":\"pvc-1\",\"volume_path\":\"/dev/vdb\",\"secrets\":{\"token\":\"...\"}}' |
      cryptadm volume rotate --request - --key-store vault:kv/volumes";

/// Rotate the passphrase (key-encryption key) of a LUKS1 or LUKS2 volume
///
/// The current passphrase comes from the key store; a new one is generated (standard base64 of 32 random bytes,
/// text that QEMU and OpenStack accept) or read from --new-key-file, recorded in the store as pending, added to a
/// free keyslot with the old keyslot's KDF kind and cost, verified by unlocking it from disk, committed as the
/// store's current key, and then the old keyslot is wiped and removed. The volume key and the data do not change;
/// other keyslots and tokens are kept. At every instant the store's current key opens the volume; a rerun after a
/// crash finishes the interrupted rotation instead of starting another. Another rotation of the same volume (by
/// path or volume id) makes this one exit 10 at once. Before touching the header a run claims the rotation in the
/// key store (a record naming the run, expiring after 10 minutes): another node's live claim makes it exit 10
/// without writing; an expired claim, or one of a dead process on this node, is taken over
/// (docs/volume-rotation.md).
///
/// Key stores (--key-store URI):
///
/// file://DIR: DIR/<volume-id>/current holds the passphrase that opens the volume, byte for byte; `pending` the
/// new one while a rotation is under way, `previous` the replaced one until its keyslot is gone. Files are mode
/// 0600, written atomically; characters of the volume id other than letters, digits, `.`, `_`, `-` become %XX.
///
/// vault-kv://MOUNT/PREFIX: the KV version 2 secret PREFIX/<volume-id> of mount MOUNT on OpenBao/Vault (VAULT_ADDR
/// and the --vault-* options), fields `current`, `pending`, `previous`; every change is a check-and-set on the
/// version this run read, so a concurrent writer makes this run exit 10 without writing; field `claim` holds the
/// rotation claim. With --key-wrap
/// vault-transit://MOUNT/KEY the values are Transit ciphertexts of that key and never stored in plain.
///
/// NAME:REST: the plugin cryptadm-plugin-kms-NAME from PATH, run as `PLUGIN VERB` with a JSON object on standard
/// input: {"uri", "volume_id", "parameters", "secrets", "passphrase"} (passphrase, in base64, for put-pending and
/// commit only; parameters and secrets are the request's). Verbs: `get` prints {"current": B64, "pending": B64 or
/// null, "previous": B64 or null}; `put-pending` records the passphrase as pending; `commit` makes that pending
/// passphrase current and keeps the replaced one as previous, and must succeed again when repeated;
/// `forget-previous` drops the previous key (required: a previous key tells the next run that a rotation was
/// interrupted after its commit). Optional: `claim` (input also has "claim" and "take_over"; exit 10 when another
/// run's claim stands) and `release`. Exit status 0 success, 3 verb not supported, 5 no key for
/// this volume id, 16 secrets rejected, else failure (its last stderr line is reported). At most 64 KiB of
/// output is read; a run is killed after 60 s.
///
/// Request (--request FILE|-): the CSI-Addons EncryptionKeyRotateRequest as JSON with the proto's field names:
/// volume_id (required), volume_path (optional: without it the device is found with --volume-path-template or
/// from the volume's active dm-crypt mapping in sysfs), encryption_key (the new passphrase; empty: generate one),
/// parameters and secrets (handed to a key-store plugin, never logged), volume_capability (ignored).
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES, after_long_help = crate::cmd::long_help_footer(EXAMPLES))]
pub struct RotateArgs {
    /// The volume's id: its entry in the key store and the name of its lock
    #[arg(long, value_name = "ID", required_unless_present = "request", conflicts_with = "request")]
    pub volume_id: Option<String>,
    /// The LUKS1 or LUKS2 volume: an image file or a block device (default: found from the volume id, see
    /// --volume-path-template and --sysfs-root)
    #[arg(long, value_name = "PATH", conflicts_with = "request")]
    pub volume_path: Option<PathBuf>,
    #[allow(missing_docs)]
    #[arg(long, value_name = "URI", default_value = DEFAULT_KEY_STORE,
          help = crate::kms::backends::help_for(crate::kms::backends::Use::Store), help_heading = super::KEY_STORE_HEADING)]
    pub key_store: String,
    /// Set the passphrase in FILE (byte for byte) instead of generating one
    #[arg(long, value_name = "FILE")]
    pub new_key_file: Option<PathBuf>,
    /// The RPC's request as JSON (`-`: standard input) instead of --volume-id and --volume-path
    #[arg(long, value_name = "FILE")]
    pub request: Option<PathBuf>,
    /// Take over another run's rotation claim in the key store even before it expires (only when that run is
    /// known to be dead, e.g. its node is gone; see docs/volume-rotation.md)
    #[arg(long)]
    pub take_over_claim: bool,
    #[allow(missing_docs)]
    #[command(flatten)]
    pub resolve: ResolveArgs,
    #[allow(missing_docs)]
    #[command(flatten)]
    pub vault: super::VaultStoreArgs,
}

/// Runs `cryptadm volume rotate`.
pub fn run(args: RotateArgs, printer: &Printer) -> anyhow::Result<ExitStatus> {
    let mut stdin = StdinClaim::default();
    let mut request = match &args.request {
        Some(path) => read_request(path, &mut stdin)?,
        None => RotateRequest::new(
            args.volume_id.clone().unwrap_or_default(),
            args.volume_path.as_ref().map(|p| p.to_string_lossy().into_owned()).unwrap_or_default(),
            "",
            Default::default(),
            Secrets::default(),
        )?,
    };
    if let Some(path) = &args.new_key_file {
        if request.new_key.is_some() {
            return Err(Failure::new(
                ExitStatus::Usage,
                "--new-key-file and the request's encryption_key both set the new key",
            )
            .with_hint("give one of them")
            .into());
        }
        request.new_key = Some(read_new_key(path, &mut stdin)?);
    }
    let settings = operation::Settings {
        take_over_claim: args.take_over_claim,
        ..settings(&args.key_store, args.resolve.resolver()?, &args.vault)?
    };
    if printer.is_verbose() {
        for line in crate::cmd::key_refs::describe(&args.key_store, &settings.backends) {
            printer.debug(&line);
        }
    }
    let mut observe = step_observer(printer);
    let outcome = operation::rotate_volume(&request, &settings, &mut observe)
        .with_context(|| format!("rotating the key of volume `{}`", request.volume_id))?;
    if let Some(held) = &outcome.took_over {
        printer.info(&format!("took over the rotation claim of {held}"));
    }
    printer.info(&describe(&request.volume_id, &outcome));
    if let Some(why) = &outcome.release_failed {
        printer.warn(&format!(
            "the rotation claim of volume `{}` could not be released ({why}); it blocks other nodes until it \
             expires (10 minutes), and the next run on this node replaces it",
            request.volume_id
        ));
    }
    if let Some(path) = &request.volume_path {
        report_kept_bindings(path, printer);
    }
    Ok(ExitStatus::Success)
}

/// Says which clevis bindings (keyslots bound to Tang servers or a TPM, `clevis luks bind`) and systemd-tpm2
/// enrolments (`systemd-cryptenroll --tpm2-device`, `disk tpm2-enroll`) the rotation left alone: their keyslots
/// open with neither the old nor the new key, so rotation never touches them or their tokens.
fn report_kept_bindings(path: &Path, printer: &Printer) {
    let Ok(volume) = crate::luks::Volume::open(path, false) else { return };
    for binding in crate::disk::clevis::bindings(&volume) {
        let keyslots: Vec<String> = binding.keyslots.iter().map(u32::to_string).collect();
        printer.info(&format!(
            "kept the clevis binding: token {}, keyslot(s) {} ({})",
            binding.token,
            keyslots.join(", "),
            binding.description
        ));
    }
    for enrollment in crate::disk::tpm2::enrollments(&volume) {
        let keyslots: Vec<String> = enrollment.keyslots.iter().map(u32::to_string).collect();
        printer.info(&format!(
            "kept the systemd-tpm2 enrolment: token {}, keyslot(s) {} ({})",
            enrollment.token,
            keyslots.join(", "),
            enrollment.description()
        ));
    }
}

fn read_request(path: &Path, stdin: &mut StdinClaim) -> anyhow::Result<RotateRequest> {
    let (bytes, source) = if is_stdin(path) {
        stdin.claim("--request")?;
        (crate::crypto::secret::read_secret(std::io::stdin().lock(), MAX_REQUEST_BYTES), "standard input".to_owned())
    } else {
        let source = format!("`{}`", path.display());
        (std::fs::File::open(path).and_then(|f| crate::crypto::secret::read_secret(f, MAX_REQUEST_BYTES)), source)
    };
    let bytes = zeroize::Zeroizing::new(bytes.with_context(|| format!("reading the request from {source}"))?);
    RotateRequest::from_json(&bytes).with_context(|| format!("reading the request from {source}"))
}

fn read_new_key(path: &Path, stdin: &mut StdinClaim) -> anyhow::Result<crate::crypto::Passphrase> {
    let bytes = if is_stdin(path) {
        stdin.claim("--new-key-file")?;
        crate::crypto::secret::read_secret(std::io::stdin().lock(), crate::crypto::secret::MAX_PASSPHRASE_LEN)
    } else {
        crate::crypto::secret::read_passphrase_file(path)
    }
    .with_context(|| format!("reading the new key from `{}`", path.display()))?;
    if bytes.is_empty() {
        return Err(
            Failure::new(ExitStatus::InvalidInput, format!("the new key in `{}` is empty", path.display())).into()
        );
    }
    crate::redact::hold(&bytes);
    Ok(crate::crypto::Passphrase::new(bytes))
}

fn describe(volume_id: &str, outcome: &Outcome) -> String {
    if outcome.unchanged {
        return format!(
            "volume `{volume_id}`: the requested key is already current (keyslot {}); nothing to do",
            outcome.keyslot
        );
    }
    let removed: Vec<String> = outcome.removed.iter().map(u32::to_string).collect();
    let verb = if outcome.resumed { "finished the interrupted rotation of" } else { "rotated the key of" };
    format!(
        "{verb} volume `{volume_id}`: the new key opens keyslot {}; removed keyslot(s) {}",
        outcome.keyslot,
        if removed.is_empty() { "none".to_owned() } else { removed.join(", ") }
    )
}
