//! Shared helpers for the CLI tests.
#![allow(dead_code)]

use assert_cmd::Command;
use std::path::{Path, PathBuf};

/// The passphrase of the machineadm known-answer vector (docs/formats.md#machineadm-encryptedconfig).
pub const VECTOR_PASSPHRASE: &str = "correct horse battery staple";
/// The plaintext of the known-answer vector.
pub const VECTOR_PLAINTEXT: &str = "apiVersion: v1\nkind: ConfigMap\n";
/// The sealed document of the known-answer vector, for a passphrase at file:///etc/machineadm/passphrase.
pub const VECTOR_DOCUMENT: &str = "apiVersion: machineadm.cluster.x-k8s.io/v1alpha1
kind: EncryptedConfig
spec:
  provider: file
  passphraseURI: file:///etc/machineadm/passphrase
  ciphertext: P25Mwy3yorzjCaQwrR1xg0dYOcynBv53r8TYe0n36xUzCGEv4xpSfUSqbIk/yTw=
  salt: AAECAwQFBgcICQoLDA0ODw==
  iv: oKGio6Slpqeoqaqr
  cipherAlgorithm: aes-256-gcm
  digestAlgorithm: sha-512
  iterations: \"50000\"
  keyDerivationAlgorithm: pbkdf2
";

/// A `cryptadm` command with a clean environment: no passphrase variables, no colour, a PATH without
/// provider plugins unless a test adds them.
pub fn cryptadm() -> Command {
    crate::support_guest::warm_up();
    Command::from(cryptadm_process())
}

/// [`cryptadm`] as a `std::process::Command`, for a run the test spawns and signals.
pub fn cryptadm_process() -> std::process::Command {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("cryptadm"));
    cmd.env_remove("CRYPTADM_PASSPHRASE").env_remove("CRYPTADM_PASSPHRASE_FILE").env("NO_COLOR", "1");
    cmd
}

/// A scratch directory with helpers to write files into it.
pub struct Scratch {
    pub dir: tempfile::TempDir,
}

impl Scratch {
    pub fn new() -> Self {
        Self { dir: tempfile::tempdir().expect("temp dir") }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Writes `contents` to `name` and returns its path.
    pub fn write(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path(name);
        std::fs::write(&path, contents).expect("write fixture");
        path
    }

    /// Writes an executable script (for plugin tests) and returns its path.
    pub fn script(&self, name: &str, body: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = self.write(name, body);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        path
    }

    /// The names of the entries in the scratch directory, sorted (to prove nothing stray was written).
    pub fn entries(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.dir.path())
            .expect("read dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

/// Seals `plaintext` for the built-in file provider with the passphrase in `passphrase_file`.
pub fn seal_file_provider(passphrase_file: &Path, plaintext: &Path) -> Vec<u8> {
    let uri = format!("file://{}", passphrase_file.display());
    let output = cryptadm()
        .args(["bootstrap", "seal", "--provider", "file", "--passphrase-uri", &uri, "--passphrase-file"])
        .arg(passphrase_file)
        .arg("--in")
        .arg(plaintext)
        .output()
        .expect("run cryptadm");
    assert!(output.status.success(), "seal failed: {}", String::from_utf8_lossy(&output.stderr));
    output.stdout
}

/// Fails with an instruction when a tool the interop tests need is missing. These tests never skip: a
/// skipped interop test is a claim without proof. `bash .ci/run` installs everything.
pub fn require_tool(program: &str, install: &str) {
    let found = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|dir| dir.join(program).is_file()))
        .unwrap_or(false);
    assert!(found, "`{program}` is not installed; install it with `{install}` (bash .ci/run does)");
}

/// A free TCP port on 127.0.0.1 (bound and let go: the server started next takes it).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The watchdog every fixture server runs under: it starts `program args…` in a process group of its own
/// (`setsid`), and kills that whole group (the program and every process it started: PyKMIP's workers outlive a
/// SIGTERM to their parent, socat forks one child per connection) when it is sent SIGTERM, when the program ends,
/// or when the test process (`$w`) is gone, a failed or killed test binary included. It looks once a second: at
/// five times a second, the `sleep`s of the ten or so watchdogs alive at once were 55 process starts a second for
/// the whole suite. `sleep 1 & wait` so that a SIGTERM ends the wait at once and the trap runs without delay.
const WATCHDOG: &str = r#"p=$1; w=$2; shift 2; setsid "$p" "$@" & r=$!; trap 'kill -9 -$r 2>/dev/null; exit 0' TERM; while kill -0 "$w" 2>/dev/null && kill -0 $r 2>/dev/null; do sleep 1 & wait $!; done; kill -9 -$r 2>/dev/null"#;

/// Starts `program args…` with `envs` under [`WATCHDOG`], its output appended to `log`. Stop it (children
/// included) with [`stop_watched`].
pub fn spawn_watched_env(program: &Path, args: &[&str], envs: &[(&str, &str)], log: &Path) -> std::process::Child {
    let log = std::fs::OpenOptions::new().create(true).append(true).open(log).unwrap();
    std::process::Command::new("sh")
        .arg("-c")
        .arg(WATCHDOG)
        .arg("watchdog")
        .arg(program)
        .arg(std::process::id().to_string())
        .args(args)
        .envs(envs.iter().copied())
        .env_remove("VAULT_TOKEN")
        .env_remove("BAO_TOKEN")
        .stdin(std::process::Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap()
}

/// A Python oracle kept running for a whole test binary (`SCRIPT --serve`): importing an SDK (PyKMIP, boto3) costs
/// about a CPU second, most of a one-shot run, and the suite asks its oracles hundreds of times. It reads one request
/// per line on stdin, a JSON list of a run's arguments, and answers each with one JSON line `{"ok", "out", "err"}`.
/// Requests go one at a time; a process that died (a test panicked mid-request) is started again, and one that
/// does not answer within [`ORACLE_ANSWER_WITHIN`] is killed and the request fails, naming it.
pub struct ServedOracle {
    start: Box<dyn Fn() -> std::process::Command + Send + Sync>,
    process: std::sync::Mutex<Option<(std::process::Child, std::sync::mpsc::Receiver<String>)>>,
    answer_within: std::time::Duration,
}

/// How long a served oracle may take to answer one request: every request is one client run against a local
/// server (the slowest, an OpenStack image upload, takes seconds).
pub const ORACLE_ANSWER_WITHIN: std::time::Duration = std::time::Duration::from_secs(300);

/// A [`ServedOracle`]'s answer: whether the run succeeded, its stdout, and why not.
pub struct OracleAnswer {
    pub ok: bool,
    pub out: String,
    pub err: String,
}

impl ServedOracle {
    /// `command` runs the script with `--serve` and whatever environment every request shares.
    pub fn new(command: impl Fn() -> std::process::Command + Send + Sync + 'static) -> Self {
        ServedOracle {
            start: Box::new(command),
            process: std::sync::Mutex::new(None),
            answer_within: ORACLE_ANSWER_WITHIN,
        }
    }

    /// Starts the process, with a thread that hands each line it answers to the returned receiver (so that a
    /// request can wait for its answer with a deadline).
    fn spawn(&self) -> (std::process::Child, std::sync::mpsc::Receiver<String>) {
        use std::io::BufRead as _;
        let mut child = (self.start)()
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            // Its logging; a failed request's cause is in its answer.
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start the oracle");
        let stdout = child.stdout.take().unwrap();
        let (send, answers) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        (child, answers)
    }

    pub fn ask(&self, request: &[&str]) -> OracleAnswer {
        use std::io::Write as _;
        use std::sync::mpsc::RecvTimeoutError;
        let mut process = self.process.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        // Taken out while in use: a panic below leaves None, and the next request starts a new process.
        let running = process
            .take()
            .and_then(|(mut child, answers)| matches!(child.try_wait(), Ok(None)).then_some((child, answers)));
        let (mut child, answers) = running.unwrap_or_else(|| self.spawn());
        let line = serde_json::to_string(request).unwrap() + "\n";
        child.stdin.as_mut().unwrap().write_all(line.as_bytes()).expect("send the oracle a request");
        let answer = match answers.recv_timeout(self.answer_within) {
            Ok(answer) => answer,
            Err(RecvTimeoutError::Disconnected) => {
                let _ = child.wait();
                panic!("the oracle ended without answering {request:?}");
            }
            Err(RecvTimeoutError::Timeout) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the oracle did not answer {request:?} within {:?} (killed)", self.answer_within);
            }
        };
        let answer: serde_json::Value = serde_json::from_str(&answer).expect("the oracle's answer is JSON");
        *process = Some((child, answers));
        let text = |key: &str| answer[key].as_str().unwrap_or_default().to_owned();
        OracleAnswer { ok: answer["ok"] == true, out: text("out"), err: text("err") }
    }
}

/// A [`ServedOracle`] of `tests/interop/served_oracle.py` whose run is the Python expression `body` (of `argv`),
/// under python3.
fn inline_oracle(body: &'static str) -> ServedOracle {
    ServedOracle::new(move || {
        let mut cmd = std::process::Command::new("python3");
        cmd.arg("-c").arg(format!(
            "import os, subprocess, sys\nsys.path.insert(0, {:?})\nimport served_oracle\nserved_oracle.serve(lambda argv: {body})",
            concat!(env!("CARGO_MANIFEST_DIR"), "/tests/interop")
        ));
        cmd
    })
}

/// The panic message of `f`, which must panic.
fn panic_message(f: impl FnOnce()) -> String {
    let payload = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).expect_err("it panics");
    payload.downcast_ref::<String>().cloned().or(payload.downcast_ref::<&str>().map(|s| (*s).to_owned())).unwrap()
}

/// The served loop answers each request on its private descriptors: a run's child that reads its standard input
/// gets nothing (not the next request), and what it writes to its standard output is not taken for an answer.
#[test]
fn served_oracle_requests_and_answers_are_out_of_a_runs_reach() {
    let oracle = inline_oracle(
        "(subprocess.run(['sh', '-c', 'cat; echo from-the-child']), print('got', len(sys.stdin.read()), *argv))[-1]",
    );
    for word in ["first", "second", "third"] {
        let answer = oracle.ask(&[word]);
        assert!(answer.ok, "{}", answer.err);
        assert_eq!(answer.out, format!("got 0 {word}\n"), "the child read nothing and wrote nothing into the answer");
    }
}

/// An oracle that ends without answering fails the request, naming it, and the next request starts a new one;
/// one that does not answer in time is killed and the request fails, naming it.
#[test]
fn served_oracle_that_dies_or_hangs_fails_the_request() {
    let dying = inline_oracle("os._exit(3)");
    for _ in 0..2 {
        let message = panic_message(|| {
            dying.ask(&["doomed"]);
        });
        assert_eq!(message, r#"the oracle ended without answering ["doomed"]"#);
    }
    let mut hanging = inline_oracle("__import__('time').sleep(60)");
    hanging.answer_within = std::time::Duration::from_secs(2);
    let started = std::time::Instant::now();
    let message = panic_message(|| {
        hanging.ask(&["slow"]);
    });
    assert_eq!(message, r#"the oracle did not answer ["slow"] within 2s (killed)"#);
    assert!(started.elapsed() < std::time::Duration::from_secs(30), "{:?}", started.elapsed());
}

/// [`spawn_watched_env`] without extra environment.
pub fn spawn_watched(program: &Path, args: &[&str], log: &Path) -> std::process::Child {
    spawn_watched_env(program, args, &[], log)
}

/// Stops what [`spawn_watched`] started: SIGTERM to the watchdog, which kills the server's process group.
pub fn stop_watched(child: &mut std::process::Child) {
    let _ = std::process::Command::new("kill").arg(child.id().to_string()).status();
    let _ = child.wait();
}

/// Waits until something accepts connections on `host` (`HOST:PORT`); after `within`, panics saying `what` and
/// what `log` returns (the server's log).
pub fn wait_for_port(host: &str, within: std::time::Duration, what: &str, log: impl Fn() -> String) {
    let deadline = std::time::Instant::now() + within;
    while std::net::TcpStream::connect(host).is_err() {
        assert!(std::time::Instant::now() < deadline, "{what} did not listen on {host}: {}", log());
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
