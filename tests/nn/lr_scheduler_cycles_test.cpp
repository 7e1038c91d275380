// wick::optim's ConstantLR, PolynomialLR, CosineAnnealingWarmRestarts, SequentialLR, OneCycleLR and
// CyclicLR against PyTorch 1.13's lr and momentum sequences (lr_scheduler_cycles_torch.h and
// lr_scheduler_restarts_torch.h, made by tests/data/lr_scheduler_cycles.py), bit for bit, with two parameter groups
// over every phase and restart; runs stopped after every step and resumed from the optimizer's checkpointed state;
// and their closed forms. The options, steps and resumes they refuse: lr_scheduler_cycles_refusals_test.cpp.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "lr_scheduler_cycles_torch.h"
#include "lr_scheduler_restarts_torch.h"
#include "lr_scheduler_runs.h"
#include "lr_scheduler_two_groups.h"
#include "wick/autograd/functions.h"
#include "wick/nn/optim/optim.h"

using namespace wick;
using namespace wick::optim;
using namespace wick::optim::testing;
using namespace wick::optim::testing::two_groups;

namespace {

using Rows = std::vector<std::vector<double>>;
namespace torch = wick::optim::testing::torch113;

// One step: step() for NaN, else step(epoch) (CosineAnnealingWarmRestarts only).
void take_step(LRScheduler& s, double epoch) {
  if (std::isnan(epoch)) {
    s.step();
    return;
  }
  auto* warm = dynamic_cast<CosineAnnealingWarmRestarts*>(&s);
  REQUIRE(warm != nullptr);
  warm->step(epoch);
}

// The rows of a run of `make` over `kind` taking `steps` (NaN: step(), else step(epoch)). With
// stop < steps.size() the run stops after step `stop` and resumes as a training run does: the
// optimizer's state dict through the JSON text a checkpoint stores, a new optimizer and scheduler,
// load_state_dict, then resume(last_epoch, base_lrs) with the stopped scheduler's values.
Rows run(const MakeScheduler& make, Opt kind, bool with_momentum, const std::vector<double>& steps, size_t stop) {
  Tensor p = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  Tensor q = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  std::unique_ptr<Optimizer> opt = make_optimizer(kind, p, q);
  std::unique_ptr<LRScheduler> sched = make(*opt);
  Rows out = {row(*opt, with_momentum)};
  CHECK(sched->get_last_lr() == group_lrs(*opt));
  for (size_t i = 0; i < steps.size(); ++i) {
    if (i == stop) {
      const OptimizerStateDict copy = through_checkpoint(*opt);
      std::unique_ptr<Optimizer> opt2 = make_optimizer(kind, p, q);
      std::unique_ptr<LRScheduler> sched2 = make(*opt2);
      opt2->load_state_dict(copy);
      sched2->resume(sched->last_epoch(), sched->base_lrs());
      CHECK(sched2->last_epoch() == sched->last_epoch());
      CHECK(sched2->get_last_lr() == sched->get_last_lr());
      CHECK(row(*opt2, with_momentum) == row(*opt, with_momentum));
      sched = std::move(sched2);  // the old scheduler goes before the optimizer it refers to
      opt = std::move(opt2);
    }
    take_step(*sched, steps[i]);
    CHECK(sched->get_last_lr() == group_lrs(*opt));
    out.push_back(row(*opt, with_momentum));
  }
  return out;
}

// The run equals PyTorch's `want` bit for bit, and so does every run stopped after a step and
// resumed (stopped only before a step(), or a step(epoch): resume restores what step() left);
// closed_form_lr agrees with every row within 1e-12 relative where `closed` (the steps are all
// step()).
void check_schedule(const MakeScheduler& make, Opt kind, bool with_momentum, const std::vector<double>& steps,
                    const Rows& want, bool closed = true) {
  const Rows whole = run(make, kind, with_momentum, steps, steps.size());
  REQUIRE(whole.size() == want.size());
  for (size_t e = 0; e < want.size(); ++e) {
    INFO("row " << e);
    CHECK(whole[e] == want[e]);
  }
  for (size_t k = 0; k < steps.size(); ++k) {
    // resume() restores the state step() leaves: a run stepped by step(epoch) resumes before its
    // next step(epoch), which does not read it.
    const bool plain_so_far = std::all_of(steps.begin(), steps.begin() + static_cast<std::ptrdiff_t>(k),
                                          [](double e) { return std::isnan(e); });
    if (!plain_so_far && std::isnan(steps[k])) continue;
    INFO("stopped before step " << k);
    CHECK(run(make, kind, with_momentum, steps, k) == whole);
  }
  if (!closed) return;
  Tensor p = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  Tensor q = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  std::unique_ptr<Optimizer> opt = make_optimizer(kind, p, q);
  std::unique_ptr<LRScheduler> sched = make(*opt);
  for (size_t e = 0; e < whole.size(); ++e)
    for (size_t g = 0; g < 2; ++g) {
      INFO("epoch " << e << ", group " << g);
      CHECK(sched->closed_form_lr(g, static_cast<int64_t>(e)) == Approx(whole[e][g]).epsilon(1e-12).margin(1e-300));
    }
}

std::vector<double> plain_steps(size_t n) { return std::vector<double>(n, kNaN); }

void check_plain(const MakeScheduler& make, Opt kind, bool with_momentum, const Rows& want) {
  check_schedule(make, kind, with_momentum, plain_steps(want.size() - 1), want);
}

template <class S, class... Args>
MakeScheduler maker(Args... args) {
  return [=](Optimizer& o) -> std::unique_ptr<LRScheduler> { return std::make_unique<S>(o, args...); };
}

}  // namespace

TEST_CASE("optim: ConstantLR and PolynomialLR give PyTorch's lr sequences", "[optim][scheduler]") {
  // Hand-computed: ConstantLR(0.5, 4): base / 2 for epochs 0-3, base from 4 on; PolynomialLR(8, 2)
  // at epoch 4: 0.1 * (1 - 4/8)^2 = 0.025.
  CHECK(torch::constant_lr[3] == std::vector<double>{0.05, 0.015});
  CHECK(torch::constant_lr[4] == std::vector<double>{0.1, 0.03});
  CHECK(torch::polynomial_lr_power2[4][0] == Approx(0.025).epsilon(1e-15));
  CHECK(torch::polynomial_lr_power2[8][0] == 0.0);
  check_plain(maker<ConstantLR>(0.5, int64_t{4}), Opt::sgd, false, torch::constant_lr);
  check_plain([](Optimizer& o) { return std::make_unique<ConstantLR>(o); }, Opt::sgd, false,
              torch::constant_lr_defaults);
  // At total_iters PyTorch multiplies by 1 / factor: 0.10000000000000002 where dividing by 0.45 gives 0.1.
  CHECK(torch::constant_lr_factor_045[3][0] == 0.10000000000000002);
  check_plain(maker<ConstantLR>(0.45, int64_t{3}), Opt::sgd, false, torch::constant_lr_factor_045);
  check_plain(maker<PolynomialLR>(int64_t{8}, 2.0), Opt::sgd, false, torch::polynomial_lr_power2);
  check_plain(maker<PolynomialLR>(int64_t{6}, 0.5), Opt::sgd, false, torch::polynomial_lr_power_half);
}

TEST_CASE("optim: CosineAnnealingWarmRestarts gives PyTorch's lr sequence over every restart", "[optim][scheduler]") {
  SECTION("T_0 3, T_mult 2: cycles of 3, 6 and 12 epochs") {
    // Hand-computed: restarts at epochs 3, 9 and 21 (lr = base there); epoch 6, halfway through
    // the second cycle: eta_min + (base - eta_min) / 2.
    for (const size_t e : {0, 3, 9, 21}) CHECK(torch::warm_restarts_mult2[e] == std::vector<double>{0.1, 0.03});
    CHECK(torch::warm_restarts_mult2[6][0] == Approx(0.001 + 0.099 / 2).epsilon(1e-14));
    check_plain(maker<CosineAnnealingWarmRestarts>(int64_t{3}, int64_t{2}, 0.001), Opt::sgd, false,
                torch::warm_restarts_mult2);
  }
  SECTION("T_0 4, T_mult 1") {
    check_plain(maker<CosineAnnealingWarmRestarts>(int64_t{4}), Opt::sgd, false, torch::warm_restarts_mult1);
  }
  SECTION("step(epoch) with fractional epochs, and steps after them") {
    check_schedule(maker<CosineAnnealingWarmRestarts>(int64_t{2}, int64_t{2}, 0.002), Opt::sgd, false,
                   torch::warm_restarts_fractional_mult2_epochs, torch::warm_restarts_fractional_mult2, false);
    check_schedule(maker<CosineAnnealingWarmRestarts>(int64_t{3}), Opt::sgd, false,
                   torch::warm_restarts_fractional_mult1_epochs, torch::warm_restarts_fractional_mult1, false);
  }
  SECTION("step(epoch) where PyTorch's logarithm rounds down at a restart") {
    // T_0 1, T_mult 10: epoch 111 starts the fourth cycle, but log(1000) / log(10) is
    // 2.9999999999999996 and PyTorch's step(111) lands on the end of the third (eta_min = 0); step()
    // from epoch 110 gives the restart.
    CHECK(torch::warm_restarts_log_rounding[5] == std::vector<double>{0.0, 0.0});
    check_schedule(maker<CosineAnnealingWarmRestarts>(int64_t{1}, int64_t{10}), Opt::sgd, false,
                   torch::warm_restarts_log_rounding_epochs, torch::warm_restarts_log_rounding, false);
    Tensor p = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
    SGD opt(std::vector<Tensor>{p}, SGDOptions(0.1));
    CosineAnnealingWarmRestarts sched(opt, 1, 10);
    sched.step(110.0);
    CHECK(sched.t_cur() == 99.0);
    CHECK(sched.t_i() == 100);
    sched.step();
    CHECK(sched.last_epoch() == 111);
    CHECK(sched.t_cur() == 0.0);
    CHECK(sched.t_i() == 1000);
    CHECK(sched.get_last_lr()[0] == 0.1);
    CHECK(sched.closed_form_lr(0, 111) == 0.1);
  }
}

TEST_CASE("optim: SequentialLR gives PyTorch's lr sequence across its milestones", "[optim][scheduler]") {
  SECTION("ConstantLR, ExponentialLR, StepLR") {
    // Hand-computed: epochs 0-1 base / 10; at milestone 2 ExponentialLR starts again from base (its
    // base lr is the first scheduler's, not the lr ConstantLR left), at 6 StepLR from base.
    CHECK(torch::sequential_constant_exponential_step[2] == std::vector<double>{0.1, 0.03});
    CHECK(torch::sequential_constant_exponential_step[6] == std::vector<double>{0.1, 0.03});
    check_plain(
        [](Optimizer& o) {
          std::vector<std::shared_ptr<LRScheduler>> s = {std::make_shared<ConstantLR>(o, 0.1, 2),
                                                         std::make_shared<ExponentialLR>(o, 0.9),
                                                         std::make_shared<StepLR>(o, 2, 0.5)};
          return std::make_unique<SequentialLR>(o, s, std::vector<int64_t>{2, 6});
        },
        Opt::sgd, false, torch::sequential_constant_exponential_step);
  }
  SECTION("a LinearLR warm-up, then CosineAnnealingLR") {
    check_plain(
        [](Optimizer& o) {
          std::vector<std::shared_ptr<LRScheduler>> s = {std::make_shared<LinearLR>(o, 0.1, 1.0, 3),
                                                         std::make_shared<CosineAnnealingLR>(o, 6, 0.001)};
          return std::make_unique<SequentialLR>(o, s, std::vector<int64_t>{3});
        },
        Opt::sgd, false, torch::sequential_linear_cosine);
  }
  SECTION("CosineAnnealingWarmRestarts, MultiStepLR, LambdaLR") {
    check_plain(
        [](Optimizer& o) {
          std::vector<std::shared_ptr<LRScheduler>> s = {
              std::make_shared<CosineAnnealingWarmRestarts>(o, 2, 2),
              std::make_shared<MultiStepLR>(o, std::vector<int64_t>{1, 3}, 0.5),
              std::make_shared<LambdaLR>(o, [](int64_t e) { return 1.0 / static_cast<double>(1 + e); })};
          return std::make_unique<SequentialLR>(o, s, std::vector<int64_t>{5, 9});
        },
        Opt::sgd, false, torch::sequential_warm_restarts_lambda);
  }
  SECTION("a LinearLR warm-up, then CyclicLR with its momentum") {
    check_plain(
        [](Optimizer& o) {
          std::vector<std::shared_ptr<LRScheduler>> s = {
              std::make_shared<LinearLR>(o, 0.5, 1.0, 2),
              std::make_shared<CyclicLR>(
                  o, CyclicLROptions({0.01, 0.002}, {0.1, 0.03}).step_size_up(2).step_size_down(3))};
          return std::make_unique<SequentialLR>(o, s, std::vector<int64_t>{3});
        },
        Opt::sgd_momentum, true, torch::sequential_linear_cyclic);
  }
}

TEST_CASE("optim: OneCycleLR gives PyTorch's lr and momentum sequences", "[optim][scheduler]") {
  SECTION("cos, two phases, SGD's momentum") {
    // Hand-computed: step 0: max_lr / 25 and max_momentum; step 4 (pct_start * 20 - 1), the peak:
    // max_lr and base_momentum.
    CHECK(torch::one_cycle_cos_sgd[0][0] == Approx(0.04).epsilon(1e-14));
    CHECK(torch::one_cycle_cos_sgd[0][1] == Approx(0.012).epsilon(1e-14));
    CHECK(torch::one_cycle_cos_sgd[0][2] == Approx(0.95).epsilon(1e-15));
    CHECK(torch::one_cycle_cos_sgd[4] == std::vector<double>{1.0, 0.3, 0.85, 0.85});
    check_plain(maker<OneCycleLR>(OneCycleLROptions({1.0, 0.3}).total_steps(20).pct_start(0.25)), Opt::sgd_momentum,
                true, torch::one_cycle_cos_sgd);
  }
  SECTION("linear, three phases, Adam's beta1, momenta per group") {
    // Hand-computed: initial 0.5 / 10 = 0.05 at step 0 and, falling back, at step 10; min_lr
    // 0.05 / 100 = 5e-4 at step 19; step 20 extrapolates below 0, as PyTorch.
    CHECK(torch::one_cycle_linear_three_phase_adam[5][0] == 0.5);
    CHECK(torch::one_cycle_linear_three_phase_adam[19][0] == Approx(5e-4).epsilon(1e-12));
    CHECK(torch::one_cycle_linear_three_phase_adam[20][0] < 0);
    check_plain(maker<OneCycleLR>(OneCycleLROptions(0.5)
                                      .total_steps(20)
                                      .pct_start(0.3)
                                      .anneal_strategy(OneCycleLR::AnnealStrategy::linear)
                                      .three_phase(true)
                                      .base_momentum({0.8, 0.85})
                                      .max_momentum({0.9, 0.95})
                                      .div_factor(10.0)
                                      .final_div_factor(100.0)),
                Opt::adam, true, torch::one_cycle_linear_three_phase_adam);
  }
  SECTION("cos, three phases, epochs * steps_per_epoch, no momentum") {
    check_plain(maker<OneCycleLR>(OneCycleLROptions({0.2, 0.1})
                                      .epochs(4)
                                      .steps_per_epoch(5)
                                      .pct_start(0.4)
                                      .three_phase(true)
                                      .cycle_momentum(false)),
                Opt::sgd, false, torch::one_cycle_cos_three_phase_epochs);
  }
  SECTION("linear with no warm-up (pct_start 0)") {
    check_plain(maker<OneCycleLR>(OneCycleLROptions(0.4).total_steps(10).pct_start(0.0).anneal_strategy(
                    OneCycleLR::AnnealStrategy::linear)),
                Opt::sgd_momentum, true, torch::one_cycle_linear_no_warmup);
  }
}

TEST_CASE("optim: CyclicLR gives PyTorch's lr and momentum sequences in every mode", "[optim][scheduler]") {
  using Mode = CyclicLR::Mode;
  SECTION("triangular, up 3 and down 5") {
    // Hand-computed: step 0 base_lr and max_momentum, step 3 max_lr and base_momentum, step 8 base
    // again.
    CHECK(torch::cyclic_triangular[0] == std::vector<double>{0.01, 0.002, 0.9, 0.9});
    CHECK(torch::cyclic_triangular[3][0] == Approx(0.1).epsilon(1e-15));
    CHECK(torch::cyclic_triangular[3][2] == Approx(0.8).epsilon(1e-15));
    CHECK(torch::cyclic_triangular[8][0] == Approx(0.01).epsilon(1e-15));
    check_plain(maker<CyclicLR>(CyclicLROptions({0.01, 0.002}, {0.1, 0.03}).step_size_up(3).step_size_down(5)),
                Opt::sgd_momentum, true, torch::cyclic_triangular);
  }
  SECTION("triangular2, momenta per group") {
    // Hand-computed: the peaks of cycles 1, 2, 3 (steps 2, 6, 10) reach 0.01 + 0.09 / 1, / 2, / 4.
    CHECK(torch::cyclic_triangular2[6][0] == Approx(0.01 + 0.09 / 2).epsilon(1e-14));
    CHECK(torch::cyclic_triangular2[10][0] == Approx(0.01 + 0.09 / 4).epsilon(1e-14));
    check_plain(maker<CyclicLR>(CyclicLROptions(0.01, 0.1)
                                    .step_size_up(2)
                                    .mode(Mode::triangular2)
                                    .base_momentum({0.7, 0.8})
                                    .max_momentum({0.9, 0.95})),
                Opt::sgd_momentum, true, torch::cyclic_triangular2);
  }
  SECTION("exp_range, gamma 0.9") {
    check_plain(maker<CyclicLR>(CyclicLROptions({0.01, 0.002}, {0.1, 0.03})
                                    .step_size_up(4)
                                    .step_size_down(2)
                                    .mode(Mode::exp_range)
                                    .gamma(0.9)),
                Opt::sgd_momentum, true, torch::cyclic_exp_range);
  }
  SECTION("Adam without cycle_momentum: beta1 stays") {
    check_plain(
        maker<CyclicLR>(CyclicLROptions(0.001, 0.006).step_size_up(3).mode(Mode::triangular2).cycle_momentum(false)),
        Opt::adam, true, torch::cyclic_no_momentum_adam);
  }
  SECTION("a scale_fn of the cycle and of the step") {
    check_plain(maker<CyclicLR>(CyclicLROptions({0.01, 0.002}, {0.1, 0.03})
                                    .step_size_up(2)
                                    .step_size_down(3)
                                    .scale_fn([](int64_t x) { return 1 / static_cast<double>(1 + x); })
                                    .scale_mode(CyclicLR::ScaleMode::cycle)),
                Opt::sgd_momentum, true, torch::cyclic_scale_fn_cycle);
    check_plain(maker<CyclicLR>(CyclicLROptions({0.01, 0.002}, {0.1, 0.03})
                                    .step_size_up(2)
                                    .step_size_down(3)
                                    .scale_fn([](int64_t x) { return std::pow(0.95, static_cast<double>(x)); })
                                    .scale_mode(CyclicLR::ScaleMode::iterations)),
                Opt::sgd_momentum, true, torch::cyclic_scale_fn_iterations);
  }
}
