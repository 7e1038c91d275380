#!/usr/bin/env bash
# run-benchmarks.sh BUILD_DIR: runs every benchmark executable of a build (`make bench`) and
# writes BUILD_DIR/bench-report/: one Google Benchmark JSON and console log per benchmark, and
# report.md listing what ran, what failed and what is missing. Baselines that need other
# programs (scripts/compare-train-step.sh for PyTorch) are reported as missing when absent,
# never silently dropped. Exit status: 0 when every benchmark that exists ran.
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
for name in bench_op_overhead bench_replicate bench_train_step bench_data_parallel bench_cuda; do
  exe="$BUILD/benchmarks/$name"
  if [ ! -x "$exe" ]; then
    echo "| $name | missing (not built in $BUILD) | |" >>"$REPORT"
    continue
  fi
  echo "== $name =="
  if OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1} OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} \
      "$exe" --benchmark_out="$OUT/$name.json" --benchmark_out_format=json >"$OUT/$name.log" 2>&1; then
    echo "| $name | ran | $name.json, $name.log |" >>"$REPORT"
  else
    rc=$?
    # bench_cuda exits 77 without a GPU, like the GPU tests
    if [ "$rc" -eq 77 ]; then status="skipped (no GPU)"; else status="FAILED (exit $rc)"; rc_all=1; fi
    echo "| $name | $status | $name.log |" >>"$REPORT"
  fi
  tail -n 5 "$OUT/$name.log"
done
# bench_ddp: several processes under mpirun (docs/distributed.md); its own JSON.
exe="$BUILD/benchmarks/bench_ddp"
if [ ! -x "$exe" ]; then
  echo "| bench_ddp | missing (not built in $BUILD: needs MPI) | |" >>"$REPORT"
else
  echo "== bench_ddp (mpirun -np 2) =="
  if OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 mpirun --allow-run-as-root --oversubscribe --bind-to none \
      --mca btl_vader_single_copy_mechanism none -np 2 "$exe" --json "$OUT/bench_ddp.json" >"$OUT/bench_ddp.log" 2>&1; then
    echo "| bench_ddp | ran | bench_ddp.json, bench_ddp.log |" >>"$REPORT"
  else
    echo "| bench_ddp | FAILED (exit $?) | bench_ddp.log |" >>"$REPORT"
    rc_all=1
  fi
  tail -n 12 "$OUT/bench_ddp.log"
fi
if command -v /usr/bin/python3 >/dev/null && /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  echo "| PyTorch baseline | available: run scripts/compare-train-step.sh $BUILD 1 | |" >>"$REPORT"
else
  echo "| PyTorch baseline | missing (python3-torch not importable) | |" >>"$REPORT"
fi
echo "| LibTorch baseline, plots | missing (not written yet: issue on per-op speed) | |" >>"$REPORT"
echo "report: $REPORT"
exit $rc_all
