//! OpenBao/Vault against a REAL OpenBao (`support_openbao`): the `vault-transit` bootstrap provider (seal with a
//! token or AppRole, open on "the machine" with only a JWT role), interop with an independent Python
//! implementation, denial, sealing, TLS, Transit key rotation, and secrets kept out of errors and children.

use crate::support::{Scratch, cryptadm};
use crate::support_openbao::{OpenBao, big_403, chmod, dev, drip, echo_400, echo_403, make_tls, with_real};
use std::path::{Path, PathBuf};
use std::process::Command;

const CONFIG: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: machine-0\n";

/// `cryptadm` with nothing of the caller's Vault environment and a scratch HOME (no ~/.vault-token).
fn bare(scratch: &Scratch) -> assert_cmd::Command {
    let mut cmd = cryptadm();
    for name in [
        "VAULT_ADDR",
        "BAO_ADDR",
        "VAULT_TOKEN",
        "BAO_TOKEN",
        "VAULT_CACERT",
        "BAO_CACERT",
        "VAULT_CAPATH",
        "VAULT_NAMESPACE",
        "VAULT_SKIP_VERIFY",
        "BAO_SKIP_VERIFY",
        "CRYPTADM_VAULT_AUTH",
        "CRYPTADM_VAULT_ROLE",
        "CRYPTADM_VAULT_JWT_FILE",
    ] {
        cmd.env_remove(name);
    }
    let home = scratch.path("home");
    std::fs::create_dir_all(&home).unwrap();
    cmd.env("HOME", home);
    cmd
}

/// `cryptadm` reaching `bao` with `token`.
fn with_token(bao: &OpenBao, scratch: &Scratch, token: &str) -> assert_cmd::Command {
    let mut cmd = bare(scratch);
    cmd.envs(bao.env()).env("VAULT_TOKEN", token);
    cmd
}

/// `cryptadm` on "the machine": the Vault address and a JWT login from the environment only, no token.
fn machine(bao: &OpenBao, scratch: &Scratch, role: &str) -> assert_cmd::Command {
    let jwt = bao.jwt_file(scratch, role);
    let mut cmd = bare(scratch);
    cmd.envs(bao.env())
        .env("CRYPTADM_VAULT_AUTH", "jwt")
        .env("CRYPTADM_VAULT_ROLE", role)
        .env("CRYPTADM_VAULT_JWT_FILE", jwt);
    cmd
}

fn seal(mut cmd: assert_cmd::Command, scratch: &Scratch, uri: &str) -> String {
    let input = scratch.write("config.yaml", CONFIG);
    let output = cmd
        .args(["bootstrap", "seal", "--provider", "vault-transit", "--passphrase-uri", uri, "--in"])
        .arg(&input)
        .output()
        .unwrap();
    assert!(output.status.success(), "seal failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

fn passphrase_uri(document: &str) -> String {
    document
        .lines()
        .find_map(|l| l.trim().strip_prefix("passphraseURI: "))
        .expect("a passphraseURI")
        .trim_matches(['"', '\''])
        .to_owned()
}

fn open(cmd: assert_cmd::Command, scratch: &Scratch, sealed: &str) -> std::process::Output {
    open_with(cmd, scratch, sealed, &[])
}

/// [`open`] with more flags of `bootstrap open`.
fn open_with(
    mut cmd: assert_cmd::Command,
    scratch: &Scratch,
    sealed: &str,
    flags: &[&std::ffi::OsStr],
) -> std::process::Output {
    let input = scratch.write("sealed.yaml", sealed);
    cmd.args(["bootstrap", "open", "--retries", "0", "--in"]).arg(input).args(["--out", "-"]).args(flags);
    cmd.output().unwrap()
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn seal_with_a_token_and_open_on_the_machine_with_only_a_jwt_role() {
    let bao = dev();
    let scratch = Scratch::new();
    let sealed = seal(with_token(bao, &scratch, &bao.root_token), &scratch, "vault-transit://transit/capi");
    assert!(sealed.contains("provider: vault-transit"), "{sealed}");
    let uri = passphrase_uri(&sealed);
    assert!(uri.starts_with("vault-transit://") && uri.ends_with("@transit/capi"), "{uri}");
    let opened = open(machine(bao, &scratch, "machine"), &scratch, &sealed);
    assert!(opened.status.success(), "{}", stderr(&opened));
    assert_eq!(String::from_utf8_lossy(&opened.stdout), CONFIG);
}

/// A machine without a CA bundle (a minimal root; to the platform's verifier, `SSL_CERT_FILE` and `SSL_CERT_DIR`
/// naming an empty file and directory are the same): a plain-HTTP server needs no roots, so the machine opens (it used to fail with "setting up
/// the HTTPS client: builder error", exit 3, in an Ignition guest); an https one cannot be verified and says why.
#[test]
fn a_machine_without_a_ca_bundle_opens_over_http_and_says_why_https_cannot_be_verified() {
    let bao = dev();
    let scratch = Scratch::new();
    let sealed = seal(with_token(bao, &scratch, &bao.root_token), &scratch, "vault-transit://transit/capi");
    let no_cas = scratch.write("no-cas.pem", "");
    let no_ca_dir = scratch.path("no-cas");
    std::fs::create_dir(&no_ca_dir).unwrap();
    let without_cas = |cmd: &mut assert_cmd::Command| {
        cmd.env("SSL_CERT_FILE", &no_cas).env("SSL_CERT_DIR", &no_ca_dir);
    };
    let mut cmd = machine(bao, &scratch, "machine");
    without_cas(&mut cmd);
    let opened = open(cmd, &scratch, &sealed);
    assert!(opened.status.success(), "{}", stderr(&opened));
    assert_eq!(String::from_utf8_lossy(&opened.stdout), CONFIG);
    let mut cmd = machine(bao, &scratch, "machine");
    without_cas(&mut cmd);
    cmd.env("VAULT_ADDR", bao.addr.replace("http://", "https://"));
    let opened = open(cmd, &scratch, &sealed);
    assert_eq!(opened.status.code(), Some(3), "{}", stderr(&opened));
    assert!(stderr(&opened).contains("No CA certificates were loaded from the system"), "{}", stderr(&opened));
}

#[test]
fn seal_with_approle_and_open_with_a_kubernetes_login() {
    let bao = dev();
    let scratch = Scratch::new();
    let input = scratch.write("config.yaml", CONFIG);
    let output = bare(&scratch)
        .envs(bao.env())
        .args(["bootstrap", "seal", "--provider", "vault-transit", "--passphrase-uri", "vault-transit://transit/capi"])
        .args(["--vault-auth", "approle", "--vault-role-id", &bao.approle_role_id, "--vault-secret-id-file"])
        .arg(&bao.approle_secret_id_file)
        .arg("--in")
        .arg(&input)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let sealed = String::from_utf8(output.stdout).unwrap();
    let jwt = bao.jwt_file(&scratch, "machine");
    let mut node = bare(&scratch);
    node.envs(bao.env());
    let input = scratch.write("sealed.yaml", &sealed);
    let opened = node
        .args(["bootstrap", "open", "--in"])
        .arg(input)
        .args(["--out", "-", "--vault-auth", "kubernetes", "--vault-role", "machine", "--vault-jwt-file"])
        .arg(jwt)
        .output()
        .unwrap();
    assert!(opened.status.success(), "{}", stderr(&opened));
    assert_eq!(String::from_utf8_lossy(&opened.stdout), CONFIG);
}

#[test]
fn a_role_without_decrypt_is_denied_with_16_and_no_secret_in_the_error() {
    let bao = dev();
    let scratch = Scratch::new();
    let sealed = seal(with_token(bao, &scratch, &bao.root_token), &scratch, "vault-transit://transit/capi");
    let opened = open(machine(bao, &scratch, "sealer"), &scratch, &sealed);
    assert_eq!(opened.status.code(), Some(16), "{}", stderr(&opened));
    let error = stderr(&opened);
    assert!(error.contains("permission denied") && error.contains("transit/capi"), "{error}");
    assert!(error.contains("hint:"), "{error}");
    // A token with a policy that cannot decrypt: also 16, and the token is not in the message.
    let token = bao.token_with_policy("sealer");
    let opened = open(with_token(bao, &scratch, &token), &scratch, &sealed);
    assert_eq!(opened.status.code(), Some(16), "{}", stderr(&opened));
    assert!(!stderr(&opened).contains(&token));
    // A JWT for another role than the one asked for: the login fails, 16.
    let mut cmd = bare(&scratch);
    cmd.envs(bao.env())
        .env("CRYPTADM_VAULT_AUTH", "jwt")
        .env("CRYPTADM_VAULT_ROLE", "machine")
        .env("CRYPTADM_VAULT_JWT_FILE", bao.jwt_file(&scratch, "nothing"));
    let opened = open(cmd, &scratch, &sealed);
    assert_eq!(opened.status.code(), Some(16), "{}", stderr(&opened));
    assert!(stderr(&opened).contains("JWT login as role `machine`"), "{}", stderr(&opened));
}

#[test]
fn an_unknown_key_is_5_and_a_bad_token_is_16() {
    let bao = dev();
    let scratch = Scratch::new();
    let input = scratch.write("config.yaml", CONFIG);
    let output = with_token(bao, &scratch, &bao.root_token)
        .args(["bootstrap", "seal", "--provider", "vault-transit", "--passphrase-uri"])
        .arg("vault-transit://transit/no-such-key")
        .arg("--in")
        .arg(&input)
        .output()
        .unwrap();
    // Transit's datakey endpoint does not create keys: the key is not found.
    assert_eq!(output.status.code(), Some(5), "{}", stderr(&output));
    let output = with_token(bao, &scratch, "not-a-token-4711")
        .args(["bootstrap", "seal", "--provider", "vault-transit", "--passphrase-uri", "vault-transit://transit/capi"])
        .arg("--in")
        .arg(&input)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(16), "{}", stderr(&output));
    assert!(!stderr(&output).contains("not-a-token-4711"), "{}", stderr(&output));
}

#[test]
fn after_a_transit_key_rotation_old_documents_still_open() {
    let bao = dev();
    let scratch = Scratch::new();
    let old = seal(with_token(bao, &scratch, &bao.root_token), &scratch, "vault-transit://transit/rotating");
    bao.bao(&["write", "-f", "transit/keys/rotating/rotate"]);
    let new = seal(with_token(bao, &scratch, &bao.root_token), &scratch, "vault-transit://transit/rotating");
    let wrapped = |doc: &str| {
        use base64::Engine as _;
        let uri = passphrase_uri(doc);
        let part = uri.trim_start_matches("vault-transit://").split('@').next().unwrap().to_owned();
        String::from_utf8(base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
    };
    let (old_version, new_version) = (wrapped(&old), wrapped(&new));
    assert_ne!(old_version.split(':').nth(1), new_version.split(':').nth(1), "{old_version} {new_version}");
    for document in [old, new] {
        let opened = open(with_token(bao, &scratch, &bao.root_token), &scratch, &document);
        assert!(opened.status.success(), "{}", stderr(&opened));
        assert_eq!(String::from_utf8_lossy(&opened.stdout), CONFIG);
    }
}

#[test]
fn a_wrong_address_fails_with_1_and_a_hint() {
    let scratch = Scratch::new();
    let bao = dev();
    let sealed = seal(with_token(bao, &scratch, &bao.root_token), &scratch, "vault-transit://transit/capi");
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut cmd = bare(&scratch);
    cmd.env("VAULT_ADDR", format!("http://127.0.0.1:{closed}")).env("VAULT_TOKEN", &bao.root_token);
    let opened = open(cmd, &scratch, &sealed);
    assert_eq!(opened.status.code(), Some(1), "{}", stderr(&opened));
    let error = stderr(&opened);
    assert!(error.contains("unavailable") && error.contains("hint:") && error.contains("VAULT_ADDR"), "{error}");
    // No address at all: a usage error that says what to set.
    let mut cmd = bare(&scratch);
    cmd.env("VAULT_TOKEN", "x");
    let opened = open(cmd, &scratch, &sealed);
    assert_eq!(opened.status.code(), Some(2), "{}", stderr(&opened));
    assert!(stderr(&opened).contains("VAULT_ADDR"), "{}", stderr(&opened));
}

#[test]
fn vault_skip_verify_is_refused_without_the_flag_and_token_files_must_be_private() {
    let bao = dev();
    let scratch = Scratch::new();
    let sealed = seal(with_token(bao, &scratch, &bao.root_token), &scratch, "vault-transit://transit/capi");
    let mut cmd = with_token(bao, &scratch, &bao.root_token);
    cmd.env("VAULT_SKIP_VERIFY", "true");
    let opened = open(cmd, &scratch, &sealed);
    assert_eq!(opened.status.code(), Some(2), "{}", stderr(&opened));
    assert!(stderr(&opened).contains("--vault-skip-verify"), "{}", stderr(&opened));

    let token_file = scratch.write("token", format!("{}\n", bao.root_token));
    chmod(&token_file, 0o644);
    let mut cmd = bare(&scratch);
    cmd.envs(bao.env());
    let input = scratch.write("sealed.yaml", &sealed);
    let run = |cmd: &mut assert_cmd::Command| {
        cmd.args(["bootstrap", "open", "--in"])
            .arg(&input)
            .args(["--out", "-", "--vault-token-file"])
            .arg(&token_file)
            .output()
            .unwrap()
    };
    let opened = run(&mut cmd);
    assert_eq!(opened.status.code(), Some(3), "{}", stderr(&opened));
    assert!(stderr(&opened).contains("chmod 600"), "{}", stderr(&opened));
    chmod(&token_file, 0o600);
    let mut cmd = bare(&scratch);
    cmd.envs(bao.env());
    let opened = run(&mut cmd);
    assert!(opened.status.success(), "{}", stderr(&opened));
    // ~/.vault-token is the fallback, with the same rule.
    let home_token = scratch.path("home/.vault-token");
    std::fs::write(&home_token, &bao.root_token).unwrap();
    chmod(&home_token, 0o600);
    let mut cmd = bare(&scratch);
    cmd.envs(bao.env());
    let opened = open(cmd, &scratch, &sealed);
    assert!(opened.status.success(), "{}", stderr(&opened));
}

fn oracle(args: &[&str], bao: &OpenBao) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/vault_transit_oracle.py");
    let output = Command::new("python3")
        .arg(script)
        .args(args)
        .env("BAO_ADDR", &bao.addr)
        .env("BAO_TOKEN", &bao.root_token)
        .output()
        .unwrap();
    assert!(output.status.success(), "oracle {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

fn machineadm_oracle() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/machineadm_oracle.py")
}

#[test]
fn the_python_oracle_opens_what_we_seal_and_we_open_what_it_seals() {
    let bao = dev();
    let scratch = Scratch::new();
    // Ours → the oracle: unwrap with plain HTTP, then the independent envelope implementation.
    let sealed = seal(with_token(bao, &scratch, &bao.root_token), &scratch, "vault-transit://transit/capi");
    let sealed_file = scratch.write("ours.yaml", &sealed);
    let key = scratch.path("unwrapped.key");
    oracle(&["unwrap", &passphrase_uri(&sealed), &key.display().to_string()], bao);
    let out = scratch.path("oracle-opened");
    let status = Command::new("python3")
        .arg(machineadm_oracle())
        .args(["open", "--in"])
        .arg(&sealed_file)
        .arg("--passphrase-file")
        .arg(&key)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), CONFIG);

    // The oracle's → ours: a data key by plain HTTP, sealed by the oracle, opened by cryptadm with a JWT login.
    let key = scratch.path("datakey.key");
    let uri = oracle(&["datakey", "transit", "capi", &key.display().to_string()], bao);
    let input = scratch.write("theirs-plain.yaml", CONFIG);
    let output = Command::new("python3")
        .arg(machineadm_oracle())
        .args(["seal", "--in"])
        .arg(&input)
        .arg("--passphrase-file")
        .arg(&key)
        .args(["--provider", "vault-transit", "--passphrase-uri", uri.trim()])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let theirs = String::from_utf8(output.stdout).unwrap();
    let opened = open(machine(bao, &scratch, "machine"), &scratch, &theirs);
    assert!(opened.status.success(), "{}", stderr(&opened));
    assert_eq!(String::from_utf8_lossy(&opened.stdout), CONFIG);
}

#[test]
fn a_given_passphrase_is_wrapped_by_transit() {
    let bao = dev();
    let scratch = Scratch::new();
    let passphrase = scratch.write("passphrase", "my own passphrase");
    let input = scratch.write("config.yaml", CONFIG);
    let output = with_token(bao, &scratch, &bao.root_token)
        .args(["bootstrap", "seal", "--provider", "vault-transit", "--passphrase-uri", "vault-transit://transit/capi"])
        .arg("--passphrase-file")
        .arg(&passphrase)
        .arg("--in")
        .arg(&input)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let sealed = String::from_utf8(output.stdout).unwrap();
    // The file provider's passphrase opens it too (it is the envelope's passphrase)…
    let document = scratch.write("s.yaml", &sealed);
    let opened = cryptadm()
        .args(["bootstrap", "open", "--in"])
        .arg(&document)
        .args(["--out", "-", "--passphrase-file"])
        .arg(&passphrase)
        .output()
        .unwrap();
    assert!(opened.status.success(), "{}", stderr(&opened));
    // …and so does the machine through Transit.
    let opened = open(machine(bao, &scratch, "machine"), &scratch, &sealed);
    assert!(opened.status.success(), "{}", stderr(&opened));
    assert_eq!(String::from_utf8_lossy(&opened.stdout), CONFIG);
}

#[test]
fn a_plugin_provider_never_sees_the_vault_token() {
    let bao = dev();
    let scratch = Scratch::new();
    let dump = scratch.path("plugin.env");
    let plugin_dir = scratch.path("plugins");
    std::fs::create_dir(&plugin_dir).unwrap();
    let plugin = plugin_dir.join("machineadm-plugin-encryption-provider-fake");
    std::fs::write(&plugin, format!("#!/bin/sh\nenv > '{}'\nprintf 'plugin passphrase'\n", dump.display())).unwrap();
    chmod(&plugin, 0o755);
    let passphrase = scratch.write("passphrase", "plugin passphrase");
    let input = scratch.write("config.yaml", CONFIG);
    let output = cryptadm()
        .args(["bootstrap", "seal", "--provider", "fake", "--passphrase-uri", "fake://k", "--passphrase-file"])
        .arg(&passphrase)
        .arg("--in")
        .arg(&input)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let mut cmd = with_token(bao, &scratch, "hvs.never-in-a-child-9931");
    cmd.env("BAO_TOKEN", "bao-never-in-a-child-9931")
        .env("PATH", format!("{}:{}", plugin_dir.display(), std::env::var("PATH").unwrap()));
    let opened = open(cmd, &scratch, &String::from_utf8(output.stdout).unwrap());
    assert!(opened.status.success(), "{}", stderr(&opened));
    let environment = std::fs::read_to_string(&dump).expect("the plugin ran");
    assert!(!environment.contains("never-in-a-child"), "{environment}");
    assert!(environment.contains("VAULT_ADDR="), "the ordinary Vault settings do pass: {environment}");
}

// --- The real server: TLS, sealing ---------------------------------------------------------------------------

#[test]
fn tls_with_the_right_ca_works_and_a_wrong_ca_is_16() {
    with_real(|bao| {
        let scratch = Scratch::new();
        let sealed = seal(with_token(bao, &scratch, &bao.root_token), &scratch, "vault-transit://transit/capi");
        let opened = open(machine(bao, &scratch, "machine"), &scratch, &sealed);
        assert!(opened.status.success(), "{}", stderr(&opened));
        assert_eq!(String::from_utf8_lossy(&opened.stdout), CONFIG);
        let (wrong_ca, _, _) = make_tls(&scratch, "wrong-");
        let mut cmd = with_token(bao, &scratch, &bao.root_token);
        cmd.env("VAULT_CACERT", &wrong_ca);
        let opened = open(cmd, &scratch, &sealed);
        assert_eq!(opened.status.code(), Some(16), "{}", stderr(&opened));
        assert!(stderr(&opened).contains("certificate"), "{}", stderr(&opened));
        // No CA at all: the system roots do not know the test CA either.
        let mut cmd = bare(&scratch);
        cmd.env("VAULT_ADDR", &bao.addr).env("VAULT_TOKEN", &bao.root_token);
        let opened = open(cmd, &scratch, &sealed);
        assert_eq!(opened.status.code(), Some(16), "{}", stderr(&opened));
        // --vault-skip-verify, explicitly, accepts it.
        let mut cmd = bare(&scratch);
        cmd.env("VAULT_ADDR", &bao.addr).env("VAULT_TOKEN", &bao.root_token).env("VAULT_SKIP_VERIFY", "1");
        let input = scratch.write("sealed.yaml", &sealed);
        let opened = cmd
            .args(["bootstrap", "open", "--vault-skip-verify", "--in"])
            .arg(input)
            .args(["--out", "-"])
            .output()
            .unwrap();
        assert!(opened.status.success(), "{}", stderr(&opened));
    });
}

#[test]
fn a_sealed_server_is_1_with_an_unseal_hint() {
    with_real(|bao| {
        let scratch = Scratch::new();
        let sealed = seal(with_token(bao, &scratch, &bao.root_token), &scratch, "vault-transit://transit/capi");
        bao.seal();
        let opened = open(machine(bao, &scratch, "machine"), &scratch, &sealed);
        bao.unseal();
        assert_eq!(opened.status.code(), Some(1), "{}", stderr(&opened));
        let error = stderr(&opened);
        assert!(error.contains("sealed") && error.contains("unseal"), "{error}");
        let opened = open(machine(bao, &scratch, "machine"), &scratch, &sealed);
        assert!(opened.status.success(), "after unsealing: {}", stderr(&opened));
    });
}

#[test]
fn a_long_run_renews_its_token_and_logs_in_again_after_its_max_ttl() {
    use cryptadm::kms::Wrapping as _;
    use cryptadm::kms::vault::{Auth, Vault, VaultSettings};
    let bao = dev();
    let scratch = Scratch::new();
    let vault = Vault::new(VaultSettings {
        address: bao.addr.clone(),
        namespace: None,
        http: cryptadm::kms::http::HttpSettings::default(),
        auth: Auth::Jwt { mount: "jwt".into(), role: "short".into(), jwt_file: bao.jwt_file(&scratch, "short") },
    })
    .unwrap();
    // Tokens live 2 s and at most 5 s: over 8 s the client must renew, then log in again.
    let start = std::time::Instant::now();
    while start.elapsed() < std::time::Duration::from_secs(8) {
        let wrapped = vault.wrap("transit/capi", b"still here").expect("a request in a long run");
        assert!(wrapped.starts_with("vault:v"));
        std::thread::sleep(std::time::Duration::from_millis(700));
    }
}

/// Every form a server might quote `secret` in: raw, base64 (standard and URL-safe, padded or not) and
/// percent-encoded.
fn forms(secret: &str) -> Vec<String> {
    use base64::Engine as _;
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    let mut forms = vec![secret.to_owned(), secret.replace(' ', "%20"), secret.replace(' ', "+")];
    forms.extend([&STANDARD, &STANDARD_NO_PAD, &URL_SAFE, &URL_SAFE_NO_PAD].iter().map(|e| e.encode(secret)));
    forms
}

fn assert_none_of(secret: &str, text: &str) {
    for form in forms(secret) {
        assert!(!text.contains(&form), "`{form}` (a form of `{secret}`) in: {text}");
    }
}

/// A server that quotes the whole request (an echo service at a wrong VAULT_ADDR, a gateway's error page) in a
/// 400 or a 403: neither the token, nor the passphrase `bootstrap seal` sends to Transit, nor an AppRole secret
/// id, nor a JWT reaches stderr in any form.
#[test]
fn secrets_a_server_echoes_are_redacted_from_every_message() {
    let scratch = Scratch::new();
    let input = scratch.write("config.yaml", CONFIG);
    let token = "hvs.CAESIEchoedTokenValue0042";
    let passphrase = "correct horse battery staple 42";
    for (server, status) in [(echo_400(), 1), (echo_403(), 16)] {
        let output = bare(&scratch)
            .env("VAULT_ADDR", &server.addr)
            .env("VAULT_TOKEN", token)
            .env("CRYPTADM_PASSPHRASE", passphrase)
            .args(["bootstrap", "seal", "--provider", "vault-transit", "--passphrase-uri"])
            .arg("vault-transit://transit/capi")
            .arg("--in")
            .arg(&input)
            .output()
            .unwrap();
        let error = stderr(&output);
        assert_eq!(output.status.code(), Some(status), "{error}");
        assert!(error.contains("REDACTED") && error.contains("permission denied"), "{error}");
        assert_none_of(token, &error);
        assert_none_of(passphrase, &error);
    }
    // Logins: the AppRole secret id and the JWT, which the server quotes in its 400.
    let secret_id = scratch.write("secret-id", "9f3c1b2a-echoed-secret-id-0042");
    chmod(&secret_id, 0o600);
    let jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJlY2hvZWQifQ.c2lnbmF0dXJlLWVjaG9lZA";
    let jwt_file = scratch.write("jwt", jwt);
    chmod(&jwt_file, 0o600);
    let sealed = seal(with_token(dev(), &scratch, &dev().root_token), &scratch, "vault-transit://transit/capi");
    for login in [
        vec!["--vault-auth", "approle", "--vault-role-id", "role-0042", "--vault-secret-id-file"],
        vec!["--vault-auth", "jwt", "--vault-role", "machine", "--vault-jwt-file"],
    ] {
        let file = if login[1] == "approle" { &secret_id } else { &jwt_file };
        let mut cmd = bare(&scratch);
        cmd.env("VAULT_ADDR", &echo_400().addr);
        let mut flags: Vec<&std::ffi::OsStr> = login.iter().map(std::ffi::OsStr::new).collect();
        flags.push(file.as_os_str());
        let opened = open_with(cmd, &scratch, &sealed, &flags);
        let error = stderr(&opened);
        assert_eq!(opened.status.code(), Some(16), "{error}");
        assert_none_of("9f3c1b2a-echoed-secret-id-0042", &error);
        assert_none_of(jwt, &error);
    }
}

/// A fake Vault dripping its answer a byte every half second: `bootstrap open` ends at the overall deadline
/// (`--timeout`, or CRYPTADM_TIMEOUT) with exit 4 (deadline exceeded) and says so, instead of retries × the per-request timeout.
#[test]
fn a_dripping_vault_is_cut_at_the_overall_deadline() {
    let scratch = Scratch::new();
    let sealed = seal(with_token(dev(), &scratch, &dev().root_token), &scratch, "vault-transit://transit/capi");
    for (flag, variable) in [(Some("3"), None), (None, Some("3"))] {
        let mut cmd = bare(&scratch);
        cmd.env("VAULT_ADDR", &drip().addr).env("VAULT_TOKEN", "hvs.x").env_remove("CRYPTADM_TIMEOUT");
        if let Some(seconds) = flag {
            cmd.args(["--timeout", seconds]);
        }
        if let Some(seconds) = variable {
            cmd.env("CRYPTADM_TIMEOUT", seconds);
        }
        let input = scratch.write("sealed.yaml", &sealed);
        let started = std::time::Instant::now();
        let opened = cmd
            .args(["bootstrap", "open", "--retries", "3", "--plugin-timeout", "60", "--in"])
            .arg(input)
            .args(["--out", "-"])
            .output()
            .unwrap();
        let took = started.elapsed();
        let error = stderr(&opened);
        assert_eq!(opened.status.code(), Some(4), "{error}");
        assert!(took < std::time::Duration::from_secs(4), "took {took:?}: {error}");
        assert!(error.contains("the overall deadline of 3 s passed"), "{error}");
        assert!(error.contains("hint:") && error.contains("--timeout"), "{error}");
    }
    // The https RemoteConfig provider is bounded the same way (plain http allowed for the dripping server).
    let remote = format!(
        "apiVersion: machineadm.cluster.x-k8s.io/v1alpha1\nkind: RemoteConfig\nmetadata:\n  name: slow\nspec:\n  \
         provider: https\n  uri: {}/config.yaml\n",
        drip().addr
    );
    let input = scratch.write("remote.yaml", remote);
    let started = std::time::Instant::now();
    let opened = bare(&scratch)
        .args(["--timeout", "3", "bootstrap", "open", "--allow-http", "--retries", "3", "--plugin-timeout", "60"])
        .arg("--in")
        .arg(input)
        .args(["--out", "-"])
        .output()
        .unwrap();
    let error = stderr(&opened);
    assert_eq!(opened.status.code(), Some(4), "{error}");
    assert!(started.elapsed() < std::time::Duration::from_secs(4), "took {:?}: {error}", started.elapsed());
    assert!(error.contains("the overall deadline of 3 s passed") && error.contains("--timeout"), "{error}");
    // A deadline that is not a number of seconds is a usage error.
    let output =
        bare(&scratch).env("CRYPTADM_TIMEOUT", "soon").args(["bootstrap", "open", "--in", "-", "--out", "-"]).output();
    let output = output.unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("CRYPTADM_TIMEOUT"), "{}", stderr(&output));
}

/// The passphrase URI of `document` with its Transit ciphertext changed by `change`.
fn tampered(document: &str, change: impl Fn(&str) -> String) -> String {
    use base64::Engine as _;
    let uri = passphrase_uri(document);
    let (part, rest) = uri.trim_start_matches("vault-transit://").split_once('@').unwrap();
    let ciphertext = String::from_utf8(base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap();
    let changed = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(change(&ciphertext));
    document.replace(&uri, &format!("vault-transit://{changed}@{rest}"))
}

/// Transit's refusals of the ciphertext itself are refusals (16) with what to do, not "unexpected answers" (1):
/// an authentication tag that fails, a key version that does not exist, one below min_decryption_version.
#[test]
fn transit_refusals_of_a_ciphertext_are_16_with_a_hint() {
    let bao = dev();
    let scratch = Scratch::new();
    let sealed = seal(with_token(bao, &scratch, &bao.root_token), &scratch, "vault-transit://transit/capi");
    let altered = tampered(&sealed, |c| {
        use base64::Engine as _;
        let (prefix, body) = c.rsplit_once(':').unwrap();
        let mut bytes = base64::engine::general_purpose::STANDARD.decode(body).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        format!("{prefix}:{}", base64::engine::general_purpose::STANDARD.encode(bytes))
    });
    let too_new = tampered(&sealed, |c| c.replacen("vault:v1:", "vault:v99:", 1));
    for document in [altered, too_new] {
        let opened = open(with_token(bao, &scratch, &bao.root_token), &scratch, &document);
        let error = stderr(&opened);
        assert_eq!(opened.status.code(), Some(16), "{error}");
        assert!(error.contains("refused it: HTTP 400") && error.contains("hint:"), "{error}");
    }
    // A document sealed before min_decryption_version was raised past its key version.
    bao.bao(&["write", "-f", "transit/keys/aging"]);
    let old = seal(with_token(bao, &scratch, &bao.root_token), &scratch, "vault-transit://transit/aging");
    bao.bao(&["write", "-f", "transit/keys/aging/rotate"]);
    bao.bao(&["write", "transit/keys/aging/config", "min_decryption_version=2"]);
    let opened = open(with_token(bao, &scratch, &bao.root_token), &scratch, &old);
    let error = stderr(&opened);
    assert_eq!(opened.status.code(), Some(16), "{error}");
    assert!(error.contains("volume rewrap") && error.contains("bootstrap seal"), "{error}");
    assert!(error.lines().any(|l| l.starts_with("hint:")), "the hint on its own line: {error}");
}

/// Misconfigurations refused with their documented exit codes: an empty VAULT_TOKEN (no fallback to
/// ~/.vault-token), no token anywhere (the three ways named), missing CA and token files (5), an address with a
/// path or a line break and a namespace with one (3), a 403 with a huge error page (16); --vault-skip-verify
/// warns.
#[test]
fn vault_misconfigurations_are_refused_with_their_exit_codes() {
    let bao = dev();
    let scratch = Scratch::new();
    let sealed = seal(with_token(bao, &scratch, &bao.root_token), &scratch, "vault-transit://transit/capi");
    // An empty VAULT_TOKEN is an error, even with a valid ~/.vault-token there.
    let home_token = scratch.path("home/.vault-token");
    std::fs::create_dir_all(scratch.path("home")).unwrap();
    std::fs::write(&home_token, &bao.root_token).unwrap();
    chmod(&home_token, 0o600);
    let mut cmd = bare(&scratch);
    cmd.envs(bao.env()).env("VAULT_TOKEN", "");
    let opened = open(cmd, &scratch, &sealed);
    let error = stderr(&opened);
    assert_eq!(opened.status.code(), Some(2), "{error}");
    assert!(error.contains("VAULT_TOKEN is set but empty"), "{error}");
    std::fs::remove_file(&home_token).unwrap();
    // No token anywhere: not found, and the three ways to give one.
    let mut cmd = bare(&scratch);
    cmd.envs(bao.env());
    let opened = open(cmd, &scratch, &sealed);
    let error = stderr(&opened);
    assert_eq!(opened.status.code(), Some(5), "{error}");
    for way in ["VAULT_TOKEN", "--vault-token-file", "--vault-auth"] {
        assert!(error.contains(way), "{way}: {error}");
    }
    // A missing CA file, a missing JWT file: not found.
    let mut cmd = with_token(bao, &scratch, &bao.root_token);
    cmd.env("VAULT_CACERT", scratch.path("no-such-ca.pem"));
    let opened = open(cmd, &scratch, &sealed);
    assert_eq!(opened.status.code(), Some(5), "{}", stderr(&opened));
    let mut cmd = bare(&scratch);
    cmd.envs(bao.env());
    let missing = scratch.path("no-such-jwt");
    let flags = ["--vault-auth", "jwt", "--vault-role", "machine", "--vault-jwt-file"].map(std::ffi::OsStr::new);
    let opened = open_with(cmd, &scratch, &sealed, &[&flags[..], &[missing.as_os_str()]].concat());
    assert_eq!(opened.status.code(), Some(5), "{}", stderr(&opened));
    // Addresses and namespaces that cannot be what they claim: refused before any request.
    for (name, value) in [
        ("VAULT_ADDR", format!("{}/v1/secret", bao.addr)),
        ("VAULT_ADDR", format!("{}\r\nX-Injected: 1", bao.addr)),
        ("VAULT_NAMESPACE", "team\r\nX-Injected: 1".to_owned()),
    ] {
        let mut cmd = with_token(bao, &scratch, &bao.root_token);
        cmd.env(name, value);
        let started = std::time::Instant::now();
        let opened = open(cmd, &scratch, &sealed);
        assert_eq!(opened.status.code(), Some(3), "{name}: {}", stderr(&opened));
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "{name}: refused up front");
    }
    // A 403 whose error page is over the 1 MiB bound is still a refusal.
    let mut cmd = bare(&scratch);
    cmd.env("VAULT_ADDR", &big_403().addr).env("VAULT_TOKEN", "hvs.x");
    let opened = open(cmd, &scratch, &sealed);
    assert_eq!(opened.status.code(), Some(16), "{}", stderr(&opened));
    // --vault-skip-verify works, and says what it gives up.
    let cmd = with_token(bao, &scratch, &bao.root_token);
    let opened = open_with(cmd, &scratch, &sealed, &[std::ffi::OsStr::new("--vault-skip-verify")]);
    assert!(opened.status.success(), "{}", stderr(&opened));
    assert!(stderr(&opened).contains("warning: --vault-skip-verify"), "{}", stderr(&opened));
}
