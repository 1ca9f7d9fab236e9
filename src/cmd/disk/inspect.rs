//! `cryptadm disk inspect`: a structured `cryptsetup luksDump` (no secrets: no salts, digests or keys).

use crate::cmd::OutputFormatArg;
use crate::cmd::printer::Printer;
use crate::exit::ExitStatus;
use crate::luks::Volume;
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;

/// Examples for `cryptadm disk inspect`.
pub const EXAMPLES: &str = "Examples:
  # The header as YAML
  cryptadm disk inspect disk.img

  # The active keyslot ids, with jq
  cryptadm disk inspect --output-format json /dev/sdb | jq '.keyslots[].id'";

/// Show a LUKS1 or LUKS2 header, or a qcow2 image and its LUKS header: version, UUID, data segment, keyslots
///
/// Like `cryptsetup luksDump`, as a YAML or JSON document. Opens the target read-only and never writes (unlike
/// cryptsetup, which repairs a damaged header copy on any access). Salts, digests and keys are left out.
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES, after_long_help = crate::cmd::long_help_footer(EXAMPLES))]
pub struct InspectArgs {
    /// Format of the printed document
    #[arg(long, value_enum, default_value_t, value_name = "FORMAT")]
    pub output_format: OutputFormatArg,
    /// The LUKS image file or block device
    #[arg(value_name = "TARGET")]
    pub target: PathBuf,
}

/// Runs `cryptadm disk inspect`.
pub fn run(args: InspectArgs, printer: &Printer) -> anyhow::Result<ExitStatus> {
    if crate::qcow2::is_qcow2(&args.target).unwrap_or(false) {
        let summary = crate::qcow2::summary::describe(&args.target)
            .with_context(|| format!("reading `{}`", args.target.display()))?;
        let text = crate::render::documents(args.output_format.into(), [summary])?;
        printer.data(text.as_bytes()).context("writing to standard output")?;
        return Ok(ExitStatus::Success);
    }
    let volume = Volume::open(&args.target, false).with_context(|| format!("reading `{}`", args.target.display()))?;
    super::warn_all(&crate::disk::pipeline::copy_warnings(&volume), printer);
    let mut summary = crate::luks::summary::summarize(args.target.display().to_string(), &volume);
    for binding in crate::disk::clevis::bindings(&volume) {
        summary.describe_token(binding.token, binding.description);
    }
    for enrollment in crate::disk::tpm2::enrollments(&volume) {
        summary.describe_tpm2_token(enrollment.token, enrollment.description());
    }
    let text = crate::render::documents(args.output_format.into(), [summary])?;
    printer.data(text.as_bytes()).context("writing to standard output")?;
    Ok(ExitStatus::Success)
}
