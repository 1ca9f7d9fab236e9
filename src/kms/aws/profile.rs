//! The AWS CLI's shared configuration files (`~/.aws/credentials`, `~/.aws/config`): INI sections of `key = value`
//! lines, read as the SDKs do. In the config file a profile's section is `[profile NAME]` (`[default]` for the
//! default one); in the credentials file it is `[NAME]`. Other sections (`[sso-session …]`, `[services …]`) and
//! nested blocks (a key with an empty value followed by indented lines, e.g. `s3 =`) are skipped. Keys are compared
//! in lower case; for the same key, the credentials file wins over the config file.

use std::collections::BTreeMap;
use zeroize::Zeroize as _;

/// The settings of the profiles of one or two files, by profile name. Values are wiped on drop (they include
/// secret access keys).
#[derive(Default)]
pub struct Profiles {
    profiles: BTreeMap<String, BTreeMap<String, String>>,
}

impl std::fmt::Debug for Profiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.profiles.keys()).finish()
    }
}

impl Drop for Profiles {
    fn drop(&mut self) {
        for settings in self.profiles.values_mut() {
            for value in settings.values_mut() {
                value.zeroize();
            }
        }
    }
}

/// Which file a text is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// `~/.aws/config`: `[profile NAME]`, `[default]`.
    Config,
    /// `~/.aws/credentials`: `[NAME]`.
    Credentials,
}

impl Profiles {
    /// Adds the profiles of `text`; a key already set (by an earlier, higher-priority file) is kept.
    pub fn add(&mut self, text: &str, kind: FileKind) {
        let mut current: Option<String> = None;
        let mut nested = false;
        for line in text.lines() {
            let indented = line.starts_with([' ', '\t']);
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
                continue;
            }
            if let Some(header) = line.strip_prefix('[') {
                let name = header.split(']').next().unwrap_or_default().trim();
                current = section_profile(name, kind);
                nested = false;
                continue;
            }
            if indented && nested {
                continue;
            }
            let Some(profile) = &current else { continue };
            let Some((key, value)) = line.split_once('=') else { continue };
            let key = key.trim().to_ascii_lowercase();
            let value = strip_comment(value.trim());
            nested = value.is_empty();
            if nested {
                continue;
            }
            self.profiles.entry(profile.clone()).or_default().entry(key).or_insert_with(|| value.to_owned());
        }
    }

    /// Whether `profile` has a section in any file read.
    pub fn has(&self, profile: &str) -> bool {
        self.profiles.contains_key(profile)
    }

    /// `key` of `profile`.
    pub fn get(&self, profile: &str, key: &str) -> Option<&str> {
        self.profiles.get(profile)?.get(key).map(String::as_str).filter(|v| !v.is_empty())
    }
}

fn section_profile(name: &str, kind: FileKind) -> Option<String> {
    match kind {
        FileKind::Credentials => Some(name.to_owned()),
        FileKind::Config if name == "default" => Some(name.to_owned()),
        FileKind::Config => {
            name.strip_prefix("profile").filter(|r| r.starts_with([' ', '\t'])).map(|r| r.trim().to_owned())
        }
    }
}

/// A value without a trailing ` # comment` or ` ; comment` (a `#` inside a value, as in a secret, stays).
fn strip_comment(value: &str) -> &str {
    for marker in [" #", "\t#", " ;", "\t;"] {
        if let Some(at) = value.find(marker) {
            return value[..at].trim_end();
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_read_as_the_cli_reads_them() {
        let mut profiles = Profiles::default();
        profiles.add(
            "[default]\naws_access_key_id = AKID1\naws_secret_access_key=se#cret ; a comment\n\n[ci]\nAWS_ACCESS_KEY_ID = AKID2\n",
            FileKind::Credentials,
        );
        profiles.add(
            "# comment\n[default]\nregion = eu-west-1\naws_access_key_id = IGNORED\n[profile ci]\nregion=us-east-2\ns3 =\n  addressing_style = path\nrole_arn = arn:aws:iam::1:role/x\n[sso-session s]\nsso_region = x\n[ci]\nregion = not-a-profile-section\n",
            FileKind::Config,
        );
        assert_eq!(profiles.get("default", "aws_access_key_id"), Some("AKID1"));
        assert_eq!(profiles.get("default", "aws_secret_access_key"), Some("se#cret"));
        assert_eq!(profiles.get("default", "region"), Some("eu-west-1"));
        assert_eq!(profiles.get("ci", "aws_access_key_id"), Some("AKID2"));
        assert_eq!(profiles.get("ci", "region"), Some("us-east-2"));
        assert_eq!(profiles.get("ci", "addressing_style"), None);
        assert_eq!(profiles.get("ci", "role_arn"), Some("arn:aws:iam::1:role/x"));
        assert!(!profiles.has("s") && !profiles.has("sso-session s") && !profiles.has("other"));
    }
}
