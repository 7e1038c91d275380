// kthvalue, median, prod, cumprod, rounding, remainder/fmod/atan2 and the trig/hyperbolic set:
// PyTorch 1.13's values and gradients (generate.py's tensor_ops_more_cases, selected by op name;
// ties, NaN and zeros planted) on every test device at rtol 1e-10; float64 gradchecks and
// gradgradchecks; integer dtypes and typed errors worked by hand.
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "support/devices.h"
#include "support/gradcheck.h"
#include "support/oracle.h"
#include "support/oracle_checks.h"
#include "support/small_tensors.h"

using namespace wick;
using wick::test::OracleCase;
using TL = std::vector<Tensor>;

namespace {
using OpFn = Tensor (*)(const TL&, const OracleCase&);
using wick::test::ikw;

const std::map<std::string, OpFn>& ops() {
  static const std::map<std::string, OpFn> m = {
      {"kthvalue",
       [](const TL& x, const OracleCase& c) {
         return std::get<0>(kthvalue(x[0], ikw(c, "k"), ikw(c, "dim"), c.kw("keepdim", false)));
       }},
      {"median", [](const TL& x, const OracleCase& c) { return std::get<0>(median(x[0], ikw(c, "dim"))); }},
      {"median_all", [](const TL& x, const OracleCase&) { return median(x[0]); }},
      {"prod", [](const TL& x, const OracleCase& c) { return prod(x[0], ikw(c, "dim"), c.kw("keepdim", false)); }},
      {"prod_all", [](const TL& x, const OracleCase&) { return prod(x[0]); }},
      {"cumprod", [](const TL& x, const OracleCase& c) { return cumprod(x[0], ikw(c, "dim")); }},
      {"floor", [](const TL& x, const OracleCase&) { return floor(x[0]); }},
      {"ceil", [](const TL& x, const OracleCase&) { return ceil(x[0]); }},
      {"round", [](const TL& x, const OracleCase&) { return round(x[0]); }},
      {"trunc", [](const TL& x, const OracleCase&) { return trunc(x[0]); }},
      {"frac", [](const TL& x, const OracleCase&) { return frac(x[0]); }},
      {"remainder", [](const TL& x, const OracleCase&) { return remainder(x[0], x[1]); }},
      {"fmod", [](const TL& x, const OracleCase&) { return fmod(x[0], x[1]); }},
      {"atan2", [](const TL& x, const OracleCase&) { return atan2(x[0], x[1]); }},
      {"tan", [](const TL& x, const OracleCase&) { return tan(x[0]); }},
      {"asin", [](const TL& x, const OracleCase&) { return asin(x[0]); }},
      {"acos", [](const TL& x, const OracleCase&) { return acos(x[0]); }},
      {"atan", [](const TL& x, const OracleCase&) { return atan(x[0]); }},
      {"sinh", [](const TL& x, const OracleCase&) { return sinh(x[0]); }},
      {"cosh", [](const TL& x, const OracleCase&) { return cosh(x[0]); }},
      {"asinh", [](const TL& x, const OracleCase&) { return asinh(x[0]); }},
      {"acosh", [](const TL& x, const OracleCase&) { return acosh(x[0]); }},
      {"atanh", [](const TL& x, const OracleCase&) { return atanh(x[0]); }},
  };
  return m;
}

Tensor R(IntArrayRef shape) { return randn(shape, TensorOptions(kFloat64).requires_grad()); }
using wick::test::doubles;
using wick::test::f64;
using wick::test::i64;
using wick::test::longs;
}  // namespace

TEST_CASE("tensor ops: kthvalue median prod cumprod rounding and trig match PyTorch 1.13 on every device",
          "[tensor_ops_more]") {
  std::map<std::string, int> seen;
  for (const Device dev : wick::test::test_devices()) {
    for (const OracleCase& c : wick::test::oracle_cases()) {
      auto it = ops().find(c.op);
      if (it == ops().end()) continue;
      INFO(c.label() << " on " << dev);
      TL leaves = c.leaves(dev);
      Tensor out = it->second(leaves, c);
      REQUIRE(out.sizes() == c.out.sizes());
      wick::test::check_oracle_case(c, out, leaves, dev, 1e-10, 1e-10, 1e-13);
      ++seen[c.op];
    }
  }
  for (const auto& [name, fn] : ops()) {
    INFO(name);
    CHECK(seen[name] > 0);
  }
}

TEST_CASE("tensor ops: float64 gradchecks of prod cumprod kthvalue median and the elementwise set",
          "[tensor_ops_more]") {
  manual_seed(67);
  CHECK_GRADCHECKS([](const TL& x) { return TL{prod(x[0], 1), prod(x[0], 0, true), prod(x[0])}; }, {R({3, 4})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{cumprod(x[0], 1), cumprod(x[0], 0)}; }, {R({3, 5})});
  // prod and cumprod with one and with two zeros in a row (gradients exact at zeros).
  Tensor zs = f64({0.7, 0.0, -1.3, 2.1, 0.0, 1.7, -0.6, 0.0}, {2, 4}).requires_grad_();
  CHECK_GRADCHECKS([](const TL& x) { return TL{prod(x[0], 1), cumprod(x[0], 1)}; }, {zs});
  CHECK_GRADCHECKS(
      [](const TL& x) {
        return TL{std::get<0>(kthvalue(x[0], 2, 1)), std::get<0>(median(x[0], 0)), median(x[0])};
      },
      {R({4, 5})});
  CHECK_GRADCHECKS(
      [](const TL& x) {
        return TL{tan(x[0]), atan(x[0]), sinh(x[0]), cosh(x[0]), asinh(x[0])};
      },
      {R({2, 3})});
  Tensor u = (rand({2, 3}, kFloat64) * 1.6 - 0.8).requires_grad_();
  CHECK_GRADCHECKS([](const TL& x) { return TL{asin(x[0]), acos(x[0]), atanh(x[0])}; }, {u});
  Tensor big = (rand({2, 3}, kFloat64) + 1.5).requires_grad_();
  CHECK_GRADCHECKS([](const TL& x) { return TL{acosh(x[0])}; }, {big});
  CHECK_GRADCHECKS([](const TL& x) { return TL{atan2(x[0], x[1])}; }, {R({2, 3}), R({3})});
  // Away from the jumps (a / b not near an integer), remainder and fmod are smooth.
  Tensor a = f64({2.3, -2.3, 5.4, -0.4}, {4}).requires_grad_();
  Tensor b = f64({1.5, 1.5, -2.0, 0.7}, {4}).requires_grad_();
  CHECK_GRADCHECKS([](const TL& x) { return TL{remainder(x[0], x[1]), fmod(x[0], x[1]), frac(x[0])}; }, {a, b});
}

TEST_CASE("tensor ops: hand cases for integers zeros ties and NaN", "[tensor_ops_more]") {
  for (const Device dev : wick::test::test_devices()) {
    INFO(dev);
    // Rounding is the identity on integers, beyond 2^53 too; round is half to even.
    const int64_t big = (int64_t(1) << 60) + 1;
    Tensor ints = i64({big, -7, 3}, dev);
    for (Tensor r : {floor(ints), ceil(ints), round(ints), trunc(ints)}) {
      CHECK(r.dtype() == kInt64);
      CHECK(longs(r) == std::vector<int64_t>{big, -7, 3});
    }
    CHECK(doubles(round(f64({2.5, 3.5, -2.5, 0.5}, {4}, dev))) == std::vector<double>{2, 4, -2, 0});
    CHECK_THROWS_AS(frac(ints), TypeError);
    // Integer remainder takes the divisor's sign (Python), fmod the dividend's (C).
    Tensor n = i64({-7, 7, -7, 7, INT64_MIN}, dev), d = i64({2, -2, -2, 2, -1}, dev);
    CHECK(longs(remainder(n, d)) == std::vector<int64_t>{1, -1, -1, 1, 0});
    CHECK(longs(fmod(n, d)) == std::vector<int64_t>{-1, 1, -1, 1, 0});
    CHECK(longs(remainder(n, Scalar(3))) == std::vector<int64_t>{2, 1, 2, 1, 1});
    CHECK_THROWS_AS(remainder(n, i64({1, 2, 0, 1, 1}, dev)), ValueError);
    CHECK_THROWS_AS(fmod(n, Scalar(0)), ValueError);
    CHECK_THROWS_AS(remainder(ints.gt(0), ints.gt(0)), TypeError);
    try {
      fmod(n, Scalar(0));
    } catch (const Error& e) {
      CHECK_THAT(e.what(), Catch::Matchers::Contains("fmod") && Catch::Matchers::Contains("[5]"));
    }
    // Floating division by zero follows IEEE as PyTorch's: NaN.
    CHECK(std::isnan(doubles(remainder(f64({1.0}, {1}, dev), f64({0.0}, {1}, dev)))[0]));
    // Integer trig promotes to float32; atan2 of integers too.
    CHECK(tan(ints).dtype() == kFloat32);
    CHECK(atan2(i64({1}, dev), i64({1}, dev)).dtype() == kFloat32);
    // prod and cumprod of integers multiply in int64; an empty product is 1.
    CHECK(longs(prod(i64({3, -2, 5}, dev))) == std::vector<int64_t>{-30});
    CHECK(longs(cumprod(i64({3, -2, 5}, dev), 0)) == std::vector<int64_t>{3, -6, -30});
    CHECK(doubles(prod(zeros({0}, TensorOptions(kFloat64).device(dev)))) == std::vector<double>{1});
    // prod's gradient with one zero: only at the zero, the product of the others.
    Tensor z = f64({2.0, 0.0, 3.0}, {3}, dev).requires_grad_();
    prod(z).backward();
    CHECK(doubles(z.grad()) == std::vector<double>{0, 6, 0});
    // kthvalue and median: ties give the lower index; a NaN slice gives NaN.
    auto [kv, ki] = kthvalue(f64({3, 1, 1, 0}, {4}, dev), 2);
    CHECK(doubles(kv) == std::vector<double>{1});
    CHECK(longs(ki) == std::vector<int64_t>{1});
    const double nan = std::numeric_limits<double>::quiet_NaN();
    auto [mv, mi] = median(f64({1, nan, 0.5, 2, 3, 1, 1, 0}, {2, 4}, dev), 1);
    CHECK(std::isnan(doubles(mv)[0]));
    CHECK(longs(mi) == std::vector<int64_t>{1, 1});
    CHECK(doubles(median(f64({4, 1, 3, 2}, {4}, dev))) == std::vector<double>{2});
    CHECK_THROWS_AS(kthvalue(f64({1, 2}, {2}, dev), 3), IndexError);
    CHECK_THROWS_AS(kthvalue(f64({1, 2}, {2}, dev), 1, 1), IndexError);
    CHECK_THROWS_AS(median(zeros({0}, TensorOptions(kFloat64).device(dev))), IndexError);
    CHECK_THROWS_AS(prod(f64({1, 2}, {2}, dev), 2), IndexError);
  }
}
