//! A local AWS API for the tests: ONE `moto_server` per test binary on 127.0.0.1 and a random port (PyPI's
//! `moto[server]`, in the venv `.ci/deps/aws.sh` makes), with request authentication on after the first six
//! requests (`INITIAL_NO_AUTH_ACTION_COUNT`), which `tests/interop/aws/aws_oracle.py setup` uses to make the IAM
//! users (`admin`: everything; `sealer`: kms:Encrypt and GenerateDataKey only), the role `machine` (kms:Decrypt
//! only, for web identity, and the first-boot guest's instance profile) and the KMS keys. From then on a wrong
//! signature or an unknown key is refused.
//!
//! Tests that change moto's authentication state (web identity: STS AssumeRoleWithWebIdentity is unsigned on AWS,
//! but moto wants a signature, so `aws_oracle.py anonymous N` lets N unsigned requests through) hold
//! [`Moto::lock_exclusive`]; every other AWS test holds [`Moto::lock`], shared: they run side by side, but never
//! while an unsigned request could be let through (a refused signature would then pass).
#![allow(dead_code)]

use crate::support::{Scratch, ServedOracle};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{LazyLock, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

/// The region of the tests.
pub const REGION: &str = "eu-west-1";

pub struct Moto {
    /// `http://127.0.0.1:PORT`.
    pub endpoint: String,
    pub admin: (String, String),
    pub sealer: (String, String),
    /// `arn:aws:iam::…:role/machine`.
    pub machine_role: String,
    /// The key ARN (alias `alias/capi`).
    pub key: String,
    pub other_key: String,
    pub dir: Scratch,
    child: Child,
    lock: RwLock<()>,
    /// `aws_oracle.py --serve` as `admin` ([`Moto::oracle`]).
    oracle: ServedOracle,
}

/// The `moto_server` of `.ci/deps/aws.sh`'s venv, else one on PATH.
pub fn moto_binary() -> PathBuf {
    for candidate in ["/opt/moto-venv/bin/moto_server"] {
        if Path::new(candidate).is_file() {
            return candidate.into();
        }
    }
    crate::support::require_tool("moto_server", "bash .ci/deps/aws.sh");
    PathBuf::from("moto_server")
}

pub fn oracle_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/aws/aws_oracle.py")
}

/// The one server of this test binary.
pub fn moto() -> &'static Moto {
    static MOTO: LazyLock<Moto> = LazyLock::new(Moto::start);
    &MOTO
}

impl Moto {
    fn start() -> Self {
        let dir = Scratch::new();
        let port = crate::support::free_port();
        // The shared watchdog kills the server (and its children) when this test process is gone.
        let child = crate::support::spawn_watched_env(
            &moto_binary(),
            &["-H", "127.0.0.1", "-p", &port.to_string()],
            &[("INITIAL_NO_AUTH_ACTION_COUNT", "6")],
            &dir.path("moto.log"),
        );
        let endpoint = format!("http://127.0.0.1:{port}");
        crate::support::wait_for_port(&format!("127.0.0.1:{port}"), Duration::from_secs(60), "moto_server", || {
            std::fs::read_to_string(dir.path("moto.log")).unwrap_or_default()
        });
        let output = Command::new("python3")
            .arg(oracle_script())
            .arg("setup")
            .env("AWS_ENDPOINT_URL", &endpoint)
            .env("AWS_DEFAULT_REGION", REGION)
            .env_remove("AWS_PROFILE")
            .output()
            .unwrap();
        assert!(output.status.success(), "aws_oracle.py setup: {}", String::from_utf8_lossy(&output.stderr));
        let setup: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let keys = |user: &str| {
            (setup[user]["id"].as_str().unwrap().to_owned(), setup[user]["secret"].as_str().unwrap().to_owned())
        };
        let admin = keys("admin");
        let oracle = {
            let (endpoint, admin) = (endpoint.clone(), admin.clone());
            ServedOracle::new(move || {
                let mut command = python_as(&endpoint, &admin, &oracle_script());
                command.arg("--serve");
                command
            })
        };
        Moto {
            oracle,
            admin,
            sealer: keys("sealer"),
            machine_role: setup["machine_role"].as_str().unwrap().to_owned(),
            key: setup["key"].as_str().unwrap().to_owned(),
            other_key: setup["other_key"].as_str().unwrap().to_owned(),
            endpoint,
            dir,
            child,
            lock: RwLock::new(()),
        }
    }

    /// Held by every AWS test that leaves moto's authentication state as it is (see the module's note): shared.
    pub fn lock(&self) -> RwLockReadGuard<'_, ()> {
        self.lock.read().unwrap_or_else(|p| p.into_inner())
    }

    /// Held by a test that lets unsigned requests through (`aws_oracle.py anonymous`): alone.
    pub fn lock_exclusive(&self) -> RwLockWriteGuard<'_, ()> {
        self.lock.write().unwrap_or_else(|p| p.into_inner())
    }

    /// The environment of a run with no AWS setting at all (the machine's own, if any, removed), the endpoint and
    /// the region, and no instance metadata service.
    pub fn bare_env(&self, command: &mut assert_cmd::Command) {
        for name in AWS_VARIABLES {
            command.env_remove(name);
        }
        command.envs(self.bare_variables());
    }

    /// What [`Moto::bare_env`] sets (after removing every [`AWS_VARIABLES`]).
    fn bare_variables(&self) -> [(&'static str, std::ffi::OsString); 4] {
        [
            ("AWS_ENDPOINT_URL", self.endpoint.clone().into()),
            ("AWS_REGION", REGION.into()),
            ("AWS_EC2_METADATA_DISABLED", "true".into()),
            ("HOME", self.dir.path("no-home").into()),
        ]
    }

    /// [`Moto::bare_env`] with `keys` in the environment.
    pub fn env_with(&self, command: &mut assert_cmd::Command, keys: &(String, String)) {
        self.bare_env(command);
        command.env("AWS_ACCESS_KEY_ID", &keys.0).env("AWS_SECRET_ACCESS_KEY", &keys.1);
    }

    /// [`Moto::env_with`] for a `std::process::Command` (a run the test spawns and signals).
    pub fn process_env_with(&self, command: &mut Command, keys: &(String, String)) {
        for name in AWS_VARIABLES {
            command.env_remove(name);
        }
        command.envs(self.bare_variables());
        command.env("AWS_ACCESS_KEY_ID", &keys.0).env("AWS_SECRET_ACCESS_KEY", &keys.1);
    }

    /// boto3's Decrypt of a stored value (a CiphertextBlob in standard base64, white space around it ignored) under
    /// the test key: the plaintext bytes.
    pub fn decrypt(&self, scratch: &Scratch, stored: &[u8]) -> Vec<u8> {
        let out = scratch.path("boto3-decrypted");
        self.oracle(&["decrypt", String::from_utf8_lossy(stored).trim(), out.to_str().unwrap(), &self.key]);
        std::fs::read(out).unwrap()
    }

    /// boto3's Encrypt of `plaintext` under the test key: the CiphertextBlob in standard base64, as the AWS CLI
    /// prints it (with its newline).
    pub fn encrypt(&self, scratch: &Scratch, plaintext: &[u8]) -> String {
        let file = scratch.write("boto3-plaintext", plaintext);
        self.oracle(&["encrypt", &self.key, file.to_str().unwrap()])
    }

    /// Runs the boto3 oracle as `admin`; panics on failure; returns stdout. One interpreter answers every call
    /// ([`ServedOracle`]); [`Moto::oracle_command`] is a run of its own, for a test that looks at a failure.
    pub fn oracle(&self, args: &[&str]) -> String {
        let answer = self.oracle.ask(args);
        assert!(answer.ok, "aws_oracle.py {args:?}: {}", answer.err);
        answer.out
    }

    pub fn oracle_command(&self, args: &[&str]) -> Command {
        let mut command = self.python_as_admin(&oracle_script());
        command.args(args);
        command
    }

    /// `python3 SCRIPT` with boto3's settings for this server and the `admin` user's keys (nothing else of the
    /// machine's AWS settings).
    pub fn python_as_admin(&self, script: &Path) -> Command {
        python_as(&self.endpoint, &self.admin, script)
    }
}

/// `python3 SCRIPT` with boto3's settings for the server at `endpoint` and the keys `user` (nothing else of the
/// machine's AWS settings).
fn python_as(endpoint: &str, user: &(String, String), script: &Path) -> Command {
    let mut command = Command::new("python3");
    command
        .arg(script)
        .env("AWS_ENDPOINT_URL", endpoint)
        .env("AWS_DEFAULT_REGION", REGION)
        .env("AWS_ACCESS_KEY_ID", &user.0)
        .env("AWS_SECRET_ACCESS_KEY", &user.1)
        .env_remove("AWS_SESSION_TOKEN")
        .env_remove("AWS_PROFILE");
    command
}

/// Every variable of the AWS credential chain, removed from test runs so the machine's own never leak in.
pub const AWS_VARIABLES: &[&str] = &[
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_CONFIG_FILE",
    "AWS_ROLE_ARN",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_ROLE_SESSION_NAME",
    "AWS_EC2_METADATA_SERVICE_ENDPOINT",
    "AWS_EC2_METADATA_DISABLED",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_KMS",
    "AWS_ENDPOINT_URL_S3",
    "AWS_ENDPOINT_URL_SECRETS_MANAGER",
    "AWS_ENDPOINT_URL_SSM",
    "AWS_ENDPOINT_URL_STS",
    "AWS_CA_BUNDLE",
    "AWS_USE_FIPS_ENDPOINT",
    "AWS_USE_DUALSTACK_ENDPOINT",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
];

/// A running `tests/interop/aws/imds_standin.py` (IMDSv2 only) on 127.0.0.1, killed when dropped.
pub struct ImdsStandIn {
    child: Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// One line per request: `METHOD PATH token-issued|token-ok|no-token|bad-put`.
    pub log: PathBuf,
}

impl ImdsStandIn {
    /// Serves the instance profile role `cryptadm-node` with the keys of `credentials` (`{"id", "secret", "token"}`,
    /// as `aws_oracle.py assume` prints them), expiring `life` seconds after each request; logs to `log`.
    pub fn start(credentials: &Path, life: u32, log: PathBuf) -> Self {
        use std::io::BufRead as _;
        let mut child = Command::new("python3")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/aws/imds_standin.py"))
            .arg(credentials)
            .arg(life.to_string())
            .arg(&log)
            .stdout(Stdio::piped())
            .spawn()
            .expect("start imds_standin.py");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let port = line.trim().parse().unwrap_or_else(|_| panic!("imds_standin.py printed no port: {line:?}"));
        Self { child, port, log }
    }

    /// `http://127.0.0.1:PORT`, for `AWS_EC2_METADATA_SERVICE_ENDPOINT`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The requests it has logged so far.
    pub fn requests(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for ImdsStandIn {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
