//! Real Tang servers for the tests: Debian's `tangd` behind `socat` on 127.0.0.1 and random ports, keys from the
//! package's `tangd-keygen` (`.ci/deps/tang.sh` installs tang, clevis, clevis-luks, jose and socat).
//!
//! ONE trio per test binary, started on first use. Tests that only use the servers hold [`servers()`] (a read
//! lock); tests that stop, restart or rotate them hold [`servers_mut()`] (the write lock) and leave every server
//! running again. The servers die with the test process (the OpenBao fixture's watchdog).
#![allow(dead_code)]

use crate::support::{Scratch, require_tool};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{LazyLock, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

pub const TANGD: &str = "/usr/libexec/tangd";
pub const TANGD_KEYGEN: &str = "/usr/libexec/tangd-keygen";

/// One Tang server.
pub struct Tang {
    pub port: u16,
    /// The key database (`tangd-keygen DB`).
    pub db: PathBuf,
    log: PathBuf,
    child: Mutex<Option<Child>>,
}

/// The trio.
pub struct Trio {
    pub tangs: [Tang; 3],
    _dir: Scratch,
}

static TRIO: LazyLock<RwLock<Trio>> = LazyLock::new(|| RwLock::new(Trio::start()));

/// The running servers, shared.
pub fn servers() -> RwLockReadGuard<'static, Trio> {
    TRIO.read().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The servers, alone (to stop or rotate them); every server is running again when the guard drops.
pub fn servers_mut() -> Exclusive {
    Exclusive(TRIO.write().unwrap_or_else(|poisoned| poisoned.into_inner()))
}

/// The write lock; restarts stopped servers on drop, so a failing test leaves the trio usable.
pub struct Exclusive(RwLockWriteGuard<'static, Trio>);

impl std::ops::Deref for Exclusive {
    type Target = Trio;
    fn deref(&self) -> &Trio {
        &self.0
    }
}

impl Drop for Exclusive {
    fn drop(&mut self) {
        for tang in &self.0.tangs {
            if tang.child.lock().unwrap().is_none() {
                tang.start();
            }
        }
    }
}

pub fn require_tang() {
    for tool in [TANGD, TANGD_KEYGEN] {
        assert!(Path::new(tool).is_file(), "`{tool}` is not installed; apt-get install tang (bash .ci/run does)");
    }
    require_tool("socat", "apt-get install socat");
    require_tool("clevis", "apt-get install clevis clevis-luks");
    require_tool("jose", "apt-get install jose");
}

impl Trio {
    fn start() -> Self {
        require_tang();
        let dir = Scratch::new();
        let tangs = [0, 1, 2].map(|i| {
            let db = dir.path(&format!("db{i}"));
            std::fs::create_dir(&db).unwrap();
            run(Command::new(TANGD_KEYGEN).arg(&db));
            let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            let tang = Tang { port, db, log: dir.path(&format!("tang{i}.log")), child: Mutex::new(None) };
            tang.start();
            tang
        });
        Self { tangs, _dir: dir }
    }

    /// `{"t":T,"pins":{"tang":[{"url":…,"thp":…},…]}}` over all three servers.
    pub fn sss_config(&self, threshold: usize) -> String {
        let pins: Vec<String> = self.tangs.iter().map(Tang::config).collect();
        format!(r#"{{"t":{threshold},"pins":{{"tang":[{}]}}}}"#, pins.join(","))
    }
}

impl Tang {
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The S256 thumbprint of the server's (advertised) signing key, as `jose jwk thp` prints it.
    pub fn thp(&self) -> String {
        for entry in std::fs::read_dir(&self.db).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let jwk = std::fs::read_to_string(&path).unwrap();
            if jwk.contains("\"verify\"") {
                return run(Command::new("jose").args(["jwk", "thp", "-i"]).arg(&path)).trim().to_owned();
            }
        }
        panic!("no signing key in {}", self.db.display())
    }

    /// `{"url":…,"thp":…}`.
    pub fn config(&self) -> String {
        format!(r#"{{"url":"{}","thp":"{}"}}"#, self.url(), self.thp())
    }

    fn start(&self) {
        let listen = format!("TCP-LISTEN:{},bind=127.0.0.1,fork,reuseaddr", self.port);
        let exec = format!("EXEC:{TANGD} {}", self.db.display());
        let socat = which("socat");
        let child = crate::support_openbao::spawn_watched(&socat, &[&listen, &exec], &self.log);
        *self.child.lock().unwrap() = Some(child);
        let host = format!("127.0.0.1:{}", self.port);
        crate::support::wait_for_port(&host, Duration::from_secs(20), "tang", || {
            std::fs::read_to_string(&self.log).unwrap_or_default()
        });
    }

    /// Stops the server (its port then refuses connections).
    pub fn stop(&self) {
        if let Some(mut child) = self.child.lock().unwrap().take() {
            // SIGTERM to the watchdog, which kills socat and its children.
            crate::support::stop_watched(&mut child);
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
            assert!(Instant::now() < deadline, "tang on port {} did not stop", self.port);
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn restart(&self) {
        self.start();
    }

    /// Rotates the keys as tangd-rotate-keys does: new keys, the old ones hidden as `.NAME.jwk` (still used to
    /// recover, no longer advertised).
    pub fn rotate(&self) {
        let old: Vec<PathBuf> = std::fs::read_dir(&self.db)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'))
            .collect();
        for path in old {
            let hidden = self.db.join(format!(".{}", path.file_name().unwrap().to_string_lossy()));
            std::fs::rename(&path, hidden).unwrap();
        }
        run(Command::new(TANGD_KEYGEN).arg(&self.db));
    }
}

fn which(program: &str) -> PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|dir| dir.join(program))
        .find(|path| path.is_file())
        .unwrap_or_else(|| panic!("`{program}` is not on PATH"))
}

/// Runs a command that must succeed; returns its stdout.
pub fn run(command: &mut Command) -> String {
    let output = command.stdin(Stdio::null()).output().expect("run a tang tool");
    assert!(output.status.success(), "{command:?} failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

/// Runs `program args` with `input` on stdin; returns the whole output.
pub fn run_with_input(program: &str, args: &[&str], input: &[u8]) -> std::process::Output {
    use std::io::Write;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

/// `clevis encrypt PIN CONFIG -y` of `secret`: the compact JWE.
pub fn clevis_encrypt(pin: &str, config: &str, secret: &[u8]) -> String {
    let output = run_with_input("clevis", &["encrypt", pin, config, "-y"], secret);
    assert!(output.status.success(), "clevis encrypt failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

/// `clevis decrypt` of `jwe`.
pub fn clevis_decrypt(jwe: &str) -> std::process::Output {
    run_with_input("clevis", &["decrypt"], jwe.as_bytes())
}
