#!/usr/bin/env bash
# Runs the model client's tests (where a load flake was once found), the desktop tests and
# the GUI tests RUNS times in a row while CPU-heavy processes keep LOAD cores busy, and
# prints the pass count. A flaky test shows up here long before CI meets it.
#   RUNS=20 LOAD=2 bash scripts/stress.sh                  (make stress)
#   STRESS_TESTS=tests/models/test_openai_client.py make stress     (one file)
set -uo pipefail
cd "$(dirname "$0")/.."
runs="${RUNS:-20}"
out="${STRESS_OUT:-.stress}"
read -r -a tests <<<"${STRESS_TESTS:-tests/models/test_openai_client.py tests/desktop tests/gui}"
mkdir -p "$out"

# stress-ng where installed, else busy loops: two by default, as many as a CI machine has.
load_pids=()
workers="${LOAD:-2}"
if command -v stress-ng >/dev/null; then
  stress-ng --cpu "$workers" --timeout 0 --quiet &
  load_pids+=($!)
else
  for _ in $(seq "$workers"); do
    ( while :; do :; done ) &
    load_pids+=($!)
  done
fi
trap 'kill "${load_pids[@]}" 2>/dev/null' EXIT INT TERM

passed=0
for run in $(seq "$runs"); do
  log="$out/run-$run.txt"
  if .venv/bin/python -m pytest "${tests[@]}" -q -p no:cacheprovider >"$log" 2>&1; then
    passed=$((passed + 1))
    echo "run $run/$runs: passed ($(tail -1 "$log"))"
  else
    echo "run $run/$runs: FAILED, see $log:"
    grep -E '^(FAILED|ERROR)' "$log" | sed 's/^/  /'
  fi
done
echo "stress: $passed/$runs runs of ${tests[*]} passed with ${workers} CPU-heavy worker(s) beside them"
[ "$passed" -eq "$runs" ]
