#pragma once
// ChainedScheduler: PyTorch 1.13's torch.optim.lr_scheduler.ChainedScheduler. It holds schedulers
// made for one optimizer and steps each of them, in order, at every step(), so that their changes
// to the lrs compose (the recursive schedulers multiply: ConstantLR's warm-up times ExponentialLR's
// decay):
//
//   ChainedScheduler sched({std::make_shared<ConstantLR>(opt, 0.1, 2), std::make_shared<ExponentialLR>(opt, 0.9)});
//
// As PyTorch's, it takes no step at construction (the schedulers took theirs), leaves the
// schedulers' base lrs as they are and has no closed form; get_last_lr() holds the groups' lrs
// after the last scheduler's step. wick counts its steps in last_epoch (PyTorch keeps none).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "wick/nn/optim/lr_scheduler.h"

namespace wick::optim {

class ChainedScheduler : public LRScheduler {
 public:
  /// wick::ValueError, changing nothing, unless there is at least one scheduler and every
  /// scheduler is non-null, distinct (one listed twice would step twice) and made for the first
  /// one's optimizer (PyTorch checks this too); wick::StateError when one was made for another
  /// group count.
  explicit ChainedScheduler(std::vector<std::shared_ptr<LRScheduler>> schedulers);
  std::string name() const override { return "ChainedScheduler"; }
  /// Steps every scheduler in order. An error a scheduler raises propagates; the ones before it
  /// have stepped (as PyTorch), and this scheduler's epoch does not move.
  void step() override;
  /// wick::NotImplementedError: a chain has no closed form (PyTorch's has none either).
  double closed_form_lr(size_t group, int64_t epoch) const override;
  /// As LRScheduler::resume; then every scheduler resumes at its own epoch (its epoch when the
  /// chain was made plus `last_epoch`) with its own base lrs. wick::ValueError, changing nothing,
  /// as LRScheduler::resume and as the schedulers' resume.
  void resume(int64_t last_epoch, const std::vector<double>& base_lrs) override;
  const std::vector<std::shared_ptr<LRScheduler>>& schedulers() const { return schedulers_; }

 protected:
  /// The last lrs (step() is overridden and never calls it).
  std::vector<double> get_lr() const override { return last_lr_; }
  /// SequentialLR's step(0) of a chain: PyTorch's ChainedScheduler has no step(epoch); wick
  /// refuses a chain inside a SequentialLR (wick::NotImplementedError at the milestone).
  void restart() override;

 private:
  /// The first scheduler's optimizer; wick::ValueError when there is none.
  static Optimizer& first_optimizer(const std::vector<std::shared_ptr<LRScheduler>>& schedulers);

  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
  std::vector<int64_t> first_epochs_;  // each scheduler's last_epoch when the chain was made
};

}  // namespace wick::optim
