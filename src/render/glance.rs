//! The Glance image properties of a LUKS-encrypted raw image (spec key-rotation.md §6.3), and the
//! `openstack image create` command line that sets them.
//!
//! Both the standardized `os_encrypt_*` properties (Glance/Cinder/Nova specs) and the `cinder_encryption_*` pair
//! that Glance's code handles today are emitted, so the image works with current and upcoming releases.

use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The document printed by `disk luks-format --glance`.
#[derive(Debug, Serialize)]
pub struct GlanceImage {
    /// The image file to upload.
    pub file: String,
    /// `raw`: Glance does not list `luks` among its default disk formats.
    pub disk_format: &'static str,
    /// `bare`.
    pub container_format: &'static str,
    /// Image properties, all strings as Glance stores them.
    pub properties: BTreeMap<&'static str, String>,
    /// The command that uploads the image with these properties.
    pub command: String,
    /// The `openstack secret store` line that makes the key manager secret (set by the caller, which knows the
    /// secret's type and file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<super::openstack::SecretStore>,
}

/// Properties for a LUKS1 image of `decrypted_size` payload bytes whose passphrase is the key manager secret
/// `key_id`; `delete_key` says whether the secret goes with the image.
pub fn image_properties(file: &Path, decrypted_size: u64, key_id: Option<&str>, delete_key: bool) -> GlanceImage {
    let mut properties = BTreeMap::new();
    properties.insert("os_encrypt_format", "LUKSv1".to_owned());
    // Dropped from the 2025.1 Glance spec but still in the Nova spec: harmless for readers of either text.
    properties.insert("os_encrypt_cipher", "AES256".to_owned());
    properties.insert("os_encrypt_key_deletion_policy", if delete_key { "True" } else { "False" }.to_owned());
    properties.insert("os_decrypt_format", "raw".to_owned());
    properties.insert("os_decrypt_container_format", "bare".to_owned());
    properties.insert("os_decrypt_size", decrypted_size.to_string());
    if let Some(id) = key_id {
        properties.insert("os_encrypt_key_id", id.to_owned());
        properties.insert("cinder_encryption_key_id", id.to_owned());
        if delete_key {
            properties.insert("cinder_encryption_key_deletion_policy", "on_image_deletion".to_owned());
        }
    }
    let file_text = file.display().to_string();
    let name = file.file_stem().map_or_else(|| "image".to_owned(), |s| s.to_string_lossy().into_owned());
    let mut command = String::from("openstack image create --disk-format raw --container-format bare");
    for (key, value) in &properties {
        command.push_str(&format!(" --property {}", shell_quote(&format!("{key}={value}"))));
    }
    command.push_str(&format!(" --file {} {}", shell_quote(&file_text), shell_quote(&name)));
    GlanceImage { file: file_text, disk_format: "raw", container_format: "bare", properties, command, secret: None }
}

/// Quotes a word for a POSIX shell when it needs it.
pub(crate) fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty() && word.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b));
    if plain { word.to_owned() } else { format!("'{}'", word.replace('\'', r"'\''")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn properties_and_command_agree() {
        let doc =
            image_properties(Path::new("out/my disk.img"), 1 << 20, Some("3f1c6b9e-0d2a-4c55-9a57-3e1f0b6a2c11"), true);
        assert_eq!(doc.properties["os_encrypt_format"], "LUKSv1");
        assert_eq!(doc.properties["os_decrypt_size"], "1048576");
        assert_eq!(doc.properties["cinder_encryption_key_deletion_policy"], "on_image_deletion");
        assert!(doc.command.contains("--property os_encrypt_key_id=3f1c6b9e-0d2a-4c55-9a57-3e1f0b6a2c11"));
        assert!(doc.command.ends_with("--file 'out/my disk.img' 'my disk'"), "{}", doc.command);
        let kept = image_properties(Path::new("a.img"), 512, None, false);
        assert_eq!(kept.properties["os_encrypt_key_deletion_policy"], "False");
        assert!(!kept.properties.contains_key("cinder_encryption_key_id"));
    }
}
