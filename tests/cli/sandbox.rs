//! Running the real first-boot tools (Ignition's engine, cloud-init) against a throw-away root.
//!
//! The scripts under `tests/interop/` mount in a private mount namespace, so their mounts vanish when they end;
//! [`Sandbox`] also unmounts, when dropped, anything still mounted under its directory (a script killed halfway),
//! before the directory is removed. They need root (`unshare`, `mount`, `chroot`): CI runs as root, and these
//! tests fail, never skip, elsewhere.

use crate::support::{self, Scratch};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A scratch directory for a sandboxed run.
pub struct Sandbox {
    pub scratch: Scratch,
}

impl Sandbox {
    pub fn new() -> Self {
        require_root();
        for tool in ["unshare", "mount", "chroot"] {
            support::require_tool(tool, "apt-get install util-linux coreutils");
        }
        Self { scratch: Scratch::new() }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.scratch.path(name)
    }

    /// Runs a script of `tests/interop/` with `args`.
    pub fn run(&self, script: &str, args: &[&Path]) -> Output {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop").join(script);
        Command::new("bash").arg(&script).args(args).output().expect("run the sandbox script")
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let root = self.scratch.dir.path().to_string_lossy().into_owned();
        let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
        let mut leftover: Vec<&str> =
            mounts.lines().filter_map(|l| l.split(' ').nth(1)).filter(|m| m.starts_with(&root)).collect();
        // Deepest first.
        leftover.sort_by_key(|m| std::cmp::Reverse(m.len()));
        for mount_point in leftover {
            let _ = Command::new("umount").args(["--recursive", "--lazy", mount_point]).status();
        }
    }
}

fn require_root() {
    let uid = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| l.strip_prefix("Uid:").map(|v| v.split_whitespace().next().map(str::to_owned)))
        })
        .flatten();
    assert_eq!(
        uid.as_deref(),
        Some("0"),
        "this test runs Ignition or cloud-init in a mount namespace and a chroot, which needs root (CI runs as root)"
    );
}
