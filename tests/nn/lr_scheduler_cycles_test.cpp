// wick::optim's ConstantLR, PolynomialLR, CosineAnnealingWarmRestarts, SequentialLR, OneCycleLR and
// CyclicLR against PyTorch 1.13's lr and momentum sequences (lr_scheduler_cycles_torch.h and
// lr_scheduler_restarts_torch.h, made by tests/data/lr_scheduler_cycles.py), bit for bit, with two parameter groups
// over every phase and restart; runs stopped after every step and resumed from the optimizer's checkpointed state;
// their closed forms; and the options, steps and resumes they refuse.
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
#include "wick/autograd/functions.h"
#include "wick/nn/optim/optim.h"

using namespace wick;
using namespace wick::optim;
using namespace wick::optim::testing;

namespace {

using Rows = std::vector<std::vector<double>>;
namespace torch = wick::optim::testing::torch113;

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// The optimizers of lr_scheduler_cycles.py: two groups at lr 0.1 and 0.03 (the second with options
// of its own, which wick's groups give in full).
enum class Opt { sgd, sgd_momentum, adam };

std::unique_ptr<Optimizer> make_optimizer(Opt kind, const Tensor& p, const Tensor& q) {
  std::vector<ParamGroup> groups;
  groups.emplace_back(std::vector<Tensor>{p});
  if (kind == Opt::adam) {
    groups.emplace_back(std::vector<Tensor>{q}, std::make_unique<AdamOptions>(0.03));
    return std::make_unique<Adam>(std::move(groups), AdamOptions(0.1));
  }
  const double momentum = kind == Opt::sgd_momentum ? 0.9 : 0.0;
  groups.emplace_back(std::vector<Tensor>{q}, std::make_unique<SGDOptions>(SGDOptions(0.03).momentum(momentum)));
  return std::make_unique<SGD>(std::move(groups), SGDOptions(0.1).momentum(momentum));
}

// A group's momentum as the tables hold it: Adam's beta1, SGD's momentum.
double momentum_of(const OptimizerOptions& o) {
  double momentum = kNaN;
  for (const auto& [k, v] : o.values()) {
    if (k == "beta1") return v;
    if (k == "momentum") momentum = v;
  }
  return momentum;
}

std::vector<double> row(const Optimizer& o, bool with_momentum) {
  std::vector<double> r = group_lrs(o);
  if (with_momentum)
    for (const auto& g : o.param_groups()) r.push_back(momentum_of(g.options()));
  return r;
}

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

// A ValueError whose message names the scheduler, the option and what it got.
void refused(const std::function<void()>& f, const std::string& scheduler, const std::string& option,
             const std::string& got) {
  INFO(scheduler << " " << option << " " << got);
  CHECK_THROWS_AS(f(), ValueError);
  CHECK_THROWS_WITH(f(), Catch::Contains(scheduler) && Catch::Contains(option) && Catch::Contains(got));
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

TEST_CASE("optim: OneCycleLR refuses a step past total_steps, changing nothing", "[optim][scheduler]") {
  Tensor p = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  Tensor q = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  std::unique_ptr<Optimizer> opt = make_optimizer(Opt::sgd_momentum, p, q);
  OneCycleLR sched(*opt, OneCycleLROptions({1.0, 0.3}).total_steps(20).pct_start(0.25));
  for (int i = 0; i < 20; ++i) sched.step();  // PyTorch allows total_steps steps after construction
  const std::vector<double> last = row(*opt, true);
  CHECK(last == torch::one_cycle_cos_sgd.back());
  CHECK_THROWS_AS(sched.step(), StateError);
  CHECK_THROWS_WITH(sched.step(), Catch::Contains("OneCycleLR.step") && Catch::Contains("20 steps") &&
                                      Catch::Contains("larger total_steps"));
  CHECK(sched.last_epoch() == 20);
  CHECK(row(*opt, true) == last);
  CHECK_THROWS_AS(sched.closed_form_lr(0, 21), ValueError);
  CHECK_THROWS_AS(sched.closed_form_lr(0, -1), ValueError);
  CHECK(sched.closed_form_momentum(1, 4) == 0.85);
  // A resume past the end, or with other base lrs, is refused and changes nothing.
  CHECK_THROWS_WITH(sched.resume(21, sched.base_lrs()), Catch::Contains("last_epoch 21 is past total_steps 20"));
  CHECK_THROWS_WITH(sched.resume(3, {0.1, 0.03}),
                    Catch::Contains("OneCycleLR.resume") && Catch::Contains("differ from this scheduler's"));
  CHECK(sched.last_epoch() == 20);
  CHECK(sched.base_lrs() == std::vector<double>{0.04, 0.012});
}

TEST_CASE("optim: a OneCycleLR step whose momentum the optimizer refuses changes nothing", "[optim][scheduler]") {
  // Linear annealing with no warm-up over 2 steps: step 2 extrapolates beta1 to
  // (0.99 - 0.5) * 1.5 + 0.5 = 1.235, which Adam refuses (PyTorch sets it).
  Tensor p = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  Tensor q = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  std::unique_ptr<Optimizer> opt = make_optimizer(Opt::adam, p, q);
  OneCycleLR sched(*opt, OneCycleLROptions(0.4)
                             .total_steps(2)
                             .pct_start(0.0)
                             .anneal_strategy(OneCycleLR::AnnealStrategy::linear)
                             .base_momentum(0.5)
                             .max_momentum(0.99));
  sched.step();
  const std::vector<double> at1 = row(*opt, true);
  CHECK_THROWS_AS(sched.step(), ValueError);
  CHECK_THROWS_WITH(sched.step(), Catch::Contains("OneCycleLR.step to epoch 2") && Catch::Contains("group 0's beta1") &&
                                      Catch::Contains("beta1"));
  CHECK(sched.last_epoch() == 1);
  CHECK(row(*opt, true) == at1);
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

TEST_CASE("optim: a CyclicLR step refused by its scale_fn changes nothing", "[optim][scheduler]") {
  Tensor p = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  Tensor q = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  std::unique_ptr<Optimizer> opt = make_optimizer(Opt::sgd_momentum, p, q);
  double bad = kNaN;
  bool throw_once = false;
  CyclicLR sched(*opt, CyclicLROptions(0.01, 0.1)
                           .step_size_up(2)
                           .scale_fn([&](int64_t step) {
                             if (step != 3) return 1.0;
                             if (throw_once) {
                               throw_once = false;
                               throw std::runtime_error("scale_fn failed");
                             }
                             return bad;
                           })
                           .scale_mode(CyclicLR::ScaleMode::iterations));
  sched.step();
  sched.step();
  // Step 2 is the peak: max_lr and base_momentum.
  const std::vector<double> at2 = row(*opt, true);
  CHECK(at2[0] == Approx(0.1).epsilon(1e-15));
  CHECK(at2[3] == Approx(0.8).epsilon(1e-15));
  auto unchanged = [&] {
    CHECK(sched.last_epoch() == 2);
    CHECK(row(*opt, true) == at2);
    CHECK(sched.get_last_lr() == group_lrs(*opt));
  };
  bad = kNaN;
  CHECK_THROWS_AS(sched.step(), ValueError);
  CHECK_THROWS_WITH(sched.step(), Catch::Contains("CyclicLR.step") && Catch::Contains("scale_fn returned nan"));
  unchanged();
  // Step 3 is halfway down: lr = 0.01 + 0.09 * 0.5 * scale, momentum = 0.9 - 0.1 * 0.5 * scale.
  bad = -1.0;  // lr 0.01 - 0.045 < 0
  CHECK_THROWS_WITH(sched.step(), Catch::Contains("group 0 the lr -0.035"));
  unchanged();
  bad = 20.0;  // lr 0.91, momentum 0.9 - 1 < 0
  CHECK_THROWS_WITH(sched.step(), Catch::Contains("group 0 the momentum -0.09"));
  unchanged();
  throw_once = true;
  CHECK_THROWS_AS(sched.step(), std::runtime_error);
  unchanged();
  bad = 1.0;
  sched.step();
  CHECK(sched.last_epoch() == 3);
}

TEST_CASE("optim: the cycle schedulers refuse bad options, naming them", "[optim][scheduler]") {
  const double inf = std::numeric_limits<double>::infinity();
  Tensor p = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  Tensor q = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  std::unique_ptr<Optimizer> opt = make_optimizer(Opt::sgd_momentum, p, q);
  SECTION("ConstantLR, PolynomialLR, CosineAnnealingWarmRestarts") {
    refused([&] { (void)ConstantLR(*opt, 0.0); }, "ConstantLR", "factor", "got 0");  // PyTorch: ZeroDivisionError
    refused([&] { (void)ConstantLR(*opt, 1.5); }, "ConstantLR", "factor", "got 1.5");
    refused([&] { (void)ConstantLR(*opt, kNaN); }, "ConstantLR", "factor", "got nan");
    refused([&] { (void)ConstantLR(*opt, 0.5, 0); }, "ConstantLR", "total_iters", "got 0");
    refused([&] { (void)PolynomialLR(*opt, 0); }, "PolynomialLR", "total_iters", "got 0");
    refused([&] { (void)PolynomialLR(*opt, 5, -1.0); }, "PolynomialLR", "power", "got -1");
    refused([&] { (void)PolynomialLR(*opt, 5, inf); }, "PolynomialLR", "power", "got inf");
    refused([&] { (void)CosineAnnealingWarmRestarts(*opt, 0); }, "CosineAnnealingWarmRestarts", "T_0", "got 0");
    refused([&] { (void)CosineAnnealingWarmRestarts(*opt, 3, 0); }, "CosineAnnealingWarmRestarts", "T_mult", "got 0");
    refused([&] { (void)CosineAnnealingWarmRestarts(*opt, 3, 1, -0.1); }, "CosineAnnealingWarmRestarts", "eta_min",
            "got -0.1");
    CosineAnnealingWarmRestarts warm(*opt, 3, 2);
    refused([&] { warm.step(-1.0); }, "CosineAnnealingWarmRestarts.step", "epoch", "got -1");
    refused([&] { warm.step(kNaN); }, "CosineAnnealingWarmRestarts.step", "epoch", "got nan");
    CHECK(warm.last_epoch() == 0);
    // ConstantLR's edges that are fine: factor 1, total_iters 1; PolynomialLR's power 0.
    ConstantLR one(*opt, 1.0, 1);
    PolynomialLR flat(*opt, 1, 0.0);
    CHECK(flat.closed_form_lr(1, 1) == 0.03);
  }
  SECTION("OneCycleLR") {
    auto one_cycle = [&](const OneCycleLROptions& o) { return [&, o] { (void)OneCycleLR(*opt, o); }; };
    refused(one_cycle(OneCycleLROptions(1.0)), "OneCycleLR", "total_steps, or epochs and steps_per_epoch", "");
    refused(one_cycle(OneCycleLROptions(1.0).epochs(3)), "OneCycleLR", "epochs and steps_per_epoch", "");
    refused(one_cycle(OneCycleLROptions(1.0).total_steps(0)), "OneCycleLR", "total_steps", "got 0");
    refused(one_cycle(OneCycleLROptions(1.0).epochs(0).steps_per_epoch(5)), "OneCycleLR", "epochs", "got 0");
    refused(one_cycle(OneCycleLROptions(1.0).epochs(5).steps_per_epoch(-1)), "OneCycleLR", "steps_per_epoch", "got -1");
    refused(one_cycle(OneCycleLROptions(1.0).total_steps(10).pct_start(1.5)), "OneCycleLR", "pct_start", "got 1.5");
    refused(one_cycle(OneCycleLROptions(1.0).total_steps(10).pct_start(kNaN)), "OneCycleLR", "pct_start", "got nan");
    refused(one_cycle(OneCycleLROptions(1.0).total_steps(10).pct_start(0.6).three_phase(true)), "OneCycleLR",
            "three_phase, pct_start", "got 0.6");
    // pct_start * total_steps = 1: the warm-up ends at step 0 and PyTorch computes 0 / 0 there.
    refused(one_cycle(OneCycleLROptions(1.0).total_steps(20).pct_start(0.05)), "OneCycleLR", "warm-up phase no steps",
            "pct_start 0.05 with total_steps 20");
    // pct_start 1: the annealing phase ends where the warm-up does; PyTorch divides by zero at
    // step total_steps.
    refused(one_cycle(OneCycleLROptions(1.0).total_steps(20).pct_start(1.0)), "OneCycleLR", "annealing phase no steps",
            "pct_start 1");
    refused(one_cycle(OneCycleLROptions({1.0, 2.0, 3.0}).total_steps(10)), "OneCycleLR", "max_lr", "got 3 values");
    refused(one_cycle(OneCycleLROptions(-1.0).total_steps(10)), "OneCycleLR", "max_lr 0", "got -1");
    refused(one_cycle(OneCycleLROptions(1.0).total_steps(10).div_factor(0.0)), "OneCycleLR", "div_factor", "got 0");
    refused(one_cycle(OneCycleLROptions(1.0).total_steps(10).final_div_factor(inf)), "OneCycleLR", "final_div_factor",
            "got inf");
    refused(one_cycle(OneCycleLROptions(1.0).total_steps(10).base_momentum(-0.5)), "OneCycleLR", "base_momentum 0",
            "got -0.5");
    refused(one_cycle(OneCycleLROptions(1.0).total_steps(10).max_momentum({0.9, kNaN})), "OneCycleLR", "max_momentum 1",
            "got nan");
    // Adam's beta1 must stay below 1; Adagrad has no momentum to cycle.
    std::unique_ptr<Optimizer> adam =
        make_optimizer(Opt::adam, wick::ones({1}, TensorOptions(kFloat64).requires_grad()),
                       wick::ones({1}, TensorOptions(kFloat64).requires_grad()));
    refused([&] { (void)OneCycleLR(*adam, OneCycleLROptions(1.0).total_steps(10).max_momentum(1.0)); }, "OneCycleLR",
            "max_momentum 0", "[0, 1)");
    Tensor r = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
    Adagrad adagrad(std::vector<Tensor>{r}, AdagradOptions(0.1));
    refused([&] { (void)OneCycleLR(adagrad, OneCycleLROptions(1.0).total_steps(10)); }, "OneCycleLR", "cycle_momentum",
            "Adagrad has neither");
    OneCycleLR fine(adagrad, OneCycleLROptions(1.0).total_steps(10).cycle_momentum(false));
    CHECK_THROWS_AS(fine.closed_form_momentum(0, 0), StateError);
    // The edges that are fine: pct_start 0 and 0.5 with three_phase, total_steps 1.
    OneCycleLR three(*opt, OneCycleLROptions(1.0).total_steps(10).pct_start(0.5).three_phase(true));
    OneCycleLR single(*opt, OneCycleLROptions(1.0).total_steps(1));
    single.step();
    CHECK_THROWS_AS(single.step(), StateError);
  }
  SECTION("CyclicLR") {
    using Mode = CyclicLR::Mode;
    refused([&] { (void)CyclicLR(*opt, CyclicLROptions(-0.01, 0.1)); }, "CyclicLR", "base_lr 0", "got -0.01");
    refused(
        [&] {
          (void)CyclicLR(*opt, CyclicLROptions({0.01, 0.01, 0.01}, {0.1}));
        },
        "CyclicLR", "base_lr", "got 3 values");
    refused([&] { (void)CyclicLR(*opt, CyclicLROptions(0.01, inf)); }, "CyclicLR", "max_lr 0", "got inf");
    refused([&] { (void)CyclicLR(*opt, CyclicLROptions(0.01, 0.1).step_size_up(0)); }, "CyclicLR", "step_size_up",
            "got 0");  // PyTorch: ZeroDivisionError
    refused([&] { (void)CyclicLR(*opt, CyclicLROptions(0.01, 0.1).step_size_down(-2)); }, "CyclicLR", "step_size_down",
            "got -2");
    refused([&] { (void)CyclicLR(*opt, CyclicLROptions(0.01, 0.1).mode(Mode::exp_range).gamma(1.5)); }, "CyclicLR",
            "gamma", "got 1.5");
    refused([&] { (void)CyclicLR(*opt, CyclicLROptions(0.01, 0.1).base_momentum(-1.0)); }, "CyclicLR",
            "base_momentum 0", "got -1");
    // As PyTorch 1.13, CyclicLR cycles only 'momentum': Adam needs cycle_momentum(false).
    std::unique_ptr<Optimizer> adam =
        make_optimizer(Opt::adam, wick::ones({1}, TensorOptions(kFloat64).requires_grad()),
                       wick::ones({1}, TensorOptions(kFloat64).requires_grad()));
    refused([&] { (void)CyclicLR(*adam, CyclicLROptions(0.01, 0.1)); }, "CyclicLR", "cycle_momentum",
            "pass cycle_momentum(false)");
    // gamma is only read by exp_range; step_size_down 0 is a sawtooth.
    CyclicLR sawtooth(*opt, CyclicLROptions(0.01, 0.1).gamma(5.0).step_size_up(2).step_size_down(0));
    sawtooth.step();
    CHECK(opt->param_groups()[0].options().get_lr() == Approx(0.055).epsilon(1e-15));
    sawtooth.step();
    CHECK(opt->param_groups()[0].options().get_lr() == Approx(0.01).epsilon(1e-15));
  }
  SECTION("SequentialLR") {
    auto constant = std::make_shared<ConstantLR>(*opt, 0.5, 2);
    auto exponential = std::make_shared<ExponentialLR>(*opt, 0.9);
    using List = std::vector<std::shared_ptr<LRScheduler>>;
    refused([&] { (void)SequentialLR(*opt, List{}, {}); }, "SequentialLR", "at least one scheduler", "");
    refused([&] { (void)SequentialLR(*opt, List{constant, nullptr}, {2}); }, "SequentialLR", "scheduler 1", "null");
    refused(
        [&] {
          (void)SequentialLR(*opt, List{constant, exponential}, {});
        },
        "SequentialLR", "one milestone fewer than schedulers (2 schedulers)", "got 0 milestones");
    refused(
        [&] {
          (void)SequentialLR(*opt, List{constant, exponential}, {0});
        },
        "SequentialLR", "milestones", "got [0]");
    refused(
        [&] {
          (void)SequentialLR(*opt, List{constant, exponential, constant}, {2, 4});
        },
        "SequentialLR", "schedulers 0 and 2", "the same ConstantLR");
    auto third = std::make_shared<StepLR>(*opt, 2);
    refused(
        [&] {
          (void)SequentialLR(*opt, List{constant, exponential, third}, {5, 3});
        },
        "SequentialLR", "strictly increasing", "got [5, 3]");
    std::unique_ptr<Optimizer> other = make_optimizer(Opt::sgd, p, q);
    auto elsewhere = std::make_shared<ExponentialLR>(*other, 0.9);
    refused(
        [&] {
          (void)SequentialLR(*opt, List{constant, elsewhere}, {2});
        },
        "SequentialLR", "scheduler 1", "another optimizer");
    auto nested =
        std::make_shared<SequentialLR>(*opt, List{std::make_shared<ConstantLR>(*opt, 0.5, 2)}, std::vector<int64_t>{});
    refused(
        [&] {
          (void)SequentialLR(*opt, List{constant, nested}, {2});
        },
        "SequentialLR", "scheduler 1", "is a SequentialLR");
    // A refused resume of the scheduler in charge changes nothing.
    auto cycle = std::make_shared<OneCycleLR>(*opt, OneCycleLROptions(0.5).total_steps(4));
    SequentialLR seq(*opt, List{std::make_shared<ConstantLR>(*opt, 0.5, 2), cycle}, {2});
    const std::vector<double> base = seq.base_lrs();
    refused([&] { seq.resume(9, base); }, "OneCycleLR.resume", "last_epoch 7", "past total_steps 4");
    CHECK(seq.last_epoch() == 0);
    CHECK(seq.schedulers()[0]->base_lrs() == base);
    CHECK(cycle->base_lrs() == std::vector<double>{0.02, 0.02});
  }
}

TEST_CASE("optim: a cycle scheduler whose optimizer gained a group refuses to step", "[optim][scheduler]") {
  Tensor p = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  Tensor q = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  Tensor r = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  std::unique_ptr<Optimizer> opt = make_optimizer(Opt::sgd_momentum, p, q);
  CyclicLR cyclic(*opt, CyclicLROptions(0.01, 0.1).step_size_up(2));
  CosineAnnealingWarmRestarts warm(*opt, 3);
  opt->add_param_group(ParamGroup(std::vector<Tensor>{r}));
  CHECK_THROWS_AS(cyclic.step(), StateError);
  CHECK_THROWS_WITH(cyclic.step(), Catch::Contains("CyclicLR.step") && Catch::Contains("3 parameter groups") &&
                                       Catch::Contains("made for 2"));
  CHECK_THROWS_AS(warm.step(), StateError);
  CHECK_THROWS_AS(warm.step(2.5), StateError);
  CHECK(cyclic.last_epoch() == 0);
  CHECK(warm.last_epoch() == 0);
  using List = std::vector<std::shared_ptr<LRScheduler>>;
  auto stale = std::make_shared<CyclicLR>(*opt, CyclicLROptions(0.01, 0.1));
  opt->add_param_group(ParamGroup(std::vector<Tensor>{wick::ones({1}, TensorOptions(kFloat64).requires_grad())}));
  CHECK_THROWS_AS(SequentialLR(*opt, List{stale}, {}), StateError);
}
