#!/usr/bin/env bash
# A local AWS API for tests/cli/aws.rs: PyPI's moto[server] (KMS, S3, Secrets Manager, SSM, STS, IAM on one port) in
# its own venv at /opt/moto-venv (its Flask stack and pins stay out of the other tools' site-packages), and boto3,
# the oracle of tests/interop/aws/aws_oracle.py, for the system python3. Idempotent and quiet.
set -euo pipefail
venv=/opt/moto-venv
if ! "$venv/bin/moto_server" --help >/dev/null 2>&1; then
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check 'moto[server]>=5,<6'
fi
python3 -c 'import boto3' 2>/dev/null || python3 -m pip install --quiet --disable-pip-version-check 'boto3>=1.34,<2'
"$venv/bin/python" -c 'import moto; print("moto", moto.__version__)'
