//! The overall deadline (`--timeout`, `CRYPTADM_TIMEOUT`) bounds the whole command for every backend: a server
//! that accepts and never answers, and one that drips its answer a byte every 2 s (in front of the real server:
//! tangd, PyKMIP; a fake HTTP answer for Vault, AWS KMS and Keystone, whose clients stop at the first byte
//! anyway), make the real `cryptadm` stop within `--timeout` + 1 s, with exit status 4 and the server's address in
//! the message. Threshold pins are asked in parallel: a 2-of-3 `sss` with one dripping server opens at once.
//! The registry cases are in tests/cli/registry.rs (they need its registry).

use crate::support::{Scratch, cryptadm};
use crate::support_misbehaving::{Misbehaving, Mode, timed};
use crate::support_tang::servers;
use std::time::Duration;

/// The deadline tried, and how much later than it the command may end.
const TIMEOUT: &str = "5";
const SLACK: Duration = Duration::from_secs(6);

const CONFIG: &[u8] = b"apiVersion: v1\nkind: Config\nclusters: [deadline]\n";

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The command ended by the deadline: status 4, within [`SLACK`], naming `server` and the deadline, with the hint.
fn assert_cut(output: &std::process::Output, took: Duration, server: &str, case: &str) {
    let error = stderr(output);
    assert_eq!(output.status.code(), Some(4), "{case}: {error}");
    assert!(took < SLACK, "{case}: took {took:?}: {error}");
    assert!(error.contains(server), "{case}: the message does not name {server}: {error}");
    assert!(error.contains("the overall deadline of 5 s passed"), "{case}: {error}");
    assert!(error.contains("hint:") && error.contains("--timeout"), "{case}: {error}");
    assert_eq!(error.lines().filter(|l| l.starts_with("error:")).count(), 1, "{case}: {error}");
}

/// `bootstrap seal --provider clevis --clevis-pin PIN --clevis-config CONFIG` into `sealed.yaml`.
fn clevis_seal(scratch: &Scratch, pin: &str, config: &str, extra: &[&str]) -> (std::process::Output, Duration) {
    let input = scratch.write("config.yaml", CONFIG);
    let _ = std::fs::remove_file(scratch.path("sealed.yaml"));
    timed(
        cryptadm()
            .args(extra)
            .args(["bootstrap", "seal", "--provider", "clevis", "--clevis-pin", pin, "--clevis-config", config])
            .arg("--in")
            .arg(input)
            .arg("--out")
            .arg(scratch.path("sealed.yaml")),
    )
}

fn open(scratch: &Scratch, extra: &[&str]) -> (std::process::Output, Duration) {
    timed(
        cryptadm()
            .args(extra)
            .args(["bootstrap", "open", "--in"])
            .arg(scratch.path("sealed.yaml"))
            .arg("--out")
            .arg(scratch.path("opened.yaml")),
    )
}

/// Tang: sealing to a silent server, and opening what was sealed through a server that then goes silent or drips
/// (in front of a real tangd); `disk clevis-bind` and `disk decrypt --clevis` the same; with `--timeout` and with
/// `CRYPTADM_TIMEOUT`.
#[test]
fn tang_silent_or_dripping_ends_at_the_deadline() {
    let trio = servers();
    let scratch = Scratch::new();
    let silent = Misbehaving::silent();
    let config = format!(r#"{{"url":"{}","thp":"{}"}}"#, silent.url(), trio.tangs[0].thp());
    let (output, took) = clevis_seal(&scratch, "tang", &config, &["--timeout", TIMEOUT]);
    assert_cut(&output, took, &silent.host(), "seal, silent");
    assert!(!scratch.path("sealed.yaml").exists(), "nothing is written");

    let proxy = Misbehaving::start(Mode::Forward, Some(&format!("127.0.0.1:{}", trio.tangs[0].port)));
    let config = format!(r#"{{"url":"{}","thp":"{}"}}"#, proxy.url(), trio.tangs[0].thp());
    let (output, _) = clevis_seal(&scratch, "tang", &config, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    for mode in [Mode::Silent, Mode::Drip] {
        proxy.set(mode);
        let (output, took) = open(&scratch, &["--timeout", TIMEOUT]);
        assert_cut(&output, took, &proxy.host(), &format!("open, {mode:?}"));
        assert!(!scratch.path("opened.yaml").exists(), "nothing is written");
        let (output, took) = timed(
            cryptadm()
                .env("CRYPTADM_TIMEOUT", TIMEOUT)
                .args(["bootstrap", "open", "--in"])
                .arg(scratch.path("sealed.yaml"))
                .args(["--out", "-"]),
        );
        assert_cut(&output, took, &proxy.host(), &format!("open with CRYPTADM_TIMEOUT, {mode:?}"));
    }

    // The disk commands: binding a volume to a silent server, opening one bound through a dripping one.
    proxy.set(Mode::Forward);
    let pass = scratch.write("pass", b"pw");
    let image = scratch.path("bound.img");
    let fast = ["--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000"];
    let formatted = cryptadm()
        .args(["disk", "luks-format", "--size", "2M", "--key-file"])
        .arg(&pass)
        .args(fast)
        .args(["--clevis-pin", "tang", "--clevis-config", &config])
        .arg(&image)
        .output()
        .unwrap();
    assert!(formatted.status.success(), "{}", stderr(&formatted));
    let before = std::fs::read(&image).unwrap();
    let config = format!(r#"{{"url":"{}","thp":"{}"}}"#, silent.url(), trio.tangs[1].thp());
    let (output, took) = timed(
        cryptadm()
            .args(["--timeout", TIMEOUT, "disk", "clevis-bind", "--key-file"])
            .arg(&pass)
            .args(["--clevis-pin", "tang", "--clevis-config", &config])
            .arg(&image),
    );
    assert_cut(&output, took, &silent.host(), "disk clevis-bind, silent");
    assert_eq!(std::fs::read(&image).unwrap(), before, "the volume is untouched");
    proxy.set(Mode::Drip);
    let (output, took) = timed(
        cryptadm()
            .args(["--timeout", TIMEOUT, "disk", "decrypt", "--clevis"])
            .arg(&image)
            .arg("--out")
            .arg(scratch.path("x")),
    );
    assert_cut(&output, took, &proxy.host(), "disk decrypt --clevis, dripping");
    assert!(!scratch.path("x").exists());
}

/// sss: the pins are asked at once and the first `t` answers win. 2-of-3 with one dripping server opens in under
/// 2 s (without any deadline: nothing waits for the dripping one); 1-of-3 with two silent servers opens through
/// the third; 3-of-3 with one dripping server ends at the deadline naming it; sealing to a silent one too.
#[test]
fn sss_asks_pins_in_parallel_and_ends_at_the_deadline() {
    let trio = servers();
    let scratch = Scratch::new();
    let proxies = [1, 2].map(|i| Misbehaving::start(Mode::Forward, Some(&format!("127.0.0.1:{}", trio.tangs[i].port))));
    let through = |i: usize| format!(r#"{{"url":"{}","thp":"{}"}}"#, proxies[i - 1].url(), trio.tangs[i].thp());
    let cases = [
        (2, [trio.tangs[0].config(), trio.tangs[1].config(), through(2)], [Mode::Forward, Mode::Drip], true),
        (1, [trio.tangs[0].config(), through(1), through(2)], [Mode::Silent, Mode::Silent], true),
        (3, [trio.tangs[0].config(), trio.tangs[1].config(), through(2)], [Mode::Forward, Mode::Drip], false),
    ];
    // What an open through healthy servers takes on this machine now (a loaded CI host is slower than 2 s, and
    // varies from one open to the next: twice it, plus a second, still proves that nothing waited for the dripping
    // server, whose answer would take minutes).
    let config =
        format!(r#"{{"t":3,"pins":{{"tang":[{}]}}}}"#, [trio.tangs[0].config(), through(1), through(2)].join(","));
    assert!(clevis_seal(&scratch, "sss", &config, &[]).0.status.success());
    let (output, healthy) = open(&scratch, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    std::fs::remove_file(scratch.path("opened.yaml")).unwrap();
    let fast = Duration::from_secs(2).max(healthy * 2 + Duration::from_secs(1));
    for (threshold, pins, modes, opens) in cases {
        let case = format!("{threshold} of 3, {modes:?}");
        let config = format!(r#"{{"t":{threshold},"pins":{{"tang":[{}]}}}}"#, pins.join(","));
        let (output, _) = clevis_seal(&scratch, "sss", &config, &[]);
        assert!(output.status.success(), "{case}: {}", stderr(&output));
        for (proxy, mode) in proxies.iter().zip(modes) {
            proxy.set(mode);
        }
        if opens {
            let (output, took) = open(&scratch, if threshold == 2 { &[] } else { &["--timeout", TIMEOUT] });
            assert!(output.status.success(), "{case}: {}", stderr(&output));
            assert!(took < fast, "{case}: took {took:?} (healthy: {healthy:?})");
            assert_eq!(std::fs::read(scratch.path("opened.yaml")).unwrap(), CONFIG);
            std::fs::remove_file(scratch.path("opened.yaml")).unwrap();
        } else {
            let (output, took) = open(&scratch, &["--timeout", TIMEOUT]);
            assert_cut(&output, took, &proxies[1].host(), &case);
            assert!(stderr(&output).contains("2 of the 3 pins needed"), "{case}: {}", stderr(&output));
        }
        for proxy in &proxies {
            proxy.set(Mode::Forward);
        }
    }
    // Sealing needs every server's advertisement.
    proxies[0].set(Mode::Silent);
    let config = format!(r#"{{"t":1,"pins":{{"tang":[{},{}]}}}}"#, trio.tangs[0].config(), through(1));
    let (output, took) = clevis_seal(&scratch, "sss", &config, &["--timeout", TIMEOUT]);
    assert_cut(&output, took, &proxies[0].host(), "sss seal with a silent server");
}

/// KMIP (a raw TLS socket): a silent server stalls the TLS handshake, a dripping one (in front of PyKMIP) drips
/// it; both end at the deadline, named, and never as "Resource temporarily unavailable".
#[test]
fn kmip_silent_or_dripping_ends_at_the_deadline() {
    let kmip = crate::support_kmip::server();
    let scratch = Scratch::new();
    let input = scratch.write("config.yaml", CONFIG);
    let silent = Misbehaving::silent();
    let dripping = Misbehaving::start(Mode::Drip, Some(&kmip.server));
    for (server, case) in [(&silent, "silent"), (&dripping, "dripping")] {
        let (output, took) = timed(
            cryptadm()
                .env("CRYPTADM_KMIP_SERVER", server.host())
                .env("CRYPTADM_KMIP_CACERT", &kmip.ca)
                .env("CRYPTADM_KMIP_CLIENT_CERT", &kmip.client.cert)
                .env("CRYPTADM_KMIP_CLIENT_KEY", &kmip.client.key)
                .args(["--timeout", TIMEOUT, "bootstrap", "seal", "--provider", "kmip", "--passphrase-uri", "kmip://1"])
                .arg("--in")
                .arg(&input),
        );
        assert_cut(&output, took, &server.host(), &format!("KMIP, {case}"));
        assert!(!stderr(&output).contains("os error"), "{}", stderr(&output));
        assert!(output.stdout.is_empty());
    }
}

/// The HTTP key managers without a server behind them: Vault (Transit), AWS KMS and Keystone (before Barbican),
/// silent and dripping. One case runs with a 30 s deadline, to show the bound is the deadline, not a fixed time.
#[test]
fn http_key_managers_silent_or_dripping_end_at_the_deadline() {
    let scratch = Scratch::new();
    let input = scratch.write("config.yaml", CONFIG);
    let (silent, dripping) = (Misbehaving::silent(), Misbehaving::dripping());
    // Each backend against each server, all at once (each case takes the deadline).
    let mut cases: Vec<(String, String, assert_cmd::Command)> = Vec::new();
    for (server, case) in [(&silent, "silent"), (&dripping, "dripping")] {
        let mut vault = cryptadm();
        vault
            .env("VAULT_ADDR", server.url())
            .env("VAULT_TOKEN", "hvs.deadline-test")
            .args(["--timeout", TIMEOUT, "bootstrap", "seal", "--provider", "vault-transit"])
            .args(["--passphrase-uri", "vault-transit://transit/capi", "--in"])
            .arg(&input);
        let mut aws = cryptadm();
        aws.env("AWS_ENDPOINT_URL", server.url())
            .env("AWS_REGION", "us-east-1")
            .env("AWS_ACCESS_KEY_ID", "AKIADEADLINETEST0000")
            .env("AWS_SECRET_ACCESS_KEY", "deadline-test-secret")
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .env("HOME", scratch.path(""))
            .args(["--timeout", TIMEOUT, "bootstrap", "seal", "--provider", "aws-kms", "--passphrase-uri"])
            .arg("arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab")
            .arg("--in")
            .arg(&input);
        let mut keystone = cryptadm();
        keystone
            .env_remove("OS_CLOUD")
            .env_remove("OS_CLIENT_CONFIG_FILE")
            .env("HOME", scratch.path(""))
            .env("OS_AUTH_URL", format!("{}/v3", server.url()))
            .env("OS_USERNAME", "admin")
            .env("OS_PASSWORD", "deadline-test")
            .env("OS_PROJECT_NAME", "admin")
            .env("OS_USER_DOMAIN_NAME", "Default")
            .env("OS_PROJECT_DOMAIN_NAME", "Default")
            .args(["--timeout", TIMEOUT, "disk", "luks-format", "--format", "qcow2", "--size", "1M"])
            .args(["--key-manager", "barbican", "--pbkdf-force-iterations", "1000"])
            .arg(scratch.path(&format!("{case}.qcow2")));
        for (backend, command) in [("Vault", vault), ("AWS KMS", aws), ("Keystone", keystone)] {
            cases.push((format!("{backend}, {case}"), server.host(), command));
        }
    }
    std::thread::scope(|scope| {
        for (case, host, mut command) in cases {
            scope.spawn(move || {
                let (output, took) = timed(&mut command);
                assert_cut(&output, took, &host, &case);
                assert!(output.stdout.is_empty(), "{case}");
            });
        }
    });
    assert!(!scratch.path("silent.qcow2").exists() && !scratch.path("dripping.qcow2").exists(), "nothing is written");
    let (output, took) = timed(
        cryptadm()
            .env("VAULT_ADDR", silent.url())
            .env("VAULT_TOKEN", "hvs.deadline-test")
            .env("CRYPTADM_TIMEOUT", "30")
            .args(["bootstrap", "seal", "--provider", "vault-transit"])
            .args(["--passphrase-uri", "vault-transit://transit/capi", "--in"])
            .arg(&input),
    );
    let error = stderr(&output);
    assert_eq!(output.status.code(), Some(4), "{error}");
    assert!(took >= Duration::from_secs(29) && took < Duration::from_secs(31), "took {took:?}: {error}");
    assert!(error.contains("the overall deadline of 30 s passed") && error.contains(&silent.host()), "{error}");
}
