//! Fuzzes the `volume rotate --request` parser (the CSI-Addons EncryptionKeyRotateRequest as JSON, which carries
//! secrets): it must never panic, its errors must never quote the input, and a parsed request's Debug form must
//! not show the secrets' values.

use cryptadm::volume::RotateRequest;

/// One fuzz input: panics (or fails an assertion) on a bug, returns otherwise.
pub fn run(data: &[u8]) {
    match RotateRequest::from_json(data) {
        Ok(request) => {
            let debug = format!("{request:?}");
            for value in request.secrets.expose().values().filter(|v| v.len() >= 12) {
                assert!(!debug.contains(value.as_str()), "a secret value shows in Debug: {debug}");
            }
            if let Some(key) = &request.new_key {
                assert!(format!("{key:?}").contains("REDACTED"));
            }
        }
        Err(error) => {
            let message = error.to_string();
            assert!(
                message.starts_with("malformed request: ") || message.starts_with("the request has no `"),
                "unexpected message: {message}"
            );
            assert!(message.len() < 120, "the message may quote the input: {message}");
        }
    }
}
