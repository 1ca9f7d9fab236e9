//! Interop of the PKCS#7 key wrapper (`cryptadm::ocicrypt::pkcs7`) with the real tools:
//!
//! * OpenSSL `cms -encrypt` envelopes (AES-CBC, RSA PKCS#1 v1.5 and OAEP) unwrap with our code;
//! * skopeo (Debian's 1.9.3, built on ocicrypt 1.0.3 and go.mozilla.org/pkcs7) encrypts an image for a
//!   certificate, and our code unwraps its `keys.pkcs7` annotation to the layer's private options;
//! * in reverse, skopeo decrypts that image after its annotation was replaced by our wrap of the same private
//!   options — and refuses it once the AES-GCM parameters are put in the RFC 5084 form, which guards the Go quirk
//!   in our encoder against being "fixed" (docs/formats.md#key-wrapping-schemes).
//!
//! The layout surgery is done by `tests/interop/oci_layout.py`, which is independent of cryptadm. These tests
//! never skip: `skopeo`, `umoci`, `openssl` and `python3` must be on PATH (`apt-get install skopeo umoci`).

use crate::support::{self, Scratch};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use cryptadm::ocicrypt::pkcs7;
use rsa::RsaPrivateKey;
use rsa::pkcs8::DecodePrivateKey;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use x509_cert::Certificate;

const PKCS7_ANNOTATION: &str = "org.opencontainers.image.enc.keys.pkcs7";
/// Private options as ocicrypt wraps them (docs/formats.md), for the OpenSSL cases.
const PRIVATE_OPTIONS: &[u8] = br#"{"symkey":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=","digest":"sha256:a27bf37cd685bd9528417aa3b952ed9203c81c26a8c8f21970e41dcb7c56a7ac","cipheroptions":{"nonce":"8PHy8/T19vf4+fr7/P3+/w=="}}"#;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pkcs7").join(name)
}

/// A test identity: the private key and certificate from the fixtures.
fn identity(name: &str) -> (RsaPrivateKey, Certificate) {
    let key = std::fs::read_to_string(fixture(&format!("{name}.key"))).expect("read key fixture");
    let certificate = std::fs::read(fixture(&format!("{name}.pem"))).expect("read certificate fixture");
    (
        RsaPrivateKey::from_pkcs8_pem(&key).expect("PKCS#8 key"),
        pkcs7::parse_certificate(&certificate, name).expect("certificate"),
    )
}

fn require_openssl() {
    support::require_tool("openssl", "apt-get install openssl");
}

fn require_image_tools() {
    support::require_tool("skopeo", "apt-get install skopeo");
    support::require_tool("umoci", "apt-get install umoci");
    support::require_tool("python3", "apt-get install python3");
}

/// Runs `command`, insisting on success; returns its output.
fn run(command: &mut Command) -> Output {
    let output = command.output().unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn unwrap_with(identities: &[&str], der: &[u8]) -> Option<Vec<u8>> {
    let keys: Vec<_> = identities.iter().map(|name| identity(name)).collect();
    pkcs7::unwrap(&keys, der).expect("well-formed PKCS#7").map(|plaintext| plaintext.to_vec())
}

#[test]
fn openssl_cms_envelopes_unwrap() {
    require_openssl();
    let scratch = Scratch::new();
    let plaintext = scratch.write("privopts.json", PRIVATE_OPTIONS);
    let cases: [(&str, &[&str]); 4] = [
        ("-aes256", &[]),
        ("-aes128", &[]),
        ("-aes256", &["-keyopt", "rsa_padding_mode:oaep"]),
        ("-aes128", &["-keyopt", "rsa_padding_mode:oaep", "-keyopt", "rsa_oaep_md:sha256"]),
    ];
    for (cipher, key_options) in cases {
        let out = scratch.path("envelope.der");
        run(Command::new("openssl")
            .args(["cms", "-encrypt", "-binary", "-outform", "DER", cipher, "-in"])
            .arg(&plaintext)
            .arg("-out")
            .arg(&out)
            .arg("-recip")
            .arg(fixture("alice.pem"))
            .args(key_options));
        let der = std::fs::read(&out).expect("read envelope");
        assert_eq!(unwrap_with(&["alice"], &der).as_deref(), Some(PRIVATE_OPTIONS), "{cipher} {key_options:?}");
        assert_eq!(unwrap_with(&["bob"], &der), None, "{cipher} {key_options:?}");
    }
}

#[test]
fn openssl_cms_envelope_for_two_recipients_unwraps_for_each() {
    require_openssl();
    let scratch = Scratch::new();
    let plaintext = scratch.write("privopts.json", PRIVATE_OPTIONS);
    let out = scratch.path("envelope.der");
    // OpenSSL keeps the recipients in the given order rather than DER SET OF order.
    run(Command::new("openssl")
        .args(["cms", "-encrypt", "-binary", "-outform", "DER", "-aes256", "-in"])
        .arg(&plaintext)
        .arg("-out")
        .arg(&out)
        .arg("-recip")
        .arg(fixture("carol.pem"))
        .arg("-recip")
        .arg(fixture("alice.pem")));
    let der = std::fs::read(&out).expect("read envelope");
    for name in ["alice", "carol"] {
        assert_eq!(unwrap_with(&[name], &der).as_deref(), Some(PRIVATE_OPTIONS), "{name}");
    }
    assert_eq!(unwrap_with(&["bob"], &der), None);
}

/// A scratch directory with OCI layouts in it: `src` (one gzip layer, made by umoci) and `enc` (that image
/// encrypted by skopeo for alice's certificate).
struct Images {
    scratch: Scratch,
}

impl Images {
    fn encrypted_by_skopeo() -> Self {
        require_image_tools();
        let images = Self { scratch: Scratch::new() };
        let rootfs = images.scratch.path("rootfs");
        std::fs::create_dir_all(rootfs.join("etc")).expect("mkdir rootfs");
        let text: String = (0..2000).map(|i| format!("line {i} of a layer that skopeo encrypts\n")).collect();
        std::fs::write(rootfs.join("etc/motd"), text).expect("write rootfs file");
        images.umoci(&["init", "--layout", "src"]);
        images.umoci(&["new", "--image", "src:v1"]);
        images.umoci(&["insert", "--rootless", "--image", "src:v1", "rootfs", "/"]);
        images.umoci(&["gc", "--layout", "src"]);
        images.encrypt("enc", &["alice"]);
        images
    }

    /// `skopeo copy` of `src` to `layout`, encrypted for the certificates of `recipients`.
    fn encrypt(&self, layout: &str, recipients: &[&str]) {
        let mut command = self.skopeo();
        command.arg("copy");
        for name in recipients {
            command.arg("--encryption-key").arg(format!("pkcs7:{}", fixture(&format!("{name}.pem")).display()));
        }
        run(command.arg("oci:src:v1").arg(format!("oci:{layout}:v1")));
    }

    fn umoci(&self, args: &[&str]) {
        run(Command::new("umoci").current_dir(self.scratch.dir.path()).args(args));
    }

    /// skopeo in the scratch directory, without depending on the host's signature policy file.
    fn skopeo(&self) -> Command {
        let mut command = Command::new("skopeo");
        command.current_dir(self.scratch.dir.path()).arg("--insecure-policy");
        command
    }

    fn layout_tool(&self) -> Command {
        let mut command = Command::new("python3");
        command
            .current_dir(self.scratch.dir.path())
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/oci_layout.py"));
        command
    }

    fn stdout_of(&self, args: &[&str]) -> String {
        let output = run(self.layout_tool().args(args));
        String::from_utf8(output.stdout).expect("UTF-8").trim().to_owned()
    }

    /// The decoded PKCS#7 annotation of the first layer of `layout`.
    fn pkcs7(&self, layout: &str) -> Vec<u8> {
        BASE64.decode(self.stdout_of(&["get", layout, "v1", PKCS7_ANNOTATION])).expect("base64 annotation")
    }

    fn layer_digest(&self, layout: &str) -> String {
        self.stdout_of(&["layer-digest", layout, "v1"])
    }

    /// Copies `enc` to `layout` with `der` as its PKCS#7 annotation.
    fn with_pkcs7(&self, layout: &str, der: &[u8]) {
        use std::io::Write;
        let mut child = self
            .layout_tool()
            .args(["set", "enc", layout, "v1", PKCS7_ANNOTATION])
            .stdin(std::process::Stdio::piped())
            .spawn()
            .expect("run oci_layout.py");
        child.stdin.take().expect("stdin").write_all(BASE64.encode(der).as_bytes()).expect("write annotation");
        assert!(child.wait().expect("wait for oci_layout.py").success(), "oci_layout.py set failed");
        assert_eq!(self.pkcs7(layout), der, "the annotation was not replaced");
    }

    /// A PKCS#7 blob rewritten by `oci_layout.py pkcs7-variant FORM`.
    fn variant(&self, form: &str, der: &[u8]) -> Vec<u8> {
        let input = self.scratch.write(&format!("{form}.in.der"), der);
        let output = self.scratch.path(&format!("{form}.out.der"));
        run(self.layout_tool().args(["pkcs7-variant", form]).arg(&input).arg(&output));
        std::fs::read(output).expect("read variant")
    }

    /// `skopeo copy` with alice's key and certificate (PKCS#7 needs both) from `layout` to `out`.
    fn skopeo_decrypt(&self, layout: &str, out: &str) -> Output {
        self.skopeo()
            .args(["copy", "--decryption-key"])
            .arg(fixture("alice.key"))
            .arg("--decryption-key")
            .arg(fixture("alice.pem"))
            .arg(format!("oci:{layout}:v1"))
            .arg(format!("oci:{out}:v1"))
            .output()
            .expect("run skopeo")
    }

    fn blob(&self, layout: &str, digest: &str) -> Vec<u8> {
        let hex = digest.strip_prefix("sha256:").expect("a sha256 digest");
        std::fs::read(self.scratch.path(layout).join("blobs/sha256").join(hex)).expect("read blob")
    }

    /// The private options inside skopeo's envelope, unwrapped with our code.
    fn private_options(&self) -> Vec<u8> {
        unwrap_with(&["alice"], &self.pkcs7("enc")).expect("alice's key unwraps skopeo's PKCS#7 envelope")
    }
}

#[test]
fn skopeo_pkcs7_envelope_unwraps_to_private_options() {
    let images = Images::encrypted_by_skopeo();
    let der = images.pkcs7("enc");
    assert_eq!(unwrap_with(&["bob", "carol"], &der), None, "only alice is a recipient");
    let private = images.private_options();
    let options: serde_json::Value = serde_json::from_slice(&private).expect("private options are JSON");
    let decoded = |pointer: &str| BASE64.decode(options.pointer(pointer).and_then(|v| v.as_str()).expect(pointer));
    assert_eq!(decoded("/symkey").expect("base64 symkey").len(), 32, "{options}");
    assert_eq!(decoded("/cipheroptions/nonce").expect("base64 nonce").len(), 16, "{options}");
    assert_eq!(options["digest"], images.layer_digest("src").as_str(), "digest of the source layer");
}

/// Where the IssuerAndSerialNumber of each of `names` occurs in `der`.
fn recipient_offsets(der: &[u8], names: &[&str]) -> Vec<usize> {
    use der::Encode;
    names
        .iter()
        .map(|name| {
            let certificate = identity(name).1;
            let id = cms::cert::IssuerAndSerialNumber {
                issuer: certificate.tbs_certificate.issuer,
                serial_number: certificate.tbs_certificate.serial_number,
            }
            .to_der()
            .expect("encode IssuerAndSerialNumber");
            der.windows(id.len()).position(|window| window == id).unwrap_or_else(|| panic!("{name} is not a recipient"))
        })
        .collect()
}

#[test]
fn skopeo_envelope_for_three_recipients_unwraps_for_each_in_our_order() {
    let images = Images::encrypted_by_skopeo();
    images.encrypt("multi", &["carol", "bob", "alice"]);
    let theirs = images.pkcs7("multi");
    let private = unwrap_with(&["carol"], &theirs).expect("carol's key unwraps skopeo's envelope");
    for name in ["alice", "bob"] {
        assert_eq!(unwrap_with(&[name], &theirs).as_deref(), Some(&private[..]), "{name}");
    }
    // Go sorts the RecipientInfos as a DER SET OF; so do we, whatever order the recipients come in.
    let ours = pkcs7::wrap(&[identity("bob").1, identity("carol").1, identity("alice").1], &private).expect("wrap");
    let names = ["alice", "bob", "carol"];
    let order = |der: &[u8]| {
        let offsets = recipient_offsets(der, &names);
        let mut sorted: Vec<_> = names.iter().zip(offsets).collect();
        sorted.sort_by_key(|&(_, offset)| offset);
        sorted.into_iter().map(|(name, _)| *name).collect::<Vec<_>>()
    };
    assert_eq!(order(&ours), order(&theirs));
}

#[test]
fn skopeo_decrypts_layers_whose_pkcs7_envelope_we_wrote() {
    let images = Images::encrypted_by_skopeo();
    let private = images.private_options();
    let ours = pkcs7::wrap(&[identity("alice").1], &private).expect("wrap");
    // What we write, and the constructed [0] encryptedContent that go.mozilla.org/pkcs7 itself writes.
    let segmented = images.variant("segmented", &ours);
    assert_eq!(unwrap_with(&["alice"], &segmented).as_deref(), Some(&private[..]));
    // And alice as one of three recipients, not the first in SET OF order.
    let three = [identity("carol").1, identity("bob").1, identity("alice").1];
    let ours_three = pkcs7::wrap(&three, &private).expect("wrap");
    let source_digest = images.layer_digest("src");
    for (layout, der) in [("ours", &ours), ("segmented", &segmented), ("three", &ours_three)] {
        images.with_pkcs7(layout, der);
        let out = format!("{layout}-dec");
        let output = images.skopeo_decrypt(layout, &out);
        assert!(
            output.status.success(),
            "skopeo cannot decrypt `{layout}`:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let digest = images.layer_digest(&out);
        assert_eq!(digest, source_digest, "`{layout}` decrypts to a different layer");
        let blob = images.blob(&out, &digest);
        assert_eq!(format!("sha256:{}", hex::encode(Sha256::digest(&blob))), digest);
        assert_eq!(blob, images.blob("src", &source_digest));
    }
}

#[test]
fn skopeo_rejects_rfc5084_gcm_parameters() {
    let images = Images::encrypted_by_skopeo();
    let private = images.private_options();
    let ours = pkcs7::wrap(&[identity("alice").1], &private).expect("wrap");
    let rfc5084 = images.variant("rfc5084", &ours);
    // The standard form is fine for us to read...
    assert_eq!(unwrap_with(&["alice"], &rfc5084).as_deref(), Some(&private[..]));
    // ...but Go's reader unmarshals the parameters' content, not the parameters, and fails on it.
    images.with_pkcs7("rfc5084", &rfc5084);
    let output = images.skopeo_decrypt("rfc5084", "rfc5084-dec");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success(),
        "skopeo accepted RFC 5084 AES-GCM parameters; has ocicrypt changed? (docs/formats.md)"
    );
    assert!(
        stderr.contains("none of the private keys could be used for decryption"),
        "failed for another reason: {stderr}"
    );
}
