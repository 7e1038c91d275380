// nansum, nanmean, nanmedian, quantile, nanquantile, std_mean, var_mean, aminmax, count_nonzero,
// cov, corrcoef and cumulative_trapezoid: PyTorch 1.13's values and gradients (generate.py's
// stats32_cases, selected by op name) on every test device; float64 gradchecks and gradgradchecks;
// hand cases (NaN, ties, empty inputs, dtypes) and typed errors.
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "support/devices.h"
#include "support/expect_error.h"
#include "support/gradcheck.h"
#include "support/oracle.h"
#include "support/oracle_checks.h"
#include "support/small_tensors.h"

using namespace wick;
using wick::test::expect_error;
using wick::test::OracleCase;
using TL = std::vector<Tensor>;

namespace {
using OpFn = Tensor (*)(const TL&, const OracleCase&);
std::vector<int64_t> dims_of(const OracleCase& c) { return c.kw("dim", std::vector<int64_t>{}); }
bool keep(const OracleCase& c) { return c.kw("keepdim", false); }
std::optional<int64_t> odim(const OracleCase& c) {
  return c.kwargs.contains("dim") ? std::optional<int64_t>(c.kwargs.at("dim").get<int64_t>()) : std::nullopt;
}
std::optional<int64_t> corr(const OracleCase& c) {
  if (c.kwargs.contains("correction")) return c.kwargs.at("correction").get<int64_t>();
  return c.kw("unbiased", true) ? 1 : 0;
}
// quantile or nanquantile with a double q (kwarg "q") or the case's second input.
Tensor quantiles(const TL& x, const OracleCase& c, bool ignore_nan) {
  const std::string mode = c.kw("interpolation", std::string("linear"));
  if (c.kwargs.contains("q")) {
    const double q = c.kwargs.at("q").get<double>();
    return ignore_nan ? nanquantile(x[0], q, odim(c), keep(c), mode) : quantile(x[0], q, odim(c), keep(c), mode);
  }
  return ignore_nan ? nanquantile(x[0], x[1], odim(c), keep(c), mode) : quantile(x[0], x[1], odim(c), keep(c), mode);
}
Tensor stacked(const std::tuple<Tensor, Tensor>& t) { return stack({std::get<0>(t), std::get<1>(t)}); }

const std::map<std::string, OpFn>& ops() {
  static const std::map<std::string, OpFn> m = {
      {"nansum", [](const TL& x, const OracleCase& c) { return nansum(x[0], dims_of(c), keep(c)); }},
      {"nanmean", [](const TL& x, const OracleCase& c) { return nanmean(x[0], dims_of(c), keep(c)); }},
      {"nanmedian_all", [](const TL& x, const OracleCase&) { return nanmedian(x[0]); }},
      {"nanmedian", [](const TL& x, const OracleCase& c) { return std::get<0>(nanmedian(x[0], *odim(c), keep(c))); }},
      {"nanmedian_indices",
       [](const TL& x, const OracleCase& c) { return std::get<1>(nanmedian(x[0], *odim(c), keep(c))); }},
      {"quantile", [](const TL& x, const OracleCase& c) { return quantiles(x, c, false); }},
      {"nanquantile", [](const TL& x, const OracleCase& c) { return quantiles(x, c, true); }},
      {"std_mean",
       [](const TL& x, const OracleCase& c) { return stacked(std_mean(x[0], dims_of(c), corr(c), keep(c))); }},
      {"var_mean",
       [](const TL& x, const OracleCase& c) { return stacked(var_mean(x[0], dims_of(c), corr(c), keep(c))); }},
      {"aminmax", [](const TL& x, const OracleCase& c) { return stacked(aminmax(x[0], odim(c), keep(c))); }},
      {"count_nonzero", [](const TL& x, const OracleCase& c) { return count_nonzero(x[0], dims_of(c)); }},
      {"cov", [](const TL& x, const OracleCase& c) { return cov(x[0], c.kw("correction", int64_t{1})); }},
      {"cov_weights", [](const TL& x, const OracleCase& c) { return cov(x[0], *corr(c), x[1], x[2]); }},
      {"cov_fweights", [](const TL& x, const OracleCase& c) { return cov(x[0], *corr(c), x[1]); }},
      {"cov_aweights", [](const TL& x, const OracleCase& c) { return cov(x[0], *corr(c), {}, x[1]); }},
      {"corrcoef", [](const TL& x, const OracleCase&) { return corrcoef(x[0]); }},
      {"cumulative_trapezoid",
       [](const TL& x, const OracleCase& c) {
         return cumulative_trapezoid(x[0], c.kwargs.at("dx").get<double>(), odim(c).value());
       }},
      {"cumulative_trapezoid_x",
       [](const TL& x, const OracleCase& c) { return cumulative_trapezoid(x[0], x[1], odim(c).value()); }},
  };
  return m;
}

Tensor R(IntArrayRef shape) { return randn(shape, TensorOptions(kFloat64).requires_grad()); }
using wick::test::doubles;
using wick::test::f64;
using wick::test::i64;
using wick::test::longs;
const double kNan = std::numeric_limits<double>::quiet_NaN();
}  // namespace

TEST_CASE("stats: PyTorch 1.13 values and gradients on every device", "[stats]") {
  std::set<std::string> names;
  for (const auto& [name, fn] : ops()) names.insert(name);
  wick::test::OracleOpChecks k;
  k.out_rtol = 1e-10;
  k.grad_rtol = 1e-10;
  k.atol = 1e-13;
  k.dtype = wick::test::OracleDtype::kRequire;
  const auto seen = wick::test::check_oracle_ops(
      names, [](const OracleCase& c, const TL& x, Device) { return ops().at(c.op)(x, c); }, k);
  for (const std::string& name : names) {
    INFO(name);
    CHECK(seen.by_op.count(name) == 1);
  }
  CHECK(seen.total >= 50);
}

TEST_CASE("stats: float64 gradchecks and double backward", "[stats]") {
  manual_seed(32);
  const Tensor holes = f64({1.0, kNan, 0.5, 2.0, -1.0, 4.0, 0.3, 2.0, -0.7, kNan, 0.9, -2.0}, {2, 6});
  const Tensor keep_mask = logical_not(isnan(holes));
  // NaN-free leaves, with NaNs put back where holes has them (the gradient there is 0).
  CHECK_GRADCHECKS(
      [&](const TL& x) {
        const Tensor a = where(keep_mask, x[0], Scalar(kNan));
        return TL{nansum(a, {1}), nanmean(a, {0}, true), nanmedian(a), std::get<0>(nanmedian(a, 1))};
      },
      {R({2, 6})});
  CHECK_GRADCHECKS(
      [](const TL& x) {
        return TL{quantile(x[0], x[1], 1), quantile(x[0], 0.3, std::nullopt, true, "midpoint"),
                  nanquantile(x[0], x[1], 0, false, "lower"), quantile(x[0], x[1], 1, false, "nearest")};
      },
      {R({3, 5}), (rand({2}, kFloat64) * 0.8 + 0.1).requires_grad_()});
  CHECK_GRADCHECKS(
      [](const TL& x) {
        Tensor s, m, v, m2;
        std::tie(s, m) = std_mean(x[0], {1}, false, true);
        std::tie(v, m2) = var_mean(x[0], {0, 1}, std::optional<int64_t>(2), false);
        return TL{s, m, v, m2};
      },
      {R({3, 4})});
  CHECK_GRADCHECKS(
      [](const TL& x) {
        return TL{cov(x[0], 1, i64({1, 2, 0, 3}, {4}), x[1]), cov(x[0], 0), corrcoef(x[0]), cov(x[0].select(0, 0))};
      },
      {R({3, 4}), (rand({4}, kFloat64) + 0.5).requires_grad_()});
  CHECK_GRADCHECKS(
      [](const TL& x) {
        return TL{cumulative_trapezoid(x[0], x[1], 1), cumulative_trapezoid(x[0], 0.5, 0)};
      },
      {R({2, 4}), R({4})});
}

TEST_CASE("stats: hand cases for NaN ties empty inputs and dtypes", "[stats]") {
  for (const Device dev : wick::test::test_devices()) {
    INFO(dev);
    const Tensor v = f64({1, 2, 3, 4}, {4}, dev);
    // The quantiles of [1, 2, 3, 4] at 0.5 (rank 1.5) in every interpolation; nearest rounds the
    // rank half to even (1.5 -> 2, the value 3; 2.5 -> 2 for six values).
    CHECK(doubles(quantile(v, 0.5)) == std::vector<double>{2.5});
    CHECK(doubles(quantile(v, 0.5, std::nullopt, false, "lower")) == std::vector<double>{2});
    CHECK(doubles(quantile(v, 0.5, std::nullopt, false, "higher")) == std::vector<double>{3});
    CHECK(doubles(quantile(v, 0.5, std::nullopt, false, "midpoint")) == std::vector<double>{2.5});
    CHECK(doubles(quantile(v, 0.5, std::nullopt, false, "nearest")) == std::vector<double>{3});
    CHECK(doubles(quantile(f64({1, 2, 3, 4, 5, 6}, {6}, dev), 0.5, 0, false, "nearest")) == std::vector<double>{3});
    CHECK(doubles(quantile(v, f64({0, 0.75, 1}, {3}, dev))) == std::vector<double>{1, 3.25, 4});
    // A 1-d q comes first; keepdim without dim keeps every dim as 1; a 0-dim input stays 0-dim.
    CHECK(quantile(randn({2, 3, 4}, kFloat64).to(dev), f64({0.2, 0.5}, {2}, dev), 1, true).sizes() ==
          IntArrayRef({2, 2, 1, 4}));
    CHECK(quantile(randn({2, 3}, kFloat64).to(dev), 0.3, std::nullopt, true).sizes() == IntArrayRef({1, 1}));
    CHECK(quantile(f64({3}, {}, dev), 0.5, 0, true).dim() == 0);
    CHECK(quantile(v, f64({}, {0}, dev)).sizes() == IntArrayRef({0}));
    // NaN: quantile propagates it, nanquantile skips it (NaN for a slice of NaNs).
    const Tensor h = f64({1, kNan, 3, kNan, kNan, kNan}, {2, 3}, dev);
    const std::vector<double> qh = doubles(quantile(h, 0.5, 1)), nh = doubles(nanquantile(h, 0.5, 1));
    CHECK((std::isnan(qh[0]) && std::isnan(qh[1]) && nh[0] == 2 && std::isnan(nh[1])));
    // nansum, nanmean: NaN read as 0 / left out; all-NaN and empty slices give 0 and NaN.
    CHECK(doubles(nansum(h, {1})) == std::vector<double>{4, 0});
    const std::vector<double> nm = doubles(nanmean(h, {1}));
    CHECK((nm[0] == 2 && std::isnan(nm[1])));
    CHECK(std::isnan(doubles(nanmean(zeros({0}, TensorOptions(kFloat64).device(dev))))[0]));
    CHECK(nansum(i64({1, 2, 3}, {3}, dev)).dtype() == kInt64);
    CHECK(nansum(i64({1, 2, 3}, {3}, dev), {}, false, kFloat64).dtype() == kFloat64);
    CHECK(nanmean(h.to(kFloat32), {}, false, kFloat64).dtype() == kFloat64);
    // nanmedian: the lower median of the non-NaN values; the index of the first NaN of a NaN slice.
    Tensor mv, mi;
    std::tie(mv, mi) =
        nanmedian(f64({kNan, 2, kNan, 1, 2, 7, 2, kNan, kNan, kNan, kNan, kNan, kNan, kNan}, {2, 7}, dev), 1);
    CHECK(doubles(mv)[0] == 2);
    CHECK(std::isnan(doubles(mv)[1]));
    CHECK(longs(mi) == std::vector<int64_t>{4, 0});
    CHECK(std::isnan(doubles(nanmedian(zeros({0}, TensorOptions(kFloat64).device(dev))))[0]));
    CHECK(longs(nanmedian(i64({3, 1, 2, 5}, {4}, dev))) == std::vector<int64_t>{2});
    // nanmedian() shares the gradient among ties: three 2s get a third each.
    const Tensor t = f64({2, 1, 2, kNan, 2, 5}, {6}, dev).requires_grad_();
    nanmedian(t).backward();
    CHECK(doubles(t.grad()) == std::vector<double>{1.0 / 3, 0, 1.0 / 3, 0, 1.0 / 3, 0});
    // aminmax: NaN propagates; integers keep their dtype; no derivative (as PyTorch 1.13).
    Tensor lo, hi;
    std::tie(lo, hi) = aminmax(f64({1, kNan, 3, -2, 0.5, 4}, {2, 3}, dev), 1);
    CHECK((std::isnan(doubles(lo)[0]) && doubles(lo)[1] == -2 && doubles(hi)[1] == 4));
    std::tie(lo, hi) = aminmax(i64({4, -1, 9}, {3}, dev));
    CHECK((lo.dtype() == kInt64 && longs(lo)[0] == -1 && longs(hi)[0] == 9));
    CHECK(std::get<0>(aminmax(f64({1, 2}, {1, 2}, dev), std::nullopt, true)).sizes() == IntArrayRef({1, 1}));
    const Tensor leaf = f64({1, 2}, {2}, dev).requires_grad_();
    expect_error<NotImplementedError>([&] { std::get<1>(aminmax(leaf)).backward(); }, {"aminmax", "amin and amax"});
    // count_nonzero: NaN counts; int64 results.
    CHECK(longs(count_nonzero(f64({0, kNan, 1, 0}, {2, 2}, dev), {0})) == std::vector<int64_t>{1, 1});
    CHECK(longs(count_nonzero(i64({0, 3, 0}, {3}, dev))) == std::vector<int64_t>{1});
    // std_mean: gradient 0 for a constant slice (PyTorch's std_backward).
    const Tensor flat = f64({1.5, 1.5, 1.5}, {3}, dev).requires_grad_();
    std::get<0>(std_mean(flat)).backward();
    CHECK(doubles(flat.grad()) == std::vector<double>{0, 0, 0});
    // cov and corrcoef by hand: [[0, 1, 2], [2, 1, 0]] is perfectly anti-correlated; integers give
    // float32; too few degrees of freedom divide by 0; a zero-variance variable gives NaN.
    const Tensor ints = i64({0, 1, 2, 2, 1, 0}, {2, 3}, dev);
    CHECK(cov(ints).dtype() == kFloat32);
    CHECK(doubles(cov(ints)) == std::vector<double>{1, -1, -1, 1});
    CHECK(doubles(corrcoef(ints)) == std::vector<double>{1, -1, -1, 1});
    CHECK(doubles(cov(f64({1, 2, 4}, {3}, dev), 5)) == std::vector<double>{std::numeric_limits<double>::infinity()});
    CHECK(doubles(cov(f64({1, 2, 4}, {1, 3}, dev), 1, i64({1, 2, 0}, {3}, dev), f64({0.5, 1, 2}, {3}, dev)))[0] ==
          Approx(0.25).epsilon(1e-15));
    const std::vector<double> cc = doubles(corrcoef(f64({1, 2, 4, 1, 1, 1}, {2, 3}, dev)));
    CHECK(cc[0] == Approx(1).epsilon(1e-15));
    CHECK((std::isnan(cc[1]) && std::isnan(cc[3])));
    CHECK(std::isnan(doubles(cov(zeros({2, 0}, TensorOptions(kFloat64).device(dev))))[0]));
    // cumulative_trapezoid: one value less along dim; an empty or 1-long dim gives an empty result.
    CHECK(doubles(cumulative_trapezoid(i64({1, 2, 3}, {3}, dev))) == std::vector<double>{1.5, 4});
    CHECK(doubles(cumulative_trapezoid(f64({1, 2, 3}, {3}, dev), 2)) == std::vector<double>{3, 8});
    CHECK(doubles(cumulative_trapezoid(f64({1, 2, 3}, {3}, dev), f64({0, 1, 3}, {3}, dev))) ==
          std::vector<double>{1.5, 6.5});
    CHECK(cumulative_trapezoid(zeros({2, 1}, TensorOptions(kFloat64).device(dev))).sizes() == IntArrayRef({2, 0}));
    CHECK(cumulative_trapezoid(zeros({2, 0}, TensorOptions(kFloat64).device(dev))).sizes() == IntArrayRef({2, 0}));
  }
}

TEST_CASE("stats: typed errors naming the op", "[stats]") {
  const Tensor a = randn({3, 4}, TensorOptions(kFloat64));
  const Tensor ints = i64({1, 2, 3}, {3});
  expect_error<IndexError>([&] { nansum(a, {2}); }, {"nansum", "dim 2"});
  expect_error<ValueError>([&] { nanmean(a, {1, -1}); }, {"nanmean", "more than once"});
  expect_error<TypeError>([&] { nanmean(ints); }, {"nanmean", "int64"});
  expect_error<TypeError>([&] { nansum(a, {}, false, kInt64); }, {"nansum", "float64"});
  expect_error<TypeError>([&] { nanmedian(ones({2}, kBool)); }, {"nanmedian", "bool"});
  expect_error<IndexError>([&] { nanmedian(zeros({2, 0}, kFloat64), 1); }, {"nanmedian", "[2, 0]"});
  expect_error<IndexError>([&] { nanmedian(zeros({0}, kInt64)); }, {"nanmedian", "empty"});
  expect_error<TypeError>([&] { quantile(ints, 0.5); }, {"quantile", "int64"});
  expect_error<ValueError>([&] { quantile(zeros({0}, kFloat64), 0.5); }, {"quantile", "empty"});
  expect_error<ValueError>([&] { quantile(a, 1.5); }, {"quantile", "[0, 1]", "1.5"});
  expect_error<ValueError>([&] { nanquantile(a, f64({0.5, -0.1}, {2})); }, {"nanquantile", "[0, 1]"});
  expect_error<TypeError>([&] { quantile(a, tensor({0.5}, kFloat32)); }, {"quantile", "float32", "float64"});
  expect_error<ValueError>([&] { quantile(a, zeros({2, 2}, kFloat64)); }, {"quantile", "[2, 2]"});
  expect_error<ValueError>([&] { quantile(a, 0.5, 1, false, "cubic"); }, {"quantile", "cubic", "midpoint"});
  expect_error<IndexError>([&] { quantile(a, 0.5, 2); }, {"quantile", "dim 2"});
  expect_error<TypeError>([&] { var_mean(ints); }, {"var_mean", "int64"});
  expect_error<IndexError>([&] { std_mean(a, {3}); }, {"std_mean", "dim 3"});
  expect_error<ValueError>([&] { aminmax(zeros({0, 3}, kFloat64)); }, {"aminmax", "[0, 3]"});
  CHECK(std::get<0>(aminmax(zeros({0, 3}, kFloat64), 1)).sizes() == IntArrayRef({0}));
  expect_error<IndexError>([&] { count_nonzero(a, {0, 5}); }, {"count_nonzero", "dim 5"});
  expect_error<ValueError>([&] { cov(zeros({2, 2, 2}, kFloat64)); }, {"cov", "[2, 2, 2]"});
  expect_error<TypeError>([&] { cov(ones({2, 3}, kBool)); }, {"cov", "bool"});
  expect_error<TypeError>([&] { cov(a, 1, f64({1, 2, 3, 4}, {4})); }, {"cov", "fweights", "int64"});
  expect_error<ValueError>([&] { cov(a, 1, i64({1, 2}, {2})); }, {"cov", "fweights", "2 weights for 4"});
  expect_error<ValueError>([&] { cov(a, 1, i64({1, -2, 1, 1}, {4})); }, {"cov", "negative"});
  expect_error<TypeError>([&] { cov(a, 1, {}, i64({1, 2, 1, 1}, {4})); }, {"cov", "aweights", "floating"});
  expect_error<ValueError>([&] { cov(a, 1, {}, zeros({4}, kFloat64)); }, {"cov", "sum to zero"});
  expect_error<ValueError>([&] { cov(a, 1, {}, zeros({1, 4}, kFloat64)); }, {"cov", "aweights", "[1, 4]"});
  expect_error<ValueError>([&] { corrcoef(zeros({2, 3, 3}, kFloat64)); }, {"corrcoef", "[2, 3, 3]"});
  expect_error<IndexError>([&] { cumulative_trapezoid(f64({1}, {})); }, {"cumulative_trapezoid", "0-dim"});
  expect_error<ValueError>([&] { cumulative_trapezoid(a, f64({1, 2}, {2})); }, {"cumulative_trapezoid", "[3, 4]"});
  expect_error<TypeError>([&] { cumulative_trapezoid(ones({3}, kBool)); }, {"cumulative_trapezoid", "bool"});
  expect_error<IndexError>([&] { cumulative_trapezoid(a, 1.0, 2); }, {"cumulative_trapezoid", "dim 2"});
  expect_error<ValueError>(
      [&] {
        cumulative_trapezoid(a, zeros({3, 3}, kFloat64));
      },
      {"cumulative_trapezoid", "[3, 3]"});
}
