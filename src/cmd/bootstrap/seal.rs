//! `cryptadm bootstrap seal`: encrypt a machine configuration into an EncryptedConfig document.

use super::PluginArgs;
use crate::atomic;
use crate::cmd::OutputFormatArg;
use crate::cmd::error::Failure;
use crate::cmd::printer::Printer;
use crate::cmd::printer::plural;
use crate::cmd::secrets::{NO_SOURCE_HINT, PassphraseArgs, StdinClaim, is_stdin};
use crate::exit::ExitStatus;
use crate::interact::Interaction;
use crate::kms::backends::{self, Use};
use crate::machineadm::{self, Nonces, RemoteConfig, SealRequest};
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;

/// Examples for `cryptadm bootstrap seal`.
pub const EXAMPLES: &str = "Examples:
  # Seal for the built-in file provider; the machine reads the passphrase from
  # /etc/machineadm/passphrase
  cryptadm bootstrap seal --in machine-config.yaml --provider file \\
      --passphrase-uri file:///etc/machineadm/passphrase --passphrase-file passphrase \\
      --out sealed.yaml

  # Let AWS KMS make the passphrase (GenerateDataKey), and print cloud-init userdata; the machine
  # unwraps it with KMS Decrypt (its instance profile)
  cryptadm bootstrap seal --in machine-config.yaml --provider aws-kms --cloud-init \\
      --passphrase-uri aws-kms://arn:aws:kms:us-west-2:111122223333:alias/capi > userdata

  # ... or an Ignition config (Fedora CoreOS, Flatcar), with cryptadm installed elsewhere on the
  # machine
  cryptadm bootstrap seal --in machine-config.yaml --provider file \\
      --passphrase-uri file:///etc/machineadm/passphrase --passphrase-file passphrase \\
      --ignition --cryptadm-path /opt/bin/cryptadm > config.ign

  # Wrap a random passphrase with a KMIP key (an HSM's) by its unique identifier; the machine
  # unwraps it with its own client certificate (CRYPTADM_KMIP_* in /etc/cryptadm/kmip.env)
  cryptadm bootstrap seal --in machine-config.yaml --provider kmip --passphrase-uri kmip://KEY-UID \\
      --kmip-server kmip.example:5696 --kmip-cacert kmip-ca.pem --kmip-client-cert admin.pem \\
      --kmip-client-key admin.key --ignition > config.ign

  # A large configuration out of band: seal it, put it where the machine fetches it (here over
  # HTTPS), and ship userdata holding a RemoteConfig pointer to it plus the small in-band part
  # (e.g. the join token)
  cryptadm bootstrap seal --in kubeadm.yaml --provider file \\
      --passphrase-uri file:///etc/machineadm/passphrase --passphrase-file passphrase \\
      --out machine-0.yaml
  curl --fail -T machine-0.yaml https://config.example/machines/machine-0.yaml
  cryptadm bootstrap seal --in join-token.yaml --provider file \\
      --passphrase-uri file:///etc/machineadm/passphrase --passphrase-file passphrase \\
      --remote-config https=https://config.example/machines/machine-0.yaml --cloud-init > userdata

  # Network-bound: a random passphrase encrypted to two of three Tang servers (clevis's sss pin);
  # the machine recovers it from them at boot, with no credentials (docs/tang.md; \"thp\" pins one)
  sss='{\"t\":2,\"pins\":{\"tang\":[{\"url\":\"http://t1\"},{\"url\":\"http://t2\"},{\"url\":\"http://t3\"}]}}'
  cryptadm bootstrap seal --in machine-config.yaml --provider clevis --clevis-pin sss \\
      --clevis-config \"$sss\" --clevis-trust-adv --cloud-init > userdata

  # Render your own bootstrap template ({{ machine_config | gzipBase64 }})
  cryptadm bootstrap seal --in machine-config.yaml --provider file \\
      --passphrase-uri file:///etc/machineadm/passphrase --passphrase-file passphrase \\
      --template bootstrap.tmpl";

/// Encrypt a machine configuration into an EncryptedConfig document (or cloud-init userdata, or an Ignition config)
///
/// The configuration is sealed with AES-256-GCM under a key derived from the passphrase with
/// PBKDF2-HMAC-SHA-512 (50,000 iterations, fresh 16-byte salt and 12-byte IV). The passphrase comes from
/// --passphrase-file, CRYPTADM_PASSPHRASE_FILE or CRYPTADM_PASSPHRASE; without one, a plugin provider makes a
/// new one (its `new-passphrase` verb), and for the built-in `file` provider a terminal prompt asks for it twice.
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES, after_long_help = crate::cmd::long_help_footer(EXAMPLES))]
pub struct SealArgs {
    /// The machine configuration to seal (`-`: standard input); any bytes, usually a YAML stream
    #[arg(long = "in", value_name = "FILE")]
    pub input: PathBuf,
    #[allow(missing_docs)]
    #[arg(long, value_name = "NAME", help = crate::kms::backends::provider_help())]
    pub provider: String,
    #[allow(missing_docs)]
    #[arg(long, value_name = "URI", help = crate::kms::backends::help_for(Use::Provider))]
    pub passphrase_uri: Option<String>,
    #[command(flatten)]
    clevis: crate::cmd::clevis_args::ClevisArgs,
    #[command(flatten)]
    passphrase: PassphraseArgs,
    #[allow(missing_docs)]
    #[arg(long, value_name = "PROVIDER=URI", value_parser = parse_remote_config,
          help = crate::kms::backends::help_for(Use::RemoteConfig), help_heading = "Remote configuration")]
    pub remote_config: Vec<(String, String)>,
    /// Print #cloud-config userdata that writes the sealed stream (0600, /run/machineadm/machineadm_config.yaml)
    /// and runs `cryptadm bootstrap open` from runcmd
    #[arg(long, help_heading = "Output", conflicts_with = "ignition")]
    pub cloud_init: bool,
    /// Print an Ignition config (spec 3.3.0) that writes the sealed stream (0600,
    /// /etc/machineadm/machineadm_config.yaml) and a oneshot unit, cryptadm-bootstrap-open.service, that runs
    /// `cryptadm bootstrap open` into /run/machineadm before kubeadm.service and kubelet.service, once per machine
    /// (a successful open leaves /var/lib/machineadm/bootstrap-opened, and later boots skip the unit)
    #[arg(long, help_heading = "Output", conflicts_with = "template")]
    pub ignition: bool,
    /// Where --cloud-init and --ignition expect cryptadm on the machine: an absolute path of letters, digits and
    /// `/._-+`
    #[arg(long, value_name = "PATH", help_heading = "Output", default_value = machineadm::DEFAULT_CRYPTADM_PATH)]
    pub cryptadm_path: String,
    /// Render this bootstrap template (variable `machine_config`, filters `base64`, `gzipBase64`)
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub template: Option<PathBuf>,
    /// Write to FILE (mode 0600, atomically) instead of standard output
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub out: Option<PathBuf>,
    /// Format of the printed documents
    #[arg(long, value_enum, default_value_t, value_name = "FORMAT", help_heading = "Output",
          conflicts_with_all = ["cloud_init", "template", "ignition"])]
    pub output_format: OutputFormatArg,
    #[command(flatten)]
    plugin: PluginArgs,
    #[cfg(feature = "test-vectors")]
    #[command(flatten)]
    fixed: FixedNonceArgs,
}

/// Known-answer tests only, in builds with the `test-vectors` feature (never a release binary): a fixed salt and
/// IV reproduce the spec's vector byte for byte. Reusing an IV with one passphrase breaks AES-GCM.
#[cfg(feature = "test-vectors")]
#[derive(clap::Args, Debug)]
struct FixedNonceArgs {
    /// Test fixtures only: use this salt (hex) instead of a random one
    #[arg(long, hide = true, value_name = "HEX", requires = "insecure_fixed_nonce")]
    salt_hex: Option<String>,
    /// Test fixtures only: use this IV (hex, 12 bytes) instead of a random one
    #[arg(long, hide = true, value_name = "HEX", requires = "insecure_fixed_nonce")]
    iv_hex: Option<String>,
    /// Allow --salt-hex and --iv-hex; reusing an IV with one passphrase breaks AES-GCM
    #[arg(long, hide = true, requires_all = ["salt_hex", "iv_hex"])]
    insecure_fixed_nonce: bool,
}

fn parse_remote_config(value: &str) -> Result<(String, String), String> {
    match value.split_once('=') {
        Some((provider, uri)) if !provider.is_empty() && !uri.is_empty() => Ok((provider.into(), uri.into())),
        _ => Err("expected PROVIDER=URI, e.g. s3=s3://bucket/key.yaml".into()),
    }
}

/// What to render the sealed stream into.
enum Rendering {
    Documents(crate::render::OutputFormat),
    Template(String),
    Ignition(String),
}

/// Everything resolved before anything is sealed or written.
struct Settings {
    plaintext: crate::crypto::SecretBytes,
    request: SealRequest,
    rendering: Rendering,
    out: Option<PathBuf>,
}

fn resolve(args: &SealArgs, stdin: &mut StdinClaim) -> anyhow::Result<Settings> {
    if is_stdin(&args.input) {
        stdin.claim("--in")?;
    }
    let custom_path = args.cryptadm_path != machineadm::DEFAULT_CRYPTADM_PATH;
    if custom_path && !args.cloud_init && !args.ignition {
        return Err(Failure::new(ExitStatus::Usage, "--cryptadm-path applies only to --cloud-init and --ignition")
            .with_hint("add --cloud-init or --ignition, or drop --cryptadm-path")
            .into());
    }
    let rendering = match (&args.template, args.cloud_init, args.ignition) {
        (Some(path), _, _) => Rendering::Template(
            std::fs::read_to_string(path).with_context(|| format!("reading the template `{}`", path.display()))?,
        ),
        (None, true, _) => Rendering::Template(machineadm::default_template(&args.cryptadm_path)?),
        (None, false, true) => {
            machineadm::validate_cryptadm_path(&args.cryptadm_path)?;
            Rendering::Ignition(args.cryptadm_path.clone())
        }
        (None, false, false) => Rendering::Documents(args.output_format.into()),
    };
    let remote_configs = args
        .remote_config
        .iter()
        .enumerate()
        .map(|(i, (provider, uri))| RemoteConfig {
            name: format!("remote-config-{}", i + 1),
            provider: provider.clone(),
            uri: uri.clone(),
        })
        .collect();
    check_provider(args)?;
    let request = SealRequest {
        provider: args.provider.clone(),
        passphrase_uri: args.passphrase_uri.clone().unwrap_or_default(),
        remote_configs,
        nonces: fixed_nonces(args)?,
    };
    let plaintext = super::read_input(&args.input, "the machine configuration", machineadm::MAX_SEAL_INPUT_BYTES)?;
    let out = args.out.clone().filter(|p| !is_stdin(p));
    if let Some(out) = &out {
        crate::cmd::refuse_same_file(&args.input, out, "--in", "--out")?;
    }
    Ok(Settings { plaintext, request, rendering, out })
}

/// `--provider` and `--passphrase-uri` together, checked through the backend table before anything is asked of a
/// key manager: a built-in provider takes its own backend's references only.
fn check_provider(args: &SealArgs) -> anyhow::Result<()> {
    let Some(backend) = backends::by_provider(&args.provider) else {
        // A plugin: its URI is its own.
        return match &args.passphrase_uri {
            Some(_) => Ok(()),
            None => {
                Err(Failure::new(ExitStatus::Usage, format!("--provider {} needs --passphrase-uri", args.provider))
                    .with_hint("give the URI the plugin takes")
                    .into())
            }
        };
    };
    let takes = backends::or_list(&backend.syntaxes(Use::Provider).collect::<Vec<_>>());
    let Some(uri) = &args.passphrase_uri else {
        if takes.is_empty() {
            // It records its own (clevis); its own flags are checked where it seals.
            return Ok(());
        }
        return Err(Failure::new(ExitStatus::Usage, format!("--provider {} needs --passphrase-uri", args.provider))
            .with_hint(format!("--provider {} takes --passphrase-uri {takes}", args.provider))
            .into());
    };
    if takes.is_empty() || backends::backend_of(uri).is_plugin() {
        // No backend's scheme at all (`/etc/passphrase`): the provider's own check says what it takes.
        return Ok(());
    }
    let (_, found) = crate::cmd::key_refs::parse(uri, Use::Provider, "--passphrase-uri")?;
    if !std::ptr::eq(found, backend) {
        return Err(Failure::new(
            ExitStatus::Usage,
            format!(
                "--provider {} takes --passphrase-uri {takes}; `{}` is {}",
                args.provider,
                crate::redact::url(uri),
                found.title
            ),
        )
        .with_hint(match found.provider {
            Some(provider) => format!("use --provider {provider} for this reference, or give {takes}"),
            None => format!("give {takes}"),
        })
        .into());
    }
    Ok(())
}

/// Every `--remote-config` provider is built in or a plugin found here: a mistyped name is refused now, not at the
/// machine's first boot.
fn check_remote_providers(args: &SealArgs, providers: &machineadm::ProviderSettings) -> anyhow::Result<()> {
    for (provider, _) in &args.remote_config {
        if backends::remote_sources().any(|source| source == provider) {
            continue;
        }
        if providers.find_remote_plugin(provider)?.is_none() {
            let built_in: Vec<&str> = backends::remote_sources().collect();
            return Err(Failure::new(
                ExitStatus::Usage,
                format!(
                    "--remote-config {provider}=…: `{provider}` is no built-in RemoteConfig provider and no plugin \
                     {}{provider} is on PATH",
                    machineadm::REMOTE_PLUGIN_PREFIX
                ),
            )
            .with_hint(format!(
                "built-in providers: {}; or install the plugin on PATH here too",
                backends::or_list(&built_in)
            ))
            .into());
        }
    }
    Ok(())
}

#[cfg(not(feature = "test-vectors"))]
fn fixed_nonces(_: &SealArgs) -> anyhow::Result<Nonces> {
    Ok(Nonces::Fresh)
}

#[cfg(feature = "test-vectors")]
fn fixed_nonces(args: &SealArgs) -> anyhow::Result<Nonces> {
    let (Some(salt), Some(iv)) = (&args.fixed.salt_hex, &args.fixed.iv_hex) else { return Ok(Nonces::Fresh) };
    let invalid = |what: &str| {
        Failure::new(ExitStatus::InvalidInput, format!("--{what}-hex is not valid hex of the right length"))
    };
    let salt = hex::decode(salt).ok().filter(|s| s.len() >= 8).ok_or_else(|| invalid("salt"))?;
    let iv = hex::decode(iv).ok().and_then(|v| <[u8; 12]>::try_from(v).ok()).ok_or_else(|| invalid("iv"))?;
    Ok(Nonces::Fixed { salt, iv })
}

/// With `--provider clevis`: the passphrase (given, or random) and `clevis:<JWE>`, the JWE made for the pin;
/// otherwise `explicit` unchanged and no URI. Checks that the clevis flags and the provider go together.
fn clevis_passphrase(
    args: &SealArgs,
    explicit: Option<crate::crypto::Passphrase>,
    providers: &machineadm::ProviderSettings,
    ui: &dyn Interaction,
) -> anyhow::Result<(Option<crate::crypto::Passphrase>, Option<String>)> {
    let clevis_provider = args.provider == machineadm::BUILTIN_CLEVIS_PROVIDER;
    let Some(pin) = args.clevis.pin()? else {
        if clevis_provider {
            return Err(Failure::new(ExitStatus::Usage, "--provider clevis needs --clevis-pin and --clevis-config")
                .with_hint(r#"e.g. --clevis-pin tang --clevis-config '{"url":"http://tang:7500","thp":"…"}'"#)
                .into());
        }
        return Ok((explicit, None));
    };
    crate::cmd::clevis_args::describe(&pin, ui);
    if !clevis_provider {
        return Err(Failure::new(ExitStatus::Usage, "--clevis-pin applies only to --provider clevis").into());
    }
    if args.passphrase_uri.is_some() {
        return Err(Failure::new(ExitStatus::Usage, "--provider clevis records its own passphraseURI (clevis:<JWE>)")
            .with_hint("drop --passphrase-uri")
            .into());
    }
    let passphrase = explicit.unwrap_or_else(crate::cmd::clevis_args::random_passphrase);
    let provided = providers.clevis_settings(false);
    // The provider's key managers serve the extension pins (aws-kms, vault-transit, kmip) of an sss.
    let settings =
        crate::kms::clevis::Settings { key_managers: provided.key_managers, ..args.clevis.settings(provided.http)? };
    let jwe = {
        let _busy = ui.busy(&format!("encrypting the passphrase to {}", pin.describe()));
        crate::kms::clevis::encrypt(&pin, passphrase.expose(), &settings)?
    };
    Ok((Some(passphrase), Some(format!("{}:{jwe}", crate::kms::clevis::SCHEME))))
}

/// Runs `cryptadm bootstrap seal`.
pub fn run(args: SealArgs, printer: &Printer) -> anyhow::Result<ExitStatus> {
    let mut stdin = StdinClaim::default();
    let settings = resolve(&args, &mut stdin)?;
    let explicit = args.passphrase.read(&mut stdin)?;
    let providers = args.plugin.settings()?;
    check_remote_providers(&args, &providers)?;
    if printer.is_verbose() {
        providers.describe(&args.provider, printer);
    }
    let mut settings = settings;
    let (explicit, clevis_uri) = clevis_passphrase(&args, explicit, &providers, printer)?;
    if let Some(uri) = clevis_uri {
        settings.request.passphrase_uri = uri;
    }
    let Some((passphrase, passphrase_uri)) =
        machineadm::resolve_seal_passphrase(explicit, &settings.request, &providers, printer)?
    else {
        return Err(Failure::new(ExitStatus::Usage, "no passphrase to seal with, and no terminal to ask on")
            .with_hint(NO_SOURCE_HINT)
            .into());
    };
    let documents = machineadm::seal_stream(&settings.plaintext, &passphrase, &passphrase_uri, &settings.request)?;
    // What `bootstrap open` will read: never write a stream it would refuse.
    let sealed = machineadm::render_documents(&documents, crate::render::OutputFormat::Yaml)?.len() as u64;
    if sealed > machineadm::MAX_STREAM_BYTES {
        return Err(machineadm::Error::SealedTooLarge { size: sealed, limit: machineadm::MAX_STREAM_BYTES }.into());
    }
    let output = match &settings.rendering {
        Rendering::Documents(format) => machineadm::render_documents(&documents, *format)?,
        Rendering::Template(_) | Rendering::Ignition(_) => {
            let stream = machineadm::render_documents(&documents, crate::render::OutputFormat::Yaml)?;
            let userdata = match &settings.rendering {
                Rendering::Ignition(cryptadm_path) => machineadm::render_ignition(&stream, cryptadm_path)?,
                Rendering::Template(template) => machineadm::render_template(template, &stream)?,
                Rendering::Documents(_) => unreachable!("matched above"),
            };
            if userdata.len() > machineadm::USERDATA_SIZE_WARNING {
                printer.warn(&format!(
                    "the userdata is {} bytes; EC2 accepts at most {} bytes of raw userdata",
                    userdata.len(),
                    machineadm::USERDATA_SIZE_WARNING
                ));
            }
            userdata
        }
    };
    match &settings.out {
        Some(path) => {
            atomic::write(path, output.as_bytes(), atomic::MODE_PRIVATE)
                .with_context(|| format!("writing `{}`", path.display()))?;
            printer.info(&format!(
                "sealed {} (provider `{}`) into `{}`",
                plural(settings.plaintext.len() as u64, "byte"),
                settings.request.provider,
                path.display()
            ));
        }
        None => printer.data(output.as_bytes()).context("writing to standard output")?,
    }
    Ok(ExitStatus::Success)
}
