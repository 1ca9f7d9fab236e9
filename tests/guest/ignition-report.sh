#!/bin/sh
# Test scaffolding for tests/cli/zz_guests/guest_ignition.rs, written into the node's root by the test (with
# ignition-report.service): print what the test asserts between REPORT-BEGIN and REPORT-END on the serial console
# (`key|value` lines), and power off.
exec >/dev/ttyS0 2>&1
unit=cryptadm-bootstrap-open.service
echo REPORT-BEGIN
echo "cmdline|$(cat /proc/cmdline)"
for f in /etc/machineadm /etc/machineadm/machineadm_config.yaml "/etc/systemd/system/$unit" \
  /etc/systemd/system-preset/20-ignition.preset /run/machineadm /run/machineadm/machine_config.yaml \
  /var/lib/machineadm /var/lib/machineadm/bootstrap-opened /etc/cryptadm/vault.env; do
  if [ -e "$f" ]; then echo "stat|$f|$(stat -c '%a %U:%G' "$f")"; else echo "stat|$f|missing"; fi
done
[ -f /etc/systemd/system-preset/20-ignition.preset ] && sed 's/^/preset|/' /etc/systemd/system-preset/20-ignition.preset
if [ -f /run/machineadm/machine_config.yaml ]; then
  echo "sha256|$(sha256sum </run/machineadm/machine_config.yaml | cut -d' ' -f1)"
fi
if [ -f "/etc/systemd/system/$unit" ]; then
  echo "unit_sha256|$(sha256sum <"/etc/systemd/system/$unit" | cut -d' ' -f1)"
fi
echo "enabled|$(systemctl is-enabled "$unit" 2>&1)"
systemctl show -p ActiveState -p Result -p ExecMainStatus -p ConditionResult "$unit" | sed 's/^/show|/'
# what cryptadm printed, as the journal has it (this boot's: the image keeps a persistent journal)
journalctl -b -o cat -u "$unit" --no-pager 2>&1 | grep -v '^-- ' | sed 's/^/journal|/'
# Ignition's own account, from the initramfs (its journal lives in /run, which survives switch_root)
for stage in fetch-offline fetch kargs disks mount files; do
  journalctl -b -o cat -u "ignition-$stage.service" --no-pager 2>/dev/null | grep -v '^-- ' | sed "s/^/ignition-$stage|/"
done
systemctl list-units --failed --plain --no-legend 2>&1 | sed 's/^/failed|/'
echo "uptime|$(cut -d' ' -f1 /proc/uptime)"
echo REPORT-END
systemctl poweroff --no-block
