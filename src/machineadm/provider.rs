//! Passphrase providers: the built-in `file` provider, and plugins run as executables.
//!
//! The proposal meant go-plugin (gRPC over a subprocess), whose handshake only Go speaks. cryptadm keeps the
//! proposal's binary name and search path and speaks a plain exec contract instead:
//!
//! - `machineadm-plugin-encryption-provider-<provider> get-passphrase <passphraseURI>`: the raw passphrase bytes
//!   on stdout (nothing stripped), diagnostics on stderr, exit 0.
//! - `… new-passphrase <passphraseURI>` (used by `seal` without a passphrase source): a JSON object
//!   `{"passphrase": "<standard base64>", "passphraseURI": "<URI to record>"}` on stdout, the KMS
//!   GenerateDataKey pattern. Exit 3 means "verb not supported".
//!
//! The plugin gets no stdin, at most [`MAX_PLUGIN_OUTPUT`] bytes of stdout are read, a timeout kills its whole
//! process group, and failures are retried with exponential backoff.

use super::Error;
use crate::crypto::encoding::b64_decode_lenient;
use crate::crypto::{Passphrase, SecretBytes};
use crate::interact::Interaction;
use crate::process::{self, humanize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Executable name prefix of encryption-provider plugins.
pub const PLUGIN_PREFIX: &str = "machineadm-plugin-encryption-provider-";
/// Plugin directories searched after `PATH` (the proposal's Linux locations).
pub const SYSTEM_PLUGIN_DIRS: &[&str] = &["/usr/libexec/machineadm", "/usr/local/libexec/machineadm"];
/// The provider implemented inside cryptadm.
pub const BUILTIN_FILE_PROVIDER: &str = "file";
/// The built-in OpenBao/Vault Transit provider: `seal` asks `MOUNT/datakey/plaintext/KEY` for a 32-byte data key,
/// seals with its raw bytes as the passphrase and records `vault-transit://<base64url(ciphertext)>@MOUNT/KEY`;
/// `open` gets the bytes back from `MOUNT/decrypt/KEY`.
pub const BUILTIN_VAULT_TRANSIT_PROVIDER: &str = "vault-transit";
/// The built-in Clevis provider: `seal` encrypts the passphrase to Tang servers (clevis's `tang` and `sss` pins)
/// and records `clevis:<compact JWE>`; `open` recovers it from the servers, with no credentials (docs/tang.md).
pub const BUILTIN_CLEVIS_PROVIDER: &str = "clevis";
/// Bytes of the data key (and so of the passphrase) the `vault-transit` provider asks Transit for.
pub const VAULT_DATA_KEY_BYTES: usize = 32;
/// Most bytes a plugin may print on stdout, and most bytes a passphrase file may hold.
pub const MAX_PLUGIN_OUTPUT: usize = crate::crypto::secret::MAX_PASSPHRASE_LEN;
const MAX_PLUGIN_STDERR: usize = 4096;
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// Exit status by which a plugin says it does not implement a verb.
const EXIT_UNSUPPORTED_VERB: i32 = 3;

/// How plugins are found and run.
#[derive(Debug, Clone)]
pub struct ProviderSettings {
    /// Directories searched for plugins, in order.
    pub search_dirs: Vec<PathBuf>,
    /// How long one plugin run may take.
    pub timeout: Duration,
    /// How many times a failing plugin is run again.
    pub retries: u32,
    /// Wait before the first retry; doubled for each further one, up to 30 s.
    pub first_backoff: Duration,
    /// The OpenBao/Vault client of the `vault-transit` provider, when a server is configured.
    pub vault: Option<std::sync::Arc<crate::kms::vault::Vault>>,
    /// The KMIP client of the `kmip` provider, when a server is configured.
    pub kmip: Option<std::sync::Arc<crate::kms::kmip::Kmip>>,
    /// The AWS client of the `aws-kms` provider (see `aws_kms.rs`).
    pub aws: Option<std::sync::Arc<crate::kms::aws::Aws>>,
    /// The proxies of the `clevis` provider's Tang requests.
    pub proxies: crate::proxy::Proxies,
    /// The TPM of the `clevis` provider's tpm2 pins.
    pub tpm2: crate::kms::tpm2::Device,
}

impl ProviderSettings {
    /// Search directories: those of a `PATH`-style value, then [`SYSTEM_PLUGIN_DIRS`].
    pub fn search_dirs_from(path_var: Option<&std::ffi::OsStr>) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = path_var.map(|p| std::env::split_paths(p).collect()).unwrap_or_default();
        dirs.extend(SYSTEM_PLUGIN_DIRS.iter().map(PathBuf::from));
        dirs
    }

    /// Says (as debug lines: `-v`) which backend `provider` is and, for a built-in one, its key manager: server,
    /// region, endpoint, credential source (never a secret), KMIP protocol version.
    pub fn describe(&self, provider: &str, ui: &dyn Interaction) {
        use crate::kms::backends::{self, Client};
        let backend = backends::by_provider(provider);
        ui.debug(&format!(
            "provider `{provider}`: {}",
            backend.map_or("a plugin (machineadm-plugin-encryption-provider-NAME)", |b| b.title)
        ));
        let needs = |client| backend.is_some_and(|b| b.needs(client));
        for line in backends::describe_clients(
            self.vault.as_deref().filter(|_| needs(Client::Vault)),
            self.aws.as_deref().filter(|_| needs(Client::Aws)),
            self.kmip.as_deref().filter(|_| needs(Client::Kmip)),
        ) {
            ui.debug(&line);
        }
    }

    /// Fetches the passphrase of a document on the machine (`get-passphrase`).
    pub fn get_passphrase(&self, provider: &str, uri: &str, ui: &dyn Interaction) -> Result<Passphrase, Error> {
        validate_provider_name(provider)?;
        self.describe(provider, ui);
        if provider == BUILTIN_FILE_PROVIDER {
            return read_passphrase_file(uri);
        }
        if provider == BUILTIN_VAULT_TRANSIT_PROVIDER {
            return self.vault_transit_open(uri, ui);
        }
        if provider == super::BUILTIN_KMIP_PROVIDER {
            return self.kmip_open(uri, ui);
        }
        if provider == BUILTIN_CLEVIS_PROVIDER {
            return self.clevis_open(uri, ui);
        }
        if provider == super::aws_kms::BUILTIN_AWS_KMS_PROVIDER {
            return self.aws_kms_open(uri, ui);
        }
        let program = self.find_plugin(provider)?;
        let output = self.run_with_retries(provider, &program, &["get-passphrase", uri], ui)?;
        let passphrase = Passphrase::new(output.to_vec());
        if passphrase.is_empty() {
            return Err(Error::ProviderFailed {
                provider: provider.into(),
                problem: "printed an empty passphrase".into(),
            });
        }
        Ok(passphrase)
    }

    /// Asks a plugin for a new passphrase and the URI to record (`new-passphrase`).
    pub fn new_passphrase(
        &self,
        provider: &str,
        uri: &str,
        ui: &dyn Interaction,
    ) -> Result<(Passphrase, String), Error> {
        validate_provider_name(provider)?;
        if provider == BUILTIN_VAULT_TRANSIT_PROVIDER {
            return self.vault_transit_new(uri, None, ui);
        }
        if provider == super::BUILTIN_KMIP_PROVIDER {
            return self.kmip_new(uri, None, ui);
        }
        if provider == super::aws_kms::BUILTIN_AWS_KMS_PROVIDER {
            return self.aws_kms_new(uri, None, ui);
        }
        let program = self.find_plugin(provider)?;
        let output = self.run_with_retries(provider, &program, &["new-passphrase", uri], ui)?;
        parse_new_passphrase(provider, &output)
    }

    fn vault(&self) -> Result<&crate::kms::vault::Vault, Error> {
        self.vault.as_deref().ok_or(Error::NoKeyManager { provider: BUILTIN_VAULT_TRANSIT_PROVIDER })
    }

    /// `seal` with `vault-transit`: a new data key (or, given `explicit`, that passphrase wrapped by Transit) and
    /// the passphraseURI carrying the wrapped bytes.
    pub fn vault_transit_new(
        &self,
        uri: &str,
        explicit: Option<Passphrase>,
        ui: &dyn Interaction,
    ) -> Result<(Passphrase, String), Error> {
        use crate::kms::Wrapping as _;
        let (reference, mount, key) = parse_transit_uri(uri)?;
        if reference.to_string() != uri.trim() {
            return Err(Error::BadTransitUri {
                uri: crate::redact::url(uri),
                problem: "seal takes vault-transit://MOUNT/KEY (the wrapped key is added to it)",
            });
        }
        let vault = self.vault()?;
        let name = crate::kms::vault::transit_name(&mount, &key);
        let _busy = ui.busy(&format!("asking {} for a data key", vault.service()));
        let (passphrase, wrapped) = match explicit {
            Some(passphrase) => {
                let wrapped = vault.wrap(&name, passphrase.expose()).map_err(Error::KeyManager)?;
                (passphrase, wrapped)
            }
            None => {
                let data_key = vault.generate_data_key(&name, VAULT_DATA_KEY_BYTES).map_err(Error::KeyManager)?;
                (Passphrase::new(data_key.plaintext.to_vec()), data_key.wrapped)
            }
        };
        Ok((passphrase, reference.with_wrapped(&wrapped).to_string()))
    }

    fn vault_transit_open(&self, uri: &str, ui: &dyn Interaction) -> Result<Passphrase, Error> {
        use crate::kms::Wrapping as _;
        let (reference, mount, key) = parse_transit_uri(uri)?;
        let crate::kms::KeyRef::VaultTransit { wrapped: Some(wrapped), .. } = &reference else {
            return Err(Error::BadTransitUri {
                uri: crate::redact::url(uri),
                problem: "no wrapped key: expected vault-transit://WRAPPED@MOUNT/KEY as `seal` records it",
            });
        };
        let vault = self.vault()?;
        let _busy = ui.busy(&format!("unwrapping the data key with {}", vault.service()));
        let plaintext =
            vault.unwrap(&crate::kms::vault::transit_name(&mount, &key), wrapped).map_err(Error::KeyManager)?;
        if plaintext.is_empty() {
            return Err(Error::BadPassphrase("Transit returned an empty data key".into()));
        }
        Ok(Passphrase::new(plaintext.to_vec()))
    }

    /// The HTTP settings the `clevis` provider reaches Tang servers with (one request may take the plugin
    /// timeout, with the plugin retries), and the key managers of its extension pins.
    pub fn clevis_settings(&self, trust_unpinned: bool) -> crate::kms::clevis::Settings {
        let http = crate::kms::http::HttpSettings {
            timeout: self.timeout,
            retries: self.retries,
            first_backoff: self.first_backoff,
            proxies: self.proxies.clone(),
            ..Default::default()
        };
        let key_managers = crate::kms::clevis::KeyManagers {
            vault: self.vault.clone(),
            aws: self.aws.clone(),
            kmip: self.kmip.clone(),
        };
        crate::kms::clevis::Settings { http, trust_unpinned, tpm2: self.tpm2.clone(), key_managers }
    }

    /// `open` with `clevis`: the passphrase from the JWE in `clevis:<JWE>`, recovered from its Tang servers.
    fn clevis_open(&self, uri: &str, ui: &dyn Interaction) -> Result<Passphrase, Error> {
        let jwe = crate::kms::KeyRef::parse(uri)
            .ok()
            .and_then(|reference| reference.clevis_jwe().map(str::to_owned))
            .ok_or_else(|| {
            Error::Clevis(Box::new(crate::kms::clevis::Error::Malformed(
                "the passphraseURI is not `clevis:<compact JWE>`".into(),
            )))
        })?;
        let binding = crate::kms::clevis::describe(&jwe).map_err(|e| Error::Clevis(Box::new(e)))?;
        let _busy = ui.busy(&format!("recovering the passphrase from {binding}"));
        let plaintext =
            crate::kms::clevis::decrypt(&jwe, &self.clevis_settings(false)).map_err(|e| Error::Clevis(Box::new(e)))?;
        if plaintext.is_empty() {
            return Err(Error::BadPassphrase("the clevis JWE holds an empty passphrase".into()));
        }
        Ok(Passphrase::new(plaintext.to_vec()))
    }

    fn find_plugin(&self, provider: &str) -> Result<PathBuf, Error> {
        let program = format!("{PLUGIN_PREFIX}{provider}");
        self.find_executable(&program)?.ok_or_else(|| Error::ProviderNotFound {
            provider: provider.into(),
            program,
            system_dirs: SYSTEM_PLUGIN_DIRS.join(", "),
        })
    }

    /// The first executable named `program` in the search directories, refused if others could change it
    /// ([`process::find_plugin`]).
    pub(super) fn find_executable(&self, program: &str) -> Result<Option<PathBuf>, Error> {
        process::find_plugin(program, &self.search_dirs).map_err(Error::UntrustedPlugin)
    }

    fn run_with_retries(
        &self,
        provider: &str,
        program: &Path,
        args: &[&str],
        ui: &dyn Interaction,
    ) -> Result<SecretBytes, Error> {
        self.run_plugin_with_retries(&PluginRun::PASSPHRASE, provider, program, args, ui)
            .map_err(|failure| Error::ProviderFailed { provider: provider.into(), problem: failure.problem })
    }

    /// Runs a plugin of either family, retrying what [`PluginRun`] does not call final.
    pub(super) fn run_plugin_with_retries(
        &self,
        run: &PluginRun<'_>,
        provider: &str,
        program: &Path,
        args: &[&str],
        ui: &dyn Interaction,
    ) -> Result<SecretBytes, PluginFailure> {
        let attempts = self.retries.saturating_add(1);
        let mut backoff = self.first_backoff;
        // Every run and every pause ends by the command's deadline.
        let deadline = crate::deadline::command();
        for attempt in 1..=attempts {
            if let Some(deadline) = deadline.filter(crate::deadline::Deadline::passed) {
                return Err(PluginFailure::failed(format!("{deadline} passed before attempt {attempt} of {attempts}")));
            }
            let timeout = crate::deadline::bound(deadline.as_ref(), self.timeout);
            let shown: Vec<String> = args.iter().map(|arg| crate::redact::url(arg)).collect();
            ui.debug(&format!("running `{}` {} (attempt {attempt} of {attempts})", program.display(), shown.join(" ")));
            let _busy = ui.busy(&format!("waiting for {} `{provider}` ({})", run.family, args[0]));
            let failure = match run_plugin(program, args, timeout, run) {
                Ok(output) => return Ok(output),
                Err(RunError::Final(failure)) => failure,
                Err(RunError::Retryable(problem)) if attempt < attempts => {
                    ui.warn(&format!(
                        "{} `{provider}`: attempt {attempt} of {attempts} failed: {problem}; retrying in {}",
                        run.family,
                        humanize(backoff)
                    ));
                    std::thread::sleep(crate::deadline::bound(deadline.as_ref(), backoff));
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    continue;
                }
                Err(RunError::Retryable(problem)) if attempts > 1 => {
                    PluginFailure::failed(format!("{problem} (after {attempts} attempts)"))
                }
                Err(RunError::Retryable(problem)) => PluginFailure::failed(problem),
            };
            return Err(failure);
        }
        unreachable!("the loop returns on its last attempt")
    }
}

/// How one family of plugins is run: what it is called in messages, how much of its stdout is read, which exit
/// statuses end the retries, and the environment it gets.
pub(super) struct PluginRun<'a> {
    /// "passphrase provider", "remote-configuration provider".
    pub family: &'static str,
    /// Most bytes read from stdout; more is a final failure.
    pub max_stdout: usize,
    /// Exit status by which the plugin says "not found" (final), if the family's contract has one.
    pub not_found_status: Option<i32>,
    /// The plugin's whole environment; `None` inherits cryptadm's.
    pub env: Option<&'a [(std::ffi::OsString, std::ffi::OsString)]>,
}

impl PluginRun<'static> {
    const PASSPHRASE: PluginRun<'static> =
        PluginRun { family: "passphrase provider", max_stdout: MAX_PLUGIN_OUTPUT, not_found_status: None, env: None };
}

/// Why a plugin did not deliver.
pub(super) struct PluginFailure {
    /// What happened (exit status, last line of its stderr, timeout).
    pub problem: String,
    /// The plugin said that what it was asked for does not exist.
    pub not_found: bool,
    /// It printed more than the family's stdout bound.
    pub too_large: bool,
}

impl PluginFailure {
    fn failed(problem: String) -> Self {
        Self { problem, not_found: false, too_large: false }
    }
}

/// Provider names become part of an executable name: no path separators, no surprises.
pub fn validate_provider_name(provider: &str) -> Result<(), Error> {
    let valid = !provider.is_empty()
        && provider.len() <= 63
        && provider.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
        && !provider.starts_with('-');
    if valid { Ok(()) } else { Err(Error::BadProviderName(provider.into())) }
}

/// The built-in `file` provider: `file:///absolute/path`, the file's bytes as they are.
fn read_passphrase_file(uri: &str) -> Result<Passphrase, Error> {
    let path = file_uri_path(uri)?;
    let bytes = crate::crypto::secret::read_passphrase_file(&path)
        .map_err(|source| Error::PassphraseFile { path: path.clone(), source })?;
    let passphrase = Passphrase::new(bytes);
    if passphrase.is_empty() {
        return Err(Error::BadPassphrase(format!("passphrase file `{}` is empty", path.display())));
    }
    Ok(passphrase)
}

/// A `vault-transit://` passphraseURI, its mount and key.
pub(super) fn parse_transit_uri(uri: &str) -> Result<(crate::kms::KeyRef, String, String), Error> {
    match crate::kms::KeyRef::parse(uri.trim()) {
        Ok(reference @ crate::kms::KeyRef::VaultTransit { .. }) => {
            let crate::kms::KeyRef::VaultTransit { mount, key, .. } = &reference else { unreachable!() };
            let (mount, key) = (mount.clone(), key.clone());
            Ok((reference, mount, key))
        }
        _ => Err(Error::BadTransitUri { uri: crate::redact::url(uri), problem: "expected vault-transit://MOUNT/KEY" }),
    }
}

/// Checks a passphraseURI for the built-in `file` provider and returns its path.
pub fn file_uri_path(uri: &str) -> Result<PathBuf, Error> {
    parse_file_uri(uri).map_err(|problem| Error::BadPassphraseUri { uri: uri.into(), problem })
}

/// `file:///absolute/path` → the path; the problem otherwise.
pub(super) fn parse_file_uri(uri: &str) -> Result<PathBuf, &'static str> {
    let rest = uri.strip_prefix("file://").ok_or("expected file:///absolute/path")?;
    if !rest.starts_with('/') {
        return Err("expected file:///absolute/path (a host part is not supported)");
    }
    if rest.contains('%') || rest.contains('?') || rest.contains('#') {
        return Err("percent-escapes, queries and fragments are not supported");
    }
    Ok(PathBuf::from(rest))
}

fn parse_new_passphrase(provider: &str, output: &[u8]) -> Result<(Passphrase, String), Error> {
    #[derive(serde::Deserialize)]
    struct NewPassphrase {
        passphrase: String,
        #[serde(rename = "passphraseURI")]
        passphrase_uri: String,
    }
    let failed = |problem: String| Error::ProviderFailed { provider: provider.into(), problem };
    // The error of serde_json names a position, never the content, so it cannot leak the passphrase.
    let parsed: NewPassphrase = serde_json::from_slice(output)
        .map_err(|e| failed(format!("new-passphrase output is not the expected JSON object ({e})")))?;
    let encoded = zeroize::Zeroizing::new(parsed.passphrase);
    let bytes = b64_decode_lenient(&encoded)
        .map_err(|_| failed("new-passphrase output: `passphrase` is not standard base64".into()))?;
    if bytes.is_empty() || parsed.passphrase_uri.is_empty() {
        return Err(failed("new-passphrase output has an empty passphrase or passphraseURI".into()));
    }
    Ok((Passphrase::new(bytes), parsed.passphrase_uri))
}

enum RunError {
    Retryable(String),
    Final(PluginFailure),
}

/// Runs a plugin once with bounded output and a deadline.
fn run_plugin(program: &Path, args: &[&str], timeout: Duration, run: &PluginRun<'_>) -> Result<SecretBytes, RunError> {
    let limits = process::Limits { timeout, max_stdout: run.max_stdout, max_stderr: MAX_PLUGIN_STDERR };
    let done = process::run_with_env(program, args, None, limits, run.env).map_err(|e| {
        RunError::Retryable(match e {
            process::RunError::Spawn(e) => format!("cannot run `{}`: {e}", program.display()),
            process::RunError::TimedOut => format!("timed out after {}", humanize(timeout)),
            process::RunError::StdoutHeld => {
                "a process the plugin started (outside its process group) kept its stdout open".into()
            }
        })
    })?;
    if done.stdout_truncated {
        let problem = format!("printed more than {} bytes on stdout", run.max_stdout);
        return Err(RunError::Final(PluginFailure { problem, not_found: false, too_large: true }));
    }
    if !done.status.success() {
        let reason = process::last_line(&done.stderr).map(|l| format!(": {l}")).unwrap_or_default();
        let problem = format!("plugin {}{reason}", process::describe_status(done.status));
        let code = done.status.code();
        return Err(if code == Some(EXIT_UNSUPPORTED_VERB) {
            RunError::Final(PluginFailure::failed(problem))
        } else if code.is_some() && code == run.not_found_status {
            RunError::Final(PluginFailure { problem, not_found: true, too_large: false })
        } else {
            RunError::Retryable(problem)
        });
    }
    Ok(done.stdout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_names() {
        for good in ["file", "aws", "vault-transit", "gcp_kms2"] {
            assert!(validate_provider_name(good).is_ok(), "{good}");
        }
        for bad in ["", "../x", "a/b", "-rf", "AWS", "a b"] {
            assert!(validate_provider_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn file_uris() {
        assert_eq!(file_uri_path("file:///etc/machineadm/p").unwrap(), PathBuf::from("/etc/machineadm/p"));
        assert!(file_uri_path("file://host/p").is_err());
        assert!(file_uri_path("/etc/p").is_err());
        assert!(file_uri_path("file:///a%20b").is_err());
    }

    #[test]
    fn new_passphrase_output() {
        let (p, uri) = parse_new_passphrase("x", br#"{"passphrase":"AAEC","passphraseURI":"kms://a@b"}"#).unwrap();
        assert_eq!(p.expose(), &[0, 1, 2]);
        assert_eq!(uri, "kms://a@b");
        assert!(parse_new_passphrase("x", b"AAEC").is_err());
        assert!(parse_new_passphrase("x", br#"{"passphrase":"","passphraseURI":"u"}"#).is_err());
    }
}
