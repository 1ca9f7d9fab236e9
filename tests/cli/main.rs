//! Command-line tests: the `cryptadm` binary run as operators, cloud-init and CI run it, and interop against the
//! real tools (cloud-init, skopeo, GnuPG, OpenSSL, Python's `cryptography` and `jwcrypto`, an ocicrypt key provider).

// Tests start the real tools and read their environment freely: the limits of clippy.toml are for the crate.
#![allow(clippy::disallowed_methods)]

mod support;

mod bootstrap;
mod cloud_init;
mod containerd;
mod crypto_oracles;
mod disk;
mod generated;
mod image;
mod image_inspect;
mod interop_jwe;
mod interop_keyprovider;
mod interop_pgp;
mod interop_pkcs7;
mod interop_python;
mod invariants;
mod keyprovider_grpc;
mod layering;
mod luks_library;
mod plugins;
mod properties;
mod registry;
mod secret;
mod stream_decrypt;
mod terminal;
mod volume;
