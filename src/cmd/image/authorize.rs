//! `cryptadm image authorize`.

use super::{KeyArgs, SelectionArgs};
use crate::cmd::OutputFormatArg;
use crate::cmd::error::Failure;
use crate::cmd::printer::Printer;
use crate::exit::ExitStatus;
use crate::oci::ImageReference;
use crate::ocicrypt::image;
use anyhow::Context;
use clap::Args;

/// Examples for `cryptadm image authorize`.
pub const EXAMPLES: &str = "Examples:
  # Exit 0 when the node's keys open every encrypted layer of every platform, 16 otherwise
  cryptadm image authorize --key /etc/containerd/ocicrypt/keys/node.pem oci:app-enc:v1

  # Per-layer report for the host platform only
  cryptadm image authorize --key node.pem --platform linux/amd64 --output-format json oci:app-enc:v1

  # Straight from a registry: reads manifests and configs, never a layer
  cryptadm image authorize --key node.pem \\
      --authfile /run/containers/0/auth.json docker://registry.example.com/app-enc:v1";

/// Prove that the given keys may use an encrypted image, without decrypting it
///
/// Unwraps the key of every encrypted layer of every selected platform (containerd imgcrypt checks only the
/// first) and never reads a layer blob. Prints one line per layer (or a document with --output-format).
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES, after_long_help = crate::cmd::long_help_footer(EXAMPLES))]
pub struct AuthorizeArgs {
    /// The image: oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker://HOST/REPO[:TAG|@DIGEST]
    #[arg(value_name = "IMAGE", value_parser = super::parse_reference)]
    image: ImageReference,
    /// Print the per-layer report as a document
    #[arg(long, value_enum, value_name = "FORMAT")]
    output_format: Option<OutputFormatArg>,
    #[command(flatten)]
    selection: SelectionArgs,
    #[command(flatten)]
    keys: KeyArgs,
    #[command(flatten)]
    registry: super::registry::ImageRegistryArgs,
}

/// Runs `cryptadm image authorize`.
pub fn run(args: AuthorizeArgs, printer: &Printer) -> anyhow::Result<ExitStatus> {
    let keys = args.keys.resolve(super::provider_config()?, printer)?;
    let source = super::open_source(&args.image, &args.registry.flags(), printer)
        .with_context(|| format!("opening `{}`", args.image))?;
    let selection = super::selection(&args.selection, &[]);
    let reports = image::authorize_image(source.as_ref(), &selection, &keys.unwrappers(), super::DEFAULT_JOBS)?;
    let output = match args.output_format {
        Some(format) => {
            let document = serde_json::json!({ "image": args.image.to_string(), "layers": reports });
            crate::render::documents(format.into(), [document])?
        }
        None => reports
            .iter()
            .map(|r| {
                format!("{} layer {} {}: {}\n", r.platform.as_deref().unwrap_or("-"), r.index, r.digest, r.outcome)
            })
            .collect(),
    };
    printer.data(output.as_bytes()).context("writing to standard output")?;
    let denied = reports.iter().filter(|r| r.outcome == "denied").count();
    if denied > 0 {
        // The first refusal says why (a key manager's words, or which schemes the layer was wrapped for).
        let why = reports.iter().find_map(|r| r.problem.as_deref()).map(|p| format!(": {p}")).unwrap_or_default();
        return Err(Failure::new(
            ExitStatus::Unauthenticated,
            format!(
                "not authorized: the keys open {} of {} encrypted layers{why}",
                reports.len() - denied,
                reports.len()
            ),
        )
        .with_hint(if why.contains(": permission denied by ") {
            crate::cmd::error::KEY_MANAGER_DENIED_HINT
        } else {
            "give a private key (--key) that belongs to one of the image's recipients"
        })
        .into());
    }
    Ok(ExitStatus::Success)
}
