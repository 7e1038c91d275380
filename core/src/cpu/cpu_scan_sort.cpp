// The CPU kernels that walk whole lines along one dim: sort_indices and cumsum.
#include <algorithm>
#include <numeric>
#include <vector>

#include "cpu/cpu_backend.h"
#include "cpu/loop.h"
#include "wick/core/accumulate_type.h"
#include "wick/core/int_math.h"
#include "wick/core/sort_order.h"

namespace wick::cpu {

namespace {
// Calls line(off_out, off_in) with the element offsets of every line's first element, for two
// operands of equal sizes that are walked along `dim`.
template <typename F>
void for_each_line(const KernelTensor& out, const KernelTensor& in, int64_t dim, F&& line) {
  KernelTensor o = out, i = in;
  o.sizes[dim] = 1;
  i.sizes[dim] = 1;
  auto L = layout_of<2>({&o, &i});
  for_each_row(L, [&](const int64_t* off, int64_t n, const int64_t* st) {
    for (int64_t k = 0; k < n; ++k) line(off[0] + k * st[0], off[1] + k * st[1]);
  });
}
}  // namespace

void CpuBackend::sort_indices(const KernelTensor& indices, const KernelTensor& in, int64_t dim, bool descending) {
  const int64_t len = in.sizes[dim], st_in = in.strides[dim], st_out = indices.strides[dim];
  dispatch(in.dtype, "sort", [&]<typename T>() {
    const T* pi = reinterpret_cast<const T*>(in.data);
    int64_t* po = reinterpret_cast<int64_t*>(indices.data);
    std::vector<int64_t> order(static_cast<size_t>(len));
    for_each_line(indices, in, dim, [&](int64_t off_out, int64_t off_in) {
      const T* x = pi + off_in;
      std::iota(order.begin(), order.end(), int64_t{0});
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        return math::sorts_before(x[a * st_in], x[b * st_in], descending);
      });
      for (int64_t j = 0; j < len; ++j) po[off_out + j * st_out] = order[static_cast<size_t>(j)];
    });
  });
}

void CpuBackend::cumsum(const KernelTensor& out, const KernelTensor& in, int64_t dim, bool reverse) {
  const int64_t len = in.sizes[dim], st_in = in.strides[dim], st_out = out.strides[dim];
  dispatch(in.dtype, "cumsum", [&]<typename T>() {
    const T* pi = reinterpret_cast<const T*>(in.data);
    T* po = reinterpret_cast<T*>(out.data);
    for_each_line(out, in, dim, [&](int64_t off_out, int64_t off_in) {
      math::acc_type<T> acc{};
      for (int64_t k = 0; k < len; ++k) {
        const int64_t j = reverse ? len - 1 - k : k;
        // int64 wraps (Note [Integer overflow and conversions])
        acc = math::wrapping_add(acc, static_cast<math::acc_type<T>>(pi[off_in + j * st_in]));
        po[off_out + j * st_out] = static_cast<T>(acc);
      }
    });
  });
}

}  // namespace wick::cpu
