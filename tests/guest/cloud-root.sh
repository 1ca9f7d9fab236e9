#!/usr/bin/env bash
# A Debian bookworm cloud root filesystem for the first-boot tests (tests/cli/zz_guests/guest_first_boot.rs), built with
# mmdebstrap: systemd, udev, cloud-init, cryptsetup, the `cloud` kernel and tpm2-tss's libraries (systemd 252
# dlopens libtss2-esys, -rc and -mu for `tpm2-device=` in /etc/crypttab; they are only its Suggests), as an ext4
# image (root=/dev/vda) with the kernel and its initramfs beside it. Cached like the harness's initramfs:
# $CRYPTADM_GUEST_CACHE (default /var/cache/cryptadm-guest)/cloud-root-<hash of this script and
# root-common.sh>/{root.img,vmlinuz,initrd.img}, built under a lock (root-common.sh). Prints the directory.
#
# Settings: NoCloud only (no probing of cloud metadata services), and `locale: false`: minbase has no `locales`
# package, so cloud-init's `update-locale LANG=en_US.UTF-8` would fail (exit 255) and mark every boot as error.
# cryptadm, the node's passphrase and the test's report unit (tests/guest/first-boot-report.sh) are not in the
# cached image: the test writes them into its own copy (debugfs), as an image build and the node's provisioning
# would.
set -euo pipefail

# shellcheck source=tests/guest/root-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/root-common.sh"

build() {
  local tmp="$1"
  nice mmdebstrap --quiet --variant=minbase \
    --include=systemd-sysv,udev,cloud-init,cryptsetup,linux-image-cloud-amd64,initramfs-tools,e2fsprogs,util-linux,procps,kmod \
    --include=libtss2-esys-3.0.2-0,libtss2-rc0,libtss2-mu0 \
    --customize-hook='echo "/dev/vda / ext4 rw,errors=remount-ro 0 1" >"$1/etc/fstab"' \
    --customize-hook='echo cryptadm-guest >"$1/etc/hostname"' \
    --customize-hook='printf "datasource_list: [ NoCloud, None ]\nlocale: false\n" >"$1/etc/cloud/cloud.cfg.d/90-cryptadm-test.cfg"' \
    --customize-hook='mkdir -p "$1/etc/systemd/system/cloud-final.service.wants"' \
    --customize-hook='mkdir -p "$1/usr/local/bin" "$1/etc/machineadm" && chmod 0700 "$1/etc/machineadm"' \
    --customize-hook='cp "$1"/boot/vmlinuz-* "'"$tmp"'/vmlinuz" && cp "$1"/boot/initrd.img-* "'"$tmp"'/initrd.img"' \
    bookworm "$tmp/root" http://deb.debian.org/debian
}

cached_root cloud-root cloudroot build
