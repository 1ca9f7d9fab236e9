#!/bin/sh
# Runs inside the guest (tests/guest/guest.sh) for tests/cli/zz_guests/guest_dmcrypt.rs: every case against the guest
# kernel's dm-crypt, with the guest's cryptsetup 2.6 as the oracle. The host attached the disks (virtio-blk,
# serial = the disk's name) and wrote old.key, sidecar.json and env into /host. Each case runs in a subshell with
# `set -e`; its output goes to /host/out/CASE.log and its exit status to /host/out/CASE.rc, which the Rust test
# asserts. A case fails with `fail MESSAGE`, which names what went wrong.
. /host/env
C=/usr/local/bin/cryptadm
OUT=/host/out
K=/run/keys
OLD=/run/old.key
export CRYPTADM_RUN_DIR=/run/cryptadm NO_COLOR=1
mkdir -p "$OUT" "$K" /run/cryptadm
cp /host/old.key "$OLD"
chmod 0600 "$OLD"

fail() {
  echo "FAIL: $*"
  exit 1
}

# The /dev node of the disk the host attached with serial=$1.
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

# expect CODE COMMAND...: runs COMMAND, shows its output, fails unless it exits CODE; its stderr is left in /tmp/err.
expect() {
  want=$1
  shift
  set +e
  "$@" >/tmp/out 2>/tmp/err
  got=$?
  set -e
  cat /tmp/out /tmp/err
  [ "$got" = "$want" ] || fail "$* exited $got, expected $want"
}

# The store's current key for volume id $1 (a file path).
key() { echo "$K/$1/current"; }

store_old_key() {
  mkdir -p "$K/$1"
  cp "$OLD" "$K/$1/current"
  chmod 0600 "$K/$1/current"
}

opens() { cryptsetup open --test-passphrase --key-file "$2" "$1" $3 >/dev/null 2>&1; }

now_ms() { awk '{printf "%d\n", $1 * 1000}' /proc/uptime; }

# mkfs, mount at /mnt/$2 (mapping $2 must be open), write 8 MiB, unmount, close, reopen with $3, read back.
fs_roundtrip() {
  dev=$1 name=$2 keyfile=$3
  shift 3
  mkfs.ext4 -q "/dev/mapper/$name"
  mkdir -p "/mnt/$name"
  mount "/dev/mapper/$name" "/mnt/$name"
  dd if=/dev/urandom of="/mnt/$name/data" bs=1M count=8 conv=fsync 2>/dev/null
  sum=$(sha256sum <"/mnt/$name/data")
  umount "/mnt/$name"
  cryptsetup close "$name"
  echo 3 >/proc/sys/vm/drop_caches
  cryptsetup open --key-file "$keyfile" "$@" "$dev" "$name"
  mount "/dev/mapper/$name" "/mnt/$name"
  [ "$(sha256sum <"/mnt/$name/data")" = "$sum" ] || fail "$name: the data read back differs"
  umount "/mnt/$name"
  cryptsetup close "$name"
  echo "$name: 8 MiB written through dm-crypt and read back after close/open"
}

# A writer that keeps writing 64 KiB files with fsync in $1 (w0 … w255 over and over: 16 MiB, well within the
# filesystem) until /run/stop-$2 exists, recording each write's checksum in /run/sums-$2; a failed write is
# recorded in /run/werr-$2.
start_writer() {
  dir=$1 tag=$2
  rm -f "/run/stop-$tag" "/run/werr-$tag" "/run/sums-$tag"
  (
    i=0
    while [ ! -e "/run/stop-$tag" ]; do
      f="w$((i % 256))"
      if ! dd if=/dev/urandom of="$dir/$f" bs=4k count=16 conv=fsync 2>/dev/null; then
        echo "write $i ($f) failed" >>"/run/werr-$tag"
        exit 1
      fi
      (cd "$dir" && sha256sum "$f") >>"/run/sums-$tag"
      i=$((i + 1))
    done
  ) &
  WRITER=$!
}

stop_writer() {
  tag=$1
  touch "/run/stop-$tag"
  wait "$WRITER" || true
  [ ! -e "/run/werr-$tag" ] || fail "the writer saw a write error: $(cat "/run/werr-$tag")"
  n=$(wc -l <"/run/sums-$tag")
  [ "$n" -gt 0 ] || fail "the writer wrote nothing"
  echo "writer: $n writes of 64 KiB with fsync, no write error"
  # the last checksum of each file is the one to check
  awk '{last[$2] = $0} END {for (f in last) print last[f]}' "/run/sums-$tag" >"/run/last-$tag"
}

check_sums() {
  dir=$1 tag=$2
  (cd "$dir" && sha256sum -c -s "/run/last-$tag") || fail "checksums differ in $dir"
  echo "checksums of $(wc -l <"/run/last-$tag") files equal"
}

# Number of active keyslots of $1 (LUKS1 or LUKS2).
keyslots() {
  cryptsetup luksDump "$1" | awk '/^Key Slot [0-7]: ENABLED/ {n++} /^  [0-9]+: luks2/ {n++} END {print n + 0}'
}

run_case() {
  name=$1
  shift
  start=$(now_ms)
  echo "=== $name"
  ("$@") >"$OUT/$name.log" 2>&1
  rc=$?
  echo "$rc" >"$OUT/$name.rc"
  echo "=== $name: exit $rc after $(($(now_ms) - start)) ms"
  [ "$rc" = 0 ] || tail -20 "$OUT/$name.log"
}

# 1. Images made by `disk luks-format` open with the guest's cryptsetup; ext4 on them round-trips data.
case_formats() {
  set -e
  for spec in fmt-l1:luks1:512 fmt-a2:luks2:4096 fmt-p2:luks2:4096 fmt-s512:luks2:512; do
    name=${spec%%:*}
    rest=${spec#*:}
    type=${rest%%:*}
    sector=${rest#*:}
    dev=$(disk "$name")
    cryptsetup luksDump "$dev" | grep -E '^(Version|	cipher|	sector|	PBKDF|PBKDF|Cipher|Hash)' || true
    cryptsetup open --key-file "$OLD" "$dev" "$name"
    cryptsetup status "$name" | grep -qi "type: *${type}" || fail "$name: not $type: $(cryptsetup status "$name")"
    cryptsetup status "$name" | grep -q "sector size: *$sector" || fail "$name: sector size is not $sector"
    dmsetup table "$name" | sed 's/ [0-9a-f]\{64,\} / <key> /'
    fs_roundtrip "$dev" "$name" "$OLD"
  done
}

# 2. `volume rotate` on a mapped, mounted volume under write load, the device found through the real sysfs.
live_rotate() {
  set -e
  disk_name=$1 id=$2 mapping=$3
  dev=$(disk "$disk_name")
  store_old_key "$id"
  cryptsetup open --key-file "$OLD" "$dev" "$mapping"
  mkfs.ext4 -q "/dev/mapper/$mapping"
  mkdir -p "/mnt/$id"
  mount "/dev/mapper/$mapping" "/mnt/$id"
  start_writer "/mnt/$id" "$id"
  sleep 1
  t0=$(now_ms)
  "$C" volume rotate --volume-id "$id" --key-store "file://$K" --no-progress
  echo "rotate (device found through /sys/block/dm-*/dm/name = $mapping): $(($(now_ms) - t0)) ms"
  sleep 1
  stop_writer "$id"
  check_sums "/mnt/$id" "$id"
  ! cmp -s "$(key "$id")" "$OLD" || fail "the key store still holds the old key"
  umount "/mnt/$id"
  cryptsetup close "$mapping"
  echo 3 >/proc/sys/vm/drop_caches
  opens "$dev" "$OLD" && fail "the old key still opens $dev"
  cryptsetup open --key-file "$(key "$id")" "$dev" "$mapping" || fail "the new key does not open $dev"
  mount "/dev/mapper/$mapping" "/mnt/$id"
  check_sums "/mnt/$id" "$id"
  umount "/mnt/$id"
  cryptsetup close "$mapping"
  [ "$(keyslots "$dev")" = 1 ] || fail "$(keyslots "$dev") keyslots active, expected 1"
  echo "after close/open: the new key opens, the old one does not, one keyslot, data equal"
}
case_rotate_luks1() { live_rotate rot-l1 pvc-l1 luks-rbd-pvc-l1; }
case_rotate_luks2() { live_rotate rot-a2 pvc-l2 pvc-l2; }

# 3. kill -9 of rotate at random points under the same load: the store's current key always opens the volume,
#    a rerun finishes, and the writer never sees an error.
kill_rotate() {
  set -e
  disk_name=$1 id=$2 mapping=$3 rounds=$4
  dev=$(disk "$disk_name")
  store_old_key "$id"
  cryptsetup open --key-file "$OLD" "$dev" "$mapping"
  mkfs.ext4 -q "/dev/mapper/$mapping"
  mkdir -p "/mnt/$id"
  mount "/dev/mapper/$mapping" "/mnt/$id"
  start_writer "/mnt/$id" "$id"
  t0=$(now_ms)
  "$C" volume rotate --volume-id "$id" --key-store "file://$K" --no-progress
  full=$(($(now_ms) - t0))
  echo "one full rotation: $full ms"
  round=1
  while [ "$round" -le "$rounds" ]; do
    delay=$((RANDOM % (full + 1)))
    "$C" volume rotate --volume-id "$id" --key-store "file://$K" --no-progress >/tmp/rot.out 2>&1 &
    pid=$!
    usleep $((delay * 1000))
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" && st=0 || st=$?
    states=$(ls "$K/$id" | tr '\n' ' ')
    echo "round $round: killed after $delay ms (exit $st); store holds: $states; keyslots: $(keyslots "$dev")"
    opens "$dev" "$(key "$id")" || fail "round $round: the store's current key does not open $dev"
    "$C" volume rotate --volume-id "$id" --key-store "file://$K" --no-progress ||
      fail "round $round: the rerun failed"
    opens "$dev" "$(key "$id")" || fail "round $round: after the rerun the current key does not open $dev"
    [ "$(keyslots "$dev")" = 1 ] || fail "round $round: $(keyslots "$dev") keyslots after the rerun"
    [ ! -e "$K/$id/pending" ] || fail "round $round: a pending key is left"
    round=$((round + 1))
  done
  stop_writer "$id"
  check_sums "/mnt/$id" "$id"
  umount "/mnt/$id"
  cryptsetup close "$mapping"
  echo 3 >/proc/sys/vm/drop_caches
  opens "$dev" "$OLD" && fail "the old key still opens $dev"
  cryptsetup open --key-file "$(key "$id")" "$dev" "$mapping"
  mount "/dev/mapper/$mapping" "/mnt/$id"
  check_sums "/mnt/$id" "$id"
  umount "/mnt/$id"
  cryptsetup close "$mapping"
}
case_kill_luks1() { kill_rotate kill-l1 pvc-k1 node1-pvc-k1 4; }
case_kill_luks2() { kill_rotate kill-p2 pvc-k2 luks-pvc-k2 4; }

# 4. Discovery by the real sysfs when nothing or two mappings match.
case_discovery_errors() {
  set -e
  store_old_key pvc-none
  expect 5 "$C" volume rotate --volume-id pvc-none --key-store "file://$K"
  grep -q 'dm-crypt LUKS mappings' /tmp/err || fail "exit 5 without naming what was tried"
  store_old_key pvc-dup
  cryptsetup open --key-file "$OLD" "$(disk fmt-l1)" luks-rbd-pvc-dup
  cryptsetup open --key-file "$OLD" "$(disk fmt-p2)" luks-pvc-dup
  expect 3 "$C" volume rotate --volume-id pvc-dup --key-store "file://$K"
  grep -q 'luks-rbd-pvc-dup' /tmp/err && grep -q 'luks-pvc-dup' /tmp/err || fail "exit 3 without both mappings"
  cmp -s "$(key pvc-dup)" "$OLD" || fail "the key store changed"
  opens "$(disk fmt-l1)" "$OLD" && opens "$(disk fmt-p2)" "$OLD" || fail "a refused rotation changed a volume"
  cryptsetup close luks-rbd-pvc-dup
  cryptsetup close luks-pvc-dup
}

# 5. `volume serve` in the guest answers the sidecar's request (the Python grpcio client of
#    tests/interop/csi_addons_client.py, run from the host's root filesystem shared read-only over 9p, with the
#    stubs the host generated into /host/stubs: protoc under TCG took most of this case's two minutes).
case_serve() {
  set -e
  dev=$(disk srv-a2)
  id=$CEPH_ID
  mapping="luks-rbd-$id"
  store_old_key "$id"
  cryptsetup open --key-file "$OLD" "$dev" "$mapping"
  mkfs.ext4 -q "/dev/mapper/$mapping"
  mkdir -p /mnt/srv
  mount "/dev/mapper/$mapping" /mnt/srv
  start_writer /mnt/srv srv
  mkdir -p /run/csi
  "$C" volume serve --endpoint unix:///run/csi/csi-addons.sock --drivername rbd.csi.ceph.com \
    --key-store "file://$K" --no-progress >/tmp/serve.log 2>&1 &
  server=$!
  n=0
  while [ ! -S /run/csi/csi-addons.sock ] && [ $n -lt 300 ]; do
    usleep 100000
    n=$((n + 1))
  done
  [ -S /run/csi/csi-addons.sock ] || fail "volume serve did not listen: $(cat /tmp/serve.log)"
  mkdir -p /sysroot
  # read-only, so cache=loose is safe: Python stats and reads hundreds of files over 9p
  mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,ro,cache=loose hostroot /sysroot
  mount --bind /proc /sysroot/proc
  mount --bind /dev /sysroot/dev
  mount --bind /run /sysroot/run
  mount --bind /tmp /sysroot/tmp
  mount --bind /host /sysroot/mnt
  t0=$(now_ms)
  # One client, one channel (grpc-go's authority), as the sidecar connects and then rotates: line 1 is the identity,
  # line 2 the rotation's answer.
  chroot /sysroot "$PYTHON" /mnt/csi_addons_client.py /mnt/proto /mnt/stubs /run/csi/csi-addons.sock \
    localhost sidecar "$(cat /host/sidecar.json)" >/tmp/sidecar.json
  sed -n 1p /tmp/sidecar.json >/tmp/identity.json
  sed -n 2p /tmp/sidecar.json >/tmp/rotate.json
  cat /tmp/identity.json
  grep -q '"name": "rbd.csi.ceph.com"' /tmp/identity.json || fail "GetIdentity did not name the driver"
  cat /tmp/rotate.json
  echo "identity + EncryptionKeyRotate (Python under TCG included): $(($(now_ms) - t0)) ms"
  grep -q '"code": "OK"' /tmp/rotate.json || fail "EncryptionKeyRotate did not answer OK"
  kill -TERM "$server"
  wait "$server" || fail "volume serve did not stop cleanly on SIGTERM: $(cat /tmp/serve.log)"
  [ ! -e /run/csi/csi-addons.sock ] || fail "volume serve left its socket"
  umount /sysroot/mnt /sysroot/tmp /sysroot/run /sysroot/dev /sysroot/proc /sysroot
  stop_writer srv
  check_sums /mnt/srv srv
  umount /mnt/srv
  cryptsetup close "$mapping"
  opens "$dev" "$OLD" && fail "the old key still opens the volume"
  cryptsetup open --key-file "$(key "$id")" "$dev" "$mapping"
  mount "/dev/mapper/$mapping" /mnt/srv
  check_sums /mnt/srv srv
  umount /mnt/srv
  cryptsetup close "$mapping"
}

# 6. `disk luks-format` straight onto a guest block device; refused over a LUKS header without --force.
case_format_device() {
  set -e
  dev=$(disk blank)
  "$C" disk luks-format --type luks2 --pbkdf argon2id --pbkdf-force-iterations 4 --pbkdf-memory 1024 \
    --pbkdf-parallel 1 --key-file "$OLD" --no-progress "$dev"
  cryptsetup isLuks --type luks2 "$dev" || fail "cryptsetup does not see LUKS2 on $dev"
  cryptsetup open --key-file "$OLD" "$dev" devfmt
  cryptsetup status devfmt | grep -q 'sector size: *512' || echo "note: $(cryptsetup status devfmt | grep sector)"
  fs_roundtrip "$dev" devfmt "$OLD"
  expect 3 "$C" disk luks-format --type luks1 --key-file "$OLD" --no-progress "$dev"
  grep -q -- '--force' /tmp/err || fail "the refusal does not name --force"
  cryptsetup isLuks --type luks2 "$dev" || fail "the refused format changed $dev"
  "$C" disk luks-format --force --type luks1 --hash sha256 --pbkdf-force-iterations 1000 --key-file "$OLD" \
    --no-progress "$dev"
  cryptsetup isLuks --type luks1 "$dev" || fail "--force did not write LUKS1"
  cryptsetup open --key-file "$OLD" "$dev" devfmt
  fs_roundtrip "$dev" devfmt "$OLD"
}

# 7. A detached header (cryptsetup luksFormat --header): mapped, mounted, rotated under load.
case_detached_header() {
  set -e
  dev=$(disk detached)
  truncate -s 16M /run/detached.hdr
  cryptsetup luksFormat --batch-mode --type luks2 --pbkdf pbkdf2 --pbkdf-force-iterations 1000 --hash sha256 \
    --header /run/detached.hdr --key-file "$OLD" "$dev"
  store_old_key pvc-det
  cryptsetup open --header /run/detached.hdr --key-file "$OLD" "$dev" pvc-det
  mkfs.ext4 -q /dev/mapper/pvc-det
  mkdir -p /mnt/det
  mount /dev/mapper/pvc-det /mnt/det
  start_writer /mnt/det det
  sleep 1
  "$C" volume rotate --volume-id pvc-det --volume-path /run/detached.hdr --key-store "file://$K" --no-progress
  sleep 1
  stop_writer det
  check_sums /mnt/det det
  umount /mnt/det
  cryptsetup close pvc-det
  opens /run/detached.hdr "$OLD" && fail "the old key still opens the header"
  cryptsetup open --header /run/detached.hdr --key-file "$(key pvc-det)" "$dev" pvc-det
  mount /dev/mapper/pvc-det /mnt/det
  check_sums /mnt/det det
  umount /mnt/det
  cryptsetup close pvc-det
}

# 8. A device-mapper device stacked on a loop device is that loop device's volume: while the lock on the loop
#    device's backing file is held (as a rotation through the loop device holds it), a rotation through the
#    mapping under another volume id is refused (exit 10) and changes nothing; released, it rotates.
case_stacked() {
  set -e
  img=/run/stk.img
  truncate -s 24M "$img"
  cryptsetup luksFormat --batch-mode --type luks2 --pbkdf pbkdf2 --pbkdf-force-iterations 1000 --hash sha256 \
    --key-file "$OLD" "$img"
  loopdev=$(losetup -f)
  losetup "$loopdev" "$img"
  [ "$(cat "/sys/block/${loopdev##*/}/loop/backing_file")" = "$img" ] || fail "$loopdev is not over $img"
  dmsetup create stk-lin --table "0 $(cat "/sys/block/${loopdev##*/}/size") linear $loopdev 0"
  dm=
  for d in /sys/block/dm-*; do
    [ "$(cat "$d/dm/name")" != stk-lin ] || dm=${d##*/}
  done
  [ -n "$dm" ] && [ -e "/sys/block/$dm/slaves/${loopdev##*/}" ] || fail "stk-lin ($dm) is not stacked on $loopdev"
  # (no udev here: the mapping's node is devtmpfs's /dev/dm-N)
  [ -b "/dev/$dm" ] || fail "/dev/$dm is not a block device"
  echo "stacked: /dev/$dm (stk-lin) on $loopdev on $img"
  store_old_key pvc-stk
  # The holder: a rotation of the loop device under another id, stopped inside its store read (its `current`
  # is a FIFO) after it took its locks. The FIFO opens for writing once the holder has opened it for reading;
  # the write end stays open, so the holder waits there until it is killed.
  mkdir -p /run/hold/pvc-hold
  mkfifo /run/hold/pvc-hold/current
  "$C" volume rotate --volume-id pvc-hold --volume-path "$loopdev" --key-store file:///run/hold --no-progress \
    >/tmp/hold.out 2>&1 &
  holder=$!
  rm -f /run/stk-held
  (
    exec 8>/run/hold/pvc-hold/current
    touch /run/stk-held
    exec sleep 300
  ) &
  opener=$!
  n=0
  while [ ! -e /run/stk-held ] && [ $n -lt 600 ] && kill -0 "$holder" 2>/dev/null; do
    usleep 50000
    n=$((n + 1))
  done
  [ -e /run/stk-held ] || fail "the holder never reached its store read: $(cat /tmp/hold.out)"
  echo "holder: volume rotate --volume-id pvc-hold --volume-path $loopdev, inside its store read"
  expect 10 "$C" volume rotate --volume-id pvc-stk --volume-path "/dev/$dm" --key-store "file://$K" \
    --no-progress
  grep -q "its backing file \`$img\`" /tmp/err || fail "exit 10 without naming the backing file"
  cmp -s "$(key pvc-stk)" "$OLD" || fail "the refused rotation changed the key store"
  opens "$img" "$OLD" || fail "the refused rotation changed the volume"
  kill -9 "$holder"
  wait "$holder" || true
  kill "$opener"
  wait "$opener" || true
  "$C" volume rotate --volume-id pvc-stk --volume-path "/dev/$dm" --key-store "file://$K" --no-progress
  opens "$loopdev" "$(key pvc-stk)" || fail "the new key does not open $loopdev"
  opens "$img" "$OLD" && fail "the old key still opens $img"
  dmsetup remove stk-lin
  losetup -d "$loopdev"
  echo "stacked: refused through the mapping while the backing file was locked (exit 10); rotated once released"
}

for c in $CASES; do
  run_case "$c" "case_$c"
done
cp -r "$K" "$OUT/keys"
exit 0
