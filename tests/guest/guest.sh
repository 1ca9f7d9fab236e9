#!/usr/bin/env bash
# The guest harness: boots Debian bookworm's kernel under QEMU's TCG (never KVM) with a small initramfs (busybox
# plus cryptsetup, e2fsprogs, dmsetup and their libraries, copied from this machine), the test's disks attached
# and a host directory shared over 9p, runs the directory's run.sh as root inside, and ends within a timeout.
#
#   guest.sh prepare                       build the kernel + initramfs cache if missing; print its directory
#   guest.sh run [--timeout S] [--mem M] [--cryptadm BIN] SHARE [-- QEMU ARGS...]
#   guest.sh qemu [--timeout S] [--mem M] LOG -- QEMU ARGS...   boot whatever QEMU ARGS say (a disk-booted root:
#                                          tests/guest/cloud-root.sh); the serial console to LOG; exit 124 on timeout
#
# `run` boots with SHARE mounted at /host and runs `sh /host/run.sh` (cwd /host; with --cryptadm, a stripped copy
# of BIN is put in SHARE and copied into the guest's RAM as /usr/local/bin/cryptadm). The serial console goes to SHARE/console.log and then to
# stdout. Exit status: run.sh's own, or 124 when the guest did not finish within --timeout (QEMU is killed), or
# 125 when it ended without run.sh's status (a kernel panic, a crash of init).
#
# The cache ($CRYPTADM_GUEST_CACHE, default /var/cache/cryptadm-guest) holds one directory per kernel version and
# version of the initramfs; it is built under a lock into a temporary directory and renamed into place, so
# parallel test binaries share it and a half-built cache is never used.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE_ROOT="${CRYPTADM_GUEST_CACHE:-/var/cache/cryptadm-guest}"
KPKG="${CRYPTADM_GUEST_KERNEL:-linux-image-amd64}"

die() { printf 'guest.sh: %s\n' "$*" >&2; exit 2; }

# The version of prepare() below: part of the cache key.
BUILDER=1
# The modules the guest loads, in an order modprobe --show-depends resolves with their dependencies (loop:
# dmcrypt.sh's device-mapper-on-loop case; Debian builds it as a module).
MODULES="virtio_pci virtio_blk virtio_console virtio_rng dm_crypt ext4 9p 9pnet_virtio xts algif_skcipher algif_hash isofs loop"
# Binaries copied from this machine (with their libraries, found by ldd).
BINARIES="/usr/sbin/cryptsetup /usr/sbin/dmsetup /usr/sbin/mkfs.ext4 /usr/sbin/e2fsck /usr/sbin/blkid"

kernel_version() {
  # linux-image-amd64 depends on linux-image-<abi>-amd64
  local real
  real="$(apt-cache depends "$KPKG" 2>/dev/null | awk '/Depends: linux-image-/ {print $2; exit}')"
  [ -n "$real" ] || real="$KPKG"
  printf '%s\n' "$real"
}

prepare() {
  local pkg kver key dir lock tmp
  pkg="$(kernel_version)"
  kver="${pkg#linux-image-}"
  # what goes into the initramfs: init, the lists and the builder's version (bump it when prepare changes)
  key="$kver-$(printf '%s\n' "$BUILDER" "$MODULES" "$BINARIES" | cat - "$HERE/init" | sha256sum | cut -c1-12)"
  dir="$CACHE_ROOT/$key"
  if [ -f "$dir/initrd.img" ] && [ -f "$dir/vmlinuz" ]; then
    printf '%s\n' "$dir"
    return
  fi
  mkdir -p "$CACHE_ROOT"
  lock="$CACHE_ROOT/.lock"
  exec 9>"$lock"
  flock 9
  if [ -f "$dir/initrd.img" ] && [ -f "$dir/vmlinuz" ]; then
    printf '%s\n' "$dir"
    return
  fi
  tmp="$(mktemp -d "$CACHE_ROOT/.build.XXXXXX")"
  (
    cd "$tmp"
    apt-get download -qq "$pkg" >/dev/null 2>&1 || die "apt-get download $pkg failed"
    dpkg-deb -x ./*.deb x
    local mdir="x/lib/modules/$kver"
    [ -d "$mdir" ] || die "no modules in $pkg for $kver"
    depmod -b x "$kver"
    cp "x/boot/vmlinuz-$kver" vmlinuz
    mkdir -p root/{bin,sbin,lib,lib64,etc,proc,sys,dev,run,tmp,host,mnt,modules} root/lib/x86_64-linux-gnu
    cp /bin/busybox root/bin/busybox
    # The insmod order: modprobe's resolution, duplicates dropped.
    modprobe -d x -S "$kver" --show-depends -a $MODULES | awk '$1 == "insmod" && !seen[$2]++ {print $2}' |
      while read -r ko; do
        cp "$ko" root/modules/
        basename "$ko" >>root/modules/order
      done
    local b lib
    for b in $BINARIES; do
      cp "$b" root/sbin/
      for lib in $(ldd "$b" | awk '/=>/ {print $3} /ld-linux/ {print $1}'); do
        case "$lib" in
          /lib64/*) cp -n "$lib" root/lib64/ ;;
          /*) cp -n "$(readlink -f "$lib")" "root/lib/x86_64-linux-gnu/$(basename "$lib")" ;;
        esac
      done
    done
    # cryptadm (a Rust binary) needs libgcc_s and libm besides libc
    for lib in libgcc_s.so.1 libm.so.6 libc.so.6; do
      cp -n "$(readlink -f "/lib/x86_64-linux-gnu/$lib")" "root/lib/x86_64-linux-gnu/$lib"
    done
    ln -s mkfs.ext4 root/sbin/mke2fs
    cp "$HERE/init" root/init
    chmod 0755 root/init
    printf 'root:x:0:0:root:/root:/bin/sh\n' >root/etc/passwd
    printf 'root:x:0:\n' >root/etc/group
    (cd root && find . | cpio -o -H newc --quiet | gzip -1) >initrd.img
    rm -rf x root ./*.deb
  )
  rm -rf "$dir"
  mv "$tmp" "$dir"
  # older builds for this kernel are no longer used
  find "$CACHE_ROOT" -mindepth 1 -maxdepth 1 -type d -name "$kver-*" ! -path "$dir" -exec rm -rf {} +
  printf '%s\n' "$dir"
}

run() {
  local timeout=300 mem=1024 cryptadm="" share
  while [ $# -gt 0 ]; do
    case "$1" in
      --timeout) timeout="$2"; shift 2 ;;
      --mem) mem="$2"; shift 2 ;;
      --cryptadm) cryptadm="$2"; shift 2 ;;
      --) break ;;
      -*) die "unknown option $1" ;;
      *) [ -z "${share:-}" ] || die "one share directory"; share="$1"; shift ;;
    esac
  done
  [ -n "${share:-}" ] && [ -f "$share/run.sh" ] || die "usage: guest.sh run [--timeout S] SHARE (with SHARE/run.sh)"
  [ "${1:-}" = "--" ] && shift
  share="$(cd "$share" && pwd)"
  local dir
  dir="$(prepare)"
  if [ -n "$cryptadm" ]; then
    strip -o "$share/cryptadm" "$cryptadm"
    chmod 0755 "$share/cryptadm"
  fi
  rm -f "$share/rc" "$share/console.log"
  local status=0
  # TCG only: a KVM guest hangs on this machine, and CI may have no /dev/kvm. Every guest runs beside a CPU-bound
  # suite, where CPU seconds are what count: one vCPU (the dm-crypt guest's ten cases took 286 CPU s with one
  # against 347-427 with two in whole-suite runs), and mitigations=off, since the guest is the tests' own machine
  # and the speculative-execution workarounds only cost TCG cycles. `-cpu max` stays: its AES-NI runs as one TCG
  # helper per round, where the kernel's table-driven AES would be emulated instruction by instruction.
  timeout -s KILL "$timeout" qemu-system-x86_64 \
    -M q35 -accel tcg -cpu max -smp 1 -m "$mem" \
    -nodefaults -no-reboot -display none -monitor none \
    -serial "file:$share/console.log" \
    -kernel "$dir/vmlinuz" -initrd "$dir/initrd.img" \
    -append "console=ttyS0 panic=-1 loglevel=4 rdinit=/init mitigations=off" \
    -device virtio-rng-pci \
    -virtfs "local,path=$share,mount_tag=host,security_model=none,id=host" \
    "$@" </dev/null || status=$?
  cat "$share/console.log" 2>/dev/null || true
  if [ "$status" -eq 137 ]; then
    printf 'guest.sh: the guest did not finish within %ss; QEMU killed\n' "$timeout" >&2
    exit 124
  fi
  if [ "$status" -ne 0 ]; then
    printf 'guest.sh: qemu-system-x86_64 exited with %s\n' "$status" >&2
    exit 125
  fi
  if [ ! -f "$share/rc" ]; then
    printf 'guest.sh: the guest ended without run.sh status (see the console above)\n' >&2
    exit 125
  fi
  exit "$(cat "$share/rc")"
}

# The same QEMU, for a guest that boots its own root filesystem, with one vCPU: a cloud boot is mostly one
# thread (systemd's jobs, cloud-init's Python stages), and a second vCPU only adds TCG overhead. Measured on an
# idle 2-core builder, one boot of the cloud root: 62 CPU s and 61 s with one vCPU, 74 CPU s and 58 s with two;
# the boots run beside a CPU-bound suite, where CPU seconds are what count. `-cpu qemu64` and mitigations=off:
# three boots of guest_first_boot.rs took 312 CPU s with `-cpu max`, 287 with mitigations=off and 247 with both
# (what a boot runs is systemd and cloud-init's Python, which gains nothing from `max`'s extensions under TCG).
qemu() {
  local timeout=300 mem=1024 log=""
  while [ $# -gt 0 ]; do
    case "$1" in
      --timeout) timeout="$2"; shift 2 ;;
      --mem) mem="$2"; shift 2 ;;
      --) shift; break ;;
      -*) die "unknown option $1" ;;
      *) log="$1"; shift ;;
    esac
  done
  [ -n "$log" ] || die "usage: guest.sh qemu [--timeout S] [--mem M] LOG -- QEMU ARGS"
  local status=0 args=() arg
  while [ $# -gt 0 ]; do
    arg=$1
    shift
    args+=("$arg")
    if [ "$arg" = -append ] && [ $# -gt 0 ]; then
      args+=("$1 mitigations=off")
      shift
    fi
  done
  set -- "${args[@]}"
  timeout -s KILL "$timeout" qemu-system-x86_64 \
    -M q35 -accel tcg -cpu qemu64 -smp 1 -m "$mem" \
    -nodefaults -no-reboot -display none -monitor none \
    -serial "file:$log" -device virtio-rng-pci "$@" </dev/null || status=$?
  if [ "$status" -eq 137 ]; then
    printf 'guest.sh: the guest did not finish within %ss; QEMU killed\n' "$timeout" >&2
    exit 124
  fi
  exit "$status"
}

case "${1:-}" in
  prepare) shift; prepare ;;
  qemu) shift; qemu "$@" ;;
  run) shift; run "$@" ;;
  *) die "usage: guest.sh prepare | run [--timeout S] [--mem M] [--cryptadm BIN] SHARE [-- QEMU ARGS]" ;;
esac
