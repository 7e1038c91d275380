// F::interpolate's trilinear, bicubic and area modes and Upsample with them: the PyTorch oracle's
// cases (generate.py's interp_modes_cases, selected by op name) forward at rtol 1e-12 and every
// gradient at rtol 1e-10 in float64, on every test device, Upsample giving the same values;
// small cases worked by hand (bicubic's overshoot of a step, area's windows); float64 gradchecks
// and double backward; the layer's prints (PyTorch 1.13's); bad input as typed errors that name
// the op, the mode and the shape.
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/gradcheck.h"
#include "support/oracle.h"
#include "support/oracle_checks.h"
#include "support/small_tensors.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using Catch::Matchers::Contains;
using wick::test::OracleCase;
using TL = std::vector<Tensor>;

namespace {
constexpr double kOutRtol = 1e-12, kGradRtol = 1e-10, kAtol = 1e-13;
const TensorOptions kF64(kFloat64);
using O = F::InterpolateFuncOptions;

F::InterpolateMode mode_named(const std::string& s) {
  for (auto m : {F::kTrilinear, F::kBicubic, F::kArea})
    if (s == F::interpolate_mode_name(m)) return m;
  FAIL("unknown mode " << s);
  return F::kArea;
}

O options_of(const OracleCase& c) {
  O o;
  const auto& k = c.kwargs;
  o.mode(mode_named(k.at("mode").get<std::string>()));
  if (!k.at("size").is_null()) o.size(k.at("size").get<std::vector<int64_t>>());
  if (!k.at("scale_factor").is_null()) o.scale_factor(k.at("scale_factor").get<std::vector<double>>());
  if (!k.at("align_corners").is_null()) o.align_corners(k.at("align_corners").get<bool>());
  if (!k.at("recompute_scale_factor").is_null()) o.recompute_scale_factor(k.at("recompute_scale_factor").get<bool>());
  return o;
}

using wick::test::f64;
Tensor rnd(IntArrayRef shape) { return wick::randn(shape, kF64).requires_grad_(true); }
Tensor resize(const Tensor& x, F::InterpolateMode mode, std::vector<int64_t> size, bool ac = false) {
  O o = O().mode(mode).size(std::move(size));
  if (mode != F::kArea) o.align_corners(ac);
  return F::interpolate(x, o);
}
}  // namespace

TEST_CASE("interpolate matches PyTorch 1.13: trilinear bicubic and area up and down", "[nn][oracle][interpolate]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "interpolate_trilinear" && c.op != "interpolate_bicubic" && c.op != "interpolate_area") continue;
    const O o = options_of(c);
    REQUIRE(c.op == std::string("interpolate_") + F::interpolate_mode_name(o.mode()));
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      const auto x = c.leaves(dev);
      const Tensor out = F::interpolate(x[0], o);
      REQUIRE(out.sizes() == c.out.sizes());
      CHECK(out.device() == dev);
      wick::test::check_oracle_case(c, out, x, dev, kOutRtol, kGradRtol, kAtol);
      if (!o.recompute_scale_factor().value_or(false)) {  // Upsample is interpolate with the same options
        Upsample up(UpsampleOptions()
                        .size(o.size())
                        .scale_factor(o.scale_factor())
                        .mode(o.mode())
                        .align_corners(o.align_corners()));
        CHECK_ALLCLOSE(up(x[0].detach()), c.out.to(dev), kOutRtol, kAtol);
      }
    }
    ++seen[F::interpolate_mode_name(o.mode())];
    if (o.align_corners().value_or(false)) ++seen["align_corners"];
    if (o.size()) ++seen["size"];
    if (o.scale_factor() && o.scale_factor()->size() > 1) ++seen["a factor per dim"];
    if (o.recompute_scale_factor()) ++seen["recompute"];
    if (c.out.max().item<double>() > c.inputs[0].max().item<double>() + 1e-3) ++seen["overshoot"];
  }
  for (const char* kind : {"align_corners", "size", "a factor per dim", "recompute", "overshoot"}) {
    INFO(kind);
    CHECK(seen[kind] >= 1);
  }
  CHECK(seen["trilinear"] >= 9);
  CHECK(seen["bicubic"] >= 13);
  CHECK(seen["area"] >= 9);
}

TEST_CASE("bicubic by hand: a step overshoots and its border taps are clamped", "[nn][interpolate]") {
  // [0, 0, 1, 1] to 8 wide (scale 1/2): x = j / 2 - 1/4, taps floor(x) - 1 .. floor(x) + 2 clamped
  // into [0, 3], weights (A = -0.75) at t = 1/4: -0.10546875, 0.87890625, 0.26171875, -0.03515625
  // and reversed at t = 3/4. The height (1 -> 1, t = 0) reads one row with weight 1.
  const std::vector<double> step_out{0, -0.03515625, -0.10546875, 0.2265625, 0.7734375, 1.10546875, 1.03515625, 1};
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor x = f64({0, 0, 1, 1}, {1, 1, 1, 4}, dev).requires_grad_(true);
    const Tensor y = resize(x, F::kBicubic, {1, 8});
    CHECK(y.device() == dev);
    CHECK_ALLCLOSE(y, f64(step_out, {1, 1, 1, 8}), 0, 1e-15);
    // The gradient of the sum: each input position gets the weights it was read with. Output 0
    // reads position 0 through three clamped taps; every output's weights sum to 1.
    sum(y).backward();
    CHECK_ALLCLOSE(sum(x.grad()), f64({8}, {}), 0, 1e-14);
    // align_corners, 2 -> 3 wide: the middle reads -1 -> 0, 0, 1, 2 -> 1 at t = 1/2 with weights
    // -0.09375, 0.59375, 0.59375, -0.09375: (a + b) / 2; the ends are the inputs.
    CHECK_ALLCLOSE(resize(f64({2, 6}, {1, 1, 1, 2}, dev), F::kBicubic, {1, 3}, true), f64({2, 4, 6}, {1, 1, 1, 3}), 0,
                   1e-15);
    // A size equal to the input's reads each position with weight 1 (size given: scale 1, t = 0).
    const Tensor r = wick::randn({2, 3, 4, 5}, kF64).to(dev);
    CHECK_ALLCLOSE(resize(r, F::kBicubic, {4, 5}), r, 0, 0);
    CHECK_ALLCLOSE(resize(r, F::kBicubic, {4, 5}, true), r, 0, 0);
  }
}

TEST_CASE("trilinear and area by hand", "[nn][interpolate]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    // The 2 x 2 x 2 cube 0..7 to 3 x 3 x 3 with align_corners: corners kept, the centre the mean.
    const Tensor cube = f64({0, 1, 2, 3, 4, 5, 6, 7}, {1, 1, 2, 2, 2}, dev);
    const Tensor t = resize(cube, F::kTrilinear, {3, 3, 3}, true);
    CHECK(t.sizes() == IntArrayRef({1, 1, 3, 3, 3}));
    CHECK_ALLCLOSE(t.select(2, 1).select(2, 1).select(2, 1), f64({3.5}, {1, 1}), 0, 1e-15);
    CHECK_ALLCLOSE(t.select(2, 2).select(2, 2).select(2, 2), f64({7}, {1, 1}), 0, 0);
    // Depth and height unchanged (copied), the width 2 -> 4 without align_corners: 0, 1, 3, 4.
    CHECK_ALLCLOSE(resize(f64({0, 4}, {1, 1, 1, 1, 2}, dev), F::kTrilinear, {1, 1, 4}),
                   f64({0, 1, 3, 4}, {1, 1, 1, 1, 4}), 0, 1e-15);
    // Area: 0..5 to 3 is the mean of pairs; to 4 the windows [0, 2) [1, 3) [3, 5) [4, 6) overlap.
    const Tensor six = f64({0, 1, 2, 3, 4, 5}, {1, 1, 6}, dev);
    CHECK_ALLCLOSE(resize(six, F::kArea, {3}), f64({0.5, 2.5, 4.5}, {1, 1, 3}), 0, 1e-15);
    CHECK_ALLCLOSE(F::interpolate(six, O().mode(F::kArea).scale_factor(std::vector<double>{0.5})),
                   f64({0.5, 2.5, 4.5}, {1, 1, 3}), 0, 1e-15);
    CHECK_ALLCLOSE(resize(six, F::kArea, {4}), f64({0.5, 1.5, 3.5, 4.5}, {1, 1, 4}), 0, 1e-15);
    // A scale factor is recomputed into a size: 0.5 on the cube is its mean.
    CHECK_ALLCLOSE(F::interpolate(cube, O().mode(F::kArea).scale_factor(std::vector<double>{0.5})),
                   f64({3.5}, {1, 1, 1, 1, 1}), 0, 1e-15);
    CHECK_ALLCLOSE(resize(f64({1, 2, 3, 6}, {1, 1, 2, 2}, dev), F::kArea, {1, 2}), f64({2, 4}, {1, 1, 1, 2}), 0, 1e-15);
  }
}

TEST_CASE("float32 follows float64 in the new modes", "[nn][interpolate]") {
  const Tensor x = wick::randn({1, 2, 3, 4, 5}, kF64);
  const Tensor x4 = x.select(2, 0);
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    auto close = [&](const Tensor& in, const O& o) {
      const Tensor y64 = F::interpolate(in.to(dev), o), y32 = F::interpolate(in.to(dev).to(kFloat32), o);
      CHECK(y32.dtype() == kFloat32);
      CHECK_ALLCLOSE(y32.to(kFloat64), y64, 1e-5, 1e-5);
    };
    close(x, O().mode(F::kTrilinear).scale_factor(std::vector<double>{1.5, 0.7, 2}));
    close(x4, O().mode(F::kBicubic).scale_factor(std::vector<double>{1.7}).align_corners(true));
    close(x4, O().mode(F::kBicubic).size(std::vector<int64_t>{2, 9}));
    close(x, O().mode(F::kArea).size(std::vector<int64_t>{2, 3, 7}));
  }
}

TEST_CASE("gradcheck and double backward: trilinear bicubic and area", "[nn][gradcheck][interpolate]") {
  wick::manual_seed(67);
  for (bool ac : {false, true}) {
    auto tri = [ac](const TL& x) {
      return TL{F::interpolate(x[0], O().size(std::vector<int64_t>{3, 2, 4}).mode(F::kTrilinear).align_corners(ac))};
    };
    CHECK_GRADCHECK(tri, TL{rnd({1, 2, 2, 3, 2})});
    auto cub = [ac](const TL& x) {
      return TL{
          F::interpolate(x[0], O().scale_factor(std::vector<double>{1.5, 0.7}).mode(F::kBicubic).align_corners(ac))};
    };
    CHECK_GRADCHECK(cub, TL{rnd({1, 2, 3, 5})});
    wick::test::check_double_backward(cub, TL{rnd({1, 1, 3, 4})});
  }
  auto cub_small = [](const TL& x) {
    return TL{F::interpolate(x[0], O().size(std::vector<int64_t>{4, 3}).mode(F::kBicubic))};
  };
  CHECK_GRADGRADCHECK(cub_small, TL{rnd({1, 1, 2, 2})});
  for (const std::vector<int64_t>& size : {std::vector<int64_t>{5}, {2, 4}, {3, 1, 2}}) {
    auto area = [size](const TL& x) { return TL{F::interpolate(x[0], O().size(size).mode(F::kArea))}; };
    std::vector<int64_t> shape{2, 2};
    for (size_t i = 0; i < size.size(); ++i) shape.push_back(static_cast<int64_t>(3 + i));
    CHECK_GRADCHECK(area, TL{rnd(shape)});
    wick::test::check_double_backward(area, TL{rnd(shape)});
  }
}

TEST_CASE("Upsample prints the new modes as PyTorch 1.13", "[nn][interpolate]") {
  // print(nn.Upsample(scale_factor=2, mode="bicubic")), ...
  CHECK(Upsample(UpsampleOptions().scale_factor(std::vector<double>{2}).mode(F::kBicubic))->to_string() ==
        "Upsample(scale_factor=2.0, mode=bicubic)");
  CHECK(Upsample(UpsampleOptions().size(std::vector<int64_t>{2, 3, 4}).mode(F::kTrilinear))->to_string() ==
        "Upsample(size=(2, 3, 4), mode=trilinear)");
  CHECK(Upsample(UpsampleOptions().scale_factor(std::vector<double>{0.5, 2}).mode(F::kArea))->to_string() ==
        "Upsample(scale_factor=(0.5, 2.0), mode=area)");
}

TEST_CASE("the new modes refuse bad input with typed errors naming the mode and the shape",
          "[nn][interpolate][errors]") {
  const std::vector<double> two{2};
  const Tensor x3 = wick::randn({1, 2, 4}), x4 = wick::randn({1, 2, 4, 4}), x5 = wick::randn({1, 2, 2, 2, 2});
  // align_corners with area is a ValueError (PyTorch's), as with the nearest modes.
  CHECK_THROWS_AS(F::interpolate(x3, O().mode(F::kArea).scale_factor(two).align_corners(false)), ValueError);
  CHECK_THROWS_WITH(F::interpolate(x4, O().mode(F::kArea).size(std::vector<int64_t>{2}).align_corners(true)),
                    Contains("interpolate") && Contains("align_corners") && Contains("area"));
  // The rank each mode takes: NotImplementedError (PyTorch's).
  CHECK_THROWS_AS(F::interpolate(x3, O().mode(F::kBicubic).scale_factor(two)), NotImplementedError);
  CHECK_THROWS_WITH(F::interpolate(x5, O().mode(F::kBicubic).scale_factor(two)),
                    Contains("interpolate") && Contains("bicubic") && Contains("[1, 2, 2, 2, 2]"));
  CHECK_THROWS_WITH(F::interpolate(x4, O().mode(F::kTrilinear).scale_factor(two)),
                    Contains("interpolate") && Contains("trilinear") && Contains("5-d") && Contains("[1, 2, 4, 4]"));
  CHECK_THROWS_AS(F::interpolate(x3, O().mode(F::kTrilinear).scale_factor(two)), NotImplementedError);
  CHECK_THROWS_AS(F::interpolate(wick::randn({2, 4}), O().mode(F::kArea).scale_factor(two)), NotImplementedError);
  CHECK_THROWS_WITH(F::interpolate(wick::randn({1, 1, 2, 2, 2, 2}), O().mode(F::kArea).scale_factor(two)),
                    Contains("area") && Contains("[1, 1, 2, 2, 2, 2]"));
  // Sizes: a count that fits neither one nor every spatial dim, an output size of 0 (PyTorch's
  // area returns an empty tensor; wick refuses it as the other modes do).
  CHECK_THROWS_AS(F::interpolate(x5, O().mode(F::kTrilinear).scale_factor(std::vector<double>{2, 2})), ValueError);
  CHECK_THROWS_AS(F::interpolate(x3, O().mode(F::kArea).size(std::vector<int64_t>{0})), ValueError);
  CHECK_THROWS_AS(F::interpolate(x3, O().mode(F::kArea).scale_factor(std::vector<double>{0.1})), ValueError);
  CHECK_THROWS_AS(F::interpolate(x4, O().mode(F::kBicubic).size(std::vector<int64_t>{3}).recompute_scale_factor(true)),
                  ValueError);
  CHECK_THROWS_AS(
      F::interpolate(wick::ones({1, 1, 2, 2}, TensorOptions(kInt64)), O().mode(F::kBicubic).scale_factor(two)),
      TypeError);
  CHECK_THROWS_AS(F::interpolate(wick::ones({1, 1, 2}, TensorOptions(kInt64)), O().mode(F::kArea).scale_factor(two)),
                  TypeError);
}
