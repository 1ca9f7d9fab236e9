//! `cryptadm image stream-decrypt`: containerd's decryption stream processor (a drop-in for imgcrypt's
//! `ctd-decoder`). Reads the payload on fd 3, the keys directory and the key providers, then streams.

use crate::cmd::error::Failure;
use crate::cmd::printer::Printer;
use crate::exit::ExitStatus;
use crate::ocicrypt::stream::{self, Output};
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;

/// Examples for `cryptadm image stream-decrypt`.
pub const EXAMPLES: &str = "Examples:
  # What containerd runs (configure it with `cryptadm image node-config --runtime containerd`)
  [stream_processors.\"io.containerd.ocicrypt.decoder.v1.tar.gzip\"]
    accepts = [\"application/vnd.oci.image.layer.v1.tar+gzip+encrypted\"]
    returns = \"application/vnd.oci.image.layer.v1.tar+gzip\"
    path = \"/usr/local/bin/cryptadm\"
    args = [\"image\", \"stream-decrypt\", \"--decryption-keys-path\", \"/etc/containerd/ocicrypt/keys\"]

  # By hand: the payload on fd 3, the layer on stdin
  STREAM_PROCESSOR_MEDIATYPE=application/vnd.oci.image.layer.v1.tar+gzip+encrypted \\
      cryptadm image stream-decrypt \\
          --decryption-keys-path keys/ 3<payload.bin <layer.enc >layer.tar.gz";

/// Decrypt one layer for containerd (its stream processor; a drop-in for imgcrypt's ctd-decoder)
///
/// Reads the encrypted layer on standard input and writes the decrypted layer on standard output; a zstd layer
/// is also decompressed (containerd gives keys to the plain-tar processor only). containerd's payload, the
/// layer's descriptor, comes on file descriptor 3. The keys are every file under --decryption-keys-path
/// (recursively; a symbolic link fails, a file that is not a key is skipped and named if no key fits), and the
/// key providers of OCICRYPT_KEYPROVIDER_CONFIG; layers wrapped by a Vault Transit or AWS KMS key are unwrapped
/// with the node's own identity (its Vault login when VAULT_ADDR or BAO_ADDR is set, its AWS credential chain, on
/// EC2 the instance profile). A key file sealed to the node (a clevis JWE of the key, made by clevis encrypt
/// tpm2|tang|sss or cryptadm image seal-key) is opened, in memory only, through the TPM that CRYPTADM_TPM2_DEVICE
/// or TPM2TOOLS_TCTI names (else /dev/tpmrm0) or its Tang servers, when no plain key opened the layer. The last 256 KiB are written only after the layer's HMAC
/// verified, so a tampered layer never unpacks. Errors are one line on stderr, which containerd puts in the pull
/// error.
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES, after_long_help = crate::cmd::long_help_footer(EXAMPLES))]
pub struct StreamDecryptArgs {
    /// The node's keys directory: every regular file below it is tried as a key (ctd-decoder's flag)
    #[arg(long = "decryption-keys-path", value_name = "DIR")]
    keys_path: Option<PathBuf>,
}

/// Runs `cryptadm image stream-decrypt`. Errors are printed here as one line (containerd copies stderr into the
/// pull error verbatim), without the hint line other commands add.
pub fn run(args: StreamDecryptArgs, printer: &Printer) -> anyhow::Result<ExitStatus> {
    match decrypt(&args, printer) {
        Ok(()) => Ok(ExitStatus::Success),
        Err(error) => {
            let (status, _) = crate::cmd::error::classify(&error);
            let line = format!("cryptadm stream-decrypt: {error:#}").replace(['\n', '\r'], " ");
            printer.error(&line, None);
            Ok(status)
        }
    }
}

fn decrypt(args: &StreamDecryptArgs, printer: &Printer) -> anyhow::Result<()> {
    let payload = read_payload()?;
    let files = match &args.keys_path {
        Some(dir) => stream::read_keys_directory(dir)
            .with_context(|| format!("reading the keys directory `{}`", dir.display()))?,
        None => Vec::new(),
    };
    let (keys, skipped) = stream::node_keys(&files, &payload, super::provider_config()?);
    // The node's own identity unwraps key-manager-wrapped layers: its Vault login when its environment
    // (containerd's processor `env`) names a server, its AWS instance profile (or other AWS credentials); their
    // policies decide which keys it may use.
    let keys = keys.with_any_managed_key(super::key_managers::environment_opener(printer));
    // A key file sealed to the node (a clevis JWE) opens through the TPM its environment names
    // (CRYPTADM_TPM2_DEVICE, TPM2TOOLS_TCTI; else /dev/tpmrm0) or its Tang servers, when the layer needs it.
    let keys = if keys.has_sealed_keys() {
        keys.with_sealed_key_settings(crate::cmd::clevis_args::sealed_key_settings(None)?)
    } else {
        keys
    };
    let media_type = crate::cmd::env_vars::var_os(crate::cmd::env_vars::STREAM_PROCESSOR_MEDIATYPE)
        .map(|v| v.to_string_lossy().into_owned())
        .unwrap_or_else(|| payload.descriptor.media_type().unwrap_or_default().to_owned());
    let output = Output::for_media_type(&media_type);
    let mut stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout().lock();
    stream::decrypt_stream(&payload.descriptor, &keys.unwrappers(), &skipped, output, &mut stdin, &mut stdout)?;
    Ok(())
}

/// Reads exactly fd 3 (other inherited descriptors may be open too: containerd does not close them).
fn read_payload() -> anyhow::Result<stream::Payload> {
    // /dev/fd/3 reopens the inherited descriptor without unsafe code.
    let file = std::fs::File::open("/dev/fd/3").map_err(|e| {
        Failure::new(
            ExitStatus::InvalidInput,
            format!(
                "no payload on file descriptor 3 ({e}): containerd sends it only to the processors \
                 io.containerd.ocicrypt.decoder.v1.tar and …v1.tar.gzip, with the CRI's image_decryption \
                 key_model = \"node\" (see `cryptadm image node-config`)"
            ),
        )
    })?;
    let bytes = crate::bounded::read_at_most(file, stream::MAX_PAYLOAD as u64)
        .context("reading the payload on file descriptor 3")?
        .ok_or_else(stream::payload_too_large)?;
    Ok(stream::decode_payload(&bytes)?)
}
