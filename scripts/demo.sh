#!/usr/bin/env bash
# The main job on the embedded defaults: a GUI request on a virtual desktop with the
# offline model, then a shell request. Shows the answers, the saved file and the logs.
set -euo pipefail
cd "$(dirname "$0")/.."
rh=.venv/bin/roundhouse
out="$PWD/logs/demo-files"
mkdir -p "$out"

echo "== A desktop request (virtual display, real text editor, offline model) =="
# --yes: a second run replaces the file, and replacing a file is asked about first.
$rh run "open the text editor, type Hello from roundhouse and save it as $out/hello.txt" \
  --model offline --desktop virtual --logs logs --task demo-gui --yes | tee logs/demo-gui.out
folder=$(sed -n 's/^Logs: //p' logs/demo-gui.out)
echo
echo "The saved file $out/hello.txt holds:"
cat "$out/hello.txt"
echo
echo "Snapshots in $folder:"
(cd "$folder" && ls -- *.png)

echo
echo "== A shell request =="
$rh run "how much disk space is free" --model offline --agent linux --logs logs --task demo-shell
