//! The AWS settings of every command that takes AWS references (`aws-kms://`, `kms://…@arn:aws:kms:…`, `s3://`,
//! Secrets Manager and SSM sources): one clap struct, flattened, resolved here from flags, the environment and the
//! shared configuration files into [`crate::kms::aws::AwsSettings`], in the AWS CLI's and SDKs' order.
//!
//! Credentials, first found wins:
//! 1. `AWS_ACCESS_KEY_ID` + `AWS_SECRET_ACCESS_KEY` (+ `AWS_SESSION_TOKEN`);
//! 2. the profile (`--aws-profile`, `AWS_PROFILE`, else `default`) in `AWS_SHARED_CREDENTIALS_FILE`
//!    (`~/.aws/credentials`) and `AWS_CONFIG_FILE` (`~/.aws/config`), in botocore's order within a profile:
//!    `role_arn` with `web_identity_token_file`, or with `source_profile` (chained: the source may itself assume a
//!    role) or `credential_source` (`Environment`, `Ec2InstanceMetadata`, `EcsContainer`), through STS AssumeRole
//!    (`external_id`, `role_session_name`, `duration_seconds`); then its keys; then `credential_process`;
//! 3. web identity: `AWS_ROLE_ARN` + `AWS_WEB_IDENTITY_TOKEN_FILE` (+ `AWS_ROLE_SESSION_NAME`) through STS;
//! 4. the container credential endpoint (ECS task roles, EKS Pod Identity):
//!    `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` (on 169.254.170.2) or `AWS_CONTAINER_CREDENTIALS_FULL_URI`, with
//!    `AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE` (read at each refresh) or `AWS_CONTAINER_AUTHORIZATION_TOKEN`;
//! 5. the EC2 instance metadata service (IMDSv2) at `AWS_EC2_METADATA_SERVICE_ENDPOINT` (else 169.254.169.254),
//!    unless `AWS_EC2_METADATA_DISABLED=true`; it is asked only when a request needs credentials.
//!
//! A named profile that does not exist, a credentials file group or others may read, or a profile this client
//! cannot use (SSO, a role without a source, a source loop) is an error at the first AWS request, not before, so
//! that commands that never reach AWS are not disturbed. Region: `--aws-region`, `AWS_REGION`,
//! `AWS_DEFAULT_REGION`, the profile's `region`, then the instance metadata service (whatever the credentials'
//! source). Endpoints: `--aws-endpoint-url`, then `AWS_ENDPOINT_URL_<SERVICE>` (`KMS`, `S3`, `SECRETS_MANAGER`,
//! `SSM`, `STS`), then `AWS_ENDPOINT_URL`, else the public endpoint of the region's partition, FIPS and
//! dual-stack as `AWS_USE_FIPS_ENDPOINT` / `AWS_USE_DUALSTACK_ENDPOINT` (or the profile's `use_fips_endpoint` /
//! `use_dualstack_endpoint`) ask. Proxies: `HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY` ([`super::proxy`]).

use super::env_vars::{self as env, var_os};
use crate::kms::aws::credentials::{
    AssumeRole, Container, ContainerToken, CredentialProvider, Credentials, DEFAULT_IMDS_ENDPOINT,
    ECS_CONTAINER_ENDPOINT, InstanceMetadata, Log, Process, Refreshing, Static, Unusable, WebIdentity,
};
use crate::kms::aws::profile::{FileKind, Profiles};
use crate::kms::aws::{Aws, AwsSettings, Endpoints};
use crate::kms::http::HttpSettings;
use clap::Args;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Flags of the AWS client.
#[derive(Args, Debug, Clone, Default)]
pub struct AwsArgs {
    /// Region of requests whose resource is not an ARN [env: AWS_REGION, AWS_DEFAULT_REGION]
    #[arg(help_heading = crate::kms::backends::AWS_HEADING, long, value_name = "REGION")]
    pub aws_region: Option<String>,
    /// Endpoint of every AWS service, e.g. http://127.0.0.1:5000 (LocalStack, MinIO for S3)
    /// [env: AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL]
    #[arg(help_heading = crate::kms::backends::AWS_HEADING, long, value_name = "URL")]
    pub aws_endpoint_url: Option<String>,
    /// Profile of ~/.aws/config and ~/.aws/credentials [env: AWS_PROFILE] [default: default]
    #[arg(help_heading = crate::kms::backends::AWS_HEADING, long, value_name = "NAME")]
    pub aws_profile: Option<String>,
    /// PEM bundle of CAs trusted for AWS endpoints besides the system roots [env: AWS_CA_BUNDLE]
    #[arg(help_heading = crate::kms::backends::AWS_HEADING, long, value_name = "FILE")]
    pub aws_ca_bundle: Option<PathBuf>,
}

/// The per-service endpoint variables: (service id, variable).
const SERVICE_ENDPOINTS: &[(&str, &str)] = &[
    ("kms", env::AWS_ENDPOINT_URL_KMS),
    ("s3", env::AWS_ENDPOINT_URL_S3),
    ("secretsmanager", env::AWS_ENDPOINT_URL_SECRETS_MANAGER),
    ("ssm", env::AWS_ENDPOINT_URL_SSM),
    ("sts", env::AWS_ENDPOINT_URL_STS),
];

fn text(name: &str) -> Option<String> {
    var_os(name).and_then(|v| v.into_string().ok()).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty())
}

impl AwsArgs {
    /// A client. Reads the environment and the profile files now; connects nothing.
    pub fn client(&self, timeout: Duration, retries: u32) -> Arc<Aws> {
        Arc::new(Aws::new(self.settings(timeout, retries)))
    }

    /// The settings.
    pub fn settings(&self, timeout: Duration, retries: u32) -> AwsSettings {
        let profile_name = self.aws_profile.clone().or_else(|| text(env::AWS_PROFILE));
        let files = ProfileFiles::read(profile_name.as_deref());
        let region = self
            .aws_region
            .clone()
            .or_else(|| text(env::AWS_REGION))
            .or_else(|| text(env::AWS_DEFAULT_REGION))
            .or_else(|| files.as_ref().ok().and_then(|f| f.get("region").map(str::to_owned)));
        let mut endpoints = Endpoints { all: text(env::AWS_ENDPOINT_URL), ..Endpoints::default() };
        for (service, name) in SERVICE_ENDPOINTS {
            if let Some(url) = text(name) {
                endpoints.per_service.insert((*service).to_owned(), url);
            }
        }
        if let Some(url) = &self.aws_endpoint_url {
            endpoints = Endpoints { all: Some(url.clone()), ..Endpoints::default() };
        }
        let flag = |variable: &str, key: &str| match text(variable) {
            Some(value) => value.eq_ignore_ascii_case("true"),
            None => files.as_ref().ok().and_then(|f| f.get(key)).is_some_and(|v| v.eq_ignore_ascii_case("true")),
        };
        endpoints.fips = flag(env::AWS_USE_FIPS_ENDPOINT, "use_fips_endpoint");
        endpoints.dualstack = flag(env::AWS_USE_DUALSTACK_ENDPOINT, "use_dualstack_endpoint");
        let http = HttpSettings {
            ca_files: self
                .aws_ca_bundle
                .clone()
                .or_else(|| text(env::AWS_CA_BUNDLE).map(PathBuf::from))
                .into_iter()
                .collect(),
            timeout,
            retries,
            deadline: super::deadline::current(),
            proxies: super::proxy::from_env(),
            ..HttpSettings::default()
        };
        let credentials = credential_provider(files, &endpoints, region.as_deref());
        AwsSettings { region, endpoints, http, credentials, instance_metadata: region_source() }
    }
}

/// The chosen profile of the two shared files, or why they cannot be used.
struct ProfileFiles {
    name: String,
    profiles: Profiles,
    /// What was looked at, for "no credentials".
    places: String,
}

impl ProfileFiles {
    /// Reads both files. A named profile that is in neither, or a credentials file others may read, is an error.
    fn read(named: Option<&str>) -> Result<Self, (String, String)> {
        let home = text(env::HOME).map(PathBuf::from);
        let file = |variable: &str, default: &str| {
            text(variable).map(PathBuf::from).or_else(|| home.as_ref().map(|h| h.join(default)))
        };
        let credentials_file = file(env::AWS_SHARED_CREDENTIALS_FILE, ".aws/credentials");
        let config_file = file(env::AWS_CONFIG_FILE, ".aws/config");
        let name = named.unwrap_or("default").to_owned();
        let mut profiles = Profiles::default();
        let mut places = Vec::new();
        for (path, kind) in [(&credentials_file, FileKind::Credentials), (&config_file, FileKind::Config)] {
            let Some(path) = path else { continue };
            places.push(format!("`{}`", path.display()));
            if let Some(text) = read_profile_file(path, kind)? {
                profiles.add(&text, kind);
            }
        }
        let places = format!(
            "profile `{name}` in {}",
            if places.is_empty() { "no file (no HOME)".into() } else { places.join(" and ") }
        );
        if named.is_some() && !profiles.has(&name) {
            return Err((
                format!("AWS profile `{name}` is not in the shared configuration files ({places})"),
                "check AWS_PROFILE (or --aws-profile), AWS_CONFIG_FILE and AWS_SHARED_CREDENTIALS_FILE".into(),
            ));
        }
        Ok(Self { name, profiles, places })
    }

    fn get(&self, key: &str) -> Option<&str> {
        self.profiles.get(&self.name, key)
    }
}

/// Reads one shared file: `None` when it does not exist. A file holding secret keys must be the user's alone, as
/// token files must.
fn read_profile_file(path: &Path, kind: FileKind) -> Result<Option<String>, (String, String)> {
    use std::os::unix::fs::MetadataExt as _;
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err((format!("AWS shared file `{}`: {e}", path.display()), "check the file".into())),
    };
    let refused = |problem: String| {
        (format!("AWS shared file `{}`: {problem}", path.display()), "chmod 600 it (the AWS CLI creates it so)".into())
    };
    if !metadata.is_file() || metadata.len() > 1 << 20 {
        return Err(refused("not a regular file of at most 1 MiB".into()));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| (format!("AWS shared file `{}`: {e}", path.display()), "check the file".into()))?;
    let holds_secrets = kind == FileKind::Credentials || text.contains("aws_secret_access_key");
    if holds_secrets && metadata.mode() & 0o077 != 0 {
        let mut text = text;
        zeroize::Zeroize::zeroize(&mut text);
        return Err(refused(format!("group or others may access it (mode {:o})", metadata.mode() & 0o777)));
    }
    Ok(Some(text))
}

/// The printer's verbose lines, for what the AWS client tells at `-v` (a renewal that failed while the kept
/// credentials are still valid).
static LOG: std::sync::OnceLock<super::printer::Printer> = std::sync::OnceLock::new();

/// Makes the AWS client's `-v` lines go to `printer` (called once, by `main`).
pub fn install_log(printer: &super::printer::Printer) {
    let _ = LOG.set(printer.clone());
}

fn log() -> Option<Log> {
    LOG.get().map(|printer| -> Log {
        Arc::new(move |line: &str| {
            use crate::interact::Interaction as _;
            printer.debug(line);
        })
    })
}

/// What the credential sources need besides the profile files.
struct Chain<'a> {
    region: Option<&'a str>,
    sts_endpoint: String,
    log: Option<Log>,
}

impl Chain<'_> {
    fn cache(&self) -> Refreshing {
        Refreshing::logged(self.log.clone())
    }

    fn session_name(configured: Option<String>) -> String {
        configured.unwrap_or_else(|| {
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
            format!("cryptadm-{}", now.as_secs())
        })
    }

    /// The environment's keys, if set (`Err` for half a pair).
    fn environment(&self) -> Result<Option<Arc<dyn CredentialProvider>>, (String, String)> {
        match (text(env::AWS_ACCESS_KEY_ID), var_os(env::AWS_SECRET_ACCESS_KEY).filter(|v| !v.is_empty())) {
            (Some(id), Some(secret)) => {
                use std::os::unix::ffi::OsStringExt as _;
                let token = var_os(env::AWS_SESSION_TOKEN).filter(|v| !v.is_empty()).map(|t| t.into_vec().into());
                let credentials = Credentials::new(id, secret.into_vec().into(), token, None);
                Ok(Some(Arc::new(Static::from(credentials, "the environment (AWS_ACCESS_KEY_ID)"))))
            }
            (Some(_), None) => {
                Err(("AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not".into(), "set both, or neither".into()))
            }
            _ => Ok(None),
        }
    }

    /// The container credential provider, when its variables are set (the relative URI wins, as in the SDKs).
    fn container(&self) -> Option<Arc<dyn CredentialProvider>> {
        let (url, origin) =
            match (text(env::AWS_CONTAINER_CREDENTIALS_RELATIVE_URI), text(env::AWS_CONTAINER_CREDENTIALS_FULL_URI)) {
                (Some(relative), _) => (
                    format!("{ECS_CONTAINER_ENDPOINT}/{}", relative.trim_start_matches('/')),
                    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
                ),
                (None, Some(full)) => (full, "AWS_CONTAINER_CREDENTIALS_FULL_URI"),
                (None, None) => return None,
            };
        let token = match (
            text(env::AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE),
            var_os(env::AWS_CONTAINER_AUTHORIZATION_TOKEN).filter(|v| !v.is_empty()),
        ) {
            (Some(file), _) => ContainerToken::File(PathBuf::from(file)),
            (None, Some(value)) => {
                use std::os::unix::ffi::OsStringExt as _;
                ContainerToken::Value(value.into_vec().into())
            }
            (None, None) => ContainerToken::None,
        };
        Some(Arc::new(Container { url, token, origin: origin.into(), cache: self.cache() }))
    }

    fn instance_metadata(&self, searched: Vec<String>) -> Arc<dyn CredentialProvider> {
        Arc::new(InstanceMetadata {
            endpoint: imds_endpoint().unwrap_or_else(|| DEFAULT_IMDS_ENDPOINT.to_owned()),
            searched,
            cache: self.cache(),
        })
    }

    /// The credentials of profile `name`, in botocore's order within a profile: an assumed role (`role_arn` with
    /// `web_identity_token_file`, `source_profile` or `credential_source`), then keys, then `credential_process`.
    /// `Ok(None)`: the profile gives none. `visited` holds the profiles of the chain so far (a loop is an error).
    fn profile(
        &self,
        files: &ProfileFiles,
        name: &str,
        visited: &mut Vec<String>,
    ) -> Result<Option<Arc<dyn CredentialProvider>>, (String, String)> {
        let get = |key: &str| files.profiles.get(name, key);
        let place =
            if name == files.name { files.places.clone() } else { format!("profile `{name}` (a source_profile)") };
        let bad = |problem: String| (format!("AWS {place}: {problem}"), "fix the profile in ~/.aws/config".to_owned());
        if !files.profiles.has(name) {
            return Err(bad("no such profile".into()));
        }
        let self_referencing = get("source_profile") == Some(name) && get("aws_access_key_id").is_some();
        if let Some(role_arn) = get("role_arn").filter(|_| !(self_referencing && visited.iter().any(|v| v == name))) {
            if let Some(token_file) = get("web_identity_token_file") {
                return Ok(Some(Arc::new(WebIdentity {
                    role_arn: role_arn.to_owned(),
                    token_file: PathBuf::from(token_file),
                    session_name: Self::session_name(get("role_session_name").map(str::to_owned)),
                    sts_endpoint: self.sts_endpoint.clone(),
                    origin: place.clone(),
                    cache: self.cache(),
                })));
            }
            let source: Arc<dyn CredentialProvider> = match (get("source_profile"), get("credential_source")) {
                (Some(_), Some(_)) => return Err(bad("both source_profile and credential_source are set".into())),
                (None, None) => {
                    return Err(bad(
                        "role_arn needs source_profile, credential_source or web_identity_token_file".into()
                    ));
                }
                (Some(source), None) => {
                    if visited.iter().any(|v| v == source) && !(source == name && self_referencing) {
                        return Err(bad(format!("source_profile `{source}` loops back ({})", visited.join(" → "))));
                    }
                    visited.push(name.to_owned());
                    match self.profile(files, source, visited)? {
                        Some(provider) => provider,
                        None => return Err(bad(format!("source_profile `{source}` has no credentials"))),
                    }
                }
                (None, Some(source)) => match source {
                    "Environment" => match self.environment()? {
                        Some(provider) => provider,
                        None => {
                            return Err(bad("credential_source Environment, but AWS_ACCESS_KEY_ID is not set".into()));
                        }
                    },
                    "Ec2InstanceMetadata" => self.instance_metadata(vec![format!("{place} (credential_source)")]),
                    "EcsContainer" => match self.container() {
                        Some(provider) => provider,
                        None => {
                            return Err(bad(
                                "credential_source EcsContainer, but neither AWS_CONTAINER_CREDENTIALS_RELATIVE_URI \
                                 nor AWS_CONTAINER_CREDENTIALS_FULL_URI is set"
                                    .into(),
                            ));
                        }
                    },
                    other => {
                        return Err(bad(format!(
                            "credential_source `{other}`: expected Environment, Ec2InstanceMetadata or EcsContainer"
                        )));
                    }
                },
            };
            let duration_seconds = match get("duration_seconds") {
                None => None,
                Some(text) => {
                    Some(text.parse::<u32>().ok().filter(|d| (900..=43_200).contains(d)).ok_or_else(|| {
                        bad(format!("duration_seconds `{text}`: expected a number of seconds from 900 to 43200"))
                    })?)
                }
            };
            return Ok(Some(Arc::new(AssumeRole {
                role_arn: role_arn.to_owned(),
                session_name: Self::session_name(get("role_session_name").map(str::to_owned)),
                external_id: get("external_id").map(str::to_owned),
                duration_seconds,
                source,
                sts_endpoint: self.sts_endpoint.clone(),
                sts_region: self.region.unwrap_or("us-east-1").to_owned(),
                origin: place.clone(),
                cache: self.cache(),
            })));
        }
        for unsupported in ["sso_session", "sso_start_url"] {
            if get(unsupported).is_some() {
                return Err((
                    format!("AWS {place}: {unsupported} is not supported by cryptadm"),
                    "use keys, an assumed role, credential_process, web identity or the instance profile; or export \
                     the credentials into the environment (aws configure export-credentials --format env)"
                        .into(),
                ));
            }
        }
        if let Some(id) = get("aws_access_key_id") {
            let Some(secret) = get("aws_secret_access_key") else {
                return Err((
                    format!("AWS {place} has aws_access_key_id but no aws_secret_access_key"),
                    "add the secret key to the profile".into(),
                ));
            };
            let token = get("aws_session_token").map(|t| t.as_bytes().to_vec().into());
            let credentials = Credentials::new(id.to_owned(), secret.as_bytes().to_vec().into(), token, None);
            return Ok(Some(Arc::new(Static::from(credentials, place))));
        }
        if let Some(command) = get("credential_process") {
            return Ok(Some(Arc::new(Process { command: command.to_owned(), origin: place, cache: self.cache() })));
        }
        Ok(None)
    }
}

/// `AWS_EC2_METADATA_SERVICE_ENDPOINT`, when set.
fn imds_endpoint() -> Option<String> {
    text(env::AWS_EC2_METADATA_SERVICE_ENDPOINT)
}

/// Whether `AWS_EC2_METADATA_DISABLED` turns the instance metadata service off.
fn imds_disabled() -> bool {
    text(env::AWS_EC2_METADATA_DISABLED).is_some_and(|v| v.eq_ignore_ascii_case("true"))
}

/// The instance metadata service asked for the region (whatever the credentials), unless disabled.
fn region_source() -> Option<String> {
    (!imds_disabled()).then(|| imds_endpoint().unwrap_or_else(|| DEFAULT_IMDS_ENDPOINT.to_owned()))
}

/// Picks the credential source, in the SDKs' order (see the module's documentation).
fn credential_provider(
    files: Result<ProfileFiles, (String, String)>,
    endpoints: &Endpoints,
    region: Option<&str>,
) -> Arc<dyn CredentialProvider> {
    let unusable =
        |(problem, hint): (String, String)| -> Arc<dyn CredentialProvider> { Arc::new(Unusable { problem, hint }) };
    let chain = Chain { region, sts_endpoint: crate::kms::aws::sts_endpoint(endpoints, region), log: log() };
    let mut searched = Vec::new();
    match chain.environment() {
        Ok(Some(provider)) => return provider,
        Ok(None) => searched.push("AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (not set)".to_owned()),
        Err(problem) => return unusable(problem),
    }
    let files = match files {
        Ok(files) => files,
        Err(problem) => return unusable(problem),
    };
    if files.profiles.has(&files.name) {
        match chain.profile(&files, &files.name.clone(), &mut Vec::new()) {
            Ok(Some(provider)) => return provider,
            Ok(None) => {}
            Err(problem) => return unusable(problem),
        }
    }
    searched.push(format!("{} (no credentials)", files.places));
    match (text(env::AWS_ROLE_ARN), text(env::AWS_WEB_IDENTITY_TOKEN_FILE)) {
        (Some(role_arn), Some(token_file)) => {
            return Arc::new(WebIdentity {
                role_arn,
                token_file: PathBuf::from(token_file),
                session_name: Chain::session_name(text(env::AWS_ROLE_SESSION_NAME)),
                sts_endpoint: chain.sts_endpoint.clone(),
                origin: "AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE".into(),
                cache: chain.cache(),
            });
        }
        _ => searched.push("AWS_ROLE_ARN/AWS_WEB_IDENTITY_TOKEN_FILE (not set)".to_owned()),
    }
    if let Some(container) = chain.container() {
        return container;
    }
    searched.push("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI/AWS_CONTAINER_CREDENTIALS_FULL_URI (not set)".to_owned());
    if imds_disabled() {
        searched.push("the EC2 instance metadata service (disabled by AWS_EC2_METADATA_DISABLED)".to_owned());
        return unusable((
            format!("no AWS credentials found; searched: {}", searched.join("; ")),
            "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or AWS_ROLE_ARN with \
             AWS_WEB_IDENTITY_TOKEN_FILE"
                .into(),
        ));
    }
    chain.instance_metadata(searched)
}
