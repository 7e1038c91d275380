// StepLR and CosineAnnealingLR: PyTorch 1.13's recursive get_lr and closed forms.
#include "wick/nn/optim/lr_scheduler.h"

#include <cmath>
#include <numbers>

#include "wick/core/error.h"

namespace wick::optim {

LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {
  for (const auto& g : optimizer.param_groups()) base_lrs_.push_back(g.options().get_lr());
}

void LRScheduler::initial_step() { step(); }

void LRScheduler::step() {
  auto& groups = optimizer_.param_groups();
  WICK_CHECK_STATE(groups.size() == base_lrs_.size(),
                   "lr scheduler: the optimizer has {} parameter groups but the scheduler "
                   "was made for {}; make the scheduler after adding every group",
                   groups.size(), base_lrs_.size());
  // A refused step changes nothing: the epoch moves only with the learning rates.
  ++last_epoch_;
  std::vector<double> lrs;
  try {
    lrs = get_lr();
  } catch (...) {
    --last_epoch_;
    throw;
  }
  for (size_t i = 0; i < groups.size(); ++i) groups[i].options().set_lr(lrs[i]);
  last_lr_ = std::move(lrs);
}

void LRScheduler::resume(int64_t last_epoch, const std::vector<double>& base_lrs) {
  auto& groups = optimizer_.param_groups();
  WICK_CHECK(base_lrs.size() == groups.size() && last_epoch >= 0,
             "lr scheduler: resume needs one base lr per group ({}) "
             "and a last_epoch >= 0, got {} base lrs and last_epoch {}",
             groups.size(), base_lrs.size(), last_epoch);
  base_lrs_ = base_lrs;
  last_epoch_ = last_epoch;
  last_lr_.clear();
  for (size_t i = 0; i < groups.size(); ++i) {
    last_lr_.push_back(closed_form_lr(i, last_epoch));
    groups[i].options().set_lr(last_lr_.back());
  }
}

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  WICK_CHECK(step_size > 0, "StepLR: step_size must be > 0, got {}", step_size);
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
  return base_lrs_.at(group) * std::pow(gamma_, static_cast<double>(epoch / step_size_));
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min)
    : LRScheduler(optimizer), t_max_(T_max), eta_min_(eta_min) {
  WICK_CHECK(T_max > 0, "CosineAnnealingLR: T_max must be > 0, got {}", T_max);
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
  return eta_min_ + (base_lrs_.at(group) - eta_min_) *
                        (1 + std::cos(std::numbers::pi * static_cast<double>(epoch) / static_cast<double>(t_max_))) / 2;
}

}  // namespace wick::optim
