#!/usr/bin/env bash
# Benchmark of `cryptadm secret generate-k8s` against what it replaces: `kubectl create secret generic
# --from-file=… --dry-run=client -o yaml | kubectl label --local -f - … -o yaml`, on the same key files, in one
# run: mean time of each, the ratio, and peak RSS (/usr/bin/time -f %M). Both outputs are compared first (minus
# kubectl's creationTimestamp line), so the two do the same job.
#
# This is a benchmark, not a test: it fails only when something cannot run or the outputs differ.
#
# Usage: scripts/bench/secret.sh
# Environment:
#   CRYPTADM=target/release/cryptadm   the binary to measure (built with `cargo build --release` when missing)
#   BENCH_KEYS=100                     key files in the Secret (P-256 PKCS#8 PEM, ~240 bytes each)
#   BENCH_RUNS=20                      timed runs of each command

set -euo pipefail
REPO_ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)
CRYPTADM=${CRYPTADM:-$REPO_ROOT/target/release/cryptadm}
KEYS=${BENCH_KEYS:-100}
RUNS=${BENCH_RUNS:-20}
[[ $KEYS =~ ^[0-9]+$ && $RUNS =~ ^[0-9]+$ ]] || { echo "bench: BENCH_KEYS and BENCH_RUNS are whole numbers" >&2; exit 2; }
die() { printf 'bench: FAILED: %s\n' "$*" >&2; exit 1; }

[[ -x $CRYPTADM ]] || (cd "$REPO_ROOT" && cargo build --release --quiet)
command -v kubectl >/dev/null || die "kubectl is not installed"
command -v openssl >/dev/null || die "openssl is not installed"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
ours_args=() theirs_args=()
for ((i = 0; i < KEYS; i++)); do
    openssl ecparam -name prime256v1 -genkey -noout 2>/dev/null | openssl pkcs8 -topk8 -nocrypt -out "key$i.pem"
    ours_args+=(--key "key$i.pem")
    theirs_args+=(--from-file="key$i.pem")
done
labels=(app.kubernetes.io/component=image-decryption-keys app.kubernetes.io/managed-by=cryptadm)
cat >ours.sh <<EOF
"$CRYPTADM" secret generate-k8s bench -n bench ${ours_args[*]}
EOF
cat >theirs.sh <<EOF
kubectl create secret generic bench -n bench ${theirs_args[*]} --type=Opaque --dry-run=client -o yaml \
  | kubectl label --local -f - ${labels[*]} -o yaml
EOF

bash ours.sh >ours.yaml
bash theirs.sh | grep -vx '  creationTimestamp: null' >theirs.yaml
cmp -s ours.yaml theirs.yaml || die "the outputs differ (diff $work/ours.yaml $work/theirs.yaml)"

mean_ms() { # script → mean wall time in ms over RUNS runs
    local start end
    start=$(date +%s%N)
    for ((r = 0; r < RUNS; r++)); do bash "$1" >/dev/null; done
    end=$(date +%s%N)
    echo $(((end - start) / RUNS / 1000000))
}
bash ours.sh >/dev/null && bash theirs.sh >/dev/null # warm the page cache
ours_ms=$(mean_ms ours.sh)
theirs_ms=$(mean_ms theirs.sh)
ours_rss=$( { /usr/bin/time -f %M bash ours.sh >/dev/null; } 2>&1 | tail -1)
# kubectl's pipeline: the larger of its two processes (create, label).
theirs_rss=$(
    kubectl create secret generic bench -n bench "${theirs_args[@]}" --type=Opaque --dry-run=client -o yaml >created.yaml
    a=$( { /usr/bin/time -f %M kubectl create secret generic bench -n bench "${theirs_args[@]}" --type=Opaque \
        --dry-run=client -o yaml >/dev/null; } 2>&1 | tail -1)
    b=$( { /usr/bin/time -f %M kubectl label --local -f created.yaml "${labels[@]}" -o yaml >/dev/null; } 2>&1 | tail -1)
    echo $((a > b ? a : b))
)

printf '%-44s %10s %14s\n' "job ($KEYS keys, $RUNS runs)" "mean ms" "peak RSS KiB"
printf '%-44s %10s %14s\n' "cryptadm secret generate-k8s" "$ours_ms" "$ours_rss"
printf '%-44s %10s %14s\n' "kubectl create secret | kubectl label" "$theirs_ms" "$theirs_rss"
awk -v a="$ours_ms" -v b="$theirs_ms" 'BEGIN { if (b > 0) printf "ratio cryptadm/kubectl: %.2f\n", a / b }'
