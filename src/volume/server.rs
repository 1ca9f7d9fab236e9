//! The CSI-Addons gRPC services behind `cryptadm volume serve`: Identity (GetIdentity, GetCapabilities, Probe)
//! and EncryptionKeyRotationController.EncryptionKeyRotate, over a unix socket. Each rotation runs on a blocking
//! thread with the same engine and locks as `volume rotate`; errors map to the CSI-Addons codes through the
//! exit-status table, which follows the same gRPC codes.

use super::operation::{self, Settings};
use super::proto::encryptionkeyrotation::encryption_key_rotation_controller_server::{
    EncryptionKeyRotationController, EncryptionKeyRotationControllerServer,
};
use super::proto::encryptionkeyrotation::{EncryptionKeyRotateRequest, EncryptionKeyRotateResponse};
use super::proto::identity::identity_server::{Identity, IdentityServer};
use super::proto::identity::{self as id, capability};
use super::request::Secrets;
use super::{Error, RotateRequest};
use crate::exit::{Classify, ExitStatus};
use crate::interact::Interaction;
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;
use tonic::{Request, Response, Status};

/// Binds the socket and restricts it to its owner: only root (the kubelet's and the sidecar's user) may rotate
/// keys. The path must be free.
pub fn bind(socket: &Path) -> std::io::Result<tokio::net::UnixListener> {
    use std::os::unix::fs::PermissionsExt;
    let listener = tokio::net::UnixListener::bind(socket)?;
    std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o600))?;
    Ok(listener)
}

/// Serves both services on `listener` until `shutdown` completes, then waits for the rotations in flight.
/// `driver_name` is what GetIdentity answers; `log` hears one line per rotation.
pub async fn serve<L>(
    listener: tokio::net::UnixListener,
    settings: Arc<Settings>,
    driver_name: &str,
    log: L,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<(), tonic::transport::Error>
where
    L: Interaction + Send + Sync + 'static,
{
    let incoming = tokio_stream::wrappers::UnixListenerStream::new(listener);
    let rotator = Rotator { settings, log };
    tonic::transport::Server::builder()
        .add_service(IdentityServer::new(IdentityService { driver_name: driver_name.to_owned() }))
        .add_service(EncryptionKeyRotationControllerServer::new(rotator))
        .serve_with_incoming_shutdown(incoming, shutdown)
        .await
}

struct IdentityService {
    driver_name: String,
}

#[tonic::async_trait]
impl Identity for IdentityService {
    async fn get_identity(
        &self,
        _: Request<id::GetIdentityRequest>,
    ) -> Result<Response<id::GetIdentityResponse>, Status> {
        Ok(Response::new(id::GetIdentityResponse {
            name: self.driver_name.clone(),
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

struct Rotator<L> {
    settings: Arc<Settings>,
    log: L,
}

#[tonic::async_trait]
impl<L: Interaction + Send + Sync + 'static> EncryptionKeyRotationController for Rotator<L> {
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
                self.log.info(&format!(
                    "EncryptionKeyRotate `{volume_id}`: OK (keyslot {}{})",
                    outcome.keyslot,
                    if outcome.resumed { ", interrupted rotation finished" } else { "" }
                ));
                Ok(Response::new(EncryptionKeyRotateResponse {}))
            }
            Err(e) => {
                let status = grpc_status(&e);
                self.log.warn(&format!("EncryptionKeyRotate `{volume_id}`: {:?}: {}", status.code(), status.message()));
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
