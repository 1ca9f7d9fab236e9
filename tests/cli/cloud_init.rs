//! `cryptadm bootstrap seal --cloud-init` and `--template` against the real cloud-init: its schema validator
//! accepts the userdata, and its own `write_files` decoder (cc_write_files, run by the system Python that
//! cloud-init is installed for) recovers a stream that `cryptadm bootstrap open` turns back into the plaintext.
//!
//! These tests never skip: cloud-init must be installed (`bash .ci/run` does, from the distribution).

use crate::support::{self, Scratch, cryptadm};
use std::path::Path;
use std::process::{Command, Output};

/// The Python that cloud-init's modules are installed for (the Debian package), not the python3 on PATH.
const SYSTEM_PYTHON: &str = "/usr/bin/python3";
/// Where the built-in template writes the sealed stream, and where its runcmd entry decrypts it.
const STREAM_PATH: &str = "/run/machineadm/machineadm_config.yaml";
const CONFIG_PATH: &str = "/run/machineadm/machine_config.yaml";
/// EC2's raw userdata limit (docs/formats.md).
const EC2_LIMIT: usize = 16_384;

/// Decodes every `write_files` entry of a userdata file with cloud-init's own functions. argv: userdata file,
/// directory for the decoded contents (`0`, `1`, ...). Prints JSON: how cloud-init classifies the userdata,
/// each entry's path/owner/permissions (raw and as cloud-init decodes them), the runcmd list, and the script
/// cc_runcmd would write for it.
const DECODER: &str = r#"
import json, os, sys
from cloudinit import util
from cloudinit.config import cc_write_files
from cloudinit.handlers import type_from_starts_with

with open(sys.argv[1], "rb") as handle:
    raw = handle.read()
cfg = util.load_yaml(raw)
files = []
for i, entry in enumerate(cfg.get("write_files") or []):
    kinds = cc_write_files.canonicalize_extraction(entry.get("encoding"))
    data = cc_write_files.extract_contents(entry.get("content", ""), kinds)
    if isinstance(data, str):
        data = data.encode("utf-8")
    with open(os.path.join(sys.argv[2], str(i)), "wb") as out:
        out.write(data)
    files.append({
        "path": entry.get("path"),
        "owner": entry.get("owner"),
        "permissions": entry.get("permissions"),
        "mode": cc_write_files.decode_perms(entry.get("permissions"), cc_write_files.DEFAULT_PERMS),
        "extractions": kinds,
    })
runcmd = cfg.get("runcmd")
print(json.dumps({
    "type": type_from_starts_with(raw),
    "keys": sorted(cfg),
    "files": files,
    "runcmd": runcmd,
    "script": util.shellify(runcmd) if runcmd is not None else None,
}))
"#;

fn require_cloud_init() {
    support::require_tool("cloud-init", "apt-get install cloud-init");
    assert!(
        Path::new(SYSTEM_PYTHON).is_file(),
        "`{SYSTEM_PYTHON}` is missing; it comes with the cloud-init package (apt-get install cloud-init)"
    );
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// What cloud-init makes of a userdata file.
struct Decoded {
    summary: serde_json::Value,
    /// The decoded content of each write_files entry.
    contents: Vec<Vec<u8>>,
}

fn decode_with_cloud_init(scratch: &Scratch, userdata: &Path, tag: &str) -> Decoded {
    require_cloud_init();
    let dir = scratch.path(&format!("decoded-{tag}"));
    std::fs::create_dir(&dir).expect("mkdir");
    let output = Command::new(SYSTEM_PYTHON)
        .args(["-c", DECODER])
        .arg(userdata)
        .arg(&dir)
        .output()
        .expect("run the system python3");
    assert!(
        output.status.success(),
        "cloud-init's decoder failed (is cloud-init importable by {SYSTEM_PYTHON}?): {}",
        stderr(&output)
    );
    let summary: serde_json::Value = serde_json::from_slice(&output.stdout).expect("the decoder prints JSON");
    let count = summary["files"].as_array().expect("files").len();
    let contents = (0..count).map(|i| std::fs::read(dir.join(i.to_string())).expect("decoded content")).collect();
    Decoded { summary, contents }
}

/// `cloud-init schema --config-file`.
fn schema(userdata: &Path) -> Output {
    require_cloud_init();
    Command::new("cloud-init").args(["schema", "--config-file"]).arg(userdata).output().expect("run cloud-init")
}

/// Arguments of a seal for the file provider with the passphrase in `passphrase`.
fn seal_cmd(passphrase: &Path, plaintext: &Path) -> assert_cmd::Command {
    let mut cmd = cryptadm();
    cmd.args(["bootstrap", "seal", "--provider", "file", "--passphrase-uri"])
        .arg(format!("file://{}", passphrase.display()))
        .arg("--passphrase-file")
        .arg(passphrase)
        .arg("--in")
        .arg(plaintext);
    cmd
}

/// Opens `stream` the way the runcmd entry does: no passphrase option, the `file` provider reads the file the
/// document's passphraseURI names.
fn open_like_runcmd(scratch: &Scratch, stream: &[u8], tag: &str) -> Vec<u8> {
    let sealed = scratch.write(&format!("stream-{tag}.yaml"), stream);
    let out = scratch.path(&format!("config-{tag}"));
    let output = cryptadm()
        .args(["bootstrap", "open", "--in"])
        .arg(&sealed)
        .arg("--out")
        .arg(&out)
        .output()
        .expect("run cryptadm");
    assert!(output.status.success(), "cryptadm cannot open what cloud-init decoded ({tag}): {}", stderr(&output));
    std::fs::read(&out).expect("cryptadm wrote --out")
}

/// Pseudo-random bytes (xorshift64*), deterministic so failures reproduce.
fn noise(len: usize, mut state: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        out.extend_from_slice(&state.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes());
    }
    out.truncate(len);
    out
}

fn machine_config() -> Vec<u8> {
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kubeadm-config\ndata:\n  token: abcdef.0123456789abcdef\n  \
     note: \"grüße — ✓\"\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: join\n"
        .as_bytes()
        .to_vec()
}

#[test]
fn cloud_init_schema_accepts_the_userdata() {
    let scratch = Scratch::new();
    let passphrase = scratch.write("passphrase", "correct horse battery staple");
    let plaintext = scratch.write("config.yaml", machine_config());
    let output = seal_cmd(&passphrase, &plaintext).arg("--cloud-init").output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let userdata = scratch.write("userdata", &output.stdout);

    let checked = schema(&userdata);
    let stdout = String::from_utf8_lossy(&checked.stdout);
    assert_eq!(
        checked.status.code(),
        Some(0),
        "cloud-init schema rejected the userdata:\n{stdout}{}",
        stderr(&checked)
    );
    assert!(stdout.contains("Valid cloud-config"), "unexpected cloud-init schema output: {stdout}");
    let complaints = format!("{stdout}{}", stderr(&checked)).to_lowercase();
    for word in ["error", "deprecat", "warning", "invalid"] {
        assert!(!complaints.contains(word), "cloud-init schema printed `{word}`:\n{complaints}");
    }

    // The control: the same validator does look inside write_files, so the pass above means something.
    let text = String::from_utf8(output.stdout).unwrap();
    let broken = scratch.write("broken", text.replace("  owner: root:root\n", "  owner: root:root\n  bogus: 1\n"));
    let checked = schema(&broken);
    assert_ne!(checked.status.code(), Some(0), "cloud-init schema accepted an unknown write_files key");
    assert!(stderr(&checked).contains("bogus"), "{}", stderr(&checked));
}

#[test]
fn cloud_init_decodes_the_stream_and_runcmd_opens_it() {
    let scratch = Scratch::new();
    let passphrase = scratch.write("passphrase", "correct horse battery staple\n");
    let cases = [("yaml", machine_config()), ("binary", noise(4096, 0x5eed))];
    for (tag, plaintext) in cases {
        let input = scratch.write(&format!("plain-{tag}"), &plaintext);
        let output = seal_cmd(&passphrase, &input).arg("--cloud-init").output().unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        let userdata = scratch.write(&format!("userdata-{tag}"), &output.stdout);
        let decoded = decode_with_cloud_init(&scratch, &userdata, tag);
        let summary = &decoded.summary;

        assert_eq!(summary["type"], "text/cloud-config", "cloud-init does not see #cloud-config userdata");
        assert_eq!(summary["keys"], serde_json::json!(["runcmd", "write_files"]));
        assert_eq!(decoded.contents.len(), 1, "one write_files entry");
        let file = &summary["files"][0];
        assert_eq!(file["path"], STREAM_PATH);
        assert_eq!(file["owner"], "root:root");
        assert_eq!(file["permissions"], "0600", "permissions must be the quoted string '0600'");
        assert_eq!(file["mode"], 0o600, "cloud-init must decode the permissions as octal 0600");
        assert_eq!(file["extractions"], serde_json::json!(["application/base64", "application/x-gzip"]));

        // runcmd: one exec-form (list) entry, which cloud-init single-quotes word by word.
        let argv = ["/usr/local/bin/cryptadm", "bootstrap", "open", "--in", STREAM_PATH, "--out", CONFIG_PATH];
        assert_eq!(summary["runcmd"], serde_json::json!([argv]), "runcmd must be the list form");
        let quoted: Vec<String> = argv.iter().map(|a| format!("'{a}'")).collect();
        assert_eq!(summary["script"], format!("#!/bin/sh\n{}\n", quoted.join(" ")));

        // What cloud-init would write is a machineadm stream, and opening it gives back the plaintext.
        let stream = &decoded.contents[0];
        assert!(stream.starts_with(b"apiVersion: machineadm.cluster.x-k8s.io/v1alpha1\nkind: EncryptedConfig\n"));
        assert!(
            !stream.windows(plaintext.len().min(16)).any(|w| w == &plaintext[..plaintext.len().min(16)]),
            "the plaintext leaks into the userdata"
        );
        assert_eq!(open_like_runcmd(&scratch, stream, tag), plaintext, "{tag}: round trip through cloud-init");
    }
}

#[test]
fn user_templates_render_with_both_filters_and_round_trip() {
    let scratch = Scratch::new();
    let passphrase = scratch.write("passphrase", "s3cret");
    let plaintext = machine_config();
    let input = scratch.write("config.yaml", &plaintext);
    let template = scratch.write(
        "bootstrap.tmpl",
        "#cloud-config\n# rendered by cryptadm\nwrite_files:\n- path: /run/machineadm/plain.yaml\n  \
         permissions: '0600'\n  encoding: b64\n  content: {{ machine_config | base64 }}\n- path: \
         /run/machineadm/gz.yaml\n  permissions: '0600'\n  encoding: gzip+base64\n  content: {{ .machine_config | \
         gzipBase64 }}\nruncmd:\n- [cryptadm, bootstrap, open, --in, /run/machineadm/gz.yaml, --out, /run/x]\n",
    );
    let output = seal_cmd(&passphrase, &input).arg("--template").arg(&template).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.starts_with("#cloud-config\n# rendered by cryptadm\nwrite_files:\n"), "literal text is kept");
    assert!(text.ends_with("--out, /run/x]\n"), "the trailing newline is kept");
    assert!(!text.contains("{{") && !text.contains("}}"), "everything was substituted:\n{text}");
    let userdata = scratch.write("userdata", &text);

    let checked = schema(&userdata);
    assert_eq!(checked.status.code(), Some(0), "cloud-init schema: {}", stderr(&checked));
    let decoded = decode_with_cloud_init(&scratch, &userdata, "template");
    assert_eq!(decoded.contents.len(), 2);
    assert_eq!(decoded.summary["files"][0]["extractions"], serde_json::json!(["application/base64"]));
    let (plain, gz) = (&decoded.contents[0], &decoded.contents[1]);
    assert_eq!(plain, gz, "base64 and gzipBase64 carry the same stream");
    assert!(plain.starts_with(b"apiVersion: machineadm.cluster.x-k8s.io/v1alpha1\n"));
    assert_eq!(open_like_runcmd(&scratch, plain, "template"), plaintext);
}

#[test]
fn unknown_template_names_exit_3_and_write_nothing() {
    let scratch = Scratch::new();
    let passphrase = scratch.write("passphrase", "s3cret");
    let input = scratch.write("config.yaml", machine_config());
    let bad = [
        ("unknown-filter", "content: {{ machine_config | gzip }}\n"),
        ("unknown-variable", "content: {{ machine_cfg | base64 }}\n"),
        ("unknown-dotted-variable", "content: {{ .machine_cfg }}\n"),
    ];
    for (name, body) in bad {
        let template = scratch.write(&format!("{name}.tmpl"), body);
        let before = scratch.entries();
        let out = scratch.path(&format!("{name}.out"));
        let output =
            seal_cmd(&passphrase, &input).arg("--template").arg(&template).arg("--out").arg(&out).output().unwrap();
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(3), "{name}: {err}");
        assert!(err.contains("template:"), "{name}: the error names the template: {err}");
        assert!(output.stdout.is_empty(), "{name}: nothing on stdout");
        assert!(!out.exists(), "{name}: --out was written");
        assert_eq!(scratch.entries(), before, "{name}: no stray (temporary) file left behind");
    }
}

#[test]
fn oversized_userdata_warns_about_the_ec2_limit() {
    let scratch = Scratch::new();
    let passphrase = scratch.write("passphrase", "s3cret");
    // ~40 KB of hex noise: after sealing, nothing in it compresses, so the userdata is far above 16 KiB.
    let hex: String = noise(20_000, 0xbeef).iter().map(|b| format!("{b:02x}")).collect();
    let big = scratch.write("big.yaml", format!("apiVersion: v1\nkind: ConfigMap\ndata:\n  blob: {hex}\n"));
    let output = seal_cmd(&passphrase, &big).arg("--cloud-init").output().unwrap();
    let err = stderr(&output);
    assert!(output.status.success(), "an oversized userdata is a warning, not an error: {err}");
    let size = output.stdout.len();
    assert!(size > EC2_LIMIT, "the userdata is {size} bytes");
    let warning = err.lines().find(|l| l.starts_with("warning:")).unwrap_or_else(|| panic!("no warning: {err}"));
    assert!(warning.contains("EC2") && warning.contains(&EC2_LIMIT.to_string()), "{warning}");
    assert!(warning.contains(&size.to_string()), "the warning states the real size {size}: {warning}");
    let userdata = scratch.write("userdata", &output.stdout);
    let decoded = decode_with_cloud_init(&scratch, &userdata, "big");
    assert_eq!(open_like_runcmd(&scratch, &decoded.contents[0], "big"), std::fs::read(&big).unwrap());

    // The control: a small configuration draws no warning.
    let small = scratch.write("small.yaml", machine_config());
    let output = seal_cmd(&passphrase, &small).arg("--cloud-init").output().unwrap();
    assert!(output.status.success());
    assert!(!stderr(&output).contains("warning"), "{}", stderr(&output));
}

/// The module lists of the sandboxed boot: only what the userdata uses, so cloud-init touches nothing else
/// (network, hostname, users, ssh keys).
const SANDBOX_CFG: &str = "datasource_list: [NoCloud]
network: {config: disabled}
preserve_hostname: true
manage_etc_hosts: false
cloud_init_modules: [write_files]
cloud_config_modules: [runcmd]
cloud_final_modules: [scripts_user]
";

/// Boots the userdata `seal --cloud-init` printed through cloud-init itself (see `tests/interop/cloud_init_sandbox.sh`)
/// on a machine whose /etc/machineadm/passphrase holds `machine_passphrase`; returns the output directory.
fn boot_with_cloud_init(sandbox: &crate::sandbox::Sandbox, tag: &str, machine_passphrase: &str) -> std::path::PathBuf {
    require_cloud_init();
    let scratch = &sandbox.scratch;
    let sealing = scratch.write("sealing-passphrase", "correct horse battery staple");
    let plaintext = scratch.write("config.yaml", machine_config());
    let output = cryptadm()
        .args(["bootstrap", "seal", "--provider", "file", "--passphrase-uri", "file:///etc/machineadm/passphrase"])
        .arg("--passphrase-file")
        .arg(&sealing)
        .arg("--in")
        .arg(&plaintext)
        .arg("--cloud-init")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let userdata = scratch.write(&format!("user-data-{tag}"), &output.stdout);
    let meta = scratch.write("meta-data", "instance-id: iid-cryptadm-test-1\nlocal-hostname: sandbox\n");
    let cfg = scratch.write("99-sandbox.cfg", SANDBOX_CFG);
    let extra = scratch.path(&format!("extra-{tag}"));
    std::fs::create_dir_all(extra.join("etc/machineadm")).unwrap();
    std::fs::write(extra.join("etc/machineadm/passphrase"), machine_passphrase).unwrap();
    let out = scratch.path(&format!("out-{tag}"));
    let binary = Path::new(env!("CARGO_BIN_EXE_cryptadm"));
    let ran = sandbox.run("cloud_init_sandbox.sh", &[&userdata, &meta, &cfg, binary, &extra, &out]);
    assert!(
        ran.status.success(),
        "the cloud-init sandbox failed:\n{}{}",
        String::from_utf8_lossy(&ran.stdout),
        stderr(&ran)
    );
    out
}

#[test]
fn cloud_init_runs_write_files_and_runcmd_and_cryptadm_opens_the_stream() {
    use std::os::unix::fs::PermissionsExt;
    let sandbox = crate::sandbox::Sandbox::new();
    let out = boot_with_cloud_init(&sandbox, "good", "correct horse battery staple");
    let read = |name: &str| std::fs::read_to_string(out.join(name)).unwrap_or_default();
    assert_eq!(
        read("steps"),
        "init 0\nmodules --mode config 0\nmodules --mode final 0\n",
        "{}",
        read("cloud-init-output.log")
    );
    assert!(read("status").contains("status: done"), "{}", read("status"));
    let argv = ["/usr/local/bin/cryptadm", "bootstrap", "open", "--in", STREAM_PATH, "--out", CONFIG_PATH];
    let quoted: Vec<String> = argv.iter().map(|a| format!("'{a}'")).collect();
    assert_eq!(read("runcmd"), format!("#!/bin/sh\n{}\n", quoted.join(" ")));
    let mode =
        |name: &str| std::fs::metadata(out.join("run-machineadm").join(name)).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode("machineadm_config.yaml"), 0o600, "write_files wrote the stream 0600");
    assert_eq!(mode("machine_config.yaml"), 0o600, "cryptadm wrote the configuration 0600");
    assert_eq!(std::fs::read(out.join("run-machineadm/machine_config.yaml")).unwrap(), machine_config());
    assert!(read("cloud-init-output.log").contains("decrypted document 1: EncryptedConfig (provider `file`"));
    // cloud-init wrote only its own state and what the userdata asked for.
    for path in read("upper-layer.txt").lines().filter(|p| p.len() > 1) {
        let allowed =
            ["./var", "./var/lib", "./var/lib/cloud", "./var/log", "./usr", "./usr/local", "./usr/local/bin", "./etc"];
        assert!(
            allowed.contains(&path)
                || [
                    "./var/lib/cloud/",
                    "./var/log/cloud-init",
                    "./usr/local/bin/cryptadm",
                    "./etc/cloud",
                    "./etc/machineadm"
                ]
                .iter()
                .any(|prefix| path.starts_with(prefix)),
            "cloud-init wrote `{path}`"
        );
    }

    // The negative control: another passphrase on the machine; runcmd fails, cloud-init reports it, nothing is
    // written.
    let out = boot_with_cloud_init(&sandbox, "bad", "wrong");
    let read = |name: &str| std::fs::read_to_string(out.join(name)).unwrap_or_default();
    assert!(read("steps").ends_with("modules --mode final 1\n"), "{}", read("steps"));
    assert!(read("status").contains("status: error"), "{}", read("status"));
    assert!(
        read("cloud-init-output.log").contains("decryption failed: wrong passphrase"),
        "{}",
        read("cloud-init-output.log")
    );
    assert!(!out.join("run-machineadm/machine_config.yaml").exists());
}

#[test]
fn cryptadm_path_moves_the_runcmd_binary() {
    let scratch = Scratch::new();
    let passphrase = scratch.write("passphrase", "s3cret");
    let input = scratch.write("config.yaml", machine_config());
    let output =
        seal_cmd(&passphrase, &input).args(["--cloud-init", "--cryptadm-path", "/opt/bin/cryptadm"]).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let userdata = scratch.write("userdata", &output.stdout);
    assert_eq!(schema(&userdata).status.code(), Some(0));
    let decoded = decode_with_cloud_init(&scratch, &userdata, "path");
    assert_eq!(decoded.summary["runcmd"][0][0], "/opt/bin/cryptadm");
    for bad in ["cryptadm", "/opt/my bin/cryptadm", "/opt/%h/cryptadm", "/opt/$X", "/a,b"] {
        let output = seal_cmd(&passphrase, &input).args(["--cloud-init", "--cryptadm-path", bad]).output().unwrap();
        assert_eq!(output.status.code(), Some(3), "{bad}: {}", stderr(&output));
        assert!(stderr(&output).contains("hint: give --cryptadm-path an absolute path"), "{}", stderr(&output));
    }
}
