//! Command-line tests: the `cryptadm` binary run as operators, cloud-init and CI run it, and interop against the
//! real tools (cloud-init, skopeo, GnuPG, OpenSSL, Python's `cryptography` and `jwcrypto`, an ocicrypt key provider).

// Tests start the real tools and read their environment freely: the limits of clippy.toml are for the crate.
#![allow(clippy::disallowed_methods)]

mod support;
mod support_aws;
mod support_first_boot;
mod support_guest;
mod support_kmip;
mod support_loop;
mod support_luks;
mod support_misbehaving;
mod support_openbao;
mod support_openstack;
mod support_tang;
mod support_tpm2;

mod aws;
mod aws_deploy;
mod aws_image;
mod aws_proxy;
mod aws_roles;
mod backends;
mod bootstrap;
mod cloud_init;
// These prove OpenPGP recipients too, so they need the default `pgp` feature.
#[cfg(feature = "pgp")]
mod containerd;
mod crypto_oracles;
mod deadline;
mod disk;
mod disk_guard;
mod exit_codes;
mod generated;
mod hardening;
mod ignition;
mod image;
#[cfg(feature = "pgp")]
mod image_inspect;
mod interop_jwe;
mod interop_keyprovider;
#[cfg(feature = "pgp")]
mod interop_pgp;
mod interop_pkcs7;
mod interop_python;
mod invariants;
mod keyprovider_grpc;
mod kmip;
mod kmip_bootstrap;
mod kmip_volume;
mod layer_integrity;
mod layering;
mod luks_library;
mod misuse;
mod misuse_images;
#[cfg(not(feature = "pgp"))]
mod no_pgp;
mod openbao;
mod openbao_image;
mod openbao_volume;
#[cfg(target_os = "linux")]
mod openstack;
mod plugins;
// It shares the runnable image of `containerd`.
#[cfg(feature = "pgp")]
mod podman;
mod properties;
mod qcow2;
mod readme;
mod redaction;
mod registry;
mod registry_hostile;
mod registry_parallel;
mod registry_ranged;
mod registry_token;
mod remote_config;
mod sandbox;
mod secret;
mod stores;
mod stream_decrypt;
mod tang;
mod terminal;
mod tpm2;
mod volume;
mod volume_deploy;
mod volume_sidecar;
// The guest tests (QEMU TCG boots) come last: see zz_guests.rs.
mod zz_guests;
