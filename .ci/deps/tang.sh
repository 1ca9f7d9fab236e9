#!/usr/bin/env bash
# What tests/cli/tang.rs (and the clevis cases of the disk tests) need: Debian's tang (tangd, tangd-keygen; run
# behind socat on 127.0.0.1, no systemd), clevis and clevis-luks as the oracles (`clevis encrypt|decrypt`,
# `clevis luks bind|pass`), jose (thumbprints), socat and curl. Idempotent.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
need=()
for tool in socat:socat curl:curl jose:jose clevis:clevis clevis-luks-bind:clevis-luks; do
  command -v "${tool%%:*}" >/dev/null || need+=("${tool#*:}")
done
[ -x /usr/libexec/tangd ] || need+=(tang)
if [ "${#need[@]}" -gt 0 ]; then
  apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
dpkg-query -W -f='${Package} ${Version}\n' tang clevis clevis-luks jose
