// max_pool2d's dedicated kernel against a direct transcription of PyTorch's rule (scan each
// window in row-major order; keep the first maximum; a NaN always wins, the last one in the
// window), over padding, stride, dilation, ceil_mode, ties, NaN and -inf, in float32 and
// float64; plus hand-computed indices and gradients.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "support/allclose.h"
#include "wick/autograd/functions.h"
#include "wick/nn/functional.h"

using namespace wick;
namespace F = wick::nn::functional;
using wick::test::values;

namespace {
struct Geometry {
  int64_t n, c, h, w, kh, kw, sh, sw, ph, pw, dh, dw;
  bool ceil_mode;
};

struct Pooled {
  std::vector<int64_t> shape;
  std::vector<double> values;
  std::vector<int64_t> indices;
};

// PyTorch's pooling_output_shape.
int64_t out_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil_mode) {
  const int64_t num = in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = static_cast<int64_t>(std::floor(static_cast<double>(num) / static_cast<double>(stride))) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

Pooled reference(const std::vector<double>& x, const Geometry& g) {
  const int64_t oh = out_size(g.h, g.kh, g.ph, g.sh, g.dh, g.ceil_mode);
  const int64_t ow = out_size(g.w, g.kw, g.pw, g.sw, g.dw, g.ceil_mode);
  Pooled p{{g.n, g.c, oh, ow}, {}, {}};
  for (int64_t plane = 0; plane < g.n * g.c; ++plane)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        double best = -std::numeric_limits<double>::infinity();
        int64_t at = -1;
        for (int64_t a = 0; a < g.kh; ++a)
          for (int64_t b = 0; b < g.kw; ++b) {
            const int64_t y = i * g.sh - g.ph + a * g.dh, xw = j * g.sw - g.pw + b * g.dw;
            if (y < 0 || y >= g.h || xw < 0 || xw >= g.w) continue;
            const double v = x[static_cast<size_t>((plane * g.h + y) * g.w + xw)];
            if (at < 0) at = y * g.w + xw;  // PyTorch seeds the index with the first valid tap
            if (v > best || std::isnan(v)) {
              best = v;
              at = y * g.w + xw;
            }
          }
        p.values.push_back(best);
        p.indices.push_back(at);
      }
  return p;
}

bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }
}  // namespace

TEST_CASE("max_pool2d matches PyTorch's selection rule over geometries, ties and NaN", "[nn][pooling]") {
  const std::vector<Geometry> geometries = {
      {2, 3, 8, 8, 2, 2, 2, 2, 0, 0, 1, 1, false},
      {1, 2, 7, 9, 3, 3, 2, 2, 1, 1, 1, 1, false},
      {1, 2, 7, 9, 3, 3, 2, 2, 1, 1, 1, 1, true},
      {2, 1, 9, 7, 2, 3, 1, 2, 0, 1, 2, 1, false},
      {1, 3, 5, 5, 2, 2, 2, 2, 0, 0, 1, 1, true},
      {1, 1, 11, 10, 3, 2, 3, 1, 1, 1, 2, 3, true},
      {3, 2, 6, 6, 1, 1, 1, 1, 0, 0, 1, 1, false},
      {1, 2, 4, 13, 4, 5, 1, 3, 2, 2, 1, 1, false},
      // Windows that tile the plane (the CPU's tiled loop): 2x2, 3x3 and 2x3, with rows and
      // columns left over, and ceil_mode windows that run past the edge (the general loop).
      {2, 3, 7, 9, 2, 2, 2, 2, 0, 0, 1, 1, false},
      {1, 2, 10, 11, 3, 3, 3, 3, 0, 0, 1, 1, false},
      {2, 2, 8, 9, 2, 3, 2, 3, 0, 0, 1, 1, false},
      {1, 2, 7, 9, 2, 2, 2, 2, 0, 0, 1, 1, true},
      // 2x2 rows of 7 outputs (the CPU's vector loop ends with a vector that overlaps the one
      // before) and of 3 (fewer than a float32 vector holds).
      {2, 2, 6, 14, 2, 2, 2, 2, 0, 0, 1, 1, false},
      {1, 2, 4, 6, 2, 2, 2, 2, 0, 0, 1, 1, false},
  };
  for (DType dt : {kFloat32, kFloat64}) {
    for (const Geometry& g : geometries) {
      // Small integers make ties; NaN and -inf appear in some windows.
      std::vector<double> x(static_cast<size_t>(g.n * g.c * g.h * g.w));
      for (size_t i = 0; i < x.size(); ++i) {
        x[i] = static_cast<double>((i * 7919 + 13) % 5) - 2;
        if (i % 41 == 7) x[i] = std::nan("");
        if (i % 29 == 3) x[i] = -std::numeric_limits<double>::infinity();
      }
      const Pooled want = reference(x, g);
      Tensor input = wick::tensor(x, {g.n, g.c, g.h, g.w}, dt);
      auto [y, idx] =
          F::max_pool2d_with_indices(input, {g.kh, g.kw}, {g.sh, g.sw}, {g.ph, g.pw}, {g.dh, g.dw}, g.ceil_mode);
      INFO("dtype " << dtype_name(dt) << " input " << g.n << "x" << g.c << "x" << g.h << "x" << g.w << " kernel "
                    << g.kh << "x" << g.kw << " stride " << g.sh << "," << g.sw << " padding " << g.ph << "," << g.pw
                    << " dilation " << g.dh << "," << g.dw << " ceil " << g.ceil_mode);
      REQUIRE(std::vector<int64_t>(y.sizes().begin(), y.sizes().end()) == want.shape);
      REQUIRE(idx.dtype() == kInt64);
      const auto got = values(y);
      const auto got_idx = idx.to_vector<int64_t>();
      REQUIRE(got.size() == want.values.size());
      for (size_t i = 0; i < got.size(); ++i) {
        INFO("output " << i);
        CHECK(same(got[i], want.values[i]));
        CHECK(got_idx[i] == want.indices[i]);
      }
      // max_pool2d gives the same values.
      const auto plain =
          values(F::max_pool2d(input, {g.kh, g.kw}, {g.sh, g.sw}, {g.ph, g.pw}, {g.dh, g.dw}, g.ceil_mode));
      for (size_t i = 0; i < got.size(); ++i) CHECK(same(plain[i], got[i]));
    }
  }
}

TEST_CASE("max_pool2d indices and gradients by hand", "[nn][pooling]") {
  // 4 x 4 input 0..15, kernel 2: each window's maximum is its bottom-right element.
  Tensor x = wick::arange(0, 16, 1, kFloat64).reshape({1, 1, 4, 4}).requires_grad_(true);
  auto [y, idx] = F::max_pool2d_with_indices(x, 2);
  CHECK(values(y) == std::vector<double>{5, 7, 13, 15});
  CHECK(idx.to_vector<int64_t>() == std::vector<int64_t>{5, 7, 13, 15});
  wick::sum(y).backward();
  CHECK(values(x.grad()) == std::vector<double>{0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 1, 0, 1});

  // Ties: the gradient goes to the first position of the window only, as PyTorch's.
  Tensor ones = wick::ones({1, 2, 2}, kFloat64).requires_grad_(true);  // 3-d input
  auto [y1, idx1] = F::max_pool2d_with_indices(ones, 2);
  CHECK(idx1.sizes().size() == 3);
  CHECK(idx1.to_vector<int64_t>() == std::vector<int64_t>{0});
  wick::sum(y1).backward();
  CHECK(values(ones.grad()) == std::vector<double>{1, 0, 0, 0});

  // Overlapping windows (kernel 3, stride 1, padding 1) pick the centre 4 of [[1,2],[3,4]] for
  // every output: its gradient is the number of windows, 4.
  Tensor small = wick::tensor(std::vector<double>{1, 2, 3, 4}, {1, 1, 2, 2}, kFloat64).requires_grad_(true);
  Tensor y2 = F::max_pool2d(small, 3, 1, 1);
  CHECK(values(y2) == std::vector<double>{4, 4, 4, 4});
  wick::sum(y2).backward();
  CHECK(values(small.grad()) == std::vector<double>{0, 0, 0, 4});
}

TEST_CASE("max_pool2d with a window outside the input", "[nn][pooling]") {
  // 2 x 2 input, kernel 2, dilation 3, padding 1, stride 1: the one window reads rows -1 and 2
  // (and columns -1 and 2), none of them inside. max_pool2d gives -inf and no gradient;
  // max_pool2d_with_indices has no index to give and says so.
  Tensor x = wick::tensor(std::vector<double>{1, 2, 3, 4}, {1, 1, 2, 2}, kFloat64).requires_grad_(true);
  Tensor y = F::max_pool2d(x, 2, 1, 1, 3);
  REQUIRE(values(y).size() == 1);
  CHECK(values(y)[0] == -std::numeric_limits<double>::infinity());
  wick::sum(y).backward();
  CHECK(values(x.grad()) == std::vector<double>{0, 0, 0, 0});
  CHECK_THROWS_WITH(F::max_pool2d_with_indices(x, 2, 1, 1, 3), Catch::Contains("window with no input position"));
}

TEST_CASE("max_pool2d_with_indices: changing the indices before backward is an error", "[nn][pooling]") {
  Tensor x = wick::arange(0, 16, 1, kFloat64).reshape({1, 1, 4, 4}).requires_grad_(true);
  auto [y, idx] = F::max_pool2d_with_indices(x, 2);
  idx.fill_(1000);  // would scatter outside the input
  CHECK_THROWS_WITH(wick::sum(y).backward(), Catch::Contains("modified by an in-place operation"));
}
