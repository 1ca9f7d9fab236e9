//! `cryptadm volume rotate` and `volume serve` against cryptsetup as the oracle: volumes made by
//! `cryptsetup luksFormat` (LUKS1, LUKS2 with pbkdf2 or argon2id, keyslots other than 0, a token), checked after
//! rotation with `cryptsetup open --test-passphrase` and `luksDump --dump-volume-key`, both header copies, byte
//! identity where nothing may change, a fault-injection sweep over every crash point, and concurrency.

use crate::support::{Scratch, cryptadm, cryptadm_process, require_tool};
use crate::support_aws::Moto;
use std::path::{Path, PathBuf};
use std::process::Command;

const OLD_KEY: &str = "old passphrase";
const RECOVERY_KEY: &str = "recovery passphrase";

#[derive(Clone, Copy, Debug)]
enum Format {
    Luks1,
    Luks2Pbkdf2,
    Luks2Argon2id,
}

fn cryptsetup(args: &[&str]) -> std::process::Output {
    require_tool("cryptsetup", "apt-get install cryptsetup-bin");
    Command::new("cryptsetup").args(args).output().expect("run cryptsetup")
}

fn ok(output: std::process::Output, what: &str) -> String {
    assert!(output.status.success(), "{what} failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn kdf_args(format: Format) -> Vec<&'static str> {
    match format {
        Format::Luks1 => vec!["--type", "luks1", "--hash", "sha256", "--pbkdf-force-iterations", "1000"],
        Format::Luks2Pbkdf2 => {
            vec!["--type", "luks2", "--pbkdf", "pbkdf2", "--hash", "sha256", "--pbkdf-force-iterations", "1000"]
        }
        Format::Luks2Argon2id => vec![
            "--type",
            "luks2",
            "--pbkdf",
            "argon2id",
            "--pbkdf-force-iterations",
            "4",
            "--pbkdf-memory",
            "32",
            "--pbkdf-parallel",
            "1",
        ],
    }
}

/// A test volume: an image made by cryptsetup, a key store holding its passphrase, and a lock directory.
struct Volume {
    scratch: Scratch,
    image: PathBuf,
    id: String,
    format: Format,
    /// The AWS API whose KMS key wraps every stored value (`--key-wrap aws-kms://…`), if any.
    aws: Option<&'static Moto>,
}

impl Volume {
    /// The old key in keyslot `slot`, a recovery key in keyslot 5, and (LUKS2) a token bound to the recovery slot.
    fn new(format: Format, id: &str, slot: u32) -> Self {
        let scratch = Scratch::new();
        let image = scratch.path("volume.img");
        let size = if matches!(format, Format::Luks1) { 4 } else { 20 };
        std::fs::File::create(&image).unwrap().set_len(size << 20).unwrap();
        let old = scratch.write("old.key", OLD_KEY);
        let slot_arg = slot.to_string();
        let mut args = vec!["luksFormat", "--batch-mode", "--key-slot", &slot_arg, "--key-file"];
        let (old_str, image_str) = (old.to_str().unwrap(), image.to_str().unwrap());
        args.extend([old_str, image_str]);
        args.extend(kdf_args(format));
        ok(cryptsetup(&args), "luksFormat");
        let recovery = scratch.write("recovery.key", RECOVERY_KEY);
        let mut add = vec!["luksAddKey", "--batch-mode", "--key-file", old_str, "--key-slot", "5", image_str];
        add.push(recovery.to_str().unwrap());
        add.extend(kdf_args(format).into_iter().filter(|a| *a != "luks1" && *a != "luks2" && *a != "--type"));
        ok(cryptsetup(&add), "luksAddKey");
        if !matches!(format, Format::Luks1) {
            let token = r#"{"type":"cryptadm-test","keyslots":["5"],"note":"kept"}"#;
            let mut child = Command::new("cryptsetup")
                .args(["token", "import", "--token-id", "2", image_str])
                .stdin(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            use std::io::Write;
            child.stdin.take().unwrap().write_all(token.as_bytes()).unwrap();
            assert!(child.wait().unwrap().success(), "token import");
        }
        let volume = Self { scratch, image, id: id.to_owned(), format, aws: None };
        std::fs::create_dir_all(volume.entry("current").parent().unwrap()).unwrap();
        std::fs::write(volume.entry("current"), OLD_KEY).unwrap();
        volume
    }

    fn store_dir(&self) -> PathBuf {
        self.scratch.path("keys")
    }

    fn store_uri(&self) -> String {
        format!("file://{}", self.store_dir().display())
    }

    fn entry(&self, name: &str) -> PathBuf {
        self.store_dir().join(store_name(&self.id)).join(name)
    }

    /// The store's keys wrapped by `aws`'s KMS key: the current one seeded as the AWS CLI writes it (boto3
    /// Encrypt, base64 and a newline).
    fn wrapped_by_aws(mut self, aws: &'static Moto) -> Self {
        std::fs::write(self.entry("current"), aws.encrypt(&self.scratch, OLD_KEY.as_bytes())).unwrap();
        self.aws = Some(aws);
        self
    }

    fn current_key(&self) -> Vec<u8> {
        self.stored_key("current").expect("the store has a current key")
    }

    /// The passphrase the store keeps as `name` (`current`, `pending`, `previous`), unwrapped by boto3 when the
    /// store is wrapped (so a value that is not a KMS blob fails the test).
    fn stored_key(&self, name: &str) -> Option<Vec<u8>> {
        let stored = std::fs::read(self.entry(name)).ok()?;
        Some(match self.aws {
            Some(aws) => aws.decrypt(&self.scratch, &stored),
            None => stored,
        })
    }

    fn rotate(&self) -> assert_cmd::Command {
        self.rotate_process().into()
    }

    fn rotate_process(&self) -> Command {
        let mut cmd = cryptadm_process();
        cmd.env("CRYPTADM_RUN_DIR", self.scratch.path("run"))
            .args(["volume", "rotate", "--volume-id", &self.id, "--volume-path"])
            .arg(&self.image)
            .args(["--key-store", &self.store_uri()]);
        if let Some(aws) = self.aws {
            aws.process_env_with(&mut cmd, &aws.admin);
            cmd.args(["--key-wrap", &format!("aws-kms://{}", aws.key)]);
        }
        cmd
    }

    /// A rotation that dies just after `step`: aborted by the fault-injection build, or (`kill -9`) held there
    /// (CRYPTADM_FAULT_WAIT) until the test sees the step done and sends SIGKILL. Its status and stderr.
    fn crash_after(&self, step: cryptadm::volume::Step, crash: Crash) -> (std::process::ExitStatus, String) {
        let mut command = self.rotate_process();
        command.env("CRYPTADM_FAULT_POINT", step.name());
        match crash {
            Crash::Abort => {
                let output = command.output().unwrap();
                (output.status, stderr_of(&output))
            }
            Crash::Kill9 => {
                use std::io::BufRead as _;
                let never = self.scratch.path("never-released");
                let mut child = command
                    .arg("--verbose")
                    .env("CRYPTADM_FAULT_WAIT", &never)
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap();
                let mut seen = String::new();
                let done = format!("step done: {step}");
                for line in std::io::BufReader::new(child.stderr.take().unwrap()).lines() {
                    let line = line.unwrap();
                    seen.push_str(&line);
                    seen.push('\n');
                    if line == done {
                        child.kill().unwrap(); // SIGKILL
                        break;
                    }
                }
                (child.wait().unwrap(), seen)
            }
        }
    }

    /// Whether `key` opens the volume (cryptsetup's own check).
    fn opens(&self, key: &[u8]) -> bool {
        let file = self.scratch.write("probe.key", key);
        cryptsetup(&["open", "--test-passphrase", "--key-file", file.to_str().unwrap(), self.image.to_str().unwrap()])
            .status
            .success()
    }

    fn volume_key(&self, key: &[u8]) -> String {
        let file = self.scratch.write("dump.key", key);
        let out = ok(
            cryptsetup(&[
                "luksDump",
                "--dump-volume-key",
                "--batch-mode",
                "--key-file",
                file.to_str().unwrap(),
                self.image.to_str().unwrap(),
            ]),
            "luksDump --dump-volume-key",
        );
        let at = out.find("MK dump:").expect("a volume key dump");
        out[at..].split_whitespace().collect()
    }

    fn dump(&self) -> String {
        ok(cryptsetup(&["luksDump", self.image.to_str().unwrap()]), "luksDump")
    }

    fn bytes(&self) -> Vec<u8> {
        std::fs::read(&self.image).unwrap()
    }

    /// cryptsetup reads the header without repairing anything, and (LUKS2) the secondary copy alone is valid.
    fn assert_headers_valid(&self, key: &[u8]) {
        let before = self.bytes();
        self.dump();
        assert!(self.opens(key));
        assert!(before == self.bytes(), "cryptsetup changed the image while reading it: a header copy was bad");
        if !matches!(self.format, Format::Luks1) {
            let copy = self.scratch.path("secondary-only.img");
            let mut bytes = before.clone();
            bytes[..4096].fill(0);
            std::fs::write(&copy, bytes).unwrap();
            let file = self.scratch.write("copy.key", key);
            let out = cryptsetup(&[
                "open",
                "--test-passphrase",
                "--key-file",
                file.to_str().unwrap(),
                copy.to_str().unwrap(),
            ]);
            assert!(out.status.success(), "the secondary header alone: {}", String::from_utf8_lossy(&out.stderr));
        }
    }
}

/// The file store's name for a volume id, written out from its documentation (docs/volume.md, "Key stores"):
/// bytes outside `[A-Za-z0-9._-]` and a leading `.` as `%XX`; past 250 bytes, the first 120 (never cutting an
/// escape), `~` and the SHA-256 of the id in hex.
fn store_name(id: &str) -> String {
    use sha2::Digest;
    let mut name = String::new();
    for (index, byte) in id.bytes().enumerate() {
        if byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-' || (byte == b'.' && index > 0) {
            name.push(byte as char);
        } else {
            name.push_str(&format!("%{byte:02X}"));
        }
    }
    if name.len() <= 250 {
        return name;
    }
    let mut cut = 120;
    while let Some(percent) = name[..cut].rfind('%').filter(|p| p + 3 > cut) {
        cut = percent;
    }
    format!("{}~{}", &name[..cut], hex::encode(sha2::Sha256::digest(id.as_bytes())))
}

/// The keyslots `cryptsetup luksDump` lists as active (LUKS1 `Key Slot N: ENABLED`, LUKS2 `  N: luks2`).
pub(crate) fn active_keyslots(image: &Path) -> Vec<u32> {
    let dump = ok(cryptsetup(&["luksDump", image.to_str().unwrap()]), "luksDump");
    dump.lines()
        .filter_map(|line| {
            let luks1 = line.strip_prefix("Key Slot ").and_then(|l| l.strip_suffix(": ENABLED"));
            let luks2 = line.strip_prefix("  ").and_then(|l| l.strip_suffix(": luks2"));
            luks1.or(luks2)?.trim().parse().ok()
        })
        .collect()
}

fn stderr_of(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// How the sweep's runs die at a crash point.
#[derive(Clone, Copy, Debug)]
enum Crash {
    /// The fault-injection build aborts there.
    Abort,
    /// `kill -9` while the run waits there, as the OOM killer or a node's power loss would end it.
    Kill9,
}

fn check_rotated(volume: &Volume, volume_key_before: &str) -> Vec<u8> {
    // cryptsetup silently repairs a bad header copy on any access: take the bytes cryptadm wrote before the first
    // cryptsetup command, and require them unchanged after the last.
    let written = volume.bytes();
    let new = volume.current_key();
    assert_ne!(new, OLD_KEY.as_bytes());
    assert!(volume.opens(&new), "the new key does not open the volume");
    assert!(!volume.opens(OLD_KEY.as_bytes()), "the old key still opens the volume");
    assert!(volume.opens(RECOVERY_KEY.as_bytes()), "the recovery keyslot was lost");
    assert_eq!(volume.volume_key(&new), volume_key_before, "the volume key changed");
    assert!(!volume.entry("pending").exists() && !volume.entry("previous").exists());
    volume.assert_headers_valid(&new);
    assert!(written == volume.bytes(), "cryptsetup changed the image while reading it: a header copy was bad");
    new
}

#[test]
fn rotate_luks2_argon2id_generates_a_text_key_and_keeps_kdf_cost_other_slots_and_token() {
    let volume = Volume::new(Format::Luks2Argon2id, "pvc-argon", 3);
    let volume_key = volume.volume_key(OLD_KEY.as_bytes());
    let output = volume.rotate().output().unwrap();
    assert!(output.status.success(), "{}", stderr_of(&output));
    assert!(stderr_of(&output).contains("removed keyslot(s) 3"), "{}", stderr_of(&output));
    let new = check_rotated(&volume, &volume_key);
    assert_eq!(new.len(), 44, "base64 of 32 bytes");
    assert!(new.iter().all(u8::is_ascii_graphic));
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(volume.entry("current")).unwrap().permissions().mode() & 0o777, 0o600);
    let dump = volume.dump();
    assert!(dump.contains("cryptadm-test"), "the token is gone:\n{dump}");
    assert!(!dump.contains("\n  3: luks2"), "keyslot 3 is still there:\n{dump}");
    assert!(dump.contains("\n  0: luks2"), "the new key is not in keyslot 0:\n{dump}");
    let slot0 = &dump[dump.find("\n  0: luks2").unwrap()..dump.find("\n  5: luks2").unwrap()];
    for expected in ["PBKDF:      argon2id", "Time cost:  4", "Memory:     32", "Threads:    1"] {
        assert!(slot0.contains(expected), "new keyslot lacks `{expected}`:\n{slot0}");
    }
}

#[test]
fn rotate_luks2_pbkdf2_with_a_chosen_key_then_a_rerun_changes_nothing() {
    let volume = Volume::new(Format::Luks2Pbkdf2, "pvc-pbkdf2", 7);
    let volume_key = volume.volume_key(OLD_KEY.as_bytes());
    let chosen = volume.scratch.write("chosen.key", "chosen passphrase");
    let output = volume.rotate().arg("--new-key-file").arg(&chosen).output().unwrap();
    assert!(output.status.success(), "{}", stderr_of(&output));
    assert_eq!(check_rotated(&volume, &volume_key), b"chosen passphrase");
    let dump = volume.dump();
    let slot0 = &dump[dump.find("\n  0: luks2").unwrap()..dump.find("\n  5: luks2").unwrap()];
    for expected in ["PBKDF:      pbkdf2", "Hash:       sha256", "Iterations: 1000"] {
        assert!(slot0.contains(expected), "new keyslot lacks `{expected}`:\n{slot0}");
    }
    let before = volume.bytes();
    let again = volume.rotate().arg("--new-key-file").arg(&chosen).output().unwrap();
    assert!(again.status.success(), "{}", stderr_of(&again));
    assert!(stderr_of(&again).contains("already current"), "{}", stderr_of(&again));
    assert!(before == volume.bytes(), "a rerun with the current key changed the volume");
}

#[test]
fn rotate_luks1_from_a_request_on_standard_input() {
    let volume = Volume::new(Format::Luks1, "pvc/luks1", 2);
    let volume_key = volume.volume_key(OLD_KEY.as_bytes());
    let request = serde_json::json!({
        "volume_id": volume.id,
        "volume_path": volume.image,
        "parameters": {"ignored": "by the file store"},
        "secrets": {"token": "not-for-logs"},
        "volume_capability": {"block": {}, "access_mode": {"mode": 1}},
    });
    let output = cryptadm()
        .env("CRYPTADM_RUN_DIR", volume.scratch.path("run"))
        .args(["volume", "rotate", "--request", "-", "--key-store", &volume.store_uri()])
        .write_stdin(request.to_string())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr_of(&output));
    assert!(!stderr_of(&output).contains("not-for-logs"));
    // The id has a `/`: the file store keeps it as one escaped directory name.
    let written = volume.bytes();
    let new = std::fs::read(volume.store_dir().join("pvc%2Fluks1/current")).unwrap();
    assert!(volume.opens(&new) && !volume.opens(OLD_KEY.as_bytes()) && volume.opens(RECOVERY_KEY.as_bytes()));
    assert_eq!(volume.volume_key(&new), volume_key);
    volume.assert_headers_valid(&new);
    assert!(written == volume.bytes(), "cryptsetup changed the image while reading it");
}

#[test]
fn a_wrong_stored_key_exits_16_and_leaves_the_volume_byte_identical() {
    let volume = Volume::new(Format::Luks2Pbkdf2, "pvc-wrong", 1);
    std::fs::write(volume.entry("current"), "not the passphrase").unwrap();
    let before = volume.bytes();
    let output = volume.rotate().output().unwrap();
    assert_eq!(output.status.code(), Some(16), "{}", stderr_of(&output));
    let stderr = stderr_of(&output);
    assert!(stderr.contains("error: rotating the key of volume `pvc-wrong`: no keyslot"), "{stderr}");
    assert!(stderr.contains("hint:"), "{stderr}");
    assert!(!stderr.contains("not the passphrase"), "{stderr}");
    assert!(before == volume.bytes(), "the volume changed");
    assert!(!volume.entry("pending").exists(), "a pending key was recorded for a volume the key does not open");
}

#[test]
fn a_missing_volume_exits_5_and_a_missing_stored_key_exits_5() {
    let volume = Volume::new(Format::Luks1, "pvc-missing", 0);
    let output = cryptadm()
        .env("CRYPTADM_RUN_DIR", volume.scratch.path("run"))
        .args(["volume", "rotate", "--volume-id", "pvc-missing", "--volume-path"])
        .arg(volume.scratch.path("no-such.img"))
        .args(["--key-store", &volume.store_uri()])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(5), "{}", stderr_of(&output));
    assert!(stderr_of(&output).contains("no-such.img` does not exist"), "{}", stderr_of(&output));

    let before = volume.bytes();
    let output = cryptadm()
        .env("CRYPTADM_RUN_DIR", volume.scratch.path("run"))
        .args(["volume", "rotate", "--volume-id", "pvc-unknown", "--volume-path"])
        .arg(&volume.image)
        .args(["--key-store", &volume.store_uri()])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(5), "{}", stderr_of(&output));
    assert!(stderr_of(&output).contains("the key store has no key for volume `pvc-unknown`"), "{}", stderr_of(&output));
    assert!(before == volume.bytes());

    // Not a LUKS volume at all: invalid input, and the file is left as it was.
    let plain = volume.scratch.write("plain.img", vec![0u8; 1 << 20]);
    let output = cryptadm()
        .env("CRYPTADM_RUN_DIR", volume.scratch.path("run"))
        .args(["volume", "rotate", "--volume-id", "pvc-missing", "--volume-path"])
        .arg(&plain)
        .args(["--key-store", &volume.store_uri()])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3), "{}", stderr_of(&output));
    assert!(stderr_of(&output).contains("not a LUKS device"), "{}", stderr_of(&output));
    assert!(std::fs::read(&plain).unwrap() == vec![0u8; 1 << 20]);
}

#[test]
fn malformed_requests_exit_3_without_echoing_secrets_and_change_nothing() {
    let volume = Volume::new(Format::Luks2Pbkdf2, "pvc-bad", 0);
    let before = volume.bytes();
    let cases = [
        ("{\"volume_id\": ", "not valid JSON at line 1"),
        ("{\"volume_path\": \"/x\", \"secrets\": {\"t\": \"s3cr3t-value\"}}", "the request has no `volume_id`"),
        (r#"{"volume_id": "pvc-bad", "encryption_key": ["s3cr3t-value"]}"#, "not a request object"),
        (r#"{"volume_id": "pvc-bad", "volume_pth": "/x"}"#, "not a request object"),
    ];
    for (request, expected) in cases {
        let output = cryptadm()
            .env("CRYPTADM_RUN_DIR", volume.scratch.path("run"))
            .args(["volume", "rotate", "--request", "-", "--key-store", &volume.store_uri()])
            .write_stdin(request)
            .output()
            .unwrap();
        let stderr = stderr_of(&output);
        assert_eq!(output.status.code(), Some(3), "{request}: {stderr}");
        assert!(stderr.contains(expected) && stderr.contains("hint:"), "{request}: {stderr}");
        assert!(!stderr.contains("s3cr3t"), "{stderr}");
    }
    assert!(before == volume.bytes());
    assert_eq!(volume.current_key(), OLD_KEY.as_bytes());
}

/// A key-store plugin (the exec contract of `volume rotate --help`) over a directory, slow enough in `get` that
/// concurrent callers overlap with the one holding the lock.
const SLOW_PLUGIN: &str = r#"#!/usr/bin/env python3
import base64, json, os, sys, time
verb = sys.argv[1]
request = json.load(sys.stdin)
root = request["uri"].split(":", 1)[1]
entry = os.path.join(root, request["volume_id"])
def read(name):
    try:
        with open(os.path.join(entry, name), "rb") as f:
            return base64.b64encode(f.read()).decode()
    except FileNotFoundError:
        return None
def write(name, data):
    os.makedirs(entry, exist_ok=True)
    with open(os.path.join(entry, name + ".tmp"), "wb") as f:
        f.write(data)
    os.replace(os.path.join(entry, name + ".tmp"), os.path.join(entry, name))
if request["secrets"].get("token") != "let-me-in":
    print("token rejected", file=sys.stderr); sys.exit(16)
if verb == "get":
    # The barrier of the race test: hold the volume's lock until the test says every rival has given up.
    release = request["parameters"].get("release")
    deadline = time.time() + 60
    while release and not os.path.exists(release) and time.time() < deadline:
        time.sleep(0.01)
    if read("current") is None:
        sys.exit(5)
    print(json.dumps({"current": read("current"), "pending": read("pending"), "previous": read("previous")}))
elif verb == "put-pending":
    write("pending", base64.b64decode(request["passphrase"]))
elif verb == "commit":
    new = base64.b64decode(request["passphrase"])
    if read("pending") is not None and base64.b64decode(read("pending")) == new:
        write("previous", base64.b64decode(read("current")))
        os.replace(os.path.join(entry, "pending"), os.path.join(entry, "current"))
elif verb == "forget-previous":
    if os.path.exists(os.path.join(entry, "previous")):
        os.remove(os.path.join(entry, "previous"))
elif verb == "claim" and os.path.exists(os.path.join(entry, "held-elsewhere")):
    # The optional claim verb: another node's claim stands (unless taken over).
    if not request["take_over"] and request["claim"]["run"]:
        print("claimed by node-b", file=sys.stderr); sys.exit(10)
else:
    sys.exit(3)
"#;

fn plugin_path(scratch: &Scratch) -> String {
    let bin = scratch.path("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let plugin = bin.join("cryptadm-plugin-kms-slowdir");
    std::fs::write(&plugin, SLOW_PLUGIN).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&plugin, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default())
}

/// `release`: a file whose appearance lets the plugin's `get` answer (empty: answer at once).
fn plugin_request(volume: &Volume, release: &str, token: &str) -> String {
    serde_json::json!({
        "volume_id": volume.id,
        "volume_path": volume.image,
        "parameters": {"release": release},
        "secrets": {"token": token},
    })
    .to_string()
}

#[test]
fn twenty_parallel_rotations_of_one_volume_one_succeeds_the_rest_exit_10() {
    let volume = Volume::new(Format::Luks2Pbkdf2, "pvc-race", 4);
    let volume_key = volume.volume_key(OLD_KEY.as_bytes());
    let path = plugin_path(&volume.scratch);
    let store = format!("slowdir:{}", volume.store_dir().display());
    let release = volume.scratch.path("release");
    let request = volume.scratch.write("request.json", plugin_request(&volume, release.to_str().unwrap(), "let-me-in"));
    let mut children: Vec<_> = (0..20)
        .map(|_| {
            std::process::Command::new(assert_cmd::cargo::cargo_bin("cryptadm"))
                .env("PATH", &path)
                .env("CRYPTADM_RUN_DIR", volume.scratch.path("run"))
                .env("NO_COLOR", "1")
                .args(["volume", "rotate", "--key-store", &store, "--request"])
                .arg(&request)
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    // The barrier: whichever process holds the lock waits in the plugin until the 19 others have exited.
    let start = std::time::Instant::now();
    while children.iter_mut().filter_map(|c| c.try_wait().unwrap()).count() < 19 {
        assert!(start.elapsed() < std::time::Duration::from_secs(60), "the rival rotations did not give up");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::fs::write(&release, b"").unwrap();
    let outputs: Vec<_> = children.into_iter().map(|c| c.wait_with_output().unwrap()).collect();
    let codes: Vec<_> = outputs.iter().map(|o| o.status.code()).collect();
    assert_eq!(codes.iter().filter(|c| **c == Some(0)).count(), 1, "{codes:?}");
    assert_eq!(codes.iter().filter(|c| **c == Some(10)).count(), 19, "{codes:?}");
    let busy = outputs.iter().find(|o| o.status.code() == Some(10)).unwrap();
    assert!(stderr_of(busy).contains("another operation is in progress"), "{}", stderr_of(busy));
    check_rotated(&volume, &volume_key);

    // The plugin's exit 16 (secrets rejected) is the command's exit 16, and nothing changes.
    let before = volume.bytes();
    let denied = volume.scratch.write("denied.json", plugin_request(&volume, "", "wrong"));
    let output = cryptadm()
        .env("PATH", &path)
        .env("CRYPTADM_RUN_DIR", volume.scratch.path("run"))
        .args(["volume", "rotate", "--key-store", &store, "--request"])
        .arg(&denied)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(16), "{}", stderr_of(&output));
    assert!(stderr_of(&output).contains("token rejected"), "{}", stderr_of(&output));
    assert!(before == volume.bytes());

    // A plugin with the optional `claim` verb that reports another node's claim: exit 10, nothing written.
    let entry = volume.store_dir().join(&volume.id);
    std::fs::write(entry.join("held-elsewhere"), b"").unwrap();
    let stored = std::fs::read(entry.join("current")).unwrap();
    let request = volume.scratch.write("claimed.json", plugin_request(&volume, "", "let-me-in"));
    let output = cryptadm()
        .env("PATH", &path)
        .env("CRYPTADM_RUN_DIR", volume.scratch.path("run"))
        .args(["volume", "rotate", "--key-store", &store, "--request"])
        .arg(&request)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(10), "{}", stderr_of(&output));
    assert!(stderr_of(&output).contains("claimed by node-b") && stderr_of(&output).contains("nothing was written"));
    assert!(before == volume.bytes());
    assert_eq!(std::fs::read(entry.join("current")).unwrap(), stored);
}

/// Every crash point of the fault-injection build, on LUKS1 and LUKS2, with the file store in plain (aborted there)
/// and wrapped by an AWS KMS key (`--key-wrap aws-kms://…` on moto, killed there with SIGKILL): after the crash the
/// key store's current key opens the volume; a rerun completes the rotation, leaves no keyslot behind (luksDump),
/// and the store's current key opens the volume. With the KMS wrap every stored value, at every point, is a blob
/// boto3 decrypts (nothing in plain), and boto3's plaintext is what cryptsetup opens with. Run by `.ci/run` with
/// `--features fault-injection`.
#[test]
#[cfg_attr(not(feature = "fault-injection"), ignore = "needs `--features fault-injection` (.ci/run runs it)")]
fn volume_faults_every_crash_point_recovers() {
    let mut crashes = 0;
    let runs = [(Format::Luks1, Crash::Abort, false), (Format::Luks2Argon2id, Crash::Abort, false)];
    let aws_runs = [(Format::Luks2Pbkdf2, Crash::Kill9, true)];
    for (format, crash, aws_wrapped) in runs.into_iter().chain(aws_runs) {
        let aws = aws_wrapped.then(crate::support_aws::moto);
        let _serial = aws.map(Moto::lock);
        for step in cryptadm::volume::Step::ALL {
            let mut volume = Volume::new(format, "pvc-fault", 3);
            if let Some(aws) = aws {
                volume = volume.wrapped_by_aws(aws);
            }
            let volume_key = volume.volume_key(OLD_KEY.as_bytes());
            let (status, stderr) = volume.crash_after(*step, crash);
            assert_eq!(status.code(), None, "{format:?} {crash:?} {step}: the process did not crash: {stderr}");
            crashes += 1;
            let current = volume.current_key();
            assert!(volume.opens(&current), "{format:?} after a crash at {step}: the stored key opens nothing");
            // With the wrap, boto3 decrypts each (or the test fails): the new key pending, the old one previous.
            assert!(volume.stored_key("pending").is_none_or(|key| key != OLD_KEY.as_bytes()), "{step}");
            assert!(volume.stored_key("previous").is_none_or(|key| key == OLD_KEY.as_bytes()), "{step}");
            let output = volume.rotate().output().unwrap();
            assert!(output.status.success(), "{format:?} rerun after {step}: {}", stderr_of(&output));
            let expected = if *step == cryptadm::volume::Step::Locked { "rotated" } else { "finished the interrupted" };
            if *step != cryptadm::volume::Step::PreviousForgotten {
                assert!(stderr_of(&output).contains(expected), "{format:?} rerun after {step}: {}", stderr_of(&output));
            }
            if *step == cryptadm::volume::Step::OldKeyslotWiped {
                // The crash left keyslot 3 in the header with its material destroyed: the rerun removes it.
                assert!(stderr_of(&output).contains("removed keyslot(s) 3"), "{format:?}: {}", stderr_of(&output));
            }
            // No keyslot leaked: the new key's (the lowest free id) and the recovery key's, nothing else. (After a
            // crash at the very end the rerun rotates once more, from keyslot 0 to 1.)
            let new_slot = if *step == cryptadm::volume::Step::PreviousForgotten { 1 } else { 0 };
            assert_eq!(active_keyslots(&volume.image), [new_slot, 5], "{format:?} after a crash at {step}");
            check_rotated(&volume, &volume_key);
        }
    }
    assert_eq!(crashes, (runs.len() + aws_runs.len()) * cryptadm::volume::Step::ALL.len());
}

/// `kill -9` at moments spread over a rotation with the store wrapped by AWS KMS (moto): in a KMS request, between
/// header writes, wherever it lands. After each, boto3 decrypts the stored current key into one cryptsetup opens
/// the volume with; a rerun completes the rotation and leaves the new key's keyslot and the recovery one only.
#[test]
fn kill_9_at_moments_spread_over_an_aws_kms_wrapped_rotation_recovers() {
    let aws = crate::support_aws::moto();
    let _serial = aws.lock();
    let measured = Volume::new(Format::Luks2Pbkdf2, "pvc-kill", 3).wrapped_by_aws(aws);
    let started = std::time::Instant::now();
    assert!(measured.rotate().output().unwrap().status.success());
    let whole = started.elapsed();
    let mut killed = 0;
    for eighth in [1, 3, 5] {
        let volume = Volume::new(Format::Luks2Pbkdf2, "pvc-kill", 3).wrapped_by_aws(aws);
        let volume_key = volume.volume_key(OLD_KEY.as_bytes());
        let mut child = volume.rotate_process().stderr(std::process::Stdio::null()).spawn().unwrap();
        std::thread::sleep(whole * eighth / 8);
        child.kill().unwrap(); // SIGKILL, or nothing when it has already finished
        if child.wait().unwrap().code().is_none() {
            killed += 1;
        }
        let at = format!("killed at {eighth}/8 of {whole:?}");
        assert!(volume.opens(&volume.current_key()), "{at}: the stored key opens nothing");
        let output = volume.rotate().output().unwrap();
        assert!(output.status.success(), "{at}: the rerun: {}", stderr_of(&output));
        assert_eq!(active_keyslots(&volume.image).len(), 2, "{at}: {}", volume.dump());
        assert!(active_keyslots(&volume.image).contains(&5), "{at}");
        check_rotated(&volume, &volume_key);
    }
    assert!(killed >= 2, "only {killed} of 3 runs were still going when killed (a rotation takes {whole:?})");
}

mod serve {
    use super::*;
    use cryptadm::volume::proto::encryptionkeyrotation::EncryptionKeyRotateRequest;
    use cryptadm::volume::proto::encryptionkeyrotation::encryption_key_rotation_controller_client::EncryptionKeyRotationControllerClient;
    use cryptadm::volume::proto::identity::{self, identity_client::IdentityClient};
    use tonic::Code;
    use tonic::transport::Channel;

    async fn channel(socket: PathBuf) -> Channel {
        tonic::transport::Endpoint::try_from("http://localhost")
            .unwrap()
            .connect_with_connector(tower::service_fn(move |_: tonic::transport::Uri| {
                let socket = socket.clone();
                async move {
                    let stream = tokio::net::UnixStream::connect(socket).await?;
                    Ok::<_, std::io::Error>(hyper_util::rt::TokioIo::new(stream))
                }
            }))
            .await
            .expect("connect to the server")
    }

    fn request(id: &str, path: &Path) -> EncryptionKeyRotateRequest {
        EncryptionKeyRotateRequest {
            volume_id: id.into(),
            volume_path: path.to_string_lossy().into_owned(),
            ..Default::default()
        }
    }

    /// A `volume serve` child process, killed when the test ends early.
    struct Server {
        child: Option<std::process::Child>,
        socket: PathBuf,
    }

    impl Server {
        fn start(scratch: &Scratch, store: &Path) -> Self {
            let socket = scratch.path("csi-addons.sock");
            let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("cryptadm"))
                .env("CRYPTADM_RUN_DIR", scratch.path("run"))
                .args(["volume", "serve", "--endpoint", &format!("unix://{}", socket.display())])
                .args(["--key-store", &format!("file://{}", store.display())])
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            let server = Self { child: Some(child), socket };
            for _ in 0..200 {
                if std::os::unix::net::UnixStream::connect(&server.socket).is_ok() {
                    return server;
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            panic!("the server did not start listening");
        }

        /// SIGTERM, then the exit status and what it printed.
        fn terminate(mut self) -> (std::process::ExitStatus, String) {
            use rustix::process::{Pid, Signal, kill_process};
            let mut child = self.child.take().unwrap();
            kill_process(Pid::from_child(&child), Signal::TERM).unwrap();
            let mut stderr = String::new();
            use std::io::Read;
            child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
            (child.wait().unwrap(), stderr)
        }
    }

    impl Drop for Server {
        fn drop(&mut self) {
            if let Some(mut child) = self.child.take() {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }

    #[test]
    fn identity_a_hundred_concurrent_rotations_and_every_error_code() {
        let scratch = Scratch::new();
        let store = scratch.path("keys");
        let volumes: Vec<Volume> = (0..10).map(|i| Volume::new(Format::Luks2Pbkdf2, &format!("vol-{i}"), 1)).collect();
        for volume in &volumes {
            std::fs::create_dir_all(store.join(&volume.id)).unwrap();
            std::fs::write(store.join(&volume.id).join("current"), OLD_KEY).unwrap();
        }
        let volume_keys: Vec<String> = volumes.iter().map(|v| v.volume_key(OLD_KEY.as_bytes())).collect();
        let server = Server::start(&scratch, &store);
        let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();

        let second = cryptadm()
            .args(["volume", "serve", "--endpoint", &format!("unix://{}", server.socket.display())])
            .output()
            .unwrap();
        assert_eq!(second.status.code(), Some(10), "{}", stderr_of(&second));

        runtime.block_on(async {
            let channel = channel(server.socket.clone()).await;
            let mut identity = IdentityClient::new(channel.clone());
            let info = identity.get_identity(identity::GetIdentityRequest {}).await.unwrap().into_inner();
            assert_eq!(info.name, "cryptadm.volume");
            let caps = identity.get_capabilities(identity::GetCapabilitiesRequest {}).await.unwrap().into_inner();
            let rotation =
                identity::capability::Type::EncryptionKeyRotation(identity::capability::EncryptionKeyRotation {
                    r#type: identity::capability::encryption_key_rotation::Type::Encryptionkeyrotation as i32,
                });
            assert!(caps.capabilities.iter().any(|c| c.r#type.as_ref() == Some(&rotation)), "{caps:?}");
            let probe = identity.probe(identity::ProbeRequest {}).await.unwrap().into_inner();
            assert_eq!(probe.ready, Some(true));

            let calls: Vec<_> = (0..100)
                .map(|i| {
                    let volume = &volumes[i % 10];
                    let mut client = EncryptionKeyRotationControllerClient::new(channel.clone());
                    let request = request(&volume.id, &volume.image);
                    tokio::spawn(async move { client.encryption_key_rotate(request).await.map(drop) })
                })
                .collect();
            let mut ok_per_volume = [0; 10];
            for (i, call) in calls.into_iter().enumerate() {
                match call.await.unwrap() {
                    Ok(()) => ok_per_volume[i % 10] += 1,
                    Err(status) => assert_eq!(status.code(), Code::Aborted, "call {i}: {status:?}"),
                }
            }
            assert!(ok_per_volume.iter().all(|n| *n >= 1), "{ok_per_volume:?}");

            let mut client = EncryptionKeyRotationControllerClient::new(channel.clone());
            let code = |r: Result<tonic::Response<_>, tonic::Status>| r.map(drop).unwrap_err();
            let missing = code(client.encryption_key_rotate(request("", &volumes[0].image)).await);
            assert_eq!(missing.code(), Code::InvalidArgument, "{missing:?}");
            assert!(missing.message().contains("volume_id"), "{missing:?}");
            let gone = code(client.encryption_key_rotate(request("vol-0", &scratch.path("gone.img"))).await);
            assert_eq!(gone.code(), Code::NotFound, "{gone:?}");

            let held = std::fs::File::open(&volumes[1].image).unwrap();
            rustix::fs::flock(&held, rustix::fs::FlockOperation::NonBlockingLockExclusive).unwrap();
            let busy = code(client.encryption_key_rotate(request("vol-1", &volumes[1].image)).await);
            assert_eq!(busy.code(), Code::Aborted, "{busy:?}");
            drop(held);

            let wrong = Volume::new(Format::Luks2Pbkdf2, "vol-wrong", 2);
            std::fs::create_dir_all(store.join("vol-wrong")).unwrap();
            std::fs::write(store.join("vol-wrong/current"), "wrong key").unwrap();
            let before = wrong.bytes();
            let denied = code(client.encryption_key_rotate(request("vol-wrong", &wrong.image)).await);
            assert_eq!(denied.code(), Code::Unauthenticated, "{denied:?}");
            assert!(before == wrong.bytes());

            std::fs::create_dir_all(store.join("vol-broken/current")).unwrap();
            let unknown = code(client.encryption_key_rotate(request("vol-broken", &volumes[2].image)).await);
            assert_eq!(unknown.code(), Code::Unknown, "{unknown:?}");
        });

        let (status, stderr) = server.terminate();
        assert!(status.success(), "{status:?}: {stderr}");
        assert!(!scratch.path("csi-addons.sock").exists(), "the socket file was left behind");
        for (volume, volume_key) in volumes.iter().zip(&volume_keys) {
            let written = volume.bytes();
            let current = std::fs::read(store.join(&volume.id).join("current")).unwrap();
            assert!(volume.opens(&current), "{}: the stored key opens nothing", volume.id);
            assert!(!volume.opens(OLD_KEY.as_bytes()), "{}: the old key still opens", volume.id);
            assert!(volume.opens(RECOVERY_KEY.as_bytes()), "{}", volume.id);
            assert_eq!(&volume.volume_key(&current), volume_key, "{}", volume.id);
            assert!(
                !store.join(&volume.id).join("pending").exists() && !store.join(&volume.id).join("previous").exists()
            );
            volume.assert_headers_valid(&current);
            assert!(written == volume.bytes(), "{}: cryptsetup changed the image while reading it", volume.id);
        }
    }

    /// Issue 25: a request message over the size limit is RESOURCE_EXHAUSTED, gRPC's code for it (tonic says
    /// OUT_OF_RANGE), and the server goes on serving.
    #[test]
    fn a_50_mb_request_is_resource_exhausted() {
        let scratch = Scratch::new();
        let server = Server::start(&scratch, &scratch.path("keys"));
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let channel = channel(server.socket.clone()).await;
            let mut client = EncryptionKeyRotationControllerClient::new(channel.clone());
            let mut big = request("vol-big", &scratch.path("none.img"));
            big.parameters.insert("pad".into(), "x".repeat(50_000_000));
            let status = client.encryption_key_rotate(big).await.map(drop).unwrap_err();
            assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
            let mut identity = IdentityClient::new(channel);
            assert!(identity.probe(identity::ProbeRequest {}).await.is_ok(), "the server stopped serving");
        });
    }

    #[test]
    fn endpoints_other_than_unix_sockets_are_refused() {
        let scratch = Scratch::new();
        let plain = scratch.write("not-a-socket", "x");
        for (endpoint, code) in [
            ("tcp://127.0.0.1:1".to_owned(), 3),
            ("unix://relative.sock".to_owned(), 3),
            (format!("unix://{}", plain.display()), 3),
        ] {
            let output = cryptadm().args(["volume", "serve", "--endpoint", &endpoint]).output().unwrap();
            assert_eq!(output.status.code(), Some(code), "{endpoint}: {}", stderr_of(&output));
        }
        assert_eq!(std::fs::read(&plain).unwrap(), b"x");
    }
}

/// Issue 25: the longest ids the CSI spec allows (128 bytes), escaped to three times that, rotate: the lock file
/// and the file store use a readable prefix and a hash.
#[test]
fn a_128_byte_volume_id_that_escapes_past_name_max_rotates() {
    let id = format!("pvc/{}", "a:b/".repeat(31));
    assert_eq!(id.len(), 128);
    let volume = Volume::new(Format::Luks1, &id, 0);
    let volume_key = volume.volume_key(OLD_KEY.as_bytes());
    let output = volume.rotate().output().unwrap();
    assert!(output.status.success(), "{}", stderr_of(&output));
    check_rotated(&volume, &volume_key);
    let name = store_name(&id);
    assert!(name.starts_with("pvc%2Fa%3Ab%2F") && name.len() < 200, "{name}");
    // Short ids keep the names they always had.
    assert_eq!(store_name("pvc/1"), "pvc%2F1");
}

/// Detaches a loop device when dropped.
struct Loop(String);

impl Loop {
    fn attach(image: &Path) -> Self {
        Self::attach_with(image, &[])
    }

    /// Attaches `image` with more `losetup` arguments (`-o OFFSET --sizelimit SIZE`).
    fn attach_with(image: &Path, args: &[&str]) -> Self {
        let out =
            Command::new("losetup").args(["--find", "--show"]).args(args).arg(image).output().expect("run losetup");
        assert!(out.status.success(), "losetup: {}", String::from_utf8_lossy(&out.stderr));
        Self(String::from_utf8(out.stdout).unwrap().trim().to_owned())
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
    }
}

/// Whether a process has started a child (the plugin), in any of its threads.
fn has_child(pid: u32) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|tasks| {
            tasks
                .filter_map(Result::ok)
                .any(|task| std::fs::read_to_string(task.path().join("children")).is_ok_and(|c| !c.trim().is_empty()))
        })
        .unwrap_or(false)
}

/// Issue 25: two loop devices over one image, under two volume ids, are one volume: while one rotation holds it,
/// the other is refused with exit 10 instead of rotating it too and desynchronising the key store.
#[test]
fn two_loop_devices_over_one_image_under_two_ids_do_not_rotate_at_once() {
    require_tool("losetup", "apt-get install mount");
    let volume = Volume::new(Format::Luks2Pbkdf2, "pvc-loop-a", 0);
    let (first, second) = (Loop::attach(&volume.image), Loop::attach(&volume.image));
    let path = plugin_path(&volume.scratch);
    let store = format!("slowdir:{}", volume.store_dir().display());
    let release = volume.scratch.path("release");
    let request = |id: &str, device: &str, release: &str| {
        serde_json::json!({
            "volume_id": id,
            "volume_path": device,
            "parameters": {"release": release},
            "secrets": {"token": "let-me-in"},
        })
        .to_string()
    };
    let first_request = volume.scratch.write("first.json", request("pvc-loop-a", &first.0, release.to_str().unwrap()));
    let second_request = volume.scratch.write("second.json", request("pvc-loop-b", &second.0, ""));
    let rotate = |request: &Path| {
        let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin("cryptadm"));
        command
            .env("PATH", &path)
            .env("CRYPTADM_RUN_DIR", volume.scratch.path("run"))
            .env("NO_COLOR", "1")
            .args(["volume", "rotate", "--key-store", &store, "--request"])
            .arg(request)
            .stderr(std::process::Stdio::piped());
        command
    };
    let holder = rotate(&first_request).spawn().unwrap();
    let start = std::time::Instant::now();
    while !has_child(holder.id()) {
        assert!(start.elapsed() < std::time::Duration::from_secs(60), "the first rotation never reached its plugin");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let refused = rotate(&second_request).output().unwrap();
    let err = stderr_of(&refused);
    std::fs::write(&release, b"").unwrap();
    let held = holder.wait_with_output().unwrap();
    assert_eq!(refused.status.code(), Some(10), "{err}");
    assert!(err.contains("its backing file") && err.contains("under another path or volume id"), "{err}");
    assert!(held.status.success(), "{}", stderr_of(&held));
}

/// A `volume rotate --request` command with the slow plugin's store, its stderr piped (for [`Command::spawn`]).
fn slow_rotate(scratch: &Scratch, store: &Path, request: &Path) -> Command {
    let mut command = Command::new(assert_cmd::cargo::cargo_bin("cryptadm"));
    command
        .env("PATH", plugin_path(scratch))
        .env("CRYPTADM_RUN_DIR", scratch.path("run"))
        .env("NO_COLOR", "1")
        .args(["volume", "rotate", "--key-store", &format!("slowdir:{}", store.display()), "--request"])
        .arg(request)
        .stderr(std::process::Stdio::piped());
    command
}

/// Waits until `child` has started its plugin: it holds the volume's locks (taken before the store is asked).
fn wait_for_plugin(child: &std::process::Child) {
    let start = std::time::Instant::now();
    while !has_child(child.id()) {
        assert!(start.elapsed() < std::time::Duration::from_secs(60), "the rotation never reached its plugin");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Issue 34: the partitions of one disk are locked by their bytes of it (sysfs `start`/`size`). Two rotations of
/// two partitions of one loop device hold their locks at once and both rotate (cryptsetup opens each with its
/// new key, the volume keys unchanged); meanwhile the same partition through a second loop device over the image,
/// and a whole loop device over the image's bytes of p2, are refused with exit 10 and write nothing.
#[test]
fn two_partitions_of_one_loop_device_rotate_at_once_and_overlaps_are_refused() {
    require_tool("sfdisk", "apt-get install fdisk");
    let scratch = Scratch::new();
    let image = scratch.path("disk.img");
    std::fs::File::create(&image).unwrap().set_len(48 << 20).unwrap();
    // Two 20 MiB partitions, in 512-byte sectors (LUKS2's default header and keyslot area take 16 MiB).
    let (p1_start, p2_start, sectors) = (2048u64, 43008u64, 40960u64);
    let mut sfdisk = Command::new("sfdisk")
        .args(["--quiet", "--label", "dos"])
        .arg(&image)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let table = format!("start={p1_start}, size={sectors}\nstart={p2_start}, size={sectors}\n");
    std::io::Write::write_all(&mut sfdisk.stdin.take().unwrap(), table.as_bytes()).unwrap();
    assert!(sfdisk.wait().unwrap().success(), "sfdisk");
    let disk = crate::support_loop::LoopDevice::attach_partitioned(&image);
    let partitions = [disk.partition(1), disk.partition(2)];
    let old = scratch.write("old.key", OLD_KEY);
    let store = scratch.path("keys");
    let key_file = |key: &[u8]| scratch.write("probe.key", key);
    let test_passphrase = |device: &Path, key: &[u8]| {
        let file = key_file(key);
        cryptsetup(&["open", "--test-passphrase", "--key-file", file.to_str().unwrap(), device.to_str().unwrap()])
            .status
            .success()
    };
    let volume_key = |device: &Path, key: &[u8]| {
        let file = key_file(key);
        let args = ["luksDump", "--dump-volume-key", "--batch-mode", "--key-file", file.to_str().unwrap()];
        let out = ok(cryptsetup(&[&args[..], &[device.to_str().unwrap()]].concat()), "luksDump --dump-volume-key");
        out[out.find("MK dump:").expect("a volume key dump")..].split_whitespace().collect::<String>()
    };
    let mut volume_keys = Vec::new();
    for (n, partition) in partitions.iter().enumerate() {
        let mut format = vec!["luksFormat", "--batch-mode", "--key-file", old.to_str().unwrap()];
        format.push(partition.to_str().unwrap());
        format.extend(kdf_args(Format::Luks2Pbkdf2));
        ok(cryptsetup(&format), "luksFormat");
        volume_keys.push(volume_key(partition, OLD_KEY.as_bytes()));
        std::fs::create_dir_all(store.join(format!("pvc-p{}", n + 1))).unwrap();
        std::fs::write(store.join(format!("pvc-p{}/current", n + 1)), OLD_KEY).unwrap();
    }
    let release = scratch.path("release");
    let request = |id: &str, device: &Path, release: &Path| {
        let json = serde_json::json!({
            "volume_id": id,
            "volume_path": device,
            "parameters": {"release": release},
            "secrets": {"token": "let-me-in"},
        });
        scratch.write(&format!("{id}.json"), json.to_string())
    };
    // Both partitions' headers and keyslot areas.
    let headers = || {
        let bytes = std::fs::read(&image).unwrap();
        let header = |start: u64| bytes[(start * 512) as usize..][..16 << 20].to_vec();
        (header(p1_start), header(p2_start))
    };

    let holders: Vec<_> = partitions
        .iter()
        .enumerate()
        .map(|(n, partition)| {
            let request = request(&format!("pvc-p{}", n + 1), partition, &release);
            let holder = slow_rotate(&scratch, &store, &request).spawn().unwrap();
            wait_for_plugin(&holder);
            holder
        })
        .collect();
    let before = headers();

    // Both hold their locks now. The same partition through a second partitioned loop device over the image:
    let again = crate::support_loop::LoopDevice::attach_partitioned(&image);
    let same =
        slow_rotate(&scratch, &store, &request("pvc-p1-again", &again.partition(1), Path::new(""))).output().unwrap();
    // A whole loop device over the image's bytes of p2 (what `losetup -o` makes of a partition table entry):
    let offset = (p2_start * 512).to_string();
    let size = (sectors * 512).to_string();
    let whole = Loop::attach_with(&image, &["--offset", &offset, "--sizelimit", &size]);
    let overlapping =
        slow_rotate(&scratch, &store, &request("pvc-whole", Path::new(&whole.0), Path::new(""))).output().unwrap();
    // The holders are waiting in the store's `get`, before any write: nobody has touched a header yet.
    let untouched = headers();
    std::fs::write(&release, b"").unwrap();
    let finished: Vec<_> = holders.into_iter().map(|holder| holder.wait_with_output().unwrap()).collect();

    let (same_err, overlapping_err) = (stderr_of(&same), stderr_of(&overlapping));
    assert_eq!(same.status.code(), Some(10), "{same_err}");
    let range = format!("bytes {}..{} of its backing file", p1_start * 512, (p1_start + sectors) * 512);
    assert!(same_err.contains(&range) && same_err.contains("overlap a partition in use"), "{same_err}");
    assert_eq!(overlapping.status.code(), Some(10), "{overlapping_err}");
    assert!(
        overlapping_err.contains("its backing file") && overlapping_err.contains("in use under"),
        "{overlapping_err}"
    );
    for (n, output) in finished.iter().enumerate() {
        assert!(output.status.success(), "p{}: {}", n + 1, stderr_of(output));
    }
    assert!(!store.join("pvc-p1-again").exists() && !store.join("pvc-whole").exists(), "the refused runs wrote");
    assert!(untouched == before, "a refused run wrote a header");
    let after = headers();
    assert!(after.0 != before.0 && after.1 != before.1, "both partitions were rotated");
    for (n, partition) in partitions.iter().enumerate() {
        let new = std::fs::read(store.join(format!("pvc-p{}/current", n + 1))).unwrap();
        assert_ne!(new, OLD_KEY.as_bytes());
        assert!(test_passphrase(partition, &new), "p{}: the new key does not open it", n + 1);
        assert!(!test_passphrase(partition, OLD_KEY.as_bytes()), "p{}: the old key still opens it", n + 1);
        assert_eq!(volume_key(partition, &new), volume_keys[n], "p{}: the volume key changed", n + 1);
    }
}

/// Issue 25: keyslots encrypted with `aes-cbc-essiv:sha256` (cryptsetup's CBC mode, old LUKS1 volumes) rotate,
/// on LUKS1 and LUKS2, and cryptsetup opens the result with the new key and the same volume key.
#[test]
fn cbc_essiv_keyslots_rotate_on_luks1_and_luks2() {
    for (version, key_size) in [("luks1", "256"), ("luks2", "128"), ("luks2", "256")] {
        let scratch = Scratch::new();
        let image = scratch.path("cbc.img");
        std::fs::File::create(&image).unwrap().set_len(20 << 20).unwrap();
        let old = scratch.write("old.key", OLD_KEY);
        let (old_str, image_str) = (old.to_str().unwrap(), image.to_str().unwrap());
        let mut args = vec!["luksFormat", "--batch-mode", "--type", version, "--cipher", "aes-cbc-essiv:sha256"];
        args.extend(["--key-size", key_size, "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000"]);
        args.extend(["--hash", "sha256", "--key-file", old_str, image_str]);
        ok(cryptsetup(&args), "luksFormat");
        let dump_key = |key: &[u8]| {
            let file = scratch.write("dump.key", key);
            ok(
                cryptsetup(&[
                    "luksDump",
                    "--dump-volume-key",
                    "--batch-mode",
                    "--key-file",
                    file.to_str().unwrap(),
                    image_str,
                ]),
                "luksDump",
            )
            .lines()
            .skip_while(|l| !l.contains("MK dump") && !l.contains("Volume key"))
            .collect::<Vec<_>>()
            .join("\n")
        };
        let volume_key = dump_key(OLD_KEY.as_bytes());
        assert!(volume_key.contains("MK dump"), "{volume_key}");
        let store = scratch.path("keys");
        std::fs::create_dir_all(store.join("pvc-cbc")).unwrap();
        std::fs::write(store.join("pvc-cbc/current"), OLD_KEY).unwrap();
        let output = cryptadm()
            .env("CRYPTADM_RUN_DIR", scratch.path("run"))
            .args(["volume", "rotate", "--volume-id", "pvc-cbc", "--volume-path", image_str, "--key-store"])
            .arg(format!("file://{}", store.display()))
            .output()
            .unwrap();
        assert!(output.status.success(), "{version}/{key_size}: {}", stderr_of(&output));
        let new = std::fs::read(store.join("pvc-cbc/current")).unwrap();
        let opens = |key: &[u8]| {
            let file = scratch.write("probe.key", key);
            cryptsetup(&["open", "--test-passphrase", "--key-file", file.to_str().unwrap(), image_str]).status.success()
        };
        assert!(opens(&new), "{version}/{key_size}: the new key does not open the volume");
        assert!(!opens(OLD_KEY.as_bytes()), "{version}/{key_size}: the old key still opens");
        assert_eq!(dump_key(&new), volume_key, "{version}/{key_size}: the volume key changed");
    }
}
