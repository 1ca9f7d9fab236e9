//! `--key-manager barbican` and `--upload` of `disk luks-format` and `disk convert` against real Keystone,
//! Barbican and Glance (Debian 12's Zed packages, started once per test binary by `support_openstack`), checked
//! with the independent clients: `openstack secret get --payload` gives the passphrase that opens the image
//! (qemu-img for qcow2, cryptsetup for raw LUKS), `openstack image save` gives back the bytes uploaded.

use crate::support::{Scratch, require_tool};
use crate::support_openstack::{OpenStack, openstack, unique};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

const CHEAP: &[&str] = &["--pbkdf-force-iterations", "1000"];

fn tools() {
    require_tool("qemu-img", "apt-get install -y -t bookworm-backports qemu-utils");
    require_tool("cryptsetup", "apt-get install -y cryptsetup-bin");
}

/// The payload of secret `uuid` as `openstack secret get --file -t application/octet-stream` writes it.
fn payload(os: &OpenStack, uuid: &str) -> Vec<u8> {
    let href = format!("{}/v1/secrets/{uuid}", os.barbican);
    let scratch = Scratch::new();
    let file = scratch.path("payload");
    os.run(&["secret", "get", &href, "--file", file.to_str().unwrap(), "-t", "application/octet-stream"]);
    std::fs::read(&file).unwrap()
}

/// The guest bytes of a qcow2+LUKS `image` as qemu-img reads them with passphrase file `pass`.
fn qemu_read_qcow2(image: &Path, pass: &Path, out: &Path) -> Vec<u8> {
    let output = Command::new("qemu-img")
        .args(["convert", "--object", &format!("secret,id=sec0,file={}", pass.display()), "--image-opts"])
        .arg(format!("driver=qcow2,file.filename={},encrypt.key-secret=sec0", image.display()))
        .args(["-O", "raw"])
        .arg(out)
        .output()
        .unwrap();
    assert!(output.status.success(), "qemu-img: {}", String::from_utf8_lossy(&output.stderr));
    std::fs::read(out).unwrap()
}

/// cryptsetup opens raw LUKS `image` with the passphrase in `pass`.
fn cryptsetup_opens(image: &Path, pass: &Path) -> bool {
    Command::new("cryptsetup")
        .args(["open", "--test-passphrase", "--key-file"])
        .arg(pass)
        .arg(image)
        .status()
        .unwrap()
        .success()
}

fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| ((i / 512) as u8).wrapping_mul(31).wrapping_add(i as u8)).collect()
}

/// The image's record, through the openstack client.
fn image_show(os: &OpenStack, id: &str) -> Value {
    os.json(&["image", "show", id])
}

fn properties(image: &Value) -> &Value {
    &image["properties"]
}

/// `openstack image save` of `id` into `path`.
fn image_save(os: &OpenStack, id: &str, path: &Path) -> Vec<u8> {
    os.run(&["image", "save", "--file", path.to_str().unwrap(), id]);
    std::fs::read(path).unwrap()
}

fn stdout_line(output: &std::process::Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap().trim().to_owned()
}

fn secret_uuid_of(image: &Value) -> String {
    properties(image)["os_encrypt_key_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no os_encrypt_key_id: {image}"))
        .to_owned()
}

/// `new` into qcow2: a passphrase secret in Barbican whose payload opens the image in qemu-img, the image in
/// Glance with os_encrypt_key_id = that secret, the consumer registered, and the saved bytes the uploaded ones.
#[test]
fn luks_format_qcow2_new_secret_uploaded_opens_in_qemu() {
    tools();
    let os = openstack();
    let work = Scratch::new();
    let raw = work.write("disk.raw", pattern(3 << 20));
    let image = work.path("disk.qcow2");
    let name = unique("new-qcow2");
    let started = std::time::Instant::now();
    let output = os
        .cryptadm()
        .args(["disk", "luks-format", "--format", "qcow2", "--key-manager", "barbican", "--upload", &name])
        .args(CHEAP)
        .arg("--from")
        .arg(&raw)
        .arg(&image)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    #[allow(clippy::print_stderr)] // the time, for the CI budget
    {
        eprintln!("luks-format + Barbican + Glance upload: {:.1} s", started.elapsed().as_secs_f64());
    }
    let id = stdout_line(&output);
    let shown = image_show(os, &id);
    assert_eq!(shown["status"], "active", "{shown}");
    assert_eq!(shown["disk_format"], "qcow2");
    assert_eq!(shown["container_format"], "bare");
    assert_eq!(shown["name"], name.as_str());
    let props = properties(&shown);
    assert_eq!(props["os_encrypt_format"], "LUKSv1", "{props}");
    assert_eq!(props["os_decrypt_size"], (3 << 20).to_string().as_str());
    let uuid = secret_uuid_of(&shown);

    let secret = os.get("key-manager", &format!("/v1/secrets/{uuid}"));
    assert_eq!(secret["secret_type"], "passphrase", "{secret}");
    assert_eq!(secret["content_types"]["default"], "application/octet-stream", "{secret}");
    assert_eq!(secret["name"], format!("{name}-key").as_str());
    let passphrase = payload(os, &uuid);
    assert_eq!(passphrase.len(), 88, "Nova's passphrase: base64 of 64 bytes");
    let pass = work.write("pass", &passphrase);
    assert_eq!(qemu_read_qcow2(&image, &pass, &work.path("guest.raw")), pattern(3 << 20));

    let consumers = os.consumers(&uuid);
    assert_eq!(consumers.len(), 1, "{consumers:?}");
    assert_eq!(consumers[0]["service"], "glance");
    assert_eq!(consumers[0]["resource_type"], "image");
    assert_eq!(consumers[0]["resource_id"], id.as_str());

    let saved = image_save(os, &id, &work.path("saved.qcow2"));
    assert_eq!(saved, std::fs::read(&image).unwrap(), "Glance gives back the bytes uploaded");
    assert_eq!(shown["checksum"].as_str().map(str::len), Some(32));
}

/// `new` into raw LUKS with a symmetric secret: 32 key bytes stored as an AES key, the passphrase their lowercase
/// hex as os-brick derives it, which cryptsetup accepts.
#[test]
fn luks_format_raw_new_symmetric_secret_opens_in_cryptsetup() {
    tools();
    let os = openstack();
    let work = Scratch::new();
    let image = work.path("disk.luks");
    let name = unique("new-raw-sym");
    let output = os
        .cryptadm()
        .args(["disk", "luks-format", "--key-manager", "barbican", "--secret-type", "symmetric", "--upload", &name])
        .args(["--size", "4M"])
        .args(CHEAP)
        .arg(&image)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let id = stdout_line(&output);
    let shown = image_show(os, &id);
    assert_eq!(shown["disk_format"], "raw");
    let uuid = secret_uuid_of(&shown);
    assert_eq!(properties(&shown)["cinder_encryption_key_id"], uuid.as_str());
    let secret = os.get("key-manager", &format!("/v1/secrets/{uuid}"));
    assert_eq!(secret["secret_type"], "symmetric", "{secret}");
    assert_eq!(secret["algorithm"], "aes");
    assert_eq!(secret["bit_length"], 256);
    let key = payload(os, &uuid);
    assert_eq!(key.len(), 32);
    let pass = work.write("pass", hex(&key));
    assert!(cryptsetup_opens(&image, &pass), "cryptsetup opens with the hex of the key");
    assert!(!cryptsetup_opens(&image, &work.write("raw-key", &key)), "not with the raw key bytes");
    assert_eq!(image_save(os, &id, &work.path("saved")), std::fs::read(&image).unwrap());
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
