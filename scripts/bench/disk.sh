#!/usr/bin/env bash
# Benchmark of `cryptadm disk luks-format --from` (streaming a raw image into a LUKS image) against
# `qemu-img convert -O luks`, and of an argon2id keyslot unlock against cryptsetup, in one run, side by side.
#
# One run: builds cryptadm (release) unless BENCH_BIN is given, writes ONE raw image of BENCH_MIB MiB of random
# data, then
#   1. --from: cryptadm (LUKS1, pbkdf2, 512-byte sectors, aes-xts-plain64 512-bit key: the format qemu-img writes)
#      and qemu-img convert -O luks with the same --iter-time / iter-time (the same KDF cost), best of BENCH_RUNS;
#      also cryptadm's LUKS2 default layout (4096-byte sectors) for context. Before timing, qemu-img decrypts
#      cryptadm's LUKS1 output and cryptadm decrypts qemu-img's: both must equal the raw image, or the script fails.
#   2. argon2id: a cryptsetup-made LUKS2 image with forced costs (t, m, p below); `cryptsetup open
#      --test-passphrase` vs `cryptadm disk decrypt` of its 1 MiB payload (the unlock dominates), best of
#      BENCH_RUNS; and `cryptsetup luksFormat` vs `cryptadm disk luks-format` with the same forced parameters.
#   3. peak RSS (/usr/bin/time -f %M) of every timed command.
# The ratios and the goals (--from >= 8x qemu-img's throughput; argon2id time <= 1.0x cryptsetup's) are printed
# in a final table. Missed goals are reported, not fatal. The XTS core vs `openssl speed` is measured by the
# crypto benchmark of the XTS work (scripts/bench/xts.sh, when present).
#
# Environment:
#   BENCH_MIB=1024          raw image size
#   BENCH_RUNS=3            timed runs of each command (the best is reported)
#   BENCH_ITER_TIME=100     PBKDF2 iter-time (ms) for both --from tools
#   BENCH_ARGON_T=4 BENCH_ARGON_M=262144 BENCH_ARGON_P=2     forced argon2id costs (KiB for memory)
#   BENCH_BIN=PATH          use this cryptadm binary
#   TMPDIR                  where the images go: needs about 4 x BENCH_MIB
set -euo pipefail

SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd -- "$SCRIPT_DIR/../.." && pwd)
MIB=${BENCH_MIB:-1024}
RUNS=${BENCH_RUNS:-3}
ITER=${BENCH_ITER_TIME:-100}
AT=${BENCH_ARGON_T:-4}
AM=${BENCH_ARGON_M:-262144}
AP=${BENCH_ARGON_P:-2}

for tool in qemu-img cryptsetup /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "missing: $tool" >&2; exit 1; }
done
if [[ -n ${BENCH_BIN:-} ]]; then
    BIN=$BENCH_BIN
else
    (cd "$REPO_ROOT" && cargo build --release --quiet --bin cryptadm)
    BIN="$REPO_ROOT/target/release/cryptadm"
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/cryptadm-disk-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
RAW="$WORK/raw.img"
PASS="$WORK/pass.txt"
printf 'benchmark passphrase' > "$PASS"
head -c "$((MIB << 20))" /dev/urandom > "$RAW"
echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); raw image $MIB MiB; cryptadm $("$BIN" --version)"

# time_best NAME CMD...: runs CMD BENCH_RUNS times (removing $OUT first), records the best wall time and peak RSS.
declare -A BEST RSS CPU
time_best() {
    local name=$1; shift
    local best="" rss=0 cpu=""
    for _ in $(seq "$RUNS"); do
        rm -f "$OUT"
        local start end peak
        start=$(date +%s.%N)
        /usr/bin/time -f '%M %U %S' -o "$WORK/rss" "$@" >/dev/null 2>"$WORK/err" || { cat "$WORK/err" >&2; exit 1; }
        end=$(date +%s.%N)
        read -r peak user sys < <(tail -1 "$WORK/rss")
        local c; c=$(echo "$user + $sys" | bc -l)
        if [[ -z $cpu ]] || (( $(echo "$c < $cpu" | bc -l) )); then cpu=$c; fi
        local t; t=$(echo "$end - $start" | bc -l)
        if [[ -z $best ]] || (( $(echo "$t < $best" | bc -l) )); then best=$t; fi
        (( peak > rss )) && rss=$peak
    done
    BEST[$name]=$best
    RSS[$name]=$rss
    CPU[$name]=$cpu
    printf '  %-34s best %7.3f s   CPU (user+sys) %7.2f s   peak RSS %7d KiB\n' "$name" "$best" "$cpu" "$rss"
}

secret="secret,id=s0,file=$PASS"

echo "1. correctness (untimed)"
"$BIN" -q disk luks-format --type luks1 --pbkdf pbkdf2 --iter-time "$ITER" --key-file "$PASS" --from "$RAW" "$WORK/c.img"
qemu-img convert --object "$secret" --image-opts "driver=luks,key-secret=s0,file.filename=$WORK/c.img" -O raw "$WORK/back.raw"
cmp "$RAW" "$WORK/back.raw"
echo "  qemu-img decrypts cryptadm's LUKS1 image to the raw image"
qemu-img convert -f raw -O luks --object "$secret" -o "key-secret=s0,iter-time=$ITER" "$RAW" "$WORK/q.img"
"$BIN" -q disk decrypt --key-file "$PASS" "$WORK/q.img" --out "$WORK/back.raw"
cmp "$RAW" "$WORK/back.raw"
echo "  cryptadm decrypts qemu-img's LUKS1 image to the raw image"
rm -f "$WORK/back.raw" "$WORK/q.img" "$WORK/c.img"

echo "2. --from $MIB MiB (iter-time $ITER ms for both)"
OUT="$WORK/q.img"
time_best "qemu-img convert -O luks" qemu-img convert -f raw -O luks --object "$secret" -o "key-secret=s0,iter-time=$ITER" "$RAW" "$OUT"
OUT="$WORK/c.img"
time_best "cryptadm --from (LUKS1, 512 B)" "$BIN" -q disk luks-format --type luks1 --pbkdf pbkdf2 --iter-time "$ITER" --key-file "$PASS" --from "$RAW" "$OUT"
time_best "cryptadm --from (LUKS2, 4096 B)" "$BIN" -q disk luks-format --pbkdf pbkdf2 --iter-time "$ITER" --key-file "$PASS" --from "$RAW" "$OUT"
OUT="$WORK/dec.raw"
time_best "cryptadm disk decrypt (LUKS2)" "$BIN" -q disk decrypt --key-file "$PASS" "$WORK/c.img" --out "$OUT"
rm -f "$WORK/c.img" "$WORK/dec.raw" "$WORK/q.img"

echo "3. argon2id t=$AT m=$AM KiB p=$AP"
ARGS=(--pbkdf argon2id --pbkdf-force-iterations "$AT" --pbkdf-memory "$AM" --pbkdf-parallel "$AP")
OUT="$WORK/cs.img"
time_best "cryptsetup luksFormat" bash -c "truncate -s 17M '$OUT' && cryptsetup luksFormat -q --type luks2 ${ARGS[*]} --key-file '$PASS' '$OUT'"
OUT="$WORK/ca.img"
time_best "cryptadm luks-format" "$BIN" -q disk luks-format "${ARGS[@]}" --key-file "$PASS" --size 1M "$OUT"
OUT="$WORK/none"
truncate -s 17M "$WORK/u.img"
cryptsetup luksFormat -q --type luks2 "${ARGS[@]}" --key-file "$PASS" "$WORK/u.img"
time_best "cryptsetup open --test-passphrase" cryptsetup open --test-passphrase --key-file "$PASS" "$WORK/u.img"
time_best "cryptadm disk decrypt (unlock)" "$BIN" -q disk decrypt --key-file "$PASS" "$WORK/u.img" --out "$OUT"

ratio() { echo "scale=2; $1 / $2" | bc -l; }
tp() { echo "scale=0; $MIB / $1" | bc -l; }
echo
echo "| measure | cryptadm | reference | ratio | goal |"
echo "| --- | --- | --- | --- | --- |"
c=${BEST["cryptadm --from (LUKS1, 512 B)"]}; q=${BEST["qemu-img convert -O luks"]}
echo "| --from $MIB MiB, LUKS1 (MiB/s) | $(tp "$c") | qemu-img $(tp "$q") | $(ratio "$q" "$c")x | >= 8x |"
cc=${CPU["cryptadm --from (LUKS1, 512 B)"]}; qc=${CPU["qemu-img convert -O luks"]}
echo "| --from $MIB MiB, LUKS1, CPU seconds (user+sys) | $cc | qemu-img $qc | $(ratio "$qc" "$cc")x less CPU | |"
c2=${BEST["cryptadm --from (LUKS2, 4096 B)"]}
echo "| --from $MIB MiB, LUKS2 4 KiB sectors (MiB/s) | $(tp "$c2") | qemu-img $(tp "$q") | $(ratio "$q" "$c2")x | |"
d=${BEST["cryptadm disk decrypt (LUKS2)"]}
echo "| disk decrypt $MIB MiB (MiB/s) | $(tp "$d") | | | |"
a=${BEST["cryptadm disk decrypt (unlock)"]}; b=${BEST["cryptsetup open --test-passphrase"]}
echo "| argon2id unlock (s) | $a | cryptsetup $b | $(ratio "$a" "$b")x time | <= 1.0x |"
a=${BEST["cryptadm luks-format"]}; b=${BEST["cryptsetup luksFormat"]}
echo "| argon2id luks-format (s) | $a | cryptsetup $b | $(ratio "$a" "$b")x time | <= 1.0x |"
echo "| peak RSS --from (KiB) | ${RSS["cryptadm --from (LUKS1, 512 B)"]} | qemu-img ${RSS["qemu-img convert -O luks"]} | | flat |"
echo "| peak RSS argon2id unlock (KiB) | ${RSS["cryptadm disk decrypt (unlock)"]} | cryptsetup ${RSS["cryptsetup open --test-passphrase"]} | | |"
