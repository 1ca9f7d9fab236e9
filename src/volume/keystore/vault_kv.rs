//! The built-in `vault-kv://MOUNT/PREFIX` key store: volume `ID`'s keys in the KV version 2 secret `PREFIX/ID`
//! of mount `MOUNT`, in the fields `current`, `pending` and `previous` (as `bao kv put -mount=MOUNT PREFIX/ID
//! current=…` writes them).
//!
//! **Check-and-set.** The first read of a run remembers the secret's version, and every write of the run is a
//! check-and-set against the version the run last saw. A write by anyone else in between (another node rotating
//! the same volume, an operator, `volume rewrap`) makes the run fail with ABORTED (exit 10) without writing: two
//! writers cannot interleave, and nothing is lost: the other writer's state is the stored one.
//!
//! **One rotation at a time.** Before it touches the header a run records its claim (see
//! [`super::claim`]) in the field `claim` of the same secret, with check-and-set: a second node that reads a live
//! claim, or loses the race to write its own, exits 10 without writing anything. The field goes when the run
//! ends.
//!
//! **Crash safety.** Each transition of the file store is one KV write here (put-pending; commit = current ←
//! pending, previous ← old current, pending dropped; forget-previous), so a crash leaves either the old or the
//! new version, never half of one.
//!
//! **Envelope** (`--key-wrap vault-transit://MOUNT/KEY` or `aws-kms://ARN`): every value is stored as a Transit
//! ciphertext (`vault:vN:…`) or a KMS CiphertextBlob of that key, and unwrapped on read; a plain value is refused.
//! `volume rewrap` rotates the Transit key and rewraps every stored value in Vault, or re-encrypts every value
//! with KMS ReEncrypt, without the plaintext leaving the key manager. KMS values are bound to their volume (the
//! encryption context names the store and the volume id, see [`super::aws_kms_wrap`]); rewrap binds older ones.

use super::aws_kms_wrap::is_kms_blob;
use super::store::{Claim, KeyStore, StoredKeys, same, store_error};
use super::transit_wrap::is_transit_ciphertext;
use super::wrap::KeyWrap;
use crate::crypto::{Passphrase, SecretBytes};
use crate::exit::{Classify, ExitStatus};
use crate::kms::vault::{Vault, kv_name, transit_name};
use crate::kms::{VersionedStore, Wrapping};
use crate::volume::Error;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// The fields of a volume's secret that hold keys.
pub const FIELDS: [&str; 3] = ["current", "pending", "previous"];
/// The field holding the rotation claim (JSON, not a key: never wrapped, never rewrapped).
pub const CLAIM_FIELD: &str = "claim";

/// One volume's entry in a `vault-kv://` store.
pub struct VaultKvStore {
    client: Arc<Vault>,
    /// The key wrapping every stored value (`--key-wrap`), if any.
    wrap: Option<Arc<dyn KeyWrap>>,
    /// `MOUNT/PREFIX/ID` as [`VersionedStore`] names it.
    name: String,
    volume_id: String,
    /// The version this run last read or wrote; `None` before the first read.
    seen: Mutex<Option<u64>>,
}

/// Whether a volume id can be a KV path segment as it is.
pub fn valid_volume_id(id: &str) -> bool {
    !id.is_empty()
        && id != "."
        && id != ".."
        && id.len() <= 253
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
}

impl VaultKvStore {
    /// The entry of `volume_id` in the store `uri` (`vault-kv://MOUNT/PREFIX`) on `client`.
    pub fn from_uri(
        uri: &str,
        volume_id: &str,
        client: Arc<Vault>,
        wrap: Option<Arc<dyn KeyWrap>>,
    ) -> Result<Self, Error> {
        let crate::kms::KeyRef::VaultKv { mount, prefix } =
            crate::kms::KeyRef::parse(uri).map_err(|e| Error::BadRequest(e.to_string()))?
        else {
            return Err(Error::BadRequest(format!("key store `{uri}`: expected vault-kv://MOUNT/PREFIX")));
        };
        Self::new(client, wrap, &mount, &prefix, volume_id)
    }

    /// The entry of `volume_id` under `vault-kv://mount/prefix`.
    pub fn new(
        client: Arc<Vault>,
        wrap: Option<Arc<dyn KeyWrap>>,
        mount: &str,
        prefix: &str,
        volume_id: &str,
    ) -> Result<Self, Error> {
        if !valid_volume_id(volume_id) {
            return Err(Error::BadRequest(format!(
                "volume id `{}` cannot be a KV path segment (letters, digits and -_. only)",
                crate::redact::server_message(volume_id.as_bytes())
            )));
        }
        let path = if prefix.is_empty() { volume_id.to_owned() } else { format!("{prefix}/{volume_id}") };
        Ok(Self { client, wrap, name: kv_name(mount, &path), volume_id: volume_id.to_owned(), seen: Mutex::new(None) })
    }

    fn seen(&self) -> std::sync::MutexGuard<'_, Option<u64>> {
        self.seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The stored fields (still wrapped, when wrapped) and their version; a change since this run's last read
    /// or write is a conflict.
    fn read(&self) -> Result<(BTreeMap<String, SecretBytes>, u64), Error> {
        let versioned = self.client.read(&self.name).map_err(store_error)?;
        let (fields, version) = versioned.map(|v| (v.fields, v.version)).unwrap_or_default();
        let mut seen = self.seen();
        if let Some(expected) = *seen
            && expected != version
        {
            return Err(self.conflict(expected));
        }
        *seen = Some(version);
        Ok((fields, version))
    }

    fn conflict(&self, expected: u64) -> Error {
        store_error(crate::kms::Error::Conflict {
            what: format!("KV secret `{}` of volume `{}`", self.name, self.volume_id),
            expected,
        })
    }

    fn write(&self, fields: &BTreeMap<String, SecretBytes>, version: u64) -> Result<(), Error> {
        match self.client.write(&self.name, fields, version) {
            Ok(new_version) => {
                *self.seen() = Some(new_version);
                Ok(())
            }
            Err(crate::kms::Error::Conflict { .. }) => Err(self.conflict(version)),
            Err(other) => Err(store_error(other)),
        }
    }

    /// A stored value as a passphrase (unwrapped with `--key-wrap`).
    fn open_value(&self, field: &str, value: &SecretBytes) -> Result<Passphrase, Error> {
        let Some(wrap) = &self.wrap else { return Ok(Passphrase::new(value.to_vec())) };
        let text = std::str::from_utf8(value).ok().filter(|_| wrap.is_wrapped(value)).ok_or_else(|| Error::Store {
            status: ExitStatus::InvalidInput,
            message: format!(
                "KV secret `{}` field `{field}` is not a {}, and --key-wrap stores only wrapped keys",
                self.name,
                wrap.form()
            ),
        })?;
        wrap.unwrap(text)
    }

    /// A passphrase as the value to store (wrapped with `--key-wrap`; else it must be UTF-8 text, which KV
    /// holds).
    fn seal_value(&self, key: &Passphrase) -> Result<SecretBytes, Error> {
        match &self.wrap {
            Some(wrap) => Ok(SecretBytes::new(wrap.wrap(key)?.into_bytes())),
            None if std::str::from_utf8(key.expose()).is_ok() => Ok(SecretBytes::new(key.expose().to_vec())),
            None => Err(Error::Store {
                status: ExitStatus::InvalidInput,
                message: "a vault-kv:// store keeps passphrases as text: this one is not UTF-8 (use --key-wrap)".into(),
            }),
        }
    }

    fn keys(&self, fields: &BTreeMap<String, SecretBytes>) -> Result<StoredKeys, Error> {
        let get = |field: &str| -> Result<Option<Passphrase>, Error> {
            match fields.get(field).filter(|v| !v.is_empty()) {
                Some(value) => self.open_value(field, value).map(Some),
                None => Ok(None),
            }
        };
        let current = get("current")?.ok_or_else(|| Error::NoStoredKey { volume_id: self.volume_id.clone() })?;
        Ok(StoredKeys { current, pending: get("pending")?, previous: get("previous")? })
    }
}

impl KeyStore for VaultKvStore {
    fn get(&self) -> Result<StoredKeys, Error> {
        let (fields, _) = self.read()?;
        self.keys(&fields)
    }

    fn put_pending(&self, new: &Passphrase) -> Result<(), Error> {
        let (mut fields, version) = self.read()?;
        if !fields.contains_key("current") {
            return Err(Error::NoStoredKey { volume_id: self.volume_id.clone() });
        }
        fields.insert("pending".into(), self.seal_value(new)?);
        self.write(&fields, version)
    }

    fn commit(&self, new: &Passphrase) -> Result<(), Error> {
        let (mut fields, version) = self.read()?;
        let keys = self.keys(&fields)?;
        if !keys.pending.as_ref().is_some_and(|p| same(p, new)) {
            if same(&keys.current, new) {
                return Ok(());
            }
            return Err(Error::Store {
                status: ExitStatus::Failure,
                message: format!("KV secret `{}`: `pending` does not hold the key being committed", self.name),
            });
        }
        // One write: the stored (maybe wrapped) values move; nothing is wrapped again.
        let pending = fields.remove("pending").unwrap_or_default();
        let current = fields.remove("current").unwrap_or_default();
        fields.insert("previous".into(), current);
        fields.insert("current".into(), pending);
        self.write(&fields, version)
    }

    fn forget_previous(&self) -> Result<(), Error> {
        let (mut fields, version) = self.read()?;
        if fields.remove("previous").is_none() {
            return Ok(());
        }
        self.write(&fields, version)
    }

    fn claim(&self, claim: &Claim, force: bool) -> Result<Option<Claim>, Error> {
        let (mut fields, version) = self.read()?;
        if !fields.contains_key("current") {
            return Err(Error::NoStoredKey { volume_id: self.volume_id.clone() });
        }
        let replaced = fields.get(CLAIM_FIELD).and_then(|held| Claim::parse(held));
        if let Some(other) = replaced.as_ref().filter(|other| !claim.may_replace(other, force)) {
            return Err(Error::Claimed { volume_id: self.volume_id.clone(), holder: other.describe() });
        }
        fields.insert(CLAIM_FIELD.into(), SecretBytes::new(claim.to_json().into_bytes()));
        match self.write(&fields, version) {
            Ok(()) => Ok(replaced.filter(|held| held.run != claim.run)),
            // Another run wrote in between (most likely its own claim): nothing of ours was written.
            Err(e) if e.status() == ExitStatus::Aborted => Err(Error::Claimed {
                volume_id: self.volume_id.clone(),
                holder: format!("a run that changed `{}` while this one claimed it", self.name),
            }),
            Err(e) => Err(e),
        }
    }

    /// One check-and-set write of the secret: created (check-and-set 0), or, with `replace`, its `current`
    /// replaced in the version read.
    fn import(&self, key: &Passphrase, replace: bool) -> Result<(), Error> {
        let (mut fields, version) = self.read()?;
        if fields.get("current").is_some_and(|v| !v.is_empty()) {
            if !replace {
                return Err(Error::AlreadyStored { volume_id: self.volume_id.clone() });
            }
            let filled = |field: &str| fields.get(field).is_some_and(|v| !v.is_empty());
            let under_way = filled("pending") || filled("previous");
            let claim = fields.get(CLAIM_FIELD).and_then(|held| Claim::parse(held));
            super::store::import_blocked(&self.volume_id, under_way, claim.as_ref())?;
        }
        let sealed = super::store::seal_checked(self.wrap.as_deref(), key)?;
        if self.wrap.is_none() && std::str::from_utf8(&sealed).is_err() {
            return Err(Error::Store {
                status: ExitStatus::InvalidInput,
                message: "a vault-kv:// store keeps passphrases as text: this one is not UTF-8 (use --key-wrap)".into(),
            });
        }
        fields.remove(CLAIM_FIELD);
        fields.insert("current".into(), sealed);
        self.write(&fields, version)
    }

    fn release(&self, claim: &Claim) -> Result<(), Error> {
        let (mut fields, version) = self.read()?;
        if fields.get(CLAIM_FIELD).and_then(|held| Claim::parse(held)).as_ref() != Some(claim) {
            return Ok(());
        }
        fields.remove(CLAIM_FIELD);
        self.write(&fields, version)
    }
}

/// What `volume rewrap` did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Rewrapped {
    /// Volume secrets rewritten.
    pub secrets: usize,
    /// Values rewrapped.
    pub values: usize,
    /// Volume secrets skipped because another writer changed them in the meantime twice in a row.
    pub conflicts: Vec<String>,
    /// Values (`` `kv/path` field `name` ``) found not to be wrapped after the key was rotated (a writer stored
    /// them while the run went on): their secrets were left as they were.
    pub not_wrapped: Vec<String>,
}

/// Most values named in the error of a store that holds values other than wrapped ones.
const NAMED_VALUES: usize = 10;

/// The key `volume rewrap` rewraps a store's values with, inside its key manager.
pub struct Rewrapper<'a> {
    /// The key manager: OpenBao/Vault's Transit, or AWS KMS.
    manager: &'a dyn Wrapping,
    /// The key's name for `manager`.
    key: String,
    /// Whether the key gets a new version before the values are rewrapped.
    rotate: bool,
    /// Whether a stored value is wrapped by this kind of key.
    is_wrapped: fn(&[u8]) -> bool,
    /// What wrapped values are called, in the plural.
    forms: &'static str,
    /// The Vault paths of the key the token must be allowed to update (Transit's rotate and rewrap).
    key_paths: Vec<String>,
    /// The store whose values are bound to their volume (AWS KMS's encryption context, the record inside a
    /// Transit plaintext), if they are.
    binds: Option<String>,
    /// Whether the binding is inside the plaintext (Transit: each value is decrypted to read and check it).
    binds_inside: bool,
}

impl<'a> Rewrapper<'a> {
    /// Transit key `KEY` of mount `MOUNT` on `client`, rotated first when `rotate`; each value of store `store` (the
    /// `--key-store` URI) decrypted to read its binding (see [`super::transit_wrap`]), then rewrapped with
    /// `MOUNT/rewrap/KEY` when bound to its volume already, else encrypted anew bound to it.
    pub fn transit(client: &'a Vault, (mount, key): (&str, &str), rotate: bool, store: &str) -> Result<Self, Error> {
        let transit = transit_name(mount, key);
        let (rotate_path, rewrap_path) =
            crate::kms::vault::transit_rotate_and_rewrap_paths(&transit).map_err(store_error)?;
        let (mount_path, name) = rewrap_path.split_once("/rewrap/").expect("MOUNT/rewrap/KEY");
        let (decrypt_path, encrypt_path) =
            (format!("{mount_path}/decrypt/{name}"), format!("{mount_path}/encrypt/{name}"));
        let mut key_paths = if rotate { vec![rotate_path, rewrap_path] } else { vec![rewrap_path] };
        key_paths.extend([decrypt_path, encrypt_path]);
        Ok(Self {
            manager: client,
            key: transit,
            rotate,
            is_wrapped: is_transit_ciphertext,
            forms: "Transit ciphertexts",
            key_paths,
            binds: Some(store.to_owned()),
            binds_inside: true,
        })
    }

    /// AWS KMS key `key`: values re-encrypted with ReEncrypt under its current key material (KMS rotates the
    /// material on its own schedule, so there is no rotation here), each bound to its volume of store `store` (the
    /// `--key-store` URI; bare blobs are bound, see [`super::aws_kms_wrap`]).
    pub fn aws_kms(client: &'a crate::kms::aws::Aws, key: &str, store: &str) -> Self {
        Self {
            manager: client,
            key: key.to_owned(),
            rotate: false,
            is_wrapped: is_kms_blob,
            forms: "KMS CiphertextBlobs in standard base64",
            key_paths: Vec::new(),
            binds: Some(store.to_owned()),
            binds_inside: false,
        }
    }

    /// Whether the key gets a new version before the values are rewrapped.
    pub fn rotates(&self) -> bool {
        self.rotate
    }

    /// What a refused run did not do.
    fn nothing_done(&self) -> &'static str {
        if self.rotate { "nothing was rotated or rewrapped" } else { "nothing was rewrapped" }
    }

    /// The names (`` `kv/path` field `name` ``) of the values in `fields` that are not wrapped by this key's kind.
    fn not_wrapped(&self, name: &str, fields: &BTreeMap<String, SecretBytes>) -> Vec<String> {
        fields
            .iter()
            .filter(|(field, _)| field.as_str() != CLAIM_FIELD)
            .filter(|(_, value)| !(self.is_wrapped)(value))
            .map(|(field, _)| format!("`{name}` field `{field}`"))
            .collect()
    }
}

/// Refuses (exit 16, before anything changes) a token that may not do every step of the run: rotate the Transit
/// key (when asked), rewrap with it, and write each volume secret. Rotating and then failing to write KV would leave
/// the store wrapped by an old key version the operator meant to retire.
fn check_permissions(client: &Vault, names: &[(String, String)], rewrapper: &Rewrapper<'_>) -> Result<(), Error> {
    use crate::kms::vault::kv_write_path;
    let mut needed = rewrapper.key_paths.clone();
    for (_, name) in names {
        needed.push(kv_write_path(name).map_err(store_error)?);
    }
    let granted = client.capabilities_self(&needed).map_err(store_error)?;
    let may_update = |path: &String| {
        granted
            .get(path)
            .is_some_and(|caps| !caps.iter().any(|c| c == "deny") && caps.iter().any(|c| c == "update" || c == "root"))
    };
    let refused: Vec<&String> = needed.iter().filter(|path| !may_update(path)).collect();
    if refused.is_empty() {
        return Ok(());
    }
    let more = refused.len().saturating_sub(NAMED_VALUES);
    let mut listed = refused.iter().take(NAMED_VALUES).map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", ");
    if more > 0 {
        listed.push_str(&format!(" and {more} more"));
    }
    Err(Error::Store {
        status: ExitStatus::Unauthenticated,
        message: format!(
            "the token may not update {listed}; {} (hint: the policy needs `update` on every volume secret's KV data \
             path{})",
            rewrapper.nothing_done(),
            if rewrapper.key_paths.is_empty() { "" } else { " and on the Transit key's rotate and rewrap paths" }
        ),
    })
}

/// `volume rewrap`: checks that every value of every volume secret under `prefix` is wrapped by `rewrapper`'s kind
/// of key (a store holding any other value is refused whole, exit 3, before the key is rotated or anything
/// written) and that the token may do every step (exit 16 otherwise, before anything changes), then optionally
/// rotates the Transit key, then rewraps every value inside the key manager (`transit/rewrap` with the key's newest
/// version, or KMS ReEncrypt: the plaintext never leaves it), each secret written with check-and-set (a secret
/// changed meanwhile is read again once, then reported as a conflict; one that a writer filled with a value not
/// wrapped meanwhile is left as it is and reported).
pub fn rewrap_all(client: &Vault, kv_mount: &str, prefix: &str, rewrapper: &Rewrapper<'_>) -> Result<Rewrapped, Error> {
    let mut names = Vec::new();
    for id in client.kv_list(kv_mount, prefix).map_err(store_error)? {
        if id.ends_with('/') || !valid_volume_id(&id) {
            continue;
        }
        let path = if prefix.is_empty() { id.clone() } else { format!("{prefix}/{id}") };
        names.push((id, kv_name(kv_mount, &path)));
    }
    // Every value first: rotating the key and then stopping at a plain value would leave a store half rewrapped.
    let mut invalid = Vec::new();
    for (_, name) in &names {
        if let Some(versioned) = client.read(name).map_err(store_error)? {
            invalid.extend(rewrapper.not_wrapped(name, &versioned.fields));
        }
    }
    if !invalid.is_empty() {
        let more = invalid.len().saturating_sub(NAMED_VALUES);
        let mut listed = invalid.iter().take(NAMED_VALUES).cloned().collect::<Vec<_>>().join(", ");
        if more > 0 {
            listed.push_str(&format!(" and {more} more"));
        }
        return Err(Error::Store {
            status: ExitStatus::InvalidInput,
            message: format!(
                "{} stored value(s) are not {} ({listed}); {}",
                invalid.len(),
                rewrapper.forms,
                rewrapper.nothing_done()
            ),
        });
    }
    check_permissions(client, &names, rewrapper)?;
    // A Transit value moved from another volume's entry is refused before the key is rotated or anything written.
    if let (Some(store), true) = (&rewrapper.binds, rewrapper.binds_inside) {
        for (id, name) in &names {
            let Some(versioned) = client.read(name).map_err(store_error)? else { continue };
            let binding = super::wrap::Binding::new(store, id);
            for (field, value) in versioned.fields.iter().filter(|(field, _)| field.as_str() != CLAIM_FIELD) {
                let text = std::str::from_utf8(value).expect("checked above").trim();
                super::transit_wrap::check_value(rewrapper.manager, &rewrapper.key, text, &binding).map_err(
                    |e| match e.status() {
                        ExitStatus::DataLoss | ExitStatus::InvalidInput => Error::Store {
                            status: e.status(),
                            message: format!("`{name}` field `{field}`: {e}; {}", rewrapper.nothing_done()),
                        },
                        _ => e,
                    },
                )?;
            }
        }
    }
    if rewrapper.rotate {
        rewrapper.manager.rotate_key(&rewrapper.key).map_err(store_error)?;
    }
    let mut done = Rewrapped::default();
    for (id, name) in &names {
        let mut attempts = 0;
        loop {
            attempts += 1;
            let Some(versioned) = client.read(name).map_err(store_error)? else { break };
            let plain = rewrapper.not_wrapped(name, &versioned.fields);
            if !plain.is_empty() {
                done.not_wrapped.extend(plain);
                break;
            }
            let mut fields = BTreeMap::new();
            let mut changed = 0;
            for (field, value) in &versioned.fields {
                if field == CLAIM_FIELD {
                    fields.insert(field.clone(), value.clone());
                    continue;
                }
                let text = std::str::from_utf8(value).expect("checked above").trim();
                let rewrapped = match &rewrapper.binds {
                    Some(store) if rewrapper.binds_inside => super::transit_wrap::rewrap_value(
                        rewrapper.manager,
                        &rewrapper.key,
                        text,
                        &super::wrap::Binding::new(store, id),
                    )?,
                    Some(store) => super::aws_kms_wrap::rewrap_value(
                        rewrapper.manager,
                        &rewrapper.key,
                        text,
                        &super::wrap::Binding::new(store, id),
                    )?,
                    None => rewrapper.manager.rewrap(&rewrapper.key, text).map_err(store_error)?,
                };
                if rewrapped != text {
                    changed += 1;
                }
                fields.insert(field.clone(), SecretBytes::new(rewrapped.into_bytes()));
            }
            if changed == 0 {
                break;
            }
            match client.write(name, &fields, versioned.version) {
                Ok(_) => {
                    done.secrets += 1;
                    done.values += changed;
                    break;
                }
                Err(crate::kms::Error::Conflict { .. }) if attempts < 2 => continue,
                Err(crate::kms::Error::Conflict { .. }) => {
                    done.conflicts.push(id.clone());
                    break;
                }
                Err(other) => return Err(store_error(other)),
            }
        }
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn volume_ids_that_are_path_segments() {
        for good in ["pvc-1", "0001-0009-rook-ceph-0000000000000001-5f0e", "a.b_c"] {
            assert!(valid_volume_id(good), "{good}");
        }
        for bad in ["", ".", "..", "a/b", "a b", "pvc%2F1"] {
            assert!(!valid_volume_id(bad), "{bad}");
        }
    }

    #[test]
    fn key_manager_errors_keep_their_exit_status() {
        let conflict = store_error(crate::kms::Error::Conflict { what: "x".into(), expected: 3 });
        assert_eq!(conflict.status(), ExitStatus::Aborted);
        let denied =
            store_error(crate::kms::Error::Denied { what: "x".into(), service: "s".into(), message: "m".into() });
        assert_eq!(denied.status(), ExitStatus::Unauthenticated);
        // The hint is the error's hint, not part of its message in parentheses.
        assert!(!denied.to_string().contains("hint") && denied.hint().is_some_and(|h| h.contains("policy")));
    }
}
