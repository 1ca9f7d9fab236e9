//! AWS: KMS as a [`Wrapping`] backend (GenerateDataKey, Encrypt, Decrypt, ReEncrypt), and the reads the other
//! commands need from Secrets Manager (GetSecretValue), SSM Parameter Store (GetParameter with decryption), S3
//! (GetObject, path or virtual-host style, S3-compatible endpoints) and STS (AssumeRoleWithWebIdentity, for the
//! web-identity credentials in [`credentials`]).
//!
//! Every request is signed with Signature Version 4 by AWS's own signer (the `aws-sigv4` crate, without the SDK:
//! the SDK's runtime, its HTTP stack and its per-service crates would double what the binary carries for HTTP) and
//! sent by the shared bounded client ([`Http`]). KMS, Secrets Manager and SSM speak the JSON 1.1 protocol
//! (`X-Amz-Target`); S3 and STS answer in XML, of which the few fields read here are picked out by
//! [`xml_field`].
//!
//! **Names.** A KMS key is named to [`Wrapping`] by what KMS takes as `KeyId`: a key ARN
//! (`arn:aws:kms:REGION:ACCOUNT:key/ID`), an alias ARN, `alias/NAME` or a key id. A wrapped value is the standard
//! base64 of KMS's CiphertextBlob, the form the AWS CLI prints (`--query CiphertextBlob --output text`). The region
//! of a request is the ARN's when the key is given by ARN, else the configured one.
//!
//! **Errors.** AWS's error codes are classed by [`classify`]: denied (AccessDenied, a bad signature, an unknown
//! key id, an expired token, a disabled key or one pending deletion, IncorrectKeyException) is exit 16 with a hint
//! that names the cause; NotFound is 5; throttling and 5xx are retried and then 1. The server's message goes
//! through [`redact::server_message`]; no credential, token or plaintext is ever part of an error.

pub mod credentials;
pub mod profile;

use super::http::{Http, HttpSettings, Request, Response};
use super::{Context, DataKey, Error, Wrapping};
use crate::crypto::SecretBytes;
use crate::exit::ExitStatus;
use crate::redact;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use credentials::{CredentialProvider, Credentials};
use reqwest::Method;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// Where each service is reached, resolved by `cmd/` from `AWS_ENDPOINT_URL`, `AWS_ENDPOINT_URL_<SERVICE>` and
/// the `--aws-endpoint-url` flag. Without an override a service is reached at its public AWS endpoint.
#[derive(Debug, Clone, Default)]
pub struct Endpoints {
    /// One endpoint for every service (`AWS_ENDPOINT_URL`, the flag).
    pub all: Option<String>,
    /// Per service, by its lower-case id (`kms`, `s3`, `secretsmanager`, `ssm`, `sts`); wins over `all`.
    pub per_service: BTreeMap<String, String>,
    /// FIPS endpoints (`AWS_USE_FIPS_ENDPOINT`, the profile's `use_fips_endpoint`).
    pub fips: bool,
    /// Dual-stack (IPv4 and IPv6) endpoints (`AWS_USE_DUALSTACK_ENDPOINT`, the profile's `use_dualstack_endpoint`).
    pub dualstack: bool,
}

impl Endpoints {
    /// The override of `service`, if any.
    fn overridden(&self, service: Service) -> Option<&String> {
        self.per_service.get(service.id).or(self.all.as_ref())
    }
}

/// An AWS partition, as the SDKs' endpoint rules know it: which regions are its own and the DNS suffixes of its
/// endpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Partition {
    /// `aws`, `aws-cn`, `aws-us-gov`, `aws-iso`, `aws-iso-b`, `aws-iso-e`, `aws-iso-f`, `aws-eusc`.
    pub name: &'static str,
    /// The region prefix that places a region in it (`cn-`); empty for `aws`, which takes every other region.
    region_prefix: &'static str,
    /// `amazonaws.com`, `amazonaws.com.cn`, …
    pub dns_suffix: &'static str,
    /// The suffix of its dual-stack endpoints, where it has them.
    pub dualstack_suffix: Option<&'static str>,
}

/// The partitions, most specific region prefix first (`us-gov-`, `us-isob-` before `us-`); `aws` last.
pub const PARTITIONS: &[Partition] = &[
    Partition {
        name: "aws-cn",
        region_prefix: "cn-",
        dns_suffix: "amazonaws.com.cn",
        dualstack_suffix: Some("api.amazonwebservices.com.cn"),
    },
    Partition {
        name: "aws-us-gov",
        region_prefix: "us-gov-",
        dns_suffix: "amazonaws.com",
        dualstack_suffix: Some("api.aws"),
    },
    Partition { name: "aws-iso-b", region_prefix: "us-isob-", dns_suffix: "sc2s.sgov.gov", dualstack_suffix: None },
    Partition { name: "aws-iso-f", region_prefix: "us-isof-", dns_suffix: "csp.hci.ic.gov", dualstack_suffix: None },
    Partition { name: "aws-iso", region_prefix: "us-iso-", dns_suffix: "c2s.ic.gov", dualstack_suffix: None },
    Partition { name: "aws-iso-e", region_prefix: "eu-isoe-", dns_suffix: "cloud.adc-e.uk", dualstack_suffix: None },
    Partition { name: "aws-eusc", region_prefix: "eusc-", dns_suffix: "amazonaws.eu", dualstack_suffix: None },
    Partition { name: "aws", region_prefix: "", dns_suffix: "amazonaws.com", dualstack_suffix: Some("api.aws") },
];

impl Partition {
    /// The partition of `region`, by its prefix (`cn-north-1` → `aws-cn`); `aws` for any other.
    pub fn of_region(region: &str) -> &'static Partition {
        PARTITIONS.iter().find(|p| region.starts_with(p.region_prefix)).unwrap_or(&PARTITIONS[PARTITIONS.len() - 1])
    }

    /// The partition named `name` (an ARN's second field).
    pub fn named(name: &str) -> Option<&'static Partition> {
        PARTITIONS.iter().find(|p| p.name == name)
    }
}

/// The public endpoint of `service` in `region` (no override), as the SDKs' endpoint rules build it: the
/// partition from the region (or from the ARN a request names, `partition`), FIPS (`kms-fips.REGION.SUFFIX`) and
/// dual-stack (`kms.REGION.api.aws`) variants. S3 is `s3.REGION.SUFFIX` (`s3-fips`, `s3.dualstack`), the bucket
/// added by the caller.
pub fn public_endpoint(
    service: Service,
    region: &str,
    partition: Option<&str>,
    endpoints: &Endpoints,
) -> Result<String, Error> {
    let partition = partition.and_then(Partition::named).unwrap_or_else(|| Partition::of_region(region));
    let id = service.id;
    if endpoints.dualstack && partition.dualstack_suffix.is_none() {
        return Err(Error::Config(format!(
            "dual-stack endpoints are asked for (AWS_USE_DUALSTACK_ENDPOINT), but partition {} has none",
            partition.name
        )));
    }
    let host = if service == S3 {
        // S3 keeps its own dual-stack names under the partition's usual suffix.
        let fips = if endpoints.fips { "-fips" } else { "" };
        let dualstack = if endpoints.dualstack { ".dualstack" } else { "" };
        format!("s3{fips}{dualstack}.{region}.{}", partition.dns_suffix)
    } else {
        let suffix = if endpoints.dualstack {
            partition.dualstack_suffix.unwrap_or(partition.dns_suffix)
        } else {
            partition.dns_suffix
        };
        // GovCloud's STS and SSM endpoints are FIPS endpoints already, under their usual names.
        let fips = endpoints.fips && !(partition.name == "aws-us-gov" && matches!(id, "sts" | "ssm"));
        format!("{id}{}.{region}.{suffix}", if fips { "-fips" } else { "" })
    };
    Ok(format!("https://{host}"))
}

/// Everything needed to talk to AWS, resolved by `cmd/`.
#[derive(Clone)]
pub struct AwsSettings {
    /// The region of requests that do not name one (`AWS_REGION`, the profile's `region`); `None` asks the
    /// credential provider (the instance metadata service) when a request needs one.
    pub region: Option<String>,
    /// Endpoint overrides.
    pub endpoints: Endpoints,
    /// TLS trust, timeouts and retries of every request (also used by the credential providers).
    pub http: HttpSettings,
    /// Where credentials come from.
    pub credentials: Arc<dyn CredentialProvider>,
    /// The instance metadata service asked for the region when none is configured, whatever the credentials'
    /// source (`None`: disabled by `AWS_EC2_METADATA_DISABLED`).
    pub instance_metadata: Option<String>,
}

impl std::fmt::Debug for AwsSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AwsSettings")
            .field("region", &self.region)
            .field("endpoints", &self.endpoints)
            .field("credentials", &self.credentials.describe())
            .finish()
    }
}

/// One AWS service: its id in endpoints and `AWS_ENDPOINT_URL_<ID>`, its SigV4 signing name and how errors name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Service {
    /// The id (`kms`), lower case.
    pub id: &'static str,
    /// How errors name it ("AWS KMS").
    pub title: &'static str,
    /// The JSON protocol's `X-Amz-Target` prefix, for the JSON services.
    target_prefix: &'static str,
}

/// AWS Key Management Service.
pub const KMS: Service = Service { id: "kms", title: "AWS KMS", target_prefix: "TrentService" };
/// AWS Secrets Manager.
pub const SECRETS_MANAGER: Service =
    Service { id: "secretsmanager", title: "AWS Secrets Manager", target_prefix: "secretsmanager" };
/// AWS Systems Manager (Parameter Store).
pub const SSM: Service = Service { id: "ssm", title: "AWS SSM Parameter Store", target_prefix: "AmazonSSM" };
/// Amazon S3.
pub const S3: Service = Service { id: "s3", title: "Amazon S3", target_prefix: "" };
/// AWS Security Token Service.
pub const STS: Service = Service { id: "sts", title: "AWS STS", target_prefix: "" };

/// Bytes of a data key asked of KMS when the caller does not say (AES-256).
pub const DATA_KEY_BYTES: usize = 32;

/// A client of AWS. Safe to share between threads.
pub struct Aws {
    settings: AwsSettings,
    /// One HTTP client per service endpoint, made on first use.
    clients: Mutex<BTreeMap<String, Arc<Http>>>,
    /// The instance's region, or why there is none, once asked.
    instance_region: Mutex<Option<Result<String, String>>>,
}

impl std::fmt::Debug for Aws {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Aws").field("settings", &self.settings).finish()
    }
}

impl Aws {
    /// One line for `-v`: the region, the endpoints and where the credentials come from (never a secret).
    pub fn describe(&self) -> String {
        let settings = &self.settings;
        let mut endpoints: Vec<String> = settings.endpoints.all.iter().map(|url| redact::url(url)).collect();
        endpoints.extend(settings.endpoints.per_service.iter().map(|(id, url)| format!("{id}: {}", redact::url(url))));
        format!(
            "region {}, endpoint {}, credentials from {}",
            settings.region.as_deref().unwrap_or("from the instance metadata service or each ARN"),
            if endpoints.is_empty() { "AWS's own".to_owned() } else { endpoints.join(", ") },
            settings.credentials.describe()
        )
    }
}

/// A secret's value from Secrets Manager: SecretString or SecretBinary.
#[derive(Debug)]
pub enum SecretValue {
    /// `SecretString`.
    Text(SecretBytes),
    /// `SecretBinary`, decoded.
    Binary(SecretBytes),
}

impl SecretValue {
    /// The bytes, whichever kind.
    pub fn bytes(&self) -> &[u8] {
        match self {
            Self::Text(bytes) | Self::Binary(bytes) => bytes,
        }
    }
}

impl Aws {
    /// A client. Connects nothing and reads no credentials yet.
    pub fn new(settings: AwsSettings) -> Self {
        Self { settings, clients: Mutex::new(BTreeMap::new()), instance_region: Mutex::new(None) }
    }

    /// The settings this client was made with.
    pub fn settings(&self) -> &AwsSettings {
        &self.settings
    }

    /// The region of a request about `arn` (its own), else the configured one, else the credential provider's.
    pub fn region_for(&self, arn: Option<&str>) -> Result<String, Error> {
        if let Some(region) = arn.and_then(arn_region) {
            return Ok(region.to_owned());
        }
        if let Some(region) = &self.settings.region {
            return Ok(region.clone());
        }
        let instance = {
            let mut asked = self.instance_region.lock().unwrap_or_else(|p| p.into_inner());
            asked
                .get_or_insert_with(|| match &self.settings.instance_metadata {
                    Some(endpoint) => credentials::instance_region(endpoint, &self.settings.http),
                    None => Err("the instance metadata service is disabled (AWS_EC2_METADATA_DISABLED)".into()),
                })
                .clone()
        };
        let why = match instance {
            Ok(region) => return Ok(region),
            Err(why) => why,
        };
        // A credential problem (no credentials, an unusable profile) is the cause to report, not the region.
        self.settings.credentials.credentials(&self.settings.http)?;
        Err(Error::Credentials {
            problem: format!(
                "no AWS region: AWS_REGION and AWS_DEFAULT_REGION are not set, the profile has none, and {why}"
            ),
            hint: "set AWS_REGION (or give --aws-region), or name the key by its full ARN".into(),
        })
    }

    /// The endpoint of `service` in `region` (of the partition of `arn`, when the request names one): an
    /// override, else AWS's public endpoint ([`public_endpoint`]). An override with FIPS asked for is refused, as
    /// the SDKs refuse it.
    pub fn base_url(&self, service: Service, region: &str, arn: Option<&str>) -> Result<(String, bool), Error> {
        let endpoints = &self.settings.endpoints;
        match endpoints.overridden(service) {
            Some(_) if endpoints.fips => Err(Error::Config(format!(
                "FIPS endpoints are asked for (AWS_USE_FIPS_ENDPOINT) together with a custom {} endpoint: the SDKs \
                 refuse this too; drop one of them",
                service.title
            ))),
            Some(url) => Ok((url.trim_end_matches('/').to_owned(), true)),
            None => Ok((public_endpoint(service, region, arn.and_then(arn_partition), endpoints)?, false)),
        }
    }

    /// [`Aws::base_url`] for naming a service in messages: any problem with it has been reported before.
    pub fn endpoint(&self, service: Service, region: &str) -> (String, bool) {
        self.base_url(service, region, None).unwrap_or_else(|_| match self.settings.endpoints.overridden(service) {
            Some(url) => (url.trim_end_matches('/').to_owned(), true),
            None => (format!("https://{}.{region}.{}", service.id, Partition::of_region(region).dns_suffix), false),
        })
    }

    fn http(&self, service: Service, base: &str) -> Result<Arc<Http>, Error> {
        let mut clients = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        let key = format!("{} {base}", service.id);
        if let Some(http) = clients.get(&key) {
            return Ok(http.clone());
        }
        let http = Arc::new(Http::new(service.title, base, self.settings.http.clone())?);
        clients.insert(key, http.clone());
        Ok(http)
    }

    /// Sends a JSON 1.1 request (`X-Amz-Target: PREFIX.ACTION`) and returns the answer's JSON, classing an
    /// error answer by its `__type`.
    fn json_call(
        &self,
        service: Service,
        region: &str,
        action: &str,
        body: &Value,
        what: &str,
    ) -> Result<Value, Error> {
        let arn = ["KeyId", "SecretId", "Name", "SourceKeyId"]
            .iter()
            .find_map(|field| body.get(*field).and_then(Value::as_str).filter(|v| v.starts_with("arn:")));
        let (base, _) = self.base_url(service, region, arn)?;
        let url = parse_url(&format!("{base}/"), service)?;
        let mut request = Request::new(Method::POST, url, what).json(body);
        // `json` says application/json; the JSON 1.1 protocol wants its own type, and once only (it is signed).
        request.headers.retain(|(name, _)| !name.eq_ignore_ascii_case("content-type"));
        let request = request
            .header("Content-Type", "application/x-amz-json-1.1")
            .header("X-Amz-Target", format!("{}.{action}", service.target_prefix));
        let response = self.signed(service, region, request, SigningStyle::Json)?;
        if response.status.is_success() {
            return serde_json::from_slice(&response.body).map_err(|e| Error::Protocol {
                what: what.into(),
                service: self.service_name(service, &base),
                problem: format!("not JSON ({e})"),
            });
        }
        let (code, message) = json_error(&response);
        Err(classify(what, &self.service_name(service, &base), &code, &message, response.status))
    }

    fn service_name(&self, service: Service, base: &str) -> String {
        format!("{} at {}", service.title, redact::url(base))
    }

    /// Signs `request` and sends it, retrying throttling answers (which AWS gives as 400 with a throttling code,
    /// not only as 429/503, which [`Http`] retries itself), signed anew at each attempt.
    fn signed(&self, service: Service, region: &str, request: Request, style: SigningStyle) -> Result<Response, Error> {
        let attempts = self.settings.http.retries.saturating_add(1);
        let mut backoff = self.settings.http.first_backoff;
        let base = format!("{}://{}", request.url.scheme(), request.url.authority());
        let http = self.http(service, &base)?;
        for attempt in 1..=attempts {
            let credentials = self.settings.credentials.credentials(&self.settings.http)?;
            let mut signed = request.clone();
            sign(&mut signed, &credentials, service.id, region, style)?;
            let response = http.send(&signed)?;
            if response.status.is_client_error() && attempt < attempts && is_throttling(&error_code(&response)) {
                std::thread::sleep(backoff);
                backoff = (backoff * 2).min(Duration::from_secs(20));
                continue;
            }
            return Ok(response);
        }
        unreachable!("the last attempt returns")
    }

    /// KMS Decrypt of a CiphertextBlob (bytes), restricted to `key` when one is given.
    pub fn kms_decrypt(&self, key: Option<&str>, blob: &[u8]) -> Result<SecretBytes, Error> {
        self.kms_decrypt_bound(key, blob, &Context::new())
    }

    /// KMS Decrypt with encryption context `context` (none when empty): KMS refuses a blob made with another one.
    pub fn kms_decrypt_bound(&self, key: Option<&str>, blob: &[u8], context: &Context) -> Result<SecretBytes, Error> {
        let region = self.region_for(key)?;
        let mut body = json!({"CiphertextBlob": STANDARD.encode(blob)});
        if let Some(key) = key {
            body["KeyId"] = key.into();
        }
        if !context.is_empty() {
            body["EncryptionContext"] = json!(context);
        }
        let what = match key {
            Some(key) => format!("decrypting with KMS key `{key}`"),
            None => "decrypting with KMS".to_owned(),
        };
        let answer = self.json_call(KMS, &region, "Decrypt", &body, &what)?;
        let plaintext =
            secret_field(&answer, "Plaintext", &what, &self.service_name(KMS, &self.endpoint(KMS, &region).0))?;
        let mut answer = answer;
        wipe_json(&mut answer);
        Ok(plaintext)
    }

    /// KMS Encrypt of `plaintext` under `key`; the CiphertextBlob's bytes.
    pub fn kms_encrypt(&self, key: &str, plaintext: &[u8]) -> Result<Vec<u8>, Error> {
        self.kms_encrypt_bound(key, plaintext, &Context::new())
    }

    /// KMS Encrypt with encryption context `context` (none when empty).
    pub fn kms_encrypt_bound(&self, key: &str, plaintext: &[u8], context: &Context) -> Result<Vec<u8>, Error> {
        let region = self.region_for(Some(key))?;
        let what = format!("encrypting with KMS key `{key}`");
        let mut body = json!({"KeyId": key, "Plaintext": STANDARD.encode(plaintext)});
        if !context.is_empty() {
            body["EncryptionContext"] = json!(context);
        }
        let answer = self.json_call(KMS, &region, "Encrypt", &body, &what);
        wipe_json(&mut body);
        self.blob(&answer?, "CiphertextBlob", &what, &region)
    }

    /// KMS GenerateDataKey under `key`: the plaintext key and the CiphertextBlob's bytes.
    pub fn kms_generate_data_key(&self, key: &str, bytes: usize) -> Result<(SecretBytes, Vec<u8>), Error> {
        let region = self.region_for(Some(key))?;
        let what = format!("asking KMS key `{key}` for a data key");
        let mut answer =
            self.json_call(KMS, &region, "GenerateDataKey", &json!({"KeyId": key, "NumberOfBytes": bytes}), &what)?;
        let service = self.service_name(KMS, &self.endpoint(KMS, &region).0);
        let plaintext = secret_field(&answer, "Plaintext", &what, &service);
        let blob = self.blob(&answer, "CiphertextBlob", &what, &region);
        wipe_json(&mut answer);
        let plaintext = plaintext?;
        if plaintext.len() != bytes {
            return Err(Error::Protocol { what, service, problem: format!("a data key of {} bytes", plaintext.len()) });
        }
        Ok((plaintext, blob?))
    }

    /// KMS ReEncrypt of a CiphertextBlob to `key`'s current key material (the plaintext stays in KMS).
    pub fn kms_reencrypt(&self, key: &str, blob: &[u8]) -> Result<Vec<u8>, Error> {
        self.kms_reencrypt_bound(key, blob, &Context::new(), &Context::new())
    }

    /// KMS ReEncrypt from encryption context `from` to `to` (each none when empty).
    pub fn kms_reencrypt_bound(&self, key: &str, blob: &[u8], from: &Context, to: &Context) -> Result<Vec<u8>, Error> {
        let region = self.region_for(Some(key))?;
        let what = format!("re-encrypting with KMS key `{key}`");
        let mut body = json!({"CiphertextBlob": STANDARD.encode(blob), "SourceKeyId": key, "DestinationKeyId": key});
        if !from.is_empty() {
            body["SourceEncryptionContext"] = json!(from);
        }
        if !to.is_empty() {
            body["DestinationEncryptionContext"] = json!(to);
        }
        let answer = self.json_call(KMS, &region, "ReEncrypt", &body, &what)?;
        self.blob(&answer, "CiphertextBlob", &what, &region)
    }

    fn blob(&self, answer: &Value, field: &str, what: &str, region: &str) -> Result<Vec<u8>, Error> {
        let service = self.service_name(KMS, &self.endpoint(KMS, region).0);
        let text = answer.get(field).and_then(Value::as_str).ok_or_else(|| Error::Protocol {
            what: what.into(),
            service: service.clone(),
            problem: format!("no {field} in the answer"),
        })?;
        STANDARD.decode(text).map_err(|_| Error::Protocol {
            what: what.into(),
            service,
            problem: format!("{field} is not base64"),
        })
    }

    /// Secrets Manager GetSecretValue of `secret` (a name or an ARN; the region is the ARN's when it has one).
    pub fn secret_value(&self, secret: &str) -> Result<SecretValue, Error> {
        let region = self.region_for(Some(secret))?;
        let what = format!("reading secret `{secret}`");
        let mut answer =
            self.json_call(SECRETS_MANAGER, &region, "GetSecretValue", &json!({"SecretId": secret}), &what)?;
        let service = self.service_name(SECRETS_MANAGER, &self.endpoint(SECRETS_MANAGER, &region).0);
        let value = if let Some(text) = answer.get("SecretString").and_then(Value::as_str) {
            Ok(SecretValue::Text(SecretBytes::new(text.as_bytes().to_vec())))
        } else if answer.get("SecretBinary").is_some() {
            secret_field(&answer, "SecretBinary", &what, &service).map(SecretValue::Binary)
        } else {
            Err(Error::Protocol { what, service, problem: "neither SecretString nor SecretBinary".into() })
        };
        wipe_json(&mut answer);
        value
    }

    /// Secrets Manager DeleteSecret of `secret` at once, without the recovery window (what CAPA's boothook does
    /// with the userdata secrets it has read). A secret already gone is success.
    pub fn delete_secret(&self, secret: &str) -> Result<(), Error> {
        let region = self.region_for(Some(secret))?;
        let what = format!("deleting secret `{secret}`");
        let body = json!({"SecretId": secret, "ForceDeleteWithoutRecovery": true});
        match self.json_call(SECRETS_MANAGER, &region, "DeleteSecret", &body, &what) {
            Ok(_) | Err(Error::NotFound { .. }) => Ok(()),
            Err(error) => Err(error),
        }
    }

    /// SSM DeleteParameter of `name` (what CAPA's boothook does with the userdata parameters it has read). A
    /// parameter already gone is success.
    pub fn delete_parameter(&self, name: &str) -> Result<(), Error> {
        let region = self.region_for(Some(name))?;
        let what = format!("deleting SSM parameter `{name}`");
        match self.json_call(SSM, &region, "DeleteParameter", &json!({"Name": name}), &what) {
            Ok(_) | Err(Error::NotFound { .. }) => Ok(()),
            Err(error) => Err(error),
        }
    }

    /// SSM GetParameter of `name` with decryption (a SecureString comes back in plaintext).
    pub fn parameter(&self, name: &str) -> Result<SecretBytes, Error> {
        let region = self.region_for(Some(name))?;
        let what = format!("reading SSM parameter `{name}`");
        let body = json!({"Name": name, "WithDecryption": true});
        let mut answer = self.json_call(SSM, &region, "GetParameter", &body, &what)?;
        let value = answer.pointer("/Parameter/Value").and_then(Value::as_str).map(|v| v.as_bytes().to_vec());
        wipe_json(&mut answer);
        value.map(SecretBytes::new).ok_or_else(|| Error::Protocol {
            what,
            service: self.service_name(SSM, &self.endpoint(SSM, &region).0),
            problem: "no Parameter.Value in the answer".into(),
        })
    }

    /// S3 GetObject of `key` in `bucket`, at most `limit` bytes (a larger object is [`Error::TooLarge`]).
    pub fn s3_object(&self, bucket: &str, key: &str, limit: usize) -> Result<Vec<u8>, Error> {
        let region = self.region_for(None)?;
        let what = format!("reading s3://{bucket}/{key}");
        let url = self.s3_url(bucket, key, &region)?;
        let base = format!("{}://{}", url.scheme(), url.authority());
        let mut request = Request::new(Method::GET, url, &what);
        request.max_body = limit;
        let response = self.signed(S3, &region, request, SigningStyle::S3)?;
        if response.status.is_success() {
            return Ok(response.body);
        }
        let code = xml_field(&response.body, "Code").unwrap_or_else(|| response.status.as_u16().to_string());
        let message = xml_field(&response.body, "Message").unwrap_or_default();
        Err(classify(&what, &self.service_name(S3, &base), &code, &message, response.status))
    }

    /// The URL of an object: virtual-host style (`https://BUCKET.s3.REGION.amazonaws.com/KEY`) on AWS for a
    /// bucket name that is a DNS label, path style (`ENDPOINT/BUCKET/KEY`) on a custom endpoint (MinIO and other
    /// S3-compatible servers), or when the name has dots (it would not match the wildcard certificate).
    pub fn s3_url(&self, bucket: &str, key: &str, region: &str) -> Result<reqwest::Url, Error> {
        let (base, custom) = self.base_url(S3, region, None)?;
        let key = encode_s3_key(key);
        let text = if custom || bucket.contains('.') {
            format!("{base}/{bucket}/{key}")
        } else {
            format!("https://{bucket}.{}/{key}", base.trim_start_matches("https://"))
        };
        parse_url(&text, S3)
    }
}

/// What [`sign`] adds for a service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SigningStyle {
    /// The JSON and query services: the payload hash only in the signature.
    Json,
    /// S3: `x-amz-content-sha256`, no path normalization, single percent-encoding.
    S3,
}

/// Adds the SigV4 headers (`Authorization`, `X-Amz-Date`, `X-Amz-Security-Token`, and for S3
/// `x-amz-content-sha256`) to `request`.
fn sign(
    request: &mut Request,
    credentials: &Credentials,
    service: &str,
    region: &str,
    style: SigningStyle,
) -> Result<(), Error> {
    use aws_sigv4::http_request::{
        PayloadChecksumKind, PercentEncodingMode, SignableBody, SignableRequest, SigningSettings,
        UriPathNormalizationMode, sign as sigv4_sign,
    };
    let mut settings = SigningSettings::default();
    if style == SigningStyle::S3 {
        settings.payload_checksum_kind = PayloadChecksumKind::XAmzSha256;
        settings.uri_path_normalization_mode = UriPathNormalizationMode::Disabled;
        settings.percent_encoding_mode = PercentEncodingMode::Single;
    }
    let identity = credentials.identity();
    let params = aws_sigv4::sign::v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name(service)
        .time(SystemTime::now())
        .settings(settings)
        .build()
        .map_err(|e| Error::Config(format!("signing a request to {service}: {e}")))?
        .into();
    let body: &[u8] = request.body.as_deref().map(Vec::as_slice).unwrap_or_default();
    let headers: Vec<(&str, &str)> = request.headers.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
    let method = request.method.as_str().to_owned();
    let signable = SignableRequest::new(&method, request.url.as_str(), headers.into_iter(), SignableBody::Bytes(body))
        .map_err(|e| Error::Config(format!("signing a request to {service}: {e}")))?;
    let (instructions, _signature) = sigv4_sign(signable, &params)
        .map_err(|e| Error::Config(format!("signing a request to {service}: {e}")))?
        .into_parts();
    let (headers, _params) = instructions.into_parts();
    for header in headers {
        request.headers.push((header.name().to_owned(), header.value().to_owned()));
    }
    Ok(())
}

/// STS's URL: an override, else the regional endpoint of the region's partition when a region is known (FIPS
/// and dual-stack as asked), else the global one.
pub fn sts_endpoint(endpoints: &Endpoints, region: Option<&str>) -> String {
    match (endpoints.overridden(STS), region) {
        (Some(url), _) => url.trim_end_matches('/').to_owned(),
        (None, Some(region)) => public_endpoint(STS, region, None, endpoints)
            .unwrap_or_else(|_| format!("https://sts.{region}.{}", Partition::of_region(region).dns_suffix)),
        (None, None) if endpoints.fips => "https://sts-fips.us-east-1.amazonaws.com".to_owned(),
        (None, None) => "https://sts.amazonaws.com".to_owned(),
    }
}

/// STS AssumeRoleWithWebIdentity at `base` (an unsigned call: the token is the credential).
pub(crate) fn assume_role_with_web_identity(
    base: &str,
    settings: &HttpSettings,
    role_arn: &str,
    session_name: &str,
    token: &[u8],
) -> Result<Credentials, Error> {
    let what = format!("assuming role `{role_arn}` with a web identity");
    let token =
        std::str::from_utf8(token.trim_ascii()).ok().filter(|t| !t.is_empty()).ok_or_else(|| Error::Credentials {
            problem: format!("{what}: the web identity token is empty or not text"),
            hint: "check AWS_WEB_IDENTITY_TOKEN_FILE (a projected service-account token)".into(),
        })?;
    let url = parse_url(&format!("{base}/"), STS)?;
    let form: String = [
        ("Action", "AssumeRoleWithWebIdentity"),
        ("Version", "2011-06-15"),
        ("RoleArn", role_arn),
        ("RoleSessionName", session_name),
        ("WebIdentityToken", token),
    ]
    .iter()
    .map(|(k, v)| format!("{k}={}", form_encode(v)))
    .collect::<Vec<_>>()
    .join("&");
    let mut request =
        Request::new(Method::POST, url, &what).header("Content-Type", "application/x-www-form-urlencoded");
    request.body = Some(zeroize::Zeroizing::new(form.into_bytes()));
    let http = Http::new(STS.title, base, settings.clone())?;
    sts_credentials(&http, &request, &what)
}

/// STS AssumeRole at `base`, signed with `source` for `region`: the role's temporary credentials.
pub(crate) fn assume_role(
    base: &str,
    region: &str,
    settings: &HttpSettings,
    source: &Credentials,
    role: &credentials::AssumeRole,
) -> Result<Credentials, Error> {
    let what = format!("assuming role `{}`", role.role_arn);
    let url = parse_url(&format!("{base}/"), STS)?;
    let duration = role.duration_seconds.map(|d| d.to_string());
    let mut fields = vec![
        ("Action", "AssumeRole"),
        ("Version", "2011-06-15"),
        ("RoleArn", role.role_arn.as_str()),
        ("RoleSessionName", role.session_name.as_str()),
    ];
    if let Some(external_id) = &role.external_id {
        fields.push(("ExternalId", external_id.as_str()));
    }
    if let Some(duration) = &duration {
        fields.push(("DurationSeconds", duration.as_str()));
    }
    let form: String = fields.iter().map(|(k, v)| format!("{k}={}", form_encode(v))).collect::<Vec<_>>().join("&");
    let mut request =
        Request::new(Method::POST, url, &what).header("Content-Type", "application/x-www-form-urlencoded");
    request.body = Some(zeroize::Zeroizing::new(form.into_bytes()));
    if let Some(external_id) = &role.external_id {
        request = request.secret(external_id.as_bytes());
    }
    sign(&mut request, source, STS.id, region, SigningStyle::Json)?;
    let http = Http::new(STS.title, base, settings.clone())?;
    sts_credentials(&http, &request, &what)
}

/// The credentials of an STS answer (AssumeRole, AssumeRoleWithWebIdentity), or its error classed.
fn sts_credentials(http: &Http, request: &Request, what: &str) -> Result<Credentials, Error> {
    let service = http.service.clone();
    let response = http.send(request)?;
    if !response.status.is_success() {
        let code = xml_field(&response.body, "Code").unwrap_or_else(|| response.status.as_u16().to_string());
        let message = xml_field(&response.body, "Message").unwrap_or_default();
        return Err(classify(what, &service, &code, &message, response.status));
    }
    let field = |name: &str| {
        xml_field(&response.body, name).ok_or_else(|| Error::Protocol {
            what: what.to_owned(),
            service: service.clone(),
            problem: format!("no {name} in the answer"),
        })
    };
    let expires = field("Expiration").ok().and_then(|text| parse_time(&text));
    Ok(Credentials::new(
        field("AccessKeyId")?,
        SecretBytes::new(field("SecretAccessKey")?.into_bytes()),
        Some(SecretBytes::new(field("SessionToken")?.into_bytes())),
        expires,
    ))
}

impl Wrapping for Aws {
    fn generate_data_key(&self, key: &str, bytes: usize) -> Result<DataKey, Error> {
        let (plaintext, blob) = self.kms_generate_data_key(key, bytes)?;
        Ok(DataKey { plaintext, wrapped: STANDARD.encode(blob) })
    }

    fn wrap(&self, key: &str, plaintext: &[u8]) -> Result<String, Error> {
        Ok(STANDARD.encode(self.kms_encrypt(key, plaintext)?))
    }

    fn unwrap(&self, key: &str, wrapped: &str) -> Result<SecretBytes, Error> {
        self.kms_decrypt(Some(key), &decode_blob(key, wrapped)?)
    }

    fn rewrap(&self, key: &str, wrapped: &str) -> Result<String, Error> {
        Ok(STANDARD.encode(self.kms_reencrypt(key, &decode_blob(key, wrapped)?)?))
    }

    fn wrap_bound(&self, key: &str, plaintext: &[u8], context: &Context) -> Result<String, Error> {
        Ok(STANDARD.encode(self.kms_encrypt_bound(key, plaintext, context)?))
    }

    fn unwrap_bound(&self, key: &str, wrapped: &str, context: &Context) -> Result<SecretBytes, Error> {
        self.kms_decrypt_bound(Some(key), &decode_blob(key, wrapped)?, context)
    }

    fn rewrap_bound(&self, key: &str, wrapped: &str, from: &Context, to: &Context) -> Result<String, Error> {
        Ok(STANDARD.encode(self.kms_reencrypt_bound(key, &decode_blob(key, wrapped)?, from, to)?))
    }

    fn rotate_key(&self, key: &str) -> Result<(), Error> {
        let region = self.region_for(Some(key))?;
        self.json_call(KMS, &region, "RotateKeyOnDemand", &json!({"KeyId": key}), &format!("rotating KMS key `{key}`"))
            .map(drop)
    }
}

/// A wrapped value (standard base64 of a CiphertextBlob, surrounding white space ignored) as bytes.
pub fn decode_blob(key: &str, wrapped: &str) -> Result<Vec<u8>, Error> {
    STANDARD.decode(wrapped.trim()).ok().filter(|b| !b.is_empty()).ok_or_else(|| Error::BadReference {
        reference: format!("aws-kms://{key}"),
        problem: "the wrapped key is not a KMS CiphertextBlob in standard base64".into(),
    })
}

/// The region of an ARN (`arn:PARTITION:SERVICE:REGION:…`), when it names one.
pub fn arn_region(arn: &str) -> Option<&str> {
    let mut parts = arn.splitn(5, ':');
    (parts.next()? == "arn").then_some(())?;
    let _partition = parts.next()?;
    let _service = parts.next()?;
    let region = parts.next()?;
    parts.next()?;
    (!region.is_empty()).then_some(region)
}

/// The partition of an ARN (`arn:PARTITION:…`).
pub fn arn_partition(arn: &str) -> Option<&str> {
    let mut parts = arn.splitn(3, ':');
    (parts.next()? == "arn").then_some(())?;
    parts.next().filter(|p| !p.is_empty())
}

/// Checks a KMS key id as the commands take it: a key or alias ARN of KMS, `alias/NAME`, or a key id.
pub fn check_kms_key(text: &str) -> Result<(), String> {
    // One check for every command: the backend table's (src/kms/backends.rs).
    super::reference::check_aws_kms_key(text)
}

fn parse_url(text: &str, service: Service) -> Result<reqwest::Url, Error> {
    let url = reqwest::Url::parse(text)
        .map_err(|e| Error::Config(format!("{} endpoint `{}`: {e}", service.title, redact::url(text))))?;
    if !matches!(url.scheme(), "https" | "http") || url.host_str().is_none() {
        return Err(Error::Config(format!(
            "{} endpoint `{}`: expected http(s)://HOST[:PORT]",
            service.title,
            redact::url(text)
        )));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Error::Config(format!(
            "{} endpoint `{}`: credentials do not belong in the endpoint",
            service.title,
            redact::url(text)
        )));
    }
    Ok(url)
}

/// An S3 key in a URL path: each segment percent-encoded as SigV4 wants it (unreserved characters kept).
fn encode_s3_key(key: &str) -> String {
    key.split('/').map(form_encode).collect::<Vec<_>>().join("/")
}

/// RFC 3986 percent-encoding of everything but the unreserved characters (what SigV4 and forms both accept).
fn form_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The text of the first `<name>…</name>` element of an XML answer (S3 and STS answers are flat enough for this:
/// the names read here occur once), with the five predefined entities decoded.
pub fn xml_field(body: &[u8], name: &str) -> Option<String> {
    let text = std::str::from_utf8(body).ok()?;
    let open = format!("<{name}>");
    let start = text.find(&open)? + open.len();
    let end = start + text[start..].find(&format!("</{name}>"))?;
    let raw = &text[start..end];
    Some(
        raw.replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&apos;", "'")
            .replace("&amp;", "&"),
    )
}

/// An ISO 8601 UTC time as AWS writes it (`2026-11-27T04:00:00Z`, fractions allowed).
pub fn parse_time(text: &str) -> Option<SystemTime> {
    let time = aws_smithy_types::DateTime::from_str(text.trim(), aws_smithy_types::date_time::Format::DateTime).ok()?;
    SystemTime::try_from(time).ok()
}

/// The error code and message of a JSON-protocol error answer (`__type` may carry a `namespace#` prefix; the
/// code may also come in `X-Amzn-ErrorType`).
fn json_error(response: &Response) -> (String, String) {
    // Refusals of the signature come from a front end that may answer in the query protocol's XML.
    if let Some(code) = xml_field(&response.body, "Code") {
        return (code, xml_field(&response.body, "Message").unwrap_or_default());
    }
    let body: Value = serde_json::from_slice(&response.body).unwrap_or(Value::Null);
    let code = body
        .get("__type")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or_else(|| response.headers.get("x-amzn-errortype").and_then(|v| v.to_str().ok()).map(str::to_owned))
        .map(|c| clean_code(&c))
        .unwrap_or_else(|| response.status.as_u16().to_string());
    let message = ["message", "Message"]
        .iter()
        .find_map(|name| body.get(*name).and_then(Value::as_str))
        .map(str::to_owned)
        .unwrap_or_else(|| {
            if body.is_null() { String::from_utf8_lossy(&response.body).into_owned() } else { String::new() }
        });
    (code, message)
}

fn clean_code(code: &str) -> String {
    let code = code.rsplit('#').next().unwrap_or(code);
    code.split(':').next().unwrap_or(code).to_owned()
}

/// The error code of any answer (JSON `__type`, the header, or XML `<Code>`), for the throttling test.
fn error_code(response: &Response) -> String {
    json_error(response).0
}

fn is_throttling(code: &str) -> bool {
    matches!(
        code,
        "ThrottlingException"
            | "Throttling"
            | "ThrottledException"
            | "TooManyRequestsException"
            | "RequestLimitExceeded"
            | "RequestThrottled"
            | "RequestThrottledException"
            | "SlowDown"
            | "ProvisionedThroughputExceededException"
            | "LimitExceededException"
    )
}

/// Classes an AWS error answer: what it means for the exit status, and what to do about it.
pub fn classify(what: &str, service: &str, code: &str, message: &str, status: reqwest::StatusCode) -> Error {
    let (exit, hint): (ExitStatus, Option<&str>) = match code {
        "AccessDeniedException" | "AccessDenied" => (
            ExitStatus::Unauthenticated,
            Some(
                "the credentials' role or user lacks this permission on this resource (its IAM policy or the key policy)",
            ),
        ),
        "UnrecognizedClientException" | "InvalidClientTokenId" | "InvalidAccessKeyId" | "AuthFailure" => (
            ExitStatus::Unauthenticated,
            Some("AWS does not know these credentials: check the access key (and that it belongs to this partition)"),
        ),
        "InvalidSignatureException"
        | "SignatureDoesNotMatch"
        | "IncompleteSignature"
        | "MissingAuthenticationToken" => (
            ExitStatus::Unauthenticated,
            Some("the signature was refused: check the secret access key and the machine's clock"),
        ),
        "ExpiredTokenException" | "ExpiredToken" | "RequestExpired" | "TokenRefreshRequired" => (
            ExitStatus::Unauthenticated,
            Some(
                "the session token has expired: get new temporary credentials (aws sso login, a new AWS_SESSION_TOKEN)",
            ),
        ),
        "KMSInvalidStateException" => (
            ExitStatus::Unauthenticated,
            Some("the KMS key is disabled or pending deletion: enable it (aws kms enable-key) or cancel its deletion"),
        ),
        "DisabledException" => {
            (ExitStatus::Unauthenticated, Some("the KMS key is disabled: enable it (aws kms enable-key)"))
        }
        "IncorrectKeyException" | "InvalidCiphertextException" => (
            ExitStatus::Unauthenticated,
            Some("the ciphertext was not made by this KMS key (or was changed): name the key that wrapped it"),
        ),
        "InvalidIdentityToken" | "IDPRejectedClaim" | "ExpiredTokenException " => (
            ExitStatus::Unauthenticated,
            Some("STS refused the web identity token: check the role's trust policy and the token's audience"),
        ),
        "NotFoundException" | "ResourceNotFoundException" | "ParameterNotFound" | "NoSuchKey" | "NoSuchBucket" => {
            (ExitStatus::NotFound, None)
        }
        "ValidationException"
        | "InvalidParameterException"
        | "InvalidKeyUsageException"
        | "InvalidArnException"
        | "InvalidRequestException"
        | "InvalidBucketName"
        | "InvalidParameterValue" => (ExitStatus::InvalidInput, None),
        _ if status == reqwest::StatusCode::FORBIDDEN || status == reqwest::StatusCode::UNAUTHORIZED => {
            (ExitStatus::Unauthenticated, None)
        }
        _ if status == reqwest::StatusCode::NOT_FOUND => (ExitStatus::NotFound, None),
        _ => (ExitStatus::Failure, None),
    };
    if exit == ExitStatus::NotFound {
        return Error::NotFound { what: what.into(), service: service.into() };
    }
    let message = redact::server_message(message.as_bytes());
    Error::Refused(Box::new(super::Refusal {
        what: what.into(),
        service: service.into(),
        code: redact::server_message(code.as_bytes()),
        message: if message.is_empty() { format!("HTTP {}", status.as_u16()) } else { message },
        status: exit,
        hint: hint.map(str::to_owned),
    }))
}

/// A base64 field of a JSON answer, decoded into wiped memory.
fn secret_field(answer: &Value, field: &str, what: &str, service: &str) -> Result<SecretBytes, Error> {
    let text = answer.get(field).and_then(Value::as_str).ok_or_else(|| Error::Protocol {
        what: what.into(),
        service: service.into(),
        problem: format!("no {field} in the answer"),
    })?;
    let mut out = SecretBytes::new(Vec::with_capacity(text.len()));
    STANDARD.decode_vec(text, &mut out).map_err(|_| Error::Protocol {
        what: what.into(),
        service: service.into(),
        problem: format!("{field} is not base64"),
    })?;
    Ok(out)
}

/// Overwrites the strings of a JSON value that held a secret before it is dropped.
fn wipe_json(value: &mut Value) {
    use zeroize::Zeroize as _;
    match value {
        Value::String(text) => text.zeroize(),
        Value::Array(items) => items.iter_mut().for_each(wipe_json),
        Value::Object(map) => map.values_mut().for_each(wipe_json),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arn_regions_and_key_checks() {
        assert_eq!(arn_region("arn:aws:kms:us-west-2:111122223333:key/1234"), Some("us-west-2"));
        assert_eq!(arn_region("arn:aws:secretsmanager:eu-west-1:1:secret:a-b"), Some("eu-west-1"));
        assert_eq!(arn_region("alias/capi"), None);
        assert_eq!(arn_region("arn:aws:s3:::bucket"), None);
        for good in [
            "arn:aws:kms:us-west-2:111122223333:key/1234abcd-12ab",
            "arn:aws:kms:eu-west-1:123456789012:alias/capi",
            "alias/capi",
            "1234abcd-12ab-34cd",
        ] {
            assert!(check_kms_key(good).is_ok(), "{good}");
        }
        for bad in
            ["arn:aws:s3:us-west-2:1:key/x", "arn:aws:kms::1:key/x", "key/x", "", "arn:aws:kms:r:1:user/x", "a b"]
        {
            assert!(check_kms_key(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn error_codes_are_classed_with_hints() {
        use crate::exit::Classify as _;
        let status = reqwest::StatusCode::BAD_REQUEST;
        for (code, exit) in [
            ("AccessDeniedException", ExitStatus::Unauthenticated),
            ("KMSInvalidStateException", ExitStatus::Unauthenticated),
            ("IncorrectKeyException", ExitStatus::Unauthenticated),
            ("ExpiredTokenException", ExitStatus::Unauthenticated),
            ("NotFoundException", ExitStatus::NotFound),
            ("ParameterNotFound", ExitStatus::NotFound),
            ("ValidationException", ExitStatus::InvalidInput),
            ("SomethingElse", ExitStatus::Failure),
        ] {
            let error = classify("decrypting", "AWS KMS at http://x", code, "the \u{1b}[31mserver\nsays", status);
            assert_eq!(error.status(), exit, "{code}");
            assert!(!error.to_string().contains('\u{1b}') && !error.to_string().contains('\n'), "{error}");
        }
        let expired = classify("x", "s", "ExpiredTokenException", "", status);
        assert!(expired.hint().unwrap().contains("expired"), "{expired}");
        assert_eq!(clean_code("com.amazonaws.kms#NotFoundException"), "NotFoundException");
        assert_eq!(clean_code("AccessDeniedException:http://internal"), "AccessDeniedException");
    }

    #[test]
    fn xml_fields_and_times() {
        let body = b"<R><Credentials><AccessKeyId>ASIA1</AccessKeyId><SessionToken>a&amp;b</SessionToken>\
            <Expiration>2026-11-27T04:00:00Z</Expiration></Credentials></R>";
        assert_eq!(xml_field(body, "AccessKeyId").as_deref(), Some("ASIA1"));
        assert_eq!(xml_field(body, "SessionToken").as_deref(), Some("a&b"));
        assert_eq!(xml_field(body, "Missing"), None);
        let time = parse_time("2026-11-27T04:00:00Z").unwrap();
        assert_eq!(time.duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs(), 1_795_752_000);
        assert!(parse_time("2026-11-27T04:00:00.123Z").is_some());
        assert!(parse_time("yesterday").is_none());
    }

    #[test]
    fn s3_urls_are_virtual_host_on_aws_and_path_style_on_custom_endpoints() {
        let aws = |all: Option<&str>| {
            Aws::new(AwsSettings {
                region: Some("eu-west-1".into()),
                endpoints: Endpoints { all: all.map(str::to_owned), ..Endpoints::default() },
                http: HttpSettings::default(),
                credentials: Arc::new(credentials::Static::new(Credentials::new(
                    "AKID".into(),
                    SecretBytes::new(b"s".to_vec()),
                    None,
                    None,
                ))),
                instance_metadata: None,
            })
        };
        let on_aws = aws(None);
        assert_eq!(
            on_aws.s3_url("capi-boot", "machines/a b+c.yaml", "eu-west-1").unwrap().as_str(),
            "https://capi-boot.s3.eu-west-1.amazonaws.com/machines/a%20b%2Bc.yaml"
        );
        assert_eq!(
            on_aws.s3_url("my.bucket", "k", "eu-west-1").unwrap().as_str(),
            "https://s3.eu-west-1.amazonaws.com/my.bucket/k"
        );
        let minio = aws(Some("http://127.0.0.1:9000/"));
        assert_eq!(minio.s3_url("b", "k/x", "eu-west-1").unwrap().as_str(), "http://127.0.0.1:9000/b/k/x");
        assert_eq!(minio.endpoint(KMS, "eu-west-1"), ("http://127.0.0.1:9000".to_owned(), true));
        assert_eq!(on_aws.endpoint(KMS, "eu-west-1").0, "https://kms.eu-west-1.amazonaws.com");
        assert!(aws(Some("http://user:pw@host")).s3_url("b", "k", "r").is_err());
    }

    /// The partitions' endpoints as the SDKs' rules build them (the hosts of botocore's endpoint resolver), with
    /// the FIPS and dual-stack variants; an override with FIPS is refused.
    #[test]
    fn endpoints_come_from_the_partition_with_fips_and_dualstack_variants() {
        let plain = Endpoints::default();
        let fips = Endpoints { fips: true, ..Endpoints::default() };
        let dual = Endpoints { dualstack: true, ..Endpoints::default() };
        let both = Endpoints { fips: true, dualstack: true, ..Endpoints::default() };
        let url = |service, region, arn: Option<&str>, e: &Endpoints| {
            public_endpoint(service, region, arn.and_then(arn_partition), e).unwrap()
        };
        for (service, region, endpoints, expected) in [
            (KMS, "eu-west-1", &plain, "https://kms.eu-west-1.amazonaws.com"),
            (KMS, "cn-north-1", &plain, "https://kms.cn-north-1.amazonaws.com.cn"),
            (SECRETS_MANAGER, "cn-northwest-1", &plain, "https://secretsmanager.cn-northwest-1.amazonaws.com.cn"),
            (KMS, "us-gov-west-1", &plain, "https://kms.us-gov-west-1.amazonaws.com"),
            (KMS, "us-gov-west-1", &fips, "https://kms-fips.us-gov-west-1.amazonaws.com"),
            (STS, "us-gov-west-1", &fips, "https://sts.us-gov-west-1.amazonaws.com"),
            (KMS, "us-iso-east-1", &plain, "https://kms.us-iso-east-1.c2s.ic.gov"),
            (KMS, "us-isob-east-1", &plain, "https://kms.us-isob-east-1.sc2s.sgov.gov"),
            (KMS, "eu-isoe-west-1", &plain, "https://kms.eu-isoe-west-1.cloud.adc-e.uk"),
            (KMS, "us-isof-south-1", &plain, "https://kms.us-isof-south-1.csp.hci.ic.gov"),
            (KMS, "us-east-1", &fips, "https://kms-fips.us-east-1.amazonaws.com"),
            (KMS, "us-east-1", &dual, "https://kms.us-east-1.api.aws"),
            (KMS, "us-east-1", &both, "https://kms-fips.us-east-1.api.aws"),
            (KMS, "cn-north-1", &dual, "https://kms.cn-north-1.api.amazonwebservices.com.cn"),
            (S3, "eu-west-1", &plain, "https://s3.eu-west-1.amazonaws.com"),
            (S3, "cn-north-1", &plain, "https://s3.cn-north-1.amazonaws.com.cn"),
            (S3, "us-east-1", &fips, "https://s3-fips.us-east-1.amazonaws.com"),
            (S3, "us-east-1", &dual, "https://s3.dualstack.us-east-1.amazonaws.com"),
            (S3, "us-gov-east-1", &both, "https://s3-fips.dualstack.us-gov-east-1.amazonaws.com"),
        ] {
            assert_eq!(url(service, region, None, endpoints), expected, "{} {region}", service.id);
        }
        assert_eq!(
            url(KMS, "cn-north-1", Some("arn:aws-cn:kms:cn-north-1:1:key/x"), &plain),
            "https://kms.cn-north-1.amazonaws.com.cn"
        );
        assert!(public_endpoint(KMS, "us-iso-east-1", None, &dual).unwrap_err().to_string().contains("aws-iso"));
        assert_eq!(sts_endpoint(&plain, Some("cn-north-1")), "https://sts.cn-north-1.amazonaws.com.cn");
        assert_eq!(sts_endpoint(&fips, Some("us-west-2")), "https://sts-fips.us-west-2.amazonaws.com");
        let custom = Endpoints { all: Some("http://127.0.0.1:9".into()), fips: true, ..Endpoints::default() };
        let aws = Aws::new(AwsSettings {
            region: Some("us-east-1".into()),
            endpoints: custom,
            http: HttpSettings::default(),
            credentials: credentials::unusable("x", "y"),
            instance_metadata: None,
        });
        assert!(aws.base_url(KMS, "us-east-1", None).unwrap_err().to_string().contains("FIPS"));
        let bucket = Aws::new(AwsSettings { endpoints: both, ..aws.settings().clone() });
        assert_eq!(
            bucket.s3_url("b", "k", "us-east-1").unwrap().as_str(),
            "https://b.s3-fips.dualstack.us-east-1.amazonaws.com/k"
        );
    }

    #[test]
    fn wrapped_values_are_standard_base64() {
        assert_eq!(decode_blob("k", " AQID\n").unwrap(), [1, 2, 3]);
        assert!(decode_blob("k", "AQ-_").is_err());
        assert!(decode_blob("k", "").is_err());
    }
}
