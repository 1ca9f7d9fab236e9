//! Encrypting, decrypting and authorizing whole images: walking index → manifests → layers, choosing the
//! platforms and layers to work on, and rewriting manifests and indexes that change.

use super::keywrap::{KeyUnwrapper, KeyWrapper};
use super::layer::{LayerDecryptor, LayerEncryptor, LayerKey, PrivateOptions, PublicOptions};
use super::pipeline::{self, Direction};
use super::{ANNOTATION_PREFIX, Error, KEYS_ANNOTATION_PREFIX, PUBOPTS_ANNOTATION};
use crate::crypto::SecretBytes;
use crate::crypto::encoding::{b64_decode_lenient, b64_encode};
use crate::crypto::parallel_hash::copy_large;
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
/// already encrypted are handled as `encrypted` says; their key is unwrapped with `unwrappers`.
pub fn encrypt_image(
    source: &dyn ImageSource,
    destination: Box<dyn ImageDestination + '_>,
    selection: &Selection,
    wrappers: &[Box<dyn KeyWrapper>],
    unwrappers: &[Box<dyn KeyUnwrapper>],
    encrypted: EncryptedLayers,
    ui: &dyn Interaction,
) -> Result<Vec<LayerReport>, Error> {
    let operation = Operation::Encrypt { wrappers, unwrappers, reencrypt: encrypted == EncryptedLayers::Reencrypt };
    run(source, destination, selection, operation, ui)
}

/// Decrypts the selected layers of `source` into `destination`.
pub fn decrypt_image(
    source: &dyn ImageSource,
    destination: Box<dyn ImageDestination + '_>,
    selection: &Selection,
    unwrappers: &[Box<dyn KeyUnwrapper>],
    ui: &dyn Interaction,
) -> Result<Vec<LayerReport>, Error> {
    run(source, destination, selection, Operation::Decrypt { unwrappers }, ui)
}

fn run(
    source: &dyn ImageSource,
    mut destination: Box<dyn ImageDestination + '_>,
    selection: &Selection,
    operation: Operation<'_>,
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
        oci::copy_blob(self.source, self.destination, &config)?;
        let layers = manifest.get_mut("layers").and_then(Value::as_array_mut).ok_or_else(|| {
            Error::Malformed(format!("manifest {} has no layers", descriptor.digest().unwrap_or_default()))
        })?;
        let chosen = self.selection.layer_positions(layers.len(), descriptor.digest()?)?;
        let mut changed = false;
        for (index, (entry, selected)) in layers.iter_mut().zip(chosen).enumerate() {
            let layer = Descriptor::from_value(entry.clone())?;
            let new_layer = self.layer(&layer, index, platform.as_ref(), selected)?;
            if new_layer != layer {
                *entry = new_layer.to_value();
                changed = true;
            }
        }
        if changed {
            convert_to_oci(&mut manifest);
        }
        self.store_if_changed(descriptor, manifest, changed, MediaKind::Manifest)
    }

    fn layer(
        &mut self,
        layer: &Descriptor,
        index: usize,
        platform: Option<&Platform>,
        selected: bool,
    ) -> Result<Descriptor, Error> {
        let mut report = LayerReport {
            platform: platform.map(Platform::to_string),
            index,
            digest: layer.digest()?.to_owned(),
            outcome: "skipped",
            schemes: wrapped_schemes(layer),
            problem: None,
        };
        if layer.is_foreign() {
            report.outcome = "foreign";
        }
        let result = match (&self.operation, layer.kind(), selected) {
            _ if layer.is_foreign() => None,
            (_, _, false) | (_, MediaKind::Other | MediaKind::Index | MediaKind::Manifest, _) => None,
            (Operation::Encrypt { wrappers, unwrappers, reencrypt: true }, MediaKind::EncryptedLayer, true) => {
                report.outcome = "re-encrypted";
                Some(reencrypt_layer(self.source, self.destination, layer, index, wrappers, unwrappers, self.ui)?)
            }
            (Operation::Encrypt { wrappers, .. }, MediaKind::Layer, true) => {
                report.outcome = "encrypted";
                Some(encrypt_layer(self.source, self.destination, layer, index, wrappers, self.ui)?)
            }
            (Operation::Encrypt { wrappers, unwrappers, reencrypt: false }, MediaKind::EncryptedLayer, true) => {
                report.outcome = "recipients-added";
                let updated = add_recipients(layer, index, wrappers, unwrappers)?;
                // Only the annotations change: the ciphertext blob is carried over as it is.
                oci::copy_blob_reporting(self.source, self.destination, layer, self.ui)?;
                Some(updated)
            }
            (Operation::Decrypt { unwrappers }, MediaKind::EncryptedLayer, true) => {
                report.outcome = "decrypted";
                Some(decrypt_layer(self.source, self.destination, layer, index, unwrappers, self.ui)?)
            }
            (Operation::Decrypt { .. }, MediaKind::Layer, true) => {
                report.outcome = "unencrypted";
                None
            }
        };
        self.ui.debug(&format!("layer {index} ({}): {}", report.digest, report.outcome));
        self.reports.push(report);
        match result {
            Some(new_layer) => Ok(new_layer),
            None => {
                oci::copy_blob_reporting(self.source, self.destination, layer, self.ui)?;
                Ok(layer.clone())
            }
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

fn encrypt_layer(
    source: &dyn ImageSource,
    destination: &mut dyn ImageDestination,
    layer: &Descriptor,
    index: usize,
    wrappers: &[Box<dyn KeyWrapper>],
    ui: &dyn Interaction,
) -> Result<Descriptor, Error> {
    let key = LayerKey::generate();
    let (writer, pass) = run_pipeline(source, destination, layer, index, Direction::Encrypt, &key, ui)?;
    let encrypted = super::layer::EncryptedLayer {
        hmac: pass.mac.finalize().into_bytes().into(),
        ciphertext_digest: pass.output_digest,
        size: pass.size,
    };
    writer.commit(&encrypted.ciphertext_digest)?;

    // The pipeline verified the source digest at the end of the stream, so it is the plaintext's digest.
    let private = PrivateOptions { key, digest: layer.digest()?.to_owned() };
    let mut annotations = encrypted_layer_annotations(layer.annotations());
    wrap_for_all(&mut annotations, &private, &encrypted, wrappers)?;
    let mut encrypted_layer = layer.clone();
    encrypted_layer.set_content(
        &oci::encrypted_media_type(layer.media_type()?),
        &encrypted.ciphertext_digest,
        encrypted.size,
    );
    encrypted_layer.set_annotations(annotations);
    Ok(encrypted_layer)
}

/// Decrypts an encrypted layer and encrypts it again under a fresh key in one stream. The plaintext only ever
/// flows into the new encryptor, whose output stays an uncommitted blob until the old HMAC has verified.
fn reencrypt_layer(
    source: &dyn ImageSource,
    destination: &mut dyn ImageDestination,
    layer: &Descriptor,
    index: usize,
    wrappers: &[Box<dyn KeyWrapper>],
    unwrappers: &[Box<dyn KeyUnwrapper>],
    ui: &dyn Interaction,
) -> Result<Descriptor, Error> {
    let public = public_options(layer, index)?;
    let old = PrivateOptions::from_json(&unwrap_private_options(layer, index, unwrappers)?, &public)?;
    let key = LayerKey::generate();
    let progress = ui.transfer(&format!("re-encrypting layer {index}"), layer.size()?);
    let mut reader = ProgressReader::new(source.open_blob(layer)?, progress);
    let mut decryptor = LayerDecryptor::new(&old.key, LayerEncryptor::new(&key, destination.blob_writer()?));
    copy_large(&mut reader, &mut decryptor, layer.size()?).map_err(|e| oci::io_error(layer, e))?;
    drop(reader);
    let (encryptor, decrypted) = decryptor.finish(&public.hmac).map_err(|e| in_layer(e, index, layer))?;
    let (writer, encrypted) = encryptor.finish().map_err(|e| oci::io_error(layer, e))?;
    writer.commit(&encrypted.ciphertext_digest)?;
    let private = PrivateOptions { key, digest: decrypted.plaintext_digest };
    let mut annotations = encrypted_layer_annotations(layer.annotations());
    wrap_for_all(&mut annotations, &private, &encrypted, wrappers)?;
    let mut updated = layer.clone();
    updated.set_content(layer.media_type()?, &encrypted.ciphertext_digest, encrypted.size);
    updated.set_annotations(annotations);
    Ok(updated)
}

/// Runs layer `index` through the cipher into a new, uncommitted blob of `destination`: the source read once,
/// unverified, because the pipeline hashes it and checks it against `layer` itself.
fn run_pipeline<'d>(
    source: &dyn ImageSource,
    destination: &'d mut dyn ImageDestination,
    layer: &Descriptor,
    index: usize,
    direction: Direction,
    key: &LayerKey,
    ui: &dyn Interaction,
) -> Result<(Box<dyn oci::BlobWriter + 'd>, pipeline::Pass), Error> {
    let verb = if direction == Direction::Encrypt { "encrypting" } else { "decrypting" };
    let progress = ui.transfer(&format!("{verb} layer {index}"), layer.size()?);
    let mut reader = ProgressReader::new(source.open_blob_unverified(layer)?, progress);
    let mut writer = destination.blob_writer()?;
    let expected = pipeline::Expected { digest: layer.digest()?, size: layer.size()? };
    let pass =
        pipeline::run(direction, key, &expected, &mut reader, &mut writer).map_err(|e| oci::io_error(layer, e))?;
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
                    Err(e) => problems.push(e.to_string()),
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
    Err(Error::Unauthenticated(message))
}

fn decrypt_layer(
    source: &dyn ImageSource,
    destination: &mut dyn ImageDestination,
    layer: &Descriptor,
    index: usize,
    unwrappers: &[Box<dyn KeyUnwrapper>],
    ui: &dyn Interaction,
) -> Result<Descriptor, Error> {
    let public = public_options(layer, index)?;
    let private = PrivateOptions::from_json(&unwrap_private_options(layer, index, unwrappers)?, &public)?;
    let (writer, pass) = run_pipeline(source, destination, layer, index, Direction::Decrypt, &private.key, ui)?;
    // The plaintext stays in an uncommitted temporary blob until the HMAC has matched.
    super::layer::verify_hmac(pass.mac, &public.hmac).map_err(|e| in_layer(e, index, layer))?;
    let plaintext_digest = pass.output_digest;
    writer.commit(&plaintext_digest)?;
    if !private.digest.is_empty() && private.digest != plaintext_digest {
        // containers/image records the digest of the layer before it compressed it, so a mismatch alone does not
        // mean tampering: the HMAC above already authenticated every byte.
        ui.warn(&format!(
            "layer {index}: the private options name digest {}, the decrypted layer is {} (the producer recorded the digest before compressing)",
            private.digest, plaintext_digest
        ));
    }
    let mut plain = layer.clone();
    plain.set_content(&oci::decrypted_media_type(layer.media_type()?), &plaintext_digest, pass.size);
    plain.set_annotations(without_encryption_annotations(layer.annotations()));
    Ok(plain)
}

/// Checks that `unwrappers` open the key of every encrypted layer of every selected platform, reading only
/// indexes, manifests and configs, never a layer blob.
pub fn authorize_image(
    source: &dyn ImageSource,
    selection: &Selection,
    unwrappers: &[Box<dyn KeyUnwrapper>],
) -> Result<Vec<LayerReport>, Error> {
    let mut reports = Vec::new();
    let mut platforms = PlatformTally::default();
    authorize_descriptor(source, source.root(), None, selection, unwrappers, &mut reports, &mut platforms)?;
    platforms.check(selection)?;
    check_something_encrypted(&reports, selection, "authorize")?;
    Ok(reports)
}

fn authorize_descriptor(
    source: &dyn ImageSource,
    descriptor: &Descriptor,
    platform: Option<Platform>,
    selection: &Selection,
    unwrappers: &[Box<dyn KeyUnwrapper>],
    reports: &mut Vec<LayerReport>,
    platforms: &mut PlatformTally,
) -> Result<(), Error> {
    match descriptor.kind() {
        MediaKind::Index => {
            let index = parse_json(&source.read_blob(descriptor)?, "image index")?;
            for entry in index.get("manifests").and_then(Value::as_array).cloned().unwrap_or_default() {
                let child = Descriptor::from_value(entry)?;
                let platform = child.platform();
                if selection.selects_platform(platform.as_ref()) {
                    authorize_descriptor(source, &child, platform, selection, unwrappers, reports, platforms)?;
                } else {
                    platforms.count(platform.as_ref(), false);
                }
            }
            Ok(())
        }
        MediaKind::Manifest => {
            let manifest = parse_json(&source.read_blob(descriptor)?, "image manifest")?;
            let platform = match platform {
                Some(p) => Some(p),
                None => match manifest.get("config").cloned().map(Descriptor::from_value).transpose()? {
                    Some(config) => Platform::from_config(&source.read_blob(&config)?),
                    None => None,
                },
            };
            let selected = selection.selects_platform(platform.as_ref());
            platforms.count(platform.as_ref(), selected);
            if !selected {
                return Ok(());
            }
            let layers = manifest.get("layers").and_then(Value::as_array).cloned().unwrap_or_default();
            let chosen = selection.layer_positions(layers.len(), descriptor.digest()?)?;
            for (index, (entry, selected)) in layers.into_iter().zip(chosen).enumerate() {
                let layer = Descriptor::from_value(entry)?;
                if !selected || layer.kind() != MediaKind::EncryptedLayer || layer.is_foreign() {
                    continue;
                }
                let (outcome, problem) = match unwrap_private_options(&layer, index, unwrappers) {
                    Ok(_) => ("authorized", None),
                    Err(Error::Unauthenticated(problem)) => ("denied", Some(problem)),
                    Err(other) => return Err(other),
                };
                reports.push(LayerReport {
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
        _ => Ok(()),
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
