//! `cryptadm disk tpm2-enroll`: enrol a LUKS2 volume with this machine's TPM, as `systemd-cryptenroll
//! --tpm2-device` does.

use super::LuksPassphraseArgs;
use crate::cmd::error::Failure;
use crate::cmd::printer::Printer;
use crate::exit::ExitStatus;
use crate::interact::Interaction as _;
use crate::kms::tpm2::{Hash, KeyAlg, PcrSelection};
use crate::luks::Volume;
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;

/// Examples for `cryptadm disk tpm2-enroll`.
pub const EXAMPLES: &str = "Examples:
  # Seal a new keyslot's secret to the TPM's PCR 7 (Secure Boot state), given one of the passphrases;
  # systemd-cryptsetup (tpm2-device=auto in crypttab) or `cryptadm disk decrypt --tpm2` unlocks it
  cryptadm disk tpm2-enroll --key-file pass.txt --tpm2-pcrs 7 /dev/sdb

  # A software TPM on loopback, as tpm2-tools name it
  cryptadm disk tpm2-enroll --key-file pass.txt --tpm2-device swtpm:host=127.0.0.1,port=2321 disk.img";

/// Enrol a LUKS2 volume with the TPM, as `systemd-cryptenroll --tpm2-device` does
///
/// Given one of the volume's passphrases, the TPM draws a 256-bit secret and seals it under its owner hierarchy's
/// storage key, with a policy on the current values of --tpm2-pcrs; a new keyslot takes the secret (base64) as its
/// passphrase and, in the same header write, a LUKS2 token `{"type":"systemd-tpm2",…}` records the sealed object,
/// exactly as systemd-cryptenroll 252 writes it (no PIN). Other keyslots and tokens are left as they are.
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES, after_long_help = crate::cmd::long_help_footer(EXAMPLES))]
pub struct Tpm2EnrollArgs {
    #[command(flatten)]
    passphrase: LuksPassphraseArgs,
    /// The LUKS2 image file or block device
    #[arg(value_name = "TARGET")]
    pub target: PathBuf,
    /// The PCRs whose current values the secret is sealed to, e.g. `7` or `0,7` (systemd-cryptenroll's
    /// --tpm2-pcrs, `+` separators accepted); empty: no PCR policy
    #[arg(long, value_name = "PCRS", default_value = "7")]
    pub tpm2_pcrs: String,
    /// The PCR bank of --tpm2-pcrs
    #[arg(long, value_name = "HASH", default_value = "sha256", value_parser = ["sha1", "sha256", "sha384", "sha512"])]
    pub tpm2_pcr_bank: String,
    /// The storage primary key's algorithm
    #[arg(long, value_name = "ALG", default_value = "ecc", value_parser = ["ecc", "rsa"])]
    pub tpm2_primary_alg: String,
    /// The TPM: a device path or a TCTI string (`device:PATH`, `swtpm:host=H,port=P`); else TPM2TOOLS_TCTI,
    /// else /dev/tpmrm0
    #[arg(help_heading = crate::kms::backends::TPM2_HEADING, long, value_name = "DEVICE", env = "CRYPTADM_TPM2_DEVICE")]
    pub tpm2_device: Option<String>,
    /// Also seal to a PIN, as systemd-cryptenroll --tpm2-with-pin=yes does (systemd-cryptsetup asks for it at
    /// boot); the PIN is read from --tpm2-pin-file
    #[arg(long, requires = "tpm2_pin_file")]
    pub tpm2_with_pin: bool,
    /// Read the PIN of --tpm2-with-pin from FILE (`-`: standard input), the whole file byte for byte
    #[arg(long, value_name = "FILE", requires = "tpm2_with_pin")]
    pub tpm2_pin_file: Option<PathBuf>,
}

/// Runs `cryptadm disk tpm2-enroll`.
pub fn run(args: Tpm2EnrollArgs, printer: &Printer) -> anyhow::Result<ExitStatus> {
    let device = crate::cmd::clevis_args::tpm2_device(args.tpm2_device.as_deref())?;
    let bank = Hash::from_name(&args.tpm2_pcr_bank)?;
    let list = args.tpm2_pcrs.replace('+', ",");
    let pcrs = if list.trim().is_empty() {
        None
    } else {
        Some(PcrSelection::parse(bank, &list).map_err(|e| {
            Failure::new(ExitStatus::InvalidInput, format!("--tpm2-pcrs: {e}")).with_hint("e.g. --tpm2-pcrs 7 or 0,7")
        })?)
    };
    let primary = KeyAlg::from_name(&args.tpm2_primary_alg)?;
    let mut volume =
        Volume::open(&args.target, true).with_context(|| format!("opening `{}`", args.target.display()))?;
    // One writer at a time, as `volume rotate` locks (a second run fails at once, exit 10).
    crate::volume::lock::lock_volume(volume.file(), &args.target)?;
    super::crash_points(&mut volume);
    volume.reload().with_context(|| format!("re-reading `{}`", args.target.display()))?;
    let pin = match &args.tpm2_pin_file {
        None => None,
        Some(path) => Some(read_pin(path)?),
    };
    let passphrase = args.passphrase.resolve(printer, false)?;
    let (slot, key) = {
        let _busy = printer.busy("unlocking");
        volume.unlock(passphrase.expose()).with_context(|| format!("unlocking `{}`", args.target.display()))?
    };
    let (new_slot, token) = {
        let _busy = printer.busy("sealing a new secret to the TPM, then adding its keyslot and token");
        crate::disk::tpm2::enroll(&mut volume, &key, &device, primary, pcrs.clone(), pin.as_ref().map(|p| p.expose()))
            .with_context(|| format!("enrolling `{}` with the TPM at {device}", args.target.display()))?
    };
    let bound = match &pcrs {
        Some(selection) => format!("PCR {} ({} bank)", selection.list(), selection.bank.name()),
        None => "no PCRs".into(),
    };
    printer.info(&format!(
        "enrolled `{}` with the TPM (keyslot {slot} opened it): keyslot {new_slot}, token {token} (type \
         systemd-tpm2), sealed to {bound}",
        args.target.display()
    ));
    Ok(ExitStatus::Success)
}

/// The PIN of --tpm2-with-pin: the whole file (`-`: standard input), never empty.
fn read_pin(path: &std::path::Path) -> anyhow::Result<crate::crypto::Passphrase> {
    const MAX_PIN: usize = 1024;
    let bytes = if crate::cmd::secrets::is_stdin(path) {
        crate::crypto::secret::read_secret(std::io::stdin().lock(), MAX_PIN)
    } else {
        std::fs::File::open(path).and_then(|f| crate::crypto::secret::read_secret(f, MAX_PIN))
    }
    .with_context(|| format!("reading the PIN file `{}`", path.display()))?;
    if bytes.is_empty() {
        return Err(
            Failure::new(ExitStatus::InvalidInput, format!("the PIN file `{}` is empty", path.display())).into()
        );
    }
    Ok(crate::crypto::Passphrase::new(bytes))
}
