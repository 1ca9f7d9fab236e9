//! OCI image layer encryption, wire-compatible with containers/ocicrypt (skopeo, podman, buildah, containerd
//! imgcrypt): the AES-256-CTR + HMAC-SHA-256 layer cipher, the private and public options, and the key wrappers
//! (JWE, PKCS#7, OpenPGP, external key providers) that protect each layer's key for its recipients.
//!
//! `docs/formats.md#oci-image-layer-encryption-containersocicrypt` is the reference for every byte written here; where it says what Go does, the
//! code says so too, because interoperability depends on reproducing Go's choices exactly.

mod error;
pub mod image;
pub mod inspect;
pub mod jwe;
pub mod key_manager;
pub mod keyfiles;
pub mod keyprovider;
pub mod keyprovider_server;
pub mod keywrap;
pub mod layer;
pub mod nodeconfig;
#[cfg(feature = "pgp")]
pub mod pgp;
/// Without the `pgp` feature (the LGPL-free build), a stand-in that refuses every OpenPGP operation.
#[cfg(not(feature = "pgp"))]
#[path = "pgp_disabled.rs"]
pub mod pgp;
mod pipeline;
pub mod pkcs7;
pub mod recipients;
pub mod sealed;
pub mod stream;

pub use error::Error;

/// Prefix of every annotation ocicrypt owns; producers strip all of them before writing new ones.
pub const ANNOTATION_PREFIX: &str = "org.opencontainers.image.enc.";
/// Prefix of the wrapped-key annotations (`…keys.jwe`, `…keys.pkcs7`, `…keys.pgp`, `…keys.provider.NAME`).
pub const KEYS_ANNOTATION_PREFIX: &str = "org.opencontainers.image.enc.keys.";
/// The public options annotation.
pub const PUBOPTS_ANNOTATION: &str = "org.opencontainers.image.enc.pubopts";
