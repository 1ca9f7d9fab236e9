//! Images whose layer keys AWS KMS wraps (issue 31): `--recipient aws-kms://ARN` and `--key aws-kms://ARN`, the
//! layer's private options wrapped by KMS Encrypt under key provider `cryptadm`'s annotation, against the local AWS
//! API of `support_aws` (moto, authentication on). The independent side is boto3 with the `cryptography` package
//! (`tests/interop/aws/ocicrypt_kms.py`): it decrypts and checks the layers we wrap, and wraps layers we open. A
//! node's credentials come from the loopback instance-metadata stand-in (IMDSv2), as on EC2; its containerd pull is
//! proven in `openbao_image.rs`, which shares that test's containerd. Every test holds [`Moto::lock`] and reaches
//! no real instance metadata service.

use crate::aws::imds;
use crate::image::{TWO_LAYERS, fixture, layer_digests, layers, oci, tools};
use crate::openbao_image::provider_config;
use crate::support::{Scratch, cryptadm};
use crate::support_aws::{Moto, moto};
use base64::Engine as _;
use predicates::prelude::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

const ANNOTATION: &str = "org.opencontainers.image.enc.keys.provider.cryptadm";

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn unb64(text: &str) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD.decode(text).unwrap()
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// `cryptadm` with `keys` in the environment (and no instance metadata service).
fn with_keys(aws: &Moto, keys: &(String, String)) -> assert_cmd::Command {
    let mut command = cryptadm();
    aws.env_with(&mut command, keys);
    command
}

/// `cryptadm` on an instance: no credentials but the stand-in's (the instance profile), no region but its.
fn on_instance(aws: &Moto, endpoint: &str) -> assert_cmd::Command {
    let mut command = cryptadm();
    aws.bare_env(&mut command);
    command
        .env_remove("AWS_EC2_METADATA_DISABLED")
        .env_remove("AWS_REGION")
        .env("AWS_EC2_METADATA_SERVICE_ENDPOINT", endpoint);
    command
}

/// boto3 and `cryptography` on layouts (`ocicrypt_kms.py`), as the admin user.
fn python_oracle(aws: &Moto, args: &[&str]) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/aws/ocicrypt_kms.py");
    let output = aws.python_as_admin(&script).args(args).output().unwrap();
    assert!(output.status.success(), "ocicrypt_kms.py {args:?}: {}", stderr(&output));
    String::from_utf8(output.stdout).unwrap()
}

fn encrypt(mut command: assert_cmd::Command, recipients: &[String], src: &Path, dst: &Path) {
    command.args(["image", "encrypt"]);
    for recipient in recipients {
        command.args(["--recipient", recipient]);
    }
    let output = command.arg(oci(src)).arg(oci(dst)).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
}

/// A test's start: the AWS tests' lock held, and the two-layer fixture encrypted for the tests' KMS key (and for
/// `others`) by `user`.
struct Encrypted {
    aws: &'static Moto,
    _serial: std::sync::RwLockReadGuard<'static, ()>,
    work: Scratch,
    src: PathBuf,
    enc: PathBuf,
    /// `aws-kms://` and the key's ARN.
    recipient: String,
}

fn encrypted_for_the_key(user: fn(&Moto) -> &(String, String), others: &[String]) -> Encrypted {
    tools();
    let aws = moto();
    let serial = aws.lock();
    let work = Scratch::new();
    let (src, enc) = (work.path("src"), work.path("enc"));
    fixture(&src, TWO_LAYERS);
    let recipient = format!("aws-kms://{}", aws.key);
    let recipients: Vec<String> = others.iter().cloned().chain([recipient.clone()]).collect();
    encrypt(with_keys(aws, user(aws)), &recipients, &src, &enc);
    Encrypted { aws, _serial: serial, work, src, enc, recipient }
}

/// The decoded blob of the first layer's `provider.cryptadm` annotation, and the annotation itself.
fn blob(layout: &Path) -> (Value, String) {
    let annotation = layers(layout)[0]["layers"][0]["annotations"][ANNOTATION].as_str().expect(ANNOTATION).to_owned();
    (serde_json::from_slice(&unb64(&annotation)).unwrap(), annotation)
}

/// The config's diff IDs of a layout with one manifest.
fn diff_ids(layout: &Path) -> Vec<String> {
    let read = |digest: &str| -> Value {
        let path = layout.join("blobs/sha256").join(digest.trim_start_matches("sha256:"));
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
    };
    let index: Value = serde_json::from_slice(&std::fs::read(layout.join("index.json")).unwrap()).unwrap();
    let manifest = read(index["manifests"][0]["digest"].as_str().unwrap());
    let config = read(manifest["config"]["digest"].as_str().unwrap());
    config["rootfs"]["diff_ids"].as_array().unwrap().iter().map(|d| d.as_str().unwrap().to_owned()).collect()
}

/// What we wrap, boto3 unwraps (KMS Decrypt with the ARN of the blob) and `cryptography` decrypts to the original
/// layers, HMAC checked, digests and diff IDs equal. What boto3 wraps (KMS Encrypt of the private options it made),
/// we decrypt. `inspect` names the key without asking AWS.
#[test]
fn boto3_opens_the_layers_we_wrap_and_we_open_the_layers_boto3_wraps() {
    // The sealer may Encrypt but not Decrypt: wrapping needs nothing more.
    let Encrypted { aws, work, src, enc, recipient, .. } = &encrypted_for_the_key(|aws| &aws.sealer, &[]);
    let (wrapped, _) = blob(enc);
    assert_eq!(wrapped["scheme"], "aws-kms", "{wrapped}");
    assert_eq!(wrapped["recipients"][0]["key"], recipient.as_str());
    let ciphertext = wrapped["recipients"][0]["ciphertext"].as_str().unwrap();
    assert!(ciphertext.bytes().all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b)), "{ciphertext}");
    // Issue 42: the layer key is bound to its layer: the entry records the encryption context naming the plaintext
    // layer's digest, and boto3 decrypts the blob with exactly that context, not without it nor with another layer's.
    let first_layer = &layer_digests(src)[0];
    let context = |digest: &str| serde_json::json!({"cryptadm:layer": digest}).to_string();
    assert_eq!(wrapped["recipients"][0]["context"].to_string(), context(first_layer), "{wrapped}");
    let options = work.path("options.json");
    aws.oracle(&["decrypt", ciphertext, options.to_str().unwrap(), &aws.key, &context(first_layer)]);
    let options: Value = serde_json::from_slice(&std::fs::read(&options).unwrap()).unwrap();
    assert_eq!(options["digest"].as_str(), Some(first_layer.as_str()));
    for wrong in ["{}".to_owned(), context(&layer_digests(src)[1])] {
        let refused = aws.oracle_command(&["decrypt", ciphertext, "/dev/null", &aws.key, &wrong]).output().unwrap();
        assert!(!refused.status.success(), "boto3 decrypted the layer key with context {wrong}");
    }

    // The independent opener rebuilds each layer's context from its annotation.
    let opened: Vec<Value> = serde_json::from_str(&python_oracle(aws, &["open", enc.to_str().unwrap()])).unwrap();
    let digests: Vec<&str> = opened.iter().map(|l| l["digest"].as_str().unwrap()).collect();
    assert_eq!(digests, layer_digests(src), "boto3 + cryptography decrypt every layer to the original");
    let recorded: Vec<&str> = opened.iter().map(|l| l["opts_digest"].as_str().unwrap()).collect();
    assert_eq!(recorded, layer_digests(src));
    let diffs: Vec<&str> = opened.iter().map(|l| l["diff_id"].as_str().unwrap()).collect();
    assert_eq!(diffs, diff_ids(src));

    cryptadm()
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .env_remove("AWS_ACCESS_KEY_ID")
        .args(["image", "inspect"])
        .arg(oci(enc))
        .assert()
        .success()
        .stdout(predicate::str::contains(format!("provider.cryptadm[{recipient}]")));

    // boto3 wraps, we open: as the admin (environment keys), and as a node through its instance profile.
    let theirs = work.path("theirs");
    python_oracle(aws, &["encrypt", src.to_str().unwrap(), theirs.to_str().unwrap(), &aws.key]);
    let dec = work.path("dec");
    with_keys(aws, &aws.admin)
        .args(["image", "decrypt", "--key", recipient])
        .arg(oci(&theirs))
        .arg(oci(&dec))
        .assert()
        .success();
    assert_eq!(layer_digests(&dec), layer_digests(src));
    let stand_in = imds(work, aws, "node", 3600);
    on_instance(aws, &stand_in.endpoint())
        .args(["image", "authorize", "--key", recipient])
        .arg(oci(&theirs))
        .assert()
        .success()
        .stdout(predicate::str::contains("authorized"));
    let log = std::fs::read_to_string(&stand_in.log).unwrap();
    assert!(log.contains("GET /latest/meta-data/iam/security-credentials/cryptadm-node token-ok"), "{log}");
}

/// `image keyprovider` on a node whose only credentials are its instance profile: the keyunwrap request exactly as
/// containers/ocicrypt's Go marshals it (`--decryption-key provider:cryptadm`), the layer's options unwrapped by
/// KMS; an image decrypted through the provider as an ocicrypt tool does; a role without kms:Decrypt refused with
/// exit 16, AWS's code in the one line ocicrypt shows. (Debian 12's skopeo 1.9.3 has ocicrypt 1.0.3, without key
/// providers, so it cannot be the client here; containerd's stream processor is in openbao_image.rs.)
#[test]
fn a_node_unwraps_with_its_instance_profile_through_the_key_provider() {
    let Encrypted { aws, work, src, enc, .. } = &encrypted_for_the_key(|aws| &aws.sealer, &[]);
    let (_, annotation) = blob(enc);
    let unwrap = format!(
        r#"{{"op":"keyunwrap","keywrapparams":{{"ec":null,"optsdata":null}},"keyunwrapparams":{{"dc":{{"Parameters":{{"cryptadm":["{}"],"privkeys":null}}}},"annotation":"{annotation}"}}}}"#,
        b64(b"Enabled")
    );
    let node = imds(work, aws, "node", 3600);
    let output = on_instance(aws, &node.endpoint())
        .args(["image", "keyprovider"])
        .write_stdin(unwrap.clone())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let answer: Value = serde_json::from_slice(&output).unwrap();
    let options: Value =
        serde_json::from_slice(&unb64(answer["keyunwrapresults"]["optsdata"].as_str().expect("optsdata"))).unwrap();
    assert_eq!(options["digest"].as_str(), Some(layer_digests(src)[0].as_str()), "{options}");
    assert_eq!(unb64(options["symkey"].as_str().unwrap()).len(), 32);
    let log = std::fs::read_to_string(&node.log).unwrap();
    assert!(log.starts_with("PUT /latest/api/token token-issued\n") && !log.contains("no-token"), "{log}");

    // Through the provider, as an ocicrypt tool reaches it.
    let dec = work.path("dec");
    on_instance(aws, &node.endpoint())
        .env("OCICRYPT_KEYPROVIDER_CONFIG", provider_config(work))
        .args(["image", "decrypt", "--key", "provider:cryptadm"])
        .arg(oci(enc))
        .arg(oci(&dec))
        .assert()
        .success();
    assert_eq!(layer_digests(&dec), layer_digests(src));

    // The instance profile of a role that may not Decrypt: one line, exit 16, AWS's refusal named.
    drop(node);
    let sealer_node = imds(work, aws, "sealer-node", 3600);
    let denied =
        on_instance(aws, &sealer_node.endpoint()).args(["image", "keyprovider"]).write_stdin(unwrap).assert().code(16);
    let message = stderr(denied.get_output());
    assert_eq!(message.trim_end().lines().count(), 1, "{message}");
    assert!(message.contains("AccessDenied") && message.contains(&aws.key), "{message}");
}

/// Misuse: a role without kms:Decrypt (exit 16, our message and hint), a key the layer was not wrapped for, a blob
/// that names one key but was wrapped by another (KMS refuses: 16), and malformed ARNs (exit 2, before any request:
/// the endpoint then is a closed port, so a request would fail otherwise).
#[test]
fn misuse_is_refused_with_its_exit_status_and_writes_nothing() {
    let Encrypted { aws, work, src, enc, recipient, .. } = &encrypted_for_the_key(|aws| &aws.admin, &[]);
    let out = work.path("out");

    let sealer_node = imds(work, aws, "sealer-node", 3600);
    on_instance(aws, &sealer_node.endpoint())
        .args(["image", "decrypt", "--key", recipient])
        .arg(oci(enc))
        .arg(oci(&out))
        .assert()
        .code(16)
        .stderr(predicate::str::contains(format!("decrypting with KMS key `{}`", aws.key)))
        .stderr(predicate::str::contains("AccessDenied"))
        .stderr(predicate::str::contains("hint: the credentials' role or user lacks this permission"));
    assert!(!out.exists(), "nothing written");

    // Another key: the layer was not wrapped for it (nothing asked of KMS), 16 naming what it was wrapped for.
    with_keys(aws, &aws.admin)
        .args(["image", "decrypt", "--key", &format!("aws-kms://{}", aws.other_key)])
        .arg(oci(enc))
        .arg(oci(&out))
        .assert()
        .code(16)
        .stderr(predicate::str::contains(recipient.as_str()));
    // A blob that claims the other key for a ciphertext of the first: KMS itself refuses the pairing.
    let claimed = work.path("claimed");
    python_oracle(aws, &["encrypt", src.to_str().unwrap(), claimed.to_str().unwrap(), &aws.key, &aws.other_key]);
    with_keys(aws, &aws.admin)
        .args(["image", "decrypt", "--key", &format!("aws-kms://{}", aws.other_key)])
        .arg(oci(&claimed))
        .arg(oci(&out))
        .assert()
        .code(16)
        .stderr(predicate::str::contains(format!("decrypting with KMS key `{}`", aws.other_key)));
    assert!(!out.exists(), "nothing written");

    // Malformed: refused before any request.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    for (flag, bad, says) in [
        ("--recipient", "aws-kms://arn:aws:kms:eu-west-1:123456789012:bucket/x", "key/ID or alias/NAME"),
        ("--recipient", "aws-kms://alias/capi", "by key or alias ARN"),
        ("--recipient", "aws-kms:arn:aws:kms:eu-west-1:123456789012:key/x", "aws-kms://"),
        ("--key", "aws-kms://arn:aws:s3:::bucket", "arn:aws:kms:REGION:ACCOUNT:key/ID"),
    ] {
        let mut command = with_keys(aws, &aws.admin);
        command.env("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{closed}"));
        let command =
            command.args(["image", "encrypt", "--recipient", "aws-kms://arn:aws:kms:eu-west-1:123456789012:key/k"]);
        command
            .args([flag, bad])
            .arg(oci(src))
            .arg(oci(&out))
            .assert()
            .code(2)
            .stderr(predicate::str::contains(says).and(predicate::str::contains("unreachable").not()));
        assert!(!out.exists(), "nothing written for {bad}");
    }
}

/// An image for an AWS KMS key and a JWE key at once, then for a KMS key and a Transit key: each recipient unwraps
/// on its own (the JWE key with no AWS credentials at all, the KMS key with no JWE key nor Vault server, the Transit
/// key with no AWS credentials), and boto3 still opens the KMS-wrapped options; removing the JWE recipient leaves
/// the KMS key alone.
#[test]
fn an_aws_kms_recipient_mixes_with_others_and_each_unwraps() {
    let keys = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/keys");
    let jwe = format!("jwe:{}", keys.join("p256.pub.pem").display());
    let Encrypted { aws, work, src, enc, recipient, .. } =
        &encrypted_for_the_key(|aws| &aws.sealer, std::slice::from_ref(&jwe));
    let annotations = &layers(enc)[0]["layers"][0]["annotations"];
    assert!(annotations["org.opencontainers.image.enc.keys.jwe"].is_string(), "{annotations}");

    let by_jwe = work.path("by-jwe");
    let mut no_aws = cryptadm();
    aws.bare_env(&mut no_aws);
    no_aws.args(["image", "decrypt", "--key"]).arg(keys.join("p256.pkcs8.pem")).arg(oci(enc)).arg(oci(&by_jwe));
    no_aws.assert().success();
    assert_eq!(layer_digests(&by_jwe), layer_digests(src));
    let by_kms = work.path("by-kms");
    with_keys(aws, &aws.admin)
        .args(["image", "decrypt", "--key", recipient])
        .arg(oci(enc))
        .arg(oci(&by_kms))
        .assert()
        .success();
    assert_eq!(layer_digests(&by_kms), layer_digests(src));
    // The independent opener rebuilds each layer's context from its annotation.
    let opened: Vec<Value> = serde_json::from_str(&python_oracle(aws, &["open", enc.to_str().unwrap()])).unwrap();
    assert_eq!(opened.iter().map(|l| l["digest"].as_str().unwrap()).collect::<Vec<_>>(), layer_digests(src));

    // Removing the JWE recipient re-encrypts for the KMS key only: the JWE key opens nothing any more.
    let kms_only = work.path("kms-only");
    with_keys(aws, &aws.admin)
        .args(["image", "encrypt", "--remove-recipient", &jwe, "--accept-unidentified-loss"])
        .args(["--recipient", recipient, "--key", recipient])
        .arg(oci(enc))
        .arg(oci(&kms_only))
        .assert()
        .success()
        .stderr(predicate::str::contains(format!("keeps access: {recipient}")))
        .stderr(predicate::str::contains("loses access: jwe"));
    let mut no_aws = cryptadm();
    aws.bare_env(&mut no_aws);
    no_aws.args(["image", "decrypt", "--key"]).arg(keys.join("p256.pkcs8.pem")).arg(oci(&kms_only));
    no_aws.arg(oci(&work.path("refused"))).assert().code(16);
    let opened: Vec<Value> = serde_json::from_str(&python_oracle(aws, &["open", kms_only.to_str().unwrap()])).unwrap();
    assert_eq!(opened.iter().map(|l| l["digest"].as_str().unwrap()).collect::<Vec<_>>(), layer_digests(src));

    // With a Transit key of the tests' OpenBao in the same blob (`scheme` `key-managers`): OpenBao alone opens it
    // (no AWS credentials), KMS alone opens it (no Vault server), and boto3 still opens its KMS entry.
    let server = crate::support_openbao::dev();
    let transit = "vault-transit://transit/images";
    let both = work.path("both");
    let mut command = with_keys(aws, &aws.admin);
    command.envs(server.env()).env("VAULT_TOKEN", &server.root_token);
    encrypt(command, &[transit.to_owned(), recipient.clone()], src, &both);
    let (wrapped, _) = blob(&both);
    assert_eq!(wrapped["scheme"], "key-managers", "{wrapped}");
    let by_vault = work.path("by-vault");
    let mut vault_only = cryptadm();
    aws.bare_env(&mut vault_only);
    vault_only.envs(server.env()).env("VAULT_TOKEN", &server.root_token);
    vault_only.args(["image", "decrypt", "--key", transit]).arg(oci(&both)).arg(oci(&by_vault)).assert().success();
    assert_eq!(layer_digests(&by_vault), layer_digests(src));
    let by_aws = work.path("by-aws");
    with_keys(aws, &aws.admin)
        .env_remove("VAULT_ADDR")
        .env_remove("BAO_ADDR")
        .args(["image", "decrypt", "--key", recipient])
        .arg(oci(&both))
        .arg(oci(&by_aws))
        .assert()
        .success();
    assert_eq!(layer_digests(&by_aws), layer_digests(src));
    // The key provider tries every key the blob names: the Transit entry comes first and this node has no Vault.
    // (Its AWS credentials are the instance profile's: a key provider never inherits AWS_SECRET_ACCESS_KEY.)
    let by_provider = work.path("by-provider");
    let node = imds(work, aws, "node", 3600);
    on_instance(aws, &node.endpoint())
        .env_remove("VAULT_ADDR")
        .env_remove("BAO_ADDR")
        .env("OCICRYPT_KEYPROVIDER_CONFIG", provider_config(work))
        .args(["image", "decrypt", "--key", "provider:cryptadm"])
        .arg(oci(&both))
        .arg(oci(&by_provider))
        .assert()
        .success();
    assert_eq!(layer_digests(&by_provider), layer_digests(src));
    let opened: Vec<Value> = serde_json::from_str(&python_oracle(aws, &["open", both.to_str().unwrap()])).unwrap();
    assert_eq!(opened[0]["keys"], serde_json::json!([recipient]));
}
