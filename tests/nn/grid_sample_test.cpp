// F::grid_sample and F::affine_grid: the PyTorch oracle's cases (generate.py's grid_sample_cases,
// ops "grid_sample" and "affine_grid") forward and gradients in input, grid and theta, float64,
// on every test device; small cases worked by hand; affine_grid's identity through grid_sample;
// float64 gradchecks and double backward; non-finite and far positions (never read outside the
// input); bad input as typed errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/gradcheck.h"
#include "support/oracle.h"
#include "support/oracle_checks.h"
#include "support/small_tensors.h"
#include "wick/autograd/grad.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using Catch::Matchers::Contains;
using wick::test::OracleCase;
using TL = std::vector<Tensor>;

namespace {
constexpr double kOutRtol = 1e-12, kGradRtol = 1e-10, kAtol = 1e-12;
const TensorOptions kF64(kFloat64);
using GO = F::GridSampleFuncOptions;

GO options_of(const OracleCase& c) {
  const std::string mode = c.kwargs.at("mode").get<std::string>();
  const std::string padding = c.kwargs.at("padding_mode").get<std::string>();
  GO o;
  o.mode(mode == "nearest" ? F::kNearest : mode == "bicubic" ? F::kBicubic : F::kBilinear);
  o.padding_mode(padding == "border"       ? F::kBorder
                 : padding == "reflection" ? F::kReflection
                                           : F::GridSamplePadding::Zeros);
  o.align_corners(c.kwargs.at("align_corners").get<bool>());
  return o;
}

using wick::test::f64;
// Positions uniform in (-reach, reach): off the pixel grid and the borders almost surely.
Tensor positions(IntArrayRef shape, double reach) {
  return ((wick::rand(shape, kF64) * 2.0 - 1.0) * reach).requires_grad_(true);
}
Tensor rnd(IntArrayRef shape) { return wick::randn(shape, kF64).requires_grad_(true); }
}  // namespace

TEST_CASE("grid_sample and affine_grid match PyTorch 1.13", "[nn][oracle][grid_sample]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "grid_sample" && c.op != "affine_grid") continue;
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      const TL x = c.leaves(dev);
      Tensor out;
      if (c.op == "grid_sample") {
        out = F::grid_sample(x[0], x[1], options_of(c));
      } else {
        const auto size = c.kwargs.at("size").get<std::vector<int64_t>>();
        out = F::affine_grid(x[0], size, c.kwargs.at("align_corners").get<bool>());
      }
      REQUIRE(out.sizes() == c.out.sizes());
      wick::test::check_oracle_case(c, out, x, dev, kOutRtol, kGradRtol, kAtol);
    }
    if (c.op == "affine_grid") {
      ++seen[fmt::format("affine_grid {}-d", c.kwargs.at("size").size())];
      continue;
    }
    const int64_t rank = c.inputs[0].dim();
    ++seen[fmt::format("{}-d {}", rank, c.kwargs.at("mode").get<std::string>())];
    ++seen[c.kwargs.at("padding_mode").get<std::string>()];
    if (c.kwargs.at("align_corners").get<bool>()) ++seen["align_corners"];
    const double reach = max(abs(c.inputs[1])).item<double>();
    if (reach > 1) ++seen["outside"];
    if (reach > 2.5) ++seen["folds"];
  }
  for (const char* kind : {"4-d bilinear", "4-d nearest", "4-d bicubic", "5-d bilinear", "5-d nearest"}) {
    INFO(kind);
    CHECK(seen[kind] >= 6);
  }
  for (const char* kind : {"zeros", "border", "reflection", "align_corners", "outside", "affine_grid 4-d"}) {
    INFO(kind);
    CHECK(seen[kind] >= 4);
  }
  CHECK(seen["folds"] >= 4);
  CHECK(seen["affine_grid 5-d"] >= 3);
}

TEST_CASE("grid_sample by hand: positions, padding modes, gradients", "[nn][grid_sample]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor img = f64({1, 2, 3, 4}, {1, 1, 2, 2}, dev).requires_grad_(true);
    // align_corners: -1 and 1 are the pixel centres. (0.5, -0.5) is pixel (0.75, 0.25):
    // rows 1.75 and 3.75, mixed 3:1 -> 2.25.
    const Tensor g = f64({-1, -1, 1, 1, 0, 0, 0.5, -0.5}, {1, 1, 4, 2}, dev).requires_grad_(true);
    const Tensor out = F::grid_sample(img, g, GO().align_corners(true));
    CHECK(out.device() == dev);
    CHECK_ALLCLOSE(out, f64({1, 4, 2.5, 2.25}, {1, 1, 1, 4}), 1e-15, 1e-15);
    // Only the last point gets a gradient: d/dx = 0.5 * 1 (the rows rise by 1 along x),
    // d/dy = 0.5 * 2; the input gets the bilinear weights.
    Tensor gout = f64({0, 0, 0, 1}, {1, 1, 1, 4}, dev);
    auto grads = wick::autograd::grad({out}, {img, g}, {gout});
    CHECK_ALLCLOSE(grads[0], f64({0.1875, 0.5625, 0.0625, 0.1875}, {1, 1, 2, 2}), 1e-15, 1e-15);
    CHECK_ALLCLOSE(grads[1].narrow(2, 3, 1), f64({0.5, 1.0}, {1, 1, 1, 2}), 1e-15, 1e-15);
    // Without align_corners -1 is the outer edge: (-1, -1) is pixel (-0.5, -0.5). Zeros padding
    // keeps a quarter of pixel (0, 0); border clamps to it; reflection folds onto it.
    const Tensor corner = f64({-1, -1}, {1, 1, 1, 2}, dev);
    CHECK(F::grid_sample(img, corner).item<double>() == 0.25);
    CHECK(F::grid_sample(img, corner, GO().padding_mode(F::kBorder)).item<double>() == 1.0);
    CHECK(F::grid_sample(img, corner, GO().padding_mode(F::kReflection)).item<double>() == 1.0);
    // x = 1.6 is pixel 2.1, reflected about the edge 1.5 to 0.9: 0.1 * 1 + 0.9 * 2 = 1.9. With
    // align_corners (the fold at the centres 0 and 1) it is pixel 1.3, reflected to 0.7.
    const Tensor right = f64({1.6, -1}, {1, 1, 1, 2}, dev);
    CHECK_ALLCLOSE(F::grid_sample(img.detach(), right, GO().padding_mode(F::kReflection)), f64({1.9}, {1, 1, 1, 1}),
                   1e-14, 1e-14);
    CHECK_ALLCLOSE(F::grid_sample(img.detach(), right, GO().padding_mode(F::kReflection).align_corners(true)),
                   f64({1.7}, {1, 1, 1, 1}), 1e-14, 1e-14);
    // Nearest: (0.1, -0.6) is pixel (0.6, -0.1) -> (1, 0), the value 2; the grid's gradient is 0.
    const Tensor near_g = f64({0.1, -0.6}, {1, 1, 1, 2}, dev).requires_grad_(true);
    const Tensor near = F::grid_sample(img, near_g, GO().mode(F::kNearest));
    CHECK(near.item<double>() == 2.0);
    grads = wick::autograd::grad({near}, {img, near_g}, {ones_like(near)});
    CHECK_ALLCLOSE(grads[0], f64({0, 1, 0, 0}, {1, 1, 2, 2}), 0, 0);
    REQUIRE(grads[1].defined());
    CHECK_ALLCLOSE(grads[1], zeros_like(near_g), 0, 0);
    // Bicubic on a constant image is the constant inside (Keys' weights sum to 1) and with
    // border padding outside too.
    const Tensor flat = full({1, 2, 3, 4}, 5.0, kF64).to(dev);
    const Tensor far = f64({0.2, 0.3, -2.5, 0.9, 1.7, -1.3}, {1, 1, 3, 2}, dev);
    CHECK_ALLCLOSE(F::grid_sample(flat, far, GO().mode(F::kBicubic).padding_mode(F::kBorder)),
                   full({1, 2, 1, 3}, 5.0, kF64), 1e-14, 1e-14);
  }
}

TEST_CASE("affine_grid by hand and through grid_sample", "[nn][grid_sample]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor eye23 = f64({1, 0, 0, 0, 1, 0}, {1, 2, 3}, dev);
    // Pixel centres of a 2 x 2 output: +-0.5 without align_corners, +-1 with.
    CHECK_ALLCLOSE(F::affine_grid(eye23, {1, 1, 2, 2}), f64({-0.5, -0.5, 0.5, -0.5, -0.5, 0.5, 0.5, 0.5}, {1, 2, 2, 2}),
                   0, 0);
    CHECK_ALLCLOSE(F::affine_grid(eye23, {1, 1, 2, 2}, true), f64({-1, -1, 1, -1, -1, 1, 1, 1}, {1, 2, 2, 2}), 0, 0);
    // A width of 1 gives x = 0; a translation adds theta's last column.
    const Tensor shift = f64({1, 0, 0.25, 0, 1, -0.5}, {1, 2, 3}, dev);
    CHECK_ALLCLOSE(F::affine_grid(shift, {1, 3, 1, 1}), f64({0.25, -0.5}, {1, 1, 1, 2}), 0, 0);
    // The identity map samples every pixel centre: grid_sample gives the input back, in 2-d and 3-d.
    const Tensor x4 = wick::randn({2, 3, 4, 5}, kF64).to(dev);
    const Tensor x5 = wick::randn({1, 2, 3, 4, 2}, kF64).to(dev);
    const Tensor eye34 = f64({1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}, {1, 3, 4}, dev);
    for (bool ac : {false, true}) {
      const Tensor theta = cat({eye23, eye23});
      CHECK_ALLCLOSE(F::grid_sample(x4, F::affine_grid(theta, {2, 3, 4, 5}, ac), GO().align_corners(ac)), x4, 1e-13,
                     1e-13);
      CHECK_ALLCLOSE(
          F::grid_sample(x4, F::affine_grid(theta, {2, 3, 4, 5}, ac), GO().mode(F::kBicubic).align_corners(ac)), x4,
          1e-13, 1e-13);
      CHECK_ALLCLOSE(F::grid_sample(x5, F::affine_grid(eye34, {1, 2, 3, 4, 2}, ac), GO().align_corners(ac)), x5, 1e-13,
                     1e-13);
      CHECK_ALLCLOSE(
          F::grid_sample(x5, F::affine_grid(eye34, {1, 2, 3, 4, 2}, ac), GO().mode(F::kNearest).align_corners(ac)), x5,
          0, 0);
    }
  }
}

TEST_CASE("grid_sample never reads outside its input: non-finite and far positions", "[nn][grid_sample]") {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> xs = {nan, inf, -inf, 1e30, -1e30, 3e9, 0.2};
  std::vector<double> pts;
  for (double v : xs) pts.insert(pts.end(), {v, 0.1});
  for (Device dev : wick::test::test_devices()) {
    for (DType dt : {kFloat64, kFloat32}) {
      INFO(dev.str() << " " << dt);
      const Tensor img = wick::randn({1, 2, 3, 4}, TensorOptions(dt)).to(dev).requires_grad_(true);
      const Tensor g = tensor(pts, {1, 1, 7, 2}, TensorOptions(dt)).to(dev).requires_grad_(true);
      for (F::InterpolateMode mode : {F::kBilinear, F::kNearest, F::kBicubic}) {
        for (F::GridSamplePadding pad : {F::GridSamplePadding::Zeros, F::kBorder, F::kReflection}) {
          INFO(F::interpolate_mode_name(mode) << " " << F::grid_sample_padding_name(pad));
          const Tensor out = F::grid_sample(img, g, GO().mode(mode).padding_mode(pad));
          REQUIRE(out.sizes() == IntArrayRef({1, 2, 1, 7}));
          if (pad == F::GridSamplePadding::Zeros) {
            // Far or non-finite points read zeros, as PyTorch's -100 stand-in.
            CHECK(all(eq(out.narrow(3, 0, 6), zeros_like(out.narrow(3, 0, 6)))).item<bool>());
          } else if (mode != F::kBicubic) {
            CHECK(all(isfinite(out)).item<bool>());
          }
          CHECK(all(isfinite(out.narrow(3, 6, 1))).item<bool>());
          if (mode == F::kBicubic && pad != F::GridSamplePadding::Zeros) continue;  // NaN weights, as PyTorch's
          const auto grads = wick::autograd::grad({sum(out)}, {img}, {}, true, false, true);
          CHECK(all(isfinite(grads[0])).item<bool>());
        }
      }
    }
  }
}

TEST_CASE("gradcheck and double backward: grid_sample and affine_grid", "[nn][gradcheck][grid_sample]") {
  wick::manual_seed(83);
  for (F::GridSamplePadding pad : {F::GridSamplePadding::Zeros, F::kBorder, F::kReflection}) {
    for (bool ac : {false, true}) {
      INFO(F::grid_sample_padding_name(pad) << " align_corners " << ac);
      for (F::InterpolateMode mode : {F::kBilinear, F::kBicubic, F::kNearest}) {
        INFO(F::interpolate_mode_name(mode));
        const GO o = GO().mode(mode).padding_mode(pad).align_corners(ac);
        auto fn = [o](const TL& x) { return TL{F::grid_sample(x[0], x[1], o)}; };
        CHECK_GRADCHECK(fn, TL{rnd({2, 2, 3, 4}), positions({2, 3, 2, 2}, 1.4)});
      }
      auto fn5 = [pad, ac](const TL& x) {
        return TL{F::grid_sample(x[0], x[1], GO().padding_mode(pad).align_corners(ac))};
      };
      CHECK_GRADCHECK(fn5, TL{rnd({1, 2, 2, 3, 3}), positions({1, 2, 2, 2, 3}, 1.4)});
    }
  }
  for (F::InterpolateMode mode : {F::kBilinear, F::kBicubic}) {
    auto fn = [mode](const TL& x) { return TL{F::grid_sample(x[0], x[1], GO().mode(mode).padding_mode(F::kBorder))}; };
    wick::test::check_double_backward(fn, TL{rnd({1, 2, 3, 3}), positions({1, 2, 2, 2}, 1.2)});
  }
  auto refl = [](const TL& x) { return TL{F::grid_sample(x[0], x[1], GO().padding_mode(F::kReflection))}; };
  wick::test::check_double_backward(refl, TL{rnd({1, 1, 3, 4}), positions({1, 3, 2, 2}, 2.5)});
  for (bool ac : {false, true}) {
    auto a4 = [ac](const TL& x) { return TL{F::affine_grid(x[0], {2, 1, 3, 4}, ac)}; };
    CHECK_GRADCHECKS(a4, TL{rnd({2, 2, 3})});
    auto a5 = [ac](const TL& x) { return TL{F::affine_grid(x[0], {1, 1, 2, 3, 2}, ac)}; };
    CHECK_GRADCHECK(a5, TL{rnd({1, 3, 4})});
  }
  // A spatial transformer: theta -> affine_grid -> grid_sample, differentiable end to end.
  auto stn = [](const TL& x) {
    return TL{F::grid_sample(x[0], F::affine_grid(x[1], {1, 2, 3, 3}), GO().padding_mode(F::kBorder))};
  };
  CHECK_GRADCHECK(
      stn,
      TL{rnd({1, 2, 4, 4}),
         (f64({0.9, 0.1, 0.05, -0.2, 0.8, 0.1}, {1, 2, 3}) + wick::rand({1, 2, 3}, kF64) * 0.01).requires_grad_(true)});
}

TEST_CASE("float32 follows float64: grid_sample", "[nn][grid_sample]") {
  const Tensor x = wick::randn({2, 3, 4, 5}, kF64), g = (wick::rand({2, 3, 2, 2}, kF64) * 2.0 - 1.0) * 1.3;
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    for (F::InterpolateMode mode : {F::kBilinear, F::kBicubic}) {
      for (F::GridSamplePadding pad : {F::GridSamplePadding::Zeros, F::kBorder, F::kReflection}) {
        const GO o = GO().mode(mode).padding_mode(pad);
        const Tensor y64 = F::grid_sample(x.to(dev), g.to(dev), o);
        const Tensor y32 = F::grid_sample(x.to(dev).to(kFloat32), g.to(dev).to(kFloat32), o);
        CHECK(y32.dtype() == kFloat32);
        CHECK_ALLCLOSE(y32.to(kFloat64), y64, 1e-5, 1e-5);
      }
    }
  }
}

TEST_CASE("grid_sample and affine_grid refuse bad input with typed errors", "[nn][grid_sample][errors]") {
  const Tensor x = wick::randn({2, 3, 4, 5}), g = wick::rand({2, 3, 3, 2});
  CHECK_THROWS_AS(F::grid_sample(x, wick::rand({2, 3, 3, 3})), ValueError);
  CHECK_THROWS_WITH(F::grid_sample(x, wick::rand({2, 3, 3, 3})),
                    Contains("grid_sample") && Contains("last dim must be 2") && Contains("[2, 3, 3, 3]"));
  CHECK_THROWS_WITH(F::grid_sample(x, wick::rand({1, 3, 3, 2})),
                    Contains("batch size") && Contains("[2, 3, 4, 5]") && Contains("[1, 3, 3, 2]"));
  CHECK_THROWS_AS(F::grid_sample(x, wick::rand({1, 3, 3, 2})), ValueError);
  CHECK_THROWS_AS(F::grid_sample(x, g.to(kFloat64)), TypeError);
  CHECK_THROWS_WITH(F::grid_sample(x, g.to(kFloat64)), Contains("same dtype") && Contains("float64"));
  CHECK_THROWS_AS(F::grid_sample(x.to(kInt64), g.to(kInt64)), TypeError);
  CHECK_THROWS_AS(F::grid_sample(wick::randn({2, 3, 4}), wick::rand({2, 3, 2})), ValueError);
  CHECK_THROWS_AS(F::grid_sample(x, wick::rand({2, 1, 3, 3, 2})), ValueError);
  CHECK_THROWS_AS(F::grid_sample(wick::randn({2, 3, 0, 5}), g), ValueError);
  CHECK_THROWS_AS(F::grid_sample(x, g.to(Device(DeviceType::CPU, 1))), ValueError);
  CHECK_THROWS_AS(F::grid_sample(x, g, GO().mode(F::kTrilinear)), ValueError);
  CHECK_THROWS_WITH(F::grid_sample(x, g, GO().mode(F::kArea)), Contains("bilinear, nearest or bicubic"));
  CHECK_THROWS_AS(F::grid_sample(wick::randn({1, 1, 2, 2, 2}), wick::rand({1, 1, 1, 1, 3}), GO().mode(F::kBicubic)),
                  NotImplementedError);
  CHECK_THROWS_AS(GO().padding_mode(kReflect), ValueError);
  CHECK_THROWS_WITH(GO().padding_mode(kReplicate), Contains("zeros, border, reflection"));
  CHECK(GO().padding_mode(F::kZeros).padding_mode() == F::GridSamplePadding::Zeros);
  const Tensor theta = wick::randn({2, 2, 3});
  CHECK_THROWS_AS(F::affine_grid(wick::randn({2, 3, 3}), {2, 1, 4, 4}), ValueError);
  CHECK_THROWS_WITH(F::affine_grid(wick::randn({2, 3, 3}), {2, 1, 4, 4}),
                    Contains("affine_grid") && Contains("[N, 2, 3]") && Contains("[2, 3, 3]"));
  CHECK_THROWS_WITH(F::affine_grid(theta, {2, 1, 2, 4, 4}), Contains("[N, 3, 4]") && Contains("[2, 2, 3]"));
  CHECK_THROWS_AS(F::affine_grid(theta, {2, 1, 4}), NotImplementedError);
  CHECK_THROWS_WITH(F::affine_grid(theta, {3, 1, 4, 4}), Contains("batch 2") && Contains("[3, 1, 4, 4]"));
  CHECK_THROWS_AS(F::affine_grid(theta, {2, 1, 0, 4}), ValueError);
  CHECK_THROWS_AS(F::affine_grid(theta.to(kInt64), {2, 1, 4, 4}), TypeError);
}
