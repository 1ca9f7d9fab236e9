//! A software TPM for the tests: Debian's `swtpm` on 127.0.0.1 and a random port (`.ci/deps/tpm2.sh` installs it
//! with tpm2-tools, clevis-tpm2 and clevis-luks, the oracles).
//!
//! ONE swtpm per test binary, started on first use. A TPM without a resource manager serves one client at a time
//! and keeps what a client leaves loaded (clevis leaves a session behind), so every test holds [`tpm()`], a
//! mutex, for as long as it uses the TPM, and [`Swtpm::tools`] flushes what the tools leave.
#![allow(dead_code)]

use crate::support::{Scratch, require_tool};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{LazyLock, Mutex, MutexGuard};
use std::time::{Duration, Instant};

pub struct Swtpm {
    pub port: u16,
    _child: Child,
    _dir: Scratch,
}

static SWTPM: LazyLock<Mutex<Swtpm>> = LazyLock::new(|| Mutex::new(Swtpm::start()));

/// The TPM, alone.
pub fn tpm() -> MutexGuard<'static, Swtpm> {
    SWTPM.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

pub fn require_tpm2_tools() {
    require_tool("swtpm", "apt-get install swtpm swtpm-tools");
    require_tool("tpm2_pcrread", "apt-get install tpm2-tools");
    require_tool("clevis-encrypt-tpm2", "apt-get install clevis-tpm2");
    require_tool("clevis-luks-bind", "apt-get install clevis-luks");
}

impl Swtpm {
    /// A second, fresh TPM ("another machine"), stopped when dropped.
    pub fn another() -> Self {
        Self::start()
    }

    fn start() -> Self {
        require_tpm2_tools();
        let dir = Scratch::new();
        let state = dir.path("state");
        std::fs::create_dir(&state).unwrap();
        // Two free consecutive ports: the command port and the control port after it.
        let port = loop {
            let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            if port < 65535 && std::net::TcpListener::bind(("127.0.0.1", port + 1)).is_ok() {
                break port;
            }
        };
        let server = format!("type=tcp,port={port},bindaddr=127.0.0.1");
        let ctrl = format!("type=tcp,port={},bindaddr=127.0.0.1", port + 1);
        let tpmstate = format!("dir={}", state.display());
        let swtpm = std::path::PathBuf::from("/usr/bin/swtpm");
        let child = crate::support_openbao::spawn_watched(
            &swtpm,
            &[
                "socket",
                "--tpm2",
                "--tpmstate",
                &tpmstate,
                "--server",
                &server,
                "--ctrl",
                &ctrl,
                "--flags",
                "not-need-init,startup-clear",
            ],
            &dir.path("swtpm.log"),
        );
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "swtpm on port {port} did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        Self { port, _child: child, _dir: dir }
    }

    /// The TCTI string of tpm2-tools and clevis, and of `--tpm2-device`.
    pub fn tcti(&self) -> String {
        format!("swtpm:host=127.0.0.1,port={}", self.port)
    }

    /// A command with TPM2TOOLS_TCTI set to this TPM.
    pub fn command(&self, program: &str) -> Command {
        let mut command = Command::new(program);
        command.env("TPM2TOOLS_TCTI", self.tcti());
        command
    }

    /// Runs a tpm2-tools (or clevis) command that must succeed, with `input` on stdin, then flushes the sessions
    /// and transient objects it left on the TPM; returns stdout.
    pub fn tools(&self, program: &str, args: &[&str], input: &[u8]) -> Vec<u8> {
        let output = self.run(program, args, input);
        assert!(output.status.success(), "{program} {args:?} failed: {}", String::from_utf8_lossy(&output.stderr));
        output.stdout
    }

    /// Runs a command with `input` on stdin, whatever its result, then flushes what it left on the TPM.
    pub fn run(&self, program: &str, args: &[&str], input: &[u8]) -> Output {
        use std::io::Write;
        let mut child = self
            .command(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {program}: {e}"));
        child.stdin.take().unwrap().write_all(input).unwrap();
        let output = child.wait_with_output().unwrap();
        self.flush();
        output
    }

    /// `tpm2_flushcontext` of saved and loaded sessions and transient objects.
    pub fn flush(&self) {
        for flag in ["-t", "-l", "-s"] {
            let status = self.command("tpm2_flushcontext").arg(flag).stderr(Stdio::null()).status().unwrap();
            assert!(status.success(), "tpm2_flushcontext {flag}");
        }
    }
}

impl Drop for Swtpm {
    fn drop(&mut self) {
        // SIGTERM to the watchdog, which kills swtpm.
        let _ = Command::new("kill").arg(self._child.id().to_string()).status();
        let _ = self._child.wait();
    }
}

/// A fixed TCP port in front of a TPM that can be swapped ("the machine's TPM replaced"): for a process whose TPM
/// is configured once (containerd's stream processors get `CRYPTADM_TPM2_DEVICE` from its configuration), while
/// the TPM behind it is the shared one, then [`Swtpm::another`]. Only the command port is relayed (cryptadm uses
/// no control port). Connections made while no TPM is behind it are closed at once.
pub struct TpmRelay {
    pub port: u16,
    target: std::sync::Arc<std::sync::atomic::AtomicU16>,
}

impl TpmRelay {
    pub fn start() -> Self {
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let target = std::sync::Arc::new(std::sync::atomic::AtomicU16::new(0));
        let current = target.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                let Ok(server) = std::net::TcpStream::connect(("127.0.0.1", current.load(Ordering::SeqCst))) else {
                    continue;
                };
                for (mut from, mut to) in [(client.try_clone().unwrap(), server.try_clone().unwrap()), (server, client)]
                {
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut from, &mut to);
                        let _ = to.shutdown(std::net::Shutdown::Both);
                    });
                }
            }
        });
        Self { port, target }
    }

    /// From now on, new connections reach the TPM on `port`.
    pub fn point_to(&self, port: u16) {
        self.target.store(port, std::sync::atomic::Ordering::SeqCst);
    }

    /// The TCTI string of the relay.
    pub fn tcti(&self) -> String {
        format!("swtpm:host=127.0.0.1,port={}", self.port)
    }
}
