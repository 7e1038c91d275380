#!/usr/bin/env bash
# Renders every DOT file the picture tests produce (and every checked-in one) with Graphviz:
# each must be accepted by `dot -Tsvg`. Exits 77 (ctest: skipped) when dot is not installed.
# Usage: dot_check.sh <test_seeing binary> <source dir> [<more commands that write DOT into $WICK_DOT_OUT>...]
set -u
bin=$1
src=$2
shift 2
if ! command -v dot >/dev/null 2>&1; then
  echo "skipped: Graphviz's 'dot' is not installed (apt-get install graphviz; make docs installs it)"
  exit 77
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export WICK_DOT_OUT=$out
"$bin" >/dev/null || { echo "FAIL: $bin failed"; exit 1; }
n=0
for cmd in "$@"; do
  n=$((n + 1))
  mkdir -p "$out/writer$n"
  (cd "$out/writer$n" && eval "$cmd" >/dev/null) || { echo "FAIL: $cmd failed"; exit 1; }
done
shopt -s nullglob
files=("$out"/*.dot "$out"/writer*/*.dot "$src"/tests/data/dot/*.dot "$src"/docs/tour/img/*.dot)
if [ ${#files[@]} -eq 0 ]; then echo "FAIL: no DOT files produced"; exit 1; fi
fail=0
for f in "${files[@]}"; do
  if ! err=$(dot -Tsvg "$f" 2>&1 >/dev/null) || [ -n "$err" ]; then
    echo "FAIL: dot -Tsvg rejected $f: $err"
    fail=1
  fi
done
echo "${#files[@]} DOT files rendered by dot -Tsvg"
exit $fail
