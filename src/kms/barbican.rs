//! Barbican (OpenStack's key manager) as a [`SecretStore`]: secrets stored and read the way Nova (castellan) and
//! os-brick store and read an encrypted image's secret, and the consumer API that records which image uses it.
//!
//! - A new secret is `POST /v1/secrets` with the payload in base64 and `payload_content_type:
//!   application/octet-stream`, `payload_content_encoding: base64` (castellan's way; Barbican refuses an
//!   octet-stream payload without the encoding);
//! - a payload is read with `GET /v1/secrets/{id}/payload` and `Accept: application/octet-stream`, which gives the
//!   stored bytes whatever the secret's type (asking `text/plain` of an octet-stream secret is a 406);
//! - consumers are `POST`/`DELETE /v1/secrets/{id}/consumers` (Barbican Zed and later). Zed records them but
//!   still deletes a secret that has them; later releases refuse unless forced.

use super::{Consumer, Error, NewSecret, SecretStore};
use crate::crypto::SecretBytes;
use crate::kms::http::{Http, Request, Response};
use crate::kms::keystone::{Session, expect_status};
use crate::kms::reference::{KeyRef, is_uuid};
use base64::Engine as _;
use std::sync::Arc;

/// The service type of Barbican in the catalog.
pub const SERVICE_TYPE: &str = "key-manager";

/// A Barbican client.
pub struct Barbican {
    session: Arc<Session>,
    http: Http,
    endpoint: String,
}

impl Barbican {
    /// Barbican of the session's cloud (its catalog entry or endpoint override).
    pub fn new(session: Arc<Session>) -> Result<Self, Error> {
        let endpoint = session.endpoint(SERVICE_TYPE, "Barbican")?;
        let http = Http::new("Barbican", &endpoint, session.cloud().http.clone())?;
        Ok(Self { session, http, endpoint })
    }

    /// The secret's URL: its href when one was given, else the endpoint's `/v1/secrets/UUID`.
    fn secret_url(&self, id: &str, tail: &str) -> Result<reqwest::Url, Error> {
        let base = match KeyRef::parse_secret(id)? {
            KeyRef::Barbican { href: Some(href), .. } => {
                // The request carries the Keystone token: an href may name the catalog's Barbican only, never
                // another host (nor the same one over another scheme or port).
                if !same_origin(&href, &self.endpoint) {
                    return Err(Error::BadReference {
                        reference: crate::redact::url(&href),
                        problem: format!(
                            "the href is not on this cloud's Barbican ({}); give the secret's UUID",
                            crate::redact::url(&self.endpoint)
                        ),
                    });
                }
                href.trim_end_matches('/').to_owned()
            }
            KeyRef::Barbican { uuid, .. } => format!("{}/v1/secrets/{uuid}", self.versionless()),
            _ => unreachable!("parse_secret gives Barbican references only"),
        };
        reqwest::Url::parse(&format!("{base}{tail}"))
            .map_err(|e| Error::BadReference { reference: crate::redact::url(id), problem: e.to_string() })
    }

    /// The endpoint without a trailing `/v1` (catalogs hold either form).
    fn versionless(&self) -> &str {
        self.endpoint.trim_end_matches('/').trim_end_matches("/v1")
    }

    fn send(&self, build: &dyn Fn(&str) -> Request) -> Result<Response, Error> {
        self.session.send(&self.http, &|token| build(token).header("X-Auth-Token", token))
    }

    /// The secret's metadata (`secret_type`, `payload_content_type`, `algorithm`, …).
    pub fn metadata(&self, id: &str) -> Result<serde_json::Value, Error> {
        let url = self.secret_url(id, "")?;
        let what = format!("reading secret {}", shown(id));
        let response = self
            .send(&|_| Request::new(reqwest::Method::GET, url.clone(), &what).header("Accept", "application/json"))?;
        expect_status(&what, &self.http.service, &response, &[200])?;
        response.json(&what, &self.http.service)
    }

    /// The secret's consumers.
    pub fn consumers(&self, id: &str) -> Result<Vec<Consumer>, Error> {
        let url = self.secret_url(id, "/consumers")?;
        let what = format!("listing the consumers of secret {}", shown(id));
        let response = self.send(&|_| Request::new(reqwest::Method::GET, url.clone(), &what))?;
        expect_status(&what, &self.http.service, &response, &[200])?;
        let json = response.json(&what, &self.http.service)?;
        Ok(json["consumers"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| Consumer {
                service: c["service"].as_str().unwrap_or_default().to_owned(),
                resource_type: c["resource_type"].as_str().unwrap_or_default().to_owned(),
                resource_id: c["resource_id"].as_str().unwrap_or_default().to_owned(),
            })
            .collect())
    }

    fn consumer_request(
        &self,
        method: reqwest::Method,
        id: &str,
        consumer: &Consumer,
        verb: &str,
    ) -> Result<(), Error> {
        let url = self.secret_url(id, "/consumers")?;
        let what = format!(
            "{verb} consumer {} {} {} of secret {}",
            consumer.service,
            consumer.resource_type,
            consumer.resource_id,
            shown(id)
        );
        let body = serde_json::json!({
            "service": consumer.service,
            "resource_type": consumer.resource_type,
            "resource_id": consumer.resource_id,
        });
        let response = self.send(&|_| Request::new(method.clone(), url.clone(), &what).json(&body))?;
        if method == reqwest::Method::DELETE && response.status == reqwest::StatusCode::NOT_FOUND {
            return Ok(());
        }
        expect_status(&what, &self.http.service, &response, &[200, 201, 204])
    }
}

/// A secret for messages: its UUID (an href's host is not needed to say which).
/// Most characters of a secret type the server names that are kept (Barbican's longest is `certificate`).
pub const SECRET_TYPE_MAX: usize = 64;

/// The `secret_type` of a secret's metadata (`opaque` when there is none): the server's word, shown in messages
/// ("which passphrase rule applied"), so one escaped line of at most [`SECRET_TYPE_MAX`] characters, without any
/// secret the command holds.
fn secret_type_of(metadata: &serde_json::Value) -> String {
    let secret_type = metadata["secret_type"].as_str().unwrap_or("opaque");
    crate::redact::server_text(secret_type.trim().as_bytes(), SECRET_TYPE_MAX)
}

fn shown(id: &str) -> String {
    match KeyRef::parse_secret(id) {
        Ok(KeyRef::Barbican { uuid, .. }) => format!("`{uuid}`"),
        _ => format!("`{}`", crate::redact::url(id)),
    }
}

impl SecretStore for Barbican {
    fn create(&self, secret: &NewSecret<'_>) -> Result<String, Error> {
        let url = reqwest::Url::parse(&format!("{}/v1/secrets", self.versionless()))
            .map_err(|e| Error::Config(format!("Barbican endpoint: {e}")))?;
        let what = format!("storing {} secret `{}`", secret.secret_type, secret.name);
        let mut body = serde_json::json!({
            "name": secret.name,
            "secret_type": secret.secret_type,
            "payload": base64::engine::general_purpose::STANDARD.encode(secret.payload),
            "payload_content_type": "application/octet-stream",
            "payload_content_encoding": "base64",
        });
        if let Some((algorithm, bit_length, mode)) = secret.algorithm {
            body["algorithm"] = algorithm.into();
            body["bit_length"] = bit_length.into();
            body["mode"] = mode.into();
        }
        // Once: a retried POST whose first try was stored would leave a second secret no one deletes.
        let response = self.send(&|_| Request::new(reqwest::Method::POST, url.clone(), &what).json(&body).once())?;
        expect_status(&what, &self.http.service, &response, &[201])?;
        let json = response.json(&what, &self.http.service)?;
        let href = json["secret_ref"].as_str().unwrap_or_default();
        let uuid = href.rsplit('/').next().unwrap_or_default();
        if !is_uuid(uuid) {
            return Err(Error::Protocol {
                what,
                service: self.http.service.clone(),
                problem: format!("no secret_ref UUID in the answer: {}", crate::redact::server_message(&response.body)),
            });
        }
        Ok(uuid.to_ascii_lowercase())
    }

    fn payload(&self, id: &str) -> Result<SecretBytes, Error> {
        let url = self.secret_url(id, "/payload")?;
        let what = format!("reading the payload of secret {}", shown(id));
        let response = self.send(&|_| {
            Request::new(reqwest::Method::GET, url.clone(), &what).header("Accept", "application/octet-stream")
        })?;
        // A secret stored as text/plain (`openstack secret store --payload`) may refuse octet-stream: without an
        // Accept header Barbican gives the stored bytes whatever their content type.
        let response = if response.status == reqwest::StatusCode::NOT_ACCEPTABLE {
            self.send(&|_| Request::new(reqwest::Method::GET, url.clone(), &what))?
        } else {
            response
        };
        expect_status(&what, &self.http.service, &response, &[200])?;
        Ok(SecretBytes::from(response.body))
    }

    /// The secret's type as the server names it, as [`crate::redact::server_text`] shows it (at most
    /// [`SECRET_TYPE_MAX`] characters, on one line).
    fn secret_type(&self, id: &str) -> Result<String, Error> {
        Ok(secret_type_of(&self.metadata(id)?))
    }

    fn delete(&self, id: &str) -> Result<(), Error> {
        let url = self.secret_url(id, "")?;
        let what = format!("deleting secret {}", shown(id));
        let response = self.send(&|_| Request::new(reqwest::Method::DELETE, url.clone(), &what))?;
        if response.status == reqwest::StatusCode::NOT_FOUND {
            return Ok(());
        }
        expect_status(&what, &self.http.service, &response, &[204, 200])
    }

    fn add_consumer(&self, id: &str, consumer: &Consumer) -> Result<(), Error> {
        self.consumer_request(reqwest::Method::POST, id, consumer, "registering")
    }

    fn remove_consumer(&self, id: &str, consumer: &Consumer) -> Result<(), Error> {
        self.consumer_request(reqwest::Method::DELETE, id, consumer, "removing")
    }
}

/// Whether two URLs have the same scheme, host and port.
fn same_origin(a: &str, b: &str) -> bool {
    match (reqwest::Url::parse(a), reqwest::Url::parse(b)) {
        (Ok(a), Ok(b)) => a.origin() == b.origin(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    /// A hostile `secret_type` (a forged second line, 5,138 characters) is one escaped line of at most
    /// [`super::SECRET_TYPE_MAX`] characters and its count; Barbican's own types pass unchanged.
    #[test]
    fn a_secret_type_is_one_bounded_line() {
        let forged = format!("passphrase\r\nerror: forged line \u{202e}{}", "x".repeat(5100));
        let shown = super::secret_type_of(&serde_json::json!({ "secret_type": forged }));
        assert!(!shown.contains(['\n', '\r', '\u{202e}']), "{shown}");
        assert!(shown.starts_with("passphrase\\r\\nerror: forged line \\u{202e}x"), "{shown}");
        assert!(shown.ends_with(" more bytes)") && shown.chars().count() <= super::SECRET_TYPE_MAX + 24, "{shown}");
        assert_ne!(shown, "passphrase");
        for plain in ["passphrase", "symmetric", "opaque", "certificate"] {
            assert_eq!(super::secret_type_of(&serde_json::json!({ "secret_type": plain })), plain);
        }
        assert_eq!(super::secret_type_of(&serde_json::json!({})), "opaque");
    }
}
