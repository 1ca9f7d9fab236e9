//! The OpenPGP key wrapper of a build without the `pgp` feature (the LGPL-free build: sequoia-openpgp is
//! LGPL-2.0-or-later). It has the API of `pgp.rs`, and every entry point that would need OpenPGP refuses with
//! [`Error::InvalidKey`] (exit 3) saying so, so `pgp:` recipients, `--gpg-homedir`, OpenPGP key files and layers
//! wrapped only for OpenPGP fail with a reason instead of looking like a wrong key.

use super::Error;
use crate::crypto::{Passphrase, SecretBytes};
use std::path::Path;

/// Why every call here fails.
pub const NO_OPENPGP: &str = "this build of cryptadm has no OpenPGP support (built without the `pgp` feature); use a build with default features";

/// An OpenPGP certificate. This build has none: the type has no values, so code holding a `Vec<Cert>` compiles
/// and the vector is always empty.
#[derive(Debug, Clone)]
pub enum Cert {}

impl Cert {
    /// Whether the certificate holds secret key material (it cannot exist).
    pub fn is_tsk(&self) -> bool {
        match *self {}
    }
}

/// Every key ID and fingerprint of `cert`'s keys (there is no certificate in this build).
pub fn key_handles(cert: &Cert) -> Vec<String> {
    match *cert {}
}

/// The error of every OpenPGP entry point in this build, naming the key, recipient or layer concerned.
pub fn unsupported(what: &str) -> Error {
    Error::InvalidKey { what: what.into(), problem: NO_OPENPGP.into() }
}

/// Whether `bytes` look like an OpenPGP key (ASCII armour, or a binary public- or secret-key packet first), so
/// that such a file is refused for the missing feature and not reported as an unreadable private key.
pub fn looks_like_openpgp(bytes: &[u8]) -> bool {
    let text = bytes.trim_ascii_start();
    if text.starts_with(b"-----BEGIN PGP") {
        return true;
    }
    let Some(&tag) = bytes.first() else { return false };
    // RFC 9580 §4.2: bit 7 set; new format (bit 6) carries the tag in bits 0-5, the old format in bits 2-5.
    // Tags 5 and 6 are the secret and public key packets that start every transferable key.
    let packet = match tag {
        t if t & 0xc0 == 0xc0 => t & 0x3f,
        t if t & 0x80 == 0x80 => (t >> 2) & 0x0f,
        _ => return false,
    };
    matches!(packet, 5 | 6)
}

/// Refuses: this build cannot read OpenPGP packets, not even the key IDs `image inspect` shows.
pub fn recipient_key_ids(_message: &[u8]) -> Result<Vec<String>, Error> {
    Err(unsupported("the OpenPGP recipients of a layer"))
}

/// Refuses: this build cannot encrypt for OpenPGP recipients.
pub fn wrap(_recipients: &[Cert], _plaintext: &[u8]) -> Result<Vec<u8>, Error> {
    Err(unsupported("OpenPGP recipients"))
}

/// Never unwraps: there are no OpenPGP secret keys in this build.
pub fn unwrap(
    _secret_keys: &[Cert],
    _passphrases: &[Passphrase],
    _message: &[u8],
) -> Result<Option<SecretBytes>, Error> {
    Ok(None)
}

/// Refuses: `what` (a `pgp:` recipient file) cannot be read without OpenPGP support.
pub fn parse_keyring(_bytes: &[u8], what: &str) -> Result<Vec<Cert>, Error> {
    Err(unsupported(what))
}

/// Refuses: `pgp:` recipients are looked up in gpg's keyring, which this build cannot read.
pub fn recipients_from_gpg(_gpg_homedir: Option<&Path>, names: &[String]) -> Result<Vec<Cert>, Error> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    Err(unsupported(&format!("recipient `pgp:{}`", names[0])))
}

/// Refuses: `--gpg-homedir` offers OpenPGP secret keys, which this build cannot use.
pub fn secret_keys_from_gpg(
    gpg_homedir: Option<&Path>,
    _passphrase: Option<&Passphrase>,
    _key_ids: &[String],
) -> Result<Vec<Cert>, Error> {
    Err(unsupported(&format!("GnuPG home {}", gpg_homedir.map_or("(default)".into(), |p| p.display().to_string()))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_openpgp_keys_only() {
        assert!(looks_like_openpgp(b"-----BEGIN PGP PRIVATE KEY BLOCK-----\n"));
        assert!(looks_like_openpgp(&[0xc5, 0x58])); // new-format secret key packet
        assert!(looks_like_openpgp(&[0x99, 0x01])); // old-format public key packet (what gpg --export writes)
        assert!(looks_like_openpgp(&[0x95, 0x01])); // old-format secret key packet
        assert!(!looks_like_openpgp(b"-----BEGIN PRIVATE KEY-----\n"));
        assert!(!looks_like_openpgp(&[0x30, 0x82])); // DER
        assert!(!looks_like_openpgp(b"{\"kty\":\"RSA\"}"));
        assert!(!looks_like_openpgp(b""));
    }

    #[test]
    fn every_entry_point_refuses_with_exit_3() {
        use crate::exit::{Classify, ExitStatus};
        for error in [
            wrap(&[], b"x").unwrap_err(),
            parse_keyring(b"", "key.gpg").unwrap_err(),
            recipients_from_gpg(None, &["alice@example.com".into()]).unwrap_err(),
            secret_keys_from_gpg(None, None, &[]).unwrap_err(),
        ] {
            assert!(error.to_string().contains("no OpenPGP support"), "{error}");
            assert_eq!(error.status(), ExitStatus::InvalidInput);
        }
    }
}
