//! The bodies of cryptadm's fuzz targets, one module per target with `run(data)`, shared by the cargo-fuzz entry
//! points (`fuzz_targets/`) and the corpus replay that `cargo test` runs at the repository root
//! (`tests/fuzz_replay.rs` includes this file), so a crash found once stays fixed without nightly or cargo-fuzz.
//! Each body panics on a bug and returns otherwise; none may assume it runs in libFuzzer.

pub mod aws_answers;
pub mod bootstrap_document;
pub mod bootstrap_template;
pub mod clevis_jwe;
pub mod jwe_unwrap;
pub mod key_manager_blob;
pub mod key_parse;
pub mod keyprovider_config;
pub mod kmip_ttlv;
pub mod luks2_json;
pub mod luks_header;
pub mod oci_annotations;
pub mod oci_image;
pub mod ocicrypt_pgp;
pub mod pkcs7_unwrap;
pub mod qcow2_image;
pub mod redact_decoder;
pub mod stream_payload;
pub mod threshold_jwe;
pub mod tpm2_response;
pub mod volume_request;

/// A target's body: panics on a bug.
pub type Target = fn(&[u8]);

/// Every target by name: its `[[bin]]` in fuzz/Cargo.toml and its seed corpus `fuzz/corpus/<name>/`.
pub const TARGETS: &[(&str, Target)] = &[
    ("aws_answers", aws_answers::run),
    ("bootstrap_document", bootstrap_document::run),
    ("bootstrap_template", bootstrap_template::run),
    ("clevis_jwe", clevis_jwe::run),
    ("jwe_unwrap", jwe_unwrap::run),
    ("key_manager_blob", key_manager_blob::run),
    ("key_parse", key_parse::run),
    ("kmip_ttlv", kmip_ttlv::run),
    ("keyprovider_config", keyprovider_config::run),
    ("luks2_json", luks2_json::run),
    ("luks_header", luks_header::run),
    ("oci_annotations", oci_annotations::run),
    ("oci_image", oci_image::run),
    ("ocicrypt_pgp", ocicrypt_pgp::run),
    ("pkcs7_unwrap", pkcs7_unwrap::run),
    ("qcow2_image", qcow2_image::run),
    ("redact_decoder", redact_decoder::run),
    ("stream_payload", stream_payload::run),
    ("threshold_jwe", threshold_jwe::run),
    ("tpm2_response", tpm2_response::run),
    ("volume_request", volume_request::run),
];
