// wick::optim's RMSprop and Adagrad: bad options refused naming the option, a step with an invalid
// group or parameters without a gradient changing nothing, and Adagrad's state for a group added
// later. The trajectories: optim_rmsprop_adagrad_test.cpp.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/oracle.h"
#include "support/rmsprop_adagrad_reference.h"
#include "support/temp_dir.h"
#include "wick/autograd/functions.h"
#include "wick/nn/checkpoint.h"
#include "wick/nn/optim/optim.h"

using namespace wick;
using namespace wick::optim;
using namespace wick::test::rmsprop_adagrad_reference;

TEST_CASE("optim: RMSprop and Adagrad refuse bad options, naming the option", "[optim]") {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  Tensor p = wick::ones({2}, TensorOptions(kFloat64).requires_grad());
  const std::vector<Tensor> ps = {p};
  const std::vector<std::pair<std::string, std::function<void()>>> bad = {
      {"RMSprop: invalid learning rate -1", [&] { RMSprop(ps, RMSpropOptions(-1)); }},
      {"RMSprop: invalid learning rate nan", [&] { RMSprop(ps, RMSpropOptions(nan)); }},
      {"RMSprop: invalid eps -0.5", [&] { RMSprop(ps, RMSpropOptions().eps(-0.5)); }},
      {"RMSprop: invalid eps inf", [&] { RMSprop(ps, RMSpropOptions().eps(inf)); }},
      {"RMSprop: invalid alpha -0.5", [&] { RMSprop(ps, RMSpropOptions().alpha(-0.5)); }},
      {"RMSprop: invalid alpha nan", [&] { RMSprop(ps, RMSpropOptions().alpha(nan)); }},
      {"RMSprop: invalid momentum -0.1", [&] { RMSprop(ps, RMSpropOptions().momentum(-0.1)); }},
      {"RMSprop: invalid momentum inf", [&] { RMSprop(ps, RMSpropOptions().momentum(inf)); }},
      {"RMSprop: invalid weight_decay -1", [&] { RMSprop(ps, RMSpropOptions().weight_decay(-1)); }},
      {"RMSprop: invalid weight_decay nan", [&] { RMSprop(ps, RMSpropOptions().weight_decay(nan)); }},
      {"Adagrad: invalid learning rate -1", [&] { Adagrad(ps, AdagradOptions(-1)); }},
      {"Adagrad: invalid learning rate inf", [&] { Adagrad(ps, AdagradOptions(inf)); }},
      {"Adagrad: invalid lr_decay -0.1", [&] { Adagrad(ps, AdagradOptions().lr_decay(-0.1)); }},
      {"Adagrad: invalid lr_decay nan", [&] { Adagrad(ps, AdagradOptions().lr_decay(nan)); }},
      {"Adagrad: invalid weight_decay -1", [&] { Adagrad(ps, AdagradOptions().weight_decay(-1)); }},
      {"Adagrad: invalid initial_accumulator_value -0.5",
       [&] { Adagrad(ps, AdagradOptions().initial_accumulator_value(-0.5)); }},
      {"Adagrad: invalid initial_accumulator_value inf",
       [&] { Adagrad(ps, AdagradOptions().initial_accumulator_value(inf)); }},
      {"Adagrad: invalid eps -1", [&] { Adagrad(ps, AdagradOptions().eps(-1)); }},
      {"Adagrad: invalid eps nan", [&] { Adagrad(ps, AdagradOptions().eps(nan)); }},
      // The defaults are checked even when every group has its own options (as PyTorch).
      {"RMSprop: invalid alpha -1",
       [&] {
         RMSprop(std::vector<ParamGroup>{ParamGroup(ps, std::make_unique<RMSpropOptions>())},
                 RMSpropOptions().alpha(-1));
       }},
      {"Adagrad: invalid lr_decay -1",
       [&] {
         Adagrad(std::vector<ParamGroup>{ParamGroup(ps, std::make_unique<AdagradOptions>())},
                 AdagradOptions().lr_decay(-1));
       }},
  };
  for (const auto& [msg, f] : bad) {
    INFO(msg);
    CHECK_THROWS_AS(f(), ValueError);
    CHECK_THROWS_WITH(f(), Catch::Contains(msg));
  }
  // As PyTorch: alpha has no upper bound, and eps = 0 is allowed.
  RMSprop big_alpha(ps, RMSpropOptions().alpha(1.5).eps(0));
  Adagrad no_eps(ps, AdagradOptions().eps(0));

  // A bad value in a loaded state dict is refused with its own class, nothing changed.
  RMSprop rms(ps, RMSpropOptions(0.1));
  OptimizerStateDict sd = rms.state_dict();
  sd.param_groups[0].options = RMSpropOptions(0.1).momentum(-2).values();
  CHECK_THROWS_AS(rms.load_state_dict(sd), ValueError);
  CHECK_THROWS_WITH(rms.load_state_dict(sd), Catch::Contains("RMSprop: invalid momentum -2"));
  CHECK(static_cast<const RMSpropOptions&>(rms.param_groups()[0].options()).momentum() == 0);
  sd.param_groups[0].options.emplace_back("foreach", 0);  // PyTorch's, not wick's
  CHECK_THROWS_WITH(rms.load_state_dict(sd), Catch::Contains("unknown foreach"));

  // add_param_group adds nothing when the group's options are bad.
  Tensor q = wick::ones({2}, TensorOptions(kFloat64).requires_grad());
  Adagrad ada(ps, AdagradOptions(0.1));
  auto bad_group = std::make_unique<AdagradOptions>(0.1);
  bad_group->initial_accumulator_value(-1);
  CHECK_THROWS_WITH(ada.add_param_group(ParamGroup({q}, std::move(bad_group))),
                    Catch::Contains("Adagrad: invalid initial_accumulator_value -1"));
  CHECK(ada.param_groups().size() == 1);
  CHECK(ada.state(q) == nullptr);
}

TEST_CASE("optim: an RMSprop or Adagrad step with an invalid group changes nothing", "[optim]") {
  for (const std::string kind : {"RMSprop", "Adagrad"}) {
    INFO(kind);
    Tensor p = wick::ones({3}, TensorOptions(kFloat64).requires_grad());
    Tensor q = wick::ones({2}, TensorOptions(kFloat64).requires_grad());
    p.set_grad(wick::ones({3}, TensorOptions(kFloat64)));
    q.set_grad(wick::ones({2}, TensorOptions(kFloat64)));
    std::unique_ptr<Optimizer> opt;
    if (kind == "RMSprop") {
      opt = std::make_unique<RMSprop>(std::vector<Tensor>{p}, RMSpropOptions(0.5));
      opt->add_param_group(ParamGroup({q}, std::make_unique<RMSpropOptions>(0.25)));
      static_cast<RMSpropOptions&>(opt->param_groups()[1].options()).alpha(-1);
    } else {
      opt = std::make_unique<Adagrad>(std::vector<Tensor>{p}, AdagradOptions(0.5));
      opt->add_param_group(ParamGroup({q}, std::make_unique<AdagradOptions>(0.25)));
      static_cast<AdagradOptions&>(opt->param_groups()[1].options()).lr_decay(-1);
    }
    CHECK_THROWS_AS(opt->step(), ValueError);
    CHECK_THROWS_WITH(opt->step(), Catch::Contains(kind == "RMSprop" ? "invalid alpha -1" : "invalid lr_decay -1"));
    CHECK(p.to_vector<double>() == std::vector<double>{1.0, 1.0, 1.0});
    CHECK(q.to_vector<double>() == std::vector<double>{1.0, 1.0});
    if (kind == "RMSprop") {
      CHECK(opt->state(p) == nullptr);
    } else {
      CHECK(opt->state(p)->step == 0);
      CHECK(opt->state(p)->buffers.at("sum").to_vector<double>() == std::vector<double>(3, 0.0));
    }
    // A gradient that does not fit its parameter is refused before any update, too.
    if (kind == "RMSprop")
      static_cast<RMSpropOptions&>(opt->param_groups()[1].options()).alpha(0.9);
    else
      static_cast<AdagradOptions&>(opt->param_groups()[1].options()).lr_decay(0);
    q.mutable_grad() = wick::ones({5}, TensorOptions(kFloat64));
    CHECK_THROWS_AS(opt->step(), StateError);
    CHECK(p.to_vector<double>() == std::vector<double>{1.0, 1.0, 1.0});
  }
}

TEST_CASE("optim: RMSprop and Adagrad leave parameters without a gradient alone", "[optim]") {
  Tensor p = wick::ones({3}, TensorOptions(kFloat64).requires_grad());
  Tensor q = wick::ones({2}, TensorOptions(kFloat64).requires_grad());
  RMSprop rms(std::vector<Tensor>{p, q}, RMSpropOptions(0.1).momentum(0.9));
  wick::sum(p * 2.0).backward();
  rms.step();
  CHECK(q.to_vector<double>() == std::vector<double>{1.0, 1.0});
  CHECK(rms.state(q) == nullptr);
  REQUIRE(rms.state(p) != nullptr);
  CHECK(rms.state(p)->step == 1);
  // First step by hand: v = 0.01 * 4, avg = sqrt(0.04) + 1e-8, buf = 2 / avg, p = 1 - 0.1 * buf.
  const double want = 1 - 0.1 * (2.0 / (std::sqrt(0.01 * 4.0) + 1e-8));
  check_close(p, {want, want, want}, 1e-15, "RMSprop first step");

  Tensor a = wick::ones({3}, TensorOptions(kFloat64).requires_grad());
  Tensor b = wick::ones({2}, TensorOptions(kFloat64).requires_grad());
  Adagrad ada(std::vector<Tensor>{a, b}, AdagradOptions(0.1).initial_accumulator_value(0.5));
  wick::sum(a * 2.0).backward();
  ada.step();
  CHECK(b.to_vector<double>() == std::vector<double>{1.0, 1.0});
  REQUIRE(ada.state(b) != nullptr);  // made at construction, as PyTorch
  CHECK(ada.state(b)->step == 0);
  CHECK(ada.state(b)->buffers.at("sum").to_vector<double>() == std::vector<double>{0.5, 0.5});
  CHECK(ada.state(a)->step == 1);
  // By hand: sum = 0.5 + 4, p = 1 - 0.1 * 2 / (sqrt(4.5) + 1e-10).
  const double want_a = 1 - 0.1 * 2.0 / (std::sqrt(4.5) + 1e-10);
  check_close(a, {want_a, want_a, want_a}, 1e-15, "Adagrad first step");
}

TEST_CASE("optim: Adagrad gives a group added later its state, from the group's own options", "[optim]") {
  Tensor p = wick::ones({3}, TensorOptions(kFloat64).requires_grad());
  Tensor q = wick::ones({2}, TensorOptions(kFloat32).requires_grad());
  Adagrad opt(std::vector<Tensor>{p}, AdagradOptions(0.1).initial_accumulator_value(0.5));
  auto own = std::make_unique<AdagradOptions>(0.2);
  own->initial_accumulator_value(2.0);
  opt.add_param_group(ParamGroup({q}, std::move(own)));
  REQUIRE(opt.state(q) != nullptr);
  CHECK(opt.state(q)->step == 0);
  CHECK(opt.state(q)->buffers.at("sum").dtype() == kFloat32);
  CHECK(opt.state(q)->buffers.at("sum").to_vector<double>() == std::vector<double>{2.0, 2.0});
  // Its first step uses that sum: q = 1 - 0.2 * 1 / (sqrt(3) + 1e-10), in float32.
  q.set_grad(wick::ones({2}, TensorOptions(kFloat32)));
  opt.step();
  const double want = 1 - 0.2 / (std::sqrt(3.0) + 1e-10);
  check_close(q, {want, want}, 1e-6, "added group");
  CHECK(p.to_vector<double>() == std::vector<double>{1.0, 1.0, 1.0});
  // A group with another optimizer's options class is a TypeError naming both, and adds nothing.
  Tensor r = wick::ones({2}, TensorOptions(kFloat64).requires_grad());
  CHECK_THROWS_AS(opt.add_param_group(ParamGroup({r}, std::make_unique<AdamOptions>(0.1))), TypeError);
  CHECK_THROWS_WITH(opt.add_param_group(ParamGroup({r}, std::make_unique<RMSpropOptions>(0.1))),
                    Catch::Contains("wick::optim::RMSpropOptions") && Catch::Contains("wick::optim::AdagradOptions"));
  CHECK(opt.param_groups().size() == 2);
  CHECK(opt.state(r) == nullptr);
  RMSprop rms(std::vector<Tensor>{p});
  CHECK_THROWS_AS(rms.add_param_group(ParamGroup({r}, std::make_unique<AdamOptions>(0.1))), TypeError);
  CHECK_THROWS_AS(rms.add_param_group(ParamGroup({r}, std::make_unique<AdagradOptions>(0.1))), TypeError);
  CHECK(rms.param_groups().size() == 1);
}
