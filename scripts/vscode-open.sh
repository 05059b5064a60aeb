#!/usr/bin/env bash
# Opens a folder (default: this repository) in VS Code with EMPO² Studio installed from a freshly
# built .vsix and pointed at the project's training host (.venv, created if missing):
#   - the local `code` when there is one (it installs the .vsix and opens a window);
#   - else a real VS Code in the browser: code-server on 127.0.0.1, the URL printed, running in
#     the foreground until Ctrl-C.
#
#   scripts/vscode-open.sh [--train PRESET|CONFIG.json] [--port N] [FOLDER]
#
#   --train builtin   once VS Code is up, the extension starts the host and trains the preset (or
#                     config file) live: the tree fills, the metrics move, tips appear (code-server
#                     only; in a local VS Code run "EMPO²: New Training Run" from the palette)
#   --port N          code-server's port (default 8765, or EMPO2_VSCODE_PORT)
#
# code-server's profile (settings, the installed extension, the host's Python) is this clone's own,
# $EMPO2_CACHE_DIR/vscode/profiles/<hash of the clone's path>, so two clones never start each
# other's host; EMPO2_VSCODE_PROFILE names another (the browser tests use one of their own).
#
# Prints the URL as one line `EMPO2_VSCODE_URL=http://127.0.0.1:PORT/?folder=...` before serving,
# and a line at each step before it. The .vsix is rebuilt only when what it is built from changed
# (a digest of its inputs, stamped beside it), and installed into code-server only when that
# build is not the one installed. code-server's own messages go to code-server.log in the
# profile (the terminal names it); a port already taken is said before.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

train=""
port="${EMPO2_VSCODE_PORT:-8765}"
folder="$root"
while [ $# -gt 0 ]; do
  case "$1" in
    --train) train="${2:?--train needs a preset name or a config file}"; shift 2 ;;
    --port) port="${2:?--port needs a number}"; shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0"; exit 0 ;;
    -*) echo "vscode-open: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) folder="$(cd "$1" && pwd)"; shift ;;
  esac
done

log() { printf 'vscode-open: %s\n' "$*" >&2; }

bash scripts/setup-host.sh
if [ ! -d node_modules ]; then
  log "installing the extension's build tools (npm ci, first time only)"
  npm ci --no-audit --no-fund --loglevel=error </dev/null
fi
vsix="$root/out/empo2-studio.vsix"
python="$root/.venv/bin/python"
digest="$(bash scripts/build-vsix.sh)"   # rebuilt only when its sources changed

if command -v code >/dev/null 2>&1 && [ -z "${EMPO2_FORCE_CODE_SERVER:-}" ]; then
  log "installing into the local VS Code"
  code --install-extension "$vsix" --force >/dev/null
  code "$folder"
  log "opened $folder in VS Code; set empo2.pythonPath to $python if the host is not found"
  exit 0
fi

log "checking code-server (installed once into the cache)"
eval "$(bash scripts/vscode-install.sh </dev/null)"   # EMPO2_VSCODE_NODE, EMPO2_CODE_SERVER
profile="${EMPO2_VSCODE_PROFILE:-${EMPO2_CACHE_DIR:-$HOME/.cache/empo2}/vscode/profiles/$(printf %s "$root" | sha256sum | cut -c1-12)}"
mkdir -p "$profile/user-data/User" "$profile/user-data/Machine" "$profile/extensions"
auto_start=false
[ -n "$train" ] && auto_start=true
# Each invocation is a launch of its own: it starts a new run, and a reload of its window goes
# on with that run (src/runs/autoStartPlan.ts).
launch="$(date +%s)-$$"
cat >"$profile/user-data/User/settings.json" <<JSON
{
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "extensions.autoUpdate": false,
  "extensions.autoCheckUpdates": false,
  "workbench.startupEditor": "none",
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  "chat.disableAIFeatures": true,
  // code-server would otherwise expose every port listening on the machine under /proxy/<port>
  "remote.autoForwardPorts": false,
  "security.workspace.trust.enabled": false,
  "empo2.autoStart": $auto_start,
  "empo2.autoStartRun": "$train",
  "empo2.autoStartLaunch": "$launch"
}
JSON
# Machine-scoped settings of a remote window (code-server is one) live in the Machine settings.
cat >"$profile/user-data/Machine/settings.json" <<JSON
{
  "empo2.pythonPath": "$python"
}
JSON
# Its own config file, so nothing is written to ~/.config/code-server.
touch "$profile/config.yaml"
cs() { "$EMPO2_VSCODE_NODE" "$EMPO2_CODE_SERVER" --config "$profile/config.yaml" --user-data-dir "$profile/user-data" --extensions-dir "$profile/extensions" "$@"; }
installed="$profile/extensions/.empo2-studio.inputs"
if [ "$(cat "$installed" 2>/dev/null)" = "$digest" ] && compgen -G "$profile/extensions/*empo2-studio*/package.json" >/dev/null; then
  log "the extension in code-server is this build"
else
  log "installing the extension into code-server"
  rm -f "$installed"
  cs --force --install-extension "$vsix" >/dev/null
  echo "$digest" >"$installed"
fi
url="http://127.0.0.1:$port/?folder=$folder"
server_log="$profile/code-server.log"
# code-server's messages go to its log from here on: say now what would stop it from serving.
if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
  echo "vscode-open: port $port is taken; stop what listens there or pick another with --port N (or EMPO2_VSCODE_PORT)." >&2
  exit 1
fi
echo "EMPO2_VSCODE_URL=$url"
log "serving VS Code at $url (open it in a browser; Ctrl-C stops it, and the training host with it)"
log "code-server's own messages go to $server_log"

# Ctrl-C stops the training host first and VS Code after it. Were both to get the terminal's
# SIGINT at once, the open tab would lose its server before the extension could say the host
# stopped, and show the run live until the browser gave up on the connection. So code-server runs
# in a session of its own (the terminal's Ctrl-C reaches only this script), under a watchdog that
# stops it if this script goes without stopping it (kill -9).
script_pid=$$
PATH="$(dirname "$EMPO2_VSCODE_NODE"):$PATH" setsid bash -c '
  parent=$1; shift
  "$@" & server=$!
  while kill -0 "$parent" 2>/dev/null && kill -0 "$server" 2>/dev/null; do sleep 1; done
  kill -TERM "$server" 2>/dev/null
  wait "$server"' vscode-server "$script_pid" \
  "$EMPO2_VSCODE_NODE" "$EMPO2_CODE_SERVER" \
  --config "$profile/config.yaml" --bind-addr "127.0.0.1:$port" --auth none --disable-telemetry --disable-update-check \
  --disable-workspace-trust --disable-getting-started-override \
  --user-data-dir "$profile/user-data" --extensions-dir "$profile/extensions" "$folder" >"$server_log" 2>&1 &
session=$!  # the session's leader: its process group holds code-server and all it started

# The training hosts code-server's extension hosts started (`python -m empo2.cli serve`): the
# session's descendants, found by walking the process tree down from its leader.
training_hosts() {
  ps -eo pid=,ppid=,args= | awk -v root="$session" '
    { pid[NR] = $1; parent[NR] = $2; host[NR] = ($0 ~ / -m empo2\.cli serve/) }
    END {
      inside[root] = 1
      do { grew = 0; for (i in pid) if ((parent[i] in inside) && !(pid[i] in inside)) { inside[pid[i]] = 1; grew = 1 } } while (grew)
      for (i in pid) if (host[i] && (pid[i] in inside)) print pid[i]
    }'
}

stop_all() {
  trap '' INT TERM HUP
  local hosts alive
  hosts="$(training_hosts)"
  if [ -n "$hosts" ]; then
    log "stopping the training host (a run in progress stays at its last checkpoint; Resume Run continues it)"
    # The host's first SIGINT waits for the iteration to end, the second stops waiting.
    kill -INT $hosts 2>/dev/null || true; sleep 0.5; kill -INT $hosts 2>/dev/null || true
    for _ in $(seq 100); do
      alive=0
      for pid in $hosts; do kill -0 "$pid" 2>/dev/null && alive=1; done
      [ "$alive" = 0 ] && break
      sleep 0.2
    done
    sleep 2  # the open tab shows the host stopped and its views no longer live
  fi
  log "stopping VS Code"
  kill -TERM -- "-$session" 2>/dev/null || true
  wait "$session" 2>/dev/null || true  # its TERM status is no failure of this script
  # The session's leader goes at once; code-server takes a moment to close its port. The
  # script returns when the whole session has gone (killed after 10 s).
  for _ in $(seq 50); do kill -0 -- "-$session" 2>/dev/null || break; sleep 0.2; done
  kill -KILL -- "-$session" 2>/dev/null || true
  exit 130
}
trap stop_all INT TERM HUP
wait "$session"
