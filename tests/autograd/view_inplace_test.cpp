// Views and in-place ops (Note [Views and in-place ops]): a view used after an in-place op on
// its base follows the base's new history, and an in-place op on a view rebases its base's
// history (CopySlices). Expected gradients are computed by hand; gradcheck and gradgradcheck in
// float64 check the general case.
#include <wick/wick.h>

#include <catch2/catch.hpp>

#include "support/gradcheck.h"

using namespace wick;
using TL = std::vector<Tensor>;

namespace {
std::vector<double> grad_of(const Tensor& t) { return t.grad().to_vector<double>(); }
}  // namespace

TEST_CASE("a view used after an in-place op on its base follows the base", "[autograd][views]") {
  Tensor x = tensor({1.0, 2.0, 3.0}, kFloat64).requires_grad_();
  Tensor b = x * 1.0;
  Tensor v = b.narrow(0, 0, 2);
  b.mul_(2.0);  // v now holds 2 * x[0:2]
  CHECK(v.to_vector<double>() == std::vector<double>{2.0, 4.0});
  v.sum().backward();
  CHECK(grad_of(x) == std::vector<double>{2.0, 2.0, 0.0});
}

TEST_CASE("an in-place op on a view rebases its base", "[autograd][views]") {
  Tensor x = tensor({1.0, 2.0, 3.0}, kFloat64).requires_grad_();
  Tensor b = x * 1.0;
  b.narrow(0, 0, 2).mul_(3.0);
  CHECK(b.to_vector<double>() == std::vector<double>{3.0, 6.0, 3.0});
  (b * tensor({1.0, 10.0, 100.0}, kFloat64)).sum().backward();
  CHECK(grad_of(x) == std::vector<double>{3.0, 30.0, 100.0});
}

TEST_CASE("copy_ into a view sends the gradient of that slice to the source", "[autograd][views]") {
  Tensor x = tensor({1.0, 2.0, 3.0}, kFloat64).requires_grad_();
  Tensor y = tensor({7.0}, kFloat64).requires_grad_();
  Tensor b = x * 1.0;
  b.narrow(0, 1, 1).copy_(y * 2.0);
  CHECK(b.to_vector<double>() == std::vector<double>{1.0, 14.0, 3.0});
  (b * tensor({1.0, 2.0, 3.0}, kFloat64)).sum().backward();
  CHECK(grad_of(x) == std::vector<double>{1.0, 0.0, 3.0});  // x[1] was overwritten
  CHECK(grad_of(y) == std::vector<double>{4.0});            // 2 (weight) * 2 (y * 2)
}

TEST_CASE("sibling and nested views see each other's in-place writes", "[autograd][views]") {
  Tensor x = tensor({1.0, 2.0, 3.0, 4.0}, kFloat64).requires_grad_();
  Tensor b = x * 1.0;
  Tensor v1 = b.narrow(0, 0, 2);
  Tensor v2 = b.narrow(0, 1, 2);
  Tensor inner = b.narrow(0, 1, 3).narrow(0, 2, 1);  // b[3], through a view of a view
  v1.mul_(2.0);                                      // b = [2 x0, 2 x1, x2, x3]
  inner.add_(v2.sum());                              // b[3] = x3 + 2 x1 + x2
  CHECK(b.to_vector<double>() == std::vector<double>{2.0, 4.0, 3.0, 11.0});
  b.sum().backward();  // 2 x0 + 4 x1 + 2 x2 + x3
  CHECK(grad_of(x) == std::vector<double>{2.0, 4.0, 2.0, 1.0});
}

TEST_CASE("in-place ops on views pass gradcheck and gradgradcheck", "[autograd][views]") {
  wick::manual_seed(11);
  auto f = [](const TL& in) {
    Tensor b = in[0] * 1.5;                   // [3, 4]
    b.narrow(1, 0, 2).mul_(in[1]);            // columns 0-1 scaled by y [3, 2]
    b.t().select(0, 3).add_(b.select(1, 0));  // column 3 += column 0 (through a transposed view)
    b.select(0, 2).copy_(in[1].sum(1).exp().narrow(0, 0, 1).expand({4}));  // row 2 overwritten
    return TL{b * b};
  };
  const TL inputs{wick::randn({3, 4}, kFloat64).requires_grad_(), wick::randn({3, 2}, kFloat64).requires_grad_()};
  CHECK_GRADCHECK(f, inputs);
  CHECK_GRADGRADCHECK(f, inputs);
}

TEST_CASE("in-place ops on views that PyTorch refuses are refused", "[autograd][views]") {
  Tensor x = tensor({1.0, 2.0, 3.0}, kFloat64).requires_grad_();
  CHECK_THROWS_WITH(x.narrow(0, 0, 2).mul_(2.0), Catch::Contains("a view of a leaf tensor that requires grad"));
  Tensor b = tensor({1.0}, kFloat64).requires_grad_() * 1.0;
  Tensor e = b.expand({3});
  CHECK_THROWS_WITH(e.add_(1.0), Catch::Contains("share memory"));
  CHECK(b.to_vector<double>() == std::vector<double>{1.0});  // nothing was written
  // Without recording, nothing is refused and nothing is rebased.
  {
    NoGradGuard g;
    x.narrow(0, 0, 2).mul_(2.0);
  }
  CHECK(x.to_vector<double>() == std::vector<double>{2.0, 4.0, 3.0});
}

TEST_CASE("a stale view of a non-contiguous base finds its positions", "[autograd][views]") {
  // l is a transposed (non-contiguous) leaf; the no-grad update bumps the version its view v
  // shares, so v derives its grad_fn again, mapping its elements through l's strides.
  Tensor l = wick::arange(0.0, 12.0, 1.0, kFloat64).reshape({3, 4}).t().detach().requires_grad_();
  Tensor v = l.narrow(0, 1, 2);  // rows 1-2 of [4, 3]
  {
    NoGradGuard g;
    l.mul_(2.0);
  }
  Tensor w = wick::arange(1.0, 7.0, 1.0, kFloat64).reshape({2, 3});
  (v * w).sum().backward();
  CHECK(l.grad().to_vector<double>() == std::vector<double>{0, 0, 0, 1, 2, 3, 4, 5, 6, 0, 0, 0});
}

TEST_CASE("writing a gradient-requiring value into a view of a plain tensor gives the tensor history",
          "[autograd][views]") {
  Tensor y = tensor({5.0, 6.0}, kFloat64).requires_grad_();
  Tensor buf = wick::zeros({4}, kFloat64);  // requires no grad
  buf.narrow(0, 1, 2).copy_(y * 3.0);
  CHECK(buf.requires_grad());
  CHECK(buf.to_vector<double>() == std::vector<double>{0.0, 15.0, 18.0, 0.0});
  (buf * tensor({1.0, 2.0, 4.0, 8.0}, kFloat64)).sum().backward();
  CHECK(grad_of(y) == std::vector<double>{6.0, 12.0});
}

// PyTorch's rule (test_autograd.py, "A view was created in no_grad mode"): a view made under
// NoGradGuard does not know its base, so a recorded in-place op on it would leave the base without
// the op's history and its gradient silently wrong. Such ops are refused; the others are not.
TEST_CASE("a recorded in-place op on a view made under NoGradGuard is refused", "[autograd][views]") {
  Tensor x = tensor({1.0, 2.0, 3.0}, kFloat64).requires_grad_();
  Tensor y = tensor({5.0, 6.0}, kFloat64).requires_grad_();
  Tensor b = x * 1.0;
  Tensor buf = wick::zeros({4}, kFloat64);
  Tensor vb, vbuf;
  {
    NoGradGuard g;
    vb = b.narrow(0, 0, 2);
    vbuf = buf.narrow(0, 1, 2);
  }
  CHECK_THROWS_AS(vb.add_(y), StateError);
  CHECK_THROWS_WITH(vbuf.copy_(y * 3.0), Catch::Contains("view made under NoGradGuard"));
  // A view of such a view, made with grad mode on, is refused too.
  CHECK_THROWS_WITH(vbuf.narrow(0, 0, 1).mul_(y.narrow(0, 0, 1)), Catch::Contains("NoGradGuard"));
  // Nothing was written, and the base's history is untouched.
  CHECK(b.to_vector<double>() == std::vector<double>{1.0, 2.0, 3.0});
  CHECK(buf.to_vector<double>() == std::vector<double>{0.0, 0.0, 0.0, 0.0});
  CHECK(!buf.requires_grad());
  b.sum().backward();
  CHECK(grad_of(x) == std::vector<double>{1.0, 1.0, 1.0});

  // Not recorded, so not refused: no operand requires grad, or grad mode is off at the op too.
  vbuf.add_(1.0);
  vbuf.mul_(tensor({2.0, 3.0}, kFloat64));
  {
    NoGradGuard g;
    vbuf.add_(y);
  }
  CHECK(buf.to_vector<double>() == std::vector<double>{0.0, 7.0, 9.0, 0.0});
  CHECK(!buf.requires_grad());
  CHECK(!vbuf.requires_grad());
}
