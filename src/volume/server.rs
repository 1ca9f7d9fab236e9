//! The CSI-Addons gRPC services behind `cryptadm volume serve`: Identity (GetIdentity, GetCapabilities, Probe)
//! and EncryptionKeyRotationController.EncryptionKeyRotate, over a unix socket. Each rotation runs on a blocking
//! thread with the same engine and locks as `volume rotate`; errors map to the CSI-Addons codes through the
//! exit-status table, which follows the same gRPC codes.
//!
//! At most [`Limits::max_concurrent`] rotations run at once (each may run a KDF of up to 4 GiB); up to
//! [`Limits::max_queued`] more wait for a turn in arrival order, and a request beyond that is refused at once with
//! ABORTED, which the csi-addons controller requeues with a back-off. Every accepted connection goes through
//! [`super::authority`], so clients whose `:authority` is a socket path (Python grpcio) are served.

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
use std::convert::Infallible;
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

/// How many rotations run and wait at once.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Rotations running at once (at least 1).
    pub max_concurrent: usize,
    /// Requests waiting for a turn; more are refused with ABORTED.
    pub max_queued: usize,
}

/// Serves both services on `listener` until `shutdown` completes, then waits for the rotations in flight.
/// `driver_name` is what GetIdentity answers; `log` hears one line per rotation.
pub async fn serve<L>(
    listener: tokio::net::UnixListener,
    settings: Arc<Settings>,
    driver_name: &str,
    limits: Limits,
    log: L,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<(), tonic::transport::Error>
where
    L: Interaction + Send + Sync + 'static,
{
    let incoming = futures_util::stream::unfold(listener, |listener| async move {
        let accepted = listener.accept().await.map(|(stream, _)| shim(stream));
        Some((accepted, listener))
    });
    let rotator = Rotator {
        settings,
        log,
        running: Arc::new(tokio::sync::Semaphore::new(limits.max_concurrent.max(1))),
        admitted: Arc::new(tokio::sync::Semaphore::new(limits.max_concurrent.max(1) + limits.max_queued)),
    };
    let services = Services {
        identity: IdentityServer::new(IdentityService { driver_name: driver_name.to_owned() }),
        rotation: EncryptionKeyRotationControllerServer::new(rotator),
    };
    tonic::transport::Server::builder().serve_with_incoming_shutdown(services, incoming, shutdown).await
}

/// Both services behind one [`tonic::codegen::Service`], chosen by the service name in the request path
/// (`/identity.Identity/GetIdentity`); a path naming another service is answered UNIMPLEMENTED, as a method
/// neither service has is. This is what tonic's `add_service` router does for us, without its `router` feature
/// (axum and matchit: code in the binary for routing two fixed names; issue 16, binary size).
struct Services<I, R> {
    identity: I,
    rotation: R,
}

impl<I: Clone, R: Clone> Clone for Services<I, R> {
    fn clone(&self) -> Self {
        Self { identity: self.identity.clone(), rotation: self.rotation.clone() }
    }
}

type GrpcRequest = http::Request<tonic::body::Body>;
type GrpcResponse = http::Response<tonic::body::Body>;

impl<I, R> tonic::codegen::Service<GrpcRequest> for Services<I, R>
where
    I: tonic::codegen::Service<GrpcRequest, Response = GrpcResponse, Error = Infallible> + tonic::server::NamedService,
    R: tonic::codegen::Service<GrpcRequest, Response = GrpcResponse, Error = Infallible> + tonic::server::NamedService,
    I::Future: Send + 'static,
    R::Future: Send + 'static,
{
    type Response = GrpcResponse;
    type Error = Infallible;
    type Future = tonic::codegen::BoxFuture<GrpcResponse, Infallible>;

    /// Ready when both services are (the generated ones always are).
    fn poll_ready(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Infallible>> {
        use std::task::Poll;
        match (self.identity.poll_ready(cx), self.rotation.poll_ready(cx)) {
            (Poll::Ready(Ok(())), Poll::Ready(Ok(()))) => Poll::Ready(Ok(())),
            _ => Poll::Pending,
        }
    }

    fn call(&mut self, request: GrpcRequest) -> Self::Future {
        let service =
            request.uri().path().strip_prefix('/').and_then(|path| path.split_once('/')).map(|(name, _)| name);
        if service == Some(I::NAME) {
            let answer = self.identity.call(request);
            Box::pin(async move { answer.await.map(too_large_is_resource_exhausted) })
        } else if service == Some(R::NAME) {
            let answer = self.rotation.call(request);
            Box::pin(async move { answer.await.map(too_large_is_resource_exhausted) })
        } else {
            Box::pin(std::future::ready(Ok(Status::unimplemented("").into_http())))
        }
    }
}

/// tonic answers a request message over its size limit with OUT_OF_RANGE; gRPC's convention (grpc-go, grpc-core)
/// for a message larger than the receiver accepts is RESOURCE_EXHAUSTED, which is what clients retry or report
/// on. The refusal is a trailers-only answer, so its status is in the headers.
fn too_large_is_resource_exhausted(mut response: GrpcResponse) -> GrpcResponse {
    let headers = response.headers_mut();
    let out_of_range = headers.get("grpc-status").is_some_and(|v| v.as_bytes() == b"11");
    // grpc-message is percent-encoded (tonic encodes spaces as %20).
    let too_large = headers.get("grpc-message").is_some_and(|v| {
        let text = String::from_utf8_lossy(v.as_bytes()).replace("%20", " ");
        text.starts_with("Error, decoded message length too large")
    });
    if out_of_range && too_large {
        headers.insert("grpc-status", http::HeaderValue::from_static("8"));
    }
    response
}

/// The server's end of an accepted connection, behind the `:authority` shim.
pub struct Shimmed(tokio::io::DuplexStream);

impl tonic::transport::server::Connected for Shimmed {
    type ConnectInfo = ();
    fn connect_info(&self) -> Self::ConnectInfo {}
}

impl tokio::io::AsyncRead for Shimmed {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl tokio::io::AsyncWrite for Shimmed {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.0).poll_write(cx, buf)
    }
    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.0).poll_flush(cx)
    }
    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

/// Puts the `:authority` rewriter between `stream` and the server: requests through
/// [`super::authority::forward_requests`], responses unchanged.
fn shim(stream: tokio::net::UnixStream) -> Shimmed {
    let (server_end, shim_end) = tokio::io::duplex(64 * 1024);
    let (client_read, mut client_write) = stream.into_split();
    let (mut shim_read, shim_write) = tokio::io::split(shim_end);
    tokio::spawn(async move {
        let _ = super::authority::forward_requests(client_read, shim_write).await;
    });
    tokio::spawn(async move {
        use tokio::io::AsyncWriteExt;
        let _ = tokio::io::copy(&mut shim_read, &mut client_write).await;
        let _ = client_write.shutdown().await;
    });
    Shimmed(server_end)
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
    /// One permit per rotation that may run.
    running: Arc<tokio::sync::Semaphore>,
    /// One permit per request that may run or wait.
    admitted: Arc<tokio::sync::Semaphore>,
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
                let Ok(_admitted) = self.admitted.clone().try_acquire_owned() else {
                    let status = Status::aborted("too many rotations are running or waiting; retry later");
                    self.log.warn(&format!("EncryptionKeyRotate `{volume_id}`: {}", status.message()));
                    return Err(status);
                };
                // tokio's semaphore is fair: waiters are served in arrival order.
                let _running =
                    self.running.clone().acquire_owned().await.map_err(|_| Status::unavailable("stopping"))?;
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
                if let Some(why) = &outcome.release_failed {
                    self.log.warn(&format!(
                        "EncryptionKeyRotate `{volume_id}`: the rotation claim could not be released ({why}); it \
                         blocks other nodes until it expires, and the next rotation of this volume here replaces it"
                    ));
                }
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
        _ if matches!(error, Error::AmbiguousDevice { .. }) => Status::failed_precondition(message),
        ExitStatus::InvalidInput | ExitStatus::Usage => Status::invalid_argument(message),
        ExitStatus::NotFound => Status::not_found(message),
        ExitStatus::Aborted => Status::aborted(message),
        ExitStatus::Unauthenticated => Status::unauthenticated(message),
        ExitStatus::DeadlineExceeded => Status::deadline_exceeded(message),
        _ => Status::unknown(message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::volume::proto::encryptionkeyrotation::encryption_key_rotation_controller_server as rotation;
    use crate::volume::proto::identity::identity_server;
    use tonic::codegen::Service;

    /// Stands in for a generated service (`ROTATION`: the rotation one, else Identity): answers every call with
    /// its name in a header.
    #[derive(Clone)]
    struct Fake<const ROTATION: bool>;

    impl tonic::server::NamedService for Fake<false> {
        const NAME: &'static str = identity_server::SERVICE_NAME;
    }

    impl tonic::server::NamedService for Fake<true> {
        const NAME: &'static str = rotation::SERVICE_NAME;
    }

    impl<const ROTATION: bool> Service<GrpcRequest> for Fake<ROTATION> {
        type Response = GrpcResponse;
        type Error = Infallible;
        type Future = std::future::Ready<Result<GrpcResponse, Infallible>>;
        fn poll_ready(&mut self, _: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Infallible>> {
            std::task::Poll::Ready(Ok(()))
        }
        fn call(&mut self, _: GrpcRequest) -> Self::Future {
            let mut response = GrpcResponse::new(tonic::body::Body::empty());
            let name = if ROTATION { "rotation" } else { "identity" };
            response.headers_mut().insert("served-by", http::HeaderValue::from_static(name));
            std::future::ready(Ok(response))
        }
    }

    /// Each service gets the paths under its name; any other path is UNIMPLEMENTED, as with tonic's router.
    #[test]
    fn services_route_on_the_service_name() {
        let mut services = Services { identity: Fake::<false>, rotation: Fake::<true> };
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let mut answer = |path: &str| {
            let request = http::Request::builder().uri(path).body(tonic::body::Body::empty()).unwrap();
            runtime.block_on(services.call(request)).unwrap()
        };
        let served_by = |response: &GrpcResponse| response.headers().get("served-by").cloned();
        for (path, expected) in [
            ("/identity.Identity/GetIdentity", "identity"),
            ("/identity.Identity/NoSuchMethod", "identity"),
            ("/encryptionkeyrotation.EncryptionKeyRotationController/EncryptionKeyRotate", "rotation"),
        ] {
            assert_eq!(served_by(&answer(path)).unwrap(), expected, "{path}");
        }
        for path in [
            "/other.Service/Method",
            "/",
            "/identity.Identity",
            "/identity.IdentityX/GetIdentity",
            "/x/identity.Identity/GetIdentity",
        ] {
            let response = answer(path);
            assert_eq!(served_by(&response), None, "{path}");
            assert_eq!(response.headers()["grpc-status"], "12", "{path}");
            assert_eq!(response.headers()["content-type"], "application/grpc", "{path}");
        }
    }
}
