//! Issue 15: operators' mistakes that used to destroy an input or leak a secret, each refused now. An output
//! pointed at the input (by the same path, a hard link or a symbolic link), two readers of one standard input, an
//! up-to-date plaintext left world-readable.

use crate::image::{Keys, TWO_LAYERS, fixture, oci};
use crate::support::{Scratch, cryptadm, seal_file_provider};
use predicates::prelude::*;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The three ways of naming one file twice.
fn aliases(scratch: &Scratch, original: &Path) -> Vec<PathBuf> {
    let hard = scratch.path("hard-link");
    std::fs::hard_link(original, &hard).unwrap();
    let soft = scratch.path("symlink");
    std::os::unix::fs::symlink(original, &soft).unwrap();
    let dotted = original.parent().unwrap().join(".").join(original.file_name().unwrap());
    vec![dotted, hard, soft]
}

fn small_luks_image(scratch: &Scratch) -> PathBuf {
    let image = scratch.path("disk.img");
    scratch.write("key", "pass");
    cryptadm()
        .current_dir(scratch.dir.path())
        .args(["disk", "luks-format", "--key-file", "key", "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000"])
        .args(["--size", "1M", "disk.img"])
        .assert()
        .success();
    image
}

#[test]
fn disk_decrypt_refuses_to_write_over_its_target() {
    let scratch = Scratch::new();
    let image = small_luks_image(&scratch);
    let before = std::fs::read(&image).unwrap();
    for out in std::iter::once(image.clone()).chain(aliases(&scratch, &image)) {
        cryptadm()
            .current_dir(scratch.dir.path())
            .args(["disk", "decrypt", "--key-file", "key"])
            .arg(&image)
            .arg("--out")
            .arg(&out)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("is the input").and(predicate::str::contains("hint:")));
        assert!(std::fs::read(&image).unwrap() == before, "the image changed through `{}`", out.display());
    }
}

#[test]
fn bootstrap_open_and_seal_refuse_to_write_over_their_input() {
    let scratch = Scratch::new();
    let passphrase = scratch.write("passphrase", "correct horse");
    let plain = scratch.write("plain.yaml", "kind: Config\n");
    let sealed = scratch.write("sealed.yaml", seal_file_provider(&passphrase, &plain));
    let before = std::fs::read(&sealed).unwrap();
    for out in std::iter::once(sealed.clone()).chain(aliases(&scratch, &sealed)) {
        cryptadm()
            .args(["bootstrap", "open", "--passphrase-file"])
            .arg(&passphrase)
            .arg("--in")
            .arg(&sealed)
            .arg("--out")
            .arg(&out)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("is the input"));
        assert!(std::fs::read(&sealed).unwrap() == before, "the sealed stream changed through `{}`", out.display());
    }
    let plain_before = std::fs::read(&plain).unwrap();
    cryptadm()
        .args(["bootstrap", "seal", "--provider", "file", "--passphrase-uri"])
        .arg(format!("file://{}", passphrase.display()))
        .arg("--passphrase-file")
        .arg(&passphrase)
        .arg("--in")
        .arg(&plain)
        .arg("--out")
        .arg(&plain)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is the input"));
    assert_eq!(std::fs::read(&plain).unwrap(), plain_before);
}

#[test]
fn an_up_to_date_plaintext_is_made_private_again() {
    let scratch = Scratch::new();
    let passphrase = scratch.write("passphrase", "correct horse");
    let plain = scratch.write("plain.yaml", "kind: Config\n");
    let sealed = scratch.write("sealed.yaml", seal_file_provider(&passphrase, &plain));
    let out = scratch.path("out.yaml");
    let open = || {
        cryptadm()
            .args(["bootstrap", "open", "--passphrase-file"])
            .arg(&passphrase)
            .arg("--in")
            .arg(&sealed)
            .arg("--out")
            .arg(&out)
            .assert()
            .success();
    };
    open();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o644)).unwrap();
    open();
    let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "an up-to-date output keeps the plaintext private");
}

#[test]
fn image_commands_refuse_the_source_as_destination() {
    let keys = Keys::new();
    let work = Scratch::new();
    let src = work.path("src");
    fixture(&src, TWO_LAYERS);
    let (_, public) = keys.rsa("rsa", 2048);
    let index = std::fs::read(src.join("index.json")).unwrap();
    let link = work.path("link");
    std::os::unix::fs::symlink(&src, &link).unwrap();
    for destination in [oci(&src), oci(&link), format!("oci:{}", src.display())] {
        cryptadm()
            .args(["image", "encrypt", "--recipient", &format!("jwe:{public}")])
            .arg(oci(&src))
            .arg(&destination)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("is the source image"));
        assert_eq!(std::fs::read(src.join("index.json")).unwrap(), index, "{destination}");
    }
    // Another tag in the same layout is a different image, and allowed.
    cryptadm()
        .args(["image", "encrypt", "--recipient", &format!("jwe:{public}")])
        .arg(oci(&src))
        .arg(format!("oci:{}:v1-enc", src.display()))
        .assert()
        .success();
}

#[test]
fn standard_input_feeds_one_secret_per_run() {
    let scratch = Scratch::new();
    // An encrypted key: its password is one of the two secrets standard input is asked for.
    let key = std::process::Command::new("sh")
        .arg("-c")
        .arg("openssl genrsa 2048 2>/dev/null | openssl pkcs8 -topk8 -v2 aes-256-cbc -passout pass:pw")
        .output()
        .unwrap();
    assert!(key.status.success());
    scratch.write("key.pem", key.stdout);
    cryptadm()
        .current_dir(scratch.dir.path())
        .args(["image", "decrypt", "--key", "key.pem", "--passphrase-file", "-", "--src-creds", "user"])
        .args(["--src-password-file", "-", "docker://127.0.0.1:9/app:v1", "oci:out:v1"])
        .write_stdin("pw")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("both read standard input"));
    assert!(!scratch.path("out").exists());
}
