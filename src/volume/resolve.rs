//! Finding the LUKS device of a volume id when the request has no `volume_path`, which is always the case behind
//! the csi-addons sidecar: it sends `volume_id` (the PV's volumeHandle), the PV's volume attributes, the node-stage
//! secret and the access mode, never a path.
//!
//! In this order:
//! 1. a path template (`--volume-path-template`), with `{volume_id}` replaced by the id made safe for one path
//!    component ([`super::file_name_for_id`]: bytes outside `[A-Za-z0-9._-]` and a leading `.` become `%XX`, so an id
//!    with `/` or `..` cannot leave the template's directory). Used when that path exists.
//! 2. the active dm-crypt mapping of the volume, found in sysfs: every `<sysfs>/block/dm-*` whose `dm/uuid` starts
//!    with `CRYPT-LUKS1-` or `CRYPT-LUKS2-` (what cryptsetup sets for LUKS mappings) and whose `dm/name` **is the
//!    volume id or ends with `-<volume id>`** (ceph-csi maps `luks-rbd-<volume id>`; other drivers `luks-<id>`).
//!    The LUKS header is on the mapping's backing device, the one entry of `dm-N/slaves/`, opened as
//!    `<dev>/<that name>`. cryptsetup truncates long DM uuids, so only the uuid's prefix is used.
//!
//! No match is [`Error::NoDevice`] (NOT_FOUND, exit 5) naming what was tried; more than one mapping is
//! [`Error::AmbiguousDevice`] (FAILED_PRECONDITION, exit 3): cryptadm never picks one.

use super::Error;
use std::path::{Path, PathBuf};

/// The placeholder in a path template.
pub const PLACEHOLDER: &str = "{volume_id}";

/// Where devices are looked for.
#[derive(Debug, Clone)]
pub struct Resolver {
    /// An absolute path containing [`PLACEHOLDER`].
    pub template: Option<String>,
    /// The sysfs mount (`/sys` on a node).
    pub sysfs: PathBuf,
    /// The device directory (`/dev` on a node).
    pub dev: PathBuf,
}

impl Default for Resolver {
    fn default() -> Self {
        Self { template: None, sysfs: PathBuf::from("/sys"), dev: PathBuf::from("/dev") }
    }
}

/// Whether a template is usable: absolute, with the placeholder.
pub fn check_template(template: &str) -> Result<(), String> {
    if !template.starts_with('/') {
        return Err(format!("the volume path template `{template}` is not an absolute path"));
    }
    if !template.contains(PLACEHOLDER) {
        return Err(format!("the volume path template `{template}` does not contain {PLACEHOLDER}"));
    }
    Ok(())
}

/// Whether a device-mapper name belongs to `volume_id` (the rule in the module documentation).
pub fn name_matches(name: &str, volume_id: &str) -> bool {
    name == volume_id || name.strip_suffix(volume_id).is_some_and(|rest| rest.ends_with('-'))
}

impl Resolver {
    /// The path of the LUKS header of `volume_id`.
    pub fn resolve(&self, volume_id: &str) -> Result<PathBuf, Error> {
        let mut tried = Vec::new();
        if let Some(template) = &self.template {
            let path = PathBuf::from(template.replace(PLACEHOLDER, &super::file_name_for_id(volume_id)));
            if path.exists() {
                return Ok(path);
            }
            tried.push(format!("`{}` (from the template)", path.display()));
        }
        let mut found = self.dm_crypt_mappings(volume_id)?;
        tried.push(format!(
            "dm-crypt LUKS mappings in `{}` named `{volume_id}` or `*-{volume_id}`",
            self.sysfs.join("block").display()
        ));
        match found.len() {
            0 => Err(Error::NoDevice { volume_id: volume_id.to_owned(), tried: tried.join("; ") }),
            1 => {
                let (_, path) = found.remove(0);
                Ok(path)
            }
            _ => Err(Error::AmbiguousDevice {
                volume_id: volume_id.to_owned(),
                candidates: found.into_iter().map(|(name, path)| format!("{name} on {}", path.display())).collect(),
            }),
        }
    }

    /// (mapping name, backing device path) of every LUKS mapping whose name matches, in dm-N order.
    fn dm_crypt_mappings(&self, volume_id: &str) -> Result<Vec<(String, PathBuf)>, Error> {
        let block = self.sysfs.join("block");
        let entries = match std::fs::read_dir(&block) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(Error::io(format!("reading `{}`", block.display()))(e)),
        };
        let mut devices: Vec<PathBuf> = entries
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with("dm-"))
            .map(|e| e.path())
            .collect();
        devices.sort();
        let mut found = Vec::new();
        for device in devices {
            let uuid = read_trimmed(&device.join("dm/uuid"));
            if !(uuid.starts_with("CRYPT-LUKS1-") || uuid.starts_with("CRYPT-LUKS2-")) {
                continue;
            }
            let name = read_trimmed(&device.join("dm/name"));
            if !name_matches(&name, volume_id) {
                continue;
            }
            let slaves: Vec<String> = std::fs::read_dir(device.join("slaves"))
                .map(|entries| entries.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()))
                .map(Iterator::collect)
                .unwrap_or_default();
            let [backing] = slaves.as_slice() else {
                return Err(Error::AmbiguousDevice {
                    volume_id: volume_id.to_owned(),
                    candidates: vec![format!(
                        "{name} ({}) has {} backing devices instead of one",
                        device.display(),
                        slaves.len()
                    )],
                });
            };
            found.push((name, self.dev.join(backing)));
        }
        Ok(found)
    }
}

fn read_trimmed(path: &Path) -> String {
    std::fs::read_to_string(path).map(|s| s.trim_end_matches('\n').to_owned()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mapping(root: &Path, dm: &str, name: &str, uuid: &str, slaves: &[&str]) {
        let dir = root.join("sys/block").join(dm);
        std::fs::create_dir_all(dir.join("dm")).unwrap();
        std::fs::create_dir_all(dir.join("slaves")).unwrap();
        std::fs::write(dir.join("dm/name"), format!("{name}\n")).unwrap();
        std::fs::write(dir.join("dm/uuid"), format!("{uuid}\n")).unwrap();
        for slave in slaves {
            std::fs::create_dir_all(dir.join("slaves").join(slave)).unwrap();
        }
    }

    #[test]
    fn names_match_the_id_or_end_with_dash_id() {
        assert!(name_matches("luks-rbd-0001-abc", "0001-abc"));
        assert!(name_matches("pvc-1", "pvc-1"));
        assert!(!name_matches("luks-rbd-pvc-12", "pvc-1"));
        assert!(!name_matches("xpvc-1", "pvc-1"));
    }

    #[test]
    fn template_then_sysfs_none_one_or_ambiguous() {
        let root = tempfile::tempdir().unwrap();
        let resolver = Resolver {
            template: Some(format!("{}/images/{PLACEHOLDER}.img", root.path().display())),
            sysfs: root.path().join("sys"),
            dev: root.path().join("dev"),
        };
        let Err(Error::NoDevice { tried, .. }) = resolver.resolve("pvc-1") else { panic!() };
        assert!(tried.contains("pvc-1.img") && tried.contains("dm-crypt"), "{tried}");
        mapping(
            root.path(),
            "dm-0",
            "luks-rbd-pvc-1",
            "CRYPT-LUKS2-0123456789abcdef0123456789abcdef-luks-rbd-pvc-1",
            &["rbd0"],
        );
        mapping(root.path(), "dm-1", "luks-rbd-pvc-2", "CRYPT-PLAIN-luks-rbd-pvc-2", &["rbd1"]);
        mapping(root.path(), "dm-2", "other-pvc-2", "LVM-xyz", &["sda"]);
        assert_eq!(resolver.resolve("pvc-1").unwrap(), root.path().join("dev/rbd0"));
        assert!(matches!(resolver.resolve("pvc-2"), Err(Error::NoDevice { .. })));
        mapping(
            root.path(),
            "dm-3",
            "luks-pvc-1",
            "CRYPT-LUKS1-0123456789abcdef0123456789abcdef-luks-pvc-1",
            &["loop3"],
        );
        let Err(Error::AmbiguousDevice { candidates, .. }) = resolver.resolve("pvc-1") else { panic!() };
        assert_eq!(candidates.len(), 2);
        // The template wins when its path exists; ids cannot leave its directory.
        std::fs::create_dir_all(root.path().join("images")).unwrap();
        std::fs::write(root.path().join("images/pvc-1.img"), b"").unwrap();
        assert_eq!(resolver.resolve("pvc-1").unwrap(), root.path().join("images/pvc-1.img"));
        assert!(matches!(resolver.resolve("../images/pvc-1"), Err(Error::NoDevice { .. })));
        assert!(check_template("relative/{volume_id}").is_err());
        assert!(check_template("/dev/mapper/x").is_err());
    }
}
