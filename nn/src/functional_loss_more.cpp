// binary_cross_entropy, smooth_l1_loss, huber_loss, kl_div, soft_margin_loss,
// margin_ranking_loss, hinge_embedding_loss, cosine_embedding_loss: PyTorch 1.13's formulas on
// differentiable ops (binary_cross_entropy is one node whose backward is written on them, to have
// PyTorch's gradient at 0 and 1), so autograd, double backward and every device come with no
// kernel of their own. Every check runs before anything is computed.
#include <fmt/format.h>

#include <optional>
#include <string>

#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/autograd/record.h"
#include "wick/core/error.h"
#include "wick/core/native.h"
#include "wick/core/scalar_fit.h"
#include "wick/nn/functional.h"

namespace wick::nn {

namespace detail {
void check_reduction(const char* op, Reduction r, bool batchmean_ok) {
  WICK_CHECK(r == Reduction::None || r == Reduction::Mean || r == Reduction::Sum ||
                 (r == Reduction::BatchMean && batchmean_ok),
             "{}: reduction '{}' is not one of this loss's: use kNone, kMean or kSum{}", op,
             r == Reduction::BatchMean ? "batchmean" : fmt::format("{}", static_cast<int>(r)),
             r == Reduction::BatchMean ? " ('batchmean' is kl_div's only)" : "");
}
}  // namespace detail

namespace functional {
namespace {
using VL = autograd::variable_list;
using detail::check_reduction;

std::string shape_of(const Tensor& t) { return fmt::format("[{}]", fmt::join(t.sizes(), ", ")); }

Tensor reduce(const Tensor& loss, Reduction r, const Tensor& input) {
  switch (r) {
    case Reduction::None:
      return loss;
    case Reduction::Sum:
      return sum(loss);
    case Reduction::Mean:
      return mean(loss);
    case Reduction::BatchMean:  // kl_div: the sum over the batch's size (the sum for a 0-d input)
      return input.dim() == 0 ? sum(loss)
                              : div(sum(loss), scalar_tensor(static_cast<double>(input.size(0)),
                                                             TensorOptions(loss.dtype()).device(loss.device())));
  }
  return loss;
}

void check_defined(const char* op, const Tensor& a, const char* a_name, const Tensor& b, const char* b_name) {
  WICK_CHECK(a.defined() && b.defined(), "{}: {} and {} must be defined tensors", op, a_name, b_name);
}

// input float32/float64; `other` of input's shape, on its device.
void check_like_input(const char* op, const Tensor& input, const char* input_name, const Tensor& other,
                      const char* other_name) {
  WICK_CHECK_TYPE(input.is_floating_point(), "{}: {} must be float32 or float64, got {}", op, input_name,
                  input.dtype());
  WICK_CHECK(input.sizes() == other.sizes(),
             "{}: {} {} and {} {} differ in shape; give them one shape (reshape or expand one of them), as the "
             "loss compares them element by element",
             op, input_name, shape_of(input), other_name, shape_of(other));
  WICK_CHECK(input.device() == other.device(), "{}: {} is on {} but {} is on {}; move one with .to()", op, input_name,
             input.device(), other_name, other.device());
}

// The checks of the losses whose target holds real values (binary_cross_entropy, smooth_l1_loss,
// huber_loss, kl_div): one shape, dtype and device for input and target.
void check_regression(const char* op, const Tensor& input, const Tensor& target) {
  check_defined(op, input, "input", target, "target");
  check_like_input(op, input, "input", target, "target");
  WICK_CHECK_TYPE(target.dtype() == input.dtype(), "{}: target is {} but input is {}; convert one (target.to({}))", op,
                  target.dtype(), input.dtype(), input.dtype());
}

// A +-1 label target (soft_margin_loss, margin_ranking_loss, hinge_embedding_loss): input's
// dtype or int64, converted to input's dtype.
Tensor label_target(const char* op, const Tensor& input, const Tensor& target) {
  WICK_CHECK_TYPE(target.dtype() == input.dtype() || target.dtype() == kInt64,
                  "{}: target must hold the labels 1 and -1 as {} or int64, got {}", op, input.dtype(), target.dtype());
  return target.dtype() == input.dtype() ? target : wick::to(target, target.device(), input.dtype());
}

// PyTorch 1.13's EPSILON of binary_cross_entropy's backward and of cosine_embedding_loss is the
// float 1e-12 (9.99999996e-13), in every dtype.
constexpr double kEpsilon = static_cast<double>(1e-12f);

Tensor equals(const Tensor& t, double v) { return native::binary(BinaryOp::Eq, t, Scalar(v)); }
Tensor differs(const Tensor& t, double v) { return native::binary(BinaryOp::Ne, t, Scalar(v)); }
Tensor below(const Tensor& t, double v) { return native::binary(BinaryOp::Lt, t, Scalar(v)); }

// Note [binary_cross_entropy's node]
// The loss -(t log x + (1 - t) log(1 - x)) with each log clamped at -100 is finite at x = 0 and
// 1, but the composite's gradient there would be 0 * inf = NaN (the clamp's zero gradient times
// the log's infinite one). PyTorch's backward is its own formula instead, w (x - t) / max(x (1 -
// x), kEpsilon) for the input and w (log(1 - x) - log(x)) for the target, so this is one node whose
// backward writes those formulas on differentiable ops (double backward differentiates them).
// The weight multiplies the node's output, so it gets its gradient from mul.

Tensor bce_terms(const Tensor& x, const Tensor& t) {
  Tensor out;
  {
    NoGradGuard no_grad;
    out = sub(mul(t - 1.0, clamp(log1p(neg(x)), -100.0, std::nullopt)), mul(t, clamp(log(x), -100.0, std::nullopt)));
  }
  if (autograd::needs_grad({&x, &t})) {
    autograd::record_function("BinaryCrossEntropyBackward", {x, t}, {out},
                              [](const VL& g, const VL& s) -> VL {
                                const Tensor& xs = s[0];
                                const Tensor& ts = s[1];
                                Tensor gx =
                                    div(mul(g[0], sub(xs, ts)), clamp(mul(1.0 - xs, xs), kEpsilon, std::nullopt));
                                Tensor gt = mul(g[0], sub(log1p(neg(xs)), log(xs)));
                                return {gx, gt};
                              },
                              {x, t});
  }
  return out;
}
}  // namespace

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight, Reduction reduction) {
  const char* op = "binary_cross_entropy";
  check_reduction(op, reduction, false);
  check_regression(op, input, target);
  if (weight.defined()) {
    WICK_CHECK_TYPE(weight.dtype() == input.dtype() && weight.device() == input.device(),
                    "{}: weight is {} on {} but input is {} on {}", op, weight.dtype(), weight.device(), input.dtype(),
                    input.device());
    bool fits = weight.dim() <= input.dim();
    for (int64_t d = 1; fits && d <= weight.dim(); ++d)
      fits = weight.size(-d) == 1 || weight.size(-d) == input.size(-d);
    WICK_CHECK(fits, "{}: weight {} does not broadcast to input {}; give it input's shape or one it broadcasts to", op,
               shape_of(weight), shape_of(input));
  }
  {
    NoGradGuard no_grad;
    const Tensor in_range =
        logical_and(native::binary(BinaryOp::Ge, input, Scalar(0.0)), native::binary(BinaryOp::Le, input, Scalar(1.0)));
    WICK_CHECK(all(in_range).item<bool>(),
               "{}: input {} must hold probabilities in [0, 1], and holds a value outside it (or NaN); apply sigmoid "
               "first, or give the logits to binary_cross_entropy_with_logits, which is also more accurate",
               op, shape_of(input));
  }
  Tensor loss = bce_terms(input, target);
  if (weight.defined()) loss = mul(loss, weight);
  return reduce(loss, reduction, input);
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction, double beta) {
  const char* op = "smooth_l1_loss";
  check_reduction(op, reduction, false);
  check_regression(op, input, target);
  WICK_CHECK(beta >= 0.0, "{}: beta must be >= 0 (0 is l1_loss), got {}", op, beta);
  const Tensor d = sub(input, target);
  const Tensor z = abs(d);
  // beta 0 is l1_loss, with its gradient 0 at d == 0 (PyTorch 1.13's kernel gives -1 there to
  // both input and target).
  if (beta == 0.0) return reduce(z, reduction, input);
  // |d| == beta takes the linear branch; both branches have slope +-1 there, as PyTorch's d / beta.
  return reduce(where(below(z, beta), square(d) * (0.5 / beta), z - 0.5 * beta), reduction, input);
}

Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction, double delta) {
  const char* op = "huber_loss";
  check_reduction(op, reduction, false);
  check_regression(op, input, target);
  WICK_CHECK(delta > 0.0, "{}: delta must be > 0, got {}", op, delta);
  const Tensor d = sub(input, target);
  const Tensor z = abs(d);
  return reduce(where(below(z, delta), square(d) * 0.5, (z - 0.5 * delta) * delta), reduction, input);
}

Tensor kl_div(const Tensor& input, const Tensor& target, Reduction reduction, bool log_target) {
  const char* op = "kl_div";
  check_reduction(op, reduction, true);
  check_regression(op, input, target);
  Tensor loss;
  if (log_target) {
    loss = mul(exp(target), sub(target, input));
  } else {
    // xlogy(t, t) - t x: 0 where t == 0 (NaN for t < 0, as PyTorch). The gradient in t at t == 0
    // is NaN (log 0 times the where's zero), as PyTorch's xlogy gives.
    loss = sub(where(equals(target, 0.0), 0.0, mul(target, log(target))), mul(target, input));
  }
  return reduce(loss, reduction, input);
}

Tensor soft_margin_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  const char* op = "soft_margin_loss";
  check_reduction(op, reduction, false);
  check_defined(op, input, "input", target, "target");
  check_like_input(op, input, "input", target, "target");
  const Tensor z = mul(label_target(op, input, target), input);
  // log(1 + exp(-z)) as log1p(exp(-|z|)) + max(-z, 0): PyTorch's log1p(exp(-z)) overflows to inf
  // for z below about -710; the values agree elsewhere. maximum splits the gradient at z == 0.
  return reduce(add(log1p(exp(neg(abs(z)))), maximum(neg(z), zeros_like(z))), reduction, input);
}

Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                           Reduction reduction) {
  const char* op = "margin_ranking_loss";
  check_reduction(op, reduction, false);
  check_defined(op, input1, "input1", input2, "input2");
  WICK_CHECK(target.defined(), "{}: target must be a defined tensor", op);
  check_like_input(op, input1, "input1", input2, "input2");
  check_like_input(op, input1, "input1", target, "target");
  WICK_CHECK_TYPE(input2.dtype() == input1.dtype(), "{}: input2 is {} but input1 is {}; convert one", op,
                  input2.dtype(), input1.dtype());
  const Tensor y = label_target(op, input1, target);
  return reduce(clamp(neg(y) * sub(input1, input2) + margin, 0.0, std::nullopt), reduction, input1);
}

Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, double margin, Reduction reduction) {
  const char* op = "hinge_embedding_loss";
  check_reduction(op, reduction, false);
  check_defined(op, input, "input", target, "target");
  check_like_input(op, input, "input", target, "target");
  // The margin is converted to the input's dtype: it must fit it (Note [Scalar fits dtype]).
  check_scalar_fits(op, "margin", margin, input.dtype(), input.sizes());
  const Tensor y = label_target(op, input, target);
  const Tensor margin_term = where(differs(y, 1.0), clamp(margin - input, 0.0, std::nullopt), 0.0);
  const Tensor self_term = where(differs(y, -1.0), input, 0.0);
  return reduce(add(margin_term, self_term), reduction, input);
}

Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                             Reduction reduction) {
  const char* op = "cosine_embedding_loss";
  check_reduction(op, reduction, false);
  check_defined(op, input1, "input1", input2, "input2");
  WICK_CHECK(target.defined(), "{}: target must be a defined tensor", op);
  check_like_input(op, input1, "input1", input2, "input2");
  WICK_CHECK_TYPE(input2.dtype() == input1.dtype(), "{}: input2 is {} but input1 is {}; convert one", op,
                  input2.dtype(), input1.dtype());
  WICK_CHECK((target.dim() == 1 && input1.dim() == 2 && target.size(0) == input1.size(0)) ||
                 (target.dim() == 0 && input1.dim() == 1),
             "{}: needs inputs [N, D] with target [N], or inputs [D] with a 0-d target; got inputs {} and target {}",
             op, shape_of(input1), shape_of(target));
  WICK_CHECK(target.device() == input1.device(), "{}: target is on {} but the inputs are on {}; move one with .to()",
             op, target.device(), input1.device());
  const Tensor y = label_target(op, input1, target);
  const int64_t d = target.dim();  // the feature dim: 1 for [N, D], 0 for [D]
  const Tensor dot = sum(mul(input1, input2), {d});
  const Tensor sq1 = sum(mul(input1, input1), {d}) + kEpsilon;
  const Tensor sq2 = sum(mul(input2, input2), {d}) + kEpsilon;
  const Tensor cos = div(dot, sqrt(mul(sq1, sq2)));
  const Tensor pos = where(equals(y, 1.0), 1.0 - cos, 0.0);
  const Tensor neg_term = where(equals(y, -1.0), clamp(cos - margin, 0.0, std::nullopt), 0.0);
  return reduce(add(pos, neg_term), reduction, input1);
}

}  // namespace functional
}  // namespace wick::nn
