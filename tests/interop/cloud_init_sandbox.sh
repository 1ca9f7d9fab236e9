#!/bin/bash
# Runs cloud-init's boot pipeline (init, modules --mode config, modules --mode final) on a NoCloud seed holding
# USER_DATA, in a chroot onto a copy-on-write view of the host's / (an overlay whose upper layer is a tmpfs, fresh
# tmpfs on /run and /tmp, in a private mount namespace): nothing reaches the host, and the mounts vanish with the
# namespace. Root only. SANDBOX_CFG restricts the modules to write_files, runcmd and scripts_user.
# usage: cloud_init_sandbox.sh USER_DATA META_DATA SANDBOX_CFG CRYPTADM_BINARY EXTRA_ROOT OUTDIR
# OUTDIR gets: steps (one `step rc` line each), run-machineadm/ (copy of /run/machineadm), cloud-init-output.log,
# runcmd (the script cc_runcmd wrote), status (cloud-init status --long), upper-layer.txt (every path written).
set -euo pipefail
ud=$(realpath "$1"); md=$(realpath "$2"); cfg=$(realpath "$3"); bin=$(realpath "$4"); extra=$(realpath "$5")
out=$(realpath "$6"); mkdir -p "$out"
scratch=$(mktemp -d "$out/../mnt.XXXXXX")
export ud md cfg bin extra out scratch
unshare --mount --propagation private -- bash -euo pipefail -c '
  mount -t tmpfs -o mode=0755 tmpfs "$scratch"
  mkdir "$scratch/upper" "$scratch/work" "$scratch/root"
  mount -t overlay overlay -o "lowerdir=/,upperdir=$scratch/upper,workdir=$scratch/work" "$scratch/root"
  r=$scratch/root
  mount -t proc proc "$r/proc"; mount --rbind /dev "$r/dev"; mount --rbind /sys "$r/sys"
  mount -t tmpfs -o mode=0755 tmpfs "$r/run"; mount -t tmpfs -o mode=1777 tmpfs "$r/tmp"
  # what earlier runs may have left in the host view: start from a machine cloud-init never saw
  rm -rf "$r/var/lib/cloud" "$r/var/log/cloud-init.log" "$r/var/log/cloud-init-output.log"
  install -D -m 0644 "$ud" "$r/var/lib/cloud/seed/nocloud/user-data"
  install -D -m 0644 "$md" "$r/var/lib/cloud/seed/nocloud/meta-data"
  install -D -m 0644 "$cfg" "$r/etc/cloud/cloud.cfg.d/99-sandbox.cfg"
  install -D -m 0755 "$bin" "$r/usr/local/bin/cryptadm"
  cp -a "$extra/." "$r/"
  for step in "init" "modules --mode config" "modules --mode final"; do
    set +e; chroot "$r" cloud-init $step > /dev/null 2>&1; rc=$?; set -e
    echo "$step $rc" >> "$out/steps"
  done
  mkdir -p "$out/run-machineadm"
  cp -a "$r/run/machineadm/." "$out/run-machineadm/" 2>/dev/null || true
  cp -a "$r/var/log/cloud-init-output.log" "$out/" 2>/dev/null || true
  # /var/lib/cloud/instance is an absolute symlink: resolve it inside the root
  cp "$r/var/lib/cloud/instances/"*/scripts/runcmd "$out/runcmd" 2>/dev/null || true
  chroot "$r" cloud-init status --long > "$out/status" 2>&1 || true
  (cd "$scratch/upper" && find . -xdev | sort) > "$out/upper-layer.txt"
'
rmdir "$scratch" 2>/dev/null || true
