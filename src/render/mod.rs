//! Output documents as YAML streams or JSON: the one place that decides how documents look on the wire.

pub mod ignition;

use serde::Serialize;

pub mod kubectl;
pub mod kubernetes;
pub mod openstack;

/// How documents are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OutputFormat {
    /// A YAML stream, documents separated by `---`.
    #[default]
    Yaml,
    /// One JSON object; several documents become a `v1 List`, as kubectl prints them.
    Json,
}

/// A rendering failure (a serializer bug; documents cryptadm builds always serialize).
#[derive(Debug, thiserror::Error)]
#[error("cannot render the output: {0}")]
pub struct RenderError(String);

impl crate::exit::Classify for RenderError {
    fn status(&self) -> crate::exit::ExitStatus {
        crate::exit::ExitStatus::Failure
    }
}

/// Renders documents in the chosen format, ending with a newline.
pub fn documents<T: Serialize>(format: OutputFormat, docs: impl IntoIterator<Item = T>) -> Result<String, RenderError> {
    match format {
        OutputFormat::Yaml => yaml_stream(docs),
        OutputFormat::Json => json_documents(docs),
    }
}

/// A YAML stream: the first document without a leading `---`, the next ones each after a `---` line.
pub fn yaml_stream<T: Serialize>(docs: impl IntoIterator<Item = T>) -> Result<String, RenderError> {
    let mut out = String::new();
    for (i, doc) in docs.into_iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        out.push_str(
            &serde_saphyr::to_string_with_options(&doc, yaml_options()).map_err(|e| RenderError(e.to_string()))?,
        );
    }
    Ok(out)
}

/// One `key: value` line per scalar, as Go's YAML writers print them: a long base64 value folded into a block
/// scalar (the serializer's default past 80 characters) would still parse, but would break the line-based tools
/// (grep, sed, awk) that shell scripts point at these files.
fn yaml_options() -> serde_saphyr::SerializerOptions {
    let mut options = serde_saphyr::SerializerOptions::default();
    options.prefer_block_scalars = false;
    options
}

fn json_documents<T: Serialize>(docs: impl IntoIterator<Item = T>) -> Result<String, RenderError> {
    let mut values: Vec<serde_json::Value> =
        docs.into_iter().map(serde_json::to_value).collect::<Result<_, _>>().map_err(|e| RenderError(e.to_string()))?;
    let value = if values.len() == 1 {
        values.remove(0)
    } else {
        serde_json::json!({ "apiVersion": "v1", "kind": "List", "items": values })
    };
    let mut text = serde_json::to_string_pretty(&value).map_err(|e| RenderError(e.to_string()))?;
    text.push('\n');
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_and_lists() {
        let docs = [serde_json::json!({"a": 1}), serde_json::json!({"b": "2"})];
        assert_eq!(documents(OutputFormat::Yaml, &docs).unwrap(), "a: 1\n---\nb: \"2\"\n");
        let json = documents(OutputFormat::Json, &docs).unwrap();
        assert!(json.contains("\"kind\": \"List\""));
        assert_eq!(documents(OutputFormat::Json, &docs[..1]).unwrap(), "{\n  \"a\": 1\n}\n");
    }

    #[test]
    fn long_values_stay_on_one_line() {
        let long = "A".repeat(100_000);
        let yaml = yaml_stream([serde_json::json!({ "ciphertext": long })]).unwrap();
        assert_eq!(yaml, format!("ciphertext: {long}\n"));
    }
}
