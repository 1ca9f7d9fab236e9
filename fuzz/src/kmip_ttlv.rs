//! Fuzzes the KMIP TTLV decoder on arbitrary server answers: reading a message must never panic, never allocate
//! past the 1 MiB bound, and whatever decodes must encode back to the same bytes (the encoding is canonical).

use cryptadm::kms::kmip::{read_message, ttlv};

/// One fuzz input: panics (or fails an assertion) on a bug, returns otherwise.
pub fn run(data: &[u8]) {
    if let Ok(item) = ttlv::decode(data) {
        let mut again = Vec::new();
        ttlv::encode(&item, &mut again);
        assert_eq!(again, data, "a decoded message encodes back to its bytes");
    }
    // The stream reader: the header's length decides how much is read, never more than the bound.
    let mut reader = data;
    if let Ok(item) = read_message(&mut reader) {
        let mut again = Vec::new();
        ttlv::encode(&item, &mut again);
        assert!(again.len() <= ttlv::MAX_MESSAGE);
        assert_eq!(&again[..], &data[..again.len()]);
    }
}
