//! dm-crypt, live: a real kernel (Debian bookworm's, under QEMU TCG, `tests/guest/guest.sh`) maps our volumes.
//! One boot runs every case of `tests/guest/dmcrypt.sh`: images from `disk luks-format` (LUKS1, LUKS2 argon2id
//! and pbkdf2, 4096- and 512-byte sectors) opened by the guest's cryptsetup, with ext4 written and read back;
//! `volume rotate` on mapped, mounted LUKS1 and LUKS2 volumes while a writer keeps writing and fsyncing, the
//! device found through the real `/sys/block/dm-*` (`luks-rbd-ID`, `ID`, `*-ID`); `kill -9` of rotate at random
//! points under the same load; discovery refusing zero and two matches; `volume serve` answering the
//! csi-addons sidecar's request from the Python grpcio client; `disk luks-format` onto a guest block device; a
//! detached header rotated while mapped; a device-mapper device stacked on a loop device sharing its backing
//! lock. The host checks the rotated images again with its own cryptsetup.

use crate::support::{cryptadm, require_tool};
use crate::support_guest::{Disk, Guest, blank, boot, shared, workdir};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::LazyLock;
use std::time::Duration;

const OLD_KEY: &str = "old passphrase";
/// A ceph-csi volume handle (the PV's spec.csi.volumeHandle), mapped as `luks-rbd-<handle>` as ceph-csi does.
const CEPH_ID: &str = "0001-0009-rook-ceph-0000000000000002-4a8f0a1e-1b2c-4d5e-8f90-0123456789ab";
const CASES: &str = "formats rotate_luks1 rotate_luks2 kill_luks1 kill_luks2 discovery_errors serve \
                     format_device detached_header stacked";

/// The disks' images, on the host.
static IMAGES: LazyLock<PathBuf> = LazyLock::new(|| workdir("dmcrypt-images"));

/// Boots this file's guest in the background ([`crate::support_guest::warm_up`]).
pub fn warm_up() {
    LazyLock::force(&GUEST);
}

static GUEST: LazyLock<Guest> = LazyLock::new(|| {
    let images = &*IMAGES;
    let share = workdir("dmcrypt");
    let old = share.join("old.key");
    std::fs::write(&old, OLD_KEY).unwrap();
    let mut disks = Vec::new();
    let mut format = |name: &str, args: &[&str]| {
        let path = images.join(format!("{name}.img"));
        cryptadm()
            .args(["disk", "luks-format", "--no-progress", "--size", "48M", "--key-file"])
            .arg(&old)
            .args(args)
            .arg(&path)
            .assert()
            .success();
        disks.push(Disk { name: name.to_owned(), path });
    };
    let luks1 = ["--type", "luks1", "--hash", "sha256", "--pbkdf-force-iterations", "1000"];
    // Argon2id at 1 MiB: every unlock and every new keyslot of these volumes runs in the guest, where TCG makes
    // memory-hard work costly. At 32 MiB a rotation of one took 120 s of the guest's run, and the `volume serve`
    // case (a rotation, and its check) most of its 260 s.
    let argon2 = [
        "--type",
        "luks2",
        "--pbkdf",
        "argon2id",
        "--pbkdf-force-iterations",
        "4",
        "--pbkdf-memory",
        "1024",
        "--pbkdf-parallel",
        "1",
        "--sector-size",
        "4096",
    ];
    let pbkdf2 = ["--type", "luks2", "--pbkdf", "pbkdf2", "--hash", "sha256", "--pbkdf-force-iterations", "1000"];
    format("fmt-l1", &luks1);
    format("fmt-a2", &argon2);
    format("fmt-p2", &[&pbkdf2[..], &["--sector-size", "4096"]].concat());
    format("fmt-s512", &[&pbkdf2[..], &["--sector-size", "512"]].concat());
    format("rot-l1", &luks1);
    format("rot-a2", &argon2);
    format("kill-l1", &luks1);
    format("kill-p2", &pbkdf2);
    format("srv-a2", &argon2);
    for name in ["blank", "detached"] {
        let path = images.join(format!("{name}.img"));
        blank(&path, 64 << 20);
        disks.push(Disk { name: name.to_owned(), path });
    }

    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(manifest.join("tests/guest/dmcrypt.sh"), share.join("run.sh")).unwrap();
    std::fs::copy(manifest.join("tests/interop/csi_addons_client.py"), share.join("csi_addons_client.py")).unwrap();
    copy_dir(&manifest.join("proto"), &share.join("proto"));
    std::fs::write(share.join("sidecar.json"), sidecar_request(CEPH_ID)).unwrap();
    // The Python client runs in the guest from the host's root filesystem (shared read-only), so the guest
    // needs the path of the interpreter that has grpcio.
    require_tool("python3", "apt-get install python3");
    let python = Command::new("python3")
        .args(["-c", "import grpc, grpc_tools, sys; print(sys.executable)"])
        .output()
        .expect("run python3");
    assert!(python.status.success(), "python3 without grpcio/grpcio-tools (bash .ci/run installs them)");
    let python = String::from_utf8(python.stdout).unwrap().trim().to_owned();
    // The client's stubs, generated here: protoc under TCG takes a minute.
    let stubs = Command::new(&python)
        .arg(share.join("csi_addons_client.py"))
        .arg("generate")
        .arg(share.join("proto"))
        .arg(share.join("stubs"))
        .output()
        .expect("run csi_addons_client.py generate");
    assert!(stubs.status.success(), "generate the stubs: {}", String::from_utf8_lossy(&stubs.stderr));
    std::fs::write(share.join("env"), format!("CASES='{CASES}'\nCEPH_ID='{CEPH_ID}'\nPYTHON='{python}'\n")).unwrap();
    let extra = [
        "-virtfs".to_owned(),
        "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap".into(),
    ];
    // Its ten cases take 6 min under TCG on a quiet 2-core builder and 15 under load 10: the limit is for a hung guest.
    let guest = boot(share, true, &disks, &extra, Duration::from_secs(1800));
    assert_eq!(guest.status, Some(0), "the guest script did not finish");
    guest
});

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The request the csi-addons sidecar builds from a ceph-csi RBD PV (RWO → SINGLE_NODE_MULTI_WRITER = 7): no
/// volume_path, no encryption_key.
fn sidecar_request(id: &str) -> String {
    serde_json::json!({
        "volume_id": id,
        "parameters": {"clusterID": "rook-ceph", "pool": "replicapool", "encrypted": "true"},
        "secrets": {"userID": "csi-rbd-node", "userKey": "AQBXnOdfAAAAABAAXrv0yuFk3Md0QAS4GxmOsQ=="},
        "mode": 7
    })
    .to_string()
}

/// The host's cryptsetup: does `key` (a file) open `image`?
fn host_opens(image: &Path, key: &Path) -> bool {
    require_tool("cryptsetup", "apt-get install cryptsetup-bin");
    Command::new("cryptsetup")
        .args(["open", "--test-passphrase", "--key-file"])
        .arg(key)
        .arg(image)
        .status()
        .expect("run cryptsetup")
        .success()
}

/// After the guest: the host's cryptsetup agrees that the store's current key opens the image and the old
/// one does not.
fn host_agrees(image: &str, id: &str) {
    let image = IMAGES.join(format!("{image}.img"));
    let current = shared(&GUEST).out(&format!("keys/{id}/current"));
    assert!(host_opens(&image, &current), "the host's cryptsetup opens {id} with the store's current key");
    assert!(!host_opens(&image, &shared(&GUEST).share.join("old.key")), "the old key no longer opens {id}");
}

#[test]
fn guest_dmcrypt_luks_format_images_open_in_the_kernel_and_round_trip_ext4() {
    let log = shared(&GUEST).case("formats");
    for name in ["fmt-l1", "fmt-a2", "fmt-p2", "fmt-s512"] {
        assert!(log.contains(&format!("{name}: 8 MiB written through dm-crypt and read back")), "{log}");
    }
}

#[test]
fn guest_dmcrypt_rotate_mapped_mounted_luks1_under_write_load_found_as_luks_rbd_id() {
    let log = shared(&GUEST).case("rotate_luks1");
    assert!(log.contains("no write error") && log.contains("the new key opens, the old one does not"), "{log}");
    host_agrees("rot-l1", "pvc-l1");
}

#[test]
fn guest_dmcrypt_rotate_mapped_mounted_luks2_argon2id_under_write_load_found_as_id() {
    let log = shared(&GUEST).case("rotate_luks2");
    assert!(log.contains("no write error") && log.contains("the new key opens, the old one does not"), "{log}");
    host_agrees("rot-a2", "pvc-l2");
}

#[test]
fn guest_dmcrypt_kill_9_of_rotate_at_random_points_under_load_luks1_star_id() {
    let log = shared(&GUEST).case("kill_luks1");
    assert_eq!(log.matches("killed after").count(), 4, "{log}");
    host_agrees("kill-l1", "pvc-k1");
}

#[test]
fn guest_dmcrypt_kill_9_of_rotate_at_random_points_under_load_luks2() {
    let log = shared(&GUEST).case("kill_luks2");
    assert_eq!(log.matches("killed after").count(), 4, "{log}");
    host_agrees("kill-p2", "pvc-k2");
}

#[test]
fn guest_dmcrypt_discovery_by_sysfs_refuses_no_mapping_with_5_and_two_with_3() {
    let log = shared(&GUEST).case("discovery_errors");
    assert!(log.contains("error:"), "{log}");
}

#[test]
fn guest_dmcrypt_volume_serve_answers_the_sidecar_request_for_a_mapped_volume() {
    let log = shared(&GUEST).case("serve");
    assert!(log.contains("\"code\": \"OK\""), "{log}");
    host_agrees("srv-a2", CEPH_ID);
}

#[test]
fn guest_dmcrypt_luks_format_onto_a_block_device_opens_with_cryptsetup() {
    let log = shared(&GUEST).case("format_device");
    assert_eq!(log.matches("devfmt: 8 MiB written through dm-crypt and read back").count(), 2, "{log}");
}

#[test]
fn guest_dmcrypt_detached_header_rotated_while_mapped() {
    let log = shared(&GUEST).case("detached_header");
    assert!(log.contains("no write error"), "{log}");
}

/// Mends item 10: a device-mapper device stacked on a loop device shares the loop device's backing-file lock, so
/// two volume ids cannot rotate the mapping and the loop device at once (exit 10 while the lock is held).
#[test]
fn guest_dmcrypt_a_mapping_stacked_on_a_loop_device_takes_its_backing_file_lock() {
    let log = shared(&GUEST).case("stacked");
    assert!(log.contains("stacked: refused through the mapping while the backing file was locked (exit 10)"), "{log}");
}
