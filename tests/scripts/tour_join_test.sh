#!/usr/bin/env bash
# The tour's Join example (examples/tour_11_join.cpp, docs/tour/11-join.md) on 2 ranks: rank 0
# has 2 batches and rank 1 has 4. For every batch both ranks print the same gradient norm (rank 0
# shadowing batches 2 and 3, its .grad holding the synchronised gradient); rank 0 says it shadowed
# 2 batches of 1 rank; both name rank 1 as the last joiner and print the same checksum.
# Usage: tour_join_test.sh <tour_11_join> <output dir> <mpirun and its options...>
set -u
bin=$1
out=$2
shift 2
rm -rf "$out" && mkdir -p "$out"
"$@" -np 2 "$bin" "$out" >"$out/log.txt" 2>&1 || { cat "$out/log.txt"; echo "FAIL: the example failed"; exit 1; }
log=$out/log.txt
fail=0
no() { echo "FAIL: $*"; fail=1; }
norm_of() { grep "^\[rank $1\] batch $2 gradient norm" "$log" | awk '{print $6}'; }
for b in 0 1 2 3; do
  n1=$(norm_of 1 "$b")
  [ -n "$n1" ] || no "rank 1 printed no gradient norm for batch $b"
  [ "$(norm_of 0 "$b")" = "$n1" ] || no "batch $b: rank 0's gradient norm $(norm_of 0 "$b") is not rank 1's $n1"
done
grep -q '^\[rank 0\] batch 2 gradient norm .* (shadowed)$' "$log" || no "rank 0 did not shadow batch 2"
grep -q '^\[rank 1\] batch 2 gradient norm .* (1 rank(s) training)$' "$log" || no "rank 1 did not train batch 2 alone"
[ "$(grep -c '^\[rank 0\] joined: 1 rank(s) still train' "$log")" = 2 ] || no "rank 0 did not shadow 2 batches of 1 rank"
[ "$(grep -c '^\[rank 1\] joined:' "$log")" = 0 ] || no "rank 1 shadowed something"
for r in 0 1; do
  grep -q "^\[rank $r\] every rank has joined; the model comes from rank 1" "$log" || no "rank $r did not name rank 1"
done
c0=$(grep '^\[rank 0\] checksum' "$log" | awk '{print $4}')
[ -n "$c0" ] && [ "$c0" = "$(grep '^\[rank 1\] checksum' "$log" | awk '{print $4}')" ] || no "the ranks' models differ"
# The picture: 15 collectives on each rank from rank 0's join() on, paired row by row.
dot=$out/join_timeline.dot
[ -f "$dot" ] || no "rank 0 wrote no join_timeline.dot"
for c in 0 1; do
  [ "$(grep -c "^  c${c}_[0-9]* \[" "$dot")" = 15 ] || no "column $c of the picture does not have 15 rows"
done
[ "$(grep -c 'no rank trains any more' "$dot")" = 2 ] || no "the picture does not end with both ranks' last exchange"
[ "$(grep -c 'shadowed: agreement' "$dot")" = 2 ] || no "the picture does not show rank 0 shadowing 2 ZeRO steps"
[ $fail = 0 ] || cat "$log"
exit $fail
