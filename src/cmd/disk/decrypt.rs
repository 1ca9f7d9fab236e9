//! `cryptadm disk decrypt`: the payload of a LUKS image back to a raw image (the inverse of `--from`).

use super::LuksPassphraseArgs;
use crate::cmd::error::Failure;
use crate::cmd::printer::Printer;
use crate::cmd::printer::plural;
use crate::exit::ExitStatus;
use crate::interact::Interaction;
use crate::luks::{self, Volume};
use anyhow::Context;
use clap::Args;
use std::io::Write;
use std::path::PathBuf;

/// Examples for `cryptadm disk decrypt`.
pub const EXAMPLES: &str = "Examples:
  # Decrypt an image made by cryptsetup, QEMU or cryptadm into a raw image
  cryptadm disk decrypt --key-file key.bin disk.img --out disk.raw

  # Compare with the original without a temporary file
  cryptadm disk decrypt --passphrase-file pass.txt enc.img --out - | cmp - raw.img";

/// Decrypt the payload of a LUKS1 or LUKS2 image or device, or a qcow2+LUKS image, into a raw image
///
/// The passphrase is tried on every active keyslot, as `cryptsetup open --test-passphrase` does. The output file
/// (mode 0600) appears only when the whole payload was decrypted; `--out -` streams to standard output (never to a
/// terminal). The target is opened read-only.
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES, after_long_help = crate::cmd::long_help_footer(EXAMPLES))]
pub struct DecryptArgs {
    #[command(flatten)]
    passphrase: LuksPassphraseArgs,
    /// The LUKS image file or block device
    #[arg(value_name = "TARGET")]
    pub target: PathBuf,
    /// Where to write the raw image (`-`: standard output)
    #[arg(long, value_name = "RAW")]
    pub out: PathBuf,
}

/// Runs `cryptadm disk decrypt`.
pub fn run(args: DecryptArgs, printer: &Printer) -> anyhow::Result<ExitStatus> {
    crate::cmd::interrupt::remove_partials_on_signal();
    let to_stdout = crate::cmd::secrets::is_stdin(&args.out);
    if to_stdout && printer.stdout_is_terminal() {
        return Err(Failure::new(ExitStatus::Usage, "refusing to write a disk image to a terminal")
            .with_hint("redirect standard output, or give --out FILE")
            .into());
    }
    if !to_stdout {
        crate::cmd::refuse_same_file(&args.target, &args.out, "TARGET", "--out")?;
    }
    if crate::qcow2::is_qcow2(&args.target).unwrap_or(false) {
        return super::convert::decrypt_qcow2(&args.target, &args.out, &args.passphrase, printer);
    }
    let volume = Volume::open(&args.target, false).with_context(|| format!("reading `{}`", args.target.display()))?;
    super::warn_about_copies(&volume, printer);
    let payload = volume.payload()?;
    let passphrase = args.passphrase.resolve(printer, false)?;
    let (slot, key) =
        volume.unlock(passphrase.expose()).with_context(|| format!("unlocking `{}`", args.target.display()))?;
    printer.debug(&format!("keyslot {slot} opened"));
    let progress = printer.transfer("decrypting", payload.len);
    let threads = super::cipher_threads();
    let written = if to_stdout {
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        let n = luks::payload::decrypt_to(volume.file(), &payload, &key, &mut out, threads, progress.as_ref())?;
        out.flush().context("writing to standard output")?;
        n
    } else {
        // 0600: the raw image is the plaintext of an encrypted disk.
        crate::atomic::write_with(&args.out, crate::atomic::MODE_PRIVATE, |mut file| {
            luks::payload::decrypt_to(volume.file(), &payload, &key, &mut file, threads, progress.as_ref())
                .map_err(anyhow::Error::from)
        })
        .with_context(|| format!("writing `{}`", args.out.display()))?
    };
    drop(progress);
    printer.info(&format!(
        "decrypted {} from `{}` into `{}`",
        plural(written, "byte"),
        args.target.display(),
        args.out.display()
    ));
    Ok(ExitStatus::Success)
}
