#pragma once
// SequentialLR: PyTorch 1.13's torch.optim.lr_scheduler.SequentialLR. It holds schedulers made for
// one optimizer and milestones between them: scheduler 0 runs until the first milestone, scheduler
// i from milestone i - 1 on. At construction it puts every group back at its initial lr and gives
// scheduler 0 its initial step again; at milestone m it takes scheduler i's PyTorch step(0) (its
// epoch becomes 0 and its lrs those of its closed form at epoch 0: ExponentialLR and StepLR start
// again from the base lr, LinearLR from base_lr * start_factor), and between milestones it steps the
// current scheduler.
//
//   SequentialLR sched(opt, {std::make_shared<LinearLR>(opt, 0.1, 1.0, 5),
//                            std::make_shared<CosineAnnealingLR>(opt, 95)}, {5});
//
// Base lrs: PyTorch's schedulers all take each group's initial_lr, its lr when the first
// scheduler on the optimizer was made, where a wick scheduler takes the groups' lrs when it is made
// (so one made after a LinearLR starts from the warm-up's first lr). SequentialLR gives every
// scheduler it holds the base lrs of the first (CyclicLR and OneCycleLR keep theirs, which come
// from their options, as in PyTorch), which are its own base_lrs().
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "wick/nn/optim/lr_scheduler.h"

namespace wick::optim {

class SequentialLR : public LRScheduler {
 public:
  /// wick::ValueError, changing nothing, unless there is at least one scheduler, every scheduler
  /// is non-null, distinct, no SequentialLR and made for `optimizer`, and the milestones, one
  /// fewer than the schedulers, are >= 1 and strictly increasing (PyTorch checks only the count;
  /// an unsorted list picks the wrong scheduler); wick::StateError when a scheduler was made for
  /// another group count.
  SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers,
               std::vector<int64_t> milestones);
  std::string name() const override { return "SequentialLR"; }
  /// The next epoch: the step(0) of the scheduler whose milestone it is, or a step of the current
  /// one. An error the scheduler raises propagates, and this scheduler's epoch does not move.
  void step() override;
  /// The closed form of the scheduler in charge at `epoch`, at its own epoch (epoch minus its
  /// milestone).
  double closed_form_lr(size_t group, int64_t epoch) const override;
  /// As LRScheduler::resume; then every scheduler takes `base_lrs` as its initial lrs (as the
  /// constructor gives them the first one's) and the one in charge at last_epoch resumes at its
  /// own epoch with its base lrs. wick::ValueError, changing nothing, as LRScheduler::resume and
  /// as that scheduler's resume.
  void resume(int64_t last_epoch, const std::vector<double>& base_lrs) override;
  const std::vector<std::shared_ptr<LRScheduler>>& schedulers() const { return schedulers_; }
  const std::vector<int64_t>& milestones() const { return milestones_; }

 protected:
  /// The last lrs (step() is overridden and never calls it).
  std::vector<double> get_lr() const override { return last_lr_; }

 private:
  /// The index of the scheduler in charge at `epoch` (PyTorch's bisect_right).
  size_t index_at(int64_t epoch) const;

  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
  std::vector<int64_t> milestones_;
};

}  // namespace wick::optim
