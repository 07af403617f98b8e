#!/usr/bin/env bash
# ctest's integration.openai_client: installs the pinned openai package into the build tree
# (once: skipped when node_modules holds it) and runs openai_client_test.mjs against
# `sluice serve`. Usage: run.sh SOURCE_DIR WORK_DIR SLUICE MODEL
set -euo pipefail
src=$1 work=$2 sluice=$3 model=$4
mkdir -p "$work"
cp "$src/package.json" "$src/openai_client_test.mjs" "$work/"
if [ ! -f "$work/node_modules/openai/package.json" ]; then
  npm install --prefix "$work" --no-package-lock --no-audit --no-fund --loglevel=error
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
node "$work/openai_client_test.mjs" "$sluice" "$model" "$tmp"
