// wick::optim's RMSprop and Adagrad against two independent truths: PyTorch 1.13's own trajectories
// (generate.py's optim_cases in tests/data/ops.safetensors) on every test device in float64 and
// float32, and the update formulas written out here element by element in float64. Also their
// state dicts (PyTorch's names), options checks, parameter groups and checkpoint files.
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
#include "support/temp_dir.h"
#include "wick/autograd/functions.h"
#include "wick/nn/checkpoint.h"
#include "wick/nn/optim/optim.h"

using namespace wick;
using namespace wick::optim;

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

// ---- The float64 reference, element by element ----

struct Config {
  std::string kind;  // "RMSprop", "Adagrad"
  double lr = 0.01, alpha = 0.99, eps = 1e-8, weight_decay = 0, momentum = 0;
  bool centered = false, maximize = false;
  double lr_decay = 0, initial_accumulator_value = 0;  // Adagrad
  std::string label() const {
    return kind + " lr=" + std::to_string(lr) + " alpha=" + std::to_string(alpha) + " eps=" + std::to_string(eps) +
           " wd=" + std::to_string(weight_decay) + " mom=" + std::to_string(momentum) +
           " lr_decay=" + std::to_string(lr_decay) + " iav=" + std::to_string(initial_accumulator_value) +
           (centered ? " centered" : "") + (maximize ? " maximize" : "");
  }
};

Config adagrad_config(double eps = 1e-10) {
  Config c{"Adagrad"};
  c.eps = eps;
  return c;
}

// One parameter with loss = sum(0.5 * c * p^2 + d * p) (so grad = c * p + d) and its state,
// updated by PyTorch 1.13's documented formulas in plain double arithmetic. The state starts at
// zero (Adagrad's sum at initial_accumulator_value) and each part is only touched when the options
// use it, as wick keeps it.
struct RefParam {
  std::vector<double> p, c, d;
  std::vector<double> v, grad_avg, buf;  // square_avg or sum; RMSprop's grad_avg, momentum_buffer
  int64_t t = 0;

  void init(const Config& cf) {
    v.assign(p.size(), cf.kind == "Adagrad" ? cf.initial_accumulator_value : 0.0);
    grad_avg.assign(p.size(), 0.0);
    buf.assign(p.size(), 0.0);
  }

  void step(const Config& cf) {
    ++t;
    const double clr = cf.lr / (1 + static_cast<double>(t - 1) * cf.lr_decay);
    for (size_t i = 0; i < p.size(); ++i) {
      double g = c[i] * p[i] + d[i];
      if (cf.maximize) g = -g;
      g += cf.weight_decay * p[i];
      if (cf.kind == "Adagrad") {
        v[i] += g * g;
        p[i] -= clr * g / (std::sqrt(v[i]) + cf.eps);
        continue;
      }
      v[i] = cf.alpha * v[i] + (1 - cf.alpha) * g * g;
      double avg;
      if (cf.centered) {
        grad_avg[i] = cf.alpha * grad_avg[i] + (1 - cf.alpha) * g;
        avg = std::sqrt(v[i] - grad_avg[i] * grad_avg[i]) + cf.eps;
      } else {
        avg = std::sqrt(v[i]) + cf.eps;
      }
      if (cf.momentum > 0) {
        buf[i] = cf.momentum * buf[i] + g / avg;
        p[i] -= cf.lr * buf[i];
      } else {
        p[i] -= cf.lr * g / avg;
      }
    }
  }
};

std::vector<RefParam> make_refs() {
  RefParam a, b;
  a.p = {0.5, -1.25, 2.0, 0.75, -0.3, 1.1};
  a.c = {1.0, 0.5, 2.0, 0.1, 3.0, 0.7};
  a.d = {0.2, -0.4, 0.1, 0.9, -1.0, 0.05};
  b.p = {-2.0, 0.4, 1.5, 0.01};
  b.c = {0.3, 1.7, 0.9, 2.5};
  b.d = {-0.6, 0.8, 0.0, 0.3};
  return {a, b};
}

std::unique_ptr<OptimizerOptions> options_of(const Config& cf) {
  if (cf.kind == "RMSprop") {
    auto o = std::make_unique<RMSpropOptions>(cf.lr);
    o->alpha(cf.alpha)
        .eps(cf.eps)
        .weight_decay(cf.weight_decay)
        .momentum(cf.momentum)
        .centered(cf.centered)
        .maximize(cf.maximize);
    return o;
  }
  auto o = std::make_unique<AdagradOptions>(cf.lr);
  o->lr_decay(cf.lr_decay)
      .weight_decay(cf.weight_decay)
      .initial_accumulator_value(cf.initial_accumulator_value)
      .eps(cf.eps)
      .maximize(cf.maximize);
  return o;
}

std::unique_ptr<Optimizer> make(const Config& cf, std::vector<ParamGroup> groups) {
  auto o = options_of(cf);
  if (cf.kind == "RMSprop") return std::make_unique<RMSprop>(std::move(groups), static_cast<const RMSpropOptions&>(*o));
  return std::make_unique<Adagrad>(std::move(groups), static_cast<const AdagradOptions&>(*o));
}

Tensor to_tensor(const std::vector<double>& v, IntArrayRef shape, DType dt) {
  return wick::tensor(v, shape, TensorOptions(dt)).requires_grad_(true);
}

// loss = sum(0.5 * c * p^2 + d * p) over every parameter, then backward.
void compute_grads(const std::vector<Tensor>& ps, const std::vector<RefParam>& refs) {
  Tensor loss;
  for (size_t i = 0; i < ps.size(); ++i) {
    Tensor c = wick::tensor(refs[i].c, ps[i].sizes(), TensorOptions(ps[i].dtype()));
    Tensor d = wick::tensor(refs[i].d, ps[i].sizes(), TensorOptions(ps[i].dtype()));
    Tensor li = wick::sum(c * ps[i] * ps[i] * 0.5 + d * ps[i]);
    loss = loss.defined() ? loss + li : li;
  }
  loss.backward();
}

void check_close(const Tensor& t, const std::vector<double>& ref, double rtol, const std::string& what) {
  auto got = t.to_vector<double>();
  REQUIRE(got.size() == ref.size());
  for (size_t i = 0; i < ref.size(); ++i) {
    INFO(what << " element " << i << ": got " << got[i] << " want " << ref[i]);
    CHECK(std::abs(got[i] - ref[i]) <= rtol * std::max(1.0, std::abs(ref[i])));
  }
}

// `steps` steps with both parameters in one group (configs.size() == 1) or each in its own group
// with its own options, compared with the reference after every step. `change` (when set) is
// applied to the configs and to the optimizer's groups before step `change_at` (0-based).
void run_against_reference(std::vector<Config> configs, int steps, double rtol,
                           const std::function<void(Config&, OptimizerOptions&)>& change = nullptr,
                           int change_at = -1) {
  auto refs = make_refs();
  std::vector<Tensor> ps = {to_tensor(refs[0].p, {2, 3}, kFloat64), to_tensor(refs[1].p, {4}, kFloat64)};
  std::vector<ParamGroup> groups;
  if (configs.size() == 1) {
    groups.emplace_back(ps);
  } else {
    groups.emplace_back(std::vector<Tensor>{ps[0]}, options_of(configs[0]));
    groups.emplace_back(std::vector<Tensor>{ps[1]}, options_of(configs[1]));
  }
  auto opt = make(configs[0], std::move(groups));
  for (size_t i = 0; i < refs.size(); ++i) refs[i].init(configs.size() == 1 ? configs[0] : configs[i]);
  for (int s = 0; s < steps; ++s) {
    if (s == change_at) {
      for (size_t gi = 0; gi < opt->param_groups().size(); ++gi) change(configs[gi], opt->param_groups()[gi].options());
    }
    opt->zero_grad();
    compute_grads(ps, refs);
    opt->step();
    for (size_t i = 0; i < ps.size(); ++i) {
      const Config& cf = configs.size() == 1 ? configs[0] : configs[i];
      refs[i].step(cf);
      check_close(ps[i], refs[i].p, rtol,
                  cf.label() + " step " + std::to_string(s + 1) + " param " + std::to_string(i));
    }
  }
}

std::vector<Config> rmsprop_configs() {
  std::vector<Config> cs;
  Config c{"RMSprop"};
  cs.push_back(c);  // PyTorch's defaults
  c.momentum = 0.9;
  cs.push_back(c);
  c.weight_decay = 0.05;
  cs.push_back(c);
  Config cen{"RMSprop"};
  cen.centered = true;
  cs.push_back(cen);
  cen.momentum = 0.5;
  cen.maximize = true;
  cen.weight_decay = 0.1;
  cs.push_back(cen);
  Config a{"RMSprop"};
  a.alpha = 0.5;
  a.eps = 1e-3;
  a.lr = 0.05;
  cs.push_back(a);
  return cs;
}

std::vector<Config> adagrad_configs() {
  std::vector<Config> cs;
  Config c = adagrad_config();
  cs.push_back(c);  // PyTorch's defaults
  c.lr = 0.1;
  c.lr_decay = 0.2;
  cs.push_back(c);
  c.weight_decay = 0.1;
  cs.push_back(c);
  Config i = adagrad_config(1e-3);
  i.initial_accumulator_value = 0.3;
  i.maximize = true;
  i.lr = 0.05;
  cs.push_back(i);
  return cs;
}

// The state dict's tensor names and shapes, as "name [shape]".
std::vector<std::string> layout(const OptimizerStateDict& sd) {
  std::vector<std::string> out;
  for (const auto& [k, t] : sd.state) out.push_back(k + " [" + fmt::format("{}", fmt::join(t.sizes(), ", ")) + "]");
  return out;
}

// The option names of group `g` in the JSON a checkpoint stores, in order ("params" first).
std::vector<std::string> group_keys(const OptimizerStateDict& sd, size_t g) {
  const auto j = nlohmann::ordered_json::parse(sd.groups_json());
  std::vector<std::string> keys;
  for (const auto& item : j.at("param_groups").at(g).items()) keys.push_back(item.key());
  return keys;
}

// The state dict as a checkpoint carries it: the tensors plus the groups through their JSON text.
OptimizerStateDict through_json(const OptimizerStateDict& sd) {
  OptimizerStateDict copy;
  copy.state = sd.state;
  copy.set_groups_json(sd.groups_json());
  return copy;
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

TEST_CASE("optim: RMSprop's state dict has PyTorch's names and round-trips bit-identically", "[optim][state]") {
  auto refs = make_refs();
  std::vector<Tensor> ps = {to_tensor(refs[0].p, {2, 3}, kFloat64), to_tensor(refs[1].p, {4}, kFloat64)};
  std::vector<ParamGroup> groups;
  groups.emplace_back(std::vector<Tensor>{ps[0]});
  auto second = std::make_unique<RMSpropOptions>(0.003);
  second->alpha(0.9);
  groups.emplace_back(std::vector<Tensor>{ps[1]}, std::move(second));
  RMSprop opt(std::move(groups), RMSpropOptions(0.01).momentum(0.9).centered(true).weight_decay(0.01));
  CHECK(opt.state_dict().state.empty());  // as PyTorch: no state before the first step
  for (int s = 0; s < 3; ++s) {
    opt.zero_grad();
    compute_grads(ps, refs);
    opt.step();
  }
  OptimizerStateDict sd = opt.state_dict();
  CHECK(sd.optimizer == "RMSprop");
  // PyTorch 1.13's state for these options, in its order; the second group has neither momentum
  // nor centered.
  CHECK(layout(sd) == std::vector<std::string>{"state.0.step []", "state.0.square_avg [2, 3]",
                                               "state.0.momentum_buffer [2, 3]", "state.0.grad_avg [2, 3]",
                                               "state.1.step []", "state.1.square_avg [4]"});
  CHECK(sd.state.at("state.0.step").dtype() == kFloat32);
  CHECK(sd.state.at("state.0.step").item<double>() == 3.0);
  // PyTorch's param_group keys (less foreach and differentiable, which wick does not have).
  CHECK(group_keys(sd, 0) ==
        std::vector<std::string>{"params", "lr", "momentum", "alpha", "eps", "centered", "weight_decay", "maximize"});

  // A fresh optimizer with other options takes the state and the options and continues bit for bit.
  std::vector<Tensor> qs = {ps[0].detach().clone().requires_grad_(true), ps[1].detach().clone().requires_grad_(true)};
  std::vector<ParamGroup> groups2;
  groups2.emplace_back(std::vector<Tensor>{qs[0]});
  groups2.emplace_back(std::vector<Tensor>{qs[1]});
  RMSprop opt2(std::move(groups2), RMSpropOptions(0.5));
  opt2.load_state_dict(through_json(sd));
  const auto& o1 = static_cast<const RMSpropOptions&>(opt2.param_groups()[1].options());
  CHECK(o1.lr() == 0.003);
  CHECK(o1.alpha() == 0.9);
  CHECK(static_cast<const RMSpropOptions&>(opt2.param_groups()[0].options()).centered());
  CHECK(opt2.state(qs[0])->step == 3);
  for (int s = 0; s < 3; ++s) {
    opt.zero_grad();
    compute_grads(ps, refs);
    opt.step();
    opt2.zero_grad();
    compute_grads(qs, refs);
    opt2.step();
    CHECK(ps[0].to_vector<double>() == qs[0].to_vector<double>());
    CHECK(ps[1].to_vector<double>() == qs[1].to_vector<double>());
  }

  // momentum_buffer and grad_avg are optional (kept after the option is turned off); other names
  // are refused, and square_avg and step are required.
  OptimizerStateDict off = sd;
  off.param_groups[0].options = RMSpropOptions(0.01).values();  // momentum 0, not centered
  opt2.load_state_dict(off);
  OptimizerStateDict bad = sd;
  bad.state.insert("state.0.exp_avg", wick::zeros({2, 3}, kFloat64));
  bad.state.erase("state.1.square_avg");  // param 1 keeps its step: it has state, so square_avg is required
  bad.state.erase("state.0.step");
  CHECK_THROWS_AS(opt2.load_state_dict(bad), ValueError);
  CHECK_THROWS_WITH(opt2.load_state_dict(bad),
                    Catch::Contains("unexpected key \"state.0.exp_avg\" (RMSprop keeps: square_avg, "
                                    "momentum_buffer, grad_avg)") &&
                        Catch::Contains("missing key \"state.1.square_avg\"") &&
                        Catch::Contains("missing key \"state.0.step\""));
}

TEST_CASE("optim: Adagrad's state exists from construction, as PyTorch's, and round-trips bit-identically",
          "[optim][state]") {
  auto refs = make_refs();
  std::vector<Tensor> ps = {to_tensor(refs[0].p, {2, 3}, kFloat64), to_tensor(refs[1].p, {4}, kFloat64)};
  Adagrad opt(ps, AdagradOptions(0.1).lr_decay(0.3).initial_accumulator_value(0.25).weight_decay(0.01));
  // PyTorch 1.13's Adagrad makes step (0) and sum (initial_accumulator_value) in its constructor.
  OptimizerStateDict sd0 = opt.state_dict();
  CHECK(layout(sd0) ==
        std::vector<std::string>{"state.0.step []", "state.0.sum [2, 3]", "state.1.step []", "state.1.sum [4]"});
  CHECK(sd0.state.at("state.1.step").item<double>() == 0.0);
  CHECK(sd0.state.at("state.1.step").dtype() == kFloat32);
  CHECK(sd0.state.at("state.0.sum").to_vector<double>() == std::vector<double>(6, 0.25));
  CHECK(sd0.state.at("state.0.sum").dtype() == kFloat64);
  CHECK(group_keys(sd0, 0) == std::vector<std::string>{"params", "lr", "lr_decay", "eps", "weight_decay",
                                                       "initial_accumulator_value", "maximize"});
  // Only parameters with a gradient step: the other keeps step 0 and its sum.
  ps[0].set_grad(wick::ones({2, 3}, TensorOptions(kFloat64)));
  opt.step();
  OptimizerStateDict sd1 = opt.state_dict();
  CHECK(sd1.state.at("state.0.step").item<double>() == 1.0);
  CHECK(sd1.state.at("state.1.step").item<double>() == 0.0);
  CHECK(sd1.state.at("state.1.sum").to_vector<double>() == std::vector<double>(4, 0.25));

  // Two more steps (lr_decay makes the step count matter), then a round trip through the JSON.
  for (int s = 0; s < 2; ++s) {
    opt.zero_grad();
    compute_grads(ps, refs);
    opt.step();
  }
  OptimizerStateDict sd = opt.state_dict();
  CHECK(sd.state.at("state.0.step").item<double>() == 3.0);
  CHECK(sd.state.at("state.1.step").item<double>() == 2.0);
  std::vector<Tensor> qs = {ps[0].detach().clone().requires_grad_(true), ps[1].detach().clone().requires_grad_(true)};
  Adagrad opt2(qs, AdagradOptions(0.7));
  opt2.load_state_dict(through_json(sd));
  CHECK(opt2.param_groups()[0].options().get_lr() == 0.1);
  CHECK(static_cast<const AdagradOptions&>(opt2.param_groups()[0].options()).lr_decay() == 0.3);
  CHECK(opt2.state(qs[1])->step == 2);
  for (int s = 0; s < 3; ++s) {
    opt.zero_grad();
    compute_grads(ps, refs);
    opt.step();
    opt2.zero_grad();
    compute_grads(qs, refs);
    opt2.step();
    CHECK(ps[0].to_vector<double>() == qs[0].to_vector<double>());
    CHECK(ps[1].to_vector<double>() == qs[1].to_vector<double>());
  }
  // sum and step are required.
  OptimizerStateDict bad = sd;
  bad.state.erase("state.0.sum");
  CHECK_THROWS_WITH(opt2.load_state_dict(bad), Catch::Contains("missing key \"state.0.sum\""));
}

TEST_CASE("optim: a state dict of one optimizer type is refused by the other, naming both", "[optim][state]") {
  Tensor p = wick::ones({2, 3}, TensorOptions(kFloat64).requires_grad());
  Tensor q = p.detach().clone().requires_grad_(true);
  RMSprop rms(std::vector<Tensor>{p});
  p.set_grad(wick::ones({2, 3}, TensorOptions(kFloat64)));
  rms.step();
  Adagrad ada(std::vector<Tensor>{q});
  const auto ada_before = ada.state(q)->buffers.at("sum").to_vector<double>();
  CHECK_THROWS_AS(ada.load_state_dict(rms.state_dict()), ValueError);
  CHECK_THROWS_WITH(ada.load_state_dict(rms.state_dict()),
                    Catch::Contains("the state dict is for RMSprop but this optimizer is Adagrad") &&
                        Catch::Contains("nothing was changed"));
  CHECK(ada.state(q)->buffers.at("sum").to_vector<double>() == ada_before);
  CHECK(ada.param_groups()[0].options().get_lr() == 1e-2);
  CHECK_THROWS_AS(rms.load_state_dict(ada.state_dict()), ValueError);
  CHECK_THROWS_WITH(rms.load_state_dict(ada.state_dict()),
                    Catch::Contains("the state dict is for Adagrad but this optimizer is RMSprop"));
  CHECK(rms.state(p)->step == 1);
}

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

TEST_CASE("optim: RMSprop and Adagrad state saved to a file loads and continues bit-identically", "[optim][state]") {
  test::TempDir dir("wick-optim-test");
  for (const std::string kind : {"RMSprop", "Adagrad"}) {
    INFO(kind);
    auto refs = make_refs();
    std::vector<Tensor> ps = {to_tensor(refs[0].p, {2, 3}, kFloat32), to_tensor(refs[1].p, {4}, kFloat32)};
    Config cf{kind};
    cf.momentum = 0.9;
    cf.centered = true;
    cf.lr_decay = 0.1;
    cf.initial_accumulator_value = 0.1;
    auto opt = make(cf, {ParamGroup(ps)});
    for (int s = 0; s < 2; ++s) {
      opt->zero_grad();
      compute_grads(ps, refs);
      opt->step();
    }
    const std::string path = dir.file(kind + ".safetensors");
    nn::save(*opt, path);
    std::vector<Tensor> qs = {ps[0].detach().clone().requires_grad_(true), ps[1].detach().clone().requires_grad_(true)};
    auto opt2 = make(Config{kind}, {ParamGroup(qs)});
    nn::load(*opt2, path);
    for (int s = 0; s < 3; ++s) {
      opt->zero_grad();
      compute_grads(ps, refs);
      opt->step();
      opt2->zero_grad();
      compute_grads(qs, refs);
      opt2->step();
      CHECK(ps[0].to_vector<float>() == qs[0].to_vector<float>());
      CHECK(ps[1].to_vector<float>() == qs[1].to_vector<float>());
    }
  }
}
