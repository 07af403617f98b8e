#!/usr/bin/env bash
# Installs Sluice's build and test dependencies from Debian 12. Idempotent: packages that are
# already installed are skipped, so repeated runs cost one dpkg query.
set -euo pipefail

packages=(
  build-essential make cmake ninja-build ccache pkg-config
  qt6-base-dev qt6-base-dev-tools qt6-httpserver-dev qt6-websockets-dev libqcustomplot-dev
  libsentencepiece-dev nlohmann-json3-dev libsqlite3-dev libcpp-httplib-dev
  # the structured-output tests' independent validator (tests/integration/validate_schema_outputs.py)
  python3-jsonschema
  libgtest-dev libgmock-dev
  # clang, libFuzzer and llvm-symbolizer for the fuzz harnesses (scripts/fuzz.sh)
  clang libclang-rt-14-dev llvm
  xvfb xauth dpkg-dev desktop-file-utils appstream
  # the Pairs tab reviewed by keys on a real X server (tests/integration/pair_review_xdotool_test.cpp)
  xdotool
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# node and npm: the test of `sluice serve` with the official openai npm package. A node from
# another source (NodeSource's nodejs ships its own npm and conflicts with Debian's npm) counts.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  missing+=(nodejs npm)
fi

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=sudo
  else
    echo "install-deps: missing packages (${missing[*]}) and not root; run as root" >&2
    exit 1
  fi
else
  SUDO=
fi

echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
