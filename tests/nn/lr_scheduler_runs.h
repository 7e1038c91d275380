#pragma once
// A scheduled two-group run, uninterrupted or stopped and resumed from a checkpoint's state, for
// the scheduler tests (lr_scheduler_test.cpp, lr_scheduler_more_test.cpp).
#include <catch2/catch.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "wick/autograd/functions.h"
#include "wick/nn/optim/optim.h"

namespace wick::optim::testing {

using MakeScheduler = std::function<std::unique_ptr<LRScheduler>(Optimizer&)>;

/// Each group's lr, in order.
inline std::vector<double> group_lrs(const Optimizer& o) {
  std::vector<double> out;
  for (const auto& g : o.param_groups()) out.push_back(g.options().get_lr());
  return out;
}

/// An optimizer state dict as a checkpoint returns it: the groups through the JSON text a
/// checkpoint stores.
inline OptimizerStateDict through_checkpoint(const Optimizer& o) {
  const OptimizerStateDict saved = o.state_dict();
  OptimizerStateDict copy;
  copy.state = saved.state;
  copy.set_groups_json(saved.groups_json());
  return copy;
}

/// An Adam optimizer over p and q: p in a group with the defaults (lr lrs[0]), q in a group with
/// its own lr lrs[1].
inline std::unique_ptr<Optimizer> two_group_adam(const Tensor& p, const Tensor& q, const std::vector<double>& lrs) {
  std::vector<ParamGroup> groups;
  groups.emplace_back(std::vector<Tensor>{p});
  groups.emplace_back(std::vector<Tensor>{q}, std::make_unique<AdamOptions>(lrs[1]));
  return std::make_unique<Adam>(std::move(groups), AdamOptions(lrs[0]));
}

/// The lrs of epochs 0..epochs (one row per epoch, one lr per group) of an Adam run with two
/// groups at `lrs`, scheduled by `make`. When stop < epochs the run stops after epoch `stop` and
/// resumes as the demo does: the optimizer's state dict through the JSON text a checkpoint stores,
/// a new optimizer and scheduler, load_state_dict, then resume(stop, lrs).
inline std::vector<std::vector<double>> scheduled_lrs(const MakeScheduler& make, const std::vector<double>& lrs,
                                                      int64_t epochs, int64_t stop) {
  Tensor p = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  Tensor q = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  std::unique_ptr<Optimizer> opt = two_group_adam(p, q, lrs);
  std::unique_ptr<LRScheduler> sched = make(*opt);
  std::vector<std::vector<double>> out = {group_lrs(*opt)};
  for (int64_t e = 1; e <= epochs; ++e) {
    if (e == stop + 1) {
      const OptimizerStateDict copy = through_checkpoint(*opt);
      std::unique_ptr<Optimizer> opt2 = two_group_adam(p, q, lrs);
      std::unique_ptr<LRScheduler> sched2 = make(*opt2);
      opt2->load_state_dict(copy);
      sched2->resume(stop, lrs);
      CHECK(sched2->last_epoch() == sched->last_epoch());
      CHECK(sched2->get_last_lr() == sched->get_last_lr());
      sched = std::move(sched2);  // the old scheduler goes before the optimizer it refers to
      opt = std::move(opt2);
    }
    sched->step();
    CHECK(sched->get_last_lr() == group_lrs(*opt));
    out.push_back(group_lrs(*opt));
  }
  return out;
}

}  // namespace wick::optim::testing
