// conv_transpose3d, ConvTranspose3d, adaptive_max_pool3d and AdaptiveMaxPool3d: PyTorch 1.13's
// values and gradients (generate.py's three_d_more_cases, selected by op name) on every test
// device in float64; float64 gradchecks and double backward; conv_transpose3d as the adjoint of
// conv3d; small cases worked by hand; print strings, parameters, initialization bounds and the
// typed errors, which name the 3-d op.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/gradcheck.h"
#include "support/oracle.h"
#include "support/oracle_checks.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/generator.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using Catch::Matchers::Contains;
using wick::test::kwarg_int3;
using wick::test::OracleCase;
using wick::test::values;
using TL = std::vector<Tensor>;

namespace {
constexpr double kOutRtol = 1e-10, kGradRtol = 1e-9, kAtol = 1e-13;
const TensorOptions kF64(kFloat64);

// 0..n-1 as float64 [1, 1, D, H, W], so that each position's value is its flat index.
Tensor ramp(int64_t D, int64_t H, int64_t W, Device dev) {
  return arange(0, D * H * W, 1, TensorOptions(kFloat64).device(dev)).reshape({1, 1, D, H, W});
}

// The layer's parameters set to the case's leaves 1.. (named in kwargs "inputs"); returns the
// tensors to differentiate with respect to: the input leaf and the layer's parameters.
TL load_parameters(const OracleCase& c, Module& m, const TL& leaves) {
  const auto names = c.kwargs.at("inputs").get<std::vector<std::string>>();
  REQUIRE(names.size() == leaves.size());
  TL wrt{leaves[0]};
  NoGradGuard no_grad;
  for (size_t j = 1; j < names.size(); ++j) {
    Tensor p = m.named_parameters()[names[j]];
    REQUIRE(p.sizes() == leaves[j].sizes());
    p.copy_(leaves[j]);
    wrt.push_back(p);
  }
  return wrt;
}
}  // namespace

TEST_CASE("conv_transpose3d matches PyTorch 1.13: stride and padding and output_padding and dilation and groups",
          "[nn][oracle][conv][three_d_more_test]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "conv_transpose3d") continue;
    const Int3 stride = kwarg_int3(c, "stride", 1), padding = kwarg_int3(c, "padding", 0),
               dilation = kwarg_int3(c, "dilation", 1);
    const Int3 output_padding = kwarg_int3(c, "output_padding", 0);
    const int64_t groups = c.kw<int64_t>("groups", 1);
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      const TL x = c.leaves(dev);
      const Tensor b = x.size() == 3 ? x[2] : Tensor();
      const Tensor y = F::conv_transpose3d(x[0], x[1], b, stride, padding, output_padding, groups, dilation);
      wick::test::check_oracle_case(c, y, x, dev, kOutRtol, kGradRtol, kAtol);
    }
    if (groups > 1) ++seen["groups"];
    if (!(dilation == Int3(1))) ++seen["dilation"];
    if (!(output_padding == Int3(0))) ++seen["output_padding"];
    if (c.inputs.size() == 2) ++seen["no bias"];
    if (c.inputs[0].dim() == 4) ++seen["unbatched"];
  }
  for (const char* kind : {"groups", "dilation", "output_padding", "no bias", "unbatched"}) {
    INFO(kind);
    CHECK(seen[kind] >= 1);
  }
}

TEST_CASE("ConvTranspose3d matches PyTorch 1.13 with its parameters and forward with output_size",
          "[nn][oracle][conv][three_d_more_test]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "conv_transpose3d_module") continue;
    std::optional<std::vector<int64_t>> output_size;
    if (!c.kwargs.at("output_size").is_null()) output_size = c.kwargs.at("output_size").get<std::vector<int64_t>>();
    const auto options =
        ConvTranspose3dOptions(c.kwargs.at("in_channels").get<int64_t>(), c.kwargs.at("out_channels").get<int64_t>(),
                               kwarg_int3(c, "kernel_size", 1))
            .stride(kwarg_int3(c, "stride", 1))
            .padding(kwarg_int3(c, "padding", 0))
            .output_padding(kwarg_int3(c, "output_padding", 0))
            .groups(c.kw<int64_t>("groups", 1))
            .bias(c.kw<bool>("bias", true))
            .dilation(kwarg_int3(c, "dilation", 1));
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      ConvTranspose3d m(options, kF64);
      m->to(dev);
      const TL leaves = c.leaves(dev);
      const TL wrt = load_parameters(c, *m, leaves);
      const Tensor y = output_size ? m(leaves[0], IntArrayRef(*output_size)) : m(leaves[0]);
      wick::test::check_oracle_case(c, y.reshape({-1}), wrt, dev, kOutRtol, kGradRtol, kAtol);
    }
    if (output_size) ++seen["output_size"];
    if (c.inputs[0].dim() == 4) ++seen["unbatched"];
    if (!c.kw<bool>("bias", true)) ++seen["no bias"];
  }
  for (const char* kind : {"output_size", "unbatched", "no bias"}) {
    INFO(kind);
    CHECK(seen[kind] >= 1);
  }
}

TEST_CASE("adaptive_max_pool3d matches PyTorch 1.13: values and gradients and indices and NaN and its layer",
          "[nn][oracle][pool][three_d_more_test]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    const bool pool = c.op == "adaptive_max_pool3d", indices = c.op == "adaptive_max_pool3d_indices";
    const bool layer = c.op == "adaptive_max_pool3d_module";
    if (!pool && !indices && !layer) continue;
    ++seen[c.op];
    const Int3 size = kwarg_int3(c, "output_size", 1);
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      const TL x = c.leaves(dev);
      AdaptiveMaxPool3d m(size);
      if (pool) {
        wick::test::check_oracle_case(c, F::adaptive_max_pool3d(x[0], size), x, dev, kOutRtol, kGradRtol, kAtol);
        CHECK_ALLCLOSE(m(x[0]), c.out, kOutRtol, kAtol);
      } else if (layer) {
        wick::test::check_oracle_case(c, m(x[0]).reshape({-1}), x, dev, kOutRtol, kGradRtol, kAtol);
      } else {
        const auto [value, index] = F::adaptive_max_pool3d_with_indices(x[0], size);
        CHECK(index.dtype() == kInt64);
        CHECK(index.device() == dev);
        CHECK_ALLCLOSE(index, c.out, 0, 0);
        CHECK_ALLCLOSE(std::get<1>(m->forward_with_indices(x[0])), c.out, 0, 0);
        CHECK_ALLCLOSE(value, F::adaptive_max_pool3d(x[0], size), 0, 0);
      }
    }
    if (c.inputs[0].isnan().any().item<bool>()) ++seen["nan " + c.op];
    if (c.inputs[0].dim() == 4) ++seen["unbatched"];
  }
  for (const char* kind : {"adaptive_max_pool3d", "adaptive_max_pool3d_indices", "adaptive_max_pool3d_module",
                           "nan adaptive_max_pool3d", "nan adaptive_max_pool3d_indices", "unbatched"}) {
    INFO(kind);
    CHECK(seen[kind] >= 1);
  }
}

TEST_CASE("conv_transpose3d and adaptive_max_pool3d pass float64 gradchecks and double backward",
          "[nn][gradcheck][three_d_more_test]") {
  manual_seed(5);
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const TensorOptions o = TensorOptions(kFloat64).device(dev).requires_grad();
    const TL in{randn({2, 4, 2, 3, 2}, o), randn({4, 1, 3, 2, 2}, o), randn({2}, o)};
    const auto strided = [](const TL& x) {
      return TL{F::conv_transpose3d(x[0], x[1], x[2], Int3(2, 1, 2), Int3(1, 0, 1), Int3(1, 0, 1), 2, Int3(1, 2, 1))};
    };
    CHECK_GRADCHECK(strided, in);
    wick::test::check_double_backward(strided, in);
    const TL small{randn({2, 2, 3, 2}, o), randn({2, 2, 2, 1, 2}, o)};  // unbatched, no bias
    const auto dilated = [](const TL& x) { return TL{F::conv_transpose3d(x[0], x[1], {}, 1, 0, Int3(1, 0, 0), 1, 2)}; };
    CHECK_GRADCHECK(dilated, small);
    wick::test::check_double_backward(dilated, small);
    // Distinct values, so that a finite difference never moves a maximum.
    std::vector<double> distinct(240);
    for (size_t i = 0; i < distinct.size(); ++i) distinct[i] = static_cast<double>(i * 37 % 240) * 0.1;
    const Tensor x = tensor(distinct, {2, 5, 4, 6}, kF64).to(dev).requires_grad_(true);
    const auto pool = [](const TL& v) { return TL{F::adaptive_max_pool3d(v[0], Int3(3, 3, 4))}; };
    CHECK_GRADCHECK(pool, {x});
    wick::test::check_double_backward(pool, {x});
  }
}

TEST_CASE("conv_transpose3d is the adjoint of conv3d and 3-d ops by hand", "[nn][conv][pool][three_d_more_test]") {
  manual_seed(6);
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const TensorOptions o = TensorOptions(kFloat64).device(dev);
    // <conv_transpose3d(x, w), y> = <x, conv3d(y, w)> for conv3d's weight [O, C / groups, ...] = w.
    const Tensor x = randn({2, 4, 3, 2, 3}, o), w = randn({4, 3, 2, 3, 2}, o);
    const Int3 s(2, 1, 3), p(1, 1, 0), d(1, 2, 1), op(1, 0, 2);
    const Tensor y = F::conv_transpose3d(x, w, {}, s, p, op, 2, d);
    REQUIRE(y.sizes() == std::vector<int64_t>{2, 6, 5, 4, 10});  // (in - 1) s - 2 p + d (k - 1) + op + 1
    const Tensor r = randn(y.sizes(), o);
    const double lhs = (y * r).sum().item<double>(), rhs = (x * F::conv3d(r, w, {}, s, p, d, 2)).sum().item<double>();
    CHECK(std::abs(lhs - rhs) <= 1e-10 * std::abs(lhs));
    // A 2x2x2 ones kernel over 2x2x2 ones: each output counts the (input, tap) pairs landing on it,
    // the product of 1, 2, 1 per axis.
    const Tensor ones_x = ones({1, 1, 2, 2, 2}, o), ones_w = ones({1, 1, 2, 2, 2}, o);
    const auto counts = values(F::conv_transpose3d(ones_x, ones_w, tensor({0.5}, kF64).to(dev)));
    REQUIRE(counts.size() == 27);
    CHECK(counts[0] == 1.5);
    CHECK(counts[13] == 8.5);  // the centre (1, 1, 1)
    CHECK(counts[26] == 1.5);
    // Stride 2 with no overlap: every output holds one product; padding 1 crops the border.
    CHECK(values(F::conv_transpose3d(ones_x, ones_w, {}, 2)) == std::vector<double>(64, 1.0));
    CHECK(F::conv_transpose3d(ones_x, ones_w, {}, 2, 1).sizes() == std::vector<int64_t>{1, 1, 2, 2, 2});
    CHECK(F::conv_transpose3d(ones_x.squeeze(0), ones_w).sizes() == std::vector<int64_t>{1, 3, 3, 3});
    CHECK(F::conv_transpose3d(ones({0, 1, 2, 2, 2}, o), ones_w).sizes() == std::vector<int64_t>{0, 1, 3, 3, 3});
    // On a ramp (value = flat index d H W + h W + w) a window's max is its last corner and the index
    // is that value: windows of 2 along an axis of 4 are [0, 2) and [2, 4); of 2 along 3, [0, 2) and
    // [1, 3).
    const Tensor rmp = ramp(4, 3, 4, dev);
    const auto [mx, idx] = F::adaptive_max_pool3d_with_indices(rmp, 2);
    CHECK(values(mx) == std::vector<double>{17, 19, 21, 23, 41, 43, 45, 47});
    CHECK_ALLCLOSE(idx.to(kFloat64), mx, 0, 0);
    CHECK(values(F::adaptive_max_pool3d(rmp.squeeze(0), 1)) == std::vector<double>{47});
    // A NaN beats every number and the last NaN in (d, h, w) order is the index.
    const double q = std::nan("");
    const Tensor nan = tensor({0.0, 1.0, 2.0, q, q, 5.0, 6.0, 7.0}, {1, 1, 2, 2, 2}, kF64).to(dev);
    const auto [nv, ni] = F::adaptive_max_pool3d_with_indices(nan, 1);
    CHECK(std::isnan(values(nv)[0]));
    CHECK(values(ni.to(kFloat64)) == std::vector<double>{4});
  }
}

TEST_CASE("ConvTranspose3d and AdaptiveMaxPool3d print and initialize as PyTorch 1.13", "[nn][three_d_more_test]") {
  // print(nn.ConvTranspose3d(...)) and nn.AdaptiveMaxPool3d(...) in PyTorch 1.13.
  CHECK(ConvTranspose3d(2, 4, 3)->to_string() == "ConvTranspose3d(2, 4, kernel_size=(3, 3, 3), stride=(1, 1, 1))");
  CHECK(ConvTranspose3d(ConvTranspose3dOptions(4, 6, Int3(3, 2, 2))
                            .stride(Int3(2, 1, 1))
                            .padding(1)
                            .output_padding(Int3(1, 0, 0))
                            .groups(2)
                            .bias(false)
                            .dilation(Int3(1, 2, 1)))
            ->to_string() ==
        "ConvTranspose3d(4, 6, kernel_size=(3, 2, 2), stride=(2, 1, 1), padding=(1, 1, 1), dilation=(1, 2, 1), "
        "output_padding=(1, 0, 0), groups=2, bias=False)");
  CHECK(AdaptiveMaxPool3d(Int3(2, 3, 4))->to_string() == "AdaptiveMaxPool3d(output_size=(2, 3, 4))");
  CHECK(AdaptiveMaxPool3d(Int3(3))->to_string() == "AdaptiveMaxPool3d(output_size=3)");
  // kaiming_uniform(a = sqrt(5)): |w| and |b| at most 1 / sqrt(fan_in), fan_in = weight.size(1) kd kh kw.
  manual_seed(0);
  ConvTranspose3d m(ConvTranspose3dOptions(4, 6, Int3(3, 2, 2)).groups(2), kF64);
  CHECK(m->weight().sizes() == std::vector<int64_t>{4, 3, 3, 2, 2});
  CHECK(m->bias().sizes() == std::vector<int64_t>{6});
  CHECK(m->named_parameters().keys() == std::vector<std::string>{"weight", "bias"});
  const double bound = 1 / std::sqrt(36.0);
  CHECK(m->weight().abs().max().item<double>() <= bound);
  CHECK(m->weight().abs().max().item<double>() > 0.8 * bound);
  CHECK(m->bias().abs().max().item<double>() <= bound);
  // forward(input, output_size) picks the output_padding: [D, H, W] or the whole shape.
  const Tensor x = randn({1, 4, 2, 2, 2}, kF64);
  ConvTranspose3d up(ConvTranspose3dOptions(4, 2, 3).stride(2).padding(1), kF64);
  CHECK(up(x).sizes() == std::vector<int64_t>{1, 2, 3, 3, 3});
  CHECK(up(x, IntArrayRef({4, 3, 4})).sizes() == std::vector<int64_t>{1, 2, 4, 3, 4});
  CHECK(up(x, IntArrayRef({1, 2, 4, 4, 3})).sizes() == std::vector<int64_t>{1, 2, 4, 4, 3});
  CHECK_THROWS_WITH(up(x, IntArrayRef({5, 3, 3})),
                    Contains("ConvTranspose3d: requested an output size of [5, 3, 3], but valid sizes range from "
                             "[3, 3, 3] to [4, 4, 4]"));
}

TEST_CASE("conv_transpose3d and adaptive_max_pool3d refuse bad arguments with typed errors naming the op",
          "[nn][errors][three_d_more_test]") {
  const Tensor x = randn({1, 2, 3, 3, 3}, kF64), w = randn({2, 2, 2, 2, 2}, kF64);
  CHECK_THROWS_AS(F::conv_transpose3d(randn({2, 3, 3}, kF64), w), ValueError);
  CHECK_THROWS_WITH(F::conv_transpose3d(randn({2, 3, 3}, kF64), w),
                    Contains("conv_transpose3d: expected a 4-d [C_in, D, H, W] (unbatched) or 5-d"));
  CHECK_THROWS_WITH(F::conv_transpose3d(x, randn({2, 2, 2, 2}, kF64)),
                    Contains("conv_transpose3d: weight must be 5-d"));
  CHECK_THROWS_WITH(F::conv_transpose3d(x, randn({3, 2, 2, 2, 2}, kF64)),
                    Contains("conv_transpose3d: input [1, 2, 3, 3, 3] has 2 channels but weight [3, 2, 2, 2, 2]"));
  CHECK_THROWS_WITH(F::conv_transpose3d(x, w, {}, 2, 0, Int3(0, 2, 0)),
                    Contains("conv_transpose3d: output_padding (0, 2, 0) must be smaller than either the stride "
                             "(2, 2, 2) or the dilation (1, 1, 1)"));
  CHECK_THROWS_WITH(F::conv_transpose3d(x, w, {}, 1, 3), Contains("gives an output of -2 x -2 x -2 positions"));
  CHECK_THROWS_WITH(F::conv_transpose3d(x, w, {}, 1, 0, 0, 3), Contains("groups = 3 must divide in_channels = 2"));
  CHECK_THROWS_WITH(F::conv_transpose3d(x, w, randn({3}, kF64)), Contains("bias must have shape [2]"));
  CHECK_THROWS_AS(F::conv_transpose3d(x, w.to(kFloat32)), TypeError);
  CHECK_THROWS_AS(F::conv_transpose3d(x, w, {}, Int3(1, 0, 1)), ValueError);
  CHECK_THROWS_AS(ConvTranspose3d(ConvTranspose3dOptions(2, 2, 3).padding_mode(kReflect)), ValueError);
  CHECK_THROWS_WITH(ConvTranspose3d(ConvTranspose3dOptions(2, 2, 3).padding_mode(kReflect)),
                    Contains("ConvTranspose3d: only zeros padding mode"));
  CHECK_THROWS_AS(ConvTranspose3d(ConvTranspose3dOptions(3, 2, 3).groups(2)), ValueError);
  CHECK_THROWS_AS(ConvTranspose3d(ConvTranspose3dOptions(2, 2, 3).stride(2).output_padding(2)), ValueError);
  CHECK_THROWS_AS(F::adaptive_max_pool3d(randn({2, 3, 4}, kF64), 2), ValueError);
  CHECK_THROWS_WITH(F::adaptive_max_pool3d(randn({2, 3, 4}, kF64), 2),
                    Contains("adaptive_max_pool3d: expected a 4-d [C, D, H, W] (unbatched) or 5-d [N, C, D, H, W] "
                             "input, got shape [2, 3, 4]"));
  CHECK_THROWS_WITH(F::adaptive_max_pool3d_with_indices(x, Int3(2, 0, 2)),
                    Contains("adaptive_max_pool3d: output_size must be positive, got (2, 0, 2)"));
  CHECK_THROWS_WITH(F::adaptive_max_pool3d(randn({1, 2, 3, 0, 3}, kF64), 2), Contains("empty spatial dim"));
  CHECK_THROWS_AS(F::adaptive_max_pool3d(ones({1, 2, 2, 2, 2}, TensorOptions(kInt64)), 1), TypeError);
  CHECK_THROWS_AS(AdaptiveMaxPool3d(Int3(1, 0, 1)), ValueError);
}
