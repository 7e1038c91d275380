// ConstantLR and PolynomialLR: PyTorch 1.13's recursive get_lr and _get_closed_form_lr, written in
// PyTorch's order of operations so that the lrs match its bits.
#include <algorithm>
#include <cmath>

#include "wick/core/error.h"
#include "wick/nn/optim/lr_scheduler.h"

namespace wick::optim {

ConstantLR::ConstantLR(Optimizer& optimizer, double factor, int64_t total_iters)
    : LRScheduler(optimizer), factor_(factor), total_iters_(total_iters) {
  // PyTorch 1.13 accepts factor 0 and then divides by zero at the step to total_iters
  // (ZeroDivisionError); it accepts total_iters <= 0, where its recursive form keeps the factor
  // forever and its closed form never applies it.
  WICK_CHECK(factor > 0 && factor <= 1,
             "ConstantLR: factor must be in (0, 1] (the lr is base_lr * factor until total_iters), got {}", factor);
  WICK_CHECK(total_iters >= 1, "ConstantLR: total_iters must be >= 1 (the epoch the lr returns to base_lr at), got {}",
             total_iters);
  initial_step();
}

std::vector<double> ConstantLR::get_lr() const {
  std::vector<double> out;
  for (const auto& g : optimizer_.param_groups()) {
    const double lr = g.options().get_lr();
    if (last_epoch_ == 0)
      out.push_back(lr * factor_);
    else if (last_epoch_ != total_iters_)
      out.push_back(lr);
    else
      out.push_back(lr * (1.0 / factor_));
  }
  return out;
}

double ConstantLR::closed_form_lr(size_t group, int64_t epoch) const {
  // PyTorch: base_lr * (factor + (last_epoch >= total_iters) * (1 - factor)).
  return base_lr(group) * (factor_ + (epoch >= total_iters_ ? 1 - factor_ : 0.0));
}

PolynomialLR::PolynomialLR(Optimizer& optimizer, int64_t total_iters, double power)
    : LRScheduler(optimizer), total_iters_(total_iters), power_(power) {
  // PyTorch 1.13 checks neither: total_iters 0 divides by zero in the closed form, and a negative
  // power raises the lr and divides by zero at total_iters.
  WICK_CHECK(total_iters >= 1,
             "PolynomialLR: total_iters must be >= 1 (the steps over which the lr decays to 0), got {}", total_iters);
  WICK_CHECK(std::isfinite(power) && power >= 0,
             "PolynomialLR: power must be finite and >= 0 (the polynomial's degree), got {}", power);
  initial_step();
}

std::vector<double> PolynomialLR::get_lr() const {
  const double e = static_cast<double>(last_epoch_), T = static_cast<double>(total_iters_);
  std::vector<double> out;
  if (last_epoch_ == 0 || last_epoch_ > total_iters_) {
    for (const auto& g : optimizer_.param_groups()) out.push_back(g.options().get_lr());
    return out;
  }
  // PyTorch: ((1.0 - e / T) / (1.0 - (e - 1) / T)) ** power; the denominator is >= 1 / T.
  const double decay = std::pow((1.0 - e / T) / (1.0 - (e - 1) / T), power_);
  for (const auto& g : optimizer_.param_groups()) out.push_back(g.options().get_lr() * decay);
  return out;
}

double PolynomialLR::closed_form_lr(size_t group, int64_t epoch) const {
  const double e = static_cast<double>(std::min(total_iters_, epoch)), T = static_cast<double>(total_iters_);
  return base_lr(group) * std::pow(1.0 - e / T, power_);
}

}  // namespace wick::optim
