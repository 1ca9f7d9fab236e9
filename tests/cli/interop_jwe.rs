//! Interop of the JWE key wrapper (docs/formats.md#key-wrapping-schemes) with an independent implementation: Python's jwcrypto,
//! driven by `tests/interop/jwe_oracle.py`. Keys are made by `openssl` for each test, so neither side's key code
//! is trusted by the other. JWEs go both ways, for every key type and algorithm the spec lists, and the exact
//! JSON layout (member order, sorted header keys, unpadded base64url) is read back by Python's order-preserving
//! JSON parser.
//!
//! These tests never skip: `python3` with `jwcrypto` and `openssl` must be installed (`bash .ci/run` does).

use crate::support::{self, Scratch};
use cryptadm::crypto::keys::{PrivateKey, RecipientKey, parse_private_key, parse_public_key};
use cryptadm::ocicrypt::jwe;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// As long as ocicrypt's private options for one layer, with every byte value.
fn plaintext() -> Vec<u8> {
    (0..=255u8).cycle().take(193).collect()
}

const UNAUTHENTICATED: i32 = 16;

fn oracle_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/jwe_oracle.py")
}

/// Fails (never skips) unless `openssl` exists and `python3` can import `jwcrypto`.
fn require_tools() {
    static READY: OnceLock<()> = OnceLock::new();
    READY.get_or_init(|| {
        support::require_tool("openssl", "apt-get install openssl");
        support::require_tool("python3", "apt-get install python3");
        let output = Command::new("python3")
            .args(["-c", "import jwcrypto; print(jwcrypto.__file__)"])
            .output()
            .expect("run python3");
        assert!(
            output.status.success(),
            "`python3` on PATH cannot import the `jwcrypto` package, which the JWE interop oracle needs; install it \
             with `python3 -m pip install jwcrypto` (bash .ci/run does).\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    });
}

fn oracle(args: &[&str]) -> Output {
    require_tools();
    Command::new("python3").arg(oracle_script()).args(args).output().expect("run python3")
}

fn run_ok(output: Output, what: &str) -> Vec<u8> {
    assert!(output.status.success(), "{what} failed: {}", String::from_utf8_lossy(&output.stderr));
    output.stdout
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("temporary paths are UTF-8")
}

/// A key pair made by openssl: PKCS#8 private key and SubjectPublicKeyInfo public key, both PEM.
struct KeyPair {
    name: &'static str,
    private_pem: PathBuf,
    public_pem: PathBuf,
}

impl KeyPair {
    fn new(scratch: &Scratch, name: &'static str) -> Self {
        require_tools();
        // A fresh file name per key, so that two keys of one type in a scratch directory stay apart.
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let stem = format!("{name}-{}", COUNTER.fetch_add(1, Ordering::Relaxed));
        let private_pem = scratch.path(&format!("{stem}.pem"));
        let public_pem = scratch.path(&format!("{stem}.pub.pem"));
        let option = match name {
            "rsa2048" => "rsa_keygen_bits:2048",
            "rsa3072" => "rsa_keygen_bits:3072",
            "rsa4096" => "rsa_keygen_bits:4096",
            "p256" => "ec_paramgen_curve:P-256",
            "p384" => "ec_paramgen_curve:P-384",
            "p521" => "ec_paramgen_curve:P-521",
            other => panic!("no recipe for key {other}"),
        };
        let algorithm = if name.starts_with("rsa") { "RSA" } else { "EC" };
        let status = Command::new("openssl")
            .args(["genpkey", "-quiet", "-algorithm", algorithm, "-pkeyopt", option, "-out"])
            .arg(&private_pem)
            .status()
            .expect("run openssl genpkey");
        assert!(status.success(), "openssl genpkey {name}");
        let status = Command::new("openssl")
            .args(["pkey", "-pubout", "-in"])
            .arg(&private_pem)
            .arg("-out")
            .arg(&public_pem)
            .status()
            .expect("run openssl pkey");
        assert!(status.success(), "openssl pkey -pubout {name}");
        Self { name, private_pem, public_pem }
    }

    fn recipient(&self) -> RecipientKey {
        parse_public_key(&std::fs::read(&self.public_pem).unwrap(), self.name).unwrap()
    }

    fn private(&self) -> PrivateKey {
        parse_private_key(&std::fs::read(&self.private_pem).unwrap(), None, self.name).unwrap()
    }

    /// The public key as a JWK written by jwcrypto, with `alg` and `kid`.
    fn jwk_recipient(&self, alg: &str, kid: &str) -> RecipientKey {
        let jwk =
            run_ok(oracle(&["jwk", "--in", path_str(&self.public_pem), "--alg", alg, "--kid", kid]), "oracle jwk");
        parse_public_key(&jwk, self.name).unwrap()
    }
}

/// jwcrypto decrypts `jwe` with `key`; returns the plaintext, or the exit status when it refuses.
fn oracle_decrypt(scratch: &Scratch, jwe: &[u8], key: &KeyPair) -> Result<Vec<u8>, i32> {
    let input = scratch.write("wrapped.jwe", jwe);
    let out = scratch.path("unwrapped");
    let _ = std::fs::remove_file(&out);
    let output =
        oracle(&["decrypt", "--key", path_str(&key.private_pem), "--in", path_str(&input), "--out", path_str(&out)]);
    if output.status.success() {
        Ok(std::fs::read(&out).expect("the oracle wrote --out"))
    } else {
        Err(output.status.code().unwrap_or(-1))
    }
}

/// jwcrypto encrypts the plaintext for `recipients` (`(alg, key)`), with content algorithm `enc`.
fn oracle_encrypt(scratch: &Scratch, recipients: &[(&str, &KeyPair)], enc: &str, extra: &[&str]) -> Vec<u8> {
    let input = scratch.write("plaintext", plaintext());
    let mut args = vec!["encrypt".to_owned(), "--in".into(), path_str(&input).into(), "--enc".into(), enc.into()];
    for (alg, key) in recipients {
        args.extend(["--recipient".into(), format!("{alg}={}", path_str(&key.private_pem))]);
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run_ok(oracle(&args), "oracle encrypt")
}

/// The layout of a JWE as Python's order-preserving JSON parser sees it.
fn oracle_shape(scratch: &Scratch, jwe: &[u8]) -> Value {
    let input = scratch.write("shape.jwe", jwe);
    serde_json::from_slice(&run_ok(oracle(&["shape", "--in", path_str(&input)]), "oracle shape")).unwrap()
}

fn cryptadm_wrap(recipients: &[RecipientKey]) -> Vec<u8> {
    jwe::wrap(recipients, &plaintext()).expect("cryptadm wraps")
}

#[test]
fn jwcrypto_opens_what_cryptadm_wraps_for_each_key_type() {
    let scratch = Scratch::new();
    for name in ["rsa2048", "rsa3072", "rsa4096", "p256", "p384", "p521"] {
        let key = KeyPair::new(&scratch, name);
        let wrapped = cryptadm_wrap(&[key.recipient()]);
        assert_eq!(oracle_decrypt(&scratch, &wrapped, &key), Ok(plaintext()), "{name}");

        // Spec §6.1, one recipient: the flattened form with everything in the protected header.
        let shape = oracle_shape(&scratch, &wrapped);
        assert_eq!(shape["members"], json!(["protected", "encrypted_key", "iv", "ciphertext", "tag"]), "{name}");
        assert_eq!(shape["unpadded"], json!(true));
        let protected: Value = serde_json::from_str(shape["protected"].as_str().unwrap()).unwrap();
        if name.starts_with("rsa") {
            assert_eq!(shape["protected"], json!(r#"{"alg":"RSA-OAEP","enc":"A256GCM"}"#));
        } else {
            let text = shape["protected"].as_str().unwrap();
            let curve = protected["epk"]["crv"].as_str().unwrap();
            let prefix =
                format!(r#"{{"alg":"ECDH-ES+A256KW","enc":"A256GCM","epk":{{"kty":"EC","crv":"{curve}","x":""#);
            assert!(text.starts_with(&prefix), "{name}: {text}");
            assert!(text.ends_with(r#""}}"#) && text.contains(r#"","y":""#), "{name}: {text}");
        }
    }
}

#[test]
fn jwcrypto_opens_a_multi_recipient_jwe_with_every_key() {
    let scratch = Scratch::new();
    let keys: Vec<KeyPair> =
        ["rsa2048", "rsa3072", "p256", "p384", "p521"].into_iter().map(|name| KeyPair::new(&scratch, name)).collect();
    // PEM recipients with the defaults, and JWK recipients (written by jwcrypto) choosing their algorithm.
    let recipients = vec![
        keys[0].recipient(),
        keys[1].jwk_recipient("RSA-OAEP-256", "rsa-3072"),
        keys[2].jwk_recipient("ECDH-ES+A128KW", "p-256"),
        keys[3].jwk_recipient("ECDH-ES+A192KW", "p-384"),
        keys[4].recipient(),
    ];
    let wrapped = cryptadm_wrap(&recipients);
    for key in &keys {
        assert_eq!(oracle_decrypt(&scratch, &wrapped, key), Ok(plaintext()), "{}", key.name);
    }

    // Spec §6.1, several recipients: general form, `enc` alone protected, sorted per-recipient headers, `kid`
    // only for JWK recipients, and recipient 0's key copied to the top level as go-jose does.
    let shape = oracle_shape(&scratch, &wrapped);
    assert_eq!(shape["members"], json!(["protected", "recipients", "encrypted_key", "iv", "ciphertext", "tag"]));
    assert_eq!(shape["protected"], json!(r#"{"enc":"A256GCM"}"#));
    assert_eq!(shape["unpadded"], json!(true));
    assert_eq!(shape["top_level_key_is_first_recipients"], json!(true));
    let expected_headers = [
        json!(["alg"]),
        json!(["alg", "kid"]),
        json!(["alg", "epk", "kid"]),
        json!(["alg", "epk", "kid"]),
        json!(["alg", "epk"]),
    ];
    let recipients = shape["recipients"].as_array().unwrap();
    assert_eq!(recipients.len(), expected_headers.len());
    for (recipient, header) in recipients.iter().zip(expected_headers) {
        assert_eq!(recipient["members"], json!(["header", "encrypted_key"]));
        assert_eq!(recipient["header"], header);
        assert_eq!(recipient["unpadded"], json!(true));
        if recipient["epk"] != json!([]) {
            assert_eq!(recipient["epk"], json!(["kty", "crv", "x", "y"]));
        }
    }
}

#[test]
fn jwcrypto_refuses_a_key_that_is_not_a_recipient() {
    let scratch = Scratch::new();
    let (recipient, stranger) = (KeyPair::new(&scratch, "p256"), KeyPair::new(&scratch, "rsa2048"));
    let other_curve = KeyPair::new(&scratch, "p384");
    let wrapped = cryptadm_wrap(&[recipient.recipient()]);
    assert_eq!(oracle_decrypt(&scratch, &wrapped, &stranger), Err(UNAUTHENTICATED));
    assert_eq!(oracle_decrypt(&scratch, &wrapped, &other_curve), Err(UNAUTHENTICATED));
    assert_eq!(oracle_decrypt(&scratch, &wrapped, &recipient), Ok(plaintext()));
}

#[test]
fn cryptadm_opens_what_jwcrypto_wraps() {
    let scratch = Scratch::new();
    let rsa = KeyPair::new(&scratch, "rsa2048");
    let p256 = KeyPair::new(&scratch, "p256");
    let p384 = KeyPair::new(&scratch, "p384");
    let p521 = KeyPair::new(&scratch, "p521");
    // (what, recipients as (alg, key), enc, extra oracle arguments)
    type Case<'a> = (&'a str, Vec<(&'a str, &'a KeyPair)>, &'a str, Vec<&'a str>);
    let cases: Vec<Case> = vec![
        ("RSA-OAEP, flattened", vec![("RSA-OAEP", &rsa)], "A256GCM", vec![]),
        ("RSA-OAEP-256, compact", vec![("RSA-OAEP-256", &rsa)], "A128GCM", vec!["--compact"]),
        ("ECDH-ES+A128KW P-256", vec![("ECDH-ES+A128KW", &p256)], "A192GCM", vec![]),
        ("ECDH-ES+A192KW P-384, apu/apv", vec![("ECDH-ES+A192KW", &p384)], "A256GCM", vec!["--apu", "u", "--apv", "v"]),
        ("ECDH-ES+A256KW P-521, compact", vec![("ECDH-ES+A256KW", &p521)], "A256GCM", vec!["--compact"]),
        ("ECDH-ES+A256KW P-256, CBC-HS", vec![("ECDH-ES+A256KW", &p256)], "A128CBC-HS256", vec![]),
        ("RSA-OAEP, A192CBC-HS384, zip", vec![("RSA-OAEP", &rsa)], "A192CBC-HS384", vec!["--zip"]),
        (
            "general, four recipients",
            vec![
                ("RSA-OAEP-256", &rsa),
                ("ECDH-ES+A128KW", &p256),
                ("ECDH-ES+A256KW", &p384),
                ("ECDH-ES+A192KW", &p521),
            ],
            "A256CBC-HS512",
            vec![],
        ),
    ];
    let strangers = [KeyPair::new(&scratch, "p256").private(), KeyPair::new(&scratch, "rsa2048").private()];
    for (what, recipients, enc, extra) in cases {
        let wrapped = oracle_encrypt(&scratch, &recipients, enc, &extra);
        for (_, key) in &recipients {
            let opened = jwe::unwrap(&[key.private()], &wrapped).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(opened.as_deref().map(|p| &p[..]), Some(&plaintext()[..]), "{what}, key {}", key.name);
        }
        // Only keys that are not recipients; then those and the right one last.
        assert_eq!(jwe::unwrap(&strangers, &wrapped).unwrap().as_deref().map(|p| p.len()), None, "{what}");
        let mut keys = strangers.to_vec();
        keys.push(recipients[0].1.private());
        assert!(jwe::unwrap(&keys, &wrapped).unwrap().is_some(), "{what}");
    }
}

#[test]
fn cryptadm_reads_openssl_sec1_keys_for_jwcrypto_jwes() {
    // ocicrypt refuses SEC1 `EC PRIVATE KEY` files (docs/formats.md); cryptadm accepts them.
    let scratch = Scratch::new();
    let key = KeyPair::new(&scratch, "p384");
    let sec1 = scratch.path("p384.sec1.pem");
    let status = Command::new("openssl")
        .args(["ec", "-in"])
        .arg(&key.private_pem)
        .arg("-out")
        .arg(&sec1)
        .stderr(std::process::Stdio::null())
        .status()
        .expect("run openssl ec");
    assert!(status.success());
    let pem = std::fs::read(&sec1).unwrap();
    assert!(pem.starts_with(b"-----BEGIN EC PRIVATE KEY-----"));
    let private = parse_private_key(&pem, None, "p384.sec1.pem").unwrap();
    let wrapped = oracle_encrypt(&scratch, &[("ECDH-ES+A256KW", &key)], "A256GCM", &[]);
    assert_eq!(jwe::unwrap(&[private], &wrapped).unwrap().as_deref().map(|p| p.to_vec()), Some(plaintext()));
}
