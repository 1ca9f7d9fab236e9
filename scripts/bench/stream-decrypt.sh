#!/usr/bin/env bash
# Benchmark of `cryptadm image stream-decrypt` (containerd's decryption stream processor: ciphertext on stdin,
# plaintext on stdout, the payload on fd 3, the key from a keys directory) against `cryptadm image decrypt`
# (layout to layout) and `skopeo copy --decryption-key` (containers/ocicrypt) on the same encrypted layer.
#
# One run: builds cryptadm (release) unless BENCH_BIN is given, makes an OCI layout with ONE gzip layer of
# BENCH_LAYER_MIB MiB of random data (make_oci_image.py), encrypts it for an RSA-2048 key with cryptadm, writes the
# payload containerd would send (a protobuf Any holding the layer descriptor as JSON), then
#   1. checks stream-decrypt once (untimed): its output must hash to the source layer's digest;
#   2. times stream-decrypt (output to /dev/null, as a pipe into containerd's unpacker would drain it),
#      `image decrypt` and skopeo, BENCH_RUNS times each, interleaved;
#   3. reports medians, throughputs, the ratios stream-decrypt/skopeo (goal >= 8) and stream-decrypt/decrypt, and
#      stream-decrypt's peak RSS (goal <= 32 MiB: memory must stay flat whatever the layer size).
#
# This is a benchmark, not a test: it fails only when something cannot run or an output is wrong.
#
# Usage: scripts/bench/stream-decrypt.sh
#        BENCH_LAYER_MIB=64 BENCH_RUNS=1 BENCH_BIN=target/debug/cryptadm scripts/bench/stream-decrypt.sh  (quick)
# Environment:
#   BENCH_LAYER_MIB=512   random bytes in the layer
#   BENCH_RUNS=3          timed runs of each command
#   BENCH_BIN=PATH        benchmark this cryptadm binary instead of building the work tree
#   TMPDIR                where the layouts go: needs about 5 x BENCH_LAYER_MIB

set -euo pipefail

SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd -- "$SCRIPT_DIR/../.." && pwd)
MIB=${BENCH_LAYER_MIB:-512}
RUNS=${BENCH_RUNS:-3}
PYTHON=${PYTHON:-python3}
for n in "$MIB" "$RUNS"; do
    [[ $n =~ ^[0-9]+$ && $n -ge 1 ]] || { echo "bench: settings must be positive whole numbers, got '$n'" >&2; exit 2; }
done

say() { printf '\n== %s\n' "$*"; }
die() { printf 'bench: FAILED: %s\n' "$*" >&2; exit 1; }
command -v skopeo >/dev/null || die "skopeo is not installed (apt-get install skopeo)"
command -v openssl >/dev/null || die "openssl is not installed"
[[ -x /usr/bin/time ]] || die "/usr/bin/time (GNU time) is needed for timing and peak RSS"

if [[ -n ${BENCH_BIN:-} ]]; then
    BIN=$(realpath -- "$BENCH_BIN")
else
    say "building cryptadm (release)"
    (cd "$REPO_ROOT" && cargo build --release --locked)
    BIN="${CARGO_TARGET_DIR:-$REPO_ROOT/target}/release/cryptadm"
fi
[[ -x $BIN ]] || die "no binary at $BIN"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/cryptadm-bench-stream.XXXXXX")
trap 'rm -rf -- "$WORK"' EXIT

say "making a ${MIB} MiB layer and encrypting it"
"$PYTHON" "$SCRIPT_DIR/make_oci_image.py" "$WORK/src" v1 $((MIB << 20)) >"$WORK/src.json"
SRC_DIGEST=$("$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["digest"])' "$WORK/src.json")
mkdir -p "$WORK/keys/image-keys"
openssl genrsa -out "$WORK/keys/image-keys/node.pem" 2048 2>/dev/null
openssl rsa -in "$WORK/keys/image-keys/node.pem" -pubout -out "$WORK/pub.pem" 2>/dev/null
"$BIN" -q image encrypt --recipient "jwe:$WORK/pub.pem" "oci:$WORK/src:v1" "oci:$WORK/enc:v1"

# The payload containerd writes on fd 3, and the encrypted blob.
read -r BLOB MEDIA < <("$PYTHON" - "$WORK/enc" "$WORK/payload.bin" <<'PY'
import json, os, sys
layout, out = sys.argv[1], sys.argv[2]
def blob(d): return os.path.join(layout, "blobs", "sha256", d.split(":")[1])
index = json.load(open(os.path.join(layout, "index.json")))
manifest = json.load(open(blob(index["manifests"][0]["digest"])))
layer = manifest["layers"][0]
value = json.dumps({"DecryptConfig": {"Parameters": None}, "Descriptor": layer}).encode()
def varint(n):
    out = b""
    while n >= 0x80:
        out += bytes([n & 0x7f | 0x80]); n >>= 7
    return out + bytes([n])
url = b"io.containerd.ocicrypt.v1.Payload"
open(out, "wb").write(b"\x0a" + varint(len(url)) + url + b"\x12" + varint(len(value)) + value)
print(blob(layer["digest"]), layer["mediaType"])
PY
)

stream() { STREAM_PROCESSOR_MEDIATYPE=$MEDIA "$BIN" image stream-decrypt --decryption-keys-path "$WORK/keys" 3<"$WORK/payload.bin" <"$BLOB"; }

say "checking stream-decrypt's output"
GOT="sha256:$(stream | sha256sum | cut -d' ' -f1)"
[[ $GOT == "$SRC_DIGEST" ]] || die "stream-decrypt wrote $GOT, the source layer is $SRC_DIGEST"
echo "ok: $GOT"

# timed NAME COMMAND... : appends "NAME seconds rss_kib" to $WORK/runs
timed() {
    local name=$1
    shift
    /usr/bin/time -f '%e %M' -o "$WORK/time" "$@" >/dev/null 2>"$WORK/stderr" || die "$name failed: $(cat "$WORK/stderr")"
    echo "$name $(cat "$WORK/time")" >>"$WORK/runs"
}
export -f stream
export BIN MEDIA WORK BLOB
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
say "timing ($RUNS runs each, interleaved)"
for ((i = 1; i <= RUNS; i++)); do
    timed stream-decrypt bash -c stream
    rm -rf "$WORK/dec"
    timed image-decrypt "$BIN" -q image decrypt --key "$WORK/keys/image-keys/node.pem" "oci:$WORK/enc:v1" "oci:$WORK/dec:v1"
    rm -rf "$WORK/dec"
    timed skopeo skopeo --insecure-policy copy -q --decryption-key "$WORK/keys/image-keys/node.pem" "oci:$WORK/enc:v1" "oci:$WORK/dec:v1"
    rm -rf "$WORK/dec"
done

say "results (${MIB} MiB layer; load before: $LOAD_BEFORE, after: $(cut -d' ' -f1-3 /proc/loadavg))"
"$PYTHON" - "$WORK/runs" "$MIB" <<'PY'
import statistics, sys
runs, mib = {}, int(sys.argv[2])
for line in open(sys.argv[1]):
    name, seconds, rss = line.split()
    runs.setdefault(name, []).append((float(seconds), int(rss)))
med = {n: statistics.median(s for s, _ in v) for n, v in runs.items()}
print(f"{'command':<16}{'median s':>10}{'MiB/s':>10}{'peak RSS MiB':>14}")
for n, v in runs.items():
    print(f"{n:<16}{med[n]:>10.2f}{mib / max(med[n], 1e-3):>10.0f}{max(r for _, r in v) / 1024:>14.1f}")
ratio = med["skopeo"] / max(med["stream-decrypt"], 1e-3)
print(f"\nstream-decrypt / skopeo throughput: {ratio:.1f}x (goal >= 8)")
print(f"stream-decrypt / image decrypt throughput: {med['image-decrypt'] / max(med['stream-decrypt'], 1e-3):.1f}x")
rss = max(r for _, r in runs["stream-decrypt"]) / 1024
print(f"stream-decrypt peak RSS: {rss:.1f} MiB (goal <= 32)")
PY
