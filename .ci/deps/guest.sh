#!/usr/bin/env bash
# The guest tests (tests/cli/zz_guests/guest_*.rs, tests/guest/): QEMU's system emulator (TCG), busybox-static for the
# initramfs, the packages whose binaries the initramfs copies (cryptsetup, e2fsprogs), kmod (depmod/modprobe
# resolve the kernel modules), binutils (strip), mmdebstrap and genisoimage (the first-boot tests). qemu-system-x86 must
# come from bookworm-backports, the same 10.0.x as qemu-utils: plain bookworm's 7.2 would replace qemu-utils.
# The kernel itself is fetched by the harness (apt-get download) into its cache; dracut and ignition (the Ignition
# first boot, tests/guest/ignition-root.sh) are installed only inside its mmdebstrap root. Idempotent and quiet.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    >/etc/apt/sources.list.d/bookworm-backports.sources
  apt-get update -qq
fi
# qemu-system-x86 alone from backports; everything else from bookworm itself
command -v qemu-system-x86_64 >/dev/null ||
  apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends -t bookworm-backports qemu-system-x86 >/dev/null
need=()
[ -x /bin/busybox ] || need+=(busybox-static)
command -v cryptsetup >/dev/null || need+=(cryptsetup-bin)
command -v mkfs.ext4 >/dev/null || need+=(e2fsprogs)
command -v cpio >/dev/null || need+=(cpio)
command -v depmod >/dev/null || need+=(kmod)
command -v strip >/dev/null || need+=(binutils)
# the first-boot tests: a cloud root (mmdebstrap) and its NoCloud seed (genisoimage)
command -v mmdebstrap >/dev/null || need+=(mmdebstrap)
command -v genisoimage >/dev/null || need+=(genisoimage)
# the AWS first boot: QEMU's guestfwd relays the guest's metadata service and KMS addresses through socat
command -v socat >/dev/null || need+=(socat)
if [ "${#need[@]}" -gt 0 ]; then
  apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
qemu-system-x86_64 --version | head -1
