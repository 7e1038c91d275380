// wick::optim's Adamax, NAdam, RAdam and Rprop against PyTorch 1.13's own trajectories
// (generate.py's optim_more_cases in tests/data/ops.safetensors) on every test device in float64
// and float32; their state dicts (PyTorch's names, a round trip that continues bit-identically,
// hostile state refused with nothing changed) and their options checks.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
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

const std::vector<std::string> kKinds = {"Adamax", "NAdam", "RAdam", "Rprop"};

// Always the committed file: the optimizer cases are not in the extended set.
const std::vector<test::OracleCase>& oracle_cases() {
  static const std::vector<test::OracleCase> cases = [] {
    std::vector<test::OracleCase> out;
    for (auto& c : test::load_oracle(std::string(WICK_TEST_DATA_DIR) + "/ops.safetensors"))
      if (c.op == "optim_adamax" || c.op == "optim_nadam" || c.op == "optim_radam" || c.op == "optim_rprop")
        out.push_back(std::move(c));
    return out;
  }();
  return cases;
}

double num(const nlohmann::json& kw, const char* k, size_t i) { return kw.at(k).at(i).get<double>(); }

// The case's options, starting from wick's defaults: the cases without kwargs check that wick's
// defaults are PyTorch's.
std::unique_ptr<Optimizer> make_from_kwargs(const test::OracleCase& c, const Tensor& p) {
  const auto& kw = c.kwargs;
  auto get = [&](const char* k, double& v) {
    if (kw.contains(k)) v = kw.at(k).get<double>();
  };
  const std::vector<Tensor> ps = {p};
  if (c.op == "optim_rprop") {
    RpropOptions o;
    double lr = o.lr();
    get("lr", lr);
    o.lr(lr);
    if (kw.contains("etas")) o.etas({num(kw, "etas", 0), num(kw, "etas", 1)});
    if (kw.contains("step_sizes")) o.step_sizes({num(kw, "step_sizes", 0), num(kw, "step_sizes", 1)});
    if (kw.contains("maximize")) o.maximize(kw.at("maximize").get<bool>());
    return std::make_unique<Rprop>(ps, o);
  }
  // The Adam family: lr, betas, eps, weight_decay (+ maximize, momentum_decay).
  double lr = c.op == "optim_radam" ? 1e-3 : 2e-3, b1 = 0.9, b2 = 0.999, eps = 1e-8, wd = 0, md = 4e-3;
  get("lr", lr);
  get("eps", eps);
  get("weight_decay", wd);
  get("momentum_decay", md);
  if (kw.contains("betas")) b1 = num(kw, "betas", 0), b2 = num(kw, "betas", 1);
  if (c.op == "optim_adamax") {
    const bool maximize = kw.contains("maximize") && kw.at("maximize").get<bool>();
    return std::make_unique<Adamax>(ps, AdamaxOptions(lr).betas({b1, b2}).eps(eps).weight_decay(wd).maximize(maximize));
  }
  if (c.op == "optim_nadam")
    return std::make_unique<NAdam>(ps, NAdamOptions(lr).betas({b1, b2}).eps(eps).weight_decay(wd).momentum_decay(md));
  return std::make_unique<RAdam>(ps, RAdamOptions(lr).betas({b1, b2}).eps(eps).weight_decay(wd));
}

// Runs a case's steps on `device` in `dt` and compares the parameter after each step with
// PyTorch's (float64) values.
void run_oracle_case(const test::OracleCase& c, Device device, DType dt, double rtol) {
  INFO(c.label() << " on " << device << " in " << dt);
  const int64_t steps = static_cast<int64_t>(c.inputs.size()) - 1;
  REQUIRE(steps >= 4);
  REQUIRE(c.out.sizes() == IntArrayRef({steps, 3, 4}));
  Tensor p = c.inputs[0].to(device, dt).clone().requires_grad_(true);  // fresh: steps write it in place
  auto opt = make_from_kwargs(c, p);
  const void* storage = p.data_ptr();
  for (int64_t k = 0; k < steps; ++k) {
    INFO("after step " << k + 1);
    p.set_grad(c.inputs[static_cast<size_t>(k) + 1].to(device, dt).clone());
    opt->step();
    CHECK(p.data_ptr() == storage);  // updated in place
    CHECK(p.dtype() == dt);
    CHECK_ALLCLOSE(p, c.out.select(0, k), rtol, rtol);
  }
}

// Each kind with non-default options that exercise every part of its update.
std::unique_ptr<Optimizer> make(const std::string& kind, const std::vector<Tensor>& ps) {
  if (kind == "Adamax") return std::make_unique<Adamax>(ps, AdamaxOptions(0.05).weight_decay(0.1).maximize(true));
  if (kind == "NAdam") return std::make_unique<NAdam>(ps, NAdamOptions(0.05).weight_decay(0.1).momentum_decay(0.1));
  if (kind == "RAdam") return std::make_unique<RAdam>(ps, RAdamOptions(0.05).betas({0.8, 0.9}).weight_decay(0.1));
  return std::make_unique<Rprop>(ps, RpropOptions(0.05).maximize(true));
}

// A gradient that depends on the parameter (so that the trajectories differ when the parameters
// do) and on the step, with both signs.
void set_grads(const std::vector<Tensor>& ps, int step) {
  for (Tensor p : ps) p.set_grad(p.detach().mul(3.0).sin().add(0.3 * (step % 3) - 0.3));
}

std::vector<double> host(const Tensor& t) { return t.to(kCPU).to_vector<double>(); }

// The state dict as a checkpoint carries it: the tensors plus the groups through their JSON text.
OptimizerStateDict through_json(const OptimizerStateDict& sd) {
  OptimizerStateDict copy;
  for (const auto& [k, t] : sd.state) copy.state.insert(k, t.clone());
  copy.set_groups_json(sd.groups_json());
  return copy;
}

// Two parameters on `d` in `dt`, two steps of `kind`: the optimizer and its parameters.
std::pair<std::unique_ptr<Optimizer>, std::vector<Tensor>> trained(const std::string& kind, Device d, DType dt) {
  std::vector<Tensor> ps = {
      wick::tensor(std::vector<double>{0.5, -1.25, 2.0, 0.75, -0.3, 1.1}, {2, 3}, TensorOptions(dt)).to(d),
      wick::tensor(std::vector<double>{-2.0, 0.4, 1.5, 0.01}, {4}, TensorOptions(dt)).to(d)};
  for (auto& p : ps) p.requires_grad_(true);
  auto opt = make(kind, ps);
  for (int s = 0; s < 2; ++s) {
    set_grads(ps, s);
    opt->step();
  }
  return {std::move(opt), ps};
}

}  // namespace

TEST_CASE("optim: Adamax NAdam RAdam and Rprop follow PyTorch 1.13's trajectories on every test device (oracle)",
          "[optim_more]") {
  const auto& cases = oracle_cases();
  std::map<std::string, int> count;
  for (const auto& c : cases) count[c.op] += 1;
  CHECK(count["optim_adamax"] == 4);
  CHECK(count["optim_nadam"] == 4);
  CHECK(count["optim_radam"] == 4);
  CHECK(count["optim_rprop"] == 4);
  for (const Device& d : test::test_devices()) {
    for (const auto& c : cases) {
      run_oracle_case(c, d, kFloat64, 1e-12);
      // float32 parameters and gradients stay within float32's precision of PyTorch's float64 path.
      run_oracle_case(c, d, kFloat32, 2e-5);
    }
  }
}

TEST_CASE("optim: the new optimizers' state dicts have PyTorch's names and round-trip bit-identically",
          "[optim_more]") {
  const std::map<std::string, std::vector<std::string>> names = {
      {"Adamax", {"step", "exp_avg", "exp_inf"}},
      {"NAdam", {"step", "exp_avg", "exp_avg_sq", "mu_product"}},
      {"RAdam", {"step", "exp_avg", "exp_avg_sq"}},
      {"Rprop", {"step", "prev", "step_size"}}};
  const std::map<std::string, std::vector<std::string>> keys = {
      {"Adamax", {"params", "lr", "beta1", "beta2", "eps", "weight_decay", "maximize"}},
      {"NAdam", {"params", "lr", "beta1", "beta2", "eps", "weight_decay", "momentum_decay"}},
      {"RAdam", {"params", "lr", "beta1", "beta2", "eps", "weight_decay"}},
      {"Rprop", {"params", "lr", "etaminus", "etaplus", "step_size_min", "step_size_max", "maximize"}}};
  for (const Device& d : test::test_devices()) {
    for (DType dt : {kFloat64, kFloat32}) {
      for (const auto& kind : kKinds) {
        INFO(kind << " on " << d << " in " << dt);
        auto [opt, ps] = trained(kind, d, dt);
        const OptimizerStateDict sd = opt->state_dict();
        CHECK(sd.optimizer == kind);
        std::vector<std::string> expected;
        for (int i = 0; i < 2; ++i)
          for (const auto& n : names.at(kind)) expected.push_back(fmt::format("state.{}.{}", i, n));
        std::vector<std::string> got;
        for (const auto& [k, t] : sd.state) got.push_back(k);
        std::sort(expected.begin(), expected.end());
        std::sort(got.begin(), got.end());
        CHECK(got == expected);
        CHECK(sd.state.at("state.0.step").item<double>() == 2);
        if (kind == "NAdam") {  // PyTorch's 0-dim float32 tensor: mu * mu' rounded to float32 each time
          const Tensor& mp = sd.state.at("state.1.mu_product");
          CHECK(mp.dim() == 0);
          CHECK(mp.dtype() == kFloat32);
          auto mu = [](double t) { return 0.9 * (1. - 0.5 * std::pow(0.96, t * 0.1)); };
          CHECK(mp.item<double>() == static_cast<double>(static_cast<float>(mu(1)) * static_cast<float>(mu(2))));
        }
        const auto j = nlohmann::ordered_json::parse(sd.groups_json());
        std::vector<std::string> gk;
        for (const auto& item : j.at("param_groups").at(0).items()) gk.push_back(item.key());
        CHECK(gk == keys.at(kind));
        // A fresh optimizer with default options on copies of the parameters takes the state and
        // the options, and continues exactly as the original.
        std::vector<Tensor> qs = {ps[0].detach().clone().requires_grad_(true),
                                  ps[1].detach().clone().requires_grad_(true)};
        std::unique_ptr<Optimizer> opt2;
        if (kind == "Adamax") opt2 = std::make_unique<Adamax>(qs);
        if (kind == "NAdam") opt2 = std::make_unique<NAdam>(qs);
        if (kind == "RAdam") opt2 = std::make_unique<RAdam>(qs);
        if (kind == "Rprop") opt2 = std::make_unique<Rprop>(qs);
        opt2->load_state_dict(through_json(sd));
        CHECK(opt2->param_groups()[0].options().values() == opt->param_groups()[0].options().values());
        for (int s = 2; s < 6; ++s) {
          set_grads(ps, s);
          opt->step();
          set_grads(qs, s);
          opt2->step();
          CHECK(host(ps[0]) == host(qs[0]));
          CHECK(host(ps[1]) == host(qs[1]));
        }
      }
    }
  }
}

TEST_CASE("optim: the new optimizers' state saved to a file loads and continues bit-identically", "[optim_more]") {
  test::TempDir dir("wick-optim-more-test");
  for (const auto& kind : kKinds) {
    INFO(kind);
    auto [opt, ps] = trained(kind, kCPU, kFloat32);
    const std::string path = dir.file(kind + ".safetensors");
    nn::save(*opt, path);
    std::vector<Tensor> qs = {ps[0].detach().clone().requires_grad_(true), ps[1].detach().clone().requires_grad_(true)};
    auto opt2 = make(kind, qs);
    nn::load(*opt2, path);
    for (int s = 2; s < 5; ++s) {
      set_grads(ps, s);
      opt->step();
      set_grads(qs, s);
      opt2->step();
      CHECK(host(ps[0]) == host(qs[0]));
      CHECK(host(ps[1]) == host(qs[1]));
    }
  }
}

TEST_CASE("optim: hostile state for the new optimizers is refused naming the key and changes nothing", "[optim_more]") {
  for (const auto& kind : kKinds) {
    INFO(kind);
    auto [opt, ps] = trained(kind, kCPU, kFloat64);
    const OptimizerStateDict good = through_json(opt->state_dict());
    const std::string first = kind == "Adamax" ? "exp_inf" : kind == "Rprop" ? "step_size" : "exp_avg_sq";
    std::vector<std::pair<OptimizerStateDict, std::string>> bad;
    OptimizerStateDict missing = good;
    missing.state.erase("state.1." + first);
    bad.emplace_back(missing, "missing key \"state.1." + first + "\"");
    OptimizerStateDict mistyped = good;
    mistyped.state.insert_or_assign("state.0." + first, wick::zeros({2, 3}, TensorOptions(kInt64)));
    bad.emplace_back(mistyped, "optimizer state must be floating-point");
    OptimizerStateDict shaped = good;
    shaped.state.insert_or_assign("state.0." + first, wick::zeros({3, 2}, TensorOptions(kFloat64)));
    bad.emplace_back(shaped, "has shape [3, 2] but the parameter has shape [2, 3]");
    OptimizerStateDict step = good;
    step.state.insert_or_assign("state.0.step", wick::scalar_tensor(-1.0, TensorOptions(kFloat32)));
    bad.emplace_back(step, "should hold one non-negative whole number");
    OptimizerStateDict foreign = good;
    foreign.optimizer = kind == "Adamax" ? "NAdam" : "Adamax";
    bad.emplace_back(foreign, "the state dict is for " + foreign.optimizer + " but this optimizer is " + kind);
    if (kind == "NAdam") {
      const double nan = std::numeric_limits<double>::quiet_NaN();
      for (const Tensor& t :
           {wick::scalar_tensor(1.5, TensorOptions(kFloat32)), wick::scalar_tensor(nan, TensorOptions(kFloat32)),
            wick::zeros({2}, TensorOptions(kFloat32)), wick::scalar_tensor(int64_t{0}, TensorOptions(kInt64))}) {
        OptimizerStateDict mp = good;
        mp.state.insert_or_assign("state.1.mu_product", t);
        bad.emplace_back(mp, "\"state.1.mu_product\" should hold one floating-point number in [0, 1]");
      }
      OptimizerStateDict no_mp = good;
      no_mp.state.erase("state.0.mu_product");
      bad.emplace_back(no_mp, "missing key \"state.0.mu_product\"");
    } else {  // mu_product is NAdam's alone
      OptimizerStateDict extra = good;
      extra.state.insert("state.0.mu_product", wick::scalar_tensor(0.5, TensorOptions(kFloat32)));
      bad.emplace_back(extra, "unexpected key \"state.0.mu_product\"");
    }
    OptimizerStateDict bad_option = good;  // a group option out of range, from the JSON
    for (auto& [k, v] : bad_option.param_groups[0].options)
      if (k == (kind == "Rprop" ? "etaplus" : "beta2")) v = kind == "Rprop" ? 0.9 : 1.0;
    bad.emplace_back(bad_option, kind == "Rprop" ? "invalid etaplus 0.9" : "invalid beta2 1");
    const auto before = opt->state_dict();
    for (const auto& [dict, message] : bad) {
      INFO(message);
      CHECK_THROWS_AS(opt->load_state_dict(dict), Error);
      CHECK_THROWS_WITH(opt->load_state_dict(dict), Catch::Contains(message) && Catch::Contains(kind));
    }
    // Nothing changed: the same state tensors (the very objects) and options.
    const auto after = opt->state_dict();
    REQUIRE(after.state.size() == before.state.size());
    for (const auto& [k, t] : before.state) {
      if (t.dim() == 0) {
        CHECK(after.state.at(k).item<double>() == t.item<double>());
      } else {
        CHECK(after.state.at(k).data_ptr() == t.data_ptr());
        CHECK(host(after.state.at(k)) == host(t));
      }
    }
    CHECK(after.param_groups[0].options == before.param_groups[0].options);
  }
}

TEST_CASE("optim: the new optimizers refuse bad options naming the optimizer the option and the value",
          "[optim_more]") {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  Tensor p = wick::ones({2}, TensorOptions(kFloat64).requires_grad());
  const std::vector<Tensor> ps = {p};
  const std::vector<std::pair<std::string, std::function<void()>>> bad = {
      {"Adamax: invalid learning rate -1", [&] { Adamax(ps, AdamaxOptions(-1)); }},
      {"Adamax: invalid eps nan", [&] { Adamax(ps, AdamaxOptions().eps(nan)); }},
      {"Adamax: invalid beta1 1 ",
       [&] {
         Adamax(ps, AdamaxOptions().betas({1.0, 0.9}));
       }},
      {"Adamax: invalid beta2 -0.1", [&] { Adamax(ps, AdamaxOptions().beta2(-0.1)); }},
      {"Adamax: invalid weight_decay -1", [&] { Adamax(ps, AdamaxOptions().weight_decay(-1)); }},
      {"NAdam: invalid learning rate inf", [&] { NAdam(ps, NAdamOptions(inf)); }},
      {"NAdam: invalid eps -1", [&] { NAdam(ps, NAdamOptions().eps(-1)); }},
      {"NAdam: invalid beta1 nan", [&] { NAdam(ps, NAdamOptions().beta1(nan)); }},
      {"NAdam: invalid beta2 1.5",
       [&] {
         NAdam(ps, NAdamOptions().betas({0.9, 1.5}));
       }},
      {"NAdam: invalid weight_decay inf", [&] { NAdam(ps, NAdamOptions().weight_decay(inf)); }},
      {"NAdam: invalid momentum_decay -0.004", [&] { NAdam(ps, NAdamOptions().momentum_decay(-0.004)); }},
      {"RAdam: invalid learning rate -0.001", [&] { RAdam(ps, RAdamOptions(-0.001)); }},
      {"RAdam: invalid eps inf", [&] { RAdam(ps, RAdamOptions().eps(inf)); }},
      {"RAdam: invalid beta1 -0.5", [&] { RAdam(ps, RAdamOptions().beta1(-0.5)); }},
      {"RAdam: invalid beta2 1 ", [&] { RAdam(ps, RAdamOptions().beta2(1)); }},
      {"RAdam: invalid weight_decay nan", [&] { RAdam(ps, RAdamOptions().weight_decay(nan)); }},
      {"Rprop: invalid learning rate -1", [&] { Rprop(ps, RpropOptions(-1)); }},
      {"Rprop: invalid etaminus 0 ",
       [&] {
         Rprop(ps, RpropOptions().etas({0.0, 1.2}));
       }},
      {"Rprop: invalid etaminus 1 ", [&] { Rprop(ps, RpropOptions().etaminus(1)); }},
      {"Rprop: invalid etaplus 1 ", [&] { Rprop(ps, RpropOptions().etaplus(1)); }},
      {"Rprop: invalid etaplus inf", [&] { Rprop(ps, RpropOptions().etaplus(inf)); }},
      {"Rprop: invalid step_size_min -1e-06",
       [&] {
         Rprop(ps, RpropOptions().step_sizes({-1e-6, 50}));
       }},
      {"Rprop: invalid step_size_max 0.5 (must be finite and >= step_size_min 1)",
       [&] {
         Rprop(ps, RpropOptions().step_sizes({1, 0.5}));
       }},
      {"Rprop: invalid step_size_max nan", [&] { Rprop(ps, RpropOptions().step_size_max(nan)); }},
  };
  for (const auto& [message, f] : bad) {
    INFO(message);
    CHECK_THROWS_AS(f(), ValueError);
    CHECK_THROWS_WITH(f(), Catch::Contains(message));
  }
  // A group's own bad options are refused by add_param_group, which then adds nothing; a step
  // with a group made bad afterwards changes nothing.
  Tensor q = wick::ones({3}, TensorOptions(kFloat64).requires_grad());
  NAdam opt(ps);
  CHECK_THROWS_WITH(opt.add_param_group(ParamGroup({q}, std::make_unique<NAdamOptions>(NAdamOptions().beta1(2)))),
                    Catch::Contains("NAdam: invalid beta1 2"));
  CHECK(opt.param_groups().size() == 1);
  p.set_grad(wick::ones({2}, TensorOptions(kFloat64)));
  static_cast<NAdamOptions&>(opt.param_groups()[0].options()).eps(-1);
  CHECK_THROWS_WITH(opt.step(), Catch::Contains("NAdam: invalid eps -1"));
  CHECK(opt.state(p) == nullptr);
  CHECK(host(p) == std::vector<double>{1, 1});
  // Defaults are PyTorch 1.13's.
  CHECK(AdamaxOptions().lr() == 2e-3);
  CHECK(NAdamOptions().lr() == 2e-3);
  CHECK(NAdamOptions().momentum_decay() == 4e-3);
  CHECK(RAdamOptions().lr() == 1e-3);
  CHECK(RpropOptions().lr() == 1e-2);
  CHECK(RpropOptions().etas() == std::tuple<double, double>{0.5, 1.2});
  CHECK(RpropOptions().step_sizes() == std::tuple<double, double>{1e-6, 50});
}
