#!/usr/bin/env bash
# The main job on the embedded defaults: a request, the offline model, a log folder.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/roundhouse run "how much disk space is free" --model offline --logs logs --task demo --yes
