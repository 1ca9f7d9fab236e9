//! Every environment variable cryptadm reads, declared once with what it means, and [`var_os`], the one function
//! that reads them (clippy's `disallowed-methods` keeps every other place from `std::env`).

/// Path of a file holding the passphrase (same as `--passphrase-file`).
pub const CRYPTADM_PASSPHRASE_FILE: &str = "CRYPTADM_PASSPHRASE_FILE";
/// The passphrase itself. For pipelines whose secret store exports variables; prefer a file.
pub const CRYPTADM_PASSPHRASE: &str = "CRYPTADM_PASSPHRASE";
/// Overall deadline in seconds of a command's network work (same as `--timeout`).
pub const CRYPTADM_TIMEOUT: &str = "CRYPTADM_TIMEOUT";
/// Directories searched for provider plugins, before the system plugin directories.
pub const PATH: &str = "PATH";
/// The TPM of clevis `tpm2` pins: a device path or a TCTI string (same as `--tpm2-device`).
pub const CRYPTADM_TPM2_DEVICE: &str = "CRYPTADM_TPM2_DEVICE";
/// tpm2-tools' TCTI string, honoured when neither `--tpm2-device` nor CRYPTADM_TPM2_DEVICE is given.
pub const TPM2TOOLS_TCTI: &str = "TPM2TOOLS_TCTI";
/// ocicrypt's key-provider configuration file (JSON), read by the image commands.
pub const OCICRYPT_KEYPROVIDER_CONFIG: &str = "OCICRYPT_KEYPROVIDER_CONFIG";
/// Where gpg keeps its keyring (pgp: recipients).
pub const GNUPGHOME: &str = "GNUPGHOME";
/// Registry passwords of `--src-creds`, `--dest-creds` and `--creds` (files, or the value itself).
pub const CRYPTADM_SRC_PASSWORD_FILE: &str = "CRYPTADM_SRC_PASSWORD_FILE";
/// The `--src-creds` password itself.
pub const CRYPTADM_SRC_PASSWORD: &str = "CRYPTADM_SRC_PASSWORD";
/// File holding the `--dest-creds` password.
pub const CRYPTADM_DEST_PASSWORD_FILE: &str = "CRYPTADM_DEST_PASSWORD_FILE";
/// The `--dest-creds` password itself.
pub const CRYPTADM_DEST_PASSWORD: &str = "CRYPTADM_DEST_PASSWORD";
/// File holding the `--creds` password of `image authorize`.
pub const CRYPTADM_REGISTRY_PASSWORD_FILE: &str = "CRYPTADM_REGISTRY_PASSWORD_FILE";
/// The `--creds` password itself.
pub const CRYPTADM_REGISTRY_PASSWORD: &str = "CRYPTADM_REGISTRY_PASSWORD";
/// podman's auth file (registry credentials).
pub const REGISTRY_AUTH_FILE: &str = "REGISTRY_AUTH_FILE";
/// Where podman keeps `containers/auth.json` by default.
pub const XDG_RUNTIME_DIR: &str = "XDG_RUNTIME_DIR";
/// docker's configuration directory (`config.json`: registry credentials).
pub const DOCKER_CONFIG: &str = "DOCKER_CONFIG";
/// The home directory (`~/.docker/config.json`, `~/.config/containers/auth.json`).
pub const HOME: &str = "HOME";
/// Run-time directory of `volume rotate`/`volume serve`: lock files per volume id go to `<dir>/volume-locks`.
pub const CRYPTADM_RUN_DIR: &str = "CRYPTADM_RUN_DIR";
/// Test builds with the `fault-injection` feature only: the rotation (or `volume rewrap` of a file:// store, or
/// `disk tpm2-enroll`/`disk clevis-bind` header write) step after which the process aborts.
pub const CRYPTADM_FAULT_POINT: &str = "CRYPTADM_FAULT_POINT";
/// Test builds with the `fault-injection` feature only: instead of aborting at CRYPTADM_FAULT_POINT, wait there
/// until this file exists.
pub const CRYPTADM_FAULT_WAIT: &str = "CRYPTADM_FAULT_WAIT";
/// containerd's stream processors: the media type of the layer on standard input (`image stream-decrypt`).
pub const STREAM_PROCESSOR_MEDIATYPE: &str = "STREAM_PROCESSOR_MEDIATYPE";
/// AWS access key id (with AWS_SECRET_ACCESS_KEY): the first credentials the AWS client looks for.
pub const AWS_ACCESS_KEY_ID: &str = "AWS_ACCESS_KEY_ID";
/// AWS secret access key (never passed to a child).
pub const AWS_SECRET_ACCESS_KEY: &str = "AWS_SECRET_ACCESS_KEY";
/// AWS session token of temporary keys (never passed to a child).
pub const AWS_SESSION_TOKEN: &str = "AWS_SESSION_TOKEN";
/// Profile of the AWS shared files (`--aws-profile` wins).
pub const AWS_PROFILE: &str = "AWS_PROFILE";
/// The AWS credentials file instead of `~/.aws/credentials`.
pub const AWS_SHARED_CREDENTIALS_FILE: &str = "AWS_SHARED_CREDENTIALS_FILE";
/// The AWS config file instead of `~/.aws/config`.
pub const AWS_CONFIG_FILE: &str = "AWS_CONFIG_FILE";
/// Role assumed with a web identity token (with AWS_WEB_IDENTITY_TOKEN_FILE).
pub const AWS_ROLE_ARN: &str = "AWS_ROLE_ARN";
/// File of the web identity token (EKS IRSA), read again at each refresh.
pub const AWS_WEB_IDENTITY_TOKEN_FILE: &str = "AWS_WEB_IDENTITY_TOKEN_FILE";
/// Session name of the web identity role.
pub const AWS_ROLE_SESSION_NAME: &str = "AWS_ROLE_SESSION_NAME";
/// Base URL of the EC2 instance metadata service.
pub const AWS_EC2_METADATA_SERVICE_ENDPOINT: &str = "AWS_EC2_METADATA_SERVICE_ENDPOINT";
/// `true`: never ask the EC2 instance metadata service.
pub const AWS_EC2_METADATA_DISABLED: &str = "AWS_EC2_METADATA_DISABLED";
/// AWS region (`--aws-region` wins).
pub const AWS_REGION: &str = "AWS_REGION";
/// AWS region when AWS_REGION is not set.
pub const AWS_DEFAULT_REGION: &str = "AWS_DEFAULT_REGION";
/// Endpoint of every AWS service.
pub const AWS_ENDPOINT_URL: &str = "AWS_ENDPOINT_URL";
/// Endpoint of AWS KMS (wins over AWS_ENDPOINT_URL).
pub const AWS_ENDPOINT_URL_KMS: &str = "AWS_ENDPOINT_URL_KMS";
/// Endpoint of S3 or an S3-compatible server (path-style requests).
pub const AWS_ENDPOINT_URL_S3: &str = "AWS_ENDPOINT_URL_S3";
/// Endpoint of AWS Secrets Manager.
pub const AWS_ENDPOINT_URL_SECRETS_MANAGER: &str = "AWS_ENDPOINT_URL_SECRETS_MANAGER";
/// Endpoint of AWS SSM Parameter Store.
pub const AWS_ENDPOINT_URL_SSM: &str = "AWS_ENDPOINT_URL_SSM";
/// Endpoint of AWS STS (web identity).
pub const AWS_ENDPOINT_URL_STS: &str = "AWS_ENDPOINT_URL_STS";
/// PEM CA bundle trusted for AWS endpoints (`--aws-ca-bundle` wins).
pub const AWS_CA_BUNDLE: &str = "AWS_CA_BUNDLE";
/// `true`: AWS FIPS endpoints (`kms-fips.REGION.…`); wins over the profile's `use_fips_endpoint`.
pub const AWS_USE_FIPS_ENDPOINT: &str = "AWS_USE_FIPS_ENDPOINT";
/// `true`: AWS dual-stack endpoints (`kms.REGION.api.aws`); wins over the profile's `use_dualstack_endpoint`.
pub const AWS_USE_DUALSTACK_ENDPOINT: &str = "AWS_USE_DUALSTACK_ENDPOINT";
/// The container credential endpoint's full URL (ECS tasks, EKS Pod Identity).
pub const AWS_CONTAINER_CREDENTIALS_FULL_URI: &str = "AWS_CONTAINER_CREDENTIALS_FULL_URI";
/// The container credential endpoint's path on 169.254.170.2 (ECS task roles).
pub const AWS_CONTAINER_CREDENTIALS_RELATIVE_URI: &str = "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI";
/// The authorization token of the container credential endpoint (a secret).
pub const AWS_CONTAINER_AUTHORIZATION_TOKEN: &str = "AWS_CONTAINER_AUTHORIZATION_TOKEN";
/// A file holding that token, read again at each refresh (EKS Pod Identity's projected token); wins over the variable.
pub const AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE: &str = "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE";
/// OpenBao/Vault server address (the Vault CLI's variable; `--vault-addr` wins).
pub const VAULT_ADDR: &str = "VAULT_ADDR";
/// OpenBao's name for [`VAULT_ADDR`], read when that is not set.
pub const BAO_ADDR: &str = "BAO_ADDR";
/// The Vault token (never passed to a child).
pub const VAULT_TOKEN: &str = "VAULT_TOKEN";
/// OpenBao's name for [`VAULT_TOKEN`].
pub const BAO_TOKEN: &str = "BAO_TOKEN";
/// The Vault namespace.
pub const VAULT_NAMESPACE: &str = "VAULT_NAMESPACE";
/// OpenBao's name for [`VAULT_NAMESPACE`].
pub const BAO_NAMESPACE: &str = "BAO_NAMESPACE";
/// PEM file of the CA of the Vault server.
pub const VAULT_CACERT: &str = "VAULT_CACERT";
/// OpenBao's name for [`VAULT_CACERT`].
pub const BAO_CACERT: &str = "BAO_CACERT";
/// Directory of PEM CA certificates for the Vault server.
pub const VAULT_CAPATH: &str = "VAULT_CAPATH";
/// OpenBao's name for [`VAULT_CAPATH`].
pub const BAO_CAPATH: &str = "BAO_CAPATH";
/// Client certificate for the Vault server.
pub const VAULT_CLIENT_CERT: &str = "VAULT_CLIENT_CERT";
/// OpenBao's name for [`VAULT_CLIENT_CERT`].
pub const BAO_CLIENT_CERT: &str = "BAO_CLIENT_CERT";
/// Key of the client certificate.
pub const VAULT_CLIENT_KEY: &str = "VAULT_CLIENT_KEY";
/// OpenBao's name for [`VAULT_CLIENT_KEY`].
pub const BAO_CLIENT_KEY: &str = "BAO_CLIENT_KEY";
/// Refused unless `--vault-skip-verify` is given too.
pub const VAULT_SKIP_VERIFY: &str = "VAULT_SKIP_VERIFY";
/// OpenBao's name for [`VAULT_SKIP_VERIFY`].
pub const BAO_SKIP_VERIFY: &str = "BAO_SKIP_VERIFY";
/// The Vault login method for runs without flags (`--vault-auth`).
pub const CRYPTADM_VAULT_AUTH: &str = "CRYPTADM_VAULT_AUTH";
/// The auth method's mount path (`--vault-auth-mount`).
pub const CRYPTADM_VAULT_AUTH_MOUNT: &str = "CRYPTADM_VAULT_AUTH_MOUNT";
/// The login role (`--vault-role`).
pub const CRYPTADM_VAULT_ROLE: &str = "CRYPTADM_VAULT_ROLE";
/// The AppRole role id (`--vault-role-id`).
pub const CRYPTADM_VAULT_ROLE_ID: &str = "CRYPTADM_VAULT_ROLE_ID";
/// File holding the AppRole secret id (`--vault-secret-id-file`).
pub const CRYPTADM_VAULT_SECRET_ID_FILE: &str = "CRYPTADM_VAULT_SECRET_ID_FILE";
/// File holding the login JWT (`--vault-jwt-file`).
pub const CRYPTADM_VAULT_JWT_FILE: &str = "CRYPTADM_VAULT_JWT_FILE";
/// The KMIP server, HOST:PORT (`--kmip-server`).
pub const CRYPTADM_KMIP_SERVER: &str = "CRYPTADM_KMIP_SERVER";
/// PEM file of the KMIP server's CA (`--kmip-cacert`).
pub const CRYPTADM_KMIP_CACERT: &str = "CRYPTADM_KMIP_CACERT";
/// PEM client certificate for the KMIP server (`--kmip-client-cert`).
pub const CRYPTADM_KMIP_CLIENT_CERT: &str = "CRYPTADM_KMIP_CLIENT_CERT";
/// PEM key of the KMIP client certificate (`--kmip-client-key`).
pub const CRYPTADM_KMIP_CLIENT_KEY: &str = "CRYPTADM_KMIP_CLIENT_KEY";
/// Username of a KMIP credential (`--kmip-username`).
pub const CRYPTADM_KMIP_USERNAME: &str = "CRYPTADM_KMIP_USERNAME";
/// File holding the KMIP credential's password (`--kmip-password-file`).
pub const CRYPTADM_KMIP_PASSWORD_FILE: &str = "CRYPTADM_KMIP_PASSWORD_FILE";
/// The KMIP credential's password (a secret).
pub const CRYPTADM_KMIP_PASSWORD: &str = "CRYPTADM_KMIP_PASSWORD";
/// Any non-empty value turns colour off (unless `--color always`).
pub const NO_COLOR: &str = "NO_COLOR";
/// The proxy of every `https://` request (also `https_proxy`): key managers, AWS, registries, RemoteConfig.
pub const HTTPS_PROXY: &str = "HTTPS_PROXY";
/// The proxy of every plain `http://` request (also `http_proxy`).
pub const HTTP_PROXY: &str = "HTTP_PROXY";
/// Hosts reached without the proxy (also `no_proxy`): domains, `.suffixes`, IPs, CIDRs, `*`.
pub const NO_PROXY: &str = "NO_PROXY";
/// The cloud of `clouds.yaml` to use (same as `--os-cloud`, which wins).
pub const OS_CLOUD: &str = "OS_CLOUD";
/// A `clouds.yaml` to read before `./clouds.yaml`, `~/.config/openstack/` and `/etc/openstack/`.
pub const OS_CLIENT_CONFIG_FILE: &str = "OS_CLIENT_CONFIG_FILE";
/// Keystone's URL.
pub const OS_AUTH_URL: &str = "OS_AUTH_URL";
/// `password`, `v3applicationcredential` or `token` (`v3token`); guessed from what is set when absent.
pub const OS_AUTH_TYPE: &str = "OS_AUTH_TYPE";
/// The user's name.
pub const OS_USERNAME: &str = "OS_USERNAME";
/// The user's id.
pub const OS_USER_ID: &str = "OS_USER_ID";
/// The user's password (a secret).
pub const OS_PASSWORD: &str = "OS_PASSWORD";
/// The project's name.
pub const OS_PROJECT_NAME: &str = "OS_PROJECT_NAME";
/// The project's id.
pub const OS_PROJECT_ID: &str = "OS_PROJECT_ID";
/// The user's domain name.
pub const OS_USER_DOMAIN_NAME: &str = "OS_USER_DOMAIN_NAME";
/// The user's domain id.
pub const OS_USER_DOMAIN_ID: &str = "OS_USER_DOMAIN_ID";
/// The project's domain name.
pub const OS_PROJECT_DOMAIN_NAME: &str = "OS_PROJECT_DOMAIN_NAME";
/// The project's domain id.
pub const OS_PROJECT_DOMAIN_ID: &str = "OS_PROJECT_DOMAIN_ID";
/// An application credential's id.
pub const OS_APPLICATION_CREDENTIAL_ID: &str = "OS_APPLICATION_CREDENTIAL_ID";
/// An application credential's name (with the user).
pub const OS_APPLICATION_CREDENTIAL_NAME: &str = "OS_APPLICATION_CREDENTIAL_NAME";
/// An application credential's secret (a secret).
pub const OS_APPLICATION_CREDENTIAL_SECRET: &str = "OS_APPLICATION_CREDENTIAL_SECRET";
/// A pre-issued Keystone token (a secret).
pub const OS_TOKEN: &str = "OS_TOKEN";
/// The region whose endpoints are used.
pub const OS_REGION_NAME: &str = "OS_REGION_NAME";
/// `public`, `internal` or `admin` endpoints.
pub const OS_INTERFACE: &str = "OS_INTERFACE";
/// A PEM CA bundle trusted for Keystone and the services.
pub const OS_CACERT: &str = "OS_CACERT";
/// Barbican's URL instead of the catalog's.
pub const OS_KEY_MANAGER_ENDPOINT_OVERRIDE: &str = "OS_KEY_MANAGER_ENDPOINT_OVERRIDE";
/// Glance's URL instead of the catalog's.
pub const OS_IMAGE_ENDPOINT_OVERRIDE: &str = "OS_IMAGE_ENDPOINT_OVERRIDE";
/// Prefix of the variables passed on to remote-configuration plugins besides [`REMOTE_PLUGIN_ENV`].
pub const MACHINEADM_PREFIX: &str = "MACHINEADM_";
/// The variables a remote-configuration plugin gets (when set), besides those starting with
/// [`MACHINEADM_PREFIX`]; nothing else of cryptadm's environment (passphrases, registry passwords) reaches it.
pub const REMOTE_PLUGIN_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TMPDIR",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
];

/// (name, meaning) for the man pages' ENVIRONMENT section.
pub const DOCUMENTED: &[(&str, &str)] = &[
    (
        CRYPTADM_PASSPHRASE_FILE,
        "Path of a file holding the passphrase, byte for byte (`-`: standard input). Same as --passphrase-file, which wins over it.",
    ),
    (
        CRYPTADM_PASSPHRASE,
        "The passphrase itself, used when neither --passphrase-file nor CRYPTADM_PASSPHRASE_FILE is given. Its value is never printed; prefer a file, which does not show up in /proc/PID/environ.",
    ),
    (
        PATH,
        "Directories searched for provider plugins (machineadm-plugin-encryption-provider-NAME), before /usr/libexec/machineadm and /usr/local/libexec/machineadm, and for key-store plugins (cryptadm-plugin-kms-NAME).",
    ),
    (
        OCICRYPT_KEYPROVIDER_CONFIG,
        "Key-provider configuration of the image commands, in ocicrypt's JSON format ({\"key-providers\": {NAME: {\"cmd\": {\"path\": …, \"args\": […]}}}}, or {\"grpc\": \"HOST:PORT\" | \"unix:///PATH\"} for a keyprovider.KeyProviderService); a missing file means no providers.",
    ),
    (GNUPGHOME, "GnuPG home directory where pgp: recipients are looked up, unless --gpg-homedir is given."),
    (
        CRYPTADM_SRC_PASSWORD_FILE,
        "Path of a file holding the source registry password of --src-creds (`-`: standard input; one trailing newline is dropped). Same as --src-password-file, which wins over it.",
    ),
    (CRYPTADM_SRC_PASSWORD, "The source registry password of --src-creds itself, when no password file is given."),
    (
        CRYPTADM_DEST_PASSWORD_FILE,
        "Path of a file holding the destination registry password of --dest-creds. Same as --dest-password-file, which wins over it.",
    ),
    (
        CRYPTADM_DEST_PASSWORD,
        "The destination registry password of --dest-creds itself, when no password file is given.",
    ),
    (
        CRYPTADM_REGISTRY_PASSWORD_FILE,
        "Path of a file holding the registry password of `image authorize --creds`. Same as --password-file, which wins over it.",
    ),
    (
        CRYPTADM_REGISTRY_PASSWORD,
        "The registry password of `image authorize --creds` itself, when no password file is given.",
    ),
    (
        REGISTRY_AUTH_FILE,
        "podman's auth file, read for registry credentials when no --creds or --authfile is given (instead of $XDG_RUNTIME_DIR/containers/auth.json and ~/.config/containers/auth.json); then docker's config.json.",
    ),
    (XDG_RUNTIME_DIR, "Where podman's containers/auth.json is looked for when REGISTRY_AUTH_FILE is not set."),
    (
        DOCKER_CONFIG,
        "docker's configuration directory: its config.json (auths, credHelpers, credsStore) gives registry credentials (default ~/.docker).",
    ),
    (HOME, "Home directory: ~/.config/containers/auth.json and ~/.docker/config.json hold registry credentials."),
    (
        CRYPTADM_RUN_DIR,
        "Run-time directory of the volume commands (default /run/cryptadm); the lock file of each volume id is <dir>/volume-locks/<volume-id>.lock.",
    ),
    (
        STREAM_PROCESSOR_MEDIATYPE,
        "Set by containerd for its stream processors: the media type of the layer `image stream-decrypt` reads (a zstd layer is decompressed; others are written as they decrypt). Without it, the payload's descriptor says.",
    ),
    (
        "AWS_PROFILE, AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE, AWS_ROLE_ARN, AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_SESSION_NAME, AWS_CONTAINER_CREDENTIALS_RELATIVE_URI, AWS_CONTAINER_CREDENTIALS_FULL_URI, AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE, AWS_CONTAINER_AUTHORIZATION_TOKEN, AWS_EC2_METADATA_SERVICE_ENDPOINT, AWS_EC2_METADATA_DISABLED",
        "AWS credentials, found in the AWS CLI's order: the access key variables; the profile (AWS_PROFILE or default) in the shared credentials and config files (0600 when they hold keys): an assumed role (role_arn with web_identity_token_file, source_profile or credential_source, through STS AssumeRole), its keys, or credential_process; web identity through STS (the token file read again at each refresh); the container credential endpoint (EKS Pod Identity, ECS task roles; the token file read again at each refresh); the EC2 instance metadata service (IMDSv2) unless disabled. A renewal that fails keeps credentials until they expire (-v says so). See docs/aws.md.",
    ),
    (
        AWS_ACCESS_KEY_ID,
        "The AWS access key id, with AWS_SECRET_ACCESS_KEY. Not passed to a child process either: half a key pair \
         would stop a child's own credential chain (its profile, web identity or instance profile).",
    ),
    (AWS_SECRET_ACCESS_KEY, "The AWS secret access key, with AWS_ACCESS_KEY_ID. Never passed to a child process."),
    (AWS_SESSION_TOKEN, "The session token of temporary AWS keys. Never passed to a child process."),
    (
        "AWS_REGION, AWS_DEFAULT_REGION",
        "AWS region of requests whose resource is not an ARN (--aws-region wins; then the profile's region, then the instance's).",
    ),
    (
        "AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_KMS, AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL_SECRETS_MANAGER, AWS_ENDPOINT_URL_SSM, AWS_ENDPOINT_URL_STS",
        "AWS endpoints (a service's own variable wins over AWS_ENDPOINT_URL; --aws-endpoint-url wins over both). S3 on a custom endpoint is reached path-style.",
    ),
    (AWS_CA_BUNDLE, "PEM CA bundle trusted for AWS endpoints besides the system roots (--aws-ca-bundle wins)."),
    (
        "AWS_USE_FIPS_ENDPOINT, AWS_USE_DUALSTACK_ENDPOINT",
        "`true`: AWS's FIPS (kms-fips.REGION…) or dual-stack (kms.REGION.api.aws) endpoints, as the SDKs build them; they win over the profile's use_fips_endpoint and use_dualstack_endpoint. Endpoints are in the partition of the region or the ARN (cn-* regions: amazonaws.com.cn; GovCloud; the ISO partitions).",
    ),
    (
        VAULT_ADDR,
        "OpenBao/Vault server address for vault-transit:// and vault-kv:// references (BAO_ADDR when unset; --vault-addr wins).",
    ),
    (BAO_ADDR, "OpenBao's name for VAULT_ADDR."),
    (
        VAULT_TOKEN,
        "The Vault token (BAO_TOKEN when unset) when --vault-auth is token (the default) and no --vault-token-file is given; else ~/.vault-token (0600). Never passed to a child process.",
    ),
    (BAO_TOKEN, "OpenBao's name for VAULT_TOKEN. Never passed to a child process."),
    (VAULT_NAMESPACE, "Vault namespace, sent as X-Vault-Namespace (BAO_NAMESPACE when unset; --vault-namespace wins)."),
    (BAO_NAMESPACE, "OpenBao's name for VAULT_NAMESPACE."),
    (VAULT_CACERT, "PEM file of the CA that signed the Vault server's certificate (BAO_CACERT when unset)."),
    (BAO_CACERT, "OpenBao's name for VAULT_CACERT."),
    (VAULT_CAPATH, "Directory of PEM CA certificates for the Vault server (BAO_CAPATH when unset)."),
    (BAO_CAPATH, "OpenBao's name for VAULT_CAPATH."),
    (VAULT_CLIENT_CERT, "PEM client certificate for TLS client authentication to Vault (with VAULT_CLIENT_KEY)."),
    (BAO_CLIENT_CERT, "OpenBao's name for VAULT_CLIENT_CERT."),
    (VAULT_CLIENT_KEY, "PEM key of VAULT_CLIENT_CERT."),
    (BAO_CLIENT_KEY, "OpenBao's name for VAULT_CLIENT_KEY."),
    (
        VAULT_SKIP_VERIFY,
        "Refused (exit 2) unless --vault-skip-verify is given: cryptadm verifies the Vault server's certificate unless told on the command line.",
    ),
    (BAO_SKIP_VERIFY, "OpenBao's name for VAULT_SKIP_VERIFY; refused the same way."),
    (
        CRYPTADM_VAULT_AUTH,
        "Vault login method when --vault-auth is not given: token, approle, jwt or kubernetes (for runs without flags, e.g. `bootstrap open` from cloud-init or Ignition).",
    ),
    (CRYPTADM_VAULT_AUTH_MOUNT, "Mount path of the Vault auth method (--vault-auth-mount)."),
    (CRYPTADM_VAULT_ROLE, "Vault login role for jwt and kubernetes (--vault-role)."),
    (CRYPTADM_VAULT_ROLE_ID, "AppRole role id (--vault-role-id)."),
    (CRYPTADM_VAULT_SECRET_ID_FILE, "File holding the AppRole secret id, 0600 (--vault-secret-id-file)."),
    (CRYPTADM_VAULT_JWT_FILE, "File holding the JWT of a jwt or kubernetes login, 0600 (--vault-jwt-file)."),
    (CRYPTADM_KMIP_SERVER, "KMIP server for kmip:// references, HOST:PORT (--kmip-server wins)."),
    (CRYPTADM_KMIP_CACERT, "PEM file of the CA that signed the KMIP server's certificate (--kmip-cacert)."),
    (CRYPTADM_KMIP_CLIENT_CERT, "PEM client certificate for TLS client authentication to KMIP (--kmip-client-cert)."),
    (CRYPTADM_KMIP_CLIENT_KEY, "PEM key of CRYPTADM_KMIP_CLIENT_CERT (--kmip-client-key)."),
    (CRYPTADM_KMIP_USERNAME, "Username of a KMIP Username and Password credential (--kmip-username)."),
    (
        CRYPTADM_KMIP_PASSWORD_FILE,
        "File holding the KMIP credential's password (--kmip-password-file). Never passed to child processes.",
    ),
    (CRYPTADM_KMIP_PASSWORD, "The KMIP credential's password, when no file is given. Never passed to child processes."),
    (
        CRYPTADM_TIMEOUT,
        "Overall deadline in seconds of a command's network work (key managers, Tang servers, registries, RemoteConfig fetches), as --timeout, which wins over it; when it passes, the command ends with exit status 4. `bootstrap open` defaults to 120; `volume serve` and `image keyprovider` ignore it.",
    ),
    (
        CRYPTADM_TPM2_DEVICE,
        "The TPM of clevis tpm2 pins (default /dev/tpmrm0): a device path, or a TCTI string as tpm2-tools take it (device:PATH, swtpm:host=H,port=P, mssim:host=H,port=P). --tpm2-device wins over it.",
    ),
    (
        TPM2TOOLS_TCTI,
        "tpm2-tools' TCTI string (as clevis's tpm2 pin uses it), honoured when neither --tpm2-device nor CRYPTADM_TPM2_DEVICE is given.",
    ),
    (NO_COLOR, "When set and not empty, no colour is used unless --color always is given."),
    (
        HTTPS_PROXY,
        "Proxy URL (or https_proxy) of every https:// request: AWS, Vault/OpenBao, Keystone/Barbican/Glance, Tang, registries and the built-in `https` RemoteConfig provider, tunnelled with CONNECT. Credentials in the URL are sent to the proxy only and never shown. KMIP (its own TLS protocol) never goes through a proxy.",
    ),
    (HTTP_PROXY, "Proxy URL (or http_proxy) of every plain http:// request, sent in absolute form."),
    (
        NO_PROXY,
        "Hosts reached without the proxy (or no_proxy), comma-separated: domains (example.com also matches its subdomains; .example.com the same), IP addresses, CIDR blocks (10.0.0.0/8) and * (no proxy at all).",
    ),
    (
        OS_CLOUD,
        "The cloud of clouds.yaml used by --key-manager barbican and --upload (same as --os-cloud, which wins). clouds.yaml is looked for in OS_CLIENT_CONFIG_FILE, ./clouds.yaml, ~/.config/openstack/ and /etc/openstack/, with secure.yaml beside it merged in.",
    ),
    (OS_CLIENT_CONFIG_FILE, "A clouds.yaml read before the usual places."),
    (
        "OS_AUTH_URL, OS_USERNAME, OS_USER_ID, OS_PROJECT_NAME, OS_PROJECT_ID, OS_USER_DOMAIN_NAME, OS_USER_DOMAIN_ID, OS_PROJECT_DOMAIN_NAME, OS_PROJECT_DOMAIN_ID, OS_AUTH_TYPE",
        "Keystone v3 login as openstackclient reads it; each one overrides the same setting of the --os-cloud cloud.",
    ),
    (OS_PASSWORD, "The Keystone password (overrides the cloud's). Never passed to child processes."),
    (
        "OS_APPLICATION_CREDENTIAL_ID, OS_APPLICATION_CREDENTIAL_NAME",
        "Log in with an application credential instead of a password.",
    ),
    (OS_APPLICATION_CREDENTIAL_SECRET, "The application credential's secret. Never passed to child processes."),
    (OS_TOKEN, "A pre-issued Keystone token (with OS_AUTH_URL); it is not renewed. Never passed to child processes."),
    (OS_REGION_NAME, "The region whose catalog endpoints are used."),
    (OS_INTERFACE, "public (default), internal or admin catalog endpoints."),
    (OS_CACERT, "A PEM CA bundle trusted for Keystone, Barbican and Glance (clouds.yaml: cacert)."),
    (
        "OS_KEY_MANAGER_ENDPOINT_OVERRIDE, OS_IMAGE_ENDPOINT_OVERRIDE",
        "Barbican's and Glance's URLs instead of the catalog's (clouds.yaml: key_manager_endpoint_override, image_endpoint_override).",
    ),
    (
        "MACHINEADM_*",
        "Variables whose names start with MACHINEADM_ are passed to remote-configuration plugins, with PATH, HOME, LANG, LC_ALL, LC_CTYPE, TZ, TMPDIR and the proxy variables; no other variable reaches them.",
    ),
];

/// The variables whose names start with `prefix`, with their values.
#[allow(clippy::disallowed_methods)] // the one sanctioned reader; see clippy.toml
pub fn vars_with_prefix(prefix: &str) -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
    std::env::vars_os().filter(|(name, _)| name.to_str().is_some_and(|n| n.starts_with(prefix))).collect()
}

/// Reads a variable of the environment: the only place cryptadm does.
#[allow(clippy::disallowed_methods)] // the one sanctioned reader; see clippy.toml
pub fn var_os(name: &str) -> Option<std::ffi::OsString> {
    std::env::var_os(name)
}

/// The directories of `PATH`, in order, where plugins and helpers named without a `/` are looked up (none when
/// it is unset). Empty and relative entries are kept: the lookup refuses what it finds through them.
pub fn path_dirs() -> Vec<std::path::PathBuf> {
    var_os(PATH).map(|p| std::env::split_paths(&p).collect()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every variable that carries a secret (or names the file holding one) is kept from child processes.
    #[test]
    fn secret_variables_are_scrubbed_from_children() {
        let secret =
            |name: &str| name.starts_with("CRYPTADM_") && (name.contains("PASSPHRASE") || name.contains("PASSWORD"));
        let declared: Vec<&str> = DOCUMENTED.iter().map(|(name, _)| *name).filter(|name| secret(name)).collect();
        assert!(declared.len() >= 8, "{declared:?}");
        for name in declared {
            assert!(crate::process::SCRUBBED_VARIABLES.contains(&name), "{name} would reach plugins");
        }
        for name in crate::process::SCRUBBED_VARIABLES {
            assert!(DOCUMENTED.iter().any(|(d, _)| d == name), "{name} is not a declared variable");
        }
    }
}
