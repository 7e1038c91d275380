#pragma once
// Learning-rate schedulers, as PyTorch 1.13's torch.optim.lr_scheduler: StepLR,
// CosineAnnealingLR, ExponentialLR, MultiStepLR, LinearLR, LambdaLR, MultiplicativeLR, ConstantLR
// and PolynomialLR (below, on the base class LRScheduler; LambdaLR and MultiplicativeLR on
// LambdaSchedulerBase, wick's), and ReduceLROnPlateau
// (reduce_lr_on_plateau.h, included here: it is stepped with a metric and is no LRScheduler, as in
// PyTorch). More LRSchedulers have headers of their own: SequentialLR (sequential_lr.h),
// ChainedScheduler (chained_scheduler.h), CosineAnnealingWarmRestarts (cosine_warm_restarts.h), OneCycleLR
// (one_cycle_lr.h) and CyclicLR (cyclic_lr.h); optim.h includes them all. See docs/training.md.
//
// A scheduler remembers each group's base lr (its lr when the scheduler was made) and an epoch
// counter last_epoch; construction counts as the first step (last_epoch = 0, lrs unchanged).
// Each step() advances last_epoch and writes the new lr into every group with PyTorch's
// recursive ("chainable") formula; closed_form_lr() gives the closed form for comparison. The
// recursive and the closed form can differ in the last bit, so a resumed run continues from the
// lrs its checkpoint restored (resume), never from the closed form.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "wick/nn/optim/optimizer.h"
#include "wick/nn/optim/reduce_lr_on_plateau.h"

namespace wick::optim {

class LRScheduler {
 public:
  virtual ~LRScheduler() = default;
  /// Advances one epoch and sets every group's lr. wick::StateError, changing nothing, when the
  /// optimizer's group count is not the one the scheduler was made for.
  virtual void step();
  /// The lrs set by the last step (one per group).
  const std::vector<double>& get_last_lr() const { return last_lr_; }
  int64_t last_epoch() const { return last_epoch_; }
  const std::vector<double>& base_lrs() const { return base_lrs_; }
  /// "StepLR", "CosineAnnealingLR", ...: the scheduler's name in messages.
  virtual std::string name() const = 0;
  /// The lr of group `group` at epoch `epoch` by the closed form (for comparison: step() follows
  /// the recursive form, which may differ in the last bit). wick::IndexError for a group the
  /// scheduler does not have.
  virtual double closed_form_lr(size_t group, int64_t epoch) const = 0;
  /// Restores a scheduler saved at `last_epoch` with the base lrs it had, after the optimizer's
  /// state (load_state_dict, load_checkpoint) restored each group's lr: sets last_epoch, the base
  /// lrs and get_last_lr() (the groups' current lrs) and leaves the groups' lrs as they are, as
  /// PyTorch's scheduler.load_state_dict next to optimizer.load_state_dict. The next step()
  /// continues bit for bit as the uninterrupted run would. wick::ValueError, changing nothing,
  /// unless there is one finite base lr >= 0 per group and last_epoch >= 0 (and what a subclass
  /// adds: OneCycleLR's last_epoch <= total_steps, ...).
  virtual void resume(int64_t last_epoch, const std::vector<double>& base_lrs);

 protected:
  explicit LRScheduler(Optimizer& optimizer);
  /// Called by subclasses' constructors: the initial step (last_epoch 0).
  void initial_step();
  /// The new lrs for last_epoch_ (already advanced), from the groups' current lrs.
  virtual std::vector<double> get_lr() const = 0;
  /// PyTorch's step(0), which SequentialLR takes at a milestone: last_epoch 0 and every group's lr
  /// by the closed form at epoch 0 (PyTorch's _get_closed_form_lr; the schedulers whose PyTorch
  /// class has none override it). StateError, changing nothing, when the group count changed.
  virtual void restart();
  /// What SequentialLR does to the schedulers it is given: PyTorch's schedulers take each group's
  /// initial_lr (its lr when the first scheduler was made) as their base lr, so the base class takes
  /// `lrs`; CyclicLR and OneCycleLR, whose base lrs come from their options, keep theirs.
  virtual void take_initial_lrs(const std::vector<double>& lrs) { base_lrs_ = lrs; }
  /// wick::StateError naming the scheduler and `op` unless the optimizer has one group per base lr.
  void check_groups(const char* op) const;
  /// resume()'s checks of its arguments (wick::ValueError).
  void check_resume(int64_t last_epoch, const std::vector<double>& base_lrs) const;
  /// Moves to `epoch` by get_lr() and commits; when get_lr() throws, last_epoch_ is restored and
  /// nothing changes. step() is check_groups() then step_to(last_epoch_ + 1).
  void step_to(int64_t epoch);
  /// Ends a step: last_epoch_ = epoch, every group's lr = lrs[group], get_last_lr() = lrs.
  void commit(int64_t epoch, std::vector<double> lrs);
  /// base_lrs_[group] for closed_form_lr; wick::IndexError naming the scheduler when out of range.
  double base_lr(size_t group) const;
  Optimizer& optimizer_;
  std::vector<double> base_lrs_;
  int64_t last_epoch_ = -1;
  std::vector<double> last_lr_;

 private:
  friend class SequentialLR;      // restarts the schedulers it holds and sets their epochs, as PyTorch's
  friend class ChainedScheduler;  // checks that the schedulers it holds share its optimizer
};

/// lr = base_lr * gamma^(epoch / step_size) (integer division): every step_size epochs the lr is
/// multiplied by gamma.
class StepLR : public LRScheduler {
 public:
  /// wick::ValueError unless step_size > 0 and gamma is finite and >= 0.
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);
  std::string name() const override { return "StepLR"; }
  double closed_form_lr(size_t group, int64_t epoch) const override;

 protected:
  std::vector<double> get_lr() const override;

 private:
  int64_t step_size_;
  double gamma_;
};

/// lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2, followed recursively
/// as PyTorch (so it keeps oscillating past T_max).
class CosineAnnealingLR : public LRScheduler {
 public:
  /// wick::ValueError unless T_max > 0 and eta_min is finite and >= 0.
  CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0);
  std::string name() const override { return "CosineAnnealingLR"; }
  double closed_form_lr(size_t group, int64_t epoch) const override;

 protected:
  std::vector<double> get_lr() const override;

 private:
  int64_t t_max_;
  double eta_min_;
};

/// lr = base_lr * gamma^epoch, followed recursively as PyTorch: every step multiplies the lr by
/// gamma.
class ExponentialLR : public LRScheduler {
 public:
  /// wick::ValueError unless gamma is finite and >= 0.
  ExponentialLR(Optimizer& optimizer, double gamma);
  std::string name() const override { return "ExponentialLR"; }
  double closed_form_lr(size_t group, int64_t epoch) const override;

 protected:
  std::vector<double> get_lr() const override;

 private:
  double gamma_;
};

/// lr = base_lr * gamma^(the number of milestones <= epoch): the step to each milestone multiplies
/// the lr by gamma, and by gamma^k for a milestone listed k times (PyTorch counts them).
class MultiStepLR : public LRScheduler {
 public:
  /// Milestones in any order, repeats allowed (as PyTorch). wick::ValueError for a negative
  /// milestone or a gamma that is negative or not finite.
  MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma = 0.1);
  std::string name() const override { return "MultiStepLR"; }
  double closed_form_lr(size_t group, int64_t epoch) const override;
  /// The milestones, sorted (repeats kept).
  const std::vector<int64_t>& milestones() const { return milestones_; }

 protected:
  std::vector<double> get_lr() const override;

 private:
  std::vector<int64_t> milestones_;  // sorted
  double gamma_;
};

/// lr = base_lr * (start_factor + (end_factor - start_factor) * min(epoch, total_iters) /
/// total_iters), followed recursively as PyTorch: a linear warm-up (or decay) over total_iters
/// steps, then constant.
class LinearLR : public LRScheduler {
 public:
  /// wick::ValueError unless start_factor is in (0, 1], end_factor in [0, 1] and
  /// total_iters >= 1.
  LinearLR(Optimizer& optimizer, double start_factor = 1.0 / 3, double end_factor = 1.0, int64_t total_iters = 5);
  std::string name() const override { return "LinearLR"; }
  double closed_form_lr(size_t group, int64_t epoch) const override;

 protected:
  std::vector<double> get_lr() const override;

 private:
  double start_factor_;
  double end_factor_;
  int64_t total_iters_;
};

/// lr = base_lr * factor for epochs 0 .. total_iters - 1, then base_lr, followed recursively as
/// PyTorch (the step to total_iters multiplies the lr by 1 / factor).
class ConstantLR : public LRScheduler {
 public:
  /// wick::ValueError unless factor is in (0, 1] and total_iters >= 1.
  explicit ConstantLR(Optimizer& optimizer, double factor = 1.0 / 3, int64_t total_iters = 5);
  std::string name() const override { return "ConstantLR"; }
  double closed_form_lr(size_t group, int64_t epoch) const override;

 protected:
  std::vector<double> get_lr() const override;

 private:
  double factor_;
  int64_t total_iters_;
};

/// lr = base_lr * (1 - min(epoch, total_iters) / total_iters)^power, followed recursively as
/// PyTorch: a polynomial decay to 0 over total_iters steps, then 0.
class PolynomialLR : public LRScheduler {
 public:
  /// wick::ValueError unless total_iters >= 1 and power is finite and >= 0.
  explicit PolynomialLR(Optimizer& optimizer, int64_t total_iters = 5, double power = 1.0);
  std::string name() const override { return "PolynomialLR"; }
  double closed_form_lr(size_t group, int64_t epoch) const override;

 protected:
  std::vector<double> get_lr() const override;

 private:
  int64_t total_iters_;
  double power_;
};

/// A function of the epoch giving the factor LambdaLR multiplies the base lr by.
using LrLambda = std::function<double(int64_t epoch)>;

/// What LambdaLR and MultiplicativeLR share: one lambda per group, checked when the scheduler is
/// made, and PyTorch's step(0) for a SequentialLR milestone. wick's, not PyTorch's (whose two
/// classes repeat this code): make a LambdaLR or a MultiplicativeLR. `name()` in its messages is
/// the scheduler's.
class LambdaSchedulerBase : public LRScheduler {
 protected:
  /// One lambda per group, in order. wick::ValueError naming `who` unless there is one non-empty
  /// lambda per group.
  LambdaSchedulerBase(Optimizer& optimizer, std::vector<LrLambda> lr_lambdas, const char* who);
  /// `lr_lambda` for each group of `optimizer`. wick::ValueError naming `who` when it is empty.
  static std::vector<LrLambda> one_per_group(const Optimizer& optimizer, LrLambda lr_lambda, const char* who);
  /// wick::StateError, for get_lr(), unless there is one lambda per base lr (resume() may have
  /// taken the base lrs of a group added after construction).
  void check_lambda_count() const;
  /// The lambda of `group`, for closed_form_lr; wick::IndexError naming the scheduler when the
  /// group has none (after base_lr(group)'s own check).
  const LrLambda& lambda_of(size_t group) const;
  /// PyTorch's LambdaLR and MultiplicativeLR have no closed form: their step(0) is a step to epoch
  /// 0 (get_lr() there: LambdaLR calls the lambdas, checked; MultiplicativeLR keeps the lrs).
  void restart() override;
  std::vector<LrLambda> lr_lambdas_;  // one per group
};

/// lr = base_lr * lr_lambda(epoch), one lambda for every group or one per group (not recursive:
/// the closed form is the schedule). The constructor's initial step calls each lambda with
/// epoch 0.
class LambdaLR : public LambdaSchedulerBase {
 public:
  /// One lambda for every group. wick::ValueError for an empty std::function.
  LambdaLR(Optimizer& optimizer, LrLambda lr_lambda);
  /// One lambda per group, in order. wick::ValueError unless there is one non-empty lambda per
  /// group.
  LambdaLR(Optimizer& optimizer, std::vector<LrLambda> lr_lambdas);
  std::string name() const override { return "LambdaLR"; }
  /// base_lr * lr_lambda(epoch), unchecked (for comparison).
  double closed_form_lr(size_t group, int64_t epoch) const override;

 protected:
  /// wick::ValueError, and the step changes nothing, when a lambda returns a factor that is
  /// negative or not finite (or the lr overflows); an exception a lambda throws propagates, and
  /// the step changes nothing either.
  std::vector<double> get_lr() const override;
};

/// lr = lr * lr_lambda(epoch) at every step (PyTorch's MultiplicativeLR: recursive, the factor of
/// each epoch multiplies the group's current lr), one lambda for every group or one per group. The
/// constructor's initial step calls no lambda.
class MultiplicativeLR : public LambdaSchedulerBase {
 public:
  /// One lambda for every group. wick::ValueError for an empty std::function.
  MultiplicativeLR(Optimizer& optimizer, LrLambda lr_lambda);
  /// One lambda per group, in order. wick::ValueError unless there is one non-empty lambda per
  /// group.
  MultiplicativeLR(Optimizer& optimizer, std::vector<LrLambda> lr_lambdas);
  std::string name() const override { return "MultiplicativeLR"; }
  /// base_lr * lr_lambda(1) * ... * lr_lambda(epoch), in that order (the recursive form's
  /// products), unchecked (for comparison).
  double closed_form_lr(size_t group, int64_t epoch) const override;

 protected:
  /// wick::ValueError, and the step changes nothing, when a lambda returns a factor that is
  /// negative or not finite (or the lr overflows); an exception a lambda throws propagates, and
  /// the step changes nothing either.
  std::vector<double> get_lr() const override;
};

}  // namespace wick::optim
