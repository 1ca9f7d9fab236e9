//! The backend table of src/kms/backends.rs, seen from the command line: one reference per key in every command
//! that can use it, unsupported combinations refused (exit 2) by naming what the flag takes, malformed references
//! refused before any request, help listing every backend of every flag that takes a reference, and -v naming
//! the backend. The real servers: moto (AWS), PyKMIP, tang with clevis.

use crate::support::{Scratch, cryptadm};
use crate::support_aws::{Moto, moto};
use crate::support_kmip::Kmip;
use crate::support_luks::LuksImage;

const CONFIG: &str = "apiVersion: v1\nkind: Config\n";

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn help(args: &[&str]) -> String {
    let output = cryptadm().args(args).arg("--help").output().unwrap();
    assert!(output.status.success());
    String::from_utf8(output.stdout).unwrap()
}

/// The lines of `--help` under `heading` (up to the next heading).
fn section<'a>(help: &'a str, heading: &str) -> Vec<&'a str> {
    help.lines()
        .skip_while(|l| !l.starts_with(heading))
        .skip(1)
        .take_while(|l| l.is_empty() || l.starts_with(' '))
        .collect()
}

fn seal_args(scratch: &Scratch, provider: &str) -> assert_cmd::Command {
    let mut command = cryptadm();
    let input = scratch.write("config.yaml", CONFIG);
    command.args(["bootstrap", "seal", "--retries", "0", "--provider", provider, "--in"]).arg(input);
    command
}

/// A closed loopback port: a request sent there would fail as "unreachable".
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[test]
fn malformed_kms_keys_are_refused_with_exit_2_before_any_request_in_every_command() {
    let scratch = Scratch::new();
    let endpoint = format!("http://127.0.0.1:{}", closed_port());
    let image = LuksImage::new("malformed", "old", 1000);
    let store = format!("file://{}", scratch.path("keys").display());
    for key in [
        "arn:aws:kms:eu-west-1:111122223333:key/",
        "arn:aws:kms:eu-west-1:111122223333:alias/",
        "arn:aws:kms:eu-west-1:11112:key/1234abcd",
        "alias/",
    ] {
        for form in [key.to_owned(), format!("aws-kms://{key}")] {
            let runs: Vec<(&str, assert_cmd::Command)> = vec![
                ("seal", {
                    let mut c = seal_args(&scratch, "aws-kms");
                    c.args(["--passphrase-uri", &form]);
                    c
                }),
                ("rotate", {
                    let mut c = cryptadm();
                    c.env("CRYPTADM_RUN_DIR", scratch.path("run"))
                        .args(["volume", "rotate", "--volume-id", &image.id, "--volume-path"])
                        .arg(&image.image)
                        .args(["--key-store", &store, "--key-wrap", &form]);
                    c
                }),
                ("encrypt", {
                    let mut c = cryptadm();
                    c.args(["image", "encrypt", "--recipient", &form, "oci:/nonexistent:a", "oci:/nonexistent:b"]);
                    c
                }),
            ];
            for (what, mut command) in runs {
                command
                    .env("AWS_ENDPOINT_URL", &endpoint)
                    .env("AWS_REGION", "eu-west-1")
                    .env("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
                    .env("AWS_SECRET_ACCESS_KEY", "secret");
                let output = command.output().unwrap();
                let text = stderr(&output);
                assert_eq!(output.status.code(), Some(2), "{what} {form}: {text}");
                assert!(!text.contains("unreachable") && !text.contains("refused"), "{what} {form}: {text}");
                if what != "encrypt" {
                    assert!(text.contains("aws-kms://ARN"), "{what} {form}: the hint names the forms: {text}");
                }
            }
        }
    }
    assert!(image.opens(b"old"), "nothing changed");
}

#[test]
fn unsupported_wraps_and_stores_name_what_the_flag_takes() {
    let scratch = Scratch::new();
    let image = LuksImage::new("combos", "old", 1000);
    let rotate = |store: &str, wrap: &str| {
        cryptadm()
            .env("CRYPTADM_RUN_DIR", scratch.path("run"))
            .env_remove("VAULT_ADDR")
            .env_remove("BAO_ADDR")
            .args(["volume", "rotate", "--volume-id", &image.id, "--volume-path"])
            .arg(&image.image)
            .args(["--key-store", store, "--key-wrap", wrap])
            .output()
            .unwrap()
    };
    let file_store = format!("file://{}", scratch.path("keys").display());
    // A KV store is no wrap: the message lists every wrap.
    let output = rotate(&file_store, "vault-kv://kv/x");
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    for form in ["vault-transit://MOUNT/KEY", "aws-kms://ARN", "kmip://UID"] {
        assert!(stderr(&output).contains(form), "{}", stderr(&output));
    }
    // A KMIP wrap on a file store is no longer "vault-kv only": it needs the KMIP server, and says so.
    let output = rotate(&file_store, "kmip://some-uid");
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("needs a KMIP server"), "{}", stderr(&output));
    assert!(!stderr(&output).contains("applies only to a vault-kv"), "{}", stderr(&output));
    // A plugin's store takes no wrap: the built-in stores are named.
    let output = rotate("myplugin:volumes", "aws-kms://alias/volumes");
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    for form in ["file:///DIR", "vault-kv://MOUNT/PREFIX", "kmip://PREFIX"] {
        assert!(stderr(&output).contains(form), "{}", stderr(&output));
    }
    // volume rewrap of a KMIP store: refused (a KMIP server cannot rewrap in place), naming both stores it takes.
    let output = cryptadm().args(["volume", "rewrap", "--key-store", "kmip://volumes"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    for form in ["vault-kv://MOUNT/PREFIX", "file:///DIR"] {
        assert!(stderr(&output).contains(form), "the hint names {form}: {}", stderr(&output));
    }
    // An image key that is a KMIP key: named for what it is, with what --recipient takes.
    let output = cryptadm()
        .args(["image", "encrypt", "--recipient", "kmip://uid", "oci:/nonexistent:a", "oci:/nonexistent:b"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("KMIP") && stderr(&output).contains("aws-kms://ARN"), "{}", stderr(&output));
    assert!(image.opens(b"old"));
}

#[test]
fn help_lists_every_backend_of_every_flag_that_takes_a_reference() {
    let seal = help(&["bootstrap", "seal"]);
    for provider in ["`file`", "`vault-transit`", "`aws-kms`", "`clevis`", "`kmip`"] {
        assert!(seal.contains(provider), "seal --help names {provider}: {seal}");
    }
    assert!(!seal.contains("--provider aws "), "no example of a plugin nobody ships");
    assert!(seal.contains("--provider aws-kms"));
    let clevis = section(&seal, "Clevis").join("\n");
    assert!(!clevis.contains("--remote-config"), "--remote-config is not under the Clevis heading: {clevis}");
    let remote = section(&seal, "Remote configuration").join("\n");
    assert!(remote.contains("--remote-config"), "{seal}");
    let long_seal =
        String::from_utf8(cryptadm().args(["bootstrap", "seal", "--help"]).output().unwrap().stdout).unwrap();
    for source in ["s3", "aws-secrets-manager", "aws-ssm", "https"] {
        assert!(long_seal.contains(source), "{source}");
    }
    let open = help(&["bootstrap", "open"]);
    for source in ["`file`", "`https`", "`s3`", "`aws-secrets-manager`", "`aws-ssm`"] {
        assert!(open.contains(source), "open --help names {source} as built in: {open}");
    }
    for provider in ["`aws-kms`", "`clevis`", "`kmip`", "`vault-transit`"] {
        assert!(open.contains(provider), "open --help names the provider {provider}");
    }
    for verb in ["rotate", "serve"] {
        let text = help(&["volume", verb]);
        for form in ["file:///DIR", "vault-kv://MOUNT/PREFIX", "kmip://PREFIX"] {
            assert!(text.contains(form), "volume {verb} --key-store lists {form}");
        }
        for form in ["vault-transit://MOUNT/KEY", "aws-kms://ARN", "kmip://UID"] {
            assert!(text.contains(form), "volume {verb} --key-wrap lists {form}");
        }
        // Each backend's flags under its own heading, nothing else there.
        let kmip = section(&text, "KMIP");
        assert!(kmip.iter().filter(|l| l.trim_start().starts_with("--")).all(|l| l.contains("--kmip-")), "{text}");
        let aws = section(&text, "AWS");
        assert!(aws.iter().filter(|l| l.trim_start().starts_with("--")).all(|l| l.contains("--aws-")), "{text}");
    }
    let rewrap = help(&["volume", "rewrap"]);
    assert!(!rewrap.contains("--kmip-"), "rewrap offers no KMIP flags: it cannot rewrap a KMIP store");
    // Issue 42: it says that it binds each value to its store and volume, and where that is explained.
    for needle in ["binds each value to its store and volume", "encryption context", "docs/key-managers.md"] {
        assert!(rewrap.contains(needle), "volume rewrap --help says `{needle}`: {rewrap}");
    }
    let man = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/man/cryptadm-volume-rotate.1")).unwrap();
    assert!(man.contains("KEY REFERENCES") && man.contains("kmip://PREFIX"), "the man page lists them");
    // docs/bootstrap.md's list of built-in providers and docs/volume.md's stores are complete too.
    let bootstrap = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/bootstrap.md")).unwrap();
    for provider in cryptadm::kms::backends::providers() {
        assert!(bootstrap.contains(&format!("`{provider}` (")), "docs/bootstrap.md lists the provider `{provider}`");
    }
    let volume = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/volume.md")).unwrap();
    for form in ["file://DIR", "vault-kv://MOUNT/PREFIX", "kmip://PREFIX"] {
        assert!(volume.contains(form), "docs/volume.md names the store {form}");
    }
}

#[test]
fn the_tpm2_pin_is_listed_with_its_setting_under_its_own_heading() {
    for args in [&["bootstrap", "seal"][..], &["disk", "luks-format"], &["disk", "clevis-bind"]] {
        let text = help(args);
        let tpm2 = section(&text, "TPM 2.0").join("\n");
        assert!(tpm2.contains("--tpm2-device"), "{args:?}: --tpm2-device under the TPM 2.0 heading: {text}");
        let clevis = section(&text, "Clevis").join("\n");
        assert!(clevis.contains("--clevis-pin") && !clevis.contains("--tpm2-"), "{args:?}: {text}");
    }
    for page in ["cryptadm-bootstrap-seal.1", "cryptadm-disk-luks-format.1", "cryptadm-disk-clevis-bind.1"] {
        let man =
            std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("man").join(page)).unwrap();
        assert!(man.contains("TPM 2.0 (Clevis): tpm2:"), "{page} lists the tpm2 pin under KEY REFERENCES");
    }
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/key-managers.md")).unwrap();
    assert!(docs.contains("| `tpm2: {\"pcr_bank\":BANK,\"pcr_ids\":IDS}` | [TPM 2.0 (Clevis)](tpm2.md) |"), "{docs}");
}

#[test]
fn bootstrap_seal_refuses_what_would_fail_at_first_boot() {
    let scratch = Scratch::new();
    // A mistyped RemoteConfig provider: refused now (exit 2), naming the built-in ones.
    let output = seal_args(&scratch, "file")
        .args(["--passphrase-uri", "file:///etc/machineadm/passphrase", "--passphrase-file"])
        .arg(scratch.write("pass", "passphrase"))
        .args(["--remote-config", "aws-s3=s3://bucket/key.yaml"])
        .env("PATH", scratch.path("bin"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("aws-s3") && stderr(&output).contains("aws-secrets-manager"),
        "{}",
        stderr(&output)
    );
    assert!(output.stdout.is_empty(), "nothing sealed");
    // ... unless a plugin by that name is on PATH.
    let bin = scratch.path("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let plugin = bin.join("machineadm-remote-configuration-provider-aws-s3");
    std::fs::write(&plugin, "#!/bin/sh\nexit 1\n").unwrap();
    std::fs::set_permissions(&plugin, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&bin, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let output = seal_args(&scratch, "file")
        .args(["--passphrase-uri", "file:///etc/machineadm/passphrase", "--passphrase-file"])
        .arg(scratch.path("pass"))
        .args(["--remote-config", "aws-s3=s3://bucket/key.yaml"])
        .env("PATH", &bin)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    // --provider clevis without --clevis-pin asks for the pin, not for --passphrase-uri.
    let output = seal_args(&scratch, "clevis").output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("--clevis-pin"), "{}", stderr(&output));
    assert!(!stderr(&output).contains("--passphrase-uri"), "{}", stderr(&output));
    // A provider given another backend's key: named, with the provider that takes it.
    let output =
        seal_args(&scratch, "vault-transit").args(["--passphrase-uri", "aws-kms://alias/capi"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("--provider aws-kms"), "{}", stderr(&output));
}

fn with_keys(aws: &Moto) -> assert_cmd::Command {
    let mut command = cryptadm();
    aws.env_with(&mut command, &aws.admin);
    command
}

/// The same AWS key, bare or as aws-kms://, seals for the aws-kms provider and the machine opens it; the bare
/// ARN is what the passphraseURI records either way.
#[test]
fn one_aws_key_reference_seals_in_both_spellings() {
    let aws = moto();
    let _serial = aws.lock();
    let scratch = Scratch::new();
    for key in [aws.key.clone(), format!("aws-kms://{}", aws.key)] {
        let mut command = with_keys(aws);
        let input = scratch.write("config.yaml", CONFIG);
        let sealed = command
            .args(["bootstrap", "seal", "--retries", "0", "--provider", "aws-kms", "--passphrase-uri", &key, "-v"])
            .arg("--in")
            .arg(input)
            .output()
            .unwrap();
        assert!(sealed.status.success(), "{key}: {}", stderr(&sealed));
        let text = String::from_utf8_lossy(&sealed.stdout).into_owned();
        assert!(text.contains(&format!("@{}", aws.key)) && !text.contains("@aws-kms://"), "{text}");
        // -v names the backend, the region, the endpoint and where the credentials come from, not the secret.
        let log = stderr(&sealed);
        assert!(log.contains("AWS KMS") && log.contains("region") && log.contains(&aws.endpoint), "{log}");
        assert!(log.contains("credentials from") && !log.contains(&aws.admin.1), "{log}");
        let sealed_file = scratch.write("sealed.yaml", &sealed.stdout);
        let opened = with_keys(aws)
            .args(["bootstrap", "open", "--retries", "0", "--in"])
            .arg(sealed_file)
            .args(["--out", "-"])
            .output()
            .unwrap();
        assert!(opened.status.success(), "{}", stderr(&opened));
        assert_eq!(String::from_utf8_lossy(&opened.stdout), CONFIG);
    }
}

/// A file:// store wrapped by a KMIP key (the store code takes any wrap): the volume seeded with a value wrapped by
/// Python's cryptography rotates, and the new value is wrapped; -v names the KMIP protocol version.
#[test]
fn a_file_store_wrapped_by_a_kmip_key_rotates() {
    let kmip: &Kmip = crate::support_kmip::server();
    let image = LuksImage::new("file-kmip", "old volume passphrase", 1000);
    let key = [0x24u8; 32];
    let uid = kmip.oracle(&["register-aes", "test/file-store-wrap", &hex::encode(key)]);
    let dir = image.scratch.path("keys");
    let current = crate::support_luks::seed_file_store(
        &dir,
        &image.id,
        crate::support_kmip::python_wrap(&key, b"old volume passphrase").as_bytes(),
    );
    let output = cryptadm()
        .env("CRYPTADM_RUN_DIR", image.scratch.path("run"))
        .args(["-v", "volume", "rotate", "--volume-id", &image.id, "--volume-path"])
        .arg(&image.image)
        .args(["--key-store", &format!("file://{}", dir.display()), "--key-wrap", &format!("kmip://{uid}")])
        .args(kmip.flags())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stderr(&output).contains("KMIP protocol 1."), "{}", stderr(&output));
    let stored = std::fs::read_to_string(&current).unwrap();
    assert!(stored.starts_with("kmip:v2:"), "the new value is stored wrapped and bound (issue 42): {stored}");
    assert!(!image.opens(b"old volume passphrase"), "the old passphrase's keyslot is gone");
}

/// A Tang URL without a scheme (as clevis takes and writes it) is opened over http, as clevis opens it.
#[test]
fn a_tang_url_without_a_scheme_is_http() {
    crate::support_tang::require_tang();
    let servers = crate::support_tang::servers();
    let tang = &servers.tangs[0];
    let url = tang.url();
    let bare = url.strip_prefix("http://").expect("the test servers are http");
    let scratch = Scratch::new();
    let config = format!("{{\"url\":\"{bare}\",\"thp\":\"{}\"}}", tang.thp());
    let sealed =
        seal_args(&scratch, "clevis").args(["--clevis-pin", "tang", "--clevis-config", &config]).output().unwrap();
    assert!(sealed.status.success(), "{}", stderr(&sealed));
    let sealed_file = scratch.write("sealed.yaml", &sealed.stdout);
    let opened =
        cryptadm().args(["bootstrap", "open", "--in"]).arg(&sealed_file).args(["--out", "-"]).output().unwrap();
    assert!(opened.status.success(), "{}", stderr(&opened));
    assert_eq!(String::from_utf8_lossy(&opened.stdout), CONFIG);
}

/// `-v` says which key manager a command uses (backend, endpoint, region, credential source), never a secret, in
/// every command that reaches one: the image commands (`encrypt` and its recipients, `decrypt` and `authorize` with
/// key-manager keys, `keyprovider` from the environment), `volume import`, `volume rotate` and `volume rewrap`
/// (both store kinds), `disk clevis-bind` and `bootstrap seal --provider clevis` (the Tang server); the bare ARN is taken as the AWS key by `--recipient`, `--key` and `--key-wrap` on a
/// `file://` store. The lines come before the first request, so a closed port serves for every server.
#[test]
fn verbose_names_the_key_manager_of_every_command_and_no_secret() {
    use base64::Engine as _;
    let s = |path: &std::path::Path| path.display().to_string();
    let scratch = Scratch::new();
    let port = closed_port();
    let endpoint = format!("http://127.0.0.1:{port}");
    let secrets = [
        "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        "IQoJb3JpZ2luX2VjEXAMPLE+SESSION/token=",
        "hvs.CAESIverbose+EXAMPLE/vaultTOKEN",
    ];
    let arn = "arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab";
    let aws_key = format!("aws-kms://{arn}");
    let vault_key = "vault-transit://transit/images";
    let image = LuksImage::new("verbose", "old", 1000);
    let passphrase = scratch.write("passphrase", "old");
    let request = format!(
        r#"{{"op":"keywrap","keywrapparams":{{"ec":{{"Parameters":{{"cryptadm":["{}"]}},"DecryptConfig":{{"Parameters":null}}}},"optsdata":"{}"}},"keyunwrapparams":{{"dc":null,"annotation":null}}}}"#,
        base64::engine::general_purpose::STANDARD.encode(&aws_key),
        base64::engine::general_purpose::STANDARD.encode([7u8; 32]),
    );
    let tang = format!(r#"{{"url":"http://127.0.0.1:{port}"}}"#);
    let tang_line = format!("key manager: Clevis pin tang http://127.0.0.1:{port}");
    let tang_expected = [tang_line.as_str()];
    let input = scratch.write("config.yaml", CONFIG);
    let runs: Vec<(&str, Vec<String>, &[&str])> = vec![
        (
            "disk clevis-bind",
            ["disk", "clevis-bind", "--key-file", &s(&passphrase), "--clevis-pin", "tang", "--clevis-config", &tang]
                .into_iter()
                .map(str::to_owned)
                .chain([s(&image.image)])
                .collect(),
            &tang_expected,
        ),
        (
            "bootstrap seal (clevis)",
            ["bootstrap", "seal", "--provider", "clevis", "--clevis-pin", "tang", "--clevis-config", &tang, "--in"]
                .into_iter()
                .map(str::to_owned)
                .chain([s(&input)])
                .collect(),
            &tang_expected,
        ),
        (
            "image encrypt",
            [
                "image",
                "encrypt",
                "--recipient",
                &aws_key,
                "--recipient",
                vault_key,
                "oci:/nonexistent:a",
                "oci:/nonexistent:b",
            ]
            .map(str::to_owned)
            .to_vec(),
            &["AWS", "Vault"],
        ),
        (
            "image decrypt",
            ["image", "decrypt", "--key", &aws_key, "--key", vault_key, "oci:/nonexistent:a", "oci:/nonexistent:b"]
                .map(str::to_owned)
                .to_vec(),
            &["AWS", "Vault"],
        ),
        // The bare ARN is the same key wherever an aws-kms:// one fits.
        (
            "image encrypt (bare ARN)",
            ["image", "encrypt", "--recipient", arn, "oci:/nonexistent:a", "oci:/nonexistent:b"]
                .map(str::to_owned)
                .to_vec(),
            &["AWS"],
        ),
        (
            "image decrypt (bare ARN)",
            ["image", "decrypt", "--key", arn, "oci:/nonexistent:a", "oci:/nonexistent:b"].map(str::to_owned).to_vec(),
            &["AWS"],
        ),
        (
            "volume rotate (bare ARN)",
            vec![
                "volume".into(),
                "rotate".into(),
                "--volume-id".into(),
                image.id.clone(),
                "--volume-path".into(),
                image.image.display().to_string(),
                "--key-store".into(),
                format!("file://{}", scratch.path("keys").display()),
                "--key-wrap".into(),
                arn.into(),
            ],
            &["AWS", "--key-wrap `aws-kms://"],
        ),
        (
            "image authorize",
            ["image", "authorize", "--key", vault_key, "oci:/nonexistent:a"].map(str::to_owned).to_vec(),
            &["Vault"],
        ),
        ("image keyprovider", ["image", "keyprovider"].map(str::to_owned).to_vec(), &["AWS", "Vault"]),
        (
            "volume import",
            vec![
                "volume".into(),
                "import".into(),
                "--volume-id".into(),
                image.id.clone(),
                "--volume-path".into(),
                image.image.display().to_string(),
                "--passphrase-file".into(),
                passphrase.display().to_string(),
                "--key-store".into(),
                "vault-kv://kv/volumes".into(),
                "--key-wrap".into(),
                aws_key.clone(),
            ],
            &["AWS", "Vault", "key store `vault-kv://kv/volumes`", "--key-wrap `aws-kms://"],
        ),
        (
            "volume rewrap (vault-kv)",
            ["volume", "rewrap", "--key-store", "vault-kv://kv/volumes", "--key-wrap", vault_key]
                .map(str::to_owned)
                .to_vec(),
            &["Vault", "key store `vault-kv://kv/volumes`", "--key-wrap `vault-transit://"],
        ),
        (
            "volume rewrap (file)",
            vec![
                "volume".into(),
                "rewrap".into(),
                "--key-store".into(),
                format!("file://{}", scratch.path("keys").display()),
                "--key-wrap".into(),
                aws_key.clone(),
            ],
            &["AWS", "--key-wrap `aws-kms://"],
        ),
    ];
    for (what, args, expected) in runs {
        let mut command = cryptadm();
        for name in crate::support_aws::AWS_VARIABLES {
            command.env_remove(name);
        }
        for name in ["BAO_ADDR", "BAO_TOKEN", "VAULT_NAMESPACE", "VAULT_CACERT", "CRYPTADM_VAULT_AUTH"] {
            command.env_remove(name);
        }
        let output = command
            .env("HOME", scratch.path(""))
            .env("CRYPTADM_RUN_DIR", scratch.path("run"))
            .env("AWS_ENDPOINT_URL", &endpoint)
            .env("AWS_REGION", "eu-west-1")
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .env("AWS_ACCESS_KEY_ID", "AKIAVERBOSEEXAMPLE01")
            .env("AWS_SECRET_ACCESS_KEY", secrets[0])
            .env("AWS_SESSION_TOKEN", secrets[1])
            .env("VAULT_ADDR", &endpoint)
            .env("VAULT_TOKEN", secrets[2])
            // Nothing answers: no retrying for long.
            .env("CRYPTADM_TIMEOUT", "1")
            .arg("-v")
            .args(&args)
            .write_stdin(request.clone())
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        let log = stderr(&output);
        assert!(!output.status.success(), "{what}: nothing answers on the closed port: {log}");
        let lines: Vec<&str> = log.lines().filter(|l| l.contains("key manager: ")).collect();
        for backend in expected.iter().filter(|e| ["AWS", "Vault"].contains(e)) {
            let line = lines
                .iter()
                .find(|l| l.contains(backend))
                .unwrap_or_else(|| panic!("{what}: no {backend} line: {log}"));
            assert!(line.contains(&format!("127.0.0.1:{port}")) && line.contains("credentials from"), "{what}: {line}");
        }
        if expected.contains(&"AWS") {
            assert!(log.contains("region eu-west-1") && log.contains("AWS_ACCESS_KEY_ID"), "{what}: the source: {log}");
        }
        if expected.contains(&"Vault") {
            assert!(log.contains("VAULT_TOKEN"), "{what}: the token's source: {log}");
        }
        for needle in expected.iter().filter(|e| !["AWS", "Vault"].contains(e)) {
            assert!(log.contains(needle), "{what}: `{needle}`: {log}");
        }
        for secret in secrets {
            let chars: Vec<char> = secret.chars().collect();
            for run in chars.windows(8).map(|w| w.iter().collect::<String>()) {
                assert!(!log.contains(&run), "{what}: `{run}` of a secret at -v: {log}");
            }
        }
    }
    assert!(image.opens(b"old"));
}

/// Every flag of every command that takes key references (the backend table's uses: `--key-wrap`, `--key-store`,
/// `--passphrase-uri`, `--remote-config`, `--recipient`/`--key`, `--clevis-config`, `--secret`) names, in its
/// help, every form the table accepts there (every built-in provider, for `--remote-config`; every pin, for
/// `--clevis-config`): help text comes from the table, so a new row shows up everywhere.
/// (The man pages' KEY REFERENCES sections are generated from the same table: generated::generated_files_are_current.)
#[test]
fn every_flag_that_takes_a_reference_lists_every_form_of_the_table_in_its_help() {
    use cryptadm::kms::backends::{BACKENDS, Use};
    fn walk(command: &clap::Command, path: String, out: &mut Vec<(String, clap::Command)>) {
        out.push((path.clone(), command.clone()));
        for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
            walk(sub, format!("{path} {}", sub.get_name()), out);
        }
    }
    let mut root = cryptadm::cmd::command();
    root.build();
    let mut commands = Vec::new();
    walk(&root, "cryptadm".into(), &mut commands);
    let mut checked = Vec::new();
    for (path, command) in &commands {
        for usage in Use::ALL {
            if !usage.commands().iter().any(|noun| path.starts_with(noun)) {
                continue;
            }
            for arg in command.get_arguments().filter(|a| !a.is_hide_set()) {
                let Some(long) = arg.get_long().filter(|l| usage.longs().contains(l)) else { continue };
                let help = format!(
                    "{} {}",
                    arg.get_help().map(ToString::to_string).unwrap_or_default(),
                    arg.get_long_help().map(ToString::to_string).unwrap_or_default()
                );
                // `volume rewrap` rewraps in place what Transit and AWS KMS wrap in a vault-kv:// or file:// store
                // (a KMIP server or a plugin cannot): those backends' forms only (the rest is refused by name).
                let rewrap = path == "cryptadm volume rewrap";
                let in_place = |name: &str| ["vault-transit", "aws-kms", "vault-kv", "file"].contains(&name);
                for backend in BACKENDS.iter().filter(|b| b.can(usage) && (!rewrap || in_place(b.name))) {
                    // `--remote-config PROVIDER=URI` names the providers (the URIs are each provider's own).
                    // `--clevis-config` names each pin with an example of its JSON (the pin is `--clevis-pin`'s).
                    let forms: Vec<&str> = match usage {
                        Use::RemoteConfig => backend.remote_sources.to_vec(),
                        Use::ThresholdPin => backend.syntaxes(usage).map(|f| f.split(':').next().unwrap()).collect(),
                        _ => backend.syntaxes(usage).collect(),
                    };
                    for form in forms {
                        assert!(
                            help.contains(form),
                            "{path} --{long}: {} form `{form}` missing from: {help}",
                            backend.title
                        );
                    }
                }
                checked.push(format!("{path} --{long}"));
            }
        }
    }
    for expected in [
        "cryptadm volume rotate --key-store",
        "cryptadm volume rotate --key-wrap",
        "cryptadm volume import --key-store",
        "cryptadm bootstrap seal --passphrase-uri",
        "cryptadm bootstrap seal --remote-config",
        "cryptadm image encrypt --recipient",
        "cryptadm image decrypt --key",
    ] {
        assert!(checked.iter().any(|c| c == expected), "{expected} was checked: {checked:?}");
    }
}
