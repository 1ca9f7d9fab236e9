//! `cryptadm bootstrap seal | open` as operators and cloud-init run it: the spec's known-answer vector in both
//! directions, passphrase sources, idempotent re-runs, and every bad input with its exit code, its message and
//! an untouched output.

use crate::support::{Scratch, VECTOR_DOCUMENT, VECTOR_PASSPHRASE, VECTOR_PLAINTEXT, cryptadm, seal_file_provider};
use predicates::prelude::*;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

const FIXED_NONCE: &[&str] = &[
    "--salt-hex",
    "000102030405060708090a0b0c0d0e0f",
    "--iv-hex",
    "a0a1a2a3a4a5a6a7a8a9aaab",
    "--insecure-fixed-nonce",
];

/// A scratch dir holding the vector's passphrase (`pass`), plaintext (`plain.yaml`) and a document sealed for the
/// `file` provider pointing at `pass` (`sealed.yaml`).
fn sealed_fixture() -> Scratch {
    let scratch = Scratch::new();
    let pass = scratch.write("pass", VECTOR_PASSPHRASE);
    let plain = scratch.write("plain.yaml", VECTOR_PLAINTEXT);
    let sealed = seal_file_provider(&pass, &plain);
    scratch.write("sealed.yaml", sealed);
    scratch
}

fn open_in(scratch: &Scratch) -> assert_cmd::Command {
    let mut cmd = cryptadm();
    cmd.current_dir(scratch.dir.path()).args(["bootstrap", "open", "--in", "sealed.yaml", "--out", "out.yaml"]);
    cmd
}

#[test]
#[cfg_attr(not(feature = "test-vectors"), ignore = "needs `--features test-vectors` (.ci/run runs it)")]
fn seal_reproduces_the_spec_vector() {
    let scratch = Scratch::new();
    scratch.write("pass", VECTOR_PASSPHRASE);
    scratch.write("plain.yaml", VECTOR_PLAINTEXT);
    cryptadm()
        .current_dir(scratch.dir.path())
        .args(["bootstrap", "seal", "--in", "plain.yaml", "--provider", "file"])
        .args(["--passphrase-uri", "file:///etc/machineadm/passphrase", "--passphrase-file", "pass"])
        .args(FIXED_NONCE)
        .assert()
        .success()
        .stdout(VECTOR_DOCUMENT);
}

/// Issue 15: the fixed-nonce flags exist only in test builds.
#[test]
#[cfg(not(feature = "test-vectors"))]
fn a_release_build_has_no_fixed_nonce_flags() {
    for flag in ["--salt-hex", "--iv-hex", "--insecure-fixed-nonce"] {
        cryptadm()
            .args(["bootstrap", "seal", "--in", "x", "--provider", "file", "--passphrase-uri", "file:///p", flag])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("unexpected argument"));
    }
}

#[test]
#[cfg_attr(not(feature = "test-vectors"), ignore = "needs `--features test-vectors` (.ci/run runs it)")]
fn fixed_nonces_need_the_insecure_flag() {
    cryptadm()
        .args(["bootstrap", "seal", "--in", "x", "--provider", "file", "--passphrase-uri", "file:///p"])
        .args(&FIXED_NONCE[..4])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--insecure-fixed-nonce"));
}

#[test]
fn open_decrypts_the_spec_vector() {
    let scratch = Scratch::new();
    scratch.write("sealed.yaml", VECTOR_DOCUMENT);
    scratch.write("pass", VECTOR_PASSPHRASE);
    open_in(&scratch)
        .args(["--passphrase-file", "pass"])
        .assert()
        .success()
        .stderr(predicate::str::contains("decrypted document 1: EncryptedConfig (provider `file`, 31 bytes)"));
    assert_eq!(std::fs::read_to_string(scratch.path("out.yaml")).unwrap(), VECTOR_PLAINTEXT);
}

#[test]
fn open_uses_the_file_provider_and_writes_0600() {
    let scratch = sealed_fixture();
    open_in(&scratch).assert().success().stderr(predicate::str::contains("wrote 31 bytes to `out.yaml`"));
    let out = scratch.path("out.yaml");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), VECTOR_PLAINTEXT);
    assert_eq!(std::fs::metadata(&out).unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(scratch.entries(), ["out.yaml", "pass", "plain.yaml", "sealed.yaml"], "no temp file left behind");
}

#[test]
fn rerun_with_the_same_result_leaves_the_file_alone() {
    let scratch = sealed_fixture();
    open_in(&scratch).assert().success();
    let before = std::fs::metadata(scratch.path("out.yaml")).unwrap();
    open_in(&scratch).assert().success().stderr(predicate::str::contains("`out.yaml` is up to date"));
    let after = std::fs::metadata(scratch.path("out.yaml")).unwrap();
    assert_eq!((before.ino(), before.mtime_nsec()), (after.ino(), after.mtime_nsec()), "the file was rewritten");
}

#[test]
fn a_different_existing_output_is_replaced() {
    let scratch = sealed_fixture();
    scratch.write("out.yaml", "stale\n");
    open_in(&scratch).assert().success();
    assert_eq!(std::fs::read_to_string(scratch.path("out.yaml")).unwrap(), VECTOR_PLAINTEXT);
}

#[test]
fn creates_guard_skips_everything() {
    let scratch = Scratch::new();
    scratch.write("done", "");
    // The input does not even exist: nothing is read when the guard holds.
    open_in(&scratch).args(["--creates", "done"]).assert().success().stderr(predicate::str::contains("nothing to do"));
    assert!(!scratch.path("out.yaml").exists());
}

#[test]
fn open_to_a_pipe_with_explicit_dash() {
    let scratch = sealed_fixture();
    cryptadm()
        .current_dir(scratch.dir.path())
        .args(["bootstrap", "open", "--in", "sealed.yaml", "--out", "-"])
        .assert()
        .success()
        .stdout(VECTOR_PLAINTEXT);
}

#[test]
fn quiet_prints_nothing_on_success() {
    let scratch = sealed_fixture();
    open_in(&scratch).arg("--quiet").assert().success().stderr("").stdout("");
}

#[test]
fn passphrase_sources_in_order() {
    let scratch = Scratch::new();
    scratch.write("sealed.yaml", VECTOR_DOCUMENT); // its provider's file does not exist: only explicit sources work
    scratch.write("good", VECTOR_PASSPHRASE);
    scratch.write("bad", "wrong");
    let run = |configure: &dyn Fn(&mut assert_cmd::Command)| {
        let _ = std::fs::remove_file(scratch.path("out.yaml"));
        let mut cmd = open_in(&scratch);
        configure(&mut cmd);
        cmd.assert()
    };
    run(&|c| {
        c.env("CRYPTADM_PASSPHRASE", VECTOR_PASSPHRASE);
    })
    .success();
    run(&|c| {
        c.env("CRYPTADM_PASSPHRASE_FILE", "good");
    })
    .success();
    // The file variable wins over the value variable, and the flag over both.
    run(&|c| {
        c.env("CRYPTADM_PASSPHRASE_FILE", "good").env("CRYPTADM_PASSPHRASE", "wrong");
    })
    .success();
    run(&|c| {
        c.env("CRYPTADM_PASSPHRASE_FILE", "bad").args(["--passphrase-file", "good"]);
    })
    .success();
    run(&|c| {
        c.args(["--passphrase-file", "bad"]).env("CRYPTADM_PASSPHRASE", VECTOR_PASSPHRASE);
    })
    .code(16);
}

#[test]
fn stdin_feeds_one_input() {
    let scratch = sealed_fixture();
    cryptadm()
        .current_dir(scratch.dir.path())
        .args(["bootstrap", "open", "--in", "-", "--out", "out.yaml", "--passphrase-file", "pass"])
        .write_stdin(std::fs::read(scratch.path("sealed.yaml")).unwrap())
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(scratch.path("out.yaml")).unwrap(), VECTOR_PLAINTEXT);
    cryptadm()
        .current_dir(scratch.dir.path())
        .args(["bootstrap", "open", "--in", "sealed.yaml", "--out", "-", "--passphrase-file", "-"])
        .write_stdin(VECTOR_PASSPHRASE)
        .assert()
        .success()
        .stdout(VECTOR_PLAINTEXT);
    cryptadm()
        .current_dir(scratch.dir.path())
        .args(["bootstrap", "open", "--in", "-", "--out", "x", "--passphrase-file", "-"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--in and --passphrase-file both read standard input"));
}

#[test]
fn seal_without_a_source_or_terminal_is_a_usage_error() {
    let scratch = Scratch::new();
    scratch.write("plain.yaml", "x");
    cryptadm()
        .current_dir(scratch.dir.path())
        .args(["bootstrap", "seal", "--in", "plain.yaml", "--provider", "file", "--passphrase-uri", "file:///p"])
        .args(["--out", "sealed.yaml"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("error: no passphrase to seal with, and no terminal to ask on"))
        .stderr(predicate::str::contains("--passphrase-file"))
        .stderr(predicate::str::contains("CRYPTADM_PASSPHRASE_FILE"))
        .stderr(predicate::str::is_match("CRYPTADM_PASSPHRASE($|[^_])").unwrap());
    assert!(!scratch.path("sealed.yaml").exists());
}

#[test]
fn seal_writes_out_files_0600() {
    let scratch = Scratch::new();
    scratch.write("pass", "p");
    scratch.write("plain.yaml", "x");
    cryptadm()
        .current_dir(scratch.dir.path())
        .args(["bootstrap", "seal", "--in", "plain.yaml", "--provider", "file", "--passphrase-uri", "file:///p"])
        .args(["--passphrase-file", "pass", "--out", "sealed.yaml"])
        .assert()
        .success()
        .stdout("");
    let mode = std::fs::metadata(scratch.path("sealed.yaml")).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn seal_refuses_a_file_uri_the_machine_cannot_use() {
    let scratch = Scratch::new();
    scratch.write("pass", "p");
    cryptadm()
        .current_dir(scratch.dir.path())
        .args(["bootstrap", "seal", "--in", "pass", "--provider", "file", "--passphrase-uri", "/etc/passphrase"])
        .args(["--passphrase-file", "pass"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("file:///absolute/path"));
}

#[test]
fn remote_configs_come_first_and_are_fetched_skipped_or_refused_when_opening() {
    let scratch = Scratch::new();
    scratch.write("pass", VECTOR_PASSPHRASE);
    scratch.write("plain.yaml", VECTOR_PLAINTEXT);
    let uri = format!("file://{}", scratch.path("pass").display());
    // The sealing host has the `objstore` plugin (seal refuses a RemoteConfig provider it cannot find:
    // tests/cli/backends.rs); the machine below has not.
    let bin = scratch.path("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let plugin = bin.join("machineadm-remote-configuration-provider-objstore");
    std::fs::write(&plugin, "#!/bin/sh\nexit 1\n").unwrap();
    for path in [&plugin, &bin] {
        std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    cryptadm()
        .current_dir(scratch.dir.path())
        .env("PATH", &bin)
        .args(["bootstrap", "seal", "--in", "plain.yaml", "--provider", "file", "--passphrase-uri", &uri])
        .args([
            "--passphrase-file",
            "pass",
            "--remote-config",
            "objstore=objstore://bucket/key.yaml",
            "--out",
            "sealed.yaml",
        ])
        .assert()
        .success();
    let sealed = std::fs::read_to_string(scratch.path("sealed.yaml")).unwrap();
    assert!(sealed.starts_with(
        "apiVersion: machineadm.cluster.x-k8s.io/v1alpha1\nkind: RemoteConfig\nmetadata:\n  name: remote-config-1\nspec:\n  provider: objstore\n  uri: objstore://bucket/key.yaml\n---\n"
    ), "{sealed}");
    // Fetched by default: no `objstore` plugin here, so not found, and nothing written.
    open_in(&scratch)
        .env("PATH", "/usr/bin:/bin")
        .assert()
        .code(5)
        .stderr(predicate::str::contains(
            "document 1 (RemoteConfig `remote-config-1`, provider `objstore`): remote-configuration provider `objstore`: plugin \
             `machineadm-remote-configuration-provider-objstore` not found",
        ))
        .stderr(predicate::str::contains("hint: install the plugin"));
    assert!(!scratch.path("out.yaml").exists());
    open_in(&scratch)
        .arg("--skip-remote")
        .assert()
        .success()
        .stderr(predicate::str::contains("skipping document 1: RemoteConfig `remote-config-1` (provider `objstore`)"));
    std::fs::remove_file(scratch.path("out.yaml")).unwrap();
    open_in(&scratch)
        .arg("--strict")
        .assert()
        .code(3)
        .stderr(predicate::str::contains("refused in strict mode"))
        .stderr(predicate::str::contains("hint: drop --strict"));
    assert!(!scratch.path("out.yaml").exists());
}

#[test]
fn json_output_opens_too() {
    let scratch = Scratch::new();
    scratch.write("pass", VECTOR_PASSPHRASE);
    scratch.write("plain.yaml", VECTOR_PLAINTEXT);
    let uri = format!("file://{}", scratch.path("pass").display());
    for remote in [None, Some("s3=s3://b/k")] {
        let mut seal = cryptadm();
        seal.current_dir(scratch.dir.path())
            .args(["bootstrap", "seal", "--in", "plain.yaml", "--provider", "file", "--passphrase-uri", &uri])
            .args(["--passphrase-file", "pass", "--output-format", "json", "--out", "sealed.yaml"]);
        if let Some(remote) = remote {
            seal.args(["--remote-config", remote]);
        }
        seal.assert().success();
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(scratch.path("sealed.yaml")).unwrap()).unwrap();
        let expected_kind = if remote.is_some() { "List" } else { "EncryptedConfig" };
        assert_eq!(json["kind"], expected_kind);
        let _ = std::fs::remove_file(scratch.path("out.yaml"));
        open_in(&scratch).arg("--skip-remote").assert().success();
        assert_eq!(std::fs::read_to_string(scratch.path("out.yaml")).unwrap(), VECTOR_PLAINTEXT);
    }
}

#[test]
fn several_encrypted_documents_are_concatenated_in_order() {
    let scratch = Scratch::new();
    let pass = scratch.write("pass", "pw");
    let first = seal_file_provider(&pass, &scratch.write("a.yaml", "a: 1\n"));
    let second = seal_file_provider(&pass, &scratch.write("b.yaml", "b: 2\n"));
    scratch.write("sealed.yaml", [first, b"---\n".to_vec(), second].concat());
    open_in(&scratch).assert().success();
    assert_eq!(std::fs::read_to_string(scratch.path("out.yaml")).unwrap(), "a: 1\n---\nb: 2\n");
}

/// Runs `open` on a broken input and checks the exit code, the message, that nothing new was written, and
/// that an existing output is untouched.
fn assert_open_fails(sealed: &str, extra: &[&str], code: i32, message: &str) {
    let scratch = Scratch::new();
    scratch.write("pass", VECTOR_PASSPHRASE);
    scratch.write(
        "sealed.yaml",
        sealed.replace("file:///etc/machineadm/passphrase", &format!("file://{}", scratch.path("pass").display())),
    );
    scratch.write("out.yaml", "previous\n");
    let before = scratch.entries();
    open_in(&scratch)
        .args(extra)
        .assert()
        .code(code)
        .stdout("")
        .stderr(predicate::str::contains("error: "))
        .stderr(predicate::str::contains(message))
        .stderr(predicate::str::contains(VECTOR_PASSPHRASE).not());
    assert_eq!(scratch.entries(), before, "stray files after a failure ({message})");
    assert_eq!(std::fs::read_to_string(scratch.path("out.yaml")).unwrap(), "previous\n", "output changed ({message})");
}

#[test]
fn wrong_passphrase_is_16_and_names_the_document() {
    let scratch_pass = Scratch::new();
    let wrong = scratch_pass.write("wrong", "correct horse battery staple\n");
    let wrong = wrong.to_str().unwrap();
    assert_open_fails(
        VECTOR_DOCUMENT,
        &["--passphrase-file", wrong],
        16,
        "document 1 (EncryptedConfig, provider `file`): decryption failed",
    );
}

#[test]
fn tampered_ciphertext_is_16() {
    let tampered = VECTOR_DOCUMENT.replace("P25Mwy3y", "P25Mwy4y");
    assert_open_fails(&tampered, &[], 16, "wrong passphrase, or the document was altered");
    let swapped_iv = VECTOR_DOCUMENT.replace("oKGio6Slpqeoqaqr", "oKGio6Slpqeoqaqq");
    assert_open_fails(&swapped_iv, &[], 16, "decryption failed");
}

#[test]
fn truncated_documents_are_3() {
    let half = &VECTOR_DOCUMENT[..VECTOR_DOCUMENT.find("  salt:").unwrap()];
    assert_open_fails(half, &[], 3, "spec.salt is missing");
    let cut_ciphertext =
        VECTOR_DOCUMENT.replace("P25Mwy3yorzjCaQwrR1xg0dYOcynBv53r8TYe0n36xUzCGEv4xpSfUSqbIk/yTw=", "P25Mwy3yorzjCaQw");
    assert_open_fails(&cut_ciphertext, &[], 3, "shorter than the 16-byte authentication tag");
    assert_open_fails(&VECTOR_DOCUMENT[..40], &[], 3, "document 1");
}

#[test]
fn malformed_and_unsupported_documents_are_3() {
    let cases: &[(String, &str)] = &[
        ("kind: [unclosed\n".into(), "not a valid YAML stream"),
        (VECTOR_DOCUMENT.replace("kind: EncryptedConfig", "kind: Secret"), "unsupported kind `Secret`"),
        (VECTOR_DOCUMENT.replace("/v1alpha1", "/v2"), "unsupported apiVersion `machineadm.cluster.x-k8s.io/v2`"),
        (
            VECTOR_DOCUMENT.replace("cipherAlgorithm: aes-256-gcm", "cipherAlgorithm: chacha20"),
            "unsupported cipherAlgorithm",
        ),
        (VECTOR_DOCUMENT.replace("digestAlgorithm: sha-512", "digestAlgorithm: sha-1"), "unsupported digestAlgorithm"),
        (
            VECTOR_DOCUMENT.replace("keyDerivationAlgorithm: pbkdf2", "keyDerivationAlgorithm: scrypt"),
            "unsupported keyDerivationAlgorithm",
        ),
        (VECTOR_DOCUMENT.replace("\"50000\"", "\"1000000000\""), "spec.iterations 1000000000 is outside"),
        (VECTOR_DOCUMENT.replace("iv: oKGio6Slpqeoqaqr", "iv: oKGio6SlpqeoqaqrrK2urw=="), "needs a 12-byte nonce"),
        (VECTOR_DOCUMENT.replace("salt: AAECAwQFBgcICQoLDA0ODw==", "salt: '!!'"), "spec.salt is not valid base64"),
        ("\u{0}\u{1}binary".into(), "not a valid YAML stream"),
        ("# only a comment\n".into(), "no EncryptedConfig document"),
    ];
    for (input, message) in cases {
        assert_open_fails(input, &[], 3, message);
    }
}

#[test]
fn a_failing_second_document_writes_nothing() {
    let broken = format!("{VECTOR_DOCUMENT}---\n{}", VECTOR_DOCUMENT.replace("P25Mwy3y", "P25Mwy4y"));
    assert_open_fails(&broken, &[], 16, "document 2 (EncryptedConfig");
}

#[test]
fn missing_files_are_5() {
    let scratch = Scratch::new();
    open_in(&scratch).assert().code(5).stderr(predicate::str::contains("cannot open the sealed stream `sealed.yaml`"));
    scratch.write("sealed.yaml", VECTOR_DOCUMENT);
    // The document's own passphrase file is missing on this machine.
    open_in(&scratch).assert().code(5).stderr(predicate::str::contains("passphrase file `/etc/machineadm/passphrase`"));
    open_in(&scratch)
        .args(["--passphrase-file", "nope"])
        .assert()
        .code(5)
        .stderr(predicate::str::contains("reading the passphrase from `nope`"));
    assert!(!scratch.path("out.yaml").exists());
}

#[test]
fn empty_passphrase_is_3() {
    let scratch = Scratch::new();
    scratch.write("sealed.yaml", VECTOR_DOCUMENT);
    scratch.write("empty", "");
    open_in(&scratch)
        .args(["--passphrase-file", "empty"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("the passphrase from `empty` is empty"));
    open_in(&scratch).env("CRYPTADM_PASSPHRASE", "").assert().code(3);
}

#[test]
fn unwritable_output_fails_cleanly() {
    let scratch = sealed_fixture();
    cryptadm()
        .current_dir(scratch.dir.path())
        .args(["bootstrap", "open", "--in", "sealed.yaml", "--out", "no/such/dir/out.yaml"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("writing `no/such/dir/out.yaml`"));
    assert_eq!(scratch.entries(), ["pass", "plain.yaml", "sealed.yaml"]);
}

#[test]
fn help_documents_exit_codes_and_usage_errors_are_2() {
    cryptadm()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("Exit status:"))
        .stdout(predicate::str::contains("16  unauthenticated"));
    cryptadm().args(["bootstrap", "open", "--bogus"]).assert().code(2);
    cryptadm().args(["bootstrap", "open", "--in", "x"]).assert().code(2).stderr(predicate::str::contains("--out"));
    cryptadm().arg("--version").assert().success().stdout(predicate::str::starts_with("cryptadm "));
}

/// Scripts grep and sed these files: every field stays on its own `key: value` line however long the
/// configuration (a folded block scalar would still parse, but not line by line).
#[test]
fn sealed_documents_keep_one_line_per_field() {
    let scratch = Scratch::new();
    let pass = scratch.write("pass", "pw");
    let big: Vec<u8> = (0..1024 * 1024u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    let sealed = String::from_utf8(seal_file_provider(&pass, &scratch.write("big.bin", big))).unwrap();
    assert_eq!(sealed.lines().count(), 12, "{}", &sealed[..400]);
    assert!(sealed.lines().any(|l| l.starts_with("  ciphertext: ") && l.len() > 1_000_000));
}
