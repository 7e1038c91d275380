// logcumsumexp, cummax/cummin, renorm, nan_to_num, logit, xlogy, lerp, hypot, trapezoid/trapz,
// rot90, repeat_interleave, tile, masked_select, take_along_dim, scatter_reduce, index_put and
// tensordot: PyTorch 1.13's values and gradients (generate.py's scan_scatter_math_cases, selected by op
// name) on every test device; float64 gradchecks and gradgradchecks; hand cases (ties, NaN,
// integers, repeats, in-place forms) and typed errors checked before anything is written.
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
using wick::test::dkw;
using wick::test::doubles;
using wick::test::f64;
using wick::test::i64;
using wick::test::ikw;
using wick::test::longs;
std::vector<int64_t> lkw(const OracleCase& c, const char* key) { return c.kwargs.at(key).get<std::vector<int64_t>>(); }
std::optional<double> okw(const OracleCase& c, const char* key) {
  return c.kwargs.contains(key) ? std::optional<double>(dkw(c, key)) : std::nullopt;
}
std::optional<int64_t> odim(const OracleCase& c) {
  return c.kwargs.contains("dim") ? std::optional<int64_t>(ikw(c, "dim")) : std::nullopt;
}

const std::map<std::string, OpFn>& ops() {
  static const std::map<std::string, OpFn> m = {
      {"logcumsumexp", [](const TL& x, const OracleCase& c) { return logcumsumexp(x[0], ikw(c, "dim")); }},
      {"cummax", [](const TL& x, const OracleCase& c) { return std::get<0>(cummax(x[0], ikw(c, "dim"))); }},
      {"cummax_indices", [](const TL& x, const OracleCase& c) { return std::get<1>(x[0].cummax(ikw(c, "dim"))); }},
      {"cummin", [](const TL& x, const OracleCase& c) { return std::get<0>(x[0].cummin(ikw(c, "dim"))); }},
      {"cummin_indices", [](const TL& x, const OracleCase& c) { return std::get<1>(cummin(x[0], ikw(c, "dim"))); }},
      {"renorm",
       [](const TL& x, const OracleCase& c) {
         const double p = c.kwargs.at("p").is_string() ? std::numeric_limits<double>::infinity() : dkw(c, "p");
         return renorm(x[0], p, ikw(c, "dim"), dkw(c, "maxnorm"));
       }},
      {"nan_to_num",
       [](const TL& x, const OracleCase& c) {
         return nan_to_num(x[0], okw(c, "nan").value_or(0.0), okw(c, "posinf"), okw(c, "neginf"));
       }},
      {"logit", [](const TL& x, const OracleCase& c) { return x[0].logit(okw(c, "eps")); }},
      {"xlogy", [](const TL& x, const OracleCase&) { return xlogy(x[0], x[1]); }},
      {"xlogy_scalar_x", [](const TL& x, const OracleCase& c) { return xlogy(Scalar(dkw(c, "x")), x[0]); }},
      {"xlogy_scalar_y", [](const TL& x, const OracleCase& c) { return x[0].xlogy(Scalar(dkw(c, "y"))); }},
      {"lerp", [](const TL& x, const OracleCase& c) { return lerp(x[0], x[1], dkw(c, "weight")); }},
      {"lerp_tensor", [](const TL& x, const OracleCase&) { return x[0].lerp(x[1], x[2]); }},
      {"hypot", [](const TL& x, const OracleCase&) { return hypot(x[0], x[1]); }},
      {"trapezoid", [](const TL& x, const OracleCase& c) { return trapezoid(x[0], dkw(c, "dx"), ikw(c, "dim")); }},
      {"trapezoid_x", [](const TL& x, const OracleCase& c) { return trapezoid(x[0], x[1], ikw(c, "dim")); }},
      {"trapz", [](const TL& x, const OracleCase& c) { return trapz(x[0], x[1], ikw(c, "dim")); }},
      {"rot90", [](const TL& x, const OracleCase& c) { return rot90(x[0], ikw(c, "k"), lkw(c, "dims")); }},
      {"repeat_interleave",
       [](const TL& x, const OracleCase& c) { return x[0].repeat_interleave(ikw(c, "repeats"), odim(c)); }},
      {"repeat_interleave_tensor",
       [](const TL& x, const OracleCase& c) { return repeat_interleave(x[0], x[1], odim(c)); }},
      {"tile", [](const TL& x, const OracleCase& c) { return tile(x[0], lkw(c, "dims")); }},
      {"masked_select", [](const TL& x, const OracleCase&) { return masked_select(x[0], x[1].ne(0)); }},
      {"take_along_dim", [](const TL& x, const OracleCase& c) { return take_along_dim(x[0], x[1], odim(c)); }},
      {"scatter_reduce",
       [](const TL& x, const OracleCase& c) {
         return scatter_reduce(x[0], ikw(c, "dim"), x[1], x[2], c.kwargs.at("reduce").get<std::string>(),
                               c.kwargs.at("include_self").get<bool>());
       }},
      {"index_put",
       [](const TL& x, const OracleCase& c) {
         return index_put(x[0], TL(x.begin() + 2, x.end()), x[1], c.kwargs.at("accumulate").get<bool>());
       }},
      {"index_put_mask",
       [](const TL& x, const OracleCase& c) {
         return x[0].index_put({x[2].ne(0)}, x[1], c.kwargs.at("accumulate").get<bool>());
       }},
      {"tensordot",
       [](const TL& x, const OracleCase& c) {
         if (c.kwargs.contains("dims")) return tensordot(x[0], x[1], ikw(c, "dims"));
         return tensordot(x[0], x[1], lkw(c, "dims_a"), lkw(c, "dims_b"));
       }},
  };
  return m;
}

Tensor R(IntArrayRef shape) { return randn(shape, TensorOptions(kFloat64).requires_grad()); }
}  // namespace

TEST_CASE("tensor ops extra: PyTorch 1.13 values and gradients on every device", "[tensor_ops_extra]") {
  std::map<std::string, int> seen;
  for (const Device dev : wick::test::test_devices()) {
    for (const OracleCase& c : wick::test::oracle_cases()) {
      auto it = ops().find(c.op);
      if (it == ops().end()) continue;
      INFO(c.label() << " on " << dev);
      TL leaves = c.leaves(dev);
      Tensor out = it->second(leaves, c);
      REQUIRE(out.sizes() == c.out.sizes());
      REQUIRE(out.dtype() == c.out.dtype());
      wick::test::check_oracle_case(c, out, leaves, dev, 1e-10, 1e-10, 1e-13);
      ++seen[c.op];
    }
  }
  for (const auto& [name, fn] : ops()) {
    INFO(name);
    CHECK(seen[name] > 0);
  }
}

TEST_CASE("tensor ops extra: float64 gradchecks and double backward", "[tensor_ops_extra]") {
  manual_seed(71);
  CHECK_GRADCHECKS([](const TL& x) { return TL{logcumsumexp(x[0], 1), logcumsumexp(x[0], 0)}; }, {R({3, 5})});
  CHECK_GRADCHECKS(
      [](const TL& x) {
        return TL{std::get<0>(cummax(x[0], 1)), std::get<0>(cummin(x[0], 0))};
      },
      {R({3, 5})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{renorm(x[0], 2, 0, 1.0), renorm(x[0], 1, 1, 0.5)}; }, {R({3, 4})});
  Tensor u = (rand({2, 3}, kFloat64) * 0.8 + 0.1).requires_grad_();
  CHECK_GRADCHECKS([](const TL& x) { return TL{logit(x[0]), logit(x[0], 0.05), nan_to_num(x[0])}; }, {u});
  Tensor y = (rand({3}, kFloat64) + 0.5).requires_grad_();
  CHECK_GRADCHECKS(
      [](const TL& x) {
        return TL{xlogy(x[0], x[1]), xlogy(2.0, x[1]), xlogy(x[0], 1.5)};
      },
      {R({2, 3}), y});
  CHECK_GRADCHECKS(
      [](const TL& x) {
        return TL{lerp(x[0], x[1], x[2]), lerp(x[0], x[1], 0.3), lerp(x[0], x[1], 0.8)};
      },
      {R({2, 3}), R({3}), R({2, 1})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{hypot(x[0], x[1])}; }, {R({2, 3}), R({3})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{trapezoid(x[0], x[1], 1), trapz(x[0], 0.5, 0)}; }, {R({2, 4}), R({4})});
  CHECK_GRADCHECKS(
      [](const TL& x) {
        return TL{rot90(x[0], 1, {0, 1}), tile(x[0], {2, 1}), repeat_interleave(x[0], 2, 1),
                  repeat_interleave(x[0], tensor(std::vector<int64_t>{2, 0}, {2}), 0)};
      },
      {R({2, 3})});
  CHECK_GRADCHECKS(
      [](const TL& x) {
        Tensor m = tensor(std::vector<int64_t>{1, 0, 1}, {3}).ne(0);
        Tensor i = tensor(std::vector<int64_t>{2, 0, 0, 1}, {2, 2});
        return TL{masked_select(x[0], m), take_along_dim(x[0], i, 1), tensordot(x[0], x[1], {1}, {0})};
      },
      {R({2, 3}), R({3, 2})});
  const Tensor index = tensor(std::vector<int64_t>{1, 1, 0, 2, 1, 0}, {2, 3});
  for (const char* reduce : {"sum", "prod", "mean", "amax", "amin"}) {
    INFO(reduce);
    for (bool include_self : {true, false}) {
      CHECK_GRADCHECKS([&](const TL& x) { return TL{scatter_reduce(x[0], 1, index, x[1], reduce, include_self)}; },
                       {R({2, 4}), R({2, 3})});
    }
  }
  const Tensor rows = tensor(std::vector<int64_t>{0, 2, 0}, {3});
  CHECK_GRADCHECKS(
      [&](const TL& x) {
        return TL{index_put(x[0], {rows}, x[1], true), index_put(x[0], {rows.narrow(0, 0, 2)}, x[2])};
      },
      {R({3, 2}), R({3, 2}), R({2})});
}

TEST_CASE("tensor ops extra: hand cases for ties NaN integers repeats and in-place forms", "[tensor_ops_extra]") {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (const Device dev : wick::test::test_devices()) {
    INFO(dev);
    // cummax: ties take the latest index; a NaN stays, at the latest NaN's index.
    auto [mv, mi] = cummax(f64({1, 3, 3, nan, 5, nan}, {6}, dev), 0);
    CHECK(longs(mi) == std::vector<int64_t>{0, 1, 2, 3, 3, 5});
    CHECK(std::isnan(doubles(mv)[4]));
    auto [iv, ii] = cummin(i64({3, 1, 1, 2}, {4}, dev), 0);
    CHECK(longs(iv) == std::vector<int64_t>{3, 1, 1, 1});
    CHECK(longs(ii) == std::vector<int64_t>{0, 1, 2, 2});
    // logcumsumexp neither overflows nor loses a tiny early term.
    CHECK(doubles(logcumsumexp(f64({-1000, 1000}, {2}, dev), 0)) == std::vector<double>{-1000, 1000});
    // nan_to_num: the dtype's own extremes by default; integers pass through.
    Tensor f = tensor({nan, inf, -inf}, TensorOptions(kFloat32).device(dev));
    CHECK(doubles(nan_to_num(f)) ==
          std::vector<double>{0, std::numeric_limits<float>::max(), std::numeric_limits<float>::lowest()});
    CHECK(longs(nan_to_num(i64({1, -2}, {2}, dev))) == std::vector<int64_t>{1, -2});
    // xlogy: 0 at x == 0 unless y is NaN; the gradient of y at (0, 0) is 0 / 0, as PyTorch's.
    Tensor x0 = f64({0, 0, 2}, {3}, dev).requires_grad_(), y0 = f64({0, nan, 1}, {3}, dev).requires_grad_();
    Tensor out = xlogy(x0, y0);
    const std::vector<double> ov = doubles(out);
    CHECK((ov[0] == 0 && std::isnan(ov[1]) && ov[2] == 0));
    out.sum().backward();
    CHECK(std::isnan(doubles(y0.grad())[0]));
    CHECK(xlogy(i64({1}, {1}, dev), i64({2}, {1}, dev)).dtype() == kFloat32);
    // hypot keeps far-out magnitudes (the squares would overflow) and gives inf for an infinite side.
    const std::vector<double> h =
        doubles(hypot(f64({3e300, inf, 3e-300}, {3}, dev), f64({4e300, nan, 4e-300}, {3}, dev)));
    CHECK(h[0] == Approx(5e300).epsilon(1e-15));
    CHECK(h[1] == inf);
    CHECK(h[2] == Approx(5e-300).epsilon(1e-15));
    // repeat_interleave of indices, and integer data.
    CHECK(longs(repeat_interleave(i64({2, 0, 3}, {3}, dev))) == std::vector<int64_t>{0, 0, 2, 2, 2});
    CHECK(longs(repeat_interleave(i64({7, 8}, {2}, dev), 2)) == std::vector<int64_t>{7, 7, 8, 8});
    CHECK(masked_select(f64({1, 2}, {2}, dev), zeros({2}, TensorOptions(kBool).device(dev))).numel() == 0);
    // scatter_reduce: integer mean floors; prod of integers wraps as int64.
    Tensor is = i64({1, 1, 1}, {3}, dev);
    CHECK(longs(scatter_reduce(is, 0, i64({0, 0, 2}, {3}, dev), i64({-2, -3, 4}, {3}, dev), "mean")) ==
          std::vector<int64_t>{-2, 1, 2});
    CHECK(longs(scatter_reduce(is, 0, i64({0, 0}, {2}, dev), i64({5, 6}, {2}, dev), "amax", false)) ==
          std::vector<int64_t>{6, 1, 1});
    // index_put: the last of repeated positions wins; accumulate adds every one.
    Tensor base = zeros({3}, TensorOptions(kFloat64).device(dev));
    CHECK(doubles(index_put(base, {i64({1, 1}, {2}, dev)}, f64({5, 7}, {2}, dev))) == std::vector<double>{0, 7, 0});
    CHECK(doubles(index_put(base, {i64({1, -2}, {2}, dev)}, f64({5, 7}, {2}, dev), true)) ==
          std::vector<double>{0, 12, 0});
    // In-place forms: results written back, the version bumped once, gradients through them.
    Tensor t = f64({1, 2, 3, 4}, {2, 2}, dev);
    const int64_t v = t.version();
    t.index_put_({i64({1}, {1}, dev), i64({0}, {1}, dev)}, f64({9}, {1}, dev));
    CHECK(t.version() == v + 1);
    CHECK(doubles(t) == std::vector<double>{1, 2, 9, 4});
    t.scatter_reduce_(1, i64({0, 0, 1, 1}, {2, 2}, dev), f64({5, -1, 2, 8}, {2, 2}, dev), "amax");
    CHECK(doubles(t) == std::vector<double>{5, 2, 9, 8});
    Tensor leaf = f64({0.5, 1.5}, {2}, dev).requires_grad_();
    Tensor w = leaf * 1.0;
    w.lerp_(f64({2, 2}, {2}, dev), 0.25).hypot_(f64({0, 0}, {2}, dev));
    w.sum().backward();
    CHECK(doubles(leaf.grad()) == std::vector<double>{0.75, 0.75});
    Tensor p = f64({0.25, 0.5}, {2}, dev);
    p.logit_();
    CHECK(doubles(p)[1] == 0.0);
    // tensordot agrees with matmul.
    Tensor ma = randn({3, 4}, TensorOptions(kFloat64)).to(dev), mb = randn({4, 2}, TensorOptions(kFloat64)).to(dev);
    CHECK(allclose(tensordot(ma, mb, 1), matmul(ma, mb), 1e-12, 1e-12));
  }
}

TEST_CASE("tensor ops extra: typed errors naming the op and shapes before any write", "[tensor_ops_extra]") {
  using Catch::Matchers::Contains;
  const Tensor a = randn({3, 4}, TensorOptions(kFloat64));
  CHECK_THROWS_AS(logcumsumexp(i64({1, 2}, {2}), 0), TypeError);
  CHECK_THROWS_AS(renorm(f64({1, 2}, {2}), 2, 0, 1), ValueError);
  CHECK_THROWS_WITH(renorm(a, 0, 0, 1), Contains("renorm") && Contains("p must be > 0"));
  CHECK_THROWS_AS(renorm(a, 2, 0, -1), ValueError);
  CHECK_THROWS_AS(lerp(a, a.to(kFloat32), 0.5), TypeError);
  CHECK_THROWS_AS(hypot(i64({1}, {1}), i64({1}, {1})), TypeError);
  CHECK_THROWS_WITH(trapezoid(a, f64({1, 2}, {2}), 1), Contains("trapezoid") && Contains("[3, 4]"));
  CHECK_THROWS_WITH(rot90(a, 1, {0, 0}), Contains("rot90") && Contains("differ"));
  CHECK_THROWS_AS(rot90(f64({1}, {1})), ValueError);
  CHECK_THROWS_WITH(repeat_interleave(a, i64({1, 2}, {2}), 1), Contains("repeat_interleave") && Contains("[3, 4]"));
  CHECK_THROWS_AS(repeat_interleave(i64({1, -1}, {2})), ValueError);
  CHECK_THROWS_AS(repeat_interleave(a, 2, 0, 5), ValueError);
  CHECK_THROWS_AS(masked_select(a, a), TypeError);
  CHECK_THROWS_WITH(masked_select(a, ones({2}, kBool)), Contains("masked_select"));
  CHECK_THROWS_AS(take_along_dim(a, i64({0}, {1}), 0), ValueError);
  CHECK_THROWS_WITH(take_along_dim(a, i64({0, 9}, {1, 2}), 1), Contains("take_along_dim"));
  const Tensor idx = i64({0, 5}, {1, 2});
  CHECK_THROWS_AS(scatter_reduce(a, 1, idx, a, "sum"), IndexError);
  CHECK_THROWS_WITH(scatter_reduce(a, 1, i64({0}, {1, 1}), a, "max"), Contains("scatter_reduce") && Contains("amax"));
  CHECK_THROWS_AS(scatter_reduce(a, 1, i64({0}, {1, 1}), a.to(kFloat32), "sum"), TypeError);
  CHECK_THROWS_AS(tensordot(a, a, {1}, {0}), ValueError);
  CHECK_THROWS_WITH(tensordot(a, a, {1}, {0, 1}), Contains("tensordot"));
  // index_put_ refuses a bad index without writing any part of it (the first index was valid).
  Tensor t = zeros({3, 2}, TensorOptions(kFloat64));
  const int64_t v = t.version();
  CHECK_THROWS_WITH(t.index_put_({i64({0, 3}, {2})}, ones({2, 2}, kFloat64)),
                    Contains("index_put") && Contains("[3, 2]") && Contains("[0, 3]"));
  CHECK_THROWS_AS(t.index_put_({i64({0, 1}, {2})}, ones({3, 2}, kFloat64)), ValueError);
  CHECK_THROWS_AS(t.index_put_({i64({0}, {1})}, ones({2}, kFloat32)), TypeError);
  CHECK_THROWS_AS(t.index_put_({ones({2, 2}, kBool)}, ones({1}, kFloat64)), IndexError);
  CHECK(t.version() == v);
  CHECK(doubles(t) == std::vector<double>(6, 0.0));
}

// lerp_ whose weight alone requires grad is recorded (d/dw = end - self); index_put without
// accumulate gives every repeat of a position that position's gradient (PyTorch 1.13's
// grad.index(indices)) and refuses a 0-d bool mask; repeat_interleave's counts that overflow
// int64 are refused naming it.
TEST_CASE("tensor ops extra: lerp_ weight grads index_put repeats and overflowing repeats", "[tensor_ops_extra]") {
  using Catch::Matchers::Contains;
  for (const Device dev : wick::test::test_devices()) {
    INFO(dev);
    Tensor x = zeros({3}, TensorOptions(kFloat64).device(dev));
    const Tensor w = f64({0.25, 0.5, 0.75}, {3}, dev).requires_grad_(true);
    x.lerp_(f64({4, 8, 16}, {3}, dev), w);
    CHECK(x.requires_grad());
    CHECK(doubles(x) == std::vector<double>{1, 4, 12});
    sum(x).backward();
    CHECK(doubles(w.grad()) == std::vector<double>{4, 8, 16});  // end - self
    // Positions 1, 1, 2 with values 1, 2, 3: the result keeps the last of the repeats (2 at 1),
    // and both repeats receive the gradient at position 1 (20), as torch 1.13 gives [20, 20, 30].
    const Tensor v = f64({1, 2, 3}, {3}, dev).requires_grad_(true);
    const Tensor put = index_put(zeros({4}, TensorOptions(kFloat64).device(dev)), {i64({1, 1, 2}, {3}, dev)}, v);
    CHECK(doubles(put) == std::vector<double>{0, 2, 3, 0});
    sum(put * f64({10, 20, 30, 40}, {4}, dev)).backward();
    CHECK(doubles(v.grad()) == std::vector<double>{20, 20, 30});
    const Tensor mask0 = ones({}, TensorOptions(kBool).device(dev));
    CHECK_THROWS_AS(index_put(zeros({3}, TensorOptions(kFloat64).device(dev)), {mask0}, f64({5}, {}, dev)), IndexError);
    CHECK_THROWS_WITH(index_put(zeros({2, 3}, TensorOptions(kFloat64).device(dev)), {mask0}, f64({5}, {}, dev)),
                      Contains("index_put") && Contains("0-d bool"));
    const int64_t big = std::numeric_limits<int64_t>::max() / 2 + 1;
    CHECK_THROWS_WITH(repeat_interleave(i64({big, big}, {2}, dev)), Contains("repeat_interleave") && Contains("int64"));
    CHECK_THROWS_WITH(repeat_interleave(f64({1, 2, 3}, {3}, dev), big),
                      Contains("repeat_interleave") && Contains("int64"));
    CHECK_THROWS_AS(repeat_interleave(f64({1, 2, 3}, {3}, dev), i64({big, big, 1}, {3}, dev)), ValueError);
  }
}
