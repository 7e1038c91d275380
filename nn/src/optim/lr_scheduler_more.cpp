// ExponentialLR, MultiStepLR, LinearLR, LambdaLR and MultiplicativeLR: PyTorch 1.13's get_lr (recursive where
// PyTorch's is) and _get_closed_form_lr, written in PyTorch's order of operations so that the lrs
// match its bits.
#include <algorithm>
#include <cmath>

#include "wick/core/error.h"
#include "wick/nn/optim/lr_scheduler.h"

namespace wick::optim {

ExponentialLR::ExponentialLR(Optimizer& optimizer, double gamma) : LRScheduler(optimizer), gamma_(gamma) {
  WICK_CHECK(std::isfinite(gamma) && gamma >= 0,
             "ExponentialLR: gamma must be finite and >= 0 (the factor every step multiplies the lr by), got {}",
             gamma);
  initial_step();
}

std::vector<double> ExponentialLR::get_lr() const {
  std::vector<double> out;
  for (const auto& g : optimizer_.param_groups())
    out.push_back(last_epoch_ == 0 ? g.options().get_lr() : g.options().get_lr() * gamma_);
  return out;
}

double ExponentialLR::closed_form_lr(size_t group, int64_t epoch) const {
  return base_lr(group) * std::pow(gamma_, static_cast<double>(epoch));
}

MultiStepLR::MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma)
    : LRScheduler(optimizer), milestones_(std::move(milestones)), gamma_(gamma) {
  // PyTorch accepts a negative milestone, which its recursive form never reaches and its closed
  // form counts from the start: the two forms would disagree for the whole run.
  for (const int64_t m : milestones_)
    WICK_CHECK(m >= 0, "MultiStepLR: milestones must be >= 0 (epochs the lr is decayed at), got {}", m);
  WICK_CHECK(
      std::isfinite(gamma) && gamma >= 0,
      "MultiStepLR: gamma must be finite and >= 0 (the factor the lr is multiplied by at each milestone), got {}",
      gamma);
  std::sort(milestones_.begin(), milestones_.end());
  initial_step();
}

std::vector<double> MultiStepLR::get_lr() const {
  // PyTorch: lr * gamma ** milestones[last_epoch], milestones a Counter (a repeated milestone
  // decays by gamma^count in one step).
  const auto [lo, hi] = std::equal_range(milestones_.begin(), milestones_.end(), last_epoch_);
  const auto count = hi - lo;
  std::vector<double> out;
  for (const auto& g : optimizer_.param_groups()) {
    const double lr = g.options().get_lr();
    out.push_back(count == 0 ? lr : lr * std::pow(gamma_, static_cast<double>(count)));
  }
  return out;
}

double MultiStepLR::closed_form_lr(size_t group, int64_t epoch) const {
  // PyTorch: base_lr * gamma ** bisect_right(sorted milestones, epoch).
  const auto passed = std::upper_bound(milestones_.begin(), milestones_.end(), epoch) - milestones_.begin();
  return base_lr(group) * std::pow(gamma_, static_cast<double>(passed));
}

LinearLR::LinearLR(Optimizer& optimizer, double start_factor, double end_factor, int64_t total_iters)
    : LRScheduler(optimizer), start_factor_(start_factor), end_factor_(end_factor), total_iters_(total_iters) {
  // PyTorch 1.13 accepts start_factor 0, and its first step() then divides by zero
  // (ZeroDivisionError); later PyTorch refuses it too. It accepts total_iters <= 0, where the
  // closed form divides by zero and the recursive form never reaches end_factor.
  WICK_CHECK(start_factor > 0 && start_factor <= 1,
             "LinearLR: start_factor must be in (0, 1] (the factor the lr starts at), got {}", start_factor);
  WICK_CHECK(end_factor >= 0 && end_factor <= 1,
             "LinearLR: end_factor must be in [0, 1] (the factor the lr ends at), got {}", end_factor);
  WICK_CHECK(total_iters >= 1, "LinearLR: total_iters must be >= 1 (the steps from start_factor to end_factor), got {}",
             total_iters);
  initial_step();
}

std::vector<double> LinearLR::get_lr() const {
  const double span = end_factor_ - start_factor_;
  std::vector<double> out;
  for (const auto& g : optimizer_.param_groups()) {
    const double lr = g.options().get_lr();
    if (last_epoch_ == 0) {
      out.push_back(lr * start_factor_);
    } else if (last_epoch_ > total_iters_) {
      out.push_back(lr);
    } else {
      // The factor of epoch e over that of e - 1. The denominator is total_iters times the factor
      // of e - 1, > 0 for e in [1, total_iters] since start_factor > 0 and end_factor >= 0.
      out.push_back(lr * (1. + span / (static_cast<double>(total_iters_) * start_factor_ +
                                       static_cast<double>(last_epoch_ - 1) * span)));
    }
  }
  return out;
}

double LinearLR::closed_form_lr(size_t group, int64_t epoch) const {
  return base_lr(group) *
         (start_factor_ + (end_factor_ - start_factor_) * static_cast<double>(std::min(total_iters_, epoch)) /
                              static_cast<double>(total_iters_));
}

LambdaSchedulerBase::LambdaSchedulerBase(Optimizer& optimizer, std::vector<LrLambda> lr_lambdas, const char* who)
    : LRScheduler(optimizer), lr_lambdas_(std::move(lr_lambdas)) {
  WICK_CHECK(lr_lambdas_.size() == base_lrs_.size(), "{}: expected one lr_lambda per parameter group ({}), got {}", who,
             base_lrs_.size(), lr_lambdas_.size());
  for (size_t i = 0; i < lr_lambdas_.size(); ++i)
    WICK_CHECK(static_cast<bool>(lr_lambdas_[i]),
               "{}: lr_lambda {} is an empty std::function; pass a function of the epoch", who, i);
}

std::vector<LrLambda> LambdaSchedulerBase::one_per_group(const Optimizer& optimizer, LrLambda lr_lambda,
                                                         const char* who) {
  WICK_CHECK(static_cast<bool>(lr_lambda), "{}: lr_lambda is an empty std::function; pass a function of the epoch",
             who);
  return std::vector<LrLambda>(optimizer.param_groups().size(), std::move(lr_lambda));
}

void LambdaSchedulerBase::check_lambda_count() const {
  WICK_CHECK_STATE(lr_lambdas_.size() == base_lrs_.size(),
                   "{}: the scheduler has {} lr_lambdas but {} parameter groups; make the scheduler after "
                   "adding every group",
                   name(), lr_lambdas_.size(), base_lrs_.size());
}

const LrLambda& LambdaSchedulerBase::lambda_of(size_t group) const {
  WICK_CHECK_INDEX(group < lr_lambdas_.size(), "{}.closed_form_lr: group {} has no lr_lambda (the scheduler has {})",
                   name(), group, lr_lambdas_.size());
  return lr_lambdas_[group];
}

void LambdaSchedulerBase::restart() {
  check_groups("restart");
  step_to(0);
}

LambdaLR::LambdaLR(Optimizer& optimizer, LrLambda lr_lambda)
    : LambdaLR(optimizer, one_per_group(optimizer, std::move(lr_lambda), "LambdaLR")) {}

LambdaLR::LambdaLR(Optimizer& optimizer, std::vector<LrLambda> lr_lambdas)
    : LambdaSchedulerBase(optimizer, std::move(lr_lambdas), "LambdaLR") {
  initial_step();
}

std::vector<double> LambdaLR::get_lr() const {
  check_lambda_count();
  std::vector<double> out;
  for (size_t i = 0; i < lr_lambdas_.size(); ++i) {
    const double factor = lr_lambdas_[i](last_epoch_);
    const double lr = base_lrs_[i] * factor;
    // PyTorch sets whatever the lambda gives; a negative or non-finite lr would only be refused
    // by the optimizer's next step, far from the lambda that made it.
    WICK_CHECK(std::isfinite(factor) && factor >= 0 && std::isfinite(lr),
               "LambdaLR: lr_lambda of group {} returned {} at epoch {}, giving lr {} (base lr {}); the factor "
               "must be finite and >= 0 and the lr finite",
               i, factor, last_epoch_, lr, base_lrs_[i]);
    out.push_back(lr);
  }
  return out;
}

double LambdaLR::closed_form_lr(size_t group, int64_t epoch) const {
  const double base = base_lr(group);
  return base * lambda_of(group)(epoch);
}

MultiplicativeLR::MultiplicativeLR(Optimizer& optimizer, LrLambda lr_lambda)
    : MultiplicativeLR(optimizer, one_per_group(optimizer, std::move(lr_lambda), "MultiplicativeLR")) {}

MultiplicativeLR::MultiplicativeLR(Optimizer& optimizer, std::vector<LrLambda> lr_lambdas)
    : LambdaSchedulerBase(optimizer, std::move(lr_lambdas), "MultiplicativeLR") {
  initial_step();
}

std::vector<double> MultiplicativeLR::get_lr() const {
  check_lambda_count();
  std::vector<double> out;
  const auto& groups = optimizer_.param_groups();
  for (size_t i = 0; i < groups.size(); ++i) {
    const double lr = groups[i].options().get_lr();
    if (last_epoch_ == 0) {  // PyTorch: the groups' lrs, no lambda called
      out.push_back(lr);
      continue;
    }
    const double factor = lr_lambdas_[i](last_epoch_);
    const double next = lr * factor;
    // PyTorch sets whatever the lambda gives; a negative or non-finite lr would only be refused
    // by the optimizer's next step, far from the lambda that made it.
    WICK_CHECK(std::isfinite(factor) && factor >= 0 && std::isfinite(next),
               "MultiplicativeLR: lr_lambda of group {} returned {} at epoch {}, giving lr {} (lr {}); the factor "
               "must be finite and >= 0 and the lr finite",
               i, factor, last_epoch_, next, lr);
    out.push_back(next);
  }
  return out;
}

double MultiplicativeLR::closed_form_lr(size_t group, int64_t epoch) const {
  double lr = base_lr(group);
  const LrLambda& f = lambda_of(group);
  for (int64_t e = 1; e <= epoch; ++e) lr *= f(e);
  return lr;
}

}  // namespace wick::optim
