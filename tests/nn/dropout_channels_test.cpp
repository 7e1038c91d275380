// F::dropout1d, F::dropout2d, F::dropout3d and Dropout1d, Dropout2d, Dropout3d: properties that
// hold for every mask, checked on every test device in float64 and float32. Every channel is
// either all zero or exactly input * (1 / (1 - p)) (the factor rounded once to the dtype, as
// F::dropout); the gradient is the same mask times 1 / (1 - p); eval mode, p = 0 and an empty
// input return the input itself and draw nothing; p = 1 multiplies by zero; the same seed gives
// the same mask on every device and in both dtypes; the kept fraction over 20,000 channels is
// within 0.03 of 1 - p (Hoeffding: a miss has probability below 1e-15); inplace writes into the
// input; and bad p, ranks and dtypes are typed errors. A mask cannot be compared with PyTorch's:
// its generator is not PyTorch's.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/gradcheck.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/generator.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using Catch::Matchers::Contains;
using wick::test::values;
using TL = std::vector<Tensor>;

namespace {
const TensorOptions kF64(kFloat64);
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

using DropFn = std::function<Tensor(const Tensor&, const F::DropoutFuncOptions&)>;

// One channel-dropout function with a shape it takes and the size of one channel there.
struct Case {
  const char* name;
  DropFn fn;
  std::vector<int64_t> shape;
  int64_t channel_size;
};

std::vector<Case> cases() {
  const DropFn d1 = [](const Tensor& x, const F::DropoutFuncOptions& o) { return F::dropout1d(x, o); };
  const DropFn d2 = [](const Tensor& x, const F::DropoutFuncOptions& o) { return F::dropout2d(x, o); };
  const DropFn d3 = [](const Tensor& x, const F::DropoutFuncOptions& o) { return F::dropout3d(x, o); };
  // 64 channels each: at p = 0.3 all are kept with probability 0.7^64 < 1e-9, so both outcomes
  // show up.
  return {{"dropout1d [N, C, L]", d1, {8, 8, 5}, 5},
          {"dropout1d [C, L]", d1, {64, 5}, 5},
          {"dropout2d [N, C, H, W]", d2, {8, 8, 3, 2}, 6},
          {"dropout3d [N, C, D, H, W]", d3, {8, 8, 2, 1, 3}, 6},
          {"dropout3d [C, D, H, W]", d3, {64, 2, 1, 3}, 6}};
}

// Positive inputs (0.5 to 1.5), so an output of 0 means dropped.
Tensor positive(IntArrayRef shape, Device dev, DType dtype = kFloat64) {
  return (rand(shape, kF64) + 0.5).to(dev, dtype);
}

// The factor a kept element is multiplied by: 1 / (1 - p) rounded once to the dtype.
double scale_in(DType dtype, double p) {
  const double s = 1.0 / (1.0 - p);
  return dtype == kFloat32 ? static_cast<double>(static_cast<float>(s)) : s;
}

// x * scale in the dtype's arithmetic.
double scaled(double x, double scale, DType dtype) {
  return dtype == kFloat32 ? static_cast<double>(static_cast<float>(x) * static_cast<float>(scale)) : x * scale;
}

// Checks that each channel (a run of `channel_size` elements) of y is all zero or exactly
// x * scale; returns which channels were kept.
std::vector<bool> kept_channels(const Tensor& x, const Tensor& y, int64_t channel_size, double p) {
  REQUIRE(y.sizes() == x.sizes());
  REQUIRE(y.dtype() == x.dtype());
  const auto xv = values(x), yv = values(y);
  const double scale = scale_in(x.dtype(), p);
  std::vector<bool> kept;
  int bad = 0;
  for (size_t c = 0; c < xv.size() / static_cast<size_t>(channel_size); ++c) {
    const size_t first = c * static_cast<size_t>(channel_size);
    const bool keep = yv[first] != 0.0;
    for (size_t i = first; i < first + static_cast<size_t>(channel_size); ++i)
      bad += keep ? yv[i] != scaled(xv[i], scale, x.dtype()) : yv[i] != 0.0;
    kept.push_back(keep);
  }
  CHECK(bad == 0);
  return kept;
}

int count(const std::vector<bool>& v) {
  int n = 0;
  for (bool b : v) n += b;
  return n;
}
}  // namespace

TEST_CASE("channel dropout zeroes whole channels and scales the others by exactly 1 / (1 - p)",
          "[nn][dropout][dropout_channels]") {
  wick::manual_seed(101);
  for (Device dev : wick::test::test_devices()) {
    for (DType dtype : {kFloat64, kFloat32}) {
      for (const Case& c : cases()) {
        for (double p : {0.3, 0.5, 0.85}) {
          INFO(c.name << " on " << dev.str() << " " << dtype << " p " << p);
          const Tensor x = positive(c.shape, dev, dtype);
          const Tensor y = c.fn(x, F::DropoutFuncOptions().p(p));
          CHECK(y.device() == dev);
          const auto kept = kept_channels(x, y, c.channel_size, p);
          CHECK(count(kept) > 0);
          CHECK(count(kept) < static_cast<int>(kept.size()));
        }
      }
    }
  }
}

TEST_CASE("channel dropout layers: the mask in training, the identity in eval, and p = 0 returns the input",
          "[nn][dropout][dropout_channels]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor x1 = positive({8, 8, 5}, dev), x2 = positive({8, 8, 3, 2}, dev), x3 = positive({8, 8, 2, 1, 3}, dev);
    Dropout1d d1(0.4);
    Dropout2d d2(Dropout2dOptions(0.4));
    Dropout3d d3(Dropout3dOptions().p(0.4));
    CHECK(d1->is_training());
    kept_channels(x1, d1(x1), 5, 0.4);
    kept_channels(x2, d2(x2), 6, 0.4);
    kept_channels(x3, d3(x3), 6, 0.4);
    d1->eval();
    d2->eval();
    d3->eval();
    CHECK(d1(x1).is_same(x1));  // the input itself, as PyTorch
    CHECK(d2(x2).is_same(x2));
    CHECK(d3(x3).is_same(x3));
    d2->train();
    CHECK(!d2(x2).is_same(x2));
    for (const Case& c : cases()) {
      INFO(c.name);
      const Tensor x = positive(c.shape, dev);
      CHECK(c.fn(x, F::DropoutFuncOptions().p(0.7).training(false)).is_same(x));
      CHECK(c.fn(x, F::DropoutFuncOptions().p(0.0)).is_same(x));
    }
  }
}

TEST_CASE("channel dropout with p = 1 multiplies by zero: NaN and inf give NaN, the gradient is zero",
          "[nn][dropout][dropout_channels]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor x = tensor({1.0, -2.0, kNaN, kInf, 3.0, -kInf}, {1, 3, 2}, kF64.device(dev)).requires_grad_(true);
    const Tensor y = F::dropout1d(x, F::DropoutFuncOptions().p(1.0));
    const auto v = values(y);
    CHECK(v[0] == 0.0);
    CHECK(v[1] == 0.0);
    CHECK(std::isnan(v[2]));
    CHECK(std::isnan(v[3]));
    CHECK(v[4] == 0.0);
    CHECK(std::isnan(v[5]));
    y.backward(ones({1, 3, 2}, kF64.device(dev)));
    CHECK_VALUES(x.grad(), {0, 0, 0, 0, 0, 0});
    CHECK(values(F::dropout2d(positive({2, 3, 2, 2}, dev), F::DropoutFuncOptions().p(1.0))) ==
          std::vector<double>(24, 0.0));
  }
}

TEST_CASE("the gradient of channel dropout is the same mask times 1 / (1 - p)",
          "[nn][dropout][gradcheck][dropout_channels]") {
  wick::manual_seed(103);
  for (Device dev : wick::test::test_devices()) {
    for (const Case& c : cases()) {
      INFO(c.name << " on " << dev.str());
      const double p = 0.4;
      const Tensor x = positive(c.shape, dev).requires_grad_(true);
      const Tensor y = c.fn(x, F::DropoutFuncOptions().p(p));
      const Tensor g = randn(c.shape, kF64).to(dev);
      y.backward(g);
      const auto kept = kept_channels(x.detach(), y.detach(), c.channel_size, p);
      const auto gv = values(g), gx = values(x.grad());
      int bad = 0;
      for (size_t i = 0; i < gv.size(); ++i)
        bad += gx[i] != (kept[i / static_cast<size_t>(c.channel_size)] ? gv[i] * (1.0 / (1.0 - p)) : 0.0);
      CHECK(bad == 0);
    }
  }
  // And against finite differences, a fixed seed per call making each function deterministic.
  for (const Case& c : cases()) {
    INFO(c.name);
    CHECK_GRADCHECK(
        [&](const TL& x) {
          wick::manual_seed(7);
          return TL{c.fn(x[0], F::DropoutFuncOptions().p(0.3))};
        },
        TL{randn(c.shape, kF64.requires_grad())});
  }
}

TEST_CASE("the same seed gives the same channel mask on every device and in float32 and float64",
          "[nn][dropout][dropout_channels]") {
  for (const Case& c : cases()) {
    INFO(c.name);
    const Tensor x = positive(c.shape, kCPU);
    wick::manual_seed(42);
    const Tensor reference = c.fn(x, F::DropoutFuncOptions().p(0.3));
    const auto reference_kept = kept_channels(x, reference, c.channel_size, 0.3);
    // The generator moves on: the next call draws another mask (equal with probability
    // (0.7^2 + 0.3^2)^64 < 1e-15).
    CHECK(kept_channels(x, c.fn(x, F::DropoutFuncOptions().p(0.3)), c.channel_size, 0.3) != reference_kept);
    for (Device dev : wick::test::test_devices()) {
      INFO(dev.str());
      wick::manual_seed(42);
      CHECK(values(c.fn(x.to(dev), F::DropoutFuncOptions().p(0.3))) == values(reference));
      wick::manual_seed(42);
      const Tensor x32 = x.to(dev, kFloat32);
      CHECK(kept_channels(x32, c.fn(x32, F::DropoutFuncOptions().p(0.3)), c.channel_size, 0.3) == reference_kept);
    }
  }
}

TEST_CASE("channel dropout keeps 1 - p of 20000 channels to within 0.03", "[nn][dropout][dropout_channels]") {
  // Hoeffding: P(|kept / n - (1 - p)| >= t) <= 2 exp(-2 n t^2) = 2 exp(-36) < 1e-15 for n = 20000,
  // t = 0.03, so a correct implementation fails this with negligible probability.
  wick::manual_seed(104);
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor x2 = ones({200, 100, 1, 1}, kF64.device(dev));
    const auto kept2 = kept_channels(x2, F::dropout2d(x2, F::DropoutFuncOptions().p(0.3)), 1, 0.3);
    CHECK(std::abs(count(kept2) / 20000.0 - 0.7) < 0.03);
    const Tensor x1 = ones({20000, 2}, kF64.device(dev));  // unbatched: 20000 channels of 2
    const auto kept1 = kept_channels(x1, F::dropout1d(x1, F::DropoutFuncOptions().p(0.8)), 2, 0.8);
    CHECK(std::abs(count(kept1) / 20000.0 - 0.2) < 0.03);
  }
}

TEST_CASE("an empty input is returned as it is and draws nothing", "[nn][dropout][dropout_channels]") {
  const Tensor x = positive({4, 8, 3, 2}, kCPU);
  wick::manual_seed(5);
  const Tensor expected = F::dropout2d(x, F::DropoutFuncOptions().p(0.5));
  wick::manual_seed(5);
  const Tensor empty = zeros({2, 3, 0, 4}, kF64);
  CHECK(F::dropout2d(empty, F::DropoutFuncOptions().p(0.5)).is_same(empty));
  CHECK(F::dropout1d(zeros({0, 4}, kF64), F::DropoutFuncOptions().p(0.5)).sizes() == IntArrayRef({0, 4}));
  CHECK(values(F::dropout2d(x, F::DropoutFuncOptions().p(0.5))) == values(expected));
}

TEST_CASE("inplace channel dropout writes the mask into the input, recorded in the graph",
          "[nn][dropout][dropout_channels]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor original = positive({8, 8, 3, 2}, dev);
    Tensor x = original.clone();
    wick::manual_seed(9);
    const Tensor y = F::dropout2d(x, F::DropoutFuncOptions().p(0.5).inplace(true));
    CHECK(y.is_same(x));
    wick::manual_seed(9);
    CHECK(values(x) == values(F::dropout2d(original, F::DropoutFuncOptions().p(0.5))));
    // A leaf that requires grad is refused, as PyTorch; a value computed from it is fine, and its
    // gradient is the mask.
    const Tensor leaf = positive({8, 8, 3, 2}, dev).requires_grad_(true);
    CHECK_THROWS_AS(F::dropout2d(leaf, F::DropoutFuncOptions().inplace(true)), StateError);
    Tensor h = leaf * 1.0;
    Dropout2d layer(Dropout2dOptions(0.5).inplace(true));
    const Tensor out = layer(h);
    CHECK(out.is_same(h));
    out.sum().backward();
    const auto kept = kept_channels(leaf.detach(), out.detach(), 6, 0.5);
    const auto g = values(leaf.grad());
    int bad = 0;
    for (size_t i = 0; i < g.size(); ++i) bad += g[i] != (kept[i / 6] ? 2.0 : 0.0);
    CHECK(bad == 0);
    // Dropout's own inplace option, the same mechanism.
    Tensor e = original.clone();
    wick::manual_seed(10);
    Dropout(DropoutOptions(0.25).inplace(true))(e);
    wick::manual_seed(10);
    CHECK(values(e) == values(F::dropout(original, 0.25, true)));
  }
}

TEST_CASE("F::dropout with options draws what F::dropout(input, p, training) draws",
          "[nn][dropout][dropout_channels]") {
  const Tensor x = positive({6, 7}, kCPU);
  wick::manual_seed(12);
  const Tensor a = F::dropout(x, 0.3, true);
  wick::manual_seed(12);
  CHECK(values(F::dropout(x, F::DropoutFuncOptions().p(0.3))) == values(a));
  CHECK(F::dropout(x, F::DropoutFuncOptions().p(0.3).training(false)).is_same(x));
}

TEST_CASE("the dropout layers print as PyTorch 1.13", "[nn][dropout][dropout_channels]") {
  CHECK(Dropout()->to_string() == "Dropout(p=0.5, inplace=False)");
  CHECK(Dropout1d(0.2)->to_string() == "Dropout1d(p=0.2, inplace=False)");
  CHECK(Dropout2d(Dropout2dOptions(0.5).inplace(true))->to_string() == "Dropout2d(p=0.5, inplace=True)");
  CHECK(Dropout3d(1.0)->to_string() == "Dropout3d(p=1.0, inplace=False)");
}

TEST_CASE("channel dropout refuses a bad p, rank or dtype with typed errors",
          "[nn][dropout][errors][dropout_channels]") {
  const Tensor x3 = positive({2, 3, 4}, kCPU), x4 = positive({2, 3, 4, 5}, kCPU), x5 = positive({2, 3, 2, 2, 2}, kCPU);
  for (double p : {-0.1, 1.5, kNaN}) {
    INFO("p " << p);
    CHECK_THROWS_AS(F::dropout1d(x3, F::DropoutFuncOptions().p(p)), ValueError);
    CHECK_THROWS_AS(F::dropout2d(x4, F::DropoutFuncOptions().p(p)), ValueError);
    CHECK_THROWS_AS(F::dropout3d(x5, F::DropoutFuncOptions().p(p).training(false)), ValueError);  // even in eval
    CHECK_THROWS_AS(F::dropout(x3, F::DropoutFuncOptions().p(p)), ValueError);
    CHECK_THROWS_AS(Dropout1d(p), ValueError);
    CHECK_THROWS_AS(Dropout2d(Dropout2dOptions(p)), ValueError);
    CHECK_THROWS_AS(Dropout3d(p), ValueError);
    CHECK_THROWS_AS(Dropout(p), ValueError);
  }
  CHECK_THROWS_WITH(F::dropout2d(x4, F::DropoutFuncOptions().p(1.5)), Contains("dropout2d") && Contains("1.5"));

  // Ranks, checked in eval mode too (as PyTorch's dropout1d).
  CHECK_THROWS_AS(F::dropout1d(positive({5}, kCPU)), ValueError);
  CHECK_THROWS_AS(F::dropout1d(x4, F::DropoutFuncOptions().training(false)), ValueError);
  CHECK_THROWS_WITH(F::dropout1d(x4), Contains("dropout1d") && Contains("[2, 3, 4, 5]"));
  // dropout2d: a 3-d input is ambiguous between PyTorch 1.13 ([N, C, L]) and LibTorch ([C, H, W]).
  CHECK_THROWS_AS(F::dropout2d(x3), ValueError);
  CHECK_THROWS_WITH(F::dropout2d(x3), Contains("dropout1d") && Contains("unsqueeze(0)"));
  CHECK_THROWS_AS(F::dropout2d(positive({3, 4}, kCPU)), ValueError);
  CHECK_THROWS_AS(F::dropout2d(x5), ValueError);
  CHECK_THROWS_AS(Dropout2d(0.5)(x3), ValueError);
  CHECK_THROWS_AS(F::dropout3d(x3), ValueError);
  CHECK_THROWS_AS(F::dropout3d(positive({1, 2, 3, 2, 2, 2}, kCPU)), ValueError);
  CHECK_THROWS_AS(F::dropout2d(Tensor()), ValueError);

  // Dtypes: integer input is a TypeError when dropout applies, returned as it is in eval mode.
  const Tensor ints = zeros({2, 3, 4, 5}, TensorOptions(kInt64));
  CHECK_THROWS_AS(F::dropout2d(ints), TypeError);
  CHECK(F::dropout2d(ints, F::DropoutFuncOptions().training(false)).is_same(ints));
}
