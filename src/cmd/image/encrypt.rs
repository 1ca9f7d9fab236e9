//! `cryptadm image encrypt`.

use super::{KeyArgs, SelectionArgs};
use crate::cmd::error::Failure;
use crate::cmd::printer::Printer;
use crate::cmd::printer::plural;
use crate::exit::ExitStatus;
use crate::interact::Interaction;
use crate::oci::ImageReference;
use crate::oci::ImageSource;
use crate::ocicrypt::image::{self, EncryptedLayers};
use crate::ocicrypt::inspect;
use crate::ocicrypt::recipients::{self, RecipientSpec, Recipients};
use anyhow::Context;
use clap::Args;

/// Examples for `cryptadm image encrypt`.
pub const EXAMPLES: &str = "Examples:
  # Every layer, for two recipients of different kinds
  cryptadm image encrypt --recipient jwe:rsa.pub.pem \\
      --recipient pgp:alice@example.com oci:app:v1 oci:app-enc:v1

  # For an AWS KMS key (a key or alias ARN; credentials from AWS_*, profiles, the instance profile)
  cryptadm image encrypt --recipient aws-kms://arn:aws:kms:eu-west-1:111122223333:alias/images \\
      oci:app:v1 oci:app-enc:v1

  # Only the top layer, only the arm64 manifest
  cryptadm image encrypt --recipient jwe:ec.pub.pem --layer -1 \\
      --platform linux/arm64 oci:app:v1 oci:app-enc:v1

  # Add a recipient to an encrypted image without re-encrypting it (needs a key that opens it)
  cryptadm image encrypt --recipient pkcs7:bob.crt --key alice.pem oci:app-enc:v1 oci:app-enc:v2

  # Remove Bob: the layers are re-encrypted under fresh keys for Alice only
  cryptadm image encrypt --remove-recipient pkcs7:bob.crt --recipient jwe:alice.pub.pem \\
      --key alice.pem \\
      oci:app-enc:v2 oci:app-enc:v3";

/// Encrypt the layers of an OCI image for one or more recipients
///
/// Each selected layer gets a fresh AES-256 key; the key is wrapped for every recipient. Layers that are already
/// encrypted keep their ciphertext: with a --key that unwraps them, the new recipients are added to them.
/// The destination is written completely or not at all.
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES, after_long_help = crate::cmd::long_help_footer(EXAMPLES))]
pub struct EncryptArgs {
    /// The image to encrypt: oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker://HOST/REPO[:TAG|@DIGEST]
    #[arg(value_name = "SRC", value_parser = super::parse_reference)]
    source: ImageReference,
    /// Where to write it: oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker://HOST/REPO[:TAG|@DIGEST]
    #[arg(value_name = "DST", value_parser = super::parse_reference)]
    destination: ImageReference,
    #[arg(long = "recipient", visible_alias = "encryption-key", value_name = "SPEC", required = true,
          help = super::recipient_help(),
          value_parser = |s: &str| RecipientSpec::parse(s).map_err(|e| e.to_string()))]
    recipients: Vec<RecipientSpec>,
    /// Layer to encrypt, 0 = bottom, negative counts from the top (repeatable; default: all)
    #[arg(
        long = "layer",
        visible_alias = "encrypt-layer",
        value_name = "N",
        allow_negative_numbers = true,
        help_heading = "Selection"
    )]
    layers: Vec<i64>,
    /// Take a recipient away: already encrypted layers are re-encrypted under a fresh key for the --recipient
    /// list only, so the removed recipient's old key opens nothing, and neither does any other recipient not given
    /// with --recipient (repeatable; needs a --key that opens them). Prints who keeps and who loses access; a
    /// SPEC that names no current recipient is refused (exit 3) and nothing is written
    #[arg(long, value_name = "SPEC", value_parser = |s: &str| RecipientSpec::parse(s).map_err(|e| e.to_string()))]
    remove_recipient: Vec<RecipientSpec>,
    /// With --remove-recipient: accept that JWE recipients without a key id lose access unless given with
    /// --recipient. Their wrapped keys name only an algorithm, so cryptadm cannot tell which of them a
    /// --remove-recipient is, nor whether it is one at all; without this flag such a loss is refused (exit 3)
    #[arg(long, requires = "remove_recipient")]
    accept_unidentified_loss: bool,
    #[command(flatten)]
    selection: SelectionArgs,
    #[command(flatten)]
    keys: KeyArgs,
    #[command(flatten)]
    src_registry: super::registry::SourceRegistryArgs,
    #[command(flatten)]
    dest_registry: super::registry::DestinationRegistryArgs,
    #[command(flatten)]
    jobs: super::JobsArgs,
}

/// Runs `cryptadm image encrypt`.
pub fn run(args: EncryptArgs, printer: &Printer) -> anyhow::Result<ExitStatus> {
    crate::cmd::interrupt::remove_partials_on_signal();
    check_removals(&args)?;
    let provider_config = super::provider_config()?;
    let recipients =
        Recipients::resolve(&args.recipients, args.keys.key_gpg_homedir.as_deref(), provider_config.clone())?;
    let managers = recipients.key_managers();
    let recipients = if managers.is_empty() {
        recipients
    } else {
        recipients.with_key_managers(args.keys.key_manager_opener(&managers, printer)?)
    };
    let keys = args.keys.resolve(provider_config, printer)?;
    let source_access = args.src_registry.flags(&args.dest_registry);
    let source = super::open_source_jobs(&args.source, &source_access, printer, args.jobs.jobs)
        .with_context(|| format!("opening `{}`", args.source))?;
    if !args.remove_recipient.is_empty() {
        report_access_change(&args, source.as_ref(), printer)?;
    }
    let destination = super::open_destination(&args.destination, &args.source, &args.dest_registry.flags(), printer)
        .with_context(|| format!("opening `{}`", args.destination))?;
    let selection = super::selection(&args.selection, &args.layers);
    let mode =
        if args.remove_recipient.is_empty() { EncryptedLayers::AddRecipients } else { EncryptedLayers::Reencrypt };
    let wrappers = recipients.wrappers();
    let reports = image::encrypt_image(
        source.as_ref(),
        destination,
        &selection,
        &wrappers,
        &keys.unwrappers(),
        mode,
        args.jobs.jobs,
        printer,
    )
    .with_context(|| format!("encrypting `{}` into `{}`", args.source, args.destination))?;
    let encrypted = reports.iter().filter(|r| r.outcome == "encrypted").count();
    let added = reports.iter().filter(|r| r.outcome == "recipients-added").count();
    let reencrypted = reports.iter().filter(|r| r.outcome == "re-encrypted").count();
    printer.info(&format!(
        "encrypted {}, added recipients to {added}, re-encrypted {reencrypted}; wrote `{}`",
        plural(encrypted as u64, "layer"),
        args.destination
    ));
    Ok(ExitStatus::Success)
}

/// Removing needs the key that opens the layers, and a recipient cannot be kept and removed at once.
fn check_removals(args: &EncryptArgs) -> anyhow::Result<()> {
    if args.remove_recipient.is_empty() {
        return Ok(());
    }
    if args.keys.keys.is_empty() {
        return Err(Failure::new(ExitStatus::Usage, "--remove-recipient re-encrypts the layers, which needs --key")
            .with_hint("give a --key that opens the encrypted layers")
            .into());
    }
    if let Some(both) = args.remove_recipient.iter().find(|r| args.recipients.contains(r)) {
        return Err(Failure::new(
            ExitStatus::Usage,
            format!("{both:?} is both a --recipient and a --remove-recipient"),
        )
        .into());
    }
    Ok(())
}

/// Refuses a `--remove-recipient` that names no recipient of the source (a typo would otherwise re-encrypt for
/// the `--recipient` list and silently drop everyone else), then says who keeps, gains and loses access.
fn report_access_change(args: &EncryptArgs, source: &dyn ImageSource, printer: &Printer) -> anyhow::Result<()> {
    let layers =
        inspect::inspect_image(source).with_context(|| format!("reading the recipients of `{}`", args.source))?;
    let change = recipients::access_change(
        &layers,
        &args.recipients,
        &args.remove_recipient,
        args.keys.key_gpg_homedir.as_deref(),
    )?;
    if !change.not_recipients.is_empty() {
        return Err(Failure::new(
            ExitStatus::InvalidInput,
            format!(
                "--remove-recipient {} names no recipient of `{}`; nothing was written",
                change.not_recipients.join(", "),
                args.source
            ),
        )
        .with_hint(format!(
            "`cryptadm image inspect {}` lists who its layers are wrapped for; every recipient not given with \
             --recipient loses access",
            args.source
        ))
        .into());
    }
    let unidentified: Vec<String> = change
        .loses
        .iter()
        .filter(|(holder, _)| !holder.identified())
        .map(|(holder, count)| if *count > 1 { format!("{count} × {holder}") } else { holder.to_string() })
        .collect();
    if !unidentified.is_empty() && !args.accept_unidentified_loss {
        return Err(Failure::new(
            ExitStatus::InvalidInput,
            format!(
                "re-encrypting `{}` takes access from {}: JWE recipients carry no key id, so cryptadm cannot tell                  whether that is the --remove-recipient or another recipient not given with --recipient; nothing                  was written",
                args.source,
                unidentified.join(", ")
            ),
        )
        .with_hint(
            "give every recipient who keeps access with --recipient (everyone else loses it), then add              --accept-unidentified-loss",
        )
        .into());
    }
    let list = |items: Vec<String>| if items.is_empty() { "nobody".to_owned() } else { items.join(", ") };
    printer.info(&format!("keeps access: {}", list(change.keeps)));
    if !change.gains.is_empty() {
        printer.info(&format!("gains access: {}", list(change.gains)));
    }
    let loses = change
        .loses
        .iter()
        .map(|(holder, count)| if *count > 1 { format!("{holder} (×{count})") } else { holder.to_string() })
        .collect();
    printer.info(&format!("loses access: {}", list(loses)));
    Ok(())
}
