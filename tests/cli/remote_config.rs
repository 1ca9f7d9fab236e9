//! `bootstrap open` with RemoteConfig documents: the built-in `file` and `https` providers against a local HTTPS
//! server with a test CA (`tests/interop/tls_server.py`, `tests/interop/make_test_ca.sh`), a remote-configuration
//! plugin as a real executable, and the failures (unreachable, 404, oversize, loop, timeout) with their exit codes
//! and nothing written.
//!
//! The EncryptedConfig documents are sealed by the independent Python implementation
//! (`tests/interop/machineadm_oracle.py`), and the expected output is built here from the plaintexts, so cryptadm
//! is checked against what another reader expects, not against itself. These tests never skip: `python3` with
//! `cryptography` and `openssl` must be installed (`bash .ci/run` does).

use crate::support::{self, Scratch, cryptadm};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn interop(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop").join(name)
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// An HTTPS server on 127.0.0.1 with a certificate from a fresh test CA; killed when dropped.
struct TlsServer {
    child: Child,
    port: u16,
    /// Directory holding `ca.crt`, for `--cert-dir`.
    cert_dir: PathBuf,
    /// What the server serves under `/files/`.
    docroot: PathBuf,
    log: PathBuf,
}

impl TlsServer {
    fn start(scratch: &Scratch) -> Self {
        support::require_tool("openssl", "apt-get install openssl");
        support::require_tool("python3", "apt-get install python3");
        let pki = scratch.path("pki");
        let made = Command::new("sh").arg(interop("make_test_ca.sh")).arg(&pki).output().expect("run make_test_ca.sh");
        assert!(made.status.success(), "making the test CA failed: {}", stderr(&made));
        let cert_dir = scratch.path("certs.d");
        std::fs::create_dir(&cert_dir).unwrap();
        std::fs::copy(pki.join("ca.pem"), cert_dir.join("ca.crt")).unwrap();
        let docroot = scratch.path("www");
        std::fs::create_dir(&docroot).unwrap();
        let port_file = scratch.path("port");
        let child = Command::new("python3")
            .arg(interop("tls_server.py"))
            .arg(pki.join("server.pem"))
            .arg(pki.join("server.key"))
            .arg(&docroot)
            .arg(&port_file)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start tls_server.py");
        let mut server = TlsServer { child, port: 0, cert_dir, docroot, log: scratch.path("requests.log") };
        let deadline = Instant::now() + Duration::from_secs(20);
        while server.port == 0 {
            if let Ok(text) = std::fs::read_to_string(&port_file) {
                server.port = text.trim().parse().expect("a port number");
            } else if let Ok(Some(status)) = server.child.try_wait() {
                panic!("tls_server.py exited with {status} before listening");
            } else {
                assert!(Instant::now() < deadline, "tls_server.py did not start within 20 s");
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        server
    }

    fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.port)
    }

    fn requests(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Seals `plaintext` with the Python oracle for the built-in `file` provider and the passphrase in `pass`.
fn oracle_seal(scratch: &Scratch, pass: &Path, name: &str, plaintext: &str) -> String {
    let input = scratch.write(&format!("{name}.plain"), plaintext);
    let output = Command::new("python3")
        .arg(interop("machineadm_oracle.py"))
        .args(["seal", "--provider", "file", "--passphrase-uri"])
        .arg(format!("file://{}", pass.display()))
        .arg("--passphrase-file")
        .arg(pass)
        .arg("--in")
        .arg(&input)
        .output()
        .expect("run the oracle");
    assert!(output.status.success(), "the oracle could not seal (is `cryptography` installed?): {}", stderr(&output));
    String::from_utf8(output.stdout).unwrap()
}

fn remote(name: &str, provider: &str, uri: &str) -> String {
    format!(
        "apiVersion: machineadm.cluster.x-k8s.io/v1alpha1\nkind: RemoteConfig\nmetadata:\n  name: {name}\nspec:\n  \
         provider: {provider}\n  uri: {uri}\n"
    )
}

/// `cryptadm bootstrap open --in IN --out OUT`, with no proxy and no passphrase variables.
fn open(scratch: &Scratch, stream: &str, extra: &[&str]) -> (Output, Duration) {
    let input = scratch.write("stream.yaml", stream);
    let started = Instant::now();
    let output = cryptadm()
        .env_remove("HTTPS_PROXY")
        .env_remove("https_proxy")
        .env("PATH", format!("{}:/usr/bin:/bin", scratch.path("bin").display()))
        .args(["bootstrap", "open", "--in"])
        .arg(&input)
        .arg("--out")
        .arg(scratch.path("out.yaml"))
        .args(extra)
        .output()
        .expect("run cryptadm");
    (output, started.elapsed())
}

const INNER: &str = "inner: 1\n";
const TOP: &str = "top: 2\n";
const PLAIN: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-https\ndata:\n  k: v\n";

#[test]
fn a_remote_config_tree_opens_into_the_concatenation_in_stream_order() {
    let scratch = Scratch::new();
    let server = TlsServer::start(&scratch);
    let pass = scratch.write("pass", "correct horse battery staple");
    // RemoteConfig(file) → a stream holding an EncryptedConfig; an EncryptedConfig; RemoteConfig(https) → plain.
    scratch.write("nested.yaml", oracle_seal(&scratch, &pass, "inner", INNER));
    std::fs::write(server.docroot.join("plain.yaml"), PLAIN).unwrap();
    let nested_uri = format!("file://{}", scratch.path("nested.yaml").display());
    let stream = format!(
        "{}---\n{}---\n{}",
        remote("nested", "file", &nested_uri),
        oracle_seal(&scratch, &pass, "top", TOP),
        // Through a redirect, which the provider follows (https to https).
        remote("plain", "https", &server.url("/redirect/plain.yaml"))
    );
    let cert_dir = server.cert_dir.to_str().unwrap();

    let (output, _) = open(&scratch, &stream, &["--cert-dir", cert_dir]);
    assert!(output.status.success(), "{}", stderr(&output));
    let out = scratch.path("out.yaml");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), format!("{INNER}---\n{TOP}---\n{PLAIN}"));
    assert_eq!(std::fs::metadata(&out).unwrap().permissions().mode() & 0o777, 0o600);
    let log = stderr(&output);
    for line in [
        "fetched document 1: RemoteConfig `nested` (provider `file`): a machineadm stream of 1 documents".to_owned(),
        "decrypted document 1 of RemoteConfig `nested`: EncryptedConfig (provider `file`, 9 bytes)".to_owned(),
        "decrypted document 2: EncryptedConfig (provider `file`, 7 bytes)".to_owned(),
        format!(
            "fetched document 3: RemoteConfig `plain` (provider `https`): {} bytes of plain configuration",
            PLAIN.len()
        ),
    ] {
        assert!(log.contains(&line), "`{line}` not in:\n{log}");
    }
    assert_eq!(server.requests(), "GET /redirect/plain.yaml\nGET /files/plain.yaml\n");

    // The same again: nothing changes, exit 0.
    let (output, _) = open(&scratch, &stream, &["--cert-dir", cert_dir]);
    assert!(output.status.success() && stderr(&output).contains("is up to date"), "{}", stderr(&output));

    // Without the test CA the server is not trusted: exit 16, nothing written.
    std::fs::remove_file(&out).unwrap();
    let (output, _) = open(&scratch, &stream, &["--retries", "0"]);
    assert_eq!(output.status.code(), Some(16), "{}", stderr(&output));
    assert!(stderr(&output).contains("TLS certificate is not trusted"), "{}", stderr(&output));
    assert!(stderr(&output).contains("hint: trust the server's CA with --cert-dir"), "{}", stderr(&output));
    assert!(!out.exists());
}

#[test]
fn failures_exit_with_their_documented_codes_and_write_nothing() {
    let scratch = Scratch::new();
    let server = TlsServer::start(&scratch);
    let pass = scratch.write("pass", "pw");
    let sealed = oracle_seal(&scratch, &pass, "top", TOP);
    let cert_dir = server.cert_dir.to_str().unwrap();
    // A port that was just free: connection refused.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let at = |name: &str| format!("file://{}", scratch.path(name).display());
    // A stream that points at itself (a fetched stream may not use `file`, so the loop is found before that).
    scratch.write("a.yaml", remote("a", "file", &at("a.yaml")));
    let bin = scratch.path("bin");
    std::fs::create_dir(&bin).unwrap();
    let pid_file = scratch.path("slow.pid");
    scratch.script(
        "bin/machineadm-remote-configuration-provider-slow",
        &format!("#!/bin/sh\necho $$ > '{}'\nexec sleep 30\n", pid_file.display()),
    );

    let cases: Vec<(&str, String, Vec<&str>, i32, &str)> = vec![
        (
            "unreachable",
            remote("r", "https", &format!("https://127.0.0.1:{closed}/x")),
            vec![],
            1,
            "fetching `https://127.0.0.1:",
        ),
        ("404", remote("r", "https", &server.url("/files/nope.yaml")), vec![], 5, "not found: HTTP 404 Not Found"),
        (
            "oversize (Content-Length)",
            remote("r", "https", &server.url("/big/20000000")),
            vec![],
            3,
            "larger than the 16777216-byte limit",
        ),
        (
            "oversize (chunked)",
            remote("r", "https", &server.url("/big-chunked/17000000")),
            vec![],
            3,
            "larger than the 16777216-byte limit",
        ),
        ("slow server", remote("r", "https", &server.url("/slow/5")), vec!["--plugin-timeout", "1"], 1, "fetching"),
        ("loop", remote("a", "file", &at("a.yaml")), vec![], 3, "RemoteConfig loop: file "),
        (
            "plain http",
            remote("r", "https", &format!("http://127.0.0.1:{}/files/x", server.port)),
            vec![],
            3,
            "plain http is refused",
        ),
        (
            "missing plugin",
            remote("r", "nosuch", "x://y"),
            vec![],
            5,
            "plugin `machineadm-remote-configuration-provider-nosuch` not found",
        ),
        ("plugin timeout", remote("r", "slow", "x://y"), vec!["--plugin-timeout", "1"], 1, "timed out after 1s"),
    ];
    for (what, remote_doc, extra, code, message) in cases {
        let stream = format!("{sealed}---\n{remote_doc}");
        let mut args = vec!["--cert-dir", cert_dir, "--retries", "0"];
        args.extend(extra);
        let (output, elapsed) = open(&scratch, &stream, &args);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(code), "{what}: {err}");
        assert!(err.contains(message), "{what}: `{message}` not in {err}");
        assert!(err.contains("document 2 (RemoteConfig"), "{what}: the failing document is not named: {err}");
        assert!(!err.contains("decrypted"), "{what}: a passphrase was used before every fetch succeeded: {err}");
        assert!(!scratch.path("out.yaml").exists(), "{what}: something was written");
        assert!(elapsed < Duration::from_secs(15), "{what}: took {elapsed:?}");
    }
    // The plugin that timed out was killed with its process group.
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    assert!(!Path::new(&format!("/proc/{}", pid.trim())).exists(), "the timed-out plugin still runs");
}

#[test]
fn a_remote_configuration_plugin_runs_as_a_real_executable() {
    let scratch = Scratch::new();
    let pass = scratch.write("pass", "pw");
    let fetched = scratch.write("fetched.yaml", oracle_seal(&scratch, &pass, "fetched", INNER));
    std::fs::create_dir(scratch.path("bin")).unwrap();
    let (argv, env) = (scratch.path("argv"), scratch.path("env"));
    scratch.script(
        "bin/machineadm-remote-configuration-provider-store",
        &format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{}'\nenv > '{}'\ncase \"$2\" in\n  store://gone) echo 'no such object' >&2; exit 5;;\nesac\necho 'fetching' >&2\ncat '{}'\n",
            argv.display(),
            env.display(),
            fetched.display()
        ),
    );
    let stream = format!(
        "{}---\n{}",
        remote("r", "store", "store://bucket/machine-0.yaml"),
        oracle_seal(&scratch, &pass, "top", TOP)
    );
    let input = scratch.write("stream.yaml", &stream);
    let run = |stream_path: &Path| {
        cryptadm()
            .env("PATH", format!("{}:/usr/bin:/bin", scratch.path("bin").display()))
            .env("CRYPTADM_DEST_PASSWORD", "registry-secret")
            .env("MACHINEADM_REGION", "eu-1")
            .args(["bootstrap", "open", "--out"])
            .arg(scratch.path("out.yaml"))
            .arg("--in")
            .arg(stream_path)
            .output()
            .unwrap()
    };
    let output = run(&input);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(std::fs::read_to_string(scratch.path("out.yaml")).unwrap(), format!("{INNER}---\n{TOP}"));
    assert_eq!(std::fs::read_to_string(&argv).unwrap(), "fetch\nstore://bucket/machine-0.yaml\n");
    let env = std::fs::read_to_string(&env).unwrap();
    assert!(env.contains("MACHINEADM_REGION=eu-1\n") && env.contains("PATH="), "{env}");
    assert!(!env.contains("registry-secret") && !env.contains("NO_COLOR"), "the plugin got more than it needs: {env}");

    // Exit 5 from the plugin: not found, not retried, nothing written.
    std::fs::remove_file(scratch.path("out.yaml")).unwrap();
    let gone = scratch.write("gone.yaml", remote("r", "store", "store://gone"));
    let output = run(&gone);
    assert_eq!(output.status.code(), Some(5), "{}", stderr(&output));
    assert!(stderr(&output).contains("plugin exited with status 5: no such object"), "{}", stderr(&output));
    assert!(!stderr(&output).contains("retrying"), "{}", stderr(&output));
    assert!(!scratch.path("out.yaml").exists());
}

/// Issue 25: what a fetched RemoteConfig may do, redirects that downgrade to plain http, and URLs with
/// credentials in every message.
#[test]
fn fetched_configuration_is_untrusted_and_urls_never_show_credentials() {
    let scratch = Scratch::new();
    let server = TlsServer::start(&scratch);
    let pass = scratch.write("pass", "pw");
    let sealed = oracle_seal(&scratch, &pass, "top", TOP);
    let cert_dir = server.cert_dir.to_str().unwrap();
    scratch.write("local.yaml", "local: secret\n");

    // A stream fetched over https that asks for a local file: exit 3, nothing read or written.
    std::fs::write(
        server.docroot.join("asks-file.yaml"),
        remote("f", "file", &format!("file://{}", scratch.path("local.yaml").display())),
    )
    .unwrap();
    let stream = format!("{sealed}---\n{}", remote("r", "https", &server.url("/files/asks-file.yaml")));
    let (output, _) = open(&scratch, &stream, &["--cert-dir", cert_dir, "--retries", "0"]);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    assert!(stderr(&output).contains("a fetched RemoteConfig may not read local files"), "{}", stderr(&output));
    assert!(!scratch.path("out.yaml").exists());

    // A fetched stream that points at a loopback address: refused (exit 3) unless --allow-local-targets.
    std::fs::write(server.docroot.join("plain.yaml"), PLAIN).unwrap();
    std::fs::write(server.docroot.join("asks-local.yaml"), remote("l", "https", &server.url("/files/plain.yaml")))
        .unwrap();
    let stream = format!("{sealed}---\n{}", remote("r", "https", &server.url("/files/asks-local.yaml")));
    let (output, _) = open(&scratch, &stream, &["--cert-dir", cert_dir, "--retries", "0"]);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    assert!(stderr(&output).contains("127.0.0.1 is a loopback or link-local address"), "{}", stderr(&output));
    assert!(!scratch.path("out.yaml").exists());
    let (output, _) = open(&scratch, &stream, &["--cert-dir", cert_dir, "--retries", "0", "--allow-local-targets"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(std::fs::read_to_string(scratch.path("out.yaml")).unwrap(), format!("{TOP}---\n{PLAIN}"));
    std::fs::remove_file(scratch.path("out.yaml")).unwrap();

    // https → http: exit 3, final (no retry, no retry hint).
    let stream = format!("{sealed}---\n{}", remote("r", "https", &server.url("/to-http/plain.yaml")));
    let (output, _) = open(&scratch, &stream, &["--cert-dir", cert_dir, "--retries", "2"]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(3), "{err}");
    assert!(err.contains("refused a redirect from https to plain http"), "{err}");
    assert!(!err.contains("retry") && !err.contains("attempt"), "{err}");

    // A URI with a password and a presigned query: never shown, with or without -v.
    let secret_uri = format!(
        "https://user:Hunter2Pw@127.0.0.1:{}/files/nope.yaml?X-Amz-Signature=SiGnAtUrE&token=ToKeN",
        server.port
    );
    let stream = format!("{sealed}---\n{}", remote("r", "https", &secret_uri));
    for extra in [&[][..], &["-v"][..]] {
        let mut args = vec!["--cert-dir", cert_dir, "--retries", "1"];
        args.extend(extra);
        let (output, _) = open(&scratch, &stream, &args);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(5), "{err}");
        for secret in ["Hunter2Pw", "SiGnAtUrE", "ToKeN"] {
            assert!(!err.contains(secret), "{secret} shown with {extra:?}: {err}");
        }
        assert!(err.contains("user:REDACTED@127.0.0.1"), "{err}");
    }
}
