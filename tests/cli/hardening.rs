//! Issue 25, the independent testers' findings: `bootstrap seal` and `open` agree on their limits, the
//! low-iteration warning does not depend on where the passphrase comes from, and plugins that someone other than
//! root and the current user could change are refused (exit 3) for every plugin kind.

use crate::support::{Scratch, VECTOR_DOCUMENT, VECTOR_PASSPHRASE, cryptadm};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// `bootstrap open` reads at most 16 MiB; `bootstrap seal` accepts what seals into that.
const MAX_STREAM: usize = 16 * 1024 * 1024;
/// `(MAX_STREAM - 64 KiB) / 4 * 3 - 16`: the base64 of the ciphertext and its tag, and room for the fields.
const MAX_SEAL_INPUT: usize = 12_533_744;

#[test]
fn hardening_seal_accepts_exactly_what_open_reads_and_counts_bytes_right() {
    let scratch = Scratch::new();
    scratch.write("pass", "pw");
    scratch.write("largest.yaml", vec![b'a'; MAX_SEAL_INPUT]);
    scratch.write("over.yaml", vec![b'a'; MAX_SEAL_INPUT + 1]);
    let seal = |input: &str| {
        cryptadm()
            .current_dir(scratch.dir.path())
            .args(["bootstrap", "seal", "--in", input, "--provider", "file", "--passphrase-uri"])
            .arg(format!("file://{}", scratch.path("pass").display()))
            .args(["--passphrase-file", "pass", "--out", "sealed.yaml"])
            .output()
            .unwrap()
    };
    let over = seal("over.yaml");
    let err = String::from_utf8_lossy(&over.stderr);
    assert_eq!(over.status.code(), Some(3), "{err}");
    assert!(err.contains(&format!("larger than the {MAX_SEAL_INPUT}-byte limit")), "{err}");
    assert!(!err.contains(&(MAX_SEAL_INPUT + 1).to_string()), "an off-by-one count: {err}");
    assert!(!scratch.path("sealed.yaml").exists());

    let largest = seal("largest.yaml");
    assert!(largest.status.success(), "{}", String::from_utf8_lossy(&largest.stderr));
    let sealed_size = std::fs::metadata(scratch.path("sealed.yaml")).unwrap().len() as usize;
    assert!(sealed_size <= MAX_STREAM, "sealed into {sealed_size} bytes, more than open reads");
    cryptadm()
        .current_dir(scratch.dir.path())
        .args(["bootstrap", "open", "--in", "sealed.yaml", "--out", "out.yaml", "--passphrase-file", "pass"])
        .assert()
        .success();
    assert_eq!(std::fs::metadata(scratch.path("out.yaml")).unwrap().len() as usize, MAX_SEAL_INPUT);

    // open's own limit, counted right.
    scratch.write("huge.yaml", vec![b'#'; MAX_STREAM + 1]);
    let output = cryptadm()
        .current_dir(scratch.dir.path())
        .args(["bootstrap", "open", "--in", "huge.yaml", "--out", "out2.yaml", "--passphrase-file", "pass"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{err}");
    assert!(err.contains(&format!("larger than the {MAX_STREAM}-byte limit")), "{err}");
    assert!(!err.contains(&(MAX_STREAM + 1).to_string()), "an off-by-one count: {err}");
}

#[test]
fn hardening_few_iterations_warn_with_a_passphrase_file_too() {
    let scratch = Scratch::new();
    scratch.write("pass", VECTOR_PASSPHRASE);
    scratch.write("weak.yaml", VECTOR_DOCUMENT.replace("iterations: \"50000\"", "iterations: \"1000\""));
    // The key derived with 1,000 iterations does not open what was sealed with 50,000: exit 16, after the warning.
    let output = cryptadm()
        .current_dir(scratch.dir.path())
        .args(["bootstrap", "open", "--in", "weak.yaml", "--out", "out.yaml", "--passphrase-file", "pass"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(16), "{err}");
    assert!(err.contains("uses 1000 PBKDF2 iterations, fewer than the 50000"), "{err}");
}

/// A plugin script at `dir/name`, mode `mode`.
fn plugin(dir: &Path, name: &str, body: &str, mode: u32) -> std::path::PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    path
}

fn chown(path: &Path, user: u32, group: u32) {
    std::os::unix::fs::chown(path, Some(user), Some(group)).expect("chown (the tests run as root, as .ci/run does)");
}

const NOBODY: u32 = 65534;

/// What makes a sound plugin unsafe.
type Spoil = Box<dyn Fn(&Path)>;

/// `bootstrap open` of a document sealed for provider `p`, with `path` as PATH, from `dir`.
fn open_with_provider(scratch: &Scratch, path: &str) -> std::process::Output {
    let document = VECTOR_DOCUMENT.replace("provider: file", "provider: p");
    scratch.write("sealed.yaml", document);
    cryptadm()
        .current_dir(scratch.dir.path())
        .env("PATH", path)
        .args(["bootstrap", "open", "--in", "sealed.yaml", "--out", "out.yaml", "--retries", "0"])
        .output()
        .unwrap()
}

#[test]
fn hardening_encryption_provider_plugins_others_could_change_are_refused() {
    let is_root = rustix::process::geteuid().is_root();
    assert!(is_root, "these tests change owners: run them as root (.ci/run does)");
    let script = format!("#!/bin/sh\nprintf '%s' '{VECTOR_PASSPHRASE}'\n");
    let name = "machineadm-plugin-encryption-provider-p";

    // Sound: owned by root, 0755, in a 0700 directory: it runs.
    let scratch = Scratch::new();
    let bin = scratch.path("bin");
    let good = plugin(&bin, name, &script, 0o755);
    let output = open_with_provider(&scratch, &format!("{}:/usr/bin:/bin", bin.display()));
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));

    let cases: Vec<(&str, Spoil, &str)> = vec![
        (
            "world-writable",
            Box::new(|p: &Path| std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o757)).unwrap()),
            "writable by every user",
        ),
        (
            "group-writable by a group other than root",
            Box::new(|p: &Path| {
                chown(p, 0, NOBODY);
                std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o775)).unwrap();
            }),
            "writable by group 65534",
        ),
        ("owned by another user", Box::new(|p: &Path| chown(p, NOBODY, 0)), "owned by user 65534"),
        (
            "in a world-writable directory",
            Box::new(|p: &Path| {
                std::fs::set_permissions(p.parent().unwrap(), std::fs::Permissions::from_mode(0o777)).unwrap()
            }),
            "its directory",
        ),
    ];
    for (what, spoil, message) in cases {
        let scratch = Scratch::new();
        let bin = scratch.path("bin");
        let path = plugin(&bin, name, &script, 0o755);
        spoil(&path);
        let output = open_with_provider(&scratch, &format!("{}:/usr/bin:/bin", bin.display()));
        let err = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(3), "{what}: {err}");
        assert!(err.contains("refusing to run the plugin") && err.contains(message), "{what}: {err}");
        assert!(!scratch.path("out.yaml").exists(), "{what}");
    }

    // Found through `.` or an empty PATH entry (the current directory).
    for path in [".:/usr/bin:/bin".to_owned(), ":/usr/bin:/bin".to_owned()] {
        let scratch = Scratch::new();
        plugin(scratch.dir.path(), name, &script, 0o755);
        let output = open_with_provider(&scratch, &path);
        let err = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(3), "PATH={path}: {err}");
        assert!(err.contains("names the current directory"), "PATH={path}: {err}");
    }
    drop(good);
}

#[test]
fn hardening_remote_configuration_plugins_are_checked_too() {
    let scratch = Scratch::new();
    let bin = scratch.path("bin");
    plugin(&bin, "machineadm-remote-configuration-provider-store", "#!/bin/sh\necho 'a: 1'\n", 0o777);
    scratch.write(
        "stream.yaml",
        "apiVersion: machineadm.cluster.x-k8s.io/v1alpha1\nkind: RemoteConfig\nmetadata:\n  name: r\nspec:\n  \
         provider: store\n  uri: store://x\n",
    );
    let output = cryptadm()
        .current_dir(scratch.dir.path())
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .args(["bootstrap", "open", "--in", "stream.yaml", "--out", "out.yaml"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{err}");
    assert!(err.contains("writable by every user"), "{err}");
}

#[test]
fn hardening_volume_key_store_plugins_are_checked_too() {
    let scratch = Scratch::new();
    let bin = scratch.path("bin");
    plugin(&bin, "cryptadm-plugin-kms-vault", "#!/bin/sh\nexit 0\n", 0o777);
    // A real LUKS volume: the key store is opened once the volume is read and locked.
    let image = scratch.path("volume.img");
    std::fs::File::create(&image).unwrap().set_len(4 << 20).unwrap();
    let key = scratch.write("old.key", "old");
    let formatted = std::process::Command::new("cryptsetup")
        .args(["luksFormat", "--batch-mode", "--type", "luks1", "--pbkdf-force-iterations", "1000", "--key-file"])
        .arg(&key)
        .arg(&image)
        .output()
        .unwrap();
    assert!(formatted.status.success(), "{}", String::from_utf8_lossy(&formatted.stderr));
    let output = cryptadm()
        .current_dir(scratch.dir.path())
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .env("CRYPTADM_RUN_DIR", scratch.path("run"))
        .args(["volume", "rotate", "--volume-id", "pvc-1", "--volume-path", "volume.img", "--key-store", "vault:x"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{err}");
    assert!(err.contains("refusing to run the plugin") && err.contains("writable by every user"), "{err}");
}

#[test]
fn hardening_docker_credential_helpers_are_checked_too() {
    let scratch = Scratch::new();
    let bin = scratch.path("bin");
    plugin(&bin, "docker-credential-evil", "#!/bin/sh\necho '{\"Username\":\"u\",\"Secret\":\"s\"}'\n", 0o777);
    let auth = scratch.write("auth.json", r#"{"auths":{},"credHelpers":{"127.0.0.1:1":"evil"}}"#);
    let output = cryptadm()
        .current_dir(scratch.dir.path())
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .args(["image", "inspect", "--tls-verify=false", "--authfile"])
        .arg(&auth)
        .arg("docker://127.0.0.1:1/app:v1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{err}");
    assert!(err.contains("refusing to run the plugin") && err.contains("docker-credential-evil"), "{err}");
}
