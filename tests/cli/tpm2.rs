//! TPM 2.0, proven against Debian's `swtpm` on loopback ([`crate::support_tpm2`]) with tpm2-tools and clevis's
//! `tpm2` pin as the oracles: the client's PCR_Read, GetCapability, GetRandom and trial-session policy digests agree
//! with `tpm2_pcrread` and `tpm2_createpolicy`; `clevis decrypt` opens what `bootstrap seal --clevis-pin tpm2`
//! seals and cryptadm opens what `clevis encrypt tpm2` made, for every configuration key clevis takes; a PCR
//! extended between seal and open is refused (16) with nothing written; bad devices are refused before any work.

use crate::support::{Scratch, cryptadm};
use crate::support_tpm2::{Swtpm, tpm};
use cryptadm::kms::tpm2::{self, Device, Hash, PcrSelection, Tpm};

const CONFIG: &[u8] = b"apiVersion: v1\nkind: Config\nclusters: [tpm2]\n";

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn assert_ok(output: &std::process::Output, what: &str) {
    assert!(output.status.success(), "{what} failed: {}", stderr(output));
}

fn assert_failed(output: &std::process::Output, code: i32, needles: &[&str]) {
    let text = stderr(output);
    assert_eq!(output.status.code(), Some(code), "{text}");
    for needle in needles {
        assert!(text.contains(needle), "`{needle}` missing from: {text}");
    }
}

fn open_client(swtpm: &Swtpm) -> Tpm {
    Tpm::open(&Device::parse(&swtpm.tcti()).unwrap()).unwrap()
}

/// `bootstrap seal --provider clevis --clevis-pin PIN --clevis-config CONFIG` into `sealed.yaml`, the TPM named by
/// --tpm2-device.
fn seal(swtpm: &Swtpm, scratch: &Scratch, pin: &str, config: &str) -> std::process::Output {
    let input = scratch.write("config.yaml", CONFIG);
    cryptadm()
        .args(["bootstrap", "seal", "--provider", "clevis", "--clevis-pin", pin, "--clevis-config", config])
        .args(["--tpm2-device", &swtpm.tcti()])
        .arg("--in")
        .arg(input)
        .arg("--out")
        .arg(scratch.path("sealed.yaml"))
        .output()
        .expect("run cryptadm")
}

/// `bootstrap open` of `sealed.yaml`, the TPM named by tpm2-tools' TPM2TOOLS_TCTI.
fn open(swtpm: &Swtpm, scratch: &Scratch) -> std::process::Output {
    cryptadm()
        .env("TPM2TOOLS_TCTI", swtpm.tcti())
        .args(["bootstrap", "open", "--in"])
        .arg(scratch.path("sealed.yaml"))
        .arg("--out")
        .arg(scratch.path("opened.yaml"))
        .output()
        .expect("run cryptadm")
}

/// The JWE in the sealed document's `passphraseURI: clevis:<JWE>`.
fn recorded_jwe(scratch: &Scratch) -> String {
    let document = std::fs::read_to_string(scratch.path("sealed.yaml")).unwrap();
    let line = document.lines().find(|l| l.trim_start().starts_with("passphraseURI:")).expect("a passphraseURI");
    let uri = line.split_once(':').unwrap().1.trim().trim_matches(|c| c == '"' || c == '\'');
    uri.strip_prefix("clevis:").unwrap_or_else(|| panic!("not a clevis URI: {uri}")).to_owned()
}

fn header_of(jwe: &str) -> serde_json::Value {
    let bytes =
        base64::Engine::decode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, jwe.split('.').next().unwrap())
            .unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

/// The Python sealer seals [`CONFIG`] with `passphrase`, recording `provider: clevis` and `clevis:<jwe>`.
fn python_seals(scratch: &Scratch, passphrase: &[u8], jwe: &str) {
    let pass = scratch.write("pass", passphrase);
    let input = scratch.write("config.yaml", CONFIG);
    let output = std::process::Command::new("python3")
        .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/machineadm_oracle.py"))
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

#[test]
fn the_client_reads_what_tpm2_tools_read() {
    let swtpm = tpm();
    let scratch = Scratch::new();
    // Something other than the reset value in PCR 16 (resettable, used by no other test) of both banks.
    swtpm.tools(
        "tpm2_pcrextend",
        &["16:sha1=0101010101010101010101010101010101010101,sha256=0202020202020202020202020202020202020202020202020202020202020202"],
        b"",
    );
    // The simulator serves one connection at a time: the tools run while no client is open.
    let all: Vec<String> = (0..=23).map(|i: u8| i.to_string()).collect();
    let banks = [Hash::Sha1, Hash::Sha256, Hash::Sha384];
    let theirs: Vec<Vec<u8>> = banks
        .iter()
        .map(|bank| {
            let file = scratch.path(&format!("pcrs-{}", bank.name()));
            let spec = format!("{}:{}", bank.name(), all.join(","));
            swtpm.tools("tpm2_pcrread", &[&spec, "-o", file.to_str().unwrap()], b"");
            std::fs::read(&file).unwrap()
        })
        .collect();
    let mut client = open_client(&swtpm);
    let allocated = client.pcr_banks().unwrap();
    assert!(allocated.contains(&Hash::Sha1) && allocated.contains(&Hash::Sha256), "{allocated:?}");
    for (bank, theirs) in banks.iter().zip(&theirs) {
        let selection = PcrSelection::parse(*bank, &all.join(",")).unwrap();
        // 24 PCRs take several PCR_Read commands (a TPM answers at most 8 digests per command).
        let ours = client.pcr_read(&selection).unwrap().concat();
        assert_eq!(&ours, theirs, "{}", bank.name());
        if *bank != Hash::Sha384 {
            assert_ne!(ours[16 * bank.size()..17 * bank.size()], vec![0u8; bank.size()][..], "PCR 16 was extended");
        }
    }
    // The policy digest of PolicyPCR: computed here, by the TPM in a trial session, and by tpm2_createpolicy.
    let selection = PcrSelection::parse(Hash::Sha256, "0,7,16").unwrap();
    let values = client.pcr_read(&selection).unwrap().concat();
    let computed = tpm2::policy_pcr_digest(Hash::Sha256, &selection, &values);
    assert_eq!(client.trial_policy_pcr(Hash::Sha256, &selection, &values).unwrap(), computed);
    let random = client.get_random(100).unwrap();
    assert_eq!(random.len(), 100);
    assert_ne!(random, client.get_random(100).unwrap());
    drop(client);
    let values_file = scratch.write("values", &values);
    let policy_file = scratch.path("policy");
    swtpm.tools(
        "tpm2_createpolicy",
        &[
            "--policy-pcr",
            "-l",
            "sha256:0,7,16",
            "-f",
            values_file.to_str().unwrap(),
            "-L",
            policy_file.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(std::fs::read(&policy_file).unwrap(), computed);
    swtpm.tools("tpm2_pcrreset", &["16"], b"");
}

#[test]
fn clevis_decrypt_opens_what_cryptadm_seals() {
    let swtpm = tpm();
    for config in [r#"{"pcr_ids":"7"}"#, r#"{}"#, r#"{"pcr_ids":[0,7],"pcr_bank":"sha256","key":"rsa"}"#] {
        let scratch = Scratch::new();
        assert_ok(&seal(&swtpm, &scratch, "tpm2", config), &format!("seal {config}"));
        let jwe = recorded_jwe(&scratch);
        let header = header_of(&jwe);
        assert_eq!(header["alg"], "dir");
        assert_eq!(header["enc"], "A256GCM");
        assert_eq!(header["clevis"]["pin"], "tpm2");
        let recovered = swtpm.run("clevis", &["decrypt"], jwe.as_bytes());
        assert_ok(&recovered, &format!("clevis decrypt of {config}"));
        assert_eq!(recovered.stdout.len(), 43, "a 256-bit printable passphrase");
        assert_ok(&open(&swtpm, &scratch), "open");
        assert_eq!(std::fs::read(scratch.path("opened.yaml")).unwrap(), CONFIG);
    }
}

#[test]
fn cryptadm_opens_what_clevis_encrypts() {
    let swtpm = tpm();
    let scratch = Scratch::new();
    // pcr_digest: the PCRs' values as `tpm2_pcrread -o` writes them, base64url (here their current values).
    let values = scratch.path("values");
    swtpm.tools("tpm2_pcrread", &["sha256:7", "-o", values.to_str().unwrap()], b"");
    let digest =
        base64::Engine::encode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, std::fs::read(&values).unwrap());
    let with_digest = format!(r#"{{"pcr_ids":"7","pcr_bank":"sha256","pcr_digest":"{digest}"}}"#);
    for config in [
        r#"{}"#,
        r#"{"pcr_ids":"7"}"#,
        r#"{"pcr_ids":"0,7","pcr_bank":"sha256"}"#,
        r#"{"key":"rsa","pcr_ids":"7","pcr_bank":"sha256"}"#,
        r#"{"hash":"sha384","pcr_ids":"7","pcr_bank":"sha384"}"#,
        with_digest.as_str(),
    ] {
        let scratch = Scratch::new();
        let passphrase = b"clevis-made passphrase \xff";
        let jwe = swtpm.tools("clevis", &["encrypt", "tpm2", config], passphrase);
        python_seals(&scratch, passphrase, std::str::from_utf8(&jwe).unwrap().trim());
        assert_ok(&open(&swtpm, &scratch), &format!("open of a `clevis encrypt tpm2 {config}` document"));
        assert_eq!(std::fs::read(scratch.path("opened.yaml")).unwrap(), CONFIG);
    }
}

#[test]
fn a_pcr_extended_after_sealing_refuses_the_secret() {
    let swtpm = tpm();
    let scratch = Scratch::new();
    swtpm.tools("tpm2_pcrreset", &["23"], b"");
    assert_ok(&seal(&swtpm, &scratch, "tpm2", r#"{"pcr_ids":"7,23","pcr_bank":"sha256"}"#), "seal");
    let clevis_made = swtpm.tools("clevis", &["encrypt", "tpm2", r#"{"pcr_ids":"23","pcr_bank":"sha1"}"#], b"x");
    swtpm.tools("tpm2_pcrextend", &["23:sha1=0303030303030303030303030303030303030303,sha256=0404040404040404040404040404040404040404040404040404040404040404"], b"");
    let refused = open(&swtpm, &scratch);
    assert_failed(&refused, 16, &["PCR 7,23", "sha256 bank", "hint:"]);
    assert!(!scratch.path("opened.yaml").exists(), "nothing written");
    // clevis agrees: its own JWE and ours stay closed.
    assert!(!swtpm.run("clevis", &["decrypt"], recorded_jwe(&scratch).as_bytes()).status.success());
    python_seals(&scratch, b"x", std::str::from_utf8(&clevis_made).unwrap().trim());
    assert_failed(&open(&swtpm, &scratch), 16, &["PCR 23", "sha1 bank"]);
    swtpm.tools("tpm2_pcrreset", &["23"], b"");
    assert_ok(&open(&swtpm, &scratch), "open once PCR 23 is back");
}

#[test]
fn bad_and_absent_devices_are_refused() {
    let swtpm = tpm();
    let scratch = Scratch::new();
    let input = scratch.write("config.yaml", CONFIG);
    let seal_with = |device: &str| {
        cryptadm()
            .args(["bootstrap", "seal", "--provider", "clevis", "--clevis-pin", "tpm2", "--clevis-config", "{}"])
            .args(["--tpm2-device", device, "--in"])
            .arg(&input)
            .arg("--out")
            .arg(scratch.path("sealed.yaml"))
            .output()
            .unwrap()
    };
    assert_failed(&seal_with("tabrmd:bus_name=x"), 3, &["--tpm2-device", "TCTI"]);
    assert_failed(&seal_with("/nonexistent/tpmrm0"), 1, &["/nonexistent/tpmrm0", "hint:"]);
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    assert_failed(&seal_with(&format!("swtpm:host=127.0.0.1,port={closed}")), 1, &["cannot reach the TPM"]);
    assert!(!scratch.path("sealed.yaml").exists(), "nothing written");
    let config = r#"{"pcr_ids":"24"}"#;
    assert_failed(&seal(&swtpm, &scratch, "tpm2", config), 3, &["PCR `24`"]);
    assert_failed(&seal(&swtpm, &scratch, "tpm2", r#"{"pcr_bank":"md5","pcr_ids":"7"}"#), 3, &["md5"]);
}

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

/// A LUKS2 image of `raw` that cryptsetup made, with passphrase `pass`.
fn cryptsetup_image(scratch: &Scratch, name: &str, pass: &std::path::Path) -> std::path::PathBuf {
    let image = scratch.path(name);
    std::fs::File::create(&image).unwrap().set_len(20 << 20).unwrap();
    run_ok(
        std::process::Command::new("cryptsetup")
            .args(["luksFormat", "-q", "--type", "luks2", "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000"])
            .arg("--key-file")
            .arg(pass)
            .arg(&image),
        "cryptsetup luksFormat",
    );
    image
}

/// `cryptsetup open --test-passphrase` of keyslot `slot` with `passphrase`.
fn assert_keyslot_opens(scratch: &Scratch, image: &std::path::Path, slot: &str, passphrase: &[u8]) {
    let file = scratch.write(&format!("pass-{slot}"), passphrase);
    run_ok(
        std::process::Command::new("cryptsetup")
            .args(["open", "--test-passphrase", "--key-slot", slot, "--key-file"])
            .arg(file)
            .arg(image),
        "cryptsetup open --test-passphrase",
    );
}

fn luks_tokens(image: &std::path::Path) -> serde_json::Value {
    let dump = run_ok(
        std::process::Command::new("cryptsetup").args(["luksDump", "--dump-json-metadata"]).arg(image),
        "luksDump",
    );
    serde_json::from_slice::<serde_json::Value>(&dump).unwrap()["tokens"].clone()
}

#[test]
fn clevis_luks_opens_volumes_cryptadm_binds_to_the_tpm() {
    let swtpm = tpm();
    let scratch = Scratch::new();
    let pass = scratch.write("pass", b"the first passphrase");
    let formatted = scratch.path("formatted.img");
    run_ok(
        cryptadm()
            .args(["disk", "luks-format", "--size", "4M", "--key-file"])
            .arg(&pass)
            .args(FAST_KDF)
            .args(["--clevis-pin", "tpm2", "--clevis-config", r#"{"pcr_ids":"7","pcr_bank":"sha256"}"#])
            .args(["--tpm2-device", &swtpm.tcti()])
            .arg(&formatted),
        "luks-format --clevis-pin tpm2",
    );
    assert_eq!(luks_tokens(&formatted)["0"]["type"], "clevis");
    let formatted_arg = formatted.to_str().unwrap();
    let pass1 = swtpm.tools("clevis", &["luks", "pass", "-d", formatted_arg, "-s", "1"], b"");
    assert_eq!(pass1.len(), 43, "a 256-bit printable passphrase");
    assert_keyslot_opens(&scratch, &formatted, "1", &pass1);
    // clevis-bind on a volume cryptsetup made.
    let theirs = cryptsetup_image(&scratch, "cryptsetup.img", &pass);
    run_ok(
        cryptadm()
            .env("CRYPTADM_TPM2_DEVICE", swtpm.tcti())
            .args(["disk", "clevis-bind", "--key-file"])
            .arg(&pass)
            .args(["--clevis-pin", "tpm2", "--clevis-config", r#"{"pcr_ids":"0,7"}"#])
            .arg(&theirs),
        "disk clevis-bind --clevis-pin tpm2",
    );
    let pass1 = swtpm.tools("clevis", &["luks", "pass", "-d", theirs.to_str().unwrap(), "-s", "1"], b"");
    assert_keyslot_opens(&scratch, &theirs, "1", &pass1);
    let inspect = String::from_utf8(run_ok(cryptadm().args(["disk", "inspect"]).arg(&theirs), "inspect")).unwrap();
    assert!(inspect.contains("clevis: tpm2 sha1:0,7"), "{inspect}");
}

#[test]
fn cryptadm_opens_volumes_clevis_luks_binds_to_the_tpm() {
    let swtpm = tpm();
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
    let image_arg = image.to_str().unwrap();
    swtpm.tools(
        "clevis",
        &["luks", "bind", "-k", pass.to_str().unwrap(), "-d", image_arg, "tpm2", r#"{"pcr_ids":"7"}"#],
        b"",
    );
    // Only the binding opens it now.
    run_ok(std::process::Command::new("cryptsetup").args(["luksKillSlot", "-q", image_arg, "0"]), "luksKillSlot");
    let out = scratch.path("decrypted.raw");
    run_ok(
        cryptadm()
            .args(["disk", "decrypt", "--clevis", "--tpm2-device", &swtpm.tcti()])
            .arg(&image)
            .arg("--out")
            .arg(&out),
        "decrypt --clevis",
    );
    assert_eq!(std::fs::read(&out).unwrap(), raw);
    let inspect = String::from_utf8(run_ok(cryptadm().args(["disk", "inspect"]).arg(&image), "inspect")).unwrap();
    assert!(inspect.contains("clevis: tpm2 sha1:7"), "{inspect}");
}

#[test]
fn systemd_tpm2_tokens_open_both_ways() {
    let swtpm = tpm();
    let scratch = Scratch::new();
    let pass = scratch.write("pass", b"pw");
    let raw: Vec<u8> = (0..(1u32 << 20)).map(|i| (i.wrapping_mul(2246822519) >> 24) as u8).collect();
    let raw_path = scratch.write("raw", &raw);
    // systemd-cryptenroll enrols, cryptadm opens and shows.
    let image = scratch.path("enrolled.img");
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
    let enrolled = swtpm
        .command("systemd-cryptenroll")
        .env("PASSWORD", "pw")
        .arg(format!("--tpm2-device={}", swtpm.tcti()))
        .args(["--tpm2-pcrs=7"])
        .arg(&image)
        .output()
        .unwrap();
    swtpm.flush();
    assert_ok(&enrolled, "systemd-cryptenroll --tpm2-device");
    assert_eq!(luks_tokens(&image)["0"]["type"], "systemd-tpm2");
    run_ok(std::process::Command::new("cryptsetup").args(["luksKillSlot", "-q"]).arg(&image).arg("0"), "luksKillSlot");
    let out = scratch.path("decrypted.raw");
    run_ok(
        cryptadm()
            .args(["disk", "decrypt", "--tpm2", "--tpm2-device", &swtpm.tcti()])
            .arg(&image)
            .arg("--out")
            .arg(&out),
        "decrypt --tpm2",
    );
    assert_eq!(std::fs::read(&out).unwrap(), raw);
    let inspect = String::from_utf8(run_ok(cryptadm().args(["disk", "inspect"]).arg(&image), "inspect")).unwrap();
    assert!(inspect.contains("tpm2: systemd-tpm2 sha256:7 (ecc)"), "{inspect}");

    // cryptadm enrols; systemd-cryptenroll lists the slot, and its secret opens the keyslot.
    let theirs = cryptsetup_image(&scratch, "ours.img", &pass);
    run_ok(
        cryptadm()
            .args(["disk", "tpm2-enroll", "--key-file"])
            .arg(&pass)
            .args(["--tpm2-pcrs", "7", "--tpm2-device", &swtpm.tcti()])
            .arg(&theirs),
        "disk tpm2-enroll",
    );
    let tokens = luks_tokens(&theirs);
    assert_eq!(tokens["0"]["type"], "systemd-tpm2");
    assert_eq!(tokens["0"]["keyslots"], serde_json::json!(["1"]));
    assert_eq!(tokens["0"]["tpm2-pcrs"], serde_json::json!([7]));
    assert_eq!(tokens["0"]["tpm2-pcr-bank"], "sha256");
    let listed = run_ok(swtpm.command("systemd-cryptenroll").arg(&theirs), "systemd-cryptenroll (list)");
    let listed = String::from_utf8(listed).unwrap();
    assert!(listed.lines().any(|l| l.split_whitespace().eq(["1", "tpm2"])), "{listed}");
    // tpm2-tools unseal the token's blob as systemd-cryptsetup does (the owner hierarchy's ECC primary key, a
    // PolicyPCR session), and the secret's base64 opens the keyslot.
    let blob =
        base64::Engine::decode(&base64::engine::general_purpose::STANDARD, tokens["0"]["tpm2-blob"].as_str().unwrap())
            .unwrap();
    let private_len = 2 + usize::from(u16::from_be_bytes([blob[0], blob[1]]));
    let private = scratch.write("sealed.priv", &blob[..private_len]);
    let public = scratch.write("sealed.pub", &blob[private_len..]);
    let (primary, object) = (scratch.path("primary.ctx"), scratch.path("object.ctx"));
    let path = |p: &std::path::PathBuf| p.to_str().unwrap().to_owned();
    swtpm.tools("tpm2_createprimary", &["-Q", "-C", "o", "-g", "sha256", "-G", "ecc", "-c", &path(&primary)], b"");
    swtpm.tools(
        "tpm2_load",
        &["-Q", "-C", &path(&primary), "-u", &path(&public), "-r", &path(&private), "-c", &path(&object)],
        b"",
    );
    let secret = swtpm.run("tpm2_unseal", &["-c", &path(&object), "-p", "pcr:sha256:7"], b"");
    assert_ok(&secret, "tpm2_unseal");
    assert_eq!(secret.stdout.len(), 32);
    let passphrase = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &secret.stdout);
    assert_keyslot_opens(&scratch, &theirs, "1", passphrase.as_bytes());
    run_ok(std::process::Command::new("cryptsetup").args(["luksKillSlot", "-q"]).arg(&theirs).arg("0"), "luksKillSlot");
    let out = scratch.path("ours.raw");
    run_ok(
        cryptadm()
            .env("TPM2TOOLS_TCTI", swtpm.tcti())
            .args(["disk", "decrypt", "--tpm2"])
            .arg(&theirs)
            .arg("--out")
            .arg(&out),
        "decrypt --tpm2 of our enrolment",
    );
    assert_eq!(std::fs::read(&out).unwrap().len(), std::fs::metadata(&theirs).unwrap().len() as usize - (16 << 20));
}

#[test]
fn sss_of_tang_and_tpm2_both_ways() {
    let trio = crate::support_tang::servers();
    let swtpm = tpm();
    swtpm.tools("tpm2_pcrreset", &["23"], b"");
    let tang = trio.tangs[0].config();
    // t=2 of a Tang server and the TPM (PCR 23): clevis opens what cryptadm sealed, and cryptadm opens it.
    let both = format!(r#"{{"t":2,"pins":{{"tang":[{tang}],"tpm2":{{"pcr_ids":"23","pcr_bank":"sha256"}}}}}}"#);
    let scratch = Scratch::new();
    assert_ok(&seal(&swtpm, &scratch, "sss", &both), "seal sss tang+tpm2");
    let header = header_of(&recorded_jwe(&scratch));
    assert_eq!(header["clevis"]["pin"], "sss");
    assert_ok(&swtpm.run("clevis", &["decrypt"], recorded_jwe(&scratch).as_bytes()), "clevis decrypt of sss");
    assert_ok(&open(&swtpm, &scratch), "open sss tang+tpm2");
    // t=1 of the same: survives a changed PCR through Tang; t=2 is refused, naming the TPM's PCR.
    let either = both.replacen(r#""t":2"#, r#""t":1"#, 1);
    let scratch1 = Scratch::new();
    assert_ok(&seal(&swtpm, &scratch1, "sss", &either), "seal sss t=1");
    // clevis's own sss of tang+tpm2, for cryptadm to open.
    let clevis_made = swtpm.tools("clevis", &["encrypt", "sss", &both, "-y"], b"p");
    swtpm.tools("tpm2_pcrextend", &["23:sha256=0505050505050505050505050505050505050505050505050505050505050505"], b"");
    std::fs::remove_file(scratch.path("opened.yaml")).unwrap();
    assert_failed(&open(&swtpm, &scratch), 1, &["1 of the 2 pins", "PCR 23", "sha256 bank"]);
    assert!(!scratch.path("opened.yaml").exists(), "nothing written");
    assert_ok(&open(&swtpm, &scratch1), "open sss t=1 through Tang");
    swtpm.tools("tpm2_pcrreset", &["23"], b"");
    let scratch2 = Scratch::new();
    python_seals(&scratch2, b"p", std::str::from_utf8(&clevis_made).unwrap().trim());
    assert_ok(&open(&swtpm, &scratch2), "open of clevis's sss tang+tpm2");
}

/// sss of a Tang server, the TPM and an AWS KMS key (cryptadm's `aws-kms` extension pin), t=2: `bootstrap open`
/// opens with any two of them and fails with one, naming each pin that failed and why; `clevis decrypt` opens the
/// same JWE through its own pins (tang, tpm2), counting the aws-kms pin it does not know as failed.
#[test]
fn sss_of_tang_tpm2_and_aws_kms_opens_with_any_two() {
    let trio = crate::support_tang::servers_mut();
    let swtpm = tpm();
    let moto = crate::support_aws::moto();
    let _aws = moto.lock();
    let (tang, key) = (&trio.tangs[2], &moto.key);
    let config = format!(
        r#"{{"t":2,"pins":{{"tang":[{}],"tpm2":{{"pcr_ids":"7","pcr_bank":"sha256"}},"aws-kms":[{{"key":"{key}"}}]}}}}"#,
        tang.config()
    );
    let scratch = Scratch::new();
    let input = scratch.write("config.yaml", CONFIG);
    let mut seal = cryptadm();
    // The sealer may only Encrypt (and GenerateDataKey).
    moto.env_with(&mut seal, &moto.sealer);
    seal.args(["bootstrap", "seal", "--provider", "clevis", "--clevis-pin", "sss", "--clevis-config", &config])
        .args(["--tpm2-device", &swtpm.tcti(), "--in"])
        .arg(&input)
        .arg("--out")
        .arg(scratch.path("sealed.yaml"));
    assert_ok(&seal.output().unwrap(), "seal sss tang+tpm2+aws-kms");
    let jwe = recorded_jwe(&scratch);
    let header = header_of(&jwe);
    let children: Vec<serde_json::Value> =
        header["clevis"]["sss"]["jwe"].as_array().unwrap().iter().map(|c| header_of(c.as_str().unwrap())).collect();
    let pins: Vec<&str> = children.iter().map(|c| c["clevis"]["pin"].as_str().unwrap()).collect();
    assert_eq!(pins, ["tang", "tpm2", "aws-kms"]);
    let aws_pin = &children[2]["clevis"]["aws-kms"];
    assert_eq!(aws_pin["key"], key.as_str());
    // The wrapped content key is a CiphertextBlob that boto3 decrypts to 32 bytes.
    assert_eq!(moto.decrypt(&scratch, aws_pin["wrapped"].as_str().unwrap().as_bytes()).len(), 32);
    let clevis = swtpm.run("clevis", &["decrypt"], jwe.as_bytes());
    assert_ok(&clevis, "clevis decrypt of sss tang+tpm2+aws-kms");
    assert_eq!(clevis.stdout.len(), 43, "a 256-bit printable passphrase");

    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let no_tpm = format!("swtpm:host=127.0.0.1,port={closed}");
    // `bootstrap open` with the TPM at `device` and the AWS `keys` (none: no credentials at all).
    let open_with = |name: &str, device: &str, keys: Option<&(String, String)>| {
        let mut open = cryptadm();
        match keys {
            Some(keys) => moto.env_with(&mut open, keys),
            None => moto.bare_env(&mut open),
        }
        let out = scratch.path(&format!("opened-{name}.yaml"));
        let output = open
            .env("CRYPTADM_TPM2_DEVICE", device)
            .args(["bootstrap", "open", "--retries", "0", "--in"])
            .arg(scratch.path("sealed.yaml"))
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        (output, out)
    };
    let opens = |name: &str, device: &str, keys: Option<&(String, String)>| {
        let (output, out) = open_with(name, device, keys);
        assert_ok(&output, &format!("open with {name}"));
        assert_eq!(std::fs::read(&out).unwrap(), CONFIG, "{name}");
    };
    let tcti = swtpm.tcti();
    opens("tang+tpm2", &tcti, None);
    opens("tang+aws-kms", &no_tpm, Some(&moto.admin));
    // Only tang: both other pins named with their causes, nothing written.
    let (refused, out) = open_with("tang-only", &no_tpm, None);
    assert_failed(
        &refused,
        1,
        &["1 of the 2 pins", "tpm2 sha256:7: ", "cannot reach the TPM", &format!("aws-kms {key}: "), "hint:"],
    );
    assert!(!out.exists(), "nothing written");
    // The same binding on a volume cryptsetup made: `clevis luks pass` recovers it through tang+tpm2.
    let pass = scratch.write("pass", b"the first passphrase");
    let image = cryptsetup_image(&scratch, "bound.img", &pass);
    let mut bind = cryptadm();
    moto.env_with(&mut bind, &moto.sealer);
    run_ok(
        bind.args(["disk", "clevis-bind", "--key-file"])
            .arg(&pass)
            .args(["--clevis-pin", "sss", "--clevis-config", &config, "--tpm2-device", &tcti])
            .arg(&image),
        "disk clevis-bind sss tang+tpm2+aws-kms",
    );
    let pass1 = swtpm.tools("clevis", &["luks", "pass", "-d", image.to_str().unwrap(), "-s", "1"], b"");
    assert_keyslot_opens(&scratch, &image, "1", &pass1);
    let inspect = String::from_utf8(run_ok(cryptadm().args(["disk", "inspect"]).arg(&image), "inspect")).unwrap();
    assert!(inspect.contains(&format!("aws-kms {key}]")), "{inspect}");
    tang.stop();
    opens("tpm2+aws-kms", &tcti, Some(&moto.admin));
    // `disk decrypt --clevis` of that volume with the TPM and KMS only.
    let mut decrypt = cryptadm();
    moto.env_with(&mut decrypt, &moto.admin);
    let raw = scratch.path("bound.raw");
    run_ok(
        decrypt
            .args(["disk", "decrypt", "--clevis", "--aws-region", crate::support_aws::REGION, "--tpm2-device", &tcti])
            .arg(&image)
            .arg("--out")
            .arg(&raw),
        "disk decrypt --clevis through tpm2+aws-kms",
    );
    assert_eq!(std::fs::metadata(&raw).unwrap().len(), 4 << 20);
    let (refused, out) = open_with("aws-kms-only", &no_tpm, Some(&moto.admin));
    assert_failed(&refused, 1, &["1 of the 2 pins", &format!("tang {}: ", tang.url()), "tpm2 sha256:7: "]);
    assert!(!stderr(&refused).contains(&format!("aws-kms {key}:")), "the pin that worked is not named");
    assert!(!out.exists(), "nothing written");
    tang.restart();
}

/// `volume rotate` of a volume that `clevis luks bind … tpm2` bound and `systemd-cryptenroll --tpm2-device`
/// enrolled leaves both as it leaves a Tang binding: the stored key's keyslot is replaced, the clevis and
/// systemd-tpm2 tokens and their keyslots stay, `clevis luks pass` and systemd-cryptenroll (the oracles) still
/// open and list them, `disk decrypt --tpm2` still opens through the enrolment, and the rotation says what it kept.
#[test]
fn volume_rotate_keeps_a_tpm2_clevis_binding() {
    let swtpm = tpm();
    let scratch = Scratch::new();
    let old = scratch.write("old.key", b"the stored key");
    let image = cryptsetup_image(&scratch, "volume.img", &old);
    let image_arg = image.to_str().unwrap();
    swtpm.tools(
        "clevis",
        &[
            "luks",
            "bind",
            "-k",
            old.to_str().unwrap(),
            "-d",
            image_arg,
            "tpm2",
            r#"{"pcr_ids":"7","pcr_bank":"sha256"}"#,
        ],
        b"",
    );
    let enrolled = swtpm
        .command("systemd-cryptenroll")
        .env("PASSWORD", "the stored key")
        .arg(format!("--tpm2-device={}", swtpm.tcti()))
        .args(["--tpm2-pcrs=7"])
        .arg(&image)
        .output()
        .unwrap();
    swtpm.flush();
    assert_ok(&enrolled, "systemd-cryptenroll --tpm2-device");
    let store = scratch.path("keys");
    std::fs::create_dir_all(store.join("pvc-tpm2")).unwrap();
    std::fs::write(store.join("pvc-tpm2/current"), b"the stored key").unwrap();
    let rotated = cryptadm()
        .env("CRYPTADM_RUN_DIR", scratch.path("run"))
        .args(["volume", "rotate", "--volume-id", "pvc-tpm2", "--volume-path", image_arg])
        .args(["--key-store", &format!("file://{}", store.display())])
        .output()
        .unwrap();
    assert_ok(&rotated, "volume rotate");
    let text = stderr(&rotated);
    assert!(text.contains("removed keyslot(s) 0"), "{text}");
    assert!(text.contains("kept the clevis binding: token 0, keyslot(s) 1 (tpm2 sha256:7)"), "{text}");
    assert!(
        text.contains("kept the systemd-tpm2 enrolment: token 1, keyslot(s) 2 (systemd-tpm2 sha256:7 (ecc))"),
        "{text}"
    );
    let current = std::fs::read(store.join("pvc-tpm2/current")).unwrap();
    assert_ne!(current, b"the stored key");
    assert_keyslot_opens(&scratch, &image, "3", &current);
    let tokens = luks_tokens(&image);
    assert_eq!(tokens["0"]["type"], "clevis");
    assert_eq!(tokens["0"]["keyslots"], serde_json::json!(["1"]));
    assert_eq!(tokens["1"]["type"], "systemd-tpm2");
    assert_eq!(tokens["1"]["keyslots"], serde_json::json!(["2"]));
    let pass1 = swtpm.tools("clevis", &["luks", "pass", "-d", image_arg, "-s", "1"], b"");
    assert_keyslot_opens(&scratch, &image, "1", &pass1);
    let listed = String::from_utf8(run_ok(swtpm.command("systemd-cryptenroll").arg(&image), "list")).unwrap();
    assert!(listed.lines().any(|l| l.split_whitespace().eq(["2", "tpm2"])), "{listed}");
    assert!(listed.lines().any(|l| l.split_whitespace().eq(["3", "password"])), "{listed}");
    assert!(!listed.lines().any(|l| l.split_whitespace().next() == Some("0")), "{listed}");
    let out = scratch.path("rotated.raw");
    run_ok(
        cryptadm()
            .args(["disk", "decrypt", "--tpm2", "--tpm2-device", &swtpm.tcti()])
            .arg(&image)
            .arg("--out")
            .arg(&out),
        "decrypt --tpm2 after the rotation",
    );
    let stale = scratch.write("stale", b"the stored key");
    let refused = std::process::Command::new("cryptsetup")
        .args(["open", "--test-passphrase", "--key-file"])
        .arg(stale)
        .arg(&image)
        .status()
        .unwrap();
    assert!(!refused.success(), "the old key no longer opens the volume");
}

/// systemd-cryptenroll --tpm2-with-pin=yes enrols (PolicyPCR + PolicyAuthValue, the auth value SHA-256 of the
/// PIN); `disk decrypt --tpm2` opens it with the PIN read as a passphrase is (a file here, never argv), refuses a
/// wrong PIN (16) and no PIN (2, saying a PIN is needed and how to give it), with nothing written; `disk
/// inspect` shows `+ PIN`.
#[test]
fn systemd_tpm2_tokens_with_a_pin_open() {
    let swtpm = tpm();
    let scratch = Scratch::new();
    let pass = scratch.write("pass", b"pw");
    let raw: Vec<u8> = (0..(1u32 << 20)).map(|i| (i.wrapping_mul(3266489917) >> 24) as u8).collect();
    let raw_path = scratch.write("raw", &raw);
    let image = scratch.path("pin.img");
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
    let enrolled = swtpm
        .command("systemd-cryptenroll")
        .env("PASSWORD", "pw")
        .env("NEWPIN", "4711 pin")
        .arg(format!("--tpm2-device={}", swtpm.tcti()))
        .args(["--tpm2-pcrs=7", "--tpm2-with-pin=yes"])
        .arg(&image)
        .output()
        .unwrap();
    swtpm.flush();
    assert_ok(&enrolled, "systemd-cryptenroll --tpm2-with-pin=yes");
    assert_eq!(luks_tokens(&image)["0"]["tpm2-pin"], true);
    run_ok(std::process::Command::new("cryptsetup").args(["luksKillSlot", "-q"]).arg(&image).arg("0"), "luksKillSlot");
    let inspect = String::from_utf8(run_ok(cryptadm().args(["disk", "inspect"]).arg(&image), "inspect")).unwrap();
    assert!(inspect.contains("tpm2: systemd-tpm2 sha256:7 (ecc) + PIN"), "{inspect}");
    let decrypt = |pin: Option<&[u8]>, out: &std::path::Path| {
        let mut command = cryptadm();
        command.args(["disk", "decrypt", "--tpm2", "--tpm2-device", &swtpm.tcti()]);
        if let Some(pin) = pin {
            command.arg("--passphrase-file").arg(scratch.write("pin", pin));
        }
        let output = command.arg(&image).arg("--out").arg(out).output().unwrap();
        swtpm.flush();
        output
    };
    let wrong = scratch.path("wrong.raw");
    assert_failed(&decrypt(Some(b"4712 pin"), &wrong), 16, &["TPM_RC_AUTH_FAIL"]);
    assert!(!wrong.exists(), "nothing written");
    // No PIN at all (and no terminal): a usage error that says a PIN is needed and how to give it.
    let none = decrypt(None, &wrong);
    assert_failed(&none, 2, &["was made with a PIN (--tpm2-with-pin), and no PIN was given", "hint:", "--key-file"]);
    assert!(!stderr(&none).contains("no passphrase"), "{}", stderr(&none));
    assert!(!wrong.exists(), "nothing written");
    let out = scratch.path("decrypted.raw");
    assert_ok(&decrypt(Some(b"4711 pin"), &out), "decrypt --tpm2 with the PIN");
    assert_eq!(std::fs::read(&out).unwrap(), raw);

    // cryptadm enrols with a PIN; systemd-cryptenroll lists it, and tpm2-tools unseal it as systemd-cryptsetup
    // does: PolicyPCR, PolicyAuthValue, the auth value SHA-256 of the PIN.
    let ours = cryptsetup_image(&scratch, "ours-pin.img", &pass);
    let pin = scratch.write("our-pin", b"2468");
    run_ok(
        cryptadm()
            .args(["disk", "tpm2-enroll", "--key-file"])
            .arg(&pass)
            .args(["--tpm2-pcrs", "7", "--tpm2-device", &swtpm.tcti(), "--tpm2-with-pin", "--tpm2-pin-file"])
            .arg(&pin)
            .arg(&ours),
        "disk tpm2-enroll --tpm2-with-pin",
    );
    swtpm.flush();
    let tokens = luks_tokens(&ours);
    assert_eq!(tokens["0"]["tpm2-pin"], true);
    let listed = String::from_utf8(run_ok(swtpm.command("systemd-cryptenroll").arg(&ours), "list")).unwrap();
    assert!(listed.lines().any(|l| l.split_whitespace().eq(["1", "tpm2"])), "{listed}");
    let blob =
        base64::Engine::decode(&base64::engine::general_purpose::STANDARD, tokens["0"]["tpm2-blob"].as_str().unwrap())
            .unwrap();
    let private_len = 2 + usize::from(u16::from_be_bytes([blob[0], blob[1]]));
    let private = scratch.write("pin.priv", &blob[..private_len]);
    let public = scratch.write("pin.pub", &blob[private_len..]);
    let (primary, object, session) = (scratch.path("p.ctx"), scratch.path("o.ctx"), scratch.path("s.ctx"));
    let path = |p: &std::path::PathBuf| p.to_str().unwrap().to_owned();
    swtpm.tools("tpm2_createprimary", &["-Q", "-C", "o", "-g", "sha256", "-G", "ecc", "-c", &path(&primary)], b"");
    swtpm.tools(
        "tpm2_load",
        &["-Q", "-C", &path(&primary), "-u", &path(&public), "-r", &path(&private), "-c", &path(&object)],
        b"",
    );
    // The session lives across these commands: no flush between them.
    for (program, args) in [
        ("tpm2_startauthsession", vec!["--policy-session", "-S", &path(&session)]),
        ("tpm2_policypcr", vec!["-Q", "-S", &path(&session), "-l", "sha256:7"]),
        ("tpm2_policyauthvalue", vec!["-Q", "-S", &path(&session)]),
    ] {
        run_ok(swtpm.command(program).args(&args), program);
    }
    let auth: String =
        cryptadm::kms::tpm2::Hash::Sha256.digest(&[b"2468"]).iter().map(|b| format!("{b:02x}")).collect();
    let secret =
        swtpm.run("tpm2_unseal", &["-c", &path(&object), "-p", &format!("session:{}+hex:{auth}", path(&session))], b"");
    assert_ok(&secret, "tpm2_unseal with the PIN");
    let passphrase = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &secret.stdout);
    assert_keyslot_opens(&scratch, &ours, "1", passphrase.as_bytes());
}

/// The keyslots and tokens of a LUKS2 image, as cryptsetup reads them.
fn keyslots_and_tokens(image: &std::path::Path) -> (Vec<String>, serde_json::Value) {
    let dump = run_ok(
        std::process::Command::new("cryptsetup").args(["luksDump", "--dump-json-metadata"]).arg(image),
        "luksDump",
    );
    let meta: serde_json::Value = serde_json::from_slice(&dump).unwrap();
    let mut keyslots: Vec<String> = meta["keyslots"].as_object().unwrap().keys().cloned().collect();
    keyslots.sort();
    (keyslots, meta["tokens"].clone())
}

/// `kill -9` at moments spread over `disk tpm2-enroll` and `disk clevis-bind --clevis-pin tpm2` (in a TPM command,
/// between the keyslot and the header writes, wherever it lands), and an abort at each step of the header write
/// (`CRYPTADM_FAULT_POINT`, the fault-injection build: before the keyslot material, before the header that names
/// the keyslot and its token, between the two LUKS2 header copies, after both): the volume is complete (keyslot 1
/// and its token, which the oracle opens: `clevis luks pass`, cryptadm's `--tpm2` unlock) or as before (keyslot 0
/// only, no token, and the command run again completes it); never a keyslot without its token or a token without
/// its keyslot. The keyslot and its token are one header write, so "before the keyslot" and "before the token"
/// are one point: the aborts before it leave the volume as before, the two after its primary copy complete.
#[test]
fn kill_9_during_tpm2_enroll_and_clevis_bind_leaves_complete_or_as_before() {
    let swtpm = tpm();
    let tcti = swtpm.tcti();
    let scratch = Scratch::new();
    let pass = scratch.write("pass", b"the first passphrase");
    let commands: [(&str, Vec<&str>); 2] = [
        ("systemd-tpm2", vec!["disk", "tpm2-enroll", "--tpm2-pcrs", "7"]),
        ("clevis", vec!["disk", "clevis-bind", "--clevis-pin", "tpm2", "--clevis-config", r#"{"pcr_ids":"7"}"#]),
    ];
    let (mut killed, mut as_before, mut complete) = (0, 0, 0);
    for (token_type, args) in &commands {
        let run = |image: &std::path::Path| {
            let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin("cryptadm"));
            command.args(args).args(["--tpm2-device", &tcti, "--key-file"]).arg(&pass).arg(image);
            command.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
            command
        };
        // What a stopped run left: complete or as before (then the rerun completes it), and the new keyslot opens
        // through its token. Returns whether it was complete.
        let mut check = |image: &std::path::Path, at: &str| -> bool {
            // What the stopped client left loaded on the simulator.
            swtpm.flush();
            let was_complete = match keyslots_and_tokens(image) {
                (keyslots, tokens) if keyslots == ["0"] && tokens == serde_json::json!({}) => {
                    as_before += 1;
                    assert_keyslot_opens(&scratch, image, "0", b"the first passphrase");
                    let output = run(image).output().unwrap();
                    swtpm.flush();
                    assert_ok(&output, &format!("{at}: the rerun"));
                    false
                }
                (keyslots, tokens) if keyslots == ["0", "1"] => {
                    complete += 1;
                    assert_eq!(tokens["0"]["type"], *token_type, "{at}");
                    assert_eq!(tokens["0"]["keyslots"], serde_json::json!(["1"]), "{at}");
                    assert!(tokens.get("1").is_none(), "{at}: {tokens}");
                    true
                }
                (keyslots, tokens) => panic!("{at}: neither complete nor as before: keyslots {keyslots:?}, {tokens}"),
            };
            let (_, tokens) = keyslots_and_tokens(image);
            assert_eq!(tokens["0"]["keyslots"], serde_json::json!(["1"]), "{at}");
            if *token_type == "clevis" {
                let pass1 = swtpm.tools("clevis", &["luks", "pass", "-d", image.to_str().unwrap(), "-s", "1"], b"");
                assert_keyslot_opens(&scratch, image, "1", &pass1);
            } else {
                let out = scratch.path("stopped.raw");
                run_ok(
                    cryptadm()
                        .args(["disk", "decrypt", "--tpm2", "--tpm2-device", &tcti])
                        .arg(image)
                        .arg("--out")
                        .arg(&out),
                    &format!("{at}: decrypt --tpm2"),
                );
                std::fs::remove_file(&out).unwrap();
            }
            std::fs::remove_file(image).unwrap();
            was_complete
        };
        let measured = cryptsetup_image(&scratch, "measured.img", &pass);
        let started = std::time::Instant::now();
        assert!(run(&measured).status().unwrap().success(), "{token_type}: the measured run");
        let whole = started.elapsed();
        for eighth in [1, 3, 5, 7] {
            let at = format!("{token_type}: killed at {eighth}/8 of {whole:?}");
            let image = cryptsetup_image(&scratch, &format!("kill-{eighth}.img"), &pass);
            let mut child = run(&image).spawn().unwrap();
            std::thread::sleep(whole * eighth / 8);
            child.kill().unwrap(); // SIGKILL, or nothing when it has already finished
            if child.wait().unwrap().code().is_none() {
                killed += 1;
            }
            check(&image, &at);
        }
        // The deterministic points of the header write: each aborts the run there (SIGABRT, as a crash).
        for (point, completes) in [
            ("before-keyslot-material", false),
            ("before-header-write", false),
            ("between-header-copies", true),
            ("after-header-write", true),
        ] {
            let at = format!("{token_type}: aborted at {point}");
            let image = cryptsetup_image(&scratch, &format!("{point}.img"), &pass);
            let status = run(&image).env("CRYPTADM_FAULT_POINT", point).status().unwrap();
            assert_eq!(status.code(), None, "{at}: the run was aborted ({status})");
            assert_eq!(check(&image, &at), completes, "{at}");
        }
    }
    // Most kills land before the one header write at the end (the TPM's work comes first): the state is the one
    // before; a kill after that write finds the volume complete. The aborts give both.
    assert!(
        killed >= 3,
        "only {killed} of 8 runs were still going when killed (as before {as_before}, complete {complete})"
    );
    assert!(complete >= 4 && as_before >= 4, "as before {as_before}, complete {complete}");
}

#[test]
fn another_tpm_refuses_the_secret() {
    let swtpm = tpm();
    let scratch = Scratch::new();
    assert_ok(&seal(&swtpm, &scratch, "tpm2", "{}"), "seal");
    let other = Swtpm::another();
    assert_failed(&open(&other, &scratch), 16, &["does not belong to this TPM", "TPM_RC_INTEGRITY", "hint:"]);
    assert!(!scratch.path("opened.yaml").exists(), "nothing written");
    assert_ok(&open(&swtpm, &scratch), "open on the TPM it was sealed on");
}

/// The first layer digest of the single-manifest OCI layout at `layout`.
#[cfg(feature = "pgp")]
fn first_layer(layout: &std::path::Path) -> String {
    let read = |p: std::path::PathBuf| serde_json::from_slice::<serde_json::Value>(&std::fs::read(p).unwrap()).unwrap();
    let index = read(layout.join("index.json"));
    let blob = |d: &serde_json::Value| layout.join("blobs/sha256").join(&d.as_str().unwrap()[7..]);
    let manifest = read(blob(&index["manifests"][0]["digest"]));
    manifest["layers"][0]["digest"].as_str().unwrap().to_owned()
}

/// Issue 43: image keys sealed to the machine. `image seal-key` writes what `clevis decrypt` opens, and `image
/// decrypt --key` opens what `clevis encrypt tpm2` wrote (a 0644 file, as a plain key file may be: no mode rule)
/// and what seal-key wrote; another TPM is refused (16, naming it), a truncated JWE is refused as a key file (3),
/// nothing is written either way; `secret generate-k8s` puts the sealed JWE itself into the node Secret and
/// refuses it where no cryptadm opens it (the KEP's list, CRI-O's keys directory).
#[test]
#[cfg(feature = "pgp")] // (its image fixture lives in the containerd module)
fn image_keys_sealed_to_the_tpm() {
    use std::os::unix::fs::PermissionsExt;
    let scratch = Scratch::new();
    let keys = crate::image::Keys::new();
    let (private, public) = keys.ec("node", "prime256v1");
    let layout = scratch.path("plain");
    crate::containerd::make_layout(
        &layout,
        &[("amd64", &[crate::containerd::Layer { compression: "gzip", files: &[("etc/sealed", "sealed-key layer")] }])],
    );
    let encrypted = scratch.path("enc");
    let oci = |p: &std::path::Path| format!("oci:{}:v1", p.display());
    run_ok(
        cryptadm()
            .args(["image", "encrypt", "--recipient", &format!("jwe:{public}")])
            .arg(oci(&layout))
            .arg(oci(&encrypted)),
        "image encrypt",
    );
    let decrypt = |key: &std::path::Path, out: &std::path::Path, device: &str| {
        cryptadm()
            .env("TPM2TOOLS_TCTI", device)
            .args(["image", "decrypt", "--key"])
            .arg(key)
            .arg(oci(&encrypted))
            .arg(oci(out))
            .output()
            .unwrap()
    };
    // (The Tang servers before the TPM, in the order the other tests take them.)
    let trio = crate::support_tang::servers();
    let swtpm = tpm();
    let key_bytes = std::fs::read(&private).unwrap();
    // clevis seals, cryptadm opens (the TPM from TPM2TOOLS_TCTI).
    let theirs = scratch.write(
        "theirs.pem.jwe",
        swtpm.tools("clevis", &["encrypt", "tpm2", r#"{"pcr_ids":"7","pcr_bank":"sha256"}"#], &key_bytes),
    );
    std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = scratch.path("dec-theirs");
    assert_ok(&decrypt(&theirs, &out, &swtpm.tcti()), "decrypt with clevis's sealed key");
    assert!(out.join("blobs/sha256").join(&first_layer(&layout)[7..]).exists(), "the plain layer is back");
    // cryptadm seals, clevis opens; cryptadm opens it too (the TPM from --tpm2-device).
    let ours = scratch.path("ours.pem.jwe");
    run_ok(
        cryptadm().args(["image", "seal-key"]).arg(&private).arg("--out").arg(&ours).args([
            "--clevis-pin",
            "tpm2",
            "--clevis-config",
            r#"{"pcr_ids":"7"}"#,
            "--tpm2-device",
            &swtpm.tcti(),
        ]),
        "image seal-key",
    );
    assert_eq!(std::fs::metadata(&ours).unwrap().permissions().mode() & 0o777, 0o600);
    let opened = swtpm.run("clevis", &["decrypt"], &std::fs::read(&ours).unwrap());
    assert_ok(&opened, "clevis decrypt of seal-key's output");
    assert_eq!(opened.stdout, key_bytes);
    let out = scratch.path("dec-ours");
    let decrypted = cryptadm()
        .args(["image", "decrypt", "--tpm2-device", &swtpm.tcti(), "--key"])
        .arg(&ours)
        .arg(oci(&encrypted))
        .arg(oci(&out))
        .output()
        .unwrap();
    assert_ok(&decrypted, "decrypt with seal-key's sealed key");
    // A threshold: clevis's sss of a Tang server and the TPM (t=2) opens through both.
    let both = format!(
        r#"{{"t":2,"pins":{{"tang":[{}],"tpm2":{{"pcr_ids":"23","pcr_bank":"sha256"}}}}}}"#,
        trio.tangs[0].config()
    );
    swtpm.tools("tpm2_pcrreset", &["23"], b"");
    let sss = scratch.write("sss.pem.jwe", swtpm.tools("clevis", &["encrypt", "sss", &both, "-y"], &key_bytes));
    let out = scratch.path("dec-sss");
    assert_ok(&decrypt(&sss, &out, &swtpm.tcti()), "decrypt with an sss-sealed key");
    // A PCR extended since: the threshold is not reached, naming the PCR and its bank (exit 1, as `bootstrap open`
    // gives an sss short of its threshold); nothing written.
    swtpm.tools("tpm2_pcrextend", &["23:sha256=0606060606060606060606060606060606060606060606060606060606060606"], b"");
    let out = scratch.path("dec-pcr");
    assert_failed(&decrypt(&sss, &out, &swtpm.tcti()), 1, &["sss.pem.jwe", "1 of the 2 pins", "PCR 23", "sha256 bank"]);
    assert!(!out.exists(), "nothing written");
    swtpm.tools("tpm2_pcrreset", &["23"], b"");
    drop(swtpm);
    drop(trio);

    // Another machine's TPM: refused, naming the TPM's answer; nothing written.
    let other = Swtpm::another();
    let out = scratch.path("dec-other");
    let refused = decrypt(&theirs, &out, &other.tcti());
    assert_failed(&refused, 16, &["none of the given keys", "theirs.pem.jwe", "does not belong to this TPM"]);
    assert!(!out.exists(), "nothing written");
    drop(other);
    // A truncated sealed key: refused as a key file before any TPM or image is touched.
    let text = std::fs::read(&theirs).unwrap();
    let truncated = scratch.write("truncated.pem.jwe", &text[..text.len() / 2]);
    let refused = decrypt(&truncated, &out, "swtpm:host=127.0.0.1,port=1");
    assert_failed(&refused, 3, &["truncated.pem.jwe", "sealed key (clevis JWE) that cannot be read"]);
    assert!(!out.exists(), "nothing written");
    // seal-key seals private keys only.
    let refused = cryptadm()
        .args(["image", "seal-key"])
        .arg(&public)
        .arg("--out")
        .arg(scratch.path("public.jwe"))
        .args(["--clevis-pin", "tpm2", "--clevis-config", "{}", "--tpm2-device", "swtpm:host=127.0.0.1,port=1"])
        .output()
        .unwrap();
    assert_failed(&refused, 3, &["hint:"]);
    assert!(!scratch.path("public.jwe").exists(), "nothing written");
    // Sealing over the plain key (also through a symbolic link) is refused before anything is written.
    let link = scratch.path("link-to-private.pem");
    std::os::unix::fs::symlink(&private, &link).unwrap();
    let before = std::fs::read(&private).unwrap();
    let refused = cryptadm()
        .args(["image", "seal-key"])
        .arg(&private)
        .arg("--out")
        .arg(&link)
        .args(["--clevis-pin", "tpm2", "--clevis-config", "{}", "--tpm2-device", "swtpm:host=127.0.0.1,port=1"])
        .output()
        .unwrap();
    assert_failed(&refused, 2, &["is the input", "hint:"]);
    assert_eq!(std::fs::read(&private).unwrap(), before, "the plain key is untouched");

    // generate-k8s: the node Secret holds the sealed JWE as it is (each node's TPM opens it).
    let secret = cryptadm()
        .args(["secret", "generate-k8s", "image-keys", "--output-format", "json", "--key"])
        .arg(format!("node.pem.jwe={}", theirs.display()))
        .output()
        .unwrap();
    assert_ok(&secret, "generate-k8s of a sealed key");
    let secret: serde_json::Value = serde_json::from_slice(&secret.stdout).unwrap();
    let data = secret["data"]["node.pem.jwe"].as_str().unwrap_or_else(|| panic!("{secret}"));
    assert_eq!(base64::Engine::decode(&base64::engine::general_purpose::STANDARD, data).unwrap(), text);
    let kep = cryptadm()
        .args(["secret", "generate-k8s", "image-keys", "--format", "kep", "--key"])
        .arg(&theirs)
        .output()
        .unwrap();
    assert_failed(&kep, 3, &["only cryptadm's stream processor opens", "hint:"]);
    let crio = cryptadm()
        .args(["secret", "generate-k8s", "image-keys", "--with-daemonset", "--runtime", "crio", "--key"])
        .arg(&theirs)
        .output()
        .unwrap();
    assert_failed(&crio, 3, &["CRI-O opens no sealed key", "hint:"]);
    let bad = cryptadm().args(["secret", "generate-k8s", "image-keys", "--key"]).arg(&truncated).output().unwrap();
    assert_failed(&bad, 3, &["truncated.pem.jwe", "hint:"]);
}
