//! One rotation from request to result: locks, the header, the key store, the engine.

use super::keystore::{self, Backends, PluginContext};
use super::lock::{IdLock, lock_backing_file, lock_volume};
use super::resolve::Resolver;
use super::rotate::{self, Observer, Outcome};
use super::{Error, RotateRequest};
use crate::exit::Classify;
use crate::luks;
use std::path::PathBuf;

/// Where the key store and the locks are.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The key store URI (`file://DIR` or `NAME:...`).
    pub key_store: String,
    /// Directory of the per-volume-id lock files.
    pub lock_dir: PathBuf,
    /// The services the key store reaches (plugins, OpenBao/Vault, the `--key-wrap` key).
    pub backends: Backends,
    /// How a volume's device is found when the request has no path.
    pub resolver: Resolver,
    /// Take over another run's rotation claim even when it has not expired (`--take-over-claim`).
    pub take_over_claim: bool,
}

/// Rotates the key of the request's volume. Fails with [`Error::Busy`] at once when another operation holds the
/// volume id or the volume.
pub fn rotate_volume(request: &RotateRequest, settings: &Settings, observe: Observer<'_>) -> Result<Outcome, Error> {
    let resolved;
    let path = match &request.volume_path {
        Some(path) => path,
        None => {
            resolved = settings.resolver.resolve(&request.volume_id)?;
            &resolved
        }
    };
    match std::fs::metadata(path) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::VolumeNotFound { path: path.clone() });
        }
        Err(e) => return Err(Error::Io { context: format!("reading `{}`", path.display()), source: e }),
    }
    let _id_lock = IdLock::acquire(&settings.lock_dir, &request.volume_id)?;
    let mut volume = luks::Volume::open(path, true)
        .map_err(|e| Error::Header { status: e.status(), source: format!("`{}`: {e}", path.display()).into() })?;
    lock_volume(volume.file(), path)?;
    let _backing_lock = lock_backing_file(&settings.lock_dir, volume.file(), path, &settings.resolver.sysfs)?;
    // What we read before the lock may be stale: another writer may have finished in between.
    rotate::Keyslots::reload(&mut volume)?;
    let context = PluginContext { parameters: request.parameters.clone(), secrets: request.secrets.clone() };
    let store = keystore::open(&settings.key_store, &request.volume_id, context, &settings.backends)?;
    // One run per volume across nodes: claimed in the store before the header is touched.
    let claim = keystore::Claim::new(keystore::claim::CLAIM_LIFETIME);
    let replaced = store.claim(&claim, settings.take_over_claim)?;
    let result =
        rotate::rotate(&mut volume, store.as_ref(), request.new_key.as_ref(), &rotate::generate_passphrase, observe);
    // A stop by the observer stands for a crash: the claim stays, as a crash would leave it. A release that
    // fails does not undo a rotation: the caller is told (the claim blocks other nodes until it expires), and the
    // next run on this node replaces it at once (its process is gone, or it is this process's own).
    let mut release_failed = None;
    if !matches!(result, Err(Error::Interrupted(_))) {
        release_failed = store.release(&claim).err().map(|e| e.to_string());
    }
    result.map(|outcome| Outcome { took_over: replaced.map(|held| held.describe()), release_failed, ..outcome })
}
