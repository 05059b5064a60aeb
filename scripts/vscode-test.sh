#!/usr/bin/env bash
# The extension's whole test run, from a fresh clone: npm ci, a real VS Code (code-server) and
# Chromium into the cache (scripts/vscode-install.sh, a no-op when already there), type checks,
# the build, and the three test tiers (unit, integration in code-server's extension host,
# browser end to end). Ends with "N passed, N failed"; exits non-zero on any failure.
# Runs unattended (no stdin) and as root. EMPO2_TIERS="unit" runs only the unit tier.
set -euo pipefail
cd "$(dirname "$0")/.."

started=$(date +%s)
step() { printf '\n=== %s (%ss) ===\n' "$*" "$(( $(date +%s) - started ))"; }

# npm ci from the lock file, skipped when node_modules came from this very lock.
step "npm ci"
bash scripts/setup-node.sh </dev/null

# EMPO2_TIERS picks tiers (scripts/test.sh --quick runs "unit"); default all three.
read -r -a tiers <<< "${EMPO2_TIERS:-unit integration e2e}"
if [ "${tiers[*]}" != "unit" ]; then
  step "install code-server and chromium (cached)"
  bash scripts/vscode-install.sh </dev/null
fi

# The tests' own project is type checked by its compile (build:tests); the extension's and the
# webviews' projects are checked beside it: three tsc runs on two cores.
step "type check and build"
pids=()
npx tsc --noEmit -p tsconfig.json </dev/null & pids+=($!)
npx tsc --noEmit -p webview/tsconfig.json </dev/null & pids+=($!)
(npm run --silent build && npm run --silent build:tests) </dev/null & pids+=($!)
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
[ "$failed" = 0 ] || { echo "type check or build failed" >&2; exit 1; }

step "test (${tiers[*]})"
node test/harness/runTiers.mjs "${tiers[@]}" </dev/null

step "done"
