#!/usr/bin/env bash
# Installs the extension's npm packages from the lock file (npm ci); skipped when node_modules was
# installed from this very lock (the stamp holds its digest), which saves the inner loop
# (test.sh --quick) a reinstall. scripts/test.sh runs it before its checks, scripts/vscode-test.sh
# before the build.
set -euo pipefail
cd "$(dirname "$0")/.."

lock_sha="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [ "$(cat node_modules/.empo2-lock-sha256 2>/dev/null)" != "$lock_sha" ]; then
  npm ci --no-audit --no-fund --loglevel=error </dev/null
  echo "$lock_sha" > node_modules/.empo2-lock-sha256
fi
