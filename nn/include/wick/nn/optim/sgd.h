#pragma once
// SGD with momentum, dampening, Nesterov momentum and weight decay: PyTorch 1.13's update.
//
//   g = grad (negated when maximize);  g += weight_decay * p
//   if momentum != 0:
//     buf = g on the first step, else buf = momentum * buf + (1 - dampening) * g
//     g = nesterov ? g + momentum * buf : buf
//   p -= lr * g
#include "wick/nn/optim/optimizer_base.h"

namespace wick::optim {

/// The lr has no default (as LibTorch's SGDOptions and PyTorch 1.13's SGD) and converts
/// implicitly, so `SGD(params, 0.1)` reads as in LibTorch.
struct SGDOptions : OptionsBase<SGDOptions> {
  SGDOptions(double lr) : lr_(lr) {}  // NOLINT(google-explicit-constructor): LibTorch's implicit lr
  WICK_OPTIM_ARG(double, lr);
  WICK_OPTIM_ARG(double, momentum) = 0;
  WICK_OPTIM_ARG(double, dampening) = 0;
  WICK_OPTIM_ARG(double, weight_decay) = 0;
  WICK_OPTIM_ARG(bool, nesterov) = false;
  WICK_OPTIM_ARG(bool, maximize) = false;

 private:
  friend OptionsBase;
  static detail::OptionTable<SGDOptions> table();  // in sgd.cpp
};

class SGD : public OptimizerBase<SGDOptions> {
 public:
  /// Throws when nesterov is set without momentum or with dampening (as PyTorch), for a negative
  /// or non-finite lr, momentum or weight decay, a non-finite dampening (in the defaults or any
  /// group), and for parameters that are not floating-point leaves.
  SGD(std::vector<Tensor> params, const SGDOptions& options);
  SGD(std::vector<ParamGroup> groups, const SGDOptions& defaults);
  std::string name() const override { return "SGD"; }
  void step() override;

 protected:
  std::vector<std::string> state_names(const OptimizerOptions& o) const override;
  std::vector<std::string> optional_state_names() const override { return {"momentum_buffer"}; }
  bool has_step() const override { return false; }
};

}  // namespace wick::optim
