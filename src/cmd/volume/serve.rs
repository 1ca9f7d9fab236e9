//! `cryptadm volume serve`: the CSI-Addons Identity and EncryptionKeyRotationController services on a unix
//! socket. tokio runs here and nowhere else; each rotation runs on a blocking thread with the same engine and
//! locks as `volume rotate`.

use super::{DEFAULT_KEY_STORE, ResolveArgs, settings};
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
  # In the pod of the csi-addons sidecar (deploy/cryptadm-volume.yaml), for the PVs of ceph-csi's
  # RBD driver
  cryptadm volume serve --endpoint unix:///csi/csi-addons.sock --drivername rbd.csi.ceph.com \\
      --key-store file:///var/lib/cryptadm/volume-keys --max-concurrent 1

  # Volumes as image files named after their ids, instead of dm-crypt mappings found in sysfs
  cryptadm volume serve --endpoint unix:///run/cryptadm/csi-addons.sock \\
      --volume-path-template '/srv/volumes/{volume_id}.img'";

/// The name GetIdentity reports unless --drivername says otherwise.
pub const DRIVER_NAME: &str = "cryptadm.volume";
/// The worst-case memory of one rotation: cryptsetup's largest Argon2 memory (4 GiB); larger headers are refused.
pub const WORST_CASE_KDF_BYTES: u64 = 4 << 30;
/// Requests that may wait for a turn unless --max-queued says otherwise.
pub const DEFAULT_MAX_QUEUED: usize = 256;

/// Serve CSI-Addons EncryptionKeyRotation over gRPC on a unix socket
///
/// Implements the CSI-Addons Identity service (GetIdentity, GetCapabilities: NODE_SERVICE and
/// ENCRYPTIONKEYROTATION, Probe) and EncryptionKeyRotationController.EncryptionKeyRotate. Each request is handled
/// like `cryptadm volume rotate --request` (see its help for the request fields, key stores and the plugin
/// contract): volume_id is required; volume_path is optional (the csi-addons sidecar never sends it) and is
/// otherwise found with --volume-path-template or from the volume's active dm-crypt mapping in sysfs;
/// encryption_key, when set, is the new passphrase.
///
/// Routing: the csi-addons controller sends a PV's rotation jobs to the sidecar whose driver (GetIdentity's name)
/// is the PV's spec.csi.driver and whose node has the PV attached, so --drivername must be the CSI driver's name.
///
/// Memory: at most --max-concurrent rotations run at once; the default is half the machine's memory divided by
/// the worst-case KDF memory of one rotation (4 GiB, cryptsetup's largest Argon2 memory; headers asking more are
/// refused), at least 1 and at most the number of CPUs. Up to --max-queued more requests wait; beyond that a
/// request gets ABORTED (the controller retries it later).
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
    #[allow(missing_docs)]
    #[arg(long, value_name = "URI", default_value = DEFAULT_KEY_STORE,
          help = crate::kms::backends::help_for(crate::kms::backends::Use::Store), help_heading = super::KEY_STORE_HEADING)]
    pub key_store: String,
    /// The name GetIdentity returns: the CSI driver whose volumes this node rotates (the PV's spec.csi.driver)
    #[arg(long, value_name = "NAME", default_value = DRIVER_NAME)]
    pub drivername: String,
    /// Rotations that run at once [default: half the memory / 4 GiB, between 1 and the number of CPUs]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_concurrent: Option<u32>,
    /// Requests that may wait for a turn; more get ABORTED
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_QUEUED)]
    pub max_queued: usize,
    #[allow(missing_docs)]
    #[command(flatten)]
    pub resolve: ResolveArgs,
    #[allow(missing_docs)]
    #[command(flatten)]
    pub vault: super::VaultStoreArgs,
}

/// Runs `cryptadm volume serve` until SIGTERM or SIGINT.
pub fn run(args: ServeArgs, printer: &Printer) -> anyhow::Result<ExitStatus> {
    let socket = socket_path(&args.endpoint)?;
    let settings = Arc::new(settings(&args.key_store, args.resolve.resolver()?, &args.vault)?);
    if printer.is_verbose() {
        for line in crate::cmd::key_refs::describe(&args.key_store, &settings.backends) {
            printer.debug(&line);
        }
    }
    if args.drivername.is_empty() {
        return Err(Failure::new(ExitStatus::Usage, "--drivername is empty")
            .with_hint("give the CSI driver's name, as in the PVs' spec.csi.driver")
            .into());
    }
    let max_concurrent = match args.max_concurrent {
        Some(n) => n as usize,
        None => default_max_concurrent(),
    };
    let limits = server::Limits { max_concurrent, max_queued: args.max_queued };
    let runtime =
        tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the gRPC runtime")?;
    claim_socket_path(&socket)?;
    runtime.block_on(async {
        let listener = server::bind(&socket).with_context(|| format!("listening on `{}`", socket.display()))?;
        printer.info(&format!(
            "serving CSI-Addons EncryptionKeyRotation for driver `{}` on unix://{} ({max_concurrent} at once)",
            args.drivername,
            socket.display()
        ));
        let served =
            server::serve(listener, settings, &args.drivername, limits, printer.clone(), shutdown_signal()).await;
        let removed = std::fs::remove_file(&socket);
        served.context("serving gRPC")?;
        removed.with_context(|| format!("removing `{}`", socket.display()))?;
        printer.info("stopped; socket removed");
        anyhow::Ok(())
    })?;
    Ok(ExitStatus::Success)
}

/// Half the machine's memory over the worst-case KDF memory, between 1 and the number of CPUs.
fn default_max_concurrent() -> usize {
    let total_kib = std::fs::read_to_string("/proc/meminfo").ok().and_then(|info| {
        info.lines()
            .find_map(|line| line.strip_prefix("MemTotal:")?.trim().strip_suffix("kB")?.trim().parse::<u64>().ok())
    });
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    let by_memory = total_kib.map_or(1, |kib| (kib * 1024 / 2 / WORST_CASE_KDF_BYTES) as usize);
    by_memory.clamp(1, cpus.max(1))
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
pub(crate) fn claim_socket_path(path: &Path) -> anyhow::Result<()> {
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

pub(crate) async fn shutdown_signal() {
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
