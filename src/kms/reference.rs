//! The one key-reference syntax every command accepts, parsed once.
//!
//! The syntax (`vault-transit://MOUNT/KEY`, `vault-transit://WRAPPED@MOUNT/KEY`, `vault-kv://MOUNT/PREFIX`,
//! `barbican://UUID` or a secret href, `file:///PATH`, `clevis:<compact JWE>`, `NAME:REST` for plugins) is
//! documented once, in the table of docs/key-managers.md; [`KeyRef`]'s variants say the same per case.
//!
//! The server, namespace, CA and credentials never come from a reference: they are the command's settings
//! (the Vault CLI's environment variables, `clouds.yaml`). A mount path that itself contains `/` is written with
//! `%2F` (`vault-kv://team%2Fkv/volumes`).

use super::Error;
use base64::Engine as _;
use std::fmt;
use std::path::PathBuf;

/// A parsed key reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyRef {
    /// A Transit key, with a wrapped data key when the reference carries one.
    VaultTransit {
        /// The secrets engine's mount path, without slashes at either end.
        mount: String,
        /// The key's name.
        key: String,
        /// A Transit ciphertext (`vault:vN:…`) carried by the reference.
        wrapped: Option<String>,
    },
    /// A KV v2 prefix.
    VaultKv {
        /// The secrets engine's mount path.
        mount: String,
        /// The path prefix under the mount (may contain `/`; may be empty).
        prefix: String,
    },
    /// A Barbican secret, by UUID or by its full href.
    Barbican {
        /// The secret's UUID.
        uuid: String,
        /// The href when one was given (its endpoint is used instead of the catalog's).
        href: Option<String>,
    },
    /// An AWS KMS key (`aws-kms://ARN`, `aws-kms://alias/NAME`): its key id as KMS takes it.
    AwsKms {
        /// A key or alias ARN, `alias/NAME` or a key id.
        key: String,
    },
    /// A local file.
    File(PathBuf),
    /// A plugin's reference: `NAME` and the whole text.
    Plugin {
        /// The plugin name (the scheme).
        name: String,
        /// The reference as given.
        uri: String,
    },
}

/// The scheme of Transit references.
pub const VAULT_TRANSIT: &str = "vault-transit";
/// The scheme of KV v2 references.
pub const VAULT_KV: &str = "vault-kv";
/// The scheme of AWS KMS key references.
pub const AWS_KMS: &str = "aws-kms";
/// The scheme of Barbican references by UUID.
pub const BARBICAN: &str = "barbican";

impl KeyRef {
    /// Parses `text` by the row of its scheme in [`super::backends::BACKENDS`], which checks it before any
    /// request.
    pub fn parse(text: &str) -> Result<Self, Error> {
        let Some((scheme, _)) = text.split_once(':') else {
            return match super::backends::by_bare(text) {
                Some(backend) => (backend.parse)(text),
                None => Err(bad(text, "expected SCHEME:…, e.g. vault-transit://MOUNT/KEY")),
            };
        };
        (super::backends::by_scheme(scheme).parse)(text)
    }

    /// A bare UUID is a Barbican secret too (what `--secret UUID` takes).
    pub fn parse_secret(text: &str) -> Result<Self, Error> {
        if is_uuid(text) {
            return Ok(Self::Barbican { uuid: text.to_ascii_lowercase(), href: None });
        }
        match Self::parse(text)? {
            secret @ Self::Barbican { .. } => Ok(secret),
            _ => Err(Error::BadReference {
                reference: crate::redact::url(text),
                problem: "expected a secret UUID or href (https://HOST/v1/secrets/UUID)".into(),
            }),
        }
    }

    /// A Transit reference's mount and key name.
    pub fn transit(&self) -> Option<(&str, &str)> {
        match self {
            Self::VaultTransit { mount, key, .. } => Some((mount, key)),
            _ => None,
        }
    }

    /// The compact JWE of a `clevis:<JWE>` reference (what `bootstrap seal --provider clevis` records).
    pub fn clevis_jwe(&self) -> Option<&str> {
        match self {
            Self::Plugin { name, uri } if name == super::clevis::SCHEME => {
                uri.strip_prefix("clevis:").map(str::trim).filter(|jwe| !jwe.is_empty())
            }
            _ => None,
        }
    }

    /// The same reference carrying `wrapped` (Transit references only; others are returned unchanged).
    pub fn with_wrapped(&self, ciphertext: &str) -> Self {
        match self {
            Self::VaultTransit { mount, key, .. } => {
                Self::VaultTransit { mount: mount.clone(), key: key.clone(), wrapped: Some(ciphertext.to_owned()) }
            }
            other => other.clone(),
        }
    }
}

impl fmt::Display for KeyRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::VaultTransit { mount, key, wrapped } => {
                write!(f, "{VAULT_TRANSIT}://")?;
                if let Some(wrapped) = wrapped {
                    write!(f, "{}@", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(wrapped))?;
                }
                write!(f, "{}/{key}", encode_mount(mount))
            }
            Self::VaultKv { mount, prefix } if prefix.is_empty() => write!(f, "{VAULT_KV}://{}", encode_mount(mount)),
            Self::VaultKv { mount, prefix } => write!(f, "{VAULT_KV}://{}/{prefix}", encode_mount(mount)),
            Self::Barbican { href: Some(href), .. } => f.write_str(href),
            Self::Barbican { uuid, href: None } => write!(f, "{BARBICAN}://{uuid}"),
            Self::AwsKms { key } => write!(f, "{AWS_KMS}://{key}"),
            Self::File(path) => write!(f, "file://{}", path.display()),
            Self::Plugin { uri, .. } => f.write_str(uri),
        }
    }
}

fn bad(text: &str, problem: &str) -> Error {
    Error::BadReference { reference: crate::redact::url(text), problem: problem.into() }
}

/// `vault-transit://MOUNT/KEY`, `vault-transit://WRAPPED@MOUNT/KEY`.
pub(super) fn parse_vault_transit(text: &str) -> Result<KeyRef, Error> {
    let bad = |problem: &str| bad(text, problem);
    let rest = text.split_once(':').map_or("", |(_, rest)| rest);
    let rest = rest.strip_prefix("//").ok_or_else(|| bad("expected vault-transit://MOUNT/KEY"))?;
    let (wrapped, location) = match rest.split_once('@') {
        Some((wrapped, location)) => (
            Some(
                decode_wrapped(wrapped)
                    .ok_or_else(|| bad("the part before `@` is not a Transit ciphertext in unpadded base64url"))?,
            ),
            location,
        ),
        None => (None, rest),
    };
    let (mount, key) = location.split_once('/').ok_or_else(|| bad("expected vault-transit://MOUNT/KEY"))?;
    let mount = decode_mount(mount).ok_or_else(|| bad("empty or malformed mount path"))?;
    if !valid_segment(key) {
        return Err(bad("a Transit key name is one path segment of letters, digits and -_."));
    }
    Ok(KeyRef::VaultTransit { mount, key: key.to_owned(), wrapped })
}

/// `vault-kv://MOUNT/PREFIX`.
pub(super) fn parse_vault_kv(text: &str) -> Result<KeyRef, Error> {
    let bad = |problem: &str| bad(text, problem);
    let rest = text.split_once(':').map_or("", |(_, rest)| rest);
    let rest = rest.strip_prefix("//").ok_or_else(|| bad("expected vault-kv://MOUNT/PREFIX"))?;
    let (mount, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    let mount = decode_mount(mount).ok_or_else(|| bad("empty or malformed mount path"))?;
    let prefix = prefix.trim_matches('/');
    if !prefix.is_empty() && !prefix.split('/').all(valid_segment) {
        return Err(bad("each prefix segment is letters, digits and -_."));
    }
    Ok(KeyRef::VaultKv { mount, prefix: prefix.to_owned() })
}

/// `barbican://UUID` or a secret href `https://HOST/…/v1/secrets/UUID` (any other `https:` is a plugin's).
pub(super) fn parse_barbican(text: &str) -> Result<KeyRef, Error> {
    let bad = |problem: &str| bad(text, problem);
    if is_uuid(text) {
        return Ok(KeyRef::Barbican { uuid: text.to_ascii_lowercase(), href: None });
    }
    let (scheme, rest) = text.split_once(':').unwrap_or((text, ""));
    if scheme == BARBICAN {
        let uuid = rest.strip_prefix("//").ok_or_else(|| bad("expected barbican://UUID"))?;
        if !is_uuid(uuid) {
            return Err(bad("not a secret UUID"));
        }
        return Ok(KeyRef::Barbican { uuid: uuid.to_ascii_lowercase(), href: None });
    }
    let Some(uuid) = secret_href_uuid(text) else { return parse_plugin(text) };
    let authority = rest.trim_start_matches('/').split(['/', '?', '#']).next().unwrap_or_default();
    if authority.contains('@') {
        return Err(bad("credentials do not belong in a secret href (the key manager's login does)"));
    }
    Ok(KeyRef::Barbican { uuid, href: Some(text.to_owned()) })
}

/// `aws-kms://ARN` (`ARN`: a key or alias ARN, `alias/NAME` or a key id), or the bare `arn:aws:kms:…`.
pub(super) fn parse_aws_kms(text: &str) -> Result<KeyRef, Error> {
    let key = match text.strip_prefix(AWS_KMS) {
        Some(rest) => {
            rest.strip_prefix("://").ok_or_else(|| bad(text, "expected aws-kms://arn:aws:kms:REGION:ACCOUNT:key/ID"))?
        }
        // The bare ARN, as `bootstrap seal --provider aws-kms` and `kms://BLOB@ARN` write it.
        None if text.starts_with("arn:") || is_bare_aws_kms_key(text) => text,
        None => return Err(bad(text, "expected aws-kms://arn:aws:kms:REGION:ACCOUNT:key/ID")),
    };
    check_aws_kms_key(key).map_err(|problem| bad(text, &problem))?;
    Ok(KeyRef::AwsKms { key: key.to_owned() })
}

/// `alias/NAME`: a KMS alias written without a scheme.
pub fn is_bare_aws_kms_key(text: &str) -> bool {
    text.starts_with("alias/")
}

/// Checks a KMS key as KMS takes it: `arn:PARTITION:kms:REGION:ACCOUNT:key/ID` or `…:alias/NAME` (a 12-digit
/// account, a non-empty id or name), `alias/NAME`, or a bare key id; what KMS would refuse never reaches it.
pub fn check_aws_kms_key(text: &str) -> Result<(), String> {
    let id_ok = |s: &str| {
        !s.is_empty() && s.len() <= 2048 && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b))
    };
    let alias_ok = |s: &str| {
        !s.is_empty() && s.len() <= 250 && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_/:".contains(&b))
    };
    let resource_ok = |resource: &str| match resource.split_once('/') {
        Some(("key", id)) => id_ok(id),
        Some(("alias", name)) => alias_ok(name),
        _ => false,
    };
    if let Some(rest) = text.strip_prefix("arn:") {
        let parts: Vec<&str> = rest.splitn(5, ':').collect();
        let [partition, service, region, account, resource] = parts[..] else {
            return Err("expected arn:aws:kms:REGION:ACCOUNT:key/ID or …:alias/NAME".into());
        };
        let region_ok =
            !region.is_empty() && region.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if !partition.starts_with("aws") || service != "kms" || !region_ok {
            return Err("expected arn:aws:kms:REGION:ACCOUNT:key/ID or …:alias/NAME".into());
        }
        if account.len() != 12 || !account.bytes().all(|b| b.is_ascii_digit()) {
            return Err("the ARN's account is 12 digits".into());
        }
        if !resource_ok(resource) {
            return Err("the ARN's resource is key/ID or alias/NAME, neither empty".into());
        }
        return Ok(());
    }
    if text.starts_with("alias/") {
        return if resource_ok(text) { Ok(()) } else { Err("alias/NAME needs a name".into()) };
    }
    if id_ok(text) {
        return Ok(());
    }
    Err("expected a KMS key ARN, alias/NAME or a key id".into())
}

/// `file:///ABSOLUTE/PATH`; `file:x` without `//` stays a plugin's, as it always was.
pub(super) fn parse_file(text: &str) -> Result<KeyRef, Error> {
    let rest = text.strip_prefix("file:").unwrap_or_default();
    if !rest.starts_with("//") {
        return parse_plugin(text);
    }
    let path = rest
        .strip_prefix("//")
        .filter(|p| p.starts_with('/'))
        .ok_or_else(|| bad(text, "expected file:///ABSOLUTE/PATH"))?;
    Ok(KeyRef::File(PathBuf::from(path)))
}

/// `clevis:<compact JWE>`.
pub(super) fn parse_clevis(text: &str) -> Result<KeyRef, Error> {
    // The JWE itself is checked where it is opened (kms::clevis), before any server is asked.
    Ok(KeyRef::Plugin { name: super::backends::CLEVIS.into(), uri: text.to_owned() })
}

/// `kmip://UID` (a key) or `kmip://PREFIX` (a store; may hold `/`), with `#kmip:v1:…` when it carries a wrapped
/// passphrase: printable, at most 256 characters before `#`.
pub(super) fn parse_kmip(text: &str) -> Result<KeyRef, Error> {
    let name = text
        .strip_prefix("kmip://")
        .ok_or_else(|| bad(text, "expected kmip://UID (a key's unique identifier) or kmip://PREFIX (a store)"))?;
    let name = name.split_once('#').map_or(name, |(name, _)| name);
    let valid = !name.trim_matches('/').is_empty()
        && name.len() <= 256
        && name.bytes().all(|b| b.is_ascii_graphic())
        && name.trim_matches('/').split('/').all(|s| !s.is_empty() && s != "." && s != "..");
    if !valid {
        return Err(bad(text, "the name after kmip:// is 1 to 256 printable characters (no empty, . or .. segment)"));
    }
    Ok(KeyRef::Plugin { name: super::backends::KMIP.into(), uri: text.to_owned() })
}

/// `NAME:REST`: a plugin's reference.
pub(super) fn parse_plugin(text: &str) -> Result<KeyRef, Error> {
    match text.split_once(':') {
        Some((name, _))
            if !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b)) =>
        {
            Ok(KeyRef::Plugin { name: name.to_owned(), uri: text.to_owned() })
        }
        _ => Err(bad(text, "unknown scheme")),
    }
}

fn decode_wrapped(text: &str) -> Option<String> {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(text).ok()?;
    let ciphertext = String::from_utf8(bytes).ok()?;
    (ciphertext.starts_with("vault:v") && ciphertext.is_ascii() && !ciphertext.contains(char::is_whitespace))
        .then_some(ciphertext)
}

fn decode_mount(text: &str) -> Option<String> {
    let mount = text.replace("%2F", "/").replace("%2f", "/");
    let mount = mount.trim_matches('/');
    (!mount.is_empty() && mount.split('/').all(valid_segment)).then(|| mount.to_owned())
}

fn encode_mount(mount: &str) -> String {
    mount.replace('/', "%2F")
}

fn valid_segment(segment: &str) -> bool {
    !segment.is_empty()
        && segment != "."
        && segment != ".."
        && segment.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
}

/// `8-4-4-4-12` hexadecimal digits.
pub fn is_uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.len() == 5
        && groups.iter().zip([8, 4, 4, 4, 12]).all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The UUID of a Barbican secret href (`…/secrets/UUID`, an optional trailing `/`).
fn secret_href_uuid(text: &str) -> Option<String> {
    let path = text.split(['?', '#']).next()?.trim_end_matches('/');
    let (before, uuid) = path.rsplit_once('/')?;
    (before.ends_with("/secrets") && is_uuid(uuid)).then(|| uuid.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aws_kms_references() {
        let arn = "arn:aws:kms:us-west-2:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab";
        let key = KeyRef::parse(&format!("aws-kms://{arn}")).unwrap();
        assert_eq!(key, KeyRef::AwsKms { key: arn.into() });
        assert_eq!(key.to_string(), format!("aws-kms://{arn}"));
        assert_eq!(KeyRef::parse("aws-kms://alias/volumes").unwrap(), KeyRef::AwsKms { key: "alias/volumes".into() });
        for bad in ["aws-kms://", "aws-kms:arn:aws:kms:r:1:key/x", "aws-kms://arn:aws:s3:r:1:key/x"] {
            assert!(KeyRef::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn transit_references() {
        let key = KeyRef::parse("vault-transit://transit/capi").unwrap();
        assert_eq!(key, KeyRef::VaultTransit { mount: "transit".into(), key: "capi".into(), wrapped: None });
        assert_eq!(key.transit(), Some(("transit", "capi")));
        let nested = KeyRef::parse("vault-transit://team%2Ftransit/volumes").unwrap();
        assert_eq!(nested.transit(), Some(("team/transit", "volumes")));
        assert_eq!(nested.to_string(), "vault-transit://team%2Ftransit/volumes");
        assert_eq!(KeyRef::parse("vault-kv://kv/x").unwrap().transit(), None);
        assert_eq!(key.to_string(), "vault-transit://transit/capi");
        let carried = key.with_wrapped("vault:v1:abc+/=");
        let text = carried.to_string();
        assert!(text.starts_with("vault-transit://") && text.ends_with("@transit/capi"), "{text}");
        assert_eq!(KeyRef::parse(&text).unwrap(), carried);
        let nested = KeyRef::parse("vault-transit://team%2Ftransit/k").unwrap();
        assert_eq!(nested, KeyRef::VaultTransit { mount: "team/transit".into(), key: "k".into(), wrapped: None });
        assert_eq!(nested.to_string(), "vault-transit://team%2Ftransit/k");
        for bad in [
            "vault-transit:transit/k",
            "vault-transit://transit",
            "vault-transit://transit/a/b",
            "vault-transit:///k",
            "vault-transit://transit/..",
            "vault-transit://!!@transit/k",
        ] {
            assert!(KeyRef::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn kv_references() {
        assert_eq!(
            KeyRef::parse("vault-kv://kv/cryptadm").unwrap(),
            KeyRef::VaultKv { mount: "kv".into(), prefix: "cryptadm".into() }
        );
        assert_eq!(
            KeyRef::parse("vault-kv://kv/a/b/").unwrap(),
            KeyRef::VaultKv { mount: "kv".into(), prefix: "a/b".into() }
        );
        assert_eq!(KeyRef::parse("vault-kv://kv").unwrap(), KeyRef::VaultKv { mount: "kv".into(), prefix: "".into() });
        assert!(KeyRef::parse("vault-kv://kv/../x").is_err());
    }

    #[test]
    fn barbican_references() {
        let uuid = "0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9";
        assert_eq!(KeyRef::parse_secret(uuid).unwrap(), KeyRef::Barbican { uuid: uuid.into(), href: None });
        let href = format!("https://kms.example:9311/v1/secrets/{uuid}");
        assert_eq!(
            KeyRef::parse_secret(&href).unwrap(),
            KeyRef::Barbican { uuid: uuid.into(), href: Some(href.clone()) }
        );
        assert_eq!(KeyRef::parse(&format!("barbican://{uuid}")).unwrap().to_string(), format!("barbican://{uuid}"));
        assert!(KeyRef::parse_secret("https://kms.example/v1/orders/x").is_err());
        assert!(KeyRef::parse_secret("not-a-uuid").is_err());
        let with_password = format!("https://admin:hunter2@kms.example/v1/secrets/{uuid}");
        let refused = KeyRef::parse_secret(&with_password).unwrap_err().to_string();
        assert!(refused.contains("credentials") && !refused.contains("hunter2"), "{refused}");
    }

    #[test]
    fn files_and_plugins() {
        assert_eq!(KeyRef::parse("file:///etc/k").unwrap(), KeyRef::File("/etc/k".into()));
        assert!(KeyRef::parse("file://relative").is_err());
        assert_eq!(
            KeyRef::parse("aws:arn:aws:kms:eu-west-1:1:key/x").unwrap(),
            KeyRef::Plugin { name: "aws".into(), uri: "aws:arn:aws:kms:eu-west-1:1:key/x".into() }
        );
    }

    #[test]
    fn errors_never_echo_credentials() {
        let error = KeyRef::parse("bogus scheme://user:hunter2@host/x").unwrap_err().to_string();
        assert!(!error.contains("hunter2"), "{error}");
    }
}
