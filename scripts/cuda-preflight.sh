#!/usr/bin/env bash
# cuda-preflight.sh: can this machine run wick's CUDA code? Prints the GPU, the driver and the
# CUDA toolkit, and fails loudly, with the fix, before anything is built.
#
# A CUDA 13 runtime needs an R580 or newer driver (CUDA 12: R525, CUDA 11: R450). With an older
# driver, or none, cudaGetDeviceCount fails exactly as on a machine without a GPU, so every GPU
# test would report "skipped": this check tells the two apart.
#
# Exit status: 0 ready; 3 no driver / no GPU; 4 driver too old for the toolkit; 5 no toolkit.
# For tests, WICK_PREFLIGHT_DRIVER (a version, or "none"), WICK_PREFLIGHT_TOOLKIT (e.g. 13.0)
# and WICK_PREFLIGHT_GPU (a name) replace what nvidia-smi and nvcc report.
set -u -o pipefail

# The oldest driver branch a CUDA major version runs on.
min_driver_for() {
  case "$1" in
    13) echo 580 ;;
    12) echo 525 ;;
    11) echo 450 ;;
    *) echo 0 ;;
  esac
}

# Toolkit version "13.0" from nvcc.
toolkit=${WICK_PREFLIGHT_TOOLKIT:-}
if [ -z "$toolkit" ]; then
  nvcc=$(command -v nvcc || true)
  [ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc
  if [ -n "$nvcc" ]; then
    toolkit=$("$nvcc" --version 2>/dev/null | sed -n 's/.*release \([0-9][0-9]*\.[0-9][0-9]*\).*/\1/p' | head -n 1)
  fi
fi
if [ -z "$toolkit" ]; then
  echo "preflight: FAIL: no CUDA toolkit (nvcc not found on PATH or in /usr/local/cuda/bin)."
  echo "preflight: fix: install the CUDA toolkit at /usr/local/cuda, or build with -DWICK_CUDA=OFF."
  exit 5
fi

# Driver version and GPU from nvidia-smi.
driver=${WICK_PREFLIGHT_DRIVER:-}
gpu=${WICK_PREFLIGHT_GPU:-}
if [ -z "$driver" ]; then
  if command -v nvidia-smi >/dev/null 2>&1; then
    driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' ')
    [ -z "$gpu" ] && gpu=$(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null | head -n 1)
  fi
  [ -z "$driver" ] && driver=none
fi
echo "preflight: CUDA toolkit $toolkit; driver ${driver}; GPU: ${gpu:-none seen}"

major=${toolkit%%.*}
need=$(min_driver_for "$major")
if [ "$driver" = none ]; then
  echo "preflight: FAIL: no NVIDIA driver (nvidia-smi is missing or sees no GPU). This machine cannot"
  echo "preflight: run the GPU tests: every one would report 'skipped'. Run on a machine with an NVIDIA GPU"
  echo "preflight: and a driver of branch R${need} or newer (CUDA ${toolkit})."
  exit 3
fi
branch=${driver%%.*}
if ! [[ "$branch" =~ ^[0-9]+$ ]]; then
  echo "preflight: FAIL: cannot read the driver version '$driver'."
  exit 3
fi
if [ "$branch" -lt "$need" ]; then
  echo "preflight: FAIL: driver $driver is too old for CUDA $toolkit, which needs branch R${need} or newer:"
  echo "preflight: cudaGetDeviceCount would fail as if there were no GPU. Fix: install driver R${need}+,"
  echo "preflight: or build against an older CUDA toolkit that driver ${driver} supports."
  exit 4
fi
echo "preflight: OK"
