//! The cloud-init first boot (`tests/guest/cloud-root.sh`, as `guest_first_boot.rs` boots it) with
//! `bootstrap seal --provider vault-transit --cloud-init` output: the guest reaches the test's real OpenBao on the
//! host over QEMU's user networking (the host's loopback is 10.0.2.2 to the guest, so the dev server's
//! 127.0.0.1 listener serves it unchanged) and logs in with what the machine has, as the README says: a JWT and
//! `/etc/cryptadm/vault.env`, which the image hands to `cloud-final.service` (which runs runcmd) with a drop-in
//! `EnvironmentFile=`. A machine whose role may decrypt opens the configuration; one whose role may not gets
//! cloud-init error and exit 16. One boot each.
#![allow(clippy::print_stderr)] // boot times and consoles, for the record

use crate::support::{cryptadm, require_tool};
use crate::support_guest::{harness, workdir};
use crate::support_openbao::{OpenBao, dev};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const PLAINTEXT: &str = "apiVersion: kubeadm.k8s.io/v1beta3\nkind: JoinConfiguration\n\
                         # vault-first-boot-marker-0f2c8a4de4b7e3c1\n";
const MARKER: &str = "vault-first-boot-marker-0f2c8a4de4b7e3c1";

struct Report {
    lines: BTreeMap<String, Vec<String>>,
    console: String,
}

impl Report {
    fn get(&self, key: &str) -> &[String] {
        self.lines.get(key).map(Vec::as_slice).unwrap_or_default()
    }

    fn text(&self, key: &str) -> String {
        self.get(key).join("\n")
    }
}

fn cloud_root() -> PathBuf {
    require_tool("mmdebstrap", "bash .ci/deps/guest.sh");
    require_tool("genisoimage", "bash .ci/deps/guest.sh");
    require_tool("debugfs", "apt-get install e2fsprogs");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/guest/cloud-root.sh");
    let output = Command::new("bash").arg(script).output().expect("run tests/guest/cloud-root.sh");
    assert!(output.status.success(), "cloud-root.sh failed: {}", String::from_utf8_lossy(&output.stderr));
    PathBuf::from(String::from_utf8(output.stdout).unwrap().trim())
}

fn write_mode(path: &Path, contents: &str, mode: u32) {
    std::fs::write(path, contents).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// The port of the dev server's `http://127.0.0.1:PORT`.
fn port(bao: &OpenBao) -> u16 {
    bao.addr.rsplit(':').next().unwrap().parse().expect("the dev server's port")
}

/// A node of the cached cloud root with what its image provides written into it (debugfs): cryptadm; the Vault
/// environment and the machine's JWT for `role`; the cloud-final drop-in; a network (systemd-networkd, DHCP
/// from QEMU, with cloud-init's own network configuration off); the report unit of `guest_first_boot.rs`.
/// Its seed's user-data is `bootstrap seal --provider vault-transit --cloud-init` output.
struct Node {
    dir: PathBuf,
    root: PathBuf,
    seed: PathBuf,
    cached: PathBuf,
}

impl Node {
    fn new(name: &str, role: &str) -> Self {
        let bao = dev();
        let cached = cloud_root();
        let dir = workdir(name);
        let root = dir.join("root.img");
        let status = Command::new("cp").arg("--sparse=always").arg(cached.join("root.img")).arg(&root).status();
        assert!(status.unwrap().success(), "copy the cloud root");
        let binary = dir.join("cryptadm");
        let status =
            Command::new("strip").arg("-o").arg(&binary).arg(assert_cmd::cargo::cargo_bin("cryptadm")).status();
        assert!(status.unwrap().success(), "strip cryptadm");
        std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).unwrap();
        let files = dir.join("files");
        std::fs::create_dir_all(&files).unwrap();
        let file = |name: &str, contents: &str, mode: u32| {
            let path = files.join(name);
            write_mode(&path, contents, mode);
            path.display().to_string()
        };
        let env = file(
            "vault.env",
            &format!(
                "VAULT_ADDR=http://10.0.2.2:{}\nCRYPTADM_VAULT_AUTH=jwt\nCRYPTADM_VAULT_ROLE={role}\n\
                 CRYPTADM_VAULT_JWT_FILE=/etc/machine/identity.jwt\n",
                port(bao)
            ),
            0o600,
        );
        let jwt = file("identity.jwt", &bao.sign_jwt(role, 1800), 0o600);
        let dropin = file("cryptadm-vault.conf", "[Service]\nEnvironmentFile=/etc/cryptadm/vault.env\n", 0o644);
        let no_network = file("91-cryptadm-network.cfg", "network:\n  config: disabled\n", 0o644);
        let network = file("10-guest.network", "[Match]\nName=en* eth*\n\n[Network]\nDHCP=ipv4\n", 0o644);
        let guest_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/guest");
        let report = file(
            "cryptadm-test-report",
            &std::fs::read_to_string(guest_dir.join("first-boot-report.sh")).unwrap(),
            0o755,
        );
        let unit = file(
            "cryptadm-test-report.service",
            &std::fs::read_to_string(guest_dir.join("first-boot-report.service")).unwrap(),
            0o644,
        );
        let commands = dir.join("debugfs.cmds");
        std::fs::write(
            &commands,
            format!(
                "write {binary} /usr/local/bin/cryptadm\n\
                 mkdir /etc/cryptadm\nwrite {env} /etc/cryptadm/vault.env\n\
                 mkdir /etc/machine\nwrite {jwt} /etc/machine/identity.jwt\n\
                 mkdir /etc/systemd/system/cloud-final.service.d\n\
                 write {dropin} /etc/systemd/system/cloud-final.service.d/cryptadm-vault.conf\n\
                 write {no_network} /etc/cloud/cloud.cfg.d/91-cryptadm-network.cfg\n\
                 write {network} /etc/systemd/network/10-guest.network\n\
                 symlink /etc/systemd/system/multi-user.target.wants/systemd-networkd.service \
                 /lib/systemd/system/systemd-networkd.service\n\
                 mkdir /etc/systemd/system/network-online.target.wants\n\
                 symlink /etc/systemd/system/network-online.target.wants/systemd-networkd-wait-online.service \
                 /lib/systemd/system/systemd-networkd-wait-online.service\n\
                 write {report} /usr/local/sbin/cryptadm-test-report\n\
                 write {unit} /etc/systemd/system/cryptadm-test-report.service\n\
                 symlink /etc/systemd/system/cloud-final.service.wants/cryptadm-test-report.service \
                 ../cryptadm-test-report.service\n",
                binary = binary.display(),
            ),
        )
        .unwrap();
        let output = Command::new("debugfs").arg("-w").arg("-f").arg(&commands).arg(&root).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        // debugfs goes on after a failed command and still exits 0: its complaints are on stderr.
        assert!(
            output.status.success() && !stderr.lines().any(|l| l.contains(':') && !l.starts_with("debugfs ")),
            "debugfs: {stderr}"
        );
        std::fs::remove_file(&binary).unwrap();

        // The management side: seal with a Vault token, for the machine's Transit key.
        let plaintext = dir.join("machine-config.yaml");
        std::fs::write(&plaintext, PLAINTEXT).unwrap();
        let userdata = cryptadm()
            .envs(bao.env())
            .env("VAULT_TOKEN", &bao.root_token)
            .args([
                "bootstrap",
                "seal",
                "--provider",
                "vault-transit",
                "--passphrase-uri",
                "vault-transit://transit/capi",
            ])
            .arg("--in")
            .arg(&plaintext)
            .arg("--cloud-init")
            .output()
            .unwrap();
        assert!(userdata.status.success(), "seal: {}", String::from_utf8_lossy(&userdata.stderr));
        std::fs::remove_file(&plaintext).unwrap();
        let seed_dir = dir.join("seed");
        std::fs::create_dir_all(&seed_dir).unwrap();
        std::fs::write(seed_dir.join("user-data"), &userdata.stdout).unwrap();
        std::fs::write(seed_dir.join("meta-data"), format!("instance-id: iid-{name}\nlocal-hostname: {name}\n"))
            .unwrap();
        let seed = dir.join("seed.iso");
        let output = Command::new("genisoimage")
            .args(["-quiet", "-volid", "cidata", "-joliet", "-rock", "-output"])
            .arg(&seed)
            .arg(seed_dir.join("user-data"))
            .arg(seed_dir.join("meta-data"))
            .output()
            .unwrap();
        assert!(output.status.success(), "genisoimage: {}", String::from_utf8_lossy(&output.stderr));
        Self { dir, root, seed, cached }
    }

    /// Boots the node once with a NIC on QEMU's user network; the report unit powers it off.
    fn boot(&self) -> Report {
        let log = self.dir.join("console.log");
        let started = Instant::now();
        let output = Command::new("bash")
            .arg(harness())
            .args(["qemu", "--timeout", "420", "--mem", "1024"])
            .arg(&log)
            .arg("--")
            .arg("-kernel")
            .arg(self.cached.join("vmlinuz"))
            .arg("-initrd")
            .arg(self.cached.join("initrd.img"))
            .args([
                "-append",
                "root=/dev/vda rw console=ttyS0 quiet systemd.show_status=0 systemd.mask=serial-getty@ttyS0.service",
            ])
            .arg("-drive")
            .arg(format!("file={},format=raw,if=virtio", self.root.display()))
            .arg("-drive")
            .arg(format!("file={},format=raw,if=virtio,readonly=on", self.seed.display()))
            .args(["-nic", "user,model=virtio-net-pci"])
            .output()
            .unwrap();
        let console = std::fs::read_to_string(&log).unwrap_or_default();
        eprintln!("vault boot: exit {:?} after {:?}\n{console}", output.status.code(), started.elapsed());
        assert!(output.status.success(), "boot: {}\n{console}", String::from_utf8_lossy(&output.stderr));
        let begin = console.find("REPORT-BEGIN").unwrap_or_else(|| panic!("no report:\n{console}"));
        let end = console.find("REPORT-END").unwrap_or_else(|| panic!("no report end:\n{console}"));
        let mut lines: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for line in console[begin..end].lines().skip(1) {
            if let Some((key, value)) = line.trim_end_matches('\r').split_once('|') {
                lines.entry(key.to_owned()).or_default().push(value.to_owned());
            }
        }
        Report { lines, console }
    }

    fn occurrences_on_disk(&self, needle: &str) -> usize {
        let output = Command::new("grep").args(["-a", "-c", "-F", needle]).arg(&self.root).output().unwrap();
        assert!(matches!(output.status.code(), Some(0 | 1)), "grep: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap().trim().parse().unwrap()
    }
}

#[test]
fn guest_vault_transit_first_boot_machine_role_opens_the_config_0600() {
    let node = Node::new("vault-first-boot", "machine");
    let report = node.boot();
    assert!(report.text("status").contains("status: done"), "{}", report.console);
    assert!(
        report.get("stat").contains(&"/run/machineadm/machine_config.yaml|600 root:root".to_owned()),
        "{:?}",
        report.get("stat")
    );
    let digest: String = Sha256::digest(PLAINTEXT.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(report.get("sha256"), [digest], "the plaintext is the sealed configuration");
    assert_eq!(node.occurrences_on_disk(MARKER), 0, "the plaintext was written to the root filesystem");
    // Only OpenBao could have given the passphrase: the user-data holds a Transit ciphertext, never the plaintext.
    let userdata = std::fs::read_to_string(node.dir.join("seed/user-data")).unwrap();
    assert!(!userdata.contains(MARKER), "the user-data holds no plaintext");
}

#[test]
fn guest_vault_transit_first_boot_role_without_decrypt_cloud_init_error_16_and_no_plaintext() {
    let node = Node::new("vault-first-boot-denied", "nothing");
    let report = node.boot();
    assert!(report.text("status").contains("status: error"), "{}", report.console);
    assert!(
        report.get("stat").contains(&"/run/machineadm/machine_config.yaml|missing".to_owned()),
        "{:?}",
        report.get("stat")
    );
    let output = report.text("output");
    assert!(
        output.starts_with("error: ") && output.contains("hint: ") && output.contains("permission denied"),
        "cryptadm's one-line error and hint in cloud-init-output.log: {output}"
    );
    let log = report.text("log");
    assert!(log.contains("Exit code: 16"), "cryptadm exited 16 (denied) in cloud-init.log: {log}");
    assert_eq!(node.occurrences_on_disk(MARKER), 0);
}
