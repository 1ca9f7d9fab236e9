//! TLS trust for registries: the system roots (rustls, through reqwest's platform verifier) plus the CA
//! certificates of certificate directories, in the containers' convention (`DIR/*.crt`, PEM).

use crate::oci::Error;
use reqwest::Certificate;
use std::path::PathBuf;

/// Installs rustls' ring provider once per process: reqwest is built without a default provider so that no C
/// crypto library (aws-lc) is linked and the binary stays static.
pub fn install_crypto_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Err means another provider is installed already, which is as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// Reads every `*.crt` in `dirs` (sorted, for a stable order). A named directory that does not exist is an error.
pub fn ca_certificates(dirs: &[PathBuf]) -> Result<Vec<Certificate>, Error> {
    let mut certificates = Vec::new();
    for dir in dirs {
        let entries = std::fs::read_dir(dir).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Error::NotFound(format!("certificate directory `{}`: {e}", dir.display())),
            _ => Error::Io(format!("certificate directory `{}`: {e}", dir.display())),
        })?;
        let mut paths: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|p| p.extension().is_some_and(|ext| ext == "crt"))
            .collect();
        paths.sort();
        for path in paths {
            let data = std::fs::read(&path).map_err(|e| Error::Io(format!("reading `{}`: {e}", path.display())))?;
            if !data.windows(11).any(|w| w == b"-----BEGIN ") {
                return Err(Error::Malformed(format!("`{}` is not a PEM certificate", path.display())));
            }
            let certificate = Certificate::from_pem(&data)
                .map_err(|_| Error::Malformed(format!("`{}` is not a PEM certificate", path.display())))?;
            certificates.push(certificate);
        }
    }
    Ok(certificates)
}
