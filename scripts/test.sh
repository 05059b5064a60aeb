#!/usr/bin/env bash
# Runs every test of the project from a fresh clone, every tier even when one fails, and ends
# with one table (tier, passed, failed, skipped, minutes) and the line "N passed, N failed".
# Exits non-zero when any tier failed or reported nothing.
#
#   ./scripts/test.sh           every tier: the checks (product language, ruff, ESLint and
#                               Prettier), the host's pytest suite, the extension's unit,
#                               integration (real VS Code) and e2e (Chromium)
#   ./scripts/test.sh --quick   the inner loop: the checks, the host tests not marked slow, the
#                               extension's unit tier (about 5 minutes)
#   ./scripts/test.sh -- ARGS   extra pytest arguments for the host tier (e.g. -- -k memory)
#
# Installs what it needs first: the host's locked Python environment (scripts/setup-host.sh),
# npm ci (scripts/setup-node.sh), and, for the full run, code-server and Chromium
# (scripts/vscode-install.sh).
set -uo pipefail

# The project's targets: the minutes each tier may take, and the whole command ("all"). The
# closing table prints a warning line for each one exceeded, so that drift shows the day it starts.
budgets="
check         1
host          8
unit          1
integration   3
e2e           5
all          15
"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

quick=0
pytest_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --) shift; pytest_args=("$@"); break ;;
    *) echo "test.sh: unknown argument '$1' (use --quick, or -- followed by pytest arguments)" >&2; exit 2 ;;
  esac
  shift
done

out="$root/test-output"
mkdir -p "$out"
rm -f "$out"/*-summary.json "$out"/host-junit.xml "$out"/tiers.tsv
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 EMPO2_NO_PROGRESS=1

# tier NAME passed failed skipped seconds [note]: one row of the closing table.
record() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >> "$out/tiers.tsv"; }
now() { date +%s; }

# --- installs: the host's locked environment and the extension's npm packages (each a no-op when
# its lock has not changed since it last ran) ------------------------------------------------------
started=$(now)
echo "== setup (host environment, npm packages)"
host_ready=1 node_ready=1
bash scripts/setup-host.sh || host_ready=0
bash scripts/setup-node.sh </dev/null || node_ready=0
if [ "$host_ready$node_ready" = 11 ]; then record setup - - - $(( $(now) - started )) "setup-host.sh, setup-node.sh"
else record setup 0 1 0 $(( $(now) - started )) "setup-host.sh or setup-node.sh failed"; fi

# --- checks: the repository speaks of the product; Python and TypeScript formatted and linted ----
started=$(now)
checks_passed=0
checks_failed=()
# check NAME COMMAND...: runs one check, counts it, and names it in the table's note if it fails.
check() {
  local name="$1"; shift
  echo "== check: $name"
  if "$@"; then checks_passed=$(( checks_passed + 1 )); else checks_failed+=("$name"); fi
}
check "product language" python3 scripts/check-product-language.py
if [ "$host_ready" = 1 ]; then
  check "ruff format" .venv/bin/ruff format --config host/pyproject.toml --check .
  check "ruff check" .venv/bin/ruff check --config host/pyproject.toml .
else
  checks_failed+=("ruff format (no host environment)" "ruff check (no host environment)")
fi
if [ "$node_ready" = 1 ]; then check "npm run lint" npm run --silent lint </dev/null
else checks_failed+=("npm run lint (no npm packages)"); fi
note=""
if [ ${#checks_failed[@]} -gt 0 ]; then note="$(printf '%s, ' "${checks_failed[@]}")"; note="failed: ${note%, }"; fi
record check "$checks_passed" "${#checks_failed[@]}" 0 $(( $(now) - started )) "$note"

# --- host: pytest ---------------------------------------------------------------------------
started=$(now)
echo "== host tests (pytest)"
if [ "$host_ready" = 0 ]; then
  record host 0 1 0 $(( $(now) - started )) "setup-host.sh failed"
else
  markers=()
  [ "$quick" = 1 ] && markers=(-m "not slow and not crash")
  # Two workers (EMPO2_TEST_WORKERS), a file to a worker (module fixtures are built once), one
  # torch thread each: the tests' models are too small to keep two threads busy.
  (cd host && OMP_NUM_THREADS=1 ../.venv/bin/python -m pytest -q -p no:cacheprovider --durations=25 \
      -n "${EMPO2_TEST_WORKERS:-2}" --dist loadfile \
      --junitxml="$out/host-junit.xml" ${markers[@]+"${markers[@]}"} ${pytest_args[@]+"${pytest_args[@]}"})
  status=$?
  if [ -f "$out/host-junit.xml" ]; then
    read -r tests failures errors skipped < <(python3 - "$out/host-junit.xml" <<'EOF'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
suite = root if root.tag == "testsuite" else root.find("testsuite")
print(*(suite.get(k, "0") for k in ("tests", "failures", "errors", "skipped")))
EOF
)
    failed=$(( failures + errors ))
    passed=$(( tests - failed - skipped ))
    note=""
    if [ "$status" != 0 ] && [ "$failed" = 0 ]; then failed=1; note="pytest exited $status"; fi
    record host "$passed" "$failed" "$skipped" $(( $(now) - started )) "$note"
  else
    record host 0 1 0 $(( $(now) - started )) "pytest exited $status and reported nothing"
  fi
fi

# --- extension: unit, integration, e2e (each reports its own summary file) ------------------------
started=$(now)
tiers=(unit integration e2e)
[ "$quick" = 1 ] && tiers=(unit)
echo "== extension tests (${tiers[*]})"
EMPO2_TIERS="${tiers[*]}" bash scripts/vscode-test.sh
status=$?
tier_seconds=0
for tier in "${tiers[@]}"; do
  summary="$out/$tier-summary.json"
  if [ -f "$summary" ]; then
    read -r passes failures pending seconds < <(node -e '
      const s = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
      console.log(s.passes ?? 0, s.failures ?? 0, s.pending ?? 0, Math.round(s.seconds ?? 0));' "$summary")
    tier_seconds=$(( tier_seconds + seconds ))
    record "$tier" "$passes" "$failures" "$pending" "$seconds"
  else
    record "$tier" 0 1 0 0 "did not run (scripts/vscode-test.sh exited $status before it)"
  fi
done
record "ext-setup" - - - $(( $(now) - started - tier_seconds )) "installs, type check, build"

# --- one table -----------------------------------------------------------------------------------
python3 - "$out/tiers.tsv" "$budgets" <<'EOF'
import sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1])]
budgets = {name: float(minutes) for name, minutes in (line.split() for line in sys.argv[2].strip().splitlines())}
print("\n=== summary ===")
print(f"{'tier':<12} {'passed':>7} {'failed':>7} {'skipped':>8} {'minutes':>8}  note")
total_passed = total_failed = 0
for tier, passed, failed, skipped, seconds, note in (r + [""] * (6 - len(r)) for r in rows):
    print(f"{tier:<12} {passed:>7} {failed:>7} {skipped:>8} {int(seconds) / 60:>8.1f}  {note}")
    if passed != "-":
        total_passed += int(passed); total_failed += int(failed)
minutes = {r[0]: int(r[4]) / 60 for r in rows}
minutes["all"] = sum(int(r[4]) for r in rows) / 60
print(f"{'all':<12} {'':>7} {'':>7} {'':>8} {minutes['all']:>8.1f}")
for tier, budget in budgets.items():
    if tier in minutes and minutes[tier] > budget:
        print(f"warning: {tier} took {minutes[tier]:.1f} min, over its budget of {budget:g} min")
print(f"{total_passed} passed, {total_failed} failed")
sys.exit(1 if total_failed else 0)
EOF
