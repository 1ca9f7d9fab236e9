#!/bin/sh
# Runs inside the guest (tests/guest/guest.sh) for tests/cli/zz_guests/guest_nova.rs. QEMU itself decrypts the disks
# (qcow2 `encrypt.format=luks` and the `luks` driver, keys handed over as libvirt does), so the guest sees plain
# ext4 filesystems: it mounts each one, checks the known file, and writes one file to the disks named in
# $WRITE so that the host can decrypt them afterwards. One line per disk in /host/out/DISK.log, the exit status in
# /host/out/DISK.rc.
. /host/env
OUT=/host/out
mkdir -p "$OUT"

disk() {
  for d in /sys/block/vd*; do
    if [ "$(cat "$d/serial" 2>/dev/null)" = "$1" ]; then
      echo "/dev/${d##*/}"
      return 0
    fi
  done
  echo "no disk with serial $1" >&2
  return 1
}

check_disk() {
  set -e
  name=$1
  dev=$(disk "$name")
  echo "$name is $dev, $(cat "/sys/block/${dev#/dev/}/size") sectors"
  blkid "$dev" || true
  mkdir -p "/mnt/$name"
  mount -t ext4 "$dev" "/mnt/$name"
  got=$(sha256sum <"/mnt/$name/known.txt" | cut -d' ' -f1)
  [ "$got" = "$KNOWN_SHA256" ] || { echo "FAIL: known.txt has sha256 $got, expected $KNOWN_SHA256"; exit 1; }
  echo "$name: known.txt read through QEMU's decryption, sha256 $got"
  for w in $WRITE; do
    if [ "$w" = "$name" ]; then
      echo "written by the guest on $name" >"/mnt/$name/guest.txt"
      sync
      echo "$name: guest.txt written"
    fi
  done
  umount "/mnt/$name"
}

for name in $DISKS; do
  (check_disk "$name") >"$OUT/$name.log" 2>&1
  echo $? >"$OUT/$name.rc"
  cat "$OUT/$name.log"
done
exit 0
