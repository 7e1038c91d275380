// F:: overloads taking LibTorch's functional options (wick/nn/functional_options_conv_norm.h): with
// every option set to a distinct non-default value, each equals the positional call of the same
// function (checked against PyTorch 1.13 by the existing tests) bit for bit, values and gradients
// of every tensor argument, and the running statistics batch_norm / instance_norm update, on every
// test device; softmax / log_softmax with a dtype equal the explicit cast-then-op composition. The
// options' defaults are LibTorch 1.13's, written by hand from torch/nn/options/*.h; bad options give
// typed errors naming the op.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
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
using Fn = std::function<Tensor(const TL&)>;

namespace {
// A float64 leaf of `shape` on `dev` (positive when `positive`, as a variance must be).
Tensor leaf(IntArrayRef shape, Device dev, bool positive = false) {
  Tensor t = randn(shape, kFloat64);
  if (positive) t = t.abs() + 0.5;
  return t.to(dev).detach().requires_grad_();
}

// A copy of `t` that is a fresh leaf (so the two calls build separate graphs).
Tensor twin(const Tensor& t) { return t.detach().clone().requires_grad_(t.requires_grad()); }

// The output and the gradients of sum(out * weights) for every leaf that requires grad.
TL run(const Fn& f, const TL& x) {
  const Tensor y = f(x);
  TL leaves;
  for (const Tensor& t : x) {
    if (t.requires_grad()) leaves.push_back(t);
  }
  const Tensor w =
      (arange(0, double(y.numel()), 1, TensorOptions(kFloat64).device(y.device())).reshape(y.sizes()) * 0.37)
          .sin()
          .to(y.dtype());
  TL out = {y.detach()};
  for (const Tensor& g : autograd::grad({(y * w).sum()}, leaves)) out.push_back(g);
  return out;
}

// with(x) and positional(x) on copies of the same leaves: equal dtypes, shapes and values (bit for
// bit), outputs and gradients; the leaves themselves too (running statistics updated in place).
void check_same(const char* what, const Fn& with, const Fn& positional, const TL& x) {
  TL a, b;
  for (const Tensor& t : x) {
    a.push_back(twin(t));
    b.push_back(twin(t));
  }
  const TL ra = run(with, a), rb = run(positional, b);
  REQUIRE(ra.size() == rb.size());
  for (size_t i = 0; i < ra.size(); ++i) {
    INFO(what << ": result " << i << " on " << x[0].device().str());
    CHECK(ra[i].dtype() == rb[i].dtype());
    CHECK(ra[i].sizes() == rb[i].sizes());
    CHECK(values(ra[i]) == values(rb[i]));
  }
  for (size_t i = 0; i < x.size(); ++i) {
    INFO(what << ": argument " << i << " after the call");
    CHECK(values(a[i]) == values(b[i]));
  }
}
}  // namespace

TEST_CASE("func options conv norm: convolutions equal the positional calls bit for bit on every device",
          "[nn][func_options]") {
  manual_seed(351);
  for (Device dev : wick::test::test_devices()) {
    check_same(
        "conv1d",
        [](const TL& x) {
          return F::conv1d(x[0], x[1], F::Conv1dFuncOptions().bias(x[2]).stride(2).padding(1).dilation(3).groups(2));
        },
        [](const TL& x) { return F::conv1d(x[0], x[1], x[2], 2, 1, 3, 2); },
        {leaf({2, 4, 15}, dev), leaf({6, 2, 3}, dev), leaf({6}, dev)});
    check_same(
        "conv1d same",
        [](const TL& x) {
          return F::conv1d(x[0], x[1], F::Conv1dFuncOptions().bias(x[2]).padding(kSame).dilation(2).groups(2));
        },
        [](const TL& x) { return F::conv1d(x[0], x[1], x[2], 1, kSame, 2, 2); },
        {leaf({2, 4, 9}, dev), leaf({6, 2, 4}, dev), leaf({6}, dev)});
    check_same(
        "conv2d",
        [](const TL& x) {
          return F::conv2d(x[0], x[1],
                           F::Conv2dFuncOptions().bias(x[2]).stride({2, 1}).padding({1, 3}).dilation({1, 2}).groups(2));
        },
        [](const TL& x) {
          return F::conv2d(x[0], x[1], x[2], {2, 1}, {1, 3}, {1, 2}, 2);
        },
        {leaf({2, 4, 9, 10}, dev), leaf({6, 2, 3, 2}, dev), leaf({6}, dev)});
    check_same(
        "conv2d valid",
        [](const TL& x) {
          return F::conv2d(x[0], x[1], F::Conv2dFuncOptions().stride({2, 3}).padding(kValid).dilation(2));
        },
        [](const TL& x) {
          return F::conv2d(x[0], x[1], {}, {2, 3}, kValid, 2, 1);
        },
        {leaf({1, 2, 9, 10}, dev), leaf({3, 2, 2, 3}, dev)});
    check_same(
        "conv3d",
        [](const TL& x) {
          return F::conv3d(
              x[0], x[1],
              F::Conv3dFuncOptions().bias(x[2]).stride({1, 2, 1}).padding({1, 0, 2}).dilation({2, 1, 1}).groups(2));
        },
        [](const TL& x) {
          return F::conv3d(x[0], x[1], x[2], {1, 2, 1}, {1, 0, 2}, {2, 1, 1}, 2);
        },
        {leaf({1, 4, 6, 7, 8}, dev), leaf({4, 2, 2, 3, 2}, dev), leaf({4}, dev)});
    check_same(
        "conv3d same",
        [](const TL& x) {
          return F::conv3d(x[0], x[1], F::Conv3dFuncOptions().bias(x[2]).padding(kSame).dilation({1, 2, 1}).groups(2));
        },
        [](const TL& x) {
          return F::conv3d(x[0], x[1], x[2], 1, kSame, {1, 2, 1}, 2);
        },
        {leaf({1, 4, 3, 5, 4}, dev), leaf({2, 2, 2, 2, 3}, dev), leaf({2}, dev)});
    check_same(
        "conv_transpose1d",
        [](const TL& x) {
          return F::conv_transpose1d(
              x[0], x[1],
              F::ConvTranspose1dFuncOptions().bias(x[2]).stride(3).padding(1).output_padding(2).groups(2).dilation(4));
        },
        [](const TL& x) { return F::conv_transpose1d(x[0], x[1], x[2], 3, 1, 2, 2, 4); },
        {leaf({2, 4, 5}, dev), leaf({4, 3, 3}, dev), leaf({6}, dev)});
    check_same(
        "conv_transpose2d",
        [](const TL& x) {
          return F::conv_transpose2d(x[0], x[1],
                                     F::ConvTranspose2dFuncOptions()
                                         .bias(x[2])
                                         .stride({2, 3})
                                         .padding({1, 0})
                                         .output_padding({1, 2})
                                         .groups(2)
                                         .dilation({3, 1}));
        },
        [](const TL& x) {
          return F::conv_transpose2d(x[0], x[1], x[2], {2, 3}, {1, 0}, {1, 2}, 2, {3, 1});
        },
        {leaf({2, 4, 3, 4}, dev), leaf({4, 3, 2, 3}, dev), leaf({6}, dev)});
    check_same(
        "conv_transpose3d",
        [](const TL& x) {
          return F::conv_transpose3d(x[0], x[1],
                                     F::ConvTranspose3dFuncOptions()
                                         .bias(x[2])
                                         .stride({2, 1, 3})
                                         .padding({1, 0, 1})
                                         .output_padding({1, 0, 2})
                                         .groups(2)
                                         .dilation({1, 2, 1}));
        },
        [](const TL& x) {
          return F::conv_transpose3d(x[0], x[1], x[2], {2, 1, 3}, {1, 0, 1}, {1, 0, 2}, 2, {1, 2, 1});
        },
        {leaf({1, 4, 2, 3, 2}, dev), leaf({4, 1, 2, 2, 2}, dev), leaf({2}, dev)});
  }
}

TEST_CASE("func options conv norm: normalizations equal the positional calls, running statistics too",
          "[nn][func_options]") {
  manual_seed(352);
  for (Device dev : wick::test::test_devices()) {
    // x, weight, bias are leaves; the running statistics (no grad) are updated in place.
    auto stats = [&](int64_t c) {
      return TL{randn({c}, kFloat64).to(dev), (randn({c}, kFloat64).abs() + 0.5).to(dev)};
    };
    TL s = stats(3);
    check_same(
        "batch_norm training",
        [](const TL& x) {
          return F::batch_norm(
              x[0], x[3], x[4],
              F::BatchNormFuncOptions().weight(x[1]).bias(x[2]).training(true).momentum(0.2).eps(1e-3));
        },
        [](const TL& x) { return F::batch_norm(x[0], x[3], x[4], x[1], x[2], true, 0.2, 1e-3); },
        {leaf({4, 3, 5}, dev), leaf({3}, dev), leaf({3}, dev), s[0], s[1]});
    check_same(
        "batch_norm eval",
        [](const TL& x) {
          return F::batch_norm(x[0], x[3], x[4],
                               F::BatchNormFuncOptions().weight(x[1]).bias(x[2]).momentum(0.3).eps(1e-2));
        },
        [](const TL& x) { return F::batch_norm(x[0], x[3], x[4], x[1], x[2], false, 0.3, 1e-2); },
        {leaf({4, 3, 2, 2}, dev), leaf({3}, dev), leaf({3}, dev), s[0], s[1]});
    s = stats(3);
    check_same(
        "instance_norm input stats",
        [](const TL& x) {
          return F::instance_norm(x[0], F::InstanceNormFuncOptions()
                                            .running_mean(x[3])
                                            .running_var(x[4])
                                            .weight(x[1])
                                            .bias(x[2])
                                            .momentum(0.3)
                                            .eps(1e-2));
        },
        [](const TL& x) { return F::instance_norm(x[0], x[3], x[4], x[1], x[2], true, 0.3, 1e-2); },
        {leaf({2, 3, 5}, dev), leaf({3}, dev), leaf({3}, dev), s[0], s[1]});
    check_same(
        "instance_norm running stats",
        [](const TL& x) {
          return F::instance_norm(x[0], F::InstanceNormFuncOptions()
                                            .running_mean(x[3])
                                            .running_var(x[4])
                                            .weight(x[1])
                                            .bias(x[2])
                                            .use_input_stats(false)
                                            .eps(1e-2));
        },
        [](const TL& x) { return F::instance_norm(x[0], x[3], x[4], x[1], x[2], false, 0.1, 1e-2); },
        {leaf({2, 3, 2, 3}, dev), leaf({3}, dev), leaf({3}, dev), s[0], s[1]});
    check_same(
        "layer_norm",
        [](const TL& x) {
          return F::layer_norm(x[0], F::LayerNormFuncOptions({3, 5}).weight(x[1]).bias(x[2]).eps(1e-2));
        },
        [](const TL& x) {
          return F::layer_norm(x[0], {3, 5}, x[1], x[2], 1e-2);
        },
        {leaf({2, 3, 5}, dev), leaf({3, 5}, dev), leaf({3, 5}, dev)});
    check_same(
        "group_norm",
        [](const TL& x) { return F::group_norm(x[0], F::GroupNormFuncOptions(3).weight(x[1]).bias(x[2]).eps(1e-2)); },
        [](const TL& x) { return F::group_norm(x[0], 3, x[1], x[2], 1e-2); },
        {leaf({2, 6, 4}, dev), leaf({6}, dev), leaf({6}, dev)});
    check_same(
        "local_response_norm",
        [](const TL& x) {
          return F::local_response_norm(x[0], F::LocalResponseNormFuncOptions(3).alpha(2e-2).beta(0.6).k(1.5));
        },
        [](const TL& x) { return F::local_response_norm(x[0], 3, 2e-2, 0.6, 1.5); }, {leaf({2, 5, 4}, dev)});
  }
}

TEST_CASE("func options conv norm: softmax and log_softmax cast to the dtype first, gelu takes approximate",
          "[nn][func_options]") {
  manual_seed(353);
  for (Device dev : wick::test::test_devices()) {
    const Tensor x64 = leaf({3, 4}, dev);
    const Tensor x32 = x64.detach().to(kFloat32).requires_grad_();
    check_same(
        "gelu tanh", [](const TL& x) { return F::gelu(x[0], F::GELUFuncOptions().approximate("tanh")); },
        [](const TL& x) { return F::gelu(x[0], "tanh"); }, {x64});
    for (const Tensor& x : {x32, x64}) {
      check_same(
          "softmax", [](const TL& v) { return F::softmax(v[0], F::SoftmaxFuncOptions(0)); },
          [](const TL& v) { return F::softmax(v[0], 0); }, {x});
      check_same(
          "log_softmax", [](const TL& v) { return F::log_softmax(v[0], F::LogSoftmaxFuncOptions(0)); },
          [](const TL& v) { return F::log_softmax(v[0], 0); }, {x});
      for (DType d : {kFloat32, kFloat64}) {
        INFO("input " << dtype_name(x.dtype()) << ", dtype " << dtype_name(d));
        check_same(
            "softmax dtype", [d](const TL& v) { return F::softmax(v[0], F::SoftmaxFuncOptions(1).dtype(d)); },
            [d](const TL& v) { return F::softmax(v[0].to(d), 1); }, {x});
        check_same(
            "log_softmax dtype",
            [d](const TL& v) { return F::log_softmax(v[0], F::LogSoftmaxFuncOptions(-1).dtype(d)); },
            [d](const TL& v) { return F::log_softmax(v[0].to(d), -1); }, {x});
        // The result has the options' dtype, the input's gradient the input's (torch.softmax).
        const Tensor y = F::softmax(x, F::SoftmaxFuncOptions(1).dtype(d));
        CHECK(y.dtype() == d);
        CHECK(autograd::grad({(y * y).sum()}, {x})[0].dtype() == x.dtype());
      }
    }
    // float32 input with dtype float64: the float64 softmax of the float32 values, worked by hand
    // for one row (exact casts, so equal to within float64 rounding, not float32's).
    const Tensor row = tensor({0.1, 0.2, 0.7}, TensorOptions(kFloat32).device(dev));
    const std::vector<double> got = values(F::softmax(row, F::SoftmaxFuncOptions(0).dtype(kFloat64)));
    const std::vector<double> in = values(row);
    const double z = std::exp(in[0]) + std::exp(in[1]) + std::exp(in[2]);
    for (size_t i = 0; i < 3; ++i) CHECK(got[i] == Approx(std::exp(in[i]) / z).epsilon(1e-13));
  }
}

TEST_CASE("func options conv norm: defaults are LibTorch 1.13's and bad options are typed errors naming the op",
          "[nn][func_options][errors]") {
  // Aliases, as LibTorch's.
  static_assert(std::is_same_v<F::Conv2dFuncOptions, F::ConvFuncOptions<2>>);
  static_assert(std::is_same_v<F::ConvTranspose3dFuncOptions, F::ConvTransposeFuncOptions<3>>);
  static_assert(std::is_same_v<F::GELUFuncOptions, GELUOptions>);
  static_assert(std::is_same_v<F::LocalResponseNormFuncOptions, LocalResponseNormOptions>);
  // Defaults, from LibTorch 1.13's torch/nn/options/{conv,batchnorm,instancenorm,normalization,activation}.h.
  const F::Conv1dFuncOptions c1;
  CHECK((!c1.bias().defined() && c1.stride() == 1 && std::get<int64_t>(c1.padding()) == 0 && c1.dilation() == 1 &&
         c1.groups() == 1));
  const F::Conv2dFuncOptions c2;
  CHECK((c2.stride() == Int2(1, 1) && std::get<Int2>(c2.padding()) == Int2(0, 0) && c2.dilation() == Int2(1, 1)));
  CHECK(std::get<PaddingMode>(F::Conv2dFuncOptions().padding(kSame).padding()) == kSame);
  CHECK(std::get<Int2>(F::Conv2dFuncOptions().padding(2).padding()) == Int2(2, 2));
  const F::Conv3dFuncOptions c3;
  CHECK((c3.stride() == Int3(1) && std::get<Int3>(c3.padding()) == Int3(0) && c3.dilation() == Int3(1) &&
         c3.groups() == 1));
  const F::ConvTranspose2dFuncOptions t2;
  CHECK((!t2.bias().defined() && t2.stride() == Int2(1) && t2.padding() == Int2(0) && t2.output_padding() == Int2(0) &&
         t2.groups() == 1 && t2.dilation() == Int2(1)));
  const F::BatchNormFuncOptions bn;
  CHECK((!bn.weight().defined() && !bn.bias().defined() && !bn.training() && bn.momentum() == 0.1 && bn.eps() == 1e-5));
  const F::InstanceNormFuncOptions in;
  CHECK((!in.running_mean().defined() && !in.running_var().defined() && !in.weight().defined() &&
         !in.bias().defined() && in.use_input_stats() && in.momentum() == 0.1 && in.eps() == 1e-5));
  const F::LayerNormFuncOptions ln({2, 2});
  CHECK((ln.normalized_shape() == std::vector<int64_t>{2, 2} && !ln.weight().defined() && ln.eps() == 1e-5));
  const F::GroupNormFuncOptions gn(2);
  CHECK((gn.num_groups() == 2 && !gn.weight().defined() && !gn.bias().defined() && gn.eps() == 1e-5));
  const F::LocalResponseNormFuncOptions lrn(2);
  CHECK((lrn.size() == 2 && lrn.alpha() == 1e-4 && lrn.beta() == 0.75 && lrn.k() == 1.0));
  CHECK(F::GELUFuncOptions().approximate() == "none");
  CHECK((F::SoftmaxFuncOptions(1).dim() == 1 && !F::SoftmaxFuncOptions(1).dtype()));
  CHECK((F::LogSoftmaxFuncOptions(-1).dim() == -1 && !F::LogSoftmaxFuncOptions(-1).dtype()));

  // Default options give the positional defaults; a shape, a dim or a group count still picks the
  // positional overload (std::vector included: LayerNormFuncOptions' constructor is explicit).
  manual_seed(354);
  const Tensor x = randn({2, 4, 5, 6}, kFloat64), w = randn({6, 2, 3, 3}, kFloat64);
  CHECK(values(F::conv2d(x, w, F::Conv2dFuncOptions().groups(2))) == values(F::conv2d(x, w, {}, 1, 0, 1, 2)));
  CHECK(values(F::instance_norm(x, F::InstanceNormFuncOptions())) == values(F::instance_norm(x)));
  CHECK(values(F::layer_norm(x, std::vector<int64_t>{5, 6})) ==
        values(F::layer_norm(x, F::LayerNormFuncOptions({5, 6}))));
  CHECK(values(F::group_norm(x, 2)) == values(F::group_norm(x, F::GroupNormFuncOptions(2))));
  CHECK(values(F::softmax(x, 1)) == values(F::softmax(x, F::SoftmaxFuncOptions(1))));

  // Bad options: the op's typed error.
  const Tensor rm = zeros({4}, kFloat64), rv = ones({4}, kFloat64);
  expect_error<ValueError>([&] { F::batch_norm(x, rm, rv, F::BatchNormFuncOptions().momentum(std::nullopt)); },
                           {"F::batch_norm", "momentum", "std::nullopt"});
  CHECK(values(rm) == std::vector<double>(4, 0.0));  // nothing applied
  expect_error<TypeError>([&] { F::softmax(x, F::SoftmaxFuncOptions(1).dtype(kInt64)); }, {"F::softmax", "int64"});
  expect_error<TypeError>([&] { F::log_softmax(x, F::LogSoftmaxFuncOptions(1).dtype(kBool)); },
                          {"F::log_softmax", "bool"});
  expect_error<ValueError>(
      [&] {
        F::conv2d(x, w, F::Conv2dFuncOptions().stride({1, 0}).groups(2));
      },
      {"conv2d", "stride (1, 0)"});
  expect_error<NotImplementedError>([&] { F::conv2d(x, w, F::Conv2dFuncOptions().stride(2).padding(kSame).groups(2)); },
                                    {"conv2d"});
  const Tensor wt = randn({4, 3, 3, 3}, kFloat64);
  expect_error<ValueError>([&] { F::conv_transpose2d(x, wt, F::ConvTranspose2dFuncOptions().output_padding(1)); },
                           {"conv_transpose2d", "output_padding"});
  expect_error<ValueError>([&] { F::group_norm(x, F::GroupNormFuncOptions(3)); }, {"group_norm", "3"});
  expect_error<ValueError>([&] { F::layer_norm(x, F::LayerNormFuncOptions({5})); }, {"layer_norm", "[5]"});
  expect_error<ValueError>([&] { F::gelu(x, F::GELUFuncOptions().approximate("erf")); }, {"gelu", "erf"});
  expect_error<ValueError>([&] { F::local_response_norm(x, F::LocalResponseNormFuncOptions(0)); },
                           {"local_response_norm"});
  expect_error<ValueError>([&] { F::instance_norm(x, F::InstanceNormFuncOptions().use_input_stats(false)); },
                           {"instance_norm"});
}
