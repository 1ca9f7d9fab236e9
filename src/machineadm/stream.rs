//! Sealing a configuration into a stream, and opening a stream back into the configuration.

use super::Error;
use super::document::{Document, EncryptedConfig, RECOMMENDED_ITERATIONS, RemoteConfig, parse_stream};
use super::envelope::{Nonces, seal_bytes};
use super::provider::{BUILTIN_FILE_PROVIDER, ProviderSettings, file_uri_path, validate_provider_name};
use crate::crypto::{Passphrase, SecretBytes};
use crate::interact::Interaction;
use std::collections::HashMap;

/// What to seal with.
#[derive(Debug, Clone)]
pub struct SealRequest {
    /// Plugin that fetches the passphrase on the machine.
    pub provider: String,
    /// Where that plugin finds the passphrase.
    pub passphrase_uri: String,
    /// RemoteConfig documents placed before the EncryptedConfig.
    pub remote_configs: Vec<RemoteConfig>,
    /// Salt and IV source.
    pub nonces: Nonces,
}

/// Finds the passphrase to seal with, and the passphraseURI to record.
///
/// Order: the `explicit` passphrase (from a flag, a variable or stdin); else the provider plugin's
/// `new-passphrase`; else, for the built-in `file` provider, a prompt with confirmation. `Ok(None)`: no source
/// and no one to ask.
pub fn resolve_seal_passphrase(
    explicit: Option<Passphrase>,
    request: &SealRequest,
    providers: &ProviderSettings,
    ui: &dyn Interaction,
) -> Result<Option<(Passphrase, String)>, Error> {
    validate_provider_name(&request.provider)?;
    if request.provider == BUILTIN_FILE_PROVIDER {
        file_uri_path(&request.passphrase_uri)?;
    }
    if let Some(passphrase) = explicit {
        return Ok(Some((passphrase, request.passphrase_uri.clone())));
    }
    if request.provider != BUILTIN_FILE_PROVIDER {
        return providers.new_passphrase(&request.provider, &request.passphrase_uri, ui).map(Some);
    }
    let prompt = format!("Passphrase (the bytes of {} on the machine)", request.passphrase_uri);
    match ui.request_passphrase(&prompt, true).map_err(Error::Prompt)? {
        Some(passphrase) if passphrase.is_empty() => Err(Error::BadPassphrase("the passphrase is empty".into())),
        other => Ok(other.map(|p| (p, request.passphrase_uri.clone()))),
    }
}

/// Seals `plaintext` into a stream: the RemoteConfig documents, then one EncryptedConfig.
pub fn seal_stream(
    plaintext: &[u8],
    passphrase: &Passphrase,
    passphrase_uri: &str,
    request: &SealRequest,
) -> Result<Vec<Document>, Error> {
    if passphrase.is_empty() {
        return Err(Error::BadPassphrase("the passphrase is empty".into()));
    }
    let mut documents: Vec<Document> = request.remote_configs.iter().cloned().map(Document::Remote).collect();
    let sealed = seal_bytes(plaintext, passphrase, &request.provider, passphrase_uri, &request.nonces);
    documents.push(Document::Encrypted(sealed));
    Ok(documents)
}

/// How to open a stream.
#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    /// Refuse RemoteConfig documents instead of skipping them.
    pub strict: bool,
}

/// The result of opening a stream.
pub struct Opened {
    /// The decrypted configuration: every EncryptedConfig's plaintext, in order.
    pub plaintext: SecretBytes,
    /// How many EncryptedConfig documents were decrypted.
    pub decrypted: usize,
    /// How many RemoteConfig documents were skipped.
    pub skipped: usize,
}

/// Opens a machineadm stream: validates every document first, then decrypts the EncryptedConfig documents in
/// order with the `explicit` passphrase or, without one, the passphrase each document's provider returns.
pub fn open_stream(
    input: &[u8],
    explicit: Option<&Passphrase>,
    providers: &ProviderSettings,
    options: &OpenOptions,
    ui: &dyn Interaction,
) -> Result<Opened, Error> {
    let documents = parse_stream(input)?;
    preflight(&documents, options)?;
    let mut fetched: HashMap<(String, String), Passphrase> = HashMap::new();
    let mut plaintext = SecretBytes::new(Vec::new());
    let (mut decrypted, mut skipped) = (0, 0);
    for (position, document) in documents.iter().enumerate() {
        let index = position + 1;
        match document {
            Document::Remote(remote) => {
                ui.info(&format!(
                    "skipping document {index}: RemoteConfig `{}` (provider `{}`); cryptadm does not fetch remote configuration",
                    remote.name, remote.provider
                ));
                skipped += 1;
            }
            Document::Encrypted(doc) => {
                ui.debug(&format!(
                    "document {index}: EncryptedConfig, provider `{}`, passphraseURI `{}`, {} PBKDF2 iterations, {} ciphertext bytes",
                    doc.provider,
                    doc.passphrase_uri,
                    doc.iterations,
                    doc.ciphertext.len()
                ));
                let chunk = match explicit {
                    Some(passphrase) => doc.decrypt(index, passphrase)?,
                    None => {
                        let key = (doc.provider.clone(), doc.passphrase_uri.clone());
                        if !fetched.contains_key(&key) {
                            fetched.insert(key.clone(), fetch_passphrase(doc, providers, ui)?);
                        }
                        doc.decrypt(index, &fetched[&key])?
                    }
                };
                ui.info(&format!(
                    "decrypted document {index}: EncryptedConfig (provider `{}`, {} bytes)",
                    doc.provider,
                    chunk.len()
                ));
                append_document(&mut plaintext, &chunk);
                decrypted += 1;
            }
        }
    }
    Ok(Opened { plaintext, decrypted, skipped })
}

/// Everything that can be known wrong without a passphrase fails before any provider runs.
fn preflight(documents: &[Document], options: &OpenOptions) -> Result<(), Error> {
    for (position, document) in documents.iter().enumerate() {
        if let (true, Document::Remote(remote)) = (options.strict, document) {
            return Err(Error::RemoteRefused { index: position + 1, name: remote.name.clone() });
        }
    }
    if !documents.iter().any(|d| matches!(d, Document::Encrypted(_))) {
        return Err(Error::NothingToOpen);
    }
    Ok(())
}

fn fetch_passphrase(
    doc: &EncryptedConfig,
    providers: &ProviderSettings,
    ui: &dyn Interaction,
) -> Result<Passphrase, Error> {
    if doc.iterations < RECOMMENDED_ITERATIONS {
        ui.warn(&format!(
            "EncryptedConfig uses {} PBKDF2 iterations, fewer than the {RECOMMENDED_ITERATIONS} the proposal requires",
            doc.iterations
        ));
    }
    match providers.get_passphrase(&doc.provider, &doc.passphrase_uri, ui) {
        Err(not_found @ Error::ProviderNotFound { .. }) => {
            // An operator at a terminal may type the passphrase instead of installing the plugin.
            let prompt = format!("Passphrase for provider `{}` ({})", doc.provider, doc.passphrase_uri);
            match ui.request_passphrase(&prompt, false).map_err(Error::Prompt)? {
                Some(passphrase) if !passphrase.is_empty() => Ok(passphrase),
                _ => Err(not_found),
            }
        }
        other => other,
    }
}

/// Concatenates decrypted documents, separated by `---` unless the previous one already ends with a separator.
fn append_document(out: &mut SecretBytes, chunk: &[u8]) {
    if !out.is_empty() {
        if !out.ends_with(b"\n") {
            out.push(b'\n');
        }
        if !out.ends_with(b"---\n") {
            out.extend_from_slice(b"---\n");
        }
    }
    out.extend_from_slice(chunk);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interact::NonInteractive;
    use std::time::Duration;

    fn settings() -> ProviderSettings {
        ProviderSettings {
            search_dirs: vec![],
            timeout: Duration::from_secs(1),
            retries: 0,
            first_backoff: Duration::ZERO,
        }
    }

    fn request(remote: Vec<RemoteConfig>) -> SealRequest {
        SealRequest {
            provider: "file".into(),
            passphrase_uri: "file:///nonexistent".into(),
            remote_configs: remote,
            nonces: Nonces::Fresh,
        }
    }

    fn to_yaml(docs: &[Document]) -> String {
        crate::render::yaml_stream(docs.iter().map(Document::wire)).unwrap()
    }

    #[test]
    fn joins_documents() {
        let mut out = SecretBytes::new(Vec::new());
        append_document(&mut out, b"a: 1");
        append_document(&mut out, b"b: 2\n---\n");
        append_document(&mut out, b"c: 3\n");
        assert_eq!(out.as_slice(), b"a: 1\n---\nb: 2\n---\nc: 3\n");
    }

    #[test]
    fn open_skips_remote_configs_and_concatenates() {
        let pass = Passphrase::new(b"pw".to_vec());
        let remote = RemoteConfig { name: "r".into(), provider: "s3".into(), uri: "s3://b/k".into() };
        let first = to_yaml(&seal_stream(b"a: 1\n", &pass, "file:///x", &request(vec![remote])).unwrap());
        let second = to_yaml(&seal_stream(b"b: 2\n", &pass, "file:///x", &request(vec![])).unwrap());
        let stream = format!("{first}---\n{second}");
        let opened =
            open_stream(stream.as_bytes(), Some(&pass), &settings(), &OpenOptions::default(), &NonInteractive).unwrap();
        assert_eq!((opened.decrypted, opened.skipped), (2, 1));
        assert_eq!(opened.plaintext.as_slice(), b"a: 1\n---\nb: 2\n");
        let strict =
            open_stream(stream.as_bytes(), Some(&pass), &settings(), &OpenOptions { strict: true }, &NonInteractive);
        assert!(matches!(strict, Err(Error::RemoteRefused { index: 1, .. })));
    }

    #[test]
    fn missing_plugin_without_prompt_is_not_found() {
        let pass = Passphrase::new(b"pw".to_vec());
        let mut req = request(vec![]);
        req.provider = "aws".into();
        let stream = to_yaml(&seal_stream(b"x", &pass, "kms://a@b", &req).unwrap());
        let err = open_stream(stream.as_bytes(), None, &settings(), &OpenOptions::default(), &NonInteractive);
        assert!(matches!(err, Err(Error::ProviderNotFound { .. })));
    }

    #[test]
    fn seal_without_source_or_terminal_resolves_to_none() {
        assert!(resolve_seal_passphrase(None, &request(vec![]), &settings(), &NonInteractive).unwrap().is_none());
    }
}
