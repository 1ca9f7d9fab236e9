//! KMIP (OASIS Key Management Interoperability Protocol) 1.2–1.4 over TLS with client certificates: the protocol
//! of HSM appliances and enterprise key managers (Thales CipherTrust, Fortanix DSM, IBM GKLM, Entrust KeyControl,
//! Vault Enterprise's KMIP engine, PyKMIP).
//!
//! **Why our own codec.** The one maintained Rust client (NLnet Labs' `kmip-protocol`) covers KMIP 1.0–1.2
//! through serde derives and brings its own TLS plumbing (and `webpki` 0.22 beside the `rustls-webpki` already
//! linked); its decoder has no depth or item bound. TTLV is eight bytes of header per item ([`ttlv`], ~300
//! lines), so the codec is ours, with hard bounds, fuzzed (`fuzz/fuzz_targets/kmip_ttlv.rs`), and the TLS is
//! rustls as everywhere else in cryptadm.
//!
//! **Protocol version.** The first request of a connection is Discover Versions offering 1.4, 1.3 and 1.2; the
//! server's first pick is used for every later request. A server that does not know Discover Versions is spoken
//! to in 1.2. KMIP 2.0 (a different attribute encoding) is not offered.
//!
//! **Errors.** A failed operation's Result Reason picks the exit status: Item Not Found → 5; Authentication Not
//! Successful and Permission Denied → 16; Invalid Message, Invalid Field, Missing Data and the other "what was
//! sent is wrong" reasons → 3; the rest → 1. A TLS alert from the server during the handshake (no client
//! certificate, one it does not trust) → 16 with a hint. The server's Result Message goes through
//! [`crate::redact::server_message`].

pub mod ttlv;

use super::{Error, Refusal};
use crate::crypto::SecretBytes;
use crate::exit::ExitStatus;
use std::io::{Read, Write};
use std::net::ToSocketAddrs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use ttlv::{Item, Value};
use zeroize::Zeroizing;

/// KMIP tags used by this client (KMIP 1.4 §9.1.3.1).
pub mod tag {
    #![allow(missing_docs)]
    pub const ATTRIBUTE: u32 = 0x420008;
    pub const ATTRIBUTE_NAME: u32 = 0x42000A;
    pub const ATTRIBUTE_VALUE: u32 = 0x42000B;
    pub const AUTHENTICATION: u32 = 0x42000C;
    pub const BATCH_COUNT: u32 = 0x42000D;
    pub const BATCH_ITEM: u32 = 0x42000F;
    pub const BLOCK_CIPHER_MODE: u32 = 0x420011;
    pub const CREDENTIAL: u32 = 0x420023;
    pub const CREDENTIAL_TYPE: u32 = 0x420024;
    pub const CREDENTIAL_VALUE: u32 = 0x420025;
    pub const CRYPTOGRAPHIC_ALGORITHM: u32 = 0x420028;
    pub const CRYPTOGRAPHIC_LENGTH: u32 = 0x42002A;
    pub const CRYPTOGRAPHIC_PARAMETERS: u32 = 0x42002B;
    pub const IV_COUNTER_NONCE: u32 = 0x42003D;
    pub const KEY_BLOCK: u32 = 0x420040;
    pub const KEY_FORMAT_TYPE: u32 = 0x420042;
    pub const KEY_MATERIAL: u32 = 0x420043;
    pub const KEY_VALUE: u32 = 0x420045;
    pub const NAME_TYPE: u32 = 0x420054;
    pub const NAME_VALUE: u32 = 0x420055;
    pub const OBJECT_TYPE: u32 = 0x420057;
    pub const OPERATION: u32 = 0x42005C;
    pub const PADDING_METHOD: u32 = 0x42005F;
    pub const PROTOCOL_VERSION: u32 = 0x420069;
    pub const PROTOCOL_VERSION_MAJOR: u32 = 0x42006A;
    pub const PROTOCOL_VERSION_MINOR: u32 = 0x42006B;
    pub const REQUEST_HEADER: u32 = 0x420077;
    pub const REQUEST_MESSAGE: u32 = 0x420078;
    pub const REQUEST_PAYLOAD: u32 = 0x420079;
    pub const RESPONSE_HEADER: u32 = 0x42007A;
    pub const RESPONSE_MESSAGE: u32 = 0x42007B;
    pub const RESPONSE_PAYLOAD: u32 = 0x42007C;
    pub const RESULT_MESSAGE: u32 = 0x42007D;
    pub const RESULT_REASON: u32 = 0x42007E;
    pub const RESULT_STATUS: u32 = 0x42007F;
    pub const REVOCATION_REASON: u32 = 0x420081;
    pub const REVOCATION_REASON_CODE: u32 = 0x420082;
    pub const SECRET_DATA: u32 = 0x420085;
    pub const SECRET_DATA_TYPE: u32 = 0x420086;
    pub const SYMMETRIC_KEY: u32 = 0x42008F;
    pub const TEMPLATE_ATTRIBUTE: u32 = 0x420091;
    pub const UNIQUE_IDENTIFIER: u32 = 0x420094;
    pub const USERNAME: u32 = 0x420099;
    pub const PASSWORD: u32 = 0x4200A1;
    pub const DATA: u32 = 0x4200C2;
    pub const TAG_LENGTH: u32 = 0x4200CE;
    pub const AUTHENTICATED_ENCRYPTION_ADDITIONAL_DATA: u32 = 0x4200FE;
    pub const AUTHENTICATED_ENCRYPTION_TAG: u32 = 0x4200FF;
}

/// KMIP operations (the Operation enumeration).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Operation {
    /// Create a symmetric key.
    Create = 1,
    /// Register a client-made object.
    Register = 3,
    /// Find objects by attributes.
    Locate = 8,
    /// Read an object.
    Get = 10,
    /// Pre-active → active.
    Activate = 18,
    /// Active → deactivated or compromised.
    Revoke = 19,
    /// Delete an object's material.
    Destroy = 20,
    /// Agree on a protocol version.
    DiscoverVersions = 30,
    /// Encrypt with a key held by the server.
    Encrypt = 31,
    /// Decrypt with a key held by the server.
    Decrypt = 32,
}

impl Operation {
    fn name(self) -> &'static str {
        match self {
            Self::Create => "Create",
            Self::Register => "Register",
            Self::Locate => "Locate",
            Self::Get => "Get",
            Self::Activate => "Activate",
            Self::Revoke => "Revoke",
            Self::Destroy => "Destroy",
            Self::DiscoverVersions => "Discover Versions",
            Self::Encrypt => "Encrypt",
            Self::Decrypt => "Decrypt",
        }
    }
}

/// Object Type values.
mod object_type {
    pub const SYMMETRIC_KEY: u32 = 2;
    pub const SECRET_DATA: u32 = 7;
}

/// The versions offered, newest first.
pub const OFFERED_VERSIONS: [(i32, i32); 3] = [(1, 4), (1, 3), (1, 2)];
/// The version spoken to a server that does not know Discover Versions.
pub const FALLBACK_VERSION: (i32, i32) = (1, 2);

/// Why a key is revoked (Revocation Reason Code).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum RevocationReason {
    /// Unspecified.
    Unspecified = 1,
    /// The key was compromised.
    KeyCompromise = 2,
    /// A newer key replaces it.
    Superseded = 5,
    /// It is no longer needed.
    CessationOfOperation = 6,
}

/// Everything needed to reach one KMIP server, resolved by `cmd/`.
#[derive(Clone)]
pub struct KmipSettings {
    /// `HOST:PORT` (5696 is KMIP's registered port).
    pub server: String,
    /// PEM file of the CA(s) that signed the server's certificate.
    pub ca: PathBuf,
    /// PEM client certificate and key for TLS client authentication.
    pub client_identity: Option<(PathBuf, PathBuf)>,
    /// A Username and Password credential sent in every request header, for servers that want one on top of the
    /// client certificate.
    pub credential: Option<(String, SecretBytes)>,
    /// Connect, read and write timeout.
    pub timeout: Duration,
}

impl std::fmt::Debug for KmipSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KmipSettings")
            .field("server", &self.server)
            .field("ca", &self.ca)
            .field("client_identity", &self.client_identity)
            .field("credential", &self.credential.as_ref().map(|(user, _)| (user, "[REDACTED]")))
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// An object read with Get.
#[derive(Debug)]
pub struct Object {
    /// `SymmetricKey` or `SecretData` (the Object Type value).
    pub object_type: u32,
    /// The key material or secret bytes.
    pub material: SecretBytes,
}

impl Object {
    /// Whether it is a Secret Data object.
    pub fn is_secret_data(&self) -> bool {
        self.object_type == object_type::SECRET_DATA
    }
}

/// AES-GCM output of [`Kmip::encrypt`].
#[derive(Debug)]
pub struct Sealed {
    /// The 12-byte nonce.
    pub iv: Vec<u8>,
    /// The ciphertext.
    pub ciphertext: Vec<u8>,
    /// The 16-byte tag.
    pub tag: Vec<u8>,
}

impl Sealed {
    /// The text prefix of [`Sealed::to_text`]: `kmip:v1:` + unpadded base64url of nonce (12 bytes) ‖ tag (16) ‖
    /// ciphertext. What `--key-wrap kmip://UID` stores and what the `kmip` bootstrap provider records.
    pub const FORM: &'static str = "kmip:v1:";

    /// The text form (see [`Sealed::FORM`]).
    pub fn to_text(&self) -> String {
        use base64::Engine as _;
        let mut bytes = self.iv.clone();
        bytes.extend_from_slice(&self.tag);
        bytes.extend_from_slice(&self.ciphertext);
        format!("{}{}", Self::FORM, base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
    }

    /// Parses [`Sealed::to_text`]'s form; `None` when it is not one (no ciphertext is not one either).
    pub fn from_text(text: &str) -> Option<Self> {
        use base64::Engine as _;
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(text.strip_prefix(Self::FORM)?).ok()?;
        (bytes.len() > 28).then(|| Self {
            iv: bytes[..12].to_vec(),
            tag: bytes[12..28].to_vec(),
            ciphertext: bytes[28..].to_vec(),
        })
    }
}

/// A TLS connection on a socket bounded by the command's deadline (every read and write, the handshake too).
type Stream = rustls::StreamOwned<rustls::ClientConnection, crate::deadline::BoundedTcp>;

/// A client of one KMIP server, holding one TLS connection at a time. Safe to share between threads (requests
/// are serialized on the connection).
pub struct Kmip {
    settings: KmipSettings,
    tls: Arc<rustls::ClientConfig>,
    host: rustls::pki_types::ServerName<'static>,
    service: String,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    stream: Option<Stream>,
    version: Option<(i32, i32)>,
}

impl std::fmt::Debug for Kmip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kmip").field("service", &self.service).finish()
    }
}

/// Most bytes of a PEM file (certificates, a client key) that are read.
const MAX_PEM_BYTES: u64 = 1 << 20;

fn read_pem(path: &Path, what: &str) -> Result<SecretBytes, Error> {
    let problem = |e: &dyn std::fmt::Display| Error::Config(format!("{what} `{}`: {e}", path.display()));
    let file = std::fs::File::open(path).map_err(|e| problem(&e))?;
    // Refused when larger, as the other backends' CA and key files are, rather than cut at the bound.
    let bytes = crate::bounded::read_at_most(file, MAX_PEM_BYTES).map_err(|e| problem(&e))?;
    bytes.ok_or_else(|| problem(&format!("larger than {MAX_PEM_BYTES} bytes; not a PEM file")))
}

fn tls_config(settings: &KmipSettings) -> Result<rustls::ClientConfig, Error> {
    use rustls::pki_types::pem::PemObject as _;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let certs = |path: &Path, what: &str| -> Result<Vec<CertificateDer<'static>>, Error> {
        let pem = read_pem(path, what)?;
        let certs: Vec<_> = CertificateDer::pem_slice_iter(&pem)
            .collect::<Result<_, _>>()
            .map_err(|e| Error::Config(format!("{what} `{}`: not PEM: {e}", path.display())))?;
        if certs.is_empty() {
            return Err(Error::Config(format!("{what} `{}`: no PEM certificate in it", path.display())));
        }
        Ok(certs)
    };
    let mut roots = rustls::RootCertStore::empty();
    for cert in certs(&settings.ca, "KMIP CA certificate")? {
        roots.add(cert).map_err(|e| {
            Error::Config(format!("KMIP CA certificate `{}`: not a usable CA: {e}", settings.ca.display()))
        })?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Config(format!("TLS: {e}")))?
        .with_root_certificates(roots);
    match &settings.client_identity {
        None => Ok(builder.with_no_client_auth()),
        Some((cert, key)) => {
            let chain = certs(cert, "KMIP client certificate")?;
            let pem = read_pem(key, "KMIP client key")?;
            let key_der = PrivateKeyDer::from_pem_slice(&pem).map_err(|e| {
                Error::Config(format!("KMIP client key `{}`: no PEM private key in it ({e})", key.display()))
            })?;
            builder.with_client_auth_cert(chain, key_der).map_err(|e| {
                Error::Config(format!(
                    "KMIP client key `{}` does not fit certificate `{}`: {e}",
                    key.display(),
                    cert.display()
                ))
            })
        }
    }
}

/// The reasons that say what was sent is wrong.
const INVALID_REASONS: [u32; 12] = [
    0x04, // Invalid Message
    0x05, // Operation Not Supported
    0x06, // Missing Data
    0x07, // Invalid Field
    0x08, // Feature Not Supported
    0x0B, // Illegal Operation
    0x0E, // Index Out of Bounds
    0x10, // Key Format Type Not Supported
    0x11, // Key Compression Type Not Supported
    0x12, // Encoding Option Error
    0x18, // Object Already Exists
    0x2D, // Invalid Attribute Value
];

/// The name of Result Reason `reason`.
fn reason_name(reason: u32) -> &'static str {
    match reason {
        0x01 => "Item Not Found",
        0x02 => "Response Too Large",
        0x03 => "Authentication Not Successful",
        0x04 => "Invalid Message",
        0x05 => "Operation Not Supported",
        0x06 => "Missing Data",
        0x07 => "Invalid Field",
        0x08 => "Feature Not Supported",
        0x0A => "Cryptographic Failure",
        0x0B => "Illegal Operation",
        0x0C => "Permission Denied",
        0x0D => "Object Archived",
        0x13 => "Key Value Not Present",
        0x18 => "Object Already Exists",
        0x100 => "General Failure",
        _ => "other reason",
    }
}

/// What a failed batch item said.
#[derive(Debug)]
pub struct Failure {
    /// The Result Reason (0 when absent).
    pub reason: u32,
    /// The Result Message, redacted.
    pub message: String,
}

impl Kmip {
    /// A client for the server in `settings`: reads the PEM files now, connects nothing yet.
    pub fn new(settings: KmipSettings) -> Result<Self, Error> {
        let (host, _) = split_server(&settings.server)?;
        let host = rustls::pki_types::ServerName::try_from(host.trim_start_matches('[').trim_end_matches(']'))
            .map_err(|_| Error::Config(format!("KMIP server `{}`: not a host name or address", settings.server)))?
            .to_owned();
        let tls = Arc::new(tls_config(&settings)?);
        let service = format!("the KMIP server at {}", settings.server);
        Ok(Self { settings, tls, host, service, state: Mutex::new(State::default()) })
    }

    /// How errors name the server.
    pub fn service(&self) -> &str {
        &self.service
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn unavailable(&self, what: &str, problem: String) -> Error {
        Error::Unavailable { what: what.to_owned(), service: self.service.clone(), problem, hint: None }
    }

    fn protocol(&self, what: &str, problem: impl Into<String>) -> Error {
        Error::Protocol { what: what.to_owned(), service: self.service.clone(), problem: problem.into() }
    }

    fn connect(&self, what: &str) -> Result<Stream, Error> {
        let addresses = self
            .settings
            .server
            .to_socket_addrs()
            .map_err(|e| self.unavailable(what, format!("resolving `{}`: {e}", self.settings.server)))?;
        let mut last = None;
        for address in addresses {
            // The command's deadline bounds the connect, the handshake and every read and write.
            match crate::deadline::BoundedTcp::connect(&address, self.settings.timeout, None) {
                Ok(tcp) => {
                    let io = |e: std::io::Error| self.unavailable(what, e.to_string());
                    tcp.socket().set_nodelay(true).map_err(io)?;
                    let connection = rustls::ClientConnection::new(self.tls.clone(), self.host.clone())
                        .map_err(|e| Error::Config(format!("TLS: {e}")))?;
                    let mut stream = rustls::StreamOwned::new(connection, tcp);
                    while stream.conn.is_handshaking() {
                        if let Err(error) = stream.conn.complete_io(&mut stream.sock) {
                            let cause = refusal_behind(&mut stream.conn, &mut stream.sock, error);
                            return Err(self.io_error(what, &cause));
                        }
                    }
                    return Ok(stream);
                }
                Err(e) if crate::deadline::Passed::in_io(&e).is_some() => return Err(self.io_error(what, &e)),
                Err(e) => last = Some(e),
            }
        }
        Err(Error::Unavailable {
            what: what.to_owned(),
            service: self.service.clone(),
            problem: last.map_or_else(|| "no address".to_owned(), |e| e.to_string()),
            hint: Some("check --kmip-server HOST:PORT and that the KMIP server is up".into()),
        })
    }

    /// Maps an I/O error on the TLS stream: a certificate the client refuses, an alert by which the server refuses
    /// the client's certificate, or the connection failing.
    fn io_error(&self, what: &str, error: &std::io::Error) -> Error {
        let tls = error.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>());
        match tls {
            Some(rustls::Error::InvalidCertificate(problem)) => {
                Error::Tls { service: self.service.clone(), problem: format!("{problem:?}") }
            }
            Some(rustls::Error::AlertReceived(alert)) => {
                use rustls::AlertDescription as A;
                if matches!(
                    alert,
                    A::BadCertificate
                        | A::CertificateRequired
                        | A::UnknownCA
                        | A::HandshakeFailure
                        | A::AccessDenied
                        | A::CertificateUnknown
                        | A::UnsupportedCertificate
                        | A::CertificateRevoked
                        | A::CertificateExpired
                ) {
                    self.refused_client(what, &format!("TLS alert {alert:?}"))
                } else {
                    self.unavailable(what, format!("TLS alert {alert:?}"))
                }
            }
            Some(other) => self.unavailable(what, format!("TLS: {other}")),
            None => match crate::deadline::Passed::in_io(error) {
                Some(passed) => Error::Unavailable {
                    what: what.to_owned(),
                    service: self.service.clone(),
                    problem: format!("{passed} while waiting for its answer"),
                    hint: Some(crate::deadline::HINT.into()),
                },
                None if error.kind() == std::io::ErrorKind::UnexpectedEof => {
                    self.unavailable(what, "the server closed the connection before its answer was complete".into())
                }
                None => self.unavailable(what, error.to_string()),
            },
        }
    }

    fn refused_client(&self, what: &str, detail: &str) -> Error {
        let hint = if self.settings.client_identity.is_some() {
            "the server does not accept this client certificate: give --kmip-client-cert and --kmip-client-key \
             issued by a CA the KMIP server trusts"
        } else {
            "the KMIP server wants a client certificate: give --kmip-client-cert and --kmip-client-key \
             (CRYPTADM_KMIP_CLIENT_CERT, CRYPTADM_KMIP_CLIENT_KEY)"
        };
        refused(Refusal {
            what: what.to_owned(),
            service: self.service.clone(),
            code: "TLS handshake".into(),
            message: format!("refused ({detail})"),
            status: ExitStatus::Unauthenticated,
            hint: Some(hint.into()),
        })
    }

    /// The negotiated protocol version (negotiated on first use).
    pub fn version(&self) -> Result<(i32, i32), Error> {
        let mut state = self.state();
        self.negotiate(&mut state)
    }

    fn negotiate(&self, state: &mut State) -> Result<(i32, i32), Error> {
        if let Some(version) = state.version {
            return Ok(version);
        }
        let offered = OFFERED_VERSIONS.iter().map(|&(major, minor)| version_item(major, minor)).collect();
        let version = match self.exchange(state, FALLBACK_VERSION, Operation::DiscoverVersions, offered, true) {
            Ok(payload) => {
                let answer = payload.all(tag::PROTOCOL_VERSION).next().ok_or_else(|| {
                    self.protocol("negotiating the KMIP version", "the server supports none of KMIP 1.4, 1.3, 1.2")
                })?;
                let number = |t| answer.child(t).and_then(Item::as_int);
                match (number(tag::PROTOCOL_VERSION_MAJOR), number(tag::PROTOCOL_VERSION_MINOR)) {
                    (Some(major), Some(minor)) if OFFERED_VERSIONS.contains(&(major, minor)) => (major, minor),
                    _ => return Err(self.protocol("negotiating the KMIP version", "a version that was not offered")),
                }
            }
            Err(Error::Refused(refusal)) if refusal.code.starts_with("Operation Not Supported") => FALLBACK_VERSION,
            Err(other) => return Err(other),
        };
        state.version = Some(version);
        Ok(version)
    }

    /// Sends one operation and returns its Response Payload (an empty structure when the server sent none).
    pub fn call(&self, operation: Operation, payload: Vec<Item>) -> Result<Item, Error> {
        let mut state = self.state();
        let version = self.negotiate(&mut state)?;
        let idempotent = matches!(operation, Operation::Get | Operation::Locate | Operation::DiscoverVersions);
        self.exchange(&mut state, version, operation, payload, idempotent)
    }

    fn exchange(
        &self,
        state: &mut State,
        version: (i32, i32),
        operation: Operation,
        payload: Vec<Item>,
        idempotent: bool,
    ) -> Result<Item, Error> {
        let what = format!("KMIP {}", operation.name());
        let mut request = Zeroizing::new(Vec::new());
        ttlv::encode(&self.request(version, operation, payload), &mut request);
        if request.len() > ttlv::MAX_MESSAGE {
            return Err(self.protocol(&what, "the request is over the 1 MiB bound"));
        }
        let reused = state.stream.is_some();
        let answer = match self.round_trip(state, &what, &request) {
            // A connection kept from an earlier request may have been closed by the server meanwhile.
            Err(Error::Unavailable { .. }) if reused && idempotent => self.round_trip(state, &what, &request),
            other => other,
        };
        let answer = answer.inspect_err(|_| state.stream = None)?;
        self.payload(&what, operation, &answer)
    }

    fn round_trip(&self, state: &mut State, what: &str, request: &[u8]) -> Result<Item, Error> {
        if state.stream.is_none() {
            state.stream = Some(self.connect(what)?);
        }
        let stream = state.stream.as_mut().expect("connected above");
        if let Err(error) = stream.write_all(request).and_then(|()| stream.flush()) {
            let cause = refusal_behind(&mut stream.conn, &mut stream.sock, error);
            state.stream = None;
            return Err(self.io_error(what, &cause));
        }
        let answer = read_message(stream).map_err(|e| match e {
            ReadError::Io(e) => self.io_error(what, &e),
            ReadError::Decode(e) => self.protocol(what, e.to_string()),
        });
        if answer.is_err() {
            state.stream = None;
        }
        answer
    }

    fn request(&self, version: (i32, i32), operation: Operation, payload: Vec<Item>) -> Item {
        let mut header = vec![version_item(version.0, version.1)];
        if let Some((username, password)) = &self.settings.credential {
            header.push(Item::structure(
                tag::AUTHENTICATION,
                vec![Item::structure(
                    tag::CREDENTIAL,
                    vec![
                        Item::enumeration(tag::CREDENTIAL_TYPE, 1),
                        Item::structure(
                            tag::CREDENTIAL_VALUE,
                            vec![
                                Item::text(tag::USERNAME, username),
                                Item::text(tag::PASSWORD, &String::from_utf8_lossy(password)),
                            ],
                        ),
                    ],
                )],
            ));
        }
        header.push(Item::integer(tag::BATCH_COUNT, 1));
        Item::structure(
            tag::REQUEST_MESSAGE,
            vec![
                Item::structure(tag::REQUEST_HEADER, header),
                Item::structure(
                    tag::BATCH_ITEM,
                    vec![
                        Item::enumeration(tag::OPERATION, operation as u32),
                        Item::structure(tag::REQUEST_PAYLOAD, payload),
                    ],
                ),
            ],
        )
    }

    /// The payload of a response, or the error its Result Status and Reason say.
    fn payload(&self, what: &str, operation: Operation, message: &Item) -> Result<Item, Error> {
        if message.tag != tag::RESPONSE_MESSAGE || message.child(tag::RESPONSE_HEADER).is_none() {
            return Err(self.protocol(what, "not a KMIP Response Message"));
        }
        let mut items = message.all(tag::BATCH_ITEM);
        let (Some(item), None) = (items.next(), items.next()) else {
            return Err(self.protocol(what, "expected exactly one batch item"));
        };
        if let Some(op) = item.child(tag::OPERATION).and_then(Item::as_enum)
            && op != operation as u32
        {
            return Err(self.protocol(what, format!("answer for operation {op}, asked {}", operation as u32)));
        }
        let status = item
            .child(tag::RESULT_STATUS)
            .and_then(Item::as_enum)
            .ok_or_else(|| self.protocol(what, "no Result Status"))?;
        if status == 0 {
            return Ok(item
                .child(tag::RESPONSE_PAYLOAD)
                .cloned()
                .unwrap_or_else(|| Item::structure(tag::RESPONSE_PAYLOAD, vec![])));
        }
        let reason = item.child(tag::RESULT_REASON).and_then(Item::as_enum).unwrap_or(0);
        let message = item
            .child(tag::RESULT_MESSAGE)
            .and_then(Item::as_text)
            .map(|m| crate::redact::server_message(m.as_bytes()))
            .unwrap_or_default();
        Err(self.failure(what, status, reason, message))
    }

    fn failure(&self, what: &str, status: u32, reason: u32, message: String) -> Error {
        let code = format!("{} ({reason:#x})", reason_name(reason));
        let message = if message.is_empty() { "(no message)".to_owned() } else { message };
        let (status, hint): (ExitStatus, Option<&str>) = match reason {
            0x01 => (ExitStatus::NotFound, Some("check the unique identifier or name with the key manager's tools")),
            0x03 | 0x0C => (
                ExitStatus::Unauthenticated,
                Some(
                    "the key manager denies this client or this use: check that the client certificate (and the \
                     username, if one is given) is allowed this operation on this object, and that a key is still \
                     Active (not revoked)",
                ),
            ),
            r if INVALID_REASONS.contains(&r) => (
                ExitStatus::InvalidInput,
                Some("the server refused what was sent: check the object's type, state and usage mask"),
            ),
            _ if status == 1 => (ExitStatus::Failure, None),
            _ => (ExitStatus::Failure, Some("the server answered with a status other than success or failure")),
        };
        let hint = hint.map(str::to_owned);
        refused(Refusal { what: what.to_owned(), service: self.service.clone(), code, message, status, hint })
    }

    /// Creates an AES-256 key usable for Encrypt and Decrypt, named `name` if given; returns its unique id.
    pub fn create_aes256(&self, name: Option<&str>) -> Result<String, Error> {
        let mut attributes = vec![
            attribute("Cryptographic Algorithm", Value::Enumeration(3)),
            attribute("Cryptographic Length", Value::Integer(256)),
            attribute("Cryptographic Usage Mask", Value::Integer(USAGE_ENCRYPT_DECRYPT)),
        ];
        attributes.extend(name.map(name_attribute));
        let payload = self.call(
            Operation::Create,
            vec![
                Item::enumeration(tag::OBJECT_TYPE, object_type::SYMMETRIC_KEY),
                Item::structure(tag::TEMPLATE_ATTRIBUTE, attributes),
            ],
        )?;
        self.unique_id("KMIP Create", &payload)
    }

    /// Registers `secret` as a Secret Data object of type Password named `name`; returns its unique id.
    pub fn register_password(&self, name: &str, secret: &[u8]) -> Result<String, Error> {
        let object = Item::structure(
            tag::SECRET_DATA,
            vec![Item::enumeration(tag::SECRET_DATA_TYPE, 1), key_block(2, secret, None)],
        );
        let payload = self.call(
            Operation::Register,
            vec![
                Item::enumeration(tag::OBJECT_TYPE, object_type::SECRET_DATA),
                Item::structure(
                    tag::TEMPLATE_ATTRIBUTE,
                    vec![attribute("Cryptographic Usage Mask", Value::Integer(0)), name_attribute(name)],
                ),
                object,
            ],
        )?;
        self.unique_id("KMIP Register", &payload)
    }

    /// Registers the AES key `key` (16, 24 or 32 bytes) for Encrypt and Decrypt, named `name` if given.
    pub fn register_aes_key(&self, name: Option<&str>, key: &[u8]) -> Result<String, Error> {
        let bits = i32::try_from(key.len() * 8).unwrap_or(0);
        let object = Item::structure(tag::SYMMETRIC_KEY, vec![key_block(1, key, Some(bits))]);
        let mut attributes = vec![attribute("Cryptographic Usage Mask", Value::Integer(USAGE_ENCRYPT_DECRYPT))];
        attributes.extend(name.map(name_attribute));
        let payload = self.call(
            Operation::Register,
            vec![
                Item::enumeration(tag::OBJECT_TYPE, object_type::SYMMETRIC_KEY),
                Item::structure(tag::TEMPLATE_ATTRIBUTE, attributes),
                object,
            ],
        )?;
        self.unique_id("KMIP Register", &payload)
    }

    /// The object `uid` (its key material or secret bytes).
    pub fn get(&self, uid: &str) -> Result<Object, Error> {
        let what = format!("KMIP Get of object `{}`", printable(uid));
        let payload =
            self.call(Operation::Get, vec![Item::text(tag::UNIQUE_IDENTIFIER, uid)]).map_err(|e| e.for_what(&what))?;
        let object_type = payload
            .child(tag::OBJECT_TYPE)
            .and_then(Item::as_enum)
            .ok_or_else(|| self.protocol(&what, "no Object Type"))?;
        let object = payload
            .child(tag::SECRET_DATA)
            .or_else(|| payload.child(tag::SYMMETRIC_KEY))
            .ok_or_else(|| self.protocol(&what, "the object is neither Secret Data nor a Symmetric Key"))?;
        let material = object
            .child(tag::KEY_BLOCK)
            .and_then(|b| b.child(tag::KEY_VALUE))
            .and_then(|v| v.child(tag::KEY_MATERIAL))
            .and_then(Item::as_bytes)
            .ok_or_else(|| self.protocol(&what, "no raw key material (wrapped or transparent keys are not read)"))?;
        Ok(Object { object_type, material: SecretBytes::new(material.to_vec()) })
    }

    /// The unique ids of the objects named `name`.
    pub fn locate(&self, name: &str) -> Result<Vec<String>, Error> {
        let payload = self.call(Operation::Locate, vec![name_attribute(name)])?;
        Ok(payload.all(tag::UNIQUE_IDENTIFIER).filter_map(Item::as_text).map(str::to_owned).collect())
    }

    /// Pre-active → active.
    pub fn activate(&self, uid: &str) -> Result<(), Error> {
        self.call(Operation::Activate, vec![Item::text(tag::UNIQUE_IDENTIFIER, uid)]).map(drop)
    }

    /// Revokes `uid` for `reason`.
    pub fn revoke(&self, uid: &str, reason: RevocationReason) -> Result<(), Error> {
        self.call(
            Operation::Revoke,
            vec![
                Item::text(tag::UNIQUE_IDENTIFIER, uid),
                Item::structure(
                    tag::REVOCATION_REASON,
                    vec![Item::enumeration(tag::REVOCATION_REASON_CODE, reason as u32)],
                ),
            ],
        )
        .map(drop)
    }

    /// Destroys `uid`; an object that is already gone is success.
    pub fn destroy(&self, uid: &str) -> Result<(), Error> {
        match self.call(Operation::Destroy, vec![Item::text(tag::UNIQUE_IDENTIFIER, uid)]) {
            Ok(_) => Ok(()),
            Err(Error::Refused(refusal)) if refusal.status == ExitStatus::NotFound => Ok(()),
            Err(other) => Err(other),
        }
    }

    /// Encrypts `plaintext` with AES-GCM under key `uid` on the server (a fresh random 12-byte nonce; `aad`
    /// authenticated too). Needs KMIP 1.4 (the Authenticated Encryption fields).
    pub fn encrypt(&self, uid: &str, plaintext: &[u8], aad: &[u8]) -> Result<Sealed, Error> {
        let what = format!("KMIP Encrypt with key `{}`", printable(uid));
        self.require_aead(&what)?;
        let mut iv = vec![0u8; 12];
        getrandom::fill(&mut iv).map_err(|e| Error::Config(format!("random nonce: {e}")))?;
        let payload = self
            .call(
                Operation::Encrypt,
                vec![
                    Item::text(tag::UNIQUE_IDENTIFIER, uid),
                    gcm_parameters(),
                    Item::bytes(tag::DATA, plaintext),
                    Item::bytes(tag::IV_COUNTER_NONCE, &iv),
                    Item::bytes(tag::AUTHENTICATED_ENCRYPTION_ADDITIONAL_DATA, aad),
                ],
            )
            .map_err(|e| e.for_what(&what))?;
        let bytes = |t| payload.child(t).and_then(Item::as_bytes).map(<[u8]>::to_vec);
        let ciphertext = bytes(tag::DATA).ok_or_else(|| self.protocol(&what, "no Data"))?;
        let tag = bytes(tag::AUTHENTICATED_ENCRYPTION_TAG)
            .filter(|t| t.len() == 16)
            .ok_or_else(|| self.protocol(&what, "no 16-byte Authenticated Encryption Tag"))?;
        let iv = bytes(tag::IV_COUNTER_NONCE).unwrap_or(iv);
        if iv.len() != 12 || ciphertext.len() != plaintext.len() {
            return Err(self.protocol(&what, "the nonce or ciphertext is not AES-GCM's"));
        }
        Ok(Sealed { iv, ciphertext, tag })
    }

    /// Decrypts what [`Kmip::encrypt`] returned, with the same key and `aad`.
    pub fn decrypt(&self, uid: &str, sealed: &Sealed, aad: &[u8]) -> Result<SecretBytes, Error> {
        let what = format!("KMIP Decrypt with key `{}`", printable(uid));
        self.require_aead(&what)?;
        let payload = self
            .call(
                Operation::Decrypt,
                vec![
                    Item::text(tag::UNIQUE_IDENTIFIER, uid),
                    gcm_parameters(),
                    Item::bytes(tag::DATA, &sealed.ciphertext),
                    Item::bytes(tag::IV_COUNTER_NONCE, &sealed.iv),
                    Item::bytes(tag::AUTHENTICATED_ENCRYPTION_ADDITIONAL_DATA, aad),
                    Item::bytes(tag::AUTHENTICATED_ENCRYPTION_TAG, &sealed.tag),
                ],
            )
            .map_err(|e| e.for_what(&what))?;
        let plain = payload.child(tag::DATA).and_then(Item::as_bytes).ok_or_else(|| self.protocol(&what, "no Data"))?;
        Ok(SecretBytes::new(plain.to_vec()))
    }

    fn require_aead(&self, what: &str) -> Result<(), Error> {
        let version = self.version()?;
        if version < (1, 4) {
            return Err(refused(Refusal {
                what: what.to_owned(),
                service: self.service.clone(),
                code: "protocol version".into(),
                message: format!("the server speaks KMIP {}.{}", version.0, version.1),
                status: ExitStatus::InvalidInput,
                hint: Some("AES-GCM Encrypt/Decrypt needs KMIP 1.4 (Authenticated Encryption fields)".into()),
            }));
        }
        Ok(())
    }

    fn unique_id(&self, what: &str, payload: &Item) -> Result<String, Error> {
        payload
            .child(tag::UNIQUE_IDENTIFIER)
            .and_then(Item::as_text)
            .filter(|id| !id.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| self.protocol(what, "no Unique Identifier in the answer"))
    }
}

impl Error {
    /// A KMIP refusal naming `what` instead of the bare operation.
    fn for_what(self, what: &str) -> Self {
        match self {
            Self::Refused(mut refusal) => {
                refusal.what = what.to_owned();
                Self::Refused(refusal)
            }
            other => other,
        }
    }
}

fn refused(refusal: Refusal) -> Error {
    Error::Refused(Box::new(refusal))
}

/// Encrypt | Decrypt (Cryptographic Usage Mask bits 4 and 8).
const USAGE_ENCRYPT_DECRYPT: i32 = 4 | 8;

fn gcm_parameters() -> Item {
    Item::structure(
        tag::CRYPTOGRAPHIC_PARAMETERS,
        vec![
            Item::enumeration(tag::BLOCK_CIPHER_MODE, 9),
            Item::enumeration(tag::PADDING_METHOD, 1),
            Item::enumeration(tag::CRYPTOGRAPHIC_ALGORITHM, 3),
            Item::integer(tag::TAG_LENGTH, 16),
        ],
    )
}

fn version_item(major: i32, minor: i32) -> Item {
    Item::structure(
        tag::PROTOCOL_VERSION,
        vec![Item::integer(tag::PROTOCOL_VERSION_MAJOR, major), Item::integer(tag::PROTOCOL_VERSION_MINOR, minor)],
    )
}

fn attribute(name: &str, value: Value) -> Item {
    Item::structure(
        tag::ATTRIBUTE,
        vec![Item::text(tag::ATTRIBUTE_NAME, name), Item { tag: tag::ATTRIBUTE_VALUE, value }],
    )
}

/// The Name attribute (Name Type 1: Uninterpreted Text String).
fn name_attribute(name: &str) -> Item {
    attribute("Name", Value::Structure(vec![Item::text(tag::NAME_VALUE, name), Item::enumeration(tag::NAME_TYPE, 1)]))
}

fn key_block(format: u32, material: &[u8], aes_bits: Option<i32>) -> Item {
    let mut block = vec![
        Item::enumeration(tag::KEY_FORMAT_TYPE, format),
        Item::structure(tag::KEY_VALUE, vec![Item::bytes(tag::KEY_MATERIAL, material)]),
    ];
    if let Some(bits) = aes_bits {
        block.push(Item::enumeration(tag::CRYPTOGRAPHIC_ALGORITHM, 3));
        block.push(Item::integer(tag::CRYPTOGRAPHIC_LENGTH, bits));
    }
    Item::structure(tag::KEY_BLOCK, block)
}

fn printable(text: &str) -> String {
    crate::redact::server_text(text.as_bytes(), 128)
}

fn split_server(server: &str) -> Result<(&str, u16), Error> {
    let bad =
        || Error::Config(format!("KMIP server `{}`: expected HOST:PORT, e.g. kmip.example:5696", printable(server)));
    let (host, port) = server.rsplit_once(':').ok_or_else(bad)?;
    let port = port.parse::<u16>().ok().filter(|&p| p != 0).ok_or_else(bad)?;
    if host.is_empty() || host.contains('/') || host.contains('@') {
        return Err(bad());
    }
    Ok((host, port))
}

/// Why reading a message failed.
#[derive(Debug)]
pub enum ReadError {
    /// The connection failed or ended early.
    Io(std::io::Error),
    /// The bytes are not a message within the bounds.
    Decode(ttlv::DecodeError),
}

/// Reads one TTLV message from `reader`: the 8-byte header first, whose length is checked against
/// [`ttlv::MAX_MESSAGE`] before the rest is read, so a hostile peer makes this allocate at most 1 MiB.
pub fn read_message(reader: &mut impl Read) -> Result<Item, ReadError> {
    let mut header = [0u8; ttlv::HEADER];
    reader.read_exact(&mut header).map_err(ReadError::Io)?;
    let total = ttlv::message_length(&header).map_err(ReadError::Decode)?;
    let mut bytes = Zeroizing::new(vec![0u8; total]);
    bytes[..ttlv::HEADER].copy_from_slice(&header);
    reader.read_exact(&mut bytes[ttlv::HEADER..]).map_err(ReadError::Io)?;
    ttlv::decode(&bytes).map_err(ReadError::Decode)
}

/// The server's reason behind a failed write. A server that refuses the client's certificate sends its alert and
/// closes; the client's next write (the rest of its handshake flight, or the first request: TLS 1.3 ends the
/// client's side of the handshake before the server has checked the certificate) can meet the closed connection,
/// a broken pipe or a reset, before the alert is read, which would hide the refusal behind "Broken pipe". The
/// alert is still in the socket's receive queue: reading it once names the refusal.
fn refusal_behind(
    connection: &mut rustls::ClientConnection,
    socket: &mut impl std::io::Read,
    write_error: std::io::Error,
) -> std::io::Error {
    use std::io::ErrorKind;
    if !matches!(write_error.kind(), ErrorKind::BrokenPipe | ErrorKind::ConnectionReset) {
        return write_error;
    }
    match connection.read_tls(socket) {
        Ok(read) if read > 0 => match connection.process_new_packets() {
            Err(refusal) => std::io::Error::new(ErrorKind::InvalidData, refusal),
            Ok(_) => write_error,
        },
        _ => write_error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_addresses() {
        assert_eq!(split_server("127.0.0.1:5696").unwrap(), ("127.0.0.1", 5696));
        assert_eq!(split_server("kmip.example:1").unwrap(), ("kmip.example", 1));
        for bad in ["kmip.example", ":5696", "h:0", "h:x", "user@h:5696", "https://h:5696"] {
            assert!(split_server(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_message_over_the_bound_is_refused_before_it_is_read() {
        // 100 MB announced; only the header is available: the length alone refuses it.
        let mut header = vec![0x42, 0x00, 0x7B, 0x01];
        header.extend_from_slice(&(100u32 << 20).to_be_bytes());
        let refused = read_message(&mut header.as_slice()).unwrap_err();
        assert!(matches!(refused, ReadError::Decode(ttlv::DecodeError::TooLong { .. })), "{refused:?}");
    }

    fn client(credential: Option<(String, SecretBytes)>) -> Kmip {
        let settings = KmipSettings {
            server: "127.0.0.1:5696".into(),
            ca: PathBuf::from("/nonexistent"),
            client_identity: None,
            credential,
            timeout: Duration::from_secs(1),
        };
        Kmip {
            tls: Arc::new(
                rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
                    .with_safe_default_protocol_versions()
                    .unwrap()
                    .with_root_certificates(rustls::RootCertStore::empty())
                    .with_no_client_auth(),
            ),
            host: rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap().to_owned(),
            service: "s".into(),
            settings,
            state: Mutex::new(State::default()),
        }
    }

    #[test]
    fn the_request_carries_the_credential_and_one_batch_item() {
        let client = client(Some(("alice".into(), SecretBytes::new(b"s3cret".to_vec()))));
        assert!(!format!("{:?}", client.settings).contains("s3cret"));
        let request = client.request((1, 4), Operation::Get, vec![Item::text(tag::UNIQUE_IDENTIFIER, "7")]);
        let header = request.child(tag::REQUEST_HEADER).unwrap();
        let value = header
            .child(tag::AUTHENTICATION)
            .and_then(|a| a.child(tag::CREDENTIAL))
            .and_then(|c| c.child(tag::CREDENTIAL_VALUE))
            .unwrap();
        assert_eq!(value.child(tag::USERNAME).and_then(Item::as_text), Some("alice"));
        assert_eq!(request.all(tag::BATCH_ITEM).count(), 1);
        assert!(!format!("{request:?}").contains("s3cret"), "Debug never shows text or bytes");
    }

    /// Answers encoded by PyKMIP's own encoder (fuzz/corpus/kmip_ttlv/, made with `kmip.core.messages`).
    fn pykmip_answer(name: &str) -> Item {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/kmip_ttlv").join(name);
        let bytes = std::fs::read(path).unwrap();
        read_message(&mut bytes.as_slice()).unwrap()
    }

    #[test]
    fn reads_answers_encoded_by_pykmip() {
        use crate::exit::Classify as _;
        let client = client(None);
        let get = client.payload("w", Operation::Get, &pykmip_answer("get_secret_data")).unwrap();
        let material = get
            .child(tag::SECRET_DATA)
            .and_then(|o| o.child(tag::KEY_BLOCK))
            .and_then(|b| b.child(tag::KEY_VALUE))
            .and_then(|v| v.child(tag::KEY_MATERIAL))
            .and_then(Item::as_bytes);
        assert_eq!(material, Some(&b"correct horse battery"[..]));
        let located = client.payload("w", Operation::Locate, &pykmip_answer("locate")).unwrap();
        let ids: Vec<_> = located.all(tag::UNIQUE_IDENTIFIER).filter_map(Item::as_text).collect();
        assert_eq!(ids, ["1", "2", "17"]);
        let failed = client.payload("w", Operation::Get, &pykmip_answer("failure_not_found")).unwrap_err();
        assert_eq!(failed.status(), ExitStatus::NotFound);
        assert!(failed.to_string().contains("Could not locate object: 99"), "{failed}");
        assert!(client.payload("w", Operation::Locate, &pykmip_answer("get_secret_data")).is_err(), "wrong operation");
        let mut deep =
            std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/kmip_ttlv/deep_nesting")).unwrap();
        assert!(matches!(read_message(&mut deep.as_slice()), Err(ReadError::Decode(ttlv::DecodeError::TooDeep))));
        deep.truncate(40);
        assert!(matches!(read_message(&mut deep.as_slice()), Err(ReadError::Io(_))));
    }

    #[test]
    fn reasons_map_to_exit_statuses() {
        use crate::exit::Classify as _;
        let client = client(None);
        let status = |reason| client.failure("w", 1, reason, "m".into()).status();
        assert_eq!(status(0x01), ExitStatus::NotFound);
        assert_eq!(status(0x03), ExitStatus::Unauthenticated);
        assert_eq!(status(0x0C), ExitStatus::Unauthenticated);
        assert_eq!(status(0x07), ExitStatus::InvalidInput);
        assert_eq!(status(0x06), ExitStatus::InvalidInput);
        assert_eq!(status(0x0A), ExitStatus::Failure);
        assert_eq!(status(0x100), ExitStatus::Failure);
    }
}
