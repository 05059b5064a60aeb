#!/usr/bin/env bash
# The main job on the built-in default: trains the built-in policy with EMPO² on the built-in
# worlds, visible in VS Code. It installs what is missing, finds the built-in policy (shipped in
# the package; built once into the cache only for another recipe), then opens VS Code with
# EMPO² Studio (scripts/vscode-open.sh: code-server on 127.0.0.1 with its URL printed, or the
# local `code`) on a workspace of its own, .empo2/workspace (scripts/run-workspace.sh: an `empo2`
# launch configuration for F5, the runs in .empo2/runs), where the extension starts
# the host and the run: the trajectory tree fills, the metrics move, the tips appear. Each step
# says in the terminal what it does.
#
#   scripts/run.sh [--headless] [OVERRIDE ...]
#
#   --headless   train in this terminal instead (`empo2-host train`, progress bar, JSON result)
#   OVERRIDE     config overrides, e.g. algo.p_memory=0 (GRPO) or iterations=10
#
# Either way the run folder is .empo2/runs/<run-id>/ (metrics.jsonl, trajectories/, memory/).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

headless=false
if [ "${1:-}" = "--headless" ]; then headless=true; shift; fi
step() { printf 'EMPO²: %s\n' "$*" >&2; }

step "checking the training host's Python environment (.venv)"
bash scripts/setup-host.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
if $headless; then
  exec .venv/bin/empo2-host train --preset builtin "$@"
fi

step "finding the built-in policy"
.venv/bin/empo2-host build-policy >/dev/null  # the shipped weights; a build only for another recipe
# This starts a new run; one that an earlier run.sh left mid-way (Ctrl-C, a closed terminal) is
# not lost, and the person should hear where it is.
if [ -d .empo2/runs ]; then
  left="$(.venv/bin/empo2-host runs --state interrupted)"
  if [ -n "$left" ]; then
    echo "EMPO²: earlier runs stopped mid-way; the Trajectories view lists them and Resume continues one" \
         "(or: .venv/bin/empo2-host resume .empo2/runs/RUN). This starts a new run."
    echo "$left" | sed 's/^/  /'
  fi
fi
run="builtin"
if [ $# -gt 0 ]; then
  # The extension starts a preset or a config file: the overrides become one (a bad override is
  # reported here, in one sentence, before VS Code opens).
  mkdir -p .empo2
  run="$root/.empo2/run-config.json"
  step "checking the overrides: $*"
  .venv/bin/empo2-host config --preset builtin "$@" >"$run.tmp" && mv "$run.tmp" "$run"
fi
workspace="$(bash scripts/run-workspace.sh "$root")"
step "opening VS Code on $workspace (runs in .empo2/runs)"
exec bash scripts/vscode-open.sh --train "$run" "$workspace"
