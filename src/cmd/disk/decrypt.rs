//! `cryptadm disk decrypt`: the payload of a LUKS image back to a raw image (the inverse of `--from`).

use super::LuksPassphraseArgs;
use crate::cmd::error::Failure;
use crate::cmd::printer::Printer;
use crate::cmd::printer::plural;
use crate::disk::output;
use crate::disk::pipeline::{self, RawSink, Source};
use crate::exit::ExitStatus;
use crate::interact::Interaction;
use crate::luks::Volume;
use crate::qcow2::Container;
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;

/// Examples for `cryptadm disk decrypt`.
pub const EXAMPLES: &str = "Examples:
  # Decrypt an image made by cryptsetup, QEMU or cryptadm into a raw image
  cryptadm disk decrypt --key-file key.bin disk.img --out disk.raw

  # A volume bound to Tang servers (`disk clevis-bind`, `clevis luks bind`): no passphrase needed
  cryptadm disk decrypt --clevis disk.img --out disk.raw

  # Compare with the original without a temporary file
  cryptadm disk decrypt --passphrase-file pass.txt enc.img --out - | cmp - raw.img";

/// Decrypt the payload of a LUKS1 or LUKS2 image or device, or a qcow2+LUKS image, into a raw image
///
/// The passphrase is tried on every active keyslot, as `cryptsetup open --test-passphrase` does. The output file
/// (mode 0600) appears only when the whole payload was decrypted; an existing non-empty file is replaced only with
/// --force. A block device as --out is written in place (it must be large enough; one holding data needs --force)
/// and never replaced by a file. `--out -` streams to standard output (never to a terminal). The target is opened
/// read-only; an output that is the target (the same file, a loop device over it, its disk) is refused.
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES, after_long_help = crate::cmd::long_help_footer(EXAMPLES))]
pub struct DecryptArgs {
    #[command(flatten)]
    passphrase: LuksPassphraseArgs,
    /// The LUKS image file or block device
    #[arg(value_name = "TARGET")]
    pub target: PathBuf,
    /// Where to write the raw image (`-`: standard output): a new file, or a block device (written in place)
    #[arg(long, value_name = "RAW")]
    pub out: PathBuf,
    /// Replace a non-empty --out file, or overwrite a block device that holds data
    #[arg(long)]
    pub force: bool,
    /// Unlock through the volume's clevis binding (its LUKS2 `clevis` token), asking its Tang servers and TPM, as
    /// `clevis luks unlock` does, instead of with a passphrase
    #[arg(long, conflicts_with_all = ["passphrase_file", "key_file"])]
    pub clevis: bool,
    /// Unlock through the volume's TPM2 enrolment (its LUKS2 `systemd-tpm2` token, as systemd-cryptenroll
    /// writes it), asking the TPM, instead of with a passphrase; the PIN of one enrolled with a PIN
    /// (--tpm2-with-pin) is read as a passphrase is (--passphrase-file, --key-file, or asked on a terminal)
    #[arg(long, conflicts_with = "clevis")]
    pub tpm2: bool,
    /// The TPM of the binding's tpm2 pins: a device path or a TCTI string (`device:PATH`,
    /// `swtpm:host=H,port=P`); else TPM2TOOLS_TCTI, else /dev/tpmrm0
    #[arg(help_heading = crate::kms::backends::TPM2_HEADING, long, value_name = "DEVICE", env = "CRYPTADM_TPM2_DEVICE")]
    pub tpm2_device: Option<String>,
    /// The key managers of the binding's `aws-kms`, `vault-transit` and `kmip` pins (docs/threshold.md).
    #[command(flatten)]
    key_managers: Box<crate::cmd::clevis_args::PinKeyManagerArgs>,
}

/// The passphrase of the volume's clevis-bound keyslot, from its Tang servers.
fn clevis_passphrase(args: &DecryptArgs, printer: &Printer) -> anyhow::Result<crate::crypto::Passphrase> {
    let target = &args.target;
    let volume = Volume::open(target, false).with_context(|| format!("reading `{}`", target.display()))?;
    let _busy = printer.busy("recovering the passphrase from the clevis binding");
    let settings = crate::kms::clevis::Settings {
        tpm2: crate::cmd::clevis_args::tpm2_device(args.tpm2_device.as_deref())?,
        key_managers: args.key_managers.key_managers()?,
        ..crate::kms::clevis::Settings::default()
    };
    let (slot, passphrase) =
        crate::disk::clevis::recover_passphrase(&volume, &target.display().to_string(), &settings)?;
    printer.debug(&format!("keyslot {slot} opens with the clevis binding"));
    Ok(passphrase)
}

/// The passphrase of the volume's TPM2-enrolled keyslot, unsealed by the TPM.
fn tpm2_passphrase(args: &DecryptArgs, printer: &Printer) -> anyhow::Result<crate::crypto::Passphrase> {
    let target = &args.target;
    let device = crate::cmd::clevis_args::tpm2_device(args.tpm2_device.as_deref())?;
    let volume = Volume::open(target, false).with_context(|| format!("reading `{}`", target.display()))?;
    // A PIN is read as a passphrase is, never from the command line.
    let pin = if crate::disk::tpm2::needs_pin(&volume) {
        Some(args.passphrase.resolve_tpm2_pin(printer, target)?)
    } else {
        None
    };
    let _busy = printer.busy("unsealing the passphrase of the TPM2 enrolment");
    let (slot, passphrase) = crate::disk::tpm2::recover_passphrase(
        &volume,
        &target.display().to_string(),
        &device,
        pin.as_ref().map(|pin| pin.expose()),
    )?;
    printer.debug(&format!("keyslot {slot} opens with the TPM2 enrolment"));
    Ok(passphrase)
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
    let output = if to_stdout {
        None
    } else {
        Some(output::check(&args.out, "--out", &[(&args.target, "TARGET")], args.force)?)
    };
    let source = Source::open(&args.target)?;
    if source.container() == Container::Raw && !source.encrypted() {
        // Neither LUKS nor qcow2: say what the LUKS reader says about it.
        Volume::open(&args.target, false).with_context(|| format!("reading `{}`", args.target.display()))?;
    }
    super::warn_all(&source.warnings(), printer);
    let passphrase = match (source.encrypted(), args.clevis, args.tpm2) {
        (true, true, _) => Some(clevis_passphrase(&args, printer)?),
        (true, false, true) => Some(tpm2_passphrase(&args, printer)?),
        (true, false, false) => Some(args.passphrase.resolve(printer, false)?),
        (false, _, _) => None,
    };
    let passphrase = passphrase.as_ref().map(|p| p.expose());
    let decrypted = match &output {
        Some(output) => pipeline::decrypt(source, passphrase, RawSink::Output(output), printer)?,
        None => {
            let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
            pipeline::decrypt(source, passphrase, RawSink::Stream(&mut stdout), printer)?
        }
    };
    printer.info(&format!(
        "decrypted {} from `{}` into `{}`",
        plural(decrypted.bytes, "byte"),
        args.target.display(),
        args.out.display()
    ));
    Ok(ExitStatus::Success)
}
