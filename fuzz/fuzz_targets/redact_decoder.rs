//! cargo-fuzz entry point: the target's body is `cryptadm_fuzz::redact_decoder::run` (fuzz/src/redact_decoder.rs),
//! which the corpus replay in `cargo test` (tests/fuzz_replay.rs) runs too.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cryptadm_fuzz::redact_decoder::run(data));
