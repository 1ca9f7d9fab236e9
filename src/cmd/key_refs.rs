//! Key references on the command line: every flag that takes one parses it here, through the backend table of
//! `kms/` ([`crate::kms::backends`]), which knows every backend; this module names none.
//!
//! A reference that is malformed, or whose backend has no form for the flag's use, is a usage error (exit 2) that
//! names what the flag takes, before any request.

use super::error::Failure;
use crate::exit::ExitStatus;
use crate::kms::KeyRef;
use crate::kms::backends::{self, Backend, Client, Use};

/// `text`, given to `flag` for `usage`, parsed and checked; a usage error naming what `flag` takes otherwise.
pub fn parse(text: &str, usage: Use, flag: &str) -> anyhow::Result<(KeyRef, &'static Backend)> {
    backends::parse_for(text, usage, flag).map_err(|error| {
        Failure::new(ExitStatus::Usage, format!("{flag}: {error}"))
            .with_hint(format!("{flag} takes {}", backends::takes(usage)))
            .into()
    })
}

/// A volume's key store and the key wrapping its values, parsed: which clients they need.
#[derive(Debug)]
pub struct StoreRefs {
    /// The key store's backend.
    pub store: &'static Backend,
    /// The `--key-wrap` key and its backend.
    pub wrap: Option<(KeyRef, &'static Backend)>,
}

impl StoreRefs {
    /// `--key-store` and `--key-wrap`, parsed; a wrap on a store that cannot hold wrapped values is refused,
    /// naming the stores that can.
    pub fn parse(key_store: &str, key_wrap: Option<&str>) -> anyhow::Result<Self> {
        let (_, store) = parse(key_store, Use::Store, "--key-store")?;
        let wrap = key_wrap.map(|text| parse(text, Use::Wrap, "--key-wrap")).transpose()?;
        if wrap.is_some() && store.is_plugin() {
            let built_in: Vec<&str> =
                backends::BACKENDS.iter().filter(|b| !b.is_plugin()).flat_map(|b| b.syntaxes(Use::Store)).collect();
            return Err(Failure::new(
                ExitStatus::Usage,
                format!(
                    "--key-wrap wraps the values of the built-in key stores ({}); `{}` is a plugin's store, which \
                     keeps its values its own way",
                    backends::or_list(&built_in),
                    crate::redact::url(key_store)
                ),
            )
            .with_hint(format!("use --key-store {}, or drop --key-wrap", backends::or_list(&built_in)))
            .into());
        }
        Ok(Self { store, wrap })
    }

    /// Whether the store or the wrap needs `client`.
    pub fn needs(&self, client: Client) -> bool {
        self.store.needs(client) || self.wrap.as_ref().is_some_and(|(_, backend)| backend.needs(client))
    }

    /// The `--key-wrap` key, parsed.
    pub fn key_wrap(&self) -> Option<&KeyRef> {
        self.wrap.as_ref().map(|(reference, _)| reference)
    }
}

/// The `-v` lines of the key managers a volume command reaches: which backend, its endpoint, region and credential
/// source (never a secret), and the KMIP protocol version (negotiated now, so that it can be said).
pub fn describe(key_store: &str, backends: &crate::volume::keystore::Backends) -> Vec<String> {
    describe_clients(
        key_store,
        backends.key_wrap.as_ref(),
        backends.vault.as_deref(),
        backends.aws.as_deref(),
        backends.kmip.as_deref(),
    )
}

/// [`describe`] from the clients themselves (`volume rewrap`, which builds them without a
/// [`crate::volume::keystore::Backends`]).
pub fn describe_clients(
    key_store: &str,
    key_wrap: Option<&KeyRef>,
    vault: Option<&crate::kms::vault::Vault>,
    aws: Option<&crate::kms::aws::Aws>,
    kmip: Option<&crate::kms::kmip::Kmip>,
) -> Vec<String> {
    let mut lines =
        vec![format!("key store `{}`: {}", crate::redact::url(key_store), backends::backend_of(key_store).title)];
    if let Some(wrap) = key_wrap {
        lines.push(format!("--key-wrap `{wrap}`: {}", backends::backend_of(&wrap.to_string()).title));
    }
    lines.extend(backends::describe_clients(vault, aws, kmip));
    lines
}
