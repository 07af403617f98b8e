#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, over an archive scripts/gpu-bundle.sh made
# (one per device call: they do not fit one transfer):
#   gpu-check.sh tests [.gpu/tests.tar.xz]  the GPU tests (ctest -L gpu's tests, run directly)
#   gpu-check.sh kernels [.gpu/bench.tar.xz] sluice_kernel_bench: the integer GEMV's variants and
#     the tiles against cuBLAS on BF16, on the Llama-3.1-8B shape's matrices
#   gpu-check.sh hybrid [.gpu/hybrid.tar.xz] the GPU tests of the hybrid models (cuda_hybrid_test),
#     whose fixtures do not fit the tests archive
#   gpu-check.sh profile [.gpu/bench.tar.xz] Nsight Compute's time for each kernel of one eager
#     decode step (SLUICE_PROFILE_STEP marks it with an NVTX range) of the Llama-3.1-8B shape:
#     Q4_K at 1 and 8 tokens, BF16 at 1; CSV files in LOGS (scripts/kernel-times.py sums them)
#   gpu-check.sh bench [.gpu/bench.tar.xz]  issue 29's decode steps of the Llama-3.1-8B shape in
#     Q4_K, Q8_0 and BF16 against the measured floor (VRAM in the backend line), issue 30's
#     mixtures of experts (Qwen3-30B-A3B in Q4_K on the GPU and with --cpu-moe, gpt-oss-20b in
#     MXFP4), the FP8 KV cache, and the Llama-3-8B roofline of bench/RESULTS.md
# Logs go to LOGS (default /tmp/gpu-check). A device lease is short: every step has a time limit,
# and no step starts once BUDGET seconds (default 420) have passed, so it returns with the logs
# it has. The tests open ../shared by the absolute path compiled into them (the building
# checkout's), so that path is linked to the archive's copy when it does not exist here.
set -uo pipefail
mode=${1:?usage: gpu-check.sh tests|hybrid|kernels|bench|profile [ARCHIVE]}
default_bundle=$mode
[ "$mode" = profile ] || [ "$mode" = kernels ] && default_bundle=bench
bundle=${2:-.gpu/$default_bundle.tar.xz}
logs=${LOGS:-/tmp/gpu-check}
budget=${BUDGET:-420}
x=$(mktemp -d)
mkdir -p "$logs"
tar -xJf "$bundle" -C "$x" || { echo "gpu-check: cannot unpack $bundle" >&2; exit 1; }
shared_dir=$(cat "$x/shared-path")
if [ ! -e "$shared_dir" ]; then
  mkdir -p "$(dirname "$shared_dir")" && ln -s "$x/shared" "$shared_dir"
fi
export LD_LIBRARY_PATH=$x/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
b=$x/bin
alpaca=$x/shared/datasets/en/alpaca_5000.json
step() { echo "=== $* ($(date +%T), ${SECONDS}s)"; }
# run LIMIT LOG COMMAND...: runs COMMAND with its output in LOG, for at most LIMIT seconds and
# never past the budget; prints its exit status (124: stopped at the limit).
run() {
  local limit=$1 log=$2
  shift 2
  local left=$((budget - SECONDS))
  if [ "$left" -lt 15 ]; then
    echo "skipped: the budget is spent"
    return 1
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  timeout "$limit" "$@" >"$logs/$log" 2>&1
  echo "rc $?"
}
bench_lines() { grep -E "^backend:|^weights held|^read bandwidth|^Runs on|KV|^\| " "$logs/$1"; }

step machine
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
grep -m1 "model name" /proc/cpuinfo

if [ "$mode" = hybrid ]; then
  step "GPU tests of the hybrid models"
  run 300 gpu_hybrid.log "$b/sluice_gpu_tests" --gtest_filter='*Hybrid*'
  grep -E "^\[==========\] [0-9]|^\[  (PASSED  |FAILED  |SKIPPED )\] [0-9]|^\[  FAILED  \] [A-Z]|measured" \
    "$logs/gpu_hybrid.log"
  step done
  exit 0
fi

if [ "$mode" = tests ]; then
  step "GPU tests"
  run 300 gpu_tests.log "$b/sluice_gpu_tests" --gtest_filter='-*Hybrid*'  # their archive: hybrid
  grep -E "^\[==========\] [0-9]|^\[  (PASSED  |FAILED  |SKIPPED )\] [0-9]|^\[  FAILED  \] [A-Z]" \
    "$logs/gpu_tests.log"
  step done
  exit 0
fi

if [ "$mode" = kernels ]; then
  step "the integer GEMV's variants and the tiles on Llama-3.1-8B's matrices"
  run 300 kernel_bench.log "$b/sluice_kernel_bench" all
  cat "$logs/kernel_bench.log"
  step done
  exit 0
fi

if [ "$mode" = profile ]; then
  ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
  [ -n "$ncu" ] || { echo "gpu-check: no ncu on this machine" >&2; exit 1; }
  # One pass per kernel (a single metric): nothing to save and restore between replays.
  for spec in ${PROFILE_SPECS:-q4_k:1 bf16:1 q4_k:8}; do
    dtype=${spec%%:*} tokens=${spec##*:}
    step "kernel times: $dtype weights, a $tokens-token decode step"
    SLUICE_PROFILE_STEP=$tokens run 120 "prof-$dtype-$tokens.csv" "$ncu" --clock-control none \
      --nvtx --nvtx-include "sluice_step/" --launch-count 800 --metrics gpu__time_duration.sum \
      --csv --page raw --kernel-name-base demangled \
      "$b/sluice" bench --device cuda --dummy-weights llama-3.1-8b --dummy-dtype "$dtype" \
      --batched "$tokens" --prompt-tokens 16 --max-tokens 4 --kv-cache-bytes 4G
    grep -c '"gpu__time_duration.sum"\|^"[0-9]' "$logs/prof-$dtype-$tokens.csv"
  done
  step done
  exit 0
fi

"$b/sluice" --version | tail -4
for dtype in q4_k q8_0 bf16; do
  step "issue 29: Llama-3.1-8B shape, $dtype weights, decode against the floor"
  run 60 "batched-$dtype.log" "$b/sluice" bench --device cuda --dummy-weights llama-3.1-8b \
    --dummy-dtype "$dtype" --batched 1,8,32,128,256 --prompt-tokens 128 --max-tokens 32
  bench_lines "batched-$dtype.log"
done

step "issue 30: Qwen3-30B-A3B shape, Q4_K, every expert on the GPU"
run 75 moe-qwen3-gpu.log "$b/sluice" bench --device cuda --dummy-weights qwen3-30b-a3b \
  --dummy-dtype q4_k --batched 1,8,32,128 --prompt-tokens 128 --max-tokens 32
bench_lines moe-qwen3-gpu.log
step "issue 30: Qwen3-30B-A3B shape, Q4_K, --cpu-moe (experts in host memory)"
run 75 moe-qwen3-cpumoe.log "$b/sluice" bench --device cuda --dummy-weights qwen3-30b-a3b \
  --dummy-dtype q4_k --cpu-moe --batched 1,8 --prompt-tokens 128 --max-tokens 16
bench_lines moe-qwen3-cpumoe.log
step "issue 30: gpt-oss-20b shape, MXFP4, on the GPU"
run 60 moe-gptoss-gpu.log "$b/sluice" bench --device cuda --dummy-weights gpt-oss-20b \
  --dummy-dtype mxfp4 --batched 1,8,32 --prompt-tokens 128 --max-tokens 32
bench_lines moe-gptoss-gpu.log

step "issue 29: FP8 KV cache, Llama-3.1-8B shape, BF16 weights, the same memory share"
for kv in auto fp8; do
  run 45 "kv-$kv.log" "$b/sluice" bench --device cuda --dummy-weights llama-3.1-8b \
    --kv-cache-dtype "$kv" --batched 1,32,256 --prompt-tokens 1024 --max-tokens 32
  bench_lines "kv-$kv.log"
done

step "roofline, Llama-3-8B shape, BF16"
run 60 roofline.log "$b/sluice" bench --roofline --device cuda --dummy-weights llama-3-8b \
  --input "$alpaca" --limit 500 --max-tokens 256
grep -E "^GPU:|^\| |^sluice" "$logs/roofline.log"
step done
