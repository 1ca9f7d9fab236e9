//! `cryptadm secret`: Kubernetes Secrets for image decryption keys.

pub mod generate_k8s;

use super::printer::Printer;
use crate::exit::ExitStatus;
use clap::{Args, Subcommand};

/// Examples for the group.
pub const EXAMPLES: &str = "Examples:
  # The Secret kubectl would create from the key files, plus a DaemonSet that installs them on every
  # node
  cryptadm secret generate-k8s image-keys --namespace kube-system --key node.pem --with-daemonset \\
      | kubectl apply -f -";

/// Generate Kubernetes objects that carry image decryption keys
///
/// Secrets for containerd's and CRI-O's node key model (with a DaemonSet that installs the keys on every node), for
/// the enc-key-sync operator, and in the shape of the unmerged encrypted-images KEP.
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES, after_long_help = crate::cmd::long_help_footer(EXAMPLES))]
pub struct SecretNamespace {
    #[command(subcommand)]
    command: SecretCommand,
}

/// The secret verbs.
#[derive(Subcommand, Debug)]
pub enum SecretCommand {
    #[allow(missing_docs)]
    #[command(name = "generate-k8s")]
    GenerateK8s(generate_k8s::GenerateK8sArgs),
}

/// Runs a secret verb.
pub fn run(namespace: SecretNamespace, printer: &Printer) -> anyhow::Result<ExitStatus> {
    match namespace.command {
        SecretCommand::GenerateK8s(args) => generate_k8s::run(args, printer),
    }
}
