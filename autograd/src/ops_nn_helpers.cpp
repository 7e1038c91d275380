// silu, one_hot and multinomial: the tensor-level helpers that models need (nn::functional
// re-exports them). Composed of existing primitives, so they run on every device that has those.
#include <cmath>
#include <cstdint>

#include "op_helpers.h"
#include "wick/core/checked_math.h"
#include "wick/core/error.h"

namespace wick {

using namespace detail;

Tensor silu(const Tensor& a) {
  WICK_CHECK(a.defined(), "silu: the input is an undefined tensor");
  WICK_CHECK_TYPE(is_floating(a.dtype()), "silu: expects a floating-point input, got {}", dtype_name(a.dtype()));
  Tensor out = native::binary(BinaryOp::Mul, a, native::unary(UnaryOp::Sigmoid, a));
  if (needs_grad({&a})) {
    // d/dx x * s(x) = s * (1 + x * (1 - s)), as PyTorch's silu_backward.
    record_function("SiluBackward", {a}, {out},
                    [](const VL& g, const VL& s) -> VL {
                      const Tensor& x = s[0];
                      Tensor sig = sigmoid(x);
                      return {mul(g[0], mul(sig, add(mul(x, sub(ones_like(sig), sig)), ones_like(sig))))};
                    },
                    {a});
  }
  return out;
}

Tensor one_hot(const Tensor& a, int64_t num_classes) {
  WICK_CHECK(a.defined(), "one_hot: the input is an undefined tensor");
  WICK_CHECK_TYPE(a.dtype() == kInt64, "one_hot: expects an int64 tensor of class indices, got {}",
                  dtype_name(a.dtype()));
  WICK_CHECK(num_classes >= -1, "one_hot: num_classes = {} must be positive, or -1 to use max(input) + 1", num_classes);
  if (a.numel() == 0) {
    WICK_CHECK(num_classes != -1, "one_hot: cannot infer the number of classes of an empty tensor; pass num_classes");
  } else {
    const int64_t lo = native::amin(a, {}, false).item<int64_t>();
    const int64_t hi = native::amax(a, {}, false).item<int64_t>();
    WICK_CHECK(lo >= 0, "one_hot: class values must be non-negative, got {}", lo);
    if (num_classes == -1) {
      WICK_CHECK(hi < INT64_MAX, "one_hot: class value {} leaves no room for num_classes = max + 1; pass num_classes",
                 hi);
      num_classes = hi + 1;
    }
    WICK_CHECK(hi < num_classes,
               "one_hot: class value {} is out of range for num_classes = {}; values must be "
               "smaller than num_classes",
               hi, num_classes);
  }
  // An empty input gives an empty output of any width, as PyTorch's; a width whose bytes
  // overflow int64 is refused here, naming one_hot, before arange would.
  DimVector out_shape(a.sizes());
  out_shape.push_back(num_classes);
  checked_nbytes(out_shape, sizeof(int64_t), "one_hot");
  if (a.numel() == 0) return native::zeros(out_shape, kInt64, a.device());
  DimVector shape(a.sizes());
  shape.push_back(1);
  Tensor classes = native::arange(0, num_classes, 1, kInt64, a.device());
  Tensor hit = native::binary(BinaryOp::Eq, native::view(a, shape), classes);
  return native::to(hit, a.device(), kInt64);
}

// Note [multinomial]
// Both forms draw float64 uniforms from the global generator (one per row and sample with
// replacement, one per row and category without), so a result depends only on the seed and the
// draws before it. With replacement: u scaled by the row's total, the sample is the number of
// cumulative sums <= u (the first class whose cumulative sum exceeds u), so a class of weight 0
// (a flat step) is never drawn; u rounding up to the total picks the last class of positive
// weight. The comparison costs rows * num_samples * categories, fine for sampling a vocabulary.
// Without replacement: the exponential race (keys p / E with E ~ Exp(1), the largest
// num_samples keys win, as PyTorch's), zero weights get key -1 and cannot win, and topk never
// repeats an index.
Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement) {
  WICK_CHECK(probs.defined() && (probs.dim() == 1 || probs.dim() == 2),
             "multinomial: expects a 1-d or 2-d tensor "
             "of weights, got {}",
             probs.defined() ? fmt::format("shape [{}]", fmt::join(probs.sizes(), ", ")) : "an undefined tensor");
  WICK_CHECK_TYPE(is_floating(probs.dtype()), "multinomial: expects floating-point weights, got {}",
                  dtype_name(probs.dtype()));
  WICK_CHECK(num_samples > 0, "multinomial: num_samples = {} must be positive", num_samples);
  const int64_t k = probs.size(-1);
  WICK_CHECK(k > 0, "multinomial: the weights have no categories (shape [{}])", fmt::join(probs.sizes(), ", "));
  Tensor p = native::to(probs.dim() == 1 ? native::view(probs, {1, k}) : probs, probs.device(), kFloat64);
  const int64_t rows = p.size(0);
  if (rows == 0)
    return native::empty(probs.dim() == 1 ? DimVector{num_samples} : DimVector{0, num_samples}, kInt64, probs.device());
  WICK_CHECK(all(isfinite(p)).item<bool>(), "multinomial: the weights contain inf or NaN");
  WICK_CHECK(native::amin(p, {}, false).item<double>() >= 0, "multinomial: the weights contain a negative value");
  Tensor positive = native::sum(native::binary(BinaryOp::Gt, p, Scalar(0.0)), {1}, false);
  const int64_t least = native::amin(positive, {}, false).item<int64_t>();
  WICK_CHECK(least > 0, "multinomial: a row of weights sums to 0; every row needs a positive weight");
  Tensor samples;
  if (replacement) {
    Tensor cdf = native::cumsum(p, 1);
    Tensor total = native::narrow(cdf, 1, k - 1, 1);
    Tensor u = native::binary(BinaryOp::Mul, native::rand({rows, num_samples}, kFloat64, p.device()), total);
    Tensor below =
        native::binary(BinaryOp::Le, native::view(cdf, {rows, 1, k}), native::view(u, {rows, num_samples, 1}));
    Tensor count = native::sum(below, {2}, false);
    Tensor last_positive = native::argmax(cdf, 1, true);
    samples = native::binary(BinaryOp::Minimum, count, last_positive);
  } else {
    WICK_CHECK(num_samples <= least,
               "multinomial: cannot draw {} samples without replacement from a row with {} "
               "positive weights; draw fewer or pass replacement = true",
               num_samples, least);
    Tensor u = native::rand({rows, k}, kFloat64, p.device());
    Tensor e = native::unary(UnaryOp::Neg, native::unary(UnaryOp::Log1p, native::unary(UnaryOp::Neg, u)));
    Tensor keys = native::where(native::binary(BinaryOp::Gt, p, Scalar(0.0)), native::binary(BinaryOp::Div, p, e),
                                native::full({}, Scalar(-1.0), kFloat64, p.device()));
    samples = native::contiguous(native::narrow(native::argsort(keys, 1, true), 1, 0, num_samples));
  }
  return probs.dim() == 1 ? native::view(samples, {num_samples}) : samples;
}

}  // namespace wick
