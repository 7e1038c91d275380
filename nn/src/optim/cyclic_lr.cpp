// CyclicLR: PyTorch 1.13's constructor, scale functions and get_lr, in its order of operations.
#include "wick/nn/optim/cyclic_lr.h"

#include <cmath>

#include "scheduler_options.h"
#include "wick/core/error.h"

namespace wick::optim {

CyclicLR::CyclicLR(Optimizer& optimizer, const CyclicLROptions& options) : LRScheduler(optimizer), options_(options) {
  const size_t groups = optimizer.param_groups().size();
  std::vector<double> base = detail::per_group(options.base_lr(), groups, "CyclicLR", "base_lr");
  max_lrs_ = detail::per_group(options.max_lr(), groups, "CyclicLR", "max_lr");
  const int64_t up = options.step_size_up(), down = options.step_size_down().value_or(up);
  // PyTorch divides by zero at step 0 with step_size_up 0.
  WICK_CHECK(up >= 1, "CyclicLR: step_size_up must be >= 1 (the steps from base_lr up to max_lr), got {}", up);
  WICK_CHECK(down >= 0, "CyclicLR: step_size_down must be >= 0 (the steps from max_lr back down), got {}", down);
  // gamma^step scales the amplitude: above 1 it grows without bound.
  WICK_CHECK(options.mode() != Mode::exp_range || options.scale_fn() || (options.gamma() >= 0 && options.gamma() <= 1),
             "CyclicLR: gamma must be in [0, 1] (exp_range scales the amplitude by gamma^step), got {}",
             options.gamma());
  if (options.cycle_momentum()) {
    WICK_CHECK(detail::has_option(optimizer, "momentum"),
               "CyclicLR: cycle_momentum needs an optimizer with a momentum option (SGD, RMSprop); {} has none (as "
               "in PyTorch 1.13, which cycles only 'momentum'): pass cycle_momentum(false)",
               optimizer.name());
    base_momenta_ = detail::per_group(options.base_momentum(), groups, "CyclicLR", "base_momentum");
    max_momenta_ = detail::per_group(options.max_momentum(), groups, "CyclicLR", "max_momentum");
  }
  total_size_ = static_cast<double>(up) + static_cast<double>(down);
  step_ratio_ = static_cast<double>(up) / total_size_;
  base_lrs_ = std::move(base);
  initial_step();
}

void CyclicLR::factors(int64_t epoch, double& f, double& scale) const {
  const double e = static_cast<double>(epoch);
  const double c = std::floor(1 + e / total_size_);
  const double x = 1. + e / total_size_ - c;
  f = x <= step_ratio_ ? x / step_ratio_ : (x - 1) / (step_ratio_ - 1);
  const auto cycle = static_cast<int64_t>(c);
  if (options_.scale_fn()) {
    scale = options_.scale_fn()(options_.scale_mode() == ScaleMode::cycle ? cycle : epoch);
    return;
  }
  switch (options_.mode()) {
    case Mode::triangular:
      scale = 1.;
      break;
    case Mode::triangular2:
      scale = 1 / std::pow(2., static_cast<double>(cycle - 1));
      break;
    case Mode::exp_range:
      scale = std::pow(options_.gamma(), e);
      break;
  }
}

double CyclicLR::closed_form_lr(size_t group, int64_t epoch) const {
  const double base = base_lr(group);
  double f = 0, scale = 0;
  factors(epoch, f, scale);
  const double base_height = (max_lrs_[group] - base) * f;
  return base + base_height * scale;
}

double CyclicLR::closed_form_momentum(size_t group, int64_t epoch) const {
  WICK_CHECK_STATE(options_.cycle_momentum(), "CyclicLR.closed_form_momentum: the scheduler does not cycle momentum");
  (void)base_lr(group);  // IndexError for a group the scheduler does not have
  double f = 0, scale = 0;
  factors(epoch, f, scale);
  const double base_height = (max_momenta_[group] - base_momenta_[group]) * f;
  return max_momenta_[group] - base_height * scale;
}

std::vector<double> CyclicLR::get_lr() const {
  std::vector<double> out;
  for (size_t i = 0; i < base_lrs_.size(); ++i) out.push_back(closed_form_lr(i, last_epoch_));
  return out;
}

void CyclicLR::advance_to(int64_t epoch, const char* op) {
  check_groups(op);
  double f = 0, scale = 0;
  factors(epoch, f, scale);
  WICK_CHECK(std::isfinite(scale), "CyclicLR.{}: scale_fn returned {} at step {}; it must return a finite scale", op,
             scale, epoch);
  std::vector<double> lrs, momenta;
  for (size_t i = 0; i < base_lrs_.size(); ++i) {
    const double base_height = (max_lrs_[i] - base_lrs_[i]) * f;
    lrs.push_back(base_lrs_[i] + base_height * scale);
    WICK_CHECK(std::isfinite(lrs[i]) && lrs[i] >= 0,
               "CyclicLR.{}: step {} gives group {} the lr {} (scale {}); the scale must keep the lr finite and >= 0",
               op, epoch, i, lrs[i], scale);
    if (!options_.cycle_momentum()) continue;
    const double momentum_height = (max_momenta_[i] - base_momenta_[i]) * f;
    momenta.push_back(max_momenta_[i] - momentum_height * scale);
    WICK_CHECK(std::isfinite(momenta[i]) && momenta[i] >= 0,
               "CyclicLR.{}: step {} gives group {} the momentum {} (scale {}); the scale must keep the momentum "
               "finite and >= 0",
               op, epoch, i, momenta[i], scale);
  }
  if (options_.cycle_momentum())
    detail::set_group_option(optimizer_, "momentum", momenta, fmt::format("CyclicLR.{} to step {}", op, epoch));
  commit(epoch, std::move(lrs));
}

void CyclicLR::step() { advance_to(last_epoch_ + 1, "step"); }

void CyclicLR::restart() { advance_to(0, "restart"); }

}  // namespace wick::optim
