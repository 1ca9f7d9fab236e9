//! The table of key-manager backends: one row per backend, the one place that knows them all.
//!
//! A row says how the backend's references are written (scheme, what the rest means), where each form fits
//! ([`Use`]: wrap, store, bootstrap provider, RemoteConfig source, image recipient, threshold pin, disk secret),
//! its settings (their help heading and flag prefix; the flags themselves are the command's, declared once in one
//! clap struct per backend under that heading), how a reference is checked before any request ([`Backend::parse`])
//! and its line of help. Commands parse every reference through [`parse_for`], so the same reference is accepted
//! wherever it fits and an unsupported combination is refused by naming what that use does take; their help text
//! ([`help_for`]), the man pages and the table in docs/key-managers.md ([`markdown_table`]) are generated from
//! here. A new backend is its module plus one row in [`BACKENDS`]; a reference whose scheme has no typed
//! [`KeyRef`] variant parses to [`KeyRef::Plugin`] (its scheme and text) once its row's check accepted it.
//!
//! Rows are in the order help lists them. The last row, plugins, takes every scheme no other row claims.

use super::Error;
use super::reference::KeyRef;

/// Where a key reference is used: each is one flag (or one flag's value) of some command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Use {
    /// A key that wraps every stored passphrase of a volume key store (`volume --key-wrap`).
    Wrap,
    /// A volume key store (`volume --key-store`).
    Store,
    /// What a bootstrap provider takes (`bootstrap seal --provider NAME --passphrase-uri`).
    Provider,
    /// A RemoteConfig source (`bootstrap seal --remote-config NAME=URI`).
    RemoteConfig,
    /// A key that wraps image layer keys (`image encrypt --recipient`, `image decrypt|authorize|encrypt --key`).
    Recipient,
    /// A pin of a threshold (`--clevis-pin sss`: `t` of these answer).
    ThresholdPin,
    /// A disk passphrase held as a secret (`disk luks-format|convert --secret`).
    Secret,
    /// What a command records for the machine to read back (a passphraseURI); never typed by hand.
    Recorded,
}

impl Use {
    /// Every use, in the order the docs list them.
    pub const ALL: [Use; 8] = [
        Use::Wrap,
        Use::Store,
        Use::Provider,
        Use::RemoteConfig,
        Use::Recipient,
        Use::ThresholdPin,
        Use::Secret,
        Use::Recorded,
    ];

    /// The flag (with its command) that takes references of this use.
    pub fn flag(self) -> &'static str {
        match self {
            Use::Wrap => "--key-wrap",
            Use::Store => "--key-store",
            Use::Provider => "--passphrase-uri",
            Use::RemoteConfig => "--remote-config",
            Use::Recipient => "--recipient/--key",
            Use::ThresholdPin => "--clevis-pin sss",
            Use::Secret => "--secret",
            Use::Recorded => "passphraseURI",
        }
    }

    /// The long flags (without `--`) whose values are references of this use.
    pub fn longs(self) -> &'static [&'static str] {
        match self {
            Use::Wrap => &["key-wrap"],
            Use::Store => &["key-store"],
            Use::Provider => &["passphrase-uri"],
            Use::RemoteConfig => &["remote-config"],
            Use::Recipient => &["recipient", "key"],
            Use::ThresholdPin => &["clevis-config"],
            Use::Secret => &["secret"],
            Use::Recorded => &[],
        }
    }

    /// The commands (`cryptadm NOUN`) whose flags [`Use::longs`] take references of this use.
    pub fn commands(self) -> &'static [&'static str] {
        match self {
            Use::Wrap | Use::Store => &["cryptadm volume"],
            Use::Provider | Use::RemoteConfig | Use::Recorded => &["cryptadm bootstrap"],
            Use::Recipient => &["cryptadm image"],
            Use::ThresholdPin => &["cryptadm bootstrap", "cryptadm disk"],
            Use::Secret => &["cryptadm disk"],
        }
    }

    /// Where it is used, as the docs table says it.
    pub fn used_by(self) -> &'static str {
        match self {
            Use::Wrap => "`volume rotate|serve|import --key-wrap` (`volume rewrap`: Transit and AWS KMS keys)",
            Use::Store => "`volume rotate|serve|import --key-store` (`volume rewrap`: `vault-kv://` and `file://`)",
            Use::Provider => "`bootstrap seal --provider NAME --passphrase-uri`",
            Use::RemoteConfig => "`bootstrap seal --remote-config NAME=URI`",
            Use::Recipient => {
                "`image encrypt --recipient`, `image decrypt|authorize|encrypt --key`, `provider:cryptadm:` options \
                 of `image keyprovider`"
            }
            Use::ThresholdPin => {
                "`--clevis-pin sss` (`bootstrap seal --provider clevis`, `disk luks-format|clevis-bind`)"
            }
            Use::Secret => "`disk luks-format|convert --key-manager barbican --secret`",
            Use::Recorded => "the `passphraseURI` that `bootstrap seal` records (`bootstrap open` reads it)",
        }
    }
}

/// One way of writing a backend's references.
#[derive(Debug)]
pub struct Form {
    /// The syntax, e.g. `aws-kms://ARN`.
    pub syntax: &'static str,
    /// What it names.
    pub names: &'static str,
    /// Where it fits.
    pub uses: &'static [Use],
}

/// Which client a backend's references need: the command builds it from that backend's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    /// OpenBao/Vault (`--vault-*`).
    Vault,
    /// AWS (`--aws-*`).
    Aws,
    /// KMIP (`--kmip-*`).
    Kmip,
    /// OpenStack (`--os-*`, clouds.yaml).
    OpenStack,
    /// Tang servers, through clevis pins (`--clevis-*`).
    Clevis,
    /// This machine's TPM 2.0, through clevis's `tpm2` pin (`--tpm2-device`).
    Tpm2,
}

/// A backend's settings: the client they build, the help heading its flags sit under and the prefix they share.
#[derive(Debug)]
pub struct Settings {
    /// The client they configure.
    pub client: Client,
    /// The help heading of its flags (`cryptadm … --help`, the man pages).
    pub heading: &'static str,
    /// Every one of its flags starts with this (`--vault-`).
    pub flag_prefix: &'static str,
    /// The variables that stand in for the flags, as the docs list them.
    pub variables: &'static str,
}

/// One key-manager backend.
#[derive(Debug)]
pub struct Backend {
    /// Its name: the bootstrap provider's name where it is one, else the scheme.
    pub name: &'static str,
    /// What it is called in messages and help, e.g. `AWS KMS`.
    pub title: &'static str,
    /// The reference schemes it parses (the text before the first `:`).
    pub schemes: &'static [&'static str],
    /// How its references are written.
    pub forms: &'static [Form],
    /// Its bootstrap provider, when it is one (`bootstrap seal --provider NAME`).
    pub provider: Option<&'static str>,
    /// The RemoteConfig provider names it serves (`--remote-config NAME=URI`).
    pub remote_sources: &'static [&'static str],
    /// Its settings, when it has any.
    pub settings: Option<Settings>,
    /// Its line of help.
    pub help: &'static str,
    /// Where the docs say more (a docs/ page).
    pub doc: &'static str,
    /// Checks a reference of one of its schemes, before any request, into its parsed form.
    pub parse: fn(&str) -> Result<KeyRef, Error>,
    /// Whether a reference without a scheme is this backend's (a bare UUID is a Barbican secret, `alias/NAME` a
    /// KMS key).
    pub bare: fn(&str) -> bool,
}

impl Backend {
    /// Whether one of its forms fits `usage`.
    pub fn can(&self, usage: Use) -> bool {
        self.forms.iter().any(|form| form.uses.contains(&usage))
    }

    /// Whether its references need `client`.
    pub fn needs(&self, client: Client) -> bool {
        self.settings.as_ref().is_some_and(|s| s.client == client)
    }

    /// Whether it is the plugins row (any scheme no other row claims).
    pub fn is_plugin(&self) -> bool {
        self.name == PLUGINS
    }

    /// The syntaxes of its forms that fit `usage`.
    pub fn syntaxes(&self, usage: Use) -> impl Iterator<Item = &'static str> + '_ {
        self.forms.iter().filter(move |form| form.uses.contains(&usage)).map(|form| form.syntax)
    }
}

/// The OpenBao/Vault settings heading.
pub const VAULT_HEADING: &str = "OpenBao/Vault (vault-transit://, vault-kv://)";
/// The AWS settings heading.
pub const AWS_HEADING: &str = "AWS (aws-kms://, arn:aws:kms:…, kms://…@ARN, s3://, ssm://)";
/// The KMIP settings heading.
pub const KMIP_HEADING: &str = "KMIP (kmip://)";
/// The Clevis settings heading.
pub const CLEVIS_HEADING: &str = "Clevis (Tang network-bound keys)";
/// The TPM 2.0 settings heading (clevis's `tpm2` pin).
pub const TPM2_HEADING: &str = "TPM 2.0 (clevis tpm2 pin)";
/// The OpenStack settings heading.
pub const OPENSTACK_HEADING: &str = "OpenStack";

/// The scheme of Tang/Clevis references.
pub const CLEVIS: &str = "clevis";
/// The scheme of KMIP references.
pub const KMIP: &str = "kmip";
/// The name of the plugins row.
pub const PLUGINS: &str = "plugins";

/// Every backend, in the order help lists them; plugins last (they take every other scheme).
pub static BACKENDS: &[Backend] = &[
    Backend {
        name: "file",
        title: "local files",
        schemes: &["file"],
        forms: &[
            Form {
                syntax: "file:///ABSOLUTE/PATH",
                names: "a local file (on the machine, for bootstrap)",
                uses: &[Use::Provider, Use::RemoteConfig],
            },
            Form {
                syntax: "file:///DIR",
                names: "files `DIR/<volume id>/current` (and `pending`, `previous`), 0600",
                uses: &[Use::Store],
            },
        ],
        provider: Some("file"),
        remote_sources: &["file", "https"],
        settings: None,
        help: "local files (the `file` provider reads the passphrase on the machine; `https` fetches RemoteConfig)",
        doc: "volume.md",
        parse: super::reference::parse_file,
        bare: no_bare,
    },
    Backend {
        name: "vault-transit",
        title: "OpenBao/Vault Transit",
        schemes: &[super::reference::VAULT_TRANSIT],
        forms: &[
            Form {
                syntax: "vault-transit://MOUNT/KEY",
                names: "Transit key `KEY` of the engine mounted at `MOUNT` (OpenBao or Vault)",
                uses: &[Use::Wrap, Use::Provider, Use::Recipient],
            },
            Form {
                syntax: "vault-transit: {\"key\":\"vault-transit://MOUNT/KEY\"}",
                names: "cryptadm's `vault-transit` pin inside `sss`: Transit wraps the pin's content key \
                        (docs/threshold.md)",
                uses: &[Use::ThresholdPin],
            },
            Form {
                syntax: "vault-transit://WRAPPED@MOUNT/KEY",
                names: "the same key plus a data key it wrapped (`WRAPPED`: the Transit ciphertext `vault:vN:…` in \
                        unpadded base64url)",
                uses: &[Use::Recorded],
            },
        ],
        provider: Some("vault-transit"),
        remote_sources: &[],
        settings: Some(Settings {
            client: Client::Vault,
            heading: VAULT_HEADING,
            flag_prefix: "--vault-",
            variables: "VAULT_*, BAO_*, CRYPTADM_VAULT_*",
        }),
        help: "OpenBao/Vault Transit keys: wrap and unwrap inside the server",
        doc: "key-managers.md",
        parse: super::reference::parse_vault_transit,
        bare: no_bare,
    },
    Backend {
        name: "vault-kv",
        title: "OpenBao/Vault KV v2",
        schemes: &[super::reference::VAULT_KV],
        forms: &[Form {
            syntax: "vault-kv://MOUNT/PREFIX",
            names: "KV version 2 secrets `PREFIX/<volume id>` of the engine mounted at `MOUNT` (check-and-set)",
            uses: &[Use::Store],
        }],
        provider: None,
        remote_sources: &[],
        settings: Some(Settings {
            client: Client::Vault,
            heading: VAULT_HEADING,
            flag_prefix: "--vault-",
            variables: "VAULT_*, BAO_*, CRYPTADM_VAULT_*",
        }),
        help: "OpenBao/Vault KV v2: a key store with versions and check-and-set",
        doc: "volume.md",
        parse: super::reference::parse_vault_kv,
        bare: no_bare,
    },
    Backend {
        name: "barbican",
        title: "OpenStack Barbican",
        schemes: &[super::reference::BARBICAN, "https", "http"],
        forms: &[Form {
            syntax: "barbican://UUID, https://HOST/…/v1/secrets/UUID, UUID",
            names: "a Barbican secret (by UUID or by its href)",
            uses: &[Use::Secret],
        }],
        provider: None,
        remote_sources: &[],
        settings: Some(Settings {
            client: Client::OpenStack,
            heading: OPENSTACK_HEADING,
            flag_prefix: "--os-",
            variables: "OS_*, clouds.yaml",
        }),
        help: "OpenStack Barbican secrets (disk passphrases for Nova and Glance)",
        doc: "openstack.md",
        parse: super::reference::parse_barbican,
        bare: super::reference::is_uuid,
    },
    Backend {
        name: "aws-kms",
        title: "AWS KMS",
        schemes: &[super::reference::AWS_KMS, "arn"],
        forms: &[
            Form {
                syntax: "aws-kms://ARN",
                names: "an AWS KMS key (`ARN`: a key or alias ARN, or `alias/NAME`; images take an ARN only)",
                uses: &[Use::Wrap, Use::Provider, Use::Recipient],
            },
            Form {
                syntax: "arn:aws:kms:REGION:ACCOUNT:key/ID, …:alias/NAME",
                names: "the same key, written bare (an alias of `aws-kms://ARN`)",
                uses: &[Use::Wrap, Use::Provider, Use::Recipient],
            },
            Form {
                syntax: "aws-kms: {\"key\":ARN}",
                names: "cryptadm's `aws-kms` pin inside `sss`: KMS wraps the pin's content key (docs/threshold.md)",
                uses: &[Use::ThresholdPin],
            },
            Form {
                syntax: "kms://BLOB@ARN",
                names: "the same key plus a data key it wrapped (`BLOB`: the KMS CiphertextBlob in standard base64)",
                uses: &[Use::Recorded],
            },
        ],
        provider: Some("aws-kms"),
        remote_sources: &["s3", "aws-secrets-manager", "aws-ssm", "capa-secrets-manager", "capa-ssm-parameter-store"],
        settings: Some(Settings {
            client: Client::Aws,
            heading: AWS_HEADING,
            flag_prefix: "--aws-",
            variables: "AWS_*",
        }),
        help: "AWS KMS keys (and S3, Secrets Manager, SSM as RemoteConfig sources)",
        doc: "aws.md",
        parse: super::reference::parse_aws_kms,
        bare: super::reference::is_bare_aws_kms_key,
    },
    Backend {
        name: CLEVIS,
        title: "Tang (Clevis)",
        schemes: &[CLEVIS],
        forms: &[
            Form {
                syntax: "tang: {\"url\":URL,\"thp\":THUMBPRINT}",
                names: "a Tang server (clevis's `tang` pin; a URL without a scheme is http://)",
                uses: &[Use::ThresholdPin],
            },
            Form {
                syntax: "clevis:<compact JWE>",
                names: "a secret encrypted to Tang servers with clevis's `tang` or `sss` pin, recovered with no \
                        credentials",
                uses: &[Use::Recorded],
            },
        ],
        provider: Some(CLEVIS),
        remote_sources: &[],
        settings: Some(Settings {
            client: Client::Clevis,
            heading: CLEVIS_HEADING,
            flag_prefix: "--clevis-",
            variables: "none",
        }),
        help: "Tang servers through clevis pins (`tang`, `sss`): network-bound, no credentials",
        doc: "tang.md",
        parse: super::reference::parse_clevis,
        bare: no_bare,
    },
    Backend {
        name: "tpm2",
        title: "TPM 2.0 (Clevis)",
        // No reference scheme of its own: a tpm2 pin is configured (`--clevis-pin tpm2 --clevis-config JSON`, or
        // inside an sss pin), and what it sealed is recorded as the clevis row's `clevis:<compact JWE>`.
        schemes: &[],
        forms: &[Form {
            syntax: "tpm2: {\"pcr_bank\":BANK,\"pcr_ids\":IDS}",
            names: "this machine's TPM 2.0 (clevis's `tpm2` pin: the key sealed under the owner hierarchy, to the \
                    PCRs named, if any; `hash`, `key`, `pcr_digest` as clevis takes them)",
            uses: &[Use::ThresholdPin],
        }],
        provider: None,
        remote_sources: &[],
        settings: Some(Settings {
            client: Client::Tpm2,
            heading: TPM2_HEADING,
            flag_prefix: "--tpm2-",
            variables: "CRYPTADM_TPM2_DEVICE, TPM2TOOLS_TCTI",
        }),
        help: "this machine's TPM 2.0 through clevis's `tpm2` pin (alone or in `sss`): machine-bound, no server",
        doc: "tpm2.md",
        parse: pin_only,
        bare: no_bare,
    },
    Backend {
        name: KMIP,
        title: "KMIP",
        schemes: &[KMIP],
        forms: &[
            Form {
                syntax: "kmip://UID",
                names: "the KMIP AES key with unique identifier `UID` (server-side AES-GCM, KMIP 1.4)",
                uses: &[Use::Wrap, Use::Provider],
            },
            Form {
                syntax: "kmip://PREFIX",
                names: "KMIP Secret Data objects named `PREFIX/<volume id>/current`, `…/pending`, `…/previous`",
                uses: &[Use::Store],
            },
            Form {
                syntax: "kmip: {\"key\":\"kmip://UID\"}",
                names: "cryptadm's `kmip` pin inside `sss`: the server's AES-GCM wraps the pin's content key \
                        (docs/threshold.md)",
                uses: &[Use::ThresholdPin],
            },
            Form {
                syntax: "kmip://UID#kmip:v1:WRAPPED",
                names: "the same key plus a passphrase it wrapped (unpadded base64url of nonce ‖ tag ‖ ciphertext)",
                uses: &[Use::Recorded],
            },
        ],
        provider: Some(KMIP),
        remote_sources: &[],
        settings: Some(Settings {
            client: Client::Kmip,
            heading: KMIP_HEADING,
            flag_prefix: "--kmip-",
            variables: "CRYPTADM_KMIP_*",
        }),
        help: "KMIP servers and HSMs (TTLV over TLS, KMIP 1.4)",
        doc: "kmip.md",
        parse: super::reference::parse_kmip,
        bare: no_bare,
    },
    Backend {
        name: PLUGINS,
        title: "a plugin",
        schemes: &[],
        forms: &[Form {
            syntax: "NAME:REST",
            names: "any other scheme: the command's plugin for `NAME` (`machineadm-plugin-encryption-provider-NAME`, \
                    `machineadm-remote-configuration-provider-NAME`, the key-store plugin `cryptadm-plugin-kms-NAME`)",
            uses: &[Use::Store, Use::Provider, Use::RemoteConfig],
        }],
        provider: None,
        remote_sources: &[],
        settings: None,
        help: "plugins: executables found on PATH, for any other scheme",
        doc: "bootstrap.md",
        parse: super::reference::parse_plugin,
        bare: no_bare,
    },
];

fn no_bare(_: &str) -> bool {
    false
}

/// The parse of a row without a scheme (never reached through [`by_scheme`]): a pin is configured, not written as
/// a reference.
fn pin_only(text: &str) -> Result<KeyRef, Error> {
    Err(Error::BadReference {
        reference: crate::redact::url(text),
        problem: "a tpm2 pin is configured with --clevis-pin tpm2 --clevis-config JSON, not written as a reference"
            .into(),
    })
}

/// The row of `scheme`; the plugins row for a scheme no other row claims.
pub fn by_scheme(scheme: &str) -> &'static Backend {
    BACKENDS.iter().find(|b| b.schemes.contains(&scheme)).unwrap_or_else(plugins)
}

/// The row that claims `text`, a reference without a scheme.
pub fn by_bare(text: &str) -> Option<&'static Backend> {
    BACKENDS.iter().find(|b| (b.bare)(text))
}

/// The row named `name`.
pub fn by_name(name: &str) -> Option<&'static Backend> {
    BACKENDS.iter().find(|b| b.name == name)
}

/// The plugins row.
pub fn plugins() -> &'static Backend {
    BACKENDS.last().expect("the table has rows")
}

/// The row whose bootstrap provider is `name`; `None` for a plugin.
pub fn by_provider(name: &str) -> Option<&'static Backend> {
    BACKENDS.iter().find(|b| b.provider == Some(name))
}

/// The built-in bootstrap providers, in table order.
pub fn providers() -> impl Iterator<Item = &'static str> {
    BACKENDS.iter().filter_map(|b| b.provider)
}

/// The built-in RemoteConfig sources, in table order.
pub fn remote_sources() -> impl Iterator<Item = &'static str> {
    BACKENDS.iter().flat_map(|b| b.remote_sources.iter().copied())
}

/// Every syntax that fits `usage`, in table order (plugins' `NAME:REST` last).
pub fn syntaxes(usage: Use) -> Vec<&'static str> {
    BACKENDS.iter().flat_map(|b| b.syntaxes(usage)).collect()
}

/// `a, b or c`.
pub fn or_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// The row a reference belongs to (by its scheme; a bare UUID is Barbican's).
pub fn backend_of(text: &str) -> &'static Backend {
    match text.split_once(':') {
        Some((scheme, _)) => by_scheme(scheme),
        None => by_bare(text).unwrap_or_else(plugins),
    }
}

/// Whether `text` is written in the primary scheme of a key manager (one with settings), or fits `usage`: what a
/// flag that also takes other things (file paths, `jwe:` recipients) hands to [`parse_for`].
pub fn is_key_manager_reference(text: &str, usage: Use) -> bool {
    if backend_of(text).can(usage) && !backend_of(text).is_plugin() {
        return true;
    }
    let Some((scheme, _)) = text.split_once(':') else { return false };
    BACKENDS.iter().any(|b| b.settings.is_some() && b.schemes.first() == Some(&scheme))
}

/// What the `flag` of a use takes, for its help: "vault-transit://MOUNT/KEY, aws-kms://ARN or kmip://UID".
pub fn takes(usage: Use) -> String {
    or_list(&syntaxes(usage))
}

/// The help of a flag that takes references of `usage`, generated from the table.
pub fn help_for(usage: Use) -> String {
    let forms = takes(usage);
    match usage {
        Use::Wrap => format!(
            "Store every passphrase wrapped, never in plain, by this key: {forms} (any store; a store's existing \
             values must already be in this wrap's form)"
        ),
        Use::Store => format!("Key store: {forms}"),
        Use::Provider => format!(
            "Where the provider finds the passphrase: {forms}; `clevis` records its own (clevis:<JWE>), plugins \
             take their own URIs"
        ),
        Use::RemoteConfig => format!(
            "Put a RemoteConfig document before the EncryptedConfig (repeatable); built-in providers: {}, any other \
             NAME is the plugin machineadm-remote-configuration-provider-NAME",
            or_list(&remote_sources().collect::<Vec<_>>())
        ),
        Use::Recipient => format!("A key-manager key: {forms}"),
        Use::ThresholdPin | Use::Secret | Use::Recorded => forms,
    }
}

/// The help of `bootstrap seal --provider`, generated from the table.
pub fn provider_help() -> String {
    let names: Vec<String> = providers().map(|p| format!("`{p}`")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    format!(
        "Provider that fetches the passphrase on the machine: {} (built in) or the name of a plugin \
         (machineadm-plugin-encryption-provider-NAME on PATH)",
        or_list(&names)
    )
}

/// A reference parsed for `usage`, with its row: refused (naming what `flag` takes) when its backend has no form for
/// that use. Nothing is asked of any server.
pub fn parse_for(text: &str, usage: Use, flag: &str) -> Result<(KeyRef, &'static Backend), Error> {
    let backend = backend_of(text);
    if !backend.can(usage) {
        return Err(Error::BadReference {
            reference: crate::redact::url(text),
            problem: format!("{flag} takes {}; this is {} ({})", takes(usage), backend.title, backend.help),
        });
    }
    let reference = KeyRef::parse(text)?;
    Ok((reference, backend))
}

/// Where each built-in key store keeps a volume's passphrases, for hints: "file:///DIR: files `DIR/<volume
/// id>/current` …; vault-kv://…: …".
pub fn store_locations() -> String {
    let places: Vec<String> = BACKENDS
        .iter()
        .filter(|b| !b.is_plugin())
        .flat_map(|b| b.forms.iter())
        .filter(|form| form.uses.contains(&Use::Store))
        .map(|form| format!("{}: {}", form.syntax, form.names))
        .collect();
    places.join("; ")
}

/// The `-v` lines of the clients a command configured: the server, region, endpoint and credential source (never
/// a secret), and the KMIP protocol version (negotiated now, on the connection the command then uses).
pub fn describe_clients(
    vault: Option<&super::vault::Vault>,
    aws: Option<&super::aws::Aws>,
    kmip: Option<&super::kmip::Kmip>,
) -> Vec<String> {
    let title = |client: Client| BACKENDS.iter().find(|b| b.needs(client)).map_or("key manager", |b| b.title);
    let mut lines = Vec::new();
    if let Some(vault) = vault {
        lines.push(format!("key manager: {}", vault.describe()));
    }
    if let Some(aws) = aws {
        lines.push(format!("key manager: {}, {}", title(Client::Aws), aws.describe()));
    }
    if let Some(kmip) = kmip {
        lines.push(match kmip.version() {
            Ok((major, minor)) => format!("key manager: {}, KMIP protocol {major}.{minor}", kmip.service()),
            Err(error) => format!("key manager: {} (protocol version not negotiated: {error})", kmip.service()),
        });
    }
    lines
}

/// The table of docs/key-managers.md, generated: one line per form.
pub fn markdown_table() -> String {
    let mut out = String::from("| reference | backend | what it names | used by |\n| --- | --- | --- | --- |\n");
    for backend in BACKENDS {
        for form in backend.forms {
            let syntax: Vec<String> = form.syntax.split(", ").map(|s| format!("`{s}`")).collect();
            let used: Vec<&str> = form.uses.iter().map(|u| u.used_by()).collect();
            out.push_str(&format!(
                "| {} | [{}]({}) | {} | {} |\n",
                syntax.join(", ").replace('|', "\\|"),
                backend.title,
                backend.doc,
                form.names.replace('|', "\\|"),
                used.join("; ").replace('|', "\\|"),
            ));
        }
    }
    out
}

/// The table of what each use takes, for the man pages and docs: one line per use.
pub fn markdown_uses() -> String {
    let mut out = String::from("| flag | takes |\n| --- | --- |\n");
    for usage in Use::ALL {
        let mut forms: Vec<String> = syntaxes(usage).iter().map(|s| format!("`{s}`")).collect();
        if usage == Use::RemoteConfig {
            let names: Vec<String> = remote_sources().map(|s| format!("`{s}`")).collect();
            forms.insert(0, format!("built-in `NAME`s: {}; their URIs", names.join(", ")));
        }
        out.push_str(&format!("| {} | {} |\n", usage.used_by().replace('|', "\\|"), forms.join(", ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scheme_has_one_row() {
        let mut seen = std::collections::BTreeSet::new();
        for backend in BACKENDS {
            for scheme in backend.schemes {
                assert!(seen.insert(*scheme), "scheme {scheme} claimed twice");
            }
            assert!(!backend.forms.is_empty(), "{}", backend.name);
        }
        assert_eq!(plugins().name, PLUGINS);
    }

    #[test]
    fn the_tpm2_pin_is_a_threshold_pin_with_its_own_settings_and_no_scheme() {
        let tpm2 = by_name("tpm2").expect("a tpm2 row");
        assert!(tpm2.can(Use::ThresholdPin) && !tpm2.can(Use::Provider) && !tpm2.can(Use::Recorded));
        assert!(tpm2.schemes.is_empty() && tpm2.provider.is_none() && !tpm2.is_plugin());
        let settings = tpm2.settings.as_ref().expect("settings");
        assert_eq!((settings.client, settings.heading, settings.flag_prefix), (Client::Tpm2, TPM2_HEADING, "--tpm2-"));
        assert!(settings.variables.contains("CRYPTADM_TPM2_DEVICE") && settings.variables.contains("TPM2TOOLS_TCTI"));
        assert!(help_for(Use::ThresholdPin).contains("tpm2: {"), "{}", help_for(Use::ThresholdPin));
        assert!(markdown_table().contains("[TPM 2.0 (Clevis)](tpm2.md)"));
        // `tpm2:` is no reference scheme: it stays a plugin's, and the row's parse refuses a reference.
        assert!(by_scheme("tpm2").is_plugin());
        assert!(matches!((tpm2.parse)("tpm2:x"), Err(Error::BadReference { .. })));
        assert_eq!(plugins().name, PLUGINS);
    }

    #[test]
    fn the_same_aws_key_fits_every_use() {
        let arn = "arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab";
        for usage in [Use::Wrap, Use::Provider, Use::Recipient] {
            for text in [arn.to_owned(), format!("aws-kms://{arn}")] {
                let (reference, backend) = parse_for(&text, usage, "--x").unwrap();
                assert_eq!(backend.name, "aws-kms");
                assert_eq!(reference, KeyRef::AwsKms { key: arn.into() });
            }
        }
    }

    #[test]
    fn unsupported_combinations_name_what_fits() {
        let error = parse_for("vault-kv://kv/x", Use::Wrap, "--key-wrap").unwrap_err().to_string();
        for form in ["vault-transit://MOUNT/KEY", "aws-kms://ARN", "kmip://UID"] {
            assert!(error.contains(form), "{error}");
        }
        let error = parse_for("kmip://k", Use::Recipient, "--recipient").unwrap_err().to_string();
        assert!(error.contains("--recipient takes") && error.contains("KMIP"), "{error}");
    }

    #[test]
    fn generated_help_lists_every_backend_of_a_use() {
        let wrap = help_for(Use::Wrap);
        assert!(wrap.contains("vault-transit://") && wrap.contains("aws-kms://") && wrap.contains("kmip://UID"));
        let store = help_for(Use::Store);
        assert!(store.contains("file:///DIR") && store.contains("vault-kv://") && store.contains("kmip://PREFIX"));
        let providers = provider_help();
        for name in ["file", "vault-transit", "aws-kms", "clevis", "kmip"] {
            assert!(providers.contains(&format!("`{name}`")), "{providers}");
        }
        let remote = help_for(Use::RemoteConfig);
        for name in ["file", "https", "s3", "aws-secrets-manager", "aws-ssm"] {
            assert!(remote.contains(name), "{remote}");
        }
    }
}
