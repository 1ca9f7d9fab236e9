//! The guest harness from the Rust side: one boot of `tests/guest/guest.sh` (Debian's kernel under QEMU TCG, a
//! busybox + cryptsetup initramfs) with a test file's disks attached, running many cases in that one boot.
//! A guest script writes `out/CASE.rc` and `out/CASE.log` into the shared directory; each `#[test]` asserts one
//! case. Boot once per test file: the file keeps its `Guest` in a `LazyLock`.
#![allow(dead_code, clippy::print_stderr)]

use crate::support::require_tool;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::LazyLock;
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

/// The boots test files share (each a `LazyLock` of its file, named by the file), in the order [`warm_up`] starts
/// them: the longest first, so that two workers end close together; AWS's late (it holds moto's lock shared, and the
/// AWS tests that need it alone run at the start of the run).
const SHARED_BOOTS: &[(&str, fn())] = &[
    ("guest_dmcrypt", crate::zz_guests::guest_dmcrypt::warm_up),
    ("guest_first_boot", crate::zz_guests::guest_first_boot::warm_up_good),
    ("guest_vault", crate::zz_guests::guest_vault::warm_up_machine),
    ("guest_tang", crate::zz_guests::guest_tang::warm_up_reachable),
    ("guest_vault", crate::zz_guests::guest_vault::warm_up_denied),
    ("guest_tang", crate::zz_guests::guest_tang::warm_up_unreachable),
    ("guest_ignition", crate::zz_guests::guest_ignition::warm_up_vault),
    ("guest_aws", crate::zz_guests::guest_aws::warm_up),
    ("guest_first_boot", crate::zz_guests::guest_first_boot::warm_up_wrong),
    ("guest_ignition", crate::zz_guests::guest_ignition::warm_up_wrong),
    ("guest_nova", crate::zz_guests::guest_nova::warm_up),
];

/// How many boots run at once. Two: a boot under TCG is mostly one busy core, the builder has two, and the test
/// threads wait on servers and deadlines often enough to leave room; one after another, the boots took longer
/// than the rest of the suite.
const BOOT_WORKERS: usize = 2;

/// What failed in the background, for the tests that then find the boot poisoned.
static WARM_UP_FAILURES: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Starts the shared boots of every guest test file this run will reach, in [`BOOT_WORKERS`] background threads,
/// so that they overlap the rest of the suite (the guest tests sort last: `zz_guests.rs`). Without it a boot starts
/// when the first of its file's tests runs, and since the harness hands out tests in name order, every test thread
/// then waits for the same boot (minutes under TCG) while the rest of the suite waits behind them. Called by
/// [`crate::support::cryptadm`], so the first test of a run starts it; a run whose filters select none of a file's
/// tests does not boot it.
pub fn warm_up() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        let selection = Selection::of_this_run();
        let boots: Vec<fn()> =
            SHARED_BOOTS.iter().filter(|(module, _)| selection.may_run(module)).map(|(_, start)| *start).collect();
        let next = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        for worker in 0..BOOT_WORKERS.min(boots.len()) {
            let (boots, next) = (boots.clone(), next.clone());
            std::thread::Builder::new()
                .name(format!("guest warm-up {worker}"))
                .spawn(move || {
                    while let Some(start) = boots.get(next.fetch_add(1, std::sync::atomic::Ordering::SeqCst)) {
                        if let Err(panic) = std::panic::catch_unwind(start) {
                            let message = panic
                                .downcast_ref::<String>()
                                .cloned()
                                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                                .unwrap_or_default();
                            WARM_UP_FAILURES.lock().unwrap_or_else(|p| p.into_inner()).push(message);
                        }
                    }
                })
                .expect("start a guest warm-up thread");
        }
    });
}

/// The value of a shared boot, or a panic that says why the boot failed (in the background, or in an earlier test)
/// instead of "poisoned".
pub fn shared<T: Sync + Send>(boot: &'static LazyLock<T>) -> &'static T {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| LazyLock::force(boot))) {
        Ok(value) => value,
        Err(_) => {
            let failures = WARM_UP_FAILURES.lock().unwrap_or_else(|p| p.into_inner()).join("\n---\n");
            panic!("this file's shared boot failed earlier (its panic is in the first test that used it): {failures}")
        }
    }
}

/// The test harness's name filters of this run (`cargo test -- FILTER… --skip PATTERN --exact`), as far as they
/// decide whether a guest file's tests run. Every guest test is named `zz_guests::guest_FILE::guest_FILE_…`.
struct Selection {
    filters: Vec<String>,
    skips: Vec<String>,
    exact: bool,
    listing: bool,
}

impl Selection {
    fn of_this_run() -> Self {
        let mut selection = Selection { filters: Vec::new(), skips: Vec::new(), exact: false, listing: false };
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--skip" => selection.skips.extend(args.next()),
                "--exact" => selection.exact = true,
                "--list" => selection.listing = true,
                // The options that take a value, as separate arguments.
                "--test-threads" | "--logfile" | "--color" | "--format" | "-Z" | "--shuffle-seed" => {
                    args.next();
                }
                option if option.starts_with('-') => {}
                filter => selection.filters.push(filter.to_owned()),
            }
        }
        selection
    }

    /// Whether some test of `module` may run (a boot too many is harmless; one too few only loses the overlap).
    fn may_run(&self, module: &str) -> bool {
        let prefix = format!("zz_guests::{module}::{module}_");
        let matches = |pattern: &str| if self.exact { prefix == pattern } else { prefix.contains(pattern) };
        let selected = self.filters.is_empty() || self.filters.iter().any(|f| matches(f) || f.starts_with(&prefix));
        !self.listing && selected && !self.skips.iter().any(|s| prefix.contains(s.as_str()))
    }
}
