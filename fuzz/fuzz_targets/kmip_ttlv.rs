//! cargo-fuzz entry point: the target's body is `cryptadm_fuzz::kmip_ttlv::run` (fuzz/src/kmip_ttlv.rs), which the
//! corpus replay in `cargo test` (tests/fuzz_replay.rs) runs too.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cryptadm_fuzz::kmip_ttlv::run(data));
