"""castellan, the key-manager client Nova and Glance use, reads one Barbican secret the way Nova does before it
opens an encrypted image: the oracle for what cryptadm stored or left in place. Usage (Debian's python3, which has
python3-castellan): castellan_get.py ENV_FILE SECRET_UUID OUT_FILE. Logs in as the harness's admin, writes the
secret's bytes (get_encoded()) to OUT_FILE and its castellan class name to standard output."""
import os
import sys

from castellan import key_manager, options
from castellan.common.credentials import keystone_password
from oslo_config import cfg

env_file, uuid, out = sys.argv[1:4]
env = dict(line.split("=", 1) for line in open(env_file).read().splitlines() if "=" in line)
conf = cfg.ConfigOpts()
conf(args=[], default_config_files=[])
options.set_defaults(conf, backend="barbican", barbican_endpoint=env["BARBICAN_URL"],
                     auth_endpoint=env["KEYSTONE_URL"])
context = keystone_password.KeystonePassword(
    env["ADMIN_PASSWORD"], auth_url=env["KEYSTONE_URL"], username="admin", user_domain_name="Default",
    project_name="admin", project_domain_name="Default")
secret = key_manager.API(conf).get(context, uuid)
fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
with os.fdopen(fd, "wb") as f:
    f.write(secret.get_encoded())
print(type(secret).__name__)
