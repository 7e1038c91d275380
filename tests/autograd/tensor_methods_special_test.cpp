// The Tensor methods of the special functions, elementwise, bitwise, statistics, indexed-write and
// product ops (Note [Tensor method lists] in wick/core/tensor.h): each method equals its free
// function, bit for bit, on every test device (the free functions are checked against PyTorch
// 1.13 in special_ops_test.cpp, stats_test.cpp and index_more_test.cpp); each in-place method
// writes the out-of-place result into the tensor it returns, bumps the version once, and writes
// nothing when it refuses.
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "support/devices.h"
#include "support/expect_error.h"
#include "support/inplace_checks.h"
#include "support/small_tensors.h"

using namespace wick;
using wick::test::check_inplace_write;
using wick::test::f64;
using wick::test::i64;

namespace {
using Pair = std::pair<Tensor, Tensor>;  // (method, free function)

void check_pairs(const std::vector<std::pair<const char*, Pair>>& pairs) {
  for (const auto& [name, p] : pairs) {
    INFO(name);
    REQUIRE(p.first.defined());
    CHECK(p.first.dtype() == p.second.dtype());
    CHECK(p.first.equal(p.second));
  }
}
}  // namespace

TEST_CASE("tensor methods: special, elementwise and bitwise methods equal their free functions on every device",
          "[tensor_methods_special]") {
  for (const Device dev : wick::test::test_devices()) {
    INFO(dev);
    manual_seed(81);
    const TensorOptions o = TensorOptions(kFloat64);
    const Tensor x = randn({3, 4}, o).to(dev) * 2;
    const Tensor pos = rand({3, 4}, o).to(dev) * 3 + 1.5;  // > (p - 1) / 2 for p <= 3
    const Tensor u = rand({3, 4}, o).to(dev) * 1.8 - 0.9;
    const Tensor y = randn({4}, o).to(dev);
    const Tensor n = i64({12, -18, 7, 0, 30, -4}, {2, 3}, dev);
    const Tensor m = i64({8, 6, -21, 5, 0, 9}, {2, 3}, dev);
    const Tensor e = i64({1, -2, 0, 3}, {4}, dev);
    check_pairs({
        {"digamma", {pos.digamma(), digamma(pos)}},
        {"lgamma", {x.lgamma(), lgamma(x)}},
        {"polygamma", {pos.polygamma(2), polygamma(2, pos)}},
        {"erfinv", {u.erfinv(), erfinv(u)}},
        {"erfc", {x.erfc(), erfc(x)}},
        {"i0", {x.i0(), i0(x)}},
        {"mvlgamma", {pos.mvlgamma(3), mvlgamma(pos, 3)}},
        {"sinc", {x.sinc(), sinc(x)}},
        {"exp2", {x.exp2(), exp2(x)}},
        {"logaddexp2", {x.logaddexp2(y), logaddexp2(x, y)}},
        {"copysign", {x.copysign(y), copysign(x, y)}},
        {"copysign scalar", {x.copysign(-1.0), copysign(x, -1.0)}},
        {"heaviside", {x.heaviside(y), heaviside(x, y)}},
        {"signbit", {x.signbit(), signbit(x)}},
        {"deg2rad", {x.deg2rad(), deg2rad(x)}},
        {"rad2deg", {x.rad2deg(), rad2deg(x)}},
        {"float_power", {pos.float_power(y), float_power(pos, y)}},
        {"float_power scalar", {n.float_power(2), float_power(n, 2)}},
        {"true_divide", {n.true_divide(m.add(100)), true_divide(n, m.add(100))}},
        {"true_divide scalar", {x.true_divide(3), true_divide(x, 3)}},
        {"floor_divide", {n.floor_divide(i64({5, -5, 3}, {3}, dev)), floor_divide(n, i64({5, -5, 3}, {3}, dev))}},
        {"floor_divide scalar", {x.floor_divide(0.7), floor_divide(x, 0.7)}},
        {"frexp mantissa", {std::get<0>(x.frexp()), std::get<0>(frexp(x))}},
        {"frexp exponent", {std::get<1>(x.frexp()), std::get<1>(frexp(x))}},
        {"ldexp", {y.ldexp(e), ldexp(y, e)}},
        {"bitwise_and", {n.bitwise_and(m), bitwise_and(n, m)}},
        {"bitwise_and scalar", {n.bitwise_and(6), bitwise_and(n, 6)}},
        {"bitwise_or", {n.bitwise_or(m), bitwise_or(n, m)}},
        {"bitwise_or scalar", {n.bitwise_or(5), bitwise_or(n, 5)}},
        {"bitwise_xor", {n.bitwise_xor(m), bitwise_xor(n, m)}},
        {"bitwise_xor scalar", {n.bitwise_xor(-3), bitwise_xor(n, -3)}},
        {"bitwise_not", {n.bitwise_not(), bitwise_not(n)}},
        {"logical_xor",
         {x.logical_xor(n.reshape({6}).narrow(0, 0, 4)), logical_xor(x, n.reshape({6}).narrow(0, 0, 4))}},
        {"logical_xor same dtype", {x.logical_xor(y), logical_xor(x, y)}},
        {"gcd", {n.gcd(m), gcd(n, m)}},
        {"lcm", {n.lcm(m), lcm(n, m)}},
    });
  }
}

TEST_CASE("tensor methods: statistics, indexed writes and products equal their free functions on every device",
          "[tensor_methods_special]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const Device dev : wick::test::test_devices()) {
    INFO(dev);
    manual_seed(82);
    const TensorOptions o = TensorOptions(kFloat64);
    const Tensor x = randn({3, 5}, o).to(dev);
    const Tensor q = f64({0.1, 0.5, 0.9}, {3}, dev);
    const Tensor fw = i64({1, 2, 1, 3, 1}, {5}, dev);
    const Tensor aw = rand({5}, o).to(dev) + 0.5;
    const Tensor b1 = randn({2, 3, 4}, o).to(dev), b2 = randn({2, 4, 5}, o).to(dev);
    const Tensor v3 = randn({3}, o).to(dev), v5 = randn({5}, o).to(dev);
    const Tensor a4 = randn({4, 4}, o).to(dev);
    const Tensor sq = a4.matmul(a4.t()) + eye(4, o).to(dev) * 4;  // positive definite: logdet is finite
    // NaN compares unequal to itself: the NaN-ignoring ops get NaN in, finite values out.
    const Tensor xn = x.masked_fill(f64({1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}, {3, 5}, dev).to(kBool), nan);
    check_pairs({
        {"nansum", {xn.nansum(), nansum(xn)}},
        {"nansum dim", {xn.nansum({1}, true), nansum(xn, {1}, true)}},
        {"nanmean", {xn.nanmean({0}), nanmean(xn, {0})}},
        {"nanmedian", {xn.nanmedian(), nanmedian(xn)}},
        {"nanmedian dim values", {std::get<0>(xn.nanmedian(1)), std::get<0>(nanmedian(xn, 1))}},
        {"nanmedian dim indices", {std::get<1>(xn.nanmedian(1, true)), std::get<1>(nanmedian(xn, 1, true))}},
        {"quantile", {x.quantile(0.3), quantile(x, 0.3)}},
        {"quantile tensor", {x.quantile(q, 1, true, "midpoint"), quantile(x, q, 1, true, "midpoint")}},
        {"nanquantile", {xn.nanquantile(0.7, 0, false, "lower"), nanquantile(xn, 0.7, 0, false, "lower")}},
        {"nanquantile tensor", {xn.nanquantile(q), nanquantile(xn, q)}},
        {"aminmax min", {std::get<0>(x.aminmax()), std::get<0>(aminmax(x))}},
        {"aminmax max dim", {std::get<1>(x.aminmax(1, true)), std::get<1>(aminmax(x, 1, true))}},
        {"count_nonzero", {x.round().count_nonzero({0}), count_nonzero(round(x), {0})}},
        {"cov", {x.cov(0, fw, aw), cov(x, 0, fw, aw)}},
        {"corrcoef", {x.corrcoef(), corrcoef(x)}},
        {"argwhere", {x.gt(0).argwhere(), argwhere(x.gt(0))}},
        {"diagflat", {v3.diagflat(-1), diagflat(v3, -1)}},
        {"addbmm", {x.addbmm(b1, b2, 0.5, 2), addbmm(x, b1, b2, 0.5, 2)}},
        {"addmv", {v3.addmv(x, v5, 2, -1), addmv(v3, x, v5, 2, -1)}},
        {"addr", {x.addr(v3, v5), addr(x, v3, v5)}},
        {"ger", {v3.ger(v5), ger(v3, v5)}},
        {"vdot", {v5.vdot(x[1]), vdot(v5, x[1])}},
        {"logdet", {sq.logdet(), logdet(sq)}},
    });
  }
}

TEST_CASE(
    "tensor methods: the in-place special and bitwise methods write the result, bump the version once and "
    "write nothing when they refuse",
    "[tensor_methods_special]") {
  for (const Device dev : wick::test::test_devices()) {
    INFO(dev);
    manual_seed(83);
    const Tensor pos = rand({2, 3}, TensorOptions(kFloat64)).to(dev) * 2 + 1.5;
    const Tensor y = randn({3}, TensorOptions(kFloat64)).to(dev);
    const Tensor n = i64({12, -18, 7, 9, 30, -4}, {2, 3}, dev);
    const Tensor m = i64({8, 6, -21}, {3}, dev);
    // The unary forms, each written by a captureless lambda.
    check_inplace_write(
        "digamma_", pos, [](Tensor& t) -> Tensor& { return t.digamma_(); }, digamma(pos));
    check_inplace_write(
        "lgamma_", pos, [](Tensor& t) -> Tensor& { return t.lgamma_(); }, lgamma(pos));
    check_inplace_write(
        "polygamma_", pos, [](Tensor& t) -> Tensor& { return t.polygamma_(1); }, polygamma(1, pos));
    check_inplace_write(
        "erfinv_", pos * 0.1, [](Tensor& t) -> Tensor& { return t.erfinv_(); }, erfinv(pos * 0.1));
    check_inplace_write(
        "erfc_", pos, [](Tensor& t) -> Tensor& { return t.erfc_(); }, erfc(pos));
    check_inplace_write(
        "i0_", pos, [](Tensor& t) -> Tensor& { return t.i0_(); }, i0(pos));
    check_inplace_write(
        "mvlgamma_", pos, [](Tensor& t) -> Tensor& { return t.mvlgamma_(2); }, mvlgamma(pos, 2));
    check_inplace_write(
        "sinc_", pos, [](Tensor& t) -> Tensor& { return t.sinc_(); }, sinc(pos));
    check_inplace_write(
        "exp2_", pos, [](Tensor& t) -> Tensor& { return t.exp2_(); }, exp2(pos));
    check_inplace_write(
        "deg2rad_", pos, [](Tensor& t) -> Tensor& { return t.deg2rad_(); }, deg2rad(pos));
    check_inplace_write(
        "rad2deg_", pos, [](Tensor& t) -> Tensor& { return t.rad2deg_(); }, rad2deg(pos));
    check_inplace_write(
        "float_power_ scalar", pos, [](Tensor& t) -> Tensor& { return t.float_power_(2.5); }, float_power(pos, 2.5));
    check_inplace_write(
        "bitwise_not_", n, [](Tensor& t) -> Tensor& { return t.bitwise_not_(); }, bitwise_not(n));
    // The binary forms, one operand each.
    auto expect2 = [](const char* name, const Tensor& self, const Tensor& other, Tensor& (Tensor::*fn)(const Tensor&),
                      const Tensor& want) {
      check_inplace_write(
          name, self, [&](Tensor& t) -> Tensor& { return (t.*fn)(other); }, want);
    };
    expect2("copysign_", pos, y, &Tensor::copysign_, copysign(pos, y));
    expect2("heaviside_", pos - 2.5, y, &Tensor::heaviside_, heaviside(pos - 2.5, y));
    expect2("float_power_", pos, y, &Tensor::float_power_, float_power(pos, y));
    expect2("true_divide_", pos, y, &Tensor::true_divide_, true_divide(pos, y));
    expect2("floor_divide_", n, m, &Tensor::floor_divide_, floor_divide(n, m));
    expect2("ldexp_", pos, i64({1, -1, 3}, {3}, dev), &Tensor::ldexp_, ldexp(pos, i64({1, -1, 3}, {3}, dev)));
    expect2("bitwise_and_", n, m, &Tensor::bitwise_and_, bitwise_and(n, m));
    expect2("bitwise_or_", n, m, &Tensor::bitwise_or_, bitwise_or(n, m));
    expect2("bitwise_xor_", n, m, &Tensor::bitwise_xor_, bitwise_xor(n, m));
    expect2("logical_xor_", pos, y, &Tensor::logical_xor_, logical_xor(pos, y).to(kFloat64));
    expect2("gcd_", n, m, &Tensor::gcd_, gcd(n, m));
    expect2("lcm_", n, m, &Tensor::lcm_, lcm(n, m));
    // Refused before anything is written: a float tensor cannot take a bitwise op, an int64 one
    // cannot hold digamma's result.
    Tensor f = pos.clone();
    Tensor k = n.clone();
    const uint32_t fv = f.version(), kv = k.version();
    wick::test::expect_error<TypeError>([&] { f.bitwise_and_(k); }, {"bitwise_and"});
    wick::test::expect_error<TypeError>([&] { k.digamma_(); }, {"digamma_", "int64"});
    CHECK(f.equal(pos));
    CHECK(k.equal(n));
    CHECK(f.version() == fv);
    CHECK(k.version() == kv);
  }
}
