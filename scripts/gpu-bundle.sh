#!/usr/bin/env bash
# Packs what the GPU checks need into one file, for a GPU machine that has the NVIDIA driver and
# CUDA's libraries but not this project's Debian dependencies (Qt, SentencePiece, ...):
#   build-gpu/        Release, no GUI, CUDA for CUDA_ARCHITECTURES (default 90: H100/H200)
#   OUT (default .gpu/bundle.tar.xz): bin/ (sluice, sluice_gpu_tests, sluice_backend_tests,
#   stripped), lib/ (the Debian libraries they load, beside the C and C++ runtimes), shared/ (the
#   ../shared files the tests and benchmarks read). scripts/gpu-check.sh runs it there.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-.gpu/bundle.tar.xz}
arch=${CUDA_ARCHITECTURES:-90}
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DSLUICE_GUI=OFF \
  "-DCMAKE_CUDA_ARCHITECTURES=$arch" >/dev/null
cmake --build build-gpu -j "${JOBS:-$(nproc)}" --target sluice sluice_gpu_tests sluice_backend_tests
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,lib,shared/tokenizers,shared/datasets}
programs=(build-gpu/bin/sluice build-gpu/bin/sluice_gpu_tests build-gpu/bin/sluice_backend_tests)
cp "${programs[@]}" "$stage/bin/" && strip -s "$stage"/bin/*
# Every library the programs load except the C and C++ runtimes, which the machine has.
ldd "${programs[@]}" | awk '$3 ~ /^\// {print $3}' | sort -u |
  grep -v -E '/(libc|libm|libstdc\+\+|libgcc_s|ld-linux-x86-64)\.so' |
  while read -r lib; do cp -L "$lib" "$stage/lib/"; done
shared=../shared
cp -r "$shared/models" "$shared/chat-templates" "$stage/shared/"
cp -r "$shared/tokenizers/llama2" "$stage/shared/tokenizers/"
cp -r "$shared/datasets/en" "$stage/shared/datasets/"
# The tests open ../shared by the absolute path compiled into them: gpu-check.sh links it there.
realpath "$shared" >"$stage/shared-path"
mkdir -p "$(dirname "$out")"
tar -C "$stage" -cf - bin lib shared shared-path | xz -T0 -6 >"$out"
echo "gpu-bundle: $out ($(du -h "$out" | cut -f1))"
