#!/usr/bin/env bash
# What the documentation's tests need beyond the common tools: jq, which the Transit-store migration block of
# docs/key-managers.md uses (tests/cli/openbao_volume.rs runs it as written). Idempotent and quiet.
set -euo pipefail
command -v jq >/dev/null || apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends jq >/dev/null
jq --version
