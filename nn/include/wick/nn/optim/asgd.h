#pragma once
// ASGD (averaged SGD): PyTorch 1.13's single-tensor update (_single_tensor_asgd), with its options,
// checks and state names.
//
//   step += 1;  g = grad (negated when maximize);  g += weight_decay * p   (when weight_decay != 0)
//   p *= 1 - lambd * eta;  p -= eta * g
//   ax = p when mu == 1, else ax += (p - ax) * mu
//   eta = lr / (1 + lambd * lr * step)^alpha;  mu = 1 / max(1, step - t0)   (float32, see below)
//
// The update runs as wick tensor ops under NoGradGuard on every device (no fused kernel, so
// set_fused() has no effect). State (Note [Optimizer state dicts]): "step", the scalars "eta" (the
// group's lr at first) and "mu" (1 at first), and "ax", the running average of the parameter
// (zeros at first), made by a parameter's first step. PyTorch 1.13 keeps eta and mu as 0-dim
// float32 CPU tensors whatever the parameter's dtype, so each is rounded to float32; wick computes
// them the same way on the host, and state dicts hold them as 0-dim float32 tensors. As for Rprop,
// lr only counts when eta is recomputed after a step: a scheduler's new lr takes effect one step
// later, as PyTorch. LibTorch has no ASGD.
#include "wick/nn/optim/optimizer_base.h"

namespace wick::optim {

/// PyTorch 1.13's ASGD defaults. PyTorch's foreach flag has no counterpart. values(): lr, lambd,
/// alpha, t0, weight_decay, maximize (bools as 0 or 1).
struct ASGDOptions : OptionsBase<ASGDOptions> {
  ASGDOptions(double lr = 1e-2) : lr_(lr) {}  // NOLINT(google-explicit-constructor): as LibTorch's implicit lr
  WICK_OPTIM_ARG(double, lr);
  WICK_OPTIM_ARG(double, lambd) = 1e-4;
  WICK_OPTIM_ARG(double, alpha) = 0.75;
  WICK_OPTIM_ARG(double, t0) = 1e6;
  WICK_OPTIM_ARG(double, weight_decay) = 0;
  WICK_OPTIM_ARG(bool, maximize) = false;

 private:
  friend OptionsBase;
  static detail::OptionTable<ASGDOptions> table();  // in asgd.cpp
};

class ASGD : public OptimizerBase<ASGDOptions> {
 public:
  /// Throws wick::ValueError naming the option for an lr, lambd, alpha, t0 or weight_decay that is
  /// negative or not finite (PyTorch checks lr and weight_decay only; a negative lambd or alpha
  /// would make the step size grow), in the defaults or any group; and for parameters that are not
  /// floating-point leaves.
  ASGD(std::vector<Tensor> params, const ASGDOptions& options = {});
  ASGD(std::vector<ParamGroup> groups, const ASGDOptions& defaults);
  std::string name() const override { return "ASGD"; }
  /// Updates every parameter that has a gradient, in place; every group's options and every
  /// gradient and state tensor are checked first, so a step that throws changes nothing.
  void step() override;

 protected:
  std::vector<std::string> state_names(const OptimizerOptions& /*o*/) const override { return {"ax"}; }
  std::vector<std::string> optional_state_names() const override { return {}; }
  std::vector<std::string> scalar_state_names() const override { return {"eta", "mu"}; }
  /// eta is a step size (any finite number >= 0); mu a weight in [0, 1].
  double scalar_state_max(const std::string& name) const override;
  bool has_step() const override { return true; }
};

}  // namespace wick::optim
