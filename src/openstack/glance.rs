//! Glance v2: create an image record, stream its bytes, show it, delete it.
//!
//! Glance (Zed) takes extra properties as JSON strings only (a number is a 400), keeps an image `queued` until
//! its data arrives with `PUT /v2/images/{id}/file` (`application/octet-stream`, chunked), and leaves it
//! `queued` or `saving` for ever when an upload never finishes: whoever created it deletes it.

use crate::kms::Error;
use crate::kms::http::{Http, Request};
use crate::kms::keystone::{Session, expect_status};
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
        json["id"].as_str().map(str::to_owned).ok_or_else(|| Error::Protocol {
            what,
            service: self.http.service.clone(),
            problem: "no image id in the answer".into(),
        })
    }

    /// Streams the image's data from `data` (`size` bytes, for Content-Length-less chunked upload checks).
    pub fn upload(&self, id: &str, data: Box<dyn std::io::Read + Send>) -> Result<(), Error> {
        let url = self.url(&format!("images/{id}/file"))?;
        let what = format!("uploading the data of image `{id}`");
        let token = self.session.token()?;
        let request = Request::new(reqwest::Method::PUT, url, &what)
            .header("X-Auth-Token", token)
            .header("Content-Type", "application/octet-stream");
        let response = self.http.send_reader(&request, data, UPLOAD_TIMEOUT)?;
        expect_status(&what, &self.http.service, &response, &[204, 200, 201])
    }

    /// The image's record; [`Error::NotFound`] when it does not exist.
    pub fn show(&self, id: &str) -> Result<serde_json::Value, Error> {
        let url = self.url(&format!("images/{id}"))?;
        let what = format!("reading image `{id}`");
        let response = self.session.send(&self.http, &|token| {
            Request::new(reqwest::Method::GET, url.clone(), &what).header("X-Auth-Token", token)
        })?;
        expect_status(&what, &self.http.service, &response, &[200])?;
        response.json(&what, &self.http.service)
    }

    /// Deletes the image; one that is already gone is success.
    pub fn delete(&self, id: &str) -> Result<(), Error> {
        let url = self.url(&format!("images/{id}"))?;
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
