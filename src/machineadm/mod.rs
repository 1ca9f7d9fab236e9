//! The Cluster API machineadm "encrypted configuration": versioned `EncryptedConfig` documents that carry a
//! machine configuration sealed with PBKDF2-HMAC-SHA-512 and AES-256-GCM, the passphrase providers that fetch
//! their passphrase on the machine, `RemoteConfig` documents fetched by remote-configuration providers, and the
//! cloud-init userdata and Ignition configs that ship them.
//!
//! The proposal (kubernetes-sigs/cluster-api PR #4221) was never merged or implemented, so this module pins
//! down what it left open; `docs/formats.md#machineadm-encryptedconfig` lists each choice and why.

mod aws_kms;
mod aws_remote;
mod cloudinit;
mod document;
mod envelope;
mod error;
mod ignition;
mod kmip_provider;
mod provider;
pub(crate) mod remote;
mod stream;

pub use aws_kms::{AWS_DATA_KEY_BYTES, BUILTIN_AWS_KMS_PROVIDER, parse_kms_uri};
pub use aws_remote::{BUILTIN_REMOTE_S3, BUILTIN_REMOTE_SECRETS_MANAGER, BUILTIN_REMOTE_SSM};
pub use cloudinit::{
    CLOUD_INIT_STREAM_PATH, CONFIG_PATH, DEFAULT_CRYPTADM_PATH, USERDATA_SIZE_WARNING, default_template, gzip_base64,
    render_template, validate_cryptadm_path,
};
pub use document::{
    API_VERSION, Document, EncryptedConfig, MAX_ITERATIONS, MAX_SEAL_INPUT_BYTES, MAX_STREAM_BYTES,
    RECOMMENDED_ITERATIONS, RemoteConfig, parse_stream,
};
pub use envelope::{Nonces, seal_bytes};
pub use error::Error;
pub use ignition::{
    AWS_ENV_FILE, IGNITION_STREAM_PATH, KMIP_ENV_FILE, UNIT_NAME, VAULT_ENV_FILE, render_ignition, unit,
};
pub use kmip_provider::{BUILTIN_KMIP_PROVIDER, KMIP_PASSPHRASE_BYTES};
pub use provider::{
    BUILTIN_CLEVIS_PROVIDER, BUILTIN_FILE_PROVIDER, BUILTIN_VAULT_TRANSIT_PROVIDER, MAX_PLUGIN_OUTPUT, PLUGIN_PREFIX,
    ProviderSettings, SYSTEM_PLUGIN_DIRS, validate_provider_name,
};
pub use remote::{
    BUILTIN_REMOTE_FILE, BUILTIN_REMOTE_HTTPS, MAX_REMOTE_BYTES, MAX_REMOTE_DEPTH, MAX_REMOTE_FETCHES,
    REMOTE_PLUGIN_PREFIX, RemoteSettings,
};
pub use stream::{OpenOptions, Opened, SealRequest, open_stream, resolve_seal_passphrase, seal_stream};

/// Renders documents as a YAML stream or JSON, in the proposal's key order.
pub fn render_documents(
    documents: &[Document],
    format: crate::render::OutputFormat,
) -> Result<String, crate::render::RenderError> {
    crate::render::documents(format, documents.iter().map(Document::wire))
}
