//! `cryptadm image keyprovider`: cryptadm as an ocicrypt key provider (the `cmd` protocol), so that skopeo,
//! podman, buildah, CRI-O and containerd wrap and unwrap layer keys with Vault/OpenBao Transit or AWS KMS through
//! cryptadm.

use crate::cmd::error::Failure;
use crate::cmd::printer::Printer;
use crate::exit::ExitStatus;
use crate::interact::Interaction;
use crate::ocicrypt::key_manager;
use anyhow::Context;
use clap::Args;

/// Examples for `cryptadm image keyprovider`.
pub const EXAMPLES: &str = "Examples:
  # ocicrypt's key-provider configuration (the file OCICRYPT_KEYPROVIDER_CONFIG names)
  {\"key-providers\": {\"cryptadm\": {\"cmd\": {\"path\": \"/usr/local/bin/cryptadm\",
                                             \"args\": [\"image\", \"keyprovider\"]}}}}

  # Then, with the Vault settings in the environment (VAULT_ADDR, VAULT_CACERT, a token or a login)
  skopeo copy --encryption-key provider:cryptadm:vault-transit://transit/images \\
      oci:app:v1 docker://registry.example.com/app-enc:v1
  skopeo copy --decryption-key provider:cryptadm \\
      docker://registry.example.com/app-enc:v1 oci:app:v1

  # AWS KMS, with the AWS credentials of the environment (on EC2: the instance profile)
  skopeo copy --encryption-key \\
      provider:cryptadm:aws-kms://arn:aws:kms:eu-west-1:111122223333:alias/images \\
      oci:app:v1 docker://registry.example.com/app-enc:v1";

/// Be an ocicrypt key provider that wraps layer keys with Vault Transit or AWS KMS (for skopeo, podman, containerd)
///
/// Reads one request of ocicrypt's key-provider protocol on standard input (keywrap or keyunwrap, the JSON that
/// containers/ocicrypt sends to a `cmd` provider) and prints the answer on standard output. Wrapping needs the
/// key as the provider's option: --encryption-key provider:cryptadm:vault-transit://MOUNT/KEY or
/// provider:cryptadm:aws-kms://ARN (a key or alias ARN). Unwrapping uses the key recorded with the wrapped key (or
/// only the keys given as provider:cryptadm:KEY). The Vault server, CA and credentials come from the environment
/// the runtime starts it with (VAULT_ADDR or BAO_ADDR, VAULT_CACERT, VAULT_TOKEN or a token file, or a
/// JWT/Kubernetes/AppRole login); AWS's from its credential chain (AWS_* variables, profiles, web identity, the
/// instance profile). Images encrypted with cryptadm image encrypt --recipient vault-transit://… or aws-kms://…
/// use the same annotation. Errors are one line on standard error, which ocicrypt puts in its message.
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES, after_long_help = crate::cmd::long_help_footer(EXAMPLES))]
pub struct KeyProviderArgs {
    /// Serve ocicrypt's gRPC form instead, on this unix socket (unix:///PATH), until SIGTERM or SIGINT
    ///
    /// The key-provider configuration then names it as {"cryptadm": {"grpc": "unix:///PATH"}}. The socket is
    /// 0600 (root's runtimes and tools call it). A stale socket at PATH is replaced; a live one is refused.
    #[arg(long, value_name = "unix:///PATH")]
    listen: Option<String>,
}

/// Most bytes of a request: the private options and a few parameters (ocicrypt also sends other schemes' keys).
const MAX_REQUEST: usize = 4 << 20;

/// Runs `cryptadm image keyprovider`.
pub fn run(args: KeyProviderArgs, printer: &Printer) -> anyhow::Result<ExitStatus> {
    if let Some(endpoint) = &args.listen {
        listen(endpoint, printer)?;
        return Ok(ExitStatus::Success);
    }
    match serve(printer) {
        Ok(()) => Ok(ExitStatus::Success),
        Err(error) => {
            // ocicrypt shows the provider's stderr; one line, the error without a hint, as stream-decrypt does.
            let (status, _) = crate::cmd::error::classify(&error);
            let line = format!("cryptadm keyprovider: {error:#}").replace(['\n', '\r'], " ");
            printer.error(&line, None);
            Ok(status)
        }
    }
}

/// The gRPC form: serves until SIGTERM or SIGINT, then removes the socket.
fn listen(endpoint: &str, printer: &Printer) -> anyhow::Result<()> {
    let socket = match endpoint.strip_prefix("unix://") {
        Some(path) if path.starts_with('/') && path.len() > 1 => std::path::PathBuf::from(path),
        _ => {
            return Err(Failure::new(ExitStatus::Usage, format!("--listen `{endpoint}` is not unix:///absolute/path"))
                .with_hint("give a unix socket, e.g. unix:///run/cryptadm/keyprovider.sock")
                .into());
        }
    };
    let opener = super::key_managers::environment_opener(printer);
    let runtime =
        tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the gRPC runtime")?;
    crate::cmd::volume::serve::claim_socket_path(&socket)?;
    runtime.block_on(async {
        let listener =
            crate::volume::server::bind(&socket).with_context(|| format!("listening on `{}`", socket.display()))?;
        printer.info(&format!("serving the ocicrypt key provider `cryptadm` (gRPC) on unix://{}", socket.display()));
        let served =
            crate::ocicrypt::keyprovider_server::serve(listener, opener, crate::cmd::volume::serve::shutdown_signal())
                .await;
        let removed = std::fs::remove_file(&socket);
        served.context("serving gRPC")?;
        removed.with_context(|| format!("removing `{}`", socket.display()))?;
        printer.info("stopped; socket removed");
        anyhow::Ok(())
    })
}

fn serve(printer: &Printer) -> anyhow::Result<()> {
    let read = crate::bounded::read_at_most(std::io::stdin().lock(), MAX_REQUEST as u64)
        .context("reading the request on standard input")?;
    let Some(request) = read else {
        return Err(
            Failure::new(ExitStatus::InvalidInput, format!("the request is larger than {MAX_REQUEST} bytes")).into()
        );
    };
    let request = key_manager::parse_request(&request)?;
    let answer = key_manager::answer(request, &super::key_managers::environment_opener(printer))?;
    printer.data(&answer).context("writing the answer to standard output")?;
    Ok(())
}
