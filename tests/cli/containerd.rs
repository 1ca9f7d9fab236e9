//! The proof that a node runs what cryptadm encrypted: a real containerd (Debian's `containerd` 1.6) with its own
//! root, state and socket in a temporary directory, the native snapshotter, the CRI with containerd's default
//! `key_model = "node"`, and the drop-in `cryptadm image node-config` prints (the stream processors, pointing at
//! the built binary) imported by its config.toml. It
//! pulls through the CRI (`runtime.v1.ImageService/PullImage`, a grpcio client compiled at test time from the
//! vendored api.proto) from a local docker-registry, and the unpacked snapshots are compared with the files the
//! images were made of. Cases: cryptadm-encrypted (JWE RSA and EC, PKCS#7, OpenPGP, a gRPC key provider;
//! multi-layer, two platforms, gzip, uncompressed and zstd layers), skopeo-encrypted, no key (the pull fails with
//! cryptadm's message, nothing unpacked), a tampered layer (the pull fails, nothing unpacked).
//!
//! And a Pod runs: RunPodSandbox (host network; the pause image is a static busybox pushed to the same registry),
//! PullImage, CreateContainer and StartContainer (runc) of a cryptadm-encrypted two-layer image whose entrypoint
//! prints a file from each layer, read back from the container's CRI log; then the key leaves the node and the
//! image is removed, and the same Pod fails at PullImage with cryptadm's message (before the removal it still
//! runs: the cache gap). Then the node's only key is sealed to its TPM (swtpm, `clevis encrypt tpm2`): the Pod
//! runs, and with another TPM behind the node's TPM address the pull fails with the TPM's refusal. Test-only setting: the CRI's `restrict_oom_score_adj = true`, as this sandbox lacks
//! CAP_SYS_RESOURCE and runc cannot give the pause container the CRI's oom_score_adj of -998 (runc fails with
//! "can't get final child's PID from pipe: EOF"; a second containerd with the default checks that it still does).
//!
//! Each case has its own layers: containerd unpacks no layer whose diff ID it already has, keys or no keys.
//! Keys lie as the DaemonSet of `secret generate-k8s --with-daemonset` lays them out: `keys/<secret>/<file>`.
//! Nothing here skips: a missing tool fails with the command that installs it (`bash .ci/run` does), and
//! containerd and the registry are stopped on drop, when a case fails too.

use crate::image::{GnupgHome, Keys, run};
use crate::support::{Scratch, cryptadm, require_tool};
use flate2::write::GzEncoder;
use serde_json::{Value, json};
use sha2::Digest;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const CRI_PULL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/interop/cri_pull.py");

/// A child process stopped (SIGTERM, then SIGKILL) when dropped.
struct Daemon {
    child: Child,
}

impl Daemon {
    fn spawn(name: &'static str, command: &mut Command, log: &Path) -> Self {
        let log = std::fs::File::create(log).unwrap();
        let child = command
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("starting {name}: {e}"));
        Self { child }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // It did not stop on SIGTERM.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// containerd and its registry, under one temporary directory.
pub(crate) struct Node {
    // Drop order: containerd first, then the registry, then the directory.
    _containerd: Daemon,
    _registry: Daemon,
    pub(crate) work: Scratch,
    host: String,
    socket: PathBuf,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn wait_for(what: &str, log: &Path, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !ready() {
        assert!(
            Instant::now() < deadline,
            "{what} did not start: {}",
            std::fs::read_to_string(log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

impl Node {
    fn start() -> Self {
        Self::start_configured(true, &[])
    }

    /// A node whose `node-config` run also gets `node_config_args` (e.g. `--processor-env NAME=VALUE`).
    pub(crate) fn start_with(node_config_args: &[String]) -> Self {
        Self::start_configured(true, node_config_args)
    }

    /// `restrict_oom_score_adj`: false is containerd's default, which fails every Pod where containerd lacks
    /// CAP_SYS_RESOURCE.
    fn start_configured(restrict_oom_score_adj: bool, node_config_args: &[String]) -> Self {
        require_tool("containerd", "apt-get install -y containerd");
        require_tool("ctr", "apt-get install -y containerd");
        require_tool("docker-registry", "apt-get install -y docker-registry");
        require_tool("skopeo", "apt-get install -y skopeo");
        let grpc = Command::new("python3").args(["-c", "import grpc, grpc_tools"]).status().unwrap();
        assert!(grpc.success(), "python3's grpcio is missing: pip install grpcio grpcio-tools (bash .ci/run does)");
        let uid = run(Command::new("id").arg("-u"));
        assert_eq!(uid.trim(), "0", "containerd's snapshotters mount: run the containerd proof test as root");

        let work = Scratch::new();
        let (port, debug_port) = (free_port(), free_port());
        let host = format!("127.0.0.1:{port}");
        let registry_config = work.write(
            "registry.yml",
            format!(
                "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: {host}\n  debug:\n    addr: 127.0.0.1:{debug_port}\n",
                work.path("registry").display()
            ),
        );
        let registry_log = work.path("registry.log");
        let registry = Daemon::spawn(
            "docker-registry",
            Command::new("docker-registry").arg("serve").arg(&registry_config),
            &registry_log,
        );
        wait_for("docker-registry", &registry_log, || std::net::TcpStream::connect(&host).is_ok());

        // The stream processors exactly as node-config prints them, for the binary under test.
        std::fs::create_dir(work.path("keys")).unwrap();
        let binary = assert_cmd::cargo::cargo_bin("cryptadm");
        let node_config = run(Command::new(&binary)
            .args(["image", "node-config", "--runtime", "containerd", "--containerd-version", "1", "--binary"])
            .arg(&binary)
            .arg("--keys-dir")
            .arg(work.path("keys"))
            .arg("--keyprovider-config")
            .arg(work.path("ocicrypt_keyprovider.conf"))
            .args(node_config_args));
        // Installed as node-config's comments say: a drop-in that config.toml imports.
        let drop_in = work.write("cryptadm.toml", &node_config).display().to_string();
        let w = work.dir.path().display().to_string();
        // Test-only settings: everything under the temporary directory (runc's state too; only the shims' sockets
        // go to /run/containerd/s, fixed in containerd 1.6), the native snapshotter, the registry as a plain-HTTP
        // mirror, no `opt` plugin (it would create /opt/containerd on the host), and no OOM score below
        // containerd's own (this sandbox lacks CAP_SYS_RESOURCE: see the module's documentation).
        let config = format!(
            r#"version = 2
imports = ["{drop_in}"]
root = "{w}/root"
state = "{w}/state"
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs"]
[grpc]
  address = "{w}/containerd.sock"
[ttrpc]
  address = "{w}/containerd.sock.ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{host}/pause:v1"
  restrict_oom_score_adj = {restrict_oom_score_adj}
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "native"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        Root = "{w}/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "{w}/cni/bin"
    conf_dir = "{w}/cni/conf"
  [plugins."io.containerd.grpc.v1.cri".registry.mirrors."{host}"]
    endpoint = ["http://{host}"]
"#
        );
        let config_path = work.write("config.toml", &config);
        let socket = work.path("containerd.sock");
        let containerd_log = work.path("containerd.log");
        let containerd = Daemon::spawn(
            "containerd",
            Command::new("containerd").arg("--config").arg(&config_path).current_dir(work.dir.path()),
            &containerd_log,
        );
        wait_for("containerd", &containerd_log, || {
            socket.exists()
                && Command::new("ctr").arg("-a").arg(&socket).arg("version").output().is_ok_and(|o| o.status.success())
        });
        let node = Self { _containerd: containerd, _registry: registry, work, host, socket };
        // What containerd made of the configuration: both processors run cryptadm.
        let dump = run(Command::new("containerd").arg("--config").arg(&config_path).args(["config", "dump"]));
        for id in ["io.containerd.ocicrypt.decoder.v1.tar.gzip", "io.containerd.ocicrypt.decoder.v1.tar"] {
            let table = dump.split(&format!("[stream_processors.\"{id}\"]")).nth(1).expect(id);
            assert!(table.contains(&format!("path = \"{}\"", binary.display())), "{id}: {table}");
        }
        node
    }

    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(self.work.path("containerd.log")).unwrap_or_default()
    }

    /// PullImage through the CRI: `Ok(image_ref)` or `Err(details)`.
    pub(crate) fn pull(&self, repository: &str) -> Result<String, String> {
        let output = Command::new("python3")
            .arg(CRI_PULL)
            .arg(&self.socket)
            .arg("pull")
            .arg(format!("{}/{repository}", self.host))
            .output()
            .unwrap();
        let reply: Value = serde_json::from_slice(&output.stdout)
            .unwrap_or_else(|_| panic!("cri_pull.py: {}", String::from_utf8_lossy(&output.stderr)));
        match reply["image_ref"].as_str() {
            Some(image) if output.status.success() => Ok(image.to_owned()),
            _ => Err(reply["details"].as_str().unwrap_or_default().to_owned()),
        }
    }

    /// A Pod of one container through the CRI, as the kubelet starts it (tests/interop/cri_pull.py `run`): the
    /// container's exit code and CRI log as `Ok`, or the failed call and its error as `Err`.
    fn run_pod(&self, repository: &str) -> Result<Value, Value> {
        self.run_pod_command(repository, &[])
    }

    /// [`Node::run_pod`] with a Pod spec's `command` (and its args) instead of the image's entrypoint.
    pub(crate) fn run_pod_command(&self, repository: &str, command: &[&str]) -> Result<Value, Value> {
        // One log directory per Pod, as the kubelet makes one per Pod UID.
        static PODS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let logs = self.work.path(&format!("pod-logs-{}", PODS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)));
        std::fs::create_dir_all(&logs).unwrap();
        let output = Command::new("python3")
            .arg(CRI_PULL)
            .arg(&self.socket)
            .arg("run")
            .arg(format!("{}/{repository}", self.host))
            .arg(&logs)
            .args(command)
            .output()
            .unwrap();
        let reply: Value = serde_json::from_slice(&output.stdout)
            .unwrap_or_else(|_| panic!("cri_pull.py: {}", String::from_utf8_lossy(&output.stderr)));
        if output.status.success() { Ok(reply) } else { Err(reply) }
    }

    /// RemoveImage through the CRI (containerd deletes it synchronously, and its snapshots with it when nothing
    /// else holds them).
    fn remove_image(&self, repository: &str) {
        let output = Command::new("python3")
            .arg(CRI_PULL)
            .arg(&self.socket)
            .arg("remove")
            .arg(format!("{}/{repository}", self.host))
            .output()
            .unwrap();
        assert!(output.status.success(), "RemoveImage: {}", String::from_utf8_lossy(&output.stdout));
    }

    /// The pod sandbox's pause image (no registry on the internet being reachable): a static busybox that sleeps,
    /// pushed in plain to the node's registry as `pause:v1`, where the CRI's `sandbox_image` points.
    pub(crate) fn push_pause(&self, busybox: &[u8]) {
        let layout = self.work.path("pause");
        let config = json!({"Entrypoint": ["/pause/busybox", "sleep", "86400"]});
        write_layout(&layout, &[("amd64", vec![("gzip", tar_of(&[("pause/busybox", busybox, 0o755)]))])], &config);
        run(Command::new("skopeo")
            .args(["--insecure-policy", "copy", "--dest-tls-verify=false"])
            .arg(oci(&layout))
            .arg(self.image("pause:v1")));
    }

    pub(crate) fn image(&self, repository: &str) -> String {
        format!("docker://{}/{repository}", self.host)
    }

    /// Where the keys of Secret `secret` go, as the DaemonSet lays them out.
    fn install_key(&self, secret: &str, file: &str, from: &str) {
        let dir = self.work.path("keys").join(secret);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(from, dir.join(file)).unwrap();
    }

    /// The content of `path` in every unpacked snapshot that has it.
    fn snapshot_files(&self, path: &str) -> Vec<Vec<u8>> {
        let snapshots = self.work.path("root/io.containerd.snapshotter.v1.native/snapshots");
        let Ok(entries) = std::fs::read_dir(snapshots) else { return Vec::new() };
        entries.filter_map(|e| std::fs::read(e.unwrap().path().join(path)).ok()).collect()
    }

    pub(crate) fn assert_unpacked(&self, case: &str, files: &[(&str, &str)]) {
        for (path, content) in files {
            let found = self.snapshot_files(path);
            assert!(
                found.iter().any(|f| f == content.as_bytes()),
                "{case}: `{path}` is not in any snapshot with its content (found {} copies)",
                found.len()
            );
        }
    }

    pub(crate) fn assert_not_unpacked(&self, case: &str, files: &[(&str, &str)]) {
        for (path, _) in files {
            assert!(self.snapshot_files(path).is_empty(), "{case}: `{path}` was unpacked");
        }
    }
}

/// A layer: its files and compression.
pub(crate) struct Layer<'a> {
    pub(crate) compression: &'a str,
    pub(crate) files: &'a [(&'a str, &'a str)],
}

fn sha256(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(sha2::Sha256::digest(bytes)))
}

fn put(layout: &Path, bytes: &[u8]) -> Value {
    let digest = sha256(bytes);
    std::fs::write(layout.join("blobs/sha256").join(&digest[7..]), bytes).unwrap();
    json!({"digest": digest, "size": bytes.len()})
}

fn descriptor(media: &str, blob: Value) -> Value {
    json!({"mediaType": media, "digest": blob["digest"], "size": blob["size"]})
}

/// A layer's tar: regular files with their modes, owned by root, dated 0.
pub(crate) fn tar_of(files: &[(&str, &[u8], u32)]) -> Vec<u8> {
    let mut tar = tar::Builder::new(Vec::new());
    for (name, content, mode) in files {
        let mut header = tar::Header::new_ustar();
        header.set_size(content.len() as u64);
        header.set_mode(*mode);
        header.set_mtime(0);
        header.set_cksum();
        tar.append_data(&mut header, name, *content).unwrap();
    }
    tar.into_inner().unwrap()
}

/// An OCI layout (tag v1) with one manifest per platform.
pub(crate) fn make_layout(layout: &Path, platforms: &[(&str, &[Layer<'_>])]) {
    let platforms: Vec<Platform<'_>> = platforms
        .iter()
        .map(|(arch, layers)| {
            let tars = layers
                .iter()
                .map(|layer| {
                    let files: Vec<(&str, &[u8], u32)> =
                        layer.files.iter().map(|(name, content)| (*name, content.as_bytes(), 0o644)).collect();
                    (layer.compression, tar_of(&files))
                })
                .collect();
            (*arch, tars)
        })
        .collect();
    write_layout(layout, &platforms, &json!({}));
}

/// A platform's architecture and its layers, each a compression ("gzip", "zstd" or "none") and a tar.
pub(crate) type Platform<'a> = (&'a str, Vec<(&'a str, Vec<u8>)>);

/// An OCI layout (tag v1) with one manifest per platform, each with its layers and the same image `config`
/// (entrypoint, command, ...).
pub(crate) fn write_layout(layout: &Path, platforms: &[Platform<'_>], config: &Value) {
    std::fs::create_dir_all(layout.join("blobs/sha256")).unwrap();
    std::fs::write(layout.join("oci-layout"), r#"{"imageLayoutVersion":"1.0.0"}"#).unwrap();
    let mut manifests = Vec::new();
    for (arch, layers) in platforms {
        let (mut descriptors, mut diff_ids) = (Vec::new(), Vec::new());
        for (compression, tar) in layers {
            diff_ids.push(sha256(tar));
            let (blob, media) = match *compression {
                "gzip" => {
                    let mut gz = GzEncoder::new(Vec::new(), flate2::Compression::default());
                    gz.write_all(tar).unwrap();
                    (gz.finish().unwrap(), "application/vnd.oci.image.layer.v1.tar+gzip")
                }
                "zstd" => {
                    (zstd::stream::encode_all(&tar[..], 3).unwrap(), "application/vnd.oci.image.layer.v1.tar+zstd")
                }
                _ => (tar.clone(), "application/vnd.oci.image.layer.v1.tar"),
            };
            descriptors.push(descriptor(media, put(layout, &blob)));
        }
        let config = json!({"architecture": arch, "os": "linux", "rootfs": {"type": "layers", "diff_ids": diff_ids}, "config": config});
        let config = put(layout, config.to_string().as_bytes());
        let manifest = json!({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": descriptor("application/vnd.oci.image.config.v1+json", config), "layers": descriptors});
        let mut entry =
            descriptor("application/vnd.oci.image.manifest.v1+json", put(layout, manifest.to_string().as_bytes()));
        entry["platform"] = json!({"os": "linux", "architecture": arch});
        manifests.push(entry);
    }
    let mut root = if manifests.len() == 1 {
        let mut root = manifests.remove(0);
        root.as_object_mut().unwrap().remove("platform");
        root
    } else {
        let index =
            json!({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": manifests});
        descriptor("application/vnd.oci.image.index.v1+json", put(layout, index.to_string().as_bytes()))
    };
    root["annotations"] = json!({"org.opencontainers.image.ref.name": "v1"});
    std::fs::write(layout.join("index.json"), json!({"schemaVersion": 2, "manifests": [root]}).to_string()).unwrap();
}

/// Flips a bit in the middle of the first layer of a single-manifest layout and rewrites the digests above it,
/// so that only the layer's HMAC can notice.
fn tamper(layout: &Path) {
    let index_path = layout.join("index.json");
    let mut index: Value = serde_json::from_slice(&std::fs::read(&index_path).unwrap()).unwrap();
    let blob = |d: &Value| layout.join("blobs/sha256").join(&d.as_str().unwrap()[7..]);
    let mut manifest: Value =
        serde_json::from_slice(&std::fs::read(blob(&index["manifests"][0]["digest"])).unwrap()).unwrap();
    let mut data = std::fs::read(blob(&manifest["layers"][0]["digest"])).unwrap();
    let middle = data.len() / 2;
    data[middle] ^= 0x01;
    let put_layer = put(layout, &data);
    manifest["layers"][0]["digest"] = put_layer["digest"].clone();
    let put_manifest = put(layout, manifest.to_string().as_bytes());
    index["manifests"][0]["digest"] = put_manifest["digest"].clone();
    index["manifests"][0]["size"] = put_manifest["size"].clone();
    std::fs::write(&index_path, index.to_string()).unwrap();
}

pub(crate) fn oci(dir: &Path) -> String {
    format!("oci:{}:v1", dir.display())
}

/// Encrypts `layout` with cryptadm straight into the registry.
fn encrypt_push(node: &Node, layout: &Path, recipients: &[String], extra: &[&str], repository: &str) {
    let mut command = cryptadm();
    command.args(["image", "encrypt", "--dest-tls-verify=false"]);
    for recipient in recipients {
        command.args(["--recipient", recipient]);
    }
    command.args(extra).arg(oci(layout)).arg(node.image(repository)).assert().success();
}

#[test]
fn containerd_pulls_and_unpacks_what_cryptadm_and_skopeo_encrypted() {
    let node = Node::start();
    let keys = Keys::new();
    let work = Scratch::new();
    let (rsa_private, rsa_public) = keys.rsa("rsa", 2048);
    let (ec_private, ec_public) = keys.ec("p256", "prime256v1");
    let (pkcs7_private, pkcs7_cert) = {
        let (private, _) = keys.rsa("pkcs7", 2048);
        let cert = keys.scratch.path("pkcs7.crt");
        run(Command::new("openssl")
            .args(["req", "-x509", "-new", "-key", &private, "-subj", "/CN=node", "-days", "2", "-out"])
            .arg(&cert));
        (private, cert.display().to_string())
    };
    let gnupg = GnupgHome::new();
    node.install_key("image-keys", "rsa.pem", &rsa_private);
    node.install_key("image-keys", "p256.pem", &ec_private);
    node.install_key("pkcs7-keys", "node.pem", &pkcs7_private);
    node.install_key("pkcs7-keys", "node.crt", &pkcs7_cert);
    node.install_key("pgp-keys", "alice.gpg", &gnupg.secret_key_file());

    let gnupg_home = gnupg.path();
    // cryptadm-encrypted images, each with its own layers.
    type Case<'a> = (&'a str, Vec<String>, Vec<&'a str>, Vec<(&'a str, Vec<Layer<'a>>)>);
    let cases: Vec<Case<'_>> = vec![
        (
            "jwe-rsa-multi-layer",
            vec![format!("jwe:{rsa_public}")],
            vec![],
            vec![(
                "amd64",
                vec![
                    Layer { compression: "gzip", files: &[("etc/rsa/base", "rsa base layer")] },
                    Layer {
                        compression: "gzip",
                        files: &[("etc/rsa/top", "rsa top layer"), ("bin/rsa", "#!/bin/sh\n")],
                    },
                ],
            )],
        ),
        (
            "jwe-ec-uncompressed-and-zstd",
            vec![format!("jwe:{ec_public}")],
            vec![],
            vec![(
                "amd64",
                vec![
                    Layer { compression: "none", files: &[("etc/ec/plain", "ec uncompressed layer")] },
                    Layer { compression: "zstd", files: &[("etc/ec/zstd", "ec zstd layer")] },
                ],
            )],
        ),
        (
            "pkcs7-two-platforms",
            vec![format!("pkcs7:{pkcs7_cert}")],
            vec![],
            vec![
                ("amd64", vec![Layer { compression: "gzip", files: &[("etc/pkcs7/amd64", "pkcs7 amd64")] }]),
                ("arm64", vec![Layer { compression: "gzip", files: &[("etc/pkcs7/arm64", "pkcs7 arm64")] }]),
            ],
        ),
        (
            "openpgp",
            vec!["pgp:alice@example.com".to_owned()],
            vec!["--gpg-homedir", gnupg_home.to_str().unwrap()],
            vec![("amd64", vec![Layer { compression: "gzip", files: &[("etc/pgp/file", "openpgp layer")] }])],
        ),
    ];
    for (name, recipients, extra, platforms) in &cases {
        let layout = work.path(name);
        let platforms_ref: Vec<(&str, &[Layer<'_>])> = platforms.iter().map(|(a, l)| (*a, &l[..])).collect();
        make_layout(&layout, &platforms_ref);
        encrypt_push(&node, &layout, recipients, extra, &format!("cryptadm/{name}:v1"));
        let pulled = node.pull(&format!("cryptadm/{name}:v1"));
        assert!(pulled.is_ok(), "{name}: {pulled:?}\n{}", node.log());
        // containerd unpacks the host platform (amd64 here) only.
        for layer in &platforms[0].1 {
            node.assert_unpacked(name, layer.files);
        }
    }

    // skopeo encrypts (containers/ocicrypt), cryptadm decrypts inside containerd.
    let layout = work.path("skopeo");
    let files: &[(&str, &str)] = &[("etc/skopeo/file", "skopeo-encrypted layer")];
    make_layout(&layout, &[("amd64", &[Layer { compression: "gzip", files }])]);
    run(Command::new("skopeo")
        .args(["--insecure-policy", "copy", "--dest-tls-verify=false", "--encryption-key"])
        .arg(format!("jwe:{rsa_public}"))
        .arg(oci(&layout))
        .arg(node.image("skopeo/one:v1")));
    let pulled = node.pull("skopeo/one:v1");
    assert!(pulled.is_ok(), "skopeo: {pulled:?}\n{}", node.log());
    node.assert_unpacked("skopeo", files);

    // A gRPC key provider, configured through the processors' OCICRYPT_KEYPROVIDER_CONFIG (as node-config prints).
    let socket = node.work.path("kp.sock");
    let provider_log = node.work.path("kp.log");
    let _provider =
        crate::keyprovider_grpc::Provider::start(&format!("unix://{}", socket.display()), &provider_log, || {
            socket.exists()
        });
    let provider_config = node.work.write(
        "ocicrypt_keyprovider.conf",
        format!(r#"{{"key-providers": {{"kms": {{"grpc": "unix://{}"}}}}}}"#, socket.display()),
    );
    let layout = work.path("provider");
    let files: &[(&str, &str)] = &[("etc/provider/file", "unwrapped by a gRPC key provider")];
    make_layout(&layout, &[("amd64", &[Layer { compression: "gzip", files }])]);
    cryptadm()
        .env("OCICRYPT_KEYPROVIDER_CONFIG", &provider_config)
        .args(["image", "encrypt", "--dest-tls-verify=false", "--recipient", "provider:kms"])
        .arg(oci(&layout))
        .arg(node.image("provider/one:v1"))
        .assert()
        .success();
    let pulled = node.pull("provider/one:v1");
    assert!(pulled.is_ok(), "provider: {pulled:?}\n{}", node.log());
    node.assert_unpacked("provider", files);
    let calls = std::fs::read_to_string(&provider_log).unwrap();
    assert!(calls.contains(r#""rpc": "UnWrapKey""#), "{calls}");

    // No key on the node for the image: the pull fails with cryptadm's message, and nothing is unpacked.
    let (_, stranger) = keys.rsa("stranger", 2048);
    let layout = work.path("no-key");
    let files: &[(&str, &str)] = &[("etc/nokey/file", "nobody here can read this")];
    make_layout(&layout, &[("amd64", &[Layer { compression: "gzip", files }])]);
    encrypt_push(&node, &layout, &[format!("jwe:{stranger}")], &[], "nokey/one:v1");
    let details = node.pull("nokey/one:v1").expect_err("a pull without the key must fail");
    // containerd races the processor's exit status against its own digest check of the (empty) output: most pulls
    // report our message, some report the digest (seen once in four runs); either way the pull fails.
    let ours = details.contains("cryptadm stream-decrypt:") && details.contains("none of the given keys");
    assert!(ours || details.contains("wrong diff id calculated on extraction"), "{details}");
    if ours {
        assert!(node.log().contains("cryptadm stream-decrypt:"), "containerd's log lacks our message");
    }
    node.assert_not_unpacked("no key", files);

    // A tampered layer: the HMAC fails, the held-back tail never reaches containerd, the pull fails.
    let layout = work.path("tampered");
    let encrypted = work.path("tampered-enc");
    let files: &[(&str, &str)] = &[("etc/tampered/file", &"tampered layer content ".repeat(40_000))];
    make_layout(&layout, &[("amd64", &[Layer { compression: "gzip", files }])]);
    cryptadm()
        .args(["image", "encrypt", "--recipient", &format!("jwe:{rsa_public}")])
        .arg(oci(&layout))
        .arg(oci(&encrypted))
        .assert()
        .success();
    tamper(&encrypted);
    run(Command::new("skopeo")
        .args(["--insecure-policy", "copy", "--dest-tls-verify=false"])
        .arg(oci(&encrypted))
        .arg(node.image("tampered/one:v1")));
    let details = node.pull("tampered/one:v1").expect_err("a tampered layer must fail the pull");
    // Which error containerd reports races the processor's exit: the processor's failure ("failed to extract
    // layer"), or, when the stream's end reaches the unpacker first, the digest of what it got ("wrong diff id
    // calculated on extraction"). Either way the pull fails and nothing is unpacked (checked below).
    assert!(
        details.contains("failed to extract layer") || details.contains("wrong diff id calculated on extraction"),
        "{details}"
    );
    node.assert_not_unpacked("tampered", files);
}

/// The static busybox of Debian's `busybox-static` (the test images' only program).
pub(crate) fn static_busybox() -> Vec<u8> {
    require_tool("busybox", "apt-get install -y busybox-static");
    let description = run(Command::new("file").args(["-bL", "/bin/busybox"]));
    assert!(
        description.contains("statically linked"),
        "/bin/busybox is not static ({description}): apt-get install -y busybox-static (bash .ci/run does)"
    );
    std::fs::read("/bin/busybox").unwrap()
}

/// What the runnable image's entrypoint prints: one file from each of its two layers.
pub(crate) const RUNNABLE_OUTPUT: &str = "base layer of the encrypted app\nsecond layer: hello from inside\n";

/// A runnable image (tag v1): busybox and one file in a first layer, another file in a second (both gzip), and an
/// entrypoint that prints the two files (RUNNABLE_OUTPUT). Each `name` gets its own layers (the name is in both),
/// as no two cases may share a diff ID: containerd and containers/storage reuse a layer they already have.
pub(crate) fn make_runnable_layout(layout: &Path, busybox: &[u8], name: &str) {
    let (base, message) = RUNNABLE_OUTPUT.split_once('\n').unwrap();
    let base = format!("{base}\n");
    let config = json!({"Entrypoint": ["/bin/busybox", "cat"], "Cmd": ["/etc/app/base", "/etc/app/message"],
        "Labels": {"case": name}});
    let first = tar_of(&[
        ("bin/busybox", busybox, 0o755),
        ("etc/app/base", base.as_bytes(), 0o644),
        ("etc/app/case", name.as_bytes(), 0o644),
    ]);
    let second = tar_of(&[("etc/app/message", message.as_bytes(), 0o644), ("etc/app/case2", name.as_bytes(), 0o644)]);
    write_layout(layout, &[("amd64", vec![("gzip", first), ("gzip", second)])], &config);
}

#[test]
fn containerd_runs_a_pod_from_an_image_cryptadm_encrypted_and_refuses_it_without_the_key() {
    // The node's TPM, for the key sealed to it (below): the processors reach it through a relay whose TPM can be
    // replaced, as their CRYPTADM_TPM2_DEVICE is fixed in containerd's configuration.
    let relay = crate::support_tpm2::TpmRelay::start();
    let node = Node::start_with(&["--processor-env".into(), format!("CRYPTADM_TPM2_DEVICE={}", relay.tcti())]);
    let busybox = static_busybox();
    node.push_pause(&busybox);
    let keys = Keys::new();
    let work = Scratch::new();
    let (private, public) = keys.rsa("app", 2048);
    node.install_key("image-keys", "app.pem", &private);

    let layout = work.path("app");
    make_runnable_layout(&layout, &busybox, "containerd");
    encrypt_push(&node, &layout, &[format!("jwe:{public}")], &[], "app/enc:v1");
    let pod = node.run_pod("app/enc:v1").unwrap_or_else(|e| panic!("the pod did not run: {e}\n{}", node.log()));
    assert_eq!(pod["exit_code"], 0, "{pod}");
    assert_eq!(pod["stdout"], RUNNABLE_OUTPUT, "{pod}");
    assert_eq!(pod["stderr"], "", "{pod}");
    node.assert_unpacked("containerd run", &[("etc/app/message", "second layer: hello from inside\n")]);

    // The node loses the key. While the image stays, the Pod still runs: its layers are unpacked, so the pull
    // asks no processor (the cache gap of docs/image.md, through the CRI).
    std::fs::remove_file(node.work.path("keys/image-keys/app.pem")).unwrap();
    let pod = node.run_pod("app/enc:v1").unwrap_or_else(|e| panic!("the cached image did not run: {e}"));
    assert_eq!(pod["stdout"], RUNNABLE_OUTPUT, "{pod}");
    // The image is deleted: nothing unpacked is left to run from, and the Pod does not start. The kubelet shows
    // the pull's error in the Pod's events (ErrImagePull).
    node.remove_image("app/enc:v1");
    node.assert_not_unpacked("after RemoveImage", &[("etc/app/message", ""), ("bin/busybox", "")]);
    // containerd races the processor's exit status against its own digest check of the (empty) output, so one
    // pull in a few reports the digest instead of our message; the kubelet retries a failed pull, and so does this.
    let mut errors = Vec::new();
    for _ in 0..5 {
        let failed = node.run_pod("app/enc:v1").expect_err("a pod whose image no node key opens must not start");
        assert_eq!(failed["stage"], "PullImage", "{failed}");
        let details = failed["details"].as_str().unwrap().to_owned();
        assert!(
            details.contains("cryptadm stream-decrypt:") || details.contains("wrong diff id calculated on extraction"),
            "{details}"
        );
        errors.push(details);
        if errors.last().unwrap().contains("cryptadm stream-decrypt:") {
            break;
        }
    }
    let ours = errors.last().unwrap();
    assert!(ours.contains("cryptadm stream-decrypt:") && ours.contains("none of the given keys"), "{errors:?}");
    assert!(node.log().contains("cryptadm stream-decrypt:"), "containerd's log lacks our message");
    node.assert_not_unpacked("no key", &[("etc/app/message", ""), ("bin/busybox", "")]);
    sealed_node_key(&node, &relay, &keys, &busybox);
    drop(node);

    // Why the test's containerd restricts OOM scores: without CAP_SYS_RESOURCE, containerd's default fails every
    // Pod at RunPodSandbox, as runc cannot lower the pause container's oom_score_adj to -998.
    if !has_cap_sys_resource() {
        let strict = Node::start_configured(false, &[]);
        strict.push_pause(&busybox);
        let failed = strict.run_pod("pause:v1").expect_err("a Pod ran with an OOM score runc cannot set");
        assert_eq!(failed["stage"], "RunPodSandbox", "{failed}");
        let details = failed["details"].as_str().unwrap();
        assert!(details.contains("can't get final child's PID from pipe: EOF"), "{details}");
    }
}

/// Issue 43: the node's image key exists only sealed to its TPM (`clevis encrypt tpm2` of the PEM file, PCR 7 of
/// the sha256 bank). containerd pulls and runs the image, the stream processor opening the key through the TPM;
/// with the TPM replaced (another machine's), the pull fails with the TPM's refusal and nothing is unpacked.
fn sealed_node_key(node: &Node, relay: &crate::support_tpm2::TpmRelay, keys: &Keys, busybox: &[u8]) {
    let (private, public) = keys.ec("sealed", "prime256v1");
    let swtpm = crate::support_tpm2::tpm();
    relay.point_to(swtpm.port);
    let config = r#"{"pcr_ids":"7","pcr_bank":"sha256"}"#;
    let sealed = swtpm.tools("clevis", &["encrypt", "tpm2", config], &std::fs::read(&private).unwrap());
    let dir = node.work.path("keys/sealed-keys");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("node.pem.jwe"), &sealed).unwrap();
    assert!(!node.work.path("keys/image-keys/app.pem").exists(), "the sealed key is the only key");
    let layout = node.work.path("sealed-app");
    make_runnable_layout(&layout, busybox, "sealed to the TPM");
    encrypt_push(node, &layout, &[format!("jwe:{public}")], &[], "sealed/app:v1");
    let pod =
        node.run_pod("sealed/app:v1").unwrap_or_else(|e| panic!("the sealed-key pod did not run: {e}\n{}", node.log()));
    assert_eq!(pod["exit_code"], 0, "{pod}");
    assert_eq!(pod["stdout"], RUNNABLE_OUTPUT, "{pod}");
    swtpm.flush();
    drop(swtpm);

    // Another machine: the same key file, another TPM.
    node.remove_image("sealed/app:v1");
    let other = crate::support_tpm2::Swtpm::another();
    relay.point_to(other.port);
    let mut errors = Vec::new();
    for _ in 0..5 {
        let details = node.pull("sealed/app:v1").expect_err("a key sealed to another TPM must not open");
        assert!(
            details.contains("cryptadm stream-decrypt:") || details.contains("wrong diff id calculated on extraction"),
            "{details}"
        );
        errors.push(details);
        if errors.last().unwrap().contains("cryptadm stream-decrypt:") {
            break;
        }
    }
    let ours = errors.last().unwrap();
    assert!(ours.contains("none of the given keys"), "{errors:?}");
    assert!(ours.contains("node.pem.jwe") && ours.contains("does not belong to this TPM"), "{errors:?}");
    node.assert_not_unpacked("sealed key, another TPM", &[("etc/app/case", "sealed to the TPM")]);
    // The key was never written in plain anywhere under the node's directory.
    let pem = std::fs::read_to_string(&private).unwrap();
    let body = pem.lines().nth(1).unwrap();
    let found = Command::new("grep").args(["-rlF", "-D", "skip", body]).arg(node.work.dir.path()).output().unwrap();
    assert!(found.stdout.is_empty(), "the plain key was written: {}", String::from_utf8_lossy(&found.stdout));
}

/// Whether this process may lower OOM scores and raise hard resource limits (CAP_SYS_RESOURCE, bit 24 of its
/// effective set), as containerd's and podman's defaults need.
pub(crate) fn has_cap_sys_resource() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let effective = status.lines().find_map(|l| l.strip_prefix("CapEff:")).unwrap().trim();
    u64::from_str_radix(effective, 16).unwrap() & (1 << 24) != 0
}

/// Issue 36: node-config's drop-in goes into a full config.toml (containerd's own default one, `version = 2` and
/// every CRI table) through `imports`, as its comments say; containerd keeps the config's CRI settings and takes
/// the processors. Appending it instead, what node-config used to suggest, is refused by containerd, and a CRI
/// table in an imported file would replace config.toml's whole CRI section (why the drop-in has none). Only
/// `containerd config dump`: no daemon, no root.
#[test]
fn node_config_drop_in_merges_into_a_full_config() {
    require_tool("containerd", "apt-get install -y containerd");
    let work = Scratch::new();
    let binary = assert_cmd::cargo::cargo_bin("cryptadm");
    let drop_in =
        run(Command::new(&binary).args(["image", "node-config", "--runtime", "containerd", "--binary"]).arg(&binary));
    std::fs::create_dir(work.path("conf.d")).unwrap();
    let drop_in_path = work.write("conf.d/cryptadm.toml", &drop_in);
    let default = run(Command::new("containerd").args(["config", "default"]));
    assert!(default.contains("\nversion = 2\n") && default.contains("imports = []\n"), "{default}");
    let w = work.dir.path().display();
    let config = default
        .replace("imports = []\n", &format!("imports = [\"{w}/conf.d/*.toml\"]\n"))
        .replace("root = \"/var/lib/containerd\"", &format!("root = \"{w}/root\""))
        .replace("state = \"/run/containerd\"", &format!("state = \"{w}/state\""))
        .replace(
            default.lines().map(str::trim).find(|l| l.starts_with("sandbox_image = ")).expect("a sandbox_image line"),
            "sandbox_image = \"registry.example/pause:keep-me\"",
        );
    let config_path = work.write("config.toml", &config);
    let dump = run(Command::new("containerd").arg("--config").arg(&config_path).args(["config", "dump"]));
    for id in ["io.containerd.ocicrypt.decoder.v1.tar.gzip", "io.containerd.ocicrypt.decoder.v1.tar"] {
        let table = dump.split(&format!("[stream_processors.\"{id}\"]")).nth(1).expect(id);
        let table = table.split("\n\n").next().unwrap();
        assert!(table.contains(&format!("path = \"{}\"", binary.display())), "{id}: {table}");
    }
    assert!(dump.contains("sandbox_image = \"registry.example/pause:keep-me\""), "config.toml's CRI kept: {dump}");
    assert!(dump.contains("key_model = \"node\""), "{dump}");
    // Appended to config.toml instead: containerd refuses the file.
    std::fs::remove_file(&drop_in_path).unwrap();
    let appended = work.write("appended.toml", format!("{config}\n{drop_in}"));
    let refused = Command::new("containerd").arg("--config").arg(&appended).args(["config", "dump"]).output().unwrap();
    assert!(!refused.status.success(), "containerd took duplicate tables");
    assert!(String::from_utf8_lossy(&refused.stderr).contains("duplicated tables"), "{refused:?}");
    // Why the drop-in carries no CRI table: an imported one replaces config.toml's whole CRI section.
    work.write(
        "conf.d/cri.toml",
        "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".image_decryption]\n  key_model = \"node\"\n",
    );
    let dump = run(Command::new("containerd").arg("--config").arg(&config_path).args(["config", "dump"]));
    assert!(!dump.contains("pause:keep-me"), "containerd now merges plugin tables key by key: the drop-in may say so");
}
