//! The DaemonSet that installs a node-model Secret's keys into the container runtime's keys directory.
//!
//! containerd's ctd-decoder and CRI-O walk the keys directory recursively, abort on any symlink and fail on any
//! file that is not a key (docs/formats.md). A Secret volume is made of symlinks, so it can never be the keys directory:
//! the keys are copied as regular files. Each file is written into a staging directory that is outside the walked
//! tree but on the same filesystem (both under one hostPath), made 0600, then renamed into place, so a runtime
//! reading the directory sees either the old file or the new one, never a partial or temporary file.
//!
//! One long-running container instead of an initContainer (plus a pause container): an initContainer copies once
//! when the pod starts, so a rotated key or a key removed from the Secret would reach the nodes only after a
//! `kubectl rollout restart`. The loop picks up the kubelet's refresh of the Secret volume (about a minute) on its
//! next pass and deletes files that left the Secret. The script is POSIX sh run by busybox.

use super::{Error, metadata};
use serde_json::{Value, json};

/// The container runtime whose keys directory the DaemonSet writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runtime {
    /// containerd with imgcrypt's ctd-decoder: `/etc/containerd/ocicrypt/keys`.
    Containerd,
    /// CRI-O: `decryption_keys_path = "/etc/crio/keys"`.
    Crio,
}

impl Runtime {
    /// The host directory that holds both the keys directory (`keys/`) and the staging directory.
    pub fn host_dir(self) -> &'static str {
        match self {
            Runtime::Containerd => "/etc/containerd/ocicrypt",
            Runtime::Crio => "/etc/crio",
        }
    }
}

/// The image that runs [`SCRIPT`]: busybox has every tool it uses (sh, cat, cmp, chmod, mv, rm, mkdir, sleep).
pub const IMAGE: &str = "docker.io/library/busybox:1.36.1";
/// Seconds between two passes.
pub const INTERVAL_SECONDS: u32 = 60;
/// The `app.kubernetes.io/name` of the DaemonSet and its pods.
const APP_NAME: &str = "cryptadm-key-installer";
/// Longest Secret name with a DaemonSet: `NAME-installer` labels the pods, and label values have at most 63
/// characters.
pub const MAX_NAME_WITH_DAEMONSET: usize = 63 - "-installer".len();

/// Where the Secret volume and the host directory are mounted in the container.
const SECRET_MOUNT: &str = "/run/cryptadm/secret";
const HOST_MOUNT: &str = "/host";

/// The installer. Inputs come from the environment: SECRET_DIR (the Secret volume), KEYS_DIR (this Secret's
/// directory inside the runtime's keys directory), STAGING_DIR (outside the keys directory, same filesystem),
/// INTERVAL. The globs `*` and `.[!.]*` list every data key (they may start with one dot, never two) and skip the
/// volume's `..data` links; an unmatched glob stays literal and is skipped by the tests.
pub const SCRIPT: &str = r#"set -eu
umask 077
trap 'exit 0' TERM INT
sync_keys() {
  mkdir -p "$KEYS_DIR" "$STAGING_DIR"
  rm -rf "$STAGING_DIR"/* "$STAGING_DIR"/.[!.]*
  # Remove what is not a regular file backed by a key of the Secret: symlinks, directories, old keys.
  for dst in "$KEYS_DIR"/* "$KEYS_DIR"/.[!.]*; do
    [ -e "$dst" ] || [ -L "$dst" ] || continue
    name=${dst##*/}
    if [ -L "$dst" ] || [ ! -f "$dst" ] || [ ! -f "$SECRET_DIR/$name" ]; then
      rm -rf "$dst"
    fi
  done
  # Copy new and changed keys: write in the staging directory, make it 0600, rename it into place.
  for src in "$SECRET_DIR"/* "$SECRET_DIR"/.[!.]*; do
    [ -f "$src" ] || continue
    name=${src##*/}
    if [ -f "$KEYS_DIR/$name" ] && cmp -s "$src" "$KEYS_DIR/$name"; then
      continue
    fi
    cat "$src" > "$STAGING_DIR/$name"
    chmod 600 "$STAGING_DIR/$name"
    mv -f "$STAGING_DIR/$name" "$KEYS_DIR/$name"
  done
}
while :; do
  sync_keys
  sleep "$INTERVAL" &
  wait $!
done
"#;

/// The DaemonSet for the Secret `secret`.
pub fn daemonset(secret: &str, namespace: Option<&str>, runtime: Runtime) -> Result<Value, Error> {
    let instance = format!("{secret}-installer");
    if secret.len() > MAX_NAME_WITH_DAEMONSET {
        return Err(Error::InvalidName {
            what: "NAME",
            value: secret.to_owned(),
            problem: format!(
                "with a DaemonSet it may have at most {MAX_NAME_WITH_DAEMONSET} characters (`{instance}` labels \
                 the installer's pods, and label values have at most 63)"
            ),
        });
    }
    let selector = json!({"app.kubernetes.io/instance": instance, "app.kubernetes.io/name": APP_NAME});
    let extra = [("app.kubernetes.io/instance", instance.as_str()), ("app.kubernetes.io/name", APP_NAME)];
    let env = [
        ("SECRET_DIR", SECRET_MOUNT.to_owned()),
        ("KEYS_DIR", format!("{HOST_MOUNT}/keys/{secret}")),
        ("STAGING_DIR", format!("{HOST_MOUNT}/.cryptadm-staging/{secret}")),
        ("INTERVAL", INTERVAL_SECONDS.to_string()),
    ];
    let env: Vec<Value> = env.iter().map(|(name, value)| json!({"name": name, "value": value})).collect();
    Ok(json!({
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": metadata(&instance, namespace, &extra),
        "spec": {
            "selector": {"matchLabels": selector},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {
                "metadata": {"labels": metadata(&instance, None, &extra)["labels"]},
                "spec": {
                    // The kubelet delivers the Secret volume: the pod needs no API access.
                    "automountServiceAccountToken": false,
                    "nodeSelector": {"kubernetes.io/os": "linux"},
                    // Every node pulls images, control-plane and tainted ones included.
                    "tolerations": [{"operator": "Exists"}],
                    "terminationGracePeriodSeconds": 5,
                    "containers": [{
                        "name": "install-keys",
                        "image": IMAGE,
                        "command": ["/bin/sh", "-c", SCRIPT],
                        "env": env,
                        "resources": {"requests": {"cpu": "5m", "memory": "8Mi"}, "limits": {"memory": "32Mi"}},
                        // Root only to write the root-owned runtime directory; no capability is needed for that.
                        "securityContext": {
                            "runAsUser": 0,
                            "allowPrivilegeEscalation": false,
                            "readOnlyRootFilesystem": true,
                            "capabilities": {"drop": ["ALL"]},
                        },
                        "volumeMounts": [
                            {"name": "secret", "mountPath": SECRET_MOUNT, "readOnly": true},
                            {"name": "host", "mountPath": HOST_MOUNT},
                        ],
                    }],
                    "volumes": [
                        {"name": "secret", "secret": {"secretName": secret, "defaultMode": 0o400}},
                        {"name": "host", "hostPath": {"path": runtime.host_dir(), "type": "DirectoryOrCreate"}},
                    ],
                },
            },
        },
    }))
}
