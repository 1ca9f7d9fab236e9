//! Round trips with the fixture keys, the exact JSON shapes of docs/formats.md, known-answer vectors written by
//! jwcrypto (tests/fixtures/jwe), tampering, and every malformed input refused before any key is tried.

use super::*;
use crate::crypto::keys::{parse_private_key, parse_public_key};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

macro_rules! key_fixture {
    ($name:literal) => {
        &include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/keys/", $name))[..]
    };
}

macro_rules! jwe_fixture {
    ($name:literal) => {
        &include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/jwe/", $name))[..]
    };
}

/// The plaintext of every vector in tests/fixtures/jwe (see its generate.py).
const VECTOR_PLAINTEXT: &[u8] =
    br#"{"symkey":"known-answer vector","cipheroptions":{"nonce":"AAAAAAAAAAAAAAAAAAAAAA=="}}"#;
/// As long as ocicrypt's private options for one layer.
const PLAINTEXT: &[u8; 193] = &[b'p'; 193];

fn recipient(bytes: &[u8]) -> RecipientKey {
    parse_public_key(bytes, "test recipient").unwrap()
}

fn private(bytes: &[u8]) -> PrivateKey {
    parse_private_key(bytes, None, "test key").unwrap()
}

fn rsa() -> (RecipientKey, PrivateKey) {
    (recipient(key_fixture!("rsa2048.pub.pem")), private(key_fixture!("rsa2048.pkcs8.pem")))
}

fn p256() -> (RecipientKey, PrivateKey) {
    (recipient(key_fixture!("p256.pub.pem")), private(key_fixture!("p256.pkcs8.pem")))
}

fn p384() -> (RecipientKey, PrivateKey) {
    (recipient(key_fixture!("p384.pub.der")), private(key_fixture!("p384.sec1.pem")))
}

fn p521() -> (RecipientKey, PrivateKey) {
    (recipient(key_fixture!("p521.pub.jwk")), private(key_fixture!("p521.priv.jwk")))
}

fn open(keys: &[PrivateKey], jwe: &[u8]) -> Option<Vec<u8>> {
    unwrap(keys, jwe).expect("well-formed").map(|plaintext| plaintext.to_vec())
}

fn malformed_problem(jwe: &[u8]) -> String {
    match unwrap(&[rsa().1, p256().1], jwe) {
        Err(Error::MalformedWrappedKey { scheme, problem }) => {
            assert_eq!(scheme, "jwe");
            problem
        }
        other => panic!("expected a malformed JWE, got {other:?}"),
    }
}

/// JSON with object members in document order (serde_json's Map sorts them), to check Go's member order.
#[derive(Debug, Clone, PartialEq)]
enum Ordered {
    Object(Vec<(String, Ordered)>),
    Array(Vec<Ordered>),
    String(String),
    Other,
}

impl Ordered {
    fn parse(text: &str) -> Self {
        serde_json::from_str(text).expect("valid JSON")
    }

    fn names(&self) -> Vec<&str> {
        match self {
            Ordered::Object(members) => members.iter().map(|(name, _)| name.as_str()).collect(),
            _ => panic!("not an object"),
        }
    }

    fn get(&self, name: &str) -> &Ordered {
        match self {
            Ordered::Object(members) => &members.iter().find(|(n, _)| n == name).expect(name).1,
            _ => panic!("not an object"),
        }
    }

    fn str(&self) -> &str {
        match self {
            Ordered::String(text) => text,
            _ => panic!("not a string"),
        }
    }

    fn bytes(&self) -> Vec<u8> {
        let text = self.str();
        assert!(!text.contains(['=', '+', '/']), "`{text}` is not unpadded base64url");
        URL_SAFE_NO_PAD.decode(text).unwrap()
    }

    fn items(&self) -> &[Ordered] {
        match self {
            Ordered::Array(items) => items,
            _ => panic!("not an array"),
        }
    }
}

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct OrderedVisitor;
        impl<'de> Visitor<'de> for OrderedVisitor {
            type Value = Ordered;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("JSON")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
                let mut members = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    members.push(entry);
                }
                Ok(Ordered::Object(members))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Ordered, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Ordered::Array(items))
            }
            fn visit_str<E: de::Error>(self, text: &str) -> Result<Ordered, E> {
                Ok(Ordered::String(text.to_owned()))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Ordered, E> {
                Ok(Ordered::Other)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Ordered, E> {
                Ok(Ordered::Other)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Ordered, E> {
                Ok(Ordered::Other)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Ordered, E> {
                Ok(Ordered::Other)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Ordered, E> {
                Ok(Ordered::Other)
            }
        }
        deserializer.deserialize_any(OrderedVisitor)
    }
}

/// The decoded protected header of a JWE, as text.
fn protected_text(jwe: &Ordered) -> String {
    String::from_utf8(jwe.get("protected").bytes()).unwrap()
}

fn wrap_one(recipient: &RecipientKey) -> Ordered {
    Ordered::parse(std::str::from_utf8(&wrap(std::slice::from_ref(recipient), PLAINTEXT).unwrap()).unwrap())
}

fn assert_content_shape(jwe: &Ordered) {
    assert_eq!(jwe.get("iv").bytes().len(), 12);
    assert_eq!(jwe.get("tag").bytes().len(), 16);
    assert_eq!(jwe.get("ciphertext").bytes().len(), PLAINTEXT.len(), "GCM adds nothing to the length");
}

#[test]
fn rsa_recipient_gives_go_jose_flattened_shape() {
    let (public, private) = rsa();
    let jwe = wrap_one(&public);
    assert_eq!(jwe.names(), ["protected", "encrypted_key", "iv", "ciphertext", "tag"]);
    assert_eq!(protected_text(&jwe), r#"{"alg":"RSA-OAEP","enc":"A256GCM"}"#);
    assert_eq!(jwe.get("encrypted_key").bytes().len(), 256);
    assert_content_shape(&jwe);
    let bytes = wrap(&[public], PLAINTEXT).unwrap();
    assert_eq!(open(&[private], &bytes).as_deref(), Some(&PLAINTEXT[..]));
}

#[test]
fn ec_recipients_give_go_jose_flattened_shape() {
    for (public, private) in [p256(), p384(), p521()] {
        let curve = public.key.curve().unwrap();
        let jwe = wrap_one(&public);
        assert_eq!(jwe.names(), ["protected", "encrypted_key", "iv", "ciphertext", "tag"]);
        let protected = Ordered::parse(&protected_text(&jwe));
        assert_eq!(protected.names(), ["alg", "enc", "epk"]);
        assert_eq!(protected.get("alg").str(), "ECDH-ES+A256KW");
        assert_eq!(protected.get("enc").str(), "A256GCM");
        let epk = protected.get("epk");
        assert_eq!(epk.names(), ["kty", "crv", "x", "y"]);
        assert_eq!((epk.get("kty").str(), epk.get("crv").str()), ("EC", curve.jwk_name()));
        assert_eq!(epk.get("x").bytes().len(), curve.field_len());
        assert_eq!(epk.get("y").bytes().len(), curve.field_len());
        assert_eq!(jwe.get("encrypted_key").bytes().len(), 40, "RFC 3394 wrap of a 32-byte key");
        assert_content_shape(&jwe);
        let bytes = wrap(&[public], PLAINTEXT).unwrap();
        assert_eq!(open(&[private], &bytes).as_deref(), Some(&PLAINTEXT[..]), "{curve}");
    }
}

#[test]
fn jwk_kid_goes_into_the_header() {
    let single = wrap_one(&recipient(key_fixture!("rsa2048.pub-kid.jwk")));
    assert_eq!(protected_text(&single), r#"{"alg":"RSA-OAEP","enc":"A256GCM","kid":"rsa2048-test-kid"}"#);
    let ec = wrap_one(&recipient(key_fixture!("p256.pub-kid.jwk")));
    assert_eq!(Ordered::parse(&protected_text(&ec)).names(), ["alg", "enc", "epk", "kid"]);
}

#[test]
fn several_recipients_give_go_jose_general_shape() {
    let recipients = [rsa(), p256(), p384(), p521()];
    let mut publics: Vec<RecipientKey> = recipients.iter().map(|(public, _)| public.clone()).collect();
    publics[1] = recipient(key_fixture!("p256.pub-kid.jwk"));
    let bytes = wrap(&publics, PLAINTEXT).unwrap();
    let jwe = Ordered::parse(std::str::from_utf8(&bytes).unwrap());
    assert_eq!(jwe.names(), ["protected", "recipients", "encrypted_key", "iv", "ciphertext", "tag"]);
    assert_eq!(protected_text(&jwe), r#"{"enc":"A256GCM"}"#);
    let entries = jwe.get("recipients").items();
    assert_eq!(entries.len(), 4);
    for entry in entries {
        assert_eq!(entry.names(), ["header", "encrypted_key"]);
    }
    assert_eq!(entries[0].get("header").names(), ["alg"]);
    assert_eq!(entries[0].get("header").get("alg").str(), "RSA-OAEP");
    assert_eq!(entries[1].get("header").names(), ["alg", "epk", "kid"]);
    assert_eq!(entries[1].get("header").get("kid").str(), "p256-test-kid");
    assert_eq!(entries[3].get("header").names(), ["alg", "epk"]);
    assert_eq!(jwe.get("encrypted_key"), entries[0].get("encrypted_key"), "go-jose copies recipient 0's key");
    assert_content_shape(&jwe);
    for (_, private) in &recipients {
        assert_eq!(open(std::slice::from_ref(private), &bytes).as_deref(), Some(&PLAINTEXT[..]));
    }
    // Keys that are not recipients are skipped, and the right one is found among them.
    let strangers = [private(key_fixture!("rsa1024.pkcs8.pem"))];
    assert_eq!(open(&strangers, &bytes), None);
    let mixed = [strangers[0].clone(), recipients[3].1.clone()];
    assert_eq!(open(&mixed, &bytes).as_deref(), Some(&PLAINTEXT[..]));
}

#[test]
fn jwk_alg_picks_the_algorithm() {
    let cases = [
        (recipient(key_fixture!("rsa2048.pub-oaep256.jwk")), rsa().1, "RSA-OAEP-256", 256),
        (recipient(key_fixture!("p256.pub-a128kw.jwk")), p256().1, "ECDH-ES+A128KW", 40),
        (RecipientKey { jwk_alg: Some("ECDH-ES+A192KW".into()), ..p521().0 }, p521().1, "ECDH-ES+A192KW", 40),
    ];
    for (public, private, alg, encrypted_key_len) in cases {
        let jwe = wrap_one(&public);
        assert_eq!(Ordered::parse(&protected_text(&jwe)).get("alg").str(), alg);
        assert_eq!(jwe.get("encrypted_key").bytes().len(), encrypted_key_len);
        let bytes = wrap(&[public], PLAINTEXT).unwrap();
        assert_eq!(open(&[private], &bytes).as_deref(), Some(&PLAINTEXT[..]), "{alg}");
    }
}

#[test]
fn wrap_refuses_unusable_recipients() {
    assert!(matches!(wrap(&[], PLAINTEXT), Err(Error::Wrap { .. })));
    let unknown = RecipientKey { jwk_alg: Some("RSA1_5".into()), kid: Some("k1".into()), ..rsa().0 };
    let message = wrap(&[rsa().0, unknown], PLAINTEXT).unwrap_err().to_string();
    assert_eq!(message, "JWE recipient 2 (kid `k1`): unsupported JWK `alg` `RSA1_5`");
    let mismatched = RecipientKey { jwk_alg: Some("RSA-OAEP".into()), ..p384().0 };
    let message = wrap(&[mismatched], PLAINTEXT).unwrap_err().to_string();
    assert_eq!(message, "JWE recipient 1 (EC P-384): the JWK `alg` `RSA-OAEP` cannot be used with a EC P-384 key");
}

#[test]
fn compact_serialization_is_read() {
    let (public, private) = p384();
    let jwe = wrap_one(&public);
    let compact = ["protected", "encrypted_key", "iv", "ciphertext", "tag"].map(|name| jwe.get(name).str()).join(".");
    assert_eq!(open(&[private], compact.as_bytes()).as_deref(), Some(&PLAINTEXT[..]));
}

#[test]
fn empty_and_large_plaintexts_round_trip() {
    let (public, private) = p256();
    for plaintext in [&b""[..], &vec![0xa5; 300_000][..]] {
        let bytes = wrap(std::slice::from_ref(&public), plaintext).unwrap();
        assert_eq!(open(std::slice::from_ref(&private), &bytes).as_deref(), Some(plaintext));
    }
}

#[test]
fn wrong_keys_fit_nothing() {
    let rsa_jwe = wrap(&[rsa().0], PLAINTEXT).unwrap();
    let p256_jwe = wrap(&[p256().0], PLAINTEXT).unwrap();
    // Another key of the same kind, keys of the other kind and curve, and no key at all.
    assert_eq!(open(&[private(key_fixture!("rsa1024.pkcs8.pem")), p256().1, p521().1], &rsa_jwe), None);
    assert_eq!(open(&[rsa().1, p384().1], &p256_jwe), None);
    assert_eq!(open(&[], &p256_jwe), None);
}

/// Re-encodes one member of a flattened JWE after `change` altered its bytes.
fn altered(jwe: &[u8], member: &str, change: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut value: serde_json::Value = serde_json::from_slice(jwe).unwrap();
    let mut bytes = URL_SAFE_NO_PAD.decode(value[member].as_str().unwrap()).unwrap();
    change(&mut bytes);
    value[member] = URL_SAFE_NO_PAD.encode(bytes).into();
    serde_json::to_vec(&value).unwrap()
}

#[test]
fn any_altered_bit_fits_no_key() {
    for (public, private) in [rsa(), p521()] {
        let jwe = wrap(&[public], b"short plaintext").unwrap();
        for member in ["encrypted_key", "ciphertext", "tag", "iv"] {
            let len = URL_SAFE_NO_PAD
                .decode(Ordered::parse(std::str::from_utf8(&jwe).unwrap()).get(member).str())
                .unwrap()
                .len();
            for at in [0, len / 2, len - 1] {
                let bad = altered(&jwe, member, |bytes| bytes[at] ^= 0x01);
                assert_eq!(open(std::slice::from_ref(&private), &bad), None, "{member}[{at}]");
            }
        }
        // The protected header is authenticated too (it is the AAD).
        let bad = altered(&jwe, "protected", |bytes| {
            let text = String::from_utf8(bytes.clone()).unwrap().replacen('{', "{\"x\":1,", 1);
            *bytes = text.into_bytes();
        });
        assert_eq!(open(&[private], &bad), None);
    }
}

#[test]
fn jwcrypto_vectors_open() {
    let rsa = rsa().1;
    let cases: [(&[u8], PrivateKey); 6] = [
        (jwe_fixture!("rsa-oaep-256.a128gcm.compact.jwe"), rsa.clone()),
        (jwe_fixture!("rsa-oaep.a256gcm.flattened.jwe"), rsa.clone()),
        (jwe_fixture!("p384.ecdh-es+a128kw.a192gcm.apu-apv.jwe"), p384().1),
        (jwe_fixture!("p256.ecdh-es+a192kw.a128cbc-hs256.zip.jwe"), p256().1),
        (jwe_fixture!("p521-rsa.general.a256cbc-hs512.aad.jwe"), p521().1),
        (jwe_fixture!("rsa1_5-then-p256.general.a256gcm.jwe"), p256().1),
    ];
    for (index, (jwe, key)) in cases.into_iter().enumerate() {
        assert_eq!(open(&[key], jwe).as_deref(), Some(VECTOR_PLAINTEXT), "vector {index}");
    }
    // The general vector's second recipient is RSA, and RSA1_5 is skipped, not tried.
    assert_eq!(
        open(std::slice::from_ref(&rsa), jwe_fixture!("p521-rsa.general.a256cbc-hs512.aad.jwe")).as_deref(),
        Some(VECTOR_PLAINTEXT)
    );
    assert_eq!(open(&[rsa], jwe_fixture!("rsa1_5-then-p256.general.a256gcm.jwe")), None);
}

#[test]
fn vectors_with_altered_aad_or_cbc_tag_fit_no_key() {
    let jwe = jwe_fixture!("p521-rsa.general.a256cbc-hs512.aad.jwe");
    let bad = altered(jwe, "aad", |bytes| bytes[0] ^= 1);
    assert_eq!(open(&[p521().1], &bad), None);
    let bad = altered(jwe, "tag", |bytes| bytes[31] ^= 1);
    assert_eq!(open(&[p521().1], &bad), None);
    let bad = altered(jwe, "ciphertext", |bytes| bytes[0] ^= 1);
    assert_eq!(open(&[p521().1], &bad), None);
}

#[test]
fn malformed_jwes_are_errors_whatever_the_keys() {
    let good: serde_json::Value = serde_json::from_slice(&wrap(&[rsa().0], PLAINTEXT).unwrap()).unwrap();
    let with = |member: &str, value: serde_json::Value| {
        let mut jwe = good.clone();
        jwe[member] = value;
        serde_json::to_vec(&jwe).unwrap()
    };
    let without = |member: &str| {
        let mut jwe = good.clone();
        jwe.as_object_mut().unwrap().remove(member);
        serde_json::to_vec(&jwe).unwrap()
    };
    let protected = |header: &str| with("protected", URL_SAFE_NO_PAD.encode(header).into());
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (b"".to_vec(), "neither JSON nor a compact"),
        (b"not a jwe".to_vec(), "neither JSON nor a compact"),
        (b"a.b.c.d".to_vec(), "neither JSON nor a compact"),
        (b"{\"protected\":1}".to_vec(), "not a JWE JSON serialization"),
        (b"\xff\xfe".to_vec(), "not UTF-8"),
        (vec![b' '; MAX_JWE_LEN + 1], "larger than 1 MiB"),
        (without("iv"), "no `iv` member"),
        (without("encrypted_key"), "no `encrypted_key` member"),
        (with("tag", "***".into()), "`tag` is not base64url"),
        (with("iv", "AAAA".into()), "length does not fit A256GCM"),
        (with("recipients", serde_json::json!([])), "`recipients` is empty"),
        (with("header", serde_json::json!({"alg": "RSA-OAEP"})), "`alg` appears in more than one header"),
        (with("unprotected", serde_json::json!({"crit": ["exp"]})), "`crit`"),
        (protected("[]"), "not a JSON object"),
        (protected(r#"{"enc":"A256GCM"}"#), "no `alg`"),
        (protected(r#"{"alg":"RSA-OAEP"}"#), "no `enc`"),
        (protected(r#"{"alg":"RSA-OAEP","enc":"A256CTR"}"#), "unsupported content encryption `A256CTR`"),
        (protected(r#"{"alg":"RSA-OAEP","enc":"A256GCM","zip":"GZ"}"#), "unsupported compression `GZ`"),
        (protected(r#"{"alg":7,"enc":"A256GCM"}"#), "`alg` is not a string"),
        (protected(r#"{"alg":"dir","enc":"A256GCM"}"#), "no recipient uses a supported key algorithm (found: dir)"),
        (protected(r#"{"alg":"ECDH-ES+A256KW","enc":"A256GCM"}"#), "no `epk`"),
        (
            protected(r#"{"alg":"ECDH-ES+A256KW","enc":"A256GCM","epk":{"kty":"EC","crv":"P-256","x":"AA","y":"AA"}}"#),
            "`epk` is not a point on P-256",
        ),
        (
            protected(
                r#"{"alg":"ECDH-ES+A256KW","enc":"A256GCM","epk":{"kty":"EC","crv":"secp256k1","x":"AA","y":"AA"}}"#,
            ),
            "unsupported curve secp256k1",
        ),
        (protected(r#"{"alg":"ECDH-ES+A256KW","enc":"A256GCM","epk":{"kty":"OKP"}}"#), "`epk` is not an EC key"),
    ];
    for (jwe, expected) in cases {
        let problem = malformed_problem(&jwe);
        assert!(problem.contains(expected), "`{problem}` does not say `{expected}`");
    }
}

#[test]
fn an_off_curve_epk_is_refused() {
    // A point with valid coordinates on P-256 moved off the curve: y + 1.
    let (public, _) = p256();
    let (_, x, mut y) = public.key.coordinates().unwrap();
    *y.last_mut().unwrap() ^= 1;
    let header = format!(
        r#"{{"alg":"ECDH-ES+A256KW","enc":"A256GCM","epk":{{"kty":"EC","crv":"P-256","x":"{}","y":"{}"}}}}"#,
        URL_SAFE_NO_PAD.encode(x),
        URL_SAFE_NO_PAD.encode(y)
    );
    let jwe = format!(
        r#"{{"protected":"{}","encrypted_key":"{}","iv":"{}","ciphertext":"","tag":"{}"}}"#,
        URL_SAFE_NO_PAD.encode(header),
        URL_SAFE_NO_PAD.encode([0u8; 40]),
        URL_SAFE_NO_PAD.encode([0u8; 12]),
        URL_SAFE_NO_PAD.encode([0u8; 16])
    );
    assert!(malformed_problem(jwe.as_bytes()).contains("not a point on P-256"));
}

#[test]
fn recipients_must_agree_on_enc() {
    let jwe = serde_json::json!({
        "recipients": [
            {"header": {"alg": "RSA-OAEP", "enc": "A256GCM"}, "encrypted_key": "AAAA"},
            {"header": {"alg": "RSA-OAEP", "enc": "A128GCM"}, "encrypted_key": "AAAA"}
        ],
        "iv": URL_SAFE_NO_PAD.encode([0u8; 12]),
        "ciphertext": "",
        "tag": URL_SAFE_NO_PAD.encode([0u8; 16]),
    });
    assert!(malformed_problem(&serde_json::to_vec(&jwe).unwrap()).contains("disagree on `enc`"));
}

#[test]
fn kid_is_escaped_as_go_escapes_it() {
    assert_eq!(json_string("a<b>&c\u{2028}\"\n"), r#""a\u003cb\u003e\u0026c\u2028\"\n""#);
    let public = RecipientKey { kid: Some("<kid>".into()), ..rsa().0 };
    assert_eq!(protected_text(&wrap_one(&public)), r#"{"alg":"RSA-OAEP","enc":"A256GCM","kid":"\u003ckid\u003e"}"#);
}

#[test]
fn supported_algorithm_names() {
    for name in ["RSA-OAEP", "RSA-OAEP-256", "ECDH-ES+A128KW", "ECDH-ES+A192KW", "ECDH-ES+A256KW"] {
        assert!(is_supported_key_algorithm(name), "{name}");
    }
    for name in ["RSA1_5", "ECDH-ES", "dir", "A256KW", "rsa-oaep"] {
        assert!(!is_supported_key_algorithm(name), "{name}");
    }
}

#[test]
fn content_algorithms_round_trip_names() {
    for name in ["A128GCM", "A192GCM", "A256GCM", "A128CBC-HS256", "A192CBC-HS384", "A256CBC-HS512"] {
        assert_eq!(ContentAlgorithm::from_name(name).map(ContentAlgorithm::name), Some(name));
    }
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// One changed byte anywhere in a JWE: an error, no key fits, or (when the change was a no-op) the
        /// original plaintext; never a panic and never another plaintext.
        #[test]
        fn a_changed_byte_never_opens_to_another_plaintext(at in any::<prop::sample::Index>(), byte in any::<u8>()) {
            let (public, private) = p256();
            let mut jwe = wrap(&[public, rsa().0], PLAINTEXT).unwrap();
            let at = at.index(jwe.len());
            jwe[at] = byte;
            if let Ok(Some(plaintext)) = unwrap(&[private, rsa().1], &jwe) {
                prop_assert_eq!(&plaintext[..], &PLAINTEXT[..]);
            }
        }

        /// Arbitrary bytes are never a panic, and never open.
        #[test]
        fn arbitrary_bytes_never_open(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
            prop_assert!(!matches!(unwrap(&[p256().1], &bytes), Ok(Some(_))));
        }
    }
}

#[test]
fn jwk_algorithms_of_key_files_are_known_here() {
    for alg in crate::crypto::keys::jwk_key_algorithms() {
        assert!(is_supported_key_algorithm(alg), "{alg}");
    }
}
