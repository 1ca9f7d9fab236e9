//! Running an external program (a passphrase plugin, an ocicrypt key provider, `gpg`) with a deadline and
//! bounded output.
//!
//! The program runs in its own process group so that a timeout also kills whatever it started (a shell's
//! children). Its stdout and stderr are read by threads that keep at most a given number of bytes and drain the
//! rest, so a chatty program never blocks on a full pipe and never makes us allocate without bound. What it
//! prints is kept in wiping buffers: a plugin's stdout is often a secret.
//!
//! This module only runs and collects; what a failure means (retry, report, which message) is the caller's.

use crate::crypto::SecretBytes;
use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use wait_timeout::ChildExt;

/// Environment variables that carry cryptadm's own secrets (passphrases, registry passwords, and the files that
/// hold them): a child never inherits them. A plugin or key provider that needs a secret gets it as an argument of
/// its protocol, never by accident. (`cmd::env_vars` declares the variables; a test there keeps the lists equal.)
pub const SCRUBBED_VARIABLES: &[&str] = &[
    "CRYPTADM_PASSPHRASE",
    "CRYPTADM_PASSPHRASE_FILE",
    "CRYPTADM_SRC_PASSWORD",
    "CRYPTADM_SRC_PASSWORD_FILE",
    "CRYPTADM_DEST_PASSWORD",
    "CRYPTADM_DEST_PASSWORD_FILE",
    "CRYPTADM_REGISTRY_PASSWORD",
    "CRYPTADM_REGISTRY_PASSWORD_FILE",
    "CRYPTADM_KMIP_PASSWORD",
    "CRYPTADM_KMIP_PASSWORD_FILE",
    "OS_PASSWORD",
    "OS_APPLICATION_CREDENTIAL_SECRET",
    "OS_TOKEN",
    "VAULT_TOKEN",
    "BAO_TOKEN",
    // The key id is no secret, but a child left with it alone fails instead of finding its own credentials.
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
];

/// How long a program may run and how much of its output is kept.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// How long the program may run before its process group is killed.
    pub timeout: Duration,
    /// Most bytes kept from stdout; more marks the output as truncated.
    pub max_stdout: usize,
    /// Most bytes kept from stderr; the rest is discarded silently.
    pub max_stderr: usize,
}

/// A program that ran to its end within the deadline, successfully or not.
#[derive(Debug)]
pub struct Finished {
    /// How it ended.
    pub status: ExitStatus,
    /// Its stdout, at most [`Limits::max_stdout`] bytes.
    pub stdout: SecretBytes,
    /// Whether it printed more than [`Limits::max_stdout`] bytes on stdout.
    pub stdout_truncated: bool,
    /// Its stderr, at most [`Limits::max_stderr`] bytes (empty if something it started kept stderr open).
    pub stderr: SecretBytes,
}

/// Why a program did not run to its end.
#[derive(Debug)]
pub enum RunError {
    /// It could not be started (not found, not executable).
    Spawn(std::io::Error),
    /// It did not exit before the deadline; its process group was killed.
    TimedOut,
    /// It exited, but a process it started outside its process group kept its stdout open.
    StdoutHeld,
}

/// Runs `program` with `args`, feeding `stdin` (or nothing: `/dev/null`) and waiting at most `limits.timeout`.
/// The program inherits cryptadm's environment.
pub fn run<I, S>(
    program: impl AsRef<OsStr>,
    args: I,
    stdin: Option<&[u8]>,
    limits: Limits,
) -> Result<Finished, RunError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    run_with_env(program, args, stdin, limits, None)
}

/// [`run`], with `env` (when given) as the program's whole environment instead of cryptadm's: nothing else is
/// passed on.
#[allow(clippy::disallowed_methods)] // the one place a child starts; see clippy.toml
pub fn run_with_env<I, S>(
    program: impl AsRef<OsStr>,
    args: I,
    stdin: Option<&[u8]>,
    limits: Limits,
    env: Option<&[(OsString, OsString)]>,
) -> Result<Finished, RunError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    use std::os::unix::process::CommandExt;
    let mut command = Command::new(program);
    match env {
        Some(env) => {
            command.env_clear().envs(env.iter().map(|(name, value)| (name, value)));
        }
        None => {
            for name in SCRUBBED_VARIABLES {
                command.env_remove(name);
            }
        }
    }
    let mut child = command
        .args(args)
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group, so a timeout also kills whatever the program started (a shell's children).
        .process_group(0)
        .spawn()
        .map_err(RunError::Spawn)?;
    if let Some(input) = stdin {
        spawn_writer(child.stdin.take().expect("piped"), input);
    }
    let stdout = spawn_reader(child.stdout.take().expect("piped"), limits.max_stdout);
    let stderr = spawn_reader(child.stderr.take().expect("piped"), limits.max_stderr);
    let deadline = Instant::now() + limits.timeout;

    let status = match wait_until(&mut child, deadline) {
        Some(status) => status,
        None => {
            kill_group(&mut child);
            return Err(RunError::TimedOut);
        }
    };
    let receive =
        |from: &mpsc::Receiver<Captured>, by: Instant| from.recv_timeout(by.saturating_duration_since(Instant::now()));
    let grace = Instant::now() + Duration::from_secs(1);
    let (mut out, mut err) = (receive(&stdout, grace), receive(&stderr, grace));
    if out.is_err() || err.is_err() {
        // Something the program started still holds its pipes; the group exists, so its id cannot be reused yet.
        // Once the group is dead the readers reach end of file and hand over what they already read.
        kill_group(&mut child);
        let after_kill = Instant::now() + Duration::from_secs(1);
        if out.is_err() {
            out = receive(&stdout, after_kill);
        }
        if err.is_err() {
            err = receive(&stderr, after_kill);
        }
    }
    let out = out.map_err(|_| RunError::StdoutHeld)?;
    let err = err.unwrap_or_default();
    Ok(Finished { status, stdout: out.bytes, stdout_truncated: out.truncated, stderr: err.bytes })
}

/// A plugin cryptadm refuses to run: someone other than root and the current user could change what runs (the
/// file or a directory above it is writable by others, or owned by another user), or it was found through an
/// empty or relative `PATH` entry (the current directory). sudo and OpenSSH refuse their helpers for the same
/// reasons.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Untrusted {
    /// The plugin as found.
    pub path: std::path::PathBuf,
    /// Why it is refused.
    pub problem: String,
}

impl std::fmt::Display for Untrusted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "refusing to run the plugin `{}`: {}", self.path.display(), self.problem)
    }
}

impl std::error::Error for Untrusted {}

impl crate::exit::Classify for Untrusted {
    fn status(&self) -> crate::exit::ExitStatus {
        crate::exit::ExitStatus::InvalidInput
    }
    fn hint(&self) -> Option<std::borrow::Cow<'_, str>> {
        Some(std::borrow::Cow::Borrowed(
            "make the plugin and its directories owned by root (or you) and writable only by the owner, and use \
             absolute PATH entries",
        ))
    }
}

/// Whether `path` is an executable regular file (after symlinks).
pub fn is_executable(path: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The first executable `program` in `dirs`, checked with [`check_trusted`]; `Ok(None)`: none. A candidate in an
/// empty or relative directory (a `PATH` of `.:/usr/bin` or `:/usr/bin`) is refused, not skipped: it is what
/// a shell would run.
pub fn find_plugin(program: &str, dirs: &[std::path::PathBuf]) -> Result<Option<std::path::PathBuf>, Untrusted> {
    for dir in dirs {
        let candidate = dir.join(program);
        if !is_executable(&candidate) {
            continue;
        }
        if dir.as_os_str().is_empty() || dir.is_relative() {
            let entry =
                if dir.as_os_str().is_empty() { "an empty entry".to_owned() } else { format!("`{}`", dir.display()) };
            return Err(Untrusted {
                path: candidate,
                problem: format!("it was found through {entry} of PATH, which names the current directory"),
            });
        }
        check_trusted(&candidate)?;
        return Ok(Some(candidate));
    }
    Ok(None)
}

/// `program` as [`run`] would start it, checked: a name without `/` is looked up in `search_dirs` ([`find_plugin`]),
/// which must be the directories of the `PATH` the program is started with (`cmd/` reads it: the core does not
/// read the environment); a path is checked where it is. A program that does not exist is returned unchanged
/// (starting it reports that).
pub fn resolve_plugin(program: &OsStr, search_dirs: &[std::path::PathBuf]) -> Result<std::path::PathBuf, Untrusted> {
    let path = std::path::Path::new(program);
    if program.as_encoded_bytes().contains(&b'/') {
        if path.exists() {
            check_trusted(path)?;
        }
        return Ok(path.to_owned());
    }
    let name = program.to_string_lossy();
    Ok(find_plugin(&name, search_dirs)?.unwrap_or_else(|| path.to_owned()))
}

/// Refuses a plugin that someone other than root and the current user could replace: the file (after symlinks)
/// and every directory above it must be owned by root or the current user and writable by no one else (a
/// group-writable one only by group root); a world-writable directory with the sticky bit (`/tmp`) is allowed,
/// since others cannot rename what is in it.
pub fn check_trusted(path: &std::path::Path) -> Result<(), Untrusted> {
    use std::os::unix::fs::MetadataExt;
    let refuse = |problem: String| Untrusted { path: path.to_owned(), problem };
    let real = std::fs::canonicalize(path).map_err(|e| refuse(format!("cannot resolve it: {e}")))?;
    // The directories that hold the name as given count too: whoever may write there could point a symbolic
    // link at a trusted program for this check and at their own before it runs.
    let named_in = match path.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(parent) => std::fs::canonicalize(parent).map_err(|e| refuse(format!("cannot resolve it: {e}")))?,
        None => real.parent().map(std::path::Path::to_path_buf).unwrap_or_default(),
    };
    let me = rustix::process::geteuid().as_raw();
    let chain = real.ancestors().map(|c| (c, c == real.as_path())).chain(named_in.ancestors().map(|c| (c, false)));
    for (component, is_target) in chain {
        if component.as_os_str().is_empty() {
            continue;
        }
        let meta =
            std::fs::metadata(component).map_err(|e| refuse(format!("cannot read `{}`: {e}", component.display())))?;
        let what = if is_target { "it".to_owned() } else { format!("its directory `{}`", component.display()) };
        let (mode, uid, gid) = (meta.mode(), meta.uid(), meta.gid());
        if uid != 0 && uid != me {
            return Err(refuse(format!("{what} is owned by user {uid}, neither root nor the current user")));
        }
        let sticky_dir = meta.is_dir() && mode & 0o1000 != 0;
        if mode & 0o002 != 0 && !sticky_dir {
            return Err(refuse(format!("{what} is writable by every user (mode {:o})", mode & 0o7777)));
        }
        if mode & 0o020 != 0 && gid != 0 && !sticky_dir {
            return Err(refuse(format!("{what} is writable by group {gid} (mode {:o})", mode & 0o7777)));
        }
    }
    Ok(())
}

/// The last non-empty line of a program's stderr (a plugin, a key provider: text from outside), trimmed, without
/// any secret the command holds and escaped as [`crate::redact::server_text`] shows server text, at most 200
/// characters: enough to say why it failed without pasting a screenful (or a forged line) into our own message.
pub fn last_line(stderr: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(stderr);
    let line = text.lines().map(str::trim).rfind(|l| !l.is_empty())?;
    Some(crate::redact::server_text(line.as_bytes(), 200))
}

/// "exited with status N" or "was killed by signal N".
pub fn describe_status(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(signal)) => format!("was killed by signal {signal}"),
        _ => "failed".into(),
    }
}

/// A duration as an operator writes it: `30s`, `250ms`.
pub fn humanize(duration: Duration) -> String {
    if duration.as_millis().is_multiple_of(1000) {
        format!("{}s", duration.as_secs())
    } else {
        format!("{}ms", duration.as_millis())
    }
}

fn wait_until(child: &mut Child, deadline: Instant) -> Option<ExitStatus> {
    let remaining = deadline.saturating_duration_since(Instant::now());
    child.wait_timeout(remaining).ok().flatten()
}

fn kill_group(child: &mut Child) {
    let _ = rustix::process::kill_process_group(rustix::process::Pid::from_child(child), rustix::process::Signal::KILL);
    let _ = child.kill();
    let _ = child.wait();
}

/// Writes the input from a thread, so a program that prints before it has read all of its input cannot
/// deadlock against us; the pipe is closed when the thread ends, which is the program's end of input. A program
/// that exits without reading makes the write fail with a broken pipe, which is its business, not an error here.
/// The thread's copy of the input (often a secret) is wiped when it ends.
fn spawn_writer(mut sink: std::process::ChildStdin, input: &[u8]) {
    let input = zeroize::Zeroizing::new(input.to_vec());
    std::thread::spawn(move || {
        let _ = sink.write_all(&input);
    });
}

#[derive(Default)]
struct Captured {
    bytes: SecretBytes,
    truncated: bool,
}

/// Reads at most `limit` bytes, then drains and discards the rest so the program never blocks on a full pipe.
fn spawn_reader(mut source: impl Read + Send + 'static, limit: usize) -> mpsc::Receiver<Captured> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut captured = Captured::default();
        let mut chunk = zeroize::Zeroizing::new([0u8; 8192]);
        loop {
            match source.read(&mut chunk[..]) {
                Ok(0) | Err(_) => break,
                Ok(n) if captured.bytes.len() + n <= limit => captured.bytes.extend_from_slice(&chunk[..n]),
                Ok(n) => {
                    // Keep what still fits, so the caller sees exactly `limit` bytes and knows more followed.
                    let room = limit - captured.bytes.len();
                    captured.bytes.extend_from_slice(&chunk[..room.min(n)]);
                    captured.truncated = true;
                }
            }
        }
        let _ = sender.send(captured);
    });
    receiver
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugins_others_could_change_are_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let plugin = dir.path().join("plugin");
        std::fs::write(&plugin, "#!/bin/sh\n").unwrap();
        let mode = |path: &std::path::Path, mode: u32| {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        mode(&plugin, 0o755);
        check_trusted(&plugin).unwrap();
        assert_eq!(find_plugin("plugin", &[dir.path().to_owned()]).unwrap(), Some(plugin.clone()));
        mode(&plugin, 0o757);
        assert!(check_trusted(&plugin).unwrap_err().problem.contains("writable by every user"));
        mode(&plugin, 0o755);
        mode(dir.path(), 0o777);
        assert!(check_trusted(&plugin).unwrap_err().problem.contains("its directory"));
        mode(dir.path(), 0o1777);
        check_trusted(&plugin).unwrap();
        mode(dir.path(), 0o700);
        let relative = find_plugin("plugin", &[std::path::PathBuf::from("no-such-dir"), dir.path().to_owned()]);
        assert!(relative.is_ok());
        // A link to the trusted plugin, in a directory anyone may write to: whoever can repoint the link decides
        // what runs, so the link's directory is checked as well as the target's.
        let open = dir.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::os::unix::fs::symlink(&plugin, open.join("plugin")).unwrap();
        check_trusted(&open.join("plugin")).unwrap();
        mode(&open, 0o777);
        let refused = check_trusted(&open.join("plugin")).unwrap_err().problem;
        assert!(refused.contains("its directory") && refused.contains("writable by every user"), "{refused}");
        assert!(find_plugin("plugin", std::slice::from_ref(&open)).is_err());
    }

    fn limits(timeout_ms: u64, max: usize) -> Limits {
        Limits { timeout: Duration::from_millis(timeout_ms), max_stdout: max, max_stderr: max }
    }

    #[test]
    fn feeds_stdin_and_collects_stdout() {
        let done = run("cat", std::iter::empty::<&str>(), Some(b"hello"), limits(10_000, 100)).unwrap();
        assert!(done.status.success());
        assert_eq!(&done.stdout[..], b"hello");
        assert!(!done.stdout_truncated);
    }

    #[test]
    fn large_input_to_a_program_that_does_not_read_it() {
        // More than a pipe buffer: the writer thread must not hold up the wait.
        let input = vec![b'x'; 1 << 20];
        let done = run("true", std::iter::empty::<&str>(), Some(&input), limits(10_000, 100)).unwrap();
        assert!(done.status.success());
    }

    #[test]
    fn truncates_and_flags_large_output() {
        let done = run("sh", ["-c", "head -c 100000 /dev/zero"], None, limits(10_000, 10)).unwrap();
        assert_eq!(done.stdout.len(), 10);
        assert!(done.stdout_truncated);
    }

    #[test]
    fn times_out() {
        let started = Instant::now();
        assert!(matches!(run("sleep", ["10"], None, limits(200, 10)), Err(RunError::TimedOut)));
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn missing_program() {
        assert!(matches!(
            run("/nonexistent/program", std::iter::empty::<&str>(), None, limits(1000, 10)),
            Err(RunError::Spawn(_))
        ));
    }

    #[test]
    fn a_given_environment_replaces_ours() {
        let env = [(OsString::from("ONLY"), OsString::from("this"))];
        let done =
            run_with_env("/usr/bin/env", std::iter::empty::<&str>(), None, limits(10_000, 1000), Some(&env)).unwrap();
        assert_eq!(&done.stdout[..], b"ONLY=this\n");
    }

    #[test]
    fn stderr_last_line() {
        assert_eq!(last_line(b"one\n two \n\n").as_deref(), Some("two"));
        assert_eq!(last_line(b"  \n"), None);
    }
}
