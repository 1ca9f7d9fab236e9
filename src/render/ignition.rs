//! Ignition configs (spec 3.3.0): files and systemd units, as JSON.
//!
//! 3.3.0 is the newest spec that Ignition 2.14 (Debian 12, and the 2.11–2.14 releases generally) accepts as
//! stable: `ignition-validate` 2.14 rejects 3.4.0 ("unsupported config version"), which became stable only in
//! 2.15, and experimental specs are for development only. Every later Ignition reads 3.3.0 too.

use super::RenderError;
use serde::Serialize;

/// The config spec version written.
pub const SPEC_VERSION: &str = "3.3.0";

/// A file Ignition writes, its contents gzip-compressed.
#[derive(Debug, Clone)]
pub struct File<'a> {
    /// Absolute path on the machine.
    pub path: &'a str,
    /// Permission bits (Ignition takes them as a decimal JSON integer: 0o600 is 384).
    pub mode: u32,
    /// Standard base64 of the gzip-compressed contents.
    pub gzip_base64: &'a str,
}

/// A systemd unit Ignition writes and, when `enabled`, presets to enabled.
#[derive(Debug, Clone)]
pub struct Unit<'a> {
    /// Unit name with its type suffix (`x.service`).
    pub name: &'a str,
    /// Whether Ignition enables it (a preset line; the unit needs an `[Install]` section).
    pub enabled: bool,
    /// The unit file.
    pub contents: &'a str,
}

#[derive(Serialize)]
struct Config<'a> {
    ignition: Ignition,
    storage: Storage<'a>,
    systemd: Systemd<'a>,
}

#[derive(Serialize)]
struct Ignition {
    version: &'static str,
}

#[derive(Serialize)]
struct Storage<'a> {
    files: Vec<WireFile<'a>>,
}

#[derive(Serialize)]
struct WireFile<'a> {
    path: &'a str,
    /// Replace a file already there (allowed only with a source).
    overwrite: bool,
    mode: u32,
    contents: Contents,
}

#[derive(Serialize)]
struct Contents {
    compression: &'static str,
    source: String,
}

#[derive(Serialize)]
struct Systemd<'a> {
    units: Vec<WireUnit<'a>>,
}

#[derive(Serialize)]
struct WireUnit<'a> {
    name: &'a str,
    enabled: bool,
    contents: &'a str,
}

/// Renders a config that writes `files` (overwriting, as a re-provisioned machine should get the new ones) and
/// `units`, pretty-printed and ending with a newline.
pub fn config(files: &[File<'_>], units: &[Unit<'_>]) -> Result<String, RenderError> {
    let config = Config {
        ignition: Ignition { version: SPEC_VERSION },
        storage: Storage {
            files: files
                .iter()
                .map(|f| WireFile {
                    path: f.path,
                    overwrite: true,
                    mode: f.mode,
                    // RFC 2397 with an empty media type; Ignition decodes it, then gunzips.
                    contents: Contents { compression: "gzip", source: format!("data:;base64,{}", f.gzip_base64) },
                })
                .collect(),
        },
        systemd: Systemd {
            units: units.iter().map(|u| WireUnit { name: u.name, enabled: u.enabled, contents: u.contents }).collect(),
        },
    };
    let mut out = serde_json::to_string_pretty(&config).map_err(|e| RenderError(e.to_string()))?;
    out.push('\n');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape_and_integer_mode() {
        let json = config(
            &[File { path: "/etc/x", mode: 0o600, gzip_base64: "H4sI" }],
            &[Unit { name: "x.service", enabled: true, contents: "[Unit]\n" }],
        )
        .unwrap();
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(value["ignition"]["version"], "3.3.0");
        assert_eq!(value["storage"]["files"][0]["mode"], 384);
        assert_eq!(value["storage"]["files"][0]["contents"]["source"], "data:;base64,H4sI");
        assert_eq!(value["systemd"]["units"][0]["contents"], "[Unit]\n");
        assert!(json.ends_with("}\n"));
    }
}
