//! `cryptadm volume serve`: the CSI-Addons Identity and EncryptionKeyRotationController services on a unix
//! socket. tokio runs here and nowhere else; each rotation runs on a blocking thread with the same engine and
//! locks as `volume rotate`.

use super::{DEFAULT_KEY_STORE, settings};
use crate::cmd::printer::Printer;
use crate::exit::{Classified, ExitStatus, Failure};
use crate::interact::Interaction;
use crate::volume::operation::{self, Settings};
use crate::volume::proto::encryptionkeyrotation::encryption_key_rotation_controller_server::{
    EncryptionKeyRotationController, EncryptionKeyRotationControllerServer,
};
use crate::volume::proto::encryptionkeyrotation::{EncryptionKeyRotateRequest, EncryptionKeyRotateResponse};
use crate::volume::proto::identity::identity_server::{Identity, IdentityServer};
use crate::volume::proto::identity::{self as id, capability};
use crate::volume::request::Secrets;
use crate::volume::{Error, RotateRequest};
use anyhow::Context;
use clap::Args;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tonic::{Request, Response, Status};

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
    runtime.block_on(serve(socket, settings, printer.clone()))?;
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

async fn serve(socket: PathBuf, settings: Arc<Settings>, printer: Printer) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    claim_socket_path(&socket)?;
    let listener =
        tokio::net::UnixListener::bind(&socket).with_context(|| format!("listening on `{}`", socket.display()))?;
    // Only root (the kubelet's and the sidecar's user) may rotate keys.
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600))
        .with_context(|| format!("restricting `{}`", socket.display()))?;
    printer.info(&format!("serving CSI-Addons EncryptionKeyRotation on unix://{}", socket.display()));
    let incoming = tokio_stream::wrappers::UnixListenerStream::new(listener);
    let rotator = Rotator { settings, printer: printer.clone() };
    let served = tonic::transport::Server::builder()
        .add_service(IdentityServer::new(IdentityService))
        .add_service(EncryptionKeyRotationControllerServer::new(rotator))
        .serve_with_incoming_shutdown(incoming, shutdown_signal())
        .await;
    let removed = std::fs::remove_file(&socket);
    served.context("serving gRPC")?;
    removed.with_context(|| format!("removing `{}`", socket.display()))?;
    printer.info("stopped; socket removed");
    Ok(())
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

struct IdentityService;

#[tonic::async_trait]
impl Identity for IdentityService {
    async fn get_identity(
        &self,
        _: Request<id::GetIdentityRequest>,
    ) -> Result<Response<id::GetIdentityResponse>, Status> {
        Ok(Response::new(id::GetIdentityResponse {
            name: DRIVER_NAME.into(),
            vendor_version: env!("CARGO_PKG_VERSION").into(),
            manifest: Default::default(),
        }))
    }

    async fn get_capabilities(
        &self,
        _: Request<id::GetCapabilitiesRequest>,
    ) -> Result<Response<id::GetCapabilitiesResponse>, Status> {
        use capability::{EncryptionKeyRotation, Service, Type, encryption_key_rotation, service};
        let capabilities = vec![
            id::Capability { r#type: Some(Type::Service(Service { r#type: service::Type::NodeService as i32 })) },
            id::Capability {
                r#type: Some(Type::EncryptionKeyRotation(EncryptionKeyRotation {
                    r#type: encryption_key_rotation::Type::Encryptionkeyrotation as i32,
                })),
            },
        ];
        Ok(Response::new(id::GetCapabilitiesResponse { capabilities }))
    }

    async fn probe(&self, _: Request<id::ProbeRequest>) -> Result<Response<id::ProbeResponse>, Status> {
        Ok(Response::new(id::ProbeResponse { ready: Some(true) }))
    }
}

struct Rotator {
    settings: Arc<Settings>,
    printer: Printer,
}

#[tonic::async_trait]
impl EncryptionKeyRotationController for Rotator {
    async fn encryption_key_rotate(
        &self,
        request: Request<EncryptionKeyRotateRequest>,
    ) -> Result<Response<EncryptionKeyRotateResponse>, Status> {
        let mut wire = request.into_inner();
        let encryption_key = zeroize::Zeroizing::new(std::mem::take(&mut wire.encryption_key));
        let volume_id = wire.volume_id.clone();
        let parsed = RotateRequest::new(
            wire.volume_id,
            wire.volume_path,
            &encryption_key,
            wire.parameters.into_iter().collect(),
            Secrets::new(std::mem::take(&mut wire.secrets).into_iter().collect()),
        );
        let result = match parsed {
            Ok(request) => {
                let settings = self.settings.clone();
                tokio::task::spawn_blocking(move || {
                    operation::rotate_volume(&request, &settings, &mut |_| ControlFlow::Continue(()))
                })
                .await
                .map_err(|_| Status::internal("the rotation task failed"))?
            }
            Err(e) => Err(e),
        };
        match result {
            Ok(outcome) => {
                self.printer.info(&format!(
                    "EncryptionKeyRotate `{volume_id}`: OK (keyslot {}{})",
                    outcome.keyslot,
                    if outcome.resumed { ", interrupted rotation finished" } else { "" }
                ));
                Ok(Response::new(EncryptionKeyRotateResponse {}))
            }
            Err(e) => {
                let status = grpc_status(&e);
                self.printer.warn(&format!(
                    "EncryptionKeyRotate `{volume_id}`: {:?}: {}",
                    status.code(),
                    status.message()
                ));
                Err(status)
            }
        }
    }
}

/// The CSI-Addons code for an error (the exit-code table is the same table).
pub fn grpc_status(error: &Error) -> Status {
    let message = error.to_string();
    match error.status() {
        ExitStatus::InvalidInput | ExitStatus::Usage => Status::invalid_argument(message),
        ExitStatus::NotFound => Status::not_found(message),
        ExitStatus::Aborted => Status::aborted(message),
        ExitStatus::Unauthenticated => Status::unauthenticated(message),
        _ => Status::unknown(message),
    }
}
