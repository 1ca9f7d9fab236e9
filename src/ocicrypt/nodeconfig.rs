//! What a node's container runtime needs in its configuration to decrypt images with cryptadm
//! (`cryptadm image node-config`): containerd's stream processors and CRI key model, or CRI-O's keys directory.
//!
//! The facts behind each line (containerd 1.6 observed, 1.7–2.3 read; docs/image.md and docs/formats.md):
//! - containerd gives the payload (fd 3) only to the processor ids `io.containerd.ocicrypt.decoder.v1.tar.gzip`
//!   and `…v1.tar`, the ids of its built-in `ctd-decoder` defaults; reusing them replaces those defaults, and a
//!   zstd layer has to ride on `…v1.tar` (which returns plain tar, so `stream-decrypt` decompresses it).
//! - `path` must be absolute: the processor inherits containerd's environment and 1.6 refuses a relative lookup.
//! - containerd 2.0.0–2.2.1 never sends the payload from the CRI; 2.2.2 and 2.3 do, only with
//!   `use_local_image_pull = true`. containerd 1.6 silently ignores a v3 file's plugin tables.

use super::Error;

/// The processor id containerd gives the payload for gzip layers.
pub const GZIP_PROCESSOR_ID: &str = "io.containerd.ocicrypt.decoder.v1.tar.gzip";
/// The processor id containerd gives the payload for uncompressed (and, here, zstd) layers.
pub const TAR_PROCESSOR_ID: &str = "io.containerd.ocicrypt.decoder.v1.tar";
/// containerd's default keys directory.
pub const CONTAINERD_KEYS_DIR: &str = "/etc/containerd/ocicrypt/keys";
/// containerd's default key-provider configuration, set in its default processors' environment.
pub const CONTAINERD_KEYPROVIDER_CONFIG: &str = "/etc/containerd/ocicrypt/ocicrypt_keyprovider.conf";
/// CRI-O's default keys directory.
pub const CRIO_KEYS_DIR: &str = "/etc/crio/keys";

/// The media types the gzip processor accepts.
pub const GZIP_ACCEPTS: &[&str] = &[
    "application/vnd.oci.image.layer.v1.tar+gzip+encrypted",
    "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip+encrypted",
];
/// The media types the plain-tar processor accepts (zstd is decompressed by `stream-decrypt`).
pub const TAR_ACCEPTS: &[&str] = &[
    "application/vnd.oci.image.layer.v1.tar+encrypted",
    "application/vnd.oci.image.layer.v1.tar+zstd+encrypted",
    "application/vnd.oci.image.layer.nondistributable.v1.tar+encrypted",
    "application/vnd.oci.image.layer.nondistributable.v1.tar+zstd+encrypted",
];

/// Which runtime, and which configuration layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runtime {
    /// containerd 1.6/1.7: config `version = 2`.
    Containerd1,
    /// containerd 2.x: config `version = 3`.
    Containerd2,
    /// CRI-O: `[crio.runtime] decryption_keys_path`.
    Crio,
}

/// What goes into the configuration.
#[derive(Clone, Debug)]
pub struct NodeConfig {
    /// The runtime.
    pub runtime: Runtime,
    /// The cryptadm binary on the node (absolute).
    pub binary: String,
    /// The keys directory.
    pub keys_dir: String,
    /// The key-provider configuration file given to the processors (containerd only).
    pub keyprovider_config: Option<String>,
    /// More `NAME=VALUE` settings for the processors' environment (containerd only), e.g. the Vault server and
    /// login of the node (`VAULT_ADDR`, `VAULT_CACERT`, a JWT role and token file) or AWS's (`AWS_REGION`, a web
    /// identity's `AWS_ROLE_ARN` and token file). Never a secret: the
    /// configuration file is readable on the node.
    pub env: Vec<String>,
}

/// How a containerd drop-in is installed, and why it holds the stream processors only: containerd merges an
/// imported file section by section, an imported plugin table replacing that plugin's whole section of
/// config.toml (observed with containerd 1.6's `config dump`), while stream processors are replaced one id at a time.
const DROP_IN_NOTE: &str = "\
# A drop-in: save it as /etc/containerd/conf.d/cryptadm.toml, make sure /etc/containerd/config.toml imports it\n\
# (a top-level line before its first [table]: imports = [\"/etc/containerd/conf.d/*.toml\"]), restart containerd.\n\
# Do not append it to config.toml: that gives duplicate keys when config.toml has a version or the same tables.\n\
# It holds only the stream processors: containerd replaces a plugin's whole section of config.toml with an\n\
# imported table of that plugin, so the CRI's settings stay in config.toml.\n";

/// Variables that hold a secret themselves and so never go into a runtime's configuration.
/// (A node reaches AWS KMS with its instance profile or a web identity, never with keys written in a file.)
pub const SECRET_VARIABLES: &[&str] =
    &["VAULT_TOKEN", "BAO_TOKEN", "CRYPTADM_PASSPHRASE", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"];

/// The configuration text, and warnings the operator must read.
#[derive(Clone, Debug)]
pub struct Rendered {
    /// TOML to merge into the runtime's configuration.
    pub text: String,
    /// What this configuration cannot do on some versions.
    pub warnings: Vec<String>,
}

/// Renders the configuration.
pub fn render(config: &NodeConfig) -> Result<Rendered, Error> {
    for (what, path) in [("the cryptadm binary", &config.binary), ("the keys directory", &config.keys_dir)] {
        if !path.starts_with('/') {
            return Err(Error::Malformed(format!(
                "{what} `{path}` must be an absolute path (the runtime does not resolve it against any directory)"
            )));
        }
    }
    for setting in &config.env {
        let name = setting.split_once('=').map(|(name, _)| name).unwrap_or_default();
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(Error::Malformed(format!("processor environment setting `{name}…`: expected NAME=VALUE")));
        }
        if SECRET_VARIABLES.contains(&name) || name.ends_with("_SECRET_ID") || name.ends_with("_PASSWORD") {
            return Err(Error::Malformed(format!(
                "processor environment setting `{name}` holds a secret, which must not go into the runtime's \
                 configuration (readable on the node): give a file instead (a token file, or a JWT/Kubernetes login \
                 with a projected service-account token)"
            )));
        }
        if config.runtime == Runtime::Crio {
            return Err(Error::Malformed(
                "CRI-O decrypts images itself and runs no stream processor: a processor environment applies to \
                 containerd only"
                    .into(),
            ));
        }
    }
    let mut warnings = Vec::new();
    let text = match config.runtime {
        Runtime::Crio => format!(
            "# CRI-O decrypts images itself: give it the keys directory (/etc/crio/crio.conf.d/01-decrypt.conf).\n\
             [crio.runtime]\ndecryption_keys_path = {}\n",
            toml_string(&config.keys_dir)
        ),
        Runtime::Containerd1 => format!(
            "# cryptadm as containerd's image decryption stream processor (containerd 1.6/1.7, config version 2).\n\
             {}\
             # The CRI also needs image_decryption key_model = \"node\", containerd's default: if config.toml sets\n\
             # another, change it there, in its [plugins.\"io.containerd.grpc.v1.cri\".image_decryption] table.\n\
             version = 2\n\n{}",
            DROP_IN_NOTE,
            stream_processors(config)
        ),
        Runtime::Containerd2 => {
            warnings.push(
                "containerd 2.0.0 to 2.2.1 never hand the CRI's decryption payload to a stream processor: \
                 encrypted images cannot be pulled through Kubernetes there; use 2.2.2 or later (or 1.7)"
                    .to_owned(),
            );
            warnings.push(
                "use_local_image_pull = true is required: containerd's transfer service (the default pull path since \
                 2.1) does not decrypt; set it in config.toml (see the comments printed)"
                    .to_owned(),
            );
            format!(
                "# cryptadm as containerd's image decryption stream processor (containerd 2.2.2 or later, config version 3).\n\
                 {}\
                 # The CRI needs, in config.toml's own images table (add the table if it has none):\n\
                 #   [plugins.'io.containerd.cri.v1.images']\n\
                 #     use_local_image_pull = true\n\
                 # and image_decryption key_model = 'node', containerd's default: if config.toml sets another, change it.\n\
                 version = 3\n\n{}",
                DROP_IN_NOTE,
                stream_processors(config)
            )
        }
    };
    Ok(Rendered { text, warnings })
}

fn stream_processors(config: &NodeConfig) -> String {
    let mut out = String::from("[stream_processors]\n");
    let args = toml_array(&["image", "stream-decrypt", "--decryption-keys-path", &config.keys_dir]);
    let mut settings: Vec<String> =
        config.keyprovider_config.iter().map(|path| format!("OCICRYPT_KEYPROVIDER_CONFIG={path}")).collect();
    settings.extend(config.env.iter().cloned());
    let env = if settings.is_empty() {
        String::new()
    } else {
        format!("    env = {}\n", toml_array(&settings.iter().map(String::as_str).collect::<Vec<_>>()))
    };
    for (id, accepts, returns) in [
        (GZIP_PROCESSOR_ID, GZIP_ACCEPTS, "application/vnd.oci.image.layer.v1.tar+gzip"),
        (TAR_PROCESSOR_ID, TAR_ACCEPTS, "application/vnd.oci.image.layer.v1.tar"),
    ] {
        out.push_str(&format!(
            "  [stream_processors.\"{id}\"]\n    accepts = {}\n    returns = \"{returns}\"\n    path = {}\n    args = {args}\n{env}",
            toml_array(accepts),
            toml_string(&config.binary),
        ));
    }
    out
}

/// A TOML basic string (JSON's escapes are valid TOML escapes for these characters).
fn toml_string(text: &str) -> String {
    serde_json::to_string(text).expect("strings serialize")
}

fn toml_array(items: &[&str]) -> String {
    format!("[{}]", items.iter().map(|i| toml_string(i)).collect::<Vec<_>>().join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(runtime: Runtime) -> NodeConfig {
        NodeConfig {
            runtime,
            binary: "/usr/local/bin/cryptadm".into(),
            keys_dir: CONTAINERD_KEYS_DIR.into(),
            keyprovider_config: Some(CONTAINERD_KEYPROVIDER_CONFIG.into()),
            env: Vec::new(),
        }
    }

    #[test]
    fn processor_environment() {
        let mut vault = config(Runtime::Containerd1);
        vault.env = vec!["VAULT_ADDR=https://vault:8200".into(), "VAULT_CACERT=/etc/vault/ca.pem".into()];
        let text = render(&vault).unwrap().text;
        assert_eq!(
            text.matches(r#"env = ["OCICRYPT_KEYPROVIDER_CONFIG=/etc/containerd/ocicrypt/ocicrypt_keyprovider.conf", "VAULT_ADDR=https://vault:8200", "VAULT_CACERT=/etc/vault/ca.pem"]"#).count(),
            2,
            "{text}"
        );
        for bad in ["VAULT_TOKEN=s.x", "VAULT_APPROLE_SECRET_ID=x", "AWS_SECRET_ACCESS_KEY=x", "=x", "NOEQUALS"] {
            vault.env = vec![bad.into()];
            assert!(render(&vault).is_err(), "{bad}");
        }
    }

    #[test]
    fn containerd_1_layout() {
        let rendered = render(&config(Runtime::Containerd1)).unwrap();
        assert!(rendered.warnings.is_empty());
        let text = rendered.text;
        assert!(text.contains("version = 2\n"));
        assert!(!text.lines().any(|l| l.starts_with("[plugins")), "a drop-in holds no plugin table: {text}");
        assert!(text.contains("imports = [\"/etc/containerd/conf.d/*.toml\"]"));
        assert!(text.contains("[stream_processors.\"io.containerd.ocicrypt.decoder.v1.tar.gzip\"]"));
        assert!(text.contains("[stream_processors.\"io.containerd.ocicrypt.decoder.v1.tar\"]"));
        assert!(text.contains(
            "args = [\"image\", \"stream-decrypt\", \"--decryption-keys-path\", \"/etc/containerd/ocicrypt/keys\"]"
        ));
        // Every encrypted media type is accepted by exactly one processor.
        for media in GZIP_ACCEPTS.iter().chain(TAR_ACCEPTS) {
            assert_eq!(text.matches(&format!("\"{media}\"")).count(), 1, "{media}");
        }
    }

    #[test]
    fn containerd_2_layout_warns() {
        let rendered = render(&config(Runtime::Containerd2)).unwrap();
        assert!(rendered.text.contains("version = 3\n"));
        assert!(rendered.text.contains("#     use_local_image_pull = true\n"));
        assert!(!rendered.text.lines().any(|l| l.starts_with("[plugins")), "{}", rendered.text);
        assert_eq!(rendered.warnings.len(), 2);
    }

    #[test]
    fn crio_and_relative_paths() {
        let mut crio = config(Runtime::Crio);
        crio.keys_dir = CRIO_KEYS_DIR.into();
        assert_eq!(
            render(&crio).unwrap().text.lines().skip(1).collect::<Vec<_>>(),
            ["[crio.runtime]", "decryption_keys_path = \"/etc/crio/keys\""]
        );
        let mut relative = config(Runtime::Containerd1);
        relative.binary = "cryptadm".into();
        assert!(render(&relative).unwrap_err().to_string().contains("absolute"));
    }
}
