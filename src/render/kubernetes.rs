//! Kubernetes objects that deliver image decryption keys: the Secret (node key model, the unmerged KEP's
//! `kubernetes.io/decryptionkeys`, or the enc-key-sync operator's `key` type), a DaemonSet that installs the keys
//! on every node, and the KEP's ServiceAccount patch and Pod snippet (`../shared/spec/kubernetes.md` §2–§4).
//!
//! Every input is checked before any object is built: the Secret's name and namespace, each data key name
//! (kubectl's rules), each key file (a private key, certificate or OpenPGP secret key the runtimes can use) and
//! the 1 MiB limit. Objects are printed by [`super::kubectl`], byte for byte as kubectl prints them.

mod daemonset;

pub use daemonset::Runtime;

use super::{OutputFormat, RenderError, kubectl};
use crate::crypto::Passphrase;
use crate::crypto::keys;
use crate::exit::{Classified, ExitStatus};
use crate::ocicrypt::{pgp, pkcs7};
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
    /// A key file that is not a usable private key.
    #[error("{file}: {problem}")]
    UnusableKey {
        /// The file.
        file: String,
        /// Why it cannot be used.
        problem: String,
        /// What to do.
        hint: String,
    },
    /// The decoded data exceeds the API server's 1 MiB limit.
    #[error("the Secret's data is {size} bytes, over the 1 MiB ({MAX_SECRET_SIZE} bytes) limit of the API server")]
    TooLarge {
        /// The decoded size.
        size: usize,
    },
    /// Nothing in the Secret can decrypt anything.
    #[error("no private key among the key files: {0}")]
    NoPrivateKey(String),
    /// The objects cannot be printed.
    #[error(transparent)]
    Render(#[from] RenderError),
}

impl Classified for Error {
    fn status(&self) -> ExitStatus {
        match self {
            Error::Render(_) => ExitStatus::Failure,
            _ => ExitStatus::InvalidInput,
        }
    }

    fn hint(&self) -> Option<Cow<'_, str>> {
        Some(Cow::Borrowed(match self {
            Error::InvalidName { what: "--namespace", .. } => {
                "a namespace is a DNS-1123 label: at most 63 characters, lowercase letters, digits and `-`, starting \
                 and ending with a letter or digit"
            }
            Error::InvalidName { .. } => {
                "use a DNS-1123 subdomain: at most 253 characters, lowercase letters, digits, `-` and `.`, starting \
                 and ending with a letter or digit (e.g. `image-keys`)"
            }
            Error::InvalidDataKey { .. } => {
                "name the entry with --key NAME=FILE, using letters, digits, `-`, `_` and `.` (e.g. `--key node.pem=FILE`)"
            }
            Error::DuplicateDataKey(_) => "give one of them another name with --key NAME=FILE",
            Error::UnusableKey { hint, .. } => hint,
            Error::TooLarge { .. } => "split the keys over several Secrets (run the command once per group of keys)",
            Error::NoPrivateKey(_) => {
                "add the private key (PEM, DER or JWK) or OpenPGP secret key (`gpg --export-secret-keys`) that \
                 decrypts the images"
            }
            Error::Render(_) => return None,
        }))
    }
}

/// Checks the request and builds its objects: the Secret first, then the DaemonSet or the ServiceAccount patch
/// and Pod snippet.
pub fn build(request: &Request) -> Result<Vec<Value>, Error> {
    check_subdomain("NAME", &request.name)?;
    if let Some(namespace) = &request.namespace {
        check_label("--namespace", namespace)?;
    }
    if let Some(account) = &request.service_account {
        check_subdomain("--service-account", account)?;
        if request.name.len() + POD_SUFFIX.len() > 253 {
            return Err(Error::InvalidName {
                what: "NAME",
                value: request.name.clone(),
                problem: format!(
                    "with --service-account it may have at most {} characters (the example Pod is \
                                  named NAME{POD_SUFFIX})",
                    253 - POD_SUFFIX.len()
                ),
            });
        }
    }
    let data = check_keys(request)?;
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

/// Checks every key file and returns the Secret's `data` (values base64-encoded). In the node formats each file
/// is a data entry, so its name must suit kubectl; in the KEP's the files are entries of one list, names unused.
fn check_keys(request: &Request) -> Result<Map<String, Value>, Error> {
    let on_nodes = request.format.keys_on_nodes();
    if on_nodes {
        let mut names = std::collections::HashSet::new();
        for key in &request.keys {
            check_data_key(&key.name)?;
            if !names.insert(key.name.as_str()) {
                return Err(Error::DuplicateDataKey(key.name.clone()));
            }
        }
        check_size(request.keys.iter().map(|key| key.bytes.len()).sum())?;
    }
    let kinds = request
        .keys
        .iter()
        .map(|key| classify(key, request.format, request.password.as_ref()))
        .collect::<Result<Vec<_>, _>>()?;
    if kinds.iter().all(|kind| *kind == KeyKind::Certificate) {
        return Err(Error::NoPrivateKey("only certificates were given".into()));
    }
    if on_nodes {
        return Ok(request.keys.iter().map(|key| (key.name.clone(), json!(BASE64.encode(&key.bytes[..])))).collect());
    }
    let list = kep_list(request, &kinds);
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
/// that need it (Go's encoding of the KEP struct, had it JSON tags; spec §1).
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

/// What a key file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum KeyKind {
    /// An unencrypted private key or OpenPGP secret key.
    Plain,
    /// A private key that needs the password.
    Encrypted,
    /// An X.509 certificate (ocicrypt's PKCS#7 needs it next to the private key).
    Certificate,
}

const REMOVE_PASSWORD_HINT: &str = "keys in a node's keys directory cannot have a password (containerd and CRI-O \
     cannot ask for one): remove it with `openssl pkey -in KEY -out plain.pem` (gpg: `gpg --passwd`), or use \
     --format kep";

/// Recognises a key file the way ocicrypt sorts the files of a keys directory, reusing cryptadm's key parsers.
///
/// cryptadm reads more than Go's ocicrypt on a node does: keys bound for nodes are also held to ocicrypt's forms
/// (no PEM SEC1, no ASCII-armoured OpenPGP), since one file a node cannot read fails every decryption there.
fn classify(key: &KeyFile, format: SecretFormat, password: Option<&Passphrase>) -> Result<KeyKind, Error> {
    let unusable =
        |problem: String, hint: &str| Error::UnusableKey { file: key.source.clone(), problem, hint: hint.to_owned() };
    let shape = keys::key_file_shape(&key.bytes);
    let problem = match keys::parse_private_key(&key.bytes, None, &key.source) {
        Ok(_) if format.keys_on_nodes() && shape.sec1_pem => {
            return Err(unusable(
                "a PEM `EC PRIVATE KEY` (SEC1), which ocicrypt on the nodes does not read".into(),
                "convert it to PKCS#8: `openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY.p8`",
            ));
        }
        Ok(_) => return Ok(KeyKind::Plain),
        Err(e) => invalid_key_problem(e),
    };
    if shape.password_protected || shape.legacy_pem_encryption {
        return encrypted_key(key, format, password, &problem, shape.legacy_pem_encryption);
    }
    if pkcs7::parse_certificate(&key.bytes, &key.source).is_ok() {
        return Ok(KeyKind::Certificate);
    }
    #[cfg(not(feature = "pgp"))]
    if pgp::looks_like_openpgp(&key.bytes) {
        return Err(unusable(
            pgp::NO_OPENPGP.into(),
            "give a private key (PEM, DER or JWK; RSA or EC) or a certificate",
        ));
    }
    #[cfg(feature = "pgp")]
    if let Ok(certs) = pgp::parse_keyring(&key.bytes, &key.source) {
        if !certs.iter().any(|c| c.is_tsk()) {
            return Err(unusable(
                "an OpenPGP public key; the node needs the secret key".into(),
                "export the secret key with `gpg --export-secret-keys KEYID > key.gpg`",
            ));
        }
        // Go's openpgp.ReadKeyRing, which ocicrypt uses to recognise a secret keyring, reads binary packets only.
        if format.keys_on_nodes() && key.bytes.trim_ascii_start().starts_with(b"-----BEGIN PGP") {
            return Err(unusable(
                "an ASCII-armoured OpenPGP key, which ocicrypt on the nodes does not read".into(),
                "give the binary form: `gpg --dearmor < KEY.asc > KEY.gpg`",
            ));
        }
        return openpgp_secret_key(key, &certs, format, password);
    }
    let hint = if keys::parse_public_key(&key.bytes, &key.source).is_ok() {
        "give the private key: the Secret must hold what decrypts the image; the public key is only for \
         `cryptadm image encrypt --recipient jwe:PUB.pem`"
    } else {
        "give a private key (PEM, DER or JWK; RSA or EC), an OpenPGP secret key, or the X.509 certificate of a \
         PKCS#7 recipient next to its private key"
    };
    Err(unusable(problem, hint))
}

/// The problem of a key parser's error without the file name, which [`Error::UnusableKey`] already names.
fn invalid_key_problem(error: crate::ocicrypt::Error) -> String {
    match error {
        crate::ocicrypt::Error::InvalidKey { problem, .. } => problem,
        other => other.to_string(),
    }
}

const NO_PASSWORD_HINT: &str = "give the key's password with --passphrase-file FILE (`-` for standard input), or set \
     CRYPTADM_PASSPHRASE_FILE or CRYPTADM_PASSPHRASE";

/// An OpenPGP secret key: usable on nodes only without a passphrase; in the KEP's list with the one given.
#[cfg(feature = "pgp")]
fn openpgp_secret_key(
    key: &KeyFile,
    certs: &[sequoia_openpgp::Cert],
    format: SecretFormat,
    password: Option<&Passphrase>,
) -> Result<KeyKind, Error> {
    let unusable = |problem: &str, hint: &str| Error::UnusableKey {
        file: key.source.clone(),
        problem: problem.to_owned(),
        hint: hint.to_owned(),
    };
    let locked: Vec<_> = certs
        .iter()
        .flat_map(|c| c.keys().secret())
        .filter(|k| k.key().secret().is_encrypted())
        .map(|k| k.key().clone())
        .collect();
    if locked.is_empty() {
        return Ok(KeyKind::Plain);
    }
    if format.keys_on_nodes() {
        return Err(unusable("the OpenPGP secret key is protected by a passphrase", REMOVE_PASSWORD_HINT));
    }
    let Some(password) = password else {
        return Err(unusable("the OpenPGP secret key is protected by a passphrase", NO_PASSWORD_HINT));
    };
    let password = sequoia_openpgp::crypto::Password::from(password.expose());
    if locked.into_iter().any(|k| k.decrypt_secret(&password).is_err()) {
        return Err(unusable("the passphrase does not unlock the OpenPGP secret key", "give the key's passphrase"));
    }
    Ok(KeyKind::Encrypted)
}

fn encrypted_key(
    key: &KeyFile,
    format: SecretFormat,
    password: Option<&Passphrase>,
    problem: &str,
    legacy_pem: bool,
) -> Result<KeyKind, Error> {
    let unusable =
        |problem: String, hint: &str| Error::UnusableKey { file: key.source.clone(), problem, hint: hint.to_owned() };
    if format.keys_on_nodes() {
        return Err(unusable("the private key is protected by a password".into(), REMOVE_PASSWORD_HINT));
    }
    if legacy_pem {
        // No password helps here: cryptadm (and so `image decrypt`) cannot read the form at all.
        return Err(unusable(
            problem.to_owned(),
            "convert it to encrypted PKCS#8: `openssl pkcs8 -topk8 -v2 aes-256-cbc -in KEY -out KEY.p8`",
        ));
    }
    let Some(password) = password else {
        return Err(unusable(problem.to_owned(), NO_PASSWORD_HINT));
    };
    keys::parse_private_key(&key.bytes, Some(password.expose()), &key.source)
        .map(|_| KeyKind::Encrypted)
        .map_err(|e| unusable(invalid_key_problem(e), "give the password that unlocks the key"))
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
        check_label("--namespace", "kube-system").unwrap();
        assert!(check_label("--namespace", "a.b").is_err());
        assert!(check_label("--namespace", &"a".repeat(64)).is_err());
    }
}
