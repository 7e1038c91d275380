// wick::optim: state dicts round trip and continue bit-identically, load_state_dict names every
// problem and changes nothing, converts the state's dtype, and loads a state saved under other
// options. Against the float64 reference: optim_test.cpp.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "support/devices.h"
#include "support/optim_reference.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/nn/modules/linear.h"
#include "wick/nn/optim/optim.h"
#include "wick/parallel/replicate.h"

using namespace wick;
using namespace wick::optim;
using namespace wick::test::optim_reference;

TEST_CASE("optim: state_dict round trip continues bit-identically", "[optim][state]") {
  for (Config cf : {Config{"SGD"}, Config{"Adam"}, Config{"AdamW"}}) {
    cf.momentum = 0.9;
    cf.amsgrad = true;
    cf.weight_decay = 0.01;
    cf.lr = 0.01;
    INFO(cf.kind);
    auto refs = make_refs();
    std::vector<Tensor> ps = {to_tensor(refs[0].p, {2, 3}, kFloat32), to_tensor(refs[1].p, {4}, kFloat32)};
    std::vector<ParamGroup> groups;
    groups.emplace_back(std::vector<Tensor>{ps[0]});
    groups.emplace_back(std::vector<Tensor>{ps[1]}, options_of([&] {
                          Config c = cf;
                          c.lr = 0.003;
                          return c;
                        }()));
    auto opt = make(cf, groups);
    for (int s = 0; s < 3; ++s) {
      opt->zero_grad();
      compute_grads(ps, refs);
      opt->step();
    }
    OptimizerStateDict sd = opt->state_dict();
    CHECK(sd.optimizer == cf.kind);
    if (cf.kind == "SGD") {
      CHECK(sd.state.keys() == std::vector<std::string>{"state.0.momentum_buffer", "state.1.momentum_buffer"});
    } else {
      CHECK(sd.state.contains("state.1.max_exp_avg_sq"));
      CHECK(sd.state.at("state.0.step").item<double>() == 3.0);
      CHECK(sd.state.at("state.0.step").dtype() == kFloat32);
    }
    // Through the JSON text a checkpoint stores.
    OptimizerStateDict copy;
    copy.state = sd.state;
    copy.set_groups_json(sd.groups_json());
    CHECK(copy.param_groups[1].params == std::vector<int64_t>{1});

    std::vector<Tensor> qs = {ps[0].detach().clone().requires_grad_(true), ps[1].detach().clone().requires_grad_(true)};
    std::vector<ParamGroup> groups2;
    groups2.emplace_back(std::vector<Tensor>{qs[0]});
    groups2.emplace_back(std::vector<Tensor>{qs[1]});
    auto opt2 = make(Config{cf.kind}, groups2);  // other options: the state dict restores them
    opt2->load_state_dict(copy);
    CHECK(opt2->param_groups()[1].options().get_lr() == Approx(0.003));
    for (int s = 0; s < 3; ++s) {
      opt->zero_grad();
      compute_grads(ps, refs);
      opt->step();
      opt2->zero_grad();
      compute_grads(qs, refs);
      opt2->step();
    }
    CHECK(ps[0].to_vector<float>() == qs[0].to_vector<float>());
    CHECK(ps[1].to_vector<float>() == qs[1].to_vector<float>());
  }
}

TEST_CASE("optim: load_state_dict names every problem and changes nothing", "[optim][state]") {
  Tensor p = wick::ones({2, 3}, TensorOptions(kFloat64).requires_grad());
  Tensor q = wick::ones({4}, TensorOptions(kFloat64).requires_grad());
  Adam opt(std::vector<Tensor>{p, q}, AdamOptions(0.1));
  wick::sum(p * q.sum()).backward();
  opt.step();
  OptimizerStateDict good = opt.state_dict();

  Tensor p2 = p.detach().clone().requires_grad_(true), q2 = q.detach().clone().requires_grad_(true);
  Adam fresh(std::vector<Tensor>{p2, q2}, AdamOptions(0.5));

  OptimizerStateDict bad = good;
  bad.state.insert_or_assign("state.0.exp_avg", wick::zeros({3, 2}, kFloat64));  // wrong shape
  bad.state.insert_or_assign("state.1.exp_avg_sq", wick::zeros({4}, kInt64));    // not floating-point
  bad.state.erase("state.1.exp_avg");                                            // missing
  bad.state.insert("state.0.momentum_buffer", wick::zeros({2, 3}, kFloat64));    // unexpected
  bad.state.insert("state.7.exp_avg", wick::zeros({2, 3}, kFloat64));            // unknown parameter
  bad.param_groups[0].options.emplace_back("foo", 1.0);                          // unknown option
  try {
    fresh.load_state_dict(bad);
    FAIL("no error");
  } catch (const Error& e) {
    std::string msg = e.what();
    INFO(msg);
    CHECK(msg.find("nothing was changed") != std::string::npos);
    CHECK(msg.find("\"state.0.exp_avg\" has shape [3, 2] but the parameter has shape [2, 3]") != std::string::npos);
    CHECK(msg.find("\"state.1.exp_avg_sq\" has dtype int64; optimizer state must be floating-point") !=
          std::string::npos);
    CHECK(msg.find("missing key \"state.1.exp_avg\"") != std::string::npos);
    CHECK(msg.find("unexpected key \"state.0.momentum_buffer\"") != std::string::npos);
    CHECK(msg.find("parameter 7") != std::string::npos);
    CHECK(msg.find("unknown foo") != std::string::npos);
  }
  CHECK(fresh.state(p2) == nullptr);
  CHECK(fresh.param_groups()[0].options().get_lr() == 0.5);

  OptimizerStateDict other = good;
  other.optimizer = "SGD";
  CHECK_THROWS_WITH(fresh.load_state_dict(other),
                    Catch::Contains("the state dict is for SGD but this optimizer is Adam"));
  other = good;
  other.param_groups.push_back(other.param_groups[0]);
  CHECK_THROWS_WITH(fresh.load_state_dict(other), Catch::Contains("2 parameter group(s) but this optimizer has 1"));
  CHECK_THROWS_WITH(other.set_groups_json("{not json"), Catch::Contains("not valid JSON"));
  fresh.load_state_dict(good);
  REQUIRE(fresh.state(p2) != nullptr);
  CHECK(fresh.state(p2)->step == 1);
}

TEST_CASE("optim: load_state_dict converts the state to the parameter's dtype, as PyTorch", "[optim][state]") {
  // A float32 Linear and Adam take one step; the model then moves to float64, and its optimizer's
  // own state dict (float32) loads into it, as torch.optim's load_state_dict casts floating state.
  manual_seed(3);
  auto lin = std::make_shared<nn::LinearImpl>(3, 2);
  const double lr = 0.1, b1 = 0.9, b2 = 0.999, eps = 1e-8;
  Adam opt(lin->parameters(), AdamOptions(lr));
  const std::vector<std::vector<double>> g1 = {{0.5, -1.25, 2.0, 0.75, -0.3, 1.1}, {0.2, -0.4}};
  const std::vector<std::vector<double>> g2 = {{-0.7, 0.3, 1.9, -0.05, 0.6, -2.2}, {1.5, 0.01}};
  auto set_grads = [&](const std::vector<std::vector<double>>& g, DType dt) {
    const auto ps = lin->parameters();
    for (size_t i = 0; i < ps.size(); ++i) {
      Tensor p = ps[i];
      p.set_grad(wick::tensor(g[i], p.sizes(), TensorOptions(dt)));
    }
  };
  set_grads(g1, kFloat32);
  opt.step();
  const OptimizerStateDict sd = opt.state_dict();
  // After one step, as float64 (float32 to float64 is exact).
  std::vector<std::vector<double>> p1, m1, v1;
  for (const auto& p : lin->parameters()) {
    p1.push_back(p.to_vector<double>());
    m1.push_back(opt.state(p)->buffers.at("exp_avg").to_vector<double>());
    v1.push_back(opt.state(p)->buffers.at("exp_avg_sq").to_vector<double>());
  }
  lin->zero_grad();
  lin->to(kFloat64);
  set_grads(g2, kFloat64);
  CHECK_THROWS_WITH(opt.step(), Catch::Contains("load_state_dict(state_dict())"));  // the advice it gives
  opt.load_state_dict(sd);
  opt.step();
  const auto ps = lin->parameters();
  for (size_t i = 0; i < ps.size(); ++i) {
    const ParamState* st = opt.state(ps[i]);
    REQUIRE(st != nullptr);
    CHECK(st->step == 2);
    CHECK(st->buffers.at("exp_avg").dtype() == kFloat64);
    CHECK(st->buffers.at("exp_avg_sq").dtype() == kFloat64);
    // The second step in float64 by PyTorch's formulas, from the first step's (float32) state.
    std::vector<double> p2, m2, v2;
    for (size_t j = 0; j < p1[i].size(); ++j) {
      const double g = g2[i][j];
      m2.push_back(b1 * m1[i][j] + (1 - b1) * g);
      v2.push_back(b2 * v1[i][j] + (1 - b2) * g * g);
      const double denom = std::sqrt(v2.back()) / std::sqrt(1 - b2 * b2) + eps;
      p2.push_back(p1[i][j] - lr / (1 - b1 * b1) * m2.back() / denom);
    }
    check_close(st->buffers.at("exp_avg"), m2, 1e-15, "exp_avg " + std::to_string(i));
    check_close(st->buffers.at("exp_avg_sq"), v2, 1e-15, "exp_avg_sq " + std::to_string(i));
    check_close(ps[i], p2, 1e-14, "parameter " + std::to_string(i));  // float32 arithmetic would be ~1e-8 off
  }
  // And back: a float64 state dict loads into the float32 model.
  const OptimizerStateDict sd64 = opt.state_dict();
  lin->to(kFloat32);
  opt.load_state_dict(sd64);
  CHECK(opt.state(lin->parameters()[0])->buffers.at("exp_avg").dtype() == kFloat32);
}

TEST_CASE("optim: a state dict saved after amsgrad or momentum was toggled loads and continues bit for bit",
          "[optim][state]") {
  // (a) Adam amsgrad on -> off keeps max_exp_avg_sq; (b) SGD momentum 0.9 -> 0 keeps momentum_buffer;
  // (c) Adam amsgrad off -> on has no max_exp_avg_sq until the next step makes it. Each used to be
  // refused ("unexpected key" or "missing key") by a fresh optimizer.
  for (const std::string what : {"(a)", "(b)", "(c)"}) {
    INFO(what);
    const bool sgd = what == "(b)";
    const bool on_first = what != "(c)";
    auto toggle = [&](Optimizer& o, bool on) {
      for (auto& g : o.param_groups()) {
        if (sgd)
          static_cast<SGDOptions&>(g.options()).momentum(on ? 0.9 : 0.0);
        else
          static_cast<AdamOptions&>(g.options()).amsgrad(on);
      }
    };
    auto refs = make_refs();
    std::vector<Tensor> ps = {to_tensor(refs[0].p, {2, 3}, kFloat64), to_tensor(refs[1].p, {4}, kFloat64)};
    Config cf{sgd ? "SGD" : "Adam"};
    cf.lr = 0.01;
    auto opt = make(cf, {ParamGroup(ps)});
    toggle(*opt, on_first);
    opt->zero_grad();
    compute_grads(ps, refs);
    opt->step();
    toggle(*opt, !on_first);
    const OptimizerStateDict sd = opt->state_dict();
    if (what == "(a)") CHECK(sd.state.contains("state.0.max_exp_avg_sq"));
    if (what == "(b)") CHECK(sd.state.contains("state.0.momentum_buffer"));
    if (what == "(c)") CHECK_FALSE(sd.state.contains("state.0.max_exp_avg_sq"));
    OptimizerStateDict copy;
    copy.state = sd.state;
    copy.set_groups_json(sd.groups_json());
    std::vector<Tensor> qs = {ps[0].detach().clone().requires_grad_(true), ps[1].detach().clone().requires_grad_(true)};
    auto opt2 = make(Config{cf.kind}, {ParamGroup(qs)});
    opt2->load_state_dict(copy);
    // Two steps as saved, then one with the option toggled back (the kept buffers are used again).
    for (int s = 0; s < 3; ++s) {
      if (s == 2) {
        toggle(*opt, on_first);
        toggle(*opt2, on_first);
      }
      opt->zero_grad();
      compute_grads(ps, refs);
      opt->step();
      opt2->zero_grad();
      compute_grads(qs, refs);
      opt2->step();
      CHECK(ps[0].to_vector<double>() == qs[0].to_vector<double>());
      CHECK(ps[1].to_vector<double>() == qs[1].to_vector<double>());
    }
  }
  // Names that no step makes are still refused.
  Tensor p = wick::ones({2}, TensorOptions(kFloat64).requires_grad());
  SGD sgd(std::vector<Tensor>{p}, SGDOptions(0.1));
  OptimizerStateDict sd = sgd.state_dict();
  sd.state.insert("state.0.exp_avg", wick::zeros({2}, kFloat64));
  CHECK_THROWS_WITH(sgd.load_state_dict(sd),
                    Catch::Contains("unexpected key \"state.0.exp_avg\" (SGD keeps: momentum_buffer)"));
}
