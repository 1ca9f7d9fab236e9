//! The ocicrypt key-provider protocol (src/ocicrypt/keyprovider.rs) against a real provider process:
//! `tests/interop/keyprovider_aesgcm.py`, an AES-GCM provider in the manner of lumjjb/simple-ocicrypt-keyprovider
//! that also checks every request has the exact JSON shape ocicrypt sends (docs/formats.md#key-providers).
//!
//! These tests never skip: `python3` must be on PATH with `cryptography` importable (`bash .ci/run` installs it).

use crate::support::{self, Scratch};
use cryptadm::ocicrypt::Error;
use cryptadm::ocicrypt::keyprovider::{self, KeyProviderConfig, Parameters};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Private options of a layer, as ocicrypt wraps them.
const OPTS: &[u8] = br#"{"symkey":"3q2+796tvu/erb7v3q2+796tvu/erb7v3q2+796tvu8=","cipheroptions":{"nonce":"AAECAwQFBgcICQoLDA0ODw=="}}"#;
const NAME: &str = "aesgcm";

fn provider_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/keyprovider_aesgcm.py")
}

/// Fails (never skips) unless `python3` can import `cryptography`.
fn require_python() {
    static READY: OnceLock<()> = OnceLock::new();
    READY.get_or_init(|| {
        support::require_tool("python3", "apt-get install python3");
        let output = std::process::Command::new("python3")
            .args(["-c", "import cryptography.hazmat.primitives.ciphers.aead"])
            .output()
            .expect("run python3");
        assert!(
            output.status.success(),
            "`python3` cannot import `cryptography`, which the test key provider needs; install it with \
             `python3 -m pip install cryptography` (bash .ci/run does).\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    });
}

/// A configuration file as an operator writes it, with provider `NAME` run as `python3 SCRIPT NAME MODE…`,
/// parsed from the file.
fn config(scratch: &Scratch, mode: &[&str]) -> KeyProviderConfig {
    require_python();
    let mut args = vec![provider_script().display().to_string(), NAME.to_string()];
    args.extend(mode.iter().map(|m| m.to_string()));
    let document = serde_json::json!({
        "key-providers": {
            NAME: {"cmd": {"path": "python3", "args": args}},
            "remote": {"grpc": "localhost:50051"}
        }
    });
    let path = scratch.write("ocicrypt_keyprovider.conf", serde_json::to_vec_pretty(&document).unwrap());
    let loaded = KeyProviderConfig::load(&path).unwrap().expect("the file exists");
    // `python3` is looked up (and checked) where the CLI would look: PATH, which `cmd/` hands the library.
    KeyProviderConfig {
        search_dirs: std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()).collect(),
        ..loaded
    }
}

fn params(pairs: &[(&str, &[&[u8]])]) -> Parameters {
    pairs.iter().map(|(k, vs)| (k.to_string(), vs.iter().map(|v| v.to_vec()).collect())).collect()
}

#[test]
fn wrap_then_unwrap_through_the_provider() {
    let scratch = Scratch::new();
    let config = config(&scratch, &[]);
    assert_eq!(config.names().collect::<Vec<_>>(), [NAME, "remote"]);
    // Other recipients' parameters travel along, as in ocicrypt.
    let others = params(&[("pubkeys", &[b"-----BEGIN PUBLIC KEY-----"]), ("gpg-recipients", &[b"alice@example.com"])]);
    let blob = keyprovider::wrap(&config, NAME, &[], &others, OPTS).unwrap();
    let parsed: serde_json::Value = serde_json::from_slice(&blob).expect("the provider's blob is its JSON");
    assert_eq!(parsed["wrap_type"], "AES");
    assert_eq!(parsed["options"], serde_json::json!(["Enabled"]), "no options is sent as `Enabled`");

    let dc = params(&[(NAME, &[b"Enabled"]), ("privkeys", &[])]);
    let unwrapped = keyprovider::unwrap(&config, NAME, &dc, &blob).unwrap().expect("the provider unwraps");
    assert_eq!(&unwrapped[..], OPTS);
}

#[test]
fn provider_options_reach_the_provider() {
    let scratch = Scratch::new();
    let config = config(&scratch, &[]);
    let opts = vec![b"key-id=1".to_vec(), b"\x00\xffbinary".to_vec()];
    let blob = keyprovider::wrap(&config, NAME, &opts, &Parameters::new(), OPTS).unwrap();
    let parsed: serde_json::Value = serde_json::from_slice(&blob).unwrap();
    assert_eq!(parsed["options"], serde_json::json!(["key-id=1", "\u{0}\u{ff}binary"]));
}

#[test]
fn provider_failure_is_reported_with_its_reason() {
    let scratch = Scratch::new();
    let config = config(&scratch, &["--fail"]);
    let err = keyprovider::wrap(&config, NAME, &[], &Parameters::new(), OPTS).unwrap_err();
    assert!(matches!(err, Error::Wrap { .. }), "{err}");
    let text = err.to_string();
    assert!(text.contains("provider.aesgcm") && text.contains("exited with status 3"), "{text}");
    assert!(text.contains("the KMS refused the request"), "stderr's last line belongs in the error: {text}");
    let err = keyprovider::unwrap(&config, NAME, &Parameters::new(), b"{}").unwrap_err();
    assert!(matches!(err, Error::Unwrap { .. }), "{err}");
}

#[test]
fn unreadable_or_empty_answers() {
    let scratch = Scratch::new();
    let err = keyprovider::wrap(&config(&scratch, &["--garbage"]), NAME, &[], &Parameters::new(), OPTS).unwrap_err();
    assert!(err.to_string().contains("not the expected JSON"), "{err}");
    let empty = config(&scratch, &["--empty"]);
    let err = keyprovider::wrap(&empty, NAME, &[], &Parameters::new(), OPTS).unwrap_err();
    assert!(err.to_string().contains("no wrapped key"), "{err}");
    // A provider that answers without private options is saying "not mine".
    let blob = keyprovider::wrap(&config(&scratch, &[]), NAME, &[], &Parameters::new(), OPTS).unwrap();
    assert!(keyprovider::unwrap(&empty, NAME, &Parameters::new(), &blob).unwrap().is_none());
    // A blob the provider cannot read makes it fail.
    let err =
        keyprovider::unwrap(&config(&scratch, &[]), NAME, &Parameters::new(), b"{\"key_url\":\"x\"}").unwrap_err();
    assert!(err.to_string().contains("not a blob of this provider"), "{err}");
}

#[test]
fn provider_timeout_kills_it() {
    let scratch = Scratch::new();
    let mut config = config(&scratch, &["--sleep", "30"]);
    config.timeout = Duration::from_millis(1500);
    let started = Instant::now();
    let err = keyprovider::wrap(&config, NAME, &[], &Parameters::new(), OPTS).unwrap_err();
    assert!(err.to_string().contains("timed out after 1500ms"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
}

#[test]
fn oversized_provider_output_is_refused() {
    let scratch = Scratch::new();
    let config = config(&scratch, &["--flood", &(3 << 20).to_string()]);
    let err = keyprovider::wrap(&config, NAME, &[], &Parameters::new(), OPTS).unwrap_err();
    assert!(err.to_string().contains(&format!("printed more than {} bytes", keyprovider::DEFAULT_MAX_OUTPUT)), "{err}");
}

#[test]
fn grpc_and_unknown_providers() {
    let scratch = Scratch::new();
    let config = config(&scratch, &[]);
    let err = keyprovider::wrap(&config, "remote", &[], &Parameters::new(), OPTS).unwrap_err();
    assert!(err.to_string().contains("cannot reach the gRPC key provider at `localhost:50051`"), "{err}");
    let err = keyprovider::wrap(&config, "absent", &[], &Parameters::new(), OPTS).unwrap_err();
    assert!(matches!(err, Error::InvalidKey { .. }), "{err}");
    assert!(keyprovider::unwrap(&config, "absent", &Parameters::new(), b"x").unwrap().is_none());
    let missing_program = KeyProviderConfig::from_json(
        br#"{"key-providers": {"p": {"cmd": {"path": "/nonexistent/provider"}}}}"#,
        "inline",
    )
    .unwrap();
    let err = keyprovider::wrap(&missing_program, "p", &[], &Parameters::new(), OPTS).unwrap_err();
    assert!(err.to_string().contains("cannot run `/nonexistent/provider`"), "{err}");
}

/// Issue 25: a `cmd` provider that someone other than root and the current user could change is refused before
/// it runs (exit 3), as every plugin is.
#[test]
fn a_provider_others_could_change_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let scratch = Scratch::new();
    let marker = scratch.path("ran");
    let program = scratch.write("provider.sh", format!("#!/bin/sh\ntouch '{}'\n", marker.display()));
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o777)).unwrap();
    let document = serde_json::json!({"key-providers": {NAME: {"cmd": {"path": program, "args": []}}}});
    let path = scratch.write("ocicrypt_keyprovider.conf", serde_json::to_vec_pretty(&document).unwrap());
    let config = KeyProviderConfig::load(&path).unwrap().expect("the file exists");
    let err = keyprovider::wrap(&config, NAME, &[], &Parameters::new(), OPTS).unwrap_err();
    assert!(matches!(err, Error::InvalidKey { .. }), "{err}");
    assert_eq!(cryptadm::exit::Classify::status(&err), cryptadm::exit::ExitStatus::InvalidInput);
    assert!(err.to_string().contains("writable by every user"), "{err}");
    let err = keyprovider::unwrap(&config, NAME, &Parameters::new(), b"{}").unwrap_err();
    assert!(err.to_string().contains("refusing to run the plugin"), "{err}");
    assert!(!marker.exists(), "the provider ran");
}
