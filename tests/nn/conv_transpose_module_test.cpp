// ConvTranspose2d and ConvTranspose1d: the layers' print strings, parameters, initialization and
// forward(input, output_size), and the typed errors of F::conv_transpose1d/2d. The values against
// PyTorch, a direct loop and by hand: conv_transpose_test.cpp.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
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
}  // namespace

TEST_CASE("ConvTranspose2d and ConvTranspose1d print, name and shape their parameters as PyTorch 1.13",
          "[nn][conv][conv_transpose_test]") {
  // print(nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2, bias=False,
  // dilation=2)) and the others under PyTorch 1.13.
  CHECK(ConvTranspose2d(4, 6, Int2(3, 2))->to_string() == "ConvTranspose2d(4, 6, kernel_size=(3, 2), stride=(1, 1))");
  CHECK(ConvTranspose2d(
            ConvTranspose2dOptions(4, 6, 3).stride(2).padding(1).output_padding(1).groups(2).bias(false).dilation(2))
            ->to_string() ==
        "ConvTranspose2d(4, 6, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), dilation=(2, 2), "
        "output_padding=(1, 1), groups=2, bias=False)");
  CHECK(ConvTranspose1d(4, 6, 3)->to_string() == "ConvTranspose1d(4, 6, kernel_size=(3,), stride=(1,))");
  CHECK(ConvTranspose1d(
            ConvTranspose1dOptions(4, 6, 3).stride(2).padding(1).output_padding(1).groups(2).bias(false).dilation(2))
            ->to_string() ==
        "ConvTranspose1d(4, 6, kernel_size=(3,), stride=(2,), padding=(1,), dilation=(2,), output_padding=(1,), "
        "groups=2, bias=False)");

  ConvTranspose2d t2(ConvTranspose2dOptions(4, 6, {3, 2}).groups(2));
  CHECK(t2->named_parameters().keys() == std::vector<std::string>{"weight", "bias"});
  CHECK(t2->state_dict().keys() == std::vector<std::string>{"weight", "bias"});
  CHECK(t2->weight().sizes() == IntArrayRef({4, 3, 3, 2}));  // [in, out / groups, kh, kw]
  CHECK(t2->bias().sizes() == IntArrayRef({6}));
  ConvTranspose1d t1(ConvTranspose1dOptions(4, 6, 5).groups(2).bias(false));
  CHECK(t1->state_dict().keys() == std::vector<std::string>{"weight"});
  CHECK(t1->weight().sizes() == IntArrayRef({4, 3, 5}));
  CHECK_FALSE(t1->bias().defined());
  CHECK(t1->in_channels() == 4);
  CHECK(t1->out_channels() == 6);
  CHECK(t1->kernel_size() == 5);
  CHECK(t1->groups() == 2);
  CHECK(t1->padding_mode() == kZeros);
  ConvTranspose2d o2(
      ConvTranspose2dOptions(2, 2, 3).stride({2, 3}).padding({1, 0}).output_padding({1, 2}).dilation({1, 2}));
  CHECK(o2->stride() == Int2(2, 3));
  CHECK(o2->padding() == Int2(1, 0));
  CHECK(o2->output_padding() == Int2(1, 2));
  CHECK(o2->dilation() == Int2(1, 2));
  CHECK(o2->options().kernel_size() == Int2(3));
}

TEST_CASE("ConvTranspose initializes as PyTorch: fan_in from the weight, out_channels / groups * k",
          "[nn][init][conv_transpose_test]") {
  // weight [64, 4, 5, 5]: PyTorch's fan_in is weight.size(1) * 25 = 100, so the bound is 0.1 (not
  // 1 / sqrt(in / groups * 25) = 0.035, a Conv2d's rule).
  wick::manual_seed(34);
  ConvTranspose2d c(ConvTranspose2dOptions(64, 8, 5).groups(2));
  const double bound = 0.1;
  double lo = 1, hi = -1;
  for (double v : values(c->weight())) lo = std::min(lo, v), hi = std::max(hi, v);
  CHECK(lo >= -bound);
  CHECK(hi <= bound);
  CHECK(hi > 0.95 * bound);  // 6400 draws reach the top 5% of the range
  CHECK(lo < -0.95 * bound);
  double bias_hi = 0;
  for (double v : values(c->bias())) bias_hi = std::max(bias_hi, std::abs(v));
  CHECK(bias_hi <= bound);
  CHECK(c->weight().dtype() == kFloat32);
  CHECK(c->weight().requires_grad());
  CHECK(ConvTranspose1d(4, 6, 3, kF64)->weight().dtype() == kFloat64);
  // 1-d: weight [6, 4, 3], fan_in 12.
  ConvTranspose1d c1(6, 4, 3);
  for (double v : values(c1->weight())) CHECK(std::abs(v) <= 1.0 / std::sqrt(12.0));
}

TEST_CASE("ConvTranspose forward with output_size, forward_value and Sequential", "[nn][conv][conv_transpose_test]") {
  wick::manual_seed(35);
  ConvTranspose2d m(ConvTranspose2dOptions(4, 6, 3).stride(2), kF64);
  const Tensor x = randn({2, 4, 5, 5}, kF64);
  CHECK(m(x).sizes() == IntArrayRef({2, 6, 11, 11}));  // (5 - 1) 2 + 3
  CHECK(m(x, IntArrayRef{12, 11}).sizes() == IntArrayRef({2, 6, 12, 11}));
  CHECK(m(x, IntArrayRef{2, 6, 12, 12}).sizes() == IntArrayRef({2, 6, 12, 12}));  // the whole shape
  CHECK(m(x[0], IntArrayRef{6, 12, 11}).sizes() == IntArrayRef({6, 12, 11}));
  // The size picks the output_padding: the same values as asking for it.
  CHECK(values(m(x, IntArrayRef{12, 11})) == values(F::conv_transpose2d(x, m->weight(), m->bias(), 2, 0, Int2(1, 0))));
  CHECK_THROWS_AS(m(x, IntArrayRef{10, 12}), ValueError);
  CHECK_THROWS_WITH(m(x, IntArrayRef{10, 12}),
                    Contains("ConvTranspose2d: requested an output size of [10, 12], but valid sizes range from "
                             "[11, 11] to [12, 12] (for an input of [5, 5])"));
  CHECK_THROWS_WITH(
      m(x, IntArrayRef{12}),
      Contains("ConvTranspose2d: for a 4-d input, output_size must have 2 or 4 elements") && Contains("got 1 ([12])"));
  CHECK(values(m->forward_value({Value(x)}).tensor()) == values(m(x)));
  CHECK(values(m->forward_value({Value(x), Value()}).tensor()) == values(m(x)));
  CHECK(m->forward_value({Value(x), Value::list({Value(12), Value(12)})}).tensor().sizes() ==
        IntArrayRef({2, 6, 12, 12}));
  CHECK_THROWS_AS(m->forward_value({Value(x), Value(12)}), TypeError);
  CHECK_THROWS_AS(m->forward_value({}), ValueError);

  ConvTranspose1d m1(ConvTranspose1dOptions(3, 2, 4).stride(3).dilation(2), kF64);
  const Tensor x1 = randn({2, 3, 6}, kF64);
  CHECK(m1(x1).sizes() == IntArrayRef({2, 2, 22}));  // 5 * 3 + 2 * 3 + 1
  CHECK(m1(x1, IntArrayRef{24}).sizes() == IntArrayRef({2, 2, 24}));
  CHECK_THROWS_WITH(m1(x1, IntArrayRef{25}),
                    Contains("ConvTranspose1d: requested an output size of [25], but valid sizes range from [22] to "
                             "[24] (for an input of [6])"));

  // In a Sequential (forward_value with one argument): a decoder from 4 x 4 to 8 x 8.
  Sequential seq(ConvTranspose2d(ConvTranspose2dOptions(4, 2, 4).stride(2).padding(1), kF64), ReLU());
  CHECK(seq->forward(randn({1, 4, 4, 4}, kF64)).sizes() == IntArrayRef({1, 2, 8, 8}));
}

TEST_CASE("conv_transpose errors are typed and name the op, the shapes and what to do",
          "[nn][conv][errors][conv_transpose_test]") {
  const Tensor x = randn({2, 4, 5, 5}, kF64), w = randn({4, 3, 3, 3}, kF64);
  CHECK_THROWS_AS(F::conv_transpose2d(randn({1, 2, 4, 5, 5}, kF64), w), ValueError);
  CHECK_THROWS_WITH(F::conv_transpose2d(randn({1, 2, 4, 5, 5}, kF64), w),
                    Contains("conv_transpose2d: expected a 3-d [C_in, H, W] (unbatched) or 4-d [N, C_in, H, W] "
                             "input, got shape [1, 2, 4, 5, 5]"));
  CHECK_THROWS_WITH(F::conv_transpose2d(x, randn({4, 3, 3}, kF64)),
                    Contains("conv_transpose2d: weight must be 4-d [in_channels, out_channels / groups, kh, kw]"));
  CHECK_THROWS_AS(F::conv_transpose2d(randn({2, 3, 5, 5}, kF64), w), ValueError);
  CHECK_THROWS_WITH(F::conv_transpose2d(randn({2, 3, 5, 5}, kF64), w),
                    Contains("conv_transpose2d: input [2, 3, 5, 5] has 3 channels but weight [4, 3, 3, 3] has "
                             "in_channels = 4"));
  CHECK_THROWS_AS(F::conv_transpose2d(x, w, {}, 1, 0, 0, 3), ValueError);
  CHECK_THROWS_WITH(F::conv_transpose2d(x, w, {}, 1, 0, 0, 3),
                    Contains("conv_transpose2d: groups = 3 must divide in_channels = 4"));
  CHECK_THROWS_WITH(F::conv_transpose2d(x, w, {}, 1, 0, 0, 0), Contains("conv_transpose2d: groups must be positive"));
  CHECK_THROWS_AS(F::conv_transpose2d(x, w, {}, 1, 0, 1), ValueError);
  CHECK_THROWS_WITH(F::conv_transpose2d(x, w, {}, 1, 0, 1),
                    Contains("conv_transpose2d: output_padding (1, 1) must be smaller than either the stride (1, 1) "
                             "or the dilation (1, 1) on each axis"));
  CHECK_THROWS_WITH(F::conv_transpose2d(x, w, {}, {2, 1}, 0, {0, 1}), Contains("output_padding (0, 1)"));
  CHECK_NOTHROW(F::conv_transpose2d(x, w, {}, {2, 1}, 0, {1, 1}, 1, {1, 2}));  // below the dilation
  CHECK_THROWS_WITH(F::conv_transpose2d(x, w, {}, 0), Contains("conv_transpose2d: stride (0, 0) and dilation (1, 1) "
                                                               "must be positive"));
  CHECK_THROWS_WITH(F::conv_transpose2d(x, w, {}, 1, -1),
                    Contains("conv_transpose2d: padding (-1, -1) and output_padding (0, 0) must be non-negative"));
  CHECK_THROWS_AS(F::conv_transpose2d(x, w, {}, 1, 4), ValueError);
  CHECK_THROWS_WITH(F::conv_transpose2d(x, w, {}, 1, 4),
                    Contains("gives an output of -1 x -1 positions per channel, which is too small"));
  CHECK_THROWS_AS(F::conv_transpose2d(x, w, randn({4}, kF64)), ValueError);
  CHECK_THROWS_WITH(F::conv_transpose2d(x, w, randn({4}, kF64), 1, 0, 0, 2),
                    Contains("conv_transpose2d: bias must have shape [6] (out_channels = weight.size(1) * groups = "
                             "3 * 2), got [4]"));
  CHECK_THROWS_AS(F::conv_transpose2d(x, w, randn({3}, TensorOptions(kFloat32))), TypeError);
  CHECK_THROWS_AS(F::conv_transpose2d(x.to(kFloat32), w), TypeError);
  CHECK_THROWS_WITH(F::conv_transpose2d(x.to(kFloat32), w),
                    Contains("conv_transpose2d: input is float32 but weight is float64"));
  CHECK_THROWS_AS(F::conv_transpose2d(x.to(kInt64), w.to(kInt64)), TypeError);
  CHECK_THROWS_WITH(F::conv_transpose2d(x, randn({4, 3, 0, 3}, kF64)),
                    Contains("conv_transpose2d: kernel size should be greater than zero"));
  CHECK_THROWS_WITH(F::conv_transpose2d(randn({2, 4, 0, 5}, kF64), w),
                    Contains("conv_transpose2d: input [2, 4, 0, 5] has an empty spatial dim"));
  CHECK_THROWS_AS(F::conv_transpose2d(Tensor(), w), ValueError);
  for (Device dev : wick::test::test_devices())
    if (dev != kCPU) {
      CHECK_THROWS_AS(F::conv_transpose2d(x.to(dev), w), ValueError);
      CHECK_THROWS_WITH(F::conv_transpose2d(x.to(dev), w), Contains("move them to one device"));
    }

  // 1-d: reported in 1-d terms.
  const Tensor x1 = randn({2, 4, 6}, kF64), w1 = randn({4, 3, 3}, kF64);
  CHECK_THROWS_WITH(F::conv_transpose1d(x, w1), Contains("conv_transpose1d: expected a 2-d [C_in, L] (unbatched) or "
                                                         "3-d [N, C_in, L] input, got shape [2, 4, 5, 5]"));
  CHECK_THROWS_WITH(F::conv_transpose1d(x1, w1, {}, 1, 0, 1),
                    Contains("conv_transpose1d: output_padding 1 must be smaller than either the stride 1 or the "
                             "dilation 1") &&
                        !Contains("conv_transpose2d"));
  CHECK_THROWS_WITH(F::conv_transpose1d(randn({2, 5, 6}, kF64), w1),
                    Contains("conv_transpose1d: input [2, 5, 6] has 5 channels but weight [4, 3, 3]"));
  CHECK(F::conv_transpose1d(x1, w1, {}, 1, 3).sizes() == IntArrayRef({2, 3, 2}));  // 5 - 6 + 2 + 1
  CHECK_THROWS_AS(F::conv_transpose1d(x1, w1, {}, 1, 4), ValueError);
  CHECK_THROWS_WITH(F::conv_transpose1d(x1, w1, {}, 1, 4),
                    Contains("conv_transpose1d: input [2, 4, 6] with weight [4, 3, 3], stride 1, padding 4, dilation 1 "
                             "and output_padding 0 gives an output of 0 positions per channel, which is too small"));

  // The layers: bad options when built.
  CHECK_THROWS_AS(ConvTranspose2d(0, 6, 3), ValueError);
  CHECK_THROWS_WITH(ConvTranspose2d(ConvTranspose2dOptions(4, 6, 3).groups(4)),
                    Contains("ConvTranspose2d: groups (4) must be positive and divide in_channels (4) and "
                             "out_channels (6)"));
  CHECK_THROWS_AS(ConvTranspose2d(ConvTranspose2dOptions(4, 6, 3).padding_mode(kReflect)), ValueError);
  CHECK_THROWS_WITH(ConvTranspose2d(ConvTranspose2dOptions(4, 6, 3).padding_mode(kReflect)),
                    Contains("ConvTranspose2d: only zeros padding mode is supported") && Contains("reflect"));
  CHECK_THROWS_WITH(ConvTranspose2d(ConvTranspose2dOptions(4, 6, 3).output_padding(1)),
                    Contains("ConvTranspose2d: output_padding (1, 1) must be smaller than either the stride (1, 1) or "
                             "the dilation (1, 1)") &&
                        Contains("pass output_size to forward"));
  CHECK_NOTHROW(ConvTranspose2d(ConvTranspose2dOptions(4, 6, 3).output_padding(1).dilation(2)));
  CHECK_THROWS_WITH(ConvTranspose1d(ConvTranspose1dOptions(4, 6, 0)), Contains("ConvTranspose1d: kernel_size (0,)"));
  CHECK_THROWS_WITH(ConvTranspose1d(ConvTranspose1dOptions(4, 6, 3).padding(-1)), Contains("padding (-1,)"));
  CHECK_THROWS_AS(ConvTranspose1d(ConvTranspose1dOptions(4, 6, 3).padding_mode(kCircular)), ValueError);
  CHECK_THROWS_WITH(ConvTranspose2d(3, 6, 3, kF64)(x), Contains("conv_transpose2d: input [2, 4, 5, 5] has 4 channels"));
}
