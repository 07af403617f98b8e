#!/usr/bin/env bash
# ctest's integration.hub_folder_check: installs the pinned hyparquet and yaml packages into the
# build tree (once per change of the pins), writes two Hub folders with the
# fixture (tricky rows in several row groups; zero rows) and a third with `sluice jobs export
# --format hub` from a job that `sluice generate` ran on MODEL (3 prompts, n = 2), and checks
# them with hub_folder_check.mjs, and a fourth that `sluice pipeline run` exports (DPO pairs).
# Missing node or npm fails the test.
# Usage: run.sh SOURCE_DIR WORK_DIR FIXTURE SLUICE MODEL
set -euo pipefail
src=$1 work=$2 fixture=$3 sluice=$4 model=$5
command -v node >/dev/null || { echo "hub_folder_check: node is missing (scripts/install-deps.sh)" >&2; exit 1; }
mkdir -p "$work"
cp "$src/package.json" "$src/hub_folder_check.mjs" "$work/"
# Installed again whenever package.json's pins change; hub_folder_check.mjs still checks the
# versions it loads against the pins.
if ! cmp -s "$src/package.json" "$work/node_modules/.sluice-package.json"; then
  npm install --prefix "$work" --no-package-lock --no-audit --no-fund --loglevel=error
  cp "$src/package.json" "$work/node_modules/.sluice-package.json"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$fixture" "$tmp/tricky" "$tmp/empty"
printf '%s\n' '{"messages": [{"role": "user", "content": "Tell me a story"}]}' \
  '{"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Caf\u00e9 \ud83d\ude00"}]}' \
  '{"messages": [{"role": "user", "content": ""}]}' >"$tmp/input.jsonl"
"$sluice" generate --model "$model" --input "$tmp/input.jsonl" --output "$tmp/out.jsonl" \
  --job "$tmp/story.sluicejob" --n 2 --max-tokens 16 --temperature 0.8 --seed 5 --quiet
"$sluice" jobs export "$tmp/story.sluicejob" --format hub --output "$tmp/cli"
# A folder in use is refused (exit 1) unless --overwrite.
if "$sluice" jobs export "$tmp/story.sluicejob" --format hub --output "$tmp/cli" 2>/dev/null; then
  echo "hub_folder_check: a second export into the same folder was not refused" >&2; exit 1
fi
"$sluice" jobs export "$tmp/story.sluicejob" --format hub --output "$tmp/cli" --overwrite
# A pipeline (YAML description): 8 prompts, n = 2, three judge ratings each, dedup, export.
for p in "Tell a story about a cat." "Tell a story about a dog." "Tell a story about a cat." \
  "Write about the sea." "Tell a story about a bird." "Write about the moon." \
  "Write a poem about rain." "Tell a story about a fox."; do
  printf '{"prompt": "%s"}\n' "$p"
done >"$tmp/prompts.jsonl"
cat >"$tmp/pipeline.yaml" <<YAML
name: "tiny dpo: a test"
steps:
  - step: generate
    options:
      model: "$model"
      input: prompts.jsonl
      n: 2
      temperature: 0.9
      seed: 3
      max-tokens: 24
  - step: judge
    k: 3
    rationale_chars: 20
    options:
      max-tokens: 48
      temperature: 1.0
  - step: dedup
  - step: export
    license: cc-by-4.0
YAML
"$sluice" pipeline run "$tmp/pipeline.yaml" --dir "$tmp/pipe" --quiet
node "$work/hub_folder_check.mjs" "$tmp/tricky" "$tmp/empty" "$tmp/cli" 6 \
  "$tmp/pipe/dataset" "$(wc -l <"$tmp/pipe/dataset/data/train.jsonl")"
