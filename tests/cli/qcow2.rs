//! qcow2 with LUKS, `disk convert` and OpenStack secret semantics against qemu-img, cryptsetup and a Python
//! restatement of os-brick: qemu-img reads what cryptadm writes and the other way round, every convert option
//! between every pair of formats, no plaintext on disk, and bad input refused with the documented exit codes.

use crate::support::{Scratch, cryptadm, require_tool};
use memchr::memmem;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Text that marks plaintext: no file but the source (and `none` outputs) may ever contain it.
const MARKER: &[u8] = b"cryptadm issue 13 plaintext marker\n";
const SIZE: usize = 16 << 20;
const CHEAP: &[&str] = &["--pbkdf-force-iterations", "1000"];

fn tools() {
    require_tool("qemu-img", "apt-get install -y qemu-utils");
    require_tool("cryptsetup", "apt-get install -y cryptsetup-bin");
}

/// A sparse 16 MiB disk: data at 0, a marker run at 1 MiB + 512, explicit zeros at 6 MiB, 8 KiB across the
/// 8 MiB boundary (several cluster and L2 boundaries), and the last 512 bytes.
fn sparse_source(work: &Scratch) -> (PathBuf, Vec<u8>) {
    let mut disk = vec![0u8; SIZE];
    let mut x: u32 = 12345;
    let mut noise = |buf: &mut [u8]| {
        for b in buf {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            *b = (x >> 16) as u8;
        }
    };
    noise(&mut disk[..65536]);
    for (i, b) in disk[(1 << 20) + 512..(1 << 20) + 512 + 4096].iter_mut().enumerate() {
        *b = MARKER[i % MARKER.len()];
    }
    noise(&mut disk[(8 << 20) - 4096..(8 << 20) + 4096]);
    noise(&mut disk[SIZE - 512..]);
    let path = work.path("src.raw");
    let file = std::fs::File::create(&path).unwrap();
    file.set_len(SIZE as u64).unwrap();
    use std::os::unix::fs::FileExt;
    for (at, len) in [(0usize, 65536usize), ((1 << 20) + 512, 4096), ((8 << 20) - 4096, 8192), (SIZE - 512, 512)] {
        file.write_all_at(&disk[at..at + len], at as u64).unwrap();
    }
    file.write_all_at(&vec![0u8; 65536], 6 << 20).unwrap();
    (path, disk)
}

fn run(cmd: &mut Command) -> String {
    let output = cmd.output().expect("run tool");
    assert!(output.status.success(), "{cmd:?} failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn secret_object(pass: &Path) -> String {
    format!("secret,id=sec0,file={}", pass.display())
}

/// The guest bytes of `image` as qemu-img reads them (`driver` qcow2 or luks or raw).
fn qemu_read(image: &Path, pass: Option<&Path>, out: &Path) -> Vec<u8> {
    let mut cmd = Command::new("qemu-img");
    cmd.arg("convert");
    let opts = match (pass, is_qcow2(image), is_luks(image)) {
        (Some(p), true, _) => {
            cmd.args(["--object", &secret_object(p)]);
            format!("driver=qcow2,file.filename={},encrypt.key-secret=sec0", image.display())
        }
        (Some(p), false, true) => {
            cmd.args(["--object", &secret_object(p)]);
            format!("driver=luks,file.filename={},key-secret=sec0", image.display())
        }
        (_, true, _) => format!("driver=qcow2,file.filename={}", image.display()),
        _ => format!("driver=raw,file.filename={}", image.display()),
    };
    run(cmd.args(["--image-opts", &opts, "-O", "raw"]).arg(out));
    let bytes = std::fs::read(out).unwrap();
    std::fs::remove_file(out).unwrap();
    bytes
}

fn is_qcow2(path: &Path) -> bool {
    std::fs::read(path).map(|b| b.starts_with(b"QFI\xfb")).unwrap_or(false)
}

fn is_luks(path: &Path) -> bool {
    std::fs::read(path).map(|b| b.starts_with(b"LUKS\xba\xbe")).unwrap_or(false)
}

fn qemu_check(image: &Path, pass: &Path) -> Value {
    let out = Command::new("qemu-img")
        .args(["check", "--output=json", "--object", &secret_object(pass), "--image-opts"])
        .arg(format!("driver=qcow2,file.filename={},encrypt.key-secret=sec0", image.display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "qemu-img check: {}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["check-errors"], 0, "{v}");
    assert!(v.get("corruptions").is_none() && v.get("leaks").is_none(), "{v}");
    v
}

fn qemu_info(image: &Path) -> Value {
    serde_json::from_str(&run(Command::new("qemu-img").args(["info", "--output=json"]).arg(image))).unwrap()
}

fn inspect(image: &Path) -> Value {
    let out = cryptadm().args(["disk", "inspect", "--output-format", "json"]).arg(image).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn nonzero_clusters(disk: &[u8], cs: usize) -> u64 {
    disk.chunks(cs).filter(|c| c.iter().any(|&b| b != 0)).count() as u64
}

/// Our qcow2+LUKS at 512-byte (many refcount blocks, a multi-cluster L1), 64 KiB and 2 MiB clusters: qemu-img
/// converts it back to the source bytes, `check` is clean, `info` reports LUKS, zero clusters are unallocated.
#[test]
fn qemu_reads_the_qcow2_luks_images_we_write() {
    tools();
    let work = Scratch::new();
    let (src, disk) = sparse_source(&work);
    let pass = work.write("pass.txt", "abc");
    for cs in [512usize, 65536, 2 << 20] {
        let image = work.path(&format!("ours-{cs}.qcow2"));
        cryptadm()
            .args(["disk", "luks-format", "--format", "qcow2", "--cluster-size", &cs.to_string(), "--key-file"])
            .arg(&pass)
            .args(CHEAP)
            .arg("--from")
            .arg(&src)
            .arg(&image)
            .assert()
            .success();
        assert_eq!(qemu_read(&image, Some(&pass), &work.path("back.raw")), disk, "cluster size {cs}");
        let check = qemu_check(&image, &pass);
        assert_eq!(check["image-end-offset"], std::fs::metadata(&image).unwrap().len(), "{check}");
        let info = qemu_info(&image);
        assert_eq!(info["encrypted"], true, "{info}");
        assert_eq!(info["format-specific"]["data"]["encrypt"]["format"], "luks", "{info}");
        assert_eq!(info["virtual-size"], SIZE as u64);
        assert_eq!(info["cluster-size"], cs as u64);
        let ours = inspect(&image);
        assert_eq!(ours["allocated_clusters"], nonzero_clusters(&disk, cs), "{ours}");
        assert_eq!(ours["encryption"]["payload_offset_sectors"], 4040);
        assert_eq!(ours["encryption"]["header_length"], 2_068_480);
        // An empty image of a given size.
        let empty = work.path(&format!("empty-{cs}.qcow2"));
        cryptadm()
            .args(["disk", "luks-format", "--format", "qcow2", "--size", "3M", "--cluster-size", &cs.to_string()])
            .arg("--key-file")
            .arg(&pass)
            .args(CHEAP)
            .arg(&empty)
            .assert()
            .success();
        qemu_check(&empty, &pass);
        assert_eq!(qemu_read(&empty, Some(&pass), &work.path("back.raw")), vec![0u8; 3 << 20]);
    }
}

/// Images qemu-img writes (4 KiB, 64 KiB, 2 MiB clusters from a sparse source; Nova's options, whose cipher mode
/// is `xts-plain64:sha256`; zero-flagged clusters) decrypt to the source bytes.
#[test]
fn we_read_the_qcow2_luks_images_qemu_writes() {
    tools();
    let work = Scratch::new();
    let (src, mut disk) = sparse_source(&work);
    let pass = work.write("pass.txt", "abc");
    let base = "encrypt.format=luks,encrypt.key-secret=sec0,encrypt.iter-time=10";
    let nova =
        "encrypt.cipher-alg=aes-256,encrypt.cipher-mode=xts,encrypt.ivgen-alg=plain64,encrypt.ivgen-hash-alg=sha256";
    let cases = [("4k", String::new()), ("64k", String::new()), ("2M", String::new()), ("64k", format!(",{nova}"))];
    // qemu-img benchmarks PBKDF2 for seconds per image: make them side by side.
    let children: Vec<(PathBuf, std::process::Child)> = cases
        .iter()
        .enumerate()
        .map(|(i, (cs, extra))| {
            let image = work.path(&format!("qemu-{i}.qcow2"));
            let child = Command::new("qemu-img")
                .args(["convert", "-O", "qcow2", "--object", &secret_object(&pass), "-o"])
                .arg(format!("{base},cluster_size={cs}{extra}"))
                .arg(&src)
                .arg(&image)
                .spawn()
                .unwrap();
            (image, child)
        })
        .collect();
    for (i, (image, mut child)) in children.into_iter().enumerate() {
        assert!(child.wait().unwrap().success());
        let out = work.path(&format!("dec-{i}.raw"));
        cryptadm()
            .args(["disk", "decrypt", "--key-file"])
            .arg(&pass)
            .arg(&image)
            .arg("--out")
            .arg(&out)
            .assert()
            .success();
        assert!(std::fs::read(&out).unwrap() == disk, "case {i}");
        let info = inspect(&image);
        assert_eq!(info["encryption"]["format"], "luks");
        assert_eq!(info["encryption"]["payload_offset_sectors"], 4040);
        let mode = if i == 3 { "aes-xts-plain64:sha256" } else { "aes-xts-plain64" };
        assert_eq!(info["encryption"]["cipher"], mode);
        if i == 1 {
            // Zero flags: `write -z` keeps the host cluster and sets bit 0, `-u` also unmaps it.
            let opts = format!("driver=qcow2,file.filename={},encrypt.key-secret=sec0", image.display());
            for args in [["-z", "0", "64k"], ["-z -u", "8128k", "64k"]] {
                let cmd = format!("write {} {} {}", args[0], args[1], args[2]);
                run(Command::new("qemu-io").args([
                    "--object",
                    &secret_object(&pass),
                    "--image-opts",
                    &opts,
                    "-c",
                    &cmd,
                ]));
            }
            disk[..65536].fill(0);
            disk[(8128 << 10)..(8192 << 10)].fill(0);
            let out = work.path("dec-z.raw");
            cryptadm()
                .args(["disk", "decrypt", "--key-file"])
                .arg(&pass)
                .arg(&image)
                .arg("--out")
                .arg(&out)
                .assert()
                .success();
            assert!(std::fs::read(&out).unwrap() == disk, "zero flags");
            let (_, fresh) = sparse_source(&Scratch::new());
            disk = fresh;
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    RawLuks,
    Qcow2Luks,
    Raw,
    Qcow2,
}

impl Kind {
    fn encrypted(self) -> bool {
        matches!(self, Kind::RawLuks | Kind::Qcow2Luks)
    }
}

/// Makes a source image of `kind` holding `src`.
fn make_source(work: &Scratch, kind: Kind, src: &Path, pass: &Path) -> PathBuf {
    let path = work.path(&format!("source-{kind:?}.img"));
    match kind {
        Kind::RawLuks => cryptadm()
            .args(["disk", "luks-format", "--type", "luks1", "--pbkdf", "pbkdf2", "--key-file"])
            .arg(pass)
            .args(CHEAP)
            .arg("--from")
            .arg(src)
            .arg(&path)
            .assert()
            .success(),
        Kind::Qcow2Luks => cryptadm()
            .args(["disk", "luks-format", "--format", "qcow2", "--key-file"])
            .arg(pass)
            .args(CHEAP)
            .arg("--from")
            .arg(src)
            .arg(&path)
            .assert()
            .success(),
        Kind::Raw => {
            std::fs::copy(src, &path).unwrap();
            return path;
        }
        Kind::Qcow2 => {
            run(Command::new("qemu-img").args(["convert", "-O", "qcow2"]).arg(src).arg(&path));
            return path;
        }
    };
    path
}

fn sha256(path: &Path) -> String {
    run(Command::new("sha256sum").arg(path))
}

/// Files opened for writing in an strace log (`openat` with O_WRONLY, O_RDWR or O_CREAT).
fn written_paths(trace: &str) -> Vec<String> {
    trace
        .lines()
        .filter(|l| l.contains("openat(") && (l.contains("O_WRONLY") || l.contains("O_RDWR") || l.contains("O_CREAT")))
        .filter(|l| !l.contains("= -1"))
        .filter_map(|l| l.split('"').nth(1).map(str::to_owned))
        .filter(|p| !p.starts_with("/dev/") && !p.starts_with("/proc/"))
        .collect()
}

/// Every option between every pair of formats: the result opens with the expected secret (qemu-img; cryptsetup
/// for raw LUKS), holds the source's guest bytes, `same` keeps the LUKS UUID, the source is untouched, a
/// generated secret is 0600 and never overwritten, and only the destination's temporary file (and the new
/// secret) is ever opened for writing; no file but the source and `none` outputs ever holds plaintext.
#[test]
fn convert_every_option_between_every_pair_of_formats() {
    tools();
    let strace = Command::new("strace").arg("-V").output().is_ok_and(|o| o.status.success());
    let work = Scratch::new();
    let (src, disk) = sparse_source(&work);
    let pass = work.write("pass.txt", "abc");
    let existing = work.write("existing.txt", "an existing passphrase");
    for kind in [Kind::RawLuks, Kind::Qcow2Luks, Kind::Raw, Kind::Qcow2] {
        let source = make_source(&work, kind, &src, &pass);
        let before = sha256(&source);
        for format in ["raw", "qcow2"] {
            for option in ["same", "new", "existing", "none"] {
                if option == "same" && !kind.encrypted() {
                    continue;
                }
                let tag = format!("{kind:?}-{format}-{option}");
                let dst = work.path(&format!("out-{tag}.img"));
                let new_key = work.path(&format!("new-{tag}.txt"));
                let mut cmd = Command::new(if strace { "strace" } else { env!("CARGO_BIN_EXE_cryptadm") });
                let trace = work.path(&format!("trace-{tag}.txt"));
                if strace {
                    cmd.args(["-f", "-e", "trace=openat,creat", "-o"]).arg(&trace).arg(env!("CARGO_BIN_EXE_cryptadm"));
                }
                cmd.env_remove("CRYPTADM_PASSPHRASE").env_remove("CRYPTADM_PASSPHRASE_FILE");
                cmd.args(["disk", "convert", "--format", format, "--encryption-key", option]).args(CHEAP);
                if kind.encrypted() {
                    cmd.arg("--key-file").arg(&pass);
                }
                match option {
                    "new" => {
                        cmd.arg("--new-key-file").arg(&new_key);
                    }
                    "existing" => {
                        cmd.arg("--new-key-file").arg(&existing);
                    }
                    _ => {}
                }
                // Watch the directory while it runs: the temporary output never holds plaintext (unless `none`).
                let mut child = cmd.arg(&source).arg(&dst).stderr(std::process::Stdio::piped()).spawn().unwrap();
                while child.try_wait().unwrap().is_none() {
                    for entry in std::fs::read_dir(work.dir.path()).unwrap().flatten() {
                        let name = entry.file_name().to_string_lossy().into_owned();
                        if name.starts_with('.') && option != "none" {
                            let bytes = std::fs::read(entry.path()).unwrap_or_default();
                            assert!(memmem::find(&bytes, MARKER).is_none(), "{tag}: plaintext in {name}");
                        }
                    }
                    // A look every few milliseconds, not a spin: the scan would otherwise take a core from the
                    // conversion it watches.
                    std::thread::sleep(std::time::Duration::from_millis(5));
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
                let out = child.wait_with_output().unwrap();
                assert!(out.status.success(), "{tag}: {}", String::from_utf8_lossy(&out.stderr));
                let expected_pass = match option {
                    "same" => Some(pass.clone()),
                    "new" => Some(new_key.clone()),
                    "existing" => Some(existing.clone()),
                    _ => None,
                };
                let mut want = disk.clone();
                if format == "raw" && option != "none" {
                    want.resize(want.len().div_ceil(512) * 512, 0);
                }
                let got = qemu_read(&dst, expected_pass.as_deref(), &work.path("back.raw"));
                assert!(got == want, "{tag}: contents differ");
                assert_eq!(is_qcow2(&dst), format == "qcow2", "{tag}");
                match (format, &expected_pass) {
                    ("qcow2", Some(p)) => {
                        qemu_check(&dst, p);
                    }
                    ("raw", Some(p)) => {
                        let out = Command::new("cryptsetup")
                            .args(["open", "--test-passphrase", "--key-file"])
                            .arg(p)
                            .arg(&dst)
                            .output()
                            .unwrap();
                        assert!(out.status.success(), "{tag}: cryptsetup: {}", String::from_utf8_lossy(&out.stderr));
                    }
                    _ => assert!(!is_luks(&dst), "{tag}"),
                }
                if option == "same" {
                    let uuid = |p: &Path| {
                        let v = inspect(p);
                        v["encryption"]["uuid"].as_str().or(v["uuid"].as_str()).unwrap().to_owned()
                    };
                    assert_eq!(uuid(&dst), uuid(&source), "{tag}: same keeps the LUKS header");
                }
                if option == "new" {
                    use std::os::unix::fs::PermissionsExt;
                    let mode = std::fs::metadata(&new_key).unwrap().permissions().mode() & 0o777;
                    assert_eq!(mode, 0o600, "{tag}");
                    assert_eq!(std::fs::read(&new_key).unwrap().len(), 88, "{tag}: Nova's base64 of 64 bytes");
                    // A second run never overwrites the generated secret, and writes nothing.
                    let again = work.path(&format!("again-{tag}.img"));
                    let mut cmd = cryptadm();
                    cmd.args(["disk", "convert", "--format", format, "--encryption-key", "new"]).args(CHEAP);
                    if kind.encrypted() {
                        cmd.arg("--key-file").arg(&pass);
                    }
                    cmd.arg("--new-key-file").arg(&new_key).arg(&source).arg(&again).assert().code(3);
                    assert!(!again.exists());
                }
                if strace {
                    let log = std::fs::read_to_string(&trace).unwrap();
                    let dir = work.dir.path().to_str().unwrap().to_owned();
                    let dst_name = dst.file_name().unwrap().to_str().unwrap().to_owned();
                    for path in written_paths(&log) {
                        let name = path.rsplit('/').next().unwrap();
                        // `atomic`'s temporary files: `.DST.<random>.<suffix>` in DST's directory, and the new
                        // secret's, renamed to its name after the image.
                        let key_name = new_key.file_name().unwrap().to_str().unwrap();
                        let ok = name.starts_with(&format!(".{dst_name}."))
                            || name.starts_with(&format!(".{key_name}."))
                            || path == dir;
                        assert!(ok, "{tag}: opened {path} for writing");
                    }
                }
                // No file but the source, the plain raw input and `none` outputs holds the plaintext marker.
                for entry in std::fs::read_dir(work.dir.path()).unwrap() {
                    let path = entry.unwrap().path();
                    let name = path.file_name().unwrap().to_str().unwrap().to_owned();
                    let plain = name == "src.raw"
                        || name.starts_with("source-Raw")
                        || name.starts_with("source-Qcow2.")
                        || name.contains("-none");
                    if plain || path.is_dir() {
                        continue;
                    }
                    let bytes = std::fs::read(&path).unwrap();
                    assert!(memmem::find(&bytes, MARKER).is_none(), "{tag}: plaintext in {name}");
                }
                std::fs::remove_file(&dst).unwrap();
            }
        }
        assert_eq!(sha256(&source), before, "{kind:?}: the source changed");
    }
}

/// os-brick's secret → passphrase rule, restated in Python from `os_brick/utils.py`
/// (`get_passphrase_from_secret`, openstack/os-brick since 6.9.0): a `passphrase` secret verbatim, any other type
/// as `binascii.hexlify(key).decode('utf-8')`.
const OSBRICK: &str = r#"
import binascii, sys
def get_passphrase_from_secret(managed_type, encoded):
    if managed_type == 'passphrase':
        return encoded.decode('utf-8')
    return binascii.hexlify(encoded).decode('utf-8')
key = open(sys.argv[2], 'rb').read()
sys.stdout.write(get_passphrase_from_secret(sys.argv[1], key))
"#;

/// `--secret-type symmetric`: the image opens with the passphrase os-brick derives from the key bytes (key
/// bytes below 0x10 included, where the old "mangled" form would differ), and `--glance` prints the secret line.
#[test]
fn symmetric_secrets_give_the_passphrase_os_brick_derives() {
    tools();
    let work = Scratch::new();
    let (src, disk) = sparse_source(&work);
    let key: Vec<u8> = (0u8..32).map(|i| i.wrapping_mul(7)).collect();
    let key_file = work.write("key.bin", &key);
    let derived = run(Command::new("python3").args(["-c", OSBRICK, "symmetric"]).arg(&key_file));
    assert_eq!(derived.len(), 64);
    let pass = work.write("derived.txt", &derived);
    let image = work.path("cinder.qcow2");
    let out = cryptadm()
        .args(["disk", "luks-format", "--format", "qcow2", "--secret-type", "symmetric", "--glance"])
        .args(["--key-id", "3f1c6b9e-0d2a-4c55-9a57-3e1f0b6a2c11", "--output-format", "json", "--key-file"])
        .arg(&key_file)
        .args(CHEAP)
        .arg("--from")
        .arg(&src)
        .arg(&image)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(qemu_read(&image, Some(&pass), &work.path("back.raw")) == disk);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["disk_format"], "qcow2");
    assert_eq!(doc["properties"]["os_encrypt_format"], "LUKSv1");
    assert_eq!(doc["properties"]["os_encrypt_cipher"], "AES256");
    assert_eq!(doc["properties"]["os_decrypt_size"], SIZE.to_string());
    assert_eq!(doc["properties"]["os_encrypt_key_id"], "3f1c6b9e-0d2a-4c55-9a57-3e1f0b6a2c11");
    // Cinder makes volumes of raw LUKS images only; Nova's hw_ephemeral_encryption* ask for encrypted instances.
    assert!(doc["properties"].get("cinder_encryption_key_id").is_none(), "{doc}");
    assert!(doc["properties"].get("hw_ephemeral_encryption").is_none(), "{doc}");
    assert_eq!(
        doc["secret"]["command"],
        format!(
            "openstack secret store --name cinder-key --secret-type symmetric --algorithm aes --bit-length 256 --mode xts --file {}",
            key_file.display()
        )
    );
    // Raw LUKS1 for Glance too: the same passphrase, and the secret line in the document.
    let raw_image = work.path("cinder.img");
    let out = cryptadm()
        .args(["disk", "luks-format", "--secret-type", "symmetric", "--glance", "--output-format", "json"])
        .arg("--key-file")
        .arg(&key_file)
        .args(["--pbkdf", "pbkdf2"])
        .args(CHEAP)
        .arg("--from")
        .arg(&src)
        .arg(&raw_image)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(qemu_read(&raw_image, Some(&pass), &work.path("back.raw")) == disk);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["secret"]["secret_type"], "symmetric");
    assert!(doc["secret"]["command"].as_str().unwrap().contains("--bit-length 256"), "{doc}");
    // convert: from that image (its secret symmetric) to a Nova passphrase image and back to a symmetric one.
    let nova = work.path("nova.qcow2");
    let nova_pass = work.write("nova.txt", "a Nova passphrase");
    cryptadm()
        .args(["disk", "convert", "--encryption-key", "existing", "--source-secret-type", "symmetric"])
        .arg("--key-file")
        .arg(&key_file)
        .arg("--new-key-file")
        .arg(&nova_pass)
        .args(CHEAP)
        .arg(&image)
        .arg(&nova)
        .assert()
        .success();
    assert!(qemu_read(&nova, Some(&nova_pass), &work.path("back.raw")) == disk);
    let new_key = work.path("new-key.bin");
    let cinder = work.path("cinder2.img");
    let out = cryptadm()
        .args(["disk", "convert", "--format", "raw", "--encryption-key", "new", "--secret-type", "symmetric"])
        .args(["--source-secret-type", "passphrase", "--glance", "--output-format", "json", "--key-file"])
        .arg(&nova_pass)
        .arg("--new-key-file")
        .arg(&new_key)
        .args(CHEAP)
        .arg(&nova)
        .arg(&cinder)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read(&new_key).unwrap().len(), 32);
    let derived = run(Command::new("python3").args(["-c", OSBRICK, "symmetric"]).arg(&new_key));
    let pass2 = work.write("derived2.txt", &derived);
    let mut want = disk.clone();
    want.resize(SIZE, 0);
    assert!(qemu_read(&cinder, Some(&pass2), &work.path("back.raw")) == want);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["disk_format"], "raw");
    assert_eq!(doc["secret"]["secret_type"], "symmetric");
    assert_eq!(doc["secret"]["payload_content_type"], "application/octet-stream");
}

fn patch(path: &Path, at: u64, bytes: &[u8]) {
    use std::os::unix::fs::FileExt;
    std::fs::OpenOptions::new().write(true).open(path).unwrap().write_all_at(bytes, at).unwrap();
}

fn be64(bytes: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(bytes[at..at + 8].try_into().unwrap())
}

/// Truncated images, L1 and L2 pointers outside the file, an overflowing refcount table, a backing file,
/// compressed clusters, legacy AES and a wrong passphrase fail with the documented codes and write nothing.
#[test]
fn bad_qcow2_input_fails_with_documented_codes_and_writes_nothing() {
    tools();
    let work = Scratch::new();
    let (src, _) = sparse_source(&work);
    let pass = work.write("pass.txt", "abc");
    let good = work.path("good.qcow2");
    cryptadm()
        .args(["disk", "luks-format", "--format", "qcow2", "--key-file"])
        .arg(&pass)
        .args(CHEAP)
        .arg("--from")
        .arg(&src)
        .arg(&good)
        .assert()
        .success();
    let bytes = std::fs::read(&good).unwrap();
    let cs = 65536u64;
    let len = bytes.len() as u64;
    let l1 = be64(&bytes, 40);
    let l2 = be64(&bytes, l1 as usize) & 0x00ff_ffff_ffff_fe00;
    let variant = |name: &str, edit: &dyn Fn(&Path)| {
        let path = work.path(name);
        std::fs::copy(&good, &path).unwrap();
        edit(&path);
        path
    };
    let cases: Vec<(PathBuf, i32, &str)> = vec![
        (
            variant("truncated.qcow2", &|p| {
                std::fs::File::options().write(true).open(p).unwrap().set_len(len - cs).unwrap()
            }),
            3,
            "outside the file",
        ),
        (
            variant("l1-out.qcow2", &|p| patch(p, l1, &((1u64 << 63) | (len + 100 * cs)).to_be_bytes())),
            3,
            "outside the file",
        ),
        (
            variant("l2-out.qcow2", &|p| patch(p, l2, &((1u64 << 63) | (len + 100 * cs)).to_be_bytes())),
            3,
            "outside the file",
        ),
        (variant("rc-overflow.qcow2", &|p| patch(p, 56, &u32::MAX.to_be_bytes())), 3, "refcount table"),
        (variant("rc-order.qcow2", &|p| patch(p, 96, &7u32.to_be_bytes())), 3, "refcount_order"),
        (variant("aes.qcow2", &|p| patch(p, 32, &1u32.to_be_bytes())), 3, "legacy"),
        (
            variant("compressed.qcow2", &|p| {
                let entry = be64(&std::fs::read(p).unwrap(), l2 as usize);
                patch(p, l2, &(entry | (1 << 62)).to_be_bytes());
            }),
            3,
            "compressed",
        ),
        (good.clone(), 16, "passphrase"),
    ];
    let wrong = work.write("wrong.txt", "abd");
    let backing = work.path("overlay.qcow2");
    run(Command::new("qemu-img").args(["create", "-q", "-f", "qcow2", "-F", "qcow2", "-b"]).arg(&good).arg(&backing));
    let mut all = cases;
    all.push((backing, 3, "backing file"));
    for (image, code, needle) in all {
        let before = work.entries();
        let key = if code == 16 { &wrong } else { &pass };
        for verb in ["decrypt", "convert"] {
            let out_path = work.path("out.raw");
            let mut cmd = cryptadm();
            cmd.args(["disk", verb, "--key-file"]).arg(key);
            if verb == "decrypt" {
                cmd.arg(&image).arg("--out").arg(&out_path);
            } else {
                cmd.args(["--format", "raw", "--encryption-key", "none"]).arg(&image).arg(&out_path);
            }
            let out = cmd.output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(code), "{verb} {}: {stderr}", image.display());
            assert!(stderr.contains(needle), "{verb} {}: {stderr}", image.display());
            assert!(stderr.contains("hint:"), "{verb} {}: {stderr}", image.display());
            assert_eq!(work.entries(), before, "{verb} {} wrote something", image.display());
        }
    }
}

/// `same` from a LUKS2 image (cryptsetup's default; 4096-byte sectors) into qcow2, which holds only LUKS1: a new
/// LUKS1 header for the same passphrase, and qemu-img reads the source's bytes; back to raw, the LUKS2 header is
/// copied as it was.
#[test]
fn same_from_luks2_into_qcow2_makes_a_luks1_header_for_the_same_passphrase() {
    tools();
    let work = Scratch::new();
    let (src, disk) = sparse_source(&work);
    let pass = work.write("pass.txt", "abc");
    let luks2 = work.path("luks2.img");
    cryptadm()
        .args(["disk", "luks-format", "--pbkdf", "pbkdf2", "--key-file"])
        .arg(&pass)
        .args(CHEAP)
        .arg("--from")
        .arg(&src)
        .arg(&luks2)
        .assert()
        .success();
    let qcow = work.path("from-luks2.qcow2");
    cryptadm()
        .args(["disk", "convert", "--format", "qcow2", "--key-file"])
        .arg(&pass)
        .args(CHEAP)
        .arg(&luks2)
        .arg(&qcow)
        .assert()
        .success();
    assert!(qemu_read(&qcow, Some(&pass), &work.path("back.raw")) == disk);
    qemu_check(&qcow, &pass);
    assert_eq!(inspect(&qcow)["encryption"]["luks_version"], 1);
    let raw = work.path("from-qcow2.img");
    cryptadm()
        .args(["disk", "convert", "--format", "raw", "--key-file"])
        .arg(&pass)
        .arg(&luks2)
        .arg(&raw)
        .assert()
        .success();
    assert_eq!(inspect(&raw)["version"], 2);
    let out = Command::new("cryptsetup")
        .args(["open", "--test-passphrase", "--key-file"])
        .arg(&pass)
        .arg(&raw)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}
