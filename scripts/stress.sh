#!/usr/bin/env bash
# Runs the desktop and GUI tests RUNS times in a row while a CPU-heavy process keeps a core
# busy, and prints the pass count. A flaky test shows up here long before CI meets it.
#   RUNS=20 bash scripts/stress.sh        (make stress)
set -uo pipefail
cd "$(dirname "$0")/.."
runs="${RUNS:-20}"
out="${STRESS_OUT:-.stress}"
mkdir -p "$out"

# stress-ng where installed, else busy loops: one per core but one, so the tests get a core.
load_pids=()
workers=$(( $(nproc) > 1 ? $(nproc) - 1 : 1 ))
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
  if .venv/bin/python -m pytest tests/desktop tests/gui -q -p no:cacheprovider >"$log" 2>&1; then
    passed=$((passed + 1))
    echo "run $run/$runs: passed ($(tail -1 "$log"))"
  else
    echo "run $run/$runs: FAILED, see $log:"
    grep -E '^(FAILED|ERROR)' "$log" | sed 's/^/  /'
  fi
done
echo "stress: $passed/$runs runs passed with ${workers} CPU-heavy worker(s) beside the tests"
[ "$passed" -eq "$runs" ]
