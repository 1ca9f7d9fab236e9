//! `cryptadm disk luks-format`.

use super::LuksPassphraseArgs;
use crate::cmd::OutputFormatArg;
use crate::cmd::error::Failure;
use crate::cmd::printer::Printer;
use crate::crypto::Passphrase;
use crate::crypto::argon2::Argon2Variant;
use crate::exit::ExitStatus;
use crate::interact::Interaction;
use crate::luks::format::{self, FormatOptions, Occupant};
use crate::luks::{self, Hash, Kdf, Version, VolumeKey};
use anyhow::Context;
use clap::builder::TypedValueParser;
use clap::{Args, ValueEnum};
use std::fs::File;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// Examples for `cryptadm disk luks-format`.
pub const EXAMPLES: &str = "Examples:
  # A new 10 GiB LUKS2 image, cryptsetup 2.6 defaults (the KDF cost is benchmarked for 2 s)
  cryptadm disk luks-format --key-file key.bin --size 10G disk.img

  # Encrypt an existing raw image into a LUKS1 image for OpenStack; print its Glance properties as
  # JSON
  cryptadm disk luks-format --glance --key-id 3f1c6b9e-0d2a-4c55-9a57-3e1f0b6a2c11 \\
      --passphrase-file pass.txt --from raw.img --output-format json enc.img

  # Cheap KDF parameters (tests only), a 4096-byte sector LUKS2 image with a label
  cryptadm disk luks-format --key-file key.bin --pbkdf pbkdf2 --pbkdf-force-iterations 1000 \\
      --sector-size 4096 --label data --size 64M test.img";

/// Create a LUKS2 or LUKS1 image (or format a block device), optionally encrypting a raw image into it
///
/// Defaults are cryptsetup 2.6's: LUKS2, aes-xts-plain64, 512-bit key, argon2id benchmarked for 2000 ms (memory
/// at most 1 GiB and half the RAM, threads at most 4 and the CPU count), 16 MiB data offset, 4096-byte sectors
/// for image files. An image file is written to a temporary file and renamed into place, so a failure leaves
/// nothing behind; a block device is never resized. An existing LUKS header or non-empty target is overwritten
/// only with --force.
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES, after_long_help = crate::cmd::long_help_footer(EXAMPLES))]
pub struct LuksFormatArgs {
    /// LUKS version (`luks1` for QEMU, Nova and Glance)
    #[arg(long = "type", value_enum, value_name = "TYPE")]
    pub luks_type: Option<TypeArg>,
    #[command(flatten)]
    passphrase: LuksPassphraseArgs,
    /// Container: `raw` (a LUKS image or device) or `qcow2` (qcow2 v3 with LUKS1 inside, as QEMU writes it)
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = super::convert::FormatArg::Raw)]
    pub format: super::convert::FormatArg,
    /// qcow2 cluster size in bytes, 512 to 2M, a power of two (default 64K, QEMU's)
    #[arg(long, value_name = "BYTES", value_parser = super::convert::parse_cluster_size)]
    pub cluster_size: Option<u32>,
    /// How the passphrase source becomes the LUKS passphrase: verbatim (`passphrase`, Nova) or lowercase hex of
    /// the key bytes it holds (`symmetric`, Cinder and os-brick)
    #[arg(long, value_enum, value_name = "TYPE", default_value_t, help_heading = "Passphrase")]
    pub secret_type: super::convert::SecretTypeArg,
    /// Payload cipher (only aes-xts-plain64 is implemented)
    #[arg(long, value_name = "CIPHER", default_value = "aes-xts-plain64", help_heading = "Encryption")]
    pub cipher: String,
    /// Volume key size in bits (XTS: 512 = AES-256, 256 = AES-128)
    #[arg(long, value_name = "BITS", default_value_t = 512, value_parser = clap::builder::PossibleValuesParser::new(["256", "512"]).map(|s| s.parse::<u32>().expect("listed")), help_heading = "Encryption")]
    pub key_size: u32,
    /// Hash for the digest, the AF splitter and PBKDF2
    #[arg(long, value_enum, value_name = "HASH", default_value_t = HashArg::Sha256, help_heading = "Encryption")]
    pub hash: HashArg,
    /// Encryption sector size in bytes (default: 4096 for LUKS2 image files, else 512)
    #[arg(long, value_name = "BYTES", value_parser = clap::builder::PossibleValuesParser::new(["512", "4096"]).map(|s| s.parse::<u32>().expect("listed")), help_heading = "Encryption")]
    pub sector_size: Option<u32>,
    /// Keyslot KDF (default: argon2id for LUKS2, pbkdf2 for LUKS1)
    #[arg(long, value_enum, value_name = "PBKDF", help_heading = "Key derivation")]
    pub pbkdf: Option<PbkdfArg>,
    /// Milliseconds the keyslot KDF should take (benchmarked like cryptsetup)
    #[arg(long, value_name = "MS", default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..=3_600_000), help_heading = "Key derivation")]
    pub iter_time: u64,
    /// Skip the benchmark: PBKDF2 iterations, or the Argon2 time cost
    #[arg(long, value_name = "N", help_heading = "Key derivation")]
    pub pbkdf_force_iterations: Option<u32>,
    /// Argon2 memory cost in KiB, 32 to 4194304 (default: benchmarked, at most 1 GiB and half the RAM)
    #[arg(long, value_name = "KIB", help_heading = "Key derivation",
          value_parser = clap::value_parser!(u32).range(i64::from(luks::ARGON2_MIN_MEMORY_KIB)..=i64::from(luks::ARGON2_MAX_MEMORY_KIB)))]
    pub pbkdf_memory: Option<u32>,
    /// Argon2 threads, 1 to 4 (default: the CPU count, at most 4)
    #[arg(long, value_name = "N", help_heading = "Key derivation",
          value_parser = clap::value_parser!(u32).range(1..=i64::from(luks::ARGON2_MAX_PARALLEL)))]
    pub pbkdf_parallel: Option<u32>,
    /// LUKS2 label
    #[arg(long, value_name = "LABEL")]
    pub label: Option<String>,
    /// Volume UUID (default: random)
    #[arg(long, value_name = "UUID")]
    pub uuid: Option<String>,
    /// Payload size of a new image file: bytes, or with a K, M, G or T suffix (powers of 1024)
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub size: Option<u64>,
    /// Encrypt this raw disk image into TARGET (streamed; the payload is its size rounded up to a sector); with
    /// --format qcow2 also a plain qcow2 image
    #[arg(long, value_name = "RAW_IMAGE")]
    pub from: Option<PathBuf>,
    /// Make an image for OpenStack: LUKS1, a UTF-8 text passphrase, and print its Glance properties
    #[arg(long, help_heading = "OpenStack")]
    pub glance: bool,
    /// The key manager (Barbican) secret that holds the passphrase: os_encrypt_key_id
    #[arg(long, value_name = "UUID", requires = "glance", help_heading = "OpenStack")]
    pub key_id: Option<String>,
    /// Delete the secret with the image? (cinder_encryption_key_deletion_policy)
    #[arg(long, value_enum, value_name = "P", requires = "glance", default_value_t = DeletionPolicy::OnImageDeletion, help_heading = "OpenStack")]
    pub key_deletion_policy: DeletionPolicy,
    /// Format of the printed Glance properties
    #[arg(long, value_enum, default_value_t, value_name = "FORMAT", requires = "glance", help_heading = "OpenStack")]
    pub output_format: OutputFormatArg,
    /// Overwrite an existing LUKS header or a non-empty target
    #[arg(long)]
    pub force: bool,
    /// The image file to create, or an existing block device
    #[arg(value_name = "TARGET")]
    pub target: PathBuf,
}

/// LUKS versions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TypeArg {
    /// LUKS2 (cryptsetup's default)
    Luks2,
    /// LUKS1 (QEMU, OpenStack)
    Luks1,
}

/// Hashes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum HashArg {
    /// SHA-256
    Sha256,
    /// SHA-512
    Sha512,
}

/// Keyslot KDFs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PbkdfArg {
    /// Argon2id (LUKS2 default)
    Argon2id,
    /// Argon2i
    Argon2i,
    /// PBKDF2 (LUKS1, FIPS)
    Pbkdf2,
}

/// What happens to the key manager secret when the image is deleted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DeletionPolicy {
    /// Glance deletes the secret with the image
    #[value(name = "on_image_deletion")]
    OnImageDeletion,
    /// The secret outlives the image
    #[value(name = "do_not_delete")]
    DoNotDelete,
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

/// Where the header goes.
enum Target {
    /// A new (or replaced) image file, built in a temporary file next to it.
    File { path: PathBuf },
    /// An existing block device, written in place and never resized.
    Device { path: PathBuf, len: u64 },
}

/// Everything resolved before anything is written.
struct Settings {
    options: FormatOptions,
    passphrase: Passphrase,
    target: Target,
    payload_len: u64,
    from: Option<(File, u64)>,
}

fn invalid(message: impl Into<String>) -> Failure {
    Failure::new(ExitStatus::InvalidInput, message)
}

fn usage(message: impl Into<String>) -> Failure {
    Failure::new(ExitStatus::Usage, message)
}

fn resolve(args: &LuksFormatArgs, printer: &Printer) -> anyhow::Result<Settings> {
    let version = match (args.luks_type, args.glance) {
        (Some(TypeArg::Luks2), true) => {
            return Err(usage("--glance makes LUKS1 images (QEMU reads only LUKS1); drop --type luks2").into());
        }
        (_, true) | (Some(TypeArg::Luks1), _) => Version::Luks1,
        _ => Version::Luks2,
    };
    let hash = match args.hash {
        HashArg::Sha256 => Hash::Sha256,
        HashArg::Sha512 => Hash::Sha512,
    };
    let from = match &args.from {
        Some(path) => {
            crate::cmd::refuse_same_file(path, &args.target, "--from", "TARGET")?;
            let file = File::open(path).with_context(|| format!("opening the raw image `{}`", path.display()))?;
            let len = file.metadata().with_context(|| format!("reading `{}`", path.display()))?.len();
            Some((file, len))
        }
        None => None,
    };
    let target = probe_target(args)?;
    let is_device = matches!(target, Target::Device { .. });
    let sector_size = match (args.sector_size, version) {
        (Some(4096), Version::Luks1) => return Err(usage("LUKS1 has 512-byte sectors only").into()),
        (Some(size), _) => size,
        (None, Version::Luks2) if !is_device => 4096,
        (None, _) => 512,
    };
    let payload_offset = match version {
        Version::Luks1 => u64::from(format::LUKS1_PAYLOAD_SECTORS) * 512,
        Version::Luks2 => format::LUKS2_DATA_OFFSET,
    };
    let payload_len = payload_len(args, &target, from.as_ref().map(|f| f.1), payload_offset, sector_size)?;
    let key_bytes = (args.key_size / 8) as usize;
    luks::format::is_uuid(args.uuid.as_deref().unwrap_or("00000000-0000-0000-0000-000000000000"))
        .then_some(())
        .ok_or_else(|| invalid("--uuid is not a UUID (8-4-4-4-12 hex digits)"))?;
    if args.key_id.as_deref().is_some_and(|id| !luks::format::is_uuid(id)) {
        return Err(invalid("--key-id is not a UUID (Barbican secret ids are 8-4-4-4-12 hex digits)").into());
    }
    let passphrase = args.passphrase.resolve(printer, true)?;
    let passphrase = match args.secret_type {
        super::convert::SecretTypeArg::Passphrase => passphrase,
        super::convert::SecretTypeArg::Symmetric => {
            let hex = crate::qcow2::secret::SecretType::Symmetric.passphrase(passphrase.expose());
            Passphrase::new(hex.to_vec())
        }
    };
    if args.glance {
        check_text_passphrase(&passphrase)?;
    }
    // One PBKDF2 measurement serves the keyslot and the digest; a forced PBKDF skips it and the digest takes
    // the minimum, as in cryptsetup.
    let rate = match args.pbkdf_force_iterations {
        Some(_) => None,
        None => {
            let _busy = printer.busy("benchmarking PBKDF2");
            Some(format::Pbkdf2Rate::measure(hash))
        }
    };
    let kdf = resolve_kdf(args, version, hash, key_bytes, rate, printer)?;
    let digest_iterations =
        rate.map_or(luks::PBKDF2_MIN_ITERATIONS, |r| r.iterations(format::DIGEST_ITER_TIME_MS, hash.output_len()));
    let options = FormatOptions {
        version,
        cipher: args.cipher.clone(),
        key_bytes,
        hash,
        kdf,
        digest_iterations,
        sector_size,
        label: args.label.clone().unwrap_or_default(),
        uuid: args.uuid.as_deref().map_or_else(format::random_uuid, str::to_ascii_lowercase),
    };
    options.check().context("checking the format parameters")?;
    Ok(Settings { options, passphrase, target, payload_len, from })
}

/// QEMU looks the secret up as a UTF-8 string and measures it with strlen.
fn check_text_passphrase(passphrase: &Passphrase) -> anyhow::Result<()> {
    let text = std::str::from_utf8(passphrase.expose()).ok();
    if text.is_none_or(|t| t.contains('\0')) {
        return Err(invalid("--glance needs a text passphrase: QEMU requires valid UTF-8 without NUL bytes")
            .with_hint("use a text passphrase, e.g. `openssl rand -base64 32 | tr -d '\\n' > pass.txt`")
            .into());
    }
    Ok(())
}

fn probe_target(args: &LuksFormatArgs) -> anyhow::Result<Target> {
    let path = args.target.clone();
    let meta = match std::fs::metadata(&path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Target::File { path }),
        Err(e) => return Err(anyhow::Error::new(e).context(format!("checking `{}`", path.display()))),
    };
    let is_device = meta.file_type().is_block_device();
    if !is_device && !meta.is_file() {
        return Err(invalid(format!("`{}` is neither a regular file nor a block device", path.display())).into());
    }
    let file = File::open(&path).with_context(|| format!("opening `{}`", path.display()))?;
    let len = crate::luks::luks2::device_len(&file)?;
    if !args.force {
        let occupant = format::occupant(&file, is_device, len).context("reading the target")?;
        let what = match occupant {
            Some(Occupant::LuksHeader) => Some("holds a LUKS header"),
            Some(Occupant::Data) if is_device => Some("is not empty"),
            Some(Occupant::Data) => Some("exists and is not empty"),
            None => None,
        };
        if let Some(what) = what {
            return Err(invalid(format!("`{}` {what}; refusing to overwrite it", path.display()))
                .with_hint("check the target; give --force to overwrite it")
                .into());
        }
    }
    Ok(if is_device { Target::Device { path, len } } else { Target::File { path } })
}

fn payload_len(
    args: &LuksFormatArgs,
    target: &Target,
    from_len: Option<u64>,
    payload_offset: u64,
    sector: u32,
) -> anyhow::Result<u64> {
    let round = |n: u64| n.div_ceil(u64::from(sector)) * u64::from(sector);
    match target {
        Target::Device { len, .. } => {
            if args.size.is_some() {
                return Err(usage("--size applies to image files; a block device is never resized").into());
            }
            let available = len.saturating_sub(payload_offset) / u64::from(sector) * u64::from(sector);
            if available == 0 || from_len.is_some_and(|f| round(f) > available) {
                return Err(invalid(format!("the device is too small ({len} bytes)")).into());
            }
            Ok(available)
        }
        Target::File { path } => {
            let existing = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
            let len = match (args.size, from_len) {
                (Some(size), Some(f)) if size < f => {
                    return Err(invalid(format!("--size {size} is smaller than the raw image ({f} bytes)")).into());
                }
                (Some(size), _) => round(size),
                (None, Some(f)) => round(f),
                (None, None) if existing > payload_offset => round(existing - payload_offset),
                (None, None) => return Err(usage("a new image needs --size SIZE or --from RAW_IMAGE").into()),
            };
            Ok(len)
        }
    }
}

/// A forced KDF cost below cryptsetup's minimum is refused before any benchmark or prompt (the ranges of
/// --pbkdf-memory and --pbkdf-parallel are checked by the parser already).
fn check_forced_cost(args: &LuksFormatArgs) -> anyhow::Result<()> {
    let Some(forced) = args.pbkdf_force_iterations else { return Ok(()) };
    // LUKS1 (also --glance and qcow2's LUKS) has PBKDF2 keyslots only.
    let luks1 =
        args.luks_type == Some(TypeArg::Luks1) || args.glance || args.format == super::convert::FormatArg::Qcow2;
    let pbkdf2 = luks1 || args.pbkdf == Some(PbkdfArg::Pbkdf2);
    let (minimum, what) = if pbkdf2 {
        (luks::PBKDF2_MIN_ITERATIONS, "PBKDF2 iterations")
    } else {
        (luks::ARGON2_MIN_TIME, "Argon2 time cost")
    };
    if forced < minimum {
        return Err(
            usage(format!("--pbkdf-force-iterations {forced}: at least {minimum} ({what}, as cryptsetup)")).into()
        );
    }
    Ok(())
}

fn resolve_kdf(
    args: &LuksFormatArgs,
    version: Version,
    hash: Hash,
    key_bytes: usize,
    rate: Option<format::Pbkdf2Rate>,
    printer: &Printer,
) -> anyhow::Result<Kdf> {
    let pbkdf = match (args.pbkdf, version) {
        (Some(PbkdfArg::Pbkdf2) | None, Version::Luks1) => PbkdfArg::Pbkdf2,
        (Some(_), Version::Luks1) => return Err(usage("LUKS1 keyslots use pbkdf2").into()),
        (Some(p), Version::Luks2) => p,
        (None, Version::Luks2) => PbkdfArg::Argon2id,
    };
    if pbkdf == PbkdfArg::Pbkdf2 {
        if args.pbkdf_memory.is_some() || args.pbkdf_parallel.is_some() {
            return Err(usage("--pbkdf-memory and --pbkdf-parallel apply to argon2 only").into());
        }
        let iterations = match (args.pbkdf_force_iterations, rate) {
            (Some(n), _) => n,
            (None, Some(rate)) => rate.iterations(args.iter_time, key_bytes),
            (None, None) => unreachable!("measured unless forced"),
        };
        return Ok(Kdf::Pbkdf2 { hash: hash.name().into(), iterations });
    }
    let parallel =
        args.pbkdf_parallel.unwrap_or_else(|| (super::cipher_threads() as u32).min(luks::ARGON2_MAX_PARALLEL));
    let variant = if pbkdf == PbkdfArg::Argon2i { Argon2Variant::Argon2i } else { Argon2Variant::Argon2id };
    let (time, memory_kib) = match (args.pbkdf_force_iterations, args.pbkdf_memory) {
        (Some(time), Some(memory)) => (time, memory),
        (Some(time), None) => (time, format::default_argon2_memory_kib()),
        (None, memory) => {
            let cap = memory.unwrap_or_else(format::default_argon2_memory_kib);
            let _busy = printer.busy("benchmarking Argon2");
            format::benchmark_argon2(variant, args.iter_time, cap, parallel)?
        }
    };
    Ok(match variant {
        Argon2Variant::Argon2i => Kdf::Argon2i { time, memory_kib, parallel },
        Argon2Variant::Argon2id => Kdf::Argon2id { time, memory_kib, parallel },
    })
}

/// Runs `cryptadm disk luks-format`.
pub fn run(args: LuksFormatArgs, printer: &Printer) -> anyhow::Result<ExitStatus> {
    crate::cmd::interrupt::remove_partials_on_signal();
    check_forced_cost(&args)?;
    if args.format == super::convert::FormatArg::Qcow2 {
        return super::convert::luks_format_qcow2(&args, &args.passphrase, printer);
    }
    if args.cluster_size.is_some() {
        return Err(usage("--cluster-size applies to --format qcow2").into());
    }
    let mut settings = resolve(&args, printer)?;
    let key = VolumeKey::generate(settings.options.key_bytes);
    let written = match &settings.target {
        Target::File { path } => write_image_file(&path.clone(), &mut settings, &key, printer)?,
        Target::Device { path, .. } => write_device(&path.clone(), &mut settings, &key, printer)?,
    };
    let o = &settings.options;
    printer.info(&format!(
        "formatted `{}`: {} {} {}-bit key, {}, {}-byte sectors, {} bytes of payload{}, UUID {}",
        args.target.display(),
        if o.version == Version::Luks1 { "LUKS1" } else { "LUKS2" },
        o.cipher,
        o.key_bytes * 8,
        describe_kdf(&o.kdf),
        o.sector_size,
        settings.payload_len,
        if written > 0 { format!(" ({written} bytes encrypted from --from)") } else { String::new() },
        o.uuid,
    ));
    if args.glance {
        let mut doc = crate::render::glance::image_properties(
            &args.target,
            settings.payload_len,
            args.key_id.as_deref(),
            args.key_deletion_policy == DeletionPolicy::OnImageDeletion,
        );
        let (kind, len) = match args.secret_type {
            super::convert::SecretTypeArg::Passphrase => {
                (crate::qcow2::secret::SecretType::Passphrase, settings.passphrase.expose().len())
            }
            super::convert::SecretTypeArg::Symmetric => {
                (crate::qcow2::secret::SecretType::Symmetric, settings.passphrase.expose().len() / 2)
            }
        };
        let name = args.target.file_stem().map_or_else(|| "image".to_owned(), |s| s.to_string_lossy().into_owned());
        doc.secret = Some(crate::render::openstack::secret_store(&name, kind, args.passphrase.key_file(), len));
        if args.key_id.is_none() {
            printer.warn("no --key-id: store the passphrase in the key manager and set os_encrypt_key_id and cinder_encryption_key_id");
        }
        let text = crate::render::documents(args.output_format.into(), [doc])?;
        printer.data(text.as_bytes()).context("writing to standard output")?;
    }
    Ok(ExitStatus::Success)
}

fn describe_kdf(kdf: &Kdf) -> String {
    match kdf {
        Kdf::Pbkdf2 { hash, iterations } => format!("pbkdf2-{hash} {iterations} iterations"),
        Kdf::Argon2i { time, memory_kib, parallel } | Kdf::Argon2id { time, memory_kib, parallel } => {
            format!("{} t={time} m={memory_kib} KiB p={parallel}", kdf.name())
        }
    }
}

/// Payload then header into a temporary file next to the target, flushed, renamed over it.
fn write_image_file(path: &Path, settings: &mut Settings, key: &VolumeKey, printer: &Printer) -> anyhow::Result<u64> {
    crate::atomic::write_with(path, crate::atomic::MODE_PRIVATE, |file| {
        let offset = settings.options.payload_offset();
        file.set_len(offset + settings.payload_len).context("sizing the image")?;
        write_contents(file, settings, key, printer)
    })
    .with_context(|| format!("writing the image `{}`", path.display()))
}

/// A block device is written in place: payload first, header last, so a failure leaves no valid-looking header.
fn write_device(path: &Path, settings: &mut Settings, key: &VolumeKey, printer: &Printer) -> anyhow::Result<u64> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .with_context(|| format!("opening `{}` for writing", path.display()))?;
    let written = write_contents(&file, settings, key, printer)?;
    file.sync_all().context("flushing the device")?;
    Ok(written)
}

fn write_contents(file: &File, settings: &mut Settings, key: &VolumeKey, printer: &Printer) -> anyhow::Result<u64> {
    let progress = printer.transfer("encrypting", settings.from.as_ref().map_or(0, |(_, len)| *len));
    let source = settings.from.as_mut().map(|(raw, _)| raw);
    format::format_with_payload(
        file,
        &settings.options,
        key,
        settings.passphrase.expose(),
        source,
        settings.payload_len,
        super::cipher_threads(),
        progress.as_ref(),
    )
    .context("formatting the volume")
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
