//! `cryptadm image inspect`.

use crate::cmd::OutputFormatArg;
use crate::cmd::printer::Printer;
use crate::exit::ExitStatus;
use crate::oci::ImageReference;
use crate::ocicrypt::inspect;
use anyhow::Context;
use clap::Args;

/// Examples for `cryptadm image inspect`.
pub const EXAMPLES: &str = "Examples:
  # Which layers are encrypted, and for whom (no key needed)
  cryptadm image inspect oci:app-enc:v1

  # As JSON, straight from a registry (reads manifests and configs, never a layer)
  cryptadm image inspect --output-format json docker://registry.example.com/app-enc:v1";

/// Show each layer of an image: media type, size, digest, encryption and recipients, without any key
///
/// For every platform and layer: the media type, size, digest and diff ID (`diff-id=-` when the config lists
/// none), whether it is encrypted, and for each
/// wrapping scheme what names its recipients: a JWE key id (`kid`; ocicrypt writes none, so the algorithm is
/// shown), a PKCS#7 certificate's issuer and serial number, OpenPGP key IDs. A provider's wrapped key is
/// counted, not read. Annotations that describe an encrypted layer's plaintext (zstd:chunked, eStargz) are flagged.
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES, after_long_help = crate::cmd::long_help_footer(EXAMPLES))]
pub struct InspectArgs {
    /// The image: oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker://HOST/REPO[:TAG|@DIGEST]
    #[arg(value_name = "IMAGE", value_parser = super::parse_reference)]
    image: ImageReference,
    #[command(flatten)]
    registry: super::registry::ImageRegistryArgs,
    /// Print the layers as a document
    #[arg(long, value_enum, value_name = "FORMAT")]
    output_format: Option<OutputFormatArg>,
}

/// Runs `cryptadm image inspect`.
pub fn run(args: InspectArgs, printer: &Printer) -> anyhow::Result<ExitStatus> {
    let source = super::open_source(&args.image, &args.registry.flags(), printer)
        .with_context(|| format!("opening `{}`", args.image))?;
    let layers = inspect::inspect_image(source.as_ref()).with_context(|| format!("inspecting `{}`", args.image))?;
    let output = match args.output_format {
        Some(format) => {
            let document = serde_json::json!({ "image": args.image.to_string(), "layers": layers });
            crate::render::documents(format.into(), [document])?
        }
        None => layers.iter().map(text_line).collect(),
    };
    printer.data(output.as_bytes()).context("writing to standard output")?;
    Ok(ExitStatus::Success)
}

fn text_line(layer: &inspect::LayerInfo) -> String {
    let mut line = format!(
        "{} layer {} {} {} {} diff-id={}",
        layer.platform.as_deref().unwrap_or("-"),
        layer.index,
        layer.digest,
        layer.size,
        layer.media_type,
        layer.diff_id.as_deref().unwrap_or("-")
    );
    if layer.encrypted {
        line.push_str(" encrypted");
        for scheme in &layer.schemes {
            line.push_str(&format!(" {}[{}]", scheme.scheme, scheme.recipients.join("; ")));
        }
        if !layer.plaintext_annotations.is_empty() {
            line.push_str(&format!(" plaintext-annotations[{}]", layer.plaintext_annotations.join(", ")));
        }
    }
    line.push('\n');
    line
}
