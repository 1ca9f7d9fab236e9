//! Replays every fuzz target (fuzz/src/, the bodies cargo-fuzz runs) on its committed seed corpus
//! (`fuzz/corpus/<target>/`) and on deterministic mutations of it, for a few seconds per target, under the stable
//! toolchain and plain `cargo test`. Inputs that once crashed a target live in its corpus, so those crashes stay
//! fixed; the mutations catch shallow regressions near the seeds. Real fuzzing (coverage-guided, sanitizers) is
//! `cargo fuzz run` (fuzz/README.md).
//!
//! `CRYPTADM_FUZZ_REPLAY_MS` sets the mutation budget per target (default 1500 ms; 0 replays the corpus only).
//! A failing input is written to `target/fuzz-replay-failures/<target>-<n>` and its path printed, ready to be
//! copied into the corpus once the bug is fixed.

// A test program of its own: it reads its budget from the environment (clippy.toml fences the library, not tests).
#![allow(missing_docs, clippy::print_stderr, clippy::disallowed_methods)]

#[path = "../fuzz/src/lib.rs"]
mod targets;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e} (every target needs a seed corpus)", dir.display()))
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{} is empty", dir.display());
    files
        .into_iter()
        .map(|f| (f.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&f).unwrap()))
        .collect()
}

/// xorshift64*: a fixed sequence, so a failure found by a mutation is found again on the next run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// One to four of libFuzzer's cheap mutations: flip a bit, set an interesting byte, insert or delete a run, splice
/// in a piece of another seed, truncate.
fn mutate(rng: &mut Rng, seed: &[u8], other: &[u8]) -> Vec<u8> {
    let mut data = seed.to_vec();
    for _ in 0..=rng.below(4) {
        let at = rng.below(data.len() + 1);
        match rng.below(6) {
            0 if !data.is_empty() => {
                let i = at.min(data.len() - 1);
                data[i] ^= 1 << rng.below(8);
            }
            1 if !data.is_empty() => {
                let i = at.min(data.len() - 1);
                data[i] = [0x00, 0xff, 0x7f, 0x80, b'"', b'{', b'}', b'\n', b'0', b'9'][rng.below(10)];
            }
            2 => {
                let run = vec![rng.next() as u8; 1 + rng.below(16)];
                data.splice(at..at, run);
            }
            3 if !data.is_empty() => {
                let end = (at + 1 + rng.below(16)).min(data.len());
                data.drain(at.min(end)..end);
            }
            4 if !other.is_empty() => {
                let from = rng.below(other.len());
                let piece = &other[from..(from + 1 + rng.below(64)).min(other.len())];
                data.splice(at..at, piece.iter().copied());
            }
            _ => data.truncate(at),
        }
    }
    data
}

fn save_failure(target: &str, n: usize, data: &[u8]) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fuzz-replay-failures");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{target}-{n}"));
    std::fs::write(&path, data).unwrap();
    path
}

fn replay(target: &str) {
    let run = targets::TARGETS.iter().find(|(name, _)| *name == target).expect("a known target").1;
    let budget = Duration::from_millis(
        std::env::var("CRYPTADM_FUZZ_REPLAY_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(1500),
    );
    let seeds = corpus(target);
    let check = |n: usize, what: &str, data: &[u8]| {
        if catch_unwind(AssertUnwindSafe(|| run(data))).is_err() {
            let saved = save_failure(target, n, data);
            panic!("fuzz target {target} failed on {what}; the input is in {}", saved.display());
        }
    };
    for (n, (name, data)) in seeds.iter().enumerate() {
        check(n, &format!("corpus file {name}"), data);
    }
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ target.len() as u64);
    let start = Instant::now();
    let mut n = 0;
    while start.elapsed() < budget {
        let seed = &seeds[rng.below(seeds.len())].1;
        let other = &seeds[rng.below(seeds.len())].1;
        let data = mutate(&mut rng, seed, other);
        check(seeds.len() + n, &format!("mutation {n}"), &data);
        n += 1;
    }
}

macro_rules! replay_tests {
    ($($target:ident),* $(,)?) => {
        $(
            #[test]
            fn $target() {
                replay(stringify!($target));
            }
        )*

        /// Every target of fuzz/src/lib.rs has a test here.
        #[test]
        fn every_target_is_replayed() {
            let tested = [$(stringify!($target)),*];
            for (name, _) in targets::TARGETS {
                assert!(tested.contains(name), "fuzz target {name} has no replay test in tests/fuzz_replay.rs");
            }
            // The cargo-fuzz side (not compiled by `cargo test`): each `[[bin]]` of fuzz/Cargo.toml is a target
            // here, and its entry point calls that target's body.
            let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
            let manifest = std::fs::read_to_string(fuzz.join("Cargo.toml")).unwrap();
            let bins: Vec<&str> =
                manifest.lines().filter_map(|l| l.strip_prefix("name = \"")?.strip_suffix('"')).skip(1).collect();
            assert_eq!(bins.len(), targets::TARGETS.len(), "fuzz/Cargo.toml [[bin]]s: {bins:?}");
            for bin in bins {
                assert!(tested.contains(&bin), "fuzz/Cargo.toml names {bin}, which fuzz/src/lib.rs does not have");
                let entry = std::fs::read_to_string(fuzz.join(format!("fuzz_targets/{bin}.rs"))).unwrap();
                assert!(entry.contains(&format!("cryptadm_fuzz::{bin}::run(data)")), "fuzz_targets/{bin}.rs");
            }
        }
    };
}

replay_tests!(
    aws_answers,
    bootstrap_document,
    bootstrap_template,
    clevis_jwe,
    jwe_unwrap,
    key_manager_blob,
    key_parse,
    keyprovider_config,
    kmip_ttlv,
    luks2_json,
    luks_header,
    oci_annotations,
    oci_image,
    ocicrypt_pgp,
    pkcs7_unwrap,
    qcow2_image,
    redact_decoder,
    stream_payload,
    threshold_jwe,
    tpm2_response,
    volume_request,
);
