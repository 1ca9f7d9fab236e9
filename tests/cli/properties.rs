//! Properties of the machineadm library API, checked on generated inputs: sealing round-trips, the wire format
//! round-trips, the parser never panics, and any altered byte of a sealed document fails authentication.

use crate::support::{VECTOR_DOCUMENT, VECTOR_PASSPHRASE, VECTOR_PLAINTEXT};
use cryptadm::crypto::Passphrase;
use cryptadm::crypto::aead::seal_aes256gcm;
use cryptadm::crypto::kdf::pbkdf2_sha512;
use cryptadm::exit::{Classify, ExitStatus};
use cryptadm::interact::NonInteractive;
use cryptadm::machineadm::{
    Document, EncryptedConfig, Error, MAX_ITERATIONS, Nonces, OpenOptions, ProviderSettings, RemoteConfig, SealRequest,
    open_stream, parse_stream, render_documents, seal_stream,
};
use cryptadm::render::OutputFormat;
use proptest::prelude::*;
use std::time::Duration;

/// Settings with no plugin directory: every open below passes an explicit passphrase.
fn no_plugins() -> ProviderSettings {
    ProviderSettings {
        search_dirs: vec![],
        timeout: Duration::from_secs(1),
        retries: 0,
        first_backoff: Duration::ZERO,
        vault: None,
        kmip: None,
        aws: None,
        proxies: Default::default(),
        tpm2: Default::default(),
    }
}

fn format_of(json: bool) -> OutputFormat {
    if json { OutputFormat::Json } else { OutputFormat::Yaml }
}

fn open(input: &[u8], passphrase: &Passphrase) -> Result<cryptadm::machineadm::Opened, Error> {
    open_stream(input, Some(passphrase), &no_plugins(), &OpenOptions::default(), &NonInteractive)
}

/// Whatever parses must render and parse back to the same documents.
fn assert_reparses(documents: &[Document]) -> Result<(), TestCaseError> {
    for format in [OutputFormat::Yaml, OutputFormat::Json] {
        let text = render_documents(documents, format).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let again = parse_stream(text.as_bytes()).map_err(|e| TestCaseError::fail(format!("{e}: {text}")))?;
        prop_assert_eq!(&again, documents, "{:?} rendering does not parse back: {}", format, text);
    }
    Ok(())
}

/// A provider name `validate_provider_name` accepts.
fn provider_name() -> impl Strategy<Value = String> {
    "[a-z0-9_][a-z0-9_-]{0,62}"
}

fn encrypted_config() -> impl Strategy<Value = EncryptedConfig> {
    (
        provider_name(),
        any::<String>(),
        prop::collection::vec(any::<u8>(), 16..256),
        prop::collection::vec(any::<u8>(), 8..64),
        any::<[u8; 12]>(),
        1..=MAX_ITERATIONS,
    )
        .prop_map(|(provider, passphrase_uri, ciphertext, salt, iv, iterations)| EncryptedConfig {
            provider,
            passphrase_uri,
            ciphertext,
            salt,
            iv,
            iterations,
        })
}

fn remote_config() -> impl Strategy<Value = RemoteConfig> {
    (any::<String>(), any::<String>(), any::<String>()).prop_map(|(name, provider, uri)| RemoteConfig {
        name,
        provider,
        uri,
    })
}

fn document() -> impl Strategy<Value = Document> {
    prop_oneof![encrypted_config().prop_map(Document::Encrypted), remote_config().prop_map(Document::Remote)]
}

/// A valid stream of two documents, to mutate.
fn valid_stream() -> String {
    format!(
        "# sealed by cryptadm\n---\n{VECTOR_DOCUMENT}---\napiVersion: machineadm.cluster.x-k8s.io/v1alpha1\n\
         kind: RemoteConfig\nmetadata:\n  name: r\nspec:\n  provider: s3\n  uri: s3://bucket/key.yaml\n"
    )
}

/// Where one byte of a sealed document is changed.
#[derive(Debug, Clone, Copy)]
enum Field {
    Ciphertext,
    Tag,
    Iv,
    Salt,
}

/// Iterations for the tampering property: low, so that many cases stay cheap (the count is recorded in the
/// document; opening warns only when a provider fetches the passphrase).
const CHEAP_ITERATIONS: u32 = 1_000;

/// Seals like `seal_bytes`, with fewer iterations.
fn cheap_seal(plaintext: &[u8], passphrase: &Passphrase, salt: Vec<u8>, iv: [u8; 12]) -> EncryptedConfig {
    let key = pbkdf2_sha512(passphrase, &salt, CHEAP_ITERATIONS);
    EncryptedConfig {
        provider: "file".into(),
        passphrase_uri: "file:///etc/machineadm/passphrase".into(),
        ciphertext: seal_aes256gcm(&key, &iv, plaintext),
        salt,
        iv,
        iterations: CHEAP_ITERATIONS,
    }
}

fn render_one(doc: &EncryptedConfig, json: bool) -> String {
    render_documents(&[Document::Encrypted(doc.clone())], format_of(json)).expect("renders")
}

proptest! {
    // Each case runs 50,000 PBKDF2-HMAC-SHA-512 rounds twice.
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn seal_render_parse_open_round_trips(
        plaintext in prop::collection::vec(any::<u8>(), 0..4096),
        passphrase in prop::collection::vec(any::<u8>(), 1..64),
        json in any::<bool>(),
    ) {
        let passphrase = Passphrase::new(passphrase);
        let request = SealRequest {
            provider: "file".into(),
            passphrase_uri: "file:///etc/machineadm/passphrase".into(),
            remote_configs: vec![],
            nonces: Nonces::Fresh,
        };
        let documents = seal_stream(&plaintext, &passphrase, &request.passphrase_uri, &request).unwrap();
        prop_assert_eq!(documents.len(), 1);
        let Document::Encrypted(sealed) = &documents[0] else { panic!("seal_stream made {documents:?}") };
        prop_assert_eq!(sealed.iterations, 50_000);
        prop_assert_eq!(sealed.ciphertext.len(), plaintext.len() + 16);

        let text = render_documents(&documents, format_of(json)).unwrap();
        prop_assert_eq!(&parse_stream(text.as_bytes()).unwrap(), &documents);
        let opened = open(text.as_bytes(), &passphrase).unwrap();
        prop_assert_eq!(opened.plaintext.as_slice(), plaintext.as_slice());
        prop_assert_eq!((opened.decrypted, opened.skipped), (1, 0));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn documents_render_and_parse_back(documents in prop::collection::vec(document(), 1..4)) {
        assert_reparses(&documents)?;
    }

    #[test]
    fn parse_stream_never_panics_on_bytes(input in prop::collection::vec(any::<u8>(), 0..2048)) {
        if let Ok(documents) = parse_stream(&input) {
            assert_reparses(&documents)?;
        }
    }

    #[test]
    fn parse_stream_never_panics_on_yaml_like_text(
        input in r"([-:#&*!|>'\x22%@`\[\]{},?~ \n\ta-zA-Z0-9=/+.]|apiVersion|kind|spec|EncryptedConfig|List|items|<<){0,200}"
    ) {
        if let Ok(documents) = parse_stream(input.as_bytes()) {
            assert_reparses(&documents)?;
        }
    }

    #[test]
    fn parse_stream_never_panics_on_mutated_documents(
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in any::<prop::sample::Index>(),
        truncate in any::<bool>(),
    ) {
        let mut input = valid_stream().into_bytes();
        for (at, byte) in flips {
            let i = at.index(input.len());
            input[i] = byte;
        }
        if truncate {
            input.truncate(cut.index(input.len()));
        }
        if let Ok(documents) = parse_stream(&input) {
            assert_reparses(&documents)?;
        }
    }

    #[test]
    fn any_changed_byte_fails_authentication(
        plaintext in prop::collection::vec(any::<u8>(), 0..512),
        salt in prop::collection::vec(any::<u8>(), 8..32),
        iv in any::<[u8; 12]>(),
        field in prop_oneof![Just(Field::Ciphertext), Just(Field::Tag), Just(Field::Iv), Just(Field::Salt)],
        at in any::<prop::sample::Index>(),
        delta in 1..=255u8,
        json in any::<bool>(),
    ) {
        let passphrase = Passphrase::new(VECTOR_PASSPHRASE.as_bytes().to_vec());
        let sealed = cheap_seal(&plaintext, &passphrase, salt, iv);
        let intact = open(render_one(&sealed, json).as_bytes(), &passphrase).unwrap();
        prop_assert_eq!(intact.plaintext.as_slice(), plaintext.as_slice());

        let mut altered = sealed.clone();
        let body = plaintext.len();
        let byte = match field {
            // Without plaintext there is no ciphertext body: alter the tag instead.
            Field::Ciphertext if body > 0 => &mut altered.ciphertext[at.index(body)],
            Field::Ciphertext | Field::Tag => &mut altered.ciphertext[body + at.index(16)],
            Field::Iv => &mut altered.iv[at.index(12)],
            Field::Salt => {
                let i = at.index(altered.salt.len());
                &mut altered.salt[i]
            }
        };
        *byte ^= delta;
        prop_assert_ne!(&altered, &sealed);
        let text = render_one(&altered, json);
        let err = match open(text.as_bytes(), &passphrase) {
            Ok(_) => return Err(TestCaseError::fail(format!("an altered {field:?} opened"))),
            Err(err) => err,
        };
        prop_assert!(matches!(err, Error::Unauthenticated { index: 1, .. }), "{err:?}");
        prop_assert_eq!(err.status(), ExitStatus::Unauthenticated);
        prop_assert_eq!(err.status().code(), 16);
    }

    #[test]
    fn any_other_passphrase_fails_authentication(
        plaintext in prop::collection::vec(any::<u8>(), 0..256),
        other in prop::collection::vec(any::<u8>(), 1..64),
    ) {
        prop_assume!(other != VECTOR_PASSPHRASE.as_bytes());
        let sealed = cheap_seal(&plaintext, &Passphrase::new(VECTOR_PASSPHRASE.as_bytes().to_vec()), vec![7; 16], [9; 12]);
        let err = open(render_one(&sealed, false).as_bytes(), &Passphrase::new(other)).err();
        prop_assert!(matches!(err, Some(Error::Unauthenticated { .. })), "{err:?}");
    }
}

#[test]
fn every_truncation_of_a_valid_stream_parses_or_fails_cleanly() {
    let input = valid_stream().into_bytes();
    assert_eq!(parse_stream(&input).unwrap().len(), 2, "the whole stream parses");
    for cut in 0..input.len() {
        if let Ok(documents) = parse_stream(&input[..cut]) {
            assert_reparses(&documents).unwrap();
            // A cut inside the EncryptedConfig never yields a complete-looking EncryptedConfig that differs.
            if let Some(Document::Encrypted(doc)) = documents.first() {
                assert_eq!(Document::Encrypted(doc.clone()), parse_stream(VECTOR_DOCUMENT.as_bytes()).unwrap()[0]);
            }
        }
    }
}

#[test]
fn the_known_answer_vector_opens_through_the_library() {
    let passphrase = Passphrase::new(VECTOR_PASSPHRASE.as_bytes().to_vec());
    let opened = open(VECTOR_DOCUMENT.as_bytes(), &passphrase).unwrap();
    assert_eq!(opened.plaintext.as_slice(), VECTOR_PLAINTEXT.as_bytes());
    let documents = parse_stream(VECTOR_DOCUMENT.as_bytes()).unwrap();
    assert_eq!(render_documents(&documents, OutputFormat::Yaml).unwrap(), VECTOR_DOCUMENT);
}

#[test]
fn hostile_yaml_is_refused_without_crashing() {
    let deep_flow = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let deep_block: String = (0..5_000).map(|i| format!("{}a:\n", " ".repeat(i))).collect();
    let mut laughs = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..20 {
        let prev = format!("*a{}", i - 1);
        laughs.push_str(&format!("a{i}: &a{i} [{}]\n", [prev.as_str(); 10].join(", ")));
    }
    let many_documents = "---\n{}\n".repeat(100_000);
    for (name, input) in [
        ("deep flow nesting", deep_flow),
        ("deep block nesting", deep_block),
        ("alias expansion", laughs),
        ("many documents", many_documents),
    ] {
        let started = std::time::Instant::now();
        let result = parse_stream(input.as_bytes());
        // The YAML parser's budgets (depth, nodes, documents) stop these before any document is built.
        let Err(err @ Error::Yaml(_)) = result else { panic!("{name}: expected a YAML error, got {result:?}") };
        assert_eq!(err.status(), ExitStatus::InvalidInput, "{name}");
        assert!(started.elapsed() < Duration::from_secs(20), "{name}: took {:?}", started.elapsed());
    }
}
