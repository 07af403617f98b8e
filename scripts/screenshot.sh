#!/usr/bin/env bash
# Runs the desktop app under Xvfb (a 1280x800 screen, or SCREEN=WxH) with the demo model on the
# 5000 Alpaca rows, saving pictures of the window every few seconds and at the end into the
# directory given; further arguments go to `sluice gui` (a later --dataset replaces the demo's).
#   [SCREEN=1280x720] scripts/screenshot.sh OUT_DIR [--json-schema FILE | --choice TEXT ...]
# With --compare A.sluicejob --compare B.sluicejob it runs no job: it saves one picture of the two
# jobs' comparison (first row selected) as OUT_DIR/compare-000.png.
set -euo pipefail
out=${1:?usage: scripts/screenshot.sh OUT_DIR [sluice gui options]}
shift
cd "$(dirname "$0")/.."
shared="$(cd .. && pwd)/shared"
[ -x build/bin/sluice ] || scripts/build.sh release
mkdir -p "$out"
out=$(cd "$out" && pwd)
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$(mktemp -d)}
if [ "${1:-}" = "--compare" ]; then
  xvfb-run -a -s "-screen 0 ${SCREEN:-1280x800}x24" build/bin/sluice gui --screenshot "$out" "$@"
  ls -1 "$out"
  exit 0
fi
xvfb-run -a -s "-screen 0 ${SCREEN:-1280x800}x24" build/bin/sluice gui \
  --model "$shared/models/stories260K/gguf/stories260K-f32.gguf" \
  --dataset "$shared/datasets/en/alpaca_5000.json" \
  --start --quit-when-done --screenshot "$out" --screenshot-every 2 "$@"
ls -1 "$out"
