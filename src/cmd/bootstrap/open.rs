//! `cryptadm bootstrap open`: decrypt a machineadm configuration stream on the machine.

use super::{PluginArgs, RemoteArgs};
use crate::atomic;
use crate::cmd::error::Failure;
use crate::cmd::printer::Printer;
use crate::cmd::printer::plural;
use crate::cmd::secrets::{PassphraseArgs, StdinClaim, is_stdin};
use crate::exit::ExitStatus;
use crate::interact::Interaction;
use crate::machineadm::{self, OpenOptions};
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;

/// Examples for `cryptadm bootstrap open`.
pub const EXAMPLES: &str = "Examples:
  # cloud-init runcmd: the passphrase comes from each document's provider
  cryptadm bootstrap open --in /run/machineadm/machineadm_config.yaml \\
      --out /run/machineadm/machine_config.yaml

  # Once per instance, even if the decrypted file is consumed and removed afterwards
  cryptadm bootstrap open --in sealed.yaml --out config.yaml \\
      --creates /var/lib/machineadm/bootstrapped

  # A RemoteConfig on an HTTPS server with a private CA (ca.crt in /etc/machineadm/certs.d)
  cryptadm bootstrap open --in machineadm_config.yaml --out /run/machineadm/machine_config.yaml \\
      --cert-dir /etc/machineadm/certs.d

  # Decrypt to a pipe (never to a terminal), e.g. to check a sealed file against its source
  cryptadm bootstrap open --in sealed.yaml --out - --passphrase-file passphrase \\
      | cmp - machine-config.yaml";

/// Decrypt a machineadm configuration stream back into the machine configuration
///
/// Documents are processed in order; see `cryptadm bootstrap open --help` (its long help is generated from the
/// backend table of `kms/`).
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES, after_long_help = crate::cmd::long_help_footer(EXAMPLES), long_about = long_about())]
pub struct OpenArgs {
    /// The sealed stream (`-`: standard input)
    #[arg(long = "in", value_name = "FILE")]
    pub input: PathBuf,
    /// Where to write the decrypted configuration (`-`: standard output, refused when it is a terminal)
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    #[command(flatten)]
    passphrase: PassphraseArgs,
    /// In-band configuration only: fail on RemoteConfig documents instead of fetching them
    #[arg(long)]
    pub strict: bool,
    /// Do nothing and exit 0 when PATH exists
    #[arg(long, value_name = "PATH")]
    pub creates: Option<PathBuf>,
    #[command(flatten)]
    plugin: PluginArgs,
    #[command(flatten)]
    remote: RemoteArgs,
    /// The TPM of `clevis:` documents' tpm2 pins: a device path or a TCTI string (`device:PATH`,
    /// `swtpm:host=H,port=P`); else TPM2TOOLS_TCTI, else /dev/tpmrm0
    #[arg(help_heading = crate::kms::backends::TPM2_HEADING, long, value_name = "DEVICE", env = "CRYPTADM_TPM2_DEVICE")]
    pub tpm2_device: Option<String>,
}

/// The long help: the built-in providers and RemoteConfig sources come from the backend table.
fn long_about() -> String {
    use crate::kms::backends;
    let quoted = |names: Vec<&str>| {
        let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
        backends::or_list(&names.iter().map(String::as_str).collect::<Vec<_>>())
    };
    format!(
        "Decrypt a machineadm configuration stream back into the machine configuration\n\n\
         Documents are processed in order: each EncryptedConfig is decrypted and authenticated; each RemoteConfig \
         is fetched by its provider and what it returns takes its place: a machineadm stream is processed the same \
         way (nested at most 4 deep, a loop refused), anything else is plain configuration used as it is. Built-in \
         RemoteConfig providers: {remote} (`file`: file:///absolute/path; `https`: TLS verified against the system \
         roots and --cert-dir; the AWS ones with the AWS settings); any other provider runs \
         machineadm-remote-configuration-provider-NAME as `fetch URI`. --strict refuses RemoteConfig documents, \
         --skip-remote skips them. Every document is checked and every RemoteConfig fetched before any passphrase \
         is fetched; a fetch may return at most 16 MiB. The passphrase comes from --passphrase-file, \
         CRYPTADM_PASSPHRASE_FILE or CRYPTADM_PASSPHRASE if given, else from each document's provider: {providers} \
         are built in (`file` reads the file its passphraseURI names; the others ask their key manager, with its \
         settings below); any other provider runs the plugin machineadm-plugin-encryption-provider-NAME from PATH, \
         /usr/libexec/machineadm or /usr/local/libexec/machineadm as `get-passphrase URI`.\n\n\
         The plaintext is written only to --out (mode 0600, atomically); an --out that already holds it is left \
         untouched, so cloud-init can run this on every boot. Nothing is written when any document fails.",
        remote = quoted(backends::remote_sources().collect()),
        providers = quoted(backends::providers().collect()),
    )
}

/// Runs `cryptadm bootstrap open`.
pub fn run(args: OpenArgs, printer: &Printer) -> anyhow::Result<ExitStatus> {
    if let Some(guard) = args.creates.as_ref().filter(|g| g.exists()) {
        printer.info(&format!("`{}` exists; nothing to do", guard.display()));
        return Ok(ExitStatus::Success);
    }
    let mut stdin = StdinClaim::default();
    if is_stdin(&args.input) {
        stdin.claim("--in")?;
    }
    let to_stdout = is_stdin(&args.out);
    if to_stdout && printer.stdout_is_terminal() {
        return Err(Failure::new(ExitStatus::Usage, "refusing to print a decrypted configuration on a terminal")
            .with_hint("pipe the output into a program or a file, or write it with --out FILE")
            .into());
    }
    if !to_stdout {
        crate::cmd::refuse_same_file(&args.input, &args.out, "--in", "--out")?;
    }
    let input = super::read_input(&args.input, "the sealed stream", machineadm::MAX_STREAM_BYTES)?;
    let explicit = args.passphrase.read(&mut stdin)?;
    let options =
        OpenOptions { strict: args.strict, skip_remote: args.remote.skip_remote, remote: args.remote.settings() };
    let providers = crate::machineadm::ProviderSettings {
        tpm2: crate::cmd::clevis_args::tpm2_device(args.tpm2_device.as_deref())?,
        ..args.plugin.settings()?
    };
    let opened = machineadm::open_stream(&input, explicit.as_ref(), &providers, &options, printer)
        .with_context(|| format!("opening {}", describe_input(&args.input)))?;

    if to_stdout {
        printer.data(&opened.plaintext).context("writing to standard output")?;
        return Ok(ExitStatus::Success);
    }
    let out = &args.out;
    if atomic::holds(out, &opened.plaintext).with_context(|| format!("reading `{}`", out.display()))? {
        // Up to date, but the plaintext is a secret whatever mode an earlier hand gave the file.
        atomic::restrict(out, atomic::MODE_PRIVATE).with_context(|| format!("making `{}` 0600", out.display()))?;
        printer.info(&format!("`{}` is up to date", out.display()));
        return Ok(ExitStatus::Success);
    }
    atomic::write(out, &opened.plaintext, atomic::MODE_PRIVATE)
        .with_context(|| format!("writing `{}`", out.display()))?;
    printer.info(&format!("wrote {} to `{}`", plural(opened.plaintext.len() as u64, "byte"), out.display()));
    Ok(ExitStatus::Success)
}

fn describe_input(path: &std::path::Path) -> String {
    if is_stdin(path) { "standard input".into() } else { format!("`{}`", path.display()) }
}
