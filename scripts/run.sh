#!/usr/bin/env bash
# The main job on the built-in default: installs what is missing, builds the built-in policy
# once (cached), and trains it with EMPO² on the built-in worlds. The run folder is printed first
# and fills as the run goes: .empo2/runs/<run-id>/ (metrics.jsonl, trajectories/, memory/).
# Extra arguments go to `empo2-host train` (e.g. algo.p_memory=0 for GRPO).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

bash scripts/setup-host.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
exec .venv/bin/empo2-host train --preset builtin "$@"
