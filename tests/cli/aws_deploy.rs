//! deploy/aws: the volume DaemonSet with its passphrases wrapped by AWS KMS and its credentials from the pod's own
//! service-account token (web identity). `kubectl patch --local` applies the shipped patch to the shipped
//! DaemonSet, kubernetes-validate checks the result for Kubernetes 1.32, and the patched container's own arguments
//! and environment run a rotation against moto as the role the shipped trust and policy documents make, with the
//! token where and how the kubelet would project it; boto3 decrypts what was stored and cryptsetup opens the
//! volume with it.

use crate::support::{Scratch, cryptadm};
use crate::support_aws::{Moto, REGION, moto};
use crate::support_luks::LuksImage;
use crate::volume_deploy::{container, patched_daemonset};
use serde_json::Value;
use std::path::{Path, PathBuf};

const OLD_PASSPHRASE: &str = "the passphrase the volume was made with";

fn deploy(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy").join(path)
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The value of `--NAME=VALUE` among a container's arguments.
fn argument<'a>(container: &'a Value, name: &str) -> &'a str {
    let prefix = format!("--{name}=");
    container["args"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|a| a.as_str().unwrap().strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no {prefix}"))
}

fn environment(container: &Value) -> Vec<(String, Value)> {
    let variables = container["env"].as_array().unwrap().iter();
    variables.map(|v| (v["name"].as_str().unwrap().to_owned(), v.clone())).collect()
}

/// The shipped documents with their placeholders filled in for moto's account, region and key.
fn fill_in(text: &str, aws: &Moto) -> String {
    let account = aws.key.split(':').nth(4).unwrap();
    let key_id = aws.key.rsplit('/').next().unwrap();
    text.replace("REGION", REGION).replace("ACCOUNT", account).replace("KEY_ID", key_id).replace("ISSUER", "oidc")
}

/// The kubelet's atomic-writer layout for a projected token: `token -> ..data/token`, `..data` a link to the
/// generation directory, the file with the volume's `defaultMode`.
fn project_token(dir: &Path, mode: u32) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let generation = "..2026_11_27_07_00_00.000000001";
    std::fs::create_dir_all(dir.join(generation)).unwrap();
    let file = dir.join(generation).join("token");
    std::fs::write(&file, "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQifQ.c2ln").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
    std::os::unix::fs::symlink(generation, dir.join("..data")).unwrap();
    std::os::unix::fs::symlink("..data/token", dir.join("token")).unwrap();
    dir.join("token")
}

/// The shipped volume policy as moto can evaluate it: issue 42's condition on the encryption context checked here
/// (the store is the container's `--key-store`, the volume any non-empty id, and the context has these two keys
/// only: what every stored value records), then dropped, since moto passes no `kms:EncryptionContext:` values to
/// its policy evaluation and would deny every request a condition names them in.
fn without_context_condition(policy: &str, key_store: &str) -> String {
    let document: Value = serde_json::from_str(policy).unwrap();
    let condition = &document["Statement"][0]["Condition"];
    assert_eq!(condition["StringEquals"]["kms:EncryptionContext:cryptadm:store"], key_store, "{condition}");
    assert_eq!(condition["StringLike"]["kms:EncryptionContext:cryptadm:volume"], "?*", "{condition}");
    assert_eq!(
        condition["ForAllValues:StringEquals"]["kms:EncryptionContextKeys"],
        serde_json::json!(["cryptadm:store", "cryptadm:volume"])
    );
    // Cut from the shipped text (the test below edits it as shipped): the Condition is the statement's last field.
    let start = policy.find(",\n      \"Condition\"").expect("the Condition");
    let end = start + policy[start..].find("\n    }\n  ]").expect("the statement's end");
    let cut = format!("{}{}", &policy[..start], &policy[end..]);
    assert!(serde_json::from_str::<Value>(&cut).unwrap()["Statement"][0].get("Condition").is_none(), "{cut}");
    cut
}

/// A passphrase seeded as docs/aws.md says, bound to its volume: `aws kms encrypt --encryption-context …`, stored
/// as the record cryptadm keeps (`{"ciphertext": …, "context": {…}}`).
fn seed_bound(aws: &Moto, store: &Path, volume: &str, passphrase: &Path) -> String {
    let context =
        serde_json::json!({"cryptadm:store": format!("file://{}", store.display()), "cryptadm:volume": volume});
    let blob = aws.oracle(&["encrypt", &aws.key, passphrase.to_str().unwrap(), &context.to_string()]);
    serde_json::json!({"ciphertext": blob.trim(), "context": context}).to_string()
}

#[test]
fn the_aws_patch_projects_an_sts_token_where_the_environment_says_and_keeps_the_base_mounts() {
    let scratch = Scratch::new();
    let daemonset = patched_daemonset(&scratch, &deploy("aws/cryptadm-volume-patch.yaml"));
    let cryptadm_container = container(&daemonset, "cryptadm");
    assert!(argument(cryptadm_container, "key-wrap").starts_with("aws-kms://arn:aws:kms:"));
    // The strategic merge kept the base DaemonSet's mounts and added the token's.
    let env = environment(cryptadm_container);
    let token_file = env.iter().find(|(n, _)| n == "AWS_WEB_IDENTITY_TOKEN_FILE").unwrap().1["value"].clone();
    let mounts = cryptadm_container["volumeMounts"].as_array().unwrap();
    for volume in ["key-store", "run-dir", "host-dev", "aws-token"] {
        assert!(mounts.iter().any(|m| m["name"] == volume), "{volume} not mounted: {mounts:?}");
    }
    let token_mount = mounts.iter().find(|m| m["name"] == "aws-token").unwrap();
    assert_eq!(
        Path::new(token_file.as_str().unwrap()).parent().unwrap(),
        Path::new(token_mount["mountPath"].as_str().unwrap())
    );
    let volumes = daemonset["spec"]["template"]["spec"]["volumes"].as_array().unwrap();
    let projected = &volumes.iter().find(|v| v["name"] == "aws-token").unwrap()["projected"];
    assert_eq!(projected["sources"][0]["serviceAccountToken"]["audience"], "sts.amazonaws.com");
    assert_eq!(projected["defaultMode"], 0o400);
}

/// The patched container's rotation, as the role of deploy/aws's trust and policy: it works with exactly that
/// policy, and the same role without `kms:Decrypt` is refused (exit 16) and changes nothing.
#[test]
fn the_patched_container_rotates_a_volume_as_the_role_the_shipped_policy_makes() {
    let aws = moto();
    let _serial = aws.lock_exclusive();
    let scratch = Scratch::new();
    let daemonset = patched_daemonset(&scratch, &deploy("aws/cryptadm-volume-patch.yaml"));
    let cryptadm_container = container(&daemonset, "cryptadm");

    let trust = scratch
        .write("trust.json", fill_in(&std::fs::read_to_string(deploy("aws/cryptadm-volume-trust.json")).unwrap(), aws));
    let shipped_policy = fill_in(&std::fs::read_to_string(deploy("aws/cryptadm-volume-policy.json")).unwrap(), aws);
    // The policy is scoped to the key the patch wraps with. moto authorizes every KMS request against the
    // resource "*" (it knows no KMS resource ARNs: moto/core/responses.py has no `_determine_resource` for KMS),
    // so a key ARN never matches there: the test checks the scope itself and lets moto check the actions.
    let key_wrap = fill_in(argument(cryptadm_container, "key-wrap"), aws);
    assert_eq!(key_wrap, format!("aws-kms://{}", aws.key));
    let document: Value = serde_json::from_str(&shipped_policy).unwrap();
    assert_eq!(document["Statement"][0]["Resource"], aws.key.as_str());
    let shipped_policy = without_context_condition(&shipped_policy, argument(cryptadm_container, "key-store"));
    let shipped_policy = shipped_policy.replace(&format!(r#""Resource": "{}""#, aws.key), r#""Resource": "*""#);
    let policy = scratch.write("policy.json", &shipped_policy);
    let without_decrypt = scratch.write("no-decrypt.json", shipped_policy.replace(r#", "kms:Decrypt""#, ""));
    assert_ne!(std::fs::read(&policy).unwrap(), std::fs::read(&without_decrypt).unwrap());

    // The container's key store and token, under this test's scratch directory.
    let store_in_pod = argument(cryptadm_container, "key-store").strip_prefix("file://").unwrap();
    assert_eq!(store_in_pod, "/var/lib/cryptadm/volume-keys", "the key store moved: map it here too");
    let store = scratch.path("store");
    let volumes = daemonset["spec"]["template"]["spec"]["volumes"].as_array().unwrap();
    let token_volume = volumes.iter().find(|volume| volume["name"] == "aws-token").unwrap();
    let projected_mode = token_volume["projected"]["defaultMode"].as_u64().unwrap() as u32;
    let token = project_token(&scratch.path("token"), projected_mode);
    let volume = LuksImage::new("aws-deploy", OLD_PASSPHRASE, 1000);
    let entry = store.join(&volume.id);
    std::fs::create_dir_all(&entry).unwrap();
    let old = scratch.write("old.key", OLD_PASSPHRASE);
    std::fs::write(entry.join("current"), seed_bound(aws, &store, &volume.id, &old)).unwrap();

    let rotate_as = |role: &str| {
        let mut command = cryptadm();
        aws.bare_env(&mut command);
        for (name, variable) in environment(cryptadm_container) {
            let value = match name.as_str() {
                "AWS_WEB_IDENTITY_TOKEN_FILE" => token.display().to_string(),
                "AWS_ROLE_SESSION_NAME" => "node-1".to_owned(),
                "AWS_ROLE_ARN" => role.to_owned(),
                _ => fill_in(variable["value"].as_str().unwrap(), aws),
            };
            command.env(&name, value);
        }
        // moto wants a signature on AssumeRoleWithWebIdentity, which AWS does not: let that one call through.
        aws.oracle(&["anonymous", "1"]);
        command
            .env("CRYPTADM_RUN_DIR", scratch.path("run"))
            .args(["volume", "rotate", "--volume-id", &volume.id, "--volume-path"])
            .arg(&volume.image)
            .arg(format!("--key-store=file://{}", store.display()))
            .arg(format!("--key-wrap={key_wrap}"))
            .output()
            .unwrap()
    };

    let denied_role =
        aws.oracle(&["role", "cryptadm-volume-no-decrypt", trust.to_str().unwrap(), without_decrypt.to_str().unwrap()]);
    let before = std::fs::read(&volume.image).unwrap();
    let denied = rotate_as(denied_role.trim());
    assert_eq!(denied.status.code(), Some(16), "{}", stderr(&denied));
    assert!(stderr(&denied).contains("AccessDenied"), "{}", stderr(&denied));
    assert!(before == std::fs::read(&volume.image).unwrap(), "a refused rotation changed the header");

    let role = aws.oracle(&["role", "cryptadm-volume", trust.to_str().unwrap(), policy.to_str().unwrap()]);
    assert!(role.trim().ends_with(":role/cryptadm-volume"), "{role}");
    let rotated = rotate_as(role.trim());
    assert!(rotated.status.success(), "{}", stderr(&rotated));
    let stored = std::fs::read_to_string(entry.join("current")).unwrap();
    let new_key = scratch.path("new.key");
    aws.oracle(&["decrypt", stored.trim(), new_key.to_str().unwrap(), &aws.key]);
    assert!(volume.opens(&std::fs::read(&new_key).unwrap()), "the key boto3 unwrapped does not open the volume");
    assert!(!volume.opens(OLD_PASSPHRASE.as_bytes()), "the old passphrase still opens the volume");
}

/// deploy/aws/pod-identity: the patch sets no credential variable (the EKS Pod Identity webhook adds them); the
/// patched container's arguments and environment, with what the webhook adds (the agent's URL, here a stand-in
/// that checks the pod's token, and the token file), rotate a volume as the role the shipped policy makes; boto3
/// decrypts what was stored and cryptsetup opens the volume with it.
#[test]
fn the_pod_identity_patch_rotates_a_volume_with_container_credentials() {
    let aws = moto();
    let _serial = aws.lock();
    let scratch = Scratch::new();
    let daemonset = patched_daemonset(&scratch, &deploy("aws/pod-identity/cryptadm-volume-patch.yaml"));
    let cryptadm_container = container(&daemonset, "cryptadm");
    let env = environment(cryptadm_container);
    assert!(
        env.iter().all(|(name, _)| !name.starts_with("AWS_ROLE") && !name.starts_with("AWS_CONTAINER")),
        "the webhook sets the credentials: {env:?}"
    );
    let trust: Value =
        serde_json::from_str(&std::fs::read_to_string(deploy("aws/pod-identity/cryptadm-volume-trust.json")).unwrap())
            .unwrap();
    assert_eq!(trust["Statement"][0]["Principal"]["Service"], "pods.eks.amazonaws.com");
    // The agent assumes the role as the service principal pods.eks.amazonaws.com, which moto cannot be: the stand-in
    // agent serves credentials of the role with the shipped policy, assumed by `admin`.
    let account = aws.key.split(':').nth(4).unwrap();
    let trust = scratch.write(
        "trust.json",
        format!(
            r#"{{"Version":"2012-10-17","Statement":[{{"Effect":"Allow","Principal":{{"AWS":"arn:aws:iam::{account}:user/admin"}},"Action":"sts:AssumeRole"}}]}}"#
        ),
    );
    let shipped_policy = fill_in(&std::fs::read_to_string(deploy("aws/cryptadm-volume-policy.json")).unwrap(), aws);
    // moto authorizes KMS calls against the resource "*" and knows no encryption-context condition keys (see the
    // web-identity test above).
    let shipped_policy =
        without_context_condition(&shipped_policy, argument(container(&daemonset, "cryptadm"), "key-store"));
    let policy = scratch
        .write("policy.json", shipped_policy.replace(&format!(r#""Resource": "{}""#, aws.key), r#""Resource": "*""#));
    aws.oracle(&["role", "cryptadm-volume-pod", trust.to_str().unwrap(), policy.to_str().unwrap()]);
    let keys = scratch.write("pod-role.json", aws.oracle(&["assume", "cryptadm-volume-pod"]));
    let token = project_token(&scratch.path("pod-identity"), 0o644);
    let agent = crate::aws_roles::ContainerStandIn::start(&keys, &token, scratch.path("agent.log"));

    let key_wrap = fill_in(argument(cryptadm_container, "key-wrap"), aws);
    let volume = LuksImage::new("aws-pod-identity", OLD_PASSPHRASE, 1000);
    let store = scratch.path("store");
    let entry = store.join(&volume.id);
    std::fs::create_dir_all(&entry).unwrap();
    let old = scratch.write("old.key", OLD_PASSPHRASE);
    std::fs::write(entry.join("current"), seed_bound(aws, &store, &volume.id, &old)).unwrap();
    let mut command = cryptadm();
    aws.bare_env(&mut command);
    for (name, variable) in env {
        command.env(&name, fill_in(variable["value"].as_str().unwrap(), aws));
    }
    let rotated = command
        .env("AWS_CONTAINER_CREDENTIALS_FULL_URI", agent.url())
        .env("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", &token)
        .env("CRYPTADM_RUN_DIR", scratch.path("run"))
        .args(["volume", "rotate", "--volume-id", &volume.id, "--volume-path"])
        .arg(&volume.image)
        .arg(format!("--key-store=file://{}", store.display()))
        .arg(format!("--key-wrap={key_wrap}"))
        .output()
        .unwrap();
    assert!(rotated.status.success(), "{}", stderr(&rotated));
    assert!(agent.requests().starts_with("GET /v1/credentials auth-ok\n"), "{}", agent.requests());
    let stored = std::fs::read_to_string(entry.join("current")).unwrap();
    let new_key = scratch.path("new.key");
    aws.oracle(&["decrypt", stored.trim(), new_key.to_str().unwrap(), &aws.key]);
    assert!(volume.opens(&std::fs::read(&new_key).unwrap()), "the key boto3 unwrapped does not open the volume");
}
