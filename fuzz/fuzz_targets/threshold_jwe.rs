//! cargo-fuzz entry point: the target's body is `cryptadm_fuzz::threshold_jwe::run` (fuzz/src/threshold_jwe.rs),
//! which the corpus replay in `cargo test` (tests/fuzz_replay.rs) runs too.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cryptadm_fuzz::threshold_jwe::run(data));
