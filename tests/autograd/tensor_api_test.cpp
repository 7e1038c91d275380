// The tensor API of issue 14 on hand-computed cases, on every test device: predicates and
// whole-tensor comparisons, sort order (NaN, stability, ties), dtypes of where/cumsum/one_hot,
// multinomial's statistics and invariants, and the typed errors of bad input. Values against
// PyTorch are in the oracle (oracle_tensor_api.cpp), gradients in gradcheck_tensor_api_test.cpp.
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <set>

#include "support/allclose.h"
#include "support/devices.h"

using namespace wick;
using Catch::Matchers::Contains;

namespace {
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

Tensor T(std::vector<double> v, Device d, DType dt = kFloat64) {
  return tensor(v, {static_cast<int64_t>(v.size())}, TensorOptions(dt).device(d));
}
Tensor I(std::vector<int64_t> v, IntArrayRef shape, Device d) {
  return tensor(v, shape, TensorOptions(kInt64).device(d));
}
std::vector<int64_t> ints(const Tensor& t) { return t.to_vector<int64_t>(); }
std::vector<bool> bools(const Tensor& t) {
  std::vector<bool> r;
  for (int64_t v : t.to(kInt64).to_vector<int64_t>()) r.push_back(v != 0);
  return r;
}
}  // namespace

TEST_CASE("tensor api: isnan, isinf, isfinite, all and any") {
  for (Device d : wick::test::test_devices()) {
    INFO(d);
    Tensor x = T({1, kNaN, kInf, -kInf, 0}, d);
    CHECK(bools(isnan(x)) == std::vector<bool>{false, true, false, false, false});
    CHECK(bools(x.isinf()) == std::vector<bool>{false, false, true, true, false});
    CHECK(bools(isfinite(x)) == std::vector<bool>{true, false, false, false, true});
    Tensor i = I({1, 0, -3}, {3}, d);
    CHECK(bools(isnan(i)) == std::vector<bool>{false, false, false});
    CHECK(bools(isfinite(i)) == std::vector<bool>{true, true, true});
    CHECK(isnan(x).dtype() == kBool);
    CHECK_FALSE(all(i).item<bool>());
    CHECK(any(i).item<bool>());
    CHECK(all(x).item<bool>() == false);  // the 0
    Tensor m = I({1, 0, 2, 3}, {2, 2}, d);
    CHECK(bools(all(m, 1)) == std::vector<bool>{false, true});
    CHECK(bools(any(m, 0, true)) == std::vector<bool>{true, true});
    CHECK(any(m, 0, true).sizes().vec() == std::vector<int64_t>{1, 2});
    Tensor empty = zeros({0, 3}, TensorOptions(kFloat64).device(d));
    CHECK(all(empty).item<bool>());
    CHECK_FALSE(any(empty).item<bool>());
    CHECK(all(empty).dim() == 0);
  }
}

TEST_CASE("tensor api: equal, isclose and allclose") {
  for (Device d : wick::test::test_devices()) {
    INFO(d);
    Tensor a = T({1, 2, kInf}, d), b = T({1, 2, kInf}, d);
    CHECK(equal(a, b));
    CHECK(a.equal(b));
    CHECK_FALSE(equal(a, T({1, 2}, d)));                   // sizes differ
    CHECK_FALSE(equal(T({kNaN}, d), T({kNaN}, d)));        // NaN never equals
    CHECK_THROWS_AS(equal(a, a.to(kFloat32)), TypeError);  // dtypes differ
    CHECK(allclose(T({1.0 + 1e-6, -kInf}, d), T({1, -kInf}, d)));
    CHECK_FALSE(allclose(T({1.001}, d), T({1}, d)));
    CHECK(allclose(T({1.001}, d), T({1}, d), 1e-2));
    CHECK(allclose(T({1e-9}, d), T({0}, d)));  // atol
    CHECK_FALSE(allclose(T({1, kNaN}, d), T({1, kNaN}, d)));
    CHECK(allclose(T({1, kNaN}, d), T({1, kNaN}, d), 1e-5, 1e-8, true));
    CHECK_FALSE(allclose(T({kInf}, d), T({-kInf}, d)));
    CHECK(bools(isclose(T({1, 2, 3}, d), T({1, 2.5, 3}, d))) == std::vector<bool>{true, false, true});
    CHECK_THROWS_AS(isclose(a, b, -1.0), ValueError);
  }
}

TEST_CASE("tensor api: max and min of all elements share the gradient among ties") {
  for (Device d : wick::test::test_devices()) {
    INFO(d);
    Tensor x = T({1, 3, 3, -2}, d).requires_grad_();
    Tensor m = max(x);
    CHECK(m.dim() == 0);
    CHECK(m.item<double>() == 3.0);
    m.backward();
    CHECK(x.grad().to_vector<double>() == std::vector<double>{0, 0.5, 0.5, 0});
    CHECK(x.min().item<double>() == -2.0);
    CHECK(std::isnan(max(T({1, kNaN, 3}, d)).item<double>()));
    CHECK_THROWS_AS(max(zeros({0}, TensorOptions(kFloat64).device(d))), ValueError);
    CHECK(I({4, 9, 2}, {3}, d).max().item<int64_t>() == 9);
  }
}

TEST_CASE("tensor api: sort is stable and puts NaN last ascending, first descending") {
  for (Device d : wick::test::test_devices()) {
    INFO(d);
    Tensor x = T({3, kNaN, 1, 3, kNaN, 1}, d);
    auto [v, i] = sort(x);
    CHECK(ints(i) == std::vector<int64_t>{2, 5, 0, 3, 1, 4});
    CHECK(std::isnan(v[4].item<double>()));
    CHECK(v[3].item<double>() == 3.0);
    auto [vd, id] = x.sort(0, true);
    CHECK(ints(id) == std::vector<int64_t>{1, 4, 0, 3, 2, 5});
    CHECK(vd[2].item<double>() == 3.0);
    CHECK(ints(argsort(x, 0, true)) == ints(id));
    // topk: NaN is the largest; ties resolve to the lower index.
    auto [tv, ti] = topk(x, 3);
    CHECK(ints(ti) == std::vector<int64_t>{1, 4, 0});
    auto [sv, si] = topk(x, 3, 0, false);
    CHECK(ints(si) == std::vector<int64_t>{2, 5, 0});
    CHECK(sv.to_vector<double>() == std::vector<double>{1, 1, 3});
    auto [zv, zi] = topk(x, 0);
    CHECK(zv.numel() == 0);
    CHECK_THROWS_AS(topk(x, 7), IndexError);
    CHECK_THROWS_AS(topk(x, -1), IndexError);
    // A non-contiguous input, sorted along dim 0 of a transposed view; integers and bools too.
    Tensor m = I({5, 1, 4, 2, 0, 3}, {2, 3}, d).t();  // [[5, 2], [1, 0], [4, 3]]
    auto [mv, mi] = sort(m, 0);
    CHECK(ints(mv.contiguous()) == std::vector<int64_t>{1, 0, 4, 2, 5, 3});
    CHECK(ints(mi.contiguous()) == std::vector<int64_t>{1, 1, 2, 0, 0, 2});
    CHECK(ints(argsort(I({1, 0, 1, 0}, {4}, d).to(kBool))) == std::vector<int64_t>{1, 3, 0, 2});
  }
}

TEST_CASE("tensor api: cumsum sums integers and bools in int64") {
  for (Device d : wick::test::test_devices()) {
    INFO(d);
    CHECK(ints(cumsum(I({1, 2, 3, 4}, {2, 2}, d), 0)) == std::vector<int64_t>{1, 2, 4, 6});
    Tensor b = cumsum(I({1, 0, 1}, {3}, d).to(kBool), 0);
    CHECK(b.dtype() == kInt64);
    CHECK(ints(b) == std::vector<int64_t>{1, 1, 2});
    CHECK(cumsum(T({1, 2}, d, kFloat32), 0).dtype() == kFloat32);
    CHECK(cumsum(scalar_tensor(2.0, TensorOptions(kFloat64).device(d)), 0).item<double>() == 2.0);
  }
}

TEST_CASE("tensor api: where with scalars, masked_fill, tril and triu") {
  for (Device d : wick::test::test_devices()) {
    INFO(d);
    Tensor c = I({1, 0, 1}, {3}, d).to(kBool);
    Tensor x = T({1, 2, 3}, d, kFloat32);
    CHECK(where(c, x, 0.5).dtype() == kFloat32);
    CHECK(where(c, x, 0.5).to_vector<double>() == std::vector<double>{1, 0.5, 3});
    CHECK(where(c, -1, x).to_vector<double>() == std::vector<double>{-1, 2, -1});
    CHECK(where(c, 1, 0).dtype() == kInt64);
    CHECK(where(c, 1.0, 0.0).dtype() == kFloat32);
    CHECK(ints(where(c, 7, 9)) == std::vector<int64_t>{7, 9, 7});
    CHECK(masked_fill(x, c, 0).to_vector<double>() == std::vector<double>{0, 2, 0});
    CHECK(x.masked_fill(c, scalar_tensor(5.0, kFloat64)).dtype() == kFloat32);
    CHECK(ints(I({1, 2, 3}, {3}, d).masked_fill(c, 0)) == std::vector<int64_t>{0, 2, 0});
    CHECK_THROWS_AS(masked_fill(x, I({1, 0, 1}, {3}, d), 0), TypeError);
    CHECK_THROWS_AS(masked_fill(x, c, T({1, 2}, d)), ValueError);
    CHECK_THROWS_WITH(masked_fill(x, I({1, 0}, {2}, d).to(kBool), 0), Contains("masked_fill") && Contains("[2]"));
    // In place: one version bump; a 0-dim value that requires grad gets the masked count.
    Tensor y = zeros({2, 3}, TensorOptions(kFloat64).device(d));
    const int64_t v0 = y.version();
    y.masked_fill_(c, -1.0);
    CHECK(y.version() == v0 + 1);
    CHECK(y.to_vector<double>() == std::vector<double>{-1, 0, -1, -1, 0, -1});
    Tensor val = scalar_tensor(2.0, TensorOptions(kFloat64).device(d)).requires_grad_();
    Tensor z = zeros({2, 3}, TensorOptions(kFloat64).device(d));
    z.masked_fill_(c, val);
    CHECK(z.to_vector<double>() == std::vector<double>{2, 0, 2, 2, 0, 2});
    z.sum().backward();
    CHECK(val.grad().item<double>() == 4.0);
    CHECK_THROWS_AS(y.masked_fill_(I({1}, {1}, d), 0), TypeError);
    Tensor m = arange(1, 10, 1, TensorOptions(kFloat64).device(d)).view({3, 3});
    CHECK(tril(m).to_vector<double>() == std::vector<double>{1, 0, 0, 4, 5, 0, 7, 8, 9});
    CHECK(triu(m, 1).to_vector<double>() == std::vector<double>{0, 2, 3, 0, 0, 6, 0, 0, 0});
    CHECK(tril(m, -1).to_vector<double>() == std::vector<double>{0, 0, 0, 4, 0, 0, 7, 8, 0});
    CHECK(m.triu(-1).to_vector<double>() == std::vector<double>{1, 2, 3, 4, 5, 6, 0, 8, 9});
    CHECK_THROWS_AS(tril(x), ValueError);
  }
}

TEST_CASE("tensor api: bmm, baddbmm, addmm, outer and dot check their shapes") {
  for (Device d : wick::test::test_devices()) {
    INFO(d);
    auto o = TensorOptions(kFloat64).device(d);
    Tensor a = ones({2, 3, 4}, o), b = ones({2, 4, 5}, o);
    CHECK(bmm(a, b).sizes().vec() == std::vector<int64_t>{2, 3, 5});
    CHECK(bmm(a, b)[1][2][4].item<double>() == 4.0);
    CHECK_THROWS_WITH(bmm(a, ones({4, 5}, o)), Contains("bmm") && Contains("[4, 5]"));
    CHECK_THROWS_AS(bmm(a, ones({3, 4, 5}, o)), ValueError);
    // beta = 0 ignores the input, NaN included, as PyTorch.
    Tensor nan_in = full({3, 5}, kNaN, o);
    CHECK(isfinite(addmm(nan_in, ones({3, 4}, o), ones({4, 5}, o), 0)).all().item<bool>());
    CHECK(addmm(ones({5}, o), ones({3, 4}, o), ones({4, 5}, o), 2, 3)[0][0].item<double>() == 2 + 3 * 4);
    CHECK_THROWS_AS(addmm(ones({3, 6}, o), ones({3, 4}, o), ones({4, 5}, o)), ValueError);
    CHECK_THROWS_AS(baddbmm(ones({2, 4, 5}, o), a, b), ValueError);
    CHECK(outer(T({1, 2}, d), T({3, 4, 5}, d)).to_vector<double>() == std::vector<double>{3, 4, 5, 6, 8, 10});
    CHECK(dot(T({1, 2, 3}, d), T({4, 5, 6}, d)).item<double>() == 32.0);
    CHECK_THROWS_AS(dot(T({1, 2}, d), T({1, 2, 3}, d)), ValueError);
    CHECK_THROWS_AS(dot(T({1, 2}, d), T({1, 2}, d, kFloat32)), TypeError);
    CHECK_THROWS_AS(outer(ones({2, 2}, o), T({1}, d)), ValueError);
  }
}

TEST_CASE("tensor api: repeat, flip, roll, diag and unbind") {
  for (Device d : wick::test::test_devices()) {
    INFO(d);
    Tensor x = T({1, 2, 3}, d);
    CHECK(repeat(x, {2, 2}).to_vector<double>() == std::vector<double>{1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3});
    CHECK(repeat(x, {2, 2}).sizes().vec() == std::vector<int64_t>{2, 6});
    CHECK(repeat(x, {0}).numel() == 0);
    CHECK_THROWS_AS(repeat(ones({2, 2}), {2}), ValueError);
    CHECK_THROWS_AS(repeat(x, {-1}), ValueError);
    CHECK(flip(x, {0}).to_vector<double>() == std::vector<double>{3, 2, 1});
    CHECK_THROWS_AS(flip(x, {0, -1}), ValueError);
    CHECK(roll(x, {1}).to_vector<double>() == std::vector<double>{3, 1, 2});
    CHECK(roll(x, {-4}, {0}).to_vector<double>() == std::vector<double>{2, 3, 1});
    CHECK_THROWS_AS(roll(x, {1, 2}, {0}), ValueError);
    Tensor same = roll(x, {3}, {0});
    CHECK_FALSE(same.is_same(x));  // a new tensor even when nothing moves, as PyTorch
    CHECK(diag(T({1, 2}, d), 1).to_vector<double>() == std::vector<double>{0, 1, 0, 0, 0, 2, 0, 0, 0});
    CHECK(diag(T({1, 2}, d), -1).to_vector<double>() == std::vector<double>{0, 0, 0, 1, 0, 0, 0, 2, 0});
    Tensor m = arange(0, 6, 1, TensorOptions(kFloat64).device(d)).view({2, 3});
    CHECK(diag(m).to_vector<double>() == std::vector<double>{0, 4});
    CHECK(diag(m, 1).to_vector<double>() == std::vector<double>{1, 5});
    CHECK(diag(m, -1).to_vector<double>() == std::vector<double>{3});
    CHECK(diag(m, 3).numel() == 0);
    CHECK_THROWS_AS(diag(ones({2, 2, 2})), ValueError);
    auto parts = unbind(m, 1);
    REQUIRE(parts.size() == 3);
    CHECK(parts[2].to_vector<double>() == std::vector<double>{2, 5});
    CHECK_THROWS_AS(unbind(scalar_tensor(1.0)), ValueError);
  }
}

TEST_CASE("tensor api: one_hot and silu") {
  for (Device d : wick::test::test_devices()) {
    INFO(d);
    Tensor h = one_hot(I({0, 2}, {2}, d));
    CHECK(h.dtype() == kInt64);
    CHECK(ints(h) == std::vector<int64_t>{1, 0, 0, 0, 0, 1});
    CHECK(one_hot(I({1}, {1}, d), 4).sizes().vec() == std::vector<int64_t>{1, 4});
    CHECK_THROWS_AS(one_hot(I({-1}, {1}, d)), ValueError);
    CHECK_THROWS_WITH(one_hot(I({3}, {1}, d), 3), Contains("one_hot") && Contains("num_classes"));
    CHECK_THROWS_AS(one_hot(T({1}, d)), TypeError);
    CHECK_THROWS_AS(one_hot(I({}, {0}, d)), ValueError);
    CHECK_THROWS_AS(one_hot(I({1}, {1}, d), -2), ValueError);
    CHECK(one_hot(I({}, {0}, d), 3).sizes().vec() == std::vector<int64_t>{0, 3});
    // Any width for an empty input (PyTorch's shape); a width whose bytes overflow names one_hot.
    CHECK(one_hot(I({}, {0}, d), INT64_MAX).sizes().vec() == std::vector<int64_t>{0, INT64_MAX});
    CHECK_THROWS_WITH(one_hot(I({0, 1}, {2}, d), int64_t{1} << 62), Contains("one_hot") && Contains("too large"));
    Tensor s = silu(T({0, 1, -1}, d));
    CHECK(s[0].item<double>() == 0.0);
    CHECK(s[1].item<double>() == Approx(0.7310585786300049).epsilon(1e-15));
    CHECK(s[2].item<double>() == Approx(-0.2689414213699951).epsilon(1e-15));
    CHECK_THROWS_AS(silu(I({1}, {1}, d)), TypeError);
  }
}

TEST_CASE("tensor api: multinomial follows the weights, never draws a zero weight, and repeats after manual_seed") {
  Tensor p = tensor({0.1, 0.0, 0.6, 0.3}, kFloat64);
  manual_seed(11);
  Tensor a = multinomial(p, 20000, true);
  manual_seed(11);
  CHECK(equal(a, multinomial(p, 20000, true)));
  CHECK(a.sizes().vec() == std::vector<int64_t>{20000});
  CHECK(a.dtype() == kInt64);
  // Counts within 5 standard deviations of n * p; class 1 (weight 0) never.
  const std::vector<int64_t> counts = ints(one_hot(a, 4).sum({0}));
  const std::vector<double> probs = {0.1, 0.0, 0.6, 0.3};
  for (size_t k = 0; k < 4; ++k) {
    INFO("class " << k);
    const double mean = 20000 * probs[k], sd = std::sqrt(20000 * probs[k] * (1 - probs[k]));
    CHECK(std::abs(static_cast<double>(counts[k]) - mean) <= 5 * sd);
  }
  CHECK(counts[1] == 0);
  // Unnormalised weights, 2-d, a zero weight last (the rounding guard must not pick it).
  Tensor w = tensor({2.0, 6.0, 0.0, 0.0, 0.0, 5.0}, {2, 3}, kFloat32);
  Tensor b = multinomial(w, 500, true);
  CHECK(b.sizes().vec() == std::vector<int64_t>{2, 500});
  CHECK(ints(b[1]) == std::vector<int64_t>(500, 2));
  CHECK_FALSE(b[0].eq(scalar_tensor(int64_t{2}, kInt64)).any().item<bool>());
  // Without replacement: distinct indices per row, never a zero weight, and the first draw
  // follows the weights.
  Tensor q = tensor({0.5, 0.0, 0.2, 0.3, 0.0}, kFloat64).expand({4000, 5}).contiguous();
  Tensor c = multinomial(q, 3, false);
  CHECK(c.sizes().vec() == std::vector<int64_t>{4000, 3});
  std::vector<int64_t> first(5, 0);
  for (int64_t r = 0; r < 4000; ++r) {
    std::vector<int64_t> row = ints(c[r]);
    CHECK(std::set<int64_t>(row.begin(), row.end()) == std::set<int64_t>{0, 2, 3});
    ++first[static_cast<size_t>(row[0])];
  }
  for (auto [k, pk] : std::vector<std::pair<size_t, double>>{{0, 0.5}, {2, 0.2}, {3, 0.3}}) {
    INFO("first draw of class " << k);
    CHECK(std::abs(static_cast<double>(first[k]) - 4000 * pk) <= 5 * std::sqrt(4000 * pk * (1 - pk)));
  }
  manual_seed(3);
  Tensor e = multinomial(p, 3);
  manual_seed(3);
  CHECK(equal(e, multinomial(p, 3)));
}

TEST_CASE("tensor api: multinomial rejects bad weights with typed errors") {
  CHECK_THROWS_WITH(multinomial(tensor({0.5, -0.1}, kFloat64), 1), Contains("multinomial") && Contains("negative"));
  CHECK_THROWS_WITH(multinomial(tensor({0.0, 0.0}, kFloat64), 1, true),
                    Contains("multinomial") && Contains("sums to 0"));
  CHECK_THROWS_AS(multinomial(tensor({0.5, kNaN}, kFloat64), 1), ValueError);
  CHECK_THROWS_AS(multinomial(tensor({0.5, kInf}, kFloat64), 1), ValueError);
  CHECK_THROWS_AS(multinomial(tensor({0.5, 0.0, 0.5}, kFloat64), 3), ValueError);  // 2 positive weights
  CHECK_THROWS_AS(multinomial(tensor({0.5, 0.5}, kFloat64), 0), ValueError);
  CHECK_THROWS_AS(multinomial(ones({2, 2, 2}), 1), ValueError);
  CHECK_THROWS_AS(multinomial(tensor(std::vector<int64_t>{1, 2}, {2}), 1), TypeError);
}

TEST_CASE("tensor api: std, var with correction and norm over dims") {
  for (Device d : wick::test::test_devices()) {
    INFO(d);
    Tensor x = T({1, 2, 3, 4}, d);
    CHECK(x.var().item<double>() == Approx(5.0 / 3.0).epsilon(1e-15));
    CHECK(x.std().item<double>() == Approx(std::sqrt(5.0 / 3.0)).epsilon(1e-15));
    CHECK(var(x, {0}, std::optional<int64_t>(0), false).item<double>() == Approx(1.25).epsilon(1e-15));
    CHECK(var(x, {0}, std::optional<int64_t>(2), false).item<double>() == Approx(2.5).epsilon(1e-15));
    CHECK(norm(T({3, -4}, d)).item<double>() == 5.0);
    CHECK(norm(T({3, -4}, d), 1).item<double>() == 7.0);
    CHECK(norm(T({3, -4}, d), kInf).item<double>() == 4.0);
    CHECK(norm(T({3, 0, -4}, d), 0).item<double>() == 2.0);
    CHECK(x.view({2, 2}).norm(2, {1}, true).sizes().vec() == std::vector<int64_t>{2, 1});
    CHECK_THROWS_AS(norm(I({1}, {1}, d)), TypeError);
  }
}
