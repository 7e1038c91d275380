#!/usr/bin/env bash
# scripts/cuda-preflight.sh and gpu-check.sh's use of it, with the driver and toolkit versions
# given through the preflight's overrides (so the test means the same on any machine).
set -u
SRC=$1
pre="$SRC/scripts/cuda-preflight.sh"
fail=0
expect() {  # expect RC PATTERN ENV... : run the preflight with ENV, check exit code and output
  local want=$1 pattern=$2
  shift 2
  local out rc
  out=$(env "$@" "$pre" 2>&1)
  rc=$?
  if [ "$rc" -ne "$want" ] || ! grep -q -- "$pattern" <<<"$out"; then
    echo "FAILED: $* -> exit $rc (want $want), output:"
    echo "$out"
    fail=1
  else
    echo "ok: $* -> exit $rc"
  fi
}
expect 3 "no NVIDIA driver" WICK_PREFLIGHT_DRIVER=none WICK_PREFLIGHT_TOOLKIT=13.0
expect 4 "needs branch R580" WICK_PREFLIGHT_DRIVER=575.57.08 WICK_PREFLIGHT_TOOLKIT=13.0
expect 0 "preflight: OK" WICK_PREFLIGHT_DRIVER=580.65.06 WICK_PREFLIGHT_TOOLKIT=13.0 WICK_PREFLIGHT_GPU=H200
expect 0 "preflight: OK" WICK_PREFLIGHT_DRIVER=535.104.05 WICK_PREFLIGHT_TOOLKIT=12.2
expect 4 "needs branch R525" WICK_PREFLIGHT_DRIVER=470.82.01 WICK_PREFLIGHT_TOOLKIT=12.2
expect 3 "cannot read the driver version" WICK_PREFLIGHT_DRIVER=garbage WICK_PREFLIGHT_TOOLKIT=13.0

# gpu-check.sh stops in its preflight, in seconds, without building anything.
out=$(mktemp -d)
build="$out/build"
start=$(date +%s)
WICK_PREFLIGHT_DRIVER=none WICK_GPU_CHECK_BUILD_DIR="$build" "$SRC/scripts/gpu-check.sh" "$out/logs" >"$out/log" 2>&1
rc=$?
secs=$(($(date +%s) - start))
if [ "$rc" -ne 3 ] || [ -e "$build" ] || [ "$secs" -gt 20 ] || ! grep -q "stopped in the preflight" "$out/log"; then
  echo "FAILED: gpu-check.sh without a driver: exit $rc, ${secs}s, build dir $([ -e "$build" ] && echo made || echo absent)"
  cat "$out/log"
  fail=1
else
  echo "ok: gpu-check.sh without a driver stops in its preflight (exit 3, ${secs}s, nothing built)"
fi
rm -rf "$out"
exit $fail
