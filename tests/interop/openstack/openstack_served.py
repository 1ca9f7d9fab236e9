"""The `openstack` client kept in one interpreter for a whole test binary (tests/cli/support_openstack.rs).

    /usr/bin/python3 openstack_served.py

Answers requests in the loop of `served_oracle.py`: each is the argument list of one `openstack` run, run by
python-openstackclient's own entry point (`openstackclient.shell.main`, what /usr/bin/openstack calls). Every
request is a new shell, a new login and new connections, as a run is; only the interpreter and its imports (about
two CPU seconds, most of a run) are kept. The cloud is the environment's (OS_CLIENT_CONFIG_FILE, OS_CLOUD).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from served_oracle import serve  # noqa: E402

from openstackclient import shell  # noqa: E402

if __name__ == "__main__":
    serve(shell.main)
