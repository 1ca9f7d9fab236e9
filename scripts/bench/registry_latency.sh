#!/usr/bin/env bash
# Benchmark of layers moved in parallel (issue 26): cryptadm against skopeo, and cryptadm --jobs 1 (one layer at
# a time, as before), through a loopback proxy that holds each forwarded read for BENCH_DELAY_MS
# (scripts/bench/latency_proxy.py: a registry tens of milliseconds away) and straight on loopback, for an image of
# BENCH_LAYERS layers and one of a single layer, in three directions:
#   push  encrypt a local layout into the registry      (skopeo copy --encryption-key  oci: docker://)
#   pull  decrypt from the registry into a local layout  (skopeo copy --decryption-key docker:// oci:)
#   r2r   encrypt registry → registry                    (skopeo copy --encryption-key docker:// docker://)
# The registry is Debian's docker-registry on a free loopback port (plain HTTP), storage in a temporary directory.
# Every run writes a repository of its own (fresh keys: every layer is uploaded). It prints, per case, the wall
# time of each tool (cryptadm at the default --jobs, at --jobs 1 and at --jobs 8), skopeo/cryptadm (goal >= 1.5
# at the delay with many layers) and (--jobs 1)/cryptadm (goal >= 1, "no slower than before", on loopback and for
# one layer), and the peak RSS of cryptadm at --jobs 1 and 8, pushing and pulling.
# This is a benchmark, not a test: it fails only when something cannot run or a result does not decrypt.
#
# Usage: scripts/bench/registry_latency.sh
#        BENCH_BIN=target/release/cryptadm BENCH_RUNS=1 scripts/bench/registry_latency.sh
#
# Environment:
#   BENCH_LAYERS=8         layers of the many-layer image
#   BENCH_LAYER_MIB=4      random MiB per layer of the many-layer image
#   BENCH_SINGLE_MIB=8     random MiB of the single-layer image
#   BENCH_DELAY_MS=10      what the proxy holds each forwarded read for
#   BENCH_RUNS=2           timed runs of each case (the best is reported)
#   BENCH_BIN=PATH         benchmark this cryptadm binary instead of building the work tree (release)
#   BENCH_KEEP=1           keep the temporary directory (printed)
#   BENCH_TIMELINE=FILE    the proxy writes when each request started and was answered there (latency_proxy.py)

set -euo pipefail

SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd -- "$SCRIPT_DIR/../.." && pwd)
LAYERS=${BENCH_LAYERS:-8}
LAYER_MIB=${BENCH_LAYER_MIB:-4}
SINGLE_MIB=${BENCH_SINGLE_MIB:-8}
DELAY_MS=${BENCH_DELAY_MS:-10}
RUNS=${BENCH_RUNS:-2}

say() { printf '\n== %s\n' "$*"; }
die() { printf 'bench: FAILED: %s\n' "$*" >&2; exit 1; }

for tool in skopeo openssl python3 /usr/bin/docker-registry /usr/bin/time; do
    command -v "$tool" >/dev/null || die "$tool is not installed (apt-get install -y skopeo openssl python3 docker-registry time)"
done
if [[ -n ${BENCH_BIN:-} ]]; then
    BIN=$BENCH_BIN
else
    say "building cryptadm (release)"
    (cd "$REPO_ROOT" && cargo build --release --locked --quiet)
    BIN=${CARGO_TARGET_DIR:-$REPO_ROOT/target}/release/cryptadm
fi
[[ -x $BIN ]] || die "$BIN is not an executable"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/cryptadm-latency-bench.XXXXXX")
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; done
    if [[ ${BENCH_KEEP:-0} == 1 ]]; then echo "bench: kept $WORK"; else rm -rf -- "$WORK"; fi
}
trap cleanup EXIT
cd "$WORK"

say "keys, and images of $LAYERS x $LAYER_MIB MiB and 1 x $SINGLE_MIB MiB"
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out priv.pem 2>/dev/null
openssl pkey -in priv.pem -pubout -out pub.pem
python3 "$SCRIPT_DIR/make_oci_image.py" "$WORK/many" v1 $((LAYER_MIB << 20)) --layers "$LAYERS" >/dev/null
python3 "$SCRIPT_DIR/make_oci_image.py" "$WORK/single" v1 $((SINGLE_MIB << 20)) >/dev/null

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
PORT=$(free_port)
cat >registry.yml <<YAML
version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $WORK/storage
  delete:
    enabled: true
http:
  addr: 127.0.0.1:$PORT
YAML
/usr/bin/docker-registry serve registry.yml >registry.log 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do
    python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' "$PORT" 2>/dev/null && break
    sleep 0.1
done
# The proxy reads its stdin until the end: a fifo held open here keeps it alive until the script ends.
mkfifo proxy.in
exec 3<>proxy.in
python3 "$SCRIPT_DIR/latency_proxy.py" "$PORT" "$DELAY_MS" ${BENCH_TIMELINE:+"$BENCH_TIMELINE"} <proxy.in >proxy.port &
PIDS+=($!)
for _ in $(seq 100); do [[ -s proxy.port ]] && break; sleep 0.1; done
PROXY=$(head -1 proxy.port)
[[ -n $PROXY ]] || die "the latency proxy did not start"
LOOPBACK=127.0.0.1:$PORT
DELAYED=127.0.0.1:$PROXY

# The sources, in the registry (untimed), encrypted too for the pull direction.
for image in many single; do
    skopeo --insecure-policy copy -q --dest-tls-verify=false "oci:$WORK/$image:v1" "docker://$LOOPBACK/$image:v1"
    "$BIN" -q image encrypt --recipient jwe:pub.pem --dest-tls-verify=false "oci:$WORK/$image:v1" \
        "docker://$LOOPBACK/$image-enc:v1"
done

# timed CASE TOOL COMMAND...: one run under /usr/bin/time, "CASE TOOL wall_s peak_kib" appended to results.
timed() {
    local case=$1 tool=$2
    shift 2
    /usr/bin/time -f '%e %M' -o "$WORK/time.out" "$@" >/dev/null 2>"$WORK/err.out" \
        || { cat "$WORK/err.out" >&2; die "$case $tool failed"; }
    echo "$case $tool $(cat "$WORK/time.out")" >>"$WORK/results"
    printf '  %-22s %-12s %6.2f s %8d KiB\n' "$case" "$tool" $(cat "$WORK/time.out")
}

N=0
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
for run in $(seq "$RUNS"); do
    for net in delayed loopback; do
        host=$LOOPBACK
        [[ $net == delayed ]] && host=$DELAYED
        for image in many single; do
            case_name() { echo "$1-$image-$net"; }
            for tool in cryptadm cryptadm-j1 cryptadm-j8 skopeo; do
                N=$((N + 1))
                out="$WORK/out-$N"
                case $tool in
                    cryptadm) crypt=("$BIN" -q image) jobs=() ;;
                    cryptadm-j1) crypt=("$BIN" -q image) jobs=(--jobs 1) ;;
                    cryptadm-j8) crypt=("$BIN" -q image) jobs=(--jobs 8) ;;
                esac
                if [[ $tool == skopeo ]]; then
                    timed "$(case_name push)" skopeo skopeo --insecure-policy copy -q --dest-tls-verify=false \
                        --encryption-key jwe:pub.pem "oci:$WORK/$image:v1" "docker://$host/push-$N:v1"
                    timed "$(case_name pull)" skopeo skopeo --insecure-policy copy -q --src-tls-verify=false \
                        --decryption-key priv.pem "docker://$host/$image-enc:v1" "oci:$out:v1"
                    timed "$(case_name r2r)" skopeo skopeo --insecure-policy copy -q --src-tls-verify=false \
                        --dest-tls-verify=false --encryption-key jwe:pub.pem "docker://$host/$image:v1" \
                        "docker://$host/r2r-$N:v1"
                else
                    timed "$(case_name push)" "$tool" "${crypt[@]}" encrypt "${jobs[@]}" --recipient jwe:pub.pem \
                        --dest-tls-verify=false "oci:$WORK/$image:v1" "docker://$host/push-$N:v1"
                    timed "$(case_name pull)" "$tool" "${crypt[@]}" decrypt "${jobs[@]}" --key priv.pem \
                        --src-tls-verify=false "docker://$host/$image-enc:v1" "oci:$out:v1"
                    timed "$(case_name r2r)" "$tool" "${crypt[@]}" encrypt "${jobs[@]}" --recipient jwe:pub.pem \
                        --src-tls-verify=false --dest-tls-verify=false "docker://$host/$image:v1" \
                        "docker://$host/r2r-$N:v1"
                fi
                # The pulled image must be the source's.
                cmp -s <(python3 -c 'import json,sys; i=json.load(open(sys.argv[1]+"/index.json")); m=json.load(open(sys.argv[1]+"/blobs/sha256/"+i["manifests"][0]["digest"][7:])); print([l["digest"] for l in m["layers"]])' "$out") \
                    <(python3 -c 'import json,sys; i=json.load(open(sys.argv[1]+"/index.json")); m=json.load(open(sys.argv[1]+"/blobs/sha256/"+i["manifests"][0]["digest"][7:])); print([l["digest"] for l in m["layers"]])' "$WORK/$image") \
                    || die "$tool pulled layers that are not the source's"
                rm -rf "$out"
            done
        done
    done
done

say "peak RSS of cryptadm, push and pull (ranged at --jobs 8) of the many-layer image on loopback"
for jobs in 1 8; do
    N=$((N + 1))
    timed "rss-push-jobs-$jobs" cryptadm "$BIN" -q image encrypt --jobs "$jobs" --recipient jwe:pub.pem \
        --dest-tls-verify=false "oci:$WORK/many:v1" "docker://$LOOPBACK/rss-$N:v1"
    timed "rss-pull-jobs-$jobs" cryptadm "$BIN" -q image decrypt --jobs "$jobs" --key priv.pem \
        --src-tls-verify=false "docker://$LOOPBACK/many-enc:v1" "oci:$WORK/rss-out-$N:v1"
    rm -rf "$WORK/rss-out-$N"
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$WORK/results" "$LAYERS" "$LAYER_MIB" "$SINGLE_MIB" "$DELAY_MS" "$LOAD_BEFORE" "$LOAD_AFTER" \
    "$(skopeo --version | awk '{print $3}')" <<'PY'
import collections, sys
path, layers, layer_mib, single_mib, delay, load_before, load_after, skopeo = sys.argv[1:]
best = collections.defaultdict(lambda: float("inf"))
rss = {}
for line in open(path):
    case, tool, wall, peak = line.split()
    best[case, tool] = min(best[case, tool], float(wall))
    rss[case, tool] = max(rss.get((case, tool), 0), int(peak))
print(f"\n== {layers} x {layer_mib} MiB ('many') and 1 x {single_mib} MiB ('single'); 'delayed': {delay} ms per "
      f"forwarded read; skopeo {skopeo}; best of the runs")
print(f"  {'case':24} {'cryptadm':>9} {'--jobs 1':>9} {'--jobs 8':>9} {'skopeo':>9} {'skopeo/ours':>12} "
      f"{'jobs1/ours':>11}")
cases = sorted({c for c, _ in best if not c.startswith("rss")}, key=lambda c: (c.split("-")[2], c.split("-")[1], c))
for case in cases:
    ours, one, eight, theirs = (best[case, "cryptadm"], best[case, "cryptadm-j1"], best[case, "cryptadm-j8"],
                                best[case, "skopeo"])
    goal = ""
    if case.endswith("many-delayed"):
        goal = "  goal >= 1.5x skopeo: " + ("met" if theirs / ours >= 1.5 else "NOT met")
    else:
        goal = "  goal no slower than --jobs 1: " + ("met" if one / ours >= 0.95 else "NOT met")
    print(f"  {case:24} {ours:8.2f}s {one:8.2f}s {eight:8.2f}s {theirs:8.2f}s {theirs / ours:11.2f}x "
          f"{one / ours:10.2f}x{goal}")
for way in ("push", "pull"):
    for jobs in (1, 8):
        print(f"  peak RSS, {way} --jobs {jobs}: {rss.get((f'rss-{way}-jobs-{jobs}', 'cryptadm'), 0) / 1024:.1f} MiB")
print(f"  load average before {load_before}, after {load_after}; 2 CPUs shared with the registry and the proxy")
PY
