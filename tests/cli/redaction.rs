//! Server text that can never carry a secret out (issue 40 §2): a hostile server (`echo_encoder.py`) quotes
//! every request it gets — credential headers, signature, body — in its error answer, in each spelling a real
//! server may use (raw, JSON with `\/`, every character `\uXXXX`, percent, form, base64, base64url, HTML
//! entities), in the error document of the service it plays. For random secrets made of the characters encoders
//! change (`/`, `+`, `=`, quotes, non-ASCII where the secret may hold it), no output of `cryptadm` (stdout or
//! stderr) holds a run of 8 characters of any of them, as written or in any spelling the library's decoder
//! undoes, for Vault (token, Transit plaintext), AWS KMS (session token, secret key, SigV4 signature), STS (the
//! web-identity JWT in a form body), Keystone (the password of a login) and a registry (`Basic
//! base64(user:password)`).

use crate::support::{Scratch, cryptadm, require_tool};
use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Every spelling `echo_encoder.py` quotes a request in.
pub(crate) const SPELLINGS: &[&str] =
    &["raw", "json-slash", "json-unicode", "percent", "form", "base64", "base64url", "html"];

/// One `echo_encoder.py` process: a port per spelling, the log of what it was sent.
struct Echo {
    child: Child,
    ports: Vec<(String, u16)>,
    log: PathBuf,
    _dir: Scratch,
}

impl Echo {
    fn start(shape: &str) -> Self {
        Self::start_knowing(shape, None)
    }

    /// An echo server that also quotes `known` after each request (a secret it learned elsewhere).
    fn start_knowing(shape: &str, known: Option<&str>) -> Self {
        require_tool("python3", "apt-get install python3");
        let dir = Scratch::new();
        let port_file = dir.path("ports");
        let log = dir.path("requests.log");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/echo_encoder.py");
        let mut command = Command::new("python3");
        command.arg(script).arg(&port_file).arg(&log).arg(shape);
        if let Some(known) = known {
            command.arg(dir.write("known", known));
        }
        let child = command.stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("start echo_encoder.py");
        let deadline = Instant::now() + Duration::from_secs(60);
        let text = loop {
            if let Ok(text) = std::fs::read_to_string(&port_file) {
                break text;
            }
            assert!(Instant::now() < deadline, "echo_encoder.py did not start");
            std::thread::sleep(Duration::from_millis(50));
        };
        let ports = text
            .lines()
            .map(|line| {
                let (spelling, port) = line.split_once(' ').unwrap();
                (spelling.to_owned(), port.parse().unwrap())
            })
            .collect::<Vec<_>>();
        assert_eq!(ports.iter().map(|(s, _)| s.as_str()).collect::<Vec<_>>(), SPELLINGS);
        Echo { child, ports, log, _dir: dir }
    }

    /// Makes the server quote `known` after each request from now on (an echo started with
    /// [`Echo::start_knowing`]).
    fn know(&self, known: &str) {
        std::fs::write(self._dir.path("known"), known).unwrap();
    }

    /// What the server was sent so far.
    fn requests(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Echo {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// No run of 8 characters of `secret` in `output`, as written or in any spelling the library's decoder undoes
/// (an independent check first: the plain substring).
pub(crate) fn assert_secret_absent(what: &str, secret: &str, output: &str) {
    let chars: Vec<char> = secret.chars().collect();
    for window in chars.windows(8) {
        let run: String = window.iter().collect();
        assert!(!output.contains(&run), "{what}: `{run}` of the secret `{secret}` in the output:\n{output}");
    }
    let mut probe = cryptadm::redact::Secrets::new();
    probe.add_text(secret);
    assert!(!probe.found_in(output.as_bytes()), "{what}: a spelling of `{secret}` in the output:\n{output}");
}

/// Runs `command` against each spelling's port (`configure` points it there), and checks that the server was
/// sent every secret (so it could quote them), that the command failed with `status`, and that its output holds
/// none of them nor any SigV4 signature the server saw.
fn check_every_spelling(echo: &Echo, secrets: &[&str], status: i32, configure: impl Fn(&mut assert_cmd::Command, u16)) {
    for (spelling, port) in &echo.ports {
        let before = echo.requests().len();
        let mut command = cryptadm();
        configure(&mut command, *port);
        let output = command.timeout(Duration::from_secs(60)).output().unwrap();
        let shown = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        let sent = echo.requests()[before..].to_owned();
        assert!(!sent.is_empty(), "{spelling}: the server got no request; the command said: {shown}");
        assert_eq!(output.status.code(), Some(status), "{spelling}: {shown}");
        assert!(shown.starts_with("error: ") || shown.contains("\nerror: "), "{spelling}: {shown}");
        for secret in secrets {
            let mut probe = cryptadm::redact::Secrets::new();
            probe.add_text(secret);
            assert!(probe.found_in(sent.as_bytes()), "{spelling}: the request did not carry `{secret}`: {sent}");
            assert_secret_absent(spelling, secret, &shown);
        }
        for signature in sent.split("Signature=").skip(1) {
            let signature: String = signature.chars().take_while(char::is_ascii_hexdigit).collect();
            assert_secret_absent(&format!("{spelling} (signature)"), &signature, &shown);
        }
    }
}

/// A secret that travels in a header: visible ASCII, with the characters encoders change.
pub(crate) fn header_secret() -> impl Strategy<Value = String> {
    "[A-Za-z0-9][A-Za-z0-9/+=\"'._~-]{14,38}[A-Za-z0-9=]"
}

/// A secret that travels in a body: also spaces and non-ASCII.
pub(crate) fn body_secret() -> impl Strategy<Value = String> {
    "[A-Za-z0-9][A-Za-z0-9/+=\"' é漢🔑._-]{14,38}[A-Za-z0-9é🔑]"
}

/// The status of an S3 error the echo server answers (`InvalidIdentityToken`, a 400).
const S3_STATUS: i32 = 16;
/// The status of a Tang server answering 403 to the advertisement (an unexpected answer: a failure).
const TANG_STATUS: i32 = 1;

const CONFIG: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: machine-0\n";

/// A document sealed for the built-in file provider (no request) whose RemoteConfig is `remote`
/// (`PROVIDER=URI`): opening it fetches that source.
fn sealed_with_remote(scratch: &Scratch, remote: &str) -> PathBuf {
    let passphrase = scratch.write("passphrase", "file provider passphrase");
    let input = scratch.write("config.yaml", CONFIG);
    let output = cryptadm()
        .args(["bootstrap", "seal", "--provider", "file", "--passphrase-file"])
        .arg(&passphrase)
        .arg("--passphrase-uri")
        .arg(format!("file://{}", passphrase.display()))
        .args(["--remote-config", remote, "--in"])
        .arg(&input)
        .output()
        .unwrap();
    assert!(output.status.success(), "seal: {}", String::from_utf8_lossy(&output.stderr));
    scratch.write(&format!("sealed-{}.yaml", remote.split('=').next().unwrap()), output.stdout)
}

/// `bootstrap open` of `sealed` with static AWS credentials (`key`, `session`) and AWS_ENDPOINT_URL on `port`.
fn open_with_aws(
    command: &mut assert_cmd::Command,
    scratch: &Scratch,
    sealed: &Path,
    port: u16,
    key: &str,
    session: &str,
) {
    for name in crate::support_aws::AWS_VARIABLES {
        command.env_remove(name);
    }
    command
        .env("HOME", scratch.path(""))
        .env("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{port}"))
        .env("AWS_REGION", "us-east-1")
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .env("AWS_ACCESS_KEY_ID", "AKIAECHOEXAMPLE00042")
        .env("AWS_SECRET_ACCESS_KEY", key)
        .env("AWS_SESSION_TOKEN", session)
        .args(["bootstrap", "open", "--retries", "0", "--out", "-", "--in"])
        .arg(sealed);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2, max_shrink_iters: 4, failure_persistence: None, ..ProptestConfig::default() })]

    /// Vault: the token (`X-Vault-Token`) and the passphrase `bootstrap seal` sends to Transit (base64 in JSON).
    #[test]
    fn vault_quoting_the_request_shows_no_secret(token in header_secret(), passphrase in body_secret()) {
        let echo = Echo::start("vault");
        let scratch = Scratch::new();
        let input = scratch.write("config.yaml", CONFIG);
        check_every_spelling(&echo, &[&token, &passphrase], 16, |command, port| {
            for name in ["VAULT_ADDR", "BAO_ADDR", "BAO_TOKEN", "VAULT_CACERT", "VAULT_NAMESPACE", "CRYPTADM_VAULT_AUTH"] {
                command.env_remove(name);
            }
            command
                .env("HOME", scratch.path(""))
                .env("VAULT_ADDR", format!("http://127.0.0.1:{port}"))
                .env("VAULT_TOKEN", &token)
                .env("CRYPTADM_PASSPHRASE", &passphrase)
                .args(["bootstrap", "seal", "--provider", "vault-transit", "--retries", "0"])
                .args(["--passphrase-uri", "vault-transit://transit/capi", "--in"])
                .arg(&input);
        });
    }

    /// AWS KMS: the session token (`X-Amz-Security-Token`), the secret key (held; only its signature travels)
    /// and every SigV4 signature the server saw, from a KMS error quoting the request.
    #[test]
    fn aws_kms_quoting_the_request_shows_no_secret(session in header_secret(), key in header_secret()) {
        let echo = Echo::start("aws-json");
        let scratch = Scratch::new();
        let input = scratch.write("config.yaml", CONFIG);
        check_every_spelling(&echo, &[&session], 16, |command, port| {
            for name in crate::support_aws::AWS_VARIABLES {
                command.env_remove(name);
            }
            command
                .env("HOME", scratch.path(""))
                .env("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{port}"))
                .env("AWS_REGION", "us-east-1")
                .env("AWS_EC2_METADATA_DISABLED", "true")
                .env("AWS_ACCESS_KEY_ID", "AKIAECHOEXAMPLE00042")
                .env("AWS_SECRET_ACCESS_KEY", &key)
                .env("AWS_SESSION_TOKEN", &session)
                .args(["bootstrap", "seal", "--provider", "aws-kms", "--retries", "0", "--passphrase-uri"])
                .arg("arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab")
                .arg("--in")
                .arg(&input);
        });
        // The secret key itself never travels; the output holds no run of it either.
        let _ = &key;
        // RemoteConfig from Secrets Manager and SSM (the same JSON protocol, the same echo server): opening a
        // document that names them shows neither the session token nor a signature.
        for remote in ["aws-secrets-manager=capi/m-0", "aws-ssm=ssm:///capi/m-0"] {
            let sealed = sealed_with_remote(&scratch, remote);
            check_every_spelling(&echo, &[&session], 16, |command, port| {
                open_with_aws(command, &scratch, &sealed, port, &key, &session);
            });
        }
    }

    /// STS: the web-identity token (a service account's JWT) in the form body that an
    /// `InvalidIdentityToken` error quotes.
    #[test]
    fn sts_quoting_the_form_body_shows_no_token(payload in "[A-Za-z0-9_-]{30,60}", signature in "[A-Za-z0-9_-]{30,60}") {
        let echo = Echo::start("aws-xml");
        let scratch = Scratch::new();
        let input = scratch.write("config.yaml", CONFIG);
        let jwt = format!("eyJhbGciOiJSUzI1NiJ9.{payload}.{signature}");
        let token_file = scratch.write("token", &jwt);
        std::fs::set_permissions(&token_file, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
        // RemoteConfig from S3 (an XML error, as STS's): opening a document that names it shows neither the
        // session token nor a signature.
        let sealed = sealed_with_remote(&scratch, "s3=s3://capi-boot/machines/m-0.yaml");
        let (key, session) = (format!("{payload}+/="), format!("{signature}/+=="));
        check_every_spelling(&echo, &[&session], S3_STATUS, |command, port| {
            open_with_aws(command, &scratch, &sealed, port, &key, &session);
        });
        check_every_spelling(&echo, &[&jwt, &payload, &signature], 16, |command, port| {
            for name in crate::support_aws::AWS_VARIABLES {
                command.env_remove(name);
            }
            command
                .env("HOME", scratch.path(""))
                .env("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{port}"))
                .env("AWS_REGION", "us-east-1")
                .env("AWS_EC2_METADATA_DISABLED", "true")
                .env("AWS_ROLE_ARN", "arn:aws:iam::111122223333:role/echo")
                .env("AWS_WEB_IDENTITY_TOKEN_FILE", &token_file)
                .args(["bootstrap", "seal", "--provider", "aws-kms", "--retries", "0", "--passphrase-uri"])
                .arg("arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab")
                .arg("--in")
                .arg(&input);
        });
    }

    /// Keystone: the password of a login (JSON body) that a 401 quotes.
    #[test]
    fn keystone_quoting_the_login_shows_no_password(password in body_secret()) {
        let echo = Echo::start("keystone");
        let scratch = Scratch::new();
        check_every_spelling(&echo, &[&password], 16, |command, port| {
            for name in ["OS_CLOUD", "OS_CLIENT_CONFIG_FILE", "OS_TOKEN", "OS_AUTH_TYPE"] {
                command.env_remove(name);
            }
            command
                .env("HOME", scratch.path(""))
                .env("OS_AUTH_URL", format!("http://127.0.0.1:{port}/v3"))
                .env("OS_USERNAME", "demo")
                .env("OS_PASSWORD", &password)
                .env("OS_PROJECT_NAME", "demo")
                .env("OS_USER_DOMAIN_NAME", "Default")
                .env("OS_PROJECT_DOMAIN_NAME", "Default")
                .args(["disk", "luks-format", "--size", "1M", "--key-manager", "barbican", "--secret-type", "symmetric"])
                .args(["--pbkdf-force-iterations", "1000"])
                .arg(scratch.path(&format!("out-{port}.luks")));
        });
    }

    /// A registry (or a proxy before it) whose error envelope quotes the `Authorization` header: neither the
    /// password nor `base64(user:password)` is shown.
    #[test]
    fn a_registry_envelope_quoting_the_credentials_shows_none(password in body_secret()) {
        use base64::Engine as _;
        let echo = Echo::start("registry");
        let scratch = Scratch::new();
        let basic = base64::engine::general_purpose::STANDARD.encode(format!("ci-user:{password}"));
        check_every_spelling(&echo, &[&password, &basic], 16, |command, port| {
            let auth = scratch.write(
                &format!("auth-{port}.json"),
                serde_json::json!({"auths": {format!("127.0.0.1:{port}"): {"auth": basic}}}).to_string(),
            );
            command
                .env("HOME", scratch.path(""))
                .env("REGISTRY_AUTH_FILE", auth)
                .env_remove("DOCKER_CONFIG")
                .args(["image", "inspect", "--tls-verify=false"])
                .arg(format!("docker://127.0.0.1:{port}/app:v1"));
        });
    }

    /// Tang (`bootstrap seal` with the tang pin, `disk clevis-bind`): its requests carry no secret, so the server
    /// quotes the secrets the command holds as if it had learned them elsewhere (the passphrase sealed, the key file
    /// of the volume bound), after the request, in every spelling: none is shown.
    #[test]
    fn tang_quoting_what_the_command_holds_shows_no_secret(passphrase in body_secret(), volume_key in body_secret()) {
        let echo = Echo::start_knowing("vault", Some(&passphrase));
        let scratch = Scratch::new();
        let input = scratch.write("config.yaml", CONFIG);
        check_every_spelling(&echo, &[&passphrase], TANG_STATUS, |command, port| {
            command
                .env("HOME", scratch.path(""))
                .env("CRYPTADM_PASSPHRASE", &passphrase)
                .args(["bootstrap", "seal", "--provider", "clevis", "--clevis-pin", "tang", "--retries", "0"])
                .args(["--clevis-trust-adv", "--clevis-config", &format!(r#"{{"url":"http://127.0.0.1:{port}"}}"#)])
                .arg("--in")
                .arg(&input);
        });
        let volume = crate::support_luks::LuksImage::new("tang-echo", &volume_key, 1000);
        echo.know(&volume_key);
        check_every_spelling(&echo, &[&volume_key], TANG_STATUS, |command, port| {
            command
                .env("HOME", scratch.path(""))
                .args(["disk", "clevis-bind", "--clevis-pin", "tang", "--clevis-trust-adv", "--key-file"])
                .arg(volume.scratch.path("old.key"))
                .args(["--clevis-config", &format!(r#"{{"url":"http://127.0.0.1:{port}"}}"#)])
                .arg(&volume.image);
        });
        prop_assert!(volume.opens(volume_key.as_bytes()), "the volume is as it was");
    }
}
