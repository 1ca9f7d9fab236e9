//! Interop of the OpenPGP key wrapper (src/ocicrypt/pgp.rs) with GnuPG, using keys made by gpg as ocicrypt's
//! interop recipes make them: RSA primary keys with RSA encryption subkeys, one protected by a passphrase; plus an ECC key
//! whose user ID is no mail address (the case that breaks ocicrypt, docs/formats.md).
//!
//! Both directions: what `wrap` writes decrypts with `gpg -d` and has the packet shape ocicrypt writes; what
//! `gpg -e` writes unwraps with keys from `gpg --export-secret-keys`, binary and armoured. Recipient lookup runs the
//! real `gpg --export`.
//!
//! These tests never skip: `gpg` must be on PATH (`apt-get install gnupg`).

use crate::support;
use cryptadm::crypto::Passphrase;
use cryptadm::ocicrypt::{Error, pgp};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

/// Private options of a layer, as ocicrypt wraps them.
const OPTS: &[u8] = br#"{"symkey":"3q2+796tvu/erb7v3q2+796tvu/erb7v3q2+796tvu8=","cipheroptions":{"nonce":"AAECAwQFBgcICQoLDA0ODw=="}}"#;
const BOB_PASSPHRASE: &str = "bobpw";

/// Keys generated once by gpg, exported, so that every test can import them into its own GNUPGHOME.
struct Keys {
    alice_public: Vec<u8>,
    alice_secret: Vec<u8>,
    alice_secret_armored: Vec<u8>,
    bob_public: Vec<u8>,
    bob_secret: Vec<u8>,
    noemail_public: Vec<u8>,
    noemail_secret: Vec<u8>,
    alice_fingerprint: String,
    bob_fingerprint: String,
}

/// A temporary GNUPGHOME; its gpg-agent is stopped when it is dropped.
struct GpgHome {
    dir: tempfile::TempDir,
}

impl GpgHome {
    fn new() -> Self {
        support::require_tool("gpg", "apt-get install gnupg");
        let dir = tempfile::Builder::new().prefix("gpg").tempdir().expect("temp dir");
        std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o700)).expect("chmod");
        Self { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Runs gpg on this home with `args`, feeding `stdin`.
    fn run(&self, args: &[&str], stdin: Option<&[u8]>) -> Output {
        use std::io::Write;
        let mut child = Command::new("gpg")
            .arg("--homedir")
            .arg(self.path())
            .args(["--batch", "--no-tty", "--pinentry-mode", "loopback"])
            .args(args)
            .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run gpg");
        if let Some(input) = stdin {
            child.stdin.take().unwrap().write_all(input).expect("write to gpg");
        }
        child.wait_with_output().expect("wait for gpg")
    }

    #[track_caller]
    fn ok(&self, args: &[&str], stdin: Option<&[u8]>) -> Vec<u8> {
        let output = self.run(args, stdin);
        assert!(output.status.success(), "gpg {args:?} failed:\n{}", String::from_utf8_lossy(&output.stderr));
        output.stdout
    }

    fn import(&self, key: &[u8]) {
        self.ok(&["--passphrase", BOB_PASSPHRASE, "--import"], Some(key));
    }

    fn fingerprint(&self, uid: &str) -> String {
        let listing = String::from_utf8(self.ok(&["--with-colons", "--list-keys", uid], None)).unwrap();
        let line = listing.lines().find(|l| l.starts_with("fpr:")).expect("a fingerprint line");
        line.split(':').nth(9).unwrap().to_string()
    }

    /// A home with the public keys of Alice, Bob and NoEmail, and the given secret keys.
    fn with(secrets: &[&[u8]]) -> Self {
        let home = Self::new();
        let keys = keys();
        for public in [&keys.alice_public, &keys.bob_public, &keys.noemail_public] {
            home.import(public);
        }
        for secret in secrets {
            home.import(secret);
        }
        home
    }
}

impl Drop for GpgHome {
    fn drop(&mut self) {
        // The agent gpg started for this home; the directory is removed by TempDir afterwards.
        let _ = Command::new("gpgconf")
            .arg("--homedir")
            .arg(self.path())
            .args(["--kill", "gpg-agent"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

fn keys() -> &'static Keys {
    static KEYS: OnceLock<Keys> = OnceLock::new();
    KEYS.get_or_init(|| {
        let home = GpgHome::new();
        // docs/formats.md: RSA primary keys (sign, certify) with an RSA encryption subkey each; Bob's protected.
        home.ok(
            &["--passphrase", "", "--quick-gen-key", "Alice Test <alice@example.com>", "rsa2048", "default", "never"],
            None,
        );
        let alice = home.fingerprint("alice@example.com");
        home.ok(&["--passphrase", "", "--quick-add-key", &alice, "rsa2048", "encr", "never"], None);
        home.ok(
            &[
                "--passphrase",
                BOB_PASSPHRASE,
                "--quick-gen-key",
                "Bob Test <bob@example.com>",
                "rsa3072",
                "default",
                "never",
            ],
            None,
        );
        let bob = home.fingerprint("bob@example.com");
        home.ok(&["--passphrase", BOB_PASSPHRASE, "--quick-add-key", &bob, "rsa3072", "encr", "never"], None);
        // A user ID without a mail address; Ed25519 + Cv25519 (gpg's future-default), so ECDH is covered too.
        home.ok(&["--passphrase", "", "--quick-gen-key", "NoEmail Person", "future-default", "default", "never"], None);
        let keys = Keys {
            alice_public: home.ok(&["--export", &alice], None),
            alice_secret: home.ok(&["--export-secret-keys", &alice], None),
            alice_secret_armored: home.ok(&["--armor", "--export-secret-keys", &alice], None),
            bob_public: home.ok(&["--export", &bob], None),
            bob_secret: home.ok(&["--passphrase", BOB_PASSPHRASE, "--export-secret-keys", &bob], None),
            noemail_public: home.ok(&["--export", "NoEmail Person"], None),
            noemail_secret: home.ok(&["--export-secret-keys", "NoEmail Person"], None),
            alice_fingerprint: alice,
            bob_fingerprint: bob,
        };
        assert!(keys.alice_secret_armored.starts_with(b"-----BEGIN PGP PRIVATE KEY BLOCK-----"));
        keys
    })
}

fn names(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| n.to_string()).collect()
}

fn write_temp(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write");
    path
}

#[test]
fn our_message_decrypts_with_gpg_and_has_ocicrypts_shape() {
    let home = GpgHome::with(&[&keys().alice_secret]);
    let recipients = pgp::recipients_from_gpg(Some(home.path()), &names(&["alice@example.com"])).unwrap();
    assert_eq!(recipients.len(), 1);
    let message = pgp::wrap(&recipients, OPTS).unwrap();
    let file = write_temp(home.path(), "wrapped.pgp", &message);
    let file = file.to_str().unwrap();

    assert_eq!(home.ok(&["--decrypt", file], None), OPTS);

    let output = home.run(&["--show-session-key", "--list-packets", file], None);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let packets = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let tags: Vec<&str> =
        packets.lines().filter(|l| l.starts_with(':')).map(|l| l.split(':').nth(1).unwrap()).collect();
    assert_eq!(tags, ["pubkey enc packet", "encrypted data packet", "literal data packet"], "{packets}");
    assert!(packets.contains(":pubkey enc packet: version 3, algo 1,"), "{packets}");
    assert!(packets.contains("mdc_method: 2"), "SEIPD v1 with MDC expected:\n{packets}");
    assert!(!packets.contains("compressed packet"), "{packets}");
    assert!(packets.contains("mode b (62), created 0, name=\"\""), "{packets}");
    // The PKESK is addressed to the encryption subkey, not the primary key.
    let keyid = packets.lines().find(|l| l.starts_with(":pubkey enc packet:")).unwrap().rsplit(' ').next().unwrap();
    assert!(!keys().alice_fingerprint.ends_with(keyid), "PKESK for the primary key: {keyid}");
    // Session key algorithm 9 = AES-256 (gpg prints `algo:hexkey`).
    assert!(stderr.contains("session key: '9:"), "{stderr}");
}

#[test]
fn our_message_for_two_recipients_decrypts_for_each() {
    let alice_home = GpgHome::with(&[&keys().alice_secret]);
    let recipients =
        pgp::recipients_from_gpg(Some(alice_home.path()), &names(&["alice@example.com", "Bob Test"])).unwrap();
    assert_eq!(recipients.len(), 2);
    let message = pgp::wrap(&recipients, OPTS).unwrap();
    let file = write_temp(alice_home.path(), "wrapped.pgp", &message);
    assert_eq!(alice_home.ok(&["--decrypt", file.to_str().unwrap()], None), OPTS);

    let bob_home = GpgHome::with(&[&keys().bob_secret]);
    assert_eq!(bob_home.ok(&["--passphrase", BOB_PASSPHRASE, "--decrypt"], Some(&message)), OPTS);
}

#[test]
fn our_message_for_an_ecc_key_decrypts_with_gpg() {
    let home = GpgHome::with(&[&keys().noemail_secret]);
    let recipients = pgp::recipients_from_gpg(Some(home.path()), &names(&["NoEmail Person"])).unwrap();
    let message = pgp::wrap(&recipients, OPTS).unwrap();
    assert_eq!(home.ok(&["--decrypt"], Some(&message)), OPTS);
}

/// `gpg -e` output (binary; gpg compresses by default) for `recipient`.
fn gpg_encrypt(recipient: &str) -> Vec<u8> {
    let home = GpgHome::with(&[]);
    home.ok(&["--trust-model", "always", "--encrypt", "--recipient", recipient], Some(OPTS))
}

#[test]
fn gpg_message_unwraps_with_exported_secret_keys_binary_and_armoured() {
    let message = gpg_encrypt("alice@example.com");
    for (what, exported) in [("alice.gpg", &keys().alice_secret), ("alice.asc", &keys().alice_secret_armored)] {
        let secret = pgp::parse_keyring(exported, what).unwrap();
        let plain = pgp::unwrap(&secret, &[], &message).unwrap().expect("alice's key fits");
        assert_eq!(&plain[..], OPTS, "{what}");
    }
    // The public key alone, or someone else's secret key, fits nothing.
    let public = pgp::parse_keyring(&keys().alice_public, "alice.pub").unwrap();
    assert!(pgp::unwrap(&public, &[], &message).unwrap().is_none());
    let other = pgp::parse_keyring(&keys().noemail_secret, "noemail.gpg").unwrap();
    assert!(pgp::unwrap(&other, &[], &message).unwrap().is_none());
}

#[test]
fn passphrase_protected_gpg_key_unwraps_with_its_passphrase_only() {
    let message = gpg_encrypt("bob@example.com");
    let secret = pgp::parse_keyring(&keys().bob_secret, "bob.gpg").unwrap();
    let right = [Passphrase::new(b"wrong".to_vec()), Passphrase::new(BOB_PASSPHRASE.as_bytes().to_vec())];
    assert_eq!(&pgp::unwrap(&secret, &right, &message).unwrap().unwrap()[..], OPTS);

    for given in [vec![], vec![Passphrase::new(b"wrong".to_vec())]] {
        let err = pgp::unwrap(&secret, &given, &message).unwrap_err();
        assert!(matches!(err, Error::KeyLocked { .. }), "{err}");
        let text = err.to_string();
        assert!(text.contains("Bob Test <bob@example.com>") && text.contains("passphrase"), "{text}");
        assert!(!text.contains(BOB_PASSPHRASE), "{text}");
    }
}

#[test]
fn recipients_from_gpg_by_email_name_fingerprint_and_key_id() {
    let home = GpgHome::with(&[]);
    let k = keys();
    let lookup = |name: &str| {
        pgp::recipients_from_gpg(Some(home.path()), &names(&[name]))
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .iter()
            .map(|c| c.fingerprint().to_hex())
            .collect::<Vec<_>>()
    };
    assert_eq!(lookup("alice@example.com"), [k.alice_fingerprint.as_str()]);
    assert_eq!(lookup("Alice Test"), [k.alice_fingerprint.as_str()]);
    assert_eq!(lookup(&k.bob_fingerprint), [k.bob_fingerprint.as_str()]);
    assert_eq!(lookup(&format!("0x{}", &k.bob_fingerprint[24..])), [k.bob_fingerprint.as_str()]);
    assert_eq!(lookup(&k.bob_fingerprint.to_lowercase()), [k.bob_fingerprint.as_str()]);
    // The keyring holds a user ID that is no mail address: neither this lookup nor encryption breaks.
    assert_eq!(lookup("NoEmail Person").len(), 1);
    let everyone = pgp::recipients_from_gpg(
        Some(home.path()),
        &names(&["alice@example.com", "bob@example.com", "NoEmail Person", "Alice Test"]),
    )
    .unwrap();
    assert_eq!(everyone.len(), 3, "one certificate per key, in order, without duplicates");
    assert!(pgp::wrap(&everyone, OPTS).is_ok());
}

#[test]
fn recipients_from_gpg_unknown_name() {
    let home = GpgHome::with(&[]);
    for unknown in ["carol@example.com", "alice", "Alice", "ALICE@EXAMPLE.COM", "0x0123456789ABCDEF"] {
        let err = pgp::recipients_from_gpg(Some(home.path()), &names(&["alice@example.com", unknown])).unwrap_err();
        assert!(matches!(err, Error::InvalidKey { .. }), "{err}");
        assert!(err.to_string().contains(&format!("no OpenPGP key for recipient `{unknown}`")), "{err}");
    }
    // An empty home has no keys at all.
    let empty = GpgHome::new();
    let err = pgp::recipients_from_gpg(Some(empty.path()), &names(&["alice@example.com"])).unwrap_err();
    assert!(err.to_string().contains("no OpenPGP key for recipient"), "{err}");
}
