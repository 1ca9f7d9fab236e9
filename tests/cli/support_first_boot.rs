//! What the real first-boot tests (`guest_first_boot.rs`, `guest_vault.rs`, `guest_ignition.rs`) share: the cached
//! Debian roots their scripts build, a node's copy of one with files written into it by debugfs (cryptadm itself a
//! stripped debug build), a NoCloud `cidata` seed, one full boot through the harness's `qemu` subcommand and the
//! `REPORT-BEGIN`..`REPORT-END` lines the image's report unit prints on the serial console.
#![allow(dead_code, clippy::print_stderr)] // boot times and consoles, for the record

use crate::support::{cryptadm, require_tool};
use crate::support_guest::harness;
use crate::support_openbao::OpenBao;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// What the report unit printed: `key|value` lines (several values per key kept in order).
pub struct Report {
    pub lines: BTreeMap<String, Vec<String>>,
    pub console: String,
}

impl Report {
    /// The `key|value` lines between `REPORT-BEGIN` and `REPORT-END` of `console`; `label` names the boot in the
    /// panic when there is no report.
    pub fn parse(console: String, label: &str) -> Self {
        let begin = console.find("REPORT-BEGIN").unwrap_or_else(|| panic!("{label}: no report:\n{console}"));
        let end = console.find("REPORT-END").unwrap_or_else(|| panic!("{label}: no report end:\n{console}"));
        let mut lines: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for line in console[begin..end].lines().skip(1) {
            if let Some((key, value)) = line.trim_end_matches('\r').split_once('|') {
                lines.entry(key.to_owned()).or_default().push(value.to_owned());
            }
        }
        Self { lines, console }
    }

    pub fn get(&self, key: &str) -> &[String] {
        self.lines.get(key).map(Vec::as_slice).unwrap_or_default()
    }

    pub fn one(&self, key: &str) -> &str {
        self.get(key).first().map(String::as_str).unwrap_or_else(|| panic!("no {key} in the report:\n{}", self.console))
    }

    pub fn text(&self, key: &str) -> String {
        self.get(key).join("\n")
    }

    /// The errors of cloud-init's stages on this boot, as cloud-init recorded them (`/run/cloud-init/result.json`,
    /// `v1.errors`): none is what `cloud-init status` reports as "done", any as "error". Panics when cloud-init
    /// recorded no result (it did not finish).
    pub fn cloud_init_errors(&self) -> Vec<String> {
        let result = self.text("result");
        let result: serde_json::Value = serde_json::from_str(&result)
            .unwrap_or_else(|e| panic!("cloud-init's result.json ({e}):\n{}", self.console));
        let errors = result["v1"]["errors"]
            .as_array()
            .unwrap_or_else(|| panic!("no v1.errors in cloud-init's result.json:\n{}", self.console));
        errors.iter().map(|error| error.as_str().unwrap_or_default().to_owned()).collect()
    }

    /// The `stat|PATH|MODE OWNER` line for `path`.
    pub fn stat(&self, path: &str) -> &str {
        let prefix = format!("{path}|");
        self.get("stat")
            .iter()
            .find_map(|line| line.strip_prefix(&prefix))
            .unwrap_or_else(|| panic!("no stat of {path} in the report:\n{}", self.console))
    }
}

/// cloud-init reported an error on `report`'s boot, and it was the user-data's `runcmd` (the `scripts-user` module
/// runs it) that failed: cryptadm's exit, not the datasource or a module of the image.
pub fn assert_runcmd_failed(report: &Report) {
    let errors = report.cloud_init_errors();
    assert!(
        !errors.is_empty() && errors.iter().all(|error| error.contains("scripts-user")),
        "cloud-init's errors {errors:?}, expected runcmd's (scripts-user) only:\n{}",
        report.console
    );
}

/// `tests/guest/NAME`.
pub fn guest_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/guest").join(name)
}

/// The cached root that `tests/guest/SCRIPT` builds on first use (about 2 minutes, mostly mmdebstrap) and prints
/// the directory of (`root.img`, `vmlinuz`, `initrd.img`); `tools` are what the test needs besides mmdebstrap
/// and debugfs.
pub fn cached_root(script: &str, tools: &[&str]) -> PathBuf {
    require_tool("mmdebstrap", "bash .ci/deps/guest.sh");
    for tool in tools {
        require_tool(tool, "bash .ci/deps/guest.sh");
    }
    require_tool("debugfs", "apt-get install e2fsprogs");
    let started = Instant::now();
    let output = Command::new("bash").arg(guest_file(script)).output().expect("run the root script");
    assert!(output.status.success(), "{script} failed: {}", String::from_utf8_lossy(&output.stderr));
    eprintln!("{script}: root ready after {:?}", started.elapsed());
    PathBuf::from(String::from_utf8(output.stdout).unwrap().trim())
}

/// A sparse copy of the cached `root.img` as `dir/root.img`.
pub fn copy_root(cached: &Path, dir: &Path) -> PathBuf {
    let root = dir.join("root.img");
    let status = Command::new("cp").arg("--sparse=always").arg(cached.join("root.img")).arg(&root).status();
    assert!(status.unwrap().success(), "copy the cached root {}", cached.display());
    root
}

/// The debug cryptadm, stripped (a debug build is too big to copy into a root quickly), as `dir/cryptadm`, 0755.
pub fn stripped_cryptadm(dir: &Path) -> PathBuf {
    let binary = dir.join("cryptadm");
    let status = Command::new("strip").arg("-o").arg(&binary).arg(assert_cmd::cargo::cargo_bin("cryptadm")).status();
    assert!(status.unwrap().success(), "strip cryptadm");
    std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).unwrap();
    binary
}

/// Writes `contents` to `path` with `mode`.
pub fn write_mode(path: &Path, contents: &[u8], mode: u32) {
    std::fs::write(path, contents).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Runs debugfs's `commands` (written to `dir/debugfs.cmds`) on the ext4 image `root`. debugfs's `write` keeps
/// the host file's mode; the owner is root's (the test runs as root, as CI does).
pub fn debugfs(dir: &Path, root: &Path, commands: &str) {
    let file = dir.join("debugfs.cmds");
    std::fs::write(&file, commands).unwrap();
    let output = Command::new("debugfs").arg("-w").arg("-f").arg(&file).arg(root).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    // debugfs goes on after a failed command and still exits 0: its complaints are on stderr.
    assert!(
        output.status.success() && !stderr.lines().any(|l| l.contains(':') && !l.starts_with("debugfs ")),
        "debugfs: {stderr}"
    );
}

/// Runs `cmd`, a `bootstrap seal` with its provider's flags, on `plaintext` (in `dir/machine-config.yaml` for the
/// while) with the output `format` (`--cloud-init`, `--ignition`); returns what it printed.
pub fn seal(mut cmd: assert_cmd::Command, dir: &Path, plaintext: &str, format: &str) -> Vec<u8> {
    let file = dir.join("machine-config.yaml");
    std::fs::write(&file, plaintext).unwrap();
    let output = cmd.arg("--in").arg(&file).arg(format).output().unwrap();
    assert!(output.status.success(), "seal: {}", String::from_utf8_lossy(&output.stderr));
    std::fs::remove_file(&file).unwrap();
    output.stdout
}

/// The management side for the file provider: `plaintext` sealed with `passphrase` for a node that reads its
/// passphrase from `/etc/machineadm/passphrase`, in the output `format`.
pub fn seal_for_file_provider(dir: &Path, passphrase: &str, plaintext: &str, format: &str) -> Vec<u8> {
    let seal_pass = dir.join("seal-passphrase");
    std::fs::write(&seal_pass, passphrase).unwrap();
    let mut cmd = cryptadm();
    cmd.args(["bootstrap", "seal", "--provider", "file", "--passphrase-uri", "file:///etc/machineadm/passphrase"])
        .arg("--passphrase-file")
        .arg(&seal_pass);
    seal(cmd, dir, plaintext, format)
}

/// The management side for the `vault-transit` provider: `plaintext` sealed under `bao`'s Transit key
/// `transit/capi` (with its root token) for a node that logs in to it, in the output `format`.
pub fn seal_for_vault_transit(bao: &OpenBao, dir: &Path, plaintext: &str, format: &str) -> Vec<u8> {
    let mut cmd = cryptadm();
    cmd.envs(bao.env()).env("VAULT_TOKEN", &bao.root_token).args([
        "bootstrap",
        "seal",
        "--provider",
        "vault-transit",
        "--passphrase-uri",
        "vault-transit://transit/capi",
    ]);
    seal(cmd, dir, plaintext, format)
}

/// A NoCloud `cidata` seed `dir/seed.iso` with `user_data` (kept as `dir/seed/user-data`) and the instance `name`.
pub fn cidata_seed(dir: &Path, name: &str, user_data: &[u8]) -> PathBuf {
    let seed_dir = dir.join("seed");
    std::fs::create_dir_all(&seed_dir).unwrap();
    std::fs::write(seed_dir.join("user-data"), user_data).unwrap();
    std::fs::write(seed_dir.join("meta-data"), format!("instance-id: iid-{name}\nlocal-hostname: {name}\n")).unwrap();
    let seed = dir.join("seed.iso");
    let output = Command::new("genisoimage")
        .args(["-quiet", "-volid", "cidata", "-joliet", "-rock", "-output"])
        .arg(&seed)
        .arg(seed_dir.join("user-data"))
        .arg(seed_dir.join("meta-data"))
        .output()
        .unwrap();
    assert!(output.status.success(), "genisoimage: {}", String::from_utf8_lossy(&output.stderr));
    seed
}

/// Boots the cached root's kernel and initramfs once with the kernel command line `append`, the node's `root`
/// image as the first virtio disk and `extra` QEMU arguments (the harness's `qemu` subcommand: 1 GiB, at most 15
/// minutes, the console in `log`: a boot under TCG takes minutes, the boots run beside the rest of the suite,
/// and on a loaded 2-core builder one took over 7), and parses the report the image's unit prints before it powers off. `label`
/// names the boot in the log and in failures.
pub fn boot(label: &str, cached: &Path, root: &Path, log: &Path, append: &str, extra: &[OsString]) -> Report {
    let started = Instant::now();
    let output = Command::new("bash")
        .arg(harness())
        .args(["qemu", "--timeout", "900", "--mem", "1024"])
        .arg(log)
        .arg("--")
        .arg("-kernel")
        .arg(cached.join("vmlinuz"))
        .arg("-initrd")
        .arg(cached.join("initrd.img"))
        .arg("-append")
        .arg(append)
        .arg("-drive")
        .arg(format!("file={},format=raw,if=virtio", root.display()))
        .args(extra)
        .output()
        .unwrap();
    let console = std::fs::read_to_string(log).unwrap_or_default();
    let elapsed = started.elapsed();
    eprintln!("{label}: exit {:?} after {elapsed:?}\n{console}", output.status.code());
    assert!(output.status.success(), "{label}: {}\n{console}", String::from_utf8_lossy(&output.stderr));
    Report::parse(console, label)
}

/// How many times `needle` occurs in the root filesystem image `root`, byte for byte. Only the image's data is
/// read: a 2 GiB image is mostly holes (about 0.5 GiB written), and reading the holes as zeros took `grep` 5-10
/// CPU s per scan (kernel time), against a third of a second for the data. A needle has no NUL byte, so no
/// occurrence can span a hole.
pub fn occurrences_on_disk(root: &Path, needle: &str) -> usize {
    use rustix::fs::SeekFrom;
    use std::io::Read;
    let needle = needle.as_bytes();
    assert!(!needle.is_empty() && !needle.contains(&0), "a needle without NUL bytes");
    let finder = memchr::memmem::Finder::new(needle);
    let mut image = std::fs::File::open(root).unwrap_or_else(|e| panic!("open {}: {e}", root.display()));
    let size = image.metadata().unwrap().len();
    let mut buffer = vec![0u8; 4 << 20];
    let (mut found, mut offset) = (0, 0);
    while offset < size {
        let data = match rustix::fs::seek(&image, SeekFrom::Data(offset)) {
            Ok(data) => data,
            Err(rustix::io::Errno::NXIO) => break,
            Err(e) => panic!("SEEK_DATA in {}: {e}", root.display()),
        };
        let hole = rustix::fs::seek(&image, SeekFrom::Hole(data)).unwrap();
        rustix::fs::seek(&image, SeekFrom::Start(data)).unwrap();
        // An extent is read in pieces; the last `needle.len() - 1` bytes of one piece start the next, so that an
        // occurrence across two pieces is counted once.
        let (mut left, mut kept) = (hole - data, 0);
        while left > 0 {
            let want = (buffer.len() - kept).min(left as usize);
            image.read_exact(&mut buffer[kept..kept + want]).unwrap();
            left -= want as u64;
            let filled = kept + want;
            found += finder.find_iter(&buffer[..filled]).count();
            kept = (needle.len() - 1).min(filled);
            buffer.copy_within(filled - kept..filled, 0);
        }
        offset = hole;
    }
    found
}

/// The SHA-256 of `data` in lowercase hex.
pub fn sha256_hex(data: impl AsRef<[u8]>) -> String {
    Sha256::digest(data.as_ref()).iter().map(|b| format!("{b:02x}")).collect()
}

/// The debugfs commands that give a node of the cloud root a network (systemd-networkd, DHCP from QEMU's user
/// network, cloud-init's own network configuration off) and the report unit (run after cloud-final), with the
/// files they write made under `files`.
pub fn network_and_report_commands(files: &Path) -> String {
    std::fs::create_dir_all(files).unwrap();
    let file = |name: &str, contents: &str, mode: u32| {
        let path = files.join(name);
        write_mode(&path, contents.as_bytes(), mode);
        path.display().to_string()
    };
    let no_network = file("91-cryptadm-network.cfg", "network:\n  config: disabled\n", 0o644);
    let network = file("10-guest.network", "[Match]\nName=en* eth*\n\n[Network]\nDHCP=ipv4\n", 0o644);
    let report =
        file("cryptadm-test-report", &std::fs::read_to_string(guest_file("first-boot-report.sh")).unwrap(), 0o755);
    let unit = file(
        "cryptadm-test-report.service",
        &std::fs::read_to_string(guest_file("first-boot-report.service")).unwrap(),
        0o644,
    );
    format!(
        "write {no_network} /etc/cloud/cloud.cfg.d/91-cryptadm-network.cfg\n\
         write {network} /etc/systemd/network/10-guest.network\n\
         symlink /etc/systemd/system/multi-user.target.wants/systemd-networkd.service \
         /lib/systemd/system/systemd-networkd.service\n\
         mkdir /etc/systemd/system/network-online.target.wants\n\
         symlink /etc/systemd/system/network-online.target.wants/systemd-networkd-wait-online.service \
         /lib/systemd/system/systemd-networkd-wait-online.service\n\
         write {report} /usr/local/sbin/cryptadm-test-report\n\
         write {unit} /etc/systemd/system/cryptadm-test-report.service\n\
         symlink /etc/systemd/system/cloud-final.service.wants/cryptadm-test-report.service \
         ../cryptadm-test-report.service\n"
    )
}

/// Boots a node of the cloud root once, its NoCloud `seed` attached and a NIC on QEMU's user network (the
/// host's loopback is 10.0.2.2 to the guest); the report unit powers it off.
pub fn boot_with_network(label: &str, cached: &Path, root: &Path, seed: &Path, log: &Path) -> Report {
    boot_with_nic(label, cached, root, seed, log, "user,model=virtio-net-pci")
}

/// [`boot_with_network`] with the NIC that QEMU's `-nic` option `nic` describes (another user network, forwards).
pub fn boot_with_nic(label: &str, cached: &Path, root: &Path, seed: &Path, log: &Path, nic: &str) -> Report {
    boot(
        label,
        cached,
        root,
        log,
        "root=/dev/vda rw console=ttyS0 quiet systemd.show_status=0 systemd.mask=serial-getty@ttyS0.service",
        &[
            "-drive".into(),
            format!("file={},format=raw,if=virtio,readonly=on", seed.display()).into(),
            "-nic".into(),
            nic.into(),
        ],
    )
}

/// A node of the cached cloud root for a key manager's first boot (`guest_vault.rs`, `guest_aws.rs`): its own copy
/// of the root in `workdir(NAME)`, into which [`CloudNode::provision`] writes what the machine image provides.
pub struct CloudNode {
    pub cached: PathBuf,
    pub dir: PathBuf,
    pub root: PathBuf,
}

impl CloudNode {
    /// A fresh work directory `name` with a copy of the cached cloud root (built on first use).
    pub fn new(name: &str) -> Self {
        let cached = cached_root("cloud-root.sh", &["genisoimage"]);
        let dir = crate::support_guest::workdir(name);
        let root = copy_root(&cached, &dir);
        Self { cached, dir, root }
    }

    /// A file for the image, `files/NAME` with `mode`; its path, for a debugfs `write`.
    pub fn file(&self, name: &str, contents: &str, mode: u32) -> String {
        let files = self.dir.join("files");
        std::fs::create_dir_all(&files).unwrap();
        let path = files.join(name);
        write_mode(&path, contents.as_bytes(), mode);
        path.display().to_string()
    }

    /// Writes into the root what the image provides: cryptadm (a stripped debug build); the key manager's settings
    /// `/etc/cryptadm/SETTINGS.env` (`env`), which the drop-in `cryptadm-SETTINGS.conf` hands to
    /// `cloud-final.service` (which runs runcmd), as docs/key-managers.md and docs/aws.md say; the network and the
    /// report unit ([`network_and_report_commands`]); then the debugfs commands `extra`.
    pub fn provision(&self, settings: &str, env: &str, extra: &str) {
        let binary = stripped_cryptadm(&self.dir);
        let env_path = format!("/etc/cryptadm/{settings}.env");
        let env_file = self.file(&format!("{settings}.env"), env, 0o600);
        let dropin = self.file(
            &format!("cryptadm-{settings}.conf"),
            &format!("[Service]\nEnvironmentFile=-{env_path}\n"),
            0o644,
        );
        let commands = network_and_report_commands(&self.dir.join("files"));
        debugfs(
            &self.dir,
            &self.root,
            &format!(
                "write {binary} /usr/local/bin/cryptadm\n\
                 mkdir /etc/cryptadm\nwrite {env_file} {env_path}\n\
                 mkdir /etc/systemd/system/cloud-final.service.d\n\
                 write {dropin} /etc/systemd/system/cloud-final.service.d/cryptadm-{settings}.conf\n\
                 {commands}{extra}",
                binary = binary.display(),
            ),
        );
        std::fs::remove_file(&binary).unwrap();
    }
}
