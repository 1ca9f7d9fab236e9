
use builtin;
use str;

set edit:completion:arg-completer[cryptadm] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'cryptadm'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'cryptadm'= {
            cand --color 'When to colour messages'
            cand --timeout 'Overall deadline of the command''s network work: key managers, registries, RemoteConfig fetches [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print details of each step'
            cand --verbose 'Print details of each step'
            cand --no-progress 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand bootstrap 'Seal and open Cluster API machineadm bootstrap configurations (EncryptedConfig)'
            cand image 'Encrypt, decrypt and authorize OCI images (containers/ocicrypt format)'
            cand secret 'Generate Kubernetes objects that carry image decryption keys'
            cand disk 'Format, inspect and decrypt LUKS2 and LUKS1 disk images and block devices'
            cand volume 'Rotate the passphrases of LUKS volumes (CSI-Addons EncryptionKeyRotation)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'cryptadm;bootstrap'= {
            cand --color 'When to colour messages'
            cand --timeout 'Overall deadline of the command''s network work: key managers, registries, RemoteConfig fetches [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print details of each step'
            cand --verbose 'Print details of each step'
            cand --no-progress 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand seal 'Encrypt a machine configuration into an EncryptedConfig document (or cloud-init userdata, or an Ignition config)'
            cand open 'Decrypt a machineadm configuration stream back into the machine configuration'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'cryptadm;bootstrap;seal'= {
            cand --in 'The machine configuration to seal (`-`: standard input); any bytes, usually a YAML stream'
            cand --provider 'Provider that fetches the passphrase on the machine: `file`, `vault-transit`, `clevis` (built in) or a plugin name'
            cand --passphrase-uri 'Where the provider finds the passphrase (for `file`: file:///absolute/path on the machine); `clevis` records its own (`clevis:<JWE>`)'
            cand --clevis-pin 'Clevis pin to encrypt to: `tang` (one Tang server) or `sss` (a threshold of pins), as `clevis encrypt PIN`'
            cand --clevis-config 'The pin''s configuration, the JSON `clevis encrypt` takes: `{"url":URL,"thp":THUMBPRINT}` for tang, `{"t":2,"pins":{"tang":[{"url":…},{"url":…},{"url":…}]}}` for sss; `"adv"` may name an advertisement file'
            cand --passphrase-file 'Read the passphrase from FILE (`-`: standard input), byte for byte: no newline is stripped'
            cand --remote-config 'Put a RemoteConfig document before the EncryptedConfig (repeatable)'
            cand --cryptadm-path 'Where --cloud-init and --ignition expect cryptadm on the machine: an absolute path of letters, digits and `/._-+`'
            cand --template 'Render this bootstrap template (variable `machine_config`, filters `base64`, `gzipBase64`)'
            cand --out 'Write to FILE (mode 0600, atomically) instead of standard output'
            cand --output-format 'Format of the printed documents'
            cand --plugin-timeout 'Seconds one run of a provider plugin may take before it is killed'
            cand --retries 'How many times a failing provider plugin is run again (backoff 1 s, doubling, at most 30 s)'
            cand --vault-addr 'Server address, e.g. https://vault:8200 [env: VAULT_ADDR, BAO_ADDR]'
            cand --vault-namespace 'Namespace (X-Vault-Namespace) [env: VAULT_NAMESPACE, BAO_NAMESPACE]'
            cand --vault-cacert 'PEM file of the CA that signed the server''s certificate [env: VAULT_CACERT, BAO_CACERT]'
            cand --vault-capath 'Directory of PEM CA certificates [env: VAULT_CAPATH, BAO_CAPATH]'
            cand --vault-client-cert 'PEM client certificate for TLS client authentication [env: VAULT_CLIENT_CERT]'
            cand --vault-client-key 'PEM key of --vault-client-cert [env: VAULT_CLIENT_KEY]'
            cand --vault-auth 'How to log in [env: CRYPTADM_VAULT_AUTH] [default: token]'
            cand --vault-auth-mount 'Mount path of the auth method [env: CRYPTADM_VAULT_AUTH_MOUNT] [default: approle, jwt or kubernetes]'
            cand --vault-role 'Role to log in as (jwt, kubernetes) [env: CRYPTADM_VAULT_ROLE]'
            cand --vault-role-id 'AppRole role id [env: CRYPTADM_VAULT_ROLE_ID]'
            cand --vault-secret-id-file 'File holding the AppRole secret id (0600) [env: CRYPTADM_VAULT_SECRET_ID_FILE]'
            cand --vault-jwt-file 'File holding the JWT (0600; kubernetes default: the pod''s service-account token) [env: CRYPTADM_VAULT_JWT_FILE]'
            cand --vault-token-file 'File holding a token (0600), instead of VAULT_TOKEN or ~/.vault-token'
            cand --aws-region 'Region of requests whose resource is not an ARN [env: AWS_REGION, AWS_DEFAULT_REGION]'
            cand --aws-endpoint-url 'Endpoint of every AWS service, e.g. http://127.0.0.1:5000 (LocalStack, MinIO for S3) [env: AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL]'
            cand --aws-profile 'Profile of ~/.aws/config and ~/.aws/credentials [env: AWS_PROFILE] [default: default]'
            cand --aws-ca-bundle 'PEM bundle of CAs trusted for AWS endpoints besides the system roots [env: AWS_CA_BUNDLE]'
            cand --color 'When to colour messages'
            cand --timeout 'Overall deadline of the command''s network work: key managers, registries, RemoteConfig fetches [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]'
            cand --clevis-trust-adv 'Trust a Tang advertisement that no `thp` pins, as fetched (clevis encrypt''s `-y`); without it such a server is refused and its signing-key thumbprints are printed'
            cand --cloud-init 'Print #cloud-config userdata that writes the sealed stream (0600, /run/machineadm/machineadm_config.yaml) and runs `cryptadm bootstrap open` from runcmd'
            cand --ignition 'Print an Ignition config (spec 3.3.0) that writes the sealed stream (0600, /etc/machineadm/machineadm_config.yaml) and a oneshot unit, cryptadm-bootstrap-open.service, that runs `cryptadm bootstrap open` into /run/machineadm before kubeadm.service and kubelet.service'
            cand --vault-skip-verify 'Accept any server certificate (insecure; VAULT_SKIP_VERIFY alone is refused)'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print details of each step'
            cand --verbose 'Print details of each step'
            cand --no-progress 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'cryptadm;bootstrap;open'= {
            cand --in 'The sealed stream (`-`: standard input)'
            cand --out 'Where to write the decrypted configuration (`-`: standard output, refused when it is a terminal)'
            cand --passphrase-file 'Read the passphrase from FILE (`-`: standard input), byte for byte: no newline is stripped'
            cand --creates 'Do nothing and exit 0 when PATH exists'
            cand --plugin-timeout 'Seconds one run of a provider plugin may take before it is killed'
            cand --retries 'How many times a failing provider plugin is run again (backoff 1 s, doubling, at most 30 s)'
            cand --vault-addr 'Server address, e.g. https://vault:8200 [env: VAULT_ADDR, BAO_ADDR]'
            cand --vault-namespace 'Namespace (X-Vault-Namespace) [env: VAULT_NAMESPACE, BAO_NAMESPACE]'
            cand --vault-cacert 'PEM file of the CA that signed the server''s certificate [env: VAULT_CACERT, BAO_CACERT]'
            cand --vault-capath 'Directory of PEM CA certificates [env: VAULT_CAPATH, BAO_CAPATH]'
            cand --vault-client-cert 'PEM client certificate for TLS client authentication [env: VAULT_CLIENT_CERT]'
            cand --vault-client-key 'PEM key of --vault-client-cert [env: VAULT_CLIENT_KEY]'
            cand --vault-auth 'How to log in [env: CRYPTADM_VAULT_AUTH] [default: token]'
            cand --vault-auth-mount 'Mount path of the auth method [env: CRYPTADM_VAULT_AUTH_MOUNT] [default: approle, jwt or kubernetes]'
            cand --vault-role 'Role to log in as (jwt, kubernetes) [env: CRYPTADM_VAULT_ROLE]'
            cand --vault-role-id 'AppRole role id [env: CRYPTADM_VAULT_ROLE_ID]'
            cand --vault-secret-id-file 'File holding the AppRole secret id (0600) [env: CRYPTADM_VAULT_SECRET_ID_FILE]'
            cand --vault-jwt-file 'File holding the JWT (0600; kubernetes default: the pod''s service-account token) [env: CRYPTADM_VAULT_JWT_FILE]'
            cand --vault-token-file 'File holding a token (0600), instead of VAULT_TOKEN or ~/.vault-token'
            cand --aws-region 'Region of requests whose resource is not an ARN [env: AWS_REGION, AWS_DEFAULT_REGION]'
            cand --aws-endpoint-url 'Endpoint of every AWS service, e.g. http://127.0.0.1:5000 (LocalStack, MinIO for S3) [env: AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL]'
            cand --aws-profile 'Profile of ~/.aws/config and ~/.aws/credentials [env: AWS_PROFILE] [default: default]'
            cand --aws-ca-bundle 'PEM bundle of CAs trusted for AWS endpoints besides the system roots [env: AWS_CA_BUNDLE]'
            cand --cert-dir 'Also trust the CA certificates in DIR (`*.crt`, PEM) for the `https` provider, besides the system roots (repeatable)'
            cand --color 'When to colour messages'
            cand --timeout 'Overall deadline of the command''s network work: key managers, registries, RemoteConfig fetches [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]'
            cand --strict 'In-band configuration only: fail on RemoteConfig documents instead of fetching them'
            cand --vault-skip-verify 'Accept any server certificate (insecure; VAULT_SKIP_VERIFY alone is refused)'
            cand --skip-remote 'Skip RemoteConfig documents instead of fetching them'
            cand --allow-http 'Let the `https` provider fetch plain http:// URIs (and follow redirects to them): unauthenticated'
            cand --allow-local-targets 'Let RemoteConfig documents that were themselves fetched reach loopback and link-local addresses (169.254.169.254, 127.0.0.1, fe80::/10) over https; those in the input stream always may'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print details of each step'
            cand --verbose 'Print details of each step'
            cand --no-progress 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'cryptadm;bootstrap;help'= {
            cand seal 'Encrypt a machine configuration into an EncryptedConfig document (or cloud-init userdata, or an Ignition config)'
            cand open 'Decrypt a machineadm configuration stream back into the machine configuration'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'cryptadm;bootstrap;help;seal'= {
        }
        &'cryptadm;bootstrap;help;open'= {
        }
        &'cryptadm;bootstrap;help;help'= {
        }
        &'cryptadm;image'= {
            cand --color 'When to colour messages'
            cand --timeout 'Overall deadline of the command''s network work: key managers, registries, RemoteConfig fetches [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print details of each step'
            cand --verbose 'Print details of each step'
            cand --no-progress 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand encrypt 'Encrypt the layers of an OCI image for one or more recipients'
            cand decrypt 'Decrypt the layers of an OCI image'
            cand authorize 'Prove that the given keys may use an encrypted image, without decrypting it'
            cand inspect 'Show each layer of an image: media type, size, digest, encryption and recipients, without any key'
            cand node-config 'Print the container runtime configuration that decrypts images with cryptadm'
            cand stream-decrypt 'Decrypt one layer for containerd (its stream processor; a drop-in for imgcrypt''s ctd-decoder)'
            cand keyprovider 'Be an ocicrypt key provider that wraps layer keys with Vault/OpenBao Transit (for skopeo, podman, containerd)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'cryptadm;image;encrypt'= {
            cand --recipient 'Who may decrypt: jwe:PUBKEY, pkcs7:CERT, pgp:EMAIL-NAME-OR-FINGERPRINT (or a public key file), provider:NAME[:OPTS], vault-transit://MOUNT/KEY'
            cand --encryption-key 'Who may decrypt: jwe:PUBKEY, pkcs7:CERT, pgp:EMAIL-NAME-OR-FINGERPRINT (or a public key file), provider:NAME[:OPTS], vault-transit://MOUNT/KEY'
            cand --layer 'Layer to encrypt, 0 = bottom, negative counts from the top (repeatable; default: all)'
            cand --encrypt-layer 'Layer to encrypt, 0 = bottom, negative counts from the top (repeatable; default: all)'
            cand --remove-recipient 'Take a recipient away: already encrypted layers are re-encrypted under a fresh key for the --recipient list only, so the removed recipient''s old key opens nothing, and neither does any other recipient not given with --recipient (repeatable; needs a --key that opens them). Prints who keeps and who loses access; a SPEC that names no current recipient is refused (exit 3) and nothing is written'
            cand --platform 'Only this platform''s manifest, OS/ARCH[/VARIANT] (repeatable; default: every platform)'
            cand --key 'A private key (PEM, DER, JWK; RSA or EC), an OpenPGP secret key, a certificate (PKCS#7), provider:NAME[:OPTS], or vault-transit://MOUNT/KEY'
            cand --decryption-key 'A private key (PEM, DER, JWK; RSA or EC), an OpenPGP secret key, a certificate (PKCS#7), provider:NAME[:OPTS], or vault-transit://MOUNT/KEY'
            cand --cert 'An X.509 certificate matching a --key, needed for PKCS#7 (a certificate given with --key works too)'
            cand --dec-recipient 'An X.509 certificate matching a --key, needed for PKCS#7 (a certificate given with --key works too)'
            cand --passphrase-file 'Read the passphrase from FILE (`-`: standard input), byte for byte: no newline is stripped'
            cand --gpg-homedir 'Also use the secret keys of this GnuPG home directory for OpenPGP layers (their passphrase as above)'
            cand --vault-addr 'Server address, e.g. https://vault:8200 [env: VAULT_ADDR, BAO_ADDR]'
            cand --vault-namespace 'Namespace (X-Vault-Namespace) [env: VAULT_NAMESPACE, BAO_NAMESPACE]'
            cand --vault-cacert 'PEM file of the CA that signed the server''s certificate [env: VAULT_CACERT, BAO_CACERT]'
            cand --vault-capath 'Directory of PEM CA certificates [env: VAULT_CAPATH, BAO_CAPATH]'
            cand --vault-client-cert 'PEM client certificate for TLS client authentication [env: VAULT_CLIENT_CERT]'
            cand --vault-client-key 'PEM key of --vault-client-cert [env: VAULT_CLIENT_KEY]'
            cand --vault-auth 'How to log in [env: CRYPTADM_VAULT_AUTH] [default: token]'
            cand --vault-auth-mount 'Mount path of the auth method [env: CRYPTADM_VAULT_AUTH_MOUNT] [default: approle, jwt or kubernetes]'
            cand --vault-role 'Role to log in as (jwt, kubernetes) [env: CRYPTADM_VAULT_ROLE]'
            cand --vault-role-id 'AppRole role id [env: CRYPTADM_VAULT_ROLE_ID]'
            cand --vault-secret-id-file 'File holding the AppRole secret id (0600) [env: CRYPTADM_VAULT_SECRET_ID_FILE]'
            cand --vault-jwt-file 'File holding the JWT (0600; kubernetes default: the pod''s service-account token) [env: CRYPTADM_VAULT_JWT_FILE]'
            cand --vault-token-file 'File holding a token (0600), instead of VAULT_TOKEN or ~/.vault-token'
            cand --src-creds 'Log in to the source registry as USER; the password comes from --src-password-file, CRYPTADM_SRC_PASSWORD_FILE, CRYPTADM_SRC_PASSWORD or a terminal prompt, never from the command line'
            cand --src-password-file 'Read the --src-creds password from FILE (`-`: standard input); one trailing newline is dropped'
            cand --src-authfile 'Source registry credentials from this auth file only (docker config.json or podman auth.json format)'
            cand --src-tls-verify 'Verify the source registry''s TLS certificate; =false allows plain HTTP or an unverified certificate'
            cand --src-cert-dir 'Trust the CA certificates (*.crt) in DIR for the source registry, besides the system roots'
            cand --dest-creds 'Log in to the destination registry as USER; the password comes from --dest-password-file, CRYPTADM_DEST_PASSWORD_FILE, CRYPTADM_DEST_PASSWORD or a terminal prompt, never from the command line'
            cand --dest-password-file 'Read the --dest-creds password from FILE (`-`: standard input); one trailing newline is dropped'
            cand --dest-authfile 'Destination registry credentials from this auth file only (docker config.json or podman auth.json format)'
            cand --dest-tls-verify 'Verify the destination registry''s TLS certificate; =false allows plain HTTP or an unverified certificate'
            cand --dest-cert-dir 'Trust the CA certificates (*.crt) in DIR for the destination registry, besides the system roots'
            cand --cert-dir 'Trust the CA certificates (*.crt) in DIR for both registries (default: /etc/containers/certs.d/HOST and /etc/docker/certs.d/HOST when they exist)'
            cand --jobs 'Move up to N layers at once (downloads, cipher and uploads of different layers overlap; memory grows with N, not with layer sizes); a layer of 4 MiB or more is downloaded as up to 4 ranges at once, so up to 4×N connections; 1 moves the layers one after the other, each over one connection'
            cand --color 'When to colour messages'
            cand --timeout 'Overall deadline of the command''s network work: key managers, registries, RemoteConfig fetches [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]'
            cand --allow-plaintext 'Succeed even when no selected layer is encrypted (or, for encrypt, would be)'
            cand --vault-skip-verify 'Accept any server certificate (insecure; VAULT_SKIP_VERIFY alone is refused)'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print details of each step'
            cand --verbose 'Print details of each step'
            cand --no-progress 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'cryptadm;image;decrypt'= {
            cand --layer 'Layer to decrypt, 0 = bottom, negative counts from the top (repeatable; default: all)'
            cand --platform 'Only this platform''s manifest, OS/ARCH[/VARIANT] (repeatable; default: every platform)'
            cand --key 'A private key (PEM, DER, JWK; RSA or EC), an OpenPGP secret key, a certificate (PKCS#7), provider:NAME[:OPTS], or vault-transit://MOUNT/KEY'
            cand --decryption-key 'A private key (PEM, DER, JWK; RSA or EC), an OpenPGP secret key, a certificate (PKCS#7), provider:NAME[:OPTS], or vault-transit://MOUNT/KEY'
            cand --cert 'An X.509 certificate matching a --key, needed for PKCS#7 (a certificate given with --key works too)'
            cand --dec-recipient 'An X.509 certificate matching a --key, needed for PKCS#7 (a certificate given with --key works too)'
            cand --passphrase-file 'Read the passphrase from FILE (`-`: standard input), byte for byte: no newline is stripped'
            cand --gpg-homedir 'Also use the secret keys of this GnuPG home directory for OpenPGP layers (their passphrase as above)'
            cand --vault-addr 'Server address, e.g. https://vault:8200 [env: VAULT_ADDR, BAO_ADDR]'
            cand --vault-namespace 'Namespace (X-Vault-Namespace) [env: VAULT_NAMESPACE, BAO_NAMESPACE]'
            cand --vault-cacert 'PEM file of the CA that signed the server''s certificate [env: VAULT_CACERT, BAO_CACERT]'
            cand --vault-capath 'Directory of PEM CA certificates [env: VAULT_CAPATH, BAO_CAPATH]'
            cand --vault-client-cert 'PEM client certificate for TLS client authentication [env: VAULT_CLIENT_CERT]'
            cand --vault-client-key 'PEM key of --vault-client-cert [env: VAULT_CLIENT_KEY]'
            cand --vault-auth 'How to log in [env: CRYPTADM_VAULT_AUTH] [default: token]'
            cand --vault-auth-mount 'Mount path of the auth method [env: CRYPTADM_VAULT_AUTH_MOUNT] [default: approle, jwt or kubernetes]'
            cand --vault-role 'Role to log in as (jwt, kubernetes) [env: CRYPTADM_VAULT_ROLE]'
            cand --vault-role-id 'AppRole role id [env: CRYPTADM_VAULT_ROLE_ID]'
            cand --vault-secret-id-file 'File holding the AppRole secret id (0600) [env: CRYPTADM_VAULT_SECRET_ID_FILE]'
            cand --vault-jwt-file 'File holding the JWT (0600; kubernetes default: the pod''s service-account token) [env: CRYPTADM_VAULT_JWT_FILE]'
            cand --vault-token-file 'File holding a token (0600), instead of VAULT_TOKEN or ~/.vault-token'
            cand --src-creds 'Log in to the source registry as USER; the password comes from --src-password-file, CRYPTADM_SRC_PASSWORD_FILE, CRYPTADM_SRC_PASSWORD or a terminal prompt, never from the command line'
            cand --src-password-file 'Read the --src-creds password from FILE (`-`: standard input); one trailing newline is dropped'
            cand --src-authfile 'Source registry credentials from this auth file only (docker config.json or podman auth.json format)'
            cand --src-tls-verify 'Verify the source registry''s TLS certificate; =false allows plain HTTP or an unverified certificate'
            cand --src-cert-dir 'Trust the CA certificates (*.crt) in DIR for the source registry, besides the system roots'
            cand --dest-creds 'Log in to the destination registry as USER; the password comes from --dest-password-file, CRYPTADM_DEST_PASSWORD_FILE, CRYPTADM_DEST_PASSWORD or a terminal prompt, never from the command line'
            cand --dest-password-file 'Read the --dest-creds password from FILE (`-`: standard input); one trailing newline is dropped'
            cand --dest-authfile 'Destination registry credentials from this auth file only (docker config.json or podman auth.json format)'
            cand --dest-tls-verify 'Verify the destination registry''s TLS certificate; =false allows plain HTTP or an unverified certificate'
            cand --dest-cert-dir 'Trust the CA certificates (*.crt) in DIR for the destination registry, besides the system roots'
            cand --cert-dir 'Trust the CA certificates (*.crt) in DIR for both registries (default: /etc/containers/certs.d/HOST and /etc/docker/certs.d/HOST when they exist)'
            cand --jobs 'Move up to N layers at once (downloads, cipher and uploads of different layers overlap; memory grows with N, not with layer sizes); a layer of 4 MiB or more is downloaded as up to 4 ranges at once, so up to 4×N connections; 1 moves the layers one after the other, each over one connection'
            cand --color 'When to colour messages'
            cand --timeout 'Overall deadline of the command''s network work: key managers, registries, RemoteConfig fetches [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]'
            cand --allow-plaintext 'Succeed even when no selected layer is encrypted (or, for encrypt, would be)'
            cand --vault-skip-verify 'Accept any server certificate (insecure; VAULT_SKIP_VERIFY alone is refused)'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print details of each step'
            cand --verbose 'Print details of each step'
            cand --no-progress 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'cryptadm;image;authorize'= {
            cand --output-format 'Print the per-layer report as a document'
            cand --platform 'Only this platform''s manifest, OS/ARCH[/VARIANT] (repeatable; default: every platform)'
            cand --key 'A private key (PEM, DER, JWK; RSA or EC), an OpenPGP secret key, a certificate (PKCS#7), provider:NAME[:OPTS], or vault-transit://MOUNT/KEY'
            cand --decryption-key 'A private key (PEM, DER, JWK; RSA or EC), an OpenPGP secret key, a certificate (PKCS#7), provider:NAME[:OPTS], or vault-transit://MOUNT/KEY'
            cand --cert 'An X.509 certificate matching a --key, needed for PKCS#7 (a certificate given with --key works too)'
            cand --dec-recipient 'An X.509 certificate matching a --key, needed for PKCS#7 (a certificate given with --key works too)'
            cand --passphrase-file 'Read the passphrase from FILE (`-`: standard input), byte for byte: no newline is stripped'
            cand --gpg-homedir 'Also use the secret keys of this GnuPG home directory for OpenPGP layers (their passphrase as above)'
            cand --vault-addr 'Server address, e.g. https://vault:8200 [env: VAULT_ADDR, BAO_ADDR]'
            cand --vault-namespace 'Namespace (X-Vault-Namespace) [env: VAULT_NAMESPACE, BAO_NAMESPACE]'
            cand --vault-cacert 'PEM file of the CA that signed the server''s certificate [env: VAULT_CACERT, BAO_CACERT]'
            cand --vault-capath 'Directory of PEM CA certificates [env: VAULT_CAPATH, BAO_CAPATH]'
            cand --vault-client-cert 'PEM client certificate for TLS client authentication [env: VAULT_CLIENT_CERT]'
            cand --vault-client-key 'PEM key of --vault-client-cert [env: VAULT_CLIENT_KEY]'
            cand --vault-auth 'How to log in [env: CRYPTADM_VAULT_AUTH] [default: token]'
            cand --vault-auth-mount 'Mount path of the auth method [env: CRYPTADM_VAULT_AUTH_MOUNT] [default: approle, jwt or kubernetes]'
            cand --vault-role 'Role to log in as (jwt, kubernetes) [env: CRYPTADM_VAULT_ROLE]'
            cand --vault-role-id 'AppRole role id [env: CRYPTADM_VAULT_ROLE_ID]'
            cand --vault-secret-id-file 'File holding the AppRole secret id (0600) [env: CRYPTADM_VAULT_SECRET_ID_FILE]'
            cand --vault-jwt-file 'File holding the JWT (0600; kubernetes default: the pod''s service-account token) [env: CRYPTADM_VAULT_JWT_FILE]'
            cand --vault-token-file 'File holding a token (0600), instead of VAULT_TOKEN or ~/.vault-token'
            cand --creds 'Log in to the registry as USER; the password comes from --password-file, CRYPTADM_REGISTRY_PASSWORD_FILE, CRYPTADM_REGISTRY_PASSWORD or a terminal prompt, never from the command line'
            cand --password-file 'Read the --creds password from FILE (`-`: standard input); one trailing newline is dropped'
            cand --authfile 'Registry credentials from this auth file only (docker config.json or podman auth.json format)'
            cand --tls-verify 'Verify the registry''s TLS certificate; =false allows plain HTTP or an unverified certificate'
            cand --cert-dir 'Trust the CA certificates (*.crt) in DIR, besides the system roots (default: /etc/containers/certs.d/HOST and /etc/docker/certs.d/HOST when they exist)'
            cand --color 'When to colour messages'
            cand --timeout 'Overall deadline of the command''s network work: key managers, registries, RemoteConfig fetches [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]'
            cand --allow-plaintext 'Succeed even when no selected layer is encrypted (or, for encrypt, would be)'
            cand --vault-skip-verify 'Accept any server certificate (insecure; VAULT_SKIP_VERIFY alone is refused)'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print details of each step'
            cand --verbose 'Print details of each step'
            cand --no-progress 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'cryptadm;image;inspect'= {
            cand --creds 'Log in to the registry as USER; the password comes from --password-file, CRYPTADM_REGISTRY_PASSWORD_FILE, CRYPTADM_REGISTRY_PASSWORD or a terminal prompt, never from the command line'
            cand --password-file 'Read the --creds password from FILE (`-`: standard input); one trailing newline is dropped'
            cand --authfile 'Registry credentials from this auth file only (docker config.json or podman auth.json format)'
            cand --tls-verify 'Verify the registry''s TLS certificate; =false allows plain HTTP or an unverified certificate'
            cand --cert-dir 'Trust the CA certificates (*.crt) in DIR, besides the system roots (default: /etc/containers/certs.d/HOST and /etc/docker/certs.d/HOST when they exist)'
            cand --output-format 'Print the layers as a document'
            cand --color 'When to colour messages'
            cand --timeout 'Overall deadline of the command''s network work: key managers, registries, RemoteConfig fetches [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print details of each step'
            cand --verbose 'Print details of each step'
            cand --no-progress 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'cryptadm;image;node-config'= {
            cand --runtime 'The container runtime of the nodes'
            cand --containerd-version 'containerd''s major version: 1 (config version 2) or 2 (config version 3)'
            cand --binary 'Where cryptadm is on the nodes (absolute; default: this binary''s path)'
            cand --keys-dir 'The keys directory (default: /etc/containerd/ocicrypt/keys, CRI-O: /etc/crio/keys)'
            cand --keyprovider-config 'The key-provider configuration the stream processors get as OCICRYPT_KEYPROVIDER_CONFIG (containerd''s default)'
            cand --processor-env 'A NAME=VALUE setting for the stream processors'' environment (repeatable; containerd only), e.g. the Vault server and the node''s login for images wrapped with vault-transit:// keys: VAULT_ADDR, VAULT_CACERT and a JWT/Kubernetes role with its projected token file. Secrets themselves (VAULT_TOKEN) are refused'
            cand --color 'When to colour messages'
            cand --timeout 'Overall deadline of the command''s network work: key managers, registries, RemoteConfig fetches [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print details of each step'
            cand --verbose 'Print details of each step'
            cand --no-progress 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'cryptadm;image;stream-decrypt'= {
            cand --decryption-keys-path 'The node''s keys directory: every regular file below it is tried as a key (ctd-decoder''s flag)'
            cand --color 'When to colour messages'
            cand --timeout 'Overall deadline of the command''s network work: key managers, registries, RemoteConfig fetches [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print details of each step'
            cand --verbose 'Print details of each step'
            cand --no-progress 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'cryptadm;image;keyprovider'= {
            cand --listen 'Serve ocicrypt''s gRPC form instead, on this unix socket (unix:///PATH), until SIGTERM or SIGINT'
            cand --color 'When to colour messages'
            cand --timeout 'Overall deadline of the command''s network work: key managers, registries, RemoteConfig fetches [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print details of each step'
            cand --verbose 'Print details of each step'
            cand --no-progress 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'cryptadm;image;help'= {
            cand encrypt 'Encrypt the layers of an OCI image for one or more recipients'
            cand decrypt 'Decrypt the layers of an OCI image'
            cand authorize 'Prove that the given keys may use an encrypted image, without decrypting it'
            cand inspect 'Show each layer of an image: media type, size, digest, encryption and recipients, without any key'
            cand node-config 'Print the container runtime configuration that decrypts images with cryptadm'
            cand stream-decrypt 'Decrypt one layer for containerd (its stream processor; a drop-in for imgcrypt''s ctd-decoder)'
            cand keyprovider 'Be an ocicrypt key provider that wraps layer keys with Vault/OpenBao Transit (for skopeo, podman, containerd)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'cryptadm;image;help;encrypt'= {
        }
        &'cryptadm;image;help;decrypt'= {
        }
        &'cryptadm;image;help;authorize'= {
        }
        &'cryptadm;image;help;inspect'= {
        }
        &'cryptadm;image;help;node-config'= {
        }
        &'cryptadm;image;help;stream-decrypt'= {
        }
        &'cryptadm;image;help;keyprovider'= {
        }
        &'cryptadm;image;help;help'= {
        }
        &'cryptadm;secret'= {
            cand --color 'When to colour messages'
            cand --timeout 'Overall deadline of the command''s network work: key managers, registries, RemoteConfig fetches [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print details of each step'
            cand --verbose 'Print details of each step'
            cand --no-progress 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand generate-k8s 'Print Kubernetes objects that carry image decryption keys'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'cryptadm;secret;generate-k8s'= {
            cand --key 'A key file, as [NAME=]FILE; NAME is the data entry (the file name on the node), by default FILE''s name'
            cand -n 'The namespace of every object (enc-key-sync: default `enc-key-sync`)'
            cand --namespace 'The namespace of every object (enc-key-sync: default `enc-key-sync`)'
            cand --format 'The Secret''s shape'
            cand --runtime 'The container runtime whose keys directory the DaemonSet writes'
            cand --service-account 'Add a patch giving this ServiceAccount the Secret, and a Pod using it (--format kep)'
            cand --output-format 'How the objects are printed: a YAML stream or JSON (several objects as a v1 List)'
            cand -o 'Write the objects to FILE (created 0600, replaced atomically) instead of standard output'
            cand --out 'Write the objects to FILE (created 0600, replaced atomically) instead of standard output'
            cand --passphrase-file 'Read the passphrase from FILE (`-`: standard input), byte for byte: no newline is stripped'
            cand --color 'When to colour messages'
            cand --timeout 'Overall deadline of the command''s network work: key managers, registries, RemoteConfig fetches [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]'
            cand --with-daemonset 'Add a DaemonSet that copies the keys onto every node, as regular 0600 files (--format node)'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print details of each step'
            cand --verbose 'Print details of each step'
            cand --no-progress 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'cryptadm;secret;help'= {
            cand generate-k8s 'Print Kubernetes objects that carry image decryption keys'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'cryptadm;secret;help;generate-k8s'= {
        }
        &'cryptadm;secret;help;help'= {
        }
        &'cryptadm;disk'= {
            cand --color 'When to colour messages'
            cand --timeout 'Overall deadline of the command''s network work: key managers, registries, RemoteConfig fetches [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print details of each step'
            cand --verbose 'Print details of each step'
            cand --no-progress 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand luks-format 'Create a LUKS2 or LUKS1 image (or format a block device), optionally encrypting a raw image into it'
            cand inspect 'Show a LUKS1 or LUKS2 header, or a qcow2 image and its LUKS header: version, UUID, data segment, keyslots'
            cand decrypt 'Decrypt the payload of a LUKS1 or LUKS2 image or device, or a qcow2+LUKS image, into a raw image'
            cand convert 'Convert a disk image between raw, raw LUKS, qcow2 and qcow2+LUKS in one stream (qemu-img convert''s verb)'
            cand clevis-bind 'Bind a LUKS2 volume to Tang servers (clevis''s `tang` or `sss` pin), as `clevis luks bind` does'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'cryptadm;disk;luks-format'= {
            cand --type 'LUKS version (`luks1` for QEMU, Nova and Glance)'
            cand --passphrase-file 'Read the passphrase from FILE (`-`: standard input), byte for byte: no newline is stripped'
            cand --key-file 'Read the passphrase from FILE (`-`: standard input), the whole file byte for byte, as cryptsetup does'
            cand --clevis-pin 'Clevis pin to encrypt to: `tang` (one Tang server) or `sss` (a threshold of pins), as `clevis encrypt PIN`'
            cand --clevis-config 'The pin''s configuration, the JSON `clevis encrypt` takes: `{"url":URL,"thp":THUMBPRINT}` for tang, `{"t":2,"pins":{"tang":[{"url":…},{"url":…},{"url":…}]}}` for sss; `"adv"` may name an advertisement file'
            cand --format 'Container: `raw` (a LUKS image or device) or `qcow2` (qcow2 v3 with LUKS1 inside, as QEMU writes it)'
            cand --cluster-size 'qcow2 cluster size in bytes, 512 to 2M, a power of two (default 64K, QEMU''s)'
            cand --secret-type 'How the passphrase source becomes the LUKS passphrase: verbatim (`passphrase`, Nova; the default) or lowercase hex of the key bytes it holds (`symmetric`, Cinder and os-brick); with --secret, the secret''s Barbican type decides and a contradicting --secret-type is refused'
            cand --cipher 'Payload cipher (only aes-xts-plain64 is implemented)'
            cand --key-size 'Volume key size in bits (XTS: 512 = AES-256, 256 = AES-128)'
            cand --hash 'Hash for the digest, the AF splitter and PBKDF2'
            cand --sector-size 'Encryption sector size in bytes (default: 4096 for LUKS2 image files, else 512)'
            cand --pbkdf 'Keyslot KDF (default: argon2id for LUKS2, pbkdf2 for LUKS1)'
            cand --iter-time 'Milliseconds the keyslot KDF should take (benchmarked like cryptsetup)'
            cand --pbkdf-force-iterations 'Skip the benchmark: PBKDF2 iterations, or the Argon2 time cost'
            cand --pbkdf-memory 'Argon2 memory cost in KiB, 32 to 4194304 (default: benchmarked, at most 1 GiB and half the RAM)'
            cand --pbkdf-parallel 'Argon2 threads, 1 to 4 (default: the CPU count, at most 4)'
            cand --label 'LUKS2 label'
            cand --uuid 'Volume UUID (default: random)'
            cand --size 'Payload size of a new image file: bytes, or with a K, M, G or T suffix (powers of 1024)'
            cand --from 'Encrypt this raw disk image into TARGET (streamed; the payload is its size rounded up to a sector); with --format qcow2 also a plain qcow2 image'
            cand --key-id 'The key manager (Barbican) secret that holds the output''s secret: os_encrypt_key_id'
            cand --key-deletion-policy 'Old spelling of --delete-key-with-image: on_image_deletion or do_not_delete'
            cand --output-format 'Format of the printed Glance properties (--glance), or of the ids printed with --key-manager or --upload (json: `{"image_id", "secret_id"}`; else one id a line)'
            cand --key-manager 'Keep the image''s secret in a key manager: a new secret is stored there (its UUID becomes os_encrypt_key_id), or --secret names an existing one'
            cand --secret 'An existing Barbican secret (UUID or href) whose payload gives the passphrase (`symmetric`: its lowercase hex, as os-brick derives it)'
            cand --upload 'Upload the image to Glance as NAME (with its disk and container formats and every os_encrypt_* property), and register it as a consumer of its secret; on any failure what was created is deleted again'
            cand --os-cloud 'The cloud of clouds.yaml to log in to (OS_CLOUD); OS_* variables override its settings'
            cand --color 'When to colour messages'
            cand --timeout 'Overall deadline of the command''s network work: key managers, registries, RemoteConfig fetches [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]'
            cand --clevis-trust-adv 'Trust a Tang advertisement that no `thp` pins, as fetched (clevis encrypt''s `-y`); without it such a server is refused and its signing-key thumbprints are printed'
            cand --glance 'Print the output''s Glance properties, the `openstack image create` line and, when encrypted, the `openstack secret store` line for its secret'
            cand --delete-key-with-image 'Delete the secret with the image (os_encrypt_key_deletion_policy=True; default False: the secret outlives the image)'
            cand --force 'Overwrite an existing LUKS header or a non-empty target'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print details of each step'
            cand --verbose 'Print details of each step'
            cand --no-progress 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'cryptadm;disk;inspect'= {
            cand --output-format 'Format of the printed document'
            cand --color 'When to colour messages'
            cand --timeout 'Overall deadline of the command''s network work: key managers, registries, RemoteConfig fetches [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print details of each step'
            cand --verbose 'Print details of each step'
            cand --no-progress 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'cryptadm;disk;decrypt'= {
            cand --passphrase-file 'Read the passphrase from FILE (`-`: standard input), byte for byte: no newline is stripped'
            cand --key-file 'Read the passphrase from FILE (`-`: standard input), the whole file byte for byte, as cryptsetup does'
            cand --out 'Where to write the raw image (`-`: standard output): a new file, or a block device (written in place)'
            cand --color 'When to colour messages'
            cand --timeout 'Overall deadline of the command''s network work: key managers, registries, RemoteConfig fetches [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]'
            cand --force 'Replace a non-empty --out file, or overwrite a block device that holds data'
            cand --clevis 'Unlock through the volume''s clevis binding (its LUKS2 `clevis` token), asking its Tang servers, as `clevis luks unlock` does, instead of with a passphrase'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print details of each step'
            cand --verbose 'Print details of each step'
            cand --no-progress 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'cryptadm;disk;convert'= {
            cand --format 'Container of the output (default: the source''s)'
            cand --encryption-key 'Which key encrypts the output (Nova''s snapshot `encryption.key`)'
            cand --passphrase-file 'Read the passphrase from FILE (`-`: standard input), byte for byte: no newline is stripped'
            cand --key-file 'Read the passphrase from FILE (`-`: standard input), the whole file byte for byte, as cryptsetup does'
            cand --new-key-file 'The output''s secret: read for `existing`, created for `new` (0600; an existing file is never overwritten)'
            cand --secret-type 'How the output''s secret becomes its LUKS passphrase: verbatim (`passphrase`, Nova; the default) or lowercase hex of the key bytes (`symmetric`, Cinder and os-brick); a key-manager secret''s own Barbican type decides, and a contradicting --secret-type is refused'
            cand --source-secret-type 'How the source''s --key-file becomes its passphrase (default: --secret-type)'
            cand --source-secret 'The source image''s Barbican secret (its os_encrypt_key_id, UUID or href): the source''s passphrase is read from the key manager (same rules as --secret), so no passphrase needs to be on disk'
            cand --cluster-size 'qcow2 cluster size in bytes, 512 to 2M, a power of two (default 64K, QEMU''s)'
            cand --iter-time 'Milliseconds the keyslot''s PBKDF2 should take (benchmarked like cryptsetup)'
            cand --pbkdf-force-iterations 'Skip the benchmark: PBKDF2 iterations of the keyslot (the digest takes the minimum, 1000)'
            cand --key-id 'The key manager (Barbican) secret that holds the output''s secret: os_encrypt_key_id'
            cand --key-deletion-policy 'Old spelling of --delete-key-with-image: on_image_deletion or do_not_delete'
            cand --output-format 'Format of the printed Glance properties (--glance), or of the ids printed with --key-manager or --upload (json: `{"image_id", "secret_id"}`; else one id a line)'
            cand --key-manager 'Keep the image''s secret in a key manager: a new secret is stored there (its UUID becomes os_encrypt_key_id), or --secret names an existing one'
            cand --secret 'An existing Barbican secret (UUID or href) whose payload gives the passphrase (`symmetric`: its lowercase hex, as os-brick derives it)'
            cand --upload 'Upload the image to Glance as NAME (with its disk and container formats and every os_encrypt_* property), and register it as a consumer of its secret; on any failure what was created is deleted again'
            cand --os-cloud 'The cloud of clouds.yaml to log in to (OS_CLOUD); OS_* variables override its settings'
            cand --color 'When to colour messages'
            cand --timeout 'Overall deadline of the command''s network work: key managers, registries, RemoteConfig fetches [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]'
            cand --glance 'Print the output''s Glance properties, the `openstack image create` line and, when encrypted, the `openstack secret store` line for its secret'
            cand --delete-key-with-image 'Delete the secret with the image (os_encrypt_key_deletion_policy=True; default False: the secret outlives the image)'
            cand --force 'Replace DST if it exists'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print details of each step'
            cand --verbose 'Print details of each step'
            cand --no-progress 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'cryptadm;disk;clevis-bind'= {
            cand --passphrase-file 'Read the passphrase from FILE (`-`: standard input), byte for byte: no newline is stripped'
            cand --key-file 'Read the passphrase from FILE (`-`: standard input), the whole file byte for byte, as cryptsetup does'
            cand --clevis-pin 'Clevis pin to encrypt to: `tang` (one Tang server) or `sss` (a threshold of pins), as `clevis encrypt PIN`'
            cand --clevis-config 'The pin''s configuration, the JSON `clevis encrypt` takes: `{"url":URL,"thp":THUMBPRINT}` for tang, `{"t":2,"pins":{"tang":[{"url":…},{"url":…},{"url":…}]}}` for sss; `"adv"` may name an advertisement file'
            cand --color 'When to colour messages'
            cand --timeout 'Overall deadline of the command''s network work: key managers, registries, RemoteConfig fetches [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]'
            cand --clevis-trust-adv 'Trust a Tang advertisement that no `thp` pins, as fetched (clevis encrypt''s `-y`); without it such a server is refused and its signing-key thumbprints are printed'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print details of each step'
            cand --verbose 'Print details of each step'
            cand --no-progress 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'cryptadm;disk;help'= {
            cand luks-format 'Create a LUKS2 or LUKS1 image (or format a block device), optionally encrypting a raw image into it'
            cand inspect 'Show a LUKS1 or LUKS2 header, or a qcow2 image and its LUKS header: version, UUID, data segment, keyslots'
            cand decrypt 'Decrypt the payload of a LUKS1 or LUKS2 image or device, or a qcow2+LUKS image, into a raw image'
            cand convert 'Convert a disk image between raw, raw LUKS, qcow2 and qcow2+LUKS in one stream (qemu-img convert''s verb)'
            cand clevis-bind 'Bind a LUKS2 volume to Tang servers (clevis''s `tang` or `sss` pin), as `clevis luks bind` does'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'cryptadm;disk;help;luks-format'= {
        }
        &'cryptadm;disk;help;inspect'= {
        }
        &'cryptadm;disk;help;decrypt'= {
        }
        &'cryptadm;disk;help;convert'= {
        }
        &'cryptadm;disk;help;clevis-bind'= {
        }
        &'cryptadm;disk;help;help'= {
        }
        &'cryptadm;volume'= {
            cand --color 'When to colour messages'
            cand --timeout 'Overall deadline of the command''s network work: key managers, registries, RemoteConfig fetches [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print details of each step'
            cand --verbose 'Print details of each step'
            cand --no-progress 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand rotate 'Rotate the passphrase (key-encryption key) of a LUKS1 or LUKS2 volume'
            cand serve 'Serve CSI-Addons EncryptionKeyRotation over gRPC on a unix socket'
            cand rewrap 'Rotate the Transit key of a vault-kv:// key store and rewrap every stored passphrase'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'cryptadm;volume;rotate'= {
            cand --volume-id 'The volume''s id: its entry in the key store and the name of its lock'
            cand --volume-path 'The LUKS1 or LUKS2 volume: an image file or a block device (default: found from the volume id, see --volume-path-template and --sysfs-root)'
            cand --key-store 'Where the volume''s passphrase is kept: file://DIR, vault-kv://MOUNT/PREFIX (OpenBao/Vault KV v2), or NAME:... for the plugin cryptadm-plugin-kms-NAME'
            cand --new-key-file 'Set the passphrase in FILE (byte for byte) instead of generating one'
            cand --request 'The RPC''s request as JSON (`-`: standard input) instead of --volume-id and --volume-path'
            cand --volume-path-template 'Find a volume without a path here: an absolute path with {volume_id}, which is replaced by the volume id with bytes outside [A-Za-z0-9._-] (and a leading .) written as %XX. Used when that path exists; otherwise the volume''s dm-crypt mapping is looked up in sysfs'
            cand --sysfs-root 'Where sysfs is mounted, for finding a volume''s active dm-crypt mapping (a LUKS1/LUKS2 mapping named <volume id> or *-<volume id>, e.g. ceph-csi''s luks-rbd-<volume id>; its one backing device holds the header)'
            cand --dev-root 'Where the backing devices of dm-crypt mappings are (<dev-root>/<kernel name>)'
            cand --key-wrap 'Store every passphrase wrapped, never in plain: by a Transit key (vault-transit://MOUNT/KEY, vault-kv:// stores) or an AWS KMS key (aws-kms://ARN, file:// and vault-kv:// stores)'
            cand --vault-addr 'Server address, e.g. https://vault:8200 [env: VAULT_ADDR, BAO_ADDR]'
            cand --vault-namespace 'Namespace (X-Vault-Namespace) [env: VAULT_NAMESPACE, BAO_NAMESPACE]'
            cand --vault-cacert 'PEM file of the CA that signed the server''s certificate [env: VAULT_CACERT, BAO_CACERT]'
            cand --vault-capath 'Directory of PEM CA certificates [env: VAULT_CAPATH, BAO_CAPATH]'
            cand --vault-client-cert 'PEM client certificate for TLS client authentication [env: VAULT_CLIENT_CERT]'
            cand --vault-client-key 'PEM key of --vault-client-cert [env: VAULT_CLIENT_KEY]'
            cand --vault-auth 'How to log in [env: CRYPTADM_VAULT_AUTH] [default: token]'
            cand --vault-auth-mount 'Mount path of the auth method [env: CRYPTADM_VAULT_AUTH_MOUNT] [default: approle, jwt or kubernetes]'
            cand --vault-role 'Role to log in as (jwt, kubernetes) [env: CRYPTADM_VAULT_ROLE]'
            cand --vault-role-id 'AppRole role id [env: CRYPTADM_VAULT_ROLE_ID]'
            cand --vault-secret-id-file 'File holding the AppRole secret id (0600) [env: CRYPTADM_VAULT_SECRET_ID_FILE]'
            cand --vault-jwt-file 'File holding the JWT (0600; kubernetes default: the pod''s service-account token) [env: CRYPTADM_VAULT_JWT_FILE]'
            cand --vault-token-file 'File holding a token (0600), instead of VAULT_TOKEN or ~/.vault-token'
            cand --aws-region 'Region of requests whose resource is not an ARN [env: AWS_REGION, AWS_DEFAULT_REGION]'
            cand --aws-endpoint-url 'Endpoint of every AWS service, e.g. http://127.0.0.1:5000 (LocalStack, MinIO for S3) [env: AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL]'
            cand --aws-profile 'Profile of ~/.aws/config and ~/.aws/credentials [env: AWS_PROFILE] [default: default]'
            cand --aws-ca-bundle 'PEM bundle of CAs trusted for AWS endpoints besides the system roots [env: AWS_CA_BUNDLE]'
            cand --color 'When to colour messages'
            cand --timeout 'Overall deadline of the command''s network work: key managers, registries, RemoteConfig fetches [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]'
            cand --take-over-claim 'Take over another run''s rotation claim in the key store even before it expires (only when that run is known to be dead, e.g. its node is gone; see docs/volume-rotation.md)'
            cand --vault-skip-verify 'Accept any server certificate (insecure; VAULT_SKIP_VERIFY alone is refused)'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print details of each step'
            cand --verbose 'Print details of each step'
            cand --no-progress 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'cryptadm;volume;serve'= {
            cand --endpoint 'Where to listen: unix:///absolute/path.sock'
            cand --key-store 'Where volume passphrases are kept: file://DIR, vault-kv://MOUNT/PREFIX (OpenBao/Vault KV v2), or NAME:... for the plugin cryptadm-plugin-kms-NAME'
            cand --drivername 'The name GetIdentity returns: the CSI driver whose volumes this node rotates (the PV''s spec.csi.driver)'
            cand --max-concurrent 'Rotations that run at once [default: half the memory / 4 GiB, between 1 and the number of CPUs]'
            cand --max-queued 'Requests that may wait for a turn; more get ABORTED'
            cand --volume-path-template 'Find a volume without a path here: an absolute path with {volume_id}, which is replaced by the volume id with bytes outside [A-Za-z0-9._-] (and a leading .) written as %XX. Used when that path exists; otherwise the volume''s dm-crypt mapping is looked up in sysfs'
            cand --sysfs-root 'Where sysfs is mounted, for finding a volume''s active dm-crypt mapping (a LUKS1/LUKS2 mapping named <volume id> or *-<volume id>, e.g. ceph-csi''s luks-rbd-<volume id>; its one backing device holds the header)'
            cand --dev-root 'Where the backing devices of dm-crypt mappings are (<dev-root>/<kernel name>)'
            cand --key-wrap 'Store every passphrase wrapped, never in plain: by a Transit key (vault-transit://MOUNT/KEY, vault-kv:// stores) or an AWS KMS key (aws-kms://ARN, file:// and vault-kv:// stores)'
            cand --vault-addr 'Server address, e.g. https://vault:8200 [env: VAULT_ADDR, BAO_ADDR]'
            cand --vault-namespace 'Namespace (X-Vault-Namespace) [env: VAULT_NAMESPACE, BAO_NAMESPACE]'
            cand --vault-cacert 'PEM file of the CA that signed the server''s certificate [env: VAULT_CACERT, BAO_CACERT]'
            cand --vault-capath 'Directory of PEM CA certificates [env: VAULT_CAPATH, BAO_CAPATH]'
            cand --vault-client-cert 'PEM client certificate for TLS client authentication [env: VAULT_CLIENT_CERT]'
            cand --vault-client-key 'PEM key of --vault-client-cert [env: VAULT_CLIENT_KEY]'
            cand --vault-auth 'How to log in [env: CRYPTADM_VAULT_AUTH] [default: token]'
            cand --vault-auth-mount 'Mount path of the auth method [env: CRYPTADM_VAULT_AUTH_MOUNT] [default: approle, jwt or kubernetes]'
            cand --vault-role 'Role to log in as (jwt, kubernetes) [env: CRYPTADM_VAULT_ROLE]'
            cand --vault-role-id 'AppRole role id [env: CRYPTADM_VAULT_ROLE_ID]'
            cand --vault-secret-id-file 'File holding the AppRole secret id (0600) [env: CRYPTADM_VAULT_SECRET_ID_FILE]'
            cand --vault-jwt-file 'File holding the JWT (0600; kubernetes default: the pod''s service-account token) [env: CRYPTADM_VAULT_JWT_FILE]'
            cand --vault-token-file 'File holding a token (0600), instead of VAULT_TOKEN or ~/.vault-token'
            cand --aws-region 'Region of requests whose resource is not an ARN [env: AWS_REGION, AWS_DEFAULT_REGION]'
            cand --aws-endpoint-url 'Endpoint of every AWS service, e.g. http://127.0.0.1:5000 (LocalStack, MinIO for S3) [env: AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL]'
            cand --aws-profile 'Profile of ~/.aws/config and ~/.aws/credentials [env: AWS_PROFILE] [default: default]'
            cand --aws-ca-bundle 'PEM bundle of CAs trusted for AWS endpoints besides the system roots [env: AWS_CA_BUNDLE]'
            cand --color 'When to colour messages'
            cand --timeout 'Overall deadline of the command''s network work: key managers, registries, RemoteConfig fetches [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]'
            cand --vault-skip-verify 'Accept any server certificate (insecure; VAULT_SKIP_VERIFY alone is refused)'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print details of each step'
            cand --verbose 'Print details of each step'
            cand --no-progress 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'cryptadm;volume;rewrap'= {
            cand --key-store 'The key store: vault-kv://MOUNT/PREFIX (Transit), or file:///DIR wrapped by --key-wrap aws-kms://ARN'
            cand --key-wrap 'Store every passphrase wrapped, never in plain: by a Transit key (vault-transit://MOUNT/KEY, vault-kv:// stores) or an AWS KMS key (aws-kms://ARN, file:// and vault-kv:// stores)'
            cand --vault-addr 'Server address, e.g. https://vault:8200 [env: VAULT_ADDR, BAO_ADDR]'
            cand --vault-namespace 'Namespace (X-Vault-Namespace) [env: VAULT_NAMESPACE, BAO_NAMESPACE]'
            cand --vault-cacert 'PEM file of the CA that signed the server''s certificate [env: VAULT_CACERT, BAO_CACERT]'
            cand --vault-capath 'Directory of PEM CA certificates [env: VAULT_CAPATH, BAO_CAPATH]'
            cand --vault-client-cert 'PEM client certificate for TLS client authentication [env: VAULT_CLIENT_CERT]'
            cand --vault-client-key 'PEM key of --vault-client-cert [env: VAULT_CLIENT_KEY]'
            cand --vault-auth 'How to log in [env: CRYPTADM_VAULT_AUTH] [default: token]'
            cand --vault-auth-mount 'Mount path of the auth method [env: CRYPTADM_VAULT_AUTH_MOUNT] [default: approle, jwt or kubernetes]'
            cand --vault-role 'Role to log in as (jwt, kubernetes) [env: CRYPTADM_VAULT_ROLE]'
            cand --vault-role-id 'AppRole role id [env: CRYPTADM_VAULT_ROLE_ID]'
            cand --vault-secret-id-file 'File holding the AppRole secret id (0600) [env: CRYPTADM_VAULT_SECRET_ID_FILE]'
            cand --vault-jwt-file 'File holding the JWT (0600; kubernetes default: the pod''s service-account token) [env: CRYPTADM_VAULT_JWT_FILE]'
            cand --vault-token-file 'File holding a token (0600), instead of VAULT_TOKEN or ~/.vault-token'
            cand --aws-region 'Region of requests whose resource is not an ARN [env: AWS_REGION, AWS_DEFAULT_REGION]'
            cand --aws-endpoint-url 'Endpoint of every AWS service, e.g. http://127.0.0.1:5000 (LocalStack, MinIO for S3) [env: AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL]'
            cand --aws-profile 'Profile of ~/.aws/config and ~/.aws/credentials [env: AWS_PROFILE] [default: default]'
            cand --aws-ca-bundle 'PEM bundle of CAs trusted for AWS endpoints besides the system roots [env: AWS_CA_BUNDLE]'
            cand --color 'When to colour messages'
            cand --timeout 'Overall deadline of the command''s network work: key managers, registries, RemoteConfig fetches [env: CRYPTADM_TIMEOUT] [default: none; 120 for bootstrap open]'
            cand --no-rotate 'Rewrap only; do not rotate the Transit key first'
            cand --vault-skip-verify 'Accept any server certificate (insecure; VAULT_SKIP_VERIFY alone is refused)'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print details of each step'
            cand --verbose 'Print details of each step'
            cand --no-progress 'Never draw progress bars or spinners (they are drawn only on a terminal anyway)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'cryptadm;volume;help'= {
            cand rotate 'Rotate the passphrase (key-encryption key) of a LUKS1 or LUKS2 volume'
            cand serve 'Serve CSI-Addons EncryptionKeyRotation over gRPC on a unix socket'
            cand rewrap 'Rotate the Transit key of a vault-kv:// key store and rewrap every stored passphrase'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'cryptadm;volume;help;rotate'= {
        }
        &'cryptadm;volume;help;serve'= {
        }
        &'cryptadm;volume;help;rewrap'= {
        }
        &'cryptadm;volume;help;help'= {
        }
        &'cryptadm;help'= {
            cand bootstrap 'Seal and open Cluster API machineadm bootstrap configurations (EncryptedConfig)'
            cand image 'Encrypt, decrypt and authorize OCI images (containers/ocicrypt format)'
            cand secret 'Generate Kubernetes objects that carry image decryption keys'
            cand disk 'Format, inspect and decrypt LUKS2 and LUKS1 disk images and block devices'
            cand volume 'Rotate the passphrases of LUKS volumes (CSI-Addons EncryptionKeyRotation)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'cryptadm;help;bootstrap'= {
            cand seal 'Encrypt a machine configuration into an EncryptedConfig document (or cloud-init userdata, or an Ignition config)'
            cand open 'Decrypt a machineadm configuration stream back into the machine configuration'
        }
        &'cryptadm;help;bootstrap;seal'= {
        }
        &'cryptadm;help;bootstrap;open'= {
        }
        &'cryptadm;help;image'= {
            cand encrypt 'Encrypt the layers of an OCI image for one or more recipients'
            cand decrypt 'Decrypt the layers of an OCI image'
            cand authorize 'Prove that the given keys may use an encrypted image, without decrypting it'
            cand inspect 'Show each layer of an image: media type, size, digest, encryption and recipients, without any key'
            cand node-config 'Print the container runtime configuration that decrypts images with cryptadm'
            cand stream-decrypt 'Decrypt one layer for containerd (its stream processor; a drop-in for imgcrypt''s ctd-decoder)'
            cand keyprovider 'Be an ocicrypt key provider that wraps layer keys with Vault/OpenBao Transit (for skopeo, podman, containerd)'
        }
        &'cryptadm;help;image;encrypt'= {
        }
        &'cryptadm;help;image;decrypt'= {
        }
        &'cryptadm;help;image;authorize'= {
        }
        &'cryptadm;help;image;inspect'= {
        }
        &'cryptadm;help;image;node-config'= {
        }
        &'cryptadm;help;image;stream-decrypt'= {
        }
        &'cryptadm;help;image;keyprovider'= {
        }
        &'cryptadm;help;secret'= {
            cand generate-k8s 'Print Kubernetes objects that carry image decryption keys'
        }
        &'cryptadm;help;secret;generate-k8s'= {
        }
        &'cryptadm;help;disk'= {
            cand luks-format 'Create a LUKS2 or LUKS1 image (or format a block device), optionally encrypting a raw image into it'
            cand inspect 'Show a LUKS1 or LUKS2 header, or a qcow2 image and its LUKS header: version, UUID, data segment, keyslots'
            cand decrypt 'Decrypt the payload of a LUKS1 or LUKS2 image or device, or a qcow2+LUKS image, into a raw image'
            cand convert 'Convert a disk image between raw, raw LUKS, qcow2 and qcow2+LUKS in one stream (qemu-img convert''s verb)'
            cand clevis-bind 'Bind a LUKS2 volume to Tang servers (clevis''s `tang` or `sss` pin), as `clevis luks bind` does'
        }
        &'cryptadm;help;disk;luks-format'= {
        }
        &'cryptadm;help;disk;inspect'= {
        }
        &'cryptadm;help;disk;decrypt'= {
        }
        &'cryptadm;help;disk;convert'= {
        }
        &'cryptadm;help;disk;clevis-bind'= {
        }
        &'cryptadm;help;volume'= {
            cand rotate 'Rotate the passphrase (key-encryption key) of a LUKS1 or LUKS2 volume'
            cand serve 'Serve CSI-Addons EncryptionKeyRotation over gRPC on a unix socket'
            cand rewrap 'Rotate the Transit key of a vault-kv:// key store and rewrap every stored passphrase'
        }
        &'cryptadm;help;volume;rotate'= {
        }
        &'cryptadm;help;volume;serve'= {
        }
        &'cryptadm;help;volume;rewrap'= {
        }
        &'cryptadm;help;help'= {
        }
    ]
    $completions[$command]
}
