//! Images through OpenBao Transit, against the real server of `support_openbao` (the `-dev` one): layer keys
//! wrapped with `--recipient vault-transit://transit/images` under the annotation
//! `org.opencontainers.image.enc.keys.provider.cryptadm`, and `cryptadm image keyprovider` as the ocicrypt key
//! provider `cryptadm` that opens (and makes) the same annotation for any ocicrypt tool.
//!
//! The key provider runs as ocicrypt runs it: a child given one JSON request on stdin (cryptadm's own key-provider
//! client marshals it exactly as containers/ocicrypt does, and one test sends Go's bytes literally). Debian 12's
//! skopeo 1.9.3 is built with ocicrypt 1.0.3, which has no key providers (`provider:` is "Provided protocol not
//! recognized"), so skopeo itself cannot be the client here. Children never get the token: they log in with the
//! node's JWT (a service-account token file), as a runtime's key provider or stream processor does.

use crate::image::{TWO_LAYERS, fixture, layer_digests, layers, oci, tools};
use crate::support::{Scratch, cryptadm};
use crate::support_openbao::{self as bao, OpenBao};
use base64::Engine as _;
use predicates::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const KEY: &str = "vault-transit://transit/images";
const ANNOTATION: &str = "org.opencontainers.image.enc.keys.provider.cryptadm";

/// The test's policies and roles on the shared dev server (made once per test binary).
struct Setup {
    /// A token that may only `encrypt` with `transit/images`.
    encrypt_token: String,
    /// A token that may only `decrypt` with `transit/images`.
    decrypt_token: String,
}

/// JWT roles (at `jwt/`): `image-node` decrypts with `transit/images`, `image-builder` encrypts with it,
/// `image-stranger` has the default policy only.
fn setup() -> &'static Setup {
    static SETUP: OnceLock<Setup> = OnceLock::new();
    SETUP.get_or_init(|| {
        tools();
        let server = bao::dev();
        let dir = Scratch::new();
        for (name, body) in [
            ("image-encrypt", "path \"transit/encrypt/images\" { capabilities = [\"update\"] }\n"),
            ("image-decrypt", "path \"transit/decrypt/images\" { capabilities = [\"update\"] }\n"),
        ] {
            let file = dir.write(&format!("{name}.hcl"), body);
            server.bao(&["policy", "write", name, &file.display().to_string()]);
        }
        for (role, policy) in
            [("image-node", "image-decrypt"), ("image-builder", "image-encrypt"), ("image-stranger", "default")]
        {
            jwt_role(server, role, policy);
        }
        Setup {
            encrypt_token: server.token_with_policy("image-encrypt"),
            decrypt_token: server.token_with_policy("image-decrypt"),
        }
    })
}

/// Creates (or changes the policy of) JWT role `role` at `jwt/`, for service account `kube-system:ROLE`.
fn jwt_role(server: &OpenBao, role: &str, policy: &str) {
    server.bao(&[
        "write",
        &format!("auth/jwt/role/{role}"),
        "role_type=jwt",
        &format!("bound_audiences={}", bao::AUDIENCE),
        "user_claim=sub",
        &format!("bound_subject=system:serviceaccount:kube-system:{role}"),
        &format!("token_policies={policy}"),
        "token_ttl=10m",
    ]);
}

/// `cryptadm` with the server's address and `token`, nothing else of Vault's.
fn with_token(server: &OpenBao, token: &str) -> assert_cmd::Command {
    let mut command = cryptadm();
    command.env_remove("BAO_TOKEN").env_remove("BAO_ADDR").envs(server.env()).env("VAULT_TOKEN", token);
    command
}

/// `cryptadm` with the server's address and a JWT login as `role` (what a node, or a runtime's key provider, has).
fn with_jwt(server: &OpenBao, scratch: &Scratch, role: &str) -> assert_cmd::Command {
    let jwt = server.jwt_file(scratch, role);
    let mut command = cryptadm();
    command
        .env_remove("VAULT_TOKEN")
        .env_remove("BAO_TOKEN")
        .env_remove("BAO_ADDR")
        .envs(server.env())
        .env("CRYPTADM_VAULT_AUTH", "jwt")
        .env("CRYPTADM_VAULT_ROLE", role)
        .env("CRYPTADM_VAULT_JWT_FILE", jwt);
    command
}

/// An ocicrypt key-provider configuration naming provider `cryptadm`: the binary under test, `image keyprovider`.
pub(crate) fn provider_config(scratch: &Scratch) -> PathBuf {
    let binary = assert_cmd::cargo::cargo_bin("cryptadm");
    let document = serde_json::json!({"key-providers": {"cryptadm": {"cmd": {
        "path": binary.display().to_string(), "args": ["image", "keyprovider"]}}}});
    scratch.write("ocicrypt_keyprovider.conf", serde_json::to_vec_pretty(&document).unwrap())
}

/// The decoded blob of the first layer's `provider.cryptadm` annotation.
fn blob(layout: &Path) -> serde_json::Value {
    let annotation = layers(layout)[0]["layers"][0]["annotations"][ANNOTATION].as_str().expect(ANNOTATION).to_owned();
    assert!(!annotation.contains(','), "one entry: {annotation}");
    serde_json::from_slice(&base64::engine::general_purpose::STANDARD.decode(annotation).unwrap()).unwrap()
}

#[test]
fn transit_recipient_decrypts_natively_and_through_the_key_provider() {
    let setup = setup();
    let server = bao::dev();
    let work = Scratch::new();
    let (src, enc) = (work.path("src"), work.path("enc"));
    fixture(&src, TWO_LAYERS);
    with_token(server, &setup.encrypt_token)
        .args(["image", "encrypt", "--recipient", KEY])
        .arg(oci(&src))
        .arg(oci(&enc))
        .assert()
        .success();
    let wrapped = blob(&enc);
    assert_eq!(wrapped["scheme"], "vault-transit");
    assert_eq!(wrapped["recipients"][0]["key"], KEY);
    assert!(wrapped["recipients"][0]["ciphertext"].as_str().unwrap().starts_with("vault:v1:"), "{wrapped}");
    // Transit itself opens the ciphertext into ocicrypt's private options, with the associated data rebuilt from
    // the entry's recorded context (issue 42: base64 of its compact JSON, naming the layer), and only with it.
    let ciphertext = wrapped["recipients"][0]["ciphertext"].as_str().unwrap();
    let context = &wrapped["recipients"][0]["context"];
    assert_eq!(context["cryptadm:layer"].as_str(), Some(layer_digests(&src)[0].as_str()), "{wrapped}");
    let associated = base64::engine::general_purpose::STANDARD.encode(context.to_string());
    let refused = server
        .bao_command(&server.root_token)
        .args(["write", "-field=plaintext", "transit/decrypt/images", &format!("ciphertext={ciphertext}")])
        .output()
        .unwrap();
    assert!(!refused.status.success(), "Transit opened a bound layer key without its associated data");
    let plaintext = server.bao(&[
        "write",
        "-field=plaintext",
        "transit/decrypt/images",
        &format!("ciphertext={ciphertext}"),
        &format!("associated_data={associated}"),
    ]);
    let options: serde_json::Value =
        serde_json::from_slice(&base64::engine::general_purpose::STANDARD.decode(plaintext.trim()).unwrap()).unwrap();
    assert!(options["symkey"].is_string() && options["cipheroptions"]["nonce"].is_string(), "{options}");

    // inspect names the Transit key (reading no secret, asking no server).
    cryptadm()
        .env_remove("VAULT_ADDR")
        .args(["image", "inspect"])
        .arg(oci(&enc))
        .assert()
        .success()
        .stdout(predicate::str::contains(format!("provider.cryptadm[{KEY}]")));

    // Natively, with a token that may decrypt.
    let dec = work.path("dec");
    with_token(server, &setup.decrypt_token)
        .args(["image", "decrypt", "--key", KEY])
        .arg(oci(&enc))
        .arg(oci(&dec))
        .assert()
        .success();
    assert_eq!(layer_digests(&dec), layer_digests(&src));

    // Through the key provider, as ocicrypt tools reach it: `--decryption-key provider:cryptadm`, the provider
    // started with the node's JWT login (no token in its environment).
    let config = provider_config(&work);
    let via_provider = work.path("via-provider");
    with_jwt(server, &work, "image-node")
        .env("OCICRYPT_KEYPROVIDER_CONFIG", &config)
        .args(["image", "decrypt", "--key", "provider:cryptadm"])
        .arg(oci(&enc))
        .arg(oci(&via_provider))
        .assert()
        .success();
    assert_eq!(layer_digests(&via_provider), layer_digests(&src));

    // authorize: the decrypt token may; the encrypt-only token is refused by OpenBao, exit 16, its words shown.
    with_token(server, &setup.decrypt_token)
        .args(["image", "authorize", "--key", KEY])
        .arg(oci(&enc))
        .assert()
        .success()
        .stdout(predicate::str::contains("authorized"));
    let denied = with_token(server, &setup.encrypt_token)
        .args(["image", "authorize", "--key", KEY])
        .arg(oci(&enc))
        .assert()
        .code(16);
    let stderr = String::from_utf8_lossy(&denied.get_output().stderr).into_owned();
    assert!(stderr.contains("permission denied") && stderr.contains("transit/images"), "{stderr}");
    assert!(!stderr.contains(&setup.encrypt_token), "the token is never shown: {stderr}");
}

#[test]
fn a_token_or_role_without_decrypt_fails_with_16_and_writes_nothing() {
    let setup = setup();
    let server = bao::dev();
    let work = Scratch::new();
    let (src, enc) = (work.path("src"), work.path("enc"));
    fixture(&src, TWO_LAYERS);
    with_token(server, &setup.encrypt_token)
        .args(["image", "encrypt", "--recipient", KEY])
        .arg(oci(&src))
        .arg(oci(&enc))
        .assert()
        .success();
    let out = work.path("out");
    let assert = with_token(server, &setup.encrypt_token)
        .args(["image", "decrypt", "--key", KEY])
        .arg(oci(&enc))
        .arg(oci(&out))
        .assert()
        .code(16)
        .stderr(predicate::str::contains("permission denied by OpenBao/Vault"))
        .stderr(predicate::str::contains("hint: Vault refused: check the token or login role"));
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(!stderr.contains(&setup.encrypt_token), "{stderr}");
    assert!(!out.exists(), "nothing written");
    // Through the key provider, a node role without decrypt: the provider's one-line error reaches the caller.
    let config = provider_config(&work);
    with_jwt(server, &work, "image-stranger")
        .env("OCICRYPT_KEYPROVIDER_CONFIG", &config)
        .args(["image", "decrypt", "--key", "provider:cryptadm"])
        .arg(oci(&enc))
        .arg(oci(&out))
        .assert()
        .failure()
        .stderr(predicate::str::contains("permission denied"));
    assert!(!out.exists(), "nothing written");
    // A key the layer was not wrapped with opens nothing: 16, naming what the layer was wrapped for.
    with_token(server, &setup.decrypt_token)
        .args(["image", "decrypt", "--key", "vault-transit://transit/capi"])
        .arg(oci(&enc))
        .arg(oci(&out))
        .assert()
        .code(16)
        .stderr(predicate::str::contains("provider.cryptadm"));
    // No server configured: a usage error before anything is read.
    cryptadm()
        .env_remove("VAULT_ADDR")
        .env_remove("BAO_ADDR")
        .args(["image", "decrypt", "--key", KEY])
        .arg(oci(&enc))
        .arg(oci(&out))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("VAULT_ADDR"));
    // A malformed reference.
    with_token(server, &setup.decrypt_token)
        .args(["image", "decrypt", "--key", "vault-transit://transit"])
        .arg(oci(&enc))
        .arg(oci(&out))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("vault-transit://MOUNT/KEY"));
    assert!(!out.exists(), "nothing written");
}

#[test]
fn key_provider_wraps_what_cryptadm_decrypts() {
    let setup = setup();
    let server = bao::dev();
    let work = Scratch::new();
    let (src, enc) = (work.path("src"), work.path("enc"));
    fixture(&src, TWO_LAYERS);
    let config = provider_config(&work);
    // What `skopeo copy --encryption-key provider:cryptadm:vault-transit://transit/images` asks of the provider.
    with_jwt(server, &work, "image-builder")
        .env("OCICRYPT_KEYPROVIDER_CONFIG", &config)
        .args(["image", "encrypt", "--recipient", &format!("provider:cryptadm:{KEY}")])
        .arg(oci(&src))
        .arg(oci(&enc))
        .assert()
        .success();
    assert_eq!(blob(&enc)["recipients"][0]["key"], KEY);
    let dec = work.path("dec");
    with_token(server, &setup.decrypt_token)
        .args(["image", "decrypt", "--key", KEY])
        .arg(oci(&enc))
        .arg(oci(&dec))
        .assert()
        .success();
    assert_eq!(layer_digests(&dec), layer_digests(&src));
    // `provider:cryptadm` without a Transit key cannot wrap: the provider says how to name one.
    with_jwt(server, &work, "image-builder")
        .env("OCICRYPT_KEYPROVIDER_CONFIG", &config)
        .args(["image", "encrypt", "--recipient", "provider:cryptadm"])
        .arg(oci(&src))
        .arg(oci(&work.path("x")))
        .assert()
        .failure()
        .stderr(predicate::str::contains("provider:cryptadm:vault-transit://MOUNT/KEY"));
    // Both ways of naming the same annotation at once are refused.
    with_jwt(server, &work, "image-builder")
        .env("OCICRYPT_KEYPROVIDER_CONFIG", &config)
        .args(["image", "encrypt", "--recipient", &format!("provider:cryptadm:{KEY}"), "--recipient", KEY])
        .arg(oci(&src))
        .arg(oci(&work.path("x")))
        .assert()
        .code(3)
        .stderr(predicate::str::contains("not both"));
}

/// The provider read from Go's own bytes: the requests below are what containers/ocicrypt's keyprovider.go
/// marshals (json.Marshal of KeyProviderKeyWrapProtocolInput: `[]byte` as base64, nil as null, both parameter
/// blocks present), and the answers are read as Go would.
#[test]
fn key_provider_speaks_ocicrypts_json() {
    setup();
    let server = bao::dev();
    let work = Scratch::new();
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    let options = br#"{"symkey":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=","digest":"sha256:a27bf37cd685bd9528417aa3b952ed9203c81c26a8c8f21970e41dcb7c56a7ac","cipheroptions":{"nonce":"8PHy8/T19vf4+fr7/P3+/w=="}}"#;
    let wrap = format!(
        r#"{{"op":"keywrap","keywrapparams":{{"ec":{{"Parameters":{{"cryptadm":["{}"],"pubkeys":["{}"]}},"DecryptConfig":{{"Parameters":null}}}},"optsdata":"{}"}},"keyunwrapparams":{{"dc":null,"annotation":null}}}}"#,
        b64(KEY.as_bytes()),
        b64(b"-----BEGIN PUBLIC KEY-----"),
        b64(options)
    );
    let output = with_jwt(server, &work, "image-builder")
        .args(["image", "keyprovider"])
        .write_stdin(wrap)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let answer: serde_json::Value = serde_json::from_slice(&output).unwrap();
    let annotation = answer["keywrapresults"]["annotation"].as_str().expect("keywrapresults.annotation").to_owned();
    let unwrap = format!(
        r#"{{"op":"keyunwrap","keywrapparams":{{"ec":null,"optsdata":null}},"keyunwrapparams":{{"dc":{{"Parameters":{{"cryptadm":["{}"],"privkeys":null}}}},"annotation":"{annotation}"}}}}"#,
        b64(b"Enabled")
    );
    let output = with_jwt(server, &work, "image-node")
        .args(["image", "keyprovider"])
        .write_stdin(unwrap.clone())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let answer: serde_json::Value = serde_json::from_slice(&output).unwrap();
    let optsdata = answer["keyunwrapresults"]["optsdata"].as_str().expect("keyunwrapresults.optsdata");
    assert_eq!(base64::engine::general_purpose::STANDARD.decode(optsdata).unwrap(), options);
    // The builder may encrypt but not decrypt: one line on stderr (what ocicrypt shows), exit 16.
    let denied =
        with_jwt(server, &work, "image-builder").args(["image", "keyprovider"]).write_stdin(unwrap).assert().code(16);
    let stderr = String::from_utf8_lossy(&denied.get_output().stderr).into_owned();
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("permission denied") && stderr.contains("transit/images"), "{stderr}");
    // Not ocicrypt's JSON: exit 3.
    with_jwt(server, &work, "image-node")
        .args(["image", "keyprovider"])
        .write_stdin("{\"op\":\"keysteal\"}")
        .assert()
        .code(3)
        .stderr(predicate::str::contains("unknown op"));
}

/// A key provider's environment never holds the Vault token, while the provider still logs in by itself.
#[test]
fn key_providers_never_inherit_the_token() {
    let setup = setup();
    let server = bao::dev();
    let work = Scratch::new();
    let dump = work.path("env.txt");
    let script = work.script("dump-env", &format!("#!/bin/sh\nenv > '{}'\nexit 1\n", dump.display()));
    let config = work.write(
        "dump.conf",
        serde_json::to_vec(&serde_json::json!({"key-providers": {"dump": {"cmd": {"path": script}}}})).unwrap(),
    );
    let (src, enc) = (work.path("src"), work.path("enc"));
    fixture(&src, TWO_LAYERS);
    with_token(server, &setup.encrypt_token)
        .args(["image", "encrypt", "--recipient", KEY])
        .arg(oci(&src))
        .arg(oci(&enc))
        .assert()
        .success();
    // Make the dump provider run: its annotation must be on the layer, so add it with the decrypt token's help.
    with_token(server, &setup.decrypt_token)
        .env("OCICRYPT_KEYPROVIDER_CONFIG", &config)
        .args(["image", "encrypt", "--recipient", "provider:dump", "--key", KEY])
        .arg(oci(&enc))
        .arg(oci(&work.path("enc2")))
        .assert()
        .failure();
    let environment = std::fs::read_to_string(&dump).expect("the provider ran");
    assert!(!environment.contains(&setup.decrypt_token), "the token leaked into a key provider's environment");
    assert!(environment.contains("VAULT_ADDR="), "the rest of the environment is inherited");
}

/// containerd (the CRI harness of `containerd.rs`) pulls a Transit-encrypted image: its stream processor,
/// configured by `node-config --processor-env` with the server and a JWT login for the node's role, unwraps the
/// layer key through OpenBao. When the role loses decrypt, the next pull fails with cryptadm's message and unpacks
/// nothing. The same node (one containerd) pulls an image whose layer key AWS KMS wrapped (`aws-kms://ARN`, issue
/// 31): the processor's only AWS credentials are the node's instance profile, from the loopback IMDSv2 stand-in of
/// `aws.rs` in front of the tests' moto.
#[cfg(feature = "pgp")]
#[test]
fn containerd_pulls_a_transit_encrypted_image_with_the_nodes_role() {
    use crate::containerd::{Layer, Node, make_layout};
    let setup = setup();
    let server = bao::dev();
    let work = Scratch::new();
    let role = "image-containerd";
    jwt_role(server, role, "image-decrypt");
    let jwt = server.jwt_file(&work, role);
    let mut settings: Vec<String> = server.env().into_iter().map(|(name, value)| format!("{name}={value}")).collect();
    settings.extend([
        "CRYPTADM_VAULT_AUTH=jwt".to_owned(),
        format!("CRYPTADM_VAULT_ROLE={role}"),
        format!("CRYPTADM_VAULT_JWT_FILE={}", jwt.display()),
    ]);
    let aws = crate::support_aws::moto();
    let _aws_serial = aws.lock();
    let instance = crate::aws::imds(&work, aws, "node", 3600);
    settings.extend([
        format!("AWS_EC2_METADATA_SERVICE_ENDPOINT={}", instance.endpoint()),
        format!("AWS_ENDPOINT_URL={}", aws.endpoint),
    ]);
    let args: Vec<String> = settings.into_iter().flat_map(|s| ["--processor-env".to_owned(), s]).collect();
    let node = Node::start_with(&args);

    let allowed: &[(&str, &str)] = &[("etc/transit/allowed", "unwrapped through OpenBao Transit")];
    let layout = work.path("allowed");
    make_layout(&layout, &[("amd64", &[Layer { compression: "gzip", files: allowed }])]);
    with_token(server, &setup.encrypt_token)
        .args(["image", "encrypt", "--dest-tls-verify=false", "--recipient", KEY])
        .arg(oci(&layout))
        .arg(node.image("transit/allowed:v1"))
        .assert()
        .success();
    let pulled = node.pull("transit/allowed:v1");
    assert!(pulled.is_ok(), "{pulled:?}\n{}", node.log());
    node.assert_unpacked("allowed", allowed);

    // AWS KMS with the instance profile; the image encrypted by a user that may only Encrypt.
    let by_kms: &[(&str, &str)] = &[("etc/kms/allowed", "unwrapped through AWS KMS with the instance profile")];
    let layout = work.path("kms");
    make_layout(&layout, &[("amd64", &[Layer { compression: "gzip", files: by_kms }])]);
    let mut encrypt = crate::support::cryptadm();
    aws.env_with(&mut encrypt, &aws.sealer);
    encrypt
        .args(["image", "encrypt", "--dest-tls-verify=false", "--recipient", &format!("aws-kms://{}", aws.key)])
        .arg(oci(&layout))
        .arg(node.image("kms/allowed:v1"))
        .assert()
        .success();
    let pulled = node.pull("kms/allowed:v1");
    assert!(pulled.is_ok(), "{pulled:?}\n{}", node.log());
    node.assert_unpacked("kms", by_kms);
    let log = std::fs::read_to_string(&instance.log).unwrap();
    assert!(log.contains("GET /latest/meta-data/iam/security-credentials/cryptadm-node token-ok"), "{log}");
    assert!(!log.contains("no-token"), "{log}");

    // The node's role may no longer decrypt.
    jwt_role(server, role, "default");
    let refused: &[(&str, &str)] = &[("etc/transit/refused", "never unpacked")];
    let layout = work.path("refused");
    make_layout(&layout, &[("amd64", &[Layer { compression: "gzip", files: refused }])]);
    with_token(server, &setup.encrypt_token)
        .args(["image", "encrypt", "--dest-tls-verify=false", "--recipient", KEY])
        .arg(oci(&layout))
        .arg(node.image("transit/refused:v1"))
        .assert()
        .success();
    let mut details = node.pull("transit/refused:v1").expect_err("the pull must fail");
    for _ in 0..2 {
        if !details.contains("wrong diff id calculated") {
            break;
        }
        // containerd 1.6 sometimes reports the layer's digest mismatch instead of the stream processor's exit
        // status (it read the processor's closed output before reaping it: seen once in a loaded suite run). The
        // pull failed and unpacked nothing either way; pull again for the processor's own message.
        details = node.pull("transit/refused:v1").expect_err("the pull must fail");
    }
    assert!(
        details.contains("cryptadm stream-decrypt") && details.contains("permission denied"),
        "{details}\n{}",
        node.log()
    );
    node.assert_not_unpacked("refused", refused);
}

/// The provider's gRPC form: `image keyprovider --listen unix:///PATH`, named in the configuration as
/// `{"grpc": "unix:///PATH"}`, wraps and unwraps for cryptadm's gRPC key-provider client (which dials as
/// ocicrypt's grpc-go does); SIGTERM stops it and removes the socket.
#[test]
fn key_provider_serves_ocicrypts_grpc_form() {
    struct Server(std::process::Child);
    impl Drop for Server {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let setup = setup();
    let server = bao::dev();
    let work = Scratch::new();
    jwt_role(server, "image-grpc", "image-encrypt,image-decrypt");
    let jwt = server.jwt_file(&work, "image-grpc");
    let socket = work.path("kp.sock");
    let mut provider = Server(
        std::process::Command::new(assert_cmd::cargo::cargo_bin("cryptadm"))
            .args(["image", "keyprovider", "--listen", &format!("unix://{}", socket.display())])
            .env_remove("VAULT_TOKEN")
            .env_remove("BAO_TOKEN")
            .envs(server.env())
            .env("CRYPTADM_VAULT_AUTH", "jwt")
            .env("CRYPTADM_VAULT_ROLE", "image-grpc")
            .env("CRYPTADM_VAULT_JWT_FILE", &jwt)
            .stderr(std::fs::File::create(work.path("provider.log")).unwrap())
            .spawn()
            .unwrap(),
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !socket.exists() {
        assert!(std::time::Instant::now() < deadline, "the gRPC key provider did not start");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let config = work.write(
        "grpc.conf",
        serde_json::to_vec(
            &serde_json::json!({"key-providers": {"cryptadm": {"grpc": format!("unix://{}", socket.display())}}}),
        )
        .unwrap(),
    );
    let (src, enc, dec) = (work.path("src"), work.path("enc"), work.path("dec"));
    fixture(&src, TWO_LAYERS);
    cryptadm()
        .env_remove("VAULT_ADDR")
        .env("OCICRYPT_KEYPROVIDER_CONFIG", &config)
        .args(["image", "encrypt", "--recipient", &format!("provider:cryptadm:{KEY}")])
        .arg(oci(&src))
        .arg(oci(&enc))
        .assert()
        .success();
    assert_eq!(blob(&enc)["recipients"][0]["key"], KEY);
    cryptadm()
        .env_remove("VAULT_ADDR")
        .env("OCICRYPT_KEYPROVIDER_CONFIG", &config)
        .args(["image", "decrypt", "--key", "provider:cryptadm"])
        .arg(oci(&enc))
        .arg(oci(&dec))
        .assert()
        .success();
    assert_eq!(layer_digests(&dec), layer_digests(&src));
    // The same annotation opens natively.
    with_token(server, &setup.decrypt_token)
        .args(["image", "authorize", "--key", KEY])
        .arg(oci(&enc))
        .assert()
        .success();
    // A refusal travels as PERMISSION_DENIED with OpenBao's words: the role may not use `transit/capi`.
    cryptadm()
        .env_remove("VAULT_ADDR")
        .env("OCICRYPT_KEYPROVIDER_CONFIG", &config)
        .args(["image", "encrypt", "--recipient", "provider:cryptadm:vault-transit://transit/capi"])
        .arg(oci(&src))
        .arg(oci(&work.path("refused")))
        .assert()
        .failure()
        .stderr(predicate::str::contains("PermissionDenied").and(predicate::str::contains("permission denied")));
    let pid = provider.0.id().to_string();
    assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let status = provider.0.wait().unwrap();
    assert!(status.success(), "{status:?}: {}", std::fs::read_to_string(work.path("provider.log")).unwrap());
    assert!(!socket.exists(), "the socket is removed on SIGTERM");
}

/// Refusals that need no server: each with its exit status and message, the secret never echoed.
#[test]
fn transit_settings_refused_before_anything_runs() {
    // A token in a runtime's configuration (readable on the node) is refused; its value is not repeated.
    cryptadm()
        .args(["image", "node-config", "--runtime", "containerd", "--binary", "/usr/local/bin/cryptadm"])
        .args(["--processor-env", "VAULT_TOKEN=s.do-not-print-me"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("`VAULT_TOKEN` holds a secret"))
        .stderr(predicate::str::contains("do-not-print-me").not());
    cryptadm()
        .args(["image", "node-config", "--runtime", "crio", "--processor-env", "VAULT_ADDR=https://vault:8200"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("containerd only"));
    let printed = cryptadm()
        .args(["image", "node-config", "--runtime", "containerd", "--binary", "/usr/local/bin/cryptadm"])
        .args(["--processor-env", "VAULT_ADDR=https://vault:8200"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let printed = String::from_utf8(printed).unwrap();
    assert_eq!(printed.matches(r#""VAULT_ADDR=https://vault:8200"]"#).count(), 2, "{printed}");
    // The gRPC form listens on a unix socket only.
    cryptadm()
        .env_remove("VAULT_ADDR")
        .args(["image", "keyprovider", "--listen", "localhost:50051"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unix:///absolute/path"));
    // A Transit recipient with no server configured: exit 2 before the image is read.
    cryptadm()
        .env_remove("VAULT_ADDR")
        .env_remove("BAO_ADDR")
        .args(["image", "encrypt", "--recipient", KEY, "oci:/nonexistent:v1", "oci:/nonexistent-out:v1"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("needs an OpenBao/Vault server"));
    // A malformed Transit recipient.
    cryptadm()
        .args(["image", "encrypt", "--recipient", "vault-transit://transit", "oci:/x:v1", "oci:/y:v1"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("vault-transit://MOUNT/KEY"));
}
