#pragma once
// Adamax: PyTorch 1.13's single-tensor update (_single_tensor_adamax), with its options, checks and
// state names.
//
//   t += 1;  g = grad (negated when maximize);  g += weight_decay * p   (when weight_decay != 0)
//   m = beta1 * m + (1 - beta1) * g                                      (exp_avg)
//   u = max(beta2 * u, |g| + eps)                                        (exp_inf)
//   p -= lr / (1 - beta1^t) * m / u
//
// The update runs as wick tensor ops under NoGradGuard on every device (no fused kernel, so
// set_fused() has no effect). State (Note [Optimizer state dicts]): "step", "exp_avg", "exp_inf",
// made as zeros by a parameter's first step. LibTorch has no Adamax; the names follow PyTorch, and
// the betas are stored as "beta1" and "beta2", as Adam's.
#include <tuple>

#include "wick/nn/optim/optimizer_base.h"

namespace wick::optim {

/// PyTorch 1.13's Adamax defaults. PyTorch's foreach flag has no counterpart. values(): lr, beta1,
/// beta2, eps, weight_decay, maximize (bools as 0 or 1).
struct AdamaxOptions : OptionsBase<AdamaxOptions> {
  AdamaxOptions(double lr = 2e-3) : lr_(lr) {}  // NOLINT(google-explicit-constructor): as LibTorch's implicit lr
  WICK_OPTIM_ARG(double, lr);
  WICK_OPTIM_ARG(double, beta1) = 0.9;
  WICK_OPTIM_ARG(double, beta2) = 0.999;
  WICK_OPTIM_ARG(double, eps) = 1e-8;
  WICK_OPTIM_ARG(double, weight_decay) = 0;
  WICK_OPTIM_ARG(bool, maximize) = false;

 public:
  /// Both betas at once, as AdamOptions::betas.
  AdamaxOptions& betas(const std::tuple<double, double>& b) {
    beta1_ = std::get<0>(b);
    beta2_ = std::get<1>(b);
    return *this;
  }
  std::tuple<double, double> betas() const { return {beta1_, beta2_}; }

 private:
  friend OptionsBase;
  static detail::OptionTable<AdamaxOptions> table();  // in adamax.cpp
};

class Adamax : public OptimizerBase<AdamaxOptions> {
 public:
  /// Throws wick::ValueError naming the option for an lr, eps or weight_decay that is negative or
  /// not finite, or betas outside [0, 1) (in the defaults or any group), and for parameters that are
  /// not floating-point leaves.
  Adamax(std::vector<Tensor> params, const AdamaxOptions& options = {});
  Adamax(std::vector<ParamGroup> groups, const AdamaxOptions& defaults);
  std::string name() const override { return "Adamax"; }
  /// Updates every parameter that has a gradient, in place; every group's options and every
  /// gradient and state tensor are checked first, so a step that throws changes nothing.
  void step() override;

 protected:
  std::vector<std::string> state_names(const OptimizerOptions& /*o*/) const override { return {"exp_avg", "exp_inf"}; }
  std::vector<std::string> optional_state_names() const override { return {}; }
  bool has_step() const override { return true; }
};

}  // namespace wick::optim
