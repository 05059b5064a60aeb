#!/usr/bin/env bash
# Runs every test of the project from a fresh clone: creates the project's virtual environment
# (.venv) and installs the host into it when needed, then runs the host's test suite.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

bash scripts/setup-host.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 EMPO2_NO_PROGRESS=1

echo "== host tests (pytest)"
(cd host && ../.venv/bin/python -m pytest -q -p no:cacheprovider "$@")

echo "== extension tests (unit, integration in a real VS Code, browser end to end)"
bash scripts/vscode-test.sh
