//! Glance v2: create an image record, stream its bytes, show it, delete it.
//!
//! Glance (Zed) takes extra properties as JSON strings only (a number is a 400), keeps an image `queued` until
//! its data arrives with `PUT /v2/images/{id}/file` (`application/octet-stream`, chunked), and leaves it
//! `queued` or `saving` for ever when an upload never finishes: whoever created it deletes it.

use crate::kms::Error;
use crate::kms::http::{Http, Request};
use crate::kms::keystone::{Session, expect_status};
use crate::kms::reference::is_uuid;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// The service type of Glance in the catalog.
pub const SERVICE_TYPE: &str = "image";

/// Longest an upload may take.
pub const UPLOAD_TIMEOUT: Duration = Duration::from_secs(24 * 3600);

/// A new image's record.
#[derive(Debug)]
pub struct NewImage<'a> {
    /// The image's name.
    pub name: &'a str,
    /// `raw`, `qcow2`, …
    pub disk_format: &'a str,
    /// `bare`.
    pub container_format: &'a str,
    /// Extra properties (`os_encrypt_key_id`, …): strings only, as Glance requires.
    pub properties: &'a BTreeMap<String, String>,
}

/// A Glance client.
pub struct Glance {
    session: Arc<Session>,
    http: Http,
    endpoint: String,
}

impl Glance {
    /// Glance of the session's cloud.
    pub fn new(session: Arc<Session>) -> Result<Self, Error> {
        let endpoint = session.endpoint(SERVICE_TYPE, "Glance")?;
        let http = Http::new("Glance", &endpoint, session.cloud().http.clone())?;
        let endpoint = endpoint.trim_end_matches('/').trim_end_matches("/v2").to_owned();
        Ok(Self { session, http, endpoint })
    }

    fn url(&self, path: &str) -> Result<reqwest::Url, Error> {
        reqwest::Url::parse(&format!("{}/v2/{path}", self.endpoint))
            .map_err(|e| Error::Config(format!("Glance endpoint: {e}")))
    }

    /// The URL of image `id` (plus `tail`): ids are UUIDs, checked like secret references before they become part
    /// of a path (an id like `../../x` from an untrusted server would send the request elsewhere on it).
    fn image_url(&self, id: &str, tail: &str) -> Result<reqwest::Url, Error> {
        if !is_uuid(id) {
            return Err(Error::Protocol {
                what: "naming an image".into(),
                service: self.http.service.clone(),
                problem: format!("the image id `{}` is not a UUID", crate::redact::server_message(id.as_bytes())),
            });
        }
        self.url(&format!("images/{id}{tail}"))
    }

    /// Checks, before anything is created, that Glance answers and lets this user list images.
    pub fn check(&self) -> Result<(), Error> {
        let url = self.url("images?limit=1")?;
        let what = "listing images (checking Glance before anything is created)";
        let response = self.session.send(&self.http, &|token| {
            Request::new(reqwest::Method::GET, url.clone(), what).header("X-Auth-Token", token)
        })?;
        expect_status(what, &self.http.service, &response, &[200])
    }

    /// Creates the image record (`queued`); returns its id.
    pub fn create(&self, image: &NewImage<'_>) -> Result<String, Error> {
        let url = self.url("images")?;
        let what = format!("creating image `{}`", image.name);
        let mut body = serde_json::json!({
            "name": image.name,
            "disk_format": image.disk_format,
            "container_format": image.container_format,
        });
        for (key, value) in image.properties {
            body[key] = value.as_str().into();
        }
        let response = self.session.send(&self.http, &|token| {
            // Once: a retried POST whose first try was stored would leave a second, queued image behind.
            Request::new(reqwest::Method::POST, url.clone(), &what).header("X-Auth-Token", token).json(&body).once()
        })?;
        expect_status(&what, &self.http.service, &response, &[201])?;
        let json = response.json(&what, &self.http.service)?;
        match json["id"].as_str() {
            Some(id) if is_uuid(id) => Ok(id.to_owned()),
            Some(id) => Err(Error::Protocol {
                what,
                service: self.http.service.clone(),
                problem: format!(
                    "the new image's id `{}` is not a UUID (not used in any path; nothing was deleted)",
                    crate::redact::server_message(id.as_bytes())
                ),
            }),
            None => Err(Error::Protocol {
                what,
                service: self.http.service.clone(),
                problem: "no image id in the answer".into(),
            }),
        }
    }

    /// Streams the image's data from `data` (`size` bytes, for Content-Length-less chunked upload checks).
    pub fn upload(&self, id: &str, data: Box<dyn std::io::Read + Send>) -> Result<(), Error> {
        let url = self.image_url(id, "/file")?;
        let what = format!("uploading the data of image `{id}`");
        let token = self.session.token()?;
        let request = Request::new(reqwest::Method::PUT, url, &what)
            .header("X-Auth-Token", token)
            .header("Content-Type", "application/octet-stream");
        let response = self.http.send_reader(&request, data, UPLOAD_TIMEOUT)?;
        if response.status == reqwest::StatusCode::PAYLOAD_TOO_LARGE {
            return Err(Error::Protocol {
                what,
                service: self.http.service.clone(),
                problem: format!(
                    "HTTP 413: Glance refused the data, the image is larger than the cloud's image size cap or the \
                     project's storage quota allows ({})",
                    crate::kms::keystone::error_message(&response)
                ),
            });
        }
        expect_status(&what, &self.http.service, &response, &[204, 200, 201])
    }

    /// The images this user sees whose property `property` is `value` (Glance filters on any image property;
    /// at most 1000, Glance's default page limit cap).
    pub fn images_with(&self, property: &str, value: &str) -> Result<Vec<serde_json::Value>, Error> {
        let mut url = self.url("images")?;
        url.query_pairs_mut().append_pair(property, value).append_pair("limit", "1000");
        let what = format!("listing the images whose {property} is {value}");
        let response = self.session.send(&self.http, &|token| {
            Request::new(reqwest::Method::GET, url.clone(), &what).header("X-Auth-Token", token)
        })?;
        expect_status(&what, &self.http.service, &response, &[200])?;
        let json = response.json(&what, &self.http.service)?;
        Ok(json["images"].as_array().cloned().unwrap_or_default())
    }

    /// The image's record; [`Error::NotFound`] when it does not exist.
    pub fn show(&self, id: &str) -> Result<serde_json::Value, Error> {
        let url = self.image_url(id, "")?;
        let what = format!("reading image `{id}`");
        let response = self.session.send(&self.http, &|token| {
            Request::new(reqwest::Method::GET, url.clone(), &what).header("X-Auth-Token", token)
        })?;
        expect_status(&what, &self.http.service, &response, &[200])?;
        response.json(&what, &self.http.service)
    }

    /// Deletes the image; one that is already gone is success.
    pub fn delete(&self, id: &str) -> Result<(), Error> {
        let url = self.image_url(id, "")?;
        let what = format!("deleting image `{id}`");
        let response = self.session.send(&self.http, &|token| {
            Request::new(reqwest::Method::DELETE, url.clone(), &what).header("X-Auth-Token", token)
        })?;
        if response.status == reqwest::StatusCode::NOT_FOUND {
            return Ok(());
        }
        expect_status(&what, &self.http.service, &response, &[204, 200])
    }
}
