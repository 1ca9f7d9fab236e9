#!/bin/sh
# Test scaffolding for tests/cli/zz_guests/guest_first_boot.rs, written into the node's root by the test (with
# first-boot-report.service): after cloud-final, wait for cloud-init, print what the test asserts between
# REPORT-BEGIN and REPORT-END on the serial console (`key|value` lines), and power off.
exec >/dev/ttyS0 2>&1
# The unit runs after cloud-final.service, so cloud-init has finished; its result file is waited for (bounded)
# rather than by `cloud-init status --wait`, one Python start (seconds under TCG) fewer per boot.
i=0
while [ "$i" -lt 60 ] && [ ! -e /run/cloud-init/result.json ]; do
  sleep 1
  i=$((i + 1))
done
echo REPORT-BEGIN
# cloud-init's result as it recorded it at the end of its last stage: the datasource and every stage's errors, the
# errors for which `cloud-init status` says "error" (and "done" for none). That command would be one more Python
# start: 6-7 CPU s of a 90 s boot under TCG.
sed 's/^/result|/' /run/cloud-init/result.json 2>/dev/null
for f in /run/machineadm /run/machineadm/machineadm_config.yaml /run/machineadm/machine_config.yaml; do
  if [ -e "$f" ]; then echo "stat|$f|$(stat -c '%a %U:%G' "$f")"; else echo "stat|$f|missing"; fi
done
if [ -f /run/machineadm/machine_config.yaml ]; then
  echo "sha256|$(sha256sum </run/machineadm/machine_config.yaml | cut -d' ' -f1)"
fi
echo "runcmd_sem|$(stat -c %Y /var/lib/cloud/instance/sem/config_runcmd 2>/dev/null || echo missing)"
echo "write_files_sem|$(stat -c %Y /var/lib/cloud/instance/sem/config_write_files 2>/dev/null || echo missing)"
echo "instance|$(cat /var/lib/cloud/data/instance-id 2>/dev/null)"
echo "instances|$(ls /var/lib/cloud/instances 2>/dev/null | wc -l)"
# what cryptadm printed (runcmd's output goes to cloud-init-output.log) and how its script ended
grep -h '^error:\|^hint:\|^warning:' /var/log/cloud-init-output.log 2>/dev/null | sed 's/^/output|/'
grep -h 'Exit code:\|Failed to run module\|config-scripts-user' /var/log/cloud-init.log 2>/dev/null | sed 's/^/log|/'
# The node with a TPM (guest_first_boot.rs): the disk systemd-cryptsetup unlocks from /etc/crypttab through its
# systemd-tpm2 token (`nofail`: wait for the unit's start job, bounded), and the tpm2-bound document cryptadm opens
# through /dev/tpmrm0 (here, on every boot, as a unit of the image would).
if [ -f /etc/machineadm/tpm2-sealed.yaml ]; then
  echo "tpm|$(ls /dev/tpmrm0 2>&1)"
  i=0
  while [ "$i" -lt 120 ] && systemctl list-jobs --no-legend 2>/dev/null | grep -q 'systemd-cryptsetup@tpmdisk'; do
    sleep 1
    i=$((i + 1))
  done
  echo "cryptsetup_unit|$(systemctl is-active systemd-cryptsetup@tpmdisk.service)"
  # how long the unit took to activate (for the record: what the TPM costs a boot)
  started="$(systemctl show -P InactiveExitTimestampMonotonic systemd-cryptsetup@tpmdisk.service)"
  active="$(systemctl show -P ActiveEnterTimestampMonotonic systemd-cryptsetup@tpmdisk.service)"
  echo "cryptsetup_ms|$(((${active:-0} - ${started:-0}) / 1000))"
  journalctl -b --no-pager -o cat -u systemd-cryptsetup@tpmdisk.service 2>&1 | sed 's/^/cryptsetup_log|/'
  echo "tpmdisk|$(sha256sum </dev/mapper/tpmdisk 2>/dev/null | cut -d' ' -f1)"
  mkdir -p -m 0700 /run/cryptadm-tpm2
  started="$(date +%s%N)"
  /usr/local/bin/cryptadm bootstrap open --in /etc/machineadm/tpm2-sealed.yaml --out /run/cryptadm-tpm2/config.yaml \
    >/run/cryptadm-tpm2/open.log 2>&1
  echo "tpm2_open|$?"
  echo "tpm2_open_ms|$((($(date +%s%N) - started) / 1000000))"
  sed 's/^/tpm2_open_output|/' /run/cryptadm-tpm2/open.log
  echo "tpm2_sha256|$(sha256sum </run/cryptadm-tpm2/config.yaml 2>/dev/null | cut -d' ' -f1)"
  echo "stat|/run/cryptadm-tpm2/config.yaml|$(stat -c '%a %U:%G' /run/cryptadm-tpm2/config.yaml 2>&1)"
fi
echo "uptime|$(cut -d' ' -f1 /proc/uptime)"
echo REPORT-END
systemctl poweroff --no-block
