// Note [Scalar fits dtype] for the nn functions: a parameter the function converts to the input's
// dtype (elu's and celu's alpha, softplus's beta and threshold, hardshrink's and softshrink's
// lambda, rrelu's lower and upper, pad's value, hinge_embedding_loss's margin) refuses a value
// that does not fit it, with a ValueError naming the function, the parameter and the dtype,
// before anything is written. The truth is PyTorch 1.13's results for the same calls
// (F.elu(torch.zeros(2), alpha=1e300) raises "value cannot be converted to type float without
// overflow"; F.elu(torch.tensor([-1., 2.]), alpha=3.4028234663852886e38) is [-2.1509946e38, 2];
// F.margin_ranking_loss with margin 1e300 is inf; ...), written down by hand. Every case runs on
// every test device.
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "support/devices.h"
#include "support/expect_error.h"
#include "support/scalar_fit_values.h"
#include "support/small_tensors.h"

using namespace wick;
using wick::test::doubles;
using wick::test::expect_error;
using wick::test::longs;
using namespace wick::test::scalar_fit;

namespace {
namespace F = wick::nn::functional;

// `call` throws a ValueError whose message holds "op: the arg " and `dtype`.
void refuses(const char* op, const char* arg, const char* dtype, const std::function<void()>& call) {
  INFO(op << " " << arg);
  expect_error<ValueError>(call, {std::string(op) + ": the " + arg + " ", dtype});
}

// `write` on a copy of `self` throws such a ValueError and leaves the copy as it was: same values,
// same version (nothing half-applied).
void refuses_inplace(const char* op, const char* arg, const Tensor& self, const std::function<void(Tensor&)>& write) {
  INFO(op << " " << arg);
  Tensor t = self.clone();
  const uint32_t version = t.version();
  expect_error<ValueError>([&] { write(t); }, {std::string(op) + ": the " + arg + " ", "float32"});
  CHECK(t.version() == version);
  CHECK(t.equal(self));
}

// `got` equals `want` to float32's precision, element by element (inf and NaN exactly).
void close32(const Tensor& got, const std::vector<double>& want) {
  const std::vector<double> g = doubles(got);
  REQUIRE(g.size() == want.size());
  for (size_t i = 0; i < g.size(); ++i) {
    INFO(i << ": " << g[i] << " vs " << want[i]);
    if (std::isnan(want[i]))
      CHECK(std::isnan(g[i]));
    else if (std::isinf(want[i]))
      CHECK(g[i] == want[i]);
    else
      CHECK(g[i] == Approx(want[i]).epsilon(1e-6).margin(1e-6));
  }
}
}  // namespace

TEST_CASE("scalar fit (nn): elu, celu and softplus refuse a parameter that overflows", "[nn][scalar_fit]") {
  const double nan = std::nan("");
  for (const Device dev : wick::test::test_devices()) {
    INFO(dev);
    const Tensor a = f32({-1, 2}, dev);
    refuses("elu", "alpha", "float32", [&] { (void)F::elu(a, F::ELUFuncOptions().alpha(kHuge)); });
    refuses("elu", "alpha", "float32", [&] { (void)F::elu(a, F::ELUFuncOptions().alpha(-kAbove)); });
    refuses_inplace("elu", "alpha", a,
                    [](Tensor& t) { (void)F::elu(t, F::ELUFuncOptions().alpha(kHuge).inplace(true)); });
    refuses("celu", "alpha", "float32", [&] { (void)F::celu(a, F::CELUFuncOptions().alpha(kHuge)); });
    refuses_inplace("celu", "alpha", a,
                    [](Tensor& t) { (void)F::celu(t, F::CELUFuncOptions().alpha(-kHuge).inplace(true)); });
    refuses("softplus", "beta", "float32", [&] { (void)F::softplus(a, F::SoftplusFuncOptions().beta(kHuge)); });
    refuses("softplus", "threshold", "float32",
            [&] { (void)F::softplus(a, F::SoftplusFuncOptions().threshold(kAbove)); });
    // What passes, with PyTorch's values.
    close32(F::elu(a, F::ELUFuncOptions().alpha(kMax)), {-2.1509945654165798e+38, 2});
    close32(F::elu(a, F::ELUFuncOptions().alpha(kInf)), {-kInf, 2});
    close32(F::celu(f32({-1e38, 2}, dev), F::CELUFuncOptions().alpha(kMax)), {-8.664583521330702e+37, 2});
    close32(F::celu(a, F::CELUFuncOptions().alpha(kInf)), {nan, 2});  // 0 * inf, as PyTorch
    close32(F::softplus(a, F::SoftplusFuncOptions().beta(kMax)), {0, 2});
    close32(F::softplus(a, F::SoftplusFuncOptions().beta(kInf)), {0, 2});
    close32(F::softplus(a, F::SoftplusFuncOptions().threshold(kMax)), {0.3132616877555847, 2.1269280910491943});
    close32(F::elu(f64({-1, 2}, dev), F::ELUFuncOptions().alpha(kHuge)), {-6.321205588285577e+299, 2});
  }
}

TEST_CASE("scalar fit (nn): hardshrink, softshrink and rrelu refuse a parameter that overflows", "[nn][scalar_fit]") {
  for (const Device dev : wick::test::test_devices()) {
    INFO(dev);
    const Tensor a = f32({-1, 2}, dev);
    refuses("hardshrink", "lambda", "float32", [&] { (void)F::hardshrink(a, kHuge); });
    refuses("hardshrink", "lambda", "float32", [&] { (void)F::hardshrink(a, -kHuge); });
    refuses("softshrink", "lambda", "float32", [&] { (void)F::softshrink(a, kAbove); });
    const auto rr = [](double lower, double upper) { return F::RReLUFuncOptions().lower(lower).upper(upper); };
    refuses("rrelu", "upper", "float32", [&] { (void)F::rrelu(a, rr(0.1, kHuge)); });
    refuses("rrelu", "lower", "float32", [&] { (void)F::rrelu(a, rr(-kHuge, 0.5)); });
    refuses("rrelu", "upper", "float32", [&] { (void)F::rrelu(a, rr(0.1, kHuge).training(true)); });
    refuses_inplace("rrelu", "upper", a, [&](Tensor& t) { (void)F::rrelu(t, rr(0.1, kHuge).inplace(true)); });
    refuses_inplace("rrelu", "upper", a,
                    [&](Tensor& t) { (void)F::rrelu(t, rr(0.1, kHuge).training(true).inplace(true)); });
    // What passes, with PyTorch's values (rrelu in eval mode: slope (lower + upper) / 2).
    for (const double l : {kMax, kInf}) {
      close32(F::hardshrink(a, l), {0, 0});
      close32(F::softshrink(a, l), {0, 0});
    }
    close32(F::rrelu(a, rr(0.1, kMax)), {-1.7014117331926443e+38, 2});
    close32(F::rrelu(a, rr(kMax, kMax)), {-kMax, 2});
    close32(F::rrelu(a, rr(0.1, kInf)), {-kInf, 2});
    close32(F::softshrink(f64({-1, 2}, dev), kHuge), {0, 0});
  }
}

TEST_CASE("scalar fit (nn): pad and hinge_embedding_loss refuse a value or margin that overflows", "[nn][scalar_fit]") {
  for (const Device dev : wick::test::test_devices()) {
    INFO(dev);
    const Tensor a = f32({-1, 2}, dev), y = f32({1, -1}, dev), n = wick::test::i64({1, 2}, dev);
    refuses("pad", "value", "float32", [&] { (void)F::pad(a, {1, 1}, kHuge); });
    refuses("pad", "value", "float32", [&] { (void)F::pad(a, {1, 1}, nn::kConstant, -kAbove); });
    refuses("pad", "value", "int64", [&] { (void)F::pad(n, {1, 1}, std::nan("")); });
    refuses("pad", "value", "int64", [&] { (void)F::pad(n, {1, 1}, kHuge); });
    refuses("hinge_embedding_loss", "margin", "float32", [&] { (void)F::hinge_embedding_loss(a, y, kHuge); });
    // What passes, with PyTorch's values.
    close32(F::pad(a, {1, 1}, kMax), {kMax, -1, 2, kMax});
    close32(F::pad(a, {1, 1}, -kInf), {-kInf, -1, 2, -kInf});
    CHECK(longs(F::pad(n, {1, 1}, 2.5)) == std::vector<int64_t>{2, 1, 2, 2});
    close32(F::hinge_embedding_loss(a, y, kMax), {1.7014117331926443e+38});  // (-1 + (kMax - 2)) / 2
    close32(F::hinge_embedding_loss(a, y, kInf), {kInf});
    CHECK(doubles(F::hinge_embedding_loss(f64({-1, 2}, dev), f64({1, -1}, dev), kHuge)) == std::vector<double>{5e299});
    // Not checked, as PyTorch: margin_ranking_loss's margin is added as a number (inf in float32),
    // huber_loss's delta is compared as one.
    CHECK(doubles(F::margin_ranking_loss(a, a, y, kHuge)) == std::vector<double>{kInf});
    CHECK(doubles(F::huber_loss(a, a, nn::kMean, kHuge)) == std::vector<double>{0});
  }
}
