// The special functions, remaining elementwise arithmetic and bitwise/integer ops of
// functions_special.h: PyTorch 1.13's values and gradients (generate.py's special32_cases) on every
// test device; mpmath's 30-digit values for the special functions (the "mp_*" cases); float64
// gradchecks and gradgradchecks; hand cases (closed forms, integer edge values, dtypes, in-place
// forms) and the typed errors.
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/expect_error.h"
#include "support/gradcheck.h"
#include "support/oracle.h"
#include "support/oracle_checks.h"
#include "support/small_tensors.h"

using namespace wick;
using wick::test::OracleCase;
using TL = std::vector<Tensor>;

namespace {
using OpFn = Tensor (*)(const TL&, const OracleCase&);
using wick::test::dkw;
using wick::test::doubles;
using wick::test::f64;
using wick::test::i64;
using wick::test::ikw;
using wick::test::longs;

const std::map<std::string, OpFn>& ops() {
  static const std::map<std::string, OpFn> m = {
      {"digamma", [](const TL& x, const OracleCase&) { return digamma(x[0]); }},
      {"lgamma", [](const TL& x, const OracleCase&) { return lgamma(x[0]); }},
      {"polygamma", [](const TL& x, const OracleCase& c) { return polygamma(ikw(c, "n"), x[0]); }},
      {"erfinv", [](const TL& x, const OracleCase&) { return erfinv(x[0]); }},
      {"erfc", [](const TL& x, const OracleCase&) { return erfc(x[0]); }},
      {"i0", [](const TL& x, const OracleCase&) { return i0(x[0]); }},
      {"special_i1", [](const TL& x, const OracleCase&) { return special_i1(x[0]); }},
      {"mvlgamma", [](const TL& x, const OracleCase& c) { return mvlgamma(x[0], ikw(c, "p")); }},
      {"sinc", [](const TL& x, const OracleCase&) { return sinc(x[0]); }},
      {"exp2", [](const TL& x, const OracleCase&) { return exp2(x[0]); }},
      {"logaddexp2", [](const TL& x, const OracleCase&) { return logaddexp2(x[0], x[1]); }},
      {"copysign", [](const TL& x, const OracleCase&) { return copysign(x[0], x[1]); }},
      {"copysign_scalar", [](const TL& x, const OracleCase& c) { return copysign(x[0], Scalar(dkw(c, "other"))); }},
      {"heaviside", [](const TL& x, const OracleCase&) { return heaviside(x[0], x[1]); }},
      {"signbit", [](const TL& x, const OracleCase&) { return signbit(x[0]); }},
      {"deg2rad", [](const TL& x, const OracleCase&) { return deg2rad(x[0]); }},
      {"rad2deg", [](const TL& x, const OracleCase&) { return rad2deg(x[0]); }},
      {"float_power", [](const TL& x, const OracleCase&) { return float_power(x[0], x[1]); }},
      {"float_power_scalar",
       [](const TL& x, const OracleCase& c) { return float_power(x[0], Scalar(dkw(c, "exponent"))); }},
      {"float_power_scalar_base",
       [](const TL& x, const OracleCase& c) { return float_power(Scalar(dkw(c, "base")), x[0]); }},
      {"true_divide", [](const TL& x, const OracleCase&) { return true_divide(x[0], x[1]); }},
      {"floor_divide", [](const TL& x, const OracleCase&) { return floor_divide(x[0], x[1]); }},
      {"floor_divide_scalar",
       [](const TL& x, const OracleCase& c) { return floor_divide(x[0], Scalar(dkw(c, "other"))); }},
      {"frexp", [](const TL& x, const OracleCase&) { return std::get<0>(frexp(x[0])); }},
      {"frexp_exponent", [](const TL& x, const OracleCase&) { return std::get<1>(frexp(x[0])); }},
      {"ldexp", [](const TL& x, const OracleCase&) { return ldexp(x[0], x[1]); }},
      {"bitwise_and", [](const TL& x, const OracleCase&) { return bitwise_and(x[0], x[1]); }},
      {"bitwise_or", [](const TL& x, const OracleCase&) { return bitwise_or(x[0], x[1]); }},
      {"bitwise_xor", [](const TL& x, const OracleCase&) { return bitwise_xor(x[0], x[1]); }},
      {"bitwise_not", [](const TL& x, const OracleCase&) { return bitwise_not(x[0]); }},
      {"logical_xor", [](const TL& x, const OracleCase&) { return logical_xor(x[0], x[1]); }},
      {"gcd", [](const TL& x, const OracleCase&) { return gcd(x[0], x[1]); }},
      {"lcm", [](const TL& x, const OracleCase&) { return lcm(x[0], x[1]); }},
      // mpmath's values (no gradients).
      {"mp_digamma", [](const TL& x, const OracleCase&) { return digamma(x[0]); }},
      {"mp_lgamma", [](const TL& x, const OracleCase&) { return lgamma(x[0]); }},
      {"mp_polygamma", [](const TL& x, const OracleCase& c) { return polygamma(ikw(c, "n"), x[0]); }},
      {"mp_erfinv", [](const TL& x, const OracleCase&) { return erfinv(x[0]); }},
      {"mp_i0", [](const TL& x, const OracleCase&) { return i0(x[0]); }},
      {"mp_i1", [](const TL& x, const OracleCase&) { return special_i1(x[0]); }},
  };
  return m;
}

std::set<std::string> names(std::initializer_list<const char*> list) { return {list.begin(), list.end()}; }
Tensor run(const OracleCase& c, const TL& x, Device) { return ops().at(c.op)(x, c); }

Tensor R(IntArrayRef shape, double shift = 0) {
  Tensor t = randn(shape, kFloat64);
  if (shift != 0) t = add(abs(t), scalar_tensor(shift, kFloat64));
  return t.detach().requires_grad_(true);
}
}  // namespace

TEST_CASE("special ops: PyTorch 1.13 values and gradients on every device", "[special_ops]") {
  using wick::test::check_oracle_ops;
  using wick::test::OracleOpChecks;
  using wick::test::OracleOpCounts;
  std::map<std::string, int> seen;
  const auto count = [&](const OracleOpCounts& n) {
    for (const auto& [op, k] : n.by_op) seen[op] += k;
  };
  // PyTorch's trigamma (polygamma(1, x), digamma's gradient) is accurate to about 5e-10 only; the
  // mp_* cases below hold wick's to 1e-14.
  count(check_oracle_ops(names({"digamma", "polygamma"}), run, OracleOpChecks{5e-9, 5e-9, 1e-13}));
  // erfinv: PyTorch's Newton steps on erf lose digits as |y| nears 1 (mp_erfinv holds wick's).
  count(check_oracle_ops(names({"erfinv"}), run, OracleOpChecks{1e-10, 1e-9, 1e-13}));
  count(check_oracle_ops(names({"lgamma",
                                "erfc",
                                "i0",
                                "special_i1",
                                "mvlgamma",
                                "sinc",
                                "exp2",
                                "logaddexp2",
                                "copysign",
                                "copysign_scalar",
                                "heaviside",
                                "signbit",
                                "deg2rad",
                                "rad2deg",
                                "float_power",
                                "float_power_scalar",
                                "float_power_scalar_base",
                                "true_divide",
                                "floor_divide",
                                "floor_divide_scalar",
                                "frexp",
                                "frexp_exponent",
                                "ldexp",
                                "bitwise_and",
                                "bitwise_or",
                                "bitwise_xor",
                                "bitwise_not",
                                "logical_xor",
                                "gcd",
                                "lcm"}),
                         run, OracleOpChecks{1e-12, 1e-12, 1e-14}));
  count(check_oracle_ops(names({"mp_digamma", "mp_lgamma", "mp_polygamma", "mp_erfinv", "mp_i0", "mp_i1"}), run,
                         OracleOpChecks{2e-14, 0, 1e-15}));
  for (const auto& [name, fn] : ops()) {
    INFO(name);
    CHECK(seen[name] > 0);
  }
}

TEST_CASE("special ops: float64 gradchecks and gradgradchecks", "[special_ops]") {
  manual_seed(3);
  const auto one = [](Tensor (*f)(const Tensor&)) { return [f](const TL& x) { return TL{f(x[0])}; }; };
  CHECK_GRADCHECKS(one(digamma), {R({3, 4}, 0.3)});
  CHECK_GRADCHECKS(one(lgamma), {R({3, 4}, 0.3)});
  CHECK_GRADCHECKS(one(erfc), {R({3, 4})});
  CHECK_GRADCHECKS(one(i0), {R({3, 4})});
  CHECK_GRADCHECKS(one(special_i1), {R({3, 4})});
  CHECK_GRADCHECKS(one(sinc), {R({3, 4})});
  CHECK_GRADCHECKS(one(exp2), {R({3, 4})});
  CHECK_GRADCHECKS(one(deg2rad), {R({3, 4})});
  CHECK_GRADCHECKS(one(rad2deg), {R({3, 4})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{erfinv(mul(tanh(x[0]), scalar_tensor(0.9, kFloat64)))}; }, {R({3, 4})});
  for (int64_t n : {1, 2, 4}) CHECK_GRADCHECKS([n](const TL& x) { return TL{polygamma(n, x[0])}; }, {R({3, 4}, 0.5)});
  CHECK_GRADCHECKS([](const TL& x) { return TL{mvlgamma(x[0], 4)}; }, {R({3, 4}, 1.6)});
  CHECK_GRADCHECKS([](const TL& x) { return TL{logaddexp2(x[0], x[1])}; }, {R({3, 4}), R({4})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{copysign(x[0], x[1])}; }, {R({3, 4}), R({3, 1})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{float_power(x[0], x[1])}; }, {R({3, 4}, 0.5), R({4})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{float_power(2.5, x[0])}; }, {R({3, 4})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{ldexp(x[0], x[1])}; }, {R({3, 4}), R({4})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{std::get<0>(frexp(mul(x[0], scalar_tensor(50.0, kFloat64))))}; },
                   {R({3, 4})});
  CHECK_GRADCHECKS(
      [](const TL& x) {
        Tensor c = x[0].clone();
        return TL{digamma_(c)};
      },
      {R({3, 4}, 0.3)});
}

TEST_CASE("special ops: closed forms and edge values", "[special_ops]") {
  const double pi = 3.14159265358979323846, euler = 0.57721566490153286061;
  CHECK_ALLCLOSE(digamma(f64({1.0, 0.5, 2.0})), f64({-euler, -euler - 2 * std::log(2.0), 1 - euler}), 1e-15, 0.0);
  CHECK_ALLCLOSE(polygamma(1, f64({1.0, 0.5})), f64({pi * pi / 6, pi * pi / 2}), 1e-15, 0.0);
  CHECK_ALLCLOSE(polygamma(2, f64({1.0})), f64({-2 * 1.2020569031595942854}), 1e-15, 0.0);  // -2 zeta(3)
  CHECK_ALLCLOSE(lgamma(f64({0.5, 3.0})), f64({0.5 * std::log(pi), std::log(2.0)}), 1e-15, 0.0);
  CHECK_ALLCLOSE(erfinv(f64({std::erf(0.3), std::erf(-2.0)})), f64({0.3, -2.0}), 1e-15, 0.0);
  CHECK_ALLCLOSE(sinc(f64({0.0, 0.5, 1.5})), f64({1.0, 2 / pi, -2 / (3 * pi)}), 1e-15, 1e-16);
  CHECK_ALLCLOSE(i0(f64({0.0})), f64({1.0}), 0.0, 0.0);
  CHECK_ALLCLOSE(mvlgamma(f64({2.5}), 2), f64({std::lgamma(2.5) + std::lgamma(2.0) + 0.5 * std::log(pi)}), 1e-15, 0.0);
  // p = 5 by hand, and a huge p: an empty input does no work per p (it looped p times), a 0-d one keeps its shape.
  const double by_hand =
      std::lgamma(4.0) + std::lgamma(3.5) + std::lgamma(3.0) + std::lgamma(2.5) + std::lgamma(2.0) + 5.0 * std::log(pi);
  CHECK_ALLCLOSE(mvlgamma(f64({4.0}), 5), f64({by_hand}), 1e-15, 0.0);
  CHECK(mvlgamma(f64({}).reshape({0, 3}), int64_t{1} << 40).sizes() == IntArrayRef{0, 3});
  CHECK(mvlgamma(scalar_tensor(4.0, TensorOptions().dtype(kFloat64)), 5).dim() == 0);
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> d = doubles(digamma(f64({0.0, -0.0, -3.0})));
  CHECK(d[0] == -inf);
  CHECK(d[1] == inf);
  CHECK(std::isnan(d[2]));
  CHECK(doubles(polygamma(1, f64({-2.0})))[0] == inf);  // a pole (PyTorch: a large finite number)
  const std::vector<double> e = doubles(erfinv(f64({1.0, -1.0, 1.0000001, -0.0})));
  CHECK(e[0] == inf);
  CHECK(e[1] == -inf);
  CHECK(std::isnan(e[2]));
  CHECK(std::signbit(e[3]));
  CHECK(longs(signbit(f64({-0.0, 0.0, -inf, -std::nan("")}))) == std::vector<int64_t>{1, 0, 1, 1});
  // floor rounding (1.13), zeros and infinities as Python's //.
  CHECK(doubles(floor_divide(f64({-7.0, 7.0, -5.0}), f64({2.0, -2.0, inf}))) == std::vector<double>{-4, -4, -1});
  CHECK(longs(floor_divide(i64({-7, 7, 7, -7}), i64({2, -2, 2, -2}))) == std::vector<int64_t>{-4, -4, 3, 3});
  auto [m, ex] = frexp(f64({8.0, -0.75, 0.0}));
  CHECK(doubles(m) == std::vector<double>{0.5, -0.75, 0.0});
  CHECK(ex.dtype() == kInt64);
  CHECK(longs(ex) == std::vector<int64_t>{4, 0, 0});
  CHECK(doubles(ldexp(f64({1.5}), i64({3}))) == std::vector<double>{12.0});
}

TEST_CASE("special ops: polygamma far below zero takes bounded work and keeps its closed forms", "[special_ops]") {
  // Near x = -N + 1/2 the poles on both sides dominate: psi'''(x) -> 3! * 2 * zeta(4, 1/2) = 2 pi^4 and
  // psi''(x) = -2 zeta(3, N + 1/2) (the two halves cancel), about -1/N^2. Summed term by term these
  // would take N steps each (seconds from N = 1e8; forever beyond 2^53).
  const double pi = 3.14159265358979323846, inf = std::numeric_limits<double>::infinity();
  const Tensor x = f64({-999999.5, -1e8 + 0.5, -1e15 + 0.5});
  CHECK_ALLCLOSE(polygamma(3, x), f64({2 * std::pow(pi, 4), 2 * std::pow(pi, 4), 2 * std::pow(pi, 4)}), 1e-12, 0.0);
  const std::vector<double> p2 = doubles(polygamma(2, x));
  for (size_t i = 0; i < p2.size(); ++i) {
    const double n = -doubles(x)[i] + 0.5;
    CHECK(p2[i] == Approx(-1 / (n * n)).epsilon(1e-9));  // PyTorch: 0.15% off at N = 1e6
  }
  // Poles (every double beyond 2^53 is an integer): PyTorch's signs.
  CHECK(doubles(polygamma(2, f64({-1e18, -1e300, -inf}))) == std::vector<double>{-inf, -inf, -inf});
  CHECK(doubles(polygamma(3, f64({-1e18})))[0] == inf);
  // Just below the split at -64, the two ways agree.
  CHECK_ALLCLOSE(polygamma(4, f64({-64.25})), polygamma(4, f64({-63.25})) + 24 * std::pow(64.25, -5), 1e-12, 0.0);
}

TEST_CASE("special ops: integer and bitwise ops", "[special_ops]") {
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  CHECK(longs(gcd(i64({0, 0, -12, 12, -12}), i64({0, 5, 18, -18, -18}))) == std::vector<int64_t>{0, 5, 6, 6, 6});
  CHECK(longs(lcm(i64({0, -4, 4, 3}), i64({0, 6, -6, 0}))) == std::vector<int64_t>{0, 12, 12, 0});
  CHECK(longs(gcd(i64({kMin}), i64({0})))[0] == kMin);            // |INT64_MIN| wraps, as PyTorch's
  CHECK(longs(floor_divide(i64({kMin}), i64({-1})))[0] == kMin);  // wraps (PyTorch traps)
  CHECK(longs(bitwise_and(i64({12, -3}), i64({10, 7}))) == std::vector<int64_t>{8, 5});
  CHECK(longs(bitwise_or(i64({12, -3}), 1)) == std::vector<int64_t>{13, -3});
  CHECK(longs(bitwise_xor(i64({12, -3}), i64({10, 7}))) == std::vector<int64_t>{6, -6});
  CHECK(longs(bitwise_not(i64({0, -1, 5}))) == std::vector<int64_t>{-1, 0, -6});
  const Tensor t = tensor({1.0, 0.0, 1.0}).to(kBool), f = tensor({1.0, 1.0, 0.0}).to(kBool);
  CHECK(bitwise_and(t, f).dtype() == kBool);
  CHECK(longs(bitwise_xor(t, f)) == std::vector<int64_t>{0, 1, 1});
  CHECK(longs(bitwise_not(t)) == std::vector<int64_t>{0, 1, 0});
  CHECK(bitwise_and(t, i64({3, 3, 3})).dtype() == kInt64);
  CHECK(longs(logical_xor(f64({1.0, 0.0, std::nan("")}), i64({1, 0, 0}))) == std::vector<int64_t>{0, 0, 1});
  // In place, into integer tensors.
  Tensor a = i64({4, 6, -9});
  gcd_(a, i64({6, 4, 6}));
  CHECK(longs(a) == std::vector<int64_t>{2, 2, 3});
  logical_xor_(a, i64({0, 2, 0}));
  CHECK(longs(a) == std::vector<int64_t>{1, 0, 1});
  CHECK(a.dtype() == kInt64);
}

TEST_CASE("special ops: dtypes, float32 and in-place forms", "[special_ops]") {
  const Tensor ints = i64({1, 2, 3});
  for (const Tensor& out : {digamma(ints), lgamma(ints), i0(ints), erfc(ints), exp2(ints), sinc(ints), deg2rad(ints),
                            copysign(ints, i64({-1, 1, -1})), ldexp(ints, ints), mvlgamma(ints, 1)})
    CHECK(out.dtype() == kFloat32);
  CHECK(float_power(ints, 2).dtype() == kFloat64);
  CHECK(floor_divide(ints, 2).dtype() == kInt64);
  CHECK(floor_divide(ints, 2.5).dtype() == kFloat32);
  CHECK(copysign(f64({3.0}).to(kFloat32), f64({-1.0})).dtype() == kFloat64);
  manual_seed(5);
  const Tensor x = add(abs(randn({40}, kFloat64)), scalar_tensor(0.2, kFloat64)).mul(4.0);
  const Tensor x32 = x.to(kFloat32);
  const std::vector<Tensor (*)(const Tensor&)> fns = {digamma, lgamma, i0, special_i1, erfc, sinc, exp2};
  for (Tensor (*f)(const Tensor&) : fns) {
    CHECK(f(x32).dtype() == kFloat32);
    CHECK_ALLCLOSE(f(x32).to(kFloat64), f(x32.to(kFloat64)), 1e-6, 1e-7);
  }
  Tensor y = x.clone();
  lgamma_(y);
  CHECK_ALLCLOSE(y, lgamma(x), 0.0, 0.0);
  Tensor w = f64({2.0, 3.0});
  float_power_(w, 0.5);
  CHECK_ALLCLOSE(w, f64({std::sqrt(2.0), std::sqrt(3.0)}), 1e-15, 0.0);
  // A recorded in-place op on a non-leaf: the gradient flows through it.
  Tensor leaf = R({3}, 0.5);
  Tensor z = leaf.mul(1.0);
  i0_(z);
  sum(z).backward();
  CHECK_ALLCLOSE(leaf.grad(), special_i1(leaf.detach()), 1e-15, 0.0);
}

TEST_CASE("special ops: typed errors, raised before anything is written", "[special_ops]") {
  using wick::test::expect_error;
  const Tensor fl = f64({1.0, 2.0}), in = i64({1, 2}), bo = tensor({1.0, 0.0}).to(kBool);
  expect_error<TypeError>([&] { bitwise_and(fl, fl); }, {"bitwise_and", "float64"});
  expect_error<TypeError>([&] { bitwise_or(in, 1.5); }, {"bitwise_or", "a scalar"});
  expect_error<TypeError>([&] { bitwise_not(fl); }, {"bitwise_not", "float64"});
  expect_error<TypeError>([&] { gcd(fl, in); }, {"gcd", "int64"});
  expect_error<TypeError>([&] { lcm(bo, bo); }, {"lcm", "bool"});
  expect_error<TypeError>([&] { logaddexp2(in, in); }, {"logaddexp2", "floating-point"});
  expect_error<TypeError>([&] { frexp(in); }, {"frexp", "int64"});
  expect_error<TypeError>([&] { heaviside(fl, fl.to(kFloat32)); }, {"heaviside", "dtypes"});
  expect_error<TypeError>([&] { floor_divide(bo, bo); }, {"floor_divide", "bool"});
  expect_error<ValueError>([&] { floor_divide(in, i64({1, 0})); }, {"floor_divide", "division by zero"});
  expect_error<ValueError>([&] { polygamma(-1, fl); }, {"polygamma", "-1"});
  expect_error<ValueError>([&] { mvlgamma(fl, 0); }, {"mvlgamma", "p"});
  expect_error<ValueError>([&] { mvlgamma(fl, 3); }, {"mvlgamma", "(p-1)/2 = 1"});
  expect_error<ValueError>([&] { mvlgamma(f64({1e19, 2e19}), int64_t{1} << 62); }, {"mvlgamma", "too large", "[2, "});
  Tensor t = i64({1, 2});
  expect_error<TypeError>([&] { digamma_(t); }, {"digamma_", "int64"});
  CHECK(longs(t) == std::vector<int64_t>{1, 2});
  Tensor f32 = f64({2.0}).to(kFloat32);
  expect_error<TypeError>([&] { float_power_(f32, 2); }, {"float_power_", "float32", "float64"});
  Tensor leaf = R({2});
  expect_error<StateError>([&] { erfc_(leaf); }, {"erfc_", "leaf"});
  // PyTorch has no derivative for heaviside and floor_divide: backward raises.
  Tensor x = R({2});
  expect_error<NotImplementedError>(
      [&] {
        sum(heaviside(x, f64({0.5, 0.5}))).backward();
      },
      {"heaviside", "derivative"});
  expect_error<NotImplementedError>(
      [&] {
        sum(floor_divide(x, f64({2.0, 3.0}))).backward();
      },
      {"floor_divide", "derivative"});
}
