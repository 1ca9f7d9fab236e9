//! Where the passphrase that opens a volume lives: the built-in `file://DIR` store and `cryptadm-plugin-kms-NAME`
//! plugins for real KMSes.
//!
//! A store keeps, per volume id, the `current` key (it opens the volume), while a rotation is under way the
//! `pending` key (recorded before the header changes), and after a commit the `previous` key until its keyslots
//! are gone. See [`crate::volume::rotate`] for how the engine uses them.
//!
//! **File store** `file://DIR`: `DIR/<volume-id>/current`, `pending` and `previous`, each the passphrase byte for
//! byte, mode 0600, written atomically (temporary file, fsync, rename, fsync of the directory); the volume id is
//! made a safe file name by [`crate::volume::file_name_for_id`]. Commit writes `previous` and then renames
//! `pending` over `current`.
//!
//! **Plugin store** `NAME:...` (any other scheme): the executable `cryptadm-plugin-kms-NAME` found on the search
//! path, run as `PLUGIN VERB` with one JSON object on standard input:
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

use super::{Error, file_name_for_id};
use crate::atomic;
use crate::crypto::Passphrase;
use crate::exit::ExitStatus;
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The keys a store holds for one volume.
#[derive(Debug)]
pub struct StoredKeys {
    /// The key that opens the volume.
    pub current: Passphrase,
    /// The key a rotation is adding, recorded before the header changed.
    pub pending: Option<Passphrase>,
    /// The key `current` replaced, kept until its keyslots are removed.
    pub previous: Option<Passphrase>,
}

impl StoredKeys {
    /// The key that will be current when the interrupted rotation (if any) is finished.
    pub fn pending_or_current(&self) -> Passphrase {
        self.pending.as_ref().unwrap_or(&self.current).clone()
    }
}

/// One volume's entry in a key store. Every method is idempotent.
pub trait KeyStore {
    /// Reads the stored keys; [`Error::NoStoredKey`] when the store has no current key for the volume.
    fn get(&self) -> Result<StoredKeys, Error>;
    /// Records `new` as the pending key (replacing any pending one).
    fn put_pending(&self, new: &Passphrase) -> Result<(), Error>;
    /// Makes the pending key `new` current and keeps the replaced key as previous.
    fn commit(&self, new: &Passphrase) -> Result<(), Error>;
    /// Drops the previous key.
    fn forget_previous(&self) -> Result<(), Error>;
}

/// The request's pass-through data for plugins: opaque parameters and secrets (never logged).
#[derive(Default, Clone)]
pub struct PluginContext {
    /// The request's `parameters`.
    pub parameters: BTreeMap<String, String>,
    /// The request's `secrets` (credentials for the KMS).
    pub secrets: super::request::Secrets,
}

/// How key-store plugins are found.
#[derive(Debug, Clone, Default)]
pub struct PluginSettings {
    /// Directories searched for `cryptadm-plugin-kms-NAME`, in order.
    pub search_dirs: Vec<PathBuf>,
}

/// Opens the store `uri` for `volume_id` (no `vault-kv://` stores: see [`open_with`]).
pub fn open(
    uri: &str,
    volume_id: &str,
    context: PluginContext,
    settings: &PluginSettings,
) -> Result<Box<dyn KeyStore + Send>, Error> {
    open_with(uri, volume_id, context, settings, None)
}

/// Opens the store `uri` for `volume_id`; `vault-kv://MOUNT/PREFIX` uses `vault` (see
/// [`super::vault_store`]).
pub fn open_with(
    uri: &str,
    volume_id: &str,
    context: PluginContext,
    settings: &PluginSettings,
    vault: Option<&super::vault_store::VaultStoreSettings>,
) -> Result<Box<dyn KeyStore + Send>, Error> {
    if uri.starts_with("vault-kv:") {
        let crate::kms::KeyRef::VaultKv { mount, prefix } =
            crate::kms::KeyRef::parse(uri).map_err(|e| Error::BadRequest(e.to_string()))?
        else {
            return Err(Error::BadRequest(format!("key store `{uri}`: expected vault-kv://MOUNT/PREFIX")));
        };
        let vault = vault.ok_or_else(|| Error::Store {
            status: ExitStatus::Usage,
            message: format!("key store `{uri}`: no OpenBao/Vault server is configured (VAULT_ADDR, --vault-addr)"),
        })?;
        return Ok(Box::new(super::vault_store::VaultKvStore::new(vault.clone(), &mount, &prefix, volume_id)?));
    }
    if let Some(dir) = uri.strip_prefix("file://") {
        if dir.is_empty() || !dir.starts_with('/') {
            return Err(Error::BadRequest(format!("key store `{uri}`: file:// needs an absolute directory")));
        }
        return Ok(Box::new(FileStore::new(Path::new(dir), volume_id)));
    }
    let Some((name, _)) = uri.split_once(':').filter(|(n, _)| valid_plugin_name(n)) else {
        return Err(Error::BadRequest(format!("key store `{uri}` is neither file://DIR nor NAME:... for a plugin")));
    };
    let program = format!("cryptadm-plugin-kms-{name}");
    let path = settings.search_dirs.iter().map(|d| d.join(&program)).find(|p| p.is_file()).ok_or_else(|| {
        Error::Store { status: ExitStatus::NotFound, message: format!("plugin `{program}` not found on PATH") }
    })?;
    Ok(Box::new(PluginStore { program: path, uri: uri.to_owned(), volume_id: volume_id.to_owned(), context }))
}

fn valid_plugin_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The built-in `file://DIR` store.
#[derive(Debug)]
pub struct FileStore {
    dir: PathBuf,
    volume_id: String,
}

impl FileStore {
    /// The entry of `volume_id` under `root`.
    pub fn new(root: &Path, volume_id: &str) -> Self {
        Self { dir: root.join(file_name_for_id(volume_id)), volume_id: volume_id.to_owned() }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    fn read(&self, name: &str) -> Result<Option<Passphrase>, Error> {
        let path = self.path(name);
        match std::fs::read(&path) {
            Ok(bytes) if bytes.is_empty() => Err(Error::Store {
                status: ExitStatus::InvalidInput,
                message: format!("`{}` is empty", path.display()),
            }),
            Ok(bytes) => Ok(Some(Passphrase::new(bytes))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(store_io(&path, "reading", e)),
        }
    }

    fn write(&self, name: &str, key: &Passphrase) -> Result<(), Error> {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
            .map_err(|e| store_io(&self.dir, "creating", e))?;
        let path = self.path(name);
        atomic::write(&path, key.expose(), atomic::MODE_PRIVATE).map_err(|e| store_io(&path, "writing", e))
    }

    fn sync_dir(&self) -> Result<(), Error> {
        std::fs::File::open(&self.dir).and_then(|d| d.sync_all()).map_err(|e| store_io(&self.dir, "syncing", e))
    }
}

fn store_io(path: &Path, doing: &str, e: io::Error) -> Error {
    let status = if e.kind() == io::ErrorKind::NotFound { ExitStatus::NotFound } else { ExitStatus::Failure };
    Error::Store { status, message: format!("{doing} `{}`: {e}", path.display()) }
}

impl KeyStore for FileStore {
    fn get(&self) -> Result<StoredKeys, Error> {
        let current = self.read("current")?.ok_or_else(|| Error::NoStoredKey { volume_id: self.volume_id.clone() })?;
        Ok(StoredKeys { current, pending: self.read("pending")?, previous: self.read("previous")? })
    }

    fn put_pending(&self, new: &Passphrase) -> Result<(), Error> {
        self.write("pending", new)
    }

    fn commit(&self, new: &Passphrase) -> Result<(), Error> {
        let keys = self.get()?;
        let pending_is_new = keys.pending.as_ref().is_some_and(|p| same(p, new));
        if !pending_is_new {
            if same(&keys.current, new) {
                return Ok(());
            }
            return Err(Error::Store {
                status: ExitStatus::Failure,
                message: format!("`{}` does not hold the key being committed", self.path("pending").display()),
            });
        }
        // The replaced key first, so a crash between the two leaves pending (a rerun commits again).
        self.write("previous", &keys.current)?;
        let (from, to) = (self.path("pending"), self.path("current"));
        std::fs::rename(&from, &to).map_err(|e| store_io(&from, "renaming", e))?;
        self.sync_dir()
    }

    fn forget_previous(&self) -> Result<(), Error> {
        let path = self.path("previous");
        match std::fs::remove_file(&path) {
            Ok(()) => self.sync_dir(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(store_io(&path, "removing", e)),
        }
    }
}

fn same(a: &Passphrase, b: &Passphrase) -> bool {
    crate::crypto::secret::passphrases_match(a, b)
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

/// (current, pending, previous) of the in-memory store.
#[cfg(test)]
pub(crate) type Snapshot = (Option<Vec<u8>>, Option<Vec<u8>>, Option<Vec<u8>>);

/// An in-memory store for the engine's unit tests.
#[cfg(test)]
#[derive(Default)]
pub(crate) struct MemoryStore {
    keys: std::cell::RefCell<Snapshot>,
}

#[cfg(test)]
impl MemoryStore {
    pub fn with_current(key: &[u8]) -> Self {
        let store = Self::default();
        store.keys.borrow_mut().0 = Some(key.to_vec());
        store
    }
    pub fn set_previous(&self, key: &[u8]) {
        self.keys.borrow_mut().2 = Some(key.to_vec());
    }
    /// (current, pending, previous)
    pub fn snapshot(&self) -> Snapshot {
        self.keys.borrow().clone()
    }
}

#[cfg(test)]
impl KeyStore for MemoryStore {
    fn get(&self) -> Result<StoredKeys, Error> {
        let keys = self.keys.borrow();
        let wrap = |k: &Option<Vec<u8>>| k.clone().map(Passphrase::new);
        let current = wrap(&keys.0).ok_or(Error::NoStoredKey { volume_id: "test".into() })?;
        Ok(StoredKeys { current, pending: wrap(&keys.1), previous: wrap(&keys.2) })
    }
    fn put_pending(&self, new: &Passphrase) -> Result<(), Error> {
        self.keys.borrow_mut().1 = Some(new.expose().to_vec());
        Ok(())
    }
    fn commit(&self, new: &Passphrase) -> Result<(), Error> {
        let mut keys = self.keys.borrow_mut();
        if keys.1.as_deref() == Some(new.expose()) {
            keys.2 = keys.0.take();
            keys.0 = keys.1.take();
        }
        Ok(())
    }
    fn forget_previous(&self) -> Result<(), Error> {
        self.keys.borrow_mut().2 = None;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(text: &str) -> Passphrase {
        Passphrase::new(text.as_bytes().to_vec())
    }

    #[test]
    fn file_store_walks_pending_commit_forget_with_private_files() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let store = FileStore::new(root.path(), "pvc/1");
        assert!(matches!(store.get(), Err(Error::NoStoredKey { .. })));
        std::fs::create_dir(root.path().join("pvc%2F1")).unwrap();
        std::fs::write(root.path().join("pvc%2F1/current"), "old").unwrap();
        store.put_pending(&key("new")).unwrap();
        let mode = std::fs::metadata(root.path().join("pvc%2F1/pending")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        store.commit(&key("new")).unwrap();
        store.commit(&key("new")).unwrap();
        let keys = store.get().unwrap();
        assert_eq!(keys.current.expose(), b"new");
        assert!(keys.pending.is_none());
        assert_eq!(keys.previous.unwrap().expose(), b"old");
        store.forget_previous().unwrap();
        store.forget_previous().unwrap();
        assert!(store.get().unwrap().previous.is_none());
        assert!(matches!(store.commit(&key("other")), Err(Error::Store { .. })));
    }

    #[test]
    fn store_uris() {
        let settings = PluginSettings::default();
        assert!(open("file:///tmp/x", "v", PluginContext::default(), &settings).is_ok());
        for bad in ["file://relative", "/abs", "vault:x"] {
            assert!(open(bad, "v", PluginContext::default(), &settings).is_err(), "{bad}");
        }
    }
}
