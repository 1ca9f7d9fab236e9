#!/bin/sh
# Test scaffolding for tests/cli/guest_first_boot.rs, written into the node's root by the test (with
# first-boot-report.service): after cloud-final, wait for cloud-init, print what the test asserts between
# REPORT-BEGIN and REPORT-END on the serial console (`key|value` lines), and power off.
exec >/dev/ttyS0 2>&1
cloud-init status --wait >/dev/null 2>&1
echo REPORT-BEGIN
cloud-init status --long 2>&1 | sed 's/^/status|/'
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
echo "uptime|$(cut -d' ' -f1 /proc/uptime)"
echo REPORT-END
systemctl poweroff --no-block
