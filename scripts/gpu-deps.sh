#!/usr/bin/env bash
# gpu-deps.sh: wick's build and test dependencies, carried as Debian packages to a GPU machine
# that has the CUDA toolkit, a compiler, CMake and ninja but not wick's Debian packages and no
# network (docs/cuda.md, "Running the GPU check").
#
#   scripts/gpu-deps.sh fetch [DIR]      on a Debian 12 machine with network: downloads the .deb
#                                        files below into DIR (default .gpu-deps, which git
#                                        ignores), with a MANIFEST of names and versions
#   scripts/gpu-deps.sh unpack DIR PREFIX
#                                        on the GPU machine: unpacks every .deb of DIR under
#                                        PREFIX (dpkg -x, or ar, tar and xz where dpkg is missing;
#                                        nothing is installed, nothing outside PREFIX is
#                                        written), then lists the shared libraries they need
#                                        that neither PREFIX nor the machine has
#   scripts/gpu-deps.sh env PREFIX       prints the shell assignments that scripts/gpu-check.sh
#                                        evaluates: CMake flags, and the environment for running
#                                        the tests and mpirun
#
# The packages are those of Debian 12 (glibc 2.36): they run on any glibc at least as new. The
# system's own C and C++ runtimes are used; only what wick needs beyond them is carried.
set -euo pipefail

ARCH_DIR=x86_64-linux-gnu

# Build: headers, CMake packages and link-time libraries.
BUILD_PKGS=(
  libfmt-dev libfmt9                        # fmt
  nlohmann-json3-dev                        # nlohmann_json (headers only)
  zlib1g-dev zlib1g                         # ZLIB
  catch2                                    # Catch2 v2 (tests)
  libopenblas-pthread-dev libopenblas0-pthread libgfortran5 libquadmath0  # OpenBLAS, CBLAS
  libbenchmark-dev libbenchmark1debian      # Google Benchmark (bench_cuda)
)
# Open MPI 4.1 and what its libraries and plugins load (test_distributed_gpu, the distributed
# ctest entries). Unpacked under PREFIX it runs relocated through OPAL_PREFIX.
MPI_PKGS=(
  libopenmpi-dev libopenmpi3 openmpi-bin openmpi-common
  libhwloc15 libevent-core-2.1-7 libevent-pthreads-2.1-7 libpmix2 libfabric1 libucx0
  libibverbs1 librdmacm1 libnl-3-200 libnl-route-3-200 libpsm-infinipath1 libpsm2-2 libnuma1
  libmunge2 libltdl7 libpciaccess0 libxnvctrl0 libx11-6 libxext6 libxcb1 libxau6 libxdmcp6
  libbsd0 libmd0
  ibverbs-providers                         # what libfabric's network plugins load
)

usage() {
  sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

fetch() {
  local dir=${1:-.gpu-deps}
  command -v apt-get >/dev/null || { echo "gpu-deps: fetch needs apt-get (a Debian machine)" >&2; exit 1; }
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  rm -f "$dir"/*.deb "$dir/MANIFEST"
  # apt-get download writes to the current folder; as root it warns that _apt cannot write
  # there, which is harmless.
  (cd "$dir" && apt-get download "${BUILD_PKGS[@]}" "${MPI_PKGS[@]}" 2>&1 | grep -v "^W: Download is performed unsandboxed")
  for f in "$dir"/*.deb; do
    dpkg-deb -f "$f" Package Version | paste -sd ' ' -
  done | sed 's/Package: //; s/ Version: / /' | sort >"$dir/MANIFEST"
  local n
  n=$(ls "$dir"/*.deb | wc -l)
  echo "gpu-deps: $n packages, $(du -sh "$dir" | cut -f1), in $dir (MANIFEST lists them)"
  local want=$((${#BUILD_PKGS[@]} + ${#MPI_PKGS[@]}))
  [ "$n" -eq "$want" ] || { echo "gpu-deps: expected $want packages" >&2; exit 1; }
}

# Unpacks one .deb under $2: with dpkg-deb, else (or with WICK_GPU_DEPS_NO_DPKG=1, for tests)
# by hand: a .deb is an ar archive holding data.tar.*.
unpack_one() {
  local deb=$1 prefix=$2
  if [ "${WICK_GPU_DEPS_NO_DPKG:-0}" != 1 ] && command -v dpkg-deb >/dev/null 2>&1; then
    dpkg-deb -x "$deb" "$prefix"
    return
  fi
  local tmp member
  tmp=$(mktemp -d)
  (cd "$tmp" && ar x "$deb")
  member=$(ls "$tmp" | grep '^data\.tar' | head -n 1)
  tar -xf "$tmp/$member" -C "$prefix"
  rm -rf "$tmp"
}

unpack() {
  [ $# -eq 2 ] || usage
  local dir prefix=$2
  dir=$(cd "$1" && pwd)
  ls "$dir"/*.deb >/dev/null 2>&1 || { echo "gpu-deps: no .deb files in $dir" >&2; exit 1; }
  mkdir -p "$prefix"
  prefix=$(cd "$prefix" && pwd)
  for f in "$dir"/*.deb; do unpack_one "$f" "$prefix"; done
  # OpenBLAS's static archives (31 MB) are never linked; documentation is not needed.
  find "$prefix" -name 'libopenblas*.a' -delete
  rm -rf "$prefix/usr/share/doc" "$prefix/usr/share/man"
  # Debian points mpirun and mpicxx at the Open MPI programs, and PSM's soname at its library,
  # through update-alternatives, which dpkg -x does not run: link them here, relative, inside
  # PREFIX.
  local bin="$prefix/usr/bin"
  if [ -x "$bin/orterun" ]; then
    ln -sf orterun "$bin/mpirun"
    ln -sf orterun "$bin/mpiexec"
    ln -sf opal_wrapper "$bin/mpicxx"
  fi
  local psm="$prefix/usr/lib/libpsm1"
  [ -f "$psm/libpsm_infinipath.so.1.16" ] && ln -sf libpsm_infinipath.so.1.16 "$psm/libpsm_infinipath.so.1"
  # zlib1g-dev's libz.so points at /lib/x86_64-linux-gnu/libz.so.1.2.13, absolute, which another
  # system may not have. Point it at the machine's own libz.so.1 where there is one (and drop
  # PREFIX's copy, so that no program loads an older zlib through LD_LIBRARY_PATH), else at
  # PREFIX's.
  local zdev="$prefix/usr/lib/$ARCH_DIR/libz.so" z
  if z=$(system_zlib); then
    rm -f "$prefix/lib/$ARCH_DIR"/libz.so.1* "$prefix/usr/lib/$ARCH_DIR"/libz.so.1*
    ln -sfn "$z" "$zdev"
  elif z=$(ls "$prefix/lib/$ARCH_DIR"/libz.so.1.* 2>/dev/null | head -n 1) && [ -n "$z" ]; then
    ln -sfn "$z" "$zdev"
  fi
  # Every shared library's needs, resolved as the loader will: PREFIX's folders first, then
  # the system's.
  local path
  path=$(lib_path "$prefix")
  local missing
  missing=$(find "$prefix" -type f \( -name '*.so' -o -name '*.so.*' \) -print0 |
    xargs -0 -r env LD_LIBRARY_PATH="$path" ldd 2>/dev/null | grep "not found" | sort -u || true)
  echo "gpu-deps: $(ls "$dir"/*.deb | wc -l) packages unpacked under $prefix"
  if [ -n "$missing" ]; then
    echo "gpu-deps: libraries that neither the packages nor this machine provide:"
    echo "$missing" | sed 's/^[[:space:]]*/  /'
    return 1
  fi
}

# The library folders of PREFIX, most specific first (some Debian 12 packages install under
# /lib rather than /usr/lib).
lib_path() {
  local p=$1/usr/lib/$ARCH_DIR
  echo "$p/openblas-pthread:$p/openmpi/lib:$p/pmix2/lib:$p:$1/lib/$ARCH_DIR:$1/usr/lib/libpsm1:$p/ucx"
}

# The machine's libz.so.1, if the loader knows one.
system_zlib() {
  local z
  z=$(ldconfig -p 2>/dev/null | awk '/libz\.so\.1 .*x86-64/ {print $NF; exit}')
  [ -n "$z" ] && echo "$z"
}

env_of() {
  [ $# -eq 1 ] || usage
  local prefix
  prefix=$(cd "$1" && pwd)
  local lib=$prefix/usr/lib/$ARCH_DIR path
  path=$(lib_path "$prefix")
  local cmake=(
    "-DCMAKE_PREFIX_PATH=$prefix/usr"
    "-DWICK_OPENBLAS_LIBRARY=$lib/openblas-pthread/libopenblas.so"
    "-DWICK_CBLAS_INCLUDE_DIR=$prefix/usr/include/$ARCH_DIR/openblas-pthread"
    # ld finds the libraries that libopenblas and libmpi need (libgfortran, the Open MPI
    # runtime) through -rpath-link.
    "-DCMAKE_EXE_LINKER_FLAGS=-Wl,-rpath-link,$path"
    "-DCMAKE_SHARED_LINKER_FLAGS=-Wl,-rpath-link,$path"
  )
  if [ -x "$prefix/usr/bin/orterun" ]; then
    cmake+=(
      "-DMPI_CXX_COMPILER=$prefix/usr/bin/mpicxx"
      "-DMPIEXEC_EXECUTABLE=$prefix/usr/bin/mpirun"
    )
  fi
  printf 'WICK_DEPS_CMAKE_ARGS=('
  printf '%q ' "${cmake[@]}"
  printf ')\n'
  # Open MPI finds its plugins, help files and helper programs from OPAL_PREFIX, PMIx its
  # plugins from PMIX_INSTALL_PREFIX. CMAKE_PREFIX_PATH in the environment serves the CMake runs
  # that tests start themselves (the find_package(wick) consumer).
  local env=(
    "LD_LIBRARY_PATH=$path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    "OPAL_PREFIX=$prefix/usr" "PMIX_INSTALL_PREFIX=$lib/pmix2" "PATH=$prefix/usr/bin:$PATH"
    "CMAKE_PREFIX_PATH=$prefix/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  )
  # mpirun refuses to start, even on one machine, when its remote launcher (ssh or rsh) is
  # missing; the local runs never call it.
  if ! command -v ssh >/dev/null 2>&1 && ! command -v rsh >/dev/null 2>&1; then
    env+=("OMPI_MCA_plm_rsh_agent=false")
  fi
  printf 'WICK_DEPS_ENV=('
  printf '%q ' "${env[@]}"
  printf ')\n'
}

[ $# -ge 1 ] || usage
cmd=$1
shift
case "$cmd" in
  fetch) fetch "$@" ;;
  unpack) unpack "$@" ;;
  env) env_of "$@" ;;
  *) usage ;;
esac
