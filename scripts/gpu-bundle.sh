#!/usr/bin/env bash
# Packs what the GPU checks need into two archives, for a GPU machine that has the NVIDIA driver and
# CUDA's libraries but not this project's Debian dependencies (Qt, SentencePiece, ...):
#   build-gpu/        Release, no GUI, CUDA for CUDA_ARCHITECTURES (default 90: H100/H200)
#   OUT (default .gpu/): two archives, each under the device tool's 64 MiB transfer, each with
#   bin/ (stripped programs), lib/ (the Debian libraries they load, beside the C and C++ runtimes)
#   and shared/ (the ../shared files they read):
#     tests.tar.xz  sluice_gpu_tests and the model files the tests open
#     bench.tar.xz  sluice (its Qt and ICU libraries alone are 45 MB), sluice_kernel_bench and the
#                   instruction files
#     hybrid.tar.xz sluice_gpu_tests and the qwen35 / qwen35moe fixtures of its hybrid tests
#   scripts/gpu-check.sh runs them there, one archive per device call.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-.gpu}
arch=${CUDA_ARCHITECTURES:-90}
# BUILD_DIR: an existing Release build with CUDA for the device's architecture to take the
# programs from instead (its sluice may have the GUI: its Qt libraries travel with it).
build=${BUILD_DIR:-build-gpu}
if [ "$build" = build-gpu ]; then
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DSLUICE_GUI=OFF \
    "-DCMAKE_CUDA_ARCHITECTURES=$arch" >/dev/null
fi
cmake --build "$build" -j "${JOBS:-$(nproc)}" --target sluice sluice_gpu_tests sluice_kernel_bench
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
# part NAME PROGRAM...: stage/NAME/bin gets the programs, stage/NAME/lib every library they load
# except the C and C++ runtimes, which the machine has.
part() {
  local dir=$stage/$1
  shift
  mkdir -p "$dir"/{bin,lib,shared}
  cp "$@" "$dir/bin/" && strip -s "$dir"/bin/*
  ldd "$@" | awk '$3 ~ /^\// {print $3}' | sort -u |
    grep -v -E '/(libc|libm|libstdc\+\+|libgcc_s|ld-linux-x86-64)\.so' |
    while read -r lib; do cp -L "$lib" "$dir/lib/"; done
}
part tests "$build/bin/sluice_gpu_tests"
part bench "$build/bin/sluice" "$build/bin/sluice_kernel_bench"
part hybrid "$build/bin/sluice_gpu_tests"
shared=../shared
t=$stage/tests/shared b=$stage/bench/shared
for d in "$t" "$b"; do
  mkdir -p "$d/tokenizers" "$d/datasets"
  cp -r "$shared/tokenizers/llama2" "$d/tokenizers/"
  cp -r "$shared/datasets/en" "$d/datasets/"
done
cp -r "$shared/chat-templates" "$t/"
# The model files the GPU tests open, not every fixture: the whole folder does not fit the
# transfer. tiny-arch: each model's F32 GGUF, HF folder and references, every llama-q GGUF (the
# quantized tests), the MoE fixtures' quantized files.
mkdir -p "$t/models/tiny-arch"
cp -r "$shared/models/stories260K" "$t/models/"
cp "$shared/models/tiny-arch/"*.md "$shared/models/tiny-arch/"*.json "$t/models/tiny-arch/"
for m in llama-q llama-headdim qwen3 phi3 gemma2 gemma3 qwen3moe mixtral gpt-oss; do
  src=$shared/models/tiny-arch/$m dst=$t/models/tiny-arch/$m
  mkdir -p "$dst/gguf"
  cp -r "$src/expected" "$dst/"
  case $m in qwen3moe | mixtral | gpt-oss) ;; *) cp -r "$src/hf" "$dst/" ;; esac
  case $m in
    llama-q) cp "$src/gguf/"*.gguf "$dst/gguf/" ;;
    qwen3moe) cp "$src/gguf/$m-F32.gguf" "$src/gguf/$m-Q8_0.gguf" "$dst/gguf/" ;;
    mixtral) cp "$src/gguf/$m-"{F32,Q8_0,Q4_K_M}.gguf "$dst/gguf/" ;;
    gpt-oss) cp "$src/gguf/$m-"{F32,MXFP4}.gguf "$dst/gguf/" ;;
    *) cp "$src/gguf/$m-F32.gguf" "$dst/gguf/" ;;
  esac
done
# The hybrid models' fixtures (cuda_hybrid_test) fill an archive of their own: F32, Q8_0 and
# Q4_K_M files, HF folders and references of qwen35 and qwen35moe.
h=$stage/hybrid/shared/models/tiny-arch
mkdir -p "$h"
cp "$shared/models/tiny-arch/"*.md "$h/"
for m in qwen35 qwen35moe; do
  src=$shared/models/tiny-arch/$m
  mkdir -p "$h/$m/gguf"
  cp -r "$src/expected" "$src/hf" "$h/$m/"
  cp "$src/gguf/$m-"{F32,Q8_0,Q4_K_M}.gguf "$h/$m/gguf/"
done
mkdir -p "$out"
for name in tests bench hybrid; do
  # The tests open ../shared by the absolute path compiled into them: gpu-check.sh links it there.
  realpath "$shared" >"$stage/$name/shared-path"
  tar -C "$stage/$name" -cf - bin lib shared shared-path | xz -T0 -6 >"$out/$name.tar.xz"
  echo "gpu-bundle: $out/$name.tar.xz ($(du -h "$out/$name.tar.xz" | cut -f1))"
done
