//! `cryptadm disk`: LUKS2 and LUKS1 disk images and block devices (format, inspect, decrypt), qcow2 images and
//! conversions between them.

pub mod clevis_bind;
pub mod convert;
pub mod decrypt;
pub mod inspect;
pub mod luks_format;

use super::printer::Printer;
use super::secrets::{NO_SOURCE_HINT, PassphraseArgs, StdinClaim, is_stdin};
use crate::cmd::error::Failure;
use crate::crypto::Passphrase;
use crate::exit::ExitStatus;
use crate::interact::Interaction;
use crate::qcow2::{Container, secret::SecretType};
use anyhow::Context;
use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Examples for the group.
pub const EXAMPLES: &str = "Examples:
  # A 10 GiB LUKS2 image with cryptsetup's defaults (argon2id, aes-xts-plain64, 512-bit key)
  cryptadm disk luks-format --key-file key.bin --size 10G disk.img

  # Encrypt a raw disk image for OpenStack (LUKS1, which QEMU reads) and print its Glance properties
  cryptadm disk luks-format --glance --key-id 3f1c…-uuid --passphrase-file pass.txt \\
      --from raw.img enc.img

  # What is in a LUKS header (like cryptsetup luksDump, as YAML)
  cryptadm disk inspect enc.img

  # Back to the raw image
  cryptadm disk decrypt --passphrase-file pass.txt enc.img --out raw.img

  # qcow2 with LUKS inside, as QEMU and Nova use it; then a snapshot-style copy under a new key
  cryptadm disk luks-format --format qcow2 --passphrase-file pass.txt --from raw.img disk.qcow2
  cryptadm disk convert --encryption-key new --new-key-file new.txt \\
      --key-file pass.txt disk.qcow2 snap.qcow2";

/// Format, inspect and decrypt LUKS2 and LUKS1 disk images and block devices
///
/// Headers are written in pure Rust with cryptsetup 2.6's defaults and checked against cryptsetup and QEMU:
/// LUKS2 for Linux hosts, LUKS1 for images QEMU, Nova and Glance read.
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES, after_long_help = crate::cmd::long_help_footer(EXAMPLES))]
pub struct DiskNamespace {
    #[command(subcommand)]
    command: DiskCommand,
}

/// The disk verbs.
#[derive(Subcommand, Debug)]
pub enum DiskCommand {
    #[allow(missing_docs)]
    LuksFormat(luks_format::LuksFormatArgs),
    #[allow(missing_docs)]
    Inspect(inspect::InspectArgs),
    #[allow(missing_docs)]
    Decrypt(decrypt::DecryptArgs),
    #[allow(missing_docs)]
    Convert(convert::ConvertArgs),
    #[allow(missing_docs)]
    ClevisBind(clevis_bind::ClevisBindArgs),
}

/// Runs a disk verb.
pub fn run(namespace: DiskNamespace, printer: &Printer) -> anyhow::Result<ExitStatus> {
    match namespace.command {
        DiskCommand::LuksFormat(args) => luks_format::run(args, printer),
        DiskCommand::Inspect(args) => inspect::run(args, printer),
        DiskCommand::Decrypt(args) => decrypt::run(args, printer),
        DiskCommand::Convert(args) => convert::run(args, printer),
        DiskCommand::ClevisBind(args) => clevis_bind::run(args, printer),
    }
}

/// The passphrase: `--key-file` (cryptsetup's name) or the usual passphrase sources.
#[derive(Args, Debug, Clone, Default)]
pub struct LuksPassphraseArgs {
    #[command(flatten)]
    passphrase: PassphraseArgs,
    /// Read the passphrase from FILE (`-`: standard input), the whole file byte for byte, as cryptsetup does
    #[arg(long, value_name = "FILE", help_heading = "Passphrase", conflicts_with = "passphrase_file")]
    key_file: Option<PathBuf>,
}

/// cryptsetup's limit on key files (8192 KiB).
const MAX_KEY_FILE: usize = 8192 * 1024;

impl LuksPassphraseArgs {
    /// The `--key-file` path, if given (named in printed `openstack secret store` lines).
    pub fn key_file(&self) -> Option<&std::path::Path> {
        self.key_file.as_deref().or(self.passphrase.passphrase_file.as_deref())
    }

    /// Reads the passphrase; on a terminal with no other source, prompts (twice when `confirm`).
    pub fn resolve(&self, printer: &Printer, confirm: bool) -> anyhow::Result<Passphrase> {
        let mut stdin = StdinClaim::default();
        if let Some(path) = &self.key_file {
            let bytes = if is_stdin(path) {
                stdin.claim("--key-file")?;
                crate::crypto::secret::read_secret(std::io::stdin().lock(), MAX_KEY_FILE)
            } else {
                std::fs::File::open(path).and_then(|f| crate::crypto::secret::read_secret(f, MAX_KEY_FILE))
            }
            .with_context(|| format!("reading the key file `{}`", path.display()))?;
            if bytes.is_empty() {
                return Err(Failure::new(
                    ExitStatus::InvalidInput,
                    format!("the key file `{}` is empty", path.display()),
                )
                .into());
            }
            return Ok(Passphrase::new(bytes));
        }
        if let Some(passphrase) = self.passphrase.read(&mut stdin)? {
            return Ok(passphrase);
        }
        match printer.request_passphrase("Passphrase", confirm).context("reading the passphrase from the terminal")? {
            Some(passphrase) => Ok(passphrase),
            None => Err(Failure::new(ExitStatus::Usage, "no passphrase source, and no terminal to ask on")
                .with_hint(format!("give --key-file FILE, or {NO_SOURCE_HINT}"))
                .into()),
        }
    }
}

/// Prints the warnings the pipeline found about a source (damaged or stale LUKS2 header copies).
pub fn warn_all(warnings: &[String], printer: &Printer) {
    for warning in warnings {
        printer.warn(warning);
    }
}

/// Containers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// A raw disk image (raw LUKS when encrypted)
    Raw,
    /// qcow2 version 3 (LUKS inside when encrypted)
    Qcow2,
}

impl From<FormatArg> for Container {
    fn from(arg: FormatArg) -> Self {
        match arg {
            FormatArg::Raw => Container::Raw,
            FormatArg::Qcow2 => Container::Qcow2,
        }
    }
}

/// Secret types.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum SecretTypeArg {
    /// Barbican `passphrase`: the file's bytes are the passphrase (Nova)
    #[default]
    Passphrase,
    /// Barbican `symmetric`: the file holds raw key bytes; the passphrase is their lowercase hex (os-brick)
    Symmetric,
}

impl From<SecretTypeArg> for SecretType {
    fn from(arg: SecretTypeArg) -> Self {
        match arg {
            SecretTypeArg::Passphrase => SecretType::Passphrase,
            SecretTypeArg::Symmetric => SecretType::Symmetric,
        }
    }
}

/// What happens to the key manager secret when the image is deleted (the old spelling of
/// `--delete-key-with-image`, still accepted).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DeletionPolicy {
    /// Glance deletes the secret with the image
    #[value(name = "on_image_deletion")]
    OnImageDeletion,
    /// The secret outlives the image
    #[value(name = "do_not_delete")]
    DoNotDelete,
}

/// An output's secret kept in the key manager.
pub struct KeyManagerSecret {
    /// Its UUID (os_encrypt_key_id).
    pub uuid: String,
    /// How it becomes the passphrase.
    pub secret_type: SecretType,
    /// Its bytes.
    pub bytes: zeroize::Zeroizing<Vec<u8>>,
    /// Whether this run stored it.
    pub ours: bool,
}

impl KeyManagerSecret {
    /// The LUKS passphrase the consuming service derives from it.
    pub fn passphrase(&self) -> zeroize::Zeroizing<Vec<u8>> {
        self.secret_type.passphrase(&self.bytes)
    }

    /// The Glance document's facts: type, no file, length.
    pub fn facts(&self) -> (SecretType, Option<&'static std::path::Path>, usize) {
        (self.secret_type, None, self.bytes.len())
    }
}

/// `--glance` and its companions, the same for `luks-format` and `convert`.
#[derive(Args, Debug, Clone)]
pub struct GlanceArgs {
    /// Print the output's Glance properties, the `openstack image create` line and, when encrypted, the
    /// `openstack secret store` line for its secret
    #[arg(long, help_heading = "OpenStack")]
    pub glance: bool,
    /// The key manager (Barbican) secret that holds the output's secret: os_encrypt_key_id
    #[arg(long, value_name = "UUID", requires = "glance", help_heading = "OpenStack")]
    pub key_id: Option<String>,
    /// Delete the secret with the image (os_encrypt_key_deletion_policy=True; default False: the secret
    /// outlives the image)
    #[arg(long, help_heading = "OpenStack")]
    pub delete_key_with_image: bool,
    /// Old spelling of --delete-key-with-image: on_image_deletion or do_not_delete
    #[arg(long, value_enum, value_name = "P", hide = true, conflicts_with = "delete_key_with_image")]
    pub key_deletion_policy: Option<DeletionPolicy>,
    /// Format of the printed Glance properties
    #[arg(long, value_enum, default_value_t, value_name = "FORMAT", requires = "glance", help_heading = "OpenStack")]
    pub output_format: crate::cmd::OutputFormatArg,
    #[command(flatten)]
    pub(crate) cloud: crate::cmd::openstack_args::KeyManagerArgs,
}

impl GlanceArgs {
    /// Whether Glance deletes the secret with the image.
    pub fn delete_key(&self) -> bool {
        self.delete_key_with_image || self.key_deletion_policy == Some(DeletionPolicy::OnImageDeletion)
    }

    /// Whether the output is for OpenStack (LUKS1, a text passphrase): --glance, --key-manager or --upload.
    pub fn openstack(&self) -> bool {
        self.glance || self.cloud.used()
    }

    /// With --key-manager, the output's secret: the one --secret names (its type decides the passphrase), or a
    /// new one of `secret_type` generated as the consuming service would and stored as `NAME-key` (NAME: the
    /// --upload name, else `file`'s stem) before anything is written.
    pub fn key_manager_secret(
        &self,
        cloud: Option<&crate::cmd::openstack_args::CloudRun>,
        secret_type: SecretType,
        file: &std::path::Path,
        printer: &Printer,
    ) -> anyhow::Result<Option<KeyManagerSecret>> {
        let Some(cloud) = cloud.filter(|_| self.cloud.key_manager.is_some()) else { return Ok(None) };
        if let Some(id) = &self.cloud.secret {
            let fetched = cloud.fetch(id)?;
            if fetched.secret_type != secret_type {
                printer.info(&format!(
                    "secret {} is a {} secret: its passphrase is {}",
                    fetched.uuid,
                    fetched.secret_type.name(),
                    if fetched.secret_type == SecretType::Symmetric {
                        "the lowercase hex of its bytes"
                    } else {
                        "its bytes"
                    }
                ));
            }
            return Ok(Some(KeyManagerSecret {
                uuid: fetched.uuid,
                secret_type: fetched.secret_type,
                bytes: zeroize::Zeroizing::new(fetched.payload.to_vec()),
                ours: false,
            }));
        }
        let name = self.cloud.upload.clone().unwrap_or_else(|| {
            file.file_stem().map_or_else(|| "image".to_owned(), |s| s.to_string_lossy().into_owned())
        });
        let bytes = secret_type.generate();
        let uuid = cloud.store(&format!("{name}-key"), secret_type, &bytes)?;
        printer.info(&format!("stored a new {} secret in Barbican: {uuid}", secret_type.name()));
        Ok(Some(KeyManagerSecret { uuid, secret_type, bytes, ours: true }))
    }

    /// Checks --key-id, the deletion policy and, for an `encrypted` output, that an upload can name its secret,
    /// before anything is written or any server contacted.
    pub fn check(&self, encrypted: bool) -> anyhow::Result<()> {
        // Glance's image would name no secret: nothing could open it. Said before a login and before the image
        // is written (finish() says it again, should a path reach it).
        if encrypted && self.cloud.upload.is_some() && self.cloud.key_manager.is_none() && self.key_id.is_none() {
            return Err(Failure::new(ExitStatus::Usage, "--upload of an encrypted image needs its secret's id")
                .with_hint("give --key-manager barbican (or --glance --key-id UUID)")
                .into());
        }
        // The policy is a property of the Glance image: printed with --glance, or set on the uploaded image.
        if self.delete_key() && !self.glance && self.cloud.upload.is_none() {
            return Err(Failure::new(
                ExitStatus::Usage,
                "--delete-key-with-image sets a Glance image property: it needs --glance or --upload",
            )
            .into());
        }
        if self.key_id.is_some() && self.cloud.key_manager.is_some() {
            return Err(Failure::new(
                ExitStatus::Usage,
                "--key-id and --key-manager both name the secret: the key manager's secret is os_encrypt_key_id",
            )
            .into());
        }
        if self.key_id.as_deref().is_some_and(|id| !crate::luks::format::is_uuid(id)) {
            return Err(Failure::new(
                ExitStatus::InvalidInput,
                "--key-id is not a UUID (Barbican secret ids are 8-4-4-4-12 hex digits)",
            )
            .into());
        }
        Ok(())
    }

    /// Prints the image's Glance document (one renderer for every command): `secret` is the output's secret
    /// (type, the file that holds it, its length), None for a plain image.
    pub fn print(
        &self,
        file: &std::path::Path,
        container: Container,
        size: u64,
        secret: Option<(SecretType, Option<&std::path::Path>, usize)>,
        printer: &Printer,
    ) -> anyhow::Result<()> {
        self.print_with(file, container, size, secret, self.key_id.as_deref(), printer)
    }

    /// The end of an OpenStack run: prints the Glance document (--glance) and uploads the image (--upload), with
    /// `key_id` the key manager's secret (or --key-id); `cloud` is kept (everything in place) or undone.
    #[allow(clippy::too_many_arguments)]
    pub fn finish(
        &self,
        cloud: Option<crate::cmd::openstack_args::CloudRun>,
        file: &std::path::Path,
        container: Container,
        size: u64,
        secret: Option<(SecretType, Option<&std::path::Path>, usize)>,
        key_id: Option<&str>,
        printer: &Printer,
    ) -> anyhow::Result<()> {
        let key_id = key_id.or(self.key_id.as_deref());
        if self.glance {
            self.print_with(file, container, size, secret, key_id, printer)?;
        }
        let Some(cloud) = cloud else { return Ok(()) };
        let Some(name) = &self.cloud.upload else {
            if let Some(id) = key_id {
                printer.info(&format!("the image's secret is Barbican secret {id} (os_encrypt_key_id)"));
            }
            cloud.finish();
            return Ok(());
        };
        if secret.is_some() && key_id.is_none() {
            return Err(Failure::new(ExitStatus::Usage, "--upload of an encrypted image needs its secret's id")
                .with_hint("give --key-manager barbican (or --glance --key-id UUID)")
                .into());
        }
        let facts = self.encryption_facts(secret, key_id);
        let doc = crate::render::openstack::image_document(file, container.name(), size, facts.as_ref());
        let properties: std::collections::BTreeMap<String, String> =
            doc.properties.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect();
        match cloud.upload(name, container.name(), &properties, file, key_id.filter(|_| secret.is_some()), printer) {
            Ok(id) => {
                cloud.finish();
                printer.info(&format!(
                    "uploaded `{}` to Glance as image {id} (`{name}`){}",
                    file.display(),
                    key_id.map(|k| format!(", its secret Barbican secret {k}")).unwrap_or_default()
                ));
                if !self.glance {
                    printer.data(format!("{id}\n").as_bytes()).context("writing to standard output")?;
                }
                Ok(())
            }
            Err(e) => {
                cloud.abandon(printer);
                Err(e.context(format!("uploading `{}` to Glance", file.display())))
            }
        }
    }

    /// What the Glance document says about the image's encryption, for an encrypted image.
    fn encryption_facts<'a>(
        &self,
        secret: Option<(SecretType, Option<&'a std::path::Path>, usize)>,
        key_id: Option<&'a str>,
    ) -> Option<crate::render::openstack::EncryptionFacts<'a>> {
        secret.map(|(secret_type, secret_file, secret_len)| crate::render::openstack::EncryptionFacts {
            secret_type,
            secret_file,
            secret_len,
            key_id,
            delete_key: self.delete_key(),
        })
    }

    fn print_with(
        &self,
        file: &std::path::Path,
        container: Container,
        size: u64,
        secret: Option<(SecretType, Option<&std::path::Path>, usize)>,
        key_id: Option<&str>,
        printer: &Printer,
    ) -> anyhow::Result<()> {
        let facts = self.encryption_facts(secret, key_id);
        if secret.is_some() && key_id.is_none() {
            printer.warn("no --key-id: store the secret in the key manager, then set os_encrypt_key_id to its UUID");
        }
        let doc = crate::render::openstack::image_document(file, container.name(), size, facts.as_ref());
        let text = crate::render::documents(self.output_format.into(), [doc])?;
        printer.data(text.as_bytes()).context("writing to standard output")?;
        Ok(())
    }
}

/// Parses `16M`, `10G`, `4096`.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let (digits, shift) = match text.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let shift = match c.to_ascii_uppercase() {
                'K' => 10,
                'M' => 20,
                'G' => 30,
                'T' => 40,
                _ => return Err(format!("unknown size suffix `{c}` (K, M, G or T)")),
            };
            (&text[..i], shift)
        }
        _ => (text, 0),
    };
    let n: u64 = digits.parse().map_err(|_| format!("`{text}` is not a size, e.g. 512M or 10G"))?;
    n.checked_shl(shift).filter(|v| v >> shift == n).ok_or_else(|| format!("`{text}` is too large"))
}

/// Parses a cluster size (`65536`, `64K`, `2M`) into its log2.
pub fn parse_cluster_size(text: &str) -> Result<u32, String> {
    let bytes = parse_size(text)?;
    if !bytes.is_power_of_two() || !(512..=2 << 20).contains(&bytes) {
        return Err(format!("`{text}` is not a power of two from 512 to 2M"));
    }
    Ok(bytes.trailing_zeros())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("16M"), Ok(16 << 20));
        assert_eq!(parse_size("2g"), Ok(2 << 30));
        assert!(parse_size("1X").is_err());
        assert!(parse_size("M").is_err());
        assert!(parse_size("99999999999T").is_err());
    }
}
