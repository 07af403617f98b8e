#!/usr/bin/env bash
# ctest's integration.hub_folder_check: installs the pinned hyparquet and yaml packages into the
# build tree (once per change of the pins), writes two Hub folders with the
# fixture (tricky rows in several row groups; zero rows) and checks them with
# hub_folder_check.mjs. Missing node or npm fails the test. Usage: run.sh SOURCE_DIR WORK_DIR FIXTURE
set -euo pipefail
src=$1 work=$2 fixture=$3
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
node "$work/hub_folder_check.mjs" "$tmp/tricky" "$tmp/empty"
