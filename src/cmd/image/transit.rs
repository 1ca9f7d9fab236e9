//! How image commands reach Vault/OpenBao Transit: the shared `--vault-*` flags and the Vault CLI's environment
//! (`cmd::vault_args`). The client connects and logs in only when a layer first needs it.

use crate::cmd::vault_args::VaultArgs;
use crate::kms::{self, Wrapping};
use crate::ocicrypt::transit;
use std::sync::Arc;
use std::time::Duration;

/// How long one request to the server may take.
const TIMEOUT: Duration = Duration::from_secs(30);
/// How many times a request that failed for a transient reason (5xx, sealed, unreachable) is sent again.
const RETRIES: u32 = 2;

fn opener_of(wrapping: Arc<dyn Wrapping + Send + Sync>) -> transit::Opener {
    Arc::new(move || Ok(wrapping.clone()))
}

/// The opener for `vault-transit://` recipients and keys: a usage error (exit 2) when no server is configured.
pub fn opener(args: &VaultArgs) -> anyhow::Result<transit::Opener> {
    Ok(opener_of(args.require(TIMEOUT, RETRIES, "a vault-transit:// key")?))
}

/// For a node's stream processor: `None` when its environment names no Vault server (VAULT_ADDR or BAO_ADDR);
/// otherwise an opener whose settings problems (a missing role, say) are reported only when a layer needs Transit,
/// so that they never break the pull of images wrapped otherwise.
pub fn node_opener() -> Option<transit::Opener> {
    match VaultArgs::default().client(TIMEOUT, RETRIES) {
        Ok(None) => None,
        Ok(Some(vault)) => Some(opener_of(vault)),
        Err(error) => {
            let message = format!("{error:#}");
            Some(Arc::new(move || Err(kms::Error::Config(message.clone()))))
        }
    }
}
