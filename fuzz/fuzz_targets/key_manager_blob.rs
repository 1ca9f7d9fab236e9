//! cargo-fuzz entry point: the target's body is `cryptadm_fuzz::key_manager_blob::run` (fuzz/src/key_manager_blob.rs), which the
//! corpus replay in `cargo test` (tests/fuzz_replay.rs) runs too.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cryptadm_fuzz::key_manager_blob::run(data));
