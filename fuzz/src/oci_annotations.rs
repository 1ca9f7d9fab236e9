//! Fuzzes the layer options of an encrypted image (untrusted input): the `…enc.pubopts` annotation
//! (`PublicOptions::from_annotation`) and the unwrapped private options JSON (`PrivateOptions::from_json`). Neither
//! may panic, and whatever parses re-serializes (`to_annotation`, `to_json`) and parses back to the same fields.

use cryptadm::crypto::encoding::b64_encode;
use cryptadm::ocicrypt::layer::{CIPHER, PrivateOptions, PublicOptions};

/// A valid public options value without a nonce: the private options must carry theirs.
fn public_without_nonce() -> PublicOptions {
    PublicOptions { cipher: CIPHER.into(), hmac: vec![7; 32], nonce: None }
}

/// 16 bytes 0xf0‥0xff (docs/formats.md#oci-image-layer-encryption-containersocicrypt), in the public cipher options, which Go prefers.
const PUBLIC_NONCE: &str = "8PHy8/T19vf4+fr7/P3+/w==";

fn check_public(annotation: &str) {
    let Ok(public) = PublicOptions::from_annotation(annotation) else { return };
    assert_eq!(public.cipher, CIPHER, "accepted another cipher");
    assert_eq!(public.hmac.len(), 32, "accepted an HMAC that is not 32 bytes");
    let text = public.to_annotation();
    let again = PublicOptions::from_annotation(&text)
        .unwrap_or_else(|e| panic!("the re-serialized public options do not parse: {e}\n{text}"));
    assert_eq!(again.cipher, public.cipher, "cipher changed in the round trip: {text}");
    assert_eq!(again.hmac, public.hmac, "HMAC changed in the round trip: {text}");
    // Producers never write a public nonce (`to_annotation` writes `"cipheroptions":{}`).
    assert_eq!(again.nonce, None, "to_annotation wrote a nonce: {text}");
}

fn check_private(bytes: &[u8]) {
    let public = public_without_nonce();
    if let Ok(private) = PrivateOptions::from_json(bytes, &public) {
        let json = private.to_json();
        let again = PrivateOptions::from_json(&json, &public).unwrap_or_else(|e| {
            panic!("the re-serialized private options do not parse: {e}\n{}", String::from_utf8_lossy(&json))
        });
        assert_eq!(again.digest, private.digest, "digest changed in the round trip");
        // The key and nonce have no accessors: compare their canonical serialization.
        assert!(*again.to_json() == *json, "symkey or nonce changed in the round trip");
    }
    // With a public nonce, that nonce wins over whatever the private options say (Go's order).
    let public = PublicOptions { nonce: Some(PUBLIC_NONCE.into()), ..public_without_nonce() };
    if let Ok(private) = PrivateOptions::from_json(bytes, &public) {
        let json = private.to_json();
        let needle = format!(r#""cipheroptions":{{"nonce":"{PUBLIC_NONCE}"}}"#);
        assert!(
            json.windows(needle.len()).any(|w| w == needle.as_bytes()),
            "the private nonce overrode the public one"
        );
        let again = PrivateOptions::from_json(&json, &public).expect("re-serialized private options parse");
        assert_eq!(again.digest, private.digest, "digest changed in the round trip");
        assert!(*again.to_json() == *json, "symkey or nonce changed in the round trip");
    }
}

/// One fuzz input: panics (or fails an assertion) on a bug, returns otherwise.
pub fn run(data: &[u8]) {
    // The annotation as it is, and the bytes as the JSON inside it (so the fuzzer reaches the JSON reader
    // without having to discover base64).
    if let Ok(text) = std::str::from_utf8(data) {
        check_public(text);
    }
    check_public(&b64_encode(data));
    check_private(data);
}
