#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, over the bundle scripts/gpu-bundle.sh made:
# the GPU tests (ctest -L gpu's tests, run directly), the quantized CPU kernels' bit tests on that
# machine's CPU, the Llama-3-8B roofline of bench/RESULTS.md, and issue 29's decode steps of the
# Llama-3.1-8B shape in Q4_K, Q8_0 and BF16 against the measured floor (VRAM in the backend line). Logs go to LOGS (default
# /tmp/gpu-check). The tests open ../shared by the absolute path compiled into them (the building
# checkout's), so that path is linked to the bundle's copy when it does not exist here.
set -uo pipefail
bundle=${1:-.gpu/bundle.tar.xz}
logs=${LOGS:-/tmp/gpu-check}
x=$(mktemp -d)
mkdir -p "$logs"
tar -xJf "$bundle" -C "$x" || { echo "gpu-check: cannot unpack $bundle" >&2; exit 1; }
shared_dir=$(cat "$x/shared-path")
if [ ! -e "$shared_dir" ]; then
  mkdir -p "$(dirname "$shared_dir")" && ln -s "$x/shared" "$shared_dir"
fi
export LD_LIBRARY_PATH=$x/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
b=$x/bin
step() { echo "=== $* ($(date +%T))"; }
step machine
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
grep -m1 "model name" /proc/cpuinfo
"$b/sluice" --version | tail -4
step "quantized CPU kernels (bits of every SIMD version against the scalar one)"
"$b/sluice_backend_tests" --gtest_filter='*Quant*' >"$logs/cpu_quant.log" 2>&1
echo "rc $?"; grep -E "kernel versions|PASSED|FAILED" "$logs/cpu_quant.log"
step "GPU tests"
"$b/sluice_gpu_tests" >"$logs/gpu_tests.log" 2>&1
echo "rc $?"; grep -E "^\[==========\] [0-9]|^\[  (PASSED  |FAILED  |SKIPPED )\] [0-9]|^\[  FAILED  \] [A-Z]" "$logs/gpu_tests.log"
step "roofline, Llama-3-8B shape, BF16"
"$b/sluice" bench --roofline --device cuda --dummy-weights llama-3-8b \
  --input "$x/shared/datasets/en/alpaca_5000.json" --limit 500 --max-tokens 256 \
  >"$logs/roofline.log" 2>&1
echo "rc $?"; grep -E "^GPU:|^\| |^sluice" "$logs/roofline.log"
for dtype in q4_k q8_0 bf16; do
  step "issue 29: Llama-3.1-8B shape, $dtype weights, decode against the floor"
  "$b/sluice" bench --device cuda --dummy-weights llama-3.1-8b --dummy-dtype "$dtype" \
    --batched 1,8,32,128 --prompt-tokens 128 --max-tokens 32 >"$logs/batched-$dtype.log" 2>&1
  echo "rc $?"; grep -E "^backend:|^weights held|^read bandwidth|^\| " "$logs/batched-$dtype.log"
done
step "issue 29: FP8 KV cache, Llama-3.1-8B shape, BF16 weights, the same memory share"
for kv in auto fp8; do
  "$b/sluice" bench --device cuda --dummy-weights llama-3.1-8b --kv-cache-dtype "$kv" \
    --batched 1,32,256 --prompt-tokens 1024 --max-tokens 32 >"$logs/kv-$kv.log" 2>&1
  echo "kv $kv rc $?"; grep -E "^backend:|KV|^\| " "$logs/kv-$kv.log"
done
step done
