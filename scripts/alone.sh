#!/usr/bin/env bash
# Runs every test file alone, in a random order, each on an empty /tmp of its own, as on a
# fresh machine: a test that passes only after another one left something behind (a folder
# an X server made, a file in /tmp) fails here. Prints one line per file and the count.
#   bash scripts/alone.sh                  # every file under tests/
#   bash scripts/alone.sh tests/test_batch_ray.py tests/desktop/test_input.py
#   SEED=7 bash scripts/alone.sh           # the same order again
# As root (the empty /tmp is a tmpfs mounted in a mount namespace of the file's own run,
# never seen outside it). Logs: .alone/FILE.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "roundhouse: $0 needs root (unshare, mount)" >&2; exit 1; }
case "$(pwd -P)/" in
  /tmp/*) echo "roundhouse: $0 hides /tmp, and this checkout is in it: run it from another" >&2; exit 2 ;;
esac
out="${ALONE_OUT:-.alone}"
seed="${SEED:-$RANDOM}"
mkdir -p "$out"

if [ $# -gt 0 ]; then files=("$@"); else mapfile -t files < <(find tests -name 'test_*.py' | sort); fi
mapfile -t files < <(printf '%s\n' "${files[@]}" | shuf --random-source=<(yes "$seed"))
echo "roundhouse: ${#files[@]} test files alone, order seed $seed"

failed=()
for file in "${files[@]}"; do
  log="$out/$(tr / _ <<<"$file").txt"
  started=$SECONDS
  if unshare --mount --propagation private sh -c \
    'mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /tmp && exec "$@"' sh \
    .venv/bin/python -m pytest "$file" -q -p no:cacheprovider >"$log" 2>&1; then
    echo "ok     $file ($((SECONDS - started)) s)"
  else
    echo "FAILED $file ($((SECONDS - started)) s), see $log:"
    grep -E '^(FAILED|ERROR)' "$log" | sed 's/^/  /'
    failed+=("$file")
  fi
done
echo "alone: $((${#files[@]} - ${#failed[@]}))/${#files[@]} files passed, each alone on an empty /tmp"
[ "${#failed[@]}" -eq 0 ]
