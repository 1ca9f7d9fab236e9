//! AWS natively (issue 31) against a local AWS API (moto, authentication on) with boto3 as the oracle: the
//! built-in `aws-kms` bootstrap provider, the signer refused when wrong, and the credential chain source by
//! source (environment, profile files, web identity through STS, IMDSv2 through a loopback stand-in), their
//! precedence, and "no credentials" naming every place searched.

use crate::support::{Scratch, cryptadm};
use crate::support_aws::{ImdsStandIn, Moto, REGION, moto};
use crate::support_luks::LuksImage;
use std::path::{Path, PathBuf};
use std::process::Command;

const CONFIG: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: aws-first-boot\n";

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn machineadm_oracle() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/machineadm_oracle.py")
}

fn secret_file(scratch: &Scratch, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let path = scratch.write(name, contents);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path
}

/// `cryptadm` with `keys` in the environment.
fn with_keys(aws: &Moto, keys: &(String, String)) -> assert_cmd::Command {
    let mut command = cryptadm();
    aws.env_with(&mut command, keys);
    command
}

fn seal(command: assert_cmd::Command, scratch: &Scratch, key: &str) -> std::process::Output {
    seal_with(command, scratch, key, &[])
}

fn seal_with(mut command: assert_cmd::Command, scratch: &Scratch, key: &str, extra: &[&str]) -> std::process::Output {
    let input = scratch.write("config.yaml", CONFIG);
    command
        .args(["bootstrap", "seal", "--provider", "aws-kms", "--passphrase-uri", key, "--retries", "0"])
        .args(extra)
        .arg("--in")
        .arg(input)
        .output()
        .unwrap()
}

fn open(mut command: assert_cmd::Command, scratch: &Scratch, sealed: &[u8]) -> std::process::Output {
    let input = scratch.write("sealed.yaml", sealed);
    command.args(["bootstrap", "open", "--retries", "0", "--in"]).arg(input).args(["--out", "-"]).output().unwrap()
}

fn passphrase_uri(sealed: &[u8]) -> String {
    let text = String::from_utf8_lossy(sealed);
    let line = text.lines().find(|l| l.trim_start().starts_with("passphraseURI:")).expect("a passphraseURI");
    line.split_once(':').unwrap().1.trim().to_owned()
}

/// What we seal: the passphraseURI is exactly `kms://<standard base64 CiphertextBlob>@ARN`; boto3 decrypts the blob
/// and the independent Python envelope opens the document with those raw bytes as the passphrase. What boto3 and
/// the Python envelope seal, we open.
#[test]
fn boto3_and_the_python_opener_open_what_we_seal_and_we_open_what_they_seal() {
    let aws = moto();
    let _serial = aws.lock();
    let scratch = Scratch::new();
    let sealed = seal(with_keys(aws, &aws.admin), &scratch, &aws.key);
    assert!(sealed.status.success(), "{}", stderr(&sealed));
    let uri = passphrase_uri(&sealed.stdout);
    let (blob, key) = uri.strip_prefix("kms://").unwrap().rsplit_once('@').unwrap();
    assert_eq!(key, aws.key);
    assert!(blob.bytes().all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b)), "{blob}");
    assert!(String::from_utf8_lossy(&sealed.stdout).contains("provider: aws-kms"));
    let passphrase = scratch.path("unwrapped");
    aws.oracle(&["decrypt", blob, passphrase.to_str().unwrap(), key]);
    assert_eq!(std::fs::read(&passphrase).unwrap().len(), 32, "the raw data key is the passphrase");
    let sealed_file = scratch.write("ours.yaml", &sealed.stdout);
    let out = scratch.path("oracle-opened");
    let opened = Command::new("python3")
        .arg(machineadm_oracle())
        .args(["open", "--in"])
        .arg(&sealed_file)
        .arg("--passphrase-file")
        .arg(&passphrase)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(opened.status.success(), "{}", stderr(&opened));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), CONFIG);

    // boto3's GenerateDataKey, sealed by the Python envelope, opened by cryptadm.
    let data_key = scratch.path("datakey");
    let uri = aws.oracle(&["datakey", &aws.key, data_key.to_str().unwrap()]);
    let input = scratch.write("theirs-plain.yaml", CONFIG);
    let theirs = Command::new("python3")
        .arg(machineadm_oracle())
        .args(["seal", "--in"])
        .arg(&input)
        .arg("--passphrase-file")
        .arg(&data_key)
        .args(["--provider", "aws-kms", "--passphrase-uri", uri.trim()])
        .output()
        .unwrap();
    assert!(theirs.status.success(), "{}", stderr(&theirs));
    let opened = open(with_keys(aws, &aws.admin), &scratch, &theirs.stdout);
    assert!(opened.status.success(), "{}", stderr(&opened));
    assert_eq!(String::from_utf8_lossy(&opened.stdout), CONFIG);
}

/// `--passphrase-file` with aws-kms: that passphrase, wrapped by KMS Encrypt (boto3 gets it back byte for byte);
/// an alias works as the key and is recorded as given.
#[test]
fn a_given_passphrase_is_wrapped_by_kms_encrypt_and_an_alias_is_kept() {
    let aws = moto();
    let _serial = aws.lock();
    let scratch = Scratch::new();
    let passphrase = secret_file(&scratch, "passphrase", "my own\npassphrase ");
    let sealed = seal_with(
        with_keys(aws, &aws.admin),
        &scratch,
        "alias/capi",
        &["--passphrase-file", passphrase.to_str().unwrap()],
    );
    assert!(sealed.status.success(), "{}", stderr(&sealed));
    let uri = passphrase_uri(&sealed.stdout);
    let (blob, key) = uri.strip_prefix("kms://").unwrap().rsplit_once('@').unwrap();
    assert_eq!(key, "alias/capi");
    let unwrapped = scratch.path("unwrapped");
    aws.oracle(&["decrypt", blob, unwrapped.to_str().unwrap()]);
    assert_eq!(std::fs::read(&unwrapped).unwrap(), b"my own\npassphrase ");
    let opened = open(with_keys(aws, &aws.admin), &scratch, &sealed.stdout);
    assert!(opened.status.success(), "{}", stderr(&opened));
    assert_eq!(String::from_utf8_lossy(&opened.stdout), CONFIG);
}

/// The signer is checked by the server: a wrong secret key, an unknown access key and a user without kms:Decrypt
/// are refused with exit 16, AWS's code, a hint, and no key material in the message.
#[test]
fn a_wrong_signature_an_unknown_key_and_a_denied_user_are_refused() {
    let aws = moto();
    let _serial = aws.lock();
    let scratch = Scratch::new();
    let sealed = seal(with_keys(aws, &aws.admin), &scratch, &aws.key);
    assert!(sealed.status.success(), "{}", stderr(&sealed));
    let wrong_secret = (aws.admin.0.clone(), "wJalrXUtnFEMI/K7MDENG/bPxRfiCYWRONGKEY".to_owned());
    let unknown = ("AKIAUNKNOWN000000000".to_owned(), aws.admin.1.clone());
    for (keys, code) in
        [(&wrong_secret, "SignatureDoesNotMatch"), (&unknown, "InvalidClientTokenId"), (&aws.sealer, "AccessDenied")]
    {
        let opened = open(with_keys(aws, keys), &scratch, &sealed.stdout);
        let text = stderr(&opened);
        assert_eq!(opened.status.code(), Some(16), "{code}: {text}");
        assert!(text.contains(code) && text.contains("hint:"), "{code}: {text}");
        assert!(!text.contains(&keys.1) && !text.contains(&aws.admin.1), "{text}");
        assert!(opened.stdout.is_empty());
    }
    // The sealer may seal (GenerateDataKey) but not open.
    let sealed = seal(with_keys(aws, &aws.sealer), &scratch, &aws.key);
    assert!(sealed.status.success(), "{}", stderr(&sealed));
    // A key that does not exist: not found.
    let missing = seal(
        with_keys(aws, &aws.admin),
        &scratch,
        "arn:aws:kms:eu-west-1:123456789012:key/00000000-0000-0000-0000-000000000000",
    );
    assert_eq!(missing.status.code(), Some(5), "{}", stderr(&missing));
}

/// Long-term keys in a profile of the shared files (AWS_PROFILE, AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE),
/// the region from the config file; a credentials file others may read is refused.
#[test]
fn profile_files_give_keys_and_region_and_are_checked_like_token_files() {
    let aws = moto();
    let _serial = aws.lock();
    let scratch = Scratch::new();
    let credentials = secret_file(
        &scratch,
        "credentials",
        format!(
            "[default]\naws_access_key_id = AKIADEFAULTUNUSED000\naws_secret_access_key = x\n[ci]\naws_access_key_id = {}\naws_secret_access_key = {}\n",
            aws.admin.0, aws.admin.1
        ),
    );
    let config = scratch.write("config", format!("[profile ci]\nregion = {REGION}\n"));
    let run = |profile: &str| {
        let mut command = cryptadm();
        aws.bare_env(&mut command);
        command
            .env_remove("AWS_REGION")
            .env("AWS_PROFILE", profile)
            .env("AWS_SHARED_CREDENTIALS_FILE", &credentials)
            .env("AWS_CONFIG_FILE", &config);
        seal(command, &scratch, "alias/capi")
    };
    let sealed = run("ci");
    assert!(sealed.status.success(), "{}", stderr(&sealed));
    let missing = run("nope");
    assert_eq!(missing.status.code(), Some(16), "{}", stderr(&missing));
    assert!(
        stderr(&missing).contains("AWS profile `nope` is not in the shared configuration files"),
        "{}",
        stderr(&missing)
    );
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&credentials, std::fs::Permissions::from_mode(0o644)).unwrap();
    let open_file = run("ci");
    assert_eq!(open_file.status.code(), Some(16), "{}", stderr(&open_file));
    assert!(stderr(&open_file).contains("group or others may access it"), "{}", stderr(&open_file));
    assert!(!stderr(&open_file).contains(&aws.admin.1));
}

/// Web identity (EKS IRSA): AWS_ROLE_ARN + AWS_WEB_IDENTITY_TOKEN_FILE through STS AssumeRoleWithWebIdentity; the
/// role may decrypt (open works) but not generate data keys (seal is denied). Also as a profile's role_arn +
/// web_identity_token_file.
#[test]
fn web_identity_through_sts_from_the_environment_and_from_a_profile() {
    let aws = moto();
    let _serial = aws.lock_exclusive();
    let scratch = Scratch::new();
    let sealed = seal(with_keys(aws, &aws.admin), &scratch, &aws.key);
    assert!(sealed.status.success(), "{}", stderr(&sealed));
    let token = secret_file(&scratch, "token", "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2EifQ.c2ln");
    let config = scratch.write(
        "config",
        format!(
            "[profile irsa]\nrole_arn = {}\nweb_identity_token_file = {}\nrole_session_name = node-1\n",
            aws.machine_role,
            token.display()
        ),
    );
    for from_profile in [false, true] {
        let mut command = cryptadm();
        aws.bare_env(&mut command);
        if from_profile {
            command.env("AWS_PROFILE", "irsa").env("AWS_CONFIG_FILE", &config);
        } else {
            command.env("AWS_ROLE_ARN", &aws.machine_role).env("AWS_WEB_IDENTITY_TOKEN_FILE", &token);
        }
        // moto wants a signature on AssumeRoleWithWebIdentity, which AWS does not: let that one call through.
        aws.oracle(&["anonymous", "1"]);
        let opened = open(command, &scratch, &sealed.stdout);
        assert!(opened.status.success(), "profile {from_profile}: {}", stderr(&opened));
        assert_eq!(String::from_utf8_lossy(&opened.stdout), CONFIG);
    }
    let mut command = cryptadm();
    aws.bare_env(&mut command);
    command.env("AWS_ROLE_ARN", &aws.machine_role).env("AWS_WEB_IDENTITY_TOKEN_FILE", &token);
    aws.oracle(&["anonymous", "1"]);
    let denied = seal(command, &scratch, &aws.key);
    assert_eq!(denied.status.code(), Some(16), "{}", stderr(&denied));
    assert!(stderr(&denied).contains("AccessDenied"), "{}", stderr(&denied));
}

/// A stand-in whose instance profile is `role` (`node`: kms:*, `sealer-node`: no Decrypt), with temporary
/// credentials from moto's STS.
pub(crate) fn imds(scratch: &Scratch, aws: &Moto, role: &str, life: u32) -> ImdsStandIn {
    let credentials = scratch.write(&format!("imds-{role}.json"), aws.oracle(&["assume", role]));
    ImdsStandIn::start(&credentials, life, scratch.path("imds.log"))
}

/// The instance metadata service (IMDSv2): a session token first, then the instance profile's role credentials;
/// the region from the instance when nothing else gives one.
#[test]
fn instance_metadata_with_a_session_token_gives_credentials_and_region() {
    let aws = moto();
    let _serial = aws.lock();
    let scratch = Scratch::new();
    let stand_in = imds(&scratch, aws, "node", 3600);
    let mut command = cryptadm();
    aws.bare_env(&mut command);
    command
        .env_remove("AWS_EC2_METADATA_DISABLED")
        .env_remove("AWS_REGION")
        .env("AWS_EC2_METADATA_SERVICE_ENDPOINT", stand_in.endpoint());
    let sealed = seal(command, &scratch, "alias/capi");
    assert!(sealed.status.success(), "{}", stderr(&sealed));
    let log = stand_in.requests();
    assert!(log.starts_with("PUT /latest/api/token token-issued\n"), "{log}");
    assert!(log.contains("GET /latest/meta-data/iam/security-credentials/cryptadm-node token-ok"), "{log}");
    assert!(log.contains("GET /latest/meta-data/placement/region token-ok"), "{log}");
    assert!(!log.contains("no-token"), "{log}");
}

/// The order: environment keys before the profile, the profile before web identity, web identity before the
/// instance; each shown by which identity KMS sees (the sealer may not Decrypt).
#[test]
fn the_sources_are_taken_in_the_sdks_order() {
    let aws = moto();
    let _serial = aws.lock_exclusive();
    let scratch = Scratch::new();
    let sealed = seal(with_keys(aws, &aws.admin), &scratch, &aws.key);
    assert!(sealed.status.success(), "{}", stderr(&sealed));
    let profile = |keys: &(String, String)| {
        format!("[default]\naws_access_key_id = {}\naws_secret_access_key = {}\n", keys.0, keys.1)
    };
    let sealer_profile = secret_file(&scratch, "sealer-credentials", profile(&aws.sealer));
    let admin_profile = secret_file(&scratch, "admin-credentials", profile(&aws.admin));
    let stand_in = imds(&scratch, aws, "sealer-node", 3600);
    let token = secret_file(&scratch, "token", "eyJhbGciOiJSUzI1NiJ9.e30.c2ln");
    let run = |setup: &dyn Fn(&mut assert_cmd::Command)| {
        let mut command = cryptadm();
        aws.bare_env(&mut command);
        command.env_remove("AWS_EC2_METADATA_DISABLED").env("AWS_EC2_METADATA_SERVICE_ENDPOINT", stand_in.endpoint());
        setup(&mut command);
        let output = open(command, &scratch, &sealed.stdout);
        let denied = stderr(&output).contains("AccessDenied");
        (output.status.code(), denied)
    };
    // Environment (sealer: denied) wins over a profile (admin).
    assert_eq!(
        run(&|c| {
            c.env("AWS_ACCESS_KEY_ID", &aws.sealer.0)
                .env("AWS_SECRET_ACCESS_KEY", &aws.sealer.1)
                .env("AWS_SHARED_CREDENTIALS_FILE", &admin_profile);
        }),
        (Some(16), true)
    );
    // A profile (admin) wins over the instance (sealer).
    assert_eq!(
        run(&|c| {
            c.env("AWS_SHARED_CREDENTIALS_FILE", &admin_profile);
        }),
        (Some(0), false)
    );
    // A profile (sealer) wins over web identity (the machine role may decrypt).
    assert_eq!(
        run(&|c| {
            c.env("AWS_SHARED_CREDENTIALS_FILE", &sealer_profile)
                .env("AWS_ROLE_ARN", &aws.machine_role)
                .env("AWS_WEB_IDENTITY_TOKEN_FILE", &token);
        }),
        (Some(16), true)
    );
    // Web identity (may decrypt) wins over the instance (sealer).
    aws.oracle(&["anonymous", "1"]);
    assert_eq!(
        run(&|c| {
            c.env("AWS_ROLE_ARN", &aws.machine_role).env("AWS_WEB_IDENTITY_TOKEN_FILE", &token);
        }),
        (Some(0), false)
    );
    // Nothing else: the instance (sealer, denied).
    assert_eq!(run(&|_| {}), (Some(16), true));
}

/// No credentials anywhere: exit 16, every place searched named, and a hint.
#[test]
fn no_credentials_names_every_place_searched() {
    let aws = moto();
    let _serial = aws.lock();
    let scratch = Scratch::new();
    let mut command = cryptadm();
    aws.bare_env(&mut command);
    command.env("HOME", scratch.path("home"));
    let sealed = seal(command, &scratch, &aws.key);
    let text = stderr(&sealed);
    assert_eq!(sealed.status.code(), Some(16), "{text}");
    for place in [
        "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (not set)",
        &format!(
            "profile `default` in `{}/.aws/credentials` and `{}/.aws/config`",
            scratch.path("home").display(),
            scratch.path("home").display()
        ),
        "AWS_ROLE_ARN/AWS_WEB_IDENTITY_TOKEN_FILE (not set)",
        "the EC2 instance metadata service (disabled by AWS_EC2_METADATA_DISABLED)",
    ] {
        assert!(text.contains(place), "{place}: {text}");
    }
    assert!(text.contains("hint:"), "{text}");
    assert!(sealed.stdout.is_empty());
    // The instance metadata service not answering is named too.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut command = cryptadm();
    aws.bare_env(&mut command);
    command
        .env_remove("AWS_EC2_METADATA_DISABLED")
        .env("AWS_EC2_METADATA_SERVICE_ENDPOINT", format!("http://127.0.0.1:{port}"));
    let sealed = seal(command, &scratch, &aws.key);
    let text = stderr(&sealed);
    assert_eq!(sealed.status.code(), Some(16), "{text}");
    assert!(
        text.contains(&format!("the EC2 instance metadata service at http://127.0.0.1:{port} (did not answer")),
        "{text}"
    );
}

/// The `--provider aws-kms` examples of the README and of docs/bootstrap.md, run as written (the key ARN and file
/// names replaced by the test's):
/// the sealed stream, the cloud-init userdata and the Ignition config come out, and the sealed stream opens.
#[test]
fn the_readmes_aws_kms_examples_run() {
    let aws = moto();
    let _serial = aws.lock();
    let scratch = Scratch::new();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme =
        ["README.md", "docs/bootstrap.md"].map(|page| std::fs::read_to_string(repo.join(page)).unwrap()).join("\n");
    let mut commands = Vec::new();
    let mut lines = readme.lines();
    while let Some(line) = lines.next() {
        if !line.starts_with("cryptadm bootstrap seal") || !line.contains("--provider aws-kms") {
            continue;
        }
        let mut command = line.to_owned();
        while command.ends_with('\\') {
            command.pop();
            command.push_str(lines.next().unwrap().trim_start());
        }
        commands.push(command);
    }
    assert!(commands.len() >= 4, "{commands:?}");
    let bin = assert_cmd::cargo::cargo_bin("cryptadm");
    let path = format!("{}:{}", bin.parent().unwrap().display(), std::env::var("PATH").unwrap_or_default());
    for name in ["machine-config.yaml", "kubeadm.yaml", "join-token.yaml"] {
        scratch.write(name, CONFIG);
    }
    for command in &commands {
        let command = command
            .replace("arn:aws:kms:us-west-2:111122223333:key/1234abcd", &aws.key)
            .replace("arn:aws:kms:…", &aws.key);
        let command = command.split(" # ").next().unwrap().to_owned();
        let mut shell = Command::new("sh");
        shell.arg("-c").arg(&command).current_dir(scratch.dir.path()).env("PATH", &path);
        for name in crate::support_aws::AWS_VARIABLES {
            shell.env_remove(name);
        }
        shell
            .env("AWS_ENDPOINT_URL", &aws.endpoint)
            .env("AWS_ACCESS_KEY_ID", &aws.admin.0)
            .env("AWS_SECRET_ACCESS_KEY", &aws.admin.1)
            .env("AWS_EC2_METADATA_DISABLED", "true");
        let output = shell.output().unwrap();
        assert!(output.status.success(), "{command}: {}", stderr(&output));
    }
    for output in ["userdata", "config.ign", "machine-0.yaml"] {
        let text = std::fs::read_to_string(scratch.path(output)).unwrap();
        assert!(!text.is_empty(), "{output}");
    }
    let sealed = std::fs::read(scratch.path("machine-0.yaml")).unwrap();
    assert!(passphrase_uri(&sealed).starts_with("kms://"));
    let opened = open(with_keys(aws, &aws.admin), &scratch, &sealed);
    assert!(opened.status.success(), "{}", stderr(&opened));
    assert_eq!(String::from_utf8_lossy(&opened.stdout), CONFIG);
}

/// RemoteConfig from S3 (path style on a custom endpoint), Secrets Manager (by name and by ARN; SecretString and
/// SecretBinary) and SSM (SecureString), each written by boto3; a missing object is exit 5, a user who may not
/// read is exit 16.
#[test]
fn remote_config_from_s3_secrets_manager_and_ssm_written_by_boto3() {
    let aws = moto();
    let _serial = aws.lock();
    let scratch = Scratch::new();
    let part = |name: &str| format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n");
    let file = |name: &str| scratch.write(name, part(name)).display().to_string();
    aws.oracle(&["put-object", "capi-boot", "machines/m 0.yaml", &file("from-s3")]);
    aws.oracle(&["put-secret", "capi/m-0", &file("from-secret")]);
    let binary_arn = aws.oracle(&["put-secret", "capi/m-0-binary", &file("from-binary-secret"), "binary"]);
    aws.oracle(&["put-parameter", "/capi/m-0", &file("from-ssm")]);
    let input = scratch.write("in-band.yaml", part("in-band"));
    let remote = |extra: &[&str]| {
        let mut command = with_keys(aws, &aws.admin);
        command.args(["bootstrap", "seal", "--provider", "aws-kms", "--passphrase-uri", &aws.key, "--in"]).arg(&input);
        for pair in extra {
            command.args(["--remote-config", pair]);
        }
        let sealed = command.output().unwrap();
        assert!(sealed.status.success(), "{}", stderr(&sealed));
        sealed.stdout
    };
    let sealed = remote(&[
        "s3=s3://capi-boot/machines/m 0.yaml",
        "aws-secrets-manager=capi/m-0",
        &format!("aws-secrets-manager={}", binary_arn.trim()),
        "aws-ssm=ssm:///capi/m-0",
    ]);
    let opened = open(with_keys(aws, &aws.admin), &scratch, &sealed);
    assert!(opened.status.success(), "{}", stderr(&opened));
    let text = String::from_utf8_lossy(&opened.stdout);
    for name in ["from-s3", "from-secret", "from-binary-secret", "from-ssm", "in-band"] {
        assert!(text.contains(&format!("name: {name}\n")), "{name}: {text}");
    }
    let missing = open(with_keys(aws, &aws.admin), &scratch, &remote(&["s3=s3://capi-boot/machines/nope.yaml"]));
    assert_eq!(missing.status.code(), Some(5), "{}", stderr(&missing));
    let denied = open(with_keys(aws, &aws.sealer), &scratch, &remote(&["aws-ssm=ssm:///capi/m-0"]));
    assert_eq!(denied.status.code(), Some(16), "{}", stderr(&denied));
    assert!(stderr(&denied).contains("AccessDenied"), "{}", stderr(&denied));
}

/// Cluster API Provider AWS's `secureSecretsBackend: secrets-manager` layout, as boto3 writes it (the gzip'd
/// userdata split over `PREFIX-0`, `PREFIX-1`, … as SecretBinary): read, joined, gunzipped, and the chunks deleted
/// as CAPA's boothook deletes them; after a chunk that cannot be read, every chunk.
#[test]
fn capas_chunked_secrets_manager_userdata_is_read_and_deleted() {
    use std::io::Write as _;
    let aws = moto();
    let _serial = aws.lock();
    let scratch = Scratch::new();
    let prefix = "aws.cluster.x-k8s.io/namespaces/default/clusters/c1/instances/m-0-k3q9v";
    let userdata = format!("#cloud-config\nwrite_files:\n- path: /etc/x\n  content: |\n{}", "    filler\n".repeat(200));
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gzip.write_all(userdata.as_bytes()).unwrap();
    let gzipped = gzip.finish().unwrap();
    let half = gzipped.len() / 2;
    for (i, piece) in [&gzipped[..half], &gzipped[half..]].iter().enumerate() {
        let file = scratch.write(&format!("chunk-{i}"), piece);
        aws.oracle(&["put-secret", &format!("{prefix}-{i}"), file.to_str().unwrap(), "binary"]);
    }
    let input = scratch.write("in-band.yaml", "kind: ConfigMap\n");
    let sealed = with_keys(aws, &aws.admin)
        .args(["bootstrap", "seal", "--provider", "aws-kms", "--passphrase-uri", &aws.key, "--in"])
        .arg(&input)
        .args(["--remote-config", &format!("capa-secrets-manager={prefix}?chunks=2")])
        .output()
        .unwrap();
    assert!(sealed.status.success(), "{}", stderr(&sealed));
    let opened = open(with_keys(aws, &aws.admin), &scratch, &sealed.stdout);
    assert!(opened.status.success(), "{}", stderr(&opened));
    assert!(String::from_utf8_lossy(&opened.stdout).contains(&userdata), "{}", String::from_utf8_lossy(&opened.stdout));
    // boto3 no longer finds the chunks: a second first boot has nothing to read (exit 5).
    let gone = aws.oracle_command(&["secret-exists", &format!("{prefix}-0")]).output().unwrap();
    assert!(!gone.status.success());
    let again = open(with_keys(aws, &aws.admin), &scratch, &sealed.stdout);
    assert_eq!(again.status.code(), Some(5), "{}", stderr(&again));
    // Chunk 1 missing: exit 5, and chunk 0 is deleted too (every chunk goes on failure, as docs/aws.md says).
    let broken = format!("{prefix}-broken");
    aws.oracle(&["put-secret", &format!("{broken}-0"), scratch.path("chunk-0").to_str().unwrap(), "binary"]);
    let sealed = with_keys(aws, &aws.admin)
        .args(["bootstrap", "seal", "--provider", "aws-kms", "--passphrase-uri", &aws.key, "--in"])
        .arg(&input)
        .args(["--remote-config", &format!("capa-secrets-manager={broken}?chunks=2")])
        .output()
        .unwrap();
    assert!(sealed.status.success(), "{}", stderr(&sealed));
    let failed = open(with_keys(aws, &aws.admin), &scratch, &sealed.stdout);
    assert_eq!(failed.status.code(), Some(5), "{}", stderr(&failed));
    assert!(stderr(&failed).contains(&format!("{broken}-1")), "{}", stderr(&failed));
    let kept = aws.oracle_command(&["secret-exists", &format!("{broken}-0")]).output().unwrap();
    assert!(!kept.status.success(), "chunk 0 was left behind after chunk 1 failed");
}

/// Cluster API Provider AWS's `secureSecretsBackend: ssm-parameter-store` layout, as boto3 writes it the way CAPA's
/// `ssm.Service.Create` does: the gzip'd userdata in standard base64, split every 4,000 bytes over the SecureString
/// parameters `PREFIX/0`, `PREFIX/1`, …; read, joined, decoded, gunzipped, and every parameter deleted, as CAPA's
/// boothook does. A layout with a chunk missing is exit 5, and (as the boothook) leaves no parameter behind.
#[test]
fn capas_chunked_ssm_parameter_store_userdata_is_read_and_deleted() {
    use base64::Engine as _;
    use sha2::Digest as _;
    use std::io::Write as _;
    let aws = moto();
    let _serial = aws.lock();
    let scratch = Scratch::new();
    // Hashes: text gzip cannot squeeze below the three 4,000-byte chunks wanted.
    let lines: String =
        (0..200u32).map(|i| format!("    {}\n", hex::encode(sha2::Sha256::digest(i.to_be_bytes())))).collect();
    let userdata = format!("#cloud-config\nwrite_files:\n- path: /etc/x\n  content: |\n{lines}");
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gzip.write_all(userdata.as_bytes()).unwrap();
    let encoded = base64::engine::general_purpose::STANDARD.encode(gzip.finish().unwrap());
    let chunks: Vec<&str> = encoded.as_bytes().chunks(4000).map(|c| std::str::from_utf8(c).unwrap()).collect();
    assert_eq!(chunks.len(), 3, "{} base64 bytes", encoded.len());
    let put = |prefix: &str, skip: Option<usize>| {
        for (i, chunk) in chunks.iter().enumerate().filter(|(i, _)| Some(*i) != skip) {
            let file = scratch.write(&format!("chunk-{i}"), chunk);
            aws.oracle(&["put-parameter", &format!("{prefix}/{i}"), file.to_str().unwrap()]);
        }
    };
    let exists = |name: String| aws.oracle_command(&["parameter-exists", &name]).output().unwrap().status.success();
    let sealed = |prefix: &str| {
        let input = scratch.write("in-band.yaml", "kind: ConfigMap\n");
        let sealed = with_keys(aws, &aws.admin)
            .args(["bootstrap", "seal", "--provider", "aws-kms", "--passphrase-uri", &aws.key, "--in"])
            .arg(&input)
            .args(["--remote-config", &format!("capa-ssm-parameter-store={prefix}?chunks=3")])
            .output()
            .unwrap();
        assert!(sealed.status.success(), "{}", stderr(&sealed));
        sealed.stdout
    };
    let prefix = "/cluster.x-k8s.io/6f1c2a3e-1b2c-4d5e-8f90-0123456789ab";
    put(prefix, None);
    let document = sealed(prefix);
    let opened = open(with_keys(aws, &aws.admin), &scratch, &document);
    assert!(opened.status.success(), "{}", stderr(&opened));
    assert!(String::from_utf8_lossy(&opened.stdout).contains(&userdata), "{}", String::from_utf8_lossy(&opened.stdout));
    // boto3 no longer finds the parameters: a second first boot has nothing to read (exit 5).
    for i in 0..3 {
        assert!(!exists(format!("{prefix}/{i}")), "{prefix}/{i} was not deleted");
    }
    let again = open(with_keys(aws, &aws.admin), &scratch, &document);
    assert_eq!(again.status.code(), Some(5), "{}", stderr(&again));
    // Chunk 1 missing: exit 5 naming it, and the boothook's cleanup: chunks 0 and 2 deleted too.
    let broken = "/cluster.x-k8s.io/0b7e3c1d-2a4f-4c6e-9d8b-abcdefabcdef";
    put(broken, Some(1));
    let failed = open(with_keys(aws, &aws.admin), &scratch, &sealed(broken));
    assert_eq!(failed.status.code(), Some(5), "{}", stderr(&failed));
    assert!(stderr(&failed).contains(&format!("{broken}/1")), "{}", stderr(&failed));
    assert!(failed.stdout.is_empty());
    for i in [0, 2] {
        assert!(!exists(format!("{broken}/{i}")), "{broken}/{i} was left behind after a failed read");
    }
}

/// A LUKS2 image made by cryptsetup (PBKDF2-SHA256, `iterations`) whose keyslot 0 opens with the key in its
/// scratch directory's `old.key`: (the volume, that key file).
fn luks_volume(iterations: u32) -> (LuksImage, PathBuf) {
    let volume = LuksImage::new("aws", "old passphrase", iterations);
    let old = volume.scratch.path("old.key");
    (volume, old)
}

/// `volume rotate --key-store file://DIR --key-wrap aws-kms://ARN`: the store seeded with the AWS CLI's form (boto3
/// Encrypt, standard base64 and a newline), the volume rotated, the new `current` a KMS blob that boto3 decrypts
/// into the key cryptsetup opens the volume with; a value in plain is refused (exit 3) and changes nothing.
#[test]
fn volume_rotate_with_a_file_store_wrapped_by_aws_kms() {
    let aws = moto();
    let _serial = aws.lock();
    let scratch = Scratch::new();
    let (volume, old) = luks_volume(1000);
    let image = &volume.image;
    let entry = scratch.path("keys/pvc-aws");
    std::fs::create_dir_all(&entry).unwrap();
    let seeded = aws.oracle(&["encrypt", &aws.key, old.to_str().unwrap()]);
    std::fs::write(entry.join("current"), &seeded).unwrap();
    let rotate = || {
        let mut command = with_keys(aws, &aws.admin);
        command
            .env("CRYPTADM_RUN_DIR", scratch.path("run"))
            .args(["volume", "rotate", "--volume-id", "pvc-aws", "--volume-path"])
            .arg(image)
            .args(["--key-store", &format!("file://{}", scratch.path("keys").display())])
            .args(["--key-wrap", &format!("aws-kms://{}", aws.key)]);
        command.output().unwrap()
    };
    let rotated = rotate();
    assert!(rotated.status.success(), "{}", stderr(&rotated));
    let stored = std::fs::read_to_string(entry.join("current")).unwrap();
    assert_ne!(stored, seeded);
    // Issue 42: the value is bound to the volume: the record names the documented encryption context, and boto3
    // decrypts the blob with exactly that context, and not without it or with another volume's.
    let store_uri = format!("file://{}", scratch.path("keys").display());
    let context =
        |volume: &str| serde_json::json!({"cryptadm:store": store_uri, "cryptadm:volume": volume}).to_string();
    let record: serde_json::Value = serde_json::from_str(&stored).unwrap();
    assert_eq!(record["context"].to_string(), context("pvc-aws"), "{stored}");
    let ciphertext = record["ciphertext"].as_str().unwrap();
    let new_key = scratch.path("new.key");
    aws.oracle(&["decrypt", ciphertext, new_key.to_str().unwrap(), &aws.key, &context("pvc-aws")]);
    for wrong in ["{}".to_owned(), context("pvc-other")] {
        let refused = aws.oracle_command(&["decrypt", ciphertext, "/dev/null", &aws.key, &wrong]).output().unwrap();
        assert!(!refused.status.success(), "boto3 decrypted with context {wrong}");
        assert!(String::from_utf8_lossy(&refused.stderr).contains("InvalidCiphertext"), "{refused:?}");
    }
    let opens = |key: &Path| volume.opens(&std::fs::read(key).unwrap());
    assert!(opens(&new_key), "the key boto3 unwrapped does not open the volume");
    assert!(!opens(&old), "the old key still opens the volume");
    assert!(!entry.join("pending").exists() && !entry.join("previous").exists());
    // The value moved to another volume's entry is refused (exit 15, naming both volumes) and nothing changes;
    // so is a record edited to name that volume (KMS refuses the blob with that context).
    let other = scratch.path("keys/pvc-other");
    std::fs::create_dir_all(&other).unwrap();
    let before = std::fs::read(image).unwrap();
    let edited = stored.replace("\"pvc-aws\"", "\"pvc-other\"");
    for (moved, names) in [(&stored, "volume `pvc-other` is bound to volume `pvc-aws`"), (&edited, "not made for")] {
        std::fs::write(other.join("current"), moved).unwrap();
        let mut command = with_keys(aws, &aws.admin);
        command
            .env("CRYPTADM_RUN_DIR", scratch.path("run"))
            .args(["volume", "rotate", "--volume-id", "pvc-other", "--volume-path"])
            .arg(image)
            .args(["--key-store", &format!("{store_uri}/")])
            .args(["--key-wrap", &format!("aws-kms://{}", aws.key)]);
        let refused = command.output().unwrap();
        assert_eq!(refused.status.code(), Some(15), "{}", stderr(&refused));
        assert!(stderr(&refused).contains(names), "{}", stderr(&refused));
        assert!(before == std::fs::read(image).unwrap());
        assert_eq!(std::fs::read_to_string(other.join("current")).unwrap(), *moved);
    }
    // volume rewrap: ReEncrypt; the blob changes, boto3 still gets the same key out of it.
    let rewrap = || {
        let mut command = with_keys(aws, &aws.admin);
        command
            .env("CRYPTADM_RUN_DIR", scratch.path("run"))
            .args(["volume", "rewrap", "--key-store", &format!("file://{}", scratch.path("keys").display())])
            .args(["--key-wrap", &format!("aws-kms://{}", aws.key)]);
        command.output().unwrap()
    };
    // The moved value makes the whole rewrap refused (15), nothing rewritten.
    let refused = rewrap();
    assert_eq!(refused.status.code(), Some(15), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("pvc-other") && stderr(&refused).contains("nothing was rewritten"));
    assert_eq!(std::fs::read_to_string(entry.join("current")).unwrap(), stored);
    // An old value without a context (the AWS CLI's form) in another entry: rewrap binds it to its volume.
    std::fs::remove_dir_all(&other).unwrap();
    let legacy = scratch.path("keys/pvc-legacy");
    std::fs::create_dir_all(&legacy).unwrap();
    // (The image's current passphrase, so that the bound result rotates below.)
    std::fs::write(legacy.join("current"), aws.encrypt(&scratch, &std::fs::read(&new_key).unwrap())).unwrap();
    let rewrapped = rewrap();
    assert!(rewrapped.status.success(), "{}", stderr(&rewrapped));
    assert!(stderr(&rewrapped).contains("rewrapped 2 value(s) of 2 volume(s)"), "{}", stderr(&rewrapped));
    let restored = std::fs::read_to_string(entry.join("current")).unwrap();
    assert_ne!(restored, stored);
    let again = scratch.path("again.key");
    let restored: serde_json::Value = serde_json::from_str(&restored).unwrap();
    assert_ne!(restored["ciphertext"].as_str().unwrap(), ciphertext, "ReEncrypt made a new blob");
    let restored = restored["ciphertext"].as_str().unwrap();
    aws.oracle(&["decrypt", restored, again.to_str().unwrap(), &aws.key, &context("pvc-aws")]);
    assert_eq!(std::fs::read(&again).unwrap(), std::fs::read(&new_key).unwrap());
    let bound: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(legacy.join("current")).unwrap()).unwrap();
    assert_eq!(bound["context"].to_string(), context("pvc-legacy"));
    aws.oracle(&[
        "decrypt",
        bound["ciphertext"].as_str().unwrap(),
        again.to_str().unwrap(),
        &aws.key,
        &context("pvc-legacy"),
    ]);
    assert_eq!(std::fs::read(&again).unwrap(), std::fs::read(&new_key).unwrap());
    // The value rewrap bound rotates: the volume, under the id pvc-legacy, gets a new passphrase bound to it.
    let mut command = with_keys(aws, &aws.admin);
    command
        .env("CRYPTADM_RUN_DIR", scratch.path("run"))
        .args(["volume", "rotate", "--volume-id", "pvc-legacy", "--volume-path"])
        .arg(image)
        .args(["--key-store", &store_uri])
        .args(["--key-wrap", &format!("aws-kms://{}", aws.key)]);
    let rotated = command.output().unwrap();
    assert!(rotated.status.success(), "{}", stderr(&rotated));
    let bound: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(legacy.join("current")).unwrap()).unwrap();
    let newest = scratch.path("newest.key");
    let ciphertext = bound["ciphertext"].as_str().unwrap();
    aws.oracle(&["decrypt", ciphertext, newest.to_str().unwrap(), &aws.key, &context("pvc-legacy")]);
    assert!(opens(&newest) && !opens(&new_key), "the rotation of the rewrapped value");
    std::fs::remove_dir_all(&legacy).unwrap();
    // A passphrase in plain where a KMS blob belongs is refused, and nothing changes.
    std::fs::write(entry.join("current"), "a plain passphrase").unwrap();
    let before = std::fs::read(image).unwrap();
    let refused = rotate();
    assert_eq!(refused.status.code(), Some(3), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("KMS CiphertextBlob"), "{}", stderr(&refused));
    assert!(before == std::fs::read(image).unwrap());
    let refused = rewrap();
    assert_eq!(refused.status.code(), Some(3), "{}", stderr(&refused));
    assert_eq!(std::fs::read_to_string(entry.join("current")).unwrap(), "a plain passphrase");
}

/// Issue 41, crash points of `volume rewrap` of a `file://` store wrapped by `aws-kms://`: it checks and
/// re-encrypts every value first, then writes them one by one. The process is aborted (`CRYPTADM_FAULT_POINT`,
/// fault-injection builds) once every value is checked (`rewrap-checked`) and after each value written
/// (`rewrap-wrote-N`); at every point each value is either byte for byte as before or re-encrypted (exactly the
/// first N, in order), boto3 decrypts each into the same passphrase, each volume opens with its stored `current`
/// (cryptsetup), no other file is left in the store, and a rerun completes, re-encrypting every value.
#[test]
fn volume_rewrap_of_a_file_store_crashed_at_every_step_is_as_before_or_rewrapped() {
    let aws = moto();
    let _serial = aws.lock();
    let scratch = Scratch::new();
    let keys = scratch.path("keys");
    let alpha = LuksImage::new("rewrap-a", "alpha passphrase", 1000);
    let bravo = LuksImage::new("rewrap-b", "bravo passphrase", 1000);
    // (file, plaintext, the blob seeded), in the order rewrap writes them (entries sorted, then current, pending,
    // previous).
    let seeded: Vec<(PathBuf, &[u8], String)> = [
        ("a", "current", &b"alpha passphrase"[..]),
        ("b", "current", b"bravo passphrase"),
        ("b", "previous", b"older"),
    ]
    .into_iter()
    .map(|(entry, name, plain)| (keys.join(entry).join(name), plain, aws.encrypt(&scratch, plain)))
    .collect();
    let seed = || {
        let _ = std::fs::remove_dir_all(&keys);
        for (path, _, blob) in &seeded {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, blob).unwrap();
        }
    };
    let rewrap = |point: Option<&str>| {
        let mut command = with_keys(aws, &aws.admin);
        command
            .env("CRYPTADM_RUN_DIR", scratch.path("run"))
            .args(["volume", "rewrap", "--key-store", &format!("file://{}", keys.display())])
            .args(["--key-wrap", &format!("aws-kms://{}", aws.key)]);
        if let Some(point) = point {
            command.env("CRYPTADM_FAULT_POINT", point);
        }
        command.output().unwrap()
    };
    // Each value as before or re-encrypted (the same plaintext); returns how many were re-encrypted, and checks
    // that these come first, the store holds nothing else and each volume opens with its stored current.
    let check = |point: &str| -> usize {
        let mut rewritten = Vec::new();
        for (path, plain, blob) in &seeded {
            let now = std::fs::read(path).unwrap_or_else(|e| panic!("{point}: {}: {e}", path.display()));
            if now != blob.as_bytes() {
                assert_eq!(aws.decrypt(&scratch, &now), *plain, "{point}: {} is unreadable", path.display());
            }
            rewritten.push(now != blob.as_bytes());
        }
        let n = rewritten.iter().filter(|r| **r).count();
        assert!(rewritten.iter().take(n).all(|r| *r), "{point}: not the first {n} values: {rewritten:?}");
        for (entry, names) in [("a", vec!["current"]), ("b", vec!["current", "previous"])] {
            let mut found: Vec<String> = std::fs::read_dir(keys.join(entry))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            found.sort();
            assert_eq!(found, names, "{point}: entry {entry}");
        }
        for (volume, entry) in [(&alpha, "a"), (&bravo, "b")] {
            let current = aws.decrypt(&scratch, &std::fs::read(keys.join(entry).join("current")).unwrap());
            assert!(volume.opens(&current), "{point}: volume {entry} does not open with its stored current");
        }
        n
    };
    let points = ["rewrap-checked", "rewrap-wrote-1", "rewrap-wrote-2", "rewrap-wrote-3"];
    for (written, point) in points.into_iter().enumerate() {
        seed();
        let crashed = rewrap(Some(point));
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&crashed.status),
            Some(6),
            "{point}: not aborted there: {}",
            stderr(&crashed)
        );
        assert_eq!(check(point), written, "{point}: values re-encrypted when it stopped");
        let rerun = rewrap(None);
        assert!(rerun.status.success(), "{point}: the rerun: {}", stderr(&rerun));
        assert!(stderr(&rerun).contains("rewrapped 3 value(s) of 2 volume(s)"), "{}", stderr(&rerun));
        assert_eq!(check(&format!("{point}, rerun")), 3, "{point}: the rerun left a value as it was");
    }
}

/// Temporary credentials that expire in the middle of one command: the instance profile's (IMDSv2 stand-in) live
/// 2 seconds, and `volume rotate --key-wrap aws-kms://…` makes KMS calls before and after its pause (Decrypt of the
/// current key and Encrypt of the new one before the pending key is stored, Decrypts and an Encrypt while
/// committing). The rotation is held at `pending-stored` (CRYPTADM_FAULT_WAIT: a run that is slow, not dead) until
/// the credentials it fetched have expired: the client fetches them again, the command succeeds, and what it stored
/// is a blob boto3 decrypts into the key cryptsetup opens the volume with. (It used to rely on the keyslot's PBKDF2
/// being slow in the test build, which it no longer is: crates/bulk.)
#[test]
#[cfg_attr(not(feature = "fault-injection"), ignore = "needs `--features fault-injection` (.ci/run runs it)")]
fn credentials_that_expire_during_a_rotation_are_fetched_again() {
    let aws = moto();
    let _serial = aws.lock();
    let scratch = Scratch::new();
    let (volume, old) = luks_volume(1000);
    let image = &volume.image;
    let entry = scratch.path("keys/pvc-expiring");
    std::fs::create_dir_all(&entry).unwrap();
    std::fs::write(entry.join("current"), aws.encrypt(&scratch, &std::fs::read(&old).unwrap())).unwrap();
    let life = 2;
    let stand_in = imds(&scratch, aws, "node", life);
    let go = scratch.path("go");
    let mut command = cryptadm();
    aws.bare_env(&mut command);
    command
        .env_remove("AWS_EC2_METADATA_DISABLED")
        .env("AWS_EC2_METADATA_SERVICE_ENDPOINT", stand_in.endpoint())
        .env("CRYPTADM_RUN_DIR", scratch.path("run"))
        .env("CRYPTADM_FAULT_POINT", "pending-stored")
        .env("CRYPTADM_FAULT_WAIT", &go)
        .args(["volume", "rotate", "--volume-id", "pvc-expiring", "--volume-path"])
        .arg(image)
        .args(["--key-store", &format!("file://{}", scratch.path("keys").display())])
        .args(["--key-wrap", &format!("aws-kms://{}", aws.key)]);
    let started = std::time::Instant::now();
    let rotation = std::thread::spawn(move || command.output().unwrap());
    // The pending key is in the store before the step is reported: the run is at its pause (or about to be).
    while !entry.join("pending").exists() {
        assert!(started.elapsed() < std::time::Duration::from_secs(120), "the rotation never stored its pending key");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(u64::from(life) * 1000 + 500));
    std::fs::write(&go, "").unwrap();
    let rotated = rotation.join().unwrap();
    let took = started.elapsed();
    assert!(rotated.status.success(), "{}", stderr(&rotated));
    let log = std::fs::read_to_string(&stand_in.log).unwrap();
    let fetches = log.matches("GET /latest/meta-data/iam/security-credentials/cryptadm-node token-ok").count();
    assert!(fetches >= 2, "the credentials were not fetched again during a {took:?} rotation:\n{log}");
    assert!(!log.contains("no-token"), "{log}");
    let new_key = aws.decrypt(&scratch, &std::fs::read(entry.join("current")).unwrap());
    assert!(volume.opens(&new_key), "the key boto3 unwrapped does not open the volume");
}
