#!/usr/bin/env bash
# Benchmark of a LUKS2 keyslot's Argon2 derivation: cryptadm (src/crypto/argon2.rs, the argon2 crate with lanes
# on threads) against cryptsetup (libargon2, one thread per lane) with the same forced parameters, side by side.
#
# cryptsetup side: `cryptsetup luksFormat --pbkdf argon2id --pbkdf-force-iterations T --pbkdf-memory M
# --pbkdf-parallel P` on a small image file with a key file (timed once), then `cryptsetup open
# --test-passphrase` timed BENCH_RUNS times: one keyslot derivation plus reading the header, no device-mapper.
# cryptadm side: `crypto_bench argon2 argon2id T M P` (examples/crypto_bench.rs) timed BENCH_RUNS times: process
# start plus one derivation with LUKS2's shape (32-byte salt, 64-byte key). Runs are interleaved so that changes
# in machine load hit both alike. Prints medians, the ratio cryptadm/cryptsetup (goal <= 1.0) and peak RSS.
#
# This is a benchmark, not a test: it fails only when something cannot run. Correctness is proven by the tests
# (RFC 9106 vectors, argon2-cffi cross-check).
#
# Usage: scripts/bench/argon2.sh
# Environment:
#   BENCH_ARGON2_TIME=4          iterations (cryptsetup's minimum and what its benchmark picks on small machines)
#   BENCH_ARGON2_MEMORY=524288   KiB (cryptsetup picked ~516 MiB on this project's 2-CPU builder, docs/formats.md)
#   BENCH_ARGON2_PARALLEL=2      lanes / threads (cryptsetup caps it at the online CPUs)
#   BENCH_RUNS=3                 timed runs of each side

set -euo pipefail

SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd -- "$SCRIPT_DIR/../.." && pwd)
T=${BENCH_ARGON2_TIME:-4}
M=${BENCH_ARGON2_MEMORY:-524288}
P=${BENCH_ARGON2_PARALLEL:-2}
RUNS=${BENCH_RUNS:-3}
RATIO_GOAL=1.0

for n in "$T" "$M" "$P" "$RUNS"; do
    [[ $n =~ ^[0-9]+$ && $n -ge 1 ]] || { echo "bench: settings must be positive whole numbers, got '$n'" >&2; exit 2; }
done

say() { printf '\n== %s\n' "$*"; }
die() { printf 'bench: FAILED: %s\n' "$*" >&2; exit 1; }
command -v cryptsetup >/dev/null || die "cryptsetup is not installed (apt-get install cryptsetup-bin)"
[[ -x /usr/bin/time ]] || die "/usr/bin/time (GNU time) is needed for timing and peak RSS"

say "building crypto_bench (release)"
(cd "$REPO_ROOT" && cargo build --release --locked --example crypto_bench)
BENCH="${CARGO_TARGET_DIR:-$REPO_ROOT/target}/release/examples/crypto_bench"
[[ -x $BENCH ]] || die "no binary at $BENCH"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/cryptadm-bench-argon2.XXXXXX")
trap 'rm -rf -- "$WORK"' EXIT
IMAGE="$WORK/luks2.img"
KEYFILE="$WORK/passphrase"
head -c 32 /dev/urandom >"$KEYFILE"
chmod 600 "$KEYFILE"
truncate -s 20M "$IMAGE"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")

# timed NAME COMMAND... : runs COMMAND under GNU time, appends "NAME wall user sys rss" to $WORK/runs
timed() {
    local name=$1
    shift
    /usr/bin/time -f '%e %U %S %M' -o "$WORK/time" "$@" >/dev/null 2>"$WORK/stderr" \
        || die "$name failed: $(cat "$WORK/stderr")"
    echo "$name $(cat "$WORK/time")" | tee -a "$WORK/runs"
}

say "cryptsetup $(cryptsetup --version | cut -d' ' -f2) luksFormat: argon2id t=$T m=$M KiB p=$P"
timed luksFormat cryptsetup luksFormat --batch-mode --type luks2 --pbkdf argon2id --pbkdf-force-iterations "$T" \
    --pbkdf-memory "$M" --pbkdf-parallel "$P" --key-file "$KEYFILE" "$IMAGE"
# The keyslot must carry exactly the forced parameters, or the comparison would be meaningless.
DUMP=$(cryptsetup luksDump "$IMAGE")
grep -Eq "Time cost: +$T\$" <<<"$DUMP" && grep -Eq "Memory: +$M\$" <<<"$DUMP" && grep -Eq "Threads: +$P\$" <<<"$DUMP" \
    || die "cryptsetup did not use the forced parameters:
$(grep -E 'PBKDF|Time cost|Memory|Threads' <<<"$DUMP")"

say "timing: $RUNS runs each, interleaved (wall s, user s, sys s, peak RSS KiB)"
for ((i = 0; i < RUNS; i++)); do
    timed cryptsetup cryptsetup open --test-passphrase --key-file "$KEYFILE" "$IMAGE"
    timed cryptadm "$BENCH" argon2 argon2id "$T" "$M" "$P"
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")

# median NAME FIELD(2=wall 3=user 4=sys 5=rss)
median() {
    awk -v n="$1" -v f="$2" '$1 == n {print $f}' "$WORK/runs" | sort -g | awk '{v[NR] = $1} END {
        if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
CS_WALL=$(median cryptsetup 2)
CS_CPU=$(awk -v u="$(median cryptsetup 3)" -v s="$(median cryptsetup 4)" 'BEGIN {printf "%.2f", u + s}')
CS_RSS=$(median cryptsetup 5)
RS_WALL=$(median cryptadm 2)
RS_CPU=$(awk -v u="$(median cryptadm 3)" -v s="$(median cryptadm 4)" 'BEGIN {printf "%.2f", u + s}')
RS_RSS=$(median cryptadm 5)
RATIO=$(awk -v a="$RS_WALL" -v b="$CS_WALL" 'BEGIN {printf "%.2f", a / b}')
CPU_RATIO=$(awk -v a="$RS_CPU" -v b="$CS_CPU" 'BEGIN {printf "%.2f", a / b}')
VERDICT=$(awk -v r="$RATIO" -v g="$RATIO_GOAL" 'BEGIN {print (r <= g) ? "met" : "NOT met"}')

echo
echo "=========================================================================================="
echo "LUKS2 keyslot Argon2id, t=$T m=$M KiB p=$P: cryptadm vs cryptsetup (libargon2), medians of $RUNS"
echo "=========================================================================================="
printf '%-30s %12s %14s %14s\n' "" "wall s" "user+sys s" "peak RSS MiB"
printf '%-30s %12s %14s %14s\n' "cryptsetup open --test-pass." "$CS_WALL" "$CS_CPU" "$((CS_RSS / 1024))"
printf '%-30s %12s %14s %14s\n' "cryptadm derive (+ start-up)" "$RS_WALL" "$RS_CPU" "$((RS_RSS / 1024))"
printf '%-30s %12s %14s\n' "ratio cryptadm/cryptsetup" "${RATIO}x" "${CPU_RATIO}x"
echo "goal: keyslot time <= ${RATIO_GOAL}x cryptsetup's (wall clock): $VERDICT"
echo "------------------------------------------------------------------------------------------"
echo "luksFormat (one derivation + header and keyslot writes): $(awk '$1 == "luksFormat" {print $2}' "$WORK/runs") s"
echo "load average before $LOAD_BEFORE, after $LOAD_AFTER; $(nproc) CPUs." \
    "Wall clock needs idle cores for the lanes' threads; re-run before drawing conclusions."
