//! Sealing a configuration into a stream, and opening a stream back into the configuration.

use super::Error;
use super::document::{Document, EncryptedConfig, RECOMMENDED_ITERATIONS, RemoteConfig, parse_fetched, parse_stream};
use super::envelope::{Nonces, seal_bytes};
use super::provider::{
    BUILTIN_FILE_PROVIDER, BUILTIN_VAULT_TRANSIT_PROVIDER, ProviderSettings, file_uri_path, validate_provider_name,
};
use super::remote::{MAX_REMOTE_DEPTH, MAX_REMOTE_FETCHES, RemoteSettings};
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
    if request.provider == BUILTIN_VAULT_TRANSIT_PROVIDER {
        // A given passphrase is wrapped by Transit; without one, Transit makes a data key.
        return providers.vault_transit_new(&request.passphrase_uri, explicit, ui).map(Some);
    }
    if request.provider == super::BUILTIN_KMIP_PROVIDER {
        // A given passphrase is wrapped by the KMIP key; without one, a random one is.
        return providers.kmip_new(&request.passphrase_uri, explicit, ui).map(Some);
    }
    if request.provider == super::aws_kms::BUILTIN_AWS_KMS_PROVIDER {
        // A given passphrase is wrapped by KMS Encrypt; without one, KMS GenerateDataKey makes it.
        return providers.aws_kms_new(&request.passphrase_uri, explicit, ui).map(Some);
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
    /// Refuse RemoteConfig documents (in-band configuration only) instead of fetching them.
    pub strict: bool,
    /// Skip RemoteConfig documents instead of fetching them.
    pub skip_remote: bool,
    /// How RemoteConfig documents are fetched.
    pub remote: RemoteSettings,
}

/// The result of opening a stream.
pub struct Opened {
    /// The configuration: every EncryptedConfig's plaintext and every fetched plain configuration, in order.
    pub plaintext: SecretBytes,
    /// How many EncryptedConfig documents were decrypted (fetched ones included).
    pub decrypted: usize,
    /// How many RemoteConfig documents were fetched.
    pub fetched: usize,
    /// How many RemoteConfig documents were skipped.
    pub skipped: usize,
}

/// Opens a machineadm stream. First every document is validated and every RemoteConfig fetched, recursively,
/// each fetched stream processed in place of its RemoteConfig; then the EncryptedConfig documents are
/// decrypted in order with the `explicit` passphrase or, without one, the passphrase each document's provider
/// returns. Nothing is returned unless every step succeeded.
pub fn open_stream(
    input: &[u8],
    explicit: Option<&Passphrase>,
    providers: &ProviderSettings,
    options: &OpenOptions,
    ui: &dyn Interaction,
) -> Result<Opened, Error> {
    let documents = parse_stream(input)?;
    preflight(&documents, options)?;
    let mut expansion =
        Expansion { providers, options, ui, chain: Vec::new(), pieces: Vec::new(), fetched: 0, skipped: 0 };
    expansion.expand(documents, &[])?;
    let Expansion { pieces, fetched, skipped, .. } = expansion;
    if pieces.is_empty() {
        return Err(Error::NothingToOpen);
    }

    let mut passphrases: HashMap<(String, String), Passphrase> = HashMap::new();
    let mut plaintext = SecretBytes::new(Vec::new());
    let mut decrypted = 0;
    for piece in &pieces {
        match piece {
            Piece::Plain { bytes, .. } => append_document(&mut plaintext, bytes),
            Piece::Encrypted { origin, index, doc } => {
                let index = *index;
                ui.debug(&format!(
                    "{}: EncryptedConfig, provider `{}`, passphraseURI `{}`, {} PBKDF2 iterations, {} ciphertext bytes",
                    describe(origin, index),
                    doc.provider,
                    crate::redact::url(&doc.passphrase_uri),
                    doc.iterations,
                    doc.ciphertext.len()
                ));
                // Whatever supplies the passphrase (a flag, a file, a plugin): a weak KDF is worth a warning.
                if doc.iterations < RECOMMENDED_ITERATIONS {
                    ui.warn(&format!(
                        "{}: EncryptedConfig uses {} PBKDF2 iterations, fewer than the {RECOMMENDED_ITERATIONS} the \
                         proposal requires",
                        describe(origin, index),
                        doc.iterations
                    ));
                }
                let chunk = match explicit {
                    Some(passphrase) => doc.decrypt(index, passphrase),
                    None => {
                        let key = (doc.provider.clone(), doc.passphrase_uri.clone());
                        if !passphrases.contains_key(&key) {
                            let passphrase = fetch_passphrase(doc, providers, ui).map_err(|e| nest(origin, e))?;
                            passphrases.insert(key.clone(), passphrase);
                        }
                        doc.decrypt(index, &passphrases[&key])
                    }
                }
                .map_err(|e| nest(origin, e))?;
                ui.info(&format!(
                    "decrypted {}: EncryptedConfig (provider `{}`, {} bytes)",
                    describe(origin, index),
                    doc.provider,
                    chunk.len()
                ));
                append_document(&mut plaintext, &chunk);
                decrypted += 1;
            }
        }
    }
    Ok(Opened { plaintext, decrypted, fetched, skipped })
}

/// Everything that can be known wrong without a passphrase or a fetch fails before any provider runs.
fn preflight(documents: &[Document], options: &OpenOptions) -> Result<(), Error> {
    for (position, document) in documents.iter().enumerate() {
        if let (true, Document::Remote(remote)) = (options.strict, document) {
            return Err(Error::RemoteRefused { index: position + 1, name: remote.name.clone() });
        }
    }
    Ok(())
}

/// A RemoteConfig document on the way to a piece of the output.
#[derive(Debug, Clone)]
struct Hop {
    index: usize,
    name: String,
    provider: String,
}

/// One part of the output, in stream order.
enum Piece {
    /// An EncryptedConfig (document `index` of the stream reached through `origin`), decrypted later.
    Encrypted { origin: Vec<Hop>, index: usize, doc: EncryptedConfig },
    /// Plain configuration a RemoteConfig returned, used as it is.
    Plain { bytes: SecretBytes },
}

/// The first phase of opening: every RemoteConfig fetched, every fetched stream validated.
struct Expansion<'a> {
    providers: &'a ProviderSettings,
    options: &'a OpenOptions,
    ui: &'a dyn Interaction,
    /// (provider, uri) of the fetches being processed, outermost first: a loop finds itself here.
    chain: Vec<(String, String)>,
    pieces: Vec<Piece>,
    fetched: usize,
    skipped: usize,
}

impl Expansion<'_> {
    fn expand(&mut self, documents: Vec<Document>, origin: &[Hop]) -> Result<(), Error> {
        for (position, document) in documents.into_iter().enumerate() {
            let index = position + 1;
            match document {
                Document::Encrypted(doc) => self.pieces.push(Piece::Encrypted { origin: origin.to_vec(), index, doc }),
                Document::Remote(remote) if self.options.skip_remote => {
                    self.ui.info(&format!(
                        "skipping {}: RemoteConfig `{}` (provider `{}`)",
                        describe(origin, index),
                        remote.name,
                        remote.provider
                    ));
                    self.skipped += 1;
                }
                Document::Remote(remote) => {
                    let hop = Hop { index, name: remote.name.clone(), provider: remote.provider.clone() };
                    let mut inner = origin.to_vec();
                    inner.push(hop.clone());
                    self.follow(&remote, &inner, describe(origin, index)).map_err(|source| Error::Remote {
                        index: hop.index,
                        name: hop.name,
                        provider: hop.provider,
                        source: Box::new(source),
                    })?;
                }
            }
        }
        Ok(())
    }

    fn follow(&mut self, remote: &RemoteConfig, origin: &[Hop], at: String) -> Result<(), Error> {
        let key = (remote.provider.clone(), remote.uri.clone());
        if self.chain.contains(&key) {
            let chain: Vec<String> = self
                .chain
                .iter()
                .chain(std::iter::once(&key))
                .map(|(p, u)| format!("{p} {}", crate::redact::url(u)))
                .collect();
            return Err(Error::RemoteLoop { chain: chain.join(" → ") });
        }
        if self.chain.len() >= MAX_REMOTE_DEPTH {
            return Err(Error::RemoteTooDeep { limit: MAX_REMOTE_DEPTH });
        }
        if self.fetched >= MAX_REMOTE_FETCHES {
            return Err(Error::TooManyFetches { limit: MAX_REMOTE_FETCHES });
        }
        self.fetched += 1;
        // `origin` ends with this RemoteConfig: more than one hop means it came from a fetched stream.
        let bytes = self.options.remote.fetch(remote, origin.len() > 1, self.providers, self.ui)?;
        if bytes.is_empty() {
            return Err(Error::BadRemoteContent("is empty"));
        }
        match parse_fetched(&bytes)? {
            Some(documents) => {
                self.ui.info(&format!(
                    "fetched {at}: RemoteConfig `{}` (provider `{}`): a machineadm stream of {} documents",
                    remote.name,
                    remote.provider,
                    documents.len()
                ));
                self.chain.push(key);
                let result = self.expand(documents, origin);
                self.chain.pop();
                result
            }
            None => {
                self.ui.info(&format!(
                    "fetched {at}: RemoteConfig `{}` (provider `{}`): {} bytes of plain configuration",
                    remote.name,
                    remote.provider,
                    bytes.len()
                ));
                self.pieces.push(Piece::Plain { bytes });
                Ok(())
            }
        }
    }
}

/// "document 2", or "document 2 of RemoteConfig `a` > `b`" for a document of a fetched stream.
fn describe(origin: &[Hop], index: usize) -> String {
    if origin.is_empty() {
        return format!("document {index}");
    }
    let path: Vec<String> = origin.iter().map(|hop| format!("`{}`", hop.name)).collect();
    format!("document {index} of RemoteConfig {}", path.join(" > "))
}

/// Wraps an error of a fetched document in the RemoteConfig documents that led to it.
fn nest(origin: &[Hop], error: Error) -> Error {
    origin.iter().rev().fold(error, |source, hop| Error::Remote {
        index: hop.index,
        name: hop.name.clone(),
        provider: hop.provider.clone(),
        source: Box::new(source),
    })
}

fn fetch_passphrase(
    doc: &EncryptedConfig,
    providers: &ProviderSettings,
    ui: &dyn Interaction,
) -> Result<Passphrase, Error> {
    match providers.get_passphrase(&doc.provider, &doc.passphrase_uri, ui) {
        Err(not_found @ Error::ProviderNotFound { .. }) => {
            // An operator at a terminal may type the passphrase instead of installing the plugin.
            let prompt =
                format!("Passphrase for provider `{}` ({})", doc.provider, crate::redact::url(&doc.passphrase_uri));
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
            vault: None,
            kmip: None,
            aws: None,
            proxies: crate::proxy::Proxies::default(),
            tpm2: Default::default(),
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
    fn open_skips_remote_configs_when_asked_and_concatenates() {
        let pass = Passphrase::new(b"pw".to_vec());
        let remote = RemoteConfig { name: "r".into(), provider: "s3".into(), uri: "s3://b/k".into() };
        let first = to_yaml(&seal_stream(b"a: 1\n", &pass, "file:///x", &request(vec![remote])).unwrap());
        let second = to_yaml(&seal_stream(b"b: 2\n", &pass, "file:///x", &request(vec![])).unwrap());
        let stream = format!("{first}---\n{second}");
        let skip = OpenOptions { skip_remote: true, ..OpenOptions::default() };
        let opened = open_stream(stream.as_bytes(), Some(&pass), &settings(), &skip, &NonInteractive).unwrap();
        assert_eq!((opened.decrypted, opened.skipped), (2, 1));
        assert_eq!(opened.plaintext.as_slice(), b"a: 1\n---\nb: 2\n");
        let strict = OpenOptions { strict: true, ..OpenOptions::default() };
        let strict = open_stream(stream.as_bytes(), Some(&pass), &settings(), &strict, &NonInteractive);
        assert!(matches!(strict, Err(Error::RemoteRefused { index: 1, .. })));
    }

    fn remote(name: &str, provider: &str, uri: &str) -> String {
        format!(
            "apiVersion: machineadm.cluster.x-k8s.io/v1alpha1\nkind: RemoteConfig\nmetadata:\n  name: {name}\nspec:\n  provider: {provider}\n  uri: {uri}\n"
        )
    }

    #[test]
    fn remote_configs_are_fetched_in_place_and_nested() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str| format!("file://{}/{name}", dir.path().display());
        // A remote-configuration plugin that prints the file its URI names: nesting without the `file` provider,
        // which only the input stream itself may use.
        let plugin = dir.path().join("machineadm-remote-configuration-provider-cat");
        std::fs::write(&plugin, "#!/bin/sh\nexec cat \"${2#cat://}\"\n").unwrap();
        std::fs::set_permissions(&plugin, std::fs::Permissions::from_mode(0o755)).unwrap();
        let providers = ProviderSettings { search_dirs: vec![dir.path().to_owned()], ..settings() };
        let cat = |name: &str| format!("cat://{}/{name}", dir.path().display());
        let pass = Passphrase::new(b"pw".to_vec());
        let sealed = |text: &[u8]| to_yaml(&seal_stream(text, &pass, "file:///x", &request(vec![])).unwrap());
        std::fs::write(dir.path().join("plain.yaml"), b"plain: 3\n").unwrap();
        let inner = format!("{}---\n{}", sealed(b"inner: 1\n"), remote("p", "cat", &cat("plain.yaml")));
        std::fs::write(dir.path().join("inner.yaml"), inner).unwrap();
        let top = format!("{}---\n{}", remote("i", "file", &at("inner.yaml")), sealed(b"top: 2\n"));
        let opened =
            open_stream(top.as_bytes(), Some(&pass), &providers, &OpenOptions::default(), &NonInteractive).unwrap();
        assert_eq!(opened.plaintext.as_slice(), b"inner: 1\n---\nplain: 3\n---\ntop: 2\n");
        assert_eq!((opened.decrypted, opened.fetched), (2, 2));

        // A fetched stream may not make the machine read a local file.
        std::fs::write(dir.path().join("asks-file.yaml"), remote("f", "file", &at("plain.yaml"))).unwrap();
        let err = open_stream(
            remote("a", "file", &at("asks-file.yaml")).as_bytes(),
            None,
            &providers,
            &OpenOptions::default(),
            &NonInteractive,
        )
        .err()
        .unwrap();
        assert_eq!(crate::exit::Classify::status(&err), crate::exit::ExitStatus::InvalidInput);
        assert!(format!("{:#}", anyhow::Error::new(err)).contains("may not read local files"));

        // A loop: a.yaml → b.yaml → a.yaml.
        std::fs::write(dir.path().join("a.yaml"), remote("b", "cat", &cat("b.yaml"))).unwrap();
        std::fs::write(dir.path().join("b.yaml"), remote("a", "cat", &cat("a.yaml"))).unwrap();
        let err = open_stream(
            remote("a", "cat", &cat("a.yaml")).as_bytes(),
            None,
            &providers,
            &OpenOptions::default(),
            &NonInteractive,
        )
        .err()
        .unwrap();
        let text = format!("{:#}", anyhow::Error::new(err));
        assert!(text.contains("RemoteConfig loop") && text.contains("a.yaml → cat"), "{text}");

        // Too deep: d0 → d1 → … each a new file.
        for depth in 0..6 {
            std::fs::write(dir.path().join(format!("d{depth}")), remote("d", "cat", &cat(&format!("d{}", depth + 1))))
                .unwrap();
        }
        let err = open_stream(
            remote("d", "cat", &cat("d0")).as_bytes(),
            None,
            &providers,
            &OpenOptions::default(),
            &NonInteractive,
        )
        .err()
        .unwrap();
        assert!(format!("{:#}", anyhow::Error::new(err)).contains("nested more than 4 deep"));

        // Mixed content is refused; a missing file is not found.
        std::fs::write(
            dir.path().join("mixed.yaml"),
            format!("{}---\nkind: ConfigMap\napiVersion: v1\n", sealed(b"x")),
        )
        .unwrap();
        let err = open_stream(
            remote("m", "file", &at("mixed.yaml")).as_bytes(),
            Some(&pass),
            &settings(),
            &OpenOptions::default(),
            &NonInteractive,
        )
        .err()
        .unwrap();
        assert!(
            matches!(&err, Error::Remote { source, .. } if matches!(**source, Error::BadRemoteContent(_))),
            "{err}"
        );
        let err = open_stream(
            remote("n", "file", &at("none.yaml")).as_bytes(),
            None,
            &settings(),
            &OpenOptions::default(),
            &NonInteractive,
        )
        .err()
        .unwrap();
        assert_eq!(crate::exit::Classify::status(&err), crate::exit::ExitStatus::NotFound);
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
