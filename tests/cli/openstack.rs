//! `--key-manager barbican` and `--upload` of `disk luks-format` and `disk convert` against real Keystone,
//! Barbican and Glance (Debian 12's Zed packages, started once per test binary by `support_openstack`), checked
//! with the independent clients: `openstack secret get --payload` gives the passphrase that opens the image
//! (qemu-img for qcow2, cryptsetup for raw LUKS), `openstack image save` gives back the bytes uploaded.

use crate::support::{Scratch, require_tool};
use crate::support_openstack::{FaultProxy, OpenStack, openstack, unique};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

const CHEAP: &[&str] = &["--pbkdf-force-iterations", "1000"];

/// A new 1 MiB qcow2+LUKS image whose secret is kept in Barbican (the target follows).
const SMALL_QCOW2: &[&str] = &["disk", "luks-format", "--format", "qcow2", "--size", "1M", "--key-manager", "barbican"];

/// A URL on 127.0.0.1 where nothing listens.
fn dead_url() -> String {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    format!("http://127.0.0.1:{closed}")
}

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

/// The first line of standard output: the image id with --upload (the secret's id follows it).
fn stdout_line(output: &std::process::Output) -> String {
    stdout_lines(output).first().cloned().unwrap_or_default()
}

fn stdout_lines(output: &std::process::Output) -> Vec<String> {
    String::from_utf8(output.stdout.clone()).unwrap().lines().map(str::to_owned).collect()
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
    assert_eq!(stdout_lines(&output), [id.clone(), uuid.clone()], "the image id, then the secret's");

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

/// Stores a secret with the openstack client (as an operator would) and returns its UUID.
fn secret_store(os: &OpenStack, args: &[&str]) -> String {
    let mut all = vec!["secret", "store", "-f", "value", "-c", "Secret href"];
    all.extend(args);
    let href = String::from_utf8(os.run(&all)).unwrap();
    href.trim().rsplit('/').next().unwrap().to_owned()
}

/// `existing` in luks-format: a passphrase secret the openstack client stored (text/plain, its defaults) gives
/// the passphrase verbatim, by href; the image is its consumer and opens in qemu-img with that passphrase.
#[test]
fn luks_format_existing_passphrase_secret_by_href() {
    tools();
    let os = openstack();
    let work = Scratch::new();
    let name = unique("existing-pass");
    let passphrase = "an operator's passphrase 42";
    let uuid = secret_store(os, &["--name", &name, "--secret-type", "passphrase", "--payload", passphrase]);
    let href = format!("{}/v1/secrets/{uuid}", os.barbican);
    let image = work.path("disk.qcow2");
    let output = os
        .cryptadm()
        .args(SMALL_QCOW2)
        .args(["--secret", &href, "--upload", &name])
        .args(CHEAP)
        .arg(&image)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let id = stdout_line(&output);
    assert_eq!(secret_uuid_of(&image_show(os, &id)), uuid);
    assert_eq!(os.consumers(&uuid).len(), 1);
    let pass = work.write("pass", passphrase);
    assert_eq!(qemu_read_qcow2(&image, &pass, &work.path("guest")), vec![0u8; 1 << 20]);
    assert_eq!(os.secrets_named(&format!("{name}-key")).len(), 0, "no secret of our own was made");

    // The same secret's href on another host (or port) would receive the Keystone token: refused, nothing sent.
    let elsewhere = href.replacen("://", "://elsewhere.invalid.", 1);
    let other = work.path("other.qcow2");
    let refused =
        os.cryptadm().args(SMALL_QCOW2).args(["--secret", &elsewhere]).args(CHEAP).arg(&other).output().unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("not on this cloud's Barbican"), "{stderr}");
    assert!(!other.exists());
}

/// `existing` in convert with a symmetric secret stored from a key file: the passphrase is the key's hex
/// (os-brick), cryptsetup opens the raw LUKS output with it, and the upload is the secret's consumer.
#[test]
fn convert_existing_symmetric_secret_is_hexlified() {
    tools();
    let os = openstack();
    let work = Scratch::new();
    let name = unique("existing-sym");
    let key: Vec<u8> = (0u8..32).map(|i| i.wrapping_mul(37)).collect();
    let key_file = work.write("key.bin", &key);
    let uuid = {
        let mut all = vec!["secret", "store", "-f", "value", "-c", "Secret href", "--name", &name];
        let key_path = key_file.to_str().unwrap();
        all.extend(["--secret-type", "symmetric", "--algorithm", "aes", "--bit-length", "256", "--mode", "xts"]);
        all.extend(["--file", key_path]);
        let href = String::from_utf8(os.run(&all)).unwrap();
        href.trim().rsplit('/').next().unwrap().to_owned()
    };
    let source = work.write("plain.raw", pattern(1 << 20));
    let out = work.path("out.luks");
    let output = os
        .cryptadm()
        .args(["disk", "convert", "--encryption-key", "existing", "--format", "raw", "--key-manager", "barbican"])
        .args(["--secret", &uuid, "--upload", &name])
        .args(CHEAP)
        .arg(&source)
        .arg(&out)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let id = stdout_line(&output);
    let shown = image_show(os, &id);
    assert_eq!(secret_uuid_of(&shown), uuid);
    assert_eq!(properties(&shown)["cinder_encryption_key_id"], uuid.as_str());
    assert!(cryptsetup_opens(&out, &work.write("hex", hex(&key))), "the hex of the key opens it");
    assert_eq!(os.consumers(&uuid).len(), 1);
}

/// `shelve` from an uploaded image (Nova's shelve): the image is saved back from Glance, converted to raw LUKS
/// with the source's secret named by its os_encrypt_key_id, uploaded again; the new image names the same secret,
/// is a second consumer, and opens with the same passphrase. `same` (Nova's snapshot) copies the secret instead:
/// a new secret castellan reads with the same bytes, named by the new image alone.
#[test]
fn convert_shelve_shares_the_secret_and_same_copies_it() {
    tools();
    let os = openstack();
    let work = Scratch::new();
    let first = unique("same-src");
    let image = work.path("src.qcow2");
    let output = os
        .cryptadm()
        .args(["disk", "luks-format", "--format", "qcow2", "--key-manager", "barbican", "--upload", &first])
        .args(["--size", "2M"])
        .args(CHEAP)
        .arg(&image)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let first_id = stdout_line(&output);
    let uuid = secret_uuid_of(&image_show(os, &first_id));
    let saved = work.path("saved.qcow2");
    image_save(os, &first_id, &saved);

    let second = unique("same-dst");
    let out = work.path("out.luks");
    let output = os
        .cryptadm()
        .args(["disk", "convert", "--encryption-key", "shelve", "--format", "raw", "--key-manager", "barbican"])
        .args(["--source-secret", &uuid, "--upload", &second])
        .args(CHEAP)
        .arg(&saved)
        .arg(&out)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let second_id = stdout_line(&output);
    assert_eq!(secret_uuid_of(&image_show(os, &second_id)), uuid);
    let ids: Vec<String> = os.consumers(&uuid).iter().map(|c| c["resource_id"].as_str().unwrap().to_owned()).collect();
    assert!(ids.contains(&first_id) && ids.contains(&second_id) && ids.len() == 2, "{ids:?}");
    let pass = work.write("pass", payload(os, &uuid));
    assert!(cryptsetup_opens(&out, &pass));
    assert_eq!(image_save(os, &second_id, &work.path("saved2")), std::fs::read(&out).unwrap());

    // Nova's snapshot: a copy, with the deletion policy allowed (the copy is the run's own).
    let third = unique("same-copy");
    let copied = work.path("copy.luks");
    let output = os
        .cryptadm()
        .args(["disk", "convert", "--encryption-key", "same", "--format", "raw", "--key-manager", "barbican"])
        .args(["--source-secret", &uuid, "--delete-key-with-image", "--upload", &third])
        .args(CHEAP)
        .arg(&saved)
        .arg(&copied)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let [third_id, copy]: [String; 2] = stdout_lines(&output).try_into().unwrap();
    assert_ne!(copy, uuid, "a secret of its own");
    assert_eq!(secret_uuid_of(&image_show(os, &third_id)), copy);
    let (class, bytes) = os.castellan(&copy);
    assert_eq!(class, "Passphrase");
    assert_eq!(bytes, payload(os, &uuid), "the copy holds the source's passphrase");
    assert!(cryptsetup_opens(&copied, &pass));
    assert_eq!(os.consumers(&copy).len(), 1);
    assert_eq!(os.consumers(&uuid).len(), 2, "the source's secret is untouched");
}

/// Runs `luks-format --key-manager barbican --upload NAME` of a small qcow2 with extra environment; returns
/// (exit code, stderr).
fn format_upload(os: &OpenStack, work: &Scratch, name: &str, env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = os.cryptadm();
    cmd.args(SMALL_QCOW2).args(["--upload", name]).args(CHEAP).arg(work.path(&format!("{name}.qcow2")));
    for (k, v) in env {
        cmd.env(k, v);
    }
    let output = cmd.output().unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

/// Nothing of a failed run is left in the cloud: no secret `NAME-key`, no image `NAME`.
fn nothing_left(os: &OpenStack, name: &str) {
    assert_eq!(os.secrets_named(&format!("{name}-key")), Vec::<Value>::new(), "an orphan secret");
    assert_eq!(os.images_named(name), Vec::<Value>::new(), "an image left behind");
}

/// Barbican unreachable before anything is stored: exit 1 naming Barbican, no image file, nothing in the
/// cloud.
#[test]
fn barbican_down_before_the_secret_leaves_nothing() {
    let os = openstack();
    let work = Scratch::new();
    let name = unique("km-down");
    let url = dead_url();
    let (code, stderr, _) = format_upload(os, &work, &name, &[("OS_KEY_MANAGER_ENDPOINT_OVERRIDE", &url)]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("Barbican at http://127.0.0.1") && stderr.contains("unavailable"), "{stderr}");
    assert!(!work.path(&format!("{name}.qcow2")).exists());
    nothing_left(os, &name);
}

/// Barbican failing after the secret was stored (the consumer cannot be registered): the image and the secret
/// are deleted again; a re-run succeeds.
#[test]
fn barbican_failing_after_the_secret_undoes_image_and_secret() {
    let os = openstack();
    let work = Scratch::new();
    let name = unique("km-fails");
    let proxy = FaultProxy::start(&os.barbican, "fail-consumers");
    let (code, stderr, _) = format_upload(os, &work, &name, &[("OS_KEY_MANAGER_ENDPOINT_OVERRIDE", &proxy.url)]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("registering consumer glance image"), "{stderr}");
    assert!(proxy.log().contains("DELETE /v1/secrets/"), "{}", proxy.log());
    nothing_left(os, &name);
    assert!(!work.path(&format!("{name}.qcow2")).exists(), "the image whose secret was deleted: {stderr}");
    let (code, stderr, _) = format_upload(os, &work, &name, &[]);
    assert_eq!(code, 0, "the re-run: {stderr}");
    assert_eq!(os.images_named(&name).len(), 1);
}

/// Glance refusing the data (413): no image and no secret left, no local image, exit 1 with Glance's words.
#[test]
fn glance_refusing_the_upload_undoes_image_and_secret() {
    let os = openstack();
    let work = Scratch::new();
    let name = unique("glance-refuses");
    let proxy = FaultProxy::start(&os.glance, "refuse-upload");
    let (code, stderr, _) = format_upload(os, &work, &name, &[("OS_IMAGE_ENDPOINT_OVERRIDE", &proxy.url)]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("uploading") && stderr.contains("413"), "{stderr}");
    nothing_left(os, &name);
    // Issue 41: the image is renamed into place only after its upload, so a refused upload never puts it there.
    assert!(!work.path(&format!("{name}.qcow2")).exists(), "the image whose upload was refused: {stderr}");
    no_partials(&work);
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !done() {
        assert!(std::time::Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// A run stopped during its upload: SIGTERM deletes the image and the secret before the process dies; kill -9
/// cannot, and the cleanup command the run printed removes both.
#[test]
fn interrupted_uploads_sigterm_cleans_up_and_kill_9_prints_the_cleanup() {
    let os = openstack();
    let work = Scratch::new();
    let proxy = FaultProxy::start(&os.glance, "stall-upload");
    for signal in ["TERM", "INT", "KILL"] {
        let name = unique(&format!("killed-{signal}"));
        let stderr_path = work.path(&format!("{name}.err"));
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("cryptadm"))
            .args(SMALL_QCOW2)
            .args(["--upload", &name])
            .args(CHEAP)
            .arg(work.path(&format!("{name}.qcow2")))
            .env("OS_CLIENT_CONFIG_FILE", os.clouds_yaml())
            .env("OS_CLOUD", "test")
            .env("OS_IMAGE_ENDPOINT_OVERRIDE", &proxy.url)
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(&stderr_path).unwrap())
            .spawn()
            .unwrap();
        // Stalled in its upload: the proxy got the PUT of this run's image, and the run said what it created.
        wait_for("the upload to start", || {
            let created = std::fs::read_to_string(&stderr_path).unwrap_or_default();
            let id = created.lines().find_map(|l| l.strip_prefix("created image ")?.split(';').next());
            id.is_some_and(|id| proxy.log().lines().any(|l| l.starts_with(&format!("PUT /v2/images/{id}/file"))))
        });
        let status =
            std::process::Command::new("kill").args([&format!("-{signal}"), &child.id().to_string()]).status().unwrap();
        assert!(status.success());
        let exit = child.wait().unwrap();
        assert!(!exit.success());
        let stderr = std::fs::read_to_string(&stderr_path).unwrap();
        if signal != "KILL" {
            nothing_left(os, &name);
            assert!(!work.path(&format!("{name}.qcow2")).exists(), "{signal}: the image whose secret was deleted");
            continue;
        }
        assert_eq!(os.images_named(&name).len(), 1, "kill -9 leaves the queued image");
        assert_eq!(os.secrets_named(&format!("{name}-key")).len(), 1, "and the secret");
        let line = stderr.lines().find(|l| l.contains("clean up with: ")).unwrap_or_else(|| panic!("{stderr}"));
        let commands = line.split("clean up with: ").nth(1).unwrap();
        for command in commands.split(" && ") {
            let words: Vec<&str> = command.split_whitespace().collect();
            assert_eq!(words[0], "openstack", "{command}");
            os.run(&words[1..]);
        }
        nothing_left(os, &name);
    }
}

/// A wrong password is 16 (from the OS_* variables alone, no clouds.yaml), an unknown secret 5, a region
/// without the service 3 naming it.
#[test]
fn wrong_password_unknown_secret_missing_endpoint() {
    let os = openstack();
    let work = Scratch::new();
    let image = work.path("x.qcow2");
    let env_only = |password: &str| {
        let mut cmd = os.cryptadm();
        cmd.env_remove("OS_CLOUD")
            .env_remove("OS_CLIENT_CONFIG_FILE")
            .env("HOME", work.path(""))
            .env("OS_AUTH_URL", &os.keystone)
            .env("OS_USERNAME", "admin")
            .env("OS_PASSWORD", password)
            .env("OS_PROJECT_NAME", "admin")
            .env("OS_USER_DOMAIN_NAME", "Default")
            .env("OS_PROJECT_DOMAIN_NAME", "Default")
            .args(SMALL_QCOW2)
            .args(CHEAP);
        cmd
    };
    let output = env_only("not the password").arg(&image).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(16), "{stderr}");
    assert!(stderr.contains("logging in to Keystone: permission denied"), "{stderr}");
    assert!(!stderr.contains("not the password"));
    assert!(!image.exists());

    let unknown = "0b9c3a6e-1111-4222-8333-444455556666";
    let output = env_only(&os.admin_password).args(["--secret", unknown]).arg(&image).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(5), "{stderr}");
    assert!(stderr.contains(unknown) && stderr.contains("not found"), "{stderr}");

    let output = os
        .cryptadm()
        .env("OS_REGION_NAME", "Nowhere")
        .args(["disk", "luks-format", "--format", "qcow2"])
        .args(["--size", "1M", "--key-manager", "barbican"])
        .args(CHEAP)
        .arg(&image)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("Barbican") && stderr.contains("key-manager") && stderr.contains("Nowhere"), "{stderr}");
    assert!(!image.exists());
}

/// A token the service refuses mid-run (revoked or expired: 401) is renewed with a new login and the request
/// sent again; a pre-issued OS_TOKEN works without a password.
#[test]
fn refused_token_is_renewed_and_a_preissued_token_works() {
    let os = openstack();
    let work = Scratch::new();
    let name = unique("renewed");
    let proxy = FaultProxy::start(&os.barbican, "unauthorized-once");
    let (code, stderr, _) = format_upload(os, &work, &name, &[("OS_KEY_MANAGER_ENDPOINT_OVERRIDE", &proxy.url)]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(os.images_named(&name).len(), 1);

    let token = os.token();
    let name = unique("token");
    let output = os
        .cryptadm()
        .env_remove("OS_CLOUD")
        .env_remove("OS_CLIENT_CONFIG_FILE")
        .env("HOME", work.path(""))
        .env("OS_AUTH_URL", &os.keystone)
        .env("OS_TOKEN", &token)
        .env("OS_PROJECT_NAME", "admin")
        .env("OS_PROJECT_DOMAIN_NAME", "Default")
        .args(SMALL_QCOW2)
        .args(["--upload", &name])
        .args(CHEAP)
        .arg(work.path("t.qcow2"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(os.images_named(&name).len(), 1);
}

/// Two more ways to log in, as openstackclient reads them: a clouds.yaml without the password plus a secure.yaml
/// beside it holding it (merged key by key), and an application credential from the OS_* variables.
#[test]
fn secure_yaml_and_application_credentials_log_in() {
    let os = openstack();
    let work = Scratch::new();
    let config = work.path("config");
    std::fs::create_dir_all(&config).unwrap();
    let clouds = std::fs::read_to_string(os.clouds_yaml()).unwrap();
    let without: String = clouds.lines().filter(|l| !l.contains("password:")).map(|l| format!("{l}\n")).collect();
    std::fs::write(config.join("clouds.yaml"), without).unwrap();
    let secure = format!("clouds:\n  test:\n    auth:\n      password: {}\n", os.admin_password);
    std::fs::write(config.join("secure.yaml"), secure).unwrap();
    let name = unique("secure-yaml");
    let (code, stderr, _) =
        format_upload(os, &work, &name, &[("OS_CLIENT_CONFIG_FILE", config.join("clouds.yaml").to_str().unwrap())]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(os.images_named(&name).len(), 1);

    let credential = os.json(&["application", "credential", "create", &unique("cryptadm-test")]);
    let id = credential["id"].as_str().unwrap().to_owned();
    let secret = credential["secret"].as_str().unwrap().to_owned();
    let name = unique("app-credential");
    let output = os
        .cryptadm()
        .env_remove("OS_CLOUD")
        .env_remove("OS_CLIENT_CONFIG_FILE")
        .env("HOME", work.path(""))
        .env("OS_AUTH_URL", &os.keystone)
        .env("OS_AUTH_TYPE", "v3applicationcredential")
        .env("OS_APPLICATION_CREDENTIAL_ID", &id)
        .env("OS_APPLICATION_CREDENTIAL_SECRET", &secret)
        .args(SMALL_QCOW2)
        .args(["--upload", &name])
        .args(CHEAP)
        .arg(work.path("a.qcow2"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(os.images_named(&name).len(), 1);
    let output = os
        .cryptadm()
        .env_remove("OS_CLOUD")
        .env_remove("OS_CLIENT_CONFIG_FILE")
        .env("HOME", work.path(""))
        .env("OS_AUTH_URL", &os.keystone)
        .env("OS_APPLICATION_CREDENTIAL_ID", &id)
        .env("OS_APPLICATION_CREDENTIAL_SECRET", "wrong")
        .args(SMALL_QCOW2)
        .args(CHEAP)
        .arg(work.path("b.qcow2"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(16), "{}", String::from_utf8_lossy(&output.stderr));
}

/// Stores a symmetric secret of 32 key bytes with the openstack client; returns (its UUID, the key).
fn symmetric_secret(os: &OpenStack, work: &Scratch, name: &str) -> (String, Vec<u8>) {
    let key: Vec<u8> = (0u8..32).map(|i| i.wrapping_mul(53).wrapping_add(7)).collect();
    let key_file = work.write(&format!("{name}.key"), &key);
    let uuid = secret_store(
        os,
        &["--name", name, "--secret-type", "symmetric", "--algorithm", "aes", "--bit-length", "256", "--mode", "xts"]
            .into_iter()
            .chain(["--file", key_file.to_str().unwrap()])
            .collect::<Vec<_>>(),
    );
    (uuid, key)
}

/// A secret this run did not create is never put under a deletion policy. This harness's Glance has its key
/// manager configured, so the policy is real: an image of the run's own secret with --delete-key-with-image takes
/// its secret along when `openstack image delete` removes it. With a secret S already used by image C, the same
/// flag with --secret S (luks-format, convert existing) or with the shared source secret (convert shelve) is
/// refused with exit 2 before anything is written or created; S survives, castellan reads it, and C still opens.
#[test]
fn shared_secret_is_never_put_under_a_deletion_policy() {
    tools();
    let os = openstack();
    let work = Scratch::new();
    let format_raw = |extra: &[&str], image: &Path| {
        os.cryptadm()
            .args(["disk", "luks-format", "--size", "1M", "--key-manager", "barbican", "--secret-type", "symmetric"])
            .args(extra)
            .args(CHEAP)
            .arg(image)
            .output()
            .unwrap()
    };
    // The policy is real here: our own secret goes with its image.
    let own = unique("own-policy");
    let output = format_raw(&["--delete-key-with-image", "--upload", &own], &work.path("own.luks"));
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let own_id = stdout_line(&output);
    let own_secret = secret_uuid_of(&image_show(os, &own_id));
    assert_eq!(properties(&image_show(os, &own_id))["cinder_encryption_key_deletion_policy"], "on_image_deletion");
    os.run(&["image", "delete", &own_id]);
    wait_for("Glance to delete the image's secret", || {
        os.api("key-manager", "GET", &format!("/v1/secrets/{own_secret}"), None).0 == 404
    });

    // S, used by image C.
    let (shared, key) = symmetric_secret(os, &work, &unique("shared"));
    let c_name = unique("shares-c");
    let c_file = work.path("c.luks");
    let output = format_raw(&["--secret", &shared, "--upload", &c_name], &c_file);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let c_id = stdout_line(&output);

    // D with S and the policy: refused.
    let d_name = unique("shares-d");
    let d_file = work.path("d.luks");
    let output = format_raw(&["--secret", &shared, "--delete-key-with-image", "--upload", &d_name], &d_file);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--delete-key-with-image on a secret this run does not create"), "{stderr}");
    assert!(stderr.contains("hint:"), "{stderr}");
    assert!(!d_file.exists());
    assert_eq!(os.images_named(&d_name), Vec::<Value>::new());

    // Nova's shelve flow (the source's secret shared) and convert existing --secret: refused the same way.
    let saved = work.path("c-saved.luks");
    image_save(os, &c_id, &saved);
    for key_choice in ["shelve", "existing"] {
        let out = work.path(&format!("{key_choice}.luks"));
        let output = os
            .cryptadm()
            .args(["disk", "convert", "--encryption-key", key_choice, "--key-manager", "barbican"])
            .args(["--secret", &shared, "--secret-type", "symmetric", "--delete-key-with-image", "--upload", &d_name])
            .args(CHEAP)
            .arg(&saved)
            .arg(&out)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{key_choice}: {stderr}");
        assert!(stderr.contains("does not create"), "{stderr}");
        assert!(!out.exists());
    }
    assert_eq!(os.images_named(&d_name), Vec::<Value>::new());

    // S is intact: castellan reads the key, and its hex (os-brick's passphrase) opens C as Glance gives it back.
    let (class, bytes) = os.castellan(&shared);
    assert_eq!(class, "SymmetricKey");
    assert_eq!(bytes, key);
    assert!(cryptsetup_opens(&saved, &work.write("c.hex", hex(&bytes))), "C still opens");
    assert_eq!(image_show(os, &c_id)["status"], "active");
    assert!(c_file.exists());
}

/// A cloud without an image endpoint (region KeyManagerOnly), or a Glance that does not answer, is found before
/// anything is created: no secret is stored, no image written.
#[test]
fn a_missing_or_dead_glance_is_found_before_anything_is_created() {
    let os = openstack();
    let work = Scratch::new();
    let name = unique("no-glance");
    let (code, stderr, stdout) = format_upload(os, &work, &name, &[("OS_REGION_NAME", "KeyManagerOnly")]);
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("Glance") && stderr.contains("`image` endpoint"), "{stderr}");
    assert!(stdout.is_empty() && !work.path(&format!("{name}.qcow2")).exists());
    nothing_left(os, &name);

    let url = dead_url();
    let (code, stderr, _) = format_upload(os, &work, &name, &[("OS_IMAGE_ENDPOINT_OVERRIDE", &url)]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("Glance") && stderr.contains("unavailable"), "{stderr}");
    assert!(!work.path(&format!("{name}.qcow2")).exists());
    nothing_left(os, &name);
}

/// Glance's own 413: an image over the harness's image_size_cap is refused while its body is still being sent;
/// cryptadm stops sending and exits 1 within seconds with a message naming the cap, deletes the image record
/// and its new secret, and removes the written file whose secret is gone.
#[test]
fn glance_over_its_size_cap_is_refused_within_seconds() {
    let os = openstack();
    let work = Scratch::new();
    let name = unique("over-cap");
    let size = format!("{}M", (os.glance_size_cap() >> 20) + 24);
    let image = work.path("big.luks");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("cryptadm"))
        .args(["disk", "luks-format", "--type", "luks1", "--size", &size, "--key-manager", "barbican"])
        .args(["--upload", &name])
        .args(CHEAP)
        .arg(&image)
        .env("OS_CLIENT_CONFIG_FILE", os.clouds_yaml())
        .env("OS_CLOUD", "test")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Timed from the image record's creation (the upload starts right after) to the exit: the formatting before
    // it depends on the machine's load, the refusal must not.
    let mut stderr = String::new();
    let mut upload_started = None;
    for line in std::io::BufRead::lines(std::io::BufReader::new(child.stderr.take().unwrap())) {
        let line = line.unwrap();
        if line.starts_with("created image ") {
            upload_started = Some(std::time::Instant::now());
        }
        stderr.push_str(&line);
        stderr.push('\n');
    }
    let status = child.wait().unwrap();
    let upload = upload_started.unwrap_or_else(|| panic!("no image was created: {stderr}")).elapsed();
    let mut stdout = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut stdout).unwrap();
    #[allow(clippy::print_stderr)] // the time, for the record
    {
        eprintln!("upload over Glance's size cap: refused and cleaned up {:.1} s after it began", upload.as_secs_f64());
    }
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("413") && stderr.contains("size cap"), "{stderr}");
    assert!(upload.as_secs() < 60, "took {upload:?} (before the fix: no end)");
    nothing_left(os, &name);
    assert!(!image.exists(), "the image whose secret was deleted was left");
    assert!(stdout.is_empty());
}

/// Glance dying during the upload (its proxy killed): the image record cannot be deleted, so its secret is not
/// deleted either (the image still names it); the local image, whose upload failed, is never put in place; the
/// run says so and names the commands, which clean up.
#[test]
fn glance_dying_mid_upload_keeps_the_secret_while_the_image_exists() {
    let os = openstack();
    let work = Scratch::new();
    let name = unique("glance-dies");
    let proxy = FaultProxy::start(&os.glance, "stall-upload");
    let stderr_path = work.path("err");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("cryptadm"))
        .args(SMALL_QCOW2)
        .args(["--upload", &name])
        .args(CHEAP)
        .arg(work.path("img.qcow2"))
        .env("OS_CLIENT_CONFIG_FILE", os.clouds_yaml())
        .env("OS_CLOUD", "test")
        .env("OS_IMAGE_ENDPOINT_OVERRIDE", &proxy.url)
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .unwrap();
    wait_for("the upload to start", || proxy.log().contains("(stall-upload)"));
    drop(proxy);
    let status = child.wait().unwrap();
    let stderr = std::fs::read_to_string(&stderr_path).unwrap();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert_eq!(os.images_named(&name).len(), 1, "the image Glance could not be asked to delete");
    let secrets = os.secrets_named(&format!("{name}-key"));
    assert_eq!(secrets.len(), 1, "its secret is kept while the image names it: {stderr}");
    assert!(stderr.contains("kept: image"), "{stderr}");
    // Issue 41: the local image takes its place only after a complete upload; a failed one never puts it there.
    assert!(!work.path("img.qcow2").exists(), "a failed upload put the image in place");
    no_partials(&work);
    for line in stderr.lines().filter_map(|l| l.split("could not clean up: ").nth(1)) {
        let command = line.split("  (").next().unwrap();
        let words: Vec<&str> = command.split_whitespace().collect();
        if words.first() == Some(&"openstack") {
            os.run(&words[1..]);
        }
    }
    nothing_left(os, &name);
}

/// An image id from the server is checked like a secret reference before it becomes part of a path: Glance
/// answering `../../v2/images/x` gets no request on that path; the run's secret and file are removed.
#[test]
fn an_image_id_that_is_not_a_uuid_is_never_used_in_a_path() {
    let os = openstack();
    let work = Scratch::new();
    let name = unique("bad-id");
    let proxy = FaultProxy::start(&os.glance, "bad-image-id");
    let (code, stderr, _) = format_upload(os, &work, &name, &[("OS_IMAGE_ENDPOINT_OVERRIDE", &proxy.url)]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("is not a UUID"), "{stderr}");
    let log = proxy.log();
    assert!(!log.lines().any(|l| l.contains("..") || l.starts_with("PUT") || l.starts_with("DELETE")), "{log}");
    nothing_left(os, &name);
    assert!(!work.path(&format!("{name}.qcow2")).exists());
}

/// A failure after the consumer was registered on a shared secret: cryptadm deletes the image it created and
/// removes its consumer record too (Glance Zed never does, and later Barbican releases refuse to delete a secret
/// with consumers); the shared secret stays, with the consumers it had.
#[test]
fn the_consumer_record_goes_with_the_image_cryptadm_deletes() {
    tools();
    let os = openstack();
    let work = Scratch::new();
    let name = unique("consumer-undo");
    let (shared, _) = symmetric_secret(os, &work, &name);
    let proxy = FaultProxy::start(&os.glance, "fail-show");
    let output = os
        .cryptadm()
        .env("OS_IMAGE_ENDPOINT_OVERRIDE", &proxy.url)
        .args(["disk", "luks-format", "--size", "1M", "--key-manager", "barbican", "--secret", &shared])
        .args(["--upload", &name])
        .args(CHEAP)
        .arg(work.path("c.luks"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(proxy.log().contains("DELETE /v2/images/"), "{}", proxy.log());
    assert_eq!(os.images_named(&name), Vec::<Value>::new());
    assert_eq!(os.consumers(&shared), Vec::<Value>::new(), "the consumer record was left");
    assert_eq!(os.api("key-manager", "GET", &format!("/v1/secrets/{shared}"), None).0, 200, "the shared secret");
    // Issue 41: an image whose upload failed is never put in place (with --force the old file would stay).
    assert!(!work.path("c.luks").exists(), "a failed upload put the image in place");
    no_partials(&work);
}

/// Scripts: the new secret's id is on standard output without --upload, also under -q, and as JSON with
/// --output-format json; a name Barbican would refuse is refused up front (3) with nothing created; an explicit
/// --secret-type contradicting the secret is refused (3); a token Keystone does not know is 16, not 5.
#[test]
fn ids_for_scripts_and_what_is_refused_up_front() {
    let os = openstack();
    let work = Scratch::new();
    let quiet = os.cryptadm().arg("-q").args(SMALL_QCOW2).args(CHEAP).arg(work.path("quiet.qcow2")).output().unwrap();
    assert!(quiet.status.success(), "{}", String::from_utf8_lossy(&quiet.stderr));
    let lines = stdout_lines(&quiet);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(os.get("key-manager", &format!("/v1/secrets/{}", lines[0]))["name"], "quiet-key");

    let json = os
        .cryptadm()
        .arg("-q")
        .args(SMALL_QCOW2)
        .args(["--output-format", "json"])
        .args(CHEAP)
        .arg(work.path("json.qcow2"))
        .output()
        .unwrap();
    assert!(json.status.success(), "{}", String::from_utf8_lossy(&json.stderr));
    let ids: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert!(ids["image_id"].is_null(), "{ids}");
    let (class, bytes) = os.castellan(ids["secret_id"].as_str().unwrap());
    assert_eq!((class.as_str(), bytes.len()), ("Passphrase", 88));

    // --glance with --key-manager: the document names the secret this run stored, and no longer tells the user to
    // store it.
    let glance = os
        .cryptadm()
        .args(SMALL_QCOW2)
        .arg("--glance")
        .args(["--output-format", "json"])
        .args(CHEAP)
        .arg(work.path("glance.qcow2"))
        .output()
        .unwrap();
    assert!(glance.status.success(), "{}", String::from_utf8_lossy(&glance.stderr));
    let doc: Value = serde_json::from_slice(&glance.stdout).unwrap();
    assert!(doc.get("secret").is_none(), "{doc}");
    let stored = doc["properties"]["os_encrypt_key_id"].as_str().unwrap();
    assert_eq!(os.get("key-manager", &format!("/v1/secrets/{stored}"))["name"], "glance-key");

    let long = "n".repeat(253);
    let output = os
        .cryptadm()
        .args(SMALL_QCOW2)
        .args(["--upload", &long])
        .args(CHEAP)
        .arg(work.path("long.qcow2"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(!work.path("long.qcow2").exists());
    assert!(stderr.contains("Barbican takes at most 255"), "{stderr}");
    assert!(os.secrets_named(&format!("{long}-key")).is_empty());

    let name = unique("typed");
    let passphrase_secret = secret_store(os, &["--name", &name, "--secret-type", "passphrase", "--payload", "p4ss"]);
    let output = os
        .cryptadm()
        .args(SMALL_QCOW2)
        .args(["--secret", &passphrase_secret, "--secret-type", "symmetric"])
        .args(CHEAP)
        .arg(work.path("typed.qcow2"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("contradicts") && stderr.contains("`passphrase` secret"), "{stderr}");
    assert!(!work.path("typed.qcow2").exists());

    let output = os
        .cryptadm()
        .env_remove("OS_CLOUD")
        .env_remove("OS_CLIENT_CONFIG_FILE")
        .env("HOME", work.path(""))
        .env("OS_AUTH_URL", &os.keystone)
        .env("OS_TOKEN", "gAAAAABnot-a-token-keystone-issued")
        .env("OS_PROJECT_NAME", "admin")
        .env("OS_PROJECT_DOMAIN_NAME", "Default")
        .args(SMALL_QCOW2)
        .args(CHEAP)
        .arg(work.path("token.qcow2"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(16), "{stderr}");
    assert!(stderr.contains("Keystone does not know"), "Keystone's 404 at login: {stderr}");
    assert_eq!(stderr.matches("logging in to Keystone").count(), 1, "{stderr}");
}

/// `convert --source-secret`: a Glance image re-keyed (`new`) with no passphrase on disk: the source's passphrase
/// comes from its Barbican secret, the output gets a new secret, and qemu-img opens it with what castellan reads.
#[test]
fn convert_new_reads_the_source_passphrase_from_barbican() {
    tools();
    let os = openstack();
    let work = Scratch::new();
    let raw = work.write("disk.raw", pattern(1 << 20));
    let src = work.path("src.qcow2");
    let output = os
        .cryptadm()
        .args(["disk", "luks-format", "--format", "qcow2", "--key-manager", "barbican", "--from"])
        .arg(&raw)
        .args(CHEAP)
        .arg(&src)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let source_secret = stdout_line(&output);
    let out = work.path("rekeyed.qcow2");
    let output = os
        .cryptadm()
        .args(["disk", "convert", "--encryption-key", "new", "--key-manager", "barbican"])
        .args(["--source-secret", &source_secret])
        .args(CHEAP)
        .arg(&src)
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("a `passphrase` secret of 88 bytes: its bytes are the passphrase"), "{stderr}");
    let new_secret = stdout_line(&output);
    assert_ne!(new_secret, source_secret);
    let (_, passphrase) = os.castellan(&new_secret);
    let pass = work.write("pass", passphrase);
    assert_eq!(qemu_read_qcow2(&out, &pass, &work.path("guest")), pattern(1 << 20));
}

/// The overall deadline with a real Keystone and a Barbican that never answers, or drips its answer a byte every
/// 2 s (tests/cli/support_misbehaving.rs, through `OS_KEY_MANAGER_ENDPOINT_OVERRIDE`): `luks-format` stops within a
/// second of `--timeout` with exit 4, naming Barbican's address, and writes nothing. (Keystone itself silent or
/// dripping: tests/cli/deadline.rs.) The deadline is 15 s here: the real Keystone's login comes first.
#[test]
fn barbican_silent_or_dripping_ends_at_the_deadline() {
    use crate::support_misbehaving::{Misbehaving, timed};
    let os = openstack();
    let work = Scratch::new();
    for (server, case) in [(Misbehaving::silent(), "silent"), (Misbehaving::dripping(), "dripping")] {
        let image = work.path(&format!("{case}.qcow2"));
        let (output, took) = timed(
            os.cryptadm()
                .env("OS_KEY_MANAGER_ENDPOINT_OVERRIDE", server.url())
                .args(["--timeout", "15"])
                .args(SMALL_QCOW2)
                .args(CHEAP)
                .arg(&image),
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(4), "{case}: {stderr}");
        assert!(took < std::time::Duration::from_secs(16), "{case}: took {took:?}: {stderr}");
        assert!(stderr.contains(&server.host()) && stderr.contains("the overall deadline of 15 s passed"), "{stderr}");
        assert!(!image.exists(), "{case}: nothing is written");
    }
}

/// No `.cryptadm-partial` file is left in `work`.
fn no_partials(work: &Scratch) {
    let partials: Vec<String> = work.entries().into_iter().filter(|e| e.ends_with(".cryptadm-partial")).collect();
    assert!(partials.is_empty(), "{partials:?}");
}

/// Issue 41: with Glance's 413 (over `image_size_cap`), `luks-format … --force keep1.img` exited 1 and
/// `keep1.img` was gone ("removed keep1.img: the secret this run stored for it was deleted"); `convert --force`
/// too. The image is now uploaded from its partial file and renamed into place only after the upload: a refused
/// upload leaves the old file byte for byte, and nothing in the cloud. A successful --force run replaces it.
#[test]
fn a_refused_upload_with_force_leaves_the_old_file() {
    tools();
    let os = openstack();
    let work = Scratch::new();
    let over = format!("{}M", (os.glance_size_cap() >> 20) + 8);
    let old = b"the image that was here before\n".repeat(4096);
    let keep1 = work.write("keep1.img", &old);
    let name = unique("keep1");
    let output = os
        .cryptadm()
        .args(["disk", "luks-format", "--size", &over, "--key-manager", "barbican", "--upload", &name, "--force"])
        .args(CHEAP)
        .arg(&keep1)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("413"), "{stderr}");
    assert!(!stderr.contains("removed `"), "{stderr}");
    assert_eq!(std::fs::read(&keep1).unwrap(), old, "keep1.img is as it was");
    nothing_left(os, &name);
    no_partials(&work);

    // convert --force: a raw LUKS1 source over the cap, re-keyed into keep2.img under a new Barbican secret.
    let pass = work.write("pass", "the source's passphrase");
    let src = work.path("src.luks");
    os.cryptadm()
        .args(["disk", "luks-format", "--type", "luks1", "--size", &over, "--key-file"])
        .arg(&pass)
        .args(CHEAP)
        .arg(&src)
        .assert()
        .success();
    let keep2 = work.write("keep2.img", &old);
    let name = unique("keep2");
    let output = os
        .cryptadm()
        .args(["disk", "convert", "--encryption-key", "new", "--key-manager", "barbican", "--key-file"])
        .arg(&pass)
        .args(["--upload", &name, "--force"])
        .args(CHEAP)
        .arg(&src)
        .arg(&keep2)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("413"), "{stderr}");
    assert_eq!(std::fs::read(&keep2).unwrap(), old, "keep2.img is as it was");
    nothing_left(os, &name);
    no_partials(&work);

    // Under the cap, --force replaces the old file once the image is in Glance, and the two are the same bytes.
    let name = unique("keep1-ok");
    let output = os
        .cryptadm()
        .args(["disk", "luks-format", "--size", "1M", "--key-manager", "barbican", "--upload", &name, "--force"])
        .args(CHEAP)
        .arg(&keep1)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let id = stdout_line(&output);
    let pass = work.write("keep1.pass", payload(os, &secret_uuid_of(&image_show(os, &id))));
    assert!(cryptsetup_opens(&keep1, &pass));
    assert_eq!(image_save(os, &id, &work.path("keep1.saved")), std::fs::read(&keep1).unwrap());
}

/// Issue 41, `user_storage_quota`: Glance refuses (413 "exceeds the quota") an upload that would take the owner
/// past its storage quota. In project `quota`, filled to the harness's quota by one stored image (its size and
/// location written into Glance's database: uploading a quota's worth of bytes is no test), an 8 MiB
/// `luks-format … --force keep.img` (under `image_size_cap`) exits 1 naming the quota: keep.img byte for byte,
/// no image and no secret in the project, no partial file. With that image deleted, the same run replaces it.
#[test]
fn an_upload_over_the_storage_quota_with_force_leaves_the_old_file() {
    tools();
    let os = openstack();
    let work = Scratch::new();
    let quota_json = |args: &[&str]| -> Value {
        let mut all = args.to_vec();
        all.extend(["-f", "json"]);
        let output = os.quota_client(&all).output().unwrap();
        assert!(output.status.success(), "openstack {all:?}: {}", String::from_utf8_lossy(&output.stderr));
        serde_json::from_slice(&output.stdout).unwrap()
    };
    // The ballast: an image of project `quota` whose stored size is the whole quota.
    let project = os.json(&["project", "show", "quota"])["id"].as_str().unwrap().to_owned();
    let ballast = unique("ballast");
    let id = os.json(&["image", "create", &ballast, "--project", &project, "--disk-format", "raw"])["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let sql = |sql: &str| {
        let output =
            Command::new("sqlite3").args(["-cmd", ".timeout 20000"]).arg(os.glance_db()).arg(sql).output().unwrap();
        assert!(output.status.success(), "sqlite3: {}", String::from_utf8_lossy(&output.stderr));
    };
    sql(&format!(
        "UPDATE images SET size = {size}, status = 'active' WHERE id = '{id}';
         INSERT INTO image_locations (image_id, value, meta_data, status, created_at, deleted)
         VALUES ('{id}', 'file:///nonexistent/{id}', '{{}}', 'active', datetime('now'), 0);",
        size = os.glance_quota()
    ));

    let old = b"the image that was here before\n".repeat(4096);
    let keep = work.write("keep.img", &old);
    let name = unique("keep-quota");
    let output = os
        .quota_cryptadm()
        .args(["disk", "luks-format", "--size", "8M", "--key-manager", "barbican", "--upload", &name, "--force"])
        .args(CHEAP)
        .arg(&keep)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("413"), "{stderr}");
    assert!(stderr.contains("quota"), "the refusal is the storage quota's, not the size cap's: {stderr}");
    assert!(!stderr.contains("removed `"), "{stderr}");
    assert_eq!(std::fs::read(&keep).unwrap(), old, "keep.img is as it was");
    assert_eq!(quota_json(&["image", "list", "--name", &name]), Value::Array(vec![]), "an image left behind");
    assert_eq!(os.images_named(&name), Vec::<Value>::new(), "an image left behind");
    assert_eq!(
        quota_json(&["secret", "list", "--name", &format!("{name}-key")]),
        Value::Array(vec![]),
        "an orphan secret"
    );
    no_partials(&work);

    // The ballast gone (deleted in Glance's database), the same user and project replace keep.img: the refusal
    // above was the quota's.
    sql(&format!("UPDATE images SET status = 'deleted', deleted = 1, deleted_at = datetime('now') WHERE id = '{id}';"));
    let name = unique("keep-quota-ok");
    let output = os
        .quota_cryptadm()
        .args(["disk", "luks-format", "--size", "1M", "--key-manager", "barbican", "--upload", &name, "--force"])
        .args(CHEAP)
        .arg(&keep)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let id = stdout_line(&output);
    assert_eq!(quota_json(&["image", "show", &id])["status"], "active");
    assert_ne!(std::fs::read(&keep).unwrap(), old, "keep.img was replaced");
    no_partials(&work);
}

/// Issue 41: image B made with its own new secret and --delete-key-with-image; a later run shared that secret
/// (`luks-format --secret SB`, `convert shelve --source-secret SB`) with exit 0, and `openstack image delete B`
/// then deleted the secret under the second image. Sharing a secret that an image deletes with itself is refused
/// now (exit 3, naming the image, nothing created or written), whether that image is the secret's consumer (made
/// by cryptadm) or only names it (made by the openstack client); `same` copies the secret, and the copy outlives
/// B.
#[test]
fn a_secret_an_image_deletes_is_never_shared() {
    tools();
    let os = openstack();
    let work = Scratch::new();
    // B: raw LUKS with its own symmetric secret, deleted with it (cinder_encryption_key_deletion_policy, which
    // this Glance honours).
    let b = unique("deletes-b");
    let output = os
        .cryptadm()
        .args(["disk", "luks-format", "--size", "1M", "--key-manager", "barbican", "--secret-type", "symmetric"])
        .args(["--delete-key-with-image", "--upload", &b])
        .args(CHEAP)
        .arg(work.path("b.luks"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let b_id = stdout_line(&output);
    let sb = secret_uuid_of(&image_show(os, &b_id));

    let c = unique("shares-b");
    let c_file = work.path("c.qcow2");
    let output = os
        .cryptadm()
        .args(SMALL_QCOW2)
        .args(["--secret", &sb, "--upload", &c])
        .args(CHEAP)
        .arg(&c_file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains(&format!("secret {sb} is deleted with image {b_id}")), "{stderr}");
    assert!(stderr.contains("hint: let this run store the image's own secret"), "{stderr}");
    assert!(!c_file.exists());
    assert_eq!(os.images_named(&c), Vec::<Value>::new());

    let saved = work.path("b-saved.luks");
    image_save(os, &b_id, &saved);
    let shelved = work.path("shelved.luks");
    let output = os
        .cryptadm()
        .args(["disk", "convert", "--encryption-key", "shelve", "--key-manager", "barbican"])
        .args(["--source-secret", &sb, "--upload", &c])
        .args(CHEAP)
        .arg(&saved)
        .arg(&shelved)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains(&format!("is deleted with image {b_id}")) && stderr.contains("shelve shares it"),
        "{stderr}"
    );
    assert!(stderr.contains("--encryption-key same"), "{stderr}");
    assert!(!shelved.exists());
    assert_eq!(os.images_named(&c), Vec::<Value>::new());
    assert_eq!(os.consumers(&sb).len(), 1, "only B");

    // `same` copies: the copy is the new image's own and outlives B and its secret.
    let copied = work.path("copied.luks");
    let output = os
        .cryptadm()
        .args(["disk", "convert", "--encryption-key", "same", "--key-manager", "barbican"])
        .args(["--source-secret", &sb, "--upload", &c])
        .args(CHEAP)
        .arg(&saved)
        .arg(&copied)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let [c_id, copy]: [String; 2] = stdout_lines(&output).try_into().unwrap();
    assert_ne!(copy, sb);
    os.run(&["image", "delete", &b_id]);
    wait_for("Glance to delete B's secret", || {
        os.api("key-manager", "GET", &format!("/v1/secrets/{sb}"), None).0 == 404
    });
    assert_eq!(image_show(os, &c_id)["status"], "active");
    // os-brick's passphrase of the copy (a symmetric secret: the hex of its bytes) opens the copied image.
    let pass = work.write("copy.pass", hex(&payload(os, &copy)));
    assert!(cryptsetup_opens(&copied, &pass));

    // An image the openstack client made (no consumer record) that names a secret and deletes it with itself:
    // found through Glance's property filter. convert existing --secret is refused the same way.
    let s2 = secret_store(os, &["--name", &unique("named"), "--secret-type", "passphrase", "--payload", "p4ss w0rd"]);
    let d = unique("names-s2");
    let shown = os.json(&[
        "image",
        "create",
        "--disk-format",
        "raw",
        "--container-format",
        "bare",
        "--property",
        &format!("os_encrypt_key_id={s2}"),
        "--property",
        "os_encrypt_key_deletion_policy=True",
        &d,
    ]);
    let d_id = shown["id"].as_str().unwrap().to_owned();
    let e_file = work.path("e.qcow2");
    let output = os.cryptadm().args(SMALL_QCOW2).args(["--secret", &s2]).args(CHEAP).arg(&e_file).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains(&format!("secret {s2} is deleted with image {d_id}")), "{stderr}");
    assert!(!e_file.exists());
    let existing = work.path("existing.luks");
    let output = os
        .cryptadm()
        .args(["disk", "convert", "--encryption-key", "existing", "--key-manager", "barbican", "--secret", &s2])
        .args(["--source-secret-type", "symmetric", "--key-file"])
        .arg(work.write("copy.key", payload(os, &copy)))
        .args(CHEAP)
        .arg(&copied)
        .arg(&existing)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains(&format!("is deleted with image {d_id}")), "{stderr}");
    assert!(!existing.exists());
    os.run(&["image", "delete", &d_id]);
}

/// Issue 41, the rest of the OpenStack output: `--glance --upload` printed the Glance document with a stale
/// `openstack image create … --file …` line (running it made a second image) and neither id; the old spelling
/// `convert same --secret S` skipped the check of its copy's name (and failed after the login with Barbican's
/// 400); `--key-file` beside `--source-secret` was silently ignored.
#[test]
fn glance_upload_document_names_and_source_passphrase() {
    tools();
    let os = openstack();
    let work = Scratch::new();
    let name = unique("doc");
    let output = os
        .cryptadm()
        .args(SMALL_QCOW2)
        .args(["--glance", "--output-format", "json", "--upload", &name])
        .args(CHEAP)
        .arg(work.path("doc.qcow2"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(doc.get("command").is_none(), "no `openstack image create` for an uploaded image: {doc}");
    let id = doc["image_id"].as_str().unwrap_or_else(|| panic!("no image_id: {doc}"));
    let shown = image_show(os, id);
    assert_eq!(shown["name"], name.as_str());
    assert_eq!(doc["secret_id"].as_str(), Some(secret_uuid_of(&shown).as_str()), "{doc}");
    assert_eq!(doc["properties"]["os_encrypt_key_id"], doc["secret_id"]);
    assert_eq!(os.images_named(&name).len(), 1);

    // `same --secret S` (the old spelling) stores a copy named after the upload: a name over Barbican's 255
    // characters is refused before the login (a Keystone that cannot be reached is never asked).
    let src = work.path("doc.qcow2");
    let long = "n".repeat(253);
    let output = os
        .cryptadm()
        .env("OS_AUTH_URL", dead_url())
        .args(["disk", "convert", "--encryption-key", "same", "--key-manager", "barbican"])
        .args(["--secret", doc["secret_id"].as_str().unwrap(), "--upload", &long])
        .args(CHEAP)
        .arg(&src)
        .arg(work.path("long.qcow2"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("Barbican takes at most 255"), "{stderr}");
    assert!(!work.path("long.qcow2").exists());

    // --key-file beside --source-secret: refused (2) before anything, instead of being ignored.
    let pass = work.write("unused.pass", "never read");
    let output = os
        .cryptadm()
        .args(["disk", "convert", "--encryption-key", "new", "--key-manager", "barbican", "--key-file"])
        .arg(&pass)
        .args(["--source-secret", doc["secret_id"].as_str().unwrap()])
        .args(CHEAP)
        .arg(&src)
        .arg(work.path("both.qcow2"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--key-file and --source-secret both give the source's passphrase"), "{stderr}");
    assert!(!work.path("both.qcow2").exists());
}
