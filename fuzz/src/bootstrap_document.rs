//! Fuzzes the machineadm stream parser: it must never panic, and whatever it accepts must render (as YAML and
//! as JSON) and parse back to the same documents.

use cryptadm::machineadm::{parse_stream, render_documents};
use cryptadm::render::OutputFormat;

/// One fuzz input: panics (or fails an assertion) on a bug, returns otherwise.
pub fn run(data: &[u8]) {
    let Ok(documents) = parse_stream(data) else { return };
    for format in [OutputFormat::Yaml, OutputFormat::Json] {
        let text = render_documents(&documents, format).expect("parsed documents always render");
        let again = parse_stream(text.as_bytes())
            .unwrap_or_else(|e| panic!("the {format:?} rendering does not parse: {e}\n{text}"));
        assert_eq!(again, documents, "the {format:?} rendering parses to other documents:\n{text}");
    }
}
