//! `cryptadm image encrypt` against a registry that takes bearer tokens from a token service, as Docker Hub, GHCR,
//! Quay and Harbor do: Debian's `docker-registry` with `auth: token:`, and `token_server.py` issuing the RS256 JWTs
//! it verifies (certificate chain in the header, issuer, audience, expiry, per-repository actions). The registry
//! answers /v2/ with a `Bearer realm=...,service=...` challenge; cryptadm's uploads must carry the token cryptadm
//! gets from the realm with alice's basic credentials, and get a new one when it expires mid-push.

use crate::image::{Keys, TWO_LAYERS, fixture, layer_digests, run};
use crate::registry::{FaultProxy, Registry, large_image, oci, skopeo};
use crate::support::{Scratch, cryptadm, require_tool};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::Receiver;

const SERVICE: &str = "cryptadm-test-registry";
const ISSUER: &str = "cryptadm-test-token-service";
const PASSWORD: &str = "s3cret";

/// `token_server.py`, and the lines it printed so far (one per token request).
struct TokenServer {
    child: Child,
    /// The script exits when this pipe closes: with the test process at the latest.
    _stdin: ChildStdin,
    port: String,
    cert: PathBuf,
    lines: Receiver<String>,
    seen: std::cell::RefCell<Vec<String>>,
}

impl TokenServer {
    /// `push_ttl`: seconds the registry accepts a token that grants push (default 300).
    fn start(work: &Scratch, password: &Path, push_ttl: Option<u32>) -> Self {
        require_tool("python3", "apt-get install -y python3 python3-cryptography");
        let cert = work.path("token-signer.pem");
        let mut command = Command::new("python3");
        command
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cli/token_server.py"))
            .arg("--cert")
            .arg(&cert)
            .arg("--password-file")
            .arg(password)
            .args(["--service", SERVICE, "--issuer", ISSUER]);
        if let Some(ttl) = push_ttl {
            command.args(["--push-ttl", &ttl.to_string()]);
        }
        let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let mut output = std::io::BufRead::lines(std::io::BufReader::new(child.stdout.take().unwrap()));
        // The port comes once the certificate is written.
        let port = output.next().expect("the token server printed its port").unwrap();
        let (sender, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in output.map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        Self { child, _stdin: stdin, port, cert, lines, seen: Default::default() }
    }

    fn lines(&self) -> Vec<String> {
        self.seen.borrow_mut().extend(self.lines.try_iter());
        self.seen.borrow().clone()
    }

    /// How many tokens the service issued alice with pull and push on `repository`.
    fn push_tokens(&self, repository: &str) -> usize {
        let wanted = format!("-> repository:{repository}:pull,push");
        self.lines().iter().filter(|l| l.starts_with("token alice ") && l.ends_with(&wanted)).count()
    }

    /// A registry that trusts this service's tokens.
    fn registry(&self) -> Registry {
        Registry::start_with(&format!(
            "auth:\n  token:\n    realm: http://127.0.0.1:{}/token\n    service: {SERVICE}\n    issuer: {ISSUER}\n    \
             rootcertbundle: {}\n",
            self.port,
            self.cert.display()
        ))
    }
}

impl Drop for TokenServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A token service for alice, and a registry behind it.
fn setup(work: &Scratch, push_ttl: Option<u32>) -> (TokenServer, Registry, PathBuf) {
    let password = work.write("password", format!("{PASSWORD}\n"));
    let tokens = TokenServer::start(work, &password, push_ttl);
    let registry = tokens.registry();
    (tokens, registry, password)
}

fn creds() -> String {
    format!("alice:{PASSWORD}")
}

/// The media types of the layers of the image under `image` (a single-platform manifest).
fn layer_media_types(image: &str) -> Vec<String> {
    let raw = run(Command::new("skopeo").args(["inspect", "--raw", "--tls-verify=false", "--creds", &creds(), image]));
    let manifest: serde_json::Value = serde_json::from_str(&raw).unwrap();
    manifest["layers"].as_array().unwrap().iter().map(|l| l["mediaType"].as_str().unwrap().to_owned()).collect()
}

/// Pulls `image` with alice's token and the private key into a layout, and returns its layer digests.
fn pull_decrypted(image: &str, private: &str, work: &Scratch, name: &str) -> Vec<String> {
    let back = work.path(name);
    run(&mut skopeo(&[
        "--src-tls-verify=false",
        "--src-creds",
        &creds(),
        "--decryption-key",
        private,
        image,
        &oci(&back),
    ]));
    layer_digests(&back)
}

/// Whether `image` can be read (a tag that names nothing cannot).
fn exists(image: &str) -> bool {
    Command::new("skopeo")
        .args(["inspect", "--raw", "--tls-verify=false", "--creds", &creds(), image])
        .output()
        .unwrap()
        .status
        .success()
}

/// How many `method` requests to a path containing `path_part` the registry answered with `status` (access log).
fn requests(registry: &Registry, method: &str, path_part: &str, status: u16) -> usize {
    registry
        .access_log()
        .lines()
        .filter(|l| l.contains(&format!("\"{method} ")) && l.contains(path_part))
        .filter(|l| l.split('"').nth(2).is_some_and(|after| after.trim_start().starts_with(&status.to_string())))
        .count()
}

#[test]
fn bearer_tokens_from_a_token_service_carry_a_streamed_layer_registry_to_registry() {
    let work = Scratch::new();
    let (tokens, registry, password) = setup(&work, None);
    let keys = Keys::new();
    let (private, public) = keys.rsa("rsa", 2048);
    let src = work.path("src");
    large_image(&src, 4 << 20);
    let source = registry.image("token/src:v1");
    run(&mut skopeo(&["--dest-tls-verify=false", "--dest-creds", &creds(), &oci(&src), &source]));

    // Through a proxy that only watches, to see the layer go up in one streaming PATCH.
    let mut proxy = FaultProxy::start(&registry, &["pass"]);
    let before = tokens.lines().len();
    let output = cryptadm()
        .args(["image", "encrypt", "--recipient", &format!("jwe:{public}")])
        .args(["--src-creds", "alice", "--src-password-file"])
        .arg(&password)
        .args(["--dest-creds", "alice", "--dest-password-file"])
        .arg(&password)
        .args(["--src-tls-verify=false", "--dest-tls-verify=false"])
        .arg(&source)
        .arg(proxy.image("token/enc:v1"))
        .output()
        .unwrap();
    proxy.stop();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}\ntokens: {:?}\n{}", tokens.lines(), registry.access_log());
    assert!(stderr.contains("tagged"), "{stderr}");
    assert_eq!(proxy.layer_patches(), ["-"], "{:?}", proxy.lines());

    // The token service issued alice tokens to read the source and to push the destination; the registry took
    // every upload request (it takes nothing but its service's tokens).
    let issued = tokens.lines()[before..].to_vec();
    assert!(
        issued.iter().any(|l| l.starts_with("token alice ") && l.contains("-> repository:token/src:pull")),
        "{issued:?}"
    );
    assert!(tokens.push_tokens("token/enc") >= 1, "{issued:?}");
    assert!(issued.iter().all(|l| !l.starts_with("refused")), "{issued:?}");
    assert!(requests(&registry, "PATCH", "/v2/token/enc/blobs/uploads/", 202) >= 1, "{}", registry.access_log());
    assert_eq!(requests(&registry, "PATCH", "/v2/token/enc/blobs/uploads/", 401), 0, "{}", registry.access_log());
    assert_eq!(requests(&registry, "PUT", "/v2/token/enc/blobs/uploads/", 401), 0, "{}", registry.access_log());

    // skopeo, with its own token, sees encrypted layers and decrypts them to the source's.
    let encrypted = registry.image("token/enc:v1");
    let media = layer_media_types(&encrypted);
    assert!(media.iter().all(|m| m.ends_with("+encrypted")), "{media:?}");
    assert_eq!(pull_decrypted(&encrypted, &private, &work, "back"), layer_digests(&src));
}

#[test]
fn a_wrong_password_for_the_token_service_exits_16_and_tags_nothing() {
    let work = Scratch::new();
    let (tokens, registry, password) = setup(&work, None);
    let keys = Keys::new();
    let (_, public) = keys.rsa("rsa", 2048);
    let src = work.path("src");
    fixture(&src, TWO_LAYERS);
    let source = registry.image("denied/src:v1");
    run(&mut skopeo(&["--dest-tls-verify=false", "--dest-creds", &creds(), &oci(&src), &source]));
    let wrong = work.write("wrong", "not-the-password\n");

    let encrypt = |src_password: Option<&Path>, dest_password: Option<&Path>, repository: &str| {
        let mut command = cryptadm();
        command.args(["image", "encrypt", "--recipient", &format!("jwe:{public}")]);
        if let Some(file) = src_password {
            command.args(["--src-creds", "alice", "--src-password-file"]).arg(file);
        }
        if let Some(file) = dest_password {
            command.args(["--dest-creds", "alice", "--dest-password-file"]).arg(file);
        }
        let destination = registry.image(&format!("{repository}:v1"));
        let output = command
            .args(["--src-tls-verify=false", "--dest-tls-verify=false"])
            .arg(&source)
            .arg(&destination)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert_eq!(output.status.code(), Some(16), "{repository}: {stderr}");
        let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error")).collect();
        assert_eq!(errors.len(), 1, "{repository}: {stderr}");
        assert!(stderr.contains("hint: check the registry credentials"), "{repository}: {stderr}");
        assert!(!stderr.contains(PASSWORD) && !stderr.contains("not-the-password"), "{stderr}");
        assert!(!exists(&destination), "{repository}: a tag was pushed");
        stderr
    };

    // The wrong password for the destination: the token service refuses it (401), cryptadm says so in one line
    // before it reads a layer, and no upload is opened. The refusal's body is not shown (a token service may
    // echo the credentials it was sent), as on pulls.
    let stderr = encrypt(Some(&password), Some(&wrong), "denied/dest");
    assert!(stderr.contains("the token service") && stderr.contains("refused the request: HTTP 401"), "{stderr}");
    assert!(!stderr.contains("incorrect username or password"), "{stderr}");
    assert!(tokens.lines().iter().any(|l| l == "refused alice"), "{:?}", tokens.lines());
    assert_eq!(tokens.push_tokens("denied/dest"), 0, "{:?}", tokens.lines());
    assert_eq!(requests(&registry, "POST", "/v2/denied/dest/blobs/uploads/", 202), 0, "{}", registry.access_log());
    // The wrong password for the source.
    encrypt(Some(&wrong), Some(&password), "denied/other");
    // No destination credentials: the token service grants an anonymous client pull only, and the registry
    // refuses its upload (insufficient scope).
    encrypt(Some(&password), None, "denied/anonymous");
    let anonymous = "token anonymous repository:denied/anonymous:pull,push -> repository:denied/anonymous:pull";
    assert!(tokens.lines().iter().any(|l| l == anonymous), "{:?}", tokens.lines());
}

/// Encrypts the layout `src` into `repository:v1` through `proxy` with alice's password; returns cryptadm's exit
/// code and stderr.
fn encrypt_through(
    proxy: &mut FaultProxy,
    src: &Path,
    repository: &str,
    public: &str,
    password: &Path,
) -> (Option<i32>, String) {
    let output = cryptadm()
        .args(["image", "encrypt", "--recipient", &format!("jwe:{public}")])
        .args(["--dest-creds", "alice", "--dest-password-file"])
        .arg(password)
        .arg("--dest-tls-verify=false")
        .arg(oci(src))
        .arg(proxy.image(&format!("{repository}:v1")))
        .output()
        .unwrap();
    proxy.stop();
    (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
}

/// Tokens that grant push live 2 to 3 s here; the proxy forwards the layer's streaming PATCH at 1 MiB/s, so its
/// 6 MiB take 6 s: the registry checked the token when the PATCH began, but it is dead by the closing PUT. A registry
/// answers that PUT 401, and cryptadm must get a new token and close the upload with it (Docker Hub's tokens live
/// 300 s: any layer that takes longer to upload meets this).
#[test]
fn a_token_that_expires_during_a_long_upload_is_renewed_for_the_closing_put() {
    let work = Scratch::new();
    let (tokens, registry, password) = setup(&work, Some(2));
    let keys = Keys::new();
    let (private, public) = keys.rsa("rsa", 2048);
    let src = work.path("src");
    large_image(&src, 6 << 20);
    let mut proxy = FaultProxy::start(&registry, &["slow", &(1 << 20).to_string()]);
    let (code, stderr) = encrypt_through(&mut proxy, &src, "ttl/long", &public, &password);
    let log = registry.access_log();
    assert!(proxy.lines().iter().any(|l| l == "slow"), "{:?}", proxy.lines());
    assert_eq!(code, Some(0), "{stderr}\ntokens: {:?}\nproxy: {:?}\n{log}", tokens.lines(), proxy.lines());
    // One streaming PATCH, which the registry took under the token it began with.
    assert_eq!(proxy.layer_patches(), ["-"], "{:?}", proxy.lines());
    assert_eq!(requests(&registry, "PATCH", "/v2/ttl/long/blobs/uploads/", 401), 0, "{log}");
    assert_eq!(pull_decrypted(&registry.image("ttl/long:v1"), &private, &work, "back"), layer_digests(&src));
}

/// Tokens that grant push live 2 to 3 s here; the proxy holds the layer's streaming PATCH 5 s before the registry
/// sees it, so the token cryptadm got for the upload (just before its POST) is dead by then: the registry answers the
/// PATCH 401. cryptadm must get a new token and send the layer (in chunks, from what the registry stored).
#[test]
fn a_token_that_expires_before_the_patch_is_renewed_and_the_upload_goes_on() {
    let work = Scratch::new();
    let (tokens, registry, password) = setup(&work, Some(2));
    let keys = Keys::new();
    let (private, public) = keys.rsa("rsa", 2048);
    let src = work.path("src");
    large_image(&src, 4 << 20);
    let mut proxy = FaultProxy::start(&registry, &["stall", "5"]);
    let (code, stderr) = encrypt_through(&mut proxy, &src, "ttl/stalled", &public, &password);
    let log = registry.access_log();
    assert!(proxy.lines().iter().any(|l| l == "stalled"), "{:?}", proxy.lines());
    assert_eq!(code, Some(0), "{stderr}\ntokens: {:?}\nproxy: {:?}\n{log}", tokens.lines(), proxy.lines());
    // The path under test ran: the registry refused the stalled PATCH's token.
    assert_eq!(requests(&registry, "PATCH", "/v2/ttl/stalled/blobs/uploads/", 401), 1, "{log}");
    assert!(stderr.contains("going on in 4 MiB chunks from byte 0"), "{stderr}");
    assert_eq!(pull_decrypted(&registry.image("ttl/stalled:v1"), &private, &work, "back"), layer_digests(&src));
}

/// Adding a recipient keeps every blob as it is, so on the same registry each is mounted from the source
/// repository rather than uploaded. Behind a token service that takes one token valid for both repositories:
/// `repository:DST:pull,push` together with `repository:SRC:pull`, as docker and containers/image ask (a token
/// for the destination alone gets "insufficient scope", and every layer was uploaded again).
#[test]
fn adding_a_recipient_mounts_every_blob_with_one_token_for_both_repositories() {
    let work = Scratch::new();
    let (tokens, registry, password) = setup(&work, None);
    let keys = Keys::new();
    let (alice_private, alice) = keys.rsa("alice", 2048);
    let (bob_private, bob) = keys.rsa("bob", 2048);
    let src = work.path("src");
    fixture(&src, TWO_LAYERS);
    let encrypted = registry.image("mount/enc:v1");
    let encrypt = |recipient: &str, key: Option<&str>, source: &str, destination: &str| {
        let mut command = cryptadm();
        command.args(["image", "encrypt", "--recipient", &format!("jwe:{recipient}")]);
        if let Some(key) = key {
            command.args(["--key", key]);
        }
        command
            .args(["--src-creds", "alice", "--src-password-file"])
            .arg(&password)
            .args(["--dest-creds", "alice", "--dest-password-file"])
            .arg(&password)
            .args(["--src-tls-verify=false", "--dest-tls-verify=false", source, destination])
            .output()
            .unwrap()
    };
    let output = encrypt(&alice, None, &oci(&src), &encrypted);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));

    let added = registry.image("mount/added:v1");
    let output = encrypt(&bob, Some(&alice_private), &encrypted, &added);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let log = registry.access_log();
    assert!(output.status.success(), "{stderr}\ntokens: {:?}\n{log}", tokens.lines());
    // The config and both layers: mounted (201), none uploaded.
    assert_eq!(stderr.matches("mounted from the source repository").count(), 3, "{stderr}");
    assert_eq!(requests(&registry, "POST", "/v2/mount/added/blobs/uploads/?mount=sha256", 201), 3, "{log}");
    assert_eq!(requests(&registry, "PATCH", "/v2/mount/added/blobs/uploads/", 202), 0, "{log}");
    let both = "token alice repository:mount/added:pull,push repository:mount/enc:pull -> \
                repository:mount/added:pull,push repository:mount/enc:pull";
    assert!(tokens.lines().iter().any(|l| l == both), "{:?}", tokens.lines());
    // Both recipients open the result.
    assert_eq!(pull_decrypted(&added, &bob_private, &work, "bob"), layer_digests(&src));
    assert_eq!(pull_decrypted(&added, &alice_private, &work, "alice"), layer_digests(&src));
}
