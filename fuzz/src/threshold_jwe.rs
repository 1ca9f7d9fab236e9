//! Fuzzes the headers of cryptadm's extension pins (`aws-kms`, `vault-transit`, `kmip` inside clevis's `sss`;
//! docs/threshold.md), read from untrusted JWEs (a document's `passphraseURI`, a LUKS2 `clevis` token), and the
//! `sss` configurations that name them. On arbitrary bytes nothing panics and no key manager is asked; a header
//! accepted names a key of its own pin's backend and carries a wrapped key.
//!
//! The seed corpus holds a child JWE of each extension pin and an `sss` of the three (in docs/threshold.md's
//! layout), their header JSON, clevis's own `sss` JWE and an `sss` configuration naming every pin.

use cryptadm::kms::clevis::{self, wrap};

fn check(manager: wrap::Manager, header: &serde_json::Value) {
    if let Ok(parsed) = wrap::WrapHeader::parse(manager, header) {
        assert_eq!(parsed.config.manager, manager);
        assert!(!parsed.wrapped.is_empty() && parsed.wrapped.len() <= 8192);
        assert!(!parsed.config.describe().contains('\n'));
    }
}

/// One fuzz input: panics (or fails an assertion) on a bug, returns otherwise.
pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(jwe) = clevis::Jwe::parse(&text)
        && let Some(manager) = jwe.pin().and_then(wrap::Manager::from_name)
    {
        check(manager, &jwe.header);
    }
    if let Ok(description) = clevis::describe(&text) {
        assert!(!description.contains('\n'), "{description}");
    }
    if let Ok(pin) = clevis::Pin::parse("sss", &text) {
        let _ = pin.describe();
    }
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) {
        for name in wrap::NAMES {
            let manager = wrap::Manager::from_name(name).expect("an extension pin");
            check(manager, &value);
            if let Ok(config) = wrap::WrapConfig::from_json(manager, &value) {
                assert_eq!(config.manager, manager);
            }
        }
    }
}
