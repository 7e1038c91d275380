// F::conv1d, the 1-d pooling functions and their layers against the PyTorch oracle
// (tests/data/ops.safetensors, generate.py's one_d_cases, selected by op name) on every test
// device, in float64: outputs at rtol 1e-12 and every gradient at rtol 1e-10 (atol 1e-13 for
// values that cancel to ~1e-16), max_pool1d's indices exactly. A layer case's inputs are its data
// and then PyTorch's parameters, named in kwargs["inputs"]; the wick layer must have parameters of
// exactly those names (so a PyTorch state_dict loads name for name).
#include <catch2/catch.hpp>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <tuple>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/oracle.h"
#include "support/oracle_checks.h"
#include "wick/autograd/grad.h"
#include "wick/autograd/grad_mode.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using wick::test::OracleCase;

namespace {
constexpr double kOutRtol = 1e-12, kGradRtol = 1e-10, kAtol = 1e-13;
const TensorOptions kF64(kFloat64);

// Compares `out` and the gradients of `wrt[j]` (for each differentiable input j) with the case's.
void check_against(const OracleCase& c, const Tensor& out, const std::vector<Tensor>& wrt, Device dev) {
  CHECK(out.dtype() == kFloat64);
  bool any_differentiable = false;
  for (size_t j = 0; j < wrt.size(); ++j) any_differentiable = any_differentiable || c.differentiable[j];
  REQUIRE(any_differentiable);
  wick::test::check_oracle_case(c, out, wrt, dev, kOutRtol, kGradRtol, kAtol);
}

// A functional case's stride: absent is PyTorch's None, wick's 0 (stride = kernel_size).
int64_t stride_kw(const OracleCase& c) { return c.kw<int64_t>("stride", 0); }

// F::conv1d with the case's arguments; padding is a number or "same" / "valid".
Tensor conv1d_of(const OracleCase& c, const std::vector<Tensor>& x) {
  const Tensor bias = x.size() > 2 ? x[2] : Tensor();
  REQUIRE(c.kwargs.at("bias").get<bool>() == bias.defined());
  const int64_t stride = c.kwargs.at("stride").get<int64_t>(), dilation = c.kwargs.at("dilation").get<int64_t>();
  const int64_t groups = c.kwargs.at("groups").get<int64_t>();
  const auto& padding = c.kwargs.at("padding");
  if (padding.is_string()) {
    const std::string mode = padding.get<std::string>();
    REQUIRE((mode == "same" || mode == "valid"));
    return F::conv1d(x[0], x[1], bias, stride, mode == "same" ? kSame : kValid, dilation, groups);
  }
  return F::conv1d(x[0], x[1], bias, stride, padding.get<int64_t>(), dilation, groups);
}

// Conv1dOptions from a conv1d_module case.
Conv1dOptions conv1d_options(const OracleCase& c) {
  auto o = Conv1dOptions(c.kwargs.at("in_channels").get<int64_t>(), c.kwargs.at("out_channels").get<int64_t>(),
                         c.kwargs.at("kernel_size").get<int64_t>())
               .stride(c.kw<int64_t>("stride", 1))
               .dilation(c.kw<int64_t>("dilation", 1))
               .groups(c.kw<int64_t>("groups", 1))
               .bias(c.kw<bool>("bias", true));
  const auto& padding = c.kwargs.at("padding");
  if (padding.is_string()) {
    REQUIRE((padding == "same" || padding == "valid"));
    o.padding(padding == "same" ? kSame : kValid);
  } else {
    o.padding(padding.get<int64_t>());
  }
  return o;
}

// A layer case, checked at this file's tolerances (wick::test::check_oracle_layer).
void check_layer(const OracleCase& c, Module& m, const std::function<Tensor(const Tensor&)>& forward, Device dev) {
  wick::test::check_oracle_layer(c, m, forward, dev, kOutRtol, kGradRtol, kAtol);
}

bool default_file() { return std::getenv("WICK_ORACLE_FILE") == nullptr; }
}  // namespace

TEST_CASE("conv1d matches PyTorch 1.13: stride, padding, same and valid, dilation, groups, no bias, unbatched",
          "[nn][oracle][conv]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "conv1d") continue;
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      const auto x = c.leaves(dev);
      check_against(c, conv1d_of(c, x), x, dev);
    }
    ++seen["all"];
    if (c.inputs[0].dim() == 2) ++seen["unbatched"];
    if (c.kwargs.at("padding").is_string()) ++seen[c.kwargs.at("padding").get<std::string>()];
    if (c.kwargs.at("groups").get<int64_t>() > 1) ++seen["groups"];
    if (c.kwargs.at("dilation").get<int64_t>() > 1) ++seen["dilation"];
    if (c.kwargs.at("stride").get<int64_t>() > 1) ++seen["stride"];
    if (c.inputs.size() == 2) ++seen["no bias"];
  }
  if (!default_file()) return;
  CHECK(seen["all"] >= 9);
  for (const char* kind : {"unbatched", "same", "valid", "groups", "dilation", "stride", "no bias"}) {
    INFO(kind);
    CHECK(seen[kind] >= 1);
  }
}

TEST_CASE("Conv1d matches PyTorch 1.13 with PyTorch's parameter names: options, padding same, no bias, unbatched",
          "[nn][oracle][conv]") {
  int seen = 0;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "conv1d_module") continue;
    for (Device dev : wick::test::test_devices()) {
      Conv1d m(conv1d_options(c), kF64);
      check_layer(
          c, *m, [&](const Tensor& x) { return m(x); }, dev);
    }
    ++seen;
  }
  if (default_file()) CHECK(seen >= 4);
}

TEST_CASE("max_pool1d matches PyTorch 1.13: default stride, ceil_mode, padding, dilation, ties, unbatched, indices",
          "[nn][oracle][pooling]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    const bool indices = c.op == "max_pool1d_indices";
    if (c.op != "max_pool1d" && !indices) continue;
    const int64_t k = c.kwargs.at("kernel_size").get<int64_t>(), s = stride_kw(c);
    const int64_t p = c.kw<int64_t>("padding", 0), d = c.kw<int64_t>("dilation", 1);
    const bool ceil_mode = c.kw<bool>("ceil_mode", false);
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      const auto x = c.leaves(dev);
      const auto [values, where] = F::max_pool1d_with_indices(x[0], k, s, p, d, ceil_mode);
      CHECK(where.dtype() == kInt64);
      CHECK(where.device() == dev);
      CHECK(where.sizes() == values.sizes());
      if (indices) {
        CHECK(c.out.dtype() == kInt64);
        CHECK_ALLCLOSE(where, c.out, 0, 0);
      } else {
        check_against(c, F::max_pool1d(x[0], k, s, p, d, ceil_mode), x, dev);
        CHECK_ALLCLOSE(values, c.out, 0, 0);  // the same maxima as max_pool1d
      }
    }
    ++seen[c.op];
    if (c.inputs[0].dim() == 2) ++seen["unbatched"];
    if (ceil_mode) ++seen["ceil_mode"];
  }
  if (!default_file()) return;
  CHECK(seen["max_pool1d"] >= 7);
  CHECK(seen["max_pool1d_indices"] >= 3);
  CHECK(seen["unbatched"] >= 2);
  CHECK(seen["ceil_mode"] >= 3);
}

TEST_CASE("avg_pool1d matches PyTorch 1.13: count_include_pad both ways, padding, ceil_mode, unbatched",
          "[nn][oracle][pooling]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "avg_pool1d") continue;
    const bool cip = c.kw<bool>("count_include_pad", true);
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      const auto x = c.leaves(dev);
      const Tensor y = F::avg_pool1d(x[0], c.kwargs.at("kernel_size").get<int64_t>(), stride_kw(c),
                                     c.kw<int64_t>("padding", 0), c.kw<bool>("ceil_mode", false), cip);
      check_against(c, y, x, dev);
    }
    ++seen["all"];
    if (c.kw<int64_t>("padding", 0) > 0) ++seen[cip ? "padding counted" : "padding not counted"];
    if (c.inputs[0].dim() == 2) ++seen["unbatched"];
  }
  if (!default_file()) return;
  CHECK(seen["all"] >= 7);
  for (const char* kind : {"padding counted", "padding not counted", "unbatched"}) {
    INFO(kind);
    CHECK(seen[kind] >= 1);
  }
}

TEST_CASE("adaptive_avg_pool1d matches PyTorch 1.13 to shorter, dividing, equal and longer outputs",
          "[nn][oracle][pooling]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "adaptive_avg_pool1d") continue;
    const int64_t size = c.kwargs.at("output_size").get<int64_t>(), L = c.inputs[0].size(-1);
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      const auto x = c.leaves(dev);
      check_against(c, F::adaptive_avg_pool1d(x[0], size), x, dev);
    }
    ++seen[size < L ? (L % size == 0 ? "dividing" : "shorter") : size == L ? "equal" : "longer"];
  }
  if (!default_file()) return;
  for (const char* kind : {"dividing", "shorter", "equal", "longer"}) {
    INFO(kind);
    CHECK(seen[kind] >= 1);
  }
}

TEST_CASE("MaxPool1d, AvgPool1d and AdaptiveAvgPool1d match PyTorch 1.13's layers", "[nn][oracle][pooling]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    for (Device dev : wick::test::test_devices()) {
      if (c.op == "max_pool1d_module") {
        MaxPool1d m(MaxPool1dOptions(c.kwargs.at("kernel_size").get<int64_t>())
                        .stride(c.kwargs.at("stride").get<int64_t>())
                        .padding(c.kw<int64_t>("padding", 0))
                        .dilation(c.kw<int64_t>("dilation", 1))
                        .ceil_mode(c.kw<bool>("ceil_mode", false)));
        check_layer(
            c, *m, [&](const Tensor& x) { return m(x); }, dev);
      } else if (c.op == "avg_pool1d_module") {
        AvgPool1d m(AvgPool1dOptions(c.kwargs.at("kernel_size").get<int64_t>())
                        .stride(c.kwargs.at("stride").get<int64_t>())
                        .padding(c.kw<int64_t>("padding", 0))
                        .ceil_mode(c.kw<bool>("ceil_mode", false))
                        .count_include_pad(c.kw<bool>("count_include_pad", true)));
        check_layer(
            c, *m, [&](const Tensor& x) { return m(x); }, dev);
      } else if (c.op == "adaptive_avg_pool1d_module") {
        AdaptiveAvgPool1d m(c.kwargs.at("output_size").get<int64_t>());
        check_layer(
            c, *m, [&](const Tensor& x) { return m(x); }, dev);
      } else {
        break;
      }
    }
    ++seen[c.op];
  }
  if (!default_file()) return;
  for (const char* op : {"max_pool1d_module", "avg_pool1d_module", "adaptive_avg_pool1d_module"}) {
    INFO(op);
    CHECK(seen[op] >= 1);
  }
}
