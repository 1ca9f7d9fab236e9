//! Registry credentials as skopeo and podman find them: docker's `config.json` and podman's `auth.json` (same
//! format: `auths`, `credHelpers`, `credsStore`), read with the `docker_credential` crate, which also runs the
//! `docker-credential-NAME` helpers. The caller decides which files to read (the environment is not read here).

use crate::oci::Error;
use docker_credential::{CredentialRetrievalError, DockerCredential};
use std::path::{Path, PathBuf};
use zeroize::Zeroizing;

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
/// error.
pub fn from_auth_files<'a>(files: &'a [PathBuf], registry: &str) -> Result<Option<(Credentials, &'a Path)>, Error> {
    for file in files {
        if let Some(found) = from_auth_file(file, registry)? {
            return Ok(Some((found, file)));
        }
    }
    Ok(None)
}

fn from_auth_file(file: &Path, registry: &str) -> Result<Option<Credentials>, Error> {
    let reader = match std::fs::File::open(file) {
        Ok(f) => std::io::BufReader::new(f),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::Io(format!("reading `{}`: {e}", file.display()))),
    };
    match docker_credential::get_credential_from_reader(reader, registry) {
        Ok(DockerCredential::UsernamePassword(username, password)) => {
            Ok(Some(Credentials { username, password: Zeroizing::new(password) }))
        }
        Ok(DockerCredential::IdentityToken(_)) => Err(Error::Malformed(format!(
            "`{}` holds an identity token for {registry}, which cryptadm does not support; use a user name and \
             password",
            file.display()
        ))),
        Err(CredentialRetrievalError::NoCredentialConfigured | CredentialRetrievalError::ConfigNotFound) => Ok(None),
        Err(CredentialRetrievalError::ConfigReadError) => {
            Err(Error::Malformed(format!("`{}` is not a valid auth file (JSON with `auths`)", file.display())))
        }
        // A store helper (`credsStore`) is asked about every registry; this answer of the credential-helpers
        // protocol means "none for this one", which docker and skopeo take as anonymous access.
        Err(CredentialRetrievalError::HelperFailure { stdout, .. })
            if stdout.trim() == "credentials not found in native keychain" =>
        {
            Ok(None)
        }
        // The helper's own output may echo secrets: name the helper only.
        Err(CredentialRetrievalError::HelperFailure { helper, .. }) => {
            Err(Error::Io(format!("the credential helper `{helper}` failed for {registry}")))
        }
        Err(other) => Err(Error::Io(format!("credentials for {registry} from `{}`: {other}", file.display()))),
    }
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
        let (found, file_used) = from_auth_files(&files, "localhost:5000").unwrap().unwrap();
        assert_eq!(file_used, file.as_path());
        assert_eq!((found.username.as_str(), found.password.as_str()), ("alice", "s3cret"));
        assert!(from_auth_files(&files, "other:5000").unwrap().is_none());
        std::fs::write(&file, "not json").unwrap();
        assert!(matches!(from_auth_files(&files, "localhost:5000"), Err(Error::Malformed(_))));
    }
}
