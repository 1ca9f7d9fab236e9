//! Issue 17: the layer pipeline (pooled 256 KiB chunks, hashes on threads, direct writes in 1 MiB blocks) keeps
//! every check. A byte flipped anywhere in an encrypted layer fails `image decrypt` with exit 15 and leaves no
//! destination and no partial blob behind, at sizes below, at and across the chunk and block boundaries: both
//! when the layer's digest gives it away and when the digests were rewritten so that only the HMAC can tell.

use crate::image::{Keys, encrypt_for, oci};
use crate::support::{Scratch, cryptadm};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::fs;
use std::path::{Path, PathBuf};

/// The pipeline's chunk and the direct writer's block (src/ocicrypt/pipeline.rs, src/atomic.rs).
const CHUNK: usize = 256 << 10;
const BLOCK: usize = 1 << 20;

fn sha256(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

fn blob_path(layout: &Path, digest: &str) -> PathBuf {
    layout.join("blobs/sha256").join(digest.trim_start_matches("sha256:"))
}

fn put(layout: &Path, bytes: &[u8]) -> String {
    let digest = sha256(bytes);
    fs::write(blob_path(layout, &digest), bytes).unwrap();
    digest
}

/// A layout tagged v1 with one layer of `bytes` (not a real tar: the layer cipher does not look inside).
fn layout_with_layer(layout: &Path, bytes: &[u8]) {
    fs::create_dir_all(layout.join("blobs/sha256")).unwrap();
    fs::write(layout.join("oci-layout"), br#"{"imageLayoutVersion":"1.0.0"}"#).unwrap();
    let config = br#"{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}"#;
    let manifest = json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": put(layout, config), "size": config.len()},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": put(layout, bytes), "size": bytes.len()}],
    });
    write_manifest(layout, &manifest);
}

fn write_manifest(layout: &Path, manifest: &Value) {
    let bytes = serde_json::to_vec(manifest).unwrap();
    let index = json!({"schemaVersion": 2, "manifests": [{
        "mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": put(layout, &bytes), "size": bytes.len(),
        "annotations": {"org.opencontainers.image.ref.name": "v1"},
    }]});
    fs::write(layout.join("index.json"), serde_json::to_vec(&index).unwrap()).unwrap();
}

fn manifest(layout: &Path) -> Value {
    let index: Value = serde_json::from_slice(&fs::read(layout.join("index.json")).unwrap()).unwrap();
    let digest = index["manifests"][0]["digest"].as_str().unwrap();
    serde_json::from_slice(&fs::read(blob_path(layout, digest)).unwrap()).unwrap()
}

fn copy_layout(from: &Path, to: &Path) {
    fs::create_dir_all(to.join("blobs/sha256")).unwrap();
    for name in ["oci-layout", "index.json"] {
        fs::copy(from.join(name), to.join(name)).unwrap();
    }
    for entry in fs::read_dir(from.join("blobs/sha256")).unwrap() {
        let entry = entry.unwrap();
        fs::copy(entry.path(), to.join("blobs/sha256").join(entry.file_name())).unwrap();
    }
}

/// Copies `enc` to `bad` with the byte at `at` of its layer flipped; with `rewrite`, the layer's digest and
/// everything above it are made to match again, so that only the HMAC notices.
pub(crate) fn tampered(enc: &Path, bad: &Path, at: usize, rewrite: bool) {
    let _ = fs::remove_dir_all(bad);
    copy_layout(enc, bad);
    let mut manifest = manifest(bad);
    let digest = manifest["layers"][0]["digest"].as_str().unwrap().to_owned();
    let mut bytes = fs::read(blob_path(bad, &digest)).unwrap();
    bytes[at] ^= 0x01;
    if rewrite {
        manifest["layers"][0]["digest"] = put(bad, &bytes).into();
        write_manifest(bad, &manifest);
    } else {
        fs::write(blob_path(bad, &digest), &bytes).unwrap();
    }
}

fn partials(layout: &Path) -> Vec<String> {
    fs::read_dir(layout.join("blobs/sha256"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".cryptadm-partial"))
        .collect()
}

#[test]
fn a_flipped_byte_anywhere_fails_decrypt_and_leaves_nothing() {
    let keys = Keys::new();
    let (private, public) = keys.rsa("rsa", 2048);
    let work = Scratch::new();
    // An existing destination must come out as it went in: same index, no new blob, no partial.
    let existing = work.path("existing");
    layout_with_layer(&existing, b"another image");
    let existing_index = fs::read(existing.join("index.json")).unwrap();
    let existing_blobs = fs::read_dir(existing.join("blobs/sha256")).unwrap().count();

    for size in [1000, CHUNK, BLOCK, 3 * BLOCK + CHUNK + 17] {
        let plain: Vec<u8> = (0..size).map(|i| (i * 131 % 251) as u8).collect();
        let src = work.path(&format!("src-{size}"));
        layout_with_layer(&src, &plain);
        let enc = work.path(&format!("enc-{size}"));
        encrypt_for(&public, &src, &enc);
        // The untampered layer decrypts to the source, so what follows fails for the flipped byte alone.
        let good = work.path(&format!("good-{size}"));
        cryptadm().args(["image", "decrypt", "--key", &private]).arg(oci(&enc)).arg(oci(&good)).assert().success();
        assert_eq!(manifest(&good)["layers"][0]["digest"], sha256(&plain).as_str());

        let mut positions = vec![0, size / 2, size - 1];
        positions.extend([CHUNK - 1, CHUNK, BLOCK - 1, BLOCK, 2 * BLOCK + CHUNK].into_iter().filter(|&p| p < size));
        for at in positions {
            for rewrite in [false, true] {
                let bad = work.path("bad");
                tampered(&enc, &bad, at, rewrite);
                let what = format!("{size}-byte layer, byte {at} flipped, digests rewritten: {rewrite}");
                let dst = work.path("dst");
                let expected = if rewrite { "HMAC does not match" } else { "content has digest" };
                for target in [&dst, &existing] {
                    cryptadm()
                        .args(["image", "decrypt", "--key", &private])
                        .arg(oci(&bad))
                        .arg(oci(target))
                        .assert()
                        .code(15)
                        .stderr(predicates::str::contains(expected));
                }
                assert!(!dst.exists(), "{what}: left a destination");
                assert_eq!(fs::read(existing.join("index.json")).unwrap(), existing_index, "{what}");
                assert_eq!(fs::read_dir(existing.join("blobs/sha256")).unwrap().count(), existing_blobs, "{what}");
                assert!(partials(&existing).is_empty(), "{what}: {:?}", partials(&existing));
            }
        }
    }
}
