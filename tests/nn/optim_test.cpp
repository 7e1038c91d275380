// wick::optim: several steps of each optimizer configuration against the update formulas
// computed independently here in float64 (plain std::vector<double> math), parameter groups,
// options and state dicts. The schedulers are in lr_scheduler_test.cpp.
#include "wick/nn/optim/optim.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "support/devices.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/nn/modules/linear.h"
#include "wick/parallel/replicate.h"

using namespace wick;
using namespace wick::optim;

namespace {

struct Config {
  std::string kind;  // "SGD", "Adam", "AdamW"
  double lr = 0.1, momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false, amsgrad = false, maximize = false;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  std::string label() const {
    return kind + " lr=" + std::to_string(lr) + " mom=" + std::to_string(momentum) +
           " damp=" + std::to_string(dampening) + " wd=" + std::to_string(weight_decay) +
           (nesterov ? " nesterov" : "") + (amsgrad ? " amsgrad" : "") + (maximize ? " maximize" : "") +
           " betas=" + std::to_string(beta1) + "," + std::to_string(beta2);
  }
};

// The float64 reference: one parameter's values and state, updated with the formulas of
// PyTorch 1.13's documentation, written out element by element.
struct RefParam {
  std::vector<double> p, c, d;  // loss = sum(0.5 * c * p^2 + d * p)  =>  grad = c * p + d
  std::vector<double> buf, m, v, vmax;
  int64_t t = 0;
  bool has_buf = false;

  void step(const Config& cf) {
    const size_t n = p.size();
    if (m.empty()) m.assign(n, 0), v.assign(n, 0), vmax.assign(n, 0), buf.assign(n, 0);
    ++t;
    for (size_t i = 0; i < n; ++i) {
      double g = c[i] * p[i] + d[i];
      if (cf.maximize) g = -g;
      if (cf.kind == "SGD") {
        if (cf.weight_decay != 0) g += cf.weight_decay * p[i];
        if (cf.momentum != 0) {
          buf[i] = has_buf ? cf.momentum * buf[i] + (1 - cf.dampening) * g : g;
          g = cf.nesterov ? g + cf.momentum * buf[i] : buf[i];
        }
        p[i] -= cf.lr * g;
      } else {
        if (cf.kind == "AdamW")
          p[i] *= 1 - cf.lr * cf.weight_decay;
        else
          g += cf.weight_decay * p[i];
        m[i] = cf.beta1 * m[i] + (1 - cf.beta1) * g;
        v[i] = cf.beta2 * v[i] + (1 - cf.beta2) * g * g;
        const double mhat = m[i] / (1 - std::pow(cf.beta1, double(t)));
        vmax[i] = std::max(vmax[i], v[i]);
        const double vv = cf.amsgrad ? vmax[i] : v[i];
        // PyTorch's form: lr / bc1 * m / (sqrt(v) / sqrt(bc2) + eps)
        const double denom = std::sqrt(vv) / std::sqrt(1 - std::pow(cf.beta2, double(t))) + cf.eps;
        p[i] -= cf.lr * mhat / denom;
      }
    }
    has_buf = true;
  }
};

std::unique_ptr<Optimizer> make(const Config& cf, std::vector<ParamGroup> groups) {
  if (cf.kind == "SGD")
    return std::make_unique<SGD>(std::move(groups), SGDOptions(cf.lr)
                                                        .momentum(cf.momentum)
                                                        .dampening(cf.dampening)
                                                        .weight_decay(cf.weight_decay)
                                                        .nesterov(cf.nesterov)
                                                        .maximize(cf.maximize));
  AdamWOptions o(cf.lr);
  o.beta1(cf.beta1).beta2(cf.beta2).eps(cf.eps).weight_decay(cf.weight_decay).amsgrad(cf.amsgrad).maximize(cf.maximize);
  if (cf.kind == "Adam") return std::make_unique<Adam>(std::move(groups), static_cast<const AdamOptions&>(o));
  return std::make_unique<AdamW>(std::move(groups), o);
}

std::unique_ptr<OptimizerOptions> options_of(const Config& cf) {
  if (cf.kind == "SGD") {
    auto o = std::make_unique<SGDOptions>(cf.lr);
    o->momentum(cf.momentum)
        .dampening(cf.dampening)
        .weight_decay(cf.weight_decay)
        .nesterov(cf.nesterov)
        .maximize(cf.maximize);
    return o;
  }
  auto o = std::make_unique<AdamOptions>(cf.lr);
  o->beta1(cf.beta1)
      .beta2(cf.beta2)
      .eps(cf.eps)
      .weight_decay(cf.weight_decay)
      .amsgrad(cf.amsgrad)
      .maximize(cf.maximize);
  return o;
}

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

// Runs `steps` steps with each param in its own group (configs[i]) and compares with the
// reference after each step.
void run_against_reference(const std::vector<Config>& configs, DType dt, bool fused, int steps, double rtol) {
  auto refs = make_refs();
  std::vector<Tensor> ps = {to_tensor(refs[0].p, {2, 3}, dt), to_tensor(refs[1].p, {4}, dt)};
  std::vector<ParamGroup> groups;
  if (configs.size() == 1) {
    groups.emplace_back(ps);
  } else {
    groups.emplace_back(std::vector<Tensor>{ps[0]}, options_of(configs[0]));
    groups.emplace_back(std::vector<Tensor>{ps[1]}, options_of(configs[1]));
  }
  auto opt = make(configs[0], std::move(groups));
  opt->set_fused(fused);
  for (int s = 0; s < steps; ++s) {
    opt->zero_grad();
    compute_grads(ps, refs);
    opt->step();
    for (size_t i = 0; i < ps.size(); ++i) {
      const Config& cf = configs.size() == 1 ? configs[0] : configs[i];
      refs[i].step(cf);
      check_close(ps[i], refs[i].p, rtol,
                  cf.label() + (fused ? " fused" : " generic") + " step " + std::to_string(s + 1) + " param " +
                      std::to_string(i));
    }
  }
}

std::vector<Config> sgd_configs() {
  std::vector<Config> cs;
  Config c{"SGD"};
  cs.push_back(c);
  c.momentum = 0.9;
  cs.push_back(c);
  c.dampening = 0.3;
  cs.push_back(c);
  c.dampening = 0;
  c.nesterov = true;
  cs.push_back(c);
  c.weight_decay = 0.05;
  cs.push_back(c);
  c.nesterov = false;
  c.maximize = true;
  c.lr = 0.01;
  cs.push_back(c);
  Config w{"SGD"};
  w.weight_decay = 0.1;
  cs.push_back(w);
  return cs;
}

std::vector<Config> adam_configs() {
  std::vector<Config> cs;
  for (const char* kind : {"Adam", "AdamW"}) {
    Config c{kind};
    c.lr = 0.01;
    cs.push_back(c);
    c.weight_decay = 0.1;
    cs.push_back(c);
    c.amsgrad = true;
    cs.push_back(c);
    c.beta1 = 0.5;
    c.beta2 = 0.9;
    c.eps = 1e-3;
    cs.push_back(c);
    c.maximize = true;
    c.amsgrad = false;
    cs.push_back(c);
  }
  return cs;
}

}  // namespace

TEST_CASE("optim: SGD matches the float64 reference for every configuration", "[optim]") {
  for (const auto& cf : sgd_configs())
    for (bool fused : {true, false}) run_against_reference({cf}, kFloat64, fused, 6, 1e-13);
}

TEST_CASE("optim: Adam and AdamW match the float64 reference for every configuration", "[optim]") {
  for (const auto& cf : adam_configs())
    for (bool fused : {true, false}) run_against_reference({cf}, kFloat64, fused, 6, 1e-12);
}

TEST_CASE("optim: float32 parameters follow the reference to float32 precision", "[optim]") {
  for (const auto& cf : sgd_configs())
    for (bool fused : {true, false}) run_against_reference({cf}, kFloat32, fused, 4, 2e-5);
  for (const auto& cf : adam_configs())
    for (bool fused : {true, false}) run_against_reference({cf}, kFloat32, fused, 4, 2e-5);
}

TEST_CASE("optim: parameter groups keep their own options", "[optim]") {
  Config a{"SGD"}, b{"SGD"};
  a.lr = 0.1;
  a.momentum = 0.9;
  b.lr = 0.03;
  b.momentum = 0.5;
  b.nesterov = true;
  b.weight_decay = 0.2;
  run_against_reference({a, b}, kFloat64, true, 5, 1e-13);
  Config x{"Adam"}, y{"Adam"};
  x.lr = 0.01;
  y.lr = 0.002;
  y.amsgrad = true;
  y.beta1 = 0.8;
  run_against_reference({x, y}, kFloat64, true, 5, 1e-12);
  Config u{"AdamW"}, w{"AdamW"};
  u.weight_decay = 0.0;
  w.weight_decay = 0.3;
  run_against_reference({u, w}, kFloat64, false, 5, 1e-12);

  // A group without options takes the optimizer's defaults; add_param_group works later too.
  Tensor p = wick::ones({3}, TensorOptions(kFloat64).requires_grad());
  Tensor q = wick::ones({2}, TensorOptions(kFloat64).requires_grad());
  SGD opt(std::vector<Tensor>{p}, SGDOptions(0.5).momentum(0.1));
  opt.add_param_group(ParamGroup({q}, std::make_unique<SGDOptions>(0.25)));
  REQUIRE(opt.param_groups().size() == 2);
  CHECK(static_cast<const SGDOptions&>(opt.param_groups()[0].options()).momentum() == 0.1);
  CHECK(opt.param_groups()[1].options().get_lr() == 0.25);
  CHECK(opt.size() == 2);
  CHECK_THROWS_WITH(opt.add_param_group(ParamGroup({p})), Catch::Contains("appears more than once"));
}

TEST_CASE("optim: parameters without a gradient are left alone", "[optim]") {
  Tensor p = wick::ones({3}, TensorOptions(kFloat64).requires_grad());
  Tensor q = wick::ones({2}, TensorOptions(kFloat64).requires_grad());
  Adam opt(std::vector<Tensor>{p, q}, AdamOptions(0.1));
  wick::sum(p * 2.0).backward();
  opt.step();
  CHECK(q.to_vector<double>() == std::vector<double>{1.0, 1.0});
  CHECK(opt.state(q) == nullptr);
  REQUIRE(opt.state(p) != nullptr);
  CHECK(opt.state(p)->step == 1);
}

TEST_CASE("optim: a step whose second group is invalid changes nothing", "[optim]") {
  Tensor p = wick::ones({3}, TensorOptions(kFloat64).requires_grad());
  Tensor q = wick::ones({2}, TensorOptions(kFloat64).requires_grad());
  for (const std::string kind : {"SGD", "Adam"}) {
    INFO(kind);
    p.set_grad(wick::ones({3}, TensorOptions(kFloat64)));
    q.set_grad(wick::ones({2}, TensorOptions(kFloat64)));
    std::unique_ptr<Optimizer> opt;
    if (kind == "SGD") {
      opt = std::make_unique<SGD>(std::vector<Tensor>{p}, SGDOptions(0.5));
      opt->add_param_group(ParamGroup({q}, std::make_unique<SGDOptions>(0.25)));
    } else {
      opt = std::make_unique<Adam>(std::vector<Tensor>{p}, AdamOptions(0.5));
      opt->add_param_group(ParamGroup({q}, std::make_unique<AdamOptions>(0.25)));
    }
    opt->param_groups()[1].options().set_lr(-1.0);
    CHECK_THROWS_WITH(opt->step(), Catch::Contains("invalid learning rate -1"));
    CHECK(p.to_vector<double>() == std::vector<double>{1.0, 1.0, 1.0});
    CHECK(q.to_vector<double>() == std::vector<double>{1.0, 1.0});
    CHECK(opt->state(p) == nullptr);
  }
}

TEST_CASE("optim: a gradient that does not match its parameter is refused before any update", "[optim]") {
  // The fused steps read numel() gradient elements: a smaller gradient would be read past its
  // end. Each step refuses it first, on every device and for the fused and the unfused path.
  for (const Device& d : test::test_devices()) {
    const TensorOptions f64 = TensorOptions(kFloat64).device(d);
    const std::vector<std::pair<std::string, Tensor>> bad_grads = {
        {"[1]", wick::zeros({1}, f64)},
        {"[40, 25]", wick::zeros({40, 25}, f64)},
        {"float32", wick::zeros({1000}, TensorOptions(kFloat32).device(d))},
        {d == kCPU ? "cpu:1" : "cpu",
         wick::zeros({1000}, TensorOptions(kFloat64).device(d == kCPU ? Device("cpu:1") : kCPU))},
    };
    for (const auto& [what, bad] : bad_grads) {
      for (const std::string kind : {"SGD", "SGD unfused", "Adam", "AdamW"}) {
        INFO(d << ", " << kind << ", a gradient " << what);
        Tensor p = wick::ones({64}, f64.requires_grad(true));
        Tensor q = wick::ones({1000}, f64.requires_grad(true));
        p.set_grad(wick::ones({64}, f64));
        std::unique_ptr<Optimizer> opt;
        if (kind == "Adam")
          opt = std::make_unique<Adam>(std::vector<Tensor>{p, q}, AdamOptions(0.5));
        else if (kind == "AdamW")
          opt = std::make_unique<AdamW>(std::vector<Tensor>{p, q}, AdamWOptions(0.5));
        else
          opt = std::make_unique<SGD>(std::vector<Tensor>{p, q}, SGDOptions(0.5).momentum(0.9));
        if (kind == "SGD unfused") opt->set_fused(false);
        q.mutable_grad() = bad;
        CHECK_THROWS_AS(opt->step(), StateError);
        CHECK_THROWS_WITH(opt->step(), Catch::Contains("parameter 1") && Catch::Contains("[1000]") &&
                                           Catch::Contains(what) && Catch::Contains("Nothing was updated"));
        CHECK(p.to_vector<double>() == std::vector<double>(64, 1.0));
        CHECK(q.to_vector<double>() == std::vector<double>(1000, 1.0));
        CHECK(opt->state(p) == nullptr);
        CHECK(opt->state(q) == nullptr);
        opt->zero_grad();  // drops the bad gradient: the next step works
        q.set_grad(wick::ones({1000}, f64));
        opt->step();
        CHECK(q.to_vector<double>()[0] < 1.0);
      }
    }
  }
  // set_data() keeps the old gradient (as PyTorch): a parameter grown after a backward is refused.
  Tensor w = wick::ones({3}, TensorOptions(kFloat64).requires_grad(true));
  SGD sgd(std::vector<Tensor>{w}, SGDOptions(0.1));
  wick::sum(w * 2.0).backward();
  w.set_data(wick::ones({1 << 16}, TensorOptions(kFloat64)));
  CHECK_THROWS_WITH(sgd.step(), Catch::Contains("SGD.step") && Catch::Contains("[65536]") && Catch::Contains("[3]"));
  CHECK(w.to_vector<double>() == std::vector<double>(1 << 16, 1.0));
}

TEST_CASE("optim: LibTorch's spellings of the options compile and set what they say", "[optim]") {
  Tensor p = wick::ones({2}, TensorOptions(kFloat64).requires_grad(true));
  // An implicit lr, as LibTorch's SGDOptions(double) and AdamOptions(double).
  SGD sgd(std::vector<Tensor>{p}, 0.25);
  CHECK(sgd.param_groups()[0].options().get_lr() == 0.25);
  Adam adam(std::vector<Tensor>{p}, 0.5);
  CHECK(adam.param_groups()[0].options().get_lr() == 0.5);
  // A chain on AdamWOptions keeps its type (each setter used to return AdamOptions&, which AdamW
  // does not take), and betas takes a tuple.
  AdamW adamw(std::vector<Tensor>{p}, AdamWOptions(1e-3).weight_decay(0.1).betas(std::make_tuple(0.5, 0.75)).eps(1e-6));
  const auto& o = static_cast<const AdamWOptions&>(adamw.param_groups()[0].options());
  CHECK(o.weight_decay() == 0.1);
  CHECK(o.betas() == std::make_tuple(0.5, 0.75));
  CHECK(o.beta1() == 0.5);
  CHECK(o.eps() == 1e-6);
  CHECK(AdamOptions().betas(std::make_pair(0.8, 0.9)).beta2() == 0.9);  // a pair converts
}

TEST_CASE("optim: a group with another optimizer's options class is a TypeError", "[optim]") {
  Tensor p = wick::ones({2}, TensorOptions(kFloat64).requires_grad(true));
  Tensor q = wick::ones({2}, TensorOptions(kFloat64).requires_grad(true));
  Adam adam(std::vector<Tensor>{p}, AdamOptions(0.1));
  // Adam read a group's options as AdamOptions: SGDOptions there was undefined behaviour.
  CHECK_THROWS_AS(adam.add_param_group(ParamGroup({q}, std::make_unique<SGDOptions>(0.1))), TypeError);
  CHECK_THROWS_WITH(adam.add_param_group(ParamGroup({q}, std::make_unique<SGDOptions>(0.1))),
                    Catch::Contains("wick::optim::SGDOptions") && Catch::Contains("wick::optim::AdamOptions"));
  CHECK(adam.param_groups().size() == 1);
  SGD sgd(std::vector<Tensor>{p}, 0.1);
  CHECK_THROWS_AS(sgd.add_param_group(ParamGroup({q}, std::make_unique<AdamWOptions>(0.1))), TypeError);
  CHECK(sgd.param_groups().size() == 1);
  // AdamW reads its groups' options as AdamOptions: either class is accepted.
  AdamW adamw(std::vector<Tensor>{p}, AdamWOptions(0.1));
  adamw.add_param_group(ParamGroup({q}, std::make_unique<AdamOptions>(0.2)));
  CHECK(adamw.param_groups().size() == 2);
}

TEST_CASE("optim: zero_grad sets gradients to None or to zeros", "[optim]") {
  Tensor p = wick::ones({3}, TensorOptions(kFloat64).requires_grad());
  SGD opt(std::vector<Tensor>{p}, SGDOptions(0.1));
  wick::sum(p * 3.0).backward();
  REQUIRE(p.grad().defined());
  opt.zero_grad(false);
  REQUIRE(p.grad().defined());
  CHECK(p.grad().to_vector<double>() == std::vector<double>{0, 0, 0});
  opt.zero_grad();
  CHECK_FALSE(p.grad().defined());
}

TEST_CASE("optim: a tensor that is not a leaf (a replica's parameter) is refused", "[optim]") {
  Tensor p = wick::ones({3}, TensorOptions(kFloat64).requires_grad());
  Tensor replica_like = p * 1.0;
  CHECK_THROWS_WITH(SGD(std::vector<Tensor>{replica_like}, SGDOptions(0.1)),
                    Catch::Contains("optimizer got a tensor that is not a leaf (a replica's parameter?)") &&
                        Catch::Contains("pass the original module's parameters()"));
  CHECK_THROWS_WITH(Adam(std::vector<Tensor>{p, replica_like}, AdamOptions()), Catch::Contains("not a leaf"));
  CHECK_THROWS_WITH(SGD(std::vector<Tensor>{}, SGDOptions(0.1)), Catch::Contains("empty parameter list"));
  CHECK_THROWS_WITH(SGD(std::vector<Tensor>{wick::zeros({2}, kInt64)}, SGDOptions(0.1)),
                    Catch::Contains("floating-point"));
  CHECK_THROWS_WITH(SGD(std::vector<Tensor>{p}, SGDOptions(0.1).nesterov(true)), Catch::Contains("Nesterov"));
  CHECK_THROWS_WITH(Adam(std::vector<Tensor>{p}, AdamOptions().beta1(1.0)), Catch::Contains("beta1"));
}

TEST_CASE("optim: the parameters of a real replica are refused", "[optim]") {
  auto net = std::make_shared<nn::LinearImpl>(3, 2);
  auto replicas = parallel::replicate(net, {Device("cpu:0"), Device("cpu:1")});
  REQUIRE(replicas.size() == 2);
  for (const auto& r : replicas)
    CHECK_THROWS_WITH(SGD(r->parameters(), SGDOptions(0.1)),
                      Catch::Contains("not a leaf (a replica's parameter?)") && Catch::Contains("parameters()"));
  SGD ok(net->parameters(), SGDOptions(0.1));  // the original's are fine
  CHECK(ok.size() == 2);
}

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

TEST_CASE("optim: non-finite options are refused, naming the option, and eps = 0 is allowed", "[optim]") {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  Tensor p = wick::ones({2}, TensorOptions(kFloat64).requires_grad());
  const std::vector<Tensor> ps = {p};
  const std::vector<std::pair<std::string, std::function<void()>>> bad = {
      {"SGD: invalid learning rate inf", [&] { SGD(ps, SGDOptions(inf)); }},
      {"SGD: invalid learning rate nan", [&] { SGD(ps, SGDOptions(nan)); }},
      {"SGD: invalid momentum inf", [&] { SGD(ps, SGDOptions(0.1).momentum(inf)); }},
      {"SGD: invalid dampening nan", [&] { SGD(ps, SGDOptions(0.1).momentum(0.9).dampening(nan)); }},
      {"SGD: invalid dampening -inf", [&] { SGD(ps, SGDOptions(0.1).dampening(-inf)); }},
      {"SGD: invalid weight_decay inf", [&] { SGD(ps, SGDOptions(0.1).weight_decay(inf)); }},
      {"Adam: invalid learning rate inf", [&] { Adam(ps, AdamOptions(inf)); }},
      {"Adam: invalid eps inf", [&] { Adam(ps, AdamOptions(0.1).eps(inf)); }},
      {"Adam: invalid eps nan", [&] { Adam(ps, AdamOptions(0.1).eps(nan)); }},
      {"Adam: invalid weight_decay inf", [&] { Adam(ps, AdamOptions(0.1).weight_decay(inf)); }},
      {"Adam: invalid beta1 nan", [&] { Adam(ps, AdamOptions(0.1).beta1(nan)); }},
      {"Adam: invalid beta2 inf", [&] { Adam(ps, AdamOptions(0.1).beta2(inf)); }},
      {"AdamW: invalid eps inf", [&] { AdamW(ps, AdamWOptions(0.1).eps(inf)); }},
      // The defaults are checked even when every group has its own options (as PyTorch).
      {"SGD: invalid learning rate inf",
       [&] { SGD(std::vector<ParamGroup>{ParamGroup(ps, std::make_unique<SGDOptions>(0.1))}, SGDOptions(inf)); }},
  };
  for (const auto& [msg, f] : bad) {
    INFO(msg);
    CHECK_THROWS_AS(f(), ValueError);
    CHECK_THROWS_WITH(f(), Catch::Contains(msg));
  }
  // A step refuses options made non-finite after construction, before changing anything.
  SGD sgd(ps, SGDOptions(0.1).momentum(0.9));
  static_cast<SGDOptions&>(sgd.param_groups()[0].options()).dampening(nan);
  p.set_grad(wick::ones({2}, TensorOptions(kFloat64)));
  CHECK_THROWS_WITH(sgd.step(), Catch::Contains("SGD: invalid dampening nan"));
  CHECK(p.to_vector<double>() == std::vector<double>{1.0, 1.0});
  // dampening has no range in PyTorch: 1.5 is accepted.
  SGD damped(ps, SGDOptions(0.1).momentum(0.9).dampening(1.5));
  // eps = 0, as PyTorch: the first step is then lr * g / |g| (hand-computed: 1 - 0.1 * sign(g)).
  for (bool fused : {true, false}) {
    INFO("fused " << fused);
    Tensor q = wick::ones({2}, TensorOptions(kFloat64).requires_grad());
    Adam adam(std::vector<Tensor>{q}, AdamOptions(0.1).eps(0));
    adam.set_fused(fused);
    q.set_grad(wick::tensor(std::vector<double>{2.0, -0.5}, {2}, TensorOptions(kFloat64)));
    adam.step();
    check_close(q, {0.9, 1.1}, 1e-15, "eps 0");
  }
}

TEST_CASE("optim: add_param_group checks the new group's options and adds nothing when they are bad", "[optim]") {
  Tensor p = wick::ones({2}, TensorOptions(kFloat64).requires_grad());
  Tensor q = wick::ones({2}, TensorOptions(kFloat64).requires_grad());
  SGD sgd(std::vector<Tensor>{p}, SGDOptions(0.1));
  CHECK_THROWS_AS(sgd.add_param_group(ParamGroup({q}, std::make_unique<SGDOptions>(-1.0))), ValueError);
  auto bad_momentum = std::make_unique<SGDOptions>(0.1);
  bad_momentum->momentum(-1.0);
  CHECK_THROWS_WITH(sgd.add_param_group(ParamGroup({q}, std::move(bad_momentum))),
                    Catch::Contains("SGD: invalid momentum -1"));
  CHECK(sgd.param_groups().size() == 1);
  sgd.add_param_group(ParamGroup({q}, std::make_unique<SGDOptions>(0.2)));  // q was not taken by the failures
  CHECK(sgd.param_groups().size() == 2);

  Adam adam(std::vector<Tensor>{p}, AdamOptions(0.1));
  auto bad_adam = std::make_unique<AdamOptions>(0.1);
  bad_adam->beta2(1.0);
  CHECK_THROWS_WITH(adam.add_param_group(ParamGroup({q}, std::move(bad_adam))),
                    Catch::Contains("Adam: invalid beta2 1"));
  CHECK(adam.param_groups().size() == 1);
  AdamW adamw(std::vector<Tensor>{p}, AdamWOptions(0.1));
  auto bad_adamw = std::make_unique<AdamWOptions>(0.1);
  bad_adamw->eps(-1.0);
  CHECK_THROWS_WITH(adamw.add_param_group(ParamGroup({q}, std::move(bad_adamw))),
                    Catch::Contains("AdamW: invalid eps -1"));
  CHECK(adamw.param_groups().size() == 1);
}
