//! Real loop devices for the `disk` tests (CI runs as root on a machine that has them): attached with
//! `losetup -f --show`, detached when dropped, so a failing test leaves none behind.

use std::path::{Path, PathBuf};
use std::process::Command;

/// An attached loop device, detached on drop.
pub struct LoopDevice {
    pub dev: PathBuf,
}

impl LoopDevice {
    /// Attaches `file` (read-write).
    pub fn attach(file: &Path) -> LoopDevice {
        Self::attach_with(file, &[])
    }

    /// Attaches `file` and scans its partition table (`/dev/loopNpM` appear).
    pub fn attach_partitioned(file: &Path) -> LoopDevice {
        let device = Self::attach_with(file, &["-P"]);
        // The scan `-P` asks for does not always add the partitions (seen in VMs): add them explicitly (partx
        // fails harmlessly for partitions that are there already).
        let _ = Command::new("partx").arg("-a").arg(&device.dev).stderr(std::process::Stdio::null()).status();
        device
    }

    fn attach_with(file: &Path, args: &[&str]) -> LoopDevice {
        crate::support::require_tool("losetup", "apt-get install -y mount");
        let out = Command::new("losetup").args(["-f", "--show"]).args(args).arg(file).output().expect("losetup");
        assert!(out.status.success(), "losetup -f --show failed: {}", String::from_utf8_lossy(&out.stderr));
        let dev = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
        LoopDevice { dev }
    }

    /// The node of partition `n`, waited for (devtmpfs creates it shortly after the scan).
    pub fn partition(&self, n: u32) -> PathBuf {
        let path = PathBuf::from(format!("{}p{n}", self.dev.display()));
        for _ in 0..200 {
            if std::fs::metadata(&path).is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_block_device(&m.file_type())) {
                return path;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        panic!("{} did not appear", path.display());
    }

    /// The device's bytes `[0, len)`.
    pub fn read(&self, len: usize) -> Vec<u8> {
        use std::io::Read;
        let mut bytes = vec![0u8; len];
        std::fs::File::open(&self.dev).unwrap().read_exact(&mut bytes).unwrap();
        bytes
    }

    /// Whether the node is still a block device (nothing replaced it with a file).
    pub fn is_block_device(&self) -> bool {
        std::fs::symlink_metadata(&self.dev)
            .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_block_device(&m.file_type()))
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
    }
}

/// A file of `len` zero bytes (sparse).
pub fn zero_file(path: &Path, len: u64) -> PathBuf {
    std::fs::File::create(path).unwrap().set_len(len).unwrap();
    path.to_path_buf()
}

/// A file system mounted from a device, unmounted on drop (declare it after its [`LoopDevice`], so it is
/// dropped first).
pub struct Mounted {
    pub dir: tempfile::TempDir,
}

impl Mounted {
    /// Makes an ext4 file system on `device` and mounts it. The inode tables and the journal are written by mkfs,
    /// not by the kernel's lazy-init thread after the mount, so that a test comparing the device's bytes sees only
    /// what it did (the journal's own commits still need [`Mounted::freeze`]).
    pub fn ext4(device: &LoopDevice) -> Mounted {
        crate::support::require_tool("mkfs.ext4", "apt-get install -y e2fsprogs");
        let made = Command::new("mkfs.ext4")
            .args(["-q", "-E", "lazy_itable_init=0,lazy_journal_init=0"])
            .arg(&device.dev)
            .status()
            .unwrap();
        assert!(made.success(), "mkfs.ext4 failed");
        let dir = tempfile::tempdir().unwrap();
        let mounted = Command::new("mount").arg(&device.dev).arg(dir.path()).status().unwrap();
        assert!(mounted.success(), "mount failed");
        Mounted { dir }
    }

    /// Freezes the file system (`fsfreeze`) until the guard is dropped: it stays mounted, so its device stays
    /// claimed, but the kernel writes nothing to it (no journal commit, no superblock update), so the device's
    /// bytes before and after a command show whether the command wrote them.
    pub fn freeze(&self) -> Frozen<'_> {
        crate::support::require_tool("fsfreeze", "apt-get install -y util-linux");
        let frozen = Command::new("fsfreeze").arg("--freeze").arg(self.dir.path()).status().unwrap();
        assert!(frozen.success(), "fsfreeze --freeze failed");
        Frozen { mounted: self }
    }
}

/// A frozen [`Mounted`]; thawed on drop (before the file system can be unmounted).
pub struct Frozen<'a> {
    mounted: &'a Mounted,
}

impl Drop for Frozen<'_> {
    fn drop(&mut self) {
        let _ = Command::new("fsfreeze").arg("--unfreeze").arg(self.mounted.dir.path()).status();
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}
