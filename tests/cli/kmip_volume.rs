//! `volume rotate` with `kmip://` key stores on the real PyKMIP server (tests/cli/support_kmip.rs), LUKS images
//! made by cryptsetup and checked with `cryptsetup open --test-passphrase`, PyKMIP's client as the oracle (it
//! seeds `PREFIX/ID/current` and reads back what is stored); `--key-wrap kmip://UID` checked by Python's
//! `cryptography` with the key's bytes; every fault-injection crash point; two nodes rotating one volume.

use crate::support::{Scratch, cryptadm};
use crate::support_kmip::{Kmip, server};
use crate::support_luks::{LuksImage, cryptsetup};
use base64::Engine as _;
use std::path::PathBuf;
use std::process::Command;

const OLD_KEY: &str = "old volume passphrase";
const PREFIX: &str = "cryptadm";
/// The AES key the wrapped tests register (its bytes known to the test, so Python can check the wrapped values).
const WRAP_KEY: [u8; 32] = [0x42; 32];

/// A LUKS image whose passphrases live under `PREFIX/ID/…` on the KMIP server.
struct Volume(LuksImage);

impl std::ops::Deref for Volume {
    type Target = LuksImage;
    fn deref(&self) -> &LuksImage {
        &self.0
    }
}

impl Volume {
    fn new(tag: &str, iterations: u32) -> Self {
        Self(LuksImage::new(tag, OLD_KEY, iterations))
    }

    fn name(&self, slot: &str) -> String {
        format!("{PREFIX}/{}/{slot}", self.id)
    }

    fn rotate(&self, kmip: &Kmip, extra: &[&str]) -> assert_cmd::Command {
        let mut cmd = cryptadm();
        cmd.env("CRYPTADM_RUN_DIR", self.scratch.path("run"))
            .args(["volume", "rotate", "--volume-id", &self.id, "--volume-path"])
            .arg(&self.image)
            .args(["--key-store", &format!("kmip://{PREFIX}")])
            .args(kmip.flags())
            .args(extra);
        cmd
    }
}

/// The values of every object named `name`, read by PyKMIP.
fn values(kmip: &Kmip, name: &str) -> Vec<Vec<u8>> {
    let uids = kmip.oracle(&["locate", name]);
    uids.lines().map(|uid| hex::decode(kmip.oracle(&["get", uid.trim()])).unwrap()).collect()
}

/// `key` as cryptadm's `kmip:v1:` value, made by Python's cryptography with [`WRAP_KEY`].
fn python_wrap(key: &[u8]) -> Vec<u8> {
    let output = Command::new("python3")
        .args([
            "-c",
            "import sys,os,base64; from cryptography.hazmat.primitives.ciphers.aead import AESGCM as G; \
             k=bytes.fromhex(sys.argv[1]); iv=os.urandom(12); ct=G(k).encrypt(iv, bytes.fromhex(sys.argv[2]), \
             b'cryptadm volume key v1'); \
             print('kmip:v1:'+base64.urlsafe_b64encode(iv+ct[-16:]+ct[:-16]).decode().rstrip('='))",
            &hex::encode(WRAP_KEY),
            &hex::encode(key),
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap().trim().as_bytes().to_vec()
}

/// A `kmip:v1:` value opened by Python's cryptography with [`WRAP_KEY`].
fn python_unwrap(value: &[u8]) -> Vec<u8> {
    let text = std::str::from_utf8(value).unwrap().strip_prefix("kmip:v1:").expect("a kmip:v1: value");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(text).unwrap();
    let output = Command::new("python3")
        .args([
            "-c",
            "import sys; from cryptography.hazmat.primitives.ciphers.aead import AESGCM as G; \
             k,iv,t,ct=[bytes.fromhex(a) for a in sys.argv[1:5]]; \
             print(G(k).decrypt(iv, ct+t, b'cryptadm volume key v1').hex())",
            &hex::encode(WRAP_KEY),
            &hex::encode(&bytes[..12]),
            &hex::encode(&bytes[12..28]),
            &hex::encode(&bytes[28..]),
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    hex::decode(String::from_utf8(output.stdout).unwrap().trim()).unwrap()
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The wrap key, registered once per test run by PyKMIP (activated, Encrypt|Decrypt).
fn wrap_uid(kmip: &Kmip) -> &'static str {
    static UID: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    UID.get_or_init(|| kmip.oracle(&["register-aes", "test/volume-wrap", &hex::encode(WRAP_KEY)]))
}

/// Seeds `current` (wrapped when `wrapped`) with PyKMIP; returns the `--key-wrap` flags.
fn seed(kmip: &Kmip, volume: &Volume, wrapped: bool) -> Vec<String> {
    let value = if wrapped { python_wrap(OLD_KEY.as_bytes()) } else { OLD_KEY.as_bytes().to_vec() };
    kmip.oracle(&["register-password", &volume.name("current"), &hex::encode(value)]);
    if wrapped { vec!["--key-wrap".into(), format!("kmip://{}", wrap_uid(kmip))] } else { Vec::new() }
}

/// The stored keys of `slot`, unwrapped by Python when `wrapped`.
fn keys(kmip: &Kmip, volume: &Volume, slot: &str, wrapped: bool) -> Vec<Vec<u8>> {
    values(kmip, &volume.name(slot)).iter().map(|v| if wrapped { python_unwrap(v) } else { v.clone() }).collect()
}

#[test]
fn a_volume_seeded_by_pykmip_is_rotated_and_its_new_key_opens_it() {
    let kmip = server();
    for wrapped in [false, true] {
        let volume = Volume::new("rotate", 1000);
        let extra = seed(kmip, &volume, wrapped);
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        let output = volume.rotate(kmip, &extra).output().unwrap();
        assert!(output.status.success(), "wrapped={wrapped}: {}", stderr(&output));
        let current = keys(kmip, &volume, "current", wrapped);
        assert_eq!(current.len(), 1, "wrapped={wrapped}: one current object");
        assert_ne!(current[0], OLD_KEY.as_bytes());
        assert!(volume.opens(&current[0]), "wrapped={wrapped}: the new stored key opens the volume");
        assert!(!volume.opens(OLD_KEY.as_bytes()), "wrapped={wrapped}: the old key's keyslot is gone");
        assert!(values(kmip, &volume.name("pending")).is_empty() && values(kmip, &volume.name("previous")).is_empty());
        if wrapped {
            let raw = &values(kmip, &volume.name("current"))[0];
            assert!(raw.starts_with(b"kmip:v1:"), "only wrapped values are stored");
        }
    }
}

#[test]
fn kmip_store_errors_no_key_5_no_server_2_plain_value_under_key_wrap_3() {
    let kmip = server();
    let volume = Volume::new("errors", 1000);
    let output = volume.rotate(kmip, &[]).output().unwrap();
    assert_eq!(output.status.code(), Some(5), "{}", stderr(&output));
    let output = cryptadm()
        .env("CRYPTADM_RUN_DIR", volume.scratch.path("run"))
        .args(["volume", "rotate", "--volume-id", &volume.id, "--volume-path"])
        .arg(&volume.image)
        .args(["--key-store", "kmip://cryptadm"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("--kmip-server"), "{}", stderr(&output));
    seed(kmip, &volume, false);
    let wrap = format!("kmip://{}", wrap_uid(kmip));
    let output = volume.rotate(kmip, &["--key-wrap", &wrap]).output().unwrap();
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    assert!(volume.opens(OLD_KEY.as_bytes()));
}

#[test]
fn two_nodes_rotating_one_volume_one_wins_the_other_exits_10() {
    let kmip = server();
    let node_a = Volume::new("race", 400_000);
    let node_b = Scratch::new();
    let image_b = node_b.path("volume.img");
    std::fs::copy(&node_a.image, &image_b).unwrap();
    seed(kmip, &node_a, false);
    let spawn = |image: &PathBuf, run: PathBuf| {
        Command::new(assert_cmd::cargo::cargo_bin("cryptadm"))
            .env("CRYPTADM_RUN_DIR", run)
            .env("NO_COLOR", "1")
            .args(["volume", "rotate", "--volume-id", &node_a.id, "--volume-path"])
            .arg(image)
            .args(["--key-store", &format!("kmip://{PREFIX}")])
            .args(kmip.flags())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let a = spawn(&node_a.image, node_a.scratch.path("run"));
    let b = spawn(&image_b, node_b.path("run"));
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    let codes = [a.status.code(), b.status.code()];
    assert!(codes.contains(&Some(0)) && codes.contains(&Some(10)), "{codes:?}\n{}\n{}", stderr(&a), stderr(&b));
    let (winner_image, loser) = if a.status.success() { (&node_a.image, &b) } else { (&image_b, &a) };
    assert!(stderr(loser).contains("another rotation"), "{}", stderr(loser));
    let current = keys(kmip, &node_a, "current", false);
    assert_eq!(current.len(), 1);
    let probe = node_b.write("probe.key", &current[0]);
    let opens = cryptsetup(&[
        "open",
        "--test-passphrase",
        "--key-file",
        probe.to_str().unwrap(),
        winner_image.to_str().unwrap(),
    ]);
    assert!(opens.status.success(), "the stored key does not open the winner's volume");
    assert!(values(kmip, &node_a.name("pending")).is_empty());
}

/// Every crash point of the fault-injection build against `kmip://`, plain and wrapped: after the crash EVERY
/// object named `current` opens the volume; a rerun completes the rotation and leaves one current object only.
#[test]
#[cfg_attr(not(feature = "fault-injection"), ignore = "needs `--features fault-injection` (.ci/run runs it)")]
fn volume_faults_kmip_every_crash_point_recovers() {
    let kmip = server();
    let mut crashes = 0;
    for wrapped in [false, true] {
        for step in cryptadm::volume::Step::ALL {
            let volume = Volume::new("fault", 1000);
            let extra = seed(kmip, &volume, wrapped);
            let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
            let output = volume.rotate(kmip, &extra).env("CRYPTADM_FAULT_POINT", step.name()).output().unwrap();
            assert_eq!(output.status.code(), None, "{step}: the process did not crash: {}", stderr(&output));
            crashes += 1;
            for key in keys(kmip, &volume, "current", wrapped) {
                assert!(
                    volume.opens(&key),
                    "wrapped={wrapped} after a crash at {step}: a stored current key opens nothing"
                );
            }
            let output = volume.rotate(kmip, &extra).output().unwrap();
            assert!(output.status.success(), "wrapped={wrapped} rerun after {step}: {}", stderr(&output));
            let current = keys(kmip, &volume, "current", wrapped);
            assert_eq!(current.len(), 1, "{step}");
            assert_ne!(current[0], OLD_KEY.as_bytes());
            assert!(volume.opens(&current[0]) && !volume.opens(OLD_KEY.as_bytes()), "wrapped={wrapped} {step}");
            assert!(values(kmip, &volume.name("pending")).is_empty(), "{step}");
            assert!(values(kmip, &volume.name("previous")).is_empty(), "{step}");
        }
    }
    assert_eq!(crashes, 2 * cryptadm::volume::Step::ALL.len());
}
