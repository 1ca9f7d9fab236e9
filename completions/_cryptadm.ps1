
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'cryptadm' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'cryptadm'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'cryptadm' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Overall deadline of the command''s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('bootstrap', 'bootstrap', [CompletionResultType]::ParameterValue, 'Seal and open Cluster API machineadm bootstrap configurations (EncryptedConfig)')
            [CompletionResult]::new('image', 'image', [CompletionResultType]::ParameterValue, 'Encrypt, decrypt and authorize OCI images (containers/ocicrypt format)')
            [CompletionResult]::new('secret', 'secret', [CompletionResultType]::ParameterValue, 'Generate Kubernetes objects that carry image decryption keys')
            [CompletionResult]::new('disk', 'disk', [CompletionResultType]::ParameterValue, 'Format, inspect and decrypt LUKS2 and LUKS1 disk images and block devices')
            [CompletionResult]::new('volume', 'volume', [CompletionResultType]::ParameterValue, 'Rotate the passphrases of LUKS volumes (CSI-Addons EncryptionKeyRotation)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'cryptadm;bootstrap' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Overall deadline of the command''s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('seal', 'seal', [CompletionResultType]::ParameterValue, 'Encrypt a machine configuration into an EncryptedConfig document (or cloud-init userdata, or an Ignition config)')
            [CompletionResult]::new('open', 'open', [CompletionResultType]::ParameterValue, 'Decrypt a machineadm configuration stream back into the machine configuration')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'cryptadm;bootstrap;seal' {
            [CompletionResult]::new('--in', '--in', [CompletionResultType]::ParameterName, 'The machine configuration to seal (`-`: standard input); any bytes, usually a YAML stream')
            [CompletionResult]::new('--provider', '--provider', [CompletionResultType]::ParameterName, 'Provider that fetches the passphrase on the machine: `file`, `vault-transit`, `aws-kms`, `clevis` or `kmip` (built in) or the name of a plugin (machineadm-plugin-encryption-provider-NAME on PATH)')
            [CompletionResult]::new('--passphrase-uri', '--passphrase-uri', [CompletionResultType]::ParameterName, 'Where the provider finds the passphrase: file:///ABSOLUTE/PATH, vault-transit://MOUNT/KEY, aws-kms://ARN, arn:aws:kms:REGION:ACCOUNT:key/ID, …:alias/NAME, kmip://UID or NAME:REST; `clevis` records its own (clevis:<JWE>), plugins take their own URIs')
            [CompletionResult]::new('--clevis-pin', '--clevis-pin', [CompletionResultType]::ParameterName, 'Clevis pin to encrypt to: `tang` (one Tang server), `tpm2` (this machine''s TPM) or `sss` (a threshold of pins), as `clevis encrypt PIN`')
            [CompletionResult]::new('--clevis-config', '--clevis-config', [CompletionResultType]::ParameterName, 'The pin''s configuration, the JSON `clevis encrypt` takes: `{"url":URL,"thp":THUMBPRINT}` for tang, `{"pcr_ids":"7","pcr_bank":"sha256"}` for tpm2 (also `hash`, `key` ecc|rsa, `pcr_digest`), `{"t":2,"pins":{"tang":[{"url":…},{"url":…}],"tpm2":{…}}}` for sss, whose pins may also be cryptadm''s key-manager pins `aws-kms`, `vault-transit` and `kmip`, each `[{"key":REFERENCE}]` (docs/threshold.md); `"adv"` may name an advertisement file')
            [CompletionResult]::new('--tpm2-device', '--tpm2-device', [CompletionResultType]::ParameterName, 'The TPM of `tpm2` pins: a device path or a TCTI string (`device:PATH`, `swtpm:host=H,port=P`, `mssim:host=H,port=P`); else TPM2TOOLS_TCTI, else /dev/tpmrm0')
            [CompletionResult]::new('--passphrase-file', '--passphrase-file', [CompletionResultType]::ParameterName, 'Read the passphrase from FILE (`-`: standard input), byte for byte: no newline is stripped')
            [CompletionResult]::new('--remote-config', '--remote-config', [CompletionResultType]::ParameterName, 'Put a RemoteConfig document before the EncryptedConfig (repeatable); built-in providers: file, https, s3, aws-secrets-manager, aws-ssm, capa-secrets-manager or capa-ssm-parameter-store, any other NAME is the plugin machineadm-remote-configuration-provider-NAME')
            [CompletionResult]::new('--cryptadm-path', '--cryptadm-path', [CompletionResultType]::ParameterName, 'Where --cloud-init and --ignition expect cryptadm on the machine: an absolute path of letters, digits and `/._-+`')
            [CompletionResult]::new('--template', '--template', [CompletionResultType]::ParameterName, 'Render this bootstrap template (variable `machine_config`, filters `base64`, `gzipBase64`)')
            [CompletionResult]::new('--out', '--out', [CompletionResultType]::ParameterName, 'Write to FILE (mode 0600, atomically) instead of standard output')
            [CompletionResult]::new('--output-format', '--output-format', [CompletionResultType]::ParameterName, 'Format of the printed documents')
            [CompletionResult]::new('--plugin-timeout', '--plugin-timeout', [CompletionResultType]::ParameterName, 'Seconds one run of a provider plugin may take before it is killed, and one request to a built-in key manager (Vault/OpenBao, AWS KMS, KMIP, a Tang server); each also ends by --timeout')
            [CompletionResult]::new('--retries', '--retries', [CompletionResultType]::ParameterName, 'How many times a failing provider plugin run, or a key-manager request that failed for a transient reason, is tried again (backoff doubling, at most 30 s); every retry and pause also ends by --timeout')
            [CompletionResult]::new('--vault-addr', '--vault-addr', [CompletionResultType]::ParameterName, 'Server address, e.g. https://vault:8200 [env: VAULT_ADDR, BAO_ADDR]')
            [CompletionResult]::new('--vault-namespace', '--vault-namespace', [CompletionResultType]::ParameterName, 'Namespace (X-Vault-Namespace) [env: VAULT_NAMESPACE, BAO_NAMESPACE]')
            [CompletionResult]::new('--vault-cacert', '--vault-cacert', [CompletionResultType]::ParameterName, 'PEM file of the CA that signed the server''s certificate [env: VAULT_CACERT, BAO_CACERT]')
            [CompletionResult]::new('--vault-capath', '--vault-capath', [CompletionResultType]::ParameterName, 'Directory of PEM CA certificates [env: VAULT_CAPATH, BAO_CAPATH]')
            [CompletionResult]::new('--vault-client-cert', '--vault-client-cert', [CompletionResultType]::ParameterName, 'PEM client certificate for TLS client authentication [env: VAULT_CLIENT_CERT]')
            [CompletionResult]::new('--vault-client-key', '--vault-client-key', [CompletionResultType]::ParameterName, 'PEM key of --vault-client-cert [env: VAULT_CLIENT_KEY]')
            [CompletionResult]::new('--vault-auth', '--vault-auth', [CompletionResultType]::ParameterName, 'How to log in [env: CRYPTADM_VAULT_AUTH] [default: token]')
            [CompletionResult]::new('--vault-auth-mount', '--vault-auth-mount', [CompletionResultType]::ParameterName, 'Mount path of the auth method [env: CRYPTADM_VAULT_AUTH_MOUNT] [default: approle, jwt or kubernetes]')
            [CompletionResult]::new('--vault-role', '--vault-role', [CompletionResultType]::ParameterName, 'Role to log in as (jwt, kubernetes) [env: CRYPTADM_VAULT_ROLE]')
            [CompletionResult]::new('--vault-role-id', '--vault-role-id', [CompletionResultType]::ParameterName, 'AppRole role id [env: CRYPTADM_VAULT_ROLE_ID]')
            [CompletionResult]::new('--vault-secret-id-file', '--vault-secret-id-file', [CompletionResultType]::ParameterName, 'File holding the AppRole secret id (0600) [env: CRYPTADM_VAULT_SECRET_ID_FILE]')
            [CompletionResult]::new('--vault-jwt-file', '--vault-jwt-file', [CompletionResultType]::ParameterName, 'File holding the JWT (0600; kubernetes default: the pod''s service-account token) [env: CRYPTADM_VAULT_JWT_FILE]')
            [CompletionResult]::new('--vault-token-file', '--vault-token-file', [CompletionResultType]::ParameterName, 'File holding a token (0600), instead of VAULT_TOKEN or ~/.vault-token')
            [CompletionResult]::new('--aws-region', '--aws-region', [CompletionResultType]::ParameterName, 'Region of requests whose resource is not an ARN [env: AWS_REGION, AWS_DEFAULT_REGION]')
            [CompletionResult]::new('--aws-endpoint-url', '--aws-endpoint-url', [CompletionResultType]::ParameterName, 'Endpoint of every AWS service, e.g. http://127.0.0.1:5000 (LocalStack, MinIO for S3) [env: AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL]')
            [CompletionResult]::new('--aws-profile', '--aws-profile', [CompletionResultType]::ParameterName, 'Profile of ~/.aws/config and ~/.aws/credentials [env: AWS_PROFILE] [default: default]')
            [CompletionResult]::new('--aws-ca-bundle', '--aws-ca-bundle', [CompletionResultType]::ParameterName, 'PEM bundle of CAs trusted for AWS endpoints besides the system roots [env: AWS_CA_BUNDLE]')
            [CompletionResult]::new('--kmip-server', '--kmip-server', [CompletionResultType]::ParameterName, 'KMIP server, HOST:PORT (5696 is KMIP''s port) [env: CRYPTADM_KMIP_SERVER]')
            [CompletionResult]::new('--kmip-cacert', '--kmip-cacert', [CompletionResultType]::ParameterName, 'PEM file of the CA that signed the KMIP server''s certificate [env: CRYPTADM_KMIP_CACERT]')
            [CompletionResult]::new('--kmip-client-cert', '--kmip-client-cert', [CompletionResultType]::ParameterName, 'PEM client certificate for TLS client authentication [env: CRYPTADM_KMIP_CLIENT_CERT]')
            [CompletionResult]::new('--kmip-client-key', '--kmip-client-key', [CompletionResultType]::ParameterName, 'PEM key of --kmip-client-cert [env: CRYPTADM_KMIP_CLIENT_KEY]')
            [CompletionResult]::new('--kmip-username', '--kmip-username', [CompletionResultType]::ParameterName, 'Username of a KMIP Username and Password credential [env: CRYPTADM_KMIP_USERNAME]')
            [CompletionResult]::new('--kmip-password-file', '--kmip-password-file', [CompletionResultType]::ParameterName, 'File holding the credential''s password [env: CRYPTADM_KMIP_PASSWORD_FILE, CRYPTADM_KMIP_PASSWORD]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Overall deadline of the command''s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]')
            [CompletionResult]::new('--clevis-trust-adv', '--clevis-trust-adv', [CompletionResultType]::ParameterName, 'Trust a Tang advertisement that no `thp` pins, as fetched (clevis encrypt''s `-y`); without it such a server is refused and its signing-key thumbprints are printed')
            [CompletionResult]::new('--cloud-init', '--cloud-init', [CompletionResultType]::ParameterName, 'Print #cloud-config userdata that writes the sealed stream (0600, /run/machineadm/machineadm_config.yaml) and runs `cryptadm bootstrap open` from runcmd')
            [CompletionResult]::new('--ignition', '--ignition', [CompletionResultType]::ParameterName, 'Print an Ignition config (spec 3.3.0) that writes the sealed stream (0600, /etc/machineadm/machineadm_config.yaml) and a oneshot unit, cryptadm-bootstrap-open.service, that runs `cryptadm bootstrap open` into /run/machineadm before kubeadm.service and kubelet.service, once per machine (a successful open leaves /var/lib/machineadm/bootstrap-opened, and later boots skip the unit)')
            [CompletionResult]::new('--vault-skip-verify', '--vault-skip-verify', [CompletionResultType]::ParameterName, 'Accept any server certificate (insecure; VAULT_SKIP_VERIFY alone is refused)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'cryptadm;bootstrap;open' {
            [CompletionResult]::new('--in', '--in', [CompletionResultType]::ParameterName, 'The sealed stream (`-`: standard input)')
            [CompletionResult]::new('--out', '--out', [CompletionResultType]::ParameterName, 'Where to write the decrypted configuration (`-`: standard output, refused when it is a terminal)')
            [CompletionResult]::new('--passphrase-file', '--passphrase-file', [CompletionResultType]::ParameterName, 'Read the passphrase from FILE (`-`: standard input), byte for byte: no newline is stripped')
            [CompletionResult]::new('--creates', '--creates', [CompletionResultType]::ParameterName, 'Do nothing and exit 0 when PATH exists')
            [CompletionResult]::new('--plugin-timeout', '--plugin-timeout', [CompletionResultType]::ParameterName, 'Seconds one run of a provider plugin may take before it is killed, and one request to a built-in key manager (Vault/OpenBao, AWS KMS, KMIP, a Tang server); each also ends by --timeout')
            [CompletionResult]::new('--retries', '--retries', [CompletionResultType]::ParameterName, 'How many times a failing provider plugin run, or a key-manager request that failed for a transient reason, is tried again (backoff doubling, at most 30 s); every retry and pause also ends by --timeout')
            [CompletionResult]::new('--vault-addr', '--vault-addr', [CompletionResultType]::ParameterName, 'Server address, e.g. https://vault:8200 [env: VAULT_ADDR, BAO_ADDR]')
            [CompletionResult]::new('--vault-namespace', '--vault-namespace', [CompletionResultType]::ParameterName, 'Namespace (X-Vault-Namespace) [env: VAULT_NAMESPACE, BAO_NAMESPACE]')
            [CompletionResult]::new('--vault-cacert', '--vault-cacert', [CompletionResultType]::ParameterName, 'PEM file of the CA that signed the server''s certificate [env: VAULT_CACERT, BAO_CACERT]')
            [CompletionResult]::new('--vault-capath', '--vault-capath', [CompletionResultType]::ParameterName, 'Directory of PEM CA certificates [env: VAULT_CAPATH, BAO_CAPATH]')
            [CompletionResult]::new('--vault-client-cert', '--vault-client-cert', [CompletionResultType]::ParameterName, 'PEM client certificate for TLS client authentication [env: VAULT_CLIENT_CERT]')
            [CompletionResult]::new('--vault-client-key', '--vault-client-key', [CompletionResultType]::ParameterName, 'PEM key of --vault-client-cert [env: VAULT_CLIENT_KEY]')
            [CompletionResult]::new('--vault-auth', '--vault-auth', [CompletionResultType]::ParameterName, 'How to log in [env: CRYPTADM_VAULT_AUTH] [default: token]')
            [CompletionResult]::new('--vault-auth-mount', '--vault-auth-mount', [CompletionResultType]::ParameterName, 'Mount path of the auth method [env: CRYPTADM_VAULT_AUTH_MOUNT] [default: approle, jwt or kubernetes]')
            [CompletionResult]::new('--vault-role', '--vault-role', [CompletionResultType]::ParameterName, 'Role to log in as (jwt, kubernetes) [env: CRYPTADM_VAULT_ROLE]')
            [CompletionResult]::new('--vault-role-id', '--vault-role-id', [CompletionResultType]::ParameterName, 'AppRole role id [env: CRYPTADM_VAULT_ROLE_ID]')
            [CompletionResult]::new('--vault-secret-id-file', '--vault-secret-id-file', [CompletionResultType]::ParameterName, 'File holding the AppRole secret id (0600) [env: CRYPTADM_VAULT_SECRET_ID_FILE]')
            [CompletionResult]::new('--vault-jwt-file', '--vault-jwt-file', [CompletionResultType]::ParameterName, 'File holding the JWT (0600; kubernetes default: the pod''s service-account token) [env: CRYPTADM_VAULT_JWT_FILE]')
            [CompletionResult]::new('--vault-token-file', '--vault-token-file', [CompletionResultType]::ParameterName, 'File holding a token (0600), instead of VAULT_TOKEN or ~/.vault-token')
            [CompletionResult]::new('--aws-region', '--aws-region', [CompletionResultType]::ParameterName, 'Region of requests whose resource is not an ARN [env: AWS_REGION, AWS_DEFAULT_REGION]')
            [CompletionResult]::new('--aws-endpoint-url', '--aws-endpoint-url', [CompletionResultType]::ParameterName, 'Endpoint of every AWS service, e.g. http://127.0.0.1:5000 (LocalStack, MinIO for S3) [env: AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL]')
            [CompletionResult]::new('--aws-profile', '--aws-profile', [CompletionResultType]::ParameterName, 'Profile of ~/.aws/config and ~/.aws/credentials [env: AWS_PROFILE] [default: default]')
            [CompletionResult]::new('--aws-ca-bundle', '--aws-ca-bundle', [CompletionResultType]::ParameterName, 'PEM bundle of CAs trusted for AWS endpoints besides the system roots [env: AWS_CA_BUNDLE]')
            [CompletionResult]::new('--kmip-server', '--kmip-server', [CompletionResultType]::ParameterName, 'KMIP server, HOST:PORT (5696 is KMIP''s port) [env: CRYPTADM_KMIP_SERVER]')
            [CompletionResult]::new('--kmip-cacert', '--kmip-cacert', [CompletionResultType]::ParameterName, 'PEM file of the CA that signed the KMIP server''s certificate [env: CRYPTADM_KMIP_CACERT]')
            [CompletionResult]::new('--kmip-client-cert', '--kmip-client-cert', [CompletionResultType]::ParameterName, 'PEM client certificate for TLS client authentication [env: CRYPTADM_KMIP_CLIENT_CERT]')
            [CompletionResult]::new('--kmip-client-key', '--kmip-client-key', [CompletionResultType]::ParameterName, 'PEM key of --kmip-client-cert [env: CRYPTADM_KMIP_CLIENT_KEY]')
            [CompletionResult]::new('--kmip-username', '--kmip-username', [CompletionResultType]::ParameterName, 'Username of a KMIP Username and Password credential [env: CRYPTADM_KMIP_USERNAME]')
            [CompletionResult]::new('--kmip-password-file', '--kmip-password-file', [CompletionResultType]::ParameterName, 'File holding the credential''s password [env: CRYPTADM_KMIP_PASSWORD_FILE, CRYPTADM_KMIP_PASSWORD]')
            [CompletionResult]::new('--cert-dir', '--cert-dir', [CompletionResultType]::ParameterName, 'Also trust the CA certificates in DIR (`*.crt`, PEM) for the `https` provider, besides the system roots (repeatable)')
            [CompletionResult]::new('--tpm2-device', '--tpm2-device', [CompletionResultType]::ParameterName, 'The TPM of `clevis:` documents'' tpm2 pins: a device path or a TCTI string (`device:PATH`, `swtpm:host=H,port=P`); else TPM2TOOLS_TCTI, else /dev/tpmrm0')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Overall deadline of the command''s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]')
            [CompletionResult]::new('--strict', '--strict', [CompletionResultType]::ParameterName, 'In-band configuration only: fail on RemoteConfig documents instead of fetching them')
            [CompletionResult]::new('--vault-skip-verify', '--vault-skip-verify', [CompletionResultType]::ParameterName, 'Accept any server certificate (insecure; VAULT_SKIP_VERIFY alone is refused)')
            [CompletionResult]::new('--skip-remote', '--skip-remote', [CompletionResultType]::ParameterName, 'Skip RemoteConfig documents instead of fetching them')
            [CompletionResult]::new('--allow-http', '--allow-http', [CompletionResultType]::ParameterName, 'Let the `https` provider fetch plain http:// URIs (and follow redirects to them): unauthenticated')
            [CompletionResult]::new('--allow-local-targets', '--allow-local-targets', [CompletionResultType]::ParameterName, 'Let RemoteConfig documents that were themselves fetched reach loopback and link-local addresses (169.254.169.254, 127.0.0.1, fe80::/10) over https; those in the input stream always may')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'cryptadm;bootstrap;help' {
            [CompletionResult]::new('seal', 'seal', [CompletionResultType]::ParameterValue, 'Encrypt a machine configuration into an EncryptedConfig document (or cloud-init userdata, or an Ignition config)')
            [CompletionResult]::new('open', 'open', [CompletionResultType]::ParameterValue, 'Decrypt a machineadm configuration stream back into the machine configuration')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'cryptadm;bootstrap;help;seal' {
            break
        }
        'cryptadm;bootstrap;help;open' {
            break
        }
        'cryptadm;bootstrap;help;help' {
            break
        }
        'cryptadm;image' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Overall deadline of the command''s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('encrypt', 'encrypt', [CompletionResultType]::ParameterValue, 'Encrypt the layers of an OCI image for one or more recipients')
            [CompletionResult]::new('decrypt', 'decrypt', [CompletionResultType]::ParameterValue, 'Decrypt the layers of an OCI image')
            [CompletionResult]::new('authorize', 'authorize', [CompletionResultType]::ParameterValue, 'Prove that the given keys may use an encrypted image, without decrypting it')
            [CompletionResult]::new('inspect', 'inspect', [CompletionResultType]::ParameterValue, 'Show each layer of an image: media type, size, digest, encryption and recipients, without any key')
            [CompletionResult]::new('node-config', 'node-config', [CompletionResultType]::ParameterValue, 'Print the container runtime configuration that decrypts images with cryptadm')
            [CompletionResult]::new('stream-decrypt', 'stream-decrypt', [CompletionResultType]::ParameterValue, 'Decrypt one layer for containerd (its stream processor; a drop-in for imgcrypt''s ctd-decoder)')
            [CompletionResult]::new('keyprovider', 'keyprovider', [CompletionResultType]::ParameterValue, 'Be an ocicrypt key provider that wraps layer keys with Vault Transit or AWS KMS (for skopeo, podman, containerd)')
            [CompletionResult]::new('seal-key', 'seal-key', [CompletionResultType]::ParameterValue, 'Seal a private key file to this machine''s TPM, Tang servers or a threshold (clevis encrypt, for image keys)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'cryptadm;image;encrypt' {
            [CompletionResult]::new('--recipient', '--recipient', [CompletionResultType]::ParameterName, 'Who may decrypt: jwe:PUBKEY, pkcs7:CERT, pgp:EMAIL-NAME-OR-FINGERPRINT (or a public key file), provider:NAME[:OPTS], or a key-manager key: vault-transit://MOUNT/KEY, aws-kms://ARN or arn:aws:kms:REGION:ACCOUNT:key/ID, …:alias/NAME')
            [CompletionResult]::new('--encryption-key', '--encryption-key', [CompletionResultType]::ParameterName, 'Who may decrypt: jwe:PUBKEY, pkcs7:CERT, pgp:EMAIL-NAME-OR-FINGERPRINT (or a public key file), provider:NAME[:OPTS], or a key-manager key: vault-transit://MOUNT/KEY, aws-kms://ARN or arn:aws:kms:REGION:ACCOUNT:key/ID, …:alias/NAME')
            [CompletionResult]::new('--layer', '--layer', [CompletionResultType]::ParameterName, 'Layer to encrypt, 0 = bottom, negative counts from the top (repeatable; default: all)')
            [CompletionResult]::new('--encrypt-layer', '--encrypt-layer', [CompletionResultType]::ParameterName, 'Layer to encrypt, 0 = bottom, negative counts from the top (repeatable; default: all)')
            [CompletionResult]::new('--remove-recipient', '--remove-recipient', [CompletionResultType]::ParameterName, 'Take a recipient away: already encrypted layers are re-encrypted under a fresh key for the --recipient list only, so the removed recipient''s old key opens nothing, and neither does any other recipient not given with --recipient (repeatable; needs a --key that opens them). Prints who keeps and who loses access; a SPEC that names no current recipient is refused (exit 3) and nothing is written')
            [CompletionResult]::new('--platform', '--platform', [CompletionResultType]::ParameterName, 'Only this platform''s manifest, OS/ARCH[/VARIANT] (repeatable; default: every platform)')
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'A private key (PEM, DER, JWK; RSA or EC), an OpenPGP secret key, a certificate (PKCS#7), provider:NAME[:OPTS], or a key-manager key: vault-transit://MOUNT/KEY, aws-kms://ARN or arn:aws:kms:REGION:ACCOUNT:key/ID, …:alias/NAME')
            [CompletionResult]::new('--decryption-key', '--decryption-key', [CompletionResultType]::ParameterName, 'A private key (PEM, DER, JWK; RSA or EC), an OpenPGP secret key, a certificate (PKCS#7), provider:NAME[:OPTS], or a key-manager key: vault-transit://MOUNT/KEY, aws-kms://ARN or arn:aws:kms:REGION:ACCOUNT:key/ID, …:alias/NAME')
            [CompletionResult]::new('--cert', '--cert', [CompletionResultType]::ParameterName, 'An X.509 certificate matching a --key, needed for PKCS#7 (a certificate given with --key works too)')
            [CompletionResult]::new('--dec-recipient', '--dec-recipient', [CompletionResultType]::ParameterName, 'An X.509 certificate matching a --key, needed for PKCS#7 (a certificate given with --key works too)')
            [CompletionResult]::new('--passphrase-file', '--passphrase-file', [CompletionResultType]::ParameterName, 'Read the passphrase from FILE (`-`: standard input), byte for byte: no newline is stripped')
            [CompletionResult]::new('--gpg-homedir', '--gpg-homedir', [CompletionResultType]::ParameterName, 'Also use the secret keys of this GnuPG home directory for OpenPGP layers (their passphrase as above)')
            [CompletionResult]::new('--tpm2-device', '--tpm2-device', [CompletionResultType]::ParameterName, 'The TPM of a sealed --key: a device path or a TCTI string (`device:PATH`, `swtpm:host=H,port=P`, `mssim:host=H,port=P`); else TPM2TOOLS_TCTI, else /dev/tpmrm0')
            [CompletionResult]::new('--vault-addr', '--vault-addr', [CompletionResultType]::ParameterName, 'Server address, e.g. https://vault:8200 [env: VAULT_ADDR, BAO_ADDR]')
            [CompletionResult]::new('--vault-namespace', '--vault-namespace', [CompletionResultType]::ParameterName, 'Namespace (X-Vault-Namespace) [env: VAULT_NAMESPACE, BAO_NAMESPACE]')
            [CompletionResult]::new('--vault-cacert', '--vault-cacert', [CompletionResultType]::ParameterName, 'PEM file of the CA that signed the server''s certificate [env: VAULT_CACERT, BAO_CACERT]')
            [CompletionResult]::new('--vault-capath', '--vault-capath', [CompletionResultType]::ParameterName, 'Directory of PEM CA certificates [env: VAULT_CAPATH, BAO_CAPATH]')
            [CompletionResult]::new('--vault-client-cert', '--vault-client-cert', [CompletionResultType]::ParameterName, 'PEM client certificate for TLS client authentication [env: VAULT_CLIENT_CERT]')
            [CompletionResult]::new('--vault-client-key', '--vault-client-key', [CompletionResultType]::ParameterName, 'PEM key of --vault-client-cert [env: VAULT_CLIENT_KEY]')
            [CompletionResult]::new('--vault-auth', '--vault-auth', [CompletionResultType]::ParameterName, 'How to log in [env: CRYPTADM_VAULT_AUTH] [default: token]')
            [CompletionResult]::new('--vault-auth-mount', '--vault-auth-mount', [CompletionResultType]::ParameterName, 'Mount path of the auth method [env: CRYPTADM_VAULT_AUTH_MOUNT] [default: approle, jwt or kubernetes]')
            [CompletionResult]::new('--vault-role', '--vault-role', [CompletionResultType]::ParameterName, 'Role to log in as (jwt, kubernetes) [env: CRYPTADM_VAULT_ROLE]')
            [CompletionResult]::new('--vault-role-id', '--vault-role-id', [CompletionResultType]::ParameterName, 'AppRole role id [env: CRYPTADM_VAULT_ROLE_ID]')
            [CompletionResult]::new('--vault-secret-id-file', '--vault-secret-id-file', [CompletionResultType]::ParameterName, 'File holding the AppRole secret id (0600) [env: CRYPTADM_VAULT_SECRET_ID_FILE]')
            [CompletionResult]::new('--vault-jwt-file', '--vault-jwt-file', [CompletionResultType]::ParameterName, 'File holding the JWT (0600; kubernetes default: the pod''s service-account token) [env: CRYPTADM_VAULT_JWT_FILE]')
            [CompletionResult]::new('--vault-token-file', '--vault-token-file', [CompletionResultType]::ParameterName, 'File holding a token (0600), instead of VAULT_TOKEN or ~/.vault-token')
            [CompletionResult]::new('--aws-region', '--aws-region', [CompletionResultType]::ParameterName, 'Region of requests whose resource is not an ARN [env: AWS_REGION, AWS_DEFAULT_REGION]')
            [CompletionResult]::new('--aws-endpoint-url', '--aws-endpoint-url', [CompletionResultType]::ParameterName, 'Endpoint of every AWS service, e.g. http://127.0.0.1:5000 (LocalStack, MinIO for S3) [env: AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL]')
            [CompletionResult]::new('--aws-profile', '--aws-profile', [CompletionResultType]::ParameterName, 'Profile of ~/.aws/config and ~/.aws/credentials [env: AWS_PROFILE] [default: default]')
            [CompletionResult]::new('--aws-ca-bundle', '--aws-ca-bundle', [CompletionResultType]::ParameterName, 'PEM bundle of CAs trusted for AWS endpoints besides the system roots [env: AWS_CA_BUNDLE]')
            [CompletionResult]::new('--src-creds', '--src-creds', [CompletionResultType]::ParameterName, 'Log in to the source registry as USER; the password comes from --src-password-file, CRYPTADM_SRC_PASSWORD_FILE, CRYPTADM_SRC_PASSWORD or a terminal prompt, never from the command line')
            [CompletionResult]::new('--src-password-file', '--src-password-file', [CompletionResultType]::ParameterName, 'Read the --src-creds password from FILE (`-`: standard input); one trailing newline is dropped')
            [CompletionResult]::new('--src-authfile', '--src-authfile', [CompletionResultType]::ParameterName, 'Source registry credentials from this auth file only (docker config.json or podman auth.json format)')
            [CompletionResult]::new('--src-tls-verify', '--src-tls-verify', [CompletionResultType]::ParameterName, 'Verify the source registry''s TLS certificate; =false allows plain HTTP or an unverified certificate')
            [CompletionResult]::new('--src-cert-dir', '--src-cert-dir', [CompletionResultType]::ParameterName, 'Trust the CA certificates (*.crt) in DIR for the source registry, besides the system roots')
            [CompletionResult]::new('--dest-creds', '--dest-creds', [CompletionResultType]::ParameterName, 'Log in to the destination registry as USER; the password comes from --dest-password-file, CRYPTADM_DEST_PASSWORD_FILE, CRYPTADM_DEST_PASSWORD or a terminal prompt, never from the command line')
            [CompletionResult]::new('--dest-password-file', '--dest-password-file', [CompletionResultType]::ParameterName, 'Read the --dest-creds password from FILE (`-`: standard input); one trailing newline is dropped')
            [CompletionResult]::new('--dest-authfile', '--dest-authfile', [CompletionResultType]::ParameterName, 'Destination registry credentials from this auth file only (docker config.json or podman auth.json format)')
            [CompletionResult]::new('--dest-tls-verify', '--dest-tls-verify', [CompletionResultType]::ParameterName, 'Verify the destination registry''s TLS certificate; =false allows plain HTTP or an unverified certificate')
            [CompletionResult]::new('--dest-cert-dir', '--dest-cert-dir', [CompletionResultType]::ParameterName, 'Trust the CA certificates (*.crt) in DIR for the destination registry, besides the system roots')
            [CompletionResult]::new('--cert-dir', '--cert-dir', [CompletionResultType]::ParameterName, 'Trust the CA certificates (*.crt) in DIR for both registries (default: /etc/containers/certs.d/HOST and /etc/docker/certs.d/HOST when they exist)')
            [CompletionResult]::new('--jobs', '--jobs', [CompletionResultType]::ParameterName, 'Move up to N layers at once (downloads, cipher and uploads of different layers overlap; memory grows with N, not with layer sizes); a layer of 4 MiB or more is downloaded as up to 4 ranges at once, so up to 4×N connections; 1 moves the layers one after the other, each over one connection')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Overall deadline of the command''s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]')
            [CompletionResult]::new('--accept-unidentified-loss', '--accept-unidentified-loss', [CompletionResultType]::ParameterName, 'With --remove-recipient: accept that JWE recipients without a key id lose access unless given with --recipient. Their wrapped keys name only an algorithm, so cryptadm cannot tell which of them a --remove-recipient is, nor whether it is one at all; without this flag such a loss is refused (exit 3)')
            [CompletionResult]::new('--allow-plaintext', '--allow-plaintext', [CompletionResultType]::ParameterName, 'Succeed even when no selected layer is encrypted (or, for encrypt, would be)')
            [CompletionResult]::new('--vault-skip-verify', '--vault-skip-verify', [CompletionResultType]::ParameterName, 'Accept any server certificate (insecure; VAULT_SKIP_VERIFY alone is refused)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'cryptadm;image;decrypt' {
            [CompletionResult]::new('--layer', '--layer', [CompletionResultType]::ParameterName, 'Layer to decrypt, 0 = bottom, negative counts from the top (repeatable; default: all)')
            [CompletionResult]::new('--platform', '--platform', [CompletionResultType]::ParameterName, 'Only this platform''s manifest, OS/ARCH[/VARIANT] (repeatable; default: every platform)')
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'A private key (PEM, DER, JWK; RSA or EC), an OpenPGP secret key, a certificate (PKCS#7), provider:NAME[:OPTS], or a key-manager key: vault-transit://MOUNT/KEY, aws-kms://ARN or arn:aws:kms:REGION:ACCOUNT:key/ID, …:alias/NAME')
            [CompletionResult]::new('--decryption-key', '--decryption-key', [CompletionResultType]::ParameterName, 'A private key (PEM, DER, JWK; RSA or EC), an OpenPGP secret key, a certificate (PKCS#7), provider:NAME[:OPTS], or a key-manager key: vault-transit://MOUNT/KEY, aws-kms://ARN or arn:aws:kms:REGION:ACCOUNT:key/ID, …:alias/NAME')
            [CompletionResult]::new('--cert', '--cert', [CompletionResultType]::ParameterName, 'An X.509 certificate matching a --key, needed for PKCS#7 (a certificate given with --key works too)')
            [CompletionResult]::new('--dec-recipient', '--dec-recipient', [CompletionResultType]::ParameterName, 'An X.509 certificate matching a --key, needed for PKCS#7 (a certificate given with --key works too)')
            [CompletionResult]::new('--passphrase-file', '--passphrase-file', [CompletionResultType]::ParameterName, 'Read the passphrase from FILE (`-`: standard input), byte for byte: no newline is stripped')
            [CompletionResult]::new('--gpg-homedir', '--gpg-homedir', [CompletionResultType]::ParameterName, 'Also use the secret keys of this GnuPG home directory for OpenPGP layers (their passphrase as above)')
            [CompletionResult]::new('--tpm2-device', '--tpm2-device', [CompletionResultType]::ParameterName, 'The TPM of a sealed --key: a device path or a TCTI string (`device:PATH`, `swtpm:host=H,port=P`, `mssim:host=H,port=P`); else TPM2TOOLS_TCTI, else /dev/tpmrm0')
            [CompletionResult]::new('--vault-addr', '--vault-addr', [CompletionResultType]::ParameterName, 'Server address, e.g. https://vault:8200 [env: VAULT_ADDR, BAO_ADDR]')
            [CompletionResult]::new('--vault-namespace', '--vault-namespace', [CompletionResultType]::ParameterName, 'Namespace (X-Vault-Namespace) [env: VAULT_NAMESPACE, BAO_NAMESPACE]')
            [CompletionResult]::new('--vault-cacert', '--vault-cacert', [CompletionResultType]::ParameterName, 'PEM file of the CA that signed the server''s certificate [env: VAULT_CACERT, BAO_CACERT]')
            [CompletionResult]::new('--vault-capath', '--vault-capath', [CompletionResultType]::ParameterName, 'Directory of PEM CA certificates [env: VAULT_CAPATH, BAO_CAPATH]')
            [CompletionResult]::new('--vault-client-cert', '--vault-client-cert', [CompletionResultType]::ParameterName, 'PEM client certificate for TLS client authentication [env: VAULT_CLIENT_CERT]')
            [CompletionResult]::new('--vault-client-key', '--vault-client-key', [CompletionResultType]::ParameterName, 'PEM key of --vault-client-cert [env: VAULT_CLIENT_KEY]')
            [CompletionResult]::new('--vault-auth', '--vault-auth', [CompletionResultType]::ParameterName, 'How to log in [env: CRYPTADM_VAULT_AUTH] [default: token]')
            [CompletionResult]::new('--vault-auth-mount', '--vault-auth-mount', [CompletionResultType]::ParameterName, 'Mount path of the auth method [env: CRYPTADM_VAULT_AUTH_MOUNT] [default: approle, jwt or kubernetes]')
            [CompletionResult]::new('--vault-role', '--vault-role', [CompletionResultType]::ParameterName, 'Role to log in as (jwt, kubernetes) [env: CRYPTADM_VAULT_ROLE]')
            [CompletionResult]::new('--vault-role-id', '--vault-role-id', [CompletionResultType]::ParameterName, 'AppRole role id [env: CRYPTADM_VAULT_ROLE_ID]')
            [CompletionResult]::new('--vault-secret-id-file', '--vault-secret-id-file', [CompletionResultType]::ParameterName, 'File holding the AppRole secret id (0600) [env: CRYPTADM_VAULT_SECRET_ID_FILE]')
            [CompletionResult]::new('--vault-jwt-file', '--vault-jwt-file', [CompletionResultType]::ParameterName, 'File holding the JWT (0600; kubernetes default: the pod''s service-account token) [env: CRYPTADM_VAULT_JWT_FILE]')
            [CompletionResult]::new('--vault-token-file', '--vault-token-file', [CompletionResultType]::ParameterName, 'File holding a token (0600), instead of VAULT_TOKEN or ~/.vault-token')
            [CompletionResult]::new('--aws-region', '--aws-region', [CompletionResultType]::ParameterName, 'Region of requests whose resource is not an ARN [env: AWS_REGION, AWS_DEFAULT_REGION]')
            [CompletionResult]::new('--aws-endpoint-url', '--aws-endpoint-url', [CompletionResultType]::ParameterName, 'Endpoint of every AWS service, e.g. http://127.0.0.1:5000 (LocalStack, MinIO for S3) [env: AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL]')
            [CompletionResult]::new('--aws-profile', '--aws-profile', [CompletionResultType]::ParameterName, 'Profile of ~/.aws/config and ~/.aws/credentials [env: AWS_PROFILE] [default: default]')
            [CompletionResult]::new('--aws-ca-bundle', '--aws-ca-bundle', [CompletionResultType]::ParameterName, 'PEM bundle of CAs trusted for AWS endpoints besides the system roots [env: AWS_CA_BUNDLE]')
            [CompletionResult]::new('--src-creds', '--src-creds', [CompletionResultType]::ParameterName, 'Log in to the source registry as USER; the password comes from --src-password-file, CRYPTADM_SRC_PASSWORD_FILE, CRYPTADM_SRC_PASSWORD or a terminal prompt, never from the command line')
            [CompletionResult]::new('--src-password-file', '--src-password-file', [CompletionResultType]::ParameterName, 'Read the --src-creds password from FILE (`-`: standard input); one trailing newline is dropped')
            [CompletionResult]::new('--src-authfile', '--src-authfile', [CompletionResultType]::ParameterName, 'Source registry credentials from this auth file only (docker config.json or podman auth.json format)')
            [CompletionResult]::new('--src-tls-verify', '--src-tls-verify', [CompletionResultType]::ParameterName, 'Verify the source registry''s TLS certificate; =false allows plain HTTP or an unverified certificate')
            [CompletionResult]::new('--src-cert-dir', '--src-cert-dir', [CompletionResultType]::ParameterName, 'Trust the CA certificates (*.crt) in DIR for the source registry, besides the system roots')
            [CompletionResult]::new('--dest-creds', '--dest-creds', [CompletionResultType]::ParameterName, 'Log in to the destination registry as USER; the password comes from --dest-password-file, CRYPTADM_DEST_PASSWORD_FILE, CRYPTADM_DEST_PASSWORD or a terminal prompt, never from the command line')
            [CompletionResult]::new('--dest-password-file', '--dest-password-file', [CompletionResultType]::ParameterName, 'Read the --dest-creds password from FILE (`-`: standard input); one trailing newline is dropped')
            [CompletionResult]::new('--dest-authfile', '--dest-authfile', [CompletionResultType]::ParameterName, 'Destination registry credentials from this auth file only (docker config.json or podman auth.json format)')
            [CompletionResult]::new('--dest-tls-verify', '--dest-tls-verify', [CompletionResultType]::ParameterName, 'Verify the destination registry''s TLS certificate; =false allows plain HTTP or an unverified certificate')
            [CompletionResult]::new('--dest-cert-dir', '--dest-cert-dir', [CompletionResultType]::ParameterName, 'Trust the CA certificates (*.crt) in DIR for the destination registry, besides the system roots')
            [CompletionResult]::new('--cert-dir', '--cert-dir', [CompletionResultType]::ParameterName, 'Trust the CA certificates (*.crt) in DIR for both registries (default: /etc/containers/certs.d/HOST and /etc/docker/certs.d/HOST when they exist)')
            [CompletionResult]::new('--jobs', '--jobs', [CompletionResultType]::ParameterName, 'Move up to N layers at once (downloads, cipher and uploads of different layers overlap; memory grows with N, not with layer sizes); a layer of 4 MiB or more is downloaded as up to 4 ranges at once, so up to 4×N connections; 1 moves the layers one after the other, each over one connection')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Overall deadline of the command''s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]')
            [CompletionResult]::new('--allow-plaintext', '--allow-plaintext', [CompletionResultType]::ParameterName, 'Succeed even when no selected layer is encrypted (or, for encrypt, would be)')
            [CompletionResult]::new('--vault-skip-verify', '--vault-skip-verify', [CompletionResultType]::ParameterName, 'Accept any server certificate (insecure; VAULT_SKIP_VERIFY alone is refused)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'cryptadm;image;authorize' {
            [CompletionResult]::new('--output-format', '--output-format', [CompletionResultType]::ParameterName, 'Print the per-layer report as a document')
            [CompletionResult]::new('--platform', '--platform', [CompletionResultType]::ParameterName, 'Only this platform''s manifest, OS/ARCH[/VARIANT] (repeatable; default: every platform)')
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'A private key (PEM, DER, JWK; RSA or EC), an OpenPGP secret key, a certificate (PKCS#7), provider:NAME[:OPTS], or a key-manager key: vault-transit://MOUNT/KEY, aws-kms://ARN or arn:aws:kms:REGION:ACCOUNT:key/ID, …:alias/NAME')
            [CompletionResult]::new('--decryption-key', '--decryption-key', [CompletionResultType]::ParameterName, 'A private key (PEM, DER, JWK; RSA or EC), an OpenPGP secret key, a certificate (PKCS#7), provider:NAME[:OPTS], or a key-manager key: vault-transit://MOUNT/KEY, aws-kms://ARN or arn:aws:kms:REGION:ACCOUNT:key/ID, …:alias/NAME')
            [CompletionResult]::new('--cert', '--cert', [CompletionResultType]::ParameterName, 'An X.509 certificate matching a --key, needed for PKCS#7 (a certificate given with --key works too)')
            [CompletionResult]::new('--dec-recipient', '--dec-recipient', [CompletionResultType]::ParameterName, 'An X.509 certificate matching a --key, needed for PKCS#7 (a certificate given with --key works too)')
            [CompletionResult]::new('--passphrase-file', '--passphrase-file', [CompletionResultType]::ParameterName, 'Read the passphrase from FILE (`-`: standard input), byte for byte: no newline is stripped')
            [CompletionResult]::new('--gpg-homedir', '--gpg-homedir', [CompletionResultType]::ParameterName, 'Also use the secret keys of this GnuPG home directory for OpenPGP layers (their passphrase as above)')
            [CompletionResult]::new('--tpm2-device', '--tpm2-device', [CompletionResultType]::ParameterName, 'The TPM of a sealed --key: a device path or a TCTI string (`device:PATH`, `swtpm:host=H,port=P`, `mssim:host=H,port=P`); else TPM2TOOLS_TCTI, else /dev/tpmrm0')
            [CompletionResult]::new('--vault-addr', '--vault-addr', [CompletionResultType]::ParameterName, 'Server address, e.g. https://vault:8200 [env: VAULT_ADDR, BAO_ADDR]')
            [CompletionResult]::new('--vault-namespace', '--vault-namespace', [CompletionResultType]::ParameterName, 'Namespace (X-Vault-Namespace) [env: VAULT_NAMESPACE, BAO_NAMESPACE]')
            [CompletionResult]::new('--vault-cacert', '--vault-cacert', [CompletionResultType]::ParameterName, 'PEM file of the CA that signed the server''s certificate [env: VAULT_CACERT, BAO_CACERT]')
            [CompletionResult]::new('--vault-capath', '--vault-capath', [CompletionResultType]::ParameterName, 'Directory of PEM CA certificates [env: VAULT_CAPATH, BAO_CAPATH]')
            [CompletionResult]::new('--vault-client-cert', '--vault-client-cert', [CompletionResultType]::ParameterName, 'PEM client certificate for TLS client authentication [env: VAULT_CLIENT_CERT]')
            [CompletionResult]::new('--vault-client-key', '--vault-client-key', [CompletionResultType]::ParameterName, 'PEM key of --vault-client-cert [env: VAULT_CLIENT_KEY]')
            [CompletionResult]::new('--vault-auth', '--vault-auth', [CompletionResultType]::ParameterName, 'How to log in [env: CRYPTADM_VAULT_AUTH] [default: token]')
            [CompletionResult]::new('--vault-auth-mount', '--vault-auth-mount', [CompletionResultType]::ParameterName, 'Mount path of the auth method [env: CRYPTADM_VAULT_AUTH_MOUNT] [default: approle, jwt or kubernetes]')
            [CompletionResult]::new('--vault-role', '--vault-role', [CompletionResultType]::ParameterName, 'Role to log in as (jwt, kubernetes) [env: CRYPTADM_VAULT_ROLE]')
            [CompletionResult]::new('--vault-role-id', '--vault-role-id', [CompletionResultType]::ParameterName, 'AppRole role id [env: CRYPTADM_VAULT_ROLE_ID]')
            [CompletionResult]::new('--vault-secret-id-file', '--vault-secret-id-file', [CompletionResultType]::ParameterName, 'File holding the AppRole secret id (0600) [env: CRYPTADM_VAULT_SECRET_ID_FILE]')
            [CompletionResult]::new('--vault-jwt-file', '--vault-jwt-file', [CompletionResultType]::ParameterName, 'File holding the JWT (0600; kubernetes default: the pod''s service-account token) [env: CRYPTADM_VAULT_JWT_FILE]')
            [CompletionResult]::new('--vault-token-file', '--vault-token-file', [CompletionResultType]::ParameterName, 'File holding a token (0600), instead of VAULT_TOKEN or ~/.vault-token')
            [CompletionResult]::new('--aws-region', '--aws-region', [CompletionResultType]::ParameterName, 'Region of requests whose resource is not an ARN [env: AWS_REGION, AWS_DEFAULT_REGION]')
            [CompletionResult]::new('--aws-endpoint-url', '--aws-endpoint-url', [CompletionResultType]::ParameterName, 'Endpoint of every AWS service, e.g. http://127.0.0.1:5000 (LocalStack, MinIO for S3) [env: AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL]')
            [CompletionResult]::new('--aws-profile', '--aws-profile', [CompletionResultType]::ParameterName, 'Profile of ~/.aws/config and ~/.aws/credentials [env: AWS_PROFILE] [default: default]')
            [CompletionResult]::new('--aws-ca-bundle', '--aws-ca-bundle', [CompletionResultType]::ParameterName, 'PEM bundle of CAs trusted for AWS endpoints besides the system roots [env: AWS_CA_BUNDLE]')
            [CompletionResult]::new('--creds', '--creds', [CompletionResultType]::ParameterName, 'Log in to the registry as USER; the password comes from --password-file, CRYPTADM_REGISTRY_PASSWORD_FILE, CRYPTADM_REGISTRY_PASSWORD or a terminal prompt, never from the command line')
            [CompletionResult]::new('--password-file', '--password-file', [CompletionResultType]::ParameterName, 'Read the --creds password from FILE (`-`: standard input); one trailing newline is dropped')
            [CompletionResult]::new('--authfile', '--authfile', [CompletionResultType]::ParameterName, 'Registry credentials from this auth file only (docker config.json or podman auth.json format)')
            [CompletionResult]::new('--tls-verify', '--tls-verify', [CompletionResultType]::ParameterName, 'Verify the registry''s TLS certificate; =false allows plain HTTP or an unverified certificate')
            [CompletionResult]::new('--cert-dir', '--cert-dir', [CompletionResultType]::ParameterName, 'Trust the CA certificates (*.crt) in DIR, besides the system roots (default: /etc/containers/certs.d/HOST and /etc/docker/certs.d/HOST when they exist)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Overall deadline of the command''s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]')
            [CompletionResult]::new('--allow-plaintext', '--allow-plaintext', [CompletionResultType]::ParameterName, 'Succeed even when no selected layer is encrypted (or, for encrypt, would be)')
            [CompletionResult]::new('--vault-skip-verify', '--vault-skip-verify', [CompletionResultType]::ParameterName, 'Accept any server certificate (insecure; VAULT_SKIP_VERIFY alone is refused)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'cryptadm;image;inspect' {
            [CompletionResult]::new('--creds', '--creds', [CompletionResultType]::ParameterName, 'Log in to the registry as USER; the password comes from --password-file, CRYPTADM_REGISTRY_PASSWORD_FILE, CRYPTADM_REGISTRY_PASSWORD or a terminal prompt, never from the command line')
            [CompletionResult]::new('--password-file', '--password-file', [CompletionResultType]::ParameterName, 'Read the --creds password from FILE (`-`: standard input); one trailing newline is dropped')
            [CompletionResult]::new('--authfile', '--authfile', [CompletionResultType]::ParameterName, 'Registry credentials from this auth file only (docker config.json or podman auth.json format)')
            [CompletionResult]::new('--tls-verify', '--tls-verify', [CompletionResultType]::ParameterName, 'Verify the registry''s TLS certificate; =false allows plain HTTP or an unverified certificate')
            [CompletionResult]::new('--cert-dir', '--cert-dir', [CompletionResultType]::ParameterName, 'Trust the CA certificates (*.crt) in DIR, besides the system roots (default: /etc/containers/certs.d/HOST and /etc/docker/certs.d/HOST when they exist)')
            [CompletionResult]::new('--output-format', '--output-format', [CompletionResultType]::ParameterName, 'Print the layers as a document')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Overall deadline of the command''s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'cryptadm;image;node-config' {
            [CompletionResult]::new('--runtime', '--runtime', [CompletionResultType]::ParameterName, 'The container runtime of the nodes')
            [CompletionResult]::new('--containerd-version', '--containerd-version', [CompletionResultType]::ParameterName, 'containerd''s major version: 1 (config version 2) or 2 (config version 3)')
            [CompletionResult]::new('--binary', '--binary', [CompletionResultType]::ParameterName, 'Where cryptadm is on the nodes (absolute; default: this binary''s path)')
            [CompletionResult]::new('--keys-dir', '--keys-dir', [CompletionResultType]::ParameterName, 'The keys directory (default: /etc/containerd/ocicrypt/keys, CRI-O: /etc/crio/keys)')
            [CompletionResult]::new('--keyprovider-config', '--keyprovider-config', [CompletionResultType]::ParameterName, 'The key-provider configuration the stream processors get as OCICRYPT_KEYPROVIDER_CONFIG (containerd''s default)')
            [CompletionResult]::new('--processor-env', '--processor-env', [CompletionResultType]::ParameterName, 'A NAME=VALUE setting for the stream processors'' environment (repeatable; containerd only), e.g. the Vault server and the node''s login for images wrapped with vault-transit:// keys: VAULT_ADDR, VAULT_CACERT and a JWT/Kubernetes role with its projected token file; for aws-kms:// keys, AWS_REGION or a web identity (AWS_ROLE_ARN, AWS_WEB_IDENTITY_TOKEN_FILE), or nothing on EC2 (the instance profile). Secrets themselves (VAULT_TOKEN, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN) are refused')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Overall deadline of the command''s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'cryptadm;image;stream-decrypt' {
            [CompletionResult]::new('--decryption-keys-path', '--decryption-keys-path', [CompletionResultType]::ParameterName, 'The node''s keys directory: every regular file below it is tried as a key (ctd-decoder''s flag)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Overall deadline of the command''s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'cryptadm;image;keyprovider' {
            [CompletionResult]::new('--listen', '--listen', [CompletionResultType]::ParameterName, 'Serve ocicrypt''s gRPC form instead, on this unix socket (unix:///PATH), until SIGTERM or SIGINT')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Overall deadline of the command''s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'cryptadm;image;seal-key' {
            [CompletionResult]::new('--out', '--out', [CompletionResultType]::ParameterName, 'Where to write the sealed key (a compact JWE)')
            [CompletionResult]::new('--clevis-pin', '--clevis-pin', [CompletionResultType]::ParameterName, 'Clevis pin to encrypt to: `tang` (one Tang server), `tpm2` (this machine''s TPM) or `sss` (a threshold of pins), as `clevis encrypt PIN`')
            [CompletionResult]::new('--clevis-config', '--clevis-config', [CompletionResultType]::ParameterName, 'The pin''s configuration, the JSON `clevis encrypt` takes: `{"url":URL,"thp":THUMBPRINT}` for tang, `{"pcr_ids":"7","pcr_bank":"sha256"}` for tpm2 (also `hash`, `key` ecc|rsa, `pcr_digest`), `{"t":2,"pins":{"tang":[{"url":…},{"url":…}],"tpm2":{…}}}` for sss, whose pins may also be cryptadm''s key-manager pins `aws-kms`, `vault-transit` and `kmip`, each `[{"key":REFERENCE}]` (docs/threshold.md); `"adv"` may name an advertisement file')
            [CompletionResult]::new('--tpm2-device', '--tpm2-device', [CompletionResultType]::ParameterName, 'The TPM of `tpm2` pins: a device path or a TCTI string (`device:PATH`, `swtpm:host=H,port=P`, `mssim:host=H,port=P`); else TPM2TOOLS_TCTI, else /dev/tpmrm0')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Overall deadline of the command''s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]')
            [CompletionResult]::new('--clevis-trust-adv', '--clevis-trust-adv', [CompletionResultType]::ParameterName, 'Trust a Tang advertisement that no `thp` pins, as fetched (clevis encrypt''s `-y`); without it such a server is refused and its signing-key thumbprints are printed')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'cryptadm;image;help' {
            [CompletionResult]::new('encrypt', 'encrypt', [CompletionResultType]::ParameterValue, 'Encrypt the layers of an OCI image for one or more recipients')
            [CompletionResult]::new('decrypt', 'decrypt', [CompletionResultType]::ParameterValue, 'Decrypt the layers of an OCI image')
            [CompletionResult]::new('authorize', 'authorize', [CompletionResultType]::ParameterValue, 'Prove that the given keys may use an encrypted image, without decrypting it')
            [CompletionResult]::new('inspect', 'inspect', [CompletionResultType]::ParameterValue, 'Show each layer of an image: media type, size, digest, encryption and recipients, without any key')
            [CompletionResult]::new('node-config', 'node-config', [CompletionResultType]::ParameterValue, 'Print the container runtime configuration that decrypts images with cryptadm')
            [CompletionResult]::new('stream-decrypt', 'stream-decrypt', [CompletionResultType]::ParameterValue, 'Decrypt one layer for containerd (its stream processor; a drop-in for imgcrypt''s ctd-decoder)')
            [CompletionResult]::new('keyprovider', 'keyprovider', [CompletionResultType]::ParameterValue, 'Be an ocicrypt key provider that wraps layer keys with Vault Transit or AWS KMS (for skopeo, podman, containerd)')
            [CompletionResult]::new('seal-key', 'seal-key', [CompletionResultType]::ParameterValue, 'Seal a private key file to this machine''s TPM, Tang servers or a threshold (clevis encrypt, for image keys)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'cryptadm;image;help;encrypt' {
            break
        }
        'cryptadm;image;help;decrypt' {
            break
        }
        'cryptadm;image;help;authorize' {
            break
        }
        'cryptadm;image;help;inspect' {
            break
        }
        'cryptadm;image;help;node-config' {
            break
        }
        'cryptadm;image;help;stream-decrypt' {
            break
        }
        'cryptadm;image;help;keyprovider' {
            break
        }
        'cryptadm;image;help;seal-key' {
            break
        }
        'cryptadm;image;help;help' {
            break
        }
        'cryptadm;secret' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Overall deadline of the command''s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('generate-k8s', 'generate-k8s', [CompletionResultType]::ParameterValue, 'Print Kubernetes objects that carry image decryption keys')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'cryptadm;secret;generate-k8s' {
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'A key file, as [NAME=]FILE; NAME is the data entry (the file name on the node), by default FILE''s name')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace of every object (enc-key-sync: default `enc-key-sync`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace of every object (enc-key-sync: default `enc-key-sync`)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'The Secret''s shape')
            [CompletionResult]::new('--runtime', '--runtime', [CompletionResultType]::ParameterName, 'The container runtime whose keys directory the DaemonSet writes')
            [CompletionResult]::new('--service-account', '--service-account', [CompletionResultType]::ParameterName, 'Add a patch giving this ServiceAccount the Secret, and a Pod using it (--format kep)')
            [CompletionResult]::new('--output-format', '--output-format', [CompletionResultType]::ParameterName, 'How the objects are printed: a YAML stream or JSON (several objects as a v1 List)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write the objects to FILE (created 0600, replaced atomically) instead of standard output')
            [CompletionResult]::new('--out', '--out', [CompletionResultType]::ParameterName, 'Write the objects to FILE (created 0600, replaced atomically) instead of standard output')
            [CompletionResult]::new('--passphrase-file', '--passphrase-file', [CompletionResultType]::ParameterName, 'Read the passphrase from FILE (`-`: standard input), byte for byte: no newline is stripped')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Overall deadline of the command''s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]')
            [CompletionResult]::new('--with-daemonset', '--with-daemonset', [CompletionResultType]::ParameterName, 'Add a DaemonSet that copies the keys onto every node, as regular 0600 files (--format node)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'cryptadm;secret;help' {
            [CompletionResult]::new('generate-k8s', 'generate-k8s', [CompletionResultType]::ParameterValue, 'Print Kubernetes objects that carry image decryption keys')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'cryptadm;secret;help;generate-k8s' {
            break
        }
        'cryptadm;secret;help;help' {
            break
        }
        'cryptadm;disk' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Overall deadline of the command''s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('luks-format', 'luks-format', [CompletionResultType]::ParameterValue, 'Create a LUKS2 or LUKS1 image (or format a block device), optionally encrypting a raw image into it')
            [CompletionResult]::new('inspect', 'inspect', [CompletionResultType]::ParameterValue, 'Show a LUKS1 or LUKS2 header, or a qcow2 image and its LUKS header: version, UUID, data segment, keyslots')
            [CompletionResult]::new('decrypt', 'decrypt', [CompletionResultType]::ParameterValue, 'Decrypt the payload of a LUKS1 or LUKS2 image or device, or a qcow2+LUKS image, into a raw image')
            [CompletionResult]::new('convert', 'convert', [CompletionResultType]::ParameterValue, 'Convert a disk image between raw, raw LUKS, qcow2 and qcow2+LUKS in one stream (qemu-img convert''s verb)')
            [CompletionResult]::new('clevis-bind', 'clevis-bind', [CompletionResultType]::ParameterValue, 'Bind a LUKS2 volume to Tang servers (clevis''s `tang` or `sss` pin), as `clevis luks bind` does')
            [CompletionResult]::new('tpm2-enroll', 'tpm2-enroll', [CompletionResultType]::ParameterValue, 'Enrol a LUKS2 volume with the TPM, as `systemd-cryptenroll --tpm2-device` does')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'cryptadm;disk;luks-format' {
            [CompletionResult]::new('--type', '--type', [CompletionResultType]::ParameterName, 'LUKS version (`luks1` for QEMU, Nova and Glance)')
            [CompletionResult]::new('--passphrase-file', '--passphrase-file', [CompletionResultType]::ParameterName, 'Read the passphrase from FILE (`-`: standard input), byte for byte: no newline is stripped')
            [CompletionResult]::new('--key-file', '--key-file', [CompletionResultType]::ParameterName, 'Read the passphrase from FILE (`-`: standard input), the whole file byte for byte, as cryptsetup does')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Container: `raw` (a LUKS image or device) or `qcow2` (qcow2 v3 with LUKS1 inside, as QEMU writes it)')
            [CompletionResult]::new('--cluster-size', '--cluster-size', [CompletionResultType]::ParameterName, 'qcow2 cluster size in bytes, 512 to 2M, a power of two (default 64K, QEMU''s)')
            [CompletionResult]::new('--secret-type', '--secret-type', [CompletionResultType]::ParameterName, 'How the passphrase source becomes the LUKS passphrase: verbatim (`passphrase`, Nova; the default) or lowercase hex of the key bytes it holds (`symmetric`, Cinder and os-brick); with --secret, the secret''s Barbican type decides and a contradicting --secret-type is refused')
            [CompletionResult]::new('--cipher', '--cipher', [CompletionResultType]::ParameterName, 'Payload cipher (only aes-xts-plain64 is implemented)')
            [CompletionResult]::new('--key-size', '--key-size', [CompletionResultType]::ParameterName, 'Volume key size in bits (XTS: 512 = AES-256, 256 = AES-128)')
            [CompletionResult]::new('--hash', '--hash', [CompletionResultType]::ParameterName, 'Hash for the digest, the AF splitter and PBKDF2')
            [CompletionResult]::new('--sector-size', '--sector-size', [CompletionResultType]::ParameterName, 'Encryption sector size in bytes (default: 4096 for LUKS2 image files, else 512)')
            [CompletionResult]::new('--pbkdf', '--pbkdf', [CompletionResultType]::ParameterName, 'Keyslot KDF (default: argon2id for LUKS2, pbkdf2 for LUKS1)')
            [CompletionResult]::new('--iter-time', '--iter-time', [CompletionResultType]::ParameterName, 'Milliseconds the keyslot KDF should take (benchmarked like cryptsetup)')
            [CompletionResult]::new('--pbkdf-force-iterations', '--pbkdf-force-iterations', [CompletionResultType]::ParameterName, 'Skip the benchmark: PBKDF2 iterations, or the Argon2 time cost')
            [CompletionResult]::new('--pbkdf-memory', '--pbkdf-memory', [CompletionResultType]::ParameterName, 'Argon2 memory cost in KiB, 32 to 4194304 (default: benchmarked, at most 1 GiB and half the RAM)')
            [CompletionResult]::new('--pbkdf-parallel', '--pbkdf-parallel', [CompletionResultType]::ParameterName, 'Argon2 threads, 1 to 4 (default: the CPU count, at most 4)')
            [CompletionResult]::new('--label', '--label', [CompletionResultType]::ParameterName, 'LUKS2 label')
            [CompletionResult]::new('--uuid', '--uuid', [CompletionResultType]::ParameterName, 'Volume UUID (default: random)')
            [CompletionResult]::new('--size', '--size', [CompletionResultType]::ParameterName, 'Payload size of a new image file: bytes, or with a K, M, G or T suffix (powers of 1024)')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Encrypt this raw disk image into TARGET (streamed; the payload is its size rounded up to a sector); with --format qcow2 also a plain qcow2 image')
            [CompletionResult]::new('--key-id', '--key-id', [CompletionResultType]::ParameterName, 'The key manager (Barbican) secret that holds the output''s secret: os_encrypt_key_id')
            [CompletionResult]::new('--key-deletion-policy', '--key-deletion-policy', [CompletionResultType]::ParameterName, 'Old spelling of --delete-key-with-image: on_image_deletion or do_not_delete')
            [CompletionResult]::new('--output-format', '--output-format', [CompletionResultType]::ParameterName, 'Format of the printed Glance properties (--glance), or of the ids printed with --key-manager or --upload (json: `{"image_id", "secret_id"}`; else one id a line)')
            [CompletionResult]::new('--key-manager', '--key-manager', [CompletionResultType]::ParameterName, 'Keep the image''s secret in a key manager: a new secret is stored there (its UUID becomes os_encrypt_key_id), or --secret names an existing one')
            [CompletionResult]::new('--secret', '--secret', [CompletionResultType]::ParameterName, 'An existing Barbican secret (barbican://UUID, https://HOST/…/v1/secrets/UUID, UUID) whose payload gives the passphrase (`symmetric`: its lowercase hex, as os-brick derives it)')
            [CompletionResult]::new('--upload', '--upload', [CompletionResultType]::ParameterName, 'Upload the image to Glance as NAME (with its disk and container formats and every os_encrypt_* property), and register it as a consumer of its secret; on any failure what was created is deleted again')
            [CompletionResult]::new('--os-cloud', '--os-cloud', [CompletionResultType]::ParameterName, 'The cloud of clouds.yaml to log in to (OS_CLOUD); OS_* variables override its settings')
            [CompletionResult]::new('--vault-addr', '--vault-addr', [CompletionResultType]::ParameterName, 'Server address, e.g. https://vault:8200 [env: VAULT_ADDR, BAO_ADDR]')
            [CompletionResult]::new('--vault-namespace', '--vault-namespace', [CompletionResultType]::ParameterName, 'Namespace (X-Vault-Namespace) [env: VAULT_NAMESPACE, BAO_NAMESPACE]')
            [CompletionResult]::new('--vault-cacert', '--vault-cacert', [CompletionResultType]::ParameterName, 'PEM file of the CA that signed the server''s certificate [env: VAULT_CACERT, BAO_CACERT]')
            [CompletionResult]::new('--vault-capath', '--vault-capath', [CompletionResultType]::ParameterName, 'Directory of PEM CA certificates [env: VAULT_CAPATH, BAO_CAPATH]')
            [CompletionResult]::new('--vault-client-cert', '--vault-client-cert', [CompletionResultType]::ParameterName, 'PEM client certificate for TLS client authentication [env: VAULT_CLIENT_CERT]')
            [CompletionResult]::new('--vault-client-key', '--vault-client-key', [CompletionResultType]::ParameterName, 'PEM key of --vault-client-cert [env: VAULT_CLIENT_KEY]')
            [CompletionResult]::new('--vault-auth', '--vault-auth', [CompletionResultType]::ParameterName, 'How to log in [env: CRYPTADM_VAULT_AUTH] [default: token]')
            [CompletionResult]::new('--vault-auth-mount', '--vault-auth-mount', [CompletionResultType]::ParameterName, 'Mount path of the auth method [env: CRYPTADM_VAULT_AUTH_MOUNT] [default: approle, jwt or kubernetes]')
            [CompletionResult]::new('--vault-role', '--vault-role', [CompletionResultType]::ParameterName, 'Role to log in as (jwt, kubernetes) [env: CRYPTADM_VAULT_ROLE]')
            [CompletionResult]::new('--vault-role-id', '--vault-role-id', [CompletionResultType]::ParameterName, 'AppRole role id [env: CRYPTADM_VAULT_ROLE_ID]')
            [CompletionResult]::new('--vault-secret-id-file', '--vault-secret-id-file', [CompletionResultType]::ParameterName, 'File holding the AppRole secret id (0600) [env: CRYPTADM_VAULT_SECRET_ID_FILE]')
            [CompletionResult]::new('--vault-jwt-file', '--vault-jwt-file', [CompletionResultType]::ParameterName, 'File holding the JWT (0600; kubernetes default: the pod''s service-account token) [env: CRYPTADM_VAULT_JWT_FILE]')
            [CompletionResult]::new('--vault-token-file', '--vault-token-file', [CompletionResultType]::ParameterName, 'File holding a token (0600), instead of VAULT_TOKEN or ~/.vault-token')
            [CompletionResult]::new('--aws-region', '--aws-region', [CompletionResultType]::ParameterName, 'Region of requests whose resource is not an ARN [env: AWS_REGION, AWS_DEFAULT_REGION]')
            [CompletionResult]::new('--aws-endpoint-url', '--aws-endpoint-url', [CompletionResultType]::ParameterName, 'Endpoint of every AWS service, e.g. http://127.0.0.1:5000 (LocalStack, MinIO for S3) [env: AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL]')
            [CompletionResult]::new('--aws-profile', '--aws-profile', [CompletionResultType]::ParameterName, 'Profile of ~/.aws/config and ~/.aws/credentials [env: AWS_PROFILE] [default: default]')
            [CompletionResult]::new('--aws-ca-bundle', '--aws-ca-bundle', [CompletionResultType]::ParameterName, 'PEM bundle of CAs trusted for AWS endpoints besides the system roots [env: AWS_CA_BUNDLE]')
            [CompletionResult]::new('--kmip-server', '--kmip-server', [CompletionResultType]::ParameterName, 'KMIP server, HOST:PORT (5696 is KMIP''s port) [env: CRYPTADM_KMIP_SERVER]')
            [CompletionResult]::new('--kmip-cacert', '--kmip-cacert', [CompletionResultType]::ParameterName, 'PEM file of the CA that signed the KMIP server''s certificate [env: CRYPTADM_KMIP_CACERT]')
            [CompletionResult]::new('--kmip-client-cert', '--kmip-client-cert', [CompletionResultType]::ParameterName, 'PEM client certificate for TLS client authentication [env: CRYPTADM_KMIP_CLIENT_CERT]')
            [CompletionResult]::new('--kmip-client-key', '--kmip-client-key', [CompletionResultType]::ParameterName, 'PEM key of --kmip-client-cert [env: CRYPTADM_KMIP_CLIENT_KEY]')
            [CompletionResult]::new('--kmip-username', '--kmip-username', [CompletionResultType]::ParameterName, 'Username of a KMIP Username and Password credential [env: CRYPTADM_KMIP_USERNAME]')
            [CompletionResult]::new('--kmip-password-file', '--kmip-password-file', [CompletionResultType]::ParameterName, 'File holding the credential''s password [env: CRYPTADM_KMIP_PASSWORD_FILE, CRYPTADM_KMIP_PASSWORD]')
            [CompletionResult]::new('--clevis-pin', '--clevis-pin', [CompletionResultType]::ParameterName, 'Clevis pin to encrypt to: `tang` (one Tang server), `tpm2` (this machine''s TPM) or `sss` (a threshold of pins), as `clevis encrypt PIN`')
            [CompletionResult]::new('--clevis-config', '--clevis-config', [CompletionResultType]::ParameterName, 'The pin''s configuration, the JSON `clevis encrypt` takes: `{"url":URL,"thp":THUMBPRINT}` for tang, `{"pcr_ids":"7","pcr_bank":"sha256"}` for tpm2 (also `hash`, `key` ecc|rsa, `pcr_digest`), `{"t":2,"pins":{"tang":[{"url":…},{"url":…}],"tpm2":{…}}}` for sss, whose pins may also be cryptadm''s key-manager pins `aws-kms`, `vault-transit` and `kmip`, each `[{"key":REFERENCE}]` (docs/threshold.md); `"adv"` may name an advertisement file')
            [CompletionResult]::new('--tpm2-device', '--tpm2-device', [CompletionResultType]::ParameterName, 'The TPM of `tpm2` pins: a device path or a TCTI string (`device:PATH`, `swtpm:host=H,port=P`, `mssim:host=H,port=P`); else TPM2TOOLS_TCTI, else /dev/tpmrm0')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Overall deadline of the command''s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]')
            [CompletionResult]::new('--glance', '--glance', [CompletionResultType]::ParameterName, 'Print the output''s Glance properties, the `openstack image create` line and, when encrypted, the `openstack secret store` line for its secret')
            [CompletionResult]::new('--delete-key-with-image', '--delete-key-with-image', [CompletionResultType]::ParameterName, 'Delete the secret with the image (os_encrypt_key_deletion_policy=True; default False: the secret outlives the image)')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Overwrite an existing LUKS header or a non-empty target')
            [CompletionResult]::new('--vault-skip-verify', '--vault-skip-verify', [CompletionResultType]::ParameterName, 'Accept any server certificate (insecure; VAULT_SKIP_VERIFY alone is refused)')
            [CompletionResult]::new('--clevis-trust-adv', '--clevis-trust-adv', [CompletionResultType]::ParameterName, 'Trust a Tang advertisement that no `thp` pins, as fetched (clevis encrypt''s `-y`); without it such a server is refused and its signing-key thumbprints are printed')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'cryptadm;disk;inspect' {
            [CompletionResult]::new('--output-format', '--output-format', [CompletionResultType]::ParameterName, 'Format of the printed document')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Overall deadline of the command''s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'cryptadm;disk;decrypt' {
            [CompletionResult]::new('--passphrase-file', '--passphrase-file', [CompletionResultType]::ParameterName, 'Read the passphrase from FILE (`-`: standard input), byte for byte: no newline is stripped')
            [CompletionResult]::new('--key-file', '--key-file', [CompletionResultType]::ParameterName, 'Read the passphrase from FILE (`-`: standard input), the whole file byte for byte, as cryptsetup does')
            [CompletionResult]::new('--out', '--out', [CompletionResultType]::ParameterName, 'Where to write the raw image (`-`: standard output): a new file, or a block device (written in place)')
            [CompletionResult]::new('--tpm2-device', '--tpm2-device', [CompletionResultType]::ParameterName, 'The TPM of the binding''s tpm2 pins: a device path or a TCTI string (`device:PATH`, `swtpm:host=H,port=P`); else TPM2TOOLS_TCTI, else /dev/tpmrm0')
            [CompletionResult]::new('--vault-addr', '--vault-addr', [CompletionResultType]::ParameterName, 'Server address, e.g. https://vault:8200 [env: VAULT_ADDR, BAO_ADDR]')
            [CompletionResult]::new('--vault-namespace', '--vault-namespace', [CompletionResultType]::ParameterName, 'Namespace (X-Vault-Namespace) [env: VAULT_NAMESPACE, BAO_NAMESPACE]')
            [CompletionResult]::new('--vault-cacert', '--vault-cacert', [CompletionResultType]::ParameterName, 'PEM file of the CA that signed the server''s certificate [env: VAULT_CACERT, BAO_CACERT]')
            [CompletionResult]::new('--vault-capath', '--vault-capath', [CompletionResultType]::ParameterName, 'Directory of PEM CA certificates [env: VAULT_CAPATH, BAO_CAPATH]')
            [CompletionResult]::new('--vault-client-cert', '--vault-client-cert', [CompletionResultType]::ParameterName, 'PEM client certificate for TLS client authentication [env: VAULT_CLIENT_CERT]')
            [CompletionResult]::new('--vault-client-key', '--vault-client-key', [CompletionResultType]::ParameterName, 'PEM key of --vault-client-cert [env: VAULT_CLIENT_KEY]')
            [CompletionResult]::new('--vault-auth', '--vault-auth', [CompletionResultType]::ParameterName, 'How to log in [env: CRYPTADM_VAULT_AUTH] [default: token]')
            [CompletionResult]::new('--vault-auth-mount', '--vault-auth-mount', [CompletionResultType]::ParameterName, 'Mount path of the auth method [env: CRYPTADM_VAULT_AUTH_MOUNT] [default: approle, jwt or kubernetes]')
            [CompletionResult]::new('--vault-role', '--vault-role', [CompletionResultType]::ParameterName, 'Role to log in as (jwt, kubernetes) [env: CRYPTADM_VAULT_ROLE]')
            [CompletionResult]::new('--vault-role-id', '--vault-role-id', [CompletionResultType]::ParameterName, 'AppRole role id [env: CRYPTADM_VAULT_ROLE_ID]')
            [CompletionResult]::new('--vault-secret-id-file', '--vault-secret-id-file', [CompletionResultType]::ParameterName, 'File holding the AppRole secret id (0600) [env: CRYPTADM_VAULT_SECRET_ID_FILE]')
            [CompletionResult]::new('--vault-jwt-file', '--vault-jwt-file', [CompletionResultType]::ParameterName, 'File holding the JWT (0600; kubernetes default: the pod''s service-account token) [env: CRYPTADM_VAULT_JWT_FILE]')
            [CompletionResult]::new('--vault-token-file', '--vault-token-file', [CompletionResultType]::ParameterName, 'File holding a token (0600), instead of VAULT_TOKEN or ~/.vault-token')
            [CompletionResult]::new('--aws-region', '--aws-region', [CompletionResultType]::ParameterName, 'Region of requests whose resource is not an ARN [env: AWS_REGION, AWS_DEFAULT_REGION]')
            [CompletionResult]::new('--aws-endpoint-url', '--aws-endpoint-url', [CompletionResultType]::ParameterName, 'Endpoint of every AWS service, e.g. http://127.0.0.1:5000 (LocalStack, MinIO for S3) [env: AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL]')
            [CompletionResult]::new('--aws-profile', '--aws-profile', [CompletionResultType]::ParameterName, 'Profile of ~/.aws/config and ~/.aws/credentials [env: AWS_PROFILE] [default: default]')
            [CompletionResult]::new('--aws-ca-bundle', '--aws-ca-bundle', [CompletionResultType]::ParameterName, 'PEM bundle of CAs trusted for AWS endpoints besides the system roots [env: AWS_CA_BUNDLE]')
            [CompletionResult]::new('--kmip-server', '--kmip-server', [CompletionResultType]::ParameterName, 'KMIP server, HOST:PORT (5696 is KMIP''s port) [env: CRYPTADM_KMIP_SERVER]')
            [CompletionResult]::new('--kmip-cacert', '--kmip-cacert', [CompletionResultType]::ParameterName, 'PEM file of the CA that signed the KMIP server''s certificate [env: CRYPTADM_KMIP_CACERT]')
            [CompletionResult]::new('--kmip-client-cert', '--kmip-client-cert', [CompletionResultType]::ParameterName, 'PEM client certificate for TLS client authentication [env: CRYPTADM_KMIP_CLIENT_CERT]')
            [CompletionResult]::new('--kmip-client-key', '--kmip-client-key', [CompletionResultType]::ParameterName, 'PEM key of --kmip-client-cert [env: CRYPTADM_KMIP_CLIENT_KEY]')
            [CompletionResult]::new('--kmip-username', '--kmip-username', [CompletionResultType]::ParameterName, 'Username of a KMIP Username and Password credential [env: CRYPTADM_KMIP_USERNAME]')
            [CompletionResult]::new('--kmip-password-file', '--kmip-password-file', [CompletionResultType]::ParameterName, 'File holding the credential''s password [env: CRYPTADM_KMIP_PASSWORD_FILE, CRYPTADM_KMIP_PASSWORD]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Overall deadline of the command''s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Replace a non-empty --out file, or overwrite a block device that holds data')
            [CompletionResult]::new('--clevis', '--clevis', [CompletionResultType]::ParameterName, 'Unlock through the volume''s clevis binding (its LUKS2 `clevis` token), asking its Tang servers and TPM, as `clevis luks unlock` does, instead of with a passphrase')
            [CompletionResult]::new('--tpm2', '--tpm2', [CompletionResultType]::ParameterName, 'Unlock through the volume''s TPM2 enrolment (its LUKS2 `systemd-tpm2` token, as systemd-cryptenroll writes it), asking the TPM, instead of with a passphrase; the PIN of one enrolled with a PIN (--tpm2-with-pin) is read as a passphrase is (--passphrase-file, --key-file, or asked on a terminal)')
            [CompletionResult]::new('--vault-skip-verify', '--vault-skip-verify', [CompletionResultType]::ParameterName, 'Accept any server certificate (insecure; VAULT_SKIP_VERIFY alone is refused)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'cryptadm;disk;convert' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Container of the output (default: the source''s)')
            [CompletionResult]::new('--encryption-key', '--encryption-key', [CompletionResultType]::ParameterName, 'Which key encrypts the output (Nova''s snapshot `encryption.key`)')
            [CompletionResult]::new('--passphrase-file', '--passphrase-file', [CompletionResultType]::ParameterName, 'Read the passphrase from FILE (`-`: standard input), byte for byte: no newline is stripped')
            [CompletionResult]::new('--key-file', '--key-file', [CompletionResultType]::ParameterName, 'Read the passphrase from FILE (`-`: standard input), the whole file byte for byte, as cryptsetup does')
            [CompletionResult]::new('--new-key-file', '--new-key-file', [CompletionResultType]::ParameterName, 'The output''s secret: read for `existing`, created for `new` (0600; an existing file is never overwritten)')
            [CompletionResult]::new('--secret-type', '--secret-type', [CompletionResultType]::ParameterName, 'How the output''s secret becomes its LUKS passphrase: verbatim (`passphrase`, Nova; the default) or lowercase hex of the key bytes (`symmetric`, Cinder and os-brick); a key-manager secret''s own Barbican type decides, and a contradicting --secret-type is refused')
            [CompletionResult]::new('--source-secret-type', '--source-secret-type', [CompletionResultType]::ParameterName, 'How the source''s --key-file becomes its passphrase (default: --secret-type)')
            [CompletionResult]::new('--source-secret', '--source-secret', [CompletionResultType]::ParameterName, 'The source image''s Barbican secret (its os_encrypt_key_id, UUID or href): the source''s passphrase is read from the key manager (same rules as --secret), so no passphrase needs to be on disk')
            [CompletionResult]::new('--cluster-size', '--cluster-size', [CompletionResultType]::ParameterName, 'qcow2 cluster size in bytes, 512 to 2M, a power of two (default 64K, QEMU''s)')
            [CompletionResult]::new('--iter-time', '--iter-time', [CompletionResultType]::ParameterName, 'Milliseconds the keyslot''s PBKDF2 should take (benchmarked like cryptsetup)')
            [CompletionResult]::new('--pbkdf-force-iterations', '--pbkdf-force-iterations', [CompletionResultType]::ParameterName, 'Skip the benchmark: PBKDF2 iterations of the keyslot (the digest takes the minimum, 1000)')
            [CompletionResult]::new('--key-id', '--key-id', [CompletionResultType]::ParameterName, 'The key manager (Barbican) secret that holds the output''s secret: os_encrypt_key_id')
            [CompletionResult]::new('--key-deletion-policy', '--key-deletion-policy', [CompletionResultType]::ParameterName, 'Old spelling of --delete-key-with-image: on_image_deletion or do_not_delete')
            [CompletionResult]::new('--output-format', '--output-format', [CompletionResultType]::ParameterName, 'Format of the printed Glance properties (--glance), or of the ids printed with --key-manager or --upload (json: `{"image_id", "secret_id"}`; else one id a line)')
            [CompletionResult]::new('--key-manager', '--key-manager', [CompletionResultType]::ParameterName, 'Keep the image''s secret in a key manager: a new secret is stored there (its UUID becomes os_encrypt_key_id), or --secret names an existing one')
            [CompletionResult]::new('--secret', '--secret', [CompletionResultType]::ParameterName, 'An existing Barbican secret (barbican://UUID, https://HOST/…/v1/secrets/UUID, UUID) whose payload gives the passphrase (`symmetric`: its lowercase hex, as os-brick derives it)')
            [CompletionResult]::new('--upload', '--upload', [CompletionResultType]::ParameterName, 'Upload the image to Glance as NAME (with its disk and container formats and every os_encrypt_* property), and register it as a consumer of its secret; on any failure what was created is deleted again')
            [CompletionResult]::new('--os-cloud', '--os-cloud', [CompletionResultType]::ParameterName, 'The cloud of clouds.yaml to log in to (OS_CLOUD); OS_* variables override its settings')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Overall deadline of the command''s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]')
            [CompletionResult]::new('--glance', '--glance', [CompletionResultType]::ParameterName, 'Print the output''s Glance properties, the `openstack image create` line and, when encrypted, the `openstack secret store` line for its secret')
            [CompletionResult]::new('--delete-key-with-image', '--delete-key-with-image', [CompletionResultType]::ParameterName, 'Delete the secret with the image (os_encrypt_key_deletion_policy=True; default False: the secret outlives the image)')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Replace DST if it exists')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'cryptadm;disk;clevis-bind' {
            [CompletionResult]::new('--passphrase-file', '--passphrase-file', [CompletionResultType]::ParameterName, 'Read the passphrase from FILE (`-`: standard input), byte for byte: no newline is stripped')
            [CompletionResult]::new('--key-file', '--key-file', [CompletionResultType]::ParameterName, 'Read the passphrase from FILE (`-`: standard input), the whole file byte for byte, as cryptsetup does')
            [CompletionResult]::new('--vault-addr', '--vault-addr', [CompletionResultType]::ParameterName, 'Server address, e.g. https://vault:8200 [env: VAULT_ADDR, BAO_ADDR]')
            [CompletionResult]::new('--vault-namespace', '--vault-namespace', [CompletionResultType]::ParameterName, 'Namespace (X-Vault-Namespace) [env: VAULT_NAMESPACE, BAO_NAMESPACE]')
            [CompletionResult]::new('--vault-cacert', '--vault-cacert', [CompletionResultType]::ParameterName, 'PEM file of the CA that signed the server''s certificate [env: VAULT_CACERT, BAO_CACERT]')
            [CompletionResult]::new('--vault-capath', '--vault-capath', [CompletionResultType]::ParameterName, 'Directory of PEM CA certificates [env: VAULT_CAPATH, BAO_CAPATH]')
            [CompletionResult]::new('--vault-client-cert', '--vault-client-cert', [CompletionResultType]::ParameterName, 'PEM client certificate for TLS client authentication [env: VAULT_CLIENT_CERT]')
            [CompletionResult]::new('--vault-client-key', '--vault-client-key', [CompletionResultType]::ParameterName, 'PEM key of --vault-client-cert [env: VAULT_CLIENT_KEY]')
            [CompletionResult]::new('--vault-auth', '--vault-auth', [CompletionResultType]::ParameterName, 'How to log in [env: CRYPTADM_VAULT_AUTH] [default: token]')
            [CompletionResult]::new('--vault-auth-mount', '--vault-auth-mount', [CompletionResultType]::ParameterName, 'Mount path of the auth method [env: CRYPTADM_VAULT_AUTH_MOUNT] [default: approle, jwt or kubernetes]')
            [CompletionResult]::new('--vault-role', '--vault-role', [CompletionResultType]::ParameterName, 'Role to log in as (jwt, kubernetes) [env: CRYPTADM_VAULT_ROLE]')
            [CompletionResult]::new('--vault-role-id', '--vault-role-id', [CompletionResultType]::ParameterName, 'AppRole role id [env: CRYPTADM_VAULT_ROLE_ID]')
            [CompletionResult]::new('--vault-secret-id-file', '--vault-secret-id-file', [CompletionResultType]::ParameterName, 'File holding the AppRole secret id (0600) [env: CRYPTADM_VAULT_SECRET_ID_FILE]')
            [CompletionResult]::new('--vault-jwt-file', '--vault-jwt-file', [CompletionResultType]::ParameterName, 'File holding the JWT (0600; kubernetes default: the pod''s service-account token) [env: CRYPTADM_VAULT_JWT_FILE]')
            [CompletionResult]::new('--vault-token-file', '--vault-token-file', [CompletionResultType]::ParameterName, 'File holding a token (0600), instead of VAULT_TOKEN or ~/.vault-token')
            [CompletionResult]::new('--aws-region', '--aws-region', [CompletionResultType]::ParameterName, 'Region of requests whose resource is not an ARN [env: AWS_REGION, AWS_DEFAULT_REGION]')
            [CompletionResult]::new('--aws-endpoint-url', '--aws-endpoint-url', [CompletionResultType]::ParameterName, 'Endpoint of every AWS service, e.g. http://127.0.0.1:5000 (LocalStack, MinIO for S3) [env: AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL]')
            [CompletionResult]::new('--aws-profile', '--aws-profile', [CompletionResultType]::ParameterName, 'Profile of ~/.aws/config and ~/.aws/credentials [env: AWS_PROFILE] [default: default]')
            [CompletionResult]::new('--aws-ca-bundle', '--aws-ca-bundle', [CompletionResultType]::ParameterName, 'PEM bundle of CAs trusted for AWS endpoints besides the system roots [env: AWS_CA_BUNDLE]')
            [CompletionResult]::new('--kmip-server', '--kmip-server', [CompletionResultType]::ParameterName, 'KMIP server, HOST:PORT (5696 is KMIP''s port) [env: CRYPTADM_KMIP_SERVER]')
            [CompletionResult]::new('--kmip-cacert', '--kmip-cacert', [CompletionResultType]::ParameterName, 'PEM file of the CA that signed the KMIP server''s certificate [env: CRYPTADM_KMIP_CACERT]')
            [CompletionResult]::new('--kmip-client-cert', '--kmip-client-cert', [CompletionResultType]::ParameterName, 'PEM client certificate for TLS client authentication [env: CRYPTADM_KMIP_CLIENT_CERT]')
            [CompletionResult]::new('--kmip-client-key', '--kmip-client-key', [CompletionResultType]::ParameterName, 'PEM key of --kmip-client-cert [env: CRYPTADM_KMIP_CLIENT_KEY]')
            [CompletionResult]::new('--kmip-username', '--kmip-username', [CompletionResultType]::ParameterName, 'Username of a KMIP Username and Password credential [env: CRYPTADM_KMIP_USERNAME]')
            [CompletionResult]::new('--kmip-password-file', '--kmip-password-file', [CompletionResultType]::ParameterName, 'File holding the credential''s password [env: CRYPTADM_KMIP_PASSWORD_FILE, CRYPTADM_KMIP_PASSWORD]')
            [CompletionResult]::new('--clevis-pin', '--clevis-pin', [CompletionResultType]::ParameterName, 'Clevis pin to encrypt to: `tang` (one Tang server), `tpm2` (this machine''s TPM) or `sss` (a threshold of pins), as `clevis encrypt PIN`')
            [CompletionResult]::new('--clevis-config', '--clevis-config', [CompletionResultType]::ParameterName, 'The pin''s configuration, the JSON `clevis encrypt` takes: `{"url":URL,"thp":THUMBPRINT}` for tang, `{"pcr_ids":"7","pcr_bank":"sha256"}` for tpm2 (also `hash`, `key` ecc|rsa, `pcr_digest`), `{"t":2,"pins":{"tang":[{"url":…},{"url":…}],"tpm2":{…}}}` for sss, whose pins may also be cryptadm''s key-manager pins `aws-kms`, `vault-transit` and `kmip`, each `[{"key":REFERENCE}]` (docs/threshold.md); `"adv"` may name an advertisement file')
            [CompletionResult]::new('--tpm2-device', '--tpm2-device', [CompletionResultType]::ParameterName, 'The TPM of `tpm2` pins: a device path or a TCTI string (`device:PATH`, `swtpm:host=H,port=P`, `mssim:host=H,port=P`); else TPM2TOOLS_TCTI, else /dev/tpmrm0')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Overall deadline of the command''s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]')
            [CompletionResult]::new('--vault-skip-verify', '--vault-skip-verify', [CompletionResultType]::ParameterName, 'Accept any server certificate (insecure; VAULT_SKIP_VERIFY alone is refused)')
            [CompletionResult]::new('--clevis-trust-adv', '--clevis-trust-adv', [CompletionResultType]::ParameterName, 'Trust a Tang advertisement that no `thp` pins, as fetched (clevis encrypt''s `-y`); without it such a server is refused and its signing-key thumbprints are printed')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'cryptadm;disk;tpm2-enroll' {
            [CompletionResult]::new('--passphrase-file', '--passphrase-file', [CompletionResultType]::ParameterName, 'Read the passphrase from FILE (`-`: standard input), byte for byte: no newline is stripped')
            [CompletionResult]::new('--key-file', '--key-file', [CompletionResultType]::ParameterName, 'Read the passphrase from FILE (`-`: standard input), the whole file byte for byte, as cryptsetup does')
            [CompletionResult]::new('--tpm2-pcrs', '--tpm2-pcrs', [CompletionResultType]::ParameterName, 'The PCRs whose current values the secret is sealed to, e.g. `7` or `0,7` (systemd-cryptenroll''s --tpm2-pcrs, `+` separators accepted); empty: no PCR policy')
            [CompletionResult]::new('--tpm2-pcr-bank', '--tpm2-pcr-bank', [CompletionResultType]::ParameterName, 'The PCR bank of --tpm2-pcrs')
            [CompletionResult]::new('--tpm2-primary-alg', '--tpm2-primary-alg', [CompletionResultType]::ParameterName, 'The storage primary key''s algorithm')
            [CompletionResult]::new('--tpm2-device', '--tpm2-device', [CompletionResultType]::ParameterName, 'The TPM: a device path or a TCTI string (`device:PATH`, `swtpm:host=H,port=P`); else TPM2TOOLS_TCTI, else /dev/tpmrm0')
            [CompletionResult]::new('--tpm2-pin-file', '--tpm2-pin-file', [CompletionResultType]::ParameterName, 'Read the PIN of --tpm2-with-pin from FILE (`-`: standard input), the whole file byte for byte')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Overall deadline of the command''s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]')
            [CompletionResult]::new('--tpm2-with-pin', '--tpm2-with-pin', [CompletionResultType]::ParameterName, 'Also seal to a PIN, as systemd-cryptenroll --tpm2-with-pin=yes does (systemd-cryptsetup asks for it at boot); the PIN is read from --tpm2-pin-file')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'cryptadm;disk;help' {
            [CompletionResult]::new('luks-format', 'luks-format', [CompletionResultType]::ParameterValue, 'Create a LUKS2 or LUKS1 image (or format a block device), optionally encrypting a raw image into it')
            [CompletionResult]::new('inspect', 'inspect', [CompletionResultType]::ParameterValue, 'Show a LUKS1 or LUKS2 header, or a qcow2 image and its LUKS header: version, UUID, data segment, keyslots')
            [CompletionResult]::new('decrypt', 'decrypt', [CompletionResultType]::ParameterValue, 'Decrypt the payload of a LUKS1 or LUKS2 image or device, or a qcow2+LUKS image, into a raw image')
            [CompletionResult]::new('convert', 'convert', [CompletionResultType]::ParameterValue, 'Convert a disk image between raw, raw LUKS, qcow2 and qcow2+LUKS in one stream (qemu-img convert''s verb)')
            [CompletionResult]::new('clevis-bind', 'clevis-bind', [CompletionResultType]::ParameterValue, 'Bind a LUKS2 volume to Tang servers (clevis''s `tang` or `sss` pin), as `clevis luks bind` does')
            [CompletionResult]::new('tpm2-enroll', 'tpm2-enroll', [CompletionResultType]::ParameterValue, 'Enrol a LUKS2 volume with the TPM, as `systemd-cryptenroll --tpm2-device` does')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'cryptadm;disk;help;luks-format' {
            break
        }
        'cryptadm;disk;help;inspect' {
            break
        }
        'cryptadm;disk;help;decrypt' {
            break
        }
        'cryptadm;disk;help;convert' {
            break
        }
        'cryptadm;disk;help;clevis-bind' {
            break
        }
        'cryptadm;disk;help;tpm2-enroll' {
            break
        }
        'cryptadm;disk;help;help' {
            break
        }
        'cryptadm;volume' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Overall deadline of the command''s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('rotate', 'rotate', [CompletionResultType]::ParameterValue, 'Rotate the passphrase (key-encryption key) of a LUKS1 or LUKS2 volume')
            [CompletionResult]::new('serve', 'serve', [CompletionResultType]::ParameterValue, 'Serve CSI-Addons EncryptionKeyRotation over gRPC on a unix socket')
            [CompletionResult]::new('rewrap', 'rewrap', [CompletionResultType]::ParameterValue, 'Rotate the Transit key of a vault-kv:// key store and rewrap every stored passphrase')
            [CompletionResult]::new('import', 'import', [CompletionResultType]::ParameterValue, 'Store an existing volume''s passphrase in a key store, so that `volume rotate` takes the volume over')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'cryptadm;volume;rotate' {
            [CompletionResult]::new('--volume-id', '--volume-id', [CompletionResultType]::ParameterName, 'The volume''s id: its entry in the key store and the name of its lock')
            [CompletionResult]::new('--volume-path', '--volume-path', [CompletionResultType]::ParameterName, 'The LUKS1 or LUKS2 volume: an image file or a block device (default: found from the volume id, see --volume-path-template and --sysfs-root)')
            [CompletionResult]::new('--key-store', '--key-store', [CompletionResultType]::ParameterName, 'Key store: file:///DIR, vault-kv://MOUNT/PREFIX, kmip://PREFIX or NAME:REST')
            [CompletionResult]::new('--new-key-file', '--new-key-file', [CompletionResultType]::ParameterName, 'Set the passphrase in FILE (byte for byte) instead of generating one')
            [CompletionResult]::new('--request', '--request', [CompletionResultType]::ParameterName, 'The RPC''s request as JSON (`-`: standard input) instead of --volume-id and --volume-path')
            [CompletionResult]::new('--volume-path-template', '--volume-path-template', [CompletionResultType]::ParameterName, 'Find a volume without a path here: an absolute path with {volume_id}, which is replaced by the volume id with bytes outside [A-Za-z0-9._-] (and a leading .) written as %XX. Used when that path exists; otherwise the volume''s dm-crypt mapping is looked up in sysfs')
            [CompletionResult]::new('--sysfs-root', '--sysfs-root', [CompletionResultType]::ParameterName, 'Where sysfs is mounted, for finding a volume''s active dm-crypt mapping (a LUKS1/LUKS2 mapping named <volume id> or *-<volume id>, e.g. ceph-csi''s luks-rbd-<volume id>; its one backing device holds the header)')
            [CompletionResult]::new('--dev-root', '--dev-root', [CompletionResultType]::ParameterName, 'Where the backing devices of dm-crypt mappings are (<dev-root>/<kernel name>)')
            [CompletionResult]::new('--key-wrap', '--key-wrap', [CompletionResultType]::ParameterName, 'Store every passphrase wrapped, never in plain, by this key: vault-transit://MOUNT/KEY, aws-kms://ARN, arn:aws:kms:REGION:ACCOUNT:key/ID, …:alias/NAME or kmip://UID (any store; a store''s existing values must already be in this wrap''s form)')
            [CompletionResult]::new('--vault-addr', '--vault-addr', [CompletionResultType]::ParameterName, 'Server address, e.g. https://vault:8200 [env: VAULT_ADDR, BAO_ADDR]')
            [CompletionResult]::new('--vault-namespace', '--vault-namespace', [CompletionResultType]::ParameterName, 'Namespace (X-Vault-Namespace) [env: VAULT_NAMESPACE, BAO_NAMESPACE]')
            [CompletionResult]::new('--vault-cacert', '--vault-cacert', [CompletionResultType]::ParameterName, 'PEM file of the CA that signed the server''s certificate [env: VAULT_CACERT, BAO_CACERT]')
            [CompletionResult]::new('--vault-capath', '--vault-capath', [CompletionResultType]::ParameterName, 'Directory of PEM CA certificates [env: VAULT_CAPATH, BAO_CAPATH]')
            [CompletionResult]::new('--vault-client-cert', '--vault-client-cert', [CompletionResultType]::ParameterName, 'PEM client certificate for TLS client authentication [env: VAULT_CLIENT_CERT]')
            [CompletionResult]::new('--vault-client-key', '--vault-client-key', [CompletionResultType]::ParameterName, 'PEM key of --vault-client-cert [env: VAULT_CLIENT_KEY]')
            [CompletionResult]::new('--vault-auth', '--vault-auth', [CompletionResultType]::ParameterName, 'How to log in [env: CRYPTADM_VAULT_AUTH] [default: token]')
            [CompletionResult]::new('--vault-auth-mount', '--vault-auth-mount', [CompletionResultType]::ParameterName, 'Mount path of the auth method [env: CRYPTADM_VAULT_AUTH_MOUNT] [default: approle, jwt or kubernetes]')
            [CompletionResult]::new('--vault-role', '--vault-role', [CompletionResultType]::ParameterName, 'Role to log in as (jwt, kubernetes) [env: CRYPTADM_VAULT_ROLE]')
            [CompletionResult]::new('--vault-role-id', '--vault-role-id', [CompletionResultType]::ParameterName, 'AppRole role id [env: CRYPTADM_VAULT_ROLE_ID]')
            [CompletionResult]::new('--vault-secret-id-file', '--vault-secret-id-file', [CompletionResultType]::ParameterName, 'File holding the AppRole secret id (0600) [env: CRYPTADM_VAULT_SECRET_ID_FILE]')
            [CompletionResult]::new('--vault-jwt-file', '--vault-jwt-file', [CompletionResultType]::ParameterName, 'File holding the JWT (0600; kubernetes default: the pod''s service-account token) [env: CRYPTADM_VAULT_JWT_FILE]')
            [CompletionResult]::new('--vault-token-file', '--vault-token-file', [CompletionResultType]::ParameterName, 'File holding a token (0600), instead of VAULT_TOKEN or ~/.vault-token')
            [CompletionResult]::new('--kmip-server', '--kmip-server', [CompletionResultType]::ParameterName, 'KMIP server, HOST:PORT (5696 is KMIP''s port) [env: CRYPTADM_KMIP_SERVER]')
            [CompletionResult]::new('--kmip-cacert', '--kmip-cacert', [CompletionResultType]::ParameterName, 'PEM file of the CA that signed the KMIP server''s certificate [env: CRYPTADM_KMIP_CACERT]')
            [CompletionResult]::new('--kmip-client-cert', '--kmip-client-cert', [CompletionResultType]::ParameterName, 'PEM client certificate for TLS client authentication [env: CRYPTADM_KMIP_CLIENT_CERT]')
            [CompletionResult]::new('--kmip-client-key', '--kmip-client-key', [CompletionResultType]::ParameterName, 'PEM key of --kmip-client-cert [env: CRYPTADM_KMIP_CLIENT_KEY]')
            [CompletionResult]::new('--kmip-username', '--kmip-username', [CompletionResultType]::ParameterName, 'Username of a KMIP Username and Password credential [env: CRYPTADM_KMIP_USERNAME]')
            [CompletionResult]::new('--kmip-password-file', '--kmip-password-file', [CompletionResultType]::ParameterName, 'File holding the credential''s password [env: CRYPTADM_KMIP_PASSWORD_FILE, CRYPTADM_KMIP_PASSWORD]')
            [CompletionResult]::new('--aws-region', '--aws-region', [CompletionResultType]::ParameterName, 'Region of requests whose resource is not an ARN [env: AWS_REGION, AWS_DEFAULT_REGION]')
            [CompletionResult]::new('--aws-endpoint-url', '--aws-endpoint-url', [CompletionResultType]::ParameterName, 'Endpoint of every AWS service, e.g. http://127.0.0.1:5000 (LocalStack, MinIO for S3) [env: AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL]')
            [CompletionResult]::new('--aws-profile', '--aws-profile', [CompletionResultType]::ParameterName, 'Profile of ~/.aws/config and ~/.aws/credentials [env: AWS_PROFILE] [default: default]')
            [CompletionResult]::new('--aws-ca-bundle', '--aws-ca-bundle', [CompletionResultType]::ParameterName, 'PEM bundle of CAs trusted for AWS endpoints besides the system roots [env: AWS_CA_BUNDLE]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Overall deadline of the command''s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]')
            [CompletionResult]::new('--take-over-claim', '--take-over-claim', [CompletionResultType]::ParameterName, 'Take over another run''s rotation claim in the key store even before it expires (only when that run is known to be dead, e.g. its node is gone; see docs/volume-rotation.md)')
            [CompletionResult]::new('--vault-skip-verify', '--vault-skip-verify', [CompletionResultType]::ParameterName, 'Accept any server certificate (insecure; VAULT_SKIP_VERIFY alone is refused)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'cryptadm;volume;serve' {
            [CompletionResult]::new('--endpoint', '--endpoint', [CompletionResultType]::ParameterName, 'Where to listen: unix:///absolute/path.sock')
            [CompletionResult]::new('--key-store', '--key-store', [CompletionResultType]::ParameterName, 'Key store: file:///DIR, vault-kv://MOUNT/PREFIX, kmip://PREFIX or NAME:REST')
            [CompletionResult]::new('--drivername', '--drivername', [CompletionResultType]::ParameterName, 'The name GetIdentity returns: the CSI driver whose volumes this node rotates (the PV''s spec.csi.driver)')
            [CompletionResult]::new('--max-concurrent', '--max-concurrent', [CompletionResultType]::ParameterName, 'Rotations that run at once [default: half the memory / 4 GiB, between 1 and the number of CPUs]')
            [CompletionResult]::new('--max-queued', '--max-queued', [CompletionResultType]::ParameterName, 'Requests that may wait for a turn; more get ABORTED')
            [CompletionResult]::new('--volume-path-template', '--volume-path-template', [CompletionResultType]::ParameterName, 'Find a volume without a path here: an absolute path with {volume_id}, which is replaced by the volume id with bytes outside [A-Za-z0-9._-] (and a leading .) written as %XX. Used when that path exists; otherwise the volume''s dm-crypt mapping is looked up in sysfs')
            [CompletionResult]::new('--sysfs-root', '--sysfs-root', [CompletionResultType]::ParameterName, 'Where sysfs is mounted, for finding a volume''s active dm-crypt mapping (a LUKS1/LUKS2 mapping named <volume id> or *-<volume id>, e.g. ceph-csi''s luks-rbd-<volume id>; its one backing device holds the header)')
            [CompletionResult]::new('--dev-root', '--dev-root', [CompletionResultType]::ParameterName, 'Where the backing devices of dm-crypt mappings are (<dev-root>/<kernel name>)')
            [CompletionResult]::new('--key-wrap', '--key-wrap', [CompletionResultType]::ParameterName, 'Store every passphrase wrapped, never in plain, by this key: vault-transit://MOUNT/KEY, aws-kms://ARN, arn:aws:kms:REGION:ACCOUNT:key/ID, …:alias/NAME or kmip://UID (any store; a store''s existing values must already be in this wrap''s form)')
            [CompletionResult]::new('--vault-addr', '--vault-addr', [CompletionResultType]::ParameterName, 'Server address, e.g. https://vault:8200 [env: VAULT_ADDR, BAO_ADDR]')
            [CompletionResult]::new('--vault-namespace', '--vault-namespace', [CompletionResultType]::ParameterName, 'Namespace (X-Vault-Namespace) [env: VAULT_NAMESPACE, BAO_NAMESPACE]')
            [CompletionResult]::new('--vault-cacert', '--vault-cacert', [CompletionResultType]::ParameterName, 'PEM file of the CA that signed the server''s certificate [env: VAULT_CACERT, BAO_CACERT]')
            [CompletionResult]::new('--vault-capath', '--vault-capath', [CompletionResultType]::ParameterName, 'Directory of PEM CA certificates [env: VAULT_CAPATH, BAO_CAPATH]')
            [CompletionResult]::new('--vault-client-cert', '--vault-client-cert', [CompletionResultType]::ParameterName, 'PEM client certificate for TLS client authentication [env: VAULT_CLIENT_CERT]')
            [CompletionResult]::new('--vault-client-key', '--vault-client-key', [CompletionResultType]::ParameterName, 'PEM key of --vault-client-cert [env: VAULT_CLIENT_KEY]')
            [CompletionResult]::new('--vault-auth', '--vault-auth', [CompletionResultType]::ParameterName, 'How to log in [env: CRYPTADM_VAULT_AUTH] [default: token]')
            [CompletionResult]::new('--vault-auth-mount', '--vault-auth-mount', [CompletionResultType]::ParameterName, 'Mount path of the auth method [env: CRYPTADM_VAULT_AUTH_MOUNT] [default: approle, jwt or kubernetes]')
            [CompletionResult]::new('--vault-role', '--vault-role', [CompletionResultType]::ParameterName, 'Role to log in as (jwt, kubernetes) [env: CRYPTADM_VAULT_ROLE]')
            [CompletionResult]::new('--vault-role-id', '--vault-role-id', [CompletionResultType]::ParameterName, 'AppRole role id [env: CRYPTADM_VAULT_ROLE_ID]')
            [CompletionResult]::new('--vault-secret-id-file', '--vault-secret-id-file', [CompletionResultType]::ParameterName, 'File holding the AppRole secret id (0600) [env: CRYPTADM_VAULT_SECRET_ID_FILE]')
            [CompletionResult]::new('--vault-jwt-file', '--vault-jwt-file', [CompletionResultType]::ParameterName, 'File holding the JWT (0600; kubernetes default: the pod''s service-account token) [env: CRYPTADM_VAULT_JWT_FILE]')
            [CompletionResult]::new('--vault-token-file', '--vault-token-file', [CompletionResultType]::ParameterName, 'File holding a token (0600), instead of VAULT_TOKEN or ~/.vault-token')
            [CompletionResult]::new('--kmip-server', '--kmip-server', [CompletionResultType]::ParameterName, 'KMIP server, HOST:PORT (5696 is KMIP''s port) [env: CRYPTADM_KMIP_SERVER]')
            [CompletionResult]::new('--kmip-cacert', '--kmip-cacert', [CompletionResultType]::ParameterName, 'PEM file of the CA that signed the KMIP server''s certificate [env: CRYPTADM_KMIP_CACERT]')
            [CompletionResult]::new('--kmip-client-cert', '--kmip-client-cert', [CompletionResultType]::ParameterName, 'PEM client certificate for TLS client authentication [env: CRYPTADM_KMIP_CLIENT_CERT]')
            [CompletionResult]::new('--kmip-client-key', '--kmip-client-key', [CompletionResultType]::ParameterName, 'PEM key of --kmip-client-cert [env: CRYPTADM_KMIP_CLIENT_KEY]')
            [CompletionResult]::new('--kmip-username', '--kmip-username', [CompletionResultType]::ParameterName, 'Username of a KMIP Username and Password credential [env: CRYPTADM_KMIP_USERNAME]')
            [CompletionResult]::new('--kmip-password-file', '--kmip-password-file', [CompletionResultType]::ParameterName, 'File holding the credential''s password [env: CRYPTADM_KMIP_PASSWORD_FILE, CRYPTADM_KMIP_PASSWORD]')
            [CompletionResult]::new('--aws-region', '--aws-region', [CompletionResultType]::ParameterName, 'Region of requests whose resource is not an ARN [env: AWS_REGION, AWS_DEFAULT_REGION]')
            [CompletionResult]::new('--aws-endpoint-url', '--aws-endpoint-url', [CompletionResultType]::ParameterName, 'Endpoint of every AWS service, e.g. http://127.0.0.1:5000 (LocalStack, MinIO for S3) [env: AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL]')
            [CompletionResult]::new('--aws-profile', '--aws-profile', [CompletionResultType]::ParameterName, 'Profile of ~/.aws/config and ~/.aws/credentials [env: AWS_PROFILE] [default: default]')
            [CompletionResult]::new('--aws-ca-bundle', '--aws-ca-bundle', [CompletionResultType]::ParameterName, 'PEM bundle of CAs trusted for AWS endpoints besides the system roots [env: AWS_CA_BUNDLE]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Overall deadline of the command''s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]')
            [CompletionResult]::new('--vault-skip-verify', '--vault-skip-verify', [CompletionResultType]::ParameterName, 'Accept any server certificate (insecure; VAULT_SKIP_VERIFY alone is refused)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'cryptadm;volume;rewrap' {
            [CompletionResult]::new('--key-store', '--key-store', [CompletionResultType]::ParameterName, 'The key store: vault-kv://MOUNT/PREFIX or file:///DIR (wrapped by Transit or AWS KMS)')
            [CompletionResult]::new('--key-wrap', '--key-wrap', [CompletionResultType]::ParameterName, 'The key that wraps the store''s values: vault-transit://MOUNT/KEY or aws-kms://ARN, also written as the bare ARN arn:aws:kms:REGION:ACCOUNT:key/ID, …:alias/NAME (vault-kv:// and file:// stores)')
            [CompletionResult]::new('--vault-addr', '--vault-addr', [CompletionResultType]::ParameterName, 'Server address, e.g. https://vault:8200 [env: VAULT_ADDR, BAO_ADDR]')
            [CompletionResult]::new('--vault-namespace', '--vault-namespace', [CompletionResultType]::ParameterName, 'Namespace (X-Vault-Namespace) [env: VAULT_NAMESPACE, BAO_NAMESPACE]')
            [CompletionResult]::new('--vault-cacert', '--vault-cacert', [CompletionResultType]::ParameterName, 'PEM file of the CA that signed the server''s certificate [env: VAULT_CACERT, BAO_CACERT]')
            [CompletionResult]::new('--vault-capath', '--vault-capath', [CompletionResultType]::ParameterName, 'Directory of PEM CA certificates [env: VAULT_CAPATH, BAO_CAPATH]')
            [CompletionResult]::new('--vault-client-cert', '--vault-client-cert', [CompletionResultType]::ParameterName, 'PEM client certificate for TLS client authentication [env: VAULT_CLIENT_CERT]')
            [CompletionResult]::new('--vault-client-key', '--vault-client-key', [CompletionResultType]::ParameterName, 'PEM key of --vault-client-cert [env: VAULT_CLIENT_KEY]')
            [CompletionResult]::new('--vault-auth', '--vault-auth', [CompletionResultType]::ParameterName, 'How to log in [env: CRYPTADM_VAULT_AUTH] [default: token]')
            [CompletionResult]::new('--vault-auth-mount', '--vault-auth-mount', [CompletionResultType]::ParameterName, 'Mount path of the auth method [env: CRYPTADM_VAULT_AUTH_MOUNT] [default: approle, jwt or kubernetes]')
            [CompletionResult]::new('--vault-role', '--vault-role', [CompletionResultType]::ParameterName, 'Role to log in as (jwt, kubernetes) [env: CRYPTADM_VAULT_ROLE]')
            [CompletionResult]::new('--vault-role-id', '--vault-role-id', [CompletionResultType]::ParameterName, 'AppRole role id [env: CRYPTADM_VAULT_ROLE_ID]')
            [CompletionResult]::new('--vault-secret-id-file', '--vault-secret-id-file', [CompletionResultType]::ParameterName, 'File holding the AppRole secret id (0600) [env: CRYPTADM_VAULT_SECRET_ID_FILE]')
            [CompletionResult]::new('--vault-jwt-file', '--vault-jwt-file', [CompletionResultType]::ParameterName, 'File holding the JWT (0600; kubernetes default: the pod''s service-account token) [env: CRYPTADM_VAULT_JWT_FILE]')
            [CompletionResult]::new('--vault-token-file', '--vault-token-file', [CompletionResultType]::ParameterName, 'File holding a token (0600), instead of VAULT_TOKEN or ~/.vault-token')
            [CompletionResult]::new('--aws-region', '--aws-region', [CompletionResultType]::ParameterName, 'Region of requests whose resource is not an ARN [env: AWS_REGION, AWS_DEFAULT_REGION]')
            [CompletionResult]::new('--aws-endpoint-url', '--aws-endpoint-url', [CompletionResultType]::ParameterName, 'Endpoint of every AWS service, e.g. http://127.0.0.1:5000 (LocalStack, MinIO for S3) [env: AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL]')
            [CompletionResult]::new('--aws-profile', '--aws-profile', [CompletionResultType]::ParameterName, 'Profile of ~/.aws/config and ~/.aws/credentials [env: AWS_PROFILE] [default: default]')
            [CompletionResult]::new('--aws-ca-bundle', '--aws-ca-bundle', [CompletionResultType]::ParameterName, 'PEM bundle of CAs trusted for AWS endpoints besides the system roots [env: AWS_CA_BUNDLE]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Overall deadline of the command''s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]')
            [CompletionResult]::new('--no-rotate', '--no-rotate', [CompletionResultType]::ParameterName, 'Rewrap only; do not rotate the Transit key first')
            [CompletionResult]::new('--vault-skip-verify', '--vault-skip-verify', [CompletionResultType]::ParameterName, 'Accept any server certificate (insecure; VAULT_SKIP_VERIFY alone is refused)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'cryptadm;volume;import' {
            [CompletionResult]::new('--volume-id', '--volume-id', [CompletionResultType]::ParameterName, 'The volume''s id: its entry in the key store')
            [CompletionResult]::new('--volume-path', '--volume-path', [CompletionResultType]::ParameterName, 'The LUKS1 or LUKS2 volume the passphrase opens: an image file or a block device')
            [CompletionResult]::new('--passphrase-file', '--passphrase-file', [CompletionResultType]::ParameterName, 'The passphrase that opens the volume now, byte for byte (`-`: standard input)')
            [CompletionResult]::new('--key-store', '--key-store', [CompletionResultType]::ParameterName, 'Key store: file:///DIR, vault-kv://MOUNT/PREFIX, kmip://PREFIX or NAME:REST')
            [CompletionResult]::new('--key-wrap', '--key-wrap', [CompletionResultType]::ParameterName, 'Store every passphrase wrapped, never in plain, by this key: vault-transit://MOUNT/KEY, aws-kms://ARN, arn:aws:kms:REGION:ACCOUNT:key/ID, …:alias/NAME or kmip://UID (any store; a store''s existing values must already be in this wrap''s form)')
            [CompletionResult]::new('--vault-addr', '--vault-addr', [CompletionResultType]::ParameterName, 'Server address, e.g. https://vault:8200 [env: VAULT_ADDR, BAO_ADDR]')
            [CompletionResult]::new('--vault-namespace', '--vault-namespace', [CompletionResultType]::ParameterName, 'Namespace (X-Vault-Namespace) [env: VAULT_NAMESPACE, BAO_NAMESPACE]')
            [CompletionResult]::new('--vault-cacert', '--vault-cacert', [CompletionResultType]::ParameterName, 'PEM file of the CA that signed the server''s certificate [env: VAULT_CACERT, BAO_CACERT]')
            [CompletionResult]::new('--vault-capath', '--vault-capath', [CompletionResultType]::ParameterName, 'Directory of PEM CA certificates [env: VAULT_CAPATH, BAO_CAPATH]')
            [CompletionResult]::new('--vault-client-cert', '--vault-client-cert', [CompletionResultType]::ParameterName, 'PEM client certificate for TLS client authentication [env: VAULT_CLIENT_CERT]')
            [CompletionResult]::new('--vault-client-key', '--vault-client-key', [CompletionResultType]::ParameterName, 'PEM key of --vault-client-cert [env: VAULT_CLIENT_KEY]')
            [CompletionResult]::new('--vault-auth', '--vault-auth', [CompletionResultType]::ParameterName, 'How to log in [env: CRYPTADM_VAULT_AUTH] [default: token]')
            [CompletionResult]::new('--vault-auth-mount', '--vault-auth-mount', [CompletionResultType]::ParameterName, 'Mount path of the auth method [env: CRYPTADM_VAULT_AUTH_MOUNT] [default: approle, jwt or kubernetes]')
            [CompletionResult]::new('--vault-role', '--vault-role', [CompletionResultType]::ParameterName, 'Role to log in as (jwt, kubernetes) [env: CRYPTADM_VAULT_ROLE]')
            [CompletionResult]::new('--vault-role-id', '--vault-role-id', [CompletionResultType]::ParameterName, 'AppRole role id [env: CRYPTADM_VAULT_ROLE_ID]')
            [CompletionResult]::new('--vault-secret-id-file', '--vault-secret-id-file', [CompletionResultType]::ParameterName, 'File holding the AppRole secret id (0600) [env: CRYPTADM_VAULT_SECRET_ID_FILE]')
            [CompletionResult]::new('--vault-jwt-file', '--vault-jwt-file', [CompletionResultType]::ParameterName, 'File holding the JWT (0600; kubernetes default: the pod''s service-account token) [env: CRYPTADM_VAULT_JWT_FILE]')
            [CompletionResult]::new('--vault-token-file', '--vault-token-file', [CompletionResultType]::ParameterName, 'File holding a token (0600), instead of VAULT_TOKEN or ~/.vault-token')
            [CompletionResult]::new('--kmip-server', '--kmip-server', [CompletionResultType]::ParameterName, 'KMIP server, HOST:PORT (5696 is KMIP''s port) [env: CRYPTADM_KMIP_SERVER]')
            [CompletionResult]::new('--kmip-cacert', '--kmip-cacert', [CompletionResultType]::ParameterName, 'PEM file of the CA that signed the KMIP server''s certificate [env: CRYPTADM_KMIP_CACERT]')
            [CompletionResult]::new('--kmip-client-cert', '--kmip-client-cert', [CompletionResultType]::ParameterName, 'PEM client certificate for TLS client authentication [env: CRYPTADM_KMIP_CLIENT_CERT]')
            [CompletionResult]::new('--kmip-client-key', '--kmip-client-key', [CompletionResultType]::ParameterName, 'PEM key of --kmip-client-cert [env: CRYPTADM_KMIP_CLIENT_KEY]')
            [CompletionResult]::new('--kmip-username', '--kmip-username', [CompletionResultType]::ParameterName, 'Username of a KMIP Username and Password credential [env: CRYPTADM_KMIP_USERNAME]')
            [CompletionResult]::new('--kmip-password-file', '--kmip-password-file', [CompletionResultType]::ParameterName, 'File holding the credential''s password [env: CRYPTADM_KMIP_PASSWORD_FILE, CRYPTADM_KMIP_PASSWORD]')
            [CompletionResult]::new('--aws-region', '--aws-region', [CompletionResultType]::ParameterName, 'Region of requests whose resource is not an ARN [env: AWS_REGION, AWS_DEFAULT_REGION]')
            [CompletionResult]::new('--aws-endpoint-url', '--aws-endpoint-url', [CompletionResultType]::ParameterName, 'Endpoint of every AWS service, e.g. http://127.0.0.1:5000 (LocalStack, MinIO for S3) [env: AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL]')
            [CompletionResult]::new('--aws-profile', '--aws-profile', [CompletionResultType]::ParameterName, 'Profile of ~/.aws/config and ~/.aws/credentials [env: AWS_PROFILE] [default: default]')
            [CompletionResult]::new('--aws-ca-bundle', '--aws-ca-bundle', [CompletionResultType]::ParameterName, 'PEM bundle of CAs trusted for AWS endpoints besides the system roots [env: AWS_CA_BUNDLE]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Overall deadline of the command''s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Replace the key the store holds for the volume (the new one must open the volume)')
            [CompletionResult]::new('--vault-skip-verify', '--vault-skip-verify', [CompletionResultType]::ParameterName, 'Accept any server certificate (insecure; VAULT_SKIP_VERIFY alone is refused)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print details of each step')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'cryptadm;volume;help' {
            [CompletionResult]::new('rotate', 'rotate', [CompletionResultType]::ParameterValue, 'Rotate the passphrase (key-encryption key) of a LUKS1 or LUKS2 volume')
            [CompletionResult]::new('serve', 'serve', [CompletionResultType]::ParameterValue, 'Serve CSI-Addons EncryptionKeyRotation over gRPC on a unix socket')
            [CompletionResult]::new('rewrap', 'rewrap', [CompletionResultType]::ParameterValue, 'Rotate the Transit key of a vault-kv:// key store and rewrap every stored passphrase')
            [CompletionResult]::new('import', 'import', [CompletionResultType]::ParameterValue, 'Store an existing volume''s passphrase in a key store, so that `volume rotate` takes the volume over')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'cryptadm;volume;help;rotate' {
            break
        }
        'cryptadm;volume;help;serve' {
            break
        }
        'cryptadm;volume;help;rewrap' {
            break
        }
        'cryptadm;volume;help;import' {
            break
        }
        'cryptadm;volume;help;help' {
            break
        }
        'cryptadm;help' {
            [CompletionResult]::new('bootstrap', 'bootstrap', [CompletionResultType]::ParameterValue, 'Seal and open Cluster API machineadm bootstrap configurations (EncryptedConfig)')
            [CompletionResult]::new('image', 'image', [CompletionResultType]::ParameterValue, 'Encrypt, decrypt and authorize OCI images (containers/ocicrypt format)')
            [CompletionResult]::new('secret', 'secret', [CompletionResultType]::ParameterValue, 'Generate Kubernetes objects that carry image decryption keys')
            [CompletionResult]::new('disk', 'disk', [CompletionResultType]::ParameterValue, 'Format, inspect and decrypt LUKS2 and LUKS1 disk images and block devices')
            [CompletionResult]::new('volume', 'volume', [CompletionResultType]::ParameterValue, 'Rotate the passphrases of LUKS volumes (CSI-Addons EncryptionKeyRotation)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'cryptadm;help;bootstrap' {
            [CompletionResult]::new('seal', 'seal', [CompletionResultType]::ParameterValue, 'Encrypt a machine configuration into an EncryptedConfig document (or cloud-init userdata, or an Ignition config)')
            [CompletionResult]::new('open', 'open', [CompletionResultType]::ParameterValue, 'Decrypt a machineadm configuration stream back into the machine configuration')
            break
        }
        'cryptadm;help;bootstrap;seal' {
            break
        }
        'cryptadm;help;bootstrap;open' {
            break
        }
        'cryptadm;help;image' {
            [CompletionResult]::new('encrypt', 'encrypt', [CompletionResultType]::ParameterValue, 'Encrypt the layers of an OCI image for one or more recipients')
            [CompletionResult]::new('decrypt', 'decrypt', [CompletionResultType]::ParameterValue, 'Decrypt the layers of an OCI image')
            [CompletionResult]::new('authorize', 'authorize', [CompletionResultType]::ParameterValue, 'Prove that the given keys may use an encrypted image, without decrypting it')
            [CompletionResult]::new('inspect', 'inspect', [CompletionResultType]::ParameterValue, 'Show each layer of an image: media type, size, digest, encryption and recipients, without any key')
            [CompletionResult]::new('node-config', 'node-config', [CompletionResultType]::ParameterValue, 'Print the container runtime configuration that decrypts images with cryptadm')
            [CompletionResult]::new('stream-decrypt', 'stream-decrypt', [CompletionResultType]::ParameterValue, 'Decrypt one layer for containerd (its stream processor; a drop-in for imgcrypt''s ctd-decoder)')
            [CompletionResult]::new('keyprovider', 'keyprovider', [CompletionResultType]::ParameterValue, 'Be an ocicrypt key provider that wraps layer keys with Vault Transit or AWS KMS (for skopeo, podman, containerd)')
            [CompletionResult]::new('seal-key', 'seal-key', [CompletionResultType]::ParameterValue, 'Seal a private key file to this machine''s TPM, Tang servers or a threshold (clevis encrypt, for image keys)')
            break
        }
        'cryptadm;help;image;encrypt' {
            break
        }
        'cryptadm;help;image;decrypt' {
            break
        }
        'cryptadm;help;image;authorize' {
            break
        }
        'cryptadm;help;image;inspect' {
            break
        }
        'cryptadm;help;image;node-config' {
            break
        }
        'cryptadm;help;image;stream-decrypt' {
            break
        }
        'cryptadm;help;image;keyprovider' {
            break
        }
        'cryptadm;help;image;seal-key' {
            break
        }
        'cryptadm;help;secret' {
            [CompletionResult]::new('generate-k8s', 'generate-k8s', [CompletionResultType]::ParameterValue, 'Print Kubernetes objects that carry image decryption keys')
            break
        }
        'cryptadm;help;secret;generate-k8s' {
            break
        }
        'cryptadm;help;disk' {
            [CompletionResult]::new('luks-format', 'luks-format', [CompletionResultType]::ParameterValue, 'Create a LUKS2 or LUKS1 image (or format a block device), optionally encrypting a raw image into it')
            [CompletionResult]::new('inspect', 'inspect', [CompletionResultType]::ParameterValue, 'Show a LUKS1 or LUKS2 header, or a qcow2 image and its LUKS header: version, UUID, data segment, keyslots')
            [CompletionResult]::new('decrypt', 'decrypt', [CompletionResultType]::ParameterValue, 'Decrypt the payload of a LUKS1 or LUKS2 image or device, or a qcow2+LUKS image, into a raw image')
            [CompletionResult]::new('convert', 'convert', [CompletionResultType]::ParameterValue, 'Convert a disk image between raw, raw LUKS, qcow2 and qcow2+LUKS in one stream (qemu-img convert''s verb)')
            [CompletionResult]::new('clevis-bind', 'clevis-bind', [CompletionResultType]::ParameterValue, 'Bind a LUKS2 volume to Tang servers (clevis''s `tang` or `sss` pin), as `clevis luks bind` does')
            [CompletionResult]::new('tpm2-enroll', 'tpm2-enroll', [CompletionResultType]::ParameterValue, 'Enrol a LUKS2 volume with the TPM, as `systemd-cryptenroll --tpm2-device` does')
            break
        }
        'cryptadm;help;disk;luks-format' {
            break
        }
        'cryptadm;help;disk;inspect' {
            break
        }
        'cryptadm;help;disk;decrypt' {
            break
        }
        'cryptadm;help;disk;convert' {
            break
        }
        'cryptadm;help;disk;clevis-bind' {
            break
        }
        'cryptadm;help;disk;tpm2-enroll' {
            break
        }
        'cryptadm;help;volume' {
            [CompletionResult]::new('rotate', 'rotate', [CompletionResultType]::ParameterValue, 'Rotate the passphrase (key-encryption key) of a LUKS1 or LUKS2 volume')
            [CompletionResult]::new('serve', 'serve', [CompletionResultType]::ParameterValue, 'Serve CSI-Addons EncryptionKeyRotation over gRPC on a unix socket')
            [CompletionResult]::new('rewrap', 'rewrap', [CompletionResultType]::ParameterValue, 'Rotate the Transit key of a vault-kv:// key store and rewrap every stored passphrase')
            [CompletionResult]::new('import', 'import', [CompletionResultType]::ParameterValue, 'Store an existing volume''s passphrase in a key store, so that `volume rotate` takes the volume over')
            break
        }
        'cryptadm;help;volume;rotate' {
            break
        }
        'cryptadm;help;volume;serve' {
            break
        }
        'cryptadm;help;volume;rewrap' {
            break
        }
        'cryptadm;help;volume;import' {
            break
        }
        'cryptadm;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
