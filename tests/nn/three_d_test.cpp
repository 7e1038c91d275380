// conv3d, Conv3d, the 3-d pooling functions and layers: PyTorch 1.13's values and gradients
// (generate.py's three_d_cases, selected by op name) on every test device at rtol 1e-10 / 1e-9 in
// float64; float64 gradchecks and double backward; small cases worked by hand; print strings,
// initialization bounds and the typed errors, which name the 3-d op.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
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

bool named_padding(const OracleCase& c) { return c.kwargs.at("padding").is_string(); }
PaddingMode padding_mode_of(const OracleCase& c) {
  return c.kwargs.at("padding").get<std::string>() == "same" ? kSame : kValid;
}

// 0..n-1 as float64 [1, 1, D, H, W], so that each position's value is its flat index.
Tensor ramp(int64_t D, int64_t H, int64_t W, Device dev) {
  return arange(0, D * H * W, 1, TensorOptions(kFloat64).device(dev)).reshape({1, 1, D, H, W});
}
}  // namespace

TEST_CASE("conv3d matches PyTorch 1.13: stride and padding and same and valid and dilation and groups",
          "[nn][oracle][conv][three_d_test]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "conv3d") continue;
    const Int3 stride = kwarg_int3(c, "stride", 1), dilation = kwarg_int3(c, "dilation", 1);
    const int64_t groups = c.kw<int64_t>("groups", 1);
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      const TL x = c.leaves(dev);
      const Tensor b = x.size() == 3 ? x[2] : Tensor();
      const Tensor y = named_padding(c)
                           ? F::conv3d(x[0], x[1], b, stride, padding_mode_of(c), dilation, groups)
                           : F::conv3d(x[0], x[1], b, stride, kwarg_int3(c, "padding", 0), dilation, groups);
      wick::test::check_oracle_case(c, y, x, dev, kOutRtol, kGradRtol, kAtol);
    }
    if (named_padding(c)) ++seen[c.kwargs.at("padding").get<std::string>()];
    if (groups > 1) ++seen["groups"];
    if (!(dilation == Int3(1))) ++seen["dilation"];
    if (c.inputs.size() == 2) ++seen["no bias"];
    if (c.inputs[0].dim() == 4) ++seen["unbatched"];
  }
  for (const char* kind : {"same", "valid", "groups", "dilation", "no bias", "unbatched"}) {
    INFO(kind);
    CHECK(seen[kind] >= 1);
  }
}

TEST_CASE("Conv3d matches PyTorch 1.13 with its parameters: options and each padding_mode and unbatched",
          "[nn][oracle][conv][three_d_test]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "conv3d_module") continue;
    auto options = Conv3dOptions(c.kwargs.at("in_channels").get<int64_t>(), c.kwargs.at("out_channels").get<int64_t>(),
                                 kwarg_int3(c, "kernel_size", 1))
                       .stride(kwarg_int3(c, "stride", 1))
                       .dilation(kwarg_int3(c, "dilation", 1))
                       .groups(c.kw<int64_t>("groups", 1))
                       .bias(c.kw<bool>("bias", true))
                       .padding_mode(pad_mode_from_string(c.kw<std::string>("padding_mode", "zeros")));
    if (named_padding(c))
      options.padding(padding_mode_of(c));
    else
      options.padding(kwarg_int3(c, "padding", 0));
    const auto names = c.kwargs.at("inputs").get<std::vector<std::string>>();
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      Conv3d m(options, kF64);
      m->to(dev);
      const TL leaves = c.leaves(dev);
      TL wrt{leaves[0]};
      {
        NoGradGuard no_grad;
        for (size_t j = 1; j < names.size(); ++j) {
          Tensor p = m->named_parameters()[names[j]];
          p.copy_(leaves[j]);
          wrt.push_back(p);
        }
      }
      REQUIRE(wrt.size() == leaves.size());
      wick::test::check_oracle_case(c, m(leaves[0]).reshape({-1}), wrt, dev, kOutRtol, kGradRtol, kAtol);
    }
    ++seen[c.kw<std::string>("padding_mode", "zeros")];
    if (c.inputs[0].dim() == 4) ++seen["unbatched"];
  }
  for (const char* kind : {"zeros", "reflect", "replicate", "circular", "unbatched"}) {
    INFO(kind);
    CHECK(seen[kind] >= 1);
  }
}

TEST_CASE("3-d pooling matches PyTorch 1.13: max with indices and avg and adaptive avg and their layers",
          "[nn][oracle][pool][three_d_test]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    const bool max = c.op == "max_pool3d", indices = c.op == "max_pool3d_indices", avg = c.op == "avg_pool3d";
    const bool adaptive = c.op == "adaptive_avg_pool3d";
    if (!max && !indices && !avg && !adaptive) continue;
    ++seen[c.op];
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      const TL x = c.leaves(dev);
      if (adaptive) {
        const Int3 size = kwarg_int3(c, "output_size", 1);
        wick::test::check_oracle_case(c, F::adaptive_avg_pool3d(x[0], size), x, dev, kOutRtol, kGradRtol, kAtol);
        CHECK_ALLCLOSE(AdaptiveAvgPool3d(size)(x[0]), c.out, kOutRtol, kAtol);
        continue;
      }
      const Int3 k = kwarg_int3(c, "kernel_size", 1), s = kwarg_int3(c, "stride", k), p = kwarg_int3(c, "padding", 0);
      const bool ceil_mode = c.kw<bool>("ceil_mode", false);
      if (avg) {
        const bool cip = c.kw<bool>("count_include_pad", true);
        const std::optional<int64_t> divisor = c.kwargs.contains("divisor_override")
                                                   ? std::optional<int64_t>(c.kw<int64_t>("divisor_override", 1))
                                                   : std::nullopt;
        if (divisor) ++seen["divisor_override"];
        wick::test::check_oracle_case(c, F::avg_pool3d(x[0], k, s, p, ceil_mode, cip, divisor), x, dev, kOutRtol,
                                      kGradRtol, kAtol);
        AvgPool3d m(
            AvgPool3dOptions(k).stride(s).padding(p).ceil_mode(ceil_mode).count_include_pad(cip).divisor_override(
                divisor));
        CHECK_ALLCLOSE(m(x[0]), c.out, kOutRtol, kAtol);
        continue;
      }
      const Int3 d = kwarg_int3(c, "dilation", 1);
      MaxPool3d m(MaxPool3dOptions(k).stride(s).padding(p).dilation(d).ceil_mode(ceil_mode));
      if (max) {
        wick::test::check_oracle_case(c, F::max_pool3d(x[0], k, s, p, d, ceil_mode), x, dev, kOutRtol, kGradRtol,
                                      kAtol);
        CHECK_ALLCLOSE(m(x[0]), c.out, kOutRtol, kAtol);
      } else {
        const auto [values, index] = F::max_pool3d_with_indices(x[0], k, s, p, d, ceil_mode);
        CHECK(index.dtype() == kInt64);
        CHECK(index.device() == dev);
        CHECK_ALLCLOSE(index, c.out, 0, 0);
        CHECK_ALLCLOSE(std::get<1>(m->forward_with_indices(x[0])), c.out, 0, 0);
        CHECK_ALLCLOSE(values, F::max_pool3d(x[0], k, s, p, d, ceil_mode), 0, 0);
      }
      if (ceil_mode) ++seen["ceil_mode"];
    }
  }
  for (const char* kind :
       {"max_pool3d", "max_pool3d_indices", "avg_pool3d", "adaptive_avg_pool3d", "ceil_mode", "divisor_override"}) {
    INFO(kind);
    CHECK(seen[kind] >= 1);
  }
}

TEST_CASE("conv3d passes float64 gradchecks and double backward", "[nn][gradcheck][conv][three_d_test]") {
  manual_seed(3);
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const TensorOptions o = TensorOptions(kFloat64).device(dev).requires_grad();
    const TL in{randn({2, 4, 4, 3, 4}, o), randn({4, 2, 2, 2, 3}, o), randn({4}, o)};
    const auto strided = [](const TL& x) {
      return TL{F::conv3d(x[0], x[1], x[2], Int3(2, 1, 1), Int3(1, 1, 1), Int3(1, 1, 2), 2)};
    };
    CHECK_GRADCHECK(strided, in);
    wick::test::check_double_backward(strided, in);
    const TL small{randn({1, 2, 3, 3, 3}, o), randn({2, 2, 2, 1, 2}, o)};
    const auto same = [](const TL& x) { return TL{F::conv3d(x[0], x[1], {}, 1, kSame, Int3(2, 1, 1))}; };
    CHECK_GRADCHECK(same, small);
    wick::test::check_double_backward(same, small);
  }
}

TEST_CASE("3-d pooling passes float64 gradchecks", "[nn][gradcheck][pool][three_d_test]") {
  manual_seed(4);
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const TensorOptions o = TensorOptions(kFloat64).device(dev);
    // Distinct values, so that a finite difference never moves a maximum.
    std::vector<double> distinct(200);
    for (size_t i = 0; i < distinct.size(); ++i) distinct[i] = static_cast<double>(i * 37 % 200) * 0.1;
    const Tensor x = tensor(distinct, {1, 2, 5, 4, 5}, kF64).to(dev).requires_grad_(true);
    CHECK_GRADCHECK([](const TL& v) { return TL{F::max_pool3d(v[0], Int3(3, 2, 2), Int3(2, 1, 2), 1, 1, true)}; }, {x});
    const Tensor y = randn({2, 5, 4, 5}, o).requires_grad_(true);
    const auto avg = [](const TL& v) { return TL{F::avg_pool3d(v[0], Int3(2, 3, 2), 2, Int3(1, 1, 0), true, false)}; };
    CHECK_GRADCHECK(avg, {y});
    wick::test::check_double_backward(avg, {y});
    CHECK_GRADCHECK([](const TL& v) { return TL{F::adaptive_avg_pool3d(v[0], Int3(3, 3, 2))}; }, {y});
  }
}

TEST_CASE("3-d ops by hand: a ones kernel sums its window and pooling a ramp", "[nn][conv][pool][three_d_test]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor ones_x = ones({1, 1, 3, 3, 3}, TensorOptions(kFloat64).device(dev));
    const Tensor ones_w = ones({1, 1, 2, 2, 2}, TensorOptions(kFloat64).device(dev));
    // Every 2x2x2 window of ones sums to 8; with padding 1 the count of input positions.
    CHECK_ALLCLOSE(F::conv3d(ones_x, ones_w), full({1, 1, 2, 2, 2}, 8.0, kF64), 0, 0);
    const Tensor padded = F::conv3d(ones_x, ones_w, {}, 2, 1);  // windows starting at -1 and 1
    CHECK(padded.sizes() == std::vector<int64_t>{1, 1, 2, 2, 2});
    // Per axis the window at -1 holds 1 input position and the one at 1 holds 2: their products.
    CHECK(values(padded) == std::vector<double>{1, 2, 2, 4, 2, 4, 4, 8});
    // Two output channels from groups = 2: channel o sums channel o's window times (o + 1).
    const Tensor two = cat({ones_x, ones_x * 2.0}, 1);
    const Tensor gw = cat({ones_w, ones_w * 2.0}, 0);
    const Tensor g = F::conv3d(two, gw, tensor({0.5, -1.0}, kF64).to(dev), 1, 0, 1, 2);
    CHECK_ALLCLOSE(g.select(1, 0), full({1, 2, 2, 2}, 8.5, kF64), 0, 0);
    CHECK_ALLCLOSE(g.select(1, 1), full({1, 2, 2, 2}, 31.0, kF64), 0, 0);
    // On a ramp (value = flat index d H W + h W + w) a 2x2x2 window's max is its last corner and
    // the index is that value; its mean is its first corner plus (9 + 3 + 1) / 2.
    const Tensor r = ramp(3, 3, 3, dev);
    const auto [mx, idx] = F::max_pool3d_with_indices(r, 2, 1);
    CHECK(values(mx) == std::vector<double>{13, 14, 16, 17, 22, 23, 25, 26});
    CHECK_ALLCLOSE(idx.to(kFloat64), mx, 0, 0);
    CHECK(values(F::avg_pool3d(r, 2, 1)) == std::vector<double>{6.5, 7.5, 9.5, 10.5, 15.5, 16.5, 18.5, 19.5});
    // Padding 1 and stride 2: the corner window holds one input position of its 8.
    CHECK(values(F::avg_pool3d(ones_x, 2, 2, 1, false, false))[0] == 1.0);
    CHECK(values(F::avg_pool3d(ones_x, 2, 2, 1, false, true))[0] == 1.0 / 8);
    CHECK(values(F::avg_pool3d(r, 2, 1, 0, false, true, 1))[0] == 52.0);  // divisor_override 1: the sum
    CHECK(values(F::adaptive_avg_pool3d(r, 1)) == std::vector<double>{13.0});
    // Unbatched [C, D, H, W] gives the batched result without the batch dim.
    CHECK(F::max_pool3d(r.squeeze(0), 2).sizes() == std::vector<int64_t>{1, 1, 1, 1});
    CHECK(F::conv3d(ones_x.squeeze(0), ones_w).sizes() == std::vector<int64_t>{1, 2, 2, 2});
  }
}

TEST_CASE("Conv3d and the 3-d pooling layers print and initialize as PyTorch 1.13", "[nn][conv][three_d_test]") {
  // print(nn.Conv3d(2, 4, 3)) and friends in PyTorch 1.13.
  CHECK(Conv3d(2, 4, 3)->to_string() == "Conv3d(2, 4, kernel_size=(3, 3, 3), stride=(1, 1, 1))");
  CHECK(Conv3d(Conv3dOptions(4, 2, Int3(3, 2, 2))
                   .stride(Int3(2, 1, 2))
                   .padding(1)
                   .dilation(Int3(1, 2, 1))
                   .groups(2)
                   .bias(false)
                   .padding_mode(kReflect))
            ->to_string() ==
        "Conv3d(4, 2, kernel_size=(3, 2, 2), stride=(2, 1, 2), padding=(1, 1, 1), dilation=(1, "
        "2, 1), groups=2, bias=False, padding_mode=reflect)");
  CHECK(Conv3d(Conv3dOptions(2, 2, 3).padding(kSame))->to_string() ==
        "Conv3d(2, 2, kernel_size=(3, 3, 3), stride=(1, 1, 1), padding=same)");
  CHECK(MaxPool3d(MaxPool3dOptions(2))->to_string() ==
        "MaxPool3d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)");
  CHECK(MaxPool3d(MaxPool3dOptions(Int3(3, 2, 3)).stride(Int3(2, 2, 1)).padding(1).ceil_mode(true))->to_string() ==
        "MaxPool3d(kernel_size=(3, 2, 3), stride=(2, 2, 1), padding=1, dilation=1, ceil_mode=True)");
  CHECK(AvgPool3d(AvgPool3dOptions(2))->to_string() == "AvgPool3d(kernel_size=2, stride=2, padding=0)");
  CHECK(AdaptiveAvgPool3d(Int3(2, 3, 4))->to_string() == "AdaptiveAvgPool3d(output_size=(2, 3, 4))");
  CHECK(AdaptiveAvgPool3d(Int3(3))->to_string() == "AdaptiveAvgPool3d(output_size=3)");
  // kaiming_uniform(a = sqrt(5)): |w| and |b| at most 1 / sqrt(fan_in), fan_in = 2 / 2 * 2 * 3 * 3.
  manual_seed(0);
  Conv3d m(Conv3dOptions(2, 4, Int3(2, 3, 3)).groups(2), kF64);
  CHECK(m->weight().sizes() == std::vector<int64_t>{4, 1, 2, 3, 3});
  CHECK(m->named_parameters().keys() == std::vector<std::string>{"weight", "bias"});
  const double bound = 1 / std::sqrt(18.0);
  CHECK(m->weight().abs().max().item<double>() <= bound);
  CHECK(m->weight().abs().max().item<double>() > 0.8 * bound);
  CHECK(m->bias().abs().max().item<double>() <= bound);
}

TEST_CASE("3-d ops refuse bad arguments with typed errors naming the 3-d op", "[nn][errors][three_d_test]") {
  const Tensor x = randn({1, 2, 3, 4, 4}, kF64), w = randn({2, 2, 2, 2, 2}, kF64);
  CHECK_THROWS_AS(F::conv3d(randn({2, 4, 4}, kF64), w), ValueError);
  CHECK_THROWS_WITH(F::conv3d(randn({2, 4, 4}, kF64), w), Contains("conv3d") && Contains("[C, D, H, W]"));
  CHECK_THROWS_WITH(F::conv3d(x, randn({2, 2, 2, 2}, kF64)), Contains("conv3d: weight must be 5-d"));
  CHECK_THROWS_AS(F::conv3d(x, randn({2, 1, 2, 2, 2}, kF64)), ValueError);
  CHECK_THROWS_WITH(F::conv3d(x, randn({3, 1, 2, 2, 2}, kF64), {}, 1, 0, 1, 2), Contains("groups = 2 must divide"));
  CHECK_THROWS_AS(F::conv3d(x, w.to(kFloat32)), TypeError);
  CHECK_THROWS_WITH(F::conv3d(x, randn({2, 2, 5, 2, 2}, kF64)), Contains("padded input depth 3"));
  CHECK_THROWS_AS(F::conv3d(x, w, {}, 2, kSame), NotImplementedError);
  CHECK_THROWS_WITH(F::max_pool3d(x, 2, 1, Int3(0, 2, 0)), Contains("max_pool3d: padding (0, 2, 0)"));
  CHECK_THROWS_WITH(F::avg_pool3d(x, Int3(4, 1, 1)), Contains("avg_pool3d: input [1, 2, 3, 4, 4] is too small"));
  CHECK_THROWS_AS(F::avg_pool3d(x, 2, 2, 0, false, true, 0), ValueError);
  CHECK_THROWS_WITH(F::adaptive_avg_pool3d(x, Int3(2, 0, 2)), Contains("adaptive_avg_pool3d: output_size"));
  CHECK_THROWS_AS(Conv3d(Conv3dOptions(2, 2, 3).padding_mode(kConstant)), ValueError);
  CHECK_THROWS_AS(Conv3d(Conv3dOptions(3, 2, 3).groups(2)), ValueError);
  CHECK_THROWS_AS(Conv3d(Conv3dOptions(2, 2, 3).stride(2).padding(kSame)), NotImplementedError);
  CHECK_THROWS_AS(MaxPool3d(MaxPool3dOptions(2).stride(Int3(1, 0, 1))), ValueError);
  CHECK_THROWS_AS(AvgPool3d(AvgPool3dOptions(2).divisor_override(0)), ValueError);
  CHECK_THROWS_AS(AdaptiveAvgPool3d(Int3(0, 1, 1)), ValueError);
}
