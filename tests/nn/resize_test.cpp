// F::interpolate, F::pixel_shuffle / pixel_unshuffle, the padding layers, F::cosine_similarity
// and F::pairwise_distance: the PyTorch oracle's cases (generate.py's resize_cases, selected by
// op name) forward at rtol 1e-12 and every gradient at rtol 1e-10 in float64, on every test
// device; small cases worked by hand; float64 gradchecks and double backward; the layers' prints
// (PyTorch 1.13's); bad input as typed errors.
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
using wick::test::OracleCase;
using TL = std::vector<Tensor>;

namespace {
constexpr double kOutRtol = 1e-12, kGradRtol = 1e-10, kAtol = 1e-13;
const TensorOptions kF64(kFloat64);

void check_against(const OracleCase& c, const Tensor& out, const TL& wrt, Device dev) {
  REQUIRE(out.sizes() == c.out.sizes());
  wick::test::check_oracle_case(c, out, wrt, dev, kOutRtol, kGradRtol, kAtol);
}

F::InterpolateMode mode_of(const std::string& s) {
  for (auto m : {F::kNearest, F::kNearestExact, F::kLinear, F::kBilinear})
    if (s == F::interpolate_mode_name(m)) return m;
  FAIL("unknown mode " << s);
  return F::kNearest;
}

F::InterpolateFuncOptions interpolate_options(const OracleCase& c) {
  F::InterpolateFuncOptions o;
  o.mode(mode_of(c.kwargs.at("mode").get<std::string>()));
  const auto& k = c.kwargs;
  if (!k.at("size").is_null()) o.size(k.at("size").get<std::vector<int64_t>>());
  if (!k.at("scale_factor").is_null()) o.scale_factor(k.at("scale_factor").get<std::vector<double>>());
  if (!k.at("align_corners").is_null()) o.align_corners(k.at("align_corners").get<bool>());
  if (!k.at("recompute_scale_factor").is_null()) o.recompute_scale_factor(k.at("recompute_scale_factor").get<bool>());
  return o;
}

// The padding layer a pad_layer case names, as a module applied to x.
Tensor apply_pad_layer(const OracleCase& c, const Tensor& x) {
  const std::string layer = c.kwargs.at("layer").get<std::string>();
  const auto p = c.kwargs.at("padding").get<std::vector<int64_t>>();
  const double v = c.kwargs.at("value").get<double>();
  if (layer == "ZeroPad2d") return ZeroPad2d(p)(x);
  if (layer == "ConstantPad1d") return ConstantPad1d(ConstantPad1dOptions(p, v))(x);
  if (layer == "ConstantPad2d") return ConstantPad2d(ConstantPad2dOptions(p, v))(x);
  if (layer == "ConstantPad3d") return ConstantPad3d(ConstantPad3dOptions(p, v))(x);
  if (layer == "ReflectionPad1d") return ReflectionPad1d(p)(x);
  if (layer == "ReflectionPad2d") return ReflectionPad2d(p)(x);
  if (layer == "ReplicationPad1d") return ReplicationPad1d(p)(x);
  if (layer == "ReplicationPad2d") return ReplicationPad2d(p)(x);
  FAIL("unknown layer " << layer);
  return {};
}

using wick::test::f64;
Tensor rnd(IntArrayRef shape) { return wick::randn(shape, kF64).requires_grad_(true); }
}  // namespace

TEST_CASE("interpolate matches PyTorch 1.13: nearest and linear modes up and down", "[nn][oracle][resize]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "interpolate") continue;
    const F::InterpolateFuncOptions o = interpolate_options(c);
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      const auto x = c.leaves(dev);
      check_against(c, F::interpolate(x[0], o), x, dev);
      if (!o.recompute_scale_factor()) {  // Upsample is interpolate with the same options
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
    if (o.recompute_scale_factor()) ++seen["recompute"];
  }
  for (const char* kind : {"nearest", "nearest-exact", "linear", "bilinear", "align_corners", "size", "recompute"}) {
    INFO(kind);
    CHECK(seen[kind] >= 1);
  }
  CHECK(seen["nearest"] + seen["nearest-exact"] + seen["linear"] + seen["bilinear"] >= 29);
}

TEST_CASE("pixel_shuffle and the padding layers match PyTorch 1.13", "[nn][oracle][resize]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    const bool shuffle = c.op == "pixel_shuffle", unshuffle = c.op == "pixel_unshuffle", pad = c.op == "pad_layer";
    if (!shuffle && !unshuffle && !pad) continue;
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      const auto x = c.leaves(dev);
      Tensor out;
      if (pad) {
        out = apply_pad_layer(c, x[0]);
      } else {
        const int64_t f = c.kwargs.at("factor").get<int64_t>();
        out = shuffle ? PixelShuffle(f)(x[0]) : PixelUnshuffle(f)(x[0]);
        CHECK_ALLCLOSE(out, shuffle ? F::pixel_shuffle(x[0], f) : F::pixel_unshuffle(x[0], f), 0, 0);
      }
      check_against(c, out, x, dev);
    }
    ++seen[pad ? c.kwargs.at("layer").get<std::string>() : c.op];
  }
  CHECK(seen.size() == 10u);
}

TEST_CASE("cosine_similarity and pairwise_distance match PyTorch 1.13", "[nn][oracle][resize]") {
  int n = 0;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    const bool cosine = c.op == "cosine_similarity";
    if (!cosine && c.op != "pairwise_distance") continue;
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      const auto x = c.leaves(dev);
      Tensor out;
      if (cosine) {
        const auto o = F::CosineSimilarityFuncOptions().dim(c.kw<int64_t>("dim", 1)).eps(c.kw<double>("eps", 0));
        out = F::cosine_similarity(x[0], x[1], o);
        CHECK_ALLCLOSE(CosineSimilarity(o)(x[0], x[1]), out, 0, 0);
      } else {
        const auto o = F::PairwiseDistanceFuncOptions()
                           .p(c.kw<double>("p", 2))
                           .eps(c.kw<double>("eps", 0))
                           .keepdim(c.kw<bool>("keepdim", false));
        out = F::pairwise_distance(x[0], x[1], o);
        CHECK_ALLCLOSE(PairwiseDistance(o)(x[0], x[1]), out, 0, 0);
      }
      check_against(c, out, x, dev);
    }
    ++n;
  }
  CHECK(n >= 9);
}

TEST_CASE("interpolate and pixel_shuffle by hand", "[nn][resize]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor x = f64({1, 2, 3}, {1, 1, 3}, dev);
    // nearest, factor 2: each value twice; factor 0.7 (out 2, scale 1 / 0.7): floor(j / 0.7) = 0, 1.
    CHECK_ALLCLOSE(F::interpolate(x, F::InterpolateFuncOptions().scale_factor(std::vector<double>{2})),
                   f64({1, 1, 2, 2, 3, 3}, {1, 1, 6}), 0, 0);
    CHECK_ALLCLOSE(F::interpolate(x, F::InterpolateFuncOptions().scale_factor(std::vector<double>{0.7})),
                   f64({1, 2}, {1, 1, 2}), 0, 0);
    // linear to 4 with align_corners: positions 0, 2/3, 4/3, 2.
    const Tensor ends = f64({0, 3}, {1, 1, 2}, dev);
    auto lin = F::InterpolateFuncOptions().mode(F::kLinear);
    CHECK_ALLCLOSE(F::interpolate(ends, lin.size(std::vector<int64_t>{4}).align_corners(true)),
                   f64({0, 1, 2, 3}, {1, 1, 4}), 1e-15, 1e-15);
    // without: positions 0.5 (j + 0.5) - 0.5 = -0.25 (clamped to 0), 0.25, 0.75, 1.25 (the last).
    CHECK_ALLCLOSE(F::interpolate(f64({0, 4}, {1, 1, 2}, dev), lin.align_corners(false)), f64({0, 1, 3, 4}, {1, 1, 4}),
                   1e-15, 1e-15);
    // pixel_shuffle: 4 channels of one pixel -> one 2 x 2 channel; unshuffle undoes it.
    const Tensor c4 = f64({0, 1, 2, 3}, {1, 4, 1, 1}, dev);
    CHECK_ALLCLOSE(F::pixel_shuffle(c4, 2), f64({0, 1, 2, 3}, {1, 1, 2, 2}), 0, 0);
    CHECK_ALLCLOSE(F::pixel_unshuffle(F::pixel_shuffle(c4, 2), 2), c4, 0, 0);
    // cosine_similarity: parallel 1, opposite -1; each norm clamped at eps on its own.
    CHECK_ALLCLOSE(F::cosine_similarity(f64({1, 2, -1, 0}, {2, 2}, dev), f64({2, 4, 3, 0}, {2, 2}, dev)),
                   f64({1, -1}, {2}), 1e-15, 0);
    CHECK_ALLCLOSE(F::cosine_similarity(f64({1e-9, 0}, {1, 2}, dev), f64({1e-3, 0}, {1, 2}, dev)), f64({0.1}, {1}),
                   1e-12, 0);
    // pairwise_distance: |(3, 4) + eps| with eps 0.
    CHECK_ALLCLOSE(F::pairwise_distance(f64({3, 4}, {1, 2}, dev), f64({0, 0}, {1, 2}, dev),
                                        F::PairwiseDistanceFuncOptions().eps(0)),
                   f64({5}, {1}), 1e-15, 0);
  }
}

TEST_CASE("gradcheck and double backward: interpolate, pixel_shuffle and distances", "[nn][gradcheck][resize]") {
  wick::manual_seed(66);
  using O = F::InterpolateFuncOptions;
  for (const O& o : {O().scale_factor(std::vector<double>{1.7}), O().size(std::vector<int64_t>{2, 5}),
                     O().scale_factor(std::vector<double>{0.6, 1.5}).mode(F::kNearestExact)}) {
    auto f = [o](const TL& x) { return TL{F::interpolate(x[0], o)}; };
    CHECK_GRADCHECK(f, TL{rnd(o.size() && o.size()->size() == 2 ? IntArrayRef{1, 2, 3, 4} : IntArrayRef{2, 2, 3, 4})});
  }
  for (bool ac : {false, true}) {
    auto lin = [ac](const TL& x) {
      return TL{F::interpolate(x[0], O().scale_factor(std::vector<double>{2.5}).mode(F::kLinear).align_corners(ac))};
    };
    CHECK_GRADCHECK(lin, TL{rnd({2, 2, 4})});
    auto bil = [ac](const TL& x) {
      return TL{F::interpolate(x[0], O().size(std::vector<int64_t>{5, 2}).mode(F::kBilinear).align_corners(ac))};
    };
    CHECK_GRADCHECK(bil, TL{rnd({1, 2, 3, 4})});
    wick::test::check_double_backward(bil, TL{rnd({1, 1, 3, 3})});
  }
  CHECK_GRADCHECK([](const TL& x) { return TL{F::pixel_shuffle(x[0], 2)}; }, TL{rnd({2, 8, 2, 3})});
  CHECK_GRADCHECK([](const TL& x) { return TL{F::pixel_unshuffle(x[0], 2)}; }, TL{rnd({2, 1, 4, 2})});
  auto cos = [](const TL& x) { return TL{F::cosine_similarity(x[0], x[1])}; };
  CHECK_GRADCHECK(cos, TL{rnd({3, 4}), rnd({3, 4})});
  wick::test::check_double_backward(cos, TL{rnd({2, 3}), rnd({1, 3})});
  auto dist = [](const TL& x) { return TL{F::pairwise_distance(x[0], x[1], F::PairwiseDistanceFuncOptions().p(3))}; };
  CHECK_GRADCHECK(dist, TL{rnd({3, 4}), rnd({3, 4})});
  wick::test::check_double_backward(dist, TL{rnd({2, 3}), rnd({2, 3})});
}

TEST_CASE("the resize, padding and distance layers print as PyTorch 1.13", "[nn][resize]") {
  // print(nn.Upsample(scale_factor=2)), print(nn.Upsample(size=(3, 4), mode="bilinear")), ...
  CHECK(Upsample(UpsampleOptions().scale_factor(std::vector<double>{2}))->to_string() ==
        "Upsample(scale_factor=2.0, mode=nearest)");
  CHECK(Upsample(UpsampleOptions().size(std::vector<int64_t>{3, 4}).mode(F::kBilinear))->to_string() ==
        "Upsample(size=(3, 4), mode=bilinear)");
  CHECK(Upsample(UpsampleOptions().size(std::vector<int64_t>{5}))->to_string() == "Upsample(size=5, mode=nearest)");
  CHECK(Upsample(UpsampleOptions().scale_factor(std::vector<double>{2, 1.5}))->to_string() ==
        "Upsample(scale_factor=(2.0, 1.5), mode=nearest)");
  CHECK(PixelShuffle(2)->to_string() == "PixelShuffle(upscale_factor=2)");
  CHECK(PixelUnshuffle(3)->to_string() == "PixelUnshuffle(downscale_factor=3)");
  CHECK(ZeroPad2d(2)->to_string() == "ZeroPad2d((2, 2, 2, 2))");
  CHECK(ZeroPad2d(std::vector<int64_t>{1, 2, 3, 4})->to_string() == "ZeroPad2d((1, 2, 3, 4))");
  CHECK(ConstantPad1d(ConstantPad1dOptions(2, 3.5))->to_string() == "ConstantPad1d(padding=(2, 2), value=3.5)");
  CHECK(ConstantPad3d(ConstantPad3dOptions(1, -1))->to_string() ==
        "ConstantPad3d(padding=(1, 1, 1, 1, 1, 1), value=-1.0)");
  CHECK(ReflectionPad2d(std::vector<int64_t>{1, 2, 3, 4})->to_string() == "ReflectionPad2d((1, 2, 3, 4))");
  CHECK(ReplicationPad1d(std::vector<int64_t>{1, 2})->to_string() == "ReplicationPad1d((1, 2))");
  CHECK(ReplicationPad2d(1)->to_string() == "ReplicationPad2d((1, 1, 1, 1))");
  CHECK(CosineSimilarity()->to_string() == "CosineSimilarity()");
  CHECK(PairwiseDistance()->to_string() == "PairwiseDistance()");
  CHECK(Unflatten(1, std::vector<int64_t>{2, 3})->to_string() == "Unflatten(dim=1, unflattened_size=(2, 3))");
  CHECK(Unflatten(0, std::vector<int64_t>{4})->to_string() == "Unflatten(dim=0, unflattened_size=(4,))");
  CHECK(Upsample()->named_parameters().size() == 0u);
}

TEST_CASE("Unflatten splits a dim as a reshape", "[nn][resize]") {
  for (Device dev : wick::test::test_devices()) {
    const Tensor x = wick::randn({2, 6, 3}, kF64).to(dev);
    CHECK(Unflatten(1, std::vector<int64_t>{2, 3})(x).sizes() == std::vector<int64_t>{2, 2, 3, 3});
    CHECK_ALLCLOSE(Unflatten(-1, std::vector<int64_t>{-1, 1})(x), x.reshape({2, 6, 3, 1}), 0, 0);
    CHECK_THROWS_AS(Unflatten(1, std::vector<int64_t>{4, 2})(x), ValueError);
    CHECK_THROWS_AS(Unflatten(3, std::vector<int64_t>{1})(x), ValueError);
  }
  CHECK_THROWS_AS(Unflatten(1, std::vector<int64_t>{-1, -1}), ValueError);
}

TEST_CASE("resize ops refuse bad input with typed errors", "[nn][resize]") {
  using O = F::InterpolateFuncOptions;
  const Tensor x3 = wick::randn({1, 2, 4}), x4 = wick::randn({1, 2, 4, 4});
  const std::vector<double> two{2};
  CHECK_THROWS_WITH(F::interpolate(x3, O().size(std::vector<int64_t>{3}).scale_factor(two)),
                    Catch::Contains("only one of size and scale_factor"));
  CHECK_THROWS_AS(F::interpolate(x3, O()), ValueError);
  CHECK_THROWS_WITH(F::interpolate(x3, O().scale_factor(two).align_corners(false)), Catch::Contains("align_corners"));
  CHECK_THROWS_AS(F::interpolate(x4, O().scale_factor(two).mode(F::kLinear)), NotImplementedError);
  CHECK_THROWS_AS(F::interpolate(x3, O().scale_factor(two).mode(F::kBilinear)), NotImplementedError);
  CHECK_THROWS_AS(F::interpolate(wick::randn({2, 4}), O().scale_factor(two)), NotImplementedError);
  CHECK_THROWS_AS(F::interpolate(x4, O().scale_factor(std::vector<double>{2, 2, 2})), ValueError);
  CHECK_THROWS_AS(F::interpolate(x3, O().scale_factor(std::vector<double>{0.1})), ValueError);  // out 0
  CHECK_THROWS_AS(F::interpolate(x3, O().scale_factor(std::vector<double>{-1})), ValueError);
  CHECK_THROWS_AS(F::interpolate(x3, O().size(std::vector<int64_t>{3}).recompute_scale_factor(true)), ValueError);
  CHECK_THROWS_AS(F::interpolate(wick::ones({1, 1, 2}, TensorOptions(kInt64)), O().scale_factor(two)), TypeError);
  CHECK_THROWS_WITH(F::pixel_shuffle(wick::randn({1, 6, 2, 2}), 2), Catch::Contains("not divisible"));
  CHECK_THROWS_AS(F::pixel_shuffle(wick::randn({4, 2}), 2), ValueError);
  CHECK_THROWS_AS(F::pixel_unshuffle(wick::randn({1, 1, 3, 4}), 2), ValueError);
  CHECK_THROWS_AS(F::cosine_similarity(wick::randn({2, 3}), wick::randn({4, 3})), ValueError);
  CHECK_THROWS_AS(F::cosine_similarity(wick::randn({3}), wick::randn({3})), ValueError);  // dim 1 of 1-d
  CHECK_THROWS_AS(F::pairwise_distance(wick::randn({2, 3}), wick::randn({2, 3}, kF64)), TypeError);
  CHECK_THROWS_AS(ReflectionPad2d(std::vector<int64_t>{1, 2}), ValueError);
}
