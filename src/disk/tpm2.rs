//! systemd-cryptenroll's TPM2 enrolments of LUKS2 volumes: a keyslot and a `systemd-tpm2` token
//! ([`crate::kms::tpm2::systemd`]). [`recover_passphrase`] opens what `systemd-cryptenroll --tpm2-device` enrolled;
//! [`enroll`] writes a keyslot and token that systemd-cryptenroll lists and systemd-cryptsetup unlocks.

use super::Error;
use crate::crypto::Passphrase;
use crate::kms::tpm2::{self, Device, KeyAlg, PcrSelection, Tpm, systemd};
use crate::luks::{Kdf, Volume, VolumeKey};

/// One `systemd-tpm2` token of a volume.
#[derive(Debug)]
pub struct Enrollment {
    /// The token id.
    pub token: u32,
    /// The keyslots it names.
    pub keyslots: Vec<u32>,
    /// What it says, or why it cannot be read.
    pub parsed: Result<systemd::Token, tpm2::Error>,
}

impl Enrollment {
    /// `systemd-tpm2 sha256:7 (ecc)`, or why the token cannot be read.
    pub fn description(&self) -> String {
        match &self.parsed {
            Ok(token) => token.describe(),
            Err(e) => format!("unreadable: {e}"),
        }
    }
}

/// The volume's `systemd-tpm2` tokens, without asking the TPM.
pub fn enrollments(volume: &Volume) -> Vec<Enrollment> {
    volume
        .tokens()
        .into_iter()
        .filter(|(_, token)| token.kind == systemd::TOKEN_TYPE)
        .map(|(id, token)| Enrollment {
            token: id,
            keyslots: token.keyslots.iter().map(|k| k.0).collect(),
            parsed: systemd::Token::from_fields(&token.extra),
        })
        .collect()
}

/// Whether every readable TPM2 enrolment of the volume was made with a PIN (`systemd-cryptenroll
/// --tpm2-with-pin=yes`), so that opening it needs one.
pub fn needs_pin(volume: &Volume) -> bool {
    let enrollments = enrollments(volume);
    let tokens: Vec<&systemd::Token> = enrollments.iter().filter_map(|e| e.parsed.as_ref().ok()).collect();
    !tokens.is_empty() && tokens.iter().all(|token| token.pin)
}

/// The passphrase of a TPM2-enrolled keyslot, unsealed by the TPM at `device` and checked against the keyslot.
/// Tries each token in order; the first that opens its keyslot wins. Returns the keyslot id and the passphrase.
///
/// `pin` is the PIN of tokens enrolled with one (`tpm2-pin`, [`needs_pin`]); tokens without ignore it.
pub fn recover_passphrase(
    volume: &Volume,
    path: &str,
    device: &Device,
    pin: Option<&[u8]>,
) -> Result<(u32, Passphrase), Error> {
    let enrollments = enrollments(volume);
    let mut last = None;
    let mut tpm = None;
    for enrollment in &enrollments {
        let token = match &enrollment.parsed {
            Ok(token) => token,
            Err(e) => {
                last = Some(tpm2::Error::Config(format!("token {}: {e}", enrollment.token)).into());
                continue;
            }
        };
        let tpm = match &mut tpm {
            Some(tpm) => tpm,
            None => tpm.insert(Tpm::open(device).map_err(Error::from)?),
        };
        let passphrase = match systemd::passphrase(tpm, token, pin) {
            Ok(secret) => Passphrase::new(secret.to_vec()),
            Err(e) => {
                last = Some(e.into());
                continue;
            }
        };
        for &slot in &enrollment.keyslots {
            match volume.unlock_keyslot(slot, passphrase.expose()) {
                Ok(_) => return Ok((slot, passphrase)),
                Err(e) => last = Some(Error::Luks(e)),
            }
        }
    }
    Err(last.unwrap_or_else(|| Error::NoTpm2Enrollment(path.to_owned())))
}

/// The key-derivation settings systemd-cryptenroll gives a TPM2 keyslot: its passphrase is 256 random bits, so
/// PBKDF2 with the least work cryptsetup accepts.
pub fn kdf() -> Kdf {
    Kdf::Pbkdf2 { hash: "sha512".into(), iterations: 1000 }
}

/// Seals a fresh secret to the TPM at `device` (to `pcrs`' current values) and adds a keyslot for it with its
/// `systemd-tpm2` token, in one header write. Returns (keyslot id, token id).
pub fn enroll(
    volume: &mut Volume,
    key: &VolumeKey,
    device: &Device,
    primary: KeyAlg,
    pcrs: Option<PcrSelection>,
    pin: Option<&[u8]>,
) -> Result<(u32, u32), Error> {
    let mut tpm = Tpm::open(device)?;
    let (token, passphrase) = systemd::enroll(&mut tpm, primary, pcrs, pin)?;
    Ok(volume.add_keyslot_with_token(key, &passphrase, &kdf(), systemd::TOKEN_TYPE, token.to_fields())?)
}
