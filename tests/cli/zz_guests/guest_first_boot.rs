//! A real first boot: a Debian bookworm cloud root (mmdebstrap: systemd, udev, cloud-init 22.4, the `cloud`
//! kernel; `tests/guest/cloud-root.sh`) boots under QEMU TCG with a NoCloud `cidata` seed whose user-data is
//! exactly `cryptadm bootstrap seal --cloud-init` output. cloud-init writes the sealed stream and runs `cryptadm
//! bootstrap open`; the image's report unit prints what the tests assert on the serial console. A second boot of
//! the same disk; a node whose passphrase is wrong.
//!
//! The good node also has a TPM (swtpm, QEMU's `-tpmdev emulator`) and a second disk: before its first boot the
//! host enrols the disk with `disk tpm2-enroll` and seals a second document with `bootstrap seal --clevis-pin tpm2`
//! against the same swtpm state; at boot systemd-cryptsetup unlocks the disk from `/etc/crypttab`
//! (`tpm2-device=auto`) and cryptadm opens the document through `/dev/tpmrm0`, on both boots.
#![allow(clippy::print_stderr)] // boot times and consoles, for the record

use crate::support::{cryptadm_process, spawn_watched, stop_watched, wait_for_port};
use crate::support_first_boot::{
    Report, assert_runcmd_failed, boot, cached_root, cidata_seed, copy_root, debugfs, guest_file, occurrences_on_disk,
    seal_for_file_provider, sha256_hex, stripped_cryptadm, write_mode,
};
use crate::support_guest::{shared, workdir};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::LazyLock;
use std::time::Duration;

const PASSPHRASE: &str = "the node's passphrase\n";
const PLAINTEXT: &str = "apiVersion: kubeadm.k8s.io/v1beta3\nkind: JoinConfiguration\n\
                         # first-boot-marker-5d41402abc4b2a76b9719d911017c592\n";
const MARKER: &str = "first-boot-marker-5d41402abc4b2a76b9719d911017c592";
const TPM2_PLAINTEXT: &str = "apiVersion: kubeadm.k8s.io/v1beta3\nkind: JoinConfiguration\n\
                              # tpm2-bound-marker-8f14e45fceea167a5a36dedd4bea2543\n";
const TPM2_MARKER: &str = "tpm2-bound-marker-8f14e45fceea167a5a36dedd4bea2543";
/// The PCR both TPM bindings name. The guest's firmware (SeaBIOS) extends PCRs 0-7 with what it measures at every
/// boot, values the host cannot know when it seals; PCR 23 (application support) is all zeros after
/// TPM2_Startup(CLEAR) and nothing in this boot extends it, so the policy holds on the host and in the guest alike.
const TPM2_PCR: &str = "23";
/// The enrolled disk's plaintext size.
const TPM2_DISK_SIZE: usize = 1 << 20;

/// A node: a copy of the cached root with cryptadm (stripped debug build) and the node's passphrase written
/// into it, and a `cidata` seed whose user-data is `bootstrap seal --cloud-init` output for `sealed_with`.
struct Node {
    dir: PathBuf,
    root: PathBuf,
    seed: PathBuf,
    cached: PathBuf,
    tpm: Option<MachineTpm>,
}

/// A node's TPM: the swtpm state directory that the host seals and enrols against before the first boot and that
/// each boot's swtpm then serves to QEMU, and the LUKS2 disk enrolled with it.
struct MachineTpm {
    state: PathBuf,
    disk: PathBuf,
    /// SHA-256 of the disk's plaintext.
    disk_sha256: String,
}

/// swtpm on `state`, its command port on loopback (`swtpm:host=127.0.0.1,port=P`, for `--tpm2-device`), as
/// tests/cli/support_tpm2.rs starts one; `log` gets its output.
fn host_swtpm(state: &Path, log: &Path) -> (std::process::Child, u16) {
    let port = loop {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        if port < 65535 && std::net::TcpListener::bind(("127.0.0.1", port + 1)).is_ok() {
            break port;
        }
    };
    let child = spawn_watched(
        Path::new("/usr/bin/swtpm"),
        &[
            "socket",
            "--tpm2",
            "--tpmstate",
            &format!("dir={}", state.display()),
            "--server",
            &format!("type=tcp,port={port},bindaddr=127.0.0.1"),
            "--ctrl",
            &format!("type=tcp,port={},bindaddr=127.0.0.1", port + 1),
            "--flags",
            "not-need-init,startup-clear",
        ],
        log,
    );
    wait_for_port(&format!("127.0.0.1:{port}"), Duration::from_secs(20), "swtpm", || {
        std::fs::read_to_string(log).unwrap_or_default()
    });
    (child, port)
}

/// Runs `cmd`, which must succeed; returns its stdout.
fn run_ok(cmd: &mut Command, what: &str) -> String {
    let output = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(output.status.success(), "{what} failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

impl MachineTpm {
    /// The machine's TPM, made on the host as a provisioning step would: a fresh swtpm state in `dir/tpm`, a LUKS2
    /// disk `dir/tpm-disk.img` enrolled with it by `disk tpm2-enroll` (its passphrase keyslot then removed: only the
    /// TPM opens it) and TPM2_PLAINTEXT sealed by `bootstrap seal --clevis-pin tpm2` as `dir/tpm2-sealed.yaml`,
    /// both bound to PCR [`TPM2_PCR`]. Returns it and the debugfs commands that put `/etc/crypttab` (the disk as
    /// `tpmdisk`, `tpm2-device=auto`) and the document (`/etc/machineadm/tpm2-sealed.yaml`) into the root.
    fn provision(dir: &Path) -> (Self, String) {
        crate::support_tpm2::require_tpm2_tools();
        let state = dir.join("tpm");
        std::fs::create_dir_all(&state).unwrap();
        let (mut swtpm, port) = host_swtpm(&state, &dir.join("swtpm-host.log"));
        let tcti = format!("swtpm:host=127.0.0.1,port={port}");

        let pass = dir.join("tpm-disk-pass");
        write_mode(&pass, b"the disk's provisioning passphrase", 0o600);
        let raw: Vec<u8> = (0..TPM2_DISK_SIZE as u32).map(|i| (i.wrapping_mul(2654435761) >> 24) as u8).collect();
        let raw_path = dir.join("tpm-disk.raw");
        std::fs::write(&raw_path, &raw).unwrap();
        let disk = dir.join("tpm-disk.img");
        run_ok(
            cryptadm_process()
                .args(["disk", "luks-format", "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000", "--from"])
                .arg(&raw_path)
                .arg("--key-file")
                .arg(&pass)
                .arg(&disk),
            "disk luks-format --from",
        );
        std::fs::remove_file(&raw_path).unwrap();
        run_ok(
            cryptadm_process()
                .args(["disk", "tpm2-enroll", "--tpm2-pcrs", TPM2_PCR, "--tpm2-device", &tcti, "--key-file"])
                .arg(&pass)
                .arg(&disk),
            "disk tpm2-enroll",
        );
        run_ok(Command::new("cryptsetup").args(["luksKillSlot", "-q"]).arg(&disk).arg("0"), "luksKillSlot 0");
        let uuid = run_ok(Command::new("cryptsetup").arg("luksUUID").arg(&disk), "luksUUID").trim().to_owned();

        let input = dir.join("tpm2-config.yaml");
        std::fs::write(&input, TPM2_PLAINTEXT).unwrap();
        let sealed = dir.join("tpm2-sealed.yaml");
        let config = format!(r#"{{"pcr_ids":"{TPM2_PCR}","pcr_bank":"sha256"}}"#);
        run_ok(
            cryptadm_process()
                .args(["bootstrap", "seal", "--provider", "clevis", "--clevis-pin", "tpm2", "--clevis-config", &config])
                .args(["--tpm2-device", &tcti, "--in"])
                .arg(&input)
                .arg("--out")
                .arg(&sealed),
            "bootstrap seal --clevis-pin tpm2",
        );
        std::fs::remove_file(&input).unwrap();

        // An orderly shutdown, then swtpm saves its state and ends, before a boot's swtpm opens the same state.
        run_ok(
            Command::new("tpm2_shutdown").arg("-c").env("TPM2TOOLS_TCTI", &tcti),
            "tpm2_shutdown of the host's swtpm",
        );
        run_ok(
            Command::new("swtpm_ioctl").arg("-s").args(["--tcp", &format!("127.0.0.1:{}", port + 1)]),
            "swtpm_ioctl -s",
        );
        stop_watched(&mut swtpm);

        let crypttab = dir.join("crypttab");
        write_mode(
            &crypttab,
            format!("tpmdisk UUID={uuid} none tpm2-device=auto,headless=true,nofail\n").as_bytes(),
            0o644,
        );
        let commands = format!(
            "rm /etc/crypttab\nwrite {} /etc/crypttab\nwrite {} /etc/machineadm/tpm2-sealed.yaml\n",
            crypttab.display(),
            sealed.display()
        );
        let disk_sha256 = sha256_hex(&raw);
        (Self { state, disk, disk_sha256 }, commands)
    }

    /// Starts this boot's swtpm on the state (QEMU's control socket `socket`); returns it and QEMU's arguments
    /// for the TPM (a TIS device, as a PC's) and the enrolled disk.
    fn start(&self, socket: &Path, log: &Path) -> (std::process::Child, Vec<std::ffi::OsString>) {
        let _ = std::fs::remove_file(socket);
        let child = spawn_watched(
            Path::new("/usr/bin/swtpm"),
            &[
                "socket",
                "--tpm2",
                "--tpmstate",
                &format!("dir={}", self.state.display()),
                "--ctrl",
                &format!("type=unixio,path={}", socket.display()),
            ],
            log,
        );
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while !socket.exists() {
            assert!(
                std::time::Instant::now() < deadline,
                "swtpm did not make {}: {}",
                socket.display(),
                std::fs::read_to_string(log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let args = [
            "-chardev".into(),
            format!("socket,id=chrtpm,path={}", socket.display()),
            "-tpmdev".into(),
            "emulator,id=tpm0,chardev=chrtpm".into(),
            "-device".into(),
            "tpm-tis,tpmdev=tpm0".into(),
            "-drive".into(),
            format!("file={},format=raw,if=virtio", self.disk.display()),
        ];
        (child, args.into_iter().map(Into::into).collect())
    }
}

impl Node {
    fn new(name: &str, node_passphrase: &str, with_tpm: bool) -> Self {
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
        let (tpm, tpm_commands) = if with_tpm {
            let (tpm, commands) = MachineTpm::provision(&dir);
            (Some(tpm), commands)
        } else {
            (None, String::new())
        };
        debugfs(
            &dir,
            &root,
            &format!(
                "write {} /usr/local/bin/cryptadm\nwrite {} /etc/machineadm/passphrase\n\
                 write {} /usr/local/sbin/cryptadm-test-report\n\
                 write {} /etc/systemd/system/cryptadm-test-report.service\n\
                 symlink /etc/systemd/system/cloud-final.service.wants/cryptadm-test-report.service \
                 ../cryptadm-test-report.service\n{tpm_commands}",
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
        Self { dir, root, seed, cached, tpm }
    }

    /// Boots the node once (a full systemd boot; the report unit powers it off) and parses the report.
    fn boot(&self, n: usize) -> Report {
        let mut extra: Vec<std::ffi::OsString> =
            vec!["-drive".into(), format!("file={},format=raw,if=virtio,readonly=on", self.seed.display()).into()];
        // The TPM's control socket: a short path (a Unix socket's is at most 107 bytes).
        let socket = std::env::temp_dir().join(format!("cryptadm-swtpm-{}-{n}.sock", std::process::id()));
        let mut swtpm = self.tpm.as_ref().map(|tpm| {
            let (child, args) = tpm.start(&socket, &self.dir.join(format!("swtpm-{n}.log")));
            extra.extend(args);
            child
        });
        // No getty on the serial console: its vhangup() revokes the report unit's open /dev/ttyS0, and a report
        // written after the login prompt appeared was lost (seen in CI on a second boot).
        let report = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            boot(
                &format!("boot {n}"),
                &self.cached,
                &self.root,
                &self.dir.join(format!("console-{n}.log")),
                "root=/dev/vda rw console=ttyS0 quiet systemd.show_status=0 systemd.mask=serial-getty@ttyS0.service",
                &extra,
            )
        }));
        if let Some(swtpm) = swtpm.as_mut() {
            stop_watched(swtpm);
            let _ = std::fs::remove_file(&socket);
        }
        report.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    }

    /// How many times `needle` occurs in the node's root filesystem image, byte for byte.
    fn occurrences_on_disk(&self, needle: &str) -> usize {
        occurrences_on_disk(&self.root, needle)
    }
}

/// Boots the good node (both boots) in the background ([`crate::support_guest::warm_up`]).
pub fn warm_up_good() {
    LazyLock::force(&GOOD);
}

/// Boots the wrong-passphrase node in the background ([`crate::support_guest::warm_up`]).
pub fn warm_up_wrong() {
    LazyLock::force(&WRONG);
}

/// A node whose passphrase is not the one sealed to, booted once.
static WRONG: LazyLock<(Node, Report)> = LazyLock::new(|| {
    let node = Node::new("first-boot-wrong", "not the node's passphrase\n", false);
    let report = node.boot(1);
    (node, report)
});

/// One node with a TPM, booted twice.
static GOOD: LazyLock<(Node, Report, Report)> = LazyLock::new(|| {
    let node = Node::new("first-boot", PASSPHRASE, true);
    let first = node.boot(1);
    let second = node.boot(2);
    (node, first, second)
});

#[test]
fn guest_first_boot_cloud_init_opens_the_sealed_config_to_run_machineadm_0600() {
    let (_, first, _) = shared(&GOOD);
    assert_eq!(first.cloud_init_errors(), Vec::<String>::new(), "{}", first.console);
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
    assert_eq!(second.cloud_init_errors(), Vec::<String>::new(), "{}", second.console);
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
    assert_runcmd_failed(report);
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

#[test]
fn guest_first_boot_tpm2_unlocks_the_enrolled_disk_and_opens_the_tpm2_bound_document() {
    let (node, first, second) = shared(&GOOD);
    let tpm = node.tpm.as_ref().expect("the good node has a TPM");
    // Both boots: the TPM's policy holds again after a reboot (PCR 23 back at zeros), and nothing asks for a
    // passphrase (the disk's only keyslot is the TPM's; `headless=true`).
    for (n, report) in [(1, first), (2, second)] {
        assert_eq!(report.one("tpm"), "/dev/tpmrm0", "boot {n}: the guest kernel found the TPM:\n{}", report.console);
        assert_eq!(
            report.one("cryptsetup_unit"),
            "active",
            "boot {n}: systemd-cryptsetup@tpmdisk.service:\n{}\n{}",
            report.text("cryptsetup_log"),
            report.console
        );
        assert_eq!(report.one("tpmdisk"), tpm.disk_sha256, "boot {n}: /dev/mapper/tpmdisk holds the disk's plaintext");
        assert_eq!(report.one("tpm2_open"), "0", "boot {n}: bootstrap open: {}", report.text("tpm2_open_output"));
        assert_eq!(report.one("tpm2_sha256"), sha256_hex(TPM2_PLAINTEXT), "boot {n}: the tpm2-bound document");
        assert_eq!(report.stat("/run/cryptadm-tpm2/config.yaml"), "600 root:root", "boot {n}");
        eprintln!(
            "boot {n}: systemd-cryptsetup@tpmdisk activated in {} ms, bootstrap open took {} ms",
            report.one("cryptsetup_ms"),
            report.one("tpm2_open_ms")
        );
    }
    assert_eq!(node.occurrences_on_disk(TPM2_MARKER), 0, "the tpm2-bound plaintext was written to the root filesystem");
}
