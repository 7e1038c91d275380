#pragma once
// RAdam: PyTorch 1.13's single-tensor update (_single_tensor_radam), with its options, checks and
// state names.
//
//   t += 1;  g = grad;  g += weight_decay * p                            (when weight_decay != 0)
//   m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g * g
//   rho_inf = 2 / (1 - beta2) - 1;  rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t)
//   rho_t > 5:  rect = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))
//               p -= m / (1 - beta1^t) * lr * sqrt(1 - beta2^t) / (sqrt(v) + eps) * rect
//   else:       p -= m / (1 - beta1^t) * lr                              (SGD with momentum)
//
// The update runs as wick tensor ops under NoGradGuard on every device (no fused kernel, so
// set_fused() has no effect). State (Note [Optimizer state dicts]): "step", "exp_avg",
// "exp_avg_sq", made as zeros by a parameter's first step. PyTorch 1.13's RAdam has no maximize
// option (later versions add it, and decoupled_weight_decay); LibTorch has no RAdam.
#include <tuple>

#include "wick/nn/optim/optimizer_base.h"

namespace wick::optim {

/// PyTorch 1.13's RAdam defaults. PyTorch's foreach flag has no counterpart. values(): lr, beta1,
/// beta2, eps, weight_decay.
struct RAdamOptions : OptionsBase<RAdamOptions> {
  RAdamOptions(double lr = 1e-3) : lr_(lr) {}  // NOLINT(google-explicit-constructor): as LibTorch's implicit lr
  WICK_OPTIM_ARG(double, lr);
  WICK_OPTIM_ARG(double, beta1) = 0.9;
  WICK_OPTIM_ARG(double, beta2) = 0.999;
  WICK_OPTIM_ARG(double, eps) = 1e-8;
  WICK_OPTIM_ARG(double, weight_decay) = 0;

 public:
  /// Both betas at once, as AdamOptions::betas.
  RAdamOptions& betas(const std::tuple<double, double>& b) {
    beta1_ = std::get<0>(b);
    beta2_ = std::get<1>(b);
    return *this;
  }
  std::tuple<double, double> betas() const { return {beta1_, beta2_}; }

 private:
  friend OptionsBase;
  static detail::OptionTable<RAdamOptions> table();  // in radam.cpp
};

class RAdam : public OptimizerBase<RAdamOptions> {
 public:
  /// Throws wick::ValueError naming the option for an lr, eps or weight_decay that is negative or
  /// not finite, or betas outside [0, 1) (in the defaults or any group), and for parameters that are
  /// not floating-point leaves.
  RAdam(std::vector<Tensor> params, const RAdamOptions& options = {});
  RAdam(std::vector<ParamGroup> groups, const RAdamOptions& defaults);
  std::string name() const override { return "RAdam"; }
  /// Updates every parameter that has a gradient, in place; every group's options and every
  /// gradient and state tensor are checked first, so a step that throws changes nothing.
  void step() override;

 protected:
  std::vector<std::string> state_names(const OptimizerOptions& /*o*/) const override {
    return {"exp_avg", "exp_avg_sq"};
  }
  std::vector<std::string> optional_state_names() const override { return {}; }
  bool has_step() const override { return true; }
};

}  // namespace wick::optim
