//! `cryptadm secret generate-k8s` against the real tools: byte for byte what kubectl prints (YAML and JSON, data
//! key names that stress go-yaml's quoting and ordering), every document through `kubernetes-validate --strict`,
//! the Secret's data decoded back to the key files that decrypt a skopeo-encrypted image, the DaemonSet's
//! installer script run against a simulated Secret volume, and every refused input with its exit code.

use crate::image::{Keys, TWO_LAYERS, fixture, layer_digests, oci, run, skopeo_copy};
use crate::support::{Scratch, cryptadm, require_tool};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use predicates::prelude::*;
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const KEYS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/keys");
/// The newest Kubernetes minor of the installed kubectl (v1.32); kubernetes-validate bundles its schemas offline.
const K8S_VERSION: &str = "1.32.0";
const LABELS: [&str; 2] =
    ["app.kubernetes.io/component=image-decryption-keys", "app.kubernetes.io/managed-by=cryptadm"];

fn key(name: &str) -> PathBuf {
    Path::new(KEYS).join(name)
}

fn kubectl() {
    require_tool("kubectl", "see https://kubernetes.io/docs/tasks/tools/ (CI machines have it)");
}

fn run_with_stdin(cmd: &mut Command, stdin: &[u8]) -> String {
    let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
    child.stdin.take().unwrap().write_all(stdin).expect("write stdin");
    let output = child.wait_with_output().expect("wait");
    assert!(output.status.success(), "{cmd:?} failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

/// The oracle: `kubectl create secret generic … --dry-run=client -o yaml | kubectl label --local -f - … -o FORMAT`
/// with kubectl's `creationTimestamp: null` line taken out (the one difference the issue allows).
fn kubectl_secret(
    name: &str,
    namespace: Option<&str>,
    kind: &str,
    files: &[(String, PathBuf)],
    format: &str,
) -> String {
    let mut create = Command::new("kubectl");
    create.args(["create", "secret", "generic", name, "--dry-run=client", "-o", "yaml"]);
    create.arg(format!("--type={kind}"));
    if let Some(namespace) = namespace {
        create.args(["-n", namespace]);
    }
    for (entry, path) in files {
        create.arg(format!("--from-file={entry}={}", path.display()));
    }
    let created = run(&mut create);
    let labelled = run_with_stdin(
        Command::new("kubectl").args(["label", "--local", "-f", "-"]).args(LABELS).args(["-o", format]),
        created.as_bytes(),
    );
    let timestamp = if format == "json" { "        \"creationTimestamp\": null," } else { "  creationTimestamp: null" };
    let kept: Vec<&str> = labelled.lines().filter(|line| *line != timestamp).collect();
    assert_eq!(kept.len() + 1, labelled.lines().count(), "kubectl printed no `{timestamp}` line:\n{labelled}");
    kept.iter().map(|line| format!("{line}\n")).collect()
}

fn generate(args: &[&str]) -> String {
    let output = cryptadm().args(["secret", "generate-k8s"]).args(args).output().unwrap();
    assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

/// `--key=NAME=FILE` for each file (the `=` form: a NAME may start with `-`).
fn key_args(files: &[(String, PathBuf)]) -> Vec<String> {
    files.iter().map(|(entry, path)| format!("--key={entry}={}", path.display())).collect()
}

fn as_strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

/// Names kubectl accepts that go-yaml quotes, orders or lays out in its own way. Chosen so that go-yaml's key
/// order is consistent on the set (see [`consistent_order`]).
#[rustfmt::skip]
const AWKWARD_NAMES: &[&str] = &[
    "node.pem", "key2", "key10", "Key1", "k_1", "-", "--", "---a", "-a", "-1", "-inf", ".5", ".5_5", ".5__5",
    ".imagedecryptionkey", "_", "0", "00", "0x1F", "0b12", "1_000", "1e5", "1e400", "2001-12-14", "2001-02-30",
    "2000-02-29", "99999999999999999999", "y", "yes", "NO", "Off", "on", "true", "null", "a0", "a00", "a01", "a1",
    "a10", "10",
];

/// Whether go-yaml's key order is a consistent (transitive) order on these names. Where it is not (`007` < `0b1` <
/// `1.0` < `007`), kubectl's output changes from run to run, because go-yaml sorts Go map keys, whose iteration
/// order is random: there is then no byte-identical answer, only the same entries.
fn consistent_order(names: &[String]) -> bool {
    use cryptadm::render::kubectl::{go_yaml_key_order, natural_order};
    use std::cmp::Ordering::Less;
    let sorted = go_yaml_key_order(names);
    sorted.iter().enumerate().all(|(i, a)| sorted[i + 1..].iter().all(|b| natural_order(a, b) == Less))
}

/// The lines of a document, sorted: the same entries in any order.
fn sorted_lines(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_unstable();
    lines
}

#[test]
fn node_secret_is_byte_identical_to_kubectl_yaml_and_json() {
    kubectl();
    // Every accepted encoding; the DER key makes a binary value. The 129-character name is written `? name`.
    let long = "k".repeat(129);
    let mut files: Vec<(String, PathBuf)> = vec![
        ("rsa.pem".into(), key("rsa2048.pkcs1.pem")),
        ("p256.der".into(), key("p256.pkcs8.der")),
        ("p384.jwk".into(), key("p384.priv.jwk")),
        ("p521.sec1.der".into(), key("p521.sec1.der")),
        (long, key("p256.pkcs8.pem")),
        ("k".repeat(253), key("p256.pkcs8.pem")),
    ];
    files.extend(AWKWARD_NAMES.iter().map(|n| (n.to_string(), key("p256.pkcs8.pem"))));
    assert!(consistent_order(&files.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>()));
    for namespace in [None, Some("cryptadm-system")] {
        for format in ["yaml", "json"] {
            let mut args = key_args(&files);
            args.extend(["image-keys".into(), "--output-format".into(), format.into()]);
            if let Some(ns) = namespace {
                args.extend(["--namespace".into(), ns.into()]);
            }
            let ours = generate(&as_strs(&args));
            let theirs = kubectl_secret("image-keys", namespace, "Opaque", &files, format);
            pretty_assertions::assert_eq!(ours, theirs, "{format}, namespace {namespace:?}");
        }
    }
}

/// A small deterministic generator (xorshift), so that a failure names its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self, bound: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % bound as u64) as usize
    }

    /// A name from pieces go-yaml treats specially: digit runs, signs, dots, exponents, prefixes, booleans.
    fn name(&mut self) -> String {
        const PIECES: &[&str] = &[
            "0", "1", "9", "00", "42", "-", ".", "_", "e", "E", "x", "b", "o", "a", "Z", "y", "n", "key", "2001-", "12",
        ];
        let mut name = String::new();
        for _ in 0..1 + self.next(5) {
            name.push_str(PIECES[self.next(PIECES.len())]);
        }
        name
    }
}

#[test]
fn random_data_key_names_match_kubectl() {
    kubectl();
    let mut identical = 0;
    for seed in 1..=12u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let count = 1 + rng.next(40);
        let mut names: Vec<String> = (0..count).map(|_| rng.name()).collect();
        names.retain(|n| n != "." && !n.starts_with(".."));
        names.sort();
        names.dedup();
        let files: Vec<(String, PathBuf)> = names.iter().map(|n| (n.clone(), key("p256.pkcs8.pem"))).collect();
        let mut args = key_args(&files);
        args.push("random".into());
        let ours = generate(&as_strs(&args));
        let theirs = kubectl_secret("random", None, "Opaque", &files, "yaml");
        // JSON keys are in byte order (encoding/json): identical for every set.
        let mut json_args = args.clone();
        json_args.extend(["--output-format".into(), "json".into()]);
        let json = kubectl_secret("random", None, "Opaque", &files, "json");
        pretty_assertions::assert_eq!(generate(&as_strs(&json_args)), json, "seed {seed}");
        if consistent_order(&names) {
            pretty_assertions::assert_eq!(ours, theirs, "seed {seed}");
            identical += 1;
        } else {
            assert_eq!(sorted_lines(&ours), sorted_lines(&theirs), "seed {seed}");
        }
    }
    // Most sets are consistent; this keeps the byte-for-byte comparison from silently vanishing.
    assert!(identical >= 6, "only {identical} of 12 random sets had a consistent go-yaml order");
}

#[test]
fn enc_key_sync_and_kep_secrets_are_byte_identical_to_kubectl() {
    kubectl();
    let scratch = Scratch::new();
    let files = vec![("my-priv-key.pem".to_owned(), key("rsa2048.pkcs8.pem"))];
    let mut args = key_args(&files);
    args.extend(["my-decryption-key".into(), "--format".into(), "enc-key-sync".into()]);
    let ours = generate(&as_strs(&args));
    assert_eq!(ours, kubectl_secret("my-decryption-key", Some("enc-key-sync"), "key", &files, "yaml"));

    // kep: one entry whose value is the JSON list; the encrypted key carries its password.
    let password = key("password.txt").display().to_string();
    let (enc, plain) = (key("rsa2048.enc.pem"), key("p256.pkcs8.der"));
    let (enc_arg, plain_arg) = (enc.display().to_string(), plain.display().to_string());
    let kep = |format: &str| {
        generate(&[
            "keysecret",
            "--format",
            "kep",
            "-n",
            "demo",
            "--passphrase-file",
            &password,
            "--key",
            &enc_arg,
            "--key",
            &plain_arg,
            "--output-format",
            format,
        ])
    };
    let secret: Value = serde_json::from_str(&kep("json")).unwrap();
    let list_bytes = BASE64.decode(secret["data"][".imagedecryptionkey"].as_str().unwrap()).unwrap();
    let list: Value = serde_json::from_slice(&list_bytes).unwrap();
    let decoded = |entry: &Value, field: &str| entry[field].as_str().map(|d| BASE64.decode(d).unwrap());
    assert_eq!(decoded(&list[0], "keyData"), Some(std::fs::read(&enc).unwrap()));
    assert_eq!(decoded(&list[0], "keyPass"), Some(std::fs::read(&password).unwrap()));
    assert_eq!(decoded(&list[1], "keyData"), Some(std::fs::read(&plain).unwrap()));
    assert!(list[1].get("keyPass").is_none(), "no password for an unencrypted key: {list}");
    let files = vec![(".imagedecryptionkey".to_owned(), scratch.write("list.json", &list_bytes))];
    for format in ["yaml", "json"] {
        let theirs = kubectl_secret("keysecret", Some("demo"), "kubernetes.io/decryptionkeys", &files, format);
        pretty_assertions::assert_eq!(kep(format), theirs, "{format}");
    }
}

fn kubernetes_validate(path: &Path) -> (bool, String) {
    require_tool("kubernetes-validate", "python3 -m pip install kubernetes-validate");
    let output =
        Command::new("kubernetes-validate").args(["--strict", "-k", K8S_VERSION]).arg(path).output().expect("run");
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.success(), text)
}

/// The documents of a JSON output: one object, or the items of a v1 List (kubernetes-validate has no List schema).
fn json_documents(text: &str) -> Vec<Value> {
    let value: Value = serde_json::from_str(text).unwrap();
    match value["kind"].as_str() {
        Some("List") => value["items"].as_array().unwrap().clone(),
        _ => vec![value],
    }
}

#[test]
fn every_document_passes_kubernetes_validate_strict() {
    let scratch = Scratch::new();
    let rsa = key("rsa2048.pkcs8.pem").display().to_string();
    let cases: &[&[&str]] = &[
        &["image-keys", "--key", &rsa],
        &["image-keys", "-n", "kube-system", "--key", &rsa, "--with-daemonset"],
        &["image-keys", "--key", &rsa, "--with-daemonset", "--runtime", "crio"],
        &["image-keys", "--format", "enc-key-sync", "--key", &rsa],
        &["image-keys", "--format", "kep", "--key", &rsa],
    ];
    for (i, case) in cases.iter().enumerate() {
        for format in ["yaml", "json"] {
            let output = generate(&[case, &["--output-format", format][..]].concat());
            let documents = if format == "yaml" {
                vec![output]
            } else {
                json_documents(&output).iter().map(Value::to_string).collect()
            };
            let expected = if case.contains(&"--with-daemonset") { 2 } else { 1 };
            let mut passed = 0;
            for (j, document) in documents.iter().enumerate() {
                let (ok, text) = kubernetes_validate(&scratch.write(&format!("{i}-{j}.{format}"), document));
                assert!(ok, "{case:?} {format}: {text}");
                passed += text.matches(" passed for resource ").count();
            }
            assert_eq!(passed, expected, "{case:?} {format}");
        }
    }
}

/// kubectl re-prints each of our documents unchanged (`kubectl label --local` with the managed-by label, which
/// all but the ServiceAccount patch already have): the DaemonSet, ServiceAccount patch and Pod are in kubectl's
/// layout too, YAML and JSON (a List as `encoding/json` indents it, around kubectl's own printing of each item).
#[test]
fn every_document_is_printed_as_kubectl_prints_it() {
    kubectl();
    let scratch = Scratch::new();
    let rsa = key("rsa2048.pkcs8.pem").display().to_string();
    let cases: &[&[&str]] = &[
        &["image-keys", "-n", "kube-system", "--key", &rsa, "--with-daemonset"],
        &["image-keys", "--key", &rsa, "--with-daemonset", "--runtime", "crio"],
        &["keysecret", "--format", "kep", "--key", &rsa, "--service-account", "default", "-n", "demo"],
    ];
    const LABEL: &str = "app.kubernetes.io/managed-by=cryptadm";
    const YAML_LABEL: &str = "metadata:\n  labels:\n    app.kubernetes.io/managed-by: cryptadm\n";
    const JSON_LABEL: &str =
        "        \"labels\": {\n            \"app.kubernetes.io/managed-by\": \"cryptadm\"\n        },\n";
    // kubectl's printing of `document`, less the label when kubectl had to add it.
    let reprint = |document: &str, format: &str| {
        let path = scratch.write("doc", document);
        let printed = run(Command::new("kubectl")
            .args(["label", "--local", "--overwrite", "-f"])
            .arg(&path)
            .args([LABEL, "-o", format]));
        if document.contains("  labels:\n") {
            return printed;
        }
        let (added, without) = if format == "yaml" { (YAML_LABEL, "metadata:\n") } else { (JSON_LABEL, "") };
        assert!(printed.contains(added), "{printed}");
        printed.replacen(added, without, 1)
    };
    for case in cases {
        let yaml = generate(case);
        let documents: Vec<&str> = yaml.split("---\n").collect();
        assert!(documents.len() >= 2, "{yaml}");
        for document in &documents {
            pretty_assertions::assert_eq!(reprint(document, "yaml"), *document, "{case:?}");
        }
        let items: Vec<String> = documents
            .iter()
            .map(|d| reprint(d, "json").lines().map(|l| format!("        {l}")).collect::<Vec<_>>().join("\n"))
            .collect();
        let list = format!(
            "{{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n{}\n    ],\n    \"kind\": \"List\",\n    \
             \"metadata\": {{\n        \"resourceVersion\": \"\"\n    }}\n}}\n",
            items.join(",\n")
        );
        pretty_assertions::assert_eq!(generate(&[case, &["--output-format", "json"][..]].concat()), list, "{case:?}");
    }
}

/// The KEP's imageDecryptSecrets exists in no Kubernetes schema: strict validation refuses exactly that field on the
/// ServiceAccount and the Pod, and everything else in them passes.
#[test]
fn kep_references_fail_strict_validation_only_on_the_kep_field() {
    let scratch = Scratch::new();
    let rsa = key("rsa2048.pkcs8.pem").display().to_string();
    let args = ["keysecret", "--format", "kep", "--key", &rsa, "--service-account", "default", "-n", "demo"];
    let yaml = generate(&args);
    // The operator is told, on stderr, that nothing consumes these objects.
    let warned = cryptadm().args(["secret", "generate-k8s"]).args(args).output().unwrap();
    assert!(String::from_utf8_lossy(&warned.stderr).contains("warning: the encrypted-images KEP was never merged"));
    let (ok, text) = kubernetes_validate(&scratch.write("kep.yaml", &yaml));
    assert!(!ok);
    assert!(text.contains("passed for resource secret/keysecret"), "{text}");
    let errors: Vec<&str> = text.lines().filter(|l| l.starts_with("ERROR")).collect();
    assert_eq!(errors.len(), 2, "{text}");
    assert!(errors.iter().all(|e| e.contains("'imageDecryptSecrets' was unexpected")), "{text}");

    let json = generate(&[&args[..], &["--output-format", "json"]].concat());
    let documents = json_documents(&json);
    assert_eq!(
        documents.iter().map(|d| d["kind"].as_str().unwrap()).collect::<Vec<_>>(),
        ["Secret", "ServiceAccount", "Pod"]
    );
    assert_eq!(documents[1]["imageDecryptSecrets"], serde_json::json!([{"name": "keysecret"}]));
    assert_eq!(documents[2]["spec"]["imageDecryptSecrets"], serde_json::json!([{"name": "keysecret"}]));
    assert_eq!(documents[2]["spec"]["serviceAccountName"], "default");
    for (i, mut document) in documents.into_iter().enumerate() {
        document.as_object_mut().unwrap().remove("imageDecryptSecrets");
        if let Some(spec) = document.get_mut("spec") {
            spec.as_object_mut().unwrap().remove("imageDecryptSecrets");
        }
        let (ok, text) = kubernetes_validate(&scratch.write(&format!("{i}.json"), document.to_string()));
        assert!(ok && text.contains(" passed "), "{text}");
    }
}

/// Decodes the Secret's data into `dir`, one file per entry.
fn decode_secret(json: &str, dir: &Path) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir).unwrap();
    let secret = &json_documents(json)[0];
    secret["data"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, value)| {
            let path = dir.join(name);
            std::fs::write(&path, BASE64.decode(value.as_str().unwrap()).unwrap()).unwrap();
            path
        })
        .collect()
}

/// Writes each data entry of the Secret on stdin (YAML) as a file in the directory argv[1].
const PYTHON_DECODE: &str = "import base64, os, sys, yaml
secret = yaml.safe_load(sys.stdin)
for name, value in secret['data'].items():
    with open(os.path.join(sys.argv[1], name), 'wb') as f:
        f.write(base64.b64decode(value, validate=True))
";

#[test]
fn decoded_secret_decrypts_a_skopeo_encrypted_image() {
    let keys = Keys::new();
    let work = Scratch::new();
    let (rsa, rsa_pub) = keys.rsa("rsa", 2048);
    let (ec, ec_pub) = keys.ec("ec", "prime256v1");
    let ec_der = keys.scratch.path("ec.der");
    run(Command::new("openssl")
        .args(["pkcs8", "-topk8", "-nocrypt", "-outform", "DER", "-in"])
        .arg(&ec)
        .arg("-out")
        .arg(&ec_der));
    let src = work.path("src");
    fixture(&src, TWO_LAYERS);
    let enc = work.path("enc");
    skopeo_copy(
        &["--encryption-key", &format!("jwe:{rsa_pub}"), "--encryption-key", &format!("jwe:{ec_pub}")],
        &src,
        &enc,
    );

    let json = generate(&[
        "image-keys",
        "--key",
        &rsa,
        "--key",
        &format!("ec.der={}", ec_der.display()),
        "--output-format",
        "json",
    ]);
    let decoded = decode_secret(&json, &work.path("decoded"));
    assert_eq!(decoded.len(), 2);
    assert_eq!(std::fs::read(&decoded[1]).unwrap(), std::fs::read(&rsa).unwrap());
    assert_eq!(std::fs::read(&decoded[0]).unwrap(), std::fs::read(&ec_der).unwrap());
    // The YAML form decodes to the same files with an independent reader (PyYAML, which kubernetes-validate needs).
    let yaml = generate(&["image-keys", "--key", &rsa, "--key", &format!("ec.der={}", ec_der.display())]);
    let from_yaml = work.path("from-yaml");
    std::fs::create_dir(&from_yaml).unwrap();
    run_with_stdin(Command::new("python3").arg("-c").arg(PYTHON_DECODE).arg(&from_yaml), yaml.as_bytes());
    for file in &decoded {
        assert_eq!(std::fs::read(from_yaml.join(file.file_name().unwrap())).unwrap(), std::fs::read(file).unwrap());
    }
    for (i, file) in decoded.iter().enumerate() {
        let by_skopeo = work.path(&format!("skopeo{i}"));
        skopeo_copy(&["--decryption-key", &file.display().to_string()], &enc, &by_skopeo);
        assert_eq!(layer_digests(&by_skopeo), layer_digests(&src), "{}", file.display());
        let by_cryptadm = work.path(&format!("cryptadm{i}"));
        cryptadm()
            .args(["image", "decrypt", "--key"])
            .arg(file)
            .arg(oci(&enc))
            .arg(oci(&by_cryptadm))
            .assert()
            .success();
        assert_eq!(layer_digests(&by_cryptadm), layer_digests(&src));
    }
}

/// A Secret volume as the kubelet builds it: `NAME -> ..data/NAME`, `..data -> ..TIMESTAMP`, the files inside.
fn secret_volume(volume: &Path, generation: u32, files: &[(&str, &[u8])]) {
    let timestamped = volume.join(format!("..2026_11_21_09_00_0{generation}.1"));
    std::fs::create_dir_all(&timestamped).unwrap();
    for (name, bytes) in files {
        std::fs::write(timestamped.join(name), bytes).unwrap();
    }
    // The kubelet swaps `..data` atomically, then fixes the per-key links.
    let tmp = volume.join("..data_tmp");
    std::os::unix::fs::symlink(timestamped.file_name().unwrap(), &tmp).unwrap();
    std::fs::rename(&tmp, volume.join("..data")).unwrap();
    for entry in std::fs::read_dir(volume).unwrap() {
        let path = entry.unwrap().path();
        if !path.file_name().unwrap().to_string_lossy().starts_with("..") {
            std::fs::remove_file(path).unwrap();
        }
    }
    for (name, _) in files {
        std::os::unix::fs::symlink(format!("..data/{name}"), volume.join(name)).unwrap();
    }
}

/// Every entry under `root`, recursively, with its kind and mode; files with their contents.
fn tree(root: &Path) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let name = path.strip_prefix(root).unwrap().display().to_string();
            use std::os::unix::fs::PermissionsExt;
            let description = if meta.file_type().is_symlink() {
                "symlink".to_owned()
            } else if meta.is_dir() {
                stack.push(path.clone());
                "dir".to_owned()
            } else {
                format!(
                    "{:o} {}",
                    meta.permissions().mode() & 0o777,
                    String::from_utf8_lossy(&std::fs::read(&path).unwrap())
                )
            };
            found.push((name, description));
        }
    }
    found.sort();
    found
}

fn wait_for(what: &str, mut check: impl FnMut() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(start.elapsed() < Duration::from_secs(20), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn daemonset_script_installs_regular_files_and_follows_the_secret() {
    let rsa = key("rsa2048.pkcs8.pem").display().to_string();
    for (runtime, host_dir) in [("containerd", "/etc/containerd/ocicrypt"), ("crio", "/etc/crio")] {
        let json = generate(&[
            "image-keys",
            "--key",
            &rsa,
            "--with-daemonset",
            "--runtime",
            runtime,
            "--output-format",
            "json",
        ]);
        let daemonset = &json_documents(&json)[1];
        let pod = &daemonset["spec"]["template"]["spec"];
        let container = &pod["containers"][0];
        assert_eq!(pod["volumes"][1]["hostPath"]["path"], host_dir);
        assert_eq!(pod["volumes"][0]["secret"]["secretName"], "image-keys");
        assert_eq!(container["command"][0], "/bin/sh");
        let script = container["command"][2].as_str().unwrap();
        let env: Vec<(String, String)> = container["env"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| (e["name"].as_str().unwrap().to_owned(), e["value"].as_str().unwrap().to_owned()))
            .collect();
        assert_eq!(env.iter().find(|(n, _)| n == "KEYS_DIR").unwrap().1, "/host/keys/image-keys");

        // The container's view, rebased into a scratch directory: /host is the runtime's directory.
        let scratch = Scratch::new();
        let (volume, host) = (scratch.path("secret"), scratch.path("host"));
        let keys_root = host.join("keys");
        let mine = keys_root.join("image-keys");
        std::fs::create_dir_all(keys_root.join("other")).unwrap();
        std::fs::write(keys_root.join("other/theirs.pem"), "not ours").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(keys_root.join("other/theirs.pem"), std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::create_dir_all(mine.join("stray-dir")).unwrap();
        std::fs::write(mine.join("stale.pem"), "old").unwrap();
        std::os::unix::fs::symlink("/etc/hostname", mine.join("link.pem")).unwrap();
        secret_volume(&volume, 1, &[("node.pem", b"first"), (".dot.pem", b"dot")]);

        let mut child = Command::new("sh")
            .args(["-c", script])
            .env("SECRET_DIR", &volume)
            .env("KEYS_DIR", &mine)
            .env("STAGING_DIR", host.join(".cryptadm-staging/image-keys"))
            .env("INTERVAL", "1")
            .spawn()
            .expect("run the installer script");
        let expect = |files: &[(&str, &str)]| -> Vec<(String, String)> {
            let mut all: Vec<(String, String)> = vec![
                ("image-keys".into(), "dir".into()),
                ("other".into(), "dir".into()),
                ("other/theirs.pem".into(), "644 not ours".into()),
            ];
            all.extend(files.iter().map(|(n, c)| (format!("image-keys/{n}"), format!("600 {c}"))));
            all.sort();
            all
        };
        wait_for("the first pass", || tree(&keys_root) == expect(&[("node.pem", "first"), (".dot.pem", "dot")]));
        // Rotation: a changed key, a new one, one removed.
        secret_volume(&volume, 2, &[("node.pem", b"second"), ("new.pem", b"new")]);
        wait_for("the rotation", || tree(&keys_root) == expect(&[("node.pem", "second"), ("new.pem", "new")]));
        assert!(tree(&host.join(".cryptadm-staging")).iter().all(|(_, kind)| kind == "dir"), "staging left files");

        // SIGTERM ends it at once, with success.
        run(Command::new("kill").args(["-TERM", &child.id().to_string()]));
        let start = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            assert!(start.elapsed() < Duration::from_secs(5), "the script ignores SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        };
        assert!(status.success(), "{status:?}");
    }
}

/// Runs a refused command: the exit code, the message, a hint, and nothing on stdout.
fn refused(args: &[&str], code: i32, message: &str) {
    cryptadm()
        .args(["secret", "generate-k8s"])
        .args(args)
        .assert()
        .code(code)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains(message).and(predicate::str::contains("hint: ")));
}

#[test]
fn bad_inputs_are_refused_before_anything_is_printed() {
    let scratch = Scratch::new();
    let rsa = key("rsa2048.pkcs8.pem").display().to_string();
    let path = |name: &str| key(name).display().to_string();
    // Keys that cannot go into a Secret.
    refused(&["k", "--key", &path("rsa2048.pub.pem")], 3, "this is a public key");
    refused(&["k", "--key", &path("p256.pub.jwk")], 3, "this is a public key");
    refused(&["k", "--key", &path("rsa2048.enc.pem")], 3, "the private key is protected by a password");
    refused(&["k", "--key", &path("rsa2048.enc.der"), "--format", "enc-key-sync"], 3, "protected by a password");
    refused(&["k", "--key", &path("rsa2048.legacy-enc.pem")], 3, "protected by a password");
    // The node hint's command works on every encrypted form (`openssl pkcs8` refuses legacy PEM and DER).
    refused(&["k", "--key", &path("rsa2048.enc.der")], 3, "openssl pkey -in KEY");
    refused(&["k", "--key", &path("rsa2048.crt.pem")], 3, "no private key among the key files");
    let text = scratch.write("notes.txt", "hello\n");
    refused(&["k", "--key", &text.display().to_string()], 3, "not a key");
    refused(&["k", "--key", &path("ed25519.pkcs8.pem")], 3, "ed25519.pkcs8.pem");
    // Forms cryptadm reads but ocicrypt on a node does not (PEM SEC1, ASCII-armoured OpenPGP) are refused for
    // nodes; the KEP's list, which no node reads, takes them.
    refused(&["k", "--key", &path("p521.sec1.pem")], 3, "openssl pkcs8 -topk8 -nocrypt");
    generate(&["k", "--format", "kep", "--key", &path("p521.sec1.pem")]);
    // kep: an encrypted key needs its password, the right one.
    refused(&["k", "--format", "kep", "--key", &path("rsa2048.enc.pem")], 3, "encrypted");
    let wrong_arg = scratch.write("wrong", "wrong").display().to_string();
    // Legacy PEM encryption: no password helps, the hint says how to convert it.
    refused(
        &["k", "--format", "kep", "--key", &path("rsa2048.legacy-enc.pem"), "--passphrase-file", &wrong_arg],
        3,
        "openssl pkcs8 -topk8 -v2 aes-256-cbc",
    );
    refused(
        &["k", "--format", "kep", "--key", &path("rsa2048.enc.pem"), "--passphrase-file", &wrong_arg],
        3,
        "wrong password",
    );
    // Names.
    refused(&["My_Keys", "--key", &rsa], 3, "NAME `My_Keys` is not valid");
    refused(&["k", "--key", &rsa, "--namespace", "a.b"], 3, "--namespace `a.b` is not valid");
    refused(&[&"a".repeat(54), "--key", &rsa, "--with-daemonset"], 3, "at most 53 characters");
    let long = vec!["a".repeat(49); 5].join("."); // 249 characters, each label within 63
    refused(&[&long, "--format", "kep", "--key", &rsa, "--service-account", "default"], 3, "at most 245 characters");
    for entry in ["a b", "a:b", "..x", "..", &"k".repeat(254)] {
        refused(&["k", "--key", &format!("{entry}={rsa}")], 3, "is not a valid key name for a Secret");
    }
    let dotted = scratch.path("..x");
    std::fs::write(&dotted, std::fs::read(&rsa).unwrap()).unwrap();
    refused(&["k", "--key", &dotted.display().to_string()], 3, "must not start with `..`");
    refused(&["k", "--key", &rsa, "--key", &rsa], 3, "two key files are named `rsa2048.pkcs8.pem`");
    // In the KEP's list file names are not data entries: any name does.
    let spaced = scratch.write("my key.pem", std::fs::read(&rsa).unwrap());
    generate(&["k", "--format", "kep", "--key", &spaced.display().to_string(), "--key", &rsa, "--key", &rsa]);
    refused(&["k", "--key", &format!("={rsa}")], 2, "expected NAME=FILE");
    // Size: the data over 1 MiB in total, and one file over it.
    let many: Vec<String> = (0..700).flat_map(|i| ["--key".to_owned(), format!("k{i}={rsa}")]).collect();
    refused(&[&["k"][..], &as_strs(&many)].concat(), 3, "over the 1 MiB (1048576 bytes) limit");
    let huge = scratch.write("huge.pem", vec![b'A'; 2 << 20]);
    refused(&["k", "--key", &huge.display().to_string()], 3, "larger than 1 MiB");
    // Missing files, flags that do not go together.
    refused(&["k", "--key", "/nonexistent/key.pem"], 5, "/nonexistent/key.pem");
    refused(&["k", "--key", &rsa, "--format", "kep", "--with-daemonset"], 2, "--with-daemonset");
    refused(&["k", "--key", &rsa, "--service-account", "default"], 2, "--service-account");
    cryptadm().args(["secret", "generate-k8s", "k", "--key", &rsa, "--runtime", "crio"]).assert().code(2);
}

/// OpenPGP key files: a public key and a protected secret key are refused for nodes, armour too; the KEP's list
/// takes a protected key with the passphrase that unlocks it.
#[cfg(feature = "pgp")]
#[test]
fn openpgp_keys_are_checked_like_the_others() {
    let scratch = Scratch::new();
    // OpenPGP: a public key; a passphrase-protected secret key (node model).
    use sequoia_openpgp::serialize::SerializeInto;
    let (cert, _) = sequoia_openpgp::cert::CertBuilder::general_purpose(Some("a@example.com")).generate().unwrap();
    let public = scratch.write("pub.gpg", cert.to_vec().unwrap());
    refused(&["k", "--key", &public.display().to_string()], 3, "an OpenPGP public key");
    let (locked, _) = sequoia_openpgp::cert::CertBuilder::general_purpose(Some("b@example.com"))
        .set_password(Some("pw".into()))
        .generate()
        .unwrap();
    let locked = scratch.write("locked.gpg", locked.as_tsk().to_vec().unwrap());
    refused(&["k", "--key", &locked.display().to_string()], 3, "protected by a passphrase");
    let secret = scratch.write("secret.gpg", cert.as_tsk().to_vec().unwrap());
    generate(&["k", "--key", &secret.display().to_string()]);
    // ASCII-armoured OpenPGP is refused for nodes; the KEP's list, which no node reads, takes it.
    let armoured = scratch.write("secret.asc", cert.as_tsk().armored().to_vec().unwrap());
    refused(&["k", "--key", &armoured.display().to_string()], 3, "gpg --dearmor");
    refused(&["k", "--format", "enc-key-sync", "--key", &armoured.display().to_string()], 3, "ASCII-armoured");
    // In the KEP's list a protected OpenPGP key goes with its passphrase, which must unlock it.
    let (locked_arg, pw, wrong) =
        (locked.display().to_string(), scratch.write("pw", "pw"), scratch.write("wrong", "wrong"));
    refused(&["k", "--format", "kep", "--key", &locked_arg], 3, "protected by a passphrase");
    let wrong_arg = wrong.display().to_string();
    refused(&["k", "--format", "kep", "--key", &locked_arg, "--passphrase-file", &wrong_arg], 3, "does not unlock");
    let kep = generate(&[
        "k",
        "--format",
        "kep",
        "--key",
        &locked_arg,
        "--passphrase-file",
        &pw.display().to_string(),
        "--output-format",
        "json",
    ]);
    let secret: Value = serde_json::from_str(&kep).unwrap();
    let list: Value =
        serde_json::from_slice(&BASE64.decode(secret["data"][".imagedecryptionkey"].as_str().unwrap()).unwrap())
            .unwrap();
    assert_eq!(list[0]["keyPass"], BASE64.encode("pw"));
}
