//! `cryptadm volume serve`: the CSI-Addons Identity and EncryptionKeyRotationController services on a unix
//! socket. tokio runs here and nowhere else; each rotation runs on a blocking thread with the same engine and
//! locks as `volume rotate`.

use super::{DEFAULT_KEY_STORE, settings};
use crate::cmd::error::Failure;
use crate::cmd::printer::Printer;
use crate::exit::ExitStatus;
use crate::interact::Interaction;
use crate::volume::server;
use anyhow::Context;
use clap::Args;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Examples for `cryptadm volume serve`.
pub const EXAMPLES: &str = "Examples:
  # Next to a CSI node plugin: the csi-addons sidecar connects to this socket
  cryptadm volume serve --endpoint unix:///var/lib/kubelet/plugins/cryptadm/csi-addons.sock \\
      --key-store file:///var/lib/cryptadm/volume-keys";

/// The name GetIdentity reports.
pub const DRIVER_NAME: &str = "cryptadm.volume";

/// Serve CSI-Addons EncryptionKeyRotation over gRPC on a unix socket
///
/// Implements the CSI-Addons Identity service (GetIdentity, GetCapabilities: NODE_SERVICE and
/// ENCRYPTIONKEYROTATION, Probe) and EncryptionKeyRotationController.EncryptionKeyRotate. Each request is handled
/// like `cryptadm volume rotate --request` (see its help for the request fields, key stores and the plugin
/// contract): volume_id and volume_path are required; encryption_key, when set, is the new passphrase.
///
/// Errors map to the CSI-Addons codes: INVALID_ARGUMENT for a missing field or malformed request or header,
/// NOT_FOUND when the volume or its stored key does not exist, ABORTED when another operation holds the volume,
/// UNAUTHENTICATED when no keyslot opens with the stored key or the key store rejects the secrets, UNKNOWN for
/// anything else (I/O, a failing plugin), INTERNAL if a rotation task died. Messages never carry secrets. No
/// RSA private key is ever used on behalf of a caller.
///
/// The server refuses to start when a live server answers on the socket path; a stale socket file is replaced.
/// SIGTERM or SIGINT stops it after the rotations in flight have finished, and the socket file is removed.
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES, after_long_help = crate::cmd::long_help_footer(EXAMPLES))]
pub struct ServeArgs {
    /// Where to listen: unix:///absolute/path.sock
    #[arg(long, value_name = "ENDPOINT")]
    pub endpoint: String,
    /// Where volume passphrases are kept: file://DIR, or NAME:... for the plugin cryptadm-plugin-kms-NAME
    #[arg(long, value_name = "URI", default_value = DEFAULT_KEY_STORE)]
    pub key_store: String,
}

/// Runs `cryptadm volume serve` until SIGTERM or SIGINT.
pub fn run(args: ServeArgs, printer: &Printer) -> anyhow::Result<ExitStatus> {
    let socket = socket_path(&args.endpoint)?;
    let settings = Arc::new(settings(&args.key_store));
    let runtime =
        tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the gRPC runtime")?;
    claim_socket_path(&socket)?;
    runtime.block_on(async {
        let listener = server::bind(&socket).with_context(|| format!("listening on `{}`", socket.display()))?;
        printer.info(&format!("serving CSI-Addons EncryptionKeyRotation on unix://{}", socket.display()));
        let served = server::serve(listener, settings, DRIVER_NAME, printer.clone(), shutdown_signal()).await;
        let removed = std::fs::remove_file(&socket);
        served.context("serving gRPC")?;
        removed.with_context(|| format!("removing `{}`", socket.display()))?;
        printer.info("stopped; socket removed");
        anyhow::Ok(())
    })?;
    Ok(ExitStatus::Success)
}

fn socket_path(endpoint: &str) -> anyhow::Result<PathBuf> {
    match endpoint.strip_prefix("unix://") {
        Some(path) if path.starts_with('/') && path.len() > 1 => Ok(PathBuf::from(path)),
        _ => {
            Err(Failure::new(ExitStatus::InvalidInput, format!("--endpoint `{endpoint}` is not unix:///absolute/path"))
                .with_hint("give a unix socket endpoint, e.g. unix:///run/csi-addons/cryptadm.sock")
                .into())
        }
    }
}

/// Removes a stale socket file, refusing when a live server answers on it or when it is not a socket.
fn claim_socket_path(path: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("reading `{}`", path.display())),
    };
    if !meta.file_type().is_socket() {
        return Err(Failure::new(ExitStatus::InvalidInput, format!("`{}` exists and is not a socket", path.display()))
            .with_hint("choose another --endpoint path; cryptadm replaces only stale sockets")
            .into());
    }
    if std::os::unix::net::UnixStream::connect(path).is_ok() {
        return Err(Failure::new(
            ExitStatus::Aborted,
            format!("a server is already listening on `{}`", path.display()),
        )
        .with_hint("stop it first, or choose another --endpoint")
        .into());
    }
    std::fs::remove_file(path).with_context(|| format!("removing the stale socket `{}`", path.display()))
}

async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
