//! Shared helpers for the CLI tests.
#![allow(dead_code)]

use assert_cmd::Command;
use std::path::{Path, PathBuf};

/// The passphrase of the machineadm known-answer vector (docs/formats.md#machineadm-encryptedconfig).
pub const VECTOR_PASSPHRASE: &str = "correct horse battery staple";
/// The plaintext of the known-answer vector.
pub const VECTOR_PLAINTEXT: &str = "apiVersion: v1\nkind: ConfigMap\n";
/// The sealed document of the known-answer vector, for a passphrase at file:///etc/machineadm/passphrase.
pub const VECTOR_DOCUMENT: &str = "apiVersion: machineadm.cluster.x-k8s.io/v1alpha1
kind: EncryptedConfig
spec:
  provider: file
  passphraseURI: file:///etc/machineadm/passphrase
  ciphertext: P25Mwy3yorzjCaQwrR1xg0dYOcynBv53r8TYe0n36xUzCGEv4xpSfUSqbIk/yTw=
  salt: AAECAwQFBgcICQoLDA0ODw==
  iv: oKGio6Slpqeoqaqr
  cipherAlgorithm: aes-256-gcm
  digestAlgorithm: sha-512
  iterations: \"50000\"
  keyDerivationAlgorithm: pbkdf2
";

/// A `cryptadm` command with a clean environment: no passphrase variables, no colour, a PATH without
/// provider plugins unless a test adds them.
pub fn cryptadm() -> Command {
    Command::from(cryptadm_process())
}

/// [`cryptadm`] as a `std::process::Command`, for a run the test spawns and signals.
pub fn cryptadm_process() -> std::process::Command {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("cryptadm"));
    cmd.env_remove("CRYPTADM_PASSPHRASE").env_remove("CRYPTADM_PASSPHRASE_FILE").env("NO_COLOR", "1");
    cmd
}

/// A scratch directory with helpers to write files into it.
pub struct Scratch {
    pub dir: tempfile::TempDir,
}

impl Scratch {
    pub fn new() -> Self {
        Self { dir: tempfile::tempdir().expect("temp dir") }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Writes `contents` to `name` and returns its path.
    pub fn write(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path(name);
        std::fs::write(&path, contents).expect("write fixture");
        path
    }

    /// Writes an executable script (for plugin tests) and returns its path.
    pub fn script(&self, name: &str, body: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = self.write(name, body);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        path
    }

    /// The names of the entries in the scratch directory, sorted (to prove nothing stray was written).
    pub fn entries(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.dir.path())
            .expect("read dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

/// Seals `plaintext` for the built-in file provider with the passphrase in `passphrase_file`.
pub fn seal_file_provider(passphrase_file: &Path, plaintext: &Path) -> Vec<u8> {
    let uri = format!("file://{}", passphrase_file.display());
    let output = cryptadm()
        .args(["bootstrap", "seal", "--provider", "file", "--passphrase-uri", &uri, "--passphrase-file"])
        .arg(passphrase_file)
        .arg("--in")
        .arg(plaintext)
        .output()
        .expect("run cryptadm");
    assert!(output.status.success(), "seal failed: {}", String::from_utf8_lossy(&output.stderr));
    output.stdout
}

/// Fails with an instruction when a tool the interop tests need is missing. These tests never skip: a
/// skipped interop test is a claim without proof. `bash .ci/run` installs everything.
pub fn require_tool(program: &str, install: &str) {
    let found = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|dir| dir.join(program).is_file()))
        .unwrap_or(false);
    assert!(found, "`{program}` is not installed; install it with `{install}` (bash .ci/run does)");
}
