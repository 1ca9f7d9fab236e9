//! cargo-fuzz entry point: the target's body is `cryptadm_fuzz::tpm2_response::run` (fuzz/src/tpm2_response.rs),
//! which the corpus replay in `cargo test` (tests/fuzz_replay.rs) runs too.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cryptadm_fuzz::tpm2_response::run(data));
