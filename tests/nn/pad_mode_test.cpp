// F::pad in modes reflect, replicate and circular, and Conv2d's padding_mode: the PyTorch oracle's
// cases (generate.py's pad_mode_cases, selected by op name) forward at rtol 1e-12 and every
// gradient at rtol 1e-10 in float64, on every test device; small examples and their gradients
// worked by hand; PyTorch 1.13's rules on ranks, pad sizes and empty dims as typed errors; Conv2d's
// print and state_dict. The gradchecks are in functional_gradcheck_test.cpp.
#include <catch2/catch.hpp>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/oracle.h"
#include "support/oracle_checks.h"
#include "support/small_tensors.h"
#include "wick/autograd/grad.h"
#include "wick/autograd/grad_mode.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using Catch::Matchers::Contains;
using wick::test::OracleCase;

namespace {
constexpr double kOutRtol = 1e-12, kGradRtol = 1e-10, kAtol = 1e-13;
const TensorOptions kF64(kFloat64);

// Compares `out` and the gradients of `wrt[j]` (for the case's differentiable inputs) with the case's.
void check_against(const OracleCase& c, const Tensor& out, const std::vector<Tensor>& wrt, Device dev) {
  REQUIRE(out.sizes() == c.out.sizes());
  wick::test::check_oracle_case(c, out, wrt, dev, kOutRtol, kGradRtol, kAtol);
}

Int2 int2_kw(const OracleCase& c, const char* key) {
  const auto v = c.kwargs.at(key).get<std::vector<int64_t>>();
  REQUIRE(v.size() == 2u);
  return Int2(v[0], v[1]);
}

// Conv2d's options from the case's kwargs (nn.Conv2d's arguments).
Conv2dOptions conv_options(const OracleCase& c) {
  Conv2dOptions o(c.kwargs.at("in_channels").get<int64_t>(), c.kwargs.at("out_channels").get<int64_t>(),
                  int2_kw(c, "kernel_size"));
  o.stride(int2_kw(c, "stride"))
      .dilation(int2_kw(c, "dilation"))
      .groups(c.kw<int64_t>("groups", 1))
      .bias(c.kw<bool>("bias", true))
      .padding_mode(pad_mode_from_string(c.kwargs.at("padding_mode").get<std::string>()));
  const auto& padding = c.kwargs.at("padding");
  if (padding.is_string()) {
    REQUIRE((padding == "same" || padding == "valid"));
    o.padding(padding == "same" ? kSame : kValid);
  } else {
    o.padding(int2_kw(c, "padding"));
  }
  return o;
}

using wick::test::f64;
}  // namespace

TEST_CASE("pad in modes reflect, replicate and circular matches PyTorch 1.13, 2-d to 5-d, cropping too",
          "[nn][oracle][pad]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "pad_mode") continue;
    const auto pads = c.kwargs.at("pad").get<std::vector<int64_t>>();
    const std::string mode = c.kwargs.at("mode").get<std::string>();
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      const auto x = c.leaves(dev);
      check_against(c, F::pad(x[0], pads, pad_mode_from_string(mode)), x, dev);
    }
    ++seen[mode];
    ++seen[std::to_string(c.inputs[0].dim()) + "-d"];
    for (int64_t p : pads)
      if (p < 0) {
        ++seen[mode + " cropping"];
        break;
      }
  }
  for (const char* kind : {"reflect", "replicate", "circular", "reflect cropping", "replicate cropping",
                           "circular cropping", "2-d", "3-d", "4-d", "5-d"}) {
    INFO(kind);
    CHECK(seen[kind] >= 1);
  }
  CHECK(seen["reflect"] + seen["replicate"] + seen["circular"] >= 19);
}

TEST_CASE("Conv2d with padding_mode reflect, replicate or circular matches PyTorch 1.13", "[nn][oracle][pad]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "conv2d_padding_mode") continue;
    const Conv2dOptions options = conv_options(c);
    const auto names = c.kwargs.at("inputs").get<std::vector<std::string>>();
    REQUIRE(names.size() == c.inputs.size());
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      Conv2d m(options, kF64);
      m->to(dev);
      const auto leaves = c.leaves(dev);
      const OrderedDict<Tensor> params = m->named_parameters();
      REQUIRE(params.keys() == std::vector<std::string>(names.begin() + 1, names.end()));
      std::vector<Tensor> wrt = {leaves[0]};
      {
        NoGradGuard no_grad;
        for (size_t j = 1; j < names.size(); ++j) {
          Tensor p = params[names[j]];
          p.copy_(leaves[j]);
          wrt.push_back(p);
        }
      }
      check_against(c, m(leaves[0]).reshape({-1}), wrt, dev);
    }
    ++seen[pad_mode_name(options.padding_mode())];
    if (!(options.stride() == Int2(1)) && !(options.dilation() == Int2(1))) ++seen["stride and dilation"];
    if (std::holds_alternative<PaddingMode>(options.padding())) ++seen["named padding"];
    if (c.inputs[0].dim() == 3) ++seen["unbatched"];
  }
  for (const char* kind : {"reflect", "replicate", "circular", "stride and dilation", "named padding", "unbatched"}) {
    INFO(kind);
    CHECK(seen[kind] >= 1);
  }
}

TEST_CASE("pad modes by hand: [1, 2, 3, 4] padded (2, 1), its gradient, cropping, and a 2-d reflection", "[nn][pad]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    // Each output position reads one input position; the gradient of a sum counts the reads.
    struct Expect {
      PadMode mode;
      std::vector<double> out, grad;
    };
    for (const Expect& e : {Expect{kReflect, {3, 2, 1, 2, 3, 4, 3}, {1, 2, 3, 1}},
                            Expect{kReplicate, {1, 1, 1, 2, 3, 4, 4}, {3, 1, 1, 2}},
                            Expect{kCircular, {3, 4, 1, 2, 3, 4, 1}, {2, 1, 2, 2}}}) {
      INFO(pad_mode_name(e.mode));
      const Tensor x = f64({1, 2, 3, 4}, {1, 1, 4}, dev).requires_grad_(true);
      const Tensor y = F::pad(x, {2, 1}, e.mode);
      CHECK(y.sizes() == IntArrayRef({1, 1, 7}));
      CHECK(y.device() == dev);
      CHECK_VALUES(y, e.out);
      sum(y).backward();
      CHECK_VALUES(x.grad(), e.grad);
    }
    const Tensor x = f64({1, 2, 3, 4}, {1, 1, 4}, dev);
    // Reflect and replicate pad, then crop: (-5, 3) pads [1, 2, 3, 4, 3, 2, 1] and drops 5.
    CHECK_VALUES(F::pad(x, {-5, 3}, kReflect), {2, 1});
    CHECK_VALUES(F::pad(x, {-1, 2}, kReplicate), {2, 3, 4, 4, 4});
    // Circular crops first, then wraps around what is left: [2, 3, 4] then 2 more.
    CHECK_VALUES(F::pad(x, {-1, 2}, kCircular), {2, 3, 4, 2, 3});
    CHECK_VALUES(F::pad(x, {2, -1}, kCircular), {2, 3, 1, 2, 3});
    // [[1, 2], [3, 4]] mirrored by one row and one column on each side.
    CHECK_VALUES(F::pad(f64({1, 2, 3, 4}, {1, 2, 2}, dev), {1, 1, 1, 1}, kReflect),
                 {4, 3, 4, 3, 2, 1, 2, 1, 4, 3, 4, 3, 2, 1, 2, 1});
    // Zero pads give a copy, as PyTorch: writing to it leaves the input alone.
    Tensor same = F::pad(x, {0, 0}, kReplicate);
    same.fill_(9.0);
    CHECK_VALUES(x, {1, 2, 3, 4});
    // kConstant is the constant overload; an explicit value 0 is allowed in every mode.
    CHECK_VALUES(F::pad(x, {1, 0}, kConstant, 7.0), {7, 1, 2, 3, 4});
    CHECK_VALUES(F::pad(x, {1, 0}, kReflect, 0.0), {2, 1, 2, 3, 4});
  }
}

TEST_CASE("pad modes with nothing left: an empty output stays in the graph with a zero gradient", "[nn][pad]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor x = f64({1, 2, 3, 4}, {1, 1, 4}, dev).requires_grad_(true);
    // PyTorch 1.13: F.pad(x, (-2, -2), mode="circular") has shape [1, 1, 0] and a grad_fn.
    const Tensor y = F::pad(x, {-2, -2}, kCircular);
    CHECK(y.sizes() == IntArrayRef({1, 1, 0}));
    REQUIRE(y.requires_grad());
    sum(y).backward();
    CHECK_VALUES(x.grad(), {0, 0, 0, 0});
    // Reflect and replicate over 2 dims take one output size of 0 when another is not.
    const Tensor m = f64({1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 2, 4}, dev);
    CHECK(F::pad(m, {-5, 1, 0, 0}, kReplicate).sizes() == IntArrayRef({1, 1, 2, 0}));
    CHECK(F::pad(m, {0, 0, -1, -1}, kReflect).sizes() == IntArrayRef({1, 1, 0, 4}));
    // An empty batch, and (reflect over 1 or 2 dims only) an empty first dim of an unbatched input.
    CHECK(F::pad(zeros({0, 2, 3}, TensorOptions(kF64).device(dev)), {2, 1}, kReflect).sizes() ==
          IntArrayRef({0, 2, 6}));
    CHECK(F::pad(zeros({0, 3}, TensorOptions(kF64).device(dev)), {1, 1}, kReflect).sizes() == IntArrayRef({0, 5}));
    CHECK(F::pad(zeros({2, 0, 3, 3}, TensorOptions(kF64).device(dev)), {1, 1, 1, 1}, kCircular).sizes() ==
          IntArrayRef({2, 0, 5, 5}));
    // Every dtype: an index_select.
    CHECK_VALUES(F::pad(tensor(std::vector<int64_t>{1, 2, 3}, {1, 3}).to(dev), {1, 1}, kReflect), {2, 1, 2, 3, 2});
  }
}

TEST_CASE("pad modes refuse what PyTorch 1.13 refuses, with typed errors that name the mode, pads and shape",
          "[nn][pad][errors]") {
  const Tensor x = zeros({1, 1, 4}, kF64);
  // Reflect: each pad below the size.
  CHECK_THROWS_AS(F::pad(x, {4, 0}, kReflect), ValueError);
  CHECK_THROWS_WITH(F::pad(x, {4, 0}, kReflect), Contains("mode reflect") && Contains("below the size") &&
                                                     Contains("(4, 0)") && Contains("[1, 1, 4]"));
  // Circular: at most once around, and after cropping around what is left.
  CHECK_THROWS_AS(F::pad(x, {5, 0}, kCircular), ValueError);
  CHECK_THROWS_WITH(F::pad(x, {5, 0}, kCircular), Contains("mode circular") && Contains("at most once"));
  CHECK_THROWS_AS(F::pad(x, {-3, 2}, kCircular), ValueError);
  CHECK_THROWS_WITH(F::pad(x, {-3, 2}, kCircular), Contains("crops first") && Contains("leaves 1 of the 4 values"));
  CHECK_NOTHROW(F::pad(x, {4, 4}, kCircular));
  // Output sizes: negative in any mode, none at all for reflect and replicate.
  CHECK_THROWS_AS(F::pad(x, {-3, -2}, kReplicate), ValueError);
  CHECK_THROWS_WITH(F::pad(x, {-3, -2}, kReplicate), Contains("negative size -1"));
  CHECK_THROWS_AS(F::pad(x, {-2, -2}, kReflect), ValueError);
  CHECK_THROWS_WITH(F::pad(x, {-2, -2}, kReflect), Contains("mode reflect") && Contains("no output value"));
  CHECK_THROWS_AS(F::pad(x, {-3, -2}, kCircular), ValueError);
  // Ranks: 1 to 3 trailing dims of an input with 1 or 2 more; circular batched only.
  CHECK_THROWS_AS(F::pad(zeros({4}, kF64), {1, 1}, kReflect), NotImplementedError);
  CHECK_THROWS_WITH(F::pad(zeros({4}, kF64), {1, 1}, kReflect),
                    Contains("mode reflect") && Contains("1, 2 or 3 dims") && Contains("1-d input [4]"));
  CHECK_THROWS_AS(F::pad(zeros({3, 4}, kF64), {1, 1}, kCircular), NotImplementedError);
  CHECK_THROWS_WITH(F::pad(zeros({3, 4}, kF64), {1, 1}, kCircular), Contains("unsqueeze(0)"));
  CHECK_THROWS_AS(F::pad(zeros({1, 1, 3, 4}, kF64), {1, 1}, kReplicate), NotImplementedError);
  CHECK_THROWS_AS(F::pad(zeros({2, 2, 2, 2, 2, 2}, kF64), {1, 1, 1, 1, 1, 1}, kReflect), NotImplementedError);
  CHECK_THROWS_AS(F::pad(x, {}, kReflect), NotImplementedError);
  CHECK_THROWS_AS(F::pad(x, {1, 1, 1, 1, 1, 1, 1, 1}, kReflect), ValueError);
  CHECK_THROWS_AS(F::pad(x, {1}, kReflect), ValueError);
  CHECK_THROWS_WITH(F::pad(x, {1}, kReflect), Contains("pairs"));
  // Empty dims: only the batch dim (reflect over 1 or 2 dims: also an unbatched input's first).
  CHECK_THROWS_AS(F::pad(zeros({1, 0, 4}, kF64), {1, 1}, kReplicate), ValueError);
  CHECK_THROWS_WITH(F::pad(zeros({1, 0, 4}, kF64), {1, 1}, kReplicate),
                    Contains("mode replicate") && Contains("only as the first (batch) dim") &&
                        Contains("dim 1 of input [1, 0, 4] is empty"));
  CHECK_THROWS_AS(F::pad(zeros({0, 4}, kF64), {1, 1}, kReplicate), ValueError);
  CHECK_THROWS_AS(F::pad(zeros({0, 3, 3, 3}, kF64), {1, 1, 1, 1, 1, 1}, kReflect), ValueError);
  CHECK_THROWS_AS(F::pad(zeros({1, 1, 0}, kF64), {0, 0}, kReflect), ValueError);
  // value is for constant only; kZeros is Conv2d's.
  CHECK_THROWS_AS(F::pad(x, {1, 1}, kReplicate, 1.5), ValueError);
  CHECK_THROWS_WITH(F::pad(x, {1, 1}, kReplicate, 1.5), Contains("mode replicate takes no value"));
  CHECK_THROWS_AS(F::pad(x, {1, 1}, kZeros), ValueError);
  CHECK_THROWS_WITH(F::pad(x, {1, 1}, kZeros), Contains("kConstant"));
  // Sizes past int64.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  CHECK_THROWS_AS(F::pad(x, {kMax, 1}, kReplicate), ValueError);
  CHECK_THROWS_WITH(F::pad(x, {kMax, 1}, kReplicate), Contains("overflows int64"));
  CHECK_THROWS_AS(F::pad(Tensor(), {1, 1}, kReflect), ValueError);
  // Names.
  CHECK(pad_mode_from_string("circular") == kCircular);
  CHECK(std::string(pad_mode_name(kReplicate)) == "replicate");
  CHECK_THROWS_AS(pad_mode_from_string("mirror"), ValueError);
  CHECK_THROWS_WITH(pad_mode_from_string("mirror"), Contains("'mirror'") && Contains("'reflect'"));
}

TEST_CASE("Conv2d's padding_mode: options, print as PyTorch 1.13, state_dict unchanged, typed errors", "[nn][pad]") {
  CHECK(Conv2dOptions(2, 3, 3).padding_mode() == kZeros);
  Conv2d reflect(Conv2dOptions(2, 3, 3).padding(1).bias(false).padding_mode(kReflect));
  CHECK(reflect->padding_mode() == kReflect);
  CHECK(reflect->options().padding_mode() == kReflect);
  // str(nn.Conv2d(2, 3, 3, padding=1, bias=False, padding_mode="reflect")), and so on.
  CHECK(reflect->to_string() ==
        "Conv2d(2, 3, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), bias=False, padding_mode=reflect)");
  CHECK(Conv2d(Conv2dOptions(2, 3, 3).padding(kSame).dilation(2).padding_mode(kCircular))->to_string() ==
        "Conv2d(2, 3, kernel_size=(3, 3), stride=(1, 1), padding=same, dilation=(2, 2), padding_mode=circular)");
  Conv2d replicate(Conv2dOptions(4, 4, {3, 2}).stride(2).padding({1, 0}).groups(2).padding_mode(kReplicate));
  CHECK(replicate->to_string() ==
        "Conv2d(4, 4, kernel_size=(3, 2), stride=(2, 2), padding=(1, 0), groups=2, padding_mode=replicate)");
  CHECK(Conv2d(Conv2dOptions(2, 3, 3).padding_mode(kZeros))->to_string() ==
        "Conv2d(2, 3, kernel_size=(3, 3), stride=(1, 1))");
  CHECK(replicate->state_dict().keys() == std::vector<std::string>{"weight", "bias"});
  CHECK(replicate->named_padding() == std::nullopt);

  // The forward is F::pad then a convolution without padding.
  const Tensor x = randn({1, 2, 5, 6});
  CHECK_ALLCLOSE(reflect(x), F::conv2d(F::pad(x, {1, 1, 1, 1}, kReflect), reflect->weight()), 1e-6, 1e-6);

  CHECK_THROWS_AS(Conv2d(Conv2dOptions(2, 3, 3).padding_mode(kConstant)), ValueError);
  CHECK_THROWS_WITH(Conv2d(Conv2dOptions(2, 3, 3).padding_mode(kConstant)),
                    Contains("padding_mode must be one of") && Contains("constant"));
  // As PyTorch 1.13: circular needs a batched input, reflect a padding below the input's size.
  Conv2d circular(Conv2dOptions(2, 3, 3).padding(1).padding_mode(kCircular));
  CHECK(circular(randn({1, 2, 4, 4})).sizes() == IntArrayRef({1, 3, 4, 4}));
  CHECK_THROWS_AS(circular(randn({2, 4, 4})), NotImplementedError);
  CHECK_THROWS_WITH(circular(randn({2, 4, 4})), Contains("mode circular") && Contains("[2, 4, 4]"));
  Conv2d wide(Conv2dOptions(2, 3, 3).padding(3).padding_mode(kReflect));
  CHECK_THROWS_AS(wide(randn({1, 2, 3, 3})), ValueError);
  CHECK_THROWS_WITH(wide(randn({1, 2, 3, 3})), Contains("mode reflect") && Contains("(3, 3)"));
  CHECK_THROWS_AS(Conv2d(Conv2dOptions(2, 3, 3).stride(2).padding(kSame).padding_mode(kReflect)), NotImplementedError);
}
