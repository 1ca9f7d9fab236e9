//! `cryptadm image stream-decrypt` run as containerd runs it (payload on fd 3, layer on stdin), without
//! containerd: the output, the one-line errors and their exit statuses, the keys-directory rules.

use crate::image::{Keys, TWO_LAYERS, fixture, layers, oci};
use crate::support::{Scratch, cryptadm};
use serde_json::{Value, json};
use sha2::Digest;
use std::path::Path;
use std::process::{Command, Output};

/// The payload containerd writes: a protobuf Any (type URL, then imgcrypt's Payload as JSON).
fn payload(descriptor: &Value) -> Vec<u8> {
    let value = json!({"DecryptConfig": {"Parameters": null}, "Descriptor": descriptor}).to_string();
    let mut out = Vec::new();
    for (tag, bytes) in [(0x0au8, b"io.containerd.ocicrypt.v1.Payload".as_slice()), (0x12, value.as_bytes())] {
        out.push(tag);
        let mut n = bytes.len();
        while n >= 0x80 {
            out.push((n as u8) | 0x80);
            n >>= 7;
        }
        out.push(n as u8);
        out.extend_from_slice(bytes);
    }
    out
}

/// Runs stream-decrypt with `payload` on fd 3 (none: fd 3 closed) and `blob` on stdin.
fn stream(keys: &Path, payload: Option<&Path>, blob: &Path, media: &str) -> Output {
    let bin = assert_cmd::cargo::cargo_bin("cryptadm");
    let fd3 = payload.map(|p| format!("3<'{}'", p.display())).unwrap_or_else(|| "3<&-".into());
    Command::new("sh")
        .arg("-c")
        .arg(format!(
            "exec '{}' image stream-decrypt --decryption-keys-path '{}' {fd3} <'{}'",
            bin.display(),
            keys.display(),
            blob.display()
        ))
        .env("STREAM_PROCESSOR_MEDIATYPE", media)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn one_line(output: &Output) -> String {
    let stderr = String::from_utf8(output.stderr.clone()).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    stderr
}

#[test]
fn stream_decrypt_as_containerd_runs_it() {
    let keys = Keys::new();
    let work = Scratch::new();
    let (private, public) = keys.rsa("node", 2048);
    let src = work.path("src");
    fixture(&src, TWO_LAYERS);
    let enc = work.path("enc");
    cryptadm()
        .args(["image", "encrypt", "--recipient", &format!("jwe:{public}")])
        .arg(oci(&src))
        .arg(oci(&enc))
        .assert()
        .success();
    let plain = &layers(&src)[0]["layers"][0];
    let layer = &layers(&enc)[0]["layers"][0];
    let media = layer["mediaType"].as_str().unwrap();
    let blob = enc.join("blobs/sha256").join(&layer["digest"].as_str().unwrap()[7..]);
    let payload_file = work.write("payload.bin", payload(layer));
    let keys_dir = work.path("keys");
    std::fs::create_dir_all(keys_dir.join("image-keys")).unwrap();
    std::fs::copy(&private, keys_dir.join("image-keys/node.pem")).unwrap();
    std::fs::write(keys_dir.join("README"), "not a key").unwrap();

    // The decrypted layer is the source layer, byte for byte; a stray file does not matter.
    let output = stream(&keys_dir, Some(&payload_file), &blob, media);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let digest = format!("sha256:{}", hex::encode(sha2::Sha256::digest(&output.stdout)));
    assert_eq!(digest, plain["digest"].as_str().unwrap());

    // No payload on fd 3: exit 3, one line that says what to configure.
    let output = stream(&keys_dir, None, &blob, media);
    assert_eq!(output.status.code(), Some(3));
    assert!(one_line(&output).contains("no payload on file descriptor 3"));

    // A tampered layer: exit 15, and the last 256 KiB (here: everything) never written.
    let mut tampered = std::fs::read(&blob).unwrap();
    tampered[0] ^= 1;
    let tampered_blob = work.write("tampered", &tampered);
    let output = stream(&keys_dir, Some(&payload_file), &tampered_blob, media);
    assert_eq!(output.status.code(), Some(15));
    assert!(one_line(&output).contains("HMAC does not match"));
    assert!(output.stdout.is_empty());

    // No key that fits: exit 16, the skipped file named.
    let other_dir = work.path("other");
    std::fs::create_dir_all(other_dir.join("s")).unwrap();
    let (stranger, _) = keys.rsa("stranger", 2048);
    std::fs::copy(&stranger, other_dir.join("s/key.pem")).unwrap();
    std::fs::write(other_dir.join("s/notes.txt"), "hello").unwrap();
    let output = stream(&other_dir, Some(&payload_file), &blob, media);
    assert_eq!(output.status.code(), Some(16));
    let line = one_line(&output);
    assert!(line.contains("none of the given keys unwraps") && line.contains("notes.txt"), "{line}");
    assert!(!line.contains("BEGIN"), "{line}");

    // A symlink in the keys directory: refused, as ctd-decoder and CRI-O do.
    std::os::unix::fs::symlink(keys_dir.join("image-keys/node.pem"), keys_dir.join("link.pem")).unwrap();
    let output = stream(&keys_dir, Some(&payload_file), &blob, media);
    assert_eq!(output.status.code(), Some(3));
    assert!(one_line(&output).contains("is a symbolic link"));

    // A missing keys directory: exit 5.
    let output = stream(&work.path("nope"), Some(&payload_file), &blob, media);
    assert_eq!(output.status.code(), Some(5));
    one_line(&output);
}
