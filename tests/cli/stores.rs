//! Key stores and their wraps across backends, on the real servers: `volume import` of an existing volume into
//! every built-in store (`file://`, `vault-kv://` on OpenBao, `kmip://` on PyKMIP), in plain and wrapped by every
//! wrap (Transit on OpenBao, AWS KMS on moto, KMIP AES-GCM on PyKMIP), each stored value read back and unwrapped by
//! an independent client (the file itself, `bao`, boto3, PyKMIP and Python's `cryptography`), and the result
//! rotated by `volume rotate` and checked with cryptsetup; what import refuses; and a `file://` store wrapped by
//! AWS KMS holding plain values (issue 41).

use crate::support::{Scratch, cryptadm};
use crate::support_aws::{Moto, moto};
use crate::support_kmip::Kmip;
use crate::support_luks::{LuksImage, cryptsetup};
use crate::support_openbao::{OpenBao, dev};
use base64::Engine as _;

const OLD_KEY: &str = "the passphrase the volume was made with";
/// The KMIP AES key that wraps values in these tests (its bytes known, so Python can check what is stored).
const KMIP_WRAP_KEY: [u8; 32] = [0x5a; 32];

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Store {
    File,
    VaultKv,
    Kmip,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Wrap {
    Plain,
    Transit,
    AwsKms,
    Kmip,
}

/// The three servers, started once.
struct Servers {
    bao: &'static OpenBao,
    aws: &'static Moto,
    kmip: &'static Kmip,
    kmip_wrap_uid: String,
}

fn servers() -> &'static Servers {
    static SERVERS: std::sync::OnceLock<Servers> = std::sync::OnceLock::new();
    SERVERS.get_or_init(|| {
        let kmip = crate::support_kmip::server();
        let kmip_wrap_uid = kmip.oracle(&["register-aes", "test/stores-wrap", &hex::encode(KMIP_WRAP_KEY)]);
        Servers { bao: dev(), aws: moto(), kmip, kmip_wrap_uid }
    })
}

/// One volume and where its key goes.
struct Case {
    volume: LuksImage,
    store: Store,
    wrap: Wrap,
    scratch: Scratch,
}

impl Case {
    fn new(store: Store, wrap: Wrap) -> Self {
        Self { volume: LuksImage::new("import", OLD_KEY, 1000), store, wrap, scratch: Scratch::new() }
    }

    fn key_store(&self) -> String {
        match self.store {
            Store::File => format!("file://{}", self.scratch.path("keys").display()),
            Store::VaultKv => "vault-kv://kv/imported".into(),
            Store::Kmip => "kmip://imported".into(),
        }
    }

    /// `cryptadm VERB` with every server's settings, the store and the wrap.
    fn command(&self, s: &Servers, verb: &[&str]) -> assert_cmd::Command {
        let mut command = cryptadm();
        s.aws.env_with(&mut command, &s.aws.admin);
        command
            .env("CRYPTADM_RUN_DIR", self.scratch.path("run"))
            .env("VAULT_ADDR", &s.bao.addr)
            .env("VAULT_TOKEN", &s.bao.root_token)
            .args(["volume"])
            .args(verb)
            .args(["--volume-id", &self.volume.id, "--volume-path"])
            .arg(&self.volume.image)
            .args(["--key-store", &self.key_store()])
            .args(s.kmip.flags());
        let wrap = match self.wrap {
            Wrap::Plain => None,
            Wrap::Transit => Some("vault-transit://transit/volumes".to_owned()),
            Wrap::AwsKms => Some(format!("aws-kms://{}", s.aws.key)),
            Wrap::Kmip => Some(format!("kmip://{}", s.kmip_wrap_uid)),
        };
        if let Some(wrap) = wrap {
            command.args(["--key-wrap", &wrap]);
        }
        command
    }

    fn import(&self, s: &Servers, passphrase: &[u8], extra: &[&str]) -> std::process::Output {
        let file = self.scratch.write("import.key", passphrase);
        let mut command = self.command(s, &["import"]);
        command.arg("--passphrase-file").arg(&file).args(extra);
        command.output().unwrap()
    }

    /// The stored values named `slot`, as stored (read by each store's own client, not by cryptadm).
    fn stored(&self, s: &Servers, slot: &str) -> Vec<Vec<u8>> {
        match self.store {
            Store::File => {
                std::fs::read(self.scratch.path("keys").join(&self.volume.id).join(slot)).into_iter().collect()
            }
            Store::VaultKv => {
                let output = s
                    .bao
                    .bao_command(&s.bao.root_token)
                    .args(["kv", "get", "-format=json", "-mount=kv", &format!("imported/{}", self.volume.id)])
                    .output()
                    .unwrap();
                if !output.status.success() {
                    return Vec::new();
                }
                let value: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
                value
                    .pointer(&format!("/data/data/{slot}"))
                    .and_then(|v| v.as_str())
                    .map(|v| v.as_bytes().to_vec())
                    .into_iter()
                    .collect()
            }
            Store::Kmip => {
                let uids = s.kmip.oracle(&["locate", &format!("imported/{}/{slot}", self.volume.id)]);
                uids.lines().map(|uid| hex::decode(s.kmip.oracle(&["get", uid.trim()])).unwrap()).collect()
            }
        }
    }

    /// A stored value unwrapped by the wrap's own client.
    fn unwrap(&self, s: &Servers, value: &[u8]) -> Vec<u8> {
        let text = String::from_utf8_lossy(value).trim().to_owned();
        match self.wrap {
            Wrap::Plain => value.to_vec(),
            Wrap::Transit => {
                assert!(text.starts_with("vault:v"), "{text}");
                let plaintext =
                    s.bao.bao(&["write", "-field=plaintext", "transit/decrypt/volumes", &format!("ciphertext={text}")]);
                let plaintext = base64::engine::general_purpose::STANDARD.decode(plaintext.trim()).unwrap();
                // Issue 42: bound inside the plaintext, the record docs/key-managers.md documents.
                let header = format!("cryptadm volume key v2\0{}\0{}\0", self.key_store(), self.volume.id);
                plaintext
                    .strip_prefix(header.as_bytes())
                    .unwrap_or_else(|| panic!("{self:?}: not bound: {text}"))
                    .to_vec()
            }
            // Issue 42: bound to the volume; boto3 and Python decrypt with the documented context only.
            Wrap::AwsKms => {
                let record: serde_json::Value = serde_json::from_str(&text).expect("a bound value's record");
                let context = self.context();
                assert_eq!(record["context"], context, "{self:?}: {text}");
                let out = self.scratch.path("boto3.key");
                let ciphertext = record["ciphertext"].as_str().unwrap();
                s.aws.oracle(&["decrypt", ciphertext, out.to_str().unwrap(), &s.aws.key, &context.to_string()]);
                std::fs::read(out).unwrap()
            }
            Wrap::Kmip => {
                let aad = format!("cryptadm volume key v2\0{}\0{}", self.key_store(), self.volume.id);
                let body = text.strip_prefix("kmip:v2:").expect("a kmip:v2: value");
                let (recorded, sealed) = body.split_once('.').unwrap();
                let recorded = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(recorded).unwrap();
                let recorded: serde_json::Value = serde_json::from_slice(&recorded).unwrap();
                assert_eq!(recorded, self.context(), "{self:?}: {text}");
                python_kmip_unwrap(sealed, aad.as_bytes())
            }
        }
    }

    /// The context docs/aws.md and docs/kmip.md give for this case's volume.
    fn context(&self) -> serde_json::Value {
        serde_json::json!({"cryptadm:store": self.key_store(), "cryptadm:volume": self.volume.id})
    }

    /// The one current key, unwrapped by the wrap's own client.
    fn current(&self, s: &Servers) -> Vec<u8> {
        let values = self.stored(s, "current");
        assert_eq!(values.len(), 1, "{self:?}: one current value");
        self.unwrap(s, &values[0])
    }
}

impl std::fmt::Debug for Case {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?} store, {:?}", self.store, self.wrap)
    }
}

/// A sealed value opened by Python's cryptography with [`KMIP_WRAP_KEY`] and additional data `aad`.
fn python_kmip_unwrap(body: &str, aad: &[u8]) -> Vec<u8> {
    crate::support_kmip::python_open_sealed(&KMIP_WRAP_KEY, body, aad).expect("Python opens the sealed value")
}

/// Issue 40: `volume import` moves an existing volume into a file, vault-kv and kmip store, in plain and wrapped
/// by each wrap (a KMIP-wrapped store could not be seeded at all before), and the result rotates.
#[test]
fn volume_import_into_every_store_plain_and_wrapped_by_every_wrap_and_the_result_rotates() {
    let s = servers();
    let _serial = s.aws.lock();
    for store in [Store::File, Store::VaultKv, Store::Kmip] {
        for wrap in [Wrap::Plain, Wrap::Transit, Wrap::AwsKms, Wrap::Kmip] {
            let case = Case::new(store, wrap);
            let output = case.import(s, OLD_KEY.as_bytes(), &[]);
            assert!(output.status.success(), "{case:?}: {}", stderr(&output));
            assert!(stderr(&output).contains("opens keyslot 0"), "{case:?}: {}", stderr(&output));
            let stored = case.stored(s, "current");
            assert_eq!(stored.len(), 1, "{case:?}");
            if wrap != Wrap::Plain {
                assert!(!String::from_utf8_lossy(&stored[0]).contains(OLD_KEY), "{case:?}: stored in plain");
            }
            assert_eq!(case.current(s), OLD_KEY.as_bytes(), "{case:?}: what the wrap's own client unwraps");
            // The volume is untouched by the import.
            assert!(case.volume.opens(OLD_KEY.as_bytes()), "{case:?}");
            let rotated = case.command(s, &["rotate"]).output().unwrap();
            assert!(rotated.status.success(), "{case:?}: rotate: {}", stderr(&rotated));
            let new = case.current(s);
            assert_ne!(new, OLD_KEY.as_bytes(), "{case:?}");
            assert!(case.volume.opens(&new), "{case:?}: the rotated key opens the volume");
            assert!(!case.volume.opens(OLD_KEY.as_bytes()), "{case:?}: the imported key's keyslot is gone");
            assert!(case.stored(s, "pending").is_empty() && case.stored(s, "previous").is_empty(), "{case:?}");
            if wrap == Wrap::Transit && store != Store::Kmip {
                // Issue 42: the Transit value moved to another volume's entry is refused (15), naming both.
                let other = Case::new(store, wrap);
                let moved = String::from_utf8(case.stored(s, "current").remove(0)).unwrap();
                match store {
                    Store::File => {
                        let entry = other.scratch.path("keys").join(&other.volume.id);
                        std::fs::create_dir_all(&entry).unwrap();
                        std::fs::write(entry.join("current"), &moved).unwrap();
                    }
                    _ => {
                        let path = format!("imported/{}", other.volume.id);
                        s.bao.bao(&["kv", "put", "-mount=kv", &path, &format!("current={moved}")]);
                    }
                }
                let refused = other.command(s, &["rotate"]).output().unwrap();
                let err = stderr(&refused);
                assert_eq!(refused.status.code(), Some(15), "{case:?}: {err}");
                let both = format!("volume `{}` is bound to volume `{}`", other.volume.id, case.volume.id);
                assert!(err.contains(&both), "{case:?}: {err}");
                assert!(other.volume.opens(OLD_KEY.as_bytes()), "{case:?}: the other volume was changed");
                if store == Store::File {
                    // `volume rewrap` of a file store wrapped by Transit: the moved value stops it (15, nothing
                    // written); an old unbound value (bao's own transit/encrypt) is bound, and the result rotates.
                    // --no-rotate: other tests count the shared key's versions.
                    let rewrap_store = |store: &str| {
                        cryptadm()
                            .env("CRYPTADM_RUN_DIR", other.scratch.path("run"))
                            .env("VAULT_ADDR", &s.bao.addr)
                            .env("VAULT_TOKEN", &s.bao.root_token)
                            .args(["volume", "rewrap", "--no-rotate", "--key-store", store])
                            .args(["--key-wrap", "vault-transit://transit/volumes"])
                            .output()
                            .unwrap()
                    };
                    let rewrap = || rewrap_store(&other.key_store());
                    let refused = rewrap();
                    assert_eq!(refused.status.code(), Some(15), "{case:?}: {}", stderr(&refused));
                    assert!(stderr(&refused).contains(&both), "{case:?}: {}", stderr(&refused));
                    assert_eq!(other.stored(s, "current"), [moved.clone().into_bytes()], "{case:?}: rewritten");
                    let plaintext = base64::engine::general_purpose::STANDARD.encode(OLD_KEY);
                    let unbound = s.bao.bao(&[
                        "write",
                        "-field=ciphertext",
                        "transit/encrypt/volumes",
                        &format!("plaintext={plaintext}"),
                    ]);
                    let entry = other.scratch.path("keys").join(&other.volume.id);
                    std::fs::write(entry.join("current"), unbound.trim()).unwrap();
                    let output = rewrap();
                    assert!(output.status.success(), "{case:?}: {}", stderr(&output));
                    assert!(stderr(&output).contains("rewrapped 1 value(s) of 1 volume(s)"), "{}", stderr(&output));
                    assert_eq!(other.current(s), OLD_KEY.as_bytes(), "{case:?}: bound by rewrap");
                    let rotated = other.command(s, &["rotate"]).output().unwrap();
                    assert!(rotated.status.success(), "{case:?}: {}", stderr(&rotated));
                    let new = other.current(s);
                    assert!(other.volume.opens(&new) && !other.volume.opens(OLD_KEY.as_bytes()), "{case:?}");
                    // The store moved to a new directory: its values name the old one (15, with the hint), and
                    // rewrap with the new place binds them anew.
                    let moved_dir = other.scratch.path("moved-keys");
                    std::fs::rename(other.scratch.path("keys"), &moved_dir).unwrap();
                    let moved_store = format!("file://{}", moved_dir.display());
                    let rotate_moved = || {
                        cryptadm()
                            .env("CRYPTADM_RUN_DIR", other.scratch.path("run"))
                            .env("VAULT_ADDR", &s.bao.addr)
                            .env("VAULT_TOKEN", &s.bao.root_token)
                            .args(["volume", "rotate", "--volume-id", &other.volume.id, "--volume-path"])
                            .arg(&other.volume.image)
                            .args(["--key-store", &moved_store, "--key-wrap", "vault-transit://transit/volumes"])
                            .output()
                            .unwrap()
                    };
                    let refused = rotate_moved();
                    let err = stderr(&refused);
                    assert_eq!(refused.status.code(), Some(15), "{err}");
                    assert!(err.contains(&format!("is bound to store `{}`", other.key_store())), "{err}");
                    assert!(err.contains(&format!("volume rewrap --key-store {moved_store}")), "{err}");
                    let output = rewrap_store(&moved_store);
                    assert!(output.status.success(), "{}", stderr(&output));
                    let output = rotate_moved();
                    assert!(output.status.success(), "{}", stderr(&output));
                    let value = std::fs::read_to_string(moved_dir.join(&other.volume.id).join("current")).unwrap();
                    let plaintext = s.bao.bao(&[
                        "write",
                        "-field=plaintext",
                        "transit/decrypt/volumes",
                        &format!("ciphertext={value}"),
                    ]);
                    let plaintext = base64::engine::general_purpose::STANDARD.decode(plaintext.trim()).unwrap();
                    let header = format!("cryptadm volume key v2\0{moved_store}\0{}\0", other.volume.id);
                    let passphrase = plaintext.strip_prefix(header.as_bytes()).expect("bound to the new place");
                    assert!(other.volume.opens(passphrase), "{case:?}: the rebound store's key opens the volume");
                }
            }
        }
    }
}

/// What `volume import` refuses, with nothing written: a passphrase that opens no keyslot (16), an entry that
/// exists (3; `--force` replaces it, after the same check), an entry with a rotation under way (10, even with
/// `--force`), an empty passphrase (3), the passphrase on the command line (2: there is no such flag); standard
/// input works.
#[test]
fn volume_import_refuses_a_wrong_passphrase_an_existing_entry_and_a_rotation_under_way() {
    let s = servers();
    for store in [Store::File, Store::Kmip] {
        let case = Case::new(store, Wrap::Plain);
        let wrong = case.import(s, b"not the passphrase", &[]);
        assert_eq!(wrong.status.code(), Some(16), "{case:?}: {}", stderr(&wrong));
        assert!(stderr(&wrong).contains("opens no keyslot"), "{case:?}: {}", stderr(&wrong));
        assert!(case.stored(s, "current").is_empty(), "{case:?}: nothing written");
        let empty = case.import(s, b"", &[]);
        assert_eq!(empty.status.code(), Some(3), "{case:?}: {}", stderr(&empty));
        let first = case.import(s, OLD_KEY.as_bytes(), &[]);
        assert!(first.status.success(), "{case:?}: {}", stderr(&first));
        // A second key that opens the volume too.
        let old = case.volume.scratch.path("old.key");
        let second = case.volume.scratch.write("second.key", "a second passphrase");
        let added = cryptsetup(&[
            "luksAddKey",
            "--pbkdf",
            "pbkdf2",
            "--pbkdf-force-iterations",
            "1000",
            "--key-file",
            old.to_str().unwrap(),
            case.volume.image.to_str().unwrap(),
            second.to_str().unwrap(),
        ]);
        assert!(added.status.success(), "{}", String::from_utf8_lossy(&added.stderr));
        let exists = case.import(s, b"a second passphrase", &[]);
        assert_eq!(exists.status.code(), Some(3), "{case:?}: {}", stderr(&exists));
        assert!(stderr(&exists).contains("--force"), "{case:?}: {}", stderr(&exists));
        assert_eq!(case.current(s), OLD_KEY.as_bytes(), "{case:?}: left as it was");
        let wrong = case.import(s, b"not the passphrase", &["--force"]);
        assert_eq!(wrong.status.code(), Some(16), "{case:?}: {}", stderr(&wrong));
        assert_eq!(case.current(s), OLD_KEY.as_bytes(), "{case:?}: left as it was");
        let replaced = case.import(s, b"a second passphrase", &["--force"]);
        assert!(replaced.status.success(), "{case:?}: {}", stderr(&replaced));
        assert_eq!(case.current(s), b"a second passphrase", "{case:?}: replaced");
        // A rotation under way (a pending key recorded): refused even with --force.
        match store {
            Store::File => {
                let entry = case.scratch.path("keys").join(&case.volume.id);
                std::fs::write(entry.join("pending"), "a rotation's new key").unwrap();
            }
            _ => {
                let name = format!("imported/{}/pending", case.volume.id);
                s.kmip.oracle(&["register-password", &name, &hex::encode("a rotation's new key")]);
            }
        }
        let busy = case.import(s, OLD_KEY.as_bytes(), &["--force"]);
        assert_eq!(busy.status.code(), Some(10), "{case:?}: {}", stderr(&busy));
        assert_eq!(case.current(s), b"a second passphrase", "{case:?}: left as it was");
    }
    // Standard input, and no flag for a passphrase on the command line.
    let case = Case::new(Store::File, Wrap::Plain);
    let mut command = case.command(s, &["import"]);
    let output = command.args(["--passphrase-file", "-"]).write_stdin(OLD_KEY).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(case.current(s), OLD_KEY.as_bytes());
    let output = case.command(s, &["import"]).args(["--passphrase", OLD_KEY]).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(!stderr(&output).contains(OLD_KEY), "{}", stderr(&output));
}

/// Issue 41: a `file://` store wrapped by `aws-kms://` that also holds passphrases in plain made with the README's
/// recipe (`head -c 32 /dev/urandom | base64`: valid base64, so it passed for a blob). `volume rewrap` rewrote the
/// entries before the plain one, then exited 16 without naming it; `volume rotate` sent it to KMS as ciphertext
/// (exit 16). Now the plain values are told apart before any request: rewrap refuses the store whole (exit 3),
/// naming each plain value, with every file as it was; rotate refuses the plain entry with exit 3, volume untouched.
#[test]
fn plain_readme_passphrases_in_a_kms_wrapped_file_store_are_refused_before_any_request() {
    use base64::Engine as _;
    let aws = moto();
    let _serial = aws.lock();
    let scratch = Scratch::new();
    let volume = LuksImage::new("aws-plain", "old passphrase", 1000);
    let keys = scratch.path("keys");
    let readme_recipe = |seed: u8| {
        let random: Vec<u8> = (0..32u8).map(|i| i.wrapping_mul(37).wrapping_add(seed)).collect();
        format!("{}\n", base64::engine::general_purpose::STANDARD.encode(random))
    };
    let mut before = Vec::new();
    for (entry, value) in [
        ("a-wrapped", aws.encrypt(&scratch, b"first passphrase")),
        ("m-plain", readme_recipe(1)),
        ("p-plain", readme_recipe(2)),
        ("z-wrapped", aws.encrypt(&scratch, b"last passphrase")),
    ] {
        std::fs::create_dir_all(keys.join(entry)).unwrap();
        std::fs::write(keys.join(entry).join("current"), &value).unwrap();
        before.push((keys.join(entry).join("current"), value));
    }
    let mut rewrap = with_keys(aws);
    rewrap
        .env("CRYPTADM_RUN_DIR", scratch.path("run"))
        .args(["volume", "rewrap", "--key-store", &format!("file://{}", keys.display())])
        .args(["--key-wrap", &format!("aws-kms://{}", aws.key)]);
    let refused = rewrap.output().unwrap();
    assert_eq!(refused.status.code(), Some(3), "{}", stderr(&refused));
    for plain in ["m-plain/current", "p-plain/current"] {
        assert!(stderr(&refused).contains(plain), "names {plain}: {}", stderr(&refused));
    }
    assert!(stderr(&refused).contains("nothing was rewritten"), "{}", stderr(&refused));
    for (path, value) in &before {
        assert_eq!(&std::fs::read_to_string(path).unwrap(), value, "{} was rewritten", path.display());
    }
    // The plain entry opens a volume: rotate refuses it before KMS sees it, with exit 3.
    let plain = std::fs::read(keys.join("m-plain/current")).unwrap();
    let added = volume.scratch.write("plain.key", &plain);
    let old = volume.scratch.path("old.key");
    let output = cryptsetup(&[
        "luksAddKey",
        "--pbkdf",
        "pbkdf2",
        "--pbkdf-force-iterations",
        "1000",
        "--key-file",
        old.to_str().unwrap(),
        volume.image.to_str().unwrap(),
        added.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let image = std::fs::read(&volume.image).unwrap();
    let mut rotate = with_keys(aws);
    rotate
        .env("CRYPTADM_RUN_DIR", scratch.path("run"))
        .args(["volume", "rotate", "--volume-id", "m-plain", "--volume-path"])
        .arg(&volume.image)
        .args(["--key-store", &format!("file://{}", keys.display())])
        .args(["--key-wrap", &format!("aws-kms://{}", aws.key)]);
    let refused = rotate.output().unwrap();
    assert_eq!(refused.status.code(), Some(3), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("KMS CiphertextBlob"), "{}", stderr(&refused));
    assert!(image == std::fs::read(&volume.image).unwrap(), "the volume changed");
    assert_eq!(std::fs::read(keys.join("m-plain/current")).unwrap(), plain);
}

/// `cryptadm` with moto's admin keys in the environment.
fn with_keys(aws: &Moto) -> assert_cmd::Command {
    let mut command = cryptadm();
    aws.env_with(&mut command, &aws.admin);
    command
}

/// Seals a document whose only content is the RemoteConfig `provider=uri` (moto's KMS key); the sealed bytes.
fn seal_remote(aws: &Moto, scratch: &Scratch, remote: &str) -> Vec<u8> {
    let input = scratch.write("in-band.yaml", "kind: ConfigMap\n");
    let sealed = with_keys(aws)
        .args(["bootstrap", "seal", "--provider", "aws-kms", "--passphrase-uri", &aws.key, "--in"])
        .arg(&input)
        .args(["--remote-config", remote])
        .output()
        .unwrap();
    assert!(sealed.status.success(), "{}", stderr(&sealed));
    sealed.stdout
}

fn open_sealed(aws: &Moto, scratch: &Scratch, sealed: &[u8]) -> std::process::Output {
    let file = scratch.write("sealed.yaml", sealed);
    with_keys(aws)
        .args(["bootstrap", "open", "--retries", "0", "--in"])
        .arg(file)
        .args(["--out", "-"])
        .output()
        .unwrap()
}

/// Issue 41: CAPA's Secrets Manager layout with chunk 1 of 5 missing left chunks 0, 2, 3 and 4 in Secrets Manager;
/// now every chunk is deleted (as CAPA's boothook does on failure) and the read's error is reported (exit 5).
/// Chunks that are not gzip data exited 1 with a retry hint; they are bad input: exit 3, and deleted as well.
#[test]
fn capa_secrets_manager_deletes_every_chunk_on_failure_and_non_gzip_chunks_are_bad_input() {
    let aws = moto();
    let _serial = aws.lock();
    let scratch = Scratch::new();
    let exists = |name: &str| aws.oracle_command(&["secret-exists", name]).output().unwrap().status.success();
    let prefix = format!("aws.cluster.x-k8s.io/namespaces/default/clusters/c1/instances/m-{}", std::process::id());
    let missing = format!("{prefix}-missing");
    for i in [0, 2, 3, 4] {
        let file = scratch.write(&format!("chunk-{i}"), format!("piece {i}"));
        aws.oracle(&["put-secret", &format!("{missing}-{i}"), file.to_str().unwrap(), "binary"]);
    }
    let sealed = seal_remote(aws, &scratch, &format!("capa-secrets-manager={missing}?chunks=5"));
    let failed = open_sealed(aws, &scratch, &sealed);
    assert_eq!(failed.status.code(), Some(5), "{}", stderr(&failed));
    assert!(stderr(&failed).contains(&format!("{missing}-1")), "{}", stderr(&failed));
    for i in [0, 2, 3, 4] {
        assert!(!exists(&format!("{missing}-{i}")), "chunk {i} of 5 was left behind after chunk 1 failed");
    }
    let junk = format!("{prefix}-junk");
    for i in 0..2 {
        let file = scratch.write(&format!("junk-{i}"), format!("not gzip {i}"));
        aws.oracle(&["put-secret", &format!("{junk}-{i}"), file.to_str().unwrap(), "binary"]);
    }
    let sealed = seal_remote(aws, &scratch, &format!("capa-secrets-manager={junk}?chunks=2"));
    let bad = open_sealed(aws, &scratch, &sealed);
    assert_eq!(bad.status.code(), Some(3), "{}", stderr(&bad));
    assert!(stderr(&bad).contains("not gzip"), "{}", stderr(&bad));
    assert!(
        !stderr(&bad).to_lowercase().contains("retry when") && !stderr(&bad).contains("try again"),
        "{}",
        stderr(&bad)
    );
    assert!(!exists(&format!("{junk}-0")) && !exists(&format!("{junk}-1")), "read chunks are deleted");
}

/// Issue 41: the S3 source was bounded at 1 MiB while `bootstrap seal` accepts configurations up to 12.5 MB, so
/// the documented flow (seal → `aws s3 cp` → `--remote-config s3=…`) failed for any sealed document over 1 MiB,
/// with exit 1 ("unexpected answer"). Now every RemoteConfig source has the one bound (16 MiB, what seal makes):
/// a 3 MiB sealed stream in S3 opens, and an object over the bound is exit 3 (bad input, as the docs class it).
#[test]
fn an_s3_remote_config_over_1_mib_opens_and_one_over_the_bound_is_exit_3() {
    let aws = moto();
    let _serial = aws.lock();
    let scratch = Scratch::new();
    let filler: String = (0..60_000).map(|i| format!("  k{i}: value number {i} of the big document\n")).collect();
    let big = format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: the-big-one\ndata:\n{filler}");
    assert!(big.len() > 2 << 20, "{}", big.len());
    let big_file = scratch.write("big.yaml", &big);
    let sealed = with_keys(aws)
        .args(["bootstrap", "seal", "--provider", "aws-kms", "--passphrase-uri", &aws.key, "--in"])
        .arg(&big_file)
        .output()
        .unwrap();
    assert!(sealed.status.success(), "{}", stderr(&sealed));
    assert!(sealed.stdout.len() > 1 << 20);
    let sealed_file = scratch.write("big.sealed", &sealed.stdout);
    aws.oracle(&["put-object", "capi-boot", "machines/big.sealed", sealed_file.to_str().unwrap()]);
    let pointer = seal_remote(aws, &scratch, "s3=s3://capi-boot/machines/big.sealed");
    let opened = open_sealed(aws, &scratch, &pointer);
    assert!(opened.status.success(), "{}", stderr(&opened));
    let text = String::from_utf8_lossy(&opened.stdout);
    assert!(
        text.contains("name: the-big-one") && text.contains("k59999: value number 59999"),
        "not the whole document"
    );
    let huge = scratch.path("huge.bin");
    std::fs::write(&huge, vec![b'#'; (16 << 20) + 1]).unwrap();
    aws.oracle(&["put-object", "capi-boot", "machines/huge.yaml", huge.to_str().unwrap()]);
    let pointer = seal_remote(aws, &scratch, "s3=s3://capi-boot/machines/huge.yaml");
    let refused = open_sealed(aws, &scratch, &pointer);
    assert_eq!(refused.status.code(), Some(3), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("limit"), "{}", stderr(&refused));
}
