//! `cryptadm image`: OCI image layer encryption, wire-compatible with containers/ocicrypt.

pub mod authorize;
pub mod decrypt;
pub mod encrypt;

use super::printer::Printer;
use crate::exit::{ExitStatus, Failure};
use crate::oci::{self, ImageDestination, ImageReference, ImageSource, Platform};
use crate::ocicrypt::image::Selection;
use crate::ocicrypt::keyprovider::KeyProviderConfig;
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
  cryptadm image authorize --key /etc/containerd/ocicrypt/keys/priv.pem oci:app-enc:v1";

/// Encrypt, decrypt and authorize OCI images (containers/ocicrypt format)
///
/// Layers are encrypted with AES-256-CTR and HMAC-SHA-256; each layer's key is wrapped for its recipients with
/// JWE, PKCS#7, OpenPGP or an external key provider, in the annotations skopeo, podman, buildah and containerd
/// imgcrypt read. Images are OCI layouts (oci:DIR[:TAG]) or archives of them (oci-archive:FILE[:TAG]).
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES, after_long_help = crate::cmd::long_help_footer(EXAMPLES))]
pub struct ImageNamespace {
    #[command(subcommand)]
    command: ImageCommand,
}

/// The image verbs.
#[derive(Subcommand, Debug)]
pub enum ImageCommand {
    #[allow(missing_docs)]
    Encrypt(encrypt::EncryptArgs),
    #[allow(missing_docs)]
    Decrypt(decrypt::DecryptArgs),
    #[allow(missing_docs)]
    Authorize(authorize::AuthorizeArgs),
}

/// Runs an image verb.
pub fn run(namespace: ImageNamespace, printer: &Printer) -> anyhow::Result<ExitStatus> {
    match namespace.command {
        ImageCommand::Encrypt(args) => encrypt::run(args, printer),
        ImageCommand::Decrypt(args) => decrypt::run(args, printer),
        ImageCommand::Authorize(args) => authorize::run(args, printer),
    }
}

/// Which platforms and layers to work on.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Selection")]
pub struct SelectionArgs {
    /// Only this platform's manifest, OS/ARCH[/VARIANT] (repeatable; default: every platform)
    #[arg(long, value_name = "OS/ARCH[/VARIANT]", value_parser = parse_platform)]
    pub platform: Vec<Platform>,
}

fn parse_platform(text: &str) -> Result<Platform, String> {
    Platform::parse(text).ok_or_else(|| "expected OS/ARCH or OS/ARCH/VARIANT, e.g. linux/arm64/v8".into())
}

/// Decryption keys, shared by decrypt, authorize, and encrypt (to add recipients to encrypted layers).
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Keys")]
pub struct KeyArgs {
    /// A private key (PEM, DER, JWK; RSA or EC), an OpenPGP secret key, a certificate (PKCS#7), or provider:NAME[:OPTS]
    ///
    /// Repeatable; every key is tried on every layer. ocicrypt's FILE:PASSWORD form is refused: a password on
    /// the command line is visible to every user; give it with --passphrase-file or CRYPTADM_PASSPHRASE.
    #[arg(long = "key", visible_alias = "decryption-key", value_name = "FILE")]
    pub keys: Vec<String>,
    /// An X.509 certificate matching a --key, needed for PKCS#7 (a certificate given with --key works too)
    #[arg(long = "cert", visible_alias = "dec-recipient", value_name = "FILE")]
    pub certs: Vec<PathBuf>,
    #[command(flatten)]
    password: super::secrets::PassphraseArgs,
}

impl KeyArgs {
    /// Reads every key (and the password for encrypted ones) before any image is touched.
    pub fn resolve(
        &self,
        provider_config: Option<Arc<KeyProviderConfig>>,
    ) -> anyhow::Result<crate::ocicrypt::recipients::DecryptionKeys> {
        for key in &self.keys {
            if !key.starts_with("provider:") && key.contains(':') && !std::path::Path::new(key).exists() {
                return Err(Failure::new(
                    ExitStatus::Usage,
                    format!(
                        "--key `{}:…`: passwords are not taken from the command line",
                        key.split(':').next().unwrap_or_default()
                    ),
                )
                .with_hint(
                    "give the key file alone, and its password with --passphrase-file FILE or CRYPTADM_PASSPHRASE",
                )
                .into());
            }
        }
        let mut stdin = super::secrets::StdinClaim::default();
        let password = self.password.read(&mut stdin)?;
        Ok(crate::ocicrypt::recipients::DecryptionKeys::resolve(
            &self.keys,
            &self.certs,
            password.as_ref(),
            provider_config,
        )?)
    }
}

/// The key-provider configuration named by OCICRYPT_KEYPROVIDER_CONFIG, if any (ocicrypt's convention; a
/// missing file means no providers, as in ocicrypt).
pub fn provider_config() -> anyhow::Result<Option<Arc<KeyProviderConfig>>> {
    let Some(path) = std::env::var_os(super::env_vars::OCICRYPT_KEYPROVIDER_CONFIG) else { return Ok(None) };
    Ok(KeyProviderConfig::load(std::path::Path::new(&path))?.map(Arc::new))
}

/// Opens a source image.
pub fn open_source(reference: &ImageReference) -> anyhow::Result<Box<dyn ImageSource>> {
    Ok(match reference {
        ImageReference::Layout { path, tag } => Box::new(oci::LayoutSource::open(path, tag.as_deref())?),
        ImageReference::Archive { path, tag } => Box::new(oci::open_archive_source(path, tag.as_deref())?),
    })
}

/// Prepares a destination; without a tag it takes the source's.
pub fn open_destination(
    reference: &ImageReference,
    source: &ImageReference,
) -> anyhow::Result<Box<dyn ImageDestination>> {
    let tag = reference.tag().or(source.tag());
    Ok(match reference {
        ImageReference::Layout { path, .. } => Box::new(oci::LayoutDestination::create(path, tag)?),
        ImageReference::Archive { path, .. } => Box::new(oci::ArchiveDestination::create(path, tag)?),
    })
}

/// Parses an image reference argument.
pub fn parse_reference(text: &str) -> Result<ImageReference, String> {
    ImageReference::parse(text).map_err(|e| e.to_string())
}

/// Builds the core selection.
pub fn selection(platforms: &SelectionArgs, layers: &[i64]) -> Selection {
    Selection { platforms: platforms.platform.clone(), layers: layers.to_vec() }
}
