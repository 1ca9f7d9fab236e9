//! `cryptadm image encrypt | decrypt | authorize` against a real registry (Debian's `docker-registry`, started
//! here on a free loopback port), with skopeo on the other side: plain HTTP, and TLS (a CA made here) with
//! htpasswd basic auth; credentials from flags, docker's config.json and podman's auth.json; a registry killed
//! mid-push; the registry's access log proves that `authorize` reads no layer blob. Uploads go through
//! `registry_fault_proxy.py` where a test needs to see or break their requests: one streaming PATCH per blob, the
//! fallback to `Content-Range` chunks when a registry refuses it or the connection breaks.

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
pub(crate) struct Registry {
    child: Option<Child>,
    pub(crate) host: String,
    pub(crate) dir: Scratch,
}

/// TLS and basic auth settings of a registry.
struct Secured {
    cert: PathBuf,
    key: PathBuf,
    htpasswd: PathBuf,
}

impl Registry {
    fn start(secured: Option<&Secured>) -> Self {
        let extra = secured.map(|s| {
            format!(
                "  tls:\n    certificate: {}\n    key: {}\nauth:\n  htpasswd:\n    realm: test\n    path: {}\n",
                s.cert.display(),
                s.key.display(),
                s.htpasswd.display()
            )
        });
        Self::start_with(&extra.unwrap_or_default())
    }

    /// A registry whose config.yml ends with `extra` (lines indented by two spaces go under `http:`).
    pub(crate) fn start_with(extra: &str) -> Self {
        require_tool("docker-registry", "apt-get install -y docker-registry");
        require_tool("skopeo", "apt-get install -y skopeo");
        let dir = Scratch::new();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let config = format!(
            "version: 0.1\nlog:\n  level: warn\n  accesslog:\n    disabled: false\nstorage:\n  filesystem:\n    \
             rootdirectory: {}\nhttp:\n  addr: 127.0.0.1:{port}\n{extra}",
            dir.path("storage").display()
        );
        let config = dir.write("config.yml", config);
        let mut registry = Self { child: None, host: format!("127.0.0.1:{port}"), dir };
        registry.spawn(&config);
        registry
    }

    /// Starts the registry (again) on its port and storage; returns when it accepts connections.
    fn spawn(&mut self, config: &Path) {
        // The shared watchdog kills the registry when the test process is gone, or when it is told to stop.
        let config = config.display().to_string();
        let child =
            crate::support::spawn_watched(Path::new(REGISTRY), &["serve", &config], &self.dir.path("access.log"));
        self.child = Some(child);
        crate::support::wait_for_port(&self.host, Duration::from_secs(20), "the registry", || self.access_log());
    }

    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            crate::support::stop_watched(&mut child);
        }
        // Gone when its port refuses connections.
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(&self.host).is_ok() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub(crate) fn access_log(&self) -> String {
        std::fs::read_to_string(self.dir.path("access.log")).unwrap_or_default()
    }

    pub(crate) fn image(&self, repository: &str) -> String {
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

pub(crate) fn oci(dir: &Path) -> String {
    format!("oci:{}:v1", dir.display())
}

pub(crate) fn skopeo(args: &[&str]) -> Command {
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

/// A layout with one gzip layer of `bytes` random bytes (incompressible, so the blob is as large).
pub(crate) fn large_image(dir: &Path, bytes: usize) {
    run(Command::new("python3")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/bench/make_oci_image.py"))
        .arg(dir)
        .arg("v1")
        .arg(bytes.to_string()));
}

/// `registry_fault_proxy.py` in front of a registry, and the lines it printed so far.
pub(crate) struct FaultProxy {
    child: Child,
    port: String,
    lines: std::sync::mpsc::Receiver<String>,
    seen: std::cell::RefCell<Vec<String>>,
}

impl FaultProxy {
    /// `mode`: the proxy's MODE and BYTES arguments.
    pub(crate) fn start(registry: &Registry, mode: &[&str]) -> Self {
        let target = registry.host.rsplit(':').next().unwrap();
        let mut child = Command::new("python3")
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cli/registry_fault_proxy.py"))
            .arg(target)
            .args(mode)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut output = std::io::BufRead::lines(std::io::BufReader::new(child.stdout.take().unwrap()));
        let port = output.next().unwrap().unwrap();
        let (sender, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in output.map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        Self { child, port, lines, seen: Default::default() }
    }

    pub(crate) fn image(&self, repository: &str) -> String {
        format!("docker://127.0.0.1:{}/{repository}", self.port)
    }

    /// Every line printed so far (after the port).
    pub(crate) fn lines(&self) -> Vec<String> {
        self.seen.borrow_mut().extend(self.lines.try_iter());
        self.seen.borrow().clone()
    }

    /// Stops the proxy and takes every line it printed (call it once the run being watched has ended, so that
    /// no line is still on its way through the pipe).
    pub(crate) fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // The reader thread ends at the end of the pipe, and so does this.
        let rest: Vec<String> = self.lines.iter().collect();
        self.seen.borrow_mut().extend(rest);
    }

    /// Waits until the proxy prints `line`.
    fn wait_for(&self, line: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !self.lines().iter().any(|l| l == line) {
            assert!(Instant::now() < deadline, "the proxy never printed {line:?}: {:?}", self.lines());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The Content-Ranges ("-": none, a streaming PATCH) of the PATCH requests of the upload whose first PATCH
    /// streamed (the large layer's; small blobs go whole, in uploads of their own).
    pub(crate) fn layer_patches(&self) -> Vec<String> {
        let patches: Vec<(String, String)> = self
            .lines()
            .iter()
            .filter_map(|l| l.strip_prefix("request PATCH "))
            .map(|rest| {
                let (path, range) = rest.rsplit_once(' ').unwrap();
                (path.to_owned(), range.to_owned())
            })
            .collect();
        let Some((layer, _)) = patches.iter().find(|(_, range)| range == "-") else { return Vec::new() };
        patches.iter().filter(|(path, _)| path == layer).map(|(_, range)| range.clone()).collect()
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Upload sessions of `repository` whose bytes the registry still holds (a cancelled or finished upload loses
/// its `data`; docker's registry may leave an empty `hashstates` directory behind).
pub(crate) fn open_uploads(registry: &Registry, repository: &str) -> usize {
    let dir = registry.dir.path("storage/docker/registry/v2/repositories").join(repository).join("_uploads");
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries.filter_map(Result::ok).filter(|upload| upload.path().join("data").exists()).count()
}

/// Encrypts `src` through `proxy` into `repository:v1` with a JWE key, and checks with skopeo, straight from the
/// registry, that the pushed image decrypts to `src`'s layers. Returns cryptadm's stderr.
fn encrypt_through(
    proxy: &mut FaultProxy,
    registry: &Registry,
    src: &Path,
    repository: &str,
    work: &Scratch,
) -> String {
    let keys = Keys::new();
    let (private, public) = keys.rsa("rsa", 2048);
    let output = cryptadm()
        .args(["image", "encrypt", "--recipient", &format!("jwe:{public}"), "--dest-tls-verify=false"])
        .arg(oci(src))
        .arg(proxy.image(&format!("{repository}:v1")))
        .output()
        .unwrap();
    proxy.stop();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}\nproxy: {:?}", proxy.lines());
    let back = work.path(&format!("back-{}", repository.replace('/', "-")));
    run(&mut skopeo(&[
        "--src-tls-verify=false",
        "--decryption-key",
        &private,
        &registry.image(&format!("{repository}:v1")),
        &oci(&back),
    ]));
    assert_eq!(layer_digests(&back), layer_digests(src));
    stderr
}

#[test]
fn a_blob_goes_up_in_one_streaming_patch() {
    let registry = shared();
    let work = Scratch::new();
    let src = work.path("src");
    large_image(&src, 6 << 20);
    let mut proxy = FaultProxy::start(registry, &["pass"]);
    encrypt_through(&mut proxy, registry, &src, "stream/app", &work);
    // The layer in one PATCH without Content-Range, and not one streaming PATCH more (the config is sent whole).
    assert_eq!(proxy.layer_patches(), ["-"], "{:?}", proxy.lines());
    assert_eq!(proxy.lines().iter().filter(|l| l.starts_with("request PATCH ") && l.ends_with(" -")).count(), 1);
    assert_eq!(open_uploads(registry, "stream/app"), 0);
}

#[test]
fn a_registry_that_refuses_a_streamed_patch_gets_content_range_chunks() {
    let registry = shared();
    let work = Scratch::new();
    let src = work.path("src");
    large_image(&src, 9 << 20);
    let mut proxy = FaultProxy::start(registry, &["refuse-stream"]);
    let stderr = encrypt_through(&mut proxy, registry, &src, "refuse/app", &work);
    let patches = proxy.layer_patches();
    assert_eq!(patches[0], "-", "{patches:?}");
    // Then 4 MiB chunks from byte 0, in order, each acknowledged before the next.
    assert_eq!(patches[1..].first().map(String::as_str), Some("0-4194303"), "{patches:?}");
    assert!(patches[1..].iter().all(|p| p != "-") && patches.len() == 4, "{patches:?}");
    assert!(stderr.contains("going on in 4 MiB chunks from byte 0"), "{stderr}");
}

#[test]
fn an_upload_broken_mid_blob_goes_on_from_what_the_registry_stored() {
    let registry = shared();
    let work = Scratch::new();
    let src = work.path("src");
    large_image(&src, 6 << 20);
    let mut proxy = FaultProxy::start(registry, &["break", &(2 << 20).to_string()]);
    let stderr = encrypt_through(&mut proxy, registry, &src, "broken/app", &work);
    assert!(proxy.lines().contains(&"broke".to_owned()), "{:?}", proxy.lines());
    // The registry never saw the broken request: it stored nothing, and the blob went again from byte 0.
    assert!(stderr.contains("from byte 0"), "{stderr}");
    assert_eq!(open_uploads(registry, "broken/app"), 0);
}

#[test]
fn a_registry_that_can_resume_gets_the_rest_from_the_byte_it_stored() {
    let registry = shared();
    let work = Scratch::new();
    let src = work.path("src");
    large_image(&src, 6 << 20);
    // The registry stores the first 3 MiB + 12345 bytes of the streaming PATCH, then the connection breaks.
    let stored = (3 << 20) + 12345;
    let mut proxy = FaultProxy::start(registry, &["resume", &stored.to_string()]);
    let stderr = encrypt_through(&mut proxy, registry, &src, "resumed/app", &work);
    assert!(proxy.lines().contains(&"resumable-broke".to_owned()), "{:?}", proxy.lines());
    assert!(stderr.contains(&format!("from byte {stored}")), "{stderr}");
    // Then chunks from exactly there: docker's registry appends whatever comes, so a wrong offset would have
    // shown as a digest mismatch at the closing PUT, and skopeo's decryption (in encrypt_through) as a bad layer.
    let patches = proxy.layer_patches();
    assert!(patches.get(1).is_some_and(|range| range.starts_with(&format!("{stored}-"))), "{patches:?}");
    assert_eq!(open_uploads(registry, "resumed/app"), 0);
}

#[test]
fn an_upload_broken_past_what_can_be_sent_again_fails_and_tags_nothing() {
    let registry = shared();
    let work = Scratch::new();
    let src = work.path("src");
    // The last 16 MiB sent can be sent again; the connection breaks after 20 MiB, none of which the registry got.
    large_image(&src, 24 << 20);
    let mut proxy = FaultProxy::start(registry, &["break", &(20 << 20).to_string()]);
    let keys = Keys::new();
    let (_, public) = keys.rsa("rsa", 2048);
    let output = cryptadm()
        .args(["image", "encrypt", "--recipient", &format!("jwe:{public}"), "--dest-tls-verify=false"])
        .arg(oci(&src))
        .arg(proxy.image("unresumable/app:v1"))
        .output()
        .unwrap();
    proxy.stop();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("blob sha256:") && stderr.contains("run the command again"), "{stderr}");
    assert!(stderr.contains("the registry has none of them"), "{stderr}");
    assert_eq!(stderr.trim_end().lines().filter(|l| l.starts_with("error")).count(), 1, "{stderr}");
    // Nothing under the tag, and the upload was cancelled on the registry.
    let tag = Command::new("skopeo")
        .args(["inspect", "--raw", "--tls-verify=false", &registry.image("unresumable/app:v1")])
        .output()
        .unwrap();
    assert!(!tag.status.success());
    assert_eq!(open_uploads(registry, "unresumable/app"), 0);
}

#[test]
fn a_registry_image_as_its_own_destination_is_refused_and_left_alone() {
    let registry = shared();
    let work = Scratch::new();
    push_fixture(registry, TWO_LAYERS, "self/app:v1", &work);
    let image = registry.image("self/app:v1");
    let before = run(Command::new("skopeo").args(["inspect", "--raw", "--tls-verify=false", &image]));
    let keys = Keys::new();
    let (_, public) = keys.rsa("rsa", 2048);
    cryptadm()
        .args(["image", "encrypt", "--recipient", &format!("jwe:{public}")])
        .args(["--src-tls-verify=false", "--dest-tls-verify=false", &image, &image])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is the source image"));
    let after = run(Command::new("skopeo").args(["inspect", "--raw", "--tls-verify=false", &image]));
    assert_eq!(after, before, "the tag still names the plaintext image");
}

#[test]
fn an_encrypt_killed_mid_upload_leaves_the_tag_alone() {
    let registry = shared();
    let work = Scratch::new();
    let keys = Keys::new();
    let (_, public) = keys.rsa("rsa", 2048);
    let destination = registry.image("interrupted/app:v1");
    let small = work.path("small");
    fixture(&small, TWO_LAYERS);
    let encrypt = |src: &Path, to: &str| {
        let mut command = Command::new(assert_cmd::cargo::cargo_bin("cryptadm"));
        command
            .args(["image", "encrypt", "--recipient", &format!("jwe:{public}"), "--dest-tls-verify=false"])
            .arg(oci(src))
            .arg(to)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        command
    };
    assert!(encrypt(&small, &destination).status().unwrap().success());
    let old = run(Command::new("skopeo").args(["inspect", "--raw", "--tls-verify=false", &destination]));
    let large = work.path("large");
    large_image(&large, 6 << 20);
    for signal in [rustix::process::Signal::TERM, rustix::process::Signal::KILL] {
        let proxy = FaultProxy::start(registry, &["hold", &(2 << 20).to_string()]);
        let mut child = encrypt(&large, &proxy.image("interrupted/app:v1")).spawn().unwrap();
        proxy.wait_for("holding");
        rustix::process::kill_process(rustix::process::Pid::from_child(&child), signal).unwrap();
        let status = child.wait().unwrap();
        assert!(!status.success(), "{signal:?}: {status}");
        let now = run(Command::new("skopeo").args(["inspect", "--raw", "--tls-verify=false", &destination]));
        assert_eq!(now, old, "{signal:?}: the tag still names the old image");
    }
}

#[test]
fn a_flipped_byte_fails_decrypt_into_a_registry_and_stores_nothing() {
    let registry = shared();
    let work = Scratch::new();
    let keys = Keys::new();
    let (private, public) = keys.rsa("rsa", 2048);
    let src = work.path("src");
    large_image(&src, 6 << 20);
    let enc = work.path("enc");
    crate::image::encrypt_for(&public, &src, &enc);
    let size = std::fs::metadata(
        enc.join("blobs/sha256").join(&layers(&enc)[0]["layers"][0]["digest"].as_str().unwrap()[7..]),
    )
    .unwrap()
    .len() as usize;
    // The digests rewritten, so that only the HMAC can tell; the plaintext streams to the registry meanwhile.
    for (n, at) in [0, size / 2, size - 1].into_iter().enumerate() {
        let bad = work.path("bad");
        crate::layer_integrity::tampered(&enc, &bad, at, true);
        let repository = format!("tampered/app-{n}");
        cryptadm()
            .args(["image", "decrypt", "--key", &private, "--dest-tls-verify=false"])
            .arg(oci(&bad))
            .arg(registry.image(&format!("{repository}:v1")))
            .assert()
            .code(15)
            .stderr(predicate::str::contains("HMAC does not match"));
        let tag = Command::new("skopeo")
            .args(["inspect", "--raw", "--tls-verify=false", &registry.image(&format!("{repository}:v1"))])
            .output()
            .unwrap();
        assert!(!tag.status.success(), "byte {at}: a tag was pushed");
        // The layer's upload was cancelled before its closing PUT: no blob of it is linked into the repository.
        assert_eq!(open_uploads(registry, &repository), 0, "byte {at}");
        let linked = registry.dir.path("storage/docker/registry/v2/repositories").join(&repository).join("_layers");
        let linked = std::fs::read_dir(linked.join("sha256")).map(|e| e.count()).unwrap_or(0);
        assert!(linked <= 1, "byte {at}: {linked} blobs linked (the config at most)");
    }
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

    // A new image with a 12 MiB layer, pushed through a proxy that holds its upload after 4 MiB; the registry is
    // stopped there, and the proxy with it.
    let large = work.path("large");
    large_image(&large, 12 << 20);
    let proxy = FaultProxy::start(&registry, &["hold", &(4 << 20).to_string()]);
    let push = Command::new(assert_cmd::cargo::cargo_bin("cryptadm"))
        .args(["image", "encrypt", "--recipient", &format!("jwe:{public}"), "--dest-tls-verify=false"])
        .arg(oci(&large))
        .arg(proxy.image("killed/app:v1"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    proxy.wait_for("holding");
    registry.stop();
    drop(proxy);
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
    large_image(&src, 6 << 20);
    run(&mut skopeo(&["--dest-tls-verify=false", &oci(&src), &registry.image("resume/app:v1")]));

    // Every request goes through a proxy that breaks the first response passing 2 MiB: the layer's, asked for in
    // one request (`--jobs 1`; registry_ranged.rs breaks a range).
    let mut proxy = FaultProxy::start(registry, &["cut", &(2 << 20).to_string()]);
    let copied = work.path("copied");
    let outcome = cryptadm()
        .args(["image", "decrypt", "--allow-plaintext", "--src-tls-verify=false", "--jobs", "1"])
        .arg(proxy.image("resume/app:v1"))
        .arg(oci(&copied))
        .output()
        .unwrap();
    proxy.stop();
    let cut = proxy.lines().iter().any(|l| l == "cut");
    assert!(outcome.status.success(), "{}", String::from_utf8_lossy(&outcome.stderr));
    assert!(cut, "the proxy broke a download: {:?}", proxy.lines());
    // The reader verified the layer's digest; the copy is the source, byte for byte.
    assert_eq!(layer_digests(&copied), layer_digests(&src));
    let digest = layer_digests(&src)[0].clone();
    let blob = |dir: &Path| std::fs::read(dir.join("blobs/sha256").join(&digest[7..])).unwrap();
    assert!(blob(&copied) == blob(&src));
}

/// The overall deadline and the registry: a pull with `CRYPTADM_TIMEOUT` (or `--timeout`) works against a healthy
/// registry (it used to panic: "there is no reactor running"), and a registry whose blob stalls after the manifest
/// came (one byte every 2 s, tests/cli/support_misbehaving.rs in front of the real registry) or that never answers
/// ends the pull at the deadline with exit status 4, naming the registry.
#[test]
fn registry_pulls_obey_the_deadline() {
    use crate::support_misbehaving::{Misbehaving, Mode, timed};
    let registry = shared();
    let work = Scratch::new();
    let src = work.path("src");
    large_image(&src, 4 << 20);
    run(&mut skopeo(&["--dest-tls-verify=false", &oci(&src), &registry.image("deadline/app:v1")]));
    let keys = Keys::new();
    let (_, public) = keys.rsa("rsa", 2048);
    let recipient = format!("jwe:{public}");
    let encrypt = |from: &str, out: &str, timeout: (&str, &str)| {
        let mut command = cryptadm();
        if timeout.0 == "env" {
            command.env("CRYPTADM_TIMEOUT", timeout.1);
        } else {
            command.args(["--timeout", timeout.1]);
        }
        command
            .args(["image", "encrypt", "--recipient", &recipient, "--src-tls-verify=false", from])
            .arg(oci(&work.path(out)));
        timed(&mut command)
    };
    for (how, out) in [("env", "healthy-env"), ("flag", "healthy-flag")] {
        let (output, _) = encrypt(&format!("docker://{}/deadline/app:v1", registry.host), out, (how, "120"));
        assert!(output.status.success(), "{how}: {}", String::from_utf8_lossy(&output.stderr));
        let inspected = cryptadm()
            .env("CRYPTADM_TIMEOUT", "60")
            .args(["image", "inspect", "--tls-verify=false", &registry.image("deadline/app:v1")])
            .output()
            .unwrap();
        assert!(inspected.status.success(), "{}", String::from_utf8_lossy(&inspected.stderr));
    }
    let proxy = Misbehaving::start(Mode::Forward, Some(&registry.host));
    proxy.drip_after(256 << 10);
    let silent = Misbehaving::silent();
    for (server, case) in [(&proxy, "a stalled blob"), (&silent, "a silent registry")] {
        let (output, took) = encrypt(&format!("docker://{}/deadline/app:v1", server.host()), case, ("env", "5"));
        let error = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(4), "{case}: {error}");
        assert!(took < Duration::from_secs(6), "{case}: took {took:?}: {error}");
        assert!(
            error.contains(&server.host()) && error.contains("the overall deadline of 5 s passed"),
            "{case}: {error}"
        );
    }
}
