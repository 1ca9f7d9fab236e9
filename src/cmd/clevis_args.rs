//! The Clevis flags of every command that binds a secret to Tang servers (`bootstrap seal --provider clevis`,
//! `disk luks-format`, `disk clevis-bind`): `--clevis-pin PIN --clevis-config JSON`, as `clevis encrypt PIN
//! CONFIG` takes them, and `--clevis-trust-adv`, clevis's `-y`.

use super::error::Failure;
use crate::crypto::Passphrase;
use crate::exit::ExitStatus;
use crate::kms::clevis::{self, Pin};
use anyhow::Context;
use clap::Args;
use serde_json::Value;

/// Flags of a Clevis binding.
#[derive(Args, Debug, Clone, Default)]
pub struct ClevisArgs {
    /// Clevis pin to encrypt to: `tang` (one Tang server), `tpm2` (this machine's TPM) or `sss` (a threshold of
    /// pins), as `clevis encrypt PIN`
    #[arg(help_heading = crate::kms::backends::CLEVIS_HEADING, long, value_name = "PIN", value_parser = ["tang", "tpm2", "sss"], requires = "clevis_config")]
    pub clevis_pin: Option<String>,
    /// The pin's configuration, the JSON `clevis encrypt` takes: `{"url":URL,"thp":THUMBPRINT}` for tang,
    /// `{"pcr_ids":"7","pcr_bank":"sha256"}` for tpm2 (also `hash`, `key` ecc|rsa, `pcr_digest`),
    /// `{"t":2,"pins":{"tang":[{"url":…},{"url":…}],"tpm2":{…}}}` for sss, whose pins may also be cryptadm's
    /// key-manager pins `aws-kms`, `vault-transit` and `kmip`, each `[{"key":REFERENCE}]` (docs/threshold.md);
    /// `"adv"` may name an advertisement file
    #[arg(help_heading = crate::kms::backends::CLEVIS_HEADING, long, value_name = "JSON", requires = "clevis_pin")]
    pub clevis_config: Option<String>,
    /// Trust a Tang advertisement that no `thp` pins, as fetched (clevis encrypt's `-y`); without it such a
    /// server is refused and its signing-key thumbprints are printed
    #[arg(help_heading = crate::kms::backends::CLEVIS_HEADING, long, requires = "clevis_pin")]
    pub clevis_trust_adv: bool,
    /// The TPM of `tpm2` pins: a device path or a TCTI string (`device:PATH`, `swtpm:host=H,port=P`,
    /// `mssim:host=H,port=P`); else TPM2TOOLS_TCTI, else /dev/tpmrm0
    #[arg(help_heading = crate::kms::backends::TPM2_HEADING, long, value_name = "DEVICE", env = "CRYPTADM_TPM2_DEVICE")]
    pub tpm2_device: Option<String>,
}

impl ClevisArgs {
    /// The pin, when one was given; `adv` file names in the configuration are read here.
    pub fn pin(&self) -> anyhow::Result<Option<Pin>> {
        let (Some(name), Some(config)) = (&self.clevis_pin, &self.clevis_config) else { return Ok(None) };
        let mut json: Value = serde_json::from_str(config).map_err(|e| {
            Failure::new(ExitStatus::InvalidInput, format!("--clevis-config is not JSON: {e}"))
                .with_hint(r#"quote the JSON for the shell, e.g. --clevis-config '{"url":"http://tang:7500"}'"#)
        })?;
        read_advertisement_files(&mut json, 0)?;
        Ok(Some(Pin::parse(name, &json.to_string())?))
    }

    /// The settings of the Tang requests, with --clevis-trust-adv and the environment's proxies, and the TPM of
    /// tpm2 pins.
    pub fn settings(&self, http: crate::kms::http::HttpSettings) -> anyhow::Result<clevis::Settings> {
        let http = crate::kms::http::HttpSettings { proxies: super::proxy::from_env(), ..http };
        Ok(clevis::Settings {
            http,
            trust_unpinned: self.clevis_trust_adv,
            tpm2: tpm2_device(self.tpm2_device.as_deref())?,
            key_managers: clevis::KeyManagers::default(),
        })
    }
}

/// The key managers of an `sss` pin's extension pins (`aws-kms`, `vault-transit`, `kmip`) in the disk commands:
/// each backend's client flags under its own heading, as `bootstrap` takes them.
#[derive(Args, Debug, Clone, Default)]
pub struct PinKeyManagerArgs {
    #[allow(missing_docs)]
    #[command(flatten)]
    pub vault: crate::cmd::vault_args::VaultArgs,
    #[allow(missing_docs)]
    #[command(flatten)]
    pub aws: crate::cmd::aws_args::AwsArgs,
    #[allow(missing_docs)]
    #[command(flatten)]
    pub kmip: crate::cmd::kmip_args::KmipArgs,
}

impl PinKeyManagerArgs {
    /// The clients: OpenBao/Vault and KMIP when a server is given, AWS always (it reads its credentials at the
    /// first request). 30 s per request, 3 retries, every one within --timeout.
    pub fn key_managers(&self) -> anyhow::Result<clevis::KeyManagers> {
        let timeout = std::time::Duration::from_secs(30);
        Ok(clevis::KeyManagers {
            vault: self.vault.client(timeout, 3)?,
            aws: Some(self.aws.client(timeout, 3)),
            kmip: self.kmip.client(timeout)?,
        })
    }
}

/// How key files sealed to the machine (clevis JWEs of image keys) reach their TPM (`flag`, else the
/// environment's, see [`tpm2_device`]) and Tang servers (through the environment's proxies).
pub fn sealed_key_settings(flag: Option<&str>) -> anyhow::Result<clevis::Settings> {
    ClevisArgs { tpm2_device: flag.map(str::to_owned), ..ClevisArgs::default() }.settings(Default::default())
}

/// Says at `-v` which key managers a Clevis binding reaches: the pin, its Tang servers (and TPM pins), as
/// `clevis encrypt` would be given them.
pub fn describe(pin: &Pin, ui: &dyn crate::interact::Interaction) {
    ui.debug(&format!("key manager: Clevis pin {}", pin.describe()));
}

/// The TPM of tpm2 pins: `--tpm2-device`, else CRYPTADM_TPM2_DEVICE, else tpm2-tools' TPM2TOOLS_TCTI, else
/// /dev/tpmrm0.
pub fn tpm2_device(flag: Option<&str>) -> anyhow::Result<crate::kms::tpm2::Device> {
    use crate::cmd::env_vars::{CRYPTADM_TPM2_DEVICE, TPM2TOOLS_TCTI, var_os};
    let from_env = |name| var_os(name).and_then(|v| v.into_string().ok()).filter(|v| !v.is_empty());
    let Some(text) =
        flag.map(str::to_owned).or_else(|| from_env(CRYPTADM_TPM2_DEVICE)).or_else(|| from_env(TPM2TOOLS_TCTI))
    else {
        return Ok(crate::kms::tpm2::Device::default());
    };
    crate::kms::tpm2::Device::parse(&text).map_err(|e| {
        Failure::new(ExitStatus::InvalidInput, format!("--tpm2-device: {e}"))
            .with_hint("e.g. --tpm2-device /dev/tpmrm0 or --tpm2-device swtpm:host=127.0.0.1,port=2321")
            .into()
    })
}

/// Replaces each tang configuration's `"adv": "FILE"` by the file's JSON (clevis reads it the same way).
fn read_advertisement_files(json: &mut Value, depth: usize) -> anyhow::Result<()> {
    if depth > 16 {
        return Ok(());
    }
    match json {
        Value::Object(map) => {
            if let Some(Value::String(path)) = map.get("adv") {
                let path = std::path::PathBuf::from(path);
                let bytes = std::fs::read(&path)
                    .with_context(|| format!("reading the advertisement file `{}`", path.display()))?;
                let adv: Value = serde_json::from_slice(&bytes).map_err(|_| {
                    Failure::new(
                        ExitStatus::InvalidInput,
                        format!("the advertisement file `{}` is not JSON", path.display()),
                    )
                })?;
                map.insert("adv".into(), adv);
            }
            for value in map.values_mut() {
                read_advertisement_files(value, depth + 1)?;
            }
        }
        Value::Array(items) => {
            for item in items {
                read_advertisement_files(item, depth + 1)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// A fresh passphrase for a clevis binding: 256 random bits, printable (43 base64url characters). `clevis luks
/// bind` draws as many bits with `pwmake`; base64url keeps them free of shell-special characters.
pub fn random_passphrase() -> Passphrase {
    let bytes = zeroize::Zeroizing::new(crate::crypto::random::bytes::<32>());
    Passphrase::new(clevis::b64_encode(&bytes[..]).into_bytes())
}
