//! Interop with an independent implementation of the machineadm envelope: `tests/interop/machineadm_oracle.py`,
//! written from docs/formats.md#machineadm-encryptedconfig on top of Python's `cryptography` (OpenSSL). Documents go both ways, for
//! plaintexts of arbitrary bytes from empty to 1 MiB, and both implementations must reproduce the spec's
//! known-answer vector byte for byte.
//!
//! These tests never skip: `python3` must be on PATH with `cryptography` importable (`bash .ci/run` installs it).

use crate::support::{self, Scratch, VECTOR_DOCUMENT, VECTOR_PASSPHRASE, VECTOR_PLAINTEXT, cryptadm};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// Plaintext sizes that cross the interesting boundaries: empty, one byte, less than one AES block... up to 1 MiB.
const SIZES: [usize; 6] = [0, 1, 31, 4096, 65536, 1 << 20];
/// The fixed salt and IV of the known-answer vector (docs/formats.md).
const KAT_SALT_HEX: &str = "000102030405060708090a0b0c0d0e0f";
const KAT_IV_HEX: &str = "a0a1a2a3a4a5a6a7a8a9aaab";
/// The passphraseURI inside `VECTOR_DOCUMENT`.
const KAT_URI: &str = "file:///etc/machineadm/passphrase";
/// Exit status of an authentication failure, for cryptadm and the oracle alike.
const UNAUTHENTICATED: i32 = 16;
/// A passphrase that is not UTF-8 and ends in whitespace: both sides must use the file's bytes exactly.
const PASSPHRASE: &[u8] = b"p\xc3\xa4ss \xff\x00phrase \t\n";

fn oracle_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/machineadm_oracle.py")
}

/// Fails (never skips) unless `python3` can import `cryptography`.
fn require_python() {
    static READY: OnceLock<()> = OnceLock::new();
    READY.get_or_init(|| {
        support::require_tool("python3", "apt-get install python3");
        let output = Command::new("python3")
            .args(["-c", "import cryptography; print(cryptography.__version__)"])
            .output()
            .expect("run python3");
        assert!(
            output.status.success(),
            "`python3` on PATH cannot import the `cryptography` package, which the interop oracle needs; install it \
             with `python3 -m pip install cryptography` (bash .ci/run does).\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let script = oracle_script();
        assert!(script.is_file(), "the oracle script `{}` is missing", script.display());
    });
}

/// Runs the oracle with `args`.
fn oracle<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    require_python();
    Command::new("python3").arg(oracle_script()).args(args).output().expect("run python3")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Deterministic pseudo-random bytes (splitmix64), so a failure reproduces; every byte value occurs.
fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed ^ 0x9e37_79b9_7f4a_7c15;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        out.extend_from_slice(&(z ^ (z >> 31)).to_le_bytes());
    }
    out.truncate(len);
    out
}

fn file_uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// The oracle seals `plaintext` (a file) for the `file` provider.
fn oracle_seal(plaintext: &Path, passphrase: &Path, uri: &str, fixed: bool) -> Vec<u8> {
    let mut args: Vec<&OsStr> = vec![
        "seal".as_ref(),
        "--in".as_ref(),
        plaintext.as_os_str(),
        "--passphrase-file".as_ref(),
        passphrase.as_os_str(),
        "--provider".as_ref(),
        "file".as_ref(),
        "--passphrase-uri".as_ref(),
        uri.as_ref(),
    ];
    if fixed {
        args.extend(["--salt-hex", KAT_SALT_HEX, "--iv-hex", KAT_IV_HEX].map(OsStr::new));
    }
    let output = oracle(args);
    assert!(output.status.success(), "oracle seal failed: {}", stderr(&output));
    output.stdout
}

/// The oracle opens `sealed` into `out` with the given parser (`hand`, `yaml` or `auto`).
fn oracle_open(sealed: &Path, passphrase: &Path, out: &Path, parser: &str) -> Output {
    oracle([
        "open".as_ref(),
        "--in".as_ref(),
        sealed.as_os_str(),
        "--passphrase-file".as_ref(),
        passphrase.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
        "--parser".as_ref(),
        parser.as_ref(),
    ])
}

/// `cryptadm bootstrap seal` for the file provider; `fixed` uses the vector's salt and IV.
fn cryptadm_seal(plaintext: &Path, passphrase: &Path, uri: &str, fixed: bool) -> Vec<u8> {
    let mut cmd = cryptadm();
    cmd.args(["bootstrap", "seal", "--provider", "file", "--passphrase-uri", uri, "--passphrase-file"])
        .arg(passphrase)
        .arg("--in")
        .arg(plaintext);
    if fixed {
        cmd.args(["--salt-hex", KAT_SALT_HEX, "--iv-hex", KAT_IV_HEX, "--insecure-fixed-nonce"]);
    }
    let output = cmd.output().expect("run cryptadm");
    assert!(output.status.success(), "cryptadm seal failed: {}", stderr(&output));
    output.stdout
}

/// `cryptadm bootstrap open`; without `passphrase` the document's provider (`file`) reads its passphraseURI.
fn cryptadm_open(sealed: &Path, passphrase: Option<&Path>, out: &Path) -> Output {
    let mut cmd = cryptadm();
    cmd.args(["bootstrap", "open", "--in"]).arg(sealed).arg("--out").arg(out);
    if let Some(passphrase) = passphrase {
        cmd.arg("--passphrase-file").arg(passphrase);
    }
    cmd.output().expect("run cryptadm")
}

fn assert_same_bytes(actual: &[u8], expected: &[u8], what: &str) {
    assert_eq!(actual.len(), expected.len(), "{what}: length differs");
    if let Some(at) = actual.iter().zip(expected).position(|(a, b)| a != b) {
        panic!("{what}: first difference at byte {at}");
    }
}

#[test]
fn python_seals_cryptadm_opens() {
    let scratch = Scratch::new();
    let passphrase = scratch.write("passphrase", PASSPHRASE);
    let uri = file_uri(&passphrase);
    for (i, size) in SIZES.into_iter().enumerate() {
        let plaintext = random_bytes(size, 0xa000 + i as u64);
        let input = scratch.write(&format!("plain-{size}"), &plaintext);
        let document = oracle_seal(&input, &passphrase, &uri, false);
        let text = String::from_utf8(document.clone()).expect("the oracle prints UTF-8");
        assert!(text.starts_with("apiVersion: machineadm.cluster.x-k8s.io/v1alpha1\nkind: EncryptedConfig\n"));
        assert_eq!(text.lines().count(), 12, "the oracle prints the §7.1 layout:\n{}", &text[..text.len().min(400)]);
        let sealed = scratch.write(&format!("py-sealed-{size}.yaml"), &document);

        // Half the sizes with --passphrase-file, half through the `file` provider and the document's passphraseURI.
        let out = scratch.path(&format!("opened-{size}"));
        let explicit = (i % 2 == 0).then_some(passphrase.as_path());
        let output = cryptadm_open(&sealed, explicit, &out);
        assert!(output.status.success(), "cryptadm cannot open the oracle's {size}-byte document: {}", stderr(&output));
        let opened = std::fs::read(&out).expect("cryptadm wrote --out");
        assert_same_bytes(&opened, &plaintext, &format!("{size}-byte plaintext sealed by Python, opened by cryptadm"));
    }
}

#[test]
fn cryptadm_seals_python_opens() {
    let scratch = Scratch::new();
    let passphrase = scratch.write("passphrase", PASSPHRASE);
    let uri = file_uri(&passphrase);
    for (i, size) in SIZES.into_iter().enumerate() {
        let plaintext = random_bytes(size, 0xb000 + i as u64);
        let input = scratch.write(&format!("plain-{size}"), &plaintext);
        let sealed = scratch.write(&format!("rs-sealed-{size}.yaml"), cryptadm_seal(&input, &passphrase, &uri, false));
        // Both readers of the oracle: its own flat-YAML parser, and PyYAML when this Python has it.
        for parser in ["hand", "auto"] {
            let out = scratch.path(&format!("opened-{size}-{parser}"));
            let output = oracle_open(&sealed, &passphrase, &out, parser);
            assert!(
                output.status.success(),
                "the oracle ({parser} parser) cannot open cryptadm's {size}-byte document: {}",
                stderr(&output)
            );
            let opened = std::fs::read(&out).expect("the oracle wrote --out");
            assert_same_bytes(
                &opened,
                &plaintext,
                &format!("{size}-byte plaintext sealed by cryptadm, opened by Python ({parser} parser)"),
            );
        }
    }
}

#[test]
fn both_implementations_reproduce_the_known_answer_vector() {
    let scratch = Scratch::new();
    let passphrase = scratch.write("passphrase", VECTOR_PASSPHRASE);
    let plaintext = scratch.write("plaintext", VECTOR_PLAINTEXT);

    // The vector exactly as docs/bootstrap.md prints it.
    let python = String::from_utf8(oracle_seal(&plaintext, &passphrase, KAT_URI, true)).unwrap();
    assert_eq!(python, VECTOR_DOCUMENT, "the Python oracle does not reproduce the spec vector");
    // cryptadm fixes nonces only in builds with `test-vectors` (.ci/run runs this test in one).
    if cfg!(feature = "test-vectors") {
        let rust = String::from_utf8(cryptadm_seal(&plaintext, &passphrase, KAT_URI, true)).unwrap();
        assert_eq!(rust, VECTOR_DOCUMENT, "cryptadm does not reproduce the spec vector");
    }

    // The passphraseURI is metadata, not key material: pointed at the scratch passphrase, only that line changes,
    // and cryptadm's built-in file provider then finds the passphrase on its own.
    let uri = file_uri(&passphrase);
    let adjusted = VECTOR_DOCUMENT.replace(KAT_URI, &uri);
    let python = String::from_utf8(oracle_seal(&plaintext, &passphrase, &uri, true)).unwrap();
    assert_eq!(python, adjusted);
    if cfg!(feature = "test-vectors") {
        assert_eq!(String::from_utf8(cryptadm_seal(&plaintext, &passphrase, &uri, true)).unwrap(), adjusted);
    }
    let sealed = scratch.write("adjusted.yaml", &python);
    let out = scratch.path("opened-by-cryptadm");
    let output = cryptadm_open(&sealed, None, &out);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(std::fs::read(&out).unwrap(), VECTOR_PLAINTEXT.as_bytes());

    // And the oracle opens the published document with either parser.
    let vector = scratch.write("vector.yaml", VECTOR_DOCUMENT);
    for parser in ["hand", "auto"] {
        let out = scratch.path(&format!("opened-by-python-{parser}"));
        let output = oracle_open(&vector, &passphrase, &out, parser);
        assert!(output.status.success(), "{parser}: {}", stderr(&output));
        assert_eq!(std::fs::read(&out).unwrap(), VECTOR_PLAINTEXT.as_bytes(), "{parser} parser");
    }
}

#[test]
fn wrong_passphrase_fails_on_both_sides() {
    let scratch = Scratch::new();
    let right = scratch.write("right", PASSPHRASE);
    // The right bytes plus a newline (what `echo` adds): nobody may strip it to make it match.
    let mut newline = PASSPHRASE.to_vec();
    newline.push(b'\n');
    let wrongs =
        [scratch.write("wrong-newline", &newline), scratch.write("wrong-other", "correct horse battery staple")];
    let plaintext = scratch.write("plaintext", random_bytes(4096, 0xd00d));
    let uri = file_uri(&right);

    let from_cryptadm = scratch.write("rs.yaml", cryptadm_seal(&plaintext, &right, &uri, false));
    let from_python = scratch.write("py.yaml", oracle_seal(&plaintext, &right, &uri, false));
    for wrong in &wrongs {
        let name = wrong.file_name().unwrap().to_string_lossy().into_owned();

        let out = scratch.path(&format!("python-out-{name}"));
        let output = oracle_open(&from_cryptadm, wrong, &out, "auto");
        assert_eq!(output.status.code(), Some(UNAUTHENTICATED), "oracle with {name}: {}", stderr(&output));
        assert!(stderr(&output).contains("authentication failed"), "{}", stderr(&output));
        assert!(!out.exists(), "the oracle wrote output despite the failure");

        let out = scratch.path(&format!("cryptadm-out-{name}"));
        let output = cryptadm_open(&from_python, Some(wrong), &out);
        assert_eq!(output.status.code(), Some(UNAUTHENTICATED), "cryptadm with {name}: {}", stderr(&output));
        assert!(stderr(&output).contains("decryption failed"), "{}", stderr(&output));
        assert!(!out.exists(), "cryptadm wrote output despite the failure");
    }

    // The control: with the right passphrase both succeed on the very same documents.
    let out = scratch.path("python-right");
    assert!(oracle_open(&from_cryptadm, &right, &out, "auto").status.success());
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&plaintext).unwrap());
    let out = scratch.path("cryptadm-right");
    assert!(cryptadm_open(&from_python, Some(&right), &out).status.success());
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&plaintext).unwrap());
}
