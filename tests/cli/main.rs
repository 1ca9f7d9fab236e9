//! Command-line tests: the `cryptadm` binary run as operators, cloud-init and CI run it, and interop against the
//! real tools (cloud-init, skopeo, GnuPG, OpenSSL, Python's `cryptography` and `jwcrypto`, an ocicrypt key provider).

mod support;

mod bootstrap;
mod cloud_init;
mod disk;
mod generated;
mod image;
mod interop_jwe;
mod interop_keyprovider;
#[cfg(feature = "pgp")]
mod interop_pgp;
mod interop_pkcs7;
mod interop_python;
mod invariants;
#[cfg(not(feature = "pgp"))]
mod no_pgp;
mod plugins;
mod properties;
mod registry;
mod secret;
mod terminal;
mod volume;
