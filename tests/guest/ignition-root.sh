#!/usr/bin/env bash
# A Debian bookworm root for Ignition's real first boot (tests/cli/zz_guests/guest_ignition.rs), built with mmdebstrap:
# systemd, udev, the `cloud` kernel and an initramfs made by Debian's dracut (059) with Debian's `ignition` (2.14)
# dracut module in it, as an ext4 image (root=/dev/vda) with the kernel and that initramfs beside it. dracut and
# ignition are installed only inside this root, never on the host. Cached like cloud-root.sh:
# $CRYPTADM_GUEST_CACHE (default /var/cache/cryptadm-guest)/ignition-root-<hash of this script and
# root-common.sh>/{root.img,vmlinuz,initrd.img}, built under a lock (root-common.sh). Prints the directory.
#
# What the dracut module needs from the root: it depends on dracut's `qemu` (virtio and qemu_fw_cfg, which the
# `qemu` platform reads the config from), `systemd`, `url-lib` (curl) and `network` modules; `network` picks
# systemd-networkd (ip, networkctl; dbus) and comes with dracut-network.
# Debian builds Ignition with SELinux relabeling on: its files stage ends by reading SELINUXTYPE from the root's
# /etc/selinux/config and running `setfiles` with that policy's file_contexts, and fails without them ("failed
# to handle relabeling: failed to open /etc/selinux/config"). So the root has policycoreutils (the module copies
# setfiles into the initramfs when it is there), a config with SELINUX=disabled and an empty file_contexts.
# Ignition enables a unit (`enabled: true`) by writing /etc/systemd/system-preset/20-ignition.preset; systemd
# applies presets only on its first boot, which it recognises by /etc/machine-id missing or "uninitialized" (not
# empty, mmdebstrap's default: that is a booted image with a read-only machine-id). So the image says
# "uninitialized", as an image that has never booted does. The first boot's presets also enable
# systemd-networkd.service and with it (its `Also=`) systemd-networkd-wait-online.service, which waits 2 minutes
# for a network this guest does not have and delays network-online.target (which cryptadm's unit is ordered
# after): the image masks it.
# ca-certificates: an Ignition distribution ships the system's CA bundle, which an https key manager needs (without
# one, cryptadm's key-manager client once refused to start even for an http:// server: tests/cli/openbao.rs).
# cryptadm, the node's passphrase and the test's report unit are not in the cached image: the test writes them
# into its own copy (debugfs).
set -euo pipefail

# shellcheck source=tests/guest/root-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/root-common.sh"

# dracut is configured before the kernel is installed (last, in a hook of its own), so that the kernel's postinst
# builds the one initramfs, with the ignition module, and no second dracut run is needed (a build well under 3
# minutes). The build fails if the initramfs lacks Ignition or setfiles.
build() {
  local tmp="$1"
  nice mmdebstrap --quiet --variant=minbase \
    --include=systemd-sysv,udev,dbus,iproute2,curl,ca-certificates,dracut,dracut-network,ignition,policycoreutils,e2fsprogs,util-linux,procps,kmod \
    --customize-hook='echo "/dev/vda / ext4 rw,errors=remount-ro 0 1" >"$1/etc/fstab"' \
    --customize-hook='echo cryptadm-ignition >"$1/etc/hostname"' \
    --customize-hook='mkdir -p "$1/usr/local/bin" "$1/usr/local/sbin"' \
    --customize-hook='ln -s /dev/null "$1/etc/systemd/system/systemd-networkd-wait-online.service"' \
    --customize-hook='mkdir -p "$1/etc/selinux/targeted/contexts/files" && printf "SELINUX=disabled\nSELINUXTYPE=targeted\n" >"$1/etc/selinux/config" && : >"$1/etc/selinux/targeted/contexts/files/file_contexts"' \
    --customize-hook='printf "hostonly=\"no\"\nadd_dracutmodules+=\" ignition \"\ncompress=\"gzip\"\n" >"$1/etc/dracut.conf.d/90-cryptadm-ignition.conf"' \
    --customize-hook='chroot "$1" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends linux-image-cloud-amd64 >/dev/null' \
    --customize-hook='chroot "$1" sh -c "lsinitrd /boot/initrd.img-* | grep -q \" usr/bin/ignition\$\" && lsinitrd /boot/initrd.img-* | grep -q \"/setfiles\$\""' \
    --customize-hook='cp "$1"/boot/vmlinuz-* "'"$tmp"'/vmlinuz" && cp "$1"/boot/initrd.img-* "'"$tmp"'/initrd.img"' \
    bookworm "$tmp/root" http://deb.debian.org/debian
  # after mmdebstrap, whose cleanup empties /etc/machine-id
  echo uninitialized >"$tmp/root/etc/machine-id"
}

cached_root ignition-root root build
