#!/usr/bin/env bash
# Mutation testing of the modules that carry the algorithm's choices and the run folder's safety
# (docs/testing.md). Slow — hours for everything on two cores — so a tool to run by hand, not a
# CI step. Each mutant is one small realistic bug; a mutant that no test notices is a gap.
#
#   scripts/mutation.sh                       # host (mutmut) and extension (StrykerJS)
#   scripts/mutation.sh host ['empo2.training.update.*' ...]   # host only; optional mutmut name globs
#   scripts/mutation.sh extension [--incremental] [--mutate 'src/rpc/client.ts'] ...
#                                             # extension only; arguments go to `stryker run`
#   MUTATION_FILES='empo2/training/update.py' scripts/mutation.sh host 'empo2.training.update.x__keep_mask*'
#                                             # a subset fast: generate only these files' mutants
#
# Needs the optional extra `mutation` of the host (`pip install -e 'host[mutation]'`, done by
# nothing else) and `npm ci`. Writes test-output/mutation/report.md (per-module killed/total),
# with the raw results beside it. MUTATION_JOBS (default 1) sets the parallel mutants;
# MUTATION_BY_FUNCTION=1 makes the host's rows per mutated function.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
what="${1:-all}"
[ $# -gt 0 ] && shift
out="$root/test-output/mutation"
mkdir -p "$out"
jobs="${MUTATION_JOBS:-1}"

run_host() {
  if ! .venv/bin/python -c "import mutmut" 2>/dev/null; then
    echo "mutmut is not installed: .venv/bin/pip install -e 'host[mutation]'" >&2
    exit 2
  fi
  # MUTATION_FILES (globs relative to host/) narrows pyproject's only_mutate for this run:
  # mutmut generates every listed file's mutants before it runs one (scripts/mutmut_only.py).
  if [ -n "${MUTATION_FILES:-}" ]; then
    echo "== host: mutmut on $MUTATION_FILES"
  else
    echo "== host: mutmut on $(sed -n '/^only_mutate/,/^]/p' host/pyproject.toml | tr -d '\n ' )"
  fi
  (
    cd host
    # mutmut imports the mutated copy in host/mutants/; a PYTHONPATH to host/ would shadow it.
    unset PYTHONPATH
    export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 EMPO2_NO_PROGRESS=1 OMP_NUM_THREADS=1
    # Each mutant starts a pytest session; the tiny test policy is built once and kept here.
    export EMPO2_TEST_POLICY_CACHE="${EMPO2_TEST_POLICY_CACHE:-$root/test-output/mutation/policy-cache}"
    # ... and the real MiniLM's vectors are kept per text (host/tests/embedding_cache.py), so a
    # mutant outside embedding.py neither imports sentence_transformers nor loads the model.
    export EMPO2_TEST_EMBEDDING_CACHE="${EMPO2_TEST_EMBEDDING_CACHE:-$root/test-output/mutation/embedding-cache}"
    status=0
    mutmut=(../.venv/bin/python ../scripts/mutmut_only.py)
    nice -n 10 "${mutmut[@]}" run --max-children "$jobs" "$@" || status=$?
    "${mutmut[@]}" results --all true > "$out/host-results.txt"
    [ "$status" -eq 0 ] || echo "mutmut exited with $status (results so far are kept)" >&2
  )
}

run_extension() {
  echo "== extension: StrykerJS (mocha runner) on the models and the RPC client"
  nice -n 10 npx stryker run --concurrency "$jobs" "$@"
  cp reports/mutation/mutation.json "$out/extension-results.json"
}

case "$what" in
  host) run_host "$@" ;;
  extension) run_extension "$@" ;;
  all) run_host; run_extension ;;
  *) echo "usage: scripts/mutation.sh [all|host [mutant globs]|extension]" >&2; exit 2 ;;
esac

.venv/bin/python scripts/mutation_report.py \
  --mutmut "$out/host-results.txt" --stryker "$out/extension-results.json" \
  --equivalent "$root/scripts/mutation-equivalent.txt" ${MUTATION_BY_FUNCTION:+--by-function} \
  > "$out/report.md"
echo "== report: $out/report.md"
cat "$out/report.md"
