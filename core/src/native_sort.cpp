// Front-ends of the line-walking kernels: argsort (sort, topk build on it) and cumsum.
#include "wick/core/error.h"
#include "wick/core/native.h"

namespace wick::native {

Tensor argsort(const Tensor& t, int64_t dim, bool descending) {
  WICK_CHECK(t.defined(), "argsort: the input is an undefined tensor");
  const int64_t d = wrap_dim(dim, t.dim(), "argsort");
  Tensor out = empty(t.sizes(), kInt64, t.device());
  if (t.dim() == 0) {
    fill_(out, Scalar(int64_t{0}));
    return out;
  }
  if (out.numel() > 0) backend(t.device()).sort_indices(kernel_tensor(out), kernel_tensor(t), d, descending);
  return out;
}

Tensor cumsum(const Tensor& t, int64_t dim, bool reverse) {
  WICK_CHECK(t.defined(), "cumsum: the input is an undefined tensor");
  const int64_t d = wrap_dim(dim, t.dim(), "cumsum");
  // As torch.cumsum: bool and int64 inputs give int64.
  Tensor in = is_floating(t.dtype()) || t.dtype() == kInt64 ? t : to(t, t.device(), kInt64);
  if (t.dim() == 0) return clone(in);
  Tensor out = empty(in.sizes(), in.dtype(), in.device());
  if (out.numel() > 0) backend(t.device()).cumsum(kernel_tensor(out), kernel_tensor(in), d, reverse);
  return out;
}

}  // namespace wick::native
