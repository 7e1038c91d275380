// wick::optim's RMSprop and Adagrad against two independent truths: PyTorch 1.13's own trajectories
// (generate.py's optim_cases in tests/data/ops.safetensors) on every test device in float64 and
// float32, and the update formulas written out element by element in float64
// (support/rmsprop_adagrad_reference.h); parameter groups and options changed between steps. Their
// state dicts and checkpoint files: optim_rmsprop_adagrad_state_test.cpp; options checks and
// steps that change nothing: optim_rmsprop_adagrad_options_test.cpp.
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

namespace {

// ---- PyTorch 1.13's trajectories (the oracle) ----

// Always the committed file: the optimizer cases are not in the extended set $WICK_ORACLE_FILE
// may name.
const std::vector<test::OracleCase>& optim_oracle_cases() {
  static const std::vector<test::OracleCase> cases = [] {
    std::vector<test::OracleCase> out;
    for (auto& c : test::load_oracle(std::string(WICK_TEST_DATA_DIR) + "/ops.safetensors"))
      if (c.op == "optim_rmsprop" || c.op == "optim_adagrad") out.push_back(std::move(c));
    return out;
  }();
  return cases;
}

// The case's options, starting from wick's defaults: the cases without kwargs check that wick's
// defaults are PyTorch's.
std::unique_ptr<Optimizer> make_from_kwargs(const test::OracleCase& c, const Tensor& p) {
  const auto& kw = c.kwargs;
  if (c.op == "optim_rmsprop") {
    RMSpropOptions o;
    if (kw.contains("lr")) o.lr(kw.at("lr").get<double>());
    if (kw.contains("alpha")) o.alpha(kw.at("alpha").get<double>());
    if (kw.contains("eps")) o.eps(kw.at("eps").get<double>());
    if (kw.contains("weight_decay")) o.weight_decay(kw.at("weight_decay").get<double>());
    if (kw.contains("momentum")) o.momentum(kw.at("momentum").get<double>());
    if (kw.contains("centered")) o.centered(kw.at("centered").get<bool>());
    if (kw.contains("maximize")) o.maximize(kw.at("maximize").get<bool>());
    return std::make_unique<RMSprop>(std::vector<Tensor>{p}, o);
  }
  AdagradOptions o;
  if (kw.contains("lr")) o.lr(kw.at("lr").get<double>());
  if (kw.contains("lr_decay")) o.lr_decay(kw.at("lr_decay").get<double>());
  if (kw.contains("weight_decay")) o.weight_decay(kw.at("weight_decay").get<double>());
  if (kw.contains("initial_accumulator_value"))
    o.initial_accumulator_value(kw.at("initial_accumulator_value").get<double>());
  if (kw.contains("eps")) o.eps(kw.at("eps").get<double>());
  if (kw.contains("maximize")) o.maximize(kw.at("maximize").get<bool>());
  return std::make_unique<Adagrad>(std::vector<Tensor>{p}, o);
}

// Runs a case's 4 steps on `device` in `dt` and compares the parameter after each step with
// PyTorch's (float64) values.
void run_oracle_case(const test::OracleCase& c, Device device, DType dt, double rtol) {
  INFO(c.label() << " on " << device << " in " << dt);
  REQUIRE(c.inputs.size() == 5);
  REQUIRE(c.out.sizes() == IntArrayRef({4, 3, 4}));
  // Fresh copies: the steps write the parameter in place, and the cases are shared.
  Tensor p = c.inputs[0].to(device, dt).clone().requires_grad_(true);
  auto opt = make_from_kwargs(c, p);
  const void* storage = p.data_ptr();
  for (int k = 0; k < 4; ++k) {
    INFO("after step " << k + 1);
    p.set_grad(c.inputs[static_cast<size_t>(k) + 1].to(device, dt).clone());
    opt->step();
    CHECK(p.data_ptr() == storage);  // updated in place
    CHECK(p.device() == device);
    CHECK(p.dtype() == dt);
    CHECK_ALLCLOSE(p, c.out.select(0, k), rtol, rtol);
  }
}

}  // namespace

TEST_CASE("optim: RMSprop and Adagrad follow PyTorch 1.13's trajectories on every test device (oracle)", "[optim]") {
  const auto& cases = optim_oracle_cases();
  int rmsprop = 0, adagrad = 0;
  for (const auto& c : cases) (c.op == "optim_rmsprop" ? rmsprop : adagrad) += 1;
  CHECK(rmsprop == 6);
  CHECK(adagrad == 5);
  for (const Device& d : test::test_devices()) {
    for (const auto& c : cases) {
      run_oracle_case(c, d, kFloat64, 1e-12);
      // float32 parameters and gradients (the inputs rounded to float32) stay within float32's
      // precision of PyTorch's float64 trajectory.
      run_oracle_case(c, d, kFloat32, 2e-5);
    }
  }
}

TEST_CASE("optim: RMSprop matches the float64 reference for every configuration", "[optim]") {
  for (const auto& cf : rmsprop_configs()) run_against_reference({cf}, 6, 1e-12);
}

TEST_CASE("optim: Adagrad matches the float64 reference for every configuration", "[optim]") {
  for (const auto& cf : adagrad_configs()) run_against_reference({cf}, 6, 1e-12);
}

TEST_CASE("optim: RMSprop and Adagrad parameter groups keep their own options", "[optim]") {
  Config a{"RMSprop"}, b{"RMSprop"};
  a.momentum = 0.9;
  b.lr = 0.03;
  b.centered = true;
  b.weight_decay = 0.2;
  run_against_reference({a, b}, 5, 1e-12);
  Config x = adagrad_config(), y = adagrad_config(1e-4);
  x.lr = 0.2;
  y.lr_decay = 0.5;
  y.initial_accumulator_value = 1.0;
  run_against_reference({x, y}, 5, 1e-12);

  // A group without options takes the defaults; a group added later keeps its own.
  Tensor p = wick::ones({3}, TensorOptions(kFloat64).requires_grad());
  Tensor q = wick::ones({2}, TensorOptions(kFloat64).requires_grad());
  RMSprop opt(std::vector<Tensor>{p}, RMSpropOptions(0.5).momentum(0.1));
  auto own = std::make_unique<RMSpropOptions>(0.25);
  own->centered(true);
  opt.add_param_group(ParamGroup({q}, std::move(own)));
  REQUIRE(opt.param_groups().size() == 2);
  CHECK(static_cast<const RMSpropOptions&>(opt.param_groups()[0].options()).momentum() == 0.1);
  CHECK(static_cast<const RMSpropOptions&>(opt.param_groups()[1].options()).centered());
  CHECK(static_cast<const RMSpropOptions&>(opt.param_groups()[1].options()).momentum() == 0);
  CHECK(opt.param_groups()[1].options().get_lr() == 0.25);
}

TEST_CASE("optim: turning RMSprop's momentum or centered on later starts their state from zero", "[optim]") {
  // PyTorch 1.13 makes momentum_buffer and grad_avg only at a parameter's first step (a KeyError
  // when the option is turned on later); wick makes them as zeros then, and keeps them when the
  // option is turned off again. The reference starts them at zero and leaves them alone while
  // unused.
  auto momentum_on = [](Config& c, OptimizerOptions& o) {
    c.momentum = 0.9;
    static_cast<RMSpropOptions&>(o).momentum(0.9);
  };
  run_against_reference({Config{"RMSprop"}}, 5, 1e-12, momentum_on, 2);
  auto centered_on = [](Config& c, OptimizerOptions& o) {
    c.centered = true;
    static_cast<RMSpropOptions&>(o).centered(true);
  };
  run_against_reference({Config{"RMSprop"}}, 5, 1e-12, centered_on, 3);
  Config both{"RMSprop"};
  both.centered = true;
  both.momentum = 0.5;
  auto both_off = [](Config& c, OptimizerOptions& o) {
    c.centered = false;
    c.momentum = 0;
    static_cast<RMSpropOptions&>(o).centered(false).momentum(0);
  };
  run_against_reference({both}, 5, 1e-12, both_off, 2);
}
