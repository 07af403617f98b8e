#!/usr/bin/env bash
# Configures and builds one flavour of Sluice.
#   scripts/build.sh release   build/        Release, CUDA when nvcc is found, GUI
#   scripts/build.sh asan      build-asan/   Debug (-O1) with AddressSanitizer + UBSan: engine, CLI, unit tests
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
    # Debug keeps the assertions; -O1 runs the tests about twice as fast as -O0 under the
    # sanitizers, and -g1 (functions and lines, enough for their stack traces) keeps objects small.
    args=(-DCMAKE_BUILD_TYPE=Debug "-DCMAKE_C_FLAGS_DEBUG=-O1 -g1" "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1"
          -DSLUICE_SANITIZE=address,undefined -DSLUICE_CUDA=OFF -DSLUICE_GUI=OFF -DSLUICE_WERROR=ON)
    ;;
  *)
    echo "build.sh: unknown flavour '$flavour' (release or asan)" >&2
    exit 2
    ;;
esac

cmake -S . -B "$dir" -G Ninja "${args[@]}" >/dev/null
cmake --build "$dir" -j "$jobs"
