// wick::optim: parameter groups and their options, parameters without gradients or that are not
// leaves, gradients that do not match, zero_grad, LibTorch's option spellings, non-finite options
// and add_param_group. Against the float64 reference: optim_test.cpp.
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
