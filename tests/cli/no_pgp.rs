//! The LGPL-free build (`--no-default-features`, no `pgp` feature): every way of asking for OpenPGP fails with
//! exit 3 and says that this build has no OpenPGP support, before any image is written.

use crate::image::{TWO_LAYERS, fixture, oci};
use crate::support::{Scratch, cryptadm};
use predicates::prelude::*;

const NO_SUPPORT: &str = "this build of cryptadm has no OpenPGP support";
const RSA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/keys/rsa2048.pkcs8.pem");

/// An ASCII-armoured and a binary (old-format secret-key packet) OpenPGP key file: enough to be recognised.
fn openpgp_key_files(scratch: &Scratch) -> [String; 2] {
    let armoured = scratch
        .write("key.asc", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nxcLY\n-----END PGP PRIVATE KEY BLOCK-----\n");
    let binary = scratch.write("key.gpg", [0x95, 0x03, 0xc6, 0x04, 0x00]);
    [armoured.display().to_string(), binary.display().to_string()]
}

#[test]
fn openpgp_recipients_and_keys_are_refused() {
    let work = Scratch::new();
    let src = work.path("src");
    fixture(&src, TWO_LAYERS);
    let dest = work.path("dest");
    let refused = |args: &[&str]| {
        cryptadm()
            .args(args)
            .assert()
            .code(3)
            .stdout(predicate::str::is_empty())
            .stderr(predicate::str::contains(NO_SUPPORT));
        assert!(!dest.exists(), "{args:?} wrote the destination");
    };
    let (src, dest_ref) = (oci(&src), oci(&dest));
    refused(&["image", "encrypt", "--recipient", "pgp:alice@example.com", &src, &dest_ref]);
    let [armoured, binary] = openpgp_key_files(&work);
    refused(&["image", "encrypt", "--recipient", &format!("pgp:{binary}"), &src, &dest_ref]);
    let home = work.path("gnupg").display().to_string();
    std::fs::create_dir(&home).unwrap();
    refused(&["image", "decrypt", "--key", RSA, "--gpg-homedir", &home, &src, &dest_ref]);
    for key in [&armoured, &binary] {
        refused(&["image", "decrypt", "--key", key, &src, &dest_ref]);
        refused(&["image", "authorize", "--key", key, &src]);
        refused(&["secret", "generate-k8s", "k", "--key", key]);
    }
}
