//! Large layers downloaded as several HTTP ranges at once (issue 26), against a real registry (Debian's
//! `docker-registry`) and `registry_fault_proxy.py` in front of it: the ranges are asked for and honoured, the
//! result is byte-identical to `--jobs 1` (one request per blob) and skopeo reads it; a server that ignores
//! `Range` (200) gets one stream; a range answered with the wrong bytes fails the layer with exit 15 and writes
//! nothing; a range whose answer breaks is asked for again.

use crate::image::{Keys, layer_digests, run};
use crate::registry::{FaultProxy, Registry, oci, skopeo};
use crate::support::{Scratch, cryptadm};
use std::path::Path;
use std::process::{Command, Output};
use std::sync::OnceLock;

fn registry() -> &'static Registry {
    static SHARED: OnceLock<Registry> = OnceLock::new();
    SHARED.get_or_init(|| Registry::start_with(""))
}

/// Two gzip layers of 6 MiB of random bytes (fetched as four ranges of about 1.5 MiB each), encrypted into the
/// registry as `REPOSITORY:v1`; the plaintext layout.
fn encrypted_image(work: &Scratch, repository: &str, public: &str) -> std::path::PathBuf {
    let src = work.path("src");
    run(Command::new("python3")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/bench/make_oci_image.py"))
        .arg(&src)
        .args(["v1", &(6 << 20).to_string(), "--layers", "2"]));
    let output = cryptadm()
        .args(["image", "encrypt", "--recipient", &format!("jwe:{public}"), "--dest-tls-verify=false"])
        .arg(oci(&src))
        .arg(registry().image(&format!("{repository}:v1")))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    src
}

fn decrypt(proxy: &FaultProxy, repository: &str, private: &str, out: &Path, jobs: &str) -> Output {
    cryptadm()
        .args(["image", "decrypt", "--key", private, "--src-tls-verify=false", "--jobs", jobs])
        .arg(proxy.image(&format!("{repository}:v1")))
        .arg(oci(out))
        .output()
        .unwrap()
}

/// The Range headers of the blob GETs the proxy saw ("-": none), and those of them that split a blob (not
/// `bytes=0-`, the whole blob).
fn blob_ranges(proxy: &FaultProxy) -> Vec<String> {
    proxy
        .lines()
        .iter()
        .filter_map(|l| l.strip_prefix("request GET "))
        .filter(|rest| rest.contains("/blobs/"))
        .map(|rest| rest.rsplit_once(' ').map_or("-", |(_, range)| range).to_owned())
        .collect()
}

fn split_ranges(proxy: &FaultProxy) -> Vec<String> {
    blob_ranges(proxy).into_iter().filter(|r| r != "bytes=0-").collect()
}

/// Every file of a layout, by name, with its bytes.
fn layout(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir.join("blobs/sha256"))
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| (e.file_name().into_string().unwrap(), std::fs::read(e.path()).unwrap()))
        .collect();
    files.push(("index.json".into(), std::fs::read(dir.join("index.json")).unwrap()));
    files.sort();
    files
}

#[test]
fn large_layers_come_in_ranges_and_match_jobs_1() {
    let work = Scratch::new();
    let keys = Keys::new();
    let (private, public) = keys.rsa("rsa", 2048);
    let src = encrypted_image(&work, "ranged/app", &public);

    let mut layouts = Vec::new();
    for jobs in ["1", "6"] {
        let mut proxy = FaultProxy::start(registry(), &["pass"]);
        let out = work.path(&format!("out-{jobs}"));
        let output = decrypt(&proxy, "ranged/app", &private, &out, jobs);
        proxy.stop();
        assert!(output.status.success(), "--jobs {jobs}: {}", String::from_utf8_lossy(&output.stderr));
        let (ranges, split) = (blob_ranges(&proxy), split_ranges(&proxy));
        if jobs == "1" {
            // One connection: each blob in one request (the config, the two layers).
            assert!(ranges.len() >= 3 && split.is_empty(), "{ranges:?}");
        } else {
            // The layers (encrypted: a few bytes over 6 MiB) in four bounded ranges each, the first from byte 0;
            // the config in one request.
            assert_eq!(split.len(), 8, "{ranges:?}");
            assert_eq!(split.iter().filter(|r| r.starts_with("bytes=0-")).count(), 2, "{ranges:?}");
            assert!(split.iter().all(|r| !r.ends_with('-')), "bounded ranges: {ranges:?}");
        }
        assert_eq!(layer_digests(&out), layer_digests(&src));
        layouts.push(layout(&out));
    }
    assert!(layouts[0] == layouts[1], "the layouts differ between --jobs 1 and ranged downloads");

    // skopeo reads the result (and checks every digest as it copies it to the registry).
    let out = work.path("out-6");
    run(&mut skopeo(&["--dest-tls-verify=false", &oci(&out), &registry().image("ranged-back/app:v1")]));
    // Registry → registry: the download side in ranges, the image skopeo decrypts is the source.
    let image = registry().image("ranged-r2r/app:v1");
    let output = cryptadm()
        .args(["image", "encrypt", "--recipient", &format!("jwe:{public}")])
        .args(["--src-tls-verify=false", "--dest-tls-verify=false"])
        .arg(registry().image("ranged-back/app:v1"))
        .arg(&image)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let back = work.path("back");
    run(&mut skopeo(&["--src-tls-verify=false", "--decryption-key", &private, &image, &oci(&back)]));
    assert_eq!(layer_digests(&back), layer_digests(&src));
}

#[test]
fn a_server_that_ignores_ranges_gets_one_request_per_blob() {
    let work = Scratch::new();
    let keys = Keys::new();
    let (private, public) = keys.rsa("rsa", 2048);
    let src = encrypted_image(&work, "no-ranges/app", &public);
    let mut proxy = FaultProxy::start(registry(), &["no-ranges"]);
    let out = work.path("out");
    let output = decrypt(&proxy, "no-ranges/app", &private, &out, "6");
    proxy.stop();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    // Answered 200: the first range of each large layer was the whole blob, and nothing more was asked for.
    let split = split_ranges(&proxy);
    assert_eq!(split.len(), 2, "{split:?}");
    assert!(split.iter().all(|r| r.starts_with("bytes=0-")), "{split:?}");
    assert!(proxy.lines().iter().any(|l| l == "range-ignored"));
    assert_eq!(layer_digests(&out), layer_digests(&src));
}

#[test]
fn a_range_with_the_wrong_bytes_fails_the_layer_and_writes_nothing() {
    let work = Scratch::new();
    let keys = Keys::new();
    let (private, public) = keys.rsa("rsa", 2048);
    encrypted_image(&work, "corrupt/app", &public);
    let mut proxy = FaultProxy::start(registry(), &["corrupt-range"]);
    let out = work.path("out");
    let output = decrypt(&proxy, "corrupt/app", &private, &out, "6");
    proxy.stop();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(proxy.lines().iter().any(|l| l == "corrupted"), "{:?}", proxy.lines());
    // As any corrupted layer: exit 15, one error line, and no layout.
    assert_eq!(output.status.code(), Some(15), "{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(!out.join("index.json").exists(), "a layout was written");
    let blobs = out.join("blobs/sha256");
    let written = std::fs::read_dir(&blobs).map(|d| d.count()).unwrap_or(0);
    assert_eq!(written, 0, "blobs left in {}", blobs.display());
}

#[test]
fn a_range_whose_answer_breaks_is_asked_for_again() {
    let work = Scratch::new();
    let keys = Keys::new();
    let (private, public) = keys.rsa("rsa", 2048);
    let src = encrypted_image(&work, "cut-range/app", &public);
    // The first answer that passes 1 MiB is cut: a 1.5 MiB range of a large layer.
    let mut proxy = FaultProxy::start(registry(), &["cut", &(1 << 20).to_string()]);
    let out = work.path("out");
    let output = decrypt(&proxy, "cut-range/app", &private, &out, "6");
    proxy.stop();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(proxy.lines().iter().any(|l| l == "cut"), "{:?}", proxy.lines());
    // The broken range asked for once more than the others.
    assert_eq!(split_ranges(&proxy).len(), 8 + 1, "{:?}", blob_ranges(&proxy));
    assert_eq!(layer_digests(&out), layer_digests(&src));
}

/// A layer declared 300 KiB long whose blob is 100 KiB: its upload session is opened as its writer is created
/// (it should be streamed), and the layer fails at the end of its source before its first piece went up. The
/// session is cancelled (DELETE): nothing is left open on the registry, and nothing is tagged.
#[test]
fn an_upload_opened_ahead_for_a_layer_that_fails_first_is_cancelled() {
    use sha2::Digest;
    let work = Scratch::new();
    let keys = Keys::new();
    let (_, public) = keys.rsa("rsa", 2048);
    let src = work.path("src");
    run(Command::new("python3")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/bench/make_oci_image.py"))
        .arg(&src)
        .args(["v1", &(100 << 10).to_string()]));
    // The manifest says 300 KiB (more than an upload's first piece); index.json names the new manifest.
    let index_path = src.join("index.json");
    let mut index: serde_json::Value = serde_json::from_slice(&std::fs::read(&index_path).unwrap()).unwrap();
    let digest = index["manifests"][0]["digest"].as_str().unwrap().to_owned();
    let blobs = src.join("blobs/sha256");
    let mut manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(blobs.join(&digest[7..])).unwrap()).unwrap();
    manifest["layers"][0]["size"] = (300 << 10).into();
    let bytes = serde_json::to_vec(&manifest).unwrap();
    let new_digest = hex::encode(sha2::Sha256::digest(&bytes));
    std::fs::write(blobs.join(&new_digest), &bytes).unwrap();
    index["manifests"][0]["digest"] = format!("sha256:{new_digest}").into();
    index["manifests"][0]["size"] = bytes.len().into();
    std::fs::write(&index_path, serde_json::to_vec(&index).unwrap()).unwrap();

    let mut proxy = FaultProxy::start(registry(), &["pass"]);
    let output = cryptadm()
        .args(["image", "encrypt", "--recipient", &format!("jwe:{public}"), "--dest-tls-verify=false"])
        .arg(oci(&src))
        .arg(proxy.image("early-cancel/app:v1"))
        .output()
        .unwrap();
    proxy.stop();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(15), "{stderr}");
    let lines = proxy.lines();
    let posts = lines.iter().filter(|l| l.starts_with("request POST /v2/early-cancel/app/blobs/uploads/")).count();
    let deletes = lines.iter().filter(|l| l.starts_with("request DELETE /v2/early-cancel/app/blobs/uploads/")).count();
    assert!(posts >= 1 && deletes >= 1, "the layer's session was opened and cancelled: {lines:?}");
    // (The config, smaller than a first piece, goes whole: its PATCH, if any, has a Content-Range.)
    let streamed = lines.iter().any(|l| l.starts_with("request PATCH ") && l.ends_with(" -"));
    assert!(!streamed, "no byte of the layer went up: {lines:?}");
    assert_eq!(crate::registry::open_uploads(registry(), "early-cancel/app"), 0, "{lines:?}");
    assert!(!lines.iter().any(|l| l.contains("/manifests/")), "nothing tagged: {lines:?}");
}
