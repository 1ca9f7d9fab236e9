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

/// Starts `disk luks-format --from FIFO` and feeds it a little data, so it is mid-run (waiting for more input)
/// with its partial output open when the test signals it.
fn luks_format_stalled_on_a_fifo(scratch: &Scratch) -> (std::process::Child, std::fs::File) {
    let fifo = scratch.path("raw.fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    scratch.write("key", "pass");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("cryptadm"))
        .current_dir(scratch.dir.path())
        .args(["disk", "luks-format", "--key-file", "key", "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000"])
        .args(["--size", "64M", "--from", "raw.fifo", "disk.img"])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut writer = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    std::io::Write::write_all(&mut writer, &vec![7u8; 1 << 20]).unwrap();
    // Wait until the partial output exists: the run is now inside the payload loop.
    let start = std::time::Instant::now();
    while partials(scratch).is_empty() {
        assert!(start.elapsed() < std::time::Duration::from_secs(30), "no partial output appeared");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    (child, writer)
}

fn partials(scratch: &Scratch) -> Vec<String> {
    scratch.entries().into_iter().filter(|name| name.ends_with(".cryptadm-partial")).collect()
}

#[test]
fn a_terminated_run_removes_its_partial_output() {
    let scratch = Scratch::new();
    let (mut child, _writer) = luks_format_stalled_on_a_fifo(&scratch);
    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(15), "{status:?}");
    assert_eq!(partials(&scratch), Vec::<String>::new());
    assert!(!scratch.path("disk.img").exists());
}

#[test]
fn a_killed_runs_partial_output_is_removed_by_the_next_run() {
    let scratch = Scratch::new();
    let (mut child, writer) = luks_format_stalled_on_a_fifo(&scratch);
    child.kill().unwrap(); // SIGKILL: nothing runs in the process
    child.wait().unwrap();
    drop(writer);
    assert_eq!(partials(&scratch).len(), 1, "kill -9 leaves the partial behind");
    cryptadm()
        .current_dir(scratch.dir.path())
        .args(["disk", "luks-format", "--key-file", "key", "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000"])
        .args(["--size", "1M", "disk.img"])
        .assert()
        .success();
    assert_eq!(partials(&scratch), Vec::<String>::new(), "the next run removed it");
}

#[test]
fn decrypted_layouts_are_private() {
    let keys = Keys::new();
    let work = Scratch::new();
    let src = work.path("src");
    fixture(&src, TWO_LAYERS);
    let (private, public) = keys.rsa("rsa", 2048);
    let enc = work.path("enc");
    cryptadm()
        .args(["image", "encrypt", "--recipient", &format!("jwe:{public}")])
        .arg(oci(&src))
        .arg(oci(&enc))
        .assert()
        .success();
    let dec = work.path("dec");
    cryptadm().args(["image", "decrypt", "--key", &private]).arg(oci(&enc)).arg(oci(&dec)).assert().success();
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dec), 0o700);
    for blob in std::fs::read_dir(dec.join("blobs/sha256")).unwrap() {
        assert_eq!(mode(&blob.unwrap().path()), 0o600);
    }
    // Ciphertext stays readable as before.
    let any_enc_blob = std::fs::read_dir(enc.join("blobs/sha256")).unwrap().next().unwrap().unwrap().path();
    assert_eq!(mode(&any_enc_blob), 0o644);
}
