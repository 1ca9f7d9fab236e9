//! containerd's stream-processor entry (`cryptadm image stream-decrypt`, a drop-in for imgcrypt's `ctd-decoder`):
//! the payload containerd writes on file descriptor 3, the node's keys directory, and the streaming decryption of
//! one layer from its ciphertext to the plaintext containerd unpacks.
//!
//! The facts (docs/formats.md#containerds-stream-processor, containerd 1.6 observed):
//! - The payload is a protobuf `Any` whose `type_url` is `io.containerd.ocicrypt.v1.Payload` and whose `value` is
//!   JSON with Go's field names, `{"DecryptConfig":{"Parameters":…},"Descriptor":{…}}`: the layer's descriptor as
//!   the manifest has it (annotations included) and, from the CRI with `key_model = "node"`, no parameters.
//! - containerd only checks the processor's exit status after the layer was applied, and that check races the
//!   exit: what really stops a tampered layer is a broken stream. So the last [`HOLD_BACK`] bytes of plaintext
//!   are held until the HMAC has verified, and never written when it does not; the truncated tar (or gzip, or
//!   zstd) stream then fails the unpack, and the non-zero exit says why when containerd sees it in time.
//! - Errors that happen before any output (no payload, no key) reach the operator verbatim in the pull error and
//!   containerd's log, which is why they are one line.

use super::image::unwrap_layer_key;
use super::keywrap::KeyUnwrapper;
use super::layer::{LayerDecryptor, PrivateOptions, PublicOptions};
use super::recipients::DecryptionKeys;
use super::{Error, PUBOPTS_ANNOTATION};
use crate::crypto::SecretBytes;
use crate::crypto::encoding::b64_decode_lenient;
use crate::oci::{Descriptor, MediaKind};
use serde_json::{Map, Value};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// The `type_url` of containerd imgcrypt's payload (`imgcrypt.PayloadToolIDs` processors get it).
pub const PAYLOAD_TYPE_URL: &str = "io.containerd.ocicrypt.v1.Payload";
/// Most bytes of a payload: a descriptor with its wrapped keys is a few kilobytes; many recipients, a few hundred.
pub const MAX_PAYLOAD: usize = 4 << 20;
/// Plaintext held back until the HMAC verifies. Larger than a gzip trailer, the tar end-of-archive blocks and a
/// zstd block, so that a layer that fails its HMAC never forms a complete stream downstream.
pub const HOLD_BACK: usize = 256 << 10;
/// Most files a keys directory may hold (every one is read whole).
pub const MAX_KEY_FILES: usize = 1024;
/// Most bytes of one key file (an OpenPGP keyring with many subkeys stays far below).
pub const MAX_KEY_FILE: u64 = 1 << 20;

/// What containerd hands the processor on fd 3.
#[derive(Debug, Clone)]
pub struct Payload {
    /// The encrypted layer's descriptor (media type, digest, size, the `…enc.*` annotations).
    pub descriptor: Descriptor,
    /// ocicrypt's `DecryptConfig.Parameters` (`privkeys`, `x509s`, `gpg-privatekeys`, …), values base64-decoded.
    /// Empty from the CRI; `ctr` with `--key` fills it.
    pub parameters: Vec<(String, Vec<SecretBytes>)>,
}

fn bad_payload(problem: &str) -> Error {
    Error::Malformed(format!("the stream processor payload (fd 3): {problem}"))
}

/// The error for a payload larger than [`MAX_PAYLOAD`] (for readers that stop at the bound).
pub fn payload_too_large() -> Error {
    bad_payload(&format!("it is larger than {MAX_PAYLOAD} bytes"))
}

/// Decodes the payload: a protobuf `Any` (`1: type_url`, `2: value`) whose value is the JSON of imgcrypt's
/// `Payload`. Unknown protobuf fields are skipped, as protobuf decoders do.
pub fn decode_payload(bytes: &[u8]) -> Result<Payload, Error> {
    let bad = bad_payload;
    if bytes.is_empty() {
        return Err(bad("it is empty"));
    }
    if bytes.len() > MAX_PAYLOAD {
        return Err(payload_too_large());
    }
    let (mut type_url, mut value): (Option<&[u8]>, Option<&[u8]>) = (None, None);
    let mut rest = bytes;
    while !rest.is_empty() {
        let key = read_varint(&mut rest).ok_or_else(|| bad("not a protobuf message (truncated field key)"))?;
        let (field, wire) = (key >> 3, key & 7);
        match wire {
            0 => {
                read_varint(&mut rest).ok_or_else(|| bad("not a protobuf message (truncated varint)"))?;
            }
            1 | 5 => {
                let n = if wire == 1 { 8 } else { 4 };
                rest = rest.get(n..).ok_or_else(|| bad("not a protobuf message (truncated fixed field)"))?;
            }
            2 => {
                let len = read_varint(&mut rest).ok_or_else(|| bad("not a protobuf message (truncated length)"))?;
                let len = usize::try_from(len).ok().filter(|&l| l <= rest.len());
                let len = len.ok_or_else(|| bad("not a protobuf message (a field runs past the end)"))?;
                let (data, tail) = rest.split_at(len);
                rest = tail;
                match field {
                    1 => type_url = Some(data),
                    2 => value = Some(data),
                    _ => {}
                }
            }
            _ => return Err(bad(&format!("not a protobuf message (wire type {wire})"))),
        }
    }
    let type_url = std::str::from_utf8(type_url.unwrap_or_default()).map_err(|_| bad("the type URL is not UTF-8"))?;
    // typeurl writes the bare name; a resolver prefix (`types.containerd.io/…`) would be accepted by Go too.
    if type_url.rsplit('/').next() != Some(PAYLOAD_TYPE_URL) {
        return Err(bad(&format!("unknown payload type `{}` (expected {PAYLOAD_TYPE_URL})", printable(type_url))));
    }
    let json: Value =
        serde_json::from_slice(value.unwrap_or_default()).map_err(|e| bad(&format!("its value is not JSON ({e})")))?;
    let object = json.as_object().ok_or_else(|| bad("its value is not a JSON object"))?;
    let descriptor = get_ci(object, "Descriptor").cloned().ok_or_else(|| bad("it has no Descriptor"))?;
    if !descriptor.is_object() {
        return Err(bad("its Descriptor is not a JSON object"));
    }
    let descriptor = Descriptor::from_value(descriptor).map_err(|e| bad(&format!("its Descriptor: {e}")))?;
    descriptor.media_type().map_err(|_| bad("its Descriptor has no mediaType"))?;
    descriptor.digest().map_err(|_| bad("its Descriptor has no digest"))?;
    let mut parameters = Vec::new();
    let params = get_ci(object, "DecryptConfig").and_then(Value::as_object).and_then(|o| get_ci(o, "Parameters"));
    match params {
        None | Some(Value::Null) => {}
        Some(Value::Object(map)) => {
            for (name, values) in map {
                let values = match values {
                    Value::Null => Vec::new(),
                    Value::Array(items) => items
                        .iter()
                        .map(|item| match item {
                            Value::String(text) => b64_decode_lenient(text).map(SecretBytes::new).ok(),
                            Value::Null => Some(SecretBytes::new(Vec::new())),
                            _ => None,
                        })
                        .collect::<Option<Vec<_>>>()
                        .ok_or_else(|| bad(&format!("DecryptConfig parameter `{}` is not base64", printable(name))))?,
                    _ => return Err(bad(&format!("DecryptConfig parameter `{}` is not a list", printable(name)))),
                };
                parameters.push((name.clone(), values));
            }
        }
        Some(_) => return Err(bad("its DecryptConfig.Parameters is not a JSON object")),
    }
    Ok(Payload { descriptor, parameters })
}

fn read_varint(input: &mut &[u8]) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = input.split_first()?;
        *input = rest;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

/// Go's `encoding/json` matches field names case-insensitively; exact matches win.
fn get_ci<'a>(object: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    object.get(name).or_else(|| object.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v))
}

/// At most 64 characters of untrusted text, control characters replaced, for one-line messages.
fn printable(text: &str) -> String {
    text.chars().take(64).map(|c| if c.is_control() { '?' } else { c }).collect()
}

/// A file of a keys directory, read whole.
pub struct KeyFile {
    /// Where it is.
    pub path: PathBuf,
    /// Its bytes.
    pub bytes: SecretBytes,
}

/// Reads a node's keys directory as ctd-decoder and CRI-O walk it: recursively, in lexical order, every regular
/// file read whole; a symbolic link anywhere (the root included) fails the walk, because a link could point a
/// runtime that runs as root at any file of the host. A root that is a regular file is read as the one key.
pub fn read_keys_directory(root: &Path) -> Result<Vec<KeyFile>, Error> {
    let mut files = Vec::new();
    walk(root, &mut files)?;
    Ok(files)
}

fn walk(path: &Path, files: &mut Vec<KeyFile>) -> Result<(), Error> {
    let io = |e: io::Error| match e.kind() {
        io::ErrorKind::NotFound => Error::NotFound(format!("keys directory entry `{}` does not exist", path.display())),
        _ => Error::Io(format!("reading `{}`: {e}", path.display())),
    };
    let meta = std::fs::symlink_metadata(path).map_err(io)?;
    let kind = meta.file_type();
    if kind.is_symlink() {
        return Err(Error::Malformed(format!(
            "`{}` is a symbolic link, which a keys directory must not hold (as in ctd-decoder and CRI-O)",
            path.display()
        )));
    }
    if kind.is_dir() {
        let mut entries = std::fs::read_dir(path)
            .map_err(io)?
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(io)?;
        entries.sort();
        for entry in entries {
            walk(&entry, files)?;
        }
        return Ok(());
    }
    if !kind.is_file() {
        return Err(Error::Malformed(format!(
            "`{}` is neither a regular file nor a directory (a keys directory holds key files)",
            path.display()
        )));
    }
    if files.len() >= MAX_KEY_FILES {
        return Err(Error::Malformed(format!("the keys directory holds more than {MAX_KEY_FILES} files")));
    }
    let too_large = || Error::Malformed(format!("`{}` is larger than {MAX_KEY_FILE} bytes: not a key", path.display()));
    if meta.len() > MAX_KEY_FILE {
        return Err(too_large());
    }
    // A file that grows past the bound after the check above is refused too, not cut at the bound.
    let read = std::fs::File::open(path).and_then(|f| crate::bounded::read_at_most(f, MAX_KEY_FILE)).map_err(io)?;
    let bytes = read.ok_or_else(too_large)?;
    files.push(KeyFile { path: path.to_owned(), bytes });
    Ok(())
}

/// A file of the keys directory that is not a key cryptadm can use, and why.
#[derive(Debug, Clone)]
pub struct SkippedFile {
    /// The file.
    pub path: PathBuf,
    /// Why it was skipped (never its content).
    pub problem: String,
}

/// The node's decryption keys: the keys-directory files and the payload's parameters.
///
/// Unlike ctd-decoder, a file that is not a usable key (a README, a public key, a key with a password) does not
/// fail every image on the node: it is skipped, and named in the error only when no key opens a layer. A
/// `secret generate-k8s` Secret never puts such a file there; a hand-made directory may.
pub fn node_keys(
    files: &[KeyFile],
    payload: &Payload,
    provider_config: Option<std::sync::Arc<super::keyprovider::KeyProviderConfig>>,
) -> (DecryptionKeys, Vec<SkippedFile>) {
    let mut keys = DecryptionKeys::empty(provider_config);
    let mut skipped = Vec::new();
    for file in files {
        let what = file.path.display().to_string();
        if let Err(e) = keys.add_key_bytes(&file.bytes, &what, None) {
            let problem = match e {
                Error::InvalidKey { problem, .. } => problem,
                other => other.to_string(),
            };
            skipped.push(SkippedFile { path: file.path.clone(), problem });
        }
    }
    // ocicrypt's names for key material passed in the DecryptConfig (`ctr --key`); the CRI sends none.
    for (name, values) in &payload.parameters {
        if matches!(name.as_str(), "privkeys" | "x509s" | "gpg-privatekeys") {
            for (i, value) in values.iter().enumerate() {
                let what = format!("payload parameter {name}[{i}]");
                if let Err(e) = keys.add_key_bytes(value, &what, None) {
                    skipped.push(SkippedFile { path: what.into(), problem: e.to_string() });
                }
            }
        }
    }
    (keys, skipped)
}

/// What to do with the plaintext of a layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// Write it as it is (a tar, or a gzip stream containerd decompresses: the `…tar.gzip` processor returns
    /// `tar+gzip`).
    AsIs,
    /// Decompress a zstd layer: containerd gives the payload only to its two ocicrypt processor ids, so zstd is
    /// routed to the one that returns plain tar.
    DecompressZstd,
}

impl Output {
    /// What the processor must write for an input of `media_type` (the `STREAM_PROCESSOR_MEDIATYPE`).
    pub fn for_media_type(media_type: &str) -> Self {
        if media_type.ends_with("+zstd+encrypted") { Output::DecompressZstd } else { Output::AsIs }
    }
}

/// What one stream decryption did.
#[derive(Debug, Clone)]
pub struct StreamReport {
    /// Ciphertext bytes read.
    pub size: u64,
}

/// `message` followed by the files of the keys directory that were not keys (one of them may have been meant).
fn naming_skipped(mut message: String, skipped: &[SkippedFile]) -> String {
    let names: Vec<String> = skipped.iter().map(|s| format!("{} ({})", s.path.display(), s.problem)).collect();
    message.push_str(&format!("; not keys, skipped: {}", names.join(", ")));
    message
}

/// Decrypts the layer `descriptor` describes from `input` to `output`, all but the last [`HOLD_BACK`] bytes as
/// they come, the rest once the HMAC verified. `skipped` (files of the keys directory that are not keys) are
/// named in the error when no key opens the layer.
pub fn decrypt_stream(
    descriptor: &Descriptor,
    unwrappers: &[Box<dyn KeyUnwrapper>],
    skipped: &[SkippedFile],
    output: Output,
    input: &mut dyn Read,
    sink: &mut dyn Write,
) -> Result<StreamReport, Error> {
    if descriptor.kind() != MediaKind::EncryptedLayer {
        return Err(Error::Malformed(format!(
            "the layer's media type `{}` is not an encrypted layer type",
            printable(descriptor.media_type().unwrap_or_default())
        )));
    }
    let annotation = descriptor
        .annotation(PUBOPTS_ANNOTATION)
        .ok_or_else(|| Error::Malformed(format!("the layer has no {PUBOPTS_ANNOTATION} annotation")))?;
    let public = PublicOptions::from_annotation(annotation)?;
    let private = match unwrap_layer_key(descriptor, "the layer", unwrappers) {
        Ok(private) => private,
        Err(Error::Unauthenticated(message)) if !skipped.is_empty() => {
            return Err(Error::Unauthenticated(naming_skipped(message, skipped)));
        }
        Err(Error::KeyManagerRefused { message, hint }) if !skipped.is_empty() => {
            return Err(Error::KeyManagerRefused { message: naming_skipped(message, skipped), hint });
        }
        Err(e) => return Err(e),
    };
    let private = PrivateOptions::from_json(&private, &public)?;
    let digest = descriptor.digest()?.to_owned();
    stream_layer(&private, &public, output, input, sink).map_err(|e| e.in_blob(&digest))
}

fn stream_layer(
    private: &PrivateOptions,
    public: &PublicOptions,
    output: Output,
    input: &mut dyn Read,
    sink: &mut dyn Write,
) -> Result<StreamReport, Error> {
    let write_error = |e: io::Error| Error::Io(format!("writing the decrypted layer: {e}"));
    let report = match output {
        Output::AsIs => run_decryptor(private, public, HoldBack::new(&mut *sink), input)?,
        Output::DecompressZstd => {
            let decoder = zstd::stream::write::Decoder::new(&mut *sink).map_err(write_error)?;
            let (decoder, report) = run_decryptor_into(private, public, HoldBack::new(decoder), input)?;
            let mut decoder = decoder;
            decoder.flush().map_err(|e| Error::Malformed(format!("the decrypted layer is not zstd: {e}")))?;
            report
        }
    };
    sink.flush().map_err(write_error)?;
    Ok(report)
}

fn run_decryptor<W: Write>(
    private: &PrivateOptions,
    public: &PublicOptions,
    hold: HoldBack<W>,
    input: &mut dyn Read,
) -> Result<StreamReport, Error> {
    run_decryptor_into(private, public, hold, input).map(|(_, report)| report)
}

/// Streams `input` through the decryptor into `hold`; releases the held tail only when the HMAC matched.
fn run_decryptor_into<W: Write>(
    private: &PrivateOptions,
    public: &PublicOptions,
    hold: HoldBack<W>,
    input: &mut dyn Read,
) -> Result<(W, StreamReport), Error> {
    // No plaintext digest: containerd checks the unpacked tar against the config's diff ID itself.
    let mut decryptor = LayerDecryptor::without_digest(&private.key, hold);
    let mut buffer = vec![0u8; 128 << 10];
    loop {
        let n = match input.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::Io(format!("reading the encrypted layer: {e}"))),
        };
        decryptor.write_all(&buffer[..n]).map_err(|e| match e.kind() {
            io::ErrorKind::InvalidData => Error::Malformed(format!("the decrypted layer is not zstd: {e}")),
            _ => Error::Io(format!("writing the decrypted layer: {e}")),
        })?;
    }
    let (hold, layer) = decryptor.finish(&public.hmac)?;
    let inner = hold.release().map_err(|e| match e.kind() {
        io::ErrorKind::InvalidData => Error::Malformed(format!("the decrypted layer is not zstd: {e}")),
        _ => Error::Io(format!("writing the decrypted layer: {e}")),
    })?;
    Ok((inner, StreamReport { size: layer.size }))
}

/// A writer that passes everything through except the last [`HOLD_BACK`] bytes, which it writes only when
/// [`HoldBack::release`] is called; dropped without it, the tail is wiped and lost.
pub struct HoldBack<W: Write> {
    inner: W,
    held: zeroize::Zeroizing<Vec<u8>>,
}

impl<W: Write> HoldBack<W> {
    /// Holds back the tail of what is written to `inner`.
    pub fn new(inner: W) -> Self {
        Self { inner, held: zeroize::Zeroizing::new(Vec::with_capacity(2 * HOLD_BACK)) }
    }

    /// Writes the held tail and returns the inner writer.
    pub fn release(mut self) -> io::Result<W> {
        self.inner.write_all(&self.held)?;
        self.inner.flush()?;
        let HoldBack { inner, .. } = self;
        Ok(inner)
    }
}

impl<W: Write> Write for HoldBack<W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.held.extend_from_slice(data);
        if self.held.len() >= 2 * HOLD_BACK {
            let release = self.held.len() - HOLD_BACK;
            self.inner.write_all(&self.held[..release])?;
            self.held.copy_within(release.., 0);
            self.held.truncate(HOLD_BACK);
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        // Only what was released; the tail waits for the HMAC.
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ocicrypt::layer::{LayerEncryptor, LayerKey};
    use crate::ocicrypt::recipients::{RecipientSpec, Recipients};

    const OBSERVED: &[u8] = include_bytes!("../../tests/interop/containerd/payload-gzip-fd3.bin");

    fn any(type_url: &str, value: &[u8]) -> Vec<u8> {
        let mut out = vec![0x0a];
        push_varint(&mut out, type_url.len() as u64);
        out.extend_from_slice(type_url.as_bytes());
        out.push(0x12);
        push_varint(&mut out, value.len() as u64);
        out.extend_from_slice(value);
        out
    }

    fn push_varint(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    #[test]
    fn decodes_the_payload_containerd_1_6_sent() {
        let payload = decode_payload(OBSERVED).unwrap();
        assert_eq!(payload.descriptor.media_type().unwrap(), "application/vnd.oci.image.layer.v1.tar+gzip+encrypted");
        assert!(payload.descriptor.digest().unwrap().starts_with("sha256:6d5c44c0"));
        assert_eq!(payload.descriptor.size().unwrap(), 167);
        assert!(payload.descriptor.annotation("org.opencontainers.image.enc.keys.jwe").is_some());
        assert!(payload.descriptor.annotation(PUBOPTS_ANNOTATION).is_some());
        assert!(payload.parameters.is_empty());
    }

    #[test]
    fn payload_shapes() {
        let desc = r#"{"mediaType":"application/vnd.oci.image.layer.v1.tar+encrypted","digest":"sha256:0000000000000000000000000000000000000000000000000000000000000000","size":1}"#;
        // Parameters present (ctr --key), a resolver prefix, lower-case Go field names, an unknown field.
        let json =
            format!(r#"{{"decryptconfig":{{"Parameters":{{"privkeys":["AAE="],"x":null}}}},"Descriptor":{desc}}}"#);
        let mut bytes = any(&format!("types.containerd.io/{PAYLOAD_TYPE_URL}"), json.as_bytes());
        bytes.extend_from_slice(&[0x18, 0x96, 0x01]); // field 3, varint 150
        let payload = decode_payload(&bytes).unwrap();
        assert_eq!(payload.parameters.len(), 2);
        assert_eq!(&payload.parameters[0].1[0][..], &[0, 1]);
        for (bytes, expected) in [
            (Vec::new(), "empty"),
            (any("other.Type", json.as_bytes()), "unknown payload type `other.Type`"),
            (any(PAYLOAD_TYPE_URL, b"{"), "not JSON"),
            (any(PAYLOAD_TYPE_URL, b"[]"), "not a JSON object"),
            (any(PAYLOAD_TYPE_URL, br#"{"DecryptConfig":{}}"#), "no Descriptor"),
            (any(PAYLOAD_TYPE_URL, br#"{"Descriptor":{"digest":"sha256:00"}}"#), "Descriptor"),
            (
                any(
                    PAYLOAD_TYPE_URL,
                    format!(r#"{{"DecryptConfig":{{"Parameters":[]}},"Descriptor":{desc}}}"#).as_bytes(),
                ),
                "Parameters",
            ),
            (
                any(
                    PAYLOAD_TYPE_URL,
                    format!(r#"{{"DecryptConfig":{{"Parameters":{{"a":["%%"]}}}},"Descriptor":{desc}}}"#).as_bytes(),
                ),
                "not base64",
            ),
            (vec![0x0a, 0x05, b'a'], "runs past the end"),
            (vec![0x0b], "wire type 3"),
            (vec![0x0a, 0xff], "truncated length"),
        ] {
            let err = decode_payload(&bytes).unwrap_err().to_string();
            assert!(err.contains(expected), "{expected}: {err}");
            assert!(!err.contains('\n'), "{err}");
        }
    }

    /// Fuzz-style: random bytes and random mutations of the observed payload never panic, and every error is
    /// one short line.
    #[test]
    fn payload_decoder_survives_garbage() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..4000 {
            let mut bytes = if round % 2 == 0 {
                OBSERVED.to_vec()
            } else {
                (0..(next() % 300) as usize).map(|_| next() as u8).collect()
            };
            for _ in 0..(next() % 8) {
                if bytes.is_empty() {
                    break;
                }
                let at = (next() as usize) % bytes.len();
                match next() % 4 {
                    0 => bytes[at] ^= 1 << (next() % 8),
                    1 => bytes.truncate(at),
                    2 => bytes.insert(at, next() as u8),
                    _ => bytes[at] = 0xff,
                }
            }
            if let Err(e) = decode_payload(&bytes) {
                let text = e.to_string();
                assert!(!text.contains('\n') && text.len() < 400, "{text}");
            }
        }
    }

    fn write_tree(root: &Path, files: &[(&str, &[u8])]) {
        for (name, bytes) in files {
            let path = root.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
    }

    #[test]
    fn keys_directory_walk() {
        let dir = tempfile::tempdir().unwrap();
        write_tree(dir.path(), &[("b/key", b"2"), ("a/z/key", b"1"), ("c", b"3")]);
        let files = read_keys_directory(dir.path()).unwrap();
        let names: Vec<_> = files.iter().map(|f| f.path.strip_prefix(dir.path()).unwrap().to_owned()).collect();
        assert_eq!(names, [Path::new("a/z/key"), Path::new("b/key"), Path::new("c")]);
        // A symlink anywhere fails the walk, the root included.
        std::os::unix::fs::symlink(dir.path().join("c"), dir.path().join("b/link")).unwrap();
        let err = read_keys_directory(dir.path()).err().unwrap().to_string();
        assert!(err.contains("b/link` is a symbolic link"), "{err}");
        let link = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(dir.path().join("a"), link.path().join("root")).unwrap();
        assert!(read_keys_directory(&link.path().join("root")).is_err());
        // Missing: not found; empty: no files (decryption then fails with "no key").
        assert!(matches!(read_keys_directory(&dir.path().join("nope")), Err(Error::NotFound(_))));
        let empty = tempfile::tempdir().unwrap();
        assert!(read_keys_directory(empty.path()).unwrap().is_empty());
        // A single file as the root is the one key.
        assert_eq!(read_keys_directory(&dir.path().join("c")).unwrap().len(), 1);
    }

    fn encrypted_layer(plaintext: &[u8]) -> (Descriptor, Vec<u8>, rsa::RsaPrivateKey) {
        use rsa::pkcs8::EncodePublicKey;
        let private = rsa::RsaPrivateKey::new(&mut rand_core_os(), 2048).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let public_pem = private.to_public_key().to_public_key_pem(rsa::pkcs8::LineEnding::LF).unwrap();
        std::fs::write(dir.path().join("pub.pem"), public_pem).unwrap();
        let recipients =
            Recipients::resolve(&[RecipientSpec::Jwe(dir.path().join("pub.pem"))], None, None).unwrap().wrappers();
        let key = LayerKey::generate();
        let mut encryptor = LayerEncryptor::new(&key, Vec::new());
        encryptor.write_all(plaintext).unwrap();
        let (ciphertext, layer) = encryptor.finish().unwrap();
        let options = PrivateOptions { key, digest: crate::oci::sha256_digest(plaintext) }.to_json();
        let mut annotations = std::collections::BTreeMap::new();
        annotations.insert(
            "org.opencontainers.image.enc.keys.jwe".to_owned(),
            crate::crypto::encoding::b64_encode(&recipients[0].wrap(&options).unwrap()),
        );
        let public =
            PublicOptions { cipher: crate::ocicrypt::layer::CIPHER.into(), hmac: layer.hmac.to_vec(), nonce: None };
        annotations.insert(PUBOPTS_ANNOTATION.to_owned(), public.to_annotation());
        let mut descriptor =
            Descriptor::new("application/vnd.oci.image.layer.v1.tar+encrypted", &layer.ciphertext_digest, layer.size);
        descriptor.set_annotations(annotations);
        (descriptor, ciphertext, private)
    }

    fn rand_core_os() -> rsa::rand_core::OsRng {
        rsa::rand_core::OsRng
    }

    fn node_unwrappers(
        private: &rsa::RsaPrivateKey,
        extra: &[(&str, &[u8])],
    ) -> (Vec<Box<dyn KeyUnwrapper>>, Vec<SkippedFile>) {
        use rsa::pkcs8::EncodePrivateKey;
        let dir = tempfile::tempdir().unwrap();
        let pem = private.to_pkcs8_pem(rsa::pkcs8::LineEnding::LF).unwrap();
        write_tree(dir.path(), &[("secret/node.pem", pem.as_bytes())]);
        write_tree(dir.path(), extra);
        let files = read_keys_directory(dir.path()).unwrap();
        let payload = Payload { descriptor: Descriptor::new("x", "sha256:00", 0), parameters: Vec::new() };
        let (keys, skipped) = node_keys(&files, &payload, None);
        (keys.unwrappers(), skipped)
    }

    #[test]
    fn decrypts_streams_and_holds_back_the_tail_until_the_hmac() {
        let plaintext: Vec<u8> = (0..(3 * HOLD_BACK + 12345)).map(|i| (i * 7 % 251) as u8).collect();
        let (descriptor, ciphertext, private) = encrypted_layer(&plaintext);
        let (unwrappers, skipped) = node_unwrappers(&private, &[("README", b"not a key")]);
        assert_eq!(skipped.len(), 1);
        let mut out = Vec::new();
        let report =
            decrypt_stream(&descriptor, &unwrappers, &skipped, Output::AsIs, &mut &ciphertext[..], &mut out).unwrap();
        assert_eq!(out, plaintext);
        assert_eq!(report.size, plaintext.len() as u64);

        let mut tampered = ciphertext.clone();
        tampered[10] ^= 1;
        let mut out = Vec::new();
        let err =
            decrypt_stream(&descriptor, &unwrappers, &[], Output::AsIs, &mut &tampered[..], &mut out).unwrap_err();
        assert!(matches!(err, Error::Integrity(_)), "{err}");
        assert!(out.len() <= plaintext.len() - HOLD_BACK, "{} bytes released", out.len());
    }

    #[test]
    fn no_key_names_the_skipped_files() {
        let (descriptor, ciphertext, _) = encrypted_layer(b"tar");
        let other = rsa::RsaPrivateKey::new(&mut rand_core_os(), 2048).unwrap();
        let (unwrappers, skipped) = node_unwrappers(&other, &[("s/pub.pem", b"-----BEGIN PUBLIC KEY-----\n")]);
        let err =
            decrypt_stream(&descriptor, &unwrappers, &skipped, Output::AsIs, &mut &ciphertext[..], &mut Vec::new())
                .unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, Error::Unauthenticated(_)), "{text}");
        assert!(text.contains("s/pub.pem") && !text.contains('\n'), "{text}");
    }

    #[test]
    fn zstd_layers_are_decompressed() {
        let tar = b"pretend this is a tar".repeat(1000);
        let compressed = zstd::stream::encode_all(&tar[..], 3).unwrap();
        let (mut descriptor, ciphertext, private) = encrypted_layer(&compressed);
        let annotations = descriptor.annotations();
        descriptor.set_content("application/vnd.oci.image.layer.v1.tar+zstd+encrypted", "sha256:00", 1);
        descriptor.set_annotations(annotations);
        let (unwrappers, _) = node_unwrappers(&private, &[]);
        let output = Output::for_media_type(descriptor.media_type().unwrap());
        assert_eq!(output, Output::DecompressZstd);
        assert_eq!(Output::for_media_type("application/vnd.oci.image.layer.v1.tar+gzip+encrypted"), Output::AsIs);
        let mut out = Vec::new();
        decrypt_stream(&descriptor, &unwrappers, &[], output, &mut &ciphertext[..], &mut out).unwrap();
        assert_eq!(out, tar);
    }
}
