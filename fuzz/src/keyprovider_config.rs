//! Fuzzes the ocicrypt key-provider configuration parser: it must never panic, and every provider it accepts has
//! a name and, for `cmd` providers, a program.

use cryptadm::ocicrypt::keyprovider::{KeyProviderConfig, Provider};

/// One fuzz input: panics (or fails an assertion) on a bug, returns otherwise.
pub fn run(data: &[u8]) {
    let Ok(config) = KeyProviderConfig::from_json(data, "fuzz") else { return };
    for provider in config.providers.values() {
        if let Provider::Cmd { path, .. } = provider {
            assert!(!path.is_empty(), "a cmd provider without a program");
        }
    }
}
