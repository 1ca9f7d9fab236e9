//! `cryptadm image seal-key`: a node's private key file sealed to the machine (its TPM, Tang servers or a
//! threshold), as `clevis encrypt PIN CONFIG < key.pem > key.pem.jwe` seals it, with cryptadm's own clevis code.

use crate::cmd::clevis_args::ClevisArgs;
use crate::cmd::error::Failure;
use crate::cmd::printer::Printer;
use crate::exit::ExitStatus;
use crate::interact::Interaction;
use crate::ocicrypt::keyfiles::{self, Destination, KeyFileRef, KeyKind};
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;

/// Examples for `cryptadm image seal-key`.
pub const EXAMPLES: &str = "Examples:
  # On the node: its image key sealed to its TPM (PCR 7, Secure Boot's state); then remove node.pem
  cryptadm image seal-key node.pem --out /etc/containerd/ocicrypt/keys/node.pem.jwe \\
      --clevis-pin tpm2 --clevis-config '{\"pcr_ids\":\"7\",\"pcr_bank\":\"sha256\"}'

  # Either the data centre's Tang server or the node's TPM opens it (clevis decrypt opens it too)
  cryptadm image seal-key node.pem --out node.pem.jwe --clevis-pin sss \\
      --clevis-config '{\"t\":1,\"pins\":{\"tang\":[{\"url\":\"http://tang.example\"}],\"tpm2\":{}}}'";

/// Seal a private key file to this machine's TPM, Tang servers or a threshold (clevis encrypt, for image keys)
///
/// Writes the compact JWE `clevis encrypt PIN CONFIG < KEY` prints, which `clevis decrypt` opens too. cryptadm
/// reads such a file wherever it reads a private key file (image decrypt/authorize/encrypt --key, a node's keys
/// directory under image stream-decrypt, secret generate-k8s) and opens it, in memory only, when a layer needs
/// it. KEY must be an unencrypted private key (PEM, DER or JWK; RSA or EC) or OpenPGP secret key: a node cannot
/// ask for a password. The output is written whole or not at all, mode 0600; KEY is left as it is (remove it
/// once the sealed file works).
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES, after_long_help = crate::cmd::long_help_footer(EXAMPLES))]
pub struct SealKeyArgs {
    /// The private key file to seal
    #[arg(value_name = "KEY")]
    key: PathBuf,
    /// Where to write the sealed key (a compact JWE)
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Last: the heading of these flags carries over to whatever follows them in the help.
    #[command(flatten)]
    clevis: ClevisArgs,
}

/// Most bytes of a key file (as a node's keys directory reads them).
const MAX_KEY_FILE: u64 = 1 << 20;

/// Runs `cryptadm image seal-key`.
pub fn run(args: SealKeyArgs, printer: &Printer) -> anyhow::Result<ExitStatus> {
    let Some(pin) = args.clevis.pin()? else {
        return Err(Failure::new(ExitStatus::Usage, "seal-key needs --clevis-pin and --clevis-config")
            .with_hint(r#"e.g. --clevis-pin tpm2 --clevis-config '{"pcr_ids":"7"}'"#)
            .into());
    };
    // Sealing over the plain key would leave its only copy opening on this TPM alone.
    crate::cmd::refuse_same_file(&args.key, &args.out, "KEY", "--out")?;
    let source = args.key.display().to_string();
    let file = std::fs::File::open(&args.key).with_context(|| format!("reading the key file `{source}`"))?;
    let bytes = crate::bounded::read_at_most(file, MAX_KEY_FILE)
        .with_context(|| format!("reading the key file `{source}`"))?
        .ok_or_else(|| Failure::new(ExitStatus::InvalidInput, format!("`{source}` is larger than 1 MiB: not a key")))?;
    let kind = keyfiles::kind_of(&KeyFileRef { source: &source, bytes: &bytes }, Destination::NodeKeysDirectory, None)?;
    match kind {
        KeyKind::Plain => {}
        KeyKind::Sealed => {
            return Err(Failure::new(ExitStatus::InvalidInput, format!("`{source}` is sealed already"))
                .with_hint("give the plain private key file")
                .into());
        }
        KeyKind::Certificate | KeyKind::Encrypted => {
            return Err(Failure::new(
                ExitStatus::InvalidInput,
                format!("`{source}` is not an unencrypted private key"),
            )
            .with_hint("give the private key that decrypts the images (PEM, DER or JWK; RSA or EC)")
            .into());
        }
    }
    let jwe = {
        let _busy = printer.busy(&format!("sealing `{source}` to {}", pin.describe()));
        crate::kms::clevis::encrypt(&pin, &bytes, &args.clevis.settings(Default::default())?)?
    };
    crate::atomic::write(&args.out, jwe.as_bytes(), crate::atomic::MODE_PRIVATE)
        .with_context(|| format!("writing `{}`", args.out.display()))?;
    printer.info(&format!("sealed `{source}` to {} in `{}`", pin.describe(), args.out.display()));
    Ok(ExitStatus::Success)
}
