#!/usr/bin/env bash
# run-benchmarks.sh BUILD_DIR: runs every benchmark executable of a build (`make bench`) and
# writes BUILD_DIR/bench-report/: one Google Benchmark JSON and console log per benchmark, the
# LibTorch baseline (BUILD_DIR/benchmarks/baseline_libtorch, built where libtorch-dev is
# installed) and the PyTorch one (benchmarks/train_step_pytorch.py, python3-torch) on the same
# workloads in the same run, and report.md: what ran, failed or is missing, then tables of ratios
# and gnuplot plots (scripts/bench_report.py). A missing baseline is reported as missing, never
# silently dropped. Everything runs with 1 thread (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS,
# WICK_BENCH_THREADS; override them in the environment). Exit status: 0 when every benchmark
# that exists ran and every plot was drawn.
set -u -o pipefail
BUILD=${1:?usage: $0 BUILD_DIR}
OUT="$BUILD/bench-report"
mkdir -p "$OUT"
REPORT="$OUT/report.md"
{
  echo "# wick benchmark report"
  echo
  echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  echo "| benchmark | status | output |"
  echo "|---|---|---|"
} >"$REPORT"
rc_all=0
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1} OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} \
  MKL_NUM_THREADS=${MKL_NUM_THREADS:-1} WICK_BENCH_THREADS=${WICK_BENCH_THREADS:-1} \
  OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}  # PyTorch's faster setting beside OpenBLAS (compare-train-step.sh)
for name in bench_op_overhead bench_mlp_step bench_train_step bench_sequence_step baseline_libtorch bench_replicate bench_data_parallel bench_cuda; do
  exe="$BUILD/benchmarks/$name"
  if [ ! -x "$exe" ]; then
    if [ "$name" = baseline_libtorch ]; then
      echo "| LibTorch baseline | missing (not built: install libtorch-dev, e.g. make bench, and reconfigure) | |" >>"$REPORT"
    else
      echo "| $name | missing (not built in $BUILD) | |" >>"$REPORT"
    fi
    continue
  fi
  echo "== $name =="
  # The MLP step and its GEMM bound are compared as a ratio: 5 repetitions of each, interleaved
  # in random order, so load that comes and goes hits both alike; the report takes the medians.
  extra=()
  if [ "$name" = bench_mlp_step ]; then
    extra=(--benchmark_repetitions=5 --benchmark_enable_random_interleaving=true)
  fi
  if "$exe" "${extra[@]}" --benchmark_out="$OUT/$name.json" --benchmark_out_format=json >"$OUT/$name.log" 2>&1; then
    echo "| $name | ran | $name.json, $name.log |" >>"$REPORT"
  else
    rc=$?
    # bench_cuda exits 77 without a GPU, like the GPU tests
    if [ "$rc" -eq 77 ]; then status="skipped (no GPU)"; else status="FAILED (exit $rc)"; rc_all=1; fi
    echo "| $name | $status | $name.log |" >>"$REPORT"
  fi
  tail -n 5 "$OUT/$name.log"
done
# bench_ddp, bench_sync_batch_norm and bench_comm_hooks: several processes under mpirun
# (docs/distributed.md); their own JSON.
for name in bench_ddp bench_sync_batch_norm bench_comm_hooks; do
  exe="$BUILD/benchmarks/$name"
  if [ ! -x "$exe" ]; then
    echo "| $name | missing (not built in $BUILD: needs MPI) | |" >>"$REPORT"
    continue
  fi
  echo "== $name (mpirun -np 2) =="
  if OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 mpirun --allow-run-as-root --oversubscribe --bind-to none \
      --mca btl_vader_single_copy_mechanism none -np 2 "$exe" --json "$OUT/$name.json" >"$OUT/$name.log" 2>&1; then
    echo "| $name | ran | $name.json, $name.log |" >>"$REPORT"
  else
    echo "| $name | FAILED (exit $?) | $name.log |" >>"$REPORT"
    rc_all=1
  fi
  tail -n 12 "$OUT/$name.log"
done
if command -v /usr/bin/python3 >/dev/null && /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  echo "== PyTorch baseline =="
  root=$(cd "$(dirname "$0")/.." && pwd)
  if /usr/bin/python3 "$root/benchmarks/train_step_pytorch.py" --threads "$WICK_BENCH_THREADS" \
      --json "$OUT/pytorch.json" >"$OUT/pytorch.log" 2>&1; then
    echo "| PyTorch baseline | ran | pytorch.json, pytorch.log |" >>"$REPORT"
  else
    echo "| PyTorch baseline | FAILED (exit $?) | pytorch.log |" >>"$REPORT"
    rc_all=1
  fi
else
  echo "| PyTorch baseline | missing (python3-torch not importable by /usr/bin/python3) | |" >>"$REPORT"
fi
echo "== page faults =="
if pf=$("$(dirname "$0")/check-page-faults.sh" "$BUILD" 2>&1); then
  echo "| page faults of steady-state MLP steps | none grow: $pf | |" >>"$REPORT"
else
  rc=$?
  if [ "$rc" -eq 2 ]; then
    echo "| page faults of steady-state MLP steps | missing ($pf) | |" >>"$REPORT"
  else
    echo "| page faults of steady-state MLP steps | FAILED: $pf | |" >>"$REPORT"
    rc_all=1
  fi
fi
echo "$pf"
if command -v /usr/bin/python3 >/dev/null; then
  /usr/bin/python3 "$(dirname "$0")/bench_report.py" "$OUT" || rc_all=1
else
  echo "Ratios and plots: missing (no /usr/bin/python3)" >>"$REPORT"
  rc_all=1
fi
echo "report: $REPORT"
exit $rc_all
