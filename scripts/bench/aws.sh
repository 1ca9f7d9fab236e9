#!/usr/bin/env bash
# Benchmark of `bootstrap open` with the built-in aws-kms provider against a local AWS API (moto_server, from
# .ci/deps/aws.sh, authentication on so every request is really signed and checked): one KMS Decrypt round trip
# (SigV4) then PBKDF2 50,000 rounds + AES-256-GCM, against the same document kind sealed for the `file` provider;
# with keys in the environment, and with a CAPA machine's first-boot credentials (the instance profile's, from
# the loopback IMDSv2 stand-in tests/interop/aws/imds_standin.py: a session token, the role's credentials, then
# Decrypt). Mean/median/min wall time and peak RSS; the number of KMS requests one open makes is checked in
# moto's log (exactly one). A benchmark, not a test: it fails only when something cannot run or that count is off.
#
# Usage: scripts/bench/aws.sh
# Environment:
#   CRYPTADM=target/release/cryptadm   the binary (built with `cargo build --release` when missing)
#   BENCH_RUNS=30                      timed runs of each `open`
set -euo pipefail

SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd -- "$SCRIPT_DIR/../.." && pwd)
RUNS=${BENCH_RUNS:-30}
CRYPTADM=${CRYPTADM:-$REPO_ROOT/target/release/cryptadm}
if [ ! -x "$CRYPTADM" ]; then
  (cd "$REPO_ROOT" && cargo build --release --locked --quiet)
fi
MOTO=${MOTO_SERVER:-/opt/moto-venv/bin/moto_server}

WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
INITIAL_NO_AUTH_ACTION_COUNT=6 "$MOTO" -H 127.0.0.1 -p "$port" >"$WORK/moto.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 200); do python3 -c "import socket; socket.create_connection(('127.0.0.1', $port))" 2>/dev/null && break; sleep 0.1; done
for name in $(env | grep -o '^AWS_[A-Z_]*'); do unset "$name"; done
export AWS_ENDPOINT_URL="http://127.0.0.1:$port" AWS_DEFAULT_REGION=eu-west-1 AWS_REGION=eu-west-1 AWS_EC2_METADATA_DISABLED=true
python3 "$REPO_ROOT/tests/interop/aws/aws_oracle.py" setup >"$WORK/setup.json"
AWS_ACCESS_KEY_ID=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["admin"]["id"])' "$WORK/setup.json")
AWS_SECRET_ACCESS_KEY=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["admin"]["secret"])' "$WORK/setup.json")
KEY=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["key"])' "$WORK/setup.json")
export AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY

head -c 65536 /dev/urandom | base64 -w 76 | sed 's/^/# /' >"$WORK/config.yaml"
head -c 32 /dev/urandom >"$WORK/passphrase"
"$CRYPTADM" -q bootstrap seal --in "$WORK/config.yaml" --provider aws-kms --passphrase-uri "$KEY" --out "$WORK/aws.yaml"
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
time_runs "aws-kms (one signed KMS Decrypt)" "$CRYPTADM" -q bootstrap open --in "$WORK/aws.yaml" --out -

# One open, one KMS request: moto logs each request it answers.
before=$(grep -c '"POST / HTTP' "$WORK/moto.log" || true)
"$CRYPTADM" -q bootstrap open --in "$WORK/aws.yaml" --out - >/dev/null
requests=$(( $(grep -c '"POST / HTTP' "$WORK/moto.log") - before ))
if [ "$requests" -ne 1 ]; then
  echo "bootstrap open made $requests KMS requests, not one" >&2
  exit 1
fi

# The instance profile, as on a CAPA machine at first boot (credentials valid an hour: fetched once per run).
python3 "$REPO_ROOT/tests/interop/aws/aws_oracle.py" assume node >"$WORK/node.json"
python3 "$REPO_ROOT/tests/interop/aws/imds_standin.py" "$WORK/node.json" 3600 "$WORK/imds.log" >"$WORK/imds.port" &
PIDS+=($!)
for _ in $(seq 100); do [ -s "$WORK/imds.port" ] && break; sleep 0.1; done
from_instance=(env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_EC2_METADATA_DISABLED
  AWS_EC2_METADATA_SERVICE_ENDPOINT="http://127.0.0.1:$(head -1 "$WORK/imds.port")")
"${from_instance[@]}" "$CRYPTADM" -q bootstrap open --in "$WORK/aws.yaml" --out - | cmp - "$WORK/config.yaml"
grep -q 'security-credentials/cryptadm-node token-ok' "$WORK/imds.log"
time_runs "aws-kms via the instance profile (IMDSv2)" \
  "${from_instance[@]}" "$CRYPTADM" -q bootstrap open --in "$WORK/aws.yaml" --out -
