#!/usr/bin/env bash
# The Fashion-MNIST demo's command line (CLI11), curves and checkpoints on a tiny data set made
# here in the IDX format (Debian's dataset-fashion-mnist is not installed by `make test`): dark
# images are class 0, bright ones class 1. Checks that training runs and the test accuracy is
# 100% (the classes are trivially apart), that --resume continues from the checkpoint, that
# the curves' CSV and gnuplot script (and the PNG when gnuplot is on PATH) are written, and
# that bad options give a message and a non-zero exit.
# Usage: fashion_demo_test.sh DEMO_BINARY WORK_DIR
set -u
BIN=$1
WORK=$2
rm -rf "$WORK" && mkdir -p "$WORK/data"
cd "$WORK" || exit 1
fail=0
ok() { echo "ok: $*"; }
bad() {
  echo "FAILED: $*"
  fail=1
}

# IDX files: a big-endian header (magic, count[, rows, cols]) then one byte per pixel / label.
make_split() {  # make_split NAME COUNT
  local name=$1 n=$2 i
  {
    printf '\x00\x00\x08\x03'
    printf "\\x$(printf %02x $((n >> 24 & 255)))\\x$(printf %02x $((n >> 16 & 255)))"
    printf "\\x$(printf %02x $((n >> 8 & 255)))\\x$(printf %02x $((n & 255)))"
    printf '\x00\x00\x00\x1c\x00\x00\x00\x1c'
    for ((i = 0; i < n; i++)); do
      if ((i % 2)); then head -c 784 /dev/zero | tr '\0' '\310'; else head -c 784 /dev/zero; fi
    done
  } | gzip -n >"data/$name-images-idx3-ubyte.gz"
  {
    printf '\x00\x00\x08\x01'
    printf "\\x$(printf %02x $((n >> 24 & 255)))\\x$(printf %02x $((n >> 16 & 255)))"
    printf "\\x$(printf %02x $((n >> 8 & 255)))\\x$(printf %02x $((n & 255)))"
    for ((i = 0; i < n; i++)); do printf "\\x0$((i % 2))"; done
  } | gzip -n >"data/$name-labels-idx1-ubyte.gz"
}
make_split train 64
make_split t10k 32

args=(--data data --batch-size 16 --devices cpu:0 --threads 1 --log-every 2 --checkpoint f.ckpt --curves f)
"$BIN" "${args[@]}" --epochs 1 >run1.log 2>&1
rc=$?
[ "$rc" -eq 0 ] && grep -q "^epoch 1/1: .*test accuracy 100.00%" run1.log && [ -s f.ckpt ] &&
  ok "1 epoch on the tiny set: test accuracy 100%, checkpoint written" || {
  bad "1 epoch: exit $rc"
  cat run1.log
}
"$BIN" "${args[@]}" --epochs 2 --resume >run2.log 2>&1
rc=$?
[ "$rc" -eq 0 ] && grep -q "resumed from f.ckpt after epoch 1" run2.log && grep -q "^epoch 2/2:" run2.log &&
  ! grep -q "^epoch 1/2:" run2.log && ok "--resume continues with epoch 2" || {
  bad "--resume: exit $rc"
  cat run2.log
}
head -1 f.csv | grep -qx "series,step,value" && [ "$(grep -c '^test accuracy,' f.csv)" -eq 2 ] &&
  [ "$(grep -c '^train loss,' f.csv)" -eq 4 ] && [ -s f.gp ] &&
  ok "f.csv holds both epochs (4 train-loss windows, 2 test accuracies), f.gp written" || {
  bad "curves"
  cat f.csv
}
if command -v gnuplot >/dev/null; then
  [ "$(head -c 4 f.png | od -An -c | tr -d ' ')" = "211PNG" ] && grep -q "curves: f.png" run2.log &&
    ok "f.png drawn by gnuplot" || bad "no PNG although gnuplot is installed"
else
  grep -q "gnuplot not found" run2.log && ok "no gnuplot: says how to plot" || bad "no gnuplot message"
fi

expect_fail() {  # expect_fail PATTERN ARGS...
  local pattern=$1
  shift
  local out rc
  out=$("$BIN" "$@" 2>&1)
  rc=$?
  if [ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] && grep -q -- "$pattern" <<<"$out"; then
    ok "$* -> exit $rc"
  else
    bad "$* -> exit $rc (want non-zero with '$pattern'):"
    echo "$out"
  fi
}
expect_fail "epochs" --epochs 0
expect_fail "batch-size" --batch-size x
expect_fail "optimizer" --optimizer rmsprop
expect_fail "devices" --devices cpu:0,nope
expect_fail "threads" --threads -1
expect_fail "nosuch" --nosuch
expect_fail "cannot load Fashion-MNIST" --data "$WORK/missing"
expect_fail "no checkpoint" --data data --resume --checkpoint "$WORK/missing.ckpt"
"$BIN" --help >help.txt 2>&1 && grep -q -- "--optimizer" help.txt && grep -q -- "--curves" help.txt &&
  ok "--help lists the options" || bad "--help"
exit $fail
