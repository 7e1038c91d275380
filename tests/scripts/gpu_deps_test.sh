#!/usr/bin/env bash
# scripts/gpu-deps.sh unpack and env, on packages made here (no network): every file lands under
# the prefix, the ar/tar path unpacks exactly what dpkg-deb does, a library whose needs nothing
# provides is reported (exit 1) and passes once a package provides it, and env's assignments
# point the build and the runs at the prefix.
set -u
SRC=$1
deps="$SRC/scripts/gpu-deps.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
check() {  # check DESCRIPTION COMMAND...: the command must succeed
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAILED: $what"; fail=1; fi
}
for tool in cc dpkg-deb ar tar ldd; do
  command -v "$tool" >/dev/null || { echo "skipped: $tool is missing"; exit 77; }
done

# libwickneed.so.1 needs libwickgiven.so.7, which only the second package provides.
arch=x86_64-linux-gnu
mkpkg() {  # mkpkg NAME: an empty package tree with its control file
  mkdir -p "$work/$1/DEBIAN" "$work/$1/usr/lib/$arch"
  printf 'Package: %s\nVersion: 1.0\nArchitecture: amd64\nMaintainer: wick tests <none@example.invalid>\nDescription: test package\n' \
    "$1" >"$work/$1/DEBIAN/control"
}
mkpkg wickgiven
mkpkg wickneed
echo 'int given(void) { return 7; }' >"$work/given.c"
echo 'int given(void); int need(void) { return given(); }' >"$work/need.c"
cc -shared -fPIC -o "$work/wickgiven/usr/lib/$arch/libwickgiven.so.7" -Wl,-soname,libwickgiven.so.7 "$work/given.c"
ln -s libwickgiven.so.7 "$work/wickgiven/usr/lib/$arch/libwickgiven.so"
cc -shared -fPIC -o "$work/wickneed/usr/lib/$arch/libwickneed.so.1" -Wl,-soname,libwickneed.so.1 "$work/need.c" \
  -L"$work/wickgiven/usr/lib/$arch" -lwickgiven
mkdir -p "$work/wickneed/usr/include"
echo '#define WICK_NEED 1' >"$work/wickneed/usr/include/wickneed.h"
mkdir -p "$work/one" "$work/both"
# xz, as Debian 12's packages are compressed (Ubuntu's dpkg-deb defaults to zstd, which the
# ar/tar path's tar cannot open where zstd is not installed).
dpkg-deb -Zxz --root-owner-group -b "$work/wickneed" "$work/one/wickneed.deb" >/dev/null
cp "$work/one/wickneed.deb" "$work/both/"
dpkg-deb -Zxz --root-owner-group -b "$work/wickgiven" "$work/both/wickgiven.deb" >/dev/null

# 1. A need that nothing provides: reported by name, exit 1.
out=$("$deps" unpack "$work/one" "$work/p1" 2>&1)
rc=$?
check "a missing library is reported (exit $rc)" test "$rc" -eq 1
check "the report names it" grep -q "libwickgiven.so.7 => not found" <<<"$out"
check "the package's files land under the prefix" test -f "$work/p1/usr/include/wickneed.h"

# 2. Both packages: nothing missing.
out=$("$deps" unpack "$work/both" "$work/p2" 2>&1)
rc=$?
check "with its provider, nothing is missing (exit $rc: $out)" test "$rc" -eq 0

# 3. Without dpkg-deb (ar and tar): the same tree, file for file. tar needs the xz program for
# that (dpkg-deb has its own decompressor), which a minimal system may lack.
if command -v xz >/dev/null; then
  out=$(WICK_GPU_DEPS_NO_DPKG=1 "$deps" unpack "$work/both" "$work/p3" 2>&1)
  rc=$?
  check "the ar/tar path succeeds (exit $rc: $out)" test "$rc" -eq 0
  check "the ar/tar path unpacks what dpkg-deb does" diff -r --no-dereference "$work/p2" "$work/p3"
else
  echo "skipped: the ar/tar path (no xz program)"
fi

# 4. env: assignments that bash evaluates, pointing at the prefix.
eval "$("$deps" env "$work/p2")" || { echo "FAILED: env's output does not evaluate"; fail=1; }
joined=" ${WICK_DEPS_CMAKE_ARGS[*]-} "
check "CMake looks in the prefix first" grep -q -- " -DCMAKE_PREFIX_PATH=$work/p2/usr " <<<"$joined"
check "the runs load the prefix's libraries first" \
  grep -q "^LD_LIBRARY_PATH=$work/p2/usr/lib/$arch/openblas-pthread:" < <(printf '%s\n' "${WICK_DEPS_ENV[@]-}")
check "Open MPI is relocated to the prefix" grep -qx "OPAL_PREFIX=$work/p2/usr" < <(printf '%s\n' "${WICK_DEPS_ENV[@]-}")
# The library the loader resolves through that path is the prefix's.
lib_path=$(printf '%s\n' "${WICK_DEPS_ENV[@]}" | sed -n 's/^LD_LIBRARY_PATH=//p')
resolved=$(LD_LIBRARY_PATH=$lib_path ldd "$work/p2/usr/lib/$arch/libwickneed.so.1" | awk '/libwickgiven/ {print $3}')
check "libwickneed resolves libwickgiven inside the prefix ($resolved)" test "$resolved" = "$work/p2/usr/lib/$arch/libwickgiven.so.7"

# 5. Bad usage: exit 2, and no .deb files: exit 1, nothing half-made.
"$deps" unpack >/dev/null 2>&1
check "unpack without arguments is bad usage" test $? -eq 2
mkdir -p "$work/empty"
"$deps" unpack "$work/empty" "$work/p4" >/dev/null 2>&1
rc=$?
check "a folder without .deb files fails (exit $rc)" test "$rc" -eq 1
check "and makes no prefix" test ! -e "$work/p4"

exit $fail
