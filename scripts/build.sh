#!/usr/bin/env bash
# Configures and builds one flavour of Sluice.
#   scripts/build.sh release   build/        Release, CUDA when nvcc is found, GUI
#   scripts/build.sh asan      build-asan/   Debug with AddressSanitizer + UBSan: engine, CLI, unit tests
# CUDA_ARCHITECTURES overrides the CUDA architectures (CI builds one: 90).
set -euo pipefail
cd "$(dirname "$0")/.."
flavour=${1:-release}
jobs=${JOBS:-$(nproc)}
cuda_arch=${CUDA_ARCHITECTURES:-}

case "$flavour" in
  release)
    dir=build
    args=(-DCMAKE_BUILD_TYPE=Release -DSLUICE_GUI=ON -DSLUICE_WERROR=ON)
    if [ -n "$cuda_arch" ]; then args+=("-DCMAKE_CUDA_ARCHITECTURES=$cuda_arch"); fi
    ;;
  asan)
    dir=build-asan
    args=(-DCMAKE_BUILD_TYPE=Debug -DSLUICE_SANITIZE=address,undefined -DSLUICE_CUDA=OFF -DSLUICE_GUI=OFF
          -DSLUICE_WERROR=ON)
    ;;
  *)
    echo "build.sh: unknown flavour '$flavour' (release or asan)" >&2
    exit 2
    ;;
esac

cmake -S . -B "$dir" -G Ninja "${args[@]}" >/dev/null
cmake --build "$dir" -j "$jobs"
