//! Base64 as machineadm documents use it: standard alphabet with padding on output; on input also missing
//! padding and embedded whitespace (YAML folding, copy and paste).

use base64::Engine;
use base64::engine::DecodePaddingMode;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};

const STANDARD_LENIENT: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Standard base64 with `=` padding, one line.
pub fn b64_encode(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

/// Decodes standard base64, ignoring ASCII whitespace and tolerating missing padding.
pub fn b64_decode_lenient(text: &str) -> Result<Vec<u8>, base64::DecodeError> {
    // The text is often a secret (a passphrase or layer key in base64): the compacted copy is wiped too.
    let compact = zeroize::Zeroizing::new(text.chars().filter(|c| !c.is_ascii_whitespace()).collect::<String>());
    STANDARD_LENIENT.decode(compact.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenient_decode() {
        assert_eq!(b64_decode_lenient("AAEC\n AwQ=").unwrap(), vec![0, 1, 2, 3, 4]);
        assert_eq!(b64_decode_lenient("AAECAwQ").unwrap(), vec![0, 1, 2, 3, 4]);
        assert!(b64_decode_lenient("AA-_").is_err());
    }
}
