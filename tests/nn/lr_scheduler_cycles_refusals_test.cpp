// The options, steps and resumes that wick::optim's ConstantLR, PolynomialLR,
// CosineAnnealingWarmRestarts, SequentialLR, OneCycleLR and CyclicLR refuse, each changing nothing
// and naming what it refused. Their sequences against PyTorch 1.13: lr_scheduler_cycles_test.cpp.
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

// A ValueError whose message names the scheduler, the option and what it got.
void refused(const std::function<void()>& f, const std::string& scheduler, const std::string& option,
             const std::string& got) {
  INFO(scheduler << " " << option << " " << got);
  CHECK_THROWS_AS(f(), ValueError);
  CHECK_THROWS_WITH(f(), Catch::Contains(scheduler) && Catch::Contains(option) && Catch::Contains(got));
}

}  // namespace

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
