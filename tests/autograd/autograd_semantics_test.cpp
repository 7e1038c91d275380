// Autograd semantics against PyTorch 1.13 (the expected values are what torch gives for the same
// program): .grad under create_graph, retain_graph's default, detach_ of a view, recorded in-place
// ops whose result type does not fit, gradients a node returns in another dtype or on another
// device, leaves that stop requiring grad, views whose base gained history after they were made,
// and retain_grad across in-place ops.
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <cmath>

#include "support/devices.h"

using namespace wick;

namespace {
std::vector<double> values(const Tensor& t) { return t.to(kCPU).to(kFloat64).to_vector<double>(); }
}  // namespace

TEST_CASE("autograd semantics: backward with create_graph stores a copy in .grad, never a shared gradient") {
  for (Device d : wick::test::test_devices()) {
    INFO(d);
    const auto opts = TensorOptions().dtype(kFloat64).device(d);
    // add's backward hands one tensor to both inputs, and the root gradient is the caller's.
    Tensor x = ones({3}, opts).requires_grad_(), y = ones({3}, opts).requires_grad_();
    Tensor g = ones({3}, opts);
    (x + y).backward(g, true, true);
    (x * 2.0).sum().backward();  // adds into x.grad in place
    CHECK(values(x.grad()) == std::vector<double>{3, 3, 3});
    CHECK(values(y.grad()) == std::vector<double>{1, 1, 1});
    CHECK(values(g) == std::vector<double>{1, 1, 1});
    // sum's backward is a stride-0 expand: .grad must still take an in-place add.
    Tensor w = ones({3}, opts).requires_grad_();
    w.sum().backward({}, true, true);
    w.sum().backward();
    CHECK(values(w.grad()) == std::vector<double>{2, 2, 2});
  }
}

TEST_CASE("autograd semantics: Tensor::backward keeps the graph under create_graph unless told otherwise") {
  Tensor x = tensor({1.0, 2.0}, TensorOptions().dtype(kFloat64)).requires_grad_();
  x.exp().sum().backward({}, std::nullopt, true);
  x.grad().sum().backward();  // through ExpBackward's graph again: x.grad = e^x + e^x
  const auto g = values(x.grad());
  CHECK(g[0] == Approx(2 * std::exp(1.0)));
  CHECK(g[1] == Approx(2 * std::exp(2.0)));
  // Told not to keep it, the second backward through the graph is refused.
  Tensor z = tensor({1.0, 2.0}, TensorOptions().dtype(kFloat64)).requires_grad_();
  z.exp().sum().backward({}, false, true);
  CHECK_THROWS_AS(z.grad().sum().backward(), StateError);
}

TEST_CASE("autograd semantics: detach_ of a view is refused, of any other tensor it detaches") {
  Tensor x = ones({4}).requires_grad_();
  Tensor b = x * 1.0;
  Tensor v = b.narrow(0, 0, 2);
  CHECK_THROWS_AS(v.detach_(), StateError);
  CHECK(v.requires_grad());  // unchanged
  b.detach_();
  CHECK_FALSE(b.requires_grad());
  CHECK(b.grad_fn() == nullptr);
}

TEST_CASE("autograd semantics: a recorded in-place op whose result cannot be written back is a TypeError") {
  Tensor i = zeros({3}, kInt64);
  Tensor w = tensor({0.5, 1.5, 2.5}).requires_grad_();
  CHECK_THROWS_AS(i.add_(w), TypeError);
  CHECK_THROWS_AS(i.mul_(w), TypeError);
  CHECK(i.to_vector<int64_t>() == std::vector<int64_t>{0, 0, 0});  // nothing written
  CHECK_FALSE(i.requires_grad());
  {
    NoGradGuard no_grad;  // the unrecorded path refused it already
    CHECK_THROWS_AS(i.add_(w), TypeError);
  }
}

TEST_CASE("autograd semantics: a node's gradient in another floating dtype is converted, on another device refused") {
  Tensor x = ones({3}).requires_grad_();
  Tensor out = native::binary(BinaryOp::Mul, x, Scalar(2.0));
  autograd::record_function("DoubleBackward", {x}, {out},
                            [](const autograd::variable_list& g, const autograd::variable_list&) {
                              return autograd::variable_list{g[0].to(kFloat64) * 2.0};
                            });
  out.sum().backward();
  CHECK(x.grad().dtype() == kFloat32);
  CHECK(values(x.grad()) == std::vector<double>{2, 2, 2});

  Tensor z = ones({3}).requires_grad_();
  Tensor out2 = native::binary(BinaryOp::Mul, z, Scalar(2.0));
  autograd::record_function("ElsewhereBackward", {z}, {out2},
                            [](const autograd::variable_list& g, const autograd::variable_list&) {
                              return autograd::variable_list{g[0].to(Device("cpu:1"))};
                            });
  try {
    out2.sum().backward();
    FAIL("a gradient on another device was accepted");
  } catch (const ValueError& e) {
    CHECK_THAT(e.what(), Catch::Contains("ElsewhereBackward") && Catch::Contains("cpu:1"));
  }
  CHECK_FALSE(z.grad().defined());
}

TEST_CASE("autograd semantics: a leaf that stops requiring grad before backward gets no gradient") {
  Tensor w = ones({3}).requires_grad_();
  Tensor y = (w * 2.0).sum();
  int hooks = 0;
  w.register_post_accumulate_grad_hook([&](const Tensor&) { ++hooks; });
  w.requires_grad_(false);
  y.backward();
  CHECK_FALSE(w.grad().defined());
  CHECK(hooks == 0);
}

TEST_CASE("autograd semantics: a view made before its base gained history records its uses and in-place ops") {
  {
    Tensor y = tensor({5.0, 6.0}).requires_grad_();
    Tensor buf = zeros({4});
    Tensor allv = buf.narrow(0, 0, 3);  // base needs no grad yet
    buf.narrow(0, 0, 2).copy_(y);       // buf gains history (CopySlices)
    allv.mul_(2.0);                     // recorded through the refreshed view
    buf.sum().backward();
    CHECK(values(y.grad()) == std::vector<double>{2, 2});
    CHECK(values(buf.detach()) == std::vector<double>{10, 12, 0, 0});
  }
  {
    Tensor y = tensor({5.0, 6.0}).requires_grad_();
    Tensor buf = zeros({4});
    Tensor allv = buf.narrow(0, 0, 3);
    buf.narrow(0, 0, 2).copy_(y);
    ((allv * 3.0).sum() + y.sum()).backward();  // a KV-cache-like read of the refreshed view
    CHECK(values(y.grad()) == std::vector<double>{4, 4});
  }
}

TEST_CASE("autograd semantics: retain_grad follows the tensor across in-place ops and view refreshes") {
  {
    Tensor a = tensor({1.0, 2.0}).requires_grad_();
    Tensor b = a * 1.0;
    b.retain_grad();
    b.mul_(3.0);
    b.retain_grad();  // again: no second registration
    (b * tensor({10.0, 20.0})).sum().backward();
    CHECK(values(b.grad()) == std::vector<double>{10, 20});  // the gradient of b's current value
    CHECK(values(a.grad()) == std::vector<double>{30, 60});
  }
  {
    Tensor x = ones({4}).requires_grad_();
    Tensor bb = x * 1.0;
    Tensor v = bb.narrow(0, 0, 2);
    v.retain_grad();
    bb.mul_(2.0);  // v is now stale; its next use derives it from bb's new history
    (v * tensor({10.0, 20.0})).sum().backward();
    CHECK(values(v.grad()) == std::vector<double>{10, 20});
    CHECK(values(x.grad()) == std::vector<double>{20, 40, 0, 0});
  }
}

TEST_CASE("autograd semantics: autograd::grad runs only the branches that lead to its inputs") {
  // PyTorch 1.13: the hook does not fire, d.grad stays None, and y1's graph is still usable.
  Tensor a = tensor({1.0, 2.0}, TensorOptions().dtype(kFloat64)).requires_grad_();
  Tensor c = tensor({3.0, 4.0}, TensorOptions().dtype(kFloat64)).requires_grad_();
  int fired = 0;
  c.register_hook([&](const Tensor&) { ++fired; });
  Tensor y1 = c * c;
  Tensor d = c * 2.0;
  d.retain_grad();
  Tensor z = (a * a).sum() + y1.sum() + d.sum();
  const auto g = autograd::grad({z}, {a});
  CHECK(values(g[0]) == std::vector<double>{2, 4});
  CHECK(fired == 0);
  CHECK_FALSE(d.grad().defined());
  CHECK_FALSE(c.grad().defined());
  y1.sum().backward();  // its saved tensors were not released by grad()
  CHECK(values(c.grad()) == std::vector<double>{6, 8});
  CHECK(fired == 1);

  // A branch off the inputs' paths whose saved tensor was modified in place raises nothing.
  Tensor p = tensor({1.0, 2.0}, TensorOptions().dtype(kFloat64)).requires_grad_();
  Tensor q = tensor({1.0, 1.0}, TensorOptions().dtype(kFloat64)).requires_grad_();
  Tensor e = q.exp();  // ExpBackward saves its output
  Tensor w = (p * 3.0).sum() + e.sum();
  {
    NoGradGuard no_grad;
    e.add_(1.0);
  }
  CHECK(values(autograd::grad({w}, {p})[0]) == std::vector<double>{3, 3});

  // A non-leaf input whose own inputs lead to another input: both captured, in one pass.
  Tensor x = tensor({1.0, 2.0}, TensorOptions().dtype(kFloat64)).requires_grad_();
  Tensor h = x * x;
  Tensor out = (h * 5.0).sum();
  const auto both = autograd::grad({out}, {h, x});
  CHECK(values(both[0]) == std::vector<double>{5, 5});
  CHECK(values(both[1]) == std::vector<double>{10, 20});
  // With create_graph the captured gradients differentiate again.
  const auto gx = autograd::grad({(x * x * x).sum()}, {x}, {}, std::nullopt, true);
  CHECK(values(autograd::grad({gx[0].sum()}, {x})[0]) == std::vector<double>{6, 12});
}
