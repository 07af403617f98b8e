#!/usr/bin/env bash
# Builds the libFuzzer harnesses (build-fuzz/: clang, AddressSanitizer + UBSan) and runs each one
# for FUZZ_SECONDS (default 30), FUZZ_JOBS harnesses at a time (default: the number of cores).
# FUZZ_HARNESSES="gguf_file dataset_file" picks some; tests/fuzz/harnesses.txt lists them all,
# with their seeds. Before fuzzing, each harness replays its known crashes (tests/fuzz/crashes/
# <harness>/), so a fixed crash stays fixed. Any crash, hang, leak, huge allocation or broken
# property fails the run, printing the reproducer's path and the command that replays it.
# The corpus a harness grows is kept in build-fuzz/fuzz/corpus/<harness>/ for the next run.
# FUZZ_KEEP_GOING=1 goes on past crashes (libFuzzer's fork mode) to collect every reproducer of
# a long run in build-fuzz/fuzz/artifacts/<harness>/; the run still fails if any turned up.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-30}
parallel=${FUZZ_JOBS:-$(nproc)}
keep_going=${FUZZ_KEEP_GOING:-0}
build_jobs=${JOBS:-$(nproc)}
shared="$(cd .. && pwd)/shared"
if [ ! -d "$shared/models" ]; then
  echo "fuzz.sh: the shared test data is missing: expected $shared (../shared beside the checkout)" >&2
  exit 1
fi
for tool in clang clang++; do
  if ! command -v "$tool" >/dev/null; then
    echo "fuzz.sh: $tool is missing (scripts/install-deps.sh installs it)" >&2
    exit 1
  fi
done

for wanted in ${FUZZ_HARNESSES:-}; do
  if ! grep -q "^$wanted " tests/fuzz/harnesses.txt; then
    echo "fuzz.sh: FUZZ_HARNESSES names '$wanted', which tests/fuzz/harnesses.txt does not list" >&2
    exit 2
  fi
done

CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
  -DSLUICE_FUZZ=ON -DSLUICE_TESTS=OFF -DSLUICE_GUI=OFF -DSLUICE_CUDA=OFF -DSLUICE_WERROR=ON >/dev/null
cmake --build build-fuzz --target fuzz_harnesses -j "$build_jobs"

work="$PWD/build-fuzz/fuzz"
rm -rf "$work/tmp" "$work/results" "$work/seeds"
mkdir -p "$work/tmp" "$work/results" "$work/seeds" "$work/logs"
export TMPDIR="$work/tmp"
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
if ! command -v llvm-symbolizer >/dev/null && command -v llvm-symbolizer-14 >/dev/null; then
  export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-$(command -v llvm-symbolizer-14)}
fi

# Writes the comma-separated list of a harness's seed files to stdout.
seed_list() {
  local harness=$1
  shift
  local files=() seed matches
  for seed in "$@"; do
    case "$seed" in
      seeds/*) matches=("tests/fuzz/$seed"/*) ;;
      shared/*) matches=("$shared"/${seed#shared/}) ;;
      *) echo "fuzz.sh: $harness: seed '$seed' is neither seeds/<dir> nor shared/<glob>" >&2; return 1 ;;
    esac
    if [ ! -e "${matches[0]}" ]; then
      echo "fuzz.sh: $harness: seed '$seed' matches no file" >&2
      return 1
    fi
    files+=("${matches[@]}")
  done
  (IFS=,; echo "${files[*]}")
}

# Replays the known crashes, then fuzzes; writes "ok <summary>" or "FAIL <why>" to results/.
run_harness() {
  local harness=$1 max_len=$2
  shift 2
  local binary="$PWD/build-fuzz/bin/fuzz_$harness" log="$work/logs/$harness.log"
  local result="$work/results/$harness" corpus="$work/corpus/$harness"
  local artifacts="$work/artifacts/$harness"
  mkdir -p "$corpus" "$artifacts"
  : >"$log"
  local failures=() crash
  for crash in "tests/fuzz/crashes/$harness"/*; do
    [ -f "$crash" ] || continue
    if ! "$binary" -rss_limit_mb=2048 -timeout=10 "$crash" >>"$log" 2>&1; then
      failures+=("known crash still fails: $binary $crash")
      [ "$keep_going" = 1 ] || break
    fi
  done
  if [ ${#failures[@]} -gt 0 ] && [ "$keep_going" != 1 ]; then
    echo "FAIL ${failures[*]}" >"$result"
    return
  fi
  seed_list "$harness" "$@" >"$work/seeds/$harness" || {
    echo "FAIL bad seed list in tests/fuzz/harnesses.txt" >"$result"
    return
  }
  local options=(-max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048
    -artifact_prefix="$artifacts/" -seed_inputs="@$work/seeds/$harness" -print_final_stats=1)
  if [ "$keep_going" = 1 ]; then
    options+=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
  fi
  local marker="$work/tmp/$harness.start"
  touch "$marker"
  local status=0
  "$binary" "${options[@]}" "$corpus" >>"$log" 2>&1 || status=$?
  local found
  found=$(find "$artifacts" -type f -newer "$marker" | sort)
  if [ "$status" -eq 0 ] && [ -z "$found" ] && [ ${#failures[@]} -eq 0 ]; then
    local runs
    # The last stats line: "stat::number_of_executed_units: N", or "#N: cov: ..." in fork mode.
    runs=$(sed -n -e 's/^stat::number_of_executed_units: *//p' -e 's/^#\([0-9]*\): cov:.*/\1/p' \
      "$log" | tail -1)
    echo "ok ${seconds}s clean, ${runs:-?} inputs, corpus $(ls "$corpus" | wc -l) files" >"$result"
    return
  fi
  local reproducer
  for reproducer in $found; do failures+=("reproducer $reproducer (replay: $binary $reproducer)"); done
  [ -n "$found" ] || [ "$status" -eq 0 ] || failures+=("exit status $status, no reproducer (see the log)")
  echo "FAIL ${failures[*]}" >"$result"
}

harnesses=()
while read -r -a fields; do
  harness=${fields[0]:-}
  case "$harness" in '' | '#'*) continue ;; esac
  if [ -n "${FUZZ_HARNESSES:-}" ] && [[ " $FUZZ_HARNESSES " != *" $harness "* ]]; then continue; fi
  harnesses+=("$harness")
  while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n || true; done
  run_harness "${fields[@]}" &
done <tests/fuzz/harnesses.txt
wait

num_failed=0
for harness in "${harnesses[@]}"; do
  result=$(cat "$work/results/$harness" 2>/dev/null || echo "FAIL no result")
  echo "fuzz: $harness: $result"
  if [[ "$result" != ok* ]]; then
    num_failed=$((num_failed + 1))
    echo "---- last lines of $work/logs/$harness.log" >&2
    tail -40 "$work/logs/$harness.log" >&2
  fi
done
echo "fuzz: $((${#harnesses[@]} - num_failed)) passed, $num_failed failed"
[ "$num_failed" -eq 0 ]
