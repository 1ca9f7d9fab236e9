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

/// `cryptsetup luksFormat --header hdr.img data.img`: the header file holds no data. `inspect` says so, `decrypt`
/// refuses (it used to decrypt the header's own bytes into garbage and exit 0), and `volume rotate` works on it
/// (rotation touches keyslots only): cryptsetup opens the data with the header and the new key afterwards.
#[test]
fn a_detached_luks2_header_is_recognised() {
    crate::support::require_tool("cryptsetup", "apt-get install cryptsetup-bin");
    let scratch = Scratch::new();
    let header = scratch.path("hdr.img");
    let data = scratch.write("data.img", vec![0u8; 4 << 20]);
    let key = scratch.write("old.key", "old passphrase");
    let cryptsetup =
        |args: &[&str]| std::process::Command::new("cryptsetup").args(args).output().expect("run cryptsetup");
    let formatted = cryptsetup(&[
        "luksFormat",
        "--batch-mode",
        "--type",
        "luks2",
        "--pbkdf",
        "pbkdf2",
        "--pbkdf-force-iterations",
        "1000",
        "--key-file",
        key.to_str().unwrap(),
        "--header",
        header.to_str().unwrap(),
        data.to_str().unwrap(),
    ]);
    assert!(formatted.status.success(), "{}", String::from_utf8_lossy(&formatted.stderr));
    cryptadm()
        .args(["disk", "inspect", "--output-format", "json"])
        .arg(&header)
        .assert()
        .success()
        .stdout(predicate::str::contains("\"detached_header\": true"))
        .stdout(predicate::str::contains("\"data\"").not());
    let out = scratch.path("plain.img");
    cryptadm()
        .args(["disk", "decrypt", "--key-file"])
        .arg(&key)
        .arg(&header)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(3)
        .stderr(predicate::str::contains("a detached LUKS header"))
        .stderr(predicate::str::contains("cryptsetup open --header"));
    assert!(!out.exists());
    // Rotation: the stored passphrase opens the header, a new one replaces it.
    std::fs::create_dir_all(scratch.path("keys/vol-1")).unwrap();
    scratch.write("keys/vol-1/current", "old passphrase");
    cryptadm()
        .env("CRYPTADM_RUN_DIR", scratch.path("run"))
        .args(["volume", "rotate", "--volume-id", "vol-1", "--volume-path"])
        .arg(&header)
        .arg("--key-store")
        .arg(format!("file://{}", scratch.path("keys").display()))
        .assert()
        .success();
    let new_key = scratch.path("keys/vol-1/current");
    assert_ne!(std::fs::read(&new_key).unwrap(), b"old passphrase");
    let opens = |key: &Path| {
        cryptsetup(&[
            "open",
            "--test-passphrase",
            "--key-file",
            key.to_str().unwrap(),
            "--header",
            header.to_str().unwrap(),
            data.to_str().unwrap(),
        ])
        .status
        .success()
    };
    assert!(opens(&new_key), "the rotated key does not open the data with the header");
    assert!(!opens(&key), "the old key still opens");
}

/// A directory where a file is expected is one kind of mistake: exit 3 from every command, input or output.
#[test]
fn a_directory_in_place_of_a_file_is_exit_3_everywhere() {
    let scratch = Scratch::new();
    small_luks_image(&scratch);
    let passphrase = scratch.write("passphrase", "correct horse");
    let plain = scratch.write("plain.yaml", "kind: Config\n");
    scratch.write("sealed.yaml", seal_file_provider(&passphrase, &plain));
    std::fs::create_dir(scratch.path("dir")).unwrap();
    let src = scratch.path("src");
    fixture(&src, TWO_LAYERS);
    let keys = Keys::new();
    let (_, public) = keys.rsa("rsa", 2048);
    let recipient = format!("jwe:{public}");
    let key = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/keys/p256.pkcs8.pem");
    let uri = format!("file://{}", passphrase.display());
    let pass = passphrase.to_str().unwrap();
    let runs: Vec<Vec<&str>> = vec![
        vec!["disk", "decrypt", "--key-file", "key", "disk.img", "--out", "dir"],
        vec!["disk", "inspect", "dir"],
        vec!["disk", "decrypt", "--key-file", "key", "dir", "--out", "raw.img"],
        vec!["bootstrap", "open", "--in", "sealed.yaml", "--out", "dir"],
        vec!["bootstrap", "open", "--in", "dir", "--out", "out.yaml"],
        vec!["bootstrap", "seal", "--in", "plain.yaml", "--provider", "file", "--passphrase-uri", &uri],
        vec!["image", "encrypt", "--recipient", &recipient, "oci:src:v1", "oci-archive:dir"],
        vec!["secret", "generate-k8s", "image-keys", "--key", key, "--out", "dir"],
        vec!["secret", "generate-k8s", "image-keys", "--key", "dir"],
    ];
    for mut args in runs {
        if args[1] == "seal" {
            args.extend(["--passphrase-file", pass, "--out", "dir"]);
        }
        cryptadm().current_dir(scratch.dir.path()).args(&args).assert().code(3);
    }
    assert!(std::fs::read_dir(scratch.path("dir")).unwrap().next().is_none(), "something was written into dir");
}
