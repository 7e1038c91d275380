// mode: the most frequent value along a dim.
//
// Note [mode]
// PyTorch 1.13's CPU kernel sorts each slice's (value, index) pairs by value with std::sort,
// then walks the runs of equal values (neighbours compared with !=) and keeps the first run, in
// sorted order, whose count beats every earlier one, with the index stored at that run's end:
//   - among equally frequent values the smallest wins;
//   - the index is the value's last occurrence while the slice has at most 16 elements (there
//     std::sort is an insertion sort, which is stable); past 16 elements it is whichever
//     occurrence the unstable introsort leaves last. wick's sort is stable, so wick always
//     returns the last occurrence: the same index up to 16 elements, the same value always;
//   - NaN: each NaN is a run of its own (NaN != NaN), so it counts once. PyTorch sorts with
//     `<`, for which NaN is unordered, so where its NaNs land depends on the input's order: a
//     NaN can split a run of equal values ([2, NaN, 2] gives 2 at index 0, counted once) and,
//     when the top count is 1, a NaN can win ([NaN, 1] gives NaN, [1, NaN] gives 1). wick sorts
//     NaN last (Note [Sort order]): equal numbers count together across NaNs, each NaN counts
//     once, and NaN is the mode only of a slice of NaNs (index 0, as PyTorch). Where a number is
//     more frequent than once, both agree ([NaN, 1, 1, NaN, NaN] gives 1 at index 2).
// The steps are natives, so every device runs them with no new kernel: a stable argsort, run
// starts where a sorted value differs from the one before, run ids by cumsum, run counts by
// scatter_add, then argmax over a key that is unique at each run's end, count * (n + 1) -
// position (the most frequent, then the earliest in sorted order, i.e. the smallest). The values
// are a differentiable gather at the index, so the gradient goes to it, as PyTorch's
// ModeBackward.
#include "op_helpers.h"
#include "wick/core/error.h"

namespace wick {

using namespace detail;

namespace {
// The position along dim d of the mode's last occurrence in each slice (keepdim shape).
Tensor mode_index(const Tensor& a, int64_t d) {
  const Device dev = a.device();
  const int64_t n = a.size(d);
  DimVector kept(a.sizes());
  kept[static_cast<size_t>(d)] = 1;
  const Tensor order = native::argsort(a, d, false);
  const Tensor sorted = native::gather(a, d, order);
  const Tensor edge = native::ones(kept, kBool, dev);
  Tensor starts = edge, ends = edge;
  if (n > 1) {
    const Tensor differs =
        native::binary(BinaryOp::Ne, native::narrow(sorted, d, 1, n - 1), native::narrow(sorted, d, 0, n - 1));
    starts = native::cat({edge, differs}, d);
    ends = native::cat({differs, edge}, d);
  }
  const Tensor run = native::binary(BinaryOp::Sub, native::cumsum(starts, d), Scalar(int64_t{1}));
  const Tensor ones = native::ones(a.sizes(), kInt64, dev);
  const Tensor counts = native::scatter_add(native::zeros(a.sizes(), kInt64, dev), d, run, ones);
  const Tensor freq = native::gather(counts, d, run);
  DimVector line(static_cast<size_t>(a.dim()), 1);
  line[static_cast<size_t>(d)] = n;
  const Tensor position = native::reshape(native::arange(0, n, 1, kInt64, dev), line);
  const Tensor key = native::binary(BinaryOp::Sub, native::binary(BinaryOp::Mul, freq, Scalar(n + 1)), position);
  const Tensor at_ends = native::where(ends, key, native::zeros({}, kInt64, dev));
  return native::gather(order, d, native::argmax(at_ends, d, true));
}
}  // namespace

std::tuple<Tensor, Tensor> mode(const Tensor& a, int64_t dim, bool keepdim) {
  WICK_CHECK(a.defined(), "mode: the input is an undefined tensor");
  const int64_t d = native::wrap_dim(dim, a.dim(), "mode");
  if (a.dim() == 0) return {clone(a), native::zeros({}, kInt64, a.device())};
  WICK_CHECK_INDEX(a.size(d) > 0,
                   "mode: dim {} of shape [{}] is empty; expected at least one element along it (PyTorch: \"Expected "
                   "reduction dim {} to have non-zero size\")",
                   d, fmt::join(a.sizes(), ", "), d);
  DimVector kept(a.sizes());
  kept[static_cast<size_t>(d)] = 1;
  const Tensor idx = a.numel() == 0 ? native::zeros(kept, kInt64, a.device()) : mode_index(a, d);
  Tensor values = gather(a, d, idx);
  if (!keepdim) return {squeeze(values, d), native::squeeze(idx, d)};
  return {values, idx};
}

}  // namespace wick
