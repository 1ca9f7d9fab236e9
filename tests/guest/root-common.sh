#!/usr/bin/env bash
# Sourced by cloud-root.sh and ignition-root.sh: the cache of a Debian root built with mmdebstrap, like the
# harness's initramfs: $CRYPTADM_GUEST_CACHE (default /var/cache/cryptadm-guest)/NAME-<hash of the calling script
# and this file>/{root.img,vmlinuz,initrd.img}.
#
# cached_root NAME LABEL BUILD prints that directory, built first when missing: under a lock (one build at a time;
# who waited finds it built), BUILD is called with a fresh temporary directory TMP in the cache and must leave the
# root filesystem in TMP/root and the kernel and initramfs in TMP/vmlinuz and TMP/initrd.img; the root becomes a
# 2 GiB ext4 image labelled LABEL (root=/dev/vda), the directory is renamed into place and older versions of NAME
# are removed.

cached_root() {
  local name="$1" label="$2" build="$3"
  CACHE_ROOT="${CRYPTADM_GUEST_CACHE:-/var/cache/cryptadm-guest}"
  local key
  key="$name-$(cat "${BASH_SOURCE[1]}" "${BASH_SOURCE[0]}" | sha256sum | cut -c1-12)"
  dir="$CACHE_ROOT/$key"
  if root_built; then
    printf '%s\n' "$dir"
    return 0
  fi
  mkdir -p "$CACHE_ROOT"
  exec 9>"$CACHE_ROOT/.lock-$name"
  flock 9
  if root_built; then
    printf '%s\n' "$dir"
    return 0
  fi
  tmp="$(mktemp -d "$CACHE_ROOT/.build-$name.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  "$build" "$tmp"
  truncate -s 2G "$tmp/root.img"
  mkfs.ext4 -q -F -L "$label" -d "$tmp/root" "$tmp/root.img"
  rm -rf "$tmp/root"
  trap - EXIT
  rm -rf "$dir"
  mv "$tmp" "$dir"
  # older versions of the image are no longer used
  find "$CACHE_ROOT" -mindepth 1 -maxdepth 1 -type d -name "$name-*" ! -path "$dir" -exec rm -rf {} +
  printf '%s\n' "$dir"
}

root_built() { [ -f "$dir/root.img" ] && [ -f "$dir/vmlinuz" ] && [ -f "$dir/initrd.img" ]; }
