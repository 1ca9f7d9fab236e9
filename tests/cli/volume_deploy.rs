//! deploy/: the DaemonSet, RBAC and examples pass `kubernetes-validate --strict` for Kubernetes 1.32, the
//! csi-addons objects validate against the CRDs vendored from kubernetes-csi-addons, and the flags the DaemonSet
//! gives `cryptadm volume serve` exist.

use crate::support::{Scratch, cryptadm, require_tool};
use std::path::Path;
use std::process::Command;

fn validate(deploy: &Path) -> std::process::Output {
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
