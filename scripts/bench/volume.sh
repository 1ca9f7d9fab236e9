#!/usr/bin/env bash
# Benchmark of `cryptadm volume rotate` against the same job done with cryptsetup (what ceph-csi runs): add the new
# passphrase to a free keyslot with the old slot's KDF cost (`luksAddKey`), check it (`open --test-passphrase`),
# then kill the old slot (`luksKillSlot`). Both work on fresh copies of one LUKS2 image (argon2id, cryptsetup's
# default memory cost of 1 GiB capped to BENCH_MEMORY_KIB, 4 iterations, 1 thread, a second keyslot kept), in one
# run, alternating. Prints mean seconds per rotation, the ratio, and the peak RSS of each (`/usr/bin/time -f %M`).
#
# cryptadm runs more KDF passes than the cryptsetup sequence by design: it unlocks the old slot, derives the new
# slot's key, unlocks the new slot again from disk (verify), and tries the old key on the other slots to find every
# slot it opens; cryptsetup's sequence unlocks, derives, verifies and kills by slot number.
#
# Usage: scripts/bench/volume.sh     Environment: BENCH_RUNS=5, BENCH_MEMORY_KIB=262144
set -euo pipefail

SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd -- "$SCRIPT_DIR/../.." && pwd)
RUNS=${BENCH_RUNS:-5}
MEMORY_KIB=${BENCH_MEMORY_KIB:-262144}
[[ $RUNS =~ ^[0-9]+$ && $RUNS -ge 1 ]] || { echo "bench: BENCH_RUNS must be a positive number" >&2; exit 2; }
command -v cryptsetup >/dev/null || { echo "bench: cryptsetup is not installed (apt-get install cryptsetup-bin)" >&2; exit 1; }
[[ -x /usr/bin/time ]] || { echo "bench: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }

(cd "$REPO_ROOT" && cargo build --release --quiet)
CRYPTADM="$REPO_ROOT/target/release/cryptadm"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

printf 'old passphrase' >"$work/old.key"
printf 'recovery passphrase' >"$work/recovery.key"
printf 'new passphrase for cryptsetup' >"$work/new.key"
truncate -s 32M "$work/base.img"
kdf=(--pbkdf argon2id --pbkdf-force-iterations 4 --pbkdf-memory "$MEMORY_KIB" --pbkdf-parallel 1)
cryptsetup luksFormat --batch-mode --type luks2 "${kdf[@]}" --key-slot 1 --key-file "$work/old.key" "$work/base.img"
cryptsetup luksAddKey --batch-mode "${kdf[@]}" --key-file "$work/old.key" --key-slot 5 "$work/base.img" "$work/recovery.key"

seconds() { date +%s.%N; }
run_cryptadm() {
    cp --sparse=always "$work/base.img" "$work/a.img"
    rm -rf "$work/keys" && mkdir -p "$work/keys/bench" && cp "$work/old.key" "$work/keys/bench/current"
    CRYPTADM_RUN_DIR="$work/run" /usr/bin/time -f %M -o "$work/rss.cryptadm" \
        "$CRYPTADM" -q volume rotate --volume-id bench --volume-path "$work/a.img" --key-store "file://$work/keys"
}
# Untimed: `volume rotate` already unlocks the new slot from disk itself; this only proves the run did its job.
check_cryptadm() { cryptsetup open --test-passphrase --key-file "$work/keys/bench/current" "$work/a.img"; }
run_cryptsetup() {
    cp --sparse=always "$work/base.img" "$work/c.img"
    /usr/bin/time -f %M -o "$work/rss.cryptsetup" bash -c '
        cryptsetup luksAddKey --batch-mode "$@" --key-file "'"$work"'/old.key" "'"$work"'/c.img" "'"$work"'/new.key" &&
        cryptsetup open --test-passphrase --key-file "'"$work"'/new.key" "'"$work"'/c.img" &&
        cryptsetup luksKillSlot --batch-mode --key-file "'"$work"'/new.key" "'"$work"'/c.img" 1' _ "${kdf[@]}"
}

total_a=0 total_c=0 rss_a=0 rss_c=0
for ((i = 0; i < RUNS; i++)); do
    t0=$(seconds); run_cryptadm; t1=$(seconds); run_cryptsetup; t2=$(seconds); check_cryptadm
    total_a=$(echo "$total_a + $t1 - $t0" | bc -l); total_c=$(echo "$total_c + $t2 - $t1" | bc -l)
    rss_a=$(( $(cat "$work/rss.cryptadm") > rss_a ? $(cat "$work/rss.cryptadm") : rss_a ))
    rss_c=$(( $(cat "$work/rss.cryptsetup") > rss_c ? $(cat "$work/rss.cryptsetup") : rss_c ))
done
mean_a=$(echo "$total_a / $RUNS" | bc -l); mean_c=$(echo "$total_c / $RUNS" | bc -l)
printf '\nrotation of a LUKS2 argon2id keyslot (t=4, m=%s KiB, p=1), %s runs each, load %s\n' "$MEMORY_KIB" "$RUNS" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-12s %10s %14s\n' tool 'mean s' 'peak RSS KiB'
printf '%-12s %10.3f %14s\n' cryptadm "$mean_a" "$rss_a" cryptsetup "$mean_c" "$rss_c"
printf 'ratio cryptadm/cryptsetup: %.2f\n' "$(echo "$mean_a / $mean_c" | bc -l)"
