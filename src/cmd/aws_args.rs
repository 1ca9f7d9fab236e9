//! The AWS settings of every command that takes AWS references (`aws-kms://`, `kms://…@arn:aws:kms:…`, `s3://`,
//! Secrets Manager and SSM sources): one clap struct, flattened, resolved here from flags, the environment and the
//! shared configuration files into [`crate::kms::aws::AwsSettings`], in the AWS CLI's and SDKs' order.
//!
//! Credentials, first found wins:
//! 1. `AWS_ACCESS_KEY_ID` + `AWS_SECRET_ACCESS_KEY` (+ `AWS_SESSION_TOKEN`);
//! 2. the profile (`--aws-profile`, `AWS_PROFILE`, else `default`) in `AWS_SHARED_CREDENTIALS_FILE`
//!    (`~/.aws/credentials`) and `AWS_CONFIG_FILE` (`~/.aws/config`): its keys, or `role_arn` with
//!    `web_identity_token_file`;
//! 3. web identity: `AWS_ROLE_ARN` + `AWS_WEB_IDENTITY_TOKEN_FILE` (+ `AWS_ROLE_SESSION_NAME`) through STS;
//! 4. the EC2 instance metadata service (IMDSv2) at `AWS_EC2_METADATA_SERVICE_ENDPOINT` (else 169.254.169.254),
//!    unless `AWS_EC2_METADATA_DISABLED=true`; it is asked only when a request needs credentials.
//!
//! A named profile that does not exist, a credentials file group or others may read, or a profile this client
//! cannot use (`source_profile`, `credential_process`, SSO) is an error at the first AWS request, not before, so
//! that commands that never reach AWS are not disturbed. Region: `--aws-region`, `AWS_REGION`,
//! `AWS_DEFAULT_REGION`, the profile's `region`, then the instance metadata service. Endpoints:
//! `--aws-endpoint-url`, then `AWS_ENDPOINT_URL_<SERVICE>` (`KMS`, `S3`, `SECRETS_MANAGER`, `SSM`, `STS`), then
//! `AWS_ENDPOINT_URL`.

use super::env_vars::{self as env, var_os};
use crate::kms::aws::credentials::{
    CredentialProvider, Credentials, DEFAULT_IMDS_ENDPOINT, InstanceMetadata, Refreshing, Static, Unusable, WebIdentity,
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
            ..HttpSettings::default()
        };
        let credentials = credential_provider(files, &endpoints, region.as_deref());
        AwsSettings { region, endpoints, http, credentials }
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

/// Picks the credential source, in the SDKs' order (see the module's documentation).
fn credential_provider(
    files: Result<ProfileFiles, (String, String)>,
    endpoints: &Endpoints,
    region: Option<&str>,
) -> Arc<dyn CredentialProvider> {
    let unusable =
        |(problem, hint): (String, String)| -> Arc<dyn CredentialProvider> { Arc::new(Unusable { problem, hint }) };
    let mut searched = Vec::new();
    match (text(env::AWS_ACCESS_KEY_ID), var_os(env::AWS_SECRET_ACCESS_KEY).filter(|v| !v.is_empty())) {
        (Some(id), Some(secret)) => {
            use std::os::unix::ffi::OsStringExt as _;
            let token = var_os(env::AWS_SESSION_TOKEN).filter(|v| !v.is_empty()).map(|t| t.into_vec().into());
            let credentials = Credentials::new(id, secret.into_vec().into(), token, None);
            return Arc::new(Static::from(credentials, "the environment (AWS_ACCESS_KEY_ID)"));
        }
        (Some(_), None) => {
            return unusable((
                "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not".into(),
                "set both, or neither".into(),
            ));
        }
        _ => searched.push("AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (not set)".to_owned()),
    }
    let files = match files {
        Ok(files) => files,
        Err(problem) => return unusable(problem),
    };
    let sts_endpoint = crate::kms::aws::sts_endpoint(endpoints, region);
    let session_name = |configured: Option<String>| {
        configured.unwrap_or_else(|| {
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
            format!("cryptadm-{}", now.as_secs())
        })
    };
    if let Some(id) = files.get("aws_access_key_id") {
        let Some(secret) = files.get("aws_secret_access_key") else {
            return unusable((
                format!("AWS {} has aws_access_key_id but no aws_secret_access_key", files.places),
                "add the secret key to the profile".into(),
            ));
        };
        let token = files.get("aws_session_token").map(|t| t.as_bytes().to_vec().into());
        let credentials = Credentials::new(id.to_owned(), secret.as_bytes().to_vec().into(), token, None);
        return Arc::new(Static::from(credentials, files.places.clone()));
    }
    if let Some(role_arn) = files.get("role_arn") {
        if let Some(token_file) = files.get("web_identity_token_file") {
            return Arc::new(WebIdentity {
                role_arn: role_arn.to_owned(),
                token_file: PathBuf::from(token_file),
                session_name: session_name(files.get("role_session_name").map(str::to_owned)),
                sts_endpoint,
                origin: files.places.clone(),
                cache: Refreshing::default(),
            });
        }
        return unusable((
            format!(
                "AWS {}: role_arn with source_profile or credential_source is not supported by cryptadm",
                files.places
            ),
            "give the role's credentials another way: web_identity_token_file, AWS_ROLE_ARN with \
             AWS_WEB_IDENTITY_TOKEN_FILE, or keys from `aws configure export-credentials`"
                .into(),
        ));
    }
    for unsupported in ["credential_process", "sso_session", "sso_start_url"] {
        if files.get(unsupported).is_some() {
            return unusable((
                format!("AWS {}: {unsupported} is not supported by cryptadm", files.places),
                "use keys, web identity or the instance profile; or export the credentials into the environment \
                 (aws configure export-credentials --format env)"
                    .into(),
            ));
        }
    }
    searched.push(format!("{} (no credentials)", files.places));
    match (text(env::AWS_ROLE_ARN), text(env::AWS_WEB_IDENTITY_TOKEN_FILE)) {
        (Some(role_arn), Some(token_file)) => {
            return Arc::new(WebIdentity {
                role_arn,
                token_file: PathBuf::from(token_file),
                session_name: session_name(text(env::AWS_ROLE_SESSION_NAME)),
                sts_endpoint,
                origin: "AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE".into(),
                cache: Refreshing::default(),
            });
        }
        _ => searched.push("AWS_ROLE_ARN/AWS_WEB_IDENTITY_TOKEN_FILE (not set)".to_owned()),
    }
    if text(env::AWS_EC2_METADATA_DISABLED).is_some_and(|v| v.eq_ignore_ascii_case("true")) {
        searched.push("the EC2 instance metadata service (disabled by AWS_EC2_METADATA_DISABLED)".to_owned());
        return unusable((
            format!("no AWS credentials found; searched: {}", searched.join("; ")),
            "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or AWS_ROLE_ARN with \
             AWS_WEB_IDENTITY_TOKEN_FILE"
                .into(),
        ));
    }
    Arc::new(InstanceMetadata {
        endpoint: text(env::AWS_EC2_METADATA_SERVICE_ENDPOINT).unwrap_or_else(|| DEFAULT_IMDS_ENDPOINT.to_owned()),
        searched,
        cache: Refreshing::default(),
    })
}
