// ChainedScheduler: PyTorch 1.13's constructor and step.
#include "wick/nn/optim/chained_scheduler.h"

#include "wick/core/error.h"

namespace wick::optim {

Optimizer& ChainedScheduler::first_optimizer(const std::vector<std::shared_ptr<LRScheduler>>& schedulers) {
  WICK_CHECK(!schedulers.empty() && schedulers[0] != nullptr,
             "ChainedScheduler: needs at least one scheduler, and scheduler 0 must not be null");
  return schedulers[0]->optimizer_;
}

ChainedScheduler::ChainedScheduler(std::vector<std::shared_ptr<LRScheduler>> schedulers)
    : LRScheduler(first_optimizer(schedulers)), schedulers_(std::move(schedulers)) {
  for (size_t i = 0; i < schedulers_.size(); ++i) {
    const LRScheduler* s = schedulers_[i].get();
    WICK_CHECK(s != nullptr, "ChainedScheduler: scheduler {} is null", i);
    WICK_CHECK(&s->optimizer_ == &optimizer_,
               "ChainedScheduler expects all schedulers to belong to the same optimizer, but scheduler {} ({}) was "
               "made for another optimizer than scheduler 0 ({})",
               i, s->name(), schedulers_[0]->name());
    for (size_t j = 0; j < i; ++j)
      WICK_CHECK(schedulers_[j].get() != s,
                 "ChainedScheduler: schedulers {} and {} are the same {}; it would step twice per step", j, i,
                 s->name());
    s->check_groups("ChainedScheduler");
    first_epochs_.push_back(s->last_epoch_);
  }
  last_epoch_ = 0;
  for (const auto& g : optimizer_.param_groups()) last_lr_.push_back(g.options().get_lr());
}

void ChainedScheduler::step() {
  check_groups("step");
  for (const auto& s : schedulers_) s->step();
  last_epoch_ += 1;
  last_lr_.clear();
  for (const auto& g : optimizer_.param_groups()) last_lr_.push_back(g.options().get_lr());
}

double ChainedScheduler::closed_form_lr(size_t group, int64_t /*epoch*/) const {
  (void)base_lr(group);  // IndexError naming ChainedScheduler
  WICK_FAIL_T(NotImplementedError,
              "ChainedScheduler.closed_form_lr: a chain has no closed form; compare with the lrs its steps set");
}

void ChainedScheduler::restart() {
  WICK_FAIL_T(NotImplementedError,
              "ChainedScheduler: cannot be restarted by a SequentialLR (PyTorch's has no step(epoch)); list its "
              "schedulers in a SequentialLR of their own or chain SequentialLRs instead");
}

void ChainedScheduler::resume(int64_t last_epoch, const std::vector<double>& base_lrs) {
  check_resume(last_epoch, base_lrs);
  // A refused resume changes nothing: the schedulers resumed before it are resumed back.
  std::vector<std::pair<int64_t, std::vector<double>>> saved;
  for (const auto& s : schedulers_) saved.emplace_back(s->last_epoch_, s->base_lrs_);
  size_t done = 0;
  try {
    for (; done < schedulers_.size(); ++done) {
      const std::vector<double> own = schedulers_[done]->base_lrs_;
      schedulers_[done]->resume(first_epochs_[done] + last_epoch, own);
    }
  } catch (...) {
    for (size_t k = 0; k < done; ++k) schedulers_[k]->resume(saved[k].first, saved[k].second);
    throw;
  }
  LRScheduler::resume(last_epoch, base_lrs);
}

}  // namespace wick::optim
