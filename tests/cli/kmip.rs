//! KMIP against a real server (PyKMIP, tests/cli/support_kmip.rs), with PyKMIP's own client as the oracle: what
//! cryptadm's client registers PyKMIP reads back, what PyKMIP registers cryptadm reads, server-side AES-GCM checked
//! by Python's `cryptography`; the server's refusals mapped to exit statuses; and a hostile TLS server
//! (tests/cli/kmip_junk_server.py) whose bad answers are refused fast.

use crate::support_kmip::{self, Kmip as Server, s, server};
use cryptadm::exit::{Classify as _, ExitStatus};
use cryptadm::kms::kmip::{Kmip, RevocationReason};
use std::process::Command;
use std::time::{Duration, Instant};

fn client(server: &Server) -> Kmip {
    Kmip::new(server.settings(Some(&server.client))).expect("client settings")
}

fn unique(name: &str) -> String {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("test/{name}-{}-{n}", std::process::id())
}

#[test]
fn negotiates_kmip_1_4_with_pykmip() {
    let server = server();
    let kmip = client(server);
    assert_eq!(kmip.version().unwrap(), (1, 4));
    // What the server itself says it supports (PyKMIP's client asks in 1.2).
    let versions = server.oracle(&["versions"]);
    assert!(versions.starts_with("2.0 1.4 1.3 1.2"), "{versions}");
}

#[test]
fn a_password_registered_by_cryptadm_is_read_by_pykmip() {
    let server = server();
    let kmip = client(server);
    let name = unique("registered");
    let uid = kmip.register_password(&name, b"correct horse battery staple").unwrap();
    assert_eq!(server.oracle(&["get", &uid]), hex::encode(b"correct horse battery staple"));
    assert_eq!(server.oracle(&["locate", &name]), uid);
    assert_eq!(kmip.locate(&name).unwrap(), vec![uid.clone()]);
    let object = kmip.get(&uid).unwrap();
    assert!(object.is_secret_data());
    assert_eq!(&object.material[..], b"correct horse battery staple");
    kmip.destroy(&uid).unwrap();
    assert!(kmip.locate(&name).unwrap().is_empty());
    kmip.destroy(&uid).expect("destroying what is gone is success");
}

#[test]
fn a_password_registered_by_pykmip_is_read_by_cryptadm() {
    let server = server();
    let kmip = client(server);
    let name = unique("seeded");
    let uid = server.oracle(&["register-password", &name, &hex::encode(b"seeded by pykmip")]);
    assert_eq!(kmip.locate(&name).unwrap(), vec![uid.clone()]);
    assert_eq!(&kmip.get(&uid).unwrap().material[..], b"seeded by pykmip");
}

#[test]
fn created_and_registered_keys_live_through_activate_revoke_destroy() {
    let server = server();
    let kmip = client(server);
    let uid = kmip.create_aes256(Some(&unique("created"))).unwrap();
    let material = server.oracle(&["get", &uid]);
    assert_eq!(material.len(), 64, "a 256-bit key");
    assert_eq!(hex::encode(&kmip.get(&uid).unwrap().material[..]), material);
    kmip.activate(&uid).unwrap();
    let refused = kmip.destroy(&uid).unwrap_err();
    assert_eq!(refused.status(), ExitStatus::Unauthenticated, "PyKMIP refuses to destroy an active key: {refused}");
    kmip.revoke(&uid, RevocationReason::CessationOfOperation).unwrap();
    kmip.destroy(&uid).unwrap();
    let gone = kmip.get(&uid).unwrap_err();
    assert_eq!(gone.status(), ExitStatus::NotFound, "{gone}");

    let key = [7u8; 32];
    let uid = kmip.register_aes_key(Some(&unique("aes")), &key).unwrap();
    assert_eq!(server.oracle(&["get", &uid]), hex::encode(key));
}

#[test]
fn server_side_aes_gcm_is_checked_by_python_cryptography() {
    let server = server();
    let kmip = client(server);
    let key = hex::encode([0x5au8; 32]);
    let uid = server.oracle(&["register-aes", &unique("kek"), &key]);
    let sealed = kmip.encrypt(&uid, b"volume passphrase", b"context").unwrap();
    let check = Command::new("python3")
        .args([
            "-c",
            "import sys; from cryptography.hazmat.primitives.ciphers.aead import AESGCM as G; \
             k,iv,ct,t,aad=[bytes.fromhex(a) for a in sys.argv[1:6]]; print(G(k).decrypt(iv, ct+t, aad).decode())",
            &key,
            &hex::encode(&sealed.iv),
            &hex::encode(&sealed.ciphertext),
            &hex::encode(&sealed.tag),
            &hex::encode(b"context"),
        ])
        .output()
        .unwrap();
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));
    assert_eq!(String::from_utf8_lossy(&check.stdout).trim(), "volume passphrase");
    assert_eq!(&kmip.decrypt(&uid, &sealed, b"context").unwrap()[..], b"volume passphrase");
    let refused = kmip.decrypt(&uid, &sealed, b"other context").unwrap_err();
    assert_ne!(refused.status(), ExitStatus::Success);
    assert!(!refused.to_string().contains("volume passphrase"));
}

#[test]
fn refusals_map_to_exit_statuses_with_hints() {
    let server = server();
    let kmip = client(server);
    let missing = kmip.get("999999").unwrap_err();
    assert_eq!(missing.status(), ExitStatus::NotFound, "{missing}");
    assert!(missing.to_string().contains("Item Not Found"), "{missing}");

    // A valid client that does not own the object: Permission Denied.
    let uid = kmip.register_password(&unique("owned"), b"mine").unwrap();
    let intruder = Kmip::new(server.settings(Some(&server.other))).unwrap();
    let denied = intruder.get(&uid).unwrap_err();
    assert_eq!(denied.status(), ExitStatus::Unauthenticated, "{denied}");
    assert!(denied.hint().is_some());

    // No client certificate; one from a CA the server does not trust.
    for (identity, what) in [(None, "no client certificate"), (Some(&server.rogue), "an untrusted client certificate")]
    {
        let refused = Kmip::new(server.settings(identity)).unwrap().get(&uid).unwrap_err();
        assert_eq!(refused.status(), ExitStatus::Unauthenticated, "{what}: {refused}");
        let hint = refused.hint().unwrap_or_default().into_owned();
        assert!(hint.contains("--kmip-client-cert"), "{what}: {hint}");
    }
}

/// Redaction (issue 40 §2): a KMIP server whose Result Message quotes the whole request it got (`echo-SPELLING`:
/// the request's bytes as text, in each spelling of tests/cli/echo_encoder.py) shows nothing of the passphrase
/// `bootstrap seal --provider kmip` sends in its Encrypt nor of the password of the KMIP credential: no run of 8
/// characters of either (random, with `/`, `+`, `=`, quotes and non-ASCII) in anything `cryptadm` prints.
fn server_text_never_carries_a_secret(server: &Server, port: &str, requests: &std::path::Path) {
    use proptest::strategy::{Strategy as _, ValueTree as _};
    let scratch = crate::support::Scratch::new();
    let input = scratch.write("config.yaml", "apiVersion: v1\nkind: ConfigMap\n");
    let mut runner = proptest::test_runner::TestRunner::default();
    let passphrase = crate::redaction::body_secret().new_tree(&mut runner).unwrap().current();
    let password = crate::redaction::body_secret().new_tree(&mut runner).unwrap().current();
    for spelling in crate::redaction::SPELLINGS {
        let before = std::fs::read(requests).map(|r| r.len()).unwrap_or(0);
        let output = crate::support::cryptadm()
            .env("CRYPTADM_PASSPHRASE", &passphrase)
            .env("CRYPTADM_KMIP_PASSWORD", &password)
            .args(["bootstrap", "seal", "--provider", "kmip", "--retries", "0", "--kmip-username", "kmipechouser"])
            .args([
                "--passphrase-uri",
                &format!("kmip://echo-{spelling}"),
                "--kmip-server",
                &format!("127.0.0.1:{port}"),
            ])
            .args(["--kmip-cacert", &s(&server.ca), "--kmip-client-cert", &s(&server.client.cert)])
            .args(["--kmip-client-key", &s(&server.client.key), "--in"])
            .arg(&input)
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        let shown = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        let sent = std::fs::read(requests).unwrap()[before..].to_vec();
        for secret in [&passphrase, &password] {
            let bytes = secret.as_bytes();
            assert!(sent.windows(bytes.len()).any(|w| w == bytes), "{spelling}: the request did not carry `{secret}`");
            crate::redaction::assert_secret_absent(spelling, secret, &shown);
        }
        assert_eq!(output.status.code(), Some(16), "{spelling}: {shown}");
        assert!(shown.contains("Permission Denied"), "{spelling}: {shown}");
        let quoted = shown.split("Permission Denied (0xc): ").nth(1).unwrap_or_default();
        assert!(quoted.len() > 40 && !quoted.starts_with("(no message)"), "{spelling}: the quote is shown: {shown}");
    }
}

#[test]
fn bad_answers_are_refused_fast() {
    let server = server();
    let dir = crate::support::Scratch::new();
    let portfile = dir.path("port");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/kmip_junk_server.py");
    let mut junk = support_kmip::spawn_watched(
        std::path::Path::new("python3"),
        &[
            &s(&script),
            &s(&server.server_identity.cert),
            &s(&server.server_identity.key),
            &s(&portfile),
            &s(&dir.path("requests")),
        ],
        &dir.path("junk.log"),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while !portfile.exists() {
        assert!(Instant::now() < deadline, "{}", std::fs::read_to_string(dir.path("junk.log")).unwrap_or_default());
        std::thread::sleep(Duration::from_millis(50));
    }
    let port = std::fs::read_to_string(&portfile).unwrap();
    let mut settings = server.settings(Some(&server.client));
    settings.server = format!("127.0.0.1:{port}");
    for (case, expect) in [
        ("huge", "bound"),
        ("slow-huge", "bound"),
        ("deep", "nested deeper"),
        ("truncated", "unavailable"),
        ("garbage", ""),
    ] {
        let kmip = Kmip::new(settings.clone()).unwrap();
        let started = Instant::now();
        let refused = kmip.get(case).unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5), "{case}: {:?}", started.elapsed());
        assert_eq!(refused.status(), ExitStatus::Failure, "{case}: {refused}");
        assert!(refused.to_string().contains(expect), "{case}: {refused}");
    }
    server_text_never_carries_a_secret(server, &port, &dir.path("requests"));
    // The watchdog's TERM trap ends the junk server with it.
    Command::new("kill").arg(junk.id().to_string()).status().unwrap();
    junk.wait().unwrap();
}
