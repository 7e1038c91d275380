// OneCycleLR: PyTorch 1.13's constructor, phases and get_lr, in its order of operations.
#include "wick/nn/optim/one_cycle_lr.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "scheduler_options.h"
#include "wick/core/checked_math.h"
#include "wick/core/error.h"

namespace wick::optim {

namespace {

int64_t checked_total_steps(const OneCycleLROptions& o) {
  if (o.total_steps()) {
    WICK_CHECK(*o.total_steps() >= 1, "OneCycleLR: total_steps must be >= 1 (the steps of the cycle), got {}",
               *o.total_steps());
    return *o.total_steps();
  }
  WICK_CHECK(o.epochs() && o.steps_per_epoch(),
             "OneCycleLR: needs total_steps, or epochs and steps_per_epoch (total_steps = epochs * steps_per_epoch)");
  WICK_CHECK(*o.epochs() >= 1, "OneCycleLR: epochs must be >= 1, got {}", *o.epochs());
  WICK_CHECK(*o.steps_per_epoch() >= 1, "OneCycleLR: steps_per_epoch must be >= 1, got {}", *o.steps_per_epoch());
  int64_t total = 0;
  WICK_CHECK(!mul_overflow(*o.epochs(), *o.steps_per_epoch(), &total),
             "OneCycleLR: epochs {} * steps_per_epoch {} overflows int64", *o.epochs(), *o.steps_per_epoch());
  return total;
}

}  // namespace

OneCycleLR::OneCycleLR(Optimizer& optimizer, const OneCycleLROptions& options)
    : LRScheduler(optimizer), options_(options), total_steps_(checked_total_steps(options)) {
  const double p = options.pct_start(), T = static_cast<double>(total_steps_);
  WICK_CHECK(p >= 0 && p <= 1, "OneCycleLR: pct_start must be in [0, 1] (the part of the cycle raising the lr), got {}",
             p);
  WICK_CHECK(!options.three_phase() || p <= 0.5,
             "OneCycleLR: with three_phase, pct_start must be in [0, 0.5] (the lr rises over pct_start of the steps "
             "and falls back over as many), got {}",
             p);
  // PyTorch's phases: end steps p * T - 1 (and 2 p T - 2), T - 1.
  if (options.three_phase())
    phases_ = {{p * T - 1, kInitial, kMax, true, false},
               {2 * p * T - 2, kMax, kInitial, false, true},
               {T - 1, kInitial, kMin, true, true}};
  else
    phases_ = {{p * T - 1, kInitial, kMax, true, false}, {T - 1, kMax, kMin, false, true}};
  // A phase that some step in [0, T] reaches must have a length: PyTorch divides by it.
  const char* phase_names[] = {"warm-up", options.three_phase() ? "second" : "annealing", "annealing"};
  for (size_t i = 0; i < phases_.size(); ++i) {
    const double start = i == 0 ? 0.0 : phases_[i - 1].end_step;
    double lo = 0;  // the first step past every earlier phase's end
    for (size_t j = 0; j < i; ++j) lo = std::max(lo, std::floor(phases_[j].end_step) + 1);
    const double hi = i + 1 == phases_.size() ? T : std::min(T, std::floor(phases_[i].end_step));
    WICK_CHECK(lo > hi || phases_[i].end_step > start,
               "OneCycleLR: pct_start {} with total_steps {} leaves the {} phase no steps (it would end at step {} "
               "and start at {}; PyTorch divides by zero there); choose another pct_start",
               p, total_steps_, phase_names[i], phases_[i].end_step, start);
  }
  const size_t groups = optimizer.param_groups().size();
  max_lrs_ = detail::per_group(options.max_lr(), groups, "OneCycleLR", "max_lr");
  WICK_CHECK(std::isfinite(options.div_factor()) && options.div_factor() > 0,
             "OneCycleLR: div_factor must be finite and > 0 (initial_lr = max_lr / div_factor), got {}",
             options.div_factor());
  WICK_CHECK(std::isfinite(options.final_div_factor()) && options.final_div_factor() > 0,
             "OneCycleLR: final_div_factor must be finite and > 0 (min_lr = initial_lr / final_div_factor), got {}",
             options.final_div_factor());
  if (options.cycle_momentum()) {
    // PyTorch: betas[0] where the optimizer has betas, else momentum.
    if (detail::has_option(optimizer, "beta1"))
      momentum_option_ = "beta1";
    else if (detail::has_option(optimizer, "momentum"))
      momentum_option_ = "momentum";
    WICK_CHECK(!momentum_option_.empty(),
               "OneCycleLR: cycle_momentum needs an optimizer with momentum or betas (SGD, RMSprop, Adam, AdamW); {} "
               "has neither: pass cycle_momentum(false)",
               optimizer.name());
    const bool beta1 = momentum_option_ == "beta1";
    base_momenta_ = detail::per_group(options.base_momentum(), groups, "OneCycleLR", "base_momentum", beta1);
    max_momenta_ = detail::per_group(options.max_momentum(), groups, "OneCycleLR", "max_momentum", beta1);
  }
  base_lrs_.clear();
  for (size_t i = 0; i < groups; ++i) {
    base_lrs_.push_back(max_lrs_[i] / options.div_factor());
    min_lrs_.push_back(base_lrs_[i] / options.final_div_factor());
  }
  initial_step();
}

double OneCycleLR::anneal(double start, double end, double pct) const {
  if (options_.anneal_strategy() == AnnealStrategy::cos) {
    const double cos_out = std::cos(std::numbers::pi * pct) + 1;
    return end + (start - end) / 2.0 * cos_out;
  }
  return (end - start) * pct + start;
}

const OneCycleLR::Phase& OneCycleLR::phase_at(int64_t epoch, double& pct) const {
  const double s = static_cast<double>(epoch);
  double start = 0;
  for (size_t i = 0; i < phases_.size(); ++i) {
    const double end = phases_[i].end_step;
    if (s <= end || i + 1 == phases_.size()) {
      pct = (s - start) / (end - start);
      return phases_[i];
    }
    start = end;
  }
  return phases_.back();  // not reached: the last phase is always taken
}

double OneCycleLR::lr_of(size_t group, Point p) const {
  return p == kInitial ? base_lrs_[group] : p == kMax ? max_lrs_[group] : min_lrs_[group];
}

void OneCycleLR::check_epoch(int64_t epoch, const char* op) const {
  WICK_CHECK(epoch >= 0 && epoch <= total_steps_, "OneCycleLR.{}: epoch {} is outside the cycle's steps [0, {}]", op,
             epoch, total_steps_);
}

double OneCycleLR::closed_form_lr(size_t group, int64_t epoch) const {
  (void)base_lr(group);  // IndexError for a group the scheduler does not have
  check_epoch(epoch, "closed_form_lr");
  double pct = 0;
  const Phase& ph = phase_at(epoch, pct);
  return anneal(lr_of(group, ph.start_lr), lr_of(group, ph.end_lr), pct);
}

double OneCycleLR::closed_form_momentum(size_t group, int64_t epoch) const {
  WICK_CHECK_STATE(options_.cycle_momentum(), "OneCycleLR.closed_form_momentum: the scheduler does not cycle momentum");
  (void)base_lr(group);
  check_epoch(epoch, "closed_form_momentum");
  double pct = 0;
  const Phase& ph = phase_at(epoch, pct);
  return anneal(ph.momentum_from_max ? max_momenta_[group] : base_momenta_[group],
                ph.momentum_to_max ? max_momenta_[group] : base_momenta_[group], pct);
}

std::vector<double> OneCycleLR::get_lr() const {
  std::vector<double> out;
  for (size_t i = 0; i < base_lrs_.size(); ++i) out.push_back(closed_form_lr(i, last_epoch_));
  return out;
}

void OneCycleLR::advance_to(int64_t epoch, const char* op) {
  check_groups(op);
  WICK_CHECK_STATE(epoch <= total_steps_,
                   "OneCycleLR.{}: the cycle has {} steps after construction and they have all been taken; make the "
                   "scheduler with a larger total_steps (or epochs * steps_per_epoch) for a longer run",
                   op, total_steps_);
  std::vector<double> lrs;
  for (size_t i = 0; i < base_lrs_.size(); ++i) lrs.push_back(closed_form_lr(i, epoch));
  if (options_.cycle_momentum()) {
    std::vector<double> momenta;
    for (size_t i = 0; i < base_lrs_.size(); ++i) momenta.push_back(closed_form_momentum(i, epoch));
    detail::set_group_option(optimizer_, momentum_option_, momenta,
                             fmt::format("OneCycleLR.{} to epoch {}", op, epoch));
  }
  commit(epoch, std::move(lrs));
}

void OneCycleLR::step() { advance_to(last_epoch_ + 1, "step"); }

void OneCycleLR::restart() { advance_to(0, "restart"); }

void OneCycleLR::resume(int64_t last_epoch, const std::vector<double>& base_lrs) {
  check_resume(last_epoch, base_lrs);
  WICK_CHECK(last_epoch <= total_steps_, "OneCycleLR.resume: last_epoch {} is past total_steps {}", last_epoch,
             total_steps_);
  WICK_CHECK(base_lrs == base_lrs_,
             "OneCycleLR.resume: the base lrs [{}] differ from this scheduler's [{}] (max_lr / div_factor); make the "
             "scheduler with the saved run's options",
             fmt::join(base_lrs, ", "), fmt::join(base_lrs_, ", "));
  LRScheduler::resume(last_epoch, base_lrs);
}

}  // namespace wick::optim
