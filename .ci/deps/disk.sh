#!/usr/bin/env bash
# What tests/cli/disk_guard.rs needs beyond the base machine (idempotent, quiet): losetup and mount (mount),
# mkfs.ext4 (e2fsprogs), sfdisk (fdisk), partx and setpriv (util-linux), cryptsetup; qemu-img comes with the
# machine's qemu-utils 10 (never reinstall qemu from plain bookworm). The tests use real loop devices and mount
# an ext4 file system, so they run as root.
set -euo pipefail
need=()
command -v losetup >/dev/null || need+=(mount)
command -v sfdisk >/dev/null || need+=(fdisk)
command -v partx >/dev/null && command -v setpriv >/dev/null || need+=(util-linux)
command -v cryptsetup >/dev/null || need+=(cryptsetup-bin)
command -v mkfs.ext4 >/dev/null || need+=(e2fsprogs)
if ((${#need[@]})); then
    apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
# Loop devices: the module may not be loaded on a fresh VM.
[[ -e /dev/loop-control ]] || modprobe loop 2>/dev/null || true
