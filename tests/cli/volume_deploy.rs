//! deploy/: the DaemonSet, RBAC and examples pass `kubernetes-validate --strict` for Kubernetes 1.32, the
//! csi-addons objects validate against the CRDs vendored from kubernetes-csi-addons, and the flags the DaemonSet
//! gives `cryptadm volume serve` exist.

use crate::support::{Scratch, cryptadm, require_tool};
use std::path::Path;
use std::process::Command;

pub fn validate(deploy: &Path) -> std::process::Output {
    require_tool("kubernetes-validate", "pip install kubernetes-validate jsonschema");
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    Command::new("python3")
        .arg(manifest.join("tests/interop/validate_deploy.py"))
        .arg(deploy)
        .arg("1.32.0")
        .output()
        .expect("run python3")
}

#[test]
fn volume_deploy_manifests_validate_for_kubernetes_1_32_and_the_vendored_crds() {
    let deploy = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy");
    let output = validate(&deploy);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    for object in [
        "EncryptionKeyRotationJob/rotate-data-db-0 against the vendored CRD",
        "EncryptionKeyRotationCronJob/rotate-data-db-0-weekly against the vendored CRD",
        "daemonset/cryptadm-volume against version 1.32",
        "clusterrole/cryptadm-volume-sidecar against version 1.32",
        "persistentvolumeclaim/data-db-0 against version 1.32",
    ] {
        assert!(stdout.contains(object), "{object} not validated: {stdout}");
    }

    // The validation has teeth: a job without its target, or with a field the CRD does not know, fails.
    let scratch = Scratch::new();
    let copy = scratch.path("deploy");
    std::fs::create_dir_all(copy.join("examples")).unwrap();
    std::fs::create_dir_all(copy.join("vendor/csi-addons")).unwrap();
    for entry in std::fs::read_dir(deploy.join("vendor/csi-addons")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), copy.join("vendor/csi-addons").join(entry.file_name())).unwrap();
    }
    let job = std::fs::read_to_string(deploy.join("examples/encryptionkeyrotationjob.yaml")).unwrap();
    for broken in
        [job.replace("persistentVolumeClaim: data-db-0", "pvc: data-db-0"), job.replace("timeout: 180", "timeout: 10")]
    {
        std::fs::write(copy.join("examples/job.yaml"), broken).unwrap();
        let output = validate(&copy);
        assert!(!output.status.success(), "{}", String::from_utf8_lossy(&output.stdout));
    }

    // Every flag the DaemonSet passes to `cryptadm volume serve` exists.
    let daemonset = std::fs::read_to_string(deploy.join("cryptadm-volume.yaml")).unwrap();
    let container = daemonset.split("- name: cryptadm\n").nth(1).unwrap().split("- name: csi-addons").next().unwrap();
    let help = cryptadm().args(["volume", "serve", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    let flags: Vec<&str> = container
        .lines()
        .filter_map(|line| line.trim().strip_prefix("- --"))
        .map(|flag| flag.split('=').next().unwrap())
        .collect();
    assert!(flags.len() >= 5, "{flags:?}");
    for flag in flags {
        assert!(help.contains(&format!("--{flag}")), "--{flag} is not a flag of `cryptadm volume serve`");
    }
}

/// The DaemonSet of deploy/cryptadm-volume.yaml with `patch` (a strategic merge patch) applied by kubectl, as JSON.
/// (`kubectl patch --local` patches every object of a file, so the DaemonSet is taken out first.)
pub fn patched_daemonset(scratch: &Scratch, patch: &Path) -> serde_json::Value {
    require_tool("kubectl", "apt-get install kubectl");
    let extract = Command::new("python3")
        .args([
            "-c",
            "import json, sys, yaml\n\
             docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d['kind'] == 'DaemonSet']\n\
             assert len(docs) == 1, docs\n\
             print(json.dumps(docs[0]))",
        ])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/cryptadm-volume.yaml"))
        .output()
        .unwrap();
    assert!(extract.status.success(), "{}", String::from_utf8_lossy(&extract.stderr));
    let daemonset = scratch.write("daemonset.json", &extract.stdout);
    let patched = Command::new("kubectl")
        .args(["patch", "--local", "--type", "strategic", "-o", "json", "-f"])
        .arg(&daemonset)
        .arg("--patch-file")
        .arg(patch)
        .output()
        .unwrap();
    assert!(patched.status.success(), "kubectl patch: {}", String::from_utf8_lossy(&patched.stderr));
    serde_json::from_slice(&patched.stdout).unwrap()
}

pub fn container<'a>(daemonset: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    daemonset["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no container {name}"))
}

/// Every `deploy/*/cryptadm-volume-patch.yaml` (OpenBao/Vault, AWS): applied to the DaemonSet by kubectl, the
/// result validates for Kubernetes 1.32, and every flag it gives `cryptadm volume serve` exists.
#[test]
fn volume_deploy_patches_apply_validate_and_give_serve_only_flags_it_has() {
    let help = cryptadm().args(["volume", "serve", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    let deploy = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy");
    let mut patches: Vec<_> = std::fs::read_dir(&deploy)
        .unwrap()
        .map(|entry| entry.unwrap().path().join("cryptadm-volume-patch.yaml"))
        .filter(|patch| patch.is_file())
        .collect();
    patches.sort();
    assert!(patches.len() >= 2, "{patches:?}");
    for patch in patches {
        let scratch = Scratch::new();
        let daemonset = patched_daemonset(&scratch, &patch);
        std::fs::create_dir_all(scratch.path("deploy")).unwrap();
        scratch.write("deploy/daemonset.yaml", serde_json::to_vec_pretty(&daemonset).unwrap());
        let validated = validate(&scratch.path("deploy"));
        let report = String::from_utf8_lossy(&validated.stdout);
        assert!(
            validated.status.success(),
            "{}: {report}{}",
            patch.display(),
            String::from_utf8_lossy(&validated.stderr)
        );
        assert!(report.contains("daemonset/cryptadm-volume against version 1.32"), "{report}");
        let flags: Vec<&str> = container(&daemonset, "cryptadm")["args"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|a| a.as_str()?.strip_prefix("--"))
            .map(|flag| flag.split('=').next().unwrap())
            .collect();
        assert!(flags.len() >= 7, "{}: {flags:?}", patch.display());
        for flag in flags {
            assert!(
                help.contains(&format!("--{flag}")),
                "{}: --{flag} is not a flag of `volume serve`",
                patch.display()
            );
        }
        // The strategic merge kept the sidecar whole.
        assert!(container(&daemonset, "csi-addons")["args"].as_array().unwrap().len() >= 5);
    }
}

/// Where scripts/build-image puts the binary, and so the `command` of every container that runs cryptadm.
const BINARY_IN_IMAGE: &str = "/usr/local/bin/cryptadm";

/// Every container of deploy/ (its manifests, not the vendored CRDs) that runs cryptadm: its image and command.
fn cryptadm_containers() -> Vec<(String, String, Vec<String>)> {
    fn yaml_files(dir: &Path, found: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() && path.file_name().is_some_and(|n| n != "vendor") {
                yaml_files(&path, found);
            } else if path.extension().is_some_and(|e| e == "yaml") {
                found.push(path);
            }
        }
    }
    let mut files = Vec::new();
    yaml_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy"), &mut files);
    let mut containers = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let Some(image) = line.trim().strip_prefix("image:").map(str::trim) else { continue };
            let name = image.rsplit('/').next().unwrap().split([':', '@']).next().unwrap();
            if name != "cryptadm" {
                continue;
            }
            // The command is the container's next key (`command: ["…"]`, a JSON-compatible flow sequence).
            let command = lines[i + 1..]
                .iter()
                .find_map(|l| l.trim().strip_prefix("command:"))
                .map(|c| serde_json::from_str::<Vec<String>>(c.trim()).expect("command as a flow sequence of strings"))
                .unwrap_or_default();
            containers.push((file.display().to_string(), image.to_owned(), command));
        }
    }
    containers
}

/// Issue 34: every container of deploy/ that runs cryptadm names the image `scripts/build-image` makes for this
/// version, and runs the binary where that image has it.
#[test]
fn deploy_manifests_name_the_image_build_image_makes() {
    let version = env!("CARGO_PKG_VERSION");
    let containers = cryptadm_containers();
    assert!(!containers.is_empty(), "no manifest under deploy/ runs cryptadm");
    for (file, image, command) in &containers {
        assert_eq!(image, &format!("cryptadm:{version}"), "{file}: the image scripts/build-image makes");
        assert_eq!(command.first().map(String::as_str), Some(BINARY_IN_IMAGE), "{file}: the binary in the image");
    }
}

/// Issue 34: the image the manifests name runs. With the image (`.ci/run` builds it after the static binary and
/// sets CRYPTADM_IMAGE_ARCHIVE; without it the test says so and checks nothing): pushed to a node's loopback
/// registry under the manifests' name, pulled and started by a real containerd through the CRI, as the kubelet
/// starts the DaemonSet's container (the manifest's `command`, with `--version`) and as the image's own non-root
/// user, it prints cryptadm's version; its config names that user and carries the `org.opencontainers.image.*`
/// labels.
#[test]
#[cfg(feature = "pgp")] // the containerd node (tests/cli/containerd.rs) is part of the default build's tests
#[allow(clippy::print_stderr)] // says why the image was not run, in the test's output
fn deploy_manifests_image_runs_cryptadm() {
    let version = env!("CARGO_PKG_VERSION");
    let containers = cryptadm_containers();
    assert!(!containers.is_empty(), "no manifest under deploy/ runs cryptadm");
    let Some(archive) = std::env::var_os("CRYPTADM_IMAGE_ARCHIVE") else {
        eprintln!(
            "deploy image: skipped running the image: CRYPTADM_IMAGE_ARCHIVE is unset (.ci/run sets it to \
             scripts/build-image's output after building the static binary)"
        );
        return;
    };
    let archive = std::path::PathBuf::from(archive);
    assert!(archive.is_file(), "CRYPTADM_IMAGE_ARCHIVE={} is not a file", archive.display());
    let node = crate::containerd::Node::start_with(&[]);
    node.push_pause(&crate::containerd::static_busybox());
    let repository = format!("cryptadm:{version}");
    let pushed = Command::new("skopeo")
        .args(["--insecure-policy", "copy", "--dest-tls-verify=false"])
        .arg(format!("oci-archive:{}", archive.display()))
        .arg(node.image(&repository))
        .output()
        .unwrap();
    assert!(pushed.status.success(), "skopeo copy: {}", String::from_utf8_lossy(&pushed.stderr));

    let inspected = Command::new("skopeo")
        .args(["inspect", "--config", "--tls-verify=false"])
        .arg(node.image(&repository))
        .output()
        .unwrap();
    assert!(inspected.status.success(), "skopeo inspect: {}", String::from_utf8_lossy(&inspected.stderr));
    let config: serde_json::Value = serde_json::from_slice(&inspected.stdout).unwrap();
    assert_eq!(config["config"]["User"], "65532:65532", "{config}");
    let labels = &config["config"]["Labels"];
    assert_eq!(labels["org.opencontainers.image.version"], version, "{config}");
    for label in ["title", "revision", "created", "licenses", "description"] {
        assert!(labels[format!("org.opencontainers.image.{label}")].is_string(), "no {label} label: {config}");
    }

    for (file, _, command) in &containers {
        let mut run: Vec<&str> = command.iter().map(String::as_str).collect();
        run.push("--version");
        let pod = node
            .run_pod_command(&repository, &run)
            .unwrap_or_else(|e| panic!("{file}: the container did not run: {e}\n{}", node.log()));
        assert_eq!(pod["exit_code"], 0, "{file}: {pod}");
        assert_eq!(pod["stdout"], format!("cryptadm {version}\n"), "{file}: {pod}");
    }
}
