//! `cryptadm image encrypt | decrypt | authorize` against a real registry (Debian's `docker-registry`, started
//! here on a free loopback port), with skopeo on the other side: plain HTTP, and TLS (a CA made here) with
//! htpasswd basic auth; credentials from flags, docker's config.json and podman's auth.json; a registry killed
//! mid-push; the registry's access log proves that `authorize` reads no layer blob.

#[cfg(feature = "pgp")]
use crate::image::GnupgHome;
use crate::image::{Keys, TWO_LAYERS, TWO_PLATFORMS, fixture, layer_digests, layers, run};
use crate::support::{Scratch, cryptadm, require_tool};
use predicates::prelude::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const REGISTRY: &str = "/usr/bin/docker-registry";

/// A running registry; killed on drop (and, through its wrapper, when the test process ends: the shared
/// registry lives in a static, whose drop never runs).
struct Registry {
    child: Option<Child>,
    host: String,
    dir: Scratch,
}

/// TLS and basic auth settings of a registry.
struct Secured {
    cert: PathBuf,
    key: PathBuf,
    htpasswd: PathBuf,
}

impl Registry {
    fn start(secured: Option<&Secured>) -> Self {
        require_tool("docker-registry", "apt-get install -y docker-registry");
        require_tool("skopeo", "apt-get install -y skopeo");
        let dir = Scratch::new();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut config = format!(
            "version: 0.1\nlog:\n  level: warn\n  accesslog:\n    disabled: false\nstorage:\n  filesystem:\n    \
             rootdirectory: {}\nhttp:\n  addr: 127.0.0.1:{port}\n",
            dir.path("storage").display()
        );
        if let Some(s) = secured {
            config.push_str(&format!(
                "  tls:\n    certificate: {}\n    key: {}\nauth:\n  htpasswd:\n    realm: test\n    path: {}\n",
                s.cert.display(),
                s.key.display(),
                s.htpasswd.display()
            ));
        }
        let config = dir.write("config.yml", config);
        let mut registry = Self { child: None, host: format!("127.0.0.1:{port}"), dir };
        registry.spawn(&config);
        registry
    }

    /// Starts the registry (again) on its port and storage; returns when it accepts connections.
    fn spawn(&mut self, config: &Path) {
        let log = std::fs::OpenOptions::new().create(true).append(true).open(self.dir.path("access.log")).unwrap();
        // The wrapper kills the registry when the test process is gone, or when it is told to stop.
        let child = Command::new("sh")
            .arg("-c")
            .arg(
                r#""$0" serve "$1" & r=$!; trap 'kill -9 $r; exit 0' TERM; while kill -0 "$2" 2>/dev/null && kill -0 $r 2>/dev/null; do sleep 0.2; done; kill -9 $r"#,
            )
            .arg(REGISTRY)
            .arg(config)
            .arg(std::process::id().to_string())
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(&self.host).is_err() {
            assert!(Instant::now() < deadline, "the registry did not start: {}", self.access_log());
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = Command::new("kill").arg(child.id().to_string()).status();
            let _ = child.wait();
        }
        // Gone when its port refuses connections.
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(&self.host).is_ok() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn access_log(&self) -> String {
        std::fs::read_to_string(self.dir.path("access.log")).unwrap_or_default()
    }

    fn image(&self, repository: &str) -> String {
        format!("docker://{}/{repository}", self.host)
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The plain-HTTP registry shared by the tests that do not stop it.
fn shared() -> &'static Registry {
    static SHARED: OnceLock<Registry> = OnceLock::new();
    SHARED.get_or_init(|| Registry::start(None))
}

fn oci(dir: &Path) -> String {
    format!("oci:{}:v1", dir.display())
}

fn skopeo(args: &[&str]) -> Command {
    let mut command = Command::new("skopeo");
    command.args(["--insecure-policy", "copy", "-q", "--all"]).args(args);
    command
}

/// Pushes a fixture layout to the registry with skopeo.
fn push_fixture(registry: &Registry, spec: &str, repository: &str, work: &Scratch) -> PathBuf {
    let src = work.path(&format!("src-{}", repository.replace(['/', ':'], "-")));
    fixture(&src, spec);
    run(&mut skopeo(&["--dest-tls-verify=false", &oci(&src), &registry.image(repository)]));
    src
}

/// Every layer of every manifest of a layout is encrypted.
fn all_encrypted(dir: &Path) -> bool {
    layers(dir).iter().all(|m| {
        m["layers"].as_array().unwrap().iter().all(|l| l["mediaType"].as_str().unwrap().ends_with("+encrypted"))
    })
}

#[test]
fn jwe_through_a_registry_both_ways_multi_layer_and_multi_platform() {
    let registry = shared();
    let keys = Keys::new();
    let (private, public) = keys.rsa("rsa", 2048);
    let work = Scratch::new();
    for (name, spec) in [("layers", TWO_LAYERS), ("platforms", TWO_PLATFORMS)] {
        let src = push_fixture(registry, spec, &format!("jwe/{name}:v1"), &work);
        let encrypted = registry.image(&format!("jwe/{name}-enc:v1"));
        // cryptadm encrypts registry → registry; the config blob is mounted, not uploaded again.
        cryptadm()
            .args(["image", "encrypt", "--recipient", &format!("jwe:{public}")])
            .args(["--src-tls-verify=false", "--dest-tls-verify=false"])
            .arg(registry.image(&format!("jwe/{name}:v1")))
            .arg(&encrypted)
            .assert()
            .success()
            .stderr(predicate::str::contains("mounted from the source repository"))
            .stderr(predicate::str::contains("tagged"));
        // skopeo sees an encrypted image and decrypts it.
        let copied = work.path(&format!("copied-{name}"));
        run(&mut skopeo(&["--src-tls-verify=false", &encrypted, &oci(&copied)]));
        assert!(all_encrypted(&copied), "{name}");
        let decrypted = work.path(&format!("skopeo-dec-{name}"));
        run(&mut skopeo(&["--src-tls-verify=false", "--decryption-key", &private, &encrypted, &oci(&decrypted)]));
        assert_eq!(layer_digests(&decrypted), layer_digests(&src), "{name}");

        // The reverse: skopeo encrypts into the registry, cryptadm decrypts registry → registry.
        let skopeo_encrypted = registry.image(&format!("jwe/{name}-skopeo-enc:v1"));
        run(skopeo(&["--dest-tls-verify=false", "--encryption-key", &format!("jwe:{public}"), &oci(&src)])
            .arg(&skopeo_encrypted));
        let plain = registry.image(&format!("jwe/{name}-dec:v1"));
        for run_number in 0..2 {
            let assert = cryptadm()
                .args(["image", "decrypt", "--key", &private, "--src-tls-verify=false", "--dest-tls-verify=false"])
                .arg(&skopeo_encrypted)
                .arg(&plain)
                .assert()
                .success();
            if run_number == 1 {
                // Blobs the destination has already are not uploaded again.
                assert.stderr(predicate::str::contains("is already at the destination"));
            }
        }
        let pulled = work.path(&format!("pulled-{name}"));
        run(&mut skopeo(&["--src-tls-verify=false", &plain, &oci(&pulled)]));
        assert_eq!(layer_digests(&pulled), layer_digests(&src), "{name}");
    }
}

#[cfg(feature = "pgp")]
#[test]
fn openpgp_through_a_registry_both_ways_and_mixed_with_layouts() {
    let registry = shared();
    let home = GnupgHome::new();
    let secret = home.secret_key_file();
    let work = Scratch::new();
    let src = work.path("src");
    fixture(&src, TWO_PLATFORMS);

    // cryptadm: layout → registry; skopeo: registry → layout, decrypting.
    let encrypted = registry.image("pgp/app-enc:v1");
    cryptadm()
        .args(["image", "encrypt", "--recipient", "pgp:alice@example.com", "--gpg-homedir"])
        .arg(home.path())
        .arg("--dest-tls-verify=false")
        .arg(oci(&src))
        .arg(&encrypted)
        .assert()
        .success();
    let decrypted = work.path("skopeo-dec");
    run(&mut skopeo(&["--src-tls-verify=false", "--decryption-key", &secret, &encrypted, &oci(&decrypted)]));
    assert_eq!(layer_digests(&decrypted), layer_digests(&src));

    // skopeo: layout → registry, encrypting; cryptadm: registry → layout.
    let skopeo_encrypted = registry.image("pgp/app-skopeo-enc:v1");
    run(skopeo(&["--dest-tls-verify=false", "--encryption-key", "pgp:alice@example.com", &oci(&src)])
        .env("GNUPGHOME", home.path())
        .arg(&skopeo_encrypted));
    let plain = work.path("cryptadm-dec");
    cryptadm()
        .args(["image", "decrypt", "--key", &secret, "--src-tls-verify=false"])
        .arg(&skopeo_encrypted)
        .arg(oci(&plain))
        .assert()
        .success();
    assert_eq!(layer_digests(&plain), layer_digests(&src));
}

#[test]
fn authorize_fetches_manifests_and_never_a_layer_blob() {
    let registry = shared();
    let keys = Keys::new();
    let (private, public) = keys.rsa("rsa", 2048);
    let (other_private, _) = keys.rsa("other", 2048);
    let work = Scratch::new();
    let src = work.path("src");
    fixture(&src, TWO_PLATFORMS);
    let encrypted = registry.image("authz/app:v1");
    run(skopeo(&["--dest-tls-verify=false", "--encryption-key", &format!("jwe:{public}"), &oci(&src)]).arg(&encrypted));
    let copied = work.path("copied");
    run(&mut skopeo(&["--src-tls-verify=false", &encrypted, &oci(&copied)]));
    let layer_digests = layer_digests(&copied);
    assert_eq!(layer_digests.len(), 3);

    let before = registry.access_log().len();
    cryptadm()
        .args(["image", "authorize", "--tls-verify=false", "--key", &private])
        .arg(&encrypted)
        .assert()
        .success()
        .stdout(predicate::str::contains("authorized").count(3));
    cryptadm()
        .args(["image", "authorize", "--tls-verify=false", "--key", &other_private])
        .arg(&encrypted)
        .assert()
        .code(16);
    let log = registry.access_log()[before..].to_owned();
    assert!(log.contains("/v2/authz/app/manifests/v1"), "{log}");
    assert!(log.contains("/v2/authz/app/manifests/sha256:"), "the platform manifests are read: {log}");
    for digest in &layer_digests {
        assert!(!log.contains(digest.as_str()), "authorize read layer {digest}: {log}");
    }
}

#[test]
fn registry_errors_have_their_exit_codes() {
    let registry = shared();
    let keys = Keys::new();
    let (private, _) = keys.rsa("rsa", 2048);
    // Unknown repository, unknown tag, unknown digest: 5.
    let digest = format!("sha256:{}", "0".repeat(64));
    for missing in ["errors/none:v1".to_owned(), format!("errors/none@{digest}")] {
        cryptadm()
            .args(["image", "authorize", "--tls-verify=false", "--key", &private])
            .arg(registry.image(&missing))
            .assert()
            .code(5)
            .stderr(predicate::str::contains("manifest"));
    }
    // Nothing listens: 1, saying so.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    cryptadm()
        .args(["image", "authorize", "--tls-verify=false", "--key", &private])
        .arg(format!("docker://127.0.0.1:{port}/app:v1"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("unreachable"));
    // A password on the command line is refused.
    cryptadm()
        .args(["image", "authorize", "--tls-verify=false", "--key", &private, "--creds", "alice:secret"])
        .arg(registry.image("errors/none:v1"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("user name only"));
}

/// A CA, a server certificate for 127.0.0.1 signed by it, and an htpasswd file for alice.
fn secured(work: &Scratch) -> (Secured, PathBuf) {
    require_tool("openssl", "apt-get install -y openssl");
    require_tool("htpasswd", "apt-get install -y apache2-utils");
    let ca_dir = work.path("certs");
    std::fs::create_dir(&ca_dir).unwrap();
    let (ca_key, ca_cert) = (work.path("ca.key"), ca_dir.join("ca.crt"));
    run(Command::new("openssl")
        .args(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=test CA", "-keyout"])
        .arg(&ca_key)
        .arg("-out")
        .arg(&ca_cert));
    let (key, csr, cert) = (work.path("server.key"), work.path("server.csr"), work.path("server.crt"));
    run(Command::new("openssl")
        .args(["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout"])
        .arg(&key)
        .arg("-out")
        .arg(&csr));
    let extensions = work.write("san.ext", "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n");
    run(Command::new("openssl")
        .args(["x509", "-req", "-days", "2", "-CAcreateserial", "-in"])
        .arg(&csr)
        .arg("-CA")
        .arg(&ca_cert)
        .arg("-CAkey")
        .arg(&ca_key)
        .arg("-extfile")
        .arg(&extensions)
        .arg("-out")
        .arg(&cert));
    let htpasswd = work.write("htpasswd", run(Command::new("htpasswd").args(["-Bbn", "alice", "s3cret"])));
    (Secured { cert, key, htpasswd }, ca_dir)
}

#[test]
fn tls_and_basic_auth_with_credentials_from_flags_docker_config_and_podman_auth() {
    let work = Scratch::new();
    let (secured, ca_dir) = secured(&work);
    let registry = Registry::start(Some(&secured));
    let keys = Keys::new();
    let (private, public) = keys.rsa("rsa", 2048);
    let src = work.path("src");
    fixture(&src, TWO_LAYERS);
    let cert_dir = ca_dir.display().to_string();
    let source = registry.image("secure/app:v1");
    run(&mut skopeo(&["--dest-cert-dir", &cert_dir, "--dest-creds", "alice:s3cret", &oci(&src), &source]));

    // docker's config.json and podman's auth.json share their format.
    let auth = format!(r#"{{"auths":{{"{}":{{"auth":"YWxpY2U6czNjcmV0"}}}}}}"#, registry.host);
    let docker_config = work.path("docker");
    std::fs::create_dir(&docker_config).unwrap();
    std::fs::write(docker_config.join("config.json"), &auth).unwrap();
    let podman_auth = work.write("auth.json", &auth);
    let home = work.path("home"); // no credentials there
    std::fs::create_dir(&home).unwrap();
    let password = work.write("password", "s3cret\n");

    // --src-creds with a password file; --dest-authfile; the CA through --cert-dir.
    let encrypted = registry.image("secure/app-enc:v1");
    cryptadm()
        .args(["image", "encrypt", "--recipient", &format!("jwe:{public}"), "--cert-dir", &cert_dir])
        .args(["--src-creds", "alice", "--src-password-file"])
        .arg(&password)
        .arg("--dest-authfile")
        .arg(&podman_auth)
        .env("HOME", &home)
        .arg(&source)
        .arg(&encrypted)
        .assert()
        .success();
    // skopeo decrypts it over TLS with the same auth file.
    let decrypted = work.path("skopeo-dec");
    run(skopeo(&["--src-cert-dir", &cert_dir, "--authfile"]).arg(&podman_auth).args([
        "--decryption-key",
        &private,
        &encrypted,
        &oci(&decrypted),
    ]));
    assert_eq!(layer_digests(&decrypted), layer_digests(&src));

    // DOCKER_CONFIG for authorize; REGISTRY_AUTH_FILE for decrypt (both sides).
    cryptadm()
        .args(["-v", "image", "authorize", "--cert-dir", &cert_dir, "--key", &private])
        .env("HOME", &home)
        .env("DOCKER_CONFIG", &docker_config)
        .env_remove("REGISTRY_AUTH_FILE")
        .arg(&encrypted)
        .assert()
        .success();
    // Credential helpers, as docker runs them: `credHelpers` for this registry, and a `credsStore` that knows no
    // other registry ("credentials not found in native keychain"), which must mean anonymous access there.
    let helpers = work.path("helpers");
    std::fs::create_dir(&helpers).unwrap();
    let helper = format!(
        "#!/bin/sh\n[ \"$1\" = get ] || exit 1\nread -r server\ncase \"$server\" in\n  *{host}*) printf \
         '{{\"ServerURL\":\"%s\",\"Username\":\"alice\",\"Secret\":\"s3cret\"}}' \"$server\" ;;\n  *) echo \
         'credentials not found in native keychain'; exit 1 ;;\nesac\n",
        host = registry.host
    );
    std::fs::write(helpers.join("docker-credential-fake"), helper).unwrap();
    std::fs::set_permissions(
        helpers.join("docker-credential-fake"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let helper_config = work.path("docker-helpers");
    std::fs::create_dir(&helper_config).unwrap();
    std::fs::write(
        helper_config.join("config.json"),
        format!(r#"{{"credsStore":"fake","credHelpers":{{"{}":"fake"}}}}"#, registry.host),
    )
    .unwrap();
    let path = format!("{}:{}", helpers.display(), std::env::var("PATH").unwrap_or_default());
    cryptadm()
        .args(["image", "authorize", "--cert-dir", &cert_dir, "--key", &private])
        .env("HOME", &home)
        .env("PATH", &path)
        .env("DOCKER_CONFIG", &helper_config)
        .env_remove("REGISTRY_AUTH_FILE")
        .arg(&encrypted)
        .assert()
        .success();
    let anonymous = shared();
    let anonymous_src = work.path("anonymous-src");
    fixture(&anonymous_src, TWO_LAYERS);
    cryptadm()
        .args(["image", "encrypt", "--recipient", &format!("jwe:{public}"), "--dest-tls-verify=false"])
        .env("HOME", &home)
        .env("PATH", &path)
        .env("DOCKER_CONFIG", &helper_config)
        .env_remove("REGISTRY_AUTH_FILE")
        .arg(oci(&anonymous_src))
        .arg(anonymous.image("helpers/anonymous:v1"))
        .assert()
        .success();
    let plain = registry.image("secure/app-dec:v1");
    cryptadm()
        .args(["image", "decrypt", "--cert-dir", &cert_dir, "--key", &private])
        .env("HOME", &home)
        .env("REGISTRY_AUTH_FILE", &podman_auth)
        .env_remove("DOCKER_CONFIG")
        .arg(&encrypted)
        .arg(&plain)
        .assert()
        .success();

    // Wrong password, and no credentials at all: 16 with a hint about credentials.
    cryptadm()
        .args(["image", "authorize", "--cert-dir", &cert_dir, "--key", &private, "--creds", "alice"])
        .env("CRYPTADM_REGISTRY_PASSWORD", "wrong")
        .env("HOME", &home)
        .arg(&encrypted)
        .assert()
        .code(16)
        .stderr(predicate::str::contains("hint:").and(predicate::str::contains("credentials")));
    cryptadm()
        .args(["image", "encrypt", "--recipient", &format!("jwe:{public}"), "--cert-dir", &cert_dir])
        .args(["--src-authfile"])
        .arg(&podman_auth)
        .env("HOME", &home)
        .env_remove("DOCKER_CONFIG")
        .env_remove("REGISTRY_AUTH_FILE")
        .arg(&source)
        .arg(registry.image("secure/denied:v1"))
        .assert()
        .code(16);

    // TLS is verified: without the CA the connection fails; --tls-verify=false accepts the certificate.
    cryptadm()
        .args(["image", "authorize", "--key", &private, "--authfile"])
        .arg(&podman_auth)
        .arg(&encrypted)
        .assert()
        .failure()
        .stderr(predicate::str::contains("certificate").or(predicate::str::contains("Certificate")));
    cryptadm()
        .args(["image", "authorize", "--tls-verify=false", "--key", &private, "--authfile"])
        .arg(&podman_auth)
        .arg(&encrypted)
        .assert()
        .success();
}

#[test]
fn registry_stopped_mid_push_leaves_the_old_image_under_the_tag() {
    let work = Scratch::new();
    let mut registry = Registry::start(None);
    let keys = Keys::new();
    let (_, public) = keys.rsa("rsa", 2048);
    let destination = registry.image("killed/app:v1");
    // The old image under the tag.
    let small = work.path("small");
    fixture(&small, TWO_LAYERS);
    cryptadm()
        .args(["image", "encrypt", "--recipient", &format!("jwe:{public}"), "--dest-tls-verify=false"])
        .arg(oci(&small))
        .arg(&destination)
        .assert()
        .success();
    let old = run(Command::new("skopeo").args(["inspect", "--raw", "--tls-verify=false", &destination]));

    // A new image with a 12 MiB layer: three upload chunks; the registry is killed after the first.
    let large = work.path("large");
    run(Command::new("python3")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/bench/make_oci_image.py"))
        .arg(&large)
        .arg("v1")
        .arg((12 << 20).to_string()));
    let before = registry.access_log().len();
    let mut push = Command::new(assert_cmd::cargo::cargo_bin("cryptadm"))
        .args(["image", "encrypt", "--recipient", &format!("jwe:{public}"), "--dest-tls-verify=false"])
        .arg(oci(&large))
        .arg(&destination)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !registry.access_log()[before..].contains("\"PATCH /v2/killed/app/blobs/uploads/") {
        assert!(Instant::now() < deadline, "no upload started");
        assert!(push.try_wait().unwrap().is_none(), "the push ended before the registry was stopped");
        std::thread::sleep(Duration::from_millis(20));
    }
    registry.stop();
    let output = push.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(stderr.contains("blob sha256:"), "the error names the blob: {stderr}");

    let config = registry.dir.path("config.yml");
    registry.spawn(&config);
    let now = run(Command::new("skopeo").args(["inspect", "--raw", "--tls-verify=false", &destination]));
    assert_eq!(now, old, "the tag still names the old image");
}

#[test]
fn a_download_cut_mid_blob_resumes_where_it_stopped() {
    let registry = shared();
    let work = Scratch::new();
    let src = work.path("src");
    run(Command::new("python3")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/bench/make_oci_image.py"))
        .arg(&src)
        .arg("v1")
        .arg((6 << 20).to_string()));
    run(&mut skopeo(&["--dest-tls-verify=false", &oci(&src), &registry.image("resume/app:v1")]));

    // Every connection goes through a proxy that breaks the first response passing 2 MiB: the layer's.
    let port = registry.host.rsplit(':').next().unwrap();
    let mut proxy = Command::new("python3")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cli/flaky_proxy.py"))
        .args([port, &(2 << 20).to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(proxy.stdout.take().unwrap()));
    let proxy_port = lines.next().unwrap().unwrap();
    let copied = work.path("copied");
    let outcome = cryptadm()
        .args(["image", "decrypt", "--allow-plaintext", "--src-tls-verify=false"])
        .arg(format!("docker://127.0.0.1:{proxy_port}/resume/app:v1"))
        .arg(oci(&copied))
        .output()
        .unwrap();
    let _ = proxy.kill();
    let cut = lines.next().map(|l| l.unwrap());
    let _ = proxy.wait();
    assert!(outcome.status.success(), "{}", String::from_utf8_lossy(&outcome.stderr));
    assert_eq!(cut.as_deref(), Some("cut"), "the proxy broke a download");
    // The reader verified the layer's digest; the copy is the source, byte for byte.
    assert_eq!(layer_digests(&copied), layer_digests(&src));
    let digest = layer_digests(&src)[0].clone();
    let blob = |dir: &Path| std::fs::read(dir.join("blobs/sha256").join(&digest[7..])).unwrap();
    assert!(blob(&copied) == blob(&src));
}
