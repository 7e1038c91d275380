// Fold / Unfold, LocalResponseNorm, LPPool1d/2d and MaxUnpool1d/2d/3d with their F:: functions:
// the PyTorch oracle's cases (generate.py's fold_pool_cases, selected by op name) forward and input
// gradient in float64 through F:: and through the layer on every test device; examples worked by
// hand (the last of repeated unpooling indices wins); fold as unfold's adjoint; float64 gradchecks
// and double backward; PyTorch 1.13's prints; bad input as typed errors naming the op and shapes.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/gradcheck.h"
#include "support/oracle.h"
#include "support/oracle_checks.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using Catch::Matchers::Contains;
using wick::test::OracleCase;
using TL = std::vector<Tensor>;

namespace {
constexpr double kOutRtol = 1e-12, kGradRtol = 1e-10, kAtol = 1e-13;
const TensorOptions kF64(kFloat64);

std::vector<int64_t> ints(const OracleCase& c, const char* key) { return c.kwargs.at(key).get<std::vector<int64_t>>(); }
Int2 int2(const OracleCase& c, const char* key) {
  const auto v = ints(c, key);
  REQUIRE(v.size() == 2u);
  return Int2(v[0], v[1]);
}
Int3 int3(const OracleCase& c, const char* key) {
  const auto v = ints(c, key);
  REQUIRE(v.size() == 3u);
  return Int3(v[0], v[1], v[2]);
}
std::optional<std::vector<int64_t>> out_size(const OracleCase& c) {
  if (c.kwargs.at("output_size").is_null()) return std::nullopt;
  return ints(c, "output_size");
}

// The case's op through F:: (layer false) or through its layer (layer true).
Tensor run(const OracleCase& c, const TL& x, bool layer) {
  if (c.op == "unfold") {
    const auto o = UnfoldOptions(int2(c, "kernel_size"))
                       .dilation(int2(c, "dilation"))
                       .padding(int2(c, "padding"))
                       .stride(int2(c, "stride"));
    return layer ? Unfold(o)(x[0]) : F::unfold(x[0], o.kernel_size(), o.dilation(), o.padding(), o.stride());
  }
  if (c.op == "fold") {
    const auto o = FoldOptions(int2(c, "output_size"), int2(c, "kernel_size"))
                       .dilation(int2(c, "dilation"))
                       .padding(int2(c, "padding"))
                       .stride(int2(c, "stride"));
    return layer ? Fold(o)(x[0])
                 : F::fold(x[0], o.output_size(), o.kernel_size(), o.dilation(), o.padding(), o.stride());
  }
  if (c.op == "local_response_norm") {
    const auto o = LocalResponseNormOptions(c.kw<int64_t>("size", 0))
                       .alpha(c.kw("alpha", 0.0))
                       .beta(c.kw("beta", 0.0))
                       .k(c.kw("k", 0.0));
    return layer ? LocalResponseNorm(o)(x[0]) : F::local_response_norm(x[0], o.size(), o.alpha(), o.beta(), o.k());
  }
  const double p = c.kw("norm_type", 0.0);
  const bool ceil = c.kw("ceil_mode", false);
  if (c.op == "lp_pool1d") {
    const int64_t k = c.kw<int64_t>("kernel_size", 0), s = c.kw<int64_t>("stride", k);
    return layer ? LPPool1d(LPPool1dOptions(p, k).stride(s).ceil_mode(ceil))(x[0]) : F::lp_pool1d(x[0], p, k, s, ceil);
  }
  if (c.op == "lp_pool2d") {
    const Int2 k = int2(c, "kernel_size"), s = c.kwargs.contains("stride") ? int2(c, "stride") : k;
    return layer ? LPPool2d(LPPool2dOptions(p, k).stride(s).ceil_mode(ceil))(x[0]) : F::lp_pool2d(x[0], p, k, s, ceil);
  }
  const auto size = out_size(c);
  if (c.op == "max_unpool1d") {
    const int64_t k = ints(c, "kernel_size")[0], s = ints(c, "stride")[0], pad = ints(c, "padding")[0];
    return layer ? MaxUnpool1d(MaxUnpool1dOptions(k).stride(s).padding(pad))(x[0], x[1], size)
                 : F::max_unpool1d(x[0], x[1], k, s, pad, size);
  }
  if (c.op == "max_unpool2d" || c.op == "max_unpool2d_dup") {
    const Int2 k = int2(c, "kernel_size"), s = int2(c, "stride"), pad = int2(c, "padding");
    return layer ? MaxUnpool2d(MaxUnpool2dOptions(k).stride(s).padding(pad))(x[0], x[1], size)
                 : F::max_unpool2d(x[0], x[1], k, s, pad, size);
  }
  REQUIRE(c.op == "max_unpool3d");
  const Int3 k = int3(c, "kernel_size"), s = int3(c, "stride"), pad = int3(c, "padding");
  return layer ? MaxUnpool3d(MaxUnpool3dOptions(k).stride(s).padding(pad))(x[0], x[1], size)
               : F::max_unpool3d(x[0], x[1], k, s, pad, size);
}

Tensor on(Device dev, IntArrayRef shape) { return wick::randn(shape, kF64).to(dev).requires_grad_(true); }
Tensor ints_on(Device dev, const std::vector<int64_t>& v, IntArrayRef shape) {
  return tensor(v, shape, TensorOptions(kInt64)).to(dev);
}
}  // namespace

TEST_CASE("fold unfold local_response_norm lp_pool and max_unpool match PyTorch 1.13", "[nn][oracle][fold_pool]") {
  const std::vector<std::string> ops{"unfold",       "fold",         "local_response_norm",
                                     "lp_pool1d",    "lp_pool2d",    "max_unpool1d",
                                     "max_unpool2d", "max_unpool3d", "max_unpool2d_dup"};
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (std::find(ops.begin(), ops.end(), c.op) == ops.end()) continue;
    for (Device dev : wick::test::test_devices()) {
      for (bool layer : {false, true}) {
        INFO(c.label() << " on " << dev.str() << (layer ? " as a layer" : " through F::"));
        const TL x = c.leaves(dev);
        const Tensor out = run(c, x, layer);
        REQUIRE(out.sizes() == c.out.sizes());
        if (c.op == "max_unpool2d_dup") {  // PyTorch's gradient is not the forward's (Note [max_unpool as a scatter])
          CHECK(out.device() == dev);
          CHECK_ALLCLOSE(out, c.out, kOutRtol, kAtol);
        } else {
          wick::test::check_oracle_case(c, out, x, dev, kOutRtol, kGradRtol, kAtol);
        }
      }
    }
    ++seen[c.op];
    if (c.inputs[0].dim() == (c.op == "fold" ? 2 : c.op == "unfold" ? 3 : -1)) ++seen["unbatched"];
  }
  for (const std::string& op : ops) {
    INFO(op);
    CHECK(seen[op] >= 2);
  }
  CHECK(seen["unbatched"] == 2);
}

TEST_CASE("fold and unfold by hand: blocks, overlap counts, the adjoint", "[nn][fold_pool]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor x = arange(0.0, 9.0, 1.0, kF64).reshape({1, 1, 3, 3}).to(dev).requires_grad_(true);
    const Tensor cols = F::unfold(x, 2);
    CHECK(cols.sizes() == IntArrayRef({1, 4, 4}));
    CHECK(cols.device() == dev);
    // Row k = ki * 2 + kj holds x[oi + ki, oj + kj] for the blocks (oi, oj) in row-major order.
    CHECK_VALUES(cols, {0, 1, 3, 4, 1, 2, 4, 5, 3, 4, 6, 7, 4, 5, 7, 8});
    sum(cols).backward();
    const std::vector<double> counts{1, 2, 1, 2, 4, 2, 1, 2, 1};  // the blocks holding each position
    CHECK_VALUES(x.grad(), counts);
    CHECK_VALUES(F::fold(ones({1, 4, 4}, kF64.device(dev)), {3, 3}, 2), counts);
    CHECK_ALLCLOSE(F::fold(cols, {3, 3}, 2), x * tensor(counts, {3, 3}, kF64).to(dev), 0, 0);
    // Padding 1, stride 2: the four corners of the padded 5 x 5 plane; what lies in the padding is 0.
    CHECK_VALUES(F::unfold(x.detach()[0], 2, 1, 1, 2), {0, 0, 0, 4, 0, 0, 3, 5, 0, 1, 0, 7, 0, 2, 6, 8});
    CHECK(Unfold(UnfoldOptions(2).padding(1).stride(2))(x.detach()[0]).sizes() == IntArrayRef({4, 4}));
    // <unfold(a), b> == <a, fold(b)> for a geometry with dilation, padding and stride.
    const Tensor a = wick::randn({2, 3, 6, 7}, kF64).to(dev);
    const Tensor b = wick::randn({2, 3 * 2 * 3, 9}, kF64).to(dev);
    const Tensor lhs = sum(F::unfold(a, {2, 3}, {2, 1}, {1, 0}, {2, 2}) * b);
    const Tensor rhs = sum(a * F::fold(b, {6, 7}, {2, 3}, {2, 1}, {1, 0}, {2, 2}));
    CHECK_ALLCLOSE(lhs, rhs, 1e-12, 1e-12);
    // An empty batch passes through both.
    CHECK(F::unfold(zeros({0, 2, 3, 3}, kF64.device(dev)), 2).sizes() == IntArrayRef({0, 8, 4}));
    CHECK(F::fold(zeros({0, 8, 4}, kF64.device(dev)), 3, 2).sizes() == IntArrayRef({0, 2, 3, 3}));
  }
}

TEST_CASE("local_response_norm lp_pool and max_unpool by hand", "[nn][fold_pool]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    // Size 2 looks at channels c - 1 and c: 1 / (1 + (0 + 1) / 2) and 2 / (1 + (1 + 4) / 2).
    const Tensor v = tensor({1.0, 2.0}, {1, 2, 1}, kF64).to(dev);
    CHECK_ALLCLOSE(F::local_response_norm(v, 2, 1.0, 1.0, 1.0), tensor({1 / 1.5, 2 / 3.5}, {1, 2, 1}, kF64), 1e-15, 0);
    // With beta 0 the divisor is 1; an empty input is returned as it is, as PyTorch.
    CHECK_ALLCLOSE(LocalResponseNorm(LocalResponseNormOptions(3).beta(0))(v), v, 0, 0);
    const Tensor empty = zeros({0, 3, 2}, kF64.device(dev));
    CHECK(F::local_response_norm(empty, 2).is_same(empty));
    // The 2-norm of each window of two: sqrt(1 + 4) and sqrt(9 + 16); of 2 x 2 windows.
    const Tensor l = tensor({1.0, 2.0, 3.0, 4.0}, {1, 1, 4}, kF64).to(dev);
    CHECK_ALLCLOSE(F::lp_pool1d(l, 2, 2), tensor({std::sqrt(5.0), 5.0}, {1, 1, 2}, kF64), 1e-15, 0);
    CHECK_ALLCLOSE(LPPool2d(1, 2)(l.reshape({1, 2, 2})), tensor({10.0}, {1, 1, 1}, kF64), 1e-15, 0);
    // Each value written at its index of the 4 x 4 plane, zeros elsewhere; the gradient reads it back.
    const Tensor vals = tensor({1.0, 2.0, 3.0, 4.0}, {1, 1, 2, 2}, kF64).to(dev).requires_grad_(true);
    const Tensor out = F::max_unpool2d(vals, ints_on(dev, {0, 3, 9, 15}, {1, 1, 2, 2}), 2);
    CHECK(out.sizes() == IntArrayRef({1, 1, 4, 4}));
    CHECK_VALUES(out, {1, 0, 0, 2, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 4});
    sum(out * arange(0.0, 16.0, 1.0, kF64).to(dev).reshape({1, 1, 4, 4})).backward();
    CHECK_VALUES(vals.grad(), {0, 3, 9, 15});
    // Repeated indices: the last value is written (PyTorch's CPU kernel), and only it gets a gradient.
    const Tensor dup = tensor({5.0, 6.0, 7.0, 8.0}, {1, 4}, kF64).to(dev).requires_grad_(true);
    const Tensor d = F::max_unpool1d(dup, ints_on(dev, {3, 1, 3, 0}, {1, 4}), 1, 1, 0, std::vector<int64_t>{4});
    CHECK_VALUES(d, {8, 6, 0, 7});
    sum(d * tensor({1.0, 10.0, 100.0, 1000.0}, kF64).to(dev)).backward();
    CHECK_VALUES(dup.grad(), {0, 10, 1000, 1});
    // max_pool then max_unpool keeps each window's maximum in place; 3-d and 1-d indices are flat.
    const Tensor x = wick::randn({2, 3, 4, 6, 4}, kF64).to(dev);
    const auto [pooled, idx] = F::max_pool3d_with_indices(x, 2);
    const Tensor back = MaxUnpool3d(2)(pooled, idx);
    CHECK_ALLCLOSE(F::max_pool3d(where(eq(back, zeros_like(back)), full_like(back, -1e9), back), 2), pooled, 0, 0);
    CHECK_ALLCLOSE(sum(back), sum(pooled), 1e-12, 1e-12);
    // forward_value with and without output_size.
    MaxUnpool1d m(2);
    const auto [p1, i1] = F::max_pool1d_with_indices(wick::randn({2, 2, 9}, kF64).to(dev), 2);
    CHECK(m->forward_value({p1, i1}).tensor().sizes() == IntArrayRef({2, 2, 8}));
    CHECK(m->forward_value({p1, i1, Value::list({9})}).tensor().sizes() == IntArrayRef({2, 2, 9}));
    CHECK(m->forward_value({p1, i1, Value()}).tensor().sizes() == IntArrayRef({2, 2, 8}));
  }
}

TEST_CASE("fold pool gradchecks and double backward in float64", "[nn][fold_pool]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    auto fu = [](const TL& x) { return TL{F::unfold(x[0], {2, 3}, {1, 2}, {1, 1}, {2, 1})}; };
    auto ff = [](const TL& x) { return TL{F::fold(x[0], {4, 5}, {2, 3}, {1, 2}, {1, 1}, {2, 1})}; };
    auto fl = [](const TL& x) { return TL{F::local_response_norm(x[0], 3, 0.5, 0.75, 1.0)}; };
    auto fp1 = [](const TL& x) { return TL{F::lp_pool1d(x[0], 1.5, 2, 1, true)}; };
    auto fp2 = [](const TL& x) { return TL{F::lp_pool2d(x[0], 2, {2, 3}, 0, true)}; };
    const Tensor pos1 = (wick::rand({1, 2, 5}, kF64) + 0.5).to(dev).requires_grad_(true);
    const Tensor pos2 = (wick::rand({1, 2, 4, 5}, kF64) + 0.5).to(dev).requires_grad_(true);
    CHECK_GRADCHECK(fu, TL{on(dev, {1, 2, 4, 5})});
    CHECK_GRADCHECK(ff, TL{on(dev, {1, 2 * 6, 9})});
    CHECK_GRADCHECK(fl, TL{on(dev, {2, 4, 3})});
    CHECK_GRADCHECK(fp1, TL{pos1});
    CHECK_GRADCHECK(fp2, TL{pos2});
    wick::test::check_double_backward(fu, TL{on(dev, {1, 1, 4, 5})});
    wick::test::check_double_backward(ff, TL{on(dev, {1, 6, 9})});
    wick::test::check_double_backward(fl, TL{on(dev, {1, 3, 2, 2})});
    wick::test::check_double_backward(fp2, TL{pos2});
    // Unpooling with distinct and with repeated indices (the derivative of the forward in both).
    const Tensor i2 = ints_on(dev, {5, 0, 8, 3, 7, 2, 6, 1}, {2, 1, 2, 2});
    const Tensor rep = ints_on(dev, {4, 4, 1, 4, 0, 2}, {1, 2, 3});
    const Tensor i3 = ints_on(dev, {0, 7, 3, 17}, {1, 1, 2, 2});
    auto fu2 = [&](const TL& x) { return TL{F::max_unpool2d(x[0], i2, 2, 1)}; };
    auto fu1 = [&](const TL& x) { return TL{F::max_unpool1d(x[0], rep, 2)}; };
    auto fu3 = [&](const TL& x) { return TL{F::max_unpool3d(x[0], i3, {2, 2, 2}, {2, 1, 1})}; };
    CHECK_GRADCHECK(fu2, TL{on(dev, {2, 1, 2, 2})});
    CHECK_GRADCHECK(fu1, TL{on(dev, {1, 2, 3})});
    CHECK_GRADCHECK(fu3, TL{on(dev, {1, 1, 2, 2})});
    wick::test::check_double_backward(fu1, TL{on(dev, {1, 2, 3})});
  }
}

TEST_CASE("the fold and pool layers print as PyTorch 1.13 and keep LibTorch's options", "[nn][fold_pool]") {
  // print(nn.Fold((4, 5), 2)), print(nn.Unfold(3, stride=2)), print(nn.LPPool1d(1.5, 3, 2, True)), ...
  CHECK(Fold(FoldOptions({4, 5}, 2))->to_string() ==
        "Fold(output_size=(4, 5), kernel_size=2, dilation=1, padding=0, stride=1)");
  CHECK(Unfold(UnfoldOptions(3).stride(2))->to_string() == "Unfold(kernel_size=3, dilation=1, padding=0, stride=2)");
  CHECK(LPPool1d(LPPool1dOptions(1.5, 3).stride(2).ceil_mode(true))->to_string() ==
        "LPPool1d(norm_type=1.5, kernel_size=3, stride=2, ceil_mode=True)");
  CHECK(LPPool2d(LPPool2dOptions(2, {3, 2}).stride(1))->to_string() ==
        "LPPool2d(norm_type=2, kernel_size=(3, 2), stride=1, ceil_mode=False)");
  CHECK(MaxUnpool1d(2)->to_string() == "MaxUnpool1d(kernel_size=(2,), stride=(2,), padding=(0,))");
  CHECK(MaxUnpool2d(MaxUnpool2dOptions(2).stride(1).padding(1))->to_string() ==
        "MaxUnpool2d(kernel_size=(2, 2), stride=(1, 1), padding=(1, 1))");
  CHECK(MaxUnpool3d(Int3(2, 1, 2))->to_string() ==
        "MaxUnpool3d(kernel_size=(2, 1, 2), stride=(2, 1, 2), padding=(0, 0, 0))");
  CHECK(LocalResponseNorm(2)->to_string() == "LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)");
  CHECK(LocalResponseNorm(LocalResponseNormOptions(3).alpha(1e-5).beta(0.5))->to_string() ==
        "LocalResponseNorm(3, alpha=1e-05, beta=0.5, k=1.0)");
  CHECK(LPPool2dOptions(2, 3).stride() == Int2(3));
  CHECK(MaxUnpool3dOptions(Int3(2, 1, 2)).stride() == Int3(2, 1, 2));
  const auto copy = LPPool2d(2, 3)->clone();
  CHECK(copy->to_string() == LPPool2d(2, 3)->to_string());
  CHECK(LocalResponseNorm(2)->named_parameters().size() == 0u);
}

TEST_CASE("fold pool refuse bad input with typed errors naming the op and shapes", "[nn][fold_pool][errors]") {
  const Tensor x = zeros({2, 3, 4, 5}, kF64);
  // fold: the blocks of output_size must be the input's last dim; dim 1 a multiple of kH * kW.
  CHECK_THROWS_AS(F::fold(zeros({2, 12, 12}, kF64), {4, 6}, 2), ValueError);
  CHECK_THROWS_WITH(F::fold(zeros({2, 12, 12}, kF64), {4, 6}, 2),
                    Contains("fold") && Contains("3 * 5 = 15") && Contains("[2, 12, 12]") && Contains("12"));
  CHECK_THROWS_WITH(F::fold(zeros({2, 5, 12}, kF64), {4, 5}, 2), Contains("multiple") && Contains("[2, 5, 12]"));
  CHECK_THROWS_AS(Fold(FoldOptions({4, 5}, 2))(zeros({2, 3, 4, 5}, kF64)), ValueError);  // 4-d is unfold's input
  CHECK_THROWS_AS(F::fold(zeros({2, 0, 12}, kF64), {4, 5}, 2), ValueError);
  CHECK_THROWS_AS(F::fold(zeros({2, 12, 12}, kInt64), {4, 5}, 2), TypeError);
  CHECK_THROWS_AS(Fold(FoldOptions(0, 2)), ValueError);
  // unfold: rank, kernel past the padded input, geometry, empty non-batch dims, dtype.
  CHECK_THROWS_WITH(F::unfold(x[0][0], 2), Contains("unfold") && Contains("[4, 5]"));
  CHECK_THROWS_WITH(F::unfold(x, 7), Contains("unfold") && Contains("[2, 3, 4, 5]") && Contains("no block"));
  CHECK_THROWS_AS(F::unfold(x, 0), ValueError);
  CHECK_THROWS_AS(F::unfold(x, 2, 1, -1), ValueError);
  CHECK_THROWS_AS(F::unfold(x, 2, 1, 0, 0), ValueError);
  CHECK_THROWS_AS(F::unfold(zeros({2, 0, 4, 5}, kF64), 2), ValueError);
  CHECK_THROWS_AS(F::unfold(zeros({2, 3, 4, 5}, kInt64), 2), TypeError);
  CHECK_THROWS_AS(Unfold(UnfoldOptions(2).dilation(0)), ValueError);
  // local_response_norm: at least 3 dims, a size of at least 1.
  CHECK_THROWS_WITH(F::local_response_norm(zeros({2, 3}, kF64), 2),
                    Contains("local_response_norm") && Contains("[2, 3]"));
  CHECK_THROWS_AS(F::local_response_norm(x, 0), ValueError);
  CHECK_THROWS_AS(LocalResponseNorm(0), ValueError);
  // lp_pool: norm_type, and avg_pool's errors with lp_pool's name in front.
  CHECK_THROWS_AS(F::lp_pool2d(x, 0, 2), ValueError);
  CHECK_THROWS_AS(LPPool1d(std::numeric_limits<double>::infinity(), 2), ValueError);
  CHECK_THROWS_WITH(F::lp_pool2d(x, 2, 6), Contains("lp_pool2d"));
  CHECK_THROWS_WITH(F::lp_pool1d(x, 2, 2), Contains("lp_pool1d") && Contains("[2, 3, 4, 5]"));
  CHECK_THROWS_AS(LPPool2d(LPPool2dOptions(2, 2).stride(0)), ValueError);
  // max_unpool: indices out of range (checked before anything is written), shapes, dtypes, sizes.
  const Tensor v = zeros({1, 1, 2, 2}, kF64);
  const Tensor good = tensor(std::vector<int64_t>{0, 3, 9, 15}, {1, 1, 2, 2});
  CHECK_NOTHROW(F::max_unpool2d(v, good, 2));
  CHECK_THROWS_AS(F::max_unpool2d(v, tensor(std::vector<int64_t>{0, 3, 9, 16}, {1, 1, 2, 2}), 2), IndexError);
  CHECK_THROWS_WITH(F::max_unpool2d(v, tensor(std::vector<int64_t>{-1, 3, 9, 1}, {1, 1, 2, 2}), 2),
                    Contains("max_unpool2d") && Contains("-1") && Contains("[0, 16)"));
  CHECK_THROWS_WITH(F::max_unpool2d(v, good.reshape({1, 1, 4, 1}), 2),
                    Contains("max_unpool2d") && Contains("[1, 1, 4, 1]") && Contains("[1, 1, 2, 2]"));
  CHECK_THROWS_AS(F::max_unpool2d(v, good.to(kFloat64), 2), TypeError);
  CHECK_THROWS_AS(F::max_unpool2d(v[0][0], good[0][0], 2), ValueError);
  CHECK_THROWS_WITH(F::max_unpool2d(v, good, 2, 0, 0, std::vector<int64_t>{9, 4}),
                    Contains("max_unpool2d") && Contains("(9, 4)") && Contains("between 2 and 6"));
  CHECK_THROWS_WITH(F::max_unpool2d(v, good, 2, 0, 0, std::vector<int64_t>{1, 4, 4}),
                    Contains("output_size") && Contains("2 or 4"));
  CHECK_THROWS_AS(F::max_unpool2d(zeros({1, 0, 2, 2}, kF64), good.narrow(1, 0, 0), 2), ValueError);
  // kernel_size 2, stride 2, padding 1 unpool a height of 1 to 0 rows.
  CHECK_THROWS_WITH(F::max_unpool2d(zeros({1, 1, 1, 2}, kF64), good.reshape({1, 1, 1, 4}).narrow(3, 0, 2), 2, 2, 1),
                    Contains("max_unpool2d") && Contains("empty dim"));
  CHECK_THROWS_AS(F::max_unpool1d(zeros({1, 2}, kF64), tensor(std::vector<int64_t>{0, 1}, {1, 2}), 2, -1), ValueError);
  CHECK_THROWS_AS(F::max_unpool3d(zeros({1, 1, 1, 1}, kF64), tensor(std::vector<int64_t>{8}, {1, 1, 1, 1}), 2),
                  IndexError);
  CHECK_THROWS_AS(MaxUnpool2d(MaxUnpool2dOptions(2).padding(-1)), ValueError);
  CHECK_THROWS_AS(MaxUnpool1d(2)->forward_value({Value(v)}), ValueError);
  // An empty batch unpools to an empty batch.
  CHECK(F::max_unpool2d(zeros({0, 1, 2, 2}, kF64), good.narrow(0, 0, 0), 2).sizes() == IntArrayRef({0, 1, 4, 4}));
}

TEST_CASE("fold unfold and max_unpool at hostile sizes", "[nn][fold_pool]") {
  const int64_t big = int64_t{1} << 20;
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    // An empty batch of huge planes: empty results at once (the block index would be 2^40 entries).
    const Tensor x = zeros({0, 1, big, big}, kF64.device(dev)).requires_grad_(true);
    const Tensor cols = F::unfold(x, 1);
    CHECK(cols.sizes() == IntArrayRef({0, 1, big * big}));
    CHECK(cols.requires_grad());
    sum(cols).backward();
    CHECK(x.grad().sizes() == x.sizes());
    const Tensor planes = F::fold(zeros({0, 1, big * big}, kF64.device(dev)), {big, big}, 1);
    CHECK(planes.sizes() == IntArrayRef({0, 1, big, big}));
    CHECK(planes.device() == dev);
    // 2^40 x 2^40 blocks: the count overflows int64 and is refused as such.
    CHECK_THROWS_AS(F::fold(zeros({1, 1, 0}, kF64.device(dev)), {big * big, big * big}, 1), ValueError);
    CHECK_THROWS_WITH(F::fold(zeros({1, 1, 0}, kF64.device(dev)), {big * big, big * big}, 1),
                      Contains("more than int64 holds"));
    // max_unpool's window for output_size: default 2^62 + 1, stride 2^62, so def + stride overflows.
    const int64_t s = int64_t{1} << 62;
    const Tensor v = zeros({1, 1, 2}, kF64.device(dev));
    CHECK_THROWS_WITH(F::max_unpool1d(v, ints_on(dev, {0, 1}, {1, 1, 2}), 1, s, 0, std::vector<int64_t>{1}),
                      Contains("strictly between 1 and 9223372036854775807"));
  }
}
