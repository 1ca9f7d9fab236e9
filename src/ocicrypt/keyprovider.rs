//! External key providers (annotation `…enc.keys.provider.NAME`): ocicrypt's protocol for handing a layer's
//! private options to a program (or gRPC service) that wraps them with a key it manages, such as a KMS (docs/formats.md).
//!
//! The configuration is the JSON file that `OCICRYPT_KEYPROVIDER_CONFIG` names (the command line reads the
//! variable and passes the path or bytes here). For a `cmd` provider the program gets one JSON request on stdin
//! and prints one JSON response on stdout, in the shapes Go's `encoding/json` gives ocicrypt's structs: `[]byte`
//! as standard base64, maps with sorted keys, both `keywrapparams` and `keyunwrapparams` always present. A `grpc`
//! provider gets the same JSON in the one bytes field of ocicrypt's `keyprovider.KeyProviderService` `WrapKey` or
//! `UnWrapKey` (utils/keyprovider/keyprovider.proto), over plain HTTP/2 to `host:port` or `unix:///path` (as
//! ocicrypt dials without `grpc-tls`); a `grpc-tls` entry is refused rather than silently sent in clear.
//!
//! The program runs with a deadline and bounded output (see [`crate::process`]); ocicrypt has neither, so a hung
//! provider hangs skopeo, but never cryptadm.

use super::Error;
use crate::crypto::SecretBytes;
use crate::crypto::encoding::{b64_decode_lenient, b64_encode};
use crate::process;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// An ocicrypt parameter map (`map[string][][]byte` in Go): parameter name → values. Sorted, as Go marshals maps.
pub type Parameters = BTreeMap<String, Vec<Vec<u8>>>;

/// How long a provider may run by default: long enough for a remote KMS with retries, short enough to notice.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// Most bytes a provider may print by default. A wrapped key is a few kilobytes at most.
pub const DEFAULT_MAX_OUTPUT: usize = 1 << 20;
/// Most bytes of a configuration file: it lists a few providers.
pub const MAX_CONFIG_SIZE: usize = 1 << 20;
/// The value ocicrypt gives a provider's parameter when the recipient is just `provider:NAME` with no options.
pub const ENABLED: &[u8] = b"Enabled";
const MAX_STDERR: usize = 4096;

/// The key providers of an ocicrypt key-provider configuration file, and how their programs are run.
#[derive(Debug, Clone)]
pub struct KeyProviderConfig {
    /// The providers by name.
    pub providers: BTreeMap<String, Provider>,
    /// How long one provider run may take.
    pub timeout: Duration,
    /// Most bytes a provider may print on stdout.
    pub max_output: usize,
    /// Where the configuration came from, for error messages.
    pub source: String,
    /// Where a `cmd` provider named without a `/` is looked up (the caller's `PATH`; none: only paths run).
    pub search_dirs: Vec<std::path::PathBuf>,
}

/// How one provider is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Provider {
    /// A program run once per operation.
    Cmd {
        /// The program (looked up on `PATH` when it has no `/`, as Go's `exec.Command` does).
        path: String,
        /// Its arguments.
        args: Vec<String>,
    },
    /// A gRPC service (`keyprovider.KeyProviderService`).
    Grpc {
        /// The dial target, `host:port` or `unix:///path`.
        target: String,
        /// The entry has `grpc-tls` settings (not supported: refused when called).
        tls: bool,
    },
    /// An entry with neither `cmd` nor `grpc`: ocicrypt registers it and fails every call; so do we.
    Unusable,
}

#[derive(Deserialize)]
struct ConfigFile {
    #[serde(rename = "key-providers", default)]
    key_providers: Option<BTreeMap<String, Option<ProviderAttrs>>>,
}

#[derive(Deserialize)]
struct ProviderAttrs {
    cmd: Option<CommandAttrs>,
    #[serde(default)]
    grpc: Option<String>,
    #[serde(default, rename = "grpc-tls")]
    grpc_tls: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct CommandAttrs {
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    args: Option<Vec<String>>,
}

impl KeyProviderConfig {
    /// Parses a configuration document. `source` (a file name) is only used in messages.
    ///
    /// Like Go, unknown fields are ignored and a `null` provider map means no providers; unlike Go, field names
    /// are matched case-sensitively (Go's decoder would also take `"CMD"`).
    pub fn from_json(bytes: &[u8], source: &str) -> Result<Self, Error> {
        let bad = |problem: String| Error::Malformed(format!("key provider configuration `{source}`: {problem}"));
        let value: serde_json::Value =
            serde_json::from_slice(bytes).map_err(|e| bad(format!("not the expected JSON object ({e})")))?;
        // serde would also read a struct from an array; Go's decoder, and so we, want an object.
        if !value.is_object() {
            return Err(bad("not the expected JSON object (expected `{\"key-providers\": {…}}`)".into()));
        }
        let file: ConfigFile =
            serde_json::from_value(value).map_err(|e| bad(format!("not the expected JSON object ({e})")))?;
        let mut providers = BTreeMap::new();
        for (name, attrs) in file.key_providers.unwrap_or_default() {
            // `cmd` wins over `grpc`, as in ocicrypt.
            // A `null` entry is Go's zero value: a provider that cannot be invoked.
            let attrs = attrs.unwrap_or(ProviderAttrs { cmd: None, grpc: None, grpc_tls: None });
            let provider = match (attrs.cmd, attrs.grpc) {
                (Some(cmd), _) => match cmd.path.filter(|p| !p.is_empty()) {
                    Some(path) => Provider::Cmd { path, args: cmd.args.unwrap_or_default() },
                    None => return Err(bad(format!("provider `{name}`: `cmd` has no `path`"))),
                },
                (None, Some(target)) if !target.is_empty() => {
                    Provider::Grpc { target, tls: attrs.grpc_tls.is_some_and(|t| !t.is_null()) }
                }
                _ => Provider::Unusable,
            };
            providers.insert(name, provider);
        }
        Ok(Self {
            providers,
            timeout: DEFAULT_TIMEOUT,
            max_output: DEFAULT_MAX_OUTPUT,
            source: source.into(),
            search_dirs: Vec::new(),
        })
    }

    /// Reads and parses the configuration file at `path`. `Ok(None)` when the file does not exist: ocicrypt
    /// treats that as "no providers", and the caller decides whether to say so.
    pub fn load(path: &Path) -> Result<Option<Self>, Error> {
        let source = path.display().to_string();
        let file = match std::fs::File::open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::Malformed(format!("key provider configuration `{source}`: {e}"))),
        };
        let bytes = crate::crypto::secret::read_secret(file, MAX_CONFIG_SIZE)
            .map_err(|e| Error::Malformed(format!("key provider configuration `{source}`: {e}")))?;
        Self::from_json(&bytes, &source).map(Some)
    }

    /// The configured provider names, sorted; each owns the annotation `…enc.keys.provider.NAME`.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.providers.keys().map(String::as_str)
    }
}

/// Wraps `optsdata` (a layer's private options) with provider `name` and returns the blob to store (base64) in
/// the annotation `…enc.keys.provider.NAME`.
///
/// `opts` are the provider's own options, one per `provider:NAME:OPTS` given (empty: the recipient was named
/// without options, which ocicrypt sends as [`ENABLED`]); `all_params` are the other encryption parameters, which
/// ocicrypt also sends in `ec.Parameters`. `ec.DecryptConfig.Parameters` is `null`: cryptadm unwraps existing keys
/// itself before adding recipients.
pub fn wrap(
    config: &KeyProviderConfig,
    name: &str,
    opts: &[Vec<u8>],
    all_params: &Parameters,
    optsdata: &[u8],
) -> Result<Vec<u8>, Error> {
    let scheme = format!("provider.{name}");
    let failed = |problem: String| Error::Wrap { scheme: scheme.clone(), problem };
    let provider = config.providers.get(name).ok_or_else(|| Error::InvalidKey {
        what: format!("provider:{name}"),
        problem: format!("no key provider `{name}` in the key provider configuration `{}`", config.source),
    })?;
    let mut params = all_params.clone();
    params.insert(name.into(), if opts.is_empty() { vec![ENABLED.to_vec()] } else { opts.to_vec() });
    let request = Request {
        op: "keywrap",
        keywrapparams: KeyWrapParams {
            ec: Some(EncryptConfig {
                parameters: B64Params(&params),
                decrypt_config: DecryptConfig { parameters: None },
            }),
            optsdata: Some(B64(optsdata)),
        },
        keyunwrapparams: KeyUnwrapParams { dc: None, annotation: None },
    };
    check_trusted(config, name, provider)?;
    let output = call(config, provider, &request).map_err(failed)?;
    #[derive(Deserialize)]
    struct Response {
        keywrapresults: Option<WrapResults>,
    }
    #[derive(Deserialize)]
    struct WrapResults {
        annotation: Option<String>,
    }
    let response: Response = serde_json::from_slice(&output)
        .map_err(|e| failed(format!("the provider's answer is not the expected JSON object ({e})")))?;
    let encoded = response.keywrapresults.and_then(|r| r.annotation).unwrap_or_default();
    let blob = b64_decode_lenient(&encoded)
        .map_err(|_| failed("the provider's `keywrapresults.annotation` is not standard base64".into()))?;
    if blob.is_empty() {
        return Err(failed("the provider returned no wrapped key (`keywrapresults.annotation` is empty)".into()));
    }
    Ok(blob)
}

/// Asks provider `name` to unwrap `annotation_blob` (the base64-decoded annotation `…enc.keys.provider.NAME`).
///
/// `dc_params` go to the provider as `dc.Parameters`. ocicrypt sends *all* decryption parameters there,
/// including other schemes' private keys (`privkeys`, `gpg-privatekeys`); a caller that passes only what the
/// provider needs (its own `NAME` options) keeps those keys away from it, and providers cannot tell.
///
/// `Ok(None)` when `name` is not configured (ocicrypt ignores such annotations) or the provider answers without
/// private options (its way of saying "not mine"); [`Error::Unwrap`] when it cannot be run, fails, times out or
/// answers something unreadable.
pub fn unwrap(
    config: &KeyProviderConfig,
    name: &str,
    dc_params: &Parameters,
    annotation_blob: &[u8],
) -> Result<Option<SecretBytes>, Error> {
    let Some(provider) = config.providers.get(name) else { return Ok(None) };
    let failed = |problem: String| Error::Unwrap { scheme: format!("provider.{name}"), problem };
    let request = Request {
        op: "keyunwrap",
        keywrapparams: KeyWrapParams { ec: None, optsdata: None },
        keyunwrapparams: KeyUnwrapParams {
            dc: Some(DecryptConfig { parameters: Some(B64Params(dc_params)) }),
            annotation: Some(B64(annotation_blob)),
        },
    };
    check_trusted(config, name, provider)?;
    let output = call(config, provider, &request).map_err(failed)?;
    #[derive(Deserialize)]
    struct Response {
        keyunwrapresults: Option<UnwrapResults>,
    }
    #[derive(Deserialize)]
    struct UnwrapResults {
        optsdata: Option<String>,
    }
    // serde_json's errors name a position, never the content, so they cannot leak the private options.
    let response: Response = serde_json::from_slice(&output)
        .map_err(|e| failed(format!("the provider's answer is not the expected JSON object ({e})")))?;
    let encoded = zeroize::Zeroizing::new(response.keyunwrapresults.and_then(|r| r.optsdata).unwrap_or_default());
    let optsdata = SecretBytes::new(
        b64_decode_lenient(&encoded)
            .map_err(|_| failed("the provider's `keyunwrapresults.optsdata` is not standard base64".into()))?,
    );
    Ok(if optsdata.is_empty() { None } else { Some(optsdata) })
}

/// Sends one request to a provider and returns its raw answer.
/// A `cmd` provider others could change is refused before it runs (exit 3), as every plugin is.
fn check_trusted(config: &KeyProviderConfig, name: &str, provider: &Provider) -> Result<(), Error> {
    if let Provider::Cmd { path, .. } = provider {
        process::resolve_plugin(path.as_ref(), &config.search_dirs).map_err(|untrusted| Error::InvalidKey {
            what: format!("provider:{name}"),
            problem: untrusted.to_string(),
        })?;
    }
    Ok(())
}

fn call(config: &KeyProviderConfig, provider: &Provider, request: &Request<'_>) -> Result<SecretBytes, String> {
    let (path, args) = match provider {
        Provider::Cmd { path, args } => (path, args),
        Provider::Grpc { target, tls } => {
            if *tls {
                return Err(format!(
                    "`grpc-tls` is not supported for the gRPC key provider at `{target}`; remove it to dial in clear \
                     (a unix socket or loopback), or use a `cmd` provider"
                ));
            }
            let input =
                SecretBytes::new(serde_json::to_vec(request).map_err(|e| format!("cannot encode the request: {e}"))?);
            return grpc::call(target, request.op, &input, config.timeout, config.max_output);
        }
        Provider::Unusable => {
            return Err(format!(
                "its entry in `{}` has neither `cmd` nor `grpc`, so it cannot be invoked",
                config.source
            ));
        }
    };
    // The request carries the private options (wrap) or decryption parameters (unwrap): keep it in wiping memory.
    let input = SecretBytes::new(serde_json::to_vec(request).map_err(|e| format!("cannot encode the request: {e}"))?);
    let limits = process::Limits { timeout: config.timeout, max_stdout: config.max_output, max_stderr: MAX_STDERR };
    let program =
        process::resolve_plugin(path.as_ref(), &config.search_dirs).map_err(|untrusted| untrusted.to_string())?;
    let done = process::run(&program, args, Some(&input), limits).map_err(|e| match e {
        process::RunError::Spawn(e) => format!("cannot run `{path}`: {e}"),
        process::RunError::TimedOut => format!("`{path}` timed out after {}", process::humanize(config.timeout)),
        process::RunError::StdoutHeld => format!("a process started by `{path}` kept its stdout open"),
    })?;
    if !done.status.success() {
        let reason = process::last_line(&done.stderr).map(|l| format!(": {l}")).unwrap_or_default();
        return Err(format!("`{path}` {}{reason}", process::describe_status(done.status)));
    }
    if done.stdout_truncated {
        return Err(format!("`{path}` printed more than {} bytes", config.max_output));
    }
    Ok(done.stdout)
}

// The request, field for field as Go marshals ocicrypt's `KeyProviderKeyWrapProtocolInput`: declaration order,
// no `omitempty` in effect, nil pointers and slices as `null`.

#[derive(Serialize)]
struct Request<'a> {
    op: &'static str,
    keywrapparams: KeyWrapParams<'a>,
    keyunwrapparams: KeyUnwrapParams<'a>,
}

#[derive(Serialize)]
struct KeyWrapParams<'a> {
    ec: Option<EncryptConfig<'a>>,
    optsdata: Option<B64<'a>>,
}

#[derive(Serialize)]
struct KeyUnwrapParams<'a> {
    dc: Option<DecryptConfig<'a>>,
    annotation: Option<B64<'a>>,
}

#[derive(Serialize)]
struct EncryptConfig<'a> {
    #[serde(rename = "Parameters")]
    parameters: B64Params<'a>,
    #[serde(rename = "DecryptConfig")]
    decrypt_config: DecryptConfig<'a>,
}

#[derive(Serialize)]
struct DecryptConfig<'a> {
    #[serde(rename = "Parameters")]
    parameters: Option<B64Params<'a>>,
}

/// `[]byte` as Go marshals it: a standard base64 string.
struct B64<'a>(&'a [u8]);

impl Serialize for B64<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&zeroize::Zeroizing::new(b64_encode(self.0)))
    }
}

/// `map[string][][]byte` as Go marshals it: keys sorted, each value an array of base64 strings.
struct B64Params<'a>(&'a Parameters);

impl Serialize for B64Params<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, values) in self.0 {
            let values: Vec<B64<'_>> = values.iter().map(|v| B64(v)).collect();
            map.serialize_entry(key, &values)?;
        }
        map.end()
    }
}

/// The gRPC transport: one unary call on a runtime of its own (the rest of cryptadm is synchronous).
mod grpc {
    use crate::crypto::SecretBytes;
    use std::time::Duration;

    /// `keyProviderKeyWrapProtocolInput` and `…Output`: one `bytes` field, number 1, holding the JSON.
    #[derive(Clone, PartialEq, prost::Message)]
    struct WrapProtocol {
        #[prost(bytes = "vec", tag = "1")]
        data: Vec<u8>,
    }

    /// Sends the JSON request `input` (op `keywrap` or `keyunwrap`) to the provider at `target`.
    pub(super) fn call(
        target: &str,
        op: &str,
        input: &[u8],
        timeout: Duration,
        max_output: usize,
    ) -> Result<SecretBytes, String> {
        let method = if op == "keywrap" { "WrapKey" } else { "UnWrapKey" };
        let endpoint = endpoint(target)?.connect_timeout(timeout).timeout(timeout);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the gRPC client: {e}"))?;
        let request = WrapProtocol { data: input.to_vec() };
        let answer = runtime.block_on(async move {
            let channel = endpoint
                .connect()
                .await
                .map_err(|e| format!("cannot reach the gRPC key provider at `{target}`: {}", chain(&e)))?;
            let mut client = tonic::client::Grpc::new(channel);
            client
                .ready()
                .await
                .map_err(|e| format!("the gRPC key provider at `{target}` is not ready: {}", chain(&e)))?;
            let codec = tonic_prost::ProstCodec::<WrapProtocol, WrapProtocol>::default();
            let path = http::uri::PathAndQuery::try_from(format!("/keyprovider.KeyProviderService/{method}"))
                .map_err(|e| format!("bad method path: {e}"))?;
            let call = client.unary(tonic::Request::new(request), path, codec);
            match tokio::time::timeout(timeout, call).await {
                Err(_) => Err(format!("the gRPC key provider at `{target}` did not answer {method} in time")),
                Ok(Err(status)) => Err(format!(
                    "the gRPC key provider at `{target}` failed {method}: {:?}: {}",
                    status.code(),
                    status.message().lines().next().unwrap_or_default()
                )),
                Ok(Ok(response)) => Ok(response.into_inner().data),
            }
        });
        let answer = SecretBytes::new(answer?);
        if answer.len() > max_output {
            return Err(format!("the gRPC key provider at `{target}` answered more than {max_output} bytes"));
        }
        Ok(answer)
    }

    /// grpc-go targets: `host:port`, `dns:///host:port`, `unix:///path`, `unix:path`.
    fn endpoint(target: &str) -> Result<tonic::transport::Endpoint, String> {
        let bad = |e: tonic::transport::Error| format!("gRPC key provider target `{target}`: {e}");
        if target.starts_with("unix:") {
            return tonic::transport::Endpoint::from_shared(target.to_owned()).map_err(bad);
        }
        let address = target.strip_prefix("dns:///").unwrap_or(target);
        let uri = if address.contains("://") { address.to_owned() } else { format!("http://{address}") };
        tonic::transport::Endpoint::from_shared(uri).map_err(bad)
    }

    /// An error and its causes on one line ("transport error: connection refused").
    fn chain(error: &dyn std::error::Error) -> String {
        let mut text = error.to_string();
        let mut source = error.source();
        while let Some(cause) = source {
            let next = cause.to_string();
            if !text.contains(&next) {
                text.push_str(&format!(": {next}"));
            }
            source = cause.source();
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, &[&[u8]])]) -> Parameters {
        pairs.iter().map(|(k, vs)| (k.to_string(), vs.iter().map(|v| v.to_vec()).collect())).collect()
    }

    #[test]
    fn config_shapes() {
        let config = KeyProviderConfig::from_json(
            br#"{"key-providers": {
                "a": {"cmd": {"path": "/usr/bin/prov", "args": ["-x", "y"]}},
                "b": {"grpc": "localhost:50051", "grpc-tls": {"server-name": "s"}},
                "c": {"cmd": {"path": "prov"}, "grpc": "ignored:1"},
                "d": {}
            }, "other": 1}"#,
            "conf.json",
        )
        .unwrap();
        assert_eq!(config.names().collect::<Vec<_>>(), ["a", "b", "c", "d"]);
        assert_eq!(
            config.providers["a"],
            Provider::Cmd { path: "/usr/bin/prov".into(), args: vec!["-x".into(), "y".into()] }
        );
        assert_eq!(config.providers["b"], Provider::Grpc { target: "localhost:50051".into(), tls: true });
        assert_eq!(config.providers["c"], Provider::Cmd { path: "prov".into(), args: vec![] });
        assert_eq!(config.providers["d"], Provider::Unusable);
        assert_eq!(KeyProviderConfig::from_json(b"{}", "x").unwrap().names().count(), 0);
        assert_eq!(KeyProviderConfig::from_json(br#"{"key-providers": null}"#, "x").unwrap().names().count(), 0);
        for bad in [&b"[]"[..], b"not json", br#"{"key-providers": {"a": {"cmd": {"args": []}}}}"#] {
            let err = KeyProviderConfig::from_json(bad, "bad.json").unwrap_err();
            assert!(err.to_string().starts_with("key provider configuration `bad.json`"), "{err}");
        }
    }

    #[test]
    fn missing_config_file_is_no_config() {
        assert!(KeyProviderConfig::load(Path::new("/nonexistent/ocicrypt_keyprovider.conf")).unwrap().is_none());
    }

    #[test]
    fn wrap_request_is_what_go_marshals() {
        let p = params(&[("pubkeys", &[b"\x00\x01"]), ("kp", &[b"Enabled"])]);
        let request = Request {
            op: "keywrap",
            keywrapparams: KeyWrapParams {
                ec: Some(EncryptConfig {
                    parameters: B64Params(&p),
                    decrypt_config: DecryptConfig { parameters: None },
                }),
                optsdata: Some(B64(b"opts")),
            },
            keyunwrapparams: KeyUnwrapParams { dc: None, annotation: None },
        };
        assert_eq!(
            serde_json::to_string(&request).unwrap(),
            r#"{"op":"keywrap","keywrapparams":{"ec":{"Parameters":{"kp":["RW5hYmxlZA=="],"pubkeys":["AAE="]},"DecryptConfig":{"Parameters":null}},"optsdata":"b3B0cw=="},"keyunwrapparams":{"dc":null,"annotation":null}}"#
        );
    }

    #[test]
    fn unwrap_request_is_what_go_marshals() {
        let p = params(&[("kp", &[b"x"])]);
        let request = Request {
            op: "keyunwrap",
            keywrapparams: KeyWrapParams { ec: None, optsdata: None },
            keyunwrapparams: KeyUnwrapParams {
                dc: Some(DecryptConfig { parameters: Some(B64Params(&p)) }),
                annotation: Some(B64(b"blob")),
            },
        };
        assert_eq!(
            serde_json::to_string(&request).unwrap(),
            r#"{"op":"keyunwrap","keywrapparams":{"ec":null,"optsdata":null},"keyunwrapparams":{"dc":{"Parameters":{"kp":["eA=="]}},"annotation":"YmxvYg=="}}"#
        );
    }

    #[test]
    fn unknown_and_unsupported_providers() {
        let config =
            KeyProviderConfig::from_json(br#"{"key-providers": {"g": {"grpc": "localhost:1"}, "u": {}}}"#, "conf.json")
                .unwrap();
        let none = Parameters::new();
        assert!(matches!(wrap(&config, "nope", &[], &none, b"x"), Err(Error::InvalidKey { .. })));
        assert!(unwrap(&config, "nope", &none, b"x").unwrap().is_none());
        let err = wrap(&config, "g", &[], &none, b"x").unwrap_err();
        assert!(err.to_string().contains("cannot reach the gRPC key provider at `localhost:1`"), "{err}");
        let err = unwrap(&config, "g", &none, b"x").unwrap_err();
        assert!(matches!(err, Error::Unwrap { .. }), "{err}");
        let err = wrap(&config, "u", &[], &none, b"x").unwrap_err();
        assert!(err.to_string().contains("neither `cmd` nor `grpc`"), "{err}");
    }
}
