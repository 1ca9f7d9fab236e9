//! `cryptadm image node-config`.

use crate::cmd::printer::Printer;
use crate::exit::ExitStatus;
use crate::interact::Interaction;
use crate::ocicrypt::nodeconfig::{self, NodeConfig, Runtime};
use anyhow::Context;
use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// Examples for `cryptadm image node-config`.
pub const EXAMPLES: &str = "Examples:
  # containerd 1.6/1.7: a drop-in that /etc/containerd/config.toml imports (its comments say how), then restart
  cryptadm image node-config --runtime containerd --binary /usr/local/bin/cryptadm \\
      > /etc/containerd/conf.d/cryptadm.toml

  # containerd 2.2.2 or later (config version 3)
  cryptadm image node-config --runtime containerd --containerd-version 2

  # CRI-O: a drop-in, then restart (or reload) CRI-O
  cryptadm image node-config --runtime crio > /etc/crio/crio.conf.d/01-decrypt.conf";

/// Print the container runtime configuration that decrypts images with cryptadm
///
/// For containerd: a drop-in for config.toml's `imports` holding the stream processors (cryptadm image
/// stream-decrypt, under the two processor ids containerd gives the decryption payload to, for every encrypted
/// layer media type), in the config version 2 layout (containerd 1.x) or 3 (2.x), and as comments what the CRI
/// needs in config.toml itself (image_decryption key_model = \"node\", the default; on 2.x use_local_image_pull).
/// For CRI-O, which decrypts by
/// itself: decryption_keys_path. Keys go into the keys directory (`cryptadm secret generate-k8s --with-daemonset`
/// installs them on every node).
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES, after_long_help = crate::cmd::long_help_footer(EXAMPLES))]
pub struct NodeConfigArgs {
    /// The container runtime of the nodes
    #[arg(long, value_enum, value_name = "RUNTIME")]
    runtime: RuntimeArg,
    /// containerd's major version: 1 (config version 2) or 2 (config version 3)
    #[arg(long, value_name = "MAJOR", default_value = "1", value_parser = ["1", "2"])]
    containerd_version: String,
    /// Where cryptadm is on the nodes (absolute; default: this binary's path)
    #[arg(long, value_name = "PATH")]
    binary: Option<PathBuf>,
    /// The keys directory (default: /etc/containerd/ocicrypt/keys, CRI-O: /etc/crio/keys)
    #[arg(long, value_name = "DIR")]
    keys_dir: Option<PathBuf>,
    /// The key-provider configuration the stream processors get as OCICRYPT_KEYPROVIDER_CONFIG (containerd's default)
    #[arg(long, value_name = "FILE", default_value = nodeconfig::CONTAINERD_KEYPROVIDER_CONFIG)]
    keyprovider_config: PathBuf,
    /// A NAME=VALUE setting for the stream processors' environment (repeatable; containerd only), e.g. the Vault
    /// server and the node's login for images wrapped with vault-transit:// keys: VAULT_ADDR, VAULT_CACERT and a
    /// JWT/Kubernetes role with its projected token file; for aws-kms:// keys, AWS_REGION or a web identity
    /// (AWS_ROLE_ARN, AWS_WEB_IDENTITY_TOKEN_FILE), or nothing on EC2 (the instance profile). Secrets themselves
    /// (VAULT_TOKEN, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN) are refused.
    #[arg(long = "processor-env", value_name = "NAME=VALUE")]
    processor_env: Vec<String>,
}

/// The runtimes.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum RuntimeArg {
    /// containerd with its CRI plugin
    Containerd,
    /// CRI-O
    Crio,
}

/// Runs `cryptadm image node-config`.
pub fn run(args: NodeConfigArgs, printer: &Printer) -> anyhow::Result<ExitStatus> {
    let runtime = match (args.runtime, args.containerd_version.as_str()) {
        (RuntimeArg::Crio, _) => Runtime::Crio,
        (RuntimeArg::Containerd, "2") => Runtime::Containerd2,
        (RuntimeArg::Containerd, _) => Runtime::Containerd1,
    };
    let binary = match args.binary {
        Some(path) => path,
        None => std::env::current_exe().context("finding this binary's path (give --binary)")?,
    };
    let keys_dir = args.keys_dir.unwrap_or_else(|| {
        PathBuf::from(if runtime == Runtime::Crio {
            nodeconfig::CRIO_KEYS_DIR
        } else {
            nodeconfig::CONTAINERD_KEYS_DIR
        })
    });
    let config = NodeConfig {
        runtime,
        binary: binary.display().to_string(),
        keys_dir: keys_dir.display().to_string(),
        keyprovider_config: Some(args.keyprovider_config.display().to_string()),
        env: args.processor_env,
    };
    let rendered = nodeconfig::render(&config).context("rendering the runtime configuration")?;
    for warning in &rendered.warnings {
        printer.warn(warning);
    }
    printer.data(rendered.text.as_bytes()).context("writing to standard output")?;
    Ok(ExitStatus::Success)
}
