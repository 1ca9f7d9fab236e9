//! Fuzzes the containerd stream-processor payload decoder (what `image stream-decrypt` reads on fd 3): it must
//! never panic, and every error is one line (containerd copies stderr into the pull error).

use cryptadm::ocicrypt::stream::decode_payload;

/// One fuzz input: panics (or fails an assertion) on a bug, returns otherwise.
pub fn run(data: &[u8]) {
    if let Err(e) = decode_payload(data) {
        assert!(!e.to_string().contains('\n'), "a multi-line error: {e}");
    }
}
