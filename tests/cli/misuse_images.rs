//! Image commands under misuse (issue 15, "Images"): selections that match nothing, blobs that are not what
//! their names say, foreign layers, and keys given without what they need.

use crate::image::{Keys, TWO_LAYERS, TWO_PLATFORMS, encrypt_for, fixture, layers, oci, run, skopeo_copy, tools};
use crate::support::{Scratch, cryptadm};
use predicates::prelude::*;
use sha2::{Digest, Sha256};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

fn blob_path(layout: &Path, digest: &str) -> std::path::PathBuf {
    layout.join("blobs/sha256").join(digest.trim_start_matches("sha256:"))
}

fn file_digest(path: &Path) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(std::fs::read(path).unwrap())))
}

/// The config blob of a single-manifest image.
fn config_digest(layout: &Path) -> String {
    let index: serde_json::Value = serde_json::from_slice(&std::fs::read(layout.join("index.json")).unwrap()).unwrap();
    let manifest_digest = index["manifests"][0]["digest"].as_str().unwrap();
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(blob_path(layout, manifest_digest)).unwrap()).unwrap();
    manifest["config"]["digest"].as_str().unwrap().to_owned()
}

#[test]
fn a_platform_no_manifest_has_is_refused_by_every_image_command() {
    let keys = Keys::new();
    let work = Scratch::new();
    let src = work.path("src");
    fixture(&src, TWO_PLATFORMS);
    let (private, public) = keys.rsa("rsa", 2048);
    let recipient = format!("jwe:{public}");
    let enc = work.path("enc");
    encrypt_for(&public, &src, &enc);
    let runs: [(&[&str], &Path, bool); 3] = [
        (&["image", "encrypt", "--recipient", &recipient], &src, true),
        (&["image", "decrypt", "--key", &private], &enc, true),
        (&["image", "authorize", "--key", &private], &enc, false),
    ];
    for (args, image, writes) in runs {
        let out = work.path("out");
        let mut command = cryptadm();
        command.args(args).args(["--platform", "linux/s390x", "--allow-plaintext"]).arg(oci(image));
        if writes {
            command.arg(oci(&out));
        }
        command
            .assert()
            .code(3)
            .stderr(predicate::str::contains("no manifest of the image is for linux/s390x"))
            .stderr(predicate::str::contains("linux/amd64, linux/arm64"))
            .stderr(predicate::str::contains("--platform"));
        assert!(!out.exists(), "{args:?} wrote a destination");
    }
}

#[test]
fn nothing_encrypted_to_work_on_is_an_error_unless_allowed() {
    let keys = Keys::new();
    let work = Scratch::new();
    let plain = work.path("plain");
    fixture(&plain, TWO_LAYERS);
    let (private, _) = keys.rsa("rsa", 2048);
    for (verb, writes) in [("decrypt", true), ("authorize", false)] {
        let out = work.path("out");
        let mut command = cryptadm();
        command.args(["image", verb, "--key", &private]).arg(oci(&plain));
        if writes {
            command.arg(oci(&out));
        }
        command
            .assert()
            .code(3)
            .stderr(predicate::str::contains(format!("no selected layer is encrypted: nothing to {verb}")))
            .stderr(predicate::str::contains("--allow-plaintext"));
        assert!(!out.exists());
    }
    let copy = work.path("copy");
    cryptadm()
        .args(["image", "decrypt", "--allow-plaintext", "--key", &private])
        .arg(oci(&plain))
        .arg(oci(&copy))
        .assert()
        .success();
    assert_eq!(layers(&copy), layers(&plain));
}

const FOREIGN: &str = r#"{"platforms":[{"os":"linux","architecture":"amd64","layers":[
    {"media":"tar+gzip","files":{"etc/a":"alpha"}},
    {"media":"nondistributable+gzip","files":{"windows/base":"licensed"},"urls":["https://example.com/base.tar.gz"],"absent":true}]}]}"#;

/// containers/image leaves a layer with `urls` alone (not fetched, not encrypted, descriptor kept): so do we,
/// and each tool reads what the other wrote.
#[test]
fn foreign_layers_are_left_as_containers_image_leaves_them() {
    let keys = Keys::new();
    let work = Scratch::new();
    let src = work.path("src");
    fixture(&src, FOREIGN);
    let (private, public) = keys.rsa("rsa", 2048);
    let source_layers = layers(&src)[0]["layers"].as_array().unwrap().clone();
    let check = |layout: &Path, encrypted: bool| {
        let got = layers(layout)[0]["layers"].as_array().unwrap().clone();
        assert_eq!(got[1], source_layers[1], "the foreign layer's descriptor changed");
        let first = got[0]["mediaType"].as_str().unwrap();
        assert_eq!(first.ends_with("+encrypted"), encrypted, "{first}");
    };
    let skopeo_enc = work.path("skopeo-enc");
    skopeo_copy(&["--encryption-key", &format!("jwe:{public}")], &src, &skopeo_enc);
    check(&skopeo_enc, true);
    let enc = work.path("enc");
    encrypt_for(&public, &src, &enc).stderr(predicate::str::contains("encrypted 1 layer,"));
    check(&enc, true);
    assert!(!blob_path(&enc, source_layers[1]["digest"].as_str().unwrap()).exists());
    // Each decrypts the other's.
    let dec = work.path("dec");
    cryptadm().args(["image", "decrypt", "--key", &private]).arg(oci(&skopeo_enc)).arg(oci(&dec)).assert().success();
    check(&dec, false);
    let skopeo_dec = work.path("skopeo-dec");
    skopeo_copy(&["--decryption-key", &private], &enc, &skopeo_dec);
    check(&skopeo_dec, false);
    // An image whose only layer is foreign would come out with nothing encrypted: refused unless asked for.
    let only_foreign = work.path("only-foreign");
    fixture(
        &only_foreign,
        r#"{"platforms":[{"os":"linux","architecture":"amd64","layers":[
            {"media":"nondistributable+gzip","files":{"b":"x"},"urls":["https://example.com/b"],"absent":true}]}]}"#,
    );
    let out = work.path("out");
    let encrypt = |extra: &[&str]| {
        let mut command = cryptadm();
        command.args(["image", "encrypt", "--recipient", &format!("jwe:{public}")]).args(extra);
        command.arg(oci(&only_foreign)).arg(oci(&out));
        command
    };
    encrypt(&[])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("no layer of the result would be encrypted (layers: 1 foreign)"));
    assert!(!out.exists());
    encrypt(&["--allow-plaintext"]).assert().success();
    assert_eq!(layers(&out), layers(&only_foreign));
}

/// A blob already at the destination under the right name but with the wrong bytes (a truncated copy) is not
/// trusted: it is replaced, and the result verifies.
#[test]
fn blobs_found_at_the_destination_are_verified_before_reuse() {
    let keys = Keys::new();
    let work = Scratch::new();
    let src = work.path("src");
    fixture(&src, TWO_LAYERS);
    let (private, public) = keys.rsa("rsa", 2048);
    let config = config_digest(&src);
    let enc = work.path("enc");
    std::fs::create_dir_all(enc.join("blobs/sha256")).unwrap();
    let whole = std::fs::read(blob_path(&src, &config)).unwrap();
    std::fs::write(blob_path(&enc, &config), &whole[..whole.len() / 2]).unwrap();
    encrypt_for(&public, &src, &enc);
    assert_eq!(file_digest(&blob_path(&enc, &config)), config);
    // A decrypted layer whose name is taken by a short file: replaced too.
    let plain_layer = layers(&src)[0]["layers"][0]["digest"].as_str().unwrap().to_owned();
    let dec = work.path("dec");
    std::fs::create_dir_all(dec.join("blobs/sha256")).unwrap();
    std::fs::write(blob_path(&dec, &plain_layer), b"short").unwrap();
    cryptadm().args(["image", "decrypt", "--key", &private]).arg(oci(&enc)).arg(oci(&dec)).assert().success();
    assert_eq!(file_digest(&blob_path(&dec, &plain_layer)), plain_layer);
    // skopeo reads the result whole (it verifies every blob it copies).
    run(Command::new("skopeo").args(["--insecure-policy", "copy"]).arg(oci(&dec)).arg(oci(&work.path("check"))));
}

/// Only regular files are blobs: a FIFO (or a device) in a blob's place would block or stream without end.
#[test]
fn a_fifo_in_place_of_a_blob_is_refused_at_once() {
    tools();
    let work = Scratch::new();
    let src = work.path("src");
    fixture(&src, TWO_LAYERS);
    let keys = Keys::new();
    let (_, public) = keys.rsa("rsa", 2048);
    let layer = layers(&src)[0]["layers"][1]["digest"].as_str().unwrap().to_owned();
    let path = blob_path(&src, &layer);
    std::fs::remove_file(&path).unwrap();
    run(Command::new("mkfifo").arg(&path));
    let out = work.path("out");
    cryptadm()
        .args(["image", "encrypt", "--recipient", &format!("jwe:{public}")])
        .arg(oci(&src))
        .arg(oci(&out))
        .timeout(Duration::from_secs(60))
        .assert()
        .code(3)
        .stderr(predicate::str::contains("is not a regular file"));
    assert!(!out.exists());
    // The same in the destination: not taken for a blob that is there, and not opened for reading.
    std::fs::remove_file(&path).unwrap();
    fixture(&src, TWO_LAYERS);
    let dest = work.path("dest");
    std::fs::create_dir_all(dest.join("blobs/sha256")).unwrap();
    run(Command::new("mkfifo").arg(blob_path(&dest, &config_digest(&src))));
    cryptadm()
        .args(["image", "encrypt", "--recipient", &format!("jwe:{public}")])
        .arg(oci(&src))
        .arg(oci(&dest))
        .timeout(Duration::from_secs(60))
        .assert()
        .success();
    assert_eq!(file_digest(&blob_path(&dest, &config_digest(&src))), config_digest(&src));
}

#[test]
fn a_pkcs7_layer_opened_without_its_certificate_says_the_certificate_is_missing() {
    let keys = Keys::new();
    let work = Scratch::new();
    let src = work.path("src");
    fixture(&src, TWO_LAYERS);
    let (bob, bob_crt) = keys.certificate("bob");
    let enc = work.path("enc");
    cryptadm()
        .args(["image", "encrypt", "--recipient", &format!("pkcs7:{bob_crt}")])
        .arg(oci(&src))
        .arg(oci(&enc))
        .assert()
        .success();
    let out = work.path("out");
    cryptadm()
        .args(["image", "decrypt", "--key", &bob])
        .arg(oci(&enc))
        .arg(oci(&out))
        .assert()
        .code(16)
        .stderr(predicate::str::contains("no certificate given matches a private key"))
        .stderr(predicate::str::contains("--cert FILE"));
    assert!(!out.exists());
    cryptadm()
        .args(["image", "authorize", "--key", &bob])
        .arg(oci(&enc))
        .assert()
        .code(16)
        .stderr(predicate::str::contains("--cert FILE"));
}

/// Encrypting for an OpenPGP recipient reads public keys only: a locked, unrelated secret key in the same home
/// (whose passphrase nobody gives) does not matter.
#[cfg(feature = "pgp")]
#[test]
fn gpg_homedir_encryption_uses_public_keys_only() {
    let home = crate::image::GnupgHome::new();
    home.gpg(&[
        "--passphrase",
        "locked",
        "--quick-gen-key",
        "Mallory <mallory@example.com>",
        "rsa2048",
        "default",
        "never",
    ]);
    let work = Scratch::new();
    let src = work.path("src");
    fixture(&src, TWO_LAYERS);
    let enc = work.path("enc");
    cryptadm()
        .args(["image", "encrypt", "--recipient", "pgp:alice@example.com", "--gpg-homedir"])
        .arg(home.path())
        .arg(oci(&src))
        .arg(oci(&enc))
        .env_remove("CRYPTADM_PASSPHRASE")
        .assert()
        .success();
    // Decrypting still finds Alice's (unlocked) secret key in the home, with Mallory's locked one beside it.
    let dec = work.path("dec");
    cryptadm()
        .args(["image", "decrypt", "--gpg-homedir"])
        .arg(home.path())
        .arg(oci(&enc))
        .arg(oci(&dec))
        .assert()
        .success();
}

/// An image run interrupted half-way through an `oci-archive:` source, which is extracted into a partial directory
/// under $TMPDIR: SIGTERM removes it, and after kill -9 (which nothing can catch) the next run removes it.
#[test]
fn an_interrupted_archive_source_leaves_nothing_behind() {
    let keys = Keys::new();
    let work = Scratch::new();
    let src = work.path("src");
    fixture(&src, TWO_LAYERS);
    let (_, public) = keys.rsa("rsa", 2048);
    let archive = work.path("src.tar");
    run(Command::new("tar").arg("-C").arg(&src).arg("-cf").arg(&archive).args(["oci-layout", "index.json", "blobs"]));
    let tmp = work.path("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let partials = || -> Vec<String> {
        let names = std::fs::read_dir(&tmp).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned());
        names.filter(|n| n.ends_with(".cryptadm-partial")).collect()
    };
    let encrypt = |from: &Path, to: &Path| {
        let mut command = Command::new(assert_cmd::cargo::cargo_bin("cryptadm"));
        command
            .args(["image", "encrypt", "--recipient", &format!("jwe:{public}")])
            .arg(format!("oci-archive:{}", from.display()))
            .arg(oci(to))
            .env("TMPDIR", &tmp)
            .stderr(std::process::Stdio::null());
        command
    };
    for signal in [rustix::process::Signal::TERM, rustix::process::Signal::KILL] {
        let fifo = work.path("stalled.tar");
        let _ = std::fs::remove_file(&fifo);
        run(Command::new("mkfifo").arg(&fifo));
        let out = work.path("out");
        let mut child = encrypt(&fifo, &out).spawn().unwrap();
        // Half the archive, and the pipe kept open: the run waits inside the extraction.
        let mut writer = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
        let bytes = std::fs::read(&archive).unwrap();
        std::io::Write::write_all(&mut writer, &bytes[..bytes.len() / 2]).unwrap();
        let start = std::time::Instant::now();
        while partials().is_empty() {
            assert!(start.elapsed() < Duration::from_secs(30), "no partial extraction appeared");
            std::thread::sleep(Duration::from_millis(20));
        }
        rustix::process::kill_process(rustix::process::Pid::from_child(&child), signal).unwrap();
        child.wait().unwrap();
        drop(writer);
        assert!(!out.exists(), "an interrupted run left a destination");
        if signal == rustix::process::Signal::TERM {
            assert_eq!(partials(), Vec::<String>::new(), "SIGTERM left the extraction behind");
        } else {
            assert_eq!(partials().len(), 1, "kill -9 leaves the extraction behind");
            assert!(encrypt(&archive, &out).status().unwrap().success());
            assert_eq!(partials(), Vec::<String>::new(), "the next run removed it");
        }
    }
}
