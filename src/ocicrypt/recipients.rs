//! From what the operator names (recipient specs, key files) to the key wrappers and unwrappers of each scheme.
//!
//! Recipient specs are skopeo's: `jwe:PUBKEY`, `pkcs7:CERT`, `pgp:NAME-OR-EMAIL` (or an exported public key
//! file), `provider:NAME[:OPTS]`. Decryption key files are recognised by content, as skopeo does: private keys
//! (PEM, DER, JWK) serve JWE and, with a matching certificate, PKCS#7; OpenPGP secret keys serve PGP.

use super::key_manager::{self, ManagedKey, Manager};
use super::keyprovider::{self, KeyProviderConfig, Parameters};
use super::keywrap::{KeyUnwrapper, KeyWrapper};
use super::{Error, jwe, pgp, pkcs7};
use crate::crypto::keys::{self, PrivateKey, RecipientKey};
use crate::crypto::{Passphrase, SecretBytes};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A decryption key as given on the command line.
#[derive(Debug)]
pub enum KeySource {
    /// A key file, and the password that unlocks it when the operator gave one for this key.
    File {
        /// The file.
        path: PathBuf,
        /// Its password.
        password: Option<Passphrase>,
    },
    /// `provider:NAME[:OPTS]`.
    Provider {
        /// The provider's name in the key-provider configuration.
        name: String,
        /// Options passed to it.
        options: Option<String>,
    },
    /// `vault-transit://MOUNT/KEY` or `aws-kms://ARN`: a Transit key of Vault or OpenBao, or an AWS KMS key.
    Managed(ManagedKey),
}

/// A recipient as given on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecipientSpec {
    /// `jwe:FILE`: an RSA or EC public key (PEM, DER, JWK).
    Jwe(PathBuf),
    /// `pkcs7:FILE`: an X.509 certificate with an RSA key.
    Pkcs7(PathBuf),
    /// `pgp:NAME`: an e-mail address, user name or fingerprint in the gpg keyring, or an exported key file.
    Pgp(String),
    /// `provider:NAME[:OPTS]`: an ocicrypt key provider.
    Provider {
        /// The provider's name in the key-provider configuration.
        name: String,
        /// Options passed to it.
        options: Option<String>,
    },
    /// `vault-transit://MOUNT/KEY` or `aws-kms://ARN`: a Transit key of Vault or OpenBao or an AWS KMS key, written
    /// as provider `cryptadm`'s annotation.
    Managed(ManagedKey),
}

impl RecipientSpec {
    /// Parses `SCHEME:VALUE`.
    pub fn parse(text: &str) -> Result<Self, Error> {
        if ManagedKey::is_reference(text) {
            return ManagedKey::parse(text).map(Self::Managed).map_err(|e| invalid(text, &e.to_string()));
        }
        let (scheme, value) = text.split_once(':').ok_or_else(|| {
            invalid(
                text,
                "expected SCHEME:VALUE (jwe:, pkcs7:, pgp:, provider:), vault-transit://MOUNT/KEY or aws-kms://ARN",
            )
        })?;
        if value.is_empty() {
            return Err(invalid(text, "empty value"));
        }
        Ok(match scheme {
            "jwe" => Self::Jwe(value.into()),
            "pkcs7" => Self::Pkcs7(value.into()),
            "pgp" => Self::Pgp(value.into()),
            "provider" => match value.split_once(':') {
                Some((name, options)) => Self::Provider { name: name.into(), options: Some(options.into()) },
                None => Self::Provider { name: value.into(), options: None },
            },
            "pkcs11" => return Err(invalid(text, "PKCS#11 recipients are not supported")),
            other => {
                return Err(invalid(
                    text,
                    &format!("unknown scheme `{other}` (supported: jwe, pkcs7, pgp, provider, vault-transit, aws-kms)"),
                ));
            }
        })
    }
}

fn invalid(what: &str, problem: &str) -> Error {
    Error::InvalidKey { what: format!("recipient `{what}`"), problem: problem.into() }
}

/// Whether the key file at `path` is an encrypted PKCS#8 key (read again only on the error path that asks).
fn needs_password(path: &Path) -> bool {
    read_key_file(path).is_ok_and(|bytes| keys::key_file_shape(&bytes).password_protected)
}

fn read_key_file(path: &Path) -> Result<SecretBytes, Error> {
    std::fs::read(path).map(SecretBytes::new).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::NotFound(format!("key file `{}` does not exist", path.display())),
        _ => Error::Io(format!("reading `{}`: {e}", path.display())),
    })
}

/// What the operator gave, resolved into keys (files read, gpg asked) before any image is touched.
pub struct Recipients {
    jwe: Vec<RecipientKey>,
    pkcs7: Vec<x509_cert::Certificate>,
    pgp: Vec<pgp::Cert>,
    /// Key providers named, with the options given for each, in order.
    providers: Parameters,
    provider_config: Option<Arc<KeyProviderConfig>>,
    managed: Vec<ManagedKey>,
    managed_opener: Option<key_manager::Opener>,
}

impl Recipients {
    /// Reads every recipient's key. `pgp:` names are looked up in the keyring of `gpg_homedir` (or GNUPGHOME).
    pub fn resolve(
        specs: &[RecipientSpec],
        gpg_homedir: Option<&Path>,
        provider_config: Option<Arc<KeyProviderConfig>>,
    ) -> Result<Self, Error> {
        let mut recipients = Self {
            jwe: Vec::new(),
            pkcs7: Vec::new(),
            pgp: Vec::new(),
            providers: Parameters::new(),
            provider_config,
            managed: Vec::new(),
            managed_opener: None,
        };
        let mut pgp_names = Vec::new();
        for spec in specs {
            match spec {
                RecipientSpec::Jwe(path) => {
                    recipients.jwe.push(keys::parse_public_key(&read_key_file(path)?, &path.display().to_string())?)
                }
                RecipientSpec::Pkcs7(path) => {
                    recipients.pkcs7.push(pkcs7::parse_certificate(&read_key_file(path)?, &path.display().to_string())?)
                }
                // An exported public key file works too (ocicrypt only asks gpg).
                RecipientSpec::Pgp(name) if Path::new(name).is_file() => {
                    recipients.pgp.extend(pgp::parse_keyring(&read_key_file(Path::new(name))?, name)?)
                }
                RecipientSpec::Pgp(name) => pgp_names.push(name.clone()),
                RecipientSpec::Provider { name, options } => {
                    let configured = recipients.provider_config.as_ref().is_some_and(|c| c.names().any(|n| n == name));
                    if !configured {
                        return Err(Error::InvalidKey {
                            what: format!("recipient `provider:{name}`"),
                            problem: "no such key provider is configured (see OCICRYPT_KEYPROVIDER_CONFIG)".into(),
                        });
                    }
                    recipients.providers.entry(name.clone()).or_default().push(provider_option(options));
                }
                RecipientSpec::Managed(key) => {
                    if !recipients.managed.contains(key) {
                        recipients.managed.push(key.clone());
                    }
                }
            }
        }
        // Both would write the annotation `…keys.provider.cryptadm`, the second replacing the first.
        if !recipients.managed.is_empty() && recipients.providers.contains_key(key_manager::PROVIDER) {
            return Err(Error::InvalidKey {
                what: format!("recipient `provider:{}`", key_manager::PROVIDER),
                problem: "key-manager keys are given either as vault-transit://MOUNT/KEY or aws-kms://ARN, or \
                          through the key provider `cryptadm`, not both"
                    .into(),
            });
        }
        if !pgp_names.is_empty() {
            recipients.pgp.extend(pgp::recipients_from_gpg(gpg_homedir, &pgp_names)?);
        }
        Ok(recipients)
    }

    /// The key managers that recipients' keys are in (then [`Recipients::with_key_managers`] must give the way
    /// to them).
    pub fn key_managers(&self) -> Vec<Manager> {
        managers_of(&self.managed)
    }

    /// How key managers are reached.
    pub fn with_key_managers(mut self, opener: key_manager::Opener) -> Self {
        self.managed_opener = Some(opener);
        self
    }

    /// One wrapper per scheme that has recipients.
    pub fn wrappers(self) -> Vec<Box<dyn KeyWrapper>> {
        let mut wrappers: Vec<Box<dyn KeyWrapper>> = Vec::new();
        if !self.jwe.is_empty() {
            wrappers.push(Box::new(JweWrapper(self.jwe)));
        }
        if !self.pkcs7.is_empty() {
            wrappers.push(Box::new(Pkcs7Wrapper(self.pkcs7)));
        }
        if !self.pgp.is_empty() {
            wrappers.push(Box::new(PgpWrapper(self.pgp)));
        }
        if !self.managed.is_empty() {
            // Without an opener every wrap fails, naming the missing settings.
            let opener = self.managed_opener.clone().unwrap_or_else(key_manager::unconfigured);
            wrappers.push(Box::new(key_manager::ManagedWrapper::new(opener, self.managed.clone())));
        }
        if let Some(config) = self.provider_config {
            let all = Arc::new(self.providers);
            for name in all.keys() {
                wrappers.push(Box::new(ProviderWrapper {
                    config: config.clone(),
                    name: name.clone(),
                    parameters: all.clone(),
                }));
            }
        }
        wrappers
    }
}

/// ocicrypt passes `Enabled` for a provider named without options.
fn provider_option(options: &Option<String>) -> Vec<u8> {
    options.as_ref().map(|o| o.as_bytes().to_vec()).unwrap_or_else(|| keyprovider::ENABLED.to_vec())
}

/// Decryption keys, recognised by content.
pub struct DecryptionKeys {
    private: Vec<PrivateKey>,
    certificates: Vec<x509_cert::Certificate>,
    pgp: Vec<pgp::Cert>,
    passphrases: Vec<Passphrase>,
    /// Options for key providers named with `--key provider:NAME[:OPTS]`. Only these reach the providers: unlike
    /// ocicrypt, cryptadm never hands the other schemes' private keys to an external program.
    providers: Parameters,
    provider_config: Option<Arc<KeyProviderConfig>>,
    /// A GnuPG home whose secret keys are exported when a layer wrapped for OpenPGP first needs them.
    gpg_home: Option<(PathBuf, Option<Passphrase>)>,
    /// Key-manager keys (`--key vault-transit://…`, `--key aws-kms://…`), or any key a layer names (a node's
    /// stream processor).
    managed: Option<key_manager::Allowed>,
    managed_opener: Option<key_manager::Opener>,
    /// Key files sealed to the machine (clevis JWEs), opened when a layer first needs them.
    sealed: Vec<super::sealed::SealedFile>,
    /// How sealed key files reach their TPM and Tang servers (the defaults: /dev/tpmrm0).
    sealed_settings: Option<crate::kms::clevis::Settings>,
}

impl DecryptionKeys {
    /// Reads key files (`--key`, each with the password that unlocks it, if any), certificates (`--cert`) and
    /// provider names (`--key provider:NAME[:OPTS]`), and the secret keys of the gpg keyring in `gpg_homedir`.
    /// `password` is the default for keys given without one.
    /// An encrypted key with no password is asked for on the terminal, through `ui`.
    pub fn resolve(
        keys: &[KeySource],
        certificates: &[PathBuf],
        password: Option<&Passphrase>,
        provider_config: Option<Arc<KeyProviderConfig>>,
        gpg_homedir: Option<&Path>,
        ui: &dyn crate::interact::Interaction,
    ) -> Result<Self, Error> {
        let mut resolved = Self {
            private: Vec::new(),
            certificates: Vec::new(),
            pgp: Vec::new(),
            passphrases: password.cloned().into_iter().collect(),
            providers: Parameters::new(),
            provider_config,
            gpg_home: None,
            managed: None,
            managed_opener: None,
            sealed: Vec::new(),
            sealed_settings: None,
        };
        for cert in certificates {
            resolved.certificates.push(pkcs7::parse_certificate(&read_key_file(cert)?, &cert.display().to_string())?);
        }
        for key in keys {
            match key {
                KeySource::Provider { name, options } => {
                    resolved.providers.entry(name.clone()).or_default().push(provider_option(options));
                }
                KeySource::Managed(key) => match &mut resolved.managed {
                    Some(key_manager::Allowed::Keys(keys)) => keys.push(key.clone()),
                    _ => resolved.managed = Some(key_manager::Allowed::Keys(vec![key.clone()])),
                },
                KeySource::File { path, password: own } => {
                    let password = own.as_ref().or(password);
                    if let Some(own) = own {
                        resolved.passphrases.push(own.clone());
                    }
                    resolved.add_key_file_or_ask(path, password, ui)?;
                }
            }
        }
        if let Some(home) = gpg_homedir {
            // A build without OpenPGP refuses the flag at once; otherwise the export waits for an OpenPGP layer.
            #[cfg(not(feature = "pgp"))]
            return Err(pgp::unsupported(&format!("GnuPG home {}", home.display())));
            #[cfg(feature = "pgp")]
            {
                resolved.gpg_home = Some((home.to_path_buf(), password.cloned()));
            }
        }
        Ok(resolved)
    }

    fn add_key_file_or_ask(
        &mut self,
        path: &Path,
        password: Option<&Passphrase>,
        ui: &dyn crate::interact::Interaction,
    ) -> Result<(), Error> {
        match self.add_key_file(path, password) {
            Err(Error::InvalidKey { .. }) if password.is_none() && needs_password(path) => {
                let prompt = format!("Password for `{}`", path.display());
                match ui.request_passphrase(&prompt, false).map_err(|e| Error::Io(format!("password prompt: {e}")))? {
                    Some(asked) => {
                        self.passphrases.push(asked.clone());
                        self.add_key_file(path, Some(&asked))
                    }
                    None => self.add_key_file(path, None),
                }
            }
            other => other,
        }
    }

    fn add_key_file(&mut self, path: &Path, password: Option<&Passphrase>) -> Result<(), Error> {
        let bytes = read_key_file(path)?;
        self.add_key_bytes(&bytes, &path.display().to_string(), password)
    }

    /// No keys yet; key providers from `provider_config` (the keys of a node's keys directory are added with
    /// [`DecryptionKeys::add_key_bytes`]).
    pub fn empty(provider_config: Option<Arc<KeyProviderConfig>>) -> Self {
        Self {
            private: Vec::new(),
            certificates: Vec::new(),
            pgp: Vec::new(),
            passphrases: Vec::new(),
            providers: Parameters::new(),
            provider_config,
            gpg_home: None,
            managed: None,
            managed_opener: None,
            sealed: Vec::new(),
            sealed_settings: None,
        }
    }

    /// The key managers that the named keys are in (then [`DecryptionKeys::with_key_managers`] must give the way
    /// to them).
    pub fn key_managers(&self) -> Vec<Manager> {
        match &self.managed {
            Some(key_manager::Allowed::Keys(keys)) => managers_of(keys),
            _ => Vec::new(),
        }
    }

    /// How key managers are reached.
    pub fn with_key_managers(mut self, opener: key_manager::Opener) -> Self {
        self.managed_opener = Some(opener);
        self
    }

    /// Also unwraps key-manager-wrapped layers with whichever key they name, through `opener` (a node's stream
    /// processor: the policy of the node's Vault identity or AWS role decides).
    pub fn with_any_managed_key(mut self, opener: key_manager::Opener) -> Self {
        self.managed = Some(key_manager::Allowed::Named);
        self.managed_opener = Some(opener);
        self
    }

    /// Adds one key file's bytes, recognised by content (a private key, a certificate or an OpenPGP secret key);
    /// `what` names it in messages. [`Error::InvalidKey`] when it is none of these, or locked without `password`.
    pub fn add_key_bytes(&mut self, bytes: &[u8], what: &str, password: Option<&Passphrase>) -> Result<(), Error> {
        let what = what.to_owned();
        if super::sealed::looks_sealed(bytes) {
            super::sealed::describe(bytes, &what)?;
            let jwe = String::from_utf8_lossy(bytes.trim_ascii()).into_owned();
            self.sealed.push(super::sealed::SealedFile { what, jwe });
            return Ok(());
        }
        let private = keys::parse_private_key(bytes, password.map(Passphrase::expose), &what);
        if let Ok(key) = private {
            self.private.push(key);
            return Ok(());
        }
        // A certificate among the keys serves PKCS#7, as skopeo allows.
        if let Ok(cert) = pkcs7::parse_certificate(bytes, &what) {
            self.certificates.push(cert);
            return Ok(());
        }
        // Without the `pgp` feature, an OpenPGP key is refused for that reason, not as an unreadable private key.
        #[cfg(not(feature = "pgp"))]
        if pgp::looks_like_openpgp(bytes) {
            return Err(pgp::unsupported(&what));
        }
        if let Ok(certs) = pgp::parse_keyring(bytes, &what) {
            if !certs.iter().any(|c| c.is_tsk()) {
                return Err(Error::InvalidKey {
                    what,
                    problem: "an OpenPGP public key; decryption needs the secret key (gpg --export-secret-keys)".into(),
                });
            }
            self.pgp.extend(certs);
            return Ok(());
        }
        private.map(|_| ()).map_err(Error::from)
    }

    /// How sealed key files reach their TPM (`--tpm2-device`) and Tang servers.
    pub fn with_sealed_key_settings(mut self, settings: crate::kms::clevis::Settings) -> Self {
        self.sealed_settings = Some(settings);
        self
    }

    /// Whether a key file is sealed to the machine (a clevis JWE).
    pub fn has_sealed_keys(&self) -> bool {
        !self.sealed.is_empty()
    }

    /// A certificate given beside sealed keys.
    pub(super) fn add_certificate(&mut self, cert: x509_cert::Certificate) {
        self.certificates.push(cert);
    }

    /// The key a sealed file held, once opened (a sealed key inside a sealed key is refused).
    pub(super) fn add_opened_key(&mut self, bytes: &[u8], what: &str) -> Result<(), Error> {
        if super::sealed::looks_sealed(bytes) {
            return Err(Error::InvalidKey {
                what: format!("sealed key {what}"),
                problem: "it holds another sealed key, not a private key".into(),
            });
        }
        self.add_key_bytes(bytes, &format!("sealed key {what}"), None)
    }

    /// One unwrapper per scheme that has keys, and one per configured key provider: ocicrypt asks every
    /// configured provider whose annotation a layer carries.
    pub fn unwrappers(self) -> Vec<Box<dyn KeyUnwrapper>> {
        let mut unwrappers: Vec<Box<dyn KeyUnwrapper>> = Vec::new();
        let rsa_pairs = pkcs7_pairs(&self.private, &self.certificates);
        // Sealed key files come after the plain ones: their TPM or Tang servers are asked only when no plain key
        // opened the layer.
        let sealed = (!self.sealed.is_empty()).then(|| {
            let settings = self.sealed_settings.clone().unwrap_or_default();
            std::rc::Rc::new(super::sealed::SealedKeys::new(self.sealed, settings, self.certificates.clone()))
        });
        if !self.private.is_empty() {
            unwrappers.push(Box::new(JweUnwrapper(self.private)));
        }
        if !rsa_pairs.is_empty() {
            unwrappers.push(Box::new(Pkcs7Unwrapper(rsa_pairs)));
        }
        // Key files first: the GnuPG home is exported only when they do not open an OpenPGP layer.
        let passphrases = self.passphrases.clone();
        if !self.pgp.is_empty() {
            unwrappers.push(Box::new(PgpUnwrapper { keys: self.pgp, passphrases: self.passphrases }));
        }
        if let Some((home, password)) = self.gpg_home {
            unwrappers.push(Box::new(GpgHomeUnwrapper { home, password, passphrases, exported: Mutex::default() }));
        }
        if let Some(allowed) = self.managed {
            let opener = self.managed_opener.unwrap_or_else(key_manager::unconfigured);
            unwrappers.push(Box::new(key_manager::ManagedUnwrapper::new(opener, allowed)));
        }
        if let Some(config) = self.provider_config {
            let parameters = Arc::new(self.providers);
            for name in config.names() {
                unwrappers.push(Box::new(ProviderUnwrapper {
                    config: config.clone(),
                    name: name.to_owned(),
                    parameters: parameters.clone(),
                }));
            }
        }
        if let Some(sealed) = sealed {
            for scheme in super::sealed::SCHEMES {
                unwrappers.push(Box::new(super::sealed::SealedUnwrapper { scheme, keys: sealed.clone() }));
            }
        }
        unwrappers
    }
}

/// The key managers `keys` are in, each once.
fn managers_of(keys: &[ManagedKey]) -> Vec<Manager> {
    let mut managers: Vec<Manager> = keys.iter().map(ManagedKey::manager).collect();
    managers.sort();
    managers.dedup();
    managers
}

/// PKCS#7 needs the certificate that matches each RSA private key (it names the recipient by issuer and serial).
fn pkcs7_pairs(
    private: &[PrivateKey],
    certificates: &[x509_cert::Certificate],
) -> Vec<(rsa::RsaPrivateKey, x509_cert::Certificate)> {
    use rsa::pkcs8::DecodePublicKey;
    let mut pairs = Vec::new();
    for key in private {
        let PrivateKey::Rsa(rsa_key) = key else { continue };
        for cert in certificates {
            let spki = der::Encode::to_der(&cert.tbs_certificate.subject_public_key_info).ok();
            let public = spki.and_then(|d| rsa::RsaPublicKey::from_public_key_der(&d).ok());
            if public.as_ref() == Some(rsa_key.as_ref()) {
                pairs.push((rsa_key.clone(), cert.clone()));
            }
        }
    }
    pairs
}

struct JweWrapper(Vec<RecipientKey>);
impl KeyWrapper for JweWrapper {
    fn scheme(&self) -> String {
        "jwe".into()
    }
    fn wrap(&self, private_options: &[u8]) -> Result<Vec<u8>, Error> {
        jwe::wrap(&self.0, private_options)
    }
}

struct JweUnwrapper(Vec<PrivateKey>);
impl KeyUnwrapper for JweUnwrapper {
    fn scheme(&self) -> String {
        "jwe".into()
    }
    fn unwrap(&self, wrapped: &[u8]) -> Result<Option<SecretBytes>, Error> {
        jwe::unwrap(&self.0, wrapped)
    }
}

struct Pkcs7Wrapper(Vec<x509_cert::Certificate>);
impl KeyWrapper for Pkcs7Wrapper {
    fn scheme(&self) -> String {
        "pkcs7".into()
    }
    fn wrap(&self, private_options: &[u8]) -> Result<Vec<u8>, Error> {
        pkcs7::wrap(&self.0, private_options)
    }
}

struct Pkcs7Unwrapper(Vec<(rsa::RsaPrivateKey, x509_cert::Certificate)>);
impl KeyUnwrapper for Pkcs7Unwrapper {
    fn scheme(&self) -> String {
        "pkcs7".into()
    }
    fn unwrap(&self, wrapped: &[u8]) -> Result<Option<SecretBytes>, Error> {
        pkcs7::unwrap(&self.0, wrapped)
    }
}

struct PgpWrapper(Vec<pgp::Cert>);
impl KeyWrapper for PgpWrapper {
    fn scheme(&self) -> String {
        "pgp".into()
    }
    fn wrap(&self, private_options: &[u8]) -> Result<Vec<u8>, Error> {
        pgp::wrap(&self.0, private_options)
    }
}

struct PgpUnwrapper {
    keys: Vec<pgp::Cert>,
    passphrases: Vec<Passphrase>,
}
impl KeyUnwrapper for PgpUnwrapper {
    fn scheme(&self) -> String {
        "pgp".into()
    }
    fn unwrap(&self, wrapped: &[u8]) -> Result<Option<SecretBytes>, Error> {
        pgp::unwrap(&self.keys, &self.passphrases, wrapped)
    }
}

/// What one `gpg --export-secret-keys` gave: the keys, or why it failed.
type Exported = Result<Vec<pgp::Cert>, String>;

/// The secret keys of a GnuPG home, exported when a layer wrapped for OpenPGP needs them, and only the keys its
/// session-key packets are addressed to. gpg asks for the passphrase of every protected secret key it exports: an
/// encrypt that opens no OpenPGP layer must not run that export, nor any run fail on an unrelated locked key.
struct GpgHomeUnwrapper {
    home: PathBuf,
    password: Option<Passphrase>,
    passphrases: Vec<Passphrase>,
    /// The keys exported per set of recipient key IDs, or why the export failed (each set asked once per run).
    exported: Mutex<BTreeMap<Vec<String>, Exported>>,
}
impl KeyUnwrapper for GpgHomeUnwrapper {
    fn scheme(&self) -> String {
        "pgp".into()
    }
    fn unwrap(&self, wrapped: &[u8]) -> Result<Option<SecretBytes>, Error> {
        // An anonymous recipient (or a message whose packets cannot be listed) may be any key: export them all.
        let mut ids = pgp::recipient_key_ids(wrapped).unwrap_or_default();
        if ids.iter().any(|id| id == "anonymous") {
            ids.clear();
        }
        let mut exported = self.exported.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let keys = exported.entry(ids).or_insert_with_key(|ids| {
            pgp::secret_keys_from_gpg(Some(&self.home), self.password.as_ref(), ids).map_err(|e| match e {
                Error::Unwrap { problem, .. } => problem,
                other => other.to_string(),
            })
        });
        match keys {
            Ok(keys) => pgp::unwrap(keys, &self.passphrases, wrapped),
            Err(problem) => Err(Error::Unwrap { scheme: "pgp".into(), problem: problem.clone() }),
        }
    }
}

struct ProviderWrapper {
    config: Arc<KeyProviderConfig>,
    name: String,
    parameters: Arc<Parameters>,
}
impl KeyWrapper for ProviderWrapper {
    fn scheme(&self) -> String {
        format!("provider.{}", self.name)
    }
    fn wrap(&self, private_options: &[u8]) -> Result<Vec<u8>, Error> {
        let options = self.parameters.get(&self.name).cloned().unwrap_or_default();
        keyprovider::wrap(&self.config, &self.name, &options, &self.parameters, private_options)
    }
}

struct ProviderUnwrapper {
    config: Arc<KeyProviderConfig>,
    name: String,
    parameters: Arc<Parameters>,
}
impl KeyUnwrapper for ProviderUnwrapper {
    fn scheme(&self) -> String {
        format!("provider.{}", self.name)
    }
    fn unwrap(&self, wrapped: &[u8]) -> Result<Option<SecretBytes>, Error> {
        keyprovider::unwrap(&self.config, &self.name, &self.parameters, wrapped)
    }
}

impl std::fmt::Display for RecipientSpec {
    /// The spec as the operator writes it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Jwe(path) => write!(f, "jwe:{}", path.display()),
            Self::Pkcs7(path) => write!(f, "pkcs7:{}", path.display()),
            Self::Pgp(name) => write!(f, "pgp:{name}"),
            Self::Provider { name, options: Some(options) } => write!(f, "provider:{name}:{options}"),
            Self::Provider { name, options: None } => write!(f, "provider:{name}"),
            Self::Managed(key) => f.write_str(&key.reference()),
        }
    }
}

/// One recipient an image's layers are wrapped for, in `image inspect`'s words: the scheme and what names the
/// recipient (empty for a key provider, whose wrapped keys name no one).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Holder {
    /// `jwe`, `pkcs7`, `pgp`, `provider.NAME`.
    pub scheme: String,
    /// A JWE `kid` (or `ALG (no key id)`), a PKCS#7 issuer and serial, an OpenPGP key ID.
    pub name: String,
}

impl Holder {
    /// Whether its wrapped keys say who it is. A JWE recipient without a `kid` (ocicrypt and skopeo write none)
    /// is named only by its algorithm: cryptadm cannot tell it from another key of that algorithm, nor whether a
    /// given public key is it.
    pub fn identified(&self) -> bool {
        !(self.scheme == "jwe" && self.name.ends_with(" (no key id)"))
    }
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.name.as_str() {
            "" => f.write_str(&self.scheme),
            name => write!(f, "{} {name}", self.scheme),
        }
    }
}

/// What re-encrypting an image for the `--recipient` list only does to who can open it.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct AccessChange {
    /// `--recipient` specs that are recipients now and stay.
    pub keeps: Vec<String>,
    /// `--recipient` specs that are not recipients now.
    pub gains: Vec<String>,
    /// Current recipients that no `--recipient` names, with how many of a layer's wrapped keys they hold (two
    /// JWE recipients without a `kid` and of the same algorithm have one name).
    pub loses: Vec<(Holder, usize)>,
    /// `--remove-recipient` specs that name no current recipient.
    pub not_recipients: Vec<String>,
}

/// Who keeps, gains and loses access when the encrypted layers of `layers` (all platforms) are re-encrypted for
/// `keep` only, and which of `remove` name no current recipient. A recipient is recognised by what its wrapped
/// keys name: a PKCS#7 certificate's issuer and serial, OpenPGP key IDs (`pgp:` names are looked up in
/// `gpg_homedir`), a key-manager key, a key provider's name, a JWE `kid`; a JWE key without `kid` (ocicrypt writes
/// none) only by its algorithm, so `RSA-OAEP (no key id)` stands for every such RSA recipient.
pub fn access_change(
    layers: &[super::inspect::LayerInfo],
    keep: &[RecipientSpec],
    remove: &[RecipientSpec],
    gpg_homedir: Option<&Path>,
) -> Result<AccessChange, Error> {
    let holders = current_holders(layers);
    let mut remaining = holders.clone();
    let mut lost: BTreeMap<Holder, usize> = BTreeMap::new();
    let mut change = AccessChange::default();
    // Removals first: a removed recipient is reported as losing access even when a kept one has the same name
    // (two JWE keys without `kid` and of one algorithm).
    for spec in remove {
        let identity = Identity::of(spec, gpg_homedir)?;
        if !holders.keys().any(|h| identity.matches(h)) {
            change.not_recipients.push(spec.to_string());
            continue;
        }
        for holder in identity.take_from(&mut remaining) {
            *lost.entry(holder).or_default() += 1;
        }
    }
    for spec in keep {
        let identity = Identity::of(spec, gpg_homedir)?;
        if identity.take_from(&mut remaining).is_empty() {
            change.gains.push(spec.to_string());
        } else {
            change.keeps.push(spec.to_string());
        }
    }
    for (holder, count) in remaining {
        *lost.entry(holder).or_default() += count;
    }
    change.loses = lost.into_iter().collect();
    Ok(change)
}

/// Each recipient of the encrypted layers, with the most wrapped keys it holds in one layer.
fn current_holders(layers: &[super::inspect::LayerInfo]) -> BTreeMap<Holder, usize> {
    let mut holders = BTreeMap::new();
    for layer in layers.iter().filter(|l| l.encrypted) {
        let mut in_layer: BTreeMap<Holder, usize> = BTreeMap::new();
        for scheme in &layer.schemes {
            let names = if scheme.recipients.is_empty() { vec![String::new()] } else { scheme.recipients.clone() };
            for name in names {
                *in_layer.entry(Holder { scheme: scheme.scheme.clone(), name }).or_default() += 1;
            }
        }
        for (holder, count) in in_layer {
            let most = holders.entry(holder).or_default();
            *most = count.max(*most);
        }
    }
    holders
}

/// What a recipient spec's wrapped keys are named by.
enum Identity {
    /// One of these names under this scheme.
    Names { scheme: String, names: Vec<String> },
    /// Anything under this scheme (a key provider).
    Scheme(String),
}

impl Identity {
    fn of(spec: &RecipientSpec, gpg_homedir: Option<&Path>) -> Result<Self, Error> {
        let names = |scheme: &str, names: Vec<String>| Self::Names { scheme: scheme.into(), names };
        Ok(match spec {
            RecipientSpec::Jwe(path) => {
                let key = keys::parse_public_key(&read_key_file(path)?, &path.display().to_string())?;
                match &key.kid {
                    Some(kid) => names("jwe", vec![format!("kid {kid}")]),
                    None => names("jwe", vec![format!("{} (no key id)", jwe::recipient_alg(&key)?)]),
                }
            }
            RecipientSpec::Pkcs7(path) => {
                let cert = pkcs7::parse_certificate(&read_key_file(path)?, &path.display().to_string())?;
                names("pkcs7", vec![pkcs7::recipient_id(&cert)])
            }
            RecipientSpec::Pgp(name) => {
                let certs = if Path::new(name).is_file() {
                    pgp::parse_keyring(&read_key_file(Path::new(name))?, name)?
                } else {
                    pgp::recipients_from_gpg(gpg_homedir, std::slice::from_ref(name))?
                };
                let handles = certs.iter().flat_map(pgp::key_handles).map(|id| format!("key {id}")).collect();
                names("pgp", handles)
            }
            RecipientSpec::Provider { name, .. } => Self::Scheme(format!("provider.{name}")),
            RecipientSpec::Managed(key) => names(key_manager::SCHEME, vec![key.reference()]),
        })
    }

    fn matches(&self, holder: &Holder) -> bool {
        match self {
            Self::Names { scheme, names } => holder.scheme == *scheme && names.contains(&holder.name),
            Self::Scheme(scheme) => holder.scheme == *scheme,
        }
    }

    /// Takes what this recipient holds out of `holders`: one wrapped key of each matching name, or a provider's
    /// whole scheme. Returns the holders taken from.
    fn take_from(&self, holders: &mut BTreeMap<Holder, usize>) -> Vec<Holder> {
        let matched: Vec<Holder> = holders.keys().filter(|h| self.matches(h)).cloned().collect();
        for holder in &matched {
            let count = holders.get_mut(holder).expect("matched above");
            *count = if matches!(self, Self::Scheme(_)) { 0 } else { count.saturating_sub(1) };
            if *count == 0 {
                holders.remove(holder);
            }
        }
        matched
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ocicrypt::inspect::{LayerInfo, SchemeInfo};

    fn layer(schemes: &[(&str, &[&str])]) -> LayerInfo {
        LayerInfo {
            platform: None,
            index: 0,
            media_type: "application/vnd.oci.image.layer.v1.tar+gzip+encrypted".into(),
            size: 1,
            digest: "sha256:00".into(),
            diff_id: None,
            encrypted: true,
            cipher: None,
            schemes: schemes
                .iter()
                .map(|(scheme, names)| SchemeInfo {
                    scheme: (*scheme).into(),
                    wrapped_keys: names.len().max(1),
                    recipients: names.iter().map(|n| (*n).to_owned()).collect(),
                })
                .collect(),
            plaintext_annotations: Vec::new(),
        }
    }

    fn spec(text: &str) -> RecipientSpec {
        RecipientSpec::parse(text).unwrap()
    }

    #[test]
    fn keeps_loses_and_refuses_by_what_the_layers_name() {
        let layers = [layer(&[
            (key_manager::SCHEME, &["vault-transit://transit/a", "vault-transit://transit/b"]),
            ("provider.other", &[]),
            ("jwe", &["RSA-OAEP (no key id)", "RSA-OAEP (no key id)"]),
        ])];
        let change = access_change(
            &layers,
            &[spec("vault-transit://transit/a"), spec("vault-transit://transit/new")],
            &[spec("vault-transit://transit/b"), spec("provider:missing"), spec("vault-transit://transit/c")],
            None,
        )
        .unwrap();
        assert_eq!(change.keeps, ["vault-transit://transit/a"]);
        assert_eq!(change.gains, ["vault-transit://transit/new"]);
        assert_eq!(change.not_recipients, ["provider:missing", "vault-transit://transit/c"]);
        let loses: Vec<String> = change.loses.iter().map(|(h, n)| format!("{h} x{n}")).collect();
        assert_eq!(
            loses,
            ["jwe RSA-OAEP (no key id) x2", "provider.cryptadm vault-transit://transit/b x1", "provider.other x1"]
        );
        // A provider named as a recipient keeps its whole scheme.
        let change = access_change(&layers, &[spec("provider:other")], &[], None).unwrap();
        assert_eq!(change.keeps, ["provider:other"]);
        assert!(!change.loses.iter().any(|(h, _)| h.scheme == "provider.other"));
    }

    #[test]
    fn a_removed_jwe_key_without_kid_is_lost_even_when_a_kept_one_has_its_algorithm() {
        let key = |name: &str| format!("jwe:{}/tests/fixtures/keys/{name}", env!("CARGO_MANIFEST_DIR"));
        let layers = [layer(&[("jwe", &["ECDH-ES+A256KW (no key id)", "kid p256-test-kid"])])];
        let change =
            access_change(&layers, &[spec(&key("p384.pub.pem"))], &[spec(&key("p256.pub.pem"))], None).unwrap();
        let loses: Vec<String> = change.loses.iter().map(|(h, n)| format!("{h} x{n}")).collect();
        assert_eq!(loses, ["jwe ECDH-ES+A256KW (no key id) x1", "jwe kid p256-test-kid x1"]);
        assert_eq!(change.gains, [key("p384.pub.pem")]);
        // A JWK's `kid` names exactly one recipient.
        let change = access_change(&layers, &[spec(&key("p256.pub-kid.jwk"))], &[], None).unwrap();
        assert_eq!(change.keeps, [key("p256.pub-kid.jwk")]);
        assert_eq!(change.loses.len(), 1, "{:?}", change.loses);
    }
}
