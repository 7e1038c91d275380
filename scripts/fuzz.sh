#!/usr/bin/env bash
# Builds the libFuzzer harnesses (the `asan` preset: clang 14, ASan + UBSan; Note [One sanitizer
# build] in CMakeLists.txt), replays the committed
# corpus and the hostile-input reproducers through each, then fuzzes each harness for SECONDS,
# JOBS harnesses at a time (Note [Fuzzing] in fuzz/fuzz_util.h). Any crash, sanitizer report, escaping exception, OOM
# (rss over 2 GiB) or timeout (10 s per input) fails the run; the input is left under
# build/asan/fuzz-work/artifacts/ (commit it to fuzz/corpus/<harness>/regression-<what> once fixed).
# Usage: scripts/fuzz.sh [SECONDS per harness, default 600] [harness ...]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-600}
shift || true
harnesses=("$@")
[ ${#harnesses[@]} -eq 0 ] && harnesses=(safetensors checkpoint idx)
build=build/asan
work=$build/fuzz-work
jobs=${JOBS:-$(nproc)}

cmake --preset asan >/dev/null
cmake --build $build -j "$jobs" --target fuzz_make_seeds $(printf 'fuzz_%s ' "${harnesses[@]}")
rm -rf "$work/seeds"
mkdir -p "$work/artifacts"
"$build/fuzz/fuzz_make_seeds" "$work/seeds" >/dev/null

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
common=(-rss_limit_mb=2048 -timeout=10 -artifact_prefix="$work/artifacts/")
status=0
passed=0
failed=0
# 1. Replay every committed input in full (files, not directories: nothing is truncated), one
#    harness after another: seconds in all.
fuzzable=()
for h in "${harnesses[@]}"; do
  bin=$build/fuzz/fuzz_$h
  mapfile -t inputs < <(find fuzz/corpus/$h tests/data/hostile "$work/seeds/$h" -type f ! -name '*.md' | sort)
  echo "== fuzz_$h: replaying ${#inputs[@]} inputs =="
  if ! "$bin" "${common[@]}" "${inputs[@]}" >"$work/$h-replay.log" 2>&1; then
    tail -40 "$work/$h-replay.log"
    echo "fuzz_$h: replay FAILED (log: $work/$h-replay.log)"
    status=1
    failed=$((failed + 1))
  elif [ "$secs" -le 0 ]; then
    passed=$((passed + 1))
  else
    fuzzable+=("$h")
  fi
done

# 2. Fuzz each harness for $secs seconds from the committed corpus and fresh seeds, up to $jobs
#    harnesses side by side (each libFuzzer process is one thread: on 2 cores three harnesses take
#    2 x $secs instead of 3 x $secs). Each writes its own log; the reports follow in order.
fuzz_one() {
  local h=$1 max_len=16384
  [ "$h" = idx ] && max_len=4096
  mkdir -p "$work/corpus/$h"
  "$build/fuzz/fuzz_$h" "${common[@]}" -max_total_time="$secs" -max_len=$max_len -dict=fuzz/json.dict \
    -print_final_stats=1 "$work/corpus/$h" fuzz/corpus/$h "$work/seeds/$h" >"$work/$h.log" 2>&1
}
declare -A pid_of
for h in "${fuzzable[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  echo "== fuzz_$h: fuzzing for $secs s =="
  fuzz_one "$h" &
  pid_of[$h]=$!
done
for h in "${fuzzable[@]}"; do
  if wait "${pid_of[$h]}"; then
    last=$(grep -E '^#[0-9]+' "$work/$h.log" | tail -1 || true)
    execs=$(grep -E 'stat::number_of_executed_units' "$work/$h.log" | awk '{print $2}')
    rate=$(grep -E 'stat::average_exec_per_sec' "$work/$h.log" | awk '{print $2}')
    rss=$(grep -E 'stat::peak_rss_mb' "$work/$h.log" | awk '{print $2}')
    echo "fuzz_$h: 0 crashes; $execs executions ($rate/s), peak rss $rss MB; last: $last"
    passed=$((passed + 1))
  else
    grep -E 'ERROR|SUMMARY|Test unit written|==[0-9]+==' "$work/$h.log" | head -20
    echo "fuzz_$h: FAILED (log: $work/$h.log)"
    status=1
    failed=$((failed + 1))
  fi
done
# One plain closing line for whoever reads the run: harnesses that passed and failed.
echo "fuzz: $passed passed, $failed failed"
exit $status
