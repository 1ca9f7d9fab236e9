//! Fuzzes the TPM 2.0 client on arbitrary TPM answers: the input is a sequence of responses (each a big-endian
//! 16-bit length and that many bytes), answered in turn to every operation the client has (GetCapability of the
//! PCR banks, PCR_Read of 24 PCRs, GetRandom, sealing and unsealing with a PCR policy, a trial policy session).
//! A TPM, a simulator on the network or whatever answers on `/dev/tpmrm0` is untrusted: nothing may panic, loop or
//! read past a response, and a response that lies about its size is refused.
//!
//! The seed corpus: responses in the shapes swtpm gives to that sequence (all succeeding), and a sequence of
//! refusals (TPM_RC_INITIALIZE, RETRY, PCR_CHANGED, INTEGRITY at Load, POLICY_FAIL at Unseal).

use cryptadm::kms::tpm2;

/// One fuzz input: panics (or fails an assertion) on a bug, returns otherwise.
pub fn run(data: &[u8]) {
    let mut responses = Vec::new();
    let mut rest = data;
    while rest.len() >= 2 {
        let len = usize::from(u16::from_be_bytes([rest[0], rest[1]])).min(rest.len() - 2);
        responses.push(rest[2..2 + len].to_vec());
        rest = &rest[2 + len..];
    }
    let succeeded = tpm2::fuzz_client(responses);
    assert!(succeeded <= 6);
}
