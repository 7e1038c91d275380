// conv2d against a direct convolution written out as loops (float64), on batches large enough
// that the CPU runs them in several image chunks (Note [conv2d in image chunks]), including a
// last chunk smaller than the others, and with groups: forward, input gradient, weight gradient,
// bias gradient; padding=same against the same loops; F::pad.
#include "wick/nn/modules/conv.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "support/allclose.h"
#include "support/gradcheck.h"
#include "wick/autograd/functions.h"
#include "wick/core/generator.h"
#include "wick/nn/functional.h"

using namespace wick;
namespace F = wick::nn::functional;
using wick::test::values;

namespace {
struct Case {
  int64_t n, c, h, w, o, k, stride, pad, groups;
};

std::vector<double> pattern(size_t count, int salt) {
  std::vector<double> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = static_cast<double>(static_cast<int>((i * 37 + salt * 11) % 19) - 9) / 8.0;
  return v;
}

void check_close(const std::vector<double>& got, const std::vector<double>& want, const char* what) {
  REQUIRE(got.size() == want.size());
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (std::abs(got[i] - want[i]) > 1e-10 * (1 + std::abs(want[i]))) ++bad;
  INFO(what);
  CHECK(bad == 0);
}
}  // namespace

TEST_CASE("conv2d in image chunks and groups matches a direct convolution, forward and gradients", "[nn][conv]") {
  // Columns per image: 8*9*32*32*8 B = 590 KB (one image per chunk) and 4*9*20*20*8 B = 115 KB
  // (two per chunk, the last chunk one image).
  // The last three have groups: two groups, and depthwise (groups = channels, two outputs each).
  for (const Case& t :
       {Case{3, 8, 32, 32, 4, 3, 1, 1, 1}, Case{5, 4, 20, 20, 3, 3, 1, 1, 1}, Case{5, 4, 21, 19, 3, 3, 2, 0, 1},
        Case{3, 8, 32, 32, 4, 3, 1, 1, 2}, Case{5, 4, 20, 20, 6, 3, 2, 1, 2}, Case{2, 6, 9, 11, 12, 3, 1, 1, 6}}) {
    const int64_t cg = t.c / t.groups, og = t.o / t.groups;
    const int64_t oh = (t.h + 2 * t.pad - t.k) / t.stride + 1, ow = (t.w + 2 * t.pad - t.k) / t.stride + 1;
    const auto xv = pattern(static_cast<size_t>(t.n * t.c * t.h * t.w), 1);
    const auto wv = pattern(static_cast<size_t>(t.o * cg * t.k * t.k), 2);
    const auto bv = pattern(static_cast<size_t>(t.o), 3);
    const auto rv = pattern(static_cast<size_t>(t.n * t.o * oh * ow), 4);  // d loss / d y
    Tensor x = wick::tensor(xv, {t.n, t.c, t.h, t.w}, kFloat64).requires_grad_(true);
    Tensor w = wick::tensor(wv, {t.o, cg, t.k, t.k}, kFloat64).requires_grad_(true);
    Tensor b = wick::tensor(bv, {t.o}, kFloat64).requires_grad_(true);
    Tensor y = F::conv2d(x, w, b, t.stride, t.pad, 1, t.groups);
    wick::sum(wick::mul(y, wick::tensor(rv, {t.n, t.o, oh, ow}, kFloat64))).backward();

    std::vector<double> y_want(rv.size()), gx_want(xv.size(), 0.0), gw_want(wv.size(), 0.0), gb_want(bv.size(), 0.0);
    for (int64_t n = 0; n < t.n; ++n)
      for (int64_t o = 0; o < t.o; ++o)
        for (int64_t i = 0; i < oh; ++i)
          for (int64_t j = 0; j < ow; ++j) {
            const size_t yi = static_cast<size_t>(((n * t.o + o) * oh + i) * ow + j);
            double acc = bv[static_cast<size_t>(o)];
            const double r = rv[yi];
            gb_want[static_cast<size_t>(o)] += r;
            for (int64_t c = (o / og) * cg; c < (o / og + 1) * cg; ++c)  // the output's group
              for (int64_t a = 0; a < t.k; ++a)
                for (int64_t e = 0; e < t.k; ++e) {
                  const int64_t hh = i * t.stride - t.pad + a, ww = j * t.stride - t.pad + e;
                  if (hh < 0 || hh >= t.h || ww < 0 || ww >= t.w) continue;
                  const size_t xi = static_cast<size_t>(((n * t.c + c) * t.h + hh) * t.w + ww);
                  const size_t wi = static_cast<size_t>(((o * cg + c % cg) * t.k + a) * t.k + e);
                  acc += wv[wi] * xv[xi];
                  gx_want[xi] += wv[wi] * r;
                  gw_want[wi] += xv[xi] * r;
                }
            y_want[yi] = acc;
          }
    INFO("input " << t.n << "x" << t.c << "x" << t.h << "x" << t.w << " out channels " << t.o << " stride " << t.stride
                  << " padding " << t.pad << " groups " << t.groups);
    check_close(values(y), y_want, "forward");
    check_close(values(x.grad()), gx_want, "input gradient");
    check_close(values(w.grad()), gw_want, "weight gradient");
    check_close(values(b.grad()), gb_want, "bias gradient");
  }
}

// The shapes whose columns are shifted copies of the input plane (stride 1, output rows as wide as
// the input's: Note [Shifted-plane im2col] and Note [Shifted-plane col2im],
// core/src/cpu/cpu_backend.cpp), and the edges of that path: taller than wide padding, rows that
// fall off the plane, a 1-pixel-wide image, dilation, more than one group of 64 rows, and more
// than 8 wrapped columns per row (col2im's row loop).
TEST_CASE("conv2d with stride 1 and same-width rows matches a direct convolution, forward and both gradients",
          "[nn][conv]") {
  struct Geometry {
    int64_t h, w, kh, kw, ph, pw, dh, dw;
  };
  for (const Geometry& t :
       {Geometry{7, 6, 3, 3, 1, 1, 1, 1}, Geometry{7, 6, 3, 3, 0, 1, 1, 1}, Geometry{5, 9, 5, 5, 2, 2, 1, 1},
        Geometry{6, 7, 3, 3, 2, 2, 2, 2}, Geometry{1, 1, 3, 3, 1, 1, 1, 1}, Geometry{2, 1, 3, 3, 1, 1, 1, 1},
        Geometry{4, 5, 3, 1, 2, 0, 1, 1}, Geometry{3, 4, 5, 3, 3, 1, 1, 1}, Geometry{70, 3, 3, 3, 1, 1, 1, 1},
        Geometry{3, 20, 1, 3, 0, 9, 1, 9}}) {
    const int64_t n = 2, c = 3, o = 2;
    const int64_t oh = t.h + 2 * t.ph - t.dh * (t.kh - 1), ow = t.w + 2 * t.pw - t.dw * (t.kw - 1);
    REQUIRE(ow == t.w);
    const auto xv = pattern(static_cast<size_t>(n * c * t.h * t.w), 7);
    const auto wv = pattern(static_cast<size_t>(o * c * t.kh * t.kw), 8);
    const auto rv = pattern(static_cast<size_t>(n * o * std::max<int64_t>(oh, 0) * ow), 9);
    Tensor x = wick::tensor(xv, {n, c, t.h, t.w}, kFloat64).requires_grad_(true);
    Tensor wt = wick::tensor(wv, {o, c, t.kh, t.kw}, kFloat64).requires_grad_(true);
    Tensor y = F::conv2d(x, wt, {}, 1, nn::Int2(t.ph, t.pw), nn::Int2(t.dh, t.dw));
    REQUIRE(y.sizes() == IntArrayRef({n, o, oh, ow}));
    wick::sum(wick::mul(y, wick::tensor(rv, {n, o, oh, ow}, kFloat64))).backward();
    std::vector<double> y_want, gw_want(wv.size(), 0.0), gx_want(xv.size(), 0.0);
    for (int64_t b = 0; b < n; ++b)
      for (int64_t q = 0; q < o; ++q)
        for (int64_t i = 0; i < oh; ++i)
          for (int64_t j = 0; j < ow; ++j) {
            const double r = rv[static_cast<size_t>(((b * o + q) * oh + i) * ow + j)];
            double acc = 0;
            for (int64_t ch = 0; ch < c; ++ch)
              for (int64_t a = 0; a < t.kh; ++a)
                for (int64_t e = 0; e < t.kw; ++e) {
                  const int64_t hh = i - t.ph + a * t.dh, ww = j - t.pw + e * t.dw;
                  if (hh < 0 || hh >= t.h || ww < 0 || ww >= t.w) continue;
                  const size_t wi = static_cast<size_t>(((q * c + ch) * t.kh + a) * t.kw + e);
                  const size_t xi = static_cast<size_t>(((b * c + ch) * t.h + hh) * t.w + ww);
                  acc += wv[wi] * xv[xi];
                  gw_want[wi] += xv[xi] * r;
                  gx_want[xi] += wv[wi] * r;
                }
            y_want.push_back(acc);
          }
    INFO("input " << t.h << "x" << t.w << " kernel " << t.kh << "x" << t.kw << " padding " << t.ph << "," << t.pw
                  << " dilation " << t.dh << "," << t.dw);
    check_close(values(y), y_want, "forward");
    check_close(values(wt.grad()), gw_want, "weight gradient");
    check_close(values(x.grad()), gx_want, "input gradient");
  }
}

TEST_CASE("conv2d groups: checks, module shape and printing", "[nn][conv]") {
  Tensor x = wick::zeros({1, 4, 5, 5}, kFloat64);
  CHECK_THROWS_WITH(F::conv2d(x, wick::ones({6, 4, 3, 3}, kFloat64), {}, 1, 0, 1, 2),
                    Catch::Contains("2 input channels per group"));
  CHECK_THROWS_WITH(F::conv2d(x, wick::ones({5, 2, 3, 3}, kFloat64), {}, 1, 0, 1, 2),
                    Catch::Contains("must divide both"));
  CHECK_THROWS_WITH(F::conv2d(x, wick::ones({6, 4, 3, 3}, kFloat64), {}, 1, 0, 1, 0),
                    Catch::Contains("groups must be positive"));
  wick::nn::Conv2d conv(nn::Conv2dOptions(4, 6, 3).padding(1).groups(2));
  CHECK(conv->weight().sizes() == IntArrayRef({6, 2, 3, 3}));
  CHECK(conv->groups() == 2);
  CHECK(conv->extra_repr() == "4, 6, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), groups=2");
  // PyTorch's default init bound for the bias: 1 / sqrt(fan_in), fan_in = 4 / 2 * 3 * 3 = 18.
  for (double v : values(conv->bias())) CHECK(std::abs(v) <= 1.0 / std::sqrt(18.0));
  CHECK(conv->forward(wick::zeros({1, 4, 5, 5})).sizes() == IntArrayRef({1, 6, 5, 5}));
  CHECK_THROWS_WITH(wick::nn::Conv2d(nn::Conv2dOptions(4, 6, 3).groups(4)), Catch::Contains("groups (4)"));
}

TEST_CASE("pad: constant padding and cropping, by hand and gradchecked", "[nn][conv]") {
  Tensor x = wick::tensor({1.0, 2.0, 3.0, 4.0}, {1, 2, 2}, kFloat64);
  // {left, right, top, bottom} = {1, 0, 0, 2}, value 9
  Tensor p = F::pad(x, {1, 0, 0, 2}, 9.0);
  CHECK(p.sizes() == IntArrayRef({1, 4, 3}));
  CHECK(values(p) == std::vector<double>{9, 1, 2, 9, 3, 4, 9, 9, 9, 9, 9, 9});
  CHECK(values(F::pad(x, {-1, 0})) == std::vector<double>{2, 4});              // crop the first column
  CHECK(values(F::pad(x, {0, 0, 1, -1})) == std::vector<double>{0, 0, 1, 2});  // shift down a row
  CHECK_THROWS_WITH(F::pad(x, {1, 2, 3}), Catch::Contains("pairs"));
  CHECK_THROWS_WITH(F::pad(x, {-3, 0}), Catch::Contains("negative size"));
  wick::manual_seed(3);
  auto f = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{F::pad(in[0], {2, -1, 1, 1}, 0.5) * 3.0}; };
  const std::vector<Tensor> inputs{wick::randn({2, 3, 4}, kFloat64).requires_grad_()};
  CHECK_GRADCHECK(f, inputs);
  CHECK_GRADGRADCHECK(f, inputs);
}

TEST_CASE("conv2d padding=same keeps the size and matches a direct convolution", "[nn][conv]") {
  // Even and odd kernels, dilation: the total padding d * (k - 1) is split with the extra row or
  // column at the bottom or right, as in PyTorch.
  struct Same {
    int64_t kh, kw, dh, dw;
  };
  for (const Same& t : {Same{3, 3, 1, 1}, Same{2, 3, 1, 1}, Same{4, 2, 1, 2}, Same{3, 2, 2, 1}}) {
    const int64_t n = 2, c = 3, h = 6, w = 5, o = 2;
    const auto xv = pattern(static_cast<size_t>(n * c * h * w), 5);
    const auto wv = pattern(static_cast<size_t>(o * c * t.kh * t.kw), 6);
    Tensor x = wick::tensor(xv, {n, c, h, w}, kFloat64);
    Tensor wt = wick::tensor(wv, {o, c, t.kh, t.kw}, kFloat64);
    Tensor y = F::conv2d(x, wt, {}, 1, nn::kSame, {t.dh, t.dw});
    REQUIRE(y.sizes() == IntArrayRef({n, o, h, w}));
    const int64_t top = t.dh * (t.kh - 1) / 2, left = t.dw * (t.kw - 1) / 2;
    std::vector<double> want;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t q = 0; q < o; ++q)
        for (int64_t i = 0; i < h; ++i)
          for (int64_t j = 0; j < w; ++j) {
            double acc = 0;
            for (int64_t ch = 0; ch < c; ++ch)
              for (int64_t a = 0; a < t.kh; ++a)
                for (int64_t e = 0; e < t.kw; ++e) {
                  const int64_t hh = i - top + a * t.dh, ww = j - left + e * t.dw;
                  if (hh < 0 || hh >= h || ww < 0 || ww >= w) continue;
                  acc += wv[static_cast<size_t>(((q * c + ch) * t.kh + a) * t.kw + e)] *
                         xv[static_cast<size_t>(((b * c + ch) * h + hh) * w + ww)];
                }
            want.push_back(acc);
          }
    INFO("kernel " << t.kh << "x" << t.kw << " dilation " << t.dh << "," << t.dw);
    check_close(values(y), want, "padding=same forward");
  }
  wick::manual_seed(4);
  auto f = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{F::conv2d(in[0], in[1], in[2], 1, nn::kSame, {1, 2})};
  };
  const std::vector<Tensor> inputs{wick::randn({1, 2, 4, 5}, kFloat64).requires_grad_(),
                                   wick::randn({3, 2, 2, 3}, kFloat64).requires_grad_(),
                                   wick::randn({3}, kFloat64).requires_grad_()};
  CHECK_GRADCHECK(f, inputs);
  CHECK_GRADGRADCHECK(f, inputs);
  // Valid is no padding; same with a stride is refused, as in PyTorch.
  Tensor x = wick::randn({1, 2, 5, 5}, kFloat64), wt = wick::randn({3, 2, 3, 3}, kFloat64);
  CHECK(values(F::conv2d(x, wt, {}, 1, nn::kValid)) == values(F::conv2d(x, wt)));
  CHECK_THROWS_WITH(F::conv2d(x, wt, {}, 2, nn::kSame), Catch::Contains("stride 1"));
  wick::nn::Conv2d same(nn::Conv2dOptions(2, 3, nn::Int2(2, 4)).padding(nn::kSame));
  CHECK(same->forward(x.to(kFloat32)).sizes() == IntArrayRef({1, 3, 5, 5}));
  CHECK(same->extra_repr() == "2, 3, kernel_size=(2, 4), stride=(1, 1), padding=same");
  CHECK_THROWS_WITH(wick::nn::Conv2d(nn::Conv2dOptions(2, 3, 3).stride(2).padding(nn::kSame)),
                    Catch::Contains("stride 1"));
}
