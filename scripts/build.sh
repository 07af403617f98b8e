#!/usr/bin/env bash
# Configures and builds one flavour of Sluice.
#   scripts/build.sh release   build/        Release, GUI, CUDA when nvcc is found: every target (tests too)
#   scripts/build.sh app       build/        the same configuration, only the sluice binary (make run),
#                                            CUDA only for the GPU this machine has (none: no CUDA backend)
#   scripts/build.sh package   build/        the same configuration, only the sluice binary, CUDA for every
#                                            supported architecture (make package)
#   scripts/build.sh asan      build-asan/   Debug (-O1) with AddressSanitizer + UBSan: the engine and its unit
#                                            tests (no app/: the CLI and its tests run in the release pass)
# CUDA_ARCHITECTURES overrides the CUDA architectures of release and app (CI builds one: 90).
# release, app and package share build/ and pass every option they differ in, so switching between
# them reconfigures that tree instead of leaving one's settings in the other's build.
set -euo pipefail
cd "$(dirname "$0")/.."
flavour=${1:-release}
jobs=${JOBS:-$(nproc)}
cuda_arch=${CUDA_ARCHITECTURES:-}

# Prints the CUDA architectures of the GPUs present (compute capability 8.6 -> 86, one per line
# each), nothing without an NVIDIA driver or GPU.
present_gpu_architectures() {
  command -v nvidia-smi >/dev/null 2>&1 || return 0
  nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | tr -d ' .' |
    grep -E '^[0-9]+$' | sort -u || true
}

# The architectures nvcc can build for (compute_90 -> 90, one per line), nothing without nvcc.
nvcc_architectures() {
  local nvcc
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  [ -x "$nvcc" ] || return 0
  "$nvcc" --list-gpu-arch 2>/dev/null | sed -n 's/^compute_\([0-9]*\)$/\1/p'
}

# The app flavour's CUDA: the architectures of the GPUs present that nvcc can build for. Sets
# cuda_args and says what it chose.
choose_app_cuda() {
  cuda_args=(-DSLUICE_CUDA=OFF)
  if [ -n "$cuda_arch" ]; then
    cuda_args=(-DSLUICE_CUDA=AUTO "-DCMAKE_CUDA_ARCHITECTURES=$cuda_arch")
    echo "build.sh: CUDA for the architectures in CUDA_ARCHITECTURES ($cuda_arch)"
    return
  fi
  local present buildable chosen=() arch
  present=$(present_gpu_architectures)
  buildable=$(nvcc_architectures)
  for arch in $present; do
    if grep -qx "$arch" <<<"$buildable"; then chosen+=("$arch"); fi
  done
  local no_cuda="building without the CUDA backend: the app runs on the CPU"
  if [ ${#chosen[@]} -gt 0 ]; then
    local list
    list=$(IFS=';' && echo "${chosen[*]}")
    cuda_args=(-DSLUICE_CUDA=AUTO "-DCMAKE_CUDA_ARCHITECTURES=$list")
    echo "build.sh: CUDA for this machine's GPU only (sm_${list//;/, sm_}; make package builds every architecture)"
  elif [ -z "$present" ]; then
    echo "build.sh: no NVIDIA GPU found (nvidia-smi); $no_cuda (make test and make package build it)"
  elif [ -z "$buildable" ]; then
    echo "build.sh: no CUDA compiler (nvcc) found; $no_cuda"
  else
    echo "build.sh: nvcc cannot build for this machine's GPU (sm_$(echo $present | sed 's/ /, sm_/g'));" \
      "$no_cuda"
  fi
}

target=()
case "$flavour" in
  release | app | package)
    dir=build
    args=(-DCMAKE_BUILD_TYPE=Release -DSLUICE_GUI=ON -DSLUICE_WERROR=ON)
    case "$flavour" in
      release)
        # Unset, the top-level CMakeLists.txt builds every supported architecture.
        args+=(-DSLUICE_CUDA=AUTO)
        if [ -n "$cuda_arch" ]; then
          args+=("-DCMAKE_CUDA_ARCHITECTURES=$cuda_arch")
        else
          args+=(-UCMAKE_CUDA_ARCHITECTURES)
        fi
        ;;
      app)
        choose_app_cuda
        args+=("${cuda_args[@]}")
        target=(--target sluice)
        ;;
      package)
        # A package runs on any supported GPU, whatever CUDA_ARCHITECTURES says.
        args+=(-DSLUICE_CUDA=AUTO -UCMAKE_CUDA_ARCHITECTURES)
        target=(--target sluice)
        ;;
    esac
    ;;
  asan)
    dir=build-asan
    # Debug keeps the assertions; -O1 runs the tests about twice as fast as -O0 under the
    # sanitizers, and -g1 (functions and lines, enough for their stack traces) keeps objects small.
    args=(-DCMAKE_BUILD_TYPE=Debug "-DCMAKE_C_FLAGS_DEBUG=-O1 -g1" "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1"
          -DSLUICE_SANITIZE=address,undefined -DSLUICE_CUDA=OFF -DSLUICE_GUI=OFF -DSLUICE_APP=OFF
          -DSLUICE_WERROR=ON)
    ;;
  *)
    echo "build.sh: unknown flavour '$flavour' (release, app, package or asan)" >&2
    exit 2
    ;;
esac

cmake -S . -B "$dir" -G Ninja "${args[@]}" >/dev/null
cmake --build "$dir" -j "$jobs" "${target[@]}"
