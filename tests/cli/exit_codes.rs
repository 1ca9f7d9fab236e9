//! Every exit code of the published table, produced by the example the table gives for it. A code added to the
//! table without a case here fails the test.

use crate::support::{Scratch, VECTOR_PASSPHRASE, VECTOR_PLAINTEXT, seal_file_provider};
use cryptadm::exit::{ExitStatus, TABLE};
use std::process::{Command, Stdio};

/// A sealed document, its plaintext and the passphrase file that opens it, in `scratch`.
fn sealed(scratch: &Scratch) -> std::path::PathBuf {
    let pass = scratch.write("pass", VECTOR_PASSPHRASE);
    let plain = scratch.write("plain.yaml", VECTOR_PLAINTEXT);
    scratch.write("sealed.yaml", seal_file_provider(&pass, &plain))
}

fn open(scratch: &Scratch) -> Command {
    let mut command = Command::new(assert_cmd::cargo::cargo_bin("cryptadm"));
    command.current_dir(scratch.dir.path()).args(["bootstrap", "open"]).env_remove("CRYPTADM_PASSPHRASE");
    command
}

fn code(command: &mut Command) -> (i32, String) {
    let output = command.stdin(Stdio::null()).output().unwrap();
    (output.status.code().unwrap(), String::from_utf8_lossy(&output.stderr).into_owned())
}

fn produce(status: ExitStatus, scratch: &Scratch) -> (i32, String) {
    match status {
        // "re-running `bootstrap open` with the same result"
        ExitStatus::Success => {
            sealed(scratch);
            for _ in 0..2 {
                let result = code(open(scratch).args(["--in", "sealed.yaml", "--out", "out.yaml"]));
                assert_eq!(result.0, 0, "{}", result.1);
            }
            code(open(scratch).args(["--in", "sealed.yaml", "--out", "out.yaml"]))
        }
        // "disk full"
        ExitStatus::Failure => {
            sealed(scratch);
            let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
            code(open(scratch).args(["--in", "sealed.yaml", "--out", "-"]).stdout(full))
        }
        // "unknown flag"
        ExitStatus::Usage => code(open(scratch).args(["--no-such-flag"])),
        // "malformed YAML"
        ExitStatus::InvalidInput => {
            scratch.write("bad.yaml", "kind: [unclosed\n");
            code(open(scratch).args(["--in", "bad.yaml", "--out", "out.yaml"]))
        }
        // "input file … missing"
        ExitStatus::NotFound => code(open(scratch).args(["--in", "missing.yaml", "--out", "out.yaml"])),
        // "concurrent operations on the same target": the volume's lock is held by another process
        ExitStatus::Aborted => {
            let locks = scratch.path("run/volume-locks");
            std::fs::create_dir_all(&locks).unwrap();
            let held = std::fs::File::create(locks.join("pvc-1.lock")).unwrap();
            rustix::fs::flock(&held, rustix::fs::FlockOperation::NonBlockingLockExclusive).unwrap();
            std::fs::create_dir_all(scratch.path("keys/pvc-1")).unwrap();
            scratch.write("keys/pvc-1/current", "old");
            scratch.write("disk.img", vec![0u8; 4096]);
            let store = format!("file://{}", scratch.path("keys").display());
            let mut rotate = Command::new(assert_cmd::cargo::cargo_bin("cryptadm"));
            rotate
                .current_dir(scratch.dir.path())
                .args(["volume", "rotate", "--volume-id", "pvc-1", "--volume-path", "disk.img", "--key-store"])
                .arg(store)
                .env("CRYPTADM_RUN_DIR", scratch.path("run"));
            code(&mut rotate)
        }
        // "an image layer truncated": cut the encrypted layer of a real image short
        ExitStatus::DataLoss => truncated_layer(scratch),
        // "a … registry that does not answer": a server that accepts connections (the kernel's backlog) and never
        // answers, with a deadline of 1 s.
        ExitStatus::DeadlineExceeded => {
            let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let image = format!("docker://{}/never/answers:v1", silent.local_addr().unwrap());
            let mut inspect = Command::new(assert_cmd::cargo::cargo_bin("cryptadm"));
            inspect.args(["--timeout", "1", "image", "inspect", "--tls-verify=false", &image]);
            code(&mut inspect)
        }
        // "wrong passphrase"
        ExitStatus::Unauthenticated => {
            sealed(scratch);
            scratch.write("wrong", "not the passphrase");
            code(open(scratch).args(["--in", "sealed.yaml", "--out", "out.yaml", "--passphrase-file", "wrong"]))
        }
        other => panic!("exit status {other:?} is in the table but has no case here"),
    }
}

fn truncated_layer(scratch: &Scratch) -> (i32, String) {
    use crate::image::{Keys, TWO_LAYERS, encrypt_for, fixture, oci, run};
    let keys = Keys::new();
    let src = scratch.path("src");
    fixture(&src, TWO_LAYERS);
    let (private, public) = keys.rsa("rsa", 2048);
    let enc = scratch.path("enc");
    encrypt_for(&public, &src, &enc);
    let fixture_script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cli/oci_fixture.py");
    run(Command::new("python3").arg(fixture_script).arg("tamper").arg(&enc).arg("v1").arg("truncate"));
    let dest = scratch.path("dest");
    let mut decrypt = Command::new(assert_cmd::cargo::cargo_bin("cryptadm"));
    decrypt.args(["image", "decrypt", "--key", &private]).arg(oci(&enc)).arg(oci(&dest));
    let result = code(&mut decrypt);
    assert!(!dest.exists(), "a failed decrypt left a destination");
    result
}

#[test]
fn every_code_in_the_table_is_produced_by_its_example() {
    for (status, meaning, example) in TABLE {
        let scratch = Scratch::new();
        let (got, stderr) = produce(*status, &scratch);
        assert_eq!(got, i32::from(status.code()), "{meaning} ({example}): {stderr}");
        if *status != ExitStatus::Success {
            assert_eq!(stderr.matches("error: ").count(), 1, "one error line: {stderr}");
        }
    }
}
