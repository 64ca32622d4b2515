#!/usr/bin/env bash
# Runs a command on this machine as if only some of its text editors were installed, as the
# launcher (and every roundhouse process it starts) sees them:
#   scripts/with-apps.sh gedit make test              # gedit only
#   scripts/with-apps.sh gnome-text-editor make demo  # GNOME Text Editor only
#   scripts/with-apps.sh both make test               # both (GNOME's default first)
# An application is "not installed" the way the desktop-entry spec lets a system hide one:
# an entry of the same id with Hidden=true earlier in XDG_DATA_DIRS. Nothing is uninstalled:
# programs asked for by name (the tests' own `gedit --standalone`) still run.
set -euo pipefail
case "${1:-}" in
  gedit) hidden=(org.gnome.TextEditor.desktop) ;;
  gnome-text-editor) hidden=(org.gnome.gedit.desktop) ;;
  both) hidden=() ;;
  *) echo "usage: $0 gedit|gnome-text-editor|both COMMAND..." >&2; exit 2 ;;
esac
shift
[ $# -gt 0 ] || { echo "usage: $0 gedit|gnome-text-editor|both COMMAND..." >&2; exit 2; }
overlay=$(mktemp -d "${TMPDIR:-/tmp}/roundhouse-apps.XXXXXX")
trap 'rm -rf "$overlay"' EXIT
mkdir -p "$overlay/applications"
for id in ${hidden[@]+"${hidden[@]}"}; do
  printf '[Desktop Entry]\nType=Application\nName=%s\nHidden=true\n' "$id" >"$overlay/applications/$id"
done
export XDG_DATA_DIRS="$overlay:${XDG_DATA_DIRS:-/usr/local/share:/usr/share}"
"$@"
