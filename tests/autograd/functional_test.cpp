// wick::autograd::functional against PyTorch 1.13's torch.autograd.functional: the oracle's
// functional_* cases (generate.py's functional_cases: vjp, jvp, jacobian, hessian, hvp, vhp of
// nonlinear functions of one and two inputs, float64) for values and result shapes, on every test
// device, with CPU-kind devices giving bit-identical results; and cases worked by hand (the
// jacobian of A x is A, the hessian of x^T A x is A + A^T, and the products built from them).
// functional_strict_test.cpp holds strict mode, zeros, create_graph and bad arguments.
#include "wick/autograd/functional.h"

#include <catch2/catch.hpp>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/oracle.h"
#include "support/small_tensors.h"
#include "wick/autograd/functions.h"

using namespace wick;
namespace F = wick::autograd::functional;
using wick::test::OracleCase;

namespace {
constexpr double kRtol = 1e-10, kAtol = 1e-13;

// The oracle's functions (generate.py's functional_cases), one per kind of signature.
const F::TensorFunction mm_tanh = [](const Tensor& x) { return x.matmul(x.t()).tanh(); };
const F::TensorFunction lse_sq = [](const Tensor& x) { return x.exp().sum().log() * x.square().sum(); };
const F::ListToTensorFunction exp_sin = [](const std::vector<Tensor>& a) { return (a[0].exp() * a[1].sin()).sum(); };
const F::ListFunction tanh_matvec = [](const std::vector<Tensor>& a) {
  return std::vector<Tensor>{a[0].matmul(a[1]).tanh(), a[0].sin().sum({0}) * a[1]};
};

// Results in PyTorch's order, flattened out of their nesting.
void append(std::vector<Tensor>& r, const Tensor& t) { r.push_back(t); }
template <class T>
void append(std::vector<Tensor>& r, const std::vector<T>& ts) {
  for (const T& t : ts) append(r, t);
}
template <class A, class B>
void append(std::vector<Tensor>& r, const std::pair<A, B>& p) {
  append(r, p.first);
  append(r, p.second);
}

// A list as the argument type In (Tensor: its one tensor, or undefined when empty).
template <class In>
In as(const std::vector<Tensor>& ts) {
  if constexpr (std::is_same_v<In, Tensor>)
    return ts.empty() ? Tensor() : ts[0];
  else
    return ts;
}

// Runs `op` with the overload of Fn; xs are the function's inputs, vs the case's v tensors.
template <class Fn>
std::vector<Tensor> run(const std::string& op, const Fn& f, const std::vector<Tensor>& xs,
                        const std::vector<Tensor>& vs) {
  constexpr bool one_in = std::is_same_v<Fn, F::TensorFunction> || std::is_same_v<Fn, F::TensorToListFunction>;
  constexpr bool one_out = std::is_same_v<Fn, F::TensorFunction> || std::is_same_v<Fn, F::ListToTensorFunction>;
  using In = std::conditional_t<one_in, Tensor, std::vector<Tensor>>;
  using Out = std::conditional_t<one_out, Tensor, std::vector<Tensor>>;
  const In x = as<In>(xs);
  std::vector<Tensor> r;
  if (op == "functional_vjp") append(r, F::vjp(f, x, as<Out>(vs)));
  if (op == "functional_jvp") append(r, F::jvp(f, x, as<In>(vs)));
  if (op == "functional_jacobian") append(r, F::jacobian(f, x));
  if constexpr (one_out) {
    if (op == "functional_hessian") append(r, F::hessian(f, x));
    if (op == "functional_hvp") append(r, F::hvp(f, x, as<In>(vs)));
    if (op == "functional_vhp") append(r, F::vhp(f, x, as<In>(vs)));
  }
  return r;
}

std::vector<Tensor> run_case(const OracleCase& c, Device dev) {
  const std::vector<Tensor> ins = c.leaves(dev);  // nothing differentiable: plain tensors
  const auto n = c.kwargs.at("inputs").get<size_t>();
  const std::vector<Tensor> xs(ins.begin(), ins.begin() + static_cast<std::ptrdiff_t>(n));
  const std::vector<Tensor> vs(ins.begin() + static_cast<std::ptrdiff_t>(n), ins.end());
  const std::string fn = c.kwargs.at("fn").get<std::string>();
  if (fn == "mm_tanh") return run(c.op, mm_tanh, xs, vs);
  if (fn == "lse_sq") return run(c.op, lse_sq, xs, vs);
  if (fn == "exp_sin") return run(c.op, exp_sin, xs, vs);
  REQUIRE(fn == "tanh_matvec");
  return run(c.op, tanh_matvec, xs, vs);
}

Tensor flat_cat(const std::vector<Tensor>& ts) {
  std::vector<Tensor> flat;
  for (const Tensor& t : ts) flat.push_back(t.reshape({-1}));
  return cat(flat, 0);
}

using wick::test::f64;
}  // namespace

TEST_CASE("functional: vjp, jvp, jacobian, hessian, hvp and vhp match PyTorch 1.13 on every device",
          "[autograd][oracle][functional]") {
  int checked = 0;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op.rfind("functional_", 0) != 0) continue;
    const auto shapes = c.kwargs.at("shapes").get<std::vector<std::vector<int64_t>>>();
    Tensor on_cpu;
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      const std::vector<Tensor> r = run_case(c, dev);
      REQUIRE(r.size() == shapes.size());
      for (size_t k = 0; k < r.size(); ++k) {
        INFO("result " << k);
        CHECK(r[k].sizes() == IntArrayRef(shapes[k]));
        CHECK(r[k].device() == dev);
        CHECK(r[k].dtype() == kFloat64);
        CHECK_FALSE(r[k].requires_grad());  // create_graph=false: detached
      }
      const Tensor all = flat_cat(r);
      CHECK_ALLCLOSE(all, c.out, kRtol, kAtol);
      if (dev == kCPU) on_cpu = all;
      if (!dev.is_cuda()) CHECK_ALLCLOSE(all, on_cpu, 0.0, 0.0);  // CPU kernels: the same bits
    }
    ++checked;
  }
  CHECK(checked == 15);  // generate.py's functional_cases
}

TEST_CASE("functional: the jacobian of A x is A, and of (A, x) -> A x the selector and A", "[autograd][functional]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor a = f64({1, -2, 0.5, 3, 0, 4, -1, 2, 7, 1, 1, -3}, {3, 4}, dev);
    const Tensor x = f64({0.5, -1, 2, 3}, {4}, dev);
    const Tensor j = F::jacobian([&](const Tensor& t) { return a.matmul(t); }, x);
    CHECK(j.sizes() == IntArrayRef{3, 4});
    CHECK_ALLCLOSE(j, a, 0.0, 0.0);

    const auto both = F::jacobian([](const std::vector<Tensor>& t) { return t[0].matmul(t[1]); }, {a, x});
    REQUIRE(both.size() == 2);
    CHECK(both[0].sizes() == IntArrayRef{3, 3, 4});  // d (A x)_k / d A_ij = [k == i] x_j
    CHECK_ALLCLOSE(both[0], eye(3, TensorOptions(kFloat64).device(dev)).reshape({3, 3, 1}) * x, 0.0, 0.0);
    CHECK_ALLCLOSE(both[1], a, 0.0, 0.0);

    // jvp: A v; vjp: A^T u.
    const Tensor v = f64({1, 2, -1, 0.5}, {4}, dev), u = f64({2, -1, 3}, {3}, dev);
    const auto [out, jv] = F::jvp([&](const Tensor& t) { return a.matmul(t); }, x, v);
    CHECK_ALLCLOSE(out, a.matmul(x), 0.0, 0.0);
    CHECK_ALLCLOSE(jv, f64({-2, 10, 6.5}, {3}, dev), 1e-15, 0.0);
    const auto [out2, uj] = F::vjp([&](const Tensor& t) { return a.matmul(t); }, x, u);
    CHECK_ALLCLOSE(uj, f64({23, -5, 5, -5}, {4}, dev), 1e-15, 0.0);

    // A function of one tensor with two outputs: one jacobian each.
    const auto two = F::jacobian([&](const Tensor& t) { return std::vector<Tensor>{a.matmul(t), t.sum()}; }, x);
    REQUIRE(two.size() == 2);
    CHECK_ALLCLOSE(two[0], a, 0.0, 0.0);
    CHECK(two[1].sizes() == IntArrayRef{4});  // a 0-dim output: the input's shape
    CHECK_ALLCLOSE(two[1], f64({1, 1, 1, 1}, {4}, dev), 0.0, 0.0);
  }
}

TEST_CASE("functional: the hessian of x^T A x is A + A^T, hvp and vhp multiply by it", "[autograd][functional]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor a = f64({2, 1, 0, -1, 3, 4, 0.5, 0, 1}, {3, 3}, dev);
    const Tensor sym = a + a.t();
    const Tensor x = f64({1, -2, 0.5}, {3}, dev), v = f64({0.5, 1, -2}, {3}, dev);
    const F::TensorFunction quad = [&](const Tensor& t) { return t.matmul(a.matmul(t)); };
    const Tensor h = F::hessian(quad, x);
    CHECK(h.sizes() == IntArrayRef{3, 3});
    CHECK_ALLCLOSE(h, sym, 1e-15, 0.0);
    const auto [f, hv] = F::hvp(quad, x, v);
    CHECK_ALLCLOSE(f, x.matmul(a.matmul(x)), 0.0, 0.0);
    CHECK_ALLCLOSE(hv, sym.matmul(v), 1e-15, 0.0);
    const auto [f2, vh] = F::vhp(quad, x, v);
    CHECK_ALLCLOSE(vh, v.matmul(sym), 1e-15, 0.0);

    // Two inputs: x^T A y has zero diagonal blocks, and A, A^T off the diagonal.
    const auto blocks = F::hessian([&](const std::vector<Tensor>& t) { return t[0].matmul(a.matmul(t[1])); }, {x, v});
    REQUIRE(blocks.size() == 2);
    REQUIRE(blocks[0].size() == 2);
    CHECK_ALLCLOSE(blocks[0][0], zeros({3, 3}, TensorOptions(kFloat64).device(dev)), 0.0, 0.0);
    CHECK_ALLCLOSE(blocks[0][1], a, 0.0, 0.0);
    CHECK_ALLCLOSE(blocks[1][0], a.t(), 0.0, 0.0);
    CHECK_ALLCLOSE(blocks[1][1], zeros({3, 3}, TensorOptions(kFloat64).device(dev)), 0.0, 0.0);

    // A scalar input may leave v out: f(s) = s^3 at 2 gives f' = 12, f'' = 12.
    const Tensor s = f64({2.0}, {}, dev);
    const F::TensorFunction cube = [](const Tensor& t) { return t * t * t; };
    CHECK(F::jvp(cube, s).second.item<double>() == 12.0);
    CHECK(F::vjp(cube, s).second.item<double>() == 12.0);
    CHECK(F::hvp(cube, s).second.item<double>() == 12.0);
    CHECK(F::vhp(cube, s).second.item<double>() == 12.0);
    CHECK(F::hessian(cube, s).item<double>() == 12.0);
  }
}
