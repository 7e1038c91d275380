// F::interpolate's nearest and nearest-exact modes on 5-d input [N, C, D, H, W] (PyTorch's
// upsample_nearest3d) and Upsample with them: the PyTorch oracle's cases (generate.py's
// nearest3d_cases, op "interpolate_nearest3d") forward and input gradient in float64 on every test
// device, Upsample giving the same values; small cases worked by hand, one channel against
// several (PyTorch's channels-last kernel copies a dim whose size does not change); float64
// gradchecks and double backward; float32 against float64; bad input as typed errors.
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

O options_of(const OracleCase& c) {
  const auto& k = c.kwargs;
  const std::string mode = k.at("mode").get<std::string>();
  O o;
  o.mode(mode == "nearest-exact" ? F::kNearestExact : F::kNearest);
  if (!k.at("size").is_null()) o.size(k.at("size").get<std::vector<int64_t>>());
  if (!k.at("scale_factor").is_null()) o.scale_factor(k.at("scale_factor").get<std::vector<double>>());
  if (!k.at("recompute_scale_factor").is_null()) o.recompute_scale_factor(k.at("recompute_scale_factor").get<bool>());
  return o;
}

using wick::test::f64;
Tensor rnd(IntArrayRef shape) { return wick::randn(shape, kF64).requires_grad_(true); }
O scaled(F::InterpolateMode mode, std::vector<double> factor) { return O().mode(mode).scale_factor(std::move(factor)); }
O sized(F::InterpolateMode mode, std::vector<int64_t> size) { return O().mode(mode).size(std::move(size)); }
}  // namespace

TEST_CASE("interpolate matches PyTorch 1.13: nearest and nearest-exact on 5-d input", "[nn][oracle][interpolate]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "interpolate_nearest3d") continue;
    const O o = options_of(c);
    REQUIRE(c.kwargs.at("mode").get<std::string>() == F::interpolate_mode_name(o.mode()));
    REQUIRE(c.inputs[0].dim() == 5);
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      const auto x = c.leaves(dev);
      const Tensor out = F::interpolate(x[0], o);
      REQUIRE(out.sizes() == c.out.sizes());
      CHECK(out.device() == dev);
      wick::test::check_oracle_case(c, out, x, dev, kOutRtol, kGradRtol, kAtol);
      if (!o.recompute_scale_factor().value_or(false)) {  // Upsample is interpolate with the same options
        Upsample up(UpsampleOptions().size(o.size()).scale_factor(o.scale_factor()).mode(o.mode()));
        CHECK_ALLCLOSE(up(x[0].detach()), c.out.to(dev), kOutRtol, kAtol);
      }
    }
    ++seen[F::interpolate_mode_name(o.mode())];
    if (o.size()) ++seen["size"];
    if (o.scale_factor() && o.scale_factor()->size() > 1) ++seen["a factor per dim"];
    if (o.recompute_scale_factor()) ++seen["recompute"];
    if (c.inputs[0].size(1) == 1) ++seen["one channel"];
    bool down = false, up = false;
    for (int64_t d = 2; d < 5; ++d) {
      down = down || c.out.size(d) < c.inputs[0].size(d);
      up = up || c.out.size(d) > c.inputs[0].size(d);
    }
    seen["down"] += down ? 1 : 0;
    seen["up"] += up ? 1 : 0;
  }
  for (const char* kind : {"size", "a factor per dim", "recompute", "one channel", "down", "up"}) {
    INFO(kind);
    CHECK(seen[kind] >= 2);
  }
  CHECK(seen["nearest"] >= 9);
  CHECK(seen["nearest-exact"] >= 9);
}

TEST_CASE("nearest on 5-d input by hand: positions, one channel against several, gradients", "[nn][interpolate]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    // The 2 x 2 x 2 cube 0..7 doubled: each voxel fills a 2 x 2 x 2 block (floor(dst / 2)).
    const Tensor cube = f64({0, 1, 2, 3, 4, 5, 6, 7}, {1, 1, 2, 2, 2}, dev).requires_grad_(true);
    const Tensor big = F::interpolate(cube, scaled(F::kNearest, {2}));
    REQUIRE(big.sizes() == IntArrayRef({1, 1, 4, 4, 4}));
    CHECK(big.device() == dev);
    CHECK_ALLCLOSE(big.select(2, 3).select(2, 2), f64({6, 6, 7, 7}, {1, 1, 4}), 0, 0);
    sum(big).backward();  // every voxel is read 8 times
    CHECK_ALLCLOSE(cube.grad(), full({1, 1, 2, 2, 2}, 8.0, kF64), 0, 0);
    // Width 3 -> 5 by size (scale 3 / 5): nearest reads floor(0.6 dst) = 0, 0, 1, 1, 2,
    // nearest-exact floor(0.6 (dst + 0.5)) = 0, 0, 1, 2, 2.
    const Tensor row = f64({10, 20, 30}, {1, 1, 1, 1, 3}, dev);
    CHECK_ALLCLOSE(F::interpolate(row, sized(F::kNearest, {1, 1, 5})), f64({10, 10, 20, 20, 30}, {1, 1, 1, 1, 5}), 0,
                   0);
    CHECK_ALLCLOSE(F::interpolate(row, sized(F::kNearestExact, {1, 1, 5})), f64({10, 10, 20, 30, 30}, {1, 1, 1, 1, 5}),
                   0, 0);
    // Width 5 under a factor 1.1 (out = 5, scale 1 / 1.1): several channels read floor(dst / 1.1)
    // = 0, 0, 1, 2, 3; one channel (PyTorch's channels-last kernel) copies the dim, as in 4-d.
    const Tensor five = f64({0, 1, 2, 3, 4, 0, 1, 2, 3, 4}, {1, 2, 1, 1, 5}, dev);
    const O f11 = scaled(F::kNearest, {1, 1, 1.1});
    CHECK_ALLCLOSE(F::interpolate(five, f11).select(1, 0), f64({0, 0, 1, 2, 3}, {1, 1, 1, 5}), 0, 0);
    CHECK_ALLCLOSE(F::interpolate(five.narrow(1, 0, 1), f11), five.narrow(1, 0, 1), 0, 0);
    // Downsampling depth 5 -> 2 (factor 0.45, scale 1 / 0.45): planes floor(dst / 0.45) = 0, 2.
    const Tensor planes = f64({0, 1, 2, 3, 4}, {1, 1, 5, 1, 1}, dev);
    CHECK_ALLCLOSE(F::interpolate(planes, scaled(F::kNearest, {0.45, 1, 1})), f64({0, 2}, {1, 1, 2, 1, 1}), 0, 0);
    // Factor 0.7: out = floor(5 * 0.7) = 3 reading floor(dst / 0.7) = 0, 1, 2; recomputed, the
    // positions come from 5 / 3: floor(5 dst / 3) = 0, 1, 3.
    CHECK_ALLCLOSE(F::interpolate(planes, scaled(F::kNearest, {0.7, 1, 1})), f64({0, 1, 2}, {1, 1, 3, 1, 1}), 0, 0);
    CHECK_ALLCLOSE(F::interpolate(planes, scaled(F::kNearest, {0.7, 1, 1}).recompute_scale_factor(true)),
                   f64({0, 1, 3}, {1, 1, 3, 1, 1}), 0, 0);
  }
}

TEST_CASE("float32 follows float64: nearest modes on 5-d input", "[nn][interpolate]") {
  const Tensor x = wick::randn({2, 3, 3, 4, 5}, kF64);
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    for (const O& o : {scaled(F::kNearest, {1.5, 0.7, 2}), sized(F::kNearestExact, {2, 9, 4}),
                       scaled(F::kNearestExact, {0.45}).recompute_scale_factor(true)}) {
      const Tensor y64 = F::interpolate(x.to(dev), o), y32 = F::interpolate(x.to(dev).to(kFloat32), o);
      CHECK(y32.dtype() == kFloat32);
      CHECK_ALLCLOSE(y32.to(kFloat64), y64, 1e-6, 1e-6);
    }
  }
}

TEST_CASE("gradcheck and double backward: nearest modes on 5-d input", "[nn][gradcheck][interpolate]") {
  wick::manual_seed(71);
  for (F::InterpolateMode mode : {F::kNearest, F::kNearestExact}) {
    auto up = [mode](const TL& x) { return TL{F::interpolate(x[0], scaled(mode, {1.5, 2, 0.7}))}; };
    CHECK_GRADCHECK(up, TL{rnd({1, 2, 2, 3, 4})});
    wick::test::check_double_backward(up, TL{rnd({1, 1, 2, 2, 3})});
    auto sizes = [mode](const TL& x) { return TL{F::interpolate(x[0], sized(mode, {3, 1, 5}))}; };
    CHECK_GRADGRADCHECK(sizes, TL{rnd({2, 1, 2, 3, 2})});
  }
}

TEST_CASE("nearest on 5-d input refuses bad input with typed errors", "[nn][interpolate][errors]") {
  const Tensor x5 = wick::randn({1, 2, 2, 2, 2});
  // align_corners with a nearest mode is a ValueError (PyTorch's).
  CHECK_THROWS_AS(F::interpolate(x5, scaled(F::kNearest, {2}).align_corners(false)), ValueError);
  CHECK_THROWS_WITH(F::interpolate(x5, scaled(F::kNearestExact, {2}).align_corners(true)),
                    Contains("interpolate") && Contains("align_corners") && Contains("nearest-exact"));
  // 6-d and 2-d inputs: NotImplementedError naming the ranks the mode takes and the shape.
  CHECK_THROWS_AS(F::interpolate(wick::randn({1, 1, 2, 2, 2, 2}), scaled(F::kNearest, {2})), NotImplementedError);
  CHECK_THROWS_WITH(F::interpolate(wick::randn({1, 1, 2, 2, 2, 2}), scaled(F::kNearest, {2})),
                    Contains("nearest") && Contains("5-d [N, C, D, H, W]") && Contains("[1, 1, 2, 2, 2, 2]"));
  CHECK_THROWS_AS(F::interpolate(wick::randn({2, 4}), scaled(F::kNearestExact, {2})), NotImplementedError);
  // Sizes: two values for three spatial dims, an output size of 0, recompute with a size.
  CHECK_THROWS_AS(F::interpolate(x5, scaled(F::kNearest, {2, 2})), ValueError);
  CHECK_THROWS_AS(F::interpolate(x5, sized(F::kNearest, {2, 0, 2})), ValueError);
  CHECK_THROWS_AS(F::interpolate(x5, scaled(F::kNearest, {0.4})), ValueError);
  CHECK_THROWS_AS(F::interpolate(x5, sized(F::kNearest, {3}).recompute_scale_factor(true)), ValueError);
  CHECK_THROWS_AS(F::interpolate(wick::ones({1, 1, 2, 2, 2}, TensorOptions(kInt64)), scaled(F::kNearest, {2})),
                  TypeError);
}
