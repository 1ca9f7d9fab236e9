//! cryptadm's key provider over ocicrypt's gRPC form (`{"grpc": "unix:///PATH"}` in a key-provider
//! configuration): the service `keyprovider.KeyProviderService` with `WrapKey` and `UnWrapKey`, each taking and
//! returning one message whose field 1 (`bytes`) holds the same JSON as the `cmd` form (docs/formats.md#key-providers).
//! The messages are declared here (two one-field messages do not need a generated file), and the service is
//! routed by hand, as `volume serve` does, without tonic's router.

use super::Error;
use super::key_manager::{self, Opener};
use crate::crypto::SecretBytes;
use crate::exit::{Classify, ExitStatus};
use std::convert::Infallible;
use tonic::Status;

/// The gRPC service name ocicrypt calls.
pub const SERVICE: &str = "keyprovider.KeyProviderService";

/// `keyProviderKeyWrapProtocolInput` and `…Output`: one `bytes` field, number 1, holding the JSON.
#[derive(Clone, PartialEq, prost::Message)]
struct WrapProtocol {
    #[prost(bytes = "vec", tag = "1")]
    data: Vec<u8>,
}

type GrpcRequest = http::Request<tonic::body::Body>;
type GrpcResponse = http::Response<tonic::body::Body>;

/// The service: every call unwraps or wraps through `opener` on a blocking thread (the Vault client blocks).
#[derive(Clone)]
struct KeyProvider {
    opener: std::sync::Arc<Holder>,
}

/// Holds the opener and drops it on a thread of its own: a blocking client (it owns a runtime) must not be dropped
/// inside the server's runtime, where tonic drops the service when it stops.
struct Holder(Option<Opener>);

impl Holder {
    fn opener(&self) -> Opener {
        self.0.clone().unwrap_or_else(key_manager::unconfigured)
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        if let Some(opener) = self.0.take() {
            let _ = std::thread::spawn(move || drop(opener)).join();
        }
    }
}

struct Method {
    opener: Opener,
    op: &'static str,
}

/// The gRPC status of a failed request: a refusal is PERMISSION_DENIED, a bad request INVALID_ARGUMENT, a key that
/// does not exist NOT_FOUND, anything else (an unreachable server) UNAVAILABLE. The message is the error's text,
/// which holds no secret.
fn status(error: &Error) -> Status {
    let message = error.to_string();
    match error.status() {
        ExitStatus::Unauthenticated => Status::permission_denied(message),
        ExitStatus::InvalidInput | ExitStatus::Usage => Status::invalid_argument(message),
        ExitStatus::NotFound => Status::not_found(message),
        ExitStatus::DeadlineExceeded => Status::deadline_exceeded(message),
        _ => Status::unavailable(message),
    }
}

/// Answers one JSON request that arrived as method `op` (`keywrap` for WrapKey, `keyunwrap` for UnWrapKey).
fn handle(input: &[u8], op: &str, opener: &Opener) -> Result<SecretBytes, Error> {
    let request = key_manager::parse_request(input)?;
    let matches = matches!(
        (&request, op),
        (key_manager::ProviderRequest::Wrap { .. }, "keywrap")
            | (key_manager::ProviderRequest::Unwrap { .. }, "keyunwrap")
    );
    if !matches {
        return Err(Error::Malformed(format!("key-provider request: the request's op is not this method's ({op})")));
    }
    key_manager::answer(request, opener)
}

impl tonic::server::UnaryService<WrapProtocol> for Method {
    type Response = WrapProtocol;
    type Future = tonic::codegen::BoxFuture<tonic::Response<WrapProtocol>, Status>;

    fn call(&mut self, request: tonic::Request<WrapProtocol>) -> Self::Future {
        let (opener, op) = (self.opener.clone(), self.op);
        Box::pin(async move {
            let input = SecretBytes::new(request.into_inner().data);
            let answered = tokio::task::spawn_blocking(move || handle(&input, op, &opener))
                .await
                .map_err(|e| Status::internal(format!("the request's thread failed: {e}")))?;
            match answered {
                Ok(answer) => Ok(tonic::Response::new(WrapProtocol { data: answer.to_vec() })),
                Err(error) => Err(status(&error)),
            }
        })
    }
}

impl tonic::server::NamedService for KeyProvider {
    const NAME: &'static str = SERVICE;
}

impl tonic::codegen::Service<GrpcRequest> for KeyProvider {
    type Response = GrpcResponse;
    type Error = Infallible;
    type Future = tonic::codegen::BoxFuture<GrpcResponse, Infallible>;

    fn poll_ready(&mut self, _: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Infallible>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: GrpcRequest) -> Self::Future {
        let op = match request.uri().path().strip_prefix(&format!("/{SERVICE}/")) {
            Some("WrapKey") => "keywrap",
            Some("UnWrapKey") => "keyunwrap",
            _ => return Box::pin(std::future::ready(Ok(Status::unimplemented("").into_http()))),
        };
        let method = Method { opener: self.opener.opener(), op };
        Box::pin(async move {
            let codec = tonic_prost::ProstCodec::<WrapProtocol, WrapProtocol>::default();
            Ok(tonic::server::Grpc::new(codec).unary(method, request).await)
        })
    }
}

/// Serves the key provider on `listener` until `shutdown` completes.
pub async fn serve(
    listener: tokio::net::UnixListener,
    opener: Opener,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<(), tonic::transport::Error> {
    let incoming = tokio_stream::wrappers::UnixListenerStream::new(listener);
    tonic::transport::Server::builder()
        .serve_with_incoming_shutdown(
            KeyProvider { opener: std::sync::Arc::new(Holder(Some(opener))) },
            incoming,
            shutdown,
        )
        .await
}
