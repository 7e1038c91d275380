#pragma once
// NAdam: PyTorch 1.13's single-tensor update (_single_tensor_nadam), with its options, checks and
// state names.
//
//   t += 1;  g = grad;  g += weight_decay * p                            (when weight_decay != 0)
//   mu = beta1 * (1 - 0.5 * 0.96^(t * momentum_decay));  mu_next: the same with t + 1
//   mu_product *= mu;  mu_product_next = mu_product * mu * mu_next       (float32, see below)
//   m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g * g
//   denom = sqrt(v / (1 - beta2^t)) + eps
//   p -= lr * (1 - mu) / (1 - mu_product) * g / denom
//   p -= lr * mu_next / (1 - mu_product_next) * m / denom
//
// The update runs as wick tensor ops under NoGradGuard on every device (no fused kernel, so
// set_fused() has no effect). State (Note [Optimizer state dicts]): "step", "exp_avg",
// "exp_avg_sq" and the scalar "mu_product" (1 before the first step), made by a parameter's first
// step. PyTorch 1.13 keeps mu_product as a 0-dim float32 CPU tensor whatever the parameter's
// dtype, so each product above is rounded to float32; wick computes it the same way on the host
// (the trajectories then agree to the last bits in float64), and state dicts hold it as a 0-dim
// float32 tensor. PyTorch 1.13's NAdam has no maximize option (later versions add it, and
// decoupled_weight_decay); LibTorch has no NAdam.
#include <tuple>

#include "wick/nn/optim/optimizer_base.h"

namespace wick::optim {

/// PyTorch 1.13's NAdam defaults. PyTorch's foreach flag has no counterpart. values(): lr, beta1,
/// beta2, eps, weight_decay, momentum_decay.
struct NAdamOptions : OptionsBase<NAdamOptions> {
  NAdamOptions(double lr = 2e-3) : lr_(lr) {}  // NOLINT(google-explicit-constructor): as LibTorch's implicit lr
  WICK_OPTIM_ARG(double, lr);
  WICK_OPTIM_ARG(double, beta1) = 0.9;
  WICK_OPTIM_ARG(double, beta2) = 0.999;
  WICK_OPTIM_ARG(double, eps) = 1e-8;
  WICK_OPTIM_ARG(double, weight_decay) = 0;
  WICK_OPTIM_ARG(double, momentum_decay) = 4e-3;

 public:
  /// Both betas at once, as AdamOptions::betas.
  NAdamOptions& betas(const std::tuple<double, double>& b) {
    beta1_ = std::get<0>(b);
    beta2_ = std::get<1>(b);
    return *this;
  }
  std::tuple<double, double> betas() const { return {beta1_, beta2_}; }

 private:
  friend OptionsBase;
  static detail::OptionTable<NAdamOptions> table();  // in nadam.cpp
};

class NAdam : public OptimizerBase<NAdamOptions> {
 public:
  /// Throws wick::ValueError naming the option for an lr, eps, weight_decay or momentum_decay that
  /// is negative or not finite, or betas outside [0, 1) (in the defaults or any group), and for
  /// parameters that are not floating-point leaves.
  NAdam(std::vector<Tensor> params, const NAdamOptions& options = {});
  NAdam(std::vector<ParamGroup> groups, const NAdamOptions& defaults);
  std::string name() const override { return "NAdam"; }
  /// Updates every parameter that has a gradient, in place; every group's options and every
  /// gradient and state tensor are checked first, so a step that throws changes nothing.
  void step() override;

 protected:
  std::vector<std::string> state_names(const OptimizerOptions& /*o*/) const override {
    return {"exp_avg", "exp_avg_sq"};
  }
  std::vector<std::string> optional_state_names() const override { return {}; }
  std::vector<std::string> scalar_state_names() const override { return {"mu_product"}; }
  bool has_step() const override { return true; }
};

}  // namespace wick::optim
