//! Plugin stores `NAME:...` (any scheme without a built-in store): the executable `cryptadm-plugin-kms-NAME` found on
//! the search path, run as `PLUGIN VERB` with one JSON object on standard input:
//! `{"uri": "...", "volume_id": "...", "parameters": {...}, "secrets": {...}, "passphrase": "<base64>"}`
//! (`passphrase` only for `put-pending` and `commit`; `parameters` and `secrets` are the request's, passed
//! through). Verbs: `get` prints `{"current": "<base64>", "pending": "<base64>", "previous": "<base64>"}`
//! (`pending`/`previous` omitted or null when absent); `put-pending` records the passphrase as pending;
//! `commit` makes the pending passphrase (given again) current and keeps the replaced one as previous — it must
//! succeed again when repeated; `forget-previous` drops the previous key (a previous key tells the next run that a
//! rotation was interrupted after its commit, so this verb is required too). Exit
//! status: 0 success, 3 verb not supported, 5 no key for this volume id, 16 the secrets were rejected, anything
//! else a failure whose last stderr line is reported. At most 64 KiB of output is read; a run is killed after
//! 60 s.

use super::store::{KeyStore, StoredKeys};
use crate::crypto::Passphrase;
use crate::exit::ExitStatus;
use crate::volume::Error;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// The request's pass-through data for plugins: opaque parameters and secrets (never logged).
#[derive(Default, Clone)]
pub struct PluginContext {
    /// The request's `parameters`.
    pub parameters: BTreeMap<String, String>,
    /// The request's `secrets` (credentials for the KMS).
    pub secrets: crate::volume::request::Secrets,
}

/// How key-store plugins are found.
#[derive(Debug, Clone, Default)]
pub struct PluginSettings {
    /// Directories searched for `cryptadm-plugin-kms-NAME`, in order.
    pub search_dirs: Vec<PathBuf>,
}

/// A `cryptadm-plugin-kms-NAME` store.
pub struct PluginStore {
    program: PathBuf,
    uri: String,
    volume_id: String,
    context: PluginContext,
}

/// What `get` prints.
#[derive(serde::Deserialize)]
struct GetOutput {
    current: Option<String>,
    #[serde(default)]
    pending: Option<String>,
    #[serde(default)]
    previous: Option<String>,
}

/// Most bytes of plugin output read.
const MAX_PLUGIN_OUTPUT: usize = 64 * 1024;
/// How long one plugin run may take.
const PLUGIN_TIMEOUT: Duration = Duration::from_secs(60);
/// The exit status by which a plugin says it does not support a verb.
const PLUGIN_UNSUPPORTED: i32 = 3;

impl PluginStore {
    /// The store `uri` (`NAME:...`) of `volume_id`: the plugin `cryptadm-plugin-kms-NAME` found in
    /// `settings.search_dirs`.
    pub fn find(uri: &str, volume_id: &str, context: PluginContext, settings: &PluginSettings) -> Result<Self, Error> {
        let Some((name, _)) = uri.split_once(':').filter(|(n, _)| valid_plugin_name(n)) else {
            return Err(Error::BadRequest(format!(
                "key store `{uri}` is neither file://DIR nor NAME:... for a plugin"
            )));
        };
        let program = format!("cryptadm-plugin-kms-{name}");
        let found = crate::process::find_plugin(&program, &settings.search_dirs)
            .map_err(|untrusted| Error::Store { status: ExitStatus::InvalidInput, message: untrusted.to_string() })?;
        let path = found.ok_or_else(|| Error::Store {
            status: ExitStatus::NotFound,
            message: format!("plugin `{program}` not found on PATH"),
        })?;
        Ok(Self { program: path, uri: uri.to_owned(), volume_id: volume_id.to_owned(), context })
    }

    fn name(&self) -> String {
        self.program.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
    }

    /// Runs `verb`; `Ok(None)` when the plugin says it does not support it.
    fn run(&self, verb: &str, passphrase: Option<&Passphrase>) -> Result<Option<crate::crypto::SecretBytes>, Error> {
        use crate::process;
        let mut input = serde_json::json!({
            "uri": self.uri,
            "volume_id": self.volume_id,
            "parameters": self.context.parameters,
            "secrets": self.context.secrets.expose(),
        });
        if let Some(key) = passphrase {
            input["passphrase"] = crate::crypto::encoding::b64_encode(key.expose()).into();
        }
        let stdin = zeroize::Zeroizing::new(serde_json::to_vec(&input).expect("JSON of strings"));
        zeroize_json(&mut input);
        let limits =
            process::Limits { timeout: PLUGIN_TIMEOUT, max_stdout: MAX_PLUGIN_OUTPUT, max_stderr: MAX_PLUGIN_OUTPUT };
        let failed = |status: ExitStatus, why: String| Error::Store {
            status,
            message: format!("{} {verb}: {why}", self.name()),
        };
        let done = process::run(&self.program, [verb], Some(&stdin[..]), limits).map_err(|e| match e {
            process::RunError::Spawn(e) => failed(ExitStatus::Failure, format!("cannot run it: {e}")),
            process::RunError::TimedOut => {
                failed(ExitStatus::Failure, format!("no answer within {}", process::humanize(PLUGIN_TIMEOUT)))
            }
            process::RunError::StdoutHeld => {
                failed(ExitStatus::Failure, "a process it started kept its output open".into())
            }
        })?;
        let reason = || process::last_line(&done.stderr).unwrap_or_else(|| process::describe_status(done.status));
        match done.status.code() {
            Some(0) if done.stdout_truncated => Err(failed(ExitStatus::Failure, "printed too much".into())),
            Some(0) => Ok(Some(done.stdout)),
            Some(PLUGIN_UNSUPPORTED) => Ok(None),
            Some(5) => Err(Error::NoStoredKey { volume_id: self.volume_id.clone() }),
            Some(16) => Err(failed(ExitStatus::Unauthenticated, reason())),
            _ => Err(failed(ExitStatus::Failure, reason())),
        }
    }

    fn require(&self, verb: &str, passphrase: Option<&Passphrase>) -> Result<crate::crypto::SecretBytes, Error> {
        self.run(verb, passphrase)?.ok_or_else(|| Error::Store {
            status: ExitStatus::Failure,
            message: format!("{} does not support `{verb}`", self.name()),
        })
    }
}

fn valid_plugin_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

fn zeroize_json(value: &mut serde_json::Value) {
    use zeroize::Zeroize;
    match value {
        serde_json::Value::String(s) => s.zeroize(),
        serde_json::Value::Object(map) => map.values_mut().for_each(zeroize_json),
        _ => {}
    }
}

impl KeyStore for PluginStore {
    fn get(&self) -> Result<StoredKeys, Error> {
        let stdout = self.require("get", None)?;
        // serde's message could quote the output, which holds keys: say only where it broke.
        let parsed: GetOutput = serde_json::from_slice(&stdout).map_err(|e| Error::Store {
            status: ExitStatus::Failure,
            message: format!(
                "{} get printed no valid JSON object (line {}, column {})",
                self.name(),
                e.line(),
                e.column()
            ),
        })?;
        let decode = |field: &str, value: Option<String>| -> Result<Option<Passphrase>, Error> {
            let Some(text) = value.map(zeroize::Zeroizing::new).filter(|t| !t.is_empty()) else { return Ok(None) };
            crate::crypto::encoding::b64_decode_lenient(&text).map(|b| Some(Passphrase::new(b))).map_err(|_| {
                Error::Store {
                    status: ExitStatus::Failure,
                    message: format!("{} get: `{field}` is not base64", self.name()),
                }
            })
        };
        let current = decode("current", parsed.current)?
            .ok_or_else(|| Error::NoStoredKey { volume_id: self.volume_id.clone() })?;
        Ok(StoredKeys {
            current,
            pending: decode("pending", parsed.pending)?,
            previous: decode("previous", parsed.previous)?,
        })
    }

    fn put_pending(&self, new: &Passphrase) -> Result<(), Error> {
        self.require("put-pending", Some(new)).map(drop)
    }

    fn commit(&self, new: &Passphrase) -> Result<(), Error> {
        self.require("commit", Some(new)).map(drop)
    }

    fn forget_previous(&self) -> Result<(), Error> {
        self.require("forget-previous", None).map(drop)
    }
}
