//! Registry credentials as skopeo and podman find them: docker's `config.json` and podman's `auth.json` (same
//! format: `auths`, `credHelpers`, `credsStore`), and the `docker-credential-NAME` helpers those files name. The
//! caller decides which files to read (the environment is not read here).
//!
//! Written here rather than with the `docker_credential` crate: a helper is a child process, and every child of
//! cryptadm runs through `process.rs` (a deadline, bounded output kept in wiping buffers, a scrubbed
//! environment), which that crate's own `Command` cannot give.

use crate::oci::Error;
use crate::process;
use base64::Engine;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use zeroize::Zeroizing;

/// How long a credential helper may take (it may ask a keychain daemon).
const HELPER_TIMEOUT: Duration = Duration::from_secs(30);
/// Most bytes read from a helper's answer: a user name and a token fit many times over.
const MAX_HELPER_OUTPUT: usize = 64 * 1024;
/// The credential-helper protocol's answer for "nothing stored for this registry".
const NOT_FOUND_ANSWER: &str = "credentials not found in native keychain";

/// A user name and password for HTTP basic authentication (and the registry's token service).
pub struct Credentials {
    /// The user name.
    pub username: String,
    /// The password; wiped from memory when dropped.
    pub password: Zeroizing<String>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials").field("username", &self.username).finish_non_exhaustive()
    }
}

/// Looks up the credentials for `registry` (`HOST[:PORT]`) in the first of `files` that has an entry for it, and
/// says which file that was. Missing files are skipped; a file that exists but cannot be read or parsed is an
/// error. Credential helpers the files name are looked up in `search_dirs` (the caller's `PATH`).
pub fn from_auth_files<'a>(
    files: &'a [PathBuf],
    registry: &str,
    search_dirs: &[PathBuf],
) -> Result<Option<(Credentials, &'a Path)>, Error> {
    for file in files {
        if let Some(found) = from_auth_file(file, registry, search_dirs)? {
            return Ok(Some((found, file)));
        }
    }
    Ok(None)
}

/// The parts of an auth file that say where credentials are.
#[derive(serde::Deserialize)]
struct AuthFile {
    #[serde(default)]
    auths: HashMap<String, AuthEntry>,
    #[serde(rename = "credsStore")]
    creds_store: Option<String>,
    #[serde(rename = "credHelpers", default)]
    cred_helpers: HashMap<String, String>,
}

#[derive(serde::Deserialize)]
struct AuthEntry {
    auth: Option<String>,
    username: Option<String>,
    password: Option<String>,
    identitytoken: Option<String>,
}

/// Most bytes an auth file may hold (docker's hold a few entries of a few hundred bytes each).
pub const MAX_AUTH_FILE_BYTES: u64 = 1024 * 1024;

fn from_auth_file(file: &Path, registry: &str, search_dirs: &[PathBuf]) -> Result<Option<Credentials>, Error> {
    // A regular file (a FIFO would block, `/dev/zero` never ends), read no further than the bound.
    let text = match crate::bounded::read_regular(file, MAX_AUTH_FILE_BYTES) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
            return Err(Error::Malformed(format!("`{}`: {e}; not an auth file", file.display())));
        }
        Err(e) => return Err(Error::Io(format!("reading `{}`: {e}", file.display()))),
    };
    let config: AuthFile = serde_json::from_slice(&text)
        .map_err(|_| Error::Malformed(format!("`{}` is not a valid auth file (JSON with `auths`)", file.display())))?;
    // docker's order: a helper for this registry, then an entry in `auths`, then the store helper for all.
    if let Some(helper) = config.cred_helpers.get(registry).filter(|h| !h.is_empty()) {
        return from_helper(helper, registry, search_dirs);
    }
    if let Some(entry) = auth_entry(&config.auths, registry) {
        return from_entry(entry, file, registry).map(Some);
    }
    match &config.creds_store {
        Some(store) if !store.is_empty() => from_helper(store, registry, search_dirs),
        _ => Ok(None),
    }
}

/// The `auths` entry for `registry`: the key as written, else a key that is a URL of the registry
/// (`https://HOST/v1/`), with Docker Hub's aliases taken as one.
fn auth_entry<'a>(auths: &'a HashMap<String, AuthEntry>, registry: &str) -> Option<&'a AuthEntry> {
    fn host_of(key: &str) -> &str {
        let host = match key.strip_prefix("https://").or_else(|| key.strip_prefix("http://")) {
            Some(rest) => rest.split('/').next().unwrap_or(rest),
            None => key,
        };
        match host {
            "docker.io" | "registry-1.docker.io" => "index.docker.io",
            other => other,
        }
    }
    auths.get(registry).or_else(|| auths.iter().find(|(key, _)| host_of(key) == host_of(registry)).map(|(_, e)| e))
}

fn from_entry(entry: &AuthEntry, file: &Path, registry: &str) -> Result<Credentials, Error> {
    if entry.identitytoken.as_deref().is_some_and(|t| !t.is_empty()) {
        return Err(identity_token(&format!("`{}`", file.display()), registry));
    }
    let malformed = |what: &str| Error::Malformed(format!("`{}`: the entry for {registry} {what}", file.display()));
    if let Some(auth) = entry.auth.as_deref().filter(|a| !a.is_empty()) {
        let engine = base64::engine::GeneralPurpose::new(
            &base64::alphabet::STANDARD,
            base64::engine::GeneralPurposeConfig::new()
                .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
        );
        let decoded = Zeroizing::new(engine.decode(auth).map_err(|_| malformed("has an `auth` that is not base64"))?);
        let text = std::str::from_utf8(&decoded).map_err(|_| malformed("has an `auth` that is not text"))?;
        let (username, password) = text.split_once(':').ok_or_else(|| malformed("has an `auth` without `:`"))?;
        return Ok(Credentials { username: username.to_owned(), password: Zeroizing::new(password.to_owned()) });
    }
    match (&entry.username, &entry.password) {
        (Some(username), Some(password)) => {
            Ok(Credentials { username: username.clone(), password: Zeroizing::new(password.clone()) })
        }
        _ => Err(malformed("has neither `auth` nor `username` and `password`")),
    }
}

fn identity_token(source: &str, registry: &str) -> Error {
    Error::Malformed(format!(
        "{source} holds an identity token for {registry}, which cryptadm does not support; use a user name and \
         password"
    ))
}

/// Asks `docker-credential-NAME get` (found in `search_dirs`, the caller's PATH) for the registry's credentials, as
/// docker does: the registry on standard input, `{"Username": …, "Secret": …}` on standard output.
fn from_helper(name: &str, registry: &str, search_dirs: &[PathBuf]) -> Result<Option<Credentials>, Error> {
    let program = format!("docker-credential-{name}");
    let limits = process::Limits { timeout: HELPER_TIMEOUT, max_stdout: MAX_HELPER_OUTPUT, max_stderr: 4096 };
    let path = process::resolve_plugin(program.as_ref(), search_dirs)
        .map_err(|untrusted| Error::Malformed(untrusted.to_string()))?;
    let done = process::run(&path, ["get"], Some(registry.as_bytes()), limits).map_err(|e| {
        let why = match e {
            process::RunError::Spawn(e) => format!("cannot be run: {e}"),
            process::RunError::TimedOut => format!("did not answer within {} s", HELPER_TIMEOUT.as_secs()),
            process::RunError::StdoutHeld => "left a process holding its output open".to_owned(),
        };
        Error::Io(format!("the credential helper `{program}` {why}"))
    })?;
    if !done.status.success() {
        if String::from_utf8_lossy(&done.stdout).trim() == NOT_FOUND_ANSWER {
            return Ok(None);
        }
        // The helper's own output may echo secrets: name the helper and how it ended only.
        return Err(Error::Io(format!(
            "the credential helper `{program}` failed for {registry} ({})",
            process::describe_status(done.status)
        )));
    }
    #[derive(serde::Deserialize)]
    struct Answer {
        #[serde(rename = "Username")]
        username: String,
        #[serde(rename = "Secret")]
        secret: String,
    }
    let answer: Answer = serde_json::from_slice(&done.stdout)
        .map_err(|_| Error::Io(format!("the credential helper `{program}` answered something that is not its JSON")))?;
    if answer.username == "<token>" {
        return Err(identity_token(&format!("the credential helper `{program}`"), registry));
    }
    Ok(Some(Credentials { username: answer.username, password: Zeroizing::new(answer.secret) }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_auths_and_skips_missing_files() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("auth.json");
        // base64("alice:s3cret")
        std::fs::write(&file, r#"{"auths":{"localhost:5000":{"auth":"YWxpY2U6czNjcmV0"}}}"#).unwrap();
        let files = [dir.path().join("missing.json"), file.clone()];
        let (found, file_used) = from_auth_files(&files, "localhost:5000", &[]).unwrap().unwrap();
        assert_eq!(file_used, file.as_path());
        assert_eq!((found.username.as_str(), found.password.as_str()), ("alice", "s3cret"));
        assert!(from_auth_files(&files, "other:5000", &[]).unwrap().is_none());
        std::fs::write(&file, "not json").unwrap();
        assert!(matches!(from_auth_files(&files, "localhost:5000", &[]), Err(Error::Malformed(_))));
    }

    #[test]
    fn url_keys_and_docker_hub_aliases_match_and_username_password_entries_work() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.json");
        std::fs::write(
            &file,
            r#"{"auths":{"https://index.docker.io/v1/":{"auth":"Ym9iOnB3"},"r.example:5000":{"username":"u","password":"p"},"t.example":{"identitytoken":"x"}}}"#,
        )
        .unwrap();
        let files = [file];
        let (hub, _) = from_auth_files(&files, "docker.io", &[]).unwrap().unwrap();
        assert_eq!((hub.username.as_str(), hub.password.as_str()), ("bob", "pw"));
        let (plain, _) = from_auth_files(&files, "r.example:5000", &[]).unwrap().unwrap();
        assert_eq!((plain.username.as_str(), plain.password.as_str()), ("u", "p"));
        assert!(
            matches!(from_auth_files(&files, "t.example", &[]), Err(Error::Malformed(m)) if m.contains("identity token"))
        );
        assert!(format!("{hub:?}").contains("bob") && !format!("{hub:?}").contains("pw"));
    }
}
