//! A real first boot: a Debian bookworm cloud root (mmdebstrap: systemd, udev, cloud-init 22.4, the `cloud`
//! kernel; `tests/guest/cloud-root.sh`) boots under QEMU TCG with a NoCloud `cidata` seed whose user-data is
//! exactly `cryptadm bootstrap seal --cloud-init` output. cloud-init writes the sealed stream and runs `cryptadm
//! bootstrap open`; the image's report unit prints what the tests assert on the serial console. A second boot of
//! the same disk; a node whose passphrase is wrong.
#![allow(clippy::print_stderr)] // boot times and consoles, for the record

use crate::support_first_boot::{
    Report, boot, cached_root, cidata_seed, copy_root, debugfs, guest_file, occurrences_on_disk,
    seal_for_file_provider, sha256_hex, stripped_cryptadm, write_mode,
};
use crate::support_guest::{shared, workdir};
use std::path::PathBuf;
use std::sync::LazyLock;

const PASSPHRASE: &str = "the node's passphrase\n";
const PLAINTEXT: &str = "apiVersion: kubeadm.k8s.io/v1beta3\nkind: JoinConfiguration\n\
                         # first-boot-marker-5d41402abc4b2a76b9719d911017c592\n";
const MARKER: &str = "first-boot-marker-5d41402abc4b2a76b9719d911017c592";

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
        // The cached cloud root (built on first use, about 2 minutes).
        let cached = cached_root("cloud-root.sh", &["genisoimage"]);
        let dir = workdir(name);
        let root = copy_root(&cached, &dir);
        let binary = stripped_cryptadm(&dir);
        let passphrase = dir.join("passphrase");
        write_mode(&passphrase, node_passphrase.as_bytes(), 0o600);
        // Also the report unit (test scaffolding), started after cloud-final.
        let report = dir.join("cryptadm-test-report");
        write_mode(&report, &std::fs::read(guest_file("first-boot-report.sh")).unwrap(), 0o755);
        let unit = dir.join("cryptadm-test-report.service");
        write_mode(&unit, &std::fs::read(guest_file("first-boot-report.service")).unwrap(), 0o644);
        debugfs(
            &dir,
            &root,
            &format!(
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
        );
        std::fs::remove_file(&binary).unwrap();

        // The management side: seal with the right passphrase, for the file provider.
        let userdata = seal_for_file_provider(&dir, PASSPHRASE, PLAINTEXT, "--cloud-init");
        let seed = cidata_seed(&dir, name, &userdata);
        Self { dir, root, seed, cached }
    }

    /// Boots the node once (a full systemd boot; the report unit powers it off) and parses the report.
    fn boot(&self, n: usize) -> Report {
        // No getty on the serial console: its vhangup() revokes the report unit's open /dev/ttyS0, and a report
        // written after the login prompt appeared was lost (seen in CI on a second boot).
        boot(
            &format!("boot {n}"),
            &self.cached,
            &self.root,
            &self.dir.join(format!("console-{n}.log")),
            "root=/dev/vda rw console=ttyS0 quiet systemd.show_status=0 systemd.mask=serial-getty@ttyS0.service",
            &["-drive".into(), format!("file={},format=raw,if=virtio,readonly=on", self.seed.display()).into()],
        )
    }

    /// How many lines of the node's root filesystem image hold `needle`, byte for byte.
    fn occurrences_on_disk(&self, needle: &str) -> usize {
        occurrences_on_disk(&self.root, needle)
    }
}

/// Boots this file's nodes in the background ([`crate::support_guest::warm_up`]).
pub fn warm_up() {
    LazyLock::force(&GOOD);
    LazyLock::force(&WRONG);
}

/// A node whose passphrase is not the one sealed to, booted once.
static WRONG: LazyLock<(Node, Report)> = LazyLock::new(|| {
    let node = Node::new("first-boot-wrong", "not the node's passphrase\n");
    let report = node.boot(1);
    (node, report)
});

/// One node, booted twice.
static GOOD: LazyLock<(Node, Report, Report)> = LazyLock::new(|| {
    let node = Node::new("first-boot", PASSPHRASE);
    let first = node.boot(1);
    let second = node.boot(2);
    (node, first, second)
});

#[test]
fn guest_first_boot_cloud_init_opens_the_sealed_config_to_run_machineadm_0600() {
    let (_, first, _) = shared(&GOOD);
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
    let (node, first, second) = shared(&GOOD);
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
    let (node, report) = shared(&WRONG);
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
