#!/usr/bin/env bash
# The workspace ./scripts/run.sh opens: a folder of its own, .empo2/workspace, not the repository
# (whose .vscode/launch.json starts the extension for its developers). Its launch.json holds an
# `empo2` launch configuration, so F5 in Run and Debug plays an episode of the current run, and
# its settings keep the run folders in the repository's .empo2/runs. A file already there is
# left as it is (a person may have changed it).
#
#   scripts/run-workspace.sh [ROOT]   creates ROOT/.empo2/workspace (default: this repository)
#                                     and prints its path
set -euo pipefail
root="$(cd "${1:-$(dirname "${BASH_SOURCE[0]}")/..}" && pwd)"
workspace="$root/.empo2/workspace"
mkdir -p "$workspace/.vscode"

if [ ! -f "$workspace/.vscode/launch.json" ]; then
  cat >"$workspace/.vscode/launch.json" <<'JSON'
{
  "version": "0.2.0",
  "configurations": [
    {
      "type": "empo2",
      "request": "launch",
      "name": "EMPO²: power-device/0 of the current run",
      "task": "power-device",
      "variation": 0,
      "seed": 0,
      "mode": "memory-free",
      "stopOnEntry": true
    }
  ]
}
JSON
fi
if [ ! -f "$workspace/.vscode/settings.json" ]; then
  cat >"$workspace/.vscode/settings.json" <<'JSON'
{
  "empo2.runRoot": "../runs"
}
JSON
fi
echo "$workspace"
