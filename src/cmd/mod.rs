//! The command line: clap definitions, global options, dispatch, and error rendering.
//!
//! Each leaf command is one module that parses its arguments, resolves them into settings (secrets read, paths
//! checked) before touching anything, calls the core and renders the result. Command modules never call each
//! other.

pub mod aws_args;
pub mod bootstrap;
pub mod clevis_args;
pub mod deadline;
pub mod disk;
pub mod env_vars;
pub mod error;
pub mod image;
pub mod interrupt;
pub mod key_refs;
pub mod kmip_args;
pub mod openstack_args;
pub mod printer;
pub mod proxy;
pub mod secret;
pub mod secrets;
pub mod vault_args;
pub mod volume;

use crate::exit::{self, ExitStatus};
use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};
use printer::{Printer, Verbosity};
use std::ffi::OsString;

/// Encryption jobs for infrastructure operators
///
/// cryptadm seals Cluster API machineadm bootstrap configurations, encrypts OCI images the way
/// containers/ocicrypt does (local layouts, archives and registries), formats and reads LUKS disks and images,
/// rotates the keys of LUKS volumes the CSI-Addons way, and prints Kubernetes Secrets for image decryption keys,
/// as one static binary for shells, cloud-init and CI.
#[derive(Parser, Debug)]
#[command(name = "cryptadm", version, propagate_version = true, max_term_width = 100)]
#[command(after_long_help = exit_status_help())]
pub struct Cli {
    #[command(flatten)]
    global: GlobalArgs,
    #[command(subcommand)]
    command: Commands,
}

/// Options every command takes.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
    /// Print only errors
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Print details of each step
    #[arg(short, long, global = true)]
    pub verbose: bool,
    /// Never draw progress bars or spinners (they are drawn only on a terminal anyway)
    #[arg(long, global = true)]
    pub no_progress: bool,
    /// When to colour messages
    #[arg(long, global = true, value_enum, default_value_t = ColorArg::Auto, value_name = "WHEN")]
    pub color: ColorArg,
    /// Overall deadline of the command's network work (key managers, Tang servers, registries, RemoteConfig
    /// fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4
    /// [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]
    #[arg(long, global = true, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: Option<u64>,
}

/// When to colour messages.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ColorArg {
    /// Colour on a terminal, unless NO_COLOR is set
    Auto,
    /// Always colour
    Always,
    /// Never colour
    Never,
}

/// The format of printed documents.
#[derive(Clone, Copy, Debug, Default, ValueEnum)]
pub enum OutputFormatArg {
    /// A YAML stream
    #[default]
    Yaml,
    /// JSON (several documents as a v1 List)
    Json,
}

impl From<OutputFormatArg> for crate::render::OutputFormat {
    fn from(arg: OutputFormatArg) -> Self {
        match arg {
            OutputFormatArg::Yaml => Self::Yaml,
            OutputFormatArg::Json => Self::Json,
        }
    }
}

/// The command groups.
#[derive(Subcommand, Debug)]
pub enum Commands {
    #[allow(missing_docs)]
    Bootstrap(bootstrap::BootstrapNamespace),
    #[allow(missing_docs)]
    Image(image::ImageNamespace),
    #[allow(missing_docs)]
    Secret(secret::SecretNamespace),
    #[allow(missing_docs)]
    Disk(disk::DiskNamespace),
    #[allow(missing_docs)]
    Volume(volume::VolumeNamespace),
}

/// Examples shown in `--help` and in each man page, by command path (`cryptadm bootstrap seal`).
pub fn examples(command_path: &str) -> Option<&'static str> {
    match command_path {
        "cryptadm" | "cryptadm bootstrap" => Some(bootstrap::EXAMPLES),
        "cryptadm bootstrap seal" => Some(bootstrap::seal::EXAMPLES),
        "cryptadm bootstrap open" => Some(bootstrap::open::EXAMPLES),
        "cryptadm image" => Some(image::EXAMPLES),
        "cryptadm image encrypt" => Some(image::encrypt::EXAMPLES),
        "cryptadm image decrypt" => Some(image::decrypt::EXAMPLES),
        "cryptadm image authorize" => Some(image::authorize::EXAMPLES),
        "cryptadm image inspect" => Some(image::inspect::EXAMPLES),
        "cryptadm image node-config" => Some(image::node_config::EXAMPLES),
        "cryptadm image stream-decrypt" => Some(image::stream_decrypt::EXAMPLES),
        "cryptadm image keyprovider" => Some(image::keyprovider::EXAMPLES),
        "cryptadm image seal-key" => Some(image::seal_key::EXAMPLES),
        "cryptadm secret" => Some(secret::EXAMPLES),
        "cryptadm secret generate-k8s" => Some(secret::generate_k8s::EXAMPLES),
        "cryptadm disk" => Some(disk::EXAMPLES),
        "cryptadm disk luks-format" => Some(disk::luks_format::EXAMPLES),
        "cryptadm disk inspect" => Some(disk::inspect::EXAMPLES),
        "cryptadm disk decrypt" => Some(disk::decrypt::EXAMPLES),
        "cryptadm disk convert" => Some(disk::convert::EXAMPLES),
        "cryptadm disk clevis-bind" => Some(disk::clevis_bind::EXAMPLES),
        "cryptadm disk tpm2-enroll" => Some(disk::tpm2_enroll::EXAMPLES),
        "cryptadm volume" => Some(volume::EXAMPLES),
        "cryptadm volume rotate" => Some(volume::rotate::EXAMPLES),
        "cryptadm volume serve" => Some(volume::serve::EXAMPLES),
        "cryptadm volume rewrap" => Some(volume::rewrap::EXAMPLES),
        "cryptadm volume import" => Some(volume::import::EXAMPLES),
        _ => None,
    }
}

fn exit_status_help() -> String {
    exit::table_text()
}

/// The `--help` footer of a command: its examples, then the exit-status table.
pub fn long_help_footer(examples: &str) -> String {
    format!("{examples}\n\n{}", exit::table_text())
}

/// Runs cryptadm with these arguments and returns the exit status; prints errors and hints on stderr.
pub fn main(args: impl IntoIterator<Item = impl Into<OsString> + Clone>) -> ExitStatus {
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let parsed = Cli::command().try_get_matches_from(&args).and_then(|matches| {
        use clap::FromArgMatches as _;
        Ok((deadline_kind(&matches), Cli::from_arg_matches(&matches)?))
    });
    let (deadline_kind, cli) = match parsed {
        Ok(parsed) => parsed,
        Err(err) => {
            // clap quotes a refused value whole: a URL in it may carry a password or a signature.
            let rendered = err.render().to_string();
            let redacted: Vec<String> = rendered.split('\n').map(crate::redact::urls_in).collect();
            let redacted = redacted.join("\n");
            if err.use_stderr() && redacted != rendered {
                use std::io::Write;
                let _ = std::io::stderr().write_all(redacted.as_bytes());
            } else {
                let _ = err.print();
            }
            return if err.use_stderr() { ExitStatus::Usage } else { ExitStatus::Success };
        }
    };
    let printer = printer_for(&cli.global);
    aws_args::install_log(&printer);
    if let Err(err) = deadline::install(cli.global.timeout, deadline_kind) {
        let (status, hint) = error::classify(&err);
        printer.error(&error::one_line(&err), hint.as_deref());
        return status;
    }
    if args.iter().any(|arg| arg == "--vault-skip-verify") {
        use crate::interact::Interaction as _;
        printer.warn(
            "--vault-skip-verify: the OpenBao/Vault server's certificate is not verified; whoever sits between \
             this host and the server can read the token and every key sent",
        );
    }
    match run(cli.command, &printer) {
        Ok(status) => status,
        Err(err) => {
            let (mut status, mut hint) = error::classify(&err);
            let mut line = error::one_line(&err);
            // A library's own timeout ("operation timed out") does not say that the deadline cut it: a failure
            // (not a refusal, a missing key, bad input) once the deadline passed is the deadline's, exit 4.
            if let Some(deadline) = deadline::current().filter(crate::deadline::Deadline::passed)
                && matches!(status, ExitStatus::Failure | ExitStatus::DeadlineExceeded)
            {
                if !line.contains("overall deadline") {
                    line = format!("{line} ({deadline} passed)");
                }
                hint = Some(crate::deadline::HINT.to_owned());
                status = ExitStatus::DeadlineExceeded;
            }
            printer.error(&line, hint.as_deref());
            status
        }
    }
}

fn printer_for(global: &GlobalArgs) -> Printer {
    let verbosity = match (global.quiet, global.verbose) {
        (true, _) => Verbosity::Quiet,
        (false, true) => Verbosity::Verbose,
        (false, false) => Verbosity::Normal,
    };
    let color = match global.color {
        ColorArg::Auto => anstream::ColorChoice::Auto,
        ColorArg::Always => anstream::ColorChoice::Always,
        ColorArg::Never => anstream::ColorChoice::Never,
    };
    Printer::new(verbosity, !global.no_progress, color)
}

/// How the overall deadline bounds the parsed command: `bootstrap open` has a default, the long-running servers
/// none.
fn deadline_kind(matches: &clap::ArgMatches) -> deadline::Kind {
    match matches.subcommand() {
        Some(("bootstrap", sub)) if sub.subcommand_name() == Some("open") => deadline::Kind::FirstBoot,
        Some(("volume", sub)) if sub.subcommand_name() == Some("serve") => deadline::Kind::Server,
        Some(("image", sub)) if sub.subcommand_name() == Some("keyprovider") => deadline::Kind::Server,
        _ => deadline::Kind::Command,
    }
}

fn run(command: Commands, printer: &Printer) -> anyhow::Result<ExitStatus> {
    match command {
        Commands::Bootstrap(namespace) => bootstrap::run(namespace, printer),
        Commands::Image(namespace) => image::run(namespace, printer),
        Commands::Secret(namespace) => secret::run(namespace, printer),
        Commands::Disk(namespace) => disk::run(namespace, printer),
        Commands::Volume(namespace) => volume::run(namespace, printer),
    }
}

/// Refuses an output that is the input (the same file by device and inode: also through a hard or symbolic link),
/// which writing would destroy. Both paths are named by the flags the operator gave.
pub fn refuse_same_file(
    input: &std::path::Path,
    output: &std::path::Path,
    input_flag: &str,
    output_flag: &str,
) -> anyhow::Result<()> {
    use anyhow::Context;
    let same = crate::atomic::same_file(input, output)
        .with_context(|| format!("comparing `{}` with `{}`", input.display(), output.display()))?;
    if same {
        return Err(error::Failure::new(
            ExitStatus::Usage,
            format!(
                "{output_flag} `{}` is the input {input_flag} `{}`; writing it would destroy the input",
                output.display(),
                input.display()
            ),
        )
        .with_hint(format!("give {output_flag} a new file"))
        .into());
    }
    Ok(())
}

/// The clap command tree (for completions, man pages and tests).
pub fn command() -> clap::Command {
    Cli::command()
}
