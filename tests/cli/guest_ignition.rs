//! Ignition's real first boot: a Debian bookworm root (mmdebstrap; `tests/guest/ignition-root.sh`) whose initramfs
//! Debian's dracut 059 made with Debian's `ignition` 2.14 module boots under QEMU TCG with `ignition.firstboot
//! ignition.platform.id=qemu` and, as Ignition's QEMU platform reads it, the config in QEMU's firmware config
//! (`-fw_cfg name=opt/com.coreos/config`). The config is exactly `cryptadm bootstrap seal --ignition` output.
//! Ignition's fetch-offline, kargs, disks, mount and files stages run in the initramfs against the real root on
//! /sysroot; systemd switches root, applies the preset Ignition wrote (its first boot: the image's machine-id is
//! "uninitialized") and runs `cryptadm-bootstrap-open.service`; the image's report unit prints what the tests
//! assert on the serial console. A node with the right passphrase, and one whose passphrase is wrong: one boot
//! each.
#![allow(clippy::print_stderr)] // boot times and consoles, for the record

use crate::support_first_boot::{
    Report, boot, cached_root, copy_root, debugfs, guest_file, occurrences_on_disk, seal_for_file_provider, sha256_hex,
    stripped_cryptadm, write_mode,
};
use crate::support_guest::workdir;
use std::path::PathBuf;
use std::sync::LazyLock;

const PASSPHRASE: &str = "the node's passphrase\n";
const MARKER: &str = "ignition-first-boot-marker-7c6a180b36896a0a8c02787eeafb0e4c";
const PLAINTEXT: &str = "apiVersion: kubeadm.k8s.io/v1beta3\nkind: JoinConfiguration\n\
                         # ignition-first-boot-marker-7c6a180b36896a0a8c02787eeafb0e4c\n";
const UNIT: &str = "cryptadm-bootstrap-open.service";
const STREAM: &str = "/etc/machineadm/machineadm_config.yaml";
const OPENED: &str = "/run/machineadm/machine_config.yaml";

/// A node: a copy of the cached root with what the machine image provides written into it (cryptadm, a stripped
/// debug build, at the unit's default path; the node's passphrase; the test's report unit), and the Ignition
/// config: `bootstrap seal --ignition` output, sealed with the right passphrase.
struct Node {
    dir: PathBuf,
    root: PathBuf,
    config: PathBuf,
    cached: PathBuf,
}

impl Node {
    fn new(name: &str, node_passphrase: &str) -> Self {
        // The cached root (built on first use: about 2 minutes, mostly mmdebstrap).
        let cached = cached_root("ignition-root.sh", &[]);
        let dir = workdir(name);
        let root = copy_root(&cached, &dir);
        let binary = stripped_cryptadm(&dir);
        let passphrase = dir.join("passphrase");
        write_mode(&passphrase, node_passphrase.as_bytes(), 0o600);
        let report = dir.join("cryptadm-test-report");
        write_mode(&report, &std::fs::read(guest_file("ignition-report.sh")).unwrap(), 0o755);
        let unit = dir.join("cryptadm-test-report.service");
        write_mode(&unit, &std::fs::read(guest_file("ignition-report.service")).unwrap(), 0o644);
        debugfs(
            &dir,
            &root,
            &format!(
                "mkdir /etc/machineadm\nset_inode_field /etc/machineadm mode 040700\n\
                 write {} /usr/local/bin/cryptadm\nwrite {} /etc/machineadm/passphrase\n\
                 write {} /usr/local/sbin/cryptadm-test-report\n\
                 write {} /etc/systemd/system/cryptadm-test-report.service\n\
                 symlink /etc/systemd/system/multi-user.target.wants/cryptadm-test-report.service \
                 ../cryptadm-test-report.service\n",
                binary.display(),
                passphrase.display(),
                report.display(),
                unit.display()
            ),
        );
        std::fs::remove_file(&binary).unwrap();

        // The management side: seal with the right passphrase, for the file provider.
        let config = dir.join("config.ign");
        std::fs::write(&config, seal_for_file_provider(&dir, PASSPHRASE, PLAINTEXT, "--ignition")).unwrap();
        Self { dir, root, config, cached }
    }

    /// The unit's text as the config carries it.
    fn unit_contents(&self) -> String {
        let config: serde_json::Value = serde_json::from_slice(&std::fs::read(&self.config).unwrap()).unwrap();
        let units = config["systemd"]["units"].as_array().expect("systemd.units");
        let unit = units.iter().find(|u| u["name"] == UNIT).expect("the unit in the config");
        unit["contents"].as_str().unwrap().to_owned()
    }

    /// Boots the node once: the initramfs runs Ignition, systemd switches root and boots; the report unit powers
    /// it off. A failed Ignition stage isolates emergency.target, which `rd.shell=0 rd.emergency=poweroff` turns
    /// into a power-off (no report then: the console says which stage failed).
    fn boot(&self) -> Report {
        // No getty on the serial console: its vhangup() would revoke the report unit's /dev/ttyS0. No
        // first-boot wizard either (systemd-firstboot would prompt on the console for a locale and wait).
        boot(
            "ignition boot",
            &self.cached,
            &self.root,
            &self.dir.join("console.log"),
            "root=/dev/vda rw console=ttyS0 ignition.firstboot ignition.platform.id=qemu rd.shell=0 \
             rd.emergency=poweroff systemd.mask=serial-getty@ttyS0.service systemd.firstboot=off",
            // QEMU's option syntax: a comma in the path would end it (workdir() paths have none).
            &["-fw_cfg".into(), format!("name=opt/com.coreos/config,file={}", self.config.display()).into()],
        )
    }

    /// How many lines of the node's root filesystem image hold `needle`, byte for byte.
    fn occurrences_on_disk(&self, needle: &str) -> usize {
        occurrences_on_disk(&self.root, needle)
    }
}

static GOOD: LazyLock<(Node, Report)> = LazyLock::new(|| {
    let node = Node::new("ignition-first-boot", PASSPHRASE);
    let report = node.boot();
    (node, report)
});

static WRONG: LazyLock<(Node, Report)> = LazyLock::new(|| {
    let node = Node::new("ignition-first-boot-wrong", "not the node's passphrase\n");
    let report = node.boot();
    (node, report)
});

/// Ignition ran in the initramfs on the QEMU platform, read our config from fw_cfg and its files stage wrote
/// what the config asks for into the real root.
fn assert_ignition_wrote_the_config(node: &Node, report: &Report) {
    assert!(report.one("cmdline").contains("ignition.firstboot"), "{}", report.console);
    let fetch = report.text("ignition-fetch-offline");
    assert!(fetch.contains("fetched user config from \"qemu\""), "fetch-offline:\n{fetch}\n{}", report.console);
    assert!(fetch.contains("Ignition finished successfully"), "fetch-offline:\n{fetch}");
    let files = report.text("ignition-files");
    for expected in [
        format!("writing file \"/sysroot{STREAM}\""),
        format!("writing unit \"{UNIT}\" at \"/sysroot/etc/systemd/system/{UNIT}\""),
        format!("setting preset to enabled for \"{UNIT}\""),
        "Ignition finished successfully".to_owned(),
    ] {
        assert!(files.contains(&expected), "the files stage did not log `{expected}`:\n{files}");
    }
    assert!(!files.contains("CRITICAL"), "{files}");
    assert_eq!(report.stat(STREAM), "600 root:root", "the sealed stream");
    assert_eq!(report.stat(&format!("/etc/systemd/system/{UNIT}")), "644 root:root");
    assert_eq!(report.one("unit_sha256"), sha256_hex(node.unit_contents().as_bytes()), "the unit is the config's");
    assert_eq!(report.get("preset"), [format!("enable {UNIT}")]);
    // systemd's first boot applied the preset: the unit is enabled without anyone running systemctl.
    assert_eq!(report.one("enabled"), "enabled");
}

#[test]
fn guest_ignition_first_boot_files_stage_writes_the_stream_and_the_enabled_unit() {
    let (node, report) = &*GOOD;
    assert_ignition_wrote_the_config(node, report);
}

#[test]
fn guest_ignition_first_boot_unit_opens_the_config_0600_and_no_plaintext_reaches_the_disk() {
    let (node, report) = &*GOOD;
    let show = report.text("show");
    for expected in ["ActiveState=active", "Result=success", "ExecMainStatus=0"] {
        assert!(show.contains(expected), "{UNIT}: no {expected}:\n{show}\n{}", report.console);
    }
    let journal = report.text("journal");
    assert!(journal.contains("decrypted document 1: EncryptedConfig (provider `file`"), "{journal}");
    assert_eq!(report.stat("/run/machineadm"), "700 root:root", "the unit's RuntimeDirectory");
    assert_eq!(report.stat(OPENED), "600 root:root", "the opened configuration");
    assert_eq!(report.one("sha256"), sha256_hex(PLAINTEXT.as_bytes()), "the plaintext is the sealed configuration");
    assert!(report.get("failed").is_empty(), "failed units: {:?}", report.get("failed"));
    // The plaintext lived in /run (tmpfs), never on the root filesystem; the scan does see the stream Ignition
    // wrote (gzip-compressed there, so look for the unit's text, which Ignition wrote as is).
    assert_eq!(node.occurrences_on_disk(MARKER), 0, "the plaintext was written to the root filesystem");
    assert!(node.occurrences_on_disk(&format!("ExecStart=/usr/local/bin/cryptadm bootstrap open --in {STREAM}")) > 0);
}

#[test]
fn guest_ignition_wrong_passphrase_the_unit_fails_visibly_with_no_plaintext() {
    let (node, report) = &*WRONG;
    // Ignition itself succeeded: the config is fine, the machine's passphrase is not.
    assert_ignition_wrote_the_config(node, report);
    let show = report.text("show");
    for expected in ["ActiveState=failed", "Result=exit-code", "ExecMainStatus=16"] {
        assert!(show.contains(expected), "{UNIT}: no {expected}:\n{show}\n{}", report.console);
    }
    assert!(report.get("failed").iter().any(|l| l.starts_with(UNIT)), "failed units: {:?}", report.get("failed"));
    let journal = report.text("journal");
    assert!(
        journal.lines().any(|l| l.starts_with("error: ")) && journal.lines().any(|l| l.starts_with("hint: ")),
        "cryptadm's one-line error and hint in the unit's journal:\n{journal}"
    );
    assert!(journal.contains("status=16"), "systemd records exit 16:\n{journal}");
    assert_eq!(report.stat(OPENED), "missing");
    assert_eq!(node.occurrences_on_disk(MARKER), 0);
}
