#!/usr/bin/env bash
# Builds the Debian package: build/sluice_<version>_<arch>.deb. The release configuration in
# build/, with CUDA for every supported architecture; only what the package holds is built (with
# Ninja, cpack installs what is there and builds nothing).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh package
(cd build && cpack -G DEB)
ls -1 build/*.deb
