#pragma once
// Adadelta: PyTorch 1.13's single-tensor update (_single_tensor_adadelta), with its options,
// checks and state names.
//
//   g = grad (negated when maximize);  g += weight_decay * p             (when weight_decay != 0)
//   square_avg = rho * square_avg + (1 - rho) * g * g
//   delta = sqrt(acc_delta + eps) / sqrt(square_avg + eps) * g
//   acc_delta = rho * acc_delta + (1 - rho) * delta * delta
//   p -= lr * delta
//
// The update runs as wick tensor ops under NoGradGuard on every device (no fused kernel, so
// set_fused() has no effect). State (Note [Optimizer state dicts]): "step", "square_avg" and
// "acc_delta" (zeros), made by a parameter's first step. PyTorch 1.13 counts "step" as a Python
// int; wick's state dicts hold it as a 0-dim float32 tensor, as for every wick optimizer. LibTorch
// has no Adadelta.
#include "wick/nn/optim/optimizer_base.h"

namespace wick::optim {

/// PyTorch 1.13's Adadelta defaults. PyTorch's foreach flag has no counterpart. values(): lr, rho,
/// eps, weight_decay, maximize (bools as 0 or 1).
struct AdadeltaOptions : OptionsBase<AdadeltaOptions> {
  AdadeltaOptions(double lr = 1.0) : lr_(lr) {}  // NOLINT(google-explicit-constructor): as LibTorch's implicit lr
  WICK_OPTIM_ARG(double, lr);
  WICK_OPTIM_ARG(double, rho) = 0.9;
  WICK_OPTIM_ARG(double, eps) = 1e-6;
  WICK_OPTIM_ARG(double, weight_decay) = 0;
  WICK_OPTIM_ARG(bool, maximize) = false;

 private:
  friend OptionsBase;
  static detail::OptionTable<AdadeltaOptions> table();  // in adadelta.cpp
};

class Adadelta : public OptimizerBase<AdadeltaOptions> {
 public:
  /// Throws wick::ValueError naming the option for an lr, eps or weight_decay that is negative or
  /// not finite and a rho outside [0, 1] (PyTorch's ranges, plus finite), in the defaults or any
  /// group; and for parameters that are not floating-point leaves.
  Adadelta(std::vector<Tensor> params, const AdadeltaOptions& options = {});
  Adadelta(std::vector<ParamGroup> groups, const AdadeltaOptions& defaults);
  std::string name() const override { return "Adadelta"; }
  /// Updates every parameter that has a gradient, in place; every group's options and every
  /// gradient and state tensor are checked first, so a step that throws changes nothing.
  void step() override;

 protected:
  std::vector<std::string> state_names(const OptimizerOptions& /*o*/) const override {
    return {"square_avg", "acc_delta"};
  }
  std::vector<std::string> optional_state_names() const override { return {}; }
  bool has_step() const override { return true; }
};

}  // namespace wick::optim
