//! Fuzzes the LUKS2 JSON metadata parser and validator: no panic, and whatever parses serializes back to JSON
//! that parses to the same value (unknown fields and tokens survive a rewrite).

use cryptadm::luks::luks2::json::Metadata;

/// One fuzz input: panics (or fails an assertion) on a bug, returns otherwise.
pub fn run(data: &[u8]) {
    let Ok(meta) = Metadata::parse(data) else { return };
    let valid = meta.validate(16384).is_ok();
    let text = meta.to_json();
    let again = Metadata::parse(&text).expect("our own JSON parses");
    assert_eq!(again.to_json(), text, "a second rewrite changed the JSON");
    assert_eq!(again.validate(16384).is_ok(), valid, "validation differs after a rewrite");
}
