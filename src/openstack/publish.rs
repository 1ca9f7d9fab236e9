//! Publishing an encrypted image to OpenStack as one undoable step: the Barbican secret (when this run makes
//! it), the Glance image record, its streamed data and the Barbican consumer that ties them. Each thing is
//! recorded in a [`Ledger`] the moment it exists; a failure (or a signal, through the command line's handler)
//! undoes the ledger, newest first, so no orphan secret and no `queued` image is left behind. Only a kill -9
//! leaves something, and [`Ledger::cleanup_commands`] says what.

use super::glance::{Glance, NewImage};
use crate::kms::barbican::Barbican;
use crate::kms::keystone::{Cloud, Session};
use crate::kms::{Consumer, Error, SecretStore};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// What this run created in the cloud and has not finished with.
#[derive(Debug, Clone, Default)]
pub struct Created {
    /// A secret this run stored (deleted on undo).
    pub secret: Option<String>,
    /// An image this run created (deleted on undo).
    pub image: Option<String>,
    /// A consumer this run registered on a secret it did not create (removed on undo).
    pub consumer: Option<(String, Consumer)>,
    /// The local image this run wrote under its secret, with its device and inode: removed when that secret is
    /// deleted (no file is left that no key opens), kept with it otherwise.
    pub output: Option<(PathBuf, (u64, u64))>,
    /// The local image this run is about to write under its secret, with the identity of whatever is at that
    /// path before (a signal between the image's rename and [`Ledger::output_written`] still finds it: the file
    /// there is then another one).
    pub pending_output: Option<(PathBuf, Option<(u64, u64)>)>,
}

/// What [`Ledger::undo`] did.
#[derive(Debug, Default)]
pub struct Undone {
    /// What could not be deleted (or was kept on purpose), as the commands that delete it, with why.
    pub left: Vec<String>,
    /// The local image removed with its secret.
    pub removed_output: Option<PathBuf>,
}

/// The record of what one run created, shared with the signal handler.
pub struct Ledger {
    cloud: Cloud,
    created: Mutex<Created>,
}

impl Ledger {
    /// An empty ledger for `cloud`.
    pub fn new(cloud: Cloud) -> Self {
        Self { cloud, created: Mutex::new(Created::default()) }
    }

    fn with<T>(&self, f: impl FnOnce(&mut Created) -> T) -> T {
        f(&mut self.created.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
    }

    /// Records a secret this run stored.
    pub fn secret_created(&self, uuid: &str) {
        self.with(|c| c.secret = Some(uuid.to_owned()));
    }

    /// Records an image this run created.
    pub fn image_created(&self, id: &str) {
        self.with(|c| c.image = Some(id.to_owned()));
    }

    /// Records a consumer this run registered on someone else's secret.
    pub fn consumer_added(&self, secret: &str, consumer: &Consumer) {
        self.with(|c| c.consumer = Some((secret.to_owned(), consumer.clone())));
    }

    /// Records the local image this run is about to write at `path` under the secret it stores.
    pub fn output_pending(&self, path: &Path) {
        let before = identity(path);
        self.with(|c| c.pending_output = Some((path.to_path_buf(), before)));
    }

    /// Records the local image written under this run's secret (a regular file only: a device is never removed).
    pub fn output_written(&self, path: &Path) {
        if let Some(written) = identity(path) {
            self.with(|c| c.output = Some((path.to_path_buf(), written)));
        }
    }

    /// Everything is in place: nothing is undone any more.
    pub fn finish(&self) {
        self.with(|c| *c = Created::default());
    }

    /// What is recorded now.
    pub fn created(&self) -> Created {
        self.with(|c| c.clone())
    }

    /// The `openstack` commands that delete what is recorded (for a run that could not undo it itself).
    pub fn cleanup_commands(&self) -> Vec<String> {
        let created = self.created();
        let mut commands = Vec::new();
        if let Some(image) = &created.image {
            commands.push(format!("openstack image delete {image}"));
        }
        if let Some(secret) = &created.secret {
            commands.push(format!("openstack secret delete {secret}"));
        }
        commands
    }

    /// Deletes what is recorded, newest first, with clients of its own (it may run on the signal handler's
    /// thread while the main thread is blocked in a request). A secret is deleted only once the image that names
    /// it is known to be gone, and the local image only once its secret is: whatever is kept is listed, with the
    /// command that deletes it and why.
    pub fn undo(&self) -> Undone {
        let created = self.created();
        let mut undone = Undone::default();
        if created.secret.is_none() && created.image.is_none() && created.consumer.is_none() {
            return undone;
        }
        let session = match Session::new(self.cloud.clone()) {
            Ok(session) => Arc::new(session),
            Err(e) => {
                undone.left = self.cleanup_commands().into_iter().map(|c| format!("{c}  ({e})")).collect();
                return undone;
            }
        };
        let mut image_gone = true;
        if let Some(image) = &created.image {
            match Glance::new(session.clone()).and_then(|glance| glance.delete(image)) {
                Ok(()) => self.with(|c| c.image = None),
                Err(e) => {
                    image_gone = false;
                    undone.left.push(format!("openstack image delete {image}  ({e})"));
                }
            }
        }
        let barbican = || Barbican::new(session.clone());
        if let Some((secret, consumer)) = created.consumer.as_ref().filter(|_| image_gone) {
            match barbican().and_then(|b| b.remove_consumer(secret, consumer)) {
                Ok(()) => self.with(|c| c.consumer = None),
                Err(e) => undone
                    .left
                    .push(format!("the consumer of secret {secret} for image {}  ({e})", consumer.resource_id)),
            }
        }
        let Some(secret) = &created.secret else { return undone };
        if !image_gone {
            undone.left.push(format!(
                "openstack secret delete {secret}  (kept: image {} still names it)",
                created.image.as_deref().unwrap_or_default()
            ));
            return undone;
        }
        match barbican().and_then(|b| b.delete(secret)) {
            Ok(()) => {
                self.with(|c| c.secret = None);
                // The image written: the one recorded, else a file that took the pending path's place.
                let written = created.output.clone().or_else(|| {
                    let (path, before) = created.pending_output.as_ref()?;
                    identity(path).filter(|now| Some(*now) != *before).map(|now| (path.clone(), now))
                });
                undone.removed_output = written.and_then(|(path, id)| remove_own(&path, id));
            }
            Err(e) => undone.left.push(format!("openstack secret delete {secret}  ({e})")),
        }
        undone
    }
}

/// The device and inode of the regular file at `path` (None: no regular file there).
fn identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(path).ok().filter(std::fs::Metadata::is_file)?;
    Some((meta.dev(), meta.ino()))
}

/// Removes the file at `path` if it is still the one this run wrote (whatever has taken its name since stays).
fn remove_own(path: &Path, written: (u64, u64)) -> Option<PathBuf> {
    if identity(path)? != written {
        return None;
    }
    std::fs::remove_file(path).ok()?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        let _ = crate::atomic::sync_dir(dir);
    }
    Some(path.to_path_buf())
}

/// An image to publish.
pub struct Publication<'a> {
    /// The image record.
    pub image: NewImage<'a>,
    /// The secret that opens it, when encrypted: its UUID (already recorded in the ledger when this run stored
    /// it).
    pub secret: Option<&'a str>,
    /// Whether this run stored the secret (else the consumer is removed on undo, the secret left alone).
    pub secret_is_ours: bool,
}

/// Creates the image, streams `data` into it and registers it as the secret's consumer, recording each step in
/// `ledger`; returns the image id. On error the ledger still holds what exists: the caller undoes it.
pub fn publish(
    session: &Arc<Session>,
    ledger: &Ledger,
    publication: &Publication<'_>,
    data: Box<dyn std::io::Read + Send>,
    on_created: &dyn Fn(&str),
) -> Result<String, Error> {
    let glance = Glance::new(session.clone())?;
    let barbican = match publication.secret {
        Some(_) => Some(Barbican::new(session.clone())?),
        None => None,
    };
    let id = glance.create(&publication.image)?;
    ledger.image_created(&id);
    on_created(&id);
    glance.upload(&id, data)?;
    if let (Some(barbican), Some(secret)) = (&barbican, publication.secret) {
        let consumer = Consumer { service: "glance".into(), resource_type: "image".into(), resource_id: id.clone() };
        barbican.add_consumer(secret, &consumer)?;
        // Recorded for our own secret too: Barbican releases after Zed refuse to delete a secret that still has
        // consumers, so undo removes it before deleting the secret.
        ledger.consumer_added(secret, &consumer);
    }
    let shown = glance.show(&id)?;
    if shown["status"].as_str() != Some("active") {
        return Err(Error::Protocol {
            what: format!("uploading image `{id}`"),
            service: "Glance".into(),
            problem: format!(
                "the image is `{}` after its upload, not `active`",
                shown["status"].as_str().unwrap_or("?")
            ),
        });
    }
    Ok(id)
}
