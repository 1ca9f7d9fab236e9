//! `cryptadm disk`: LUKS2 and LUKS1 disk images and block devices (format, inspect, decrypt), qcow2 images and
//! conversions between them.

pub mod clevis_bind;
pub mod convert;
pub mod decrypt;
pub mod inspect;
pub mod luks_format;
pub mod tpm2_enroll;

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
    #[allow(missing_docs)]
    #[command(name = "tpm2-enroll")]
    Tpm2Enroll(tpm2_enroll::Tpm2EnrollArgs),
}

/// Runs a disk verb.
pub fn run(namespace: DiskNamespace, printer: &Printer) -> anyhow::Result<ExitStatus> {
    match namespace.command {
        DiskCommand::LuksFormat(args) => luks_format::run(args, printer),
        DiskCommand::Inspect(args) => inspect::run(args, printer),
        DiskCommand::Decrypt(args) => decrypt::run(args, printer),
        DiskCommand::Convert(args) => convert::run(args, printer),
        DiskCommand::ClevisBind(args) => clevis_bind::run(args, printer),
        DiskCommand::Tpm2Enroll(args) => tpm2_enroll::run(args, printer),
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
    /// Whether --key-file was given (not --passphrase-file, which its environment variable may set for every
    /// command).
    pub fn key_file_given(&self) -> bool {
        self.key_file.is_some()
    }

    /// The `--key-file` path, if given (named in printed `openstack secret store` lines).
    pub fn key_file(&self) -> Option<&std::path::Path> {
        self.key_file.as_deref().or(self.passphrase.passphrase_file.as_deref())
    }

    /// Reads the passphrase; on a terminal with no other source, prompts (twice when `confirm`).
    pub fn resolve(&self, printer: &Printer, confirm: bool) -> anyhow::Result<Passphrase> {
        self.resolve_as(printer, confirm, "Passphrase", || {
            Failure::new(ExitStatus::Usage, "no passphrase source, and no terminal to ask on")
                .with_hint(format!("give --key-file FILE, or {NO_SOURCE_HINT}"))
        })
    }

    /// The PIN of a TPM2 enrolment made with one (`--tpm2-with-pin`), read as a passphrase is: --key-file,
    /// --passphrase-file, or asked on a terminal. `target` is named when none is given.
    pub fn resolve_tpm2_pin(&self, printer: &Printer, target: &std::path::Path) -> anyhow::Result<Passphrase> {
        self.resolve_as(printer, false, "TPM2 PIN", || {
            Failure::new(
                ExitStatus::Usage,
                format!(
                    "the TPM2 enrolment of `{}` was made with a PIN (--tpm2-with-pin), and no PIN was given",
                    target.display()
                ),
            )
            .with_hint(
                "give the PIN as a passphrase is given: --key-file FILE or --passphrase-file FILE (`-`: standard \
                 input), or run on a terminal to be asked for it",
            )
        })
    }

    fn resolve_as(
        &self,
        printer: &Printer,
        confirm: bool,
        prompt: &str,
        missing: impl FnOnce() -> Failure,
    ) -> anyhow::Result<Passphrase> {
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
            crate::redact::hold(&bytes);
            return Ok(Passphrase::new(bytes));
        }
        if let Some(passphrase) = self.passphrase.read(&mut stdin)? {
            return Ok(passphrase);
        }
        match printer.request_passphrase(prompt, confirm).context("reading the passphrase from the terminal")? {
            Some(passphrase) => Ok(passphrase),
            None => Err(missing().into()),
        }
    }
}

/// In builds with the `fault-injection` feature, aborts the process at the step of the header write
/// ([`crate::luks::WriteStep`]) that CRYPTADM_FAULT_POINT names, as a crash there would (`disk tpm2-enroll`,
/// `disk clevis-bind`); other builds: nothing.
fn crash_points(volume: &mut crate::luks::Volume) {
    #[cfg(feature = "fault-injection")]
    if let Some(point) =
        super::env_vars::var_os(super::env_vars::CRYPTADM_FAULT_POINT).and_then(|v| v.into_string().ok())
    {
        volume.observe_writes(move |step| {
            if step.name() == point {
                std::process::abort();
            }
        });
    }
    #[cfg(not(feature = "fault-injection"))]
    let _ = volume;
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
    /// Format of the printed Glance properties (--glance), or of the ids printed with --key-manager or --upload
    /// (json: `{"image_id", "secret_id"}`; else one id a line)
    #[arg(long, value_enum, default_value_t, value_name = "FORMAT", help_heading = "OpenStack")]
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

    /// With --key-manager, the output's secret: the one --secret names (its Barbican type decides the passphrase;
    /// an explicit `--secret-type` that contradicts it is refused), or a new one of `explicit_type` (default
    /// passphrase) generated as the consuming service would and stored as `NAME-key` (NAME: the --upload name,
    /// else `file`'s stem) before anything is written.
    pub fn key_manager_secret(
        &self,
        cloud: Option<&crate::cmd::openstack_args::CloudRun>,
        explicit_type: Option<SecretType>,
        file: &std::path::Path,
        printer: &Printer,
    ) -> anyhow::Result<Option<KeyManagerSecret>> {
        let Some(cloud) = cloud.filter(|_| self.cloud.key_manager.is_some()) else { return Ok(None) };
        if let Some(id) = &self.cloud.secret {
            let secret = fetch_secret(cloud, id, explicit_type, printer)?;
            // Shared with the images that already use it: refused if one of them deletes it with itself.
            cloud.refuse_shared_if_deleted(
                &secret.uuid,
                "sharing it",
                "let this run store the image's own secret (--key-manager barbican without --secret), or make that                  image keep the secret (`openstack image set --property os_encrypt_key_deletion_policy=False ID`)",
            )?;
            return Ok(Some(secret));
        }
        let secret_type = explicit_type.unwrap_or(SecretType::Passphrase);
        self.store_secret(cloud, secret_type, secret_type.generate(), file, printer).map(Some)
    }

    /// Stores `bytes` as a new `secret_type` secret named after the image (`NAME-key`), recorded as this run's.
    pub fn store_secret(
        &self,
        cloud: &crate::cmd::openstack_args::CloudRun,
        secret_type: SecretType,
        bytes: zeroize::Zeroizing<Vec<u8>>,
        file: &std::path::Path,
        printer: &Printer,
    ) -> anyhow::Result<KeyManagerSecret> {
        let name = self.secret_name(file);
        cloud.output_pending(file);
        let uuid = cloud.store(&name, secret_type, &bytes)?;
        printer.info(&format!("stored a new {} secret `{name}` in Barbican: {uuid}", secret_type.name()));
        Ok(KeyManagerSecret { uuid, secret_type, bytes, ours: true })
    }

    /// The name of a secret this run stores: `NAME-key`, NAME the --upload name or the file's stem.
    fn secret_name(&self, file: &std::path::Path) -> String {
        let name = self.cloud.upload.clone().unwrap_or_else(|| {
            file.file_stem().map_or_else(|| "image".to_owned(), |s| s.to_string_lossy().into_owned())
        });
        format!("{name}-key")
    }

    /// Refuses, before any login, a secret name Barbican would refuse (over 255 characters) and an image name
    /// Glance would refuse (over 255).
    fn check_names(&self, file: Option<&std::path::Path>) -> anyhow::Result<()> {
        const LIMIT: usize = 255;
        if let Some(name) = &self.cloud.upload
            && name.chars().count() > LIMIT
        {
            return Err(Failure::new(
                ExitStatus::InvalidInput,
                format!("--upload NAME has {} characters: Glance takes at most {LIMIT}", name.chars().count()),
            )
            .into());
        }
        let stores = self.cloud.key_manager.is_some() && self.cloud.secret.is_none();
        match file.filter(|_| stores) {
            Some(file) => self.check_new_secret_name(file),
            None => Ok(()),
        }
    }

    /// Refuses, before any login, the name of a secret this run will store for `file` when Barbican would refuse
    /// it (over 255 characters): a new secret (--key-manager without --secret), or convert's copy of the source's
    /// (`same`, also in its old spelling `same --secret`).
    pub fn check_new_secret_name(&self, file: &std::path::Path) -> anyhow::Result<()> {
        const LIMIT: usize = 255;
        let name = self.secret_name(file);
        if name.chars().count() > LIMIT {
            return Err(Failure::new(
                ExitStatus::InvalidInput,
                format!(
                    "the new secret's name `{}…-key` would have {} characters: Barbican takes at most {LIMIT}",
                    name.chars().take(16).collect::<String>(),
                    name.chars().count()
                ),
            )
            .with_hint(format!("give an --upload NAME (or a file name) of at most {} characters", LIMIT - 4))
            .into());
        }
        Ok(())
    }

    /// Checks --key-id, the deletion policy and, for an `encrypted` output, that an upload can name its secret,
    /// before anything is written or any server contacted.
    pub fn check(&self, encrypted: bool, existing_secret: bool, file: &std::path::Path) -> anyhow::Result<()> {
        self.check_names(Some(file))?;
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
        self.check_deletion_policy(existing_secret || (self.key_id.is_some() && self.cloud.upload.is_some()))?;
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

    /// Refuses a deletion policy on a secret this run does not create (`existing`: --secret, --key-id with
    /// --upload, the source's secret shared): Glance would delete it with this image while the images it came
    /// from, or that share it, still need it. Refused rather than dropped, so a script learns of it.
    pub fn check_deletion_policy(&self, existing: bool) -> anyhow::Result<()> {
        if !self.delete_key() || !existing {
            return Ok(());
        }
        Err(Failure::new(
            ExitStatus::Usage,
            "--delete-key-with-image on a secret this run does not create: deleting the image would delete a \
             secret other images may still need",
        )
        .with_hint(
            "drop --delete-key-with-image (the secret outlives the image), or let this run store the image's own \
             secret (--key-manager barbican without --secret; for convert, --encryption-key same copies it)",
        )
        .into())
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
        self.print_with(file, container, size, secret, self.key_id.as_deref(), None, printer)
    }

    /// The end of an OpenStack run, once the image `file` is complete in `data` (its partial file, not yet renamed
    /// into place: a failure here leaves whatever was at `file` as it was): uploads the image (--upload) and
    /// prints the Glance document (--glance), with `key_id` the key manager's secret (or --key-id); `cloud` is
    /// kept (everything in place) or undone.
    #[allow(clippy::too_many_arguments)]
    pub fn finish(
        &self,
        cloud: Option<crate::cmd::openstack_args::CloudRun>,
        file: &std::path::Path,
        data: &std::fs::File,
        container: Container,
        size: u64,
        secret: Option<(SecretType, Option<&std::path::Path>, usize)>,
        key_id: Option<&str>,
        printer: &Printer,
    ) -> anyhow::Result<()> {
        let key_id = key_id.or(self.key_id.as_deref());
        let Some(cloud) = cloud else {
            return if self.glance {
                self.print_with(file, container, size, secret, key_id, None, printer)
            } else {
                Ok(())
            };
        };
        let Some(name) = &self.cloud.upload else {
            if self.glance {
                self.print_with(file, container, size, secret, key_id, None, printer)?;
            }
            if let Some(id) = key_id {
                printer.info(&format!("the image's secret is Barbican secret {id} (os_encrypt_key_id)"));
            }
            cloud.finish();
            return self.print_ids(None, key_id.filter(|_| secret.is_some()), printer);
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
        let uploaded = {
            use std::io::Seek;
            let mut reader = data.try_clone().with_context(|| format!("reading `{}` to upload it", file.display()))?;
            reader.rewind().with_context(|| format!("reading `{}` to upload it", file.display()))?;
            cloud.upload(name, container.name(), &properties, reader, key_id.filter(|_| secret.is_some()), printer)
        };
        match uploaded {
            Ok(id) => {
                cloud.finish();
                printer.info(&format!(
                    "uploaded `{}` to Glance as image {id} (`{name}`){}",
                    file.display(),
                    key_id.map(|k| format!(", its secret Barbican secret {k}")).unwrap_or_default()
                ));
                if self.glance {
                    // The image exists: its document carries its id and its secret's, and no `openstack image
                    // create` line (running it would make a second image).
                    let ids = UploadedIds { image: &id, secret: key_id.filter(|_| secret.is_some()) };
                    return self.print_with(file, container, size, secret, key_id, Some(ids), printer);
                }
                self.print_ids(Some(&id), key_id.filter(|_| secret.is_some()), printer)
            }
            Err(e) => {
                cloud.abandon(printer);
                Err(e.context(format!("uploading `{}` to Glance", file.display())))
            }
        }
    }

    /// The ids a script captures, on standard output (also under -q): the uploaded image's, then the key-manager
    /// secret's, one a line, or one JSON object with `--output-format json`. With --glance the printed document
    /// carries them instead (os_encrypt_key_id).
    fn print_ids(&self, image: Option<&str>, secret: Option<&str>, printer: &Printer) -> anyhow::Result<()> {
        if self.glance || (image.is_none() && secret.is_none()) {
            return Ok(());
        }
        let text = match self.output_format {
            crate::cmd::OutputFormatArg::Json => {
                format!("{}\n", serde_json::json!({ "image_id": image, "secret_id": secret }))
            }
            crate::cmd::OutputFormatArg::Yaml => image.into_iter().chain(secret).map(|id| format!("{id}\n")).collect(),
        };
        printer.data(text.as_bytes()).context("writing to standard output")
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

    #[allow(clippy::too_many_arguments)]
    fn print_with(
        &self,
        file: &std::path::Path,
        container: Container,
        size: u64,
        secret: Option<(SecretType, Option<&std::path::Path>, usize)>,
        key_id: Option<&str>,
        uploaded: Option<UploadedIds<'_>>,
        printer: &Printer,
    ) -> anyhow::Result<()> {
        let facts = self.encryption_facts(secret, key_id);
        if secret.is_some() && key_id.is_none() {
            printer.warn("no --key-id: store the secret in the key manager, then set os_encrypt_key_id to its UUID");
        }
        let mut doc = crate::render::openstack::image_document(file, container.name(), size, facts.as_ref());
        if let Some(ids) = uploaded {
            doc.command = None;
            doc.image_id = Some(ids.image.to_owned());
            doc.secret_id = ids.secret.map(str::to_owned);
        }
        if self.cloud.key_manager.is_some() {
            // The secret is in Barbican already (stored or read by this run): no `openstack secret store` line.
            doc.secret = None;
        }
        let text = crate::render::documents(self.output_format.into(), [doc])?;
        printer.data(text.as_bytes()).context("writing to standard output")?;
        Ok(())
    }
}

/// The ids of an image this run uploaded, for its printed Glance document.
#[derive(Clone, Copy)]
struct UploadedIds<'a> {
    image: &'a str,
    secret: Option<&'a str>,
}

/// Reads secret `id` from the key manager as the output's (or source's) secret. Its Barbican type decides how it
/// becomes the passphrase (`passphrase`: its bytes, Nova; any other type: the lowercase hex of its bytes,
/// os-brick); an `explicit` --secret-type that says otherwise is refused. Which rule applied, and why, is said.
pub fn fetch_secret(
    cloud: &crate::cmd::openstack_args::CloudRun,
    id: &str,
    explicit: Option<SecretType>,
    printer: &Printer,
) -> anyhow::Result<KeyManagerSecret> {
    let fetched = cloud.fetch(id)?;
    let rule = |t: SecretType| match t {
        SecretType::Passphrase => "its bytes are the passphrase (Nova's rule for passphrase secrets)",
        SecretType::Symmetric => {
            "the passphrase is the lowercase hex of its bytes (os-brick's rule for every type but passphrase)"
        }
    };
    if let Some(explicit) = explicit.filter(|t| *t != fetched.secret_type) {
        return Err(Failure::new(
            ExitStatus::InvalidInput,
            format!(
                "--secret-type {} contradicts secret {}: Barbican keeps it as a `{}` secret, so {}",
                explicit.name(),
                fetched.uuid,
                fetched.barbican_type,
                rule(fetched.secret_type)
            ),
        )
        .with_hint("drop --secret-type: an existing secret's Barbican type decides, as in Nova and Cinder")
        .into());
    }
    printer.info(&format!(
        "secret {}: a `{}` secret of {} bytes: {}",
        fetched.uuid,
        fetched.barbican_type,
        fetched.payload.len(),
        rule(fetched.secret_type)
    ));
    Ok(KeyManagerSecret {
        uuid: fetched.uuid,
        secret_type: fetched.secret_type,
        bytes: zeroize::Zeroizing::new(fetched.payload.to_vec()),
        ours: false,
    })
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
