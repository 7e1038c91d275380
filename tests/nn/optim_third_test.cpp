// Adadelta, ASGD, LBFGS, MultiplicativeLR and ChainedScheduler against PyTorch 1.13's trajectories
// and lrs (tests/data/optim_third.py writes optim_third_torch.h) on every test device; their state
// dicts (round trips that continue bit-identically, hostile state refused) and what they refuse.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "optim_third_torch.h"
#include "support/allclose.h"
#include "support/devices.h"
#include "support/temp_dir.h"
#include "wick/autograd/functions.h"
#include "wick/nn/checkpoint.h"
#include "wick/nn/optim/optim.h"

using namespace wick;
using namespace wick::optim;
namespace torch113 = wick::optim::testing::torch113_third;

namespace {

using Table = std::vector<std::vector<double>>;
const std::vector<double> kC0 = {1.0, 0.5, 2.0, 0.1, 3.0, 0.7}, kD0 = {0.2, -0.4, 0.1, 0.9, -1.0, 0.05};
const std::vector<double> kC1 = {0.3, 1.7, 0.9, 2.5}, kD1 = {-0.6, 0.8, 0.0, 0.3};

std::vector<double> host(const Tensor& t) { return t.to(kCPU).to_vector<double>(); }
Tensor leaf(const std::vector<double>& v, IntArrayRef shape, Device d, DType dt) {
  return wick::tensor(v, shape, TensorOptions(dt)).to(d).requires_grad_(true);
}
std::vector<Tensor> two_params(Device d, DType dt) {
  return {leaf({0.5, -1.25, 2.0, 0.75, -0.3, 1.1}, {2, 3}, d, dt), leaf({-2.0, 0.4, 1.5, 0.01}, {4}, d, dt)};
}
// grad = c * x + d, set by hand as optim_third.py does.
void set_grads(const std::vector<Tensor>& ps) {
  for (size_t i = 0; i < 2; ++i) {
    const TensorOptions o = TensorOptions(ps[i].dtype()).device(ps[i].device());
    Tensor c = wick::tensor(i == 0 ? kC0 : kC1, ps[i].sizes(), o),
           d = wick::tensor(i == 0 ? kD0 : kD1, ps[i].sizes(), o);
    Tensor p = ps[i];
    p.set_grad(c.mul(p.detach()).add(d));
  }
}
// The two-group optimizers of optim_third.py (the second group's options given in full).
std::unique_ptr<Optimizer> make(const std::string& kind, const std::vector<Tensor>& ps) {
  std::vector<ParamGroup> g;
  g.emplace_back(std::vector<Tensor>{ps[0]});
  if (kind == "adadelta") {
    g.emplace_back(std::vector<Tensor>{ps[1]},
                   std::make_unique<AdadeltaOptions>(AdadeltaOptions(0.5).rho(0.8).eps(1e-4).maximize(true)));
    return std::make_unique<Adadelta>(std::move(g), AdadeltaOptions().weight_decay(0.1));
  }
  if (kind == "adadelta_defaults") {
    g.emplace_back(std::vector<Tensor>{ps[1]},
                   std::make_unique<AdadeltaOptions>(AdadeltaOptions().rho(0.5).weight_decay(0.2)));
    return std::make_unique<Adadelta>(std::move(g), AdadeltaOptions());
  }
  if (kind == "asgd") {
    g.emplace_back(std::vector<Tensor>{ps[1]},
                   std::make_unique<ASGDOptions>(ASGDOptions(0.2).lambd(0.01).alpha(0.5).t0(0).maximize(true)));
    return std::make_unique<ASGD>(std::move(g), ASGDOptions(0.05).lambd(0.1).t0(2).weight_decay(0.1));
  }
  g.emplace_back(std::vector<Tensor>{ps[1]}, std::make_unique<ASGDOptions>(ASGDOptions().t0(3)));
  return std::make_unique<ASGD>(std::move(g), ASGDOptions());
}
// A row as optim_third.py writes it: p, q (and ASGD's ax, eta and mu).
std::vector<double> row(const Optimizer& o, const std::vector<Tensor>& ps, bool asgd) {
  std::vector<double> r = host(ps[0]);
  for (double v : host(ps[1])) r.push_back(v);
  if (!asgd) return r;
  for (const auto& p : ps)
    for (double v : host(o.state(p)->buffers.at("ax"))) r.push_back(v);
  for (const auto& p : ps) r.insert(r.end(), {o.state(p)->scalars.at("eta"), o.state(p)->scalars.at("mu")});
  return r;
}
void check_row(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << " want " << want[i]);
    CHECK(std::abs(got[i] - want[i]) <= tol * std::max(1.0, std::abs(want[i])));
  }
}

// The LBFGS problems of optim_third.py over a = [3] or [2] and b = [2].
Tensor quadratic(const Tensor& a, const Tensor& b) {
  const TensorOptions o = TensorOptions(a.dtype()).device(a.device());
  Tensor x = wick::cat({a, b}, 0);
  Tensor c = wick::tensor({1.0, 3.0, 0.5, 2.0, 1.5}, o), d = wick::tensor({0.5, -1.0, 0.25, 2.0, -0.75}, o);
  Tensor s = wick::sum(x);
  return wick::sum(c * x * x) * 0.5 + wick::sum(d * x) + s * s * 0.3;
}
Tensor rosenbrock(const Tensor& a, const Tensor& b) {
  Tensor x = a.select(0, 0), y = a.select(0, 1);
  Tensor u = x.mul(-1).add(1), v = y - x * x;
  return u * u + v * v * 100 + wick::sum(b) * 0;
}
struct LbfgsRun {
  Tensor a, b;
  std::unique_ptr<LBFGS> opt;
  std::function<Tensor(const Tensor&, const Tensor&)> f;
  std::vector<double> step() {
    Tensor loss = opt->step([&] {
      opt->zero_grad();
      Tensor l = f(a, b);
      l.backward();
      return l;
    });
    std::vector<double> r = host(a);
    for (double v : host(b)) r.push_back(v);
    const ParamState* st = opt->state(a);
    r.push_back(loss.item<double>());
    r.push_back(st->buffers.at("func_evals").item<double>());
    r.push_back(st->buffers.at("n_iter").item<double>());
    return r;
  }
};
LbfgsRun lbfgs_run(const std::string& name, Device d) {
  const bool quad = name.rfind("lbfgs_quadratic", 0) == 0;
  LbfgsRun r;
  r.a = leaf(quad ? std::vector<double>{-1.5, 2.0, 0.5} : std::vector<double>{-1.5, 2.0}, {quad ? 3 : 2}, d, kFloat64);
  r.b = leaf({1.0, -0.5}, {2}, d, kFloat64);
  r.f = quad ? quadratic : rosenbrock;
  LBFGSOptions o;
  if (name == "lbfgs_quadratic") o.max_iter(4);
  if (name == "lbfgs_quadratic_wolfe") o.max_iter(3).history_size(2).line_search_fn("strong_wolfe");
  if (name == "lbfgs_rosenbrock") o.lr(0.1).max_iter(10).history_size(5);
  if (name == "lbfgs_rosenbrock_wolfe") o.max_iter(8).line_search_fn("strong_wolfe");
  r.opt = std::make_unique<LBFGS>(std::vector<Tensor>{r.a, r.b}, o);
  return r;
}
const std::vector<std::pair<std::string, const Table*>> kLbfgs = {
    {"lbfgs_quadratic", &torch113::lbfgs_quadratic},
    {"lbfgs_quadratic_wolfe", &torch113::lbfgs_quadratic_wolfe},
    {"lbfgs_rosenbrock", &torch113::lbfgs_rosenbrock},
    {"lbfgs_rosenbrock_wolfe", &torch113::lbfgs_rosenbrock_wolfe}};

// The state dict as a checkpoint carries it: the tensors plus the groups through their JSON text.
OptimizerStateDict through_json(OptimizerStateDict sd) {
  for (const auto& k : sd.state.keys()) sd.state.at(k) = sd.state.at(k).clone();
  sd.set_groups_json(sd.groups_json());
  return sd;
}

}  // namespace

TEST_CASE("optim: Adadelta and ASGD follow PyTorch 1.13's trajectories with two groups on every test device",
          "[optim_third]") {
  const std::vector<std::pair<std::string, const Table*>> cases = {{"adadelta", &torch113::adadelta},
                                                                   {"adadelta_defaults", &torch113::adadelta_defaults},
                                                                   {"asgd", &torch113::asgd},
                                                                   {"asgd_defaults", &torch113::asgd_defaults}};
  for (const Device& d : test::test_devices()) {
    for (DType dt : {kFloat64, kFloat32}) {
      for (const auto& [kind, table] : cases) {
        INFO(kind << " on " << d << " in " << dt);
        auto ps = two_params(d, dt);
        auto opt = make(kind, ps);
        for (size_t s = 0; s < table->size(); ++s) {
          INFO("after step " << s + 1);
          set_grads(ps);
          opt->step();
          // float32 stays within float32's precision of PyTorch's float64 path.
          check_row(row(*opt, ps, kind.rfind("asgd", 0) == 0), (*table)[s], dt == kFloat64 ? 1e-12 : 2e-5);
        }
        CHECK(opt->state(ps[1])->step == static_cast<int64_t>(table->size()));
      }
    }
  }
}

TEST_CASE(
    "optim: LBFGS follows PyTorch 1.13's iterates on a quadratic and on Rosenbrock with and without "
    "strong_wolfe",
    "[optim_third]") {
  for (const Device& d : test::test_devices()) {
    for (const auto& [name, table] : kLbfgs) {
      INFO(name << " on " << d);
      LbfgsRun run = lbfgs_run(name, d);
      for (size_t s = 0; s < table->size(); ++s) {
        INFO("after step " << s + 1);
        const auto got = run.step();
        check_row(got, (*table)[s], 1e-9);
        // func_evals and n_iter, exactly
        CHECK((got[got.size() - 2] == (*table)[s][got.size() - 2] && got.back() == (*table)[s].back()));
      }
    }
  }
}

TEST_CASE("optim: MultiplicativeLR and ChainedScheduler set PyTorch 1.13's lrs bit for bit", "[optim_third]") {
  using Make = std::function<std::shared_ptr<LRScheduler>(Optimizer&)>;
  const std::vector<std::tuple<const Table*, Make>> cases = {
      {&torch113::multiplicative_lr,
       [](Optimizer& o) { return std::make_shared<MultiplicativeLR>(o, [](int64_t) { return 0.95; }); }},
      {&torch113::multiplicative_lr_per_group,
       [](Optimizer& o) {
         return std::make_shared<MultiplicativeLR>(
             o, std::vector<LrLambda>{[](int64_t) { return 0.9; }, [](int64_t e) { return 1 - 0.05 * e; }});
       }},
      {&torch113::chained_constant_exponential,
       [](Optimizer& o) {
         return std::make_shared<ChainedScheduler>(std::vector<std::shared_ptr<LRScheduler>>{
             std::make_shared<ConstantLR>(o, 0.1, 2), std::make_shared<ExponentialLR>(o, 0.9)});
       }},
      {&torch113::chained_multiplicative_step, [](Optimizer& o) {
         return std::make_shared<ChainedScheduler>(std::vector<std::shared_ptr<LRScheduler>>{
             std::make_shared<MultiplicativeLR>(o, [](int64_t) { return 0.95; }), std::make_shared<StepLR>(o, 3, 0.5),
             std::make_shared<LinearLR>(o, 0.5, 1.0, 4)});
       }}};
  for (size_t c = 0; c < cases.size(); ++c) {
    INFO("case " << c);
    const auto& [table, make_scheduler] = cases[c];
    Tensor p = wick::ones({1}, TensorOptions(kFloat64).requires_grad()),
           q = wick::ones({1}, TensorOptions(kFloat64).requires_grad());
    std::vector<ParamGroup> groups;
    groups.emplace_back(std::vector<Tensor>{p});
    groups.emplace_back(std::vector<Tensor>{q}, std::make_unique<SGDOptions>(0.03));
    SGD opt(std::move(groups), SGDOptions(0.1));
    auto sched = make_scheduler(opt);
    for (size_t e = 0; e < table->size(); ++e) {
      INFO("epoch " << e);
      if (e > 0) sched->step();
      CHECK(sched->get_last_lr() == (*table)[e]);
      CHECK(opt.param_groups()[0].options().get_lr() == (*table)[e][0]);
      CHECK(opt.param_groups()[1].options().get_lr() == (*table)[e][1]);
      if (c < 2) CHECK(sched->closed_form_lr(1, static_cast<int64_t>(e)) == (*table)[e][1]);
    }
    if (c >= 2) CHECK_THROWS_AS(sched->closed_form_lr(0, 1), NotImplementedError);
  }
}

TEST_CASE("optim: Adadelta ASGD and LBFGS state dicts have PyTorch's names and continue bit-identically",
          "[optim_third]") {
  test::TempDir dir("wick-optim-third-test");
  for (const Device& d : test::test_devices()) {
    for (const std::string kind : {"adadelta", "asgd"}) {
      INFO(kind << " on " << d);
      auto ps = two_params(d, kFloat32);
      auto opt = make(kind, ps);
      for (int s = 0; s < 3; ++s) set_grads(ps), opt->step();
      const OptimizerStateDict sd = opt->state_dict();
      CHECK(sd.optimizer == (kind == "asgd" ? "ASGD" : "Adadelta"));
      std::string keys;
      for (const auto& [k, t] : sd.state) keys += k + " ";
      const std::string names = kind == "asgd" ? "step ax eta mu" : "step square_avg acc_delta";
      std::string want;
      for (int i = 0; i < 2; ++i)
        for (const auto& n : {"step", "ax", "eta", "mu", "square_avg", "acc_delta"})
          if (names.find(n) != std::string::npos) want += fmt::format("state.{}.{} ", i, n);
      CHECK(keys == want);
      std::vector<Tensor> qs = {ps[0].detach().clone().requires_grad_(true),
                                ps[1].detach().clone().requires_grad_(true)};
      std::unique_ptr<Optimizer> opt2 = make(kind == "asgd" ? "asgd_defaults" : "adadelta_defaults", qs);
      opt2->load_state_dict(through_json(sd));
      CHECK(opt2->param_groups()[1].options().values() == opt->param_groups()[1].options().values());
      for (int s = 0; s < 3; ++s) {
        set_grads(ps), opt->step();
        set_grads(qs), opt2->step();
        CHECK(host(ps[0]) == host(qs[0]));
        CHECK(host(ps[1]) == host(qs[1]));
      }
    }
    // LBFGS: stopped after each step, saved to a file, loaded into a fresh optimizer (default
    // options, which the file replaces), continued: PyTorch's iterates.
    for (const auto& [name, table] : kLbfgs) {
      INFO(name << " on " << d);
      LbfgsRun run = lbfgs_run(name, d);
      for (size_t s = 0; s < table->size(); ++s) {
        INFO("after step " << s + 1);
        const std::string path = dir.file(name + ".safetensors");
        if (s > 0) {
          nn::save(*run.opt, path);
          run.opt = std::make_unique<LBFGS>(std::vector<Tensor>{run.a, run.b});
          nn::load(*run.opt, path);
        }
        check_row(run.step(), (*table)[s], 1e-9);
      }
      std::vector<std::string> keys;
      for (const auto& [k, t] : run.opt->state_dict().state) keys.push_back(k);
      std::sort(keys.begin(), keys.end());  // a loaded state keeps the file's order
      CHECK(keys == std::vector<std::string>{"state.0.H_diag", "state.0.d", "state.0.func_evals", "state.0.n_iter",
                                             "state.0.old_dirs", "state.0.old_stps", "state.0.prev_flat_grad",
                                             "state.0.prev_loss", "state.0.ro", "state.0.t"});
    }
  }
}

TEST_CASE("optim: hostile Adadelta ASGD and LBFGS state is refused naming the key and changes nothing",
          "[optim_third]") {
  auto ps = two_params(kCPU, kFloat64);
  auto asgd = make("asgd", ps);
  set_grads(ps), asgd->step();
  OptimizerStateDict bad_eta = asgd->state_dict();
  bad_eta.state.insert_or_assign("state.1.eta", wick::scalar_tensor(-0.5, TensorOptions(kFloat32)));
  CHECK_THROWS_WITH(asgd->load_state_dict(bad_eta),
                    Catch::Contains("\"state.1.eta\" should hold one floating-point number that is finite and >= 0"));
  OptimizerStateDict bad_mu = asgd->state_dict();
  bad_mu.state.insert_or_assign("state.0.mu", wick::scalar_tensor(2.0, TensorOptions(kFloat32)));
  CHECK_THROWS_WITH(asgd->load_state_dict(bad_mu),
                    Catch::Contains("\"state.0.mu\" should hold one floating-point number in [0, 1]"));
  auto qs = two_params(kCPU, kFloat64);
  auto adadelta = make("adadelta", qs);
  set_grads(qs), adadelta->step();
  OptimizerStateDict missing = adadelta->state_dict();
  missing.state.erase("state.0.acc_delta");
  CHECK_THROWS_WITH(adadelta->load_state_dict(missing), Catch::Contains("missing key \"state.0.acc_delta\""));

  LbfgsRun run = lbfgs_run("lbfgs_quadratic_wolfe", kCPU);
  run.step(), run.step();
  const OptimizerStateDict good = through_json(run.opt->state_dict());
  const auto before = host(run.opt->state_dict().state.at("state.0.d"));
  std::vector<std::pair<OptimizerStateDict, std::string>> bad;
  OptimizerStateDict rows = good;
  rows.state.insert_or_assign("state.0.ro", wick::zeros({1}, TensorOptions(kFloat64)));
  bad.emplace_back(rows, "old_dirs, old_stps and ro must have one length, at most history_size 2");
  OptimizerStateDict flat = good;
  flat.state.insert_or_assign("state.0.d", wick::zeros({4}, TensorOptions(kFloat64)));
  bad.emplace_back(flat, "key \"state.0.d\" has shape [4] but should have shape [5]");
  OptimizerStateDict other = good;
  other.state.insert("state.1.n_iter", wick::scalar_tensor(1.0, TensorOptions(kFloat64)));
  bad.emplace_back(other, "LBFGS keeps its state as parameter 0's");
  OptimizerStateDict partial = good;
  partial.state.erase("state.0.old_stps");
  bad.emplace_back(partial, "also needs old_stps");
  OptimizerStateDict count = good;
  count.state.insert_or_assign("state.0.n_iter", wick::scalar_tensor(1.5, TensorOptions(kFloat64)));
  bad.emplace_back(count, "\"state.0.n_iter\" should hold one non-negative whole number");
  OptimizerStateDict option = good;
  for (auto& [k, v] : option.param_groups[0].options)
    if (k == "history_size") v = 0.5;
  bad.emplace_back(option, "LBFGS: invalid history_size 0.5 (must be a whole number >= 1)");
  for (const auto& [dict, message] : bad) {
    INFO(message);
    CHECK_THROWS_AS(run.opt->load_state_dict(dict), Error);
    CHECK_THROWS_WITH(run.opt->load_state_dict(dict), Catch::Contains(message));
  }
  CHECK(host(run.opt->state_dict().state.at("state.0.d")) == before);
  check_row(run.step(), torch113::lbfgs_quadratic_wolfe[2], 1e-9);  // unchanged: the run goes on as PyTorch's
}

TEST_CASE("optim: Adadelta ASGD LBFGS and the new schedulers refuse bad options naming the option", "[optim_third]") {
  Tensor p = wick::ones({2}, TensorOptions(kFloat64).requires_grad());
  const std::vector<Tensor> ps = {p};
  const std::vector<std::pair<std::string, std::function<void()>>> bad = {
      {"Adadelta: invalid learning rate -1", [&] { Adadelta(ps, AdadeltaOptions(-1)); }},
      {"Adadelta: invalid rho 1.5 (must be in [0, 1])", [&] { Adadelta(ps, AdadeltaOptions().rho(1.5)); }},
      {"Adadelta: invalid eps -1", [&] { Adadelta(ps, AdadeltaOptions().eps(-1)); }},
      {"ASGD: invalid learning rate -0.1", [&] { ASGD(ps, ASGDOptions(-0.1)); }},
      {"ASGD: invalid weight_decay -1", [&] { ASGD(ps, ASGDOptions().weight_decay(-1)); }},
      {"ASGD: invalid lambd -1", [&] { ASGD(ps, ASGDOptions().lambd(-1)); }},
      {"LBFGS: invalid learning rate -1", [&] { LBFGS(ps, LBFGSOptions(-1)); }},
      {"LBFGS: invalid history_size 0", [&] { LBFGS(ps, LBFGSOptions().history_size(0)); }},
      {"LBFGS: invalid max_iter 0", [&] { LBFGS(ps, LBFGSOptions().max_iter(0)); }},
      {"LBFGS: unknown line_search_fn \"wolfe\"", [&] { LBFGS(ps, LBFGSOptions().line_search_fn("wolfe")); }},
      {"LBFGS doesn't support per-parameter options",
       [&] {
         std::vector<ParamGroup> g;
         g.emplace_back(std::vector<Tensor>{p});
         g.emplace_back(std::vector<Tensor>{wick::ones({1}, TensorOptions(kFloat64).requires_grad())});
         LBFGS(std::move(g), LBFGSOptions());
       }},
      {"so they need one dtype",
       [&] {
         LBFGS({p, wick::ones({1}, TensorOptions(kFloat32).requires_grad())});
       }},
      {"LBFGS.step: LBFGS needs a closure", [&] { LBFGS(ps).step(); }},
      {"LBFGS.step: the closure must return the loss, one element", [&] { LBFGS(ps).step([&] { return p * 2; }); }},
      {"MultiplicativeLR: lr_lambda is an empty std::function",
       [&] {
         SGD o(ps, 0.1);
         MultiplicativeLR(o, LrLambda());
       }},
      {"ChainedScheduler: needs at least one scheduler", [&] { ChainedScheduler({}); }},
      {"ChainedScheduler expects all schedulers to belong to the same optimizer",
       [&] {
         SGD a(ps, 0.1), b(ps, 0.1);
         ChainedScheduler({std::make_shared<StepLR>(a, 2), std::make_shared<StepLR>(b, 2)});
       }},
  };
  for (const auto& [message, f] : bad) {
    INFO(message);
    CHECK_THROWS_AS(f(), Error);
    CHECK_THROWS_WITH(f(), Catch::Contains(message));
  }
  CHECK_THROWS_AS(LBFGS({p, wick::ones({1}, TensorOptions(kFloat32).requires_grad())}), TypeError);
  LBFGS one(ps);
  CHECK(static_cast<const LBFGSOptions&>(one.defaults()).max_eval() == 25);  // max_iter * 5 / 4, as LibTorch
  CHECK_THROWS_WITH(one.add_param_group(ParamGroup({wick::ones({1}, TensorOptions(kFloat64).requires_grad())})),
                    Catch::Contains("add_param_group is refused"));
  CHECK(one.param_groups().size() == 1);  // and the defaults are PyTorch 1.13's:
  CHECK((AdadeltaOptions().lr() == 1.0 && AdadeltaOptions().eps() == 1e-6 && ASGDOptions().lr() == 1e-2 &&
         ASGDOptions().t0() == 1e6 && LBFGSOptions().tolerance_grad() == 1e-7 && LBFGSOptions().history_size() == 100));
}
