#!/usr/bin/env bash
# What tests/cli/tpm2.rs needs: a software TPM 2.0 on loopback (swtpm, swtpm-tools), tpm2-tools as the oracle of
# the TPM client (tpm2_pcrread, tpm2_pcrextend, tpm2_getrandom), clevis's tpm2 pin and clevis-luks (`clevis
# encrypt|decrypt tpm2`, `clevis luks bind|pass`), and systemd-cryptenroll (in the systemd package) for the
# systemd-tpm2 token. Idempotent.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
need=()
for tool in swtpm:swtpm swtpm_setup:swtpm-tools tpm2_pcrread:tpm2-tools clevis:clevis \
  clevis-encrypt-tpm2:clevis-tpm2 clevis-luks-bind:clevis-luks systemd-cryptenroll:systemd; do
  command -v "${tool%%:*}" >/dev/null || need+=("${tool#*:}")
done
if [ "${#need[@]}" -gt 0 ]; then
  apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
dpkg-query -W -f='${Package} ${Version}\n' swtpm swtpm-tools tpm2-tools clevis clevis-tpm2 clevis-luks systemd
