//! `clouds.yaml` and `secure.yaml` as openstacksdk reads them: `clouds: {NAME: {auth: {…}, region_name, interface,
//! cacert, verify, *_endpoint_override}}`, with `secure.yaml` (same shape, usually just the passwords) merged
//! over `clouds.yaml` key by key. Which files are read is the command line's business (it knows the environment
//! and the home directory); this module parses and merges.

use crate::kms::Error;
use serde_json::Value;
use std::path::Path;

/// Most bytes of a `clouds.yaml` that are read.
const MAX_FILE: u64 = 1 << 20;

/// Reads and parses a `clouds.yaml`/`secure.yaml`; `None` when the file does not exist.
pub fn read(path: &Path) -> Result<Option<Value>, Error> {
    let problem = |e: &dyn std::fmt::Display| Error::Config(format!("`{}`: {e}", path.display()));
    let not_regular = || problem(&"not a regular file of at most 1 MiB");
    let bytes = match crate::bounded::read_regular(path, MAX_FILE) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::InvalidData => return Err(not_regular()),
        Err(e) => return Err(problem(&e)),
    };
    let text = std::str::from_utf8(&bytes).map_err(|_| problem(&"stream did not contain valid UTF-8"))?;
    parse(text).map(Some).map_err(|e| problem(&e))
}

/// Parses YAML text into a JSON-like tree.
pub fn parse(text: &str) -> Result<Value, String> {
    let value: Value = serde_saphyr::from_str(text).map_err(|e| e.to_string())?;
    if !value.is_object() && !value.is_null() {
        return Err("not a mapping".into());
    }
    Ok(value)
}

/// `secure` merged into `base`: mappings key by key, anything else replaced.
pub fn merge(base: &mut Value, secure: Value) {
    match (base, secure) {
        (Value::Object(base), Value::Object(secure)) => {
            for (key, value) in secure {
                match base.get_mut(&key) {
                    Some(existing) => merge(existing, value),
                    None => {
                        base.insert(key, value);
                    }
                }
            }
        }
        (base, secure) => *base = secure,
    }
}

/// The entry of cloud `name`.
pub fn cloud<'a>(doc: &'a Value, name: &str) -> Option<&'a Value> {
    doc.get("clouds")?.get(name)
}

/// A setting as text (YAML numbers and booleans too: `project_id: 1234`).
pub fn text(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secure_yaml_merges_key_by_key() {
        let mut base = parse(
            "clouds:\n  c:\n    auth:\n      auth_url: https://k:5000/v3\n      username: u\n    region_name: R\n",
        )
        .unwrap();
        let secure = parse("clouds:\n  c:\n    auth:\n      password: p\n").unwrap();
        merge(&mut base, secure);
        let c = cloud(&base, "c").unwrap();
        assert_eq!(text(c["auth"].get("username")).as_deref(), Some("u"));
        assert_eq!(text(c["auth"].get("password")).as_deref(), Some("p"));
        assert_eq!(text(c.get("region_name")).as_deref(), Some("R"));
        assert!(cloud(&base, "other").is_none());
        assert!(parse("- a\n- b\n").is_err());
    }
}
