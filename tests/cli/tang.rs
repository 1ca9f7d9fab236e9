//! Tang network-bound keys, proven against Debian's own `tangd` (three real servers, [`crate::support_tang`]) and
//! with Debian's `clevis` as the oracle both ways: `clevis decrypt` opens what cryptadm seals (and the Python
//! machineadm opener then opens the document with that passphrase); cryptadm opens what `clevis encrypt tang|sss`
//! made. Thresholds with servers stopped, key rotation on the server, and every refusal (unpinned, mispinned,
//! forged advertisement, unreachable) with its exit code, its message and nothing written.

use crate::support::{Scratch, cryptadm};
use crate::support_tang::{clevis_decrypt, clevis_encrypt, run_with_input, servers, servers_mut};
use std::path::{Path, PathBuf};

const CONFIG: &[u8] = b"apiVersion: v1\nkind: Config\nclusters: [tang]\n";

fn oracle_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/machineadm_oracle.py")
}

/// `bootstrap seal --provider clevis --clevis-pin PIN --clevis-config CONFIG` of [`CONFIG`] into `sealed.yaml`.
fn seal(scratch: &Scratch, pin: &str, config: &str, extra: &[&str]) -> std::process::Output {
    let input = scratch.write("config.yaml", CONFIG);
    cryptadm()
        .args(["bootstrap", "seal", "--provider", "clevis", "--clevis-pin", pin, "--clevis-config", config])
        .args(extra)
        .arg("--in")
        .arg(input)
        .arg("--out")
        .arg(scratch.path("sealed.yaml"))
        .output()
        .expect("run cryptadm")
}

fn open(scratch: &Scratch, extra: &[&str]) -> std::process::Output {
    cryptadm()
        .args(["bootstrap", "open", "--in"])
        .arg(scratch.path("sealed.yaml"))
        .arg("--out")
        .arg(scratch.path("opened.yaml"))
        .args(extra)
        .output()
        .expect("run cryptadm")
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn assert_ok(output: &std::process::Output, what: &str) {
    assert!(output.status.success(), "{what} failed: {}", stderr(output));
}

/// The JWE in the sealed document's `passphraseURI: clevis:<JWE>`.
fn recorded_jwe(scratch: &Scratch) -> String {
    let document = std::fs::read_to_string(scratch.path("sealed.yaml")).unwrap();
    let line = document.lines().find(|l| l.trim_start().starts_with("passphraseURI:")).expect("a passphraseURI");
    let uri = line.split_once(':').unwrap().1.trim().trim_matches(|c| c == '"' || c == '\'');
    uri.strip_prefix("clevis:").unwrap_or_else(|| panic!("not a clevis URI: {uri}")).to_owned()
}

/// The Python opener opens `sealed.yaml` with `passphrase`.
fn python_opens(scratch: &Scratch, passphrase: &[u8]) {
    let pass = scratch.write("recovered-pass", passphrase);
    let out = scratch.path("python-opened.yaml");
    let output = std::process::Command::new("python3")
        .arg(oracle_script())
        .args(["open", "--in"])
        .arg(scratch.path("sealed.yaml"))
        .arg("--passphrase-file")
        .arg(&pass)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_ok(&output, "the Python opener");
    assert_eq!(std::fs::read(out).unwrap(), CONFIG);
}

/// The Python sealer seals [`CONFIG`] with `passphrase`, recording `provider: clevis` and `clevis:<jwe>`.
fn python_seals(scratch: &Scratch, passphrase: &[u8], jwe: &str) {
    let pass = scratch.write("pass", passphrase);
    let input = scratch.write("config.yaml", CONFIG);
    let output = std::process::Command::new("python3")
        .arg(oracle_script())
        .args(["seal", "--in"])
        .arg(input)
        .arg("--passphrase-file")
        .arg(pass)
        .args(["--provider", "clevis", "--passphrase-uri", &format!("clevis:{jwe}")])
        .output()
        .unwrap();
    assert_ok(&output, "the Python sealer");
    scratch.write("sealed.yaml", output.stdout);
}

fn assert_opened(scratch: &Scratch) {
    assert_eq!(std::fs::read(scratch.path("opened.yaml")).unwrap(), CONFIG);
}

fn assert_failed(output: &std::process::Output, code: i32, needles: &[&str]) {
    let text = stderr(output);
    assert_eq!(output.status.code(), Some(code), "{text}");
    for needle in needles {
        assert!(text.contains(needle), "`{needle}` missing from: {text}");
    }
}

#[test]
fn clevis_decrypt_opens_what_cryptadm_seals_for_tang() {
    let trio = servers();
    let scratch = Scratch::new();
    assert_ok(&seal(&scratch, "tang", &trio.tangs[0].config(), &[]), "seal");
    let jwe = recorded_jwe(&scratch);
    let header = String::from_utf8(
        base64::Engine::decode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, jwe.split('.').next().unwrap())
            .unwrap(),
    )
    .unwrap();
    // The layout `clevis encrypt tang` writes: sorted keys, no spaces, the advertisement's key set recorded.
    assert!(header.starts_with(r#"{"alg":"ECDH-ES","clevis":{"pin":"tang","tang":{"adv":{"keys":[{"#), "{header}");
    assert!(
        header.contains(&format!(
            r#""url":"{}"}}}},"enc":"A256GCM","epk":{{"crv":"P-521","kty":"EC","#,
            trio.tangs[0].url()
        )),
        "{header}"
    );
    let recovered = clevis_decrypt(&jwe);
    assert_ok(&recovered, "clevis decrypt");
    assert_eq!(recovered.stdout.len(), 43, "a 256-bit printable passphrase");
    python_opens(&scratch, &recovered.stdout);
    assert_ok(&open(&scratch, &[]), "open");
    assert_opened(&scratch);
}

#[test]
fn clevis_decrypt_opens_what_cryptadm_seals_for_sss() {
    let trio = servers();
    let scratch = Scratch::new();
    assert_ok(&seal(&scratch, "sss", &trio.sss_config(2), &[]), "seal");
    let recovered = clevis_decrypt(&recorded_jwe(&scratch));
    assert_ok(&recovered, "clevis decrypt");
    python_opens(&scratch, &recovered.stdout);
    assert_ok(&open(&scratch, &[]), "open");
    assert_opened(&scratch);
}

#[test]
fn cryptadm_opens_what_clevis_encrypts() {
    let trio = servers();
    let nested = format!(
        r#"{{"t":2,"pins":{{"tang":[{},{}],"sss":{{"t":1,"pins":{{"tang":[{}]}}}}}}}}"#,
        trio.tangs[0].config(),
        trio.tangs[1].config(),
        trio.tangs[2].config()
    );
    for (pin, config) in [("tang", trio.tangs[1].config()), ("sss", trio.sss_config(2)), ("sss", nested)] {
        let scratch = Scratch::new();
        let passphrase = b"clevis-made passphrase \xff";
        python_seals(&scratch, passphrase, &clevis_encrypt(pin, &config, passphrase));
        assert_ok(&open(&scratch, &[]), &format!("open of a `clevis encrypt {pin}` document"));
        assert_opened(&scratch);
    }
}

#[test]
fn a_threshold_survives_one_server_down_and_names_the_missing_ones() {
    let trio = servers_mut();
    let ours = Scratch::new();
    assert_ok(&seal(&ours, "sss", &trio.sss_config(2), &[]), "seal");
    let theirs = Scratch::new();
    python_seals(&theirs, b"pass", &clevis_encrypt("sss", &trio.sss_config(2), b"pass"));
    trio.tangs[0].stop();
    for scratch in [&ours, &theirs] {
        assert_ok(&open(scratch, &["--retries", "0"]), "open with one of three servers down");
        assert_opened(scratch);
        std::fs::remove_file(scratch.path("opened.yaml")).unwrap();
    }
    trio.tangs[2].stop();
    for scratch in [&ours, &theirs] {
        let output = open(scratch, &["--retries", "0"]);
        assert_failed(
            &output,
            1,
            &["1 of the 2 pins needed", &trio.tangs[0].url(), &trio.tangs[2].url(), "hint: bring enough"],
        );
        assert!(!stderr(&output).contains(&trio.tangs[1].url()), "the working server is not named a failure");
        assert!(!scratch.path("opened.yaml").exists(), "nothing is written on failure");
    }
}

#[test]
fn tang_key_rotation_keeps_old_documents_open() {
    let trio = servers_mut();
    let tang = &trio.tangs[1];
    let scratch = Scratch::new();
    let old_config = tang.config();
    assert_ok(&seal(&scratch, "tang", &old_config, &[]), "seal");
    let theirs = Scratch::new();
    python_seals(&theirs, b"pass", &clevis_encrypt("tang", &old_config, b"pass"));
    tang.rotate();
    assert_ne!(tang.config(), old_config);
    for scratch in [&scratch, &theirs] {
        assert_ok(&open(scratch, &[]), "open after the server rotated its keys");
        assert_opened(scratch);
    }
    assert_ok(&clevis_decrypt(&recorded_jwe(&scratch)), "clevis decrypt after rotation");
    // The old pin no longer matches what the server advertises: refused, as clevis refuses it.
    let again = Scratch::new();
    assert_failed(&seal(&again, "tang", &old_config, &[]), 16, &["trusted thumbprint"]);
    assert_ok(&seal(&again, "tang", &tang.config(), &[]), "seal with the new thumbprint");
}

#[test]
fn untrusted_mispinned_forged_and_unreachable_servers_are_refused() {
    let trio = servers();
    let tang = &trio.tangs[2];
    let url = tang.url();
    let unpinned = format!(r#"{{"url":"{url}"}}"#);
    let scratch = Scratch::new();
    let output = seal(&scratch, "tang", &unpinned, &[]);
    assert_failed(&output, 16, &["not pinned", &tang.thp(), "hint:", "--clevis-trust-adv"]);
    let wrong = format!(r#"{{"url":"{url}","thp":"{}"}}"#, trio.tangs[0].thp());
    assert_failed(&seal(&scratch, "tang", &wrong, &[]), 16, &["trusted thumbprint", "hint:"]);
    // A forged advertisement: the server's own, one signature byte changed.
    let adv = reqwest_adv(&url);
    let adv_file = scratch.write("forged.jws", flip_signature(&adv));
    let config = format!(r#"{{"url":"{url}","adv":"{}"}}"#, adv_file.display());
    assert_failed(&seal(&scratch, "tang", &config, &[]), 15, &["signature does not verify"]);
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let gone = format!(r#"{{"url":"http://127.0.0.1:{closed}"}}"#);
    assert_failed(
        &seal(&scratch, "tang", &gone, &["--clevis-trust-adv", "--retries", "0"]),
        1,
        &["Tang server at http://127.0.0.1:", "hint: check that the Tang server is up"],
    );
    assert_failed(&seal(&scratch, "sss", r#"{"t":3,"pins":{"tang":[{"url":"http://a"}]}}"#, &[]), 3, &["threshold"]);
    assert!(!scratch.path("sealed.yaml").exists(), "nothing is written on failure");
    // Trusting the advertisement as fetched, as `clevis encrypt tang … -y` does.
    assert_ok(&seal(&scratch, "tang", &unpinned, &["--clevis-trust-adv"]), "seal --clevis-trust-adv");
    assert_ok(&clevis_decrypt(&recorded_jwe(&scratch)), "clevis decrypt");
}

/// The server's advertisement, fetched with curl.
fn reqwest_adv(url: &str) -> String {
    let output = run_with_input("curl", &["-sf", &format!("{url}/adv")], b"");
    assert_ok(&output, "curl /adv");
    String::from_utf8(output.stdout).unwrap()
}

/// Changes one character of the first signature.
fn flip_signature(adv: &str) -> String {
    let at = adv.find("signature\"").expect("a signature") + 20;
    let mut bytes = adv.as_bytes().to_vec();
    let index = (at..bytes.len()).find(|&i| bytes[i].is_ascii_alphanumeric()).unwrap();
    bytes[index] = if bytes[index] == b'A' { b'B' } else { b'A' };
    String::from_utf8(bytes).unwrap()
}

/// Fast key derivation for test images.
const FAST_KDF: &[&str] = &["--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000"];

/// A command of either kind (the reference tools', cryptadm's).
trait Run {
    fn run(&mut self) -> std::io::Result<std::process::Output>;
}

impl Run for std::process::Command {
    fn run(&mut self) -> std::io::Result<std::process::Output> {
        self.output()
    }
}

impl Run for assert_cmd::Command {
    fn run(&mut self) -> std::io::Result<std::process::Output> {
        self.output()
    }
}

fn run_ok(command: &mut impl Run, what: &str) -> Vec<u8> {
    let output = command.run().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_ok(&output, what);
    output.stdout
}

/// `clevis luks pass -d IMAGE -s SLOT` prints a passphrase that `cryptsetup open --test-passphrase` accepts for
/// that keyslot.
/// Returns that passphrase's length.
fn assert_clevis_luks_pass_opens(image: &Path, slot: &str, scratch: &Scratch) -> usize {
    let pass = run_ok(
        std::process::Command::new("clevis").args(["luks", "pass", "-d"]).arg(image).args(["-s", slot]),
        "clevis luks pass",
    );
    let len = pass.len();
    let file = scratch.write(&format!("clevis-pass-{slot}"), pass);
    run_ok(
        std::process::Command::new("cryptsetup")
            .args(["open", "--test-passphrase", "--key-slot", slot, "--key-file"])
            .arg(file)
            .arg(image),
        "cryptsetup open --test-passphrase with the clevis passphrase",
    );
    len
}

#[test]
fn clevis_luks_opens_volumes_cryptadm_binds() {
    let trio = servers();
    let scratch = Scratch::new();
    let pass = scratch.write("pass", b"the first passphrase");
    // luks-format with a binding beside the passphrase's keyslot (sss, 2 of 3).
    let formatted = scratch.path("formatted.img");
    run_ok(
        cryptadm()
            .args(["disk", "luks-format", "--size", "4M", "--key-file"])
            .arg(&pass)
            .args(FAST_KDF)
            .args(["--clevis-pin", "sss", "--clevis-config", &trio.sss_config(2)])
            .arg(&formatted),
        "luks-format --clevis-pin",
    );
    assert_eq!(assert_clevis_luks_pass_opens(&formatted, "1", &scratch), 43, "a 256-bit printable passphrase");
    let dump = String::from_utf8(run_ok(
        std::process::Command::new("cryptsetup").args(["luksDump", "--dump-json-metadata"]).arg(&formatted),
        "luksDump",
    ))
    .unwrap();
    let meta: serde_json::Value = serde_json::from_str(&dump).unwrap();
    assert_eq!(meta["tokens"]["0"]["type"], "clevis");
    assert_eq!(meta["tokens"]["0"]["keyslots"], serde_json::json!(["1"]));
    run_ok(
        std::process::Command::new("cryptsetup")
            .args(["open", "--test-passphrase", "--key-slot", "0", "--key-file"])
            .arg(&pass)
            .arg(&formatted),
        "the passphrase's keyslot still opens",
    );
    // clevis-bind on a volume cryptsetup made, given its passphrase.
    let theirs = scratch.path("cryptsetup.img");
    std::fs::File::create(&theirs).unwrap().set_len(20 << 20).unwrap();
    run_ok(
        std::process::Command::new("cryptsetup")
            .args(["luksFormat", "-q", "--type", "luks2", "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000"])
            .arg("--key-file")
            .arg(&pass)
            .arg(&theirs),
        "cryptsetup luksFormat",
    );
    run_ok(
        cryptadm()
            .args(["disk", "clevis-bind", "--key-file"])
            .arg(&pass)
            .args(["--clevis-pin", "tang", "--clevis-config", &trio.tangs[0].config()])
            .arg(&theirs),
        "disk clevis-bind",
    );
    assert_eq!(assert_clevis_luks_pass_opens(&theirs, "1", &scratch), 43);
    let inspect = String::from_utf8(run_ok(cryptadm().args(["disk", "inspect"]).arg(&theirs), "inspect")).unwrap();
    assert!(inspect.contains(&format!("clevis: tang {}", trio.tangs[0].url())), "{inspect}");
}

/// Issue 41: `luks-format --clevis-*` renamed the formatted image into place and then bound it, so SIGKILL,
/// SIGTERM or SIGINT during the binding left TARGET with keyslot 0 and no clevis token (and a rerun refused it:
/// "holds a LUKS header"). The binding is now written in the header write that makes the volume. Every system
/// call that writes, flushes or renames is a crash point: the run is killed (strace injects the signal on entry)
/// at each in turn, into a new TARGET and over an old one with --force, and TARGET is afterwards either as it was
/// (absent, or the old bytes) or complete: keyslot 0 for the passphrase, keyslot 1 and the clevis token naming it.
#[test]
fn luks_format_clevis_appears_bound_or_not_at_all() {
    let trio = servers();
    let scratch = Scratch::new();
    let pass = scratch.write("pass", b"the passphrase");
    let config = trio.tangs[0].config();
    let run = |target: &Path, force: bool, inject: Option<(&str, &str, usize)>| {
        let mut cmd = match inject {
            Some((syscall, signal, n)) => {
                let mut cmd = std::process::Command::new("strace");
                cmd.args(["-qq", "-f", "-o", "/dev/null", "-e"])
                    .arg(format!("inject={syscall}:signal={signal}:when={n}"))
                    .arg(assert_cmd::cargo::cargo_bin("cryptadm"));
                cmd
            }
            None => std::process::Command::new(assert_cmd::cargo::cargo_bin("cryptadm")),
        };
        cmd.env_remove("CRYPTADM_PASSPHRASE").env_remove("CRYPTADM_PASSPHRASE_FILE");
        cmd.args(["disk", "luks-format", "--size", "1M", "--key-file"]).arg(&pass).args(FAST_KDF);
        cmd.args(["--clevis-pin", "tang", "--clevis-config", &config]);
        if force {
            cmd.arg("--force");
        }
        cmd.arg(target).output().unwrap()
    };
    // Complete: both keyslots, the clevis token naming keyslot 1, the passphrase opening keyslot 0.
    let assert_complete = |target: &Path, what: &str| {
        let dump = std::process::Command::new("cryptsetup")
            .args(["luksDump", "--dump-json-metadata"])
            .arg(target)
            .output()
            .unwrap();
        assert!(dump.status.success(), "{what}: not a LUKS2 volume: {}", String::from_utf8_lossy(&dump.stderr));
        let meta: serde_json::Value = serde_json::from_slice(&dump.stdout).unwrap();
        let slots: Vec<&String> = meta["keyslots"].as_object().unwrap().keys().collect();
        assert_eq!(slots, ["0", "1"], "{what}: {meta}");
        assert_eq!(meta["tokens"]["0"]["type"], "clevis", "{what}: {meta}");
        assert_eq!(meta["tokens"]["0"]["keyslots"], serde_json::json!(["1"]), "{what}: {meta}");
    };
    let old = b"the old image, kept unless the new one is complete".repeat(1000);
    let mut points = 0;
    for (syscall, signal, force) in [
        ("pwrite64", "KILL", false),
        ("fdatasync", "KILL", false),
        ("fsync", "KILL", false),
        ("rename,renameat,renameat2", "KILL", false),
        ("fdatasync", "KILL", true),
        ("fsync", "KILL", true),
        ("rename,renameat,renameat2", "KILL", true),
        ("fsync", "TERM", false),
        ("rename,renameat,renameat2", "TERM", true),
        ("fsync", "INT", true),
    ] {
        for n in 1.. {
            let target = scratch.path(&format!("target-{points}.img"));
            if force {
                std::fs::write(&target, &old).unwrap();
            }
            let output = run(&target, force, Some((syscall, signal, n)));
            let what = format!("{signal} at {syscall} #{n}{}", if force { " with --force" } else { "" });
            let as_before = match force {
                true => std::fs::read(&target).ok().as_deref() == Some(&old[..]),
                false => !target.exists(),
            };
            if !as_before {
                assert_complete(&target, &what);
            }
            if output.status.success() {
                assert!(!as_before, "{what}: success, but TARGET was not written");
                break;
            }
            assert!(n < 200, "{what}: still killed after 200 calls");
            points += 1;
            // What a killed run left is no obstacle: a plain rerun (--force where there was an old image) binds.
            if as_before {
                let rerun = run(&target, force, None);
                assert!(rerun.status.success(), "{what}: the rerun: {}", String::from_utf8_lossy(&rerun.stderr));
                assert_complete(&target, &format!("{what}, rerun"));
            }
        }
    }
    assert!(points >= 20, "only {points} crash points");
    // The killed runs' partial files are gone once a later run has written into the directory.
    let leftovers: Vec<String> = scratch.entries().into_iter().filter(|e| e.ends_with(".cryptadm-partial")).collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn cryptadm_opens_volumes_clevis_luks_binds() {
    let trio = servers();
    let scratch = Scratch::new();
    let pass = scratch.write("pass", b"pw");
    let raw: Vec<u8> = (0..(1u32 << 20)).map(|i| (i.wrapping_mul(2654435761) >> 24) as u8).collect();
    let raw_path = scratch.write("raw", &raw);
    let image = scratch.path("bound.img");
    run_ok(
        cryptadm()
            .args(["disk", "luks-format", "--from"])
            .arg(&raw_path)
            .arg("--key-file")
            .arg(&pass)
            .args(FAST_KDF)
            .arg(&image),
        "luks-format --from",
    );
    for (pin, config) in [("tang", trio.tangs[2].config()), ("sss", trio.sss_config(2))] {
        run_ok(
            std::process::Command::new("clevis")
                .args(["luks", "bind", "-y", "-k"])
                .arg(&pass)
                .arg("-d")
                .arg(&image)
                .args([pin, &config]),
            "clevis luks bind",
        );
    }
    // Keyslot 0 is the passphrase's; the two clevis bindings are keyslots 1 and 2. Drop the passphrase's keyslot
    // so that only a clevis binding can open the volume.
    run_ok(
        std::process::Command::new("cryptsetup").args(["luksKillSlot", "-q"]).arg(&image).arg("0"),
        "cryptsetup luksKillSlot",
    );
    let out = scratch.path("decrypted.raw");
    run_ok(cryptadm().args(["disk", "decrypt", "--clevis"]).arg(&image).arg("--out").arg(&out), "decrypt --clevis");
    assert_eq!(std::fs::read(&out).unwrap(), raw);
    let inspect = String::from_utf8(run_ok(cryptadm().args(["disk", "inspect"]).arg(&image), "inspect")).unwrap();
    assert!(inspect.contains("clevis: sss 2 of [tang"), "{inspect}");
}

#[test]
fn a_binding_that_cannot_be_made_or_used_leaves_the_volume_alone() {
    let scratch = Scratch::new();
    let pass = scratch.write("pass", b"pw");
    let image = scratch.path("plain.img");
    run_ok(
        cryptadm().args(["disk", "luks-format", "--size", "2M", "--key-file"]).arg(&pass).args(FAST_KDF).arg(&image),
        "luks-format",
    );
    let before = std::fs::read(&image).unwrap();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let gone = format!(r#"{{"url":"http://127.0.0.1:{closed}"}}"#);
    let output = cryptadm()
        .args(["disk", "clevis-bind", "--key-file"])
        .arg(&pass)
        .args(["--clevis-pin", "tang", "--clevis-config", &gone, "--clevis-trust-adv"])
        .arg(&image)
        .output()
        .unwrap();
    assert_failed(&output, 1, &["is unavailable", "hint:"]);
    assert_eq!(std::fs::read(&image).unwrap(), before, "the volume is untouched");
    let fresh = scratch.path("fresh.img");
    let output = cryptadm()
        .args(["disk", "luks-format", "--size", "2M", "--key-file"])
        .arg(&pass)
        .args(["--clevis-pin", "tang", "--clevis-config", &gone, "--clevis-trust-adv"])
        .arg(&fresh)
        .output()
        .unwrap();
    assert_failed(&output, 1, &["is unavailable"]);
    assert!(!fresh.exists(), "nothing is written when the server cannot be reached");
    let output = cryptadm()
        .args(["disk", "decrypt", "--clevis"])
        .arg(&image)
        .arg("--out")
        .arg(scratch.path("x"))
        .output()
        .unwrap();
    assert_failed(&output, 5, &["no clevis binding"]);
    assert!(!scratch.path("x").exists());
}

/// A LUKS2 volume whose key store (`file://`) holds its passphrase, bound by `clevis luks bind` (keyslot 1).
struct BoundVolume {
    scratch: Scratch,
    image: PathBuf,
}

const VOLUME_ID: &str = "pvc-clevis";
const OLD_KEY: &[u8] = b"the stored key";

impl BoundVolume {
    fn new(tang_config: &str) -> Self {
        let scratch = Scratch::new();
        let image = scratch.path("volume.img");
        std::fs::File::create(&image).unwrap().set_len(20 << 20).unwrap();
        let old = scratch.write("old.key", OLD_KEY);
        run_ok(
            std::process::Command::new("cryptsetup")
                .args(["luksFormat", "-q", "--type", "luks2", "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000"])
                .arg("--key-file")
                .arg(&old)
                .arg(&image),
            "cryptsetup luksFormat",
        );
        run_ok(
            std::process::Command::new("clevis")
                .args(["luks", "bind", "-y", "-k"])
                .arg(&old)
                .arg("-d")
                .arg(&image)
                .args(["tang", tang_config]),
            "clevis luks bind",
        );
        let volume = Self { scratch, image };
        let entry = volume.store().join(VOLUME_ID);
        std::fs::create_dir_all(&entry).unwrap();
        std::fs::write(entry.join("current"), OLD_KEY).unwrap();
        volume
    }

    fn store(&self) -> PathBuf {
        self.scratch.path("keys")
    }

    fn rotate(&self) -> assert_cmd::Command {
        let mut cmd = cryptadm();
        cmd.env("CRYPTADM_RUN_DIR", self.scratch.path("run"))
            .args(["volume", "rotate", "--volume-id", VOLUME_ID, "--volume-path"])
            .arg(&self.image)
            .args(["--key-store", &format!("file://{}", self.store().display())]);
        cmd
    }

    fn current_key(&self) -> Vec<u8> {
        std::fs::read(self.store().join(VOLUME_ID).join("current")).unwrap()
    }

    /// cryptsetup's own check that `key` opens the volume.
    fn opens(&self, key: &[u8]) -> bool {
        let file = self.scratch.write("probe.key", key);
        std::process::Command::new("cryptsetup")
            .args(["open", "--test-passphrase", "--key-file"])
            .arg(file)
            .arg(&self.image)
            .status()
            .unwrap()
            .success()
    }

    /// The clevis binding is intact: token 0 of type clevis on keyslot 1, and `clevis luks pass` opens keyslot 1.
    fn assert_binding_intact(&self) {
        let dump = run_ok(
            std::process::Command::new("cryptsetup").args(["luksDump", "--dump-json-metadata"]).arg(&self.image),
            "luksDump",
        );
        let meta: serde_json::Value = serde_json::from_slice(&dump).unwrap();
        assert_eq!(meta["tokens"]["0"]["type"], "clevis");
        assert_eq!(meta["tokens"]["0"]["keyslots"], serde_json::json!(["1"]));
        assert_clevis_luks_pass_opens(&self.image, "1", &self.scratch);
    }
}

#[test]
fn volume_rotate_keeps_the_clevis_binding_and_says_so() {
    let trio = servers();
    let volume = BoundVolume::new(&trio.tangs[0].config());
    let output = volume.rotate().output().unwrap();
    assert_ok(&output, "volume rotate");
    let text = stderr(&output);
    assert!(text.contains("removed keyslot(s) 0"), "{text}");
    assert!(
        text.contains(&format!("kept the clevis binding: token 0, keyslot(s) 1 (tang {})", trio.tangs[0].url())),
        "{text}"
    );
    let current = volume.current_key();
    assert_ne!(current, OLD_KEY);
    assert!(volume.opens(&current) && !volume.opens(OLD_KEY));
    volume.assert_binding_intact();
}

/// Every crash point of the fault-injection build: after the crash both the stored key and the clevis binding
/// open the volume; the rerun completes and the binding is still intact. Run by `.ci/run` (`volume_faults`).
#[test]
#[cfg_attr(not(feature = "fault-injection"), ignore = "needs `--features fault-injection` (.ci/run runs it)")]
fn volume_faults_keep_the_clevis_binding() {
    let trio = servers();
    for step in cryptadm::volume::Step::ALL {
        let volume = BoundVolume::new(&trio.tangs[1].config());
        let output = volume.rotate().env("CRYPTADM_FAULT_POINT", step.name()).output().unwrap();
        assert_eq!(output.status.code(), None, "{step}: the process did not crash: {}", stderr(&output));
        assert!(volume.opens(&volume.current_key()), "after a crash at {step}: the stored key opens nothing");
        volume.assert_binding_intact();
        assert_ok(&volume.rotate().output().unwrap(), &format!("rerun after {step}"));
        assert!(volume.opens(&volume.current_key()) && !volume.opens(OLD_KEY), "after {step}");
        volume.assert_binding_intact();
    }
}

/// `--cloud-init` and `--ignition` output for `--provider clevis` passes cloud-init's schema check and
/// ignition-validate without a word (the first boot itself: `guest_tang.rs`).
#[test]
fn clevis_sealed_cloud_init_and_ignition_outputs_validate() {
    let trio = servers();
    let scratch = Scratch::new();
    let config = trio.tangs[0].config();
    for (flag, checker, args) in
        [("--cloud-init", "cloud-init", &["schema", "--config-file"][..]), ("--ignition", "ignition-validate", &[][..])]
    {
        let output = seal(&scratch, "tang", &config, &[flag]);
        assert_ok(&output, flag);
        let rendered = std::fs::read(scratch.path("sealed.yaml")).unwrap();
        assert!(String::from_utf8_lossy(&rendered).len() > 1000, "{flag}: the JWE is in the output");
        let file = scratch.write("rendered", &rendered);
        let checked = std::process::Command::new(checker).args(args).arg(&file).output().unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&checked.stdout), stderr(&checked)).to_lowercase();
        assert!(checked.status.success(), "{checker}: {text}");
        for word in ["error", "deprecat", "warning", "invalid", "unused"] {
            assert!(!text.contains(word), "{checker} printed `{word}`: {text}");
        }
        std::fs::remove_file(scratch.path("sealed.yaml")).unwrap();
    }
}

/// An altered JWE does not open (exit 15, no output), and a second writer on a volume being bound is refused at
/// once (exit 10) before any server is asked.
#[test]
fn altered_jwes_and_concurrent_binds_are_refused() {
    let trio = servers();
    let scratch = Scratch::new();
    assert_ok(&seal(&scratch, "tang", &trio.tangs[0].config(), &[]), "seal");
    let document = std::fs::read_to_string(scratch.path("sealed.yaml")).unwrap();
    let jwe = recorded_jwe(&scratch);
    let tag_at = jwe.rfind('.').unwrap() + 1;
    let mut altered = jwe.clone().into_bytes();
    altered[tag_at] = if altered[tag_at] == b'A' { b'B' } else { b'A' };
    let altered = String::from_utf8(altered).unwrap();
    scratch.write("sealed.yaml", document.replace(&jwe, &altered));
    assert_failed(&open(&scratch, &[]), 15, &["does not decrypt"]);
    assert!(!scratch.path("opened.yaml").exists());

    let pass = scratch.write("pass", b"pw");
    let image = scratch.path("busy.img");
    run_ok(
        cryptadm().args(["disk", "luks-format", "--size", "2M", "--key-file"]).arg(&pass).args(FAST_KDF).arg(&image),
        "luks-format",
    );
    let mut holder = std::process::Command::new("flock").arg(&image).args(["sleep", "30"]).spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let output = cryptadm()
        .args(["disk", "clevis-bind", "--key-file"])
        .arg(&pass)
        .args(["--clevis-pin", "tang", "--clevis-config", &trio.tangs[0].config()])
        .arg(&image)
        .output()
        .unwrap();
    let _ = holder.kill();
    let _ = holder.wait();
    assert_failed(&output, 10, &[]);
}
