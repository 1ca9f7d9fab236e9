//! Keystone, Barbican (simple_crypto) and Glance (file store) from Debian 12's packages, started once per test
//! binary on 127.0.0.1 random ports by `tests/interop/openstack/services.sh`, and the independent clients
//! (openstackclient, barbicanclient; `api.py` for what they have no command for).
#![allow(dead_code)]

use crate::support::{Scratch, ServedOracle, cryptadm, require_tool};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The running services.
pub(crate) struct OpenStack {
    dir: Scratch,
    pub(crate) keystone: String,
    pub(crate) barbican: String,
    pub(crate) glance: String,
    pub(crate) admin_password: String,
    /// services.sh, which stays as the watchdog of the services (never waited for: it ends with this process).
    _watchdog: std::process::Child,
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/openstack").join(name)
}

/// The shared services (started by the first test that asks; about 40 s on a 2-core machine).
pub(crate) fn openstack() -> &'static OpenStack {
    static SHARED: OnceLock<OpenStack> = OnceLock::new();
    SHARED.get_or_init(OpenStack::start)
}

impl OpenStack {
    fn start() -> Self {
        for tool in ["keystone-manage", "barbican-manage", "glance-api", "uwsgi", "openstack", "sqlite3", "curl"] {
            require_tool(tool, "bash .ci/deps/openstack.sh");
        }
        let dir = Scratch::new();
        let root = dir.path("services");
        let log = std::fs::File::create(dir.path("services.out")).unwrap();
        let started = Instant::now();
        // The script stays as a watchdog: it stops every service when this test process is gone.
        let watchdog = Command::new("bash")
            .arg(script("services.sh"))
            .arg(&root)
            .arg(std::process::id().to_string())
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("start services.sh");
        let deadline = started + Duration::from_secs(300);
        while !root.join("ready").exists() {
            if let Ok(failed) = std::fs::read_to_string(root.join("failed")) {
                panic!("the OpenStack services did not start: {failed}");
            }
            assert!(Instant::now() < deadline, "the OpenStack services did not start within 300 s");
            std::thread::sleep(Duration::from_millis(200));
        }
        #[allow(clippy::print_stderr)] // the startup time, for the CI budget
        {
            eprintln!("OpenStack services answered after {:.1} s", started.elapsed().as_secs_f64());
        }
        let env = std::fs::read_to_string(root.join("env")).unwrap();
        let get = |key: &str| {
            env.lines().find_map(|l| l.strip_prefix(&format!("{key}="))).unwrap_or_else(|| panic!("{key}")).to_owned()
        };
        Self {
            keystone: get("KEYSTONE_URL"),
            barbican: get("BARBICAN_URL"),
            glance: get("GLANCE_URL"),
            admin_password: get("ADMIN_PASSWORD"),
            dir,
            _watchdog: watchdog,
        }
    }

    fn root(&self) -> PathBuf {
        self.dir.path("services")
    }

    /// The harness's clouds.yaml (cloud `test`: admin in project admin).
    pub(crate) fn clouds_yaml(&self) -> PathBuf {
        self.root().join("clouds.yaml")
    }

    /// `cryptadm` logged in to cloud `test` through clouds.yaml, with no other OS_* variable.
    pub(crate) fn cryptadm(&self) -> assert_cmd::Command {
        let mut cmd = cryptadm();
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("OS_") {
                cmd.env_remove(&name);
            }
        }
        cmd.env("OS_CLIENT_CONFIG_FILE", self.clouds_yaml()).env("OS_CLOUD", "test");
        cmd
    }

    /// The `openstack` client on cloud `test`.
    pub(crate) fn client(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new("openstack");
        cmd.args(args);
        self.on_cloud_test(&mut cmd);
        cmd
    }

    /// `cmd` with the environment that selects cloud `test` of the harness's clouds.yaml.
    fn on_cloud_test(&self, cmd: &mut Command) {
        cmd.env("OS_CLIENT_CONFIG_FILE", self.clouds_yaml()).env("OS_CLOUD", "test");
    }

    /// Runs the `openstack` client and returns its standard output; panics when it fails. One interpreter
    /// answers every call (`openstack_served.py`, a [`ServedOracle`]); [`OpenStack::client`] is a run of its own,
    /// for a test that looks at a failure.
    pub(crate) fn run(&self, args: &[&str]) -> Vec<u8> {
        static SERVED: OnceLock<ServedOracle> = OnceLock::new();
        let served = SERVED.get_or_init(|| {
            let os = openstack();
            ServedOracle::new(move || {
                // The interpreter of /usr/bin/openstack (Debian's python3-openstackclient), not whatever python3
                // comes first on PATH.
                let mut cmd = Command::new("/usr/bin/python3");
                cmd.arg(script("openstack_served.py"));
                os.on_cloud_test(&mut cmd);
                cmd
            })
        });
        let answer = served.ask(args);
        assert!(answer.ok, "openstack {args:?}: {}", answer.err);
        answer.out.into_bytes()
    }

    /// `openstack … -f json`, parsed.
    pub(crate) fn json(&self, args: &[&str]) -> serde_json::Value {
        let mut all = args.to_vec();
        all.extend(["-f", "json"]);
        serde_json::from_slice(&self.run(&all)).expect("openstack JSON")
    }

    /// One raw API call (`service`: keystone, key-manager, image): (status, body).
    pub(crate) fn api(&self, service: &str, method: &str, path: &str, body: Option<&str>) -> (u16, String) {
        let mut cmd = Command::new("python3");
        cmd.arg(script("api.py")).arg(self.root().join("env")).args([service, method, path]);
        if let Some(body) = body {
            cmd.arg(body);
        }
        let output = cmd.output().expect("run api.py");
        assert!(output.status.success(), "api.py: {}", String::from_utf8_lossy(&output.stderr));
        let text = String::from_utf8(output.stdout).unwrap();
        let (status, body) = text.split_once('\n').unwrap_or((&text, ""));
        (status.trim().parse().unwrap(), body.to_owned())
    }

    /// The JSON answer of a GET that must succeed.
    pub(crate) fn get(&self, service: &str, path: &str) -> serde_json::Value {
        let (status, body) = self.api(service, "GET", path, None);
        assert_eq!(status, 200, "GET {path}: {body}");
        serde_json::from_str(&body).unwrap()
    }

    /// The secrets whose name is `name`.
    pub(crate) fn secrets_named(&self, name: &str) -> Vec<serde_json::Value> {
        self.get("key-manager", &format!("/v1/secrets?name={name}&limit=100"))["secrets"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// The images whose name is `name`.
    pub(crate) fn images_named(&self, name: &str) -> Vec<serde_json::Value> {
        self.get("image", &format!("/v2/images?name={name}"))["images"].as_array().cloned().unwrap_or_default()
    }

    /// The consumers of secret `uuid`.
    pub(crate) fn consumers(&self, uuid: &str) -> Vec<serde_json::Value> {
        self.get("key-manager", &format!("/v1/secrets/{uuid}/consumers"))["consumers"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// What castellan (Nova's and Glance's key-manager client, `castellan_get.py`) reads from secret `uuid`: its
    /// class (`Passphrase`, `SymmetricKey`, `OpaqueData`) and its bytes.
    pub(crate) fn castellan(&self, uuid: &str) -> (String, Vec<u8>) {
        let scratch = Scratch::new();
        let out = scratch.path("secret");
        // Debian's python3: python3-castellan is a Debian package.
        let output = Command::new("/usr/bin/python3")
            .arg(script("castellan_get.py"))
            .arg(self.root().join("env"))
            .arg(uuid)
            .arg(&out)
            .output()
            .expect("run castellan_get.py");
        assert!(output.status.success(), "castellan: {}", String::from_utf8_lossy(&output.stderr));
        (String::from_utf8(output.stdout).unwrap().trim().to_owned(), std::fs::read(&out).unwrap())
    }

    /// Glance's image_size_cap in this harness (bytes).
    pub(crate) fn glance_size_cap(&self) -> u64 {
        let env = std::fs::read_to_string(self.root().join("env")).unwrap();
        env.lines().find_map(|l| l.strip_prefix("GLANCE_SIZE_CAP=")).unwrap().parse().unwrap()
    }

    /// Glance's user_storage_quota in this harness (bytes per owner; no project reaches it by uploading).
    pub(crate) fn glance_quota(&self) -> u64 {
        let env = std::fs::read_to_string(self.root().join("env")).unwrap();
        env.lines().find_map(|l| l.strip_prefix("GLANCE_QUOTA=")).unwrap().parse().unwrap()
    }

    /// Glance's sqlite database (for a test that must make an owner's stored bytes reach the quota).
    pub(crate) fn glance_db(&self) -> PathBuf {
        self.root().join("glance/glance.db")
    }

    /// The openstack client as user `quota` in project `quota` (cloud `quota` of clouds.yaml).
    pub(crate) fn quota_client(&self, args: &[&str]) -> Command {
        let mut cmd = self.client(args);
        cmd.env("OS_CLOUD", "quota");
        cmd
    }

    /// `cryptadm` logged in as user `quota` in project `quota`.
    pub(crate) fn quota_cryptadm(&self) -> assert_cmd::Command {
        let mut cmd = self.cryptadm();
        cmd.env("OS_CLOUD", "quota");
        cmd
    }

    /// A valid admin token (for OS_TOKEN tests).
    pub(crate) fn token(&self) -> String {
        self.api("keystone", "GET", "token", None).1.trim().to_owned()
    }
}

/// A name no other test uses.
pub(crate) fn unique(prefix: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!("{prefix}-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed))
}

/// `fault_proxy.py` in front of one service (`target`), injecting `mode`'s fault; killed on drop.
pub(crate) struct FaultProxy {
    child: std::process::Child,
    pub(crate) url: String,
    log: PathBuf,
    _dir: Scratch,
}

impl FaultProxy {
    pub(crate) fn start(target: &str, mode: &str) -> Self {
        let dir = Scratch::new();
        let port_file = dir.path("port");
        let log = dir.path("proxy.log");
        let child = Command::new("python3")
            .arg(script("fault_proxy.py"))
            .args([target, mode])
            .arg(&port_file)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        let port = loop {
            if let Ok(port) = std::fs::read_to_string(&port_file) {
                break port;
            }
            assert!(Instant::now() < deadline, "the fault proxy did not start");
            std::thread::sleep(Duration::from_millis(50));
        };
        Self { child, url: format!("http://127.0.0.1:{}", port.trim()), log, _dir: dir }
    }

    /// The requests it saw, one `METHOD PATH` a line.
    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
