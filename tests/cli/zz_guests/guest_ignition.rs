//! Ignition's real first boot: a Debian bookworm root (mmdebstrap; `tests/guest/ignition-root.sh`) whose initramfs
//! Debian's dracut 059 made with Debian's `ignition` 2.14 module boots under QEMU TCG with `ignition.firstboot
//! ignition.platform.id=qemu` and, as Ignition's QEMU platform reads it, the config in QEMU's firmware config
//! (`-fw_cfg name=opt/com.coreos/config`). The config holds exactly `cryptadm bootstrap seal --ignition` output.
//! Ignition's fetch-offline, kargs, disks, mount and files stages run in the initramfs against the real root on
//! /sysroot; systemd switches root, applies the preset Ignition wrote (its first boot: the image's machine-id is
//! "uninitialized") and runs `cryptadm-bootstrap-open.service`; the image's report unit prints what the tests
//! assert on the serial console.
//!
//! Two nodes, three boots:
//! - a `vault-transit` node: the operator's own config merges the sealed one and adds the machine's Vault
//!   settings (`/etc/cryptadm/vault.env`) as a file; the image has a network and the machine's JWT; the unit logs
//!   in to the suite's OpenBao on the host (10.0.2.2 to the guest). Booted twice: the second boot, without
//!   `ignition.firstboot`, runs no Ignition stage and the unit is skipped (it opens once per machine);
//! - a `file` node whose passphrase is wrong: the unit fails visibly, exit 16.
#![allow(clippy::print_stderr)] // boot times and consoles, for the record

use crate::support_first_boot::{
    Report, boot, cached_root, copy_root, debugfs, guest_file, occurrences_on_disk, seal_for_file_provider,
    seal_for_vault_transit, sha256_hex, stripped_cryptadm, write_mode,
};
use crate::support_guest::{shared, workdir};
use crate::support_openbao::{GUEST_JWT_PATH, dev};
use base64::Engine as _;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::LazyLock;

const PASSPHRASE: &str = "the node's passphrase\n";
const MARKER: &str = "ignition-first-boot-marker-7c6a180b36896a0a8c02787eeafb0e4c";
const PLAINTEXT: &str = "apiVersion: kubeadm.k8s.io/v1beta3\nkind: JoinConfiguration\n\
                         # ignition-first-boot-marker-7c6a180b36896a0a8c02787eeafb0e4c\n";
const UNIT: &str = "cryptadm-bootstrap-open.service";
const STREAM: &str = "/etc/machineadm/machineadm_config.yaml";
const OPENED: &str = "/run/machineadm/machine_config.yaml";
/// What the unit leaves once it opened the stream (src/machineadm/ignition.rs).
const OPENED_STAMP: &str = "/var/lib/machineadm/bootstrap-opened";
/// The unit's optional environment file for `vault-transit`.
const VAULT_ENV: &str = "/etc/cryptadm/vault.env";

/// A node: a copy of the cached root with what the machine image provides written into it (cryptadm, a stripped
/// debug build, at the unit's default path; the test's report unit; the provider's own files), and the Ignition
/// config the machine is given.
struct Node {
    dir: PathBuf,
    root: PathBuf,
    /// `bootstrap seal --ignition` output.
    sealed: PathBuf,
    /// What the machine is given: the sealed config itself, or the operator's that merges it.
    config: PathBuf,
    /// A NIC on QEMU's user network.
    network: bool,
    cached: PathBuf,
}

impl Node {
    /// The image part: the cached root (built on first use: about 2 minutes, mostly mmdebstrap) with cryptadm,
    /// the report unit and what `image` adds (debugfs commands over files it makes in the node's directory).
    fn image(name: &str, image: impl FnOnce(&Path) -> String) -> Self {
        let cached = cached_root("ignition-root.sh", &[]);
        let dir = workdir(name);
        let root = copy_root(&cached, &dir);
        let binary = stripped_cryptadm(&dir);
        let report = dir.join("cryptadm-test-report");
        write_mode(&report, &std::fs::read(guest_file("ignition-report.sh")).unwrap(), 0o755);
        let unit = dir.join("cryptadm-test-report.service");
        write_mode(&unit, &std::fs::read(guest_file("ignition-report.service")).unwrap(), 0o644);
        let provider = image(&dir);
        debugfs(
            &dir,
            &root,
            &format!(
                "write {} /usr/local/bin/cryptadm\n\
                 write {} /usr/local/sbin/cryptadm-test-report\n\
                 write {} /etc/systemd/system/cryptadm-test-report.service\n\
                 symlink /etc/systemd/system/multi-user.target.wants/cryptadm-test-report.service \
                 ../cryptadm-test-report.service\n{provider}",
                binary.display(),
                report.display(),
                unit.display()
            ),
        );
        std::fs::remove_file(&binary).unwrap();
        Self { sealed: dir.join("sealed.ign"), config: dir.join("config.ign"), dir, root, network: false, cached }
    }

    /// Writes the sealed config and the config the machine is given.
    fn given(self, sealed: &[u8], config: &[u8]) -> Self {
        std::fs::write(&self.sealed, sealed).unwrap();
        std::fs::write(&self.config, config).unwrap();
        self
    }

    /// The `file` provider: the image holds `node_passphrase` in /etc/machineadm/passphrase; the machine is given
    /// the sealed config (sealed with the right passphrase) as it is.
    fn file_provider(name: &str, node_passphrase: &str) -> Self {
        let node = Self::image(name, |dir| {
            let passphrase = dir.join("passphrase");
            write_mode(&passphrase, node_passphrase.as_bytes(), 0o600);
            format!(
                "mkdir /etc/machineadm\nset_inode_field /etc/machineadm mode 040700\n\
                 write {} /etc/machineadm/passphrase\n",
                passphrase.display()
            )
        });
        let sealed = seal_for_file_provider(&node.dir, PASSPHRASE, PLAINTEXT, "--ignition");
        node.given(&sealed, &sealed)
    }

    /// The `vault-transit` provider with the machine's JWT for `role`: the image has a network (systemd-networkd,
    /// DHCP from QEMU; the root's mask of wait-online lifted, so that network-online.target, which the unit is
    /// ordered after, means an address) and the JWT; the machine is given [`operator_config`].
    fn vault_transit(name: &str, role: &str) -> Self {
        let bao = dev();
        let mut node = Self::image(name, |dir| {
            let jwt = dir.join("identity.jwt");
            write_mode(&jwt, bao.sign_jwt(role, 1800).as_bytes(), 0o600);
            let network = dir.join("10-guest.network");
            write_mode(&network, b"[Match]\nName=en* eth*\n\n[Network]\nDHCP=ipv4\n", 0o644);
            format!(
                "mkdir /etc/machine\nwrite {} {GUEST_JWT_PATH}\n\
                 write {} /etc/systemd/network/10-guest.network\n\
                 symlink /etc/systemd/system/multi-user.target.wants/systemd-networkd.service \
                 /lib/systemd/system/systemd-networkd.service\n\
                 rm /etc/systemd/system/systemd-networkd-wait-online.service\n\
                 mkdir /etc/systemd/system/network-online.target.wants\n\
                 symlink /etc/systemd/system/network-online.target.wants/systemd-networkd-wait-online.service \
                 /lib/systemd/system/systemd-networkd-wait-online.service\n",
                jwt.display(),
                network.display()
            )
        });
        node.network = true;
        let sealed = seal_for_vault_transit(bao, &node.dir, PLAINTEXT, "--ignition");
        let config = operator_config(&sealed, &bao.guest_vault_env(role));
        let node = node.given(&sealed, &config);
        node.validate();
        node
    }

    /// Ignition's own validator on the config the machine is given, before a boot is spent on it.
    fn validate(&self) {
        let output = Command::new("ignition-validate").arg(&self.config).output().expect("run ignition-validate");
        let said = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        assert!(output.status.success() && said.trim().is_empty(), "ignition-validate: {said}");
    }

    /// The unit's text as the sealed config carries it.
    fn unit_contents(&self) -> String {
        let config: serde_json::Value = serde_json::from_slice(&std::fs::read(&self.sealed).unwrap()).unwrap();
        let units = config["systemd"]["units"].as_array().expect("systemd.units");
        let unit = units.iter().find(|u| u["name"] == UNIT).expect("the unit in the config");
        unit["contents"].as_str().unwrap().to_owned()
    }

    /// Boots the node: the initramfs runs Ignition when `first` (the kernel command line carries
    /// `ignition.firstboot` only then, as an Ignition distribution's boot loader adds it only while its first-boot
    /// flag file exists), systemd switches root and boots; the report unit powers it off. The config stays
    /// offered on fw_cfg on every boot, as a VM's firmware config does. A failed Ignition stage isolates
    /// emergency.target, which `rd.shell=0 rd.emergency=poweroff` turns into a power-off (no report then: the
    /// console says which stage failed).
    fn boot(&self, first: bool) -> Report {
        let label = if first { "ignition first boot" } else { "ignition second boot" };
        let firstboot = if first { " ignition.firstboot" } else { "" };
        // QEMU's option syntax: a comma in the path would end it (workdir() paths have none).
        let mut qemu: Vec<OsString> =
            vec!["-fw_cfg".into(), format!("name=opt/com.coreos/config,file={}", self.config.display()).into()];
        if self.network {
            qemu.extend(["-nic".into(), "user,model=virtio-net-pci".into()]);
        }
        // No getty on the serial console: its vhangup() would revoke the report unit's /dev/ttyS0. No
        // first-boot wizard either (systemd-firstboot would prompt on the console for a locale and wait).
        boot(
            label,
            &self.cached,
            &self.root,
            &self.dir.join(if first { "console-1.log" } else { "console-2.log" }),
            &format!(
                "root=/dev/vda rw console=ttyS0{firstboot} ignition.platform.id=qemu rd.shell=0 \
                 rd.emergency=poweroff systemd.mask=serial-getty@ttyS0.service systemd.firstboot=off"
            ),
            &qemu,
        )
    }

    /// How many times `needle` occurs in the node's root filesystem image, byte for byte.
    fn occurrences_on_disk(&self, needle: &str) -> usize {
        occurrences_on_disk(&self.root, needle)
    }
}

/// The operator's own config, as Butane compiles one that merges the sealed config (`ignition.config.merge`
/// with `local:` or `inline:` becomes a `data:` URL) and writes the machine's Vault settings: `bootstrap seal
/// --ignition` writes the stream and the unit only, and the unit reads `/etc/cryptadm/vault.env` when it exists.
/// The settings hold no secret (the address, the role, where the JWT is); the JWT is the machine's identity and
/// comes with the image or the platform, never in a config the metadata service hands to anyone who asks.
fn operator_config(sealed: &[u8], vault_env: &str) -> Vec<u8> {
    let data_url = |bytes: &[u8]| format!("data:;base64,{}", base64::engine::general_purpose::STANDARD.encode(bytes));
    let config = serde_json::json!({
        "ignition": { "version": "3.3.0", "config": { "merge": [{ "source": data_url(sealed) }] } },
        "storage": {
            "files": [{ "path": VAULT_ENV, "mode": 0o600, "contents": { "source": data_url(vault_env.as_bytes()) } }]
        },
    });
    serde_json::to_vec_pretty(&config).unwrap()
}

/// Boots the Vault node (both boots) in the background ([`crate::support_guest::warm_up`]).
pub fn warm_up_vault() {
    LazyLock::force(&VAULT);
}

/// Boots the wrong-passphrase node in the background ([`crate::support_guest::warm_up`]).
pub fn warm_up_wrong() {
    LazyLock::force(&WRONG);
}

/// The `vault-transit` node for the role that may decrypt, booted twice.
static VAULT: LazyLock<(Node, Report, Report)> = LazyLock::new(|| {
    let node = Node::vault_transit("ignition-vault", "machine");
    let first = node.boot(true);
    let second = node.boot(false);
    (node, first, second)
});

static WRONG: LazyLock<(Node, Report)> = LazyLock::new(|| {
    let node = Node::file_provider("ignition-first-boot-wrong", "not the node's passphrase\n");
    let report = node.boot(true);
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
fn guest_ignition_first_boot_files_stage_writes_the_stream_the_vault_settings_and_the_enabled_unit() {
    let (node, first, _) = shared(&VAULT);
    assert_ignition_wrote_the_config(node, first);
    // Ignition merged the sealed config into the operator's, which wrote the machine's Vault settings.
    let fetch = first.text("ignition-fetch-offline");
    assert!(fetch.contains("fetched referenced config from data url"), "fetch-offline:\n{fetch}");
    let files = first.text("ignition-files");
    assert!(files.contains(&format!("writing file \"/sysroot{VAULT_ENV}\"")), "{files}");
    assert_eq!(first.stat(VAULT_ENV), "600 root:root");
}

#[test]
fn guest_ignition_vault_transit_unit_opens_the_config_0600_once_and_no_plaintext_reaches_the_disk() {
    let (node, first, _) = shared(&VAULT);
    let show = first.text("show");
    for expected in ["ActiveState=active", "Result=success", "ExecMainStatus=0", "ConditionResult=yes"] {
        assert!(show.contains(expected), "{UNIT}: no {expected}:\n{show}\n{}", first.console);
    }
    let journal = first.text("journal");
    assert!(journal.contains("decrypted document 1: EncryptedConfig (provider `vault-transit`"), "{journal}");
    assert_eq!(first.stat("/run/machineadm"), "700 root:root", "the unit's RuntimeDirectory");
    assert_eq!(first.stat(OPENED), "600 root:root", "the opened configuration");
    assert_eq!(first.one("sha256"), sha256_hex(PLAINTEXT.as_bytes()), "the plaintext is the sealed configuration");
    assert!(first.get("failed").is_empty(), "failed units: {:?}", first.get("failed"));
    // Opened: the stamp that skips the unit from now on, in the unit's StateDirectory.
    assert_eq!(first.stat("/var/lib/machineadm"), "700 root:root", "the unit's StateDirectory");
    assert_ne!(first.stat(OPENED_STAMP), "missing", "the unit left no stamp");
    // Only OpenBao could have given the passphrase: the config holds a Transit ciphertext, never the plaintext.
    assert!(!String::from_utf8_lossy(&std::fs::read(&node.config).unwrap()).contains(MARKER));
    // The plaintext lived in /run (tmpfs), never on the root filesystem; the scan does see the stream Ignition
    // wrote (gzip-compressed there, so look for the unit's text, which Ignition wrote as is).
    assert_eq!(node.occurrences_on_disk(MARKER), 0, "the plaintext was written to the root filesystem");
    assert!(node.occurrences_on_disk(&format!("ExecStart=/usr/local/bin/cryptadm bootstrap open --in {STREAM}")) > 0);
}

#[test]
fn guest_ignition_second_boot_runs_no_ignition_stage_skips_the_unit_and_no_plaintext_reaches_the_disk() {
    let (node, first, second) = shared(&VAULT);
    assert!(!second.one("cmdline").contains("ignition.firstboot"), "{}", second.console);
    for stage in ["fetch-offline", "fetch", "kargs", "disks", "mount", "files"] {
        let ran = second.get(&format!("ignition-{stage}"));
        assert!(ran.is_empty(), "Ignition's {stage} stage ran on the second boot: {ran:?}");
    }
    // What the first boot wrote stays: the stream, the unit (still enabled), the Vault settings, the stamp.
    assert_eq!(second.stat(STREAM), "600 root:root");
    assert_eq!(second.one("unit_sha256"), first.one("unit_sha256"));
    assert_eq!(second.one("enabled"), "enabled");
    assert_eq!(second.stat(VAULT_ENV), "600 root:root");
    assert_eq!(second.stat(OPENED_STAMP), first.stat(OPENED_STAMP));
    // The unit opened once: systemd skips it on its condition, so nothing asks OpenBao and no plaintext is
    // put back into /run, and a skipped unit is no failure (units that require it start).
    let show = second.text("show");
    for expected in ["ConditionResult=no", "ActiveState=inactive", "Result=success"] {
        assert!(show.contains(expected), "{UNIT}: no {expected}:\n{show}\n{}", second.console);
    }
    let journal = second.text("journal");
    assert!(journal.contains(&format!("unmet condition check (ConditionPathExists=!{OPENED_STAMP})")), "{journal}");
    assert!(!journal.contains("decrypted document"), "the unit opened the stream again:\n{journal}");
    assert_eq!(second.stat("/run/machineadm"), "missing", "the first boot's /run is gone");
    assert_eq!(second.stat(OPENED), "missing");
    assert!(second.get("failed").is_empty(), "failed units: {:?}", second.get("failed"));
    // After both boots (the persistent journal included), the plaintext is nowhere on the root filesystem.
    assert_eq!(node.occurrences_on_disk(MARKER), 0, "the plaintext was written to the root filesystem");
}

#[test]
fn guest_ignition_wrong_passphrase_the_unit_fails_visibly_with_no_plaintext() {
    let (node, report) = shared(&WRONG);
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
    // No stamp: the next boot tries again (a key manager that was down, a passphrase put right).
    assert_eq!(report.stat(OPENED_STAMP), "missing");
    assert_eq!(node.occurrences_on_disk(MARKER), 0);
}
