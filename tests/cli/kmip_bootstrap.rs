//! The built-in `kmip` bootstrap provider against the real PyKMIP server (`support_kmip`, one per test run):
//! PyKMIP's client makes the AES key and is the oracle for the wrapped passphrase (it Decrypts what `seal`
//! recorded, and Encrypts a passphrase the Python envelope implementation seals with); the independent Python
//! opener (tests/interop/machineadm_oracle.py) opens what we seal. Refusals: a client the server does not trust or
//! that does not own the key → 16 and nothing written, an unknown key → 5, a revoked key → 16 and a destroyed one
//! → 5, each with a hint.

use crate::support::{Scratch, cryptadm};
use crate::support_kmip::{Identity, Kmip, s, server};
use base64::Engine as _;
use std::path::{Path, PathBuf};
use std::process::Command;

const CONFIG: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: machine-0\n";
/// The additional data the provider binds to every wrapped passphrase (docs/kmip.md).
const AAD: &[u8] = b"cryptadm bootstrap passphrase v1";

fn unique(name: &str) -> String {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("test/bootstrap-{name}-{}-{n}", std::process::id())
}

/// A fresh AES-256 key made (and activated) by PyKMIP's client.
fn pykmip_key(kmip: &Kmip, name: &str) -> String {
    kmip.oracle(&["create-aes", &unique(name)])
}

/// `cryptadm` with the KMIP settings in the environment only, as a machine gets them from its environment file,
/// with `identity` as the client certificate.
fn machine(kmip: &Kmip, identity: &Identity) -> assert_cmd::Command {
    let mut cmd = cryptadm();
    cmd.env("CRYPTADM_KMIP_SERVER", &kmip.server)
        .env("CRYPTADM_KMIP_CACERT", &kmip.ca)
        .env("CRYPTADM_KMIP_CLIENT_CERT", &identity.cert)
        .env("CRYPTADM_KMIP_CLIENT_KEY", &identity.key)
        .env_remove("CRYPTADM_PASSPHRASE")
        .env_remove("CRYPTADM_PASSPHRASE_FILE");
    cmd
}

/// `bootstrap seal --provider kmip` with the `--kmip-*` flags; `extra` adds flags.
fn seal(kmip: &Kmip, scratch: &Scratch, uri: &str, extra: &[&str]) -> std::process::Output {
    let input = scratch.write("config.yaml", CONFIG);
    cryptadm()
        .env_remove("CRYPTADM_PASSPHRASE")
        .env_remove("CRYPTADM_PASSPHRASE_FILE")
        .args(["bootstrap", "seal", "--provider", "kmip", "--passphrase-uri", uri, "--retries", "0", "--in"])
        .arg(&input)
        .args(kmip.flags())
        .args(extra)
        .output()
        .unwrap()
}

fn sealed_ok(kmip: &Kmip, scratch: &Scratch, uid: &str, extra: &[&str]) -> String {
    let output = seal(kmip, scratch, &format!("kmip://{uid}"), extra);
    assert!(output.status.success(), "seal failed: {}", stderr(&output));
    String::from_utf8(output.stdout).unwrap()
}

fn passphrase_uri(document: &str) -> String {
    document
        .lines()
        .find_map(|l| l.trim().strip_prefix("passphraseURI: "))
        .expect("a passphraseURI")
        .trim_matches(['"', '\''])
        .to_owned()
}

/// The passphrase in `uri`, decrypted by PyKMIP's client (never by cryptadm).
fn pykmip_unwrap(kmip: &Kmip, uid: &str, uri: &str) -> Vec<u8> {
    let wrapped = uri
        .strip_prefix(&format!("kmip://{uid}#kmip:v1:"))
        .unwrap_or_else(|| panic!("expected kmip://{uid}#kmip:v1:…, got {uri}"));
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(wrapped).unwrap();
    let (iv, tag, ciphertext) = (&bytes[..12], &bytes[12..28], &bytes[28..]);
    let plain = kmip.oracle(&[
        "decrypt-gcm",
        uid,
        &hex::encode(iv),
        &hex::encode(tag),
        &hex::encode(ciphertext),
        &hex::encode(AAD),
    ]);
    hex::decode(plain).unwrap()
}

fn open(mut cmd: assert_cmd::Command, scratch: &Scratch, sealed: &str, out: &Path) -> std::process::Output {
    let input = scratch.write("sealed.yaml", sealed);
    cmd.args(["bootstrap", "open", "--retries", "0", "--in"]).arg(input).arg("--out").arg(out).output().unwrap()
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn machineadm_oracle() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/machineadm_oracle.py")
}

/// The Python opener's plaintext of `sealed` with the passphrase `key`.
fn python_open(scratch: &Scratch, sealed: &str, key: &[u8]) -> String {
    let (sealed, key_file, out) =
        (scratch.write("py-sealed.yaml", sealed), scratch.write("py.key", key), scratch.path("py-opened"));
    let output = Command::new("python3")
        .arg(machineadm_oracle())
        .args(["open", "--in", &s(&sealed), "--passphrase-file", &s(&key_file), "--out", &s(&out)])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    std::fs::read_to_string(out).unwrap()
}

#[test]
fn a_key_made_by_pykmip_seals_pykmip_unwraps_python_opens_and_so_do_we() {
    let kmip = server();
    let scratch = Scratch::new();
    let uid = pykmip_key(kmip, "roundtrip");
    let sealed = sealed_ok(kmip, &scratch, &uid, &[]);
    assert!(sealed.contains("provider: kmip"), "{sealed}");
    let uri = passphrase_uri(&sealed);
    let passphrase = pykmip_unwrap(kmip, &uid, &uri);
    assert_eq!(passphrase.len(), 32, "a random 32-byte passphrase");
    assert!(!sealed.contains(&hex::encode(&passphrase)), "the passphrase is not in the document");
    assert_eq!(python_open(&scratch, &sealed, &passphrase), CONFIG);

    let out = scratch.path("opened.yaml");
    let opened = open(machine(kmip, &kmip.client), &scratch, &sealed, &out);
    assert!(opened.status.success(), "{}", stderr(&opened));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), CONFIG);

    // A second seal wraps a different passphrase under a fresh nonce.
    let again = passphrase_uri(&sealed_ok(kmip, &scratch, &uid, &[]));
    assert_ne!(again, uri);
    assert_ne!(pykmip_unwrap(kmip, &uid, &again), passphrase);
}

#[test]
fn a_given_passphrase_is_wrapped_and_what_pykmip_and_python_seal_we_open() {
    let kmip = server();
    let scratch = Scratch::new();
    let uid = pykmip_key(kmip, "given");
    let given = scratch.write("given.key", "correct horse battery staple\n");
    let sealed = sealed_ok(kmip, &scratch, &uid, &["--passphrase-file", &s(&given)]);
    assert_eq!(pykmip_unwrap(kmip, &uid, &passphrase_uri(&sealed)), b"correct horse battery staple\n");

    // PyKMIP wraps, the Python envelope seals, cryptadm opens.
    let key = b"sealed by python".to_vec();
    let parts = kmip.oracle(&["encrypt-gcm", &uid, &hex::encode(&key), &hex::encode(AAD)]);
    let parts: Vec<Vec<u8>> = parts.split(' ').map(|p| hex::decode(p).unwrap()).collect();
    let wrapped =
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode([&parts[0][..], &parts[1], &parts[2]].concat());
    let uri = format!("kmip://{uid}#kmip:v1:{wrapped}");
    let (input, key_file) = (scratch.write("theirs-plain.yaml", CONFIG), scratch.write("theirs.key", &key));
    let output = Command::new("python3")
        .arg(machineadm_oracle())
        .args(["seal", "--in", &s(&input), "--passphrase-file", &s(&key_file), "--provider", "kmip"])
        .args(["--passphrase-uri", &uri])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let out = scratch.path("theirs-opened.yaml");
    let opened = open(machine(kmip, &kmip.client), &scratch, &String::from_utf8(output.stdout).unwrap(), &out);
    assert!(opened.status.success(), "{}", stderr(&opened));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), CONFIG);
}

#[test]
fn a_client_that_is_not_trusted_or_not_the_owner_is_16_and_nothing_is_written() {
    let kmip = server();
    let scratch = Scratch::new();
    let uid = pykmip_key(kmip, "denied");
    let sealed = sealed_ok(kmip, &scratch, &uid, &[]);
    for (who, identity) in [("another client of the same CA", &kmip.other), ("a client of a rogue CA", &kmip.rogue)] {
        let out = scratch.path("denied.yaml");
        let output = open(machine(kmip, identity), &scratch, &sealed, &out);
        assert_eq!(output.status.code(), Some(16), "{who}: {}", stderr(&output));
        assert!(stderr(&output).contains("hint:"), "{who}: {}", stderr(&output));
        assert!(!out.exists(), "{who}: nothing written");
    }
}

#[test]
fn an_unknown_key_is_5_a_revoked_key_16_a_destroyed_key_5_each_with_a_hint() {
    let kmip = server();
    let scratch = Scratch::new();
    let output = seal(kmip, &scratch, "kmip://no-such-key-4711", &[]);
    assert_eq!(output.status.code(), Some(5), "{}", stderr(&output));
    assert!(stderr(&output).contains("hint:") && output.stdout.is_empty(), "{}", stderr(&output));

    let uid = pykmip_key(kmip, "retired");
    let sealed = sealed_ok(kmip, &scratch, &uid, &[]);
    let out = scratch.path("retired.yaml");
    kmip.oracle(&["revoke", &uid]);
    let output = open(machine(kmip, &kmip.client), &scratch, &sealed, &out);
    assert_eq!(output.status.code(), Some(16), "{}", stderr(&output));
    assert!(stderr(&output).contains("Active state") && stderr(&output).contains("not revoked"), "{}", stderr(&output));
    kmip.oracle(&["destroy", &uid]);
    let output = open(machine(kmip, &kmip.client), &scratch, &sealed, &out);
    assert_eq!(output.status.code(), Some(5), "{}", stderr(&output));
    assert!(stderr(&output).contains("hint:"), "{}", stderr(&output));
    assert!(!out.exists(), "nothing written");
}

#[test]
fn usage_errors_no_server_is_2_and_a_uri_without_the_wrapped_passphrase_is_3() {
    let kmip = server();
    let scratch = Scratch::new();
    let input = scratch.write("config.yaml", CONFIG);
    let output = cryptadm()
        .env_remove("CRYPTADM_KMIP_SERVER")
        .args(["bootstrap", "seal", "--provider", "kmip", "--passphrase-uri", "kmip://1", "--in"])
        .arg(&input)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("--kmip-server"), "{}", stderr(&output));

    let output = seal(kmip, &scratch, "kmip://1#kmip:v1:AAAA", &[]);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));

    let uid = pykmip_key(kmip, "truncated");
    let sealed = sealed_ok(kmip, &scratch, &uid, &[]);
    let cut = sealed.replace(&passphrase_uri(&sealed), &format!("kmip://{uid}"));
    let out = scratch.path("cut.yaml");
    let output = open(machine(kmip, &kmip.client), &scratch, &cut, &out);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    assert!(!out.exists());
}
