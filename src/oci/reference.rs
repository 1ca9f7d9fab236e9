//! Image references as skopeo writes them: `oci:DIR[:TAG]` and `oci-archive:FILE[:TAG]`.

use crate::ocicrypt::Error;
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
}

impl ImageReference {
    /// Parses `TRANSPORT:DETAILS`. The path ends at the first `:` after the transport, as in skopeo.
    pub fn parse(text: &str) -> Result<Self, Error> {
        let (transport, details) = text.split_once(':').ok_or_else(|| {
            Error::Malformed(format!("`{text}` is not an image reference; use oci:DIR[:TAG] or oci-archive:FILE[:TAG]"))
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
            "docker" => Err(Error::Malformed(format!(
                "`{text}`: registries (docker://) are not supported yet; copy the image to an oci: layout first"
            ))),
            other => {
                Err(Error::Malformed(format!("unknown transport `{other}` in `{text}` (supported: oci, oci-archive)")))
            }
        }
    }

    /// The tag, if any.
    pub fn tag(&self) -> Option<&str> {
        match self {
            Self::Layout { tag, .. } | Self::Archive { tag, .. } => tag.as_deref(),
        }
    }
}

impl std::fmt::Display for ImageReference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (transport, path, tag) = match self {
            Self::Layout { path, tag } => ("oci", path, tag),
            Self::Archive { path, tag } => ("oci-archive", path, tag),
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
        for bad in ["dir", "oci:", "oci:x:", "oci:x:a/b", "docker://x/y", "dir:x"] {
            assert!(ImageReference::parse(bad).is_err(), "{bad}");
        }
    }
}
