// gradcheck and gradgradcheck (float64) for every differentiable op of the tensor API of issue 14
// (docs/tensors.md, "Tensor API"). Inputs are random normals: no ties for sort/topk/max, no zeros
// for norms.
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <limits>

#include "support/gradcheck.h"

using namespace wick;
using TL = std::vector<Tensor>;

namespace {
Tensor R(IntArrayRef shape) { return randn(shape, TensorOptions(kFloat64).requires_grad()); }
Tensor mask_of(IntArrayRef shape) { return randn(shape, kFloat64).gt(0); }

}  // namespace

TEST_CASE("gradcheck: all-element reductions, std, var with correction and norms") {
  manual_seed(41);
  CHECK_GRADCHECKS([](const TL& x) { return TL{max(x[0]), min(x[0])}; }, {R({3, 4})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{x[0].var(), x[0].std()}; }, {R({4, 3})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{wick::std(x[0], {1}, false, true)}; }, {R({3, 5})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{var(x[0], {0}, std::optional<int64_t>(2), false)}; }, {R({6, 2})});
  CHECK_GRADCHECKS(
      [](const TL& x) {
        return TL{wick::std(x[0], {0, 2}, std::optional<int64_t>(0), true)};
      },
      {R({2, 3, 4})});
  const double inf = std::numeric_limits<double>::infinity();
  CHECK_GRADCHECKS([](const TL& x) { return TL{norm(x[0])}; }, {R({3, 4})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{norm(x[0], 2, {1}, true)}; }, {R({3, 4})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{norm(x[0], 2, {0, 2})}; }, {R({2, 3, 4})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{norm(x[0], 1, {0})}; }, {R({4, 3})});
  CHECK_GRADCHECKS([inf](const TL& x) { return TL{norm(x[0], inf, {-1}), norm(x[0], -inf, {0})}; }, {R({3, 5})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{norm(x[0], 3, {1}), norm(x[0], 0.5)}; }, {R({3, 4})});
  // p = 2 at a zero row: the gradient is 0 there (PyTorch's rule), not NaN.
  Tensor z = cat({zeros({1, 3}, kFloat64), randn({2, 3}, kFloat64)}).requires_grad_();
  Tensor n = norm(z, 2, {1});
  n.sum().backward();
  CHECK(z.grad()[0].abs().sum().item<double>() == 0.0);
  CHECK(z.grad().isfinite().all().item<bool>());
  // p = 0 counts nonzeros: a zero gradient.
  Tensor c = R({4});
  norm(c, 0).backward();
  CHECK(c.grad().abs().sum().item<double>() == 0.0);
}

TEST_CASE("gradcheck: cumsum, sort, topk and the masking ops") {
  manual_seed(42);
  CHECK_GRADCHECKS([](const TL& x) { return TL{cumsum(x[0], 1), cumsum(x[0], 0)}; }, {R({3, 4})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{x[0].cumsum(-1)}; }, {R({2, 3, 5})});
  CHECK_GRADCHECKS(
      [](const TL& x) {
        return TL{std::get<0>(sort(x[0], 1)), std::get<0>(sort(x[0], 0, true))};
      },
      {R({4, 5})});
  CHECK_GRADCHECKS(
      [](const TL& x) {
        return TL{std::get<0>(topk(x[0], 2, 1)), std::get<0>(topk(x[0], 3, 0, false))};
      },
      {R({4, 5})});
  Tensor m = mask_of({3, 4});
  CHECK_GRADCHECKS([m](const TL& x) { return TL{where(m, x[0], 0.5), where(m, -2.0, x[0])}; }, {R({3, 4})});
  CHECK_GRADCHECKS([m](const TL& x) { return TL{masked_fill(x[0], m, 1.5)}; }, {R({3, 4})});
  CHECK_GRADCHECKS([m](const TL& x) { return TL{masked_fill(x[0], m, x[1])}; }, {R({3, 4}), R({})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{tril(x[0]), triu(x[0], 1), tril(x[0], -2)}; }, {R({2, 4, 5})});
}

TEST_CASE("gradcheck: bmm, baddbmm, addmm, outer and dot") {
  manual_seed(43);
  CHECK_GRADCHECKS([](const TL& x) { return TL{bmm(x[0], x[1])}; }, {R({2, 3, 4}), R({2, 4, 5})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{baddbmm(x[0], x[1], x[2], 0.5, -2.0)}; },
                   {R({2, 3, 5}), R({2, 3, 4}), R({2, 4, 5})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{baddbmm(x[0], x[1], x[2])}; }, {R({5}), R({2, 3, 4}), R({2, 4, 5})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{addmm(x[0], x[1], x[2], 1.5, 0.25)}; },
                   {R({3, 5}), R({3, 4}), R({4, 5})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{addmm(x[0], x[1], x[2], 0)}; }, {R({1, 5}), R({3, 4}), R({4, 5})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{outer(x[0], x[1]), dot(x[0], x[2])}; }, {R({4}), R({3}), R({4})});
}

TEST_CASE("gradcheck: repeat, flip, roll, diag, unbind and silu") {
  manual_seed(44);
  CHECK_GRADCHECKS([](const TL& x) { return TL{repeat(x[0], {2, 1, 3}), x[0].repeat({1, 2})}; }, {R({3, 2})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{flip(x[0], {0, -1})}; }, {R({3, 4, 2})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{roll(x[0], {1, -2}, {0, 1}), roll(x[0], {3})}; }, {R({3, 4})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{diag(x[0]), diag(x[0], -2), diag(x[0], 1)}; }, {R({3})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{diag(x[0]), diag(x[0], 2), diag(x[0], -1)}; }, {R({4, 5})});
  CHECK_GRADCHECKS([](const TL& x) { return unbind(x[0], 1); }, {R({2, 3})});
  CHECK_GRADCHECKS([](const TL& x) { return TL{silu(x[0])}; }, {R({4, 5}) * 3.0});
}
