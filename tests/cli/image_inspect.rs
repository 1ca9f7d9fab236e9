//! `cryptadm image inspect` on images cryptadm and skopeo encrypted (every recipient reported, no key given), and
//! the zstd:chunked / eStargz table-of-contents annotations that `image encrypt` drops.

use crate::image::{GnupgHome, Keys, TWO_LAYERS, TWO_PLATFORMS, fixture, oci, run, skopeo_copy};
use crate::support::{Scratch, cryptadm};
use serde_json::Value;
use sha2::Digest;
use std::path::Path;
use std::process::Command;

fn inspect(image: &str) -> Value {
    let output = cryptadm().args(["image", "inspect", "--output-format", "json", image]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

/// A self-signed certificate for an RSA key, and its serial number in hex.
fn certificate(keys: &Keys, name: &str) -> (String, String) {
    let (private, _) = keys.rsa(name, 2048);
    let cert = keys.scratch.path(&format!("{name}.crt"));
    run(Command::new("openssl")
        .args(["req", "-x509", "-new", "-key", &private, "-subj", &format!("/CN={name}"), "-days", "2", "-out"])
        .arg(&cert));
    let serial = run(Command::new("openssl").args(["x509", "-noout", "-serial", "-in"]).arg(&cert));
    (cert.display().to_string(), serial.trim().trim_start_matches("serial=").to_lowercase())
}

fn schemes(layer: &Value) -> Vec<(String, Vec<String>)> {
    layer["schemes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let recipients = s["recipients"].as_array().unwrap().iter().map(|r| r.as_str().unwrap().to_owned());
            (s["scheme"].as_str().unwrap().to_owned(), recipients.collect())
        })
        .collect()
}

#[test]
fn inspect_reports_every_recipient_of_cryptadm_and_skopeo_images_without_keys() {
    let keys = Keys::new();
    let work = Scratch::new();
    let gnupg = GnupgHome::new();
    let (_, public) = keys.rsa("rsa", 2048);
    let (_, ec_public) = keys.ec("p256", "prime256v1");
    let (cert, serial) = certificate(&keys, "bob");
    let src = work.path("src");
    fixture(&src, TWO_PLATFORMS);
    let encrypted = work.path("cryptadm-enc");
    cryptadm()
        .args(["image", "encrypt", "--recipient", &format!("jwe:{public}"), "--recipient", &format!("jwe:{ec_public}")])
        .args(["--recipient", &format!("pkcs7:{cert}"), "--recipient", "pgp:alice@example.com", "--gpg-homedir"])
        .arg(gnupg.path())
        .arg(oci(&src))
        .arg(oci(&encrypted))
        .assert()
        .success();
    let listing = run(Command::new("gpg").arg("--homedir").arg(gnupg.path()).args([
        "--batch",
        "--with-colons",
        "--list-keys",
        "alice@example.com",
    ]));
    // The encryption subkey's key ID (field 5 of the `sub` line).
    let subkey = listing.lines().find(|l| l.starts_with("sub:")).unwrap().split(':').nth(4).unwrap().to_owned();
    let report = inspect(&oci(&encrypted));
    let layers = report["layers"].as_array().unwrap();
    assert_eq!(layers.len(), 3, "{report}");
    let platforms: Vec<_> = layers.iter().map(|l| l["platform"].as_str().unwrap()).collect();
    assert_eq!(platforms, ["linux/amd64", "linux/arm64", "linux/arm64"]);
    for layer in layers {
        assert_eq!(layer["encrypted"], true);
        assert_eq!(layer["cipher"], "AES_256_CTR_HMAC_SHA256");
        assert!(layer["diffID"].as_str().unwrap().starts_with("sha256:"));
        let schemes = schemes(layer);
        let names: Vec<_> = schemes.iter().map(|(s, _)| s.as_str()).collect();
        assert_eq!(names, ["jwe", "pgp", "pkcs7"], "{layer}");
        assert_eq!(schemes[0].1, ["RSA-OAEP (no key id)", "ECDH-ES+A256KW (no key id)"], "{layer}");
        assert!(schemes[1].1.iter().any(|k| k.eq_ignore_ascii_case(&format!("key {subkey}"))), "{layer}");
        assert_eq!(schemes[2].1, [format!("issuer \"CN=bob\" serial {serial}")], "{layer}");
    }
    // Text form: one line per layer, with the diff ID --help promises (issue 36), as in the JSON form.
    let text = cryptadm().args(["image", "inspect"]).arg(oci(&encrypted)).output().unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert_eq!(text.lines().count(), 3);
    for (line, layer) in text.lines().zip(layers) {
        let diff_id = layer["diffID"].as_str().unwrap();
        assert!(line.contains(&format!(" diff-id={diff_id} ")), "{line}");
    }

    // skopeo (containers/ocicrypt) encrypted, JWE and PKCS#7 recipients.
    let src = work.path("src2");
    fixture(&src, TWO_LAYERS);
    let skopeo_enc = work.path("skopeo-enc");
    skopeo_copy(
        &["--encryption-key", &format!("jwe:{public}"), "--encryption-key", &format!("pkcs7:{cert}")],
        &src,
        &skopeo_enc,
    );
    let report = inspect(&oci(&skopeo_enc));
    // The diff IDs are the plaintext layers' as skopeo reads them from the source's config.
    let config = run(Command::new("skopeo").args(["inspect", "--config"]).arg(oci(&src)));
    let config: Value = serde_json::from_str(&config).unwrap();
    let text = cryptadm().args(["image", "inspect"]).arg(oci(&skopeo_enc)).output().unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    for (line, diff_id) in text.lines().zip(config["rootfs"]["diff_ids"].as_array().unwrap()) {
        assert!(line.contains(&format!(" diff-id={} ", diff_id.as_str().unwrap())), "{line}");
    }
    for layer in report["layers"].as_array().unwrap() {
        let schemes = schemes(layer);
        assert_eq!(schemes[0], ("jwe".to_owned(), vec!["RSA-OAEP (no key id)".to_owned()]), "{layer}");
        assert_eq!(schemes[1].1, [format!("issuer \"CN=bob\" serial {serial}")], "{layer}");
    }
    // An unencrypted image: no schemes.
    let plain = inspect(&oci(&src));
    assert!(
        plain["layers"]
            .as_array()
            .unwrap()
            .iter()
            .all(|l| l["encrypted"] == false && l["schemes"] == serde_json::json!([]))
    );
}

/// Adds annotations to layer 0 of a single-manifest layout (tag v1) and rewrites the digests above it.
fn annotate_first_layer(layout: &Path, annotations: &[(&str, &str)]) {
    let blob = |digest: &str| layout.join("blobs/sha256").join(&digest[7..]);
    let index_path = layout.join("index.json");
    let mut index: Value = serde_json::from_slice(&std::fs::read(&index_path).unwrap()).unwrap();
    let mut manifest: Value =
        serde_json::from_slice(&std::fs::read(blob(index["manifests"][0]["digest"].as_str().unwrap())).unwrap())
            .unwrap();
    for (key, value) in annotations {
        manifest["layers"][0]["annotations"][*key] = Value::from(*value);
    }
    let bytes = manifest.to_string().into_bytes();
    let digest = format!("sha256:{}", hex::encode(sha2::Sha256::digest(&bytes)));
    std::fs::write(blob(&digest), &bytes).unwrap();
    index["manifests"][0]["digest"] = Value::from(digest);
    index["manifests"][0]["size"] = Value::from(bytes.len());
    std::fs::write(&index_path, index.to_string()).unwrap();
}

#[test]
fn encrypt_drops_the_plaintext_table_of_contents_annotations() {
    let keys = Keys::new();
    let work = Scratch::new();
    let (_, public) = keys.rsa("rsa", 2048);
    let src = work.path("src");
    fixture(&src, TWO_LAYERS);
    let toc = [
        ("io.github.containers.zstd-chunked.manifest-checksum", "sha256:aa"),
        ("io.github.containers.zstd-chunked.manifest-position", "1:2:3:4"),
        ("io.github.containers.zstd-chunked.tarsplit-position", "5:6:7"),
        ("io.containers.zstd-chunked.manifest-checksum", "sha256:bb"),
        ("containerd.io/snapshot/stargz/toc.digest", "sha256:cc"),
        ("io.containers.estargz.uncompressed-size", "1024"),
    ];
    annotate_first_layer(&src, &[toc.as_slice(), &[("org.example.kept", "yes")]].concat());
    let encrypted = work.path("enc");
    cryptadm()
        .args(["image", "encrypt", "--recipient", &format!("jwe:{public}")])
        .arg(oci(&src))
        .arg(oci(&encrypted))
        .assert()
        .success();
    let report = inspect(&oci(&encrypted));
    let layer = &report["layers"][0];
    assert_eq!(layer["encrypted"], true);
    assert!(layer.get("plaintextAnnotations").is_none(), "{layer}");
    let manifests = crate::image::layers(&encrypted);
    let annotations = manifests[0]["layers"][0]["annotations"].as_object().unwrap();
    for (key, _) in toc {
        assert!(!annotations.contains_key(key), "{key} survived encryption");
    }
    assert_eq!(annotations["org.example.kept"], "yes");
    // The source still reports them (unencrypted: nothing to flag).
    let source = inspect(&oci(&src));
    assert!(source["layers"][0].get("plaintextAnnotations").is_none());
}
