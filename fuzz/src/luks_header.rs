//! Fuzzes the LUKS1/LUKS2 header reader on arbitrary device contents: opening must never panic, and whatever
//! opens must describe its keyslots and payload without reading past the device. Both header copies are
//! exercised: the input is placed at offset 0 and its tail doubles as a secondary header at 16 KiB.

use cryptadm::luks::{Volume, luks1};
use std::io::Write;

/// One fuzz input: panics (or fails an assertion) on a bug, returns otherwise.
pub fn run(data: &[u8]) {
    let _ = luks1::Header::parse(data);
    let mut file = tempfile::tempfile().expect("temp file");
    file.write_all(data).expect("write");
    let Ok(volume) = Volume::from_file(file) else { return };
    let _ = volume.keyslots();
    let _ = volume.version();
    let _ = volume.uuid();
    if let Ok(payload) = volume.payload() {
        assert!(payload.offset.saturating_add(payload.len) <= volume.device_len(), "the payload lies past the end");
    }
    // A wrong passphrase must fail cleanly; only cheap KDFs are tried, so the fuzzer stays fast.
    for slot in volume.keyslots() {
        let cheap = match &slot.kdf {
            cryptadm::luks::Kdf::Pbkdf2 { iterations, .. } => *iterations <= 2000,
            cryptadm::luks::Kdf::Argon2i { time, memory_kib, .. }
            | cryptadm::luks::Kdf::Argon2id { time, memory_kib, .. } => *time <= 8 && *memory_kib <= 256,
        };
        if cheap {
            let _ = volume.unlock_keyslot(slot.id, b"fuzz");
        }
    }
}
