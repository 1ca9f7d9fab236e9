//! The cloud-init first boot (`tests/guest/cloud-root.sh`, as `guest_first_boot.rs` boots it) with
//! `bootstrap seal --provider vault-transit --cloud-init` output: the guest reaches the test's real OpenBao on the
//! host over QEMU's user networking (the host's loopback is 10.0.2.2 to the guest, so the dev server's
//! 127.0.0.1 listener serves it unchanged) and logs in with what the machine has, as docs/key-managers.md says: a JWT and
//! `/etc/cryptadm/vault.env`, which the image hands to `cloud-final.service` (which runs runcmd) with a drop-in
//! `EnvironmentFile=`. A machine whose role may decrypt opens the configuration; one whose role may not gets
//! cloud-init error and exit 16. One boot each.
#![allow(clippy::print_stderr)] // boot times and consoles, for the record

use crate::support_first_boot::{
    CloudNode, Report, assert_runcmd_failed, boot_with_network, cidata_seed, occurrences_on_disk,
    seal_for_vault_transit, sha256_hex,
};
use crate::support_guest::shared;
use crate::support_openbao::{GUEST_JWT_PATH, dev};
use std::path::PathBuf;
use std::sync::LazyLock;

const PLAINTEXT: &str = "apiVersion: kubeadm.k8s.io/v1beta3\nkind: JoinConfiguration\n\
                         # vault-first-boot-marker-0f2c8a4de4b7e3c1\n";
const MARKER: &str = "vault-first-boot-marker-0f2c8a4de4b7e3c1";

/// A node of the cached cloud root with what its image provides written into it (debugfs): cryptadm; the Vault
/// environment and the machine's JWT for `role`; the cloud-final drop-in; a network (systemd-networkd, DHCP
/// from QEMU, with cloud-init's own network configuration off); the report unit of `guest_first_boot.rs`.
/// Its seed's user-data is `bootstrap seal --provider vault-transit --cloud-init` output.
struct Node {
    cloud: CloudNode,
    seed: PathBuf,
}

impl Node {
    fn new(name: &str, role: &str) -> Self {
        let bao = dev();
        let cloud = CloudNode::new(name);
        let jwt = cloud.file("identity.jwt", &bao.sign_jwt(role, 1800), 0o600);
        cloud.provision(
            "vault",
            &bao.guest_vault_env(role),
            &format!("mkdir /etc/machine\nwrite {jwt} {GUEST_JWT_PATH}\n"),
        );

        // The management side: seal with a Vault token, for the machine's Transit key.
        let seed = cidata_seed(&cloud.dir, name, &seal_for_vault_transit(bao, &cloud.dir, PLAINTEXT, "--cloud-init"));
        Self { cloud, seed }
    }

    /// Boots the node once; the report unit powers it off.
    fn boot(&self) -> Report {
        let CloudNode { cached, dir, root } = &self.cloud;
        boot_with_network("vault boot", cached, root, &self.seed, &dir.join("console.log"))
    }

    fn occurrences_on_disk(&self, needle: &str) -> usize {
        occurrences_on_disk(&self.cloud.root, needle)
    }
}

/// Boots the node of the role that may decrypt in the background ([`crate::support_guest::warm_up`]).
pub fn warm_up_machine() {
    LazyLock::force(&MACHINE);
}

/// Boots the node of the role without decrypt in the background ([`crate::support_guest::warm_up`]).
pub fn warm_up_denied() {
    LazyLock::force(&DENIED);
}

/// The node of the role that may decrypt with the Transit key, booted once.
static MACHINE: LazyLock<(Node, Report)> = LazyLock::new(|| {
    let node = Node::new("vault-first-boot", "machine");
    let report = node.boot();
    (node, report)
});

/// The node of a role without decrypt, booted once.
static DENIED: LazyLock<(Node, Report)> = LazyLock::new(|| {
    let node = Node::new("vault-first-boot-denied", "nothing");
    let report = node.boot();
    (node, report)
});

#[test]
fn guest_vault_transit_first_boot_machine_role_opens_the_config_0600() {
    let (node, report) = shared(&MACHINE);
    assert_eq!(report.cloud_init_errors(), Vec::<String>::new(), "{}", report.console);
    assert!(
        report.get("stat").contains(&"/run/machineadm/machine_config.yaml|600 root:root".to_owned()),
        "{:?}",
        report.get("stat")
    );
    let digest = sha256_hex(PLAINTEXT);
    assert_eq!(report.get("sha256"), [digest], "the plaintext is the sealed configuration");
    assert_eq!(node.occurrences_on_disk(MARKER), 0, "the plaintext was written to the root filesystem");
    // Only OpenBao could have given the passphrase: the user-data holds a Transit ciphertext, never the plaintext.
    let userdata = std::fs::read_to_string(node.cloud.dir.join("seed/user-data")).unwrap();
    assert!(!userdata.contains(MARKER), "the user-data holds no plaintext");
}

#[test]
fn guest_vault_transit_first_boot_role_without_decrypt_cloud_init_error_16_and_no_plaintext() {
    let (node, report) = shared(&DENIED);
    assert_runcmd_failed(report);
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
