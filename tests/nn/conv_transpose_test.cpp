// F::conv_transpose2d, F::conv_transpose1d, ConvTranspose2d and ConvTranspose1d: against the
// PyTorch 1.13 oracle (generate.py's conv_transpose_cases, selected by op name) on every test
// device with every gradient; against a direct float64 loop on batches the CPU runs in several
// image chunks; as the adjoint of conv2d; small cases worked out by hand (and confirmed with
// PyTorch 1.13); float64 gradchecks, double backward included. The layers' print strings,
// parameters, initialization, forward(input, output_size) and the typed errors:
// conv_transpose_module_test.cpp.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/gradcheck.h"
#include "support/oracle.h"
#include "support/oracle_checks.h"
#include "wick/autograd/grad.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/generator.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using Catch::Matchers::Contains;
using wick::test::OracleCase;
using wick::test::values;
using TL = std::vector<Tensor>;

namespace {
constexpr double kOutRtol = 1e-12, kGradRtol = 1e-10, kAtol = 1e-13;
const TensorOptions kF64(kFloat64);

bool default_file() { return std::getenv("WICK_ORACLE_FILE") == nullptr; }

// A [h, w] list of the case's kwargs as an Int2.
Int2 int2_kw(const OracleCase& c, const char* key) {
  const auto v = c.kwargs.at(key).get<std::vector<int64_t>>();
  REQUIRE(v.size() == 2);
  return Int2(v[0], v[1]);
}

// A layer case, checked at this file's tolerances (wick::test::check_oracle_layer).
void check_layer(const OracleCase& c, Module& m, const std::function<Tensor(const Tensor&)>& forward, Device dev) {
  wick::test::check_oracle_layer(c, m, forward, dev, kOutRtol, kGradRtol, kAtol);
}

// The case's output_size: null, or a list of ints.
std::optional<std::vector<int64_t>> output_size_kw(const OracleCase& c) {
  const auto& v = c.kwargs.at("output_size");
  if (v.is_null()) return std::nullopt;
  return v.get<std::vector<int64_t>>();
}

// The direct definition, in float64 on the host: every input value x[n, ci, i, j] adds
// x * w[ci, o, a, e] at output (i * stride - padding + a * dilation, likewise for j) of channel
// (group of ci) * C_out / groups + o, plus the bias. Returns y, and the gradients of sum(y * r)
// with respect to x, w and b.
struct LoopResult {
  std::vector<double> y, gx, gw, gb;
};
LoopResult conv_transpose_loop(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& r, Int2 s, Int2 p,
                               Int2 d, int64_t groups, int64_t H_out, int64_t W_out) {
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const int64_t Og = w.size(1), KH = w.size(2), KW = w.size(3), O = Og * groups, Cg = C / groups;
  const auto xv = values(x), wv = values(w), bv = values(b), rv = values(r);
  LoopResult out;
  out.y.assign(static_cast<size_t>(N * O * H_out * W_out), 0.0);
  out.gx.assign(xv.size(), 0.0);
  out.gw.assign(wv.size(), 0.0);
  out.gb.assign(bv.size(), 0.0);
  const auto yi = [&](int64_t n, int64_t o, int64_t h, int64_t v) { return ((n * O + o) * H_out + h) * W_out + v; };
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t h = 0; h < H_out; ++h)
        for (int64_t v = 0; v < W_out; ++v) {
          out.y[yi(n, o, h, v)] = bv[o];
          out.gb[o] += rv[yi(n, o, h, v)];
        }
  for (int64_t n = 0; n < N; ++n)
    for (int64_t ci = 0; ci < C; ++ci)
      for (int64_t i = 0; i < H; ++i)
        for (int64_t j = 0; j < W; ++j) {
          const size_t xi = ((n * C + ci) * H + i) * W + j;
          for (int64_t o = 0; o < Og; ++o)
            for (int64_t a = 0; a < KH; ++a)
              for (int64_t e = 0; e < KW; ++e) {
                const int64_t h = i * s.h - p.h + a * d.h, v = j * s.w - p.w + e * d.w;
                if (h < 0 || h >= H_out || v < 0 || v >= W_out) continue;
                const size_t wi = ((ci * Og + o) * KH + a) * KW + e;
                const size_t y = yi(n, ci / Cg * Og + o, h, v);
                out.y[y] += xv[xi] * wv[wi];
                out.gx[xi] += wv[wi] * rv[y];
                out.gw[wi] += xv[xi] * rv[y];
              }
        }
  return out;
}

double worst_difference(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]) / (1 + std::abs(b[i])));
  return worst;
}

using wick::test::check_double_backward;

Tensor rnd(IntArrayRef shape) { return wick::randn(shape, kF64.requires_grad(true)); }
}  // namespace

TEST_CASE("conv_transpose2d and conv_transpose1d match PyTorch 1.13 with gradients on every device",
          "[nn][oracle][conv][conv_transpose_test]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    const bool two_d = c.op == "conv_transpose2d";
    if (!two_d && c.op != "conv_transpose1d") continue;
    const int64_t groups = c.kwargs.at("groups").get<int64_t>();
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      const auto x = c.leaves(dev);
      const Tensor bias = x.size() > 2 ? x[2] : Tensor();
      REQUIRE(c.kwargs.at("bias").get<bool>() == bias.defined());
      const Tensor y = two_d ? F::conv_transpose2d(x[0], x[1], bias, int2_kw(c, "stride"), int2_kw(c, "padding"),
                                                   int2_kw(c, "output_padding"), groups, int2_kw(c, "dilation"))
                             : F::conv_transpose1d(x[0], x[1], bias, c.kwargs.at("stride").get<int64_t>(),
                                                   c.kwargs.at("padding").get<int64_t>(),
                                                   c.kwargs.at("output_padding").get<int64_t>(), groups,
                                                   c.kwargs.at("dilation").get<int64_t>());
      CHECK(y.dtype() == kFloat64);
      wick::test::check_oracle_case(c, y, x, dev, kOutRtol, kGradRtol, kAtol);
    }
    ++seen[c.op];
    if (c.inputs[0].dim() == (two_d ? 3 : 2)) ++seen["unbatched"];
    if (groups > 1) ++seen["groups"];
    if (!c.kwargs.at("bias").get<bool>()) ++seen["no bias"];
    // output_padding at or past the stride (allowed below the dilation): rows no window may reach.
    const auto op = two_d ? int2_kw(c, "output_padding") : Int2(0, c.kwargs.at("output_padding").get<int64_t>());
    const auto st = two_d ? int2_kw(c, "stride") : Int2(1, c.kwargs.at("stride").get<int64_t>());
    if (op.h >= st.h && op.h > 0) ++seen["output_padding >= stride"];
    if (op.w >= st.w && op.w > 0) ++seen["output_padding >= stride"];
    if (op.h > 0 || op.w > 0) ++seen["output_padding"];
  }
  if (!default_file()) return;
  CHECK(seen["conv_transpose2d"] >= 9);
  CHECK(seen["conv_transpose1d"] >= 5);
  for (const char* kind : {"unbatched", "groups", "no bias", "output_padding >= stride", "output_padding"}) {
    INFO(kind);
    CHECK(seen[kind] >= 2);
  }
}

TEST_CASE("ConvTranspose2d and ConvTranspose1d match PyTorch 1.13 with its parameter names and output_size",
          "[nn][oracle][conv][conv_transpose_test]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    const bool two_d = c.op == "conv_transpose2d_module";
    if (!two_d && c.op != "conv_transpose1d_module") continue;
    const auto output_size = output_size_kw(c);
    const int64_t in = c.kwargs.at("in_channels").get<int64_t>(), out = c.kwargs.at("out_channels").get<int64_t>();
    for (Device dev : wick::test::test_devices()) {
      const auto size = [&]() -> std::optional<IntArrayRef> {
        if (!output_size) return std::nullopt;
        return IntArrayRef(*output_size);
      };
      if (two_d) {
        ConvTranspose2d m(ConvTranspose2dOptions(in, out, int2_kw(c, "kernel_size"))
                              .stride(int2_kw(c, "stride"))
                              .padding(int2_kw(c, "padding"))
                              .output_padding(int2_kw(c, "output_padding"))
                              .groups(c.kwargs.at("groups").get<int64_t>())
                              .bias(c.kwargs.at("bias").get<bool>())
                              .dilation(int2_kw(c, "dilation")),
                          kF64);
        check_layer(
            c, *m, [&](const Tensor& x) { return m(x, size()); }, dev);
      } else {
        ConvTranspose1d m(ConvTranspose1dOptions(in, out, c.kwargs.at("kernel_size").get<int64_t>())
                              .stride(c.kwargs.at("stride").get<int64_t>())
                              .padding(c.kwargs.at("padding").get<int64_t>())
                              .output_padding(c.kwargs.at("output_padding").get<int64_t>())
                              .groups(c.kwargs.at("groups").get<int64_t>())
                              .bias(c.kwargs.at("bias").get<bool>())
                              .dilation(c.kwargs.at("dilation").get<int64_t>()),
                          kF64);
        check_layer(
            c, *m, [&](const Tensor& x) { return m(x, size()); }, dev);
      }
    }
    ++seen[c.op];
    if (output_size) ++seen["output_size"];
    if (c.inputs[0].dim() == (two_d ? 3 : 2)) ++seen["unbatched"];
  }
  if (!default_file()) return;
  CHECK(seen["conv_transpose2d_module"] >= 4);
  CHECK(seen["conv_transpose1d_module"] >= 3);
  CHECK(seen["output_size"] >= 3);
  CHECK(seen["unbatched"] >= 2);
}

TEST_CASE("conv_transpose2d matches a direct loop in image chunks, with groups, output_padding and dilation",
          "[nn][conv][conv_transpose_test]") {
  struct Case {
    int64_t n, c_in, c_out, h, w, k, groups;
    Int2 stride, padding, output_padding, dilation;
  };
  // The first: 8 * 9 * 16 * 16 * 8 B = 147 KB of columns per image, so the CPU runs three chunks of
  // one image (Note [conv2d in image chunks]); the last has output_padding past the stride.
  for (const Case& t :
       {Case{3, 4, 8, 16, 16, 3, 1, 1, 1, 0, 1}, Case{5, 4, 6, 7, 6, 3, 2, 2, 1, 1, 1},
        Case{2, 3, 3, 5, 4, 2, 3, {2, 3}, {0, 1}, {1, 2}, 1}, Case{2, 2, 4, 4, 5, 2, 2, 1, 1, {1, 1}, {2, 2}}}) {
    wick::manual_seed(31);
    const Tensor x = randn({t.n, t.c_in, t.h, t.w}, kF64), w = randn({t.c_in, t.c_out / t.groups, t.k, t.k}, kF64);
    const Tensor b = randn({t.c_out}, kF64);
    const int64_t H_out = (t.h - 1) * t.stride.h - 2 * t.padding.h + t.dilation.h * (t.k - 1) + t.output_padding.h + 1;
    const int64_t W_out = (t.w - 1) * t.stride.w - 2 * t.padding.w + t.dilation.w * (t.k - 1) + t.output_padding.w + 1;
    const Tensor r = randn({t.n, t.c_out, H_out, W_out}, kF64);
    const LoopResult want = conv_transpose_loop(x, w, b, r, t.stride, t.padding, t.dilation, t.groups, H_out, W_out);
    for (Device dev : wick::test::test_devices()) {
      INFO(dev.str() << ", " << t.n << " images of " << t.c_in << " x " << t.h << " x " << t.w);
      const Tensor xd = x.to(dev).detach().requires_grad_(true), wd = w.to(dev).detach().requires_grad_(true);
      const Tensor bd = b.to(dev).detach().requires_grad_(true);
      const Tensor y = F::conv_transpose2d(xd, wd, bd, t.stride, t.padding, t.output_padding, t.groups, t.dilation);
      REQUIRE(y.sizes() == IntArrayRef({t.n, t.c_out, H_out, W_out}));
      CHECK(y.device() == dev);
      CHECK(worst_difference(values(y), want.y) < 1e-12);
      (y * r.to(dev)).sum().backward();
      CHECK(worst_difference(values(xd.grad()), want.gx) < 1e-12);
      CHECK(worst_difference(values(wd.grad()), want.gw) < 1e-12);
      CHECK(worst_difference(values(bd.grad()), want.gb) < 1e-12);
    }
  }
}

TEST_CASE("conv_transpose2d is the adjoint of conv2d: <T(x), y> = <x, conv2d(y)>", "[nn][conv][conv_transpose_test]") {
  // For output_padding below the stride, conv2d maps T's output size back onto x's size.
  wick::manual_seed(32);
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const TensorOptions o = kF64.device(dev);
    const Tensor x = randn({2, 4, 5, 6}, o), w = randn({4, 3, 3, 2}, o);  // groups 2: C_out = 6
    const Tensor t = F::conv_transpose2d(x, w, {}, {2, 3}, {1, 0}, {1, 2}, 2, {2, 1});
    const Tensor y = randn(t.sizes(), o);
    const Tensor c = F::conv2d(y, w, {}, {2, 3}, {1, 0}, {2, 1}, 2);
    REQUIRE(c.sizes() == x.sizes());
    const double lhs = values((t * y).sum())[0], rhs = values((x * c).sum())[0];
    CHECK(std::abs(lhs - rhs) <= 1e-11 * (1 + std::abs(rhs)));
  }
}

TEST_CASE("conv_transpose by hand: strides, padding, output_padding, dilation, bias, groups, gradients",
          "[nn][conv][conv_transpose_test]") {
  // Values worked out on paper (each input value adds itself times the kernel at its output window)
  // and confirmed with PyTorch 1.13.
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const TensorOptions o = kF64.device(dev);
    const Tensor x = tensor(std::vector<double>{1, 2, 3, 4}, {1, 1, 2, 2}, o);
    const Tensor diag = tensor(std::vector<double>{1, 0, 0, 1}, {1, 1, 2, 2}, o);
    // Stride 2: the windows tile the output; each value writes its diagonal block.
    CHECK_VALUES(F::conv_transpose2d(x, diag, {}, 2), {1, 0, 2, 0, 0, 1, 0, 2, 3, 0, 4, 0, 0, 3, 0, 4});
    // Padding 1 drops the first and last row and column of that 4 x 4; output_padding 1 gives the
    // last ones back: rows and columns 1..3.
    CHECK_VALUES(F::conv_transpose2d(x, diag, {}, 2, 1, 1), {1, 0, 2, 0, 4, 0, 3, 0, 4});
    // Stride 1, a kernel of ones: each output sums the inputs whose windows cover it.
    const Tensor ones2 = ones({1, 1, 2, 2}, o);
    CHECK_VALUES(F::conv_transpose2d(x, ones2), {1, 3, 2, 4, 10, 6, 3, 7, 4});
    CHECK_VALUES(F::conv_transpose2d(x, ones2, {}, 1, 1), {10});
    // Dilation 2: x[i, j] adds to (i, j), (i, j + 2), (i + 2, j), (i + 2, j + 2); output_padding 1
    // (past the stride, below the dilation) adds a row and column no window reaches: bias only.
    const Tensor half = tensor(std::vector<double>{0.5}, {1}, o);
    CHECK_VALUES(F::conv_transpose2d(x, ones2, half, 1, 0, 1, 1, 2),
                 {1.5, 2.5, 1.5, 2.5, 0.5, 3.5, 4.5, 3.5, 4.5, 0.5, 1.5, 2.5, 1.5,
                  2.5, 0.5, 3.5, 4.5, 3.5, 4.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5});
    // 1-d, unbatched, stride 2, kernel [1, 2], bias 0.5: [1, 2, 2, 4, 3, 6] + 0.5. The gradient of
    // the sum is 1 + 2 for every input, and sum(x) = 6 for each tap and the bias' 6 outputs.
    const Tensor x1 = tensor(std::vector<double>{1, 2, 3}, {1, 3}, o).requires_grad_(true);
    const Tensor w1 = tensor(std::vector<double>{1, 2}, {1, 1, 2}, o).requires_grad_(true);
    const Tensor b1 = tensor(std::vector<double>{0.5}, {1}, o).requires_grad_(true);
    const Tensor y1 = F::conv_transpose1d(x1, w1, b1, 2);
    CHECK_VALUES(y1, {1.5, 2.5, 2.5, 4.5, 3.5, 6.5});
    y1.sum().backward();
    CHECK_VALUES(x1.grad(), {3, 3, 3});
    CHECK_VALUES(w1.grad(), {6, 6});
    CHECK_VALUES(b1.grad(), {6});
    // Groups 2: channel 0 goes through [1, 1] into output 0, channel 1 through [1, -1] into output 1.
    const Tensor xg = tensor(std::vector<double>{1, 2, 10, 20}, {2, 2}, o);
    const Tensor wg = tensor(std::vector<double>{1, 1, 1, -1}, {2, 1, 2}, o);
    CHECK_VALUES(F::conv_transpose1d(xg, wg, {}, 1, 0, 0, 2), {1, 3, 2, 10, 10, -20});
    // An empty batch gives an empty output of the right shape, and a zero weight gradient.
    const Tensor none = zeros({0, 1, 2, 2}, o).requires_grad_(true), wd = diag.detach().requires_grad_(true);
    const Tensor e = F::conv_transpose2d(none, wd, {}, 2);
    CHECK(e.sizes() == IntArrayRef({0, 1, 4, 4}));
    e.sum().backward();
    CHECK(none.grad().sizes() == IntArrayRef({0, 1, 2, 2}));
    CHECK_VALUES(wd.grad(), {0, 0, 0, 0});
  }
}

TEST_CASE("gradcheck: conv_transpose2d and conv_transpose1d, double backward included",
          "[nn][gradcheck][conv_transpose_test]") {
  wick::manual_seed(33);
  SECTION("stride, padding, output_padding, dilation, bias") {
    auto f = [](const TL& x) { return TL{F::conv_transpose2d(x[0], x[1], x[2], {2, 1}, {1, 0}, {1, 0}, 1, {1, 2})}; };
    CHECK_GRADCHECK(f, TL{rnd({2, 2, 3, 4}), rnd({2, 3, 3, 2}), rnd({3})});
    check_double_backward(f, TL{rnd({1, 2, 3, 3}), rnd({2, 2, 3, 2}), rnd({2})});
  }
  SECTION("groups, unbatched, no bias") {
    auto f = [](const TL& x) { return TL{F::conv_transpose2d(x[0], x[1], {}, 2, 1, 1, 2)}; };
    CHECK_GRADCHECK(f, TL{rnd({4, 3, 3}), rnd({4, 2, 3, 3})});
    check_double_backward(f, TL{rnd({1, 4, 2, 3}), rnd({4, 1, 2, 2})});
  }
  SECTION("output_padding past the stride (below the dilation), and a 1x1 kernel so") {
    auto f = [](const TL& x) { return TL{F::conv_transpose2d(x[0], x[1], x[2], 1, 1, 1, 1, 2)}; };
    CHECK_GRADCHECK(f, TL{rnd({1, 2, 3, 3}), rnd({2, 2, 2, 2}), rnd({2})});
    check_double_backward(f, TL{rnd({1, 2, 3, 2}), rnd({2, 1, 2, 2}), rnd({1})});
    auto pointwise = [](const TL& x) { return TL{F::conv_transpose2d(x[0], x[1], x[2], 1, 0, 1, 1, 2)}; };
    CHECK_GRADCHECK(pointwise, TL{rnd({2, 3, 2, 3}), rnd({3, 2, 1, 1}), rnd({2})});
    check_double_backward(pointwise, TL{rnd({1, 2, 2, 2}), rnd({2, 2, 1, 1}), rnd({2})});
  }
  SECTION("1-d: stride, padding, output_padding, dilation, groups, unbatched") {
    auto f = [](const TL& x) { return TL{F::conv_transpose1d(x[0], x[1], x[2], 2, 1, 1, 2, 2)}; };
    CHECK_GRADCHECK(f, TL{rnd({2, 4, 4}), rnd({4, 1, 3}), rnd({2})});
    check_double_backward(f, TL{rnd({1, 2, 3}), rnd({2, 1, 2}), rnd({2})});
    auto u = [](const TL& x) { return TL{F::conv_transpose1d(x[0], x[1])}; };
    CHECK_GRADCHECK(u, TL{rnd({3, 4}), rnd({3, 2, 3})});
  }
}
