#!/bin/sh
# One-time OpenBao/Vault setup for the cryptadm-volume DaemonSet (run with an admin token; `vault` works the same
# as `bao`). The DaemonSet logs in with its service-account token (auth/kubernetes, role cryptadm-volume) and
# needs no static token.
set -eu
BAO=${BAO:-bao}

"$BAO" secrets enable -path=kv -version=2 kv || true
"$BAO" secrets enable transit || true
"$BAO" write -f transit/keys/volumes

"$BAO" policy write cryptadm-volume "$(dirname "$0")/cryptadm-volume-policy.hcl"

# Kubernetes auth: OpenBao/Vault runs in the cluster here (in-cluster TokenReview); from outside, also give
# kubernetes_ca_cert and token_reviewer_jwt.
"$BAO" auth enable kubernetes || true
"$BAO" write auth/kubernetes/config kubernetes_host="https://kubernetes.default.svc:443"
"$BAO" write auth/kubernetes/role/cryptadm-volume \
    bound_service_account_names=cryptadm-volume \
    bound_service_account_namespaces=cryptadm-system \
    token_policies=cryptadm-volume \
    token_ttl=1h token_max_ttl=24h

# Seed a volume that exists already (its passphrase wrapped; `cryptadm volume rotate` replaces it):
#   "$BAO" kv put -mount=kv cryptadm/<volume id> \
#       current="$("$BAO" write -field=ciphertext transit/encrypt/volumes plaintext="$(base64 -w0 < passphrase)")"

# Operators rotate the Transit key and rewrap every stored passphrase (binding a value seeded as above to its
# volume: docs/key-managers.md, "What a wrapped key is bound to") with
#   cryptadm volume rewrap --key-store vault-kv://kv/cryptadm --key-wrap vault-transit://transit/volumes
# under a policy that also allows: transit/keys/volumes/rotate, transit/rewrap/volumes, transit/decrypt/volumes,
# transit/encrypt/volumes (update), kv/metadata/cryptadm (list).
