//! gRPC key providers (`{"grpc": TARGET}` in OCICRYPT_KEYPROVIDER_CONFIG): cryptadm encrypts and decrypts
//! through a provider that a Python grpcio server plays (tests/interop/keyprovider_grpc.py, stubs from the
//! vendored ocicrypt keyprovider.proto), over a unix socket and over TCP; a provider that is down is a clear
//! error with exit status 1.

use crate::image::{TWO_LAYERS, fixture, layer_digests, layers, oci};
use crate::support::{Scratch, cryptadm, require_tool};
use predicates::prelude::*;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const SERVER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/interop/keyprovider_grpc.py");

/// The provider process, killed on drop.
pub(crate) struct Provider(Child);

impl Provider {
    pub(crate) fn start(address: &str, log: &Path, ready: impl Fn() -> bool) -> Self {
        require_tool("python3", "apt-get install -y python3");
        let child = Command::new("python3")
            .arg(SERVER)
            .arg(address)
            .arg(log)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut provider = Self(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        while !ready() {
            assert!(provider.0.try_wait().unwrap().is_none(), "the provider exited (pip install grpcio grpcio-tools)");
            assert!(Instant::now() < deadline, "the gRPC provider did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
        provider
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn encrypt_and_decrypt_through_a_grpc_provider_and_a_clear_error_when_it_is_down() {
    let work = Scratch::new();
    let socket = work.path("kp.sock");
    let log = work.path("kp.log");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let config = work.write(
        "ocicrypt_keyprovider.conf",
        format!(
            r#"{{"key-providers": {{"kms": {{"grpc": "unix://{}"}}, "tcp": {{"grpc": "127.0.0.1:{port}"}}}}}}"#,
            socket.display()
        ),
    );
    let src = work.path("src");
    fixture(&src, TWO_LAYERS);
    {
        let _unix = Provider::start(&format!("unix://{}", socket.display()), &log, || socket.exists());
        let _tcp = Provider::start(&format!("127.0.0.1:{port}"), &log, || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        let enc = work.path("enc");
        cryptadm()
            .env("OCICRYPT_KEYPROVIDER_CONFIG", &config)
            .args(["image", "encrypt", "--recipient", "provider:kms", "--recipient", "provider:tcp:some-key-id"])
            .arg(oci(&src))
            .arg(oci(&enc))
            .assert()
            .success();
        for manifest in layers(&enc) {
            for layer in manifest["layers"].as_array().unwrap() {
                assert!(layer["annotations"]["org.opencontainers.image.enc.keys.provider.kms"].is_string());
                assert!(layer["annotations"]["org.opencontainers.image.enc.keys.provider.tcp"].is_string());
            }
        }
        let dec = work.path("dec");
        cryptadm()
            .env("OCICRYPT_KEYPROVIDER_CONFIG", &config)
            .args(["image", "decrypt", "--key", "provider:kms"])
            .arg(oci(&enc))
            .arg(oci(&dec))
            .assert()
            .success();
        assert_eq!(layer_digests(&dec), layer_digests(&src));
        let calls = std::fs::read_to_string(&log).unwrap();
        assert_eq!(calls.matches(r#""rpc": "WrapKey""#).count(), 4, "{calls}");
        assert!(calls.contains(r#""rpc": "UnWrapKey""#), "{calls}");
        // Only the provider's own parameters reach it, never other schemes' keys.
        assert!(calls.lines().filter(|l| l.contains("UnWrapKey")).all(|l| !l.contains("privkeys")), "{calls}");
    }
    // Both providers are down now.
    let dec = work.path("dec-down");
    cryptadm()
        .env("OCICRYPT_KEYPROVIDER_CONFIG", &config)
        .args(["image", "decrypt", "--key", "provider:kms"])
        .arg(oci(&work.path("enc")))
        .arg(oci(&dec))
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "provider.kms: cannot unwrap the layer key: cannot reach the gRPC key provider at `unix://",
        ));
    cryptadm()
        .env("OCICRYPT_KEYPROVIDER_CONFIG", &config)
        .args(["image", "encrypt", "--recipient", "provider:kms"])
        .arg(oci(&src))
        .arg(oci(&work.path("enc-down")))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("cannot reach the gRPC key provider at `unix://"));
    assert!(!work.path("enc-down").exists() || !work.path("enc-down/index.json").exists());
}
