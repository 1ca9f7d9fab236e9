//! Nova's path for disk images, run for real: a guest (Debian's kernel under QEMU TCG, `tests/guest/guest.sh`)
//! gets disks made by `cryptadm disk luks-format --format qcow2` and `disk convert` (qcow2+LUKS) and by `disk
//! luks-format --type luks1` (raw LUKS), which QEMU itself decrypts with the passphrase handed over as libvirt
//! does for Nova: a master key `-object secret,…,file=` and each disk's secret AES-256-CBC-wrapped under it
//! (`data=`, `keyid=`, `iv=`), named by `encrypt.key-secret` on the qcow2 driver or `key-secret` on the `luks`
//! driver. The guest reads a known file from each and writes one back; the host then decrypts QEMU's writes with
//! cryptadm and `qemu-img check`s the qcow2. A wrong passphrase: QEMU refuses to start.

use crate::support::{cryptadm, require_tool};
use crate::support_guest::{Guest, boot, shared, workdir};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::LazyLock;
use std::time::Duration;

const PASSPHRASE: &str = "n0va-ephemeral-secret/base64+text==";
const KNOWN: &str = "a file Nova's guest reads from its encrypted disk\n";
/// `disk convert --encryption-key new` writes its new secret here (in the images directory).
const NEW_SECRET: &str = "new-secret.txt";

struct Nova {
    guest: Guest,
    images: PathBuf,
}

/// Boots this file's guest in the background ([`crate::support_guest::warm_up`]).
pub fn warm_up() {
    LazyLock::force(&NOVA);
}

static NOVA: LazyLock<Nova> = LazyLock::new(|| {
    let images = workdir("nova-images");
    let share = workdir("nova");
    let pass = images.join("pass.txt");
    std::fs::write(&pass, PASSPHRASE).unwrap();
    let raw = filesystem_image(&images);

    // qcow2+LUKS from a raw image; raw LUKS1; qcow2 by `convert` from the raw LUKS (same key) and from the
    // qcow2 (a new key).
    let qcow2 = images.join("luks-format.qcow2");
    let luks = images.join("luks1.img");
    let same = images.join("convert-same.qcow2");
    let new = images.join("convert-new.qcow2");
    cryptadm()
        .args(["disk", "luks-format", "--no-progress", "--format", "qcow2", "--pbkdf-force-iterations", "1000"])
        .arg("--passphrase-file")
        .arg(&pass)
        .arg("--from")
        .arg(&raw)
        .arg(&qcow2)
        .assert()
        .success();
    cryptadm()
        .args(["disk", "luks-format", "--no-progress", "--type", "luks1", "--hash", "sha256"])
        .args(["--pbkdf-force-iterations", "1000", "--passphrase-file"])
        .arg(&pass)
        .arg("--from")
        .arg(&raw)
        .arg(&luks)
        .assert()
        .success();
    cryptadm()
        .args(["disk", "convert", "--no-progress", "--format", "qcow2", "--encryption-key", "same", "--key-file"])
        .arg(&pass)
        .arg(&luks)
        .arg(&same)
        .assert()
        .success();
    cryptadm()
        .args(["disk", "convert", "--no-progress", "--encryption-key", "new", "--pbkdf-force-iterations", "1000"])
        .arg("--new-key-file")
        .arg(images.join(NEW_SECRET))
        .arg("--key-file")
        .arg(&pass)
        .arg(&qcow2)
        .arg(&new)
        .assert()
        .success();
    let new_secret = std::fs::read(images.join(NEW_SECRET)).unwrap();

    let mut libvirt = Libvirt::new(&images);
    libvirt.qcow2("nova-qcow2", &qcow2, PASSPHRASE.as_bytes());
    libvirt.qcow2("nova-convert-same", &same, PASSPHRASE.as_bytes());
    libvirt.qcow2("nova-convert-new", &new, &new_secret);
    libvirt.luks("nova-luks", &luks, PASSPHRASE.as_bytes());

    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(manifest.join("tests/guest/nova.sh"), share.join("run.sh")).unwrap();
    std::fs::write(
        share.join("env"),
        format!(
            "DISKS='nova-qcow2 nova-convert-same nova-convert-new nova-luks'\nWRITE='nova-qcow2 nova-luks'\n\
             KNOWN_SHA256='{}'\n",
            sha256_hex(KNOWN.as_bytes())
        ),
    )
    .unwrap();
    let guest = boot(share, false, &[], &libvirt.args, Duration::from_secs(300));
    assert_eq!(guest.status, Some(0), "the guest script did not finish");
    Nova { guest, images }
});

/// A 32 MiB ext4 image holding known.txt, made without mounting (`mkfs.ext4 -d`).
fn filesystem_image(images: &Path) -> PathBuf {
    require_tool("mkfs.ext4", "apt-get install e2fsprogs");
    let content = images.join("content");
    std::fs::create_dir_all(&content).unwrap();
    std::fs::write(content.join("known.txt"), KNOWN).unwrap();
    let raw = images.join("fs.raw");
    std::fs::File::create(&raw).unwrap().set_len(32 << 20).unwrap();
    let status = Command::new("mkfs.ext4").args(["-q", "-F", "-d"]).arg(&content).arg(&raw).status().unwrap();
    assert!(status.success(), "mkfs.ext4 -d");
    raw
}

fn sha256_hex(data: &[u8]) -> String {
    let output = Command::new("openssl")
        .args(["dgst", "-sha256", "-r"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(data)?;
            child.wait_with_output()
        })
        .expect("run openssl dgst");
    String::from_utf8(output.stdout).unwrap().split_whitespace().next().unwrap().to_owned()
}

/// QEMU arguments as libvirt builds them for Nova's encrypted disks (libvirt's qemuBuildSecretInfoProps and
/// the -blockdev pairs of qemuBlockStorageSourceGetBackendProps/GetFormatProps): one master key in a file,
/// each disk's secret AES-256-CBC-encrypted under it, base64, with its IV.
struct Libvirt {
    dir: PathBuf,
    master: Vec<u8>,
    args: Vec<String>,
    count: usize,
}

impl Libvirt {
    fn new(dir: &Path) -> Self {
        let master: Vec<u8> = random_bytes(32);
        let file = dir.join("master-key.aes");
        std::fs::write(&file, &master).unwrap();
        let args = vec![
            "-object".to_owned(),
            serde_json::json!({"qom-type": "secret", "id": "masterKey0", "format": "raw", "file": file}).to_string(),
        ];
        Self { dir: dir.to_owned(), master, args, count: 0 }
    }

    /// The disk's secret object, wrapped under the master key as libvirt does; returns its id.
    fn secret(&mut self, node: &str, passphrase: &[u8]) -> String {
        require_tool("openssl", "apt-get install openssl");
        let iv = random_bytes(16);
        let plain = self.dir.join(format!("{node}.secret"));
        std::fs::write(&plain, passphrase).unwrap();
        let output = Command::new("openssl")
            .args(["enc", "-aes-256-cbc", "-a", "-A", "-K", &hex(&self.master), "-iv", &hex(&iv), "-in"])
            .arg(&plain)
            .output()
            .unwrap();
        assert!(output.status.success(), "openssl enc: {}", String::from_utf8_lossy(&output.stderr));
        std::fs::remove_file(&plain).unwrap();
        let id = format!("{node}-encryption-secret0");
        let iv_b64 = base64(&iv);
        self.args.push("-object".into());
        self.args.push(
            serde_json::json!({
                "qom-type": "secret", "id": id, "data": String::from_utf8(output.stdout).unwrap().trim(),
                "keyid": "masterKey0", "iv": iv_b64, "format": "base64"
            })
            .to_string(),
        );
        id
    }

    fn storage(&mut self, path: &Path) -> (String, String) {
        self.count += 1;
        let (storage, format) = (format!("libvirt-{}-storage", self.count), format!("libvirt-{}-format", self.count));
        self.args.push("-blockdev".into());
        self.args.push(
            serde_json::json!({
                "driver": "file", "filename": path, "node-name": storage, "auto-read-only": true, "discard": "unmap"
            })
            .to_string(),
        );
        (storage, format)
    }

    fn device(&mut self, format: &str, serial: &str) {
        self.args.push("-device".into());
        self.args.push(
            serde_json::json!({
                "driver": "virtio-blk-pci", "drive": format, "id": format!("virtio-disk{}", self.count),
                "serial": serial
            })
            .to_string(),
        );
    }

    /// A qcow2 image with `encrypt.format=luks` and `encrypt.key-secret` (libvirt's <encryption format='luks'>).
    fn qcow2(&mut self, serial: &str, path: &Path, passphrase: &[u8]) {
        let (storage, format) = self.storage(path);
        let secret = self.secret(&format, passphrase);
        self.args.push("-blockdev".into());
        self.args.push(
            serde_json::json!({
                "node-name": format, "read-only": false, "driver": "qcow2",
                "encrypt": {"format": "luks", "key-secret": secret}, "file": storage
            })
            .to_string(),
        );
        self.device(&format, serial);
    }

    /// A raw LUKS image through QEMU's `luks` driver (libvirt's raw disk with <encryption format='luks'>).
    fn luks(&mut self, serial: &str, path: &Path, passphrase: &[u8]) {
        let (storage, format) = self.storage(path);
        let secret = self.secret(&format, passphrase);
        self.args.push("-blockdev".into());
        self.args.push(
            serde_json::json!({
                "node-name": format, "read-only": false, "driver": "luks", "key-secret": secret, "file": storage
            })
            .to_string(),
        );
        self.device(&format, serial);
    }
}

fn random_bytes(n: usize) -> Vec<u8> {
    use std::io::Read;
    let mut bytes = vec![0; n];
    std::fs::File::open("/dev/urandom").unwrap().read_exact(&mut bytes).unwrap();
    bytes
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The host decrypts `image` with cryptadm and reads `path` out of the ext4 inside with debugfs.
fn host_reads(image: &Path, key: &Path, path: &str) -> String {
    require_tool("debugfs", "apt-get install e2fsprogs");
    let out = image.with_extension("decrypted");
    let _ = std::fs::remove_file(&out);
    cryptadm()
        .args(["disk", "decrypt", "--no-progress", "--passphrase-file"])
        .arg(key)
        .arg(image)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let output = Command::new("debugfs").args(["-R", &format!("cat {path}")]).arg(&out).output().unwrap();
    std::fs::remove_file(&out).unwrap();
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn guest_nova_reads_a_qcow2_luks_image_from_luks_format_with_libvirts_secret_objects() {
    let log = shared(&NOVA).guest.case("nova-qcow2");
    assert!(log.contains("known.txt read through QEMU's decryption"), "{log}");
}

#[test]
fn guest_nova_qemus_writes_to_the_qcow2_luks_image_decrypt_with_cryptadm_and_check_clean() {
    let log = shared(&NOVA).guest.case("nova-qcow2");
    assert!(log.contains("guest.txt written"), "{log}");
    let image = shared(&NOVA).images.join("luks-format.qcow2");
    let pass = shared(&NOVA).images.join("pass.txt");
    assert_eq!(host_reads(&image, &pass, "/guest.txt"), "written by the guest on nova-qcow2\n");
    assert_eq!(host_reads(&image, &pass, "/known.txt"), KNOWN);
    let output = Command::new("qemu-img")
        .arg("check")
        .arg("--object")
        .arg(format!("secret,id=sec0,file={}", pass.display()))
        .arg("--image-opts")
        .arg(format!("driver=qcow2,file.filename={},encrypt.key-secret=sec0", image.display()))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success() && stdout.contains("No errors were found"), "qemu-img check: {stdout}");
}

#[test]
fn guest_nova_reads_qcow2_from_disk_convert_same_key_and_new_key() {
    for disk in ["nova-convert-same", "nova-convert-new"] {
        let log = shared(&NOVA).guest.case(disk);
        assert!(log.contains("known.txt read through QEMU's decryption"), "{disk}: {log}");
    }
}

#[test]
fn guest_nova_reads_raw_luks1_through_qemus_luks_driver_and_cryptadm_reads_its_writes() {
    let log = shared(&NOVA).guest.case("nova-luks");
    assert!(log.contains("known.txt read through QEMU's decryption") && log.contains("guest.txt written"), "{log}");
    let image = shared(&NOVA).images.join("luks1.img");
    let pass = shared(&NOVA).images.join("pass.txt");
    assert_eq!(host_reads(&image, &pass, "/guest.txt"), "written by the guest on nova-luks\n");
}

#[test]
fn guest_nova_wrong_passphrase_qemu_refuses_to_start() {
    let images = workdir("nova-wrong");
    let share = workdir("nova-wrong-share");
    let raw = filesystem_image(&images);
    let pass = images.join("pass.txt");
    std::fs::write(&pass, PASSPHRASE).unwrap();
    let qcow2 = images.join("disk.qcow2");
    cryptadm()
        .args(["disk", "luks-format", "--no-progress", "--format", "qcow2", "--pbkdf-force-iterations", "1000"])
        .arg("--passphrase-file")
        .arg(&pass)
        .arg("--from")
        .arg(&raw)
        .arg(&qcow2)
        .assert()
        .success();
    let mut libvirt = Libvirt::new(&images);
    libvirt.qcow2("nova-qcow2", &qcow2, b"not the passphrase");
    std::fs::write(share.join("run.sh"), "exit 0\n").unwrap();
    let guest = boot(share, false, &[], &libvirt.args, Duration::from_secs(120));
    assert_eq!(guest.status, Some(125), "{}", guest.stderr);
    assert!(guest.stderr.contains("Invalid password, cannot unlock any keyslot"), "{}", guest.stderr);
    assert!(!guest.share.join("rc").exists(), "the guest never ran");
}
