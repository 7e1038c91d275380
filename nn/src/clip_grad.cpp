// nn::utils::clip_grad_norm_ and clip_grad_value_ (PyTorch 1.13's torch/nn/utils/clip_grad.py).
// Every argument and gradient is checked before the first gradient changes, so a refused call
// changes nothing; the changes are in-place ops under NoGradGuard on aliases of the gradients
// (detach(): same data, same version counter), so .grad stays the same tensor and its version
// moves.
#include "wick/nn/utils/clip_grad.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

#include "utils_checks.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/error.h"

namespace wick::nn::utils {

namespace {

using detail::has_stride_zero_overlap;
using detail::layout_str;
using detail::shape_str;

// The defined gradients of `parameters`, in order, each checked, as aliases sharing the
// gradient's data and version counter. A parameter without a gradient is skipped, as PyTorch
// skips a None grad.
std::vector<Tensor> checked_grads(const char* op, const std::vector<Tensor>& parameters) {
  std::vector<Tensor> grads;
  grads.reserve(parameters.size());
  for (size_t i = 0; i < parameters.size(); ++i) {
    const Tensor& p = parameters[i];
    WICK_CHECK(p.defined(), "{}: parameter {} of {} is undefined; pass defined tensors (module->parameters())", op, i,
               parameters.size());
    const Tensor& g = p.grad();
    if (!g.defined()) continue;
    WICK_CHECK_TYPE(g.is_floating_point(),
                    "{}: the gradient of parameter {} is {} (shape {}); gradients to clip must be float32 or float64",
                    op, i, g.dtype(), shape_str(g));
    WICK_CHECK(!has_stride_zero_overlap(g),
               "{}: the gradient of parameter {} has shape {}: its elements share memory, so it cannot be changed "
               "in place; give the parameter a gradient of its own first (p.set_grad(p.grad().clone()))",
               op, i, layout_str(g));
    grads.push_back(g.detach());
  }
  return grads;
}

// One gradient's norm of order p: torch.norm(g, p), which for p = inf is the max |g| that
// PyTorch 1.13 takes with g.abs().max(). An empty gradient has norm 0 for every order (as
// torch.norm gives; 1.13's abs().max() raises for inf, wick does not).
Tensor grad_norm(const Tensor& g, double p) {
  if (g.numel() == 0) return wick::zeros({}, g.options());
  return wick::norm(g, p);
}

}  // namespace

double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  WICK_CHECK(max_norm >= 0,  // false for NaN
             "clip_grad_norm_: max_norm must be >= 0 (inf: no clipping), got {}; a NaN would make every gradient "
             "NaN and a negative one would flip their sign",
             max_norm);
  WICK_CHECK(!std::isnan(norm_type),
             "clip_grad_norm_: norm_type is NaN; give a real order (2.0, 1.0, "
             "std::numeric_limits<double>::infinity(), ...)");
  const std::vector<Tensor> grads = checked_grads("clip_grad_norm_", parameters);
  if (grads.empty()) return 0.0;

  NoGradGuard no_grad;
  // On the first gradient's device, in the gradients' promoted dtype (stack promotes).
  const Device device = grads[0].device();
  std::vector<Tensor> norms;
  norms.reserve(grads.size());
  for (const Tensor& g : grads) norms.push_back(grad_norm(g, norm_type).to(device));
  const Tensor stacked = wick::stack(norms);
  const Tensor total_norm =
      norm_type == std::numeric_limits<double>::infinity() ? wick::max(stacked) : wick::norm(stacked, norm_type);
  // LibTorch returns a host double, so it synchronizes with the device here, as wick does.
  const double total = total_norm.item<double>();
  WICK_CHECK(!error_if_nonfinite || std::isfinite(total),
             "clip_grad_norm_: the total norm of order {} of the gradients of `parameters` is {}, which is not "
             "finite, so it cannot be clipped (no gradient was changed). Find where the NaN or inf comes from "
             "(autograd::DetectAnomalyGuard names the backward op that made a NaN), or pass "
             "error_if_nonfinite = false to scale the gradients by the non-finite norm anyway",
             norm_type, total);

  // min(max_norm / (total + 1e-6), 1) in the total's dtype; NaN stays NaN. Multiplying always,
  // as 1.13 does, leaves the gradients' values as they were when the coefficient is 1.
  const Tensor coef = wick::clamp(Scalar(max_norm) / (total_norm + 1e-6), std::nullopt, Scalar(1.0));
  std::vector<std::pair<Device, Tensor>> coef_on{{device, coef}};  // one copy per device
  for (Tensor g : grads) {
    auto it = std::find_if(coef_on.begin(), coef_on.end(), [&](const auto& c) { return c.first == g.device(); });
    if (it == coef_on.end()) it = coef_on.insert(coef_on.end(), {g.device(), coef.to(g.device())});
    g.mul_(it->second);
  }
  return total;
}

double clip_grad_norm_(std::initializer_list<Tensor> parameters, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  return clip_grad_norm_(std::vector<Tensor>(parameters), max_norm, norm_type, error_if_nonfinite);
}

double clip_grad_norm_(const Tensor& parameter, double max_norm, double norm_type, bool error_if_nonfinite) {
  return clip_grad_norm_(std::vector<Tensor>{parameter}, max_norm, norm_type, error_if_nonfinite);
}

void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value) {
  WICK_CHECK(clip_value >= 0,  // false for NaN
             "clip_grad_value_: clip_value must be >= 0 (the gradients are clamped into [-clip_value, "
             "clip_value]), got {}",
             clip_value);
  const std::vector<Tensor> grads = checked_grads("clip_grad_value_", parameters);
  NoGradGuard no_grad;
  for (Tensor g : grads) g.clamp_(Scalar(-clip_value), Scalar(clip_value));
}

void clip_grad_value_(std::initializer_list<Tensor> parameters, double clip_value) {
  clip_grad_value_(std::vector<Tensor>(parameters), clip_value);
}

void clip_grad_value_(const Tensor& parameter, double clip_value) {
  clip_grad_value_(std::vector<Tensor>{parameter}, clip_value);
}

}  // namespace wick::nn::utils
