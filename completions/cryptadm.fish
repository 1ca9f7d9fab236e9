# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_cryptadm_global_optspecs
    string join \n q/quiet v/verbose no-progress color= timeout= h/help V/version
end

function __fish_cryptadm_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_cryptadm_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_cryptadm_using_subcommand
    set -l cmd (__fish_cryptadm_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c cryptadm -n "__fish_cryptadm_needs_command" -l color -d 'When to colour messages' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c cryptadm -n "__fish_cryptadm_needs_command" -l timeout -d 'Overall deadline of the command\'s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]' -r
complete -c cryptadm -n "__fish_cryptadm_needs_command" -s q -l quiet -d 'Print only errors'
complete -c cryptadm -n "__fish_cryptadm_needs_command" -s v -l verbose -d 'Print details of each step'
complete -c cryptadm -n "__fish_cryptadm_needs_command" -l no-progress -d 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
complete -c cryptadm -n "__fish_cryptadm_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cryptadm -n "__fish_cryptadm_needs_command" -s V -l version -d 'Print version'
complete -c cryptadm -n "__fish_cryptadm_needs_command" -f -a "bootstrap" -d 'Seal and open Cluster API machineadm bootstrap configurations (EncryptedConfig)'
complete -c cryptadm -n "__fish_cryptadm_needs_command" -f -a "image" -d 'Encrypt, decrypt and authorize OCI images (containers/ocicrypt format)'
complete -c cryptadm -n "__fish_cryptadm_needs_command" -f -a "secret" -d 'Generate Kubernetes objects that carry image decryption keys'
complete -c cryptadm -n "__fish_cryptadm_needs_command" -f -a "disk" -d 'Format, inspect and decrypt LUKS2 and LUKS1 disk images and block devices'
complete -c cryptadm -n "__fish_cryptadm_needs_command" -f -a "volume" -d 'Rotate the passphrases of LUKS volumes (CSI-Addons EncryptionKeyRotation)'
complete -c cryptadm -n "__fish_cryptadm_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and not __fish_seen_subcommand_from seal open help" -l color -d 'When to colour messages' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and not __fish_seen_subcommand_from seal open help" -l timeout -d 'Overall deadline of the command\'s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and not __fish_seen_subcommand_from seal open help" -s q -l quiet -d 'Print only errors'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and not __fish_seen_subcommand_from seal open help" -s v -l verbose -d 'Print details of each step'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and not __fish_seen_subcommand_from seal open help" -l no-progress -d 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and not __fish_seen_subcommand_from seal open help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and not __fish_seen_subcommand_from seal open help" -s V -l version -d 'Print version'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and not __fish_seen_subcommand_from seal open help" -f -a "seal" -d 'Encrypt a machine configuration into an EncryptedConfig document (or cloud-init userdata, or an Ignition config)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and not __fish_seen_subcommand_from seal open help" -f -a "open" -d 'Decrypt a machineadm configuration stream back into the machine configuration'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and not __fish_seen_subcommand_from seal open help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l in -d 'The machine configuration to seal (`-`: standard input); any bytes, usually a YAML stream' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l provider -d 'Provider that fetches the passphrase on the machine: `file`, `vault-transit`, `aws-kms`, `clevis` or `kmip` (built in) or the name of a plugin (machineadm-plugin-encryption-provider-NAME on PATH)' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l passphrase-uri -d 'Where the provider finds the passphrase: file:///ABSOLUTE/PATH, vault-transit://MOUNT/KEY, aws-kms://ARN, arn:aws:kms:REGION:ACCOUNT:key/ID, …:alias/NAME, kmip://UID or NAME:REST; `clevis` records its own (clevis:<JWE>), plugins take their own URIs' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l clevis-pin -d 'Clevis pin to encrypt to: `tang` (one Tang server), `tpm2` (this machine\'s TPM) or `sss` (a threshold of pins), as `clevis encrypt PIN`' -r -f -a "tang\t''
tpm2\t''
sss\t''"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l clevis-config -d 'The pin\'s configuration, the JSON `clevis encrypt` takes: `{"url":URL,"thp":THUMBPRINT}` for tang, `{"pcr_ids":"7","pcr_bank":"sha256"}` for tpm2 (also `hash`, `key` ecc|rsa, `pcr_digest`), `{"t":2,"pins":{"tang":[{"url":…},{"url":…}],"tpm2":{…}}}` for sss, whose pins may also be cryptadm\'s key-manager pins `aws-kms`, `vault-transit` and `kmip`, each `[{"key":REFERENCE}]` (docs/threshold.md); `"adv"` may name an advertisement file' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l tpm2-device -d 'The TPM of `tpm2` pins: a device path or a TCTI string (`device:PATH`, `swtpm:host=H,port=P`, `mssim:host=H,port=P`); else TPM2TOOLS_TCTI, else /dev/tpmrm0' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l passphrase-file -d 'Read the passphrase from FILE (`-`: standard input), byte for byte: no newline is stripped' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l remote-config -d 'Put a RemoteConfig document before the EncryptedConfig (repeatable); built-in providers: file, https, s3, aws-secrets-manager, aws-ssm, capa-secrets-manager or capa-ssm-parameter-store, any other NAME is the plugin machineadm-remote-configuration-provider-NAME' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l cryptadm-path -d 'Where --cloud-init and --ignition expect cryptadm on the machine: an absolute path of letters, digits and `/._-+`' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l template -d 'Render this bootstrap template (variable `machine_config`, filters `base64`, `gzipBase64`)' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l out -d 'Write to FILE (mode 0600, atomically) instead of standard output' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l output-format -d 'Format of the printed documents' -r -f -a "yaml\t'A YAML stream'
json\t'JSON (several documents as a v1 List)'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l plugin-timeout -d 'Seconds one run of a provider plugin may take before it is killed, and one request to a built-in key manager (Vault/OpenBao, AWS KMS, KMIP, a Tang server); each also ends by --timeout' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l retries -d 'How many times a failing provider plugin run, or a key-manager request that failed for a transient reason, is tried again (backoff doubling, at most 30 s); every retry and pause also ends by --timeout' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l vault-addr -d 'Server address, e.g. https://vault:8200 [env: VAULT_ADDR, BAO_ADDR]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l vault-namespace -d 'Namespace (X-Vault-Namespace) [env: VAULT_NAMESPACE, BAO_NAMESPACE]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l vault-cacert -d 'PEM file of the CA that signed the server\'s certificate [env: VAULT_CACERT, BAO_CACERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l vault-capath -d 'Directory of PEM CA certificates [env: VAULT_CAPATH, BAO_CAPATH]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l vault-client-cert -d 'PEM client certificate for TLS client authentication [env: VAULT_CLIENT_CERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l vault-client-key -d 'PEM key of --vault-client-cert [env: VAULT_CLIENT_KEY]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l vault-auth -d 'How to log in [env: CRYPTADM_VAULT_AUTH] [default: token]' -r -f -a "token\t'A token: --vault-token-file, VAULT_TOKEN or ~/.vault-token'
approle\t'AppRole: --vault-role-id and --vault-secret-id-file (auth/approle/login)'
jwt\t'JWT: --vault-role and --vault-jwt-file (auth/jwt/login)'
kubernetes\t'Kubernetes: --vault-role and the service-account token (auth/kubernetes/login)'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l vault-auth-mount -d 'Mount path of the auth method [env: CRYPTADM_VAULT_AUTH_MOUNT] [default: approle, jwt or kubernetes]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l vault-role -d 'Role to log in as (jwt, kubernetes) [env: CRYPTADM_VAULT_ROLE]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l vault-role-id -d 'AppRole role id [env: CRYPTADM_VAULT_ROLE_ID]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l vault-secret-id-file -d 'File holding the AppRole secret id (0600) [env: CRYPTADM_VAULT_SECRET_ID_FILE]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l vault-jwt-file -d 'File holding the JWT (0600; kubernetes default: the pod\'s service-account token) [env: CRYPTADM_VAULT_JWT_FILE]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l vault-token-file -d 'File holding a token (0600), instead of VAULT_TOKEN or ~/.vault-token' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l aws-region -d 'Region of requests whose resource is not an ARN [env: AWS_REGION, AWS_DEFAULT_REGION]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l aws-endpoint-url -d 'Endpoint of every AWS service, e.g. http://127.0.0.1:5000 (LocalStack, MinIO for S3) [env: AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l aws-profile -d 'Profile of ~/.aws/config and ~/.aws/credentials [env: AWS_PROFILE] [default: default]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l aws-ca-bundle -d 'PEM bundle of CAs trusted for AWS endpoints besides the system roots [env: AWS_CA_BUNDLE]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l kmip-server -d 'KMIP server, HOST:PORT (5696 is KMIP\'s port) [env: CRYPTADM_KMIP_SERVER]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l kmip-cacert -d 'PEM file of the CA that signed the KMIP server\'s certificate [env: CRYPTADM_KMIP_CACERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l kmip-client-cert -d 'PEM client certificate for TLS client authentication [env: CRYPTADM_KMIP_CLIENT_CERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l kmip-client-key -d 'PEM key of --kmip-client-cert [env: CRYPTADM_KMIP_CLIENT_KEY]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l kmip-username -d 'Username of a KMIP Username and Password credential [env: CRYPTADM_KMIP_USERNAME]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l kmip-password-file -d 'File holding the credential\'s password [env: CRYPTADM_KMIP_PASSWORD_FILE, CRYPTADM_KMIP_PASSWORD]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l color -d 'When to colour messages' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l timeout -d 'Overall deadline of the command\'s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l clevis-trust-adv -d 'Trust a Tang advertisement that no `thp` pins, as fetched (clevis encrypt\'s `-y`); without it such a server is refused and its signing-key thumbprints are printed'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l cloud-init -d 'Print #cloud-config userdata that writes the sealed stream (0600, /run/machineadm/machineadm_config.yaml) and runs `cryptadm bootstrap open` from runcmd'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l ignition -d 'Print an Ignition config (spec 3.3.0) that writes the sealed stream (0600, /etc/machineadm/machineadm_config.yaml) and a oneshot unit, cryptadm-bootstrap-open.service, that runs `cryptadm bootstrap open` into /run/machineadm before kubeadm.service and kubelet.service, once per machine (a successful open leaves /var/lib/machineadm/bootstrap-opened, and later boots skip the unit)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l vault-skip-verify -d 'Accept any server certificate (insecure; VAULT_SKIP_VERIFY alone is refused)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -s q -l quiet -d 'Print only errors'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -s v -l verbose -d 'Print details of each step'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -l no-progress -d 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from seal" -s V -l version -d 'Print version'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l in -d 'The sealed stream (`-`: standard input)' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l out -d 'Where to write the decrypted configuration (`-`: standard output, refused when it is a terminal)' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l passphrase-file -d 'Read the passphrase from FILE (`-`: standard input), byte for byte: no newline is stripped' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l creates -d 'Do nothing and exit 0 when PATH exists' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l plugin-timeout -d 'Seconds one run of a provider plugin may take before it is killed, and one request to a built-in key manager (Vault/OpenBao, AWS KMS, KMIP, a Tang server); each also ends by --timeout' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l retries -d 'How many times a failing provider plugin run, or a key-manager request that failed for a transient reason, is tried again (backoff doubling, at most 30 s); every retry and pause also ends by --timeout' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l vault-addr -d 'Server address, e.g. https://vault:8200 [env: VAULT_ADDR, BAO_ADDR]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l vault-namespace -d 'Namespace (X-Vault-Namespace) [env: VAULT_NAMESPACE, BAO_NAMESPACE]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l vault-cacert -d 'PEM file of the CA that signed the server\'s certificate [env: VAULT_CACERT, BAO_CACERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l vault-capath -d 'Directory of PEM CA certificates [env: VAULT_CAPATH, BAO_CAPATH]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l vault-client-cert -d 'PEM client certificate for TLS client authentication [env: VAULT_CLIENT_CERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l vault-client-key -d 'PEM key of --vault-client-cert [env: VAULT_CLIENT_KEY]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l vault-auth -d 'How to log in [env: CRYPTADM_VAULT_AUTH] [default: token]' -r -f -a "token\t'A token: --vault-token-file, VAULT_TOKEN or ~/.vault-token'
approle\t'AppRole: --vault-role-id and --vault-secret-id-file (auth/approle/login)'
jwt\t'JWT: --vault-role and --vault-jwt-file (auth/jwt/login)'
kubernetes\t'Kubernetes: --vault-role and the service-account token (auth/kubernetes/login)'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l vault-auth-mount -d 'Mount path of the auth method [env: CRYPTADM_VAULT_AUTH_MOUNT] [default: approle, jwt or kubernetes]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l vault-role -d 'Role to log in as (jwt, kubernetes) [env: CRYPTADM_VAULT_ROLE]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l vault-role-id -d 'AppRole role id [env: CRYPTADM_VAULT_ROLE_ID]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l vault-secret-id-file -d 'File holding the AppRole secret id (0600) [env: CRYPTADM_VAULT_SECRET_ID_FILE]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l vault-jwt-file -d 'File holding the JWT (0600; kubernetes default: the pod\'s service-account token) [env: CRYPTADM_VAULT_JWT_FILE]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l vault-token-file -d 'File holding a token (0600), instead of VAULT_TOKEN or ~/.vault-token' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l aws-region -d 'Region of requests whose resource is not an ARN [env: AWS_REGION, AWS_DEFAULT_REGION]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l aws-endpoint-url -d 'Endpoint of every AWS service, e.g. http://127.0.0.1:5000 (LocalStack, MinIO for S3) [env: AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l aws-profile -d 'Profile of ~/.aws/config and ~/.aws/credentials [env: AWS_PROFILE] [default: default]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l aws-ca-bundle -d 'PEM bundle of CAs trusted for AWS endpoints besides the system roots [env: AWS_CA_BUNDLE]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l kmip-server -d 'KMIP server, HOST:PORT (5696 is KMIP\'s port) [env: CRYPTADM_KMIP_SERVER]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l kmip-cacert -d 'PEM file of the CA that signed the KMIP server\'s certificate [env: CRYPTADM_KMIP_CACERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l kmip-client-cert -d 'PEM client certificate for TLS client authentication [env: CRYPTADM_KMIP_CLIENT_CERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l kmip-client-key -d 'PEM key of --kmip-client-cert [env: CRYPTADM_KMIP_CLIENT_KEY]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l kmip-username -d 'Username of a KMIP Username and Password credential [env: CRYPTADM_KMIP_USERNAME]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l kmip-password-file -d 'File holding the credential\'s password [env: CRYPTADM_KMIP_PASSWORD_FILE, CRYPTADM_KMIP_PASSWORD]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l cert-dir -d 'Also trust the CA certificates in DIR (`*.crt`, PEM) for the `https` provider, besides the system roots (repeatable)' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l tpm2-device -d 'The TPM of `clevis:` documents\' tpm2 pins: a device path or a TCTI string (`device:PATH`, `swtpm:host=H,port=P`); else TPM2TOOLS_TCTI, else /dev/tpmrm0' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l color -d 'When to colour messages' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l timeout -d 'Overall deadline of the command\'s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l strict -d 'In-band configuration only: fail on RemoteConfig documents instead of fetching them'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l vault-skip-verify -d 'Accept any server certificate (insecure; VAULT_SKIP_VERIFY alone is refused)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l skip-remote -d 'Skip RemoteConfig documents instead of fetching them'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l allow-http -d 'Let the `https` provider fetch plain http:// URIs (and follow redirects to them): unauthenticated'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l allow-local-targets -d 'Let RemoteConfig documents that were themselves fetched reach loopback and link-local addresses (169.254.169.254, 127.0.0.1, fe80::/10) over https; those in the input stream always may'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -s q -l quiet -d 'Print only errors'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -s v -l verbose -d 'Print details of each step'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -l no-progress -d 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from open" -s V -l version -d 'Print version'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from help" -f -a "seal" -d 'Encrypt a machine configuration into an EncryptedConfig document (or cloud-init userdata, or an Ignition config)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from help" -f -a "open" -d 'Decrypt a machineadm configuration stream back into the machine configuration'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand bootstrap; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and not __fish_seen_subcommand_from encrypt decrypt authorize inspect node-config stream-decrypt keyprovider seal-key help" -l color -d 'When to colour messages' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and not __fish_seen_subcommand_from encrypt decrypt authorize inspect node-config stream-decrypt keyprovider seal-key help" -l timeout -d 'Overall deadline of the command\'s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and not __fish_seen_subcommand_from encrypt decrypt authorize inspect node-config stream-decrypt keyprovider seal-key help" -s q -l quiet -d 'Print only errors'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and not __fish_seen_subcommand_from encrypt decrypt authorize inspect node-config stream-decrypt keyprovider seal-key help" -s v -l verbose -d 'Print details of each step'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and not __fish_seen_subcommand_from encrypt decrypt authorize inspect node-config stream-decrypt keyprovider seal-key help" -l no-progress -d 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and not __fish_seen_subcommand_from encrypt decrypt authorize inspect node-config stream-decrypt keyprovider seal-key help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and not __fish_seen_subcommand_from encrypt decrypt authorize inspect node-config stream-decrypt keyprovider seal-key help" -s V -l version -d 'Print version'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and not __fish_seen_subcommand_from encrypt decrypt authorize inspect node-config stream-decrypt keyprovider seal-key help" -f -a "encrypt" -d 'Encrypt the layers of an OCI image for one or more recipients'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and not __fish_seen_subcommand_from encrypt decrypt authorize inspect node-config stream-decrypt keyprovider seal-key help" -f -a "decrypt" -d 'Decrypt the layers of an OCI image'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and not __fish_seen_subcommand_from encrypt decrypt authorize inspect node-config stream-decrypt keyprovider seal-key help" -f -a "authorize" -d 'Prove that the given keys may use an encrypted image, without decrypting it'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and not __fish_seen_subcommand_from encrypt decrypt authorize inspect node-config stream-decrypt keyprovider seal-key help" -f -a "inspect" -d 'Show each layer of an image: media type, size, digest, encryption and recipients, without any key'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and not __fish_seen_subcommand_from encrypt decrypt authorize inspect node-config stream-decrypt keyprovider seal-key help" -f -a "node-config" -d 'Print the container runtime configuration that decrypts images with cryptadm'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and not __fish_seen_subcommand_from encrypt decrypt authorize inspect node-config stream-decrypt keyprovider seal-key help" -f -a "stream-decrypt" -d 'Decrypt one layer for containerd (its stream processor; a drop-in for imgcrypt\'s ctd-decoder)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and not __fish_seen_subcommand_from encrypt decrypt authorize inspect node-config stream-decrypt keyprovider seal-key help" -f -a "keyprovider" -d 'Be an ocicrypt key provider that wraps layer keys with Vault Transit or AWS KMS (for skopeo, podman, containerd)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and not __fish_seen_subcommand_from encrypt decrypt authorize inspect node-config stream-decrypt keyprovider seal-key help" -f -a "seal-key" -d 'Seal a private key file to this machine\'s TPM, Tang servers or a threshold (clevis encrypt, for image keys)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and not __fish_seen_subcommand_from encrypt decrypt authorize inspect node-config stream-decrypt keyprovider seal-key help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l recipient -l encryption-key -d 'Who may decrypt: jwe:PUBKEY, pkcs7:CERT, pgp:EMAIL-NAME-OR-FINGERPRINT (or a public key file), provider:NAME[:OPTS], or a key-manager key: vault-transit://MOUNT/KEY, aws-kms://ARN or arn:aws:kms:REGION:ACCOUNT:key/ID, …:alias/NAME' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l layer -l encrypt-layer -d 'Layer to encrypt, 0 = bottom, negative counts from the top (repeatable; default: all)' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l remove-recipient -d 'Take a recipient away: already encrypted layers are re-encrypted under a fresh key for the --recipient list only, so the removed recipient\'s old key opens nothing, and neither does any other recipient not given with --recipient (repeatable; needs a --key that opens them). Prints who keeps and who loses access; a SPEC that names no current recipient is refused (exit 3) and nothing is written' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l platform -d 'Only this platform\'s manifest, OS/ARCH[/VARIANT] (repeatable; default: every platform)' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l key -l decryption-key -d 'A private key (PEM, DER, JWK; RSA or EC), an OpenPGP secret key, a certificate (PKCS#7), provider:NAME[:OPTS], or a key-manager key: vault-transit://MOUNT/KEY, aws-kms://ARN or arn:aws:kms:REGION:ACCOUNT:key/ID, …:alias/NAME' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l cert -l dec-recipient -d 'An X.509 certificate matching a --key, needed for PKCS#7 (a certificate given with --key works too)' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l passphrase-file -d 'Read the passphrase from FILE (`-`: standard input), byte for byte: no newline is stripped' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l gpg-homedir -d 'Also use the secret keys of this GnuPG home directory for OpenPGP layers (their passphrase as above)' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l tpm2-device -d 'The TPM of a sealed --key: a device path or a TCTI string (`device:PATH`, `swtpm:host=H,port=P`, `mssim:host=H,port=P`); else TPM2TOOLS_TCTI, else /dev/tpmrm0' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l vault-addr -d 'Server address, e.g. https://vault:8200 [env: VAULT_ADDR, BAO_ADDR]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l vault-namespace -d 'Namespace (X-Vault-Namespace) [env: VAULT_NAMESPACE, BAO_NAMESPACE]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l vault-cacert -d 'PEM file of the CA that signed the server\'s certificate [env: VAULT_CACERT, BAO_CACERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l vault-capath -d 'Directory of PEM CA certificates [env: VAULT_CAPATH, BAO_CAPATH]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l vault-client-cert -d 'PEM client certificate for TLS client authentication [env: VAULT_CLIENT_CERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l vault-client-key -d 'PEM key of --vault-client-cert [env: VAULT_CLIENT_KEY]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l vault-auth -d 'How to log in [env: CRYPTADM_VAULT_AUTH] [default: token]' -r -f -a "token\t'A token: --vault-token-file, VAULT_TOKEN or ~/.vault-token'
approle\t'AppRole: --vault-role-id and --vault-secret-id-file (auth/approle/login)'
jwt\t'JWT: --vault-role and --vault-jwt-file (auth/jwt/login)'
kubernetes\t'Kubernetes: --vault-role and the service-account token (auth/kubernetes/login)'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l vault-auth-mount -d 'Mount path of the auth method [env: CRYPTADM_VAULT_AUTH_MOUNT] [default: approle, jwt or kubernetes]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l vault-role -d 'Role to log in as (jwt, kubernetes) [env: CRYPTADM_VAULT_ROLE]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l vault-role-id -d 'AppRole role id [env: CRYPTADM_VAULT_ROLE_ID]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l vault-secret-id-file -d 'File holding the AppRole secret id (0600) [env: CRYPTADM_VAULT_SECRET_ID_FILE]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l vault-jwt-file -d 'File holding the JWT (0600; kubernetes default: the pod\'s service-account token) [env: CRYPTADM_VAULT_JWT_FILE]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l vault-token-file -d 'File holding a token (0600), instead of VAULT_TOKEN or ~/.vault-token' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l aws-region -d 'Region of requests whose resource is not an ARN [env: AWS_REGION, AWS_DEFAULT_REGION]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l aws-endpoint-url -d 'Endpoint of every AWS service, e.g. http://127.0.0.1:5000 (LocalStack, MinIO for S3) [env: AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l aws-profile -d 'Profile of ~/.aws/config and ~/.aws/credentials [env: AWS_PROFILE] [default: default]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l aws-ca-bundle -d 'PEM bundle of CAs trusted for AWS endpoints besides the system roots [env: AWS_CA_BUNDLE]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l src-creds -d 'Log in to the source registry as USER; the password comes from --src-password-file, CRYPTADM_SRC_PASSWORD_FILE, CRYPTADM_SRC_PASSWORD or a terminal prompt, never from the command line' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l src-password-file -d 'Read the --src-creds password from FILE (`-`: standard input); one trailing newline is dropped' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l src-authfile -d 'Source registry credentials from this auth file only (docker config.json or podman auth.json format)' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l src-tls-verify -d 'Verify the source registry\'s TLS certificate; =false allows plain HTTP or an unverified certificate' -r -f -a "true\t''
false\t''"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l src-cert-dir -d 'Trust the CA certificates (*.crt) in DIR for the source registry, besides the system roots' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l dest-creds -d 'Log in to the destination registry as USER; the password comes from --dest-password-file, CRYPTADM_DEST_PASSWORD_FILE, CRYPTADM_DEST_PASSWORD or a terminal prompt, never from the command line' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l dest-password-file -d 'Read the --dest-creds password from FILE (`-`: standard input); one trailing newline is dropped' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l dest-authfile -d 'Destination registry credentials from this auth file only (docker config.json or podman auth.json format)' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l dest-tls-verify -d 'Verify the destination registry\'s TLS certificate; =false allows plain HTTP or an unverified certificate' -r -f -a "true\t''
false\t''"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l dest-cert-dir -d 'Trust the CA certificates (*.crt) in DIR for the destination registry, besides the system roots' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l cert-dir -d 'Trust the CA certificates (*.crt) in DIR for both registries (default: /etc/containers/certs.d/HOST and /etc/docker/certs.d/HOST when they exist)' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l jobs -d 'Move up to N layers at once (downloads, cipher and uploads of different layers overlap; memory grows with N, not with layer sizes); a layer of 4 MiB or more is downloaded as up to 4 ranges at once, so up to 4×N connections; 1 moves the layers one after the other, each over one connection' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l color -d 'When to colour messages' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l timeout -d 'Overall deadline of the command\'s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l accept-unidentified-loss -d 'With --remove-recipient: accept that JWE recipients without a key id lose access unless given with --recipient. Their wrapped keys name only an algorithm, so cryptadm cannot tell which of them a --remove-recipient is, nor whether it is one at all; without this flag such a loss is refused (exit 3)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l allow-plaintext -d 'Succeed even when no selected layer is encrypted (or, for encrypt, would be)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l vault-skip-verify -d 'Accept any server certificate (insecure; VAULT_SKIP_VERIFY alone is refused)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -s q -l quiet -d 'Print only errors'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -s v -l verbose -d 'Print details of each step'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -l no-progress -d 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from encrypt" -s V -l version -d 'Print version'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l layer -d 'Layer to decrypt, 0 = bottom, negative counts from the top (repeatable; default: all)' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l platform -d 'Only this platform\'s manifest, OS/ARCH[/VARIANT] (repeatable; default: every platform)' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l key -l decryption-key -d 'A private key (PEM, DER, JWK; RSA or EC), an OpenPGP secret key, a certificate (PKCS#7), provider:NAME[:OPTS], or a key-manager key: vault-transit://MOUNT/KEY, aws-kms://ARN or arn:aws:kms:REGION:ACCOUNT:key/ID, …:alias/NAME' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l cert -l dec-recipient -d 'An X.509 certificate matching a --key, needed for PKCS#7 (a certificate given with --key works too)' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l passphrase-file -d 'Read the passphrase from FILE (`-`: standard input), byte for byte: no newline is stripped' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l gpg-homedir -d 'Also use the secret keys of this GnuPG home directory for OpenPGP layers (their passphrase as above)' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l tpm2-device -d 'The TPM of a sealed --key: a device path or a TCTI string (`device:PATH`, `swtpm:host=H,port=P`, `mssim:host=H,port=P`); else TPM2TOOLS_TCTI, else /dev/tpmrm0' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l vault-addr -d 'Server address, e.g. https://vault:8200 [env: VAULT_ADDR, BAO_ADDR]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l vault-namespace -d 'Namespace (X-Vault-Namespace) [env: VAULT_NAMESPACE, BAO_NAMESPACE]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l vault-cacert -d 'PEM file of the CA that signed the server\'s certificate [env: VAULT_CACERT, BAO_CACERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l vault-capath -d 'Directory of PEM CA certificates [env: VAULT_CAPATH, BAO_CAPATH]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l vault-client-cert -d 'PEM client certificate for TLS client authentication [env: VAULT_CLIENT_CERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l vault-client-key -d 'PEM key of --vault-client-cert [env: VAULT_CLIENT_KEY]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l vault-auth -d 'How to log in [env: CRYPTADM_VAULT_AUTH] [default: token]' -r -f -a "token\t'A token: --vault-token-file, VAULT_TOKEN or ~/.vault-token'
approle\t'AppRole: --vault-role-id and --vault-secret-id-file (auth/approle/login)'
jwt\t'JWT: --vault-role and --vault-jwt-file (auth/jwt/login)'
kubernetes\t'Kubernetes: --vault-role and the service-account token (auth/kubernetes/login)'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l vault-auth-mount -d 'Mount path of the auth method [env: CRYPTADM_VAULT_AUTH_MOUNT] [default: approle, jwt or kubernetes]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l vault-role -d 'Role to log in as (jwt, kubernetes) [env: CRYPTADM_VAULT_ROLE]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l vault-role-id -d 'AppRole role id [env: CRYPTADM_VAULT_ROLE_ID]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l vault-secret-id-file -d 'File holding the AppRole secret id (0600) [env: CRYPTADM_VAULT_SECRET_ID_FILE]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l vault-jwt-file -d 'File holding the JWT (0600; kubernetes default: the pod\'s service-account token) [env: CRYPTADM_VAULT_JWT_FILE]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l vault-token-file -d 'File holding a token (0600), instead of VAULT_TOKEN or ~/.vault-token' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l aws-region -d 'Region of requests whose resource is not an ARN [env: AWS_REGION, AWS_DEFAULT_REGION]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l aws-endpoint-url -d 'Endpoint of every AWS service, e.g. http://127.0.0.1:5000 (LocalStack, MinIO for S3) [env: AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l aws-profile -d 'Profile of ~/.aws/config and ~/.aws/credentials [env: AWS_PROFILE] [default: default]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l aws-ca-bundle -d 'PEM bundle of CAs trusted for AWS endpoints besides the system roots [env: AWS_CA_BUNDLE]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l src-creds -d 'Log in to the source registry as USER; the password comes from --src-password-file, CRYPTADM_SRC_PASSWORD_FILE, CRYPTADM_SRC_PASSWORD or a terminal prompt, never from the command line' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l src-password-file -d 'Read the --src-creds password from FILE (`-`: standard input); one trailing newline is dropped' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l src-authfile -d 'Source registry credentials from this auth file only (docker config.json or podman auth.json format)' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l src-tls-verify -d 'Verify the source registry\'s TLS certificate; =false allows plain HTTP or an unverified certificate' -r -f -a "true\t''
false\t''"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l src-cert-dir -d 'Trust the CA certificates (*.crt) in DIR for the source registry, besides the system roots' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l dest-creds -d 'Log in to the destination registry as USER; the password comes from --dest-password-file, CRYPTADM_DEST_PASSWORD_FILE, CRYPTADM_DEST_PASSWORD or a terminal prompt, never from the command line' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l dest-password-file -d 'Read the --dest-creds password from FILE (`-`: standard input); one trailing newline is dropped' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l dest-authfile -d 'Destination registry credentials from this auth file only (docker config.json or podman auth.json format)' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l dest-tls-verify -d 'Verify the destination registry\'s TLS certificate; =false allows plain HTTP or an unverified certificate' -r -f -a "true\t''
false\t''"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l dest-cert-dir -d 'Trust the CA certificates (*.crt) in DIR for the destination registry, besides the system roots' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l cert-dir -d 'Trust the CA certificates (*.crt) in DIR for both registries (default: /etc/containers/certs.d/HOST and /etc/docker/certs.d/HOST when they exist)' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l jobs -d 'Move up to N layers at once (downloads, cipher and uploads of different layers overlap; memory grows with N, not with layer sizes); a layer of 4 MiB or more is downloaded as up to 4 ranges at once, so up to 4×N connections; 1 moves the layers one after the other, each over one connection' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l color -d 'When to colour messages' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l timeout -d 'Overall deadline of the command\'s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l allow-plaintext -d 'Succeed even when no selected layer is encrypted (or, for encrypt, would be)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l vault-skip-verify -d 'Accept any server certificate (insecure; VAULT_SKIP_VERIFY alone is refused)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -s q -l quiet -d 'Print only errors'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -s v -l verbose -d 'Print details of each step'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -l no-progress -d 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from decrypt" -s V -l version -d 'Print version'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -l output-format -d 'Print the per-layer report as a document' -r -f -a "yaml\t'A YAML stream'
json\t'JSON (several documents as a v1 List)'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -l platform -d 'Only this platform\'s manifest, OS/ARCH[/VARIANT] (repeatable; default: every platform)' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -l key -l decryption-key -d 'A private key (PEM, DER, JWK; RSA or EC), an OpenPGP secret key, a certificate (PKCS#7), provider:NAME[:OPTS], or a key-manager key: vault-transit://MOUNT/KEY, aws-kms://ARN or arn:aws:kms:REGION:ACCOUNT:key/ID, …:alias/NAME' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -l cert -l dec-recipient -d 'An X.509 certificate matching a --key, needed for PKCS#7 (a certificate given with --key works too)' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -l passphrase-file -d 'Read the passphrase from FILE (`-`: standard input), byte for byte: no newline is stripped' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -l gpg-homedir -d 'Also use the secret keys of this GnuPG home directory for OpenPGP layers (their passphrase as above)' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -l tpm2-device -d 'The TPM of a sealed --key: a device path or a TCTI string (`device:PATH`, `swtpm:host=H,port=P`, `mssim:host=H,port=P`); else TPM2TOOLS_TCTI, else /dev/tpmrm0' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -l vault-addr -d 'Server address, e.g. https://vault:8200 [env: VAULT_ADDR, BAO_ADDR]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -l vault-namespace -d 'Namespace (X-Vault-Namespace) [env: VAULT_NAMESPACE, BAO_NAMESPACE]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -l vault-cacert -d 'PEM file of the CA that signed the server\'s certificate [env: VAULT_CACERT, BAO_CACERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -l vault-capath -d 'Directory of PEM CA certificates [env: VAULT_CAPATH, BAO_CAPATH]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -l vault-client-cert -d 'PEM client certificate for TLS client authentication [env: VAULT_CLIENT_CERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -l vault-client-key -d 'PEM key of --vault-client-cert [env: VAULT_CLIENT_KEY]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -l vault-auth -d 'How to log in [env: CRYPTADM_VAULT_AUTH] [default: token]' -r -f -a "token\t'A token: --vault-token-file, VAULT_TOKEN or ~/.vault-token'
approle\t'AppRole: --vault-role-id and --vault-secret-id-file (auth/approle/login)'
jwt\t'JWT: --vault-role and --vault-jwt-file (auth/jwt/login)'
kubernetes\t'Kubernetes: --vault-role and the service-account token (auth/kubernetes/login)'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -l vault-auth-mount -d 'Mount path of the auth method [env: CRYPTADM_VAULT_AUTH_MOUNT] [default: approle, jwt or kubernetes]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -l vault-role -d 'Role to log in as (jwt, kubernetes) [env: CRYPTADM_VAULT_ROLE]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -l vault-role-id -d 'AppRole role id [env: CRYPTADM_VAULT_ROLE_ID]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -l vault-secret-id-file -d 'File holding the AppRole secret id (0600) [env: CRYPTADM_VAULT_SECRET_ID_FILE]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -l vault-jwt-file -d 'File holding the JWT (0600; kubernetes default: the pod\'s service-account token) [env: CRYPTADM_VAULT_JWT_FILE]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -l vault-token-file -d 'File holding a token (0600), instead of VAULT_TOKEN or ~/.vault-token' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -l aws-region -d 'Region of requests whose resource is not an ARN [env: AWS_REGION, AWS_DEFAULT_REGION]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -l aws-endpoint-url -d 'Endpoint of every AWS service, e.g. http://127.0.0.1:5000 (LocalStack, MinIO for S3) [env: AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -l aws-profile -d 'Profile of ~/.aws/config and ~/.aws/credentials [env: AWS_PROFILE] [default: default]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -l aws-ca-bundle -d 'PEM bundle of CAs trusted for AWS endpoints besides the system roots [env: AWS_CA_BUNDLE]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -l creds -d 'Log in to the registry as USER; the password comes from --password-file, CRYPTADM_REGISTRY_PASSWORD_FILE, CRYPTADM_REGISTRY_PASSWORD or a terminal prompt, never from the command line' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -l password-file -d 'Read the --creds password from FILE (`-`: standard input); one trailing newline is dropped' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -l authfile -d 'Registry credentials from this auth file only (docker config.json or podman auth.json format)' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -l tls-verify -d 'Verify the registry\'s TLS certificate; =false allows plain HTTP or an unverified certificate' -r -f -a "true\t''
false\t''"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -l cert-dir -d 'Trust the CA certificates (*.crt) in DIR, besides the system roots (default: /etc/containers/certs.d/HOST and /etc/docker/certs.d/HOST when they exist)' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -l color -d 'When to colour messages' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -l timeout -d 'Overall deadline of the command\'s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -l allow-plaintext -d 'Succeed even when no selected layer is encrypted (or, for encrypt, would be)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -l vault-skip-verify -d 'Accept any server certificate (insecure; VAULT_SKIP_VERIFY alone is refused)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -s q -l quiet -d 'Print only errors'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -s v -l verbose -d 'Print details of each step'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -l no-progress -d 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from authorize" -s V -l version -d 'Print version'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from inspect" -l creds -d 'Log in to the registry as USER; the password comes from --password-file, CRYPTADM_REGISTRY_PASSWORD_FILE, CRYPTADM_REGISTRY_PASSWORD or a terminal prompt, never from the command line' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from inspect" -l password-file -d 'Read the --creds password from FILE (`-`: standard input); one trailing newline is dropped' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from inspect" -l authfile -d 'Registry credentials from this auth file only (docker config.json or podman auth.json format)' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from inspect" -l tls-verify -d 'Verify the registry\'s TLS certificate; =false allows plain HTTP or an unverified certificate' -r -f -a "true\t''
false\t''"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from inspect" -l cert-dir -d 'Trust the CA certificates (*.crt) in DIR, besides the system roots (default: /etc/containers/certs.d/HOST and /etc/docker/certs.d/HOST when they exist)' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from inspect" -l output-format -d 'Print the layers as a document' -r -f -a "yaml\t'A YAML stream'
json\t'JSON (several documents as a v1 List)'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from inspect" -l color -d 'When to colour messages' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from inspect" -l timeout -d 'Overall deadline of the command\'s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from inspect" -s q -l quiet -d 'Print only errors'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from inspect" -s v -l verbose -d 'Print details of each step'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from inspect" -l no-progress -d 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from inspect" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from inspect" -s V -l version -d 'Print version'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from node-config" -l runtime -d 'The container runtime of the nodes' -r -f -a "containerd\t'containerd with its CRI plugin'
crio\t'CRI-O'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from node-config" -l containerd-version -d 'containerd\'s major version: 1 (config version 2) or 2 (config version 3)' -r -f -a "1\t''
2\t''"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from node-config" -l binary -d 'Where cryptadm is on the nodes (absolute; default: this binary\'s path)' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from node-config" -l keys-dir -d 'The keys directory (default: /etc/containerd/ocicrypt/keys, CRI-O: /etc/crio/keys)' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from node-config" -l keyprovider-config -d 'The key-provider configuration the stream processors get as OCICRYPT_KEYPROVIDER_CONFIG (containerd\'s default)' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from node-config" -l processor-env -d 'A NAME=VALUE setting for the stream processors\' environment (repeatable; containerd only), e.g. the Vault server and the node\'s login for images wrapped with vault-transit:// keys: VAULT_ADDR, VAULT_CACERT and a JWT/Kubernetes role with its projected token file; for aws-kms:// keys, AWS_REGION or a web identity (AWS_ROLE_ARN, AWS_WEB_IDENTITY_TOKEN_FILE), or nothing on EC2 (the instance profile). Secrets themselves (VAULT_TOKEN, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN) are refused' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from node-config" -l color -d 'When to colour messages' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from node-config" -l timeout -d 'Overall deadline of the command\'s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from node-config" -s q -l quiet -d 'Print only errors'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from node-config" -s v -l verbose -d 'Print details of each step'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from node-config" -l no-progress -d 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from node-config" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from node-config" -s V -l version -d 'Print version'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from stream-decrypt" -l decryption-keys-path -d 'The node\'s keys directory: every regular file below it is tried as a key (ctd-decoder\'s flag)' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from stream-decrypt" -l color -d 'When to colour messages' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from stream-decrypt" -l timeout -d 'Overall deadline of the command\'s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from stream-decrypt" -s q -l quiet -d 'Print only errors'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from stream-decrypt" -s v -l verbose -d 'Print details of each step'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from stream-decrypt" -l no-progress -d 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from stream-decrypt" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from stream-decrypt" -s V -l version -d 'Print version'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from keyprovider" -l listen -d 'Serve ocicrypt\'s gRPC form instead, on this unix socket (unix:///PATH), until SIGTERM or SIGINT' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from keyprovider" -l color -d 'When to colour messages' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from keyprovider" -l timeout -d 'Overall deadline of the command\'s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from keyprovider" -s q -l quiet -d 'Print only errors'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from keyprovider" -s v -l verbose -d 'Print details of each step'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from keyprovider" -l no-progress -d 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from keyprovider" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from keyprovider" -s V -l version -d 'Print version'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from seal-key" -l out -d 'Where to write the sealed key (a compact JWE)' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from seal-key" -l clevis-pin -d 'Clevis pin to encrypt to: `tang` (one Tang server), `tpm2` (this machine\'s TPM) or `sss` (a threshold of pins), as `clevis encrypt PIN`' -r -f -a "tang\t''
tpm2\t''
sss\t''"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from seal-key" -l clevis-config -d 'The pin\'s configuration, the JSON `clevis encrypt` takes: `{"url":URL,"thp":THUMBPRINT}` for tang, `{"pcr_ids":"7","pcr_bank":"sha256"}` for tpm2 (also `hash`, `key` ecc|rsa, `pcr_digest`), `{"t":2,"pins":{"tang":[{"url":…},{"url":…}],"tpm2":{…}}}` for sss, whose pins may also be cryptadm\'s key-manager pins `aws-kms`, `vault-transit` and `kmip`, each `[{"key":REFERENCE}]` (docs/threshold.md); `"adv"` may name an advertisement file' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from seal-key" -l tpm2-device -d 'The TPM of `tpm2` pins: a device path or a TCTI string (`device:PATH`, `swtpm:host=H,port=P`, `mssim:host=H,port=P`); else TPM2TOOLS_TCTI, else /dev/tpmrm0' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from seal-key" -l color -d 'When to colour messages' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from seal-key" -l timeout -d 'Overall deadline of the command\'s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from seal-key" -l clevis-trust-adv -d 'Trust a Tang advertisement that no `thp` pins, as fetched (clevis encrypt\'s `-y`); without it such a server is refused and its signing-key thumbprints are printed'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from seal-key" -s q -l quiet -d 'Print only errors'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from seal-key" -s v -l verbose -d 'Print details of each step'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from seal-key" -l no-progress -d 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from seal-key" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from seal-key" -s V -l version -d 'Print version'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from help" -f -a "encrypt" -d 'Encrypt the layers of an OCI image for one or more recipients'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from help" -f -a "decrypt" -d 'Decrypt the layers of an OCI image'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from help" -f -a "authorize" -d 'Prove that the given keys may use an encrypted image, without decrypting it'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from help" -f -a "inspect" -d 'Show each layer of an image: media type, size, digest, encryption and recipients, without any key'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from help" -f -a "node-config" -d 'Print the container runtime configuration that decrypts images with cryptadm'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from help" -f -a "stream-decrypt" -d 'Decrypt one layer for containerd (its stream processor; a drop-in for imgcrypt\'s ctd-decoder)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from help" -f -a "keyprovider" -d 'Be an ocicrypt key provider that wraps layer keys with Vault Transit or AWS KMS (for skopeo, podman, containerd)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from help" -f -a "seal-key" -d 'Seal a private key file to this machine\'s TPM, Tang servers or a threshold (clevis encrypt, for image keys)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand image; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand secret; and not __fish_seen_subcommand_from generate-k8s help" -l color -d 'When to colour messages' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand secret; and not __fish_seen_subcommand_from generate-k8s help" -l timeout -d 'Overall deadline of the command\'s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand secret; and not __fish_seen_subcommand_from generate-k8s help" -s q -l quiet -d 'Print only errors'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand secret; and not __fish_seen_subcommand_from generate-k8s help" -s v -l verbose -d 'Print details of each step'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand secret; and not __fish_seen_subcommand_from generate-k8s help" -l no-progress -d 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand secret; and not __fish_seen_subcommand_from generate-k8s help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand secret; and not __fish_seen_subcommand_from generate-k8s help" -s V -l version -d 'Print version'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand secret; and not __fish_seen_subcommand_from generate-k8s help" -f -a "generate-k8s" -d 'Print Kubernetes objects that carry image decryption keys'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand secret; and not __fish_seen_subcommand_from generate-k8s help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand secret; and __fish_seen_subcommand_from generate-k8s" -l key -d 'A key file, as [NAME=]FILE; NAME is the data entry (the file name on the node), by default FILE\'s name' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand secret; and __fish_seen_subcommand_from generate-k8s" -s n -l namespace -d 'The namespace of every object (enc-key-sync: default `enc-key-sync`)' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand secret; and __fish_seen_subcommand_from generate-k8s" -l format -d 'The Secret\'s shape' -r -f -a "node\t'An Opaque Secret, one entry per key file, for containerd\'s and CRI-O\'s node key model'
kep\t'The encrypted-images KEP\'s kubernetes.io/decryptionkeys Secret (never merged: for experiments)'
enc-key-sync\t'A `key`-type Secret for the enc-key-sync operator (IBM/k8s-enc-image-operator)'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand secret; and __fish_seen_subcommand_from generate-k8s" -l runtime -d 'The container runtime whose keys directory the DaemonSet writes' -r -f -a "containerd\t'containerd with imgcrypt: /etc/containerd/ocicrypt/keys'
crio\t'CRI-O: /etc/crio/keys'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand secret; and __fish_seen_subcommand_from generate-k8s" -l service-account -d 'Add a patch giving this ServiceAccount the Secret, and a Pod using it (--format kep)' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand secret; and __fish_seen_subcommand_from generate-k8s" -l output-format -d 'How the objects are printed: a YAML stream or JSON (several objects as a v1 List)' -r -f -a "yaml\t'A YAML stream'
json\t'JSON (several documents as a v1 List)'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand secret; and __fish_seen_subcommand_from generate-k8s" -s o -l out -d 'Write the objects to FILE (created 0600, replaced atomically) instead of standard output' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand secret; and __fish_seen_subcommand_from generate-k8s" -l passphrase-file -d 'Read the passphrase from FILE (`-`: standard input), byte for byte: no newline is stripped' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand secret; and __fish_seen_subcommand_from generate-k8s" -l color -d 'When to colour messages' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand secret; and __fish_seen_subcommand_from generate-k8s" -l timeout -d 'Overall deadline of the command\'s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand secret; and __fish_seen_subcommand_from generate-k8s" -l with-daemonset -d 'Add a DaemonSet that copies the keys onto every node, as regular 0600 files (--format node)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand secret; and __fish_seen_subcommand_from generate-k8s" -s q -l quiet -d 'Print only errors'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand secret; and __fish_seen_subcommand_from generate-k8s" -s v -l verbose -d 'Print details of each step'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand secret; and __fish_seen_subcommand_from generate-k8s" -l no-progress -d 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand secret; and __fish_seen_subcommand_from generate-k8s" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand secret; and __fish_seen_subcommand_from generate-k8s" -s V -l version -d 'Print version'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand secret; and __fish_seen_subcommand_from help" -f -a "generate-k8s" -d 'Print Kubernetes objects that carry image decryption keys'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand secret; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and not __fish_seen_subcommand_from luks-format inspect decrypt convert clevis-bind tpm2-enroll help" -l color -d 'When to colour messages' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and not __fish_seen_subcommand_from luks-format inspect decrypt convert clevis-bind tpm2-enroll help" -l timeout -d 'Overall deadline of the command\'s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and not __fish_seen_subcommand_from luks-format inspect decrypt convert clevis-bind tpm2-enroll help" -s q -l quiet -d 'Print only errors'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and not __fish_seen_subcommand_from luks-format inspect decrypt convert clevis-bind tpm2-enroll help" -s v -l verbose -d 'Print details of each step'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and not __fish_seen_subcommand_from luks-format inspect decrypt convert clevis-bind tpm2-enroll help" -l no-progress -d 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and not __fish_seen_subcommand_from luks-format inspect decrypt convert clevis-bind tpm2-enroll help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and not __fish_seen_subcommand_from luks-format inspect decrypt convert clevis-bind tpm2-enroll help" -s V -l version -d 'Print version'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and not __fish_seen_subcommand_from luks-format inspect decrypt convert clevis-bind tpm2-enroll help" -f -a "luks-format" -d 'Create a LUKS2 or LUKS1 image (or format a block device), optionally encrypting a raw image into it'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and not __fish_seen_subcommand_from luks-format inspect decrypt convert clevis-bind tpm2-enroll help" -f -a "inspect" -d 'Show a LUKS1 or LUKS2 header, or a qcow2 image and its LUKS header: version, UUID, data segment, keyslots'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and not __fish_seen_subcommand_from luks-format inspect decrypt convert clevis-bind tpm2-enroll help" -f -a "decrypt" -d 'Decrypt the payload of a LUKS1 or LUKS2 image or device, or a qcow2+LUKS image, into a raw image'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and not __fish_seen_subcommand_from luks-format inspect decrypt convert clevis-bind tpm2-enroll help" -f -a "convert" -d 'Convert a disk image between raw, raw LUKS, qcow2 and qcow2+LUKS in one stream (qemu-img convert\'s verb)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and not __fish_seen_subcommand_from luks-format inspect decrypt convert clevis-bind tpm2-enroll help" -f -a "clevis-bind" -d 'Bind a LUKS2 volume to Tang servers (clevis\'s `tang` or `sss` pin), as `clevis luks bind` does'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and not __fish_seen_subcommand_from luks-format inspect decrypt convert clevis-bind tpm2-enroll help" -f -a "tpm2-enroll" -d 'Enrol a LUKS2 volume with the TPM, as `systemd-cryptenroll --tpm2-device` does'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and not __fish_seen_subcommand_from luks-format inspect decrypt convert clevis-bind tpm2-enroll help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l type -d 'LUKS version (`luks1` for QEMU, Nova and Glance)' -r -f -a "luks2\t'LUKS2 (cryptsetup\'s default)'
luks1\t'LUKS1 (QEMU, OpenStack)'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l passphrase-file -d 'Read the passphrase from FILE (`-`: standard input), byte for byte: no newline is stripped' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l key-file -d 'Read the passphrase from FILE (`-`: standard input), the whole file byte for byte, as cryptsetup does' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l format -d 'Container: `raw` (a LUKS image or device) or `qcow2` (qcow2 v3 with LUKS1 inside, as QEMU writes it)' -r -f -a "raw\t'A raw disk image (raw LUKS when encrypted)'
qcow2\t'qcow2 version 3 (LUKS inside when encrypted)'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l cluster-size -d 'qcow2 cluster size in bytes, 512 to 2M, a power of two (default 64K, QEMU\'s)' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l secret-type -d 'How the passphrase source becomes the LUKS passphrase: verbatim (`passphrase`, Nova; the default) or lowercase hex of the key bytes it holds (`symmetric`, Cinder and os-brick); with --secret, the secret\'s Barbican type decides and a contradicting --secret-type is refused' -r -f -a "passphrase\t'Barbican `passphrase`: the file\'s bytes are the passphrase (Nova)'
symmetric\t'Barbican `symmetric`: the file holds raw key bytes; the passphrase is their lowercase hex (os-brick)'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l cipher -d 'Payload cipher (only aes-xts-plain64 is implemented)' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l key-size -d 'Volume key size in bits (XTS: 512 = AES-256, 256 = AES-128)' -r -f -a "256\t''
512\t''"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l hash -d 'Hash for the digest, the AF splitter and PBKDF2' -r -f -a "sha256\t'SHA-256'
sha512\t'SHA-512'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l sector-size -d 'Encryption sector size in bytes (default: 4096 for LUKS2 image files, else 512)' -r -f -a "512\t''
4096\t''"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l pbkdf -d 'Keyslot KDF (default: argon2id for LUKS2, pbkdf2 for LUKS1)' -r -f -a "argon2id\t'Argon2id (LUKS2 default)'
argon2i\t'Argon2i'
pbkdf2\t'PBKDF2 (LUKS1, FIPS)'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l iter-time -d 'Milliseconds the keyslot KDF should take (benchmarked like cryptsetup)' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l pbkdf-force-iterations -d 'Skip the benchmark: PBKDF2 iterations, or the Argon2 time cost' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l pbkdf-memory -d 'Argon2 memory cost in KiB, 32 to 4194304 (default: benchmarked, at most 1 GiB and half the RAM)' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l pbkdf-parallel -d 'Argon2 threads, 1 to 4 (default: the CPU count, at most 4)' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l label -d 'LUKS2 label' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l uuid -d 'Volume UUID (default: random)' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l size -d 'Payload size of a new image file: bytes, or with a K, M, G or T suffix (powers of 1024)' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l from -d 'Encrypt this raw disk image into TARGET (streamed; the payload is its size rounded up to a sector); with --format qcow2 also a plain qcow2 image' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l key-id -d 'The key manager (Barbican) secret that holds the output\'s secret: os_encrypt_key_id' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l key-deletion-policy -d 'Old spelling of --delete-key-with-image: on_image_deletion or do_not_delete' -r -f -a "on_image_deletion\t'Glance deletes the secret with the image'
do_not_delete\t'The secret outlives the image'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l output-format -d 'Format of the printed Glance properties (--glance), or of the ids printed with --key-manager or --upload (json: `{"image_id", "secret_id"}`; else one id a line)' -r -f -a "yaml\t'A YAML stream'
json\t'JSON (several documents as a v1 List)'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l key-manager -d 'Keep the image\'s secret in a key manager: a new secret is stored there (its UUID becomes os_encrypt_key_id), or --secret names an existing one' -r -f -a "barbican\t'OpenStack Barbican (found in the --os-cloud catalog)'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l secret -d 'An existing Barbican secret (barbican://UUID, https://HOST/…/v1/secrets/UUID, UUID) whose payload gives the passphrase (`symmetric`: its lowercase hex, as os-brick derives it)' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l upload -d 'Upload the image to Glance as NAME (with its disk and container formats and every os_encrypt_* property), and register it as a consumer of its secret; on any failure what was created is deleted again' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l os-cloud -d 'The cloud of clouds.yaml to log in to (OS_CLOUD); OS_* variables override its settings' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l vault-addr -d 'Server address, e.g. https://vault:8200 [env: VAULT_ADDR, BAO_ADDR]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l vault-namespace -d 'Namespace (X-Vault-Namespace) [env: VAULT_NAMESPACE, BAO_NAMESPACE]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l vault-cacert -d 'PEM file of the CA that signed the server\'s certificate [env: VAULT_CACERT, BAO_CACERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l vault-capath -d 'Directory of PEM CA certificates [env: VAULT_CAPATH, BAO_CAPATH]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l vault-client-cert -d 'PEM client certificate for TLS client authentication [env: VAULT_CLIENT_CERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l vault-client-key -d 'PEM key of --vault-client-cert [env: VAULT_CLIENT_KEY]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l vault-auth -d 'How to log in [env: CRYPTADM_VAULT_AUTH] [default: token]' -r -f -a "token\t'A token: --vault-token-file, VAULT_TOKEN or ~/.vault-token'
approle\t'AppRole: --vault-role-id and --vault-secret-id-file (auth/approle/login)'
jwt\t'JWT: --vault-role and --vault-jwt-file (auth/jwt/login)'
kubernetes\t'Kubernetes: --vault-role and the service-account token (auth/kubernetes/login)'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l vault-auth-mount -d 'Mount path of the auth method [env: CRYPTADM_VAULT_AUTH_MOUNT] [default: approle, jwt or kubernetes]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l vault-role -d 'Role to log in as (jwt, kubernetes) [env: CRYPTADM_VAULT_ROLE]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l vault-role-id -d 'AppRole role id [env: CRYPTADM_VAULT_ROLE_ID]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l vault-secret-id-file -d 'File holding the AppRole secret id (0600) [env: CRYPTADM_VAULT_SECRET_ID_FILE]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l vault-jwt-file -d 'File holding the JWT (0600; kubernetes default: the pod\'s service-account token) [env: CRYPTADM_VAULT_JWT_FILE]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l vault-token-file -d 'File holding a token (0600), instead of VAULT_TOKEN or ~/.vault-token' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l aws-region -d 'Region of requests whose resource is not an ARN [env: AWS_REGION, AWS_DEFAULT_REGION]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l aws-endpoint-url -d 'Endpoint of every AWS service, e.g. http://127.0.0.1:5000 (LocalStack, MinIO for S3) [env: AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l aws-profile -d 'Profile of ~/.aws/config and ~/.aws/credentials [env: AWS_PROFILE] [default: default]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l aws-ca-bundle -d 'PEM bundle of CAs trusted for AWS endpoints besides the system roots [env: AWS_CA_BUNDLE]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l kmip-server -d 'KMIP server, HOST:PORT (5696 is KMIP\'s port) [env: CRYPTADM_KMIP_SERVER]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l kmip-cacert -d 'PEM file of the CA that signed the KMIP server\'s certificate [env: CRYPTADM_KMIP_CACERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l kmip-client-cert -d 'PEM client certificate for TLS client authentication [env: CRYPTADM_KMIP_CLIENT_CERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l kmip-client-key -d 'PEM key of --kmip-client-cert [env: CRYPTADM_KMIP_CLIENT_KEY]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l kmip-username -d 'Username of a KMIP Username and Password credential [env: CRYPTADM_KMIP_USERNAME]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l kmip-password-file -d 'File holding the credential\'s password [env: CRYPTADM_KMIP_PASSWORD_FILE, CRYPTADM_KMIP_PASSWORD]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l clevis-pin -d 'Clevis pin to encrypt to: `tang` (one Tang server), `tpm2` (this machine\'s TPM) or `sss` (a threshold of pins), as `clevis encrypt PIN`' -r -f -a "tang\t''
tpm2\t''
sss\t''"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l clevis-config -d 'The pin\'s configuration, the JSON `clevis encrypt` takes: `{"url":URL,"thp":THUMBPRINT}` for tang, `{"pcr_ids":"7","pcr_bank":"sha256"}` for tpm2 (also `hash`, `key` ecc|rsa, `pcr_digest`), `{"t":2,"pins":{"tang":[{"url":…},{"url":…}],"tpm2":{…}}}` for sss, whose pins may also be cryptadm\'s key-manager pins `aws-kms`, `vault-transit` and `kmip`, each `[{"key":REFERENCE}]` (docs/threshold.md); `"adv"` may name an advertisement file' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l tpm2-device -d 'The TPM of `tpm2` pins: a device path or a TCTI string (`device:PATH`, `swtpm:host=H,port=P`, `mssim:host=H,port=P`); else TPM2TOOLS_TCTI, else /dev/tpmrm0' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l color -d 'When to colour messages' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l timeout -d 'Overall deadline of the command\'s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l glance -d 'Print the output\'s Glance properties, the `openstack image create` line and, when encrypted, the `openstack secret store` line for its secret'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l delete-key-with-image -d 'Delete the secret with the image (os_encrypt_key_deletion_policy=True; default False: the secret outlives the image)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l force -d 'Overwrite an existing LUKS header or a non-empty target'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l vault-skip-verify -d 'Accept any server certificate (insecure; VAULT_SKIP_VERIFY alone is refused)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l clevis-trust-adv -d 'Trust a Tang advertisement that no `thp` pins, as fetched (clevis encrypt\'s `-y`); without it such a server is refused and its signing-key thumbprints are printed'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -s q -l quiet -d 'Print only errors'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -s v -l verbose -d 'Print details of each step'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -l no-progress -d 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from luks-format" -s V -l version -d 'Print version'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from inspect" -l output-format -d 'Format of the printed document' -r -f -a "yaml\t'A YAML stream'
json\t'JSON (several documents as a v1 List)'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from inspect" -l color -d 'When to colour messages' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from inspect" -l timeout -d 'Overall deadline of the command\'s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from inspect" -s q -l quiet -d 'Print only errors'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from inspect" -s v -l verbose -d 'Print details of each step'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from inspect" -l no-progress -d 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from inspect" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from inspect" -s V -l version -d 'Print version'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -l passphrase-file -d 'Read the passphrase from FILE (`-`: standard input), byte for byte: no newline is stripped' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -l key-file -d 'Read the passphrase from FILE (`-`: standard input), the whole file byte for byte, as cryptsetup does' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -l out -d 'Where to write the raw image (`-`: standard output): a new file, or a block device (written in place)' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -l tpm2-device -d 'The TPM of the binding\'s tpm2 pins: a device path or a TCTI string (`device:PATH`, `swtpm:host=H,port=P`); else TPM2TOOLS_TCTI, else /dev/tpmrm0' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -l vault-addr -d 'Server address, e.g. https://vault:8200 [env: VAULT_ADDR, BAO_ADDR]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -l vault-namespace -d 'Namespace (X-Vault-Namespace) [env: VAULT_NAMESPACE, BAO_NAMESPACE]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -l vault-cacert -d 'PEM file of the CA that signed the server\'s certificate [env: VAULT_CACERT, BAO_CACERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -l vault-capath -d 'Directory of PEM CA certificates [env: VAULT_CAPATH, BAO_CAPATH]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -l vault-client-cert -d 'PEM client certificate for TLS client authentication [env: VAULT_CLIENT_CERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -l vault-client-key -d 'PEM key of --vault-client-cert [env: VAULT_CLIENT_KEY]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -l vault-auth -d 'How to log in [env: CRYPTADM_VAULT_AUTH] [default: token]' -r -f -a "token\t'A token: --vault-token-file, VAULT_TOKEN or ~/.vault-token'
approle\t'AppRole: --vault-role-id and --vault-secret-id-file (auth/approle/login)'
jwt\t'JWT: --vault-role and --vault-jwt-file (auth/jwt/login)'
kubernetes\t'Kubernetes: --vault-role and the service-account token (auth/kubernetes/login)'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -l vault-auth-mount -d 'Mount path of the auth method [env: CRYPTADM_VAULT_AUTH_MOUNT] [default: approle, jwt or kubernetes]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -l vault-role -d 'Role to log in as (jwt, kubernetes) [env: CRYPTADM_VAULT_ROLE]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -l vault-role-id -d 'AppRole role id [env: CRYPTADM_VAULT_ROLE_ID]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -l vault-secret-id-file -d 'File holding the AppRole secret id (0600) [env: CRYPTADM_VAULT_SECRET_ID_FILE]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -l vault-jwt-file -d 'File holding the JWT (0600; kubernetes default: the pod\'s service-account token) [env: CRYPTADM_VAULT_JWT_FILE]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -l vault-token-file -d 'File holding a token (0600), instead of VAULT_TOKEN or ~/.vault-token' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -l aws-region -d 'Region of requests whose resource is not an ARN [env: AWS_REGION, AWS_DEFAULT_REGION]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -l aws-endpoint-url -d 'Endpoint of every AWS service, e.g. http://127.0.0.1:5000 (LocalStack, MinIO for S3) [env: AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -l aws-profile -d 'Profile of ~/.aws/config and ~/.aws/credentials [env: AWS_PROFILE] [default: default]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -l aws-ca-bundle -d 'PEM bundle of CAs trusted for AWS endpoints besides the system roots [env: AWS_CA_BUNDLE]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -l kmip-server -d 'KMIP server, HOST:PORT (5696 is KMIP\'s port) [env: CRYPTADM_KMIP_SERVER]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -l kmip-cacert -d 'PEM file of the CA that signed the KMIP server\'s certificate [env: CRYPTADM_KMIP_CACERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -l kmip-client-cert -d 'PEM client certificate for TLS client authentication [env: CRYPTADM_KMIP_CLIENT_CERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -l kmip-client-key -d 'PEM key of --kmip-client-cert [env: CRYPTADM_KMIP_CLIENT_KEY]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -l kmip-username -d 'Username of a KMIP Username and Password credential [env: CRYPTADM_KMIP_USERNAME]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -l kmip-password-file -d 'File holding the credential\'s password [env: CRYPTADM_KMIP_PASSWORD_FILE, CRYPTADM_KMIP_PASSWORD]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -l color -d 'When to colour messages' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -l timeout -d 'Overall deadline of the command\'s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -l force -d 'Replace a non-empty --out file, or overwrite a block device that holds data'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -l clevis -d 'Unlock through the volume\'s clevis binding (its LUKS2 `clevis` token), asking its Tang servers and TPM, as `clevis luks unlock` does, instead of with a passphrase'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -l tpm2 -d 'Unlock through the volume\'s TPM2 enrolment (its LUKS2 `systemd-tpm2` token, as systemd-cryptenroll writes it), asking the TPM, instead of with a passphrase; the PIN of one enrolled with a PIN (--tpm2-with-pin) is read as a passphrase is (--passphrase-file, --key-file, or asked on a terminal)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -l vault-skip-verify -d 'Accept any server certificate (insecure; VAULT_SKIP_VERIFY alone is refused)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -s q -l quiet -d 'Print only errors'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -s v -l verbose -d 'Print details of each step'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -l no-progress -d 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from decrypt" -s V -l version -d 'Print version'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from convert" -l format -d 'Container of the output (default: the source\'s)' -r -f -a "raw\t'A raw disk image (raw LUKS when encrypted)'
qcow2\t'qcow2 version 3 (LUKS inside when encrypted)'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from convert" -l encryption-key -d 'Which key encrypts the output (Nova\'s snapshot `encryption.key`)' -r -f -a "same\t'The source\'s volume key and passphrase (Nova\'s snapshot); with --key-manager the source\'s secret is copied into a new secret the output owns'
shelve\t'The source\'s volume key and passphrase, sharing the source\'s key-manager secret itself (Nova\'s shelve); never under a deletion policy'
new\t'A new volume key and a generated secret, written to --new-key-file'
existing\t'A new volume key; the secret in --new-key-file'
none\t'No encryption: a plain image'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from convert" -l passphrase-file -d 'Read the passphrase from FILE (`-`: standard input), byte for byte: no newline is stripped' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from convert" -l key-file -d 'Read the passphrase from FILE (`-`: standard input), the whole file byte for byte, as cryptsetup does' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from convert" -l new-key-file -d 'The output\'s secret: read for `existing`, created for `new` (0600; an existing file is never overwritten)' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from convert" -l secret-type -d 'How the output\'s secret becomes its LUKS passphrase: verbatim (`passphrase`, Nova; the default) or lowercase hex of the key bytes (`symmetric`, Cinder and os-brick); a key-manager secret\'s own Barbican type decides, and a contradicting --secret-type is refused' -r -f -a "passphrase\t'Barbican `passphrase`: the file\'s bytes are the passphrase (Nova)'
symmetric\t'Barbican `symmetric`: the file holds raw key bytes; the passphrase is their lowercase hex (os-brick)'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from convert" -l source-secret-type -d 'How the source\'s --key-file becomes its passphrase (default: --secret-type)' -r -f -a "passphrase\t'Barbican `passphrase`: the file\'s bytes are the passphrase (Nova)'
symmetric\t'Barbican `symmetric`: the file holds raw key bytes; the passphrase is their lowercase hex (os-brick)'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from convert" -l source-secret -d 'The source image\'s Barbican secret (its os_encrypt_key_id, UUID or href): the source\'s passphrase is read from the key manager (same rules as --secret), so no passphrase needs to be on disk' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from convert" -l cluster-size -d 'qcow2 cluster size in bytes, 512 to 2M, a power of two (default 64K, QEMU\'s)' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from convert" -l iter-time -d 'Milliseconds the keyslot\'s PBKDF2 should take (benchmarked like cryptsetup)' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from convert" -l pbkdf-force-iterations -d 'Skip the benchmark: PBKDF2 iterations of the keyslot (the digest takes the minimum, 1000)' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from convert" -l key-id -d 'The key manager (Barbican) secret that holds the output\'s secret: os_encrypt_key_id' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from convert" -l key-deletion-policy -d 'Old spelling of --delete-key-with-image: on_image_deletion or do_not_delete' -r -f -a "on_image_deletion\t'Glance deletes the secret with the image'
do_not_delete\t'The secret outlives the image'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from convert" -l output-format -d 'Format of the printed Glance properties (--glance), or of the ids printed with --key-manager or --upload (json: `{"image_id", "secret_id"}`; else one id a line)' -r -f -a "yaml\t'A YAML stream'
json\t'JSON (several documents as a v1 List)'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from convert" -l key-manager -d 'Keep the image\'s secret in a key manager: a new secret is stored there (its UUID becomes os_encrypt_key_id), or --secret names an existing one' -r -f -a "barbican\t'OpenStack Barbican (found in the --os-cloud catalog)'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from convert" -l secret -d 'An existing Barbican secret (barbican://UUID, https://HOST/…/v1/secrets/UUID, UUID) whose payload gives the passphrase (`symmetric`: its lowercase hex, as os-brick derives it)' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from convert" -l upload -d 'Upload the image to Glance as NAME (with its disk and container formats and every os_encrypt_* property), and register it as a consumer of its secret; on any failure what was created is deleted again' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from convert" -l os-cloud -d 'The cloud of clouds.yaml to log in to (OS_CLOUD); OS_* variables override its settings' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from convert" -l color -d 'When to colour messages' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from convert" -l timeout -d 'Overall deadline of the command\'s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from convert" -l glance -d 'Print the output\'s Glance properties, the `openstack image create` line and, when encrypted, the `openstack secret store` line for its secret'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from convert" -l delete-key-with-image -d 'Delete the secret with the image (os_encrypt_key_deletion_policy=True; default False: the secret outlives the image)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from convert" -l force -d 'Replace DST if it exists'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from convert" -s q -l quiet -d 'Print only errors'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from convert" -s v -l verbose -d 'Print details of each step'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from convert" -l no-progress -d 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from convert" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from convert" -s V -l version -d 'Print version'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -l passphrase-file -d 'Read the passphrase from FILE (`-`: standard input), byte for byte: no newline is stripped' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -l key-file -d 'Read the passphrase from FILE (`-`: standard input), the whole file byte for byte, as cryptsetup does' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -l vault-addr -d 'Server address, e.g. https://vault:8200 [env: VAULT_ADDR, BAO_ADDR]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -l vault-namespace -d 'Namespace (X-Vault-Namespace) [env: VAULT_NAMESPACE, BAO_NAMESPACE]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -l vault-cacert -d 'PEM file of the CA that signed the server\'s certificate [env: VAULT_CACERT, BAO_CACERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -l vault-capath -d 'Directory of PEM CA certificates [env: VAULT_CAPATH, BAO_CAPATH]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -l vault-client-cert -d 'PEM client certificate for TLS client authentication [env: VAULT_CLIENT_CERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -l vault-client-key -d 'PEM key of --vault-client-cert [env: VAULT_CLIENT_KEY]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -l vault-auth -d 'How to log in [env: CRYPTADM_VAULT_AUTH] [default: token]' -r -f -a "token\t'A token: --vault-token-file, VAULT_TOKEN or ~/.vault-token'
approle\t'AppRole: --vault-role-id and --vault-secret-id-file (auth/approle/login)'
jwt\t'JWT: --vault-role and --vault-jwt-file (auth/jwt/login)'
kubernetes\t'Kubernetes: --vault-role and the service-account token (auth/kubernetes/login)'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -l vault-auth-mount -d 'Mount path of the auth method [env: CRYPTADM_VAULT_AUTH_MOUNT] [default: approle, jwt or kubernetes]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -l vault-role -d 'Role to log in as (jwt, kubernetes) [env: CRYPTADM_VAULT_ROLE]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -l vault-role-id -d 'AppRole role id [env: CRYPTADM_VAULT_ROLE_ID]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -l vault-secret-id-file -d 'File holding the AppRole secret id (0600) [env: CRYPTADM_VAULT_SECRET_ID_FILE]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -l vault-jwt-file -d 'File holding the JWT (0600; kubernetes default: the pod\'s service-account token) [env: CRYPTADM_VAULT_JWT_FILE]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -l vault-token-file -d 'File holding a token (0600), instead of VAULT_TOKEN or ~/.vault-token' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -l aws-region -d 'Region of requests whose resource is not an ARN [env: AWS_REGION, AWS_DEFAULT_REGION]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -l aws-endpoint-url -d 'Endpoint of every AWS service, e.g. http://127.0.0.1:5000 (LocalStack, MinIO for S3) [env: AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -l aws-profile -d 'Profile of ~/.aws/config and ~/.aws/credentials [env: AWS_PROFILE] [default: default]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -l aws-ca-bundle -d 'PEM bundle of CAs trusted for AWS endpoints besides the system roots [env: AWS_CA_BUNDLE]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -l kmip-server -d 'KMIP server, HOST:PORT (5696 is KMIP\'s port) [env: CRYPTADM_KMIP_SERVER]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -l kmip-cacert -d 'PEM file of the CA that signed the KMIP server\'s certificate [env: CRYPTADM_KMIP_CACERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -l kmip-client-cert -d 'PEM client certificate for TLS client authentication [env: CRYPTADM_KMIP_CLIENT_CERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -l kmip-client-key -d 'PEM key of --kmip-client-cert [env: CRYPTADM_KMIP_CLIENT_KEY]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -l kmip-username -d 'Username of a KMIP Username and Password credential [env: CRYPTADM_KMIP_USERNAME]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -l kmip-password-file -d 'File holding the credential\'s password [env: CRYPTADM_KMIP_PASSWORD_FILE, CRYPTADM_KMIP_PASSWORD]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -l clevis-pin -d 'Clevis pin to encrypt to: `tang` (one Tang server), `tpm2` (this machine\'s TPM) or `sss` (a threshold of pins), as `clevis encrypt PIN`' -r -f -a "tang\t''
tpm2\t''
sss\t''"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -l clevis-config -d 'The pin\'s configuration, the JSON `clevis encrypt` takes: `{"url":URL,"thp":THUMBPRINT}` for tang, `{"pcr_ids":"7","pcr_bank":"sha256"}` for tpm2 (also `hash`, `key` ecc|rsa, `pcr_digest`), `{"t":2,"pins":{"tang":[{"url":…},{"url":…}],"tpm2":{…}}}` for sss, whose pins may also be cryptadm\'s key-manager pins `aws-kms`, `vault-transit` and `kmip`, each `[{"key":REFERENCE}]` (docs/threshold.md); `"adv"` may name an advertisement file' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -l tpm2-device -d 'The TPM of `tpm2` pins: a device path or a TCTI string (`device:PATH`, `swtpm:host=H,port=P`, `mssim:host=H,port=P`); else TPM2TOOLS_TCTI, else /dev/tpmrm0' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -l color -d 'When to colour messages' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -l timeout -d 'Overall deadline of the command\'s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -l vault-skip-verify -d 'Accept any server certificate (insecure; VAULT_SKIP_VERIFY alone is refused)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -l clevis-trust-adv -d 'Trust a Tang advertisement that no `thp` pins, as fetched (clevis encrypt\'s `-y`); without it such a server is refused and its signing-key thumbprints are printed'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -s q -l quiet -d 'Print only errors'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -s v -l verbose -d 'Print details of each step'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -l no-progress -d 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from clevis-bind" -s V -l version -d 'Print version'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from tpm2-enroll" -l passphrase-file -d 'Read the passphrase from FILE (`-`: standard input), byte for byte: no newline is stripped' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from tpm2-enroll" -l key-file -d 'Read the passphrase from FILE (`-`: standard input), the whole file byte for byte, as cryptsetup does' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from tpm2-enroll" -l tpm2-pcrs -d 'The PCRs whose current values the secret is sealed to, e.g. `7` or `0,7` (systemd-cryptenroll\'s --tpm2-pcrs, `+` separators accepted); empty: no PCR policy' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from tpm2-enroll" -l tpm2-pcr-bank -d 'The PCR bank of --tpm2-pcrs' -r -f -a "sha1\t''
sha256\t''
sha384\t''
sha512\t''"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from tpm2-enroll" -l tpm2-primary-alg -d 'The storage primary key\'s algorithm' -r -f -a "ecc\t''
rsa\t''"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from tpm2-enroll" -l tpm2-device -d 'The TPM: a device path or a TCTI string (`device:PATH`, `swtpm:host=H,port=P`); else TPM2TOOLS_TCTI, else /dev/tpmrm0' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from tpm2-enroll" -l tpm2-pin-file -d 'Read the PIN of --tpm2-with-pin from FILE (`-`: standard input), the whole file byte for byte' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from tpm2-enroll" -l color -d 'When to colour messages' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from tpm2-enroll" -l timeout -d 'Overall deadline of the command\'s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from tpm2-enroll" -l tpm2-with-pin -d 'Also seal to a PIN, as systemd-cryptenroll --tpm2-with-pin=yes does (systemd-cryptsetup asks for it at boot); the PIN is read from --tpm2-pin-file'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from tpm2-enroll" -s q -l quiet -d 'Print only errors'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from tpm2-enroll" -s v -l verbose -d 'Print details of each step'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from tpm2-enroll" -l no-progress -d 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from tpm2-enroll" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from tpm2-enroll" -s V -l version -d 'Print version'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from help" -f -a "luks-format" -d 'Create a LUKS2 or LUKS1 image (or format a block device), optionally encrypting a raw image into it'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from help" -f -a "inspect" -d 'Show a LUKS1 or LUKS2 header, or a qcow2 image and its LUKS header: version, UUID, data segment, keyslots'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from help" -f -a "decrypt" -d 'Decrypt the payload of a LUKS1 or LUKS2 image or device, or a qcow2+LUKS image, into a raw image'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from help" -f -a "convert" -d 'Convert a disk image between raw, raw LUKS, qcow2 and qcow2+LUKS in one stream (qemu-img convert\'s verb)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from help" -f -a "clevis-bind" -d 'Bind a LUKS2 volume to Tang servers (clevis\'s `tang` or `sss` pin), as `clevis luks bind` does'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from help" -f -a "tpm2-enroll" -d 'Enrol a LUKS2 volume with the TPM, as `systemd-cryptenroll --tpm2-device` does'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand disk; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and not __fish_seen_subcommand_from rotate serve rewrap import help" -l color -d 'When to colour messages' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and not __fish_seen_subcommand_from rotate serve rewrap import help" -l timeout -d 'Overall deadline of the command\'s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and not __fish_seen_subcommand_from rotate serve rewrap import help" -s q -l quiet -d 'Print only errors'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and not __fish_seen_subcommand_from rotate serve rewrap import help" -s v -l verbose -d 'Print details of each step'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and not __fish_seen_subcommand_from rotate serve rewrap import help" -l no-progress -d 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and not __fish_seen_subcommand_from rotate serve rewrap import help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and not __fish_seen_subcommand_from rotate serve rewrap import help" -s V -l version -d 'Print version'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and not __fish_seen_subcommand_from rotate serve rewrap import help" -f -a "rotate" -d 'Rotate the passphrase (key-encryption key) of a LUKS1 or LUKS2 volume'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and not __fish_seen_subcommand_from rotate serve rewrap import help" -f -a "serve" -d 'Serve CSI-Addons EncryptionKeyRotation over gRPC on a unix socket'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and not __fish_seen_subcommand_from rotate serve rewrap import help" -f -a "rewrap" -d 'Rotate the Transit key of a vault-kv:// key store and rewrap every stored passphrase'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and not __fish_seen_subcommand_from rotate serve rewrap import help" -f -a "import" -d 'Store an existing volume\'s passphrase in a key store, so that `volume rotate` takes the volume over'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and not __fish_seen_subcommand_from rotate serve rewrap import help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l volume-id -d 'The volume\'s id: its entry in the key store and the name of its lock' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l volume-path -d 'The LUKS1 or LUKS2 volume: an image file or a block device (default: found from the volume id, see --volume-path-template and --sysfs-root)' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l key-store -d 'Key store: file:///DIR, vault-kv://MOUNT/PREFIX, kmip://PREFIX or NAME:REST' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l new-key-file -d 'Set the passphrase in FILE (byte for byte) instead of generating one' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l request -d 'The RPC\'s request as JSON (`-`: standard input) instead of --volume-id and --volume-path' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l volume-path-template -d 'Find a volume without a path here: an absolute path with {volume_id}, which is replaced by the volume id with bytes outside [A-Za-z0-9._-] (and a leading .) written as %XX. Used when that path exists; otherwise the volume\'s dm-crypt mapping is looked up in sysfs' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l sysfs-root -d 'Where sysfs is mounted, for finding a volume\'s active dm-crypt mapping (a LUKS1/LUKS2 mapping named <volume id> or *-<volume id>, e.g. ceph-csi\'s luks-rbd-<volume id>; its one backing device holds the header)' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l dev-root -d 'Where the backing devices of dm-crypt mappings are (<dev-root>/<kernel name>)' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l key-wrap -d 'Store every passphrase wrapped, never in plain, by this key: vault-transit://MOUNT/KEY, aws-kms://ARN, arn:aws:kms:REGION:ACCOUNT:key/ID, …:alias/NAME or kmip://UID (any store; a store\'s existing values must already be in this wrap\'s form)' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l vault-addr -d 'Server address, e.g. https://vault:8200 [env: VAULT_ADDR, BAO_ADDR]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l vault-namespace -d 'Namespace (X-Vault-Namespace) [env: VAULT_NAMESPACE, BAO_NAMESPACE]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l vault-cacert -d 'PEM file of the CA that signed the server\'s certificate [env: VAULT_CACERT, BAO_CACERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l vault-capath -d 'Directory of PEM CA certificates [env: VAULT_CAPATH, BAO_CAPATH]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l vault-client-cert -d 'PEM client certificate for TLS client authentication [env: VAULT_CLIENT_CERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l vault-client-key -d 'PEM key of --vault-client-cert [env: VAULT_CLIENT_KEY]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l vault-auth -d 'How to log in [env: CRYPTADM_VAULT_AUTH] [default: token]' -r -f -a "token\t'A token: --vault-token-file, VAULT_TOKEN or ~/.vault-token'
approle\t'AppRole: --vault-role-id and --vault-secret-id-file (auth/approle/login)'
jwt\t'JWT: --vault-role and --vault-jwt-file (auth/jwt/login)'
kubernetes\t'Kubernetes: --vault-role and the service-account token (auth/kubernetes/login)'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l vault-auth-mount -d 'Mount path of the auth method [env: CRYPTADM_VAULT_AUTH_MOUNT] [default: approle, jwt or kubernetes]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l vault-role -d 'Role to log in as (jwt, kubernetes) [env: CRYPTADM_VAULT_ROLE]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l vault-role-id -d 'AppRole role id [env: CRYPTADM_VAULT_ROLE_ID]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l vault-secret-id-file -d 'File holding the AppRole secret id (0600) [env: CRYPTADM_VAULT_SECRET_ID_FILE]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l vault-jwt-file -d 'File holding the JWT (0600; kubernetes default: the pod\'s service-account token) [env: CRYPTADM_VAULT_JWT_FILE]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l vault-token-file -d 'File holding a token (0600), instead of VAULT_TOKEN or ~/.vault-token' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l kmip-server -d 'KMIP server, HOST:PORT (5696 is KMIP\'s port) [env: CRYPTADM_KMIP_SERVER]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l kmip-cacert -d 'PEM file of the CA that signed the KMIP server\'s certificate [env: CRYPTADM_KMIP_CACERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l kmip-client-cert -d 'PEM client certificate for TLS client authentication [env: CRYPTADM_KMIP_CLIENT_CERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l kmip-client-key -d 'PEM key of --kmip-client-cert [env: CRYPTADM_KMIP_CLIENT_KEY]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l kmip-username -d 'Username of a KMIP Username and Password credential [env: CRYPTADM_KMIP_USERNAME]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l kmip-password-file -d 'File holding the credential\'s password [env: CRYPTADM_KMIP_PASSWORD_FILE, CRYPTADM_KMIP_PASSWORD]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l aws-region -d 'Region of requests whose resource is not an ARN [env: AWS_REGION, AWS_DEFAULT_REGION]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l aws-endpoint-url -d 'Endpoint of every AWS service, e.g. http://127.0.0.1:5000 (LocalStack, MinIO for S3) [env: AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l aws-profile -d 'Profile of ~/.aws/config and ~/.aws/credentials [env: AWS_PROFILE] [default: default]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l aws-ca-bundle -d 'PEM bundle of CAs trusted for AWS endpoints besides the system roots [env: AWS_CA_BUNDLE]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l color -d 'When to colour messages' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l timeout -d 'Overall deadline of the command\'s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l take-over-claim -d 'Take over another run\'s rotation claim in the key store even before it expires (only when that run is known to be dead, e.g. its node is gone; see docs/volume-rotation.md)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l vault-skip-verify -d 'Accept any server certificate (insecure; VAULT_SKIP_VERIFY alone is refused)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -s q -l quiet -d 'Print only errors'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -s v -l verbose -d 'Print details of each step'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -l no-progress -d 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rotate" -s V -l version -d 'Print version'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -l endpoint -d 'Where to listen: unix:///absolute/path.sock' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -l key-store -d 'Key store: file:///DIR, vault-kv://MOUNT/PREFIX, kmip://PREFIX or NAME:REST' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -l drivername -d 'The name GetIdentity returns: the CSI driver whose volumes this node rotates (the PV\'s spec.csi.driver)' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -l max-concurrent -d 'Rotations that run at once [default: half the memory / 4 GiB, between 1 and the number of CPUs]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -l max-queued -d 'Requests that may wait for a turn; more get ABORTED' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -l volume-path-template -d 'Find a volume without a path here: an absolute path with {volume_id}, which is replaced by the volume id with bytes outside [A-Za-z0-9._-] (and a leading .) written as %XX. Used when that path exists; otherwise the volume\'s dm-crypt mapping is looked up in sysfs' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -l sysfs-root -d 'Where sysfs is mounted, for finding a volume\'s active dm-crypt mapping (a LUKS1/LUKS2 mapping named <volume id> or *-<volume id>, e.g. ceph-csi\'s luks-rbd-<volume id>; its one backing device holds the header)' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -l dev-root -d 'Where the backing devices of dm-crypt mappings are (<dev-root>/<kernel name>)' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -l key-wrap -d 'Store every passphrase wrapped, never in plain, by this key: vault-transit://MOUNT/KEY, aws-kms://ARN, arn:aws:kms:REGION:ACCOUNT:key/ID, …:alias/NAME or kmip://UID (any store; a store\'s existing values must already be in this wrap\'s form)' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -l vault-addr -d 'Server address, e.g. https://vault:8200 [env: VAULT_ADDR, BAO_ADDR]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -l vault-namespace -d 'Namespace (X-Vault-Namespace) [env: VAULT_NAMESPACE, BAO_NAMESPACE]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -l vault-cacert -d 'PEM file of the CA that signed the server\'s certificate [env: VAULT_CACERT, BAO_CACERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -l vault-capath -d 'Directory of PEM CA certificates [env: VAULT_CAPATH, BAO_CAPATH]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -l vault-client-cert -d 'PEM client certificate for TLS client authentication [env: VAULT_CLIENT_CERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -l vault-client-key -d 'PEM key of --vault-client-cert [env: VAULT_CLIENT_KEY]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -l vault-auth -d 'How to log in [env: CRYPTADM_VAULT_AUTH] [default: token]' -r -f -a "token\t'A token: --vault-token-file, VAULT_TOKEN or ~/.vault-token'
approle\t'AppRole: --vault-role-id and --vault-secret-id-file (auth/approle/login)'
jwt\t'JWT: --vault-role and --vault-jwt-file (auth/jwt/login)'
kubernetes\t'Kubernetes: --vault-role and the service-account token (auth/kubernetes/login)'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -l vault-auth-mount -d 'Mount path of the auth method [env: CRYPTADM_VAULT_AUTH_MOUNT] [default: approle, jwt or kubernetes]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -l vault-role -d 'Role to log in as (jwt, kubernetes) [env: CRYPTADM_VAULT_ROLE]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -l vault-role-id -d 'AppRole role id [env: CRYPTADM_VAULT_ROLE_ID]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -l vault-secret-id-file -d 'File holding the AppRole secret id (0600) [env: CRYPTADM_VAULT_SECRET_ID_FILE]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -l vault-jwt-file -d 'File holding the JWT (0600; kubernetes default: the pod\'s service-account token) [env: CRYPTADM_VAULT_JWT_FILE]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -l vault-token-file -d 'File holding a token (0600), instead of VAULT_TOKEN or ~/.vault-token' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -l kmip-server -d 'KMIP server, HOST:PORT (5696 is KMIP\'s port) [env: CRYPTADM_KMIP_SERVER]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -l kmip-cacert -d 'PEM file of the CA that signed the KMIP server\'s certificate [env: CRYPTADM_KMIP_CACERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -l kmip-client-cert -d 'PEM client certificate for TLS client authentication [env: CRYPTADM_KMIP_CLIENT_CERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -l kmip-client-key -d 'PEM key of --kmip-client-cert [env: CRYPTADM_KMIP_CLIENT_KEY]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -l kmip-username -d 'Username of a KMIP Username and Password credential [env: CRYPTADM_KMIP_USERNAME]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -l kmip-password-file -d 'File holding the credential\'s password [env: CRYPTADM_KMIP_PASSWORD_FILE, CRYPTADM_KMIP_PASSWORD]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -l aws-region -d 'Region of requests whose resource is not an ARN [env: AWS_REGION, AWS_DEFAULT_REGION]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -l aws-endpoint-url -d 'Endpoint of every AWS service, e.g. http://127.0.0.1:5000 (LocalStack, MinIO for S3) [env: AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -l aws-profile -d 'Profile of ~/.aws/config and ~/.aws/credentials [env: AWS_PROFILE] [default: default]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -l aws-ca-bundle -d 'PEM bundle of CAs trusted for AWS endpoints besides the system roots [env: AWS_CA_BUNDLE]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -l color -d 'When to colour messages' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -l timeout -d 'Overall deadline of the command\'s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -l vault-skip-verify -d 'Accept any server certificate (insecure; VAULT_SKIP_VERIFY alone is refused)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -s q -l quiet -d 'Print only errors'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -s v -l verbose -d 'Print details of each step'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -l no-progress -d 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from serve" -s V -l version -d 'Print version'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rewrap" -l key-store -d 'The key store: vault-kv://MOUNT/PREFIX or file:///DIR (wrapped by Transit or AWS KMS)' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rewrap" -l key-wrap -d 'The key that wraps the store\'s values: vault-transit://MOUNT/KEY or aws-kms://ARN, also written as the bare ARN arn:aws:kms:REGION:ACCOUNT:key/ID, …:alias/NAME (vault-kv:// and file:// stores)' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rewrap" -l vault-addr -d 'Server address, e.g. https://vault:8200 [env: VAULT_ADDR, BAO_ADDR]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rewrap" -l vault-namespace -d 'Namespace (X-Vault-Namespace) [env: VAULT_NAMESPACE, BAO_NAMESPACE]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rewrap" -l vault-cacert -d 'PEM file of the CA that signed the server\'s certificate [env: VAULT_CACERT, BAO_CACERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rewrap" -l vault-capath -d 'Directory of PEM CA certificates [env: VAULT_CAPATH, BAO_CAPATH]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rewrap" -l vault-client-cert -d 'PEM client certificate for TLS client authentication [env: VAULT_CLIENT_CERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rewrap" -l vault-client-key -d 'PEM key of --vault-client-cert [env: VAULT_CLIENT_KEY]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rewrap" -l vault-auth -d 'How to log in [env: CRYPTADM_VAULT_AUTH] [default: token]' -r -f -a "token\t'A token: --vault-token-file, VAULT_TOKEN or ~/.vault-token'
approle\t'AppRole: --vault-role-id and --vault-secret-id-file (auth/approle/login)'
jwt\t'JWT: --vault-role and --vault-jwt-file (auth/jwt/login)'
kubernetes\t'Kubernetes: --vault-role and the service-account token (auth/kubernetes/login)'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rewrap" -l vault-auth-mount -d 'Mount path of the auth method [env: CRYPTADM_VAULT_AUTH_MOUNT] [default: approle, jwt or kubernetes]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rewrap" -l vault-role -d 'Role to log in as (jwt, kubernetes) [env: CRYPTADM_VAULT_ROLE]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rewrap" -l vault-role-id -d 'AppRole role id [env: CRYPTADM_VAULT_ROLE_ID]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rewrap" -l vault-secret-id-file -d 'File holding the AppRole secret id (0600) [env: CRYPTADM_VAULT_SECRET_ID_FILE]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rewrap" -l vault-jwt-file -d 'File holding the JWT (0600; kubernetes default: the pod\'s service-account token) [env: CRYPTADM_VAULT_JWT_FILE]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rewrap" -l vault-token-file -d 'File holding a token (0600), instead of VAULT_TOKEN or ~/.vault-token' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rewrap" -l aws-region -d 'Region of requests whose resource is not an ARN [env: AWS_REGION, AWS_DEFAULT_REGION]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rewrap" -l aws-endpoint-url -d 'Endpoint of every AWS service, e.g. http://127.0.0.1:5000 (LocalStack, MinIO for S3) [env: AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rewrap" -l aws-profile -d 'Profile of ~/.aws/config and ~/.aws/credentials [env: AWS_PROFILE] [default: default]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rewrap" -l aws-ca-bundle -d 'PEM bundle of CAs trusted for AWS endpoints besides the system roots [env: AWS_CA_BUNDLE]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rewrap" -l color -d 'When to colour messages' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rewrap" -l timeout -d 'Overall deadline of the command\'s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rewrap" -l no-rotate -d 'Rewrap only; do not rotate the Transit key first'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rewrap" -l vault-skip-verify -d 'Accept any server certificate (insecure; VAULT_SKIP_VERIFY alone is refused)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rewrap" -s q -l quiet -d 'Print only errors'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rewrap" -s v -l verbose -d 'Print details of each step'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rewrap" -l no-progress -d 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rewrap" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from rewrap" -s V -l version -d 'Print version'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -l volume-id -d 'The volume\'s id: its entry in the key store' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -l volume-path -d 'The LUKS1 or LUKS2 volume the passphrase opens: an image file or a block device' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -l passphrase-file -d 'The passphrase that opens the volume now, byte for byte (`-`: standard input)' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -l key-store -d 'Key store: file:///DIR, vault-kv://MOUNT/PREFIX, kmip://PREFIX or NAME:REST' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -l key-wrap -d 'Store every passphrase wrapped, never in plain, by this key: vault-transit://MOUNT/KEY, aws-kms://ARN, arn:aws:kms:REGION:ACCOUNT:key/ID, …:alias/NAME or kmip://UID (any store; a store\'s existing values must already be in this wrap\'s form)' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -l vault-addr -d 'Server address, e.g. https://vault:8200 [env: VAULT_ADDR, BAO_ADDR]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -l vault-namespace -d 'Namespace (X-Vault-Namespace) [env: VAULT_NAMESPACE, BAO_NAMESPACE]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -l vault-cacert -d 'PEM file of the CA that signed the server\'s certificate [env: VAULT_CACERT, BAO_CACERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -l vault-capath -d 'Directory of PEM CA certificates [env: VAULT_CAPATH, BAO_CAPATH]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -l vault-client-cert -d 'PEM client certificate for TLS client authentication [env: VAULT_CLIENT_CERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -l vault-client-key -d 'PEM key of --vault-client-cert [env: VAULT_CLIENT_KEY]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -l vault-auth -d 'How to log in [env: CRYPTADM_VAULT_AUTH] [default: token]' -r -f -a "token\t'A token: --vault-token-file, VAULT_TOKEN or ~/.vault-token'
approle\t'AppRole: --vault-role-id and --vault-secret-id-file (auth/approle/login)'
jwt\t'JWT: --vault-role and --vault-jwt-file (auth/jwt/login)'
kubernetes\t'Kubernetes: --vault-role and the service-account token (auth/kubernetes/login)'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -l vault-auth-mount -d 'Mount path of the auth method [env: CRYPTADM_VAULT_AUTH_MOUNT] [default: approle, jwt or kubernetes]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -l vault-role -d 'Role to log in as (jwt, kubernetes) [env: CRYPTADM_VAULT_ROLE]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -l vault-role-id -d 'AppRole role id [env: CRYPTADM_VAULT_ROLE_ID]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -l vault-secret-id-file -d 'File holding the AppRole secret id (0600) [env: CRYPTADM_VAULT_SECRET_ID_FILE]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -l vault-jwt-file -d 'File holding the JWT (0600; kubernetes default: the pod\'s service-account token) [env: CRYPTADM_VAULT_JWT_FILE]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -l vault-token-file -d 'File holding a token (0600), instead of VAULT_TOKEN or ~/.vault-token' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -l kmip-server -d 'KMIP server, HOST:PORT (5696 is KMIP\'s port) [env: CRYPTADM_KMIP_SERVER]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -l kmip-cacert -d 'PEM file of the CA that signed the KMIP server\'s certificate [env: CRYPTADM_KMIP_CACERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -l kmip-client-cert -d 'PEM client certificate for TLS client authentication [env: CRYPTADM_KMIP_CLIENT_CERT]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -l kmip-client-key -d 'PEM key of --kmip-client-cert [env: CRYPTADM_KMIP_CLIENT_KEY]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -l kmip-username -d 'Username of a KMIP Username and Password credential [env: CRYPTADM_KMIP_USERNAME]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -l kmip-password-file -d 'File holding the credential\'s password [env: CRYPTADM_KMIP_PASSWORD_FILE, CRYPTADM_KMIP_PASSWORD]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -l aws-region -d 'Region of requests whose resource is not an ARN [env: AWS_REGION, AWS_DEFAULT_REGION]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -l aws-endpoint-url -d 'Endpoint of every AWS service, e.g. http://127.0.0.1:5000 (LocalStack, MinIO for S3) [env: AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -l aws-profile -d 'Profile of ~/.aws/config and ~/.aws/credentials [env: AWS_PROFILE] [default: default]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -l aws-ca-bundle -d 'PEM bundle of CAs trusted for AWS endpoints besides the system roots [env: AWS_CA_BUNDLE]' -r -F
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -l color -d 'When to colour messages' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -l timeout -d 'Overall deadline of the command\'s network work (key managers, Tang servers, registries, RemoteConfig fetches: connects, every byte of every answer, retries and pauses); when it passes, exit status 4 [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]' -r
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -l force -d 'Replace the key the store holds for the volume (the new one must open the volume)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -l vault-skip-verify -d 'Accept any server certificate (insecure; VAULT_SKIP_VERIFY alone is refused)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -s q -l quiet -d 'Print only errors'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -s v -l verbose -d 'Print details of each step'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -l no-progress -d 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from import" -s V -l version -d 'Print version'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from help" -f -a "rotate" -d 'Rotate the passphrase (key-encryption key) of a LUKS1 or LUKS2 volume'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from help" -f -a "serve" -d 'Serve CSI-Addons EncryptionKeyRotation over gRPC on a unix socket'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from help" -f -a "rewrap" -d 'Rotate the Transit key of a vault-kv:// key store and rewrap every stored passphrase'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from help" -f -a "import" -d 'Store an existing volume\'s passphrase in a key store, so that `volume rotate` takes the volume over'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand volume; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand help; and not __fish_seen_subcommand_from bootstrap image secret disk volume help" -f -a "bootstrap" -d 'Seal and open Cluster API machineadm bootstrap configurations (EncryptedConfig)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand help; and not __fish_seen_subcommand_from bootstrap image secret disk volume help" -f -a "image" -d 'Encrypt, decrypt and authorize OCI images (containers/ocicrypt format)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand help; and not __fish_seen_subcommand_from bootstrap image secret disk volume help" -f -a "secret" -d 'Generate Kubernetes objects that carry image decryption keys'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand help; and not __fish_seen_subcommand_from bootstrap image secret disk volume help" -f -a "disk" -d 'Format, inspect and decrypt LUKS2 and LUKS1 disk images and block devices'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand help; and not __fish_seen_subcommand_from bootstrap image secret disk volume help" -f -a "volume" -d 'Rotate the passphrases of LUKS volumes (CSI-Addons EncryptionKeyRotation)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand help; and not __fish_seen_subcommand_from bootstrap image secret disk volume help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand help; and __fish_seen_subcommand_from bootstrap" -f -a "seal" -d 'Encrypt a machine configuration into an EncryptedConfig document (or cloud-init userdata, or an Ignition config)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand help; and __fish_seen_subcommand_from bootstrap" -f -a "open" -d 'Decrypt a machineadm configuration stream back into the machine configuration'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand help; and __fish_seen_subcommand_from image" -f -a "encrypt" -d 'Encrypt the layers of an OCI image for one or more recipients'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand help; and __fish_seen_subcommand_from image" -f -a "decrypt" -d 'Decrypt the layers of an OCI image'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand help; and __fish_seen_subcommand_from image" -f -a "authorize" -d 'Prove that the given keys may use an encrypted image, without decrypting it'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand help; and __fish_seen_subcommand_from image" -f -a "inspect" -d 'Show each layer of an image: media type, size, digest, encryption and recipients, without any key'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand help; and __fish_seen_subcommand_from image" -f -a "node-config" -d 'Print the container runtime configuration that decrypts images with cryptadm'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand help; and __fish_seen_subcommand_from image" -f -a "stream-decrypt" -d 'Decrypt one layer for containerd (its stream processor; a drop-in for imgcrypt\'s ctd-decoder)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand help; and __fish_seen_subcommand_from image" -f -a "keyprovider" -d 'Be an ocicrypt key provider that wraps layer keys with Vault Transit or AWS KMS (for skopeo, podman, containerd)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand help; and __fish_seen_subcommand_from image" -f -a "seal-key" -d 'Seal a private key file to this machine\'s TPM, Tang servers or a threshold (clevis encrypt, for image keys)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand help; and __fish_seen_subcommand_from secret" -f -a "generate-k8s" -d 'Print Kubernetes objects that carry image decryption keys'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand help; and __fish_seen_subcommand_from disk" -f -a "luks-format" -d 'Create a LUKS2 or LUKS1 image (or format a block device), optionally encrypting a raw image into it'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand help; and __fish_seen_subcommand_from disk" -f -a "inspect" -d 'Show a LUKS1 or LUKS2 header, or a qcow2 image and its LUKS header: version, UUID, data segment, keyslots'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand help; and __fish_seen_subcommand_from disk" -f -a "decrypt" -d 'Decrypt the payload of a LUKS1 or LUKS2 image or device, or a qcow2+LUKS image, into a raw image'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand help; and __fish_seen_subcommand_from disk" -f -a "convert" -d 'Convert a disk image between raw, raw LUKS, qcow2 and qcow2+LUKS in one stream (qemu-img convert\'s verb)'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand help; and __fish_seen_subcommand_from disk" -f -a "clevis-bind" -d 'Bind a LUKS2 volume to Tang servers (clevis\'s `tang` or `sss` pin), as `clevis luks bind` does'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand help; and __fish_seen_subcommand_from disk" -f -a "tpm2-enroll" -d 'Enrol a LUKS2 volume with the TPM, as `systemd-cryptenroll --tpm2-device` does'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand help; and __fish_seen_subcommand_from volume" -f -a "rotate" -d 'Rotate the passphrase (key-encryption key) of a LUKS1 or LUKS2 volume'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand help; and __fish_seen_subcommand_from volume" -f -a "serve" -d 'Serve CSI-Addons EncryptionKeyRotation over gRPC on a unix socket'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand help; and __fish_seen_subcommand_from volume" -f -a "rewrap" -d 'Rotate the Transit key of a vault-kv:// key store and rewrap every stored passphrase'
complete -c cryptadm -n "__fish_cryptadm_using_subcommand help; and __fish_seen_subcommand_from volume" -f -a "import" -d 'Store an existing volume\'s passphrase in a key store, so that `volume rotate` takes the volume over'
