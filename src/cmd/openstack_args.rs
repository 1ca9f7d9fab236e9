//! `--os-cloud` and the `OS_*` variables resolved into a Keystone session, as openstackclient resolves them:
//! the named cloud of `clouds.yaml` (with `secure.yaml` merged in), then every `OS_*` variable that is set
//! overriding the same setting. Passwords come from `clouds.yaml`/`secure.yaml` or the environment, never argv.

use super::env_vars::{self, var_os};
use crate::cmd::error::Failure;
use crate::crypto::SecretBytes;
use crate::exit::ExitStatus;
use crate::kms::http::HttpSettings;
use crate::kms::keystone::{Cloud, Method, Named, Session};
use crate::openstack::clouds;
use clap::Args;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// Which OpenStack cloud to use.
#[derive(Args, Debug, Clone, Default)]
pub struct OpenStackArgs {
    /// The cloud of clouds.yaml to log in to (OS_CLOUD); OS_* variables override its settings
    ///
    /// clouds.yaml is read from OS_CLIENT_CONFIG_FILE, ./clouds.yaml, ~/.config/openstack/clouds.yaml or
    /// /etc/openstack/clouds.yaml (the first found), with secure.yaml beside it merged in. Without a cloud,
    /// OS_AUTH_URL and the other OS_* variables say everything.
    #[arg(long, value_name = "NAME", env = env_vars::OS_CLOUD, help_heading = "OpenStack")]
    pub os_cloud: Option<String>,
}

fn env(name: &str) -> Option<String> {
    var_os(name).and_then(|v| v.into_string().ok()).filter(|v| !v.is_empty())
}

fn config_error(message: impl Into<String>) -> anyhow::Error {
    Failure::new(ExitStatus::InvalidInput, message)
        .with_hint("give --os-cloud NAME (a cloud of clouds.yaml) or set OS_AUTH_URL, OS_USERNAME, OS_PASSWORD and OS_PROJECT_NAME")
        .into()
}

/// The `clouds.yaml` files read, first found first: (clouds.yaml, secure.yaml beside it).
fn config_files() -> Vec<(PathBuf, PathBuf)> {
    let mut dirs: Vec<PathBuf> = vec![PathBuf::from(".")];
    if let Some(home) = env(env_vars::HOME) {
        dirs.push(PathBuf::from(home).join(".config/openstack"));
    }
    dirs.push(PathBuf::from("/etc/openstack"));
    let mut files = Vec::new();
    if let Some(file) = env(env_vars::OS_CLIENT_CONFIG_FILE) {
        let file = PathBuf::from(file);
        let secure = file.with_file_name("secure.yaml");
        files.push((file, secure));
    }
    files.extend(dirs.into_iter().map(|d| (d.join("clouds.yaml"), d.join("secure.yaml"))));
    files
}

impl OpenStackArgs {
    /// The Keystone session of the chosen cloud.
    pub fn session(&self) -> anyhow::Result<Arc<Session>> {
        let cloud = self.resolve()?;
        Ok(Arc::new(Session::new(cloud)?))
    }

    fn resolve(&self) -> anyhow::Result<Cloud> {
        let mut entry = Value::Object(serde_json::Map::new());
        if let Some(name) = &self.os_cloud {
            let mut found = None;
            for (file, secure) in config_files() {
                if let Some(mut doc) = clouds::read(&file)? {
                    if let Some(secure) = clouds::read(&secure)? {
                        clouds::merge(&mut doc, secure);
                    }
                    if let Some(cloud) = clouds::cloud(&doc, name) {
                        found = Some(cloud.clone());
                        break;
                    }
                }
            }
            entry = found.ok_or_else(|| {
                Failure::new(ExitStatus::NotFound, format!("cloud `{name}`: not in any clouds.yaml")).with_hint(
                    "clouds.yaml is read from OS_CLIENT_CONFIG_FILE, ./clouds.yaml, ~/.config/openstack/ and /etc/openstack/",
                )
            })?;
        }
        let get = |key: &str, var: &str| env(var).or_else(|| clouds::text(entry.get("auth").and_then(|a| a.get(key))));
        let top = |key: &str, var: &str| env(var).or_else(|| clouds::text(entry.get(key)));

        let auth_url = get("auth_url", env_vars::OS_AUTH_URL)
            .ok_or_else(|| config_error("no Keystone URL: the cloud has no auth_url and OS_AUTH_URL is not set"))?;
        let user = Named {
            id: get("user_id", env_vars::OS_USER_ID),
            name: get("username", env_vars::OS_USERNAME),
            domain_id: get("user_domain_id", env_vars::OS_USER_DOMAIN_ID),
            domain_name: get("user_domain_name", env_vars::OS_USER_DOMAIN_NAME),
        };
        let project = Named {
            id: get("project_id", env_vars::OS_PROJECT_ID),
            name: get("project_name", env_vars::OS_PROJECT_NAME),
            domain_id: get("project_domain_id", env_vars::OS_PROJECT_DOMAIN_ID),
            domain_name: get("project_domain_name", env_vars::OS_PROJECT_DOMAIN_NAME),
        };
        // Held by the command: no server text it shows may quote one (Keystone echoing a login body).
        let secret = |key: &str, var: &str| {
            get(key, var).inspect(|s| crate::redact::hold(s.as_bytes())).map(|s| SecretBytes::from(s.into_bytes()))
        };
        let auth_type = top("auth_type", env_vars::OS_AUTH_TYPE);
        let credential_id = get("application_credential_id", env_vars::OS_APPLICATION_CREDENTIAL_ID);
        let credential_name = get("application_credential_name", env_vars::OS_APPLICATION_CREDENTIAL_NAME);
        let credential_secret = secret("application_credential_secret", env_vars::OS_APPLICATION_CREDENTIAL_SECRET);
        let token = secret("token", env_vars::OS_TOKEN);
        let method = match auth_type.as_deref() {
            Some("v3applicationcredential" | "applicationcredential") => None,
            Some("token" | "v3token") => token.clone().map(Method::Token),
            Some("password" | "v3password") | None => None,
            Some(other) => return Err(config_error(format!("auth_type `{other}` is not supported"))),
        };
        let method = match method {
            Some(method) => method,
            None if credential_secret.is_some() && !matches!(auth_type.as_deref(), Some("password" | "v3password")) => {
                Method::ApplicationCredential {
                    id: credential_id,
                    name: credential_name,
                    user: user.clone(),
                    secret: credential_secret.unwrap_or_default(),
                }
            }
            None => match secret("password", env_vars::OS_PASSWORD) {
                Some(password) if user.id.is_some() || user.name.is_some() => Method::Password { user, password },
                _ => match token {
                    Some(token) if auth_type.is_none() => Method::Token(token),
                    _ => {
                        return Err(config_error(
                            "no credentials: give a user and password (OS_USERNAME, OS_PASSWORD), an application \
                             credential (OS_APPLICATION_CREDENTIAL_ID, OS_APPLICATION_CREDENTIAL_SECRET) or a token \
                             (OS_TOKEN)",
                        ));
                    }
                },
            },
        };
        let mut endpoint_overrides = BTreeMap::new();
        for (service_type, var) in [
            ("key-manager", env_vars::OS_KEY_MANAGER_ENDPOINT_OVERRIDE),
            ("image", env_vars::OS_IMAGE_ENDPOINT_OVERRIDE),
        ] {
            let key = format!("{}_endpoint_override", service_type.replace('-', "_"));
            if let Some(url) = top(&key, var) {
                endpoint_overrides.insert(service_type.to_owned(), url);
            }
        }
        let mut http = HttpSettings {
            deadline: super::deadline::current(),
            proxies: super::proxy::from_env(),
            ..HttpSettings::default()
        };
        if let Some(cacert) = top("cacert", env_vars::OS_CACERT) {
            http.ca_files.push(PathBuf::from(cacert));
        }
        if entry.get("verify") == Some(&Value::Bool(false)) || entry.get("insecure") == Some(&Value::Bool(true)) {
            http.insecure_skip_verify = true;
        }
        Ok(Cloud {
            auth_url,
            method,
            project,
            region: top("region_name", env_vars::OS_REGION_NAME),
            interface: top("interface", env_vars::OS_INTERFACE).unwrap_or_else(|| "public".into()),
            endpoint_overrides,
            http,
        })
    }
}

/// Key managers an image's secret can be kept in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum KeyManagerArg {
    /// OpenStack Barbican (found in the --os-cloud catalog)
    Barbican,
}

/// The help of `--secret`: the Barbican forms come from the backend table.
fn secret_help() -> String {
    format!(
        "An existing Barbican secret ({}) whose payload gives the passphrase (`symmetric`: its lowercase hex, as \
         os-brick derives it)",
        crate::kms::backends::takes(crate::kms::backends::Use::Secret)
    )
}

/// `--key-manager`, `--secret`, `--upload` and the cloud, shared by `disk luks-format` and `disk convert`.
#[derive(Args, Debug, Clone, Default)]
pub struct KeyManagerArgs {
    /// Keep the image's secret in a key manager: a new secret is stored there (its UUID becomes
    /// os_encrypt_key_id), or --secret names an existing one
    #[arg(long, value_enum, value_name = "KM", help_heading = "OpenStack")]
    pub key_manager: Option<KeyManagerArg>,
    /// An existing Barbican secret whose payload gives the passphrase (help: [`secret_help`], from the backend
    /// table)
    #[arg(long, value_name = "UUID|HREF", requires = "key_manager", help_heading = "OpenStack", help = secret_help())]
    pub secret: Option<String>,
    /// Upload the image to Glance as NAME (with its disk and container formats and every os_encrypt_* property),
    /// and register it as a consumer of its secret; on any failure what was created is deleted again
    #[arg(long, value_name = "NAME", help_heading = "OpenStack")]
    pub upload: Option<String>,
    #[command(flatten)]
    pub(crate) cloud: OpenStackArgs,
}

/// A secret read from the key manager.
pub struct FetchedSecret {
    /// Its UUID.
    pub uuid: String,
    /// Its type, as the consuming service reads it.
    pub secret_type: crate::qcow2::secret::SecretType,
    /// Its Barbican `secret_type` (`passphrase`, `symmetric`, `opaque`, …).
    pub barbican_type: String,
    /// Its payload.
    pub payload: SecretBytes,
}

/// A connection to the cloud for one run, with the ledger of what the run created there (undone on failure and
/// on SIGTERM/SIGINT).
pub struct CloudRun {
    session: Arc<Session>,
    barbican: Option<crate::kms::barbican::Barbican>,
    ledger: Arc<crate::openstack::publish::Ledger>,
    /// Whether the run finished (else dropping it undoes the ledger).
    done: bool,
}

impl KeyManagerArgs {
    /// Whether anything talks to the cloud.
    pub fn used(&self) -> bool {
        self.key_manager.is_some() || self.upload.is_some()
    }

    /// Logs in (before anything is written) when a key manager or an upload is asked for.
    pub fn connect(&self, printer: &dyn crate::interact::Interaction) -> anyhow::Result<Option<CloudRun>> {
        if !self.used() {
            return Ok(None);
        }
        if let Some(secret) = &self.secret {
            crate::kms::KeyRef::parse_secret(secret)?;
        }
        if self.upload.as_deref().is_some_and(str::is_empty) {
            return Err(Failure::new(ExitStatus::Usage, "--upload needs an image name").into());
        }
        let cloud = self.cloud.resolve()?;
        printer.debug(&describe_cloud(&cloud));
        let ledger = Arc::new(crate::openstack::publish::Ledger::new(cloud.clone()));
        let session = Arc::new(Session::new(cloud)?);
        // Every service the run needs is found (and Glance answers) before anything is created or written: a
        // cloud without an image endpoint must not cost a secret and a whole encryption first.
        session.token()?;
        let barbican = match self.key_manager {
            Some(KeyManagerArg::Barbican) => Some(crate::kms::barbican::Barbican::new(session.clone())?),
            None => None,
        };
        if self.key_manager.is_some() {
            let endpoint = session.endpoint(crate::kms::barbican::SERVICE_TYPE, "Barbican")?;
            printer.debug(&format!("Barbican (key-manager) endpoint: {}", crate::redact::url(&endpoint)));
        }
        if self.upload.is_some() {
            crate::openstack::glance::Glance::new(session.clone())?.check()?;
            let endpoint = session.endpoint(crate::openstack::glance::SERVICE_TYPE, "Glance")?;
            printer.debug(&format!("Glance (image) endpoint: {}, answering", crate::redact::url(&endpoint)));
        }
        crate::cmd::interrupt::remove_partials_on_signal();
        let hook_ledger = ledger.clone();
        crate::cmd::interrupt::before_dying(move || {
            let _ = hook_ledger.undo();
        });
        Ok(Some(CloudRun { session, barbican, ledger, done: false }))
    }
}

/// What `-v` says of the cloud: Keystone, the login method and scope, region and interface (no secret).
fn describe_cloud(cloud: &Cloud) -> String {
    let method = match &cloud.method {
        Method::Password { .. } => "password",
        Method::ApplicationCredential { .. } => "application credential",
        Method::Token(_) => "token",
    };
    let project = cloud.project.name.as_deref().or(cloud.project.id.as_deref()).unwrap_or("(the credential's)");
    format!(
        "Keystone {}: {method} login, project {project}, region {}, interface {}",
        crate::redact::url(&cloud.auth_url),
        cloud.region.as_deref().unwrap_or("(any)"),
        cloud.interface
    )
}

impl CloudRun {
    fn barbican(&self) -> anyhow::Result<&crate::kms::barbican::Barbican> {
        self.barbican
            .as_ref()
            .ok_or_else(|| Failure::new(ExitStatus::Usage, "this needs --key-manager barbican").into())
    }

    /// Reads secret `id` (UUID or href): its type and payload.
    pub fn fetch(&self, id: &str) -> anyhow::Result<FetchedSecret> {
        use crate::kms::SecretStore;
        let barbican = self.barbican()?;
        let uuid = match crate::kms::KeyRef::parse_secret(id)? {
            crate::kms::KeyRef::Barbican { uuid, .. } => uuid,
            _ => unreachable!("parse_secret gives Barbican references only"),
        };
        let barbican_type = barbican.secret_type(id)?;
        let secret_type = match barbican_type.as_str() {
            "passphrase" => crate::qcow2::secret::SecretType::Passphrase,
            // os-brick hexlifies every type but passphrase (symmetric, opaque, …).
            _ => crate::qcow2::secret::SecretType::Symmetric,
        };
        let payload = barbican.payload(id)?;
        if payload.is_empty() {
            return Err(Failure::new(ExitStatus::InvalidInput, format!("secret `{uuid}` has an empty payload")).into());
        }
        Ok(FetchedSecret { uuid, secret_type, barbican_type, payload })
    }

    /// The Glance images that delete secret `uuid` with themselves (`os_encrypt_key_deletion_policy=True`, or
    /// Cinder's `cinder_encryption_key_deletion_policy=on_image_deletion`): every image that names it
    /// (`os_encrypt_key_id`, `cinder_encryption_key_id`) and every image Barbican lists as its consumer. Empty
    /// when the cloud has no image service (then no image deletes anything).
    pub fn images_deleting(&self, uuid: &str) -> anyhow::Result<Vec<String>> {
        let glance = match crate::openstack::glance::Glance::new(self.session.clone()) {
            Ok(glance) => glance,
            Err(crate::kms::Error::Config(_)) => return Ok(Vec::new()),
            Err(e) => return Err(e.into()),
        };
        let mut images = Vec::new();
        for property in ["os_encrypt_key_id", "cinder_encryption_key_id"] {
            images.extend(glance.images_with(property, uuid)?);
        }
        let listed: std::collections::BTreeSet<String> =
            images.iter().filter_map(|i| i["id"].as_str().map(str::to_owned)).collect();
        for consumer in self.barbican()?.consumers(uuid)? {
            if consumer.service == "glance"
                && consumer.resource_type == "image"
                && !listed.contains(&consumer.resource_id)
            {
                match glance.show(&consumer.resource_id) {
                    Ok(image) => images.push(image),
                    Err(crate::kms::Error::NotFound { .. }) => {}
                    Err(e) => return Err(e.into()),
                }
            }
        }
        let deletes = |image: &Value| {
            let text = |key: &str| image[key].as_str().map(str::to_ascii_lowercase);
            text("os_encrypt_key_deletion_policy").as_deref() == Some("true")
                || text("cinder_encryption_key_deletion_policy").as_deref() == Some("on_image_deletion")
        };
        let mut found: Vec<String> = images
            .iter()
            .filter(|image| deletes(image))
            .map(|image| {
                let id = image["id"].as_str().unwrap_or("?");
                match image["name"].as_str() {
                    Some(name) => format!("{id} (`{}`)", crate::redact::server_message(name.as_bytes())),
                    None => id.to_owned(),
                }
            })
            .collect();
        found.sort();
        found.dedup();
        Ok(found)
    }

    /// Refuses to share secret `uuid` (`how`: what this run would do with it) when an image deletes it with
    /// itself: deleting that image would leave this run's image without its key.
    pub fn refuse_shared_if_deleted(&self, uuid: &str, how: &str, hint: &str) -> anyhow::Result<()> {
        let images = self.images_deleting(uuid)?;
        if images.is_empty() {
            return Ok(());
        }
        Err(Failure::new(
            ExitStatus::InvalidInput,
            format!(
                "secret {uuid} is deleted with image {}: {how} would leave this image without its key when that                  image is deleted",
                images.join(", ")
            ),
        )
        .with_hint(hint.to_owned())
        .into())
    }

    /// Stores a new secret named `name` of `secret_type` (a symmetric one as an AES key of its length in XTS
    /// mode, as Cinder makes them); recorded in the ledger. Returns its UUID.
    pub fn store(
        &self,
        name: &str,
        secret_type: crate::qcow2::secret::SecretType,
        payload: &[u8],
    ) -> anyhow::Result<String> {
        use crate::kms::SecretStore;
        let bits = u32::try_from(payload.len() * 8).unwrap_or(u32::MAX);
        let secret = crate::kms::NewSecret {
            name,
            secret_type: secret_type.name(),
            algorithm: (secret_type == crate::qcow2::secret::SecretType::Symmetric).then_some(("aes", bits, "xts")),
            payload,
        };
        let uuid = self.barbican()?.create(&secret)?;
        self.ledger.secret_created(&uuid);
        Ok(uuid)
    }

    /// Creates image `name` with `properties`, streams `file` (the complete image, from its start) into it and
    /// registers it as a consumer of `secret`; everything is recorded in the ledger. Returns the image id.
    pub fn upload(
        &self,
        name: &str,
        disk_format: &str,
        properties: &BTreeMap<String, String>,
        file: std::fs::File,
        secret: Option<&str>,
        printer: &dyn crate::interact::Interaction,
    ) -> anyhow::Result<String> {
        let secret_is_ours = secret.is_some() && self.ledger.created().secret.as_deref() == secret;
        let publication = crate::openstack::publish::Publication {
            image: crate::openstack::glance::NewImage { name, disk_format, container_format: "bare", properties },
            secret,
            secret_is_ours,
        };
        let ledger = &self.ledger;
        let id = crate::openstack::publish::publish(&self.session, ledger, &publication, Box::new(file), &|id| {
            let mut commands = ledger.cleanup_commands();
            if commands.is_empty() {
                commands.push(format!("openstack image delete {id}"));
            }
            printer.info(&format!(
                "created image {id}; if this run is killed (kill -9), clean up with: {}",
                commands.join(" && ")
            ));
        })?;
        Ok(id)
    }

    /// Records the local image the run is about to write under the secret it stores (see `output_written`).
    pub fn output_pending(&self, path: &std::path::Path) {
        self.ledger.output_pending(path);
    }

    /// Everything is in place: keep it.
    pub fn finish(mut self) {
        self.ledger.finish();
        crate::cmd::interrupt::clear_hooks();
        self.done = true;
    }

    /// Undoes what the run created (on failure); warns about what could not be deleted.
    pub fn abandon(mut self, printer: &dyn crate::interact::Interaction) {
        self.done = true;
        let undone = self.ledger.undo();
        for left in &undone.left {
            printer.warn(&format!("could not clean up: {left}"));
        }
        if let Some(path) = &undone.removed_output {
            printer.warn(&format!("removed `{}`: the secret this run stored for it was deleted", path.display()));
        } else if let Some((path, _)) = self.ledger.created().output.filter(|_| !undone.left.is_empty()) {
            printer.warn(&format!("kept `{}` with its secret, which could not be deleted", path.display()));
        }
        crate::cmd::interrupt::clear_hooks();
    }
}

impl Drop for CloudRun {
    fn drop(&mut self) {
        if !self.done {
            let _ = self.ledger.undo();
            crate::cmd::interrupt::clear_hooks();
        }
    }
}
