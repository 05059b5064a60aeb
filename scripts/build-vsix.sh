#!/usr/bin/env bash
# Builds the extension's package, out/empo2-studio.vsix (`npm run package`), only when what it
# is built from changed since its last build: the digest of those files (.vscodeignore says what
# the package ships) is stamped beside it, in out/empo2-studio.vsix.inputs. Says which on stderr
# and prints the digest, so a caller can tell whether an installed copy is this build.
#
#   scripts/build-vsix.sh      (from any folder; works on the clone it belongs to)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
log() { printf 'vscode-open: %s\n' "$*" >&2; }

inputs=(package.json package-lock.json esbuild.mjs tsconfig.json tsconfig.base.json .vscodeignore
        README.md CHANGELOG.md LICENSE src webview media host/empo2 host/pyproject.toml host/README.md
        protocol/empo2-protocol.schema.json scripts/setup-host.sh)
# Names and contents, in a fixed order; a file missing from this clone simply takes no part.
present=()
for input in "${inputs[@]}"; do [ -e "$input" ] && present+=("$input"); done
digest="$(find "${present[@]}" -type f ! -name '*.pyc' ! -path '*/__pycache__/*' -print0 |
  sort -z | xargs -0 -r sha256sum | sha256sum | cut -d' ' -f1)"
vsix="out/empo2-studio.vsix"
if [ -f "$vsix" ] && [ "$(cat "$vsix.inputs" 2>/dev/null)" = "$digest" ]; then
  log "the extension is unchanged since its last build: using $vsix"
else
  log "building the extension ($vsix; about 25 s)"
  rm -f "$vsix.inputs"
  npm run --silent package >/dev/null
  echo "$digest" >"$vsix.inputs"
fi
echo "$digest"
