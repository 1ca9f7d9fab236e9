//! The LUKS library against cryptsetup: volumes made by `cryptsetup luksFormat` are read, unlocked and changed by
//! [`Volume`], and cryptsetup accepts the result. After every cryptsetup command the header bytes are compared
//! with what we wrote, because cryptsetup silently rewrites a header copy it finds invalid or stale (docs/formats.md).

use cryptadm::luks::{Error, Kdf, KeyslotSummary, Version, Volume, VolumeKey, luks2};
use std::path::{Path, PathBuf};
use std::process::Command;

/// These tests never skip (a skipped interop test is a claim without proof): cryptsetup must be installed.
fn have_cryptsetup() -> bool {
    let found = Command::new("cryptsetup").arg("--version").output().is_ok_and(|o| o.status.success());
    assert!(
        found,
        "`cryptsetup` is not installed; install it with `apt-get install -y cryptsetup-bin` (bash .ci/run does)"
    );
    found
}

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        Fixture { dir: tempfile::tempdir().unwrap() }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn file(&self, name: &str, contents: &[u8]) -> PathBuf {
        let path = self.path(name);
        std::fs::write(&path, contents).unwrap();
        path
    }

    /// A cryptsetup-made volume with `pass0` in keyslot 0, cheap KDF parameters.
    fn cryptsetup_volume(&self, name: &str, format_args: &[&str]) -> PathBuf {
        let image = self.path(name);
        std::fs::File::create(&image).unwrap().set_len(20 << 20).unwrap();
        let key = self.file("pass0", b"pass0");
        let mut cmd = Command::new("cryptsetup");
        cmd.args(["luksFormat", "-q", "--key-file"]).arg(&key).args(format_args).arg(&image);
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "luksFormat: {}", String::from_utf8_lossy(&out.stderr));
        image
    }
}

/// Runs cryptsetup and returns (exit code, stdout), asserting the header bytes did not change under it.
fn cryptsetup(image: &Path, args: &[&str]) -> (i32, String) {
    let before = header_bytes(image);
    let out = Command::new("cryptsetup").args(args).output().unwrap();
    assert_eq!(header_bytes(image), before, "cryptsetup {args:?} rewrote the header (a copy we wrote was invalid)");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Both LUKS2 header copies with the default 16 KiB size, or a LUKS1 header with its keyslot area.
fn header_bytes(image: &Path) -> Vec<u8> {
    let bytes = std::fs::read(image).unwrap();
    bytes[..(2 << 20).min(bytes.len())].to_vec()
}

fn test_passphrase(image: &Path, key_file: &Path, slot: Option<u32>) -> i32 {
    let slot = slot.map(|s| s.to_string());
    let mut args = vec!["open", "--test-passphrase", "--key-file", key_file.to_str().unwrap()];
    if let Some(slot) = &slot {
        args.extend(["--key-slot", slot]);
    }
    args.push(image.to_str().unwrap());
    cryptsetup(image, &args).0
}

fn dump_volume_key(image: &Path, key_file: &Path) -> Vec<u8> {
    let (code, out) = cryptsetup(
        image,
        &[
            "luksDump",
            "--dump-volume-key",
            "--batch-mode",
            "--key-file",
            key_file.to_str().unwrap(),
            image.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0);
    let dump = out.split("MK dump:").nth(1).unwrap();
    let hex: String = dump.split_whitespace().take_while(|w| w.len() == 2).collect();
    hex::decode(hex).unwrap()
}

fn epoch(image: &Path) -> u64 {
    let (_, out) = cryptsetup(image, &["luksDump", image.to_str().unwrap()]);
    out.lines().find_map(|l| l.strip_prefix("Epoch:")).unwrap().trim().parse().unwrap()
}

const ARGON2: &[&str] =
    &["--type", "luks2", "--pbkdf", "argon2id", "--pbkdf-force-iterations", "4", "--pbkdf-memory", "32"];

#[test]
fn cryptsetup_luks2_argon2id_unlocks_and_gains_and_loses_keyslots() {
    if !have_cryptsetup() {
        return;
    }
    let fx = Fixture::new();
    let image = fx.cryptsetup_volume("v.img", ARGON2);
    let pass0 = fx.path("pass0");
    let mut volume = Volume::open(&image, true).unwrap();
    assert_eq!(volume.version(), Version::Luks2);
    assert_eq!(volume.seqid(), epoch(&image));
    assert_eq!(
        volume.keyslots(),
        vec![KeyslotSummary {
            id: 0,
            kdf: Kdf::Argon2id { time: 4, memory_kib: 32, parallel: kdf_parallel(&volume.keyslots()[0]) }
        }]
    );
    let (slot, key) = volume.unlock(b"pass0").unwrap();
    assert_eq!(slot, 0);
    assert_eq!(key.as_bytes(), &dump_volume_key(&image, &pass0)[..]);
    assert!(matches!(volume.unlock(b"wrong"), Err(Error::NoKeyslotOpens)));
    assert!(matches!(volume.unlock_keyslot(0, b"wrong"), Err(Error::WrongPassphrase(0))));

    // Add a pbkdf2 and an argon2i slot: each write is one seqid step, and cryptsetup opens both.
    let seqid = volume.seqid();
    let pbkdf2 = Kdf::Pbkdf2 { hash: "sha256".into(), iterations: 1000 };
    assert_eq!(volume.add_keyslot(&key, b"pass1", &pbkdf2).unwrap(), 1);
    let argon2i = Kdf::Argon2i { time: 4, memory_kib: 64, parallel: 1 };
    assert_eq!(volume.add_keyslot(&key, b"pass2", &argon2i).unwrap(), 2);
    assert_eq!(volume.seqid(), seqid + 2);
    assert_eq!(epoch(&image), seqid + 2);
    let pass1 = fx.file("pass1", b"pass1");
    let pass2 = fx.file("pass2", b"pass2");
    assert_eq!(test_passphrase(&image, &pass1, Some(1)), 0);
    assert_eq!(test_passphrase(&image, &pass2, Some(2)), 0);
    assert_eq!(test_passphrase(&image, &pass2, Some(1)), 2, "a wrong passphrase is refused");
    assert_eq!(dump_volume_key(&image, &pass2), key.as_bytes());

    // A fresh handle sees the same thing; the new slot verifies from disk.
    let reread = Volume::open(&image, false).unwrap();
    assert_eq!(reread.keyslots().iter().map(|k| k.id).collect::<Vec<_>>(), vec![0, 1, 2]);
    assert_eq!(reread.keyslots()[1].kdf, pbkdf2);
    assert_eq!(reread.keyslots()[2].kdf, argon2i);
    assert!(!reread.repaired_from_secondary());
    assert_eq!(reread.unlock_keyslot(2, b"pass2").unwrap().as_bytes(), key.as_bytes());

    // Remove slot 0: cryptsetup no longer opens it, the others still open.
    volume.remove_keyslot(0).unwrap();
    assert_eq!(epoch(&image), seqid + 3);
    assert_eq!(test_passphrase(&image, &pass0, None), 2);
    assert_eq!(test_passphrase(&image, &pass1, None), 0);
    volume.remove_keyslot(1).unwrap();
    assert!(matches!(volume.remove_keyslot(2), Err(Error::LastKeyslot(2))));
    assert!(matches!(volume.remove_keyslot(5), Err(Error::KeyslotNotActive(5))));
    assert_eq!(test_passphrase(&image, &pass2, None), 0);
    // The freed area is reused by the next slot (cryptsetup's first-gap rule).
    assert_eq!(volume.add_keyslot(&key, b"pass0", &pbkdf2).unwrap(), 0);
    let slot0 = &volume.luks2_header().unwrap().meta.keyslots[&luks2::json::Id(0)];
    assert_eq!(slot0.area.offset.0, 32768);
    assert_eq!(test_passphrase(&image, &pass0, Some(0)), 0);
}

fn kdf_parallel(slot: &KeyslotSummary) -> u32 {
    match slot.kdf {
        Kdf::Argon2i { parallel, .. } | Kdf::Argon2id { parallel, .. } => parallel,
        Kdf::Pbkdf2 { .. } => 0,
    }
}

#[test]
fn a_volume_key_that_is_not_the_volumes_is_refused() {
    if !have_cryptsetup() {
        return;
    }
    let fx = Fixture::new();
    let image =
        fx.cryptsetup_volume("v.img", &["--type", "luks2", "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000"]);
    let mut volume = Volume::open(&image, true).unwrap();
    let other = VolumeKey::generate(64);
    let kdf = Kdf::Pbkdf2 { hash: "sha256".into(), iterations: 1000 };
    assert!(matches!(volume.add_keyslot(&other, b"x", &kdf), Err(Error::VolumeKeyMismatch)));
    assert!(matches!(
        volume.add_keyslot(&other, b"x", &Kdf::Pbkdf2 { hash: "sha256".into(), iterations: 10 }),
        Err(Error::InvalidParameter(_))
    ));
}

#[test]
fn tokens_and_unknown_fields_survive_our_rewrites() {
    if !have_cryptsetup() {
        return;
    }
    let fx = Fixture::new();
    let image =
        fx.cryptsetup_volume("v.img", &["--type", "luks2", "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000"]);
    let token = r#"{"type":"cryptadm-kms","keyslots":["0"],"kms_key_id":"k-1","nested":{"list":[1,"two",null]}}"#;
    let token_file = fx.file("token.json", token.as_bytes());
    let out = Command::new("cryptsetup")
        .args(["token", "import", "--json-file"])
        .arg(&token_file)
        .arg(&image)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut volume = Volume::open(&image, true).unwrap();
    let (_, key) = volume.unlock(b"pass0").unwrap();
    let kdf = Kdf::Pbkdf2 { hash: "sha256".into(), iterations: 1000 };
    volume.add_keyslot(&key, b"pass1", &kdf).unwrap();
    let (code, exported) = cryptsetup(&image, &["token", "export", "--token-id", "0", image.to_str().unwrap()]);
    assert_eq!(code, 0);
    let exported: serde_json::Value = serde_json::from_str(&exported).unwrap();
    assert_eq!(exported, serde_json::from_str::<serde_json::Value>(token).unwrap());
    // Removing the slot the token names drops it from the token, as cryptsetup does.
    volume.remove_keyslot(0).unwrap();
    let (_, exported) = cryptsetup(&image, &["token", "export", "--token-id", "0", image.to_str().unwrap()]);
    assert!(exported.contains(r#""keyslots":[]"#), "{exported}");
    assert!(exported.contains("k-1"));
}

#[test]
fn cryptsetup_luks1_unlocks_and_gains_and_loses_keyslots() {
    if !have_cryptsetup() {
        return;
    }
    let fx = Fixture::new();
    let image = fx.cryptsetup_volume("v1.img", &["--type", "luks1", "--pbkdf-force-iterations", "1000"]);
    let pass0 = fx.path("pass0");
    let mut volume = Volume::open(&image, true).unwrap();
    assert_eq!(volume.version(), Version::Luks1);
    assert_eq!(volume.seqid(), 0);
    let (_, key) = volume.unlock(b"pass0").unwrap();
    assert_eq!(key.as_bytes(), &dump_volume_key(&image, &pass0)[..]);
    let kdf = Kdf::Pbkdf2 { hash: "sha256".into(), iterations: 1000 };
    assert_eq!(volume.add_keyslot(&key, b"pass1", &kdf).unwrap(), 1);
    let argon = Kdf::Argon2id { time: 4, memory_kib: 32, parallel: 1 };
    assert!(matches!(volume.add_keyslot(&key, b"x", &argon), Err(Error::Unsupported { .. })));
    let pass1 = fx.file("pass1", b"pass1");
    assert_eq!(test_passphrase(&image, &pass1, Some(1)), 0);
    volume.remove_keyslot(0).unwrap();
    assert_eq!(test_passphrase(&image, &pass0, None), 2);
    assert_eq!(test_passphrase(&image, &pass1, None), 0);
    assert!(matches!(volume.remove_keyslot(1), Err(Error::LastKeyslot(1))));
}

#[test]
fn a_corrupt_primary_falls_back_to_the_secondary_and_our_write_repairs_it() {
    if !have_cryptsetup() {
        return;
    }
    let fx = Fixture::new();
    let image =
        fx.cryptsetup_volume("v.img", &["--type", "luks2", "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000"]);
    let mut bytes = std::fs::read(&image).unwrap();
    bytes[4096 + 10] ^= 0xff; // inside the primary JSON area: checksum fails
    std::fs::write(&image, &bytes).unwrap();
    let mut volume = Volume::open(&image, true).unwrap();
    assert!(volume.repaired_from_secondary());
    let (_, key) = volume.unlock(b"pass0").unwrap();
    volume.add_keyslot(&key, b"pass1", &Kdf::Pbkdf2 { hash: "sha256".into(), iterations: 1000 }).unwrap();
    assert!(!Volume::open(&image, false).unwrap().repaired_from_secondary());
    assert_eq!(test_passphrase(&image, &fx.file("pass1", b"pass1"), None), 0);

    // Both copies broken: corrupt, not a silent guess.
    let mut bytes = std::fs::read(&image).unwrap();
    bytes[4096 + 10] ^= 0xff;
    bytes[16384 + 4096 + 10] ^= 0xff;
    std::fs::write(&image, &bytes).unwrap();
    assert!(matches!(Volume::open(&image, false), Err(Error::Corrupt { .. })));
}

#[test]
fn not_luks_and_truncated_images_are_refused() {
    let fx = Fixture::new();
    let plain = fx.file("plain.img", &[0u8; 8192]);
    assert!(matches!(Volume::open(&plain, false), Err(Error::NotLuks(_))));
    if !have_cryptsetup() {
        return;
    }
    let image =
        fx.cryptsetup_volume("v.img", &["--type", "luks2", "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000"]);
    let file = std::fs::OpenOptions::new().write(true).open(&image).unwrap();
    file.set_len(1 << 20).unwrap();
    assert!(matches!(Volume::open(&image, false), Err(Error::Truncated(_))));
}

#[test]
fn a_header_changed_by_another_writer_is_not_overwritten() {
    if !have_cryptsetup() {
        return;
    }
    let fx = Fixture::new();
    let image =
        fx.cryptsetup_volume("v.img", &["--type", "luks2", "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000"]);
    let kdf = Kdf::Pbkdf2 { hash: "sha256".into(), iterations: 1000 };
    let mut first = Volume::open(&image, true).unwrap();
    let mut second = Volume::open(&image, true).unwrap();
    let (_, key) = first.unlock(b"pass0").unwrap();
    first.add_keyslot(&key, b"pass1", &kdf).unwrap();
    let stale = second.seqid();
    match second.add_keyslot(&key, b"pass2", &kdf) {
        Err(Error::ConcurrentUpdate { expected, found }) => assert_eq!((expected, found), (stale, stale + 1)),
        other => panic!("expected ConcurrentUpdate, got {other:?}"),
    }
    // After a reload the second writer sees the first one's slot and adds its own next to it.
    second.reload().unwrap();
    assert_eq!(second.add_keyslot(&key, b"pass2", &kdf).unwrap(), 2);
    assert_eq!(test_passphrase(&image, &fx.file("pass1", b"pass1"), Some(1)), 0);
    assert_eq!(test_passphrase(&image, &fx.file("pass2", b"pass2"), Some(2)), 0);
}
