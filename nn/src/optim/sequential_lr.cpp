// SequentialLR: PyTorch 1.13's constructor and step.
#include "wick/nn/optim/sequential_lr.h"

#include <fmt/format.h>

#include <algorithm>

#include "wick/core/error.h"

namespace wick::optim {

SequentialLR::SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers,
                           std::vector<int64_t> milestones)
    : LRScheduler(optimizer), schedulers_(std::move(schedulers)), milestones_(std::move(milestones)) {
  WICK_CHECK(!schedulers_.empty(), "SequentialLR: needs at least one scheduler");
  for (size_t i = 0; i < schedulers_.size(); ++i) {
    const LRScheduler* s = schedulers_[i].get();
    WICK_CHECK(s != nullptr, "SequentialLR: scheduler {} is null", i);
    WICK_CHECK(&s->optimizer_ == &optimizer,
               "SequentialLR: scheduler {} ({}) was made for another optimizer; make every scheduler for the "
               "optimizer SequentialLR is given",
               i, s->name());
    WICK_CHECK(dynamic_cast<const SequentialLR*>(s) == nullptr,
               "SequentialLR: scheduler {} is a SequentialLR; list its schedulers and milestones in this one instead "
               "(PyTorch fails at its milestone)",
               i);
    for (size_t j = 0; j < i; ++j)
      WICK_CHECK(schedulers_[j].get() != s,
                 "SequentialLR: schedulers {} and {} are the same {}; each milestone needs a scheduler of its own", j,
                 i, s->name());
    s->check_groups("SequentialLR");
  }
  WICK_CHECK(milestones_.size() + 1 == schedulers_.size(),
             "SequentialLR: expects one milestone fewer than schedulers ({} schedulers), got {} milestones",
             schedulers_.size(), milestones_.size());
  for (size_t k = 0; k < milestones_.size(); ++k)
    WICK_CHECK(milestones_[k] >= 1 && (k == 0 || milestones_[k] > milestones_[k - 1]),
               "SequentialLR: milestones must be >= 1 and strictly increasing (the epochs at which the next "
               "scheduler takes over), got [{}]",
               fmt::join(milestones_, ", "));
  // PyTorch: every group back at its initial_lr, every scheduler's initial step undone, and the
  // first scheduler's initial step taken again.
  base_lrs_ = schedulers_[0]->base_lrs_;
  auto& groups = optimizer_.param_groups();
  for (size_t i = 0; i < groups.size(); ++i) groups[i].options().set_lr(base_lrs_[i]);
  for (const auto& s : schedulers_) {
    s->take_initial_lrs(base_lrs_);
    s->last_epoch_ -= 1;
  }
  schedulers_[0]->initial_step();
  last_epoch_ = 0;
  last_lr_ = schedulers_[0]->get_last_lr();
}

size_t SequentialLR::index_at(int64_t epoch) const {
  return static_cast<size_t>(std::upper_bound(milestones_.begin(), milestones_.end(), epoch) - milestones_.begin());
}

void SequentialLR::step() {
  check_groups("step");
  const int64_t epoch = last_epoch_ + 1;
  const size_t i = index_at(epoch);
  LRScheduler& s = *schedulers_[i];
  if (i > 0 && milestones_[i - 1] == epoch)
    s.restart();
  else
    s.step();
  last_epoch_ = epoch;
  last_lr_ = s.get_last_lr();
}

double SequentialLR::closed_form_lr(size_t group, int64_t epoch) const {
  (void)base_lr(group);  // IndexError naming SequentialLR
  const size_t i = index_at(epoch);
  return schedulers_[i]->closed_form_lr(group, i == 0 ? epoch : epoch - milestones_[i - 1]);
}

void SequentialLR::resume(int64_t last_epoch, const std::vector<double>& base_lrs) {
  check_resume(last_epoch, base_lrs);
  const size_t i = index_at(last_epoch);
  const int64_t own_epoch = i == 0 ? last_epoch : last_epoch - milestones_[i - 1];
  // A refused resume of the scheduler in charge changes nothing: the base lrs are put back.
  std::vector<std::vector<double>> saved;
  for (const auto& s : schedulers_) saved.push_back(s->base_lrs_);
  try {
    for (const auto& s : schedulers_) s->take_initial_lrs(base_lrs);
    const std::vector<double> own_base = schedulers_[i]->base_lrs_;
    schedulers_[i]->resume(own_epoch, own_base);
  } catch (...) {
    for (size_t k = 0; k < schedulers_.size(); ++k) schedulers_[k]->base_lrs_ = saved[k];
    throw;
  }
  LRScheduler::resume(last_epoch, base_lrs);
}

}  // namespace wick::optim
