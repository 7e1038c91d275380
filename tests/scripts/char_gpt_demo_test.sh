#!/usr/bin/env bash
# The character-level GPT demo (examples/char_gpt.cpp) on a tiny model and a text made here (not
# /usr/share/games/fortunes, which `make test` does not install): the validation loss goes down
# and ends below the unigram baseline; a checkpoint is written and --resume continues from it
# exactly as an uninterrupted run; --sample writes N characters; the curves' CSV, gnuplot script
# (and PNG when gnuplot is on PATH) are written; hostile files are skipped; bad options and bad
# input end with a message and a non-zero exit, never a crash.
# Usage: char_gpt_demo_test.sh CHAR_GPT_BINARY WORK_DIR
set -u
BIN=$1
WORK=$2
rm -rf "$WORK" && mkdir -p "$WORK/text"
cd "$WORK" || exit 1
fail=0
ok() { echo "ok: $*"; }
bad() {
  echo "FAILED: $*"
  fail=1
}

# ---- the text: 60 short fortunes built from a few words, plus files the loader must skip ----
words=(the cat sat on a mat and dog ran to red hat big sun)
for i in $(seq 0 59); do
  line=""
  for j in 0 1 2 3 4 5; do line+="${words[$(((i * 7 + j * 3 + i * j) % ${#words[@]}))]} "; done
  printf '%s\nsaid the %s.\n%%\n' "$line" "${words[$((i % ${#words[@]}))]}"
done >"text/fortunes"
printf 'binary\0file\n' >"text/binary"          # a NUL byte: not text
: >"text/empty"                                 # no fortune in it
printf 'strfile index\0\1\2' >"text/fortunes.dat"  # an index file: never read
ln -s fortunes "text/link"                       # a symbolic link: never read

tiny=(--data text --block-size 16 --d-model 32 --heads 2 --layers 1 --batch-size 8 --steps-per-epoch 15
  --log-every 5 --eval-windows 16 --lr 1e-2 --devices cpu:0 --threads 1 --sample-after 0)
val_losses() { sed -n 's/^epoch [0-9]*\/[0-9]*: .*validation loss \([0-9.]*\) .*/\1/p' "$1"; }

# ---- training: the loss goes down, below the unigram baseline ----
"$BIN" "${tiny[@]}" --epochs 3 --checkpoint full.ckpt --curves full >full.log 2>full.err
rc=$?
mapfile -t v < <(val_losses full.log)
baseline=$(sed -n 's/.*unigram baseline (training frequencies on the validation text): \([0-9.]*\).*/\1/p' full.log)
if [ "$rc" -ne 0 ] || [ "${#v[@]}" -ne 3 ] || [ -z "$baseline" ]; then
  bad "3 epochs: exit $rc, ${#v[@]} validation losses, baseline '$baseline'"
  cat full.log full.err
elif awk -v a="${v[0]}" -v c="${v[2]}" -v b="$baseline" 'BEGIN { exit !(c < a && c < 0.8 * b) }'; then
  ok "validation loss ${v[0]} -> ${v[2]} (unigram baseline $baseline)"
else
  bad "validation loss did not go down below the baseline: ${v[*]} (baseline $baseline)"
fi
grep -q "skipped text/binary: not a text file" full.err && grep -q "skipped text/empty" full.err &&
  ! grep -q "fortunes.dat\|text/link" full.err && grep -q "from 1 file(s) in text (2 skipped)" full.log &&
  ok "binary and empty files skipped, .dat and links not read" || {
  bad "hostile files"
  cat full.err
}

# ---- checkpoint and --resume: 2 epochs of 3, then the last, equals 3 at once ----
"$BIN" "${tiny[@]}" --epochs 3 --stop-after 2 --checkpoint part.ckpt --curves part >part1.log 2>&1 &&
  "$BIN" "${tiny[@]}" --epochs 3 --checkpoint part.ckpt --curves part --resume >part2.log 2>&1
rc=$?
mapfile -t r < <(val_losses part2.log)
if [ "$rc" -eq 0 ] && [ -s part.ckpt ] && grep -q "resumed from part.ckpt after epoch 2" part2.log &&
  [ "${#r[@]}" -eq 1 ] && [ "${r[0]}" = "${v[2]}" ]; then
  ok "--resume after epoch 2 gives epoch 3's validation loss ${r[0]}, as the uninterrupted run"
else
  bad "--resume: exit $rc, epoch 3 '${r[*]}' vs uninterrupted '${v[2]}'"
  cat part2.log
fi
[ "$(grep -c '^validation loss,' part.csv)" -eq 3 ] && cmp -s full.csv part.csv &&
  ok "the resumed run's CSV holds the whole history, equal to the uninterrupted run's" || bad "resumed CSV"

# ---- curves: CSV, gnuplot script, PNG when gnuplot exists ----
head -1 full.csv | grep -qx "series,step,value" && grep -q "^train loss,15," full.csv && [ -s full.gp ] &&
  ok "full.csv and full.gp written" || bad "curves CSV/script"
if command -v gnuplot >/dev/null; then
  [ "$(head -c 4 full.png | od -An -c | tr -d ' ')" = "211PNG" ] && grep -q "curves: full.png" full.log &&
    ok "full.png drawn by gnuplot" || bad "no PNG although gnuplot is installed"
else
  grep -q "gnuplot not found" full.log && ok "no gnuplot: says how to plot" || bad "no gnuplot message"
fi

# ---- sampling ----
# The text, then a newline: N + 1 bytes (N + prompt + 1 with a prompt).
"$BIN" --checkpoint full.ckpt --sample 40 --seed 3 >sample.txt 2>sample.err
rc=$?
n=$(wc -c <sample.txt)
[ "$rc" -eq 0 ] && [ "$n" -eq 41 ] && ok "--sample 40 writes 40 characters: '$(cat sample.txt)'" ||
  bad "--sample 40: exit $rc, $n bytes: '$(cat sample.txt sample.err)'"
"$BIN" --checkpoint full.ckpt --sample 20 --prompt "the cat" --temperature 0.5 --top-k 3 >prompt.txt 2>&1
n=$(wc -c <prompt.txt)
[ "$n" -eq 28 ] && [ "$(head -c 7 prompt.txt)" = "the cat" ] && ok "--prompt: '$(cat prompt.txt)'" ||
  bad "--prompt: $n bytes: '$(cat prompt.txt)'"
a=$("$BIN" --checkpoint full.ckpt --sample 30 --top-k 1 --seed 1)
b=$("$BIN" --checkpoint full.ckpt --sample 30 --top-k 1 --seed 2)
c=$("$BIN" --checkpoint full.ckpt --sample 30 --seed 5)
d=$("$BIN" --checkpoint full.ckpt --sample 30 --seed 5)
[ "$a" = "$b" ] && [ "$c" = "$d" ] && ok "--top-k 1 is greedy (seed-independent); a seed repeats its sample" ||
  bad "sampling determinism: '$a' '$b' '$c' '$d'"

# ---- one device and DataParallel over two agree (up to float rounding) ----
"$BIN" "${tiny[@]}" --epochs 1 --checkpoint one.ckpt --curves one >one.log 2>&1
"$BIN" "${tiny[@]}" --epochs 1 --checkpoint two.ckpt --curves two --devices cpu:0,cpu:1 >two.log 2>&1
one=$(val_losses one.log)
two=$(val_losses two.log)
grep -q "DataParallel over cpu:0,cpu:1" two.log &&
  awk -v a="$one" -v b="$two" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= 1e-3 * a) }' &&
  ok "1 device $one, DataParallel over 2: $two" || bad "1 device '$one' vs 2 devices '$two'"

# ---- bad options and bad input: a message and a non-zero exit, never a crash ----
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
expect_fail "epochs" --epochs abc
expect_fail "lr" --lr -1
expect_fail "devices" --devices gpu:x
expect_fail "does not divide" --d-model 32 --heads 3
expect_fail "temperature" --temperature 0
expect_fail "nosuch" --nosuch
expect_fail "top-k" --top-k -2
expect_fail "no such file" --data "$WORK/missing" --sample-after 0
expect_fail "not a text file" --data text/binary
expect_fail "too few" --data text/fortunes --block-size 100000
expect_fail "no checkpoint" --sample 5 --checkpoint "$WORK/missing.ckpt"
expect_fail "not among" --sample 5 --checkpoint full.ckpt --prompt "ZZZ"
printf 'not a checkpoint' >junk.ckpt
expect_fail "junk.ckpt" --sample 5 --checkpoint junk.ckpt
# Metadata that describes a bigger model than the tensors hold (layers 1 -> 9, the same length):
# refused before any model is built from it.
LC_ALL=C sed 's/"gpt.layers":"1"/"gpt.layers":"9"/' full.ckpt >layers.ckpt
cmp -s full.ckpt layers.ckpt && bad "layers.ckpt: the metadata edit did not apply"
expect_fail "describes a model of" --sample 5 --checkpoint layers.ckpt
expect_fail "describes a model of" --resume --checkpoint layers.ckpt "${tiny[@]}" --epochs 2
"$BIN" --help >help.txt 2>&1 && grep -q -- "--sample" help.txt && grep -q -- "--resume" help.txt &&
  ok "--help lists the options" || bad "--help"
exit $fail
