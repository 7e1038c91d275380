// Conv1d, MaxPool1d, AvgPool1d, AdaptiveAvgPool1d and their functions, beyond the oracle values
// (one_d_oracle_test.cpp): conv1d against a direct float64 loop, Conv1d against Conv2d on a unit
// height, pooling by hand (values worked out on paper and confirmed with PyTorch 1.13), print
// strings and state_dict keys as PyTorch 1.13's, default initialization bounds, option shapes,
// and the typed errors, whose messages name the 1-d op, never the 2-d one it runs on. The
// gradchecks are in functional_gradcheck_test.cpp.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/generator.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using Catch::Matchers::Contains;
using wick::test::values;

namespace {
const TensorOptions kF64(kFloat64);

// y[n, o, i] = b[o] + sum over the group's channels c and taps t of
// x[n, c, i * stride - left + t * dilation] * w[o, c - first, t], x zero outside [0, L).
std::vector<double> conv1d_loop(const Tensor& x, const Tensor& w, const Tensor& b, int64_t stride, int64_t left,
                                int64_t right, int64_t dilation, int64_t groups) {
  const int64_t N = x.size(0), C = x.size(1), L = x.size(2), O = w.size(0), K = w.size(2);
  const int64_t out = (L + left + right - dilation * (K - 1) - 1) / stride + 1;
  const auto xv = values(x), wv = values(w), bv = b.defined() ? values(b) : std::vector<double>(O, 0.0);
  std::vector<double> y;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o) {
      const int64_t first = o / (O / groups) * (C / groups);
      for (int64_t i = 0; i < out; ++i) {
        double s = bv[o];
        for (int64_t c = 0; c < C / groups; ++c)
          for (int64_t t = 0; t < K; ++t) {
            const int64_t l = i * stride - left + t * dilation;
            if (l < 0 || l >= L) continue;
            s += xv[(n * C + first + c) * L + l] * wv[(o * (C / groups) + c) * K + t];
          }
        y.push_back(s);
      }
    }
  return y;
}

double worst_difference(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}
}  // namespace

TEST_CASE("conv1d matches a direct loop: stride, padding, dilation, groups, same with its odd column on the right",
          "[nn][conv]") {
  wick::manual_seed(11);
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const TensorOptions o = kF64.device(dev);
    const Tensor x = randn({2, 4, 11}, o), w = randn({6, 2, 3}, o), b = randn({6}, o);
    const Tensor y = F::conv1d(x, w, b, 2, 2, 2, 2);
    REQUIRE(y.sizes() == IntArrayRef({2, 6, 6}));  // (11 + 4 - 4 - 1) / 2 + 1
    CHECK(worst_difference(values(y), conv1d_loop(x, w, b, 2, 2, 2, 2, 2)) < 1e-12);
    // same, kernel 4: total padding 3, one on the left and two on the right.
    const Tensor w4 = randn({3, 4, 4}, o);
    const Tensor ys = F::conv1d(x, w4, {}, 1, kSame);
    REQUIRE(ys.sizes() == IntArrayRef({2, 3, 11}));
    CHECK(worst_difference(values(ys), conv1d_loop(x, w4, {}, 1, 1, 2, 1, 1)) < 1e-12);
    // Unbatched [C, L] is a batch of one without the batch dim.
    const Tensor yu = F::conv1d(x[1], w4, {}, 1, 3, 2);
    REQUIRE(yu.sizes() == IntArrayRef({3, 11}));  // 11 + 6 - 6 - 1 + 1
    CHECK(worst_difference(values(yu), conv1d_loop(x.narrow(0, 1, 1), w4, {}, 1, 3, 3, 2, 1)) < 1e-12);
  }
}

TEST_CASE("Conv1d equals Conv2d with a unit height on the same weights, bit for bit, with its gradients",
          "[nn][conv]") {
  // F::conv1d runs conv2d on a unit height (Note [1-d on a unit height]); this pins that the view
  // adds nothing. The independent check is the direct loop above.
  wick::manual_seed(12);
  Conv1d c1(Conv1dOptions(4, 6, 3).stride(2).padding(1).dilation(2).groups(2), kF64);
  Conv2d c2(Conv2dOptions(4, 6, {1, 3}).stride({1, 2}).padding({0, 1}).dilation({1, 2}).groups(2), kF64);
  {
    NoGradGuard no_grad;
    Tensor w2 = c2->weight(), b2 = c2->bias();  // handles sharing the parameters
    w2.copy_(c1->weight().unsqueeze(2));
    b2.copy_(c1->bias());
  }
  const Tensor x = randn({3, 4, 13}, kF64);
  const Tensor x1 = x.detach().requires_grad_(true), x2 = x.detach().requires_grad_(true);
  const Tensor y1 = c1(x1), y2 = c2(x2.unsqueeze(2)).squeeze(2);
  REQUIRE(y1.sizes() == y2.sizes());
  CHECK(values(y1) == values(y2));
  const Tensor g = randn(y1.sizes(), kF64);
  (y1 * g).sum().backward();
  (y2 * g).sum().backward();
  CHECK(values(x1.grad()) == values(x2.grad()));
  CHECK(values(c1->weight().grad()) == values(c2->weight().grad()));
  CHECK(values(c1->bias().grad()) == values(c2->bias().grad()));
}

TEST_CASE("1-d pooling by hand: ties, indices and their gradient, divisors, adaptive windows, empty windows",
          "[nn][pooling]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const TensorOptions o = kF64.device(dev);
    // Ties keep the first position: windows [1, 3], [3, 3], [3, 2], [2, 5].
    const Tensor x = tensor(std::vector<double>{1, 3, 3, 2, 5}, {1, 1, 5}, o).requires_grad_(true);
    const auto [y, where] = F::max_pool1d_with_indices(x, 2, 1);
    CHECK_VALUES(y, {3, 3, 3, 5});
    CHECK_VALUES(where, {1, 1, 2, 4});
    y.sum().backward();
    CHECK_VALUES(x.grad(), {0, 2, 1, 0, 1});
    // Padding reads -inf: an all-negative input keeps its own values.
    const Tensor neg = tensor(std::vector<double>{-1, -2, -3}, {1, 3}, o);
    CHECK_VALUES(F::max_pool1d(neg, 3, 1, 1), {-1, -1, -2});
    // 1..6, kernel 2, stride 2, padding 1, ceil_mode: windows {pad, 1}, {2, 3}, {4, 5}, {6, pad}.
    const Tensor r = tensor(std::vector<double>{1, 2, 3, 4, 5, 6}, {1, 1, 6}, o);
    CHECK_VALUES(F::avg_pool1d(r, 2, 2, 1, true, true), {0.5, 2.5, 4.5, 3});
    CHECK_VALUES(F::avg_pool1d(r, 2, 2, 1, true, false), {1, 2.5, 4.5, 6});
    CHECK_VALUES(F::avg_pool1d(r, 2), {1.5, 3.5, 5.5});  // stride 0: stride = kernel_size
    CHECK_VALUES(F::max_pool1d(r, 4, 0, 0, 1, true), {4, 6});
    // Adaptive windows [floor(i L / out), ceil((i + 1) L / out)): 5 -> 3 is {1, 2}, {2, 3, 4}, {4, 5}.
    CHECK_VALUES(F::adaptive_avg_pool1d(r.narrow(2, 0, 5).reshape({1, 5}), 3), {1.5, 3, 4.5});
    CHECK_VALUES(F::adaptive_avg_pool1d(r.narrow(2, 0, 2).reshape({1, 2}), 3), {1, 1.5, 2});  // longer
    // Kernel 2, padding 1, dilation 3 over 2 positions: the one window's taps are -1 and 2, both
    // outside. max_pool1d gives -inf, as PyTorch; with indices it is refused (PyTorch's index, 2,
    // would be outside the input).
    const Tensor two = tensor(std::vector<double>{7, 8}, {1, 1, 2}, o);
    CHECK_VALUES(F::max_pool1d(two, 2, 1, 1, 3), {-std::numeric_limits<double>::infinity()});
    CHECK_THROWS_AS(F::max_pool1d_with_indices(two, 2, 1, 1, 3), ValueError);
    CHECK_THROWS_WITH(F::max_pool1d_with_indices(two, 2, 1, 1, 3),
                      Contains("max_pool1d_with_indices (as max_pool2d_with_indices on a unit height): ") &&
                          Contains("no input position"));
  }
}

TEST_CASE("the 1-d layers print and name their state as PyTorch 1.13", "[nn]") {
  // print(nn.Conv1d(4, 6, 3)), print(nn.Conv1d(4, 6, 3, stride=2, padding=1, dilation=2, groups=2,
  // bias=False)), ..., print(nn.AdaptiveAvgPool1d(5)) under PyTorch 1.13.
  CHECK(Conv1d(4, 6, 3)->to_string() == "Conv1d(4, 6, kernel_size=(3,), stride=(1,))");
  CHECK(Conv1d(Conv1dOptions(4, 6, 3).stride(2).padding(1).dilation(2).groups(2).bias(false))->to_string() ==
        "Conv1d(4, 6, kernel_size=(3,), stride=(2,), padding=(1,), dilation=(2,), groups=2, bias=False)");
  CHECK(Conv1d(Conv1dOptions(4, 6, 3).padding(kSame))->to_string() ==
        "Conv1d(4, 6, kernel_size=(3,), stride=(1,), padding=same)");
  CHECK(Conv1d(Conv1dOptions(4, 6, 3).padding(kValid))->to_string() ==
        "Conv1d(4, 6, kernel_size=(3,), stride=(1,), padding=valid)");
  CHECK(MaxPool1d(3)->to_string() == "MaxPool1d(kernel_size=3, stride=3, padding=0, dilation=1, ceil_mode=False)");
  CHECK(MaxPool1d(MaxPool1dOptions(3).stride(2).padding(1).dilation(2).ceil_mode(true))->to_string() ==
        "MaxPool1d(kernel_size=3, stride=2, padding=1, dilation=2, ceil_mode=True)");
  CHECK(AvgPool1d(3)->to_string() == "AvgPool1d(kernel_size=(3,), stride=(3,), padding=(0,))");
  CHECK(AvgPool1d(AvgPool1dOptions(3).stride(2).padding(1).ceil_mode(true).count_include_pad(false))->to_string() ==
        "AvgPool1d(kernel_size=(3,), stride=(2,), padding=(1,))");
  CHECK(AdaptiveAvgPool1d(5)->to_string() == "AdaptiveAvgPool1d(output_size=5)");

  Conv1d conv(Conv1dOptions(4, 6, 3).groups(2));
  CHECK(conv->named_parameters().keys() == std::vector<std::string>{"weight", "bias"});
  CHECK(conv->state_dict().keys() == std::vector<std::string>{"weight", "bias"});
  CHECK(conv->weight().sizes() == IntArrayRef({6, 2, 3}));
  CHECK(conv->bias().sizes() == IntArrayRef({6}));
  CHECK(Conv1d(Conv1dOptions(4, 6, 3).bias(false))->state_dict().keys() == std::vector<std::string>{"weight"});
  CHECK(MaxPool1d(2)->state_dict().keys().empty());
  CHECK(AvgPool1d(2)->state_dict().keys().empty());
  CHECK(AdaptiveAvgPool1d(2)->state_dict().keys().empty());
}

TEST_CASE("Conv1d initializes as PyTorch: U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = in / groups * k", "[nn][init]") {
  wick::manual_seed(13);
  Conv1d c(Conv1dOptions(8, 64, 5).groups(2));  // fan_in 4 * 5 = 20
  const double bound = 1.0 / std::sqrt(20.0);
  double lo = 1, hi = -1;
  for (double v : values(c->weight())) lo = std::min(lo, v), hi = std::max(hi, v);
  CHECK(lo >= -bound);
  CHECK(hi <= bound);
  CHECK(hi > 0.95 * bound);  // 1280 draws reach the top 5% of the range
  CHECK(lo < -0.95 * bound);
  for (double v : values(c->bias())) CHECK(std::abs(v) <= bound);
  CHECK(c->weight().dtype() == kFloat32);
  CHECK(c->weight().requires_grad());
  CHECK(Conv1d(4, 6, 3, kF64)->weight().dtype() == kFloat64);
}

TEST_CASE("Conv1dOptions and the 1-d pooling options reach the layer: PyTorch's output lengths", "[nn]") {
  // L_out = floor((L + 2 padding - dilation (kernel - 1) - 1) / stride) + 1
  const Tensor x = randn({2, 4, 9}, kF64);
  CHECK(Conv1d(4, 6, 3, kF64)(x).sizes() == IntArrayRef({2, 6, 7}));
  CHECK(Conv1d(Conv1dOptions(4, 6, 3).stride(2).padding(1), kF64)(x).sizes() == IntArrayRef({2, 6, 5}));
  CHECK(Conv1d(Conv1dOptions(4, 6, 3).dilation(3), kF64)(x).sizes() == IntArrayRef({2, 6, 3}));
  CHECK(Conv1d(Conv1dOptions(4, 6, 4).padding(kSame), kF64)(x).sizes() == IntArrayRef({2, 6, 9}));
  CHECK(Conv1d(Conv1dOptions(4, 6, 4).padding(kValid), kF64)(x).sizes() == IntArrayRef({2, 6, 6}));
  CHECK(Conv1d(4, 6, 3, kF64)(x[0]).sizes() == IntArrayRef({6, 7}));  // unbatched
  Conv1d c(Conv1dOptions(4, 6, 3).stride(2).padding(1).dilation(2).groups(2).bias(false));
  CHECK(c->in_channels() == 4);
  CHECK(c->out_channels() == 6);
  CHECK(c->kernel_size() == 3);
  CHECK(c->stride() == 2);
  CHECK(c->padding() == 1);
  CHECK_FALSE(c->named_padding().has_value());
  CHECK(c->dilation() == 2);
  CHECK(c->groups() == 2);
  CHECK_FALSE(c->bias().defined());
  CHECK(Conv1d(Conv1dOptions(4, 6, 3).padding(kSame))->named_padding() == kSame);
  CHECK(MaxPool1d(2)(x).sizes() == IntArrayRef({2, 4, 4}));  // stride = kernel_size
  CHECK(MaxPool1d(MaxPool1dOptions(2).ceil_mode(true))(x).sizes() == IntArrayRef({2, 4, 5}));
  CHECK(MaxPool1d(MaxPool1dOptions(3).stride(1).dilation(2).padding(1))(x).sizes() == IntArrayRef({2, 4, 7}));
  CHECK(MaxPool1d(2)->options().stride() == 2);
  CHECK(AvgPool1d(AvgPool1dOptions(3).stride(2).padding(1))(x).sizes() == IntArrayRef({2, 4, 5}));
  CHECK(AvgPool1d(AvgPool1dOptions(4).ceil_mode(true))(x[1]).sizes() == IntArrayRef({4, 3}));
  CHECK(AdaptiveAvgPool1d(4)(x).sizes() == IntArrayRef({2, 4, 4}));
  CHECK(AdaptiveAvgPool1d(12)(x[0]).sizes() == IntArrayRef({4, 12}));
  // ones, kernel 2, stride 1, padding 1: the end windows hold one input of two.
  const Tensor o = ones({1, 1, 3}, kF64);
  CHECK_VALUES(AvgPool1d(AvgPool1dOptions(2).stride(1).padding(1))(o), {0.5, 1, 1, 0.5});
  CHECK_VALUES(AvgPool1d(AvgPool1dOptions(2).stride(1).padding(1).count_include_pad(false))(o), {1, 1, 1, 1});
}

TEST_CASE("conv1d errors are typed and name conv1d, the shapes and what to do", "[nn][conv][errors]") {
  const Tensor x = randn({2, 4, 7}, kF64), w = randn({6, 4, 3}, kF64);
  CHECK_THROWS_AS(F::conv1d(randn({2, 4, 1, 7}, kF64), w), ValueError);
  CHECK_THROWS_WITH(
      F::conv1d(randn({2, 4, 1, 7}, kF64), w),
      Contains("conv1d: expected a 2-d [C, L] (unbatched) or 3-d [N, C, L] input, got shape [2, 4, 1, 7]") &&
          Contains("a 4-d [N, C, H, W] input is conv2d's"));
  CHECK_THROWS_WITH(F::conv1d(randn({7}, kF64), w), Contains("got shape [7]") && Contains("input.unsqueeze(0)"));
  CHECK_THROWS_AS(F::conv1d(x, randn({6, 4, 1, 3}, kF64)), ValueError);
  CHECK_THROWS_WITH(F::conv1d(x, randn({6, 4, 1, 3}, kF64)),
                    Contains("conv1d: weight must be 3-d [out_channels, in_channels / groups, kernel_size], got shape "
                             "[6, 4, 1, 3]"));
  CHECK_THROWS_WITH(F::conv1d(x, randn({6, 4, 0}, kF64)), Contains("conv1d: kernel size should be greater than zero"));
  CHECK_THROWS_AS(F::conv1d(x, randn({6, 3, 3}, kF64)), ValueError);
  CHECK_THROWS_WITH(F::conv1d(x, randn({6, 3, 3}, kF64)),
                    Contains("input [2, 4, 7] has 4 channels, so weight [6, 3, 3] should have 4 input channels per "
                             "group") &&
                        Contains("conv1d: ") && !Contains("conv2d"));
  CHECK_THROWS_WITH(F::conv1d(x, randn({6, 3, 3}, kF64), {}, 1, 0, 1, 3),
                    Contains("conv1d: groups = 3 must divide both the input channels (4"));
  CHECK_THROWS_WITH(F::conv1d(x, w, {}, 1, 0, 1, 0), Contains("conv1d: groups must be positive, got 0"));
  CHECK_THROWS_AS(F::conv1d(randn({2, 4, 2}, kF64), w), ValueError);
  CHECK_THROWS_WITH(F::conv1d(randn({2, 4, 2}, kF64), w, {}, 1, 0, 2),
                    Contains("the padded input length 2") && Contains("shorter than the dilated kernel 5") &&
                        Contains("input shape [2, 4, 2], weight shape [6, 4, 3]") && Contains("conv1d: ") &&
                        !Contains("conv2d"));
  CHECK_THROWS_WITH(F::conv1d(x, w, {}, 0), Contains("conv1d: stride (0) and dilation (1) must be positive"));
  CHECK_THROWS_WITH(F::conv1d(x, w, {}, 1, 0, 0), Contains("conv1d: stride (1) and dilation (0) must be positive"));
  CHECK_THROWS_AS(F::conv1d(x, w, {}, 1, -1), ValueError);
  CHECK_THROWS_WITH(F::conv1d(x, w, {}, 1, -1), Contains("conv1d: padding must be non-negative"));
  CHECK_THROWS_AS(F::conv1d(x, w, randn({5}, kF64)), ValueError);
  CHECK_THROWS_WITH(F::conv1d(x, w, randn({5}, kF64)),
                    Contains("conv1d: bias must have shape [6] (out_channels), got [5]"));
  CHECK_THROWS_AS(F::conv1d(x, w, randn({6}, TensorOptions(kFloat32))), TypeError);
  CHECK_THROWS_AS(F::conv1d(x.to(kFloat32), w), TypeError);
  CHECK_THROWS_WITH(F::conv1d(x.to(kFloat32), w), Contains("conv1d: input is float32 but weight is float64"));
  CHECK_THROWS_AS(F::conv1d(x.to(kInt64), w.to(kInt64)), TypeError);
  CHECK_THROWS_WITH(F::conv1d(x.to(kInt64), w.to(kInt64)), Contains("conv1d: input must be float32 or float64"));
  CHECK_THROWS_AS(F::conv1d(x, w, {}, 2, kSame), NotImplementedError);
  CHECK_THROWS_WITH(F::conv1d(x, w, {}, 2, kSame), Contains("conv1d: padding=same needs stride 1"));
  CHECK_THROWS_WITH(F::conv1d(randn({2, 4, 0}, kF64), w, {}, 1, kSame), Contains("shorter than the dilated kernel"));
  CHECK_THROWS_AS(F::conv1d(Tensor(), w), ValueError);
  CHECK_THROWS_AS(F::conv1d(x, Tensor()), ValueError);
  // The layer: bad options when built (nothing registered), a bad input at forward.
  CHECK_THROWS_AS(Conv1d(0, 6, 3), ValueError);
  CHECK_THROWS_WITH(Conv1d(4, 6, 0), Contains("Conv1d: kernel_size (0)"));
  CHECK_THROWS_WITH(Conv1d(Conv1dOptions(4, 6, 3).padding(-1)), Contains("padding (-1) non-negative"));
  CHECK_THROWS_AS(Conv1d(Conv1dOptions(4, 6, 3).groups(3)), ValueError);
  CHECK_THROWS_WITH(Conv1d(Conv1dOptions(4, 6, 3).groups(3)),
                    Contains("Conv1d: groups (3) must be positive and divide in_channels (4)"));
  CHECK_THROWS_AS(Conv1d(Conv1dOptions(4, 6, 3).padding(kSame).stride(2)), NotImplementedError);
  CHECK_THROWS_WITH(Conv1d(3, 6, 3, kF64)(x), Contains("input [2, 4, 7] has 4 channels, so weight [6, 3, 3]"));
}

TEST_CASE("1-d pooling errors are typed and name the 1-d op, the shapes and what to do", "[nn][pooling][errors]") {
  const Tensor x = randn({2, 3, 7}, kF64);
  CHECK_THROWS_AS(F::max_pool1d(randn({2, 3, 1, 7}, kF64), 2), ValueError);
  CHECK_THROWS_WITH(F::max_pool1d(randn({2, 3, 1, 7}, kF64), 2),
                    Contains("max_pool1d: expected a 2-d [C, L] (unbatched) or 3-d [N, C, L] input, got shape "
                             "[2, 3, 1, 7]; a 4-d [N, C, H, W] input is max_pool2d's"));
  CHECK_THROWS_WITH(F::max_pool1d(x, 0), Contains("max_pool1d: kernel_size must be greater than zero, got 0"));
  CHECK_THROWS_WITH(F::max_pool1d(x, 2, -1), Contains("max_pool1d: stride must be greater than zero, got -1"));
  CHECK_THROWS_WITH(F::max_pool1d(x, 2, 1, 0, 0), Contains("max_pool1d: dilation must be greater than zero"));
  CHECK_THROWS_AS(F::max_pool1d(x, 2, 2, 2), ValueError);
  CHECK_THROWS_WITH(F::max_pool1d(x, 2, 2, 2),
                    Contains("max_pool1d: padding 2 must be non-negative and at most half the kernel size 2"));
  CHECK_THROWS_AS(F::max_pool1d(randn({2, 3, 2}, kF64), 3), ValueError);
  CHECK_THROWS_WITH(F::max_pool1d(randn({2, 3, 2}, kF64), 3),
                    Contains("max_pool1d: input [2, 3, 2] of length 2 is too small for kernel_size 3") &&
                        Contains("the output would have length 0"));
  CHECK_THROWS_AS(F::max_pool1d(x.to(kInt64), 2), TypeError);
  CHECK_THROWS_WITH(F::max_pool1d_with_indices(x, 2, 2, 2), Contains("max_pool1d_with_indices: padding 2"));
  CHECK_THROWS_AS(F::avg_pool1d(randn({7}, kF64), 2), ValueError);
  CHECK_THROWS_WITH(F::avg_pool1d(randn({7}, kF64), 2),
                    Contains("avg_pool1d: expected a 2-d [C, L] (unbatched) or 3-d [N, C, L] input, got shape [7]"));
  CHECK_THROWS_WITH(F::avg_pool1d(x, 3, 1, 2), Contains("avg_pool1d: padding 2 must be non-negative and at most half"));
  CHECK_THROWS_WITH(F::avg_pool1d(x, 8),
                    Contains("avg_pool1d: input [2, 3, 7] of length 7 is too small") && !Contains("avg_pool2d"));
  CHECK_THROWS_AS(F::avg_pool1d(x.to(kInt64), 2), TypeError);
  CHECK_THROWS_AS(F::adaptive_avg_pool1d(randn({1, 2, 3, 4}, kF64), 2), ValueError);
  CHECK_THROWS_WITH(F::adaptive_avg_pool1d(randn({1, 2, 3, 4}, kF64), 2),
                    Contains("adaptive_avg_pool1d: expected a 2-d [C, L] (unbatched) or 3-d [N, C, L] input") &&
                        Contains("adaptive_avg_pool2d's"));
  CHECK_THROWS_WITH(F::adaptive_avg_pool1d(x, 0), Contains("adaptive_avg_pool1d: output_size must be positive, got 0"));
  CHECK_THROWS_WITH(F::adaptive_avg_pool1d(randn({2, 3, 0}, kF64), 2),
                    Contains("adaptive_avg_pool1d: input [2, 3, 0] has length 0"));
  CHECK_THROWS_AS(F::adaptive_avg_pool1d(x.to(kInt64), 2), TypeError);
  // The layers refuse a zero kernel or stride when built, as LibTorch and the 2-d layers.
  CHECK_THROWS_AS(MaxPool1d(MaxPool1dOptions(2).stride(0)), ValueError);
  CHECK_THROWS_WITH(MaxPool1d(MaxPool1dOptions(2).stride(0)), Contains("MaxPool1d: stride should not be zero"));
  CHECK_THROWS_WITH(MaxPool1d(0), Contains("MaxPool1d: kernel_size should be greater than zero, got 0"));
  CHECK_THROWS_WITH(MaxPool1d(MaxPool1dOptions(2).stride(-2)),
                    Contains("MaxPool1d: stride should be greater than zero"));
  CHECK_THROWS_WITH(AvgPool1d(AvgPool1dOptions(2).stride(0)), Contains("AvgPool1d: stride should not be zero"));
  CHECK_THROWS_WITH(AvgPool1d(0), Contains("AvgPool1d: kernel_size should be greater than zero"));
  CHECK_THROWS_AS(AdaptiveAvgPool1d(0), ValueError);
  CHECK_THROWS_WITH(AdaptiveAvgPool1d(0), Contains("AdaptiveAvgPool1d: output_size should be greater than zero"));
  CHECK_THROWS_WITH(MaxPool1d(2)(randn({2, 3, 1, 7}, kF64)), Contains("max_pool1d: expected a 2-d [C, L]"));
}
