//! Fuzzes reading an image (untrusted input) through the public library API. The input's first byte chooses
//! how the rest is stored in a fresh OCI layout: bit 0 as the root manifest (0) or the root index (1), bit 1 whether
//! the walk selects the platform `linux/amd64` or every platform. `index.json` points at the blob with the right
//! digest and size. Beside it the layout always holds a few fixed blobs (a config, a plain and an "encrypted" layer,
//! and a manifest naming them; see `fixed_blobs`) so that a manifest or index that names them by digest gets past
//! the first missing blob.
//!
//! Then `authorize_image` and `decrypt_image` run with no keys: they return `Ok` or `Err`, never panic, never
//! loop, and without keys nothing is authorized or decrypted. A decryption without keys that succeeds copies the
//! image unchanged, and then authorizing finds no encrypted layer either. The input as UTF-8 is also parsed as an
//! image reference, which must print back to itself.

use cryptadm::interact::NonInteractive;
use cryptadm::oci::{
    ImageReference, ImageSource, LayoutDestination, LayoutSource, OCI_INDEX, OCI_MANIFEST, Platform, digest_hex,
    sha256_digest,
};
use cryptadm::ocicrypt::image::{Selection, authorize_image, decrypt_image};
use cryptadm::ocicrypt::keywrap::KeyUnwrapper;
use std::path::Path;

const CONFIG: &[u8] = br#"{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}"#;
const PLAIN_LAYER: &[u8] = b"not really a tar, never read as one\n";
/// The ciphertext of docs/formats.md#oci-image-layer-encryption-containersocicrypt (whose `pubopts` annotation is in `FIXED_MANIFEST`).
const ENCRYPTED_LAYER: &[u8] = &[
    0xfd, 0x63, 0xa4, 0xee, 0x51, 0xef, 0xf0, 0xbf, 0x7a, 0x1d, 0x83, 0x27, 0x34, 0x12, 0x15, 0x71, 0xa9, 0x2b, 0x14,
    0x32, 0xfb, 0x45, 0x57, 0xa8, 0x0d, 0xd5, 0x2c, 0x51, 0x3e, 0x57, 0xf2, 0xeb, 0xea, 0x18, 0x01, 0x2d, 0x71, 0x7b,
    0x81, 0xf7, 0x0a, 0x8f, 0x4f, 0x73, 0xfc, 0x37, 0x80, 0xf6, 0x39, 0x1c, 0xe3, 0x59, 0xb3, 0x83, 0x93, 0x02, 0x65,
    0x7e, 0xbf, 0x80, 0x93, 0x11, 0x52,
];
const PUBOPTS: &str = "eyJjaXBoZXIiOiJBRVNfMjU2X0NUUl9ITUFDX1NIQTI1NiIsImhtYWMiOiJkUXJGaGlIYnhOdnV3TXkxMTJyK0hlK3dYUm1hczVKUHd3QVRQOGZmQ01jPSIsImNpcGhlcm9wdGlvbnMiOnt9fQ==";

/// The fixed blobs every layout holds: config, plain layer, encrypted layer, and a manifest naming all three.
struct FixedBlobs {
    blobs: Vec<Vec<u8>>,
}

fn fixed_blobs() -> &'static FixedBlobs {
    static FIXED: std::sync::OnceLock<FixedBlobs> = std::sync::OnceLock::new();
    FIXED.get_or_init(|| {
        let descriptor = |media_type: &str, bytes: &[u8]| {
            serde_json::json!({"mediaType": media_type, "digest": sha256_digest(bytes), "size": bytes.len()})
        };
        let mut encrypted = descriptor("application/vnd.oci.image.layer.v1.tar+gzip+encrypted", ENCRYPTED_LAYER);
        encrypted["annotations"] = serde_json::json!({
            "org.opencontainers.image.enc.keys.jwe": "e30=",
            "org.opencontainers.image.enc.pubopts": PUBOPTS,
        });
        let manifest = serde_json::json!({
            "schemaVersion": 2,
            "mediaType": OCI_MANIFEST,
            "config": descriptor("application/vnd.oci.image.config.v1+json", CONFIG),
            "layers": [descriptor("application/vnd.oci.image.layer.v1.tar+gzip", PLAIN_LAYER), encrypted],
        });
        let manifest = serde_json::to_vec(&manifest).expect("JSON values serialize");
        FixedBlobs { blobs: vec![CONFIG.to_vec(), PLAIN_LAYER.to_vec(), ENCRYPTED_LAYER.to_vec(), manifest] }
    })
}

fn write_blob(layout: &Path, bytes: &[u8]) -> String {
    let digest = sha256_digest(bytes);
    let hex = digest_hex(&digest).expect("sha256_digest is a valid digest");
    std::fs::write(layout.join("blobs/sha256").join(hex), bytes).expect("writing a blob");
    digest
}

/// A scratch directory per run: in memory where possible (destinations fsync every blob).
fn scratch() -> tempfile::TempDir {
    let mut builder = tempfile::Builder::new();
    builder.prefix("cryptadm-fuzz-oci-image-");
    let shm = Path::new("/dev/shm");
    if shm.is_dir()
        && let Ok(dir) = builder.tempdir_in(shm)
    {
        return dir;
    }
    builder.tempdir().expect("creating a temporary directory")
}

fn check_reference(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(reference) = ImageReference::parse(text) else { return };
    let printed = reference.to_string();
    let again =
        ImageReference::parse(&printed).unwrap_or_else(|e| panic!("`{printed}` (from `{text}`) does not parse: {e}"));
    assert_eq!(again, reference, "`{text}` prints as `{printed}`, which parses to another reference");
}

/// One fuzz input: panics (or fails an assertion) on a bug, returns otherwise.
pub fn run(data: &[u8]) {
    check_reference(data);
    let Some((&mode, blob)) = data.split_first() else { return };
    let media_type = if mode & 1 == 0 { OCI_MANIFEST } else { OCI_INDEX };
    let selection = if mode & 2 == 0 {
        Selection::default()
    } else {
        Selection {
            platforms: vec![Platform::parse("linux/amd64").expect("a platform")],
            layers: Vec::new(),
            allow_plaintext: true,
        }
    };

    let scratch = scratch();
    let layout = scratch.path().join("in");
    std::fs::create_dir_all(layout.join("blobs/sha256")).expect("creating the layout");
    std::fs::write(layout.join("oci-layout"), br#"{"imageLayoutVersion":"1.0.0"}"#).expect("writing oci-layout");
    for fixed in &fixed_blobs().blobs {
        write_blob(&layout, fixed);
    }
    let digest = write_blob(&layout, blob);
    let index = serde_json::json!({
        "schemaVersion": 2,
        "manifests": [{"mediaType": media_type, "digest": digest, "size": blob.len()}],
    });
    std::fs::write(layout.join("index.json"), serde_json::to_vec(&index).expect("JSON values serialize"))
        .expect("writing index.json");

    let source = LayoutSource::open(&layout, None).expect("the harness writes a valid index.json");
    let no_keys: &[Box<dyn KeyUnwrapper>] = &[];

    let authorized = authorize_image(&source, &selection, no_keys, 6);
    if let Ok(reports) = &authorized {
        for report in reports {
            assert_eq!(report.outcome, "denied", "layer {} authorized without keys", report.index);
        }
    }

    let out = scratch.path().join("out");
    let destination = LayoutDestination::create(&out, None).expect("creating the destination layout");
    if let Ok(reports) = decrypt_image(&source, Box::new(destination), &selection, no_keys, 1, &NonInteractive) {
        for report in &reports {
            assert_ne!(report.outcome, "decrypted", "layer {} decrypted without keys", report.index);
        }
        let copy = LayoutSource::open(&out, None).expect("a committed destination opens");
        assert_eq!(copy.root(), source.root(), "decrypting without keys changed the image");
        match &authorized {
            Ok(reports) => assert!(
                reports.is_empty(),
                "decrypting without keys succeeded, yet authorizing found encrypted layers: {reports:?}"
            ),
            Err(e) => panic!("decrypting without keys succeeded, yet authorizing failed: {e}"),
        }
    }
}
