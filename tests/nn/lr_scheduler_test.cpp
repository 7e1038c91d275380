// wick::optim's schedulers: StepLR and CosineAnnealingLR against PyTorch 1.13's lr sequences,
// resumed runs that continue bit for bit, and the options they refuse.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
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

TEST_CASE("optim: StepLR gives PyTorch's lr sequence", "[optim][scheduler]") {
  Tensor p = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  Tensor q = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  std::vector<ParamGroup> groups;
  groups.emplace_back(std::vector<Tensor>{p});
  groups.emplace_back(std::vector<Tensor>{q}, std::make_unique<SGDOptions>(0.5));
  SGD opt(std::move(groups), SGDOptions(0.1));
  StepLR sched(opt, 3, 0.1);
  // Hand-computed: epochs 0-2: base, 3-5: base/10, 6-8: base/100, 9: base/1000.
  const std::vector<double> want0 = {0.1, 0.1, 0.1, 0.01, 0.01, 0.01, 0.001, 0.001, 0.001, 0.0001};
  for (int e = 0; e < 10; ++e) {
    INFO("epoch " << e);
    CHECK(sched.last_epoch() == e);
    CHECK(opt.param_groups()[0].options().get_lr() == Approx(want0[e]).epsilon(1e-12));
    CHECK(opt.param_groups()[1].options().get_lr() == Approx(want0[e] * 5).epsilon(1e-12));
    CHECK(sched.get_last_lr()[0] == Approx(sched.closed_form_lr(0, e)).epsilon(1e-12));
    sched.step();
  }
}

TEST_CASE("optim: CosineAnnealingLR gives PyTorch's lr sequence", "[optim][scheduler]") {
  Tensor p = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  Adam opt(std::vector<Tensor>{p}, AdamOptions(0.1));
  CosineAnnealingLR sched(opt, 4, 0.02);
  // Hand-computed: eta_min + (0.1 - 0.02) * (1 + cos(pi * e / 4)) / 2 for e = 0..4, then back up.
  const double r = std::sqrt(0.5);
  const std::vector<double> want = {0.1,  0.02 + 0.04 * (1 + r), 0.06, 0.02 + 0.04 * (1 - r),
                                    0.02, 0.02 + 0.04 * (1 - r), 0.06, 0.02 + 0.04 * (1 + r),
                                    0.1,  0.02 + 0.04 * (1 + r)};
  for (int e = 0; e < static_cast<int>(want.size()); ++e) {
    INFO("epoch " << e);
    CHECK(opt.param_groups()[0].options().get_lr() == Approx(want[e]).epsilon(1e-12));
    CHECK(sched.closed_form_lr(0, e) == Approx(want[e]).epsilon(1e-12));
    sched.step();
  }
  // resume() keeps the lr the optimizer's state restored and continues recursively from it.
  Adam opt2(std::vector<Tensor>{p}, AdamOptions(0.1));
  CosineAnnealingLR s2(opt2, 4, 0.02);
  opt2.param_groups()[0].options().set_lr(0.06);  // what load_state_dict restores at epoch 2
  s2.resume(2, {0.1});
  CHECK(s2.last_epoch() == 2);
  CHECK(s2.base_lrs() == std::vector<double>{0.1});
  CHECK(s2.get_last_lr() == std::vector<double>{0.06});
  CHECK(opt2.param_groups()[0].options().get_lr() == 0.06);
  s2.step();
  CHECK(opt2.param_groups()[0].options().get_lr() == Approx(want[3]).epsilon(1e-12));
}

TEST_CASE("optim: a scheduler resumed after any epoch continues bit for bit", "[optim][scheduler]") {
  // resume() used to set each lr to the closed form, which differs from the recursive form in the
  // last bit at some epochs (CosineAnnealingLR at 2e-3: epochs 2, 7, 8; StepLR: 8, 9).
  SECTION("CosineAnnealingLR(T_max = 10) at lr 2e-3") {
    // PyTorch 1.13's lrs, epochs 0-10: optimizer.param_groups[0]['lr'] after each step of
    // torch.optim.lr_scheduler.CosineAnnealingLR(torch.optim.SGD([p], lr=2e-3), 10).
    const std::vector<double> torch_lrs = {
        0.002, 0.0019510565162951536, 0.0018090169943749473, 0.0015877852522924731,  0.0013090169943749475,
        0.001, 0.0006909830056250527, 0.000412214747707527,  0.00019098300562505268, 4.894348370484647e-05,
        0.0};
    const MakeScheduler cosine = [](Optimizer& o) { return std::make_unique<CosineAnnealingLR>(o, 10); };
    const auto whole = scheduled_lrs(cosine, {2e-3, 5e-4}, 10, 10);
    for (int64_t e = 0; e <= 10; ++e) {
      INFO("epoch " << e);
      CHECK(whole[e][0] == torch_lrs[e]);
    }
    for (int64_t k = 0; k < 10; ++k) {
      INFO("stopped after epoch " << k);
      CHECK(scheduled_lrs(cosine, {2e-3, 5e-4}, 10, k) == whole);
    }
  }
  SECTION("StepLR(step_size = 2, gamma = 0.1) at lr 0.1") {
    // PyTorch 1.13's lrs, epochs 0-12: torch.optim.lr_scheduler.StepLR(torch.optim.SGD([p], lr=0.1), 2, 0.1).
    const std::vector<double> torch_lrs = {0.1,
                                           0.1,
                                           0.010000000000000002,
                                           0.010000000000000002,
                                           0.0010000000000000002,
                                           0.0010000000000000002,
                                           0.00010000000000000003,
                                           0.00010000000000000003,
                                           1.0000000000000004e-05,
                                           1.0000000000000004e-05,
                                           1.0000000000000004e-06,
                                           1.0000000000000004e-06,
                                           1.0000000000000005e-07};
    const MakeScheduler step = [](Optimizer& o) { return std::make_unique<StepLR>(o, 2, 0.1); };
    const auto whole = scheduled_lrs(step, {0.1, 0.5}, 12, 12);
    for (int64_t e = 0; e <= 12; ++e) {
      INFO("epoch " << e);
      CHECK(whole[e][0] == torch_lrs[e]);
    }
    for (int64_t k = 0; k < 12; ++k) {
      INFO("stopped after epoch " << k);
      CHECK(scheduled_lrs(step, {0.1, 0.5}, 12, k) == whole);
    }
  }
}

TEST_CASE("optim: schedulers refuse bad options at construction and resume, naming them", "[optim][scheduler]") {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  Tensor p = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
  SGD opt(std::vector<Tensor>{p}, SGDOptions(0.1));
  const std::vector<std::pair<double, std::string>> bad = {{nan, "nan"}, {-0.1, "-0.1"}, {inf, "inf"}};
  for (const auto& [value, text] : bad) {
    INFO(text);
    CHECK_THROWS_AS(StepLR(opt, 5, value), ValueError);
    CHECK_THROWS_WITH(StepLR(opt, 5, value),
                      Catch::Contains("StepLR") && Catch::Contains("gamma") && Catch::Contains("got " + text));
    CHECK_THROWS_AS(CosineAnnealingLR(opt, 100, value), ValueError);
    CHECK_THROWS_WITH(CosineAnnealingLR(opt, 100, value), Catch::Contains("CosineAnnealingLR") &&
                                                              Catch::Contains("eta_min") &&
                                                              Catch::Contains("got " + text));
  }
  CHECK(opt.param_groups()[0].options().get_lr() == 0.1);  // a refused scheduler changed nothing
  StepLR zero(opt, 5, 0.0);                                // gamma 0 and eta_min 0 are fine
  CosineAnnealingLR cosine(opt, 100, 0.0);
  for (const auto& [value, text] : bad) {
    INFO(text);
    CHECK_THROWS_AS(cosine.resume(3, {value}), ValueError);
    CHECK_THROWS_WITH(cosine.resume(3, {value}),
                      Catch::Contains("CosineAnnealingLR.resume") && Catch::Contains("base lr 0 is " + text));
  }
  CHECK(cosine.last_epoch() == 0);
  CHECK(cosine.base_lrs() == std::vector<double>{0.1});
  CHECK_THROWS_WITH(cosine.resume(3, {0.1, 0.2}), Catch::Contains("one base lr per group (1)"));
  CHECK_THROWS_AS(cosine.closed_form_lr(1, 0), IndexError);
  CHECK_THROWS_WITH(zero.closed_form_lr(7, 0), Catch::Contains("StepLR.closed_form_lr") && Catch::Contains("group 7"));
  CHECK(zero.closed_form_lr(0, 5) == 0.0);
}
