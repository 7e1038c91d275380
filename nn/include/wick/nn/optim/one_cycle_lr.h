#pragma once
// OneCycleLR: PyTorch 1.13's torch.optim.lr_scheduler.OneCycleLR (the 1cycle policy), stepped
// after every batch. Each group's lr rises from initial_lr = max_lr / div_factor to max_lr over
// the first pct_start of total_steps, then falls to min_lr = initial_lr / final_div_factor; with
// three_phase it falls back to initial_lr over as many steps as it rose, then to min_lr. Momentum
// moves the other way, between max_momentum and base_momentum. Each phase anneals by cos or
// linearly:
//
//   phases (end step, lr from -> to, momentum from -> to):
//     two:   pct_start * total_steps - 1      initial -> max   max_m -> base_m
//            total_steps - 1                  max -> min       base_m -> max_m
//     three: pct_start * total_steps - 1      initial -> max   max_m -> base_m
//            2 * pct_start * total_steps - 2  max -> initial   base_m -> max_m
//            total_steps - 1                  initial -> min   max_m -> max_m
//   at step s, the first phase whose end is >= s (or the last): pct = (s - start) / (end - start),
//   start being the previous phase's end (0 for the first);
//   cos: to + (from - to) / 2 * (cos(pi * pct) + 1);  linear: (to - from) * pct + from
//
// Not recursive: the lr of step s comes from the options alone. As in PyTorch, construction is step
// 0 and total_steps more steps are allowed: the last one (step total_steps, whose lr no optimizer
// step uses when the scheduler is stepped after each batch) extrapolates past min_lr, below 0 when
// annealing linearly (PyTorch's lr there too; an optimizer step refuses it). One more step is a
// wick::StateError (PyTorch: ValueError).
//
// Momentum (cycle_momentum, the default): each group's "momentum" option (SGD, RMSprop) or "beta1"
// (Adam, AdamW: PyTorch's betas[0]) is set at every step, as PyTorch sets group['momentum'] or
// group['betas']. An optimizer with neither (Adagrad) needs cycle_momentum(false).
//
// Base lrs: the initial lrs max_lr / div_factor (PyTorch's base_lrs, its groups' initial_lr); the
// groups' lrs when the scheduler is made do not matter.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "wick/nn/optim/lr_scheduler.h"

namespace wick::optim {

/// OneCycleLR's options: PyTorch's keyword arguments with their defaults, enums where PyTorch takes
/// strings. Values given per group (max_lr, base_momentum, max_momentum) take one value for every
/// group or one per group.
struct OneCycleLROptions {
  enum class AnnealStrategy { cos, linear };
  /// max_lr: the peak lr (PyTorch's required argument).
  OneCycleLROptions(double max_lr) : max_lr_{max_lr} {}                          // NOLINT(google-explicit-constructor)
  OneCycleLROptions(std::vector<double> max_lr) : max_lr_(std::move(max_lr)) {}  // NOLINT
  WICK_OPTIM_ARG(std::vector<double>, max_lr);
  /// The steps of the cycle; when unset, epochs * steps_per_epoch (both then needed).
  WICK_OPTIM_ARG(std::optional<int64_t>, total_steps);
  WICK_OPTIM_ARG(std::optional<int64_t>, epochs);
  WICK_OPTIM_ARG(std::optional<int64_t>, steps_per_epoch);
  /// The part of the cycle spent raising the lr, in [0, 1] (in [0, 0.5] with three_phase).
  WICK_OPTIM_ARG(double, pct_start) = 0.3;
  WICK_OPTIM_ARG(AnnealStrategy, anneal_strategy) = AnnealStrategy::cos;
  WICK_OPTIM_ARG(bool, cycle_momentum) = true;
  /// The momentum at the peak lr.
  WICK_OPTIM_ARG(std::vector<double>, base_momentum) = {0.85};
  /// The momentum at the start and the end.
  WICK_OPTIM_ARG(std::vector<double>, max_momentum) = {0.95};
  /// initial_lr = max_lr / div_factor.
  WICK_OPTIM_ARG(double, div_factor) = 25;
  /// min_lr = initial_lr / final_div_factor.
  WICK_OPTIM_ARG(double, final_div_factor) = 1e4;
  WICK_OPTIM_ARG(bool, three_phase) = false;

 public:
  OneCycleLROptions& max_lr(double v) {
    max_lr_ = {v};
    return *this;
  }
  OneCycleLROptions& base_momentum(double v) {
    base_momentum_ = {v};
    return *this;
  }
  OneCycleLROptions& max_momentum(double v) {
    max_momentum_ = {v};
    return *this;
  }
};

class OneCycleLR : public LRScheduler {
 public:
  using AnnealStrategy = OneCycleLROptions::AnnealStrategy;
  /// wick::ValueError naming the option, changing nothing, unless: total_steps >= 1, or (when it
  /// is unset) epochs >= 1 and steps_per_epoch >= 1 with a product that fits int64; pct_start in
  /// [0, 1] ([0, 0.5] with three_phase: the first two phases take 2 * pct_start of the steps), and
  /// no phase that a step reaches has zero length (pct_start * total_steps = 1, or pct_start = 1
  /// without three_phase: PyTorch divides by zero there); max_lr finite and >= 0; div_factor and
  /// final_div_factor finite and > 0; with cycle_momentum, an optimizer with momentum or beta1 and
  /// momenta finite and >= 0 (and < 1 for beta1).
  OneCycleLR(Optimizer& optimizer, const OneCycleLROptions& options);
  std::string name() const override { return "OneCycleLR"; }
  /// The next step's lrs (and momenta). wick::StateError, changing nothing, past total_steps.
  void step() override;
  /// The lr of step `epoch` (what step() sets). wick::ValueError for an epoch outside
  /// [0, total_steps].
  double closed_form_lr(size_t group, int64_t epoch) const override;
  /// The momentum (or beta1) step `epoch` sets. wick::ValueError as closed_form_lr;
  /// wick::StateError without cycle_momentum.
  double closed_form_momentum(size_t group, int64_t epoch) const;
  /// As LRScheduler::resume; also wick::ValueError unless last_epoch <= total_steps and base_lrs
  /// are this scheduler's (max_lr / div_factor: they come from the options).
  void resume(int64_t last_epoch, const std::vector<double>& base_lrs) override;
  int64_t total_steps() const { return total_steps_; }
  const std::vector<double>& max_lrs() const { return max_lrs_; }
  const std::vector<double>& min_lrs() const { return min_lrs_; }
  const OneCycleLROptions& options() const { return options_; }

 protected:
  std::vector<double> get_lr() const override;
  /// PyTorch's step(0) (its OneCycleLR has no closed form): the lrs and momenta of step 0.
  void restart() override;
  /// The base lrs come from the options.
  void take_initial_lrs(const std::vector<double>&) override {}

 private:
  enum Point { kInitial, kMax, kMin };  // the lr a phase starts or ends at
  struct Phase {
    double end_step;
    Point start_lr, end_lr;
    bool momentum_from_max, momentum_to_max;
  };
  /// The phase of step `epoch` and its pct (PyTorch's loop).
  const Phase& phase_at(int64_t epoch, double& pct) const;
  double anneal(double start, double end, double pct) const;
  double lr_of(size_t group, Point p) const;
  void check_epoch(int64_t epoch, const char* op) const;
  void advance_to(int64_t epoch, const char* op);

  OneCycleLROptions options_;
  int64_t total_steps_ = 0;
  std::vector<Phase> phases_;
  std::vector<double> max_lrs_, min_lrs_;
  std::vector<double> base_momenta_, max_momenta_;  // empty without cycle_momentum
  std::string momentum_option_;                     // "momentum" or "beta1"
};

}  // namespace wick::optim
