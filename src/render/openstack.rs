//! What an encrypted (or plain) image needs in OpenStack, for `disk convert --glance` and `disk luks-format
//! --glance` (one renderer, so both commands print the same properties for the same image and secret): the Glance properties, the `openstack image create` line, and the
//! `openstack secret store` line that makes a key-manager secret the consuming service turns into this image's
//! passphrase.
//!
//! Each property is set only where its spec gives it meaning (the table, with why, is `docs/openstack.md`):
//! Glance's image-encryption properties on every encrypted image (`os_encrypt_format=LUKSv1`,
//! `os_encrypt_cipher=AES256`, the value Nova's spec gives, `os_encrypt_key_id`, `os_encrypt_key_deletion_policy`,
//! `os_decrypt_container_format=bare`, `os_decrypt_size`); Cinder's `cinder_encryption_key_id` (and its deletion
//! policy) only on a raw LUKS image with a symmetric secret, the only kind Cinder creates a volume from; never
//! Nova's `hw_ephemeral_encryption*`, which ask Nova to encrypt the disks of instances booted from an image rather
//! than describe an encrypted image.

pub use crate::qcow2::secret::SecretType;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The secret to store.
#[derive(Debug, Serialize)]
pub struct SecretStore {
    /// Barbican secret type.
    pub secret_type: &'static str,
    /// What python-barbicanclient sends for a `--file` payload without `-t`/`-e`: the bytes, base64-encoded.
    pub payload_content_type: &'static str,
    /// See `payload_content_type`.
    pub payload_content_encoding: &'static str,
    /// The file holding the secret's bytes.
    pub file: String,
    /// The command (the secret stays in the file, never on the command line).
    pub command: String,
}

/// The `openstack secret store` line for a secret of `secret_type` whose bytes (`len` of them) are in
/// `secret_file`, named after the image `name`. The secret is uploaded from the file, never from the command line.
pub fn secret_store(name: &str, secret_type: SecretType, secret_file: Option<&Path>, len: usize) -> SecretStore {
    let secret_file = secret_file.map_or_else(|| "SECRET_FILE".to_owned(), |p| p.display().to_string());
    let mut command = format!(
        "openstack secret store --name {} --secret-type {}",
        shell_quote(&format!("{name}-key")),
        secret_type.name()
    );
    if secret_type == SecretType::Symmetric {
        command.push_str(&format!(" --algorithm aes --bit-length {} --mode xts", len * 8));
    }
    command.push_str(&format!(" --file {}", shell_quote(&secret_file)));
    SecretStore {
        secret_type: secret_type.name(),
        payload_content_type: "application/octet-stream",
        payload_content_encoding: "base64",
        file: secret_file,
        command,
    }
}

/// The printed document.
#[derive(Debug, Serialize)]
pub struct ImageDocument {
    /// The image file to upload.
    pub file: String,
    /// `raw` or `qcow2`.
    pub disk_format: &'static str,
    /// `bare`.
    pub container_format: &'static str,
    /// Image properties, all strings as Glance stores them.
    pub properties: BTreeMap<&'static str, String>,
    /// The key manager secret to create first (encrypted images only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<SecretStore>,
    /// The upload command (none once the image is uploaded: running it would make a second image).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The Glance image this run uploaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_id: Option<String>,
    /// The key manager secret of the image this run uploaded (its os_encrypt_key_id).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_id: Option<String>,
}

/// The encryption part of an image.
#[derive(Debug)]
pub struct EncryptionFacts<'a> {
    /// How the secret becomes the passphrase.
    pub secret_type: SecretType,
    /// The file with the secret's bytes (key bytes for symmetric, the passphrase for passphrase).
    pub secret_file: Option<&'a Path>,
    /// Length of the secret in bytes (the `--bit-length` of a symmetric secret).
    pub secret_len: usize,
    /// The Barbican secret's UUID, if already stored.
    pub key_id: Option<&'a str>,
    /// Delete the secret with the image.
    pub delete_key: bool,
}

/// The document for `file`, a `disk_format` image of `decrypted_size` guest bytes.
pub fn image_document(
    file: &Path,
    disk_format: &'static str,
    decrypted_size: u64,
    encryption: Option<&EncryptionFacts<'_>>,
) -> ImageDocument {
    let file_text = file.display().to_string();
    let name = file.file_stem().map_or_else(|| "image".to_owned(), |s| s.to_string_lossy().into_owned());
    let mut properties = BTreeMap::new();
    let mut secret = None;
    if let Some(e) = encryption {
        properties.insert("os_encrypt_format", "LUKSv1".to_owned());
        properties.insert("os_encrypt_cipher", "AES256".to_owned());
        properties.insert("os_encrypt_key_deletion_policy", if e.delete_key { "True" } else { "False" }.to_owned());
        properties.insert("os_decrypt_container_format", "bare".to_owned());
        properties.insert("os_decrypt_size", decrypted_size.to_string());
        if let Some(id) = e.key_id {
            properties.insert("os_encrypt_key_id", id.to_owned());
            // Cinder makes volumes of raw LUKS images only, and reads symmetric secrets only.
            if e.secret_type == SecretType::Symmetric && disk_format == "raw" {
                properties.insert("cinder_encryption_key_id", id.to_owned());
                if e.delete_key {
                    properties.insert("cinder_encryption_key_deletion_policy", "on_image_deletion".to_owned());
                }
            }
        }
        secret = Some(secret_store(&name, e.secret_type, e.secret_file, e.secret_len));
    }
    let mut command = format!("openstack image create --disk-format {disk_format} --container-format bare");
    for (key, value) in &properties {
        command.push_str(&format!(" --property {}", shell_quote(&format!("{key}={value}"))));
    }
    command.push_str(&format!(" --file {} {}", shell_quote(&file_text), shell_quote(&name)));
    ImageDocument {
        file: file_text,
        disk_format,
        container_format: "bare",
        properties,
        secret,
        command: Some(command),
        image_id: None,
        secret_id: None,
    }
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
    fn symmetric_secrets_get_a_bit_length_and_cinder_ids() {
        let facts = EncryptionFacts {
            secret_type: SecretType::Symmetric,
            secret_file: Some(Path::new("k.bin")),
            secret_len: 32,
            key_id: Some("3f1c6b9e-0d2a-4c55-9a57-3e1f0b6a2c11"),
            delete_key: true,
        };
        let qcow2 = image_document(Path::new("a.qcow2"), "qcow2", 1 << 20, Some(&facts));
        assert!(!qcow2.properties.contains_key("cinder_encryption_key_id"), "Cinder reads raw LUKS only");
        assert!(!qcow2.properties.keys().any(|k| k.starts_with("hw_ephemeral_encryption")));
        assert_eq!(qcow2.properties["os_encrypt_cipher"], "AES256");
        let doc = image_document(Path::new("a.qcow2"), "raw", 1 << 20, Some(&facts));
        let secret = doc.secret.unwrap();
        assert_eq!(
            secret.command,
            "openstack secret store --name a-key --secret-type symmetric --algorithm aes --bit-length 256 --mode xts --file k.bin"
        );
        assert_eq!(doc.properties["os_encrypt_format"], "LUKSv1");
        assert_eq!(doc.properties["cinder_encryption_key_deletion_policy"], "on_image_deletion");
        let command = doc.command.unwrap();
        assert!(command.starts_with("openstack image create --disk-format raw --container-format bare"));
        assert!(command.ends_with("--file a.qcow2 a"), "{command}");
        let quoted = image_document(Path::new("out/my disk.img"), "raw", 512, None).command.unwrap();
        assert!(quoted.ends_with("--file 'out/my disk.img' 'my disk'"), "{quoted}");
        let plain = image_document(Path::new("a.raw"), "raw", 512, None);
        assert!(plain.properties.is_empty() && plain.secret.is_none());
    }
}
