//! `cryptadm image decrypt`.

use super::{KeyArgs, SelectionArgs};
use crate::cmd::printer::Printer;
use crate::cmd::printer::plural;
use crate::exit::ExitStatus;
use crate::interact::Interaction;
use crate::oci::ImageReference;
use crate::ocicrypt::image;
use anyhow::Context;
use clap::Args;

/// Examples for `cryptadm image decrypt`.
pub const EXAMPLES: &str = "Examples:
  # Decrypt with a JWE private key
  cryptadm image decrypt --key priv.pem oci:app-enc:v1 oci:app:v1

  # PKCS#7 needs the certificate too; an OpenPGP secret key (gpg --export-secret-keys) works the
  # same way
  cryptadm image decrypt --key bob.pem --cert bob.crt oci-archive:app-enc.tar oci:app:v1";

/// Decrypt the layers of an OCI image
///
/// Every selected encrypted layer must decrypt. No plaintext is released before a layer's HMAC has verified:
/// layers are decrypted into temporary blobs that become part of the destination only when every check passed.
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES, after_long_help = crate::cmd::long_help_footer(EXAMPLES))]
pub struct DecryptArgs {
    /// The encrypted image: oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker://HOST/REPO[:TAG|@DIGEST]
    #[arg(value_name = "SRC", value_parser = super::parse_reference)]
    source: ImageReference,
    /// Where to write the decrypted image: oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker://HOST/REPO[:TAG|@DIGEST]
    #[arg(value_name = "DST", value_parser = super::parse_reference)]
    destination: ImageReference,
    /// Layer to decrypt, 0 = bottom, negative counts from the top (repeatable; default: all)
    #[arg(long = "layer", value_name = "N", allow_negative_numbers = true, help_heading = "Selection")]
    layers: Vec<i64>,
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

/// Runs `cryptadm image decrypt`.
pub fn run(args: DecryptArgs, printer: &Printer) -> anyhow::Result<ExitStatus> {
    crate::cmd::interrupt::remove_partials_on_signal();
    let keys = args.keys.resolve(super::provider_config()?, printer)?;
    let source_access = args.src_registry.flags(&args.dest_registry);
    let source = super::open_source_jobs(&args.source, &source_access, printer, args.jobs.jobs)
        .with_context(|| format!("opening `{}`", args.source))?;
    let destination =
        super::open_plaintext_destination(&args.destination, &args.source, &args.dest_registry.flags(), printer)
            .with_context(|| format!("opening `{}`", args.destination))?;
    let selection = super::selection(&args.selection, &args.layers);
    let reports =
        image::decrypt_image(source.as_ref(), destination, &selection, &keys.unwrappers(), args.jobs.jobs, printer)
            .with_context(|| format!("decrypting `{}`", args.source))?;
    let decrypted = reports.iter().filter(|r| r.outcome == "decrypted").count();
    printer.info(&format!("decrypted {}; wrote `{}`", plural(decrypted as u64, "layer"), args.destination));
    Ok(ExitStatus::Success)
}
