// gradcheck (float64 central differences vs the analytic Jacobian) for every differentiable op
// of autograd/include/wick/autograd/functions.h, and gradgradcheck for the ops whose backward is
// itself differentiable. Inputs are random normals (no ties, no points of non-differentiability
// such as 0 for abs/relu) or shifted into the op's domain.
#include "support/gradcheck.h"

#include <wick/wick.h>

#include <catch2/catch.hpp>

#include "support/allclose.h"
#include "support/devices.h"

using namespace wick;
using Catch::Matchers::Contains;
using TL = std::vector<Tensor>;

namespace {
Tensor R(IntArrayRef shape) { return randn(shape, TensorOptions(kFloat64).requires_grad()); }
// Positive inputs in [0.5, 1.5) for log, sqrt, pow, division...
Tensor P(IntArrayRef shape) {
  Tensor t = native::binary(BinaryOp::Add, native::rand(shape, kFloat64, kCPU), Scalar(0.5));
  return t.requires_grad_();
}
Tensor I(std::vector<int64_t> v, IntArrayRef shape) { return tensor(v, shape, kInt64); }
// x^2 with a deliberately wrong backward (d/dx claimed to be x): gradcheck must catch it.
TL wrong_square(const TL& x) {
  Tensor out = native::unary(UnaryOp::Square, x[0]);
  autograd::record_function("WrongSquareBackward", {x[0]}, {out},
                            [](const autograd::variable_list& g, const autograd::variable_list& s) {
                              return autograd::variable_list{mul(g[0], s[0])};
                            },
                            {x[0]});
  return TL{out};
}

}  // namespace

TEST_CASE("gradcheck: binary elementwise ops with broadcasting") {
  manual_seed(1);
  CHECK_GRADCHECKS([](const TL& x) { return TL{add(x[0], x[1])}; }, {R({3, 4}), R({4})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{add(x[0], x[1], 2.5)}; }, {R({2, 1, 3}), R({4, 1})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{sub(x[0], x[1])}; }, {R({4, 1}), R({1, 3})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{sub(x[0], x[1], -0.5)}; }, {R({3}), R({2, 3})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{mul(x[0], x[1])}; }, {R({2, 3, 4}), R({3, 1})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{div(x[0], x[1])}; }, {R({5, 3}), P({3})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{pow(x[0], x[1])}; }, {P({3, 2}), R({2})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{maximum(x[0], x[1])}; }, {R({4, 3}), R({3})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{minimum(x[0], x[1])}; }, {R({4, 3}), R({4, 1})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{where(x[0].detach().gt(0), x[1], x[2])}; },
                   {R({3, 4}), R({3, 4}), R({4})});
  // Operators and scalar forms.
  CHECK_GRADCHECKS([](const TL& x) { return TL{x[0] * 3.0 - 2.0 / x[1] + x[0] / 4.0 + (1.0 - x[0]) * x[1]}; },
                   {R({2, 3}), P({2, 3})});
  // Only one operand requires grad.
  Tensor c = randn({3}, kFloat64);
  CHECK_GRADCHECKS(
      [c](const TL& x) {
        return TL{mul(x[0], c), div(c, x[1]), pow(c.abs(), x[1])};
      },
      {R({2, 3}), P({3})});
  // 0-dim operands.
  CHECK_GRADCHECKS([](const TL& x) { return TL{mul(x[0], x[1])}; }, {R({}), R({3})});
}

TEST_CASE("gradcheck: unary elementwise ops") {
  manual_seed(2);
  const std::vector<std::pair<const char*, Tensor (*)(const Tensor&)>> on_reals = {
      {"neg", neg},   {"abs", abs},   {"exp", exp},     {"tanh", tanh}, {"sigmoid", sigmoid},
      {"relu", relu}, {"gelu", gelu}, {"sin", sin},     {"cos", cos},   {"square", square},
      {"sign", sign}, {"erf", erf},   {"expm1", expm1},
  };
  for (const auto& [name, op_entry] : on_reals) {
    INFO(name);
    const auto op = op_entry;  // a variable of its own: clang 14 cannot capture a structured binding
    CHECK_GRADCHECKS([op](const TL& x) { return TL{op(x[0])}; }, {R({3, 4})});
  }
  const std::vector<std::pair<const char*, Tensor (*)(const Tensor&)>> on_positives = {
      {"log", log}, {"sqrt", sqrt}, {"rsqrt", rsqrt}, {"reciprocal", reciprocal}, {"log1p", log1p},
  };
  for (const auto& [name, op_entry] : on_positives) {
    INFO(name);
    const auto op = op_entry;  // a variable of its own: clang 14 cannot capture a structured binding
    CHECK_GRADCHECKS([op](const TL& x) { return TL{op(x[0])}; }, {P({3, 4})});
  }
  CHECK_GRADCHECKS([](const TL& x) { return TL{pow(x[0], 3.0)}; }, {R({4, 5})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{pow(x[0], -1.5)}; }, {P({4})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{pow(x[0], 0)}; }, {R({4})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{pow(x[0], 1)}; }, {R({4})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{clamp(x[0], -0.5, 0.5)}; }, {R({4, 4})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{clamp(x[0], std::nullopt, 0.3)}; }, {R({4, 4})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{x[0].sigmoid().tanh().exp().sqrt()}; }, {R({5})});
  // Large inputs: the formulas written on outputs stay finite.
  Tensor big = native::binary(BinaryOp::Mul, native::randn({6}, kFloat64, kCPU), Scalar(20.0)).requires_grad_();
  CHECK_GRADCHECKS([](const TL& x) { return TL{sigmoid(x[0]), tanh(x[0])}; }, {big});
}

TEST_CASE("gradcheck: reductions, softmax and log_softmax") {
  manual_seed(3);
  CHECK_GRADCHECKS([](const TL& x) { return TL{sum(x[0])}; }, {R({3, 4})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{sum(x[0], {1})}; }, {R({3, 4, 5})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{sum(x[0], {0, 2}, true)}; }, {R({3, 4, 5})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{sum(x[0], {-2}, true)}; }, {R({2, 3, 4})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{sum(x[0], {0})}; }, {R({})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{mean(x[0])}; }, {R({3, 5})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{mean(x[0], {-1})}; }, {R({6, 7})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{mean(x[0], {0, 1}, true)}; }, {R({2, 3, 2})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{amax(x[0], {1})}; }, {R({5, 9})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{amax(x[0], {0, 1})}; }, {R({3, 4, 2})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{amin(x[0], {-1}, true)}; }, {R({4, 3})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{std::get<0>(max(x[0], 1))}; }, {R({4, 5})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{std::get<0>(min(x[0], 0, true))}; }, {R({4, 5})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{var(x[0], {0}, false)}; }, {R({8, 3})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{var(x[0], {1, 2}, true, true)}; }, {R({2, 3, 4})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{var(x[0], {})}; }, {R({5, 2})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{logsumexp(x[0], {1})}; }, {R({4, 6})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{logsumexp(x[0], {0, 1}, true)}; }, {R({3, 2, 2})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{softmax(x[0], -1)}; }, {R({4, 7})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{softmax(x[0], 0)}; }, {R({5, 3})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{log_softmax(x[0], 1)}; }, {R({4, 7})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{log_softmax(x[0], -1)}; }, {R({2, 3, 5})});
}

TEST_CASE("gradcheck: matmul in every shape case, and mm") {
  manual_seed(4);
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
      {{4}, {4}},       {{4}, {4, 3}},       {{3, 4}, {4}},       {{3, 4}, {4, 5}},       {{2, 3, 4}, {4}},
      {{4}, {2, 4, 3}}, {{2, 3, 4}, {4, 5}}, {{3, 4}, {2, 4, 2}}, {{2, 3, 4}, {2, 4, 5}}, {{2, 1, 3, 4}, {5, 4, 2}},
  };
  for (const auto& [sa, sb] : shapes) {
    INFO("[" << fmt::format("{}", fmt::join(sa, ", ")) << "] x [" << fmt::format("{}", fmt::join(sb, ", ")) << "]");
    CHECK_GRADCHECKS([](const TL& x) { return TL{matmul(x[0], x[1])}; }, {R(sa), R(sb)});
  }
  CHECK_GRADCHECKS([](const TL& x) { return TL{mm(x[0], x[1])}; }, {R({3, 4}), R({4, 2})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{matmul(x[0].t(), x[1])}; }, {R({4, 3}), R({4, 2})});
  Tensor c = randn({4, 2}, kFloat64);
  CHECK_GRADCHECKS([c](const TL& x) { return TL{matmul(x[0], c)}; }, {R({3, 4})});
  CHECK_GRADCHECKS([c](const TL& x) { return TL{matmul(c.t(), x[0])}; }, {R({4, 5})});
}

TEST_CASE("gradcheck: views and shape ops") {
  manual_seed(5);
  CHECK_GRADCHECKS([](const TL& x) { return TL{view(x[0], {6, 4})}; }, {R({2, 3, 4})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{reshape(x[0].t(), {-1})}; }, {R({3, 4})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{transpose(x[0], 0, 2)}; }, {R({2, 3, 4})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{permute(x[0], {2, 0, 1})}; }, {R({2, 3, 4})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{narrow(x[0], 1, 1, 2)}; }, {R({3, 5})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{narrow(x[0], -1, -3, 2)}; }, {R({3, 5})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{slice(x[0], 1, 1, std::nullopt, 2)}; }, {R({3, 6})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{select(x[0], 0, -1)}; }, {R({3, 4})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{x[0][1]}; }, {R({3, 4})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{expand(x[0], {4, 3, 5})}; }, {R({3, 1})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{x[0].expand_as(x[1]) * x[1]}; }, {R({1, 3}), R({2, 3})});
  CHECK_GRADCHECKS(
      [](const TL& x) {
        return TL{squeeze(x[0]), squeeze(x[0], 0), unsqueeze(x[0], -1)};
      },
      {R({1, 3, 1})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{flatten(x[0], 1)}; }, {R({2, 3, 2})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{contiguous(x[0].t())}; }, {R({3, 2})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{clone(x[0])}; }, {R({3})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{to(x[0], Device("cpu:1"), kFloat64).mul(2.0)}; }, {R({3})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{sum_to(x[0], {3, 1})}; }, {R({2, 3, 4})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{x[0].view_as(x[1]) + x[1]}; }, {R({6}), R({2, 3})});
}

TEST_CASE("gradcheck: joining, splitting and indexing") {
  manual_seed(6);
  CHECK_GRADCHECKS([](const TL& x) { return TL{cat({x[0], x[1]}, 1)}; }, {R({2, 3}), R({2, 4})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{cat({x[0], x[1], x[2]}, 0)}; }, {R({1, 3}), R({2, 3}), R({3, 3})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{stack({x[0], x[1]}, 0)}; }, {R({2, 3}), R({2, 3})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{stack({x[0], x[1]}, -1)}; }, {R({2, 3}), R({2, 3})});
  CHECK_GRADCHECKS([](const TL& x) { return split(x[0], 2, 1); }, {R({3, 5})});
  CHECK_GRADCHECKS([](const TL& x) { return split_with_sizes(x[0], {1, 3}, 0); }, {R({4, 2})});
  CHECK_GRADCHECKS([](const TL& x) { return chunk(x[0], 3, -1); }, {R({2, 7})});
  // Only some outputs used: the others' gradients are zeros.
  CHECK_GRADCHECKS([](const TL& x) { return TL{chunk(x[0], 2, 0)[1] * 2.0}; }, {R({4, 2})});
  Tensor idx = I({4, 0, 2, 2, 1, 0, 4}, {7});
  CHECK_GRADCHECKS([idx](const TL& x) { return TL{index_select(x[0], 0, idx)}; }, {R({5, 3})});
  CHECK_GRADCHECKS([idx](const TL& x) { return TL{index_select(x[0], -1, idx)}; }, {R({2, 5})});
  Tensor g = I({0, 5, 3, 3, 1, 1, 2, 0}, {4, 2});
  CHECK_GRADCHECKS([g](const TL& x) { return TL{gather(x[0], 1, g)}; }, {R({4, 6})});
  Tensor g0 = I({2, 0, 1, 1, 0, 2, 2, 2}, {2, 4});
  CHECK_GRADCHECKS([g0](const TL& x) { return TL{gather(x[0], 0, g0)}; }, {R({3, 4})});
  CHECK_GRADCHECKS([g](const TL& x) { return TL{scatter_add(x[0], 1, g, x[1])}; }, {R({4, 6}), R({4, 3})});
  Tensor ia = I({1, 3, 1}, {3});
  CHECK_GRADCHECKS([ia](const TL& x) { return TL{index_add(x[0], 0, ia, x[1])}; }, {R({4, 2}), R({3, 2})});
}

TEST_CASE("gradcheck: in-place ops on non-leaves rebase the history correctly") {
  manual_seed(7);
  CHECK_GRADCHECKS(
      [](const TL& x) {
        Tensor y = x[0] * 1.0;
        y.add_(x[1], 2.0);
        return TL{y};
      },
      {R({3}), R({3})});
  CHECK_GRADCHECKS(
      [](const TL& x) {
        Tensor y = x[0] * 1.0;
        y.sub_(x[1]);
        return TL{y};
      },
      {R({2, 3}), R({3})});
  CHECK_GRADCHECKS(
      [](const TL& x) {
        Tensor y = x[0] * 1.0;
        y.mul_(x[1]);
        return TL{y};
      },
      {R({3}), R({3})});
  CHECK_GRADCHECKS(
      [](const TL& x) {
        Tensor y = x[0] * 1.0;
        y.div_(x[1]);
        return TL{y};
      },
      {R({3}), P({3})});
  CHECK_GRADCHECKS(
      [](const TL& x) {
        Tensor y = x[0] * 1.0;
        y.mul_(y);
        return TL{y};
      },
      {R({3})});
  CHECK_GRADCHECKS(
      [](const TL& x) {
        Tensor y = x[0].sin();
        y.add_(3.0).mul_(2.0).div_(4.0);
        return TL{y};
      },
      {R({3})});
  CHECK_GRADCHECKS(
      [](const TL& x) {
        Tensor y = x[0] * 1.0;
        y.clamp_(-0.5, 0.5);
        return TL{y};
      },
      {R({5})});
  CHECK_GRADCHECKS(
      [](const TL& x) {
        Tensor y = x[0] * 1.0;
        y.copy_(x[1]);
        return TL{y * x[0]};
      },
      {R({2, 3}), R({3})});
  CHECK_GRADCHECKS(
      [](const TL& x) {
        Tensor y = x[0] * 1.0;
        y.fill_(2.0);
        return TL{y * x[0]};
      },
      {R({3})});
  CHECK_GRADCHECKS(
      [](const TL& x) {
        Tensor y = x[0] * 1.0;
        y.zero_();
        return TL{y + x[0]};
      },
      {R({3})});
  CHECK_GRADCHECKS(
      [](const TL& x) {
        Tensor y = x[0] * 1.0;
        y += x[1];
        y *= x[1];
        y -= x[0];
        return TL{y};
      },
      {R({3}), R({3})});
  // An in-place op on a tensor that does not require grad, with an operand that does.
  CHECK_GRADCHECKS(
      [](const TL& x) {
        Tensor y = zeros({3}, kFloat64);
        y.add_(x[0]);
        return TL{y};
      },
      {R({3})});
}

TEST_CASE("gradcheck reports a wrong gradient") {
  // A deliberately wrong backward (d/dx x^2 claimed to be x) must be caught.
  auto r = autograd::gradcheck(wrong_square, {R({3})});
  CHECK_FALSE(r.ok);
  CHECK_THAT(r.message, Contains("Jacobian mismatch"));
  CHECK_THROWS_WITH(autograd::gradcheck([](const TL& x) { return x; }, {randn({2}, kFloat64)}),
                    Contains("no input requires grad"));
  CHECK_THROWS_WITH(autograd::gradcheck([](const TL& x) { return x; }, {randn({2}, TensorOptions().requires_grad())}),
                    Contains("float64"));
}

TEST_CASE("gradcheck works on every device and refuses float32 outputs") {
  // The one-hot gradients and the perturbed inputs are written with tensor ops, not through a
  // host pointer: a device tensor is checked like a CPU one, and a wrong backward is still caught.
  for (const Device& d : test::test_devices()) {
    INFO(d);
    const TensorOptions f64 = TensorOptions(kFloat64).device(d).requires_grad();
    CHECK_GRADCHECK(
        [](const TL& x) {
          return TL{x[0] * x[1].sin(), x[0].sum()};
        },
        {randn({3, 2}, f64), randn({2}, f64)});
    CHECK_FALSE(autograd::gradcheck(wrong_square, {randn({4}, f64)}).ok);
    // A float32 output used to be written as doubles past its end (element e at byte 8e).
    CHECK_THROWS_AS(autograd::gradcheck([](const TL& x) { return TL{x[0].to(kFloat32)}; }, {randn({64}, f64)}),
                    TypeError);
    CHECK_THROWS_WITH(autograd::gradcheck(
                          [](const TL& x) {
                            return TL{x[0], x[0].to(kFloat32)};
                          },
                          {randn({3}, f64)}),
                      Contains("output 1 is float32"));
  }
}
