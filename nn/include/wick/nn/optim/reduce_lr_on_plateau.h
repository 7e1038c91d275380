#pragma once
// ReduceLROnPlateau: PyTorch 1.13's torch.optim.lr_scheduler.ReduceLROnPlateau (LibTorch's
// ReduceLROnPlateauScheduler). It is stepped with a metric (a validation loss, an accuracy) and
// multiplies every group's lr by `factor` once the metric has not improved for more than
// `patience` steps in a row:
//
//   better(a) = a < best * (1 - threshold)   (mode min, threshold_mode rel)
//               a < best - threshold         (mode min, threshold_mode abs)
//               a > best * (1 + threshold)   (mode max, threshold_mode rel)
//               a > best + threshold         (mode max, threshold_mode abs)
//   step(a): last_epoch += 1; if better(a): best = a, num_bad_epochs = 0, else num_bad_epochs += 1
//            in cooldown (cooldown_counter > 0): cooldown_counter -= 1, num_bad_epochs = 0
//            if num_bad_epochs > patience: every group's lr = max(lr * factor, min_lr) unless that
//              lowers it by eps or less; cooldown_counter = cooldown, num_bad_epochs = 0
//
// A NaN metric compares false, so it counts as a bad step (as in PyTorch). In rel mode the
// threshold scales best, so with a negative best a slightly worse metric counts as better
// (best = -1, threshold 0.1, mode min: -0.95 < -0.9); wick keeps PyTorch 1.13's rule.
// Unlike the LRScheduler classes it takes no step at construction (as PyTorch): last_epoch starts
// at 0 and the lrs are untouched until the first step.
#include <cstdint>
#include <string>
#include <vector>

#include "wick/nn/optim/optimizer.h"

namespace wick::optim {

/// ReduceLROnPlateau's options: PyTorch's keyword arguments with their defaults, as enums where
/// PyTorch takes strings ("min"/"max", "rel"/"abs"), so a misspelt mode does not compile.
struct ReduceLROnPlateauOptions {
  enum class SchedulerMode { min, max };
  enum class ThresholdMode { rel, abs };
  /// min: reduce when the metric stops decreasing; max: when it stops increasing.
  WICK_OPTIM_ARG(SchedulerMode, mode) = SchedulerMode::min;
  /// new lr = lr * factor, in [0, 1).
  WICK_OPTIM_ARG(double, factor) = 0.1;
  /// The bad steps in a row that are tolerated; the next one reduces the lr. >= 0.
  WICK_OPTIM_ARG(int64_t, patience) = 10;
  /// How much better than best a metric must be to count as better (finite, >= 0).
  WICK_OPTIM_ARG(double, threshold) = 1e-4;
  WICK_OPTIM_ARG(ThresholdMode, threshold_mode) = ThresholdMode::rel;
  /// Steps after a reduction during which bad steps are not counted. >= 0.
  WICK_OPTIM_ARG(int64_t, cooldown) = 0;
  /// The lowest lr: empty (0 for every group, the default), one value for every group, or one
  /// per group. Finite and >= 0.
  WICK_OPTIM_ARG(std::vector<double>, min_lr);
  /// A reduction by eps or less is skipped (finite, >= 0).
  WICK_OPTIM_ARG(double, eps) = 1e-8;

 public:
  /// One lowest lr for every group (PyTorch's scalar min_lr).
  ReduceLROnPlateauOptions& min_lr(double v) {
    min_lr_ = {v};
    return *this;
  }
};

/// What a checkpoint must hold to resume a ReduceLROnPlateau (with the optimizer's state, which
/// holds the lrs): the counters PyTorch's state_dict() carries besides the options.
struct ReduceLROnPlateauState {
  double best = 0;  ///< the best metric so far (inf in mode min, -inf in mode max, before any)
  int64_t num_bad_epochs = 0;
  int64_t cooldown_counter = 0;
  int64_t last_epoch = 0;
};

class ReduceLROnPlateau {
 public:
  using SchedulerMode = ReduceLROnPlateauOptions::SchedulerMode;
  using ThresholdMode = ReduceLROnPlateauOptions::ThresholdMode;

  /// wick::ValueError naming the option unless factor is in [0, 1), patience and cooldown are
  /// >= 0, threshold, eps and every min_lr are finite and >= 0, and min_lr has 0, 1 or one value
  /// per group.
  ReduceLROnPlateau(Optimizer& optimizer, const ReduceLROnPlateauOptions& options);
  /// LibTorch's positional form (without `verbose`: wick prints nothing); an empty min_lr means 0
  /// for every group. Same checks.
  explicit ReduceLROnPlateau(Optimizer& optimizer, SchedulerMode mode = SchedulerMode::min, double factor = 0.1,
                             int64_t patience = 10, double threshold = 1e-4,
                             ThresholdMode threshold_mode = ThresholdMode::rel, int64_t cooldown = 0,
                             const std::vector<double>& min_lr = {}, double eps = 1e-8);

  /// One step with this epoch's metric (any double; NaN counts as not better), reducing the lrs
  /// when the plateau has lasted more than patience steps. wick::StateError, changing nothing,
  /// when the optimizer's group count differs from the one the scheduler was made for.
  void step(double metric);
  /// The groups' lrs after the last step (at construction: their lrs then; PyTorch has none
  /// before the first step).
  const std::vector<double>& get_last_lr() const { return last_lr_; }
  int64_t last_epoch() const { return last_epoch_; }
  double best() const { return best_; }
  int64_t num_bad_epochs() const { return num_bad_epochs_; }
  int64_t cooldown_counter() const { return cooldown_counter_; }
  bool in_cooldown() const { return cooldown_counter_ > 0; }
  /// The lowest lr of each group.
  const std::vector<double>& min_lrs() const { return min_lrs_; }
  const ReduceLROnPlateauOptions& options() const { return options_; }
  std::string name() const { return "ReduceLROnPlateau"; }

  /// The counters to store in a checkpoint next to the optimizer's state.
  ReduceLROnPlateauState state() const;
  /// Restores a state saved by state(), after the optimizer's state (load_state_dict,
  /// load_checkpoint) restored each group's lr; get_last_lr() becomes the groups' current lrs,
  /// which resume leaves as they are. The next step() continues as the uninterrupted run would.
  /// wick::ValueError, changing nothing, unless best is not NaN, last_epoch >= 0,
  /// num_bad_epochs is in [0, patience] and cooldown_counter in [0, cooldown] (what a step of a
  /// scheduler with these options leaves); wick::StateError when the group count changed.
  void resume(const ReduceLROnPlateauState& state);

 private:
  bool is_better(double a) const;
  void check_groups(const char* op) const;

  Optimizer& optimizer_;
  ReduceLROnPlateauOptions options_;
  std::vector<double> min_lrs_;  // one per group
  double best_;
  int64_t num_bad_epochs_ = 0;
  int64_t cooldown_counter_ = 0;
  int64_t last_epoch_ = 0;
  std::vector<double> last_lr_;
};

/// LibTorch's name.
using ReduceLROnPlateauScheduler = ReduceLROnPlateau;

}  // namespace wick::optim
