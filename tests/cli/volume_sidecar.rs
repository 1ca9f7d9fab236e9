//! `volume serve` behind the stock csi-addons sidecar: a Python grpcio client (stubs generated at test time from
//! the vendored protos) sends exactly what the sidecar sends — no volume_path, no encryption_key, the PV's
//! volumeAttributes as parameters, the node-stage secret, a volume capability with only the access mode — and the
//! server finds the device through a fake sysfs tree whose dm-crypt mappings point at cryptsetup-made images.
//! Also: grpcio's default `:authority` (the socket path) and `localhost`, the identity the controller routes by,
//! bounded concurrency with the server's peak RSS measured, and headers whose KDF asks for absurd cost.

use crate::support::{Scratch, cryptadm, require_tool};
use std::path::{Path, PathBuf};
use std::process::Command;

const OLD_KEY: &str = "old passphrase";
const DRIVER: &str = "rbd.csi.ceph.com";
/// A ceph-csi volume handle (the PV's spec.csi.volumeHandle).
const CEPH_ID: &str = "0001-0009-rook-ceph-0000000000000002-4a8f0a1e-1b2c-4d5e-8f90-0123456789ab";
const LUKS1_ID: &str = "pvc-2c3d4e5f-luks1";

fn cryptsetup(args: &[&str]) -> std::process::Output {
    require_tool("cryptsetup", "apt-get install cryptsetup-bin");
    Command::new("cryptsetup").args(args).output().expect("run cryptsetup")
}

fn ok(output: std::process::Output, what: &str) -> String {
    assert!(output.status.success(), "{what} failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A small LUKS image: LUKS1 (pbkdf2, 1000 iterations) or LUKS2 argon2id with `memory_kib`, time 4, one lane.
fn luks_image(path: &Path, key_file: &Path, luks2_memory_kib: Option<u32>) {
    std::fs::File::create(path).unwrap().set_len(4 << 20).unwrap();
    let (key, image) = (key_file.to_str().unwrap(), path.to_str().unwrap());
    let memory = luks2_memory_kib.map(|m| m.to_string()).unwrap_or_default();
    let mut args = vec!["luksFormat", "--batch-mode", "--key-file", key, image];
    match luks2_memory_kib {
        None => args.extend(["--type", "luks1", "--hash", "sha256", "--pbkdf-force-iterations", "1000"]),
        Some(_) => args.extend([
            "--type",
            "luks2",
            "--pbkdf",
            "argon2id",
            "--pbkdf-force-iterations",
            "4",
            "--pbkdf-memory",
            &memory,
            "--pbkdf-parallel",
            "1",
            "--luks2-metadata-size",
            "16k",
            "--luks2-keyslots-size",
            "1m",
        ]),
    }
    ok(cryptsetup(&args), "luksFormat");
}

fn opens(scratch: &Scratch, image: &Path, key: &[u8]) -> bool {
    let file = scratch.write("probe.key", key);
    cryptsetup(&["open", "--test-passphrase", "--key-file", file.to_str().unwrap(), image.to_str().unwrap()])
        .status
        .success()
}

fn volume_key(scratch: &Scratch, image: &Path, key: &[u8]) -> String {
    let file = scratch.write("dump.key", key);
    let out = ok(
        cryptsetup(&[
            "luksDump",
            "--dump-volume-key",
            "--batch-mode",
            "--key-file",
            file.to_str().unwrap(),
            image.to_str().unwrap(),
        ]),
        "luksDump --dump-volume-key",
    );
    out.split_once("MK dump:").expect("a volume key dump").1.split_whitespace().collect()
}

/// A fake sysfs + /dev: `sys/block/<dm>/dm/{name,uuid}`, `slaves/<kname>`, and `dev/<kname>` → `target`.
fn mapping(root: &Path, dm: &str, name: &str, uuid: &str, kname: &str, target: &Path) {
    let dir = root.join("sys/block").join(dm);
    std::fs::create_dir_all(dir.join("dm")).unwrap();
    std::fs::create_dir_all(dir.join("slaves").join(kname)).unwrap();
    std::fs::write(dir.join("dm/name"), format!("{name}\n")).unwrap();
    std::fs::write(dir.join("dm/uuid"), format!("{uuid}\n")).unwrap();
    std::fs::create_dir_all(root.join("dev")).unwrap();
    std::os::unix::fs::symlink(target, root.join("dev").join(kname)).unwrap();
}

fn store_key(root: &Path, id: &str, key: &str) {
    let dir = root.join("keys").join(id);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("current"), key).unwrap();
}

fn current_key(root: &Path, id: &str) -> Vec<u8> {
    std::fs::read(root.join("keys").join(id).join("current")).unwrap()
}

/// A `volume serve` child, killed when the test ends early.
struct Server {
    child: Option<std::process::Child>,
    socket: PathBuf,
}

impl Server {
    fn start(root: &Path, extra: &[&str]) -> Self {
        let socket = root.join("csi-addons.sock");
        let child = Command::new(assert_cmd::cargo::cargo_bin("cryptadm"))
            .env("CRYPTADM_RUN_DIR", root.join("run"))
            .args(["volume", "serve", "--endpoint", &format!("unix://{}", socket.display())])
            .args(["--key-store", &format!("file://{}", root.join("keys").display())])
            .args(extra)
            .stderr(std::process::Stdio::null())
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

    /// A field of /proc/<pid>/status in KiB (VmRSS, VmHWM).
    fn status_kib(&self, field: &str) -> u64 {
        let pid = self.child.as_ref().unwrap().id();
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let line = status.lines().find(|l| l.starts_with(field)).expect("the field is in /proc/<pid>/status");
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    /// Runs the Python client; returns its JSON output.
    fn client(&self, root: &Path, authority: &str, command: &str, args: &[String]) -> serde_json::Value {
        require_tool("python3", "apt-get install python3");
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        let out = Command::new("python3")
            .arg(manifest.join("tests/interop/csi_addons_client.py"))
            .arg(manifest.join("proto"))
            .arg(root.join("stubs"))
            .arg(&self.socket)
            .args([authority, command])
            .args(args)
            .output()
            .expect("run python3");
        assert!(
            out.status.success(),
            "the grpcio client failed (pip install grpcio grpcio-tools; bash .ci/run does): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("JSON from the client")
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

/// The request the sidecar builds from a ceph-csi RBD PV (RWO → SINGLE_NODE_MULTI_WRITER = 7).
fn sidecar_request(id: &str) -> String {
    serde_json::json!({
        "volume_id": id,
        "parameters": {
            "clusterID": "rook-ceph",
            "pool": "replicapool",
            "imageName": "csi-vol-4a8f0a1e-1b2c-4d5e-8f90-0123456789ab",
            "imageFeatures": "layering",
            "encrypted": "true",
            "encryptionKMSID": "cryptadm",
            "storage.kubernetes.io/csiProvisionerIdentity": "1700000000000-1234-rbd.csi.ceph.com"
        },
        "secrets": {"userID": "csi-rbd-node", "userKey": "AQBXnOdfAAAAABAAXrv0yuFk3Md0QAS4GxmOsQ=="},
        "mode": 7
    })
    .to_string()
}

#[test]
fn volume_sidecar_replay_finds_luks1_and_luks2_through_sysfs_and_rotates_them() {
    let scratch = Scratch::new();
    let root = scratch.dir.path();
    let old = scratch.write("old.key", OLD_KEY);
    std::fs::create_dir_all(root.join("images")).unwrap();
    let (luks2, luks1) = (root.join("images/ceph.img"), root.join("images/luks1.img"));
    luks_image(&luks2, &old, Some(32 * 1024));
    luks_image(&luks1, &old, None);
    let hex = "4a8f0a1e1b2c4d5e8f900123456789ab";
    let ceph_name = format!("luks-rbd-{CEPH_ID}");
    // cryptsetup truncates DM uuids to 128 characters: only the prefix counts.
    let ceph_uuid: String = format!("CRYPT-LUKS2-{hex}-{ceph_name}").chars().take(128).collect();
    mapping(root, "dm-0", &ceph_name, &ceph_uuid, "rbd0", &luks2);
    mapping(root, "dm-1", &format!("luks-{LUKS1_ID}"), &format!("CRYPT-LUKS1-{hex}-luks-{LUKS1_ID}"), "loop1", &luks1);
    // Not LUKS mappings: a plain dm-crypt and an LVM volume whose names also end with an id.
    mapping(root, "dm-2", "plain-pvc-plain", "CRYPT-PLAIN-plain-pvc-plain", "loop2", &luks1);
    mapping(root, "dm-3", "vg-pvc-lvm", "LVM-abcdef", "sda", &luks1);
    // Two LUKS mappings for one id: refused, never guessed.
    mapping(root, "dm-4", "luks-rbd-pvc-dup", &format!("CRYPT-LUKS2-{hex}-luks-rbd-pvc-dup"), "rbd4", &luks2);
    mapping(root, "dm-5", "luks-pvc-dup", &format!("CRYPT-LUKS1-{hex}-luks-pvc-dup"), "loop5", &luks1);
    for id in [CEPH_ID, LUKS1_ID, "pvc-dup", "pvc-plain", "pvc-lvm", "pvc-missing"] {
        store_key(root, id, OLD_KEY);
    }
    let before = (volume_key(&scratch, &luks2, OLD_KEY.as_bytes()), volume_key(&scratch, &luks1, OLD_KEY.as_bytes()));
    let (sys, dev) = (root.join("sys"), root.join("dev"));
    let server = Server::start(
        root,
        &["--drivername", DRIVER, "--sysfs-root", sys.to_str().unwrap(), "--dev-root", dev.to_str().unwrap()],
    );

    // What the sidecar and the controller ask first, with grpcio's default authority and with grpc-go's.
    for authority in ["default", "localhost"] {
        let identity = server.client(root, authority, "identity", &[]);
        assert_eq!(identity["name"], DRIVER, "{identity}");
        assert_eq!(identity["probe_ready"], true, "{identity}");
        let caps = identity["capabilities"].as_array().unwrap();
        assert!(caps.contains(&serde_json::json!({"kind": "encryption_key_rotation", "type": 1})), "{identity}");
        assert!(caps.contains(&serde_json::json!({"kind": "service", "type": 2})), "{identity}");
        assert!(!caps.contains(&serde_json::json!({"kind": "service", "type": 1})), "no CONTROLLER_SERVICE");
    }

    let results = server.client(root, "default", "rotate", &[sidecar_request(CEPH_ID)]);
    assert_eq!(results[0]["code"], "OK", "{results}");
    let results = server.client(root, "localhost", "rotate", &[sidecar_request(LUKS1_ID)]);
    assert_eq!(results[0]["code"], "OK", "{results}");
    for (id, image, volume_key_before) in [(CEPH_ID, &luks2, &before.0), (LUKS1_ID, &luks1, &before.1)] {
        let new = current_key(root, id);
        assert_ne!(new, OLD_KEY.as_bytes());
        assert!(opens(&scratch, image, &new), "the new key opens {id}");
        assert!(!opens(&scratch, image, OLD_KEY.as_bytes()), "the old key no longer opens {id}");
        assert_eq!(&volume_key(&scratch, image, &new), volume_key_before, "the volume key of {id} is unchanged");
    }

    // Zero and two matches, over gRPC and from the command line.
    let specs: Vec<String> =
        ["pvc-missing", "pvc-plain", "pvc-lvm", "pvc-dup"].iter().map(|id| sidecar_request(id)).collect();
    let results = server.client(root, "default", "rotate", &specs);
    for index in 0..3 {
        assert_eq!(results[index]["code"], "NOT_FOUND", "{results}");
        let details = results[index]["details"].as_str().unwrap();
        assert!(details.contains("dm-crypt LUKS mappings") && details.contains("sys/block"), "{details}");
    }
    assert_eq!(results[3]["code"], "FAILED_PRECONDITION", "{results}");
    let details = results[3]["details"].as_str().unwrap();
    assert!(details.contains("luks-rbd-pvc-dup") && details.contains("luks-pvc-dup"), "{details}");
    drop(server);
    for (id, code) in [("pvc-missing", 5), ("pvc-dup", 3)] {
        cryptadm()
            .env("CRYPTADM_RUN_DIR", root.join("run"))
            .args(["volume", "rotate", "--volume-id", id, "--key-store"])
            .arg(format!("file://{}", root.join("keys").display()))
            .args(["--sysfs-root", sys.to_str().unwrap(), "--dev-root", dev.to_str().unwrap()])
            .assert()
            .code(code);
    }
    assert_eq!(current_key(root, "pvc-dup"), OLD_KEY.as_bytes());
}

#[test]
#[allow(clippy::print_stderr)] // the measured figures, for the record
fn volume_sidecar_fifty_concurrent_argon2id_rotations_with_max_concurrent_2_stay_within_memory() {
    const KDF_KIB: u64 = 32 * 1024;
    const VOLUMES: usize = 50;
    let scratch = Scratch::new();
    let root = scratch.dir.path();
    let old = scratch.write("old.key", OLD_KEY);
    std::fs::create_dir_all(root.join("images")).unwrap();
    let base = root.join("base.img");
    luks_image(&base, &old, Some(KDF_KIB as u32));
    let ids: Vec<String> = (0..VOLUMES).map(|i| format!("pvc-{i:02}")).collect();
    for id in &ids {
        std::fs::copy(&base, root.join("images").join(format!("{id}.img"))).unwrap();
        store_key(root, id, OLD_KEY);
    }
    let template = format!("{}/images/{{volume_id}}.img", root.display());
    let server = Server::start(root, &["--max-concurrent", "2", "--volume-path-template", &template]);
    let identity = server.client(root, "default", "identity", &[]);
    assert_eq!(identity["name"], "cryptadm.volume", "the default name stays");
    let baseline = server.status_kib("VmHWM:");
    let started = std::time::Instant::now();
    let specs: Vec<String> = ids.iter().map(|id| sidecar_request(id)).collect();
    let results = server.client(root, "default", "rotate", &specs);
    let elapsed = started.elapsed();
    let peak = server.status_kib("VmHWM:");
    let results = results.as_array().unwrap();
    assert_eq!(results.len(), VOLUMES);
    assert!(results.iter().all(|r| r["code"] == "OK"), "every request succeeds: {results:?}");
    // Each rotation runs its KDFs one after another, so two at once need 2 × KDF memory; allow 24 MiB for
    // the blocking threads, buffers and allocator slack.
    let limit = baseline + 2 * KDF_KIB + 24 * 1024;
    eprintln!(
        "{VOLUMES} rotations in {elapsed:?}; server VmHWM {baseline} KiB before, {peak} KiB after (limit {limit} KiB)"
    );
    assert!(peak < limit, "peak RSS {peak} KiB ≥ {limit} KiB (baseline {baseline} KiB)");
    for id in ids.iter().step_by(17) {
        let image = root.join("images").join(format!("{id}.img"));
        assert!(opens(&scratch, &image, &current_key(root, id)));
        assert!(!opens(&scratch, &image, OLD_KEY.as_bytes()));
    }
    for id in &ids {
        assert_ne!(current_key(root, id), OLD_KEY.as_bytes(), "{id} was rotated");
    }
}

/// Sets `field` of every keyslot KDF in both LUKS2 header copies and fixes the header checksums.
fn patch_kdf(image: &Path, field: &str, value: u64) {
    const PATCH: &str = r#"
import hashlib, json, struct, sys
image, field, value = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(image, "r+b") as f:
    f.seek(8)
    size = struct.unpack(">Q", f.read(8))[0]
    for offset in (0, size):
        f.seek(offset)
        header = bytearray(f.read(size))
        meta = json.loads(header[4096:].split(b"\0", 1)[0])
        for slot in meta["keyslots"].values():
            slot["kdf"][field] = value
        text = json.dumps(meta, separators=(",", ":")).encode()
        header[4096:] = text + b"\0" * (size - 4096 - len(text))
        header[0x1C0:0x200] = b"\0" * 64
        header[0x1C0:0x1E0] = hashlib.sha256(header).digest()
        f.seek(offset)
        f.write(header)
"#;
    let status = Command::new("python3")
        .args(["-c", PATCH, image.to_str().unwrap(), field, &value.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn volume_sidecar_headers_asking_8_gib_or_2_32_passes_are_refused_at_once() {
    let scratch = Scratch::new();
    let root = scratch.dir.path();
    let old = scratch.write("old.key", OLD_KEY);
    for (name, field, value, message) in [
        ("memory", "memory", 8u64 << 20, "above cryptsetup's maximum 4194304 KiB"),
        ("time", "time", u64::from(u32::MAX), "above the ceiling"),
        ("cpus", "cpus", 16, "outside cryptsetup's 1–4"),
    ] {
        let image = root.join(format!("{name}.img"));
        luks_image(&image, &old, Some(32 * 1024));
        patch_kdf(&image, field, value);
        // cryptsetup still reads the header: only the KDF's cost was changed.
        ok(cryptsetup(&["luksDump", image.to_str().unwrap()]), "luksDump");
        store_key(root, name, OLD_KEY);
        let bytes = std::fs::read(&image).unwrap();
        let started = std::time::Instant::now();
        let output = cryptadm()
            .env("CRYPTADM_RUN_DIR", root.join("run"))
            .args(["volume", "rotate", "--volume-id", name, "--volume-path"])
            .arg(&image)
            .arg("--key-store")
            .arg(format!("file://{}", root.join("keys").display()))
            .output()
            .unwrap();
        let elapsed = started.elapsed();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(3), "{name}: {stderr}");
        assert!(stderr.contains(message), "{name}: {stderr}");
        assert!(elapsed < std::time::Duration::from_secs(1), "{name}: refused after {elapsed:?}");
        assert_eq!(std::fs::read(&image).unwrap(), bytes, "{name}: the image is untouched");
        assert!(!root.join("keys").join(name).join("pending").exists(), "{name}: no pending key recorded");
    }
}
