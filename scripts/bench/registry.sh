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
#      run starts after a `sync`, so that none pays for the writeback of the run before it;
#   3. after each pair, the registry's own ingest time for the same bytes (issue 17): one streaming upload of the
#      layer by curl (POST, one PATCH whose chunked body is read from a pipe, PUT ?digest=).
# Each of BENCH_DELAYS (milliseconds) is timed in turn: 0 straight on loopback, N through a loopback proxy that holds
# every forwarded read N ms (scripts/bench/latency_proxy.py: a registry far away; every connection then moves at
# most about 64 KiB per N ms, curl's as the tools'). Runs alternate cryptadm, skopeo and the floor, so that load
# weighs on them alike. It prints, per delay, the best and median wall time of each, skopeo/cryptadm and
# cryptadm/floor side by side (goals: >= 1.5 through the proxy, <= 1.3), peak RSS (goal <= 64 MiB) and the load
# average before and after.
#
# The registry itself runs on the same machine and takes its share of the CPU and disk: both tools pay that cost
# alike. This is a benchmark, not a test: it fails only when something cannot run or an output is wrong.
#
# Usage: scripts/bench/registry.sh                   (from anywhere)
#        BENCH_LAYER_MIB=64 BENCH_RUNS=2 scripts/bench/registry.sh     (a quick run)
#
# Environment:
#   BENCH_LAYER_MIB=512   random bytes in the layer (the gzip blob is a few KiB larger)
#   BENCH_RUNS=3          timed runs of each tool (and of the floor) per delay
#   BENCH_BIN=PATH        benchmark this cryptadm binary instead of building the work tree
#   BENCH_DELAYS=0        delays to time, in ms, e.g. "0 10 50" (through the proxy a layer moves at about 6.4 MB/s at
#                         10 ms and 1.3 MB/s at 50 ms: use a smaller BENCH_LAYER_MIB there, e.g. 32)
#   BENCH_KEEP=1          keep the temporary directory (printed)
#   TMPDIR                where the layout and the registry storage go: needs about (3 + 2 x RUNS) x LAYER_MIB

set -euo pipefail

SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd -- "$SCRIPT_DIR/../.." && pwd)
LAYER_MIB=${BENCH_LAYER_MIB:-512}
RUNS=${BENCH_RUNS:-3}
FLOOR_GOAL=1.3        # cryptadm within 1.3x of the registry's own ingest time for the same bytes (issue 17)
RSS_GOAL_MIB=64
DELAYS=${BENCH_DELAYS:-0}
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
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; done
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
PIDS+=($!)
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

# timed NAME COMMAND...: runs COMMAND under /usr/bin/time, appends "wall_s peak_kib" to NAME.times.
timed() {
    local name=$1
    shift
    sync
    /usr/bin/time -f '%e %M' -o "$WORK/time.out" "$@" >/dev/null 2>"$WORK/$name.err" \
        || { cat "$WORK/$name.err" >&2; die "$name failed"; }
    cat "$WORK/time.out" >>"$WORK/$name.times"
    printf '  %-16s %6.2f s  %7d KiB peak RSS\n' "$name" $(cat "$WORK/time.out")
}

# The ingest floor (issues 17 and 44): what the registry itself needs to take the same number of bytes, one
# streaming upload by curl (POST, one PATCH with a chunked body read from a pipe, PUT ?digest=), as a client that
# did no work at all would send them. cryptadm also downloads the source and encrypts, but those overlap with the
# upload.
BLOB="$WORK/src/blobs/sha256/${SOURCE_LAYER#sha256:}"
cat "$BLOB" >/dev/null   # in the page cache, as cryptadm's source is in the registry's
ingest() {
    local host=$1 repo=$2 location
    location=$(curl -sS -f -X POST -D - -o /dev/null "http://$host/v2/$repo/blobs/uploads/" \
        | awk 'tolower($1) == "location:" {print $2}' | tr -d '\r')
    [[ $location == http* ]] || location="http://$host$location"
    location=$(curl -sS -f -X PATCH -H 'Content-Type: application/octet-stream' -T - -D - -o /dev/null "$location" \
        <"$BLOB" | awk 'tolower($1) == "location:" {print $2}' | tr -d '\r')
    [[ $location == http* ]] || location="http://$host$location"
    [[ $location == *\?* ]] && location+="&" || location+="?"
    curl -sS -f -X PUT -o /dev/null "${location}digest=$SOURCE_LAYER"
}

# One proxy per delay; each reads its stdin until the end: a fifo held open here keeps them alive.
mkfifo proxy.in
exec 3<>proxy.in
declare -A HOSTS
for delay in $DELAYS; do
    [[ $delay =~ ^[0-9]+$ ]] || die "BENCH_DELAYS takes whole milliseconds, got '$delay'"
    if ((delay == 0)); then HOSTS[$delay]=$HOST; continue; fi
    python3 "$SCRIPT_DIR/latency_proxy.py" "$PORT" "$delay" <proxy.in >"proxy-$delay.port" &
    PIDS+=($!)
    for _ in $(seq 100); do [[ -s proxy-$delay.port ]] && break; sleep 0.1; done
    [[ -s proxy-$delay.port ]] || die "the latency proxy did not start"
    HOSTS[$delay]=127.0.0.1:$(head -1 "proxy-$delay.port")
done

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
for delay in $DELAYS; do
    host=${HOSTS[$delay]}
    say "timing $RUNS runs of each at $delay ms (registry → registry, ${LAYER_MIB} MiB layer)"
    for run in $(seq "$RUNS"); do
        timed "cryptadm-$delay" "$BIN" -q image encrypt --recipient jwe:pub.pem --src-tls-verify=false \
            --dest-tls-verify=false "docker://$host/src:v1" "docker://$host/cryptadm-$delay-$run:v1"
        timed "skopeo-$delay" skopeo --insecure-policy copy -q --encryption-key jwe:pub.pem --src-tls-verify=false \
            --dest-tls-verify=false "docker://$host/src:v1" "docker://$host/skopeo-$delay-$run:v1"
        sync
        start=$EPOCHREALTIME
        ingest "$host" "floor-$delay-$run" || die "curl could not upload the layer"
        awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN {print b - a}' >>"$WORK/floor-$delay.times"
        printf '  %-16s %6.2f s\n' "floor-$delay" "$(tail -1 "$WORK/floor-$delay.times")"
    done
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$WORK" "$LAYER_MIB" "$(skopeo --version | awk '{print $3}')" "$FLOOR_GOAL" "$LOAD_BEFORE" \
    "$LOAD_AFTER" "$RSS_GOAL_MIB" "$DELAYS" <<'EOF'
import statistics, sys
work, mib, skopeo_version = sys.argv[1], int(sys.argv[2]), sys.argv[3]
floor_goal, load_before, load_after, rss_goal = float(sys.argv[4]), sys.argv[5], sys.argv[6], float(sys.argv[7])
delays = sys.argv[8].split()
def load(name):
    rows = [line.split() for line in open(f"{work}/{name}.times")]
    return [float(r[0]) for r in rows], [int(r[1]) if len(r) > 1 else 0 for r in rows]
print(f"\n== registry → registry encrypt, {mib} MiB layer, skopeo {skopeo_version}; N ms: every forwarded read held N ms")
print(f"  {'delay':>6} {'cryptadm':>9} {'skopeo':>9} {'floor':>9}   (medians; bests)   {'skopeo/ours':>11} "
      f"{'ours/floor':>10} {'RSS MiB':>8}")
peak = 0
for delay in delays:
    ct, cr = load(f"cryptadm-{delay}")
    st, _ = load(f"skopeo-{delay}")
    ft, _ = load(f"floor-{delay}")
    ours, theirs, floor = statistics.median(ct), statistics.median(st), statistics.median(ft)
    peak = max(peak, max(cr) / 1024)
    goals = [f"ours/floor <= {floor_goal:g}: {'met' if ours / floor <= floor_goal else 'NOT met'}"]
    if delay != "0":
        goals.insert(0, f"skopeo/ours >= 1.5: {'met' if theirs / ours >= 1.5 else 'NOT met'}")
    print(f"  {delay + ' ms':>6} {ours:8.2f}s {theirs:8.2f}s {floor:8.2f}s   ({min(ct):.2f}; {min(st):.2f}; "
          f"{min(ft):.2f})   {theirs / ours:10.2f}x {ours / floor:9.2f}x {max(cr) / 1024:8.1f}   {'; '.join(goals)}")
print(f"  cryptadm peak RSS {peak:.1f} MiB (goal <= {rss_goal:g} MiB: {'met' if peak <= rss_goal else 'NOT met'})")
print(f"  load average before timing {load_before}, after {load_after}; 2 CPUs shared with the registry")
EOF
