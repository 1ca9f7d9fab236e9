//! The OpenBao/Vault settings of every command that takes `vault-transit://` or `vault-kv://` references: one
//! clap struct, flattened, resolved here from flags and the Vault CLI's environment variables into
//! [`crate::kms::vault::VaultSettings`].
//!
//! Precedence: a flag, then the `VAULT_*` variable, then its `BAO_*` twin. The token: `--vault-token-file`, then
//! `VAULT_TOKEN`/`BAO_TOKEN`, then `~/.vault-token` (token files must be 0600 or stricter). Login methods
//! (`--vault-auth approle|jwt|kubernetes`, or `CRYPTADM_VAULT_AUTH` for runs without flags, e.g. `bootstrap open`
//! from cloud-init) read their secret-id or JWT from a file at every login.

use super::env_vars::{self as env, var_os};
use super::error::Failure;
use crate::exit::ExitStatus;
use crate::kms::http::HttpSettings;
use crate::kms::vault::{Auth, Vault, VaultSettings};
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Where a Kubernetes pod finds its service-account token.
pub const KUBERNETES_TOKEN: &str = "/var/run/secrets/kubernetes.io/serviceaccount/token";

/// How cryptadm logs in to Vault/OpenBao.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum AuthKind {
    /// A token: --vault-token-file, VAULT_TOKEN or ~/.vault-token
    Token,
    /// AppRole: --vault-role-id and --vault-secret-id-file (auth/approle/login)
    Approle,
    /// JWT: --vault-role and --vault-jwt-file (auth/jwt/login)
    Jwt,
    /// Kubernetes: --vault-role and the service-account token (auth/kubernetes/login)
    Kubernetes,
}

/// Flags of the OpenBao/Vault client.
#[derive(Args, Debug, Clone, Default)]
pub struct VaultArgs {
    /// Server address, e.g. https://vault:8200 [env: VAULT_ADDR, BAO_ADDR]
    #[arg(help_heading = crate::kms::backends::VAULT_HEADING, long, value_name = "URL")]
    pub vault_addr: Option<String>,
    /// Namespace (X-Vault-Namespace) [env: VAULT_NAMESPACE, BAO_NAMESPACE]
    #[arg(help_heading = crate::kms::backends::VAULT_HEADING, long, value_name = "NAMESPACE")]
    pub vault_namespace: Option<String>,
    /// PEM file of the CA that signed the server's certificate [env: VAULT_CACERT, BAO_CACERT]
    #[arg(help_heading = crate::kms::backends::VAULT_HEADING, long, value_name = "FILE")]
    pub vault_cacert: Option<PathBuf>,
    /// Directory of PEM CA certificates [env: VAULT_CAPATH, BAO_CAPATH]
    #[arg(help_heading = crate::kms::backends::VAULT_HEADING, long, value_name = "DIR")]
    pub vault_capath: Option<PathBuf>,
    /// PEM client certificate for TLS client authentication [env: VAULT_CLIENT_CERT]
    #[arg(help_heading = crate::kms::backends::VAULT_HEADING, long, value_name = "FILE", requires = "vault_client_key")]
    pub vault_client_cert: Option<PathBuf>,
    /// PEM key of --vault-client-cert [env: VAULT_CLIENT_KEY]
    #[arg(help_heading = crate::kms::backends::VAULT_HEADING, long, value_name = "FILE", requires = "vault_client_cert")]
    pub vault_client_key: Option<PathBuf>,
    /// Accept any server certificate (insecure; VAULT_SKIP_VERIFY alone is refused)
    #[arg(help_heading = crate::kms::backends::VAULT_HEADING, long)]
    pub vault_skip_verify: bool,
    /// How to log in [env: CRYPTADM_VAULT_AUTH] [default: token]
    #[arg(help_heading = crate::kms::backends::VAULT_HEADING, long, value_enum, value_name = "METHOD")]
    pub vault_auth: Option<AuthKind>,
    /// Mount path of the auth method [env: CRYPTADM_VAULT_AUTH_MOUNT] [default: approle, jwt or kubernetes]
    #[arg(help_heading = crate::kms::backends::VAULT_HEADING, long, value_name = "PATH")]
    pub vault_auth_mount: Option<String>,
    /// Role to log in as (jwt, kubernetes) [env: CRYPTADM_VAULT_ROLE]
    #[arg(help_heading = crate::kms::backends::VAULT_HEADING, long, value_name = "ROLE")]
    pub vault_role: Option<String>,
    /// AppRole role id [env: CRYPTADM_VAULT_ROLE_ID]
    #[arg(help_heading = crate::kms::backends::VAULT_HEADING, long, value_name = "ID")]
    pub vault_role_id: Option<String>,
    /// File holding the AppRole secret id (0600) [env: CRYPTADM_VAULT_SECRET_ID_FILE]
    #[arg(help_heading = crate::kms::backends::VAULT_HEADING, long, value_name = "FILE")]
    pub vault_secret_id_file: Option<PathBuf>,
    /// File holding the JWT (0600; kubernetes default: the pod's service-account token)
    /// [env: CRYPTADM_VAULT_JWT_FILE]
    #[arg(help_heading = crate::kms::backends::VAULT_HEADING, long, value_name = "FILE")]
    pub vault_jwt_file: Option<PathBuf>,
    /// File holding a token (0600), instead of VAULT_TOKEN or ~/.vault-token
    #[arg(help_heading = crate::kms::backends::VAULT_HEADING, long, value_name = "FILE")]
    pub vault_token_file: Option<PathBuf>,
}

fn text(names: &[&str]) -> Option<String> {
    names.iter().find_map(|name| var_os(name)).and_then(|v| v.into_string().ok()).filter(|v| !v.is_empty())
}

fn path(names: &[&str]) -> Option<PathBuf> {
    names.iter().find_map(|name| var_os(name)).filter(|v| !v.is_empty()).map(PathBuf::from)
}

const NO_TOKEN_HINT: &str = crate::kms::vault::NO_TOKEN_HINT;

fn usage(message: impl Into<String>, hint: &str) -> anyhow::Error {
    Failure::new(ExitStatus::Usage, message).with_hint(hint).into()
}

impl VaultArgs {
    /// The settings, or `None` when no server address is given anywhere (a run that needs no Vault).
    pub fn settings(&self, timeout: Duration, retries: u32) -> anyhow::Result<Option<VaultSettings>> {
        let Some(address) = self.vault_addr.clone().or_else(|| text(&[env::VAULT_ADDR, env::BAO_ADDR])) else {
            return Ok(None);
        };
        if address.chars().any(char::is_control) {
            return Err(Failure::new(
                ExitStatus::InvalidInput,
                format!("Vault address `{}`: holds a control character", crate::redact::url(&address)),
            )
            .with_hint("give http(s)://HOST[:PORT] on one line (VAULT_ADDR, BAO_ADDR or --vault-addr)")
            .into());
        }
        let skip_env = text(&[env::VAULT_SKIP_VERIFY, env::BAO_SKIP_VERIFY])
            .is_some_and(|v| !matches!(v.to_ascii_lowercase().as_str(), "0" | "false" | "no"));
        if skip_env && !self.vault_skip_verify {
            return Err(usage(
                "VAULT_SKIP_VERIFY is set, but cryptadm verifies the Vault server's certificate unless told by a flag",
                "give the server's CA with VAULT_CACERT or --vault-cacert; or, knowing the risk, add --vault-skip-verify",
            ));
        }
        let client_cert =
            self.vault_client_cert.clone().or_else(|| path(&[env::VAULT_CLIENT_CERT, env::BAO_CLIENT_CERT]));
        let client_key = self.vault_client_key.clone().or_else(|| path(&[env::VAULT_CLIENT_KEY, env::BAO_CLIENT_KEY]));
        let client_identity = match (client_cert, client_key) {
            (Some(cert), Some(key)) => Some((cert, key)),
            (None, None) => None,
            _ => {
                return Err(usage(
                    "a Vault client certificate needs its key, and a key its certificate",
                    "set both VAULT_CLIENT_CERT and VAULT_CLIENT_KEY (or --vault-client-cert and --vault-client-key)",
                ));
            }
        };
        let http = HttpSettings {
            ca_files: self
                .vault_cacert
                .clone()
                .or_else(|| path(&[env::VAULT_CACERT, env::BAO_CACERT]))
                .into_iter()
                .collect(),
            ca_dirs: self
                .vault_capath
                .clone()
                .or_else(|| path(&[env::VAULT_CAPATH, env::BAO_CAPATH]))
                .into_iter()
                .collect(),
            client_identity,
            insecure_skip_verify: self.vault_skip_verify,
            timeout,
            retries,
            first_backoff: Duration::from_millis(500),
            deadline: super::deadline::current(),
            proxies: super::proxy::from_env(),
        };
        Ok(Some(VaultSettings {
            address,
            namespace: self.vault_namespace.clone().or_else(|| text(&[env::VAULT_NAMESPACE, env::BAO_NAMESPACE])),
            http,
            auth: self.auth()?,
        }))
    }

    fn auth(&self) -> anyhow::Result<Auth> {
        let kind = match self.vault_auth {
            Some(kind) => kind,
            None => match text(&[env::CRYPTADM_VAULT_AUTH]) {
                None => AuthKind::Token,
                Some(name) => AuthKind::from_str(&name, true).map_err(|_| {
                    usage(
                        format!("CRYPTADM_VAULT_AUTH `{name}` is not an auth method"),
                        "use token, approle, jwt or kubernetes",
                    )
                })?,
            },
        };
        let mount = |default: &str| {
            self.vault_auth_mount
                .clone()
                .or_else(|| text(&[env::CRYPTADM_VAULT_AUTH_MOUNT]))
                .map(|m| m.trim_matches('/').to_owned())
                .unwrap_or_else(|| default.to_owned())
        };
        let role = || {
            self.vault_role
                .clone()
                .or_else(|| text(&[env::CRYPTADM_VAULT_ROLE]))
                .ok_or_else(|| usage("the Vault login needs a role", "give --vault-role ROLE (or CRYPTADM_VAULT_ROLE)"))
        };
        let jwt_file = self.vault_jwt_file.clone().or_else(|| path(&[env::CRYPTADM_VAULT_JWT_FILE]));
        Ok(match kind {
            AuthKind::Token => {
                if let Some(file) = &self.vault_token_file {
                    Auth::TokenFile(file.clone())
                } else if let Some((name, token)) =
                    [env::VAULT_TOKEN, env::BAO_TOKEN].iter().find_map(|n| var_os(n).map(|v| (*n, v)))
                {
                    use std::os::unix::ffi::OsStringExt as _;
                    if token.is_empty() {
                        // Not "unset": falling back to ~/.vault-token would use whatever token that file holds
                        // (another user's, on a shared host) where the caller meant to give one.
                        return Err(usage(format!("{name} is set but empty"), NO_TOKEN_HINT));
                    }
                    Auth::Token(crate::crypto::SecretBytes::new(token.into_vec()))
                } else if let Some(home) = path(&[env::HOME]) {
                    // Read at the first request, as the Vault CLI does; missing, its error names the three ways
                    // to give a token.
                    Auth::TokenFile(home.join(".vault-token"))
                } else {
                    return Err(usage(
                        "no Vault token: VAULT_TOKEN is not set, and there is no home directory for ~/.vault-token",
                        NO_TOKEN_HINT,
                    ));
                }
            }
            AuthKind::Approle => Auth::AppRole {
                mount: mount("approle"),
                role_id: self.vault_role_id.clone().or_else(|| text(&[env::CRYPTADM_VAULT_ROLE_ID])).ok_or_else(
                    || usage("AppRole login needs a role id", "give --vault-role-id ID (or CRYPTADM_VAULT_ROLE_ID)"),
                )?,
                secret_id_file: self
                    .vault_secret_id_file
                    .clone()
                    .or_else(|| path(&[env::CRYPTADM_VAULT_SECRET_ID_FILE]))
                    .ok_or_else(|| {
                        usage(
                            "AppRole login needs a secret id",
                            "give --vault-secret-id-file FILE (or CRYPTADM_VAULT_SECRET_ID_FILE)",
                        )
                    })?,
            },
            AuthKind::Jwt => Auth::Jwt {
                mount: mount("jwt"),
                role: role()?,
                jwt_file: jwt_file.ok_or_else(|| {
                    usage("JWT login needs a token file", "give --vault-jwt-file FILE (or CRYPTADM_VAULT_JWT_FILE)")
                })?,
            },
            AuthKind::Kubernetes => Auth::Kubernetes {
                mount: mount("kubernetes"),
                role: role()?,
                jwt_file: jwt_file.unwrap_or_else(|| PathBuf::from(KUBERNETES_TOKEN)),
            },
        })
    }

    /// A client, or `None` when no server address is given.
    pub fn client(&self, timeout: Duration, retries: u32) -> anyhow::Result<Option<Arc<Vault>>> {
        match self.settings(timeout, retries)? {
            None => Ok(None),
            Some(settings) => Ok(Some(Arc::new(Vault::new(settings)?))),
        }
    }

    /// A client; a usage error naming `what` when no address is given.
    pub fn require(&self, timeout: Duration, retries: u32, what: &str) -> anyhow::Result<Arc<Vault>> {
        self.client(timeout, retries)?.ok_or_else(|| {
            usage(format!("{what} needs an OpenBao/Vault server"), "set VAULT_ADDR (or BAO_ADDR), or give --vault-addr")
        })
    }
}
