#!/usr/bin/env bash
# The tests that race a loaded machine, run on a loaded machine: the host's sharding, distributed
# and flaky-link tests and the browser's flaky-link file, with CPU-burning processes beside them
# (two by default: as many as a CI machine has cores), RUNS times in a row. Prints one line per
# run and ends with "N passed, N failed" (runs); exits non-zero if any run failed.
#
#   ./scripts/stress-tests.sh            5 runs, 2 burners
#   RUNS=3 BURNERS=1 ./scripts/stress-tests.sh
#
# Needs what ./scripts/test.sh installs (the .venv, node_modules, code-server and Chromium).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
runs="${RUNS:-5}"
burners="${BURNERS:-2}"
log_dir="$root/test-output/stress"
mkdir -p "$log_dir"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 EMPO2_NO_PROGRESS=1

burner_pids=()
stop_burners() { [ ${#burner_pids[@]} -eq 0 ] || kill "${burner_pids[@]}" 2>/dev/null; burner_pids=(); }
trap stop_burners EXIT INT TERM
for _ in $(seq "$burners"); do
  python3 -c 'while True: pass' &
  burner_pids+=($!)
done
echo "stress: $burners CPU burners beside the tests (pids ${burner_pids[*]})"

npm run --silent build >/dev/null && npm run --silent build:tests >/dev/null || {
  echo "stress: the extension did not build" >&2; exit 1; }

passed=0 failed=0
for run in $(seq "$runs"); do
  started=$(date +%s)
  host_log="$log_dir/run-$run-host.log" e2e_log="$log_dir/run-$run-e2e.log"
  (cd host && ../.venv/bin/python -m pytest -q -p no:cacheprovider \
      tests/test_sharding.py tests/test_distributed.py tests/test_server_flaky_link.py) > "$host_log" 2>&1
  host_status=$?
  EMPO2_E2E_FILES=07-flaky-link node test/harness/runTiers.mjs e2e > "$e2e_log" 2>&1
  e2e_status=$?
  minutes=$(python3 -c "print(f'{($(date +%s) - $started) / 60:.1f}')")
  host_line=$(grep -E '[0-9]+ (passed|failed)' "$host_log" | tail -1)
  e2e_line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$e2e_log" | tail -1)
  if [ "$host_status" = 0 ] && [ "$e2e_status" = 0 ]; then
    passed=$((passed + 1)); verdict=green
  else
    failed=$((failed + 1)); verdict=RED
  fi
  echo "run $run: $verdict in $minutes min | host: ${host_line:-no result} | e2e flaky-link: ${e2e_line:-no result}"
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
