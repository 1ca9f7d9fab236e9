# OpenBao/Vault policy of the cryptadm-volume DaemonSet (deploy/cryptadm-volume.yaml with
# deploy/vault/cryptadm-volume-patch.yaml): the volume passphrases in KV v2 `kv/cryptadm/<volume id>`,
# stored wrapped by Transit key `transit/volumes`. tests/cli/openbao_volume.rs loads this very file.
#
#   bao policy write cryptadm-volume deploy/vault/cryptadm-volume-policy.hcl

# Read and check-and-set write one volume's keys (current, pending, previous).
path "kv/data/cryptadm/*" {
  capabilities = ["create", "read", "update"]
}

# Wrap new passphrases and unwrap stored ones; nothing else of the Transit key (rotating it and rewrapping
# every volume is `cryptadm volume rewrap`, an operator's job with its own policy).
path "transit/encrypt/volumes" {
  capabilities = ["update"]
}
path "transit/decrypt/volumes" {
  capabilities = ["update"]
}
