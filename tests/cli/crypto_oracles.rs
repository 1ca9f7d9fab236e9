//! cryptadm's hand-built primitives against independent implementations: Argon2 against argon2-cffi (libargon2,
//! what cryptsetup links) and the sector-parallel AES-XTS against Python `cryptography` (OpenSSL's XTS). Both
//! run Python, so they live here rather than beside the code (CI installs both packages).

use cryptadm::crypto::argon2::{self, Argon2Variant};
use cryptadm::crypto::xts::XtsPlain64;
use std::io::Write;
use std::process::{Command, Stdio};

fn random(len: usize) -> Vec<u8> {
    let mut bytes = vec![0u8; len];
    getrandom::fill(&mut bytes).unwrap();
    bytes
}

/// A random XTS key whose halves differ (equal halves are refused).
fn random_key(len: usize) -> Vec<u8> {
    loop {
        let key = random(len);
        if key[..len / 2] != key[len / 2..] {
            return key;
        }
    }
}

/// argon2-cffi's `hash_secret_raw` (libargon2, what cryptsetup links) on random LUKS-shaped inputs: 32-byte
/// salt, 64-byte output, several lanes, memory not a multiple of 4 × lanes, passphrases with any bytes.
#[test]
fn matches_argon2_cffi() {
    let cases = [
        (Argon2Variant::Argon2id, 4, 1030, 4, 64),
        (Argon2Variant::Argon2i, 4, 2048, 2, 32),
        (Argon2Variant::Argon2id, 1, 64, 3, 64),
        (Argon2Variant::Argon2i, 2, 333, 1, 16),
    ];
    for (variant, time, memory_kib, parallel, out_len) in cases {
        let mut passphrase = vec![0u8; 1 + (memory_kib as usize % 97)];
        let mut salt = [0u8; 32];
        getrandom::fill(&mut passphrase).unwrap();
        getrandom::fill(&mut salt).unwrap();
        let mut ours = vec![0u8; out_len];
        argon2::derive(variant, &passphrase, &salt, time, memory_kib, parallel, &mut ours).unwrap();
        let kind = if variant == Argon2Variant::Argon2i { "I" } else { "ID" };
        let script = format!(
            "import sys\nfrom argon2.low_level import hash_secret_raw, Type\n\
             sys.stdout.write(hash_secret_raw(bytes.fromhex('{}'), bytes.fromhex('{}'), {time}, {memory_kib}, \
             {parallel}, {out_len}, Type.{kind}, 0x13).hex())",
            hex::encode(&passphrase),
            hex::encode(salt)
        );
        let out = Command::new("python3").args(["-c", &script]).output().expect("python3 runs");
        assert!(out.status.success(), "argon2-cffi failed: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(
            String::from_utf8(out.stdout).unwrap(),
            hex::encode(&ours),
            "{variant:?} t={time} m={memory_kib} p={parallel}"
        );
    }
}

/// Python `cryptography`'s XTS (OpenSSL's EVP XTS underneath; `openssl enc` refuses XTS) over whole units,
/// unit i with tweak le64(first_iv + i * unit_size / 512) || 0^8: the independent reference.
fn reference_units(key: &[u8], data: &[u8], unit_size: usize, first_iv: u64, encrypt: bool) -> Vec<u8> {
    const SCRIPT: &str = r#"
import sys
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
key, unit, iv, direction = bytes.fromhex(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
data, out = sys.stdin.buffer.read(), bytearray()
for i in range(0, len(data), unit):
    tweak = ((iv + i // 512) % 2**64).to_bytes(8, "little") + bytes(8)
    cipher = Cipher(algorithms.AES(key), modes.XTS(tweak))
    op = cipher.encryptor() if direction == "encrypt" else cipher.decryptor()
    out += op.update(data[i:i + unit]) + op.finalize()
sys.stdout.buffer.write(out)
"#;
    let mut child = Command::new("python3")
        .args(["-c", SCRIPT, &hex::encode(key), &unit_size.to_string(), &first_iv.to_string()])
        .arg(if encrypt { "encrypt" } else { "decrypt" })
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 with the cryptography package (CI installs it)");
    let mut stdin = child.stdin.take().unwrap();
    let input = data.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success(), "the Python XTS reference failed");
    assert_eq!(out.stdout.len(), data.len());
    out.stdout
}

/// Random keys and data, both directions, 512- and 4096-byte units (the latter with the IV stepping by 8,
/// as LUKS2 counts IVs in 512-byte sectors), AES-128 and AES-256, IVs near 2^32 and 2^64.
#[test]
fn matches_python_cryptography_both_directions() {
    for (key_len, unit_size, units, first_iv) in [
        (64usize, 4096usize, 3usize, 8u64 * 1000),
        (64, 512, 4, 0),
        (64, 1024, 2, u64::from(u32::MAX) - 1),
        (32, 4096, 2, u64::MAX - 7),
        (32, 512, 3, 12345),
    ] {
        let key = random_key(key_len);
        let xts = XtsPlain64::new(&key).unwrap();
        let plain = random(unit_size * units);
        let mut ours = plain.clone();
        xts.encrypt_units(&mut ours, unit_size, first_iv);
        let reference = reference_units(&key, &plain, unit_size, first_iv, true);
        assert_eq!(ours, reference, "encrypt: key {key_len} unit {unit_size} iv {first_iv}");
        // And reference-encrypted data decrypts with ours (other random data, so nothing is shared).
        let plain = random(unit_size * units);
        let mut theirs = reference_units(&key, &plain, unit_size, first_iv, true);
        xts.decrypt_units(&mut theirs, unit_size, first_iv);
        assert_eq!(theirs, plain, "decrypt: key {key_len} unit {unit_size} iv {first_iv}");
    }
}
