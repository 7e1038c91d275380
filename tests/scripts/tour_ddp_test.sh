#!/usr/bin/env bash
# The tour's DDP example (examples/tour_07_ddp.cpp, docs/tour/07-ddp.md) on 2 ranks: the ranks
# start from different weights, and from construction on their parameters are bitwise identical
# after every step, while each rank trained on its own rows.
# Usage: tour_ddp_test.sh <tour_07_ddp> <output dir> <mpirun and its options...>
set -u
bin=$1
out=$2
shift 2
rm -rf "$out" && mkdir -p "$out"
"$@" -np 2 "$bin" "$out" >"$out/log.txt" 2>&1 || { cat "$out/log.txt"; echo "FAIL: the example failed"; exit 1; }
log=$out/log.txt
fail=0
no() { echo "FAIL: $*"; fail=1; }
# checksum of rank $1 on lines matching $2
sum_of() { grep "^\[rank $1\] $2" "$log" | grep -o 'checksum [0-9a-f]*' | awk '{print $2}'; }

before0=$(sum_of 0 'before DDP')
before1=$(sum_of 1 'before DDP')
[ -n "$before0" ] && [ -n "$before1" ] || no "no 'before DDP' checksum from each rank"
# Different seeds give different weights: the checksum tells the ranks' models apart.
[ "$before0" != "$before1" ] || no "the ranks' weights were equal before DDP ($before0): the check below proves nothing"
[ "$(sum_of 0 'after construction')" = "$before0" ] || no "rank 0's weights changed at construction"
[ "$(sum_of 1 'after construction')" = "$before0" ] || no "rank 1 did not get rank 0's weights at construction"

previous=$before0
for step in 0 1 2; do
  c0=$(sum_of 0 "step $step: rows")
  c1=$(sum_of 1 "step $step: rows")
  [ -n "$c0" ] || no "no checksum from rank 0 after step $step"
  [ "$c0" = "$c1" ] || no "step $step: rank 0's checksum $c0, rank 1's $c1"
  [ "$c0" != "$previous" ] || no "step $step did not change the parameters"
  previous=$c0
  # The sampler's shares: disjoint, together every one of the 16 rows.
  rows=$(grep -E "^\[rank [01]\] step $step: rows" "$log" | sed 's/.*rows \([0-9 ]*\),.*/\1/' | tr ' ' '\n' | sort -n)
  [ "$(echo "$rows" | tr '\n' ' ')" = "0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 " ] ||
    no "step $step: the ranks' rows are not a split of 0..15: $(echo "$rows" | tr '\n' ' ')"
done
[ "$(grep -c '^\[rank 0\] bucket' "$log")" = 3 ] || no "rank 0 did not print 3 buckets"
[ "$(grep '^\[rank 0\] bucket' "$log" | cut -d' ' -f3-)" = "$(grep '^\[rank 1\] bucket' "$log" | cut -d' ' -f3-)" ] ||
  no "the ranks' buckets differ"
[ "$(grep -c 'launches' "$out/ddp_step.dot" 2>/dev/null)" = 3 ] || no "ddp_step.dot does not show 3 launches"
[ $fail = 0 ] || cat "$log"
exit $fail
