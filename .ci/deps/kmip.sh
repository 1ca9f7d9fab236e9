#!/usr/bin/env bash
# The KMIP server and client oracle for tests/cli/kmip.rs: PyPI's `pykmip` (its reference server, SQLite store,
# and its client library) in its own virtual environment, /opt/pykmip-venv (the tests look there, or at
# CRYPTADM_PYKMIP_VENV). Idempotent and quiet.
set -euo pipefail
venv="${CRYPTADM_PYKMIP_VENV:-/opt/pykmip-venv}"
if ! "$venv/bin/python" -c 'import kmip' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check 'pykmip>=0.11,<0.12'
fi
"$venv/bin/python" -c 'import kmip; print("PyKMIP", kmip.__version__)'
