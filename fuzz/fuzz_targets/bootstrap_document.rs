//! Fuzzes the machineadm stream parser: it must never panic, and whatever it accepts must render (as YAML and
//! as JSON) and parse back to the same documents.
#![no_main]

use cryptadm::machineadm::{parse_stream, render_documents};
use cryptadm::render::OutputFormat;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(documents) = parse_stream(data) else { return };
    for format in [OutputFormat::Yaml, OutputFormat::Json] {
        let text = render_documents(&documents, format).expect("parsed documents always render");
        let again = parse_stream(text.as_bytes())
            .unwrap_or_else(|e| panic!("the {format:?} rendering does not parse: {e}\n{text}"));
        assert_eq!(again, documents, "the {format:?} rendering parses to other documents:\n{text}");
    }
});
