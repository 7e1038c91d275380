// triplet_margin_loss, multi_margin_loss, multilabel_margin_loss, multilabel_soft_margin_loss:
// PyTorch 1.13's formulas (aten/src/ATen/native/Loss.cpp, LossMultiMargin.cpp,
// LossMultiLabelMargin.cpp, torch/nn/functional.py) on differentiable ops, so autograd, double
// backward and every device come with no kernel of their own. Every check runs before anything is
// computed.
#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <vector>

#include "loss_more_parts.h"
#include "wick/core/native.h"
#include "wick/nn/functional.h"

namespace wick::nn::functional {

namespace {
using namespace wick::nn::detail;

// The class indices of a [N] (or 0-d) target as an [N, C] mask: true at (i, target[i]).
Tensor class_mask(const Tensor& index_column, int64_t C) {
  const Tensor classes =
      native::arange(Scalar(int64_t{0}), Scalar(C), Scalar(int64_t{1}), kInt64, index_column.device());
  return native::binary(BinaryOp::Eq, native::reshape(classes, {1, C}), index_column);
}
}  // namespace

Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative, double margin,
                           double p, double eps, bool swap, Reduction reduction) {
  const char* op = "triplet_margin_loss";
  check_reduction(op, reduction);
  check_defined_arg(op, anchor, "anchor");
  check_defined_arg(op, positive, "positive");
  check_defined_arg(op, negative, "negative");
  check_floating_arg(op, anchor, "anchor");
  check_same_kind(op, anchor, "anchor", positive, "positive");
  check_same_kind(op, anchor, "anchor", negative, "negative");
  WICK_CHECK(anchor.dim() == positive.dim() && positive.dim() == negative.dim(),
             "{}: anchor {}, positive {} and negative {} must have one number of dims, as PyTorch requires", op,
             shape_str(anchor), shape_str(positive), shape_str(negative));
  WICK_CHECK(!std::isnan(p), "{}: p is NaN; give the order of the norm (2, 1, inf, ...)", op);
  // The distances broadcast their pairs, then the two (or three) [..., D] -> [...] distances
  // broadcast together, as PyTorch's pairwise_distance and clamp_min do.
  const DimVector ap = native::broadcast_shapes(anchor.sizes(), positive.sizes(), op);
  const DimVector an = native::broadcast_shapes(anchor.sizes(), negative.sizes(), op);
  if (swap) native::broadcast_shapes(positive.sizes(), negative.sizes(), op);
  if (anchor.dim() > 0)
    native::broadcast_shapes(IntArrayRef(ap.data(), ap.size() - 1), IntArrayRef(an.data(), an.size() - 1), op);
  // PyTorch takes 0-d inputs as one-element vectors (a 0-d loss).
  auto vec = [](const Tensor& t) { return t.dim() == 0 ? reshape(t, {1}) : t; };
  const Tensor a = vec(anchor), pos = vec(positive), neg_ex = vec(negative);
  const PairwiseDistanceFuncOptions dist = PairwiseDistanceFuncOptions().p(p).eps(eps);
  const Tensor d_pos = pairwise_distance(a, pos, dist);
  Tensor d_neg = pairwise_distance(a, neg_ex, dist);
  // min splits the gradient of a tie in half, as PyTorch's at::min(dist_neg, dist_swap).
  if (swap) d_neg = minimum(d_neg, pairwise_distance(pos, neg_ex, dist));
  // clamp passes the gradient at exactly 0, as PyTorch's clamp_min.
  return reduce_loss(clamp(sub(d_pos + margin, d_neg), 0.0, std::nullopt), reduction);
}

Tensor multi_margin_loss(const Tensor& input, const Tensor& target, int64_t p, double margin, const Tensor& weight,
                         Reduction reduction) {
  const char* op = "multi_margin_loss";
  check_reduction(op, reduction);
  check_defined_arg(op, input, "input");
  check_defined_arg(op, target, "target");
  check_floating_arg(op, input, "input");
  WICK_CHECK(p == 1 || p == 2, "{}: only p == 1 and p == 2 are supported, got {}", op, p);
  check_margin_input(op, input);
  check_index_target(op, input, target);
  const int64_t N = input.dim() == 2 ? input.size(0) : 1;
  const int64_t C = input.dim() == 0 ? 1 : input.size(-1);
  WICK_CHECK(target.dim() <= 1 && target.numel() == N,
             "{}: input {} needs a target of {} class indices ([{}], or 0-d for one), got target {}", op,
             shape_str(input), N, N, shape_str(target));
  if (weight.defined()) {
    WICK_CHECK(weight.dim() == 1 && weight.size(0) == C,
               "{}: weight must be one-dimensional with one entry per class ([{}]), got {}", op, C, shape_str(weight));
    check_same_kind(op, input, "input", weight, "weight");
  }
  const std::vector<int64_t> tv = target.to_vector<int64_t>();
  for (size_t i = 0; i < tv.size(); ++i)
    WICK_CHECK_INDEX(tv[i] >= 0 && tv[i] < C,
                     "{}: target value {} (at position {}) is out of range for {} classes (valid: 0..{})", op, tv[i], i,
                     C, C - 1);

  const Tensor x = reshape(input, {N, C});
  const Tensor t = native::reshape(target, {N, 1});
  // z[i, c] = margin - x[i, y_i] + x[i, c], in PyTorch's order; relu's gradient is 0 at z == 0,
  // as PyTorch's `z > 0`. The target's own class is selected out (its z is margin).
  Tensor h = wick::relu(add(margin - gather(x, 1, t), x));
  if (p == 2) h = square(h);
  h = where(class_mask(t, C), 0.0, h);
  if (weight.defined()) h = mul(h, unsqueeze(index_select(weight, 0, native::reshape(t, {N})), 1));
  Tensor loss = sum(h, {1}) / static_cast<double>(C);
  if (target.dim() == 0) loss = reshape(loss, {});  // PyTorch: a 0-d target gives a 0-d loss
  return reduce_loss(loss, reduction);
}

Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  const char* op = "multilabel_margin_loss";
  check_reduction(op, reduction);
  check_defined_arg(op, input, "input");
  check_defined_arg(op, target, "target");
  check_floating_arg(op, input, "input");
  check_margin_input(op, input);
  check_index_target(op, input, target);
  const int64_t N = input.dim() == 2 ? input.size(0) : 1;
  const int64_t C = input.dim() == 0 ? 1 : input.size(-1);
  const bool fits = input.dim() <= 1 ? target.dim() <= 1 && target.numel() == C
                                     : target.dim() == 2 && target.size(0) == N && target.size(1) == C;
  WICK_CHECK(fits,
             "{}: input {} needs a target of its shape, each row the classes of a sample ended by -1, got target {}",
             op, shape_str(input), shape_str(target));
  const std::vector<int64_t> tv = target.to_vector<int64_t>();
  for (size_t i = 0; i < tv.size(); ++i)
    WICK_CHECK_INDEX(tv[i] >= -1 && tv[i] < C,
                     "{}: target value {} (at flat position {}) is out of range for {} classes (valid: 0..{}, and -1 "
                     "to end a row's list)",
                     op, tv[i], i, C, C - 1);

  // On the host, per sample: how often each class is listed before the first -1 (a class listed
  // twice counts twice, as in PyTorch's loop) and which classes are not listed.
  std::vector<double> listed_count(static_cast<size_t>(N * C), 0.0), unlisted(static_cast<size_t>(N * C), 1.0);
  for (int64_t i = 0; i < N; ++i)
    for (int64_t k = 0; k < C; ++k) {
      const int64_t j = tv[static_cast<size_t>(i * C + k)];
      if (j < 0) break;
      listed_count[static_cast<size_t>(i * C + j)] += 1.0;
      unlisted[static_cast<size_t>(i * C + j)] = 0.0;
    }
  const TensorOptions o = TensorOptions(input.dtype()).device(input.device());
  // pair_weight[i, j, c] = count of listed j times [c unlisted]
  const Tensor pair_weight =
      native::binary(BinaryOp::Mul, wick::tensor(listed_count, {N, C, 1}, o), wick::tensor(unlisted, {N, 1, C}, o));
  const Tensor counted = native::binary(BinaryOp::Ne, pair_weight, Scalar(0.0));

  const Tensor x = reshape(input, {N, C});
  // z[i, j, c] = 1 - x[i, j] + x[i, c], in PyTorch's order; relu's gradient is 0 at z == 0, as
  // PyTorch's `z > 0`. The pairs that do not count are selected out, not multiplied by 0.
  const Tensor z = add(1.0 - unsqueeze(x, 2), unsqueeze(x, 1));
  const Tensor pairs = where(counted, mul(wick::relu(z), pair_weight), 0.0);
  Tensor loss = sum(pairs, {1, 2}) / static_cast<double>(C);
  if (target.dim() <= 1) loss = reshape(loss, {});  // PyTorch: a [C] input gives a 0-d loss
  return reduce_loss(loss, reduction);
}

Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target, const Tensor& weight,
                                   Reduction reduction) {
  const char* op = "multilabel_soft_margin_loss";
  check_reduction(op, reduction);
  check_defined_arg(op, input, "input");
  check_defined_arg(op, target, "target");
  check_floating_arg(op, input, "input");
  WICK_CHECK(input.dim() >= 1, "{}: input must have a class dim ([C], [N, C], ...), got a 0-d tensor", op);
  WICK_CHECK(target.sizes() == input.sizes(),
             "{}: input {} and target {} differ in shape; give target input's shape (a 0 or 1 per class)", op,
             shape_str(input), shape_str(target));
  WICK_CHECK_TYPE(target.dtype() == input.dtype() || target.dtype() == kInt64,
                  "{}: target must hold 0 and 1 as {} or int64, got {}", op, input.dtype(), target.dtype());
  WICK_CHECK(target.device() == input.device(), "{}: target is on {} but input is on {}; move one with .to()", op,
             target.device(), input.device());
  if (weight.defined()) {
    check_same_kind(op, input, "input", weight, "weight");
    bool fits = weight.dim() <= input.dim();
    for (int64_t d = 1; fits && d <= weight.dim(); ++d)
      fits = weight.size(-d) == 1 || weight.size(-d) == input.size(-d);
    WICK_CHECK(fits, "{}: weight {} does not broadcast to input {}; give one weight per class ([{}])", op,
               shape_str(weight), shape_str(input), input.size(-1));
  }
  const Tensor t = target.dtype() == input.dtype() ? target : wick::to(target, target.device(), input.dtype());
  Tensor loss = neg(add(mul(t, logsigmoid(input)), mul(1.0 - t, logsigmoid(neg(input)))));
  if (weight.defined()) loss = mul(loss, weight);
  const int64_t class_dim = input.dim() - 1;
  return reduce_loss(sum(loss, {class_dim}) / static_cast<double>(input.size(class_dim)), reduction);
}

}  // namespace wick::nn::functional
