//! PEM armor (RFC 7468, plus the RFC 1421 headers of OpenSSL's legacy encrypted keys), read leniently: any text
//! around the blocks, CRLF or LF, any line width, padding or not. Only the labels are interpreted here.

use base64::Engine;
use base64::engine::DecodePaddingMode;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use zeroize::Zeroizing;

/// Standard base64 whose padding may be present or not (some tools strip it).
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// One `-----BEGIN LABEL-----` … `-----END LABEL-----` block.
pub(super) struct Block {
    /// The label, e.g. `PRIVATE KEY`.
    pub label: String,
    /// The block carries `Proc-Type: 4,ENCRYPTED`: OpenSSL's legacy password encryption, whose body is not DER.
    pub legacy_encrypted: bool,
    /// The decoded body; it may be a private key, so it is wiped on drop. Empty for legacy encrypted blocks.
    pub der: Zeroizing<Vec<u8>>,
}

/// Whether `bytes` look like PEM at all (as opposed to DER or JSON).
pub(super) fn looks_like_pem(bytes: &[u8]) -> bool {
    bytes.windows(11).any(|w| w == b"-----BEGIN ")
}

/// Every block in `text`, in order.
pub(super) fn blocks(text: &str) -> Result<Vec<Block>, String> {
    let mut lines = text.lines().map(|line| line.trim_end_matches('\r').trim());
    let mut found = Vec::new();
    while let Some(line) = lines.next() {
        if let Some(label) = boundary(line, "BEGIN") {
            found.push(block(label, &mut lines)?);
        }
    }
    if found.is_empty() {
        return Err("no PEM block (a `-----BEGIN …-----` line) found".into());
    }
    Ok(found)
}

/// The label of a `-----BEGIN LABEL-----` or `-----END LABEL-----` line.
fn boundary<'a>(line: &'a str, kind: &str) -> Option<&'a str> {
    line.strip_prefix("-----")?.strip_suffix("-----")?.strip_prefix(kind)?.strip_prefix(' ')
}

/// Reads one block's headers and body up to its END line.
fn block<'a>(label: &str, lines: &mut impl Iterator<Item = &'a str>) -> Result<Block, String> {
    let mut body = Zeroizing::new(String::new());
    let mut legacy_encrypted = false;
    for line in lines {
        if let Some(end) = boundary(line, "END") {
            if end != label {
                return Err(format!("PEM block `{label}` ends with an END line for `{end}`"));
            }
            let der = if legacy_encrypted { Zeroizing::new(Vec::new()) } else { decode(label, &body)? };
            return Ok(Block { label: label.to_owned(), legacy_encrypted, der });
        }
        // RFC 1421 headers (`Name: value`) come only from OpenSSL's legacy formats; base64 never has a colon.
        if let Some((name, value)) = line.split_once(':') {
            legacy_encrypted |= name.trim() == "Proc-Type" && value.contains("ENCRYPTED");
            continue;
        }
        body.push_str(line);
    }
    Err(format!("PEM block `{label}` has no `-----END {label}-----` line"))
}

fn decode(label: &str, body: &str) -> Result<Zeroizing<Vec<u8>>, String> {
    let der = Zeroizing::new(BASE64.decode(body).map_err(|e| format!("PEM block `{label}` is not valid base64: {e}"))?);
    if der.is_empty() {
        return Err(format!("PEM block `{label}` is empty"));
    }
    Ok(der)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_blocks_among_text_with_crlf_and_no_padding() {
        let text = "junk before\r\n-----BEGIN A-----\r\nAAEC\r\nAw\r\n-----END A-----\r\nbetween\n-----BEGIN B C-----\nBA==\n\
                    -----END B C-----\n";
        let found = blocks(text).unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!((found[0].label.as_str(), &found[0].der[..]), ("A", &[0u8, 1, 2, 3][..]));
        assert_eq!((found[1].label.as_str(), &found[1].der[..]), ("B C", &[4u8][..]));
    }

    #[test]
    fn flags_legacy_encryption_headers() {
        let text = "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-256-CBC,00\n\nAAAA\n\
                    -----END RSA PRIVATE KEY-----\n";
        let found = blocks(text).unwrap();
        assert!(found[0].legacy_encrypted);
    }

    fn error(text: &str) -> String {
        blocks(text).err().expect("must be refused")
    }

    #[test]
    fn rejects_broken_armor() {
        assert!(error("nothing here").contains("no PEM block"));
        assert!(error("-----BEGIN A-----\nAAAA\n").contains("no `-----END A-----`"));
        assert!(error("-----BEGIN A-----\nAAAA\n-----END B-----\n").contains("END line for `B`"));
        assert!(error("-----BEGIN A-----\n!!!!\n-----END A-----\n").contains("not valid base64"));
        assert!(error("-----BEGIN A-----\n-----END A-----\n").contains("empty"));
    }
}
