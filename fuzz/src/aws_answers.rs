//! Fuzzes what the AWS backend reads from others: a `kms://BLOB@KEY` passphraseURI from a document, the XML
//! fields of an S3/STS answer, AWS timestamps, ARNs and key ids, and the shared configuration files' INI. None
//! may panic; a field read from XML is a slice of the input, decoded.

use cryptadm::kms::aws::profile::{FileKind, Profiles};
use cryptadm::kms::aws::{arn_region, check_kms_key, parse_time, xml_field};

/// One fuzz input: panics (or fails an assertion) on a bug, returns otherwise.
pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok((blob, key)) = cryptadm::machineadm::parse_kms_uri(&text) {
        assert!(!blob.is_empty() && check_kms_key(&key).is_ok());
    }
    for name in ["Code", "Message", "AccessKeyId", "SessionToken", "Expiration"] {
        if let Some(value) = xml_field(data, name) {
            assert!(value.len() <= data.len(), "{name}");
        }
    }
    let _ = parse_time(&text);
    let _ = check_kms_key(&text);
    if let Some(region) = arn_region(&text) {
        assert!(!region.is_empty() && text.contains(region));
    }
    let mut profiles = Profiles::default();
    profiles.add(&text, FileKind::Credentials);
    profiles.add(&text, FileKind::Config);
    let _ = (profiles.get("default", "region"), profiles.has("ci"));
}
