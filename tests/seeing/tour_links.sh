#!/usr/bin/env bash
# Every file the tour (docs/tour/*.md) and docs/seeing.md point to exists: relative Markdown
# links, and `backticked` repository paths (a/b.ext), outside fenced code blocks (where a C++
# lambda `[&x](T& y)` looks like a link). Usage: tour_links.sh <source dir>
set -u
src=$1
fail=0
checked=0
for page in "$src"/docs/tour/*.md "$src"/docs/seeing.md; do
  dir=$(dirname "$page")
  prose=$(awk '/^```/ { fenced = !fenced; next } !fenced' "$page")
  # relative links: ](path) without a scheme or an anchor-only target
  while IFS= read -r link; do
    target=${link%%#*}
    [ -z "$target" ] && continue
    checked=$((checked + 1))
    if [ ! -e "$dir/$target" ]; then echo "FAIL: $page links to missing $target"; fail=1; fi
  done < <(grep -o '](\([^)]*\))' <<<"$prose" | sed 's/^](//; s/)$//' | grep -v '://')
  # backticked repository paths, e.g. `autograd/src/engine.cpp`
  while IFS= read -r path; do
    checked=$((checked + 1))
    if [ ! -e "$src/$path" ]; then echo "FAIL: $page names missing file $path"; fail=1; fi
  done < <(grep -o '`[A-Za-z_][A-Za-z0-9_./-]*/[A-Za-z0-9_.-]*\.[a-z]\{1,4\}`' <<<"$prose" | tr -d '`' |
           grep -E '^(core|autograd|nn|parallel|distributed|cuda|tests|examples|docs|scripts|benchmarks)/')
done
echo "$checked links and paths checked"
exit $fail
