//! The cloud-init first boot (`tests/guest/cloud-root.sh`, as `guest_first_boot.rs` boots it) with
//! `bootstrap seal --provider clevis --cloud-init` user-data: the guest reaches the test's real Tang server on the
//! host over QEMU's user networking (the host's loopback is 10.0.2.2 to the guest) and recovers the passphrase
//! with no credentials at all. With the server stopped, cloud-init reports an error and cryptadm's own message,
//! and no plaintext is written. One boot each, both started in the background at the run's start
//! ([`crate::support_guest::warm_up`]).
//!
//! The management side seals with the server's advertisement given inline (clevis's `"adv"`), since the host
//! cannot reach 10.0.2.2, the URL recorded for the guest. The node that finds no server records the same
//! advertisement and a port where nothing listens: what the guest meets is what a stopped server gives (the
//! connection refused), without stopping a server the other Tang tests share while the node boots.
#![allow(clippy::print_stderr)] // boot times and consoles, for the record

use crate::support::cryptadm;
use crate::support_first_boot::{
    Report, assert_runcmd_failed, boot_with_network, cached_root, cidata_seed, copy_root, debugfs,
    network_and_report_commands, occurrences_on_disk, seal, sha256_hex, stripped_cryptadm,
};
use crate::support_guest::{shared, workdir};
use crate::support_tang::{Tang, run_with_input, servers};
use std::path::PathBuf;
use std::sync::LazyLock;

const PLAINTEXT: &str = "apiVersion: kubeadm.k8s.io/v1beta3\nkind: JoinConfiguration\n\
                         # tang-first-boot-marker-5d1e9b2c7a3f4e60\n";
const MARKER: &str = "tang-first-boot-marker-5d1e9b2c7a3f4e60";

/// A node of the cached cloud root with cryptadm, a network (systemd-networkd, DHCP from QEMU) and the report unit
/// of `guest_first_boot.rs`; its seed's user-data is `bootstrap seal --provider clevis --cloud-init` output bound
/// to `tang`'s keys at `port` on the host, as the guest reaches it.
struct Node {
    dir: PathBuf,
    root: PathBuf,
    seed: PathBuf,
    cached: PathBuf,
}

impl Node {
    fn new(name: &str, tang: &Tang, port: u16) -> Self {
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
        let config =
            format!(r#"{{"url":"http://10.0.2.2:{}","thp":"{}","adv":"{}"}}"#, port, tang.thp(), adv_file.display());
        let mut cmd = cryptadm();
        cmd.args(["bootstrap", "seal", "--provider", "clevis", "--clevis-pin", "tang", "--clevis-config", &config]);
        let seed = cidata_seed(&dir, name, &seal(cmd, &dir, PLAINTEXT, "--cloud-init"));
        Self { dir, root, seed, cached }
    }

    fn boot(&self) -> Report {
        boot_with_network("tang boot", &self.cached, &self.root, &self.seed, &self.dir.join("console.log"))
    }
}

/// Boots the node whose Tang server answers, in the background ([`crate::support_guest::warm_up`]).
pub fn warm_up_reachable() {
    LazyLock::force(&REACHABLE);
}

/// Boots the node that finds no Tang server, in the background ([`crate::support_guest::warm_up`]).
pub fn warm_up_unreachable() {
    LazyLock::force(&UNREACHABLE);
}

/// A node bound to the third server of the shared trio, booted while that server runs (the shared hold keeps the
/// tests that stop or rotate the trio waiting until the boot is over).
static REACHABLE: LazyLock<(Node, Report)> = LazyLock::new(|| {
    let trio = servers();
    let tang = &trio.tangs[2];
    let node = Node::new("tang-first-boot", tang, tang.port);
    let report = node.boot();
    (node, report)
});

/// A node bound to the same server's keys at a port where nothing listens.
static UNREACHABLE: LazyLock<(Node, Report)> = LazyLock::new(|| {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let node = Node::new("tang-first-boot-unreachable", &servers().tangs[2], closed);
    let report = node.boot();
    (node, report)
});

#[test]
fn guest_tang_first_boot_opens_the_config_0600_and_no_plaintext_reaches_the_disk() {
    let (up, report) = shared(&REACHABLE);
    assert_eq!(report.cloud_init_errors(), Vec::<String>::new(), "{}", report.console);
    assert!(
        report.get("stat").contains(&"/run/machineadm/machine_config.yaml|600 root:root".to_owned()),
        "{:?}",
        report.get("stat")
    );
    assert_eq!(report.get("sha256"), [sha256_hex(PLAINTEXT)], "the plaintext is the sealed configuration");
    assert_eq!(occurrences_on_disk(&up.root, MARKER), 0, "the plaintext was written to the root filesystem");
    let userdata = std::fs::read_to_string(up.dir.join("seed/user-data")).unwrap();
    assert!(!userdata.contains(MARKER), "the user-data holds no plaintext");
}

#[test]
fn guest_tang_first_boot_with_no_tang_server_is_a_cloud_init_error_with_our_message_and_no_plaintext() {
    let (down, report) = shared(&UNREACHABLE);
    assert_runcmd_failed(report);
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
