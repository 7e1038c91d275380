#!/usr/bin/env bash
# ddp_faults_test.sh TEST_DISTRIBUTED MPIRUN...: the fault cases of tests/distributed/fault_test.cpp.
#  1. A rank that stalls past the timeout (2 s here) ends the job non-zero, with the message
#     naming the collective and the rank, well within 60 s.
#  2. A rank killed with SIGKILL mid-training ends the job non-zero within 60 s, mpirun reports
#     that rank's signal, and rank 0's last checkpoint loads (model and optimizer) in a fresh
#     process.
set -u
exe=$1
shift
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

start=$(date +%s)
out=$(WICK_TEST_DIST_TIMEOUT_MS=2000 timeout 90 "$@" -np 2 "$exe" "[.fault-stall]" 2>&1)
rc=$?
secs=$(( $(date +%s) - start ))
echo "$out" | grep "wick.distributed" || true
[ "$rc" -ne 0 ] || fail "a stalled rank: the job exited 0"
[ "$rc" -ne 124 ] || fail "a stalled rank: the job hung (killed by timeout after 90 s)"
echo "$out" | grep "did not finish within 2.000 s" | grep -q "all_reduce(sum) #1 float32 \[1000\] on cpu" ||
  fail "a stalled rank: no timeout message naming the collective"
echo "$out" | grep -q "rank 0 of 2" || fail "a stalled rank: the message does not name the rank"
[ "$secs" -lt 60 ] || fail "a stalled rank: the job took $secs s to end"
echo "stalled rank: job ended with status $rc after $secs s"

start=$(date +%s)
out=$(WICK_TEST_FAULT_DIR=$dir timeout 90 "$@" -np 2 "$exe" "[.fault-kill]" 2>&1)
rc=$?
secs=$(( $(date +%s) - start ))
[ "$rc" -ne 0 ] || fail "a killed rank: the job exited 0"
[ "$rc" -ne 124 ] || { echo "$out"; fail "a killed rank: the job hung (killed by timeout after 90 s)"; }
[ "$secs" -lt 60 ] || fail "a killed rank: the job took $secs s to end"
# The job must end because of the kill (mpirun reports the signal), not from an error of its own.
echo "$out" | grep -q "exited on signal 9" || { echo "$out"; fail "a killed rank: mpirun did not report the SIGKILL"; }
echo "killed rank: job ended with status $rc after $secs s"
[ -f "$dir/fault.ckpt.safetensors" ] || fail "no checkpoint was written"
ls "$dir" | grep -v '^fault.ckpt.safetensors$' && fail "a temporary checkpoint file was left behind"
WICK_TEST_FAULT_DIR=$dir "$exe" "[.fault-resume]" || fail "the last checkpoint does not load"
echo "PASS"
