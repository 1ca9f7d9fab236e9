//! `cryptadm disk luks-format | inspect | decrypt` against cryptsetup and qemu-img, both directions.
//!
//! cryptsetup silently rewrites a header copy it finds invalid or stale on *any* access (docs/formats.md), so
//! every cryptsetup command here runs through [`cryptsetup`], which fails the test if the header bytes changed.

use crate::support::{Scratch, cryptadm, require_tool};
use predicates::prelude::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn tools() {
    require_tool("cryptsetup", "apt-get install -y cryptsetup-bin");
    require_tool("qemu-img", "apt-get install -y qemu-utils");
}

/// Header region: both LUKS2 copies and the keyslots area start, or the LUKS1 header and its keyslots.
fn header_bytes(image: &Path) -> Vec<u8> {
    use std::io::Read;
    let mut bytes = vec![];
    std::fs::File::open(image).unwrap().take(2 << 20).read_to_end(&mut bytes).unwrap();
    bytes
}

/// Runs cryptsetup on `image`; asserts it left the header bytes alone. Returns (exit code, stdout).
fn cryptsetup(image: &Path, args: &[&str]) -> (i32, String) {
    let before = header_bytes(image);
    let out = Command::new("cryptsetup").args(args).arg(image).output().unwrap();
    assert_eq!(header_bytes(image), before, "cryptsetup {args:?} rewrote the header we wrote");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
}

fn run(cmd: &mut Command) -> String {
    let output = cmd.output().expect("run tool");
    assert!(output.status.success(), "{cmd:?} failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Deterministic non-trivial bytes (a raw "disk").
fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| ((i / 512) as u8).wrapping_mul(31).wrapping_add(i as u8).wrapping_add(seed)).collect()
}

const CHEAP_PBKDF2: &[&str] = &["--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000"];

fn luks_format(image: &Path, key: &Path, args: &[&str]) {
    cryptadm().args(["disk", "luks-format", "--key-file"]).arg(key).args(args).arg(image).assert().success();
}

/// The checks cryptsetup makes of a volume we wrote: isLuks, luksDump (returned), the right passphrase opens it,
/// a wrong one is refused — and none of these commands touched the header.
fn cryptsetup_accepts(image: &Path, key: &Path, wrong: &Path) -> String {
    assert_eq!(cryptsetup(image, &["isLuks"]).0, 0);
    let (code, dump) = cryptsetup(image, &["luksDump"]);
    assert_eq!(code, 0);
    let key = key.to_str().unwrap();
    assert_eq!(cryptsetup(image, &["open", "--test-passphrase", "--key-file", key]).0, 0);
    let wrong = wrong.to_str().unwrap();
    assert_eq!(cryptsetup(image, &["open", "--test-passphrase", "--key-file", wrong]).0, 2);
    dump
}

#[test]
fn cryptsetup_accepts_every_luks2_variant_we_write() {
    tools();
    let work = Scratch::new();
    let key = work.write("key.bin", b"correct horse\nbattery\0staple");
    let wrong = work.write("wrong", b"correct horse");
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["--pbkdf", "argon2id", "--pbkdf-force-iterations", "4", "--pbkdf-memory", "64", "--pbkdf-parallel", "2"],
            &[
                "PBKDF:      argon2id",
                "Memory:     64",
                "Threads:    2",
                "sector: 4096 [bytes]",
                "Key:        512 bits",
            ],
        ),
        (
            &["--pbkdf", "argon2i", "--pbkdf-force-iterations", "5", "--pbkdf-memory", "32", "--sector-size", "512"],
            &["PBKDF:      argon2i", "Time cost:  5", "sector: 512 [bytes]"],
        ),
        (
            &["--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000", "--key-size", "256", "--hash", "sha512"],
            &["PBKDF:      pbkdf2", "Hash:       sha512", "Key:        256 bits", "Iterations: 1000"],
        ),
        (
            &[
                "--pbkdf",
                "pbkdf2",
                "--pbkdf-force-iterations",
                "1000",
                "--label",
                "data",
                "--uuid",
                "0C9A5B8E-9D0A-4B8E-8F00-123456789ABC",
                "--sector-size",
                "4096",
            ],
            &[
                "Label:         \tdata",
                "UUID:          \t0c9a5b8e-9d0a-4b8e-8f00-123456789abc",
                "offset: 16777216 [bytes]",
            ],
        ),
    ];
    for (i, (args, expected)) in cases.iter().enumerate() {
        let image = work.path(&format!("v{i}.img"));
        luks_format(&image, &key, &[&["--size", "1M"][..], args].concat());
        assert_eq!(std::fs::metadata(&image).unwrap().len(), (16 << 20) + (1 << 20));
        let dump = cryptsetup_accepts(&image, &key, &wrong);
        assert!(dump.contains("Version:       \t2"), "{dump}");
        assert!(dump.contains("cipher: aes-xts-plain64"), "{dump}");
        for line in *expected {
            assert!(dump.contains(line), "case {i}: `{line}` missing from\n{dump}");
        }
        // cryptsetup recovers the same volume key from the keyslot we wrote that we recover ourselves.
        let dumped_key = run(Command::new("cryptsetup")
            .args(["luksDump", "--dump-volume-key", "--batch-mode", "--key-file"])
            .arg(&key)
            .arg(&image));
        assert!(dumped_key.contains("MK dump:"));
    }
    // cryptsetup can change what we wrote, and we read its change: a keyslot it adds opens the volume for us.
    let image = work.path("v0.img");
    let added = work.write("added", b"added by cryptsetup");
    run(Command::new("cryptsetup")
        .args(["luksAddKey", "--batch-mode", "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000", "--key-file"])
        .arg(&key)
        .arg(&image)
        .arg(&added));
    decrypt(&image, &added, &work.path("v0.raw")).success();
    assert_eq!(inspect(&image)["keyslots"][1]["pbkdf"]["type"], "pbkdf2");
}

#[test]
fn cryptsetup_accepts_our_luks1_and_qemu_reads_its_payload() {
    tools();
    let work = Scratch::new();
    let pass = work.write("pass.txt", b"a text passphrase");
    let wrong = work.write("wrong", b"another one");
    let raw = work.write("raw.img", pattern(3 << 20, 7));
    let image = work.path("l1.img");
    luks_format(&image, &pass, &[&["--type", "luks1", "--from"][..], &[raw.to_str().unwrap()], CHEAP_PBKDF2].concat());
    let dump = cryptsetup_accepts(&image, &pass, &wrong);
    assert!(dump.contains("Version:       \t1"), "{dump}");
    assert!(dump.contains("Payload offset:\t4096"), "{dump}");
    let out = work.path("out.raw");
    run(Command::new("qemu-img")
        .args(["convert", "--object"])
        .arg(format!("secret,id=s0,file={}", pass.display()))
        .arg("--image-opts")
        .arg(format!("driver=luks,key-secret=s0,file.filename={}", image.display()))
        .args(["-O", "raw"])
        .arg(&out));
    assert!(
        std::fs::read(&out).unwrap() == std::fs::read(&raw).unwrap(),
        "QEMU decrypts our LUKS1 payload to the input"
    );
}

#[test]
fn glance_images_are_luks1_with_text_passphrases_and_print_properties() {
    tools();
    let work = Scratch::new();
    let pass = work.write("pass.txt", "pässwörd");
    let raw = work.write("raw.img", pattern(1 << 20, 3));
    let image = work.path("glance.img");
    let key_id = "3f1c6b9e-0d2a-4c55-9a57-3e1f0b6a2c11";
    let output = cryptadm()
        .args(["disk", "luks-format", "--glance", "--key-id", key_id, "--output-format", "json", "--passphrase-file"])
        .arg(&pass)
        .arg("--from")
        .arg(&raw)
        .args(CHEAP_PBKDF2)
        .arg(&image)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    let props = &doc["properties"];
    assert_eq!(props["os_encrypt_format"], "LUKSv1");
    assert_eq!(props["os_encrypt_key_id"], key_id);
    // A passphrase secret: no cinder_encryption_key_id (Cinder would hexlify it into another passphrase); the
    // secret outlives the image unless asked; os_encrypt_cipher names the payload cipher, no os_decrypt_format.
    assert_eq!(props.get("cinder_encryption_key_id"), None);
    assert_eq!(props["os_encrypt_key_deletion_policy"], "False");
    assert_eq!(props.get("cinder_encryption_key_deletion_policy"), None);
    assert_eq!(props["os_encrypt_cipher"], "AES256");
    assert_eq!(props.get("os_decrypt_format"), None);
    assert_eq!(props["os_decrypt_container_format"], "bare");
    assert_eq!(props["os_decrypt_size"], (1 << 20).to_string());
    let command = doc["command"].as_str().unwrap();
    assert!(command.starts_with("openstack image create --disk-format raw --container-format bare"), "{command}");
    assert!(command.contains(&format!("--property os_encrypt_key_id={key_id}")), "{command}");
    // QEMU (Nova's reader) opens it with the text passphrase.
    let info = run(Command::new("qemu-img")
        .args(["info", "--object"])
        .arg(format!("secret,id=s0,file={}", pass.display()))
        .arg("--image-opts")
        .arg(format!("driver=luks,key-secret=s0,file.filename={}", image.display())));
    assert!(info.contains("virtual size: 1 MiB"), "{info}");

    // YAML by default; a binary passphrase is refused before anything is written.
    let binary = work.write("binary.key", [0xffu8, 0, 1, 2]);
    let refused = work.path("refused.img");
    cryptadm()
        .args(["disk", "luks-format", "--glance", "--key-file"])
        .arg(&binary)
        .args(["--size", "1M"])
        .args(CHEAP_PBKDF2)
        .arg(&refused)
        .assert()
        .code(3)
        .stderr(predicates::str::contains("UTF-8"));
    assert!(!refused.exists());
    cryptadm()
        .args(["disk", "luks-format", "--glance", "--type", "luks2", "--key-file"])
        .arg(&pass)
        .args(["--size", "1M"])
        .arg(&refused)
        .assert()
        .code(2);
    let yaml = cryptadm()
        .args(["disk", "luks-format", "--glance", "--key-deletion-policy", "on_image_deletion", "--key-file"])
        .arg(&pass)
        .args(["--size", "1M"])
        .args(CHEAP_PBKDF2)
        .arg(work.path("g2.img"))
        .output()
        .unwrap();
    let yaml = String::from_utf8(yaml.stdout).unwrap();
    // The old spelling of --delete-key-with-image is still accepted.
    assert!(
        yaml.contains("os_encrypt_key_deletion_policy: 'True'")
            || yaml.contains("os_encrypt_key_deletion_policy: \"True\""),
        "{yaml}"
    );
    assert!(!yaml.contains("cinder_encryption_key_deletion_policy"), "{yaml}");
    // The policy is an image property: without --glance or --upload there is no image to set it on.
    for policy in [&["--delete-key-with-image"][..], &["--key-deletion-policy", "on_image_deletion"]] {
        cryptadm()
            .args(["disk", "luks-format"])
            .args(policy)
            .arg("--key-file")
            .arg(&pass)
            .args(["--size", "1M"])
            .arg(work.path("g3.img"))
            .assert()
            .code(2)
            .stderr(predicates::str::contains("needs --glance or --upload"));
        assert!(!work.path("g3.img").exists());
    }
}

fn decrypt(image: &Path, key: &Path, out: &Path) -> assert_cmd::assert::Assert {
    cryptadm().args(["disk", "decrypt", "--key-file"]).arg(key).arg(image).arg("--out").arg(out).assert()
}

fn inspect(image: &Path) -> Value {
    let out = cryptadm().args(["disk", "inspect", "--output-format", "json"]).arg(image).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn we_round_trip_our_own_images_and_refuse_wrong_passphrases() {
    let work = Scratch::new();
    let key = work.write("key.bin", [1u8, 2, 3, 0, 255]);
    let raw = work.write("raw.img", pattern((2 << 20) + 4096, 1));
    for (i, extra) in
        [&["--sector-size", "4096"][..], &["--sector-size", "512", "--key-size", "256"][..], &["--type", "luks1"][..]]
            .iter()
            .enumerate()
    {
        let image = work.path(&format!("r{i}.img"));
        luks_format(&image, &key, &[&["--from", raw.to_str().unwrap()][..], CHEAP_PBKDF2, extra].concat());
        let out = work.path(&format!("r{i}.raw"));
        decrypt(&image, &key, &out).success();
        assert!(std::fs::read(&out).unwrap() == std::fs::read(&raw).unwrap());
        let wrong = work.write("wrong", b"nope");
        let out2 = work.path("never.raw");
        decrypt(&image, &wrong, &out2).code(16).stderr(predicates::str::contains("hint:"));
        assert!(!out2.exists(), "nothing is written on a wrong passphrase");
    }
}

#[test]
fn we_read_cryptsetup_images_luks1_and_luks2_with_known_payloads() {
    tools();
    let work = Scratch::new();
    let key = work.write("key.bin", b"cryptsetup key");
    // LUKS2, 4096-byte sectors, payload encrypted by cryptsetup's offline reencryption (docs/formats.md).
    let plain = pattern(1 << 20, 9);
    let image = work.write("enc.img", &plain);
    std::fs::OpenOptions::new().write(true).open(&image).unwrap().set_len(33 << 20).unwrap();
    run(Command::new("cryptsetup")
        .args(["reencrypt", "--encrypt", "--type", "luks2", "--sector-size", "4096", "--reduce-device-size", "32M"])
        .args([
            "--batch-mode",
            "--pbkdf",
            "argon2id",
            "--pbkdf-force-iterations",
            "4",
            "--pbkdf-memory",
            "32",
            "--key-file",
        ])
        .arg(&key)
        .arg(&image));
    let out = work.path("enc.raw");
    decrypt(&image, &key, &out).success();
    let decrypted = std::fs::read(&out).unwrap();
    assert!(decrypted[..plain.len()] == plain[..], "cryptsetup's LUKS2 payload decrypts to the plaintext");
    let doc = inspect(&image);
    assert_eq!(doc["version"], 2);
    assert_eq!(doc["data"]["sector_size"], 4096);
    assert_eq!(doc["keyslots"][0]["pbkdf"]["type"], "argon2id");
    assert_eq!(doc["header_copies"]["primary"], "ok");
    let (_, dump) = cryptsetup(&image, &["luksDump"]);
    let epoch = dump.lines().find_map(|l| l.strip_prefix("Epoch:")).unwrap().trim().to_owned();
    assert_eq!(doc["epoch"].to_string(), epoch);

    // LUKS1 made by cryptsetup, payload written by QEMU into it (docs/formats.md), read back by us.
    let l1 = work.path("l1.img");
    std::fs::File::create(&l1).unwrap().set_len(4 << 20).unwrap();
    run(Command::new("cryptsetup")
        .args(["luksFormat", "--type", "luks1", "--batch-mode", "--pbkdf-force-iterations", "1000", "--key-file"])
        .arg(&key)
        .arg(&l1));
    let raw = work.write("src.raw", pattern(2 << 20, 5));
    run(Command::new("qemu-img")
        .args(["convert", "-n", "-f", "raw", "--object"])
        .arg(format!("secret,id=s0,file={}", key.display()))
        .arg("--target-image-opts")
        .arg(&raw)
        .arg(format!("driver=luks,key-secret=s0,file.filename={}", l1.display())));
    let out = work.path("l1.raw");
    decrypt(&l1, &key, &out).success();
    assert!(std::fs::read(&out).unwrap() == std::fs::read(&raw).unwrap());
    let doc = inspect(&l1);
    assert_eq!(doc["version"], 1);
    assert_eq!(doc["data"]["offset"], 4096 * 512);
    assert_eq!(doc["keyslots"][0]["pbkdf"]["iterations"], 1000);
}

#[test]
fn we_read_qemu_images_created_and_converted() {
    tools();
    let work = Scratch::new();
    let pass = work.write("pass.txt", b"qemu pass");
    let raw = work.write("src.raw", pattern(3 << 20, 11));
    let converted = work.path("q2.img");
    run(Command::new("qemu-img")
        .args(["convert", "-f", "raw", "-O", "luks", "--object"])
        .arg(format!("secret,id=s0,file={}", pass.display()))
        .args(["-o", "key-secret=s0,iter-time=10"])
        .arg(&raw)
        .arg(&converted));
    let out = work.path("q2.raw");
    decrypt(&converted, &pass, &out).success();
    assert!(std::fs::read(&out).unwrap() == std::fs::read(&raw).unwrap());
    let doc = inspect(&converted);
    assert_eq!(doc["version"], 1);
    assert_eq!(doc["data"]["offset"], 2068480, "QEMU's layout: payload at 4040 sectors");

    let created = work.path("q1.img");
    run(Command::new("qemu-img")
        .args(["create", "-f", "luks", "--object"])
        .arg(format!("secret,id=s0,file={}", pass.display()))
        .args(["-o", "key-secret=s0,iter-time=10"])
        .arg(&created)
        .arg("1M"));
    let out = work.path("q1.raw");
    decrypt(&created, &pass, &out).success();
    assert_eq!(std::fs::metadata(&out).unwrap().len(), 1 << 20);
}

#[test]
fn damaged_headers_and_unsupported_volumes_fail_with_documented_codes() {
    tools();
    let work = Scratch::new();
    let key = work.write("key.bin", b"k");
    let image = work.path("v.img");
    luks_format(&image, &key, &[&["--size", "1M"][..], CHEAP_PBKDF2].concat());
    let out = work.path("out.raw");

    // Primary corrupt, secondary good: still opens, and says so.
    let mut bytes = std::fs::read(&image).unwrap();
    bytes[4096 + 20] ^= 0x55;
    let primary_bad = work.write("primary-bad.img", &bytes);
    decrypt(&primary_bad, &key, &out).success().stderr(predicates::str::contains("primary LUKS2 header is unusable"));
    assert!(inspect(&primary_bad)["header_copies"]["primary"].as_str().unwrap().starts_with("invalid"));
    // Unlike cryptsetup, reading never repairs: the damaged image is byte for byte what it was.
    assert!(std::fs::read(&primary_bad).unwrap() == bytes, "inspect or decrypt wrote to the target");

    // Both corrupt: 3, nothing written.
    std::fs::remove_file(&out).unwrap();
    bytes[16384 + 4096 + 20] ^= 0x55;
    let both_bad = work.write("both-bad.img", &bytes);
    decrypt(&both_bad, &key, &out).code(3).stderr(predicates::str::contains("both header copies"));
    assert!(!out.exists());

    // Truncated image: 3.
    let full = std::fs::read(&image).unwrap();
    let truncated = work.write("truncated.img", &full[..(8 << 20)]);
    decrypt(&truncated, &key, &out).code(3).stderr(predicates::str::contains("truncated"));
    cryptadm().args(["disk", "inspect"]).arg(&truncated).assert().code(3);

    // Not LUKS at all: 3.
    let plain = work.write("plain.img", vec![0u8; 65536]);
    cryptadm().args(["disk", "inspect"]).arg(&plain).assert().code(3).stderr(predicates::str::contains("not a LUKS"));

    // An unsupported cipher (cryptsetup's old LUKS1 default): 3, with a hint.
    let cbc = work.path("cbc.img");
    std::fs::File::create(&cbc).unwrap().set_len(4 << 20).unwrap();
    run(Command::new("cryptsetup")
        .args([
            "luksFormat",
            "--type",
            "luks1",
            "--batch-mode",
            "--cipher",
            "aes-cbc-essiv:sha256",
            "--key-size",
            "256",
        ])
        .args(["--pbkdf-force-iterations", "1000", "--key-file"])
        .arg(&key)
        .arg(&cbc));
    decrypt(&cbc, &key, &out).code(3).stderr(predicates::str::contains("aes-cbc-essiv:sha256"));
    assert!(!out.exists());
    assert_eq!(work.entries().iter().filter(|e| e.ends_with(".tmp")).count(), 0, "no temporary file left behind");
}

#[test]
fn luks_format_refuses_to_overwrite_without_force_and_writes_nothing_on_failure() {
    let work = Scratch::new();
    let key = work.write("key.bin", b"k");
    let image = work.path("v.img");
    luks_format(&image, &key, &[&["--size", "1M"][..], CHEAP_PBKDF2].concat());
    let before = std::fs::read(&image).unwrap();
    cryptadm()
        .args(["disk", "luks-format", "--key-file"])
        .arg(&key)
        .args(["--size", "1M"])
        .args(CHEAP_PBKDF2)
        .arg(&image)
        .assert()
        .code(3)
        .stderr(predicates::str::contains("holds a LUKS header").and(predicates::str::contains("--force")));
    assert!(std::fs::read(&image).unwrap() == before);
    let data = work.write("data.img", b"precious");
    cryptadm()
        .args(["disk", "luks-format", "--key-file"])
        .arg(&key)
        .args(["--size", "1M"])
        .args(CHEAP_PBKDF2)
        .arg(&data)
        .assert()
        .code(3)
        .stderr(predicates::str::contains("not empty"));
    assert_eq!(std::fs::read(&data).unwrap(), b"precious");
    // With --force the old header is replaced by a new volume.
    let new_key = work.write("new.bin", b"new");
    luks_format(&image, &new_key, &[&["--size", "1M", "--force"][..], CHEAP_PBKDF2].concat());
    let out = work.path("o.raw");
    decrypt(&image, &key, &out).code(16);
    decrypt(&image, &new_key, &out).success();
    // Bad parameters fail before anything exists.
    let missing = work.path("missing.img");
    cryptadm()
        .args(["disk", "luks-format", "--key-file"])
        .arg(&key)
        .args(["--size", "1M", "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "10"])
        .arg(&missing)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("at least 1000"));
    cryptadm().args(["disk", "luks-format", "--key-file"]).arg(&key).arg(&missing).assert().code(2);
    cryptadm()
        .args(["disk", "luks-format", "--cipher", "serpent-xts-plain64", "--key-file"])
        .arg(&key)
        .args(["--size", "1M"])
        .args(CHEAP_PBKDF2)
        .arg(&missing)
        .assert()
        .code(3);
    assert!(!missing.exists());
    assert!(work.entries().iter().all(|e| !e.ends_with(".tmp")), "{:?}", work.entries());
}

#[test]
fn the_kdf_benchmark_path_produces_a_volume_cryptsetup_opens() {
    tools();
    let work = Scratch::new();
    let key = work.write("key.bin", b"bench");
    let wrong = work.write("wrong", b"nope");
    // Not forced: argon2id costs are benchmarked (for a short target so the test stays quick).
    let image = work.path("b.img");
    luks_format(&image, &key, &["--size", "1M", "--iter-time", "100"]);
    let dump = cryptsetup_accepts(&image, &key, &wrong);
    assert!(dump.contains("PBKDF:      argon2id"), "{dump}");
    let doc = inspect(&image);
    let pbkdf = &doc["keyslots"][0]["pbkdf"];
    assert!(pbkdf["time"].as_u64().unwrap() >= 4);
    assert!(pbkdf["memory_kib"].as_u64().unwrap() <= 1 << 20);
    assert!(doc["digests"][0]["iterations"].as_u64().unwrap() >= 1000);
}
