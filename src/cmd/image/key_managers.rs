//! How image commands reach the key managers whose keys wrap layer keys: Vault/OpenBao Transit through the shared
//! `--vault-*` flags and the Vault CLI's environment (`cmd::vault_args`), AWS KMS through the `--aws-*` flags and
//! the AWS credential chain (`cmd::aws_args`). A client connects, logs in or reads credentials only when a layer
//! first needs it.

use crate::cmd::aws_args::AwsArgs;
use crate::cmd::vault_args::VaultArgs;
use crate::interact::Interaction;
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

/// Says at `-v` which key managers the command reaches (server, region, endpoint, credential source, never a
/// secret), from the backend table's lines ([`kms::backends::describe_clients`]).
fn describe(vault: Option<&kms::vault::Vault>, aws: Option<&kms::aws::Aws>, ui: &dyn Interaction) {
    for line in kms::backends::describe_clients(vault, aws, None) {
        ui.debug(&line);
    }
}

/// The opener for the `vault-transit://` and `aws-kms://` keys of a command line, whose key managers are
/// `needed`: a usage error (exit 2) when Vault is needed and no server is configured. AWS always has settings (its
/// credential chain ends with the instance metadata service), checked at the first request. At `-v` (`ui`), says
/// which key managers those are.
pub fn opener(
    vault: &VaultArgs,
    aws: &AwsArgs,
    needed: &[Manager],
    ui: &dyn Interaction,
) -> anyhow::Result<key_manager::Opener> {
    let vault = needed
        .contains(&Manager::Vault)
        .then(|| vault.require(TIMEOUT, RETRIES, "a vault-transit:// key"))
        .transpose()?;
    let aws = needed.contains(&Manager::Aws).then(|| aws.client(TIMEOUT, RETRIES));
    describe(vault.as_deref(), aws.as_deref(), ui);
    let vault_client: Client = match vault {
        Some(vault) => Ok(vault),
        None => missing(Manager::Vault),
    };
    let aws_client: Client = match aws {
        Some(aws) => Ok(aws),
        None => missing(Manager::Aws),
    };
    Ok(opener_of(vault_client, aws_client))
}

/// For a node's stream processor and the key provider, which unwrap with whichever key a layer names: Vault when
/// the environment names a server (VAULT_ADDR or BAO_ADDR), AWS with the environment's credential chain (a node's
/// instance profile, a pod's web identity). Settings problems (a missing role, say) are reported only when a layer
/// needs that key manager, so that they never break the pull of images wrapped otherwise. At `-v` (`ui`), says
/// which key managers those are.
pub fn environment_opener(ui: &dyn Interaction) -> key_manager::Opener {
    let vault = VaultArgs::default().client(TIMEOUT, RETRIES);
    let aws = AwsArgs::default().client(TIMEOUT, RETRIES);
    describe(vault.as_ref().ok().and_then(Option::as_deref), Some(&aws), ui);
    let vault: Client = match vault {
        Ok(None) => missing(Manager::Vault),
        Ok(Some(vault)) => Ok(vault),
        Err(error) => Err(format!("{error:#}")),
    };
    opener_of(vault, Ok(aws))
}
