//! The cloud-init first boot (`tests/guest/cloud-root.sh`, as `guest_first_boot.rs` boots it) with
//! `bootstrap seal --provider aws-kms --cloud-init` user-data, on a guest that looks like an EC2 instance from
//! the inside: the instance metadata service answers at 169.254.169.254:80, where cryptadm looks by default, and
//! gives the instance profile's credentials (IMDSv2: a session token first) and the instance's region; KMS is
//! moto on the host, reached at a private address the way a VPC endpoint is, through `AWS_ENDPOINT_URL` in
//! `/etc/cryptadm/aws.env`, which the image hands to `cloud-final.service` (which runs runcmd) with a drop-in
//! `EnvironmentFile=`, as docs/aws.md says.
//!
//! How the guest's network is built: QEMU's user network may forward a guest address to a host command only
//! inside its own subnet, so the subnet is moved to 169.254.0.0/16 (the guest gets 169.254.0.15 by DHCP) and
//! `guestfwd` relays 169.254.169.254:80 to the loopback IMDS stand-in (`tests/interop/aws/imds_standin.py`) and
//! 169.254.0.10:5000 to the test's `moto_server`, one `socat` per connection. `restrict=on` drops everything else,
//! so nothing the guest sends leaves the machine.
//!
//! The key is named `alias/capi`, so the recorded `kms://BLOB@alias/capi` carries no region and the guest takes
//! the instance's (IMDS `placement/region`): the path a CAPA machine whose user-data names an alias takes.
//! Two nodes booted side by side: one whose instance profile is the `machine` role (kms:Decrypt only) opens the
//! configuration; one whose role is `sealer-node` (no Decrypt) gets cloud-init error, exit 16 and AWS's refusal.
#![allow(clippy::print_stderr)] // boot times and consoles, for the record

use crate::sandbox::Sandbox;
use crate::support::{cryptadm, require_tool};
use crate::support_aws::{AWS_VARIABLES, ImdsStandIn, moto};
use crate::support_first_boot::{
    CloudNode, Report, assert_runcmd_failed, boot_with_nic, cidata_seed, occurrences_on_disk, seal, sha256_hex,
    write_mode,
};
use crate::support_guest::shared;
use cryptadm::machineadm::{AWS_ENV_FILE, UNIT_NAME};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::LazyLock;
use std::time::{Duration, Instant};

const PLAINTEXT: &str = "apiVersion: kubeadm.k8s.io/v1beta3\nkind: JoinConfiguration\n\
                         # aws-first-boot-marker-3b9e0f51c7d24a86\n";
const MARKER: &str = "aws-first-boot-marker-3b9e0f51c7d24a86";
/// The guest's subnet: it must hold the metadata service's address for QEMU to forward it.
const GUEST_NET: &str = "169.254.0.0/16";
/// Where the guest reaches KMS (a VPC endpoint's private address, in effect).
const KMS_IN_GUEST: &str = "169.254.0.10:5000";

/// A node of the cached cloud root with what its image provides written into it (debugfs): cryptadm; the AWS
/// settings an instance profile does not give (`aws.env`: the KMS endpoint only) and the cloud-final drop-in
/// that reads them; a network (systemd-networkd, DHCP from QEMU); the report unit of `guest_first_boot.rs`.
/// Its seed's user-data is `bootstrap seal --provider aws-kms --cloud-init` output; its instance metadata
/// service serves the temporary credentials of `role`.
struct Node {
    cloud: CloudNode,
    seed: PathBuf,
    imds: ImdsStandIn,
}

/// What one boot left.
struct Booted {
    node: CloudNode,
    report: Report,
    /// The requests the node's metadata service saw.
    imds_requests: String,
    elapsed: Duration,
}

impl Node {
    /// Called with `Moto::lock` held.
    fn new(name: &str, role: &str) -> Self {
        let aws = moto();
        let cloud = CloudNode::new(name);
        cloud.provision("aws", &format!("AWS_ENDPOINT_URL=http://{KMS_IN_GUEST}\n"), "");

        // The instance profile: the role's temporary credentials from moto's STS.
        let credentials = cloud.dir.join("imds-credentials.json");
        write_mode(&credentials, aws.oracle(&["assume", role]).as_bytes(), 0o600);
        let imds = ImdsStandIn::start(&credentials, 3600, cloud.dir.join("imds.log"));

        // The management side: the sealer's keys, the region given, the key by its alias.
        let mut cmd = cryptadm();
        aws.env_with(&mut cmd, &aws.sealer);
        cmd.args(["bootstrap", "seal", "--provider", "aws-kms", "--passphrase-uri", "alias/capi"]);
        let seed = cidata_seed(&cloud.dir, name, &seal(cmd, &cloud.dir, PLAINTEXT, "--cloud-init"));
        Self { cloud, seed, imds }
    }

    /// QEMU's `-nic`: the user network moved to [`GUEST_NET`], the metadata service and KMS forwarded, nothing
    /// else let out.
    fn nic(&self) -> String {
        require_tool("socat", "apt-get install socat");
        let relay = |port: u16| format!("cmd:socat STDIO TCP:127.0.0.1:{port}");
        let moto_port = moto().endpoint.rsplit(':').next().unwrap().parse::<u16>().unwrap();
        format!(
            "user,model=virtio-net-pci,net={GUEST_NET},restrict=on,\
             guestfwd=tcp:169.254.169.254:80-{},guestfwd=tcp:{KMS_IN_GUEST}-{}",
            relay(self.imds.port),
            relay(moto_port)
        )
    }

    /// Boots the node once; the report unit powers it off. The metadata service ends with the boot (a static
    /// keeps what is returned, and a static is never dropped).
    fn boot(self, label: &str) -> Booted {
        let started = Instant::now();
        let CloudNode { cached, dir, root } = &self.cloud;
        let report = boot_with_nic(label, cached, root, &self.seed, &dir.join("console.log"), &self.nic());
        let elapsed = started.elapsed();
        eprintln!("{label}: booted in {elapsed:?}");
        Booted { imds_requests: self.imds.requests(), node: self.cloud, report, elapsed }
    }
}

/// Boots this file's nodes in the background ([`crate::support_guest::warm_up`]).
pub fn warm_up() {
    LazyLock::force(&BOOTS);
}

/// Both nodes, booted side by side under one hold of `Moto::lock` (moto's authentication state must not change
/// while a guest signs requests): (the `machine` role's, the `sealer-node` role's).
static BOOTS: LazyLock<(Booted, Booted)> = LazyLock::new(|| {
    let _serial = moto().lock();
    let started = Instant::now();
    let boots = std::thread::scope(|scope| {
        let machine = scope.spawn(|| Node::new("aws-first-boot", "machine").boot("aws boot (machine role)"));
        let denied =
            scope.spawn(|| Node::new("aws-first-boot-denied", "sealer-node").boot("aws boot (no kms:Decrypt)"));
        (machine.join().unwrap(), denied.join().unwrap())
    });
    eprintln!("aws boots: {:?} and {:?}, {:?} side by side", boots.0.elapsed, boots.1.elapsed, started.elapsed());
    boots
});

/// The metadata service was asked as IMDSv2 asks: a session token first, never a GET without it, then the
/// instance profile's role, its credentials and (the key is an alias) the instance's region.
fn assert_imdsv2_credentials_and_region(requests: &str) {
    assert!(requests.starts_with("PUT /latest/api/token token-issued\n"), "{requests}");
    for path in [
        "/latest/meta-data/iam/security-credentials/",
        "/latest/meta-data/iam/security-credentials/cryptadm-node",
        "/latest/meta-data/placement/region",
    ] {
        assert!(requests.contains(&format!("GET {path} token-ok\n")), "no GET {path}: {requests}");
    }
    assert!(!requests.contains("no-token") && !requests.contains("bad-put"), "{requests}");
}

#[test]
fn guest_aws_kms_first_boot_instance_profile_from_imds_opens_the_config_0600() {
    let Booted { node, report, imds_requests, .. } = &shared(&BOOTS).0;
    assert_eq!(report.cloud_init_errors(), Vec::<String>::new(), "{}", report.console);
    assert_eq!(report.stat("/run/machineadm/machine_config.yaml"), "600 root:root");
    assert_eq!(report.get("sha256"), [sha256_hex(PLAINTEXT)], "the plaintext is the sealed configuration");
    assert_imdsv2_credentials_and_region(imds_requests);
    assert_eq!(occurrences_on_disk(&node.root, MARKER), 0, "the plaintext was written to the root filesystem");
    // Only KMS could have given the passphrase: the user-data holds a ciphertext blob under an alias (no region).
    let userdata = std::fs::read_to_string(node.dir.join("seed/user-data")).unwrap();
    assert!(!userdata.contains(MARKER), "the user-data holds no plaintext");
}

#[test]
fn guest_aws_kms_first_boot_role_without_decrypt_cloud_init_error_16_and_no_plaintext() {
    let Booted { node, report, imds_requests, .. } = &shared(&BOOTS).1;
    assert_runcmd_failed(report);
    assert_eq!(report.stat("/run/machineadm/machine_config.yaml"), "missing");
    let output = report.text("output");
    assert!(
        output.starts_with("error: ")
            && output.contains("AccessDenied")
            && output.contains(&format!("http://{KMS_IN_GUEST}"))
            && output.contains("hint: "),
        "cryptadm's one-line error and hint in cloud-init-output.log: {output}"
    );
    let log = report.text("log");
    assert!(log.contains("Exit code: 16"), "cryptadm exited 16 (denied) in cloud-init.log: {log}");
    // The refusal is KMS's word on this role's credentials, which the guest did get from its instance.
    assert_imdsv2_credentials_and_region(imds_requests);
    assert_eq!(occurrences_on_disk(&node.root, MARKER), 0);
}

/// `--ignition` output with aws-kms, without a boot: Ignition's validator accepts it without a word, its engine
/// writes the stream and the unit, and the unit's `ExecStart=`, run as systemd would with the machine's
/// `/etc/cryptadm/aws.env` (the unit's `EnvironmentFile=`), opens it with the instance profile's credentials and
/// region from the IMDSv2 stand-in; a role without kms:Decrypt gets exit 16 and nothing written. On the host the
/// stand-in is on loopback, so `aws.env` also moves the metadata service (`AWS_EC2_METADATA_SERVICE_ENDPOINT`):
/// the boots above prove the default address.
#[test]
fn aws_kms_ignition_config_validates_and_its_unit_opens_with_the_instance_profile() {
    let aws = moto();
    let _serial = aws.lock();
    let sandbox = Sandbox::new();
    let mut cmd = cryptadm();
    aws.env_with(&mut cmd, &aws.sealer);
    cmd.args(["bootstrap", "seal", "--provider", "aws-kms", "--passphrase-uri", "alias/capi"]);
    let config = sandbox.scratch.write("config.ign", seal(cmd, sandbox.scratch.dir.path(), PLAINTEXT, "--ignition"));
    let checked = crate::ignition::validate(&config);
    let said = format!("{}{}", String::from_utf8_lossy(&checked.stdout), String::from_utf8_lossy(&checked.stderr));
    assert!(checked.status.success() && said.is_empty(), "ignition-validate: {said}");
    let root = crate::ignition::run_engine(&sandbox, &config);
    let unit = std::fs::read_to_string(root.join("etc/systemd/system").join(UNIT_NAME)).unwrap();
    assert!(unit.contains(&format!("\nEnvironmentFile=-{AWS_ENV_FILE}\n")), "{unit}");

    let credentials = sandbox.path("imds-credentials.json");
    let imds = ImdsStandIn::start(&credentials, 3600, sandbox.path("imds.log"));
    let machine = sandbox.path("machine");
    std::fs::create_dir_all(machine.join("etc/cryptadm")).unwrap();
    std::fs::write(
        machine.join(AWS_ENV_FILE.trim_start_matches('/')),
        format!(
            "AWS_ENDPOINT_URL={}\nAWS_EC2_METADATA_SERVICE_ENDPOINT=http://127.0.0.1:{}\n",
            aws.endpoint, imds.port
        ),
    )
    .unwrap();
    let run_unit = |role: &str, out: &str| {
        write_mode(&credentials, aws.oracle(&["assume", role]).as_bytes(), 0o600);
        let mut script = Command::new("bash");
        script
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/ignition_exec_start.sh"))
            .arg(&root)
            .arg(UNIT_NAME)
            .arg(env!("CARGO_BIN_EXE_cryptadm"))
            .arg(&machine)
            .arg(sandbox.path(out))
            .env("HOME", sandbox.path("no-home"));
        // Only what the machine's aws.env says reaches cryptadm.
        for name in AWS_VARIABLES {
            script.env_remove(name);
        }
        let output = script.output().unwrap();
        let opened = sandbox.path(out).join("machineadm/machine_config.yaml");
        (output, opened)
    };

    let (output, opened) = run_unit("machine", "out");
    assert!(output.status.success(), "the unit's ExecStart: {}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(sha256_hex(std::fs::read(&opened).unwrap()), sha256_hex(PLAINTEXT));
    assert_eq!(std::fs::metadata(&opened).unwrap().permissions().mode() & 0o777, 0o600);
    assert_imdsv2_credentials_and_region(&imds.requests());

    let (output, opened) = run_unit("sealer-node", "denied-out");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(16), "{stderr}");
    assert!(stderr.contains("AccessDenied") && stderr.contains("hint: "), "{stderr}");
    assert!(!opened.exists(), "nothing written when KMS refuses");
}
