#!/usr/bin/env bash
# The main job: the desktop app with the demo model (stories260K from ../shared) and the sample
# instruction file preloaded, started at once. Without a display it runs the same job headless
# and prints the results.
set -euo pipefail
cd "$(dirname "$0")/.."
model="$(cd .. && pwd)/shared/models/stories260K/gguf/stories260K-f32.gguf"
if [ ! -f "$model" ]; then
  echo "run-demo.sh: the demo model is missing: $model (../shared beside the checkout)" >&2
  exit 1
fi
exec build/bin/sluice gui --model "$model" --dataset resources/samples/story_prompts.jsonl --start "$@"
