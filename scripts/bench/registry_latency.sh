#!/usr/bin/env bash
# Benchmark of registry → registry encryption at a distance (issues 26 and 44): cryptadm against skopeo and
# against the registry's own ingest time for the same bytes, in one run, straight on loopback and through a
# loopback proxy that holds each forwarded read for each of BENCH_DELAYS milliseconds (scripts/bench/latency_proxy.py:
# a registry tens of milliseconds away), for an image of BENCH_LAYERS small layers ("many") and one of a single
# larger layer ("single"). Cases (BENCH_CASES):
#   r2r   encrypt registry → registry                    (skopeo copy --encryption-key docker:// docker://)
#   push  encrypt a local layout into the registry      (skopeo copy --encryption-key  oci: docker://)
#   pull  decrypt from the registry into a local layout  (skopeo copy --decryption-key docker:// oci:)
# The registry is Debian's docker-registry on a free loopback port (plain HTTP), storage in a temporary directory.
# Every run writes a repository of its own (fresh keys: every layer is uploaded). The ingest floor of an image is
# what the registry itself needs to take its layers' bytes through the same proxy: one streaming upload by curl per
# layer (POST, one PATCH whose body is read from a pipe, PUT ?digest=), all layers at once, as a client that did
# no work at all would send them. It prints, per case and delay, the median wall time of each tool, skopeo/cryptadm
# (goal >= 1.5 for r2r through the proxy) and cryptadm/floor side by side, the peak RSS of cryptadm, and the load
# average before and after.
# This is a benchmark, not a test: it fails only when something cannot run or a result does not decrypt.
#
# Usage: scripts/bench/registry_latency.sh
#        BENCH_BIN=target/release/cryptadm BENCH_RUNS=1 BENCH_DELAYS="0 10" scripts/bench/registry_latency.sh
#
# Environment:
#   BENCH_LAYERS=8         layers of the many-layer image
#   BENCH_LAYER_MIB=4      random MiB per layer of the many-layer image
#   BENCH_SINGLE_MIB=16    random MiB of the single-layer image
#   BENCH_DELAYS="0 10 50" what the proxy holds each forwarded read for, in ms (0: straight to the registry)
#   BENCH_CASES=r2r        which of r2r, push, pull to time
#   BENCH_TOOLS="cryptadm skopeo"  add cryptadm-j1 / cryptadm-j8 for --jobs 1 / --jobs 8 columns
#   BENCH_RUNS=3           timed runs of each case (the median is reported, the best too)
#   BENCH_BIN=PATH         benchmark this cryptadm binary instead of building the work tree (release)
#   BENCH_KEEP=1           keep the temporary directory (printed)
#   BENCH_TIMELINE=FILE    the proxy writes when each request started and was answered there (latency_proxy.py)

set -euo pipefail

SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd -- "$SCRIPT_DIR/../.." && pwd)
LAYERS=${BENCH_LAYERS:-8}
LAYER_MIB=${BENCH_LAYER_MIB:-4}
SINGLE_MIB=${BENCH_SINGLE_MIB:-16}
DELAYS=${BENCH_DELAYS:-0 10 50}
CASES=${BENCH_CASES:-r2r}
TOOLS=${BENCH_TOOLS:-cryptadm skopeo}
RUNS=${BENCH_RUNS:-3}

say() { printf '\n== %s\n' "$*"; }
die() { printf 'bench: FAILED: %s\n' "$*" >&2; exit 1; }

for tool in skopeo openssl python3 curl /usr/bin/docker-registry /usr/bin/time; do
    command -v "$tool" >/dev/null || die "$tool is not installed (apt-get install -y skopeo openssl python3 curl docker-registry time)"
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
LOOPBACK=127.0.0.1:$PORT
# One proxy per delay. Each reads its stdin until the end: a fifo held open here keeps them alive until the end.
mkfifo proxy.in
exec 3<>proxy.in
declare -A HOSTS
for delay in $DELAYS; do
    [[ $delay =~ ^[0-9]+$ ]] || die "BENCH_DELAYS takes whole milliseconds, got '$delay'"
    if ((delay == 0)); then HOSTS[$delay]=$LOOPBACK; continue; fi
    python3 "$SCRIPT_DIR/latency_proxy.py" "$PORT" "$delay" ${BENCH_TIMELINE:+"$BENCH_TIMELINE"} <proxy.in \
        >"proxy-$delay.port" &
    PIDS+=($!)
    for _ in $(seq 100); do [[ -s proxy-$delay.port ]] && break; sleep 0.1; done
    [[ -s proxy-$delay.port ]] || die "the latency proxy did not start"
    HOSTS[$delay]=127.0.0.1:$(head -1 "proxy-$delay.port")
done

# The sources, in the registry (untimed), encrypted too for the pull direction.
for image in many single; do
    skopeo --insecure-policy copy -q --dest-tls-verify=false "oci:$WORK/$image:v1" "docker://$LOOPBACK/$image:v1"
    "$BIN" -q image encrypt --recipient jwe:pub.pem --dest-tls-verify=false "oci:$WORK/$image:v1" \
        "docker://$LOOPBACK/$image-enc:v1"
done
layers_of() {
    python3 -c 'import json,sys; i=json.load(open(sys.argv[1]+"/index.json")); m=json.load(open(sys.argv[1]+"/blobs/sha256/"+i["manifests"][0]["digest"][7:])); print(" ".join(l["digest"] for l in m["layers"]))' "$1"
}

# timed CASE TOOL COMMAND...: one run under /usr/bin/time, "CASE TOOL wall_s peak_kib" appended to results.
timed() {
    local case=$1 tool=$2
    shift 2
    /usr/bin/time -f '%e %M' -o "$WORK/time.out" "$@" >/dev/null 2>"$WORK/err.out" \
        || { cat "$WORK/err.out" >&2; die "$case $tool failed"; }
    echo "$case $tool $(cat "$WORK/time.out")" >>"$WORK/results"
    printf '  %-22s %-12s %6.2f s %8d KiB\n' "$case" "$tool" $(cat "$WORK/time.out")
}

# ingest HOST REPO DIGEST BLOB: one streaming upload of BLOB by curl (POST, one chunked PATCH read from a pipe,
# PUT ?digest=).
ingest() {
    local host=$1 repo=$2 digest=$3 blob=$4 location
    location=$(curl -sS -f -X POST -D - -o /dev/null "http://$host/v2/$repo/blobs/uploads/" \
        | awk 'tolower($1) == "location:" {print $2}' | tr -d '\r')
    [[ $location == http* ]] || location="http://$host$location"
    location=$(curl -sS -f -X PATCH -H 'Content-Type: application/octet-stream' -T - -D - -o /dev/null "$location" \
        <"$blob" | awk 'tolower($1) == "location:" {print $2}' | tr -d '\r')
    [[ $location == http* ]] || location="http://$host$location"
    [[ $location == *\?* ]] && location+="&" || location+="?"
    curl -sS -f -X PUT -o /dev/null "${location}digest=$digest"
}
# floor CASE HOST IMAGE N: every layer of IMAGE uploaded at once by curl; "CASE floor wall_s 0" to results.
floor() {
    local case=$1 host=$2 image=$3 n=$4 start pids=() digest
    start=$EPOCHREALTIME
    for digest in $(layers_of "$WORK/$image"); do
        ingest "$host" "floor-$n" "$digest" "$WORK/$image/blobs/sha256/${digest#sha256:}" &
        pids+=($!)
    done
    for pid in "${pids[@]}"; do wait "$pid" || die "curl could not upload a layer"; done
    echo "$case floor $(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN {print b - a}') 0" >>"$WORK/results"
    printf '  %-22s %-12s %6.2f s\n' "$case" floor "$(tail -1 "$WORK/results" | cut -d' ' -f3)"
}

N=0
LAST_R2R=
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
say "timing $RUNS runs of each (delays: $DELAYS ms; cases: $CASES; tools: $TOOLS and the ingest floor)"
for run in $(seq "$RUNS"); do
    for delay in $DELAYS; do
        host=${HOSTS[$delay]}
        for image in many single; do
            for way in $CASES; do
                case_name="$way-$image-${delay}ms"
                for tool in $TOOLS floor; do
                    N=$((N + 1))
                    out="$WORK/out-$N"
                    jobs=()
                    case $tool in
                        cryptadm-j1) jobs=(--jobs 1) ;;
                        cryptadm-j8) jobs=(--jobs 8) ;;
                    esac
                    case $tool-$way in
                        floor-*) floor "$case_name" "$host" "$image" "$N" ;;
                        skopeo-push) timed "$case_name" skopeo skopeo --insecure-policy copy -q --dest-tls-verify=false \
                            --encryption-key jwe:pub.pem "oci:$WORK/$image:v1" "docker://$host/push-$N:v1" ;;
                        skopeo-pull) timed "$case_name" skopeo skopeo --insecure-policy copy -q --src-tls-verify=false \
                            --decryption-key priv.pem "docker://$host/$image-enc:v1" "oci:$out:v1" ;;
                        skopeo-r2r) timed "$case_name" skopeo skopeo --insecure-policy copy -q --src-tls-verify=false \
                            --dest-tls-verify=false --encryption-key jwe:pub.pem "docker://$host/$image:v1" \
                            "docker://$host/r2r-$N:v1" ;;
                        *-push) timed "$case_name" "$tool" "$BIN" -q image encrypt "${jobs[@]}" --recipient jwe:pub.pem \
                            --dest-tls-verify=false "oci:$WORK/$image:v1" "docker://$host/push-$N:v1" ;;
                        *-pull) timed "$case_name" "$tool" "$BIN" -q image decrypt "${jobs[@]}" --key priv.pem \
                            --src-tls-verify=false "docker://$host/$image-enc:v1" "oci:$out:v1" ;;
                        *-r2r) [[ $image == many ]] && LAST_R2R=r2r-$N
                            timed "$case_name" "$tool" "$BIN" -q image encrypt "${jobs[@]}" --recipient jwe:pub.pem \
                            --src-tls-verify=false --dest-tls-verify=false "docker://$host/$image:v1" \
                            "docker://$host/r2r-$N:v1" ;;
                    esac
                    if [[ $way == pull && $tool != floor ]]; then
                        # The pulled image must be the source's.
                        [[ $(layers_of "$out") == "$(layers_of "$WORK/$image")" ]] \
                            || die "$tool pulled layers that are not the source's"
                        rm -rf "$out"
                    fi
                done
            done
        done
    done
done
# The last many-layer image cryptadm wrote registry → registry decrypts, with skopeo, to the source's layers.
if [[ -n $LAST_R2R ]]; then
    skopeo --insecure-policy copy -q --src-tls-verify=false --decryption-key priv.pem \
        "docker://$LOOPBACK/$LAST_R2R:v1" "oci:$WORK/check:v1" || die "skopeo cannot decrypt $LAST_R2R"
    [[ $(layers_of "$WORK/check") == "$(layers_of "$WORK/many")" ]] || die "$LAST_R2R does not decrypt to the source"
    echo "ok: skopeo decrypts cryptadm's $LAST_R2R to the source's layers"
fi

say "peak RSS of cryptadm registry → registry on loopback: the many-layer image, and one layer of BENCH_RSS_MIB"
RSS_MIB=${BENCH_RSS_MIB:-1024}
python3 "$SCRIPT_DIR/make_oci_image.py" "$WORK/big" v1 $((RSS_MIB << 20)) >/dev/null
skopeo --insecure-policy copy -q --dest-tls-verify=false "oci:$WORK/big:v1" "docker://$LOOPBACK/big:v1"
rm -rf "$WORK/big"
for image in many big; do
    N=$((N + 1))
    timed "rss-r2r-$image" cryptadm "$BIN" -q image encrypt --recipient jwe:pub.pem --src-tls-verify=false \
        --dest-tls-verify=false "docker://$LOOPBACK/$image:v1" "docker://$LOOPBACK/rss-$N:v1"
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$WORK/results" "$LAYERS" "$LAYER_MIB" "$SINGLE_MIB" "$RSS_MIB" "$LOAD_BEFORE" "$LOAD_AFTER" \
    "$(skopeo --version | awk '{print $3}')" "$TOOLS" <<'PY'
import collections, statistics, sys
path, layers, layer_mib, single_mib, rss_mib, load_before, load_after, skopeo, tools = sys.argv[1:]
times = collections.defaultdict(list)
rss = {}
for line in open(path):
    case, tool, wall, peak = line.split()
    times[case, tool].append(float(wall))
    rss[case, tool] = max(rss.get((case, tool), 0), int(peak))
med = lambda case, tool: statistics.median(times[case, tool]) if times[case, tool] else float("nan")
tools = tools.split()
print(f"\n== {layers} x {layer_mib} MiB ('many') and 1 x {single_mib} MiB ('single'); N ms: the proxy holds every "
      f"forwarded read N ms; skopeo {skopeo}; medians of {max(len(v) for v in times.values())} runs")
head = "".join(f"{t:>13}" for t in tools)
print(f"  {'case':22}{head}{'floor':>9} {'skopeo/ours':>12} {'ours/floor':>11}  goals")
def order(case):
    way, image, delay = case.split("-")
    return (way, image, int(delay[:-2]))
for case in sorted({c for c, _ in times if not c.startswith("rss")}, key=order):
    ours, floor = med(case, "cryptadm"), med(case, "floor")
    cols = "".join(f"{med(case, t):12.2f}s" for t in tools)
    ratio = med(case, "skopeo") / ours
    goals = []
    if case.startswith("r2r") and not case.endswith("-0ms"):
        goals.append("skopeo/ours >= 1.5: " + ("met" if ratio >= 1.5 else "NOT met"))
    if case.startswith("r2r"):
        goals.append("ours/floor <= 1.3: " + ("met" if ours / floor <= 1.3 else "NOT met"))
    print(f"  {case:22}{cols}{floor:8.2f}s {ratio:11.2f}x {ours / floor:10.2f}x  {'; '.join(goals)}")
for image, label in (("many", f"{layers} x {layer_mib} MiB"), ("big", f"1 x {rss_mib} MiB")):
    peak = rss.get((f"rss-r2r-{image}", "cryptadm"), 0) / 1024
    print(f"  peak RSS, registry → registry, {label}: {peak:.1f} MiB (goal <= 64 MiB: "
          f"{'met' if peak <= 64 else 'NOT met'})")
print(f"  load average before {load_before}, after {load_after}; 2 CPUs shared with the registry and the proxies")
PY
