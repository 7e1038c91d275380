// index_copy, index_fill, index_reduce, put, argwhere, isin, diagflat, combinations, vander,
// addcmul, addcdiv, addbmm, addmv, addr, chain_matmul, ger, vdot, logdet and pdist: PyTorch 1.13's
// values and gradients (generate.py's index32_cases, selected by op name) on every test device;
// float64 gradchecks and double backward; hand cases (repeated indices, NaN, empty and 0-d
// inputs, beta 0, the in-place forms and their gradients); typed errors, checked before anything
// is written.
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <cmath>
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
using wick::test::dkw;
using wick::test::doubles;
using wick::test::f64;
using wick::test::i64;
using wick::test::ikw;
using wick::test::longs;
bool bkw(const OracleCase& c, const char* key) { return c.kwargs.at(key).get<bool>(); }

Tensor run(const OracleCase& c, const TL& x, Device) {
  const std::string& op = c.op;
  if (op == "index_copy") return x[0].index_copy(ikw(c, "dim"), x[2], x[1]);
  if (op == "index_fill") return index_fill(x[0], ikw(c, "dim"), x[1], dkw(c, "value"));
  if (op == "index_fill_tensor") return x[0].index_fill(ikw(c, "dim"), x[1], x[2]);
  if (op == "index_reduce")
    return index_reduce(x[0], ikw(c, "dim"), x[2], x[1], c.kwargs.at("reduce").get<std::string>(),
                        bkw(c, "include_self"));
  if (op == "put") return x[0].put(x[2], x[1], bkw(c, "accumulate"));
  if (op == "argwhere") return argwhere(x[0]);
  if (op == "isin") return isin(x[0], x[1], false, bkw(c, "invert"));
  if (op == "isin_scalar") return isin(x[0], dkw(c, "test_element"));
  if (op == "diagflat") return diagflat(x[0], ikw(c, "offset"));
  if (op == "combinations") return combinations(x[0], ikw(c, "r"), bkw(c, "with_replacement"));
  if (op == "vander")
    return vander(x[0], c.kwargs.contains("N") ? std::optional<int64_t>(ikw(c, "N")) : std::nullopt,
                  bkw(c, "increasing"));
  if (op == "addcmul") return addcmul(x[0], x[1], x[2], dkw(c, "value"));
  if (op == "addcdiv") return x[0].addcdiv(x[1], x[2], dkw(c, "value"));
  if (op == "addbmm") return addbmm(x[0], x[1], x[2], dkw(c, "beta"), dkw(c, "alpha"));
  if (op == "addmv") return addmv(x[0], x[1], x[2], dkw(c, "beta"), dkw(c, "alpha"));
  if (op == "addr") return addr(x[0], x[1], x[2], dkw(c, "beta"), dkw(c, "alpha"));
  if (op == "chain_matmul") return chain_matmul(x);
  if (op == "ger") return ger(x[0], x[1]);
  if (op == "vdot") return vdot(x[0], x[1]);
  if (op == "logdet") return logdet(x[0]);
  // pdist
  return pdist(x[0], c.kwargs.at("p").is_string() ? std::numeric_limits<double>::infinity() : dkw(c, "p"));
}

Tensor R(IntArrayRef shape) { return randn(shape, TensorOptions(kFloat64).requires_grad()); }
}  // namespace

TEST_CASE("index more: PyTorch 1.13 values and gradients on every device", "[index_more]") {
  const std::set<std::string> ops = {
      "index_copy",  "index_fill", "index_fill_tensor", "index_reduce", "put",     "argwhere", "isin",
      "isin_scalar", "diagflat",   "combinations",      "vander",       "addcmul", "addcdiv",  "addbmm",
      "addmv",       "addr",       "chain_matmul",      "ger",          "vdot",    "logdet",   "pdist"};
  const auto seen =
      wick::test::check_oracle_ops(ops, run, {1e-10, 1e-9, 1e-12, true, wick::test::OracleDtype::kRequire});
  for (const std::string& op : ops) {
    INFO(op);
    CHECK(seen.by_op.count(op) == 1);
  }
  CHECK(seen.total >= 77);
}

TEST_CASE("index more: float64 gradchecks and double backward", "[index_more]") {
  manual_seed(32);
  // Distinct indices where the last write wins: with repeats PyTorch's formula (every repeat gets
  // the gradient, checked by hand and against PyTorch) is not the derivative.
  const Tensor i3 = i64({3, 0, 3}, {3});
  CHECK_GRADCHECKS(
      [&](const TL& x) {
        return TL{index_copy(x[0], 1, i64({3, 0, 2}, {3}), x[1])};
      },
      {R({2, 4}), R({2, 3})});
  CHECK_GRADCHECKS(
      [&](const TL& x) {
        return TL{index_fill(x[0], 1, i64({-1, 0, 3}, {3}), x[1])};
      },
      {R({2, 4}), R({})});
  for (const char* r : {"prod", "mean", "amax", "amin"}) {
    INFO(r);
    CHECK_GRADCHECKS(
        [&](const TL& x) {
          return TL{index_reduce(x[0], 0, i3, x[1], r), index_reduce(x[0], 0, i3, x[1], r, false)};
        },
        {R({4, 2}), R({3, 2})});
  }
  CHECK_GRADCHECKS(
      [](const TL& x) {
        const Tensor i = i64({5, -2, 0, 2}, {2, 2});
        return TL{put(x[0], i, x[1]), put(x[0], i, x[1], true)};
      },
      {R({2, 3}), R({2, 2})});
  CHECK_GRADCHECKS(
      [](const TL& x) {
        return TL{diagflat(x[0], 1), combinations(x[1], 2), combinations(x[1], 3, true), vander(x[1]),
                  vander(x[1], 3, true)};
      },
      {R({2, 2}), f64({0.5, 0.0, -1.5, 2.0}, {4}).requires_grad_()});
  CHECK_GRADCHECKS(
      [](const TL& x) {
        return TL{addcmul(x[0], x[1], x[2], -0.5), addcdiv(x[0], x[1], abs(x[2]) + 0.5, 2.0)};
      },
      {R({3, 4}), R({4}), R({3, 1})});
  CHECK_GRADCHECKS(
      [](const TL& x) {
        return TL{addbmm(x[0], x[1], x[2], 0.5, 2.0), addbmm(x[0], x[1], x[2], 0.0, -1.0)};
      },
      {R({3, 1}), R({2, 3, 4}), R({2, 4, 5})});
  CHECK_GRADCHECKS(
      [](const TL& x) {
        return TL{addmv(x[0], x[1], x[2], 2.0, 0.5), addr(x[1], x[0], x[3], 0.5, 3.0), ger(x[0], x[3]),
                  vdot(x[2], x[3])};
      },
      {R({3}), R({3, 4}), R({4}), R({4})});
  CHECK_GRADCHECKS(
      [](const TL& x) {
        return TL{chain_matmul(x), chain_matmul({x[0]})};
      },
      {R({2, 5}), R({5, 3}), R({3, 4})});
  Tensor a = R({2, 3, 3});
  CHECK_GRADCHECKS([](const TL& x) { return TL{logdet(matmul(x[0], transpose(x[0], 1, 2)) + 0.5)}; }, {a});
  for (double p : {2.0, 1.0, 3.0, 0.5, std::numeric_limits<double>::infinity()}) {
    INFO("p = " << p);
    CHECK_GRADCHECKS([p](const TL& x) { return TL{pdist(x[0], p)}; }, {R({4, 3})});
  }
}

TEST_CASE("index more: repeated indices, NaN, empty and 0-d inputs by hand", "[index_more]") {
  // index_copy: the last of repeated slices wins; both repeats get the slice's gradient.
  Tensor self = zeros({3}, TensorOptions(kFloat64).requires_grad());
  Tensor src = f64({1, 2, 3}, {3}).requires_grad_();
  Tensor out = index_copy(self, 0, i64({2, 0, 2}, {3}), src);
  CHECK(doubles(out) == std::vector<double>{2, 0, 3});
  out.backward(f64({10, 20, 30}, {3}));
  CHECK(doubles(self.grad()) == std::vector<double>{0, 20, 0});
  CHECK(doubles(src.grad()) == std::vector<double>{30, 10, 30});
  // index_fill's tensor value gets the sum over the distinct slices filled.
  Tensor v = scalar_tensor(4.0, kFloat64).requires_grad_();
  Tensor filled = index_fill(zeros({3, 2}, kFloat64), 0, i64({1, 1, -1}, {3}), v);
  CHECK(doubles(filled) == std::vector<double>{0, 0, 4, 4, 4, 4});
  filled.sum().backward();
  CHECK(v.grad().item<double>() == 4.0);
  // put: accumulate adds repeats; without, the last wins; negative positions count from the end.
  CHECK(doubles(put(zeros({2, 2}, kFloat64), i64({-1, 3, 0}, {3}), f64({1, 2, 5}, {3}), true)) ==
        std::vector<double>{5, 0, 0, 3});
  CHECK(doubles(put(zeros({2, 2}, kFloat64), i64({-1, 3}, {2}), f64({1, 2}, {2}))) == std::vector<double>{0, 0, 0, 2});
  // index_reduce: integer mean is floor division; an empty index copies self.
  CHECK(longs(index_reduce(zeros({3}, kInt64), 0, i64({0, 0}, {2}), i64({3, 4}, {2}), "mean", false)) ==
        std::vector<int64_t>{3, 0, 0});
  CHECK(doubles(index_reduce(f64({1, 2}, {2}), 0, i64({}, {0}), zeros({0}, kFloat64), "prod")) ==
        std::vector<double>{1, 2});
  // argwhere: NaN counts as nonzero; a 0-d input gives [1, 0] or [0, 0].
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(longs(argwhere(f64({0, nan, 0, 2}, {2, 2}))) == std::vector<int64_t>{0, 1, 1, 1});
  CHECK(argwhere(scalar_tensor(2.0)).sizes() == IntArrayRef({1, 0}));
  CHECK(argwhere(scalar_tensor(0.0)).sizes() == IntArrayRef({0, 0}));
  // isin: NaN is in nothing, -0.0 equals 0.0, an empty test set holds nothing, scalar forms.
  CHECK(longs(isin(f64({nan, -0.0, 1.0}, {3}), f64({nan, 0.0}, {2}))) == std::vector<int64_t>{0, 1, 0});
  CHECK(longs(isin(f64({1.0}, {1}), zeros({0}, kFloat64), false, true)) == std::vector<int64_t>{1});
  CHECK(isin(Scalar(int64_t{2}), i64({1, 2}, {2})).item<bool>());
  CHECK(longs(isin(i64({1, 2}, {2}), Scalar(int64_t{2}), false, true)) == std::vector<int64_t>{1, 0});
  // combinations and vander at their edges.
  CHECK(combinations(f64({1, 2}, {2}), 0).sizes() == IntArrayRef({0}));
  CHECK(combinations(f64({1, 2}, {2}), 3).sizes() == IntArrayRef({0, 3}));
  CHECK(doubles(combinations(f64({1, 2}, {2}), 2, true)) == std::vector<double>{1, 1, 1, 2, 2, 2});
  CHECK(vander(f64({1, 2}, {2}), 0).sizes() == IntArrayRef({2, 0}));
  CHECK(longs(vander(tensor(std::vector<int64_t>{1, 0}, {2}).ne(0), 2)) == std::vector<int64_t>{1, 1, 0, 1});
  CHECK(vander(i64({2}, {1}), 3).dtype() == kInt64);
  // beta 0 ignores NaN in self; integer operands with integer beta and alpha.
  CHECK(doubles(addmv(full({2}, nan, kFloat64), ones({2, 3}, kFloat64), ones({3}, kFloat64), 0, 2)) ==
        std::vector<double>{6, 6});
  CHECK(longs(addr(i64({1}, {1}), i64({1, 2}, {2}), i64({2, 3}, {2}), 2, 3)) == std::vector<int64_t>{8, 11, 14, 20});
  // logdet: NaN for a negative determinant, -inf for a singular matrix.
  CHECK(std::isnan(logdet(diag(f64({-1, 1, 1}, {3}))).item<double>()));
  CHECK(logdet(f64({1, 2, 2, 4}, {2, 2})).item<double>() == -std::numeric_limits<double>::infinity());
  CHECK(pdist(ones({1, 3}, kFloat64)).sizes() == IntArrayRef({0}));
  CHECK(nn::F::pdist(f64({0, 0, 3, 4}, {2, 2})).item<double>() == 5.0);
}

TEST_CASE("index more: in-place forms write the result and record it", "[index_more]") {
  const Tensor w = R({3, 2});
  Tensor x = w * 1.0;
  Tensor s = R({2, 2});
  x.index_copy_(0, i64({2, 0}, {2}), s);
  CHECK(doubles(x.select(0, 2)) == doubles(s.select(0, 0)));
  x.index_fill_(0, i64({1}, {1}), 7.0).put_(i64({0}, {1}), f64({-1}, {1}), true);
  CHECK(doubles(x.select(0, 1)) == std::vector<double>{7, 7});
  x.addcmul_(x, s.select(0, 1), 2.0).addcdiv_(s.select(0, 0), abs(s.select(0, 1)) + 1.0);
  x.index_reduce_(1, i64({0}, {1}), ones({3, 1}, kFloat64), "amax");
  x.sum().backward();
  const Tensor xw = w * 1.0;
  Tensor ref = index_copy(xw, 0, i64({2, 0}, {2}), s);
  ref = put(index_fill(ref, 0, i64({1}, {1}), 7.0), i64({0}, {1}), f64({-1}, {1}), true);
  ref = addcdiv(addcmul(ref, ref, s.select(0, 1), 2.0), s.select(0, 0), abs(s.select(0, 1)) + 1.0);
  ref = index_reduce(ref, 1, i64({0}, {1}), ones({3, 1}, kFloat64), "amax");
  CHECK_ALLCLOSE(x, ref, 1e-15, 0.0);
  const TL g = autograd::grad({ref.sum()}, {w, s});
  CHECK_ALLCLOSE(w.grad(), g[0], 1e-14, 1e-15);
  CHECK_ALLCLOSE(s.grad(), g[1], 1e-14, 1e-15);
  Tensor m = zeros({2, 3}, kFloat64);
  m.addbmm_(ones({2, 2, 1}, kFloat64), ones({2, 1, 3}, kFloat64), 1, 0.5)
      .addr_(ones({2}, kFloat64), ones({3}, kFloat64));
  CHECK(doubles(m) == std::vector<double>(6, 2.0));
  Tensor v = ones({2}, kFloat64);
  v.addmv_(ones({2, 3}, kFloat64), ones({3}, kFloat64), 2, 1);
  CHECK(doubles(v) == std::vector<double>{5, 5});
}

TEST_CASE("index more: typed errors name the op and write nothing", "[index_more]") {
  using wick::test::expect_error;
  Tensor a = zeros({3, 2}, kFloat64);
  const auto untouched = [&] { CHECK(doubles(a) == std::vector<double>(6, 0.0)); };
  expect_error<IndexError>([&] { a.index_copy_(0, i64({3}, {1}), ones({1, 2}, kFloat64)); }, {"index_copy", "3"});
  expect_error<IndexError>([&] { a.index_copy_(0, i64({-1}, {1}), ones({1, 2}, kFloat64)); }, {"index_copy", "-1"});
  expect_error<TypeError>([&] { a.index_copy_(0, i64({0}, {1}), ones({1, 2}, kFloat32)); }, {"index_copy", "float32"});
  expect_error<IndexError>(
      [&] {
        a.index_copy_(0, i64({0, 1}, {2}), ones({1, 2}, kFloat64));
      },
      {"index_copy", "[1, 2]"});
  expect_error<TypeError>([&] { a.index_fill_(1, f64({0}, {1}), 1.0); }, {"index_fill", "int64"});
  expect_error<IndexError>([&] { a.index_fill_(1, i64({-3}, {1}), 1.0); }, {"index_fill", "-3"});
  expect_error<ValueError>([&] { a.index_fill_(1, i64({0}, {1}), ones({1}, kFloat64)); }, {"index_fill", "0-d"});
  expect_error<ValueError>(
      [&] {
        a.index_reduce_(0, i64({0}, {1}), ones({1, 2}, kFloat64), "sum");
      },
      {"index_reduce", "sum"});
  expect_error<IndexError>(
      [&] {
        a.index_reduce_(0, i64({5}, {1}), ones({1, 2}, kFloat64), "prod");
      },
      {"index_reduce", "5"});
  expect_error<IndexError>([&] { a.put_(i64({6}, {1}), ones({1}, kFloat64)); }, {"put", "6"});
  expect_error<IndexError>([&] { a.put_(i64({0, 1}, {2}), ones({1}, kFloat64)); }, {"put", "elements"});
  expect_error<ValueError>([&] { a.addcmul_(ones({2, 3, 2}, kFloat64), ones({2}, kFloat64)); }, {"addcmul_", "shape"});
  untouched();
  expect_error<TypeError>([&] { addcdiv(a, i64({1}, {1}), i64({2}, {1})); }, {"addcdiv", "integer"});
  expect_error<TypeError>([&] { addcmul(i64({1}, {1}), i64({1}, {1}), i64({1}, {1}), 0.5); }, {"addcmul", "value"});
  expect_error<TypeError>([&] { addr(i64({1}, {1}), i64({1}, {1}), i64({1}, {1}), 0.5); }, {"addr", "beta"});
  expect_error<ValueError>([&] { addmv(a, ones({2, 3}, kFloat64), ones({2}, kFloat64)); }, {"addmv", "[2, 3]"});
  expect_error<ValueError>([&] { addbmm(a, ones({2, 3}, kFloat64), ones({2, 3, 2}, kFloat64)); }, {"addbmm"});
  expect_error<ValueError>([&] { chain_matmul({ones({3}, kFloat64)}); }, {"chain_matmul", "2-d"});
  expect_error<TypeError>([&] { vdot(ones({3}, kFloat64), ones({3}, kFloat32)); }, {"vdot", "dtype"});
  expect_error<ValueError>([&] { logdet(ones({2, 3}, kFloat64)); }, {"logdet", "square"});
  expect_error<ValueError>([&] { pdist(ones({3}, kFloat64)); }, {"pdist", "2-d"});
  expect_error<TypeError>([&] { isin(ones({2}, kBool), ones({2}, kBool)); }, {"isin", "bool"});
  expect_error<ValueError>([&] { combinations(ones({2, 2}, kFloat64)); }, {"combinations", "1-d"});
  expect_error<ValueError>([&] { vander(ones({2}, kFloat64), -1); }, {"vander", "N"});
  expect_error<ValueError>([&] { combinations(ones({100}, kFloat64), 20); }, {"combinations", "2^34"});
  Tensor leaf = zeros({2}, TensorOptions(kFloat64).requires_grad());
  expect_error<StateError>([&] { leaf.put_(i64({0}, {1}), ones({1}, kFloat64)); }, {"put_", "leaf"});
}
