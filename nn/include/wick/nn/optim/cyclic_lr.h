#pragma once
// CyclicLR: PyTorch 1.13's torch.optim.lr_scheduler.CyclicLR (cyclical learning rates), stepped
// after every batch. Each group's lr goes from base_lr up to max_lr over step_size_up steps and
// back down over step_size_down steps, the amplitude scaled per cycle or per step:
//
//   cycle = floor(1 + e / (up + down));  x = 1 + e / (up + down) - cycle
//   f = x <= up / (up + down) ? x / ratio : (x - 1) / (ratio - 1)     (ratio = up / (up + down))
//   lr = base_lr + (max_lr - base_lr) * f * scale;   momentum = max_m - (max_m - base_m) * f * scale
//   scale: triangular 1, triangular2 1 / 2^(cycle - 1), exp_range gamma^e, or scale_fn(cycle)
//          (scale_mode cycle) or scale_fn(e) (scale_mode iterations)
//
// Not recursive: the lr of step e comes from the options alone. Construction is step 0 (lr =
// base_lr, momentum = max_momentum).
//
// Momentum (cycle_momentum, the default): each group's "momentum" option (SGD, RMSprop) is set at
// every step, as PyTorch 1.13 sets group['momentum']. Like PyTorch 1.13, CyclicLR refuses an
// optimizer without momentum (Adam, AdamW, Adagrad) unless cycle_momentum is false; later PyTorch
// cycles Adam's beta1 here too, as OneCycleLR does.
//
// Base lrs: the base_lr option (PyTorch's base_lrs); the groups' lrs when the scheduler is made do
// not matter.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "wick/nn/optim/lr_scheduler.h"

namespace wick::optim {

/// CyclicLR's custom amplitude scale: a function of the cycle (1, 2, ...) or of the step, in [0, 1].
using CyclicScaleFn = std::function<double(int64_t)>;

/// CyclicLR's options: PyTorch's keyword arguments with their defaults, enums where PyTorch takes
/// strings. Values given per group (base_lr, max_lr, base_momentum, max_momentum) take one value
/// for every group or one per group.
struct CyclicLROptions {
  enum class Mode { triangular, triangular2, exp_range };
  enum class ScaleMode { cycle, iterations };
  /// base_lr and max_lr, the bounds of the cycle (PyTorch's required arguments).
  CyclicLROptions(double base_lr, double max_lr) : base_lr_{base_lr}, max_lr_{max_lr} {}
  CyclicLROptions(std::vector<double> base_lr, std::vector<double> max_lr)
      : base_lr_(std::move(base_lr)), max_lr_(std::move(max_lr)) {}
  WICK_OPTIM_ARG(std::vector<double>, base_lr);
  WICK_OPTIM_ARG(std::vector<double>, max_lr);
  /// The steps from base_lr up to max_lr (>= 1).
  WICK_OPTIM_ARG(int64_t, step_size_up) = 2000;
  /// The steps back down (>= 0); unset: step_size_up.
  WICK_OPTIM_ARG(std::optional<int64_t>, step_size_down);
  WICK_OPTIM_ARG(Mode, mode) = Mode::triangular;
  /// exp_range's factor per step, in [0, 1].
  WICK_OPTIM_ARG(double, gamma) = 1.0;
  /// A custom scale, in place of mode's (and then scale_mode says what it is a function of).
  WICK_OPTIM_ARG(CyclicScaleFn, scale_fn);
  WICK_OPTIM_ARG(ScaleMode, scale_mode) = ScaleMode::cycle;
  WICK_OPTIM_ARG(bool, cycle_momentum) = true;
  /// The momentum at max_lr.
  WICK_OPTIM_ARG(std::vector<double>, base_momentum) = {0.8};
  /// The momentum at base_lr.
  WICK_OPTIM_ARG(std::vector<double>, max_momentum) = {0.9};

 public:
  CyclicLROptions& base_lr(double v) {
    base_lr_ = {v};
    return *this;
  }
  CyclicLROptions& max_lr(double v) {
    max_lr_ = {v};
    return *this;
  }
  CyclicLROptions& base_momentum(double v) {
    base_momentum_ = {v};
    return *this;
  }
  CyclicLROptions& max_momentum(double v) {
    max_momentum_ = {v};
    return *this;
  }
};

class CyclicLR : public LRScheduler {
 public:
  using Mode = CyclicLROptions::Mode;
  using ScaleMode = CyclicLROptions::ScaleMode;
  /// wick::ValueError naming the option, changing nothing, unless base_lr and max_lr are finite
  /// and >= 0, step_size_up >= 1, step_size_down >= 0, gamma in [0, 1] (for exp_range without a
  /// scale_fn), and, with cycle_momentum, the optimizer has a momentum option and the momenta are
  /// finite and >= 0.
  CyclicLR(Optimizer& optimizer, const CyclicLROptions& options);
  std::string name() const override { return "CyclicLR"; }
  /// The next step's lrs (and momenta). wick::ValueError, changing nothing, when a scale_fn
  /// returns a scale that is not finite or gives an lr or momentum that is negative or not finite
  /// (PyTorch sets them; the optimizer's step would refuse them); an exception scale_fn throws
  /// propagates and the step changes nothing either.
  void step() override;
  /// The lr of step `epoch` (what step() sets), unchecked.
  double closed_form_lr(size_t group, int64_t epoch) const override;
  /// The momentum step `epoch` sets, unchecked. wick::StateError without cycle_momentum.
  double closed_form_momentum(size_t group, int64_t epoch) const;
  const std::vector<double>& max_lrs() const { return max_lrs_; }
  const CyclicLROptions& options() const { return options_; }

 protected:
  std::vector<double> get_lr() const override;
  /// PyTorch's step(0) (its CyclicLR has no closed form): the lrs and momenta of step 0.
  void restart() override;
  /// The base lrs come from the options.
  void take_initial_lrs(const std::vector<double>&) override {}

 private:
  /// The phase factor f and the amplitude scale of step `epoch`.
  void factors(int64_t epoch, double& f, double& scale) const;
  void advance_to(int64_t epoch, const char* op);

  CyclicLROptions options_;
  double total_size_, step_ratio_;
  std::vector<double> max_lrs_;
  std::vector<double> base_momenta_, max_momenta_;  // empty without cycle_momentum
};

}  // namespace wick::optim
