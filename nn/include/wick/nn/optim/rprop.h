#pragma once
// Rprop: PyTorch 1.13's single-tensor update (_single_tensor_rprop), with its options, checks and
// state names.
//
//   g = grad (negated when maximize);  s = sign(g * prev)
//   factor = etaplus where s > 0, etaminus where s < 0, 1 where s == 0
//   step_size = clamp(step_size * factor, step_size_min, step_size_max)
//   g = 0 where factor == etaminus;  p -= sign(g) * step_size;  prev = g
//
// The update runs as wick tensor ops under NoGradGuard on every device (no fused kernel, so
// set_fused() has no effect). State (Note [Optimizer state dicts]): "step", "prev" (zeros) and
// "step_size" (filled with the group's lr), made by a parameter's first step: lr only sets the
// first step size, so changing it later (a scheduler) changes nothing for parameters that have
// state, as PyTorch. PyTorch 1.13 counts "step" as a Python int; wick's state dicts hold it as a
// 0-dim float32 tensor, as for every wick optimizer. PyTorch's etas and step_sizes pairs are
// stored as "etaminus", "etaplus", "step_size_min" and "step_size_max" (the names its update
// uses). LibTorch has no Rprop.
#include <tuple>

#include "wick/nn/optim/optimizer_base.h"

namespace wick::optim {

/// PyTorch 1.13's Rprop defaults. PyTorch's foreach flag has no counterpart. values(): lr, etaminus,
/// etaplus, step_size_min, step_size_max, maximize (bools as 0 or 1).
struct RpropOptions : OptionsBase<RpropOptions> {
  RpropOptions(double lr = 1e-2) : lr_(lr) {}  // NOLINT(google-explicit-constructor): as LibTorch's implicit lr
  WICK_OPTIM_ARG(double, lr);
  WICK_OPTIM_ARG(double, etaminus) = 0.5;
  WICK_OPTIM_ARG(double, etaplus) = 1.2;
  WICK_OPTIM_ARG(double, step_size_min) = 1e-6;
  WICK_OPTIM_ARG(double, step_size_max) = 50;
  WICK_OPTIM_ARG(bool, maximize) = false;

 public:
  /// (etaminus, etaplus) at once, as PyTorch's etas.
  RpropOptions& etas(const std::tuple<double, double>& e) {
    etaminus_ = std::get<0>(e);
    etaplus_ = std::get<1>(e);
    return *this;
  }
  std::tuple<double, double> etas() const { return {etaminus_, etaplus_}; }
  /// (step_size_min, step_size_max) at once, as PyTorch's step_sizes.
  RpropOptions& step_sizes(const std::tuple<double, double>& s) {
    step_size_min_ = std::get<0>(s);
    step_size_max_ = std::get<1>(s);
    return *this;
  }
  std::tuple<double, double> step_sizes() const { return {step_size_min_, step_size_max_}; }

 private:
  friend OptionsBase;
  static detail::OptionTable<RpropOptions> table();  // in rprop.cpp
};

class Rprop : public OptimizerBase<RpropOptions> {
 public:
  /// Throws wick::ValueError naming the option for an lr that is negative or not finite, etas
  /// outside 0 < etaminus < 1 < etaplus (etaplus finite), and step sizes outside
  /// 0 <= step_size_min <= step_size_max (finite; PyTorch does not check them), in the defaults or
  /// any group; and for parameters that are not floating-point leaves.
  Rprop(std::vector<Tensor> params, const RpropOptions& options = {});
  Rprop(std::vector<ParamGroup> groups, const RpropOptions& defaults);
  std::string name() const override { return "Rprop"; }
  /// Updates every parameter that has a gradient, in place; every group's options and every
  /// gradient and state tensor are checked first, so a step that throws changes nothing.
  void step() override;

 protected:
  std::vector<std::string> state_names(const OptimizerOptions& /*o*/) const override { return {"prev", "step_size"}; }
  std::vector<std::string> optional_state_names() const override { return {}; }
  bool has_step() const override { return true; }
};

}  // namespace wick::optim
