//! Behaviour that only exists on a terminal: the passphrase prompt (with confirmation when sealing) and the
//! refusal to print plaintext. A Python pty driver stands in for the operator.

use crate::support::{Scratch, VECTOR_PASSPHRASE, VECTOR_PLAINTEXT, require_tool, seal_file_provider};

pub(crate) fn on_terminal(answers: &[&str], args: &[&str], dir: &std::path::Path) -> (i32, String) {
    require_tool("python3", "apt-get install -y python3");
    let driver = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cli/pty_drive.py");
    let output = std::process::Command::new("python3")
        .arg(driver)
        .arg(serde_json::to_string(answers).unwrap())
        .arg(assert_cmd::cargo::cargo_bin("cryptadm"))
        .args(args)
        .current_dir(dir)
        .env_remove("CRYPTADM_PASSPHRASE")
        .env_remove("CRYPTADM_PASSPHRASE_FILE")
        .env("NO_COLOR", "1")
        .output()
        .expect("run the pty driver");
    assert!(output.status.success(), "pty driver failed: {}", String::from_utf8_lossy(&output.stderr));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    (report["exit"].as_i64().unwrap() as i32, report["output"].as_str().unwrap().to_owned())
}

const SEAL: &[&str] = &["bootstrap", "seal", "--in", "plain.yaml", "--provider", "file", "--passphrase-uri"];

#[test]
fn seal_prompts_twice_and_the_result_opens() {
    let scratch = Scratch::new();
    scratch.write("plain.yaml", VECTOR_PLAINTEXT);
    let pass = scratch.write("pass", VECTOR_PASSPHRASE);
    let uri = format!("file://{}", pass.display());
    let args = [SEAL, &[uri.as_str(), "--out", "sealed.yaml"]].concat();
    let (code, screen) = on_terminal(&[VECTOR_PASSPHRASE, VECTOR_PASSPHRASE], &args, scratch.dir.path());
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("Confirm passphrase"), "{screen}");
    assert!(!screen.contains(VECTOR_PASSPHRASE), "the passphrase was echoed: {screen}");
    crate::support::cryptadm()
        .current_dir(scratch.dir.path())
        .args(["bootstrap", "open", "--in", "sealed.yaml", "--out", "-"])
        .assert()
        .success()
        .stdout(VECTOR_PLAINTEXT);
}

#[test]
fn seal_with_differing_confirmation_writes_nothing() {
    let scratch = Scratch::new();
    scratch.write("plain.yaml", VECTOR_PLAINTEXT);
    let args = [SEAL, &["file:///p", "--out", "sealed.yaml"]].concat();
    // Issue 15: a mismatch says so and asks again; three mismatches in a row give up.
    let (code, screen) = on_terminal(&["one", "two", "one", "two", "one", "two"], &args, scratch.dir.path());
    assert_eq!(code, 3, "{screen}");
    assert!(screen.contains("the two entries differ; type the passphrase again"), "{screen}");
    assert!(screen.contains("error: passphrase prompt failed: the two passphrases differ"), "{screen}");
    assert!(!scratch.path("sealed.yaml").exists());
    // A mismatch, then a matching pair: sealed.
    let (code, screen) = on_terminal(&["one", "two", "three", "three"], &args, scratch.dir.path());
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("the two entries differ"), "{screen}");
    assert!(scratch.path("sealed.yaml").exists());
}

#[test]
fn plaintext_is_refused_on_a_terminal() {
    let scratch = Scratch::new();
    let pass = scratch.write("pass", VECTOR_PASSPHRASE);
    scratch.write("sealed.yaml", seal_file_provider(&pass, &scratch.write("plain.yaml", VECTOR_PLAINTEXT)));
    let (code, screen) =
        on_terminal(&[], &["bootstrap", "open", "--in", "sealed.yaml", "--out", "-"], scratch.dir.path());
    assert_eq!(code, 2, "{screen}");
    assert!(screen.contains("refusing to print a decrypted configuration on a terminal"), "{screen}");
    assert!(!screen.contains("kind: ConfigMap"), "plaintext reached the terminal: {screen}");
}

#[test]
fn open_prompts_when_the_provider_plugin_is_missing() {
    let scratch = Scratch::new();
    let pass = scratch.write("pass", VECTOR_PASSPHRASE);
    scratch.write("plain.yaml", VECTOR_PLAINTEXT);
    crate::support::cryptadm()
        .current_dir(scratch.dir.path())
        .args(["bootstrap", "seal", "--in", "plain.yaml", "--provider", "aws", "--passphrase-uri", "kms://blob@arn"])
        .arg("--passphrase-file")
        .arg(&pass)
        .args(["--out", "sealed.yaml"])
        .assert()
        .success();
    let (code, screen) = on_terminal(
        &[VECTOR_PASSPHRASE],
        &["bootstrap", "open", "--in", "sealed.yaml", "--out", "out.yaml"],
        scratch.dir.path(),
    );
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("Passphrase for provider `aws`"), "{screen}");
    assert_eq!(std::fs::read_to_string(scratch.path("out.yaml")).unwrap(), VECTOR_PLAINTEXT);
}

#[test]
fn an_empty_prompt_answer_says_why_it_asks_again() {
    let scratch = Scratch::new();
    scratch.write("plain.yaml", VECTOR_PLAINTEXT);
    let args = [SEAL, &["file:///p", "--out", "sealed.yaml"]].concat();
    let (code, screen) = on_terminal(&["", VECTOR_PASSPHRASE, VECTOR_PASSPHRASE], &args, scratch.dir.path());
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("the passphrase is empty: type one"), "{screen}");
    assert!(scratch.path("sealed.yaml").exists());
}

/// `secret generate-k8s` prints private keys: as `bootstrap open` with plaintext, never onto a terminal; --out
/// writes them to a 0600 file instead.
#[test]
fn private_keys_are_refused_on_a_terminal_and_written_with_out() {
    use std::os::unix::fs::PermissionsExt;
    let scratch = Scratch::new();
    let key = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/keys/p256.pkcs8.pem");
    let args = ["secret", "generate-k8s", "image-keys", "--key", key];
    let (code, screen) = on_terminal(&[], &args, scratch.dir.path());
    assert_eq!(code, 2, "{screen}");
    assert!(screen.contains("refusing to print private keys on a terminal"), "{screen}");
    assert!(!screen.contains("kind: Secret"), "the Secret reached the terminal: {screen}");
    let (code, screen) = on_terminal(&[], &[&args[..], &["--out", "secret.yaml"]].concat(), scratch.dir.path());
    assert_eq!(code, 0, "{screen}");
    let written = scratch.path("secret.yaml");
    assert_eq!(std::fs::metadata(&written).unwrap().permissions().mode() & 0o777, 0o600);
    assert!(std::fs::read_to_string(&written).unwrap().contains("kind: Secret"));
}
