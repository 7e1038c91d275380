// Losses: nll_loss, cross_entropy (with label smoothing), mse_loss, l1_loss,
// binary_cross_entropy_with_logits; PyTorch's semantics, composed of differentiable ops. The
// others are in functional_loss_more.cpp.
#include <fmt/format.h>

#include <vector>

#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/autograd/record.h"
#include "wick/core/error.h"
#include "wick/core/native.h"
#include "wick/nn/functional.h"

namespace wick::nn {

Reduction reduction_from_string(const std::string& s) {
  if (s == "none") return Reduction::None;
  if (s == "mean") return Reduction::Mean;
  if (s == "sum") return Reduction::Sum;
  if (s == "batchmean") return Reduction::BatchMean;
  WICK_FAIL("unknown reduction '{}': expected 'none', 'mean', 'sum' or (kl_div only) 'batchmean'", s);
}

const char* reduction_name(Reduction r) {
  switch (r) {
    case Reduction::None:
      return "none";
    case Reduction::Mean:
      return "mean";
    case Reduction::Sum:
      return "sum";
    case Reduction::BatchMean:
      return "batchmean";
  }
  return "?";
}

namespace functional {

namespace {
std::string shape_of(const Tensor& t) { return fmt::format("[{}]", fmt::join(t.sizes(), ", ")); }

Tensor reduce(const Tensor& loss, Reduction r) {
  switch (r) {
    case Reduction::None:
      return loss;
    case Reduction::Sum:
      return sum(loss);
    case Reduction::Mean:
      return mean(loss);
    case Reduction::BatchMean:  // kl_div's only: refused by detail::check_reduction
      break;
  }
  return loss;
}

// The class scores as rows: input [N, C, d1, ...] -> [N*d1*..., C]; [C] -> [1, C]; [N, C] as is.
// Target becomes 1-d. Also checks shapes, dtypes and target values.
struct Rows {
  Tensor input;         // [M, C]
  Tensor target;        // [M] int64
  DimVector out_shape;  // the shape of the unreduced loss
};

Rows as_rows(const char* op, const Tensor& input, const Tensor& target, int64_t ignore_index) {
  WICK_CHECK(input.defined() && target.defined(), "{}: input and target must be defined", op);
  WICK_CHECK_TYPE(input.is_floating_point(), "{}: input must be float32 or float64, got {}", op, input.dtype());
  WICK_CHECK_TYPE(target.dtype() == kInt64,
                  "{}: target must hold int64 class indices, got {} (class-probability targets are not supported)", op,
                  target.dtype());
  WICK_CHECK(input.device() == target.device(), "{}: input is on {} but target is on {}", op, input.device(),
             target.device());
  Rows r;
  if (input.dim() == 1) {
    WICK_CHECK(target.dim() == 0, "{}: a 1-d input [C] needs a 0-d target, got target {}", op, shape_of(target));
    r.input = unsqueeze(input, 0);
    r.target = native::reshape(target, {1});
  } else {
    WICK_CHECK(input.dim() >= 2, "{}: input must be [C], [N, C] or [N, C, d1, ...], got a 0-d tensor", op);
    DimVector expect;
    expect.push_back(input.size(0));
    for (int64_t d = 2; d < input.dim(); ++d) expect.push_back(input.size(d));
    WICK_CHECK(target.sizes() == IntArrayRef(expect.data(), expect.size()),
               "{}: input {} needs target of shape [{}], got {}", op, shape_of(input), fmt::join(expect, ", "),
               shape_of(target));
    r.out_shape = expect;
    Tensor x = input;
    if (input.dim() > 2) {
      std::vector<int64_t> perm{0};
      for (int64_t d = 2; d < input.dim(); ++d) perm.push_back(d);
      perm.push_back(1);
      x = reshape(permute(input, perm), {-1, input.size(1)});
    }
    r.input = x;
    r.target = native::reshape(target, {-1});
  }
  const int64_t C = r.input.size(1);
  const std::vector<int64_t> tv = r.target.to_vector<int64_t>();
  for (size_t i = 0; i < tv.size(); ++i)
    WICK_CHECK_INDEX(tv[i] == ignore_index || (tv[i] >= 0 && tv[i] < C),
                     "{}: target value {} (at flat position {}) is out of bounds for {} classes (valid: 0..{}, or "
                     "ignore_index = {})",
                     op, tv[i], i, C, C - 1, ignore_index);
  return r;
}

// Per-row weights w[target] (1 without class weights), 0 where target == ignore_index; the
// targets with ignored entries replaced by 0 (safe to gather with); and which rows count.
// Note [Ignored rows are selected out]: an ignored row's terms are dropped with where(valid, .., 0),
// never multiplied by its weight 0. Its gathered log-probability may be -inf or NaN (a masked
// logit, a padded row), and -inf * 0 is NaN; and when every row is ignored the mean's scale
// g / 0 is inf, and inf * 0 would put NaN into every gradient, where PyTorch gives zeros (the
// loss itself is NaN in both).
struct RowWeights {
  Tensor w;      // [M], input's dtype
  Tensor safe;   // [M] int64
  Tensor valid;  // [M] bool
};

RowWeights row_weights(const Rows& r, const Tensor& weight, int64_t ignore_index) {
  const Tensor& t = r.target;
  Tensor valid = native::binary(BinaryOp::Ne, t, Scalar(ignore_index));  // bool [M]
  Tensor safe = native::where(valid, t, native::zeros({}, kInt64, t.device()));
  Tensor valid_f = native::to(valid, t.device(), r.input.dtype());
  if (!weight.defined()) return {valid_f, safe, valid};
  return {mul(index_select(weight, 0, safe), valid_f), safe, valid};
}

void check_class_weight(const char* op, const Tensor& weight, const Rows& r) {
  if (!weight.defined()) return;
  WICK_CHECK(weight.dim() == 1 && weight.size(0) == r.input.size(1),
             "{}: weight must have one entry per class ([{}]), got {}", op, r.input.size(1), shape_of(weight));
  WICK_CHECK_TYPE(weight.dtype() == r.input.dtype(), "{}: weight is {} on {} but input is {} on {}", op, weight.dtype(),
                  weight.device(), r.input.dtype(), r.input.device());
  WICK_CHECK(weight.device() == r.input.device(), "{}: weight is {} on {} but input is {} on {}", op, weight.dtype(),
             weight.device(), r.input.dtype(), r.input.device());
}

Tensor nll_rows(const Rows& r, const RowWeights& rw, Reduction reduction) {
  Tensor picked = squeeze(gather(r.input, 1, unsqueeze(rw.safe, 1)), 1);  // logp[i, t_i]
  Tensor losses = neg(where(rw.valid, mul(picked, rw.w), 0.0));           // Note [Ignored rows are selected out]
  switch (reduction) {
    case Reduction::None:
      return reshape(losses, r.out_shape);
    case Reduction::Sum:
      return sum(losses);
    case Reduction::Mean:
      return div(sum(losses), sum(rw.w));
    case Reduction::BatchMean:  // refused by detail::check_reduction
      break;
  }
  return losses;
}
// Note [Fused cross_entropy]
// cross_entropy with a reduction and no label smoothing is one node: the forward takes the fused
// log_softmax of the rows (Note [Fused log_softmax]) and sums -w_i logp[i, t_i]; the backward
// writes d loss / d x = (softmax(x) - onehot(t)) * w_i * scale in one exp pass over the saved
// log-probabilities plus one scatter of the targets, where the composite (log_softmax, gather,
// mul, neg, sum, div) recorded six nodes and allocated a temporary in each. scale is g for a
// sum and g / sum_i w_i for a mean (NaN when every target is ignored, as PyTorch). With
// create_graph the backward is written on the differentiable ops instead, so double backward
// works. The composite stays for label smoothing and reduction "none", and as the tests'
// reference.
Tensor fused_cross_entropy(const Tensor& x, const RowWeights& rw, Reduction reduction) {
  const Tensor logp = native::log_softmax(x, 1);
  const Tensor picked = native::squeeze(native::gather(logp, 1, native::unsqueeze(rw.safe, 1)), 1);
  // Note [Ignored rows are selected out]
  const Tensor terms = native::where(rw.valid, native::binary(BinaryOp::Mul, picked, rw.w),
                                     native::zeros({}, picked.dtype(), picked.device()));
  Tensor loss = native::unary(UnaryOp::Neg, native::sum(terms, {}, false));
  const Tensor denom = reduction == Reduction::Mean ? native::sum(rw.w, {}, false) : Tensor();
  if (denom.defined()) loss = native::binary(BinaryOp::Div, loss, denom);
  if (autograd::needs_grad({&x})) {
    const DType dt = x.dtype();
    autograd::record_function(
        "CrossEntropyBackward", {x}, {loss},
        [rw, denom, dt](const autograd::variable_list& g, const autograd::variable_list& s) {
          // d loss / d x[i, c] = (softmax[i, c] - [c == t_i]) * w_i * scale
          const Tensor scale = denom.defined() ? div(g[0], denom) : g[0];
          // [M, 1]; 0 on ignored rows even when scale is inf (Note [Ignored rows are selected out])
          const Tensor row_scale = unsqueeze(where(rw.valid, mul(rw.w, scale), 0.0), 1);
          const Tensor idx = unsqueeze(rw.safe, 1);
          if (GradMode::is_enabled()) {  // create_graph: differentiable in x and g
            const Tensor onehot = native::scatter_add(native::zeros(s[0].sizes(), dt, s[0].device()), 1, idx,
                                                      native::ones({s[0].size(0), 1}, dt, s[0].device()));
            return autograd::variable_list{mul(sub(wick::softmax(s[0], 1), onehot), row_scale)};
          }
          Tensor gi = native::unary(UnaryOp::Exp, s[1]);
          native::binary_(BinaryOp::Mul, gi, row_scale);
          return autograd::variable_list{native::scatter_add(gi, 1, idx, native::unary(UnaryOp::Neg, row_scale))};
        },
        {x, logp});
  }
  return loss;
}
}  // namespace

Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight, Reduction reduction,
                int64_t ignore_index) {
  detail::check_reduction("nll_loss", reduction);
  Rows r = as_rows("nll_loss", input, target, ignore_index);
  check_class_weight("nll_loss", weight, r);
  return nll_rows(r, row_weights(r, weight, ignore_index), reduction);
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight, Reduction reduction,
                     int64_t ignore_index, double label_smoothing) {
  detail::check_reduction("cross_entropy", reduction);
  WICK_CHECK(label_smoothing >= 0.0 && label_smoothing <= 1.0,
             "cross_entropy: label_smoothing must be in [0, 1], got {}", label_smoothing);
  Rows r = as_rows("cross_entropy", input, target, ignore_index);
  check_class_weight("cross_entropy", weight, r);
  if (label_smoothing == 0.0 && reduction != Reduction::None && !(weight.defined() && weight.requires_grad())) {
    return fused_cross_entropy(r.input, row_weights(r, weight, ignore_index), reduction);
  }
  r.input = wick::log_softmax(r.input, 1);
  const RowWeights rw = row_weights(r, weight, ignore_index);
  Tensor nll = nll_rows(r, rw, reduction);
  if (label_smoothing == 0.0) return nll;
  // PyTorch: smooth_i = -sum_c w_c logp_ic (0 where ignored); mean divides by sum_i w[t_i].
  const int64_t C = r.input.size(1);
  Tensor per_class = weight.defined() ? mul(r.input, unsqueeze(weight, 0)) : r.input;
  Tensor smooth = where(rw.valid, neg(sum(per_class, {1})), 0.0);  // Note [Ignored rows are selected out]
  Tensor smooth_red;
  switch (reduction) {
    case Reduction::None:
      smooth_red = reshape(smooth, r.out_shape);
      break;
    case Reduction::Sum:
      smooth_red = sum(smooth);
      break;
    case Reduction::Mean:
      smooth_red = div(sum(smooth), sum(rw.w));
      break;
    case Reduction::BatchMean:  // refused by detail::check_reduction
      break;
  }
  return nll * (1.0 - label_smoothing) + smooth_red * (label_smoothing / static_cast<double>(C));
}

namespace {
// The checks of the element-by-element losses (mse_loss, l1_loss). One shape for input and target:
// PyTorch broadcasts different shapes with a warning, nearly always a bug ([8, 1] against [8]
// averages an [8, 8] matrix), and wick has no warnings, so it is an error here.
void check_elementwise_loss(const char* op, const Tensor& input, const Tensor& target) {
  WICK_CHECK(input.defined() && target.defined(), "{}: input and target must be defined", op);
  WICK_CHECK_TYPE(input.is_floating_point(), "{}: input must be float32 or float64, got {}", op, input.dtype());
  WICK_CHECK(input.sizes() == target.sizes(),
             "{}: input {} and target {} differ in shape; broadcasting them would compare every input with every "
             "target. Reshape one to the other's shape",
             op, shape_of(input), shape_of(target));
}
}  // namespace

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  detail::check_reduction("mse_loss", reduction);
  check_elementwise_loss("mse_loss", input, target);
  return reduce(square(sub(input, target)), reduction);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  detail::check_reduction("l1_loss", reduction);
  check_elementwise_loss("l1_loss", input, target);
  return reduce(abs(sub(input, target)), reduction);
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Tensor& weight,
                                        Reduction reduction, const Tensor& pos_weight) {
  detail::check_reduction("binary_cross_entropy_with_logits", reduction);
  WICK_CHECK(input.defined() && target.defined(), "binary_cross_entropy_with_logits: input and target must be defined");
  WICK_CHECK(input.sizes() == target.sizes(),
             "binary_cross_entropy_with_logits: target size {} must be the same as input size {}", shape_of(target),
             shape_of(input));
  WICK_CHECK_TYPE(input.is_floating_point() && target.is_floating_point(),
                  "binary_cross_entropy_with_logits: input and target must be floating point, got {} and {}",
                  input.dtype(), target.dtype());
  // loss = (1 - t) x + lw * (log1p(exp(-|x|)) + max(-x, 0)), lw = 1 + (pos_weight - 1) t.
  // max(-x, 0) as maximum, not relu: at x == 0 the tie splits the gradient (-1/2, the slope of
  // softplus(-x) there), where relu's 0 and abs's 0 left none.
  Tensor softplus_neg = add(log1p(exp(neg(abs(input)))), maximum(neg(input), zeros_like(input)));
  Tensor one_minus_t = sub(ones_like(target), target);
  Tensor loss;
  if (pos_weight.defined()) {
    Tensor lw = (pos_weight - 1.0) * target + 1.0;
    loss = add(mul(one_minus_t, input), mul(lw, softplus_neg));
  } else {
    loss = add(mul(one_minus_t, input), softplus_neg);
  }
  if (weight.defined()) loss = mul(loss, weight);
  return reduce(loss, reduction);
}

}  // namespace functional
}  // namespace wick::nn
