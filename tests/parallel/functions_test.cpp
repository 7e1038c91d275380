// The differentiable comm functions on CPU devices: ports of PyTorch's test_scatter and
// test_gather (test_data_parallel.py), test_broadcast_double_backwards,
// test_broadcast_not_requiring_grad and test_broadcast_no_grad (test_nn.py), LibTorch's
// DifferentiableScatter and DifferentiableGather (ParallelTest), and double backward through all
// four.
#include "wick/parallel/functions.h"

#include <catch2/catch.hpp>

#include "parallel/parallel_test_util.h"
#include "support/gradcheck.h"

using namespace wick;
using namespace wick::parallel;
using wick::test::check_gradgrad;
using wick::test::cpu;
using wick::test::f64;

TEST_CASE("Broadcast: gradcheck and gradgradcheck (test_broadcast_double_backwards)") {
  std::vector<Tensor> inputs;
  for (int i = 0; i < 3; ++i) inputs.push_back(randn({4, 4}, f64().requires_grad()));
  auto fn = [](const TensorList& x) { return Broadcast::apply({cpu(0), cpu(1)}, x); };
  CHECK_GRADCHECK(fn, inputs);
  check_gradgrad(fn, inputs);
}

TEST_CASE("Broadcast: outputs require grad exactly as their inputs (test_broadcast_not_requiring_grad)") {
  const std::vector<bool> rg{true, false, false, true, true};
  std::vector<Tensor> vars;
  for (bool r : rg) vars.push_back(randn({1, 2}, f64().requires_grad(r)));
  auto out = Broadcast::apply({cpu(0), cpu(1)}, vars);
  REQUIRE(out.size() == 10);
  for (size_t k = 0; k < out.size(); ++k) {
    CHECK(out[k].requires_grad() == rg[k % 5]);
    CHECK(out[k].device() == cpu(static_cast<int>(k / 5)));
  }
  // a non-differentiable output on the source device is the input itself
  CHECK(out[1].is_same(vars[1]));
  // a differentiable one aliases it: same storage, same version counter, not a leaf
  CHECK(out[0].data_ptr() == vars[0].data_ptr());
  CHECK_FALSE(out[0].is_leaf());
  const uint32_t v = vars[0].version();
  NoGradGuard ng;
  out[0].add_(1.0);
  CHECK(vars[0].version() == v + 1);
}

TEST_CASE("Broadcast: under no-grad no output requires grad (test_broadcast_no_grad)") {
  Tensor x = randn({1, 2}, f64().requires_grad());
  std::vector<Tensor> out;
  {
    NoGradGuard ng;
    out = Broadcast::apply({cpu(0), cpu(1)}, {x});
  }
  CHECK(x.requires_grad());
  for (auto& o : out) CHECK_FALSE(o.requires_grad());
}

TEST_CASE("Broadcast: backward sums on the source, unused outputs count as zeros") {
  Tensor a = randn({3}, f64().requires_grad());
  Tensor b = randn({2}, f64().requires_grad());
  Tensor frozen = randn({2}, f64());
  auto out = Broadcast::apply({cpu(0), cpu(1), cpu(2)}, {a, b, frozen});
  REQUIRE(out.size() == 9);
  // use a on every device with weights 1, 2, 3; b only on cpu:2
  Tensor loss = out[0].sum() + (out[3] * 2.0).sum().to(cpu(0)) + (out[6] * 3.0).sum().to(cpu(0)) +
                out[7].sum().to(cpu(0)) + (out[8] * 0.0).sum().to(cpu(0));
  loss.backward();
  CHECK(a.grad().device() == cpu(0));
  CHECK_VALUES(a.grad(), {6.0, 6.0, 6.0});
  CHECK_VALUES(b.grad(), {1.0, 1.0});
  CHECK_FALSE(frozen.grad().defined());
  // an input whose outputs are all unused still gets a zero gradient once any output is used
  Tensor c = randn({2}, f64().requires_grad());
  Tensor d = randn({2}, f64().requires_grad());
  auto out2 = Broadcast::apply({cpu(0), cpu(1)}, {c, d});
  out2[2].sum().backward();
  CHECK_VALUES(c.grad(), {1.0, 1.0});
  REQUIRE(d.grad().defined());
  CHECK_VALUES(d.grad(), {0.0, 0.0});
}

TEST_CASE("Broadcast: errors") {
  Tensor a = randn({2}), b = randn({2}, TensorOptions().device(cpu(1)));
  CHECK_THROWS_WITH(Broadcast::apply({cpu(0), cpu(1)}, {a, b}), Catch::Contains("All tensors must be on devices[0]"));
  CHECK_THROWS_WITH(Broadcast::apply({}, {a}), Catch::Contains("Expected at least one device"));
  CHECK(Broadcast::apply({cpu(0), cpu(1)}, {}).empty());
}

TEST_CASE("ReduceAddCoalesced: forward, gradcheck and gradgradcheck") {
  Tensor a0 = randn({2, 3}, f64().requires_grad()), b0 = randn({4}, f64().requires_grad());
  Tensor a1 = randn({2, 3}, f64(cpu(1)).requires_grad()), b1 = randn({4}, f64(cpu(1)).requires_grad());
  auto out = ReduceAddCoalesced::apply(cpu(0), 2, {a0, b0, a1, b1});
  REQUIRE(out.size() == 2);
  CHECK(out[0].device() == cpu(0));
  CHECK_ALLCLOSE(out[0], a0 + a1.to(cpu(0)), 0, 0);
  CHECK_ALLCLOSE(out[1], b0 + b1.to(cpu(0)), 0, 0);
  auto fn = [](const TensorList& x) { return ReduceAddCoalesced::apply(cpu(0), 2, x); };
  CHECK_GRADCHECK(fn, {a0, b0, a1, b1});
  check_gradgrad(fn, {a0, b0, a1, b1});
  // onto the second group's device
  auto fn1 = [](const TensorList& x) { return ReduceAddCoalesced::apply(cpu(1), 2, x); };
  CHECK_GRADCHECK(fn1, {a0, b0, a1, b1});
  check_gradgrad(fn1, {a0, b0, a1, b1});
  CHECK_THROWS_WITH(ReduceAddCoalesced::apply(cpu(0), 3, {a0, b0, a1, b1}), Catch::Contains("device-major"));
}

TEST_CASE("Scatter: chunks, routed backward, gradcheck (test_scatter_cpu)") {
  for (Device src : {cpu(0), cpu(2)}) {
    Tensor x = randn({4, 4}, f64(src).requires_grad());
    auto result = Scatter::apply({cpu(0), cpu(1)}, x);
    REQUIRE(result.size() == 2);
    CHECK(result[0].device() == cpu(0));
    CHECK(result[1].device() == cpu(1));
    CHECK_VALUES_EQUAL(result[0], x.narrow(0, 0, 2));
    CHECK_VALUES_EQUAL(result[1], x.narrow(0, 2, 2));
    result[0].backward(full({2, 4}, 2.0, f64(cpu(0))));
    CHECK(x.grad().device() == src);
    CHECK_VALUES_EQUAL(x.grad().narrow(0, 0, 2), full({2, 4}, 2.0, f64()));
    CHECK_VALUES_EQUAL(x.grad().narrow(0, 2, 2), zeros({2, 4}, f64()));
    Tensor y = randn({4, 4}, f64(src).requires_grad());
    auto fn = [](const TensorList& in) { return Scatter::apply({cpu(0), cpu(1)}, in[0]); };
    CHECK_GRADCHECK(fn, {y});
    check_gradgrad(fn, {y});
    auto fn_sizes = [](const TensorList& in) { return Scatter::apply({cpu(1), cpu(0), cpu(1)}, in[0], {1, 0, 3}, -2); };
    CHECK_GRADCHECK(fn_sizes, {y});
    check_gradgrad(fn_sizes, {y});
  }
}

TEST_CASE("Gather: concatenation, routed backward, gradcheck, scalars (test_gather_cpu/gpu)") {
  for (Device dest : {cpu(0), cpu(2)}) {
    Tensor a = randn({2, 4}, f64(cpu(0)).requires_grad());
    Tensor b = randn({2, 4}, f64(cpu(1)).requires_grad());
    Tensor r = Gather::apply({a, b}, dest, 0);
    CHECK(r.device() == dest);
    CHECK(r.sizes() == IntArrayRef({4, 4}));
    CHECK_VALUES_EQUAL(r.narrow(0, 0, 2), a);
    CHECK_VALUES_EQUAL(r.narrow(0, 2, 2), b);
    Tensor grad = randn({4, 4}, f64(dest));
    r.backward(grad);
    CHECK(a.grad().device() == cpu(0));
    CHECK(b.grad().device() == cpu(1));
    CHECK_VALUES_EQUAL(a.grad(), grad.narrow(0, 0, 2));
    CHECK_VALUES_EQUAL(b.grad(), grad.narrow(0, 2, 2));
    auto fn = [dest](const TensorList& in) { return TensorList{Gather::apply(in, dest, 0)}; };
    CHECK_GRADCHECK(fn, {a.detach().requires_grad_(), b.detach().requires_grad_()});
    check_gradgrad(fn, {a.detach().requires_grad_(), b.detach().requires_grad_()});
    auto fn1 = [dest](const TensorList& in) { return TensorList{Gather::apply(in, dest, -1)}; };
    check_gradgrad(fn1, {a.detach().requires_grad_(), b.detach().requires_grad_()});

    // 0-dim inputs: a vector with one element per input
    Tensor s0 = scalar_tensor(3.0, f64(cpu(0))).requires_grad_();
    Tensor s1 = scalar_tensor(5.0, f64(cpu(1))).requires_grad_();
    Tensor v = Gather::apply({s0, s1}, dest, 0);
    CHECK(v.sizes() == IntArrayRef({2}));
    CHECK_VALUES(v, {3.0, 5.0});
    v.backward(tensor({7.0, 11.0}, f64(dest)));
    CHECK(s0.grad().dim() == 0);
    CHECK(s0.grad().item<double>() == 7.0);
    CHECK(s1.grad().item<double>() == 11.0);
    CHECK(s1.grad().device() == cpu(1));
    CHECK_GRADCHECK(fn, {s0.detach().requires_grad_(), s1.detach().requires_grad_()});
    check_gradgrad(fn, {s0.detach().requires_grad_(), s1.detach().requires_grad_()});
  }
}

TEST_CASE("Scatter from one device onto two others (DifferentiableScatter)") {
  Tensor input = ones({10}, f64(cpu(0)).requires_grad());
  auto out = Scatter::apply({cpu(1), cpu(2)}, input);
  REQUIRE(out.size() == 2);
  CHECK(out[0].numel() == 5);
  CHECK(out[1].numel() == 5);
  CHECK_VALUES_EQUAL(cat({out[0].to(cpu(0)), out[1].to(cpu(0))}), input);
  Tensor total = out[0].to(cpu(2)) + out[1];
  total.backward(ones_like(total));
  REQUIRE(input.grad().defined());
  CHECK(input.grad().device() == cpu(0));
  CHECK(input.grad().sum().item<double>() == 10.0);
}

TEST_CASE("Gather onto a third device (DifferentiableGather)") {
  Tensor a = ones({5}, f64(cpu(0)).requires_grad());
  Tensor b = ones({5}, f64(cpu(1)).requires_grad());
  Tensor out = Gather::apply({a, b}, cpu(1), 0);
  CHECK(out.numel() == 10);
  CHECK(out.device() == cpu(1));
  auto chunks = out.chunk(2);
  CHECK_VALUES_EQUAL(chunks[0], a);
  CHECK_VALUES_EQUAL(chunks[1], b);
  out.backward(ones_like(out));
  CHECK(a.grad().device() == cpu(0));
  CHECK(a.grad().sum().item<double>() == 5.0);
  CHECK(b.grad().device() == cpu(1));
  CHECK(b.grad().sum().item<double>() == 5.0);
}

TEST_CASE("double backward through Scatter -> Broadcast -> Gather") {
  // y = gather(scatter(x) * broadcast(w)); d/dw of sum((dy/dx)^2) needs all four twice
  Tensor x = randn({4, 3}, f64().requires_grad());
  Tensor w = randn({3}, f64().requires_grad());
  auto fn = [](const TensorList& in) {
    auto xs = Scatter::apply({cpu(0), cpu(1)}, in[0]);
    auto ws = Broadcast::apply({cpu(0), cpu(1)}, {in[1]});
    std::vector<Tensor> ys{xs[0] * xs[0] * ws[0], xs[1] * xs[1] * ws[1]};
    return TensorList{Gather::apply(ys, cpu(0), 0)};
  };
  CHECK_GRADCHECK(fn, {x, w});
  check_gradgrad(fn, {x, w});
}
