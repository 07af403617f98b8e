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
if [ ! -x build/bin/sluice ]; then
  echo "run-demo.sh: build/bin/sluice is missing: build it first (make run, or scripts/build.sh app)" >&2
  exit 1
fi
# What this build holds and what it runs on: the CUDA backend and its architectures (make run
# builds CUDA only for this machine's GPU, and leaves it out without one) and the device found.
build/bin/sluice --version | grep -E '^(cuda|device):' | sed 's/^/run-demo.sh: /' || true
exec build/bin/sluice gui --model "$model" --dataset resources/samples/story_prompts.jsonl --start "$@"
