// BatchNorm3d, InstanceNorm3d, MaxPool1d's indices, avg_pool divisor_override and Conv1d's
// padding_mode: the PyTorch oracle's cases (generate.py's norm3d_cases, selected by op name) on
// every test device, outputs at rtol 1e-10 and gradients at rtol 1e-9 in float64; running
// statistics, divisors and padded convolutions worked by hand; float64 gradchecks; print strings,
// state_dict keys and the typed errors against PyTorch 1.13's.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <map>
#include <optional>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/gradcheck.h"
#include "support/oracle.h"
#include "support/oracle_checks.h"
#include "support/small_tensors.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/generator.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using Catch::Matchers::Contains;
using wick::test::OracleCase;
using TL = std::vector<Tensor>;

namespace {
constexpr double kOutRtol = 1e-10, kGradRtol = 1e-9, kAtol = 1e-13;
const TensorOptions kF64(kFloat64);

using wick::test::f64;
Tensor flat(const std::vector<Tensor>& parts) {
  std::vector<Tensor> flat_parts;
  for (const Tensor& t : parts) flat_parts.push_back(t.reshape({-1}));
  return cat(flat_parts, 0);
}

// A layer case (generate.py's module_case): the data inputs (the input and, when the layer tracks
// running statistics, their initial values), then PyTorch's parameters by name. The parameters
// and buffers take the case's values, `forward` runs the layer, and its flattened result is
// compared with the case's output and gradients.
void check_layer_case(const OracleCase& c, Module& m, size_t n_data,
                      const std::function<Tensor(const Tensor&)>& forward, Device dev) {
  INFO(c.label() << " on " << dev.str());
  const auto names = c.kwargs.at("inputs").get<std::vector<std::string>>();
  REQUIRE(names.size() == c.inputs.size());
  const std::vector<Tensor> leaves = c.leaves(dev);
  m.to(dev);
  m.train(c.kw<bool>("training", true));
  const OrderedDict<Tensor> params = m.named_parameters();
  REQUIRE(params.keys() == std::vector<std::string>(names.begin() + static_cast<std::ptrdiff_t>(n_data), names.end()));
  std::vector<Tensor> wrt(leaves.size());
  wrt[0] = leaves[0];
  {
    NoGradGuard no_grad;
    for (size_t j = n_data; j < names.size(); ++j) {
      Tensor p = params[names[j]];
      p.copy_(leaves[j]);
      wrt[j] = p;
    }
    if (n_data == 3) {
      m.get_buffer("running_mean").copy_(leaves[1]);
      m.get_buffer("running_var").copy_(leaves[2]);
    }
  }
  wick::test::check_oracle_case(c, forward(leaves[0]), wrt, dev, kOutRtol, kGradRtol, kAtol);
}

std::optional<double> momentum_of(const OracleCase& c) {
  return c.kwargs.at("momentum").is_null() ? std::nullopt : std::optional<double>(c.kw<double>("momentum", 0.1));
}
}  // namespace

TEST_CASE("BatchNorm3d matches PyTorch 1.13: train with momentum and the cumulative average and eval and no affine",
          "[nn][oracle][norm][norm3d_test]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "batch_norm3d_module") continue;
    const bool track = c.kw<bool>("track_running_stats", true);
    const auto options = BatchNorm3dOptions(c.kwargs.at("num_features").get<int64_t>())
                             .eps(c.kw<double>("eps", 1e-5))
                             .momentum(momentum_of(c))
                             .affine(c.kw<bool>("affine", true))
                             .track_running_stats(track);
    for (Device dev : wick::test::test_devices()) {
      BatchNorm3d m(options, kF64);
      if (track) Tensor(m->num_batches_tracked()).fill_(c.kw<int64_t>("num_batches_tracked", 0));
      check_layer_case(
          c, *m, track ? 3 : 1,
          [&](const Tensor& x) {
            const Tensor y = m(x);
            if (!track) return flat({y});
            return flat({y, m->running_mean(), m->running_var(), m->num_batches_tracked().to(kFloat64)});
          },
          dev);
    }
    ++seen[!track ? "untracked" : !c.kw<bool>("training", true) ? "eval" : options.momentum() ? "momentum" : "None"];
    if (!options.affine()) ++seen["no affine"];
  }
  for (const char* kind : {"untracked", "eval", "momentum", "None", "no affine"}) {
    INFO(kind);
    CHECK(seen[kind] >= 1);
  }
}

TEST_CASE("InstanceNorm3d matches PyTorch 1.13: affine or not and unbatched and tracking in train and eval mode",
          "[nn][oracle][norm][norm3d_test]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "instance_norm3d_module") continue;
    const bool track = c.kw<bool>("track_running_stats", false);
    const auto options = InstanceNorm3dOptions(c.kwargs.at("num_features").get<int64_t>())
                             .eps(c.kw<double>("eps", 1e-5))
                             .momentum(c.kw<double>("momentum", 0.1))
                             .affine(c.kw<bool>("affine", false))
                             .track_running_stats(track);
    for (Device dev : wick::test::test_devices()) {
      InstanceNorm3d m(options, kF64);
      check_layer_case(
          c, *m, track ? 3 : 1,
          [&](const Tensor& x) {
            return track ? flat({m(x), m->running_mean(), m->running_var()}) : flat({m(x)});
          },
          dev);
      if (track) CHECK(m->num_batches_tracked().item<int64_t>() == 0);  // PyTorch 1.13 never counts it
    }
    if (c.inputs[0].dim() == 4) ++seen["unbatched"];
    if (options.affine()) ++seen["affine"];
    if (track) ++seen[c.kw<bool>("training", true) ? "tracking, train" : "tracking, eval"];
  }
  for (const char* kind : {"unbatched", "affine", "tracking, train", "tracking, eval"}) {
    INFO(kind);
    CHECK(seen[kind] >= 1);
  }
}

TEST_CASE("MaxPool1d forward_with_indices and avg_pool divisor_override and Conv1d padding_mode match PyTorch 1.13",
          "[nn][oracle][pool][norm3d_test]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op == "max_pool1d_module_indices") {
      const int64_t k = c.kwargs.at("kernel_size").get<int64_t>();
      const auto options = MaxPool1dOptions(k)
                               .stride(c.kw<int64_t>("stride", k))
                               .padding(c.kw<int64_t>("padding", 0))
                               .dilation(c.kw<int64_t>("dilation", 1))
                               .ceil_mode(c.kw<bool>("ceil_mode", false));
      for (Device dev : wick::test::test_devices()) {
        INFO(c.label() << " on " << dev.str());
        MaxPool1d m(options);
        const Tensor x = c.leaves(dev)[0];
        const auto [values, indices] = m->forward_with_indices(x);
        CHECK(indices.dtype() == kInt64);
        CHECK(indices.device() == dev);
        CHECK(indices.sizes() == values.sizes());
        CHECK_ALLCLOSE(indices.reshape({-1}), c.out, 0, 0);  // layer cases are stored flattened
        CHECK_ALLCLOSE(values, m(x), 0, 0);
      }
    } else if (c.op == "avg_pool2d_divisor" || c.op == "avg_pool1d_divisor") {
      const bool two = c.op == "avg_pool2d_divisor";
      const auto pair = [&](const char* key, std::vector<int64_t> fallback) {
        const auto v = c.kwargs.contains(key) ? c.kwargs[key].get<std::vector<int64_t>>() : fallback;
        return Int2(v[0], v[1]);
      };
      const bool ceil_mode = c.kw<bool>("ceil_mode", false), cip = c.kw<bool>("count_include_pad", true);
      const int64_t divisor = c.kwargs.at("divisor_override").get<int64_t>();
      for (Device dev : wick::test::test_devices()) {
        INFO(c.label() << " on " << dev.str());
        const TL x = c.leaves(dev);
        if (two) {
          const Int2 k = pair("kernel_size", {}), s = pair("stride", {k.h, k.w}), p = pair("padding", {0, 0});
          wick::test::check_oracle_case(c, F::avg_pool2d(x[0], k, s, p, ceil_mode, cip, divisor), x, dev, kOutRtol,
                                        kGradRtol, kAtol);
          AvgPool2d m(
              AvgPool2dOptions(k).stride(s).padding(p).ceil_mode(ceil_mode).count_include_pad(cip).divisor_override(
                  divisor));
          CHECK_ALLCLOSE(m(x[0]), c.out, kOutRtol, kAtol);
        } else {
          const int64_t k = c.kwargs.at("kernel_size").get<int64_t>(), s = c.kw<int64_t>("stride", k);
          const int64_t p = c.kw<int64_t>("padding", 0);
          wick::test::check_oracle_case(c, F::avg_pool1d(x[0], k, s, p, ceil_mode, cip, divisor), x, dev, kOutRtol,
                                        kGradRtol, kAtol);
          AvgPool1d m(
              AvgPool1dOptions(k).stride(s).padding(p).ceil_mode(ceil_mode).count_include_pad(cip).divisor_override(
                  divisor));
          CHECK_ALLCLOSE(m(x[0]), c.out, kOutRtol, kAtol);
        }
      }
    } else if (c.op == "conv1d_padding_mode") {
      auto options =
          Conv1dOptions(c.kwargs.at("in_channels").get<int64_t>(), c.kwargs.at("out_channels").get<int64_t>(),
                        c.kwargs.at("kernel_size").get<int64_t>())
              .stride(c.kw<int64_t>("stride", 1))
              .dilation(c.kw<int64_t>("dilation", 1))
              .groups(c.kw<int64_t>("groups", 1))
              .bias(c.kw<bool>("bias", true))
              .padding_mode(pad_mode_from_string(c.kwargs.at("padding_mode").get<std::string>()));
      const auto& padding = c.kwargs.at("padding");
      if (padding.is_string())
        options.padding(padding.get<std::string>() == "same" ? kSame : kValid);
      else
        options.padding(padding.get<int64_t>());
      for (Device dev : wick::test::test_devices()) {
        Conv1d m(options, kF64);
        check_layer_case(
            c, *m, 1, [&](const Tensor& x) { return flat({m(x)}); }, dev);
      }
      ++seen[pad_mode_name(options.padding_mode())];
      if (padding.is_string()) ++seen["named padding"];
      if (c.inputs[0].dim() == 2) ++seen["unbatched"];
    } else {
      continue;
    }
    ++seen[c.op];
  }
  for (const char* kind : {"max_pool1d_module_indices", "avg_pool2d_divisor", "avg_pool1d_divisor", "reflect",
                           "replicate", "circular", "named padding", "unbatched"}) {
    INFO(kind);
    CHECK(seen[kind] >= 1);
  }
}

TEST_CASE("BatchNorm3d and InstanceNorm3d by hand: statistics and the cumulative average and eval and unbatched",
          "[nn][norm][norm3d_test]") {
  const double eps = 1e-5;
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    BatchNorm3d bn(BatchNorm3dOptions(1).momentum(std::nullopt), kF64);
    bn->to(dev);
    // 1, 2, 3, 6: mean 3, biased variance 7/2, unbiased 14/3; the first batch's factor is 1.
    const Tensor x1 = f64({1, 2, 3, 6}, {2, 1, 1, 1, 2}, dev);
    std::vector<double> want;
    for (double v : {1.0, 2.0, 3.0, 6.0}) want.push_back((v - 3) / std::sqrt(3.5 + eps));
    CHECK_ALLCLOSE(bn(x1), f64(want, {2, 1, 1, 1, 2}), 1e-12, 0);
    CHECK_ALLCLOSE(bn->running_mean(), f64({3}, {1}), 1e-14, 0);
    CHECK_ALLCLOSE(bn->running_var(), f64({14.0 / 3}, {1}), 1e-14, 0);
    // 2, 4, 6, 8: mean 5, unbiased 20/3; the factor 1/2 averages the two batches.
    bn(f64({2, 4, 6, 8}, {1, 1, 2, 1, 2}, dev));
    CHECK(bn->num_batches_tracked().item<int64_t>() == 2);
    CHECK_ALLCLOSE(bn->running_mean(), f64({4}, {1}), 1e-14, 0);
    CHECK_ALLCLOSE(bn->running_var(), f64({17.0 / 3}, {1}), 1e-14, 0);
    bn->eval();  // eval: the running statistics, left alone
    want.clear();
    for (double v : {1.0, 2.0, 3.0, 6.0}) want.push_back((v - 4) / std::sqrt(17.0 / 3 + eps));
    CHECK_ALLCLOSE(bn(x1), f64(want, {2, 1, 1, 1, 2}), 1e-12, 0);
    CHECK(bn->num_batches_tracked().item<int64_t>() == 2);

    // An unbatched [C, D, H, W] is one instance: 1, 2, 3, 6 over its 4 values.
    InstanceNorm3d in(InstanceNorm3dOptions(1), kF64);
    want.clear();
    for (double v : {1.0, 2.0, 3.0, 6.0}) want.push_back((v - 3) / std::sqrt(3.5 + eps));
    const Tensor y = in(f64({1, 2, 3, 6}, {1, 1, 2, 2}, dev));
    CHECK(y.sizes() == IntArrayRef({1, 1, 2, 2}));
    CHECK_ALLCLOSE(y, f64(want, {1, 1, 2, 2}), 1e-12, 0);
  }
}

TEST_CASE("divisor_override and Conv1d padding modes by hand", "[nn][pool][norm3d_test]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor x = f64({1, 2, 3, 4}, {1, 1, 1, 4}, dev);
    // Windows [1, 2] and [3, 4]: sums 3 and 7, each divided by 3.
    CHECK_ALLCLOSE(F::avg_pool2d(x, Int2(1, 2), 0, 0, false, true, 3), f64({1, 7.0 / 3}, {1, 1, 1, 2}), 1e-15, 0);
    // Padding 1, stride 2: windows [pad, 1], [2, 3], [4, pad]; sums 1, 5, 4 over 3, whatever
    // count_include_pad says.
    for (bool cip : {true, false})
      CHECK_ALLCLOSE(F::avg_pool2d(x, Int2(1, 2), Int2(1, 2), Int2(0, 1), false, cip, 3),
                     f64({1.0 / 3, 5.0 / 3, 4.0 / 3}, {1, 1, 1, 3}), 1e-15, 0);
    CHECK_ALLCLOSE(AvgPool1d(AvgPool1dOptions(2).divisor_override(2))(f64({1, 2, 3, 4}, {1, 1, 4}, dev)),
                   f64({1.5, 3.5}, {1, 1, 2}), 1e-15, 0);

    // MaxPool2d's indices are flat h * W + w positions: the 4 of [[1, 4], [3, 2]] is at 1.
    const auto [values, indices] = MaxPool2d(2)->forward_with_indices(f64({1, 4, 3, 2}, {1, 1, 2, 2}, dev));
    CHECK_VALUES(values, {4});
    CHECK_VALUES(indices, {1});
    // [1, 2, 3, 4] padded by 1 and read by a kernel [1, 0, 0] (the left neighbour) or [0, 0, 1].
    struct Expect {
      PadMode mode;
      std::vector<double> left, right;
    };
    for (const Expect& e :
         {Expect{kZeros, {0, 1, 2, 3}, {2, 3, 4, 0}}, Expect{kReflect, {2, 1, 2, 3}, {2, 3, 4, 3}},
          Expect{kReplicate, {1, 1, 2, 3}, {2, 3, 4, 4}}, Expect{kCircular, {4, 1, 2, 3}, {2, 3, 4, 1}}}) {
      INFO(pad_mode_name(e.mode));
      for (bool same : {false, true}) {
        auto options = Conv1dOptions(1, 1, 3).bias(false).padding_mode(e.mode);
        if (same)
          options.padding(kSame);
        else
          options.padding(1);
        Conv1d conv(options, kF64);
        conv->to(dev);
        const Tensor in = f64({1, 2, 3, 4}, {1, 1, 4}, dev);
        {
          NoGradGuard no_grad;
          Tensor(conv->weight()).copy_(f64({1, 0, 0}, {1, 1, 3}, dev));
        }
        CHECK_VALUES(conv(in), e.left);
        {
          NoGradGuard no_grad;
          Tensor(conv->weight()).copy_(f64({0, 0, 1}, {1, 1, 3}, dev));
        }
        CHECK_VALUES(conv(in), e.right);
      }
    }
  }
}

TEST_CASE("gradcheck: BatchNorm3d and InstanceNorm3d and divisor_override and Conv1d padding modes",
          "[nn][gradcheck][norm3d_test]") {
  wick::manual_seed(11);
  const auto rnd = [](IntArrayRef shape) { return wick::randn(shape, TensorOptions(kFloat64).requires_grad()); };
  const Tensor rm = wick::zeros({3}, kF64), rv = wick::ones({3}, kF64);
  auto bn = [&](const TL& x) { return TL{F::batch_norm(x[0], rm, rv, x[1], x[2], true, 0.1, 1e-5)}; };
  CHECK_GRADCHECK(bn, TL{rnd({2, 3, 2, 2, 3}), rnd({3}), rnd({3})});
  wick::test::check_double_backward(bn, TL{rnd({2, 3, 2, 2, 2}), rnd({3}), rnd({3})});
  auto in = [](const TL& x) { return TL{F::instance_norm(x[0], {}, {}, x[1], x[2])}; };
  CHECK_GRADCHECK(in, TL{rnd({2, 3, 2, 2, 3}), rnd({3}), rnd({3})});
  wick::test::check_double_backward(in, TL{rnd({1, 3, 2, 2, 2}), rnd({3}), rnd({3})});
  auto avg = [](const TL& x) { return TL{F::avg_pool2d(x[0], Int2(2, 3), Int2(1, 2), Int2(1, 1), true, false, -3)}; };
  CHECK_GRADCHECKS(avg, TL{rnd({1, 2, 4, 5})});
  CHECK_GRADCHECK([](const TL& x) { return TL{F::avg_pool1d(x[0], 3, 2, 1, false, true, 2)}; }, TL{rnd({2, 2, 7})});
  for (PadMode mode : {kReflect, kReplicate, kCircular}) {
    INFO(pad_mode_name(mode));
    Conv1d conv(Conv1dOptions(2, 3, 3).padding(2).dilation(2).padding_mode(mode), kF64);
    auto f = [&](const TL& x) { return TL{conv(x[0])}; };
    CHECK_GRADCHECK(f, TL{rnd({2, 2, 5})});
    wick::test::check_double_backward(f, TL{rnd({1, 2, 5})});
  }
}

TEST_CASE("3-d norms and the pooling and Conv1d options print and name state and refuse input as PyTorch 1.13",
          "[nn][norm3d_test]") {
  // print(nn.BatchNorm3d(3, momentum=None)), print(nn.InstanceNorm3d(3, affine=True)), ...
  CHECK(BatchNorm3d(BatchNorm3dOptions(3).momentum(std::nullopt))->to_string() ==
        "BatchNorm3d(3, eps=1e-05, momentum=None, affine=True, track_running_stats=True)");
  CHECK(InstanceNorm3d(InstanceNorm3dOptions(3).affine(true))->to_string() ==
        "InstanceNorm3d(3, eps=1e-05, momentum=0.1, affine=True, track_running_stats=False)");
  CHECK(Conv1d(Conv1dOptions(2, 3, 3).padding(1).padding_mode(kReflect))->to_string() ==
        "Conv1d(2, 3, kernel_size=(3,), stride=(1,), padding=(1,), padding_mode=reflect)");
  CHECK(Conv1d(Conv1dOptions(2, 3, 3).padding(kSame).padding_mode(kCircular))->to_string() ==
        "Conv1d(2, 3, kernel_size=(3,), stride=(1,), padding=same, padding_mode=circular)");
  CHECK(AvgPool2d(AvgPool2dOptions(2).divisor_override(3))->to_string() ==
        "AvgPool2d(kernel_size=2, stride=2, padding=0)");
  using Keys = std::vector<std::string>;
  CHECK(BatchNorm3d(3)->state_dict().keys() ==
        Keys{"weight", "bias", "running_mean", "running_var", "num_batches_tracked"});
  CHECK(InstanceNorm3d(InstanceNorm3dOptions(3).track_running_stats(true))->state_dict().keys() ==
        Keys{"running_mean", "running_var", "num_batches_tracked"});
  CHECK(InstanceNorm3d(3)->state_dict().keys().empty());
  CHECK(Conv1d(Conv1dOptions(2, 3, 3).padding_mode(kReplicate))->padding_mode() == kReplicate);
  CHECK(Conv1dOptions(2, 3, 3).padding_mode() == kZeros);

  // PyTorch: ValueError "expected 5D input (got 4D input)", "expected 4D or 5D input (got 3D input)".
  BatchNorm3d bn(3);
  CHECK_THROWS_AS(bn(randn({2, 3, 4, 4})), ValueError);
  CHECK_THROWS_WITH(bn(randn({2, 3, 4, 4})), Contains("BatchNorm3d: expected 5D input (got 4D input)") &&
                                                 Contains("[N, C, D, H, W]") && Contains("[2, 3, 4, 4]"));
  CHECK(bn->num_batches_tracked().item<int64_t>() == 0);  // refused before any state moved
  InstanceNorm3d in(3);
  CHECK_THROWS_AS(in(randn({3, 4, 4})), ValueError);
  CHECK_THROWS_WITH(in(randn({3, 4, 4})), Contains("InstanceNorm3d: expected 4D or 5D input (got 3D input)"));
  CHECK_THROWS_WITH(in(randn({1, 3, 2, 2, 2, 2})), Contains("expected 4D or 5D input (got 6D input)"));
  CHECK_THROWS_WITH(InstanceNorm3d(InstanceNorm3dOptions(3).affine(true))(randn({2, 4, 2, 2, 2})),
                    Contains("InstanceNorm3d") && Contains("num_features (3)"));

  // divisor_override 0: PyTorch's "divisor must be not zero", refused when built or called.
  CHECK_THROWS_AS(AvgPool2d(AvgPool2dOptions(2).divisor_override(0)), ValueError);
  CHECK_THROWS_AS(AvgPool1d(AvgPool1dOptions(2).divisor_override(0)), ValueError);
  CHECK_THROWS_WITH(F::avg_pool2d(randn({1, 1, 4, 4}), 2, 0, 0, false, true, 0),
                    Contains("avg_pool2d") && Contains("divisor_override"));
  CHECK_THROWS_WITH(F::avg_pool1d(randn({1, 1, 4}), 2, 0, 0, false, true, 0),
                    Contains("avg_pool1d") && Contains("divisor_override"));

  // Conv1d: constant is not a padding_mode (PyTorch: "padding_mode must be one of"); circular
  // takes a batched input only and reflect a padding below the length, as PyTorch 1.13.
  CHECK_THROWS_AS(Conv1d(Conv1dOptions(2, 3, 3).padding_mode(kConstant)), ValueError);
  CHECK_THROWS_AS(Conv1d(Conv1dOptions(2, 3, 3).padding(1).padding_mode(kCircular))(randn({2, 5})),
                  NotImplementedError);
  CHECK_THROWS_AS(Conv1d(Conv1dOptions(2, 3, 3).padding(3).padding_mode(kReflect))(randn({1, 2, 3})), ValueError);
  CHECK_THROWS_AS(Conv1d(Conv1dOptions(2, 3, 3).padding(kSame).stride(2).padding_mode(kReflect)), NotImplementedError);
}
