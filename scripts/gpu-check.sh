#!/usr/bin/env bash
# gpu-check.sh OUTDIR: the one prepared GPU run (docs/cuda.md, "Running the GPU check").
#
# For a machine with an NVIDIA GPU and no network, with wick's build dependencies installed or
# carried in .gpu-deps (scripts/gpu-deps.sh, `make gpu-deps`):
#   1. detects the GPU architecture (nvidia-smi --query-gpu=compute_cap);
#   2. configures a fresh build for exactly that architecture and builds, with all cores, the GPU
#      executables in one step (test_cuda, test_cuda_two_gpus; test_distributed_gpu with MPI;
#      bench_cuda with Google Benchmark), going on past a failing one;
#   3. runs every GPU test (test_cuda; test_cuda_two_gpus, which reports skipped on one GPU;
#      test_distributed_gpu under mpirun -np 1 when MPI is installed) and the GPU benchmarks
#      (bench_cuda);
#   4. builds everything else and runs the rest of the ctest suite;
#   5. runs test_cuda under compute-sanitizer's memcheck and racecheck;
#   6. writes every log to OUTDIR and prints a short table last.
# GPU results come first so that a slow or broken unrelated target cannot hide them.
# Each step runs under a timeout taken from one overall budget (WICK_GPU_CHECK_BUDGET seconds,
# default 450), so the whole run stays under 8 minutes. WICK_GPU_CHECK_BUILD_DIR overrides the
# build folder (default build/gpu-check); WICK_GPU_CHECK_REUSE=1 keeps it instead of starting
# fresh. Exit status: 0 when every GPU test and every other test passed and neither sanitizer
# reported an error, 1 otherwise (a GPU test that reports "skipped" included: the preflight saw a
# GPU), 2 for bad usage, 3 when the preflight (scripts/cuda-preflight.sh) fails: no driver, a
# driver too old for the toolkit, or no toolkit.
set -u -o pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 OUTDIR" >&2
  exit 2
fi
OUT=$1
mkdir -p "$OUT" || exit 2
OUT=$(cd "$OUT" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${WICK_GPU_CHECK_BUILD_DIR:-$SRC/build/gpu-check}
JOBS=$(nproc 2>/dev/null || echo 4)
BUDGET=${WICK_GPU_CHECK_BUDGET:-450}
T0=$(date +%s)

now() { date +%s; }
elapsed() { echo $(($(now) - T0)); }
# Seconds a step may take: its own cap, but never past the overall budget (at least 10 s).
budget_for() {
  local cap=$1 left=$((BUDGET - $(elapsed)))
  [ "$left" -lt 10 ] && left=10
  [ "$cap" -lt "$left" ] && echo "$cap" || echo "$left"
}
# run_step NAME CAP CMD...: runs CMD with a timeout, output to $OUT/NAME.log; sets STEP_RC and
# STEP_SECS.
run_step() {
  local name=$1 cap=$2
  shift 2
  local t=$(budget_for "$cap") s
  s=$(now)
  echo "== $name (timeout ${t}s) =="
  timeout --kill-after=10 "$t" "$@" >"$OUT/$name.log" 2>&1
  STEP_RC=$?
  STEP_SECS=$(($(now) - s))
  [ "$STEP_RC" -eq 124 ] && echo "   $name: TIMED OUT after ${t}s (see $OUT/$name.log)"
  tail -n 3 "$OUT/$name.log" | sed 's/^/   /'
}

declare -a ROWS=()
row() { ROWS+=("$(printf '%-20s %-10s %s' "$1" "$2" "$3")"); }

# ---- 0. preflight: driver, runtime, GPU (seconds; nothing is built when it fails) ----
"$SRC/scripts/cuda-preflight.sh" 2>&1 | tee "$OUT/preflight.txt"
PREFLIGHT_RC=${PIPESTATUS[0]}
if [ "$PREFLIGHT_RC" -ne 0 ]; then
  echo "gpu-check: stopped in the preflight (exit $PREFLIGHT_RC): nothing was built or run."
  exit 3
fi

# ---- 1. the GPU ----
GPU_INFO="unknown GPU"
ARCH=""
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1
  GPU_INFO=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -n 1)
  # "9.0" -> "90"; several GPUs -> their distinct architectures.
  ARCH=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | tr -d ' .' | sort -u | paste -sd ';' -)
fi
if [ -z "$ARCH" ]; then
  ARCH="80-real;90"
  echo "gpu-check: could not read the compute capability from nvidia-smi; building for $ARCH"
fi
echo "gpu-check: $GPU_INFO; CUDA architectures $ARCH; $JOBS cores; logs in $OUT"

# ---- 1b. carried dependencies (scripts/gpu-deps.sh) ----
# A GPU machine may have the CUDA toolkit, a compiler, CMake and ninja but none of wick's Debian
# packages, and no network. Where DEPS (default .gpu-deps, filled by `scripts/gpu-deps.sh fetch`
# on a Debian machine and carried along) holds .deb files, they are unpacked under a private
# prefix, and every later step builds against them and runs with them.
DEPS=${WICK_GPU_DEPS:-$SRC/.gpu-deps}
WICK_DEPS_CMAKE_ARGS=()
if ls "$DEPS"/*.deb >/dev/null 2>&1; then
  DEPS_PREFIX=${WICK_GPU_DEPS_PREFIX:-/tmp/wick-gpu-deps}
  rm -rf "$DEPS_PREFIX"
  run_step deps 60 "$SRC/scripts/gpu-deps.sh" unpack "$DEPS" "$DEPS_PREFIX"
  # Missing libraries are listed in deps.log; the build goes on, since they may be plugins that
  # nothing here loads.
  row "carried deps" "$([ $STEP_RC -eq 0 ] && echo ok || echo INCOMPLETE)" "$(ls "$DEPS"/*.deb | wc -l) packages (${STEP_SECS}s)"
  WICK_DEPS_ENV=()
  eval "$("$SRC/scripts/gpu-deps.sh" env "$DEPS_PREFIX")"
  export "${WICK_DEPS_ENV[@]}"
fi

# NCCL is not part of the CUDA toolkit. Where the toolkit has none and NCCL_ROOT is unset, use
# the copy in Python's nvidia-nccl wheel (PyTorch depends on it), if there is one.
CUDA_ROOT=$(dirname "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")
if [ -z "${NCCL_ROOT:-}" ] && ! ls "$CUDA_ROOT"/lib*/libnccl.so* "$CUDA_ROOT"/targets/*/lib/libnccl.so* >/dev/null 2>&1; then
  wheel_nccl=$(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__) if nvidia.nccl.__file__ else list(nvidia.nccl.__path__)[0])' 2>/dev/null || true)
  if [ -n "$wheel_nccl" ] && [ -f "$wheel_nccl/include/nccl.h" ]; then
    export NCCL_ROOT=$wheel_nccl
    export LD_LIBRARY_PATH=$wheel_nccl/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    echo "gpu-check: NCCL from $wheel_nccl (the toolkit has none)"
  fi
fi

# ---- 2. configure and build ----
GEN=()
KEEP_GOING=(-k)  # make's: one failing target does not stop the others
command -v ninja >/dev/null 2>&1 && { GEN=(-G Ninja); KEEP_GOING=(-k 0); }
# A fresh build unless WICK_GPU_CHECK_REUSE=1 (a rerun after a timeout can then pick up where the
# previous build stopped).
[ "${WICK_GPU_CHECK_REUSE:-0}" = 1 ] || rm -rf "$BUILD"
run_step configure 90 cmake -S "$SRC" -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DWICK_CUDA=ON "-DCMAKE_CUDA_ARCHITECTURES=$ARCH" -DWICK_BUILD_EXAMPLES=OFF "${WICK_DEPS_CMAKE_ARGS[@]}"
CONFIGURE_RC=$STEP_RC
row configure "$([ $CONFIGURE_RC -eq 0 ] && echo ok || echo FAILED)" "${STEP_SECS}s"

BUILD_GPU_RC=1
BUILD_ALL_RC=1
# Whether the configured build has target $1 (bench_cuda needs Google Benchmark,
# test_distributed_gpu needs MPI; naming a missing target would fail the whole build step).
has_target() { grep -q "/$1.dir" "$BUILD/CMakeFiles/TargetDirectories.txt" 2>/dev/null; }
if [ "$CONFIGURE_RC" -eq 0 ]; then
  # Every GPU executable first, in one build that keeps going past a failing one, so that a
  # broken unrelated target cannot hide GPU results and no GPU target waits for a later step's
  # share of the budget.
  GPU_TARGETS=(test_cuda test_cuda_two_gpus)
  has_target bench_cuda && GPU_TARGETS+=(bench_cuda)
  has_target test_distributed_gpu && GPU_TARGETS+=(test_distributed_gpu)
  run_step build-gpu 300 cmake --build "$BUILD" -j "$JOBS" --target "${GPU_TARGETS[@]}" -- "${KEEP_GOING[@]}"
  BUILD_GPU_RC=$STEP_RC
  row "build (GPU targets)" "$([ $BUILD_GPU_RC -eq 0 ] && echo ok || echo FAILED)" "${STEP_SECS}s"
fi

# ---- 3. the GPU tests ----
TEST_CUDA_OK=0
if [ -x "$BUILD/tests/test_cuda" ]; then
  run_step test_cuda 180 "$BUILD/tests/test_cuda" --durations yes --use-colour no
  rc=$STEP_RC
  log="$OUT/test_cuda.log"
  if grep -q "All tests passed" "$log"; then
    detail=$(grep "All tests passed" "$log" | tail -n 1 | sed 's/^All tests passed //')
  else
    detail=$(grep -E "^test cases:" "$log" | tail -n 1 | tr -s ' ')
    [ -z "$detail" ] && detail="no summary (exit $rc; see test_cuda.log)"
  fi
  if [ "$rc" -eq 0 ]; then TEST_CUDA_OK=1; status=PASS
  else status=FAIL; fi  # 77 ("no GPU") is a failure here: the preflight saw one
  row "test_cuda" "$status" "$detail (${STEP_SECS}s)"
  grep -E "^[^ ].*(FAILED|failed)" "$log" | head -n 5 >"$OUT/test_cuda.failures.txt"
else
  row "test_cuda" "NOT BUILT" "see build-gpu.log"
fi

# ---- 3a. the cases that need two GPUs: exit 77 (skipped) on a one-GPU machine ----
TEST_TWO_GPUS_OK=0
if [ -x "$BUILD/tests/test_cuda_two_gpus" ]; then
  run_step test_cuda_two_gpus 60 "$BUILD/tests/test_cuda_two_gpus" --use-colour no
  case $STEP_RC in
    0) TEST_TWO_GPUS_OK=1; row "test_cuda_two_gpus" PASS "(${STEP_SECS}s)" ;;
    77) TEST_TWO_GPUS_OK=1; row "test_cuda_two_gpus" SKIPPED "$(grep -m1 SKIPPED "$OUT/test_cuda_two_gpus.log" | sed 's/.*SKIPPED: //')" ;;
    *) row "test_cuda_two_gpus" FAIL "exit $STEP_RC (see test_cuda_two_gpus.log)" ;;
  esac
else
  row "test_cuda_two_gpus" "NOT BUILT" "see build-gpu.log"
fi

# ---- 3b. the nccl backend and DDP on CUDA: one process under mpirun (built only with MPI) ----
TEST_NCCL_OK=1
if [ "$CONFIGURE_RC" -eq 0 ] && has_target test_distributed_gpu; then
  if [ -x "$BUILD/tests/test_distributed_gpu" ]; then
    # mpirun hands its ranks a terminal, so Catch2 would colour its summary: --use-colour no keeps
    # it greppable.
    run_step test_nccl 120 mpirun --allow-run-as-root --oversubscribe --bind-to none \
      --mca btl_vader_single_copy_mechanism none -np 1 "$BUILD/tests/test_distributed_gpu" --durations yes \
      --use-colour no
    rc=$STEP_RC
    detail=$(grep -E "^(All tests passed|test cases:)" "$OUT/test_nccl.log" | tail -n 1 | tr -s ' ')
    [ "$rc" -eq 0 ] && status=PASS || { status=FAIL; TEST_NCCL_OK=0; }  # 77 (skipped) fails here too
    row "test_nccl (np 1)" "$status" "${detail:-no summary (exit $rc; see test_nccl.log)} (${STEP_SECS}s)"
  else
    TEST_NCCL_OK=0
    row "test_nccl (np 1)" "NOT BUILT" "see build-gpu.log"
  fi
else
  row "test_nccl (np 1)" "NOT BUILT" "wick_distributed needs MPI (openmpi-bin libopenmpi-dev)"
fi

# ---- 4. GPU benchmarks ----
if [ -x "$BUILD/benchmarks/bench_cuda" ]; then
  run_step bench_cuda 120 "$BUILD/benchmarks/bench_cuda" --benchmark_out="$OUT/bench_cuda.json" \
    --benchmark_out_format=json
  log="$OUT/bench_cuda.log"
  if grep -q "^SUMMARY" "$log"; then
    while read -r _ name value rest; do
      row "bench $name" "$value" "$rest"
    done < <(grep "^SUMMARY" "$log")
  else
    row "bench_cuda" "NO RESULT" "exit $STEP_RC; see bench_cuda.log"
  fi
else
  row "bench_cuda" "NOT BUILT" "Google Benchmark missing or the build failed"
fi

# ---- 5. everything else: build the rest and run the other tests ----
if [ "$CONFIGURE_RC" -eq 0 ]; then
  run_step build-all 240 cmake --build "$BUILD" -j "$JOBS"
  BUILD_ALL_RC=$STEP_RC
  row "build (everything)" "$([ $BUILD_ALL_RC -eq 0 ] && echo ok || echo FAILED)" "${STEP_SECS}s"
fi
CTEST_OK=0
if [ "$CONFIGURE_RC" -eq 0 ] && { [ "$BUILD_ALL_RC" -eq 0 ] || [ -d "$BUILD/tests" ]; }; then
  # Everything except the GPU executable, which ran above.
  run_step ctest 150 ctest --test-dir "$BUILD" -j "$JOBS" --timeout 120 --output-on-failure -E "^cuda:"
  rc=$STEP_RC
  log="$OUT/ctest.log"
  # "100% tests passed, 0 tests failed out of N" (Debian's ctest 3.25), or "100% tests passed out
  # of N" (the newer ctest of the H200 image, which printed Configuring done with its time); a
  # run with failures exits non-zero anyway.
  line=$(grep -E "[0-9]+% tests passed(,| out of)" "$log" | tail -n 1)
  skipped=$(grep -c "(Skipped)" "$log")
  # ctest exits 0 when it finds no tests at all: that is no pass.
  [ "$rc" -eq 0 ] && [ -n "$line" ] && CTEST_OK=1
  row "ctest (other tests)" "$([ $CTEST_OK -eq 1 ] && echo PASS || echo FAIL)" "${line:-no summary (exit $rc)}; $skipped skipped (${STEP_SECS}s)"
else
  row "ctest (other tests)" "NOT RUN" "the build failed"
fi

# ---- 6. compute-sanitizer over the GPU tests (last: it must not starve the steps above) ----
# memcheck over test_cuda (out-of-bounds and misaligned accesses, device faults) with the caching
# allocator passing through (WICK_NO_CUDA_MEMORY_CACHING=1: each tensor its own cudaMalloc of
# exactly its bytes, so an overrun past a tensor's end is seen, not hidden inside a cached
# segment); the [allocator] cases, which check the caching itself, are left out of it. Then
# racecheck (shared-memory hazards) over every case but the NCCL ones, which stall under it. API
# return codes are not reported: NCCL's init probes for kernel images it lacks. The verdict comes
# from the tool's own summary line; a step cut by the budget, or a tool that printed none, is
# reported and does not fail the run.
SANITIZERS_OK=1
CS=$(command -v compute-sanitizer || echo "$CUDA_ROOT/bin/compute-sanitizer")
# sanitize NAME TOOL SUMMARY_REGEX CAP CACHING TEST_SPEC...: runs TOOL over test_cuda (the CUDA
# allocator caching when CACHING is 1, passing through when 0) and adds a row.
sanitize() {
  local name=$1 tool=$2 pattern=$3 cap=$4 no_caching=$((1 - $5))
  shift 5
  run_step "$name" "$cap" env WICK_NO_CUDA_MEMORY_CACHING=$no_caching "$CS" --tool "$tool" \
    --report-api-errors no --print-limit 20 "$BUILD/tests/test_cuda" --use-colour no --durations yes "$@"
  local summary
  summary=$(grep -E "$pattern" "$OUT/$name.log" | tail -n 1 | sed 's/^=* *//')
  if [ -z "$summary" ]; then
    row "$name" "NO RESULT" "exit $STEP_RC, no summary (see $name.log) (${STEP_SECS}s)"
  elif grep -qE "(ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards)" <<<"$summary" && [ "$STEP_RC" -eq 0 ]; then
    row "$name" PASS "$summary (${STEP_SECS}s)"
  else
    SANITIZERS_OK=0
    row "$name" FAIL "$summary; exit $STEP_RC (${STEP_SECS}s)"
  fi
}
if [ "$TEST_CUDA_OK" -eq 1 ] && [ -x "$CS" ]; then
  sanitize memcheck memcheck "ERROR SUMMARY:" 150 0 "~[allocator]"
  sanitize racecheck racecheck "RACECHECK SUMMARY:" 150 1 "~[nccl]"
elif [ "$TEST_CUDA_OK" -eq 1 ]; then
  row "compute-sanitizer" "NOT RUN" "no compute-sanitizer in the toolkit"
fi

# ---- the table ----
TOTAL=$(elapsed)
{
  echo
  echo "==== wick gpu-check: $GPU_INFO (sm $ARCH), $JOBS cores, ${TOTAL}s ===="
  printf '%-20s %-10s %s\n' step result detail
  for r in "${ROWS[@]}"; do echo "$r"; done
} | tee "$OUT/summary.txt"

[ "$TEST_CUDA_OK" -eq 1 ] && [ "$TEST_TWO_GPUS_OK" -eq 1 ] && [ "$TEST_NCCL_OK" -eq 1 ] && [ "$CTEST_OK" -eq 1 ] && [ "$SANITIZERS_OK" -eq 1 ] && exit 0
exit 1
