//! `cryptadm disk convert`, and the qcow2 paths of `disk luks-format`, `disk inspect` and `disk decrypt`.
//!
//! Everything about the formats lives in [`crate::qcow2`]; this module resolves flags into a source, an output
//! spec and secrets, checks them before anything is written, and renders the result.

use super::LuksPassphraseArgs;
use super::luks_format::{LuksFormatArgs, PbkdfArg, TypeArg};
use crate::cmd::OutputFormatArg;
use crate::cmd::error::Failure;
use crate::cmd::printer::Printer;
use crate::cmd::printer::plural;
use crate::exit::ExitStatus;
use crate::interact::Interaction;
use crate::luks::format::{DIGEST_ITER_TIME_MS, Pbkdf2Rate};
use crate::luks::{self, Hash};
use crate::qcow2::luks::KdfCost;
use crate::qcow2::secret::SecretType;
use crate::qcow2::{self, Container, Input, OutputLuks, OutputSpec};
use anyhow::Context;
use clap::{Args, ValueEnum};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use zeroize::Zeroizing;

/// Examples for `cryptadm disk convert`.
pub const EXAMPLES: &str = "Examples:
  # A Nova snapshot with the same key: raw LUKS to qcow2+LUKS, the volume key and passphrase kept
  cryptadm disk convert --format qcow2 --key-file pass.txt disk.luks snap.qcow2

  # A fresh volume key and a generated passphrase, written to new-pass.txt (0600, never overwritten)
  cryptadm disk convert --encryption-key new --new-key-file new-pass.txt \\
      --key-file pass.txt in.qcow2 out.qcow2

  # For Cinder: a symmetric key you hold; the passphrase is the key's lowercase hex, as os-brick
  # derives it
  cryptadm disk convert --encryption-key existing --secret-type symmetric --new-key-file key.bin \\
      --key-file pass.txt --glance in.qcow2 out.qcow2

  # Decrypted, on purpose: a plain qcow2 (the only option that writes plaintext)
  cryptadm disk convert --encryption-key none --key-file pass.txt in.qcow2 plain.qcow2";

/// Convert a disk image between raw, raw LUKS, qcow2 and qcow2+LUKS in one stream (qemu-img convert's verb)
///
/// The source is raw, raw LUKS (LUKS1 or LUKS2), qcow2 or qcow2 with LUKS, told apart by its content. The output
/// is raw or qcow2 (`--format`, default: the source's), encrypted as Nova's snapshot option `encryption.key`
/// says: `same` keeps the source's volume key and passphrase, `new` makes a new volume key and passphrase (written
/// to --new-key-file, mode 0600, never overwriting a file), `existing` uses the passphrase or key in
/// --new-key-file with a new volume key, and `none` writes a plain image. Data is decrypted and re-encrypted in
/// memory, a chunk at a time: no plaintext reaches the disk unless `none` asks for it. Clusters of zeros are left
/// unallocated in qcow2 outputs. The output is built in a temporary file next to DST and renamed into place; the
/// source is opened read-only.
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES, after_long_help = crate::cmd::long_help_footer(EXAMPLES))]
pub struct ConvertArgs {
    /// Container of the output (default: the source's)
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<FormatArg>,
    /// Which key encrypts the output (Nova's snapshot `encryption.key`)
    #[arg(long, value_enum, value_name = "KEY", default_value_t = KeyChoice::Same)]
    pub encryption_key: KeyChoice,
    #[command(flatten)]
    passphrase: LuksPassphraseArgs,
    /// The output's secret: read for `existing`, created for `new` (0600; an existing file is never overwritten)
    #[arg(long, value_name = "FILE", help_heading = "Passphrase")]
    pub new_key_file: Option<PathBuf>,
    /// How the output's secret becomes its LUKS passphrase: verbatim (`passphrase`, Nova) or lowercase hex of
    /// the key bytes (`symmetric`, Cinder and os-brick)
    #[arg(long, value_enum, value_name = "TYPE", default_value_t, help_heading = "Passphrase")]
    pub secret_type: SecretTypeArg,
    /// How the source's --key-file becomes its passphrase (default: --secret-type)
    #[arg(long, value_enum, value_name = "TYPE", help_heading = "Passphrase")]
    pub source_secret_type: Option<SecretTypeArg>,
    /// qcow2 cluster size in bytes, 512 to 2M, a power of two (default 64K, QEMU's)
    #[arg(long, value_name = "BYTES", value_parser = parse_cluster_size)]
    pub cluster_size: Option<u32>,
    #[command(flatten)]
    kdf: KdfArgs,
    #[command(flatten)]
    glance: GlanceArgs,
    /// Replace DST if it exists
    #[arg(long)]
    pub force: bool,
    /// The image to convert (read-only)
    #[arg(value_name = "SRC")]
    pub src: PathBuf,
    /// The image to write
    #[arg(value_name = "DST")]
    pub dst: PathBuf,
}

/// Key stretching of new LUKS1 headers (PBKDF2-SHA256, as QEMU and cryptsetup write LUKS1).
#[derive(Args, Debug, Clone)]
pub struct KdfArgs {
    /// Milliseconds the keyslot's PBKDF2 should take (benchmarked like cryptsetup)
    #[arg(long, value_name = "MS", default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..=3_600_000), help_heading = "Key derivation")]
    pub iter_time: u64,
    /// Skip the benchmark: PBKDF2 iterations of the keyslot (the digest takes the minimum, 1000)
    #[arg(long, value_name = "N", help_heading = "Key derivation")]
    pub pbkdf_force_iterations: Option<u32>,
}

/// `--glance` and its companions.
#[derive(Args, Debug, Clone)]
pub struct GlanceArgs {
    /// Print the output's Glance properties, the `openstack image create` line and, when encrypted, the
    /// `openstack secret store` line for its secret
    #[arg(long, help_heading = "OpenStack")]
    pub glance: bool,
    /// The key manager (Barbican) secret that holds the output's secret: os_encrypt_key_id
    #[arg(long, value_name = "UUID", requires = "glance", help_heading = "OpenStack")]
    pub key_id: Option<String>,
    /// Delete the secret with the image (os_encrypt_key_deletion_policy=True)
    #[arg(long, requires = "glance", help_heading = "OpenStack")]
    pub delete_key_with_image: bool,
    /// Format of the printed document
    #[arg(long, value_enum, default_value_t, value_name = "FORMAT", requires = "glance", help_heading = "OpenStack")]
    pub output_format: OutputFormatArg,
}

/// Output containers.
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

/// Nova's snapshot key options.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum KeyChoice {
    /// The source's volume key and passphrase
    Same,
    /// A new volume key and a generated secret, written to --new-key-file
    New,
    /// A new volume key; the secret in --new-key-file
    Existing,
    /// No encryption: a plain image
    None,
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

/// Parses a cluster size (`65536`, `64K`, `2M`) into its log2.
pub fn parse_cluster_size(text: &str) -> Result<u32, String> {
    let bytes = super::luks_format::parse_size(text)?;
    if !bytes.is_power_of_two() || !(512..=2 << 20).contains(&bytes) {
        return Err(format!("`{text}` is not a power of two from 512 to 2M"));
    }
    Ok(bytes.trailing_zeros())
}

fn usage(message: impl Into<String>) -> Failure {
    Failure::new(ExitStatus::Usage, message)
}

fn invalid(message: impl Into<String>) -> Failure {
    Failure::new(ExitStatus::InvalidInput, message)
}

/// The key-stretching cost of new headers: forced, or benchmarked like cryptsetup.
fn kdf_cost(kdf: &KdfArgs, printer: &Printer) -> KdfCost {
    match kdf.pbkdf_force_iterations {
        Some(n) => KdfCost { keyslot_iterations: n, digest_iterations: luks::PBKDF2_MIN_ITERATIONS },
        None => {
            let _busy = printer.busy("benchmarking PBKDF2");
            let rate = Pbkdf2Rate::measure(Hash::Sha256);
            KdfCost {
                keyslot_iterations: rate.iterations(kdf.iter_time, 64),
                digest_iterations: rate.iterations(DIGEST_ITER_TIME_MS, Hash::Sha256.output_len()),
            }
        }
    }
}

/// Refuses an existing non-empty DST without --force, and DST being SRC.
fn check_output(dst: &Path, src: Option<(&Path, &str, &str)>, force: bool) -> anyhow::Result<()> {
    if let Some((src, src_flag, dst_flag)) = src {
        crate::cmd::refuse_same_file(src, dst, src_flag, dst_flag)?;
    }
    let meta = match std::fs::metadata(dst) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(anyhow::Error::new(e).context(format!("checking `{}`", dst.display()))),
    };
    if !meta.is_file() {
        return Err(invalid(format!("`{}` is not a regular file", dst.display())).into());
    }
    if meta.len() > 0 && !force {
        return Err(invalid(format!("`{}` exists and is not empty; refusing to overwrite it", dst.display()))
            .with_hint("check the destination; give --force to replace it")
            .into());
    }
    Ok(())
}

/// Reads a whole secret file (at most 8 MiB, cryptsetup's key-file limit).
fn read_secret_file(path: &Path) -> anyhow::Result<Zeroizing<Vec<u8>>> {
    let file = std::fs::File::open(path).with_context(|| format!("reading the key file `{}`", path.display()))?;
    let bytes = crate::crypto::secret::read_secret(file, 8 << 20)
        .with_context(|| format!("reading the key file `{}`", path.display()))?;
    if bytes.is_empty() {
        return Err(invalid(format!("the key file `{}` is empty", path.display())).into());
    }
    Ok(Zeroizing::new(bytes.to_vec()))
}

/// Creates `path` (0600, failing if it exists) holding `secret`, flushed.
fn create_secret_file(path: &Path, secret: &[u8]) -> anyhow::Result<()> {
    let mut file =
        std::fs::OpenOptions::new().write(true).create_new(true).mode(crate::atomic::MODE_PRIVATE).open(path).map_err(
            |e| {
                if e.kind() == std::io::ErrorKind::AlreadyExists {
                    anyhow::Error::new(
                        invalid(format!("`{}` exists; a generated secret never overwrites a file", path.display()))
                            .with_hint("give --new-key-file a path that does not exist yet"),
                    )
                } else {
                    anyhow::Error::new(e).context(format!("creating `{}`", path.display()))
                }
            },
        )?;
    file.write_all(secret).and_then(|()| file.sync_all()).with_context(|| format!("writing `{}`", path.display()))?;
    Ok(())
}

/// Removes a secret file this run created, when the run failed.
struct CreatedSecret<'a>(Option<&'a Path>);

impl Drop for CreatedSecret<'_> {
    fn drop(&mut self) {
        if let Some(path) = self.0 {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The output's secret and where it is, resolved from the flags.
struct OutputSecret {
    passphrase: Zeroizing<Vec<u8>>,
    file: Option<PathBuf>,
    len: usize,
    kind: SecretType,
}

/// Runs `cryptadm disk convert`.
pub fn run(args: ConvertArgs, printer: &Printer) -> anyhow::Result<ExitStatus> {
    crate::cmd::interrupt::remove_partials_on_signal();
    let secret_type = SecretType::from(args.secret_type);
    let source_type = args.source_secret_type.map_or(secret_type, SecretType::from);
    match (args.encryption_key, &args.new_key_file) {
        (KeyChoice::New | KeyChoice::Existing, None) => {
            return Err(usage("--encryption-key new and existing need --new-key-file FILE").into());
        }
        (KeyChoice::Same | KeyChoice::None, Some(_)) => {
            return Err(usage("--new-key-file applies to --encryption-key new and existing only").into());
        }
        _ => {}
    }
    check_output(&args.dst, Some((&args.src, "SRC", "DST")), args.force)?;
    if let (KeyChoice::New, Some(path)) = (args.encryption_key, &args.new_key_file)
        && path.exists()
    {
        return Err(invalid(format!("`{}` exists; a generated secret never overwrites a file", path.display()))
            .with_hint("give --new-key-file a path that does not exist yet")
            .into());
    }
    let input = Input::open(&args.src).with_context(|| format!("reading `{}`", args.src.display()))?;
    let container = args.format.map_or(input.container(), Container::from);
    if args.encryption_key == KeyChoice::Same && !input.encrypted() {
        return Err(usage(format!("`{}` is not encrypted: there is no key to keep", args.src.display()))
            .with_hint("choose --encryption-key new, existing or none")
            .into());
    }
    let source_passphrase = if input.encrypted() {
        let raw = args.passphrase.resolve(printer, false)?;
        Some(source_type.passphrase(raw.expose()))
    } else {
        None
    };
    let existing = match (args.encryption_key, &args.new_key_file) {
        (KeyChoice::Existing, Some(path)) => {
            let secret = read_secret_file(path)?;
            Some(OutputSecret {
                passphrase: secret_type.passphrase(&secret),
                file: Some(path.clone()),
                len: secret.len(),
                kind: secret_type,
            })
        }
        _ => None,
    };
    let threads = super::cipher_threads();
    let unlocked = input
        .unlock(source_passphrase.as_deref().map(|p| &p[..]), threads)
        .with_context(|| format!("unlocking `{}`", args.src.display()))?;
    let mut generated = None;
    let (encryption, secret) = match args.encryption_key {
        KeyChoice::None => (None, None),
        KeyChoice::Same => {
            let passphrase = source_passphrase.clone().expect("encrypted");
            let needs_new_header = container == Container::Qcow2
                && unlocked.header.as_ref().is_some_and(|h| h.version != luks::Version::Luks1);
            let cost = if needs_new_header {
                kdf_cost(&args.kdf, printer)
            } else {
                KdfCost { keyslot_iterations: 0, digest_iterations: 0 }
            };
            let luks = OutputLuks::same(&unlocked, container, &passphrase, cost)?;
            let key_file = args.passphrase.key_file().map(Path::to_path_buf);
            let len = key_file.as_deref().and_then(|p| std::fs::metadata(p).ok()).map_or(0, |m| m.len() as usize);
            (Some(luks), Some(OutputSecret { passphrase, file: key_file, len, kind: source_type }))
        }
        KeyChoice::New => {
            let secret = secret_type.generate();
            let passphrase = secret_type.passphrase(&secret);
            let luks = OutputLuks::fresh(&passphrase, kdf_cost(&args.kdf, printer))?;
            generated = Some(secret.clone());
            let len = secret.len();
            (Some(luks), Some(OutputSecret { passphrase, file: args.new_key_file.clone(), len, kind: secret_type }))
        }
        KeyChoice::Existing => {
            let secret = existing.expect("read above");
            let luks = OutputLuks::fresh(&secret.passphrase, kdf_cost(&args.kdf, printer))
                .with_context(|| "checking the secret in --new-key-file")?;
            (Some(luks), Some(secret))
        }
    };
    let encrypted = encryption.is_some();
    let spec =
        OutputSpec { container, cluster_bits: args.cluster_size.unwrap_or(qcow2::DEFAULT_CLUSTER_BITS), encryption };
    // The generated secret is stored first (create-new), and removed again if the conversion fails.
    let mut created = CreatedSecret(None);
    if let (Some(secret), Some(path)) = (&generated, &args.new_key_file) {
        create_secret_file(path, secret)?;
        created.0 = Some(path);
    }
    let mut source = unlocked.source;
    let total = source.len();
    let progress = printer.transfer("converting", total);
    let converted = crate::atomic::write_with(&args.dst, crate::atomic::MODE_PRIVATE, |file| {
        qcow2::convert(source.as_mut(), file, &spec, threads, progress.as_ref()).map_err(anyhow::Error::from)
    })
    .with_context(|| format!("writing `{}`", args.dst.display()))?;
    created.0 = None;
    drop(progress);
    printer.info(&format!(
        "converted `{}` into `{}`: {}{}, {} bytes of disk in a {}-byte file{}",
        args.src.display(),
        args.dst.display(),
        container.name(),
        if encrypted { " with LUKS1" } else { "" },
        converted.virtual_size,
        converted.file_len,
        converted.data_clusters.map_or(String::new(), |n| format!(", {n} data clusters")),
    ));
    if args.glance.glance {
        print_glance(&args.glance, &args.dst, container, converted.virtual_size, secret.as_ref(), printer)?;
    }
    Ok(ExitStatus::Success)
}

fn print_glance(
    glance: &GlanceArgs,
    file: &Path,
    container: Container,
    size: u64,
    secret: Option<&OutputSecret>,
    printer: &Printer,
) -> anyhow::Result<()> {
    if glance.key_id.as_deref().is_some_and(|id| !luks::format::is_uuid(id)) {
        return Err(invalid("--key-id is not a UUID (Barbican secret ids are 8-4-4-4-12 hex digits)").into());
    }
    let facts = secret.map(|s| crate::render::openstack::EncryptionFacts {
        secret_type: s.kind,
        secret_file: s.file.as_deref(),
        secret_len: s.len,
        key_id: glance.key_id.as_deref(),
        delete_key: glance.delete_key_with_image,
    });
    if secret.is_some() && glance.key_id.is_none() {
        printer.warn("no --key-id: store the secret in the key manager, then set os_encrypt_key_id to its UUID");
    }
    let doc = crate::render::openstack::image_document(file, container.name(), size, facts.as_ref());
    let text = crate::render::documents(glance.output_format.into(), [doc])?;
    printer.data(text.as_bytes()).context("writing to standard output")?;
    Ok(())
}

/// `disk luks-format --format qcow2`: a qcow2 image with LUKS inside, empty (`--size`) or holding a raw or
/// plain qcow2 image (`--from`).
pub fn luks_format_qcow2(
    args: &LuksFormatArgs,
    passphrase_args: &LuksPassphraseArgs,
    printer: &Printer,
) -> anyhow::Result<ExitStatus> {
    if args.luks_type == Some(TypeArg::Luks2) {
        return Err(usage("qcow2 images hold LUKS1 only (QEMU reads no LUKS2 inside qcow2); drop --type luks2").into());
    }
    if args.pbkdf.is_some_and(|p| p != PbkdfArg::Pbkdf2) || args.pbkdf_memory.is_some() || args.pbkdf_parallel.is_some()
    {
        return Err(usage("LUKS1 inside qcow2 uses pbkdf2: drop --pbkdf, --pbkdf-memory and --pbkdf-parallel").into());
    }
    if args.key_size != 512 || args.sector_size.is_some_and(|s| s != 512) || args.label.is_some() || args.uuid.is_some()
    {
        return Err(usage(
            "--format qcow2 writes QEMU's LUKS1 layout: drop --key-size, --sector-size, --label and --uuid",
        )
        .into());
    }
    if args.cipher != "aes-xts-plain64" || args.hash != super::luks_format::HashArg::Sha256 {
        return Err(usage("--format qcow2 writes aes-xts-plain64 with sha256").into());
    }
    if std::fs::metadata(&args.target).is_ok_and(|m| m.file_type().is_dir() || !m.is_file()) {
        return Err(
            invalid(format!("`{}` is not a regular file: a qcow2 image is a file", args.target.display())).into()
        );
    }
    check_output(&args.target, args.from.as_deref().map(|f| (f, "--from", "TARGET")), args.force)?;
    let threads = super::cipher_threads();
    let mut source: Box<dyn qcow2::Source> = match &args.from {
        Some(path) => {
            let input = Input::open(path).with_context(|| format!("reading `{}`", path.display()))?;
            if input.encrypted() {
                return Err(invalid(format!("`{}` is encrypted", path.display()))
                    .with_hint("use `cryptadm disk convert` to re-encrypt an encrypted image")
                    .into());
            }
            input.unlock(None, threads)?.source
        }
        None => Box::new(qcow2::stream::Zeros(0)),
    };
    let size = match (args.size, args.from.is_some()) {
        (None, false) => return Err(usage("a new image needs --size SIZE or --from IMAGE").into()),
        (Some(size), _) if size < source.len() => {
            return Err(invalid(format!("--size {size} is smaller than the source ({} bytes)", source.len())).into());
        }
        (Some(size), _) => size.div_ceil(512) * 512,
        (None, true) => source.len().div_ceil(512) * 512,
    };
    if size != source.len() {
        source = Box::new(qcow2::stream::Resized { inner: source, len: size });
    }
    let secret_type = SecretType::from(args.secret_type);
    let secret = passphrase_args.resolve(printer, secret_type == SecretType::Passphrase)?;
    let passphrase = secret_type.passphrase(secret.expose());
    let kdf = KdfArgs { iter_time: args.iter_time, pbkdf_force_iterations: args.pbkdf_force_iterations };
    let luks = OutputLuks::fresh(&passphrase, kdf_cost(&kdf, printer)).context("checking the passphrase")?;
    let spec = OutputSpec {
        container: Container::Qcow2,
        cluster_bits: args.cluster_size.unwrap_or(qcow2::DEFAULT_CLUSTER_BITS),
        encryption: Some(luks),
    };
    let progress = printer.transfer("encrypting", size);
    let converted = crate::atomic::write_with(&args.target, crate::atomic::MODE_PRIVATE, |file| {
        qcow2::convert(source.as_mut(), file, &spec, threads, progress.as_ref()).map_err(anyhow::Error::from)
    })
    .with_context(|| format!("writing the image `{}`", args.target.display()))?;
    drop(progress);
    printer.info(&format!(
        "formatted `{}`: qcow2 with LUKS1 aes-xts-plain64 512-bit key, {} bytes of disk, {} data clusters, a \
         {}-byte file",
        args.target.display(),
        converted.virtual_size,
        converted.data_clusters.unwrap_or(0),
        converted.file_len,
    ));
    if args.glance {
        let glance = GlanceArgs {
            glance: true,
            key_id: args.key_id.clone(),
            delete_key_with_image: args.key_deletion_policy == super::luks_format::DeletionPolicy::OnImageDeletion,
            output_format: args.output_format,
        };
        let file = passphrase_args.key_file().map(Path::to_path_buf);
        let secret = OutputSecret { passphrase, file, len: secret.expose().len(), kind: secret_type };
        print_glance(&glance, &args.target, Container::Qcow2, converted.virtual_size, Some(&secret), printer)?;
    }
    Ok(ExitStatus::Success)
}

/// `disk inspect` of a qcow2 image.
pub fn inspect_qcow2(target: &Path, format: OutputFormatArg, printer: &Printer) -> anyhow::Result<ExitStatus> {
    let summary = qcow2::summary::describe(target).with_context(|| format!("reading `{}`", target.display()))?;
    let text = crate::render::documents(format.into(), [summary])?;
    printer.data(text.as_bytes()).context("writing to standard output")?;
    Ok(ExitStatus::Success)
}

/// `disk decrypt` of a qcow2 image (encrypted or not) into a raw image.
pub fn decrypt_qcow2(
    target: &Path,
    out: &Path,
    passphrase_args: &LuksPassphraseArgs,
    printer: &Printer,
) -> anyhow::Result<ExitStatus> {
    let to_stdout = crate::cmd::secrets::is_stdin(out);
    let input = Input::open(target).with_context(|| format!("reading `{}`", target.display()))?;
    let passphrase = if input.encrypted() { Some(passphrase_args.resolve(printer, false)?) } else { None };
    let threads = super::cipher_threads();
    let unlocked = input
        .unlock(passphrase.as_ref().map(|p| p.expose()), threads)
        .with_context(|| format!("unlocking `{}`", target.display()))?;
    let mut source = unlocked.source;
    let progress = printer.transfer("decrypting", source.len());
    let written = if to_stdout {
        let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
        let n = qcow2::stream::copy_to(source.as_mut(), &mut stdout, progress.as_ref())?;
        stdout.flush().context("writing to standard output")?;
        n
    } else {
        let spec = OutputSpec { container: Container::Raw, cluster_bits: 0, encryption: None };
        crate::atomic::write_with(out, crate::atomic::MODE_PRIVATE, |file| {
            qcow2::convert(source.as_mut(), file, &spec, threads, progress.as_ref()).map_err(anyhow::Error::from)
        })
        .with_context(|| format!("writing `{}`", out.display()))?
        .virtual_size
    };
    drop(progress);
    printer.info(&format!(
        "decrypted {} from `{}` into `{}`",
        plural(written, "byte"),
        target.display(),
        out.display()
    ));
    Ok(ExitStatus::Success)
}
