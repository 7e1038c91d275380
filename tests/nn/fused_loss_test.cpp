// The fused log_softmax (Note [Fused log_softmax]) and cross_entropy (Note [Fused cross_entropy])
// against the composites they replace, forward and backward, on every device; float64 gradchecks
// of the fused cross_entropy, once and twice differentiated.
#include <catch2/catch.hpp>
#include <limits>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/gradcheck.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/generator.h"
#include "wick/core/native.h"
#include "wick/nn/functional.h"

using namespace wick;
namespace F = wick::nn::functional;
using TL = std::vector<Tensor>;

TEST_CASE("fused log_softmax matches the composite, forward and backward", "[nn][fused]") {
  for (const Device d : test::test_devices()) {
    for (const DType dt : {kFloat32, kFloat64}) {
      CAPTURE(d, dt);
      manual_seed(7);
      const double tol = dt == kFloat32 ? 2e-6 : 1e-14;
      const TensorOptions o = TensorOptions(dt).device(d);
      for (const Tensor& x : {randn({5, 7}, o) * 10.0, randn({2, 3, 4}, o), randn({1, 1}, o), randn({6}, o)}) {
        const Tensor want = native::log_softmax_composite(x, -1);
        CHECK_ALLCLOSE(native::log_softmax(x, -1), want, tol, tol);
        const Tensor g = randn(x.sizes(), o);
        const Tensor ref = native::binary(
            BinaryOp::Sub, g,
            native::binary(BinaryOp::Mul, native::unary(UnaryOp::Exp, want), native::sum(g, {-1}, true)));
        CHECK_ALLCLOSE(native::log_softmax_backward(g, want, -1), ref, tol, tol);
      }
      // -inf entries (masked scores) give -inf, as the composite; a NaN spreads over its row.
      const double inf = std::numeric_limits<double>::infinity();
      Tensor m = tensor({0.0, -inf, 1.0, std::nan("")}, kFloat64).to(d).to(dt).reshape({2, 2});
      const std::vector<double> v = test::values(native::log_softmax(m, 1));
      CHECK(v[1] == -inf);
      CHECK(v[0] == 0.0);
      CHECK((std::isnan(v[2]) && std::isnan(v[3])));
      // Not the last dim, or a transposed input: the composite path, same values.
      const Tensor t = randn({4, 3}, o);
      CHECK_ALLCLOSE(native::log_softmax(t.t(), 1), native::log_softmax_composite(t.t(), 1), tol, tol);
      CHECK_ALLCLOSE(native::log_softmax(t, 0), native::log_softmax_composite(t, 0), tol, tol);
    }
  }
}

namespace {
// cross_entropy through the composite: the reference.
Tensor composite_ce(const Tensor& x, const Tensor& t, const Tensor& w, nn::Reduction r, int64_t ignore) {
  return F::nll_loss(log_softmax(x, 1), t, w, r, ignore);
}
}  // namespace

TEST_CASE("fused cross_entropy matches log_softmax plus nll_loss, forward and backward", "[nn][fused]") {
  for (const Device d : test::test_devices()) {
    for (const DType dt : {kFloat32, kFloat64}) {
      for (const nn::Reduction r : {nn::Reduction::Mean, nn::Reduction::Sum}) {
        CAPTURE(d, dt, static_cast<int>(r));
        manual_seed(8);
        const double tol = dt == kFloat32 ? 2e-6 : 1e-13;
        const TensorOptions o = TensorOptions(dt).device(d);
        const Tensor t = tensor(std::vector<int64_t>{0, 3, 2, 2, 1, 3}, {6}, kInt64).to(d);
        const Tensor w = rand({4}, o) + 0.5;
        for (const Tensor& cw : {Tensor(), w}) {
          for (const int64_t ignore : {int64_t{-100}, int64_t{2}}) {
            const Tensor x0 = randn({6, 4}, o);
            Tensor x1 = x0.detach().requires_grad_(true), x2 = x0.detach().requires_grad_(true);
            const Tensor got = F::cross_entropy(x1, t, cw, r, ignore), want = composite_ce(x2, t, cw, r, ignore);
            CHECK_ALLCLOSE(got, want, tol, tol);
            const Tensor g = tensor({1.7}, kFloat64).to(d).to(dt).reshape({});
            got.backward(g);
            want.backward(g);
            CHECK_ALLCLOSE(x1.grad(), x2.grad(), tol, tol);
          }
        }
        // Every target ignored: a mean is 0 / 0 = NaN, as PyTorch.
        if (r == nn::Reduction::Mean) {
          const Tensor all = full({6}, 2, TensorOptions(kInt64).device(d));
          CHECK(std::isnan(test::values(F::cross_entropy(randn({6, 4}, o), all, {}, r, 2))[0]));
        }
      }
    }
  }
}

TEST_CASE("gradcheck: fused cross_entropy, once and twice", "[nn][fused][gradcheck]") {
  manual_seed(9);
  const Tensor t = tensor(std::vector<int64_t>{1, 0, 3, 1, 2}, {5}, kInt64);
  const Tensor w = rand({4}, TensorOptions(kFloat64)) + 0.5;
  for (const nn::Reduction r : {nn::Reduction::Mean, nn::Reduction::Sum}) {
    auto f = [&](const TL& x) { return TL{F::cross_entropy(x[0], t, w, r, 3)}; };
    const Tensor x = randn({5, 4}, TensorOptions(kFloat64).requires_grad());
    CHECK_GRADCHECK(f, TL{x});
    // d loss / dx as a function of x, differentiated again (create_graph path).
    auto first = [&](const TL& in) {
      AutoGradMode on(true);  // gradcheck's numerical pass runs without grad mode
      const Tensor leaf = in[0].requires_grad() ? in[0] : in[0].detach().requires_grad_(true);
      return TL{autograd::grad({f({leaf})[0]}, {leaf}, {}, true, /*create_graph=*/true)[0]};
    };
    CHECK_GRADCHECK(first, TL{x});
  }
}
