//! The OpenPGP key wrapper (annotation `…enc.keys.pgp`): the layer's private options encrypted as an OpenPGP
//! message for one or more OpenPGP certificates, as containers/ocicrypt writes it (docs/formats.md).
//!
//! What ocicrypt writes, and so what [`wrap`] writes: one version-3 PKESK per recipient, addressed to the
//! recipient's encryption subkey by key ID; one SEIPD version 1 packet (CFB with a modification detection code);
//! inside it a literal data packet with an empty file name and date 0; no compression, no signature. The cipher is
//! AES-256 unless a recipient's preferences rule it out. gpg and every ocicrypt version read that.
//!
//! [`unwrap`] reads more than ocicrypt writes (what `gpg -e` produces: compression, several subkeys, anonymous
//! recipients, armour) because operators hand us messages and keys made with gpg.
//!
//! Recipients are found the way ocicrypt finds them (docs/formats.md): the whole public keyring is exported from gpg
//! and certificates are selected in-process by exact e-mail address or exact name of a user ID. We also accept a
//! fingerprint or long key ID, and, unlike ocicrypt, a user ID that is not a mail address anywhere in the keyring
//! does not break encryption.

use super::Error;
use crate::crypto::{Passphrase, SecretBytes};
use crate::process;
use sequoia_openpgp as openpgp;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

pub use openpgp::cert::Cert;
use openpgp::cert::amalgamation::ValidAmalgamation;
use openpgp::cert::{CertParser, Preferences};
use openpgp::crypto::{Password, SessionKey};
use openpgp::packet::key::{PublicParts, SecretParts, UnspecifiedRole};
use openpgp::packet::{Key, PKESK, SKESK};
use openpgp::parse::Parse;
use openpgp::parse::stream::{DecryptionHelper, DecryptorBuilder, MessageLayer, MessageStructure, VerificationHelper};
use openpgp::policy::StandardPolicy;
use openpgp::serialize::stream::{Encryptor, LiteralWriter, Message, Recipient};
use openpgp::types::{DataFormat, Features, RevocationStatus, SymmetricAlgorithm};
use openpgp::{Fingerprint, KeyHandle, KeyID};

mod go_compat;

const SCHEME: &str = "pgp";
/// Most bytes a wrapped key may decrypt to. Private options are a few hundred bytes; the cap stops a compressed
/// message from expanding without bound (the decryptor buffers this much before it hands anything over).
pub const MAX_PLAINTEXT: usize = 1 << 20;
/// Most bytes of `gpg --export` output read: a whole public keyring, which can be large but not unbounded.
pub const MAX_KEYRING_EXPORT: usize = 64 << 20;
/// How long `gpg --export` may take (gpg may first start or migrate its keybox).
pub const GPG_TIMEOUT: Duration = Duration::from_secs(60);
/// Ciphers in the order ocicrypt tries them (docs/formats.md): its configured default AES-256 first.
const CIPHER_CANDIDATES: [SymmetricAlgorithm; 3] =
    [SymmetricAlgorithm::AES256, SymmetricAlgorithm::AES128, SymmetricAlgorithm::AES192];

/// Encrypts `plaintext` (a layer's private options) for `recipients` as a binary OpenPGP message.
///
/// Each recipient gets one PKESK for its newest valid encryption-capable (sub)key under the standard policy (what
/// ocicrypt's Go OpenPGP library and gpg choose). A recipient that is revoked, expired or has no usable encryption
/// key is an [`Error::InvalidKey`], never silently skipped.
pub fn wrap(recipients: &[Cert], plaintext: &[u8]) -> Result<Vec<u8>, Error> {
    let failed = |problem: String| Error::Wrap { scheme: SCHEME.into(), problem };
    if recipients.is_empty() {
        return Err(failed("no OpenPGP recipients given".into()));
    }
    let policy = StandardPolicy::new();
    let keys = recipients.iter().map(|cert| encryption_key(&policy, cert)).collect::<Result<Vec<_>, _>>()?;
    let cipher = choose_cipher(&policy, recipients);

    let mut sink = Vec::new();
    let message = Message::new(&mut sink);
    // Advertising only SEIPDv1 keeps sequoia from switching to SEIPDv2 (AEAD) for recipients whose features allow
    // it: ocicrypt never writes v2, and older readers (x/crypto/openpgp in ocicrypt < 1.3.2) cannot read it.
    let recipients =
        keys.iter().map(|key| Recipient::new(Features::empty().set_seipdv1(), KeyHandle::from(key.keyid()), key));
    let message = Encryptor::for_recipients(message, recipients)
        .symmetric_algo(cipher)
        .build()
        .map_err(|e| failed(format!("cannot start the OpenPGP message: {e}")))?;
    // Binary, empty name, date 0: nothing about the wrapping host leaks, and no reader converts line endings.
    let mut literal = LiteralWriter::new(message)
        .format(DataFormat::Binary)
        .build()
        .map_err(|e| failed(format!("cannot start the literal data packet: {e}")))?;
    literal.write_all(plaintext).map_err(|e| failed(format!("cannot encrypt: {e}")))?;
    literal.finalize().map_err(|e| failed(format!("cannot finish the OpenPGP message: {e}")))?;
    Ok(sink)
}

/// Decrypts an OpenPGP message with any of `secret_keys` whose (sub)key a PKESK is addressed to (or, for an
/// anonymous PKESK, any secret key of the right algorithm).
///
/// Secret keys protected by a passphrase are unlocked with each of `passphrases` in turn. Returns `Ok(None)` when
/// no given key fits; [`Error::KeyLocked`] when a fitting key stays locked and no other key fits;
/// [`Error::MalformedWrappedKey`] when the message cannot be parsed or is not encrypted. Contents that a key opens
/// but that fail modification detection are `Ok(None)` too, deliberately (RFC 4880 §14: no decryption oracle).
pub fn unwrap(secret_keys: &[Cert], passphrases: &[Passphrase], message: &[u8]) -> Result<Option<SecretBytes>, Error> {
    let policy = StandardPolicy::new();
    let mut outcome = Outcome::default();
    let helper = Helper { certs: secret_keys, passphrases, outcome: &mut outcome };
    let message = go_compat::canonical_pkesk_mpis(message);
    let decrypted = DecryptorBuilder::from_bytes(&message[..])
        .map(|builder| builder.buffer_size(MAX_PLAINTEXT + 1))
        .and_then(|builder| builder.with_policy(&policy, None, helper))
        .and_then(|decryptor| Ok(crate::bounded::read_at_most(decryptor, MAX_PLAINTEXT as u64)?));
    match decrypted {
        Ok(None) => {
            Err(malformed(format!("decrypts to more than {MAX_PLAINTEXT} bytes; not a layer's private options")))
        }
        Ok(Some(plaintext)) => Ok(Some(plaintext)),
        Err(e) => match outcome {
            // A key that opens the session key but whose contents then fail the integrity check answers like a
            // key that does not fit: telling them apart is the decryption oracle of RFC 4880 §14.
            Outcome { session_key_found: true, .. } => Ok(None),
            Outcome { not_encrypted: true, .. } => Err(malformed("not an encrypted OpenPGP message".into())),
            Outcome { no_key: true, locked: Some(what), .. } => Err(Error::KeyLocked { what }),
            Outcome { no_key: true, .. } => Ok(None),
            _ => match go_compat::split_go_message(&message) {
                Some(go) => unwrap_go_message(secret_keys, passphrases, &go),
                None => Err(malformed(format!("not an OpenPGP message: {e}"))),
            },
        },
    }
}

/// Unwraps a message sequoia refused for its framing (Go's short partial body chunks): sequoia still decrypts
/// the PKESKs (key selection, passphrases), [`go_compat::decrypt_seipd_v1`] the rest.
fn unwrap_go_message(
    secret_keys: &[Cert],
    passphrases: &[Passphrase],
    go: &go_compat::GoMessage,
) -> Result<Option<SecretBytes>, Error> {
    let mut pkesks = Vec::new();
    for packet in &go.pkesks {
        match openpgp::Packet::from_bytes(packet) {
            Ok(openpgp::Packet::PKESK(pkesk)) => pkesks.push(pkesk),
            _ => return Err(malformed("unreadable public-key encrypted session key packet".into())),
        }
    }
    let mut outcome = Outcome::default();
    let mut helper = Helper { certs: secret_keys, passphrases, outcome: &mut outcome };
    let mut result = None;
    let _ = helper.decrypt(&pkesks, &[], None, &mut |algorithm, session_key| match go_compat::decrypt_seipd_v1(
        algorithm,
        session_key,
        &go.seipd,
    ) {
        Some(plaintext) => {
            result = Some(plaintext);
            true
        }
        None => false,
    });
    match (result, outcome) {
        (Some(plaintext), _) => Ok(Some(plaintext)),
        (None, Outcome { locked: Some(what), .. }) => Err(Error::KeyLocked { what }),
        (None, _) => Ok(None),
    }
}

/// Parses OpenPGP certificates (public or secret), binary or ASCII-armoured, one or several concatenated.
///
/// ocicrypt reads only binary keyrings; accepting armour too costs nothing and saves operators a conversion.
/// `what` names the source (a file name) in errors.
pub fn parse_keyring(bytes: &[u8], what: &str) -> Result<Vec<Cert>, Error> {
    let invalid = |problem: String| Error::InvalidKey { what: what.into(), problem };
    let parser = CertParser::from_bytes(bytes).map_err(|e| invalid(format!("not an OpenPGP keyring: {e}")))?;
    let certs = parser.collect::<Result<Vec<_>, _>>().map_err(|e| invalid(format!("not an OpenPGP keyring: {e}")))?;
    if certs.is_empty() {
        return Err(invalid("holds no OpenPGP key".into()));
    }
    Ok(certs)
}

/// Finds the recipients named by `names` in the local gpg public keyring (`gpg --batch --export`, with
/// `--homedir DIR` when given, else gpg's own default: `GNUPGHOME` or `~/.gnupg`).
///
/// See [`select_recipients`] for how a name matches. gpg runs with a [`GPG_TIMEOUT`] deadline and at most
/// [`MAX_KEYRING_EXPORT`] bytes of output are read; certificates in the keyring that cannot be parsed are skipped,
/// as any other unrelated key is.
pub fn recipients_from_gpg(gpg_homedir: Option<&Path>, names: &[String]) -> Result<Vec<Cert>, Error> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let keyring = export_public_keyring(gpg_homedir)?;
    let certs: Vec<Cert> = CertParser::from_bytes(&keyring[..]).map(|p| p.flatten().collect()).unwrap_or_default();
    select_recipients(&certs, names)
}

/// Selects, for each name, every certificate having a (non-revoked) user ID whose e-mail address or display name
/// equals it exactly (ocicrypt's rule), or whose primary key or a subkey has that full fingerprint or long key ID
/// (hex, optionally `0x`-prefixed or spaced; ocicrypt refuses those). The result is in the order of `names`,
/// without duplicates.
///
/// Among several certificates a name matches, those without a usable encryption key (expired, revoked) are left
/// out, as gpg leaves them out; a name that matches nothing usable is an [`Error::InvalidKey`].
pub fn select_recipients(certs: &[Cert], names: &[String]) -> Result<Vec<Cert>, Error> {
    let policy = StandardPolicy::new();
    let mut selected: Vec<Cert> = Vec::new();
    for name in names {
        let handle = parse_key_handle(name);
        let matching: Vec<&Cert> = certs
            .iter()
            .filter(|cert| {
                handle.as_ref().is_some_and(|h| cert.keys().any(|k| k.key().key_handle().aliases(h)))
                    || has_user_id(&policy, cert, name)
            })
            .collect();
        let invalid = |problem: String| Error::InvalidKey { what: format!("pgp:{name}"), problem };
        if matching.is_empty() {
            return Err(invalid(format!(
                "no OpenPGP key for recipient `{name}` (a recipient is the exact e-mail address or name of a user ID, \
                 a fingerprint or a long key ID)"
            )));
        }
        let mut usable = Vec::new();
        let mut first_problem = None;
        for cert in matching {
            match encryption_key(&policy, cert) {
                Ok(_) => usable.push(cert),
                Err(e) => {
                    first_problem.get_or_insert(e);
                }
            }
        }
        if usable.is_empty() {
            return Err(first_problem.expect("a matching certificate was rejected"));
        }
        for cert in usable {
            if !selected.iter().any(|s| s.fingerprint() == cert.fingerprint()) {
                selected.push(cert.clone());
            }
        }
    }
    Ok(selected)
}

/// The (sub)key a recipient's PKESK is made for: the newest alive, non-revoked key with an encryption flag.
fn encryption_key(policy: &StandardPolicy<'_>, cert: &Cert) -> Result<Key<PublicParts, UnspecifiedRole>, Error> {
    let invalid = |problem: String| Error::InvalidKey { what: describe(cert), problem };
    let valid =
        cert.with_policy(policy, None).map_err(|e| invalid(format!("not valid under the standard policy: {e}")))?;
    if let RevocationStatus::Revoked(_) = valid.revocation_status() {
        return Err(invalid("is revoked".into()));
    }
    valid.alive().map_err(|e| invalid(format!("is not alive (expired?): {e}")))?;
    valid
        .keys()
        .supported()
        .alive()
        .revoked(false)
        .for_storage_encryption()
        .for_transport_encryption()
        .max_by_key(|ka| ka.key().creation_time())
        .map(|ka| ka.key().clone())
        .ok_or_else(|| invalid("has no valid encryption key (subkey expired, revoked or missing)".into()))
}

/// The first of AES-256, AES-128, AES-192 that every recipient's preferences allow (ocicrypt's order); AES-128,
/// which RFC 9580 makes mandatory to implement, when their preferences have none in common.
fn choose_cipher(policy: &StandardPolicy<'_>, recipients: &[Cert]) -> SymmetricAlgorithm {
    let mut candidates = CIPHER_CANDIDATES.to_vec();
    for cert in recipients {
        let preferences = cert.with_policy(policy, None).ok().and_then(|valid| valid.preferred_symmetric_algorithms());
        if let Some(preferred) = preferences.filter(|p| !p.is_empty()) {
            candidates.retain(|c| preferred.contains(c));
        }
    }
    candidates.first().copied().unwrap_or(SymmetricAlgorithm::AES128)
}

fn has_user_id(policy: &StandardPolicy<'_>, cert: &Cert, name: &str) -> bool {
    let equal = |uid: &openpgp::packet::UserID| {
        uid.email().ok().flatten() == Some(name) || uid.name().ok().flatten() == Some(name)
    };
    match cert.with_policy(policy, None) {
        Ok(valid) => valid
            .userids()
            .filter(|u| !matches!(u.revocation_status(), RevocationStatus::Revoked(_)))
            .any(|u| equal(u.userid())),
        // Still matched, so that the error names this key and says why it is unusable instead of "no key".
        Err(_) => cert.userids().any(|u| equal(u.userid())),
    }
}

/// A full fingerprint (40 or 64 hex digits) or a long key ID (16), optionally `0x`-prefixed and with spaces.
fn parse_key_handle(name: &str) -> Option<KeyHandle> {
    let hex: String = name.strip_prefix("0x").or_else(|| name.strip_prefix("0X")).unwrap_or(name).replace(' ', "");
    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    match hex.len() {
        16 => KeyID::from_hex(&hex).ok().map(KeyHandle::from),
        40 | 64 => Fingerprint::from_hex(&hex).ok().map(KeyHandle::from),
        _ => None,
    }
}

/// Fingerprint and first user ID: how an operator recognises a key in `gpg --list-keys`.
fn describe(cert: &Cert) -> String {
    match cert.userids().next() {
        Some(uid) => format!("OpenPGP key {} ({})", cert.fingerprint(), String::from_utf8_lossy(uid.userid().value())),
        None => format!("OpenPGP key {}", cert.fingerprint()),
    }
}

fn describe_key(cert: &Cert, key: &Key<SecretParts, UnspecifiedRole>) -> String {
    let subkey =
        if key.fingerprint() == cert.fingerprint() { String::new() } else { format!(" subkey {}", key.keyid()) };
    format!("{}{subkey}", describe(cert))
}

fn malformed(problem: String) -> Error {
    Error::MalformedWrappedKey { scheme: SCHEME.into(), problem }
}

fn export_public_keyring(gpg_homedir: Option<&Path>) -> Result<SecretBytes, Error> {
    export_keyring(gpg_homedir, &["--export"], None).map_err(|problem| Error::Wrap { scheme: SCHEME.into(), problem })
}

/// The secret keys of a gpg keyring (what ctr-enc's --gpg-homedir offers), for decryption. gpg asks for the
/// passphrase of a protected key to export it; `passphrase` answers through loopback pinentry on stdin, never on
/// the command line. The exported keys stay protected by that passphrase.
///
/// `key_ids` limits the export to the keys a message is addressed to (gpg exports the whole key of a subkey ID):
/// gpg wants the passphrase of every protected key it exports, and an unrelated locked key must not stop the
/// run. Empty: every secret key.
pub fn secret_keys_from_gpg(
    gpg_homedir: Option<&Path>,
    passphrase: Option<&Passphrase>,
    key_ids: &[String],
) -> Result<Vec<Cert>, Error> {
    let mut answer = SecretBytes::new(passphrase.map(|p| p.expose().to_vec()).unwrap_or_default());
    answer.push(b'\n');
    let mut export = vec!["--pinentry-mode", "loopback", "--passphrase-fd", "0", "--export-secret-keys"];
    export.extend(key_ids.iter().map(String::as_str));
    let exported = export_keyring(gpg_homedir, &export, Some(&answer))
        // Exporting secret keys serves decryption: a failure here must not read "cannot wrap".
        .map_err(|problem| Error::Unwrap { scheme: SCHEME.into(), problem })?;
    let certs: Vec<Cert> = CertParser::from_bytes(&exported[..]).map(|p| p.flatten().collect()).unwrap_or_default();
    Ok(certs.into_iter().filter(Cert::is_tsk).collect())
}

/// Runs `gpg --batch [--homedir DIR] EXPORT…` and returns its output; the error is the problem as one line, which
/// the caller turns into a wrap or an unwrap error.
fn export_keyring(gpg_homedir: Option<&Path>, export: &[&str], stdin: Option<&[u8]>) -> Result<SecretBytes, String> {
    let what = export.iter().rev().find(|a| a.starts_with("--export")).copied().unwrap_or("--export");
    let mut args: Vec<&std::ffi::OsStr> = vec!["--batch".as_ref()];
    if let Some(dir) = gpg_homedir {
        args.extend(["--homedir".as_ref(), dir.as_os_str()]);
    }
    args.extend(export.iter().map(std::ffi::OsStr::new));
    let limits = process::Limits { timeout: GPG_TIMEOUT, max_stdout: MAX_KEYRING_EXPORT, max_stderr: 4096 };
    // ocicrypt runs gpg2 where it exists because gpg was 1.x on older systems; today gpg is GnuPG 2 and gpg2 is
    // at most a compatibility name, so gpg comes first.
    let mut result = process::run("gpg", &args, stdin, limits);
    if matches!(&result, Err(process::RunError::Spawn(e)) if e.kind() == std::io::ErrorKind::NotFound) {
        result = process::run("gpg2", &args, stdin, limits);
    }
    let done = result.map_err(|e| match e {
        process::RunError::Spawn(e) => format!("cannot run gpg: {e} (install GnuPG: apt-get install gnupg)"),
        process::RunError::TimedOut => {
            format!("`gpg {what}` did not finish within {}", process::humanize(GPG_TIMEOUT))
        }
        process::RunError::StdoutHeld => format!("a process started by `gpg {what}` kept its output open"),
    })?;
    if done.stdout_truncated {
        return Err(format!("`gpg {what}` printed more than {MAX_KEYRING_EXPORT} bytes"));
    }
    if !done.status.success() {
        let reason = process::last_line(&done.stderr).map(|l| format!(": {l}")).unwrap_or_default();
        return Err(format!("`gpg {what}` {}{reason}", process::describe_status(done.status)));
    }
    Ok(done.stdout)
}

/// What the decryption helper found out, for telling "no key fits" apart from "broken message".
#[derive(Default)]
struct Outcome {
    /// A PKESK decrypted to a session key that opened the encrypted packet.
    session_key_found: bool,
    /// The helper was asked to decrypt and no key fitted.
    no_key: bool,
    /// The message has no encryption layer.
    not_encrypted: bool,
    /// A key that is addressed by a PKESK but stayed locked.
    locked: Option<String>,
}

struct Helper<'a> {
    certs: &'a [Cert],
    passphrases: &'a [Passphrase],
    outcome: &'a mut Outcome,
}

impl Helper<'_> {
    /// Tries one PKESK with one secret key, unlocking it first if it is protected.
    fn try_key(
        &mut self,
        cert: &Cert,
        key: &Key<SecretParts, UnspecifiedRole>,
        pkesk: &PKESK,
        sym_algo: Option<SymmetricAlgorithm>,
        decrypt: &mut dyn FnMut(Option<SymmetricAlgorithm>, &SessionKey) -> bool,
    ) -> bool {
        let mut attempt = |key: Key<SecretParts, UnspecifiedRole>| {
            // A key without usable secret material (a gpg stub for a card or an offline primary key) cannot
            // decrypt; that is "not this key", not an error.
            let Ok(mut keypair) = key.into_keypair() else { return false };
            pkesk.decrypt(&mut keypair, sym_algo).is_some_and(|(algo, session_key)| decrypt(algo, &session_key))
        };
        if !key.secret().is_encrypted() {
            return attempt(key.clone());
        }
        for passphrase in self.passphrases {
            if let Ok(unlocked) = key.clone().decrypt_secret(&Password::from(passphrase.expose())) {
                return attempt(unlocked);
            }
        }
        self.outcome.locked.get_or_insert_with(|| describe_key(cert, key));
        false
    }
}

impl VerificationHelper for Helper<'_> {
    fn get_certs(&mut self, _ids: &[KeyHandle]) -> openpgp::Result<Vec<Cert>> {
        // ocicrypt never signs; a signature gpg may have added is neither required nor checked.
        Ok(Vec::new())
    }

    fn check(&mut self, structure: MessageStructure) -> openpgp::Result<()> {
        // Without this, a plain literal data packet would "unwrap" with no key at all.
        if !matches!(structure.iter().next(), Some(MessageLayer::Encryption { .. })) {
            self.outcome.not_encrypted = true;
            return Err(anyhow::anyhow!("not an encrypted message"));
        }
        Ok(())
    }
}

impl DecryptionHelper for Helper<'_> {
    fn decrypt(
        &mut self,
        pkesks: &[PKESK],
        _skesks: &[SKESK],
        sym_algo: Option<SymmetricAlgorithm>,
        decrypt: &mut dyn FnMut(Option<SymmetricAlgorithm>, &SessionKey) -> bool,
    ) -> openpgp::Result<Option<Cert>> {
        let certs = self.certs;
        // First the PKESKs addressed to one of our keys, then anonymous ones (gpg --throw-keyids) with every key
        // of the right algorithm.
        for pkesk in pkesks {
            let Some(recipient) = pkesk.recipient() else { continue };
            for cert in certs {
                for ka in cert.keys().secret() {
                    if recipient.aliases(ka.key().key_handle())
                        && self.try_key(cert, ka.key(), pkesk, sym_algo, decrypt)
                    {
                        self.outcome.session_key_found = true;
                        return Ok(Some(cert.clone()));
                    }
                }
            }
        }
        for pkesk in pkesks.iter().filter(|p| p.recipient().is_none()) {
            for cert in certs {
                for ka in cert.keys().secret() {
                    if ka.key().pk_algo() == pkesk.pk_algo() && self.try_key(cert, ka.key(), pkesk, sym_algo, decrypt) {
                        self.outcome.session_key_found = true;
                        return Ok(Some(cert.clone()));
                    }
                }
            }
        }
        self.outcome.no_key = true;
        Err(anyhow::anyhow!("no given key fits"))
    }
}

/// Who a wrapped key is for, without any key: the key ID or fingerprint each public-key encrypted session key
/// packet names (`anonymous` for `gpg --throw-keyids`), for `image inspect`.
pub fn recipient_key_ids(message: &[u8]) -> Result<Vec<String>, Error> {
    use openpgp::Packet;
    use openpgp::parse::{PacketParser, PacketParserResult};
    let bad = |e: anyhow::Error| Error::MalformedWrappedKey { scheme: "pgp".into(), problem: e.to_string() };
    let mut ids = Vec::new();
    let mut ppr = PacketParser::from_bytes(message).map_err(bad)?;
    while let PacketParserResult::Some(pp) = ppr {
        if let Packet::PKESK(pkesk) = &pp.packet {
            ids.push(pkesk.recipient().map(|handle| handle.to_hex()).unwrap_or_else(|| "anonymous".into()));
        }
        // The encrypted container is not descended into: only the session-key packets name recipients.
        ppr = pp.next().map_err(bad)?.1;
    }
    Ok(ids)
}

/// Every key ID and fingerprint of `cert`'s keys, as [`recipient_key_ids`] writes them: a message for this
/// certificate names one of them.
pub fn key_handles(cert: &Cert) -> Vec<String> {
    cert.keys().flat_map(|k| [k.key().keyid().to_hex(), k.key().fingerprint().to_hex()]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use openpgp::cert::CertBuilder;
    use openpgp::parse::PacketParser;
    use openpgp::parse::PacketParserResult;
    use openpgp::serialize::{Serialize, SerializeInto};
    use openpgp::{Packet, packet::Tag};
    use std::sync::OnceLock;

    const OPTS: &[u8] = br#"{"symkey":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=","digest":"sha256:00"}"#;

    /// Keys are slow to make (RSA especially): make each kind once for all tests.
    fn alice() -> &'static Cert {
        static KEY: OnceLock<Cert> = OnceLock::new();
        KEY.get_or_init(|| {
            CertBuilder::general_purpose(Some("Alice Test <alice@example.com>")).generate().expect("keygen").0
        })
    }

    fn bob_locked() -> &'static Cert {
        static KEY: OnceLock<Cert> = OnceLock::new();
        KEY.get_or_init(|| {
            CertBuilder::general_purpose(Some("Bob Test <bob@example.com>"))
                .set_password(Some("bobpw".into()))
                .generate()
                .expect("keygen")
                .0
        })
    }

    fn carol_rsa() -> &'static Cert {
        static KEY: OnceLock<Cert> = OnceLock::new();
        KEY.get_or_init(|| {
            CertBuilder::new()
                .set_cipher_suite(openpgp::cert::CipherSuite::RSA2k)
                .add_userid("Carol <carol@example.org>")
                .add_userid("Carol Without Mail")
                .add_transport_encryption_subkey()
                .generate()
                .expect("keygen")
                .0
        })
    }

    fn packet_tags(message: &[u8]) -> Vec<(Tag, Option<u8>)> {
        // Top level only: the encrypted container is not descended into without a key.
        let mut tags = Vec::new();
        let mut ppr = PacketParser::from_bytes(message).unwrap();
        while let PacketParserResult::Some(pp) = ppr {
            let version = match &pp.packet {
                Packet::PKESK(p) => Some(match p {
                    PKESK::V3(_) => 3,
                    _ => 6,
                }),
                Packet::SEIP(s) => Some(s.version()),
                _ => None,
            };
            tags.push((pp.packet.tag(), version));
            ppr = pp.next().unwrap().1;
        }
        tags
    }

    fn none() -> &'static [Passphrase] {
        &[]
    }

    #[test]
    fn round_trip_one_recipient() {
        let message = wrap(std::slice::from_ref(alice()), OPTS).unwrap();
        assert_eq!(packet_tags(&message), vec![(Tag::PKESK, Some(3)), (Tag::SEIP, Some(1))]);
        let plain = unwrap(std::slice::from_ref(alice()), none(), &message).unwrap().unwrap();
        assert_eq!(&plain[..], OPTS);
    }

    #[test]
    fn pkesk_addresses_the_encryption_subkey() {
        let message = wrap(std::slice::from_ref(carol_rsa()), OPTS).unwrap();
        let ppr = PacketParser::from_bytes(&message).unwrap();
        let PacketParserResult::Some(pp) = ppr else { panic!("empty") };
        let Packet::PKESK(pkesk) = &pp.packet else { panic!("no PKESK first") };
        let subkey = carol_rsa().keys().subkeys().next().unwrap().key().keyid();
        assert_eq!(pkesk.recipient(), Some(KeyHandle::from(subkey.clone())));
        assert_ne!(subkey, carol_rsa().keyid());
    }

    #[test]
    fn round_trip_several_recipients_each_decrypts() {
        let recipients = [alice().clone(), bob_locked().clone(), carol_rsa().clone()];
        let message = wrap(&recipients, OPTS).unwrap();
        let tags = packet_tags(&message);
        assert_eq!(tags.iter().filter(|(t, _)| *t == Tag::PKESK).count(), 3);
        assert_eq!(tags.last(), Some(&(Tag::SEIP, Some(1))));
        assert_eq!(&unwrap(&[carol_rsa().clone()], none(), &message).unwrap().unwrap()[..], OPTS);
        let bobpw = [Passphrase::new(b"wrong".to_vec()), Passphrase::new(b"bobpw".to_vec())];
        assert_eq!(&unwrap(&[bob_locked().clone()], &bobpw, &message).unwrap().unwrap()[..], OPTS);
    }

    #[test]
    fn literal_packet_is_binary_unnamed_and_undated() {
        let message = wrap(std::slice::from_ref(alice()), b"x").unwrap();
        // Decrypt by hand with the low-level parser to see the literal packet's header.
        let mut ppr = PacketParser::from_bytes(&message).unwrap();
        let mut session = None;
        let mut literal = None;
        let mut compressed = false;
        while let PacketParserResult::Some(mut pp) = ppr {
            match &pp.packet {
                Packet::PKESK(pkesk) => {
                    let recipient = pkesk.recipient().unwrap();
                    let key = alice().keys().secret().find(|k| recipient.aliases(k.key().key_handle())).unwrap();
                    let mut pair = key.key().clone().into_keypair().unwrap();
                    session = pkesk.decrypt(&mut pair, None);
                }
                Packet::SEIP(_) => {
                    let (algo, sk) = session.clone().unwrap();
                    pp.decrypt(algo.unwrap(), &sk).unwrap();
                }
                Packet::CompressedData(_) => compressed = true,
                Packet::Literal(l) => literal = Some(l.clone()),
                _ => {}
            }
            ppr = pp.recurse().unwrap().1;
        }
        let literal = literal.expect("a literal packet");
        assert_eq!(literal.format(), DataFormat::Binary);
        assert_eq!(literal.filename(), None);
        assert_eq!(literal.date(), None);
        assert!(!compressed);
    }

    #[test]
    fn cipher_is_aes256_unless_a_recipient_rules_it_out() {
        let policy = StandardPolicy::new();
        assert_eq!(choose_cipher(&policy, &[alice().clone(), carol_rsa().clone()]), SymmetricAlgorithm::AES256);
    }

    #[test]
    fn no_fitting_key_is_none() {
        let message = wrap(std::slice::from_ref(alice()), OPTS).unwrap();
        assert!(unwrap(&[carol_rsa().clone()], none(), &message).unwrap().is_none());
        assert!(unwrap(&[], none(), &message).unwrap().is_none());
        // A public key only (no secret) fits nothing either.
        let public = Cert::from_bytes(&alice().to_vec().unwrap()).unwrap();
        assert!(!public.is_tsk());
        assert!(unwrap(&[public], none(), &message).unwrap().is_none());
    }

    #[test]
    fn locked_key_without_its_passphrase() {
        let message = wrap(std::slice::from_ref(bob_locked()), OPTS).unwrap();
        let err = unwrap(&[bob_locked().clone()], none(), &message).unwrap_err();
        assert!(matches!(err, Error::KeyLocked { .. }), "{err}");
        assert!(err.to_string().contains("bob@example.com"), "{err}");
        let wrong = [Passphrase::new(b"nope".to_vec())];
        assert!(matches!(unwrap(&[bob_locked().clone()], &wrong, &message), Err(Error::KeyLocked { .. })));
        // Another key that fits wins over the locked one.
        let both = wrap(&[bob_locked().clone(), alice().clone()], OPTS).unwrap();
        assert!(unwrap(&[bob_locked().clone(), alice().clone()], none(), &both).unwrap().is_some());
    }

    #[test]
    fn garbage_and_plain_messages_are_malformed() {
        for bad in
            [&b""[..], b"\x00\x01\x02 not pgp", b"-----BEGIN PGP MESSAGE-----\n\nAAAA\n-----END PGP MESSAGE-----\n"]
        {
            let err = unwrap(std::slice::from_ref(alice()), none(), bad).unwrap_err();
            assert!(matches!(err, Error::MalformedWrappedKey { .. }), "{err}");
        }
        // A literal data packet alone: parseable, but not encrypted.
        let mut plain = Vec::new();
        let message = Message::new(&mut plain);
        let mut w = LiteralWriter::new(message).build().unwrap();
        w.write_all(OPTS).unwrap();
        w.finalize().unwrap();
        let err = unwrap(std::slice::from_ref(alice()), none(), &plain).unwrap_err();
        assert!(matches!(err, Error::MalformedWrappedKey { .. }), "{err}");
        assert!(err.to_string().contains("not an encrypted"), "{err}");
    }

    #[test]
    fn tampered_ciphertext_reads_as_no_fitting_key() {
        // Not an integrity error of its own: that answer would be an oracle (RFC 4880 §14).
        let mut message = wrap(std::slice::from_ref(alice()), OPTS).unwrap();
        for position in [message.len() - 5, message.len() - 30] {
            message[position] ^= 1;
            assert!(unwrap(std::slice::from_ref(alice()), none(), &message).unwrap().is_none());
            message[position] ^= 1;
        }
    }

    #[test]
    fn armoured_message_unwraps() {
        let binary = wrap(std::slice::from_ref(alice()), OPTS).unwrap();
        let mut armoured = Vec::new();
        let mut w = openpgp::armor::Writer::new(&mut armoured, openpgp::armor::Kind::Message).unwrap();
        w.write_all(&binary).unwrap();
        w.finalize().unwrap();
        assert_eq!(&unwrap(std::slice::from_ref(alice()), none(), &armoured).unwrap().unwrap()[..], OPTS);
    }

    #[test]
    fn keyrings_binary_and_armoured() {
        let mut binary = Vec::new();
        alice().as_tsk().serialize(&mut binary).unwrap();
        carol_rsa().serialize(&mut binary).unwrap();
        let certs = parse_keyring(&binary, "k.gpg").unwrap();
        assert_eq!(certs.len(), 2);
        assert!(certs[0].is_tsk());
        let armoured = alice().as_tsk().armored().to_vec().unwrap();
        assert_eq!(parse_keyring(&armoured, "k.asc").unwrap()[0].fingerprint(), alice().fingerprint());
        for bad in
            [&b""[..], b"hello", b"-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nAAAA\n-----END PGP PUBLIC KEY BLOCK-----\n"]
        {
            let err = parse_keyring(bad, "bad.gpg").unwrap_err();
            assert!(matches!(err, Error::InvalidKey { .. }), "{err}");
            assert!(err.to_string().starts_with("bad.gpg: "), "{err}");
        }
    }

    #[test]
    fn recipient_selection() {
        let ring = [alice().clone(), bob_locked().clone(), carol_rsa().clone()];
        let pick = |names: &[&str]| {
            let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
            select_recipients(&ring, &names).map(|certs| certs.iter().map(|c| c.fingerprint()).collect::<Vec<_>>())
        };
        assert_eq!(pick(&["alice@example.com"]).unwrap(), vec![alice().fingerprint()]);
        assert_eq!(pick(&["Bob Test"]).unwrap(), vec![bob_locked().fingerprint()]);
        // A user ID that is no mail address matches by name and does not disturb the others.
        assert_eq!(pick(&["Carol Without Mail"]).unwrap(), vec![carol_rsa().fingerprint()]);
        let fpr = carol_rsa().fingerprint().to_hex();
        assert_eq!(pick(&[&fpr]).unwrap(), vec![carol_rsa().fingerprint()]);
        assert_eq!(pick(&[&format!("0x{}", carol_rsa().keyid().to_hex())]).unwrap(), vec![carol_rsa().fingerprint()]);
        assert_eq!(pick(&[&carol_rsa().fingerprint().to_spaced_hex()]).unwrap(), vec![carol_rsa().fingerprint()]);
        // Order of names, no duplicates.
        assert_eq!(
            pick(&["carol@example.org", "alice@example.com", "Carol"]).unwrap(),
            vec![carol_rsa().fingerprint(), alice().fingerprint()]
        );
        // Exact only: no substrings, no case folding.
        for unknown in ["alice", "ALICE@example.com", "lice@example.com", "Alice", "nobody@example.com"] {
            let err = pick(&[unknown]).unwrap_err();
            assert!(err.to_string().contains(&format!("no OpenPGP key for recipient `{unknown}`")), "{err}");
        }
    }

    #[test]
    fn expired_recipient_is_refused() {
        let now = std::time::SystemTime::now();
        let (expired, _) = CertBuilder::general_purpose(Some("Old <old@example.com>"))
            .set_creation_time(now - Duration::from_secs(3 * 86400))
            .set_validity_period(Duration::from_secs(86400))
            .generate()
            .unwrap();
        let err = wrap(std::slice::from_ref(&expired), OPTS).unwrap_err();
        assert!(matches!(err, Error::InvalidKey { .. }), "{err}");
        let err = select_recipients(&[expired], &["old@example.com".into()]).unwrap_err();
        assert!(err.to_string().contains("old@example.com"), "{err}");
        assert!(wrap(&[], OPTS).is_err());
    }

    #[test]
    fn key_handles() {
        assert!(parse_key_handle("Alice Test").is_none());
        assert!(parse_key_handle("deadbeef").is_none());
        assert!(matches!(parse_key_handle("0123456789ABCDEF"), Some(KeyHandle::KeyID(_))));
        assert!(matches!(
            parse_key_handle("0x0123456789abcdef0123456789abcdef01234567"),
            Some(KeyHandle::Fingerprint(_))
        ));
    }
}
