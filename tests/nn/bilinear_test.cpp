// F::bilinear, nn::Bilinear and nn::Softmax2d: the PyTorch oracle's cases (generate.py's
// einsum_cases, ops "bilinear", "bilinear_module" and "softmax2d") forward at rtol 1e-12 and
// every gradient (inputs, weight, bias) at rtol 1e-10 in float64, on every test device; a case
// worked by hand; PyTorch's initialization bounds, parameter names, print and options; float64
// gradchecks and double backward; PyTorch 1.13's checks as typed errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/gradcheck.h"
#include "support/oracle.h"
#include "support/oracle_checks.h"
#include "wick/autograd/grad_mode.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using Catch::Matchers::Contains;
using wick::test::OracleCase;

namespace {
constexpr double kOutRtol = 1e-12, kGradRtol = 1e-10, kAtol = 1e-13;
const TensorOptions kF64(kFloat64);

Tensor leaf(IntArrayRef shape, Device dev) { return randn(shape, kF64.device(dev)).requires_grad_(true); }
}  // namespace

TEST_CASE("F::bilinear matches PyTorch 1.13 with and without bias and unbatched", "[nn][oracle][bilinear]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "bilinear") continue;
    const bool bias = c.kwargs.at("bias").get<bool>();
    REQUIRE(c.inputs.size() == (bias ? 4u : 3u));
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      const std::vector<Tensor> x = c.leaves(dev);
      const Tensor out = F::bilinear(x[0], x[1], x[2], bias ? x[3] : Tensor());
      REQUIRE(out.sizes() == c.out.sizes());
      wick::test::check_oracle_case(c, out, x, dev, kOutRtol, kGradRtol, kAtol);
    }
    ++seen[bias ? "bias" : "no bias"];
    ++seen[std::to_string(c.inputs[0].dim()) + "-d"];
  }
  for (const char* kind : {"bias", "no bias", "1-d", "2-d", "3-d"}) {
    INFO(kind);
    CHECK(seen[kind] >= 1);
  }
}

TEST_CASE("Bilinear matches PyTorch 1.13 as a layer: outputs and the gradients of inputs and parameters",
          "[nn][oracle][bilinear]") {
  int checked = 0;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "bilinear_module") continue;
    const auto names = c.kwargs.at("inputs").get<std::vector<std::string>>();
    REQUIRE(names.size() == c.inputs.size());
    REQUIRE(names.size() >= 3);
    REQUIRE(names[0] == "input1");
    REQUIRE(names[1] == "input2");
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      Bilinear m(BilinearOptions(c.kwargs.at("in1").get<int64_t>(), c.kwargs.at("in2").get<int64_t>(),
                                 c.kwargs.at("out").get<int64_t>())
                     .bias(c.kwargs.at("bias").get<bool>()),
                 kF64);
      m->to(dev);
      const std::vector<Tensor> leaves = c.leaves(dev);
      const OrderedDict<Tensor> params = m->named_parameters();
      REQUIRE(params.keys() == std::vector<std::string>(names.begin() + 2, names.end()));
      std::vector<Tensor> wrt = {leaves[0], leaves[1]};
      {
        NoGradGuard no_grad;
        for (size_t j = 2; j < names.size(); ++j) {
          Tensor p = params[names[j]];
          REQUIRE(p.sizes() == leaves[j].sizes());
          p.copy_(leaves[j]);
          wrt.push_back(p);
        }
      }
      wick::test::check_oracle_case(c, m(leaves[0], leaves[1]).reshape({-1}), wrt, dev, kOutRtol, kGradRtol, kAtol);
    }
    ++checked;
  }
  CHECK(checked >= 2);
}

TEST_CASE("Softmax2d matches PyTorch 1.13 on 3-d and 4-d inputs", "[nn][oracle][softmax2d]") {
  int checked = 0;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "softmax2d") continue;
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      const std::vector<Tensor> x = c.leaves(dev);
      wick::test::check_oracle_case(c, Softmax2d()(x[0]), x, dev, kOutRtol, kGradRtol, kAtol);
    }
    ++checked;
  }
  CHECK(checked >= 2);
}

TEST_CASE("bilinear by hand: x1^T A x2 + b and its gradients", "[nn][bilinear]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const auto t = [&](std::vector<double> v, IntArrayRef s) {
      return tensor(v, s, kF64).to(dev).requires_grad_(true);
    };
    const Tensor x1 = t({1, 2}, {1, 2}), x2 = t({3, 4, 5}, {1, 3});
    // weight [2, 2, 3]: output 0 is x1^T [[1,0,0],[0,1,0]] x2 = 3 + 8, output 1 sums every product.
    const Tensor w = t({1, 0, 0, 0, 1, 0, 1, 1, 1, 1, 1, 1}, {2, 2, 3}), b = t({0.5, -1}, {2});
    const Tensor y = F::bilinear(x1, x2, w, b);
    CHECK(y.sizes() == IntArrayRef({1, 2}));
    CHECK(y.device() == dev);
    CHECK_VALUES(y, {11.5, 35});
    sum(y).backward();
    CHECK_VALUES(x1.grad(), {15, 16});   // (w0 + w1) @ x2
    CHECK_VALUES(x2.grad(), {4, 5, 3});  // x1 @ (w0 + w1)
    CHECK_VALUES(b.grad(), {1, 1});
    CHECK_VALUES(w.grad(), {3, 4, 5, 6, 8, 10, 3, 4, 5, 6, 8, 10});  // outer(x1, x2) for each output
    // Empty batch: [0, 2] x [0, 3] -> [0, 2].
    CHECK(F::bilinear(zeros({0, 2}, kF64.device(dev)), zeros({0, 3}, kF64.device(dev)), w, b).sizes() ==
          IntArrayRef({0, 2}));
  }
}

TEST_CASE("Bilinear: parameters PyTorch's init print and options", "[nn][bilinear]") {
  Bilinear m(BilinearOptions(4, 16, 8), kF64);
  CHECK(m->named_parameters().keys() == std::vector<std::string>{"weight", "bias"});
  CHECK(m->weight().sizes() == IntArrayRef({8, 4, 16}));
  CHECK(m->bias().sizes() == IntArrayRef({8}));
  CHECK(m->weight().dtype() == kFloat64);
  // PyTorch: U(-1/sqrt(in1), 1/sqrt(in1)) for weight and bias (in1 = 4: bound 0.5).
  const double bound = 0.5;
  CHECK(m->weight().abs().max().item<double>() <= bound);
  CHECK(m->weight().abs().max().item<double>() > 0.9 * bound);
  CHECK(m->weight().std().item<double>() == Approx(bound / std::sqrt(3.0)).epsilon(0.1));
  CHECK(m->bias().abs().max().item<double>() <= bound);
  CHECK(m->bias().abs().max().item<double>() > 0.0);
  CHECK(m->to_string() == "Bilinear(in1_features=4, in2_features=16, out_features=8, bias=True)");
  Bilinear nb(BilinearOptions(3, 2, 5).bias(false));
  CHECK(!nb->bias().defined());
  CHECK(nb->named_parameters().keys() == std::vector<std::string>{"weight"});
  CHECK(nb->weight().dtype() == kFloat32);
  CHECK(nb->to_string() == "Bilinear(in1_features=3, in2_features=2, out_features=5, bias=False)");
  CHECK(Bilinear(3, 2, 5)->options().out_features() == 5);
  CHECK(nb(randn({7, 3}), randn({7, 2})).sizes() == IntArrayRef({7, 5}));
  CHECK(Softmax2d()->to_string() == "Softmax2d()");
  CHECK_THROWS_AS(Bilinear(-1, 2, 3), ValueError);
}

TEST_CASE("bilinear and Softmax2d gradchecks and double backward in float64", "[nn][bilinear][gradcheck]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    CHECK_GRADCHECKS(
        [](const std::vector<Tensor>& x) { return std::vector<Tensor>{F::bilinear(x[0], x[1], x[2], x[3])}; },
        {leaf({2, 2, 3}, dev), leaf({2, 2, 2}, dev), leaf({2, 3, 2}, dev), leaf({2}, dev)});
    CHECK_GRADCHECKS([](const std::vector<Tensor>& x) { return std::vector<Tensor>{F::bilinear(x[0], x[1], x[2])}; },
                     {leaf({3}, dev), leaf({2}, dev), leaf({2, 3, 2}, dev)});
    CHECK_GRADCHECKS([](const std::vector<Tensor>& x) { return std::vector<Tensor>{Softmax2d()(x[0])}; },
                     {leaf({2, 3, 2, 2}, dev)});
  }
}

TEST_CASE("bilinear and Softmax2d errors name the shapes", "[nn][bilinear][errors]") {
  const Tensor w = zeros({5, 3, 4}, kF64);
  const auto throws = [](const std::function<void()>& f, const std::string& part) {
    bool thrown = false;
    try {
      f();
    } catch (const ValueError& e) {
      thrown = true;
      CHECK_THAT(e.what(), Contains(part));
    }
    CHECK(thrown);
  };
  throws([&] { F::bilinear(zeros({2, 3}, kF64), zeros({4}, kF64), w); }, "need one rank");
  throws([&] { F::bilinear(zeros({2, 3}, kF64), zeros({3, 4}, kF64), w); }, "batch dims differ at dim 0 (2 and 3)");
  throws([&] { F::bilinear(zeros({2, 3}, kF64), zeros({1, 4}, kF64), w); }, "do not broadcast");
  throws(
      [&] {
        F::bilinear(zeros({2, 2}, kF64), zeros({2, 4}, kF64), w);
      },
      "input1's last dim is 2 but weight expects 3");
  throws(
      [&] {
        F::bilinear(zeros({2, 3}, kF64), zeros({2, 5}, kF64), w);
      },
      "input2's last dim is 5 but weight expects 4");
  throws([&] { F::bilinear(zeros({2, 3}, kF64), zeros({2, 4}, kF64), w, zeros({4}, kF64)); }, "bias [4]");
  throws([&] { F::bilinear(zeros({2, 3}, kF64), zeros({2, 4}, kF64), zeros({5, 12}, kF64)); }, "weight must be 3-d");
  throws([&] { F::bilinear(zeros({}, kF64), zeros({}, kF64), w); }, "at least 1");
  CHECK_THROWS_AS(F::bilinear(zeros({2, 3}, kF64), zeros({2, 4}), w), TypeError);
  throws([&] { Softmax2d()(zeros({2, 3}, kF64)); }, "3-d [C, H, W] or 4-d [N, C, H, W] input, got [2, 3]");
  throws([&] { Softmax2d()(zeros({1, 2, 3, 4, 5}, kF64)); }, "got [1, 2, 3, 4, 5]");
}
