//! The guest harness from the Rust side: one boot of `tests/guest/guest.sh` (Debian's kernel under QEMU TCG, a
//! busybox + cryptsetup initramfs) with a test file's disks attached, running many cases in that one boot.
//! A guest script writes `out/CASE.rc` and `out/CASE.log` into the shared directory; each `#[test]` asserts one
//! case. Boot once per test file: the file keeps its `Guest` in a `LazyLock`.
#![allow(dead_code, clippy::print_stderr)]

use crate::support::require_tool;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The harness script.
pub fn harness() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/guest/guest.sh")
}

/// A disk to attach: a raw image as virtio-blk whose serial (what the guest reads from
/// `/sys/block/vdX/serial`) is `name`.
pub struct Disk {
    pub name: String,
    pub path: PathBuf,
}

/// A fresh directory `CARGO_TARGET_TMPDIR/guest/NAME` (emptied first). The guest's share and images live
/// there rather than in a `TempDir`: a boot is kept in a static, which is never dropped, so this bounds what a
/// run leaves behind to one copy per test file.
pub fn workdir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("guest").join(name);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).expect("empty the guest work dir");
    }
    std::fs::create_dir_all(&dir).expect("create the guest work dir");
    dir
}

/// What one boot left: the share directory (with `out/`), the console, the status and the time it took.
pub struct Guest {
    pub share: PathBuf,
    pub status: Option<i32>,
    pub console: String,
    pub stderr: String,
    pub elapsed: Duration,
}

/// Boots the guest once with `share` as /host (which must hold `run.sh`), the debug `cryptadm` copied in (as
/// /usr/local/bin/cryptadm) if `with_cryptadm`, the disks attached and `extra` QEMU arguments; never longer
/// than `timeout`.
pub fn boot(share: PathBuf, with_cryptadm: bool, disks: &[Disk], extra: &[String], timeout: Duration) -> Guest {
    require_tool("qemu-system-x86_64", "bash .ci/deps/guest.sh");
    require_tool("busybox", "bash .ci/deps/guest.sh");
    let mut cmd = Command::new("bash");
    cmd.arg(harness()).arg("run").args(["--timeout", &timeout.as_secs().to_string()]);
    if with_cryptadm {
        cmd.arg("--cryptadm").arg(assert_cmd::cargo::cargo_bin("cryptadm"));
    }
    cmd.arg(&share).arg("--");
    for (index, disk) in disks.iter().enumerate() {
        cmd.arg("-drive")
            .arg(format!("file={},format=raw,if=none,id=disk{index},cache=writeback", disk.path.display()))
            .arg("-device")
            .arg(format!("virtio-blk-pci,drive=disk{index},serial={}", disk.name));
    }
    cmd.args(extra);
    let started = Instant::now();
    let output = cmd.output().expect("run tests/guest/guest.sh");
    let elapsed = started.elapsed();
    let console = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    eprintln!("guest: exit {:?} after {elapsed:?}\n{console}{stderr}", output.status.code());
    std::fs::write(share.join("harness.log"), format!("exit {:?} after {elapsed:?}\n{stderr}", output.status.code()))
        .expect("write harness.log");
    Guest { share, status: output.status.code(), console, stderr, elapsed }
}

impl Guest {
    /// The share's `out/NAME`.
    pub fn out(&self, name: &str) -> PathBuf {
        self.share.join("out").join(name)
    }

    /// Asserts that the guest ran case `name` and that it passed; returns its log.
    pub fn case(&self, name: &str) -> String {
        let rc = std::fs::read_to_string(self.out(&format!("{name}.rc")));
        let log = std::fs::read_to_string(self.out(&format!("{name}.log"))).unwrap_or_default();
        let Ok(rc) = rc else {
            panic!(
                "the guest did not run case {name} (harness exit {:?} after {:?}):\n{}\n{}",
                self.status, self.elapsed, self.console, self.stderr
            );
        };
        assert_eq!(rc.trim(), "0", "guest case {name} failed:\n{log}");
        log
    }
}

/// An empty raw image of `size` bytes.
pub fn blank(path: &Path, size: u64) {
    std::fs::File::create(path).expect("create image").set_len(size).expect("size image");
}
