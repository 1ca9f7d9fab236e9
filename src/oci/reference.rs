//! Image references as skopeo writes them: `oci:DIR[:TAG]`, `oci-archive:FILE[:TAG]` and
//! `docker://HOST[:PORT]/REPO[:TAG|@DIGEST]`.

use crate::oci::Error;
use std::path::PathBuf;

/// Where an image is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ImageReference {
    /// An OCI image layout directory, and the tag (`org.opencontainers.image.ref.name`) of the image in it.
    Layout {
        /// The directory.
        path: PathBuf,
        /// The tag; without one, a layout holding exactly one image names that image.
        tag: Option<String>,
    },
    /// A tar archive of an OCI image layout.
    Archive {
        /// The archive file.
        path: PathBuf,
        /// The tag in it.
        tag: Option<String>,
    },
    /// An image in an OCI distribution registry.
    Registry(RegistryLocation),
}

/// Where an image is in a registry: `HOST[:PORT]/REPO[:TAG|@DIGEST]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegistryLocation {
    /// `HOST[:PORT]`, as written (no default registry: the host is always named).
    pub registry: String,
    /// The repository path, e.g. `team/app`.
    pub repository: String,
    /// The tag, if named.
    pub tag: Option<String>,
    /// The manifest digest, if named (`@sha256:…`).
    pub digest: Option<String>,
}

impl RegistryLocation {
    /// Parses `HOST[:PORT]/REPO[:TAG|@DIGEST]`.
    pub fn parse(text: &str) -> Result<Self, Error> {
        let shown = crate::redact::url(&format!("docker://{text}"));
        let bad =
            |why: &str| Error::Malformed(format!("`{shown}`: {why}; use docker://HOST[:PORT]/REPO[:TAG|@DIGEST]"));
        let (registry, rest) = text.split_once('/').ok_or_else(|| bad("no repository"))?;
        if registry.contains('@') {
            // Never echoed: what comes before the `@` is a user name and, often, a password.
            return Err(bad("credentials do not belong in an image reference (use --creds, --authfile or a \
                docker config)"));
        }
        let host_like = registry.contains(['.', ':']) || registry == "localhost";
        let host_chars = registry.bytes().all(|b| b.is_ascii_alphanumeric() || b".-:[]".contains(&b));
        if !host_chars {
            return Err(bad(&format!("invalid registry host `{registry}`")));
        }
        if registry.is_empty() || !host_like {
            return Err(bad("the registry host must be named (e.g. registry.example.com or localhost:5000)"));
        }
        let (name, digest) = match rest.split_once('@') {
            Some((name, digest)) => (name, Some(digest)),
            None => (rest, None),
        };
        // A `:` after the last `/` starts the tag.
        let (repository, tag) = match name.rsplit_once(':') {
            Some((repository, tag)) if !tag.contains('/') => (repository, Some(tag)),
            _ => (name, None),
        };
        let component_ok = |c: &str| {
            !c.is_empty()
                && c.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b))
                && c.starts_with(|ch: char| ch.is_ascii_alphanumeric())
        };
        if !repository.split('/').all(component_ok) {
            return Err(bad(&format!("invalid repository `{repository}` (lower-case letters, digits, `._-`, `/`)")));
        }
        if let Some(tag) = tag {
            validate_tag(tag)?;
        }
        if let Some(digest) = digest {
            let hex = digest.strip_prefix("sha256:").ok_or_else(|| bad("only sha256 digests are supported"))?;
            if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()) {
                return Err(bad(&format!("invalid digest `{digest}`")));
            }
        }
        Ok(Self {
            registry: registry.to_owned(),
            repository: repository.to_owned(),
            tag: tag.map(str::to_owned),
            digest: digest.map(str::to_owned),
        })
    }
}

impl std::fmt::Display for RegistryLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "docker://{}/{}", self.registry, self.repository)?;
        if let Some(tag) = &self.tag {
            write!(f, ":{tag}")?;
        }
        if let Some(digest) = &self.digest {
            write!(f, "@{digest}")?;
        }
        Ok(())
    }
}

impl ImageReference {
    /// Parses `TRANSPORT:DETAILS`. The path ends at the first `:` after the transport, as in skopeo.
    pub fn parse(text: &str) -> Result<Self, Error> {
        if let Some(location) = text.strip_prefix("docker://") {
            return RegistryLocation::parse(location).map(Self::Registry);
        }
        let (transport, details) = text.split_once(':').ok_or_else(|| {
            Error::Malformed(format!(
                "`{text}` is not an image reference; use oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker://HOST/REPO[:TAG]"
            ))
        })?;
        let (path, tag) = match details.split_once(':') {
            Some((path, tag)) => (path, Some(tag)),
            None => (details, None),
        };
        if path.is_empty() {
            return Err(Error::Malformed(format!("`{text}` names no path")));
        }
        if let Some(tag) = tag {
            validate_tag(tag)?;
        }
        let (path, tag) = (PathBuf::from(path), tag.map(str::to_owned));
        match transport {
            "oci" => Ok(Self::Layout { path, tag }),
            "oci-archive" => Ok(Self::Archive { path, tag }),
            "docker" => Err(Error::Malformed(format!("`{text}`: a registry reference starts with docker://"))),
            other => Err(Error::Malformed(format!(
                "unknown transport `{other}` in `{text}` (supported: oci, oci-archive, docker)"
            ))),
        }
    }

    /// The tag, if any.
    pub fn tag(&self) -> Option<&str> {
        match self {
            Self::Layout { tag, .. } | Self::Archive { tag, .. } => tag.as_deref(),
            Self::Registry(location) => location.tag.as_deref(),
        }
    }
}

impl std::fmt::Display for ImageReference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (transport, path, tag) = match self {
            Self::Layout { path, tag } => ("oci", path, tag),
            Self::Archive { path, tag } => ("oci-archive", path, tag),
            Self::Registry(location) => return location.fmt(f),
        };
        write!(f, "{transport}:{}", path.display())?;
        match tag {
            Some(tag) => write!(f, ":{tag}"),
            None => Ok(()),
        }
    }
}

/// OCI ref names: what the image-spec allows for `org.opencontainers.image.ref.name` in practice (tags).
fn validate_tag(tag: &str) -> Result<(), Error> {
    let valid = !tag.is_empty()
        && tag.len() <= 128
        && tag.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
        && !tag.starts_with(['.', '-']);
    if valid { Ok(()) } else { Err(Error::Malformed(format!("invalid tag `{tag}`"))) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_in_a_reference_are_refused_without_being_echoed() {
        let err = ImageReference::parse("docker://ci:hunter2@registry.example/app:v1").unwrap_err().to_string();
        assert!(!err.contains("hunter2"), "{err}");
        assert!(err.contains("credentials do not belong"), "{err}");
    }

    #[test]
    fn parses_skopeo_references() {
        assert_eq!(
            ImageReference::parse("oci:/tmp/img:v1").unwrap(),
            ImageReference::Layout { path: "/tmp/img".into(), tag: Some("v1".into()) }
        );
        assert_eq!(
            ImageReference::parse("oci-archive:a.tar").unwrap(),
            ImageReference::Archive { path: "a.tar".into(), tag: None }
        );
        assert_eq!(ImageReference::parse("oci:dir:v1").unwrap().to_string(), "oci:dir:v1");
        for bad in ["dir", "oci:", "oci:x:", "oci:x:a/b", "dir:x", "docker:x/y"] {
            assert!(ImageReference::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn parses_registry_references() {
        let digest = format!("sha256:{}", "a".repeat(64));
        let parsed = ImageReference::parse(&format!("docker://localhost:5000/team/app:v1@{digest}")).unwrap();
        assert_eq!(
            parsed,
            ImageReference::Registry(RegistryLocation {
                registry: "localhost:5000".into(),
                repository: "team/app".into(),
                tag: Some("v1".into()),
                digest: Some(digest.clone()),
            })
        );
        assert_eq!(parsed.to_string(), format!("docker://localhost:5000/team/app:v1@{digest}"));
        let plain = ImageReference::parse("docker://registry.example.com/app").unwrap();
        assert_eq!(plain.tag(), None);
        assert_eq!(plain.to_string(), "docker://registry.example.com/app");
        for bad in [
            "docker://app",
            "docker://library/app:v1",
            "docker://localhost:5000/",
            "docker://localhost:5000/App",
            "docker://localhost:5000/app:",
            "docker://localhost:5000/app@sha256:00",
            "docker://localhost:5000/app@md5:00",
            "docker://local host:5000/app",
        ] {
            assert!(ImageReference::parse(bad).is_err(), "{bad}");
        }
    }
}
