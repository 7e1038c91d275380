// poisson_nll_loss and gaussian_nll_loss: PyTorch 1.13's formulas (aten/src/ATen/native/Loss.cpp,
// torch/nn/functional.py) on differentiable ops, so autograd, double backward and every device
// come with no kernel of their own. Every check runs before anything is computed.
#include <fmt/format.h>

#include <numbers>

#include "loss_more_parts.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/native.h"
#include "wick/nn/functional.h"

namespace wick::nn::functional {

namespace {
using namespace wick::nn::detail;

// input and target: defined, input floating, one shape, dtype and device.
void check_input_target(const char* op, const Tensor& input, const Tensor& target) {
  check_defined_arg(op, input, "input");
  check_defined_arg(op, target, "target");
  check_floating_arg(op, input, "input");
  WICK_CHECK(input.sizes() == target.sizes(),
             "{}: input {} and target {} differ in shape; give them one shape (reshape or expand one of them), as "
             "the loss compares them element by element",
             op, shape_str(input), shape_str(target));
  check_same_kind(op, input, "input", target, "target");
}
}  // namespace

Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input, bool full, double eps,
                        Reduction reduction) {
  const char* op = "poisson_nll_loss";
  check_reduction(op, reduction);
  check_input_target(op, input, target);
  Tensor loss = log_input ? sub(exp(input), mul(target, input)) : sub(input, mul(target, log(input + eps)));
  if (full) {
    // Stirling's term where target > 1, 0 elsewhere (PyTorch's masked_fill). The term is computed
    // on the target with 1 in place of each value <= 1, so the dropped entries hold no log(0) whose
    // gradient would be NaN: the target's gradient there is 0, where PyTorch's is NaN at a target
    // of 0 (0 * log 0).
    const Tensor above_one = native::binary(BinaryOp::Gt, target, Scalar(1.0));
    const Tensor t = where(above_one, target, 1.0);
    const Tensor stirling = add(sub(mul(t, log(t)), t), log(t * (2.0 * std::numbers::pi)) * 0.5);
    loss = add(loss, where(above_one, stirling, 0.0));
  }
  return reduce_loss(loss, reduction);
}

Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, const Tensor& var, bool full, double eps,
                         Reduction reduction) {
  const char* op = "gaussian_nll_loss";
  check_reduction(op, reduction);
  check_input_target(op, input, target);
  check_defined_arg(op, var, "var");
  check_same_kind(op, input, "input", var, "var");
  // PyTorch 1.13's var shapes: input's (one variance per element), input's without its last dim,
  // or that with a last dim of 1 (one variance per sample, broadcast over the last dim).
  const int64_t n = input.dim();
  const IntArrayRef lead = n > 0 ? IntArrayRef(input.sizes().data(), static_cast<size_t>(n - 1)) : IntArrayRef();
  const bool same = var.sizes() == input.sizes();
  const bool per_sample = n > 0 && var.sizes() == lead;
  const bool per_sample_kept = n > 0 && var.dim() == n && var.size(-1) == 1 &&
                               IntArrayRef(var.sizes().data(), static_cast<size_t>(n - 1)) == lead;
  WICK_CHECK(same || per_sample || per_sample_kept,
             "{}: var {} is of incorrect size for input {}: give input's shape, or one variance per sample: input's "
             "shape without its last dim or with a last dim of 1",
             op, shape_str(var), shape_str(input));
  {
    NoGradGuard no_grad;
    WICK_CHECK(!any(native::binary(BinaryOp::Lt, var, Scalar(0.0))).item<bool>(),
               "{}: var {} has a negative entry; a variance is >= 0 (values below eps = {} count as eps)", op,
               shape_str(var), eps);
  }
  const Tensor v = per_sample ? unsqueeze(var, -1) : var;
  // PyTorch clamps var at eps in place under no_grad: the value is max(var, eps), the gradient
  // that of the formula at the clamped value, passed to var unchanged. (v - v.detach()) is exactly
  // 0 with a gradient of 1, so the clamped entries are exactly eps and still reach var.
  const Tensor clamped = where(native::binary(BinaryOp::Lt, v, Scalar(eps)), sub(v, v.detach()) + eps, v);
  Tensor loss = add(log(clamped), div(square(sub(input, target)), clamped)) * 0.5;
  if (full) loss = loss + 0.5 * std::log(2.0 * std::numbers::pi);
  return reduce_loss(loss, reduction);
}

}  // namespace wick::nn::functional
