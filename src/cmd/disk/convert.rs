//! `cryptadm disk convert`: flags into a call of the disk pipeline ([`crate::disk::pipeline`]), and the result
//! rendered.

use super::{FormatArg, LuksPassphraseArgs, SecretTypeArg};
use crate::cmd::error::Failure;
use crate::cmd::printer::Printer;
use crate::disk::output;
use crate::disk::pipeline::{self, KdfChoice, Key, KeyFile, Plan, SecretSink, Source};
use crate::exit::ExitStatus;
use crate::interact::Interaction;
use crate::qcow2::Container;
use crate::qcow2::secret::SecretType;
use anyhow::Context;
use clap::{Args, ValueEnum};
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
/// unallocated in qcow2 outputs. The output is built in a temporary file next to DST and renamed into place once
/// it is complete (with --upload, uploaded), so a failure leaves DST as it was; the source is opened read-only.
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
    /// How the output's secret becomes its LUKS passphrase: verbatim (`passphrase`, Nova; the default) or
    /// lowercase hex of the key bytes (`symmetric`, Cinder and os-brick); a key-manager secret's own Barbican type
    /// decides, and a contradicting --secret-type is refused
    #[arg(long, value_enum, value_name = "TYPE", help_heading = "Passphrase")]
    pub secret_type: Option<SecretTypeArg>,
    /// How the source's --key-file becomes its passphrase (default: --secret-type)
    #[arg(long, value_enum, value_name = "TYPE", help_heading = "Passphrase")]
    pub source_secret_type: Option<SecretTypeArg>,
    /// The source image's Barbican secret (its os_encrypt_key_id, UUID or href): the source's passphrase is read
    /// from the key manager (same rules as --secret), so no passphrase needs to be on disk
    #[arg(long, value_name = "UUID|HREF", requires = "key_manager", help_heading = "OpenStack")]
    pub source_secret: Option<String>,
    /// qcow2 cluster size in bytes, 512 to 2M, a power of two (default 64K, QEMU's)
    #[arg(long, value_name = "BYTES", value_parser = super::parse_cluster_size)]
    pub cluster_size: Option<u32>,
    #[command(flatten)]
    kdf: KdfArgs,
    #[command(flatten)]
    glance: super::GlanceArgs,
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

/// Nova's snapshot key options.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum KeyChoice {
    /// The source's volume key and passphrase (Nova's snapshot); with --key-manager the source's secret is copied
    /// into a new secret the output owns
    Same,
    /// The source's volume key and passphrase, sharing the source's key-manager secret itself (Nova's shelve);
    /// never under a deletion policy
    Shelve,
    /// A new volume key and a generated secret, written to --new-key-file
    New,
    /// A new volume key; the secret in --new-key-file
    Existing,
    /// No encryption: a plain image
    None,
}

fn usage(message: impl Into<String>) -> Failure {
    Failure::new(ExitStatus::Usage, message)
}

/// Reads a whole secret file (at most 8 MiB, cryptsetup's key-file limit).
fn read_secret_file(path: &Path) -> anyhow::Result<Zeroizing<Vec<u8>>> {
    let file = std::fs::File::open(path).with_context(|| format!("reading the key file `{}`", path.display()))?;
    let bytes = crate::crypto::secret::read_secret(file, 8 << 20)
        .with_context(|| format!("reading the key file `{}`", path.display()))?;
    if bytes.is_empty() {
        return Err(
            Failure::new(ExitStatus::InvalidInput, format!("the key file `{}` is empty", path.display())).into()
        );
    }
    Ok(Zeroizing::new(bytes))
}

/// Runs `cryptadm disk convert`.
pub fn run(args: ConvertArgs, printer: &Printer) -> anyhow::Result<ExitStatus> {
    crate::cmd::interrupt::remove_partials_on_signal();
    let secret_type = SecretType::from(args.secret_type.unwrap_or_default());
    let source_type = args.source_secret_type.or(args.secret_type).map_or(secret_type, SecretType::from);
    let key_manager = args.glance.cloud.key_manager.is_some();
    let keeps_source_key = matches!(args.encryption_key, KeyChoice::Same | KeyChoice::Shelve);
    // Checked before anything else, as --secret is: an href carrying credentials is refused without being echoed.
    if let Some(source) = &args.source_secret {
        crate::kms::KeyRef::parse_secret(source)?;
    }
    // The source's secret in the key manager: --source-secret, or (same and shelve) --secret as before.
    let source_id = match (&args.source_secret, &args.glance.cloud.secret) {
        (Some(source), Some(secret)) if keeps_source_key && source != secret => {
            return Err(usage("--source-secret and --secret name two secrets, but same and shelve keep the source's")
                .with_hint("give the source's secret once, as --source-secret")
                .into());
        }
        (Some(source), _) => Some(source.clone()),
        (None, Some(secret)) if keeps_source_key => Some(secret.clone()),
        _ => None,
    };
    // The source's passphrase comes from the key manager: a --key-file beside it would be silently ignored.
    if source_id.is_some() && args.passphrase.key_file_given() {
        return Err(usage("--key-file and --source-secret both give the source's passphrase: choose one")
            .with_hint("drop --key-file: --source-secret reads the source's passphrase from the key manager")
            .into());
    }
    let output_secret_named = args.glance.cloud.secret.is_some() && !keeps_source_key;
    match (args.encryption_key, key_manager, output_secret_named) {
        (KeyChoice::None, true, _) if source_id.is_none() || args.glance.cloud.secret.is_some() => {
            return Err(usage("--encryption-key none makes a plain image: there is no secret for --key-manager")
                .with_hint("--key-manager with none reads only the source's secret (--source-secret)")
                .into());
        }
        (KeyChoice::New, true, true) => {
            return Err(usage("--encryption-key new stores a new secret: drop --secret, or choose existing").into());
        }
        (KeyChoice::Existing, true, false) => {
            return Err(
                usage("--encryption-key existing with --key-manager needs --secret UUID|HREF (the output's)").into()
            );
        }
        (KeyChoice::Same | KeyChoice::Shelve, true, _) if source_id.is_none() => {
            return Err(usage("--encryption-key same and shelve with --key-manager need --source-secret UUID|HREF")
                .with_hint("the source image's secret is its os_encrypt_key_id")
                .into());
        }
        (KeyChoice::Shelve, false, _) => {
            return Err(usage("--encryption-key shelve shares the source's key-manager secret")
                .with_hint("give --key-manager barbican --source-secret UUID, or use same")
                .into());
        }
        _ => {}
    }
    if key_manager && args.new_key_file.is_some() {
        return Err(usage("--new-key-file and --key-manager both keep the output's secret: choose one").into());
    }
    match (args.encryption_key, &args.new_key_file) {
        (KeyChoice::New | KeyChoice::Existing, None) if !key_manager => {
            return Err(usage("--encryption-key new and existing need --new-key-file FILE").into());
        }
        (KeyChoice::Same | KeyChoice::Shelve | KeyChoice::None, Some(_)) => {
            return Err(usage("--new-key-file applies to --encryption-key new and existing only").into());
        }
        _ => {}
    }
    let output = output::check(&args.dst, "DST", &[(&args.src, "SRC")], args.force)?;
    output.require_file("convert writes image files")?;
    // Secrets this run does not create: the output's named by --secret, or the source's shared (shelve).
    let existing_secret = args.encryption_key == KeyChoice::Shelve || output_secret_named;
    args.glance.check(args.encryption_key != KeyChoice::None, existing_secret, &args.dst)?;
    // `same` with a key manager stores a copy of the source's secret (also in the old spelling `same --secret`,
    // which check() takes for an existing output secret): its name is checked before any login too.
    if args.encryption_key == KeyChoice::Same && key_manager {
        args.glance.check_new_secret_name(&args.dst)?;
    }
    // A generated secret never replaces a file; checked before any work.
    let mut key_file = match (args.encryption_key, &args.new_key_file) {
        (KeyChoice::New, Some(path)) => Some(KeyFile::new(path)?),
        _ => None,
    };
    let source = Source::open(&args.src)?;
    super::warn_all(&source.warnings(), printer);
    let container = args.format.map_or(source.container(), Container::from);
    if keeps_source_key && !source.encrypted() {
        return Err(usage(format!("`{}` is not encrypted: there is no key to keep", args.src.display()))
            .with_hint("choose --encryption-key new, existing or none")
            .into());
    }
    let cloud = args.glance.cloud.connect(printer)?;
    let source_secret = match (&cloud, &source_id) {
        (Some(cloud), Some(id)) => {
            let explicit = args.source_secret_type.or(args.secret_type).map(SecretType::from);
            let fetched = super::fetch_secret(cloud, id, explicit, printer)?;
            if args.encryption_key == KeyChoice::Shelve {
                // Shelve shares the source's secret: refused if an image deletes it with itself.
                cloud.refuse_shared_if_deleted(
                    &fetched.uuid,
                    "shelve shares it",
                    "use --encryption-key same, which copies it into a secret this image owns",
                )?;
            }
            Some(fetched)
        }
        _ => None,
    };
    let source_passphrase = match (&source_secret, source.encrypted()) {
        (Some(secret), _) => Some(secret.passphrase()),
        (None, true) => {
            let raw = args.passphrase.resolve(printer, false)?;
            Some(source_type.passphrase(raw.expose()))
        }
        (None, false) => None,
    };
    // The output's key-manager secret: a copy of the source's (same, Nova's snapshot), the source's itself
    // (shelve), or the one --secret names or a new one (new, existing).
    let km_secret = match (args.encryption_key, &cloud, source_secret) {
        (KeyChoice::Same, Some(cloud), Some(source)) => {
            let copy = args.glance.store_secret(cloud, source.secret_type, source.bytes.clone(), &args.dst, printer)?;
            printer.info(&format!(
                "secret {} is a copy of the source's secret {} (Nova's snapshot: the image owns its secret)",
                copy.uuid, source.uuid
            ));
            Some(copy)
        }
        (KeyChoice::Shelve, _, Some(source)) => Some(source),
        (KeyChoice::New | KeyChoice::Existing, _, _) => args.glance.key_manager_secret(
            cloud.as_ref(),
            args.secret_type.map(SecretType::from),
            &args.dst,
            printer,
        )?,
        _ => None,
    };
    let new_secret = km_secret.as_ref().filter(|_| matches!(args.encryption_key, KeyChoice::New | KeyChoice::Existing));
    // The output's secret: its bytes (None: the source's, or none), the passphrase they give, where they are.
    type Bytes = Option<Zeroizing<Vec<u8>>>;
    let (secret, passphrase, secret_file): (Bytes, Bytes, Option<PathBuf>) =
        match (args.encryption_key, &args.new_key_file) {
            (KeyChoice::New | KeyChoice::Existing, _) if new_secret.is_some() => {
                let secret = new_secret.as_ref().expect("checked");
                (Some(secret.bytes.clone()), Some(secret.passphrase()), None)
            }
            (KeyChoice::New, path) => {
                let secret = Zeroizing::new(secret_type.generate().to_vec());
                let passphrase = secret_type.passphrase(&secret);
                (Some(secret), Some(passphrase), path.clone())
            }
            (KeyChoice::Existing, Some(path)) => {
                let secret = read_secret_file(path)?;
                let passphrase = secret_type.passphrase(&secret);
                (Some(secret), Some(passphrase), Some(path.clone()))
            }
            _ => (None, None, args.passphrase.key_file().map(Path::to_path_buf)),
        };
    let unlocked = source.unlock(source_passphrase.as_deref().map(|p| &p[..]))?;
    let key = match args.encryption_key {
        KeyChoice::None => Key::None,
        KeyChoice::Same | KeyChoice::Shelve => Key::Same(source_passphrase.as_deref().expect("encrypted")),
        KeyChoice::New | KeyChoice::Existing => Key::Fresh(passphrase.as_deref().expect("resolved above")),
    };
    let kdf = match args.kdf.pbkdf_force_iterations {
        Some(n) => KdfChoice::Forced(n),
        None => KdfChoice::Benchmark(args.kdf.iter_time),
    };
    let encrypted = !matches!(key, Key::None);
    let plan =
        Plan { container, cluster_bits: args.cluster_size.unwrap_or(crate::qcow2::DEFAULT_CLUSTER_BITS), key, kdf };
    let sink = match (&mut key_file, &secret) {
        (Some(file), Some(secret)) => Some((file as &mut dyn SecretSink, &secret[..])),
        _ => None,
    };
    // The OpenStack end (upload, Glance document) runs on the complete image before it takes its place: a failed
    // upload leaves whatever was at DST (with --force, the old image) as it was.
    let mut failure = None;
    let openstack: Option<pipeline::BeforeRename<'_, crate::qcow2::Converted>> = args.glance.openstack().then(|| {
        let (args, failure, secret, km_secret) = (&args, &mut failure, &secret, km_secret.as_ref());
        let (secret_file, encrypted) = (secret_file.as_deref(), encrypted);
        Box::new(move |converted: &crate::qcow2::Converted, data: &std::fs::File| {
            let finished = match km_secret {
                Some(km) => {
                    let facts = encrypted.then(|| km.facts());
                    let key_id = Some(km.uuid.as_str());
                    args.glance.finish(
                        cloud,
                        &args.dst,
                        data,
                        container,
                        converted.virtual_size,
                        facts,
                        key_id,
                        printer,
                    )
                }
                None => {
                    let facts = encrypted.then(|| {
                        let (kind, len) = match secret {
                            Some(secret) => (secret_type, secret.len()),
                            // `same`: the source's secret, as long as its key file.
                            None => (
                                source_type,
                                secret_file.and_then(|p| std::fs::metadata(p).ok()).map_or(0, |m| m.len() as usize),
                            ),
                        };
                        (kind, secret_file, len)
                    });
                    args.glance.finish(cloud, &args.dst, data, container, converted.virtual_size, facts, None, printer)
                }
            };
            finished.map_err(|e| {
                *failure = Some(e);
                crate::disk::Error::Withheld
            })
        }) as pipeline::BeforeRename<'_, crate::qcow2::Converted>
    });
    let converted = pipeline::convert(unlocked, &plan, &output, sink, openstack, printer)
        .map_err(|e| failure.take().unwrap_or_else(|| e.into()))?;
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
    Ok(ExitStatus::Success)
}
