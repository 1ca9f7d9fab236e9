//! `cryptadm disk`: LUKS2 and LUKS1 disk images and block devices (format, inspect, decrypt), qcow2 images and
//! conversions between them.

pub mod convert;
pub mod decrypt;
pub mod inspect;
pub mod luks_format;

use super::printer::Printer;
use super::secrets::{NO_SOURCE_HINT, PassphraseArgs, StdinClaim, is_stdin};
use crate::cmd::error::Failure;
use crate::crypto::Passphrase;
use crate::exit::ExitStatus;
use crate::interact::Interaction;
use anyhow::Context;
use clap::{Args, Subcommand};
use std::path::PathBuf;

/// Examples for the group.
pub const EXAMPLES: &str = "Examples:
  # A 10 GiB LUKS2 image with cryptsetup's defaults (argon2id, aes-xts-plain64, 512-bit key)
  cryptadm disk luks-format --key-file key.bin --size 10G disk.img

  # Encrypt a raw disk image for OpenStack (LUKS1, which QEMU reads) and print its Glance properties
  cryptadm disk luks-format --glance --key-id 3f1c…-uuid --passphrase-file pass.txt \\
      --from raw.img enc.img

  # What is in a LUKS header (like cryptsetup luksDump, as YAML)
  cryptadm disk inspect enc.img

  # Back to the raw image
  cryptadm disk decrypt --passphrase-file pass.txt enc.img --out raw.img

  # qcow2 with LUKS inside, as QEMU and Nova use it; then a snapshot-style copy under a new key
  cryptadm disk luks-format --format qcow2 --passphrase-file pass.txt --from raw.img disk.qcow2
  cryptadm disk convert --encryption-key new --new-key-file new.txt \\
      --key-file pass.txt disk.qcow2 snap.qcow2";

/// Format, inspect and decrypt LUKS2 and LUKS1 disk images and block devices
///
/// Headers are written in pure Rust with cryptsetup 2.6's defaults and checked against cryptsetup and QEMU:
/// LUKS2 for Linux hosts, LUKS1 for images QEMU, Nova and Glance read.
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES, after_long_help = crate::cmd::long_help_footer(EXAMPLES))]
pub struct DiskNamespace {
    #[command(subcommand)]
    command: DiskCommand,
}

/// The disk verbs.
#[derive(Subcommand, Debug)]
pub enum DiskCommand {
    #[allow(missing_docs)]
    LuksFormat(luks_format::LuksFormatArgs),
    #[allow(missing_docs)]
    Inspect(inspect::InspectArgs),
    #[allow(missing_docs)]
    Decrypt(decrypt::DecryptArgs),
    #[allow(missing_docs)]
    Convert(convert::ConvertArgs),
}

/// Runs a disk verb.
pub fn run(namespace: DiskNamespace, printer: &Printer) -> anyhow::Result<ExitStatus> {
    match namespace.command {
        DiskCommand::LuksFormat(args) => luks_format::run(args, printer),
        DiskCommand::Inspect(args) => inspect::run(args, printer),
        DiskCommand::Decrypt(args) => decrypt::run(args, printer),
        DiskCommand::Convert(args) => convert::run(args, printer),
    }
}

/// The passphrase: `--key-file` (cryptsetup's name) or the usual passphrase sources.
#[derive(Args, Debug, Clone, Default)]
pub struct LuksPassphraseArgs {
    #[command(flatten)]
    passphrase: PassphraseArgs,
    /// Read the passphrase from FILE (`-`: standard input), the whole file byte for byte, as cryptsetup does
    #[arg(long, value_name = "FILE", help_heading = "Passphrase", conflicts_with = "passphrase_file")]
    key_file: Option<PathBuf>,
}

/// cryptsetup's limit on key files (8192 KiB).
const MAX_KEY_FILE: usize = 8192 * 1024;

impl LuksPassphraseArgs {
    /// The `--key-file` path, if given (named in printed `openstack secret store` lines).
    pub fn key_file(&self) -> Option<&std::path::Path> {
        self.key_file.as_deref().or(self.passphrase.passphrase_file.as_deref())
    }

    /// Reads the passphrase; on a terminal with no other source, prompts (twice when `confirm`).
    pub fn resolve(&self, printer: &Printer, confirm: bool) -> anyhow::Result<Passphrase> {
        let mut stdin = StdinClaim::default();
        if let Some(path) = &self.key_file {
            let bytes = if is_stdin(path) {
                stdin.claim("--key-file")?;
                crate::crypto::secret::read_secret(std::io::stdin().lock(), MAX_KEY_FILE)
            } else {
                std::fs::File::open(path).and_then(|f| crate::crypto::secret::read_secret(f, MAX_KEY_FILE))
            }
            .with_context(|| format!("reading the key file `{}`", path.display()))?;
            if bytes.is_empty() {
                return Err(Failure::new(
                    ExitStatus::InvalidInput,
                    format!("the key file `{}` is empty", path.display()),
                )
                .into());
            }
            return Ok(Passphrase::new(bytes));
        }
        if let Some(passphrase) = self.passphrase.read(&mut stdin)? {
            return Ok(passphrase);
        }
        match printer.request_passphrase("Passphrase", confirm).context("reading the passphrase from the terminal")? {
            Some(passphrase) => Ok(passphrase),
            None => Err(Failure::new(ExitStatus::Usage, "no passphrase source, and no terminal to ask on")
                .with_hint(format!("give --key-file FILE, or {NO_SOURCE_HINT}"))
                .into()),
        }
    }
}

/// Threads for the payload cipher: every core the process may use.
pub fn cipher_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Warns about header copies that were unusable or stale (the volume still opened from the other copy).
pub fn warn_about_copies(volume: &crate::luks::Volume, printer: &Printer) {
    let state = volume.copy_state();
    if let Some(problem) = &state.primary_problem {
        printer.warn(&format!(
            "the primary LUKS2 header is unusable ({problem}); opened from the secondary copy \
             (cryptsetup would rewrite the primary on its next access)"
        ));
    }
    if let Some(problem) = &state.secondary_problem {
        printer.warn(&format!("the secondary LUKS2 header is unusable ({problem})"));
    }
    if let Some(copy) = state.stale {
        printer.warn(&format!("the {copy} LUKS2 header copy is older than the other one"));
    }
}
