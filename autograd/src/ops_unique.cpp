// unique, unique_dim and unique_consecutive: runs of equal elements (or of equal slices along a
// dim), found on the host (Note [Host ops] in host_ops.h).
//
// Note [unique]
// One loop serves all three. The input is seen as n rows of m values: the flattened elements
// (m = 1) or the slices along `dim` (moved first). unique sorts the rows stably (lexicographic,
// NaN after every number, Note [Sort order]) and unique_consecutive keeps their order; a run is a
// stretch of rows equal element by element with `==`, so each NaN (and each slice holding one)
// is a run of its own. The result holds the first row of each run (index_select on the device),
// each row's run (inverse) and each run's length (counts); inverse and counts are empty [0]
// int64 tensors unless asked for, as LibTorch's _unique2 / unique_dim / unique_consecutive.
// Differences from PyTorch 1.13's CPU kernels: unique(sorted = false) without a dim returns
// sorted values (PyTorch's CPU hash set gives an unspecified order; its CUDA kernel sorts), and
// NaNs come last, each counted once (PyTorch 1.13 leaves NaNs among the numbers with wrong inverse
// and counts: [3, 1, NaN, 1, NaN, 2, 3] gives [1, 2, NaN, NaN, 3] with counts [2, 1, 0, 0, 2]).
#include <algorithm>
#include <numeric>

#include "host_ops.h"
#include "op_helpers.h"
#include "wick/core/error.h"
#include "wick/core/sort_order.h"

namespace wick {

using namespace detail;

namespace {

struct Runs {
  std::vector<int64_t> first;    // the first row of each run
  std::vector<int64_t> inverse;  // each row's run
  std::vector<int64_t> counts;   // each run's length
};

// Runs of equal rows of the row-major host matrix x [n, m], in sorted order or as given.
template <typename T>
Runs find_runs(const std::vector<T>& x, int64_t n, int64_t m, bool sorted) {
  auto row = [&](int64_t i) { return x.data() + i * m; };
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  if (sorted) {
    std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) {
      const T *a = row(i), *b = row(j);
      for (int64_t k = 0; k < m; ++k) {
        if (math::sorts_before(a[k], b[k], false)) return true;
        if (math::sorts_before(b[k], a[k], false)) return false;
      }
      return false;
    });
  }
  Runs r;
  r.inverse.resize(static_cast<size_t>(n));
  for (int64_t p = 0; p < n; ++p) {
    const int64_t i = order[static_cast<size_t>(p)];
    bool same = p > 0;
    if (same) {
      const T *a = row(order[static_cast<size_t>(p - 1)]), *b = row(i);
      for (int64_t k = 0; k < m && same; ++k) same = a[k] == b[k];
    }
    if (!same) {
      r.first.push_back(i);
      r.counts.push_back(0);
    }
    r.inverse[static_cast<size_t>(i)] = static_cast<int64_t>(r.first.size()) - 1;
    ++r.counts.back();
  }
  return r;
}

Runs runs_of(const Tensor& rows, int64_t n, int64_t m, bool sorted) {
  return with_host_type(rows.dtype(), [&](auto tag) {
    using T = decltype(tag);
    return find_runs<T>(rows.to_vector<T>(), n, m, sorted);
  });
}

std::tuple<Tensor, Tensor, Tensor> unique_impl(const char* op, const Tensor& a, std::optional<int64_t> dim, bool sorted,
                                               bool return_inverse, bool return_counts) {
  WICK_CHECK(a.defined(), "{}: the input is an undefined tensor", op);
  const Device dev = a.device();
  const Tensor none = native::empty({0}, kInt64, dev);
  if (!dim) {
    const Tensor flat = native::reshape(a, {-1});
    const Runs r = runs_of(flat, a.numel(), 1, sorted);
    const int64_t u = static_cast<int64_t>(r.first.size());
    return {native::index_select(flat, 0, host_int64(r.first, {u}, dev)),
            return_inverse ? host_int64(r.inverse, a.sizes(), dev) : none,
            return_counts ? host_int64(r.counts, {u}, dev) : none};
  }
  WICK_CHECK_INDEX(a.dim() > 0, "{}: dim {} was given but the input is 0-d (it has no dims); leave dim out", op, *dim);
  const int64_t d = native::wrap_dim(*dim, a.dim(), op);
  const int64_t zero_dims = std::count(a.sizes().begin(), a.sizes().end(), int64_t{0});
  if (a.size(d) == 0) {
    WICK_CHECK(zero_dims == 1,
               "{}: the input {} has more than one dim of size 0, so its slices along dim {} cannot be compared", op,
               shape_str(a), d);
    return {native::clone(a), none, none};
  }
  WICK_CHECK(zero_dims == 0,
             "{}: the input {} has a dim of size 0 other than dim {}, so its slices are empty and cannot be "
             "compared (PyTorch: \"There are 0 sized dimensions, and they aren't selected\")",
             op, shape_str(a), d);
  DimVector perm{d};
  for (int64_t k = 0; k < a.dim(); ++k)
    if (k != d) perm.push_back(k);
  const int64_t n = a.size(d);
  const Runs r = runs_of(native::permute(a, perm), n, a.numel() / n, sorted);
  const int64_t u = static_cast<int64_t>(r.first.size());
  return {native::index_select(a, d, host_int64(r.first, {u}, dev)),
          return_inverse ? host_int64(r.inverse, {n}, dev) : none,
          return_counts ? host_int64(r.counts, {u}, dev) : none};
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& a, bool sorted, bool return_inverse, bool return_counts,
                                          std::optional<int64_t> dim) {
  // With a dim, PyTorch sorts whatever `sorted` says (unique_dim); without, wick sorts too.
  (void)sorted;
  return unique_impl("unique", a, dim, true, return_inverse, return_counts);
}

std::tuple<Tensor, Tensor, Tensor> unique_dim(const Tensor& a, int64_t dim, bool sorted, bool return_inverse,
                                              bool return_counts) {
  (void)sorted;
  return unique_impl("unique_dim", a, dim, true, return_inverse, return_counts);
}

std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor& a, bool return_inverse, bool return_counts,
                                                      std::optional<int64_t> dim) {
  return unique_impl("unique_consecutive", a, dim, false, return_inverse, return_counts);
}

}  // namespace wick
