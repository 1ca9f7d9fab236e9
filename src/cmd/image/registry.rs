//! Registry flags of the image commands, and where registry credentials come from: `--*creds USER` with the
//! password from a file, the environment or a terminal prompt (never argv), else the auth files skopeo and
//! podman read.

use crate::cmd::env_vars;
use crate::cmd::error::Failure;
use crate::cmd::printer::Printer;
use crate::cmd::secrets::{StdinClaim, is_stdin};
use crate::exit::ExitStatus;
use crate::interact::Interaction;
use crate::oci::registry::{Credentials, RegistryOptions, credentials};
use anyhow::Context;
use clap::{ArgAction, Args};
use std::path::{Path, PathBuf};
use zeroize::Zeroizing;

/// Access to the source registry (encrypt, decrypt).
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Registries")]
pub struct SourceRegistryArgs {
    /// Log in to the source registry as USER; the password comes from --src-password-file,
    /// CRYPTADM_SRC_PASSWORD_FILE, CRYPTADM_SRC_PASSWORD or a terminal prompt, never from the command line
    #[arg(long = "src-creds", value_name = "USER")]
    src_creds: Option<String>,
    /// Read the --src-creds password from FILE (`-`: standard input); one trailing newline is dropped
    #[arg(long = "src-password-file", value_name = "FILE", env = env_vars::CRYPTADM_SRC_PASSWORD_FILE)]
    src_password_file: Option<PathBuf>,
    /// Source registry credentials from this auth file only (docker config.json or podman auth.json format)
    #[arg(long = "src-authfile", value_name = "FILE")]
    src_authfile: Option<PathBuf>,
    /// Verify the source registry's TLS certificate; =false allows plain HTTP or an unverified certificate
    #[arg(long = "src-tls-verify", value_name = "BOOL", default_value_t = true, action = ArgAction::Set,
          num_args = 0..=1, default_missing_value = "true", require_equals = true)]
    src_tls_verify: bool,
    /// Trust the CA certificates (*.crt) in DIR for the source registry, besides the system roots
    #[arg(long = "src-cert-dir", value_name = "DIR")]
    src_cert_dir: Option<PathBuf>,
}

/// Access to the destination registry (encrypt, decrypt).
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Registries")]
pub struct DestinationRegistryArgs {
    /// Log in to the destination registry as USER; the password comes from --dest-password-file,
    /// CRYPTADM_DEST_PASSWORD_FILE, CRYPTADM_DEST_PASSWORD or a terminal prompt, never from the command line
    #[arg(long = "dest-creds", value_name = "USER")]
    dest_creds: Option<String>,
    /// Read the --dest-creds password from FILE (`-`: standard input); one trailing newline is dropped
    #[arg(long = "dest-password-file", value_name = "FILE", env = env_vars::CRYPTADM_DEST_PASSWORD_FILE)]
    dest_password_file: Option<PathBuf>,
    /// Destination registry credentials from this auth file only (docker config.json or podman auth.json format)
    #[arg(long = "dest-authfile", value_name = "FILE")]
    dest_authfile: Option<PathBuf>,
    /// Verify the destination registry's TLS certificate; =false allows plain HTTP or an unverified certificate
    #[arg(long = "dest-tls-verify", value_name = "BOOL", default_value_t = true, action = ArgAction::Set,
          num_args = 0..=1, default_missing_value = "true", require_equals = true)]
    dest_tls_verify: bool,
    /// Trust the CA certificates (*.crt) in DIR for the destination registry, besides the system roots
    #[arg(long = "dest-cert-dir", value_name = "DIR")]
    dest_cert_dir: Option<PathBuf>,
    /// Trust the CA certificates (*.crt) in DIR for both registries (default: /etc/containers/certs.d/HOST
    /// and /etc/docker/certs.d/HOST when they exist)
    #[arg(long = "cert-dir", value_name = "DIR")]
    cert_dir: Option<PathBuf>,
}

/// Access to the registry of `image authorize`: the source flags without their `src-` prefix, as in
/// `skopeo inspect`.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Registry")]
pub struct ImageRegistryArgs {
    /// Log in to the registry as USER; the password comes from --password-file, CRYPTADM_REGISTRY_PASSWORD_FILE,
    /// CRYPTADM_REGISTRY_PASSWORD or a terminal prompt, never from the command line
    #[arg(long = "creds", value_name = "USER")]
    creds: Option<String>,
    /// Read the --creds password from FILE (`-`: standard input); one trailing newline is dropped
    #[arg(long = "password-file", value_name = "FILE", env = env_vars::CRYPTADM_REGISTRY_PASSWORD_FILE)]
    password_file: Option<PathBuf>,
    /// Registry credentials from this auth file only (docker config.json or podman auth.json format)
    #[arg(long = "authfile", value_name = "FILE")]
    authfile: Option<PathBuf>,
    /// Verify the registry's TLS certificate; =false allows plain HTTP or an unverified certificate
    #[arg(long = "tls-verify", value_name = "BOOL", default_value_t = true, action = ArgAction::Set,
          num_args = 0..=1, default_missing_value = "true", require_equals = true)]
    tls_verify: bool,
    /// Trust the CA certificates (*.crt) in DIR, besides the system roots (default: /etc/containers/certs.d/HOST
    /// and /etc/docker/certs.d/HOST when they exist)
    #[arg(long = "cert-dir", value_name = "DIR")]
    cert_dir: Option<PathBuf>,
}

/// One side's registry flags, whatever their prefix.
pub struct RegistryFlags<'a> {
    creds: Option<&'a str>,
    creds_flag: &'static str,
    password_file: Option<&'a Path>,
    password_env: &'static str,
    authfile: Option<&'a Path>,
    tls_verify: bool,
    cert_dirs: Vec<&'a Path>,
}

impl SourceRegistryArgs {
    /// The source's flags; `--cert-dir` comes from the destination group, where it is declared once.
    pub fn flags<'a>(&'a self, both: &'a DestinationRegistryArgs) -> RegistryFlags<'a> {
        RegistryFlags {
            creds: self.src_creds.as_deref(),
            creds_flag: "--src-creds",
            password_file: self.src_password_file.as_deref(),
            password_env: env_vars::CRYPTADM_SRC_PASSWORD,
            authfile: self.src_authfile.as_deref(),
            tls_verify: self.src_tls_verify,
            cert_dirs: self.src_cert_dir.iter().chain(&both.cert_dir).map(PathBuf::as_path).collect(),
        }
    }
}

impl DestinationRegistryArgs {
    /// The destination's flags.
    pub fn flags(&self) -> RegistryFlags<'_> {
        RegistryFlags {
            creds: self.dest_creds.as_deref(),
            creds_flag: "--dest-creds",
            password_file: self.dest_password_file.as_deref(),
            password_env: env_vars::CRYPTADM_DEST_PASSWORD,
            authfile: self.dest_authfile.as_deref(),
            tls_verify: self.dest_tls_verify,
            cert_dirs: self.dest_cert_dir.iter().chain(&self.cert_dir).map(PathBuf::as_path).collect(),
        }
    }
}

impl ImageRegistryArgs {
    /// The flags.
    pub fn flags(&self) -> RegistryFlags<'_> {
        RegistryFlags {
            creds: self.creds.as_deref(),
            creds_flag: "--creds",
            password_file: self.password_file.as_deref(),
            password_env: env_vars::CRYPTADM_REGISTRY_PASSWORD,
            authfile: self.authfile.as_deref(),
            tls_verify: self.tls_verify,
            cert_dirs: self.cert_dir.iter().map(PathBuf::as_path).collect(),
        }
    }
}

impl RegistryFlags<'_> {
    /// Resolves credentials and trust for `registry` (`HOST[:PORT]`).
    pub fn options(&self, registry: &str, printer: &Printer) -> anyhow::Result<RegistryOptions> {
        let credentials = match self.creds {
            Some(user) => Some(self.password_credentials(user, registry, printer)?),
            None => {
                let files = match self.authfile {
                    Some(file) => {
                        if !file.exists() {
                            return Err(Failure::new(
                                ExitStatus::NotFound,
                                format!("the auth file `{}` does not exist", file.display()),
                            )
                            .into());
                        }
                        vec![file.to_path_buf()]
                    }
                    None => default_auth_files(),
                };
                let found = credentials::from_auth_files(&files, registry, &crate::cmd::env_vars::path_dirs())?;
                match &found {
                    Some((c, file)) => {
                        printer.debug(&format!("registry {registry}: user {} from `{}`", c.username, file.display()))
                    }
                    None => printer.debug(&format!(
                        "registry {registry}: no credentials in {}; anonymous",
                        files.iter().map(|f| format!("`{}`", f.display())).collect::<Vec<_>>().join(", ")
                    )),
                }
                found.map(|(c, _)| c)
            }
        };
        let mut cert_dirs: Vec<PathBuf> = self.cert_dirs.iter().map(|d| d.to_path_buf()).collect();
        if cert_dirs.is_empty() {
            cert_dirs = ["/etc/containers/certs.d", "/etc/docker/certs.d"]
                .iter()
                .map(|base| Path::new(base).join(registry))
                .filter(|dir| dir.is_dir())
                .collect();
        }
        Ok(RegistryOptions {
            tls_verify: self.tls_verify,
            cert_dirs,
            credentials,
            deadline: crate::cmd::deadline::current(),
            proxies: crate::cmd::proxy::from_env(),
        })
    }

    fn password_credentials(&self, user: &str, registry: &str, printer: &Printer) -> anyhow::Result<Credentials> {
        if user.contains(':') {
            return Err(Failure::new(
                ExitStatus::Usage,
                format!(
                    "{} takes a user name only: a password on the command line is readable by other users",
                    self.creds_flag
                ),
            )
            .with_hint(format!(
                "give the password in a file (see {} --help), or in {}",
                self.creds_flag, self.password_env
            ))
            .into());
        }
        let password = if let Some(path) = self.password_file {
            let bytes = if is_stdin(path) {
                StdinClaim::default().claim("the registry password file")?;
                crate::crypto::secret::read_secret(std::io::stdin().lock(), 4096)
            } else {
                std::fs::File::open(path).and_then(|f| crate::crypto::secret::read_secret(f, 4096))
            }
            .with_context(|| format!("reading the registry password from `{}`", path.display()))?;
            password_text(bytes)?
        } else if let Some(value) = crate::cmd::env_vars::var_os(self.password_env) {
            password_text(value.into_encoded_bytes())?
        } else {
            let prompt = format!("Password for {user} at {registry}");
            match printer.request_passphrase(&prompt, false).context("reading the registry password")? {
                Some(p) => password_text(p.expose().to_vec())?,
                None => {
                    return Err(Failure::new(
                        ExitStatus::Usage,
                        format!("{} {user}: no password given and no terminal to ask on", self.creds_flag),
                    )
                    .with_hint(format!("give the password in a file, or set {}", self.password_env))
                    .into());
                }
            }
        };
        Ok(Credentials { username: user.to_owned(), password })
    }
}

/// A password as text, without the newline a file usually ends with.
fn password_text(bytes: impl Into<Vec<u8>>) -> anyhow::Result<Zeroizing<String>> {
    let mut bytes = Zeroizing::new(bytes.into());
    for ending in [b'\n', b'\r'] {
        if bytes.last() == Some(&ending) {
            bytes.pop();
        }
    }
    if bytes.is_empty() {
        return Err(Failure::new(ExitStatus::InvalidInput, "the registry password is empty").into());
    }
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| Failure::new(ExitStatus::InvalidInput, "the registry password is not UTF-8"))?;
    Ok(Zeroizing::new(text.to_owned()))
}

/// Where skopeo and podman look for credentials, in their order: podman's auth.json, then docker's config.json.
fn default_auth_files() -> Vec<PathBuf> {
    let var = |name: &str| crate::cmd::env_vars::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let mut files = Vec::new();
    match var(env_vars::REGISTRY_AUTH_FILE) {
        Some(file) => files.push(file),
        None => {
            if let Some(runtime) = var(env_vars::XDG_RUNTIME_DIR) {
                files.push(runtime.join("containers/auth.json"));
            }
            if let Some(home) = var(env_vars::HOME) {
                files.push(home.join(".config/containers/auth.json"));
            }
        }
    }
    match (var(env_vars::DOCKER_CONFIG), var(env_vars::HOME)) {
        (Some(dir), _) => files.push(dir.join("config.json")),
        (None, Some(home)) => files.push(home.join(".docker/config.json")),
        (None, None) => {}
    }
    files
}
