// wick::autograd::functional's options and edges, as PyTorch 1.13: strict mode's errors (an
// output independent of an input, an output that does not require grad, a jacobian independent
// of the inputs), the zeros PyTorch gives for the same cases without strict, create_graph making
// the results differentiable (checked by a further backward against values worked by hand), and
// bad arguments (v of the wrong shape or left out, forward-mode, non-scalar hessian functions,
// integer and undefined inputs, an integer output of jvp's function) as typed errors naming the
// function. Every case runs on each test device.
#include <catch2/catch.hpp>
#include <functional>
#include <string>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/expect_error.h"
#include "support/small_tensors.h"
#include "wick/autograd/functional.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/error.h"

using namespace wick;
using wick::test::check_error;
namespace F = wick::autograd::functional;
using TL = std::vector<Tensor>;

namespace {
using wick::test::f64;
Tensor zeros_on(IntArrayRef shape, Device dev) { return zeros(shape, TensorOptions(kFloat64).device(dev)); }

// x -> x.exp().sum(), ignoring y; (x, y) -> (2 x, exp(y)); x -> (2 x).sum(), which is linear.
const F::ListToTensorFunction only_x = [](const TL& a) { return a[0].exp().sum(); };
const F::ListFunction separate = [](const TL& a) { return TL{a[0] * 2.0, a[1].exp()}; };
const F::TensorFunction linear_sum = [](const Tensor& x) { return (x * 2.0).sum(); };
// x.square().sum() + y.sum(): its gradient with respect to y (ones) does not depend on anything.
const F::ListToTensorFunction square_plus_y = [](const TL& a) { return a[0].square().sum() + a[1].sum(); };
}  // namespace

TEST_CASE("functional: strict mode refuses what PyTorch's strict mode refuses", "[autograd][functional]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor x = f64({0.5, -1, 2}, {3}, dev), y = f64({1, 2}, {2}, dev);
    const TL xy{x, y};
    // An output computed without the inputs' graph.
    const F::TensorFunction detached = [](const Tensor& t) { return t.detach().exp(); };
    check_error<ValueError>([&] { F::vjp(detached, x, x, false, true); }, {"vjp", "output 0", "strict"});
    check_error<ValueError>([&] { F::jacobian(detached, x, false, true); }, {"jacobian", "output 0"});
    // An output independent of an input.
    check_error<ValueError>([&] { F::vjp(only_x, xy, Tensor(), false, true); }, {"vjp", "independent of input 1"});
    check_error<ValueError>([&] { F::jvp(only_x, xy, xy, false, true); }, {"jvp", "independent of input 1"});
    check_error<ValueError>([&] { F::jacobian(separate, xy, false, true); },
                            {"jacobian", "output 0", "independent of input 1"});
    // A jacobian that does not depend on the inputs: create_graph=true, or a hessian of it.
    check_error<ValueError>([&] { F::jacobian([](const Tensor& t) { return t * 2.0; }, x, true, true); },
                            {"jacobian", "with respect to input 0", "create_graph=true"});
    check_error<ValueError>([&] { F::hessian(linear_sum, x, false, true); }, {"hessian", "jacobian", "input 0"});
    check_error<ValueError>([&] { F::hessian(square_plus_y, xy, false, true); }, {"hessian", "input 1"});
    check_error<ValueError>([&] { F::hvp(linear_sum, x, x, false, true); }, {"hvp", "jacobian", "input 0"});
    check_error<ValueError>([&] { F::vhp(square_plus_y, xy, xy, false, true); }, {"vhp", "input 1"});
    // The same functions without strict are fine (below); strict passes a genuine case.
    CHECK_NOTHROW(F::hessian([](const Tensor& t) { return t.exp().sum(); }, x, true, true));
  }
}

TEST_CASE("functional: without strict, independent outputs give zeros as in PyTorch", "[autograd][functional]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor x = f64({0.5, -1, 2}, {3}, dev), y = f64({1, 2}, {2}, dev);
    const TL xy{x, y};
    const auto [out, g] = F::vjp(only_x, xy);
    CHECK_ALLCLOSE(g[0], x.exp(), 0.0, 0.0);
    CHECK_ALLCLOSE(g[1], zeros_on({2}, dev), 0.0, 0.0);

    const auto [outs, jv] = F::jvp(only_x, xy, TL{x, y});
    CHECK_ALLCLOSE(jv, (x.exp() * x).sum(), 1e-15, 0.0);  // only x's part

    const auto j = F::jacobian(separate, xy);
    REQUIRE(j.size() == 2);
    CHECK_ALLCLOSE(j[0][0], eye(3, TensorOptions(kFloat64).device(dev)) * 2.0, 0.0, 0.0);
    CHECK_ALLCLOSE(j[0][1], zeros_on({3, 2}, dev), 0.0, 0.0);
    CHECK_ALLCLOSE(j[1][0], zeros_on({2, 3}, dev), 0.0, 0.0);
    CHECK_ALLCLOSE(j[1][1], y.exp().diag(), 0.0, 0.0);

    // An output that does not require grad at all: a zero jacobian, and a zero vjp.
    const F::TensorFunction detached = [](const Tensor& t) { return t.detach().square(); };
    CHECK_ALLCLOSE(F::jacobian(detached, x), zeros_on({3, 3}, dev), 0.0, 0.0);
    CHECK_ALLCLOSE(F::vjp(detached, x, x).second, zeros_on({3}, dev), 0.0, 0.0);

    // Second order of a linear_sum function, and of the y part of x^2 + y.
    CHECK_ALLCLOSE(F::hessian(linear_sum, x), zeros_on({3, 3}, dev), 0.0, 0.0);
    CHECK_ALLCLOSE(F::hvp(linear_sum, x, x).second, zeros_on({3}, dev), 0.0, 0.0);
    const auto h = F::hessian(square_plus_y, xy);
    CHECK_ALLCLOSE(h[0][0], eye(3, TensorOptions(kFloat64).device(dev)) * 2.0, 0.0, 0.0);
    CHECK_ALLCLOSE(h[1][1], zeros_on({2, 2}, dev), 0.0, 0.0);
    CHECK_ALLCLOSE(h[0][1], zeros_on({3, 2}, dev), 0.0, 0.0);
    const auto hv = F::hvp(square_plus_y, xy, xy).second;
    CHECK_ALLCLOSE(hv[0], x * 2.0, 0.0, 0.0);
    CHECK_ALLCLOSE(hv[1], zeros_on({2}, dev), 0.0, 0.0);
    const auto vh = F::vhp(square_plus_y, xy, xy).second;
    CHECK_ALLCLOSE(vh[0], x * 2.0, 0.0, 0.0);
    CHECK_ALLCLOSE(vh[1], zeros_on({2}, dev), 0.0, 0.0);
  }
}

TEST_CASE("functional: create_graph=true makes every result differentiable again", "[autograd][functional]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor x = f64({0.5, -1, 2}, {3}, dev).requires_grad_(true);
    const Tensor v = f64({1, 3, -2}, {3}, dev);
    const F::TensorFunction cube_sum = [](const Tensor& t) { return (t * t * t).sum(); };
    const F::TensorFunction cube = [](const Tensor& t) { return t * t * t; };
    auto d_dx = [&](const Tensor& r) { return autograd::grad({r.sum()}, {x})[0]; };

    // Without create_graph: detached results.
    CHECK_FALSE(F::vjp(cube_sum, x).second.requires_grad());
    CHECK_FALSE(F::hessian(cube_sum, x).requires_grad());

    const Tensor g = F::vjp(cube_sum, x, Tensor(), true).second;  // 3 x^2
    REQUIRE(g.requires_grad());
    CHECK_ALLCLOSE(g, f64({0.75, 3, 12}, {3}, dev), 1e-15, 0.0);
    CHECK_ALLCLOSE(d_dx(g), f64({3, -6, 12}, {3}, dev), 1e-15, 0.0);  // 6 x

    const Tensor jv = F::jvp(cube, x, v, true).second;  // 3 x^2 v
    REQUIRE(jv.requires_grad());
    CHECK_ALLCLOSE(d_dx(jv), f64({3, -18, -24}, {3}, dev), 1e-15, 0.0);  // 6 x v

    const Tensor j = F::jacobian(cube, x, true);  // diag(3 x^2)
    REQUIRE(j.requires_grad());
    CHECK_ALLCLOSE(d_dx(j), f64({3, -6, 12}, {3}, dev), 1e-15, 0.0);

    const Tensor h = F::hessian(cube_sum, x, true);  // diag(6 x)
    REQUIRE(h.requires_grad());
    CHECK_ALLCLOSE(h, f64({3, 0, 0, 0, -6, 0, 0, 0, 12}, {3, 3}, dev), 1e-15, 0.0);
    CHECK_ALLCLOSE(d_dx(h), f64({6, 6, 6}, {3}, dev), 1e-15, 0.0);

    for (bool use_hvp : {true, false}) {
      INFO((use_hvp ? "hvp" : "vhp"));
      const Tensor p = use_hvp ? F::hvp(cube_sum, x, v, true).second : F::vhp(cube_sum, x, v, true).second;
      REQUIRE(p.requires_grad());
      CHECK_ALLCLOSE(p, f64({3, -18, -24}, {3}, dev), 1e-15, 0.0);       // 6 x v
      CHECK_ALLCLOSE(d_dx(p), f64({6, 18, -12}, {3}, dev), 1e-15, 0.0);  // 6 v
    }

    // Under NoGradGuard the functions still record what they need, and give plain results.
    NoGradGuard no_grad;
    const Tensor j2 = F::jacobian(cube, x);
    CHECK_ALLCLOSE(j2, f64({0.75, 0, 0, 0, 3, 0, 0, 0, 12}, {3, 3}, dev), 1e-15, 0.0);
    CHECK_FALSE(GradMode::is_enabled());
  }
}

TEST_CASE("functional: bad arguments are typed errors naming the function", "[autograd][functional]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor x = f64({0.5, -1, 2}, {3}, dev), y = f64({1, 2}, {2}, dev);
    const F::TensorFunction expf = [](const Tensor& t) { return t.exp(); };
    check_error<ValueError>([&] { F::vjp(expf, x, y); }, {"vjp", "v has shape [2]", "output 0 has shape [3]"});
    check_error<ValueError>([&] { F::vjp(expf, x); }, {"vjp", "v can be left out only", "[3]"});
    check_error<ValueError>([&] { F::jvp(expf, x); }, {"jvp", "v can be left out only"});
    check_error<ValueError>([&] { F::jvp(only_x, TL{x, y}, TL{x}); }, {"jvp", "v has 1 tensors", "2 inputs"});
    check_error<ValueError>([&] { F::hvp(only_x, TL{x, y}, TL{x, x}); }, {"hvp", "entry 1 of v", "input 1"});
    check_error<NotImplementedError>([&] { F::jacobian(expf, x, false, false, "forward-mode"); },
                                     {"jacobian", "forward-mode", "reverse-mode"});
    check_error<NotImplementedError>([&] { F::hessian(linear_sum, x, false, false, "forward-mode"); },
                                     {"hessian", "outer_jacobian_strategy"});
    check_error<ValueError>([&] { F::jacobian(expf, x, false, false, "sideways"); }, {"jacobian", "sideways"});
    check_error<ValueError>([&] { F::hessian(expf, x); }, {"hessian", "single tensor of one element", "[3]"});
    check_error<ValueError>([&] { F::vhp(expf, x, x); }, {"vhp", "single tensor of one element"});
    check_error<TypeError>([&] { F::jacobian(expf, x.to(kInt64)); }, {"jacobian", "input 0", "int64"});
    check_error<ValueError>([&] { F::jacobian(expf, Tensor()); }, {"jacobian", "input 0", "undefined"});
    check_error<ValueError>([&] { F::vjp(separate, TL{x, y}, TL{x, Tensor()}); }, {"vjp", "entry 1 of v", "undefined"});
    check_error<ValueError>([&] { F::jacobian([](const Tensor&) { return Tensor(); }, x); },
                            {"jacobian", "output 0 of the user-provided function", "undefined"});
    check_error<ValueError>([&] { F::jacobian(only_x, TL{}); }, {"jacobian", "no input"});
    // An integer output has no J v: PyTorch fails ("Only Tensors of floating point and complex
    // dtype can require gradients"); here a TypeError naming the output, strict or not.
    const F::TensorToListFunction with_argmax = [](const Tensor& t) { return TL{t * t, argmax(t, 0)}; };
    for (bool strict : {false, true})
      check_error<TypeError>([&] { F::jvp(with_argmax, x, x, false, strict); },
                             {"autograd::functional::jvp", "output 1 of the user-provided function", "int64"});
  }
}
