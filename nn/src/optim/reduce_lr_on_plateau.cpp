// ReduceLROnPlateau: PyTorch 1.13's step, is_better and _reduce_lr.
#include "wick/nn/optim/reduce_lr_on_plateau.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "wick/core/error.h"

namespace wick::optim {

namespace {

// Checks `o` for an optimizer with `groups` groups and gives each group's lowest lr.
std::vector<double> checked_min_lrs(const ReduceLROnPlateauOptions& o, size_t groups) {
  // PyTorch refuses only factor >= 1; a negative, NaN or infinite factor, threshold or eps, or a
  // negative patience or cooldown, would make the lrs negative or NaN or reduce them every step.
  WICK_CHECK(o.factor() >= 0 && o.factor() < 1,
             "ReduceLROnPlateau: factor must be in [0, 1) (new lr = lr * factor), got {}", o.factor());
  WICK_CHECK(o.patience() >= 0,
             "ReduceLROnPlateau: patience must be >= 0 (the bad steps tolerated before the lr is reduced), got {}",
             o.patience());
  WICK_CHECK(std::isfinite(o.threshold()) && o.threshold() >= 0,
             "ReduceLROnPlateau: threshold must be finite and >= 0 (how much better than the best a metric must be), "
             "got {}",
             o.threshold());
  WICK_CHECK(o.cooldown() >= 0,
             "ReduceLROnPlateau: cooldown must be >= 0 (the steps after a reduction that are not counted), got {}",
             o.cooldown());
  WICK_CHECK(std::isfinite(o.eps()) && o.eps() >= 0,
             "ReduceLROnPlateau: eps must be finite and >= 0 (reductions by eps or less are skipped), got {}", o.eps());
  const auto& given = o.min_lr();
  WICK_CHECK(given.size() <= 1 || given.size() == groups,
             "ReduceLROnPlateau: min_lr needs one value for every group or one per group ({}), got {} values", groups,
             given.size());
  for (size_t i = 0; i < given.size(); ++i)
    WICK_CHECK(std::isfinite(given[i]) && given[i] >= 0,
               "ReduceLROnPlateau: min_lr {} must be finite and >= 0 (the lowest lr), got {}", i, given[i]);
  if (given.size() == groups) return given;
  return std::vector<double>(groups, given.empty() ? 0.0 : given[0]);
}

}  // namespace

ReduceLROnPlateau::ReduceLROnPlateau(Optimizer& optimizer, const ReduceLROnPlateauOptions& options)
    : optimizer_(optimizer),
      options_(options),
      min_lrs_(checked_min_lrs(options, optimizer.param_groups().size())),
      best_(options.mode() == SchedulerMode::min ? std::numeric_limits<double>::infinity()
                                                 : -std::numeric_limits<double>::infinity()) {
  for (const auto& g : optimizer_.param_groups()) last_lr_.push_back(g.options().get_lr());
}

ReduceLROnPlateau::ReduceLROnPlateau(Optimizer& optimizer, SchedulerMode mode, double factor, int64_t patience,
                                     double threshold, ThresholdMode threshold_mode, int64_t cooldown,
                                     const std::vector<double>& min_lr, double eps)
    : ReduceLROnPlateau(optimizer, ReduceLROnPlateauOptions()
                                       .mode(mode)
                                       .factor(factor)
                                       .patience(patience)
                                       .threshold(threshold)
                                       .threshold_mode(threshold_mode)
                                       .cooldown(cooldown)
                                       .min_lr(min_lr)
                                       .eps(eps)) {}

void ReduceLROnPlateau::check_groups(const char* op) const {
  WICK_CHECK_STATE(optimizer_.param_groups().size() == min_lrs_.size(),
                   "ReduceLROnPlateau.{}: the optimizer has {} parameter groups but the scheduler was made for {}; "
                   "make the scheduler after adding every group",
                   op, optimizer_.param_groups().size(), min_lrs_.size());
}

bool ReduceLROnPlateau::is_better(double a) const {
  const double t = options_.threshold();
  const bool rel = options_.threshold_mode() == ThresholdMode::rel;
  if (options_.mode() == SchedulerMode::min) return rel ? a < best_ * (1. - t) : a < best_ - t;
  return rel ? a > best_ * (t + 1.) : a > best_ + t;
}

void ReduceLROnPlateau::step(double metric) {
  check_groups("step");  // the only refusal, before anything changes
  ++last_epoch_;
  if (is_better(metric)) {
    best_ = metric;
    num_bad_epochs_ = 0;
  } else {
    ++num_bad_epochs_;
  }
  if (in_cooldown()) {
    --cooldown_counter_;
    num_bad_epochs_ = 0;  // bad steps in cooldown are not counted
  }
  auto& groups = optimizer_.param_groups();
  if (num_bad_epochs_ > options_.patience()) {
    for (size_t i = 0; i < groups.size(); ++i) {
      const double old_lr = groups[i].options().get_lr();
      const double new_lr = std::max(old_lr * options_.factor(), min_lrs_[i]);
      if (old_lr - new_lr > options_.eps()) groups[i].options().set_lr(new_lr);
    }
    cooldown_counter_ = options_.cooldown();
    num_bad_epochs_ = 0;
  }
  last_lr_.clear();
  for (const auto& g : groups) last_lr_.push_back(g.options().get_lr());
}

ReduceLROnPlateauState ReduceLROnPlateau::state() const {
  return {.best = best_,
          .num_bad_epochs = num_bad_epochs_,
          .cooldown_counter = cooldown_counter_,
          .last_epoch = last_epoch_};
}

void ReduceLROnPlateau::resume(const ReduceLROnPlateauState& s) {
  check_groups("resume");
  WICK_CHECK(!std::isnan(s.best), "ReduceLROnPlateau.resume: best is NaN; pass the best metric state() gave");
  WICK_CHECK(s.last_epoch >= 0, "ReduceLROnPlateau.resume: last_epoch must be >= 0, got {}", s.last_epoch);
  WICK_CHECK(s.num_bad_epochs >= 0 && s.num_bad_epochs <= options_.patience(),
             "ReduceLROnPlateau.resume: num_bad_epochs must be in [0, patience = {}], got {}; pass the state of a "
             "scheduler with these options",
             options_.patience(), s.num_bad_epochs);
  WICK_CHECK(s.cooldown_counter >= 0 && s.cooldown_counter <= options_.cooldown(),
             "ReduceLROnPlateau.resume: cooldown_counter must be in [0, cooldown = {}], got {}; pass the state of a "
             "scheduler with these options",
             options_.cooldown(), s.cooldown_counter);
  best_ = s.best;
  num_bad_epochs_ = s.num_bad_epochs;
  cooldown_counter_ = s.cooldown_counter;
  last_epoch_ = s.last_epoch;
  last_lr_.clear();
  for (const auto& g : optimizer_.param_groups()) last_lr_.push_back(g.options().get_lr());
}

}  // namespace wick::optim
