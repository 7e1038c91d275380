// LibTorch's functional options for pooling, padding, pixel shuffle and fold / unfold
// (wick/nn/functional_options_pool.h). Each F:: overload taking options must be its positional
// function with the options' fields: on every test device, with every field set to a value that
// differs from its default and from the other fields' (so a dropped or swapped field changes the
// result), the two calls give the same output, indices and input gradient bit for bit (the
// positional functions are checked against PyTorch 1.13 in their own tests). The options' defaults
// are LibTorch 1.13's (written out by hand from torch/nn/options/pooling.h, padding.h, fold.h,
// pixelshuffle.h), and bad options are typed errors naming the op.
#include <bit>
#include <catch2/catch.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/expect_error.h"
#include "wick/autograd/grad.h"
#include "wick/core/generator.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using wick::test::expect_error;
using wick::test::values;
using TL = std::vector<Tensor>;

namespace {
const TensorOptions kF64(kFloat64);

// One overload: `opts` calls it with options, `pos` the positional function(s) with the same
// values; each returns its outputs (a *_with_indices function's output and indices too).
struct Case {
  std::string name;
  std::vector<int64_t> shape;
  std::function<TL(const Tensor&)> opts, pos;
};

TL with_ix(std::tuple<Tensor, Tensor> t) { return {std::get<0>(t), std::get<1>(t)}; }
TL cat(TL a, const TL& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The number of elements of a and b whose float64 bit patterns differ (-1 when the shapes,
// dtypes or devices do).
int64_t bit_mismatches(const Tensor& a, const Tensor& b) {
  if (a.sizes() != b.sizes() || a.dtype() != b.dtype() || a.device() != b.device()) return -1;
  const std::vector<double> av = values(a), bv = values(b);
  int64_t n = 0;
  for (size_t i = 0; i < av.size(); ++i) n += std::bit_cast<uint64_t>(av[i]) != std::bit_cast<uint64_t>(bv[i]);
  return n;
}

// sum(out_i * w_i) over the floating outputs, one random w_i each (seeded: the same for both calls).
Tensor weighted_sum(const TL& outs, Device dev) {
  manual_seed(23);
  Tensor loss;
  for (const Tensor& o : outs) {
    if (!o.is_floating_point()) continue;
    const Tensor term = (o * (rand(o.sizes(), kF64) - 0.5).to(dev)).sum();
    loss = loss.defined() ? loss + term : term;
  }
  return loss;
}

// Runs both calls of `c` on `dev` and checks the outputs and the input gradient bit for bit.
void check_case(const Case& c, Device dev) {
  INFO(c.name << " on " << dev);
  manual_seed(17);
  const Tensor x0 = rand(c.shape, kF64) + 0.5;  // positive: lp_pool's fractional powers stay real
  Tensor xa = x0.to(dev), xb = x0.to(dev);
  xa.requires_grad_();
  xb.requires_grad_();
  const TL a = c.opts(xa), b = c.pos(xb);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) CHECK(bit_mismatches(a[i], b[i]) == 0);
  const Tensor ga = wick::autograd::grad({weighted_sum(a, dev)}, {xa})[0];
  const Tensor gb = wick::autograd::grad({weighted_sum(b, dev)}, {xb})[0];
  CHECK(bit_mismatches(ga, gb) == 0);
}

// max_unpool's indices: max_pool's with the same geometry over a random input of `shape`, whose
// sizes are not the default unpooled ones, so output_size matters.
Tensor pool_indices(const std::vector<int64_t>& shape, const std::function<Tensor(const Tensor&)>& pool) {
  manual_seed(5);
  return pool(rand(shape, kF64));
}

// Each field differs from its default and from the other fields; ceil_mode adds a window.
std::vector<Case> pooling_cases() {
  using X = const Tensor&;
  const auto mo1 = F::MaxPool1dFuncOptions(4).stride(3).padding(1).dilation(2).ceil_mode(true);
  const auto mo2 = F::MaxPool2dFuncOptions({3, 4}).stride({2, 3}).padding({1, 2}).dilation({2, 1}).ceil_mode(true);
  const auto mo3 =
      F::MaxPool3dFuncOptions(Int3(3, 3, 4)).stride(Int3(2, 1, 3)).padding(Int3(1, 0, 2)).dilation(Int3(1, 2, 1));
  const Int3 k3(3, 3, 4), s3(2, 1, 3), p3(1, 0, 2), d3(1, 2, 1);
  // max_unpool over inputs of 10, 8 x 7 and 7 x 5 x 6, whose default unpooled sizes are 9, 7 x 7, 6 x 5 x 6.
  const Tensor i1 = pool_indices({2, 3, 10}, [](X t) { return std::get<1>(F::max_pool1d_with_indices(t, 3, 2, 1)); });
  const Tensor i2 = pool_indices({2, 3, 8, 7}, [](X t) {
    return std::get<1>(F::max_pool2d_with_indices(t, {3, 2}, {2, 1}, {1, 1}));
  });
  const Tensor i3 = pool_indices({1, 2, 7, 5, 6}, [](X t) {
    return std::get<1>(F::max_pool3d_with_indices(t, Int3(2, 3, 2), Int3(2, 1, 3), Int3(1, 1, 1)));
  });
  const std::vector<int64_t> n1{2, 3, 13}, n2{2, 3, 10, 11}, n3{1, 2, 8, 8, 9};
  return {
      {"max_pool1d", n1, [=](X x) { return cat({F::max_pool1d(x, mo1)}, with_ix(F::max_pool1d_with_indices(x, mo1))); },
       [](X x) {
         return cat({F::max_pool1d(x, 4, 3, 1, 2, true)}, with_ix(F::max_pool1d_with_indices(x, 4, 3, 1, 2, true)));
       }},
      {"avg_pool1d", n1,
       [](X x) {
         return TL{
             F::avg_pool1d(x, F::AvgPool1dFuncOptions(4).stride(3).padding(2).ceil_mode(true).count_include_pad(false)),
             F::avg_pool1d(x, F::AvgPool1dFuncOptions(4).stride(3).divisor_override(5))};
       },
       [](X x) {
         return TL{F::avg_pool1d(x, 4, 3, 2, true, false), F::avg_pool1d(x, 4, 3, 0, false, true, 5)};
       }},
      {"adaptive_pool1d", n1,
       [](X x) {
         return cat({F::adaptive_max_pool1d(x, F::AdaptiveMaxPool1dFuncOptions(5)),
                     F::adaptive_avg_pool1d(x, F::AdaptiveAvgPool1dFuncOptions(6))},
                    with_ix(F::adaptive_max_pool1d_with_indices(x, F::AdaptiveMaxPool1dFuncOptions(5))));
       },
       [](X x) {
         return cat({F::adaptive_max_pool1d(x, 5), F::adaptive_avg_pool1d(x, 6)},
                    with_ix(F::adaptive_max_pool1d_with_indices(x, 5)));
       }},
      {"lp_pool1d", n1,
       [](X x) { return TL{F::lp_pool1d(x, F::LPPool1dFuncOptions(1.5, 4).stride(3).ceil_mode(true))}; },
       [](X x) { return TL{F::lp_pool1d(x, 1.5, 4, 3, true)}; }},
      {"max_unpool1d",
       {2, 3, 5},
       [=](X x) {
         return TL{
             F::max_unpool1d(x, i1.to(x.device()),
                             F::MaxUnpool1dFuncOptions(3).stride(2).padding(1).output_size(std::vector<int64_t>{10}))};
       },
       [=](X x) { return TL{F::max_unpool1d(x, i1.to(x.device()), 3, 2, 1, std::vector<int64_t>{10})}; }},
      {"max_pool2d", n2, [=](X x) { return cat({F::max_pool2d(x, mo2)}, with_ix(F::max_pool2d_with_indices(x, mo2))); },
       [](X x) {
         return cat({F::max_pool2d(x, {3, 4}, {2, 3}, {1, 2}, {2, 1}, true)},
                    with_ix(F::max_pool2d_with_indices(x, {3, 4}, {2, 3}, {1, 2}, {2, 1}, true)));
       }},
      {"avg_pool2d", n2,
       [](X x) {
         return TL{
             F::avg_pool2d(
                 x, F::AvgPool2dFuncOptions({3, 4}).stride({2, 3}).padding({1, 2}).ceil_mode(true).count_include_pad(
                        false)),
             F::avg_pool2d(x, F::AvgPool2dFuncOptions({3, 4}).stride({2, 3}).divisor_override(5))};
       },
       [](X x) {
         return TL{F::avg_pool2d(x, {3, 4}, {2, 3}, {1, 2}, true, false),
                   F::avg_pool2d(x, {3, 4}, {2, 3}, 0, false, true, 5)};
       }},
      {"adaptive_pool2d", n2,
       [](X x) {
         return cat({F::adaptive_max_pool2d(x, F::AdaptiveMaxPool2dFuncOptions({std::nullopt, 3})),
                     F::adaptive_avg_pool2d(x, F::AdaptiveAvgPool2dFuncOptions({4, 3}))},
                    with_ix(F::adaptive_max_pool2d_with_indices(x, F::AdaptiveMaxPool2dFuncOptions({4, 3}))));
       },
       [](X x) {
         return cat({F::adaptive_max_pool2d(x, {std::nullopt, 3}), F::adaptive_avg_pool2d(x, {4, 3})},
                    with_ix(F::adaptive_max_pool2d_with_indices(x, {4, 3})));
       }},
      {"lp_pool2d", n2,
       [](X x) {
         return TL{F::lp_pool2d(x, F::LPPool2dFuncOptions(1.5, {3, 4}).stride({2, 3}).ceil_mode(true))};
       },
       [](X x) {
         return TL{F::lp_pool2d(x, 1.5, {3, 4}, {2, 3}, true)};
       }},
      {"max_unpool2d",
       {2, 3, 4, 8},
       [=](X x) {
         return TL{F::max_unpool2d(
             x, i2.to(x.device()),
             F::MaxUnpool2dFuncOptions({3, 2}).stride({2, 1}).padding({1, 1}).output_size(std::vector<int64_t>{8, 7}))};
       },
       [=](X x) {
         return TL{F::max_unpool2d(x, i2.to(x.device()), {3, 2}, {2, 1}, {1, 1}, std::vector<int64_t>{8, 7})};
       }},
      {"max_pool3d", n3,
       [=](X x) {
         return cat({F::max_pool3d(x, mo3), F::max_pool3d(x, F::MaxPool3dFuncOptions(mo3).ceil_mode(true))},
                    with_ix(F::max_pool3d_with_indices(x, F::MaxPool3dFuncOptions(mo3).ceil_mode(true))));
       },
       [=](X x) {
         return cat({F::max_pool3d(x, k3, s3, p3, d3, false), F::max_pool3d(x, k3, s3, p3, d3, true)},
                    with_ix(F::max_pool3d_with_indices(x, k3, s3, p3, d3, true)));
       }},
      {"avg_pool3d", n3,
       [=](X x) {
         return TL{F::avg_pool3d(
                       x, F::AvgPool3dFuncOptions(k3).stride(s3).padding(p3).ceil_mode(true).count_include_pad(false)),
                   F::avg_pool3d(x, F::AvgPool3dFuncOptions(k3).stride(s3).divisor_override(5))};
       },
       [=](X x) {
         return TL{F::avg_pool3d(x, k3, s3, p3, true, false), F::avg_pool3d(x, k3, s3, 0, false, true, 5)};
       }},
      {"adaptive_pool3d", n3,
       [](X x) {
         return cat({F::adaptive_max_pool3d(x, F::AdaptiveMaxPool3dFuncOptions(Int3(3, 4, 5))),
                     F::adaptive_avg_pool3d(x, F::AdaptiveAvgPool3dFuncOptions(Int3(5, 3, 4)))},
                    with_ix(F::adaptive_max_pool3d_with_indices(x, F::AdaptiveMaxPool3dFuncOptions(Int3(3, 4, 5)))));
       },
       [](X x) {
         return cat({F::adaptive_max_pool3d(x, Int3(3, 4, 5)), F::adaptive_avg_pool3d(x, Int3(5, 3, 4))},
                    with_ix(F::adaptive_max_pool3d_with_indices(x, Int3(3, 4, 5))));
       }},
      {"max_unpool3d",
       {1, 2, 4, 5, 3},
       [=](X x) {
         return TL{F::max_unpool3d(x, i3.to(x.device()),
                                   F::MaxUnpool3dFuncOptions(Int3(2, 3, 2))
                                       .stride(Int3(2, 1, 3))
                                       .padding(Int3(1, 1, 1))
                                       .output_size(std::vector<int64_t>{7, 5, 6}))};
       },
       [=](X x) {
         return TL{F::max_unpool3d(x, i3.to(x.device()), Int3(2, 3, 2), Int3(2, 1, 3), Int3(1, 1, 1),
                                   std::vector<int64_t>{7, 5, 6})};
       }},
  };
}

std::vector<Case> other_cases() {
  using X = const Tensor&;
  const std::vector<int64_t> n{2, 3, 5, 6};
  return {
      {"pad", n,
       [](X x) {
         return TL{F::pad(x, F::PadFuncOptions({1, 2, 3, 0}).value(0.5)),
                   F::pad(x, F::PadFuncOptions({2, 1, 1, 3}).mode(kReflect)),
                   F::pad(x, F::PadFuncOptions({1, 3, 2, 0}).mode(kReplicate)),
                   F::pad(x, F::PadFuncOptions({2, 1, 0, 3}).mode(kCircular))};
       },
       [](X x) {
         return TL{F::pad(x, {1, 2, 3, 0}, 0.5), F::pad(x, {2, 1, 1, 3}, kReflect), F::pad(x, {1, 3, 2, 0}, kReplicate),
                   F::pad(x, {2, 1, 0, 3}, kCircular)};
       }},
      {"pixel_shuffle",
       {2, 12, 4, 6},
       [](X x) {
         return TL{F::pixel_shuffle(x, F::PixelShuffleFuncOptions(2)),
                   F::pixel_unshuffle(x, F::PixelUnshuffleFuncOptions(2))};
       },
       [](X x) {
         return TL{F::pixel_shuffle(x, 2), F::pixel_unshuffle(x, 2)};
       }},
      // kernel (2, 3), dilation (2, 1), padding (1, 2), stride (1, 3) over 5 x 6: 5 x 3 blocks.
      {"unfold", n,
       [](X x) {
         return TL{F::unfold(x, F::UnfoldFuncOptions({2, 3}).dilation({2, 1}).padding({1, 2}).stride({1, 3}))};
       },
       [](X x) {
         return TL{F::unfold(x, {2, 3}, {2, 1}, {1, 2}, {1, 3})};
       }},
      {"fold",
       {2, 18, 15},
       [](X x) {
         return TL{F::fold(x, F::FoldFuncOptions({5, 6}, {2, 3}).dilation({2, 1}).padding({1, 2}).stride({1, 3}))};
       },
       [](X x) {
         return TL{F::fold(x, {5, 6}, {2, 3}, {2, 1}, {1, 2}, {1, 3})};
       }},
  };
}

}  // namespace

TEST_CASE("func options pool: pooling options calls equal the positional calls bit for bit", "[nn][func_options]") {
  for (Device dev : wick::test::test_devices())
    for (const Case& c : pooling_cases()) check_case(c, dev);
}

TEST_CASE("func options pool: pad pixel_shuffle fold and unfold options calls equal the positional calls",
          "[nn][func_options]") {
  for (Device dev : wick::test::test_devices())
    for (const Case& c : other_cases()) check_case(c, dev);
}

TEST_CASE("func options pool: defaults are LibTorch 1.13's", "[nn][func_options]") {
  // As LibTorch, the pooling, fold and pixel shuffle function options are the layers' options.
  STATIC_REQUIRE(std::is_same_v<F::MaxPool2dFuncOptions, MaxPool2dOptions>);
  STATIC_REQUIRE(std::is_same_v<F::AvgPool1dFuncOptions, AvgPool1dOptions>);
  STATIC_REQUIRE(std::is_same_v<F::AdaptiveMaxPool2dFuncOptions, AdaptiveMaxPool2dOptions>);
  STATIC_REQUIRE(std::is_same_v<F::AdaptiveAvgPool3dFuncOptions, AdaptiveAvgPool3dOptions>);
  STATIC_REQUIRE(std::is_same_v<F::LPPool2dFuncOptions, LPPool2dOptions>);
  STATIC_REQUIRE(std::is_same_v<F::FoldFuncOptions, FoldOptions>);
  STATIC_REQUIRE(std::is_same_v<F::UnfoldFuncOptions, UnfoldOptions>);
  STATIC_REQUIRE(std::is_same_v<F::PixelShuffleFuncOptions, PixelShuffleOptions>);
  STATIC_REQUIRE(std::is_same_v<F::PixelUnshuffleFuncOptions, PixelUnshuffleOptions>);

  // LibTorch: stride = kernel_size, padding 0, dilation 1, ceil_mode false.
  const auto m1 = F::MaxPool1dFuncOptions(3);
  CHECK((m1.kernel_size() == 3 && m1.stride() == 3 && m1.padding() == 0 && m1.dilation() == 1 && !m1.ceil_mode()));
  const auto m2 = F::MaxPool2dFuncOptions({3, 2});
  CHECK((m2.stride() == Int2(3, 2) && m2.padding() == Int2(0, 0) && m2.dilation() == Int2(1, 1) && !m2.ceil_mode()));
  const auto m3 = F::MaxPool3dFuncOptions(Int3(3, 2, 1));
  CHECK((m3.stride() == Int3(3, 2, 1) && m3.padding() == Int3(0, 0, 0) && m3.dilation() == Int3(1, 1, 1)));
  // Also count_include_pad true and divisor_override none.
  const auto a2 = F::AvgPool2dFuncOptions({3, 2});
  CHECK((a2.stride() == Int2(3, 2) && a2.padding() == Int2(0, 0) && !a2.ceil_mode() && a2.count_include_pad() &&
         !a2.divisor_override()));
  const auto a1 = F::AvgPool1dFuncOptions(4);
  CHECK((a1.stride() == 4 && a1.padding() == 0 && a1.count_include_pad() && !a1.divisor_override()));
  const auto a3 = F::AvgPool3dFuncOptions(2);
  CHECK((a3.stride() == Int3(2, 2, 2) && a3.count_include_pad() && !a3.divisor_override()));
  CHECK(F::AdaptiveMaxPool2dFuncOptions(3).output_size() == OptionalInt2(3, 3));
  CHECK(F::AdaptiveAvgPool3dFuncOptions(2).output_size() == Int3(2, 2, 2));
  const auto lp1 = F::LPPool1dFuncOptions(2, 3);
  CHECK((lp1.norm_type() == 2.0 && lp1.kernel_size() == 3 && lp1.stride() == 3 && !lp1.ceil_mode()));
  const auto lp2 = F::LPPool2dFuncOptions(1.5, {2, 3});
  CHECK((lp2.norm_type() == 1.5 && lp2.stride() == Int2(2, 3) && !lp2.ceil_mode()));
  // MaxUnpoolFuncOptions: stride = kernel_size, padding 0, output_size none.
  const auto u1 = F::MaxUnpool1dFuncOptions(3);
  CHECK((u1.stride() == 3 && u1.padding() == 0 && !u1.output_size()));
  const auto u2 = F::MaxUnpool2dFuncOptions({2, 3});
  CHECK((u2.stride() == Int2(2, 3) && u2.padding() == Int2(0, 0) && !u2.output_size()));
  const auto u3 = F::MaxUnpool3dFuncOptions(2);
  CHECK((u3.kernel_size() == Int3(2, 2, 2) && u3.stride() == Int3(2, 2, 2) && u3.padding() == Int3(0, 0, 0)));
  // PadFuncOptions: mode constant, value 0.
  const auto p = F::PadFuncOptions({1, 2});
  CHECK((p.pad() == std::vector<int64_t>{1, 2} && p.mode() == kConstant && p.value() == 0.0));
  // FoldOptions / UnfoldOptions: dilation 1, padding 0, stride 1.
  const auto f = F::FoldFuncOptions({4, 5}, 2);
  CHECK((f.output_size() == Int2(4, 5) && f.kernel_size() == Int2(2, 2) && f.dilation() == Int2(1, 1) &&
         f.padding() == Int2(0, 0) && f.stride() == Int2(1, 1)));
  const auto uf = F::UnfoldFuncOptions(3);
  CHECK((uf.dilation() == Int2(1, 1) && uf.padding() == Int2(0, 0) && uf.stride() == Int2(1, 1)));
  CHECK(F::PixelShuffleFuncOptions(2).upscale_factor() == 2);
  CHECK(F::PixelUnshuffleFuncOptions(3).downscale_factor() == 3);

  // The defaults at work: kernel-sized strides, and modes other than constant take PadFuncOptions'
  // default value 0 (LibTorch passes it on as none).
  manual_seed(3);
  const Tensor x = rand({1, 2, 6, 6}, kF64);
  CHECK(bit_mismatches(F::max_pool2d(x, F::MaxPool2dFuncOptions({3, 2})), F::max_pool2d(x, {3, 2}, {3, 2})) == 0);
  CHECK(bit_mismatches(F::avg_pool2d(x, F::AvgPool2dFuncOptions(3)), F::avg_pool2d(x, 3, 3)) == 0);
  CHECK(bit_mismatches(F::pad(x, F::PadFuncOptions({1, 2, 2, 1}).mode(kReflect)), F::pad(x, {1, 2, 2, 1}, kReflect)) ==
        0);
  CHECK(bit_mismatches(F::pad(x, F::PadFuncOptions({1, 2})), F::pad(x, {1, 2}, 0.0)) == 0);
}

TEST_CASE("func options pool: bad options are typed errors naming the op", "[nn][func_options]") {
  manual_seed(4);
  const Tensor x1 = rand({1, 2, 8}, kF64), x2 = rand({1, 2, 6, 6}, kF64), x3 = rand({1, 2, 4, 4, 4}, kF64);
  // An explicit stride of 0, which the positional functions would read as stride = kernel_size.
  expect_error<ValueError>([&] { F::max_pool1d(x1, F::MaxPool1dFuncOptions(2).stride(0)); },
                           {"max_pool1d", "stride should not be zero"});
  expect_error<ValueError>(
      [&] {
        F::max_pool2d_with_indices(x2, F::MaxPool2dFuncOptions(2).stride({1, 0}));
      },
      {"max_pool2d_with_indices", "stride should not be zero", "(1, 0)"});
  expect_error<ValueError>([&] { F::avg_pool3d(x3, F::AvgPool3dFuncOptions(2).stride(Int3(0, 1, 1))); },
                           {"avg_pool3d", "stride should not be zero"});
  expect_error<ValueError>(
      [&] {
        F::lp_pool2d(x2, F::LPPool2dFuncOptions(2, 2).stride({0, 2}));
      },
      {"lp_pool2d", "stride should not be zero"});
  const Tensor idx = std::get<1>(F::max_pool1d_with_indices(x1, 2));
  expect_error<ValueError>(
      [&] {
        F::max_unpool1d(std::get<0>(F::max_pool1d_with_indices(x1, 2)), idx, F::MaxUnpool1dFuncOptions(2).stride(0));
      },
      {"max_unpool1d", "stride should not be zero"});
  // The positional functions' own checks, reached through the options.
  expect_error<ValueError>(
      [&] {
        F::max_unpool1d(std::get<0>(F::max_pool1d_with_indices(x1, 2)), idx,
                        F::MaxUnpool1dFuncOptions(2).output_size(std::vector<int64_t>{20}));
      },
      {"max_unpool1d"});
  expect_error<ValueError>([&] { F::adaptive_avg_pool3d(x3, F::AdaptiveAvgPool3dFuncOptions(Int3(2, 0, 2))); },
                           {"adaptive_avg_pool3d"});
  expect_error<ValueError>([&] { F::pad(x2, F::PadFuncOptions({1, 1}).mode(kZeros)); }, {"pad", "zeros"});
  expect_error<ValueError>(
      [&] {
        F::pad(x2, F::PadFuncOptions({1, 1}).mode(kReflect).value(2));
      },
      {"pad", "reflect", "takes no value"});
  expect_error<ValueError>([&] { F::pixel_shuffle(x2, F::PixelShuffleFuncOptions(2)); }, {"pixel_shuffle"});
  expect_error<ValueError>([&] { F::unfold(x2, F::UnfoldFuncOptions(2).stride(0)); }, {"unfold", "stride"});
  expect_error<ValueError>([&] { F::fold(rand({1, 8, 3}, kF64), F::FoldFuncOptions({4, 4}, 2)); }, {"fold"});
}
