// Custom autograd functions (wick/autograd/custom_function.h) against float64 gradchecks and
// hand-derived gradients, double backward through a backward written with wick ops, the
// device-parallel engine running the node on its own device, and rows of the every-device table.
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <cmath>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/every_device_ops.h"
#include "support/gradcheck.h"
#include "wick/core/device_threads.h"

using namespace wick;
using wick::autograd::AutogradContext;
using wick::autograd::Function;
using wick::autograd::variable_list;

namespace {

// scale * x^3 (+ shift, a non-tensor argument after the tensor). Saves its input.
struct Cube : Function<Cube> {
  static Tensor forward(AutogradContext* ctx, const Tensor& x, double scale, double shift) {
    ctx->save_for_backward({x});
    ctx->saved_data["scale"] = scale;
    return pow(x, 3.0) * scale + shift;
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    const Tensor x = ctx->get_saved_variables()[0];
    const double scale = ctx->saved_data["scale"].toDouble();
    return {g[0] * (x * x) * (3.0 * scale), Tensor(), Tensor()};
  }
};

// exp(x) * y, broadcasting. Saves both inputs and recomputes exp(x) in backward with wick ops,
// so the backward is differentiable in x, y and the incoming gradient; sum_to reduces each
// gradient to its input's shape.
struct ExpMul : Function<ExpMul> {
  static Tensor forward(AutogradContext* ctx, const Tensor& x, const Tensor& y) {
    ctx->save_for_backward({x, y});
    return exp(x) * y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    const variable_list s = ctx->get_saved_variables();
    const Tensor e = exp(s[0]);
    return {sum_to(g[0] * e * s[1], s[0].sizes()), sum_to(g[0] * e, s[1].sizes())};
  }
};

// exp(x), saving its output: the saved output comes back with this node as its grad_fn, so the
// second derivative runs this node's backward again (Note [Saved tensors and cycles]).
struct ExpSavesOutput : Function<ExpSavesOutput> {
  static Tensor forward(AutogradContext* ctx, const Tensor& x) {
    Tensor out = exp(x);
    ctx->save_for_backward({out});
    return out;
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    return {g[0] * ctx->get_saved_variables()[0]};
  }
};

// Records the device worker that ran backward (none: the caller's thread).
struct WhereRun : Function<WhereRun> {
  static inline Device ran_on = Device("cpu:0");
  static inline bool on_worker = false;
  static Tensor forward(AutogradContext*, const Tensor& x) { return x * 2.0; }
  static variable_list backward(AutogradContext*, variable_list g) {
    const Device* w = device_threads::current_worker_device();
    on_worker = w != nullptr;
    if (w) ran_on = *w;
    return {g[0] * 2.0};
  }
};

using TL = std::vector<Tensor>;
Tensor seeded_f64(IntArrayRef shape, uint64_t seed, Device d) {
  manual_seed(seed);
  return randn(shape, TensorOptions().dtype(kFloat64)).to(d);
}

[[maybe_unused]] const bool registered = wick::test::every_device::add_every_device_ops({
    {"custom_function_cube", wick::test::every_device::unary([](const Tensor& a) { return Cube::apply(a, 0.5, 1.0); })},
    {"custom_function_exp_mul",
     wick::test::every_device::binary([](const Tensor& a, const Tensor& b) { return ExpMul::apply(a, b); })},
    {"custom_function_exp_saves_output",
     wick::test::every_device::unary([](const Tensor& a) { return ExpSavesOutput::apply(a); })},
});

}  // namespace

TEST_CASE("custom function: gradcheck and gradgradcheck of custom cube and exp ops on every device") {
  for (Device d : wick::test::test_devices()) {
    INFO(d);
    const Tensor x = seeded_f64({3, 4}, 1, d).requires_grad_(), y = seeded_f64({4}, 2, d).requires_grad_();
    const auto cube = [](const TL& in) { return TL{Cube::apply(in[0], 0.7, -2.0)}; };
    const auto exp_mul = [](const TL& in) { return TL{ExpMul::apply(in[0], in[1])}; };
    const auto exp_out = [](const TL& in) { return TL{ExpSavesOutput::apply(in[0])}; };
    CHECK_GRADCHECKS(cube, {x});
    CHECK_GRADCHECKS(exp_mul, {x, y});
    CHECK_GRADCHECKS(exp_out, {x});
    // The gradient itself, as a function of x: a gradcheck of the second derivative.
    wick::test::check_double_backward(cube, {x});
    wick::test::check_double_backward(exp_mul, {x, y});
    wick::test::check_double_backward(exp_out, {x});
  }
}

TEST_CASE("custom function: first and second derivatives equal the hand-derived ones") {
  for (Device d : wick::test::test_devices()) {
    INFO(d);
    const auto opts = TensorOptions().dtype(kFloat64).device(d);
    // Cube with scale 2: f = 2x^3 + 1, f' = 6x^2, f'' = 12x.
    Tensor x = tensor({1.0, -2.0, 0.5}, opts).requires_grad_();
    Tensor g = autograd::grad({Cube::apply(x, 2.0, 1.0).sum()}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
    CHECK(wick::test::values(g) == std::vector<double>{6, 24, 1.5});
    CHECK(g.requires_grad());
    Tensor gg = autograd::grad({g.sum()}, {x})[0];
    CHECK(wick::test::values(gg) == std::vector<double>{12, -24, 6});
    // ExpSavesOutput at 0: every derivative of exp is exp(0) = 1.
    Tensor z = zeros({2}, opts).requires_grad_();
    Tensor gz = autograd::grad({ExpSavesOutput::apply(z).sum()}, {z}, {}, std::nullopt, true)[0];
    CHECK(wick::test::values(gz) == std::vector<double>{1, 1});
    CHECK(wick::test::values(autograd::grad({gz.sum()}, {z})[0]) == std::vector<double>{1, 1});
    // ExpMul: d/dy exp(x) y = exp(x), d2/dxdy = exp(x).
    Tensor a = tensor({0.0, std::log(2.0)}, opts).requires_grad_(), b = tensor({3.0, 5.0}, opts).requires_grad_();
    TL gab = autograd::grad({ExpMul::apply(a, b).sum()}, {a, b}, {}, std::nullopt, true);
    CHECK_ALLCLOSE(gab[0], tensor({3.0, 10.0}, opts), 1e-15, 0.0);
    CHECK_ALLCLOSE(gab[1], tensor({1.0, 2.0}, opts), 1e-15, 0.0);
    CHECK_ALLCLOSE(autograd::grad({gab[1].sum()}, {a})[0], tensor({1.0, 2.0}, opts), 1e-15, 0.0);
  }
}

TEST_CASE("custom function: the device-parallel engine runs the node on its own device's worker") {
  const Device cpu1("cpu:1");
  Tensor x = tensor({1.0, 2.0}, TensorOptions().dtype(kFloat64)).requires_grad_();
  Tensor y = WhereRun::apply(x.to(cpu1));
  REQUIRE(y.grad_fn()->device() == cpu1);
  WhereRun::on_worker = false;
  (y.to(kCPU) * x).sum().backward();  // the caller works for cpu:0, the root's device
  CHECK(WhereRun::on_worker);
  CHECK(WhereRun::ran_on == cpu1);
  CHECK(wick::test::values(x.grad()) == std::vector<double>{4, 8});  // d/dx 2x^2 = 4x
}
