#!/usr/bin/env bash
# Benchmark of cryptadm's AES-256-XTS (aes-xts-plain64, crates/bulk/src/xts.rs) against OpenSSL's, side by side:
# 4096-byte data units, 1 and 2 threads, versus `openssl speed -evp aes-256-xts -bytes 4096` (1 process and
# `-multi 2`). Prints MB/s, the ratio and peak RSS.
#
# This is a benchmark, not a test: it fails only when something cannot run. Goals that are missed are reported.
# Correctness is proven by the tests (IEEE 1619 vectors, Python cryptography cross-checks), not here.
#
# Two clocks, because shared build machines are busy:
#   wall  bytes per elapsed second (openssl speed -elapsed; -multi 2 for two cores): what an idle machine
#         gives; on a busy one, both sides lose whatever the other processes take.
#   cpu   bytes per CPU second of the process (openssl speed's default, user time): independent of other load,
#         the fairer comparison of the code itself on a shared machine.
#
# Usage: scripts/bench/xts.sh
# Environment:
#   BENCH_SECONDS=3      duration of every measurement
#   BENCH_UNIT=4096      data unit size (512..4096)
#   BENCH_BUFFER_MIB=16  size of the buffer cryptadm encrypts over and over (openssl uses one 4 KiB block)

set -euo pipefail

SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd -- "$SCRIPT_DIR/../.." && pwd)
SECONDS_EACH=${BENCH_SECONDS:-3}
UNIT=${BENCH_UNIT:-4096}
BUFFER_MIB=${BENCH_BUFFER_MIB:-16}
RATIO_GOAL=0.50 # cryptadm >= 50 % of OpenSSL

[[ $SECONDS_EACH =~ ^[0-9]+$ && $SECONDS_EACH -ge 1 ]] || { echo "bench: BENCH_SECONDS must be >= 1" >&2; exit 2; }
[[ $UNIT =~ ^(512|1024|2048|4096)$ ]] || { echo "bench: BENCH_UNIT must be 512, 1024, 2048 or 4096" >&2; exit 2; }
[[ $BUFFER_MIB =~ ^[0-9]+$ && $BUFFER_MIB -ge 1 ]] || { echo "bench: BENCH_BUFFER_MIB must be >= 1" >&2; exit 2; }

say() { printf '\n== %s\n' "$*"; }
die() { printf 'bench: FAILED: %s\n' "$*" >&2; exit 1; }
command -v openssl >/dev/null || die "openssl is not installed"
[[ -x /usr/bin/time ]] || die "/usr/bin/time (GNU time) is needed for peak RSS"

say "building crypto_bench (release)"
(cd "$REPO_ROOT" && cargo build --release --locked --example crypto_bench)
BENCH="${CARGO_TARGET_DIR:-$REPO_ROOT/target}/release/examples/crypto_bench"
[[ -x $BENCH ]] || die "no binary at $BENCH"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/cryptadm-bench-xts.XXXXXX")
trap 'rm -rf -- "$WORK"' EXIT
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")

# ours THREADS -> "wall_mb_s cpu_mb_s rss_kib"
ours() {
    local line
    line=$(/usr/bin/time -f 'rss_kib=%M' -o "$WORK/time" "$BENCH" xts "$UNIT" "$1" "$SECONDS_EACH" "$BUFFER_MIB") \
        || die "crypto_bench failed"
    echo "  $line $(cat "$WORK/time")" >&2
    local wall cpu rss
    wall=$(sed -n 's/.* wall_mb_s=\([0-9]*\).*/\1/p' <<<"$line")
    cpu=$(sed -n 's/.* cpu_mb_s=\([0-9]*\).*/\1/p' <<<"$line")
    rss=$(sed -n 's/^rss_kib=\([0-9]*\)$/\1/p' "$WORK/time")
    echo "$wall $cpu $rss"
}

# openssl_speed PROCESSES ELAPSED(0|1) -> MB/s (the 'k' column is 1000 bytes/s; with -multi the sum of all)
openssl_speed() {
    local args=(speed -evp aes-256-xts -bytes "$UNIT" -seconds "$SECONDS_EACH")
    (($1 > 1)) && args+=(-multi "$1")
    (($2 == 1)) && args+=(-elapsed)
    /usr/bin/time -f 'rss_kib=%M' -o "$WORK/time" openssl "${args[@]}" >"$WORK/openssl" 2>/dev/null \
        || die "openssl speed failed"
    local k
    k=$(awk '/^(evp|aes-256-xts|AES-256-XTS)/ {v=$NF} END {print v}' "$WORK/openssl" | tr -d 'k')
    [[ -n $k ]] || die "cannot read openssl speed output: $(cat "$WORK/openssl")"
    echo "  openssl ${args[*]}: ${k}k $(cat "$WORK/time")" >&2
    awk -v k="$k" 'BEGIN {printf "%.0f", k / 1000}'
}

say "cryptadm XTS, ${UNIT}-byte units, ${BUFFER_MIB} MiB buffer, ${SECONDS_EACH} s each"
read -r OURS1_WALL OURS1_CPU OURS1_RSS < <(ours 1)
read -r OURS2_WALL OURS2_CPU OURS2_RSS < <(ours 2)

say "openssl speed -evp aes-256-xts -bytes $UNIT ($(openssl version))"
SSL1_CPU=$(openssl_speed 1 0)
SSL1_RSS=$(sed -n 's/^rss_kib=\([0-9]*\)$/\1/p' "$WORK/time")
SSL1_WALL=$(openssl_speed 1 1)
SSL2_WALL=$(openssl_speed 2 1)
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
verdict() { awk -v r="$1" -v g="$RATIO_GOAL" 'BEGIN {print (r >= g) ? "met" : "NOT met"}'; }
row() {
    local label=$1 ours=$2 ssl=$3 r
    r=$(ratio "$ours" "$ssl")
    printf '%-34s %10s %10s %8s   goal >= %s: %s\n' "$label" "$ours" "$ssl" "$r" "$RATIO_GOAL" "$(verdict "$r")"
}

echo
echo "=========================================================================================="
echo "AES-256-XTS, ${UNIT}-byte units: cryptadm (XtsPlain64) vs OpenSSL $(openssl version | cut -d' ' -f2)"
echo "=========================================================================================="
printf '%-34s %10s %10s %8s\n' "MB/s (10^6 bytes per second)" "cryptadm" "openssl" "ratio"
row "1 thread,  per CPU second" "$OURS1_CPU" "$SSL1_CPU"
row "1 thread,  wall clock" "$OURS1_WALL" "$SSL1_WALL"
row "2 threads, wall clock" "$OURS2_WALL" "$SSL2_WALL"
row "2 threads, per CPU second (*)" "$OURS2_CPU" "$SSL1_CPU"
echo "------------------------------------------------------------------------------------------"
echo "2 threads: cryptadm splits one buffer over 2 scoped threads; openssl runs 2 processes (-multi 2 -elapsed)."
echo "(*) efficiency with 2 threads (thread start-up and splitting included) against one OpenSSL process per CPU"
echo "    second; 'openssl speed -multi' has no meaningful per-CPU figure."
echo "peak RSS: cryptadm $((OURS1_RSS / 1024)) MiB (1 thread), $((OURS2_RSS / 1024)) MiB (2 threads;" \
    "the ${BUFFER_MIB} MiB buffer included); openssl speed $((SSL1_RSS / 1024)) MiB"
echo "load average before $LOAD_BEFORE, after $LOAD_AFTER; $(nproc) CPUs." \
    "On a busy machine trust the per-CPU-second rows; re-run before drawing conclusions."
