//! Fuzzes the containerd stream-processor payload decoder (what `image stream-decrypt` reads on fd 3): it must
//! never panic, and every error is one line (containerd copies stderr into the pull error).
#![no_main]

use cryptadm::ocicrypt::stream::decode_payload;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = decode_payload(data) {
        assert!(!e.to_string().contains('\n'), "a multi-line error: {e}");
    }
});
