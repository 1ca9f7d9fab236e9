#!/usr/bin/env bash
# Benchmark of registry → registry encryption: `cryptadm image encrypt docker://… docker://…` against
# `skopeo copy --encryption-key jwe:…` doing the same job through the same local registry (Debian's
# docker-registry on a free loopback port, plain HTTP), in one run, with the ratio of their wall times and the
# peak RSS of each.
#
# One run: builds cryptadm (release), makes ONE OCI layout with ONE gzip layer of BENCH_LAYER_MIB MiB of random
# data (scripts/bench/make_oci_image.py), starts a registry with its storage in a temporary directory and pushes
# the image there with skopeo (untimed), then
#   1. checks (untimed; also the warm-up): cryptadm encrypts registry → registry, skopeo pulls and decrypts the
#      result, and the decrypted layer must carry the source layer's digest, or the script fails;
#   2. times BENCH_RUNS runs of each tool, alternating, each into a repository of its own (every run uploads the
#      whole layer: fresh keys give fresh ciphertext), with /usr/bin/time for wall time and peak RSS. Every timed
#      run starts after a `sync`, so that none pays for the writeback of the run before it.
#   3. measures the registry's own ingest time for the same bytes (issue 17): BENCH_FLOOR_RUNS streaming uploads
#      of the layer by curl (POST, one PATCH whose chunked body is read from a pipe, PUT ?digest=).
# It prints the best and mean wall time of each tool, the skopeo/cryptadm ratio, the medians against the ingest
# floor (cryptadm/floor, goal <= 1.3), peak RSS (goal <= 64 MiB) and the load average.
#
# The registry itself runs on the same machine and takes its share of the CPU and disk: both tools pay that cost
# alike. This is a benchmark, not a test: it fails only when something cannot run or an output is wrong.
#
# Usage: scripts/bench/registry.sh                   (from anywhere)
#        BENCH_LAYER_MIB=64 BENCH_RUNS=2 scripts/bench/registry.sh     (a quick run)
#
# Environment:
#   BENCH_LAYER_MIB=512   random bytes in the layer (the gzip blob is a few KiB larger)
#   BENCH_RUNS=2          timed runs of each tool
#   BENCH_BIN=PATH        benchmark this cryptadm binary instead of building the work tree
#   BENCH_FLOOR_RUNS=3    curl uploads for the ingest floor (the median is reported)
#   BENCH_KEEP=1          keep the temporary directory (printed)
#   TMPDIR                where the layout and the registry storage go: needs about (3 + 2 x RUNS) x LAYER_MIB

set -euo pipefail

SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd -- "$SCRIPT_DIR/../.." && pwd)
LAYER_MIB=${BENCH_LAYER_MIB:-512}
RUNS=${BENCH_RUNS:-2}
FLOOR_GOAL=1.3        # cryptadm within 1.3x of the registry's own ingest time for the same bytes (issue 17)
RSS_GOAL_MIB=64
FLOOR_RUNS=${BENCH_FLOOR_RUNS:-3}
for n in "$LAYER_MIB" "$RUNS"; do
    [[ $n =~ ^[0-9]+$ ]] && ((n >= 1)) || { echo "bench: sizes and counts must be whole numbers >= 1, got '$n'" >&2; exit 2; }
done

say() { printf '\n== %s\n' "$*"; }
die() { printf 'bench: FAILED: %s\n' "$*" >&2; exit 1; }

for tool in skopeo openssl python3 curl /usr/bin/docker-registry /usr/bin/time; do
    command -v "$tool" >/dev/null || die "$tool is not installed (apt-get install -y skopeo openssl python3 docker-registry time)"
done

if [[ -n ${BENCH_BIN:-} ]]; then
    BIN=$BENCH_BIN
    [[ -x $BIN ]] || die "BENCH_BIN=$BIN is not an executable"
else
    say "building cryptadm (release)"
    (cd "$REPO_ROOT" && cargo build --release --locked --quiet)
    BIN=${CARGO_TARGET_DIR:-$REPO_ROOT/target}/release/cryptadm
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/cryptadm-registry-bench.XXXXXX")
REGISTRY_PID=
cleanup() {
    if [[ -n $REGISTRY_PID ]]; then kill "$REGISTRY_PID" 2>/dev/null; wait "$REGISTRY_PID" 2>/dev/null || true; fi
    if [[ ${BENCH_KEEP:-0} == 1 ]]; then echo "bench: kept $WORK"; else rm -rf -- "$WORK"; fi
}
trap cleanup EXIT
cd "$WORK"

say "making an RSA-2048 key pair and a ${LAYER_MIB} MiB image"
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out priv.pem 2>/dev/null
openssl pkey -in priv.pem -pubout -out pub.pem
python3 "$SCRIPT_DIR/make_oci_image.py" "$WORK/src" v1 $((LAYER_MIB * 1024 * 1024)) >/dev/null
SOURCE_LAYER=$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1]+"/index.json"))["manifests"][0]["digest"][7:]; print(json.load(open(sys.argv[1]+"/blobs/sha256/"+m))["layers"][0]["digest"])' "$WORK/src")

say "starting docker-registry"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
HOST=127.0.0.1:$PORT
cat >registry.yml <<EOF
version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $WORK/storage
http:
  addr: $HOST
EOF
/usr/bin/docker-registry serve registry.yml >registry.log 2>&1 &
REGISTRY_PID=$!
for _ in $(seq 100); do
    python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' "$PORT" 2>/dev/null && break
    sleep 0.1
done
skopeo --insecure-policy copy -q --dest-tls-verify=false "oci:$WORK/src:v1" "docker://$HOST/src:v1"

say "check: cryptadm encrypts registry → registry, skopeo decrypts"
"$BIN" -q image encrypt --recipient jwe:pub.pem --src-tls-verify=false --dest-tls-verify=false \
    "docker://$HOST/src:v1" "docker://$HOST/check:v1"
skopeo --insecure-policy copy -q --src-tls-verify=false --decryption-key priv.pem "docker://$HOST/check:v1" "oci:$WORK/check:v1"
CHECK_LAYER=$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1]+"/index.json"))["manifests"][0]["digest"][7:]; print(json.load(open(sys.argv[1]+"/blobs/sha256/"+m))["layers"][0]["digest"])' "$WORK/check")
[[ $CHECK_LAYER == "$SOURCE_LAYER" ]] || die "skopeo decrypted layer $CHECK_LAYER, expected $SOURCE_LAYER"
rm -rf "$WORK/check"
echo "ok: $SOURCE_LAYER"

# timed NAME REPO COMMAND...: runs COMMAND under /usr/bin/time, appends "wall_s peak_kib" to NAME.times.
timed() {
    local name=$1
    shift
    sync
    /usr/bin/time -f '%e %M' -o "$WORK/time.out" "$@" >/dev/null 2>"$WORK/$name.err" \
        || { cat "$WORK/$name.err" >&2; die "$name failed"; }
    cat "$WORK/time.out" >>"$WORK/$name.times"
    printf '  %-8s %6.2f s  %7d KiB peak RSS\n' "$name" $(cat "$WORK/time.out")
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
say "timing $RUNS runs of each (registry → registry, ${LAYER_MIB} MiB layer)"
for run in $(seq "$RUNS"); do
    timed cryptadm "$BIN" -q image encrypt --recipient jwe:pub.pem --src-tls-verify=false --dest-tls-verify=false \
        "docker://$HOST/src:v1" "docker://$HOST/cryptadm-$run:v1"
    timed skopeo skopeo --insecure-policy copy -q --encryption-key jwe:pub.pem --src-tls-verify=false \
        --dest-tls-verify=false "docker://$HOST/src:v1" "docker://$HOST/skopeo-$run:v1"
done

# The ingest floor (issue 17): what the registry itself needs to take the same number of bytes, one streaming
# upload by curl (POST, one PATCH with a chunked body read from a pipe, PUT ?digest=), as a client that did no work
# at all would send them. cryptadm also downloads the source and encrypts, but those overlap with the upload.
BLOB="$WORK/src/blobs/sha256/${SOURCE_LAYER#sha256:}"
cat "$BLOB" >/dev/null   # in the page cache, as cryptadm's source is in the registry's
ingest() {
    local repo=$1 location
    location=$(curl -sS -f -X POST -D - -o /dev/null "http://$HOST/v2/$repo/blobs/uploads/" \
        | awk 'tolower($1) == "location:" {print $2}' | tr -d '\r')
    [[ $location == http* ]] || location="http://$HOST$location"
    location=$(curl -sS -f -X PATCH -H 'Content-Type: application/octet-stream' -T - -D - -o /dev/null "$location" \
        <"$BLOB" | awk 'tolower($1) == "location:" {print $2}' | tr -d '\r')
    [[ $location == http* ]] || location="http://$HOST$location"
    [[ $location == *\?* ]] && location+="&" || location+="?"
    curl -sS -f -X PUT -o /dev/null "${location}digest=$SOURCE_LAYER"
}
say "ingest floor: $FLOOR_RUNS streaming uploads of the layer by curl"
for run in $(seq "$FLOOR_RUNS"); do
    sync
    start=$EPOCHREALTIME
    ingest "floor-$run" || die "curl could not upload the layer"
    awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN {print b - a}' >>"$WORK/floor.times"
    printf '  curl     %6.2f s\n' "$(tail -1 "$WORK/floor.times")"
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$WORK" "$LAYER_MIB" "$(skopeo --version | awk '{print $3}')" "$FLOOR_GOAL" "$LOAD_BEFORE" \
    "$LOAD_AFTER" "$RSS_GOAL_MIB" <<'EOF'
import statistics, sys
work, mib, skopeo_version = sys.argv[1], int(sys.argv[2]), sys.argv[3]
floor_goal, load_before, load_after, rss_goal = float(sys.argv[4]), sys.argv[5], sys.argv[6], float(sys.argv[7])
def load(name):
    rows = [line.split() for line in open(f"{work}/{name}.times")]
    return [float(r[0]) for r in rows], [int(r[1]) for r in rows]
ct, cr = load("cryptadm")
st, sr = load("skopeo")
best_c, best_s = min(ct), min(st)
print(f"\n== registry → registry encrypt, {mib} MiB layer, skopeo {skopeo_version}")
print(f"  {'tool':10} {'best s':>8} {'mean s':>8} {'MiB/s':>8} {'peak RSS MiB':>13}")
for name, t, r in (("cryptadm", ct, cr), ("skopeo", st, sr)):
    print(f"  {name:10} {min(t):8.2f} {sum(t)/len(t):8.2f} {mib/min(t):8.1f} {max(r)/1024:13.1f}")
ratio = best_s / best_c
print(f"  ratio skopeo/cryptadm (best wall time): {ratio:.2f}x")
floor = statistics.median(float(line) for line in open(f"{work}/floor.times"))
ours, theirs = statistics.median(ct), statistics.median(st)
print(f"  ingest floor (curl, one streaming PATCH, median): {floor:.2f} s")
print(f"  medians: cryptadm {ours:.2f} s, skopeo {theirs:.2f} s; cryptadm/floor {ours / floor:.2f}x (goal <= "
      f"{floor_goal:g}x: {'met' if ours / floor <= floor_goal else 'NOT met'}), skopeo/cryptadm {theirs / ours:.2f}x")
peak = max(cr) / 1024
print(f"  cryptadm peak RSS {peak:.1f} MiB (goal <= {rss_goal:g} MiB: {'met' if peak <= rss_goal else 'NOT met'})")
print(f"  load average before timing {load_before}, after {load_after}; 2 CPUs shared with the registry")
EOF
