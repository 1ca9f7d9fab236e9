//! AWS where operators run it (issue 42), against moto with IAM and SigV4 enforced: every AWS call through a
//! logging HTTP and CONNECT proxy (`logging_proxy.py`) and around it for `NO_PROXY` hosts; the partitions' and the
//! FIPS and dual-stack endpoints as the hosts the proxy is asked for (it ends the TLS with its own CA and passes the
//! request on to moto, so the calls also succeed); the region from the instance whatever the credentials.

use crate::support::{Scratch, cryptadm};
use crate::support_aws::{ImdsStandIn, Moto, moto};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

const CONFIG: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: proxied\n";

/// Every variable naming a proxy, removed from runs so the machine's own never leak in.
pub const PROXY_VARIABLES: &[&str] =
    &["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"];

/// A running `tests/cli/logging_proxy.py` on 127.0.0.1, killed when dropped.
pub struct LoggingProxy {
    child: Child,
    port: u16,
    log: PathBuf,
    /// The CA of the certificates it ends TLS with (with `--forward`).
    pub ca: PathBuf,
}

impl LoggingProxy {
    pub fn start(scratch: &Scratch, name: &str, options: &[&str]) -> Self {
        use std::io::BufRead as _;
        let dir = scratch.path(name);
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("requests.log");
        let mut child = Command::new("python3")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/logging_proxy.py"))
            .arg(&log)
            .arg(&dir)
            .args(options)
            .stdout(Stdio::piped())
            .spawn()
            .expect("start logging_proxy.py");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let port = line.trim().parse().unwrap_or_else(|_| panic!("logging_proxy.py printed no port: {line:?}"));
        Self { child, port, log, ca: dir.join("ca.pem") }
    }

    /// `http://127.0.0.1:PORT`, with `userinfo@` when given.
    pub fn url(&self, userinfo: &str) -> String {
        format!("http://{userinfo}127.0.0.1:{}", self.port)
    }

    /// The requests logged so far, one per line.
    pub fn lines(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log).unwrap_or_default().lines().map(str::to_owned).collect()
    }
}

impl Drop for LoggingProxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// `cryptadm` as `admin`, without any proxy variable of the machine's.
fn as_admin(aws: &Moto) -> assert_cmd::Command {
    let mut command = cryptadm();
    aws.env_with(&mut command, &aws.admin);
    for name in PROXY_VARIABLES {
        command.env_remove(name);
    }
    command
}

fn seal(mut command: assert_cmd::Command, scratch: &Scratch, key: &str) -> std::process::Output {
    let input = scratch.write("config.yaml", CONFIG);
    command
        .args(["bootstrap", "seal", "--provider", "aws-kms", "--passphrase-uri", key, "--retries", "0", "--in"])
        .arg(input)
        .output()
        .unwrap()
}

fn open(mut command: assert_cmd::Command, scratch: &Scratch, sealed: &[u8]) -> std::process::Output {
    let input = scratch.write("sealed.yaml", sealed);
    command.args(["bootstrap", "open", "--retries", "0", "--in"]).arg(input).args(["--out", "-"]).output().unwrap()
}

/// moto's `host:port`.
fn moto_authority(aws: &Moto) -> String {
    aws.endpoint.trim_start_matches("http://").to_owned()
}

/// HTTP_PROXY (and http_proxy) carries every call to moto's plain-HTTP endpoint in absolute form, one logged line
/// per KMS call; credentials in the proxy URL reach the proxy (and never the output, also when refused); every
/// NO_PROXY form that names the endpoint (its IP, a CIDR around it, `*`, `localhost` for a `localhost` endpoint)
/// sends the calls around the proxy.
#[test]
fn every_aws_call_goes_through_the_proxy_and_no_proxy_hosts_go_around_it() {
    let aws = moto();
    let _serial = aws.lock();
    let scratch = Scratch::new();
    let proxy = LoggingProxy::start(&scratch, "proxy", &["--auth", "ops:p@ss w0rd"]);
    let through = format!("HTTP {} auth-ok", moto_authority(aws));
    let credentials = "ops:p%40ss%20w0rd@";
    for variable in ["HTTP_PROXY", "http_proxy"] {
        let before = proxy.lines().len();
        let mut command = as_admin(aws);
        command.env(variable, proxy.url(credentials));
        let sealed = seal(command, &scratch, &aws.key);
        assert!(sealed.status.success(), "{variable}: {}", stderr(&sealed));
        let mut command = as_admin(aws);
        command.env(variable, proxy.url(credentials));
        let opened = open(command, &scratch, &sealed.stdout);
        assert!(opened.status.success(), "{variable}: {}", stderr(&opened));
        assert_eq!(String::from_utf8_lossy(&opened.stdout), CONFIG);
        let lines = proxy.lines()[before..].to_vec();
        assert_eq!(lines, vec![through.clone(), through.clone()], "{variable}: GenerateDataKey then Decrypt");
    }
    // A wrong proxy password: refused by the proxy (407), and neither form of it is shown.
    let mut command = as_admin(aws);
    command.env("HTTP_PROXY", proxy.url("ops:wr%40ng-secret@")).arg("-v");
    let refused = seal(command, &scratch, &aws.key);
    assert_ne!(refused.status.code(), Some(0));
    for secret in ["wr%40ng-secret", "wr@ng-secret", "p@ss", "p%40ss"] {
        assert!(!stderr(&refused).contains(secret), "{secret} in {}", stderr(&refused));
    }
    assert!(proxy.lines().last().unwrap().ends_with("auth-wrong"), "{:?}", proxy.lines());
    // NO_PROXY: the endpoint reached directly (nothing more at the proxy), in each form.
    let port = aws.endpoint.rsplit(':').next().unwrap();
    for (no_proxy, endpoint) in [
        ("127.0.0.1", aws.endpoint.clone()),
        ("example.com, 127.0.0.0/8", aws.endpoint.clone()),
        ("*", aws.endpoint.clone()),
        ("localhost", format!("http://localhost:{port}")),
    ] {
        for variable in ["NO_PROXY", "no_proxy"] {
            let before = proxy.lines().len();
            let mut command = as_admin(aws);
            command
                .env("HTTP_PROXY", proxy.url(credentials))
                .env(variable, no_proxy)
                .env("AWS_ENDPOINT_URL", &endpoint);
            let sealed = seal(command, &scratch, &aws.key);
            assert!(sealed.status.success(), "{variable}={no_proxy}: {}", stderr(&sealed));
            assert_eq!(proxy.lines().len(), before, "{variable}={no_proxy}: {:?}", proxy.lines());
        }
    }
    // A proxy URL that is not one is a clear error naming the variable, its password redacted.
    let mut command = as_admin(aws);
    command.env("HTTP_PROXY", "socks9://ops:hidden-pw@127.0.0.1:1");
    let bad = seal(command, &scratch, &aws.key);
    assert_eq!(bad.status.code(), Some(3), "{}", stderr(&bad));
    assert!(stderr(&bad).contains("(HTTP_PROXY)"), "{}", stderr(&bad));
    assert!(!stderr(&bad).contains("hidden-pw"), "{}", stderr(&bad));
}

/// A user with every permission in the partition of `region`, and a key made by boto3 with it in `region` (moto's
/// ARN carries that region's partition).
fn partition_key(aws: &Moto, region: &str) -> ((String, String), String) {
    let user: serde_json::Value = serde_json::from_str(&aws.oracle(&["partition-admin", region])).unwrap();
    let keys = (user["id"].as_str().unwrap().to_owned(), user["secret"].as_str().unwrap().to_owned());
    let mut create = aws.oracle_command(&["create-key", region]);
    create.env("AWS_ACCESS_KEY_ID", &keys.0).env("AWS_SECRET_ACCESS_KEY", &keys.1);
    let output = create.output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    (keys, String::from_utf8(output.stdout).unwrap().trim().to_owned())
}

/// No endpoint override: each call goes to the public endpoint of its partition, through HTTPS_PROXY with
/// CONNECT (the hosts the proxy is asked for are the SDKs' hosts), the proxy ending TLS with a CA trusted through
/// AWS_CA_BUNDLE and passing each request on to moto. China (`arn:aws-cn:…` → `.amazonaws.com.cn`), GovCloud with
/// FIPS (`kms-fips.us-gov-west-1.amazonaws.com`), dual-stack (`kms.eu-west-1.api.aws`), and S3 in China
/// (`BUCKET.s3.cn-north-1.amazonaws.com.cn`); the seal of each is opened again (the same host).
#[test]
fn partition_fips_and_dualstack_endpoints_are_the_hosts_asked_of_the_proxy() {
    let aws = moto();
    let _serial = aws.lock_exclusive();
    let scratch = Scratch::new();
    let proxy = LoggingProxy::start(&scratch, "mitm", &["--forward", &moto_authority(aws)]);
    let (china_keys, china) = partition_key(aws, "cn-north-1");
    assert!(china.starts_with("arn:aws-cn:kms:cn-north-1:"), "{china}");
    let (gov_keys, gov) = partition_key(aws, "us-gov-west-1");
    let run = |keys: &(String, String), key: &str, extra: &[(&str, &str)], expected_host: &str| {
        for step in ["seal", "open"] {
            let before = proxy.lines().len();
            let mut command = as_admin(aws);
            command.env("AWS_ACCESS_KEY_ID", &keys.0).env("AWS_SECRET_ACCESS_KEY", &keys.1);
            command.env_remove("AWS_ENDPOINT_URL").env("HTTPS_PROXY", proxy.url("")).env("AWS_CA_BUNDLE", &proxy.ca);
            command.envs(extra.iter().copied());
            let output = if step == "seal" {
                seal(command, &scratch, key)
            } else {
                let sealed = scratch.path("last-sealed.yaml");
                open(command, &scratch, &std::fs::read(sealed).unwrap())
            };
            assert!(output.status.success(), "{step} {key} {extra:?}: {}", stderr(&output));
            if step == "seal" {
                std::fs::write(scratch.path("last-sealed.yaml"), &output.stdout).unwrap();
            } else {
                assert_eq!(String::from_utf8_lossy(&output.stdout), CONFIG);
            }
            let lines = proxy.lines()[before..].to_vec();
            assert_eq!(lines, vec![format!("CONNECT {expected_host}:443")], "{step} {key} {extra:?}");
        }
    };
    run(&china_keys, &china, &[], "kms.cn-north-1.amazonaws.com.cn");
    run(&gov_keys, &gov, &[("AWS_USE_FIPS_ENDPOINT", "true")], "kms-fips.us-gov-west-1.amazonaws.com");
    run(&aws.admin, &aws.key, &[("AWS_USE_DUALSTACK_ENDPOINT", "true")], "kms.eu-west-1.api.aws");
    // The profile's use_fips_endpoint, when the variable is not set.
    let config = scratch.write("config", "[default]\nuse_fips_endpoint = true\n");
    run(&aws.admin, &aws.key, &[("AWS_CONFIG_FILE", config.to_str().unwrap())], "kms-fips.eu-west-1.amazonaws.com");
    // S3 in China, virtual-host style under the partition's suffix; the region from AWS_REGION.
    let part = scratch.write("part.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-china\n");
    let mut put = aws.oracle_command(&["put-object", "capi-china", "m.yaml", part.to_str().unwrap()]);
    put.env("AWS_DEFAULT_REGION", "cn-north-1").env("AWS_ACCESS_KEY_ID", &china_keys.0);
    put.env("AWS_SECRET_ACCESS_KEY", &china_keys.1);
    let put = put.output().unwrap();
    assert!(put.status.success(), "{}", String::from_utf8_lossy(&put.stderr));
    let before = proxy.lines().len();
    let mut command = as_admin(aws);
    command
        .env("AWS_ACCESS_KEY_ID", &china_keys.0)
        .env("AWS_SECRET_ACCESS_KEY", &china_keys.1)
        .env_remove("AWS_ENDPOINT_URL")
        .env("AWS_REGION", "cn-north-1")
        .env("HTTPS_PROXY", proxy.url(""))
        .env("AWS_CA_BUNDLE", &proxy.ca)
        .args(["bootstrap", "seal", "--provider", "aws-kms", "--passphrase-uri", &china, "--retries", "0"])
        .args(["--remote-config", "s3=s3://capi-china/m.yaml", "--in"])
        .arg(scratch.write("config.yaml", CONFIG));
    let sealed = command.output().unwrap();
    assert!(sealed.status.success(), "{}", stderr(&sealed));
    // The RemoteConfig is fetched where the document is opened.
    let mut command = as_admin(aws);
    command
        .env("AWS_ACCESS_KEY_ID", &china_keys.0)
        .env("AWS_SECRET_ACCESS_KEY", &china_keys.1)
        .env_remove("AWS_ENDPOINT_URL")
        .env("AWS_REGION", "cn-north-1")
        .env("HTTPS_PROXY", proxy.url(""))
        .env("AWS_CA_BUNDLE", &proxy.ca);
    let opened = open(command, &scratch, &sealed.stdout);
    assert!(opened.status.success(), "{}", stderr(&opened));
    assert!(String::from_utf8_lossy(&opened.stdout).contains("name: from-china"), "{}", stderr(&opened));
    let lines = proxy.lines()[before..].to_vec();
    assert!(lines.contains(&"CONNECT capi-china.s3.cn-north-1.amazonaws.com.cn:443".to_owned()), "{lines:?}");
    // An ISO partition has no dual-stack endpoints: said before any request.
    let mut command = as_admin(aws);
    command.env_remove("AWS_ENDPOINT_URL").env("AWS_USE_DUALSTACK_ENDPOINT", "true");
    let refused =
        seal(command, &scratch, "arn:aws-iso:kms:us-iso-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab");
    assert_eq!(refused.status.code(), Some(3), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("partition aws-iso has none"), "{}", stderr(&refused));
}

/// With keys from the environment and no region anywhere, the instance's region comes from the instance metadata
/// service (its credentials are never asked for); with the service disabled, the message says so.
#[test]
fn the_region_comes_from_the_instance_whatever_the_credentials() {
    let aws = moto();
    let _serial = aws.lock();
    let scratch = Scratch::new();
    let credentials = scratch.write("imds-node.json", aws.oracle(&["assume", "node"]));
    let stand_in = ImdsStandIn::start(&credentials, 3600, scratch.path("imds.log"));
    let mut command = as_admin(aws);
    command
        .env_remove("AWS_REGION")
        .env_remove("AWS_EC2_METADATA_DISABLED")
        .env("AWS_EC2_METADATA_SERVICE_ENDPOINT", stand_in.endpoint());
    let sealed = seal(command, &scratch, "alias/capi");
    assert!(sealed.status.success(), "{}", stderr(&sealed));
    let log = stand_in.requests();
    assert!(log.contains("GET /latest/meta-data/placement/region token-ok"), "{log}");
    assert!(!log.contains("security-credentials"), "the environment's keys are used: {log}");
    let mut command = as_admin(aws);
    command.env_remove("AWS_REGION");
    let refused = seal(command, &scratch, "alias/capi");
    assert_eq!(refused.status.code(), Some(16), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("the instance metadata service is disabled (AWS_EC2_METADATA_DISABLED)"),
        "{}",
        stderr(&refused)
    );
}

/// The registry client goes through HTTP_PROXY too (the registry here is plain HTTP), and around it for a NO_PROXY
/// host: every request `image inspect` makes is one logged line.
#[test]
fn the_registry_client_goes_through_the_proxy_and_around_it_for_no_proxy() {
    let registry = crate::registry::Registry::start_with("");
    let scratch = Scratch::new();
    let src = scratch.path("src");
    crate::image::fixture(&src, crate::image::TWO_LAYERS);
    crate::image::run(&mut crate::registry::skopeo(&[
        "--dest-tls-verify=false",
        &crate::registry::oci(&src),
        &registry.image("proxied/app:v1"),
    ]));
    let proxy = LoggingProxy::start(&scratch, "proxy", &[]);
    let inspect = |no_proxy: Option<&str>| {
        let mut command = cryptadm();
        for name in PROXY_VARIABLES {
            command.env_remove(name);
        }
        command.env("HTTP_PROXY", proxy.url(""));
        if let Some(no_proxy) = no_proxy {
            command.env("NO_PROXY", no_proxy);
        }
        let output = command
            .args(["image", "inspect", "--tls-verify=false"])
            .arg(registry.image("proxied/app:v1"))
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
    };
    inspect(None);
    let lines = proxy.lines();
    assert!(!lines.is_empty() && lines.iter().all(|l| *l == format!("HTTP {}", registry.host)), "{lines:?}");
    let before = lines.len();
    inspect(Some("127.0.0.0/8"));
    assert_eq!(proxy.lines().len(), before, "{:?}", proxy.lines());
}
