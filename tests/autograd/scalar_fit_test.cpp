// Note [Scalar fits dtype]: an op that converts a Scalar argument into a tensor's dtype refuses a
// value that does not fit it, with a ValueError naming the op and the dtype, before anything is
// written; tensor-scalar arithmetic does not check. The truth is PyTorch 1.13's results for the
// same calls (torch.zeros(1).fill_(3.4028235e38 * (1 + 2**-25)) raises "value cannot be converted
// to type float without overflow"; f32 + 1e300 is inf; i64.fill_(2.5) holds 2; ...), written
// down by hand. Every case runs on every test device.
#include "wick/core/scalar_fit.h"

#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
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

Tensor i64(const std::vector<int64_t>& v, Device dev) { return wick::test::i64(v).to(dev); }
Tensor mask(Device dev) { return tensor(std::vector<double>{1, 0}, {2}, TensorOptions(kBool)).to(dev); }
Tensor index0(Device dev) { return i64({0}, dev); }

// What the message must hold: "op: the arg " when an argument name is given, else "op".
std::string names(const char* op, const char* arg) { return *arg ? std::string(op) + ": the " + arg + " " : op; }

// `call` throws a ValueError naming `op` (and the argument `arg`, when given) and `dtype`.
void refuses(const char* op, const char* dtype, const std::function<void()>& call, const char* arg = "") {
  INFO(op);
  expect_error<ValueError>(call, {names(op, arg), dtype});
}

// `write` on a copy of `self` throws a ValueError naming `op` (and `arg`, when given) and self's
// dtype, and leaves the copy as it was: same values, same version (nothing half-applied).
void refuses_inplace(const char* op, const Tensor& self, const std::function<void(Tensor&)>& write,
                     const char* arg = "") {
  INFO(op);
  Tensor t = self.clone();
  const uint32_t version = t.version();
  expect_error<ValueError>([&] { write(t); }, {names(op, arg), std::string(dtype_name(t.dtype()))});
  CHECK(t.version() == version);
  CHECK(t.equal(self));
}
}  // namespace

TEST_CASE("scalar fit: scalar_fits is PyTorch's checked conversion", "[scalar_fit]") {
  // float32: a finite value beyond float32's largest is refused, compared exactly as PyTorch does.
  for (double v : {0.0, 1e-300, kMax, -kMax, kInf, -kInf, kNan}) CHECK(scalar_fits(v, kFloat32));
  for (double v :
       {kAbove, -kAbove, kMax * (1 + std::ldexp(1.0, -25)), std::ldexp(1.0, 128) - std::ldexp(1.0, 103), kHuge, -kHuge})
    CHECK_FALSE(scalar_fits(v, kFloat32));
  CHECK(scalar_fits(std::numeric_limits<int64_t>::max(), kFloat32));
  // int64: a fractional value truncates; NaN, inf and values outside [-2^63, 2^63) do not fit.
  for (double v : {2.5, -2.5, -9223372036854775808.0}) CHECK(scalar_fits(v, kInt64));
  for (double v : {kNan, kInf, -kInf, kHuge, 9223372036854775808.0}) CHECK_FALSE(scalar_fits(v, kInt64));
  // float64 and bool take everything.
  for (double v : {kHuge, kAbove, kInf, kNan}) {
    CHECK(scalar_fits(v, kFloat64));
    CHECK(scalar_fits(v, kBool));
  }
  expect_error<ValueError>(
      [] {
        check_scalar_fits("my_op", "weight", kHuge, kFloat32, {2, 3});
      },
      {"my_op", "weight", "1e+300", "float32", "[2, 3]", "float64"});
  CHECK_NOTHROW(check_scalar_fits("my_op", "weight", kMax, kFloat32, {2, 3}));
}

TEST_CASE("scalar fit: fill_, full and full_like refuse a value that overflows the dtype", "[scalar_fit]") {
  for (const Device dev : wick::test::test_devices()) {
    INFO(dev);
    const Tensor a = f32({1, 2}, dev), n = i64({1, 2}, dev);
    refuses_inplace("fill_", a, [](Tensor& t) { t.fill_(kHuge); });
    refuses_inplace("fill_", a, [](Tensor& t) { t.fill_(kAbove); });
    refuses_inplace("fill_", a, [](Tensor& t) { t.fill_(-kHuge); });
    refuses_inplace("fill_", n, [](Tensor& t) { t.fill_(kHuge); });
    refuses_inplace("fill_", n, [](Tensor& t) { t.fill_(kNan); });
    refuses_inplace("fill_", n, [](Tensor& t) { t.fill_(kInf); });
    {  // recorded (a non-leaf that requires grad): refused before the snapshot is written back
      const Tensor leaf = f32({1, 2}, dev).requires_grad_(true);
      Tensor y = leaf * 1.0;
      const uint32_t version = y.version();
      refuses("fill_", "float32", [&] { y.fill_(kHuge); });
      CHECK(y.version() == version);
      CHECK(doubles(y) == std::vector<double>{1, 2});
    }
    // What passes, with PyTorch's values.
    CHECK(doubles(f32({1, 2}, dev).fill_(kMax)) == std::vector<double>{kMax, kMax});
    CHECK(doubles(f32({1, 2}, dev).fill_(-kMax)) == std::vector<double>{-kMax, -kMax});
    CHECK(doubles(f32({1, 2}, dev).fill_(kInf)) == std::vector<double>{kInf, kInf});
    CHECK(std::isnan(doubles(f32({1, 2}, dev).fill_(kNan))[0]));
    CHECK(doubles(f64({1, 2}, dev).fill_(kHuge)) == std::vector<double>{kHuge, kHuge});
    CHECK(longs(i64({1, 2}, dev).fill_(2.5)) == std::vector<int64_t>{2, 2});
    CHECK(longs(i64({1, 2}, dev).fill_(-2.5)) == std::vector<int64_t>{-2, -2});
    CHECK(longs(mask(dev).fill_(5)) == std::vector<int64_t>{1, 1});
    CHECK(longs(mask(dev).fill_(kHuge)) == std::vector<int64_t>{1, 1});

    const TensorOptions o32 = TensorOptions(kFloat32).device(dev), o64 = TensorOptions(kInt64).device(dev);
    refuses("full", "float32", [&] { (void)full({2}, kHuge, o32); });
    refuses("full", "int64", [&] { (void)full({2}, kHuge, o64); });
    refuses("full_like", "float32", [&] { (void)full_like(a, kHuge); });
    refuses("full_like", "int64", [&] { (void)full_like(n, kNan); });
    CHECK(doubles(full({2}, kInf, o32)) == std::vector<double>{kInf, kInf});
    CHECK(doubles(full({2}, kMax, o32)) == std::vector<double>{kMax, kMax});
    CHECK(longs(full({2}, 2.5, o64)) == std::vector<int64_t>{2, 2});
    CHECK(doubles(full_like(f64({1}, dev), kHuge)) == std::vector<double>{kHuge});
  }
}

TEST_CASE("scalar fit: clamp and clamp_ check their bounds against the promoted dtype", "[scalar_fit]") {
  for (const Device dev : wick::test::test_devices()) {
    INFO(dev);
    const Tensor a = f32({-1, 5}, dev), n = i64({0, 5}, dev);
    refuses("clamp", "float32", [&] { (void)clamp(a, std::nullopt, kHuge); });
    refuses("clamp", "float32", [&] { (void)a.clamp(-kHuge, std::nullopt); });
    refuses("clamp", "float32", [&] { (void)clamp(a, 0.0, kAbove); });
    // An int64 tensor with a floating bound is clamped in float32: the bound must fit float32.
    refuses("clamp", "float32", [&] { (void)clamp(n, std::nullopt, kHuge); });
    refuses("clamp", "float32", [&] { (void)clamp(n, std::nullopt, kAbove); });
    refuses_inplace("clamp_", a, [](Tensor& t) { t.clamp_(std::nullopt, kHuge); });
    refuses_inplace("clamp_", a, [](Tensor& t) { t.clamp_(-kHuge, 0.0); });
    {  // recorded
      const Tensor leaf = f32({-1, 5}, dev).requires_grad_(true);
      Tensor y = leaf * 1.0;
      refuses("clamp_", "float32", [&] { y.clamp_(std::nullopt, kHuge); });
      CHECK(doubles(y) == std::vector<double>{-1, 5});
    }
    // What passes, with PyTorch's values.
    const Tensor c = clamp(n, std::nullopt, 2.5);
    CHECK(c.dtype() == kFloat32);
    CHECK(doubles(c) == std::vector<double>{0, 2.5});
    CHECK(doubles(clamp(a, -kMax, kMax)) == std::vector<double>{-1, 5});
    CHECK(doubles(clamp(a, std::nullopt, kInf)) == std::vector<double>{-1, 5});
    CHECK(doubles(clamp(f64({-1, 5}, dev), -kHuge, kHuge)) == std::vector<double>{-1, 5});
    CHECK(doubles(clamp(a, 0.0, kInf)) == std::vector<double>{0, 5});
  }
}

TEST_CASE("scalar fit: masked_fill, where and index_fill refuse a value that overflows", "[scalar_fit]") {
  for (const Device dev : wick::test::test_devices()) {
    INFO(dev);
    const Tensor a = f32({1, 2}, dev), n = i64({1, 2}, dev), m = mask(dev);
    refuses("masked_fill", "float32", [&] { (void)masked_fill(a, m, kHuge); });
    refuses("masked_fill", "int64", [&] { (void)a.to(kInt64).masked_fill(m, kHuge); });
    refuses("masked_fill", "int64", [&] { (void)masked_fill(n, m, kNan); });
    refuses_inplace("masked_fill_", a, [&](Tensor& t) { t.masked_fill_(m, kHuge); });
    refuses_inplace("masked_fill_", n, [&](Tensor& t) { t.masked_fill_(m, kInf); });
    CHECK(longs(masked_fill(n, m, 2.5)) == std::vector<int64_t>{2, 2});
    CHECK(doubles(masked_fill(a, m, kInf)) == std::vector<double>{kInf, 2});
    CHECK(doubles(masked_fill(a, m, kMax)) == std::vector<double>{kMax, 2});

    // where: the scalar is checked against the promoted dtype (int64 with 1e300 -> float32).
    refuses("where", "float32", [&] { (void)where(m, a, kHuge); });
    refuses("where", "float32", [&] { (void)where(m, kHuge, a); });
    refuses("where", "float32", [&] { (void)where(m, n, kHuge); });
    refuses("where", "float32", [&] { (void)where(m, kHuge, 2.0); });
    const Tensor w = where(m, n, 2.5);
    CHECK(w.dtype() == kFloat32);
    CHECK(doubles(w) == std::vector<double>{1, 2.5});
    CHECK(doubles(where(m, f64({1, 2}, dev), kHuge)) == std::vector<double>{1, kHuge});
    CHECK(doubles(where(m, a, kInf)) == std::vector<double>{1, kInf});

    refuses("index_fill", "float32", [&] { (void)index_fill(a, 0, index0(dev), kHuge); });
    refuses("index_fill", "int64", [&] { (void)n.index_fill(0, index0(dev), kNan); });
    refuses_inplace("index_fill_", a, [&](Tensor& t) { t.index_fill_(0, index0(dev), kHuge); });
    refuses_inplace("index_fill_", n, [&](Tensor& t) { t.index_fill_(0, index0(dev), kHuge); });
    CHECK(longs(n.index_fill(0, index0(dev), 2.5)) == std::vector<int64_t>{2, 2});
    CHECK(doubles(a.index_fill(0, index0(dev), kMax)) == std::vector<double>{kMax, 2});
  }
}

TEST_CASE("scalar fit: lerp, addcmul and addcdiv refuse a weight or value that overflows", "[scalar_fit]") {
  for (const Device dev : wick::test::test_devices()) {
    INFO(dev);
    const Tensor a = f32({1, 2}, dev), b = f32({3, 4}, dev);
    refuses("lerp", "float32", [&] { (void)lerp(a, b, kHuge); });
    refuses("lerp", "float32", [&] { (void)a.lerp(b, -kAbove); });
    refuses_inplace("lerp_", a, [&](Tensor& t) { t.lerp_(b, kHuge); });
    CHECK(doubles(lerp(f64({1, 2}, dev), f64({1, 2}, dev), kHuge)) == std::vector<double>{1, 2});
    const std::vector<double> inf_weight = doubles(lerp(a, a, kInf));  // 0 * inf: NaN, as PyTorch
    CHECK((std::isnan(inf_weight[0]) && std::isnan(inf_weight[1])));

    refuses("addcmul", "float32", [&] { (void)addcmul(a, a, b, kHuge); });
    refuses("addcdiv", "float32", [&] { (void)a.addcdiv(a, b, kHuge); });
    refuses_inplace("addcmul_", a, [&](Tensor& t) { t.addcmul_(a, b, kHuge); });
    refuses_inplace("addcdiv_", a, [&](Tensor& t) { t.addcdiv_(a, b, kAbove); });
    refuses("addcmul", "int64", [&] { (void)addcmul(i64({1}, dev), i64({1}, dev), i64({1}, dev), kHuge); });
    // The value is checked against the promoted dtype: float64 with a float64 operand.
    CHECK(doubles(addcmul(a, f64({0, 0}, dev), b, kHuge)) == std::vector<double>{1, 2});
    CHECK(doubles(addcmul(a, a, b, kMax)) == doubles(a + a * b * kMax));
  }
}

TEST_CASE("scalar fit: threshold, hardtanh and leaky_relu refuse a parameter that overflows", "[scalar_fit]") {
  for (const Device dev : wick::test::test_devices()) {
    INFO(dev);
    const Tensor a = f32({-1, 2}, dev);
    refuses("threshold", "float32", [&] { (void)F::threshold(a, F::ThresholdFuncOptions(kHuge, 0.0)); });
    refuses("threshold", "float32", [&] { (void)F::threshold(a, F::ThresholdFuncOptions(0.0, kHuge)); });
    refuses_inplace("threshold", a,
                    [](Tensor& t) { (void)F::threshold(t, F::ThresholdFuncOptions(kHuge, 0.0).inplace(true)); });
    refuses("hardtanh", "float32", [&] { (void)F::hardtanh(a, F::HardtanhFuncOptions().min_val(-kHuge).max_val(1)); });
    refuses("hardtanh", "float32", [&] { (void)F::hardtanh(a, F::HardtanhFuncOptions().max_val(kHuge)); });
    refuses_inplace("hardtanh", a, [](Tensor& t) {
      (void)F::hardtanh(t, F::HardtanhFuncOptions().min_val(-kHuge).max_val(kHuge).inplace(true));
    });
    refuses("leaky_relu", "float32", [&] { (void)F::leaky_relu(a, F::LeakyReLUFuncOptions().negative_slope(kHuge)); });
    refuses_inplace("leaky_relu", a, [](Tensor& t) {
      (void)F::leaky_relu(t, F::LeakyReLUFuncOptions().negative_slope(kHuge).inplace(true));
    });
    // What passes, with PyTorch's values.
    CHECK(doubles(F::threshold(a, F::ThresholdFuncOptions(kInf, 0.0))) == std::vector<double>{0, 0});
    const Tensor d = f64({-1, 2}, dev);
    CHECK(doubles(F::threshold(d, F::ThresholdFuncOptions(kHuge, 0.0))) == std::vector<double>{0, 0});
    CHECK(doubles(F::hardtanh(d, F::HardtanhFuncOptions().min_val(-kHuge).max_val(kHuge))) ==
          std::vector<double>{-1, 2});
    CHECK(doubles(F::leaky_relu(d, F::LeakyReLUFuncOptions().negative_slope(kHuge))) == std::vector<double>{-kHuge, 2});
    CHECK(doubles(F::hardtanh(a, F::HardtanhFuncOptions().min_val(-kMax).max_val(kMax))) == std::vector<double>{-1, 2});
  }
}

TEST_CASE("scalar fit: tensor-scalar arithmetic, nan_to_num and arange do not check, as PyTorch", "[scalar_fit]") {
  for (const Device dev : wick::test::test_devices()) {
    INFO(dev);
    const Tensor a = f32({0, 1}, dev);
    CHECK(doubles(a.add(kHuge)) == std::vector<double>{kInf, kInf});
    CHECK(doubles(a + kAbove) == std::vector<double>{kMax, kMax});  // kAbove rounds to kMax
    const Tensor n = i64({0, 1}, dev) + kHuge;                      // promoted to float32 first: inf
    CHECK(n.dtype() == kFloat32);
    CHECK(doubles(n) == std::vector<double>{kInf, kInf});
    const std::vector<double> prod = doubles(a * kHuge);  // 0 * inf is NaN, 1 * inf inf
    CHECK((std::isnan(prod[0]) && prod[1] == kInf));
    Tensor t = a.clone();
    t.add_(kHuge);
    CHECK(doubles(t) == std::vector<double>{kInf, kInf});
    CHECK(longs(a.eq(kHuge)) == std::vector<int64_t>{0, 0});
    CHECK(doubles(a.fmod(kHuge)) == std::vector<double>{0, 1});
    const Tensor special = f32({kInf, -kInf, kNan, 1}, dev);
    CHECK(doubles(special.nan_to_num(kHuge, kHuge, -kHuge)) == std::vector<double>{kInf, -kInf, kInf, 1});
    CHECK(doubles(a.view({1, 2}).renorm(2, 0, kHuge)) == std::vector<double>{0, 1});
    const Tensor r = arange(0.0, kHuge, 1e299, TensorOptions(kFloat32).device(dev));
    CHECK(r.numel() == 10);
    CHECK(doubles(r)[1] == kInf);
  }
}

TEST_CASE("scalar fit: add and sub check alpha against the result dtype", "[scalar_fit]") {
  for (const Device dev : wick::test::test_devices()) {
    INFO(dev);
    const Tensor a = f32({-1, 2}, dev), d = f64({-1, 2}, dev);
    refuses(
        "add", "float32", [&] { (void)add(a, a, kHuge); }, "alpha");
    refuses(
        "add", "float32", [&] { (void)a.add(a, -kAbove); }, "alpha");
    refuses(
        "sub", "float32", [&] { (void)sub(a, a, kHuge); }, "alpha");
    // float32 with a 0-d float64 operand computes in float32 (the dimensioned tensor's dtype).
    refuses(
        "add", "float32", [&] { (void)add(a, f64({1}, dev).reshape({}), kHuge); }, "alpha");
    refuses_inplace(
        "add_", a, [&](Tensor& t) { t.add_(a, kHuge); }, "alpha");
    refuses_inplace(
        "sub_", a, [&](Tensor& t) { t.sub_(a, kAbove); }, "alpha");
    {  // recorded
      const Tensor leaf = f32({-1, 2}, dev).requires_grad_(true);
      Tensor y = leaf * 1.0;
      refuses(
          "add_", "float32", [&] { y.add_(a, kHuge); }, "alpha");
      CHECK(doubles(y) == std::vector<double>{-1, 2});
    }
    // What passes, with PyTorch's values: x + alpha * x.
    CHECK(doubles(add(a, a, kMax)) == std::vector<double>{-kMax, kInf});
    CHECK(doubles(sub(a, a, kMax)) == std::vector<double>{kMax, -kInf});
    CHECK(doubles(add(a, a, kInf)) == std::vector<double>{-kInf, kInf});
    CHECK(doubles(add(d, d, kHuge)) == std::vector<double>{-kHuge, 2 * kHuge});
    // Not refused where PyTorch computes in float64: float32 with a float64 operand, in place too
    // (the sum is rounded to float32 afterwards: inf).
    CHECK(doubles(add(a, d, kHuge)) == std::vector<double>{-kHuge, 2 * kHuge});
    Tensor t = a.clone();
    t.add_(d, kHuge);
    CHECK(doubles(t) == std::vector<double>{-kInf, kInf});
  }
}

TEST_CASE("scalar fit: addmm, baddbmm, addmv, addr and addbmm check beta and alpha", "[scalar_fit]") {
  for (const Device dev : wick::test::test_devices()) {
    INFO(dev);
    const Tensor m = f32({1, 1, 1, 1}, dev).view({2, 2}), v = f32({1, 1}, dev), b = m.view({1, 2, 2});
    for (const char* arg : {"beta", "alpha"}) {
      const bool beta = std::string(arg) == "beta";
      const auto ba = [&](double x) { return beta ? std::pair<double, double>{x, 1.0} : std::pair{1.0, x}; };
      double bt = 0, al = 0;
      std::tie(bt, al) = ba(kHuge);
      refuses(
          "addmm", "float32", [&] { (void)addmm(m, m, m, bt, al); }, arg);
      refuses(
          "baddbmm", "float32", [&] { (void)baddbmm(b, b, b, bt, al); }, arg);
      refuses(
          "addmv", "float32", [&] { (void)addmv(v, m, v, bt, al); }, arg);
      refuses(
          "addr", "float32", [&] { (void)addr(m, v, v, bt, al); }, arg);
      refuses(
          "addbmm", "float32", [&] { (void)m.addbmm(b, b, bt, al); }, arg);
      refuses_inplace(
          "addmv_", v, [&](Tensor& t) { t.addmv_(m, v, bt, al); }, arg);
      refuses_inplace(
          "addr_", m, [&](Tensor& t) { t.addr_(v, v, bt, al); }, arg);
      refuses_inplace(
          "addbmm_", m, [&](Tensor& t) { t.addbmm_(b, b, bt, al); }, arg);
      // What passes, with PyTorch's values: beta * 1 + alpha * (1 * 1 summed over 2, or 1 for addr).
      std::tie(bt, al) = ba(kMax);
      const double sum2 = beta ? kMax : kInf, one = kMax;
      CHECK(doubles(addmm(m, m, m, bt, al)) == std::vector<double>(4, sum2));
      CHECK(doubles(baddbmm(b, b, b, bt, al)) == std::vector<double>(4, sum2));
      CHECK(doubles(addmv(v, m, v, bt, al)) == std::vector<double>(2, sum2));
      CHECK(doubles(addr(m, v, v, bt, al)) == std::vector<double>(4, one));
      CHECK(doubles(m.clone().addbmm_(b, b, bt, al)) == std::vector<double>(4, sum2));
      std::tie(bt, al) = ba(kInf);
      CHECK(doubles(addmm(m, m, m, bt, al)) == std::vector<double>(4, kInf));
      CHECK(doubles(v.clone().addmv_(m, v, bt, al)) == std::vector<double>(2, kInf));
      std::tie(bt, al) = ba(kHuge);  // float64 takes it
      CHECK(doubles(addr(m.to(kFloat64), v.to(kFloat64), v.to(kFloat64), bt, al)) == std::vector<double>(4, kHuge));
    }
  }
}
