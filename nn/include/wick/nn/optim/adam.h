#pragma once
// Adam and AdamW: PyTorch 1.13's single-tensor update.
//
//   t += 1;  g = grad (negated when maximize)
//   Adam:  g += weight_decay * p          AdamW:  p *= 1 - lr * weight_decay   (decoupled)
//   m = beta1 * m + (1 - beta1) * g;      v = beta2 * v + (1 - beta2) * g * g
//   step_size = lr / (1 - beta1^t);       c2 = sqrt(1 - beta2^t)
//   vmax = max(vmax, v) when amsgrad;     denom = sqrt(amsgrad ? vmax : v) / c2 + eps
//   p -= step_size * m / denom
#include <tuple>

#include "wick/nn/optim/optimizer_base.h"

namespace wick::optim {

struct AdamOptions : OptionsBase<AdamOptions> {
  AdamOptions(double lr = 1e-3) : lr_(lr) {}  // NOLINT(google-explicit-constructor): LibTorch's implicit lr
  WICK_OPTIM_ARG(double, lr);
  WICK_OPTIM_ARG(double, beta1) = 0.9;
  WICK_OPTIM_ARG(double, beta2) = 0.999;
  WICK_OPTIM_ARG(double, eps) = 1e-8;
  WICK_OPTIM_ARG(double, weight_decay) = 0;
  WICK_OPTIM_ARG(bool, amsgrad) = false;
  WICK_OPTIM_ARG(bool, maximize) = false;

 public:
  /// Both betas at once, as LibTorch's betas({b1, b2}) or betas(std::make_tuple(b1, b2)) (a
  /// std::pair converts too).
  AdamOptions& betas(const std::tuple<double, double>& b) {
    beta1_ = std::get<0>(b);
    beta2_ = std::get<1>(b);
    return *this;
  }
  std::tuple<double, double> betas() const { return {beta1_, beta2_}; }
  const std::type_info& read_as() const override { return typeid(AdamOptions); }

 private:
  friend OptionsBase;
  static detail::OptionTable<AdamOptions> table();  // in adam.cpp
};

// Re-declares Base's chainable setter `name` in Derived so that a chain keeps the derived type:
// AdamW(params, AdamWOptions(1e-3).weight_decay(0.1)) as in LibTorch.
#define WICK_OPTIM_ARG_CHAIN(Derived, Base, T, name) \
  using Base::name;                                  \
  Derived& name(const T& v) {                        \
    Base::name(v);                                   \
    return *this;                                    \
  }

/// AdamW's options: Adam's, with weight_decay defaulting to 1e-2 as PyTorch's.
struct AdamWOptions : AdamOptions {
  AdamWOptions(double lr = 1e-3) : AdamOptions(lr) { weight_decay(1e-2); }  // NOLINT(google-explicit-constructor)
  WICK_OPTIM_ARG_CHAIN(AdamWOptions, AdamOptions, double, lr)
  WICK_OPTIM_ARG_CHAIN(AdamWOptions, AdamOptions, double, beta1)
  WICK_OPTIM_ARG_CHAIN(AdamWOptions, AdamOptions, double, beta2)
  WICK_OPTIM_ARG_CHAIN(AdamWOptions, AdamOptions, double, eps)
  WICK_OPTIM_ARG_CHAIN(AdamWOptions, AdamOptions, double, weight_decay)
  WICK_OPTIM_ARG_CHAIN(AdamWOptions, AdamOptions, bool, amsgrad)
  WICK_OPTIM_ARG_CHAIN(AdamWOptions, AdamOptions, bool, maximize)
  using AdamOptions::betas;
  AdamWOptions& betas(const std::tuple<double, double>& b) {
    AdamOptions::betas(b);
    return *this;
  }
  std::unique_ptr<OptimizerOptions> clone() const override { return std::make_unique<AdamWOptions>(*this); }
};

class Adam : public OptimizerBase<AdamOptions> {
 public:
  /// Throws for an lr, eps or weight decay that is negative or not finite, betas outside [0, 1)
  /// (in the defaults or any group), and parameters that are not floating-point leaves.
  Adam(std::vector<Tensor> params, const AdamOptions& options);
  Adam(std::vector<ParamGroup> groups, const AdamOptions& defaults);
  std::string name() const override { return decoupled_ ? "AdamW" : "Adam"; }
  void step() override;

 protected:
  Adam(std::vector<ParamGroup> groups, const AdamOptions& defaults, bool decoupled);
  std::vector<std::string> state_names(const OptimizerOptions& o) const override;
  std::vector<std::string> optional_state_names() const override { return {"max_exp_avg_sq"}; }
  bool has_step() const override { return true; }

 private:
  bool decoupled_ = false;
};

class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params, const AdamWOptions& options);
  AdamW(std::vector<ParamGroup> groups, const AdamWOptions& defaults);
};

}  // namespace wick::optim
