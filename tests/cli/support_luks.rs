//! Small LUKS2 volumes for the volume tests: a file image made by `cryptsetup luksFormat` (PBKDF2 with few
//! iterations, so a rotation takes milliseconds), checked by cryptsetup, not by cryptadm.

use crate::support::{Scratch, require_tool};
use std::path::PathBuf;
use std::process::Command;

pub fn cryptsetup(args: &[&str]) -> std::process::Output {
    require_tool("cryptsetup", "apt-get install cryptsetup-bin");
    Command::new("cryptsetup").args(args).output().expect("run cryptsetup")
}

/// A volume id no other test of this run uses: `pvc-TAG-PID-N`.
pub fn unique_volume_id(tag: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!("pvc-{tag}-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

/// A 20 MiB LUKS2 image in its own scratch directory whose keyslot 0 opens with the passphrase given.
pub struct LuksImage {
    pub scratch: Scratch,
    pub image: PathBuf,
    pub id: String,
}

impl LuksImage {
    pub fn new(tag: &str, passphrase: &str, iterations: u32) -> Self {
        let scratch = Scratch::new();
        let image = scratch.path("volume.img");
        std::fs::File::create(&image).unwrap().set_len(20 << 20).unwrap();
        let key_file = scratch.write("old.key", passphrase);
        let output = cryptsetup(&[
            "luksFormat",
            "--batch-mode",
            "--type",
            "luks2",
            "--pbkdf",
            "pbkdf2",
            "--hash",
            "sha256",
            "--pbkdf-force-iterations",
            &iterations.to_string(),
            "--key-file",
            key_file.to_str().unwrap(),
            image.to_str().unwrap(),
        ]);
        assert!(output.status.success(), "luksFormat: {}", String::from_utf8_lossy(&output.stderr));
        Self { scratch, image, id: unique_volume_id(tag) }
    }

    /// Whether cryptsetup opens the image with `passphrase`.
    pub fn opens(&self, passphrase: &[u8]) -> bool {
        let file = self.scratch.write("probe.key", passphrase);
        cryptsetup(&["open", "--test-passphrase", "--key-file", file.to_str().unwrap(), self.image.to_str().unwrap()])
            .status
            .success()
    }
}

/// Seeds a `file://DIR` key store as an operator would by hand (the tests' one way to seed one): `value` written to
/// `DIR/<volume id>/current`, the directory 0700 and the file 0600, as `volume rotate` keeps them.
pub fn seed_file_store(dir: &std::path::Path, volume_id: &str, value: &[u8]) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let volume_dir = dir.join(volume_id);
    std::fs::create_dir_all(&volume_dir).unwrap();
    std::fs::set_permissions(&volume_dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let current = volume_dir.join("current");
    std::fs::write(&current, value).unwrap();
    std::fs::set_permissions(&current, std::fs::Permissions::from_mode(0o600)).unwrap();
    current
}
