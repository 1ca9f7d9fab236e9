//! Keystone v3 authentication and the service catalog, the way openstackclient and openstacksdk do it (here, in
//! the key-manager layer, because Barbican needs it; Glance in `openstack/` uses it too).
//!
//! A [`Session`] logs in once (password with user and project domains, an application credential, or a
//! pre-issued token), keeps the token and the catalog, and logs in again when the token is about to expire or a
//! service answers 401. Services are found in the catalog by type, region and interface, unless an endpoint
//! override names them.

use crate::crypto::SecretBytes;
use crate::kms::Error;
use crate::kms::http::{Http, HttpSettings, Request, Response};
use crate::redact;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A token this close to its expiry is renewed before use.
const RENEW_BEFORE: Duration = Duration::from_secs(60);

/// A user or project named by id or by name within a domain.
#[derive(Debug, Clone, Default)]
pub struct Named {
    /// The id (wins over the name).
    pub id: Option<String>,
    /// The name, looked up in the domain.
    pub name: Option<String>,
    /// The domain's id.
    pub domain_id: Option<String>,
    /// The domain's name.
    pub domain_name: Option<String>,
}

impl Named {
    fn is_set(&self) -> bool {
        self.id.is_some() || self.name.is_some()
    }

    fn json(&self) -> serde_json::Value {
        let mut object = serde_json::Map::new();
        if let Some(id) = &self.id {
            object.insert("id".into(), id.as_str().into());
            return object.into();
        }
        if let Some(name) = &self.name {
            object.insert("name".into(), name.as_str().into());
        }
        let domain = match (&self.domain_id, &self.domain_name) {
            (Some(id), _) => serde_json::json!({ "id": id }),
            (None, Some(name)) => serde_json::json!({ "name": name }),
            (None, None) => serde_json::json!({ "id": "default" }),
        };
        object.insert("domain".into(), domain);
        object.into()
    }
}

/// How to log in.
#[derive(Debug, Clone)]
pub enum Method {
    /// `password`: a user and its password, scoped to a project.
    Password {
        /// The user.
        user: Named,
        /// The password (a secret: never shown).
        password: SecretBytes,
    },
    /// `v3applicationcredential`: an application credential (already scoped to its project).
    ApplicationCredential {
        /// The credential's id (or its name, with `user`).
        id: Option<String>,
        /// The credential's name, when no id is given.
        name: Option<String>,
        /// The owner, needed with a name.
        user: Named,
        /// The credential's secret.
        secret: SecretBytes,
    },
    /// `v3token`: a pre-issued token, exchanged for a scoped one with its catalog.
    Token(SecretBytes),
}

/// Everything needed to log in and find services: what `clouds.yaml` or the `OS_*` variables say.
#[derive(Debug, Clone)]
pub struct Cloud {
    /// Keystone's URL (`…/v3` or the unversioned root; `/v3` is added when missing).
    pub auth_url: String,
    /// How to log in.
    pub method: Method,
    /// The project to scope the token to (ignored for application credentials).
    pub project: Named,
    /// `region_name`; `None`: any region.
    pub region: Option<String>,
    /// `interface`: `public` (default), `internal` or `admin`.
    pub interface: String,
    /// Service type → endpoint URL that replaces the catalog's (`key_manager_endpoint_override`).
    pub endpoint_overrides: BTreeMap<String, String>,
    /// TLS settings (`cacert`, `insecure`).
    pub http: HttpSettings,
}

/// One endpoint of the catalog.
#[derive(Debug, Clone)]
struct Endpoint {
    service_type: String,
    interface: String,
    region: Option<String>,
    url: String,
}

struct Token {
    value: String,
    expires: Option<SystemTime>,
    catalog: Vec<Endpoint>,
}

/// A logged-in client of one cloud.
pub struct Session {
    cloud: Cloud,
    http: Http,
    token: Mutex<Option<Token>>,
}

impl Session {
    /// A session for `cloud`; nothing is sent until a token is needed.
    pub fn new(cloud: Cloud) -> Result<Self, Error> {
        let http = Http::new("Keystone", &cloud.auth_url, cloud.http.clone())?;
        Ok(Self { cloud, http, token: Mutex::new(None) })
    }

    /// The cloud's settings.
    pub fn cloud(&self) -> &Cloud {
        &self.cloud
    }

    /// The current token, logging in (again) when there is none or it is about to expire.
    pub fn token(&self) -> Result<String, Error> {
        let mut token = self.token.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let fresh = token.as_ref().is_some_and(|t| {
            t.expires
                .is_none_or(|expires| expires.duration_since(SystemTime::now()).is_ok_and(|left| left > RENEW_BEFORE))
        });
        if !fresh {
            *token = Some(self.login()?);
        }
        Ok(token.as_ref().map(|t| t.value.clone()).unwrap_or_default())
    }

    /// Forgets the token (a service refused it): the next [`Session::token`] logs in again.
    pub fn invalidate(&self) {
        *self.token.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = None;
    }

    /// The endpoint of `service_type` (`key-manager`, `image`): the override, or the catalog's entry for the
    /// cloud's interface and region. `what` names the service in errors ("Barbican").
    pub fn endpoint(&self, service_type: &str, what: &str) -> Result<String, Error> {
        if let Some(url) = self.cloud.endpoint_overrides.get(service_type) {
            return Ok(url.trim_end_matches('/').to_owned());
        }
        self.token()?;
        let token = self.token.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let catalog = token.as_ref().map(|t| t.catalog.as_slice()).unwrap_or_default();
        let interface = self.cloud.interface.trim_end_matches("URL");
        catalog
            .iter()
            .find(|e| {
                e.service_type == service_type
                    && e.interface == interface
                    && self.cloud.region.as_ref().is_none_or(|r| e.region.as_ref() == Some(r))
            })
            .map(|e| e.url.trim_end_matches('/').to_owned())
            .ok_or_else(|| {
                let region = self.cloud.region.as_deref().map(|r| format!(" in region `{r}`")).unwrap_or_default();
                Error::Config(format!(
                    "{what}: the service catalog of {} has no `{service_type}` endpoint with interface \
                     `{interface}`{region}; set the interface or region the cloud uses, or give the endpoint \
                     ({}_endpoint_override in clouds.yaml)",
                    self.http.service,
                    service_type.replace('-', "_"),
                ))
            })
    }

    /// Sends the request `build` makes with a token, on `http`; on a 401 logs in again and sends it once more.
    pub fn send(&self, http: &Http, build: &dyn Fn(&str) -> Request) -> Result<Response, Error> {
        let response = http.send(&build(&self.token()?))?;
        if response.status != reqwest::StatusCode::UNAUTHORIZED || matches!(self.cloud.method, Method::Token(_)) {
            return Ok(response);
        }
        self.invalidate();
        http.send(&build(&self.token()?))
    }

    fn login(&self) -> Result<Token, Error> {
        let base = self.cloud.auth_url.trim_end_matches('/');
        let base = if base.ends_with("/v3") { base.to_owned() } else { format!("{base}/v3") };
        let url = reqwest::Url::parse(&format!("{base}/auth/tokens"))
            .map_err(|e| Error::Config(format!("auth_url `{}`: {e}", redact::url(&self.cloud.auth_url))))?;
        let text = |secret: &SecretBytes, what: &str| {
            std::str::from_utf8(secret)
                .map(str::to_owned)
                .map_err(|_| Error::Config(format!("the {what} is not UTF-8")))
        };
        let (identity, scoped) = match &self.cloud.method {
            Method::Password { user, password } => {
                let mut fields = user_fields(user);
                fields.insert("password".into(), text(password, "password")?.into());
                (serde_json::json!({"methods": ["password"], "password": {"user": fields}}), true)
            }
            Method::ApplicationCredential { id, name, user, secret } => {
                let mut credential = serde_json::Map::new();
                credential.insert("secret".into(), text(secret, "application credential secret")?.into());
                match (id, name) {
                    (Some(id), _) => {
                        credential.insert("id".into(), id.as_str().into());
                    }
                    (None, Some(name)) => {
                        credential.insert("name".into(), name.as_str().into());
                        credential.insert("user".into(), user.json());
                    }
                    (None, None) => {
                        return Err(Error::Config("an application credential needs its id (or name and user)".into()));
                    }
                }
                (
                    serde_json::json!({"methods": ["application_credential"],
                        "application_credential": credential}),
                    false,
                )
            }
            Method::Token(token) => {
                (serde_json::json!({"methods": ["token"], "token": {"id": text(token, "token")?}}), true)
            }
        };
        let mut auth = serde_json::json!({ "identity": identity });
        if scoped && self.cloud.project.is_set() {
            auth["scope"] = serde_json::json!({ "project": self.cloud.project.json() });
        }
        let body = serde_json::json!({ "auth": auth });
        let what = "logging in to Keystone";
        let request = Request::new(reqwest::Method::POST, url, what).json(&body);
        let response = self.http.send(&request)?;
        match response.status.as_u16() {
            200 | 201 => {}
            401 | 403 => {
                return Err(Error::Denied {
                    what: what.into(),
                    service: self.http.service.clone(),
                    message: error_message(&response),
                });
            }
            // Keystone answers 404 for a token, application credential, user or project that does not exist:
            // an authentication failure, not a missing resource.
            404 => {
                return Err(Error::Denied {
                    what: what.into(),
                    service: self.http.service.clone(),
                    message: format!(
                        "the credentials name a token, application credential, user or project Keystone does not \
                         know ({})",
                        error_message(&response)
                    ),
                });
            }
            _ => return Err(unexpected(what, &self.http.service, &response)),
        }
        let value =
            response.headers.get("x-subject-token").and_then(|v| v.to_str().ok()).map(str::to_owned).ok_or_else(
                || Error::Protocol {
                    what: what.into(),
                    service: self.http.service.clone(),
                    problem: "no X-Subject-Token header".into(),
                },
            )?;
        let json = response.json(what, &self.http.service)?;
        let token = &json["token"];
        let expires = token["expires_at"].as_str().and_then(parse_time);
        let mut catalog = Vec::new();
        for service in token["catalog"].as_array().into_iter().flatten() {
            let service_type = service["type"].as_str().unwrap_or_default();
            for endpoint in service["endpoints"].as_array().into_iter().flatten() {
                catalog.push(Endpoint {
                    service_type: service_type.to_owned(),
                    interface: endpoint["interface"].as_str().unwrap_or_default().to_owned(),
                    region: endpoint["region_id"].as_str().or(endpoint["region"].as_str()).map(str::to_owned),
                    url: endpoint["url"].as_str().unwrap_or_default().to_owned(),
                });
            }
        }
        Ok(Token { value, expires, catalog })
    }
}

fn user_fields(user: &Named) -> serde_json::Map<String, serde_json::Value> {
    match user.json() {
        serde_json::Value::Object(map) => map,
        _ => serde_json::Map::new(),
    }
}

/// The `error.message` of an OpenStack error body (or the body), bounded and escaped.
pub fn error_message(response: &Response) -> String {
    let parsed: Option<serde_json::Value> = serde_json::from_slice(&response.body).ok();
    let message = parsed.as_ref().and_then(|json| {
        json["error"]["message"]
            .as_str()
            .or(json["description"].as_str())
            .or(json["message"].as_str())
            .or(json["title"].as_str())
            .map(str::to_owned)
    });
    match message {
        Some(message) => redact::server_message(message.as_bytes()),
        None => redact::server_message(&response.body),
    }
}

/// Success when `response`'s status is one of `ok`; else the error an OpenStack service means by it: 401/403
/// denied, 404 not found, anything else unexpected. Barbican and Glance share it.
pub fn expect_status(what: &str, service: &str, response: &Response, ok: &[u16]) -> Result<(), Error> {
    let status = response.status.as_u16();
    if ok.contains(&status) {
        return Ok(());
    }
    Err(match status {
        401 | 403 => Error::Denied { what: what.into(), service: service.into(), message: error_message(response) },
        404 => Error::NotFound { what: what.into(), service: service.into() },
        _ => unexpected(what, service, response),
    })
}

/// An answer no branch expected.
pub fn unexpected(what: &str, service: &str, response: &Response) -> Error {
    Error::Protocol {
        what: what.into(),
        service: service.into(),
        problem: format!("HTTP {}: {}", response.status, error_message(response)),
    }
}

/// Keystone's `2026-11-26T14:02:48.000000Z` (UTC).
fn parse_time(text: &str) -> Option<SystemTime> {
    let digits = |range: std::ops::Range<usize>| text.get(range)?.parse::<i64>().ok();
    let (year, month, day) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
    let (hour, minute, second) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
    // Days from 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second;
    u64::try_from(seconds).ok().map(|s| UNIX_EPOCH + Duration::from_secs(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keystone_times_parse_as_utc() {
        let t = parse_time("2026-11-26T14:02:48.000000Z").unwrap();
        assert_eq!(t.duration_since(UNIX_EPOCH).unwrap().as_secs(), 1_795_701_768);
        assert_eq!(parse_time("1970-01-01T00:00:00Z"), Some(UNIX_EPOCH));
        assert_eq!(parse_time("garbage"), None);
    }
}
