//! Kubernetes objects that deliver image decryption keys: the Secret (node key model, the unmerged KEP's
//! `kubernetes.io/decryptionkeys`, or the enc-key-sync operator's `key` type), a DaemonSet that installs the keys
//! on every node, and the KEP's ServiceAccount patch and Pod snippet (`docs/formats.md#kubernetes-secrets-for-image-keys`).
//!
//! Every input is checked before any object is built: the Secret's name and namespace, each data key name
//! (kubectl's rules) and the 1 MiB limit. Whether the key files are usable is decided before, by
//! `ocicrypt::keyfiles`, whose verdicts [`build`] takes. Objects are printed by [`super::kubectl`], byte for byte as kubectl prints them.

mod daemonset;

pub use daemonset::Runtime;

use super::{OutputFormat, RenderError, kubectl};
use crate::crypto::Passphrase;
use crate::exit::{Classify, ExitStatus};
use crate::ocicrypt::keyfiles::{Destination, KeyKind};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Map, Value, json};
use std::borrow::Cow;
use zeroize::Zeroizing;

/// The API server's limit on the decoded size of a Secret's data (`MaxSecretSize`).
pub const MAX_SECRET_SIZE: usize = 1024 * 1024;
/// The data key of the KEP's Secret.
pub const KEP_DATA_KEY: &str = ".imagedecryptionkey";
/// The KEP's Secret type.
pub const KEP_TYPE: &str = "kubernetes.io/decryptionkeys";
/// The Secret type the enc-key-sync operator (IBM/k8s-enc-image-operator) lists.
pub const ENC_KEY_SYNC_TYPE: &str = "key";
/// The namespace the enc-key-sync operator watches by default.
pub const ENC_KEY_SYNC_NAMESPACE: &str = "enc-key-sync";
/// The example Pod of `--service-account` is named after the Secret, with this suffix.
const POD_SUFFIX: &str = "-example";
/// `app.kubernetes.io/component` of every object.
pub const COMPONENT: &str = "image-decryption-keys";
/// `app.kubernetes.io/managed-by` of every object.
pub const MANAGED_BY: &str = "cryptadm";

/// Which Secret shape to build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SecretFormat {
    /// An `Opaque` Secret, one data entry per key file: what a copier DaemonSet installs on nodes.
    Node,
    /// The KEP's `kubernetes.io/decryptionkeys` Secret: one JSON list of `{keyData, keyPass}` entries.
    Kep,
    /// A `key`-type Secret in the `enc-key-sync` namespace, for IBM/k8s-enc-image-operator.
    EncKeySync,
}

impl SecretFormat {
    /// Whether the keys end up as files in a node's keys directory, where no password can be given.
    pub fn keys_on_nodes(self) -> bool {
        self != SecretFormat::Kep
    }

    /// Where the keys of this shape are going, for `ocicrypt::keyfiles`.
    pub fn destination(self) -> Destination {
        if self.keys_on_nodes() { Destination::NodeKeysDirectory } else { Destination::WithPassword }
    }
}

/// One key file to put into the Secret.
pub struct KeyFile {
    /// The data key (the file name on the node).
    pub name: String,
    /// Where it came from, for messages.
    pub source: String,
    /// The file's bytes, unchanged.
    pub bytes: Zeroizing<Vec<u8>>,
}

/// Everything the objects are built from.
pub struct Request {
    /// The Secret's name.
    pub name: String,
    /// Its namespace, if one is set.
    pub namespace: Option<String>,
    /// Its shape.
    pub format: SecretFormat,
    /// The key files, in the order given.
    pub keys: Vec<KeyFile>,
    /// The password of encrypted keys (`kep` only).
    pub password: Option<Passphrase>,
    /// Add a DaemonSet installing the keys for this runtime (`node` only).
    pub daemonset: Option<Runtime>,
    /// Add a ServiceAccount patch and Pod snippet for this ServiceAccount (`kep` only).
    pub service_account: Option<String>,
}

/// Why the objects cannot be built. Every variant is an invalid input and names what is wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A Kubernetes object name or namespace that the API server would refuse.
    #[error("{what} `{value}` is not valid: {problem}")]
    InvalidName {
        /// `NAME`, `--namespace`, `--service-account`.
        what: &'static str,
        /// The name.
        value: String,
        /// Which rule it breaks.
        problem: String,
    },
    /// A data key name kubectl refuses.
    #[error("`{key}` is not a valid key name for a Secret: {problem}")]
    InvalidDataKey {
        /// The key name.
        key: String,
        /// Which rule it breaks.
        problem: String,
    },
    /// Two files with the same data key name.
    #[error("two key files are named `{0}` in the Secret")]
    DuplicateDataKey(String),
    /// The decoded data exceeds the API server's 1 MiB limit.
    #[error("the Secret's data is {size} bytes, over the 1 MiB ({MAX_SECRET_SIZE} bytes) limit of the API server")]
    TooLarge {
        /// The decoded size.
        size: usize,
    },
    /// The objects cannot be printed.
    #[error(transparent)]
    Render(#[from] RenderError),
}

impl Classify for Error {
    fn status(&self) -> ExitStatus {
        match self {
            Error::Render(_) => ExitStatus::Failure,
            _ => ExitStatus::InvalidInput,
        }
    }

    fn hint(&self) -> Option<Cow<'_, str>> {
        Some(Cow::Borrowed(match self {
            Error::InvalidName { what: "namespace", .. } => {
                "a namespace is a DNS-1123 label: at most 63 characters, lowercase letters, digits and `-`, starting \
                 and ending with a letter or digit"
            }
            Error::InvalidName { .. } => {
                "use a DNS-1123 subdomain: at most 253 characters, lowercase letters, digits, `-` and `.`, starting \
                 and ending with a letter or digit (e.g. `image-keys`)"
            }
            Error::InvalidDataKey { .. } => "name the entry using letters, digits, `-`, `_` and `.` (e.g. `node.pem`)",
            Error::DuplicateDataKey(_) => "give one of them another name",
            Error::TooLarge { .. } => "split the keys over several Secrets (run the command once per group of keys)",
            Error::Render(_) => return None,
        }))
    }
}

/// Checks the names in the request, the data keys and the size of the data, as the API server and kubectl would.
pub fn check_request(request: &Request) -> Result<(), Error> {
    check_subdomain("NAME", &request.name)?;
    if let Some(namespace) = &request.namespace {
        check_label("namespace", namespace)?;
    }
    if let Some(account) = &request.service_account {
        check_subdomain("service account", account)?;
        if request.name.len() + POD_SUFFIX.len() > 253 {
            return Err(Error::InvalidName {
                what: "NAME",
                value: request.name.clone(),
                problem: format!(
                    "with a service account it may have at most {} characters (the example Pod is named \
                     NAME{POD_SUFFIX})",
                    253 - POD_SUFFIX.len()
                ),
            });
        }
    }
    if request.format.keys_on_nodes() {
        let mut names = std::collections::HashSet::new();
        for key in &request.keys {
            check_data_key(&key.name)?;
            if !names.insert(key.name.as_str()) {
                return Err(Error::DuplicateDataKey(key.name.clone()));
            }
        }
        check_size(request.keys.iter().map(|key| key.bytes.len()).sum())?;
    }
    Ok(())
}

/// Checks the request ([`check_request`]) and builds its objects: the Secret first, then the DaemonSet or the
/// ServiceAccount patch and Pod snippet. `kinds` are `ocicrypt::keyfiles`' verdicts on the key files, in order.
pub fn build(request: &Request, kinds: &[KeyKind]) -> Result<Vec<Value>, Error> {
    check_request(request)?;
    let data = secret_data(request, kinds)?;
    let mut objects = vec![secret(request, &data)];
    if let Some(runtime) = request.daemonset {
        objects.push(daemonset::daemonset(&request.name, request.namespace.as_deref(), runtime)?);
    }
    if let Some(account) = &request.service_account {
        objects.extend(kep_references(&request.name, request.namespace.as_deref(), account));
    }
    Ok(objects)
}

/// Prints objects as kubectl does: a YAML stream (`---` between documents) or JSON (several as a `v1 List`).
pub fn render(objects: &[Value], format: OutputFormat) -> Result<String, RenderError> {
    match (format, objects) {
        (OutputFormat::Json, [single]) => kubectl::json(single),
        (OutputFormat::Json, items) => kubectl::json(&json!({
            "apiVersion": "v1",
            "kind": "List",
            "metadata": {"resourceVersion": ""},
            "items": items,
        })),
        (OutputFormat::Yaml, items) => {
            let documents = items.iter().map(kubectl::yaml).collect::<Result<Vec<_>, _>>()?;
            Ok(documents.join("---\n"))
        }
    }
}

/// The labels every object carries.
fn labels() -> Value {
    json!({"app.kubernetes.io/component": COMPONENT, "app.kubernetes.io/managed-by": MANAGED_BY})
}

/// `metadata` with a name, the namespace if any, and more labels.
fn metadata(name: &str, namespace: Option<&str>, extra_labels: &[(&str, &str)]) -> Value {
    let mut labels = labels();
    for (key, value) in extra_labels {
        labels[*key] = json!(value);
    }
    let mut meta = json!({"name": name, "labels": labels});
    if let Some(namespace) = namespace {
        meta["namespace"] = json!(namespace);
    }
    meta
}

fn secret(request: &Request, data: &Map<String, Value>) -> Value {
    let (secret_type, namespace) = match request.format {
        SecretFormat::Node => ("Opaque", request.namespace.as_deref()),
        SecretFormat::Kep => (KEP_TYPE, request.namespace.as_deref()),
        SecretFormat::EncKeySync => {
            (ENC_KEY_SYNC_TYPE, Some(request.namespace.as_deref().unwrap_or(ENC_KEY_SYNC_NAMESPACE)))
        }
    };
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": metadata(&request.name, namespace, &[]),
        "data": data,
        "type": secret_type,
    })
}

/// The KEP's `imageDecryptSecrets` on a ServiceAccount and on a Pod. The ServiceAccount document is a patch
/// (`kubectl patch serviceaccount SA --patch-file …`): only what identifies the account and the new field, no
/// labels, because cryptadm does not manage the account.
fn kep_references(secret: &str, namespace: Option<&str>, account: &str) -> [Value; 2] {
    let reference = json!([{"name": secret}]);
    let mut account_metadata = json!({"name": account});
    if let Some(namespace) = namespace {
        account_metadata["namespace"] = json!(namespace);
    }
    let account_patch = json!({
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": account_metadata,
        "imageDecryptSecrets": reference,
    });
    let pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata(&format!("{secret}{POD_SUFFIX}"), namespace, &[]),
        "spec": {
            "serviceAccountName": account,
            "imageDecryptSecrets": reference,
            "containers": [{"name": "app", "image": "registry.example.com/app:encrypted"}],
        },
    });
    [account_patch, pod]
}

/// The Secret's `data` (values base64-encoded). In the node formats each file is a data entry; in the KEP's the
/// files are entries of one list, names unused.
fn secret_data(request: &Request, kinds: &[KeyKind]) -> Result<Map<String, Value>, Error> {
    if request.format.keys_on_nodes() {
        return Ok(request.keys.iter().map(|key| (key.name.clone(), json!(BASE64.encode(&key.bytes[..])))).collect());
    }
    let list = kep_list(request, kinds);
    check_size(list.len())?;
    Ok(Map::from_iter([(KEP_DATA_KEY.to_owned(), json!(BASE64.encode(&list[..])))]))
}

/// The API server's limit, on the decoded data.
fn check_size(size: usize) -> Result<(), Error> {
    if size > MAX_SECRET_SIZE {
        return Err(Error::TooLarge { size });
    }
    Ok(())
}

/// The KEP's `DecryptionKeys` as JSON: `[{"keyData": base64, "keyPass": base64}, …]`, `keyPass` only for keys
/// that need it (Go's encoding of the KEP struct, had it JSON tags; docs/formats.md).
fn kep_list(request: &Request, kinds: &[KeyKind]) -> Zeroizing<Vec<u8>> {
    let entries: Vec<Value> = request
        .keys
        .iter()
        .zip(kinds)
        .map(|(key, kind)| {
            let mut entry = json!({"keyData": BASE64.encode(&key.bytes[..])});
            if let (KeyKind::Encrypted, Some(password)) = (kind, &request.password) {
                entry["keyPass"] = json!(BASE64.encode(password.expose()));
            }
            entry
        })
        .collect();
    Zeroizing::new(serde_json::to_vec(&entries).expect("JSON values always serialize"))
}

/// kubectl's rules for a Secret's data keys (`IsConfigMapKey`).
pub fn check_data_key(key: &str) -> Result<(), Error> {
    let invalid = |problem: &str| Err(Error::InvalidDataKey { key: key.to_owned(), problem: problem.to_owned() });
    if key.is_empty() {
        return invalid("it is empty");
    }
    if key.len() > 253 {
        return invalid("it is longer than 253 characters");
    }
    if !key.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b)) {
        return invalid("only letters, digits, `-`, `_` and `.` are allowed");
    }
    if key == "." || key == ".." {
        return invalid("it must not be `.` or `..`");
    }
    if key.starts_with("..") {
        return invalid("it must not start with `..`");
    }
    Ok(())
}

/// A DNS-1123 subdomain (object names).
fn check_subdomain(what: &'static str, name: &str) -> Result<(), Error> {
    let invalid = |problem: &str| Err(Error::InvalidName { what, value: name.to_owned(), problem: problem.into() });
    if name.len() > 253 {
        return invalid("longer than 253 characters");
    }
    if name.is_empty() || !name.split('.').all(is_label) {
        return invalid(
            "a DNS-1123 subdomain has lowercase letters, digits, `-` and `.`, and starts and ends with a letter or digit",
        );
    }
    Ok(())
}

/// A DNS-1123 label (namespaces).
fn check_label(what: &'static str, name: &str) -> Result<(), Error> {
    if name.len() > 63 || !is_label(name) {
        return Err(Error::InvalidName {
            what,
            value: name.to_owned(),
            problem: "a DNS-1123 label has at most 63 lowercase letters, digits and `-`, and starts and ends with a \
                      letter or digit"
                .into(),
        });
    }
    Ok(())
}

fn is_label(part: &str) -> bool {
    let b = part.as_bytes();
    let alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    !b.is_empty() && b.len() <= 63 && alnum(&b[0]) && alnum(&b[b.len() - 1]) && b.iter().all(|c| alnum(c) || *c == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_key_rules() {
        for good in [".imagedecryptionkey", "key1.pem", "-", "a_b-c.d", &"k".repeat(253)] {
            check_data_key(good).unwrap();
        }
        for bad in ["", ".", "..", "..x", "a b", "a:b", "a/b", &"k".repeat(254)] {
            assert!(check_data_key(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn names() {
        check_subdomain("NAME", "image-keys.v1").unwrap();
        for bad in ["My_Keys", "-a", "a-", "a..b", "", &"a".repeat(254)] {
            assert!(check_subdomain("NAME", bad).is_err(), "{bad:?}");
        }
        check_label("namespace", "kube-system").unwrap();
        assert!(check_label("namespace", "a.b").is_err());
        assert!(check_label("namespace", &"a".repeat(64)).is_err());
    }
}
