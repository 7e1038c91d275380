// Layer semantics checked by hand: BatchNorm's running statistics (PyTorch's update rule),
// default initialization, init functions, dropout seeding, pooling edge cases, loss semantics.
#include <catch2/catch.hpp>
#include <cmath>

#include "support/allclose.h"
#include "wick/autograd/grad_mode.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using wick::test::values;

TEST_CASE("BatchNorm running statistics follow PyTorch's update rule", "[nn][batchnorm]") {
  const double m = 0.3;
  BatchNorm1d bn(BatchNorm1dOptions(2).momentum(m), kFloat64);
  // Batch of 4 for channel 0: 1, 2, 3, 6 (mean 3, biased var 3.5, unbiased var 14/3).
  Tensor x = wick::tensor(std::vector<double>{1, 10, 2, 20, 3, 30, 6, 40}, {4, 2}, kFloat64);
  Tensor y = bn->forward(x);
  CHECK(bn->num_batches_tracked().item<int64_t>() == 1);
  const double rm0 = (1 - m) * 0 + m * 3.0, rv0 = (1 - m) * 1 + m * (14.0 / 3.0);
  const double rm1 = m * 25.0, rv1 = (1 - m) + m * (500.0 / 3.0);  // 10,20,30,40: mean 25, unbiased var 500/3
  CHECK_ALLCLOSE(bn->running_mean(), wick::tensor({rm0, rm1}, kFloat64), 1e-14, 0);
  CHECK_ALLCLOSE(bn->running_var(), wick::tensor({rv0, rv1}, kFloat64), 1e-14, 0);
  // Training output normalizes with the biased batch variance.
  CHECK(values(y)[0] == Approx((1 - 3.0) / std::sqrt(3.5 + 1e-5)).epsilon(1e-12));
  // A second step compounds.
  bn->forward(x * 2.0);
  CHECK(bn->num_batches_tracked().item<int64_t>() == 2);
  CHECK(values(bn->running_mean())[0] == Approx((1 - m) * rm0 + m * 6.0).epsilon(1e-14));
  CHECK(values(bn->running_var())[0] == Approx((1 - m) * rv0 + m * 4 * 14.0 / 3.0).epsilon(1e-14));
  // Eval mode uses the running statistics and does not update them.
  bn->eval();
  Tensor ye = bn->forward(x);
  CHECK(bn->num_batches_tracked().item<int64_t>() == 2);
  const double rmean = values(bn->running_mean())[0], rvar = values(bn->running_var())[0];
  CHECK(values(ye)[0] == Approx((1 - rmean) / std::sqrt(rvar + 1e-5)).epsilon(1e-12));
  // Every element, with an affine transform, against the running statistics computed by hand:
  // the second step saw channel 0 as 2, 4, 6, 12 (mean 6, unbiased var 4 * 14/3) and channel 1
  // as 20, 40, 60, 80 (mean 50, unbiased var 4 * 500/3).
  const double mean[2] = {(1 - m) * rm0 + m * 6.0, (1 - m) * rm1 + m * 50.0};
  const double var[2] = {(1 - m) * rv0 + m * 4 * 14.0 / 3.0, (1 - m) * rv1 + m * 4 * 500.0 / 3.0};
  const double w[2] = {2.0, -0.5}, b[2] = {0.25, 3.0};
  {
    NoGradGuard no_grad;
    Tensor(bn->weight()).copy_(wick::tensor({w[0], w[1]}, kFloat64));
    Tensor(bn->bias()).copy_(wick::tensor({b[0], b[1]}, kFloat64));
  }
  const std::vector<double> xs = values(x);
  std::vector<double> want(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    const size_t c = i % 2;
    want[i] = (xs[i] - mean[c]) / std::sqrt(var[c] + 1e-5) * w[c] + b[c];
  }
  CHECK_ALLCLOSE(bn->forward(x), wick::tensor(want, {4, 2}, kFloat64), 1e-12, 0);
}

TEST_CASE("BatchNorm with momentum None uses the cumulative average", "[nn][batchnorm]") {
  BatchNorm2d bn(BatchNorm2dOptions(1).momentum(std::nullopt), kFloat64);
  Tensor a = wick::full({2, 1, 2, 2}, 1.0, kFloat64), b = wick::full({2, 1, 2, 2}, 4.0, kFloat64);
  bn->forward(a);
  CHECK(values(bn->running_mean())[0] == Approx(1.0));  // factor 1/1
  bn->forward(b);
  CHECK(values(bn->running_mean())[0] == Approx(2.5));  // factor 1/2: mean of 1 and 4
  CHECK(values(bn->running_var())[0] == Approx(0.0).margin(1e-15));
}

TEST_CASE("BatchNorm without running stats or affine keeps None entries", "[nn][batchnorm]") {
  BatchNorm2d bn(BatchNorm2dOptions(3).affine(false).track_running_stats(false));
  CHECK_FALSE(bn->weight().defined());
  CHECK_FALSE(bn->running_mean().defined());
  CHECK(bn->parameters().empty());
  CHECK(bn->buffers().empty());
  CHECK(bn->state_dict().empty());
  bn->eval();  // no running stats: batch statistics even in eval mode
  Tensor y = bn->forward(wick::randn({4, 3, 2, 2}));
  CHECK(std::abs(values(wick::mean(y))[0]) < 1e-5);
  CHECK_THROWS_WITH(bn->forward(wick::randn({4, 3})), Catch::Contains("BatchNorm2d: expected 4-d input"));
  CHECK_THROWS_WITH(BatchNorm1d(2)->forward(wick::randn({1, 2})), Catch::Contains("more than 1 value per channel"));
}

TEST_CASE("default initialization matches PyTorch's bounds", "[nn][init]") {
  wick::manual_seed(0);
  Linear l(100, 50);
  const double bound = 1.0 / std::sqrt(100.0);  // kaiming_uniform(a = sqrt(5)) == U(-1/sqrt(fan_in), ...)
  auto w = values(l->weight());
  double lo = 1, hi = -1, sum = 0;
  for (double v : w) lo = std::min(lo, v), hi = std::max(hi, v), sum += v;
  CHECK(lo >= -bound);
  CHECK(hi <= bound);
  CHECK(hi > 0.95 * bound);
  CHECK(std::abs(sum / static_cast<double>(w.size())) < 0.01);
  for (double v : values(l->bias())) CHECK(std::abs(v) <= bound);
  Conv2d c(4, 8, 3);
  const double cb = 1.0 / std::sqrt(4.0 * 9.0);
  for (double v : values(c->weight())) CHECK(std::abs(v) <= cb);
  for (double v : values(c->bias())) CHECK(std::abs(v) <= cb);
  LayerNorm ln(LayerNormOptions({4}));
  CHECK(values(ln->weight()) == std::vector<double>(4, 1.0));
  CHECK(values(ln->bias()) == std::vector<double>(4, 0.0));
  Embedding e(EmbeddingOptions(1000, 8).padding_idx(3));
  auto ev = values(e->weight());
  double s2 = 0;
  for (double v : ev) s2 += v * v;
  CHECK(s2 / static_cast<double>(ev.size()) == Approx(1.0).epsilon(0.1));
  for (int j = 0; j < 8; ++j) CHECK(ev[static_cast<size_t>(3 * 8 + j)] == 0.0);
  CHECK(l->weight().requires_grad());
  CHECK(l->weight().is_leaf());
}

TEST_CASE("nn::init functions", "[nn][init]") {
  using namespace wick::nn::init;
  CHECK(calculate_gain(Nonlinearity::ReLU) == Approx(std::sqrt(2.0)));
  CHECK(calculate_gain(Nonlinearity::Tanh) == Approx(5.0 / 3.0));
  CHECK(calculate_gain(Nonlinearity::LeakyReLU) == Approx(std::sqrt(2.0 / (1 + 0.0001))));
  CHECK(calculate_gain(Nonlinearity::LeakyReLU, std::sqrt(5.0)) == Approx(std::sqrt(1.0 / 3.0)));
  // A negative slope is used as given (torch.nn.init.calculate_gain('leaky_relu', -0.2) = 1.3867504905630728).
  CHECK(calculate_gain(Nonlinearity::LeakyReLU, -0.2) == Approx(1.3867504905630728).epsilon(1e-15));
  CHECK(calculate_gain(Nonlinearity::SELU) == Approx(0.75));
  Tensor t = wick::empty({20, 30, 2, 2}, TensorOptions(kFloat64).requires_grad());
  auto fans = calculate_fan_in_and_fan_out(t);
  CHECK(fans.fan_in == 120);
  CHECK(fans.fan_out == 80);
  CHECK_THROWS_WITH(calculate_fan_in_and_fan_out(wick::empty({3})), Catch::Contains("fewer than 2 dims"));
  auto stats = [](const Tensor& x) {
    auto v = values(x);
    double s = 0, s2 = 0, mx = 0;
    for (double e : v) s += e, s2 += e * e, mx = std::max(mx, std::abs(e));
    const double n = static_cast<double>(v.size());
    return std::array<double, 3>{s / n, std::sqrt(s2 / n - (s / n) * (s / n)), mx};
  };
  xavier_uniform_(t, 2.0);
  const double xa = 2.0 * std::sqrt(6.0 / 200.0);
  CHECK(stats(t)[2] <= xa);
  CHECK(stats(t)[1] == Approx(xa / std::sqrt(3.0)).epsilon(0.05));
  xavier_normal_(t);
  CHECK(stats(t)[1] == Approx(std::sqrt(2.0 / 200.0)).epsilon(0.05));
  kaiming_normal_(t, 0, FanMode::FanOut, Nonlinearity::ReLU);
  CHECK(stats(t)[1] == Approx(std::sqrt(2.0 / 80.0)).epsilon(0.05));
  kaiming_uniform_(t, 0, FanMode::FanIn, Nonlinearity::ReLU);
  CHECK(stats(t)[2] <= std::sqrt(6.0 / 120.0));
  uniform_(t, 2, 3);
  CHECK(stats(t)[0] == Approx(2.5).epsilon(0.01));
  normal_(t, 1, 0.5);
  CHECK(stats(t)[1] == Approx(0.5).epsilon(0.05));
  constant_(t, 4);
  CHECK(stats(t)[0] == 4.0);
  CHECK(t.requires_grad());
  CHECK(t.is_leaf());
  CHECK_THROWS_WITH(uniform_(wick::zeros({2}, kInt64)), Catch::Contains("float32 or float64"));
}

TEST_CASE("Dropout is seeded, scales by 1/(1-p), and is the identity in eval", "[nn][dropout]") {
  Dropout d(0.25);
  Tensor x = wick::ones({1000}, kFloat64);
  wick::manual_seed(42);
  Tensor a = d->forward(x);
  wick::manual_seed(42);
  Tensor b = d->forward(x);
  CHECK_ALLCLOSE(a, b, 0, 0);
  int zeros = 0;
  for (double v : values(a)) {
    CHECK((v == 0.0 || v == Approx(1.0 / 0.75)));
    zeros += v == 0.0;
  }
  CHECK(zeros > 180);
  CHECK(zeros < 320);
  d->eval();
  CHECK(d->forward(x).is_same(x));
  CHECK(values(Dropout(1.0)->forward(x)) == std::vector<double>(1000, 0.0));
  CHECK_THROWS_WITH(Dropout(1.5), Catch::Contains("[0, 1]"));
}

TEST_CASE("pooling edge cases against hand-computed values", "[nn][pooling]") {
  // 1 x 1 x 3 x 3 input 1..9.
  Tensor x = wick::arange(1, 10, 1, kFloat64).reshape({1, 1, 3, 3});
  // max, kernel 2, stride 2, ceil_mode: windows [0:2), [2:3).
  CHECK(values(F::max_pool2d(x, 2, 2, 0, 1, true)) == std::vector<double>{5, 6, 8, 9});
  CHECK(values(F::max_pool2d(x, 2, 2, 0, 1, false)) == std::vector<double>{5});
  // padding reads -inf: all-negative input still gives its own values.
  CHECK(values(F::max_pool2d(-x, 3, 1, 1)) == std::vector<double>{-1, -1, -2, -1, -1, -2, -4, -4, -5});
  // avg with padding 1, kernel 3, stride 2: corner window holds 1,2,4,5 (sum 12).
  CHECK(values(F::avg_pool2d(x, 3, 2, 1, false, true))[0] == Approx(12.0 / 9.0));
  CHECK(values(F::avg_pool2d(x, 3, 2, 1, false, false))[0] == Approx(12.0 / 4.0));
  // ceil_mode avg: the last window is clipped at H + pad.
  CHECK(values(F::avg_pool2d(x, 2, 2, 0, true, true)) == std::vector<double>{3, 4.5, 7.5, 9});
  // adaptive 3 -> 2: windows [0, 2) and [1, 3).
  CHECK(values(F::adaptive_avg_pool2d(x, 2)) == std::vector<double>{3, 4, 6, 7});
  CHECK(values(F::adaptive_avg_pool2d(x, 1)) == std::vector<double>{5});
  CHECK_THROWS_WITH(F::max_pool2d(x, 2, 1, 2), Catch::Contains("at most half the kernel size"));
  CHECK_THROWS_WITH(F::max_pool2d(wick::ones({3}), 2), Catch::Contains("3-d [C, H, W] or 4-d"));
  CHECK_THROWS_WITH(F::conv2d(x, wick::ones({1, 2, 1, 1}, kFloat64)), Catch::Contains("groups"));
  CHECK_THROWS_WITH(F::conv2d(x, wick::ones({1, 1, 5, 5}, kFloat64)),
                    Catch::Contains("smaller than the dilated kernel"));
}

TEST_CASE("conv2d matches a direct loop with stride, padding and dilation", "[nn][conv]") {
  wick::manual_seed(3);
  Tensor x = wick::randn({2, 3, 7, 6}, kFloat64), w = wick::randn({4, 3, 3, 2}, kFloat64),
         b = wick::randn({4}, kFloat64);
  const int sh = 2, sw = 1, ph = 1, pw = 2, dh = 2, dw = 1;
  Tensor y = F::conv2d(x, w, b, {sh, sw}, {ph, pw}, {dh, dw});
  const int64_t oh = (7 + 2 * ph - dh * 2 - 1) / sh + 1, ow = (6 + 2 * pw - dw * 1 - 1) / sw + 1;
  REQUIRE(y.sizes() == IntArrayRef({2, 4, oh, ow}));
  auto xv = values(x), wv = values(w), bv = values(b), yv = values(y);
  double worst = 0;
  for (int n = 0; n < 2; ++n)
    for (int o = 0; o < 4; ++o)
      for (int i = 0; i < oh; ++i)
        for (int j = 0; j < ow; ++j) {
          double s = bv[o];
          for (int c = 0; c < 3; ++c)
            for (int ki = 0; ki < 3; ++ki)
              for (int kj = 0; kj < 2; ++kj) {
                const int r = i * sh - ph + ki * dh, q = j * sw - pw + kj * dw;
                if (r < 0 || r >= 7 || q < 0 || q >= 6) continue;
                s += xv[((n * 3 + c) * 7 + r) * 6 + q] * wv[((o * 3 + c) * 3 + ki) * 2 + kj];
              }
          worst = std::max(worst, std::abs(s - yv[((n * 4 + o) * oh + i) * ow + j]));
        }
  CHECK(worst < 1e-12);
}

TEST_CASE("cross_entropy semantics: ignore_index, label smoothing, weights, reductions", "[nn][loss]") {
  Tensor x = wick::tensor(std::vector<double>{1, 2, 3, 1, 1, 1, 0, 5, -1}, {3, 3}, kFloat64);
  Tensor t = wick::tensor(std::vector<int64_t>{2, -100, 1}, {3}, kInt64);
  auto lsm = values(F::log_softmax(x, 1));
  const double l0 = -lsm[2], l2 = -lsm[7];
  CHECK(values(F::cross_entropy(x, t))[0] == Approx((l0 + l2) / 2).epsilon(1e-14));
  CHECK(values(F::cross_entropy(x, t, {}, Reduction::Sum))[0] == Approx(l0 + l2).epsilon(1e-14));
  CHECK(values(F::cross_entropy(x, t, {}, Reduction::None)) == std::vector<double>{l0, 0.0, l2});
  // Label smoothing 0.3: (1 - s) nll + s/C * (-sum logp), mean over the 2 non-ignored rows.
  const double s = 0.3;
  const double sm0 = -(lsm[0] + lsm[1] + lsm[2]), sm2 = -(lsm[6] + lsm[7] + lsm[8]);
  CHECK(values(F::cross_entropy(x, t, {}, Reduction::Mean, -100, s))[0] ==
        Approx((1 - s) * (l0 + l2) / 2 + s / 3 * (sm0 + sm2) / 2).epsilon(1e-14));
  // Class weights: the mean divides by the summed weights of the targets.
  Tensor w = wick::tensor({1, 2, 3}, kFloat64);
  CHECK(values(F::cross_entropy(x, t, w))[0] == Approx((3 * l0 + 2 * l2) / 5).epsilon(1e-14));
  const double wsm0 = -(1 * lsm[0] + 2 * lsm[1] + 3 * lsm[2]), wsm2 = -(1 * lsm[6] + 2 * lsm[7] + 3 * lsm[8]);
  CHECK(values(F::cross_entropy(x, t, w, Reduction::Mean, -100, s))[0] ==
        Approx((1 - s) * (3 * l0 + 2 * l2) / 5 + s / 3 * (wsm0 + wsm2) / 5).epsilon(1e-14));
  // All ignored: mean is NaN (0 / 0), as PyTorch.
  Tensor all_ignored = wick::tensor(std::vector<int64_t>{-100, -100, -100}, {3}, kInt64);
  CHECK(std::isnan(values(F::cross_entropy(x, all_ignored))[0]));
  CHECK_THROWS_WITH(F::cross_entropy(x, wick::tensor(std::vector<int64_t>{0, 3, 1}, {3}, kInt64)),
                    Catch::Contains("target value 3") && Catch::Contains("out of bounds for 3 classes"));
  CHECK_THROWS_WITH(F::cross_entropy(x, wick::zeros({3}, kFloat64)), Catch::Contains("int64 class indices"));
  CHECK_THROWS_WITH(F::nll_loss(x, wick::zeros({2}, kInt64)), Catch::Contains("needs target of shape [3]"));
  // A 1-d input with a 0-d target, and spatial dims.
  CHECK(values(F::cross_entropy(wick::tensor({1, 2, 3}, kFloat64), wick::scalar_tensor(int64_t{2}, kInt64)))[0] ==
        Approx(l0).epsilon(1e-14));
  Tensor x4 = wick::randn({2, 3, 2, 2}, kFloat64);
  Tensor t4 = wick::zeros({2, 2, 2}, kInt64);
  CHECK(F::cross_entropy(x4, t4, {}, Reduction::None).sizes() == IntArrayRef({2, 2, 2}));
}

TEST_CASE("mse, l1 and BCE-with-logits by hand", "[nn][loss]") {
  Tensor a = wick::tensor({1, -2, 3}, kFloat64), b = wick::tensor({0, 0, 1}, kFloat64);
  CHECK(values(F::mse_loss(a, b))[0] == Approx((1 + 4 + 4) / 3.0));
  CHECK(values(F::l1_loss(a, b, Reduction::Sum))[0] == Approx(5.0));
  Tensor logits = wick::tensor({0.5, -30, 30}, kFloat64);
  Tensor target = wick::tensor({1, 0, 0}, kFloat64);
  auto l = values(F::binary_cross_entropy_with_logits(logits, target, {}, Reduction::None));
  CHECK(l[0] == Approx(std::log1p(std::exp(-0.5))));
  CHECK(l[1] == Approx(std::log1p(std::exp(-30.0))).margin(1e-14));  // cancellation, as PyTorch's formula
  CHECK(l[2] == Approx(30.0));                                       // stable for large logits
  Tensor pw = wick::tensor({2, 2, 2}, kFloat64);
  auto lp = values(F::binary_cross_entropy_with_logits(logits, target, {}, Reduction::None, pw));
  CHECK(lp[0] == Approx(2 * std::log1p(std::exp(-0.5))));
  CHECK_THROWS_WITH(F::binary_cross_entropy_with_logits(logits, wick::ones({2}, kFloat64)),
                    Catch::Contains("must be the same as input size"));
}

TEST_CASE("Embedding: lookup, padding_idx gets no gradient, bad indices", "[nn][embedding]") {
  Embedding e(EmbeddingOptions(5, 2).padding_idx(1), kFloat64);
  Tensor idx = wick::tensor(std::vector<int64_t>{1, 3, 1, 0}, {2, 2}, kInt64);
  Tensor y = e->forward(idx);
  CHECK(y.sizes() == IntArrayRef({2, 2, 2}));
  wick::sum(y).backward();
  auto g = values(e->weight().grad());
  CHECK(g == std::vector<double>{1, 1, 0, 0, 0, 0, 1, 1, 0, 0});
  CHECK_THROWS_WITH(e->forward(wick::tensor(std::vector<int64_t>{5}, {1}, kInt64)),
                    Catch::Contains("index 5 is out of range"));
  CHECK_THROWS_WITH(e->forward(wick::zeros({2}, kFloat64)), Catch::Contains("indices must be int64"));
}
