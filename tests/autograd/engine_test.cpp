// The backward engine: accumulation, retain_graph, deep graphs, saved-tensor version checks,
// grad() with create_graph, no-grad mode.
#include <wick/wick.h>

#include <catch2/catch.hpp>

#include "support/allclose.h"

using namespace wick;

TEST_CASE("gradients accumulate into leaves across backward calls") {
  Tensor x = tensor({1.0, 2.0, 3.0}, kFloat64).requires_grad_();
  (x * x).sum().backward();
  (x * x).sum().backward();
  // d/dx sum(x^2) = 2x, twice
  CHECK(x.grad().to_vector<double>() == std::vector<double>{4.0, 8.0, 12.0});
}

TEST_CASE("a leaf used twice receives the sum of both paths") {
  Tensor x = tensor({3.0}, kFloat64).requires_grad_();
  Tensor y = x * 2.0 + x * x;  // dy/dx = 2 + 2x = 8
  y.sum().backward();
  CHECK(x.grad().item<double>() == 8.0);
}

TEST_CASE("a leaf's first gradient never aliases another tensor") {
  // add's backward hands one gradient to both inputs: at most one leaf may take it over, and
  // accumulating into one leaf's grad must not change the other's.
  Tensor a = tensor({1.0, 2.0}, kFloat64).requires_grad_();
  Tensor b = tensor({3.0, 4.0}, kFloat64).requires_grad_();
  (a + b).backward(tensor({1.0, 1.0}, kFloat64));
  CHECK(a.grad().data_ptr() != b.grad().data_ptr());
  (a * 2.0).sum().backward();
  CHECK(a.grad().to_vector<double>() == std::vector<double>{3.0, 3.0});
  CHECK(b.grad().to_vector<double>() == std::vector<double>{1.0, 1.0});
  // A gradient the caller still holds is copied, not taken.
  Tensor c = tensor({5.0}, kFloat64).requires_grad_();
  Tensor g = tensor({2.0}, kFloat64);
  (c * 1.0).backward(g);
  (c * 1.0).backward(g);
  CHECK(g.item<double>() == 2.0);
  CHECK(c.grad().item<double>() == 4.0);
  // The retained gradient of a non-leaf and the leaf's gradient stay separate.
  Tensor x = tensor({1.0, 2.0}, kFloat64).requires_grad_();
  Tensor y = x + 0.0;
  y.retain_grad();
  y.sum().backward();
  Tensor gx = x.grad();
  gx.mul_(10.0);
  CHECK(y.grad().to_vector<double>() == std::vector<double>{1.0, 1.0});
}

TEST_CASE("a chain of 100000 ops back-propagates without overflowing the stack") {
  Tensor x = tensor({1.0}, kFloat64).requires_grad_();
  Tensor y = x;
  for (int i = 0; i < 100000; ++i) y = y * 1.0;
  y.sum().backward();
  CHECK(x.grad().item<double>() == 1.0);
  y = Tensor();  // the graph is destroyed iteratively as well
}

TEST_CASE("backward twice without retain_graph is an error naming retain_graph") {
  Tensor x = tensor({1.0, 2.0}, kFloat64).requires_grad_();
  Tensor y = (x.exp()).sum();
  y.backward(Tensor(), /*retain_graph=*/false);
  CHECK_THROWS_WITH(y.backward(), Catch::Contains("retain_graph"));
  Tensor z = (x.exp()).sum();
  z.backward(Tensor(), /*retain_graph=*/true);
  z.backward();
  CHECK(x.grad().at<double>({0}) == Approx(3 * std::exp(1.0)));
}

TEST_CASE("modifying a saved tensor in place makes backward fail with a clear error") {
  Tensor x = tensor({1.0, 2.0}, kFloat64).requires_grad_();
  Tensor a = x * 1.0;  // non-leaf
  Tensor y = a * a;    // saves a
  a.add_(1.0);         // bumps a's version
  CHECK_THROWS_WITH(y.sum().backward(), Catch::Contains("modified by an in-place operation"));
}

TEST_CASE("in-place ops on a leaf that requires grad are refused") {
  Tensor x = tensor({1.0}, kFloat64).requires_grad_();
  CHECK_THROWS_WITH(x.add_(1.0), Catch::Contains("leaf tensor that requires grad"));
  NoGradGuard g;
  x.add_(1.0);
  CHECK(x.item<double>() == 2.0);
}

TEST_CASE("in-place ops on non-leaves rebase the history") {
  Tensor x = tensor({1.0, 2.0}, kFloat64).requires_grad_();
  Tensor a = x * 2.0;
  a.mul_(a);  // a = (2x)^2, da/dx = 8x
  a.sum().backward();
  CHECK(x.grad().to_vector<double>() == std::vector<double>{8.0, 16.0});
}

TEST_CASE("no-grad mode records nothing") {
  Tensor x = tensor({1.0}, kFloat64).requires_grad_();
  NoGradGuard g;
  Tensor y = x * 2.0;
  CHECK_FALSE(y.requires_grad());
  CHECK(y.grad_fn() == nullptr);
}

TEST_CASE("autograd::grad returns gradients without touching .grad, and supports double backward") {
  Tensor x = tensor({2.0}, kFloat64).requires_grad_();
  Tensor y = x * x * x;  // y = x^3
  auto g = autograd::grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true);
  CHECK(g[0].item<double>() == 12.0);  // 3x^2
  CHECK_FALSE(x.grad().defined());
  auto gg = autograd::grad({g[0]}, {x});
  CHECK(gg[0].item<double>() == 12.0);  // 6x
}

TEST_CASE("grad of an unused input is an error unless allow_unused") {
  Tensor x = tensor({1.0}, kFloat64).requires_grad_();
  Tensor z = tensor({1.0}, kFloat64).requires_grad_();
  Tensor y = x * 2.0;
  CHECK_THROWS_WITH(autograd::grad({y}, {x, z}, {}, true), Catch::Contains("allow_unused"));
  auto g = autograd::grad({y}, {x, z}, {}, true, false, true);
  CHECK(g[0].item<double>() == 2.0);
  CHECK_FALSE(g[1].defined());
}

TEST_CASE("gradients flow through views") {
  Tensor x = arange(0, 6, 1, kFloat64).requires_grad_();
  Tensor v = x.view({2, 3}).transpose(0, 1).narrow(0, 1, 2);  // rows 1..2 of the transpose
  (v * v).sum().backward();
  // Elements used: columns 1 and 2 of the 2x3 view: x[1], x[2], x[4], x[5]
  CHECK(x.grad().to_vector<double>() == std::vector<double>{0, 2, 4, 0, 8, 10});
}

TEST_CASE("retain_grad keeps the gradient of a non-leaf") {
  Tensor x = tensor({1.0, 2.0}, kFloat64).requires_grad_();
  Tensor a = x * 3.0;
  a.retain_grad();
  (a * a).sum().backward();
  CHECK(a.grad().to_vector<double>() == std::vector<double>{6.0, 12.0});
}

TEST_CASE("gradcheck and gradgradcheck pass for a correct function and catch a wrong one") {
  Tensor x = randn({3}, kFloat64).requires_grad_();
  Tensor y = randn({3}, kFloat64).requires_grad_();
  auto f = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * in[1] * in[0], in[0].sum().exp()}; };
  CHECK(autograd::gradcheck(f, {x, y}).ok);
  CHECK(autograd::gradgradcheck(f, {x, y}).ok);
  // An output that depends on no input is allowed (its Jacobian rows are zero).
  auto g = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * 2.0, ones({2}, kFloat64)}; };
  CHECK(autograd::gradcheck(g, {x}).ok);
  // A deliberately wrong gradient must be caught: detach() hides one factor from autograd, so
  // the analytic derivative of x * x is x while the numerical one is 2x.
  auto wrong = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * in[0].detach()}; };
  CHECK_FALSE(autograd::gradcheck(wrong, {x}).ok);
}

// ---------------------------------------------------------------------------------------------
// Added with the Foundation test pass: graph lifetime, in-place rules, grad() corner cases.
// ---------------------------------------------------------------------------------------------

TEST_CASE("a chain of 100000 ops that save their inputs is destroyed without backward, iteratively") {
  // Each sin node saves its input, whose grad_fn is the previous node: destroying the last
  // output must not recurse once per node (Note [Iterative graph destruction]).
  Tensor x = tensor({0.5}, kFloat64).requires_grad_();
  Tensor y = x;
  for (int i = 0; i < 100000; ++i) y = y.sin() * 1.0;
  CHECK(y.requires_grad());
  y = Tensor();
  // and after a backward that retained the graph
  Tensor z = x;
  for (int i = 0; i < 100000; ++i) z = z.sin();
  z.sum().backward(Tensor(), /*retain_graph=*/true);
  CHECK(x.grad().defined());
  z = Tensor();
}

TEST_CASE("a leaf takes a gradient nothing else holds without a copy, and copies a shared one") {
  // Sole owner: the gradient the hook sees becomes x.grad itself (no copy, no allocation).
  Tensor x = randn({4, 3}).requires_grad_(true);
  const void* seen = nullptr;
  x.register_hook([&seen](const Tensor& g) {
    seen = g.data_ptr();
    return Tensor();
  });
  (x * 3.0).backward(ones({4, 3}));
  CHECK(seen != nullptr);
  CHECK(x.grad().data_ptr() == seen);
  CHECK(test::values(x.grad()) == std::vector<double>(12, 3.0));
  // Shared: add's backward hands one gradient to both inputs; each leaf gets its own copy.
  Tensor a = randn({5}).requires_grad_(true), b = randn({5}).requires_grad_(true);
  Tensor g = full({5}, 2.0);
  add(a, b).backward(g);
  CHECK(a.grad().data_ptr() != b.grad().data_ptr());
  CHECK(a.grad().data_ptr() != g.data_ptr());
  a.mutable_grad().add_(ones({5}));
  CHECK(test::values(b.grad()) == std::vector<double>(5, 2.0));
  CHECK(test::values(g) == std::vector<double>(5, 2.0));
}
