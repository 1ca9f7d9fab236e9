//! A real first boot: a Debian bookworm cloud root (mmdebstrap: systemd, udev, cloud-init 22.4, the `cloud`
//! kernel; `tests/guest/cloud-root.sh`) boots under QEMU TCG with a NoCloud `cidata` seed whose user-data is
//! exactly `cryptadm bootstrap seal --cloud-init` output. cloud-init writes the sealed stream and runs `cryptadm
//! bootstrap open`; the image's report unit prints what the tests assert on the serial console. A second boot of
//! the same disk; a node whose passphrase is wrong.
#![allow(clippy::print_stderr)] // boot times and consoles, for the record

use crate::support::{cryptadm, require_tool};
use crate::support_guest::{harness, workdir};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::LazyLock;
use std::time::Instant;

const PASSPHRASE: &str = "the node's passphrase\n";
const PLAINTEXT: &str = "apiVersion: kubeadm.k8s.io/v1beta3\nkind: JoinConfiguration\n\
                         # first-boot-marker-5d41402abc4b2a76b9719d911017c592\n";
const MARKER: &str = "first-boot-marker-5d41402abc4b2a76b9719d911017c592";

/// What the report unit printed: `key|value` lines (several values per key kept in order).
struct Report {
    lines: BTreeMap<String, Vec<String>>,
    console: String,
}

impl Report {
    fn get(&self, key: &str) -> &[String] {
        self.lines.get(key).map(Vec::as_slice).unwrap_or_default()
    }

    fn one(&self, key: &str) -> &str {
        self.get(key).first().map(String::as_str).unwrap_or_else(|| panic!("no {key} in the report:\n{}", self.console))
    }

    fn status(&self) -> String {
        self.get("status").join("\n")
    }
}

/// The cached cloud root (built on first use, about 2 minutes).
fn cloud_root() -> PathBuf {
    require_tool("mmdebstrap", "bash .ci/deps/guest.sh");
    require_tool("genisoimage", "bash .ci/deps/guest.sh");
    require_tool("debugfs", "apt-get install e2fsprogs");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/guest/cloud-root.sh");
    let started = Instant::now();
    let output = Command::new("bash").arg(script).output().expect("run tests/guest/cloud-root.sh");
    assert!(output.status.success(), "cloud-root.sh failed: {}", String::from_utf8_lossy(&output.stderr));
    eprintln!("cloud root ready after {:?}", started.elapsed());
    PathBuf::from(String::from_utf8(output.stdout).unwrap().trim())
}

/// A node: a copy of the cached root with cryptadm (stripped debug build) and the node's passphrase written
/// into it, and a `cidata` seed whose user-data is `bootstrap seal --cloud-init` output for `sealed_with`.
struct Node {
    dir: PathBuf,
    root: PathBuf,
    seed: PathBuf,
    cached: PathBuf,
}

impl Node {
    fn new(name: &str, node_passphrase: &str) -> Self {
        let cached = cloud_root();
        let dir = workdir(name);
        let root = dir.join("root.img");
        let status = Command::new("cp").arg("--sparse=always").arg(cached.join("root.img")).arg(&root).status();
        assert!(status.unwrap().success(), "copy the cloud root");
        let binary = dir.join("cryptadm");
        let status =
            Command::new("strip").arg("-o").arg(&binary).arg(assert_cmd::cargo::cargo_bin("cryptadm")).status();
        assert!(status.unwrap().success(), "strip cryptadm");
        let passphrase = dir.join("passphrase");
        std::fs::write(&passphrase, node_passphrase).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&passphrase, std::fs::Permissions::from_mode(0o600)).unwrap();
        // debugfs's `write` keeps the host file's mode; the owner is root's (the test runs as root, as CI does).
        // Also the report unit (test scaffolding), started after cloud-final.
        let guest_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/guest");
        let report = dir.join("cryptadm-test-report");
        std::fs::copy(guest_dir.join("first-boot-report.sh"), &report).unwrap();
        std::fs::set_permissions(&report, std::fs::Permissions::from_mode(0o755)).unwrap();
        let unit = dir.join("cryptadm-test-report.service");
        std::fs::copy(guest_dir.join("first-boot-report.service"), &unit).unwrap();
        std::fs::set_permissions(&unit, std::fs::Permissions::from_mode(0o644)).unwrap();
        let commands = dir.join("debugfs.cmds");
        std::fs::write(
            &commands,
            format!(
                "write {} /usr/local/bin/cryptadm\nwrite {} /etc/machineadm/passphrase\n\
                 write {} /usr/local/sbin/cryptadm-test-report\n\
                 write {} /etc/systemd/system/cryptadm-test-report.service\n\
                 symlink /etc/systemd/system/cloud-final.service.wants/cryptadm-test-report.service \
                 ../cryptadm-test-report.service\n",
                binary.display(),
                passphrase.display(),
                report.display(),
                unit.display()
            ),
        )
        .unwrap();
        let output = Command::new("debugfs").arg("-w").arg("-f").arg(&commands).arg(&root).output().unwrap();
        assert!(output.status.success(), "debugfs: {}", String::from_utf8_lossy(&output.stderr));
        std::fs::remove_file(&binary).unwrap();

        // The management side: seal with the right passphrase, for the file provider.
        let seal_pass = dir.join("seal-passphrase");
        std::fs::write(&seal_pass, PASSPHRASE).unwrap();
        let plaintext = dir.join("machine-config.yaml");
        std::fs::write(&plaintext, PLAINTEXT).unwrap();
        let userdata = cryptadm()
            .args(["bootstrap", "seal", "--provider", "file", "--passphrase-uri", "file:///etc/machineadm/passphrase"])
            .arg("--passphrase-file")
            .arg(&seal_pass)
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

    /// Boots the node once (a full systemd boot; the report unit powers it off) and parses the report.
    fn boot(&self, n: usize) -> Report {
        let log = self.dir.join(format!("console-{n}.log"));
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
            // No getty on the serial console: its vhangup() revokes the report unit's open /dev/ttyS0, and a report
            // written after the login prompt appeared was lost (seen in CI on a second boot).
            .args([
                "-append",
                "root=/dev/vda rw console=ttyS0 quiet systemd.show_status=0 systemd.mask=serial-getty@ttyS0.service",
            ])
            .arg("-drive")
            .arg(format!("file={},format=raw,if=virtio", self.root.display()))
            .arg("-drive")
            .arg(format!("file={},format=raw,if=virtio,readonly=on", self.seed.display()))
            .output()
            .unwrap();
        let console = std::fs::read_to_string(&log).unwrap_or_default();
        let elapsed = started.elapsed();
        eprintln!("boot {n}: exit {:?} after {elapsed:?}\n{console}", output.status.code());
        assert!(output.status.success(), "boot {n}: {}\n{console}", String::from_utf8_lossy(&output.stderr));
        let begin = console.find("REPORT-BEGIN").unwrap_or_else(|| panic!("boot {n}: no report:\n{console}"));
        let end = console.find("REPORT-END").unwrap_or_else(|| panic!("boot {n}: no report end:\n{console}"));
        let mut lines: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for line in console[begin..end].lines().skip(1) {
            if let Some((key, value)) = line.trim_end_matches('\r').split_once('|') {
                lines.entry(key.to_owned()).or_default().push(value.to_owned());
            }
        }
        Report { lines, console }
    }

    /// How many lines of the node's root filesystem image hold `needle`, byte for byte (grep: a 2 GiB image
    /// is too slow to scan in a debug build).
    fn occurrences_on_disk(&self, needle: &str) -> usize {
        let output = Command::new("grep").args(["-a", "-c", "-F", needle]).arg(&self.root).output().unwrap();
        assert!(matches!(output.status.code(), Some(0 | 1)), "grep: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap().trim().parse().unwrap()
    }
}

fn sha256_hex(data: &str) -> String {
    use std::io::Write;
    let mut child = Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(data.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout).unwrap().split_whitespace().next().unwrap().to_owned()
}

/// One node, booted twice.
static GOOD: LazyLock<(Node, Report, Report)> = LazyLock::new(|| {
    let node = Node::new("first-boot", PASSPHRASE);
    let first = node.boot(1);
    let second = node.boot(2);
    (node, first, second)
});

#[test]
fn guest_first_boot_cloud_init_opens_the_sealed_config_to_run_machineadm_0600() {
    let (_, first, _) = &*GOOD;
    assert!(first.status().contains("status: done"), "{}", first.console);
    assert!(
        first.get("stat").contains(&"/run/machineadm/machineadm_config.yaml|600 root:root".to_owned()),
        "{:?}",
        first.get("stat")
    );
    assert!(
        first.get("stat").contains(&"/run/machineadm/machine_config.yaml|600 root:root".to_owned()),
        "{:?}",
        first.get("stat")
    );
    assert_eq!(first.one("sha256"), sha256_hex(PLAINTEXT), "the plaintext is the sealed configuration");
    assert_ne!(first.one("runcmd_sem"), "missing");
}

#[test]
fn guest_first_boot_second_boot_reruns_nothing_and_no_plaintext_reaches_the_disk() {
    let (node, first, second) = &*GOOD;
    assert!(second.status().contains("status: done"), "{}", second.console);
    assert_eq!(second.one("instance"), first.one("instance"));
    assert_eq!(second.one("instances"), "1", "one instance directory");
    assert_eq!(second.one("runcmd_sem"), first.one("runcmd_sem"), "runcmd did not run again");
    assert_eq!(second.one("write_files_sem"), first.one("write_files_sem"), "write_files did not run again");
    // The plaintext lived in /run (tmpfs): gone after the reboot, and never on the root filesystem.
    assert!(
        second.get("stat").contains(&"/run/machineadm/machine_config.yaml|missing".to_owned()),
        "{:?}",
        second.get("stat")
    );
    assert_eq!(node.occurrences_on_disk(MARKER), 0, "the plaintext was written to the root filesystem");
    // The scan does see files' contents: cloud-init keeps the user-data (the sealed stream) on the disk.
    let userdata = std::fs::read_to_string(node.dir.join("seed/user-data")).unwrap();
    let sealed = userdata.lines().find_map(|l| l.trim().strip_prefix("content: ")).expect("the sealed stream");
    assert!(node.occurrences_on_disk(&sealed[..48]) > 0, "the user-data is on the disk (the scan works)");
}

#[test]
fn guest_first_boot_wrong_passphrase_cloud_init_error_and_no_plaintext() {
    let node = Node::new("first-boot-wrong", "not the node's passphrase\n");
    let report = node.boot(1);
    assert!(report.status().contains("status: error"), "{}", report.console);
    assert!(
        report.get("stat").contains(&"/run/machineadm/machine_config.yaml|missing".to_owned()),
        "{:?}",
        report.get("stat")
    );
    assert!(
        report.get("stat").contains(&"/run/machineadm/machineadm_config.yaml|600 root:root".to_owned()),
        "{:?}",
        report.get("stat")
    );
    let output = report.get("output").join("\n");
    assert!(
        output.starts_with("error: ") && output.contains("hint: "),
        "cryptadm's one-line error and hint in cloud-init-output.log: {output}"
    );
    let log = report.get("log").join("\n");
    assert!(log.contains("Exit code: 16"), "cryptadm exited 16 (wrong passphrase) in cloud-init.log: {log}");
    assert_eq!(node.occurrences_on_disk(MARKER), 0);
}
