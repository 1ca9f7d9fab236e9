//! `--key-wrap aws-kms://ARN`: values are AWS KMS CiphertextBlobs in standard base64, the form the AWS CLI prints
//! (`aws kms encrypt --key-id ARN --plaintext fileb://pass --query CiphertextBlob --output text`), so an operator
//! seeds a volume with the CLI. The plaintext goes to KMS Encrypt and comes back from Decrypt (with the key id, so
//! a blob of another key is refused).
//!
//! **Bound to the volume.** Every value cryptadm writes is encrypted with the encryption context
//! `{"cryptadm:store": STORE, "cryptadm:volume": ID}` (STORE the `--key-store` URI without a trailing `/`), and
//! stored as compact JSON recording that context beside the blob:
//! `{"ciphertext":"AQICAHh…","context":{"cryptadm:store":"file:///var/lib/cryptadm/keys","cryptadm:volume":"pvc-1"}}`.
//! A value recording another volume (moved from another entry) is refused before KMS is asked (exit 15, naming
//! both volumes); one whose record was edited is refused by KMS (its context does not match the blob's), also
//! exit 15. A bare blob (written before, or seeded with the CLI without a context) still opens, without a context;
//! `volume rewrap` binds it.

use super::store::store_error;
use super::wrap::{Binding, FileRewrapKey, KeyWrap};
use crate::crypto::Passphrase;
use crate::exit::ExitStatus;
use crate::kms::aws::Aws;
use crate::kms::{Context, Wrapping};
use crate::volume::Error;
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Fewest bytes a CiphertextBlob decodes to. Besides the ciphertext a blob carries the key's identity, the IV
/// and the tag: AWS's own blobs are well over 150 bytes; moto's are the key id (36), the IV (12), the ciphertext and
/// the tag (16), at least 65. A passphrase made as the README says (`head -c 32 /dev/urandom | base64`) decodes to
/// 32, so it is told from a blob before it is ever sent to KMS.
pub const MIN_BLOB_BYTES: usize = 65;

/// Whether a stored value has the shape of a KMS CiphertextBlob: standard base64 (surrounding white space, such as
/// the CLI's newline, ignored) of at least [`MIN_BLOB_BYTES`] bytes.
pub fn is_bare_blob(stored: &[u8]) -> bool {
    std::str::from_utf8(stored).is_ok_and(|text| {
        let text = text.trim();
        base64::engine::general_purpose::STANDARD.decode(text).is_ok_and(|bytes| bytes.len() >= MIN_BLOB_BYTES)
    })
}

/// Whether a stored value is a KMS-wrapped value: a bare blob, or a blob recorded with its context.
pub fn is_kms_blob(stored: &[u8]) -> bool {
    is_bare_blob(stored) || Bound::parse(stored).is_some()
}

/// A blob stored with the encryption context it was made with.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Bound {
    ciphertext: String,
    context: Context,
}

impl Bound {
    fn parse(stored: &[u8]) -> Option<Self> {
        let bound: Self = serde_json::from_slice(stored.trim_ascii()).ok()?;
        (is_bare_blob(bound.ciphertext.as_bytes()) && !bound.context.is_empty()).then_some(bound)
    }

    fn text(&self) -> String {
        serde_json::to_string(self).expect("strings serialise")
    }
}

/// A stored value: a bare blob (`None` context), or a blob and its recorded context.
pub fn recorded(stored: &str) -> (String, Option<Context>) {
    match Bound::parse(stored.as_bytes()) {
        Some(bound) => (bound.ciphertext, Some(bound.context)),
        None => (stored.trim().to_owned(), None),
    }
}

/// A KMS refusal of a bound blob (it was made with another context, or its record was edited) as exit 15.
fn context_refused(error: crate::kms::Error, binding: &Binding) -> Error {
    match &error {
        crate::kms::Error::Refused(refusal) if refusal.code == "InvalidCiphertextException" => Error::Store {
            status: ExitStatus::DataLoss,
            message: format!(
                "KMS refused the value stored for volume `{}` with its encryption context (store `{}`): it was not \
                 made for this volume, or its record was edited",
                crate::redact::server_message(binding.volume.as_bytes()),
                crate::redact::server_message(binding.store.as_bytes()),
            ),
        },
        _ => store_error(error),
    }
}

/// `stored` (bare or bound) re-encrypted with KMS ReEncrypt under `key`'s current material, bound to `binding`:
/// a value recorded for another volume is refused (exit 15); one recorded for another store is bound anew.
pub fn rewrap_value(client: &dyn Wrapping, key: &str, stored: &str, binding: &Binding) -> Result<String, Error> {
    let (ciphertext, context) = recorded(stored);
    if let Some(context) = &context {
        binding.check(context, true)?;
    }
    let from = context.unwrap_or_default();
    let rewrapped =
        client.rewrap_bound(key, &ciphertext, &from, &binding.context()).map_err(|e| context_refused(e, binding))?;
    Ok(Bound { ciphertext: rewrapped, context: binding.context() }.text())
}

/// `volume rewrap` of a `file://` store with KMS key `key` (see [`rewrap_file_store`]).
pub fn file_rewrap_key<'a>(client: &'a Aws, key: &str) -> FileRewrapKey<'a> {
    FileRewrapKey {
        client,
        key: key.to_owned(),
        uri: format!("aws-kms://{key}"),
        form: "a KMS CiphertextBlob in standard base64",
        is_wrapped: is_kms_blob,
        check: None,
        rotate: false,
        rewrap: rewrap_value,
    }
}

/// A KMS key wrapping a store's values.
pub struct AwsKmsWrap {
    client: Arc<Aws>,
    key: String,
    binding: Option<Binding>,
}

impl AwsKmsWrap {
    /// KMS key `key` (a key or alias ARN, `alias/NAME`, a key id), binding values to `binding` when given.
    pub fn new(client: Arc<Aws>, key: &str, binding: Option<Binding>) -> Self {
        Self { client, key: key.to_owned(), binding }
    }
}

impl KeyWrap for AwsKmsWrap {
    fn form(&self) -> &'static str {
        "KMS CiphertextBlob in standard base64"
    }

    fn is_wrapped(&self, stored: &[u8]) -> bool {
        is_kms_blob(stored)
    }

    fn wrap(&self, key: &Passphrase) -> Result<String, Error> {
        let Some(binding) = &self.binding else {
            return self.client.wrap(&self.key, key.expose()).map_err(store_error);
        };
        let context = binding.context();
        let ciphertext = self.client.wrap_bound(&self.key, key.expose(), &context).map_err(store_error)?;
        Ok(Bound { ciphertext, context }.text())
    }

    fn unwrap(&self, stored: &str) -> Result<Passphrase, Error> {
        let plain = match (recorded(stored), &self.binding) {
            ((ciphertext, None), _) => self.client.unwrap(&self.key, &ciphertext).map_err(store_error)?,
            ((ciphertext, Some(context)), Some(binding)) => {
                binding.check(&context, false)?;
                self.client
                    .unwrap_bound(&self.key, &ciphertext, &binding.context())
                    .map_err(|e| context_refused(e, binding))?
            }
            ((ciphertext, Some(context)), None) => {
                self.client.unwrap_bound(&self.key, &ciphertext, &context).map_err(store_error)?
            }
        };
        Ok(Passphrase::new(plain.to_vec()))
    }
}

/// The binding of a value of file-store entry `entry`: the volume id its record names (when that id's entry is
/// `entry`; any other is refused by the check), else the entry's name with its `%XX` escapes decoded (`None` when
/// the name is a shortened one, which cannot be decoded).
fn entry_binding(store: &str, entry: &std::path::Path, stored: &str) -> Option<Binding> {
    let name = entry.file_name()?.to_str()?;
    if let (_, Some(context)) = recorded(stored)
        && let Some(volume) = context.get(super::wrap::CONTEXT_VOLUME)
        && crate::volume::file_name_for_id(volume) == name
    {
        return Some(Binding::new(store, volume));
    }
    let mut bytes = Vec::with_capacity(name.len());
    let mut rest = name.as_bytes();
    while let Some((&first, tail)) = rest.split_first() {
        if first == b'%' && tail.len() >= 2 {
            bytes.push(u8::from_str_radix(std::str::from_utf8(&tail[..2]).ok()?, 16).ok()?);
            rest = &tail[2..];
        } else {
            bytes.push(first);
            rest = tail;
        }
    }
    let volume = String::from_utf8(bytes).ok()?;
    (crate::volume::file_name_for_id(&volume) == name).then(|| Binding::new(store, &volume))
}

/// What [`rewrap_file_store`] did.
#[derive(Debug, Default)]
pub struct Rewrapped {
    /// Values re-encrypted.
    pub values: usize,
    /// Volumes (store entries) visited.
    pub volumes: usize,
}

/// Most values a refusal names one by one.
const NAMED_VALUES: usize = 10;

/// `volume rewrap` of a `file://DIR` store wrapped by `key`: every stored value (`current`, `pending`,
/// `previous` of every entry) rewrapped bound to its volume: with KMS ReEncrypt, the plaintext never leaving KMS
/// ([`file_rewrap_key`]), or by Transit (`super::transit_wrap::file_rewrap_key`: each value decrypted to read its
/// binding, and the key rotated first once every value is checked, when asked).
///
/// All or nothing: first every value is re-encrypted in memory (each one's shape checked first, so a plain value
/// is never sent to the key manager), and a store holding any value that is not wrapped, or that the key manager
/// refuses, is refused whole, naming each such value, with nothing written. Then each entry, under its volume's
/// lock (`lock_dir`) so no rotation runs meanwhile, is read again and its files replaced atomically (a value a
/// rotation changed in between is re-encrypted anew). A crash between two values leaves each one either as it was
/// or re-encrypted (the same plaintext), and a rerun completes.
///
/// `written(n)` is called once every value is checked (n = 0) and after the nth value is in place (a step, for
/// the log and for crash tests).
pub fn rewrap_file_store(
    wrap: &FileRewrapKey<'_>,
    store: &str,
    dir: &std::path::Path,
    lock_dir: &std::path::Path,
    written: &mut dyn FnMut(usize),
) -> Result<Rewrapped, Error> {
    let io = |what: &std::path::Path| {
        let what = what.display().to_string();
        move |e: std::io::Error| Error::Store {
            status: if e.kind() == std::io::ErrorKind::NotFound {
                crate::exit::ExitStatus::NotFound
            } else {
                crate::exit::ExitStatus::Failure
            },
            message: format!("`{what}`: {e}"),
        }
    };
    let mut entries: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .map_err(io(dir))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    entries.sort();
    let store = Binding::new(store, "").store;
    let store = store.as_str();
    let values = |entry: &std::path::Path| -> Vec<std::path::PathBuf> {
        ["current", "pending", "previous"].iter().map(|n| entry.join(n)).filter(|p| p.is_file()).collect()
    };
    // (path, value read, value re-encrypted), for every value, before anything is written.
    let mut planned: Vec<(std::path::PathBuf, Vec<u8>, String)> = Vec::new();
    let mut refused: Vec<String> = Vec::new();
    let mut status = crate::exit::ExitStatus::InvalidInput;
    for entry in &entries {
        for path in values(entry) {
            let stored = std::fs::read(&path).map_err(io(&path))?;
            if !(wrap.is_wrapped)(&stored) {
                refused.push(format!("`{}` (not {})", path.display(), wrap.form));
                continue;
            }
            let text = String::from_utf8_lossy(&stored).trim().to_owned();
            let Some(binding) = entry_binding(store, entry, &text) else {
                refused.push(format!(
                    "`{}` (the entry's name is shortened and the value records no volume id: import it again)",
                    path.display()
                ));
                continue;
            };
            let rewrapped = match wrap.check {
                // Checked now, rewrapped once the key is rotated.
                Some(check) => check(wrap.client, &wrap.key, &text, &binding).map(|_| String::new()),
                None => (wrap.rewrap)(wrap.client, &wrap.key, &text, &binding),
            };
            match rewrapped {
                Ok(rewrapped) => planned.push((path, stored, rewrapped)),
                Err(e) => {
                    status = crate::exit::Classify::status(&e);
                    refused.push(format!("`{}` ({e})", path.display()));
                }
            }
        }
    }
    if !refused.is_empty() {
        if refused.len() > 1 {
            status = crate::exit::ExitStatus::InvalidInput;
        }
        let more = refused.len().saturating_sub(NAMED_VALUES);
        let mut listed = refused.iter().take(NAMED_VALUES).cloned().collect::<Vec<_>>().join(", ");
        if more > 0 {
            listed.push_str(&format!(" and {more} more"));
        }
        return Err(Error::Store {
            status,
            message: format!(
                "{} stored value(s) cannot be rewrapped with `{}`: {listed}; nothing was {} (hint: store those \
                 volumes' passphrases wrapped, e.g. with `cryptadm volume import --force`)",
                refused.len(),
                wrap.uri,
                if wrap.rotate { "rotated or rewritten" } else { "rewritten" }
            ),
        });
    }
    if wrap.rotate {
        wrap.client.rotate_key(&wrap.key).map_err(store_error)?;
    }
    if wrap.check.is_some() {
        for (path, stored, rewrapped) in &mut planned {
            let entry = path.parent().expect("an entry's file");
            let text = String::from_utf8_lossy(stored).trim().to_owned();
            let binding = entry_binding(store, entry, &text).expect("found above");
            *rewrapped = (wrap.rewrap)(wrap.client, &wrap.key, &text, &binding)?;
        }
    }
    // Every value checked and re-encrypted, nothing written yet: step 0; then step N once the Nth value is in place.
    written(0);
    let mut done = Rewrapped::default();
    for entry in &entries {
        let name = entry.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let _lock = crate::volume::lock::IdLock::acquire_name(lock_dir, &name)?;
        for (path, read, rewrapped) in planned.iter().filter(|(path, ..)| path.parent() == Some(entry.as_path())) {
            let now = match std::fs::read(path) {
                Ok(now) => now,
                // A rotation finished meanwhile and dropped it.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(io(path)(e)),
            };
            let rewrapped = if now == *read {
                rewrapped.clone()
            } else {
                let text = String::from_utf8_lossy(&now).trim().to_owned();
                let binding = entry_binding(store, entry, &text).ok_or_else(|| Error::Store {
                    status: crate::exit::ExitStatus::InvalidInput,
                    message: format!("`{}`: the entry's volume id is unknown", path.display()),
                })?;
                (wrap.rewrap)(wrap.client, &wrap.key, &text, &binding)?
            };
            crate::atomic::write(path, rewrapped.as_bytes(), crate::atomic::MODE_PRIVATE).map_err(io(path))?;
            done.values += 1;
            written(done.values);
        }
        done.volumes += 1;
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    #[test]
    fn blobs_are_standard_base64_with_the_clis_newline() {
        use base64::Engine as _;
        let blob = base64::engine::general_purpose::STANDARD.encode([7u8; super::MIN_BLOB_BYTES]);
        assert!(super::is_kms_blob(format!("{blob}\n").as_bytes()));
        // The README's recipe for a passphrase: base64 of 32 random bytes (and of 48) is a plain value.
        for plain in [[9u8; 32].as_slice(), &[9u8; 48]] {
            let plain = base64::engine::general_purpose::STANDARD.encode(plain);
            assert!(!super::is_kms_blob(plain.as_bytes()), "{plain}");
        }
        assert!(!super::is_kms_blob(b"my passphrase"));
        assert!(!super::is_kms_blob(b"AQ-_"));
        assert!(!super::is_kms_blob(b"  \n"));
    }
}
