#!/usr/bin/env bash
# Times one training step of the Fashion-MNIST demo's CNN (batch 64: forward, cross-entropy,
# backward, optimizer step) in wick (benchmarks/bench_train_step.cpp) and in PyTorch 1.13
# (benchmarks/train_step_pytorch.py, Debian's python3-torch under /usr/bin/python3), one after
# the other in one run, with the same network, batch and thread count, and prints both times
# and their ratio. Then the same for the transformer and LSTM steps of
# benchmarks/bench_sequence_step.cpp (train_step_pytorch.py --sequence), where that is built.
#
#   scripts/compare-train-step.sh [BUILD_DIR] [THREADS]     (defaults: build/default, 1)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/default}
threads=${2:-1}
bench=$build/benchmarks/bench_train_step
if [ ! -x "$bench" ]; then
  echo "compare-train-step: $bench not found; build it with: cmake --build $build --target bench_train_step" >&2
  exit 1
fi
if ! /usr/bin/python3 -c "import torch" 2>/dev/null; then
  echo "compare-train-step: /usr/bin/python3 has no torch; install it with: sudo apt-get install python3-torch" >&2
  exit 1
fi
export OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads MKL_NUM_THREADS=$threads WICK_BENCH_THREADS=$threads
# PyTorch's OpenMP workers spin after each parallel region by default; beside OpenBLAS's own
# threads on few cores that spinning steals the cores (measured here at 2 threads: the
# transformer step 223 ms spinning, 147 ms passive; the LSTM 196 ms and 45 ms). Passive waiting
# is PyTorch's faster setting, so the baseline runs with it.
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}

# wick: median of 5 repetitions, real time, in ms.
wick_json=$(mktemp)
trap 'rm -f "$wick_json"' EXIT
"$bench" --benchmark_repetitions=5 --benchmark_min_time=0.5 --benchmark_format=json >"$wick_json" 2>/dev/null
wick_ms() {  # $1: benchmark name prefix, $2: the JSON (default: the CNN's)
  /usr/bin/python3 - "${2:-$wick_json}" "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for b in d["benchmarks"]:
    if b["name"].startswith(sys.argv[2]) and b.get("aggregate_name") == "median":
        unit = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b["time_unit"]]
        print(f'{b["real_time"] * unit:.3f}')
        break
PY
}
declare -A wick
wick[adam]=$(wick_ms BM_TrainStepAdam/64/)
wick[sgd]=$(wick_ms BM_TrainStepSGD/64/)
wick[forward]=$(wick_ms BM_Forward/64/)

declare -A torch
while read -r name ms; do torch[$name]=$ms; done < <(/usr/bin/python3 "$root/benchmarks/train_step_pytorch.py" --threads "$threads")

echo "Fashion-MNIST CNN, batch 64, $threads thread(s)  (ms per step; ratio = wick / PyTorch, < 1 means wick is faster)"
printf "%-28s %10s %10s %8s\n" "" "wick" "PyTorch" "ratio"
for k in adam sgd forward; do
  label=$k
  [ "$k" = adam ] && label="train step, Adam"
  [ "$k" = sgd ] && label="train step, SGD momentum"
  [ "$k" = forward ] && label="forward only (no grad)"
  printf "%-28s %10.2f %10.2f %8.2f\n" "$label" "${wick[$k]}" "${torch[$k]}" \
    "$(/usr/bin/python3 -c "print(${wick[$k]} / ${torch[$k]})")"
done

seq_bench=$build/benchmarks/bench_sequence_step
if [ ! -x "$seq_bench" ]; then
  echo "(the transformer and LSTM steps: $seq_bench not built)"
  exit 0
fi
seq_json=$(mktemp)
trap 'rm -f "$wick_json" "$seq_json"' EXIT
"$seq_bench" --benchmark_filter='BM_TransformerStep/32|BM_LstmStep/64' --benchmark_repetitions=5 \
  --benchmark_min_time=0.5 --benchmark_format=json >"$seq_json" 2>/dev/null
wick[transformer]=$(wick_ms BM_TransformerStep/32 "$seq_json")
wick[lstm]=$(wick_ms BM_LstmStep/64 "$seq_json")
while read -r name ms; do torch[$name]=$ms; done < <(/usr/bin/python3 "$root/benchmarks/train_step_pytorch.py" --threads "$threads" --sequence)
echo
echo "Sequence models, $threads thread(s)  (ms per step; ratio = wick / PyTorch)"
printf "%-28s %10s %10s %8s\n" "" "wick" "PyTorch" "ratio"
for k in transformer lstm; do
  label="transformer 2 blocks, b32"
  [ "$k" = lstm ] && label="LSTM 2 layers, b64"
  printf "%-28s %10.2f %10.2f %8.2f\n" "$label" "${wick[$k]}" "${torch[$k]}" \
    "$(/usr/bin/python3 -c "print(${wick[$k]} / ${torch[$k]})")"
done
