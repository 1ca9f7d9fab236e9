//! `cryptadm secret generate-k8s`.

use crate::atomic;
use crate::cmd::OutputFormatArg;
use crate::cmd::error::Failure;
use crate::cmd::printer::Printer;
use crate::cmd::printer::plural;
use crate::cmd::secrets::{PassphraseArgs, StdinClaim};
use crate::exit::Classify;
use crate::exit::ExitStatus;
use crate::interact::Interaction;
use crate::ocicrypt::keyfiles::{self, KeyFileRef};
use crate::render::kubernetes::{self, KeyFile, MAX_SECRET_SIZE, Request, Runtime, SecretFormat};
use anyhow::Context;
use clap::{Args, ValueEnum};
use std::path::Path;
use zeroize::Zeroizing;

/// Examples for `cryptadm secret generate-k8s`.
pub const EXAMPLES: &str = "Examples:
  # The Opaque Secret `kubectl create secret generic image-keys --from-file=…` prints, labelled
  cryptadm secret generate-k8s image-keys --key node.pem --key backup.pem > secret.yaml

  # Install the keys on every containerd node (/etc/containerd/ocicrypt/keys/image-keys/)
  cryptadm secret generate-k8s image-keys -n kube-system --key node.pem --with-daemonset \\
      | kubectl apply -f -

  # Same for CRI-O (/etc/crio/keys/image-keys/), the data entry named node.pem whatever the file's
  # name
  cryptadm secret generate-k8s image-keys --key node.pem=./keys/rsa.pem --with-daemonset \\
      --runtime crio

  # For the enc-key-sync operator (type `key`, namespace enc-key-sync)
  cryptadm secret generate-k8s my-decryption-key --format enc-key-sync --key node.pem

  # The encrypted-images KEP's Secret, ServiceAccount patch and Pod (password of encrypted keys from
  # a file)
  cryptadm secret generate-k8s keysecret --format kep --key enc.pem --passphrase-file pw \\
      --service-account default";

/// Print Kubernetes objects that carry image decryption keys
///
/// The Secret is byte for byte what `kubectl create secret generic NAME --from-file=… --type=… --dry-run=client`
/// prints, labelled app.kubernetes.io/managed-by=cryptadm and app.kubernetes.io/component=image-decryption-keys,
/// without creationTimestamp. Every key file is checked first: a private key (PEM, DER or JWK; RSA or EC), an
/// OpenPGP secret key, or a PKCS#7 recipient's certificate; public keys, password-protected keys (except with
/// --format kep), forms ocicrypt on the nodes cannot read (PEM SEC1, armoured OpenPGP), data key names kubectl refuses, an invalid NAME and more than 1 MiB of data are refused (exit 3)
/// before anything is printed.
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES, after_long_help = crate::cmd::long_help_footer(EXAMPLES))]
pub struct GenerateK8sArgs {
    /// The Secret's name (a DNS-1123 subdomain)
    #[arg(value_name = "NAME")]
    name: String,
    /// A key file, as [NAME=]FILE; NAME is the data entry (the file name on the node), by default FILE's name
    ///
    /// Repeatable. As kubectl's --from-file=NAME=FILE; a FILE that exists is never split at `=`. Write
    /// --key=NAME=FILE when NAME starts with `-`.
    #[arg(long = "key", value_name = "FILE", required = true)]
    keys: Vec<String>,
    /// The namespace of every object (enc-key-sync: default `enc-key-sync`)
    #[arg(short = 'n', long, value_name = "NS")]
    namespace: Option<String>,
    /// The Secret's shape
    #[arg(long, value_enum, default_value_t = FormatArg::Node, value_name = "FORMAT")]
    format: FormatArg,
    /// Add a DaemonSet that copies the keys onto every node, as regular 0600 files (--format node)
    #[arg(long)]
    with_daemonset: bool,
    /// The container runtime whose keys directory the DaemonSet writes
    #[arg(long, value_enum, default_value_t = RuntimeArg::Containerd, requires = "with_daemonset", value_name = "RUNTIME")]
    runtime: RuntimeArg,
    /// Add a patch giving this ServiceAccount the Secret, and a Pod using it (--format kep)
    #[arg(long, value_name = "SA")]
    service_account: Option<String>,
    /// How the objects are printed: a YAML stream or JSON (several objects as a v1 List)
    #[arg(long, value_enum, default_value_t = OutputFormatArg::Yaml, value_name = "FORMAT")]
    output_format: OutputFormatArg,
    /// Write the objects to FILE (created 0600, replaced atomically) instead of standard output
    ///
    /// The objects carry private keys: standard output is refused when it is a terminal.
    #[arg(short = 'o', long, value_name = "FILE")]
    out: Option<std::path::PathBuf>,
    /// The password of encrypted private keys (--format kep only: it is stored in the Secret's keyPass)
    #[command(flatten)]
    password: PassphraseArgs,
}

/// The Secret shapes.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum FormatArg {
    /// An Opaque Secret, one entry per key file, for containerd's and CRI-O's node key model
    Node,
    /// The encrypted-images KEP's kubernetes.io/decryptionkeys Secret (never merged: for experiments)
    Kep,
    /// A `key`-type Secret for the enc-key-sync operator (IBM/k8s-enc-image-operator)
    EncKeySync,
}

/// The runtimes a DaemonSet can install keys for.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum RuntimeArg {
    /// containerd with imgcrypt: /etc/containerd/ocicrypt/keys
    Containerd,
    /// CRI-O: /etc/crio/keys
    Crio,
}

/// Runs `cryptadm secret generate-k8s`.
pub fn run(args: GenerateK8sArgs, printer: &Printer) -> anyhow::Result<ExitStatus> {
    let output_format = args.output_format.into();
    let out = args.out.clone();
    if out.is_none() && printer.stdout_is_terminal() {
        return Err(Failure::new(ExitStatus::Usage, "refusing to print private keys on a terminal")
            .with_hint("pipe the output into kubectl or a file, or write it with --out FILE")
            .into());
    }
    let request = resolve(args)?;
    kubernetes::check_request(&request).map_err(flag_named)?;
    let files: Vec<_> = request.keys.iter().map(|k| KeyFileRef { source: &k.source, bytes: &k.bytes }).collect();
    let kinds = keyfiles::check_all(&files, request.format.destination(), request.password.as_ref())?;
    // A sealed key goes into the Secret as it is (each node's TPM or Tang opens it): CRI-O reads its keys
    // directory with Go's ocicrypt, which cannot.
    if request.daemonset == Some(Runtime::Crio) && kinds.contains(&keyfiles::KeyKind::Sealed) {
        return Err(Failure::new(
            ExitStatus::InvalidInput,
            "a sealed key (clevis JWE) cannot go to CRI-O's keys directory: CRI-O opens no sealed key",
        )
        .with_hint("seal keys for containerd nodes whose stream processor is cryptadm (`cryptadm image node-config`)")
        .into());
    }
    let objects = kubernetes::build(&request, &kinds).map_err(flag_named)?;
    if request.format == SecretFormat::Kep {
        printer.warn(if request.service_account.is_some() {
            "the encrypted-images KEP was never merged: API servers reject (or drop) imageDecryptSecrets, and no kubelet reads the Secret"
        } else {
            "the encrypted-images KEP was never merged: no kubelet or runtime reads this Secret"
        });
    }
    // The documents hold private keys (base64): wipe the text once written.
    let text = Zeroizing::new(kubernetes::render(&objects, output_format).map_err(kubernetes::Error::from)?);
    match out {
        Some(path) => {
            atomic::write(&path, text.as_bytes(), atomic::MODE_PRIVATE)
                .with_context(|| format!("writing `{}`", path.display()))?;
            printer.info(&format!("wrote {} to `{}`", plural(objects.len() as u64, "object"), path.display()));
        }
        None => printer.data(text.as_bytes()).context("writing to standard output")?,
    }
    Ok(ExitStatus::Success)
}

/// The core names the objects' fields ("namespace"); the operator knows them by their flags.
fn flag_named(error: kubernetes::Error) -> anyhow::Error {
    let flag = match &error {
        kubernetes::Error::InvalidName { what: "namespace", .. } => "--namespace",
        kubernetes::Error::InvalidName { what: "service account", .. } => "--service-account",
        _ => return error.into(),
    };
    let kubernetes::Error::InvalidName { value, problem, .. } = &error else { unreachable!("matched above") };
    let mut failure = Failure::new(error.status(), format!("{flag} `{value}` is not valid: {problem}"));
    if let Some(hint) = crate::cmd::error::classify(&anyhow::Error::from(error)).1 {
        failure = failure.with_hint(hint);
    }
    failure.into()
}

/// Reads the key files and the password, and checks the flags go together, before anything is built.
fn resolve(args: GenerateK8sArgs) -> anyhow::Result<Request> {
    let format = match args.format {
        FormatArg::Node => SecretFormat::Node,
        FormatArg::Kep => SecretFormat::Kep,
        FormatArg::EncKeySync => SecretFormat::EncKeySync,
    };
    if args.with_daemonset && format != SecretFormat::Node {
        return Err(Failure::new(
            ExitStatus::Usage,
            "--with-daemonset installs node-model keys: it needs --format node",
        )
        .with_hint("enc-key-sync brings its own DaemonSet; a kep Secret is for a kubelet that reads it")
        .into());
    }
    if args.service_account.is_some() && format != SecretFormat::Kep {
        return Err(Failure::new(
            ExitStatus::Usage,
            "--service-account adds the KEP's imageDecryptSecrets: it needs --format kep",
        )
        .with_hint("for the node model, apply the Secret (and --with-daemonset); pods need no reference to it")
        .into());
    }
    let keys = args.keys.iter().map(|spec| read_key(spec)).collect::<anyhow::Result<Vec<_>>>()?;
    let password = if format == SecretFormat::Kep { args.password.read(&mut StdinClaim::default())? } else { None };
    Ok(Request {
        name: args.name,
        namespace: args.namespace,
        format,
        keys,
        password,
        daemonset: args.with_daemonset.then_some(match args.runtime {
            RuntimeArg::Containerd => Runtime::Containerd,
            RuntimeArg::Crio => Runtime::Crio,
        }),
        service_account: args.service_account,
    })
}

/// Reads one `--key [NAME=]FILE`. At most one byte more than a Secret may hold is read: a larger file is refused
/// without reading it whole.
fn read_key(spec: &str) -> anyhow::Result<KeyFile> {
    let (name, path) = match spec.split_once('=') {
        Some((name, path)) if !Path::new(spec).exists() => {
            if name.is_empty() || path.is_empty() {
                return Err(Failure::new(ExitStatus::Usage, format!("--key `{spec}`: expected NAME=FILE or FILE"))
                    .with_hint("e.g. --key node.pem=./keys/rsa.pem")
                    .into());
            }
            (name.to_owned(), Path::new(path))
        }
        _ => {
            let path = Path::new(spec);
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            (name, path)
        }
    };
    let source = path.display().to_string();
    let file = std::fs::File::open(path).with_context(|| format!("reading the key file `{source}`"))?;
    if !file.metadata().with_context(|| format!("reading the key file `{source}`"))?.is_file() {
        return Err(Failure::new(ExitStatus::InvalidInput, format!("`{source}` is not a regular file"))
            .with_hint("give each key file with its own --key")
            .into());
    }
    let read = crate::bounded::read_at_most(file, MAX_SECRET_SIZE as u64)
        .with_context(|| format!("reading the key file `{source}`"))?;
    let Some(mut bytes) = read else {
        return Err(Failure::new(
            ExitStatus::InvalidInput,
            format!("`{source}` is larger than 1 MiB ({MAX_SECRET_SIZE} bytes), the most a Secret may hold"),
        )
        .with_hint("a key file is a few kilobytes: check that FILE is the key")
        .into());
    };
    Ok(KeyFile { name, source, bytes: Zeroizing::new(std::mem::take(&mut *bytes)) })
}
