//! The Ignition counterpart of the cloud-init userdata: a config that writes the sealed stream and a oneshot
//! systemd unit that runs `cryptadm bootstrap open` before the units that consume the configuration.
//!
//! Ignition runs in the initramfs, before the real root's `/run` is mounted: what it wrote under `/run` would be
//! hidden by the tmpfs (Ignition's operator notes), so the sealed stream goes to `/etc/machineadm/` (it is
//! ciphertext; 0600 all the same). The unit opens it into `/run/machineadm/machine_config.yaml`, which systemd
//! creates (`RuntimeDirectory=machineadm`, mode 0700, kept after the unit ends), so the plaintext stays in
//! memory as with cloud-init.
//!
//! It opens once per machine, as cloud-init's `runcmd` runs once per instance and Ignition itself runs only on the
//! first boot: the bootstrap configuration is consumed once (`kubeadm join`), its one-time sources do not outlive
//! the first boot (`capa-secrets-manager` deletes its chunks, a bootstrap token expires, a machine's key-manager
//! role may be revoked once it joined), so opening again on a later boot would put an expired secret back into
//! `/run` or fail the unit on every reboot. A successful open leaves [`OPENED_STAMP_PATH`]; a failed one does not,
//! so the next boot tries again.

use super::Error;
use super::cloudinit::{CONFIG_PATH, gzip_base64, validate_cryptadm_path};
use crate::render::ignition::{File, Unit, config};

/// Where Ignition writes the sealed stream.
pub const IGNITION_STREAM_PATH: &str = "/etc/machineadm/machineadm_config.yaml";
/// The unit that opens it.
pub const UNIT_NAME: &str = "cryptadm-bootstrap-open.service";

/// Left by the unit's first successful open; while it exists the unit is skipped (`ConditionPathExists=!`). In
/// `/var/lib` (the unit's `StateDirectory=`), so that it outlives the reboot that empties `/run`.
pub const OPENED_STAMP_PATH: &str = "/var/lib/machineadm/bootstrap-opened";

/// The optional environment file of the unit: the machine's OpenBao/Vault settings for the `vault-transit`
/// provider (`VAULT_ADDR`, `VAULT_CACERT`, `CRYPTADM_VAULT_AUTH=jwt`, `CRYPTADM_VAULT_ROLE`,
/// `CRYPTADM_VAULT_JWT_FILE`, …), which the machine image or another Ignition file provides.
pub const VAULT_ENV_FILE: &str = "/etc/cryptadm/vault.env";
/// The optional environment file of the unit for the `kmip` provider: `CRYPTADM_KMIP_SERVER`,
/// `CRYPTADM_KMIP_CACERT`, `CRYPTADM_KMIP_CLIENT_CERT`, `CRYPTADM_KMIP_CLIENT_KEY` (docs/kmip.md).
pub const KMIP_ENV_FILE: &str = "/etc/cryptadm/kmip.env";
/// The optional environment file of the unit for the `aws-kms` provider and the AWS RemoteConfig providers: what
/// an instance profile does not give, such as a KMS VPC endpoint (`AWS_ENDPOINT_URL_KMS`) or `AWS_CA_BUNDLE`
/// (docs/aws.md). On EC2 nothing is needed: IMDSv2 gives the credentials and the region.
pub const AWS_ENV_FILE: &str = "/etc/cryptadm/aws.env";

/// The unit file for a cryptadm at `cryptadm_path`.
///
/// - `Type=oneshot` + `RemainAfterExit=yes`: units ordered after it wait for it to end, and a later start by a
///   dependency does not run it again in the same boot.
/// - `Wants=`/`After=network-online.target`: `https` and cloud plugins fetch RemoteConfig and passphrases.
/// - `Before=kubeadm.service kubelet.service`: ordering only (systemd ignores units that do not exist); a consumer
///   that must not start without the configuration adds `Requires=` and `After=` on this unit itself.
/// - `ConditionPathExists=` the stream: nothing to do (and no failure) on a machine that got none.
/// - `ConditionPathExists=!`[`OPENED_STAMP_PATH`], which `ExecStartPost=` writes once `open` succeeded: once
///   per machine (see the module's notes); a skipped unit counts as started for the units that require it.
/// - `EnvironmentFile=-`[`VAULT_ENV_FILE`], [`KMIP_ENV_FILE`], [`AWS_ENV_FILE`]: the Vault, KMIP and AWS settings
///   when the machine has them (optional).
pub fn unit(cryptadm_path: &str) -> Result<String, Error> {
    validate_cryptadm_path(cryptadm_path)?;
    Ok(format!(
        "[Unit]
Description=Open the machineadm bootstrap configuration (cryptadm bootstrap open)
ConditionPathExists={IGNITION_STREAM_PATH}
ConditionPathExists=!{OPENED_STAMP_PATH}
Wants=network-online.target
After=network-online.target
Before=kubeadm.service kubelet.service

[Service]
Type=oneshot
RemainAfterExit=yes
RuntimeDirectory=machineadm
RuntimeDirectoryMode=0700
RuntimeDirectoryPreserve=yes
StateDirectory=machineadm
StateDirectoryMode=0700
EnvironmentFile=-{VAULT_ENV_FILE}
EnvironmentFile=-{KMIP_ENV_FILE}
EnvironmentFile=-{AWS_ENV_FILE}
ExecStart={cryptadm_path} bootstrap open --in {IGNITION_STREAM_PATH} --out {CONFIG_PATH}
ExecStartPost=/usr/bin/touch {OPENED_STAMP_PATH}

[Install]
WantedBy=multi-user.target
"
    ))
}

/// An Ignition config (spec 3.3.0) that writes `stream` 0600 to [`IGNITION_STREAM_PATH`] and installs and enables
/// [`unit`].
pub fn render_ignition(stream: &str, cryptadm_path: &str) -> Result<String, Error> {
    let unit = unit(cryptadm_path)?;
    let contents = gzip_base64(stream.as_bytes());
    config(
        &[File { path: IGNITION_STREAM_PATH, mode: 0o600, gzip_base64: &contents }],
        &[Unit { name: UNIT_NAME, enabled: true, contents: &unit }],
    )
    .map_err(|e| Error::Template(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_carries_the_stream_and_the_unit() {
        let json = render_ignition("kind: X\n", "/opt/bin/cryptadm").unwrap();
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        let file = &value["storage"]["files"][0];
        assert_eq!(file["path"], IGNITION_STREAM_PATH);
        assert_eq!(file["mode"], 0o600);
        let unit = value["systemd"]["units"][0]["contents"].as_str().unwrap();
        assert!(unit.contains("\nExecStart=/opt/bin/cryptadm bootstrap open --in "), "{unit}");
        assert!(unit.contains(&format!("\nConditionPathExists=!{OPENED_STAMP_PATH}\n")), "once per machine: {unit}");
        assert!(unit.contains(&format!("\nExecStartPost=/usr/bin/touch {OPENED_STAMP_PATH}\n")), "{unit}");
        assert!(render_ignition("x", "/opt/bin/crypt adm").is_err());
    }
}
