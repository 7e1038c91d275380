// wick::optim's ExponentialLR, MultiStepLR, LinearLR and LambdaLR against PyTorch 1.13's lr
// sequences (with their closed forms and resumed runs), the options they refuse, and LambdaLR's
// refused steps.
//
// Every sequence below was printed by PyTorch 1.13 (/usr/bin/python3) with
//   p, q = torch.nn.Parameter(torch.ones(1)), torch.nn.Parameter(torch.ones(1))
//   o = torch.optim.SGD([{'params': [p]}, {'params': [q], 'lr': 0.03}], lr=0.1)
//   s = <the scheduler>(o, ...)
//   rows = [[g['lr'] for g in o.param_groups]]
//   for _ in range(12): s.step(); rows.append([g['lr'] for g in o.param_groups])
// and each lr written with repr() (the shortest text that reads back as the same double).
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "lr_scheduler_runs.h"
#include "wick/autograd/functions.h"
#include "wick/nn/optim/optim.h"

using namespace wick;
using namespace wick::optim;
using namespace wick::optim::testing;

namespace {

using Rows = std::vector<std::vector<double>>;

// Epochs 0..12 of `make` with two groups at 0.1 and 0.03 equal PyTorch's `want` bit for bit; the
// closed form agrees with the recursive form within 1e-12 relative; a run stopped after any epoch
// and resumed continues bit for bit.
void check_schedule(const MakeScheduler& make, const Rows& want) {
  const std::vector<double> lrs = {0.1, 0.03};
  const Rows whole = scheduled_lrs(make, lrs, 12, 12);
  REQUIRE(whole.size() == want.size());
  for (size_t e = 0; e < want.size(); ++e) {
    INFO("epoch " << e);
    CHECK(whole[e] == want[e]);
  }
  Tensor p = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  Tensor q = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  std::unique_ptr<Optimizer> opt = two_group_adam(p, q, lrs);
  std::unique_ptr<LRScheduler> sched = make(*opt);
  for (int64_t e = 0; e <= 12; ++e) {
    for (size_t g = 0; g < 2; ++g) {
      INFO("epoch " << e << ", group " << g);
      CHECK(sched->closed_form_lr(g, e) == Approx(whole[e][g]).epsilon(1e-12));
    }
    sched->step();
  }
  for (int64_t k = 0; k < 12; ++k) {
    INFO("stopped after epoch " << k);
    CHECK(scheduled_lrs(make, lrs, 12, k) == whole);
  }
}

}  // namespace

TEST_CASE("optim: ExponentialLR gives PyTorch's lr sequence and resumes bit for bit", "[optim][scheduler]") {
  // s = torch.optim.lr_scheduler.ExponentialLR(o, gamma=0.9)
  // Hand-computed: epoch 2, group 1: 0.03 * 0.9^2 = 0.0243.
  const Rows torch_lrs = {{0.1, 0.03},
                          {0.09000000000000001, 0.027},
                          {0.08100000000000002, 0.0243},
                          {0.07290000000000002, 0.02187},
                          {0.06561000000000002, 0.019683000000000003},
                          {0.05904900000000002, 0.017714700000000003},
                          {0.05314410000000002, 0.015943230000000003},
                          {0.04782969000000002, 0.014348907000000003},
                          {0.043046721000000024, 0.012914016300000003},
                          {0.03874204890000002, 0.011622614670000003},
                          {0.03486784401000002, 0.010460353203000003},
                          {0.03138105960900001, 0.009414317882700002},
                          {0.028242953648100012, 0.008472886094430003}};
  CHECK(torch_lrs[2][1] == Approx(0.03 * 0.9 * 0.9).epsilon(1e-15));
  check_schedule([](Optimizer& o) { return std::make_unique<ExponentialLR>(o, 0.9); }, torch_lrs);
}

TEST_CASE("optim: MultiStepLR counts repeated and unsorted milestones as PyTorch does", "[optim][scheduler]") {
  // s = torch.optim.lr_scheduler.MultiStepLR(o, milestones=[9, 2, 6, 6], gamma=0.1)
  // Hand-computed: epochs 0-1: base; 2-5: base/10; 6-8: base/1000 (6 is listed twice); 9-12:
  // base/10^4.
  const Rows torch_lrs = {{0.1, 0.03},
                          {0.1, 0.03},
                          {0.010000000000000002, 0.003},
                          {0.010000000000000002, 0.003},
                          {0.010000000000000002, 0.003},
                          {0.010000000000000002, 0.003},
                          {0.00010000000000000005, 3.0000000000000008e-05},
                          {0.00010000000000000005, 3.0000000000000008e-05},
                          {0.00010000000000000005, 3.0000000000000008e-05},
                          {1.0000000000000006e-05, 3.000000000000001e-06},
                          {1.0000000000000006e-05, 3.000000000000001e-06},
                          {1.0000000000000006e-05, 3.000000000000001e-06},
                          {1.0000000000000006e-05, 3.000000000000001e-06}};
  CHECK(torch_lrs[6][0] == Approx(0.1 / 1000).epsilon(1e-14));
  CHECK(torch_lrs[9][1] == Approx(0.03 / 10000).epsilon(1e-14));
  check_schedule(
      [](Optimizer& o) {
        return std::make_unique<MultiStepLR>(o, std::vector<int64_t>{9, 2, 6, 6}, 0.1);
      },
      torch_lrs);
  Tensor p = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  SGD opt(std::vector<Tensor>{p}, SGDOptions(0.1));
  MultiStepLR sched(opt, {9, 2, 6, 6});
  CHECK(sched.milestones() == std::vector<int64_t>{2, 6, 6, 9});
  // A milestone at 0 decays at construction (the initial step), as in PyTorch.
  MultiStepLR at_zero(opt, {0}, 0.5);
  CHECK(opt.param_groups()[0].options().get_lr() == 0.05);
}

TEST_CASE("optim: LinearLR gives PyTorch's lr sequence, warming up and decaying", "[optim][scheduler]") {
  SECTION("start_factor 0.25, end_factor 1, total_iters 8") {
    // s = torch.optim.lr_scheduler.LinearLR(o, start_factor=0.25, total_iters=8)
    // Hand-computed: epoch 4, group 0: 0.1 * (0.25 + 0.75 * 4 / 8) = 0.0625; from epoch 8 on,
    // 0.1 (PyTorch's recursive form lands one ulp below: 0.09999999999999999).
    const Rows torch_lrs = {{0.025, 0.0075},
                            {0.034375, 0.010312499999999999},
                            {0.043750000000000004, 0.013124999999999998},
                            {0.053125, 0.015937499999999997},
                            {0.0625, 0.018749999999999996},
                            {0.071875, 0.021562499999999995},
                            {0.08124999999999999, 0.024374999999999994},
                            {0.090625, 0.027187499999999993},
                            {0.09999999999999999, 0.029999999999999992},
                            {0.09999999999999999, 0.029999999999999992},
                            {0.09999999999999999, 0.029999999999999992},
                            {0.09999999999999999, 0.029999999999999992},
                            {0.09999999999999999, 0.029999999999999992}};
    CHECK(torch_lrs[4][0] == 0.0625);
    check_schedule([](Optimizer& o) { return std::make_unique<LinearLR>(o, 0.25, 1.0, 8); }, torch_lrs);
  }
  SECTION("start_factor 1, end_factor 0.2, total_iters 5") {
    // s = torch.optim.lr_scheduler.LinearLR(o, start_factor=1.0, end_factor=0.2, total_iters=5)
    // Hand-computed: epoch 2, group 0: 0.1 * (1 - 0.8 * 2 / 5) = 0.068.
    const Rows torch_lrs = {{0.1, 0.03},
                            {0.084, 0.025199999999999997},
                            {0.068, 0.020399999999999998},
                            {0.052, 0.015599999999999998},
                            {0.036, 0.010799999999999999},
                            {0.019999999999999997, 0.005999999999999998},
                            {0.019999999999999997, 0.005999999999999998},
                            {0.019999999999999997, 0.005999999999999998},
                            {0.019999999999999997, 0.005999999999999998},
                            {0.019999999999999997, 0.005999999999999998},
                            {0.019999999999999997, 0.005999999999999998},
                            {0.019999999999999997, 0.005999999999999998},
                            {0.019999999999999997, 0.005999999999999998}};
    CHECK(torch_lrs[2][0] == Approx(0.068).epsilon(1e-15));
    check_schedule([](Optimizer& o) { return std::make_unique<LinearLR>(o, 1.0, 0.2, 5); }, torch_lrs);
  }
  SECTION("the defaults: start_factor 1/3, end_factor 1, total_iters 5") {
    Tensor p = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
    SGD opt(std::vector<Tensor>{p}, SGDOptions(0.3));
    LinearLR sched(opt);
    CHECK(opt.param_groups()[0].options().get_lr() == Approx(0.1).epsilon(1e-15));
    for (int i = 0; i < 5; ++i) sched.step();
    CHECK(opt.param_groups()[0].options().get_lr() == Approx(0.3).epsilon(1e-14));
  }
}

TEST_CASE("optim: LambdaLR gives PyTorch's lr sequence", "[optim][scheduler]") {
  SECTION("one lambda per group") {
    // s = torch.optim.lr_scheduler.LambdaLR(o, [lambda e: 0.95 ** e,
    //                                           lambda e: (e + 1) / 4 if e < 4 else 0.5 ** (e // 4)])
    // Hand-computed: epoch 3: 0.1 * 0.95^3 = 0.0857375 and 0.03 * 4/4 = 0.03; epoch 4: 0.03 * 0.5.
    const Rows torch_lrs = {{0.1, 0.0075},
                            {0.095, 0.015},
                            {0.09025, 0.0225},
                            {0.0857375, 0.03},
                            {0.081450625, 0.015},
                            {0.07737809374999999, 0.015},
                            {0.07350918906249998, 0.015},
                            {0.06983372960937498, 0.015},
                            {0.06634204312890622, 0.0075},
                            {0.0630249409724609, 0.0075},
                            {0.05987369392383787, 0.0075},
                            {0.05688000922764597, 0.0075},
                            {0.05403600876626367, 0.00375}};
    CHECK(torch_lrs[3][0] == Approx(0.0857375).epsilon(1e-15));
    CHECK(torch_lrs[4][1] == 0.015);
    check_schedule(
        [](Optimizer& o) {
          return std::make_unique<LambdaLR>(
              o, std::vector<LrLambda>{[](int64_t e) { return std::pow(0.95, static_cast<double>(e)); },
                                       [](int64_t e) {
                                         return e < 4 ? static_cast<double>(e + 1) / 4
                                                      : std::pow(0.5, static_cast<double>(e / 4));
                                       }});
        },
        torch_lrs);
  }
  SECTION("one lambda for every group") {
    // s = torch.optim.lr_scheduler.LambdaLR(o, lambda e: 1 / (1 + e))
    // Hand-computed: epoch 3: 0.1 / 4 = 0.025 and 0.03 / 4 = 0.0075.
    const Rows torch_lrs = {{0.1, 0.03},
                            {0.05, 0.015},
                            {0.03333333333333333, 0.009999999999999998},
                            {0.025, 0.0075},
                            {0.020000000000000004, 0.006},
                            {0.016666666666666666, 0.004999999999999999},
                            {0.014285714285714285, 0.004285714285714285},
                            {0.0125, 0.00375},
                            {0.011111111111111112, 0.003333333333333333},
                            {0.010000000000000002, 0.003},
                            {0.009090909090909092, 0.002727272727272727},
                            {0.008333333333333333, 0.0024999999999999996},
                            {0.007692307692307693, 0.002307692307692308}};
    CHECK(torch_lrs[3] == std::vector<double>{0.025, 0.0075});
    check_schedule(
        [](Optimizer& o) {
          return std::make_unique<LambdaLR>(o, [](int64_t e) { return 1.0 / static_cast<double>(1 + e); });
        },
        torch_lrs);
  }
}

TEST_CASE("optim: a LambdaLR step refused by its lambda changes nothing", "[optim][scheduler]") {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  Tensor p = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  Tensor q = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  std::unique_ptr<Optimizer> opt = two_group_adam(p, q, {0.1, 0.03});
  double bad = nan;
  bool throw_once = false;
  // Group 0 halves every epoch; group 1's factor is `bad` at epoch 3 (or throws there once).
  LambdaLR sched(*opt, std::vector<LrLambda>{[](int64_t e) { return std::pow(0.5, static_cast<double>(e)); },
                                             [&](int64_t e) {
                                               if (e != 3) return 1.0;
                                               if (throw_once) {
                                                 throw_once = false;
                                                 throw std::runtime_error("lambda failed");
                                               }
                                               return bad;
                                             }});
  sched.step();
  sched.step();
  const std::vector<double> at2 = {0.025, 0.03};
  REQUIRE(group_lrs(*opt) == at2);
  auto unchanged = [&] {
    CHECK(sched.last_epoch() == 2);
    CHECK(group_lrs(*opt) == at2);
    CHECK(sched.get_last_lr() == at2);
  };
  for (const auto& [value, text] :
       std::vector<std::pair<double, std::string>>{{nan, "nan"}, {-0.5, "-0.5"}, {inf, "inf"}}) {
    INFO(text);
    bad = value;
    CHECK_THROWS_AS(sched.step(), ValueError);
    unchanged();
    CHECK_THROWS_WITH(sched.step(), Catch::Contains("LambdaLR") && Catch::Contains("group 1") &&
                                        Catch::Contains("returned " + text + " at epoch 3"));
    unchanged();
  }
  // A finite factor whose lr overflows (with a base lr of 1e10 from resume).
  bad = 1e308;
  sched.resume(2, {0.1, 1e10});
  CHECK_THROWS_WITH(sched.step(), Catch::Contains("giving lr inf"));
  CHECK(sched.last_epoch() == 2);
  CHECK(group_lrs(*opt) == at2);
  sched.resume(2, {0.1, 0.03});
  // An exception the lambda throws propagates and the step changes nothing; the next step works.
  throw_once = true;
  bad = 2.0;
  CHECK_THROWS_AS(sched.step(), std::runtime_error);
  unchanged();
  sched.step();
  CHECK(sched.last_epoch() == 3);
  CHECK(group_lrs(*opt) == std::vector<double>{0.0125, 0.06});
}

TEST_CASE("optim: ExponentialLR, MultiStepLR, LinearLR and LambdaLR refuse bad options, naming them",
          "[optim][scheduler]") {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  Tensor p = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  Tensor q = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  std::unique_ptr<Optimizer> opt = two_group_adam(p, q, {0.1, 0.03});
  auto refused = [](const std::function<void()>& make, const std::string& scheduler, const std::string& option,
                    const std::string& got) {
    INFO(scheduler << " " << option << " " << got);
    CHECK_THROWS_AS(make(), ValueError);
    CHECK_THROWS_WITH(make(), Catch::Contains(scheduler) && Catch::Contains(option) && Catch::Contains(got));
  };
  for (const auto& bad : std::vector<std::pair<double, std::string>>{{nan, "nan"}, {-0.1, "-0.1"}, {inf, "inf"}}) {
    const double value = bad.first;
    const std::string got = "got " + bad.second;
    refused([&] { (void)ExponentialLR(*opt, value); }, "ExponentialLR", "gamma", got);
    refused([&] { (void)MultiStepLR(*opt, {2}, value); }, "MultiStepLR", "gamma", got);
    refused([&] { (void)LinearLR(*opt, value); }, "LinearLR", "start_factor", got);
    refused([&] { (void)LinearLR(*opt, 0.5, value); }, "LinearLR", "end_factor", got);
  }
  refused([&] { (void)MultiStepLR(*opt, {3, -1}); }, "MultiStepLR", "milestones", "got -1");
  refused([&] { (void)LinearLR(*opt, 0.0); }, "LinearLR", "start_factor",
          "got 0");  // PyTorch 1.13: ZeroDivisionError later
  refused([&] { (void)LinearLR(*opt, 1.5); }, "LinearLR", "start_factor", "got 1.5");
  refused([&] { (void)LinearLR(*opt, 0.5, 1.5); }, "LinearLR", "end_factor", "got 1.5");
  refused([&] { (void)LinearLR(*opt, 0.5, 1.0, 0); }, "LinearLR", "total_iters", "got 0");
  refused([&] { (void)LinearLR(*opt, 0.5, 1.0, -3); }, "LinearLR", "total_iters", "got -3");
  refused([&] { (void)LambdaLR(*opt, LrLambda()); }, "LambdaLR", "lr_lambda", "empty std::function");
  refused([&] { (void)LambdaLR(*opt, std::vector<LrLambda>{[](int64_t) { return 1.0; }}); }, "LambdaLR",
          "one lr_lambda per parameter group (2)", "got 1");
  refused(
      [&] {
        (void)LambdaLR(*opt, std::vector<LrLambda>{[](int64_t) { return 1.0; }, LrLambda()});
      },
      "LambdaLR", "lr_lambda 1", "empty std::function");
  refused([&] { (void)LambdaLR(*opt, [](int64_t) { return -1.0; }); }, "LambdaLR", "group 0",
          "returned -1 at epoch 0");                         // the initial step
  CHECK(group_lrs(*opt) == std::vector<double>{0.1, 0.03});  // a refused scheduler changed nothing
  // The edges that are fine: gamma 0, start_factor 1, end_factor 0, total_iters 1, milestone 0.
  ExponentialLR zero(*opt, 0.0);
  CHECK(zero.closed_form_lr(1, 3) == 0.0);
  LinearLR edges(*opt, 1.0, 0.0, 1);
  CHECK_THROWS_AS(edges.closed_form_lr(2, 0), IndexError);
  CHECK_THROWS_WITH(edges.closed_form_lr(2, 0),
                    Catch::Contains("LinearLR.closed_form_lr") && Catch::Contains("group 2"));
}
