// wick::optim::ReduceLROnPlateau against PyTorch 1.13's lrs and counters (patience, cooldown,
// threshold rel and abs, mode min and max, min_lr, eps, NaN metrics), resumed runs that continue
// bit for bit, and the options and states it refuses.
//
// Every table below was printed by PyTorch 1.13 (/usr/bin/python3) with
//   p, q = torch.nn.Parameter(torch.ones(1)), torch.nn.Parameter(torch.ones(1))
//   o = torch.optim.SGD([{'params': [p]}, {'params': [q], 'lr': 0.03}], lr=0.1)
//   s = torch.optim.lr_scheduler.ReduceLROnPlateau(o, **options)
//   for m in metrics:
//       s.step(m)
//       print(o.param_groups[0]['lr'], o.param_groups[1]['lr'], s.best, s.num_bad_epochs,
//             s.cooldown_counter)
// with each double written with repr().
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "lr_scheduler_runs.h"
#include "wick/autograd/functions.h"
#include "wick/nn/optim/optim.h"

using namespace wick;
using namespace wick::optim;
using namespace wick::optim::testing;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

using Mode = ReduceLROnPlateauOptions::SchedulerMode;
using Threshold = ReduceLROnPlateauOptions::ThresholdMode;

// After one step: each group's lr, best, num_bad_epochs, cooldown_counter.
struct Row {
  double lr0, lr1, best;
  int64_t num_bad_epochs, cooldown_counter;
  bool operator==(const Row&) const = default;
};

Row row_of(const ReduceLROnPlateau& s, const Optimizer& o) {
  const auto lrs = group_lrs(o);
  return {lrs[0], lrs[1], s.best(), s.num_bad_epochs(), s.cooldown_counter()};
}

std::ostream& operator<<(std::ostream& os, const Row& r) {
  return os << "{" << r.lr0 << ", " << r.lr1 << ", " << r.best << ", " << r.num_bad_epochs << ", " << r.cooldown_counter
            << "}";
}

// The rows of a run with two groups at 0.1 and 0.03 over `metrics`. When stop < metrics.size() the
// run stops after `stop` steps and resumes: the optimizer's state through a checkpoint's JSON
// text, the scheduler's state through the text a checkpoint's metadata would hold (fmt's
// shortest round-trip form, read back with std::stod and std::stoll), a new optimizer and
// scheduler, load_state_dict, then resume.
std::vector<Row> plateau_rows(const ReduceLROnPlateauOptions& options, const std::vector<double>& metrics,
                              size_t stop) {
  const std::vector<double> lrs = {0.1, 0.03};
  Tensor p = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  Tensor q = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  std::unique_ptr<Optimizer> opt = two_group_adam(p, q, lrs);
  auto sched = std::make_unique<ReduceLROnPlateau>(*opt, options);
  std::vector<Row> out;
  for (size_t i = 0; i < metrics.size(); ++i) {
    if (i == stop) {
      const ReduceLROnPlateauState s = sched->state();
      const std::string best = fmt::format("{}", s.best), bad = fmt::format("{}", s.num_bad_epochs),
                        cooldown = fmt::format("{}", s.cooldown_counter), epoch = fmt::format("{}", s.last_epoch);
      const OptimizerStateDict copy = through_checkpoint(*opt);
      std::unique_ptr<Optimizer> opt2 = two_group_adam(p, q, lrs);
      auto sched2 = std::make_unique<ReduceLROnPlateau>(*opt2, options);
      opt2->load_state_dict(copy);
      sched2->resume({.best = std::stod(best),
                      .num_bad_epochs = std::stoll(bad),
                      .cooldown_counter = std::stoll(cooldown),
                      .last_epoch = std::stoll(epoch)});
      CHECK(sched2->last_epoch() == sched->last_epoch());
      CHECK(sched2->get_last_lr() == sched->get_last_lr());
      CHECK(row_of(*sched2, *opt2) == row_of(*sched, *opt));
      sched = std::move(sched2);
      opt = std::move(opt2);
    }
    sched->step(metrics[i]);
    CHECK(sched->last_epoch() == static_cast<int64_t>(i) + 1);
    CHECK(sched->get_last_lr() == group_lrs(*opt));
    out.push_back(row_of(*sched, *opt));
  }
  return out;
}

// The run over `metrics` gives PyTorch's `want`, bit for bit, and so does every resumed run.
void check_plateau(const ReduceLROnPlateauOptions& options, const std::vector<double>& metrics,
                   const std::vector<Row>& want) {
  REQUIRE(metrics.size() == want.size());
  const std::vector<Row> whole = plateau_rows(options, metrics, metrics.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("step " << i + 1 << ", metric " << metrics[i]);
    CHECK(whole[i] == want[i]);
  }
  for (size_t k = 0; k < metrics.size(); ++k) {
    INFO("stopped after step " << k);
    CHECK(plateau_rows(options, metrics, k) == whole);
  }
}

}  // namespace

TEST_CASE("optim: ReduceLROnPlateau gives PyTorch's lrs, mode min, threshold rel", "[optim][scheduler]") {
  // options = dict(mode='min', factor=0.5, patience=2, threshold=0.1, threshold_mode='rel',
  //                cooldown=1, min_lr=[0.02, 0.01])
  // Patience: 0.95, 0.92 and 0.91 are not below 1.0 * (1 - 0.1) = 0.9, so the third bad step
  // halves the lrs (hand-computed: 0.05 and 0.015). Cooldown: step 9's bad metric is not counted.
  // NaN counts as bad (step 8). min_lr: group 1 stops at 0.01 (step 8: max(0.0075, 0.01)), and at
  // step 12 group 0 is clamped to 0.02 while group 1, already at its min_lr, does not change.
  const std::vector<double> metrics = {1.0, 0.95, 0.92, 0.91, 0.5, 0.6, 0.6, kNaN, 0.7, 0.7, 0.7, 0.7};
  const std::vector<Row> torch_rows = {{0.1, 0.03, 1.0, 0, 0},   {0.1, 0.03, 1.0, 1, 0},   {0.1, 0.03, 1.0, 2, 0},
                                       {0.05, 0.015, 1.0, 0, 1}, {0.05, 0.015, 0.5, 0, 0}, {0.05, 0.015, 0.5, 1, 0},
                                       {0.05, 0.015, 0.5, 2, 0}, {0.025, 0.01, 0.5, 0, 1}, {0.025, 0.01, 0.5, 0, 0},
                                       {0.025, 0.01, 0.5, 1, 0}, {0.025, 0.01, 0.5, 2, 0}, {0.02, 0.01, 0.5, 0, 1}};
  const auto options = ReduceLROnPlateauOptions()
                           .mode(Mode::min)
                           .factor(0.5)
                           .patience(2)
                           .threshold(0.1)
                           .threshold_mode(Threshold::rel)
                           .cooldown(1)
                           .min_lr({0.02, 0.01});
  check_plateau(options, metrics, torch_rows);
}

TEST_CASE("optim: ReduceLROnPlateau gives PyTorch's lrs, mode max, threshold abs, eps", "[optim][scheduler]") {
  // options = dict(mode='max', factor=0.5, patience=1, threshold=0.05, threshold_mode='abs',
  //                eps=0.01)
  // 0.54 is not above 0.5 + 0.05, 0.56 is. eps: a reduction by 0.01 or less is skipped, so group 1
  // stays at 0.015 from step 7 (0.015 - 0.0075 <= 0.01) and group 0 at 0.0125 from step 11
  // (0.0125 - 0.00625 <= 0.01).
  const std::vector<double> metrics = {0.5, 0.54, 0.56, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.7};
  const std::vector<Row> torch_rows = {
      {0.1, 0.03, 0.5, 0, 0},      {0.1, 0.03, 0.5, 1, 0},      {0.1, 0.03, 0.56, 0, 0},
      {0.1, 0.03, 0.56, 1, 0},     {0.05, 0.015, 0.56, 0, 0},   {0.05, 0.015, 0.56, 1, 0},
      {0.025, 0.015, 0.56, 0, 0},  {0.025, 0.015, 0.56, 1, 0},  {0.0125, 0.015, 0.56, 0, 0},
      {0.0125, 0.015, 0.56, 1, 0}, {0.0125, 0.015, 0.56, 0, 0}, {0.0125, 0.015, 0.7, 0, 0}};
  const auto options = ReduceLROnPlateauOptions()
                           .mode(Mode::max)
                           .factor(0.5)
                           .patience(1)
                           .threshold(0.05)
                           .threshold_mode(Threshold::abs)
                           .eps(0.01);
  check_plateau(options, metrics, torch_rows);
  // LibTorch's positional constructor reads the same options.
  Tensor p = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  Tensor q = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  std::unique_ptr<Optimizer> opt = two_group_adam(p, q, {0.1, 0.03});
  ReduceLROnPlateauScheduler libtorch(*opt, ReduceLROnPlateauScheduler::SchedulerMode::max, 0.5, 1, 0.05,
                                      ReduceLROnPlateauScheduler::ThresholdMode::abs, 0, {}, 0.01);
  CHECK(libtorch.min_lrs() == std::vector<double>{0, 0});
  for (size_t i = 0; i < metrics.size(); ++i) {
    libtorch.step(metrics[i]);
    INFO("step " << i + 1);
    CHECK(row_of(libtorch, *opt) == torch_rows[i]);
  }
}

TEST_CASE("optim: ReduceLROnPlateau gives PyTorch's lrs, mode min, threshold abs, patience 0", "[optim][scheduler]") {
  // options = dict(mode='min', factor=0.1, patience=0, threshold=0.1, threshold_mode='abs',
  //                cooldown=2, min_lr=1e-4)
  // 1.95 is not below 2.0 - 0.1: with patience 0 the lrs drop at once, then two steps of
  // cooldown. Step 9: group 1's 0.0003 * 0.1 is clamped to min_lr 1e-4 (hand-computed), group 0's
  // 0.001 * 0.1 is above it.
  const std::vector<double> metrics = {2.0, 1.95, 1.85, 1.8, 1.8, 1.8, 1.8, 1.6, 1.6, 1.6};
  const std::vector<Row> torch_rows = {{0.1, 0.03, 2.0, 0, 0},
                                       {0.010000000000000002, 0.003, 2.0, 0, 2},
                                       {0.010000000000000002, 0.003, 1.85, 0, 1},
                                       {0.010000000000000002, 0.003, 1.85, 0, 0},
                                       {0.0010000000000000002, 0.00030000000000000003, 1.85, 0, 2},
                                       {0.0010000000000000002, 0.00030000000000000003, 1.85, 0, 1},
                                       {0.0010000000000000002, 0.00030000000000000003, 1.85, 0, 0},
                                       {0.0010000000000000002, 0.00030000000000000003, 1.6, 0, 0},
                                       {0.00010000000000000003, 0.0001, 1.6, 0, 2},
                                       {0.00010000000000000003, 0.0001, 1.6, 0, 1}};
  const auto options = ReduceLROnPlateauOptions()
                           .factor(0.1)
                           .patience(0)
                           .threshold(0.1)
                           .threshold_mode(Threshold::abs)
                           .cooldown(2)
                           .min_lr(1e-4);
  check_plateau(options, metrics, torch_rows);
}

TEST_CASE("optim: ReduceLROnPlateau keeps PyTorch's rel threshold for negative metrics", "[optim][scheduler]") {
  SECTION("mode max") {
    // options = dict(mode='max', factor=0.2, patience=1, threshold=0.1, threshold_mode='rel')
    // best * (1 + 0.1) is below a negative best, so -0.95 counts as better than -1.0.
    const std::vector<double> metrics = {-1.0, -0.95, -0.9, -0.85, -2.0, -1.5, 3.0, 3.2, 3.4, 3.4};
    const std::vector<Row> torch_rows = {{0.1, 0.03, -1.0, 0, 0},
                                         {0.1, 0.03, -0.95, 0, 0},
                                         {0.1, 0.03, -0.9, 0, 0},
                                         {0.1, 0.03, -0.85, 0, 0},
                                         {0.1, 0.03, -0.85, 1, 0},
                                         {0.020000000000000004, 0.006, -0.85, 0, 0},
                                         {0.020000000000000004, 0.006, 3.0, 0, 0},
                                         {0.020000000000000004, 0.006, 3.0, 1, 0},
                                         {0.020000000000000004, 0.006, 3.4, 0, 0},
                                         {0.020000000000000004, 0.006, 3.4, 1, 0}};
    check_plateau(ReduceLROnPlateauOptions().mode(Mode::max).factor(0.2).patience(1).threshold(0.1), metrics,
                  torch_rows);
  }
  SECTION("mode min") {
    // options = dict(mode='min', factor=0.5, patience=0, threshold=0.1)
    // A rising (worse) negative metric counts as better: -0.95 < -1.0 * (1 - 0.1).
    const std::vector<double> metrics = {-1.0, -0.95, -0.9, -0.85};
    const std::vector<Row> torch_rows = {
        {0.1, 0.03, -1.0, 0, 0}, {0.1, 0.03, -0.95, 0, 0}, {0.1, 0.03, -0.9, 0, 0}, {0.1, 0.03, -0.85, 0, 0}};
    check_plateau(ReduceLROnPlateauOptions().factor(0.5).patience(0).threshold(0.1), metrics, torch_rows);
  }
}

TEST_CASE("optim: ReduceLROnPlateau starts as PyTorch's and counts NaN and inf metrics", "[optim][scheduler]") {
  Tensor p = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  Tensor q = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  std::unique_ptr<Optimizer> opt = two_group_adam(p, q, {0.1, 0.03});
  ReduceLROnPlateau min_mode(*opt);
  CHECK(min_mode.best() == kInf);  // PyTorch's mode_worse
  CHECK(min_mode.last_epoch() == 0);
  CHECK(min_mode.num_bad_epochs() == 0);
  CHECK_FALSE(min_mode.in_cooldown());
  CHECK(min_mode.get_last_lr() == std::vector<double>{0.1, 0.03});
  CHECK(min_mode.options().patience() == 10);
  CHECK(min_mode.options().factor() == 0.1);
  CHECK(min_mode.options().eps() == 1e-8);
  CHECK(min_mode.min_lrs() == std::vector<double>{0, 0});
  ReduceLROnPlateau max_mode(*opt, ReduceLROnPlateauOptions().mode(Mode::max).patience(0).min_lr(0.05));
  CHECK(max_mode.best() == -kInf);
  CHECK(max_mode.min_lrs() == std::vector<double>{0.05, 0.05});
  // NaN is never better (a bad step, as in PyTorch); patience 0 reduces at once.
  max_mode.step(kNaN);
  CHECK(max_mode.best() == -kInf);
  // Group 0: 0.1 * 0.1 clamped to 0.05. Group 1: max(0.003, 0.05) would raise its lr, which is
  // not a reduction, so it keeps 0.03 (as in PyTorch).
  CHECK(group_lrs(*opt) == std::vector<double>{0.05, 0.03});
  max_mode.step(kInf);  // inf > -inf * 1.0001
  CHECK(max_mode.best() == kInf);
  CHECK(max_mode.num_bad_epochs() == 0);
  max_mode.step(1e300);
  CHECK(max_mode.num_bad_epochs() == 0);  // reduced again: nothing changes at min_lr
  CHECK(group_lrs(*opt) == std::vector<double>{0.05, 0.03});
  CHECK(max_mode.last_epoch() == 3);
}

TEST_CASE("optim: ReduceLROnPlateau refuses bad options and states, naming them", "[optim][scheduler]") {
  Tensor p = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  Tensor q = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  std::unique_ptr<Optimizer> opt = two_group_adam(p, q, {0.1, 0.03});
  auto refused = [&](const ReduceLROnPlateauOptions& o, const std::string& option, const std::string& got) {
    INFO(option << " " << got);
    CHECK_THROWS_AS(ReduceLROnPlateau(*opt, o), ValueError);
    CHECK_THROWS_WITH(ReduceLROnPlateau(*opt, o),
                      Catch::Contains("ReduceLROnPlateau") && Catch::Contains(option) && Catch::Contains(got));
  };
  const ReduceLROnPlateauOptions ok;
  refused(ReduceLROnPlateauOptions(ok).factor(1.0), "factor", "got 1");  // PyTorch refuses this one too
  refused(ReduceLROnPlateauOptions(ok).factor(1.5), "factor", "got 1.5");
  refused(ReduceLROnPlateauOptions(ok).factor(-0.1), "factor", "got -0.1");
  refused(ReduceLROnPlateauOptions(ok).factor(kNaN), "factor", "got nan");
  refused(ReduceLROnPlateauOptions(ok).patience(-1), "patience", "got -1");
  refused(ReduceLROnPlateauOptions(ok).threshold(-0.5), "threshold", "got -0.5");
  refused(ReduceLROnPlateauOptions(ok).threshold(kNaN), "threshold", "got nan");
  refused(ReduceLROnPlateauOptions(ok).threshold(kInf), "threshold", "got inf");
  refused(ReduceLROnPlateauOptions(ok).cooldown(-2), "cooldown", "got -2");
  refused(ReduceLROnPlateauOptions(ok).eps(-0.5), "eps", "got -0.5");
  refused(ReduceLROnPlateauOptions(ok).eps(kNaN), "eps", "got nan");
  refused(ReduceLROnPlateauOptions(ok).min_lr({0.1, 0.2, 0.3}), "min_lr", "one per group (2), got 3 values");
  refused(ReduceLROnPlateauOptions(ok).min_lr({0.1, -0.5}), "min_lr 1", "got -0.5");
  refused(ReduceLROnPlateauOptions(ok).min_lr(kNaN), "min_lr 0", "got nan");
  CHECK_THROWS_WITH(ReduceLROnPlateauScheduler(*opt, ReduceLROnPlateauScheduler::SchedulerMode::min, 2.0),
                    Catch::Contains("factor") && Catch::Contains("got 2"));
  CHECK(group_lrs(*opt) == std::vector<double>{0.1, 0.03});
  // Edges that are fine: factor 0, patience 0, threshold 0, eps 0.
  ReduceLROnPlateau edges(*opt, ReduceLROnPlateauOptions().factor(0).patience(0).threshold(0).eps(0).min_lr(0.01));
  edges.step(1.0);
  edges.step(1.0);  // not below 1.0 * (1 - 0): bad, reduced to 0, clamped to 0.01
  CHECK(group_lrs(*opt) == std::vector<double>{0.01, 0.01});

  // resume refuses states that no step of these options leaves, and changes nothing then.
  ReduceLROnPlateau sched(*opt, ReduceLROnPlateauOptions().patience(3).cooldown(2));
  sched.step(5.0);
  const ReduceLROnPlateauState before = sched.state();
  auto resume_refused = [&](ReduceLROnPlateauState s, const std::string& what) {
    INFO(what);
    CHECK_THROWS_AS(sched.resume(s), ValueError);
    CHECK_THROWS_WITH(sched.resume(s), Catch::Contains("ReduceLROnPlateau.resume") && Catch::Contains(what));
    const ReduceLROnPlateauState now = sched.state();
    CHECK(now.best == before.best);
    CHECK(now.num_bad_epochs == before.num_bad_epochs);
    CHECK(now.cooldown_counter == before.cooldown_counter);
    CHECK(now.last_epoch == before.last_epoch);
  };
  resume_refused({.best = kNaN, .num_bad_epochs = 0, .cooldown_counter = 0, .last_epoch = 1}, "best is NaN");
  resume_refused({.best = 1, .num_bad_epochs = 4, .cooldown_counter = 0, .last_epoch = 1},
                 "num_bad_epochs must be in [0, patience = 3], got 4");
  resume_refused({.best = 1, .num_bad_epochs = -1, .cooldown_counter = 0, .last_epoch = 1}, "got -1");
  resume_refused({.best = 1, .num_bad_epochs = 0, .cooldown_counter = 3, .last_epoch = 1},
                 "cooldown_counter must be in [0, cooldown = 2], got 3");
  resume_refused({.best = 1, .num_bad_epochs = 0, .cooldown_counter = 0, .last_epoch = -1},
                 "last_epoch must be >= 0, got -1");
  sched.resume({.best = -kInf, .num_bad_epochs = 3, .cooldown_counter = 2, .last_epoch = 7});
  CHECK(sched.best() == -kInf);
  CHECK(sched.last_epoch() == 7);
  CHECK(sched.in_cooldown());

  // A group added after the scheduler was made: step and resume refuse, changing nothing.
  Tensor r = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  opt->add_param_group(ParamGroup(std::vector<Tensor>{r}));
  CHECK_THROWS_AS(sched.step(1.0), StateError);
  CHECK_THROWS_WITH(sched.step(1.0),
                    Catch::Contains("ReduceLROnPlateau.step") && Catch::Contains("3 parameter groups"));
  CHECK(sched.last_epoch() == 7);
  CHECK(sched.num_bad_epochs() == 3);
  CHECK_THROWS_AS(sched.resume(before), StateError);
}
