//! Registries are untrusted servers (issue 25): a hostile registry (`hostile_registry.py`, plain HTTP on
//! 127.0.0.1) serves indexes 30,000 deep and 2^30 paths wide, 1.5 GiB manifests and token answers, error messages
//! with control characters and a 64 MiB error body, and presigned blob URLs that answer 403. Every one ends with
//! its exit code and a short, one-line, redacted message, quickly and within bounded memory.
//!
//! The same script with `push` is a hostile push destination (a token service, uploads, manifests): huge token
//! answers, huge bodies on the `/v2/` challenge, a blob HEAD, an upload's POST, PATCH and PUT, a manifest PUT's
//! answer, bodies dripped a byte at a time, and error text with CR/LF and bidi controls. Those runs measure the
//! peak memory of cryptadm (`ru_maxrss` of its process, through a small Python parent).

use crate::image::Keys;
use crate::support::{Scratch, require_tool};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::LazyLock;
use std::time::{Duration, Instant};

struct Hostile {
    _child: Child,
    port: u16,
    /// Where the server writes what it was asked.
    log: std::path::PathBuf,
    _scratch: Scratch,
}

impl Hostile {
    /// Starts hostile_registry.py with `mode` (`[]` or `["push"]`).
    fn start(mode: &[&str]) -> Self {
        require_tool("python3", "apt-get install python3");
        let scratch = Scratch::new();
        let port_file = scratch.path("port");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/hostile_registry.py");
        let child = Command::new("python3")
            .arg(script)
            .arg(&port_file)
            .args(mode)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start hostile_registry.py");
        let deadline = Instant::now() + Duration::from_secs(60);
        let port = loop {
            if let Ok(text) = std::fs::read_to_string(&port_file) {
                break text.trim().parse().expect("a port");
            }
            assert!(Instant::now() < deadline, "hostile_registry.py did not start");
            std::thread::sleep(Duration::from_millis(50));
        };
        let log = scratch.path("port.log");
        Hostile { _child: child, port, log, _scratch: scratch }
    }
}

static HOSTILE: LazyLock<Hostile> = LazyLock::new(|| Hostile::start(&[]));
static HOSTILE_PUSH: LazyLock<Hostile> = LazyLock::new(|| Hostile::start(&["push"]));

fn image(repository: &str) -> String {
    format!("docker://127.0.0.1:{}/{repository}:v1", HOSTILE.port)
}

/// Runs cryptadm with a bound on its address space (2 GiB: reading a 1.5 GiB body whole, with the growth of its
/// buffer, does not fit).
fn run(args: &[&str]) -> (Output, Duration) {
    let started = Instant::now();
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg("ulimit -v 2097152; exec \"$@\"")
        .arg("sh")
        .arg(assert_cmd::cargo::cargo_bin("cryptadm"))
        .args(args)
        .env("NO_COLOR", "1")
        .env("HOME", "/nonexistent");
    let output = command.output().expect("run cryptadm");
    (output, started.elapsed())
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn inspect(repository: &str) -> (Output, Duration) {
    run(&["image", "inspect", "--tls-verify=false", &image(repository)])
}

#[test]
fn registry_hostile_nested_indexes_stop_at_the_depth_and_read_limits_with_exit_3() {
    let keys = Keys::new();
    let (private, _) = keys.rsa("rsa", 2048);
    for repository in ["deep", "wide"] {
        for args in [
            vec!["image", "inspect", "--tls-verify=false"],
            vec!["image", "authorize", "--tls-verify=false", "--key", &private],
        ] {
            let mut args = args.clone();
            let reference = image(repository);
            args.push(&reference);
            let (output, elapsed) = run(&args);
            let err = stderr(&output);
            assert_eq!(output.status.code(), Some(3), "{repository} {args:?}: {err}");
            assert!(err.contains("nested more than 8 indexes deep"), "{repository}: {err}");
            assert!(elapsed < Duration::from_secs(30), "{repository}: took {elapsed:?}");
        }
    }
}

#[test]
fn registry_hostile_huge_manifests_are_refused_without_being_read() {
    for repository in ["huge", "chunked"] {
        let (output, elapsed) = inspect(repository);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(3), "{repository}: {err}");
        assert!(err.contains("is larger than 4194304 bytes"), "{repository}: {err}");
        assert!(elapsed < Duration::from_secs(30), "{repository}: took {elapsed:?}");
    }
}

#[test]
fn registry_hostile_token_failures_are_reported_not_swallowed() {
    for (repository, message) in [
        ("tokenhuge", "answered with more than 65536 bytes"),
        ("tokenecho", "refused the request: HTTP 401"),
        ("tokenjunk", "something that is not a token"),
    ] {
        let (output, elapsed) = inspect(repository);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(16), "{repository}: {err}");
        assert!(err.contains(message), "{repository}: `{message}` not in {err}");
        assert!(!err.contains("denied for"), "{repository}: the token service's answer was printed: {err}");
        assert!(elapsed < Duration::from_secs(30), "{repository}: took {elapsed:?}");
    }
}

#[test]
fn registry_hostile_server_text_is_one_escaped_truncated_line() {
    let (output, _) = inspect("noisy");
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(5), "{err}");
    let error_lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(error_lines.len(), 1, "a forged error line: {err}");
    assert!(!err.contains('\r') && !err.contains('\u{1b}') && !err.contains('\u{202e}') && !err.contains('\u{9b}'));
    assert!(err.contains("\\u{202e}") || err.contains("\\\\u202e"), "{err}");

    let (output, elapsed) = inspect("loud");
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(5), "{err}");
    assert!(err.len() < 4096, "{} bytes of stderr", err.len());
    assert!(elapsed < Duration::from_secs(30), "took {elapsed:?}");
}

#[test]
fn registry_hostile_a_refused_presigned_url_is_redacted_and_not_a_credentials_problem() {
    // authorize reads the config blob (for the platform), which the registry redirects to storage.
    let keys = Keys::new();
    let (private, _) = keys.rsa("rsa", 2048);
    let reference = image("presigned");
    let (output, _) = run(&["image", "authorize", "--tls-verify=false", "--key", &private, &reference]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(!err.contains("deadbeefsignature") && !err.contains("AKIASECRETCRED"), "{err}");
    assert!(err.contains("X-Amz-Signature=REDACTED"), "{err}");
    assert!(err.contains("not the registry credentials"), "{err}");
}

#[test]
fn registry_hostile_a_layer_redirected_to_storage_is_fetched_in_ranges_there() {
    // A 5 MiB layer: four ranges, each redirected (307) by the registry to storage, which honours them (206).
    let scratch = Scratch::new();
    let out = scratch.path("out");
    let layout = format!("oci:{}:v1", out.display());
    let (output, _) =
        run(&["image", "decrypt", "--allow-plaintext", "--src-tls-verify=false", &image("redirected"), &layout]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{err}");
    let log = std::fs::read_to_string(&HOSTILE.log).unwrap();
    let ranges: Vec<&str> = log.lines().filter_map(|l| l.strip_prefix("RANGE ")).collect();
    assert!(ranges.len() >= 4 && ranges.iter().all(|r| r.starts_with("bytes=")), "{log}");
    // The layer is in the layout, checked against its digest.
    let sizes: Vec<u64> =
        std::fs::read_dir(out.join("blobs/sha256")).unwrap().map(|e| e.unwrap().metadata().unwrap().len()).collect();
    assert!(sizes.contains(&(5 << 20)), "{sizes:?}");
}

#[test]
fn registry_hostile_auth_files_must_be_small_regular_files() {
    let scratch = Scratch::new();
    let fifo = scratch.path("auth.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    for file in [fifo.to_str().unwrap(), "/dev/zero"] {
        let (output, elapsed) = run(&["image", "inspect", "--tls-verify=false", "--authfile", file, &image("deep")]);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(3), "{file}: {err}");
        assert!(err.contains("not a regular file"), "{file}: {err}");
        assert!(elapsed < Duration::from_secs(10), "{file}: took {elapsed:?}");
    }
    let big = scratch.write("big.json", vec![b' '; 2 * 1024 * 1024]);
    let (output, _) =
        run(&["image", "inspect", "--tls-verify=false", "--authfile", big.to_str().unwrap(), &image("deep")]);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    assert!(stderr(&output).contains("not an auth file"), "{}", stderr(&output));
}

#[test]
fn registry_hostile_credentials_in_a_reference_are_never_echoed() {
    let (output, _) = run(&["image", "inspect", "docker://ci:hunter2@127.0.0.1:1/app:v1"]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
    assert!(err.contains("credentials do not belong"), "{err}");
}

/// Runs cryptadm under a Python parent that bounds its address space (2 GiB, as [`run`]) and reports its peak
/// resident memory: the output, the time taken and the peak in MiB.
fn run_measured(args: &[&str]) -> (Output, Duration, u64) {
    const PARENT: &str = r#"
import resource, subprocess, sys
def bound():
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
code = subprocess.call(sys.argv[2:], preexec_fn=bound)
with open(sys.argv[1], "w") as f:
    f.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(code if code >= 0 else 128 - code)
"#;
    let scratch = Scratch::new();
    let peak_file = scratch.path("peak");
    let started = Instant::now();
    let output = Command::new("python3")
        .arg("-c")
        .arg(PARENT)
        .arg(&peak_file)
        .arg(assert_cmd::cargo::cargo_bin("cryptadm"))
        .args(args)
        .env("NO_COLOR", "1")
        .env("HOME", "/nonexistent")
        .output()
        .expect("run cryptadm");
    let elapsed = started.elapsed();
    let peak_kib: u64 = std::fs::read_to_string(&peak_file).expect("the peak").trim().parse().expect("a number");
    (output, elapsed, peak_kib / 1024)
}

/// Most memory a push to the hostile destination may take (a 1.5 GiB body read whole would take more than
/// ten times as much).
const PUSH_PEAK_MIB: u64 = 160;

/// Encrypts a small two-layer image (and, with `large`, one whose layer is over a piece, so that it goes in a
/// streaming PATCH) into `repository` of the hostile push destination.
fn push(repository: &str, large: bool) -> (Output, Duration, u64) {
    let scratch = Scratch::new();
    let src = scratch.path("src");
    if large {
        crate::registry::large_image(&src, 3 << 20);
    } else {
        crate::image::fixture(&src, crate::image::TWO_LAYERS);
    }
    let keys = Keys::new();
    let (_, public) = keys.rsa("rsa", 2048);
    let recipient = format!("jwe:{public}");
    let source = format!("oci:{}:v1", src.display());
    let destination = format!("docker://127.0.0.1:{}/{repository}:v1", HOSTILE_PUSH.port);
    run_measured(&["image", "encrypt", "--recipient", &recipient, "--dest-tls-verify=false", &source, &destination])
}

/// The one `error:` line of a failed run, checked to be short, escaped and free of the server's raw text.
fn one_error_line(repository: &str, output: &Output) -> String {
    let err = stderr(output);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(lines.len(), 1, "{repository}: {err}");
    assert!(err.len() < 4096, "{repository}: {} bytes of stderr", err.len());
    assert!(!err.contains('\r') && !err.contains('\u{1b}') && !err.contains('\u{202e}') && !err.contains('\u{9b}'));
    assert!(!err.contains("000000000000"), "{repository}: the server's body was shown: {err}");
    err
}

#[test]
fn registry_hostile_push_token_answers_are_bounded_and_refusals_reported() {
    for (repository, code, message) in [
        ("tokenhuge", 16, "answered with more than 65536 bytes"),
        ("tokenecho", 16, "refused the request: HTTP 401"),
        ("tokendrip", 1, "did not answer within 30 s"),
    ] {
        let (output, elapsed, peak) = push(repository, false);
        let err = one_error_line(repository, &output);
        assert_eq!(output.status.code(), Some(code), "{repository}: {err}");
        assert!(err.contains("checking access") && err.contains(message), "{repository}: `{message}` not in {err}");
        assert!(!err.contains("denied for"), "{repository}: the token service's answer was printed: {err}");
        assert!(elapsed < Duration::from_secs(60), "{repository}: took {elapsed:?}");
        assert!(peak < PUSH_PEAK_MIB, "{repository}: {peak} MiB");
    }
}

#[test]
fn registry_hostile_push_bodies_are_never_read_whole() {
    // Bodies that need not be read at all: the `/v2/` challenge's (every push here), a HEAD's announced length, a
    // created manifest's answer. The push succeeds.
    for repository in ["headhuge", "manifesthuge"] {
        let (output, elapsed, peak) = push(repository, false);
        assert!(output.status.success(), "{repository}: {}", stderr(&output));
        assert!(elapsed < Duration::from_secs(60), "{repository}: took {elapsed:?}");
        assert!(peak < PUSH_PEAK_MIB, "{repository}: {peak} MiB");
    }
    // Error answers of 1.5 GiB, chunked (no length to refuse them by): read up to the bound only.
    for (repository, large, code) in
        [("posthuge", false, 1), ("patchhuge", true, 16), ("puthuge", false, 1), ("manifestrefused", false, 1)]
    {
        let (output, elapsed, peak) = push(repository, large);
        let err = one_error_line(repository, &output);
        assert_eq!(output.status.code(), Some(code), "{repository}: {err}");
        assert!(err.contains("an error answer over 64 KiB, not read"), "{repository}: {err}");
        assert!(elapsed < Duration::from_secs(60), "{repository}: took {elapsed:?}");
        assert!(peak < PUSH_PEAK_MIB, "{repository}: {peak} MiB");
    }
}

#[test]
fn registry_hostile_push_a_dripped_error_answer_is_not_waited_for() {
    let (output, elapsed, _) = push("putdrip", false);
    let err = one_error_line("putdrip", &output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(err.contains("did not arrive within 5 s"), "{err}");
    assert!(elapsed < Duration::from_secs(30), "took {elapsed:?}");
}

#[test]
fn registry_hostile_push_error_text_is_one_escaped_line() {
    let (output, _, _) = push("pushnoisy", false);
    let err = one_error_line("pushnoisy", &output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(err.contains("pushing manifest") && err.contains("\\u{202e}evil"), "{err}");
    assert!(err.contains("bad\\r\\nerror: forged line"), "{err}");
}

/// Storage on the registry's own host name but another port is another origin: its 403 is the storage refusing
/// the presigned URL (exit 1), not the registry refusing credentials (16), and its body, which quotes the query
/// string and the signature, is redacted.
#[test]
fn registry_hostile_storage_on_the_registrys_host_name_and_another_port_is_storage() {
    let keys = Keys::new();
    let (private, _) = keys.rsa("rsa", 2048);
    let reference = image("samehost");
    let (output, _) = run(&["image", "authorize", "--tls-verify=false", "--key", &private, &reference]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(err.contains("not the registry credentials"), "{err}");
    assert!(!err.contains("samehostsignature") && !err.contains("AKIASAMEHOSTCRED"), "{err}");
}

/// A 500 carrying distribution's error envelope is retried with backoff (4 requests in all), and the message
/// says the status.
#[test]
fn registry_hostile_a_5xx_with_an_error_envelope_is_retried_and_says_its_status() {
    let before = std::fs::read_to_string(&HOSTILE.log).unwrap_or_default();
    let (output, _) = inspect("envelope5xx");
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(err.contains("HTTP 500"), "{err}");
    let log = std::fs::read_to_string(&HOSTILE.log).unwrap();
    let asked = log[before.len()..].lines().filter(|l| l.starts_with("GET /v2/envelope5xx/manifests/")).count();
    assert_eq!(asked, 4, "{log}");
}

/// A registry dripping its answer's headers holds a pull no longer than the overall deadline (`--timeout`), and
/// the error says so.
#[test]
fn registry_hostile_a_dripping_registry_is_cut_at_the_overall_deadline() {
    let (output, elapsed) = run(&["--timeout", "3", "image", "inspect", "--tls-verify=false", &image("drip")]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(4), "{err}");
    assert!(elapsed < Duration::from_secs(4), "took {elapsed:?}: {err}");
    assert!(err.contains("the overall deadline of 3 s passed") && err.contains("--timeout"), "{err}");
}

/// A plain-HTTP registry reached with TLS verification on: the message says it answered plain HTTP and the hint
/// names the flag.
#[test]
fn registry_hostile_a_plain_http_registry_names_the_tls_verify_flag() {
    let (output, _) = run(&["image", "inspect", &image("presigned")]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(err.contains("answered plain HTTP"), "{err}");
    assert!(err.contains("hint:") && err.contains("--tls-verify=false"), "{err}");
}
