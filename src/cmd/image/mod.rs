//! `cryptadm image`: OCI image layer encryption, wire-compatible with containers/ocicrypt.

pub mod authorize;
pub mod decrypt;
pub mod encrypt;
pub mod inspect;
pub mod key_managers;
pub mod keyprovider;
pub mod node_config;
pub mod registry;
pub mod seal_key;
pub mod stream_decrypt;

use super::printer::Printer;
use crate::cmd::error::Failure;
use crate::exit::ExitStatus;
use crate::interact::Interaction;
use crate::oci::{self, ImageDestination, ImageReference, ImageSource, Platform};
use crate::ocicrypt::image::Selection;
use crate::ocicrypt::key_manager::ManagedKey;
use crate::ocicrypt::keyprovider::KeyProviderConfig;
use crate::ocicrypt::recipients::{DecryptionKeys, KeySource};
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::sync::Arc;

/// Examples for the group.
pub const EXAMPLES: &str = "Examples:
  # Encrypt every layer for an RSA or EC public key (skopeo's --encryption-key jwe:…)
  cryptadm image encrypt --recipient jwe:pub.pem oci:app:v1 oci:app-enc:v1

  # Decrypt with the private key (skopeo's --decryption-key)
  cryptadm image decrypt --key priv.pem oci:app-enc:v1 oci:app:v1

  # May this node run the image? Unwraps the layer keys only; exit 16 when it may not
  cryptadm image authorize --key /etc/containerd/ocicrypt/keys/priv.pem oci:app-enc:v1

  # Registry to registry (credentials from podman login / docker login, or --src-creds/--dest-creds
  # USER)
  cryptadm image encrypt --recipient jwe:pub.pem docker://registry.example.com/app:v1 \\
      docker://registry.example.com/app-enc:v1";

/// Encrypt, decrypt and authorize OCI images (containers/ocicrypt format)
///
/// Layers are encrypted with AES-256-CTR and HMAC-SHA-256; each layer's key is wrapped for its recipients with
/// JWE, PKCS#7, OpenPGP, a Vault Transit or AWS KMS key, or an external key provider, in the annotations skopeo, podman, buildah and containerd
/// imgcrypt read. Images are OCI layouts (oci:DIR[:TAG]), archives of them (oci-archive:FILE[:TAG]) or in registries
/// (docker://HOST[:PORT]/REPO[:TAG|@DIGEST]).
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES, after_long_help = crate::cmd::long_help_footer(EXAMPLES))]
pub struct ImageNamespace {
    #[command(subcommand)]
    command: ImageCommand,
}

/// The image verbs. Encrypt and decrypt carry two registries' flags and are boxed; the size difference left
/// does not matter for a value parsed once per process.
#[derive(Subcommand, Debug)]
#[allow(clippy::large_enum_variant)]
pub enum ImageCommand {
    #[allow(missing_docs)]
    Encrypt(Box<encrypt::EncryptArgs>),
    #[allow(missing_docs)]
    Decrypt(Box<decrypt::DecryptArgs>),
    #[allow(missing_docs)]
    Authorize(authorize::AuthorizeArgs),
    #[allow(missing_docs)]
    Inspect(inspect::InspectArgs),
    #[allow(missing_docs)]
    NodeConfig(node_config::NodeConfigArgs),
    #[allow(missing_docs)]
    StreamDecrypt(stream_decrypt::StreamDecryptArgs),
    #[allow(missing_docs)]
    Keyprovider(keyprovider::KeyProviderArgs),
    #[allow(missing_docs)]
    SealKey(seal_key::SealKeyArgs),
}

/// Runs an image verb.
pub fn run(namespace: ImageNamespace, printer: &Printer) -> anyhow::Result<ExitStatus> {
    match namespace.command {
        ImageCommand::Encrypt(args) => encrypt::run(*args, printer),
        ImageCommand::Decrypt(args) => decrypt::run(*args, printer),
        ImageCommand::Authorize(args) => authorize::run(args, printer),
        ImageCommand::Inspect(args) => inspect::run(args, printer),
        ImageCommand::NodeConfig(args) => node_config::run(args, printer),
        ImageCommand::StreamDecrypt(args) => stream_decrypt::run(args, printer),
        ImageCommand::Keyprovider(args) => keyprovider::run(args, printer),
        ImageCommand::SealKey(args) => seal_key::run(args, printer),
    }
}

/// Which platforms and layers to work on.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Selection")]
pub struct SelectionArgs {
    /// Only this platform's manifest, OS/ARCH[/VARIANT] (repeatable; default: every platform)
    #[arg(long, value_name = "OS/ARCH[/VARIANT]", value_parser = parse_platform)]
    pub platform: Vec<Platform>,
    /// Succeed even when no selected layer is encrypted (or, for encrypt, would be)
    ///
    /// Without it, a selection that leaves nothing encrypted to work on is refused with exit 3 and nothing is
    /// written: encrypt would write a plaintext image, decrypt and authorize would check nothing. A --platform
    /// that matches no manifest is refused either way.
    #[arg(long)]
    pub allow_plaintext: bool,
}

fn parse_platform(text: &str) -> Result<Platform, String> {
    Platform::parse(text).ok_or_else(|| "expected OS/ARCH or OS/ARCH/VARIANT, e.g. linux/arm64/v8".into())
}

/// The help of `image encrypt --recipient`: the key-manager forms come from the backend table.
fn recipient_help() -> String {
    format!(
        "Who may decrypt: jwe:PUBKEY, pkcs7:CERT, pgp:EMAIL-NAME-OR-FINGERPRINT (or a public key file), \
         provider:NAME[:OPTS], or a key-manager key: {}",
        crate::kms::backends::takes(crate::kms::backends::Use::Recipient)
    )
}

/// The help of `--key`: the key-manager forms come from the backend table.
fn key_help() -> String {
    format!(
        "A private key (PEM, DER, JWK; RSA or EC), an OpenPGP secret key, a certificate (PKCS#7), \
         provider:NAME[:OPTS], or a key-manager key: {}",
        crate::kms::backends::takes(crate::kms::backends::Use::Recipient)
    )
}

fn key_long_help() -> String {
    format!(
        "{}\n\nRepeatable; every key is tried on every layer. A password-protected key takes its password from \
         --passphrase-file, CRYPTADM_PASSPHRASE_FILE or CRYPTADM_PASSPHRASE, or a terminal prompt. ocicrypt's \
         FILE:file=PWFILE and FILE:fd=N forms work too; its FILE:PASSWORD is refused (other users can read argv). A \
         Transit key unwraps through Vault or OpenBao, with the Vault settings of the environment (VAULT_ADDR, \
         VAULT_CACERT, VAULT_TOKEN or a login); an AWS KMS key (its key or alias ARN) through KMS Decrypt, with the \
         AWS credential chain (AWS_* variables, the profile files, web identity, the instance profile). A key file \
         sealed to this machine (a clevis JWE of it: `clevis encrypt tpm2|tang|sss`, `cryptadm image seal-key`) is \
         opened through its TPM (--tpm2-device), Tang servers or threshold when a layer needs it, in memory only.",
        key_help()
    )
}

/// Decryption keys, shared by decrypt, authorize, and encrypt (to add recipients to encrypted layers).
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Keys")]
pub struct KeyArgs {
    /// The decryption keys (help: [`key_help`], from the backend table).
    #[arg(long = "key", visible_alias = "decryption-key", value_name = "FILE", help = key_help(),
          long_help = key_long_help())]
    pub keys: Vec<String>,
    /// An X.509 certificate matching a --key, needed for PKCS#7 (a certificate given with --key works too)
    #[arg(long = "cert", visible_alias = "dec-recipient", value_name = "FILE")]
    pub certs: Vec<PathBuf>,
    #[command(flatten)]
    password: super::secrets::PassphraseArgs,
    /// Also use the secret keys of this GnuPG home directory for OpenPGP layers (their passphrase as above)
    #[arg(long = "gpg-homedir", value_name = "DIR")]
    pub key_gpg_homedir: Option<PathBuf>,
    /// The TPM of a sealed --key: a device path or a TCTI string (`device:PATH`, `swtpm:host=H,port=P`,
    /// `mssim:host=H,port=P`); else TPM2TOOLS_TCTI, else /dev/tpmrm0
    #[arg(long, value_name = "DEVICE", env = "CRYPTADM_TPM2_DEVICE")]
    pub tpm2_device: Option<String>,
    #[allow(missing_docs)]
    #[command(flatten)]
    pub vault: super::vault_args::VaultArgs,
    #[allow(missing_docs)]
    #[command(flatten)]
    pub aws: super::aws_args::AwsArgs,
}

impl KeyArgs {
    /// Reads every key (and the passwords of encrypted ones) before any image is touched.
    pub fn resolve(
        &self,
        provider_config: Option<Arc<KeyProviderConfig>>,
        printer: &Printer,
    ) -> anyhow::Result<DecryptionKeys> {
        let mut stdin = super::secrets::StdinClaim::default();
        let password = self.password.read(&mut stdin)?;
        let sources = self.keys.iter().map(|key| key_source(key)).collect::<anyhow::Result<Vec<_>>>()?;
        let gpg_homedir = self.key_gpg_homedir.as_deref();
        let keys =
            DecryptionKeys::resolve(&sources, &self.certs, password.as_ref(), provider_config, gpg_homedir, printer)?;
        let keys = if keys.has_sealed_keys() {
            keys.with_sealed_key_settings(crate::cmd::clevis_args::sealed_key_settings(self.tpm2_device.as_deref())?)
        } else {
            keys
        };
        let managers = keys.key_managers();
        Ok(if managers.is_empty() {
            keys
        } else {
            keys.with_key_managers(self.key_manager_opener(&managers, printer)?)
        })
    }

    /// How the key managers `needed` are reached, with these commands' Vault and AWS settings.
    pub fn key_manager_opener(
        &self,
        needed: &[crate::ocicrypt::key_manager::Manager],
        printer: &Printer,
    ) -> anyhow::Result<crate::ocicrypt::key_manager::Opener> {
        key_managers::opener(&self.vault, &self.aws, needed, printer)
    }
}

/// Parses one `--key`: a file; `provider:NAME[:OPTS]`; or, for compatibility with skopeo and ctr-enc, ocicrypt's
/// `FILE:file=PASSWORD_FILE` and `FILE:fd=N` (its `FILE:PASSWORD` and `FILE:pass=PASSWORD` are refused: argv is
/// readable by every user). As in ocicrypt, a password part is recognised only when the value has exactly one
/// `:` and is not itself an existing file.
fn key_source(key: &str) -> anyhow::Result<KeySource> {
    use anyhow::Context;
    if ManagedKey::is_reference(key) {
        let key = ManagedKey::parse(key).map_err(|e| Failure::new(ExitStatus::Usage, format!("--key: {e}")))?;
        return Ok(KeySource::Managed(key));
    }
    if let Some(provider) = key.strip_prefix("provider:") {
        let (name, options) = match provider.split_once(':') {
            Some((name, options)) => (name.to_owned(), Some(options.to_owned())),
            None => (provider.to_owned(), None),
        };
        return Ok(KeySource::Provider { name, options });
    }
    let parts: Vec<&str> = key.split(':').collect();
    if std::path::Path::new(key).exists() || parts.len() != 2 {
        return Ok(KeySource::File { path: key.into(), password: None });
    }
    let (path, secret) = (parts[0], parts[1]);
    let password = if let Some(file) = secret.strip_prefix("file=") {
        crate::crypto::secret::read_secret(
            std::fs::File::open(file).with_context(|| format!("reading the password file `{file}`"))?,
            4096,
        )
        .with_context(|| format!("reading the password file `{file}`"))?
    } else if let Some(fd) = secret.strip_prefix("fd=") {
        let fd: u32 = fd.parse().map_err(|_| {
            Failure::new(ExitStatus::Usage, format!("--key `{path}:fd=…`: not a file descriptor number"))
        })?;
        // /dev/fd/N opens the inherited descriptor without unsafe code; ocicrypt reads at most 64 bytes.
        crate::crypto::secret::read_secret(
            std::fs::File::open(format!("/dev/fd/{fd}"))
                .with_context(|| format!("reading the password from descriptor {fd}"))?,
            64,
        )
        .with_context(|| format!("reading the password from descriptor {fd}"))?
    } else {
        // ocicrypt's `FILE:PASSWORD` and `FILE:pass=PASSWORD` put the password in argv, where every user of the
        // machine can read it (/proc/PID/cmdline): refused, as `--src-creds USER:PASSWORD` is. The password is
        // never repeated in the message.
        return Err(Failure::new(
            ExitStatus::Usage,
            format!("--key `{path}:…`: a password on the command line is refused (other users can read it)"),
        )
        .with_hint(format!(
            "give it as `{path}:file=PASSWORD_FILE` or `{path}:fd=N`, or with --passphrase-file FILE or \
             CRYPTADM_PASSPHRASE"
        ))
        .into());
    };
    Ok(KeySource::File { path: path.into(), password: Some(crate::crypto::Passphrase::new(password)) })
}

/// The key-provider configuration named by OCICRYPT_KEYPROVIDER_CONFIG, if any (ocicrypt's convention; a
/// missing file means no providers, as in ocicrypt).
pub fn provider_config() -> anyhow::Result<Option<Arc<KeyProviderConfig>>> {
    let Some(path) = crate::cmd::env_vars::var_os(super::env_vars::OCICRYPT_KEYPROVIDER_CONFIG) else {
        return Ok(None);
    };
    let config = KeyProviderConfig::load(std::path::Path::new(&path))?;
    Ok(config.map(|config| Arc::new(KeyProviderConfig { search_dirs: crate::cmd::env_vars::path_dirs(), ..config })))
}

/// Opens a source image; `registry` gives access when it is in a registry.
pub fn open_source(
    reference: &ImageReference,
    registry: &registry::RegistryFlags<'_>,
    printer: &Printer,
) -> anyhow::Result<Box<dyn ImageSource>> {
    open_source_jobs(reference, registry, printer, DEFAULT_JOBS)
}

/// [`open_source`] for a run that moves up to `jobs` layers at once: a large blob in a registry is fetched as
/// several ranges at once, unless `jobs` is 1 (one connection at a time).
pub fn open_source_jobs(
    reference: &ImageReference,
    registry: &registry::RegistryFlags<'_>,
    printer: &Printer,
    jobs: usize,
) -> anyhow::Result<Box<dyn ImageSource>> {
    let ranges = if jobs == 1 { 1 } else { oci::registry::RANGES_PER_BLOB };
    Ok(match reference {
        ImageReference::Layout { path, tag } => Box::new(oci::LayoutSource::open(path, tag.as_deref())?),
        ImageReference::Archive { path, tag } => Box::new(oci::open_archive_source(path, tag.as_deref())?),
        ImageReference::Registry(location) => {
            let options = registry.options(&location.registry, printer)?;
            Box::new(oci::registry::RegistrySource::open(location, &options)?.with_ranges(ranges))
        }
    })
}

/// Prepares a destination; without a tag it takes the source's.
pub fn open_destination(
    reference: &ImageReference,
    source: &ImageReference,
    registry: &registry::RegistryFlags<'_>,
    printer: &Printer,
) -> anyhow::Result<Box<dyn ImageDestination>> {
    destination(reference, source, registry, printer, false)
}

/// [`open_destination`] for plaintext layers: a local layout is kept from other users (0700 directory, 0600
/// blobs).
pub fn open_plaintext_destination(
    reference: &ImageReference,
    source: &ImageReference,
    registry: &registry::RegistryFlags<'_>,
    printer: &Printer,
) -> anyhow::Result<Box<dyn ImageDestination>> {
    destination(reference, source, registry, printer, true)
}

fn destination(
    reference: &ImageReference,
    source: &ImageReference,
    registry: &registry::RegistryFlags<'_>,
    printer: &Printer,
    plaintext: bool,
) -> anyhow::Result<Box<dyn ImageDestination>> {
    let tag = reference.tag().or(source.tag());
    refuse_same_image(source, reference, tag)?;
    Ok(match reference {
        ImageReference::Layout { path, .. } => {
            let layout = oci::LayoutDestination::create(path, tag)?;
            Box::new(if plaintext { layout.private()? } else { layout })
        }
        ImageReference::Archive { path, .. } => Box::new(oci::ArchiveDestination::create(path, tag)?),
        ImageReference::Registry(location) => {
            let options = registry.options(&location.registry, printer)?;
            let mount_from = match source {
                ImageReference::Registry(source) => Some(source),
                _ => None,
            };
            // One line per blob in logs; on a terminal the progress bars say it.
            let log: oci::registry::Log = if printer.shows_progress() {
                let printer = printer.clone();
                Box::new(move |line: &str| printer.debug(line))
            } else {
                let printer = printer.clone();
                Box::new(move |line: &str| printer.info(line))
            };
            Box::new(oci::registry::RegistryDestination::open(location, tag, &options, mount_from, log)?)
        }
    })
}

/// Parses an image reference argument.
pub fn parse_reference(text: &str) -> Result<ImageReference, String> {
    ImageReference::parse(text).map_err(|e| e.to_string())
}

/// Layers moved at once, as containers/image (skopeo, podman) does by default.
pub const DEFAULT_JOBS: usize = 6;

/// How many layers move at once (encrypt, decrypt).
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Registries")]
pub struct JobsArgs {
    /// Move up to N layers at once (downloads, cipher and uploads of different layers overlap; memory grows with
    /// N, not with layer sizes); a layer of 4 MiB or more is downloaded as up to 4 ranges at once, so up to 4×N
    /// connections; 1 moves the layers one after the other, each over one connection
    #[arg(long, value_name = "N", default_value_t = DEFAULT_JOBS,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=64))]
    pub jobs: usize,
}

/// Builds the core selection.
pub fn selection(platforms: &SelectionArgs, layers: &[i64]) -> Selection {
    Selection {
        platforms: platforms.platform.clone(),
        layers: layers.to_vec(),
        allow_plaintext: platforms.allow_plaintext,
    }
}

/// Refuses a destination that is the source image: writing it would replace the image being read (the tag would
/// move to the result). Layout directories and archives are compared by device and inode, registries by name.
fn refuse_same_image(source: &ImageReference, destination: &ImageReference, tag: Option<&str>) -> anyhow::Result<()> {
    let same = match (source, destination) {
        (ImageReference::Layout { path: a, .. }, ImageReference::Layout { path: b, .. }) => {
            anyhow::Context::context(crate::atomic::same_file(a, b), "comparing the source and destination layouts")?
                && source.tag() == tag
        }
        (ImageReference::Archive { path: a, .. }, ImageReference::Archive { path: b, .. }) => {
            anyhow::Context::context(crate::atomic::same_file(a, b), "comparing the source and destination archives")?
        }
        (ImageReference::Registry(a), ImageReference::Registry(b)) => {
            a.registry == b.registry && a.repository == b.repository && a.digest.is_none() && a.tag.as_deref() == tag
        }
        _ => false,
    };
    if same {
        return Err(Failure::new(
            ExitStatus::Usage,
            format!("the destination `{destination}` is the source image; writing it would replace what is being read"),
        )
        .with_hint("give the destination another tag (e.g. `oci:DIR:v1-enc`) or another place")
        .into());
    }
    Ok(())
}
