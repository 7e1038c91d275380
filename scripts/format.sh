#!/usr/bin/env bash
# format.sh [--check]: clang-format (Debian's clang-format-14, the version CI pins: another
# version formats differently) over every tracked C++ and CUDA source, with .clang-format.
#   --check: change nothing; print each file that differs and exit 1 if any does.
set -euo pipefail
cd "$(dirname "$0")/.."
CF=$(command -v clang-format-14 || true)
if [ -z "$CF" ]; then
  echo "format.sh: clang-format-14 not found (apt-get install clang-format-14, or: make format-check)" >&2
  exit 2
fi
mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.inc' '*.cu' '*.cuh' '*.cc')
if [ "${1:-}" = "--check" ]; then
  bad=0
  for f in "${files[@]}"; do
    if ! "$CF" --style=file --dry-run --Werror "$f" >/dev/null 2>&1; then
      echo "not formatted: $f"
      bad=1
    fi
  done
  if [ "$bad" -ne 0 ]; then
    echo "format.sh: run 'make format' (clang-format-14 -i) and commit the result" >&2
    exit 1
  fi
  echo "format: ${#files[@]} files formatted as .clang-format says"
else
  "$CF" --style=file -i "${files[@]}"
fi
