//! Layers moved in parallel (`--jobs`), against a real registry (Debian's `docker-registry`) and, where a test
//! must see or break uploads, `registry_fault_proxy.py`: one layer's upload refused while the others are in
//! flight stops them all (cancelled on the registry, nothing tagged, the same failure as one at a time), and
//! the image written does not depend on how many layers moved at once.

use crate::image::{Keys, run};
use crate::registry::{FaultProxy, Registry, oci, open_uploads, skopeo};
use crate::support::{Scratch, cryptadm};
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

fn registry() -> &'static Registry {
    static SHARED: OnceLock<Registry> = OnceLock::new();
    SHARED.get_or_init(|| Registry::start_with(""))
}

/// A layout with `count` gzip layers of `bytes` random bytes each.
fn layers_image(dir: &Path, count: usize, bytes: usize) {
    run(Command::new("python3")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/bench/make_oci_image.py"))
        .arg(dir)
        .arg("v1")
        .arg(bytes.to_string())
        .args(["--layers", &count.to_string()]));
}

/// Whether `image` can be read from the registry.
fn tagged(image: &str) -> bool {
    Command::new("skopeo").args(["inspect", "--raw", "--tls-verify=false", image]).output().unwrap().status.success()
}

/// The upload paths (without their query) of the streaming PATCHes the proxy saw, and of its DELETEs.
fn streamed_and_deleted(proxy: &FaultProxy) -> (Vec<String>, Vec<String>) {
    let lines = proxy.lines();
    let paths = |method: &str| -> Vec<String> {
        lines
            .iter()
            .filter_map(|l| l.strip_prefix(&format!("request {method} ")))
            .filter(|rest| method != "PATCH" || rest.ends_with(" -"))
            .map(|rest| rest.rsplit_once(' ').map_or(rest, |(path, _)| path).to_owned())
            .collect()
    };
    (paths("PATCH"), paths("DELETE"))
}

/// Four 8 MiB layers; the proxy refuses the first streaming upload (403 DENIED 2 s after its first MiB) and
/// passes the others at 1 MiB/s, so at `--jobs 8` they are mid-upload when it fails. The run must fail as it does one layer
/// at a time (exit 16, one error line), cancel every other upload on the registry (DELETE, and no upload left
/// holding data), and push no manifest under the tag.
#[test]
fn a_layer_refused_mid_upload_stops_the_others_and_tags_nothing() {
    let registry = registry();
    let work = Scratch::new();
    let keys = Keys::new();
    let (_, public) = keys.rsa("rsa", 2048);
    let src = work.path("src");
    layers_image(&src, 4, 8 << 20);
    let mut errors = Vec::new();
    for jobs in ["1", "8"] {
        let repository = format!("refused-{jobs}/app");
        let mut proxy = FaultProxy::start(registry, &["deny", &(1 << 20).to_string()]);
        let output = cryptadm()
            .args(["image", "encrypt", "--recipient", &format!("jwe:{public}"), "--dest-tls-verify=false"])
            .args(["--jobs", jobs])
            .arg(oci(&src))
            .arg(proxy.image(&format!("{repository}:v1")))
            .output()
            .unwrap();
        proxy.stop();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        let lines = proxy.lines();
        assert!(lines.iter().any(|l| l == "denied"), "--jobs {jobs}: {lines:?}");
        assert_eq!(output.status.code(), Some(16), "--jobs {jobs}: {stderr}\n{lines:?}");
        let error: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error")).collect();
        assert_eq!(error.len(), 1, "--jobs {jobs}: {stderr}");
        assert!(error[0].contains("denied"), "--jobs {jobs}: {stderr}");
        assert!(!stderr.contains("cancelled"), "only the failure that stopped the others is reported: {stderr}");
        assert!(!tagged(&registry.image(&format!("{repository}:v1"))), "--jobs {jobs}: a tag was pushed");
        assert!(!lines.iter().any(|l| l.starts_with("request PUT /v2/") && l.contains("/manifests/")), "{lines:?}");
        assert_eq!(open_uploads(registry, &repository), 0, "--jobs {jobs}: an upload still holds data");
        let (streamed, deleted) = streamed_and_deleted(&proxy);
        if jobs == "1" {
            // One at a time: the refused upload was the only one.
            assert_eq!(streamed.len(), 1, "{lines:?}");
        } else {
            // In parallel: others were streaming when it was refused, and every one of them was cancelled.
            assert!(streamed.len() >= 2, "{lines:?}");
            for upload in &streamed {
                assert!(deleted.contains(upload), "upload {upload} was not cancelled: {lines:?}");
            }
        }
        // What the registry said (the ports and upload ids differ between the runs, and whether the refusal came
        // while the layer was still being written or once it all was depends on the load).
        errors.push(error[0].rsplit_once("envelope: ").expect(&stderr).1.to_owned());
    }
    assert_eq!(errors[0], errors[1], "the same failure one at a time and in parallel");
}

/// The manifest of the single-platform layout `dir`, tagged v1.
fn manifest(dir: &Path) -> Value {
    let index: Value = serde_json::from_slice(&std::fs::read(dir.join("index.json")).unwrap()).unwrap();
    let digest = index["manifests"][0]["digest"].as_str().unwrap();
    let blob = dir.join("blobs/sha256").join(&digest["sha256:".len()..]);
    serde_json::from_slice(&std::fs::read(blob).unwrap()).unwrap()
}

/// A manifest with what differs between two encryptions of the same image (fresh keys: digests, wrapped keys
/// and HMACs) blanked out: what is left is its structure.
fn structure(mut manifest: Value) -> Value {
    for layer in manifest["layers"].as_array_mut().unwrap() {
        layer["digest"] = "-".into();
        if let Some(annotations) = layer.get_mut("annotations").and_then(Value::as_object_mut) {
            for value in annotations.values_mut() {
                *value = "-".into();
            }
        }
    }
    manifest
}

/// `--jobs 1` and `--jobs 8` write the same image: decrypting gives byte-identical layouts (every manifest,
/// config and layer), and encrypting gives manifests that differ only where fresh keys make them differ, with
/// the layers in the source's order.
#[test]
fn jobs_1_and_jobs_8_write_the_same_image() {
    let registry = registry();
    let work = Scratch::new();
    let keys = Keys::new();
    let (private, public) = keys.rsa("rsa", 2048);
    let src = work.path("src");
    layers_image(&src, 6, 300 << 10);
    let mut encrypted = Vec::new();
    let mut decrypted = Vec::new();
    for jobs in ["1", "8"] {
        let image = registry.image(&format!("same-{jobs}/app:v1"));
        let output = cryptadm()
            .args(["image", "encrypt", "--recipient", &format!("jwe:{public}"), "--dest-tls-verify=false"])
            .args(["--jobs", jobs])
            .arg(oci(&src))
            .arg(&image)
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let back = work.path(&format!("enc-{jobs}"));
        run(&mut skopeo(&["--src-tls-verify=false", &image, &oci(&back)]));
        encrypted.push(manifest(&back));

        let plain = work.path(&format!("dec-{jobs}"));
        let output = cryptadm()
            .args(["image", "decrypt", "--key", &private, "--src-tls-verify=false", "--jobs", jobs])
            .arg(registry.image("same-1/app:v1"))
            .arg(oci(&plain))
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let mut blobs: Vec<(String, Vec<u8>)> = std::fs::read_dir(plain.join("blobs/sha256"))
            .unwrap()
            .map(|e| e.unwrap())
            .map(|e| (e.file_name().into_string().unwrap(), std::fs::read(e.path()).unwrap()))
            .collect();
        blobs.sort();
        decrypted.push((std::fs::read(plain.join("index.json")).unwrap(), blobs));
    }
    assert!(decrypted[0] == decrypted[1], "the decrypted layouts differ");
    assert_eq!(structure(encrypted[0].clone()), structure(encrypted[1].clone()));
    let sizes = |m: &Value| -> Vec<u64> {
        m["layers"].as_array().unwrap().iter().map(|l| l["size"].as_u64().unwrap()).collect()
    };
    assert_eq!(sizes(&encrypted[1]), sizes(&manifest(&src)), "the layers keep the source's order");
}

/// Registry → registry through a proxy that only watches: more layers than `--jobs` (a layer whose bytes are all
/// made leaves its upload to end on its own, and its worker takes the next), the root manifest pushed once, under
/// the tag, after every blob (not by digest first: a round trip less), and the result decrypts (skopeo) to the
/// source's layers.
#[test]
fn registry_to_registry_pushes_the_root_once_under_the_tag_after_every_blob() {
    let registry = registry();
    let work = Scratch::new();
    let keys = Keys::new();
    let (private, public) = keys.rsa("rsa", 2048);
    let src = work.path("src");
    layers_image(&src, 5, 300 << 10);
    run(&mut skopeo(&["--dest-tls-verify=false", &oci(&src), &registry.image("once-src/app:v1")]));
    let mut proxy = FaultProxy::start(registry, &["pass"]);
    cryptadm()
        .args(["image", "encrypt", "--recipient", &format!("jwe:{public}"), "--jobs", "2"])
        .args(["--src-tls-verify=false", "--dest-tls-verify=false"])
        .arg(proxy.image("once-src/app:v1"))
        .arg(proxy.image("once/app:v1"))
        .assert()
        .success();
    proxy.stop();
    let lines = proxy.lines();
    let manifests: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].starts_with("request PUT /v2/") && lines[i].contains("/manifests/"))
        .collect();
    assert_eq!(manifests.len(), 1, "{lines:?}");
    assert!(lines[manifests[0]].starts_with("request PUT /v2/once/app/manifests/v1 "), "{lines:?}");
    let blobs: Vec<usize> =
        (0..lines.len()).filter(|&i| lines[i].starts_with("request PUT /v2/once/app/blobs/uploads/")).collect();
    assert_eq!(blobs.len(), 5, "five encrypted layers uploaded (the config is mounted): {lines:?}");
    assert!(blobs.iter().all(|&b| b < manifests[0]), "{lines:?}");

    let back = work.path("back");
    run(skopeo(&["--src-tls-verify=false", "--decryption-key", &private, &registry.image("once/app:v1")])
        .arg(oci(&back)));
    assert_eq!(crate::image::layer_digests(&back), crate::image::layer_digests(&src));
}
