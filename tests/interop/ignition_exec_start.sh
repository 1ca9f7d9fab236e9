#!/bin/bash
# Runs the ExecStart= line of a unit that Ignition wrote into ROOT, unchanged, as systemd would on the first boot:
# in a chroot whose view is ROOT layered over the host's / (copy-on-write: every write lands in a tmpfs, nothing
# reaches the host or ROOT), after creating the unit's RuntimeDirectory= with its RuntimeDirectoryMode= and with the
# variables of its EnvironmentFile= files (as the machine has them: ROOT, then EXTRA_ROOT) added to its environment.
# The mounts live in a private mount namespace and vanish with it. Root only (unshare, mount, chroot).
# usage: ignition_exec_start.sh ROOT UNIT_NAME CRYPTADM_BINARY EXTRA_ROOT OUTDIR
# Copies each runtime directory to OUTDIR and exits with ExecStart's status.
set -euo pipefail
root=$(realpath "$1"); unit=$2; bin=$(realpath "$3"); extra=$(realpath "$4"); out=$(realpath "$5"); mkdir -p "$out"
scratch=$(mktemp -d "$out/../mnt.XXXXXX")
export root unit bin extra out scratch
set +e
unshare --mount --propagation private -- bash -euo pipefail -c '
  mount -t tmpfs -o mode=0755 tmpfs "$scratch"
  mkdir "$scratch/upper" "$scratch/work" "$scratch/merged"
  # ROOT under / cannot be a lower layer beside / (ELOOP): copy it onto the tmpfs first
  cp -a "$root" "$scratch/ign"
  mount -t overlay overlay -o "lowerdir=$scratch/ign:/,upperdir=$scratch/upper,workdir=$scratch/work" "$scratch/merged"
  m=$scratch/merged
  mount -t proc proc "$m/proc"; mount --rbind /dev "$m/dev"
  mount -t tmpfs -o mode=0755 tmpfs "$m/run"; mount -t tmpfs -o mode=1777 tmpfs "$m/tmp"
  install -D -m 0755 "$bin" "$m/usr/local/bin/cryptadm"
  cp -a "$extra/." "$m/"
  u="$m/etc/systemd/system/$unit"
  rd=$(sed -n "s/^RuntimeDirectory=//p" "$u"); rdm=$(sed -n "s/^RuntimeDirectoryMode=//p" "$u")
  for d in $rd; do mkdir -p -m "${rdm:-0755}" "$m/run/$d"; done
  # EnvironmentFile= as systemd reads it from the machine: a leading "-" marks it optional; KEY=value lines
  for f in $(sed -n "s/^EnvironmentFile=-\{0,1\}//p" "$u"); do
    [ -f "$m$f" ] || continue
    while IFS= read -r line; do
      case "$line" in "" | "#"* | ";"*) ;; *) export "$line" ;; esac
    done <"$m$f"
  done
  exec_start=$(sed -n "s/^ExecStart=//p" "$u")
  set +e; chroot "$m" /bin/sh -c "$exec_start"; rc=$?; set -e
  for d in $rd; do cp -a "$m/run/$d" "$out/"; done
  exit $rc
'
rc=$?
rmdir "$scratch" 2>/dev/null
exit $rc
