//! Fuzzes the decoder and redactor every piece of server text goes through (`redact::Secrets`): the first byte
//! says how long the secret is, the next bytes are the secret, the rest is the server's text. Scrubbing never
//! panics; without secrets it changes nothing; with one, what is left holds no run of `redact::RUN` bytes of the
//! secret as written; and the quoted line is one line of bounded length.

use cryptadm::redact::{self, RUN, Secrets};

/// One fuzz input: panics (or fails an assertion) on a bug, returns otherwise.
pub fn run(data: &[u8]) {
    let Some((&length, rest)) = data.split_first() else { return };
    let length = (length as usize % 48).min(rest.len());
    let (secret, text) = rest.split_at(length);
    assert_eq!(Secrets::new().scrub_bytes(text), text, "nothing registered, nothing changed");
    let mut secrets = Secrets::new();
    match std::str::from_utf8(secret) {
        Ok(value) => secrets.add_text(value),
        Err(_) => secrets.add(secret),
    }
    let scrubbed = secrets.scrub_bytes(text);
    // A secret sharing letters with the marker could be rebuilt around it (`xREDACTE` + `D`): not a leak of
    // the server's text, and not what is checked.
    if secret.len() >= RUN && !secret.iter().any(|b| b"REDACT".contains(b)) {
        for window in secret.windows(RUN) {
            assert!(!scrubbed.windows(RUN).any(|w| w == window), "a run of the secret survived");
        }
    }
    let line = secrets.quote(text);
    assert!(!line.contains(['\n', '\r']), "the quote is more than one line");
    assert!(line.chars().count() <= redact::SERVER_TEXT_MAX + 40, "the quote is not bounded");
}
