// F::normalize. Truths: PyTorch 1.13's values and gradients (generate.py's normalize_cases: p 2, 1,
// 3.5, inf, -inf, 0 and 0.5, dims 0, 1 and -1, 1-d and 0-d inputs, zero rows and a row below eps)
// on every test device; rows worked by hand (3-4-5 and its 1- and inf-norms, the eps path and its
// gradient g / eps); float64 gradchecks and double backward; float32 against float64; and the
// errors PyTorch 1.13 raises (dim out of range, an integer input, an eps float32 cannot hold).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/expect_error.h"
#include "support/gradcheck.h"
#include "support/oracle.h"
#include "support/oracle_checks.h"
#include "support/small_tensors.h"
#include "wick/autograd/grad.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using wick::test::expect_error;
using wick::test::f64;
using TL = std::vector<Tensor>;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

// The case's p: a number, or "inf" / "-inf" (JSON has no infinity).
double p_of(const wick::test::OracleCase& c) {
  const auto& p = c.kwargs.at("p");
  if (p.is_string()) return p.get<std::string>() == "inf" ? kInf : -kInf;
  return p.get<double>();
}

Tensor seeded(IntArrayRef shape, uint64_t seed) {
  manual_seed(seed);
  return randn(shape, kFloat64);
}
}  // namespace

TEST_CASE("normalize: matches PyTorch 1.13 on every device", "[nn][oracle][normalize]") {
  int inf_norms = 0, zero_rows = 0;
  const auto seen = wick::test::check_oracle_ops(
      {"normalize"},
      [&](const wick::test::OracleCase& c, const TL& x, Device) {
        const double p = p_of(c);
        const auto o = F::NormalizeFuncOptions().p(p).dim(c.kw<int64_t>("dim", 1)).eps(c.kw<double>("eps", 0));
        inf_norms += std::isinf(p) ? 1 : 0;
        const std::vector<double> in = wick::test::doubles(c.inputs[0]);
        zero_rows += std::count(in.begin(), in.end(), 0.0) >= 4 ? 1 : 0;  // randn has no exact zeros
        return F::normalize(x[0], o);
      },
      {1e-12, 1e-9, 1e-13});
  CHECK(seen.total == 15);
  CHECK(inf_norms > 0);
  CHECK(zero_rows > 0);
}

TEST_CASE("normalize: rows by hand, the eps path and its gradient", "[nn][normalize]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    // [3, 4] and a zero row: norms 5 (p 2), 7 (p 1), 4 (inf); the zero row stays 0.
    const Tensor x = f64({3, 4, 0, 0}, {2, 2}, dev);
    CHECK_ALLCLOSE(F::normalize(x), f64({0.6, 0.8, 0, 0}, {2, 2}), 1e-15, 0);
    CHECK_ALLCLOSE(F::normalize(x, F::NormalizeFuncOptions().p(1)), f64({3.0 / 7, 4.0 / 7, 0, 0}, {2, 2}), 1e-15, 0);
    CHECK_ALLCLOSE(F::normalize(x, F::NormalizeFuncOptions().p(kInf)), f64({0.75, 1, 0, 0}, {2, 2}), 1e-15, 0);
    // Along dim 0 (columns [3, 0] and [4, 0]): each column over its own norm.
    CHECK_ALLCLOSE(F::normalize(x, F::NormalizeFuncOptions().dim(0)), f64({1, 1, 0, 0}, {2, 2}), 0, 0);
    // eps 10 exceeds both norms: x / 10, and the gradient of the sum is 1 / 10 everywhere (the
    // clamped denominator is a constant); with the default eps the zero row's gradient is 1 / eps.
    const Tensor leaf = x.clone().requires_grad_(true);
    const Tensor big = F::normalize(leaf, F::NormalizeFuncOptions().eps(10));
    CHECK_ALLCLOSE(big, f64({0.3, 0.4, 0, 0}, {2, 2}), 1e-15, 0);
    CHECK_ALLCLOSE(autograd::grad({big.sum()}, {leaf})[0], f64({0.1, 0.1, 0.1, 0.1}, {2, 2}), 1e-15, 0);
    const Tensor g = autograd::grad({F::normalize(leaf).sum()}, {leaf})[0];
    // Row [3, 4]: d/dx_i sum(x / |x|) = (|x|^2 - x_i sum(x)) / |x|^3 = (25 - 7 x_i) / 125.
    CHECK_ALLCLOSE(g, f64({4.0 / 125, -3.0 / 125, 1e12, 1e12}, {2, 2}), 1e-12, 0);
    // A 0-d input: x / |x|; a 1-d one along dim 0 and -1.
    CHECK_ALLCLOSE(F::normalize(f64({-2.5}, {}, dev), F::NormalizeFuncOptions().dim(0)), f64({-1}, {}), 0, 0);
    CHECK_ALLCLOSE(F::normalize(f64({0, 5, 12}, {3}, dev), F::NormalizeFuncOptions().dim(-1)),
                   f64({0, 5.0 / 13, 12.0 / 13}, {3}), 1e-15, 0);
    // An empty input keeps its shape.
    CHECK(F::normalize(zeros({0, 3}, TensorOptions(kFloat64).device(dev))).sizes() == IntArrayRef({0, 3}));
  }
}

TEST_CASE("normalize: float32 agrees with float64, and the defaults are LibTorch's", "[nn][normalize]") {
  const F::NormalizeFuncOptions o;
  CHECK(o.p() == 2.0);
  CHECK(o.dim() == 1);
  CHECK(o.eps() == 1e-12);
  const Tensor x = seeded({4, 6}, 3);
  for (double p : {2.0, 1.0, 3.5, kInf}) {
    INFO("p " << p);
    const auto op = F::NormalizeFuncOptions().p(p).dim(-1);
    const Tensor single = F::normalize(x.to(kFloat32), op);
    CHECK(single.dtype() == kFloat32);
    CHECK_ALLCLOSE(single.to(kFloat64), F::normalize(x, op), 1e-5, 1e-6);
  }
  // A float64 input takes an eps float32 cannot hold (PyTorch 1.13 too).
  CHECK_ALLCLOSE(F::normalize(f64({3, 4}, {1, 2}), F::NormalizeFuncOptions().eps(1e300)), f64({3e-300, 4e-300}, {1, 2}),
                 1e-15, 0);
}

TEST_CASE("normalize: float64 gradcheck and double backward", "[nn][normalize][gradcheck]") {
  for (double p : {2.0, 1.0, 3.5, kInf, 0.5}) {
    for (int64_t dim : {0, 1, -1}) {
      INFO("p " << p << " dim " << dim);
      auto f = [p, dim](const TL& x) { return TL{F::normalize(x[0], F::NormalizeFuncOptions().p(p).dim(dim))}; };
      CHECK_GRADCHECKS(f, {seeded({3, 4}, 5).requires_grad_(true)});
    }
  }
  // A row whose norm is below eps: the gradient is the composite's (1 / eps there).
  Tensor x = seeded({3, 4}, 6);
  {
    NoGradGuard no_grad;
    x.select(0, 1).mul_(0.01);
  }
  auto clamped = [](const TL& t) { return TL{F::normalize(t[0], F::NormalizeFuncOptions().eps(0.5))}; };
  CHECK_GRADCHECKS(clamped, {x.requires_grad_(true)});
}

TEST_CASE("normalize: bad input is a typed error naming normalize", "[nn][normalize][errors]") {
  const Tensor x = seeded({2, 3}, 7);
  expect_error<IndexError>([&] { F::normalize(x, F::NormalizeFuncOptions().dim(2)); },
                           {"normalize", "dim 2", "[2, 3]", "[-2, 1]"});
  expect_error<IndexError>([&] { F::normalize(x, F::NormalizeFuncOptions().dim(-3)); }, {"normalize", "dim -3"});
  expect_error<IndexError>([&] { F::normalize(f64({1}, {}), F::NormalizeFuncOptions().dim(1)); },
                           {"normalize", "dim 1", "[]"});
  // PyTorch's norm refuses integer and bool inputs.
  expect_error<TypeError>(
      [&] {
        F::normalize(arange(6, TensorOptions(kInt64)).reshape({2, 3}));
      },
      {"normalize", "int64", "[2, 3]"});
  expect_error<TypeError>([&] { F::normalize(ones({2, 2}, TensorOptions(kBool))); }, {"normalize", "bool"});
  // Note [Scalar fits dtype]: float32 cannot hold eps 1e300 (PyTorch 1.13's clamp_min refuses it).
  expect_error<ValueError>([&] { F::normalize(x.to(kFloat32), F::NormalizeFuncOptions().eps(1e300)); },
                           {"normalize", "eps", "float32", "[2, 3]"});
  // A NaN order (PyTorch returns NaN everywhere).
  expect_error<ValueError>([&] { F::normalize(x, F::NormalizeFuncOptions().p(std::nan(""))); }, {"normalize", "NaN"});
  expect_error<ValueError>([&] { F::normalize(Tensor()); }, {"normalize", "undefined"});
}
