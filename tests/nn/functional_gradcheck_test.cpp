// gradcheck (and gradgradcheck where the backward is itself differentiable) for every
// nn::functional function, in float64.
#include <catch2/catch.hpp>
#include <functional>

#include "support/gradcheck.h"
#include "wick/autograd/grad.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/generator.h"
#include "wick/nn/functional.h"

using namespace wick;
using namespace wick::nn;
using TL = std::vector<Tensor>;

namespace {
using wick::test::check_double_backward;

Tensor rnd(IntArrayRef shape) { return wick::randn(shape, TensorOptions(kFloat64).requires_grad()); }
Tensor pos(IntArrayRef shape) {
  return (wick::rand(shape, TensorOptions(kFloat64)) + 0.5).detach().requires_grad_(true);
}
}  // namespace

TEST_CASE("gradcheck: linear", "[nn][gradcheck]") {
  auto f = [](const TL& x) { return TL{F::linear(x[0], x[1], x[2])}; };
  CHECK_GRADCHECK(f, TL{rnd({2, 3, 4}), rnd({5, 4}), rnd({5})});
  check_double_backward(f, TL{rnd({3, 4}), rnd({2, 4}), rnd({2})});
  CHECK_GRADCHECK([](const TL& x) { return TL{F::linear(x[0], x[1])}; }, TL{rnd({4}), rnd({3, 4})});
}

TEST_CASE("gradcheck: conv2d", "[nn][gradcheck]") {
  wick::manual_seed(1);
  SECTION("stride, padding, dilation, bias") {
    auto f = [](const TL& x) { return TL{F::conv2d(x[0], x[1], x[2], {2, 1}, {1, 2}, {1, 2})}; };
    CHECK_GRADCHECK(f, TL{rnd({2, 2, 6, 7}), rnd({3, 2, 3, 2}), rnd({3})});
    check_double_backward(f, TL{rnd({1, 2, 5, 5}), rnd({2, 2, 3, 3}), rnd({2})});
  }
  SECTION("1x1 kernel, no bias, unbatched") {
    auto f = [](const TL& x) { return TL{F::conv2d(x[0], x[1])}; };
    CHECK_GRADCHECK(f, TL{rnd({3, 4, 4}), rnd({2, 3, 1, 1})});
    check_double_backward(f, TL{rnd({1, 3, 3, 3}), rnd({2, 3, 1, 1})});
  }
  SECTION("groups: two groups with stride and bias, depthwise 1x1") {
    auto f = [](const TL& x) { return TL{F::conv2d(x[0], x[1], x[2], 2, 1, 1, 2)}; };
    CHECK_GRADCHECK(f, TL{rnd({2, 4, 5, 5}), rnd({6, 2, 3, 3}), rnd({6})});
    check_double_backward(f, TL{rnd({1, 4, 4, 4}), rnd({2, 2, 3, 3}), rnd({2})});
    auto dw = [](const TL& x) { return TL{F::conv2d(x[0], x[1], {}, 1, 0, 1, 3)}; };
    CHECK_GRADCHECK(dw, TL{rnd({2, 3, 3, 3}), rnd({3, 1, 1, 1})});
    check_double_backward(dw, TL{rnd({1, 3, 3, 3}), rnd({6, 1, 1, 1})});
  }
}

TEST_CASE("gradcheck: pooling", "[nn][gradcheck]") {
  wick::manual_seed(2);
  CHECK_GRADCHECK([](const TL& x) { return TL{F::max_pool2d(x[0], 2)}; }, TL{rnd({2, 3, 6, 6})});
  CHECK_GRADCHECK([](const TL& x) { return TL{F::max_pool2d(x[0], 3, 2, 1, 1, true)}; }, TL{rnd({1, 2, 8, 7})});
  CHECK_GRADCHECK([](const TL& x) { return TL{F::max_pool2d(x[0], {2, 3}, 1, 0, 2)}; }, TL{rnd({2, 6, 7})});
  check_double_backward([](const TL& x) { return TL{F::max_pool2d(x[0], 2)}; }, TL{rnd({1, 1, 4, 4})});
  CHECK_GRADCHECK([](const TL& x) { return TL{F::avg_pool2d(x[0], 3, 2, 1)}; }, TL{rnd({2, 2, 7, 6})});
  CHECK_GRADCHECK([](const TL& x) { return TL{F::avg_pool2d(x[0], 3, 2, 1, true, false)}; }, TL{rnd({1, 2, 8, 8})});
  check_double_backward([](const TL& x) { return TL{F::avg_pool2d(x[0], 2)}; }, TL{rnd({1, 2, 4, 4})});
  CHECK_GRADCHECK([](const TL& x) { return TL{F::adaptive_avg_pool2d(x[0], {3, 2})}; }, TL{rnd({2, 2, 7, 5})});
  CHECK_GRADCHECK([](const TL& x) { return TL{F::adaptive_avg_pool2d(x[0], 1)}; }, TL{rnd({2, 3, 4, 4})});
}

TEST_CASE("gradcheck: conv1d and the 1-d pooling functions", "[nn][gradcheck]") {
  wick::manual_seed(5);
  SECTION("conv1d: stride, padding, dilation, groups, bias, same, unbatched") {
    auto f = [](const TL& x) { return TL{F::conv1d(x[0], x[1], x[2], 2, 1, 2, 2)}; };
    CHECK_GRADCHECK(f, TL{rnd({2, 4, 9}), rnd({6, 2, 3}), rnd({6})});
    check_double_backward(f, TL{rnd({1, 4, 7}), rnd({2, 2, 3}), rnd({2})});
    auto same = [](const TL& x) { return TL{F::conv1d(x[0], x[1], {}, 1, kSame, 3)}; };
    CHECK_GRADCHECK(same, TL{rnd({2, 3, 7}), rnd({2, 3, 2})});
    check_double_backward(same, TL{rnd({1, 2, 5}), rnd({2, 2, 4})});
    CHECK_GRADCHECK([](const TL& x) { return TL{F::conv1d(x[0], x[1], x[2])}; },
                    TL{rnd({3, 6}), rnd({2, 3, 3}), rnd({2})});
  }
  SECTION("max_pool1d, avg_pool1d, adaptive_avg_pool1d") {
    CHECK_GRADCHECK([](const TL& x) { return TL{F::max_pool1d(x[0], 2)}; }, TL{rnd({2, 3, 8})});
    CHECK_GRADCHECK([](const TL& x) { return TL{F::max_pool1d(x[0], 3, 2, 1, 2, true)}; }, TL{rnd({2, 2, 9})});
    CHECK_GRADCHECK([](const TL& x) { return TL{std::get<0>(F::max_pool1d_with_indices(x[0], 3, 1))}; },
                    TL{rnd({3, 7})});
    CHECK_GRADCHECK([](const TL& x) { return TL{F::avg_pool1d(x[0], 3, 2, 1)}; }, TL{rnd({2, 2, 8})});
    CHECK_GRADCHECK([](const TL& x) { return TL{F::avg_pool1d(x[0], 3, 2, 1, true, false)}; }, TL{rnd({1, 2, 8})});
    CHECK_GRADCHECK([](const TL& x) { return TL{F::adaptive_avg_pool1d(x[0], 3)}; }, TL{rnd({2, 2, 7})});
    CHECK_GRADCHECK([](const TL& x) { return TL{F::adaptive_avg_pool1d(x[0], 5)}; }, TL{rnd({2, 3})});
  }
  SECTION("the pooling backward is differentiable in the output gradient") {
    // The pools are piecewise linear, so their second derivative in the input is zero and
    // check_double_backward would compare nothing; their backward (input, gout) -> grad_input is
    // checked instead, as PyTorch's gradgradcheck does.
    auto backward_of = [](Tensor (*pool)(const Tensor&)) {
      return [pool](const TL& x) {
        AutoGradMode on(true);
        const Tensor in = x[0].requires_grad() ? x[0] : x[0].detach().requires_grad_(true);
        return wick::autograd::grad({pool(in)}, {in}, {x[1]}, true, /*create_graph=*/true);
      };
    };
    CHECK_GRADCHECK(backward_of([](const Tensor& x) { return F::max_pool1d(x, 3, 2, 1); }),
                    TL{rnd({2, 2, 7}), rnd({2, 2, 4})});
    CHECK_GRADCHECK(backward_of([](const Tensor& x) { return F::avg_pool1d(x, 3, 2, 1, true, false); }),
                    TL{rnd({2, 2, 7}), rnd({2, 2, 4})});
    CHECK_GRADCHECK(backward_of([](const Tensor& x) { return F::adaptive_avg_pool1d(x, 3); }),
                    TL{rnd({2, 5}), rnd({2, 3})});
  }
}

TEST_CASE("gradcheck: batch_norm and layer_norm", "[nn][gradcheck]") {
  auto bn = [](const TL& x) { return TL{F::batch_norm(x[0], {}, {}, x[1], x[2], true, 0.1, 1e-5)}; };
  CHECK_GRADCHECK(bn, TL{rnd({4, 3, 2, 2}), rnd({3}), rnd({3})});
  check_double_backward(bn, TL{rnd({5, 2}), rnd({2}), rnd({2})});
  auto bn_eval = [](const TL& x) { return TL{F::batch_norm(x[0], x[3], x[4], x[1], x[2], false, 0.1, 1e-5)}; };
  CHECK_GRADCHECK(bn_eval, TL{rnd({3, 2, 4}), rnd({2}), rnd({2}), rnd({2}), pos({2})});
  auto ln = [](const TL& x) { return TL{F::layer_norm(x[0], {3, 4}, x[1], x[2], 1e-5)}; };
  CHECK_GRADCHECK(ln, TL{rnd({2, 3, 4}), rnd({3, 4}), rnd({3, 4})});
  check_double_backward(ln, TL{rnd({2, 3, 4}), rnd({3, 4}), rnd({3, 4})});
  CHECK_GRADCHECK([](const TL& x) { return TL{F::layer_norm(x[0], {5})}; }, TL{rnd({3, 5})});
  // Without affine, and with a weight only (Note [Fused layer_norm]: each takes its own branch).
  check_double_backward([](const TL& x) { return TL{F::layer_norm(x[0], {5})}; }, TL{rnd({3, 5})});
  auto ln_w = [](const TL& x) { return TL{F::layer_norm(x[0], {4}, x[1], {}, 1e-5)}; };
  CHECK_GRADCHECK(ln_w, TL{rnd({3, 4}), rnd({4})});
  check_double_backward(ln_w, TL{rnd({3, 4}), rnd({4})});
}

TEST_CASE("gradcheck: group_norm and instance_norm", "[nn][gradcheck]") {
  wick::manual_seed(3);
  auto gn = [](const TL& x) { return TL{F::group_norm(x[0], 2, x[1], x[2], 1e-5)}; };
  CHECK_GRADCHECK(gn, TL{rnd({2, 4, 3, 2}), rnd({4}), rnd({4})});
  check_double_backward(gn, TL{rnd({2, 4, 3}), rnd({4}), rnd({4})});
  // G = 1 and G = C, without affine; a [N, C] input.
  CHECK_GRADCHECK([](const TL& x) { return TL{F::group_norm(x[0], 1)}; }, TL{rnd({2, 3, 4})});
  CHECK_GRADCHECK([](const TL& x) { return TL{F::group_norm(x[0], 3)}; }, TL{rnd({2, 3, 4})});
  CHECK_GRADCHECK([](const TL& x) { return TL{F::group_norm(x[0], 3, x[1], x[2], 1e-3)}; },
                  TL{rnd({4, 6}), rnd({6}), rnd({6})});
  auto in = [](const TL& x) { return TL{F::instance_norm(x[0], {}, {}, x[1], x[2])}; };
  CHECK_GRADCHECK(in, TL{rnd({2, 3, 2, 3}), rnd({3}), rnd({3})});
  check_double_backward(in, TL{rnd({2, 3, 4}), rnd({3}), rnd({3})});
  CHECK_GRADCHECK([](const TL& x) { return TL{F::instance_norm(x[0])}; }, TL{rnd({3, 2, 5})});
  // Training with running statistics (updated on every call; the output does not read them).
  const Tensor rm = wick::zeros({3}, TensorOptions(kFloat64)), rv = wick::ones({3}, TensorOptions(kFloat64));
  CHECK_GRADCHECK([&](const TL& x) { return TL{F::instance_norm(x[0], rm, rv, x[1], x[2], true, 0.1)}; },
                  TL{rnd({2, 3, 4}), rnd({3}), rnd({3})});
  // Eval mode: the running statistics, as batch_norm's eval path.
  auto in_eval = [](const TL& x) { return TL{F::instance_norm(x[0], x[3], x[4], x[1], x[2], false)}; };
  CHECK_GRADCHECK(in_eval, TL{rnd({2, 3, 4}), rnd({3}), rnd({3}), rnd({3}), pos({3})});
}

TEST_CASE("gradcheck: pad in modes reflect, replicate and circular, and a convolution of the padded input",
          "[nn][gradcheck]") {
  wick::manual_seed(4);
  struct Case {
    PadMode mode;
    std::vector<int64_t> shape, pads;
  };
  // 1, 2 and 3 padded dims, unbatched where the mode takes it, pads as large as each mode allows
  // and negative pads (cropping).
  for (const Case& c :
       {Case{kReflect, {2, 3, 5}, {4, 2}}, Case{kReflect, {3, 4, 5}, {2, -1, -2, 3}},
        Case{kReflect, {1, 2, 3, 3, 2}, {1, 0, 2, 1, 0, 2}}, Case{kReplicate, {3, 4}, {5, 2}},
        Case{kReplicate, {2, 2, 3, 4}, {-2, 3, 4, 1}}, Case{kReplicate, {1, 2, 2, 2, 3}, {2, 1, 1, 3, 2, 0}},
        Case{kCircular, {2, 2, 5}, {5, 3}}, Case{kCircular, {1, 2, 4, 5}, {2, -1, -2, 1}},
        Case{kCircular, {1, 1, 3, 2, 3}, {1, 2, 0, 2, 3, 1}}}) {
    INFO(pad_mode_name(c.mode) << " with " << c.pads.size() << " pads");
    auto f = [&](const TL& x) { return TL{F::pad(x[0], c.pads, c.mode)}; };
    CHECK_GRADCHECK(f, TL{rnd(c.shape)});
    // The pad is linear; squaring its output makes its backward depend on the input.
    auto squared = [&](const TL& x) {
      const Tensor y = F::pad(x[0], c.pads, c.mode);
      return TL{mul(y, y)};
    };
    check_double_backward(squared, TL{rnd(c.shape)});
  }
  // Conv2d's padding_mode forward: F::pad, then a convolution with stride and dilation.
  for (PadMode mode : {kReflect, kReplicate, kCircular}) {
    INFO(pad_mode_name(mode));
    auto f = [mode](const TL& x) {
      return TL{F::conv2d(F::pad(x[0], {2, 1, 1, 2}, mode), x[1], x[2], {2, 1}, 0, {1, 2})};
    };
    CHECK_GRADCHECK(f, TL{rnd({2, 2, 5, 4}), rnd({3, 2, 3, 2}), rnd({3})});
    check_double_backward(f, TL{rnd({1, 2, 4, 4}), rnd({2, 2, 2, 2}), rnd({2})});
  }
}

TEST_CASE("gradcheck: embedding and dropout", "[nn][gradcheck]") {
  Tensor idx = wick::tensor(std::vector<int64_t>{0, 2, 2, 4, 1, 0}, {2, 3}, kInt64);
  CHECK_GRADCHECK([&](const TL& x) { return TL{F::embedding(idx, x[0])}; }, TL{rnd({5, 3})});
  // (With padding_idx the padding rows get no gradient by design, so no gradcheck there.)
  // Dropout: a fixed seed per call makes the function deterministic for the finite differences.
  CHECK_GRADCHECK(
      [](const TL& x) {
        wick::manual_seed(7);
        return TL{F::dropout(x[0], 0.4, true)};
      },
      TL{rnd({4, 5})});
}

TEST_CASE("gradcheck: activations", "[nn][gradcheck]") {
  CHECK_GRADCHECK([](const TL& x) { return TL{F::gelu(x[0], "tanh")}; }, TL{rnd({3, 4})});
  CHECK_GRADCHECK([](const TL& x) { return TL{F::gelu(x[0])}; }, TL{rnd({3, 4})});
  CHECK_GRADCHECK([](const TL& x) { return TL{F::softmax(x[0], 1), F::log_softmax(x[0], 0)}; }, TL{rnd({3, 4})});
  CHECK_GRADCHECK([](const TL& x) { return TL{F::tanh(x[0]), F::sigmoid(x[0])}; }, TL{rnd({5})});
}

TEST_CASE("gradcheck: losses", "[nn][gradcheck]") {
  Tensor t = wick::tensor(std::vector<int64_t>{1, 0, 3, -100, 2}, {5}, kInt64);
  Tensor w = wick::tensor({0.5, 2.0, 1.0, 3.0}, TensorOptions(kFloat64));
  for (Reduction r : {Reduction::None, Reduction::Mean, Reduction::Sum}) {
    INFO(reduction_name(r));
    CHECK_GRADCHECK([&](const TL& x) { return TL{F::nll_loss(x[0], t, {}, r)}; }, TL{rnd({5, 4})});
    CHECK_GRADCHECK([&](const TL& x) { return TL{F::nll_loss(x[0], t, x[1], r)}; }, TL{rnd({5, 4}), pos({4})});
    CHECK_GRADCHECK([&](const TL& x) { return TL{F::cross_entropy(x[0], t, {}, r, -100, 0.1)}; }, TL{rnd({5, 4})});
    CHECK_GRADCHECK([&](const TL& x) { return TL{F::cross_entropy(x[0], t, w, r, -100, 0.2)}; }, TL{rnd({5, 4})});
    CHECK_GRADCHECK([&](const TL& x) { return TL{F::mse_loss(x[0], x[1], r)}; }, TL{rnd({3, 2}), rnd({3, 2})});
    CHECK_GRADCHECK([&](const TL& x) { return TL{F::l1_loss(x[0], x[1], r)}; }, TL{rnd({3, 2}), rnd({3, 2})});
    CHECK_GRADCHECK([&](const TL& x) { return TL{F::binary_cross_entropy_with_logits(x[0], x[1], x[2], r, x[3])}; },
                    TL{rnd({3, 4}), (wick::rand({3, 4}, kFloat64)).requires_grad_(true), pos({3, 4}), pos({4})});
  }
  Tensor t2 = wick::tensor(std::vector<int64_t>{1, 0, 2, 2, 1, 0}, {2, 3}, kInt64);
  CHECK_GRADCHECK([&](const TL& x) { return TL{F::cross_entropy(x[0], t2, {}, Reduction::Mean, 2, 0.3)}; },
                  TL{rnd({2, 3, 3})});
  check_double_backward([&](const TL& x) { return TL{F::cross_entropy(x[0], t2, {}, Reduction::Mean, 2, 0.3)}; },
                        TL{rnd({2, 3, 3})});
}
