//! `cryptadm disk luks-format`.

use super::LuksPassphraseArgs;
use crate::cmd::error::Failure;
use crate::cmd::printer::Printer;
use crate::crypto::Passphrase;
use crate::crypto::argon2::Argon2Variant;
use crate::disk::output::{self, Output};
use crate::disk::pipeline::{self, RawSource};
use crate::exit::ExitStatus;
use crate::interact::Interaction;
use crate::luks::format::{self, FormatOptions};
use crate::luks::{self, Hash, Kdf, Version};
use crate::qcow2::Container;
use crate::qcow2::secret::SecretType;
use anyhow::Context;
use clap::builder::TypedValueParser;
use clap::{Args, ValueEnum};
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
/// for image files. An image file is written to a temporary file and renamed into place once it is complete (with
/// --clevis-pin, bound; with --upload, uploaded), so a failure leaves nothing behind, and with --force the old
/// file as it was; a block device is never resized. An existing LUKS header or non-empty target is overwritten
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
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = super::FormatArg::Raw)]
    pub format: super::FormatArg,
    /// qcow2 cluster size in bytes, 512 to 2M, a power of two (default 64K, QEMU's)
    #[arg(long, value_name = "BYTES", value_parser = super::parse_cluster_size)]
    pub cluster_size: Option<u32>,
    /// How the passphrase source becomes the LUKS passphrase: verbatim (`passphrase`, Nova; the default) or
    /// lowercase hex of the key bytes it holds (`symmetric`, Cinder and os-brick); with --secret, the secret's
    /// Barbican type decides and a contradicting --secret-type is refused
    #[arg(long, value_enum, value_name = "TYPE", help_heading = "Passphrase")]
    pub secret_type: Option<super::SecretTypeArg>,
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
    #[arg(long, value_name = "SIZE", value_parser = super::parse_size)]
    pub size: Option<u64>,
    /// Encrypt this raw disk image into TARGET (streamed; the payload is its size rounded up to a sector); with
    /// --format qcow2 also a plain qcow2 image
    #[arg(long, value_name = "RAW_IMAGE")]
    pub from: Option<PathBuf>,
    /// Make an image for OpenStack: LUKS1, a UTF-8 text passphrase, and print its Glance properties (as
    /// `disk convert --glance` prints them)
    #[command(flatten)]
    pub glance: super::GlanceArgs,
    /// Overwrite an existing LUKS header or a non-empty target
    #[arg(long)]
    pub force: bool,
    /// The image file to create, or an existing block device
    #[arg(value_name = "TARGET")]
    pub target: PathBuf,
    /// Also bind the volume to Tang servers, as `clevis luks bind` does (LUKS2; see `disk clevis-bind`). Last:
    /// the heading of these flags carries over to whatever follows them in the help.
    /// The key managers of an sss pin's `aws-kms`, `vault-transit` and `kmip` pins (docs/threshold.md).
    #[command(flatten)]
    key_managers: Box<crate::cmd::clevis_args::PinKeyManagerArgs>,
    #[command(flatten)]
    clevis: crate::cmd::clevis_args::ClevisArgs,
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

/// Everything resolved before anything is written.
struct Settings {
    options: FormatOptions,
    passphrase: Passphrase,
    output: Output,
    payload_len: u64,
    from: Option<RawSource>,
    cloud: Option<crate::cmd::openstack_args::CloudRun>,
    key_manager: Option<super::KeyManagerSecret>,
}

fn usage(message: impl Into<String>) -> Failure {
    Failure::new(ExitStatus::Usage, message)
}

fn invalid(message: impl Into<String>) -> Failure {
    Failure::new(ExitStatus::InvalidInput, message)
}

fn resolve(args: &LuksFormatArgs, printer: &Printer) -> anyhow::Result<Settings> {
    let glance = args.glance.openstack();
    let version = match (args.luks_type, glance) {
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
    let inputs: Vec<(&Path, &str)> = args.from.iter().map(|p| (p.as_path(), "--from")).collect();
    let output = output::check(&args.target, "TARGET", &inputs, args.force)?;
    let from = args.from.as_deref().map(RawSource::open).transpose()?;
    let is_device = matches!(output, Output::Device { .. });
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
    let payload_len =
        pipeline::payload_len(&output, args.size, from.as_ref().map(RawSource::len), payload_offset, sector_size)?;
    let key_bytes = (args.key_size / 8) as usize;
    luks::format::is_uuid(args.uuid.as_deref().unwrap_or("00000000-0000-0000-0000-000000000000"))
        .then_some(())
        .ok_or_else(|| invalid("--uuid is not a UUID (8-4-4-4-12 hex digits)"))?;
    args.glance.check(true, args.glance.cloud.secret.is_some(), &args.target)?;
    let cloud = args.glance.cloud.connect(printer)?;
    let explicit_type = args.secret_type.map(SecretType::from);
    let key_manager = args.glance.key_manager_secret(cloud.as_ref(), explicit_type, &args.target, printer)?;
    let passphrase = match &key_manager {
        Some(secret) => Passphrase::new(secret.passphrase().to_vec()),
        None => {
            let passphrase = args.passphrase.resolve(printer, true)?;
            match args.secret_type.unwrap_or_default() {
                super::SecretTypeArg::Passphrase => passphrase,
                super::SecretTypeArg::Symmetric => {
                    let hex = SecretType::Symmetric.passphrase(passphrase.expose());
                    Passphrase::new(hex.to_vec())
                }
            }
        }
    };
    if glance {
        check_text_passphrase(&passphrase, key_manager.as_ref())?;
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
    Ok(Settings { options, passphrase, output, payload_len, from, cloud, key_manager })
}

/// QEMU looks the secret up as a UTF-8 string and measures it with strlen.
fn check_text_passphrase(passphrase: &Passphrase, secret: Option<&super::KeyManagerSecret>) -> anyhow::Result<()> {
    let text = std::str::from_utf8(passphrase.expose()).ok();
    if !text.is_none_or(|t| t.contains('\0')) {
        return Ok(());
    }
    let failure = match secret {
        Some(secret) => invalid(format!(
            "secret {} is a passphrase secret holding binary bytes: QEMU needs a text passphrase (valid UTF-8 \
             without NUL bytes) for an OpenStack image",
            secret.uuid
        ))
        .with_hint(
            "store a text passphrase in Barbican, or keep binary key bytes as a `symmetric` secret (its lowercase hex \
             is the passphrase, as os-brick derives it)",
        ),
        None => invalid("an image for OpenStack needs a text passphrase: QEMU requires valid UTF-8 without NUL bytes")
            .with_hint("use a text passphrase, e.g. `openssl rand -base64 32 | tr -d '\\n' > pass.txt`"),
    };
    Err(failure.into())
}

/// A forced KDF cost below cryptsetup's minimum is refused before any benchmark or prompt (the ranges of
/// --pbkdf-memory and --pbkdf-parallel are checked by the parser already).
fn check_forced_cost(args: &LuksFormatArgs) -> anyhow::Result<()> {
    let Some(forced) = args.pbkdf_force_iterations else { return Ok(()) };
    // LUKS1 (also --glance and qcow2's LUKS) has PBKDF2 keyslots only.
    let luks1 =
        args.luks_type == Some(TypeArg::Luks1) || args.glance.openstack() || args.format == super::FormatArg::Qcow2;
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
        args.pbkdf_parallel.unwrap_or_else(|| (pipeline::cipher_threads() as u32).min(luks::ARGON2_MAX_PARALLEL));
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
    if args.format == super::FormatArg::Qcow2 {
        if args.clevis.clevis_pin.is_some() {
            return Err(usage("--clevis-pin applies to LUKS2 images (--format raw)").into());
        }
        return run_qcow2(&args, printer);
    }
    if args.cluster_size.is_some() {
        return Err(usage("--cluster-size applies to --format qcow2").into());
    }
    let settings = resolve(&args, printer)?;
    let clevis = clevis_prepare(&args, &settings.options, printer)?;
    // The binding goes into the header write that makes the volume: the target appears bound, or not at all.
    let token = clevis.as_ref().map(|(_, prepared)| prepared.token_slot()).transpose()?;
    // The OpenStack end (upload, Glance document) runs on the complete image before it takes its place: a failed
    // upload leaves whatever was at TARGET (with --force, the old image) as it was.
    let mut failure = None;
    let openstack: Option<pipeline::BeforeRename<'_, pipeline::Formatted>> = args.glance.openstack().then(|| {
        let (cloud, key_manager, passphrase_len) =
            (settings.cloud, settings.key_manager.as_ref(), settings.passphrase.expose().len());
        let (args, failure) = (&args, &mut failure);
        Box::new(move |formatted: &pipeline::Formatted, data: &std::fs::File| {
            let secret = match key_manager {
                Some(secret) => secret.facts(),
                None => output_secret(args, passphrase_len),
            };
            let key_id = key_manager.map(|s| s.uuid.as_str());
            let finished = args.glance.finish(
                cloud,
                &args.target,
                data,
                Container::Raw,
                formatted.payload_len,
                Some(secret),
                key_id,
                printer,
            );
            finished.map_err(|e| {
                *failure = Some(e);
                crate::disk::Error::Withheld
            })
        }) as pipeline::BeforeRename<'_, pipeline::Formatted>
    });
    let formatted = pipeline::format_luks(
        settings.from,
        &settings.options,
        settings.passphrase.expose(),
        settings.payload_len,
        &settings.output,
        token.as_ref(),
        openstack,
        printer,
    )
    .map_err(|e| failure.take().unwrap_or_else(|| e.into()))?;
    let o = &settings.options;
    printer.info(&format!(
        "formatted `{}`: {} {} {}-bit key, {}, {}-byte sectors, {} bytes of payload{}, UUID {}",
        args.target.display(),
        if o.version == Version::Luks1 { "LUKS1" } else { "LUKS2" },
        o.cipher,
        o.key_bytes * 8,
        describe_kdf(&o.kdf),
        o.sector_size,
        formatted.payload_len,
        if formatted.written > 0 {
            format!(" ({} bytes encrypted from --from)", formatted.written)
        } else {
            String::new()
        },
        o.uuid,
    ));
    if let (Some((pin, _)), Some((slot, token))) = (&clevis, formatted.bound) {
        printer.info(&format!("bound to {}: keyslot {slot}, token {token} (type clevis)", pin.describe()));
    }
    Ok(ExitStatus::Success)
}

/// With --clevis-pin: the binding's passphrase and JWE, made before anything is written (an unreachable or
/// untrusted Tang server leaves the target untouched).
fn clevis_prepare(
    args: &LuksFormatArgs,
    options: &FormatOptions,
    printer: &Printer,
) -> anyhow::Result<Option<(crate::kms::clevis::Pin, crate::disk::clevis::Prepared)>> {
    let Some(pin) = args.clevis.pin()? else { return Ok(None) };
    crate::cmd::clevis_args::describe(&pin, printer);
    if options.version != Version::Luks2 {
        return Err(usage("--clevis-pin needs LUKS2 (LUKS1 has no tokens)").into());
    }
    let _busy = printer.busy(&format!("encrypting the binding's passphrase to {}", pin.describe()));
    let settings = crate::kms::clevis::Settings {
        key_managers: args.key_managers.key_managers()?,
        ..args.clevis.settings(Default::default())?
    };
    let prepared = crate::disk::clevis::prepare(&pin, &settings)?;
    Ok(Some((pin, prepared)))
}

/// The output's secret as the Glance document names it: its type, its file, its length in bytes.
fn output_secret(args: &LuksFormatArgs, passphrase_len: usize) -> (SecretType, Option<&Path>, usize) {
    match args.secret_type.unwrap_or_default() {
        super::SecretTypeArg::Passphrase => (SecretType::Passphrase, args.passphrase.key_file(), passphrase_len),
        // The passphrase is the hex of the key bytes.
        super::SecretTypeArg::Symmetric => (SecretType::Symmetric, args.passphrase.key_file(), passphrase_len / 2),
    }
}

/// `disk luks-format --format qcow2`: the pipeline from an empty disk (`--size`) or a raw or plain qcow2 image
/// (`--from`) into qcow2 with LUKS1 inside.
fn run_qcow2(args: &LuksFormatArgs, printer: &Printer) -> anyhow::Result<ExitStatus> {
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
    if args.cipher != "aes-xts-plain64" || args.hash != HashArg::Sha256 {
        return Err(usage("--format qcow2 writes aes-xts-plain64 with sha256").into());
    }
    let inputs: Vec<(&Path, &str)> = args.from.iter().map(|p| (p.as_path(), "--from")).collect();
    let output = output::check(&args.target, "TARGET", &inputs, args.force)?;
    output.require_file("a qcow2 image is a file")?;
    args.glance.check(true, args.glance.cloud.secret.is_some(), &args.target)?;
    let source = match &args.from {
        Some(path) => {
            let source = pipeline::Source::open(path)?;
            if source.encrypted() {
                return Err(invalid(format!("`{}` is encrypted", path.display()))
                    .with_hint("use `cryptadm disk convert` to re-encrypt an encrypted image")
                    .into());
            }
            source.unlock(None)?
        }
        None => pipeline::Unlocked::empty(0),
    };
    let size = match (args.size, args.from.is_some()) {
        (None, false) => return Err(usage("a new image needs --size SIZE or --from IMAGE").into()),
        (Some(size), _) if size < source.len() => {
            return Err(invalid(format!("--size {size} is smaller than the source ({} bytes)", source.len())).into());
        }
        (Some(size), _) => size.div_ceil(512) * 512,
        (None, true) => source.len().div_ceil(512) * 512,
    };
    let source = source.resize(size);
    let secret_type = SecretType::from(args.secret_type.unwrap_or_default());
    let cloud = args.glance.cloud.connect(printer)?;
    let explicit_type = args.secret_type.map(SecretType::from);
    let key_manager = args.glance.key_manager_secret(cloud.as_ref(), explicit_type, &args.target, printer)?;
    let (passphrase, secret_len) = match &key_manager {
        Some(secret) => (secret.passphrase(), secret.bytes.len()),
        None => {
            let secret = args.passphrase.resolve(printer, secret_type == SecretType::Passphrase)?;
            (secret_type.passphrase(secret.expose()), secret.expose().len())
        }
    };
    if args.glance.openstack() {
        check_text_passphrase(&Passphrase::new(passphrase.to_vec()), key_manager.as_ref())?;
    }
    let kdf = match args.pbkdf_force_iterations {
        Some(n) => pipeline::KdfChoice::Forced(n),
        None => pipeline::KdfChoice::Benchmark(args.iter_time),
    };
    let plan = pipeline::Plan {
        container: Container::Qcow2,
        cluster_bits: args.cluster_size.unwrap_or(crate::qcow2::DEFAULT_CLUSTER_BITS),
        key: pipeline::Key::Fresh(&passphrase),
        kdf,
    };
    let mut failure = None;
    let openstack: Option<pipeline::BeforeRename<'_, crate::qcow2::Converted>> = args.glance.openstack().then(|| {
        let (key_manager, failure) = (key_manager.as_ref(), &mut failure);
        Box::new(move |converted: &crate::qcow2::Converted, data: &std::fs::File| {
            let secret = match key_manager {
                Some(secret) => secret.facts(),
                None => {
                    let (kind, file, _) = output_secret(args, 0);
                    (kind, file, secret_len)
                }
            };
            let key_id = key_manager.map(|s| s.uuid.as_str());
            let finished = args.glance.finish(
                cloud,
                &args.target,
                data,
                Container::Qcow2,
                converted.virtual_size,
                Some(secret),
                key_id,
                printer,
            );
            finished.map_err(|e| {
                *failure = Some(e);
                crate::disk::Error::Withheld
            })
        }) as pipeline::BeforeRename<'_, crate::qcow2::Converted>
    });
    let converted = pipeline::convert(source, &plan, &output, None, openstack, printer)
        .map_err(|e| failure.take().unwrap_or_else(|| e.into()))?;
    printer.info(&format!(
        "formatted `{}`: qcow2 with LUKS1 aes-xts-plain64 512-bit key, {} bytes of disk, {} data clusters, a \
         {}-byte file",
        args.target.display(),
        converted.virtual_size,
        converted.data_clusters.unwrap_or(0),
        converted.file_len,
    ));
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
