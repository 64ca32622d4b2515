#!/usr/bin/env bash
# The fault-injection suite: each fault is injected into real processes by its tests, and
# the table says whether it was survived as specified. "data lost" is what the tests
# found missing from the log folder: they assert whole logs, so a pass means 0.
#   make faults            (the same tests run in make test, with smaller counts)
set -uo pipefail
cd "$(dirname "$0")/.."
py=.venv/bin/python
export RH_RANDOM_KILLS="${RH_RANDOM_KILLS:-30}"      # shell sessions SIGKILLed, then resumed
export RH_RANDOM_GUI_KILLS="${RH_RANDOM_GUI_KILLS:-5}"  # GUI sessions, the same
export RH_SERVE_LOAD_CALLS="${RH_SERVE_LOAD_CALLS:-200}"  # calls per client, 20 clients
out="${FAULTS_OUT:-.faults}"
mkdir -p "$out"

# name | pytest arguments
faults=(
  "device server dies (SIGKILL, restart)|tests/desktop/test_mcp.py -k restarted_within_the_window or gone_for_good or server_dies"
  "application hangs (SIGSTOP, then SIGCONT)|tests/gui/test_gui_rounds.py -k hung_application"
  "accessibility bus dies (launcher, bus, registry)|tests/desktop/test_a11y_bus.py"
  "display dies (SIGKILL Xvfb)|tests/gui/test_gui_rounds.py -k display_that_dies"
  "busy apps when their desktop stops (SIGSTOP)|tests/desktop/test_reaper.py"
  "model endpoint: 429 storm, 5xx, reset, endless body|tests/models/test_openai_client.py tests/test_openai_rounds.py -k storm or reset or never_ends or broken_bodies or past_max_retries or malformed"
  "disk fills while logging (tmpfs)|tests/test_disk_full.py"
  "random kills ($RH_RANDOM_KILLS shell + $RH_RANDOM_GUI_KILLS GUI), then resume|tests/test_random_kills.py"
  "hostile page and document|tests/gui/test_gui_rounds.py -k gives_orders"
  "load on serve (20 clients x $RH_SERVE_LOAD_CALLS calls)|tests/desktop/test_mcp.py -k concurrent_clients"
  "fuzzed inputs (hypothesis, 500 examples per parser)|tests/fuzz"
)

failed=0
printf '%-58s %-10s %s\n' "fault" "survived" "data lost"
for entry in "${faults[@]}"; do
  name="${entry%%|*}"
  args="${entry#*|}"
  log="$out/$(echo "$name" | tr -c 'A-Za-z0-9' '_' | cut -c1-40).txt"
  paths=() ; expr=""
  read -r -a words <<<"${args%% -k *}"
  paths=("${words[@]}")
  [[ "$args" == *" -k "* ]] && expr="${args#* -k }"
  if [ -n "$expr" ]; then
    $py -m pytest -q -s -p no:cacheprovider "${paths[@]}" -k "$expr" >"$log" 2>&1
  else
    $py -m pytest -q -s -p no:cacheprovider "${paths[@]}" >"$log" 2>&1
  fi
  code=$?
  summary=$(tail -1 "$log")
  if [ $code -eq 0 ]; then
    printf '%-58s %-10s %s   (%s)\n' "$name" "yes" "0" "$summary"
  else
    failed=1
    printf '%-58s %-10s %s   (%s; see %s)\n' "$name" "NO" "?" "$summary" "$log"
  fi
done
grep -h "^serve load:" "$out"/*.txt 2>/dev/null || true
exit $failed
