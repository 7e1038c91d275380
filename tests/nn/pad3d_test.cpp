// ReflectionPad3d, ReplicationPad3d and F::pad's reflect, replicate and circular modes on 5-d
// input: the PyTorch oracle's cases (generate.py's pad3d_cases, selected by op name) forward at
// rtol 1e-12 and the input gradient at rtol 1e-10 in float64, through the layer and through
// F::pad, on every test device; small examples and their gradients worked by hand; float64
// gradchecks and double backward; PyTorch 1.13's prints; bad input as typed errors naming the
// layer, the pads and the shape.
#include <catch2/catch.hpp>
#include <map>
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

// The case's padding: one int (every side) or the six pads, as given to PyTorch.
std::vector<int64_t> pads_of(const OracleCase& c) {
  const auto& p = c.kwargs.at("padding");
  if (p.is_number_integer()) return std::vector<int64_t>(6, p.get<int64_t>());
  auto v = p.get<std::vector<int64_t>>();
  REQUIRE(v.size() == 6u);
  return v;
}

// The layer a case names, built as the case built PyTorch's (from one int, or from six).
Tensor apply_layer(const OracleCase& c, const Tensor& x) {
  const auto& p = c.kwargs.at("padding");
  if (c.op == "reflection_pad3d")
    return p.is_number_integer() ? ReflectionPad3d(p.get<int64_t>())(x) : ReflectionPad3d(pads_of(c))(x);
  REQUIRE(c.op == "replication_pad3d");
  return p.is_number_integer() ? ReplicationPad3d(p.get<int64_t>())(x) : ReplicationPad3d(pads_of(c))(x);
}

// [[[0, 1, 2], [3, 4, 5]], [[6, 7, 8], [9, 10, 11]]]: value 6 d + 3 h + w at (d, h, w).
Tensor arange12(Device dev) {
  std::vector<double> v(12);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  return tensor(v, {1, 1, 2, 2, 3}, kF64).to(dev);
}

Tensor rnd(IntArrayRef shape) { return wick::randn(shape, kF64).requires_grad_(true); }
}  // namespace

TEST_CASE("ReflectionPad3d and ReplicationPad3d match PyTorch 1.13 as layers and as F::pad", "[nn][oracle][pad3d]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "reflection_pad3d" && c.op != "replication_pad3d") continue;
    const std::vector<int64_t> pads = pads_of(c);
    const PadMode mode = c.op == "reflection_pad3d" ? kReflect : kReplicate;
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      const TL x = c.leaves(dev);
      const Tensor layer_out = apply_layer(c, x[0]);
      REQUIRE(layer_out.sizes() == c.out.sizes());
      wick::test::check_oracle_case(c, layer_out, x, dev, kOutRtol, kGradRtol, kAtol);
      const TL y = c.leaves(dev);
      const Tensor f_out = F::pad(y[0], pads, mode);
      REQUIRE(f_out.sizes() == c.out.sizes());
      wick::test::check_oracle_case(c, f_out, y, dev, kOutRtol, kGradRtol, kAtol);
    }
    ++seen[c.op];
    ++seen[c.inputs[0].dim() == 4 ? "unbatched" : "batched"];
    if (c.kwargs.at("padding").is_number_integer()) ++seen["one int"];
    bool cropping = false, all_zero = true;
    for (int64_t p : pads) {
      cropping = cropping || p < 0;
      all_zero = all_zero && p == 0;
    }
    if (cropping) ++seen[c.op + " cropping"];
    if (all_zero) ++seen["all zero"];
  }
  for (const char* kind : {"reflection_pad3d", "replication_pad3d", "reflection_pad3d cropping",
                           "replication_pad3d cropping", "unbatched", "batched", "one int"}) {
    INFO(kind);
    CHECK(seen[kind] >= 1);
  }
  CHECK(seen["all zero"] >= 2);
  CHECK(seen["reflection_pad3d"] + seen["replication_pad3d"] >= 12);
}

TEST_CASE("F::pad in mode circular on 5-d input matches PyTorch 1.13", "[nn][oracle][pad3d]") {
  int seen = 0;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "circular_pad3d") continue;
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      const TL x = c.leaves(dev);
      const Tensor out = F::pad(x[0], pads_of(c), kCircular);
      REQUIRE(out.sizes() == c.out.sizes());
      wick::test::check_oracle_case(c, out, x, dev, kOutRtol, kGradRtol, kAtol);
    }
    ++seen;
  }
  CHECK(seen >= 3);
}

TEST_CASE("3-d padding by hand: values, counted reads as the gradient, cropping, zero pads", "[nn][pad3d]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    {
      // Width mirrored by one on each side ([1, 0, 1, 2, 1]), depth by one in front ([1, 0, 1]).
      const Tensor x = arange12(dev).requires_grad_(true);
      const Tensor y = ReflectionPad3d(std::vector<int64_t>{1, 1, 0, 0, 1, 0})(x);
      CHECK(y.sizes() == IntArrayRef({1, 1, 3, 2, 5}));
      CHECK(y.device() == dev);
      CHECK_VALUES(y,
                   {7, 6, 7, 8, 7, 10, 9, 10, 11, 10, 1, 0, 1, 2, 1, 4, 3, 4, 5, 4, 7, 6, 7, 8, 7, 10, 9, 10, 11, 10});
      sum(y).backward();
      // Reads of (d, h, w): depth 1 or 2 times, width 1, 3 or 1 times.
      CHECK_VALUES(x.grad(), {1, 3, 1, 1, 3, 1, 2, 6, 2, 2, 6, 2});
    }
    {
      // Width [0, 1, 2, 2, 2], height [0, 0, 1], depth [0, 1, 1].
      const Tensor x = arange12(dev).requires_grad_(true);
      const Tensor y = ReplicationPad3d(std::vector<int64_t>{0, 2, 1, 0, 0, 1})(x);
      CHECK(y.sizes() == IntArrayRef({1, 1, 3, 3, 5}));
      CHECK_VALUES(y, {0, 1, 2, 2,  2,  0,  1,  2, 2, 2, 3, 4, 5, 5, 5, 6, 7, 8, 8,  8,  6,  7, 8,
                       8, 8, 9, 10, 11, 11, 11, 6, 7, 8, 8, 8, 6, 7, 8, 8, 8, 9, 10, 11, 11, 11});
      sum(y).backward();
      CHECK_VALUES(x.grad(), {2, 2, 6, 1, 1, 3, 4, 4, 12, 2, 2, 6});
    }
    const Tensor x = arange12(dev);
    // A negative pad crops: reflect and replicate pad first, then crop.
    CHECK_VALUES(ReplicationPad3d(std::vector<int64_t>{-1, 0, 0, 0, 0, 0})(x), {1, 2, 4, 5, 7, 8, 10, 11});
    CHECK_VALUES(ReflectionPad3d(std::vector<int64_t>{-2, 2, 0, 0, 0, 0})(x), {2, 1, 0, 5, 4, 3, 8, 7, 6, 11, 10, 9});
    CHECK(ReplicationPad3d(std::vector<int64_t>{-3, 0, 0, 0, 0, 0})(x).sizes() == IntArrayRef({1, 1, 2, 2, 0}));
    // A one-element input replicated to every side; a reflected unbatched [C, D, H, W] input.
    CHECK_VALUES(ReplicationPad3d(1)(tensor(std::vector<double>{5}, {1, 1, 1, 1}, kF64).to(dev)),
                 std::vector<double>(27, 5.0));
    CHECK(ReflectionPad3d(1)(x[0]).sizes() == IntArrayRef({1, 4, 4, 5}));
    // Zero pads give a copy, as PyTorch: writing to it leaves the input alone.
    Tensor same = ReflectionPad3d(0)(x);
    CHECK(same.sizes() == x.sizes());
    same.fill_(-1.0);
    CHECK_VALUES(x[0][0][0][0], {0, 1, 2});
    // An empty batch passes through; the layers equal F::pad with their mode.
    CHECK(ReflectionPad3d(1)(zeros({0, 2, 2, 2, 2}, kF64.device(dev))).sizes() == IntArrayRef({0, 2, 4, 4, 4}));
    const Tensor r = wick::randn({2, 3, 3, 4, 5}, kF64).to(dev);
    const std::vector<int64_t> p{2, 1, 0, 3, 1, 2};
    CHECK_ALLCLOSE(ReflectionPad3d(p)(r), F::pad(r, p, kReflect), 0, 0);
    CHECK_ALLCLOSE(ReplicationPad3d(p)(r), F::pad(r, p, kReplicate), 0, 0);
    // float32 gives float64's values rounded.
    CHECK_ALLCLOSE(ReplicationPad3d(p)(r.to(kFloat32)), F::pad(r, p, kReplicate).to(kFloat32), 0, 0);
  }
}

TEST_CASE("3-d padding gradchecks and double backward in float64", "[nn][pad3d]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    auto on = [dev](IntArrayRef shape) { return wick::randn(shape, kF64).to(dev).requires_grad_(true); };
    ReflectionPad3d reflect(std::vector<int64_t>{1, 2, 0, 1, 2, -1});
    ReplicationPad3d replicate(std::vector<int64_t>{2, -1, 1, 0, 0, 3});
    auto fr = [&](const TL& x) { return TL{reflect(x[0])}; };
    auto fp = [&](const TL& x) { return TL{replicate(x[0])}; };
    auto fc = [](const TL& x) { return TL{F::pad(x[0], {1, 0, 2, 1, 0, 2}, kCircular)}; };
    CHECK_GRADCHECK(fr, TL{on({1, 2, 3, 2, 3})});
    CHECK_GRADCHECK(fp, TL{on({2, 1, 2, 3, 2})});
    CHECK_GRADCHECK(fc, TL{on({1, 1, 3, 3, 2})});
    wick::test::check_double_backward(fr, TL{on({1, 1, 3, 2, 3})});
    wick::test::check_double_backward(fp, TL{on({1, 2, 2, 2, 2})});
    wick::test::check_double_backward(fc, TL{on({1, 1, 2, 3, 2})});
  }
  CHECK_GRADGRADCHECK([](const TL& x) { return TL{ReflectionPad3d(1)(x[0])}; }, TL{rnd({1, 1, 2, 2, 3})});
  CHECK_GRADGRADCHECK([](const TL& x) { return TL{ReplicationPad3d(1)(x[0])}; }, TL{rnd({1, 2, 2, 2})});
}

TEST_CASE("ReflectionPad3d and ReplicationPad3d print as PyTorch 1.13 and have LibTorch's options", "[nn][pad3d]") {
  // print(nn.ReflectionPad3d((1, 1, 2, 0, 1, 1))), print(nn.ReplicationPad3d(2)), ...
  CHECK(ReflectionPad3d(std::vector<int64_t>{1, 1, 2, 0, 1, 1})->to_string() == "ReflectionPad3d((1, 1, 2, 0, 1, 1))");
  CHECK(ReplicationPad3d(2)->to_string() == "ReplicationPad3d((2, 2, 2, 2, 2, 2))");
  CHECK(ReflectionPad3d(ReflectionPad3dOptions(0))->to_string() == "ReflectionPad3d((0, 0, 0, 0, 0, 0))");
  CHECK(Sequential(ReflectionPad3d(1), ReplicationPad3d(std::vector<int64_t>{0, 1, 0, 1, 0, 1}))->to_string() ==
        "Sequential(\n"
        "  (0): ReflectionPad3d((1, 1, 1, 1, 1, 1))\n"
        "  (1): ReplicationPad3d((0, 1, 0, 1, 0, 1))\n"
        ")");
  ReplicationPad3d m(ReplicationPad3dOptions({1, 2, 3, 4, 5, 6}));
  CHECK(m->options().padding() == std::vector<int64_t>{1, 2, 3, 4, 5, 6});
  CHECK(ReflectionPad3dOptions(3).padding() == std::vector<int64_t>(6, 3));
  CHECK(m->named_parameters().size() == 0u);
  CHECK(m->named_buffers().size() == 0u);
  const std::shared_ptr<ReplicationPad3dImpl> copy = m->clone();
  CHECK(copy->to_string() == m->to_string());
  CHECK(copy->options().padding() == m->options().padding());
}

TEST_CASE("3-d padding refuses what PyTorch 1.13 refuses, with typed errors naming the layer, pads and shape",
          "[nn][pad3d][errors]") {
  const Tensor x = zeros({1, 2, 3, 4, 4}, kF64);
  // The pad count is checked when the layer is built (PyTorch 1.13 fails at the forward).
  CHECK_THROWS_AS(ReflectionPad3d(std::vector<int64_t>{1, 2}), ValueError);
  CHECK_THROWS_WITH(ReplicationPad3d(std::vector<int64_t>{1, 2, 3, 4}),
                    Contains("ReplicationPad3d") && Contains("one int or 6 ints") && Contains("got 4"));
  // Reflect: each pad below the size of its dim (PyTorch: "Padding size should be less than the
  // corresponding input dimension").
  CHECK_THROWS_AS(ReflectionPad3d(3)(x), ValueError);
  CHECK_THROWS_WITH(ReflectionPad3d(3)(x), Contains("ReflectionPad3d((3, 3, 3, 3, 3, 3))") &&
                                               Contains("mode reflect") && Contains("below the size") &&
                                               Contains("dim 2 of size 3") && Contains("[1, 2, 3, 4, 4]"));
  CHECK_THROWS_AS(ReflectionPad3d(std::vector<int64_t>{0, 0, 0, 0, 0, 3})(x), ValueError);
  CHECK_NOTHROW(ReflectionPad3d(std::vector<int64_t>{3, 3, 3, 3, 2, 2})(x));
  // Ranks: a 4-d [C, D, H, W] or 5-d [N, C, D, H, W] input (NotImplementedError, as PyTorch).
  CHECK_THROWS_AS(ReflectionPad3d(1)(zeros({3, 4, 4}, kF64)), NotImplementedError);
  CHECK_THROWS_WITH(ReplicationPad3d(1)(zeros({3, 4, 4}, kF64)), Contains("ReplicationPad3d((1, 1, 1, 1, 1, 1))") &&
                                                                     Contains("mode replicate") &&
                                                                     Contains("[3, 4, 4]"));
  CHECK_THROWS_AS(ReplicationPad3d(1)(zeros({1, 1, 2, 2, 2, 2}, kF64)), NotImplementedError);
  CHECK_THROWS_AS(F::pad(zeros({2, 3, 3, 3}, kF64), {1, 1, 1, 1, 1, 1}, kCircular), NotImplementedError);
  CHECK_THROWS_WITH(F::pad(zeros({2, 3, 3, 3}, kF64), {1, 1, 1, 1, 1, 1}, kCircular), Contains("unsqueeze(0)"));
  // Empty dims other than the batch dim.
  CHECK_THROWS_AS(ReplicationPad3d(1)(zeros({2, 0, 3, 4, 4}, kF64)), ValueError);
  CHECK_THROWS_WITH(ReflectionPad3d(1)(zeros({2, 0, 3, 4, 4}, kF64)),
                    Contains("ReflectionPad3d") && Contains("dim 1 of input [2, 0, 3, 4, 4] is empty"));
  CHECK_THROWS_AS(ReflectionPad3d(1)(zeros({0, 3, 4, 4}, kF64)), ValueError);
  // A crop past the input's size.
  CHECK_THROWS_AS(ReplicationPad3d(std::vector<int64_t>{-3, -2, 0, 0, 0, 0})(x), ValueError);
  CHECK_THROWS_WITH(ReplicationPad3d(std::vector<int64_t>{-3, -2, 0, 0, 0, 0})(x), Contains("negative size -1"));
  // Circular wraps at most once.
  CHECK_THROWS_AS(F::pad(x, {0, 0, 0, 0, 4, 0}, kCircular), ValueError);
  CHECK_THROWS_WITH(F::pad(x, {0, 0, 0, 0, 4, 0}, kCircular), Contains("at most once") && Contains("[1, 2, 3, 4, 4]"));
  CHECK_THROWS_AS(ReflectionPad3d(1)(Tensor()), ValueError);
}
