//! Fuzzes what a Tang client reads from untrusted sources: clevis compact JWEs (from a document's
//! `passphraseURI` or a LUKS2 `clevis` token), their tang and sss headers, and Tang advertisements (a JWS from
//! the network). On arbitrary bytes nothing panics, no server is contacted, and an advertisement accepted as
//! signed names at least one signing key.
//!
//! The seed corpus holds what Debian's tangd and clevis wrote: an advertisement, a `tang`, an `sss` and a `tpm2`
//! JWE (clevis 19 on swtpm, `{"pcr_ids":"7"}`).

use cryptadm::kms::clevis;
use cryptadm::kms::tang::{Advertisement, TangHeader};

/// One fuzz input: panics (or fails an assertion) on a bug, returns otherwise.
pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(jwe) = clevis::Jwe::parse(&text)
        && jwe.pin() == Some("tang")
    {
        let _ = TangHeader::parse(&jwe.header);
    }
    if let Ok(jwe) = clevis::Jwe::parse(&text)
        && jwe.pin() == Some("tpm2")
    {
        let _ = clevis::tpm2::Tpm2Header::parse(&jwe.header);
    }
    let _ = clevis::describe(&text);
    if let Ok(advertisement) = Advertisement::from_jws("http://fuzz.invalid", data) {
        assert!(!advertisement.signing.is_empty(), "an advertisement without signing keys was accepted as signed");
        let _ = advertisement.signing_thumbprints();
    }
}
