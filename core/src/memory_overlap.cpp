// Note [In-place writes and overlapping memory]
#include "memory_overlap.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <utility>

#include "wick/core/error.h"
#include "wick/core/native.h"

namespace wick::native {

namespace {

// The bytes t's elements span: [first, last] addresses of its lowest and highest element.
std::pair<const char*, const char*> byte_span(const Tensor& t) {
  int64_t lo = 0, hi = 0;  // element offsets from data_ptr, relative
  for (int64_t d = 0; d < t.dim(); ++d) {
    const int64_t reach = (t.sizes()[d] - 1) * t.strides()[d];  // sizes are >= 1 here (numel > 0)
    (reach < 0 ? lo : hi) += reach;
  }
  const auto* base = static_cast<const char*>(t.data_ptr());
  const auto esize = static_cast<int64_t>(element_size(t.dtype()));
  return {base + lo * esize, base + hi * esize + (esize - 1)};
}

}  // namespace

void check_no_internal_overlap(const Tensor& t, const char* op, const char* suffix) {
  // One pass over the dims, on every in-place op: a stride-0 dim of size > 1 is refused unless
  // another dim is empty (then nothing is written).
  const IntArrayRef sizes = t.sizes(), strides = t.strides();
  int64_t shared_dim = -1;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 0) return;
    if (sizes[d] > 1 && strides[d] == 0 && shared_dim < 0) shared_dim = static_cast<int64_t>(d);
  }
  WICK_CHECK(shared_dim < 0,
             "{}{}: the in-place target of shape [{}] (strides [{}]) has elements that share memory (dim {} has "
             "stride 0, e.g. from expand), so one location would be written more than once; clone() it first",
             op, suffix, fmt::join(sizes, ", "), fmt::join(strides, ", "), shared_dim);
}

Tensor unaliased_operand(const Tensor& operand, const Tensor& target) {
  if (operand.impl()->storage != target.impl()->storage) return operand;  // the common case: one compare
  if (operand.numel() == 0 || target.numel() == 0) return operand;
  if (operand.dtype() == target.dtype() && operand.storage_offset() == target.storage_offset() &&
      operand.sizes() == target.sizes() && operand.strides() == target.strides())
    return operand;  // element i is read before element i is written
  const auto [a_first, a_last] = byte_span(operand);
  const auto [b_first, b_last] = byte_span(target);
  if (a_last < b_first || b_last < a_first) return operand;
  return clone(operand);  // contiguous
}

}  // namespace wick::native
