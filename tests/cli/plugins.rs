//! Passphrase provider plugins as real executables: shell scripts named
//! `machineadm-plugin-encryption-provider-<name>` in a directory put on PATH, run by `bootstrap open`
//! (`get-passphrase`) and `bootstrap seal` (`new-passphrase`) under the exec contract of
//! src/machineadm/provider.rs and docs/bootstrap.md.

use crate::support::{Scratch, cryptadm};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

/// A passphrase distinctive enough that finding it in stderr can only be a leak.
const PASSPHRASE: &str = "plugin-secret-Quokka-7f3a9c41";
const PLAINTEXT: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plugin-test\n";
/// Upper bound for runs that must not wait for a plugin's 30-second sleep.
const PROMPT: Duration = Duration::from_secs(10);
/// A command that never finishes fails the test instead of hanging it.
const HARD_LIMIT: Duration = Duration::from_secs(120);

/// A scratch directory with a `bin` directory of plugins, a plaintext and a sealed document.
struct Fixture {
    scratch: Scratch,
}

/// One cryptadm run.
struct Run {
    code: Option<i32>,
    stderr: String,
    elapsed: Duration,
}

impl Run {
    fn from(output: Output, elapsed: Duration) -> Self {
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(!stderr.contains(PASSPHRASE), "the passphrase leaked into stderr:\n{stderr}");
        assert!(!String::from_utf8_lossy(&output.stdout).contains(PASSPHRASE), "the passphrase leaked into stdout");
        Self { code: output.status.code(), stderr, elapsed }
    }

    #[track_caller]
    fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(self.code, Some(code), "unexpected exit status; stderr:\n{}", self.stderr);
        self
    }

    #[track_caller]
    fn expect_stderr(&self, needle: &str) -> &Self {
        assert!(self.stderr.contains(needle), "{needle:?} not in stderr:\n{}", self.stderr);
        self
    }

    #[track_caller]
    fn expect_no_stderr(&self, needle: &str) -> &Self {
        assert!(!self.stderr.contains(needle), "{needle:?} unexpectedly in stderr:\n{}", self.stderr);
        self
    }

    #[track_caller]
    fn expect_within(&self, bound: Duration) -> &Self {
        assert!(self.elapsed < bound, "took {:?}, expected under {bound:?}; stderr:\n{}", self.elapsed, self.stderr);
        self
    }
}

impl Fixture {
    fn new() -> Self {
        let scratch = Scratch::new();
        std::fs::create_dir(scratch.path("bin")).expect("create the plugin directory");
        scratch.write("plain.yaml", PLAINTEXT);
        scratch.write("passphrase", PASSPHRASE);
        Self { scratch }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.scratch.path(name)
    }

    /// Shell-quoted absolute path of a scratch file, for script bodies.
    fn quoted(&self, name: &str) -> String {
        let path = self.path(name).display().to_string();
        assert!(!path.contains('\''), "temp paths hold no quotes");
        format!("'{path}'")
    }

    /// PATH for cryptadm: the plugin directory, then the system tools the scripts use.
    fn search_path(&self) -> String {
        format!("{}:/usr/bin:/bin", self.path("bin").display())
    }

    /// Installs the plugin for `provider`. The script body gets a prelude that counts its runs in `runs`,
    /// appends its argv (one argument a line) to `argv`, and fails if it was given any standard input.
    fn plugin(&self, provider: &str, body: &str) {
        let script = format!(
            "#!/bin/sh\n\
             n=$(cat {runs} 2>/dev/null || echo 0)\n\
             n=$((n + 1))\n\
             echo \"$n\" > {runs}\n\
             for a in \"$@\"; do printf '%s\\n' \"$a\" >> {argv}; done\n\
             if IFS= read -r line; then echo 'plugin: stdin was not empty' >&2; exit 65; fi\n\
             {body}\n",
            runs = self.quoted("runs"),
            argv = self.quoted("argv"),
        );
        self.scratch.script(&format!("bin/machineadm-plugin-encryption-provider-{provider}"), &script);
    }

    /// How many times a plugin ran.
    fn runs(&self) -> u32 {
        match std::fs::read_to_string(self.path("runs")) {
            Ok(text) => text.trim().parse().expect("a run count"),
            Err(_) => 0,
        }
    }

    /// Every argument every plugin run received, one a line.
    fn argv(&self) -> String {
        std::fs::read_to_string(self.path("argv")).unwrap_or_default()
    }

    /// Runs cryptadm with the plugin directory on PATH and something on standard input (which cryptadm must not
    /// hand to plugins).
    fn run(&self, args: &[&str]) -> Run {
        let start = Instant::now();
        let output = cryptadm()
            .env("PATH", self.search_path())
            .current_dir(self.scratch.dir.path())
            .args(args)
            .write_stdin("standard input meant for cryptadm, not the plugin\n")
            .timeout(HARD_LIMIT)
            .output()
            .expect("run cryptadm");
        Run::from(output, start.elapsed())
    }

    /// Seals the plaintext for `provider` at `uri` with the passphrase file (no plugin runs) into `sealed.yaml`.
    fn seal_with_file(&self, provider: &str, uri: &str) {
        self.run(&[
            "bootstrap",
            "seal",
            "--provider",
            provider,
            "--passphrase-uri",
            uri,
            "--passphrase-file",
            "passphrase",
            "--in",
            "plain.yaml",
            "--out",
            "sealed.yaml",
        ])
        .expect_code(0);
        assert_eq!(self.runs(), 0, "sealing with a passphrase file runs no plugin");
    }

    /// `bootstrap open` of `sealed.yaml` into `out.yaml`, without a passphrase source, plus `extra` flags.
    fn open(&self, extra: &[&str]) -> Run {
        let mut args = vec!["bootstrap", "open", "--in", "sealed.yaml", "--out", "out.yaml"];
        args.extend_from_slice(extra);
        self.run(&args)
    }

    #[track_caller]
    fn assert_no_output(&self) {
        assert!(!self.path("out.yaml").exists(), "a failed open must not write --out");
    }

    #[track_caller]
    fn assert_opened(&self) {
        let out = std::fs::read(self.path("out.yaml")).expect("--out was written");
        assert_eq!(out, PLAINTEXT.as_bytes());
    }
}

/// A plugin body that prints the passphrase when called as `get-passphrase <uri>` and fails otherwise.
fn get_passphrase_body(uri: &str) -> String {
    format!(
        "if [ \"$#\" -ne 2 ] || [ \"$1\" != get-passphrase ] || [ \"$2\" != '{uri}' ]; then\n\
         \x20 echo \"plugin: unexpected arguments: $*\" >&2; exit 64\n\
         fi\n\
         printf '%s' '{PASSPHRASE}'"
    )
}

/// Waits until the process whose id a plugin wrote into `pid_file` is gone (or a zombie awaiting its reaper).
#[track_caller]
fn assert_process_ends(pid_file: &Path) {
    let pid = std::fs::read_to_string(pid_file).expect("the plugin recorded its background process");
    let pid: u32 = pid.trim().parse().expect("a process id");
    let stat = format!("/proc/{pid}/stat");
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let alive = match std::fs::read_to_string(&stat) {
            // The state follows the parenthesised command name.
            Ok(text) => text.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z')),
            Err(_) => false,
        };
        if !alive {
            return;
        }
        assert!(Instant::now() < deadline, "process {pid} the plugin started is still running");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn get_passphrase_plugin_opens_the_document() {
    let fx = Fixture::new();
    fx.plugin("fake", &get_passphrase_body("fake://k"));
    fx.seal_with_file("fake", "fake://k");

    fx.open(&[]).expect_code(0).expect_stderr("decrypted document 1").expect_no_stderr("warning:");
    fx.assert_opened();
    assert_eq!(fx.runs(), 1);
    assert_eq!(fx.argv(), "get-passphrase\nfake://k\n", "the plugin's argv is exactly `get-passphrase URI`");
}

#[test]
fn plugin_passphrase_bytes_are_used_as_printed() {
    let fx = Fixture::new();
    // `echo` adds a newline, and the contract strips nothing: the key is wrong.
    fx.plugin("fake", &format!("echo '{PASSPHRASE}'"));
    fx.seal_with_file("fake", "fake://k");

    fx.open(&[]).expect_code(16).expect_stderr("decryption failed").expect_stderr("no newline is stripped");
    fx.assert_no_output();
}

#[test]
fn plugin_that_prints_nothing_fails() {
    let fx = Fixture::new();
    fx.plugin("fake", "exit 0");
    fx.seal_with_file("fake", "fake://k");

    fx.open(&["--retries", "0"]).expect_code(1).expect_stderr("passphrase provider `fake`").expect_stderr("empty");
    fx.assert_no_output();
}

#[test]
fn failing_plugin_reports_its_last_stderr_line() {
    let fx = Fixture::new();
    // The passphrase on stdout of a failing run must not be shown either.
    fx.plugin(
        "fake",
        &format!(
            "printf '%s' '{PASSPHRASE}'\n\
             echo 'plugin: calling kms:Decrypt' >&2\n\
             echo 'AccessDeniedException: not authorized to use key 1234abcd' >&2\n\
             exit 7"
        ),
    );
    fx.seal_with_file("fake", "fake://k");

    fx.open(&["--retries", "0"])
        .expect_code(1)
        .expect_stderr("passphrase provider `fake`")
        .expect_stderr("exited with status 7")
        .expect_stderr("AccessDeniedException: not authorized to use key 1234abcd")
        .expect_no_stderr("calling kms:Decrypt")
        .expect_no_stderr("warning:");
    fx.assert_no_output();
    assert_eq!(fx.runs(), 1, "--retries 0 runs the plugin once");
}

#[test]
fn failing_plugin_is_retried() {
    let fx = Fixture::new();
    fx.plugin("fake", "echo 'kms: throttled' >&2; exit 1");
    fx.seal_with_file("fake", "fake://k");

    fx.open(&["--retries", "1"])
        .expect_code(1)
        .expect_stderr("warning:")
        .expect_stderr("attempt 1 of 2 failed")
        .expect_stderr("retrying in 1s")
        .expect_stderr("kms: throttled")
        .expect_stderr("after 2 attempts");
    fx.assert_no_output();
    assert_eq!(fx.runs(), 2, "--retries 1 runs the plugin twice");
}

#[test]
fn plugin_that_fails_once_then_succeeds() {
    let fx = Fixture::new();
    fx.plugin(
        "fake",
        &format!(
            "if [ \"$n\" -lt 2 ]; then echo 'kms: temporarily unavailable' >&2; exit 1; fi\n{}",
            get_passphrase_body("fake://k")
        ),
    );
    fx.seal_with_file("fake", "fake://k");

    fx.open(&["--retries", "1"])
        .expect_code(0)
        .expect_stderr("warning:")
        .expect_stderr("kms: temporarily unavailable")
        .expect_stderr("decrypted document 1");
    fx.assert_opened();
    assert_eq!(fx.runs(), 2);
}

#[test]
fn slow_plugin_times_out_and_its_children_are_killed() {
    let fx = Fixture::new();
    fx.plugin("fake", &format!("sleep 30 &\necho $! > {}\nwait", fx.quoted("sleeper.pid")));
    fx.seal_with_file("fake", "fake://k");

    fx.open(&["--plugin-timeout", "1", "--retries", "0"])
        .expect_code(1)
        .expect_stderr("passphrase provider `fake`")
        .expect_stderr("timed out after 1s")
        .expect_within(PROMPT);
    fx.assert_no_output();
    assert_eq!(fx.runs(), 1);
    assert_process_ends(&fx.path("sleeper.pid"));
}

#[test]
fn plugin_whose_background_child_holds_stdout_does_not_hang() {
    let fx = Fixture::new();
    // The plugin prints the passphrase and exits 0, but a process it started keeps its stdout open.
    fx.plugin(
        "fake",
        &format!("{}\nsleep 30 &\necho $! > {}\nexit 0", get_passphrase_body("fake://k"), fx.quoted("sleeper.pid")),
    );
    fx.seal_with_file("fake", "fake://k");

    let run = fx.open(&["--plugin-timeout", "20", "--retries", "0"]);
    run.expect_within(PROMPT);
    assert_process_ends(&fx.path("sleeper.pid"));
    assert_eq!(fx.runs(), 1);
    // cryptadm gives the stray process a grace second, then kills the plugin's process group. What the plugin
    // printed before is then either used or refused with an error; it is never half-written to --out.
    match run.code {
        Some(0) => fx.assert_opened(),
        Some(1) => {
            run.expect_stderr("passphrase provider `fake`");
            fx.assert_no_output();
        }
        other => panic!("unexpected exit status {other:?}; stderr:\n{}", run.stderr),
    }
}

/// Regression: a plugin that exits 0 after printing its passphrase, leaving a background child holding its
/// stdout, used to lose what it printed once the grace second ran out ("printed an empty passphrase").
#[test]
fn plugin_whose_background_child_holds_stdout_still_delivers_its_passphrase() {
    let fx = Fixture::new();
    fx.plugin(
        "fake",
        &format!("{}\nsleep 30 &\necho $! > {}\nexit 0", get_passphrase_body("fake://k"), fx.quoted("sleeper.pid")),
    );
    fx.seal_with_file("fake", "fake://k");

    fx.open(&["--retries", "0"]).expect_code(0).expect_no_stderr("empty passphrase").expect_within(PROMPT);
    fx.assert_opened();
    assert_process_ends(&fx.path("sleeper.pid"));
}

#[test]
fn oversized_plugin_output_is_refused_without_retry() {
    let fx = Fixture::new();
    // 1 MiB of lines holding the passphrase.
    fx.plugin("fake", &format!("yes '{PASSPHRASE}' | head -c 1048576"));
    fx.seal_with_file("fake", "fake://k");

    fx.open(&[])
        .expect_code(1)
        .expect_stderr("passphrase provider `fake`")
        .expect_stderr("more than 4096 bytes")
        .expect_no_stderr("warning:")
        .expect_within(PROMPT);
    fx.assert_no_output();
    assert_eq!(fx.runs(), 1, "oversized output is not retried (default --retries 2)");
}

#[test]
fn missing_plugin_is_not_found_with_a_hint() {
    let fx = Fixture::new();
    fx.seal_with_file("missing", "missing://k");

    fx.open(&[])
        .expect_code(5)
        .expect_stderr("machineadm-plugin-encryption-provider-missing")
        .expect_stderr("not found")
        .expect_stderr("hint:")
        .expect_stderr("--passphrase-file");
    fx.assert_no_output();
}

#[test]
fn plugin_without_execute_permission_is_not_found() {
    let fx = Fixture::new();
    fx.plugin("fake", &get_passphrase_body("fake://k"));
    let plugin = fx.path("bin/machineadm-plugin-encryption-provider-fake");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&plugin, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    fx.seal_with_file("fake", "fake://k");

    fx.open(&[]).expect_code(5).expect_stderr("machineadm-plugin-encryption-provider-fake");
    fx.assert_no_output();
    assert_eq!(fx.runs(), 0);
}

#[test]
fn document_with_a_path_as_provider_is_invalid_input() {
    let fx = Fixture::new();
    fx.seal_with_file("fake", "fake://k");
    let sealed = std::fs::read_to_string(fx.path("sealed.yaml")).expect("sealed");
    assert!(sealed.contains("provider: fake\n"), "{sealed}");
    fx.scratch.write("sealed.yaml", sealed.replace("provider: fake\n", "provider: ../x\n"));
    // A trap that a path-joining lookup would reach: bin/machineadm-plugin-encryption-provider-../x
    std::fs::create_dir(fx.path("bin/machineadm-plugin-encryption-provider-..")).expect("mkdir");
    fx.scratch.script(
        "bin/machineadm-plugin-encryption-provider-../x",
        &format!("#!/bin/sh\ntouch {}\nprintf '%s' '{PASSPHRASE}'\n", fx.quoted("trap-ran")),
    );

    fx.open(&[]).expect_code(3).expect_stderr("not a valid plugin name");
    fx.assert_no_output();
    assert!(!fx.path("trap-ran").exists(), "no executable was run for an invalid provider name");
}

const KEY_ARN: &str = "arn:aws:kms:us-west-2:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab";

/// The passphraseURI a KMS plugin records: the encrypted data key and the key it is encrypted under.
fn kms_uri() -> String {
    format!("kms://QUJDREVGR0hJSktMTU5PUA==@{KEY_ARN}")
}

/// A plugin that implements both verbs like a KMS GenerateDataKey / Decrypt pair.
fn kms_plugin_body() -> String {
    let encoded = cryptadm::crypto::encoding::b64_encode(PASSPHRASE.as_bytes());
    let uri = kms_uri();
    format!(
        "case \"$1\" in\n\
         new-passphrase)\n\
         \x20 [ \"$#\" -eq 2 ] && [ \"$2\" = '{KEY_ARN}' ] || {{ echo \"plugin: bad arguments: $*\" >&2; exit 64; }}\n\
         \x20 printf '%s' '{{\"passphrase\":\"{encoded}\",\"passphraseURI\":\"{uri}\"}}' ;;\n\
         get-passphrase)\n\
         \x20 [ \"$#\" -eq 2 ] && [ \"$2\" = '{uri}' ] || {{ echo \"plugin: bad arguments: $*\" >&2; exit 64; }}\n\
         \x20 printf '%s' '{PASSPHRASE}' ;;\n\
         *) echo \"plugin: unsupported verb $1\" >&2; exit 3 ;;\n\
         esac"
    )
}

fn seal_with_plugin(fx: &Fixture, provider: &str) -> Run {
    fx.run(&[
        "bootstrap",
        "seal",
        "--provider",
        provider,
        "--passphrase-uri",
        KEY_ARN,
        "--in",
        "plain.yaml",
        "--out",
        "sealed.yaml",
    ])
}

#[test]
fn new_passphrase_plugin_seals_and_get_passphrase_opens() {
    let fx = Fixture::new();
    fx.plugin("kms", &kms_plugin_body());

    seal_with_plugin(&fx, "kms").expect_code(0);
    assert_eq!(fx.runs(), 1);
    assert_eq!(fx.argv(), format!("new-passphrase\n{KEY_ARN}\n"));
    let sealed = std::fs::read(fx.path("sealed.yaml")).expect("sealed document");
    let documents = cryptadm::machineadm::parse_stream(&sealed).expect("a valid stream");
    let [cryptadm::machineadm::Document::Encrypted(doc)] = documents.as_slice() else {
        panic!("expected one EncryptedConfig, got {documents:?}");
    };
    assert_eq!(doc.provider, "kms");
    assert_eq!(doc.passphrase_uri, kms_uri(), "the document records the plugin's passphraseURI");

    fx.open(&[]).expect_code(0);
    fx.assert_opened();
    assert_eq!(fx.runs(), 2);
    assert_eq!(fx.argv(), format!("new-passphrase\n{KEY_ARN}\nget-passphrase\n{}\n", kms_uri()));

    // The document is sealed with exactly the bytes the plugin's base64 decodes to.
    std::fs::remove_file(fx.path("out.yaml")).expect("remove");
    fx.open(&["--passphrase-file", "passphrase"]).expect_code(0);
    fx.assert_opened();
    assert_eq!(fx.runs(), 2, "an explicit passphrase runs no plugin");
}

#[test]
fn new_passphrase_garbage_fails_without_retry() {
    let fx = Fixture::new();
    fx.plugin("kms", &format!("printf '%s' 'passphrase={PASSPHRASE}'"));

    seal_with_plugin(&fx, "kms")
        .expect_code(1)
        .expect_stderr("passphrase provider `kms`")
        .expect_stderr("not the expected JSON")
        .expect_no_stderr("warning:");
    assert!(!fx.path("sealed.yaml").exists(), "a failed seal must not write --out");
    assert_eq!(fx.runs(), 1, "output that is not JSON is not retried");
}

#[test]
fn new_passphrase_with_bad_base64_fails() {
    let fx = Fixture::new();
    fx.plugin("kms", &format!("printf '%s' '{{\"passphrase\":\"{PASSPHRASE}!\",\"passphraseURI\":\"kms://x@y\"}}'"));

    seal_with_plugin(&fx, "kms").expect_code(1).expect_stderr("not standard base64");
    assert!(!fx.path("sealed.yaml").exists(), "a failed seal must not write --out");
}

#[test]
fn unsupported_new_passphrase_verb_is_not_retried() {
    let fx = Fixture::new();
    fx.plugin(
        "fake",
        "if [ \"$1\" = new-passphrase ]; then echo 'plugin: unsupported verb new-passphrase' >&2; exit 3; fi\nexit 1",
    );

    seal_with_plugin(&fx, "fake")
        .expect_code(1)
        .expect_stderr("passphrase provider `fake`")
        .expect_stderr("exited with status 3")
        .expect_stderr("unsupported verb new-passphrase")
        .expect_no_stderr("warning:")
        .expect_within(PROMPT);
    assert!(!fx.path("sealed.yaml").exists(), "a failed seal must not write --out");
    assert_eq!(fx.runs(), 1, "exit 3 (verb not supported) is final");
}

/// Issue 15: a plugin never inherits cryptadm's secrets. The registry passwords and the passphrase file variable
/// are set (the open itself uses none of them); the plugin writes its whole environment to a file.
#[test]
fn plugins_never_inherit_secret_variables() {
    let fx = Fixture::new();
    fx.plugin("fake", &format!("env > {}\n{}", fx.quoted("plugin.env"), get_passphrase_body("fake://k")));
    fx.seal_with_file("fake", "fake://k");
    let secrets = [
        ("CRYPTADM_SRC_PASSWORD", "src-secret-4711"),
        ("CRYPTADM_DEST_PASSWORD", "dest-secret-4712"),
        ("CRYPTADM_REGISTRY_PASSWORD", "registry-secret-4713"),
        ("CRYPTADM_SRC_PASSWORD_FILE", "/run/secret-file-4714"),
        // AWS keys go as a pair: the id alone would stop the plugin's own credential chain.
        ("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE4716"),
        ("AWS_SECRET_ACCESS_KEY", "aws-secret-4717"),
        ("AWS_SESSION_TOKEN", "aws-session-4718"),
    ];
    let mut command = cryptadm();
    command
        .env("PATH", fx.search_path())
        .env("SOMETHING_ORDINARY", "kept-4715")
        .current_dir(fx.scratch.dir.path())
        .args(["bootstrap", "open", "--in", "sealed.yaml", "--out", "out.yaml"]);
    for (name, value) in secrets {
        command.env(name, value);
    }
    let output = command.timeout(HARD_LIMIT).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    fx.assert_opened();
    let environment = std::fs::read_to_string(fx.path("plugin.env")).expect("the plugin ran");
    assert!(environment.contains("SOMETHING_ORDINARY=kept-4715"), "the rest of the environment is passed on");
    for (name, value) in secrets {
        assert!(!environment.contains(name) && !environment.contains(value), "{name} reached the plugin");
    }
}
