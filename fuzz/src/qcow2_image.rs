//! Fuzzes the qcow2 reader on arbitrary file contents: the header and extension parser, the L1/L2 bounds checks
//! and the guest-order source must never panic; whatever opens reads its first MiB and counts its clusters
//! without touching bytes outside the file (every pointer is checked against the file length first).

use cryptadm::qcow2::Input;
use cryptadm::qcow2::header::Header;
use std::io::Write;

/// One fuzz input: panics (or fails an assertion) on a bug, returns otherwise.
pub fn run(data: &[u8]) {
    let _ = Header::parse(data, data.len() as u64);
    let mut file = tempfile::NamedTempFile::new().expect("temp file");
    file.write_all(data).expect("write");
    let _ = cryptadm::qcow2::summary::describe(file.path());
    let Ok(input) = Input::open(file.path()) else { return };
    if input.encrypted() {
        return; // unlocking costs a KDF run: the LUKS header has its own target (luks_header)
    }
    let Ok(mut unlocked) = input.unlock(None, 1) else { return };
    let source = unlocked.source.as_mut();
    let mut buf = vec![0u8; 1 << 20];
    let len = (source.len().min(1 << 20) / 512 * 512) as usize;
    let _ = source.read_at(0, &mut buf[..len]);
    let _ = source.next_data(0);
}
