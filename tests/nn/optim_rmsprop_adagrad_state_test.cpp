// wick::optim's RMSprop and Adagrad state dicts: PyTorch's names, bit-identical round trips,
// Adagrad's state from construction, the other type's state refused, and checkpoint files that
// load and continue bit-identically. The trajectories: optim_rmsprop_adagrad_test.cpp.
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
