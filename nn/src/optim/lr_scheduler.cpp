// LRScheduler, StepLR and CosineAnnealingLR: PyTorch 1.13's step, recursive get_lr and closed forms.
#include "wick/nn/optim/lr_scheduler.h"

#include <cmath>
#include <numbers>

#include "wick/core/error.h"

namespace wick::optim {

LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {
  for (const auto& g : optimizer.param_groups()) base_lrs_.push_back(g.options().get_lr());
}

void LRScheduler::initial_step() { step(); }

void LRScheduler::check_groups(const char* op) const {
  const size_t groups = optimizer_.param_groups().size();
  WICK_CHECK_STATE(groups == base_lrs_.size(),
                   "{}.{}: the optimizer has {} parameter groups but the scheduler was made for {}; make the "
                   "scheduler after adding every group",
                   name(), op, groups, base_lrs_.size());
}

void LRScheduler::step() {
  check_groups("step");
  step_to(last_epoch_ + 1);
}

void LRScheduler::step_to(int64_t epoch) {
  // A refused step changes nothing: the epoch moves only with the learning rates.
  const int64_t before = last_epoch_;
  last_epoch_ = epoch;
  std::vector<double> lrs;
  try {
    lrs = get_lr();
  } catch (...) {
    last_epoch_ = before;
    throw;
  }
  commit(epoch, std::move(lrs));
}

void LRScheduler::commit(int64_t epoch, std::vector<double> lrs) {
  auto& groups = optimizer_.param_groups();
  for (size_t i = 0; i < groups.size(); ++i) groups[i].options().set_lr(lrs[i]);
  last_epoch_ = epoch;
  last_lr_ = std::move(lrs);
}

void LRScheduler::restart() {
  check_groups("restart");
  std::vector<double> lrs;
  for (size_t i = 0; i < base_lrs_.size(); ++i) lrs.push_back(closed_form_lr(i, 0));
  commit(0, std::move(lrs));
}

void LRScheduler::check_resume(int64_t last_epoch, const std::vector<double>& base_lrs) const {
  const size_t groups = optimizer_.param_groups().size();
  WICK_CHECK(base_lrs.size() == groups && last_epoch >= 0,
             "{}.resume: needs one base lr per group ({}) and a last_epoch >= 0, got {} base lrs and last_epoch {}",
             name(), groups, base_lrs.size(), last_epoch);
  for (size_t i = 0; i < base_lrs.size(); ++i)
    WICK_CHECK(std::isfinite(base_lrs[i]) && base_lrs[i] >= 0,
               "{}.resume: base lr {} is {}; pass the finite, non-negative lrs the groups had when the "
               "scheduler was made",
               name(), i, base_lrs[i]);
}

void LRScheduler::resume(int64_t last_epoch, const std::vector<double>& base_lrs) {
  check_resume(last_epoch, base_lrs);
  // The groups keep the lrs the checkpoint restored: the closed form for last_epoch can differ from
  // the recursive form the run followed in the last bit (PyTorch keeps the optimizer's lrs too).
  base_lrs_ = base_lrs;
  last_epoch_ = last_epoch;
  last_lr_.clear();
  for (const auto& g : optimizer_.param_groups()) last_lr_.push_back(g.options().get_lr());
}

double LRScheduler::base_lr(size_t group) const {
  WICK_CHECK_INDEX(group < base_lrs_.size(), "{}.closed_form_lr: group {} is out of range (the scheduler has {})",
                   name(), group, base_lrs_.size());
  return base_lrs_[group];
}

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  WICK_CHECK(step_size > 0, "StepLR: step_size must be > 0, got {}", step_size);
  WICK_CHECK(
      std::isfinite(gamma) && gamma >= 0,
      "StepLR: gamma must be finite and >= 0 (the factor the lr is multiplied by every step_size epochs), got {}",
      gamma);
  initial_step();
}

std::vector<double> StepLR::get_lr() const {
  std::vector<double> out;
  for (const auto& g : optimizer_.param_groups()) {
    double lr = g.options().get_lr();
    if (last_epoch_ != 0 && last_epoch_ % step_size_ == 0) lr *= gamma_;
    out.push_back(lr);
  }
  return out;
}

double StepLR::closed_form_lr(size_t group, int64_t epoch) const {
  return base_lr(group) * std::pow(gamma_, static_cast<double>(epoch / step_size_));
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min)
    : LRScheduler(optimizer), t_max_(T_max), eta_min_(eta_min) {
  WICK_CHECK(T_max > 0, "CosineAnnealingLR: T_max must be > 0, got {}", T_max);
  WICK_CHECK(std::isfinite(eta_min) && eta_min >= 0,
             "CosineAnnealingLR: eta_min must be finite and >= 0 (the lowest lr; optimizers refuse a negative one), "
             "got {}",
             eta_min);
  initial_step();
}

std::vector<double> CosineAnnealingLR::get_lr() const {
  constexpr double pi = std::numbers::pi;
  const double T = static_cast<double>(t_max_), e = static_cast<double>(last_epoch_);
  std::vector<double> out;
  const auto& groups = optimizer_.param_groups();
  for (size_t i = 0; i < groups.size(); ++i) {
    const double lr = groups[i].options().get_lr();
    if (last_epoch_ == 0) {
      out.push_back(lr);
    } else if ((last_epoch_ - 1 - t_max_) % (2 * t_max_) == 0) {
      out.push_back(lr + (base_lrs_[i] - eta_min_) * (1 - std::cos(pi / T)) / 2);
    } else {
      out.push_back((1 + std::cos(pi * e / T)) / (1 + std::cos(pi * (e - 1) / T)) * (lr - eta_min_) + eta_min_);
    }
  }
  return out;
}

double CosineAnnealingLR::closed_form_lr(size_t group, int64_t epoch) const {
  return eta_min_ + (base_lr(group) - eta_min_) *
                        (1 + std::cos(std::numbers::pi * static_cast<double>(epoch) / static_cast<double>(t_max_))) / 2;
}

}  // namespace wick::optim
