#pragma once
// Adam and AdamW: PyTorch 1.13's single-tensor update.
//
//   t += 1;  g = grad (negated when maximize)
//   Adam:  g += weight_decay * p          AdamW:  p *= 1 - lr * weight_decay   (decoupled)
//   m = beta1 * m + (1 - beta1) * g;      v = beta2 * v + (1 - beta2) * g * g
//   step_size = lr / (1 - beta1^t);       c2 = sqrt(1 - beta2^t)
//   vmax = max(vmax, v) when amsgrad;     denom = sqrt(amsgrad ? vmax : v) / c2 + eps
//   p -= step_size * m / denom
#include "wick/nn/optim/optimizer.h"

namespace wick::optim {

struct AdamOptions : OptimizerOptions {
  explicit AdamOptions(double lr = 1e-3) : lr_(lr) {}
  WICK_OPTIM_ARG(double, lr);
  WICK_OPTIM_ARG(double, beta1) = 0.9;
  WICK_OPTIM_ARG(double, beta2) = 0.999;
  WICK_OPTIM_ARG(double, eps) = 1e-8;
  WICK_OPTIM_ARG(double, weight_decay) = 0;
  WICK_OPTIM_ARG(bool, amsgrad) = false;
  WICK_OPTIM_ARG(bool, maximize) = false;

 public:
  /// Both betas at once, as LibTorch's betas({b1, b2}).
  AdamOptions& betas(std::pair<double, double> b) {
    beta1_ = b.first;
    beta2_ = b.second;
    return *this;
  }
  std::unique_ptr<OptimizerOptions> clone() const override { return std::make_unique<AdamOptions>(*this); }
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  OptionValues values() const override;
  void set_values(const OptionValues& v) override;
};

/// AdamW's options: Adam's, with weight_decay defaulting to 1e-2 as PyTorch's.
struct AdamWOptions : AdamOptions {
  explicit AdamWOptions(double lr = 1e-3) : AdamOptions(lr) { weight_decay(1e-2); }
  std::unique_ptr<OptimizerOptions> clone() const override { return std::make_unique<AdamWOptions>(*this); }
};

class Adam : public Optimizer {
 public:
  /// Throws for lr, eps or weight decay < 0, betas outside [0, 1), and parameters that are not
  /// floating-point leaves.
  Adam(std::vector<Tensor> params, const AdamOptions& options);
  Adam(std::vector<ParamGroup> groups, const AdamOptions& defaults);
  std::string name() const override { return decoupled_ ? "AdamW" : "Adam"; }
  void step() override;

 protected:
  Adam(std::vector<ParamGroup> groups, const AdamOptions& defaults, bool decoupled);
  std::vector<std::string> state_names(const OptimizerOptions& o) const override;
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
