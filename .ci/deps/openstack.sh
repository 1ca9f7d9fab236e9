#!/usr/bin/env bash
# Keystone, Barbican and Glance (Debian 12, Zed) plus the independent clients, for tests/cli/openstack.rs.
# Idempotent and quiet. Nothing here may touch a qemu-* package (qemu-utils 10 comes from bookworm-backports):
# the simulated install is checked first. The daemons are not started here: the tests start their own on
# 127.0.0.1 (tests/interop/openstack/services.sh); postinst scripts cannot start them (no systemd).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
pkgs=(keystone barbican-api glance-api python3-openstackclient python3-barbicanclient python3-glanceclient python3-castellan
  uwsgi-core uwsgi-plugin-python3 sqlite3 curl)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if apt-get -s -o DPkg::Lock::Timeout=900 install --no-install-recommends "${missing[@]}" | grep -E '^(Inst|Remv) qemu'; then
  echo "openstack deps: installing ${missing[*]} would change a qemu package; refusing" >&2
  exit 1
fi
# Postinst scripts try to start daemons; refuse that for the duration of the install.
policy=/usr/sbin/policy-rc.d
created_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && created_policy=1
fi
apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
[ "$created_policy" = 1 ] && rm -f "$policy"
exit 0
