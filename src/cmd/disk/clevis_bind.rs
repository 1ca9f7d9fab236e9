//! `cryptadm disk clevis-bind`: bind an existing LUKS2 volume to Tang servers, as `clevis luks bind` does.

use super::LuksPassphraseArgs;
use crate::cmd::clevis_args::ClevisArgs;
use crate::cmd::error::Failure;
use crate::cmd::printer::Printer;
use crate::exit::ExitStatus;
use crate::interact::Interaction as _;
use crate::luks::Volume;
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;

/// Examples for `cryptadm disk clevis-bind`.
pub const EXAMPLES: &str = "Examples:
  # Bind to one Tang server (pinned by its signing key's thumbprint), given one of the passphrases
  cryptadm disk clevis-bind --key-file pass.txt --clevis-pin tang \\
      --clevis-config '{\"url\":\"http://tang.example:7500\",\"thp\":\"…\"}' disk.img

  # ... or two of three servers; `cryptadm disk decrypt --clevis` or `clevis luks unlock` opens it
  sss='{\"t\":2,\"pins\":{\"tang\":[{\"url\":\"http://t1\"},{\"url\":\"http://t2\"},{\"url\":\"http://t3\"}]}}'
  cryptadm disk clevis-bind --key-file pass.txt --clevis-pin sss --clevis-config \"$sss\" \\
      --clevis-trust-adv /dev/sdb";

/// Bind a LUKS2 volume to Tang servers (clevis's `tang` or `sss` pin), as `clevis luks bind` does
///
/// Given one of the volume's passphrases, adds a keyslot whose passphrase is a fresh random secret (256 bits,
/// printable) and, in the same header write, a LUKS2 token `{"type":"clevis","keyslots":["N"],"jwe":{…}}`
/// holding that secret encrypted to the pin. The new keyslot uses the key-derivation settings of the keyslot the
/// given passphrase opened. The Tang servers are asked before anything is written: when one cannot be reached
/// (or is not trusted), the volume is not touched. Other keyslots and tokens are left as they are.
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES, after_long_help = crate::cmd::long_help_footer(EXAMPLES))]
pub struct ClevisBindArgs {
    #[command(flatten)]
    passphrase: LuksPassphraseArgs,
    /// The LUKS2 image file or block device
    #[arg(value_name = "TARGET")]
    pub target: PathBuf,
    /// The key managers of an sss pin's `aws-kms`, `vault-transit` and `kmip` pins (docs/threshold.md).
    #[command(flatten)]
    key_managers: Box<crate::cmd::clevis_args::PinKeyManagerArgs>,
    /// Last: the heading of these flags carries over to whatever follows them in the help.
    #[command(flatten)]
    clevis: ClevisArgs,
}

/// Runs `cryptadm disk clevis-bind`.
pub fn run(args: ClevisBindArgs, printer: &Printer) -> anyhow::Result<ExitStatus> {
    let Some(pin) = args.clevis.pin()? else {
        return Err(Failure::new(ExitStatus::Usage, "clevis-bind needs --clevis-pin and --clevis-config").into());
    };
    crate::cmd::clevis_args::describe(&pin, printer);
    let mut volume =
        Volume::open(&args.target, true).with_context(|| format!("opening `{}`", args.target.display()))?;
    // One writer at a time, as `volume rotate` locks (a second run fails at once, exit 10).
    crate::volume::lock::lock_volume(volume.file(), &args.target)?;
    super::crash_points(&mut volume);
    volume.reload().with_context(|| format!("re-reading `{}`", args.target.display()))?;
    let passphrase = args.passphrase.resolve(printer, false)?;
    // The servers first: nothing is written when one cannot be reached or is not trusted.
    let prepared = {
        let _busy = printer.busy(&format!("encrypting a new passphrase to {}", pin.describe()));
        let settings = crate::kms::clevis::Settings {
            key_managers: args.key_managers.key_managers()?,
            ..args.clevis.settings(Default::default())?
        };
        crate::disk::clevis::prepare(&pin, &settings)?
    };
    let (new_slot, token) = {
        let _busy = printer.busy("unlocking, then adding the keyslot and its clevis token");
        crate::disk::clevis::bind_with_passphrase(&mut volume, passphrase.expose(), &prepared)
            .with_context(|| format!("binding `{}`", args.target.display()))?
    };
    printer.info(&format!(
        "bound `{}` to {}: keyslot {new_slot}, token {token} (type clevis)",
        args.target.display(),
        pin.describe()
    ));
    Ok(ExitStatus::Success)
}
