#pragma once
// RMSprop: PyTorch 1.13's single-tensor update (_single_tensor_rmsprop), with its options, checks
// and state names.
//
//   g = grad (negated when maximize);  g += weight_decay * p          (when weight_decay != 0)
//   v = alpha * v + (1 - alpha) * g * g                                 (square_avg)
//   centered:  ga = alpha * ga + (1 - alpha) * g;  avg = sqrt(v - ga * ga) + eps   (grad_avg)
//   else:      avg = sqrt(v) + eps
//   momentum > 0:  buf = momentum * buf + g / avg;  p -= lr * buf      (momentum_buffer)
//   else:          p -= lr * g / avg
//
// The update runs as wick tensor ops under NoGradGuard on every device: there is no fused kernel
// for RMSprop, so set_fused() has no effect on it.
//
// State (Note [Optimizer state dicts]): "step", "square_avg", plus "momentum_buffer" when momentum
// > 0 and "grad_avg" when centered, made (as zeros) by the first step that needs them, in
// PyTorch's order. PyTorch makes momentum_buffer and grad_avg only at a parameter's first step and
// fails with a KeyError when momentum or centered is turned on later; wick makes them, as zeros,
// at the first step that needs them and keeps them when the option is turned off again (as
// Adam's max_exp_avg_sq), so load_state_dict accepts them whatever the options and never requires
// them. PyTorch 1.13 counts "step" as a Python int; wick's state dicts hold it as a 0-dim float32
// tensor, as for every wick optimizer.
#include "wick/nn/optim/optimizer_base.h"

namespace wick::optim {

/// PyTorch 1.13's RMSprop defaults. PyTorch's foreach and differentiable flags have no
/// counterpart (wick has one tensor-op path, and steps run under NoGradGuard). values() gives
/// PyTorch's param_group keys, in its order: lr, momentum, alpha, eps, centered, weight_decay,
/// maximize (bools as 0 or 1).
struct RMSpropOptions : OptionsBase<RMSpropOptions> {
  RMSpropOptions(double lr = 1e-2) : lr_(lr) {}  // NOLINT(google-explicit-constructor): LibTorch's implicit lr
  WICK_OPTIM_ARG(double, lr);
  WICK_OPTIM_ARG(double, alpha) = 0.99;
  WICK_OPTIM_ARG(double, eps) = 1e-8;
  WICK_OPTIM_ARG(double, weight_decay) = 0;
  WICK_OPTIM_ARG(double, momentum) = 0;
  WICK_OPTIM_ARG(bool, centered) = false;
  WICK_OPTIM_ARG(bool, maximize) = false;

 private:
  friend OptionsBase;
  static detail::OptionTable<RMSpropOptions> table();  // in rmsprop.cpp
};

class RMSprop : public OptimizerBase<RMSpropOptions> {
 public:
  /// Throws wick::ValueError naming the option for an lr, alpha, eps, weight_decay or momentum that
  /// is negative or not finite (in the defaults or any group), and for parameters that are not
  /// floating-point leaves. As PyTorch, alpha has no upper bound (alpha > 1 is accepted).
  RMSprop(std::vector<Tensor> params, const RMSpropOptions& options = {});
  RMSprop(std::vector<ParamGroup> groups, const RMSpropOptions& defaults);
  std::string name() const override { return "RMSprop"; }
  /// Updates every parameter that has a gradient, in place; every group's options and every
  /// gradient and state tensor are checked first, so a step that throws changes nothing.
  void step() override;

 protected:
  std::vector<std::string> state_names(const OptimizerOptions& o) const override;
  std::vector<std::string> optional_state_names() const override { return {"momentum_buffer", "grad_avg"}; }
  bool has_step() const override { return true; }
};

}  // namespace wick::optim
