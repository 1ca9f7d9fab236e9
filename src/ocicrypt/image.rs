//! Encrypting, decrypting and authorizing whole images: walking index → manifests → layers, choosing the
//! platforms and layers to work on, and rewriting manifests and indexes that change.

use super::keywrap::{KeyUnwrapper, KeyWrapper};
use super::layer::{LayerKey, PrivateOptions, PublicOptions};
use super::pipeline::{self, Direction};
use super::{ANNOTATION_PREFIX, Error, KEYS_ANNOTATION_PREFIX, PUBOPTS_ANNOTATION};
use crate::crypto::SecretBytes;
use crate::crypto::encoding::{b64_decode_lenient, b64_encode};
use crate::interact::{Interaction, ProgressReader};
use crate::oci::{self, Descriptor, ImageDestination, ImageSource, MediaKind, Platform};
use hmac::Mac;
use serde_json::Value;
use std::collections::BTreeMap;

/// Which manifests and layers an operation applies to.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Platforms to work on; empty: all.
    pub platforms: Vec<Platform>,
    /// Layer indexes per manifest (0 = bottom, negative from the top); empty: all.
    pub layers: Vec<i64>,
    /// Succeed even when no selected layer is encrypted: encrypt would leave every layer plaintext, decrypt and
    /// authorize find nothing to open. Without it that is an error: a selection that checks nothing is a mistake.
    pub allow_plaintext: bool,
}

impl Selection {
    fn selects_platform(&self, platform: Option<&Platform>) -> bool {
        self.platforms.is_empty() || platform.is_some_and(|p| self.platforms.iter().any(|want| want.selects(p)))
    }

    /// The selected layer positions of a manifest with `count` layers.
    fn layer_positions(&self, count: usize, manifest: &str) -> Result<Vec<bool>, Error> {
        if self.layers.is_empty() {
            return Ok(vec![true; count]);
        }
        let mut chosen = vec![false; count];
        for &index in &self.layers {
            let position = if index < 0 { count as i64 + index } else { index };
            if position < 0 || position >= count as i64 {
                return Err(Error::Malformed(format!(
                    "layer {index} does not exist: manifest {manifest} has {count} layers"
                )));
            }
            chosen[position as usize] = true;
        }
        Ok(chosen)
    }
}

/// What happened to one layer.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LayerReport {
    /// The platform of its manifest, if known.
    pub platform: Option<String>,
    /// Position in its manifest (0 = bottom).
    pub index: usize,
    /// Digest before the operation.
    pub digest: String,
    /// `encrypted`, `decrypted`, `recipients-added`, `authorized`, `denied`, `unencrypted`, `skipped`, or
    /// `foreign` (a non-distributable layer whose blob lives at its URLs: left as it is, like containers/image).
    pub outcome: &'static str,
    /// Wrapping schemes found on the layer.
    pub schemes: Vec<String>,
    /// Why a layer is `denied` (what the keys, or the key manager, said).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// The layer-level operation applied while walking an image.
enum Operation<'a> {
    Encrypt { wrappers: &'a [Box<dyn KeyWrapper>], unwrappers: &'a [Box<dyn KeyUnwrapper>], reencrypt: bool },
    Decrypt { unwrappers: &'a [Box<dyn KeyUnwrapper>] },
}

struct Walk<'a> {
    source: &'a dyn ImageSource,
    destination: &'a mut dyn ImageDestination,
    selection: &'a Selection,
    operation: Operation<'a>,
    ui: &'a dyn Interaction,
    /// Layers moved at once.
    jobs: usize,
    reports: Vec<LayerReport>,
    platforms: PlatformTally,
}

/// The platforms an image has, and how many manifests a selection chose: a `--platform` that matches no
/// manifest is an error naming the ones there are, not an image copied with nothing done.
#[derive(Default)]
struct PlatformTally {
    seen: std::collections::BTreeSet<String>,
    selected: usize,
}

impl PlatformTally {
    fn count(&mut self, platform: Option<&Platform>, selected: bool) {
        if let Some(platform) = platform {
            self.seen.insert(platform.to_string());
        }
        self.selected += usize::from(selected);
    }

    fn check(&self, selection: &Selection) -> Result<(), Error> {
        if self.selected > 0 || selection.platforms.is_empty() {
            return Ok(());
        }
        let wanted: Vec<String> = selection.platforms.iter().map(Platform::to_string).collect();
        let has = if self.seen.is_empty() {
            "no platform recorded".to_owned()
        } else {
            self.seen.iter().cloned().collect::<Vec<_>>().join(", ")
        };
        Err(Error::NothingSelected {
            problem: format!("no manifest of the image is for {} (the image has {has})", wanted.join(" or ")),
            platform: true,
        })
    }
}

/// A selection that leaves nothing encrypted to work on is refused (unless `allow_plaintext`): encrypt would
/// write a plaintext image under an "encrypted" name, decrypt and authorize would check nothing.
fn check_something_encrypted(reports: &[LayerReport], selection: &Selection, operation: &str) -> Result<(), Error> {
    const ENCRYPTED: &[&str] = &["encrypted", "re-encrypted", "recipients-added", "decrypted", "authorized", "denied"];
    if selection.allow_plaintext || reports.iter().any(|r| ENCRYPTED.contains(&r.outcome)) {
        return Ok(());
    }
    let mut outcomes: BTreeMap<&str, u64> = BTreeMap::new();
    for report in reports {
        *outcomes.entry(report.outcome).or_default() += 1;
    }
    let found = if outcomes.is_empty() {
        "the selection has no layers".to_owned()
    } else {
        let counts: Vec<String> = outcomes.iter().map(|(outcome, n)| format!("{n} {outcome}")).collect();
        format!("layers: {}", counts.join(", "))
    };
    let problem = match operation {
        "encrypt" => format!("no layer of the result would be encrypted ({found})"),
        _ => format!("no selected layer is encrypted: nothing to {operation} ({found})"),
    };
    Err(Error::NothingSelected { problem, platform: false })
}

/// What to do with layers that are already encrypted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EncryptedLayers {
    /// Add the new recipients to them (their key is unwrapped and wrapped again); the ciphertext stays.
    AddRecipients,
    /// Re-encrypt them under a fresh key for the new recipients only: whoever could open the old key cannot
    /// open the new ciphertext. This is the only way to remove a recipient.
    Reencrypt,
}

/// Encrypts the selected layers of `source` into `destination` for the wrappers' recipients. Layers that are
/// already encrypted are handled as `encrypted` says; their key is unwrapped with `unwrappers`. Up to `jobs`
/// layers move at once.
#[allow(clippy::too_many_arguments)] // each is a separate decision of the caller's; a struct would only rename them
pub fn encrypt_image(
    source: &dyn ImageSource,
    destination: Box<dyn ImageDestination + '_>,
    selection: &Selection,
    wrappers: &[Box<dyn KeyWrapper>],
    unwrappers: &[Box<dyn KeyUnwrapper>],
    encrypted: EncryptedLayers,
    jobs: usize,
    ui: &dyn Interaction,
) -> Result<Vec<LayerReport>, Error> {
    let operation = Operation::Encrypt { wrappers, unwrappers, reencrypt: encrypted == EncryptedLayers::Reencrypt };
    run(source, destination, selection, operation, jobs, ui)
}

/// Decrypts the selected layers of `source` into `destination`.
pub fn decrypt_image(
    source: &dyn ImageSource,
    destination: Box<dyn ImageDestination + '_>,
    selection: &Selection,
    unwrappers: &[Box<dyn KeyUnwrapper>],
    jobs: usize,
    ui: &dyn Interaction,
) -> Result<Vec<LayerReport>, Error> {
    run(source, destination, selection, Operation::Decrypt { unwrappers }, jobs, ui)
}

fn run(
    source: &dyn ImageSource,
    mut destination: Box<dyn ImageDestination + '_>,
    selection: &Selection,
    operation: Operation<'_>,
    jobs: usize,
    ui: &dyn Interaction,
) -> Result<Vec<LayerReport>, Error> {
    let root = source.root().clone();
    let (new_root, reports) = {
        let name = match operation {
            Operation::Encrypt { .. } => "encrypt",
            Operation::Decrypt { .. } => "decrypt",
        };
        let mut walk = Walk {
            source,
            destination: destination.as_mut(),
            selection,
            operation,
            ui,
            jobs,
            reports: Vec::new(),
            platforms: PlatformTally::default(),
        };
        let new_root = walk.descriptor(&root, None)?;
        walk.platforms.check(selection)?;
        check_something_encrypted(&walk.reports, selection, name)?;
        (new_root, walk.reports)
    };
    // Only now does the destination name anything: a refused selection leaves it as it was.
    destination.commit(&new_root)?;
    Ok(reports)
}

impl Walk<'_> {
    fn descriptor(&mut self, descriptor: &Descriptor, platform: Option<Platform>) -> Result<Descriptor, Error> {
        match descriptor.kind() {
            MediaKind::Index => self.index(descriptor),
            MediaKind::Manifest => self.manifest(descriptor, platform),
            _ => {
                oci::copy_blob(self.source, self.destination, descriptor)?;
                Ok(descriptor.clone())
            }
        }
    }

    fn index(&mut self, descriptor: &Descriptor) -> Result<Descriptor, Error> {
        let mut index = parse_json(&self.source.read_blob(descriptor)?, "image index")?;
        let entries = index.get_mut("manifests").and_then(Value::as_array_mut).ok_or_else(|| {
            Error::Malformed(format!("image index {} has no manifests", descriptor.digest().unwrap_or_default()))
        })?;
        let mut changed = false;
        for entry in entries.iter_mut() {
            let child = Descriptor::from_value(entry.clone())?;
            let platform = child.platform();
            let new_child = if self.selection.selects_platform(platform.as_ref()) {
                self.descriptor(&child, platform)?
            } else {
                self.platforms.count(platform.as_ref(), false);
                copy_tree(self.source, self.destination, &child)?;
                child.clone()
            };
            if new_child != child {
                *entry = new_child.to_value();
                changed = true;
            }
        }
        self.store_if_changed(descriptor, index, changed, MediaKind::Index)
    }

    fn manifest(&mut self, descriptor: &Descriptor, platform: Option<Platform>) -> Result<Descriptor, Error> {
        let mut manifest = parse_json(&self.source.read_blob(descriptor)?, "image manifest")?;
        let config = manifest.get("config").cloned().map(Descriptor::from_value).transpose()?;
        let config = config.ok_or_else(|| {
            Error::Malformed(format!("manifest {} has no config", descriptor.digest().unwrap_or_default()))
        })?;
        let platform = match platform {
            Some(p) => Some(p),
            None => Platform::from_config(&self.source.read_blob(&config)?),
        };
        let selected = self.selection.selects_platform(platform.as_ref());
        self.platforms.count(platform.as_ref(), selected);
        if !selected {
            copy_tree(self.source, self.destination, descriptor)?;
            return Ok(descriptor.clone());
        }
        let layers = manifest.get_mut("layers").and_then(Value::as_array_mut).ok_or_else(|| {
            Error::Malformed(format!("manifest {} has no layers", descriptor.digest().unwrap_or_default()))
        })?;
        let chosen = self.selection.layer_positions(layers.len(), descriptor.digest()?)?;
        // Decided here, in layer order (keys are unwrapped on this thread: a key holder may ask for a
        // passphrase), moved in parallel, and finished here in layer order again: the result does not depend on
        // which transfer ended first.
        let mut planned = vec![Planned { layer: config, index: 0, work: Work::Copy, report: None }];
        for (index, (entry, selected)) in layers.iter().zip(chosen).enumerate() {
            let layer = Descriptor::from_value(entry.clone())?;
            planned.push(self.plan(layer, index, platform.as_ref(), selected)?);
        }
        let moved = transfer_all(self.source, &*self.destination, &planned, self.jobs, self.ui)?;
        let mut changed = false;
        for (plan, moved) in planned.into_iter().zip(moved).skip(1) {
            let entry = &mut layers[plan.index];
            let original = plan.layer.clone();
            let new_layer = self.finish(plan, moved)?;
            if new_layer != original {
                *entry = new_layer.to_value();
                changed = true;
            }
        }
        if changed {
            convert_to_oci(&mut manifest);
        }
        self.store_if_changed(descriptor, manifest, changed, MediaKind::Manifest)
    }

    /// What layer `index` needs; for an encrypted layer, its key unwrapped.
    fn plan(
        &mut self,
        layer: Descriptor,
        index: usize,
        platform: Option<&Platform>,
        selected: bool,
    ) -> Result<Planned, Error> {
        let mut report = LayerReport {
            platform: platform.map(Platform::to_string),
            index,
            digest: layer.digest()?.to_owned(),
            outcome: "skipped",
            schemes: wrapped_schemes(&layer),
            problem: None,
        };
        if layer.is_foreign() {
            report.outcome = "foreign";
        }
        let work = match (&self.operation, layer.kind(), selected) {
            _ if layer.is_foreign() => Work::Copy,
            // Not a blob: a manifest a layer list names is copied here, as a manifest.
            (_, MediaKind::Index | MediaKind::Manifest, _) => {
                oci::copy_blob_reporting(self.source, self.destination, &layer, self.ui)?;
                Work::Done
            }
            (_, _, false) | (_, MediaKind::Other, _) => Work::Copy,
            (Operation::Encrypt { unwrappers, reencrypt: true, .. }, MediaKind::EncryptedLayer, true) => {
                report.outcome = "re-encrypted";
                let public = public_options(&layer, index)?;
                let old = PrivateOptions::from_json(&unwrap_private_options(&layer, index, unwrappers)?, &public)?;
                Work::Reencrypt { old, public, key: LayerKey::generate() }
            }
            (Operation::Encrypt { .. }, MediaKind::Layer, true) => {
                report.outcome = "encrypted";
                Work::Encrypt { key: LayerKey::generate() }
            }
            (Operation::Encrypt { wrappers, unwrappers, reencrypt: false }, MediaKind::EncryptedLayer, true) => {
                report.outcome = "recipients-added";
                // Only the annotations change: the ciphertext blob is carried over as it is.
                Work::AddRecipients { updated: add_recipients(&layer, index, wrappers, unwrappers)? }
            }
            (Operation::Decrypt { unwrappers }, MediaKind::EncryptedLayer, true) => {
                report.outcome = "decrypted";
                let public = public_options(&layer, index)?;
                let private = PrivateOptions::from_json(&unwrap_private_options(&layer, index, unwrappers)?, &public)?;
                Work::Decrypt { private, public }
            }
            (Operation::Decrypt { .. }, MediaKind::Layer, true) => {
                report.outcome = "unencrypted";
                Work::Copy
            }
        };
        self.ui.debug(&format!("layer {index} ({}): {}", report.digest, report.outcome));
        Ok(Planned { layer, index, work, report: Some(report) })
    }

    /// The new descriptor of a layer that was moved; recipients are wrapped here, on the calling thread.
    fn finish(&mut self, plan: Planned, moved: Moved) -> Result<Descriptor, Error> {
        let Planned { layer, index, work, report } = plan;
        if let Some(report) = report {
            self.reports.push(report);
        }
        let wrappers = match &self.operation {
            Operation::Encrypt { wrappers, .. } => *wrappers,
            Operation::Decrypt { .. } => &[],
        };
        match (work, moved) {
            (Work::Encrypt { key }, Moved::Encrypted(encrypted)) => {
                // The pipeline verified the source digest at the end of the stream, so it is the plaintext's.
                let private = PrivateOptions { key, digest: layer.digest()?.to_owned() };
                let mut annotations = encrypted_layer_annotations(layer.annotations());
                wrap_for_all(&mut annotations, &private, &encrypted, wrappers)?;
                let mut updated = layer.clone();
                updated.set_content(
                    &oci::encrypted_media_type(layer.media_type()?),
                    &encrypted.ciphertext_digest,
                    encrypted.size,
                );
                updated.set_annotations(annotations);
                Ok(updated)
            }
            (Work::Reencrypt { key, .. }, Moved::Reencrypted { encrypted, plaintext_digest }) => {
                let private = PrivateOptions { key, digest: plaintext_digest };
                let mut annotations = encrypted_layer_annotations(layer.annotations());
                wrap_for_all(&mut annotations, &private, &encrypted, wrappers)?;
                let mut updated = layer.clone();
                updated.set_content(layer.media_type()?, &encrypted.ciphertext_digest, encrypted.size);
                updated.set_annotations(annotations);
                Ok(updated)
            }
            (Work::Decrypt { private, .. }, Moved::Decrypted { digest, size }) => {
                if !private.digest.is_empty() && private.digest != digest {
                    // containers/image records the digest of the layer before it compressed it, so a mismatch
                    // alone does not mean tampering: the HMAC already authenticated every byte.
                    self.ui.warn(&format!(
                        "layer {index}: the private options name digest {}, the decrypted layer is {digest} (the producer recorded the digest before compressing)",
                        private.digest
                    ));
                }
                let mut plain = layer.clone();
                plain.set_content(&oci::decrypted_media_type(layer.media_type()?), &digest, size);
                plain.set_annotations(without_encryption_annotations(layer.annotations()));
                Ok(plain)
            }
            (Work::AddRecipients { updated }, _) => Ok(updated),
            _ => Ok(layer),
        }
    }

    fn store_if_changed(
        &mut self,
        original: &Descriptor,
        document: Value,
        changed: bool,
        kind: MediaKind,
    ) -> Result<Descriptor, Error> {
        if !changed {
            oci::copy_blob(self.source, self.destination, original)?;
            return Ok(original.clone());
        }
        let bytes = serde_json::to_vec(&document).expect("JSON values serialize");
        let media_type = match (kind, document.get("mediaType").and_then(Value::as_str)) {
            (_, Some(declared)) => declared.to_owned(),
            (MediaKind::Index, None) => oci::OCI_INDEX.to_owned(),
            _ => oci::OCI_MANIFEST.to_owned(),
        };
        let digest = self.destination.put_manifest(&bytes, &media_type)?;
        let mut updated = original.clone();
        updated.set_content(&media_type, &digest, bytes.len() as u64);
        Ok(updated)
    }
}

/// An encrypted image is an OCI image: a Docker schema 2 manifest whose layers were encrypted becomes an OCI
/// manifest (what containers/image does too).
fn convert_to_oci(manifest: &mut Value) {
    if manifest.get("mediaType").and_then(Value::as_str) != Some("application/vnd.docker.distribution.manifest.v2+json")
    {
        return;
    }
    manifest["mediaType"] = oci::OCI_MANIFEST.into();
    if let Some(config) = manifest.get_mut("config") {
        config["mediaType"] = "application/vnd.oci.image.config.v1+json".into();
    }
    if let Some(layers) = manifest.get_mut("layers").and_then(Value::as_array_mut) {
        for layer in layers {
            if layer.get("mediaType").and_then(Value::as_str)
                == Some("application/vnd.docker.image.rootfs.diff.tar.gzip")
            {
                layer["mediaType"] = "application/vnd.oci.image.layer.v1.tar+gzip".into();
            }
        }
    }
}

/// Copies an image subtree unchanged.
fn copy_tree(
    source: &dyn ImageSource,
    destination: &mut dyn ImageDestination,
    descriptor: &Descriptor,
) -> Result<(), Error> {
    let children: Vec<Value> = match descriptor.kind() {
        MediaKind::Index => {
            let index = parse_json(&source.read_blob(descriptor)?, "image index")?;
            index.get("manifests").and_then(Value::as_array).cloned().unwrap_or_default()
        }
        MediaKind::Manifest => {
            let manifest = parse_json(&source.read_blob(descriptor)?, "image manifest")?;
            let mut children: Vec<Value> = manifest.get("config").cloned().into_iter().collect();
            children.extend(manifest.get("layers").and_then(Value::as_array).cloned().unwrap_or_default());
            children
        }
        _ => Vec::new(),
    };
    for child in children {
        copy_tree(source, destination, &Descriptor::from_value(child)?)?;
    }
    Ok(oci::copy_blob(source, destination, descriptor)?)
}

fn parse_json(bytes: &[u8], what: &str) -> Result<Value, Error> {
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| Error::Malformed(format!("{what} is not valid JSON: {e}")))?;
    if !value.is_object() {
        return Err(Error::Malformed(format!("{what} is not a JSON object")));
    }
    Ok(value)
}

/// The wrapping schemes present on a layer (`jwe`, `pgp`, …), sorted.
fn wrapped_schemes(layer: &Descriptor) -> Vec<String> {
    layer.annotations().keys().filter_map(|k| k.strip_prefix(KEYS_ANNOTATION_PREFIX)).map(str::to_owned).collect()
}

/// What one layer needs moved.
enum Work {
    /// Nothing left to move (a manifest, copied when planned).
    Done,
    /// The blob as it is (unless the destination has it, or it is foreign).
    Copy,
    /// The blob as it is; the descriptor gets the new recipients.
    AddRecipients { updated: Descriptor },
    /// Through the cipher under a fresh key.
    Encrypt { key: LayerKey },
    /// Through the cipher with the layer's key; committed only once the HMAC matched.
    Decrypt { private: PrivateOptions, public: PublicOptions },
    /// Decrypted with the old key and encrypted under a fresh one in one pass.
    Reencrypt { old: PrivateOptions, public: PublicOptions, key: LayerKey },
}

/// A layer (or the config: no report) and what it needs.
struct Planned {
    layer: Descriptor,
    index: usize,
    work: Work,
    report: Option<LayerReport>,
}

/// What moving a layer produced.
enum Moved {
    Copied,
    Encrypted(super::layer::EncryptedLayer),
    Decrypted { digest: String, size: u64 },
    Reencrypted { encrypted: super::layer::EncryptedLayer, plaintext_digest: String },
}

/// Moves every planned blob, up to `jobs` at once through the source and the cipher (each on a thread of its own,
/// with its own bounded pipeline and upload: memory grows with `jobs`, not with layer sizes). A blob whose bytes
/// have all been made is finished (its upload waited for and committed) on a finishing thread, up to `jobs` of
/// them, while its worker takes the next layer: on a registry far away the upload of a layer takes longer than its
/// download and cipher, and a worker waiting for it would hold back the layers after it. The first failure stops
/// the others: their reads fail, so their blobs are never committed and their uploads are cancelled, and it is the
/// one reported.
fn transfer_all<'d>(
    source: &dyn ImageSource,
    destination: &'d dyn ImageDestination,
    planned: &[Planned],
    jobs: usize,
    ui: &dyn Interaction,
) -> Result<Vec<Moved>, Error> {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let stopped = AtomicBool::new(false);
    let next = AtomicUsize::new(0);
    // One pool of cipher chunks for every layer in flight, not one per job: memory does not grow with `jobs`.
    let chunks = pipeline::Chunks::new(jobs.clamp(1, planned.len().max(1)));
    let moved: Mutex<Vec<Option<Moved>>> = Mutex::new(planned.iter().map(|_| None).collect());
    let failure: Mutex<Option<Error>> = Mutex::new(None);
    let cancelled = || stopped.load(Ordering::Relaxed);
    // A failing transfer stops the others as soon as it fails, before its own upload is cancelled (a round trip
    // during which the others could otherwise finish and commit their blobs).
    // Commits hold the gate shared, and stopping takes it alone: once `stop` returns no commit is under way, and
    // every later one sees the flag.
    let gate = std::sync::RwLock::new(());
    // The transfer that stopped the others first: its failure is the one reported. The others' failures are
    // mostly their cancellation (a read refused, a commit skipped), which says nothing; which errors those are
    // need not be recognised (their text passes through registry I/O errors), only who stopped first.
    let first_to_stop = std::sync::OnceLock::new();
    let stop = || {
        let _alone = gate.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        first_to_stop.get_or_init(|| std::thread::current().id());
        stopped.store(true, Ordering::Relaxed);
    };
    let stopping = Stopping { cancelled: &cancelled, stop: &stop, gate: &gate };
    // A worker or finisher runs one transfer at a time, so its thread stands for the transfer that failed.
    let fail = |error: Error| {
        stop();
        // The failure that stopped the others is reported, not theirs ("cancelled"), whichever returns first.
        let stopped_the_others = first_to_stop.get() == Some(&std::thread::current().id());
        let mut failure = failure.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if stopped_the_others || failure.is_none() {
            *failure = Some(error);
        }
    };
    let finish = |i: usize, finishing: Finishing<'d>| {
        let Finishing { writer, digest, moved: done } = finishing;
        match commit_if_wanted(writer, &digest, &stopping) {
            Ok(()) => moved.lock().unwrap_or_else(std::sync::PoisonError::into_inner)[i] = Some(done),
            Err(error) => fail(error),
        }
    };
    // `handoff`: where a blob whose bytes are all made is finished; none: on the worker's thread.
    let worker = |handoff: Option<std::sync::mpsc::SyncSender<(usize, Finishing<'d>)>>| {
        while !cancelled() {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(plan) = planned.get(i) else { break };
            match transfer(source, destination, plan, &chunks, ui, &stopping) {
                Ok(Transferred::Done(done)) => {
                    moved.lock().unwrap_or_else(std::sync::PoisonError::into_inner)[i] = Some(done)
                }
                Ok(Transferred::Finishing(finishing)) => match &handoff {
                    // Waits for a free finisher; the upload goes on meanwhile.
                    Some(handoff) => {
                        if let Err(std::sync::mpsc::SendError((i, finishing))) = handoff.send((i, finishing)) {
                            finish(i, finishing);
                        }
                    }
                    None => finish(i, finishing),
                },
                Err(error) => {
                    fail(error);
                    break;
                }
            }
        }
    };
    let threads = jobs.clamp(1, planned.len().max(1));
    if threads == 1 {
        worker(None);
    } else {
        let (handoff, finishing) = std::sync::mpsc::sync_channel::<(usize, Finishing<'d>)>(0);
        let finishing = Mutex::new(finishing);
        let finisher = || {
            loop {
                // The lock is held only while waiting for the next blob, not while finishing it.
                let received = finishing.lock().unwrap_or_else(std::sync::PoisonError::into_inner).recv();
                let Ok((i, item)) = received else { break };
                if cancelled() {
                    continue; // dropped: its upload is cancelled
                }
                finish(i, item);
            }
        };
        let worker = &worker;
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(finisher);
                let handoff = handoff.clone();
                scope.spawn(move || worker(Some(handoff)));
            }
            drop(handoff); // the finishers end once every worker has
        });
    }
    if let Some(error) = failure.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner) {
        return Err(error);
    }
    Ok(moved
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .into_iter()
        .map(|m| m.expect("every blob moved"))
        .collect())
}

/// A blob whose bytes are all made, and what it will be once committed.
struct Finishing<'d> {
    writer: Box<dyn oci::BlobWriter + 'd>,
    digest: String,
    moved: Moved,
}

/// How far a transfer went on its worker.
enum Transferred<'d> {
    /// Moved and committed (or nothing to move).
    Done(Moved),
    /// Every byte made; the writer is still to be waited for and committed ([`commit_if_wanted`]).
    Finishing(Finishing<'d>),
}

/// Commits `writer`'s blob unless another transfer failed: every byte is first handed to the store (a registry
/// upload's PATCH ends), then the decision is taken, so that a layer finishing while another fails is not stored
/// (its writer is dropped and its upload cancelled).
fn commit_if_wanted(
    mut writer: Box<dyn oci::BlobWriter + '_>,
    digest: &str,
    stopping: &Stopping<'_>,
) -> Result<(), Error> {
    // A refusal surfaces here when the whole blob fitted the upload's window: stop the others before this
    // writer's own upload is cancelled.
    writer.flush_data(digest).inspect_err(|_| (stopping.stop)())?;
    let _shared = stopping.gate.read().unwrap_or_else(std::sync::PoisonError::into_inner);
    if (stopping.cancelled)() {
        return Err(oci::Error::Io(oci::CANCELLED.into()).into());
    }
    Ok(writer.commit(digest)?)
}

/// How a transfer learns that another failed, and tells the others that it did.
struct Stopping<'a> {
    /// Whether another transfer failed (asked before every read).
    cancelled: &'a (dyn Fn() -> bool + Sync),
    /// Called the moment this transfer fails, before its writer is dropped.
    stop: &'a (dyn Fn() + Sync),
    /// Held shared by a commit, alone by `stop`.
    gate: &'a std::sync::RwLock<()>,
}

/// Moves one blob, on a transfer thread, up to its last byte handed to the destination (the writer is left to
/// [`commit_if_wanted`]); `stop` is called the moment it fails, before its writer is dropped.
fn transfer<'d>(
    source: &dyn ImageSource,
    destination: &'d dyn ImageDestination,
    plan: &Planned,
    chunks: &std::sync::Arc<pipeline::Chunks>,
    ui: &dyn Interaction,
    stopping: &Stopping<'_>,
) -> Result<Transferred<'d>, Error> {
    let (cancelled, stop) = (stopping.cancelled, stopping.stop);
    let failing = |error: Error| {
        stop();
        error
    };
    let (layer, index) = (&plan.layer, plan.index);
    match &plan.work {
        Work::Done => Ok(Transferred::Done(Moved::Copied)),
        Work::Copy | Work::AddRecipients { .. } => {
            // The config is small: no progress bar for it, as before.
            let ui = if plan.report.is_some() { ui } else { &crate::interact::NonInteractive };
            oci::copy_layer_blob(source, destination, layer, ui, cancelled)?;
            Ok(Transferred::Done(Moved::Copied))
        }
        Work::Encrypt { key } => {
            let (writer, pass) = run_pipeline(source, destination, plan, chunks, Pipeline::Encrypt(key), ui, stopping)?;
            let encrypted = super::layer::EncryptedLayer {
                hmac: pass.mac.finalize().into_bytes().into(),
                ciphertext_digest: pass.output_digest,
                size: pass.size,
            };
            let digest = encrypted.ciphertext_digest.clone();
            Ok(Transferred::Finishing(Finishing { writer, digest, moved: Moved::Encrypted(encrypted) }))
        }
        Work::Decrypt { private, public } => {
            let (writer, pass) =
                run_pipeline(source, destination, plan, chunks, Pipeline::Decrypt(&private.key), ui, stopping)?;
            // The plaintext stays in an uncommitted temporary blob until the HMAC has matched.
            super::layer::verify_hmac(pass.mac, &public.hmac).map_err(|e| failing(in_layer(e, index, layer)))?;
            let digest = pass.output_digest.clone();
            let moved = Moved::Decrypted { digest: pass.output_digest, size: pass.size };
            Ok(Transferred::Finishing(Finishing { writer, digest, moved }))
        }
        Work::Reencrypt { old, public, key } => {
            let (writer, pass) =
                run_pipeline(source, destination, plan, chunks, Pipeline::Reencrypt(&old.key, key), ui, stopping)?;
            // The new ciphertext stays uncommitted until the old HMAC has verified every byte it came from.
            let reencrypted = pass.reencrypted.expect("a re-encryption pass says what it decrypted");
            super::layer::verify_hmac(reencrypted.old_mac, &public.hmac)
                .map_err(|e| failing(in_layer(e, index, layer)))?;
            let encrypted = super::layer::EncryptedLayer {
                hmac: pass.mac.finalize().into_bytes().into(),
                ciphertext_digest: pass.output_digest,
                size: pass.size,
            };
            let digest = encrypted.ciphertext_digest.clone();
            let moved = Moved::Reencrypted { encrypted, plaintext_digest: reencrypted.plaintext_digest };
            Ok(Transferred::Finishing(Finishing { writer, digest, moved }))
        }
    }
}

/// The cipher work of one pass.
enum Pipeline<'k> {
    Encrypt(&'k LayerKey),
    Decrypt(&'k LayerKey),
    Reencrypt(&'k LayerKey, &'k LayerKey),
}

/// Runs a layer through the cipher into a new, uncommitted blob of `destination`: the source read once,
/// unverified, because the pipeline hashes it and checks it against the layer's descriptor itself.
fn run_pipeline<'d>(
    source: &dyn ImageSource,
    destination: &'d dyn ImageDestination,
    plan: &Planned,
    chunks: &std::sync::Arc<pipeline::Chunks>,
    work: Pipeline<'_>,
    ui: &dyn Interaction,
    stopping: &Stopping<'_>,
) -> Result<(Box<dyn oci::BlobWriter + 'd>, pipeline::Pass), Error> {
    let (layer, index) = (&plan.layer, plan.index);
    let (cancelled, stop) = (stopping.cancelled, stopping.stop);
    let (verb, direction) = match work {
        Pipeline::Encrypt(key) => ("encrypting", Direction::Encrypt(key)),
        Pipeline::Decrypt(key) => ("decrypting", Direction::Decrypt(key)),
        Pipeline::Reencrypt(old, new) => ("re-encrypting", Direction::Reencrypt { old, new }),
    };
    let progress = ui.transfer(&format!("{verb} layer {index}"), layer.size()?);
    let reader = ProgressReader::new(source.open_blob_unverified(layer)?, progress);
    let mut reader = oci::Cancellable { inner: reader, cancelled };
    // About the layer's size (a cipher adds or removes little), so that a registry opens the upload at once.
    let mut writer = destination.blob_writer_sized(layer.size()?)?;
    let expected = pipeline::Expected { digest: layer.digest()?, size: layer.size()? };
    let pass = pipeline::run(chunks, direction, &expected, &mut reader, &mut writer).map_err(|e| {
        stop();
        oci::io_error(layer, e)
    })?;
    Ok((writer, pass))
}

fn public_options(layer: &Descriptor, index: usize) -> Result<PublicOptions, Error> {
    let annotation = layer
        .annotation(PUBOPTS_ANNOTATION)
        .ok_or_else(|| Error::Malformed(format!("layer {index}: no {PUBOPTS_ANNOTATION} annotation")))?;
    PublicOptions::from_annotation(annotation)
}

fn in_layer(error: Error, index: usize, layer: &Descriptor) -> Error {
    match error {
        Error::Integrity(m) => Error::Integrity(format!("layer {index} ({}): {m}", layer.digest().unwrap_or_default())),
        other => other,
    }
}

/// Wraps the private options for every recipient and adds the public options.
fn wrap_for_all(
    annotations: &mut BTreeMap<String, String>,
    private: &PrivateOptions,
    encrypted: &super::layer::EncryptedLayer,
    wrappers: &[Box<dyn KeyWrapper>],
) -> Result<(), Error> {
    let private_json = private.to_json();
    for wrapper in wrappers {
        let wrapped = wrapper.wrap(&private_json)?;
        annotations.insert(format!("{KEYS_ANNOTATION_PREFIX}{}", wrapper.scheme()), b64_encode(&wrapped));
    }
    if !annotations.keys().any(|k| k.starts_with(KEYS_ANNOTATION_PREFIX)) {
        return Err(Error::Wrap { scheme: "all".into(), problem: "no recipient produced a wrapped key".into() });
    }
    let public = PublicOptions { cipher: super::layer::CIPHER.into(), hmac: encrypted.hmac.to_vec(), nonce: None };
    annotations.insert(PUBOPTS_ANNOTATION.into(), public.to_annotation());
    Ok(())
}

fn without_encryption_annotations(annotations: BTreeMap<String, String>) -> BTreeMap<String, String> {
    annotations.into_iter().filter(|(k, _)| !k.starts_with(ANNOTATION_PREFIX)).collect()
}

/// Prefixes of the annotations that describe a zstd:chunked or eStargz layer's table of contents (containers/storage
/// `pkg/chunked`, stargz-snapshotter `estargz`). On an encrypted layer they would reveal the plaintext's file list
/// digest and offsets, and a snapshotter would try partial pulls a ciphertext cannot serve.
pub const PLAINTEXT_TOC_PREFIXES: &[&str] = &[
    "io.github.containers.zstd-chunked.",
    "io.containers.zstd-chunked.",
    "containerd.io/snapshot/stargz/",
    "io.containers.estargz.",
];

/// The annotations of an encrypted layer: no old ocicrypt keys, no table of contents of the plaintext.
fn encrypted_layer_annotations(annotations: BTreeMap<String, String>) -> BTreeMap<String, String> {
    without_encryption_annotations(annotations)
        .into_iter()
        .filter(|(k, _)| !PLAINTEXT_TOC_PREFIXES.iter().any(|p| k.starts_with(p)))
        .collect()
}

/// Adds recipients to an encrypted layer: its private options are unwrapped and wrapped again for the new
/// recipients, appended to the existing entries. The blob is not touched; unknown schemes are carried through.
fn add_recipients(
    layer: &Descriptor,
    index: usize,
    wrappers: &[Box<dyn KeyWrapper>],
    unwrappers: &[Box<dyn KeyUnwrapper>],
) -> Result<Descriptor, Error> {
    let private_json = unwrap_private_options(layer, index, unwrappers)?;
    let mut annotations = layer.annotations();
    for wrapper in wrappers {
        let key = format!("{KEYS_ANNOTATION_PREFIX}{}", wrapper.scheme());
        let wrapped = b64_encode(&wrapper.wrap(&private_json)?);
        let value = match annotations.remove(&key) {
            Some(existing) if !existing.is_empty() => format!("{existing},{wrapped}"),
            _ => wrapped,
        };
        annotations.insert(key, value);
    }
    let mut updated = layer.clone();
    updated.set_annotations(annotations);
    Ok(updated)
}

/// Finds the private options of an encrypted layer: every wrapped entry of every scheme, in sorted order, with
/// every unwrapper of that scheme. Never reads the layer blob.
pub fn unwrap_private_options(
    layer: &Descriptor,
    index: usize,
    unwrappers: &[Box<dyn KeyUnwrapper>],
) -> Result<SecretBytes, Error> {
    unwrap_layer_key(layer, &format!("layer {index}"), unwrappers)
}

/// [`unwrap_private_options`] for a layer named `label` in messages (`layer 2`, or just `the layer`).
pub fn unwrap_layer_key(
    layer: &Descriptor,
    label: &str,
    unwrappers: &[Box<dyn KeyUnwrapper>],
) -> Result<SecretBytes, Error> {
    let digest = layer.digest()?;
    let schemes = wrapped_schemes(layer);
    let mut problems = Vec::new();
    // A key holder that could not be asked (a provider that is down, a gpg that cannot run) is a failure to
    // fix there, not a denial: reported as such when nothing else opened the layer.
    let mut unreachable: Option<(String, String)> = None;
    // A key manager that refused a key the layer names knows best what to fix (a role's policy, a disabled key).
    let mut refusal_hint: Option<String> = None;
    for scheme in &schemes {
        let entries = layer.annotation(&format!("{KEYS_ANNOTATION_PREFIX}{scheme}")).unwrap_or_default();
        for unwrapper in unwrappers.iter().filter(|u| u.scheme() == *scheme) {
            for entry in entries.split(',').filter(|e| !e.is_empty()) {
                let Ok(wrapped) = b64_decode_lenient(entry) else {
                    problems.push(format!("{scheme}: an entry is not base64"));
                    break;
                };
                match unwrapper.unwrap(&wrapped) {
                    Ok(Some(private)) => return Ok(private),
                    Ok(None) => {}
                    Err(Error::Unwrap { scheme, problem }) if unreachable.is_none() => {
                        problems.push(format!("{scheme}: cannot unwrap the layer key: {problem}"));
                        unreachable = Some((scheme, problem));
                    }
                    Err(e) => {
                        if let Error::KeyManager { error, .. } = &e
                            && refusal_hint.is_none()
                        {
                            refusal_hint = crate::exit::Classify::hint(error).map(std::borrow::Cow::into_owned);
                        }
                        problems.push(e.to_string());
                    }
                }
            }
        }
    }
    if let Some((scheme, problem)) = unreachable {
        return Err(Error::Unwrap { scheme, problem: format!("{problem} (and no other key opens {label} {digest})") });
    }
    let wrapped_for = if schemes.is_empty() { "no recipients".to_owned() } else { schemes.join(", ") };
    let given: Vec<String> = unwrappers.iter().map(|u| u.scheme()).collect();
    let mut message = format!(
        "{label} ({digest}): none of the given keys unwraps its key (wrapped for: {wrapped_for}; keys given: {})",
        if given.is_empty() { "none".to_owned() } else { given.join(", ") }
    );
    if !problems.is_empty() {
        message.push_str(&format!("; {}", problems.join("; ")));
    }
    // PKCS#7 names its recipient by certificate: a private key alone cannot be matched to an entry.
    let has = |list: &[String], scheme: &str| list.iter().any(|s| s == scheme);
    if has(&schemes, "pkcs7") && !has(&given, "pkcs7") && has(&given, "jwe") {
        return Err(Error::CertificateMissing(format!(
            "{message}; a PKCS#7 entry is opened with the recipient's private key and its X.509 certificate, and no \
             certificate given matches a private key"
        )));
    }
    // Without the `pgp` feature, a layer wrapped for OpenPGP may be one the operator could open with another build.
    #[cfg(not(feature = "pgp"))]
    if schemes.iter().any(|s| s == "pgp") {
        return Err(super::pgp::unsupported(&format!("{message}; its `pgp` entries")));
    }
    if let Some(hint) = refusal_hint {
        return Err(Error::KeyManagerRefused { message, hint });
    }
    Err(Error::Unauthenticated(message))
}

/// Checks that `unwrappers` open the key of every encrypted layer of every selected platform, reading only
/// indexes, manifests and configs, never a layer blob. The manifests an index lists (and their configs) are read
/// up to `jobs` at once, and looked at in the index's order.
pub fn authorize_image(
    source: &dyn ImageSource,
    selection: &Selection,
    unwrappers: &[Box<dyn KeyUnwrapper>],
    jobs: usize,
) -> Result<Vec<LayerReport>, Error> {
    let mut walk = Authorize {
        source,
        selection,
        unwrappers,
        jobs: jobs.max(1),
        reports: Vec::new(),
        platforms: PlatformTally::default(),
    };
    walk.descriptor(source.root(), None)?;
    walk.platforms.check(selection)?;
    check_something_encrypted(&walk.reports, selection, "authorize")?;
    Ok(walk.reports)
}

/// The walk of `authorize`.
struct Authorize<'a> {
    source: &'a dyn ImageSource,
    selection: &'a Selection,
    unwrappers: &'a [Box<dyn KeyUnwrapper>],
    jobs: usize,
    reports: Vec<LayerReport>,
    platforms: PlatformTally,
}

/// A manifest read, with its platform (from the index, else from its config).
struct ReadManifest {
    manifest: Value,
    platform: Option<Platform>,
}

/// Reads a manifest, and its config when the index did not name the platform.
fn read_manifest(
    source: &dyn ImageSource,
    descriptor: &Descriptor,
    platform: Option<Platform>,
) -> Result<ReadManifest, Error> {
    let manifest = parse_json(&source.read_blob(descriptor)?, "image manifest")?;
    let platform = match platform {
        Some(p) => Some(p),
        None => match manifest.get("config").cloned().map(Descriptor::from_value).transpose()? {
            Some(config) => Platform::from_config(&source.read_blob(&config)?),
            None => None,
        },
    };
    Ok(ReadManifest { manifest, platform })
}

impl Authorize<'_> {
    fn descriptor(&mut self, descriptor: &Descriptor, platform: Option<Platform>) -> Result<(), Error> {
        match descriptor.kind() {
            MediaKind::Index => self.index(descriptor),
            MediaKind::Manifest => {
                let read = read_manifest(self.source, descriptor, platform)?;
                self.manifest(descriptor, read)
            }
            _ => Ok(()),
        }
    }

    /// The children of an index, in its order; the selected manifests of each `jobs` of them read at once (at
    /// most `jobs` manifests in memory besides the indexes above them; nested indexes are walked one by one).
    fn index(&mut self, descriptor: &Descriptor) -> Result<(), Error> {
        let index = parse_json(&self.source.read_blob(descriptor)?, "image index")?;
        let entries = index.get("manifests").and_then(Value::as_array).cloned().unwrap_or_default();
        for batch in entries.chunks(self.jobs) {
            let mut children = Vec::new();
            for entry in batch {
                let child = Descriptor::from_value(entry.clone())?;
                let platform = child.platform();
                let selected = self.selection.selects_platform(platform.as_ref());
                children.push((child, platform, selected));
            }
            let wanted: Vec<usize> =
                (0..children.len()).filter(|&i| children[i].2 && children[i].0.kind() == MediaKind::Manifest).collect();
            let source = self.source;
            let mut read: Vec<Option<Result<ReadManifest, Error>>> = children.iter().map(|_| None).collect();
            if wanted.len() > 1 {
                let results: Vec<Result<ReadManifest, Error>> = std::thread::scope(|scope| {
                    let handles: Vec<_> = wanted
                        .iter()
                        .map(|&i| {
                            let (child, platform, _) = &children[i];
                            scope.spawn(move || read_manifest(source, child, platform.clone()))
                        })
                        .collect();
                    handles
                        .into_iter()
                        .map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
                        .collect()
                });
                for (i, result) in wanted.iter().zip(results) {
                    read[*i] = Some(result);
                }
            }
            for ((child, platform, selected), read) in children.into_iter().zip(read) {
                if !selected {
                    self.platforms.count(platform.as_ref(), false);
                    continue;
                }
                match read {
                    Some(read) => self.manifest(&child, read?)?,
                    None => self.descriptor(&child, platform)?,
                }
            }
        }
        Ok(())
    }

    fn manifest(&mut self, descriptor: &Descriptor, read: ReadManifest) -> Result<(), Error> {
        let ReadManifest { manifest, platform } = read;
        let selected = self.selection.selects_platform(platform.as_ref());
        self.platforms.count(platform.as_ref(), selected);
        if !selected {
            return Ok(());
        }
        let layers = manifest.get("layers").and_then(Value::as_array).cloned().unwrap_or_default();
        let chosen = self.selection.layer_positions(layers.len(), descriptor.digest()?)?;
        for (index, (entry, selected)) in layers.into_iter().zip(chosen).enumerate() {
            let layer = Descriptor::from_value(entry)?;
            if !selected || layer.kind() != MediaKind::EncryptedLayer || layer.is_foreign() {
                continue;
            }
            let (outcome, problem) = match unwrap_private_options(&layer, index, self.unwrappers) {
                Ok(_) => ("authorized", None),
                Err(Error::Unauthenticated(problem)) => ("denied", Some(problem)),
                Err(other) => return Err(other),
            };
            self.reports.push(LayerReport {
                platform: platform.as_ref().map(Platform::to_string),
                index,
                digest: layer.digest()?.to_owned(),
                outcome,
                schemes: wrapped_schemes(&layer),
                problem,
            });
        }
        Ok(())
    }
}

#[cfg(all(test, not(feature = "pgp")))]
mod no_pgp_tests {
    use super::*;
    use crate::exit::{Classify, ExitStatus};

    /// A layer wrapped for OpenPGP cannot be opened by this build: exit 3 and the reason, not "wrong key" (16).
    #[test]
    fn a_layer_wrapped_for_openpgp_is_refused_for_the_missing_feature() {
        let layer = Descriptor::from_value(serde_json::json!({
            "mediaType": "application/vnd.oci.image.layer.v1.tar+gzip+encrypted",
            "digest": format!("sha256:{}", "0".repeat(64)),
            "size": 1,
            "annotations": { "org.opencontainers.image.enc.keys.pgp": "AAAA" },
        }))
        .unwrap();
        let error = unwrap_private_options(&layer, 0, &[]).unwrap_err();
        assert!(error.to_string().contains("no OpenPGP support"), "{error}");
        assert_eq!(error.status(), ExitStatus::InvalidInput);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Layers from memory.
    struct Layers(Vec<(Descriptor, Vec<u8>)>);

    impl ImageSource for Layers {
        fn root(&self) -> &Descriptor {
            &self.0[0].0
        }
        fn open_blob(&self, descriptor: &Descriptor) -> Result<Box<dyn std::io::Read + '_>, oci::Error> {
            let (_, bytes) = self.0.iter().find(|(d, _)| d == descriptor).expect("a layer of the image");
            Ok(Box::new(bytes.as_slice()))
        }
    }

    /// A destination whose uploads end only once `expected` blobs are being written at once, as a registry far
    /// away takes longer for an upload than the source and the cipher take for the layer.
    struct Slow {
        expected: usize,
        writers: std::sync::Mutex<usize>,
        more: std::sync::Condvar,
        committed: std::sync::Mutex<Vec<String>>,
    }

    struct SlowWriter<'a>(&'a Slow);

    impl std::io::Write for SlowWriter<'_> {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl oci::BlobWriter for SlowWriter<'_> {
        fn flush_data(&mut self, _digest: &str) -> Result<(), oci::Error> {
            let writers = self.0.writers.lock().unwrap();
            let wait = std::time::Duration::from_secs(20);
            let (writers, _) = self.0.more.wait_timeout_while(writers, wait, |n| *n < self.0.expected).unwrap();
            match *writers >= self.0.expected {
                true => Ok(()),
                false => Err(oci::Error::Io(format!("only {} of the blobs were being written at once", *writers))),
            }
        }
        fn commit(self: Box<Self>, digest: &str) -> Result<(), oci::Error> {
            self.0.committed.lock().unwrap().push(digest.to_owned());
            Ok(())
        }
    }

    impl ImageDestination for Slow {
        fn has_blob(&self, _digest: &str) -> bool {
            false
        }
        fn blob_writer(&self) -> Result<Box<dyn oci::BlobWriter + '_>, oci::Error> {
            *self.writers.lock().unwrap() += 1;
            self.more.notify_all();
            Ok(Box::new(SlowWriter(self)))
        }
        fn commit(self: Box<Self>, _root: &Descriptor) -> Result<(), oci::Error> {
            Ok(())
        }
    }

    /// A layer whose bytes are all made no longer holds its worker while its upload ends: with 2 jobs, the 4
    /// layers are written at once (the destination ends no upload before), and all are committed.
    #[test]
    fn a_layer_waiting_for_its_upload_does_not_hold_back_the_next() {
        let layers: Vec<(Descriptor, Vec<u8>)> = (0..4u8)
            .map(|i| {
                let bytes = vec![i; 70_000];
                let digest = oci::sha256_digest(&bytes);
                (Descriptor::new("application/vnd.oci.image.layer.v1.tar+gzip", &digest, bytes.len() as u64), bytes)
            })
            .collect();
        let planned: Vec<Planned> = layers
            .iter()
            .enumerate()
            .map(|(index, (layer, _))| Planned {
                layer: layer.clone(),
                index,
                work: Work::Encrypt { key: LayerKey::generate() },
                report: None,
            })
            .collect();
        let destination = Slow {
            expected: 4,
            writers: std::sync::Mutex::new(0),
            more: std::sync::Condvar::new(),
            committed: std::sync::Mutex::default(),
        };
        let source = Layers(layers);
        let moved = transfer_all(&source, &destination, &planned, 2, &crate::interact::NonInteractive).unwrap();
        assert_eq!(moved.len(), 4);
        let mut committed = destination.committed.lock().unwrap().clone();
        let mut made: Vec<String> = moved
            .iter()
            .map(|m| match m {
                Moved::Encrypted(layer) => layer.ciphertext_digest.clone(),
                _ => panic!("every layer is encrypted"),
            })
            .collect();
        committed.sort();
        made.sort();
        assert_eq!(committed, made);
    }

    #[test]
    fn encrypted_layers_lose_old_keys_and_the_plaintext_toc() {
        let annotations: BTreeMap<String, String> = [
            "io.github.containers.zstd-chunked.manifest-checksum",
            "io.github.containers.zstd-chunked.manifest-position",
            "io.github.containers.zstd-chunked.tarsplit-position",
            "io.containers.zstd-chunked.manifest-checksum",
            "containerd.io/snapshot/stargz/toc.digest",
            "io.containers.estargz.uncompressed-size",
            "org.opencontainers.image.enc.keys.jwe",
            "org.opencontainers.image.title",
        ]
        .into_iter()
        .map(|k| (k.to_owned(), "v".to_owned()))
        .collect();
        let kept: Vec<_> = encrypted_layer_annotations(annotations).into_keys().collect();
        assert_eq!(kept, ["org.opencontainers.image.title"]);
    }
}
