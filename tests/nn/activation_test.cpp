// The activations of nn/include/wick/nn/functional_activation.h and their layers: the PyTorch
// oracle's cases (generate.py's activation_cases: random points, every kink, points 1e-9 beside
// it and |x| up to 1000) forward at rtol 1e-12 and gradients at rtol 1e-10 on every test device;
// float64 gradchecks with double backward; hand-computed values where wick and PyTorch 1.13
// differ on purpose; NaN and float32 extremes; inplace; typed errors; the layers' print strings
// and PReLU's parameter and state_dict.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/gradcheck.h"
#include "support/oracle.h"
#include "support/oracle_checks.h"
#include "support/small_tensors.h"
#include "wick/autograd/grad.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/generator.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using Catch::Matchers::Contains;
using wick::test::OracleCase;
using TL = std::vector<Tensor>;

namespace {
const TensorOptions kF64(kFloat64);

using Fn = std::function<Tensor(const TL&, const OracleCase&)>;
double kw(const OracleCase& c, const char* key) { return c.kwargs.at(key).get<double>(); }

// Each op of activation_cases, called with the case's kwargs.
const std::map<std::string, Fn>& ops() {
  static const std::map<std::string, Fn> m = {
      {"leaky_relu",
       [](const TL& x, const OracleCase& c) {
         return F::leaky_relu(x[0], F::LeakyReLUFuncOptions().negative_slope(kw(c, "negative_slope")));
       }},
      {"elu", [](const TL& x, const OracleCase& c) { return F::elu(x[0], F::ELUFuncOptions().alpha(kw(c, "alpha"))); }},
      {"celu",
       [](const TL& x, const OracleCase& c) { return F::celu(x[0], F::CELUFuncOptions().alpha(kw(c, "alpha"))); }},
      {"selu", [](const TL& x, const OracleCase&) { return F::selu(x[0]); }},
      {"softplus",
       [](const TL& x, const OracleCase& c) {
         return F::softplus(x[0], F::SoftplusFuncOptions().beta(kw(c, "beta")).threshold(kw(c, "threshold")));
       }},
      {"hardtanh",
       [](const TL& x, const OracleCase& c) {
         return F::hardtanh(x[0], F::HardtanhFuncOptions().min_val(kw(c, "min_val")).max_val(kw(c, "max_val")));
       }},
      {"relu6", [](const TL& x, const OracleCase&) { return F::relu6(x[0]); }},
      {"hardsigmoid", [](const TL& x, const OracleCase&) { return F::hardsigmoid(x[0]); }},
      {"hardswish", [](const TL& x, const OracleCase&) { return F::hardswish(x[0]); }},
      {"mish", [](const TL& x, const OracleCase&) { return F::mish(x[0]); }},
      {"softsign", [](const TL& x, const OracleCase&) { return F::softsign(x[0]); }},
      {"tanhshrink", [](const TL& x, const OracleCase&) { return F::tanhshrink(x[0]); }},
      {"threshold",
       [](const TL& x, const OracleCase& c) {
         return F::threshold(x[0], F::ThresholdFuncOptions(kw(c, "threshold"), kw(c, "value")));
       }},
      {"logsigmoid", [](const TL& x, const OracleCase&) { return F::logsigmoid(x[0]); }},
      {"glu", [](const TL& x, const OracleCase& c) { return F::glu(x[0], c.kwargs.at("dim").get<int64_t>()); }},
      {"softmin", [](const TL& x, const OracleCase& c) { return F::softmin(x[0], c.kwargs.at("dim").get<int64_t>()); }},
      {"prelu", [](const TL& x, const OracleCase&) { return F::prelu(x[0], x[1]); }},
  };
  return m;
}

Tensor rnd(IntArrayRef shape, double scale = 1.0) {
  return (wick::randn(shape, kF64) * scale).detach().requires_grad_(true);
}
using wick::test::f64;
// d sum(gout * f(x)) / dx for a fresh leaf holding x's values.
Tensor grad_of(const std::function<Tensor(const Tensor&)>& f, const Tensor& x, const Tensor& gout) {
  Tensor leaf = x.detach().clone().requires_grad_(true);
  return wick::autograd::grad({f(leaf)}, {leaf}, {gout})[0];
}
}  // namespace

TEST_CASE("activations match PyTorch 1.13 at random points and kinks and large |x| on every device",
          "[nn][oracle][activation]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    auto it = ops().find(c.op);
    if (it == ops().end()) continue;
    // PyTorch 1.13's CPU hardsigmoid backward multiplies by float32's 1/6 even in float64.
    const double grad_rtol = c.op == "hardsigmoid" ? 1e-7 : 1e-10;
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      const TL x = c.leaves(dev);
      const Tensor out = it->second(x, c);
      REQUIRE(out.sizes() == c.out.sizes());
      wick::test::check_oracle_case(c, out, x, dev, 1e-12, grad_rtol, 1e-13);
    }
    ++seen[c.op];
  }
  for (const auto& [op, fn] : ops()) {
    INFO(op);
    CHECK(seen[op] >= 1);
  }
  CHECK(seen["prelu"] >= 7);
}

TEST_CASE("activations pass float64 gradcheck and double backward", "[nn][gradcheck][activation]") {
  wick::manual_seed(58);
  using F1 = std::function<Tensor(const Tensor&)>;
  const std::vector<std::pair<const char*, F1>> unary = {
      {"leaky_relu", [](const Tensor& x) { return F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(0.2)); }},
      {"elu", [](const Tensor& x) { return F::elu(x, F::ELUFuncOptions().alpha(1.5)); }},
      {"selu", [](const Tensor& x) { return F::selu(x); }},
      {"celu", [](const Tensor& x) { return F::celu(x, F::CELUFuncOptions().alpha(0.5)); }},
      {"softplus", [](const Tensor& x) { return F::softplus(x, F::SoftplusFuncOptions().beta(2).threshold(3)); }},
      {"hardtanh", [](const Tensor& x) { return F::hardtanh(x); }},
      {"relu6", [](const Tensor& x) { return F::relu6(x * 4); }},
      {"hardsigmoid", [](const Tensor& x) { return F::hardsigmoid(x * 2); }},
      {"hardswish", [](const Tensor& x) { return F::hardswish(x * 3); }},
      {"mish", [](const Tensor& x) { return F::mish(x * 4); }},
      {"softsign", [](const Tensor& x) { return F::softsign(x); }},
      {"tanhshrink", [](const Tensor& x) { return F::tanhshrink(x); }},
      {"threshold", [](const Tensor& x) { return F::threshold(x, F::ThresholdFuncOptions(0.3, -2.0)); }},
      {"logsigmoid", [](const Tensor& x) { return F::logsigmoid(x * 4); }},
  };
  for (const auto& [name, f] : unary) {
    INFO(name);
    auto fl = [f = f](const TL& x) { return TL{f(x[0])}; };
    CHECK_GRADCHECK(fl, TL{rnd({3, 4}, 2)});
    wick::test::check_double_backward(fl, TL{rnd({2, 5}, 2)});
  }
  auto glu = [](const TL& x) { return TL{F::glu(x[0], 1)}; };
  CHECK_GRADCHECK(glu, TL{rnd({3, 4, 2})});
  wick::test::check_double_backward(glu, TL{rnd({2, 6})});
  auto softmin = [](const TL& x) { return TL{F::softmin(x[0], 0)}; };
  CHECK_GRADCHECK(softmin, TL{rnd({4, 3})});
  wick::test::check_double_backward(softmin, TL{rnd({3, 2})});
  auto prelu = [](const TL& x) { return TL{F::prelu(x[0], x[1])}; };
  CHECK_GRADCHECK(prelu, TL{rnd({2, 3, 4}), rnd({3})});
  CHECK_GRADCHECK(prelu, TL{rnd({5}), rnd({1})});
  wick::test::check_double_backward(prelu, TL{rnd({2, 3, 2}), rnd({3})});
}

TEST_CASE("activations where wick and PyTorch 1.13 differ on purpose, worked by hand", "[nn][activation]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    // expm1, not PyTorch 1.13's exp(x) - 1 (-1.000000082740371e-10 at -1e-10).
    const Tensor tiny = f64({-1e-10, -1e-300}, dev);
    CHECK_ALLCLOSE(F::elu(tiny), f64({std::expm1(-1e-10), -1e-300}, dev), 1e-15, 0);
    CHECK_ALLCLOSE(F::celu(tiny, F::CELUFuncOptions().alpha(2)), f64({2 * std::expm1(-0.5e-10), -1e-300}, dev), 1e-15,
                   0);
    // hardsigmoid's gradient is 1/6 inside (-3, 3), 0 at and beyond the bounds.
    const Tensor x = f64({-3.5, -3, -1, 0, 2.5, 3, 4}, dev);
    CHECK_ALLCLOSE(grad_of([](const Tensor& t) { return F::hardsigmoid(t); }, x, wick::ones_like(x)),
                   f64({0, 0, 1.0 / 6, 1.0 / 6, 1.0 / 6, 0, 0}, dev), 0, 0);
    // hardswish: -1/2 at -3 and 1 at 3 (PyTorch 1.13's vectorized loop; its scalar tail gives 1.5).
    const Tensor kinks = f64({-3, 3}, dev);
    CHECK_ALLCLOSE(grad_of([](const Tensor& t) { return F::hardswish(t); }, kinks, wick::ones_like(kinks)),
                   f64({-0.5, 1}, dev), 0, 0);
    // inplace leaky_relu and elu with a negative slope or alpha: PyTorch refuses their backward.
    const Tensor base = f64({-2, -0.5, 0, 1}, dev).requires_grad_(true);
    Tensor y = base * 1;
    F::leaky_relu(y, F::LeakyReLUFuncOptions().negative_slope(-0.5).inplace(true));
    Tensor z = base * 1;
    F::elu(z, F::ELUFuncOptions().alpha(-1).inplace(true));
    const TL g = wick::autograd::grad({(y + z).sum()}, {base});
    CHECK_ALLCLOSE(g[0], f64({-0.5 - std::exp(-2), -0.5 - std::exp(-0.5), -0.5 - 1, 2}, dev), 1e-15, 0);
  }
}

TEST_CASE("activations propagate NaN and stay finite at float32 extremes", "[nn][activation]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<std::pair<const char*, std::function<Tensor(const Tensor&)>>> fns = {
      {"leaky_relu", [](const Tensor& t) { return F::leaky_relu(t); }},
      {"elu", [](const Tensor& t) { return F::elu(t); }},
      {"selu", [](const Tensor& t) { return F::selu(t); }},
      {"celu", [](const Tensor& t) { return F::celu(t); }},
      {"softplus", [](const Tensor& t) { return F::softplus(t); }},
      {"hardtanh", [](const Tensor& t) { return F::hardtanh(t); }},
      {"relu6", [](const Tensor& t) { return F::relu6(t); }},
      {"hardsigmoid", [](const Tensor& t) { return F::hardsigmoid(t); }},
      {"hardswish", [](const Tensor& t) { return F::hardswish(t); }},
      {"mish", [](const Tensor& t) { return F::mish(t); }},
      {"softsign", [](const Tensor& t) { return F::softsign(t); }},
      {"threshold", [](const Tensor& t) { return F::threshold(t, F::ThresholdFuncOptions(0, 5)); }},
      {"logsigmoid", [](const Tensor& t) { return F::logsigmoid(t); }},
      {"prelu", [](const Tensor& t) { return F::prelu(t, wick::full({1}, 0.25, t.options())); }},
  };
  for (Device dev : wick::test::test_devices()) {
    for (const auto& [name, f] : fns) {
      INFO(name << " on " << dev.str());
      CHECK(f(f64({nan}, dev)).isnan().all().item<bool>());
      // float32: exp(88.8) overflows, so every composite must keep exp and expm1 off large inputs.
      const Tensor x = tensor({-1e30, -1000, -100, 100, 1000, 1e30}, TensorOptions(kFloat32).device(dev));
      const Tensor out = f(x);
      CHECK(out.dtype() == kFloat32);
      CHECK(out.isfinite().all().item<bool>());
      CHECK(grad_of(f, x, wick::ones_like(x)).isfinite().all().item<bool>());
    }
  }
}

TEST_CASE("inplace activations write into their input and give out-of-place gradients", "[nn][inplace][activation]") {
  using F2 = std::function<Tensor(const Tensor&, bool)>;
  const std::vector<std::pair<const char*, F2>> fns = {
      {"leaky_relu", [](const Tensor& t, bool i) { return F::leaky_relu(t, F::LeakyReLUFuncOptions().inplace(i)); }},
      {"elu", [](const Tensor& t, bool i) { return F::elu(t, F::ELUFuncOptions().inplace(i)); }},
      {"selu", [](const Tensor& t, bool i) { return F::selu(t, i); }},
      {"celu", [](const Tensor& t, bool i) { return F::celu(t, F::CELUFuncOptions().alpha(2).inplace(i)); }},
      {"hardtanh", [](const Tensor& t, bool i) { return F::hardtanh(t, F::HardtanhFuncOptions().inplace(i)); }},
      {"relu6", [](const Tensor& t, bool i) { return F::relu6(t, i); }},
      {"hardsigmoid", [](const Tensor& t, bool i) { return F::hardsigmoid(t, i); }},
      {"hardswish", [](const Tensor& t, bool i) { return F::hardswish(t, i); }},
      {"mish", [](const Tensor& t, bool i) { return F::mish(t, i); }},
      {"threshold",
       [](const Tensor& t, bool i) { return F::threshold(t, F::ThresholdFuncOptions(0.5, 9).inplace(i)); }},
  };
  wick::manual_seed(5);
  const Tensor values = wick::randn({3, 4}, kF64) * 4;
  const Tensor gout = wick::randn({3, 4}, kF64);
  for (Device dev : wick::test::test_devices()) {
    for (const auto& [name, f] : fns) {
      INFO(name << " on " << dev.str());
      const Tensor x = values.to(dev), g = gout.to(dev);
      const Tensor want = f(x, false);
      const Tensor want_grad = grad_of([f = f](const Tensor& t) { return f(t, false); }, x, g);
      // Recorded: a non-leaf is overwritten, and its history rebased onto the activation.
      Tensor leaf = x.clone().requires_grad_(true);
      Tensor y = leaf * 1;
      Tensor out = f(y, true);
      CHECK(out.impl() == y.impl());
      CHECK_ALLCLOSE(y, want, 0, 0);
      CHECK_ALLCLOSE(wick::autograd::grad({y}, {leaf}, {g})[0], want_grad, 1e-15, 0);
      // A leaf that requires grad is refused, unchanged.
      CHECK_THROWS_AS(f(leaf, true), StateError);
      CHECK_THROWS_WITH(f(leaf, true), Contains(name) && Contains("leaf"));
      CHECK_ALLCLOSE(leaf, x, 0, 0);
      // Not recorded: a plain write.
      Tensor plain = x.clone();
      f(plain, true);
      CHECK_ALLCLOSE(plain, want, 0, 0);
      NoGradGuard no_grad;
      f(leaf, true);
      CHECK_ALLCLOSE(leaf, want, 0, 0);
    }
  }
}

TEST_CASE("activations refuse bad input with typed errors", "[nn][errors][activation]") {
  const Tensor x = wick::randn({2, 3}, kF64);
  CHECK_THROWS_AS(F::glu(x), ValueError);
  CHECK_THROWS_WITH(F::glu(x), Contains("glu") && Contains("[2, 3]") && Contains("odd size 3") && Contains("even"));
  CHECK_THROWS_AS(F::glu(wick::zeros({}, kF64)), ValueError);
  CHECK_THROWS_AS(F::glu(x, 2), IndexError);
  CHECK_THROWS_WITH(F::glu(x, 2), Contains("glu") && Contains("dim 2"));
  CHECK_THROWS_AS(F::prelu(x, wick::zeros({2}, kF64)), ValueError);
  CHECK_THROWS_WITH(F::prelu(x, wick::zeros({2}, kF64)), Contains("prelu") && Contains("[2]") && Contains("[2, 3]") &&
                                                             Contains("3 channel") && Contains("num_parameters(3)"));
  CHECK_THROWS_AS(F::prelu(wick::zeros({4}, kF64), wick::zeros({4}, kF64)), ValueError);  // 1-d: one channel
  CHECK_THROWS_WITH(F::prelu(x, wick::zeros({1, 3}, kF64)), Contains("prelu") && Contains("0-d or 1-d"));
  CHECK_THROWS_AS(F::prelu(x, wick::zeros({3})), TypeError);
  CHECK_THROWS_AS(F::prelu(x, wick::zeros({3}, TensorOptions(kFloat64).device("cpu:1"))), ValueError);
  CHECK_THROWS_AS(F::prelu(x, Tensor()), ValueError);
  CHECK_THROWS_AS(F::leaky_relu(wick::zeros({3}, kInt64)), TypeError);
  CHECK_THROWS_WITH(F::softplus(wick::zeros({3}, kInt64)), Contains("softplus") && Contains("int64"));
  CHECK_THROWS_AS(F::mish(Tensor()), ValueError);
  CHECK_THROWS_AS(F::celu(x, F::CELUFuncOptions().alpha(0)), ValueError);
  CHECK_THROWS_AS(F::softplus(x, F::SoftplusFuncOptions().beta(0)), ValueError);
  CHECK_THROWS_WITH(F::hardtanh(x, F::HardtanhFuncOptions().min_val(2).max_val(1)),
                    Contains("hardtanh") && Contains("min_val (2)"));
  CHECK_THROWS_AS(Hardtanh(HardtanhOptions().min_val(1).max_val(1)), ValueError);
  CHECK_THROWS_AS(CELU(CELUOptions().alpha(0)), ValueError);
  CHECK_THROWS_AS(Softplus(SoftplusOptions().beta(0)), ValueError);
  CHECK_THROWS_AS(PReLU(PReLUOptions().num_parameters(0)), ValueError);
  CHECK_THROWS_AS(PReLU(PReLUOptions().num_parameters(4), kF64)(x), ValueError);
}

TEST_CASE("activation layers print as PyTorch and PReLU holds its weight as PyTorch", "[nn][activation]") {
  const std::vector<std::pair<std::string, std::string>> prints = {
      {LeakyReLU()->to_string(), "LeakyReLU(negative_slope=0.01)"},
      {LeakyReLU(LeakyReLUOptions().negative_slope(0.2).inplace(true))->to_string(),
       "LeakyReLU(negative_slope=0.2, inplace=True)"},
      {ELU()->to_string(), "ELU(alpha=1.0)"},
      {ELU(ELUOptions().alpha(2).inplace(true))->to_string(), "ELU(alpha=2.0, inplace=True)"},
      {SELU()->to_string(), "SELU()"},
      {SELU(true)->to_string(), "SELU(inplace=True)"},
      {CELU()->to_string(), "CELU(alpha=1.0)"},
      {Softplus()->to_string(), "Softplus(beta=1, threshold=20)"},
      {Softplus(SoftplusOptions().beta(0.5).threshold(10))->to_string(), "Softplus(beta=0.5, threshold=10)"},
      {Hardtanh()->to_string(), "Hardtanh(min_val=-1.0, max_val=1.0)"},
      {Hardtanh(HardtanhOptions().min_val(-2).max_val(3).inplace(true))->to_string(),
       "Hardtanh(min_val=-2.0, max_val=3.0, inplace=True)"},
      {ReLU6()->to_string(), "ReLU6()"},
      {ReLU6(true)->to_string(), "ReLU6(inplace=True)"},
      {Hardsigmoid(true)->to_string(), "Hardsigmoid()"},
      {Hardswish()->to_string(), "Hardswish()"},
      {Mish()->to_string(), "Mish()"},
      {Mish(true)->to_string(), "Mish(inplace=True)"},
      {Softsign()->to_string(), "Softsign()"},
      {Tanhshrink()->to_string(), "Tanhshrink()"},
      {Threshold(0.1, 20)->to_string(), "Threshold(threshold=0.1, value=20.0)"},
      {Threshold(ThresholdOptions(1, 2).inplace(true))->to_string(),
       "Threshold(threshold=1.0, value=2.0, inplace=True)"},
      {GLU()->to_string(), "GLU(dim=-1)"},
      {LogSigmoid()->to_string(), "LogSigmoid()"},
      {Softmin(1)->to_string(), "Softmin(dim=1)"},
      {LogSoftmax(1)->to_string(), "LogSoftmax(dim=1)"},
      {PReLU()->to_string(), "PReLU(num_parameters=1)"},
      {PReLU(PReLUOptions().num_parameters(3))->to_string(), "PReLU(num_parameters=3)"},
  };
  for (const auto& [got, want] : prints) CHECK(got == want);

  PReLU m(PReLUOptions().num_parameters(3).init(0.1), kF64);
  REQUIRE(m->named_parameters().keys() == std::vector<std::string>{"weight"});
  CHECK((m->weight().dim() == 1 && m->weight().size(0) == 3));
  CHECK_ALLCLOSE(m->weight(), wick::full({3}, 0.1, kF64), 0, 0);
  REQUIRE(m->state_dict().keys() == std::vector<std::string>{"weight"});
  StateDict sd;  // what PyTorch's PReLU(3).state_dict() holds
  sd.insert("weight", f64({0.5, -1, 2}));
  PReLU other(PReLUOptions().num_parameters(3), kF64);
  other->load_state_dict(sd);
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    PReLU moved = std::static_pointer_cast<PReLUImpl>(other->clone());
    moved->to(dev);
    const Tensor x = (wick::randn({2, 3, 4}, kF64)).to(dev);
    CHECK_ALLCLOSE(moved(x), F::prelu(x, f64({0.5, -1, 2}, dev)), 0, 0);
    moved(x).sum().backward();
    REQUIRE(moved->weight().grad().defined());
    CHECK(moved->weight().grad().device() == dev);
  }
  PReLU shared;  // one slope for every channel, 0.25 as PyTorch's default
  CHECK_ALLCLOSE(shared(wick::full({2, 5}, -4.0)), wick::full({2, 5}, -1.0), 0, 0);
  // The layers forward through F with their options.
  const Tensor x = wick::randn({4, 6}, kF64);
  CHECK_ALLCLOSE(GLU(GLUOptions(0))(x), F::glu(x, 0), 0, 0);
  CHECK_ALLCLOSE(LogSoftmax(1)(x), F::log_softmax(x, 1), 0, 0);
  CHECK_ALLCLOSE(Softmin(SoftminOptions(0))(x), F::softmin(x, 0), 0, 0);
  CHECK_ALLCLOSE(Threshold(0.1, 20)(x), F::threshold(x, F::ThresholdFuncOptions(0.1, 20)), 0, 0);
  CHECK_ALLCLOSE(Softplus(SoftplusOptions().beta(2))(x), F::softplus(x, F::SoftplusFuncOptions().beta(2)), 0, 0);
}
