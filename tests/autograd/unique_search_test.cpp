// unique, unique_dim, unique_consecutive, bincount, histc, searchsorted and bucketize: PyTorch
// 1.13's values (generate.py's count_search_build_cases, selected by op name) on every test device, hand
// cases for what the oracle leaves out (NaN, sorted = false, empty inputs, dtypes, Tensor
// methods), no grad_fn on any output, and the typed errors naming the op and the shapes.
#include <catch2/catch.hpp>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/expect_error.h"
#include "support/oracle.h"
#include "support/oracle_checks.h"
#include "support/small_tensors.h"
#include "wick/autograd/functions.h"
#include "wick/core/error.h"

using namespace wick;
using wick::test::check_error;
using wick::test::OracleCase;

namespace {
const double kNan = std::numeric_limits<double>::quiet_NaN();

using wick::test::f64;
using wick::test::i64;

std::optional<int64_t> dim_kw(const OracleCase& c) {
  if (!c.kwargs.contains("dim") || c.kwargs["dim"].is_null()) return std::nullopt;
  return c.kwargs["dim"].get<int64_t>();
}

// The part of a (values, inverse, counts) triple that the case names.
Tensor part(const std::tuple<Tensor, Tensor, Tensor>& r, const OracleCase& c) {
  const std::string p = c.kwargs.at("part").get<std::string>();
  return p == "values" ? std::get<0>(r) : p == "inverse" ? std::get<1>(r) : std::get<2>(r);
}

Tensor run_case(const OracleCase& c, const std::vector<Tensor>& x, Device) {
  if (c.op == "unique") return part(unique(x[0], true, true, true, dim_kw(c)), c);
  if (c.op == "unique_consecutive") return part(unique_consecutive(x[0], true, true, dim_kw(c)), c);
  if (c.op == "bincount") return bincount(x[0], x.size() > 1 ? x[1] : Tensor(), c.kw("minlength", int64_t{0}));
  if (c.op == "histc") return histc(x[0], c.kw("bins", int64_t{100}), c.kw("min", 0.0), c.kw("max", 0.0));
  if (c.op == "searchsorted") {
    std::optional<std::string_view> side;
    const std::string s = c.kwargs["side"].is_null() ? "" : c.kwargs["side"].get<std::string>();
    if (!s.empty()) side = s;
    return searchsorted(x[0], x[1], false, c.kw("right", false), side, x.size() > 2 ? x[2] : Tensor());
  }
  return bucketize(x[0], x[1], false, c.kw("right", false));
}

}  // namespace

TEST_CASE("unique bincount histc searchsorted and bucketize match PyTorch 1.13's values",
          "[autograd][oracle][unique]") {
  // Exact values; no input is differentiable, so check_oracle_case checks no gradient.
  std::map<std::string, int> seen =
      wick::test::check_oracle_ops({"unique", "unique_consecutive", "bincount", "histc", "searchsorted", "bucketize"},
                                   run_case, {})
          .by_op;
  CHECK(seen["unique"] >= 20);
  CHECK(seen["unique_consecutive"] >= 10);
  CHECK(seen["bincount"] >= 3);
  CHECK(seen["histc"] >= 5);
  CHECK(seen["searchsorted"] >= 10);
  CHECK(seen["bucketize"] >= 2);
}

TEST_CASE("unique by hand: NaN sorted false empty inputs bool and no grad_fn", "[autograd][unique]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    // NaNs sort last and each is a value of its own (PyTorch 1.13 misplaces them).
    const Tensor x = f64({3, 1, kNan, 1, kNan, 2, 3}, {7}, dev).requires_grad_(true);
    auto [v, inv, cnt] = unique(x, true, true, true);
    CHECK(v.device() == dev);
    CHECK_ALLCLOSE(v, f64({1, 2, 3, kNan, kNan}, {5}, kCPU), 0.0, 0.0);  // NaN matches NaN
    CHECK_VALUES(inv, {2, 0, 3, 0, 4, 1, 2});
    CHECK_VALUES(cnt, {2, 1, 2, 1, 1});
    CHECK_FALSE(v.requires_grad());  // not differentiable: no grad_fn (PyTorch's raises at backward)
    CHECK(v.grad_fn() == nullptr);
    // sorted = false still sorts; inverse and counts are empty [0] unless asked for.
    auto [v2, inv2, cnt2] = unique(i64({2, 1, 2, 5}, {4}, dev), false);
    CHECK_VALUES(v2, {1, 2, 5});
    CHECK(inv2.sizes() == IntArrayRef({0}));
    CHECK(cnt2.sizes() == IntArrayRef({0}));
    CHECK(inv2.dtype() == kInt64);
    // A 0-d input gives a 1-d result and a 0-d inverse.
    auto [v3, inv3, cnt3] = unique(f64({2.5}, {}, dev), true, true, true);
    CHECK(v3.sizes() == IntArrayRef({1}));
    CHECK(inv3.dim() == 0);
    // bool keeps its dtype.
    auto [vb, invb, cntb] =
        unique(tensor(std::vector<int64_t>{1, 0, 1}, {3}, TensorOptions(kBool)).to(dev), true, true, true);
    CHECK(vb.dtype() == kBool);
    CHECK_VALUES(vb, {0, 1});
    CHECK_VALUES(cntb, {1, 2});
    // unique_dim: rows compared whole; a row holding NaN is unique.
    const Tensor rows = f64({1, kNan, 0, 2, 1, kNan, 0, 2}, {4, 2}, dev);
    auto [vd, invd, cntd] = unique_dim(rows, 0, true, true, true);
    CHECK(vd.sizes() == IntArrayRef({3, 2}));
    CHECK_VALUES(invd, {1, 0, 2, 0});
    CHECK_VALUES(cntd, {2, 1, 1});
    // Empty inputs: no values; a dim of size 0 selected gives the input's shape.
    auto [ve, inve, cnte] = unique(zeros({0}, TensorOptions(kFloat32).device(dev)), true, true, true);
    CHECK(ve.numel() == 0);
    CHECK(ve.dtype() == kFloat32);
    auto [vz, invz, cntz] = unique(zeros({0, 3}, TensorOptions(kFloat64).device(dev)), true, true, true, 0);
    CHECK(vz.sizes() == IntArrayRef({0, 3}));
    // unique_consecutive: NaNs never merge.
    auto [vc, invc, cntc] = unique_consecutive(f64({1, 1, kNan, kNan, 2}, {5}, dev), true, true);
    CHECK_ALLCLOSE(vc, f64({1, kNan, kNan, 2}, {4}, kCPU), 0.0, 0.0);
    CHECK_VALUES(invc, {0, 0, 1, 2, 3});
    CHECK_VALUES(cntc, {2, 1, 1, 1});
  }
}

TEST_CASE("bincount histc searchsorted and bucketize by hand", "[autograd][unique]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor x = i64({1, 3, 1, 0}, {4}, dev);
    CHECK_VALUES(bincount(x), {1, 2, 0, 1});
    CHECK_VALUES(x.bincount({}, 6), {1, 2, 0, 1, 0, 0});
    const Tensor w32 = tensor(std::vector<double>{0.5, 1, 2, 3}, {4}, TensorOptions(kFloat32)).to(dev);
    CHECK(bincount(x, w32).dtype() == kFloat32);
    CHECK_VALUES(bincount(x, w32), {3, 2.5, 0, 1});
    CHECK(bincount(x, i64({1, 2, 3, 4}, {4}, dev)).dtype() == kFloat64);  // integer weights sum in float64
    const Tensor empty_count = bincount(i64({}, {0}, dev), f64({}, {0}, dev), 3);
    CHECK(empty_count.dtype() == kInt64);  // as PyTorch, even with weights
    CHECK_VALUES(empty_count, {0, 0, 0});
    const Tensor wg = f64({1, 2, 3, 4}, {4}, dev).requires_grad_(true);
    CHECK_FALSE(bincount(x, wg).requires_grad());

    // histc: float32 rounding decides the bin, as PyTorch's (0.3f * 10 = 3.0000001 -> bin 3).
    const Tensor h = tensor(std::vector<double>{0.1, 0.2, 0.3, 0.7, 0.9, 1.0}, {6}, TensorOptions(kFloat32)).to(dev);
    CHECK_VALUES(h.histc(10, 0, 1), {0, 1, 1, 1, 0, 0, 0, 1, 0, 2});
    // Outside the range and NaN are left out (PyTorch 1.13 puts a NaN in bin 0, Note [histc and searchsorted]).
    CHECK_VALUES(histc(f64({1, 2, 1, 2.5, 3, -1, 4, kNan}, {8}, dev), 4, 0, 3), {0, 2, 1, 2});
    CHECK_VALUES(histc(f64({2, 2}, {2}, dev), 4), {0, 0, 2, 0});  // one value: range [1, 3]
    CHECK_VALUES(histc(f64({}, {0}, dev), 3), {0, 0, 0});
    CHECK(histc(h, 3).device() == dev);

    const Tensor b = f64({1, 3, 5, 7, 9}, {5}, dev);
    const Tensor probe = f64({3, 6, 9, 3, 6, 9}, {2, 3}, dev);
    CHECK_VALUES(searchsorted(b, probe), {1, 3, 4, 1, 3, 4});
    CHECK_VALUES(searchsorted(b, probe, false, true), {2, 3, 5, 2, 3, 5});
    CHECK_VALUES(searchsorted(b, probe, false, false, "right"), {2, 3, 5, 2, 3, 5});
    CHECK_VALUES(searchsorted(f64({1, 3, 5, 7, 9, 2, 4, 6, 8, 10}, {2, 5}, dev), probe), {1, 3, 4, 1, 2, 4});
    const Tensor s = searchsorted(b, 3.0);
    CHECK(s.dim() == 0);
    CHECK_VALUES(s, {1});
    CHECK_VALUES(searchsorted(f64({5, 1, 9, 3, 7}, {5}, dev), f64({3, 6}, {2}, dev), false, false, std::nullopt,
                              i64({1, 3, 0, 4, 2}, {5}, dev)),
                 {1, 3});
    CHECK_VALUES(searchsorted(i64({1, 3, 5}, {3}, dev), f64({3.5, 6}, {2}, dev)), {2, 3});  // promoted
    CHECK_VALUES(searchsorted(f64({1, 2, kNan}, {3}, dev), f64({kNan, 1.5}, {2}, dev)), {3, 1});
    CHECK_VALUES(searchsorted(f64({}, {0}, dev), f64({3, 6}, {2}, dev)), {0, 0});
    CHECK_VALUES(bucketize(probe, b, false, true), {2, 3, 5, 2, 3, 5});
    CHECK_VALUES(bucketize(6.0, b), {3});
    const Tensor pg = probe.detach().requires_grad_(true);
    CHECK_FALSE(searchsorted(b, pg).requires_grad());
    CHECK(bucketize(pg, b).device() == dev);
  }
}

TEST_CASE("unique bincount histc and searchsorted errors name the op and the shapes", "[autograd][unique][errors]") {
  const TensorOptions f(kFloat64);
  const Tensor v = tensor(std::vector<int64_t>{1, 2}, {2}, TensorOptions(kInt64));
  check_error<IndexError>([&] { unique(tensor({2.0}, {}, f), true, false, false, 0); }, {"unique", "0-d"});
  check_error<IndexError>([&] { unique_dim(zeros({2, 3}, f), 2); }, {"unique_dim", "dim 2"});
  check_error<ValueError>([&] { unique(zeros({3, 0}, f), true, false, false, 0); }, {"unique", "[3, 0]", "size 0"});
  check_error<ValueError>([&] { unique_consecutive(zeros({0, 0}, f), false, false, 0); }, {"more than one dim"});
  check_error<ValueError>([&] { bincount(tensor(std::vector<int64_t>{1, -1}, {2})); }, {"bincount", "-1"});
  check_error<ValueError>([&] { bincount(tensor(std::vector<int64_t>{1}, {1, 1})); }, {"bincount", "1-d", "[1, 1]"});
  check_error<TypeError>([&] { bincount(zeros({2}, f)); }, {"bincount", "int64", "float64"});
  check_error<ValueError>([&] { bincount(v, zeros({3}, f)); }, {"bincount", "weights [3]", "length 2"});
  check_error<ValueError>([&] { bincount(v, {}, -1); }, {"minlength", "-1"});
  check_error<ValueError>([&] { histc(zeros({2}, f), 3, 3, 1); }, {"histc", "max must be larger than min"});
  check_error<ValueError>([&] { histc(zeros({2}, f), 0); }, {"histc", "bins"});
  check_error<ValueError>([&] { histc(tensor({1.0, kNan}, f), 3); }, {"histc", "not finite", "[2]"});
  check_error<TypeError>([&] { histc(v, 3); }, {"histc", "floating"});
  const Tensor bd = zeros({2, 5}, f);
  check_error<ValueError>([&] { searchsorted(bd, zeros({3}, f)); }, {"searchsorted", "[2, 5]", "[3]"});
  check_error<ValueError>([&] { searchsorted(bd, zeros({1, 3}, f)); }, {"searchsorted", "[2, 5]", "[1, 3]"});
  check_error<ValueError>([&] { searchsorted(tensor({1.0}, {}, f), zeros({3}, f)); }, {"searchsorted", "0-d"});
  check_error<ValueError>([&] { searchsorted(zeros({5}, f), zeros({2}, f), false, false, std::nullopt, v); },
                          {"searchsorted", "sorter [2]", "[5]"});
  check_error<IndexError>(
      [&] {
        searchsorted(zeros({2}, f), zeros({2}, f), false, false, std::nullopt, tensor(std::vector<int64_t>{0, 2}, {2}));
      },
      {"searchsorted", "sorter holds 2"});
  check_error<TypeError>([&] { searchsorted(zeros({2}, f), zeros({2}, f), false, false, std::nullopt, zeros({2}, f)); },
                         {"sorter must be int64"});
  check_error<ValueError>([&] { searchsorted(zeros({2}, f), zeros({2}, f), false, true, "left"); }, {"opposite"});
  check_error<ValueError>([&] { searchsorted(zeros({2}, f), zeros({2}, f), false, false, "middle"); }, {"middle"});
  check_error<NotImplementedError>([&] { searchsorted(zeros({2}, f), zeros({2}, f), true); }, {"int32"});
  check_error<ValueError>([&] { bucketize(zeros({2}, f), bd); }, {"bucketize", "1-d", "[2, 5]"});
  check_error<Error>([&] { searchsorted(zeros({2}, f), zeros({2}, f).to(Device("cpu:1"))); },
                     {"searchsorted", "cpu:1"});
}

// Hostile sizes and ranges: bincount's largest value + 1 overflowing int64 or asking for more
// memory than exists, and histc bins computed past the input dtype's range, are typed errors or
// the right bin, never an out-of-range write or conversion.
TEST_CASE("bincount and histc at the edges of int64 and float32", "[autograd][unique][errors]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const TensorOptions i64 = TensorOptions(kInt64).device(dev);
    const int64_t top = std::numeric_limits<int64_t>::max();
    check_error<ValueError>(
        [&] {
          bincount(tensor(std::vector<int64_t>{0, top}, {2}, i64));
        },
        {"bincount", "9223372036854775807", "int64"});
    // 2^62 counts of 8 bytes: a typed error from the allocation, not std::length_error.
    check_error<Error>([&] { bincount(tensor(std::vector<int64_t>{int64_t{1} << 62}, {1}, i64)); },
                       {"[4611686018427387905]"});
    check_error<Error>([&] { bincount(tensor(std::vector<int64_t>{1}, {1}, i64), {}, int64_t{1} << 62); },
                       {"[4611686018427387904]"});
    // float32 over [-3e38, 3e38]: (x - min) * bins overflows float32; the bin is still found.
    const TensorOptions f32 = TensorOptions(kFloat32).device(dev);
    const Tensor wide = tensor({-3e38, 0.0, 3e38, 1e38}, {4}, f32);
    CHECK_VALUES(histc(wide, 4, -3e38, 3e38), {1, 0, 2, 1});
    // A range that is finite in float64 but not in float32 is refused.
    check_error<ValueError>([&] { histc(tensor({1.0}, {1}, f32), 4, -1e39, 1e39); },
                            {"histc", "float32", "not finite"});
    // A NaN is left out whatever the range.
    const double nan = std::numeric_limits<double>::quiet_NaN();
    CHECK_VALUES(histc(tensor({nan, 0.5}, {2}, TensorOptions(kFloat64).device(dev)), 2, 0, 1), {0, 1});
  }
}
