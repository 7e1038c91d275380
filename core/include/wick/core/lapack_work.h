#pragma once
// LAPACK workspace sizes in int64 (an internal header of wick::linalg's kernels, public so that
// tests can check the guards without allocating gigabytes).
//
// Note [LAPACK workspace sizes]
// LAPACK counts with 32-bit integers (Note [LAPACK from OpenBLAS]). Two things go wrong on big
// matrices that check_int_sizes (m * n <= INT_MAX) accepts:
// - A workspace query (lwork = -1) answers in a float of the matrix's dtype: float32 holds
//   integers exactly only up to 2^24, so ssyevd's 1 + 6n + 2n^2 for n = 3000 can come back one
//   element short, and a query LAPACK computed past INT_MAX has wrapped. wick takes the answer
//   rounded up one ulp, and never less than the routine's documented minimum computed here in
//   int64; an answer at or past INT_MAX (wrapped or not) is replaced by that minimum, with which
//   every routine is correct (the blocked ones pick a smaller block).
// - LAPACK's own formulas for the workspace it needs overflow int before m * n does (syevd:
//   1 + 6n + 2n^2 at n = 32768). Each kernel computes the routine's minimum here and refuses a
//   matrix whose minimum passes INT_MAX with a ValueError naming the op and the shape, before
//   anything is copied or allocated. getrf, getrs and potrf take no workspace: their largest
//   index is m * n, which check_int_sizes bounds; geqrf and orgqr need max(1, n). trsm (BLAS) and
//   getrs take none either; the least-squares drivers gels, gelsy and gelsd have their minimums
//   below, and their right-hand side buffer of max(m, n) rows is bounded like a matrix.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>

namespace wick::lapack {

/// ?syevd's documented minimum LWORK: 1 + 6n + 2n^2 with eigenvectors, 2n + 1 without (1 for n <= 1).
constexpr int64_t syevd_min_lwork(int64_t n, bool vectors) {
  if (n <= 1) return 1;
  return vectors ? 1 + 6 * n + 2 * n * n : 2 * n + 1;
}
/// ?syevd's documented minimum LIWORK: 3 + 5n with eigenvectors, 1 without (1 for n <= 1).
constexpr int64_t syevd_min_liwork(int64_t n, bool vectors) { return n <= 1 || !vectors ? 1 : 3 + 5 * n; }

/// ?gesdd's documented minimum LWORK for jobz 'N', 'S' or 'A' (k = min(m, n), x = max(m, n)):
/// 3k + max(x, 7k), 4k^2 + 7k and 4k^2 + 6k + x; plus m * n, which its faster paths add to the
/// sizes they compare LWORK with (so those comparisons fit in int too).
constexpr int64_t gesdd_min_lwork(int64_t m, int64_t n, char jobz) {
  const int64_t k = std::min(m, n), x = std::max(m, n);
  const int64_t least = jobz == 'N'   ? 3 * k + std::max(x, 7 * k)
                        : jobz == 'S' ? 4 * k * k + 7 * k
                                      : 4 * k * k + 6 * k + x;
  return std::max<int64_t>(least, 1) + m * n;
}
/// ?gesdd's IWORK: 8 min(m, n).
constexpr int64_t gesdd_iwork(int64_t m, int64_t n) { return 8 * std::min(m, n); }

/// ?gels's documented minimum LWORK: max(1, k + max(k, nrhs)), k = min(m, n).
constexpr int64_t gels_min_lwork(int64_t m, int64_t n, int64_t nrhs) {
  const int64_t k = std::min(m, n);
  return std::max<int64_t>(1, k + std::max(k, nrhs));
}
/// ?gelsy's documented minimum LWORK: max(k + 3n + 1, 2k + nrhs), k = min(m, n).
constexpr int64_t gelsy_min_lwork(int64_t m, int64_t n, int64_t nrhs) {
  const int64_t k = std::min(m, n);
  return std::max<int64_t>({1, k + 3 * n + 1, 2 * k + nrhs});
}
/// ?gelsd's NLVL, the levels of its divide and conquer: max(0, INT(log2(k / (SMLSIZ + 1))) + 1)
/// with SMLSIZ = 25 (ILAENV's answer for ?gelsd), k = min(m, n) >= 1, Fortran's INT truncating
/// toward zero (so 13 < k < 26 gives 1).
constexpr int64_t gelsd_nlvl(int64_t k) {
  if (k < 26) return k > 13 ? 1 : 0;
  int64_t levels = 0;
  for (int64_t q = k / 26; q > 0; q /= 2) ++levels;  // floor(log2(k / 26)) + 1
  return levels;
}
/// ?gelsd's minimum LWORK as its own check computes it (k = min(m, n) >= 1): 3k + max(m, nrhs,
/// 9k + 2k SMLSIZ + 8k NLVL + k nrhs + (SMLSIZ + 1)^2).
constexpr int64_t gelsd_min_lwork(int64_t m, int64_t n, int64_t nrhs) {
  const int64_t k = std::min(m, n);
  const int64_t wlalsd = 9 * k + 2 * k * 25 + 8 * k * gelsd_nlvl(k) + k * nrhs + 26 * 26;
  return 3 * k + std::max({m, nrhs, wlalsd});
}
/// ?gelsd's minimum LIWORK: max(1, 3k NLVL + 11k).
constexpr int64_t gelsd_min_liwork(int64_t m, int64_t n) {
  const int64_t k = std::min(m, n);
  return std::max<int64_t>(1, 3 * k * gelsd_nlvl(k) + 11 * k);
}

/// The LWORK (or LIWORK) to pass for a workspace query's answer `query` (read back from a float
/// of the matrix's dtype) and the routine's minimum `least` (<= INT_MAX): the answer rounded up
/// one ulp and to an integer, at least `least`; a non-finite answer, or one at or past INT_MAX,
/// gives `least` (Note [LAPACK workspace sizes]).
template <typename T>
int work_size(T query, int64_t least) {
  const T up = std::nextafter(query, static_cast<T>(INFINITY));
  const double w = std::ceil(static_cast<double>(up));
  if (!(w < static_cast<double>(INT_MAX))) return static_cast<int>(least);  // wrapped, huge or NaN
  return static_cast<int>(std::max<int64_t>(static_cast<int64_t>(std::max(w, 0.0)), least));
}

}  // namespace wick::lapack
