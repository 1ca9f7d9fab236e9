//! A real KMIP server for the tests: ONE PyKMIP server (`pykmip-server` from `.ci/deps/kmip.sh`'s venv) per test
//! binary on 127.0.0.1 and a random port, TLS 1.2 with client-certificate authentication (a CA, server and client
//! certificates made by openssl: ECDSA P-256, because the only suites PyKMIP's TLS 1.2 profile shares with rustls
//! are ECDHE-ECDSA with AES-GCM), its SQLite store in a scratch directory; and PyKMIP's client as the oracle
//! ([`Kmip::oracle`], tests/cli/kmip_oracle.py).
//!
//! Identities: `client` (CN cryptadm) is what cryptadm uses and what the oracle uses to read its objects (PyKMIP's
//! default policy lets only an object's owner use it); `other` (CN intruder, same CA) is a valid client that owns
//! nothing; `rogue` is a client certificate from a CA the server does not trust.
//!
//! The server dies with the test process (the watchdog of [`crate::support_openbao`]'s kind).
#![allow(dead_code)]

use crate::support::{Scratch, ServedOracle};
pub use crate::support_openbao::spawn_watched;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::LazyLock;
use std::time::Duration;

/// PyKMIP's virtual environment.
pub fn venv() -> PathBuf {
    let venv =
        std::env::var_os("CRYPTADM_PYKMIP_VENV").map_or_else(|| PathBuf::from("/opt/pykmip-venv"), PathBuf::from);
    assert!(
        venv.join("bin/pykmip-server").is_file(),
        "PyKMIP is not installed in {}; install it with `bash .ci/deps/kmip.sh` (bash .ci/run does)",
        venv.display()
    );
    venv
}

/// A certificate and its key.
pub struct Identity {
    pub cert: PathBuf,
    pub key: PathBuf,
}

pub struct Kmip {
    /// `127.0.0.1:PORT`.
    pub server: String,
    pub port: u16,
    pub ca: PathBuf,
    pub client: Identity,
    pub other: Identity,
    pub rogue: Identity,
    /// The server's own certificate (for the junk server of tests/cli/kmip.rs).
    pub server_identity: Identity,
    pub dir: Scratch,
    child: Child,
}

fn openssl(args: &[&str]) {
    let output = Command::new("openssl").args(args).output().expect("run openssl");
    assert!(output.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&output.stderr));
}

pub fn s(path: &Path) -> String {
    path.display().to_string()
}

/// A CA (self-signed) in `dir`: `NAME.pem`, `NAME.key`.
fn make_ca(dir: &Scratch, name: &str) -> (PathBuf, PathBuf) {
    let (cert, key) = (dir.path(&format!("{name}.pem")), dir.path(&format!("{name}.key")));
    openssl(&[
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-days",
        "2",
        "-subj",
        &format!("/CN={name}"),
        "-keyout",
        &s(&key),
        "-out",
        &s(&cert),
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
    ]);
    (cert, key)
}

/// A leaf certificate `NAME.pem`/`NAME.key` for CN `cn`, signed by `ca`.
fn make_leaf(dir: &Scratch, ca: &(PathBuf, PathBuf), name: &str, cn: &str) -> Identity {
    let (cert, key, csr, ext) = (
        dir.path(&format!("{name}.pem")),
        dir.path(&format!("{name}.key")),
        dir.path(&format!("{name}.csr")),
        dir.write(
            &format!("{name}.ext"),
            "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\nbasicConstraints=CA:FALSE\n",
        ),
    );
    openssl(&[
        "req",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-subj",
        &format!("/CN={cn}"),
        "-keyout",
        &s(&key),
        "-out",
        &s(&csr),
    ]);
    openssl(&[
        "x509",
        "-req",
        "-in",
        &s(&csr),
        "-CA",
        &s(&ca.0),
        "-CAkey",
        &s(&ca.1),
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        &s(&ext),
        "-out",
        &s(&cert),
    ]);
    Identity { cert, key }
}

/// The one PyKMIP server of this test run.
pub fn server() -> &'static Kmip {
    static SERVER: LazyLock<Kmip> = LazyLock::new(start);
    &SERVER
}

fn start() -> Kmip {
    let venv = venv();
    let dir = Scratch::new();
    let ca = make_ca(&dir, "ca");
    let server_identity = make_leaf(&dir, &ca, "server", "127.0.0.1");
    let client = make_leaf(&dir, &ca, "client", "cryptadm");
    let other = make_leaf(&dir, &ca, "other", "intruder");
    let rogue_ca = make_ca(&dir, "rogue-ca");
    let rogue = make_leaf(&dir, &rogue_ca, "rogue", "cryptadm");
    for identity in [&client, &other, &rogue] {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&identity.key, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    std::fs::create_dir_all(dir.path("policies")).unwrap();
    let config = dir.write(
        "server.conf",
        format!(
            "[server]\nhostname=127.0.0.1\nport={port}\ncertificate_path={}\nkey_path={}\nca_path={}\n\
             auth_suite=TLS1.2\npolicy_path={}\nenable_tls_client_auth=True\ndatabase_path={}\n",
            s(&server_identity.cert),
            s(&server_identity.key),
            s(&ca.0),
            s(&dir.path("policies")),
            s(&dir.path("kmip.db")),
        ),
    );
    let log = dir.path("server.log");
    let child =
        spawn_watched(&venv.join("bin/pykmip-server"), &["-f", &s(&config), "-l", &s(&dir.path("pykmip.log"))], &log);
    crate::support::wait_for_port(&format!("127.0.0.1:{port}"), Duration::from_secs(60), "pykmip-server", || {
        std::fs::read_to_string(&log).unwrap_or_default()
    });
    Kmip { server: format!("127.0.0.1:{port}"), port, ca: ca.0, client, other, rogue, server_identity, dir, child }
}

impl Kmip {
    /// Runs PyKMIP's client (`tests/cli/kmip_oracle.py`) as `identity`; panics on failure; returns stdout
    /// trimmed. Each request is a new PyKMIP client and connection, in one interpreter for the test binary.
    pub fn oracle_as(&self, identity: &Identity, args: &[&str]) -> String {
        static ORACLE: LazyLock<ServedOracle> = LazyLock::new(|| {
            ServedOracle::new(|| {
                let mut command = Command::new(venv().join("bin/python"));
                command.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/kmip_oracle.py")).arg("--serve");
                command
            })
        });
        let (port, cert, key, ca) = (self.port.to_string(), s(&identity.cert), s(&identity.key), s(&self.ca));
        let mut request = vec!["127.0.0.1", &port, &cert, &key, &ca];
        request.extend_from_slice(args);
        let answer = ORACLE.ask(&request);
        assert!(answer.ok, "PyKMIP client {args:?} failed: {}", answer.err);
        answer.out.trim().to_owned()
    }

    /// PyKMIP's client as cryptadm's identity.
    pub fn oracle(&self, args: &[&str]) -> String {
        self.oracle_as(&self.client, args)
    }

    /// The library client's settings for `identity` (None: no client certificate).
    pub fn settings(&self, identity: Option<&Identity>) -> cryptadm::kms::kmip::KmipSettings {
        cryptadm::kms::kmip::KmipSettings {
            server: self.server.clone(),
            ca: self.ca.clone(),
            client_identity: identity.map(|i| (i.cert.clone(), i.key.clone())),
            credential: None,
            timeout: Duration::from_secs(20),
        }
    }

    /// The `--kmip-*` flags for cryptadm as `client`.
    pub fn flags(&self) -> Vec<String> {
        vec![
            "--kmip-server".into(),
            self.server.clone(),
            "--kmip-cacert".into(),
            s(&self.ca),
            "--kmip-client-cert".into(),
            s(&self.client.cert),
            "--kmip-client-key".into(),
            s(&self.client.key),
        ]
    }
}

impl Kmip {
    /// Seeds a `kmip://` key store the way an operator's own KMIP tool would (the tests' one way to seed one):
    /// `value` registered by PyKMIP as the Secret Data object `name` (`PREFIX/<volume-id>/current`). The oracle is
    /// one process, waited for: nothing it starts outlives it. Returns the object's unique identifier.
    pub fn seed(&self, name: &str, value: &[u8]) -> String {
        self.oracle(&["register-password", name, &hex::encode(value)])
    }
}

/// `plaintext` as cryptadm's `kmip:v1:` value (AES-256-GCM, AAD `cryptadm volume key v1`, base64url of
/// IV‖tag‖ciphertext), made by Python's cryptography with `key`: the independent writer of wrapped seeds.
pub fn python_wrap(key: &[u8], plaintext: &[u8]) -> String {
    let output = Command::new("python3")
        .args([
            "-c",
            "import sys,os,base64; from cryptography.hazmat.primitives.ciphers.aead import AESGCM as G; \
             k=bytes.fromhex(sys.argv[1]); iv=os.urandom(12); ct=G(k).encrypt(iv, bytes.fromhex(sys.argv[2]), \
             b'cryptadm volume key v1'); \
             print('kmip:v1:'+base64.urlsafe_b64encode(iv+ct[-16:]+ct[:-16]).decode().rstrip('='))",
            &hex::encode(key),
            &hex::encode(plaintext),
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

/// A sealed value (unpadded base64url of nonce ‖ tag ‖ ciphertext, the body of `kmip:v1:` and `kmip:v2:`
/// values) opened by Python's cryptography with `key` and additional data `aad`; `None` when AES-GCM refuses it.
pub fn python_open_sealed(key: &[u8], sealed: &str, aad: &[u8]) -> Option<Vec<u8>> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(sealed.trim()).unwrap();
    let output = Command::new("python3")
        .args([
            "-c",
            "import sys; from cryptography.hazmat.primitives.ciphers.aead import AESGCM as G; \
             k,iv,t,ct,aad=[bytes.fromhex(a) for a in sys.argv[1:6]]; \
             print(G(k).decrypt(iv, ct+t, aad).hex())",
            &hex::encode(key),
            &hex::encode(&bytes[..12]),
            &hex::encode(&bytes[12..28]),
            &hex::encode(&bytes[28..]),
            &hex::encode(aad),
        ])
        .output()
        .unwrap();
    output.status.success().then(|| hex::decode(String::from_utf8(output.stdout).unwrap().trim()).unwrap())
}
