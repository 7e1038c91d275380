#pragma once
// Adagrad: PyTorch 1.13's single-tensor update (_single_tensor_adagrad), with its options, checks
// and state names.
//
//   t += 1;  g = grad (negated when maximize);  g += weight_decay * p   (when weight_decay != 0)
//   clr = lr / (1 + (t - 1) * lr_decay)
//   sum += g * g;  p -= clr * g / (sqrt(sum) + eps)
//
// The update runs as wick tensor ops under NoGradGuard on every device: there is no fused kernel
// for Adagrad, so set_fused() has no effect on it.
//
// State (Note [Optimizer state dicts]): "step" and "sum". As PyTorch 1.13 (and LibTorch), every
// parameter gets its state when it joins the optimizer, not at its first step: step 0 and sum
// filled with initial_accumulator_value, in the parameter's dtype and on its device. So state(p)
// is non-null and state_dict() lists "state.<i>.step" (0) and "state.<i>.sum" for every parameter
// from construction on, also for parameters that never get a gradient, exactly as PyTorch's
// state_dict() does. Where wick differs: a group added later with add_param_group gets its state
// too (PyTorch 1.13 makes state in its constructor only, so a step over a later group fails with
// a KeyError), and a parameter left without state by load_state_dict gets it at its next step,
// from its group's current initial_accumulator_value. Because the state exists from the start, a
// Module::to() after the optimizer was made leaves "sum" on the old dtype or device: the step then
// refuses it (a StateError, as for every optimizer's state) and asks for
// load_state_dict(state_dict()), which converts it; build the optimizer after to().
#include "wick/nn/optim/optimizer_base.h"

namespace wick::optim {

/// PyTorch 1.13's Adagrad defaults. PyTorch's foreach flag has no counterpart (wick has one
/// tensor-op path). values() gives PyTorch's param_group keys, in its order: lr, lr_decay, eps,
/// weight_decay, initial_accumulator_value, maximize (bools as 0 or 1).
struct AdagradOptions : OptionsBase<AdagradOptions> {
  AdagradOptions(double lr = 1e-2) : lr_(lr) {}  // NOLINT(google-explicit-constructor): LibTorch's implicit lr
  WICK_OPTIM_ARG(double, lr);
  WICK_OPTIM_ARG(double, lr_decay) = 0;
  WICK_OPTIM_ARG(double, weight_decay) = 0;
  WICK_OPTIM_ARG(double, initial_accumulator_value) = 0;
  WICK_OPTIM_ARG(double, eps) = 1e-10;
  WICK_OPTIM_ARG(bool, maximize) = false;

 private:
  friend OptionsBase;
  static detail::OptionTable<AdagradOptions> table();  // in adagrad.cpp
};

class Adagrad : public OptimizerBase<AdagradOptions> {
 public:
  /// Throws wick::ValueError naming the option for an lr, lr_decay, weight_decay,
  /// initial_accumulator_value or eps that is negative or not finite (in the defaults or any
  /// group), and for parameters that are not floating-point leaves. Makes every parameter's state
  /// (see above).
  Adagrad(std::vector<Tensor> params, const AdagradOptions& options = {});
  Adagrad(std::vector<ParamGroup> groups, const AdagradOptions& defaults);
  std::string name() const override { return "Adagrad"; }
  /// Updates every parameter that has a gradient, in place; every group's options and every
  /// gradient and state tensor are checked first, so a step that throws changes nothing.
  void step() override;

 protected:
  std::vector<std::string> state_names(const OptimizerOptions& /*o*/) const override { return {"sum"}; }
  std::vector<std::string> optional_state_names() const override { return {}; }
  bool has_step() const override { return true; }
  /// Gives each parameter of `group` that has no state yet step 0 and a sum filled with the
  /// group's initial_accumulator_value.
  void init_group_state(const ParamGroup& group) override;
};

}  // namespace wick::optim
