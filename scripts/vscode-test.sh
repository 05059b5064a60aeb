#!/usr/bin/env bash
# The extension's whole test run, from a fresh clone: npm ci, a real VS Code (code-server) and
# Chromium into the cache (scripts/vscode-install.sh, a no-op when already there), type checks,
# the build, and the three test tiers (unit, integration in code-server's extension host,
# browser end to end). Ends with "N passed, N failed"; exits non-zero on any failure.
# Runs unattended (no stdin) and as root; about 5 minutes on 2 cores once the cache is warm.
set -euo pipefail
cd "$(dirname "$0")/.."

started=$(date +%s)
step() { printf '\n=== %s (%ss) ===\n' "$*" "$(( $(date +%s) - started ))"; }

step "npm ci"
npm ci --no-audit --no-fund --loglevel=error </dev/null

step "install code-server and chromium (cached)"
bash scripts/vscode-install.sh </dev/null

step "type check"
npm run --silent typecheck </dev/null

step "build and test"
npm test </dev/null

step "done"
