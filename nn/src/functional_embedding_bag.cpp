// F::embedding_bag: the bags' layout is worked out on the host from the offsets (which are read
// there anyway to be checked), then the rows are looked up once and reduced with differentiable
// ops: index_add into one row per bag for sum and mean, and for max a [bags, longest bag, dim]
// block whose unused slots hold -inf, reduced by max along the slots. Empty bags give zeros.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "embedding_parts.h"
#include "shape_text.h"
#include "wick/core/error.h"
#include "wick/core/native.h"
#include "wick/nn/functional.h"

namespace wick::nn {

const char* embedding_bag_mode_name(EmbeddingBagMode mode) {
  switch (mode) {
    case EmbeddingBagMode::Sum:
      return "sum";
    case EmbeddingBagMode::Mean:
      return "mean";
    case EmbeddingBagMode::Max:
      return "max";
  }
  return "?";
}

EmbeddingBagMode embedding_bag_mode_from_string(const std::string& s) {
  if (s == "sum") return EmbeddingBagMode::Sum;
  if (s == "mean") return EmbeddingBagMode::Mean;
  if (s == "max") return EmbeddingBagMode::Max;
  WICK_FAIL("embedding_bag: mode has to be one of sum, mean or max, got '{}'", s);
}

namespace functional {
namespace {
constexpr const char* kOp = "embedding_bag";
using detail::shape_str;

// Checks what only embedding_bag takes: the input's rank, offsets and per_sample_weights.
void check_bag_args(const Tensor& input, const Tensor& weight, const EmbeddingBagFuncOptions& o) {
  WICK_CHECK(input.defined() && weight.defined(), "{}: input and weight must be defined", kOp);
  WICK_CHECK(input.dim() == 1 || input.dim() == 2,
             "{}: input has to be 1-d (indices cut into bags by offsets) or 2-d [bags, indices per bag], got {}", kOp,
             shape_str(input));
  const Tensor& offsets = o.offsets();
  if (input.dim() == 2) {
    WICK_CHECK(!offsets.defined(),
               "{}: a 2-d input {} is a batch of fixed-size bags, so offsets has to be undefined, got {}; flatten "
               "the input to 1-d to cut it with offsets",
               kOp, shape_str(input), shape_str(offsets));
  } else {
    WICK_CHECK(offsets.defined(), "{}: a 1-d input {} needs offsets (where each bag starts), got none", kOp,
               shape_str(input));
    WICK_CHECK(offsets.dim() == 1, "{}: offsets has to be 1-d, got {}", kOp, shape_str(offsets));
    WICK_CHECK_TYPE(offsets.dtype() == kInt64, "{}: offsets must be int64, got {} {}; convert with .to(wick::kInt64)",
                    kOp, offsets.dtype(), shape_str(offsets));
    WICK_CHECK(offsets.device() == input.device(), "{}: offsets are on {} but input is on {}; move one of them", kOp,
               offsets.device(), input.device());
  }
  WICK_CHECK(!(o.mode() == EmbeddingBagMode::Max && o.scale_grad_by_freq()),
             "{}: max mode does not support scaling the gradient by the frequency; use mode sum or mean, or "
             "scale_grad_by_freq = false",
             kOp);
  const Tensor& psw = o.per_sample_weights();
  if (!psw.defined()) return;
  WICK_CHECK_NOT_IMPLEMENTED(o.mode() == EmbeddingBagMode::Sum,
                             "{}: per_sample_weights is only supported for mode sum (got mode {}); use mode sum, "
                             "or divide by the bag sizes yourself for a weighted mean",
                             kOp, embedding_bag_mode_name(o.mode()));
  WICK_CHECK(psw.sizes() == input.sizes(), "{}: per_sample_weights {} must have the input's shape {}", kOp,
             shape_str(psw), shape_str(input));
  WICK_CHECK_TYPE(psw.dtype() == weight.dtype(), "{}: per_sample_weights is {} but weight is {}; they must match", kOp,
                  psw.dtype(), weight.dtype());
  WICK_CHECK(psw.device() == weight.device(), "{}: per_sample_weights is on {} but weight is on {}; move one of them",
             kOp, psw.device(), weight.device());
}

// Where each bag starts, and one more entry where the last bag ends (B + 1 entries for B bags),
// checked: offsets start at 0, never decrease and stay within the input.
std::vector<int64_t> bag_bounds(const Tensor& input, const EmbeddingBagFuncOptions& o) {
  const int64_t n = input.numel();
  const bool last = o.include_last_offset();
  std::vector<int64_t> offs;
  if (input.dim() == 2) {  // PyTorch's arange(0, numel, L): with include_last_offset, B - 1 bags
    for (int64_t b = 0; b < input.size(0); ++b) offs.push_back(b * input.size(1));
  } else {
    offs = o.offsets().to_vector<int64_t>();
  }
  if (offs.empty()) {
    WICK_CHECK(!last,
               "{}: with include_last_offset, offsets holds the start of each bag and then the end of the last, so "
               "it needs at least one entry; got none for input {}",
               kOp, shape_str(input));
    WICK_CHECK(n == 0, "{}: offsets is empty (no bags) but the input holds {} indices; give offsets [0] for one bag",
               kOp, n);
    return {0};
  }
  WICK_CHECK(offs[0] == 0,
             "{}: offsets[0] has to be 0, i.e., the first bag has to start at position 0 of the input; got {}", kOp,
             offs[0]);
  for (size_t i = 1; i < offs.size(); ++i)
    WICK_CHECK(offs[i] >= offs[i - 1], "{}: offsets must not decrease, but offsets[{}] = {} follows offsets[{}] = {}",
               kOp, i, offs[i], i - 1, offs[i - 1]);
  WICK_CHECK(offs.back() <= n, "{}: offsets[-1] ({}) can not be greater than the input's length {}", kOp, offs.back(),
             n);
  if (!last) offs.push_back(n);
  return offs;
}

Tensor int64_tensor(const std::vector<int64_t>& v, Device dev) {
  return native::to(wick::tensor(v, {static_cast<int64_t>(v.size())}, kInt64), dev, kInt64);
}

// Mode max on rows [K, D] (the looked-up rows of the bags, in order): a [B, Lmax, D] block of the
// rows, unused slots and padding set to -inf, max over the slots; bags with nothing give zeros.
Tensor bag_max(const Tensor& rows, const std::vector<int64_t>& bounds, const Tensor& keep, int64_t lmax) {
  const int64_t bags = static_cast<int64_t>(bounds.size()) - 1, dim = rows.size(1);
  const Device dev = rows.device();
  std::vector<int64_t> pos(static_cast<size_t>(bags * lmax), 0), used(pos.size(), 0);
  for (int64_t b = 0; b < bags; ++b)
    for (int64_t i = bounds[b]; i < bounds[b + 1]; ++i) {
      pos[b * lmax + i - bounds[b]] = i;
      used[b * lmax + i - bounds[b]] = 1;
    }
  const Tensor pos_t = int64_tensor(pos, dev);
  Tensor valid = native::binary(BinaryOp::Ne, int64_tensor(used, dev), Scalar(int64_t{0}));
  if (keep.defined()) valid = native::binary(BinaryOp::LogicalAnd, valid, native::index_select(keep, 0, pos_t));
  valid = native::view(valid, {bags, lmax});
  Tensor block = view(index_select(rows, 0, pos_t), {bags, lmax, dim});
  block = masked_fill(block, native::unsqueeze(native::unary(UnaryOp::LogicalNot, valid), 2),
                      Scalar(-std::numeric_limits<double>::infinity()));
  const Tensor best = std::get<0>(wick::max(block, 1, false));
  return where(wick::any(valid, 1, true), best, Scalar(0.0));
}
}  // namespace

Tensor embedding_bag(const Tensor& input, const Tensor& weight, const EmbeddingBagFuncOptions& o) {
  check_bag_args(input, weight, o);
  detail::check_embedding_indices(kOp, input, weight);
  detail::check_embedding_flags(kOp, weight, o.sparse(), o.max_norm(), o.norm_type());
  const std::optional<int64_t> padding_idx = detail::wrap_padding_idx(kOp, o.padding_idx(), weight.size(0));
  const std::vector<int64_t> bounds = bag_bounds(input, o);
  // Every argument is checked: only now may max_norm change the weight.
  if (o.max_norm()) detail::embedding_renorm_(weight, input, *o.max_norm(), o.norm_type());

  const int64_t bags = static_cast<int64_t>(bounds.size()) - 1, in_bags = bounds.back(), dim = weight.size(1);
  const Device dev = weight.device();
  const Tensor flat = native::reshape(input, {-1});
  const Tensor used = in_bags == flat.numel() ? flat : native::narrow(flat, 0, 0, in_bags);
  Tensor rows = detail::embedding_rows(weight, used, std::nullopt, o.scale_grad_by_freq(), flat);  // [K, D]
  Tensor keep;  // [K] bool: false at padding_idx
  if (padding_idx) keep = native::binary(BinaryOp::Ne, used, Scalar(*padding_idx));

  int64_t lmax = 0;
  for (int64_t b = 0; b < bags; ++b) lmax = std::max(lmax, bounds[b + 1] - bounds[b]);
  if (o.mode() == EmbeddingBagMode::Max && lmax > 0) return bag_max(rows, bounds, keep, lmax);

  if (o.per_sample_weights().defined()) {
    const Tensor psw = reshape(o.per_sample_weights(), {-1});
    rows = rows * unsqueeze(in_bags == psw.numel() ? psw : narrow(psw, 0, 0, in_bags), 1);
  }
  if (keep.defined()) rows = where(native::unsqueeze(keep, 1), rows, Scalar(0.0));
  std::vector<int64_t> bag_of(static_cast<size_t>(in_bags));
  for (int64_t b = 0; b < bags; ++b) std::fill(bag_of.begin() + bounds[b], bag_of.begin() + bounds[b + 1], b);
  const Tensor bag_t = int64_tensor(bag_of, dev);
  // Empty bags (and, with no index at all, the whole output) stay zero but are still in the graph.
  Tensor out = index_add(zeros({bags, dim}, weight.options().requires_grad(false)), 0, bag_t, rows);
  if (o.mode() != EmbeddingBagMode::Mean) return out;
  Tensor count;  // [B]: the indices of each bag that are not padding_idx
  if (keep.defined()) {
    count =
        native::index_add(native::zeros({bags}, weight.dtype(), dev), 0, bag_t, native::to(keep, dev, weight.dtype()));
  } else {
    std::vector<double> sizes(static_cast<size_t>(bags));
    for (int64_t b = 0; b < bags; ++b) sizes[b] = static_cast<double>(bounds[b + 1] - bounds[b]);
    count = native::to(wick::tensor(sizes, {bags}, kFloat64), dev, weight.dtype());
  }
  return out / native::unsqueeze(native::clamp(count, Scalar(1.0), std::nullopt), 1);
}

}  // namespace functional
}  // namespace wick::nn
