#!/usr/bin/env bash
# A Debian bookworm cloud root filesystem for the first-boot tests (tests/cli/guest_first_boot.rs), built with
# mmdebstrap: systemd, udev, cloud-init, cryptsetup and the `cloud` kernel, as an ext4 image (root=/dev/vda) with
# the kernel and its initramfs beside it. Cached like the harness's initramfs: $CRYPTADM_GUEST_CACHE (default
# /var/cache/cryptadm-guest)/cloud-root-<hash of this script>/{root.img,vmlinuz,initrd.img}, built under a lock
# into a temporary directory and renamed into place. Prints the directory.
#
# The image holds one piece of test scaffolding: cryptadm-test-report.service, which runs after cloud-final,
# waits for cloud-init, prints what the test asserts (`cloud-init status --long`, the plaintext's mode, owner
# and sha256, cloud-init's semaphores) between REPORT-BEGIN and REPORT-END on the serial console, and powers off.
# cryptadm itself and the node's passphrase are not in the cached image: the test writes them into its own copy
# (debugfs), as an image build and the node's provisioning would.
set -euo pipefail

CACHE_ROOT="${CRYPTADM_GUEST_CACHE:-/var/cache/cryptadm-guest}"
key="cloud-root-$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-12)"
dir="$CACHE_ROOT/$key"
done_() { [ -f "$dir/root.img" ] && [ -f "$dir/vmlinuz" ] && [ -f "$dir/initrd.img" ]; }
if done_; then
  printf '%s\n' "$dir"
  exit 0
fi
mkdir -p "$CACHE_ROOT"
exec 9>"$CACHE_ROOT/.lock-cloud-root"
flock 9
if done_; then
  printf '%s\n' "$dir"
  exit 0
fi
tmp="$(mktemp -d "$CACHE_ROOT/.build-cloud.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

report='#!/bin/sh
# Test scaffolding (tests/guest/cloud-root.sh): what the first-boot test asserts, on the serial console.
exec >/dev/ttyS0 2>&1
cloud-init status --wait >/dev/null 2>&1
echo REPORT-BEGIN
cloud-init status --long 2>&1 | sed "s/^/status|/"
for f in /run/machineadm /run/machineadm/machineadm_config.yaml /run/machineadm/machine_config.yaml; do
  if [ -e "$f" ]; then echo "stat|$f|$(stat -c "%a %U:%G" "$f")"; else echo "stat|$f|missing"; fi
done
if [ -f /run/machineadm/machine_config.yaml ]; then
  echo "sha256|$(sha256sum </run/machineadm/machine_config.yaml | cut -d" " -f1)"
fi
echo "runcmd_sem|$(stat -c %Y /var/lib/cloud/instance/sem/config_runcmd 2>/dev/null || echo missing)"
echo "write_files_sem|$(stat -c %Y /var/lib/cloud/instance/sem/config_write_files 2>/dev/null || echo missing)"
echo "instance|$(cat /var/lib/cloud/data/instance-id 2>/dev/null)"
echo "boots|$(ls /var/lib/cloud/instances 2>/dev/null | wc -l)"
grep -h -i "cryptadm\|Traceback\|runcmd\|scripts-user" /var/log/cloud-init.log /var/log/cloud-init-output.log 2>/dev/null |
  tail -n 30 | sed "s/^/log|/"
echo "uptime|$(cut -d" " -f1 /proc/uptime)"
echo REPORT-END
systemctl poweroff --no-block
'
unit='[Unit]
Description=cryptadm guest test: report cloud-init'"'"'s result on the serial console, then power off
DefaultDependencies=no
After=cloud-final.service

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/cryptadm-test-report
'

printf '%s' "$report" >"$tmp/report"
printf '%s' "$unit" >"$tmp/report.service"
nice mmdebstrap --quiet --variant=minbase \
  --include=systemd-sysv,udev,cloud-init,cryptsetup,linux-image-cloud-amd64,initramfs-tools,e2fsprogs,util-linux,procps,kmod \
  --customize-hook='echo "/dev/vda / ext4 rw,errors=remount-ro 0 1" >"$1/etc/fstab"' \
  --customize-hook='echo cryptadm-guest >"$1/etc/hostname"' \
  --customize-hook='printf "datasource_list: [ NoCloud, None ]\n" >"$1/etc/cloud/cloud.cfg.d/90-cryptadm-test.cfg"' \
  --customize-hook='install -m 0755 "'"$tmp"'/report" "$1/usr/local/sbin/cryptadm-test-report"' \
  --customize-hook='install -m 0644 "'"$tmp"'/report.service" "$1/etc/systemd/system/cryptadm-test-report.service"' \
  --customize-hook='mkdir -p "$1/etc/systemd/system/cloud-final.service.wants" && ln -s ../cryptadm-test-report.service "$1/etc/systemd/system/cloud-final.service.wants/"' \
  --customize-hook='mkdir -p "$1/usr/local/bin" "$1/etc/machineadm" && chmod 0700 "$1/etc/machineadm"' \
  --customize-hook='cp "$1"/boot/vmlinuz-* "'"$tmp"'/vmlinuz" && cp "$1"/boot/initrd.img-* "'"$tmp"'/initrd.img"' \
  bookworm "$tmp/root" http://deb.debian.org/debian
truncate -s 2G "$tmp/root.img"
mkfs.ext4 -q -F -L cloudroot -d "$tmp/root" "$tmp/root.img"
rm -rf "$tmp/root"
trap - EXIT
rm -rf "$dir"
mv "$tmp" "$dir"
printf '%s\n' "$dir"
