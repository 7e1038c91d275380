#!/usr/bin/env bash
# check-page-faults.sh BUILD_DIR: counts page faults (perf stat -e page-faults, the whole process)
# of mlp_page_faults with 50 warm-up steps and then 1000, and then 2000, SGD steps of the MLP
# 784-256-256-10 at batch 64. Steady-state steps fault in no new pages (Note [CPU block cache])
# when both counts agree: prints both, their difference per 1000 extra steps, and exits 1 when
# the 2000-step run faults more than 1% above the 1000-step one.
set -euo pipefail
BUILD=${1:?usage: $0 BUILD_DIR}
exe=$BUILD/benchmarks/mlp_page_faults
[ -x "$exe" ] || { echo "check-page-faults: $exe not built" >&2; exit 2; }
command -v perf >/dev/null || { echo "check-page-faults: perf not installed (linux-perf)" >&2; exit 2; }
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
faults() {
  perf stat -x, -e page-faults "$exe" 50 "$1" 2>&1 >/dev/null | awk -F, '/page-faults/ {print $1}'
}
a=$(faults 1000)
b=$(faults 2000)
echo "page faults, whole process: 50 + 1000 steps: $a; 50 + 2000 steps: $b; difference: $((b - a))"
[ "$b" -le $((a + a / 100)) ]
