//! The cloud-init first boot (`tests/guest/cloud-root.sh`, as `guest_first_boot.rs` boots it) with
//! `bootstrap seal --provider clevis --cloud-init` user-data: the guest reaches the test's real Tang server on the
//! host over QEMU's user networking (the host's loopback is 10.0.2.2 to the guest) and recovers the passphrase
//! with no credentials at all. With the server stopped, cloud-init reports an error and cryptadm's own message,
//! and no plaintext is written. One boot each.
//!
//! The management side seals with the server's advertisement given inline (clevis's `"adv"`), since the host
//! cannot reach 10.0.2.2, the URL recorded for the guest.
#![allow(clippy::print_stderr)] // boot times and consoles, for the record

use crate::support::cryptadm;
use crate::support_first_boot::{
    Report, boot_with_network, cached_root, cidata_seed, copy_root, debugfs, network_and_report_commands,
    occurrences_on_disk, seal, sha256_hex, stripped_cryptadm,
};
use crate::support_guest::workdir;
use crate::support_tang::{Tang, run_with_input};
use std::path::PathBuf;

const PLAINTEXT: &str = "apiVersion: kubeadm.k8s.io/v1beta3\nkind: JoinConfiguration\n\
                         # tang-first-boot-marker-5d1e9b2c7a3f4e60\n";
const MARKER: &str = "tang-first-boot-marker-5d1e9b2c7a3f4e60";

/// A node of the cached cloud root with cryptadm, a network (systemd-networkd, DHCP from QEMU) and the report unit
/// of `guest_first_boot.rs`; its seed's user-data is `bootstrap seal --provider clevis --cloud-init` output bound
/// to `tang` as the guest reaches it.
struct Node {
    dir: PathBuf,
    root: PathBuf,
    seed: PathBuf,
    cached: PathBuf,
}

impl Node {
    fn new(name: &str, tang: &Tang) -> Self {
        let cached = cached_root("cloud-root.sh", &["genisoimage"]);
        let dir = workdir(name);
        let root = copy_root(&cached, &dir);
        let binary = stripped_cryptadm(&dir);
        let files = dir.join("files");
        let commands = network_and_report_commands(&files);
        debugfs(&dir, &root, &format!("write {} /usr/local/bin/cryptadm\n{commands}", binary.display()));
        std::fs::remove_file(&binary).unwrap();

        // The management side: the advertisement fetched here and pinned by thumbprint; the guest's URL recorded.
        let adv = run_with_input("curl", &["-sf", &format!("{}/adv", tang.url())], b"");
        assert!(adv.status.success(), "curl /adv");
        let adv_file = files.join("adv.jws");
        std::fs::write(&adv_file, &adv.stdout).unwrap();
        let config = format!(
            r#"{{"url":"http://10.0.2.2:{}","thp":"{}","adv":"{}"}}"#,
            tang.port,
            tang.thp(),
            adv_file.display()
        );
        let mut cmd = cryptadm();
        cmd.args(["bootstrap", "seal", "--provider", "clevis", "--clevis-pin", "tang", "--clevis-config", &config]);
        let seed = cidata_seed(&dir, name, &seal(cmd, &dir, PLAINTEXT, "--cloud-init"));
        Self { dir, root, seed, cached }
    }

    fn boot(&self) -> Report {
        boot_with_network("tang boot", &self.cached, &self.root, &self.seed, &self.dir.join("console.log"))
    }
}

#[test]
fn guest_tang_first_boot_opens_the_config_and_fails_with_tang_stopped() {
    let trio = crate::support_tang::servers_mut();
    let tang = &trio.tangs[2];
    let up = Node::new("tang-first-boot", tang);
    let report = up.boot();
    assert!(report.text("status").contains("status: done"), "{}", report.console);
    assert!(
        report.get("stat").contains(&"/run/machineadm/machine_config.yaml|600 root:root".to_owned()),
        "{:?}",
        report.get("stat")
    );
    assert_eq!(report.get("sha256"), [sha256_hex(PLAINTEXT)], "the plaintext is the sealed configuration");
    assert_eq!(occurrences_on_disk(&up.root, MARKER), 0, "the plaintext was written to the root filesystem");
    let userdata = std::fs::read_to_string(up.dir.join("seed/user-data")).unwrap();
    assert!(!userdata.contains(MARKER), "the user-data holds no plaintext");

    let down = Node::new("tang-first-boot-stopped", tang);
    tang.stop();
    let report = down.boot();
    assert!(report.text("status").contains("status: error"), "{}", report.console);
    assert!(
        report.get("stat").contains(&"/run/machineadm/machine_config.yaml|missing".to_owned()),
        "{:?}",
        report.get("stat")
    );
    let output = report.text("output");
    assert!(
        output.starts_with("error: ") && output.contains("hint: ") && output.contains("Tang server at http://10.0.2.2"),
        "cryptadm's one-line error and hint in cloud-init-output.log: {output}"
    );
    assert_eq!(occurrences_on_disk(&down.root, MARKER), 0);
}
