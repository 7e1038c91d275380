// F::triplet_margin_with_distance_loss: torch/nn/functional.py's composite of PyTorch 1.13, with
// the checks and the reduction of the margin losses (loss_more_parts.h).
#include "wick/nn/functional_triplet.h"

#include <fmt/format.h>

#include <optional>

#include "loss_more_parts.h"
#include "wick/core/native.h"

namespace wick::nn::functional {

namespace {
using namespace wick::nn::detail;
constexpr const char* kOp = "triplet_margin_with_distance_loss";

// The distance of (x, y) named `what`, checked to be a defined floating tensor.
Tensor distance(const TripletMarginWithDistanceLossOptions::distance_function_t& d, const Tensor& x, const Tensor& y,
                const char* what) {
  Tensor out = d(x, y);
  WICK_CHECK(out.defined(), "{}: the distance function returned an undefined tensor for d({}) of {} and {}", kOp, what,
             shape_str(x), shape_str(y));
  WICK_CHECK_TYPE(out.is_floating_point(),
                  "{}: the distance function returned {} for d({}); it must be float32 or float64", kOp, out.dtype(),
                  what);
  return out;
}
}  // namespace

Tensor triplet_margin_with_distance_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                                         const TripletMarginWithDistanceLossFuncOptions& options) {
  check_reduction(kOp, options.reduction());
  check_defined_arg(kOp, anchor, "anchor");
  check_defined_arg(kOp, positive, "positive");
  check_defined_arg(kOp, negative, "negative");
  const auto d =
      options.distance_function().value_or([](const Tensor& x, const Tensor& y) { return pairwise_distance(x, y); });
  const Tensor d_pos = distance(d, anchor, positive, "anchor, positive");
  Tensor d_neg = distance(d, anchor, negative, "anchor, negative");
  if (options.swap()) {
    const Tensor d_swap = distance(d, positive, negative, "positive, negative");
    native::broadcast_shapes(d_neg.sizes(), d_swap.sizes(), kOp);
    d_neg = minimum(d_neg, d_swap);
  }
  native::broadcast_shapes(d_pos.sizes(), d_neg.sizes(), kOp);
  // (margin + d_pos) - d_neg in PyTorch's order (so the rounding is PyTorch's, as
  // triplet_margin_loss); clamp passes the gradient at exactly 0, as PyTorch's clamp(min=0).
  return reduce_loss(clamp(sub(d_pos + options.margin(), d_neg), 0.0, std::nullopt), options.reduction());
}

}  // namespace wick::nn::functional
