#!/usr/bin/env bash
# The tour's communication-hook example (examples/tour_09_comm_hook.cpp, docs/tour/09-comm-hook.md)
# on 2 ranks: DDP's own all-reduce and allreduce_hook give the same bits on both ranks; the
# float32 compression gives parameters equal on both ranks and within float32's rounding of the
# exact ones, but not equal to them; noop_hook leaves each rank with a model of its own.
# Usage: tour_comm_hook_test.sh <tour_09_comm_hook> <output dir> <mpirun and its options...>
set -u
bin=$1
out=$2
shift 2
rm -rf "$out" && mkdir -p "$out"
"$@" -np 2 "$bin" >"$out/log.txt" 2>&1 || { cat "$out/log.txt"; echo "FAIL: the example failed"; exit 1; }
log=$out/log.txt
fail=0
no() { echo "FAIL: $*"; fail=1; }
# checksum / difference of rank $1 on the line of run $2
sum_of() { grep "^\[rank $1\] $2 " "$log" | grep -o 'checksum [0-9a-f]*' | awk '{print $2}'; }
diff_of() { grep "^\[rank $1\] $2 " "$log" | sed 's/.*first run //'; }

own=$(sum_of 0 "DDP's own all-reduce")
[ -n "$own" ] || no "no checksum for DDP's own all-reduce"
for r in 0 1; do
  [ "$(sum_of $r "DDP's own all-reduce")" = "$own" ] || no "rank $r's DDP's own all-reduce differs from rank 0's"
  [ "$(sum_of $r allreduce_hook)" = "$own" ] || no "rank $r: allreduce_hook did not give DDP's own bits"
done
c0=$(sum_of 0 "float32 compression")
[ -n "$c0" ] && [ "$c0" = "$(sum_of 1 "float32 compression")" ] || no "the float32 compression differs across ranks"
[ "$c0" != "$own" ] || no "the float32 compression gave the exact bits: its rounding is not visible"
awk -v d="$(diff_of 0 "float32 compression")" 'BEGIN { exit !(d > 0 && d < 1e-6) }' ||
  no "the float32 compression's difference $(diff_of 0 "float32 compression") is not in (0, 1e-6)"
[ "$(sum_of 0 noop_hook)" != "$(sum_of 1 noop_hook)" ] || no "noop_hook left the ranks with the same model"
[ "$(grep -c '^\[rank 0\] hook: bucket' "$log")" = 2 ] || no "rank 0 did not show the hook's 2 buckets"
[ $fail = 0 ] || cat "$log"
exit $fail
