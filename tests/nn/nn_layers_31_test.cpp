// Functional, ChannelShuffle (F::channel_shuffle), F::one_hot, AlphaDropout / FeatureAlphaDropout
// (F::alpha_dropout, F::feature_alpha_dropout) and F::gumbel_softmax. Truths: PyTorch 1.13's
// channel_shuffle values (generate.py's nn_layers_31_cases) on every test device, a shuffle and its
// gradient worked by hand, float64 gradchecks, the two values and the gradient PyTorch 1.13's
// alpha_dropout gives (constants printed by PyTorch), the affine map recomputed by hand on each
// kept and dropped element, moment statistics of a fixed seeded draw, Gumbel noise recomputed from
// the same seed, and PyTorch 1.13's prints. A random mask cannot be compared with PyTorch's: the
// generator is wick's.
#include <catch2/catch.hpp>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/gradcheck.h"
#include "support/oracle.h"
#include "support/oracle_checks.h"
#include "wick/autograd/grad.h"
#include "wick/core/generator.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using Catch::Matchers::Contains;
using wick::test::values;
using TL = std::vector<Tensor>;

namespace {
const TensorOptions kF64(kFloat64);
constexpr double kAlpha = 1.7580993408473766;

// d(sum(y)) / dx for one leaf x.
Tensor grad_of_sum(const Tensor& y, const Tensor& x) { return autograd::grad({y.sum()}, {x})[0]; }

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double e : v) s += e;
  return s / static_cast<double>(v.size());
}
}  // namespace

TEST_CASE("nn_layers_31: Functional wraps a function, binds extra arguments and replicates", "[nn][nn_layers_31]") {
  const Tensor x = tensor({-1.0, 0.5, 2.0}, {3}, kF64);
  Functional relu(wick::relu);
  CHECK_VALUES(relu(x), {0.0, 0.5, 2.0});
  // LibTorch's bound form: f(input, args...), the arguments copied in at construction.
  Functional clamp_hi([](const Tensor& t, double hi) { return wick::clamp(t, std::nullopt, Scalar(hi)); }, 1.0);
  CHECK_VALUES(clamp_hi(x), {-1.0, 0.5, 1.0});
  Functional shuffle(F::channel_shuffle, int64_t{2});
  CHECK_VALUES(shuffle(arange(4, kF64).reshape({1, 4, 1})), {0.0, 2.0, 1.0, 3.0});
  CHECK(relu->to_string() == "Functional()");
  CHECK(relu->parameters().empty());
  // In a Sequential, through the generic call, and in a shallow copy (what replicate makes).
  Sequential seq(Functional([](Tensor t) { return t * 2.0; }), Functional(wick::relu));
  CHECK_VALUES(seq->forward(x), {0.0, 1.0, 4.0});
  CHECK_VALUES(relu->forward_value({Value(x)}).tensor(), {0.0, 0.5, 2.0});
  CHECK_VALUES(relu->shallow_copy()->forward_tensor(x), {0.0, 0.5, 2.0});
  CHECK_VALUES(relu->clone()->forward(x), {0.0, 0.5, 2.0});
  CHECK_THROWS_AS(Functional(FunctionalImpl::Function()), ValueError);
  CHECK_THROWS_WITH(Functional(FunctionalImpl::Function()), Contains("Functional") && Contains("empty"));
}

TEST_CASE("nn_layers_31: channel_shuffle matches PyTorch 1.13 on every device", "[nn][nn_layers_31][oracle]") {
  const auto seen = wick::test::check_oracle_ops({"channel_shuffle"},
                                                 [](const wick::test::OracleCase& c, const TL& x, Device) {
                                                   const int64_t g = c.kwargs.at("groups").get<int64_t>();
                                                   const Tensor a = F::channel_shuffle(x[0], g);
                                                   CHECK_ALLCLOSE(ChannelShuffle(g)(x[0]), a, 0, 0);
                                                   return a;
                                                 },
                                                 {0, 0, 0});
  CHECK(seen.by_op.count("channel_shuffle"));
  CHECK(seen.total >= 5);
  // The eval-mode alpha dropouts are the input itself (PyTorch 1.13's values and gradients).
  const auto eval = wick::test::check_oracle_ops(
      {"alpha_dropout_eval", "feature_alpha_dropout_eval"},
      [](const wick::test::OracleCase& c, const TL& x, Device) {
        const double p = c.kwargs.at("p").get<double>();
        const Tensor y = c.op == "alpha_dropout_eval"
                             ? F::alpha_dropout(x[0], p, false)
                             : F::feature_alpha_dropout(x[0], F::FeatureAlphaDropoutFuncOptions().p(p));
        CHECK(y.is_same(x[0]));
        return y;
      },
      {0, 0, 0});
  CHECK(eval.total == 2);
}

TEST_CASE("nn_layers_31: channel_shuffle by hand, its gradient, dtypes and errors", "[nn][nn_layers_31]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    // Channels 0..5 in groups of 3 ([[0, 1], [2, 3], [4, 5]] transposed): 0 2 4 1 3 5.
    const Tensor x = arange(12, kF64).reshape({1, 6, 2}).to(dev).requires_grad_(true);
    const Tensor y = F::channel_shuffle(x, 3);
    CHECK_VALUES(y, {0, 1, 4, 5, 8, 9, 2, 3, 6, 7, 10, 11});
    // The gradient is the inverse shuffle of the upstream gradient: groups C / groups = 2.
    const Tensor up = arange(12, kF64).reshape({1, 6, 2}).to(dev) * 10.0;
    const Tensor gx = autograd::grad({y}, {x}, {up})[0];
    CHECK_VALUES(gx, {0, 10, 60, 70, 20, 30, 80, 90, 40, 50, 100, 110});
    CHECK_ALLCLOSE(gx, F::channel_shuffle(up, 2), 0, 0);
    // Any dtype; a 4-d integer input.
    const Tensor ints = arange(8, TensorOptions(kInt64)).reshape({1, 4, 1, 2}).to(dev);
    CHECK_VALUES(F::channel_shuffle(ints, 2), {0, 1, 4, 5, 2, 3, 6, 7});
  }
  CHECK_GRADCHECKS([](const TL& x) { return TL{F::channel_shuffle(x[0], 2)}; },
                   {randn({2, 4, 3}, kF64).requires_grad_(true)});
  const Tensor x = randn({2, 6, 3}, kF64);
  CHECK_THROWS_AS(F::channel_shuffle(x, 4), ValueError);
  CHECK_THROWS_WITH(F::channel_shuffle(x, 4), Contains("channel_shuffle") && Contains("[2, 6, 3]") && Contains("4"));
  CHECK_THROWS_WITH(F::channel_shuffle(x, 0), Contains("channel_shuffle") && Contains("positive"));
  CHECK_THROWS_WITH(F::channel_shuffle(randn({2, 6}, kF64), 2), Contains("channel_shuffle") && Contains("[2, 6]"));
  CHECK_THROWS_AS(ChannelShuffle(0), ValueError);
  CHECK(ChannelShuffle(3)->to_string() == "ChannelShuffle(groups=3)");  // PyTorch 1.13's print
  CHECK(ChannelShuffle(3)->options().groups() == 3);
}

TEST_CASE("nn_layers_31: F::one_hot is wick::one_hot", "[nn][nn_layers_31]") {
  const Tensor i = tensor(std::vector<int64_t>{2, 0, 1}, {3}, TensorOptions(kInt64));
  CHECK_VALUES(F::one_hot(i), {0, 0, 1, 1, 0, 0, 0, 1, 0});
  CHECK(F::one_hot(i, 5).sizes().vec() == std::vector<int64_t>{3, 5});
  CHECK_THROWS_AS(F::one_hot(i, 2), ValueError);
}

TEST_CASE("nn_layers_31: alpha_dropout gives PyTorch 1.13's two values and gradient", "[nn][nn_layers_31]") {
  // PyTorch 1.13: F.alpha_dropout(zeros, p, True) takes exactly two values (dropped, kept), and the
  // gradient of its sum is 0 or a.
  struct Known {
    double p, dropped, kept, a;
  };
  for (const Known& k : {Known{0.5, -0.7791939305180315, 0.7791939305180315, 0.8864048946659319},
                         Known{0.2, -1.2361598485763778, 0.30903996214409446, 0.8789035834435328}}) {
    INFO("p = " << k.p);
    manual_seed(3);
    const Tensor x = zeros({2000}, kF64).requires_grad_(true);
    const Tensor y = F::alpha_dropout(x, k.p, true);
    const auto yv = values(y), gv = values(grad_of_sum(y, x));
    int kept = 0, bad = 0;
    for (size_t i = 0; i < yv.size(); ++i) {
      const bool keep = gv[i] != 0.0;
      kept += keep;
      bad += keep ? std::abs(yv[i] - k.kept) > 1e-15 || std::abs(gv[i] - k.a) > 1e-15
                  : std::abs(yv[i] - k.dropped) > 1e-15;
    }
    CHECK(bad == 0);
    CHECK(std::abs(kept / 2000.0 - (1.0 - k.p)) < 0.06);  // 2,000 draws: > 5 sigma
  }
}

TEST_CASE("nn_layers_31: alpha_dropout's affine map on each element, statistics, every device", "[nn][nn_layers_31]") {
  const double p = 0.3;
  const double a = 1.0 / std::sqrt((kAlpha * kAlpha * p + 1.0) * (1.0 - p));
  const double aa = kAlpha * a;
  std::vector<double> first;
  for (Device dev : wick::test::test_devices()) {
    for (DType dt : {kFloat64, kFloat32}) {
      INFO(dev.str() << " " << (dt == kFloat64 ? "float64" : "float32"));
      manual_seed(5);
      const Tensor x = randn({400, 250}, kF64).to(dev, dt).requires_grad_(true);
      manual_seed(6);
      const Tensor y = F::alpha_dropout(x, F::AlphaDropoutFuncOptions().p(p).training(true));
      const auto xv = values(x), yv = values(y), gv = values(grad_of_sum(y, x));
      const double tol = dt == kFloat64 ? 0.0 : 1e-6;
      int bad = 0, kept = 0;
      for (size_t i = 0; i < xv.size(); ++i) {
        const bool keep = gv[i] != 0.0;
        kept += keep;
        // PyTorch's order: input * (m * a) + ((m - 1) * (alpha * a) + alpha * a * p).
        const double want = keep ? xv[i] * a + aa * p : -aa + aa * p;
        bad += std::abs(yv[i] - want) > tol * (1.0 + std::abs(want));
        if (keep) bad += std::abs(gv[i] - a) > tol;
      }
      CHECK(bad == 0);
      // 100,000 draws: the kept fraction within 0.01 of 1 - p (over 6 sigma); a standard normal
      // input keeps mean 0 and variance 1 (Note [Alpha dropout]).
      CHECK(std::abs(kept / 1e5 - (1.0 - p)) < 0.01);
      const double m = mean(yv);
      std::vector<double> sq(yv.size());
      for (size_t i = 0; i < yv.size(); ++i) sq[i] = (yv[i] - m) * (yv[i] - m);
      CHECK(std::abs(m) < 0.02);
      CHECK(std::abs(mean(sq) - 1.0) < 0.03);
      // The same seed: the same mask on every device and in both dtypes.
      std::vector<double> mask(gv.size());
      for (size_t i = 0; i < gv.size(); ++i) mask[i] = gv[i] != 0.0;
      if (first.empty()) first = mask;
      CHECK(mask == first);
    }
  }
}

TEST_CASE("nn_layers_31: feature_alpha_dropout drops whole channels", "[nn][nn_layers_31]") {
  const double p = 0.4;
  const double a = 1.0 / std::sqrt((kAlpha * kAlpha * p + 1.0) * (1.0 - p));
  manual_seed(8);
  const Tensor x = randn({16, 8, 3, 2}, kF64).requires_grad_(true);
  const Tensor y = F::feature_alpha_dropout(x, F::FeatureAlphaDropoutFuncOptions().p(p).training(true));
  const auto xv = values(x), yv = values(y), gv = values(grad_of_sum(y, x));
  int bad = 0, kept = 0;
  for (size_t c = 0; c < 128; ++c) {
    const bool keep = gv[c * 6] != 0.0;
    kept += keep;
    for (size_t i = c * 6; i < c * 6 + 6; ++i) {
      const double want = keep ? xv[i] * a + kAlpha * a * p : -(kAlpha * a) + kAlpha * a * p;
      bad += yv[i] != want || gv[i] != (keep ? a : 0.0);
    }
  }
  CHECK(bad == 0);
  CHECK(kept > 20);  // 128 channels at p = 0.4: both outcomes (a miss below 1e-20)
  CHECK(kept < 108);
  CHECK_THROWS_WITH(F::feature_alpha_dropout(randn({5}, kF64), F::FeatureAlphaDropoutFuncOptions().training(true)),
                    Contains("feature_alpha_dropout") && Contains("[5]"));
}

TEST_CASE("nn_layers_31: alpha dropout edges, layers, prints and errors", "[nn][nn_layers_31]") {
  const Tensor x = randn({4, 3}, kF64);
  CHECK(F::alpha_dropout(x).is_same(x));  // training defaults to false, as LibTorch's options
  CHECK(F::alpha_dropout(x, 0.0, true).is_same(x));
  CHECK(F::alpha_dropout(empty({0, 3}, kF64), 0.5, true).numel() == 0);
  CHECK_VALUES(F::alpha_dropout(x, 1.0, true), std::vector<double>(12, 0.0));  // input * 0, as PyTorch 1.13
  // The layers: training applies, eval is the input itself.
  AlphaDropout ad(0.2);
  FeatureAlphaDropout fad(FeatureAlphaDropoutOptions(0.2));
  ad->eval();
  fad->eval();
  CHECK(ad(x).is_same(x));
  CHECK(fad(x).is_same(x));
  ad->train();
  manual_seed(9);
  const Tensor y1 = ad(x);
  manual_seed(9);
  CHECK_ALLCLOSE(F::alpha_dropout(x, 0.2, true), y1, 0, 0);
  CHECK(ad->to_string() == "AlphaDropout(p=0.2, inplace=False)");
  CHECK(FeatureAlphaDropout()->to_string() == "FeatureAlphaDropout(p=0.5, inplace=False)");
  // inplace writes the result into the input.
  Tensor z = x.clone();
  manual_seed(9);
  CHECK(F::alpha_dropout(z, 0.2, true, /*inplace=*/true).is_same(z));
  CHECK_ALLCLOSE(z, y1, 0, 0);
  CHECK_THROWS_AS(AlphaDropout(1.5), ValueError);
  CHECK_THROWS_WITH(FeatureAlphaDropout(-0.1), Contains("FeatureAlphaDropout") && Contains("-0.1"));
  CHECK_THROWS_WITH(F::alpha_dropout(x, 2.0, false), Contains("alpha_dropout") && Contains("[0, 1]"));
  CHECK_THROWS_AS(F::alpha_dropout(tensor(std::vector<int64_t>{1}, {1}, TensorOptions(kInt64)), 0.5, true), TypeError);
}

TEST_CASE("nn_layers_31: gumbel_softmax soft and hard samples", "[nn][nn_layers_31]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    manual_seed(10);
    const Tensor logits = randn({6, 5}, kF64).to(dev).requires_grad_(true);
    const double tau = 0.7;
    manual_seed(11);
    const Tensor soft = F::gumbel_softmax(logits, F::GumbelSoftmaxFuncOptions().tau(tau));
    // The same draws by hand: g = -log(-log(U)), softmax((logits + g) / tau).
    manual_seed(11);
    const Tensor g = -log(-log(rand({6, 5}, kF64).to(dev)));
    CHECK_ALLCLOSE(soft, softmax((logits.detach() + g) / tau, 1), 1e-14, 0);
    CHECK_ALLCLOSE(soft.sum({1}), ones({6}, kF64), 1e-14, 0);
    manual_seed(11);
    const Tensor hard = F::gumbel_softmax(logits, F::GumbelSoftmaxFuncOptions().tau(tau).hard(true));
    CHECK_ALLCLOSE(hard, F::one_hot(soft.argmax(1), 5).to(kFloat64), 0, 1e-15);  // values: the one-hot
    // The straight-through gradient is the soft sample's.
    const Tensor w = randn({6, 5}, kF64).to(dev);
    const Tensor gs = autograd::grad({(soft * w).sum()}, {logits})[0];
    const Tensor gh = autograd::grad({(hard * w).sum()}, {logits})[0];
    CHECK_ALLCLOSE(gh, gs, 1e-15, 1e-15);
    // dim 0: the columns sum to 1.
    CHECK_ALLCLOSE(F::gumbel_softmax(logits, F::GumbelSoftmaxFuncOptions().dim(0)).sum({0}), ones({5}, kF64), 1e-14, 0);
  }
  // With the noise fixed by reseeding inside the function, the soft sample is a smooth function.
  CHECK_GRADCHECKS(
      [](const TL& x) {
        manual_seed(12);
        return TL{F::gumbel_softmax(x[0], F::GumbelSoftmaxFuncOptions().tau(0.5).dim(0))};
      },
      {randn({4, 3}, kF64).requires_grad_(true)});
  const Tensor l = randn({2, 3}, kF64);
  CHECK_THROWS_WITH(F::gumbel_softmax(l, F::GumbelSoftmaxFuncOptions().tau(0.0)),
                    Contains("gumbel_softmax") && Contains("tau"));
  CHECK_THROWS_AS(F::gumbel_softmax(l, F::GumbelSoftmaxFuncOptions().dim(2)), ValueError);
  CHECK_THROWS_AS(F::gumbel_softmax(tensor(std::vector<int64_t>{1}, {1}, TensorOptions(kInt64))), TypeError);
}

TEST_CASE("nn_layers_31: CrossMapLRN2d matches PyTorch 1.13's forward and legacy backward",
          "[nn][nn_layers_31][oracle]") {
  const auto seen = wick::test::check_oracle_ops({"cross_map_lrn2d"},
                                                 [](const wick::test::OracleCase& c, const TL& x, Device) {
                                                   const auto& kw = c.kwargs;
                                                   CrossMapLRN2d m(CrossMapLRN2dOptions(kw.at("size").get<int64_t>())
                                                                       .alpha(kw.at("alpha").get<double>())
                                                                       .beta(kw.at("beta").get<double>())
                                                                       .k(kw.at("k").get<double>()));
                                                   return m(x[0]);
                                                 },
                                                 {1e-12, 1e-10, 1e-13});
  CHECK(seen.total == 6);
  // One channel, by hand: out = x * s^-beta with s = k + alpha / size * x^2, and the gradient is
  // then the exact derivative s^-beta - 2 * alpha * beta / size * x^2 * s^(-beta - 1).
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor x = tensor({0.5, -2.0}, {1, 1, 1, 2}, kF64).to(dev).requires_grad_(true);
    const Tensor y = CrossMapLRN2d(CrossMapLRN2dOptions(3).alpha(0.6).beta(0.75).k(2.0))(x);
    const auto gx = values(grad_of_sum(y, x));
    for (size_t i = 0; i < 2; ++i) {
      const double v = i == 0 ? 0.5 : -2.0, s = 2.0 + 0.2 * v * v;
      CHECK(std::abs(values(y)[i] - v * std::pow(s, -0.75)) < 1e-15);
      CHECK(std::abs(gx[i] - (std::pow(s, -0.75) - 0.3 * v * v * std::pow(s, -1.75))) < 1e-15);
    }
  }
  CHECK(CrossMapLRN2d(5)->to_string() == "CrossMapLRN2d(5, alpha=0.0001, beta=0.75, k=1)");  // PyTorch 1.13's
  CHECK(CrossMapLRN2d(CrossMapLRN2dOptions(3).alpha(0.01).k(1.5))->to_string() ==
        "CrossMapLRN2d(3, alpha=0.01, beta=0.75, k=1.5)");
  CHECK_THROWS_WITH(CrossMapLRN2d(3)(randn({2, 3, 4}, kF64)), Contains("CrossMapLRN2d") && Contains("[2, 3, 4]"));
  CHECK_THROWS_AS(CrossMapLRN2d(0), ValueError);
  const Tensor x1 = randn({1, 3, 2, 2}, kF64).requires_grad_(true);
  CHECK_THROWS_WITH(grad_of_sum(CrossMapLRN2d(1)(x1), x1), Contains("CrossMapLRN2d") && Contains("size 1"));
}
