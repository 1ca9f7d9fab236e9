//! `cryptadm bootstrap seal --ignition` against the real Ignition (Debian's `ignition` package, 2.14): its
//! validator accepts the config without a word, its engine runs the `fetch-offline` and `files` stages on it into
//! a sandbox root, and the unit it wrote, run as systemd would (its `ExecStart=` unchanged, in a chroot onto that
//! root), opens the stream into the configuration, 0600.
//!
//! These tests never skip: `ignition` and `policycoreutils` (`setfiles`, for the engine's SELinux relabel step)
//! must be installed, and the engine run needs root (`bash .ci/run` does both).

use crate::sandbox::Sandbox;
use crate::support::{self, Scratch, cryptadm};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

/// The engine is not on PATH: it is meant to run from the initramfs.
const ENGINE: &str = "/usr/lib/dracut/modules.d/30ignition/ignition";
const UNIT: &str = "cryptadm-bootstrap-open.service";
const PASSPHRASE: &str = "correct horse battery staple";
const CONFIG: &str = "apiVersion: kubeadm.k8s.io/v1beta3\nkind: JoinConfiguration\ndiscovery:\n  bootstrapToken:\n    \
                      token: abcdef.0123456789abcdef\n";

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).permissions().mode() & 0o7777
}

/// The config for a machine whose `file` provider reads /etc/machineadm/passphrase.
fn seal_ignition(scratch: &Scratch, extra: &[&str]) -> Vec<u8> {
    let pass = scratch.write("pass", PASSPHRASE);
    let input = scratch.write("config.yaml", CONFIG);
    let output = cryptadm()
        .args(["bootstrap", "seal", "--provider", "file", "--passphrase-uri", "file:///etc/machineadm/passphrase"])
        .arg("--passphrase-file")
        .arg(&pass)
        .arg("--in")
        .arg(&input)
        .arg("--ignition")
        .args(extra)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    output.stdout
}

pub fn validate(config: &Path) -> Output {
    support::require_tool("ignition-validate", "apt-get install ignition");
    Command::new("ignition-validate").arg(config).output().expect("run ignition-validate")
}

#[test]
fn ignition_validate_accepts_the_config_without_a_word() {
    let scratch = Scratch::new();
    let config = seal_ignition(&scratch, &["--cryptadm-path", "/opt/bin/cryptadm"]);
    let path = scratch.write("config.ign", &config);
    let checked = validate(&path);
    // It exits 0 on warnings (unknown keys, setuid bits): silence is the pass.
    assert!(checked.status.success() && text(&checked).is_empty(), "ignition-validate: {}", text(&checked));

    // The control: the validator does read what cryptadm writes.
    let json = String::from_utf8(config).unwrap();
    for (broken, expected) in [
        (json.replace("\"mode\": 384", "\"mode\": \"0600\""), "cannot unmarshal string"),
        (json.replace("\"overwrite\": true", "\"overwrite\": true, \"bogus\": 1"), "Unused key bogus"),
        (json.replace("\"3.3.0\"", "\"3.4.0\""), "unsupported config version"),
    ] {
        let checked = validate(&scratch.write("broken.ign", broken));
        assert!(text(&checked).contains(expected), "ignition-validate did not say `{expected}`: {}", text(&checked));
    }
}

/// Runs the real Ignition engine's `fetch-offline` and `files` stages on `config` into a fresh root in `sandbox`
/// (as the initramfs would on the first boot); returns the root.
pub fn run_engine(sandbox: &Sandbox, config: &Path) -> std::path::PathBuf {
    support::require_tool("setfiles", "apt-get install policycoreutils");
    assert!(Path::new(ENGINE).is_file(), "`{ENGINE}` is missing; install it with `apt-get install ignition`");
    // A root as Ignition expects it: an SELinux config (it relabels at the end) with no rules.
    let root = sandbox.path("root");
    let state = sandbox.path("state");
    std::fs::create_dir_all(root.join("etc/selinux/targeted/contexts/files")).unwrap();
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(root.join("etc/selinux/config"), "SELINUX=disabled\nSELINUXTYPE=targeted\n").unwrap();
    std::fs::write(root.join("etc/selinux/targeted/contexts/files/file_contexts"), "").unwrap();
    for stage in ["fetch-offline", "files"] {
        let output = Command::new(ENGINE)
            .env("IGNITION_CONFIG_FILE", config)
            .args(["-platform", "file", "-stage", stage, "-log-to-stdout", "-root"])
            .arg(&root)
            .arg("-config-cache")
            .arg(state.join("ignition.json"))
            .arg("-state-file")
            .arg(state.join("state"))
            .arg("-neednet")
            .arg(state.join("neednet"))
            .output()
            .expect("run the Ignition engine");
        let log = text(&output);
        assert!(output.status.success(), "ignition -stage {stage} failed:\n{log}");
        assert!(log.contains("Ignition finished successfully"), "ignition -stage {stage}:\n{log}");
    }
    root
}

#[test]
fn ignition_writes_the_stream_and_the_unit_and_the_unit_opens_it() {
    let sandbox = Sandbox::new();
    let config = sandbox.scratch.write("config.ign", seal_ignition(&sandbox.scratch, &[]));
    let root = run_engine(&sandbox, &config);

    let stream = root.join("etc/machineadm/machineadm_config.yaml");
    assert_eq!(mode(&stream), 0o600, "the sealed stream");
    assert!(std::fs::read_to_string(&stream).unwrap().contains("kind: EncryptedConfig"));
    let unit = std::fs::read_to_string(root.join("etc/systemd/system").join(UNIT)).unwrap();
    assert!(unit.contains("\nType=oneshot\n") && unit.contains("\nBefore=kubeadm.service kubelet.service\n"), "{unit}");
    let preset = std::fs::read_to_string(root.join("etc/systemd/system-preset/20-ignition.preset")).unwrap();
    assert_eq!(preset, format!("enable {UNIT}\n"));

    // First boot: what the machine already has (the passphrase), then the unit's ExecStart as systemd runs it.
    let extra = sandbox.path("extra");
    std::fs::create_dir_all(extra.join("etc/machineadm")).unwrap();
    std::fs::write(extra.join("etc/machineadm/passphrase"), PASSPHRASE).unwrap();
    let out = sandbox.path("out");
    let binary = Path::new(env!("CARGO_BIN_EXE_cryptadm"));
    let ran = sandbox.run("ignition_exec_start.sh", &[&root, Path::new(UNIT), binary, &extra, &out]);
    assert!(ran.status.success(), "the unit's ExecStart failed:\n{}", text(&ran));
    assert!(text(&ran).contains("decrypted document 1: EncryptedConfig (provider `file`"), "{}", text(&ran));
    let opened = out.join("machineadm/machine_config.yaml");
    assert_eq!(std::fs::read_to_string(&opened).unwrap(), CONFIG);
    assert_eq!(mode(&opened), 0o600, "the opened configuration");
    assert_eq!(mode(&out.join("machineadm")), 0o700, "the RuntimeDirectory");

    // The negative control: a machine with another passphrase gets nothing, and the unit fails (exit 16).
    std::fs::write(extra.join("etc/machineadm/passphrase"), "wrong").unwrap();
    let bad_out = sandbox.path("bad-out");
    let ran = sandbox.run("ignition_exec_start.sh", &[&root, Path::new(UNIT), binary, &extra, &bad_out]);
    assert_eq!(ran.status.code(), Some(16), "{}", text(&ran));
    assert!(!bad_out.join("machineadm/machine_config.yaml").exists());
}
