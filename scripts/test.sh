#!/usr/bin/env bash
# Builds and runs the tests. FLAVOUR selects what runs:
#   all (default)  release build: every test; then the sanitizer build: the engine's unit tests
#   release        release build only
#   asan           sanitizer build only (AddressSanitizer + UndefinedBehaviorSanitizer)
#   fuzz           the libFuzzer harnesses, a short pass (scripts/fuzz.sh; FUZZ_SECONDS each,
#                  default 15 here); `all` runs it last
set -euo pipefail
cd "$(dirname "$0")/.."
flavour=${FLAVOUR:-all}
jobs=${JOBS:-$(nproc)}
shared="$(cd .. && pwd)/shared"
if [ ! -d "$shared/models" ]; then
  echo "test.sh: the shared test data is missing: expected $shared (../shared beside the checkout)" >&2
  exit 1
fi

export QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen}
# No test may hang the run: one that passes 20 minutes fails (the longest, DeterminismAtScale
# under the release build, takes a few minutes on two cores).
timeout_s=${TEST_TIMEOUT_S:-1200}
status=0
summary=()
# Runs ctest in build dir $1 with the arguments after it. A test that fails is run once more on
# its own (a machine busier than ours can starve a test of its timing): the pass counts only when
# that second run passes, and the test is named either way in the summary printed last, so the
# tail of a CI log always says which tests failed or needed a second run.
run_ctest() {
  local dir=$1
  shift
  local log="$dir/ctest-first-run.log"
  if (cd "$dir" && ctest --output-on-failure --timeout "$timeout_s" -j "$jobs" "$@") 2>&1 | tee "$log"; then
    return 0
  fi
  local failed
  failed=$(sed -n '/The following tests FAILED:/,$p' "$log" | grep -E '^[[:space:]]+[0-9]+ - ' || true)
  if (cd "$dir" && ctest --rerun-failed --output-on-failure --timeout "$timeout_s" -j 1); then
    summary+=("$dir: failed once, passed when run again:" "$failed")
    return 0
  fi
  summary+=("$dir: FAILED (twice):" "$failed")
  return 1
}
print_summary() {
  echo "test.sh: summary"
  if [ ${#summary[@]} -eq 0 ]; then
    echo "  every test passed on its first run"
  else
    printf '  %s\n' "${summary[@]}"
  fi
}
if [ "$flavour" = all ] || [ "$flavour" = release ]; then
  scripts/build.sh release
  run_ctest build || status=1
fi
if [ "$flavour" = all ] || [ "$flavour" = asan ]; then
  scripts/build.sh asan
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  # The sanitizer pass is the engine's: its unit tests (the sanitizer build leaves app/ and the
  # CLI's tests out, scripts/build.sh; the release pass runs those, and the fuzz pass runs the
  # app's request, answer and pipeline parsers under the same sanitizers). Of those, the longest
  # runs stay in the release pass only; the sanitizers see the same code paths in the shorter
  # engine, forward-pass and schedule tests (times are 2026-12-02's under the sanitizers, two cores):
  # - DeterminismAtScale (300 rows under five schedules; a quarter of an hour here) and
  #   ArchitectureSchedules (six models under five schedules);
  # - the hybrid model's seeded samples under six schedules (70 s for its two files) and its greedy
  #   rows from the GGUF file (32 s; the HF folder's greedy rows run here);
  # - JobTableLarge (eleven queries over a 20 000-row job, 75 s; JobTable's tests run here).
  # The gpt-oss MXFP4 logit comparisons (2.6e-5 of llama.cpp in the release build, bound 1e-3)
  # are left to the release pass: this build's float kernels have no FMA contraction (no
  # target_clones under the sanitizers), so an activation that feeds the MXFP4 experts lands 2 ulp
  # from the release build's, and one value of the fixture sits on a rounding tie of the Q8_0
  # activation quantization (amax 0x1.72695p+1 here, 0x1.726952p+1 in release: x / d = -55.5000038
  # against -55.4999962), which moves one position's logits by 0.29. Expert choices are llama.cpp's
  # in both builds. Measured 2026-11-30 by printing the ties of quantize_block32 in both builds.
  run_ctest build-asan -L unit \
    -E "DeterminismAtScale|ArchitectureSchedules|HybridEngine.SeededSamples|HybridEngine.GreedyRowsAreTheSameUnderEverySchedule/qwen35_gguf|JobTableLarge|gpt_oss_MXFP4|GptOssFolderIsTheMxfp4File" ||
    status=1
fi
if [ "$flavour" = all ] || [ "$flavour" = fuzz ]; then
  FUZZ_SECONDS=${FUZZ_SECONDS:-15} scripts/fuzz.sh || { status=1; summary+=("fuzz: FAILED"); }
fi
print_summary
exit $status
