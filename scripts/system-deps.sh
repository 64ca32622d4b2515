#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages roundhouse needs, only those that are missing.
#   base: what the venv needs;  all: base + the desktop stack the tests use.
set -euo pipefail
group="${1:-all}"

base=(python3-venv)
desktop=()
case "$group" in
  base) wanted=("${base[@]}") ;;
  all) wanted=("${base[@]}" "${desktop[@]}") ;;
  *) echo "usage: $0 base|all" >&2; exit 2 ;;
esac

missing=()
for pkg in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null; then
  echo "roundhouse: missing packages ${missing[*]} and no apt-get to install them" >&2
  exit 1
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "roundhouse: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
