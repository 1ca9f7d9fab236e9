//! How image commands reach the key managers whose keys wrap layer keys: Vault/OpenBao Transit through the shared
//! `--vault-*` flags and the Vault CLI's environment (`cmd::vault_args`), AWS KMS through the `--aws-*` flags and
//! the AWS credential chain (`cmd::aws_args`). A client connects, logs in or reads credentials only when a layer
//! first needs it.

use crate::cmd::aws_args::AwsArgs;
use crate::cmd::vault_args::VaultArgs;
use crate::kms::{self, Wrapping};
use crate::ocicrypt::key_manager::{self, Manager};
use std::sync::Arc;
use std::time::Duration;

/// How long one request to a key manager may take.
const TIMEOUT: Duration = Duration::from_secs(30);
/// How many times a request that failed for a transient reason (5xx, throttled, sealed, unreachable) is sent again.
const RETRIES: u32 = 2;

/// A key manager's client, or why there is none (a settings problem, reported when a layer needs it).
type Client = Result<Arc<dyn Wrapping + Send + Sync>, String>;

fn opener_of(vault: Client, aws: Client) -> key_manager::Opener {
    Arc::new(move |manager| {
        let client = match manager {
            Manager::Vault => &vault,
            Manager::Aws => &aws,
        };
        client.clone().map_err(kms::Error::Config)
    })
}

fn missing(manager: Manager) -> Client {
    Err(key_manager::not_configured(manager).to_string())
}

fn aws_client(args: &AwsArgs) -> Client {
    Ok(args.client(TIMEOUT, RETRIES))
}

/// The opener for the `vault-transit://` and `aws-kms://` keys of a command line, whose key managers are
/// `needed`: a usage error (exit 2) when Vault is needed and no server is configured. AWS always has settings (its
/// credential chain ends with the instance metadata service), checked at the first request.
pub fn opener(vault: &VaultArgs, aws: &AwsArgs, needed: &[Manager]) -> anyhow::Result<key_manager::Opener> {
    let vault_client: Client = if needed.contains(&Manager::Vault) {
        Ok(vault.require(TIMEOUT, RETRIES, "a vault-transit:// key")?)
    } else {
        missing(Manager::Vault)
    };
    let aws_client = if needed.contains(&Manager::Aws) { aws_client(aws) } else { missing(Manager::Aws) };
    Ok(opener_of(vault_client, aws_client))
}

/// For a node's stream processor and the key provider, which unwrap with whichever key a layer names: Vault when
/// the environment names a server (VAULT_ADDR or BAO_ADDR), AWS with the environment's credential chain (a node's
/// instance profile, a pod's web identity). Settings problems (a missing role, say) are reported only when a layer
/// needs that key manager, so that they never break the pull of images wrapped otherwise.
pub fn environment_opener() -> key_manager::Opener {
    let vault: Client = match VaultArgs::default().client(TIMEOUT, RETRIES) {
        Ok(None) => missing(Manager::Vault),
        Ok(Some(vault)) => Ok(vault),
        Err(error) => Err(format!("{error:#}")),
    };
    opener_of(vault, aws_client(&AwsArgs::default()))
}
