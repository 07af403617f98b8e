#!/usr/bin/env bash
# Builds the Debian package from the release build: build/sluice_<version>_<arch>.deb.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh release
(cd build && cpack -G DEB)
ls -1 build/*.deb
